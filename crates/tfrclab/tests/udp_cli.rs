//! `tfrclab send` / `tfrclab recv` as a user runs them: a file over loopback arrives intact
//! with the summary's metric names; bad flags and files give one line and exit code 2.

use std::process::{Command, Stdio};
use std::time::Duration;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tfrclab"))
}

fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

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
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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
