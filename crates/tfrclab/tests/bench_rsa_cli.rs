//! `tfrclab bench rsa` through the real binary: bad flags, JSON and table output.

use std::process::Command;

use serde_json::Value;

fn tfrclab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(args)
        .output()
        .expect("run tfrclab")
}

#[test]
fn bad_flags_give_one_line_and_exit_code_2() {
    for args in [
        &["bench", "rsa", "--bits", "512"][..],
        &["bench", "rsa", "--bits", "lots"],
        &["bench", "rsa", "--iterations", "0"],
        &["bench", "rsa", "--packet-bytes", "70000"],
        &["bench", "rsa", "--frobnicate"],
        &["bench"],
        &["bench", "dsa"],
    ] {
        let out = tfrclab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // `bench` alone times scenarios/bench/*.toml, relative to the working directory; the
    // test runs in the crate's directory, where there is none.
    let err = String::from_utf8(tfrclab(&["bench"]).stderr).unwrap();
    assert!(err.contains("scenarios/bench"), "{err}");
    let err = String::from_utf8(tfrclab(&["bench", "dsa"]).stderr).unwrap();
    assert!(err.contains("dsa: cannot read the file"), "{err}");
}

#[test]
fn json_report_is_consistent() {
    let out = tfrclab(&[
        "bench",
        "rsa",
        "--bits",
        "1024",
        "--iterations",
        "3",
        "--keys",
        "2",
        "--seed",
        "5",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let rsa = &v["rsa"];
    assert_eq!(rsa["modulus_bits"], 1024);
    assert_eq!(rsa["iterations"], 3);
    assert_eq!(rsa["crt_exponents_equal"], true);
    let rows = rsa["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["kind"], "carmichael");
    assert_eq!(rows[1]["kind"], "euler");
    assert!(rows[0]["d_bits"].as_u64() <= rows[1]["d_bits"].as_u64());
    for r in rows {
        assert_eq!(r["with_crt"]["samples"], 3);
        assert!(r["without_crt"]["median_ns"].as_f64().unwrap() > 0.0);
    }
    let ratio = v["carmichael_over_euler_without_crt"].as_f64().unwrap();
    let expect = rows[0]["without_crt"]["median_ns"].as_f64().unwrap()
        / rows[1]["without_crt"]["median_ns"].as_f64().unwrap();
    assert!((ratio - expect).abs() < 1e-9);
    assert_eq!(v["aead"]["payload_len"], 1000);
    assert!(v["aead"]["seal_open_ns"].as_f64().unwrap() > 0.0);
    assert_eq!(v["d_bits_survey"]["keys"], 2);
    // Same seed, same primes: d's bit lengths are reproducible.
    let again: Value = serde_json::from_slice(
        &tfrclab(&[
            "bench",
            "rsa",
            "--bits",
            "1024",
            "--iterations",
            "1",
            "--keys",
            "0",
            "--seed",
            "5",
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(again["rsa"]["rows"][0]["d_bits"], rows[0]["d_bits"]);
    assert_eq!(again["rsa"]["rows"][1]["d_bits"], rows[1]["d_bits"]);
    assert!(again["d_bits_survey"].is_null());
}

#[test]
fn table_names_both_kinds_and_the_aead_cost() {
    let out = tfrclab(&[
        "bench",
        "rsa",
        "--bits",
        "1024",
        "--iterations",
        "2",
        "--keys",
        "1",
        "--packet-bytes",
        "200",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("1024-bit modulus"));
    assert!(text.lines().any(|l| l.starts_with("carmichael ")));
    assert!(text.lines().any(|l| l.starts_with("euler ")));
    assert!(text.contains("per 200-B packet"));
    assert!(text.contains("d bits over 1 further key pairs"));
}
