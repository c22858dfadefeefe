//! `tfrclab._native`: the Python package's binding of the lab library.
//!
//! Deliberately low level: opaque handles and plain columns (lists of numbers and strings).
//! The public Python API (`python/tfrclab/__init__.py`) turns them into pandas DataFrames and
//! dicts, so the data-frame shaping lives in one language. Every simulation runs on a worker
//! thread with the GIL released while the calling thread watches for Ctrl-C (a raised
//! `KeyboardInterrupt` cancels a sweep) and forwards progress to a Python callback.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use lab::sweep::{self, Axis};
use scenario::Scenario;

create_exception!(
    tfrclab,
    ScenarioError,
    PyValueError,
    "A scenario file or text is invalid, or a `set` override cannot be applied. `.path`, `.line` and `.column` locate the first problem (`line`/`column` are None when it concerns the whole file); the message is the CLI's."
);

/// The Python exception for a scenario error, with its location attributes set.
fn scenario_error(py: Python<'_>, e: &scenario::ScenarioError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let first = e.problems.first();
    let located = first.filter(|p| p.line > 0);
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail short of memory exhaustion;
    // the message carries the location anyway.
    let _ = value.setattr("path", e.file.clone());
    let _ = value.setattr("line", located.map(|p| p.line));
    let _ = value.setattr("column", located.map(|p| p.column));
    let _ = value.setattr(
        "problems",
        e.problems
            .iter()
            .map(|p| (p.line, p.column, p.message.clone(), p.expected.clone()))
            .collect::<Vec<_>>(),
    );
    err
}

/// Run `work` on a worker thread with the GIL released. Every 50 ms the calling thread takes
/// the GIL back to check for signals (Ctrl-C raises the flag `work` watches, and the
/// `KeyboardInterrupt` is raised once `work` returns) and to call `progress(done, total)` when
/// the counts moved.
fn supervise<T: Send>(
    py: Python<'_>,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&AtomicBool, &AtomicUsize, &AtomicUsize) -> T + Send,
) -> PyResult<T> {
    let cancel = AtomicBool::new(false);
    let done = AtomicUsize::new(0);
    let total = AtomicUsize::new(0);
    let finished = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let r = work(&cancel, &done, &total);
            finished.store(true, Ordering::Release);
            r
        });
        let mut shown = (usize::MAX, usize::MAX);
        let mut interrupted: Option<PyErr> = None;
        loop {
            let over = py.detach(|| {
                let t0 = Instant::now();
                while !finished.load(Ordering::Acquire) && t0.elapsed() < Duration::from_millis(50)
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                finished.load(Ordering::Acquire)
            });
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    cancel.store(true, Ordering::Relaxed);
                    interrupted = Some(e);
                }
            }
            if let (Some(cb), None) = (progress, &interrupted) {
                let now = (done.load(Ordering::Relaxed), total.load(Ordering::Relaxed));
                if now != shown {
                    shown = now;
                    if let Err(e) = cb.call1(now) {
                        cancel.store(true, Ordering::Relaxed);
                        interrupted = Some(e);
                    }
                }
            }
            if over {
                break;
            }
        }
        let result = py.detach(|| worker.join()).map_err(|_| {
            PyRuntimeError::new_err("the simulation panicked (a bug: please report it)")
        })?;
        match interrupted {
            Some(e) => Err(e),
            None => Ok(result),
        }
    })
}

/// A validated scenario (opaque; see `tfrclab.Scenario`).
#[pyclass(module = "tfrclab._native", frozen, skip_from_py_object)]
#[derive(Clone)]
struct NativeScenario {
    inner: Scenario,
}

