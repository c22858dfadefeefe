//! `tfrclab send` / `tfrclab recv` as a user runs them: a file over loopback arrives intact
//! with the summary's metric names; bad flags and files give one line and exit code 2.

use std::time::Duration;

mod common;

use common::{bin, free_port, SpawnPiped};

#[test]
fn file_over_loopback_arrives_intact_with_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.bin");
    let output = dir.path().join("out.bin");
    let log = dir.path().join("fb.jsonl");
    // 250 kB of varied bytes, not a multiple of the segment size.
    let data: Vec<u8> = (0..250_123u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&input, &data).unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let recv = bin()
        .args(["recv", "--listen", &addr, "--out"])
        .arg(&output)
        .arg("--json")
        .spawn_piped();
    std::thread::sleep(Duration::from_millis(300));
    let send = bin()
        .args(["send", "--to", &addr, "--input"])
        .arg(&input)
        .arg("--log")
        .arg(&log)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&send.stdout);
    assert!(
        send.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&send.stderr)
    );
    for name in [
        "sent_packets",
        "received_packets",
        "dropped_packets",
        "throughput_bps",
        "goodput_bps",
        "loss_rate",
        "pdr",
        "delay_mean_s",
        "delay_p95_s",
        "jitter_mean_s",
        "jitter_range_s",
        "jitter_rfc3550_s",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(name)),
            "{name} missing: {stdout}"
        );
    }
    assert!(stdout.contains("sent_packets      251\n"), "{stdout}");
    let r = recv.wait_with_output().unwrap();
    assert!(r.status.success());
    let json: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(json["flows"][0]["received_packets"], 251);
    assert_eq!(json["receiver"]["hops"], 0);
    assert_eq!(std::fs::read(&output).unwrap(), data);
    // One JSON line per feedback, with the sender's state.
    let lines = std::fs::read_to_string(&log).unwrap();
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert!(first["x_bps"].as_f64().unwrap() > 0.0);
    assert!(first.get("p").is_some() && first.get("rtt_s").is_some());
}

fn bad(args: &[&str], flag: &str) {
    let out = bin().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(flag), "{args:?}: {err}");
}

#[test]
fn bad_flags_and_files_exit_2_with_one_line() {
    bad(&["send", "--to", "nowhere"], "--to");
    bad(
        &["send", "--to", "127.0.0.1:9", "--rate-limit", "fast"],
        "--rate-limit",
    );
    bad(
        &["send", "--to", "127.0.0.1:9", "--rate-limit", "0"],
        "--rate-limit",
    );
    bad(
        &["send", "--to", "127.0.0.1:9", "--duration", "-3"],
        "--duration",
    );
    bad(
        &["send", "--to", "127.0.0.1:9", "--profile", "reno"],
        "--profile",
    );
    bad(
        &["send", "--to", "127.0.0.1:9", "--segment-size", "0"],
        "--segment-size",
    );
    bad(
        &[
            "send",
            "--to",
            "127.0.0.1:9",
            "--input",
            "/nonexistent/file",
        ],
        "--input",
    );
    bad(
        &[
            "send",
            "--to",
            "127.0.0.1:9",
            "--variant",
            "no-such-variant",
        ],
        "--variant",
    );
    bad(
        &[
            "send",
            "--to",
            "127.0.0.1:9",
            "--variant",
            "adaptive-rtt:zz=1",
        ],
        "--variant",
    );
    bad(
        &[
            "send",
            "--to",
            "127.0.0.1:9",
            "--variant",
            "adaptive-rtt:q=2",
        ],
        "--variant",
    );
    bad(
        &["send", "--to", "127.0.0.1:9", "--variant", "adaptive-rtt:q"],
        "--variant",
    );
    // Needs a classifier: checked on the whole list.
    bad(
        &["send", "--to", "127.0.0.1:9", "--variant", "rto-link-error"],
        "--variant",
    );
    bad(
        &[
            "send",
            "--to",
            "127.0.0.1:9",
            "--variant",
            "veno",
            "--variant",
            "simd",
        ],
        "--variant",
    );
    bad(
        &["send", "--to", "127.0.0.1:9", "--oscillation", "wild"],
        "--oscillation",
    );
    bad(&["recv", "--listen", "127.0.0.1:99999"], "--listen");
    bad(
        &[
            "recv",
            "--listen",
            "127.0.0.1:0",
            "--out",
            "/nonexistent/dir/x",
        ],
        "--out",
    );
    bad(
        &["recv", "--listen", "127.0.0.1:0", "--rsa-bits", "12"],
        "--rsa-bits",
    );
}

