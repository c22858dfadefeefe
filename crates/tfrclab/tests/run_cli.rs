//! `tfrclab run` through the binary: the output folder and summary.json fields issue 4 §3 asks
//! for, bad input (exit 2, file:line:col, nothing written), and `--trace ns2|csv`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn tfrclab(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tfrclab")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const DUMBBELL: &str = r#"name = "cli-dumbbell"
duration = "20s"
seed = 4
warmup = "2s"

[topology]
kind = "dumbbell"
senders = 3
access_bandwidth = "10Mbps"
access_delay = "2ms"
bottleneck_bandwidth = "2Mbps"
bottleneck_delay = "20ms"

[[flows]]
name = "tfrc1"
kind = "tfrc"
from = "s0"
to = "d0"

[[flows]]
name = "tcp1"
kind = "tcp"
from = "s1"
to = "d1"

[[flows]]
name = "tcp2"
kind = "tcp"
from = "s2"
to = "d2"
"#;

const FLOW_FIELDS: &[&str] = &[
    "name",
    "kind",
    "sent_packets",
    "received_packets",
    "dropped_packets",
    "dropped_by_cause",
    "throughput_bps",
    "goodput_bps",
    "loss_rate",
    "pdr",
    "delay_mean_s",
    "delay_p95_s",
    "jitter_mean_s",
    "jitter_range_s",
    "jitter_rfc3550_s",
];

#[test]
fn run_writes_every_output_with_the_required_fields() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.toml"), DUMBBELL).unwrap();
    let out = tfrclab(&["run", "s.toml", "--out", "res"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let res = dir.path().join("res");
    for f in ["summary.json", "flows.csv", "timeseries.csv", "report.html"] {
        assert!(res.join(f).is_file(), "{f} missing");
    }
    let stdout = text(&out.stdout);
    for name in ["tfrc1", "tcp1", "tcp2"] {
        assert!(
            stdout.contains(name),
            "per-flow table lacks {name}:\n{stdout}"
        );
    }

    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["scenario"], "cli-dumbbell");
    assert_eq!(s["seed"], 4);
    assert_eq!(s["duration_s"], 20.0);
    assert!(s["events"].as_u64().unwrap() > 1000, "{}", s["events"]);
    assert!(s["wall_s"].as_f64().unwrap() >= 0.0);
    let flows = s["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 3);
    for f in flows {
        for k in FLOW_FIELDS {
            assert!(!f[k].is_null(), "flow lacks {k}: {f}");
        }
        let causes = f["dropped_by_cause"].as_object().unwrap();
        let keys: Vec<&str> = causes.keys().map(String::as_str).collect();
        assert_eq!(keys, ["aqm", "down", "link", "queue", "ttl"]);
        let sum: u64 = causes.values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(sum, f["dropped_packets"].as_u64().unwrap());
        let (sent, recv) = (
            f["sent_packets"].as_f64().unwrap(),
            f["received_packets"].as_f64().unwrap(),
        );
        assert!(recv > 0.0, "{f}");
        // With a warm-up, packets sent before it and received after it make `received` larger
        // than `sent` in the window; the loss rate then saturates at 0.
        let loss = f["loss_rate"].as_f64().unwrap();
        assert!(
            (loss - ((sent - recv) / sent).max(0.0)).abs() < 1e-12,
            "{f}"
        );
        // Wire bytes include headers, payload bytes do not.
        assert!(
            f["throughput_bps"].as_f64() > f["goodput_bps"].as_f64(),
            "{f}"
        );
        assert!(f["delay_p95_s"].as_f64() >= f["delay_mean_s"].as_f64().map(|m| m * 0.5));
    }
    assert_eq!(flows[0]["kind"], "tfrc");
    // Jain over the two TCP flows, recomputed from their throughputs.
    let (a, b) = (
        flows[1]["throughput_bps"].as_f64().unwrap(),
        flows[2]["throughput_bps"].as_f64().unwrap(),
    );
    let jain = (a + b).powi(2) / (2.0 * (a * a + b * b));
    let got = s["fairness"]["jain"]["tcp"].as_f64().unwrap();
    assert!((got - jain).abs() < 1e-12, "{got} vs {jain}");
    // Friendliness: TFRC over the mean TCP throughput on the shared bottleneck r0-r1.
    let fr = &s["fairness"]["friendliness"][0];
    assert_eq!(fr["flow"], "tfrc1");
    assert_eq!(fr["bottleneck"], "r0-r1");
    assert_eq!(fr["tcp_flows"], serde_json::json!(["tcp1", "tcp2"]));
    let t = flows[0]["throughput_bps"].as_f64().unwrap();
    let want = t / ((a + b) / 2.0);
    assert!((fr["ratio"].as_f64().unwrap() - want).abs() < 1e-12);

    // flows.csv holds the same numbers.
    let mut rd = csv::Reader::from_path(res.join("flows.csv")).unwrap();
    let header = rd.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3);
    for (row, f) in rows.iter().zip(flows) {
        assert_eq!(&row[col("name")], f["name"].as_str().unwrap());
        let thr: f64 = row[col("throughput_bps")].parse().unwrap();
        assert_eq!(thr, f["throughput_bps"].as_f64().unwrap());
        assert_eq!(
            row[col("dropped_queue")].parse::<u64>().unwrap(),
            f["dropped_by_cause"]["queue"].as_u64().unwrap()
        );
    }

    // timeseries.csv: one throughput value per bin per flow, summing (over the measurement
    // window) to the mean throughput.
    let mut rd = csv::Reader::from_path(res.join("timeseries.csv")).unwrap();
    assert_eq!(
        rd.headers().unwrap(),
        vec!["time_s", "metric", "subject", "subject_kind", "value"]
    );
    let mut bins = 0;
    let mut sum = 0.0;
    for r in rd.records().map(Result::unwrap) {
        if &r[1] == "throughput_bps" && &r[2] == "tcp1" {
            assert_eq!(&r[3], "flow");
            bins += 1;
            if r[0].parse::<f64>().unwrap() >= 2.0 {
                sum += r[4].parse::<f64>().unwrap();
            }
        }
    }
    assert_eq!(bins, 20, "1 s bins over 20 s");
    assert!((sum / 18.0 - a).abs() < 1e-6 * a, "{} vs {a}", sum / 18.0);

    let html = std::fs::read_to_string(res.join("report.html")).unwrap();
    assert!(html.contains("cli-dumbbell") && html.matches("<svg").count() >= 3);
}

