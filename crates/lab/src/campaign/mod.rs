//! Campaigns: a sweep kept in a directory so that it can be split over many machines (Slurm
//! array tasks, Dask workers), killed and resumed, and merged into what `tfrclab sweep` writes.
//!
//! The life cycle (`docs/cluster.md`):
//! - [`Campaign::create`]: validate every grid point (the errors of `sweep`), then write
//!   `manifest.json`: the scenario text, the grid, and one [`RunEntry`] per run with a stable
//!   id ([`run_id`]: scenario text + overrides + seed + tfrclab version). Nothing runs.
//! - [`Campaign::open`]: read the manifest back, refusing one edited by hand (its checksum, and
//!   its runs re-derived from its scenario and grid, must match).
//! - [`exec::run_shard`]: run the runs of shard K of N ([`Shard`]) that have no result yet, each
//!   written to `results/<id>.json` atomically (temporary file + rename), so a killed task loses
//!   only the runs in progress.
//! - [`Campaign::scan`]: done / missing / failed, checking that every result file belongs here.
//! - [`merge::merge`]: the [`crate::sweep::SweepResult`] of the runs present, written as
//!   `tfrclab sweep` writes it plus a tidy per-run × flow table (CSV and Parquet).
//! - [`slurm::sbatch_script`]: the array job script of `tfrclab campaign slurm`.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::api::{self, SweepError, SweepOptions, SweepPlan};
use crate::summary::Summary;
use crate::sweep::Axis;
use scenario::Scenario;

pub mod exec;
pub mod merge;
pub mod slurm;

/// The `format` of `manifest.json` this version writes and reads.
pub const MANIFEST_FORMAT: &str = "tfrclab-campaign/1";
/// The `format` of a result file this version writes and reads.
pub const RESULT_FORMAT: &str = "tfrclab-campaign-run/1";
/// The manifest's file name inside a campaign directory.
pub const MANIFEST: &str = "manifest.json";
/// The folder of result files inside a campaign directory.
pub const RESULTS: &str = "results";

/// The tfrclab version that writes manifests and results (run ids depend on it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git commit tfrclab was built from (`unknown` outside a git checkout), `+dirty` when the
/// work tree had changes.
pub const GIT_COMMIT: &str = env!("TFRCLAB_GIT_COMMIT");

/// Why a campaign command failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CampaignError {
    /// Bad input (arguments, a directory that is not a campaign, a manifest edited by hand, a
    /// foreign result file): one message per problem. Nothing was written.
    Invalid(Vec<String>),
    /// Reading or writing failed.
    Io(String),
}

impl std::fmt::Display for CampaignError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CampaignError::Invalid(m) => write!(f, "{}", m.join("\n")),
            CampaignError::Io(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for CampaignError {}

fn invalid(msg: impl Into<String>) -> CampaignError {
    CampaignError::Invalid(vec![msg.into()])
}

fn io_err(what: &str, path: &Path, e: impl std::fmt::Display) -> CampaignError {
    CampaignError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// One run of a campaign.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunEntry {
    /// Position in the manifest (0-based): grid point by grid point, seeds in order, as
    /// `tfrclab sweep` runs them.
    pub index: usize,
    /// Stable id ([`run_id`]); the result file is `results/<id>.json`.
    pub id: String,
    /// Grid point (0-based, first axis outermost).
    pub point: usize,
    /// Seed.
    pub seed: u64,
    /// The grid point's `--set` overrides, in axis order.
    pub overrides: Vec<(String, String)>,
}

/// `manifest.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: String,
    /// Campaign id: a hash of everything below but the runs (they follow from it).
    pub campaign: String,
    /// The tfrclab version that made it; runs and merges need the same version.
    pub tfrclab_version: String,
    /// The git commit of that tfrclab (provenance only).
    pub git_commit: String,
    /// The scenario file as named to `campaign new` (used in messages).
    pub scenario_file: String,
    /// The scenario's text (a copy: the campaign does not depend on the file afterwards).
    pub scenario_text: String,
    /// SHA-256 of the scenario text, hex.
    pub scenario_hash: String,
    /// The swept axes (`--set KEY=V1,V2,...`).
    pub axes: Vec<Axis>,
    /// Seeds per grid point.
    pub seeds: u32,
    /// First seed (`--seed-base`); None: each grid point's scenario seed.
    pub seed_base: Option<u64>,
    /// Every run.
    pub runs: Vec<RunEntry>,
    /// SHA-256 of this manifest written with an empty checksum: detects hand edits.
    pub checksum: String,
}

