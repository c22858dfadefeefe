//! `scenarios/variants/`: every file runs, and its variant's mechanism acted — per file, the
//! counter that shows it, compared with the baseline flow or queue of the same run (not only
//! that the run finished). A file without an entry in [`CHECKS`] fails the test, and so does an
//! entry without a file. Where a variant does not help, or hurts, the check asserts that too
//! (the scenario's comment says so): the checks describe what the mechanism does, not what
//! the papers claim.
//!
//! `cargo test -p tfrclab --test variant_scenarios -- --nocapture` prints the numbers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use lab::metrics::FlowMetrics;
use lab::runner::{simulate, RunOptions};
use lab::summary::{summarize, timeseries, LinkSummary, SeriesRow, Summary};
use lab::summary::{RedSummary, TfrcSummary};
use scenario::Scenario;

fn variants_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/variants")
}

/// One run of a scenario, with lookups that fail loudly.
struct Run {
    file: String,
    sum: Summary,
    rows: Vec<SeriesRow>,
}

impl Run {
    fn flow(&self, name: &str) -> &FlowMetrics {
        self.sum
            .flows
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("{}: no flow {name}", self.file))
    }

    fn tfrc(&self, name: &str) -> &TfrcSummary {
        self.sum
            .tfrc
            .iter()
            .find(|f| f.flow == name)
            .unwrap_or_else(|| panic!("{}: no TFRC flow {name}", self.file))
    }

    fn link(&self, name: &str) -> &LinkSummary {
        self.sum
            .links
            .iter()
            .find(|l| l.name == name && l.direction == "forward")
            .unwrap_or_else(|| panic!("{}: no link {name}", self.file))
    }

    fn red(&self, name: &str) -> RedSummary {
        self.link(name)
            .red
            .unwrap_or_else(|| panic!("{}: link {name} has no RED counters", self.file))
    }

    fn drops(&self, flow: &str, cause: &str) -> u64 {
        self.flow(flow).dropped_by_cause[cause]
    }

    /// (time, value) of one time series.
    fn series(&self, metric: &str, subject: &str) -> Vec<(f64, f64)> {
        self.rows
            .iter()
            .filter(|r| r.metric == metric && r.subject == subject)
            .map(|r| (r.time_s, r.value))
            .collect()
    }

    /// The largest sampled value of a TFRC internal (NaN samples skipped).
    fn max_sample(&self, metric: &str, flow: &str) -> f64 {
        self.series(metric, flow)
            .into_iter()
            .map(|(_, v)| v)
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
    }

    /// Throughput of `variant` over that of `plain`.
    fn gain(&self, variant: &str, plain: &str) -> f64 {
        self.flow(variant).throughput_bps / self.flow(plain).throughput_bps
    }
}

type Check = fn(&Run) -> String;

/// What each scenario must show. Keyed by file name.
const CHECKS: &[(&str, Check)] = &[
    ("adaptive-rtt.toml", adaptive_rtt),
    ("rto-link-error.toml", rto_link_error),
    ("ali-ci-replace.toml", |r| transform(r, true)),
    ("ali-ci-include.toml", |r| transform(r, false)),
    ("ali-mean-replace.toml", |r| transform(r, true)),
    ("ali-mean-include.toml", |r| transform(r, false)),
    ("adaptive-ttl.toml", adaptive_ttl),
    ("protect-raised-ttl.toml", protect_raised_ttl),
    ("protect-all.toml", protect_all),
    ("owd-classifier.toml", owd_classifier),
    ("general-equation.toml", |r| faster(r, 1.4, false)),
    ("veno.toml", |r| faster(r, 1.4, true)),
    ("simd.toml", |r| faster(r, 1.2, false)),
    ("veno-simd-055.toml", |r| faster(r, 1.4, true)),
    ("veno-simd-090.toml", |r| faster(r, 2.0, true)),
    ("q1-shewhart-ewma.toml", q1),
    ("q2-auto-tuned.toml", q2),
    ("q3-adaptive-max-p.toml", |r| adaptive_max_p(r, "Q3")),
    ("adaptive-red.toml", |r| adaptive_max_p(r, "Adaptive RED")),
    ("ered.toml", ered),
    ("tfrc-sp.toml", tfrc_sp),
    ("faster-restart.toml", faster_restart),
    ("multfrc.toml", multfrc),
];