#[pymethods]
impl NativeScenario {
    /// Read and validate a file, after `sets` overrides.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf, sets: Vec<(String, String)>) -> PyResult<Self> {
        Scenario::load_with(&path, &sets)
            .map(|inner| NativeScenario { inner })
            .map_err(|e| scenario_error(py, &e))
    }

    /// Validate TOML text; `file` names it in errors.
    #[staticmethod]
    fn parse(py: Python<'_>, file: &str, text: &str) -> PyResult<Self> {
        Scenario::parse(file, text)
            .map(|inner| NativeScenario { inner })
            .map_err(|e| scenario_error(py, &e))
    }

    /// TOML text of a JSON document (a dict dumped by Python's `json`).
    #[staticmethod]
    fn json_to_toml(json: &str) -> PyResult<String> {
        let v: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| PyValueError::new_err(format!("d: not JSON-like data: {e}")))?;
        if !v.is_object() {
            return Err(PyValueError::new_err("d: expected a dict"));
        }
        toml::to_string(&v).map_err(|e| {
            PyValueError::new_err(format!(
                "d: cannot be written as TOML ({e}); None values have no TOML form"
            ))
        })
    }

    /// This scenario with `--set` overrides applied.
    fn with_sets(&self, py: Python<'_>, sets: Vec<(String, String)>) -> PyResult<Self> {
        self.inner
            .with_sets(&sets)
            .map(|inner| NativeScenario { inner })
            .map_err(|e| scenario_error(py, &e))
    }

    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    #[getter]
    fn description(&self) -> Option<String> {
        self.inner.description.clone()
    }

    #[getter]
    fn file(&self) -> String {
        self.inner.file.clone()
    }

    #[getter]
    fn source(&self) -> String {
        self.inner.source.clone()
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed
    }

    #[getter]
    fn duration_s(&self) -> f64 {
        self.inner.duration.as_secs_f64()
    }

    #[getter]
    fn warmup_s(&self) -> f64 {
        self.inner.warmup.as_secs_f64()
    }

    #[getter]
    fn flows(&self) -> Vec<(String, String)> {
        self.inner
            .flows
            .iter()
            .map(|f| (f.name.clone(), f.kind.name().to_string()))
            .collect()
    }

    #[getter]
    fn links(&self) -> Vec<String> {
        self.inner.links.iter().map(|l| l.name.clone()).collect()
    }

    #[getter]
    fn nodes(&self) -> Vec<String> {
        self.inner.nodes.iter().map(|n| n.name.clone()).collect()
    }
}

/// One run's results (opaque; see `tfrclab.RunResult`).
#[pyclass(module = "tfrclab._native", frozen)]
struct NativeRun {
    scenario: Scenario,
    result: lab::RunResult,
}

#[pymethods]
impl NativeRun {
    /// `summary.json` as the CLI writes it.
    fn summary_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.result.summary)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// `flows.csv`: (header, rows of cells as the CSV writes them).
    fn flows_table(&self) -> (Vec<String>, Vec<Vec<String>>) {
        (
            lab::summary::flows_csv_header(),
            self.result
                .flows()
                .iter()
                .map(lab::summary::flows_csv_record)
                .collect(),
        )
    }

    /// `timeseries.csv` as columns: time_s, subject, metric, value.
    fn timeseries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let rows = &self.result.timeseries;
        let d = PyDict::new(py);
        d.set_item("time_s", rows.iter().map(|r| r.time_s).collect::<Vec<_>>())?;
        d.set_item(
            "subject",
            rows.iter().map(|r| r.subject.as_str()).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "metric",
            rows.iter().map(|r| r.metric.as_str()).collect::<Vec<_>>(),
        )?;
        d.set_item("value", rows.iter().map(|r| r.value).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// Write the CLI's run files into `dir`.
    fn write(&self, py: Python<'_>, dir: PathBuf) -> PyResult<String> {
        py.detach(|| self.result.write(&self.scenario, &dir))
            .map(|p| p.display().to_string())
            .map_err(|e| PyValueError::new_err(format!("dir: {e:#}")))
    }
}

/// Run `scenario` once.
#[pyfunction]
#[pyo3(signature = (scenario, seed, record_delays))]
fn run(
    py: Python<'_>,
    scenario: &NativeScenario,
    seed: Option<u64>,
    record_delays: bool,
) -> PyResult<NativeRun> {
    let opts = lab::RunOptions {
        seed,
        trace: None,
        record_delays,
    };
    let s = scenario.inner.clone();
    let result = supervise(py, None, |_, _, _| lab::run(&s, &opts))?.map_err(|e| match e {
        lab::RunError::Sim(_) => PyRuntimeError::new_err(e.to_string()),
        _ => PyValueError::new_err(format!("{}: {e}", s.file)),
    })?;
    Ok(NativeRun {
        scenario: s,
        result,
    })
}

