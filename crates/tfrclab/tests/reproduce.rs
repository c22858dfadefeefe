//! Issue 7 §5: `tfrclab reproduce all --quick` writes a report for every paper the registry
//! implements; each renders in headless Chromium without console errors, every table of the
//! report is in the HTML and in its CSV alike, and every verdict in the HTML is the one
//! recomputed here from the CSVs (the per-seed samples → mean and Student-t CI → the rule).
//!
//! Every one of the five seed papers must produce a report.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::chromium;
use lab::stats::MeanCi;
use serde_json::Value;

const PAPERS: [&str; 7] = [
    "seed-000",
    "seed-001",
    "seed-002",
    "seed-003",
    "seed-004",
    "beyond-seeds",
    "rfc8867",
];

/// Every table: caption, header cells, body rows' cell texts; and every link target.
const PROBE: &str = r##"(() => ({
  tables: [...document.querySelectorAll('table')].map(t => ({
    caption: t.caption ? t.caption.textContent : '',
    header: [...t.querySelectorAll('thead th')].map(c => c.textContent),
    rows: [...t.querySelectorAll('tbody tr')].map(r => [...r.children].map(c => c.textContent)),
  })),
  links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
  svgs: document.querySelectorAll('svg').length,
  title: document.title,
}))()"##;

fn csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

fn num(s: &str) -> f64 {
    if s.is_empty() {
        f64::NAN
    } else {
        s.parse()
            .unwrap_or_else(|_| panic!("\"{s}\" is not a number"))
    }
}

/// The verdict rule of docs/reproduce.md, written again here so the test does not trust the
/// code it checks.
fn rule(direction: &str, reference: f64, magnitude: f64, lo: f64, hi: f64) -> &'static str {
    if !(lo.is_finite() && hi.is_finite()) {
        return "not supported";
    }
    if direction == "within" {
        // An absolute value: reference ± magnitude; the CI inside the band, outside it, or across
        // an edge.
        let t = if magnitude.is_nan() {
            0.0
        } else {
            magnitude.abs()
        };
        let (a, b) = (reference - t, reference + t);
        return if hi < a || lo > b {
            "contradicted"
        } else if lo > a && hi < b {
            "supported"
        } else {
            "not supported"
        };
    }
    let above = match direction {
        "above" => true,
        "below" => false,
        d => panic!("direction {d}"),
    };
    let beyond = |x: f64, r: f64| if above { x > r } else { x < r };
    let (near, far) = if above { (lo, hi) } else { (hi, lo) };
    if beyond(reference, far) {
        "contradicted"
    } else if beyond(near, reference) && (magnitude.is_nan() || !beyond(magnitude, far)) {
        "supported"
    } else {
        "not supported"
    }
}

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

/// The HTML table whose caption names `csv_name`.
fn html_table<'a>(probe: &'a Value, csv_name: &str) -> &'a Value {
    let found: Vec<&Value> = probe["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["caption"]
                .as_str()
                .unwrap()
                .ends_with(&format!("({csv_name})"))
        })
        .collect();
    assert_eq!(found.len(), 1, "one HTML table for {csv_name}");
    found[0]
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// A quick report's verdict cell ("✓ supported (quick)") as the CSV spells it ("supported");
/// panics when the cell is not marked quick (issue 32: wherever a verdict shows).
fn verdict_of_cell(text: &str) -> String {
    let Some(v) = text.strip_suffix(" (quick)") else {
        panic!("a --quick verdict is marked \"(quick)\": {text:?}");
    };
    v.trim_start_matches(['✓', '–', '✗', ' ']).to_string()
}

