//! Parameter sweeps: a grid of scenario overrides × seeds, run in parallel, each metric
//! aggregated over seeds to a mean with a 95% confidence interval ([`crate::stats`]).
//!
//! The pieces, in the order `tfrclab sweep` uses them:
//! - [`parse_axis`]: one `--set KEY=V1,V2,...` (value lists split at top-level commas; see
//!   [`split_values`]);
//! - [`grid`]: the Cartesian product of the axes, first axis outermost;
//! - [`prepare`]: every grid point's scenario validated and built before anything runs, errors
//!   naming the `--set` responsible and the file position;
//! - [`run_all`]: the runs on a rayon pool, results in task order whatever the number of threads;
//! - [`aggregate`]: per (grid point, subject, metric), mean / sd / n / CI;
//! - the writers of `sweep.csv`, `runs.csv`, `sweep.json`, and [`report()`] (or [`report_with`]) for `report.html`.
//!
//! `docs/metrics.md` documents the files' columns.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use netsim::DropCause;
use serde::{Deserialize, Serialize};

use crate::metrics::FlowMetrics;
use crate::runner::{self, RunOptions};
use crate::stats::{MeanCi, CONFIDENCE};
use crate::summary::{self, Summary};
use report::{fmt_num, Cell, ErrorBarChart, ErrorPoint, Estimate, Page, Table};
use scenario::{overrides, units, Scenario};

/// One swept parameter: a dotted scenario key and the values it takes, in the order given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    /// Dotted path into the scenario, as for `--set` (`flows.udp1.rate`).
    pub key: String,
    /// The values as written (each read like a `--set` value: a TOML literal or a bare string).
    pub values: Vec<String>,
}

/// Parse `KEY=V1,V2,...` (the argument of one `sweep --set`).
pub fn parse_axis(arg: &str) -> Result<Axis, String> {
    let (key, list) = match arg.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => (k.trim(), v),
        _ => {
            return Err(format!(
                "'{arg}' is not KEY=V1,V2,... (for example flows.udp1.rate=1Mbps,2Mbps)"
            ))
        }
    };
    let values = split_values(list).map_err(|e| format!("--set {key}: {e}"))?;
    Ok(Axis {
        key: key.to_string(),
        values,
    })
}

