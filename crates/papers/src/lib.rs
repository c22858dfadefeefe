//! `tfrclab reproduce`: the seed papers' experiments, their printed values beside what tfrclab
//! measures, and each paper's claims with verdicts computed from confidence intervals.
//!
//! # How a paper plugs in
//!
//! A paper is a module implementing [`Paper`], listed in [`registry`]. It declares
//! - its **experiments** ([`Paper::experiments`]): scenario files under `scenarios/seeds/`, each
//!   with a grid of configurations ([`Config`]: `--set`-style overrides, a label and an x value),
//!   run once as written ("deterministic", the paper's own setup) and/or once per seed with
//!   random start offsets ("replicated");
//! - optionally extra per-run numbers ([`Paper::measure`]) beyond `summary.json`'s metrics;
//! - its **report** ([`Paper::report`]): from the [`Results`], the claims ([`Claim`]: per-seed
//!   samples of a quantity, a direction, a reference and an optional magnitude), the tables
//!   ([`DataTable`], each also written as a CSV) and charts, in sections.
//!
//! The framework runs every run of every selected paper on one thread pool with one progress
//! bar, evaluates the claims ([`Claim::evaluate`], the single verdict rule of [`claims`]), and
//! writes `DIR/<paper>/{report.html, claims.csv, claim_samples.csv, runs.csv, <table>.csv,
//! summary.json, scenarios/}` and `DIR/index.html` ([`write`](mod@write)). Transcribed paper values live in
//! a data file read by [`printed::PaperData`].
//!
//! # Randomness and pairing
//!
//! Replicated runs use the seeds 1, 2, …, N ([`Budget::seed_list`]). With seed `k`, flow `i` of
//! every experiment starts later by [`start_offsets`]`(k, …)[i]`, uniform in
//! [0, [`Experiment::start_offset_max`]), and the simulator's random streams (loss models, RED,
//! TCP's clock phase) derive from `k`: configurations compared within one seed share their
//! offsets, so differences between them are paired.

#![warn(missing_docs)]

pub mod beyond;
pub mod claims;
mod family;
pub mod printed;
pub mod rfc8867;
pub mod seed000;
pub mod seed001;
pub mod seed002;
pub mod seed003;
pub mod seed004;
pub mod write;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use lab::metrics::FlowMetrics;
use lab::runner::{self, RunOptions, RunOutput};
use lab::stats::MeanCi;
use lab::summary::{self, Summary};
use lab::sweep::{metric_values, MetricValue};
use report::{Chart, Estimate, Verdict};
use scenario::{overrides, Scenario};

pub use claims::{verdict, Claim, ClaimResult, Direction};

/// How much work a reproduction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Seeds per replicated configuration (N).
    pub seeds: u32,
    /// `--quick`: fewer seeds and shorter runs; every report, table and verdict is still
    /// produced, marked "quick: indicative only".
    pub quick: bool,
}

impl Budget {
    /// N without `--seeds`.
    pub const DEFAULT_SEEDS: u32 = 10;
    /// N with `--quick` and without `--seeds`.
    pub const QUICK_SEEDS: u32 = 3;

    /// The full budget with N seeds.
    pub fn full(seeds: u32) -> Budget {
        Budget {
            seeds,
            quick: false,
        }
    }

    /// The seeds of replicated runs: 1, 2, …, N.
    pub fn seed_list(&self) -> Vec<u64> {
        (1..=u64::from(self.seeds)).collect()
    }

    /// Simulated seconds: `full`, or `quick` under `--quick`, as a `duration` override value.
    pub fn duration(&self, full: f64, quick: f64) -> String {
        let d = if self.quick { quick } else { full };
        format!("{d}")
    }
}

/// One configuration of an experiment: overrides applied to its scenario file as `--set` does
/// (`docs/scenario.md`, "Overrides").
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Identifier, unique within the experiment (`w10`).
    pub id: String,
    /// For tables and legends (`window 10`).
    pub label: String,
    /// The x value in charts (window, rate), if any.
    pub x: Option<f64>,
    /// `(key, value)` overrides, applied in order.
    pub set: Vec<(String, String)>,
}

impl Config {
    /// A configuration without overrides.
    pub fn new(id: impl Into<String>, label: impl Into<String>) -> Config {
        Config {
            id: id.into(),
            label: label.into(),
            x: None,
            set: Vec::new(),
        }
    }

