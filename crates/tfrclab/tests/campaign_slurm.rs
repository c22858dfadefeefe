//! `tfrclab campaign` on a real single-node Slurm (scripts/slurm-up: munged, slurmctld, slurmd
//! as root): a campaign of 40 runs submitted as an array of 4 tasks, one task cancelled
//! (`scancel` of one array element) while its shard is half done, the campaign resumed through
//! Slurm, and the merge compared with a local `tfrclab sweep` of the same grid and seeds,
//! number for number. The test fails (never skips) when Slurm cannot be started.
//!
//! Every wait is bounded (generous: the machine may be loaded) and says what it waited for.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const TASKS: usize = 4;
const SEEDS: &str = "10";
// 4 grid points × 10 seeds = 40 runs; 300 simulated seconds make a run take a few tenths of
// a second, so a task's 10 runs take seconds and it can be cancelled half-way.
const SETS: [&str; 4] = [
    "--set",
    "topology.bottleneck_bandwidth=6Mbps,8Mbps,10Mbps,12Mbps",
    "--set",
    "duration=300s",
];

/// Bounds of the waits (not timings under test: only how long to wait before failing).
const SLURM_WAIT: Duration = Duration::from_secs(900);
const POLL: Duration = Duration::from_millis(50);

/// Starts Slurm (scripts/slurm-up) and stops it on drop when this test started it.
struct Slurm {
    conf: String,
    started: bool,
}

impl Slurm {
    fn up() -> Slurm {
        let out = Command::new("bash")
            .arg(common::repo().join("scripts/slurm-up"))
            .output()
            .expect("run bash scripts/slurm-up");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "Slurm could not be started, so the campaign's Slurm test cannot run. \
             scripts/slurm-up needs root and Debian's slurm-wlm and munge \
             (run scripts/setup as root, or: apt-get install slurm-wlm munge).\n{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let conf = stdout
            .lines()
            .find_map(|l| l.strip_prefix("SLURM_CONF="))
            .expect("scripts/slurm-up prints SLURM_CONF=...")
            .to_string();
        Slurm {
            conf,
            started: !stdout.contains("already up"),
        }
    }

    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        if self.started {
            let _ = Command::new("bash")
                .arg(common::repo().join("scripts/slurm-down"))
                .status();
        }
    }
}

fn tfrclab(slurm: &Slurm) -> Command {
    let mut c = slurm.cmd(env!("CARGO_BIN_EXE_tfrclab"));
    c.current_dir(common::repo());
    c
}

