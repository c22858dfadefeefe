//! `campaign run`: the runs of one shard that have no result yet, on a thread pool, each result
//! written atomically as soon as it finishes.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::{
    write_atomic, Campaign, CampaignError, NewOptions, Provenance, ResultFile, RunEntry, Shard,
    GIT_COMMIT, RESULT_FORMAT, VERSION,
};
use crate::runner::{self, RunOptions};
use crate::summary;
use crate::sweep::TimedRun;
use scenario::Scenario;

/// What one `campaign run` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardReport {
    /// The shard.
    pub shard: Shard,
    /// Runs in the shard.
    pub runs: usize,
    /// Runs that already had a result (skipped).
    pub already_done: usize,
    /// Runs that finished now.
    pub finished: usize,
    /// Runs that failed now (their error is in `results/<id>.failed.json`).
    pub failed: usize,
}

/// The host name, for provenance (`unknown` if it cannot be read).
pub fn host_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "unknown".into())
}

/// The runs of `shard` that have neither a result nor (unless `retry_failed`) an error file.
/// Existing files of the shard are checked to belong to this campaign.
pub fn pending(
    c: &Campaign,
    shard: Shard,
    retry_failed: bool,
) -> Result<(Vec<&RunEntry>, usize), CampaignError> {
    c.check_names()?;
    let mut todo = Vec::new();
    let mut done = 0;
    for e in c.manifest.runs.iter().filter(|e| shard.contains(e.index)) {
        let path = c.result_path(e);
        if path.exists() {
            c.read_result(&path, e)?;
            done += 1;
            continue;
        }
        let failed = c.failed_path(e);
        if failed.exists() {
            c.read_result(&failed, e)?;
            if !retry_failed {
                continue;
            }
        }
        todo.push(e);
    }
    Ok((todo, done))
}