    /// Sets the x value.
    pub fn x(mut self, x: f64) -> Config {
        self.x = Some(x);
        self
    }

    /// Adds an override `key = value` (a TOML literal or a bare string, as for `--set`).
    pub fn set(mut self, key: impl Into<String>, value: impl Into<String>) -> Config {
        self.set.push((key.into(), value.into()));
        self
    }
}

/// One scenario file run over a list of configurations.
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    /// Identifier, unique within the paper (`tcp`).
    pub id: String,
    /// The scenario file, relative to the scenarios folder (`seed-004/tcp.toml`).
    pub scenario: String,
    /// The configurations.
    pub configs: Vec<Config>,
    /// Run each configuration once as written: the scenario's own seed, no start offsets (the
    /// paper's deterministic setup).
    pub deterministic: bool,
    /// Run each configuration once per seed of the budget, with random start offsets.
    pub replicated: bool,
    /// Upper bound (exclusive) of the random start offsets of replicated runs; default 1 s.
    /// Must be shorter than every flow's `stop − start`.
    pub start_offset_max: Duration,
    /// Keep every delivered packet's delay (for [`Paper::measure`]).
    pub record_delays: bool,
}

impl Experiment {
    /// An experiment on `scenario` (relative to the scenarios folder), replicated only, with
    /// no configurations yet.
    pub fn new(id: impl Into<String>, scenario: impl Into<String>) -> Experiment {
        Experiment {
            id: id.into(),
            scenario: scenario.into(),
            configs: Vec::new(),
            deterministic: false,
            replicated: true,
            start_offset_max: Duration::from_secs(1),
            record_delays: false,
        }
    }

    /// Adds a configuration.
    pub fn config(mut self, c: Config) -> Experiment {
        self.configs.push(c);
        self
    }

    /// Also (or not) run each configuration once as written.
    pub fn deterministic(mut self, yes: bool) -> Experiment {
        self.deterministic = yes;
        self
    }

    /// Run (or not) each configuration once per seed with random start offsets.
    pub fn replicated(mut self, yes: bool) -> Experiment {
        self.replicated = yes;
        self
    }

    /// Sets the start offsets' upper bound.
    pub fn start_offset_max(mut self, d: Duration) -> Experiment {
        self.start_offset_max = d;
        self
    }

    /// Records every packet's delay.
    pub fn record_delays(mut self, yes: bool) -> Experiment {
        self.record_delays = yes;
        self
    }
}

/// One cell of a [`DataTable`].
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Text (also printed paper values, verbatim).
    Text(String),
    /// A number shown to 4 significant digits; the CSV has full precision.
    Num(f64),
    /// A number shown with this many decimals; the CSV has full precision.
    Fixed(f64, usize),
    /// An integer.
    Int(i64),
    /// A mean with its 95% CI; the CSV writes three columns (`X`, `X ci_lo`, `X ci_hi`).
    Estimate(Estimate),
    /// A mean with its 95% CI in percent, shown `−0.4% [−1.2%, +0.5%]` (`report::PERCENT`);
    /// the CSV writes three columns like [`Value::Estimate`], in percent.
    Percent(Estimate),
    /// A check: `✓ pass` / `✗ fail` (CSV `pass` / `fail`).
    Pass(bool),
    /// A verdict (CSV: `supported`, `not supported`, `contradicted`).
    Verdict(Verdict),
    /// Nothing (CSV: empty).
    Empty,
}

impl Value {
    /// The estimate of a [`MeanCi`] (a single run: a point without interval).
    pub fn estimate(m: &MeanCi) -> Value {
        Value::Estimate(estimate(m))
    }
}

/// A [`MeanCi`] as a report [`Estimate`].
pub fn estimate(m: &MeanCi) -> Estimate {
    match m.ci_half_width {
        Some(h) => Estimate::with_half_width(m.mean, h),
        None => Estimate::point(m.mean),
    }
}

/// A table of a report, also written as `<name>.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct DataTable {
    /// The CSV's file stem, unique within the paper (`case1-tahoe`).
    pub name: String,
    /// Caption (the framework appends the CSV's file name).
    pub caption: String,
    /// Column headings.
    pub columns: Vec<String>,
    /// Rows (as many values as columns).
    pub rows: Vec<Vec<Value>>,
    /// Also copy it into the `--markdown` file.
    pub markdown: bool,
}