/// Split a value list at the commas that are not inside `[...]`, `{...}`, `"..."` or `'...'`,
/// so TOML arrays, inline tables and quoted strings can be values: `[1,2],[3]` is two values,
/// `"a,b"` is one. Each value is trimmed; an empty value or an unbalanced bracket or quote is
/// an error.
pub fn split_values(list: &str) -> Result<Vec<String>, String> {
    let mut values = Vec::new();
    let mut depth: Vec<char> = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut start = 0;
    for (i, c) in list.char_indices() {
        if let Some(q) = quote {
            // TOML basic strings ("...") have backslash escapes; literal strings ('...') do not.
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' => depth.push(']'),
            '{' => depth.push('}'),
            // The guard pops: a matching closer leaves the arm list with the level closed.
            ']' | '}' if depth.pop() != Some(c) => {
                return Err(format!("unbalanced '{c}' in \"{list}\""));
            }
            ',' if depth.is_empty() => {
                values.push(list[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    if let Some(q) = quote {
        return Err(format!("unclosed {q} in \"{list}\""));
    }
    if let Some(close) = depth.last() {
        return Err(format!("missing '{close}' in \"{list}\""));
    }
    values.push(list[start..].trim().to_string());
    if values.iter().any(String::is_empty) {
        return Err(format!(
            "empty value in \"{list}\" (values are separated by single commas)"
        ));
    }
    Ok(values)
}

/// One combination of axis values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridPoint {
    /// Position in the grid (0-based, first axis outermost).
    pub index: usize,
    /// For each axis, the index of its value.
    pub value_index: Vec<usize>,
    /// `(key, value)` for each axis, in axis order.
    pub assignments: Vec<(String, String)>,
}

impl GridPoint {
    /// `key=value, key=value` (or `the scenario as written` without axes).
    pub fn label(&self) -> String {
        if self.assignments.is_empty() {
            return "the scenario as written".to_string();
        }
        self.assignments
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every combination of the axes' values, first axis outermost (slowest-changing). No axes give
/// one point: the scenario as written.
pub fn grid(axes: &[Axis]) -> Vec<GridPoint> {
    let mut points = vec![Vec::<usize>::new()];
    for axis in axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                (0..axis.values.len()).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    points
        .into_iter()
        .enumerate()
        .map(|(index, value_index)| GridPoint {
            index,
            assignments: axes
                .iter()
                .zip(&value_index)
                .map(|(a, &i)| (a.key.clone(), a.values[i].clone()))
                .collect(),
            value_index,
        })
        .collect()
}

/// Validate (and build, without running) the scenario of every grid point. `file` names the
/// scenario in messages; `text` is its content.
///
/// On failure, returns one message per distinct problem. A value that fails at every grid point
/// it is part of is blamed on its own, as `--set KEY=VALUE: file:line:col: ...`; a problem that
/// only some combinations have names the grid point.
pub fn prepare(file: &str, text: &str, axes: &[Axis]) -> Result<Vec<Scenario>, Vec<String>> {
    let mut seen = std::collections::HashSet::new();
    for a in axes {
        if !seen.insert(a.key.as_str()) {
            return Err(vec![format!(
                "--set {} is given more than once; give all its values in one --set {}=V1,V2,...",
                a.key, a.key
            )]);
        }
    }
    let points = grid(axes);
    let check = |sets: &[(String, String)]| -> Result<Scenario, String> {
        let s = point_scenario(file, text, sets)?;
        // Building catches what only the simulator checks (e.g. a TFRC profile's limits), so a
        // sweep never fails half-way on input it could have rejected up front.
        runner::build(&s, &RunOptions::default()).map_err(|e| format!("{file}: {e}"))?;
        Ok(s)
    };
    let results: Vec<Result<Scenario, String>> =
        points.iter().map(|p| check(&p.assignments)).collect();
    // (axis, value index) pairs that fail wherever they occur.
    let always_fails = |axis: usize, value: usize| {
        points
            .iter()
            .zip(&results)
            .filter(|(p, _)| p.value_index[axis] == value)
            .all(|(_, r)| r.is_err())
    };
    let mut errors: Vec<String> = Vec::new();
    let mut blamed: Vec<(usize, usize)> = Vec::new();
    for (p, r) in points.iter().zip(&results) {
        let Err(e) = r else { continue };
        let culprits: Vec<(usize, usize)> = p
            .value_index
            .iter()
            .enumerate()
            .map(|(axis, &value)| (axis, value))
            .filter(|&(axis, value)| always_fails(axis, value))
            .collect();
        let msg = if culprits.is_empty() {
            format!(
                "grid point {} of {} ({}): {e}",
                p.index + 1,
                points.len(),
                p.label()
            )
        } else {
            if culprits.iter().all(|c| blamed.contains(c)) {
                continue;
            }
            blamed.extend(&culprits);
            let names: Vec<String> = culprits
                .iter()
                .map(|&(axis, value)| {
                    format!("--set {}={}", axes[axis].key, axes[axis].values[value])
                })
                .collect();
            // An override that cannot be applied already names itself.
            if culprits.len() == 1 && e.contains(&format!("{}: ", names[0])) {
                e.clone()
            } else {
                format!("{}: {e}", names.join(", "))
            }
        };
        if !errors.contains(&msg) {
            errors.push(msg);
        }
    }
    if errors.is_empty() {
        Ok(results.into_iter().filter_map(Result::ok).collect())
    } else {
        Err(errors)
    }
}

/// The scenario of one grid point: `text` (named `file` in messages) with the point's `sets`
/// applied, as [`prepare`] builds it (without the build check). A worker that is handed a run as
/// text (a Dask task) gets the very scenario the sweep would run.
pub fn point_scenario(
    file: &str,
    text: &str,
    sets: &[(String, String)],
) -> Result<Scenario, String> {
    let applied = overrides::apply(file, text, sets).map_err(|e| e.to_string())?;
    Scenario::parse(file, &applied).map_err(|e| e.to_string())
}

/// `n` consecutive seeds from `base`; an error if they would pass `u64::MAX`.
pub fn seeds_from(base: u64, n: u32) -> Result<Vec<u64>, String> {
    (0..u64::from(n))
        .map(|i| {
            base.checked_add(i)
                .ok_or_else(|| format!("seeds {base} + 0..{n} pass the largest seed {}", u64::MAX))
        })
        .collect()
}

/// One simulation of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    /// Grid point index.
    pub point: usize,
    /// Seed.
    pub seed: u64,
}

/// What one run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    /// Grid point index.
    pub point: usize,
    /// Seed.
    pub seed: u64,
    /// Its `summary.json`.
    pub summary: Summary,
}

/// Run every task on `jobs` threads; `on_done` is called after each run (for progress).
///
/// Results come back in task order whatever the number of threads, so everything computed from
/// them is independent of `jobs`. The first failing task (in task order) is returned as an error
/// naming the grid point and seed; once a run fails, runs not yet started are skipped.
pub fn run_all(
    scenarios: &[Scenario],
    points: &[GridPoint],
    tasks: &[Task],
    jobs: usize,
    on_done: &(dyn Fn() + Sync),
) -> Result<Vec<RunRecord>, String> {
    run_all_until(
        scenarios,
        points,
        tasks,
        jobs,
        on_done,
        &std::sync::atomic::AtomicBool::new(false),
    )
}

/// [`run_all`] that starts no more runs once `cancel` is raised (see
/// [`crate::parallel::run_ordered_until`]); the caller tells a cancellation by the flag.
pub fn run_all_until(
    scenarios: &[Scenario],
    points: &[GridPoint],
    tasks: &[Task],
    jobs: usize,
    on_done: &(dyn Fn() + Sync),
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Vec<RunRecord>, String> {
    let kept = run_all_kept(scenarios, points, tasks, jobs, on_done, cancel)?;
    let mut out = Vec::with_capacity(kept.len());
    for (i, r) in kept.into_iter().enumerate() {
        match r {
            Some(r) => out.push(r.record),
            None => {
                return Err(task_error(
                    points,
                    tasks[i],
                    "skipped: the run was cancelled",
                ))
            }
        }
    }
    Ok(out)
}

/// A finished run of [`run_all_kept`] and how long it took (as a campaign's result file
/// records it).
#[derive(Clone, Debug)]
pub struct TimedRun {
    /// What the run produced.
    pub record: RunRecord,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// CPU seconds of its thread, where the platform tells.
    pub cpu_s: Option<f64>,
}

/// [`run_all_until`] that keeps what finished: per task its run, or `None` for a task not
/// started because `cancel` was raised. A failing run is an error, as for [`run_all`].
pub fn run_all_kept(
    scenarios: &[Scenario],
    points: &[GridPoint],
    tasks: &[Task],
    jobs: usize,
    on_done: &(dyn Fn() + Sync),
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Vec<Option<TimedRun>>, String> {
    let kept = crate::parallel::run_ordered_kept(tasks, jobs, on_done, cancel, |t: &Task| {
        let s = &scenarios[t.point];
        let opts = RunOptions {
            seed: Some(t.seed),
            ..RunOptions::default()
        };
        let cpu0 = crate::parallel::thread_cpu_s();
        let t0 = std::time::Instant::now();
        let summary = runner::simulate(s, &opts)
            .map(|out| summary::summarize(s, &out))
            .map_err(|e| e.to_string())?;
        Ok(TimedRun {
            record: RunRecord {
                point: t.point,
                seed: t.seed,
                summary,
            },
            wall_s: t0.elapsed().as_secs_f64(),
            cpu_s: cpu0
                .zip(crate::parallel::thread_cpu_s())
                .map(|(a, b)| b - a),
        })
    })?;
    let mut out = Vec::with_capacity(kept.len());
    for (i, r) in kept.into_iter().enumerate() {
        match r {
            Some(Ok(v)) => out.push(Some(v)),
            Some(Err(e)) => return Err(task_error(points, tasks[i], &e)),
            None => out.push(None),
        }
    }
    Ok(out)
}

/// `grid point 2 (rate=2Mbps), seed 3: <message>`.
fn task_error(points: &[GridPoint], t: Task, e: &str) -> String {
    let label = points
        .get(t.point)
        .map(GridPoint::label)
        .unwrap_or_default();
    format!("grid point {} ({label}), seed {}: {e}", t.point + 1, t.seed)
}

/// One number a run produced: `metric` of `subject` (a flow name, a flow kind for the
/// per-kind fairness metrics, or a link direction for the RED metrics).
#[derive(Clone, Debug, PartialEq)]
pub struct MetricValue {
    /// Flow name; flow kind for `jain_index` and `seed004_byte_difference`; link name with
    /// `>` or `<` for `red_*`.
    pub subject: String,
    /// Metric name (as in `flows.csv`, plus `jain_index`, `seed004_byte_difference`,
    /// `friendliness`).
    pub metric: String,
    /// The value.
    pub value: f64,
}

/// The per-flow metrics that sweeps aggregate, in `flows.csv` order, with their values.
pub fn flow_metric_values(f: &FlowMetrics) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = vec![
        ("sent_packets".into(), f.sent_packets as f64),
        ("received_packets".into(), f.received_packets as f64),
        ("dropped_packets".into(), f.dropped_packets as f64),
    ];
    for c in DropCause::ALL {
        let n = f.dropped_by_cause.get(c.name()).copied().unwrap_or(0);
        v.push((format!("dropped_{}", c.name()), n as f64));
    }
    v.extend([
        ("generated_packets".into(), f.generated_packets as f64),
        ("throughput_bps".into(), f.throughput_bps),
        ("goodput_bps".into(), f.goodput_bps),
        ("loss_rate".into(), f.loss_rate),
        ("pdr".into(), f.pdr),
        ("delay_mean_s".into(), f.delay_mean_s),
        ("delay_median_s".into(), f.delay_median_s),
        ("delay_p95_s".into(), f.delay_p95_s),
        ("delay_p99_s".into(), f.delay_p99_s),
        ("jitter_mean_s".into(), f.jitter_mean_s),
        ("jitter_range_s".into(), f.jitter_range_s),
        ("jitter_rfc3550_s".into(), f.jitter_rfc3550_s),
        ("smoothness_cov".into(), f.smoothness_cov),
        ("exposed_packets".into(), f.exposed_packets as f64),
        ("marked_packets".into(), f.marked_packets as f64),
    ]);
    v
}

/// Every number of a run that a sweep aggregates: each flow's metrics (flow by flow), then
/// Jain's index and seed 004's byte difference per flow kind, then each TFRC flow's
/// friendliness (when a TCP flow shares its bottleneck), then the variant metrics: each TFRC
/// flow's numeric `tfrc[]` fields as `tfrc_<field>` (and its classifier's accuracy as
/// `tfrc_classifier_accuracy`), each RED link direction's `links[].red` fields as
/// `red_<field>` (subject: link name with `>` forward or `<` reverse).
pub fn metric_values(s: &Summary) -> Vec<MetricValue> {
    let mut out = Vec::new();
    for f in &s.flows {
        for (metric, value) in flow_metric_values(f) {
            out.push(MetricValue {
                subject: f.name.clone(),
                metric,
                value,
            });
        }
    }
    for (kind, j) in &s.fairness.jain {
        out.push(MetricValue {
            subject: kind.clone(),
            metric: "jain_index".into(),
            value: *j,
        });
    }
    for (kind, d) in &s.fairness.seed004_byte_difference {
        out.push(MetricValue {
            subject: kind.clone(),
            metric: "seed004_byte_difference".into(),
            value: *d as f64,
        });
    }
    for f in &s.fairness.friendliness {
        for (metric, v) in [
            ("friendliness", f.ratio),
            ("friendliness_same_rtt", f.same_rtt_ratio),
            ("friendliness_aggregate", f.aggregate_ratio),
        ] {
            if let Some(value) = v {
                out.push(MetricValue {
                    subject: f.flow.clone(),
                    metric: metric.into(),
                    value,
                });
            }
        }
    }
    // Variant metrics: every numeric field, taken from their JSON form so that a field added
    // to `tfrc[]` or `links[].red` is swept without a change here.
    for t in &s.tfrc {
        let v = serde_json::to_value(t).unwrap_or_default();
        numeric_fields(&v, "tfrc_", &t.flow, &mut out);
        if let Some(a) = v
            .get("confusion")
            .and_then(|c| c.get("accuracy"))
            .and_then(serde_json::Value::as_f64)
        {
            out.push(MetricValue {
                subject: t.flow.clone(),
                metric: "tfrc_classifier_accuracy".into(),
                value: a,
            });
        }
    }
    for l in &s.links {
        if let Some(red) = &l.red {
            let arrow = if l.direction == "reverse" { "<" } else { ">" };
            let v = serde_json::to_value(red).unwrap_or_default();
            numeric_fields(&v, "red_", &format!("{}{arrow}", l.name), &mut out);
        }
    }
    out
}

/// The top-level numbers of a JSON object as metrics `prefix` + field name, in field-name order
/// (sorted here, whatever order the JSON map keeps); nulls, booleans, strings and nested values
/// are not metrics.
fn numeric_fields(v: &serde_json::Value, prefix: &str, subject: &str, out: &mut Vec<MetricValue>) {
    let Some(obj) = v.as_object() else {
        return;
    };
    let mut fields: Vec<(&String, &serde_json::Value)> = obj.iter().collect();
    fields.sort_by(|a, b| a.0.cmp(b.0));
    for (k, x) in fields {
        if let Some(value) = x.as_f64() {
            out.push(MetricValue {
                subject: subject.to_string(),
                metric: format!("{prefix}{k}"),
                value,
            });
        }
    }
}

/// The mean and CI of one metric of one subject at one grid point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    /// Grid point index.
    pub point: usize,
    /// Flow name (or kind).
    pub subject: String,
    /// Metric name.
    pub metric: String,
    /// Over the point's runs that produced the metric.
    #[serde(flatten)]
    pub stat: MeanCi,
}

/// Aggregate `runs` (in task order) per (grid point, subject, metric). Rows come point by
/// point; within a point, (subject, metric) pairs in the order they first appear in any run,
/// so every point lists them alike.
pub fn aggregate(points: usize, runs: &[RunRecord]) -> Vec<Aggregate> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut samples: Vec<Vec<Vec<f64>>> = vec![Vec::new(); points];
    for r in runs {
        let Some(per_point) = samples.get_mut(r.point) else {
            continue;
        };
        for mv in metric_values(&r.summary) {
            let key = (mv.subject, mv.metric);
            let k = *index.entry(key.clone()).or_insert_with(|| {
                order.push(key);
                order.len() - 1
            });
            if per_point.len() <= k {
                per_point.resize(k + 1, Vec::new());
            }
            per_point[k].push(mv.value);
        }
    }
    let mut out = Vec::new();
    for (p, per_point) in samples.iter().enumerate() {
        for (k, (subject, metric)) in order.iter().enumerate() {
            if let Some(stat) = per_point.get(k).and_then(|xs| MeanCi::of(xs)) {
                out.push(Aggregate {
                    point: p,
                    subject: subject.clone(),
                    metric: metric.clone(),
                    stat,
                });
            }
        }
    }
    out
}

/// Everything a sweep produced.
#[derive(Clone, Debug)]
pub struct SweepResult {
    /// The scenario's name (of the first grid point).
    pub scenario: String,
    /// The scenario file as named on the command line.
    pub file: String,
    /// The scenario file's text as written (before overrides).
    pub source: String,
    /// The swept axes.
    pub axes: Vec<Axis>,
    /// The grid.
    pub points: Vec<GridPoint>,
    /// The seeds run at each grid point.
    pub seeds: Vec<Vec<u64>>,
    /// Every run, in task order (point by point, seeds in order).
    pub runs: Vec<RunRecord>,
    /// Aggregates, from [`aggregate`].
    pub aggregates: Vec<Aggregate>,
    /// Worker threads used.
    pub jobs: usize,
    /// Wall-clock time of all runs.
    pub wall: Duration,
}

fn opt(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

/// The extra last columns of `sweep.csv` and `runs.csv`: for each axis whose values all read
/// as bandwidths or durations ([`numeric_values`]), the values as numbers in a column named
/// with the unit (`topology.bottleneck_bandwidth (Mb/s)`), so that tools need not parse
/// "10Mbps". Last, so the columns before them keep their places.
fn numeric_grid_header(r: &SweepResult) -> Vec<String> {
    r.axes
        .iter()
        .filter_map(|a| match numeric_values(&a.values) {
            Some((_, unit)) if !unit.is_empty() => Some(format!("{} ({unit})", a.key)),
            _ => None,
        })
        .collect()
}

/// Grid point `point`'s cells under [`numeric_grid_header`].
fn numeric_grid_cells(r: &SweepResult, point: usize) -> Vec<String> {
    let Some(p) = r.points.get(point) else {
        return Vec::new();
    };
    r.axes
        .iter()
        .enumerate()
        .filter_map(|(k, a)| match numeric_values(&a.values) {
            Some((xs, unit)) if !unit.is_empty() => Some(xs[p.value_index[k]].to_string()),
            _ => None,
        })
        .collect()
}

/// `sweep.csv`: one row per (grid point, subject, metric): `point` (1-based, grid order), one
/// column per axis (named by its key, holding the value), `subject`, `metric`, `n`, `mean`,
/// `sd`, `ci_half_width`, `ci_lo`, `ci_hi` (the last four empty when n = 1).
pub fn write_sweep_csv(path: &Path, r: &SweepResult) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    let mut header = vec!["point".to_string()];
    header.extend(r.axes.iter().map(|a| a.key.clone()));
    header.extend(
        [
            "subject",
            "metric",
            "n",
            "mean",
            "sd",
            "ci_half_width",
            "ci_lo",
            "ci_hi",
        ]
        .map(String::from),
    );
    header.extend(numeric_grid_header(r));
    w.write_record(&header)?;
    for a in &r.aggregates {
        let mut rec = vec![(a.point + 1).to_string()];
        if let Some(p) = r.points.get(a.point) {
            rec.extend(p.assignments.iter().map(|(_, v)| v.clone()));
        }
        rec.extend([
            a.subject.clone(),
            a.metric.clone(),
            a.stat.n.to_string(),
            a.stat.mean.to_string(),
            opt(a.stat.sd),
            opt(a.stat.ci_half_width),
            opt(a.stat.ci_lo()),
            opt(a.stat.ci_hi()),
        ]);
        rec.extend(numeric_grid_cells(r, a.point));
        w.write_record(&rec)?;
    }
    w.flush()?;
    Ok(())
}

/// `runs.csv`: every run's raw numbers, one row per (run, subject, metric): `point`, one column
/// per axis, `run_seed`, `subject`, `metric`, `value`.
pub fn write_runs_csv(path: &Path, r: &SweepResult) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    let mut header = vec!["point".to_string()];
    header.extend(r.axes.iter().map(|a| a.key.clone()));
    header.extend(["run_seed", "subject", "metric", "value"].map(String::from));
    header.extend(numeric_grid_header(r));
    w.write_record(&header)?;
    for run in &r.runs {
        let numbers = numeric_grid_cells(r, run.point);
        let mut prefix = vec![(run.point + 1).to_string()];
        if let Some(p) = r.points.get(run.point) {
            prefix.extend(p.assignments.iter().map(|(_, v)| v.clone()));
        }
        prefix.push(run.seed.to_string());
        for mv in metric_values(&run.summary) {
            let mut rec = prefix.clone();
            rec.extend([mv.subject, mv.metric, mv.value.to_string()]);
            rec.extend(numbers.iter().cloned());
            w.write_record(&rec)?;
        }
    }
    w.flush()?;
    Ok(())
}

/// `sweep.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepJson {
    /// Scenario name.
    pub scenario: String,
    /// Scenario file as named on the command line.
    pub file: String,
    /// The swept axes.
    pub axes: Vec<Axis>,
    /// Seeds per grid point.
    pub seeds_per_point: usize,
    /// The confidence level of the intervals (0.95).
    pub confidence: f64,
    /// Number of runs.
    pub runs: usize,
    /// Worker threads.
    pub jobs: usize,
    /// Wall-clock seconds for all runs (the only field that depends on the machine and `jobs`).
    pub wall_s: f64,
    /// Per grid point.
    pub points: Vec<PointJson>,
}