/// A finished sweep (opaque; see `tfrclab.SweepResult`).
#[pyclass(module = "tfrclab._native", frozen)]
struct NativeSweep {
    result: lab::sweep::SweepResult,
}

/// How an axis's values become a data-frame column: (column name, numbers) when every value
/// reads as a number, bandwidth or duration (the report's rule, `sweep::numeric_values`),
/// else the key and None (the values stay strings).
fn axis_column(a: &Axis) -> (String, Option<Vec<f64>>) {
    match sweep::numeric_values(&a.values) {
        Some((xs, "")) => (a.key.clone(), Some(xs)),
        Some((xs, unit)) => (format!("{} ({unit})", a.key), Some(xs)),
        None => (a.key.clone(), None),
    }
}

impl NativeSweep {
    /// Grid columns for rows at `points`: (name, numbers or strings).
    fn grid_columns(&self, d: &Bound<'_, PyDict>, points: &[usize]) -> PyResult<()> {
        for (k, a) in self.result.axes.iter().enumerate() {
            let (name, numeric) = axis_column(a);
            let index = |p: usize| self.result.points[p].value_index[k];
            match numeric {
                Some(xs) => d.set_item(
                    name,
                    points.iter().map(|&p| xs[index(p)]).collect::<Vec<_>>(),
                )?,
                None => d.set_item(
                    name,
                    points
                        .iter()
                        .map(|&p| a.values[index(p)].clone())
                        .collect::<Vec<_>>(),
                )?,
            }
        }
        Ok(())
    }
}

/// Grid columns, then the `flows.csv` header and rows.
type RunsTable<'py> = (Bound<'py, PyDict>, Vec<String>, Vec<Vec<String>>);

#[pymethods]
impl NativeSweep {
    /// One row per (grid point, seed, flow): point (1-based), grid columns, seed, then the
    /// columns of `flows.csv` as the CSV writes them (header, columns of cells).
    fn runs_table<'py>(&self, py: Python<'py>) -> PyResult<RunsTable<'py>> {
        let mut points = Vec::new();
        let mut seeds = Vec::new();
        let mut rows = Vec::new();
        for run in &self.result.runs {
            for f in &run.summary.flows {
                points.push(run.point);
                seeds.push(run.seed);
                rows.push(lab::summary::flows_csv_record(f));
            }
        }
        let d = PyDict::new(py);
        d.set_item("point", points.iter().map(|p| p + 1).collect::<Vec<_>>())?;
        self.grid_columns(&d, &points)?;
        d.set_item("seed", seeds)?;
        Ok((d, lab::summary::flows_csv_header(), rows))
    }

    /// The aggregates (the numbers of `sweep.csv`) as columns.
    fn aggregates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let a = &self.result.aggregates;
        let points: Vec<usize> = a.iter().map(|x| x.point).collect();
        let d = PyDict::new(py);
        d.set_item("point", points.iter().map(|p| p + 1).collect::<Vec<_>>())?;
        self.grid_columns(&d, &points)?;
        d.set_item(
            "subject",
            a.iter().map(|x| x.subject.as_str()).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "metric",
            a.iter().map(|x| x.metric.as_str()).collect::<Vec<_>>(),
        )?;
        d.set_item("n", a.iter().map(|x| x.stat.n).collect::<Vec<_>>())?;
        d.set_item("mean", a.iter().map(|x| x.stat.mean).collect::<Vec<_>>())?;
        let nan = |x: Option<f64>| x.unwrap_or(f64::NAN);
        d.set_item("sd", a.iter().map(|x| nan(x.stat.sd)).collect::<Vec<_>>())?;
        d.set_item(
            "ci_half_width",
            a.iter()
                .map(|x| nan(x.stat.ci_half_width))
                .collect::<Vec<_>>(),
        )?;
        d.set_item(
            "ci_lo",
            a.iter().map(|x| nan(x.stat.ci_lo())).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "ci_hi",
            a.iter().map(|x| nan(x.stat.ci_hi())).collect::<Vec<_>>(),
        )?;
        Ok(d)
    }

    /// Every run's `summary.json`, as JSON text, in task order: (point, seed, json).
    fn summaries(&self) -> PyResult<Vec<(usize, u64, String)>> {
        self.result
            .runs
            .iter()
            .map(|r| {
                serde_json::to_string(&r.summary)
                    .map(|j| (r.point + 1, r.seed, j))
                    .map_err(|e| PyRuntimeError::new_err(e.to_string()))
            })
            .collect()
    }

    /// `sweep.json` as JSON text.
    fn sweep_json(&self) -> PyResult<String> {
        serde_json::to_string(&sweep::sweep_json(&self.result))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// Write the CLI's sweep files into `dir`.
    fn write(&self, py: Python<'_>, dir: PathBuf) -> PyResult<String> {
        py.detach(|| lab::write_sweep(&self.result, &dir))
            .map(|p| p.display().to_string())
            .map_err(|e| PyValueError::new_err(format!("dir: {e:#}")))
    }

    #[getter]
    fn jobs(&self) -> usize {
        self.result.jobs
    }

    #[getter]
    fn n_runs(&self) -> usize {
        self.result.runs.len()
    }

    #[getter]
    fn wall_s(&self) -> f64 {
        self.result.wall.as_secs_f64()
    }
}

