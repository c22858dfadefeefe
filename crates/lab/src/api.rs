//! The library API: a scenario in, typed results out, for programs that are not the CLI (the
//! Python package, campaign scripts, other people's tools).
//!
//! - [`Scenario::from_path`] / [`Scenario::from_str`] read and validate a scenario (errors
//!   located by file, line and column); [`Scenario::with_sets`] applies `--set` overrides.
//! - [`run`]: one simulation → [`RunResult`]: the numbers `tfrclab run` writes to
//!   `summary.json`, `flows.csv` and `timeseries.csv`, computed by the same code.
//! - [`sweep()`]: a grid of overrides × seeds on a thread pool → [`SweepResult`], the numbers of
//!   `tfrclab sweep`'s `sweep.csv`. It is [`plan`] → [`SweepPlan::execute`] →
//!   [`SweepPlan::aggregate`], each callable on its own; execution reports progress and stops
//!   early when a cancel flag is raised.
//!
//! ```
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/examples/dumbbell.toml");
//! use lab::{RunOptions, Scenario};
//!
//! let sc = Scenario::from_path(path)?.with_sets(&[
//!     ("duration".into(), "8s".into()),
//!     ("warmup".into(), "2s".into()),
//! ])?;
//! let r = lab::run(&sc, &RunOptions { seed: Some(3), ..RunOptions::default() })?;
//! assert_eq!(r.summary.seed, 3);
//! for f in r.flows() {
//!     println!("{}: {:.3} Mb/s", f.name, f.throughput_bps / 1e6);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::metrics::FlowMetrics;
use crate::output::OutputDir;
use crate::runner::{self, RunOutput};
use crate::summary::{self, LinkSummary, SeriesRow, Summary};
use crate::sweep::{self, Axis, GridPoint, RunRecord, SweepResult, Task};

pub use crate::runner::{RunError, RunOptions};
pub use scenario::{Scenario, ScenarioError};

/// Everything one run produced.
#[derive(Debug)]
pub struct RunResult {
    /// `summary.json`: per-flow metrics, fairness, per link direction, packet accounting and
    /// the TFRC variant metrics.
    pub summary: Summary,
    /// `timeseries.csv`: one value per (bin or sample, subject, metric).
    pub timeseries: Vec<SeriesRow>,
    /// The simulator's own results and the mapping back to the scenario (for reports and
    /// metrics this API does not summarise).
    pub output: RunOutput,
}

impl RunResult {
    /// Per flow, in scenario order: the rows of `flows.csv`.
    pub fn flows(&self) -> &[FlowMetrics] {
        &self.summary.flows
    }

    /// Per link direction: `summary.json`'s `links`.
    pub fn links(&self) -> &[LinkSummary] {
        &self.summary.links
    }

    /// Write what `tfrclab run` writes (`summary.json`, `flows.csv`, `links.csv`,
    /// `timeseries.csv`, `report.html`) into `dir`, all at once (see [`OutputDir`]); returns
    /// `dir`.
    pub fn write(&self, scenario: &Scenario, dir: &Path) -> anyhow::Result<PathBuf> {
        let out = OutputDir::create(dir).map_err(anyhow::Error::msg)?;
        summary::write_data_files(&out, &self.summary, &self.timeseries)?;
        crate::run_report::run_report(scenario, &self.summary, &self.timeseries, &self.output)
            .write(&out.path("report.html"))?;
        Ok(out.commit()?)
    }
}

/// Run `scenario` once (seed: `opts.seed`, else the scenario's) and summarise it.
///
/// Deterministic: the same scenario and seed give the same result, equal to what
/// `tfrclab run` writes (the wall-clock field `summary.wall_s` aside).
pub fn run(scenario: &Scenario, opts: &RunOptions) -> Result<RunResult, RunError> {
    let output = runner::simulate(scenario, opts)?;
    let summary = summary::summarize(scenario, &output);
    let timeseries = summary::timeseries(scenario, &output);
    Ok(RunResult {
        summary,
        timeseries,
        output,
    })
}