fn check_claims(dir: &Path, probe: &Value, paper: &str) -> usize {
    let (h, claims) = csv(&dir.join("claims.csv"));
    let col = |name: &str| h.iter().position(|c| c == name).expect(name);
    let (_, samples) = csv(&dir.join("claim_samples.csv"));
    let mut by_claim: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in &samples {
        by_claim.entry(s[0].clone()).or_default().push(num(&s[2]));
    }
    assert!(!claims.is_empty(), "{paper}: no claims");
    let table = html_table(probe, "claims.csv");
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), claims.len(), "{paper}: claims in HTML and CSV");
    let header = strings(&table["header"]);
    let verdict_col = header.iter().position(|c| c == "Verdict").unwrap();
    for (c, row) in claims.iter().zip(rows) {
        let id = &c[col("id")];
        let row = strings(row);
        assert_eq!(&row[0], id, "{paper}: claim order");
        // From the samples: mean and CI.
        let xs = by_claim.get(id).cloned().unwrap_or_default();
        let m = MeanCi::of(&xs).expect("samples");
        assert_eq!(m.n.to_string(), c[col("n")], "{paper} {id}: n");
        assert!(close(m.mean, num(&c[col("mean")])), "{paper} {id}: mean");
        let (lo, hi) = (m.ci_lo().unwrap_or(f64::NAN), m.ci_hi().unwrap_or(f64::NAN));
        assert!(close(lo, num(&c[col("ci_lo")])), "{paper} {id}: ci_lo");
        assert!(close(hi, num(&c[col("ci_hi")])), "{paper} {id}: ci_hi");
        // From the CI: the verdict, in the CSV and in the HTML.
        let v = rule(
            &c[col("direction")],
            num(&c[col("reference")]),
            num(&c[col("magnitude")]),
            lo,
            hi,
        );
        assert_eq!(c[col("verdict")], v, "{paper} {id}: verdict in claims.csv");
        assert_eq!(
            verdict_of_cell(&row[verdict_col]),
            v,
            "{paper} {id}: verdict in report.html"
        );
    }
    claims.len()
}

fn check_tables(dir: &Path, probe: &Value, summary: &Value, paper: &str) {
    let listed: Vec<String> = summary["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["csv"].as_str().unwrap().to_string())
        .collect();
    assert!(!listed.is_empty(), "{paper}: no tables");
    // Every CSV in the folder is a listed table or one of the fixed files.
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".csv")
            && !["claims.csv", "claim_samples.csv", "runs.csv"].contains(&name.as_str())
        {
            assert!(
                listed.contains(&name),
                "{paper}: {name} is not in summary.json"
            );
        }
    }
    for name in &listed {
        let (h, rows) = csv(&dir.join(name));
        let t = html_table(probe, name);
        let header = strings(&t["header"]);
        let csv_cols: Vec<&String> = h
            .iter()
            .filter(|c| !c.ends_with(" ci_lo") && !c.ends_with(" ci_hi"))
            .collect();
        assert_eq!(
            header.iter().collect::<Vec<_>>(),
            csv_cols,
            "{paper} {name}: columns"
        );
        let html_rows = t["rows"].as_array().unwrap();
        assert_eq!(html_rows.len(), rows.len(), "{paper} {name}: rows");
        assert!(!rows.is_empty(), "{paper} {name}: empty");
        for (r, hr) in rows.iter().zip(html_rows) {
            let hr = strings(hr);
            assert_eq!(hr.len(), header.len(), "{paper} {name}: row width");
            assert_eq!(hr[0], r[0], "{paper} {name}: row key");
            // Checks read alike in both.
            for (i, c) in csv_cols.iter().enumerate() {
                let j = h.iter().position(|x| x == *c).unwrap();
                match r[j].as_str() {
                    "pass" => assert_eq!(hr[i], "✓ pass", "{paper} {name} {c}"),
                    "fail" => assert_eq!(hr[i], "✗ fail", "{paper} {name} {c}"),
                    _ => {}
                }
            }
        }
    }
}

/// Seed 004's exact comparison: every Tahoe and UDP row of the paper within 1% (the runs as
/// written keep the paper's 100 s under --quick).
fn check_seed004(dir: &Path) {
    let (h, rows) = csv(&dir.join("exact-comparison.csv"));
    let (n, pass) = (
        h.iter().position(|c| c == "rows").unwrap(),
        h.iter().position(|c| c == "rows within 1%").unwrap(),
    );
    assert_eq!(rows.len(), 8);
    for r in rows.iter().filter(|r| !r[0].contains("NewReno")) {
        assert_eq!(r[n], r[pass], "seed 004 {}: every row within 1%", r[0]);
    }
}

