//! `scenarios/examples/`: every example runs and balances its packet accounting, and together
//! the examples use every key and every named value the scenario parser accepts.
//!
//! The accepted keys are not listed here: they are read from the parser's own "unknown field"
//! errors, so a key added to the format without an example makes this test fail and name it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use lab::runner::{simulate, RunOptions};
use lab::summary::summarize;
use scenario::{overrides, Scenario};

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples")
}

fn examples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .expect("scenarios/examples/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    assert!(v.len() >= 8, "expected the example set, found {v:?}");
    v
}

#[test]
fn every_example_runs_and_balances() {
    for path in examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with('#'),
            "{}: an example starts with a comment saying what it shows",
            path.display()
        );
        let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            s.duration.as_secs_f64() <= 60.0,
            "{}: keep examples short so this test stays fast",
            path.display()
        );
        let out = simulate(&s, &RunOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let sum = summarize(&s, &out);
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(sum.events > 0, "{name}: nothing happened");
        assert_eq!(sum.flows.len(), s.flows.len(), "{name}");
        for f in &sum.flows {
            assert!(
                f.sent_packets > 0 && f.received_packets > 0,
                "{name}: flow {} sent {} and received {}",
                f.name,
                f.sent_packets,
                f.received_packets
            );
            assert_eq!(
                f.dropped_packets,
                f.dropped_by_cause.values().sum::<u64>(),
                "{name}: flow {} drops by cause",
                f.name
            );
            assert!(f.received_packets <= f.sent_packets, "{name}: {}", f.name);
        }
        assert_eq!(sum.accounting.len(), 2 * s.flows.len(), "{name}");
        for a in &sum.accounting {
            let dropped: u64 = a.dropped_by_cause.values().sum();
            assert_eq!(
                a.sent,
                a.delivered + dropped + a.in_flight,
                "{name}: flow {} {} direction: sent = delivered + dropped + in flight",
                a.flow,
                a.direction
            );
            if a.direction == "data" {
                assert!(a.sent > 0, "{name}: flow {} sent nothing", a.flow);
            }
        }
    }
}

/// Each example shows what it is named for: the drop causes and counters the feature exists
/// to produce are non-zero.
#[test]
fn examples_exercise_their_feature() {
    let run = |file: &str| {
        let s = Scenario::load(&examples_dir().join(file)).unwrap();
        let out = simulate(&s, &RunOptions::default()).unwrap();
        summarize(&s, &out)
    };
    let cause = |sum: &lab::summary::Summary, cause: &str| -> u64 {
        sum.links
            .iter()
            .map(|l| l.dropped_by_cause.get(cause).copied().unwrap_or(0))
            .sum()
    };
    assert!(cause(&run("red.toml"), "aqm") > 0, "RED makes early drops");
    let variants = run("red-variants.toml");
    for l in variants
        .links
        .iter()
        .filter(|l| l.direction == "forward" && l.from == "r")
    {
        assert!(
            l.dropped_by_cause["aqm"] > 0,
            "{}: early drops at every RED variant: {:?}",
            l.name,
            l.dropped_by_cause
        );
    }
    assert!(cause(&run("loss-models.toml"), "link") > 0);
    assert!(cause(&run("wireless.toml"), "link") > 0);
    let failure = run("link-failure.toml");
    assert!(cause(&failure, "down") > 0, "packets on the failed link");
    let untrusted = run("untrusted.toml");
    let exposed: BTreeMap<&str, u64> = untrusted
        .flows
        .iter()
        .map(|f| (f.name.as_str(), f.exposed_packets))
        .collect();
    assert!(
        exposed["exposed"] > 0 && exposed["safe"] == 0,
        "{exposed:?}"
    );
    let dumbbell = run("dumbbell.toml");
    assert!(dumbbell.fairness.friendliness[0].ratio.is_some());
}

/// Rerouted over a-c-b, both flows keep delivering while the direct link is down (8–14 s).
#[test]
fn link_failure_reroutes() {
    let s = Scenario::load(&examples_dir().join("link-failure.toml")).unwrap();
    let out = simulate(&s, &RunOptions::default()).unwrap();
    let rows = lab::summary::timeseries(&s, &out);
    for flow in ["tcp1", "udp1"] {
        for r in rows.iter().filter(|r| {
            r.metric == "throughput_bps" && r.subject == flow && (9.0..13.0).contains(&r.time_s)
        }) {
            assert!(
                r.value > 0.5e6,
                "{flow} at {} s while a-b is down: {}",
                r.time_s,
                r.value
            );
        }
    }
}