/// One grid point in `sweep.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointJson {
    /// Grid point number (1-based, as in `sweep.csv`).
    pub point: usize,
    /// Axis key → value.
    pub values: BTreeMap<String, String>,
    /// The seeds run.
    pub seeds: Vec<u64>,
    /// The aggregates of this point.
    pub metrics: Vec<MetricJson>,
}

/// One aggregate in `sweep.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricJson {
    /// Flow name (or kind).
    pub subject: String,
    /// Metric name.
    pub metric: String,
    /// Runs that produced it.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (null when n = 1).
    pub sd: Option<f64>,
    /// 95% CI half-width (null when n = 1).
    pub ci_half_width: Option<f64>,
    /// CI lower end.
    pub ci_lo: Option<f64>,
    /// CI upper end.
    pub ci_hi: Option<f64>,
}

/// The content of `sweep.json`.
pub fn sweep_json(r: &SweepResult) -> SweepJson {
    let points = r
        .points
        .iter()
        .map(|p| PointJson {
            point: p.index + 1,
            values: p.assignments.iter().cloned().collect(),
            seeds: r.seeds.get(p.index).cloned().unwrap_or_default(),
            metrics: r
                .aggregates
                .iter()
                .filter(|a| a.point == p.index)
                .map(|a| MetricJson {
                    subject: a.subject.clone(),
                    metric: a.metric.clone(),
                    n: a.stat.n,
                    mean: a.stat.mean,
                    sd: a.stat.sd,
                    ci_half_width: a.stat.ci_half_width,
                    ci_lo: a.stat.ci_lo(),
                    ci_hi: a.stat.ci_hi(),
                })
                .collect(),
        })
        .collect();
    SweepJson {
        scenario: r.scenario.clone(),
        file: r.file.clone(),
        axes: r.axes.clone(),
        seeds_per_point: r.seeds.first().map_or(0, Vec::len),
        confidence: CONFIDENCE,
        runs: r.runs.len(),
        jobs: r.jobs,
        wall_s: r.wall.as_secs_f64(),
        points,
    }
}

