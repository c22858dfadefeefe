//! `tfrclab validate`: run scenarios in NS-2.35 and in tfrclab and compare their metrics.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use serde::{Deserialize, Serialize};

use crate::EXIT_BAD_INPUT;
use lab::output::OutputDir;
use lab::validate::{self, markdown, splice, ScenarioReport, MARK_BEGIN, MARK_END};
use scenario::{overrides, Scenario};

/// The subcommand's `--help` text (the binary attaches it to the subcommand).
pub const LONG_ABOUT: &str = "\
Cross-validate against NS-2.35: for each scenario, export it (as export-ns2 does), run `ns` on \
the script in a temporary folder, read NS-2's trace with the same metric code `run` uses, run \
tfrclab, and print a side-by-side table (metric, NS-2, tfrclab, difference, tolerance, pass).

Checks: per-flow throughput (relative, default 15%), summed throughput (3%), per-flow mean \
delay (10%), per-flow loss rate (25% of NS-2's, or 0.005 absolute, whichever is larger). A \
scenario's [validate] table overrides them and may list seeds = [...] to compare means over \
several runs on both sides (for random scenarios).

With --real, the NS-2 side is replaced by a real network (root): the scenario's topology as \
network namespaces joined by emulated links that run the simulator's own queues, its flows as \
kernel TCP (the flow's `real` congestion control), `tfrclab send`/`recv` and paced UDP; the \
simulated mean and 95% CI over `[real] sim_seeds` start phases beside the real runs' over \
--reps runs, per flow and metric, with a verdict (the intervals overlap or not); runs whose \
emulator or senders were late are marked distorted and left out. Writes validate-real.json and \
per run tcp_info.csv (the kernel's cwnd and RTT every 10 ms) into --out.

Writes validate.json (every figure, per seed) into --out; --markdown FILE writes the summary \
and per-scenario tables (between the markers in FILE when it has them). Exit code 0 when every \
check passes, 1 when one is outside its tolerance (or a run failed), 2 for bad input (an \
unreadable scenario, one NS-2 cannot express, or no `ns`: install it with apt-get install ns2).";

/// Arguments of `tfrclab validate`.
#[derive(Parser, Debug)]
pub struct Args {
    /// Scenario files (TOML; see docs/scenario.md).
    #[arg(value_name = "SCENARIO", required_unless_present = "batch")]
    pub scenarios: Vec<PathBuf>,
    /// The NS-2 binary.
    #[arg(long = "ns", value_name = "PATH", default_value = "ns")]
    pub ns: PathBuf,
    /// Output folder for validate.json (and kept traces).
    #[arg(long, value_name = "DIR", default_value = "out/validate")]
    pub out: PathBuf,
    /// Also write the tables as markdown to FILE: replaces the text between FILE's
    /// `<!-- tfrclab validate: begin ... -->` and `<!-- tfrclab validate: end -->` markers, or
    /// creates FILE when it does not exist.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Stop `ns` after this many seconds (per run).
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    pub timeout: f64,
    /// Keep both simulators' traces (NS-2 format) and the exported script of every seed in
    /// the output folder, for packet-by-packet comparison.
    #[arg(long)]
    pub keep_traces: bool,
    /// Change one value in every scenario before validation, as for `run` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = overrides::parse_set)]
    pub sets: Vec<(String, String)>,
    /// Hold the simulation against a real network instead of NS-2: namespaces, emulated links,
    /// kernel TCP and `tfrclab send`/`recv` (needs root; docs/real-network.md).
    #[arg(long)]
    pub real: bool,
    /// With --real: real runs per scenario (default: the scenario's `[real] reps`, 10).
    #[arg(long, value_name = "N", requires = "real")]
    pub reps: Option<u32>,
    /// With --real: hold the real runs against an earlier batch of the same scenarios (its
    /// validate-real.json, e.g. runs on a quiet host): per flow and metric, the baseline's 95%
    /// prediction interval for one run, the runs outside it, and whether the means agree.
    #[arg(long, value_name = "FILE", requires = "real")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: hold this earlier batch (a validate-real.json) against the baseline
    /// instead of running the scenarios.
    #[arg(
        long,
        value_name = "FILE",
        requires = "baseline",
        conflicts_with = "scenarios"
    )]
    pub batch: Option<PathBuf>,
}

/// `validate.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValidateJson {
    /// Every scenario passed.
    pub pass: bool,
    /// The NS-2 binary used.
    pub ns: String,
    /// Per scenario, in command-line order.
    pub scenarios: Vec<ScenarioJson>,
}

/// One scenario in `validate.json`: its report, or why it could not be validated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioJson {
    /// The scenario file.
    pub file: String,
    /// The comparison, when both simulators ran.
    pub report: Option<ScenarioReport>,
    /// Why the scenario could not be validated.
    pub error: Option<String>,
}

