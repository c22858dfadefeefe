//! The NS-2.35 cross-validation suite: `tfrclab validate` on every `validation/*.toml` must
//! pass, and the command's error paths must say what is wrong with the right exit code.
//!
//! These tests need the `ns` binary (Debian/Ubuntu package `ns2`); without it they fail with
//! the install hint rather than skip, so a CI machine without NS-2 cannot pass silently.

use std::path::{Path, PathBuf};
use std::process::Output;

use lab::validate::{Metric, MARK_BEGIN, MARK_END};
use tfrclab::commands::validate::ValidateJson;

mod common;

use common::{repo, require_ns, tfrclab_at_root as tfrclab};

/// A directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("tfrclab-validation-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }
    fn join(&self, p: &str) -> String {
        self.0.join(p).display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn suite_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(repo().join("validation"))
        .expect("validation/ exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".toml"))
        .map(|n| format!("validation/{n}"))
        .collect();
    files.sort();
    files
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The whole suite: every scenario passes, the scenarios are all there, and issue 3's
/// tolerances are the ones applied.
#[test]
fn every_validation_scenario_agrees_with_ns2() {
    require_ns();
    let files = suite_files();
    assert!(
        files.len() >= 10,
        "at least 10 validation scenarios, found {files:?}"
    );
    let scratch = Scratch::new("suite");
    let out_dir = scratch.join("out");
    let md = scratch.join("validation.md");
    let mut args = vec!["validate"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--out", &out_dir, "--markdown", &md]);
    let o = tfrclab(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    let json: ValidateJson = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&out_dir).join("validate.json")).expect("validate.json"),
    )
    .expect("validate.json parses");
    assert!(json.pass);
    assert_eq!(json.scenarios.len(), files.len());
    for s in &json.scenarios {
        let r = s
            .report
            .as_ref()
            .unwrap_or_else(|| panic!("{}: {:?}", s.file, s.error));
        assert!(r.pass, "{}: {:?}", s.file, r.failures().collect::<Vec<_>>());
        assert!(
            r.tolerances
                .why
                .as_deref()
                .is_some_and(|w| !w.trim().is_empty()),
            "{} states why its tolerances",
            s.file
        );
        // Every flow has its throughput, delay and loss compared.
        for m in [Metric::Throughput, Metric::Delay, Metric::Loss] {
            assert_eq!(
                r.checks.iter().filter(|c| c.metric == m).count(),
                r.ns2.len(),
                "{}: {m:?} checked per flow",
                s.file
            );
        }
    }
    let report = |name: &str| {
        json.scenarios
            .iter()
            .filter_map(|s| s.report.as_ref())
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("validation scenario {name:?} is missing"))
    };
    // Issue 5 item 3's list.
    for name in [
        "tcp-single",
        "tcp-two-rtts",
        "tfrc-single",
        "tfrc-tcp-droptail",
        "tfrc-tcp-red",
        "tfrc3-tcp1",
        "udp-overload",
        "seed002-wireless",
        "seed004-multi-bottleneck",
        "tcp-window-limited",
    ] {
        report(name);
    }
    // Issue 17's CUBIC scenarios (the SACK ones come with the SACK agent).
    for name in [
        "cubic-single",
        "cubic-two-rtts",
        "cubic-vs-newreno",
        "cubic-vs-tfrc-droptail",
        "cubic-vs-tfrc-red",
    ] {
        report(name);
    }
    // Issue 17's tolerances: CUBIC alone within 5%, competing flows within 15% per flow on
    // means over start phases.
    assert!(report("cubic-single").tolerances.throughput <= 0.05);
    for name in [
        "cubic-two-rtts",
        "cubic-vs-newreno",
        "cubic-vs-tfrc-droptail",
        "cubic-vs-tfrc-red",
    ] {
        let r = report(name);
        assert!(r.tolerances.throughput <= 0.15, "{name}");
        assert!(r.seeds.len() > 1, "{name}: means over start phases");
    }
    // Issue 31's ECN scenarios: each ECN-capable TFRC flow is marked in both simulators and
    // its mark rate is compared.
    for name in ["ecn-tfrc-red", "ecn-tfrc-vs-tcp-red"] {
        let r = report(name);
        let marks: Vec<_> = r
            .checks
            .iter()
            .filter(|c| c.metric == Metric::Marks)
            .collect();
        assert!(!marks.is_empty(), "{name}: mark rates compared");
        assert!(
            marks.iter().all(|c| c.ns2 > 0.005 && c.tfrclab > 0.005),
            "{name}: {marks:?}"
        );
        assert!(
            r.tolerances.throughput <= 0.10 && r.seeds.len() > 1,
            "{name}"
        );
    }
    // Issue 3's tolerances.
    let t = &report("tfrc-single").tolerances;
    assert!(t.throughput <= 0.05);
    let t = &report("tfrc-tcp-droptail").tolerances;
    assert!(t.throughput <= 0.15 && t.total_throughput <= 0.03);
    let t = &report("tfrc-tcp-red").tolerances;
    assert!(t.throughput <= 0.20 && t.total_throughput <= 0.05);

    // The markdown has one summary row per scenario and each scenario's table.
    let md = std::fs::read_to_string(&md).expect("markdown written");
    assert!(md.contains(MARK_BEGIN) && md.contains(MARK_END));
    for s in json.scenarios.iter().filter_map(|s| s.report.as_ref()) {
        assert!(
            md.contains(&format!("### {}", s.name)),
            "{} in markdown",
            s.name
        );
    }
    // docs/validation.md is generated by this command and covers the whole suite.
    let doc =
        std::fs::read_to_string(repo().join("docs/validation.md")).expect("docs/validation.md");
    for s in json.scenarios.iter().filter_map(|s| s.report.as_ref()) {
        assert!(
            doc.contains(&format!("### {}", s.name)),
            "docs/validation.md lacks {}: regenerate it with the command it names",
            s.name
        );
    }
}