/// Write `sweep.json`, pretty-printed.
pub fn write_sweep_json(path: &Path, r: &SweepResult) -> anyhow::Result<()> {
    // Buffered: the serialiser writes token by token, a system call each unbuffered
    // (2.2 million of them, 1.6 s, for a 2,000-flow summary).
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    serde_json::to_writer_pretty(&mut f, &sweep_json(r))?;
    f.write_all(b"\n")?;
    f.flush()?;
    Ok(())
}

/// The axis drawn along x: the first one with more than one value (else the first one).
pub fn x_axis(axes: &[Axis]) -> Option<usize> {
    axes.iter()
        .position(|a| a.values.len() > 1)
        .or(if axes.is_empty() { None } else { Some(0) })
}

fn unquote(s: &str) -> &str {
    let t = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    t
}

/// Numeric x positions for an axis's values, with the unit of the axis label, when every value
/// reads as a plain number, or every value as a bandwidth (shown in Mb/s), or every value as a
/// duration (s, or ms when all are below a second). Otherwise the axis is categorical.
pub fn numeric_values(values: &[String]) -> Option<(Vec<f64>, &'static str)> {
    fn all(values: &[String], f: impl Fn(&str) -> Option<f64>) -> Option<Vec<f64>> {
        values
            .iter()
            .map(|v| f(unquote(v)).filter(|x| x.is_finite()))
            .collect()
    }
    if let Some(xs) = all(values, |v| v.parse::<f64>().ok()) {
        return Some((xs, ""));
    }
    if let Some(xs) = all(values, |v| units::parse_bandwidth(v).ok()) {
        return Some((xs.iter().map(|x| x / 1e6).collect(), "Mb/s"));
    }
    if let Some(xs) = all(values, |v| {
        units::parse_duration(v).ok().map(|d| d.as_secs_f64())
    }) {
        if xs.iter().all(|&x| x < 1.0) {
            return Some((xs.iter().map(|x| x * 1e3).collect(), "ms"));
        }
        return Some((xs, "s"));
    }
    None
}

