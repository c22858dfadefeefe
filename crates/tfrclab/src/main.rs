//! `tfrclab`: the command-line lab. It only composes the `tfrc` core and the `netsim` simulator.

use tfrclab::{commands, EXIT_BAD_INPUT};

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The TFRC laboratory.
#[derive(Parser, Debug)]
#[command(name = "tfrclab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Reproduce the seed papers' experiments: per-paper reports (printed vs measured values,
    /// claims with 95% CIs and verdicts), CSVs and an index.
    #[command(long_about = commands::reproduce::LONG_ABOUT)]
    Reproduce(commands::reproduce::Args),
    /// Simulate a scenario: per-flow table, summary.json, CSVs and an HTML report.
    Run(commands::run::Args),
    /// Run a scenario over a grid of `--set` values × seeds in parallel: mean and 95% CI of
    /// every metric (sweep.csv, runs.csv, sweep.json, report.html).
    Sweep(commands::sweep::Args),
    /// A sweep kept in a directory: plan it, run it in shards (Slurm array tasks), resume it,
    /// and merge it into what `sweep` writes (docs/cluster.md).
    Campaign(commands::campaign::Args),
    /// Evaluate the RFC 5348 §3.1 throughput equation.
    Equation(commands::equation::Args),
    /// Measurements: `bench [--vs-ns2] [SCENARIO...]` times the simulator (against NS-2),
    /// `bench scaling` runs the dumbbell scaling suite, `bench rsa` times RSA decryption
    /// (Carmichael vs Euler d, with and without CRT) and the per-packet AEAD cost.
    Bench(commands::bench::Args),
    /// Write an NS-2.35 Tcl script that builds the same experiment as a scenario file.
    #[command(name = "export-ns2", long_about = commands::export_ns2::LONG_ABOUT)]
    ExportNs2(commands::export_ns2::Args),
    /// Run scenarios in NS-2.35 and in tfrclab and compare their metrics side by side.
    #[command(long_about = commands::validate::LONG_ABOUT)]
    Validate(commands::validate::Args),
    /// Send TFRC over a real UDP socket to `tfrclab recv`: a file, stdin, or generated data.
    Send(commands::send::Args),
    /// Receive `tfrclab send` sessions over UDP and print their summaries.
    Recv(commands::recv::Args),
    /// Make a static key pair for protected sessions (`recv --key`, `send --peer-key`).
    Keygen(commands::keygen::Args),
    /// List the seed-paper variants: name, paper, equations, parameters with defaults,
    /// scenario keys ("reconstruction" where the paper could not be obtained).
    Variants(commands::variants::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            if !e.use_stderr() {
                // --help and --version.
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // One line naming the flag and the problem: clap's message up to its usage hint.
            let msg = e.to_string();
            let line: Vec<&str> = msg
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!("{} (see tfrclab --help)", line.join(" "));
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let result = match cli.command {
        Command::Reproduce(args) => commands::reproduce::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Sweep(args) => commands::sweep::run(&args),
        Command::Campaign(args) => commands::campaign::run(&args),
        Command::Equation(args) => commands::equation::run(&args),
        Command::Bench(args) => commands::bench::run(&args),
        Command::ExportNs2(args) => commands::export_ns2::run(&args),
        Command::Validate(args) => commands::validate::run(&args),
        Command::Send(args) => commands::send::run(&args),
        Command::Recv(args) => commands::recv::run(&args),
        Command::Keygen(args) => commands::keygen::run(&args),
        Command::Variants(args) => commands::variants::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
