//! `tfrclab campaign`: a sweep kept in a directory, split into shards for Slurm array tasks
//! (or any machines sharing the directory), resumable, merged into what `tfrclab sweep`
//! writes. The logic is in `lab::campaign`; this parses arguments and prints.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::AtomicBool;

use clap::{Args as ClapArgs, Parser, Subcommand};

use crate::EXIT_BAD_INPUT;
use lab::campaign::{self, exec, merge, slurm, Campaign, CampaignError, NewOptions, Shard};
use lab::sweep::{self, Axis};

/// Arguments of `tfrclab campaign`.
#[derive(Parser, Debug)]
#[command(after_help = "\
Life cycle (docs/cluster.md):
  tfrclab campaign new runs/bw scenarios/examples/dumbbell.toml --set topology.bottleneck_bandwidth=1Mbps,2Mbps,4Mbps --seeds 20
  tfrclab campaign slurm runs/bw --tasks 16 --submit -- --time=00:30:00 --partition=short
  tfrclab campaign status runs/bw
  tfrclab campaign run runs/bw --shard 3/16      # by hand, or again to resume
  tfrclab campaign merge runs/bw                 # writes runs/bw/merged/")]
pub struct Args {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Sub,
}

/// The campaign subcommands.
#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Validate a sweep's grid and write the campaign's manifest into DIR (nothing runs).
    New(NewArgs),
    /// Run the runs of one shard (default: all) that have no result yet; rerun to resume.
    Run(RunArgs),
    /// Write DIR/campaign.sbatch (a Slurm array job, one shard per task); --submit runs sbatch.
    Slurm(SlurmArgs),
    /// Print done / missing / failed counts; exit 0 only when every run has finished.
    Status(StatusArgs),
    /// Merge the results into what `tfrclab sweep` writes, plus a tidy table (CSV, Parquet).
    Merge(MergeArgs),
}

/// `campaign new`.
#[derive(ClapArgs, Debug)]
pub struct NewArgs {
    /// The campaign directory (must not exist, or be empty).
    pub dir: PathBuf,
    /// The scenario file (TOML; see docs/scenario.md). Its text is copied into the campaign.
    pub scenario: PathBuf,
    /// A swept parameter, as for `tfrclab sweep`: `KEY=V1,V2,...`; repeat for a grid.
    #[arg(long = "set", value_name = "KEY=V1,V2,...", value_parser = sweep::parse_axis)]
    pub sets: Vec<Axis>,
    /// Seeds per grid point: s, s+1, …, s+N−1 from the scenario's seed (or --seed-base).
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub seeds: u32,
    /// First seed (default: each grid point's scenario seed).
    #[arg(long, value_name = "S")]
    pub seed_base: Option<u64>,
}

/// `campaign run`.
#[derive(ClapArgs, Debug)]
pub struct RunArgs {
    /// The campaign directory.
    pub dir: PathBuf,
    /// Run shard K of N (0 ≤ K < N; run i belongs to shard i mod N). Default: in a Slurm array
    /// task, SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT; else every run.
    #[arg(long, value_name = "K/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// Runs at a time (default: all cores). Results do not depend on it.
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// No progress on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `campaign slurm`.
#[derive(ClapArgs, Debug)]
pub struct SlurmArgs {
    /// The campaign directory (on a file system every node sees).
    pub dir: PathBuf,
    /// Array tasks (shards).
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(1..))]
    pub tasks: u32,
    /// Threads per task (default: the task's SLURM_CPUS_PER_TASK, else 1).
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Submit the script with sbatch.
    #[arg(long)]
    pub submit: bool,
    /// With --submit: wait for every task to end (sbatch --wait), then print the status.
    #[arg(long, requires = "submit")]
    pub wait: bool,
    /// More sbatch options, after `--`: `-- --time=01:00:00 --partition=short --account=me`.
    #[arg(last = true, value_name = "SBATCH OPTIONS")]
    pub sbatch: Vec<String>,
}

/// `campaign status`.
#[derive(ClapArgs, Debug)]
pub struct StatusArgs {
    /// The campaign directory.
    pub dir: PathBuf,
}

