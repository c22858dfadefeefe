//! `tfrclab sweep` through the binary: the grid, the aggregation (recomputed here from
//! `runs.csv`), agreement with `tfrclab run`, the files, quoting of value lists, and bad input
//! rejected before anything runs.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn tfrclab(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tfrclab")
}

fn ok(args: &[&str], dir: &Path) -> String {
    let out = tfrclab(args, dir);
    assert!(
        out.status.success(),
        "tfrclab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn bad(args: &[&str], dir: &Path) -> String {
    let out = tfrclab(args, dir);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "tfrclab {args:?}: {err}");
    err
}

const SCENARIO: &str = r#"name = "sw"
duration = "10s"
seed = 1

[[links]]
from = "a"
to = "r"
bandwidth = "10Mbps"
delay = "2ms"

[[links]]
from = "r"
to = "b"
bandwidth = "2Mbps"
delay = "10ms"
queue = "red"
[links.loss]
model = "bernoulli"
rate = 0.01

[[flows]]
name = "tfrc1"
kind = "tfrc"
from = "a"
to = "b"

[[flows]]
name = "tcp1"
kind = "tcp"
from = "a"
to = "b"

[[flows]]
name = "udp1"
kind = "udp"
from = "a"
to = "b"
rate = "200kbps"
random = true
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.toml"), SCENARIO).unwrap();
    dir
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rd = csv::Reader::from_path(path).unwrap();
    let header = rd.headers().unwrap().iter().map(String::from).collect();
    let rows = rd
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// t_{0.975, df} from a printed table (the oracle for the CI half-widths).
fn t975(df: usize) -> f64 {
    match df {
        1 => 12.706205,
        2 => 4.302653,
        3 => 3.182446,
        4 => 2.776445,
        _ => panic!("no table value for df {df}"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12) + 1e-12
}

#[test]
fn grid_runs_and_aggregates_match_the_raw_runs() {
    let dir = setup();
    let d = dir.path();
    let stdout = ok(
        &[
            "sweep",
            "s.toml",
            "--set",
            "links.r-b.loss.rate=0.005,0.02",
            "--set",
            "flows.udp1.rate=100kbps,300kbps",
            "--seeds",
            "3",
            "--jobs",
            "2",
            "--out",
            "res",
        ],
        d,
    );
    assert!(
        stdout.contains("12 runs (4 grid point(s) × 3 seed(s))"),
        "{stdout}"
    );
    let res = d.join("res");
    for f in ["sweep.csv", "runs.csv", "sweep.json", "report.html"] {
        assert!(res.join(f).is_file(), "{f}");
    }

    // runs.csv: 4 points × seeds 1, 2, 3, each with every flow's metrics.
    let (h, runs) = read_csv(&res.join("runs.csv"));
    assert_eq!(
        h,
        [
            "point",
            "links.r-b.loss.rate",
            "flows.udp1.rate",
            "run_seed",
            "subject",
            "metric",
            "value",
            "flows.udp1.rate (Mb/s)"
        ]
    );
    // The bandwidth axis also as a number, in the unit its column names.
    for r in &runs {
        let want = match r[2].as_str() {
            "100kbps" => 0.1,
            "300kbps" => 0.3,
            other => panic!("unexpected rate {other}"),
        };
        assert_eq!(r[7].parse::<f64>().unwrap(), want);
    }
    let mut raw: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    let mut point_values: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut seeds: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in &runs {
        raw.entry((r[0].clone(), r[4].clone(), r[5].clone()))
            .or_default()
            .push(r[6].parse().unwrap());
        point_values.insert(r[0].clone(), (r[1].clone(), r[2].clone()));
        let s = seeds.entry(r[0].clone()).or_default();
        if !s.contains(&r[3]) {
            s.push(r[3].clone());
        }
    }
    assert_eq!(
        point_values.into_iter().collect::<Vec<_>>(),
        [
            ("1".into(), ("0.005".into(), "100kbps".into())),
            ("2".into(), ("0.005".into(), "300kbps".into())),
            ("3".into(), ("0.02".into(), "100kbps".into())),
            ("4".into(), ("0.02".into(), "300kbps".into())),
        ]
    );
    for s in seeds.values() {
        assert_eq!(s, &["1", "2", "3"]);
    }

    // sweep.csv: every row is the mean / sd / t-interval of the matching raw values.
    let (h, rows) = read_csv(&res.join("sweep.csv"));
    assert_eq!(
        h,
        [
            "point",
            "links.r-b.loss.rate",
            "flows.udp1.rate",
            "subject",
            "metric",
            "n",
            "mean",
            "sd",
            "ci_half_width",
            "ci_lo",
            "ci_hi",
            "flows.udp1.rate (Mb/s)"
        ]
    );
    assert_eq!(
        rows.len(),
        raw.len(),
        "one row per (point, subject, metric)"
    );
    let mut widths = 0;
    for r in &rows {
        let xs = &raw[&(r[0].clone(), r[3].clone(), r[4].clone())];
        let n = xs.len();
        assert_eq!(r[5].parse::<usize>().unwrap(), n);
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0)).sqrt();
        let half = t975(n - 1) * sd / (n as f64).sqrt();
        let got = |i: usize| r[i].parse::<f64>().unwrap();
        assert!(close(got(6), mean), "{r:?}: mean {mean}");
        assert!(close(got(7), sd), "{r:?}: sd {sd}");
        assert!(
            (got(8) - half).abs() <= 1e-5 * half + 1e-12,
            "{r:?}: half {half}"
        );
        assert!(close(got(9), got(6) - got(8)) && close(got(10), got(6) + got(8)));
        if half > 0.0 {
            widths += 1;
        }
    }
    assert!(
        widths > 50,
        "random loss should spread most metrics: {widths}"
    );
    let metrics: Vec<&str> = rows.iter().map(|r| r[4].as_str()).collect();
    for m in [
        "throughput_bps",
        "goodput_bps",
        "loss_rate",
        "pdr",
        "delay_mean_s",
        "delay_p95_s",
        "jitter_rfc3550_s",
        "smoothness_cov",
        "dropped_link",
        "friendliness",
    ] {
        assert!(metrics.contains(&m), "{m} aggregated");
    }
    // The swept rate really changed the flow: udp1 sends about three times as much at 300 kb/s.
    let mean_of = |point: &str, subject: &str, metric: &str| -> f64 {
        rows.iter()
            .find(|r| r[0] == point && r[3] == subject && r[4] == metric)
            .unwrap()[6]
            .parse()
            .unwrap()
    };
    let ratio = mean_of("2", "udp1", "sent_packets") / mean_of("1", "udp1", "sent_packets");
    assert!((ratio - 3.0).abs() < 0.1, "{ratio}");
    assert!(mean_of("3", "udp1", "dropped_link") > mean_of("1", "udp1", "dropped_link"));

    // sweep.json holds the same aggregates.
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(j["scenario"], "sw");
    assert_eq!(j["seeds_per_point"], 3);
    assert_eq!(j["runs"], 12);
    assert_eq!(j["confidence"], 0.95);
    assert_eq!(j["axes"][1]["key"], "flows.udp1.rate");
    assert_eq!(
        j["axes"][1]["values"],
        serde_json::json!(["100kbps", "300kbps"])
    );
    let points = j["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    assert_eq!(points[3]["values"]["links.r-b.loss.rate"], "0.02");
    assert_eq!(points[3]["seeds"], serde_json::json!([1, 2, 3]));
    let total: usize = points
        .iter()
        .map(|p| p["metrics"].as_array().unwrap().len())
        .sum();
    assert_eq!(total, rows.len());
    let m = &points[0]["metrics"][0];
    assert!(close(
        m["mean"].as_f64().unwrap(),
        rows[0][6].parse::<f64>().unwrap()
    ));

    // The report: one chart per metric that is not zero everywhere, against the first axis.
    let html = std::fs::read_to_string(res.join("report.html")).unwrap();
    let charted = rows
        .iter()
        .map(|r| r[4].as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|m| rows.iter().any(|r| &r[4] == m && r[6] != "0"))
        .count();
    // Plus the throughput-delay plot.
    assert_eq!(html.matches("<svg").count(), charted + 1);
    // Issue 18: the report opens with the default primary metrics (this scenario has a TFRC
    // and a TCP flow: the three friendliness ratios too, `friendliness` matching the metrics
    // that extend it), then throughput-delay.
    let headings: Vec<&str> = html
        .split("<h2 id=\"")
        .skip(1)
        .map(|h| h.split('"').next().unwrap())
        .collect();
    assert_eq!(
        headings[..6],
        [
            "s1-throughput-bps",
            "s2-friendliness",
            "s3-friendliness-same-rtt",
            "s4-friendliness-aggregate",
            "s5-throughput-and-delay",
            "s6-grid"
        ],
        "{headings:?}"
    );
    assert!(html.contains("links.r-b.loss.rate"));
    assert!(
        html.contains("tcp1, flows.udp1.rate=300kbps"),
        "series per other axis"
    );
}