/// A tolerance of zero on a figure that differs by a fraction of a percent fails: exit 1,
/// the failing row marked, validate.json written with `pass: false`.
#[test]
fn a_difference_beyond_tolerance_exits_1() {
    require_ns();
    let scratch = Scratch::new("fail");
    let out_dir = scratch.join("out");
    let o = tfrclab(&[
        "validate",
        "validation/tfrc-single.toml",
        "--set",
        "validate.loss_abs=0",
        "--set",
        "validate.loss=0",
        "--set",
        "validate.delay=0",
        "--out",
        &out_dir,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("FAIL") && stdout.contains(" NO"),
        "{}",
        text(&o)
    );
    let json: ValidateJson = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&out_dir).join("validate.json")).expect("validate.json"),
    )
    .expect("validate.json parses");
    assert!(!json.pass);
}

/// No `ns`: exit 2 and the install hint, before anything runs.
#[test]
fn a_missing_ns_says_how_to_install_it() {
    let scratch = Scratch::new("nons");
    let o = tfrclab(&[
        "validate",
        "validation/tfrc-single.toml",
        "--ns",
        "/nonexistent/bin/ns",
        "--out",
        &scratch.join("out"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("apt-get install ns2"), "{}", text(&o));
    assert!(err.contains("/nonexistent/bin/ns"), "{}", text(&o));
    assert!(!Path::new(&scratch.join("out")).exists(), "nothing written");
}

/// A scenario NS-2 cannot express, or an invalid one, is bad input (exit 2), named in the
/// message, and nothing runs.
#[test]
fn bad_scenarios_exit_2_naming_the_problem() {
    let scratch = Scratch::new("bad");
    let rfc = scratch.join("rfc.toml");
    let text_ok = std::fs::read_to_string(repo().join("validation/tfrc-single.toml")).unwrap();
    std::fs::write(
        &rfc,
        text_ok.replace("profile = \"ns2\"", "profile = \"rfc5348\""),
    )
    .unwrap();
    let o = tfrclab(&["validate", &rfc, "--out", &scratch.join("out")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("rfc5348") && err.contains("\"ns2\""),
        "{}",
        text(&o)
    );

    let jitter = scratch.join("jitter.toml");
    std::fs::write(
        &jitter,
        text_ok.replace("[validate]", "[validate]\nstart_jitter = \"200s\""),
    )
    .unwrap();
    let o = tfrclab(&["validate", &jitter, "--out", &scratch.join("out")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("start_jitter"),
        "{}",
        text(&o)
    );
    assert!(!Path::new(&scratch.join("out")).exists(), "nothing written");
}

/// `--markdown` never overwrites a hand-written file that lacks the markers.
#[test]
fn markdown_without_markers_is_refused() {
    let scratch = Scratch::new("md");
    let md = scratch.join("doc.md");
    std::fs::write(&md, "# hand-written\n").unwrap();
    let o = tfrclab(&[
        "validate",
        "validation/tfrc-single.toml",
        "--markdown",
        &md,
        "--out",
        &scratch.join("out"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("markers"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(&md).unwrap(), "# hand-written\n");
}