/// Provenance of one result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// tfrclab version.
    pub tfrclab_version: String,
    /// tfrclab's git commit.
    pub git_commit: String,
    /// SHA-256 of the scenario text (before the overrides).
    pub scenario_hash: String,
    /// Host name of the machine that ran it.
    pub host: String,
    /// Wall-clock seconds of the run.
    pub wall_s: f64,
    /// CPU seconds (user + system) of the thread that ran it; None where not measurable.
    pub cpu_s: Option<f64>,
    /// Slurm job and array task (`SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID`), when in one.
    pub slurm_task: Option<String>,
}

/// `results/<id>.json` (a finished run) or `results/<id>.failed.json` (a failed one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultFile {
    /// [`RESULT_FORMAT`].
    pub format: String,
    /// The campaign id it belongs to.
    pub campaign: String,
    /// The run id.
    pub run: String,
    /// Position in the manifest.
    pub index: usize,
    /// Grid point (0-based).
    pub point: usize,
    /// Seed.
    pub seed: u64,
    /// The grid point's overrides.
    pub overrides: Vec<(String, String)>,
    /// Where, with what and how long.
    pub provenance: Provenance,
    /// The run's `summary.json` (None when it failed).
    pub summary: Option<Summary>,
    /// Why it failed (None when it finished).
    pub error: Option<String>,
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A run's stable id: the first 20 hex digits (80 bits) of the SHA-256 of the tfrclab version,
/// the scenario text, the overrides and the seed (fields separated by NUL, which none holds).
pub fn run_id(
    version: &str,
    scenario_text: &str,
    overrides: &[(String, String)],
    seed: u64,
) -> String {
    let mut h = Sha256::new();
    h.update(b"tfrclab-run\0");
    h.update(version.as_bytes());
    h.update(b"\0");
    h.update(scenario_text.as_bytes());
    for (k, v) in overrides {
        h.update(b"\0");
        h.update(k.as_bytes());
        h.update(b"=");
        h.update(v.as_bytes());
    }
    h.update(b"\0");
    h.update(seed.to_string().as_bytes());
    h.finalize()[..10]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A deterministic slice of a campaign: the runs whose manifest index is `k` modulo `n`
/// (round robin, so every shard gets a share of every grid point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard, 0-based (below `n`).
    pub k: usize,
    /// Number of shards.
    pub n: usize,
}

impl Shard {
    /// The whole campaign.
    pub const ALL: Shard = Shard { k: 0, n: 1 };

