//! `tfrclab campaign` through the binary, without Slurm: sharded runs, resume, merge of a
//! half-finished campaign, and bad input (an unknown DIR, a manifest edited by hand, a shard
//! like 5/4, a result file of another campaign, sbatch options it sets itself): exit 2, a clear
//! message, nothing written or overwritten. The Slurm path is in campaign_slurm.rs.

use std::path::Path;
use std::process::Output;

mod common;

fn tfrclab(args: &[&str]) -> Output {
    common::tfrclab_at_root(args)
}

fn ok(args: &[&str]) -> String {
    let out = tfrclab(args);
    assert!(
        out.status.success(),
        "tfrclab {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn bad(args: &[&str]) -> String {
    let out = tfrclab(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "tfrclab {args:?}: {err}");
    err
}

fn new_campaign(dir: &Path, seeds: &str) {
    ok(&[
        "campaign",
        "new",
        dir.to_str().unwrap(),
        "scenarios/examples/dumbbell.toml",
        "--set",
        "topology.bottleneck_bandwidth=1Mbps,2Mbps",
        "--set",
        "duration=3s",
        "--set",
        "warmup=1s",
        "--seeds",
        seeds,
    ]);
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = walk(dir);
    v.sort();
    v
}

fn walk(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
    out
}

#[test]
fn shards_resume_and_merge_half_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let d = dir.to_str().unwrap();
    new_campaign(&dir, "3");
    let out = ok(&["campaign", "run", d, "--shard", "0/2", "--jobs", "1", "-q"]);
    assert!(
        out.contains("3 runs, 0 already done, 3 finished now, 0 failed"),
        "{out}"
    );
    // Again: nothing left in that shard.
    let out = ok(&["campaign", "run", d, "--shard", "0/2", "-q"]);
    assert!(
        out.contains("3 runs, 3 already done, 0 finished now"),
        "{out}"
    );
    let st = tfrclab(&["campaign", "status", d]);
    let text = String::from_utf8_lossy(&st.stdout);
    assert_eq!(st.status.code(), Some(1), "{text}");
    assert!(text.contains("done 3, missing 3, failed 0"), "{text}");
    // A half-finished merge works and says what is missing.
    let out = tfrclab(&["campaign", "merge", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("3 of 6 runs have no result"), "{err}");
    let missing = std::fs::read_to_string(dir.join("merged/missing.csv")).unwrap();
    assert_eq!(missing.lines().count(), 1 + 3, "{missing}");
    // Inside a Slurm array task the shard comes from the environment.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(["campaign", "run", d, "-q"])
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "2")
        .current_dir(common::repo())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("shard 1/2"), "{text}");
    assert!(text.contains("3 finished now"), "{text}");
    assert!(tfrclab(&["campaign", "status", d]).status.success());
    let out = ok(&["campaign", "merge", d]);
    assert!(out.contains("merged 6 of 6 runs"), "{out}");
    assert!(!dir.join("merged/missing.csv").exists());
    // The sbatch script, written without submitting.
    let out = ok(&[
        "campaign",
        "slurm",
        d,
        "--tasks",
        "3",
        "--",
        "--time=00:10:00",
        "-p",
        "short",
    ]);
    assert!(out.contains("campaign.sbatch"), "{out}");
    let script = std::fs::read_to_string(dir.join("campaign.sbatch")).unwrap();
    for line in [
        "#SBATCH --array=0-2",
        "#SBATCH --time=00:10:00",
        "#SBATCH -p short",
        "--shard \"${SLURM_ARRAY_TASK_ID}/3\"",
    ] {
        assert!(script.contains(line), "{line} not in\n{script}");
    }
}

#[test]
fn bad_input_is_refused_and_nothing_is_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let nope = tmp.path().join("nope");
    let n = nope.to_str().unwrap();
    for sub in ["run", "status", "merge"] {
        let e = bad(&["campaign", sub, n]);
        assert!(e.contains("no such campaign directory"), "{sub}: {e}");
    }
    assert!(!nope.exists());
    let e = bad(&["campaign", "slurm", n, "--tasks", "2"]);
    assert!(e.contains("no such campaign directory"), "{e}");

    let dir = tmp.path().join("c");
    let d = dir.to_str().unwrap();
    new_campaign(&dir, "2");
    // A shard that does not exist.
    let e = bad(&["campaign", "run", d, "--shard", "5/4"]);
    assert!(
        e.contains("'5/4'") && e.contains("K = 5 is not below N = 4"),
        "{e}"
    );
    let e = bad(&["campaign", "run", d, "--shard", "1/0"]);
    assert!(e.contains("N must be at least 1"), "{e}");
    // `campaign new` over an existing campaign.
    let before = listing(&dir);
    let e = bad(&["campaign", "new", d, "scenarios/examples/dumbbell.toml"]);
    assert!(e.contains("already a campaign"), "{e}");
    // sbatch options the script sets itself.
    let e = bad(&["campaign", "slurm", d, "--tasks", "2", "--", "--array=0-9"]);
    assert!(e.contains("--array") && e.contains("--tasks"), "{e}");
    assert_eq!(listing(&dir), before, "bad input changed the campaign");

    // A manifest edited by hand: nothing runs or is written.
    let manifest = dir.join("manifest.json");
    let original = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        original.replacen("\"seeds\": 2", "\"seeds\": 3", 1),
    )
    .unwrap();
    let edited = listing(&dir);
    for args in [
        vec!["campaign", "run", d],
        vec!["campaign", "status", d],
        vec!["campaign", "merge", d],
    ] {
        let e = bad(&args);
        assert!(
            e.contains("manifest.json") && e.contains("changed after tfrclab campaign new"),
            "{args:?}: {e}"
        );
    }
    assert_eq!(listing(&dir), edited, "an edited manifest led to writes");
    std::fs::write(&manifest, &original).unwrap();

    // A result file from another campaign: refused, left as it is, nothing merged.
    let other = tmp.path().join("other");
    new_campaign(&other, "3");
    ok(&["campaign", "run", other.to_str().unwrap(), "-q"]);
    let foreign = std::fs::read_dir(other.join("results"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::copy(
        &foreign,
        dir.join("results").join(foreign.file_name().unwrap()),
    )
    .unwrap();
    let before = listing(&dir);
    for args in [
        vec!["campaign", "run", d],
        vec!["campaign", "status", d],
        vec!["campaign", "merge", d],
    ] {
        let e = bad(&args);
        assert!(
            e.contains("belongs to campaign") && e.contains("nothing was changed"),
            "{args:?}: {e}"
        );
    }
    assert_eq!(listing(&dir), before, "a foreign result led to writes");
    assert!(!dir.join("merged").exists());

    // A scenario that does not validate: the campaign is not made.
    let bad_dir = tmp.path().join("bad");
    let e = bad(&[
        "campaign",
        "new",
        bad_dir.to_str().unwrap(),
        "scenarios/examples/dumbbell.toml",
        "--set",
        "topology.nope=1,2",
    ]);
    assert!(e.contains("topology.nope"), "{e}");
    assert!(!bad_dir.exists());
}