/// A fresh scratch folder per test (the tests of this file run in parallel in one process).
fn tmp(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tfrclab-reproduce-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn reproduce_all_quick_writes_consistent_reports() {
    let work = tmp("all");
    let out = work.join("out");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let run = Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(["reproduce", "all", "--quick", "--out"])
        .arg(&out)
        .current_dir(&root)
        .output()
        .expect("run tfrclab");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "reproduce failed: {}\n{stdout}",
        String::from_utf8_lossy(&run.stderr)
    );

    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let papers = index["papers"].as_array().unwrap();
    let ids: Vec<&str> = papers.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids, PAPERS,
        "the registry lists the five seed papers, the reproduction beyond them and RFC 8867"
    );
    assert_eq!(index["quick"], true);

    let probe = chromium::load(&out.join("index.html"), PROBE);
    assert!(probe.problems().is_empty(), "index: {:?}", probe.problems());
    assert!(
        probe.other_requests().is_empty(),
        "index: {:?}",
        probe.other_requests()
    );
    let index_html = std::fs::read_to_string(out.join("index.html")).unwrap();
    // Issue 32: the command as run, and the one that gives the full verdicts.
    let out_s = out.to_str().unwrap();
    assert!(
        index_html.contains(&format!(
            "Produced by `tfrclab reproduce all --quick --out {out_s}`"
        )),
        "the index names the command run"
    );
    assert!(index_html.contains("--quick run: verdicts may flip in a full run"));
    let full = format!("tfrclab reproduce all --out {out_s}");
    assert!(index_html.contains(&format!("For the full verdicts run `{full}`")));
    assert!(
        stdout.contains(&format!("for the full verdicts run `{full}`")),
        "{stdout}"
    );
    // Every verdict of the index's "All verdicts" table is marked quick.
    let all = probe.probe["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| strings(&t["header"]).contains(&"Claim (paper)".to_string()))
        .expect("the index's table of all verdicts");
    let col = strings(&all["header"])
        .iter()
        .position(|h| h == "Verdict")
        .unwrap();
    let rows = all["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        verdict_of_cell(&strings(r)[col]);
    }
    // Issue 18: nothing overflows at 1,400 or 800 px (screenshots kept as artefacts); issue 32:
    // no heading word broken, no measured value cut, the headline above the first chart.
    let l = common::layout::check(&out.join("index.html"), "all-index");
    common::layout::assert_headline_first(&l, "index");

    let mut reports = 0;
    for p in papers {
        let id = p["id"].as_str().unwrap();
        let status = p["status"].as_str().unwrap();
        assert!(
            index_html.contains(id),
            "{id} is in the index whatever its status"
        );
        assert_eq!(status, "report", "{id} was selected by `all`");
        let dir = out.join(id);
        for f in [
            "report.html",
            "claims.csv",
            "claim_samples.csv",
            "runs.csv",
            "summary.json",
        ] {
            assert!(dir.join(f).is_file(), "{id}: {f} missing");
        }
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap())
                .unwrap();
        let html_path = dir.join("report.html");
        let html = std::fs::read_to_string(&html_path).unwrap();
        assert!(
            html.contains("--quick run: verdicts may flip in a full run")
                && html.contains(&format!(
                    "For the full verdicts run `tfrclab reproduce {id}`"
                )),
            "{id}: quick banner"
        );
        let load = chromium::load(&html_path, PROBE);
        assert!(load.problems().is_empty(), "{id}: {:?}", load.problems());
        assert!(
            load.other_requests().is_empty(),
            "{id}: requests {:?}",
            load.other_requests()
        );
        // Every relative link (CSVs, scenario copies, the index) points at a file.
        for l in load.probe["links"].as_array().unwrap() {
            let l = l.as_str().unwrap();
            if !l.starts_with('#') {
                assert!(dir.join(l).is_file(), "{id}: link {l} is broken");
            }
        }
        let layout = common::layout::check(&html_path, &format!("all-{id}"));
        common::layout::assert_headline_first(&layout, id);
        let n = check_claims(&dir, &load.probe, id);
        assert_eq!(
            layout["firstMarks"], n,
            "{id}: the first figure has a mark per claim"
        );
        assert_eq!(summary["claims"].as_array().unwrap().len(), n);
        check_tables(&dir, &load.probe, &summary, id);
        // The index summarises the same verdicts.
        let verdicts: Vec<&str> = p["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["verdict"].as_str().unwrap())
            .collect();
        let (_, claims) = csv(&dir.join("claims.csv"));
        let from_csv: Vec<&str> = claims.iter().map(|c| c[11].as_str()).collect();
        assert_eq!(verdicts, from_csv, "{id}: index verdicts");
        if id == "seed-004" {
            check_seed004(&dir);
        }
        reports += 1;
    }
    assert_eq!(reports, PAPERS.len());
    std::fs::remove_dir_all(&work).ok();
}