#[test]
fn seed_flag_overrides_the_scenario_seed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.toml"), DUMBBELL).unwrap();
    let out = tfrclab(&["run", "s.toml", "--out", "r", "--seed", "99"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r/summary.json")).unwrap())
            .unwrap();
    assert_eq!(s["seed"], 99);
}

/// Entries of `dir` (to see that nothing, not even a staging folder, was left behind).
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn bad_input_exits_2_with_the_position_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        // (what to replace in DUMBBELL, with what, the position and words expected)
        (
            "kind = \"tcp\"\nfrom = \"s1\"",
            "kind = \"tcp\"\nvariant = \"vegas\"\nfrom = \"s1\"",
            "bad.toml:23:11: unknown TCP variant \"vegas\"",
        ),
        (
            "bottleneck_bandwidth = \"2Mbps\"",
            "bottleneck_bandwidth = \"fast\"",
            "bad.toml:11:24:",
        ),
        (
            "to = \"d2\"",
            "to = \"nowhere\"",
            "bad.toml:30:6: unknown node \"nowhere\"",
        ),
        ("warmup = \"2s\"", "warmup = \"30s\"", "bad.toml:4:10:"),
        ("name = \"tcp2\"", "name = \"tcp1\"", "bad.toml:27:8:"),
    ];
    for (from, to, want) in cases {
        assert!(DUMBBELL.contains(from), "{from}");
        std::fs::write(dir.path().join("bad.toml"), DUMBBELL.replacen(from, to, 1)).unwrap();
        let out = tfrclab(&["run", "bad.toml", "--out", "res"], dir.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{want}: {err}");
        assert!(err.contains(want), "expected {want:?} in:\n{err}");
        assert!(err.contains("expected"), "says what would be right:\n{err}");
        assert_eq!(
            entries(dir.path()),
            ["bad.toml"],
            "nothing written for {want}"
        );
    }

    // A missing file, a bad override and bad flags are bad input too.
    let runs: &[(&[&str], &str)] = &[
        (&["run", "missing.toml", "--out", "res"], "missing.toml"),
        (
            &[
                "run",
                "bad.toml",
                "--out",
                "res",
                "--set",
                "flows.nope.rate=1Mbps",
            ],
            "no element \"nope\"",
        ),
        (
            &["run", "bad.toml", "--out", "res", "--seed", "abc"],
            "--seed",
        ),
        (
            &["run", "bad.toml", "--out", "res", "--trace", "pcap"],
            "--trace",
        ),
        (
            &["run", "bad.toml", "--out", "res", "--set", "novalue"],
            "KEY=VALUE",
        ),
    ];
    std::fs::write(dir.path().join("bad.toml"), DUMBBELL).unwrap();
    for (args, want) in runs {
        let out = tfrclab(args, dir.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: expected {want:?} in {err}");
        assert_eq!(entries(dir.path()), ["bad.toml"], "{args:?}");
    }

    // More time-series bins than the simulator keeps: the file and the fix are named.
    std::fs::write(
        dir.path().join("long.toml"),
        DUMBBELL.replacen("duration = \"", "duration = \"1000000", 1),
    )
    .unwrap();
    let out = tfrclab(&["run", "long.toml", "--out", "res"], dir.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("long.toml") && err.contains("use a `sample_interval` of at least"),
        "{err}"
    );
    assert_eq!(entries(dir.path()), ["bad.toml", "long.toml"]);

    // An --out that is not a tfrclab folder is refused before running.
    std::fs::create_dir(dir.path().join("precious")).unwrap();
    std::fs::write(dir.path().join("precious/notes.txt"), "mine").unwrap();
    let out = tfrclab(&["run", "bad.toml", "--out", "precious"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(entries(&dir.path().join("precious")), ["notes.txt"]);
}

const LOSSY: &str = r#"name = "lossy"
duration = "10s"
seed = 3

[[links]]
from = "a"
to = "b"
bandwidth = "2Mbps"
delay = "10ms"
queue_limit = 10
[links.loss]
model = "bernoulli"
rate = 0.02

[[flows]]
name = "udp1"
kind = "udp"
from = "a"
to = "b"
rate = "2.5Mbps"
packet_size = 500
"#;

#[test]
fn ns2_trace_parses_and_agrees_with_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("l.toml"), LOSSY).unwrap();
    let out = tfrclab(
        &["run", "l.toml", "--out", "res", "--trace", "ns2"],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("res/summary.json")).unwrap(),
    )
    .unwrap();
    let f = &s["flows"][0];
    let trace = std::fs::read_to_string(dir.path().join("res/trace.tr")).unwrap();
    let (mut enq, mut recv, mut drops) = (0u64, 0u64, 0u64);
    for (i, line) in trace.lines().enumerate() {
        let l = netsim::trace::parse_ns2_line(line)
            .unwrap_or_else(|e| panic!("trace.tr line {}: {e:?}: {line}", i + 1));
        assert_eq!(l.ptype, "cbr", "{line}");
        assert_eq!(
            (l.from, l.to),
            (0, 1),
            "node ids in order of appearance: {line}"
        );
        match l.event {
            netsim::trace::TraceEvent::Enqueue => enq += 1,
            netsim::trace::TraceEvent::Receive => recv += 1,
            netsim::trace::TraceEvent::Drop => drops += 1,
            _ => {}
        }
    }
    // Over 2 Mb/s into a 10-packet queue and a 2% loss link: both causes occur.
    assert_eq!(recv, f["received_packets"].as_u64().unwrap());
    assert_eq!(drops, f["dropped_packets"].as_u64().unwrap());
    assert!(f["dropped_by_cause"]["queue"].as_u64().unwrap() > 0, "{f}");
    assert!(f["dropped_by_cause"]["link"].as_u64().unwrap() > 0, "{f}");
    // NS-2 traces a '+' for every packet offered to the queue, dropped or not.
    assert_eq!(enq, f["sent_packets"].as_u64().unwrap());
}

