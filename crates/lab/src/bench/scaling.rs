//! `tfrclab bench scaling`: the dumbbell grid ([`super::grid`]) benchmarked case by case, with a
//! table, `scaling.json`, `scaling.csv` and an HTML report of the plots (cost per packet-hop
//! and peak memory against the number of flows, one line per bandwidth and mix).

use std::path::Path;

use serde::Serialize;

use super::grid::{bandwidth_text, Case};
use super::{bench_scenario, Options, ScenarioBench};
use report::{Cell, ErrorBarChart, ErrorPoint, Page, Table};

/// One benchmarked case.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// Its benchmark.
    pub bench: ScenarioBench,
}

/// Write every case's scenario file into `dir` (created if needed); returns the paths.
pub fn write_scenarios(cases: &[Case], dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut out = Vec::with_capacity(cases.len());
    for c in cases {
        let p = dir.join(format!("{}.toml", c.name()));
        std::fs::write(&p, c.toml())?;
        out.push(p);
    }
    Ok(out)
}

/// Benchmark every case (its file written under `out/scenarios/`).
pub fn run(
    cases: &[Case],
    out: &Path,
    opts: &Options,
    progress: &mut dyn FnMut(String),
) -> anyhow::Result<Vec<CaseResult>> {
    let files = write_scenarios(cases, &out.join("scenarios"))?;
    let mut results = Vec::with_capacity(cases.len());
    for (i, (case, file)) in cases.iter().zip(&files).enumerate() {
        let n = cases.len();
        let bench = bench_scenario(file, opts, &mut |s| {
            progress(format!("[{}/{n}] {s}", i + 1))
        })?;
        results.push(CaseResult {
            case: case.clone(),
            bench,
        });
    }
    Ok(results)
}

/// The CSV: one row per case.
pub fn csv(results: &[CaseResult]) -> String {
    let mut s = String::from(
        "name,flows,bandwidth_bps,mix,duration_s,events,packet_hops,wall_s,cpu_s,sim_wall_s,\
         hops_per_s,ns_per_hop,max_rss_mib,ns2_wall_s,ns2_max_rss_mib,ns2_over_tfrclab,ns2_error\n",
    );
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    for r in results {
        let (c, b, f) = (&r.case, &r.bench, &r.bench.figures);
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            b.name,
            c.flows,
            c.bandwidth_bps,
            c.mix.name(),
            c.duration_s,
            b.events,
            b.packet_hops,
            f.wall_s.median,
            f.cpu_s.median,
            f.sim_wall_s.median,
            f.hops_per_s,
            f.ns_per_hop,
            f.max_rss_mib.median,
            opt(f.ns2_wall_s.map(|w| w.median)),
            opt(f.ns2_max_rss_mib.map(|w| w.median)),
            opt(f.ratio.map(|w| w.median)),
            // One line, quoted, so that the field stays one CSV field.
            b.ns2_error.as_deref().map_or(String::new(), |e| format!(
                "\"{}\"",
                e.lines().next().unwrap_or_default().replace('"', "'")
            )),
        ));
    }
    s
}

/// One series per (bandwidth, mix), x = flows.
fn series(
    results: &[CaseResult],
    y: impl Fn(&ScenarioBench) -> Option<(f64, f64, f64)>,
) -> Vec<(String, Vec<ErrorPoint>)> {
    let mut out: Vec<(String, Vec<ErrorPoint>)> = Vec::new();
    for r in results {
        let name = format!(
            "{} {}",
            bandwidth_text(r.case.bandwidth_bps),
            r.case.mix.name()
        );
        let Some((mid, lo, hi)) = y(&r.bench) else {
            continue;
        };
        let p = ErrorPoint::new(r.case.flows as f64, mid, lo, hi);
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(p),
            None => out.push((name, vec![p])),
        }
    }
    out
}

