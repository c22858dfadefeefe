//! The short testbed (`scripts/testbed.sh --short`): TFRC over veth namespaces with a tbf
//! bottleneck, alone, against TCP Reno and CUBIC, and two TFRC flows. Needs root, iproute2
//! and iperf3 (CI has them); elsewhere it says why it is skipped.

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
    for t in ["ip", "tc", "iperf3"] {
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

#[test]
fn short_testbed_meets_the_utilisation_target_and_reports_the_rest() {
    if let Err(why) = can_run() {
        eprintln!("testbed skipped: {why}");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("testbed.json");
    let out = Command::new("bash")
        .arg(root.join("scripts/testbed.sh"))
        .args(["--short", "--json"])
        .arg(&json)
        .env("TFRCLAB", env!("CARGO_BIN_EXE_tfrclab"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    // 0: every target met; 3: a target missed (printed); anything else is a failed step.
    assert!(
        matches!(out.status.code(), Some(0) | Some(3)),
        "testbed failed: {stdout}\n{stderr}"
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let a = &r["cases"]["a"];
    // TFRC alone fills the bottleneck (target: at least 85%).
    assert!(a["tfrc_utilisation"].as_f64().unwrap() >= 0.85, "{a}");
    // Every TFRC flow crossed the router: one hop, read from the received TTL (E5).
    for c in ["a", "b", "c", "d"] {
        for f in r["cases"][c]["flows"].as_array().unwrap() {
            if f["kind"] == "tfrc" {
                assert_eq!(f["hops"], 1, "{f}");
                assert!(f["received_packets"].as_u64().unwrap() > 100, "{f}");
            } else {
                assert!(f["goodput_bps"].as_f64().unwrap() > 1e6, "{f}");
            }
        }
    }
    let ratio = r["cases"]["b"]["tfrc_tcp_ratio"].as_f64().unwrap();
    assert!(ratio.is_finite() && ratio > 0.0);
    // The loss and Reno-ratio targets are printed as TARGET PASS/MISS and recorded in
    // docs/real-network.md; short runs are dominated by the start-up overshoot, so they are
    // reported here, not asserted.
    assert!(stdout.contains("TARGET"), "{stdout}");
    // Nothing left behind.
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let left: Vec<String> = String::from_utf8_lossy(&ns.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| {
            n.len() > 3
                && n.starts_with("tb")
                && n[2..n.len() - 1].bytes().all(|b| b.is_ascii_digit())
        })
        .map(String::from)
        .collect();
    assert!(left.is_empty(), "namespaces left behind: {left:?}");
}