impl DataTable {
    /// An empty table.
    pub fn new(
        name: impl Into<String>,
        caption: impl Into<String>,
        columns: impl IntoIterator<Item = impl Into<String>>,
    ) -> DataTable {
        DataTable {
            name: name.into(),
            caption: caption.into(),
            columns: columns.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            markdown: false,
        }
    }

    /// Adds a row.
    pub fn row(&mut self, values: Vec<Value>) {
        self.rows.push(values);
    }

    /// Marks the table for the `--markdown` file.
    pub fn in_markdown(mut self) -> DataTable {
        self.markdown = true;
        self
    }
}

/// A piece of a report section.
pub enum Block {
    /// A paragraph.
    Text(String),
    /// A highlighted remark.
    Note(String),
    /// A table (and its CSV).
    Table(DataTable),
    /// A chart with a caption.
    Figure(Box<dyn Chart>, String),
    /// Preformatted text.
    Pre(String),
}

/// A headed section of a paper's report.
pub struct ReportSection {
    /// Heading.
    pub title: String,
    /// Content, in order.
    pub blocks: Vec<Block>,
}

impl ReportSection {
    /// An empty section.
    pub fn new(title: impl Into<String>) -> ReportSection {
        ReportSection {
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    /// Adds a paragraph.
    pub fn text(mut self, t: impl Into<String>) -> ReportSection {
        self.blocks.push(Block::Text(t.into()));
        self
    }

    /// Adds a remark.
    pub fn note(mut self, t: impl Into<String>) -> ReportSection {
        self.blocks.push(Block::Note(t.into()));
        self
    }

    /// Adds a table.
    pub fn table(mut self, t: DataTable) -> ReportSection {
        self.blocks.push(Block::Table(t));
        self
    }

    /// Adds a chart.
    pub fn figure(mut self, chart: impl Chart + 'static, caption: impl Into<String>) -> Self {
        self.blocks
            .push(Block::Figure(Box::new(chart), caption.into()));
        self
    }

    /// Adds preformatted text.
    pub fn pre(mut self, t: impl Into<String>) -> ReportSection {
        self.blocks.push(Block::Pre(t.into()));
        self
    }
}

/// What a paper module reports.
pub struct PaperReport {
    /// One line for the index, beside the verdict counts.
    pub summary: String,
    /// Paragraphs between the title and the claims: what the paper did and what runs here.
    pub intro: Vec<String>,
    /// The claims, evaluated by the framework and shown first.
    pub claims: Vec<Claim>,
    /// The sections after the claims.
    pub sections: Vec<ReportSection>,
}

/// A seed paper's reproduction.
pub trait Paper: Sync {
    /// `seed-004`: the command-line name and the output folder.
    fn id(&self) -> &'static str;
    /// Authors and title, one line.
    fn title(&self) -> &'static str;
    /// The experiments to run under `budget`.
    fn experiments(&self, budget: &Budget) -> Result<Vec<Experiment>, String>;
    /// Numbers to keep from one run beyond `summary.json`'s metrics (called on worker threads;
    /// `scenario` is the run's scenario, start offsets applied). Default: none.
    fn measure(
        &self,
        _experiment: &Experiment,
        _scenario: &Scenario,
        _run: &RunOutput,
    ) -> Vec<MetricValue> {
        Vec::new()
    }
    /// Time series to keep from the first seed's replicated run of each configuration, for
    /// the report's charts (kept in memory, not written to `runs.csv`). Default: none.
    fn series(
        &self,
        _experiment: &Experiment,
        _scenario: &Scenario,
        _run: &RunOutput,
    ) -> Vec<report::Series> {
        Vec::new()
    }
    /// The report, from the results of [`Paper::experiments`].
    fn report(&self, results: &Results, budget: &Budget) -> Result<PaperReport, String>;
}

/// A paper in the registry.
#[derive(Clone, Copy)]
pub struct Entry {
    /// `seed-000` … `seed-004`.
    pub id: &'static str,
    /// Authors and title.
    pub title: &'static str,
    /// The module.
    pub paper: &'static dyn Paper,
}

/// The five seed papers, in order, then the reproduction beyond them ([`beyond`]).
pub fn registry() -> Vec<Entry> {
    vec![
        Entry {
            id: "seed-000",
            title: seed000::Seed000.title(),
            paper: &seed000::Seed000,
        },
        Entry {
            id: "seed-001",
            title: seed001::Seed001.title(),
            paper: &seed001::Seed001,
        },
        Entry {
            id: "seed-002",
            title: seed002::Seed002.title(),
            paper: &seed002::Seed002,
        },
        Entry {
            id: "seed-003",
            title: seed003::Seed003.title(),
            paper: &seed003::Seed003,
        },
        Entry {
            id: "seed-004",
            title: seed004::Seed004.title(),
            paper: &seed004::Seed004,
        },
        Entry {
            id: "beyond-seeds",
            title: beyond::Beyond.title(),
            paper: &beyond::Beyond,
        },
        Entry {
            id: "rfc8867",
            title: rfc8867::Rfc8867.title(),
            paper: &rfc8867::Rfc8867,
        },
    ]
}

/// Start offsets of replicated runs: for seed `seed`, one per flow, uniform in [0, `max`) in
/// whole microseconds, from a ChaCha8 stream of the seed (separate from the simulator's
/// streams). They depend only on the seed and the flow's position, so every configuration and
/// experiment with that seed gets the same offsets (paired comparisons).
pub fn start_offsets(seed: u64, flows: usize, max: Duration) -> Vec<Duration> {
    let max_us = u64::try_from(max.as_micros()).unwrap_or(u64::MAX);
    // A fixed tag keeps this stream apart from anything else seeded with the same number.
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7374_6172_745f_6f66);
    (0..flows)
        .map(|_| {
            let u = rng.next_u64();
            Duration::from_micros(if max_us == 0 { 0 } else { u % max_us })
        })
        .collect()
}

/// `s` with every flow starting later by its offset.
pub fn with_offsets(s: &Scenario, offsets: &[Duration]) -> Scenario {
    let mut s = s.clone();
    for (f, o) in s.flows.iter_mut().zip(offsets) {
        f.start += *o;
    }
    s
}

/// What one run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Experiment id.
    pub experiment: String,
    /// Configuration id.
    pub config: String,
    /// `true` for a replicated run (random offsets), `false` for the run as written.
    pub replicated: bool,
    /// The seed.
    pub seed: u64,
    /// Each flow's start offset (zero for the run as written).
    pub offsets: Vec<Duration>,
    /// Its `summary.json`.
    pub summary: Summary,
    /// Every number of the run: `summary.json`'s metrics as `sweep` aggregates them
    /// ([`metric_values`]), then the paper's [`Paper::measure`] values.
    pub values: Vec<MetricValue>,
    /// The paper's [`Paper::series`], for the first seed's replicated run only.
    pub series: Vec<report::Series>,
}