/// Parse one axis `KEY=V1,V2,...` the CLI's way (values split at top-level commas).
#[pyfunction]
fn parse_axis(arg: &str) -> PyResult<(String, Vec<String>)> {
    sweep::parse_axis(arg)
        .map(|a| (a.key, a.values))
        .map_err(|e| PyValueError::new_err(format!("grid: {e}")))
}

/// Sweep `scenario` over `axes` × `seeds` seeds on `jobs` threads.
#[pyfunction]
#[pyo3(signature = (scenario, axes, seeds, seed_base, jobs, progress))]
fn run_sweep(
    py: Python<'_>,
    scenario: &NativeScenario,
    axes: Vec<(String, Vec<String>)>,
    seeds: u32,
    seed_base: Option<u64>,
    jobs: Option<u32>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<NativeSweep> {
    let opts = lab::SweepOptions {
        axes: axes
            .into_iter()
            .map(|(key, values)| Axis { key, values })
            .collect(),
        seeds,
        seed_base,
        jobs,
    };
    let s = &scenario.inner;
    let plan = py
        .detach(|| lab::plan(s, &opts))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let runs = supervise(py, progress.as_ref(), |cancel, done, total| {
        total.store(plan.tasks.len(), Ordering::Relaxed);
        plan.execute(&|d, _| done.store(d, Ordering::Relaxed), cancel)
    })?
    .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(NativeSweep {
        result: plan.aggregate(runs),
    })
}

/// (grid point, seed, the point's overrides) of one planned run.
type PlannedRun = (usize, u64, Vec<(String, String)>);

/// A run without a result: (index, run id, point (1-based), seed, status, error).
type NotDone = (usize, String, usize, u64, String, String);

/// The runs of a sweep, for an executor (Dask) to run one by one: (point, seed, overrides) in
/// task order, after validating every grid point as `run_sweep` does.
#[pyfunction]
#[pyo3(signature = (scenario, axes, seeds, seed_base))]
fn plan_sweep(
    py: Python<'_>,
    scenario: &NativeScenario,
    axes: Vec<(String, Vec<String>)>,
    seeds: u32,
    seed_base: Option<u64>,
) -> PyResult<Vec<PlannedRun>> {
    let opts = sweep_options(axes, seeds, seed_base, Some(1));
    let s = &scenario.inner;
    let plan = py
        .detach(|| lab::plan(s, &opts))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(plan
        .tasks
        .iter()
        .map(|t| (t.point, t.seed, plan.points[t.point].assignments.clone()))
        .collect())
}

fn sweep_options(
    axes: Vec<(String, Vec<String>)>,
    seeds: u32,
    seed_base: Option<u64>,
    jobs: Option<u32>,
) -> lab::SweepOptions {
    lab::SweepOptions {
        axes: axes
            .into_iter()
            .map(|(key, values)| Axis { key, values })
            .collect(),
        seeds,
        seed_base,
        jobs,
    }
}

/// One run of a sweep handed over as text (what a Dask task runs): the scenario `text` named
/// `file` with the grid point's `overrides`, at `seed`; its `summary.json` as JSON text.
#[pyfunction]
fn run_task(
    py: Python<'_>,
    file: &str,
    text: &str,
    overrides: Vec<(String, String)>,
    seed: u64,
) -> PyResult<String> {
    let summary = py.detach(|| {
        let s = sweep::point_scenario(file, text, &overrides)?;
        let opts = lab::RunOptions {
            seed: Some(seed),
            ..lab::RunOptions::default()
        };
        lab::run(&s, &opts)
            .map(|r| r.summary)
            .map_err(|e| format!("{file} ({overrides:?}), seed {seed}: {e}"))
    });
    let summary = summary.map_err(PyRuntimeError::new_err)?;
    serde_json::to_string(&summary).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// A sweep from the summaries of its runs (run elsewhere, in task order): the aggregates of
/// `run_sweep` for the same arguments.
#[pyfunction]
#[pyo3(signature = (scenario, axes, seeds, seed_base, summaries, wall_s))]
fn sweep_from_summaries(
    py: Python<'_>,
    scenario: &NativeScenario,
    axes: Vec<(String, Vec<String>)>,
    seeds: u32,
    seed_base: Option<u64>,
    summaries: Vec<String>,
    wall_s: f64,
) -> PyResult<NativeSweep> {
    let opts = sweep_options(axes, seeds, seed_base, Some(1));
    let s = &scenario.inner;
    let plan = py
        .detach(|| lab::plan(s, &opts))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    if summaries.len() != plan.tasks.len() {
        return Err(PyValueError::new_err(format!(
            "summaries: {} given, the sweep has {} runs",
            summaries.len(),
            plan.tasks.len()
        )));
    }
    let mut runs = Vec::with_capacity(summaries.len());
    for (t, j) in plan.tasks.iter().zip(&summaries) {
        let summary: lab::summary::Summary = serde_json::from_str(j)
            .map_err(|e| PyValueError::new_err(format!("summaries: not a summary.json: {e}")))?;
        if summary.seed != t.seed {
            return Err(PyValueError::new_err(format!(
                "summaries: seed {} where the sweep runs seed {} (out of task order?)",
                summary.seed, t.seed
            )));
        }
        runs.push(sweep::RunRecord {
            point: t.point,
            seed: t.seed,
            summary,
        });
    }
    let wall = Duration::from_secs_f64(if wall_s.is_finite() && wall_s >= 0.0 {
        wall_s
    } else {
        0.0
    });
    Ok(NativeSweep {
        result: plan.aggregate(lab::SweepRuns { runs, wall }),
    })
}

/// An opened campaign (opaque; see `tfrclab.Campaign`).
#[pyclass(module = "tfrclab._native", frozen)]
struct NativeCampaign {
    merged: lab::campaign::merge::Merged,
    file: String,
    text: String,
    id: String,
    total: usize,
}

#[pymethods]
impl NativeCampaign {
    /// The tidy table (one row per run × flow): the columns of the merged `flows.csv`.
    fn table<'py>(&self, py: Python<'py>) -> PyResult<(Vec<String>, Bound<'py, PyDict>)> {
        use lab::campaign::merge::Values;
        let t = lab::campaign::merge::tidy_table(&self.merged);
        let d = PyDict::new(py);
        let mut names = Vec::new();
        for (name, v) in &t.columns {
            match v {
                Values::Text(x) => d.set_item(name, x)?,
                Values::Int(x) => d.set_item(name, x)?,
                Values::UInt(x) => d.set_item(name, x)?,
                Values::Float(x) => d.set_item(name, x)?,
            }
            names.push(name.clone());
        }
        Ok((names, d))
    }

    /// The sweep of the runs present.
    fn sweep(&self) -> NativeSweep {
        NativeSweep {
            result: self.merged.result.clone(),
        }
    }

    /// Runs without a result: (index, run id, point (1-based), seed, "missing"/"failed", error).
    fn not_done(&self) -> Vec<NotDone> {
        let mut v: Vec<_> = self
            .merged
            .missing
            .iter()
            .map(|e| {
                (
                    e.index,
                    e.id.clone(),
                    e.point + 1,
                    e.seed,
                    "missing".to_string(),
                    String::new(),
                )
            })
            .chain(self.merged.failed.iter().map(|(e, err)| {
                (
                    e.index,
                    e.id.clone(),
                    e.point + 1,
                    e.seed,
                    "failed".to_string(),
                    err.clone(),
                )
            }))
            .collect();
        v.sort();
        v
    }

    #[getter]
    fn total(&self) -> usize {
        self.total
    }

    #[getter]
    fn done(&self) -> usize {
        self.merged.results.len()
    }

    #[getter]
    fn id(&self) -> String {
        self.id.clone()
    }

    #[getter]
    fn scenario_file(&self) -> String {
        self.file.clone()
    }

    #[getter]
    fn scenario_text(&self) -> String {
        self.text.clone()
    }
}

/// Open the campaign in `dir` and merge the results present.
#[pyfunction]
fn open_campaign(py: Python<'_>, dir: PathBuf) -> PyResult<NativeCampaign> {
    py.detach(|| {
        let c = lab::campaign::Campaign::open(&dir)?;
        let merged = lab::campaign::merge::merge(&c)?;
        Ok(NativeCampaign {
            merged,
            file: c.manifest.scenario_file.clone(),
            text: c.manifest.scenario_text.clone(),
            id: c.manifest.campaign.clone(),
            total: c.manifest.runs.len(),
        })
    })
    .map_err(|e: lab::campaign::CampaignError| match e {
        lab::campaign::CampaignError::Invalid(_) => PyValueError::new_err(e.to_string()),
        lab::campaign::CampaignError::Io(_) => PyRuntimeError::new_err(e.to_string()),
    })
}

/// RFC 5348 §3.1 allowed rate, bytes/s.
#[pyfunction]
#[pyo3(signature = (s, rtt, p, t_rto))]
fn equation(s: f64, rtt: f64, p: f64, t_rto: Option<f64>) -> PyResult<f64> {
    let positive = |name: &str, x: f64| {
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(PyValueError::new_err(format!(
                "{name} = {x}: must be a finite number greater than 0"
            )))
        }
    };
    let s = positive("s", s)?;
    let rtt = positive("rtt", rtt)?;
    if !(p > 0.0 && p <= 1.0) {
        return Err(PyValueError::new_err(format!(
            "p = {p}: outside (0, 1]; p is a loss event rate"
        )));
    }
    let t_rto = match t_rto {
        Some(t) => positive("t_rto", t)?,
        None => 4.0 * rtt,
    };
    Ok(tfrc::Equation::RFC5348.rate(s, rtt, t_rto, p))
}