/// How a metric is shown: scale factor and unit.
pub fn display_unit(metric: &str) -> (f64, &'static str) {
    if metric.ends_with("_bps") {
        (1e-6, "Mb/s")
    } else if metric.ends_with("_s") {
        (1e3, "ms")
    } else if metric.ends_with("_packets") {
        (1.0, "packets")
    } else if metric == "seed004_byte_difference" {
        (1.0, "bytes")
    } else {
        (1.0, "")
    }
}

fn with_unit(name: &str, unit: &str) -> String {
    if unit.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({unit})")
    }
}

/// The metrics a sweep report opens with unless `--primary` names others.
pub const DEFAULT_PRIMARY: [&str; 2] = ["throughput_bps", "friendliness"];

/// Whether `metric` is the one `--primary` named: the same name, or a name that extends it
/// after an underscore (`friendliness` takes in `friendliness_same_rtt`).
pub fn is_primary(metric: &str, named: &str) -> bool {
    metric == named
        || metric
            .strip_prefix(named)
            .is_some_and(|rest| rest.starts_with('_'))
}

/// [`report_with`] opening with [`DEFAULT_PRIMARY`].
pub fn report(r: &SweepResult) -> Page {
    let primary: Vec<String> = DEFAULT_PRIMARY.iter().map(|m| m.to_string()).collect();
    report_with(r, &primary)
}