#[test]
fn a_sweep_run_equals_the_same_run_alone() {
    let dir = setup();
    let d = dir.path();
    ok(
        &[
            "sweep",
            "s.toml",
            "--set",
            "flows.udp1.rate=100kbps,300kbps",
            "--seeds",
            "2",
            "--seed-base",
            "20",
            "--out",
            "sw",
        ],
        d,
    );
    ok(
        &[
            "run",
            "s.toml",
            "--set",
            "flows.udp1.rate=300kbps",
            "--seed",
            "21",
            "--out",
            "one",
        ],
        d,
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("one/summary.json")).unwrap())
            .unwrap();
    let (_, runs) = read_csv(&d.join("sw/runs.csv"));
    let mut checked = 0;
    for f in s["flows"].as_array().unwrap() {
        for metric in ["throughput_bps", "delay_p95_s", "received_packets", "pdr"] {
            let row = runs
                .iter()
                .find(|r| r[0] == "2" && r[2] == "21" && r[3] == f["name"] && r[4] == metric)
                .unwrap_or_else(|| panic!("{metric} of {} at seed 21", f["name"]));
            // serde_json's default number parser may be off by an ulp; the texts were both
            // written as shortest round-trip decimals of the same f64.
            let (a, b) = (row[5].parse::<f64>().unwrap(), f[metric].as_f64().unwrap());
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * a.abs(),
                "{metric} of {}: {a} vs {b}",
                f["name"]
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 12);
    let seeds: std::collections::BTreeSet<&str> = runs.iter().map(|r| r[2].as_str()).collect();
    assert_eq!(seeds.into_iter().collect::<Vec<_>>(), ["20", "21"]);
}

