//! `tfrclab sweep`: run a scenario over a grid of parameter values × seeds in parallel, and
//! write each metric's mean and 95% confidence interval (`sweep.csv`, `runs.csv`, `sweep.json`,
//! `report.html`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;

use super::Signals;
use crate::EXIT_BAD_INPUT;
use lab::campaign::{exec, NewOptions};
use lab::output::{file_stem, OutputDir};
use lab::sweep::{self, Axis, SweepResult, Task, TimedRun};
use report::fmt_num;

/// Arguments of `tfrclab sweep`.
#[derive(Parser, Debug)]
#[command(after_help = "\
Examples:
  tfrclab sweep scenarios/examples/dumbbell.toml --set topology.bottleneck_bandwidth=1Mbps,1.5Mbps,3Mbps --seeds 10
  tfrclab sweep scenarios/examples/flows.toml --set flows.cbr.rate=1Mbps,4Mbps --set topology.queue_limit=20,100

Several --set make a grid (their Cartesian product). Values are split at commas outside
[...], {...} and quotes, so arrays and quoted strings can be values:
  --set 'links.r1-d0.loss.packets=[3,7],[10,20,30]'   (two values)
  --set 'flows.a.name=\"x,y\"'                        (one value)")]
pub struct Args {
    /// The scenario file (TOML; see docs/scenario.md).
    pub scenario: PathBuf,
    /// A swept parameter: a dotted scenario key and its values, e.g.
    /// `flows.udp1.rate=1Mbps,2Mbps`. Repeat for a grid.
    #[arg(long = "set", value_name = "KEY=V1,V2,...", value_parser = sweep::parse_axis)]
    pub sets: Vec<Axis>,
    /// Seeds per grid point: s, s+1, …, s+N−1 from the scenario's seed (or --seed-base).
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub seeds: u32,
    /// First seed (default: each grid point's scenario seed).
    #[arg(long, value_name = "S")]
    pub seed_base: Option<u64>,
    /// Runs at a time (default: all cores). Results do not depend on it.
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// The metrics the report opens with and the terminal table shows, in this order (repeat
    /// or separate by commas); a name also takes in the metrics that extend it after an
    /// underscore. Default: the report opens with throughput_bps and friendliness, the table
    /// shows throughput and loss rate per flow.
    #[arg(long, value_name = "METRIC", value_delimiter = ',')]
    pub primary: Vec<String>,
    /// No progress on stderr (by default a bar on a terminal, else a line every 5 s).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Output folder (default: `out/<scenario name>-sweep`). Written only when every run
    /// succeeds.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

fn bad_input(messages: &[String]) -> ExitCode {
    for m in messages {
        eprintln!("error: {m}");
    }
    ExitCode::from(EXIT_BAD_INPUT)
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let file = args.scenario.display().to_string();
    let text = match std::fs::read_to_string(&args.scenario) {
        Ok(t) => t,
        Err(e) => return Ok(bad_input(&[format!("{file}: cannot read the file: {e}")])),
    };
    // Every grid point is validated (and built) before anything runs.
    let scenarios = match sweep::prepare(&file, &text, &args.sets) {
        Ok(s) => s,
        Err(errors) => return Ok(bad_input(&errors)),
    };
    let points = sweep::grid(&args.sets);
    let mut seeds = Vec::with_capacity(points.len());
    for s in &scenarios {
        match sweep::seeds_from(args.seed_base.unwrap_or(s.seed), args.seeds) {
            Ok(v) => seeds.push(v),
            Err(e) => return Ok(bad_input(&[format!("--seeds {}: {e}", args.seeds)])),
        }
    }
    let name = scenarios.first().map_or("sweep", |s| s.name.as_str());
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(format!("{}-sweep", file_stem(name))));
    let out = match OutputDir::create(&dir) {
        Ok(o) => o,
        Err(e) => return Ok(bad_input(&[e])),
    };

