//! Issue 18 §9: reports tested in a real browser. Headless Chromium opens a `reproduce --quick`
//! report (and its index) and a `run` report, at 1,400 and 800 px wide:
//! - a paper report's and the index's first figure is the claims figure, one mark per claim;
//! - clicking a legend entry hides its series (and clicking again shows it), hovering a mark
//!   shows its values, dragging a box zooms and a double click zooms out;
//! - without scripts every chart is drawn all the same;
//! - no text overflows its container (nothing scrolls sideways, no cell or box is wider than
//!   itself, no chart text leaves its chart), and nothing logs an error or fetches anything.
//!
//! Screenshots of every page at both widths are kept under `target/test-artifacts/report-browser/`
//! (CI keeps them as artefacts of the test run); `reproduce.rs` checks the layout of every
//! paper's report the same way.

mod common;

use std::path::Path;
use std::process::Command;

use common::{chromium, layout};
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

/// Click a legend entry of the first chart with several series, hover a mark, zoom.
const INTERACT: &str = r##"(() => {
  const svg = [...document.querySelectorAll('figure svg')]
    .find(s => s.querySelectorAll('.lg').length >= 2 && s.querySelectorAll('g.series').length >= 2);
  if (!svg) return null;
  const item = svg.querySelector('.lg[data-s="0"]');
  const shown = s => [...svg.querySelectorAll('g.series[data-s="' + s + '"]')]
    .map(g => getComputedStyle(g).display !== 'none' && g.getBoundingClientRect().width > 0);
  const ir = item.getBoundingClientRect();
  const click = () => item.dispatchEvent(new MouseEvent('click',
    { bubbles: true, clientX: ir.x + ir.width / 2, clientY: ir.y + ir.height / 2 }));
  const before = shown(0);
  click();
  const afterClick = shown(0);
  const othersAfterClick = shown(1);
  const dimmed = item.classList.contains('off');
  click();
  const afterSecondClick = shown(0);
  const mark = svg.querySelector('g.series[data-s="1"] circle, g.series[data-s="1"] path');
  const mr = mark.getBoundingClientRect();
  mark.dispatchEvent(new MouseEvent('mousemove',
    { bubbles: true, clientX: mr.x + mr.width / 2, clientY: mr.y + mr.height / 2 }));
  const tip = document.querySelector('div.tip');
  const tipText = tip && getComputedStyle(tip).display !== 'none' ? tip.textContent : null;
  const sr = svg.getBoundingClientRect();
  const at = (fx, fy) => ({ bubbles: true, button: 0,
    clientX: sr.x + sr.width * fx, clientY: sr.y + sr.height * fy });
  const vb0 = svg.getAttribute('viewBox');
  svg.dispatchEvent(new MouseEvent('mousedown', at(0.3, 0.2)));
  svg.dispatchEvent(new MouseEvent('mousemove', at(0.6, 0.5)));
  svg.dispatchEvent(new MouseEvent('mouseup', at(0.6, 0.5)));
  const vbZoomed = svg.getAttribute('viewBox');
  svg.dispatchEvent(new MouseEvent('dblclick', { bubbles: true }));
  return {
    chart: svg.querySelector('title').textContent,
    legend: item.textContent,
    before, afterClick, othersAfterClick, dimmed, afterSecondClick,
    tipText, vb0, vbZoomed, vbReset: svg.getAttribute('viewBox'),
  };
})()"##;

fn claims_in(csv_path: &Path) -> usize {
    let mut r = csv::Reader::from_path(csv_path).unwrap();
    r.records().count()
}

fn assert_claims_figure_first(p: &Value, claims: usize, name: &str) {
    assert_eq!(
        p["firstIsFirstSvg"], true,
        "{name}: no chart before the first figure"
    );
    assert!(
        p["firstTitle"]
            .as_str()
            .is_some_and(|t| t.contains("claims")),
        "{name}: the first figure is the claims figure: {p}"
    );
    assert_eq!(p["firstMarks"], claims, "{name}: one mark per claim: {p}");
    assert_eq!(p["firstRows"], claims, "{name}: one row per claim: {p}");
    assert!(
        p["firstWidth"].as_f64().unwrap() > 700.0,
        "{name}: the claims figure spans the page: {p}"
    );
}