/// A minimal valid scenario whose sections the key probes below extend.
const PROBE: &str = r#"
name = "probe"
duration = "1s"

[[links]]
from = "a"
to = "b"
bandwidth = "1Mbps"
delay = "1ms"

[[nodes]]
name = "a"

[[flows]]
name = "t"
kind = "tcp"
from = "a"
to = "b"

[[flows]]
name = "u"
kind = "udp"
from = "a"
to = "b"

[[flows]]
name = "f"
kind = "tfrc"
from = "a"
to = "b"

[[events]]
at = "0.5s"
action = "down"
link = "a-b"
"#;

/// (section path as examples write it, family, --set path that reaches it in PROBE). The red,
/// droptail, loss and wireless tables mean the same under `[topology]` and `[[links]]`, so
/// their keys are one family.
const SECTIONS: &[(&str, &str, &str)] = &[
    ("", "", ""),
    ("topology", "topology", "topology."),
    ("topology.red", "red", "topology.red."),
    ("topology.droptail", "droptail", "topology.droptail."),
    ("topology.loss", "loss", "topology.loss."),
    ("topology.wireless", "wireless", "topology.wireless."),
    ("links", "links", "links.0."),
    ("links.red", "red", "links.0.red."),
    ("links.droptail", "droptail", "links.0.droptail."),
    ("links.loss", "loss", "links.0.loss."),
    ("links.wireless", "wireless", "links.0.wireless."),
    ("flows", "flows", "flows.t."),
    ("events", "events", "events.0."),
    ("nodes", "nodes", "nodes.0."),
    ("validate", "validate", "validate."),
    ("protection", "protection", "protection."),
];

fn family_of(section: &str) -> Option<&'static str> {
    SECTIONS
        .iter()
        .find(|(s, _, _)| *s == section)
        .map(|(_, f, _)| *f)
}

fn parse_with(sets: &[(&str, &str)]) -> Result<Scenario, scenario::ScenarioError> {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let text = overrides::apply("probe.toml", PROBE, &sets)?;
    Scenario::parse("probe.toml", &text)
}

/// The message of the problem that mentions `needle`, with its expected text.
fn problem_about(sets: &[(&str, &str)], needle: &str) -> (String, String) {
    let e = parse_with(sets).expect_err("the probe is rejected");
    let p = e
        .problems
        .iter()
        .find(|p| p.message.contains(needle))
        .unwrap_or_else(|| panic!("no problem mentions {needle}: {e}"));
    (p.message.clone(), p.expected.clone().unwrap_or_default())
}

/// The keys the parser accepts in each family.
fn accepted_keys() -> BTreeMap<&'static str, BTreeSet<String>> {
    assert!(parse_with(&[]).is_ok(), "the probe scenario is valid");
    let mut out: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (section, family, prefix) in SECTIONS {
        let key = format!("{prefix}zz_unknown_key");
        let (msg, _) = problem_about(&[(&key, "1")], "zz_unknown_key");
        let listed = msg
            .split_once("expected")
            .unwrap_or_else(|| panic!("[{section}]: no key list in {msg:?}"))
            .1;
        let keys: Vec<String> = listed
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        assert!(!keys.is_empty(), "[{section}]: {msg}");
        let set = out.entry(family).or_default();
        for k in keys {
            // Sub-tables are sections of their own.
            let sub = if section.is_empty() {
                k.clone()
            } else {
                format!("{section}.{k}")
            };
            if family_of(&sub).is_none() {
                set.insert(k);
            }
        }
    }
    out
}