    let tasks: Vec<Task> = seeds
        .iter()
        .enumerate()
        .flat_map(|(point, ss)| ss.iter().map(move |&seed| Task { point, seed }))
        .collect();
    let jobs = lab::parallel::jobs(args.jobs);
    // Ctrl-C (or SIGTERM) starts no new runs and keeps the finished ones; a second one quits.
    let signals = Signals::catch_once()?;
    let mut bar = lab::parallel::Progress::new(tasks.len() as u64, args.quiet);
    let t0 = Instant::now();
    let done = || bar.inc();
    let finished = AtomicBool::new(false);
    let kept = std::thread::scope(|s| {
        s.spawn(|| loop {
            let last = finished.load(Ordering::SeqCst);
            if signals.raised().load(Ordering::SeqCst) {
                bar.println(&format!(
                    "{}: no new runs start; the runs in progress (at most {jobs}) finish, \
                         then the finished runs are kept. Press Ctrl-C again to quit at once, \
                         keeping nothing.",
                    signals.name()
                ));
                return;
            }
            if last {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        });
        let kept = sweep::run_all_kept(&scenarios, &points, &tasks, jobs, &done, signals.raised());
        finished.store(true, Ordering::SeqCst);
        kept
    });
    bar.finish();
    let kept = match kept {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!("nothing was written");
            return Ok(ExitCode::FAILURE);
        }
    };
    if signals.raised().load(Ordering::SeqCst) {
        return Ok(interrupted(args, &file, &text, &dir, &signals, kept));
    }
    let runs: Vec<sweep::RunRecord> = kept.into_iter().flatten().map(|t| t.record).collect();
    let wall = t0.elapsed();
    let aggregates = sweep::aggregate(points.len(), &runs);
    let result = SweepResult {
        scenario: name.to_string(),
        file,
        source: text,
        axes: args.sets.clone(),
        points,
        seeds,
        runs,
        aggregates,
        jobs,
        wall,
    };
    sweep::write_sweep_csv(&out.path("sweep.csv"), &result)?;
    sweep::write_runs_csv(&out.path("runs.csv"), &result)?;
    sweep::write_sweep_json(&out.path("sweep.json"), &result)?;
    let primary: Vec<String> = if args.primary.is_empty() {
        sweep::DEFAULT_PRIMARY
            .iter()
            .map(|m| m.to_string())
            .collect()
    } else {
        args.primary.clone()
    };
    for p in &args.primary {
        if !result
            .aggregates
            .iter()
            .any(|a| sweep::is_primary(&a.metric, p))
        {
            let mut names: Vec<&str> = Vec::new();
            for a in &result.aggregates {
                if !names.contains(&a.metric.as_str()) {
                    names.push(&a.metric);
                }
            }
            eprintln!(
                "warning: --primary {p}: no metric of that name; the report opens with the others \
                 named. Metrics: {}",
                names.join(", ")
            );
        }
    }
    sweep::report_with(&result, &primary).write(&out.path("report.html"))?;
    let dir = out.commit()?;
    print!("{}", sweep::text_table(&result, &args.primary));
    println!(
        "{} runs ({} grid point(s) × {} seed(s)) in {} s on {} thread(s); wrote {}/{{sweep.csv, runs.csv, sweep.json, report.html}}",
        result.runs.len(),
        result.points.len(),
        args.seeds,
        fmt_num(wall.as_secs_f64()),
        jobs,
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Keep the finished runs of an interrupted sweep as a campaign beside `dir` (the output
/// folder, not written), say so and how to finish, and return 128 + the signal's number.
fn interrupted(
    a: &Args,
    file: &str,
    text: &str,
    dir: &Path,
    signals: &Signals,
    kept: Vec<Option<TimedRun>>,
) -> ExitCode {
    let finished: Vec<TimedRun> = kept.into_iter().flatten().collect();
    eprintln!(
        "interrupted by {}: {} of {} runs had finished; {} was not written",
        signals.name(),
        finished.len(),
        a.seeds as usize * sweep::grid(&a.sets).len(),
        dir.display()
    );
    let opts = NewOptions {
        axes: a.sets.clone(),
        seeds: a.seeds,
        seed_base: a.seed_base,
    };
    match exec::keep_interrupted(file, text, dir, &opts, &a.primary, finished) {
        Ok(message) => eprintln!("{message}"),
        Err(e) => eprintln!("error: the finished runs could not be kept: {e}"),
    }
    ExitCode::from(signals.exit_code().unwrap_or(130))
}