    /// Parse `K/N` (0 ≤ K < N), as `--shard` takes it.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("'{s}' is not K/N (for example 0/4: the first of 4 shards)"))?;
        let num = |x: &str, what: &str| {
            x.trim().parse::<usize>().map_err(|_| {
                format!("'{s}': {what} '{x}' is not a whole number (K/N, for example 0/4)")
            })
        };
        let (k, n) = (num(k, "K")?, num(n, "N")?);
        Shard::new(k, n).map_err(|e| format!("'{s}': {e}"))
    }

    /// Shard `k` of `n`; an error unless 0 ≤ k < n.
    pub fn new(k: usize, n: usize) -> Result<Shard, String> {
        if n == 0 {
            return Err("N must be at least 1".into());
        }
        if k >= n {
            return Err(format!(
                "K = {k} is not below N = {n} (shards are numbered 0 to {})",
                n - 1
            ));
        }
        Ok(Shard { k, n })
    }

    /// The shard of a Slurm array task, from `SLURM_ARRAY_TASK_ID` and
    /// `SLURM_ARRAY_TASK_COUNT` as `get` returns them; None outside an array task.
    pub fn from_slurm(get: impl Fn(&str) -> Option<String>) -> Option<Result<Shard, String>> {
        let id = get("SLURM_ARRAY_TASK_ID")?;
        let Some(count) = get("SLURM_ARRAY_TASK_COUNT") else {
            return Some(Err(format!(
                "SLURM_ARRAY_TASK_ID is {id} but SLURM_ARRAY_TASK_COUNT is not set; give --shard K/N"
            )));
        };
        Some(
            Shard::parse(&format!("{id}/{count}"))
                .map_err(|e| format!("the Slurm array task's shard {e}; give --shard K/N")),
        )
    }

    /// Whether run `index` belongs to this shard.
    pub fn contains(&self, index: usize) -> bool {
        index % self.n == self.k
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// An open campaign: its directory, manifest and validated sweep plan.
#[derive(Debug)]
pub struct Campaign {
    /// The campaign directory.
    pub dir: PathBuf,
    /// `manifest.json`.
    pub manifest: Manifest,
    /// The sweep the manifest describes: every grid point's scenario, seeds and tasks (task
    /// `i` is run `i`).
    pub plan: SweepPlan,
}

/// What `campaign new` takes.
#[derive(Clone, Debug)]
pub struct NewOptions {
    /// The swept axes.
    pub axes: Vec<Axis>,
    /// Seeds per grid point (at least 1).
    pub seeds: u32,
    /// First seed; None: each grid point's scenario seed.
    pub seed_base: Option<u64>,
}

fn plan_of(
    scenario: &Scenario,
    axes: &[Axis],
    seeds: u32,
    seed_base: Option<u64>,
) -> Result<SweepPlan, CampaignError> {
    let opts = SweepOptions {
        axes: axes.to_vec(),
        seeds,
        seed_base,
        jobs: Some(1),
    };
    api::plan(scenario, &opts).map_err(|e| match e {
        SweepError::Invalid(m) => CampaignError::Invalid(m),
        other => CampaignError::Invalid(vec![other.to_string()]),
    })
}

fn entries(plan: &SweepPlan, version: &str) -> Vec<RunEntry> {
    plan.tasks
        .iter()
        .enumerate()
        .map(|(index, t)| {
            let overrides = plan.points[t.point].assignments.clone();
            RunEntry {
                index,
                id: run_id(version, &plan.source, &overrides, t.seed),
                point: t.point,
                seed: t.seed,
                overrides,
            }
        })
        .collect()
}

fn campaign_id(m: &Manifest) -> String {
    let key = serde_json::json!({
        "version": m.tfrclab_version,
        "scenario_file": m.scenario_file,
        "scenario_text": m.scenario_text,
        "axes": m.axes,
        "seeds": m.seeds,
        "seed_base": m.seed_base,
    });
    sha256_hex(key.to_string().as_bytes())[..20].to_string()
}

fn checksum(m: &Manifest) -> String {
    let mut blank = m.clone();
    blank.checksum.clear();
    sha256_hex(serde_json::to_string(&blank).unwrap_or_default().as_bytes())
}

/// Write `bytes` to `path` atomically: a temporary file beside it, synced, then renamed over it,
/// so that readers (and a killed writer) never leave a half-written file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CampaignError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_err("write", path, e)
    })
}