fn bad(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if args.real {
        return super::validate_real::run(&super::validate_real::Args {
            scenarios: &args.scenarios,
            sets: &args.sets,
            reps: args.reps,
            out: &args.out,
            markdown: args.markdown.as_deref(),
            keep_traces: args.keep_traces,
            baseline: args.baseline.as_deref(),
            batch: args.batch.as_deref(),
        });
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Ok(bad(format!(
            "--timeout {}: expected a positive number of seconds",
            args.timeout
        )));
    }
    // Everything that could be wrong with the input is reported before anything runs.
    let mut scenarios = Vec::new();
    let mut invalid = false;
    for path in &args.scenarios {
        match Scenario::load_with(path, &args.sets) {
            Ok(s) => match validate::check_exportable(&s) {
                Ok(()) => scenarios.push(s),
                Err(e) => {
                    eprintln!("error: {e}");
                    invalid = true;
                }
            },
            Err(e) => {
                eprintln!("error: {e}");
                invalid = true;
            }
        }
    }
    if invalid {
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let markdown_base = match &args.markdown {
        Some(path) => match markdown_base(path) {
            Ok(b) => Some(b),
            Err(e) => return Ok(bad(e)),
        },
        None => None,
    };
    if let Err(e) = validate::probe_ns(&args.ns) {
        return Ok(bad(e));
    }
    let out = match OutputDir::create(&args.out) {
        Ok(o) => o,
        Err(e) => return Ok(bad(e)),
    };
    let opts = validate::Options {
        ns: args.ns.clone(),
        timeout: Duration::from_secs_f64(args.timeout),
        keep_traces: args.keep_traces.then(|| out.staging().to_path_buf()),
    };

    let mut entries = Vec::new();
    let mut reports = Vec::new();
    for s in &scenarios {
        let seeds = validate::seeds(s);
        let list: Vec<String> = seeds.iter().map(u64::to_string).collect();
        println!(
            "== {} ({}), seed{} {}",
            s.name,
            s.file,
            if seeds.len() > 1 { "s" } else { "" },
            list.join(", ")
        );
        match validate::validate(s, &opts) {
            Ok(r) => {
                print!("{}", validate::text_table(&r));
                let (ns_s, lab_s) = r.wall_s();
                let n_fail = r.failures().count();
                let verdict = if r.pass {
                    "PASS".to_string()
                } else {
                    format!("FAIL ({n_fail} of {} checks)", r.checks.len())
                };
                println!("{verdict}   (NS-2 {ns_s:.2} s, tfrclab {lab_s:.2} s)");
                for n in validate::drop_notes(&r) {
                    println!("note: {n}");
                }
                if let Some(w) = &r.ns2_stderr {
                    println!("ns wrote on stderr:\n{}", w.trim_end());
                }
                println!();
                entries.push(ScenarioJson {
                    file: s.file.clone(),
                    report: Some(r.clone()),
                    error: None,
                });
                reports.push(r);
            }
            Err(e) => {
                eprintln!("error: {}: {e}", s.file);
                if e.is_bad_input() {
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                }
                println!("FAIL (could not be validated)\n");
                entries.push(ScenarioJson {
                    file: s.file.clone(),
                    report: None,
                    error: Some(e.to_string()),
                });
            }
        }
    }

    let pass = entries
        .iter()
        .all(|e| e.report.as_ref().is_some_and(|r| r.pass));
    let json = ValidateJson {
        pass,
        ns: args.ns.display().to_string(),
        scenarios: entries,
    };
    let text = serde_json::to_string_pretty(&json)? + "\n";
    std::fs::write(out.path("validate.json"), text)?;
    let dir = out.commit()?;
    if scenarios.len() > 1 {
        let n_pass = reports.iter().filter(|r| r.pass).count();
        println!("{n_pass} of {} scenarios pass", scenarios.len());
    }
    println!("wrote {}", dir.join("validate.json").display());
    if let (Some(path), Some(base)) = (&args.markdown, markdown_base) {
        let generated = markdown(&reports);
        let text = match splice(&base, &generated) {
            Some(t) => t,
            None => format!("{base}{MARK_BEGIN}\n{generated}{MARK_END}\n"),
        };
        if let Err(e) = std::fs::write(path, text) {
            return Ok(bad(format!("{}: cannot write: {e}", path.display())));
        }
        println!("wrote {}", path.display());
    }
    Ok(if pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The markdown file's current text when it has the markers, or a heading for a new file;
/// an error for an existing file without them (it is not overwritten).
fn markdown_base(path: &Path) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            if splice(&text, "").is_some() {
                Ok(text)
            } else {
                Err(format!(
                    "{}: has no `{MARK_BEGIN}` … `{MARK_END}` markers; add them where the \
                     generated tables go, or name a new file for --markdown",
                    path.display()
                ))
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(
            "# NS-2.35 cross-validation\n\nGenerated by `tfrclab validate --markdown`.\n\n"
                .to_string(),
        ),
        Err(e) => Err(format!("{}: cannot read: {e}", path.display())),
    }
}
