//! `tfrclab validate --real --baseline FILE --batch FILE`: an earlier batch of real runs held
//! against a baseline batch without running anything (no root needed), on the two recorded
//! batches of `validation/real/batches/` (tfrc-reno-20ms with both phase-effect remedies, 12
//! runs on a quiet host and 10 beside six CPU-bound loops), and the refusals of bad baselines.
//!
//! Budget: well under a second per test (two JSON files read, no run).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn batch(name: &str) -> PathBuf {
    root().join("validation/real/batches").join(name)
}

fn tfrclab(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(args)
        .output()
        .unwrap()
}

fn baseline_batch(base: &Path, b: &Path) -> Output {
    tfrclab(&[
        "validate".as_ref(),
        "--real".as_ref(),
        "--baseline".as_ref(),
        base.as_os_str(),
        "--batch".as_ref(),
        b.as_os_str(),
    ])
}

/// The row of `flow` and `metric` in the printed table.
fn row<'a>(out: &'a str, flow: &str, metric: &str) -> &'a str {
    out.lines()
        .find(|l| {
            let mut w = l.split_whitespace();
            w.next() == Some(flow) && l.contains(&format!(" {metric} "))
        })
        .unwrap_or_else(|| panic!("no row {flow} {metric} in:\n{out}"))
}

#[test]
fn loaded_runs_against_the_quiet_ones() {
    let o = baseline_batch(
        &batch("tfrc-reno-20ms-quiet.json"),
        &batch("tfrc-reno-20ms-loaded.json"),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("12 undistorted real runs"), "{out}");
    // The recorded shares: quiet mean 0.478 (sd 0.042, n 12), so the prediction interval is
    // 0.478 ± 2.201 · 0.042 · √(13/12) = [0.382, 0.574]; the ten loaded runs lie between
    // 0.414 and 0.524, all inside it, and their mean (0.476) agrees with the quiet one.
    let tfrc = row(&out, "tfrc", "share");
    assert!(tfrc.contains("0.478 [0.382, 0.574] (12)"), "{tfrc}");
    assert!(tfrc.contains("agree") && tfrc.contains("0 of 10"), "{tfrc}");
    let reno = row(&out, "reno", "share");
    assert!(reno.contains("0 of 10"), "{reno}");
    // The same batch against itself: every run inside, and the means agree.
    let o = baseline_batch(
        &batch("tfrc-reno-20ms-loaded.json"),
        &batch("tfrc-reno-20ms-loaded.json"),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(row(&out, "tfrc", "share").contains("0 of 10"), "{out}");
}

#[test]
fn a_baseline_of_another_scenario_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.json");
    let text = std::fs::read_to_string(batch("tfrc-reno-20ms-quiet.json")).unwrap();
    std::fs::write(
        &other,
        text.replace("\"name\":\"tfrc-reno-20ms\"", "\"name\":\"two-tfrc\""),
    )
    .unwrap();
    let o = baseline_batch(&other, &batch("tfrc-reno-20ms-loaded.json"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("other.json") && err.contains("no runs of scenario `tfrc-reno-20ms`"),
        "{err}"
    );
    assert!(err.contains("it has: two-tfrc"), "{err}");
}

#[test]
fn unreadable_baselines_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let o = baseline_batch(&missing, &batch("tfrc-reno-20ms-loaded.json"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("missing.json: cannot read"), "{err}");
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"scenarios\": 3}").unwrap();
    let o = baseline_batch(&batch("tfrc-reno-20ms-quiet.json"), &junk);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("junk.json: not the validate-real.json"),
        "{err}"
    );
    // --batch needs --baseline.
    let o = tfrclab(&[
        "validate".as_ref(),
        "--real".as_ref(),
        "--batch".as_ref(),
        junk.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--baseline"));
}