fn reproduce(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .arg("reproduce")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tfrclab")
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let work = tmp("bad");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = work.join("out");
    let out_s = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["seed-9", "--out", out_s], "unknown paper \"seed-9\""),
        (vec!["seed-004", "--seeds", "1", "--out", out_s], "--seeds"),
        (
            vec!["seed-004", "--scenarios", "/nonexistent", "--out", out_s],
            "is not a folder",
        ),
    ];
    for (args, msg) in cases {
        let o = reproduce(&args, &root);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote output");
    }
    // A markdown file without the marker lines is refused, and left alone.
    let md = work.join("doc.md");
    std::fs::write(&md, "no markers here\n").unwrap();
    let o = reproduce(
        &[
            "seed-004",
            "--quick",
            "--markdown",
            md.to_str().unwrap(),
            "--out",
            out_s,
        ],
        &root,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("BEGIN generated by tfrclab reproduce"));
    assert_eq!(std::fs::read_to_string(&md).unwrap(), "no markers here\n");
    assert!(!out.exists());
    std::fs::remove_dir_all(&work).ok();
}

/// `--phase-remedy` without `--markdown` keeps its comparison: `phase-remedy.md`, the index
/// page's last section and `summary.json` (it used to run both passes and print nothing of the
/// second). The reports stay those of the runs without the remedy, and the remedy changes
/// what is measured (else the second pass would not be remedied at all).
#[test]
fn phase_remedy_writes_its_comparison() {
    let work = tmp("remedy");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (plain, remedied) = (work.join("plain"), work.join("remedied"));
    for (out, extra) in [(&plain, None), (&remedied, Some("--phase-remedy"))] {
        let mut args = vec!["seed-000", "--quick", "-q", "--out", out.to_str().unwrap()];
        args.extend(extra);
        let o = reproduce(&args, &root);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            stdout.contains("with phase effects removed"),
            extra.is_some(),
            "{stdout}"
        );
    }
    assert!(!plain.join("phase-remedy.md").exists());
    let claims = |out: &Path| std::fs::read_to_string(out.join("seed-000/claims.csv")).unwrap();
    assert_eq!(
        claims(&plain),
        claims(&remedied),
        "the reports are the unremedied runs'"
    );

    let summary = |out: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
    };
    assert_eq!(summary(&plain)["phase_remedy"], Value::Null);
    let s = summary(&remedied);
    let paper = &s["papers"][0];
    assert_eq!(paper["id"], "seed-000");
    let verdicts = |key: &str| -> Vec<(String, String)> {
        paper[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: {paper}"))
            .iter()
            .map(|v| (v["id"].to_string(), v["verdict"].to_string()))
            .collect()
    };
    let (before, after) = (verdicts("verdicts"), verdicts("remedied_verdicts"));
    let ids = |v: &[(String, String)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&before), ids(&after));
    let flips = before
        .iter()
        .zip(&after)
        .filter(|(a, b)| a.1 != b.1)
        .count();
    let r = &s["phase_remedy"];
    assert_eq!(r["verdicts"], before.len());
    assert_eq!(r["verdicts_changed"], flips);
    assert_eq!(r["processing_jitter_s"], 0.001);

    // The comparison: one row per claim, the unremedied values as claims.csv has them (in
    // the reports' rounding) and remedied values that differ somewhere.
    let md = std::fs::read_to_string(remedied.join("phase-remedy.md")).unwrap();
    assert!(
        md.contains(&format!("**{flips} of {} verdicts change**", before.len())),
        "{md}"
    );
    let rows: Vec<Vec<&str>> = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Id |"))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), before.len(), "{md}");
    let marked = rows.iter().filter(|r| r[6] == "**yes**").count();
    assert_eq!(marked, flips, "{md}");
    assert!(
        rows.iter().any(|r| r[2] != r[4]),
        "the remedy changed no measured value: {md}"
    );
    let index = std::fs::read_to_string(remedied.join("index.html")).unwrap();
    assert!(index.contains("With phase effects removed"));
    assert!(index.contains(&format!("{flips} of {} verdicts change", before.len())));
    std::fs::remove_dir_all(&work).ok();
}