fn ok(mut c: Command, what: &str) -> String {
    let out: Output = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Wait for `child` at most `bound`; kill it and fail when it takes longer.
fn wait_bounded(mut child: Child, bound: Duration, what: &str) -> Output {
    let t0 = Instant::now();
    loop {
        if child.try_wait().expect("poll child").is_some() {
            return child.wait_with_output().expect("collect output");
        }
        if t0.elapsed() > bound {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collect output");
            panic!(
                "{what} did not end within {} s (is the Slurm node up? sinfo -N -l):\n{}\n{}",
                bound.as_secs(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The campaign's run ids in manifest order.
fn run_ids(dir: &Path) -> Vec<String> {
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    m["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

/// Finished results per shard (run i is in shard i mod TASKS).
fn done_per_shard(dir: &Path, ids: &[String]) -> Vec<usize> {
    let mut n = vec![0; TASKS];
    for (i, id) in ids.iter().enumerate() {
        if dir.join("results").join(format!("{id}.json")).exists() {
            n[i % TASKS] += 1;
        }
    }
    n
}

fn result_files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    std::fs::read_dir(dir.join("results"))
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

#[test]
fn a_campaign_on_slurm_survives_a_cancelled_task_and_equals_the_local_sweep() {
    let slurm = Slurm::up();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("campaign");
    let scenario = "scenarios/examples/dumbbell.toml";

    let mut new = tfrclab(&slurm);
    new.args(["campaign", "new", dir.to_str().unwrap(), scenario])
        .args(SETS)
        .args(["--seeds", SEEDS]);
    ok(new, "campaign new");
    let ids = run_ids(&dir);
    assert_eq!(ids.len(), 40);
    let per_shard = ids.len() / TASKS;

    // Submit the array without waiting.
    let mut submit = tfrclab(&slurm);
    submit.args([
        "campaign",
        "slurm",
        dir.to_str().unwrap(),
        "--tasks",
        &TASKS.to_string(),
        "--submit",
    ]);
    let out = ok(submit, "campaign slurm --submit");
    let job: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("Submitted batch job "))
        .and_then(|j| j.trim().parse().ok())
        .unwrap_or_else(|| panic!("no job id in the output of campaign slurm --submit:\n{out}"));
    let script = std::fs::read_to_string(dir.join("campaign.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-3"), "{script}");

    // Cancel the first task seen half-way through its shard.
    let t0 = Instant::now();
    let victim = loop {
        let done = done_per_shard(&dir, &ids);
        if let Some(k) = done.iter().position(|&d| d >= 1 && d < per_shard) {
            break k;
        }
        assert!(
            done.iter().any(|&d| d < per_shard),
            "every array task finished before one could be cancelled half-way ({done:?} runs done per shard)"
        );
        assert!(
            t0.elapsed() < SLURM_WAIT,
            "no array task of job {job} produced a result within {} s (squeue: {})",
            SLURM_WAIT.as_secs(),
            String::from_utf8_lossy(&slurm.cmd("squeue").output().unwrap().stdout)
        );
        std::thread::sleep(POLL);
    };
    ok(
        {
            let mut c = slurm.cmd("scancel");
            c.arg(format!("{job}_{victim}"));
            c
        },
        "scancel",
    );
    // Wait for the rest of the array to end.
    let t0 = Instant::now();
    loop {
        let q = slurm
            .cmd("squeue")
            .args(["-h", "-j", &job.to_string()])
            .output()
            .unwrap();
        if q.status.success() && q.stdout.iter().all(|b| b.is_ascii_whitespace()) {
            break;
        }
        assert!(
            t0.elapsed() < SLURM_WAIT,
            "job {job} still queued after {} s:\n{}",
            SLURM_WAIT.as_secs(),
            String::from_utf8_lossy(&q.stdout)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let done = done_per_shard(&dir, &ids);
    assert!(
        done[victim] < per_shard,
        "the cancelled task's shard {victim} finished anyway: {done:?} runs done per shard"
    );
    for (k, &d) in done.iter().enumerate() {
        if k != victim {
            assert_eq!(d, per_shard, "shard {k} did not finish: {done:?}");
        }
    }

    // Status: incomplete, exit 1, the missing runs named.
    let st = tfrclab(&slurm)
        .args(["campaign", "status", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&st.stdout);
    assert_eq!(st.status.code(), Some(1), "{text}");
    let missing = per_shard - done[victim];
    assert!(
        text.contains(&format!(
            "done {}, missing {missing}, failed 0",
            40 - missing
        )),
        "{text}"
    );

    // Resume through Slurm, waiting; the finished results are kept as they are.
    let before = result_files(&dir);
    let mut resume = tfrclab(&slurm);
    resume
        .args([
            "campaign",
            "slurm",
            dir.to_str().unwrap(),
            "--tasks",
            &TASKS.to_string(),
            "--submit",
            "--wait",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = wait_bounded(
        resume.spawn().unwrap(),
        SLURM_WAIT,
        "campaign slurm --submit --wait",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the resumed campaign is not complete:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("done 40, missing 0, failed 0"), "{text}");
    let after = result_files(&dir);
    for (p, b) in &before {
        assert_eq!(
            after.get(p),
            Some(b),
            "{} was lost or rewritten by the resume",
            p.display()
        );
    }
    assert_eq!(after.len(), 40);
    // Provenance: each result names its array task and host.
    for b in after.values() {
        let r: Value = serde_json::from_slice(b).unwrap();
        let p = &r["provenance"];
        assert!(
            p["slurm_task"].as_str().is_some_and(|t| t.contains('_')),
            "{p}"
        );
        assert!(
            p["cpu_s"].as_f64().is_some() && p["wall_s"].as_f64().is_some(),
            "{p}"
        );
        assert!(!p["host"].as_str().unwrap().is_empty());
    }

    // The merge equals a local sweep of the same grid and seeds, number for number.
    let merged = tmp.path().join("merged");
    let mut m = tfrclab(&slurm);
    m.args([
        "campaign",
        "merge",
        dir.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    ok(m, "campaign merge");
    let swept = tmp.path().join("swept");
    let mut s = tfrclab(&slurm);
    s.args(["sweep", scenario]).args(SETS).args([
        "--seeds",
        SEEDS,
        "--quiet",
        "--out",
        swept.to_str().unwrap(),
    ]);
    ok(s, "sweep");
    for f in ["sweep.csv", "runs.csv"] {
        let a = std::fs::read_to_string(merged.join(f)).unwrap();
        let b = std::fs::read_to_string(swept.join(f)).unwrap();
        assert!(a.lines().count() > 40, "{f} has too few rows");
        assert!(
            a == b,
            "{f}: the merged campaign differs from the local sweep"
        );
    }
    let json = |d: &Path| {
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("sweep.json")).unwrap()).unwrap();
        // The machine-dependent fields (docs/metrics.md).
        v["wall_s"] = Value::Null;
        v["jobs"] = Value::Null;
        v
    };
    assert_eq!(json(&merged), json(&swept));
    let flows = std::fs::read_to_string(merged.join("flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 1 + 40 * 2, "one row per run × flow");
    assert!(!merged.join("missing.csv").exists());
}