/// Pantheon's throughput–delay plot over a sweep: a series per flow, a point per grid point.
fn throughput_delay(r: &SweepResult) -> report::ScatterChart {
    let mean = |p: usize, subject: &str, metric: &str| {
        r.aggregates
            .iter()
            .find(|a| a.point == p && a.subject == subject && a.metric == metric)
            .map_or(f64::NAN, |a| a.stat.mean)
    };
    let mut flows: Vec<&str> = Vec::new();
    for a in r.aggregates.iter().filter(|a| a.metric == "throughput_bps") {
        if !flows.contains(&a.subject.as_str()) {
            flows.push(&a.subject);
        }
    }
    let mut c = report::ScatterChart::new(
        "Throughput against delay, per flow",
        "one-way delay (ms): mean, whisker to p95",
        "throughput (Mb/s)",
    );
    for f in flows {
        let pts = r
            .points
            .iter()
            .map(|p| report::ScatterPoint {
                x: mean(p.index, f, "delay_mean_s") * 1e3,
                y: mean(p.index, f, "throughput_bps") / 1e6,
                x_range: (
                    mean(p.index, f, "delay_mean_s") * 1e3,
                    mean(p.index, f, "delay_p95_s") * 1e3,
                ),
                label: p.label(),
            })
            .collect();
        c = c.series(f, pts);
    }
    c
}