/// Every (family, key) used by the examples, with the string values written for it.
fn used_keys() -> BTreeMap<(String, String), BTreeSet<String>> {
    fn walk(
        section: &str,
        t: &toml::Table,
        out: &mut BTreeMap<(String, String), BTreeSet<String>>,
    ) {
        for (k, v) in t {
            let path = if section.is_empty() {
                k.clone()
            } else {
                format!("{section}.{k}")
            };
            match v {
                toml::Value::Table(sub) if family_of(&path).is_some() => walk(&path, sub, out),
                toml::Value::Array(items)
                    if family_of(&path).is_some()
                        && items.iter().all(|i| matches!(i, toml::Value::Table(_))) =>
                {
                    for i in items {
                        if let toml::Value::Table(sub) = i {
                            walk(&path, sub, out);
                        }
                    }
                }
                _ => {
                    let family = family_of(section).unwrap_or("?").to_string();
                    let e = out.entry((family, k.clone())).or_default();
                    if let toml::Value::String(s) = v {
                        e.insert(s.clone());
                    }
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for path in examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let t: toml::Table = text.parse().unwrap();
        walk("", &t, &mut out);
    }
    out
}

#[test]
fn examples_use_every_key() {
    let accepted = accepted_keys();
    let used = used_keys();
    let mut missing = Vec::new();
    for (family, keys) in &accepted {
        for k in keys {
            if !used.contains_key(&(family.to_string(), k.clone())) {
                missing.push(if family.is_empty() {
                    k.clone()
                } else {
                    format!("{family}.{k}")
                });
            }
        }
    }
    assert!(
        missing.is_empty(),
        "keys the parser accepts that no file in scenarios/examples/ uses (add them to the \
         example for that feature, with a comment): {missing:?}"
    );
    // And the counter-check: the probes really read the parser (a handful of known keys).
    assert!(accepted["flows"].contains("variant"), "{accepted:?}");
    assert!(accepted["red"].contains("thresh"), "{accepted:?}");
    assert!(accepted[""].contains("duration"), "{accepted:?}");
}

/// (family, key, the probe's --set path, and settings that make the value the only problem).
type ValueCase = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

#[test]
fn examples_use_every_named_value() {
    let cases: &[ValueCase] = &[
        ("topology", "kind", "topology.kind", &[]),
        ("links", "queue", "links.0.queue", &[]),
        (
            "loss",
            "model",
            "links.0.loss.model",
            &[("links.0.loss.rate", "0.1")],
        ),
        (
            "loss",
            "direction",
            "links.0.loss.direction",
            &[
                ("links.0.loss.model", "bernoulli"),
                ("links.0.loss.rate", "0.1"),
            ],
        ),
        (
            "wireless",
            "direction",
            "links.0.wireless.direction",
            &[("links.0.wireless.frame_loss", "0.1")],
        ),
        (
            "red",
            "average",
            "links.0.red.average",
            &[("links.0.queue", "red")],
        ),
        (
            "red",
            "thresholds",
            "links.0.red.thresholds",
            &[("links.0.queue", "red")],
        ),
        (
            "red",
            "max_p",
            "links.0.red.max_p",
            &[("links.0.queue", "red")],
        ),
        ("flows", "kind", "flows.t.kind", &[]),
        ("flows", "variant", "flows.t.variant", &[]),
        ("flows", "profile", "flows.f.profile", &[]),
        (
            "flows",
            "controller",
            "flows.f.controller",
            &[("flows.f.kind", "media")],
        ),
        ("events", "action", "events.0.action", &[]),
    ];
    let used = used_keys();
    let mut missing = Vec::new();
    for (family, key, path, extra) in cases {
        let mut sets: Vec<(&str, &str)> = extra.to_vec();
        sets.push((path, "zz_bad_value"));
        let (msg, expected) = problem_about(&sets, "zz_bad_value");
        let values: Vec<&str> = expected.split('"').skip(1).step_by(2).collect();
        assert!(
            values.len() >= 2 || *key == "kind" && *family == "topology",
            "{family}.{key}: no value list in {msg:?} / {expected:?}"
        );
        let mut written = used
            .get(&(family.to_string(), key.to_string()))
            .cloned()
            .unwrap_or_default();
        // One function reads `queue` for [[links]] and for the dumbbell's bottleneck.
        if (*family, *key) == ("links", "queue") {
            written.extend(
                used.get(&("topology".to_string(), "queue".to_string()))
                    .cloned()
                    .unwrap_or_default(),
            );
        }
        for v in values {
            if !written.contains(v) {
                missing.push(format!("{family}.{key} = \"{v}\""));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "values the parser accepts that no example writes: {missing:?}"
    );
}