/// `campaign merge`.
#[derive(ClapArgs, Debug)]
pub struct MergeArgs {
    /// The campaign directory.
    pub dir: PathBuf,
    /// Output folder (default: DIR/merged).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The metrics the report opens with, as for `tfrclab sweep --primary`.
    #[arg(long, value_name = "METRIC", value_delimiter = ',')]
    pub primary: Vec<String>,
}

fn fail(e: CampaignError) -> ExitCode {
    match e {
        CampaignError::Invalid(m) => {
            for line in m {
                eprintln!("error: {line}");
            }
            ExitCode::from(EXIT_BAD_INPUT)
        }
        CampaignError::Io(m) => {
            eprintln!("error: {m}");
            ExitCode::FAILURE
        }
    }
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    Ok(match &args.command {
        Sub::New(a) => new(a),
        Sub::Run(a) => run_shard(a),
        Sub::Slurm(a) => slurm_cmd(a)?,
        Sub::Status(a) => status(a),
        Sub::Merge(a) => merge_cmd(a)?,
    })
}

fn new(a: &NewArgs) -> ExitCode {
    let file = a.scenario.display().to_string();
    let text = match std::fs::read_to_string(&a.scenario) {
        Ok(t) => t,
        Err(e) => {
            return fail(CampaignError::Invalid(vec![format!(
                "{file}: cannot read the file: {e}"
            )]))
        }
    };
    let scenario = match lab::Scenario::parse(&file, &text) {
        Ok(s) => s,
        Err(e) => return fail(CampaignError::Invalid(vec![e.to_string()])),
    };
    let opts = NewOptions {
        axes: a.sets.clone(),
        seeds: a.seeds,
        seed_base: a.seed_base,
    };
    match Campaign::create(&a.dir, &scenario, &opts) {
        Ok(c) => {
            println!(
                "campaign {} in {}: {} runs ({} grid point(s) × {} seed(s)); nothing has run yet.\n\
                 Next: tfrclab campaign run {} [--shard K/N], or tfrclab campaign slurm {} --tasks M --submit",
                c.manifest.campaign,
                a.dir.display(),
                c.manifest.runs.len(),
                c.plan.points.len(),
                a.seeds,
                a.dir.display(),
                a.dir.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

fn run_shard(a: &RunArgs) -> ExitCode {
    let shard = match a.shard {
        Some(s) => s,
        None => match Shard::from_slurm(|k| std::env::var(k).ok()) {
            Some(Ok(s)) => s,
            Some(Err(e)) => return fail(CampaignError::Invalid(vec![e])),
            None => Shard::ALL,
        },
    };
    let c = match Campaign::open(&a.dir) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let jobs = lab::parallel::jobs(a.jobs);
    let mut bar = lab::parallel::Progress::new(0, a.quiet);
    let cancel = AtomicBool::new(false);
    let report = exec::run_shard(
        &c,
        shard,
        jobs,
        &|n| bar.set_length(n as u64),
        &|| bar.inc(),
        &cancel,
    );
    bar.finish();
    match report {
        Ok(r) => {
            println!(
                "shard {} of {}: {} runs, {} already done, {} finished now, {} failed (on {} thread(s))",
                r.shard,
                a.dir.display(),
                r.runs,
                r.already_done,
                r.finished,
                r.failed,
                jobs
            );
            if r.failed > 0 {
                eprintln!(
                    "error: {} run(s) failed; their errors: tfrclab campaign status {}",
                    r.failed,
                    a.dir.display()
                );
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => fail(e),
    }
}

/// Print the status; true when complete.
fn print_status(c: &Campaign) -> Result<bool, CampaignError> {
    // Reading 10^5 result files takes a while: progress on stderr (nothing on short scans
    // off a terminal).
    let mut bar = lab::parallel::Progress::new(c.manifest.runs.len() as u64, false);
    let scan = c.scan_with(&|| bar.inc());
    bar.finish();
    let scan = scan?;
    let total = c.manifest.runs.len();
    println!(
        "campaign {} in {}: {} runs ({} grid point(s) × {} seed(s)), tfrclab {}",
        c.manifest.campaign,
        c.dir.display(),
        total,
        c.plan.points.len(),
        c.manifest.seeds,
        c.manifest.tfrclab_version
    );
    println!(
        "done {}, missing {}, failed {}",
        scan.done.len(),
        scan.missing.len(),
        scan.failed.len()
    );
    for (i, r) in &scan.failed {
        println!(
            "failed: {}: {}",
            campaign::describe(&c.manifest.runs[*i]),
            r.error.as_deref().unwrap_or("")
        );
    }
    const SHOWN: usize = 10;
    for i in scan.missing.iter().take(SHOWN) {
        println!("missing: {}", campaign::describe(&c.manifest.runs[*i]));
    }
    if scan.missing.len() > SHOWN {
        println!("missing: … and {} more", scan.missing.len() - SHOWN);
    }
    Ok(scan.complete())
}

fn status(a: &StatusArgs) -> ExitCode {
    match Campaign::open(&a.dir).and_then(|c| print_status(&c)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => fail(e),
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn slurm_cmd(a: &SlurmArgs) -> anyhow::Result<ExitCode> {
    let c = match Campaign::open(&a.dir) {
        Ok(c) => c,
        Err(e) => return Ok(fail(e)),
    };
    let options = match slurm::sbatch_options(&a.sbatch) {
        Ok(o) => o,
        Err(e) => return Ok(fail(CampaignError::Invalid(vec![e]))),
    };
    let exe = std::env::current_exe()?;
    let dir = absolute(&a.dir);
    let script = slurm::sbatch_script(
        &c.plan.scenario,
        &dir,
        &exe,
        a.tasks as usize,
        &options,
        a.jobs,
    );
    std::fs::create_dir_all(dir.join("logs"))?;
    let path = dir.join("campaign.sbatch");
    if let Err(e) = campaign::write_atomic(&path, script.as_bytes()) {
        return Ok(fail(e));
    }
    println!(
        "wrote {} ({} array task(s) for {} runs; logs in {}/logs)",
        path.display(),
        a.tasks,
        c.manifest.runs.len(),
        dir.display()
    );
    if !a.submit {
        println!("submit with: sbatch {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut cmd = Command::new("sbatch");
    if a.wait {
        cmd.arg("--wait");
    }
    cmd.arg(&path);
    // sbatch prints "Submitted batch job N" itself (before waiting, with --wait).
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "error: cannot run sbatch: {e}. Is this a Slurm login node? (Debian: apt-get install slurm-client); the script is {}",
                path.display()
            );
            return Ok(ExitCode::FAILURE);
        }
    };
    if !a.wait {
        if !status.success() {
            eprintln!("error: sbatch failed ({status})");
            return Ok(ExitCode::FAILURE);
        }
        println!(
            "follow it with: tfrclab campaign status {}",
            a.dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if !status.success() {
        eprintln!(
            "sbatch --wait: some array task did not succeed ({status}); the campaign's status:"
        );
    }
    Ok(match print_status(&c) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => fail(e),
    })
}

fn merge_cmd(a: &MergeArgs) -> anyhow::Result<ExitCode> {
    let c = match Campaign::open(&a.dir) {
        Ok(c) => c,
        Err(e) => return Ok(fail(e)),
    };
    let mut bar = lab::parallel::Progress::new(c.manifest.runs.len() as u64, false);
    let m = merge::merge_with(&c, &|| bar.inc());
    bar.finish();
    let m = match m {
        Ok(m) => m,
        Err(e) => return Ok(fail(e)),
    };
    let out = a.out.clone().unwrap_or_else(|| a.dir.join("merged"));
    let dir = match merge::write_merged(&m, &out, &a.primary) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e:#}; nothing was written");
            return Ok(ExitCode::FAILURE);
        }
    };
    if !m.complete() {
        eprintln!(
            "warning: {} of {} runs have no result ({} missing, {} failed); the aggregates use the {} present. \
             The runs not in it: {}/missing.csv; finish them with tfrclab campaign run {}",
            m.missing.len() + m.failed.len(),
            c.manifest.runs.len(),
            m.missing.len(),
            m.failed.len(),
            m.results.len(),
            dir.display(),
            a.dir.display()
        );
    }
    print!("{}", lab::sweep::text_table(&m.result, &a.primary));
    println!(
        "merged {} of {} runs; wrote {}/{{{}{}}}",
        m.results.len(),
        c.manifest.runs.len(),
        dir.display(),
        merge::MERGED_FILES,
        if m.complete() { "" } else { ", missing.csv" }
    );
    Ok(ExitCode::SUCCESS)
}