/// `report.html` of a sweep: the `primary` metrics first (in the order named), then the
/// throughput–delay plot and the grid, then every other metric; for every metric, a chart of
/// mean ± 95% CI against the first swept parameter (one series per subject and combination of
/// the other axes) and a table.
pub fn report_with(r: &SweepResult, primary: &[String]) -> Page {
    let mut page = Page::new(format!("tfrclab sweep: {}", r.scenario));
    let n_seeds = r.seeds.first().map_or(0, Vec::len);
    let intro = page.intro();
    intro.paragraph(format!(
        "{} grid point(s) × {} seed(s) = {} runs of {}, on {} thread(s) in {} s of wall-clock time.",
        r.points.len(),
        n_seeds,
        r.runs.len(),
        r.file,
        r.jobs,
        fmt_num(r.wall.as_secs_f64())
    ));
    intro.paragraph(format!(
        "Each point is the mean over seeds; bars are the {}% confidence interval of the mean (Student t, n − 1 degrees of freedom). Definitions of every metric: docs/metrics.md.",
        fmt_num(CONFIDENCE * 100.0)
    ));
    if n_seeds < 2 {
        intro.note(
            "One seed per grid point: no confidence intervals can be estimated (n = 1). Run with --seeds 2 or more.",
        );
    }

    let mut grid_table = Table::new(
        std::iter::once("point".to_string())
            .chain(r.axes.iter().map(|a| a.key.clone()))
            .chain(std::iter::once("seeds".to_string())),
    );
    for p in &r.points {
        let seeds = r.seeds.get(p.index).cloned().unwrap_or_default();
        let seed_text = match (seeds.first(), seeds.last()) {
            (Some(a), Some(b)) if a != b => format!("{a}–{b}"),
            (Some(a), _) => a.to_string(),
            _ => String::new(),
        };
        let mut row = vec![Cell::num((p.index + 1) as f64)];
        row.extend(p.assignments.iter().map(|(_, v)| Cell::new(v)));
        row.push(Cell::new(seed_text));
        grid_table.push_row(row);
    }
    let mut grid_section = Some(grid_table);

    let xi = x_axis(&r.axes);
    let numeric = xi.and_then(|i| numeric_values(&r.axes[i].values));
    let x_label = match (xi, &numeric) {
        (Some(i), Some((_, unit))) => with_unit(&r.axes[i].key, unit),
        (Some(i), None) => r.axes[i].key.clone(),
        (None, _) => "scenario".to_string(),
    };
    let log_x = numeric.as_ref().is_some_and(|(xs, _)| {
        let (lo, hi) = xs.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
        xs.iter().all(|&x| x > 0.0) && hi / lo >= 100.0
    });

    // Metrics and subjects in first-appearance order.
    let mut metrics: Vec<&str> = Vec::new();
    for a in &r.aggregates {
        if !metrics.contains(&a.metric.as_str()) {
            metrics.push(&a.metric);
        }
    }
    let lookup: HashMap<(usize, &str, &str), &Aggregate> = r
        .aggregates
        .iter()
        .map(|a| ((a.point, a.subject.as_str(), a.metric.as_str()), a))
        .collect();
    // Combinations of the other axes, in grid order: the points where the x axis is at its
    // first value stand for them.
    let combos: Vec<&GridPoint> = r
        .points
        .iter()
        .filter(|p| xi.is_none_or(|i| p.value_index[i] == 0))
        .collect();
    let point_at = |combo: &GridPoint, x: usize| -> Option<usize> {
        match xi {
            None => Some(combo.index),
            Some(i) => r.points.iter().position(|p| {
                p.value_index.iter().enumerate().all(|(k, &v)| {
                    if k == i {
                        v == x
                    } else {
                        v == combo.value_index[k]
                    }
                })
            }),
        }
    };
    let combo_label = |combo: &GridPoint| -> String {
        combo
            .assignments
            .iter()
            .enumerate()
            .filter(|(k, _)| Some(*k) != xi && r.axes[*k].values.len() > 1)
            .map(|(_, (key, v))| format!("{key}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let x_count = xi.map_or(1, |i| r.axes[i].values.len());
    let x_value = |x: usize| -> report::XValue {
        match (xi, &numeric) {
            (Some(_), Some((xs, _))) => xs[x].into(),
            (Some(i), None) => r.axes[i].values[x].clone().into(),
            (None, _) => r.scenario.clone().into(),
        }
    };

    let rank = |m: &str| {
        primary
            .iter()
            .position(|p| is_primary(m, p))
            .unwrap_or(primary.len())
    };
    metrics.sort_by_key(|m| rank(m));
    let mut all_zero = Vec::new();
    for metric in metrics.into_iter().map(Some).chain([None]) {
        // After the primary metrics: the throughput–delay plot and the grid.
        if metric.is_none_or(|m| rank(m) == primary.len()) {
            if let Some(t) = grid_section.take() {
                page.section("Throughput and delay").figure(
                    &throughput_delay(r),
                    "Per flow and grid point: mean throughput against mean one-way delay over \
                     seeds (whisker: to the mean 95th percentile delay); hover a point for its \
                     grid values.",
                );
                page.section("Grid").table(t);
            }
        }
        let Some(metric) = metric else { break };
        let subjects: Vec<&str> = {
            let mut v: Vec<&str> = Vec::new();
            for a in r.aggregates.iter().filter(|a| a.metric == metric) {
                if !v.contains(&a.subject.as_str()) {
                    v.push(&a.subject);
                }
            }
            v
        };
        let zero = r
            .aggregates
            .iter()
            .filter(|a| a.metric == metric)
            .all(|a| a.stat.mean == 0.0 && a.stat.ci_half_width.unwrap_or(0.0) == 0.0);
        if zero {
            all_zero.push(metric);
            continue;
        }
        let (scale, unit) = display_unit(metric);
        let mut chart =
            ErrorBarChart::new(metric, x_label.clone(), with_unit(metric, unit)).log_x(log_x);
        let mut table = Table::new(
            r.axes
                .iter()
                .map(|a| a.key.clone())
                .chain(subjects.iter().map(|s| with_unit(s, unit))),
        );
        for &subject in &subjects {
            for combo in &combos {
                let label = combo_label(combo);
                let name = if label.is_empty() {
                    subject.to_string()
                } else {
                    format!("{subject}, {label}")
                };
                let pts: Vec<ErrorPoint> = (0..x_count)
                    .filter_map(|x| {
                        let p = point_at(combo, x)?;
                        let a = lookup.get(&(p, subject, metric))?;
                        let m = a.stat.mean * scale;
                        Some(match a.stat.ci_half_width {
                            Some(h) => ErrorPoint::symmetric(x_value(x), m, h * scale),
                            None => ErrorPoint::new(x_value(x), m, f64::NAN, f64::NAN),
                        })
                    })
                    .collect();
                chart = chart.series(name, pts);
            }
        }
        for p in &r.points {
            let mut row: Vec<Cell> = p.assignments.iter().map(|(_, v)| Cell::new(v)).collect();
            for &subject in &subjects {
                row.push(match lookup.get(&(p.index, subject, metric)) {
                    Some(a) => {
                        let e = match a.stat.ci_half_width {
                            Some(h) => Estimate::with_half_width(a.stat.mean * scale, h * scale),
                            None => Estimate::point(a.stat.mean * scale),
                        };
                        let sd = a
                            .stat
                            .sd
                            .map(|s| format!(", sd = {}", fmt_num(s * scale)))
                            .unwrap_or_default();
                        Cell::new(e.text()).title(format!("n = {}{sd}", a.stat.n))
                    }
                    None => Cell::new("—").title("no run produced this metric"),
                });
            }
            table.push_row(row);
        }
        page.section(metric)
            .figure(&chart, "Mean over seeds with 95% confidence interval.")
            .table(table);
    }
    if !all_zero.is_empty() {
        page.section("Metrics that are zero everywhere")
            .paragraph(format!(
                "Not charted, zero at every grid point for every subject: {}.",
                all_zero.join(", ")
            ));
    }
    page.section("Scenario").pre(r.source.clone());
    page
}

/// Per grid point and flow: mean throughput and loss rate with their CI half-widths; or, when
/// `primary` names metrics (`--primary`), those metrics per grid point and subject.
pub fn text_table(r: &SweepResult, primary: &[String]) -> String {
    if !primary.is_empty() {
        return primary_table(r, primary);
    }
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

/// The `--primary` metrics (and those that extend them after an underscore), in the order
/// named, per grid point and subject: mean and CI half-width in display units.
fn primary_table(r: &SweepResult, primary: &[String]) -> String {
    let mut metrics: Vec<&str> = Vec::new();
    for p in primary {
        for a in &r.aggregates {
            if is_primary(&a.metric, p) && !metrics.contains(&a.metric.as_str()) {
                metrics.push(&a.metric);
            }
        }
    }
    let mut header = vec!["point".to_string(), "values".into(), "subject".into()];
    for m in &metrics {
        let (_, unit) = display_unit(m);
        header.push(if unit.is_empty() {
            m.to_string()
        } else {
            format!("{m} ({unit})")
        });
        header.push("±95%".into());
    }
    let mut rows = vec![header];
    for p in &r.points {
        let mut subjects: Vec<&str> = Vec::new();
        for a in r.aggregates.iter().filter(|a| a.point == p.index) {
            if metrics.contains(&a.metric.as_str()) && !subjects.contains(&a.subject.as_str()) {
                subjects.push(&a.subject);
            }
        }
        for s in subjects {
            let mut row = vec![(p.index + 1).to_string(), p.label(), s.to_string()];
            for m in &metrics {
                let (scale, _) = display_unit(m);
                match r
                    .aggregates
                    .iter()
                    .find(|a| a.point == p.index && a.subject == s && a.metric == *m)
                {
                    Some(a) => {
                        row.push(report::fmt_num(a.stat.mean * scale));
                        row.push(
                            a.stat
                                .ci_half_width
                                .map_or_else(|| "-".into(), |h| report::fmt_num(h * scale)),
                        );
                    }
                    None => row.extend(["-".to_string(), "-".to_string()]),
                }
            }
            rows.push(row);
        }
    }
    report::text::aligned(&rows, &[1, 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_at_top_level_commas_only() {
        assert_eq!(
            split_values("1Mbps, 2Mbps,3Mbps").unwrap(),
            ["1Mbps", "2Mbps", "3Mbps"]
        );
        assert_eq!(split_values("[1,2],[3]").unwrap(), ["[1,2]", "[3]"]);
        assert_eq!(
            split_values(r#""a,b",'c,d',"e\",f""#).unwrap(),
            [r#""a,b""#, "'c,d'", r#""e\",f""#]
        );
        assert_eq!(split_values("{a = 1, b = 2}").unwrap(), ["{a = 1, b = 2}"]);
        assert_eq!(split_values("7").unwrap(), ["7"]);
        assert!(split_values("1,,2").unwrap_err().contains("empty value"));
        assert!(split_values("1,").unwrap_err().contains("empty value"));
        assert!(split_values("[1,2").unwrap_err().contains("missing ']'"));
        assert!(split_values("1]").unwrap_err().contains("unbalanced"));
        assert!(split_values("\"x").unwrap_err().contains("unclosed"));
    }

    #[test]
    fn axis_needs_key_and_values() {
        let a = parse_axis("flows.u.rate=1Mbps,2Mbps").unwrap();
        assert_eq!(a.key, "flows.u.rate");
        assert_eq!(a.values, ["1Mbps", "2Mbps"]);
        assert!(parse_axis("flows.u.rate").is_err());
        assert!(parse_axis("=1,2").is_err());
        assert!(parse_axis("k=").unwrap_err().contains("--set k"));
    }

    #[test]
    fn grid_is_the_cartesian_product_first_axis_outermost() {
        let axes = [
            Axis {
                key: "a".into(),
                values: vec!["1".into(), "2".into()],
            },
            Axis {
                key: "b".into(),
                values: vec!["x".into(), "y".into(), "z".into()],
            },
        ];
        let g = grid(&axes);
        assert_eq!(g.len(), 6);
        let labels: Vec<String> = g.iter().map(GridPoint::label).collect();
        assert_eq!(
            labels,
            ["a=1, b=x", "a=1, b=y", "a=1, b=z", "a=2, b=x", "a=2, b=y", "a=2, b=z"]
        );
        assert_eq!(g[4].value_index, [1, 1]);
        assert_eq!(grid(&[]).len(), 1);
        assert_eq!(x_axis(&axes), Some(0));
    }

    #[test]
    fn numeric_axes_by_unit() {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            numeric_values(&v(&["0.01", "0.1"])),
            Some((vec![0.01, 0.1], ""))
        );
        assert_eq!(
            numeric_values(&v(&["1Mbps", "\"2.5Mb\""])),
            Some((vec![1.0, 2.5], "Mb/s"))
        );
        assert_eq!(
            numeric_values(&v(&["10ms", "250ms"])),
            Some((vec![10.0, 250.0], "ms"))
        );
        assert_eq!(numeric_values(&v(&["\"red\"", "\"droptail\""])), None);
        assert_eq!(numeric_values(&v(&["1", "red"])), None);
    }

    #[test]
    fn seeds_do_not_overflow() {
        assert_eq!(seeds_from(5, 3).unwrap(), [5, 6, 7]);
        assert!(seeds_from(u64::MAX, 2).is_err());
        assert_eq!(seeds_from(u64::MAX, 1).unwrap(), [u64::MAX]);
    }
}
