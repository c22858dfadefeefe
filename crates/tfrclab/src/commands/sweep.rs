//! `tfrclab sweep`: run a scenario over a grid of parameter values × seeds in parallel, and
//! write each metric's mean and 95% confidence interval (`sweep.csv`, `runs.csv`, `sweep.json`,
//! `report.html`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;

use crate::EXIT_BAD_INPUT;
use lab::output::{file_stem, OutputDir};
use lab::sweep::{self, Axis, SweepResult, Task};
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
    let mut bar = lab::parallel::Progress::new(tasks.len() as u64, args.quiet);
    let t0 = Instant::now();
    let done = || bar.inc();
    let runs = sweep::run_all(&scenarios, &points, &tasks, jobs, &done);
    bar.finish();
    let runs = match runs {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!("nothing was written");
            return Ok(ExitCode::FAILURE);
        }
    };
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
    sweep::report(&result).write(&out.path("report.html"))?;
    let dir = out.commit()?;
    print!("{}", text_table(&result));
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

/// Per grid point and flow: mean throughput and loss rate with their CI half-widths.
pub fn text_table(r: &SweepResult) -> String {
    let mut rows: Vec<Vec<String>> = vec![vec![
        "point".into(),
        "values".into(),
        "flow".into(),
        "thr Mb/s".into(),
        "±95%".into(),
        "loss".into(),
        "±95%".into(),
    ]];
    let find = |p: usize, subject: &str, metric: &str| {
        r.aggregates
            .iter()
            .find(|a| a.point == p && a.subject == subject && a.metric == metric)
    };
    let hw = |x: Option<f64>, scale: f64, digits: usize| {
        x.map(|h| format!("{:.digits$}", h * scale))
            .unwrap_or_else(|| "-".into())
    };
    for p in &r.points {
        let flows: Vec<&str> = r
            .runs
            .iter()
            .find(|run| run.point == p.index)
            .map(|run| run.summary.flows.iter().map(|f| f.name.as_str()).collect())
            .unwrap_or_default();
        for f in flows {
            let (Some(t), Some(l)) = (
                find(p.index, f, "throughput_bps"),
                find(p.index, f, "loss_rate"),
            ) else {
                continue;
            };
            rows.push(vec![
                (p.index + 1).to_string(),
                p.label(),
                f.to_string(),
                format!("{:.4}", t.stat.mean / 1e6),
                hw(t.stat.ci_half_width, 1e-6, 4),
                format!("{:.4}", l.stat.mean),
                hw(l.stat.ci_half_width, 1.0, 4),
            ]);
        }
    }
    report::text::aligned(&rows, &[1, 2])
}