/// One claim's row.
struct ClaimRow {
    paper: String,
    id: String,
    text: String,
    quantity: String,
    unit: String,
    direction: &'static str,
    reference: f64,
    magnitude: Option<f64>,
    n: usize,
    mean: f64,
    ci_lo: f64,
    ci_hi: f64,
    verdict: &'static str,
}

/// A finished paper reproduction, its files already written (opaque; see
/// `tfrclab.Reproduction`). The papers' outcome holds charts that are not `Send`, so
/// everything is taken from it on the worker thread.
#[pyclass(module = "tfrclab._native", frozen)]
struct NativeReproduction {
    claims: Vec<ClaimRow>,
    /// With `phase_remedy`: the claims of the runs with phase effects removed.
    remedied: Option<Vec<ClaimRow>>,
    summary_json: String,
    dir: PathBuf,
    runs: usize,
    wall_s: f64,
}

#[pymethods]
impl NativeReproduction {
    /// One row per claim, as columns.
    fn claims<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        claim_columns(py, &self.claims)
    }

    /// With `phase_remedy`: one row per claim of the runs with phase effects removed, as
    /// columns (`None` without).
    fn remedied_claims<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.remedied
            .as_deref()
            .map(|rows| claim_columns(py, rows))
            .transpose()
    }

    /// The reproduction's `summary.json` as JSON text.
    #[getter]
    fn summary_json(&self) -> String {
        self.summary_json.clone()
    }

    /// The folder the files were written to.
    #[getter]
    fn dir(&self) -> String {
        self.dir.display().to_string()
    }

    #[getter]
    fn runs(&self) -> usize {
        self.runs
    }

    #[getter]
    fn wall_s(&self) -> f64 {
        self.wall_s
    }
}

