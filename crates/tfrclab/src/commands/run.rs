//! `tfrclab run`: simulate one scenario and write its summary, CSVs and report.

use std::fmt::Write as _;

use lab::summary::RedSummary;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use netsim::trace::TraceFormat;

use crate::EXIT_BAD_INPUT;
use lab::output::OutputDir;
use lab::runner::{simulate_with_progress, RunOptions, SimProgress};
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
    /// Also write pcap files into DIR, one per link, both directions, with real IPv4/TCP/UDP
    /// headers and TFRC's wire format, for Wireshark (docs/wireshark.md).
    #[arg(long, value_name = "DIR")]
    pub pcap: Option<PathBuf>,
    /// With --pcap: capture only this link (by name; repeat for more). Default: every link.
    #[arg(long = "pcap-link", value_name = "NAME", requires = "pcap")]
    pub pcap_links: Vec<String>,
    /// Write no report.html (the data files only): for large runs and scripts.
    #[arg(long)]
    pub no_report: bool,
    /// No progress on stderr (by default a bar on a terminal; elsewhere, once a run has taken
    /// 5 s, a line every 5 s).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Flows the terminal table lists; the rest are in flows.csv.
pub const TERMINAL_FLOWS: usize = 40;

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
    // Refused before the output folder exists: bad input writes nothing.
    if let Err(e) = lab::runner::check_bins(&s) {
        eprintln!("error: {}: {e}", args.scenario.display());
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let pcap = args.pcap.as_ref().map(|d| lab::pcap::PcapOptions {
        dir: d.clone(),
        links: args.pcap_links.clone(),
    });
    if let Some(p) = &pcap {
        if let Err(e) = lab::pcap::selected_links(&s, p) {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    }
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
    let sink = match &pcap {
        Some(p) => match lab::pcap::PcapSink::create(&s, &p.placed(&out)) {
            Ok(sink) => Some(Box::new(sink) as Box<dyn netsim::trace::TraceSink>),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
        },
        None => None,
    };
    // How the drops fall on the flows (docs/phase-effects.md), beside any pcap writer.
    let (drop_sink, drops) = lab::drops::DropCounter::new(&s, s.warmup);
    let sink = Some(lab::drops::beside(sink, drop_sink));
    let mut progress = lab::parallel::RunProgress::new(args.quiet);
    progress.phase(&format!(
        "building the network ({} flows, {} links)",
        s.flows.len(),
        s.links.len()
    ));
    let result = simulate_with_progress(&s, &opts, sink, &mut |p| match p {
        SimProgress::Built { .. } => progress.simulating(Duration::ZERO, s.duration, 0),
        SimProgress::Running {
            now,
            duration,
            events,
        } => progress.simulating(now, duration, events),
    })?;
    progress.phase("summarising");
    let sum = summary::summarize(&s, &result);
    let rows = summary::timeseries(&s, &result);
    progress.phase("writing summary.json and the CSV files");
    summary::write_data_files(&out, &sum, &rows)?;
    let mut written: Vec<&str> = summary::DATA_FILES.iter().map(|(f, _)| *f).collect();
    let drop_shares = drops.borrow().shares();
    lab::drops::write_csv(&out.path("drops.csv"), &drop_shares)?;
    written.push("drops.csv");
    if !args.no_report {
        progress.phase("writing report.html");
        let mut page = run_report::run_report(&s, &sum, &rows, &result);
        let mut files = summary::DATA_FILES.to_vec();
        match args.trace {
            Some(TraceKind::Ns2) => {
                files.push(("trace.tr", "trace.tr: packet trace (NS-2 format)"))
            }
            Some(TraceKind::Csv) => files.push(("trace.csv", "trace.csv: packet trace")),
            None => {}
        }
        page.intro().links(files);
        page.write(&out.path("report.html"))?;
        written.push("report.html");
    }
    progress.finish();
    let dir = out.commit()?;
    print!("{}", text_table(&sum));
    print!("{}", variant_text(&sum));
    match args.trace {
        Some(TraceKind::Ns2) => written.push("trace.tr"),
        Some(TraceKind::Csv) => written.push("trace.csv"),
        None => {}
    }
    for d in drop_shares.iter().filter(|d| d.concentrated) {
        println!("note: {}", d.sentence());
    }
    println!("wrote {}/{{{}}}", dir.display(), written.join(", "));
    if let Some(p) = &args.pcap {
        println!(
            "wrote {}/*.pcap (one per link; open with Wireshark, docs/wireshark.md)",
            p.display()
        );
    }
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
    for f in sum.flows.iter().take(TERMINAL_FLOWS) {
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
    let mut out = report::text::aligned(&rows, &[0, 1]);
    if sum.flows.len() > TERMINAL_FLOWS {
        let _ = writeln!(
            out,
            "… and {} more flows (every flow is in flows.csv)",
            sum.flows.len() - TERMINAL_FLOWS
        );
    }
    for (k, j) in &sum.fairness.jain {
        out.push_str(&format!("Jain's index ({k}): {j:.4}\n"));
    }
    let names = |v: &[String], n: usize| match n {
        1..=3 => v.join(", "),
        n => format!("{n} flows"),
    };
    let fr = &sum.fairness.friendliness;
    for f in fr.iter().take(TERMINAL_FLOWS) {
        let Some(r) = f.ratio else { continue };
        let mut parts = Vec::new();
        if let Some(s) = f.same_rtt_ratio {
            parts.push(format!(
                "same RTT {s:.3} (vs {})",
                names(&f.same_rtt_tcp_flows, f.same_rtt_tcp_flow_count)
            ));
        }
        if let (Some(a), Some([t0, t1])) = (f.aggregate_ratio, f.aggregate_interval_s) {
            parts.push(format!(
                "aggregate {a:.3} ({} TFRC vs {} TCP, {t0}-{t1} s)",
                f.aggregate_tfrc_flow_count, f.tcp_flow_count
            ));
        }
        parts.push(format!(
            "vs mean of {} {r:.3}",
            names(&f.tcp_flows, f.tcp_flow_count)
        ));
        out.push_str(&format!(
            "friendliness {} on {}: {}\n",
            f.flow,
            f.bottleneck,
            parts.join(", ")
        ));
    }
    if fr.len() > TERMINAL_FLOWS {
        let _ = writeln!(
            out,
            "… and the friendliness of {} more TFRC flows (summary.json)",
            fr.len() - TERMINAL_FLOWS
        );
    }
    out
}

/// The variant metrics of a run as text for `tfrclab run`: when a flow runs a variant, a line
/// per TFRC flow; each confusion matrix; each RED queue whose variant adapted it.
fn variant_text(sum: &lab::summary::Summary) -> String {
    let tfrc = &sum.tfrc;
    let red: Vec<(String, RedSummary)> = sum
        .links
        .iter()
        .filter_map(|l| Some((format!("{} {}", l.name, l.direction), l.red?)))
        .collect();
    let mut out = String::new();
    let any_variant = tfrc.iter().any(|t| !t.variants.is_empty());
    for t in tfrc.iter().filter(|_| any_variant).take(TERMINAL_FLOWS) {
        let v = if t.variants.is_empty() {
            "(none)".to_string()
        } else {
            t.variants.join(" ")
        };
        let _ = writeln!(
            out,
            "tfrc {}: variants {v}; X {:.4} Mb/s, p {:.5}, R {}, TTL {}, nofeedback {}, \
             loss events {}, lost {} (congestion {}, wireless {}), notices {}, protected {}, \
             RTO rescales {}",
            t.flow,
            t.x_bps / 1e6,
            t.p,
            t.rtt_s
                .map_or("-".to_string(), |r| format!("{:.1} ms", r * 1e3)),
            t.ttl,
            t.nofeedback_expiries,
            t.loss_events,
            t.lost_packets,
            t.congestion_losses,
            t.wireless_losses,
            t.ttl_notices,
            t.protected_sent,
            t.link_error_rescales,
        );
    }
    for t in tfrc.iter().take(TERMINAL_FLOWS) {
        let Some(c) = &t.confusion else {
            continue;
        };
        let _ = writeln!(
            out,
            "confusion matrix of {} (lost packets; rows: true cause, columns: class):",
            t.flow
        );
        let _ = writeln!(
            out,
            "  {:<24} {:>10} {:>10} {:>10}",
            "", "congestion", "wireless", "undeclared"
        );
        for (name, r) in c.rows() {
            let _ = writeln!(
                out,
                "  {name:<24} {:>10} {:>10} {:>10}",
                r.congestion, r.wireless, r.undeclared
            );
        }
        if let Some(a) = c.accuracy {
            let _ = writeln!(out, "  accuracy {a:.4}");
        }
    }
    for (name, r) in &red {
        if r.threshold_moves + r.max_p_increases + r.max_p_decreases == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "red {name}: early drops {}, threshold moves {}, max_p +{} -{} (final {:.4}), \
             thresholds {:.2}/{:.2} packets",
            r.early_drops,
            r.threshold_moves,
            r.max_p_increases,
            r.max_p_decreases,
            r.max_p_final,
            r.min_th_final_packets,
            r.max_th_final_packets
        );
    }
    out
}