/// E1: R jumps with the delay spike (the spread term), and — the failure mode — stays
/// inflated beyond the path's RTT after the path recovers.
fn adaptive_rtt(r: &Run) -> String {
    let (plain, adaptive) = (
        r.max_sample("rtt_s", "plain"),
        r.max_sample("rtt_s", "adaptive"),
    );
    let at = |flow: &str, t: f64| {
        r.series("rtt_s", flow)
            .into_iter()
            .find(|(s, _)| (*s - t).abs() < 1e-9)
            .map_or(f64::NAN, |(_, v)| v)
    };
    let (p4, a4) = (at("plain", 4.0), at("adaptive", 4.0));
    assert!(
        a4 > 1.2 * p4,
        "R one second into the spike: adaptive {a4} vs plain {p4}"
    );
    // The detour's RTT is about 0.625 s; the plain EWMA never overshoots it, the spread term
    // does.
    assert!(plain < 0.7, "plain R peaked at {plain}");
    assert!(adaptive > 1.5 * plain, "peak R {adaptive} vs plain {plain}");
    format!(
        "R at 4 s: plain {p4:.3} s, adaptive {a4:.3} s; peak R plain {plain:.3}, adaptive \
         {adaptive:.3}; nofeedback expiries plain {}, adaptive {}; throughput plain {:.3}, \
         adaptive {:.3} Mb/s",
        r.tfrc("plain").nofeedback_expiries,
        r.tfrc("adaptive").nofeedback_expiries,
        r.flow("plain").throughput_bps / 1e6,
        r.flow("adaptive").throughput_bps / 1e6,
    )
}

/// E2: the link-error rescale fires only with the variant.
fn rto_link_error(r: &Run) -> String {
    let (base, var) = (r.tfrc("veno"), r.tfrc("veno-rto"));
    assert_eq!(base.link_error_rescales, 0);
    assert!(var.link_error_rescales > 10, "{var:?}");
    format!(
        "RTO rescales veno {}, veno-rto {}; t_RTO {:.3} vs {:.3} s",
        base.link_error_rescales, var.link_error_rescales, base.t_rto_s, var.t_rto_s
    )
}

/// E3/E4: the same lost sequence numbers, a different p. The replace forms raise p.
fn transform(r: &Run, replace: bool) -> String {
    let (plain, var) = (r.tfrc("plain"), r.tfrc("variant"));
    // The same loss list on both paths: the variant sends fewer packets, so it may not reach
    // the last few entries.
    assert!(
        plain.lost_packets.abs_diff(var.lost_packets) <= 5,
        "{} vs {} lost",
        plain.lost_packets,
        var.lost_packets
    );
    let (ps, vs) = (r.series("p", "plain"), r.series("p", "variant"));
    let pairs: Vec<(f64, f64)> = ps
        .iter()
        .zip(&vs)
        .filter(|((_, a), (_, b))| *a > 0.0 && *b > 0.0)
        .map(|((_, a), (_, b))| (*a, *b))
        .collect();
    assert!(pairs.len() >= 10, "{} p samples", pairs.len());
    let n = pairs.len() as f64;
    let diff = pairs.iter().map(|(a, b)| (b / a - 1.0).abs()).sum::<f64>() / n;
    let ratio = pairs.iter().map(|(a, b)| b / a).sum::<f64>() / n;
    assert!(diff > 0.01, "mean |p change| {diff}");
    if replace {
        assert!(ratio > 1.05, "mean p ratio {ratio}");
    }
    format!(
        "lost {} vs {}; mean p ratio variant/plain {ratio:.4}, mean |change| {diff:.4}; \
         throughput {:.3} vs {:.3} Mb/s",
        plain.lost_packets,
        var.lost_packets,
        r.flow("plain").throughput_bps / 1e6,
        r.flow("variant").throughput_bps / 1e6
    )
}

