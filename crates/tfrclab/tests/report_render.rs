//! Renders representative reports and opens them in headless Chromium: they must render with no
//! console output, no exceptions, no network requests, every chart drawn and every table row
//! present. Negative controls prove the checker does catch console errors, exceptions and
//! fetches.

mod common;

use std::path::Path;

use common::chromium;
use report::{
    comparison_table, verdict_table, BarChart, Cell, CellClass, Chart, ComparisonRow,
    DistributionChart, DistributionKind, ErrorBarChart, ErrorPoint, Estimate, LineChart, Page,
    Table, Verdict, VerdictRow,
};
use serde_json::Value;

/// Counts what a page should contain, as it is built.
#[derive(Default)]
struct Expect {
    svgs: usize,
    rows: usize,
    tables: usize,
}

fn fig(page_section: &mut report::Section, e: &mut Expect, chart: &dyn Chart, caption: &str) {
    page_section.figure(chart, caption);
    e.svgs += 1;
}

fn table(page_section: &mut report::Section, e: &mut Expect, t: Table) {
    e.rows += t.rows.len();
    e.tables += 1;
    page_section.table(t);
}

/// A deterministic pseudo-random sequence in [0, 1), so the sample data is irregular.
fn noise(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

const FLOWS: [&str; 5] = [
    "tfrc 1 (rfc5348)",
    "tfrc 2 (ns2 profile)",
    "tcp 1 (Reno)",
    "tcp 2 (Reno)",
    "udp cbr — ünïcödé 漢字 flow with a rather long descriptive name",
];

/// A single-scenario report with every chart kind, tables, long labels, unicode, and awkward
/// data (NaN gaps, an empty series, a log axis with zeros).
fn run_report() -> (Page, Expect) {
    let mut e = Expect::default();
    let mut page = Page::new("Scenario dumbbell-5 — seed 7 <&> \"quoted\"");
    page.intro().paragraph(
        "Five flows share a 10 Mbit/s, 50 ms bottleneck with a 100-packet DropTail queue.",
    );

    page.section("Scenario").pre(
        "[network]\nbottleneck = { rate = \"10Mb\", delay = \"50ms\", queue = \"droptail\", limit = 100 }\n\n\
         [[flow]]\nkind = \"tfrc\"   # <&> escaped\nprofile = \"rfc5348\"\n",
    );

    let mut rnd = noise(1);
    let secs: Vec<f64> = (0..120).map(|i| i as f64 * 0.5).collect();
    let tput: Vec<Vec<(f64, f64)>> = (0..FLOWS.len())
        .map(|f| {
            secs.iter()
                .map(|&t| {
                    let base = [2.1, 1.9, 2.4, 2.2, 1.0][f];
                    let v = base + 0.6 * ((t / 7.0 + f as f64).sin()) + 0.3 * rnd();
                    // A measurement gap in flow 2 (e.g. a link outage).
                    (
                        t,
                        if f == 1 && (20.0..25.0).contains(&t) {
                            f64::NAN
                        } else {
                            v
                        },
                    )
                })
                .collect()
        })
        .collect();

    let s = page.section("Per-flow results");
    let mut t = Table::new([
        "Flow",
        "Throughput (Mbit/s)",
        "Loss rate",
        "Mean delay (ms)",
        "TCP-friendliness",
    ])
    .caption("Averages over the measurement window (10–60 s)");
    for (f, name) in FLOWS.iter().enumerate() {
        let ys: Vec<f64> = tput[f]
            .iter()
            .map(|p| p.1)
            .filter(|v| v.is_finite())
            .collect();
        let mean = ys.iter().sum::<f64>() / ys.len() as f64;
        t.push_row([
            Cell::new(*name),
            Cell::num(mean),
            Cell::num(0.001 * (f + 1) as f64),
            Cell::num(60.0 + 5.0 * f as f64),
            if f < 2 {
                Cell::num(mean / 2.3)
            } else {
                Cell::new("—").class(CellClass::Muted)
            },
        ]);
    }
    table(s, &mut e, t);
    let mut bars = BarChart::new(
        "Mean throughput per flow",
        "flow",
        "throughput (Mbit/s)",
        FLOWS,
    )
    .reference(2.0, "fair share");
    let means: Vec<f64> = tput
        .iter()
        .map(|s| s.iter().map(|p| p.1).filter(|v| v.is_finite()).sum::<f64>() / 115.0)
        .collect();
    let cis = means
        .iter()
        .enumerate()
        .map(|(f, m)| (m - 0.1 - 0.05 * f as f64, m + 0.1 + 0.05 * f as f64))
        .collect();
    bars = bars.series_with_ci("mean over 10 seeds", means, cis);
    fig(
        s,
        &mut e,
        &bars,
        "Grouped bars with 95% CI; the dashed line is the fair share.",
    );

    let s = page.section("Throughput over time");
    let mut chart =
        LineChart::new("Throughput per flow", "time (s)", "throughput (Mbit/s)").step(true);
    for (f, name) in FLOWS.iter().enumerate() {
        chart = chart.series(*name, tput[f].clone());
    }
    fig(
        s,
        &mut e,
        &chart,
        "1 s bins. The gap in tfrc 2 is a measurement outage (NaN bins are not drawn as zero).",
    );

    let s = page.section("Delay distribution");
    let edges: Vec<f64> = (0..=40).map(|i| 50.0 + i as f64 * 2.5).collect();
    let counts = |shift: f64| -> Vec<f64> {
        (0..40)
            .map(|i| (2000.0 * (-((i as f64 - 12.0 - shift) / 6.0).powi(2)).exp()).round())
            .collect()
    };
    let hist = DistributionChart::new(
        "End-to-end delay",
        "delay (ms)",
        DistributionKind::Histogram,
    )
    .binned(FLOWS[0], edges.clone(), counts(0.0))
    .binned(FLOWS[2], edges.clone(), counts(8.0));
    fig(
        s,
        &mut e,
        &hist,
        "Histogram, fraction of packets per 2.5 ms bin.",
    );
    let cdf = DistributionChart::new(
        "End-to-end delay (CDF)",
        "delay (ms)",
        DistributionKind::Cdf,
    )
    .binned(FLOWS[0], edges.clone(), counts(0.0))
    .binned(FLOWS[2], edges, counts(8.0))
    .quantiles(
        "tcp 2 (quantiles only)",
        vec![
            (0.0, 52.0),
            (0.5, 78.0),
            (0.95, 96.0),
            (0.99, 120.0),
            (1.0, 140.0),
        ],
    );
    fig(
        s,
        &mut e,
        &cdf,
        "CDF from the same histograms, and from quantiles.",
    );

    let s = page.section("Queue occupancy");
    let mut rnd = noise(2);
    let q1: Vec<(f64, f64)> = (0..3000)
        .map(|i| {
            (
                i as f64 * 0.02,
                (60.0 + 40.0 * (i as f64 / 300.0).sin() + 10.0 * rnd()).min(100.0),
            )
        })
        .collect();
    let q2: Vec<(f64, f64)> = (0..3000)
        .map(|i| (i as f64 * 0.02, (5.0 * rnd()).floor()))
        .collect();
    let occ = LineChart::new(
        "Bottleneck queue occupancy",
        "time (s)",
        "queue length (packets)",
    )
    .series("r1 → r2 (DropTail, limit 100)", q1)
    .series("r2 → r1", q2)
    .reference(100.0, "limit");
    fig(
        s,
        &mut e,
        &occ,
        "Sampled every 20 ms (3000 points per series, drawn decimated).",
    );

    let s = page.section("TFRC internals");
    let x: Vec<(f64, f64)> = secs
        .iter()
        .map(|&t| (t, 2.0e6 + 4.0e5 * (t / 5.0).sin()))
        .collect();
    let xr: Vec<(f64, f64)> = secs
        .iter()
        .map(|&t| (t, 1.9e6 + 3.0e5 * (t / 5.0 + 0.5).sin()))
        .collect();
    let rates = LineChart::new(
        "Sending rate X and receive rate X_recv",
        "time (s)",
        "rate (bit/s)",
    )
    .series("X", x)
    .series("X_recv", xr);
    fig(s, &mut e, &rates, "tfrc 1");
    let p: Vec<(f64, f64)> = secs
        .iter()
        .map(|&t| {
            (
                t,
                if t < 3.0 {
                    0.0
                } else {
                    0.01 * (1.0 + 0.5 * (t / 9.0).cos())
                },
            )
        })
        .collect();
    let pchart = LineChart::new("Loss event rate p", "time (s)", "p")
        .series("p", p)
        .log_y(true)
        .step(true);
    fig(
        s,
        &mut e,
        &pchart,
        "Log scale; p = 0 before the first loss is left out (see note).",
    );
    let r: Vec<(f64, f64)> = secs
        .iter()
        .map(|&t| (t, 0.1 + 0.02 * (t / 3.0).sin().abs()))
        .collect();
    let rchart = LineChart::new("Round-trip time estimate R", "time (s)", "R (s)")
        .series("R", r)
        .include_zero(false);
    fig(s, &mut e, &rchart, "tfrc 1");
    let none = LineChart::new("Feedback packets (none recorded)", "time (s)", "packets")
        .series("fb", vec![]);
    fig(s, &mut e, &none, "An empty series renders as \"no data\".");

    (page, e)
}

/// A sweep and a paper-reproduction style report: CI bars against a parameter and categories,
/// verdict and comparison tables.
fn paper_report(n: usize) -> (Page, Expect) {
    let mut e = Expect::default();
    let mut page = Page::new(format!("Seed paper {n}: reproduction"));
    page.intro().paragraph(format!(
        "Experiments of paper {n}, 10 seeds each, 95% confidence intervals."
    ));
    page.intro().links([("index.html", "← all papers")]);

    let s = page.section("Claims");
    table(
        s,
        &mut e,
        verdict_table(&[
            VerdictRow {
                claim: "TFRC's throughput is within 20% of TCP's".into(),
                measured: Estimate::with_half_width(0.93, 0.04),
                unit: "ratio".into(),
                verdict: Verdict::Supported,
            },
            VerdictRow {
                claim: "TFRC is smoother than TCP (lower CoV)".into(),
                measured: Estimate::new(0.21, 0.15, 0.3),
                unit: "CoV".into(),
                verdict: Verdict::NotSupported,
            },
            VerdictRow {
                claim: "Throughput collapses at p > 10%".into(),
                measured: Estimate::point(f64::NAN),
                unit: "Mbit/s".into(),
                verdict: Verdict::Contradicted,
            },
        ]),
    );
    table(
        s,
        &mut e,
        comparison_table(&[
            ComparisonRow {
                quantity: "Throughput at p = 1% (Table 2)".into(),
                unit: "Mbit/s".into(),
                paper: 1.62,
                measured: Estimate::with_half_width(1.58, 0.05),
                pass: true,
            },
            ComparisonRow {
                quantity: "Jain's index, 8 flows (Fig. 5)".into(),
                unit: "".into(),
                paper: 0.98,
                measured: Estimate::with_half_width(0.91, 0.02),
                pass: false,
            },
        ]),
    );

    let s = page.section("Sweeps");
    let mut rnd = noise(n as u64);
    let sweep = |mean: &dyn Fn(f64) -> f64, rnd: &mut dyn FnMut() -> f64| -> Vec<ErrorPoint> {
        [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1]
            .iter()
            .map(|&p| ErrorPoint::symmetric(p, mean(p), mean(p) * (0.05 + 0.1 * rnd())))
            .collect()
    };
    let c = ErrorBarChart::new(
        "Normalised throughput against loss rate",
        "loss rate p",
        "throughput / TCP",
    )
    .series("rfc5348", sweep(&|p| 1.0 - p, &mut rnd))
    .series("ns2 profile", sweep(&|p| 0.95 - 2.0 * p, &mut rnd))
    .log_x(true)
    .reference(1.0, "TCP-friendly");
    fig(s, &mut e, &c, "Mean ± 95% CI over 10 seeds.");
    let variants = [
        "rfc5348",
        "ns2",
        "paper 1: faster restart",
        "paper 2: QTFRC",
        "paper 3: 漢字 variant",
    ];
    let c = ErrorBarChart::new(
        "Coefficient of variation by variant",
        "variant",
        "CoV of sending rate",
    )
    .series(
        "dumbbell",
        variants
            .iter()
            .enumerate()
            .map(|(i, v)| ErrorPoint::symmetric(*v, 0.2 + 0.03 * i as f64, 0.02)),
    )
    .series(
        "parking lot",
        variants
            .iter()
            .enumerate()
            .map(|(i, v)| ErrorPoint::symmetric(*v, 0.25 + 0.02 * i as f64, 0.03)),
    );
    fig(s, &mut e, &c, "Categorical x: series are nudged apart.");
    (page, e)
}

/// What the probe returns about the rendered DOM.
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
  const bg = sel => { const el = document.querySelector(sel); return el ? getComputedStyle(el).backgroundColor : null; };
  return {
    svgs: svgs.length,
    drawn: svgs.filter(s => s.getBoundingClientRect().width > 300 && s.querySelectorAll('text').length > 3).length,
    rows: document.querySelectorAll('tbody tr').length,
    tables: document.querySelectorAll('table').length,
    toc: document.querySelectorAll('nav.toc a').length,
    brokenAnchors: [...document.querySelectorAll('a[href^="#"]')]
      .filter(a => !document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1)))).length,
    outside,
    pageOverflow: document.documentElement.scrollWidth > window.innerWidth,
    links: [...document.querySelectorAll('a:not([href^="#"])')].map(a => a.getAttribute('href')),
    title: document.title,
    colours: { supported: bg('td.supported'), notSupported: bg('td.not-supported'), contradicted: bg('td.contradicted'),
               pass: bg('td.pass'), fail: bg('td.fail'), plain: bg('tbody td') },
  };
})()"##;