/// Claim rows as a dict of columns (what `pandas.DataFrame` takes).
fn claim_columns<'py>(py: Python<'py>, c: &[ClaimRow]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(
        "paper",
        c.iter().map(|r| r.paper.as_str()).collect::<Vec<_>>(),
    )?;
    d.set_item("claim", c.iter().map(|r| r.id.as_str()).collect::<Vec<_>>())?;
    d.set_item(
        "text",
        c.iter().map(|r| r.text.as_str()).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "quantity",
        c.iter().map(|r| r.quantity.as_str()).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "unit",
        c.iter().map(|r| r.unit.as_str()).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "direction",
        c.iter().map(|r| r.direction).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "reference",
        c.iter().map(|r| r.reference).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "magnitude",
        c.iter()
            .map(|r| r.magnitude.unwrap_or(f64::NAN))
            .collect::<Vec<_>>(),
    )?;
    d.set_item("n", c.iter().map(|r| r.n).collect::<Vec<_>>())?;
    d.set_item("mean", c.iter().map(|r| r.mean).collect::<Vec<_>>())?;
    d.set_item("ci_lo", c.iter().map(|r| r.ci_lo).collect::<Vec<_>>())?;
    d.set_item("ci_hi", c.iter().map(|r| r.ci_hi).collect::<Vec<_>>())?;
    d.set_item("verdict", c.iter().map(|r| r.verdict).collect::<Vec<_>>())?;
    Ok(d)
}

