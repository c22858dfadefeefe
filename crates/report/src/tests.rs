//! Unit tests of the charts, pages and tables: well-formed, escaped, deterministic, total.

use quick_xml::events::Event;
use quick_xml::Reader;

use super::*;

/// Parses `xml` fully: matched tags, one root, valid attributes and entities.
fn assert_well_formed(xml: &str) {
    let mut r = Reader::from_str(xml);
    r.config_mut().check_end_names = true;
    let (mut depth, mut roots) = (0i64, 0);
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => {
                roots += usize::from(depth == 0);
                depth += 1;
                for a in e.attributes() {
                    let a = a.unwrap_or_else(|err| panic!("bad attribute: {err}\n{xml}"));
                    a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .unwrap_or_else(|err| panic!("bad attribute value: {err}"));
                }
            }
            Ok(Event::Empty(e)) => {
                roots += usize::from(depth == 0);
                for a in e.attributes() {
                    let a = a.unwrap_or_else(|err| panic!("bad attribute: {err}\n{xml}"));
                    a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .unwrap_or_else(|err| panic!("bad attribute value: {err}"));
                }
            }
            Ok(Event::End(_)) => depth -= 1,
            // Text arrives decoded; references in it come as `GeneralRef` events.
            Ok(Event::Text(_)) => {}
            // Entity and character references in text: only XML's own and numeric ones.
            Ok(Event::GeneralRef(g)) => {
                let name = g.xml10_content();
                let known = matches!(&*name, "amp" | "lt" | "gt" | "quot" | "apos")
                    || g.resolve_char_ref().ok().flatten().is_some();
                assert!(known, "unknown entity &{name};\n{xml}");
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("not well-formed at {}: {e}\n{xml}", r.buffer_position()),
        }
    }
    assert_eq!(depth, 0, "unclosed elements");
    assert_eq!(roots, 1, "one root element");
}

/// Every property any chart output must have.
fn check_svg(svg: &str) {
    assert_well_formed(svg);
    assert!(
        svg.starts_with("<svg viewBox=\"0 0 720 "),
        "{}",
        &svg[..60.min(svg.len())]
    );
    for bad in ["NaN", "inf", "<script", "http"] {
        assert!(!svg.contains(bad), "{bad:?} in chart output:\n{svg}");
    }
}

const HOSTILE: &str = "</svg><script>alert('x')</script> & \"q\" \u{1} 漢字 — ünïcödé";

fn all_charts(label: &str, pts: Vec<(f64, f64)>) -> Vec<Box<dyn Chart>> {
    let values: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let edges: Vec<f64> = (0..=values.len()).map(|i| i as f64).collect();
    vec![
        Box::new(
            LineChart::new(label, label, label)
                .series(label, pts.clone())
                .reference(1.0, label),
        ),
        Box::new(
            LineChart::new(label, "t", "y")
                .series(label, pts.clone())
                .log_y(true)
                .step(true),
        ),
        Box::new(
            ErrorBarChart::new(label, label, label).series(
                label,
                pts.iter()
                    .map(|&(x, y)| ErrorPoint::symmetric(x, y, 0.1 * y.abs())),
            ),
        ),
        Box::new(
            ErrorBarChart::new(label, "variant", "y")
                .series(
                    label,
                    pts.iter().enumerate().map(|(i, &(_, y))| {
                        ErrorPoint::new(format!("{label} {i}"), y, y - 1.0, y + 1.0)
                    }),
                )
                .log_y(true),
        ),
        Box::new(
            DistributionChart::new(label, label, DistributionKind::Histogram).binned(
                label,
                edges.clone(),
                values.clone(),
            ),
        ),
        Box::new(
            DistributionChart::new(label, label, DistributionKind::Cdf).binned(
                label,
                edges,
                values.clone(),
            ),
        ),
        Box::new(
            DistributionChart::new(label, label, DistributionKind::Cdf)
                .quantiles(label, pts.iter().map(|&(x, y)| (x / 10.0, y)).collect())
                .log_x(true),
        ),
        Box::new(
            BarChart::new(
                label,
                label,
                label,
                (0..pts.len()).map(|i| format!("{label}{i}")),
            )
            .series(label, values.clone())
            .series_with_ci(
                "b",
                values.clone(),
                values.iter().map(|v| (v - 1.0, v + 1.0)).collect(),
            ),
        ),
    ]
}