fn num(v: &Value, key: &str) -> usize {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("probe field {key}: {v}")) as usize
}

/// The checks every report must pass in the browser.
fn assert_renders_cleanly(path: &Path, e: &Expect) -> Value {
    let html = std::fs::read_to_string(path).unwrap();
    for bad in [
        "http://",
        "https://",
        " src=",
        "url(",
        "@import",
        "@font-face",
    ] {
        assert!(!html.contains(bad), "{bad:?} in {}", path.display());
    }
    // One script, inline, admitted by the CSP only through its hash.
    assert_eq!(html.matches("<script").count(), 1, "{}", path.display());
    assert!(html.contains(&format!("<script>{}</script>", report::html::SCRIPT)));
    assert!(html.contains(&format!(
        "script-src &#39;sha256-{}&#39;",
        report::html::SCRIPT_SHA256
    )));
    let load = chromium::load(path, PROBE);
    assert!(
        load.problems().is_empty(),
        "console/log output: {:#?}",
        load.problems()
    );
    assert!(
        load.other_requests().is_empty(),
        "requests: {:?}",
        load.other_requests()
    );
    assert_eq!(
        load.requests,
        std::slice::from_ref(&load.url),
        "only the page itself is loaded"
    );
    let p = &load.probe;
    assert_eq!(num(p, "svgs"), e.svgs, "{p}");
    assert_eq!(
        num(p, "drawn"),
        e.svgs,
        "every chart has a size and labels: {p}"
    );
    assert_eq!(num(p, "rows"), e.rows, "{p}");
    assert_eq!(num(p, "tables"), e.tables, "{p}");
    assert_eq!(num(p, "brokenAnchors"), 0, "{p}");
    assert_eq!(
        p["outside"].as_array().map(Vec::len),
        Some(0),
        "text outside its chart: {}",
        p["outside"]
    );
    assert_eq!(p["pageOverflow"], false, "page scrolls sideways");
    load.probe
}