#[test]
fn one_seed_gives_means_without_intervals() {
    let dir = setup();
    let d = dir.path();
    ok(
        &[
            "sweep",
            "s.toml",
            "--set",
            "links.r-b.bandwidth=1Mbps,2Mbps,4Mbps",
            "--seeds",
            "1",
            "--out",
            "res",
        ],
        d,
    );
    let (_, rows) = read_csv(&d.join("res/sweep.csv"));
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!(r[4], "1", "{r:?}");
        assert!(r[6..10].iter().all(String::is_empty), "{r:?}");
        let mbps = r[1].trim_end_matches("Mbps");
        assert_eq!(r[10], mbps, "the bandwidth as a number, Mb/s: {r:?}");
    }
    let html = std::fs::read_to_string(d.join("res/report.html")).unwrap();
    assert!(html.contains("no confidence intervals"));
    // Bandwidth values are read with their unit: a numeric x axis in Mb/s.
    assert!(html.contains("links.r-b.bandwidth (Mb/s)"));
}

#[test]
fn value_lists_keep_arrays_and_quoted_strings_whole() {
    let dir = setup();
    let d = dir.path();
    // A list loss model drops exactly the listed packets: [3,7] drops 2, [10,20,30] drops 3.
    let text = SCENARIO.replace(
        "model = \"bernoulli\"\nrate = 0.01",
        "model = \"list\"\npackets = [1]",
    );
    let text = text.replace("queue = \"red\"\n", "");
    std::fs::write(d.join("l.toml"), text).unwrap();
    ok(
        &[
            "sweep",
            "l.toml",
            "--set",
            "links.r-b.loss.packets=[3,7],[10,20,30]",
            "--set",
            "flows.udp1.name=\"u,1\"",
            "--seeds",
            "2",
            "--out",
            "res",
        ],
        d,
    );
    let (h, rows) = read_csv(&d.join("res/sweep.csv"));
    assert_eq!(h[1], "links.r-b.loss.packets");
    let points: std::collections::BTreeSet<(&str, &str)> = rows
        .iter()
        .map(|r| (r[1].as_str(), r[2].as_str()))
        .collect();
    assert_eq!(
        points.into_iter().collect::<Vec<_>>(),
        [("[10,20,30]", "\"u,1\""), ("[3,7]", "\"u,1\"")]
    );
    // The list model counts packets of every flow crossing r→b in order, so the drops are
    // shared out; their total is exact.
    let total = |point: &str| -> f64 {
        rows.iter()
            .filter(|r| r[0] == point && r[4] == "dropped_link")
            .map(|r| r[6].parse::<f64>().unwrap())
            .sum()
    };
    assert_eq!((total("1"), total("2")), (2.0, 3.0));
    assert!(rows.iter().any(|r| r[3] == "u,1"), "the renamed flow");
}