/// Write what `tfrclab reproduce` writes into `dir` and take the claims out of `outcome`.
fn finish_reproduction(
    selected: &[papers::Entry],
    outcome: &papers::Outcome,
    budget: &papers::Budget,
    command: &str,
    dir: &std::path::Path,
) -> Result<NativeReproduction, String> {
    let out = lab::output::OutputDir::create(dir)?;
    papers::write::write_outputs(&|name| out.path(name), selected, outcome, budget, command)?;
    let summary_json = std::fs::read_to_string(out.path("summary.json"))
        .map_err(|e| format!("summary.json: {e}"))?;
    let dir = out.commit().map_err(|e| e.to_string())?;
    Ok(NativeReproduction {
        claims: claim_rows(&outcome.papers),
        remedied: (!outcome.remedied.is_empty()).then(|| claim_rows(&outcome.remedied)),
        summary_json,
        dir,
        runs: outcome.runs,
        wall_s: outcome.wall.as_secs_f64(),
    })
}

/// One row per claim of `papers`, in the reports' order.
fn claim_rows(papers: &[papers::PaperOutcome]) -> Vec<ClaimRow> {
    let mut claims = Vec::new();
    for p in papers {
        for c in &p.claims {
            let (mean, ci_lo, ci_hi) = c.interval();
            claims.push(ClaimRow {
                paper: p.entry.id.to_string(),
                id: c.claim.id.clone(),
                text: c.claim.text.clone(),
                quantity: c.claim.quantity.clone(),
                unit: c.claim.unit.clone(),
                direction: c.claim.direction.name(),
                reference: c.claim.reference,
                magnitude: c.claim.magnitude,
                n: c.stat.map_or(0, |m| m.n),
                mean,
                ci_lo,
                ci_hi,
                verdict: papers::claims::verdict_name(c.verdict),
            });
        }
    }
    claims
}