impl Campaign {
    /// `campaign new`: validate `scenario` × `opts` (errors as `sweep` gives them) and write
    /// `dir/manifest.json` (and `dir/scenario.toml`, the scenario for people to read). `dir`
    /// must not exist or be empty.
    pub fn create(
        dir: &Path,
        scenario: &Scenario,
        opts: &NewOptions,
    ) -> Result<Campaign, CampaignError> {
        if dir.join(MANIFEST).exists() {
            return Err(invalid(format!(
                "{} is already a campaign (it has a {MANIFEST}); nothing was changed. Choose another DIR, or run it with tfrclab campaign run {}",
                dir.display(),
                dir.display()
            )));
        }
        if dir.exists() {
            let empty = std::fs::read_dir(dir).map(|mut d| d.next().is_none());
            match empty {
                Ok(true) => {}
                Ok(false) => {
                    return Err(invalid(format!(
                        "{} exists and is not empty; a new campaign needs a new or empty directory (nothing was changed)",
                        dir.display()
                    )))
                }
                Err(e) => {
                    return Err(invalid(format!(
                        "{} exists and is not a readable directory: {e}",
                        dir.display()
                    )))
                }
            }
        }
        let plan = plan_of(scenario, &opts.axes, opts.seeds, opts.seed_base)?;
        let mut m = Manifest {
            format: MANIFEST_FORMAT.into(),
            campaign: String::new(),
            tfrclab_version: VERSION.into(),
            git_commit: GIT_COMMIT.into(),
            scenario_file: scenario.file.clone(),
            scenario_text: scenario.source.clone(),
            scenario_hash: sha256_hex(scenario.source.as_bytes()),
            axes: opts.axes.clone(),
            seeds: opts.seeds,
            seed_base: opts.seed_base,
            runs: entries(&plan, VERSION),
            checksum: String::new(),
        };
        m.campaign = campaign_id(&m);
        m.checksum = checksum(&m);
        std::fs::create_dir_all(dir.join(RESULTS)).map_err(|e| io_err("create", dir, e))?;
        write_atomic(&dir.join("scenario.toml"), m.scenario_text.as_bytes())?;
        let mut text =
            serde_json::to_string_pretty(&m).map_err(|e| CampaignError::Io(e.to_string()))?;
        text.push('\n');
        write_atomic(&dir.join(MANIFEST), text.as_bytes())?;
        Ok(Campaign {
            dir: dir.to_path_buf(),
            manifest: m,
            plan,
        })
    }