#[test]
fn reproduce_report_opens_with_its_claims_and_fits_every_width() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep");
    tfrclab(
        &[
            "reproduce",
            "seed-003",
            "--quick",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
        &common::repo(),
    );
    let paper = out.join("seed-003");
    let claims = claims_in(&paper.join("claims.csv"));
    assert!(claims >= 2, "seed 003 has claims");
    let p = layout::check(&paper.join("report.html"), "seed-003");
    assert_claims_figure_first(&p, claims, "seed-003 report");
    layout::assert_headline_first(&p, "seed-003 report");
    // The index shows the same claims the same way, after the headline.
    let p = layout::check(&out.join("index.html"), "index");
    assert_claims_figure_first(&p, claims, "index");
    layout::assert_headline_first(&p, "index");
    // Issue 32: relative changes in percent, as the tables and the papers print them; every
    // verdict marked quick; the command as it was run.
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let measured: Vec<&str> = index
        .split("class=\"claim-measured\"")
        .skip(1)
        .map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()])
        .collect();
    assert_eq!(measured.len(), claims, "a measured value per claim");
    for m in &measured {
        assert!(
            m.contains('%') && !m.contains('\u{2026}'),
            "seed 003's claims are relative changes, shown whole in percent: {m}"
        );
    }
    let verdicts = index.matches("class=\"claim-verdict\"").count();
    assert_eq!(verdicts, claims);
    assert_eq!(
        index.matches("(quick)</text>").count(),
        claims,
        "every verdict in the figure is marked quick"
    );
    assert!(index.contains(&format!(
        "Produced by `tfrclab reproduce seed-003 --quick --quiet --out {}`",
        out.display()
    )));
}

#[test]
fn run_report_legend_hides_series_and_fits_every_width() {
    let dir = tempfile::tempdir().unwrap();
    let example = common::repo().join("scenarios/examples/dumbbell.toml");
    tfrclab(
        &["run", example.to_str().unwrap(), "--out", "run"],
        dir.path(),
    );
    let page = dir.path().join("run/report.html");
    layout::check(&page, "run");
    let load = chromium::load_sized(&page, INTERACT, Some((1400, 900)));
    assert!(load.problems().is_empty(), "{:#?}", load.problems());
    let p = load.probe;
    assert!(!p.is_null(), "a chart with a legend of two or more series");
    let all = |k: &str, want: bool| {
        let v = p[k].as_array().unwrap_or_else(|| panic!("{k}: {p}"));
        !v.is_empty() && v.iter().all(|x| x.as_bool() == Some(want))
    };
    assert!(all("before", true), "series 0 drawn at first: {p}");
    assert!(
        all("afterClick", false),
        "clicking its legend entry hides it: {p}"
    );
    assert!(all("othersAfterClick", true), "other series stay: {p}");
    assert_eq!(p["dimmed"], true, "the legend entry shows it is off: {p}");
    assert!(
        all("afterSecondClick", true),
        "a second click shows it again: {p}"
    );
    let tip = p["tipText"].as_str().unwrap_or_default();
    assert!(
        tip.contains("tcp1") && tip.contains("x = ") && tip.contains("y = "),
        "hovering a mark shows its series and values: {p}"
    );
    assert_ne!(p["vbZoomed"], p["vb0"], "dragging a box zooms: {p}");
    assert_eq!(p["vbReset"], p["vb0"], "a double click zooms out: {p}");
}

/// What a reader without JavaScript sees: every chart drawn, every series shown.
const STATIC: &str = r##"(() => ({
  scriptRan: document.querySelector('div.tip') !== null,
  svgs: document.querySelectorAll('figure svg').length,
  drawn: [...document.querySelectorAll('figure svg')]
    .filter(s => s.getBoundingClientRect().width > 300 && s.querySelectorAll('path, circle, rect').length > 5).length,
  hiddenSeries: [...document.querySelectorAll('g.series')].filter(g => getComputedStyle(g).display === 'none').length,
}))()"##;

#[test]
fn reports_are_complete_without_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let example = common::repo().join("scenarios/examples/dumbbell.toml");
    tfrclab(
        &["run", example.to_str().unwrap(), "--out", "run"],
        dir.path(),
    );
    let page = dir.path().join("run/report.html");
    let off = chromium::load_with(&page, STATIC, Some((1400, 900)), false);
    assert!(off.problems().is_empty(), "{:#?}", off.problems());
    let p = off.probe;
    assert_eq!(p["scriptRan"], false, "scripts were off: {p}");
    assert!(p["svgs"].as_u64().unwrap() >= 5, "{p}");
    assert_eq!(
        p["drawn"], p["svgs"],
        "every chart drawn without scripts: {p}"
    );
    assert_eq!(p["hiddenSeries"], 0, "{p}");
    // And the same page with scripts on ran its script (the probe above is not vacuous).
    let on = chromium::load_with(&page, STATIC, Some((1400, 900)), true);
    assert_eq!(on.probe["scriptRan"], true, "{}", on.probe);
    assert_eq!(on.probe["drawn"], p["svgs"]);
}
