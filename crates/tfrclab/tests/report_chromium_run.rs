//! Issue 4 §5: the report of a real `tfrclab run` and of a real `tfrclab sweep` render in
//! headless Chromium with no console errors, no requests beyond the page itself, and every
//! chart drawn with its labels inside it.

mod common;

use std::path::Path;
use std::process::Command;

use common::chromium;
use serde_json::Value;

fn tfrclab(args: &[&str], dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tfrclab");
    assert!(
        out.status.success(),
        "tfrclab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const PROBE: &str = r##"(() => {
  const svgs = [...document.querySelectorAll('svg')];
  const outside = [];
  svgs.forEach((s, i) => {
    const r = s.getBoundingClientRect();
    for (const t of s.querySelectorAll('text')) {
      const b = t.getBoundingClientRect();
      if (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1)
        outside.push(i + ': ' + t.textContent);
    }
  });
  return {
    svgs: svgs.length,
    drawn: svgs.filter(s => s.getBoundingClientRect().width > 300 && s.querySelectorAll('text').length > 3).length,
    marks: svgs.filter(s => s.querySelectorAll('path, circle, rect').length > 5).length,
    tables: document.querySelectorAll('table').length,
    brokenAnchors: [...document.querySelectorAll('a[href^="#"]')]
      .filter(a => !document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1)))).length,
    outside,
    title: document.title,
  };
})()"##;

fn n(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("probe field {key}: {v}"))
}

/// Load `path` and check it like every report; returns the probe.
fn renders_cleanly(path: &Path) -> Value {
    let html = std::fs::read_to_string(path).unwrap();
    let load = chromium::load(path, PROBE);
    assert!(
        load.problems().is_empty(),
        "{}: console/log output: {:#?}",
        path.display(),
        load.problems()
    );
    assert!(
        load.other_requests().is_empty(),
        "{}: requests: {:?}",
        path.display(),
        load.other_requests()
    );
    let p = load.probe;
    let svgs = html.matches("<svg").count() as u64;
    assert!(svgs >= 3, "{}: {svgs} charts", path.display());
    assert_eq!(n(&p, "svgs"), svgs, "{p}");
    assert_eq!(
        n(&p, "drawn"),
        svgs,
        "every chart has a size and labels: {p}"
    );
    assert_eq!(n(&p, "marks"), svgs, "every chart draws data: {p}");
    assert_eq!(n(&p, "brokenAnchors"), 0, "{p}");
    assert_eq!(
        p["outside"].as_array().map(Vec::len),
        Some(0),
        "text outside its chart: {}",
        p["outside"]
    );
    p
}

#[test]
fn run_and_sweep_reports_render_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/dumbbell.toml");
    let example = example.to_str().unwrap();

    tfrclab(&["run", example, "--out", "run"], d);
    let p = renders_cleanly(&d.join("run/report.html"));
    assert_eq!(p["title"], "tfrclab run: dumbbell");
    assert!(n(&p, "tables") >= 4, "{p}");

    tfrclab(
        &[
            "sweep",
            example,
            "--set",
            "topology.bottleneck_bandwidth=1Mbps,1.5Mbps,3Mbps",
            "--set",
            "flows.tcp1.variant=reno,newreno",
            "--seeds",
            "3",
            "--out",
            "sweep",
        ],
        d,
    );
    let p = renders_cleanly(&d.join("sweep/report.html"));
    assert_eq!(p["title"], "tfrclab sweep: dumbbell");
    // The grid table and one table per charted metric; the throughput-delay plot has none.
    assert_eq!(n(&p, "tables"), n(&p, "svgs"), "{p}");
}