impl RunResult {
    /// The metrics of flow `name`.
    pub fn flow(&self, name: &str) -> Result<&FlowMetrics, String> {
        self.summary
            .flows
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| format!("{}: no flow \"{name}\"", self.label()))
    }

    /// The value of `metric` for `subject` (a flow name, or a flow kind for `jain_index` and
    /// `seed004_byte_difference`, or what [`Paper::measure`] named).
    pub fn value(&self, subject: &str, metric: &str) -> Result<f64, String> {
        self.values
            .iter()
            .find(|v| v.subject == subject && v.metric == metric)
            .map(|v| v.value)
            .ok_or_else(|| format!("{}: no metric {metric} of {subject}", self.label()))
    }

    /// `experiment/config (seed k)`, for messages.
    pub fn label(&self) -> String {
        let mode = if self.replicated {
            format!("seed {}", self.seed)
        } else {
            "as written".to_string()
        };
        format!("{}/{} ({mode})", self.experiment, self.config)
    }
}

/// Every run of one paper, looked up by experiment and configuration.
#[derive(Clone, Debug)]
pub struct Results {
    /// The experiments as declared.
    pub experiments: Vec<Experiment>,
    /// The replicated runs' seeds, in order.
    pub seeds: Vec<u64>,
    runs: Vec<RunResult>,
}