#[test]
fn bad_values_are_rejected_before_anything_runs() {
    let dir = setup();
    let d = dir.path();
    // A very long run: if sweep ran the valid point before checking the bad one, this test
    // would take minutes instead of milliseconds.
    // (100-s bins keep it within the time-series bin limit, so it would build and run.)
    let long = SCENARIO.replace(
        "duration = \"10s\"",
        "duration = \"1000000s\"\nsample_interval = \"100s\"",
    );
    std::fs::write(d.join("long.toml"), &long).unwrap();
    let t0 = Instant::now();
    let err = bad(
        &[
            "sweep",
            "long.toml",
            "--set",
            "flows.udp1.rate=100kbps,fast",
            "--out",
            "res",
        ],
        d,
    );
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert!(
        err.contains("--set flows.udp1.rate=fast: long.toml:39:8:"),
        "names the --set and the file position:\n{err}"
    );
    assert!(
        !err.contains("100kbps"),
        "the good value is not blamed:\n{err}"
    );
    assert!(!d.join("res").exists());

    // A value that is wrong only together with another one names the grid point.
    let err = bad(
        &[
            "sweep",
            "s.toml",
            "--set",
            "flows.udp1.start=1s,50s",
            "--set",
            "duration=20s,100s",
            "--out",
            "res",
        ],
        d,
    );
    assert!(
        err.contains("grid point 3 of 4 (flows.udp1.start=50s, duration=20s):"),
        "{err}"
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");

    let cases: &[(&[&str], &str)] = &[
        (
            &["--set", "flows.nope.rate=1,2"],
            "no element \"nope\" in `flows`",
        ),
        (
            &["--set", "duration=5,6", "--set", "duration=7"],
            "--set duration is given more than once",
        ),
        (&["--set", "duration=5,,6"], "empty value"),
        (&["--set", "links.r-b.loss.packets=[1,2"], "missing ']'"),
        (&["--set", "duration"], "KEY=V1,V2"),
        (&["--seeds", "0"], "--seeds"),
        (&["--jobs", "0"], "--jobs"),
        (
            &["--seed-base", "18446744073709551615", "--seeds", "2"],
            "--seeds 2",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["sweep", "s.toml", "--out", "res"];
        args.extend_from_slice(extra);
        let err = bad(&args, d);
        assert!(err.contains(want), "{extra:?}: expected {want:?} in {err}");
        assert!(!d.join("res").exists(), "{extra:?}");
    }
    let err = bad(&["sweep", "missing.toml", "--out", "res"], d);
    assert!(err.contains("missing.toml"), "{err}");
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| n.ends_with(".toml")),
        "nothing written, no staging folder left: {names:?}"
    );
}

