use std::sync::atomic::AtomicBool;

use super::*;
use crate::sweep::parse_axis;

fn dumbbell() -> Scenario {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/examples/dumbbell.toml"
    );
    Scenario::from_path(path)
        .and_then(|s| {
            s.with_sets(&[
                ("duration".into(), "3s".into()),
                ("warmup".into(), "1s".into()),
            ])
        })
        .expect("dumbbell.toml is valid")
}

fn opts() -> NewOptions {
    NewOptions {
        axes: vec![parse_axis("topology.bottleneck_bandwidth=1Mbps,2Mbps").unwrap()],
        seeds: 3,
        seed_base: None,
    }
}

fn run_all(c: &Campaign, shard: Shard) -> exec::ShardReport {
    exec::run_shard(c, shard, 2, &|_| {}, &|| {}, &AtomicBool::new(false)).unwrap()
}

#[test]
fn shards_parse_and_split_the_runs() {
    assert_eq!(Shard::parse("1/4"), Ok(Shard { k: 1, n: 4 }));
    let e = Shard::parse("5/4").unwrap_err();
    assert!(e.contains("not below N = 4") && e.contains("0 to 3"), "{e}");
    assert!(Shard::parse("0/0").unwrap_err().contains("at least 1"));
    assert!(Shard::parse("a/4")
        .unwrap_err()
        .contains("not a whole number"));
    assert!(Shard::parse("3").unwrap_err().contains("K/N"));
    let env = |id: &'static str, n: Option<&'static str>| {
        move |k: &str| match k {
            "SLURM_ARRAY_TASK_ID" => Some(id.to_string()),
            "SLURM_ARRAY_TASK_COUNT" => n.map(String::from),
            _ => None,
        }
    };
    assert_eq!(
        Shard::from_slurm(env("2", Some("4"))),
        Some(Ok(Shard { k: 2, n: 4 }))
    );
    assert!(Shard::from_slurm(env("4", Some("4"))).unwrap().is_err());
    assert!(Shard::from_slurm(env("1", None)).unwrap().is_err());
    assert_eq!(Shard::from_slurm(|_| None), None);
    // Every run in exactly one shard.
    let n = 3;
    for i in 0..10 {
        assert_eq!((0..n).filter(|&k| Shard { k, n }.contains(i)).count(), 1);
    }
}

#[test]
fn run_ids_are_stable_and_depend_on_what_runs() {
    let o = vec![("a".to_string(), "1".to_string())];
    let id = run_id("0.1.0", "x = 1", &o, 7);
    assert_eq!(id, run_id("0.1.0", "x = 1", &o, 7));
    assert_eq!(id.len(), 20);
    assert_ne!(id, run_id("0.1.0", "x = 1", &o, 8));
    assert_ne!(id, run_id("0.2.0", "x = 1", &o, 7));
    assert_ne!(id, run_id("0.1.0", "x = 2", &o, 7));
    assert_ne!(id, run_id("0.1.0", "x = 1", &[], 7));
}