/// What to sweep: the `tfrclab sweep` arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepOptions {
    /// The swept keys and their values (`--set KEY=V1,V2,...`); their Cartesian product is
    /// the grid. None: one point, the scenario as written.
    pub axes: Vec<Axis>,
    /// Seeds per grid point (`--seeds`, at least 1).
    pub seeds: u32,
    /// First seed (`--seed-base`); None: each grid point's scenario seed.
    pub seed_base: Option<u64>,
    /// Runs at a time (`--jobs`); None: every core. Results do not depend on it.
    pub jobs: Option<u32>,
}

impl Default for SweepOptions {
    /// No axes, 5 seeds (the CLI's default), every core.
    fn default() -> Self {
        SweepOptions {
            axes: Vec::new(),
            seeds: 5,
            seed_base: None,
            jobs: None,
        }
    }
}

/// Why a sweep did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SweepError {
    /// Bad input, found before anything ran: one message per problem, each naming the `--set`
    /// or grid point responsible and the file position.
    Invalid(Vec<String>),
    /// A run failed (message names the grid point and seed); nothing was aggregated.
    Run(String),
    /// The cancel flag was raised; `done` of `total` runs had finished.
    Cancelled {
        /// Runs finished.
        done: usize,
        /// Runs planned.
        total: usize,
    },
}

impl std::fmt::Display for SweepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SweepError::Invalid(msgs) => write!(f, "{}", msgs.join("\n")),
            SweepError::Run(m) => write!(f, "{m}"),
            SweepError::Cancelled { done, total } => {
                write!(f, "sweep cancelled after {done} of {total} runs")
            }
        }
    }
}

impl std::error::Error for SweepError {}

/// A validated sweep, ready to execute: every grid point's scenario built once (so bad input
/// fails here, before any run), its seeds and the run list.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// The scenario's name (of the first grid point).
    pub scenario: String,
    /// The scenario's file as named by the user.
    pub file: String,
    /// The scenario's text before the sweep's overrides.
    pub source: String,
    /// The swept axes.
    pub axes: Vec<Axis>,
    /// The grid, first axis outermost.
    pub points: Vec<GridPoint>,
    /// Each grid point's validated scenario.
    pub scenarios: Vec<Scenario>,
    /// The seeds run at each grid point.
    pub seeds: Vec<Vec<u64>>,
    /// Every run: point by point, seeds in order.
    pub tasks: Vec<Task>,
    /// Worker threads to use.
    pub jobs: usize,
}

/// The runs of an executed [`SweepPlan`].
#[derive(Clone, Debug)]
pub struct SweepRuns {
    /// Every run's summary, in task order.
    pub runs: Vec<RunRecord>,
    /// Wall-clock time of all runs.
    pub wall: Duration,
}

/// Validate a sweep of `scenario` (its file name and source text, with the scenario's own
/// overrides already applied) and list its runs. Errors are the CLI's.
pub fn plan(scenario: &Scenario, opts: &SweepOptions) -> Result<SweepPlan, SweepError> {
    if opts.seeds == 0 {
        return Err(SweepError::Invalid(vec![
            "--seeds 0: a sweep needs at least 1 seed per grid point".into(),
        ]));
    }
    let scenarios = sweep::prepare(&scenario.file, &scenario.source, &opts.axes)
        .map_err(SweepError::Invalid)?;
    let points = sweep::grid(&opts.axes);
    let seeds = scenarios
        .iter()
        .map(|s| sweep::seeds_from(opts.seed_base.unwrap_or(s.seed), opts.seeds))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| SweepError::Invalid(vec![format!("--seeds {}: {e}", opts.seeds)]))?;
    let tasks = seeds
        .iter()
        .enumerate()
        .flat_map(|(point, ss)| ss.iter().map(move |&seed| Task { point, seed }))
        .collect();
    Ok(SweepPlan {
        scenario: scenarios
            .first()
            .map_or_else(|| scenario.name.clone(), |s| s.name.clone()),
        file: scenario.file.clone(),
        source: scenario.source.clone(),
        axes: opts.axes.clone(),
        points,
        scenarios,
        seeds,
        tasks,
        jobs: crate::parallel::jobs(opts.jobs),
    })
}