#[test]
fn escape_handles_markup_quotes_and_control_characters() {
    assert_eq!(escape("a<b>&\"c\"'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;");
    assert_eq!(escape("tab\tnl\n"), "tab\tnl\n");
    assert_eq!(
        escape("x\u{0}y\u{1b}z\u{FFFF}"),
        "x\u{FFFD}y\u{FFFD}z\u{FFFD}"
    );
    assert_eq!(escape("漢字 ü"), "漢字 ü");
}

#[test]
fn every_chart_kind_is_well_formed_on_ordinary_data() {
    let pts: Vec<(f64, f64)> = (0..40)
        .map(|i| (i as f64 * 0.5, 2.0 + (i as f64 / 5.0).sin()))
        .collect();
    for c in all_charts("Throughput (Mbit/s)", pts) {
        let svg = c.to_svg();
        check_svg(&svg);
        assert!(!svg.contains("no data"), "{}: {svg}", c.title());
        assert!(svg.contains("<title>"), "tooltips present");
    }
}

#[test]
fn degenerate_data_never_panics_and_renders_sensibly() {
    let cases: Vec<(&str, Vec<(f64, f64)>)> = vec![
        ("empty", vec![]),
        ("nan", vec![(f64::NAN, f64::NAN), (1.0, f64::NAN)]),
        (
            "unbounded",
            vec![(0.0, f64::INFINITY), (f64::NEG_INFINITY, 1.0)],
        ),
        ("single", vec![(3.0, 7.0)]),
        ("constant", vec![(0.0, 5.0), (1.0, 5.0), (2.0, 5.0)]),
        ("zeros", vec![(0.0, 0.0), (1.0, 0.0)]),
        ("negative", vec![(0.0, -3.0), (1.0, -1.0)]),
        ("huge", vec![(-f64::MAX, f64::MAX), (f64::MAX, -f64::MAX)]),
        ("tiny", vec![(0.0, 1e-300), (1e-300, 2e-300)]),
    ];
    for (name, pts) in cases {
        for c in all_charts(name, pts.clone()) {
            let svg = c.to_svg();
            check_svg(&svg);
        }
    }
    // Nothing drawable says so, rather than drawing an empty frame silently.
    let empty = LineChart::new("t", "x", "y").to_svg();
    assert!(empty.contains(">no data</text>"));
    let nan = LineChart::new("t", "x", "y")
        .series("a", vec![(0.0, f64::NAN)])
        .to_svg();
    assert!(nan.contains(">no data</text>"));
    assert!(nan.contains("a (no data)"), "legend marks the empty series");
    assert!(nan.contains("1 non-finite y values left out"));
}

#[test]
fn hostile_labels_are_escaped_everywhere() {
    let pts = vec![(1.0, 2.0), (2.0, 3.0)];
    for c in all_charts(HOSTILE, pts) {
        let svg = c.to_svg();
        check_svg(&svg);
        assert!(!svg.contains("<script"));
        assert!(
            svg.contains("&lt;/svg&gt;") || svg.contains("&lt;/svg…"),
            "label kept, escaped"
        );
    }
}

#[test]
fn identical_input_gives_identical_bytes() {
    let pts: Vec<(f64, f64)> = (0..500)
        .map(|i| (i as f64, ((i * 7919) % 101) as f64))
        .collect();
    let a: Vec<String> = all_charts("det", pts.clone())
        .iter()
        .map(|c| c.to_svg())
        .collect();
    let b: Vec<String> = all_charts("det", pts).iter().map(|c| c.to_svg()).collect();
    assert_eq!(a, b);
    let page = |charts: &[Box<dyn Chart>]| {
        let mut p = Page::new("det");
        for c in charts {
            p.section(c.title()).figure(c.as_ref(), "caption");
        }
        p.render()
    };
    let charts = all_charts("det", vec![(0.0, 1.0), (1.0, 2.0)]);
    assert_eq!(page(&charts), page(&charts));
}

#[test]
fn nan_breaks_a_line_into_separate_runs() {
    let svg = LineChart::new("t", "x", "y")
        .series(
            "a",
            vec![
                (0.0, 1.0),
                (1.0, 2.0),
                (2.0, f64::NAN),
                (3.0, 2.0),
                (4.0, 1.0),
            ],
        )
        .to_svg();
    // The data path is the one with a tooltip naming the series.
    let path = svg
        .split("<path")
        .find(|p| p.contains("<title>a: 4 points"))
        .expect("series path");
    let d = path
        .split("d=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert_eq!(d.matches('M').count(), 2, "two runs: {d}");
    assert!(svg.contains("1 non-finite y values left out"));
}

#[test]
fn step_lines_use_horizontal_then_vertical_moves() {
    let svg = LineChart::new("t", "x", "y")
        .series("a", vec![(0.0, 1.0), (1.0, 2.0), (2.0, 1.5)])
        .step(true)
        .to_svg();
    let path = svg
        .split("<path")
        .find(|p| p.contains("<title>a: 3 points"))
        .unwrap();
    assert_eq!(path.matches('H').count(), 2);
    assert_eq!(path.matches('V').count(), 2);
    assert!(!path.contains('L'));
}

#[test]
fn log_axis_leaves_out_non_positive_values_and_says_so() {
    let svg = LineChart::new("p over time", "time (s)", "p")
        .series("p", vec![(0.0, 0.0), (1.0, 0.01), (2.0, 0.02), (3.0, -1.0)])
        .log_y(true)
        .to_svg();
    check_svg(&svg);
    assert!(svg.contains("2 non-positive y values left out (log axis)"));
    // Decade ticks are labelled.
    assert!(svg.contains(">0.01</text>"));
}

#[test]
fn huge_series_are_decimated_but_keep_their_extremes() {
    let pts: Vec<(f64, f64)> = (0..200_000)
        .map(|i| (i as f64 / 1000.0, if i == 123_456 { 99.0 } else { 1.0 }))
        .collect();
    let svg = LineChart::new("t", "x", "y").series("a", pts).to_svg();
    check_svg(&svg);
    assert!(svg.len() < 200_000, "bounded size, got {}", svg.len());
    assert!(svg.contains("max 99"), "summary tooltip keeps the spike");
    // The spike reaches the top part of the plot area (y of 99 on a 0..100 axis ≈ top).
    let path = svg
        .split("<path")
        .find(|p| p.contains("<title>a: 200000 points"))
        .unwrap();
    let min_y = path
        .split(['L', 'M'])
        .filter_map(|seg| seg.split_whitespace().nth(1))
        .filter_map(|y| y.trim_end_matches('"').parse::<f64>().ok())
        .fold(f64::INFINITY, f64::min);
    assert!(min_y < 60.0, "spike drawn near the top, min y {min_y}");
}

#[test]
fn error_bars_keep_category_order_and_draw_caps() {
    let c = ErrorBarChart::new("friendliness", "variant", "ratio")
        .series(
            "a",
            vec![
                ErrorPoint::new("rfc5348", 1.0, 0.9, 1.1),
                ErrorPoint::new("ns2", 0.8, 0.7, 0.9),
            ],
        )
        .series(
            "b",
            vec![
                ErrorPoint::new("ns2", 0.85, f64::NAN, f64::NAN),
                ErrorPoint::new("paper 2", 1.2, 1.0, 1.4),
            ],
        )
        .reference(1.0, "TCP-fair");
    let svg = c.to_svg();
    check_svg(&svg);
    let pos = |s: &str| {
        svg.find(&format!(">{s}</text>"))
            .unwrap_or_else(|| panic!("{s} label"))
    };
    assert!(pos("rfc5348") < pos("ns2") && pos("ns2") < pos("paper 2"));
    // Three points with intervals, one without.
    assert_eq!(svg.matches("95% CI").count(), 4);
    assert_eq!(
        svg.matches("<path d=\"M").count(),
        3 + 1,
        "one bar path per interval, and the axes"
    );
    assert!(svg.contains(">TCP-fair</text>"));
}

#[test]
fn numeric_error_bars_connect_means_in_x_order() {
    let svg = ErrorBarChart::new("sweep", "buffer (packets)", "throughput (Mbit/s)")
        .series(
            "tfrc",
            vec![
                ErrorPoint::symmetric(50.0, 2.0, 0.2),
                ErrorPoint::symmetric(10.0, 1.0, 0.1),
            ],
        )
        .log_x(true)
        .to_svg();
    check_svg(&svg);
    // The log axis is fitted to the data (10 to 50), not widened to whole decades.
    assert!(
        svg.contains(">10</text>") && svg.contains(">50</text>") && !svg.contains(">100</text>"),
        "log 1-2-5 ticks fitted to the data"
    );
    assert_eq!(
        svg.matches("stroke-linejoin").count(),
        1,
        "one connecting line"
    );
}

#[test]
fn histogram_draws_one_rect_per_valid_bin() {
    let c = DistributionChart::new("delay", "delay (ms)", DistributionKind::Histogram)
        .binned(
            "f1",
            vec![0.0, 10.0, 20.0, 30.0, 40.0],
            vec![5.0, f64::NAN, 10.0, 5.0],
        )
        .binned("f2", vec![0.0, 10.0], vec![1.0, 2.0])
        .quantiles("f3", vec![(0.5, 12.0)]);
    let svg = c.to_svg();
    check_svg(&svg);
    assert_eq!(svg.matches("<title>f1 — delay (ms) [").count(), 3);
    assert_eq!(svg.matches("<title>f2 — delay (ms) [").count(), 1);
    assert!(
        svg.contains("(50.00%)"),
        "normalised: 10 of 20 packets in one bin"
    );
    assert!(svg.contains("2 invalid bins or quantiles left out"));
    assert!(svg.contains("f3: only quantiles given"));
    assert!(svg.contains("f3 (no data)"));
    assert!(svg.contains(">fraction per bin</text>"));
    let raw = c.clone().normalize(false).to_svg();
    assert!(raw.contains(">count per bin</text>"));
}

/// The y pixel of every vertex of the path whose tooltip starts with `name`.
fn path_ys(svg: &str, tooltip_start: &str) -> Vec<f64> {
    let path = svg
        .split("<path")
        .find(|p| p.contains(&format!("<title>{tooltip_start}")))
        .expect("path");
    let d = path
        .split("d=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    d.split(['L', 'M'])
        .filter_map(|seg| seg.split_whitespace().nth(1))
        .map(|y| y.parse::<f64>().unwrap())
        .collect()
}

#[test]
fn cdf_from_bins_rises_from_zero_to_one() {
    let svg = DistributionChart::new("delay", "delay (ms)", DistributionKind::Cdf)
        .binned("f1", vec![10.0, 20.0, 30.0], vec![1.0, 3.0])
        .to_svg();
    check_svg(&svg);
    let ys = path_ys(&svg, "f1");
    assert_eq!(ys.len(), 3);
    // SVG y grows downwards: the CDF's pixel y must fall monotonically, from the bottom (0)
    // to the top (1) of the plot area, and 1/4 of the way after the first bin.
    assert!(ys.windows(2).all(|w| w[1] < w[0]));
    let (bottom, top) = (ys[0], ys[2]);
    assert!(((bottom - ys[1]) / (bottom - top) - 0.25).abs() < 0.01);
}

#[test]
fn cdf_from_quantiles_marks_each_quantile() {
    let svg = DistributionChart::new("delay", "delay (ms)", DistributionKind::Cdf)
        .quantiles(
            "f1",
            vec![
                (0.99, 80.0),
                (0.5, 40.0),
                (0.95, 60.0),
                (1.5, 1.0),
                (0.9, f64::NAN),
            ],
        )
        .to_svg();
    check_svg(&svg);
    for label in ["p50 = 40", "p95 = 60", "p99 = 80"] {
        assert!(svg.contains(label), "{label}");
    }
    assert!(svg.contains("2 invalid bins or quantiles left out"));
    let ys = path_ys(&svg, "f1");
    assert!(
        ys.windows(2).all(|w| w[1] < w[0]),
        "sorted by value: {ys:?}"
    );
}

#[test]
fn bars_one_per_finite_value_with_na_markers() {
    let c = BarChart::new(
        "throughput per flow",
        "flow",
        "throughput (Mbit/s)",
        ["tfrc 1", "tfrc 2", "tcp 1"],
    )
    .series_with_ci(
        "mean",
        vec![1.0, f64::NAN, 2.5],
        vec![(0.9, 1.1), (0.0, 0.0), (2.0, 3.0)],
    )
    .series("paper", vec![1.2, 1.1, 2.0, 9.0]);
    let svg = c.to_svg();
    check_svg(&svg);
    assert_eq!(
        svg.matches("<rect x=").count(),
        5 + 2,
        "5 bars and 2 legend swatches"
    );
    assert!(svg.contains(">n/a</text>"));
    assert!(svg.contains("mean — tcp 1: 2.5 (95% CI 2, 3)"));
    assert!(svg.contains("1 values beyond the last category left out"));
    assert!(svg.contains(">2.5</text>"), "value labels");
    // Zero is on the axis: bars start from it.
    assert!(svg.contains(">0</text>"));
}

#[test]
fn negative_bars_hang_below_zero() {
    let svg = BarChart::new("delta", "", "Δ (%)", ["a", "b"])
        .series("", vec![-2.0, 3.0])
        .to_svg();
    check_svg(&svg);
    assert!(svg.contains(">-2</text>") || svg.contains(">-2.0</text>"));
    assert!(
        !svg.contains("<rect x=\"3"),
        "no legend for one unnamed series"
    );
}

#[test]
fn long_category_labels_are_rotated_and_truncated() {
    let cats: Vec<String> = (0..12)
        .map(|i| format!("a rather long variant name number {i}"))
        .collect();
    let svg = BarChart::new("t", "variant", "y", cats.clone())
        .series("s", (0..12).map(f64::from).collect())
        .to_svg();
    check_svg(&svg);
    assert!(svg.contains("rotate(-35"));
    assert!(svg.contains("…"), "truncated");
    assert!(
        svg.contains(&format!("<title>{}</title>", cats[11])),
        "full label in tooltip"
    );
}

#[test]
fn standalone_svg_gets_namespace_and_declaration() {
    let s = standalone_svg(
        &LineChart::new("t", "x", "y")
            .series("a", vec![(0.0, 1.0)])
            .to_svg(),
    );
    assert!(s.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox="));
    assert_well_formed(s.split_once('\n').unwrap().1);
}

fn sample_page() -> Page {
    let mut p = Page::new(format!("Report {HOSTILE}"));
    p.intro().paragraph("intro <b>not bold</b>");
    p.section("Scenario").pre("[link]\nrate = \"10Mb\" # <&>");
    let s = p.section("Flows");
    s.table(
        Table::new(["flow", "throughput", "verdict"])
            .caption("per flow")
            .row([
                Cell::new("tfrc <1>").title("t\"ip"),
                Cell::num(1.5e6),
                Verdict::Supported.cell(),
            ])
            .row([Cell::new("short row").link("other.html?a=1&b=2")]),
    );
    s.subsection("Details").paragraph("nested");
    p.section("Charts").figure(
        &LineChart::new("q", "t (s)", "packets").series("q", vec![(0.0, 1.0)]),
        "cap & tion",
    );
    p.section("Scenario")
        .links([("index.html", "back to index")]);
    p
}

#[test]
fn page_escapes_all_text_and_is_self_contained() {
    let html = sample_page().render();
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    // One script, inline (no src), admitted by the CSP through its hash and nothing else.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains(&format!("<script>{}</script>", html::SCRIPT)));
    assert!(html.contains(&format!(
        "script-src &#39;sha256-{}&#39;",
        html::SCRIPT_SHA256
    )));
    assert!(!html.contains("unsafe-eval") && !html.contains("script-src &#39;unsafe-inline"));
    assert!(!html.contains("<b>"));
    assert!(html.contains("intro &lt;b&gt;not bold&lt;/b&gt;"));
    assert!(html.contains("rate = &quot;10Mb&quot; # &lt;&amp;&gt;"));
    assert!(html.contains("<td title=\"t&quot;ip\">tfrc &lt;1&gt;</td>"));
    assert!(html.contains("<a href=\"other.html?a=1&amp;b=2\">short row</a>"));
    assert!(html.contains("<figcaption>cap &amp; tion</figcaption>"));
    assert!(html.contains("Content-Security-Policy\" content=\"default-src &#39;none&#39;"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no external URL"
    );
    // Short rows are padded to the header's width.
    assert!(html.contains("short row</a></td><td></td><td></td></tr>"));
    assert!(html.contains("<td class=\"supported\">✓ supported</td>"));
    assert!(html.contains("<td class=\"num\">1.5M</td>"));
}

#[test]
fn toc_links_every_heading_to_a_unique_id() {
    let html = sample_page().render();
    assert!(html.contains("<nav class=\"toc\">"));
    let ids: Vec<&str> = html
        .split(" id=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "s1-scenario",
            "s2-flows",
            "s2.1-details",
            "s3-charts",
            "s4-scenario"
        ]
    );
    for id in &ids {
        assert!(
            html.contains(&format!("<a href=\"#{id}\">")),
            "toc entry for {id}"
        );
    }
    let mut one = Page::new("one");
    one.section("only");
    assert!(!one.render().contains("class=\"toc\""));
    one.toc(true);
    assert!(one.render().contains("class=\"toc\""));
}

#[test]
fn page_writes_to_a_new_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/report.html");
    let page = sample_page();
    page.write(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), page.render());
}

#[test]
fn verdict_table_colours_and_labels() {
    let t = verdict_table(&[
        VerdictRow {
            claim: "TFRC is TCP-friendly".into(),
            measured: Estimate::with_half_width(0.93, 0.02),
            unit: "".into(),
            verdict: Verdict::Supported,
        },
        VerdictRow {
            claim: "smoother".into(),
            measured: Estimate::point(f64::NAN),
            unit: "CoV".into(),
            verdict: Verdict::Contradicted,
        },
        VerdictRow {
            claim: "c".into(),
            measured: Estimate::new(1.0, 1.2, 0.8),
            unit: "".into(),
            verdict: Verdict::NotSupported,
        },
    ]);
    assert_eq!(t.rows.len(), 3);
    assert_eq!(t.rows[0][1].text, "0.93 [0.91, 0.95]");
    assert_eq!(t.rows[1][1].text, "no data");
    assert_eq!(t.rows[2][1].text, "1 [0.8, 1.2]", "bounds ordered");
    assert_eq!(t.rows[1][3].class, Some(CellClass::Contradicted));
    assert_eq!(t.rows[2][3].text, "– not supported");
}

#[test]
fn comparison_table_computes_differences_and_never_passes_missing_data() {
    let t = comparison_table(&[
        ComparisonRow {
            quantity: "x".into(),
            unit: "Mbit/s".into(),
            paper: 2.0,
            measured: Estimate::with_half_width(2.1, 0.1),
            pass: true,
        },
        ComparisonRow {
            quantity: "y".into(),
            unit: "".into(),
            paper: 0.0,
            measured: Estimate::point(-0.5),
            pass: false,
        },
        ComparisonRow {
            quantity: "z".into(),
            unit: "".into(),
            paper: 1.0,
            measured: Estimate::point(f64::NAN),
            pass: true,
        },
    ]);
    assert_eq!(t.rows[0][4].text, "+0.1 (+5.0%)");
    assert_eq!(t.rows[0][5].class, Some(CellClass::Pass));
    assert_eq!(t.rows[1][4].text, "-0.5");
    assert_eq!(t.rows[1][5].class, Some(CellClass::Fail));
    assert_eq!(t.rows[2][4].text, "n/a");
    assert_eq!(t.rows[2][5].text, "✗ fail");
}

#[test]
fn csp_hash_is_the_scripts_sha256() {
    use base64ct::Encoding;
    use sha2::Digest;
    let digest = sha2::Sha256::digest(html::SCRIPT.as_bytes());
    assert_eq!(
        base64ct::Base64::encode_string(&digest),
        html::SCRIPT_SHA256,
        "update SCRIPT_SHA256 after editing SCRIPT"
    );
}

fn forest_rows() -> Vec<ForestRow> {
    let row = |label: &str, e: Estimate, side, reference, claimed, verdict| ForestRow {
        group: "seed-00x".into(),
        label: label.into(),
        tooltip: format!("{label} in the paper's words {HOSTILE}"),
        measured: e,
        unit: "kb/s".into(),
        side,
        reference,
        claimed,
        verdict,
    };
    vec![
        row(
            "above",
            Estimate::new(2.0, 1.5, 2.5),
            ClaimSide::Above,
            0.0,
            Some(2.2),
            Verdict::Supported,
        ),
        row(
            "below",
            Estimate::new(0.95, 0.9, 1.0),
            ClaimSide::Below,
            0.9,
            None,
            Verdict::Contradicted,
        ),
        row(
            "within",
            Estimate::new(3100.0, 2900.0, 3300.0),
            ClaimSide::Within(291.7),
            2917.0,
            None,
            Verdict::NotSupported,
        ),
        row(
            "no interval",
            Estimate::point(1.0),
            ClaimSide::Above,
            0.0,
            None,
            Verdict::NotSupported,
        ),
        row(
            "no data",
            Estimate::point(f64::NAN),
            ClaimSide::Above,
            f64::NAN,
            None,
            Verdict::NotSupported,
        ),
    ]
}

#[test]
fn forest_plot_has_one_mark_per_claim_coloured_and_labelled_by_verdict() {
    let rows = forest_rows();
    let svg = ForestPlot::new("Claims", rows.clone()).to_svg();
    assert_well_formed(&svg);
    for bad in ["NaN", "inf", "<script", "http"] {
        assert!(!svg.contains(bad), "{bad:?} in {svg}");
    }
    assert!(!svg.contains("</svg><script>"), "hostile text escaped");
    assert_eq!(svg.matches("class=\"claim-mark\"").count(), rows.len());
    assert_eq!(svg.matches("class=\"claim-row\"").count(), rows.len());
    // The verdict is a word and a shape as well as a colour.
    for v in [
        Verdict::Supported,
        Verdict::NotSupported,
        Verdict::Contradicted,
    ] {
        assert!(
            svg.matches(v.label()).count() >= 2,
            "{} in a row and the key",
            v.label()
        );
    }
    assert!(svg.contains("<circle class=\"claim-mark\""));
    assert!(svg.contains("<rect class=\"claim-mark\""));
    assert!(svg.contains("<path class=\"claim-mark\""));
    // The region of the "within" claim is the band 2917 ± 291.7, and the paper's value a diamond.
    assert!(svg.contains("claimed region: = 2917 ± 291.7"));
    assert!(svg.contains("the paper&#39;s claimed value: 2917"));
    assert!(svg.contains("the paper&#39;s claimed value: 2.2"));
    assert!(svg.contains("measured [95% CI]") && svg.contains("3100 [2900, 3300] kb/s"));
    // One group heading for the shared group.
    assert_eq!(svg.matches(">seed-00x</text>").count(), 1);
    assert_eq!(
        svg,
        ForestPlot::new("Claims", rows).to_svg(),
        "deterministic"
    );
    let empty = ForestPlot::new("none", vec![]).to_svg();
    assert_well_formed(&empty);
    assert!(empty.contains("no claims"));
}

#[test]
fn percentages_read_as_papers_print_them() {
    assert_eq!(crate::fmt_pct_auto(22.0), "+22%");
    assert_eq!(crate::fmt_pct_auto(-0.3672), "\u{2212}0.37%");
    assert_eq!(
        crate::fmt_pct(0.01, 1),
        "0.0%",
        "no sign on what rounds to zero"
    );
    assert_eq!(crate::fmt_pct_auto(0.0), "0%");
    // Decimals follow the interval's width: two significant digits of it.
    assert_eq!(
        Estimate::new(-0.4, -1.2, 0.5).percent_text(),
        "\u{2212}0.4% [\u{2212}1.2%, +0.5%]"
    );
    assert_eq!(
        Estimate::new(22.4, 10.0, 35.0).percent_text(),
        "+22% [+10%, +35%]"
    );
    assert_eq!(
        Estimate::new(0.051, 0.041, 0.062).text_with_unit(crate::PERCENT),
        "+0.051% [+0.041%, +0.062%]"
    );
    assert_eq!(
        Estimate::new(2.0, 1.5, 2.5).text_with_unit("kb/s"),
        "2 [1.5, 2.5] kb/s"
    );
}

/// Issue 32: a group's claims in one unit share one scale with an axis; relative changes read
/// in percent; the measured values are never cut; a quick run marks every verdict.
#[test]
fn forest_rows_share_a_scale_per_group_and_unit_and_values_are_whole() {
    let row = |group: &str, label: &str, e: Estimate, unit: &str| ForestRow {
        group: group.into(),
        label: label.into(),
        tooltip: String::new(),
        measured: e,
        unit: unit.into(),
        side: ClaimSide::Above,
        reference: 0.0,
        claimed: Some(22.0),
        verdict: Verdict::NotSupported,
    };
    let long = Estimate::new(-123456.789, -234567.891, -12345.6789);
    let rows = vec![
        row("a", "p1", Estimate::new(-0.4, -1.2, 0.5), crate::PERCENT),
        row("a", "p2", Estimate::new(60.0, 38.0, 82.0), crate::PERCENT),
        row("a", "k", long, "kb/s"),
        row("b", "p3", Estimate::new(5.0, 1.0, 9.0), crate::PERCENT),
    ];
    let svg = ForestPlot::new("Claims", rows)
        .provisional("(quick): 3 seeds")
        .to_svg();
    assert_well_formed(&svg);
    // Three panels (a/%, a/kb/s, b/%), each with its axis.
    assert_eq!(svg.matches("class=\"claim-axis\"").count(), 3);
    assert_eq!(svg.matches(">percent</text>").count(), 2);
    assert!(svg.contains(">+20%</text>"), "percent ticks: {svg}");
    // p1 and p2 share a scale: their reference lines (0%) are at the same x.
    let x_of = |label: &str| -> String {
        let row = svg
            .split("class=\"claim-row\"")
            .find(|r| r.contains(&format!(">{label}</text>")))
            .unwrap();
        let at = row.find("reference 0%").unwrap();
        let line = &row[..at];
        let x = line.rfind("x1=\"").unwrap();
        line[x + 4..].split('"').next().unwrap().to_string()
    };
    assert_eq!(x_of("p1"), x_of("p2"), "one scale per group and unit");
    assert!(svg.contains("\u{2212}0.4% [\u{2212}1.2%, +0.5%]"));
    assert!(svg.contains("(claimed +22%)"));
    assert!(
        svg.contains(&long.text_with_unit("kb/s")),
        "the longest value whole: {}",
        long.text_with_unit("kb/s")
    );
    for part in svg.split("class=\"claim-measured\"").skip(1) {
        let text = &part[part.find('>').unwrap()..part.find("</text>").unwrap()];
        assert!(!text.contains('…'), "cut: {text}");
    }
    assert_eq!(svg.matches("not supported (quick)</text>").count(), 4);
    assert!(svg.contains("(quick): 3 seeds"));
}