impl Results {
    /// Results from `runs`, which keep their order (replicated runs of one configuration in
    /// seed order, as [`reproduce`] produces them).
    pub fn new(experiments: Vec<Experiment>, seeds: Vec<u64>, runs: Vec<RunResult>) -> Self {
        Results {
            experiments,
            seeds,
            runs,
        }
    }

    /// Every run.
    pub fn runs(&self) -> &[RunResult] {
        &self.runs
    }

    /// The experiment `id`.
    pub fn experiment(&self, id: &str) -> Result<&Experiment, String> {
        self.experiments
            .iter()
            .find(|e| e.id == id)
            .ok_or_else(|| format!("no experiment \"{id}\""))
    }

    /// The run of `experiment`/`config` as written.
    pub fn deterministic(&self, experiment: &str, config: &str) -> Result<&RunResult, String> {
        self.runs
            .iter()
            .find(|r| !r.replicated && r.experiment == experiment && r.config == config)
            .ok_or_else(|| format!("no run of {experiment}/{config} as written"))
    }

    /// The replicated runs of `experiment`/`config`, in seed order.
    pub fn replicated(&self, experiment: &str, config: &str) -> Result<Vec<&RunResult>, String> {
        let v: Vec<&RunResult> = self
            .runs
            .iter()
            .filter(|r| r.replicated && r.experiment == experiment && r.config == config)
            .collect();
        if v.len() != self.seeds.len() {
            return Err(format!(
                "{experiment}/{config}: {} replicated runs for {} seeds",
                v.len(),
                self.seeds.len()
            ));
        }
        Ok(v)
    }

    /// `f` of each replicated run of `experiment`/`config`, in seed order.
    pub fn per_seed(
        &self,
        experiment: &str,
        config: &str,
        f: impl Fn(&RunResult) -> Result<f64, String>,
    ) -> Result<Vec<f64>, String> {
        self.replicated(experiment, config)?
            .into_iter()
            .map(f)
            .collect()
    }

    /// `metric` of `subject` in each replicated run of `experiment`/`config`, in seed order.
    pub fn samples(
        &self,
        experiment: &str,
        config: &str,
        subject: &str,
        metric: &str,
    ) -> Result<Vec<f64>, String> {
        self.per_seed(experiment, config, |r| r.value(subject, metric))
    }

    /// Mean and 95% CI of `metric` of `subject` over the replicated runs.
    pub fn estimate(
        &self,
        experiment: &str,
        config: &str,
        subject: &str,
        metric: &str,
    ) -> Result<MeanCi, String> {
        let xs = self.samples(experiment, config, subject, metric)?;
        MeanCi::of(&xs).ok_or_else(|| {
            format!("{experiment}/{config}: no finite values of {metric} of {subject}")
        })
    }
}

/// Per-seed paired relative change `(a − b) / b` (NaN where `b` is 0).
pub fn relative_change(a: &[f64], b: &[f64]) -> Result<Vec<f64>, String> {
    if a.len() != b.len() {
        return Err(format!(
            "paired samples of different lengths ({} and {})",
            a.len(),
            b.len()
        ));
    }
    Ok(a.iter()
        .zip(b)
        .map(|(x, y)| if *y != 0.0 { (x - y) / y } else { f64::NAN })
        .collect())
}

/// Per-seed mean over several configurations' samples (each in seed order).
pub fn mean_per_seed(columns: &[Vec<f64>]) -> Result<Vec<f64>, String> {
    let n = columns.first().map_or(0, Vec::len);
    if columns.iter().any(|c| c.len() != n) {
        return Err("per-seed samples of different lengths".into());
    }
    let k = columns.len().max(1) as f64;
    Ok((0..n)
        .map(|i| columns.iter().map(|c| c[i]).sum::<f64>() / k)
        .collect())
}

/// Where `reproduce` reads and how it runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Seeds and quick mode.
    pub budget: Budget,
    /// The scenarios folder (`scenarios/seeds`).
    pub scenarios: PathBuf,
    /// Worker threads.
    pub jobs: usize,
    /// `--phase-remedy`: also run every selected paper with this random processing delay at
    /// every node that has none ([`remove_phase_effects`]), to compare the verdicts.
    pub phase_remedy: Option<Duration>,
}