impl SweepPlan {
    /// Run every task on [`SweepPlan::jobs`] threads. `progress(done, total)` is called after
    /// each run, from the worker threads. When `cancel` is raised, runs not yet started are
    /// skipped and [`SweepError::Cancelled`] is returned once the running ones finish.
    pub fn execute(
        &self,
        progress: &(dyn Fn(usize, usize) + Sync),
        cancel: &AtomicBool,
    ) -> Result<SweepRuns, SweepError> {
        let total = self.tasks.len();
        let done = AtomicUsize::new(0);
        let tick = || progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
        let t0 = Instant::now();
        let runs = sweep::run_all_until(
            &self.scenarios,
            &self.points,
            &self.tasks,
            self.jobs,
            &tick,
            cancel,
        );
        if cancel.load(Ordering::Relaxed) {
            return Err(SweepError::Cancelled {
                done: done.load(Ordering::Relaxed),
                total,
            });
        }
        Ok(SweepRuns {
            runs: runs.map_err(SweepError::Run)?,
            wall: t0.elapsed(),
        })
    }

    /// Mean, standard deviation and 95% confidence interval per (grid point, subject, metric):
    /// the rows of `sweep.csv`.
    pub fn aggregate(&self, runs: SweepRuns) -> SweepResult {
        let aggregates = sweep::aggregate(self.points.len(), &runs.runs);
        SweepResult {
            scenario: self.scenario.clone(),
            file: self.file.clone(),
            source: self.source.clone(),
            axes: self.axes.clone(),
            points: self.points.clone(),
            seeds: self.seeds.clone(),
            runs: runs.runs,
            aggregates,
            jobs: self.jobs,
            wall: runs.wall,
        }
    }
}

/// [`plan`], [`SweepPlan::execute`] and [`SweepPlan::aggregate`] in one call.
///
/// ```
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/examples/dumbbell.toml");
/// use std::sync::atomic::AtomicBool;
/// use lab::{Scenario, SweepOptions};
///
/// let sc = Scenario::from_path(path)?.with_sets(&[
///     ("duration".into(), "6s".into()),
///     ("warmup".into(), "1s".into()),
/// ])?;
/// let opts = SweepOptions {
///     axes: vec![lab::sweep::parse_axis("topology.bottleneck_bandwidth=1Mbps,2Mbps")?],
///     seeds: 2,
///     jobs: Some(2),
///     ..SweepOptions::default()
/// };
/// let cancel = AtomicBool::new(false);
/// let r = lab::sweep(&sc, &opts, &|done, total| eprintln!("{done}/{total}"), &cancel)?;
/// assert_eq!(r.runs.len(), 4);
/// let thr = r.aggregates.iter().find(|a| a.subject == "tfrc1" && a.metric == "throughput_bps");
/// assert_eq!(thr.map(|a| a.stat.n), Some(2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sweep(
    scenario: &Scenario,
    opts: &SweepOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<SweepResult, SweepError> {
    let plan = plan(scenario, opts)?;
    let runs = plan.execute(progress, cancel)?;
    Ok(plan.aggregate(runs))
}

