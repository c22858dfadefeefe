//! Issue 32 §1: large runs. A 100,000-flow run (the most a scenario may have,
//! `scenario::MAX_FLOWS`) finishes and writes files of bounded size: `summary.json` keeps the
//! first entries of each per-flow list and names the CSV file holding all of them, the report
//! shows the first flows and says so; one flow more is refused before anything runs, naming
//! the limit. Runtime budget: about 15 s and 1.6 GB on 2 idle cores (the 10⁵-flow run is
//! ~8 s of CPU; building its scenario text and the refused one's parse are the rest).
//! Speed itself is measured by `cargo bench -p lab --bench report`, not here.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

fn tfrclab(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tfrclab")
}

/// A dumbbell of `n` flows (TCP, TFRC and UDP in turn) sharing a 1 Gb/s bottleneck for 10 ms.
fn dumbbell(n: usize) -> String {
    let mut t = format!(
        "name = \"big\"\nduration = \"10ms\"\nsample_interval = \"5ms\"\n[topology]\n\
         kind = \"dumbbell\"\nsenders = {}\naccess_bandwidth = \"10Gbps\"\n\
         access_delay = \"1ms\"\nbottleneck_bandwidth = \"1Gbps\"\nbottleneck_delay = \"2ms\"\n\
         queue_limit = 10000\n",
        n.min(scenario::MAX_FLOWS)
    );
    for i in 0..n {
        let kind = ["tcp", "tfrc", "udp"][i % 3];
        let node = i % scenario::MAX_FLOWS;
        let _ = write!(
            t,
            "[[flows]]\nname = \"f{i}\"\nkind = \"{kind}\"\nfrom = \"s{node}\"\nto = \"d{node}\"\n\
             start = \"{}ms\"\n",
            i % 5
        );
    }
    t
}

#[test]
fn a_run_of_the_most_flows_finishes_with_bounded_files_and_one_more_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = scenario::MAX_FLOWS;
    std::fs::write(d.join("big.toml"), dumbbell(n)).unwrap();
    let out = tfrclab(&["run", "big.toml", "--out", "res", "--quiet"], d);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let res = d.join("res");
    // Every flow is in flows.csv, each link direction in links.csv, each account in
    // accounting.csv (a header line each).
    let lines = |f: &str| {
        std::fs::read_to_string(res.join(f))
            .unwrap()
            .lines()
            .count()
    };
    assert_eq!(lines("flows.csv"), n + 1);
    assert_eq!(lines("accounting.csv"), 2 * n + 1);
    assert_eq!(lines("links.csv"), 2 * (2 * n + 1) + 1);
    assert_eq!(
        lines("friendliness.csv"),
        n / 3 + 1 + usize::from(n % 3 > 1)
    );
    // summary.json keeps the first 1,000 of each list and says where the rest are.
    let size = |f: &str| std::fs::metadata(res.join(f)).unwrap().len();
    assert!(size("summary.json") < 3_000_000, "{}", size("summary.json"));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        s["flows"].as_array().unwrap().len(),
        lab::summary::JSON_ROWS
    );
    assert_eq!(s["rows_cut"]["flows"]["total"], n);
    assert_eq!(s["rows_cut"]["flows"]["file"], "flows.csv");
    assert_eq!(s["rows_cut"]["links"]["total"], 2 * (2 * n + 1));
    // Friendliness names at most 20 TCP flows, and counts them all.
    let fr = &s["fairness"]["friendliness"][0];
    assert_eq!(fr["tcp_flow_count"], n.div_ceil(3));
    assert_eq!(fr["tcp_flows"].as_array().unwrap().len(), 20);
    // The report is bounded too, and says it shows the first flows.
    assert!(size("report.html") < 2_000_000, "{}", size("report.html"));
    let html = std::fs::read_to_string(res.join("report.html")).unwrap();
    assert!(html.contains("the first 100 of 100,000 flows"), "no note");
    // So is the terminal table.
    assert!(
        stdout.lines().count() < 200,
        "{} lines",
        stdout.lines().count()
    );
    assert!(stdout.contains("… and 99960 more flows"), "{stdout}");

    // One flow more: refused before anything runs, naming the limit and the first flow past it.
    std::fs::write(d.join("over.toml"), dumbbell(n + 1)).unwrap();
    let out = tfrclab(&["run", "over.toml", "--out", "over"], d);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let text = std::fs::read_to_string(d.join("over.toml")).unwrap();
    let line = text
        .lines()
        .position(|l| l == format!("name = \"f{n}\""))
        .unwrap();
    assert!(
        err.contains(&format!("over.toml:{line}:")) && err.contains("at most 100000"),
        "{err}"
    );
    assert!(!d.join("over").exists(), "nothing written");
}

/// `--no-report` writes the data files only.
#[test]
fn no_report_writes_the_data_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("s.toml"), dumbbell(30)).unwrap();
    let out = tfrclab(&["run", "s.toml", "--out", "res", "--no-report"], d);
    assert!(out.status.success());
    let mut files: Vec<String> = std::fs::read_dir(d.join("res"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "accounting.csv",
            "drops.csv",
            "flows.csv",
            "friendliness.csv",
            "links.csv",
            "summary.json",
            "tfrc.csv",
            "timeseries.csv"
        ]
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("wrote res/{summary.json, flows.csv"));
}