#[test]
fn csv_trace_parses_with_drop_causes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("l.toml"), LOSSY).unwrap();
    let out = tfrclab(
        &["run", "l.toml", "--out", "res", "--trace", "csv"],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("res/summary.json")).unwrap(),
    )
    .unwrap();
    let f = &s["flows"][0];
    let mut rd = csv::Reader::from_path(dir.path().join("res/trace.csv")).unwrap();
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header.join(","),
        format!(
            "{},{}",
            netsim::trace::CSV_HEADER,
            netsim::trace::CSV_NAME_COLUMNS
        )
    );
    let flow_names: Vec<&str> = s["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let mut by_cause = std::collections::BTreeMap::<String, u64>::new();
    let mut recv = 0;
    let mut last_t = 0u64;
    for r in rd.records() {
        let r = r.unwrap();
        // Names beside the numbers: every packet belongs to a flow of the scenario, and the
        // link's ends are named.
        assert!(flow_names.contains(&&r[17]), "{r:?}");
        assert!(!r[15].is_empty() && !r[16].is_empty(), "{r:?}");
        let t: u64 = r[1].parse().expect("integer nanoseconds");
        assert!(t >= last_t, "trace in time order");
        last_t = t;
        match &r[0] {
            "d" => *by_cause.entry(r[14].to_string()).or_default() += 1,
            "r" => recv += 1,
            _ => assert_eq!(&r[14], "", "cause only on drops"),
        }
    }
    assert_eq!(recv, f["received_packets"].as_u64().unwrap());
    for (cause, n) in &by_cause {
        assert_eq!(
            *n,
            f["dropped_by_cause"][cause].as_u64().unwrap(),
            "{cause}"
        );
    }
    assert!(by_cause.contains_key("link") && by_cause.contains_key("queue"));
}