/// E5: after the route change the fixed-TTL flow loses everything to TTL expiry; the adaptive
/// one raises its TTL and keeps going.
fn adaptive_ttl(r: &Run) -> String {
    let (fixed, adaptive) = (r.drops("fixed", "ttl"), r.drops("adaptive", "ttl"));
    assert!(fixed >= 100, "fixed lost {fixed} to TTL");
    assert!(adaptive * 2 < fixed, "adaptive {adaptive} vs fixed {fixed}");
    assert_eq!(r.tfrc("fixed").ttl, 32);
    assert!(r.tfrc("adaptive").ttl >= 41, "{:?}", r.tfrc("adaptive"));
    assert!(r.tfrc("adaptive").ttl_notices > 0);
    for (t, v) in r.series("throughput_bps", "fixed") {
        if t >= 4.0 {
            assert_eq!(v, 0.0, "fixed delivers at {t} s");
        }
    }
    for (t, v) in r.series("throughput_bps", "adaptive") {
        if t >= 4.0 {
            assert!(v > 1e6, "adaptive at {t} s: {v} bit/s");
        }
    }
    format!(
        "ttl drops fixed {fixed}, adaptive {adaptive}; final TTL {} vs {}; notices {} vs {}",
        r.tfrc("fixed").ttl,
        r.tfrc("adaptive").ttl,
        r.tfrc("fixed").ttl_notices,
        r.tfrc("adaptive").ttl_notices
    )
}

/// E6 with E5: the raised-TTL packets are protected, so nothing is exposed at the untrusted
/// detour node.
fn protect_raised_ttl(r: &Run) -> String {
    let (a, p) = (r.flow("adaptive"), r.flow("protected"));
    assert!(a.exposed_packets > 100, "{}", a.exposed_packets);
    assert_eq!(p.exposed_packets, 0);
    let t = r.tfrc("protected");
    assert!(
        t.protected_sent > 0 && t.protected_sent < t.packets_sent,
        "{t:?}"
    );
    assert_eq!(r.tfrc("adaptive").protected_sent, 0);
    format!(
        "exposed adaptive {}, protected {}; protected packets {} of {}",
        a.exposed_packets, p.exposed_packets, t.protected_sent, t.packets_sent
    )
}

/// E6: every data packet protected, none exposed.
fn protect_all(r: &Run) -> String {
    let (a, p) = (r.flow("plain"), r.flow("protected"));
    assert!(a.exposed_packets > 100, "{}", a.exposed_packets);
    assert_eq!(p.exposed_packets, 0);
    let t = r.tfrc("protected");
    assert_eq!(t.protected_sent, t.packets_sent);
    assert_eq!(r.tfrc("plain").protected_sent, 0);
    format!(
        "exposed plain {}, protected {}; protected packets {} of {}",
        a.exposed_packets, p.exposed_packets, t.protected_sent, t.packets_sent
    )
}

/// Seed 002: link losses classified wireless, but — the failure mode — queue drops too; the
/// plain flow counts everything as congestion.
fn owd_classifier(r: &Run) -> String {
    let c = r.tfrc("classifier").confusion.expect("classifier matrix");
    let p = r.tfrc("plain").confusion.expect("baseline matrix");
    assert!(c.wireless.wireless > 20, "{c:?}");
    assert_eq!(c.wireless.congestion, 0, "{c:?}");
    assert!(
        c.congestion.wireless > 20,
        "queue drops called wireless: {c:?}"
    );
    assert_eq!(c.congestion.congestion, 0, "{c:?}");
    for (_, row) in p.rows() {
        assert_eq!(
            row.wireless, 0,
            "without a classifier every loss is congestion: {p:?}"
        );
    }
    assert!(
        p.wireless.congestion > 10 && p.congestion.congestion > 10,
        "{p:?}"
    );
    assert_eq!(r.tfrc("plain").wireless_losses, 0);
    assert_eq!(r.tfrc("classifier").congestion_losses, 0);
    assert!(r.gain("classifier", "plain") > 1.5);
    format!(
        "classifier: link->W {}, link->C {}, queue->W {}, queue->C {}; plain: link->C {}, \
         queue->C {}; throughput classifier/plain {:.2}",
        c.wireless.wireless,
        c.wireless.congestion,
        c.congestion.wireless,
        c.congestion.congestion,
        p.wireless.congestion,
        p.congestion.congestion,
        r.gain("classifier", "plain")
    )
}