/// `reproduce --phase-remedy`'s processing delay: 1 ms, about one transmission time of a
/// 1000-byte packet at 10 Mb/s (`docs/phase-effects.md` gives the measurements behind it).
pub const PHASE_REMEDY: Duration = Duration::from_millis(1);

/// The phase-effect remedy of `reproduce --phase-remedy` (`docs/phase-effects.md`): every
/// node without a processing delay of its own gets `jitter` (the scenario key
/// `processing_jitter`), so no flow keeps a fixed phase against the queues.
pub fn remove_phase_effects(s: &mut Scenario, jitter: Duration) {
    for n in s.nodes.iter_mut().filter(|n| n.processing_jitter.is_zero()) {
        n.processing_jitter = jitter;
    }
}

/// One paper's finished reproduction.
pub struct PaperOutcome {
    /// The registry entry.
    pub entry: Entry,
    /// The experiments, as run.
    pub results: Results,
    /// The module's report.
    pub report: PaperReport,
    /// The claims with estimates and verdicts, in the report's order.
    pub claims: Vec<ClaimResult>,
    /// Each scenario file used: (path relative to the scenarios folder, text).
    pub scenario_files: Vec<(String, String)>,
    /// Simulation time summed over the paper's runs (CPU time, whatever the parallelism).
    pub run_time: Duration,
}

/// Everything one `reproduce` invocation produced.
pub struct Outcome {
    /// Per selected, implemented paper, in registry order.
    pub papers: Vec<PaperOutcome>,
    /// Wall-clock time of all runs.
    pub wall: Duration,
    /// Runs done.
    pub runs: usize,
    /// Worker threads used.
    pub jobs: usize,
    /// With [`Options::phase_remedy`]: the same papers run with the remedy, in the same
    /// order as `papers` (else empty).
    pub remedied: Vec<PaperOutcome>,
    /// The remedy's processing delay ([`Options::phase_remedy`]).
    pub phase_remedy: Option<Duration>,
}

/// A run to do.
struct Task {
    /// Index into the prepared papers.
    paper: usize,
    /// Index into that paper's experiments.
    experiment: usize,
    /// Index into that experiment's configurations.
    config: usize,
    /// Replicated (with offsets) or as written.
    replicated: bool,
    /// The seed.
    seed: u64,
}

/// A selected paper, planned.
struct Prepared {
    entry: Entry,
    paper: &'static dyn Paper,
    experiments: Vec<Experiment>,
    /// Per experiment, per configuration: the scenario with overrides applied.
    scenarios: Vec<Vec<Scenario>>,
    files: Vec<(String, String)>,
}

/// Read `rel` from `dir` (relative paths must stay inside it).
fn read_scenario(dir: &Path, rel: &str) -> Result<(String, String), String> {
    if Path::new(rel).is_absolute() || rel.split('/').any(|p| p == "..") {
        return Err(format!(
            "scenario path \"{rel}\" must be relative to the scenarios folder"
        ));
    }
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: cannot read the file: {e}", path.display()))?;
    Ok((path.display().to_string(), text))
}

fn prepare(
    entry: Entry,
    paper: &'static dyn Paper,
    opts: &Options,
    remedy: Option<Duration>,
) -> Result<Prepared, String> {
    let experiments = paper.experiments(&opts.budget)?;
    let mut scenarios = Vec::with_capacity(experiments.len());
    let mut files: Vec<(String, String)> = Vec::new();
    for (i, e) in experiments.iter().enumerate() {
        let what = format!("{} experiment \"{}\"", entry.id, e.id);
        if experiments[..i].iter().any(|o| o.id == e.id) {
            return Err(format!("{what} is declared twice"));
        }
        if e.configs.is_empty() || !(e.deterministic || e.replicated) {
            return Err(format!("{what} has nothing to run"));
        }
        let (file, text) = read_scenario(&opts.scenarios, &e.scenario)?;
        if !files.iter().any(|(f, _)| *f == e.scenario) {
            files.push((e.scenario.clone(), text.clone()));
        }
        let mut per_config = Vec::with_capacity(e.configs.len());
        for (j, c) in e.configs.iter().enumerate() {
            if e.configs[..j].iter().any(|o| o.id == c.id) {
                return Err(format!("{what}: configuration \"{}\" twice", c.id));
            }
            let applied = overrides::apply(&file, &text, &c.set)
                .map_err(|err| format!("{what}, {}: {err}", c.label))?;
            let mut s = Scenario::parse(&file, &applied)
                .map_err(|err| format!("{what}, {}: {err}", c.label))?;
            if let Some(j) = remedy {
                remove_phase_effects(&mut s, j);
            }
            if e.replicated {
                if let Some(f) = s
                    .flows
                    .iter()
                    .find(|f| f.start + e.start_offset_max >= f.stop)
                {
                    return Err(format!(
                        "{what}, {}: start offsets up to {:?} could start flow \"{}\" after its stop",
                        c.label, e.start_offset_max, f.name
                    ));
                }
            }
            // Building catches what only the simulator checks, before hours of runs.
            runner::build(&s, &RunOptions::default())
                .map_err(|err| format!("{what}, {}: {err}", c.label))?;
            per_config.push(s);
        }
        scenarios.push(per_config);
    }
    Ok(Prepared {
        entry,
        paper,
        experiments,
        scenarios,
        files,
    })
}