#[test]
fn a_campaign_resumes_and_merges_to_the_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let s = dumbbell();
    let c = Campaign::create(&dir, &s, &opts()).unwrap();
    assert_eq!(c.manifest.runs.len(), 6);
    // Opening again gives the same manifest; creating again is refused.
    assert_eq!(Campaign::open(&dir).unwrap().manifest, c.manifest);
    let e = Campaign::create(&dir, &s, &opts()).unwrap_err();
    assert!(e.to_string().contains("already a campaign"), "{e}");

    // Shard 1 of 2 only: half done, merging says what is missing.
    let r = run_all(&c, Shard { k: 1, n: 2 });
    assert_eq!((r.runs, r.already_done, r.finished, r.failed), (3, 0, 3, 0));
    let scan = c.scan().unwrap();
    assert_eq!(
        (scan.done.len(), scan.missing.clone(), scan.complete()),
        (3, vec![0, 2, 4], false)
    );
    let half = merge::merge(&c).unwrap();
    assert_eq!(half.missing.len(), 3);
    let out = tmp.path().join("half");
    merge::write_merged(&half, &out, &[]).unwrap();
    assert!(
        std::fs::read_to_string(out.join("missing.csv"))
            .unwrap()
            .lines()
            .count()
            == 4
    );

    // The finished results are not touched by a resume of everything.
    let before: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(c.results_dir())
        .unwrap()
        .map(|f| {
            let p = f.unwrap().path();
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    let r = run_all(&c, Shard::ALL);
    assert_eq!((r.already_done, r.finished), (3, 3));
    for (p, b) in before {
        assert_eq!(
            std::fs::read(&p).unwrap(),
            b,
            "{} was rewritten",
            p.display()
        );
    }
    let m = merge::merge(&c).unwrap();
    assert!(m.complete());

    // The merge equals the sweep of the same grid and seeds, number for number.
    let sw = crate::api::sweep(
        &s,
        &SweepOptions {
            axes: opts().axes,
            seeds: 3,
            seed_base: None,
            jobs: Some(2),
        },
        &|_, _| {},
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(m.result.aggregates, sw.aggregates);
    let strip = |r: &[crate::sweep::RunRecord]| {
        r.iter()
            .map(|x| {
                let mut x = x.clone();
                x.summary.wall_s = 0.0;
                x
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&m.result.runs), strip(&sw.runs));
    let merged = tmp.path().join("merged");
    merge::write_merged(&m, &merged, &[]).unwrap();
    let swept = tmp.path().join("swept");
    crate::api::write_sweep(&sw, &swept).unwrap();
    for f in ["sweep.csv", "runs.csv"] {
        assert_eq!(
            std::fs::read_to_string(merged.join(f)).unwrap(),
            std::fs::read_to_string(swept.join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(!merged.join("missing.csv").exists());
    // The tidy table: one row per run × flow, numeric grid column.
    let t = merge::tidy_table(&m);
    assert_eq!(t.rows(), 6 * 2);
    let bw = t
        .columns
        .iter()
        .find(|(n, _)| n == "topology.bottleneck_bandwidth (Mb/s)")
        .map(|(_, v)| v.clone());
    assert!(matches!(bw, Some(merge::Values::Float(v)) if v[0] == 1.0 && v[11] == 2.0));
    let pq = std::fs::read(merged.join("flows.parquet")).unwrap();
    assert_eq!(
        (&pq[..4], &pq[pq.len() - 4..]),
        (&b"PAR1"[..], &b"PAR1"[..])
    );
    // Provenance.
    let (_, first) = &m.results[0];
    assert_eq!(first.provenance.tfrclab_version, VERSION);
    assert_eq!(
        first.provenance.scenario_hash,
        sha256_hex(s.source.as_bytes())
    );
    assert!(first.provenance.cpu_s.is_some_and(|c| c >= 0.0));
    assert!(!first.provenance.host.is_empty());
}

#[test]
fn bad_input_is_refused_and_nothing_is_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let msg = |e: CampaignError| e.to_string();

    // Unknown directory, a directory that is not a campaign.
    let e = msg(Campaign::open(&tmp.path().join("nope")).unwrap_err());
    assert!(e.contains("no such campaign directory"), "{e}");
    let e = msg(Campaign::open(tmp.path()).unwrap_err());
    assert!(e.contains("no manifest.json"), "{e}");

    // A bad grid is refused before anything is written.
    let bad = NewOptions {
        axes: vec![parse_axis("topology.nope=1,2").unwrap()],
        ..opts()
    };
    let e = msg(Campaign::create(&tmp.path().join("bad"), &dumbbell(), &bad).unwrap_err());
    assert!(e.contains("topology.nope"), "{e}");
    assert!(!tmp.path().join("bad").exists());

    // A manifest edited by hand: a seed changed, or a value of the grid.
    let dir = tmp.path().join("c");
    let c = Campaign::create(&dir, &dumbbell(), &opts()).unwrap();
    let manifest = dir.join(MANIFEST);
    let original = std::fs::read_to_string(&manifest).unwrap();
    for (from, to) in [("\"seed\": 7", "\"seed\": 70"), ("2Mbps", "3Mbps")] {
        assert!(original.contains(from));
        std::fs::write(&manifest, original.replacen(from, to, 1)).unwrap();
        let e = msg(Campaign::open(&dir).unwrap_err());
        assert!(e.contains("changed after tfrclab campaign new"), "{e}");
    }
    std::fs::write(&manifest, "{ not json").unwrap();
    let e = msg(Campaign::open(&dir).unwrap_err());
    assert!(
        e.contains("manifest.json:1:3: not a campaign manifest"),
        "{e}"
    );
    std::fs::write(&manifest, &original).unwrap();

    // A result of another campaign: refused by status, merge and run; nothing written.
    let other_dir = tmp.path().join("other");
    let other =
        Campaign::create(&other_dir, &dumbbell(), &NewOptions { seeds: 2, ..opts() }).unwrap();
    run_all(&other, Shard { k: 0, n: 3 });
    let foreign = std::fs::read_dir(other.results_dir())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // Same run (scenario, overrides, seed): same id, so it lands where this campaign's run goes.
    let target = c.results_dir().join(foreign.file_name().unwrap());
    std::fs::copy(&foreign, &target).unwrap();
    let e = msg(c.scan().unwrap_err());
    assert!(
        e.contains("belongs to campaign") && e.contains(&other.manifest.campaign),
        "{e}"
    );
    let e = msg(merge::merge(&c).unwrap_err());
    assert!(e.contains("belongs to campaign"), "{e}");
    let e = msg(
        exec::run_shard(&c, Shard::ALL, 1, &|_| {}, &|| {}, &AtomicBool::new(false)).unwrap_err(),
    );
    assert!(e.contains("belongs to campaign"), "{e}");
    assert_eq!(std::fs::read_dir(c.results_dir()).unwrap().count(), 1);
    assert_eq!(
        std::fs::read(&target).unwrap(),
        std::fs::read(&foreign).unwrap()
    );
    std::fs::remove_file(&target).unwrap();
    // Under a name no run of this campaign has.
    std::fs::write(
        c.results_dir().join("0123456789abcdef0123.json"),
        std::fs::read(&foreign).unwrap(),
    )
    .unwrap();
    let e = msg(c.scan().unwrap_err());
    assert!(e.contains("belongs to campaign"), "{e}");
}

#[test]
fn failed_runs_keep_their_error_and_are_run_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let c = Campaign::create(&dir, &dumbbell(), &opts()).unwrap();
    // A failure as `campaign run` records it (a simulator error cannot be provoked with input
    // that passes validation, so the file is written here the way exec writes it).
    let e = &c.manifest.runs[2];
    let timing = exec::RunTiming {
        wall_s: 0.0,
        cpu_s: None,
        slurm_task: None,
    };
    let ok = exec::record(&c, e, "h", timing, Err("the simulator gave up".into())).unwrap();
    assert!(!ok);
    let scan = c.scan().unwrap();
    assert_eq!(scan.failed.len(), 1);
    assert_eq!(
        scan.failed[&2].error.as_deref(),
        Some("the simulator gave up")
    );
    assert_eq!(scan.missing.len(), 5);
    let m = merge::merge(&c).unwrap();
    assert_eq!(m.failed.len(), 1);
    assert_eq!(m.failed[0].1, "the simulator gave up");
    // A failed result under the name of a finished one is refused.
    let wrong = c.result_path(&c.manifest.runs[3]);
    std::fs::copy(c.failed_path(e), &wrong).unwrap();
    assert!(c
        .scan()
        .unwrap_err()
        .to_string()
        .contains("is not the result of run"));
    std::fs::remove_file(&wrong).unwrap();
    // `campaign run` runs it again; once it finishes, the error file goes.
    let r = run_all(&c, Shard::ALL);
    assert_eq!((r.finished, r.failed), (6, 0));
    assert!(!c.failed_path(e).exists());
    assert!(c.scan().unwrap().complete());
}