/// Seed 003 equations on a random-loss path: the variant sends faster than RFC 5348; the Veno
/// ones because their backlog rule judged the losses random.
fn faster(r: &Run, min_gain: f64, veno: bool) -> String {
    let g = r.gain("variant", "plain");
    assert!(g > min_gain, "gain {g}");
    let t = r.tfrc("variant");
    if veno {
        assert!(t.random_losses, "{t:?}");
        assert!(t.backlog.is_some_and(|n| n < 3.0), "{t:?}");
    }
    assert!(!r.tfrc("plain").random_losses);
    format!(
        "throughput plain {:.3}, variant {:.3} Mb/s ({g:.2}x); p {:.4} vs {:.4}",
        r.flow("plain").throughput_bps / 1e6,
        r.flow("variant").throughput_bps / 1e6,
        r.tfrc("plain").p,
        t.p
    )
}

/// Q1: RED on the instantaneous queue: a much shorter queue, and TCP's bursts dropped.
fn q1(r: &Run) -> String {
    let (b, v) = (r.link("baseline"), r.link("variant"));
    assert!(
        v.queue_mean_packets < 0.5 * b.queue_mean_packets,
        "{} vs {}",
        v.queue_mean_packets,
        b.queue_mean_packets
    );
    assert!(r.red("variant").early_drops > r.red("baseline").early_drops);
    let (tb, tv) = (r.flow("tcp-baseline"), r.flow("tcp-variant"));
    assert!(
        tv.loss_rate > 1.3 * tb.loss_rate,
        "TCP loss {} vs {}",
        tv.loss_rate,
        tb.loss_rate
    );
    format!(
        "mean queue {:.2} vs {:.2} packets; early drops {} vs {}; TCP loss {:.4} vs {:.4}; \
         TFRC throughput {:.3} vs {:.3} Mb/s",
        b.queue_mean_packets,
        v.queue_mean_packets,
        r.red("baseline").early_drops,
        r.red("variant").early_drops,
        tb.loss_rate,
        tv.loss_rate,
        r.flow("tfrc-baseline").throughput_bps / 1e6,
        r.flow("tfrc-variant").throughput_bps / 1e6
    )
}

/// Q2: fires with a half-packet gap, never with NS-2's automatic thresholds.
fn q2(r: &Run) -> String {
    let (b, v, a) = (r.red("baseline"), r.red("variant"), r.red("auto"));
    assert_eq!(b.threshold_moves, 0);
    assert!(v.threshold_moves >= 1, "{v:?}");
    assert!(v.min_th_final_packets > 5.0, "{v:?}");
    assert_eq!(a.threshold_moves, 0, "{a:?}");
    assert_eq!(
        (a.min_th_final_packets, a.max_th_final_packets),
        (5.0, 15.0)
    );
    format!(
        "threshold moves baseline {}, variant {} (final {:.2}/{:.2} packets), auto {}",
        b.threshold_moves,
        v.threshold_moves,
        v.min_th_final_packets,
        v.max_th_final_packets,
        a.threshold_moves
    )
}

/// Q3 and Adaptive RED: max_p moves at the variant queue only.
fn adaptive_max_p(r: &Run, what: &str) -> String {
    let (b, v) = (r.red("baseline"), r.red("variant"));
    assert_eq!(b.max_p_increases + b.max_p_decreases, 0);
    assert_eq!(b.max_p_final, 0.1);
    assert!(v.max_p_increases + v.max_p_decreases > 5, "{what}: {v:?}");
    assert!((v.max_p_final - 0.1).abs() > 0.01, "{what}: {v:?}");
    format!(
        "{what}: max_p +{} -{}, final {:.4} (baseline fixed 0.1); mean queue {:.2} vs {:.2}",
        v.max_p_increases,
        v.max_p_decreases,
        v.max_p_final,
        r.link("baseline").queue_mean_packets,
        r.link("variant").queue_mean_packets
    )
}