/// Run one campaign run and write its result (or its error) file.
fn run_one(c: &Campaign, e: &RunEntry, host: &str) -> Result<bool, String> {
    let scenario = &c.plan.scenarios[e.point];
    let cpu0 = crate::parallel::thread_cpu_s();
    let t0 = Instant::now();
    let outcome = runner::simulate(
        scenario,
        &RunOptions {
            seed: Some(e.seed),
            ..RunOptions::default()
        },
    )
    .map(|out| summary::summarize(scenario, &out))
    .map_err(|err| err.to_string());
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_s = match (cpu0, crate::parallel::thread_cpu_s()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let slurm_task = match (
        std::env::var("SLURM_ARRAY_JOB_ID"),
        std::env::var("SLURM_ARRAY_TASK_ID"),
    ) {
        (Ok(j), Ok(t)) => Some(format!("{j}_{t}")),
        _ => std::env::var("SLURM_JOB_ID").ok(),
    };
    let timing = RunTiming {
        wall_s,
        cpu_s,
        slurm_task,
    };
    record(c, e, host, timing, outcome)
}

/// How long a run took and where, for its provenance.
pub(crate) struct RunTiming {
    pub wall_s: f64,
    pub cpu_s: Option<f64>,
    pub slurm_task: Option<String>,
}

/// Write a run's result file, or its error file when it failed (a success removes an earlier
/// error file). Returns whether the run succeeded.
pub(crate) fn record(
    c: &Campaign,
    e: &RunEntry,
    host: &str,
    timing: RunTiming,
    outcome: Result<crate::summary::Summary, String>,
) -> Result<bool, String> {
    let RunTiming {
        wall_s,
        cpu_s,
        slurm_task,
    } = timing;
    let ok = outcome.is_ok();
    let (summary, error) = match outcome {
        Ok(s) => (Some(s), None),
        Err(err) => (None, Some(err)),
    };
    let file = ResultFile {
        format: RESULT_FORMAT.into(),
        campaign: c.manifest.campaign.clone(),
        run: e.id.clone(),
        index: e.index,
        point: e.point,
        seed: e.seed,
        overrides: e.overrides.clone(),
        provenance: Provenance {
            tfrclab_version: VERSION.into(),
            git_commit: GIT_COMMIT.into(),
            scenario_hash: c.manifest.scenario_hash.clone(),
            host: host.to_string(),
            wall_s,
            cpu_s,
            slurm_task,
        },
        summary,
        error,
    };
    let text = serde_json::to_string(&file).map_err(|err| err.to_string())?;
    let path = if ok {
        c.result_path(e)
    } else {
        c.failed_path(e)
    };
    write_atomic(&path, text.as_bytes()).map_err(|err| err.to_string())?;
    if ok {
        // A run that failed before and finished now is done.
        let _ = std::fs::remove_file(c.failed_path(e));
    }
    Ok(ok)
}

/// Run the runs of `shard` that have no result yet on `jobs` threads (failed runs are run
/// again). `on_done` is called after each run. A failing run writes its error and the others
/// go on; only a result that cannot be written stops the shard. When `cancel` is raised no
/// more runs start.
pub fn run_shard(
    c: &Campaign,
    shard: Shard,
    jobs: usize,
    on_start: &dyn Fn(usize),
    on_done: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
) -> Result<ShardReport, CampaignError> {
    let runs = c
        .manifest
        .runs
        .iter()
        .filter(|e| shard.contains(e.index))
        .count();
    let (todo, already_done) = pending(c, shard, true)?;
    on_start(todo.len());
    let host = host_name();
    let outcomes =
        crate::parallel::run_ordered_until(&todo, jobs, on_done, cancel, |e| run_one(c, e, &host))
            .map_err(|(i, err)| {
                CampaignError::Io(format!("{}: {err}", super::describe(todo[i])))
            })?;
    let finished = outcomes.iter().filter(|&&ok| ok).count();
    Ok(ShardReport {
        shard,
        runs,
        already_done,
        finished,
        failed: outcomes.len() - finished,
    })
}

/// Keep the finished runs of an interrupted `tfrclab sweep` as the campaign `dir`: made with
/// `opts` (the sweep's grid and seeds), or opened when `dir` already is that campaign (an
/// earlier interrupted run of the same sweep). Each run's result file is written as
/// `campaign run` writes it, so `campaign run DIR` runs only the others and `campaign merge`
/// writes what the sweep would have written. Returns the campaign and how many of its runs
/// are done.
pub fn keep_runs(
    dir: &Path,
    scenario: &Scenario,
    opts: &NewOptions,
    runs: Vec<TimedRun>,
) -> Result<(Campaign, usize), CampaignError> {
    let c = if dir.join(super::MANIFEST).exists() {
        let c = Campaign::open(dir)?;
        let m = &c.manifest;
        if m.scenario_text != scenario.source
            || m.axes != opts.axes
            || m.seeds != opts.seeds
            || m.seed_base != opts.seed_base
        {
            return Err(CampaignError::Invalid(vec![format!(
                "{} is a campaign of another sweep (scenario, --set, --seeds or --seed-base \
                 differ); the finished runs were not kept there",
                dir.display()
            )]));
        }
        c
    } else {
        Campaign::create(dir, scenario, opts)?
    };
    let host = host_name();
    for t in runs {
        let Some(e) = c
            .manifest
            .runs
            .iter()
            .find(|e| e.point == t.record.point && e.seed == t.record.seed)
        else {
            return Err(CampaignError::Io(format!(
                "grid point {}, seed {}: not a run of {} (a bug: please report it)",
                t.record.point + 1,
                t.record.seed,
                dir.display()
            )));
        };
        let timing = RunTiming {
            wall_s: t.wall_s,
            cpu_s: t.cpu_s,
            slurm_task: None,
        };
        record(&c, e, &host, timing, Ok(t.record.summary)).map_err(CampaignError::Io)?;
    }
    let (_, done) = pending(&c, Shard::ALL, true)?;
    Ok((c, done))
}

/// [`keep_runs`] for an interrupted `tfrclab sweep` of `file` (`text`) that would have written
/// `out`: the campaign is `out.campaign`. Returns what to tell the user: where the runs are and
/// the two commands that finish the sweep (`primary`: its `--primary`).
pub fn keep_interrupted(
    file: &str,
    text: &str,
    out: &Path,
    opts: &NewOptions,
    primary: &[String],
    finished: Vec<TimedRun>,
) -> Result<String, String> {
    if finished.is_empty() {
        return Ok("no run had finished, so nothing was kept".into());
    }
    let total = opts.seeds as usize * crate::sweep::grid(&opts.axes).len();
    let keep = std::path::PathBuf::from(format!("{}.campaign", out.display()));
    let scenario = Scenario::parse(file, text).map_err(|e| e.to_string())?;
    let (_, done) = keep_runs(&keep, &scenario, opts, finished).map_err(|e| e.to_string())?;
    let q = |p: &Path| super::slurm::shell_quote(&p.display().to_string());
    let primary = if primary.is_empty() {
        String::new()
    } else {
        format!(
            " --primary {}",
            super::slurm::shell_quote(&primary.join(","))
        )
    };
    Ok(format!(
        "kept the finished runs in the campaign {} ({done} of {total} runs done). To finish the \
         sweep, run the others and merge them into what this sweep would have written:\n  \
         tfrclab campaign run {}\n  tfrclab campaign merge {} --out {}{primary}",
        keep.display(),
        q(&keep),
        q(&keep),
        q(out),
    ))
}
