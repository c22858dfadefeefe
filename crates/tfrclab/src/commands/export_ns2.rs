//! `tfrclab export-ns2`: write an NS-2.35 Tcl script that builds the same experiment as a
//! scenario file.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use crate::EXIT_BAD_INPUT;
use lab::ns2::{default_trace_file, export, ExportOptions};
use scenario::{overrides, Scenario};

/// The subcommand's `--help` text (the binary attaches it to the subcommand).
pub const LONG_ABOUT: &str = "\
Write an NS-2.35 Tcl script that builds the same topology, queues (DropTail, RED with the same \
parameters), loss models (an ErrorModel on the same link direction), link events and flows \
(Agent/TCP[/Reno|/Newreno] + TCPSink + FTP, UDP + CBR, Agent/TFRC + TFRCSink) with the same \
start and stop times and packet sizes, plus a trace-all. Run it with `ns FILE`.

Mapping: NS-2 node id = scenario node index; flow i has fid_ i on both agents (so acks and \
TFRC feedback carry it too); agents are attached in flow order, sender first, so ports number \
0, 1, 2, ... per node; the scenario seed seeds $defaultRNG (never 0).

A scenario NS-2 cannot express (TFRC profile \"rfc5348\", a gilbert-elliott loss model, a \
[links.wireless] hop) is refused with a message naming each flow or link; exit code 2, as for \
an unreadable or invalid scenario file.";

/// Arguments of `tfrclab export-ns2`.
#[derive(Parser, Debug)]
pub struct Args {
    /// The scenario file (TOML; see docs/scenario.md).
    #[arg(value_name = "SCENARIO")]
    scenario: PathBuf,
    /// Write the script to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// The file the script's trace-all writes, as ns opens it (relative to the directory ns
    /// runs in) [default: the scenario's name + ".tr"].
    #[arg(long, value_name = "PATH", conflicts_with = "no_trace")]
    trace_file: Option<String>,
    /// No trace at all (to time NS-2 itself).
    #[arg(long)]
    no_trace: bool,
    /// Use this seed instead of the scenario's.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Change one scenario value before validation, as for `run` (repeatable), e.g.
    /// --set flows.udp1.rate=2Mbps.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = overrides::parse_set)]
    set: Vec<(String, String)>,
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut scenario = match Scenario::load_with(&args.scenario, &args.set) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    let options = if args.no_trace {
        ExportOptions::untraced()
    } else {
        ExportOptions {
            trace_file: Some(
                args.trace_file
                    .clone()
                    .unwrap_or_else(|| default_trace_file(&scenario)),
            ),
        }
    };
    let script = match export(&scenario, &options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    match &args.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, script) {
                eprintln!(
                    "error: {}: cannot write the script: {e} (expected a writable file path for -o)",
                    path.display()
                );
                return Ok(ExitCode::from(EXIT_BAD_INPUT));
            }
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(script.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