#[test]
fn primary_names_the_metrics_the_report_opens_with() {
    let dir = setup();
    let d = dir.path();
    let out = tfrclab(
        &[
            "sweep",
            "s.toml",
            "--seeds",
            "2",
            "--primary",
            "loss_rate,delay",
            "--primary",
            "nonsense",
            "--out",
            "res",
        ],
        d,
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--primary nonsense: no metric of that name") && err.contains("loss_rate"),
        "{err}"
    );
    let html = std::fs::read_to_string(d.join("res/report.html")).unwrap();
    let headings: Vec<&str> = html
        .split("<h2 id=\"")
        .skip(1)
        .map(|h| h.split('"').next().unwrap())
        .collect();
    // loss_rate, then every delay_* metric in their usual order, then throughput-delay, grid.
    assert_eq!(headings[0], "s1-loss-rate", "{headings:?}");
    let grid = headings.iter().position(|h| h.ends_with("-grid")).unwrap();
    assert!(
        headings[1..grid - 1].iter().all(|h| h.contains("-delay-")),
        "{headings:?}"
    );
    assert!(
        headings[grid - 1].ends_with("throughput-and-delay"),
        "{headings:?}"
    );
    assert!(grid >= 4, "delay_mean_s, delay_median_s, …: {headings:?}");
}

#[test]
fn no_set_sweeps_seeds_only() {
    let dir = setup();
    let d = dir.path();
    let stdout = ok(&["sweep", "s.toml", "--seeds", "4", "--out", "res"], d);
    assert!(
        stdout.contains("4 runs (1 grid point(s) × 4 seed(s))"),
        "{stdout}"
    );
    let (h, rows) = read_csv(&d.join("res/sweep.csv"));
    assert_eq!(h[..3], ["point", "subject", "metric"]);
    assert!(rows.iter().all(|r| r[0] == "1" && r[3] == "4"));
}

#[test]
fn variant_metrics_are_swept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/red-variants.toml");
    ok(
        &[
            "sweep",
            example.to_str().unwrap(),
            "--set",
            "duration=5s,8s",
            "--seeds",
            "2",
            "--out",
            "res",
        ],
        d,
    );
    let (_, rows) = read_csv(&d.join("res/sweep.csv"));
    let has = |subject: &str, metric: &str| rows.iter().any(|r| r[2] == subject && r[3] == metric);
    // RED counters and final state per link direction, TFRC sender/receiver state per flow.
    for link in ["r-d1>", "r-d2>", "r-d3>", "r-d4>"] {
        for m in [
            "red_early_drops",
            "red_max_p_final",
            "red_min_th_final_packets",
        ] {
            assert!(has(link, m), "{m} of {link}");
        }
    }
    for m in ["tfrc_x_bps", "tfrc_p", "tfrc_loss_events", "tfrc_feedbacks"] {
        assert!(has("ared-b", m), "{m}");
    }
    // The adaptive max_p moved on Adaptive RED's link: its max_p_increases are counted.
    let ups: f64 = rows
        .iter()
        .filter(|r| r[2] == "r-d1>" && r[3] == "red_max_p_increases")
        .map(|r| r[5].parse::<f64>().unwrap())
        .sum();
    assert!(ups > 0.0, "{ups}");
}

