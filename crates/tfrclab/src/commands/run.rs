//! `tfrclab run`: simulate one scenario and write its summary, CSVs and report.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use netsim::trace::TraceFormat;

use crate::EXIT_BAD_INPUT;
use lab::output::OutputDir;
use lab::runner::{simulate, RunOptions};
use lab::{run_report, summary};
use scenario::{overrides, Scenario};

/// Arguments of `tfrclab run`.
#[derive(Parser, Debug)]
pub struct Args {
    /// The scenario file (TOML; see docs/scenario.md).
    pub scenario: PathBuf,
    /// Output folder (default: `out/<scenario name>`). Written only when the run succeeds.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Also write a packet trace: `ns2` (NS-2 trace-all format, trace.tr) or `csv` (trace.csv).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub trace: Option<TraceKind>,
    /// Change one scenario value before running, e.g. `--set flows.udp1.rate=2Mbps`.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = overrides::parse_set)]
    pub sets: Vec<(String, String)>,
}

/// Packet trace formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TraceKind {
    /// NS-2 trace-all lines.
    Ns2,
    /// CSV with exact nanosecond times and drop causes.
    Csv,
}

/// Load a scenario, printing its errors and returning the exit code on failure.
pub fn load(path: &Path, sets: &[(String, String)]) -> Result<Scenario, ExitCode> {
    Scenario::load_with(path, sets).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_BAD_INPUT)
    })
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let s = match load(&args.scenario, &args.sets) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(lab::output::file_stem(&s.name)));
    let out = match OutputDir::create(&dir) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    let trace = args.trace.map(|k| match k {
        TraceKind::Ns2 => (out.path("trace.tr"), TraceFormat::Ns2),
        TraceKind::Csv => (out.path("trace.csv"), TraceFormat::Csv),
    });
    let opts = RunOptions {
        seed: args.seed,
        trace,
        record_delays: false,
    };
    let result = simulate(&s, &opts)?;
    let sum = summary::summarize(&s, &result);
    let rows = summary::timeseries(&s, &result);
    summary::write_summary_json(&out.path("summary.json"), &sum)?;
    summary::write_flows_csv(&out.path("flows.csv"), &sum.flows)?;
    summary::write_timeseries_csv(&out.path("timeseries.csv"), &rows)?;
    run_report::run_report(&s, &sum, &rows, &result).write(&out.path("report.html"))?;
    let dir = out.commit()?;
    print!("{}", text_table(&sum));
    print!("{}", lab::variant_metrics::text(&sum));
    println!(
        "wrote {}/{{summary.json, flows.csv, timeseries.csv, report.html}}",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The per-flow table as aligned text.
pub fn text_table(sum: &summary::Summary) -> String {
    let header = [
        "flow",
        "kind",
        "sent",
        "recv",
        "drop",
        "thr Mb/s",
        "loss",
        "PDR",
        "delay ms",
        "p95 ms",
        "jitter ms",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for f in &sum.flows {
        rows.push(vec![
            f.name.clone(),
            f.kind.clone(),
            f.sent_packets.to_string(),
            f.received_packets.to_string(),
            f.dropped_packets.to_string(),
            format!("{:.4}", f.throughput_bps / 1e6),
            format!("{:.4}", f.loss_rate),
            format!("{:.4}", f.pdr),
            format!("{:.3}", f.delay_mean_s * 1e3),
            format!("{:.3}", f.delay_p95_s * 1e3),
            format!("{:.3}", f.jitter_mean_s * 1e3),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c < 2 {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    for (k, j) in &sum.fairness.jain {
        out.push_str(&format!("Jain's index ({k}): {j:.4}\n"));
    }
    for f in &sum.fairness.friendliness {
        if let Some(r) = f.ratio {
            let vs = match f.tcp_flows.len() {
                1..=3 => f.tcp_flows.join(", "),
                n => format!("{n} TCP flows"),
            };
            out.push_str(&format!(
                "friendliness {}: {r:.3} (vs {vs} on {})\n",
                f.flow, f.bottleneck
            ));
        }
    }
    out
}
