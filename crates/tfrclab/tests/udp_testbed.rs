//! The testbed (`scripts/testbed.sh`): TFRC over veth namespaces with a tbf bottleneck
//! (10 Mb/s, 100 ms latency cap) and a 10-ms-each-way delay line, alone, against TCP Reno and
//! CUBIC, and two TFRC flows through one receiver; the bottleneck on a router (two-packet
//! bucket), then on the sender's own interface (20-KB bucket, issue 16). It asserts issue 8's
//! targets in both places: TFRC alone uses at least 85% of the bottleneck and loses under 5%;
//! against one TCP Reno flow its goodput is within 0.5–2× TCP's; and issue 16's: two
//! `tfrclab send` to one `tfrclab recv` each get a fair share. About 90 s. Needs root,
//! iproute2, iperf3 and python3 (CI has them); elsewhere it fails saying what is missing.
//!
//! Robustness under load: every flow's processes run at the same raised priority (the script's
//! `nice -n -10`), so a loaded machine does not starve one flow more than the other; the Reno
//! share is measured on one 30-s case (see the test). The TFRC sender runs with
//! `--header-rtt latest`, a documented departure from RFC 5348 §5.2's RECOMMENDED header RTT
//! (`docs/real-network.md`, "Departures").

use std::path::Path;
use std::process::Command;

fn can_run() -> Result<(), String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| e.to_string())?;
    if String::from_utf8_lossy(&root.stdout).trim() != "0" {
        return Err("not root".into());
    }
    for t in ["ip", "tc", "iperf3", "python3"] {
        let ok = Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if !ok {
            return Err(format!("{t} missing"));
        }
    }
    Ok(())
}

/// This run's namespaces (the script names them tb<ID>s/r/d). Other engineers' runs on the
/// same machine have other ids; only ours are checked and, should the script die before its
/// own cleanup, removed.
struct Namespaces(Vec<String>);

impl Namespaces {
    fn new(id: &str) -> Namespaces {
        Namespaces(
            ["s", "r", "d"]
                .iter()
                .map(|k| format!("tb{id}{k}"))
                .collect(),
        )
    }