/// Issue 32, item 5: `--primary` changes the terminal table's columns.
/// Budget: 4 runs of a 10-s scenario, under 2 s.
#[test]
fn primary_changes_the_terminal_table() {
    let dir = setup();
    let d = dir.path();
    let default = ok(&["sweep", "s.toml", "--seeds", "2", "--out", "a"], d);
    let header = |s: &str| s.lines().next().unwrap().to_string();
    assert!(header(&default).contains("thr Mb/s"), "{default}");
    let out = ok(
        &[
            "sweep",
            "s.toml",
            "--seeds",
            "2",
            "--primary",
            "friendliness",
            "--out",
            "b",
        ],
        d,
    );
    let h = header(&out);
    assert!(
        h.contains("friendliness") && !h.contains("thr Mb/s"),
        "the table shows the primary metric: {out}"
    );
    // The table's means are sweep.csv's (4 significant digits).
    let (hdr, rows) = read_csv(&d.join("b/sweep.csv"));
    let col = |n: &str| hdr.iter().position(|c| c == n).unwrap();
    let row = rows
        .iter()
        .find(|r| r[col("metric")] == "friendliness")
        .expect("sweep.csv has friendliness");
    let mean: f64 = row[col("mean")].parse().unwrap();
    let line = out
        .lines()
        .skip(1)
        .find(|l| l.split_whitespace().any(|w| w == row[col("subject")]))
        .unwrap_or_else(|| panic!("a row for {}: {out}", row[col("subject")]));
    assert!(
        line.contains(&report::fmt_num(mean)),
        "{line} shows {}",
        report::fmt_num(mean)
    );
}

/// Issue 32, item 5: Ctrl-C during a sweep says what happened, keeps the finished runs as a
/// campaign that `campaign run` finishes and `campaign merge` turns into what the sweep would
/// have written (byte for byte), and exits 130. Budget: about 30 s at load 5 (a 6,000-run sweep
/// interrupted after its first progress line at 5 s, the rest resumed, and the same sweep
/// uninterrupted to compare); minutes at load 20.
#[test]
fn ctrl_c_keeps_the_finished_runs_for_campaign_to_finish() {
    use std::io::BufRead;
    let dir = setup();
    let d = dir.path();
    // About 8 ms a run at load 5: 6,000 runs on one thread outlast the first progress line.
    let seeds = "6000";
    let mut child = Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args([
            "sweep", "s.toml", "--seeds", seeds, "--jobs", "1", "--out", "res",
        ])
        .current_dir(d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start tfrclab sweep");
    // Off a terminal, progress is a line every 5 s: interrupt after the first one, when runs
    // have finished and others are left.
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(first.contains("/6000, elapsed"), "progress line: {first:?}");
    // SAFETY: kill takes two integers.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "exit code after Ctrl-C: {rest}");
    assert!(
        rest.contains("Ctrl-C (SIGINT): no new runs start"),
        "what happens now: {rest}"
    );
    let kept: usize = rest
        .split("interrupted by Ctrl-C (SIGINT): ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("how many runs finished: {rest}"));
    assert!(kept > 0 && kept < 6000, "{kept} of 6000 finished: {rest}");
    assert!(!d.join("res").exists(), "the sweep's folder is not written");
    let campaign = d.join("res.campaign");
    assert!(
        rest.contains(&format!(
            "tfrclab campaign run '{}'",
            campaign.file_name().unwrap().to_str().unwrap()
        )) && rest.contains("tfrclab campaign merge 'res.campaign' --out 'res'"),
        "how to finish: {rest}"
    );
    let results = std::fs::read_dir(campaign.join("results")).unwrap().count();
    assert_eq!(results, kept, "a result file per finished run");
    // Finish as told, and compare with the same sweep uninterrupted.
    let resumed = ok(&["campaign", "run", "res.campaign", "--quiet"], d);
    assert!(
        resumed.contains(&format!("{kept} already done")),
        "{resumed}"
    );
    ok(&["campaign", "merge", "res.campaign", "--out", "res"], d);
    ok(
        &[
            "sweep", "s.toml", "--seeds", seeds, "--quiet", "--out", "whole",
        ],
        d,
    );
    for f in ["sweep.csv", "runs.csv"] {
        assert_eq!(
            std::fs::read(d.join("res").join(f)).unwrap(),
            std::fs::read(d.join("whole").join(f)).unwrap(),
            "{f}: interrupted, resumed and merged = uninterrupted"
        );
    }
}
