//! Issue 4 §6: the same scenario and seed give byte-identical `summary.json` apart from
//! `wall_s`; a different seed gives different results where randomness is involved; and a
//! sweep's results do not depend on how many runs go at once.

use std::path::Path;
use std::process::Command;

fn tfrclab(args: &[&str], dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tfrclab");
    assert!(
        out.status.success(),
        "tfrclab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every source of randomness the simulator has: Bernoulli and Gilbert–Elliott loss, RED's
/// early drops, NS-2's randomised CBR interval, wireless backoff; plus TCP and TFRC reacting
/// to all of them.
const RANDOM: &str = r#"name = "random"
duration = "15s"
seed = 1

[topology]
kind = "dumbbell"
senders = 3
access_bandwidth = "10Mbps"
access_delay = ["1ms", "4ms", "9ms"]
bottleneck_bandwidth = "3Mbps"
bottleneck_delay = "15ms"
queue = "red"
[topology.loss]
model = "gilbert-elliott"
p_good_bad = 0.01
p_bad_good = 0.3

[[links]]
from = "d2"
to = "phone"
bandwidth = "2Mbps"
delay = "1ms"
[links.wireless]
frame_loss = 0.1

[[flows]]
name = "tfrc1"
kind = "tfrc"
from = "s0"
to = "d0"

[[flows]]
name = "tcp1"
kind = "tcp"
from = "s1"
to = "d1"

[[flows]]
name = "udp1"
kind = "udp"
from = "s2"
to = "phone"
rate = "700kbps"
random = true
"#;

/// The file without its `wall_s` line (the only field allowed to differ).
fn without_wall(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("\"wall_s\":"))
        .collect();
    assert_eq!(
        kept.len() + 1,
        text.lines().count(),
        "exactly one wall_s line in {}",
        path.display()
    );
    kept.join("\n")
}

#[test]
fn same_seed_same_bytes_other_seed_other_results() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("r.toml"), RANDOM).unwrap();
    tfrclab(&["run", "r.toml", "--out", "a", "--seed", "42"], d);
    tfrclab(&["run", "r.toml", "--out", "b", "--seed", "42"], d);
    tfrclab(&["run", "r.toml", "--out", "c", "--seed", "43"], d);
    let a = without_wall(&d.join("a/summary.json"));
    let b = without_wall(&d.join("b/summary.json"));
    assert!(a == b, "same seed, different summary.json:\n{a}\n---\n{b}");
    for f in ["flows.csv", "timeseries.csv"] {
        assert_eq!(
            std::fs::read(d.join("a").join(f)).unwrap(),
            std::fs::read(d.join("b").join(f)).unwrap(),
            "{f}"
        );
    }

    // Another seed: every flow's numbers change (each crosses a random element), not just
    // the seed field.
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("c/summary.json")).unwrap()).unwrap();
    let a: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(
        (a["seed"].as_u64(), c["seed"].as_u64()),
        (Some(42), Some(43))
    );
    for (fa, fc) in a["flows"]
        .as_array()
        .unwrap()
        .iter()
        .zip(c["flows"].as_array().unwrap())
    {
        assert_ne!(
            (fa["received_packets"].as_u64(), fa["delay_mean_s"].as_f64()),
            (fc["received_packets"].as_u64(), fc["delay_mean_s"].as_f64()),
            "flow {} did not change with the seed",
            fa["name"]
        );
    }
}

#[test]
fn the_scenario_seed_is_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("r.toml"), RANDOM).unwrap();
    tfrclab(&["run", "r.toml", "--out", "a"], d);
    tfrclab(&["run", "r.toml", "--out", "b", "--seed", "1"], d);
    assert_eq!(
        without_wall(&d.join("a/summary.json")),
        without_wall(&d.join("b/summary.json"))
    );
}

#[test]
fn sweep_results_do_not_depend_on_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("r.toml"), RANDOM).unwrap();
    let grid = [
        "--set",
        "topology.bottleneck_bandwidth=2Mbps,4Mbps",
        "--set",
        "flows.udp1.rate=300kbps,900kbps",
        "--seeds",
        "3",
    ];
    let mut one = vec!["sweep", "r.toml", "--out", "j1", "--jobs", "1"];
    one.extend(grid);
    let mut two = vec!["sweep", "r.toml", "--out", "j2", "--jobs", "2"];
    two.extend(grid);
    tfrclab(&one, d);
    tfrclab(&two, d);
    for f in ["sweep.csv", "runs.csv"] {
        let (a, b) = (
            std::fs::read_to_string(d.join("j1").join(f)).unwrap(),
            std::fs::read_to_string(d.join("j2").join(f)).unwrap(),
        );
        assert!(a == b, "{f} differs between --jobs 1 and --jobs 2");
    }
    let strip = |p: &Path| -> String {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| {
                let t = l.trim_start();
                !t.starts_with("\"wall_s\":") && !t.starts_with("\"jobs\":")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        strip(&d.join("j1/sweep.json")),
        strip(&d.join("j2/sweep.json"))
    );
}