/// Reproduce the seed papers `ids` (or `all`) and write the CLI's files into `out`.
#[pyfunction]
#[pyo3(signature = (ids, quick, seeds, jobs, scenarios, out, progress, phase_remedy))]
#[allow(clippy::too_many_arguments)]
fn reproduce(
    py: Python<'_>,
    ids: Vec<String>,
    quick: bool,
    seeds: Option<u32>,
    jobs: Option<u32>,
    scenarios: PathBuf,
    out: PathBuf,
    progress: Option<Bound<'_, PyAny>>,
    phase_remedy: bool,
) -> PyResult<NativeReproduction> {
    let selected =
        papers::select(&ids).map_err(|e| PyValueError::new_err(format!("paper: {e}")))?;
    let budget = papers::Budget {
        seeds: seeds.unwrap_or(if quick {
            papers::Budget::QUICK_SEEDS
        } else {
            papers::Budget::DEFAULT_SEEDS
        }),
        quick,
    };
    if budget.seeds < 2 {
        return Err(PyValueError::new_err(format!(
            "seeds = {}: at least 2 seeds are needed for a confidence interval",
            budget.seeds
        )));
    }
    if !scenarios.is_dir() {
        return Err(PyValueError::new_err(format!(
            "scenarios: {} is not a folder (the papers' scenario files, scenarios/seeds in the repository)",
            scenarios.display()
        )));
    }
    let opts = papers::Options {
        budget,
        scenarios,
        jobs: lab::parallel::jobs(jobs),
        phase_remedy: phase_remedy.then_some(papers::PHASE_REMEDY),
    };
    let mut command = format!("tfrclab.reproduce({:?}", ids.join(" "));
    if quick {
        command.push_str(", quick=True");
    }
    if phase_remedy {
        command.push_str(", phase_remedy=True");
    }
    command.push_str(&format!(", seeds={})", budget.seeds));
    supervise(py, progress.as_ref(), |_, done, total| {
        let outcome = papers::reproduce(
            &selected,
            &opts,
            &|n| total.store(n as usize, Ordering::Relaxed),
            &|| {
                done.fetch_add(1, Ordering::Relaxed);
            },
        )?;
        finish_reproduction(&selected, &outcome, &budget, &command, &out)
    })?
    .map_err(PyRuntimeError::new_err)
}

/// Validate `scenario` against NS-2 (`tfrclab validate`): `validate.json`'s report as JSON.
#[pyfunction]
#[pyo3(signature = (scenario, ns, timeout_s))]
fn validate(
    py: Python<'_>,
    scenario: &NativeScenario,
    ns: PathBuf,
    timeout_s: f64,
) -> PyResult<String> {
    if !(timeout_s.is_finite() && timeout_s > 0.0) {
        return Err(PyValueError::new_err(format!(
            "timeout_s = {timeout_s}: must be a number of seconds greater than 0"
        )));
    }
    let opts = lab::validate::Options {
        ns,
        timeout: Duration::from_secs_f64(timeout_s),
        keep_traces: None,
    };
    let s = &scenario.inner;
    let report = supervise(py, None, |_, _, _| {
        lab::validate::probe_ns(&opts.ns).and_then(|()| lab::validate::validate(s, &opts))
    })?
    .map_err(|e| {
        // Export errors already start with the file; the others get it.
        let text = e.to_string();
        let msg = if text.starts_with(&s.file) {
            text
        } else {
            format!("{}: {text}", s.file)
        };
        if e.is_bad_input() {
            PyValueError::new_err(msg)
        } else {
            PyRuntimeError::new_err(msg)
        }
    })?;
    serde_json::to_string(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_class::<NativeScenario>()?;
    m.add_class::<NativeRun>()?;
    m.add_class::<NativeSweep>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(plan_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(run_task, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_from_summaries, m)?)?;
    m.add_function(wrap_pyfunction!(open_campaign, m)?)?;
    m.add_class::<NativeCampaign>()?;
    m.add_function(wrap_pyfunction!(parse_axis, m)?)?;
    m.add_function(wrap_pyfunction!(equation, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_class::<NativeReproduction>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