/// Run one task.
fn run_task(p: &Prepared, t: &Task) -> Result<(RunResult, Duration), String> {
    let e = &p.experiments[t.experiment];
    let base = &p.scenarios[t.experiment][t.config];
    let offsets = if t.replicated {
        start_offsets(t.seed, base.flows.len(), e.start_offset_max)
    } else {
        vec![Duration::ZERO; base.flows.len()]
    };
    let s = with_offsets(base, &offsets);
    let opts = RunOptions {
        seed: Some(t.seed),
        record_delays: e.record_delays,
        ..RunOptions::default()
    };
    let out = runner::simulate(&s, &opts).map_err(|err| err.to_string())?;
    let summary = summary::summarize(&s, &out);
    let mut values = metric_values(&summary);
    values.extend(p.paper.measure(e, &s, &out));
    let series = if t.replicated && t.seed == 1 {
        p.paper.series(e, &s, &out)
    } else {
        Vec::new()
    };
    Ok((
        RunResult {
            experiment: e.id.clone(),
            config: e.configs[t.config].id.clone(),
            replicated: t.replicated,
            seed: t.seed,
            offsets,
            summary,
            values,
            series,
        },
        out.wall,
    ))
}

/// The papers `ids` name (`all` for every one), in registry order; an error names an unknown
/// one.
pub fn select(ids: &[String]) -> Result<Vec<Entry>, String> {
    let reg = registry();
    if ids.is_empty() || ids.iter().any(|i| i == "all") {
        return Ok(reg);
    }
    for id in ids {
        if !reg.iter().any(|e| e.id == id) {
            let known: Vec<&str> = reg.iter().map(|e| e.id).collect();
            return Err(format!(
                "unknown paper \"{id}\": expected {} or all",
                known.join(", ")
            ));
        }
    }
    Ok(reg
        .into_iter()
        .filter(|e| ids.iter().any(|i| i == e.id))
        .collect())
}