/// Writes the report, and keeps a copy plus a screenshot in `$TFRCLAB_KEEP_REPORTS` if set
/// (to look at by eye).
fn write_and_keep(page: &Page, dir: &Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    page.write(&path).unwrap();
    if let Some(keep) = std::env::var_os("TFRCLAB_KEEP_REPORTS") {
        let keep = Path::new(&keep);
        page.write(&keep.join(name)).unwrap();
        chromium::screenshot(
            &keep.join(name),
            &keep.join(format!("{name}.png")),
            1100,
            6000,
        );
    }
    path
}

#[test]
fn run_report_renders_without_errors_or_requests() {
    let dir = tempfile::tempdir().unwrap();
    let (page, e) = run_report();
    assert_eq!(e.svgs, 9);
    let path = write_and_keep(&page, dir.path(), "report.html");
    let p = assert_renders_cleanly(&path, &e);
    assert_eq!(num(&p, "toc"), 6, "one TOC entry per section");
    assert_eq!(
        p["title"], "Scenario dumbbell-5 — seed 7 <&> \"quoted\"",
        "escaped title decodes exactly"
    );
}

#[test]
fn index_and_paper_reports_render_with_coloured_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = Page::new("tfrclab: seed paper reproductions");
    let mut t = Table::new(["Paper", "Supported", "Not supported", "Contradicted"]);
    let mut first = None;
    for n in 1..=5 {
        let (page, e) = paper_report(n);
        let name = format!("paper-{n}.html");
        let path = write_and_keep(&page, dir.path(), &name);
        first.get_or_insert((path, e));
        t.push_row([
            Cell::new(format!("Seed paper {n}")).link(name),
            Cell::new("1").class(CellClass::Supported),
            Cell::new("1").class(CellClass::NotSupported),
            Cell::new("1").class(CellClass::Contradicted),
        ]);
    }
    let mut ie = Expect::default();
    table(index.section("Papers"), &mut ie, t);
    let index_path = write_and_keep(&index, dir.path(), "index.html");
    let p = assert_renders_cleanly(&index_path, &ie);
    let links: Vec<&str> = p["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        links,
        [
            "paper-1.html",
            "paper-2.html",
            "paper-3.html",
            "paper-4.html",
            "paper-5.html"
        ]
    );
    for l in links {
        assert!(dir.path().join(l).is_file(), "{l} exists beside index.html");
    }

    let (path, e) = first.unwrap();
    let p = assert_renders_cleanly(&path, &e);
    assert_eq!(p["links"], serde_json::json!(["index.html"]));
    let c = &p["colours"];
    let plain = c["plain"].as_str().unwrap().to_string();
    let all: Vec<&str> = ["supported", "notSupported", "contradicted", "pass", "fail"]
        .iter()
        .map(|k| c[k].as_str().unwrap())
        .collect();
    for (k, v) in ["supported", "notSupported", "contradicted", "pass", "fail"]
        .iter()
        .zip(&all)
    {
        assert_ne!(*v, plain, "{k} cells are coloured");
    }
    assert_ne!(all[0], all[1]);
    assert_ne!(all[1], all[2]);
    assert_ne!(all[0], all[2]);
}