/// Seed 001's combination: Q3 moves max_p, Q1 shortens the queue, Q2 never fires.
fn ered(r: &Run) -> String {
    let (b, v) = (r.red("baseline"), r.red("variant"));
    assert!(v.max_p_increases + v.max_p_decreases > 5, "{v:?}");
    assert_eq!(v.threshold_moves, 0, "{v:?}");
    assert_eq!(b.max_p_increases + b.max_p_decreases, 0);
    let (qb, qv) = (
        r.link("baseline").queue_mean_packets,
        r.link("variant").queue_mean_packets,
    );
    assert!(qv < 0.5 * qb, "{qv} vs {qb}");
    format!(
        "max_p +{} -{} (final {:.4}); threshold moves {}; mean queue {qb:.2} vs {qv:.2}; TFRC \
         {:.3} vs {:.3} Mb/s, TCP loss {:.4} vs {:.4}",
        v.max_p_increases,
        v.max_p_decreases,
        v.max_p_final,
        v.threshold_moves,
        r.flow("tfrc-baseline").throughput_bps / 1e6,
        r.flow("tfrc-variant").throughput_bps / 1e6,
        r.flow("tcp-baseline").loss_rate,
        r.flow("tcp-variant").loss_rate
    )
}

/// RFC 4828: the same 200-byte packets, several times plain TFRC's bytes, and never two
/// packets closer than the 10 ms Min Interval (at most 100 packets/s over the run).
fn tfrc_sp(r: &Run) -> String {
    let (plain, sp) = (r.tfrc("plain"), r.tfrc("variant"));
    let g = r.gain("variant", "plain");
    assert!(g > 3.0, "TFRC-SP sends {g:.2}x plain TFRC's bytes");
    // 30 s at one packet per 10 ms at most, plus the first at 0.
    assert!(
        sp.packets_sent <= 3001,
        "{} packets in 30 s",
        sp.packets_sent
    );
    // The equation allows more than the Min Interval here, so the cap is what limits it.
    assert!(
        sp.packets_sent > 2700,
        "{} packets in 30 s",
        sp.packets_sent
    );
    format!(
        "throughput plain {:.3}, TFRC-SP {:.3} Mb/s ({g:.2}x); packets sent {} vs {} (cap \
         3001); p {:.4} vs {:.4}",
        r.flow("plain").throughput_bps / 1e6,
        r.flow("variant").throughput_bps / 1e6,
        plain.packets_sent,
        sp.packets_sent,
        plain.p,
        sp.p
    )
}

/// Faster Restart: bytes sent in the first 500 ms of each talk spurt after the first (the
/// source talks 2 s of every 5 s from 0), against plain TFRC's.
fn faster_restart(r: &Run) -> String {
    let early = |flow: &str| -> f64 {
        r.series("sending_bps", flow)
            .into_iter()
            .filter(|(t, _)| {
                let into = t.rem_euclid(5.0);
                *t >= 5.0 - 1e-9 && into < 0.5 - 1e-9
            })
            .map(|(_, v)| v * 0.1 / 8.0)
            .sum()
    };
    let (plain, fast) = (early("plain"), early("variant"));
    assert!(
        fast > 1.2 * plain,
        "first 500 ms of the spurts: {fast} vs {plain} bytes"
    );
    format!(
        "bytes in the first 500 ms of the 5 later talk spurts: plain {plain:.0}, faster \
         restart {fast:.0} ({:.2}x); throughput {:.3} vs {:.3} Mb/s; p {:.4} vs {:.4}",
        fast / plain,
        r.flow("plain").throughput_bps / 1e6,
        r.flow("variant").throughput_bps / 1e6,
        r.tfrc("plain").p,
        r.tfrc("variant").p
    )
}

/// MulTFRC with N = 2: about twice a TFRC flow's rate at the same loss process.
fn multfrc(r: &Run) -> String {
    let g = r.gain("variant", "plain");
    assert!((1.5..2.6).contains(&g), "MulTFRC N = 2 sends {g:.2}x TFRC");
    format!(
        "throughput TFRC {:.3}, MulTFRC N = 2 {:.3} Mb/s ({g:.2}x); p {:.4} vs {:.4}",
        r.flow("plain").throughput_bps / 1e6,
        r.flow("variant").throughput_bps / 1e6,
        r.tfrc("plain").p,
        r.tfrc("variant").p
    )
}