/// Plan, run and evaluate the implemented papers among `selected`. `on_start(total)` is called
/// once the number of runs is known, `on_done` after each run (for a progress bar).
pub fn reproduce(
    selected: &[Entry],
    opts: &Options,
    on_start: &dyn Fn(u64),
    on_done: &(dyn Fn() + Sync),
) -> Result<Outcome, String> {
    if opts.budget.seeds < 2 {
        return Err("at least 2 seeds are needed for a confidence interval".into());
    }
    // With a remedy, every paper twice: as usual, then remedied (indices from `plain` on).
    let mut prepared = Vec::new();
    for remedy in std::iter::once(None).chain(opts.phase_remedy.map(Some)) {
        for e in selected {
            prepared.push(prepare(*e, e.paper, opts, remedy)?);
        }
    }
    let plain = selected.len();
    let seeds = opts.budget.seed_list();
    let mut tasks = Vec::new();
    for (pi, p) in prepared.iter().enumerate() {
        for (ei, e) in p.experiments.iter().enumerate() {
            for ci in 0..e.configs.len() {
                if e.deterministic {
                    tasks.push(Task {
                        paper: pi,
                        experiment: ei,
                        config: ci,
                        replicated: false,
                        seed: p.scenarios[ei][ci].seed,
                    });
                }
                if e.replicated {
                    for &seed in &seeds {
                        tasks.push(Task {
                            paper: pi,
                            experiment: ei,
                            config: ci,
                            replicated: true,
                            seed,
                        });
                    }
                }
            }
        }
    }
    on_start(tasks.len() as u64);
    let t0 = Instant::now();
    let done = lab::parallel::run_ordered(&tasks, opts.jobs, on_done, |t| {
        run_task(&prepared[t.paper], t)
    })
    .map_err(|(i, e)| {
        let t = &tasks[i];
        let p = &prepared[t.paper];
        let ex = &p.experiments[t.experiment];
        let mut mode = if t.replicated {
            format!("seed {}", t.seed)
        } else {
            "as written".to_string()
        };
        if t.paper >= plain {
            mode.push_str(", phase remedy");
        }
        format!(
            "{} experiment \"{}\", {} ({mode}): {e}",
            p.entry.id, ex.id, ex.configs[t.config].label
        )
    })?;
    let wall = t0.elapsed();
    let runs = done.len();
    let mut per_paper: Vec<(Vec<RunResult>, Duration)> = prepared
        .iter()
        .map(|_| (Vec::new(), Duration::ZERO))
        .collect();
    for (t, (r, w)) in tasks.iter().zip(done) {
        per_paper[t.paper].0.push(r);
        per_paper[t.paper].1 += w;
    }
    let mut papers = Vec::new();
    for (i, (p, (rs, run_time))) in prepared.into_iter().zip(per_paper).enumerate() {
        let what = if i < plain { "" } else { " (phase remedy)" };
        let results = Results::new(p.experiments, seeds.clone(), rs);
        let report = p
            .paper
            .report(&results, &opts.budget)
            .map_err(|e| format!("{}{what}: cannot build the report: {e}", p.entry.id))?;
        let claims = report.claims.iter().map(Claim::evaluate).collect();
        papers.push(PaperOutcome {
            entry: p.entry,
            results,
            report,
            claims,
            scenario_files: p.files,
            run_time,
        });
    }
    let remedied = papers.split_off(plain);
    Ok(Outcome {
        papers,
        wall,
        runs,
        jobs: opts.jobs,
        remedied,
        phase_remedy: opts.phase_remedy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_depend_on_seed_and_flow_only() {
        let a = start_offsets(3, 4, Duration::from_secs(1));
        assert_eq!(a, start_offsets(3, 4, Duration::from_secs(1)));
        assert_eq!(a[..2], start_offsets(3, 2, Duration::from_secs(1))[..]);
        assert_ne!(a, start_offsets(4, 4, Duration::from_secs(1)));
        assert!(a.iter().all(|d| *d < Duration::from_secs(1)));
        assert_eq!(a[0].subsec_nanos() % 1000, 0, "whole microseconds");
        assert_eq!(
            start_offsets(3, 2, Duration::ZERO),
            [Duration::ZERO, Duration::ZERO]
        );
    }

    #[test]
    fn registry_lists_the_papers_then_the_extra_suites_in_order() {
        let ids: Vec<&str> = registry().iter().map(|e| e.id).collect();
        assert_eq!(
            ids,
            [
                "seed-000",
                "seed-001",
                "seed-002",
                "seed-003",
                "seed-004",
                "beyond-seeds",
                "rfc8867"
            ]
        );
        for e in registry() {
            assert_eq!(e.paper.id(), e.id);
        }
        assert!(select(&["seed-9".into()]).is_err());
        assert_eq!(select(&["seed-004".into()]).unwrap().len(), 1);
        assert_eq!(select(&[]).unwrap().len(), registry().len());
    }

    #[test]
    fn paired_helpers() {
        assert_eq!(
            relative_change(&[2.0, 3.0], &[1.0, 2.0]).unwrap(),
            [1.0, 0.5]
        );
        assert!(relative_change(&[1.0], &[0.0]).unwrap()[0].is_nan());
        assert!(relative_change(&[1.0], &[]).is_err());
        assert_eq!(
            mean_per_seed(&[vec![1.0, 2.0], vec![3.0, 4.0]]).unwrap(),
            [2.0, 3.0]
        );
    }
}