#[test]
fn checker_flags_console_errors_exceptions_and_fetches() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><head><title>bad</title></head><body><p>x</p>\
         <img src=\"https://example.invalid/x.png\" alt=\"\">\
         <script>console.error('deliberate console error'); throw new Error('deliberate boom');</script>\
         </body></html>",
    )
    .unwrap();
    let load = chromium::load(&bad, "document.title");
    assert_eq!(load.probe, "bad");
    assert!(
        load.console
            .iter()
            .any(|m| m == "error: deliberate console error"),
        "{load:#?}"
    );
    assert!(
        load.exceptions
            .iter()
            .any(|m| m.contains("deliberate boom")),
        "{load:#?}"
    );
    assert!(
        load.other_requests()
            .iter()
            .any(|u| u == "https://example.invalid/x.png"),
        "{load:#?}"
    );
    assert!(load.problems().len() >= 2);

    // A report page that tried to fetch something is stopped by its own CSP, and the violation
    // is reported: the same checker would fail such a report.
    let mut page = Page::new("csp");
    page.section("s").paragraph("p");
    let html = page.render().replace(
        "<body>",
        "<body><img src=\"https://example.invalid/y.png\" alt=\"\">",
    );
    let csp = dir.path().join("csp.html");
    std::fs::write(&csp, html).unwrap();
    let load = chromium::load(&csp, "document.title");
    assert!(
        load.problems()
            .iter()
            .any(|m| m.contains("Content Security Policy") && m.contains("example.invalid")),
        "{load:#?}"
    );

    // And a clean page is clean: the checker is not flagging everything.
    let clean = dir.path().join("clean.html");
    std::fs::write(
        &clean,
        "<!DOCTYPE html><html><head><title>ok</title></head><body><p>ok</p></body></html>",
    )
    .unwrap();
    let load = chromium::load(&clean, "document.querySelectorAll('p').length");
    assert_eq!(load.probe, 1);
    assert!(load.problems().is_empty(), "{load:#?}");
    assert_eq!(load.requests, std::slice::from_ref(&load.url));
}