/// Write what `tfrclab sweep` writes (`sweep.csv`, `runs.csv`, `sweep.json`, `report.html`)
/// into `dir`, all at once; returns `dir`.
pub fn write_sweep(result: &SweepResult, dir: &Path) -> anyhow::Result<PathBuf> {
    let out = OutputDir::create(dir).map_err(anyhow::Error::msg)?;
    sweep::write_sweep_csv(&out.path("sweep.csv"), result)?;
    sweep::write_runs_csv(&out.path("runs.csv"), result)?;
    sweep::write_sweep_json(&out.path("sweep.json"), result)?;
    sweep::report(result).write(&out.path("report.html"))?;
    Ok(out.commit()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dumbbell() -> Scenario {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/examples/dumbbell.toml"
        );
        Scenario::from_path(path)
            .and_then(|s| {
                s.with_sets(&[
                    ("duration".into(), "6s".into()),
                    ("warmup".into(), "1s".into()),
                ])
            })
            .expect("dumbbell.toml is valid")
    }

    #[test]
    fn run_is_the_summary_of_the_runner() {
        let s = dumbbell();
        let opts = RunOptions {
            seed: Some(11),
            ..RunOptions::default()
        };
        let r = run(&s, &opts).unwrap();
        let out = runner::simulate(&s, &opts).unwrap();
        let mut expected = summary::summarize(&s, &out);
        expected.wall_s = r.summary.wall_s;
        assert_eq!(r.summary, expected);
        assert_eq!(r.timeseries, summary::timeseries(&s, &out));
        assert_eq!(r.flows().len(), 2);
        assert_eq!(r.links().len(), 2 * s.links.len());
    }

    #[test]
    fn sweep_equals_the_cli_pieces_and_does_not_depend_on_jobs() {
        let s = dumbbell();
        let axes = vec![sweep::parse_axis("topology.queue_limit=20,60").unwrap()];
        let opts = |jobs| SweepOptions {
            axes: axes.clone(),
            seeds: 2,
            seed_base: None,
            jobs: Some(jobs),
        };
        let calls = AtomicUsize::new(0);
        let progress = |_: usize, total: usize| {
            assert_eq!(total, 4);
            calls.fetch_add(1, Ordering::Relaxed);
        };
        let never = AtomicBool::new(false);
        let one = sweep(&s, &opts(1), &progress, &never).unwrap();
        let two = sweep(&s, &opts(2), &progress, &never).unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 8);
        assert_eq!(one.aggregates, two.aggregates);
        // The same pieces `tfrclab sweep` calls.
        let scenarios = sweep::prepare(&s.file, &s.source, &axes).unwrap();
        let points = sweep::grid(&axes);
        let tasks: Vec<Task> = (0..2)
            .flat_map(|point| (7..9).map(move |seed| Task { point, seed }))
            .collect();
        let runs = sweep::run_all(&scenarios, &points, &tasks, 1, &|| {}).unwrap();
        assert_eq!(one.aggregates, sweep::aggregate(points.len(), &runs));
    }

    #[test]
    fn a_raised_cancel_flag_runs_nothing_more() {
        let s = dumbbell();
        let opts = SweepOptions {
            seeds: 6,
            jobs: Some(1),
            ..SweepOptions::default()
        };
        let cancel = AtomicBool::new(false);
        // Raised after the second run: with one thread, the rest are skipped.
        let progress = |done: usize, _: usize| {
            if done == 2 {
                cancel.store(true, Ordering::Relaxed);
            }
        };
        let e = sweep(&s, &opts, &progress, &cancel).unwrap_err();
        assert_eq!(e, SweepError::Cancelled { done: 2, total: 6 });
    }

    #[test]
    fn bad_sweep_input_is_reported_before_running() {
        let s = dumbbell();
        let opts = SweepOptions {
            axes: vec![sweep::parse_axis("topology.nope=1,2").unwrap()],
            ..SweepOptions::default()
        };
        let ran = AtomicUsize::new(0);
        let e = sweep(
            &s,
            &opts,
            &|_, _| {
                ran.fetch_add(1, Ordering::Relaxed);
            },
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(
            matches!(&e, SweepError::Invalid(m) if m.iter().any(|m| m.contains("topology.nope"))),
            "{e}"
        );
        assert_eq!(ran.load(Ordering::Relaxed), 0);
        let zero = SweepOptions {
            seeds: 0,
            ..SweepOptions::default()
        };
        assert!(matches!(
            plan(&s, &zero),
            Err(SweepError::Invalid(m)) if m[0].contains("--seeds 0")
        ));
    }
}