    /// Open the campaign in `dir`, checking that its manifest is as `campaign new` wrote it and
    /// was written by this tfrclab version.
    pub fn open(dir: &Path) -> Result<Campaign, CampaignError> {
        let path = dir.join(MANIFEST);
        if !dir.is_dir() {
            return Err(invalid(format!(
                "{}: no such campaign directory (make one with tfrclab campaign new {} SCENARIO)",
                dir.display(),
                dir.display()
            )));
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(invalid(format!(
                    "{}: not a campaign directory: it has no {MANIFEST} (make one with tfrclab campaign new DIR SCENARIO)",
                    dir.display()
                )))
            }
            Err(e) => return Err(invalid(format!("{}: cannot read: {e}", path.display()))),
        };
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            invalid(format!(
                "{}:{}:{}: not a campaign manifest: {e} (was it edited by hand? recreate it with tfrclab campaign new)",
                path.display(),
                e.line(),
                e.column()
            ))
        })?;
        let edited = |what: &str| {
            invalid(format!(
                "{}: {what}: the manifest was changed after tfrclab campaign new wrote it; nothing was run or written. Restore it, or make a new campaign with tfrclab campaign new",
                path.display()
            ))
        };
        if m.format != MANIFEST_FORMAT {
            return Err(invalid(format!(
                "{}: format is \"{}\", this tfrclab reads \"{MANIFEST_FORMAT}\"",
                path.display(),
                m.format
            )));
        }
        if m.checksum != checksum(&m) {
            return Err(edited("its checksum does not match its content"));
        }
        if m.campaign != campaign_id(&m) {
            return Err(edited(
                "its campaign id does not match its scenario and grid",
            ));
        }
        if m.tfrclab_version != VERSION {
            return Err(invalid(format!(
                "{}: made by tfrclab {}, this is tfrclab {VERSION}; results of different versions are not comparable. Use tfrclab {} (or make a new campaign)",
                path.display(),
                m.tfrclab_version,
                m.tfrclab_version
            )));
        }
        if m.scenario_hash != sha256_hex(m.scenario_text.as_bytes()) {
            return Err(edited("scenario_hash does not match scenario_text"));
        }
        let scenario = Scenario::parse(&m.scenario_file, &m.scenario_text).map_err(|e| {
            invalid(format!(
                "{}: its scenario no longer validates: {e}",
                path.display()
            ))
        })?;
        let plan = plan_of(&scenario, &m.axes, m.seeds, m.seed_base)?;
        if m.runs != entries(&plan, &m.tfrclab_version) {
            return Err(edited(
                "its runs are not those of its scenario, grid and seeds",
            ));
        }
        Ok(Campaign {
            dir: dir.to_path_buf(),
            manifest: m,
            plan,
        })
    }

    /// The campaign's `results/` folder.
    pub fn results_dir(&self) -> PathBuf {
        self.dir.join(RESULTS)
    }

    /// Where run `e`'s result goes when it finishes.
    pub fn result_path(&self, e: &RunEntry) -> PathBuf {
        self.results_dir().join(format!("{}.json", e.id))
    }

    /// Where run `e`'s error goes when it fails.
    pub fn failed_path(&self, e: &RunEntry) -> PathBuf {
        self.results_dir().join(format!("{}.failed.json", e.id))
    }

    /// Read a result file and check it is run `e`'s of this campaign.
    pub fn read_result(&self, path: &Path, e: &RunEntry) -> Result<ResultFile, CampaignError> {
        let text = std::fs::read_to_string(path).map_err(|err| io_err("read", path, err))?;
        let r: ResultFile = serde_json::from_str(&text).map_err(|err| {
            invalid(format!(
                "{}:{}:{}: not a tfrclab campaign result: {err}; nothing was changed. Move it out of {} (its run is then run again)",
                path.display(),
                err.line(),
                err.column(),
                self.results_dir().display()
            ))
        })?;
        if r.campaign != self.manifest.campaign {
            return Err(invalid(format!(
                "{}: belongs to campaign {}, not to this one ({}, in {}); nothing was changed. Move it out of {}",
                path.display(),
                r.campaign,
                self.manifest.campaign,
                self.dir.display(),
                self.results_dir().display()
            )));
        }
        if r.format != RESULT_FORMAT
            || r.run != e.id
            || r.index != e.index
            || r.point != e.point
            || r.seed != e.seed
            || r.overrides != e.overrides
            || r.summary.is_some() == r.error.is_some()
        {
            return Err(invalid(format!(
                "{}: is not the result of run {} (point {}, seed {}) it is named after (edited or renamed?); nothing was changed. Move it out of {}",
                path.display(),
                e.id,
                e.point + 1,
                e.seed,
                self.results_dir().display()
            )));
        }
        Ok(r)
    }

    /// What the file `name` in `results/` is: None for a temporary file of a writer that was
    /// killed, else the run it is named after and whether it is an error file; a problem
    /// (naming the file) when it is no result of this campaign.
    fn classify<'a>(
        &self,
        name: &str,
        by_id: &HashMap<&str, &'a RunEntry>,
    ) -> Result<Option<(&'a RunEntry, bool)>, String> {
        let dir = self.results_dir();
        let path = dir.join(name);
        if name.starts_with('.') {
            return Ok(None);
        }
        let (id, is_failed) = if let Some(id) = name.strip_suffix(".failed.json") {
            (id, true)
        } else if let Some(id) = name.strip_suffix(".json") {
            (id, false)
        } else {
            return Err(format!(
                "{}: not a result file (results are <run id>.json); nothing was changed. Move it out of {}",
                path.display(),
                dir.display()
            ));
        };
        match by_id.get(id) {
            Some(e) => Ok(Some((*e, is_failed))),
            None => {
                let hint = match std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| serde_json::from_str::<ResultFile>(&t).ok())
                {
                    Some(r) if r.campaign != self.manifest.campaign => format!(
                        "it belongs to campaign {}, not to this one ({})",
                        r.campaign, self.manifest.campaign
                    ),
                    _ => "no run of this campaign has that id".into(),
                };
                Err(format!(
                    "{}: {hint}; nothing was changed. Move it out of {}",
                    path.display(),
                    dir.display()
                ))
            }
        }
    }

    /// Check that every file name in `results/` is a result of one of this campaign's runs (names
    /// only, and the content of those that are not: cheap enough for every array task).
    pub fn check_names(&self) -> Result<(), CampaignError> {
        let by_id: HashMap<&str, &RunEntry> = self
            .manifest
            .runs
            .iter()
            .map(|e| (e.id.as_str(), e))
            .collect();
        let dir = self.results_dir();
        let listing = match std::fs::read_dir(&dir) {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_err("list", &dir, e)),
        };
        let mut problems = Vec::new();
        for f in listing {
            let f = f.map_err(|e| io_err("list", &dir, e))?;
            if let Err(p) = self.classify(&f.file_name().to_string_lossy(), &by_id) {
                problems.push(p);
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            problems.sort();
            Err(CampaignError::Invalid(problems))
        }
    }

    /// Every run's state, checking every file in `results/`: each must be a result of one of
    /// this campaign's runs (temporary files of killed writers are ignored).
    pub fn scan(&self) -> Result<Scan, CampaignError> {
        self.scan_with(&|| {})
    }

    /// [`Campaign::scan`] calling `on_file` after each result file read (for progress on
    /// campaigns of many runs).
    pub fn scan_with(&self, on_file: &dyn Fn()) -> Result<Scan, CampaignError> {
        let by_id: HashMap<&str, &RunEntry> = self
            .manifest
            .runs
            .iter()
            .map(|e| (e.id.as_str(), e))
            .collect();
        let mut done: BTreeMap<usize, ResultFile> = BTreeMap::new();
        let mut failed: BTreeMap<usize, ResultFile> = BTreeMap::new();
        let dir = self.results_dir();
        let listing = match std::fs::read_dir(&dir) {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Scan::new(&self.manifest, done, failed))
            }
            Err(e) => return Err(io_err("list", &dir, e)),
        };
        let mut problems = Vec::new();
        for f in listing {
            let f = f.map_err(|e| io_err("list", &dir, e))?;
            let name = f.file_name().to_string_lossy().to_string();
            let (e, is_failed) = match self.classify(&name, &by_id) {
                Ok(Some(x)) => x,
                Ok(None) => continue,
                Err(p) => {
                    problems.push(p);
                    continue;
                }
            };
            let read = self.read_result(&f.path(), e);
            on_file();
            match read {
                Ok(r) if is_failed == r.error.is_some() => {
                    if is_failed {
                        failed.insert(e.index, r);
                    } else {
                        done.insert(e.index, r);
                    }
                }
                Ok(_) => problems.push(format!(
                    "{}: its content does not match its name (.json holds finished runs, .failed.json failed ones); move it out of {}",
                    f.path().display(),
                    dir.display()
                )),
                Err(CampaignError::Invalid(m)) => problems.extend(m),
                Err(other) => return Err(other),
            }
        }
        if !problems.is_empty() {
            problems.sort();
            return Err(CampaignError::Invalid(problems));
        }
        // A run that failed once and then finished counts as done.
        failed.retain(|i, _| !done.contains_key(i));
        Ok(Scan::new(&self.manifest, done, failed))
    }
}