fn chart(
    title: &str,
    y_label: &str,
    s: Vec<(String, Vec<ErrorPoint>)>,
    log_y: bool,
) -> ErrorBarChart {
    let mut c = ErrorBarChart::new(title, "flows (log)", y_label)
        .log_x(true)
        .log_y(log_y);
    for (name, pts) in s {
        c = c.series(name, pts);
    }
    c
}

/// The HTML report: the table and the plots.
pub fn report(results: &[CaseResult], machine: &str, command: &str) -> Page {
    let mut page = Page::new("tfrclab bench scaling");
    page.intro()
        .paragraph(format!("Machine: {machine}. Command: {command}"))
        .paragraph(
            "Dumbbells with N flows over one bottleneck, 10 simulated seconds, no trace. Each \
             case runs as a fresh process; bars span the repetitions (min–max).",
        );
    // Cost per hop: the event loop's wall time per packet-hop; flat in N means the scheduler and
    // the per-packet path do not grow with the number of flows.
    let per_hop = series(results, |b| {
        let h = b.packet_hops.max(1) as f64 * 1e-9;
        let w = &b.figures.sim_wall_s;
        Some((w.median / h, w.min / h, w.max / h))
    });
    let rss = series(results, |b| {
        let r = &b.figures.max_rss_mib;
        Some((r.median, r.min, r.max))
    });
    let hops = series(results, |b| {
        let h = b.packet_hops as f64 / 1e6;
        let w = &b.figures.sim_wall_s;
        Some((h / w.median, h / w.max, h / w.min))
    });
    let ratio = series(results, |b| {
        b.figures.ratio.map(|r| (r.median, r.min, r.max))
    });
    let s = page.section("Plots");
    s.figure(
        &chart(
            "Cost per packet-hop",
            "ns per packet-hop (event loop)",
            per_hop,
            false,
        ),
        "Event-loop wall time / packet-hops. Flat in N: cost follows packets, not flows.",
    );
    s.figure(
        &chart("Speed", "M packet-hops/s (event loop)", hops, false),
        "Packet-hops per second of event-loop wall time.",
    );
    s.figure(
        &chart("Peak memory", "peak RSS (MiB)", rss, true),
        "Peak resident memory of the whole process.",
    );
    if ratio.iter().any(|(_, v)| !v.is_empty()) {
        s.figure(
            &chart(
                "NS-2 / tfrclab",
                "wall-time ratio (whole process)",
                ratio,
                true,
            ),
            "Median over the A B pairs of NS-2's wall time over tfrclab's.",
        );
    }
    let mut t = Table::new([
        "case",
        "events",
        "packet-hops",
        "wall s (process)",
        "M hops/s (loop)",
        "ns/hop",
        "RSS MiB",
        "NS-2 wall s",
        "NS-2 RSS MiB",
        "NS-2/tfrclab",
    ]);
    for r in results {
        let (b, f) = (&r.bench, &r.bench.figures);
        let opt = |x: Option<f64>, d: usize| {
            x.map_or_else(|| Cell::new("-"), |v| Cell::new(format!("{v:.d$}")))
        };
        t.push_row([
            Cell::new(b.name.clone()),
            Cell::num(b.events as f64),
            Cell::num(b.packet_hops as f64),
            Cell::new(format!("{:.3}", f.wall_s.median)),
            Cell::new(format!("{:.2}", f.hops_per_s / 1e6)),
            Cell::new(format!("{:.0}", f.ns_per_hop)),
            Cell::new(format!("{:.1}", f.max_rss_mib.median)),
            opt(f.ns2_wall_s.map(|w| w.median), 3),
            opt(f.ns2_max_rss_mib.map(|w| w.median), 1),
            match &b.ns2_error {
                Some(e) => Cell::new(e.lines().next().unwrap_or_default().to_string()),
                None => opt(f.ratio.map(|w| w.median), 1),
            },
        ]);
    }
    page.section("Cases").table(t);
    page
}