    fn present(&self) -> Vec<String> {
        let out = Command::new("ip")
            .args(["netns", "list"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let listed: Vec<&str> = out
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        self.0
            .iter()
            .filter(|n| listed.contains(&n.as_str()))
            .cloned()
            .collect()
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in self.present() {
            let pids = Command::new("ip")
                .args(["netns", "pids", &ns])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            for pid in pids.split_whitespace() {
                let _ = Command::new("kill").args(["-9", pid]).status();
            }
            let _ = Command::new("ip").args(["netns", "del", &ns]).status();
        }
    }
}

fn f(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

fn u(v: &serde_json::Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// Run `scripts/testbed.sh` with `args` under a fresh id and return its JSON (the script's own
/// target verdict is not trusted: the caller asserts on the figures).
fn testbed(args: &[&str]) -> serde_json::Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("testbed.json");
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let id = format!("ci{}x{n}", std::process::id() % 100_000);
    let ns = Namespaces::new(&id);
    assert!(
        ns.present().is_empty(),
        "namespaces exist already: {:?}",
        ns.0
    );
    let out = Command::new("bash")
        .arg(root.join("scripts/testbed.sh"))
        .args(args)
        .args(["--id", &id, "--json"])
        .arg(&json)
        .env("TFRCLAB", env!("CARGO_BIN_EXE_tfrclab"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    // The script removes its namespaces on every exit; check before the guard would.
    let left = ns.present();
    assert!(left.is_empty(), "namespaces left behind: {left:?}");
    // 0: every target met; 3: a target missed (checked by the caller); else a failed step.
    assert!(
        matches!(out.status.code(), Some(0) | Some(3)),
        "testbed failed: {stdout}\n{stderr}"
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    // Every TFRC flow crossed the router once (E5: hops from the received TTL), every flow
    // moved data.
    for c in r["cases"].as_object().unwrap().values() {
        for fl in c["flows"].as_array().unwrap() {
            if fl["kind"] == "tfrc" {
                assert_eq!(fl["hops"], 1, "{fl}");
                assert!(u(fl, "received_packets") > 100, "{fl}");
            } else {
                assert!(f(fl, "goodput_bps") > 1e6, "{fl}");
            }
        }
    }
    r
}

/// Issue 8's case a: TFRC alone uses at least 85% of the bottleneck (IP throughput over the
/// tbf rate) and loses under 5% of its packets.
fn assert_alone(r: &serde_json::Value, case: &str) {
    let rate = f(r, "bottleneck_bps");
    let a = &r["cases"][case]["flows"][0];
    let utilisation = f(a, "throughput_bps") / rate;
    let loss = f(a, "loss_rate");
    println!(
        "{} {case}: utilisation {utilisation:.3}, loss {loss:.4}",
        r["bottleneck"]
    );
    assert!(
        utilisation >= 0.85,
        "TFRC alone uses {utilisation:.3} of the bottleneck"
    );
    assert!(loss < 0.05, "TFRC alone loses {loss:.4}");
}

/// TFRC's goodput over TCP's in a case with one TFRC and one TCP flow, over the whole case
/// (checked against the script's own figure) and settled: over the case's last two thirds,
/// from at most 10 s on (the script's `steady`: TFRC's payload sent in that window less its loss
/// rate, TCP's bytes received by the iperf3 server in that window).
fn tcp_ratio(r: &serde_json::Value, case: &str, cc: &str) -> (f64, f64) {
    let c = &r["cases"][case];
    let fl = c["flows"].as_array().unwrap();
    assert_eq!(fl[1]["cc"], cc, "{}", fl[1]);
    let ratio = f(&fl[0], "goodput_bps") / f(&fl[1], "goodput_bps");
    let scripted = f(c, "tfrc_tcp_ratio");
    assert!((scripted - ratio).abs() < 1e-9, "{scripted} vs {ratio}");
    let st = &c["steady"];
    let settled = f(st, "tfrc_goodput_bps") / f(st, "tcp_goodput_bps");
    assert!((f(st, "tfrc_tcp_ratio") - settled).abs() < 1e-9, "{st}");
    // Both windows describe the same flows: the settled rates are within the bottleneck.
    let rate = f(r, "bottleneck_bps");
    assert!(
        f(st, "tfrc_goodput_bps") + f(st, "tcp_goodput_bps") <= 1.05 * rate,
        "{st}"
    );
    (ratio, settled)
}

#[test]
fn testbed_meets_issue_8_and_16_targets() {
    if let Err(why) = can_run() {
        panic!(
            "the testbed cannot run: {why}. It needs root (network namespaces) and iproute2, \
             iperf3 and python3 (apt-get install iproute2 iperf3 python3)"
        );
    }
    // Bottleneck on the router: TFRC alone, two TFRC flows through one receiver (issue 16's
    // concurrent sessions), and against CUBIC (reported, not a target), 10 s each.
    let r = testbed(&[
        "--duration",
        "10",
        "--cases",
        "adc",
        "--send-args",
        "--header-rtt latest",
    ]);
    assert_alone(&r, "a");
    // Two identical TFRC flows started together: each gets a fair share of what the two
    // moved. Measured shares 0.48–0.52 (Jain 0.994–1.000); the bound, a share within
    // 0.35–0.65 of the pair's goodput, leaves room for a start-up that favours one flow.
    let d = r["cases"]["d"]["flows"].as_array().unwrap();
    let (g1, g2) = (f(&d[0], "goodput_bps"), f(&d[1], "goodput_bps"));
    let share = g1 / (g1 + g2);
    println!("router d: two TFRC flows, first flow's share {share:.3}");
    assert!(
        (0.35..=0.65).contains(&share),
        "two TFRC flows to one receiver: goodputs {g1:.0} and {g2:.0} b/s"
    );
    assert!(
        (g1 + g2) / f(&r, "bottleneck_bps") >= 0.8,
        "two TFRC flows use {:.3} of the bottleneck",
        (g1 + g2) / f(&r, "bottleneck_bps")
    );
    let (whole, settled) = tcp_ratio(&r, "c", "cubic");
    println!("router c: TFRC/CUBIC {whole:.2}, settled {settled:.2}");

    // Against one Reno flow, one 30-s case, the target checked on the settled share (seconds
    // 10–30). After the two slow starts collide (about 5% of the bottleneck's packets dropped
    // in the first 2 s) TFRC's loss history holds that collision for about 10 s: in one 30-s
    // run its share was 0.58 over seconds 2–10 and 0.93 over 10–30. Three 10-s cases pooled
    // measured mostly that transient (0.35–0.53 per run, pooled 0.45–0.67), and whole 30-s
    // cases 0.64–0.84: a share measured before the flows converge describes the start-up, not
    // the share (docs/real-network.md, "Testbed").
    let r = testbed(&[
        "--duration",
        "30",
        "--cases",
        "b",
        "--send-args",
        "--header-rtt latest",
    ]);
    let (whole, settled) = tcp_ratio(&r, "b", "reno");
    println!("router b: TFRC/Reno goodput {whole:.2}, settled {settled:.2}");
    assert!(
        (0.5..=2.0).contains(&settled),
        "TFRC/Reno settled goodput ratio {settled:.2} (whole case {whole:.2})"
    );

    // Bottleneck on the sender's own interface (issue 16 item 8: tbf 10 Mbit/s, 20-KB bucket,
    // 100-ms latency cap): the same targets. Here neither flow loses a packet; each is held
    // by how much it may queue in the host (TFRC: its small send buffer; TCP: TCP Small
    // Queues), and the ratio measured 1.33–1.35 in every run.
    let r = testbed(&[
        "--bottleneck",
        "sender",
        "--duration",
        "10",
        "--cases",
        "ab",
        "--send-args",
        "--header-rtt latest",
    ]);
    assert_eq!(r["bottleneck"], "sender");
    assert_alone(&r, "a");
    let (whole, settled) = tcp_ratio(&r, "b", "reno");
    println!("sender b: TFRC/Reno goodput {whole:.2}, settled {settled:.2}");
    for (what, v) in [("whole", whole), ("settled", settled)] {
        assert!(
            (0.5..=2.0).contains(&v),
            "sender-local bottleneck: TFRC/Reno goodput ratio ({what}) {v:.2}"
        );
    }
    // Backpressure, not drops: the host queue refused packets and the sender waited.
    let tfrc = &r["cases"]["b"]["flows"][0];
    assert!(u(tfrc, "send_blocked") > 0, "{tfrc}");
}