/// The state of a campaign's runs.
#[derive(Debug)]
pub struct Scan {
    /// Finished runs by manifest index.
    pub done: BTreeMap<usize, ResultFile>,
    /// Failed runs (and not finished since) by manifest index.
    pub failed: BTreeMap<usize, ResultFile>,
    /// Runs with no result, in manifest order.
    pub missing: Vec<usize>,
}

impl Scan {
    fn new(
        m: &Manifest,
        done: BTreeMap<usize, ResultFile>,
        failed: BTreeMap<usize, ResultFile>,
    ) -> Scan {
        let missing = (0..m.runs.len())
            .filter(|i| !done.contains_key(i) && !failed.contains_key(i))
            .collect();
        Scan {
            done,
            failed,
            missing,
        }
    }

    /// Whether every run has finished.
    pub fn complete(&self) -> bool {
        self.failed.is_empty() && self.missing.is_empty()
    }
}

/// A run's description for people: `run 12 (point 3: key=value, seed 9)`.
pub fn describe(e: &RunEntry) -> String {
    let label = if e.overrides.is_empty() {
        "the scenario as written".to_string()
    } else {
        e.overrides
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "run {} [{}] (point {}: {label}, seed {})",
        e.index,
        e.id,
        e.point + 1,
        e.seed
    )
}

#[cfg(test)]
mod tests;