#[test]
fn every_variant_scenario_shows_its_mechanism() {
    let mut files: Vec<String> = std::fs::read_dir(variants_dir())
        .expect("scenarios/variants/ exists")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    files.sort();
    let checked: BTreeSet<&str> = CHECKS.iter().map(|(f, _)| *f).collect();
    let unchecked: Vec<&String> = files
        .iter()
        .filter(|f| !checked.contains(f.as_str()))
        .collect();
    assert!(
        unchecked.is_empty(),
        "scenarios without an expectation in CHECKS: {unchecked:?}"
    );
    let missing: Vec<&&str> = checked
        .iter()
        .filter(|f| !files.iter().any(|g| g == *f))
        .collect();
    assert!(
        missing.is_empty(),
        "CHECKS entries without a file: {missing:?}"
    );
    // One scenario per TFRC variant and per queue variant (Q1, Q2, Q3, Adaptive RED, ered).
    assert_eq!(files.len(), tfrc::variants::Variant::ALL.len() + 5);
    for v in tfrc::variants::Variant::ALL {
        assert!(
            files.contains(&format!("{}.toml", v.name())),
            "no scenario for {v}"
        );
    }

    for (file, check) in CHECKS {
        let path = variants_dir().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with('#'),
            "{file}: a variant scenario starts with a comment saying what it shows"
        );
        let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            s.duration.as_secs_f64() <= 30.0,
            "{file}: keep variant scenarios short"
        );
        let out = simulate(&s, &RunOptions::default()).unwrap_or_else(|e| panic!("{file}: {e}"));
        let run = Run {
            file: file.to_string(),
            sum: summarize(&s, &out),
            rows: timeseries(&s, &out),
        };
        let report = check(&run);
        eprintln!("{file}: {report}");
    }
}

/// The variant scenarios are valid input for `tfrclab variants`' names: every TFRC variant a
/// file uses is in the catalogue (the parser checks it; this keeps the listing honest too).
#[test]
fn variant_scenarios_name_catalogue_variants() {
    let listing = tfrclab::commands::variants::listing();
    for (file, _) in CHECKS {
        let s = Scenario::load(&variants_dir().join(file)).unwrap();
        for f in &s.flows {
            for c in f.variants() {
                assert!(
                    listing.tfrc.iter().any(|v| v.name == c.name),
                    "{file}: {}",
                    c.name
                );
            }
        }
    }
}

/// `tfrclab variants --json` parses and lists every catalogue entry with its parameters and
/// defaults, and the queue variants; the text form names each with its label.
#[test]
fn variants_command_lists_the_catalogue() {
    let bin = env!("CARGO_BIN_EXE_tfrclab");
    let out = std::process::Command::new(bin)
        .args(["variants", "--json"])
        .output()
        .expect("tfrclab runs");
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json is JSON");
    let tfrc = v["tfrc"].as_array().expect("a tfrc array");
    assert_eq!(tfrc.len(), tfrc::variants::Variant::ALL.len());
    for var in tfrc::variants::Variant::ALL {
        let info = var.info();
        let entry = tfrc
            .iter()
            .find(|e| e["name"] == info.name)
            .unwrap_or_else(|| panic!("{} missing", info.name));
        assert_eq!(entry["label"], info.label);
        assert_eq!(entry["paper"], info.paper);
        assert_eq!(entry["equations"], info.equations);
        assert_eq!(entry["reconstruction"], info.reconstruction);
        let params = entry["params"].as_array().unwrap();
        assert_eq!(params.len(), info.params.len(), "{}", info.name);
        for (p, q) in params.iter().zip(info.params) {
            assert_eq!(p["name"], q.name);
            assert_eq!(p["default"].as_f64(), q.default, "{}.{}", info.name, q.name);
            assert!(p["range"]["text"].is_string());
        }
    }
    let queue = v["queue"].as_array().expect("a queue array");
    for key in [
        "average = \"shewhart-ewma\"",
        "thresholds = \"auto-tuned\"",
        "max_p = \"adaptive-q3\"",
        "max_p = \"adaptive-red\"",
        "queue = \"ared\"",
        "queue = \"ered\"",
    ] {
        assert!(
            queue
                .iter()
                .any(|q| q["scenario_key"].as_str().unwrap().ends_with(key)),
            "{key}"
        );
    }
    let text = std::process::Command::new(bin)
        .arg("variants")
        .output()
        .expect("tfrclab runs");
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    for var in tfrc::variants::Variant::ALL {
        let info = var.info();
        let line = format!(
            "{}  [{}]{}",
            info.name,
            info.label,
            if info.reconstruction {
                "  (reconstruction)"
            } else {
                ""
            }
        );
        assert!(text.lines().any(|l| l == line), "{line}");
    }
}