/// `--variant` over loopback: the sender applies the list to its profile (adaptive-ttl with
/// TTL_min 8: every data packet leaves with TTL 8), the HELLO carries it, and the receiver
/// applies the same list (the one-way-delay classifier runs there, with `offset_clock=1`
/// added for a real network, and the loss-interval transform), as both ends' reports show.
#[test]
fn variants_take_effect_on_both_ends() {
    let addr = format!("127.0.0.1:{}", free_port());
    let recv = bin()
        .args(["recv", "--listen", &addr, "--json", "--quiet"])
        .spawn_piped();
    std::thread::sleep(Duration::from_millis(300));
    let send = bin()
        .args([
            "send",
            "--to",
            &addr,
            "--duration",
            "1",
            "--json",
            "--quiet",
        ])
        .args(["--rate-limit", "2Mbps"])
        .args(["--variant", "owd-classifier"])
        .args(["--variant", "adaptive-ttl:ttl_min=8,ttl_max=64"])
        .args(["--variant", "ali-mean-replace"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&send.stderr);
    assert!(send.status.success(), "{stderr}");
    let s: serde_json::Value = serde_json::from_slice(&send.stdout).unwrap();
    let want = serde_json::json!([
        "owd-classifier:offset_clock=1",
        "adaptive-ttl:ttl_min=8,ttl_max=64",
        "ali-mean-replace"
    ]);
    // Sender side: the list as applied, and E5's TTL (TTL_min before any path observation; the
    // loopback's 0 hops plus the margin stay below it).
    assert_eq!(s["sender"]["variants"], want, "{s}");
    assert_eq!(s["sender"]["ttl"], 8, "{s}");
    // The receiver's report, carried back in the FIN_ACK and printed by the receiver itself.
    let r = recv.wait_with_output().unwrap();
    assert!(r.status.success());
    let rj: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    for rep in [&s["receiver"], &rj["receiver"]] {
        assert_eq!(rep["variants"], want, "{rep}");
        // The classifier ran: avgSLD exists (relative delays, so small but positive).
        let avg = rep["avg_one_way_delay_s"]
            .as_f64()
            .expect("classifier state");
        assert!(avg > 0.0 && avg < 1.0, "{rep}");
        // Data left with TTL 8 and arrived with TTL 8: zero hops.
        assert_eq!(rep["hops"], 0, "{rep}");
        assert!(rep["packets"].as_u64().unwrap() > 100, "{rep}");
    }
}

fn varied(n: u32, k: u32) -> Vec<u8> {
    (0..n)
        .map(|i| (i.wrapping_add(k).wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// Issue 29 point 1: while a sender's file goes to `recv --out FILE`, a stranger's session
/// (its own, plain) sends data to the same receiver. The file must be the sender's data alone;
/// before, 50 foreign payloads landed inside a 2 MB transfer. The stranger's data is not
/// written, and the receiver says so.
#[test]
fn recv_out_never_mixes_a_strangers_session_into_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.bin");
    let output = dir.path().join("out.bin");
    let data = varied(1_000_000, 1);
    std::fs::write(&input, &data).unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let recv = bin()
        .args([
            "recv",
            "--listen",
            &addr,
            "--allow-plain",
            "--json",
            "--quiet",
        ])
        .args(["--idle-timeout", "3", "--out"])
        .arg(&output)
        .spawn_piped();
    std::thread::sleep(Duration::from_millis(300));
    let real = bin()
        .args(["send", "--to", &addr, "--rate-limit", "4Mbps", "--input"])
        .arg(&input)
        .args(["--json", "--quiet"])
        .spawn_piped();
    // The stranger starts once the real session has data flowing, and outlasts it.
    std::thread::sleep(Duration::from_millis(500));
    let stranger = bin()
        .args(["send", "--to", &addr, "--protect", "plain"])
        .args([
            "--duration",
            "4",
            "--rate-limit",
            "1Mbps",
            "--json",
            "--quiet",
        ])
        .spawn_piped();
    let real = real.wait_with_output().unwrap();
    assert!(
        real.status.success(),
        "{}",
        String::from_utf8_lossy(&real.stderr)
    );
    let r = recv.wait_with_output().unwrap();
    let _ = stranger.wait_with_output();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    let got = std::fs::read(&output).unwrap();
    assert_eq!(
        got.len(),
        data.len(),
        "the stream has foreign data or lacks some"
    );
    assert!(got == data, "the stream differs from the sender's file");
    assert!(err.contains("were not written to --out"), "{err}");
}

/// `recv --out-dir`: one file per session, each the stream of one sender.
#[test]
fn recv_out_dir_writes_a_file_per_session() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sessions");
    let addr = format!("127.0.0.1:{}", free_port());
    let recv = bin()
        .args([
            "recv",
            "--listen",
            &addr,
            "--sessions",
            "2",
            "--json",
            "--quiet",
        ])
        .arg("--out-dir")
        .arg(&out)
        .spawn_piped();
    std::thread::sleep(Duration::from_millis(300));
    let inputs: Vec<_> = (0..2u32)
        .map(|k| {
            let p = dir.path().join(format!("in{k}.bin"));
            std::fs::write(&p, varied(200_000 + 1_000 * k, k)).unwrap();
            p
        })
        .collect();
    let senders: Vec<_> = inputs
        .iter()
        .map(|p| {
            bin()
                .args(["send", "--to", &addr, "--quiet", "--json", "--input"])
                .arg(p)
                .spawn_piped()
        })
        .collect();
    for s in senders {
        let o = s.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let r = recv.wait_with_output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut files: Vec<Vec<u8>> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    files.sort_by_key(|f| f.len());
    let mut want: Vec<Vec<u8>> = inputs.iter().map(|p| std::fs::read(p).unwrap()).collect();
    want.sort_by_key(|f| f.len());
    assert!(
        files == want,
        "the per-session files are not the two inputs"
    );
}

fn signal(child: &std::process::Child, sig: libc::c_int) {
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(rc, 0);
}

/// Issue 29 point 7: interrupted, `recv` (serving until interrupted, or mid-session) and
/// `send` print their summary as on a normal exit; before, `recv --sessions 0` printed
/// nothing and died with the signal.
#[test]
fn recv_and_send_print_a_summary_when_interrupted() {
    let addr = format!("127.0.0.1:{}", free_port());
    let recv = bin()
        .args([
            "recv",
            "--listen",
            &addr,
            "--sessions",
            "0",
            "--json",
            "--quiet",
        ])
        .spawn_piped();
    std::thread::sleep(Duration::from_millis(300));
    let done = bin()
        .args([
            "send",
            "--to",
            &addr,
            "--duration",
            "1",
            "--rate-limit",
            "2Mbps",
        ])
        .args(["--json", "--quiet"])
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // A second sender, interrupted mid-session: its summary, and a FIN the receiver saw.
    let send = bin()
        .args([
            "send",
            "--to",
            &addr,
            "--duration",
            "30",
            "--rate-limit",
            "2Mbps",
        ])
        .args(["--json", "--quiet"])
        .spawn_piped();
    std::thread::sleep(Duration::from_millis(1500));
    signal(&send, libc::SIGINT);
    let s = send.wait_with_output().unwrap();
    assert_eq!(
        s.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&s.stderr)
    );
    let sj: serde_json::Value = serde_json::from_slice(&s.stdout).expect("send's summary");
    assert!(
        sj["flows"][0]["received_packets"].as_u64().unwrap() > 50,
        "{sj}"
    );
    std::thread::sleep(Duration::from_millis(700));
    signal(&recv, libc::SIGTERM);
    let r = recv.wait_with_output().unwrap();
    // Serving until interrupted was the plan: a clean exit, with every session's summary.
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let rj: serde_json::Value = serde_json::from_slice(&r.stdout).expect("recv's summary");
    let flows = rj["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2, "{rj}");
    assert!(rj["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["sender_packets"].as_u64().is_some()));
}
