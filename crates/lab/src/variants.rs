//! The catalogue `tfrclab variants` prints: every seed-paper variant the lab implements, with
//! its scenario key, paper, equations and parameters with defaults, and the TCP models.
//!
//! The TFRC variants come from the core's catalogue (`tfrc::variants`), the queue variants'
//! defaults from the simulator's RED configuration (`netsim::queue`), so the listing cannot
//! disagree with what a run does.

use netsim::queue::{AdaptiveQ3, AdaptiveRed, RedThresholds};
use netsim::RedConfig;
use serde::Serialize;
use tfrc::variants::{ParamRange, Variant};

/// Seed 001's citation (the queue variants).
pub const SEED_001: &str = "seed 001: Nalavala, Pakanati & Mokkalala, \"An Enhanced Queue \
Management Scheme for TFRC Over Wired Networks\"";
/// Adaptive RED's citation.
pub const ADAPTIVE_RED: &str = "Floyd, Gummadi & Shenker, \"Adaptive RED: An Algorithm for \
Increasing the Robustness of RED's Active Queue Management\", 2001 (as NS-2.35's adaptive_ 1)";

/// A parameter's admissible values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RangeOut {
    /// Lower bound.
    pub min: f64,
    /// Upper bound (`null`: unbounded).
    pub max: Option<f64>,
    /// The lower bound is excluded.
    pub min_exclusive: bool,
    /// The upper bound is excluded.
    pub max_exclusive: bool,
    /// Whole numbers only.
    pub integer: bool,
    /// As text, e.g. `[0, 1)`.
    pub text: String,
}

/// One parameter.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParamOut {
    /// The name as scenario files write it.
    pub name: String,
    /// The default (`null`: derived from other parameters, or only in effect when given).
    pub default: Option<f64>,
    /// Admissible values (`null` where the scenario parser states them in `meaning`).
    pub range: Option<RangeOut>,
    /// What it means.
    pub meaning: String,
}

/// One variant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VariantOut {
    /// The name (TFRC: the `variants` entry; queue: the key's value).
    pub name: String,
    /// The seed papers' label (E1…E6, seed 002, V0…V3, Q1…Q3, ARED).
    pub label: String,
    /// How a scenario selects it.
    pub scenario_key: String,
    /// The paper.
    pub paper: String,
    /// Section and equation numbers.
    pub equations: String,
    /// One line.
    pub summary: String,
    /// The paper's text could not be obtained; the lab follows `docs/variants.md`'s
    /// reconstruction.
    pub reconstruction: bool,
    /// Parameters with defaults.
    pub params: Vec<ParamOut>,
}

/// Everything `tfrclab variants --json` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Listing {
    /// TFRC variants (`[[flows]] variants = [...]`).
    pub tfrc: Vec<VariantOut>,
    /// Queue variants (`[links.red]` / `[topology.red]` keys and `queue` presets).
    pub queue: Vec<VariantOut>,
    /// TCP models (`[[flows]] kind = "tcp"`, `variant` and `profile`).
    pub tcp: Vec<VariantOut>,
}

/// The TCP models a flow can run: NS-2.35's (packet-exact), RFC 9438 CUBIC and Linux's.
pub fn tcp_models() -> Vec<VariantOut> {
    let m = |name: &str, key: &str, source: &str, summary: &str| VariantOut {
        name: name.to_string(),
        label: "TCP".to_string(),
        scenario_key: format!("[[flows]] kind = \"tcp\", {key}"),
        paper: source.to_string(),
        equations: "docs/simulator.md".to_string(),
        summary: summary.to_string(),
        reconstruction: false,
        params: Vec::new(),
    };
    let ns2 = "NS-2.35 (packet-exact: docs/validation.md)";
    vec![
        m(
            "tahoe",
            "variant = \"tahoe\"",
            ns2,
            "Agent/TCP with TCPSink",
        ),
        m("reno", "variant = \"reno\"", ns2, "Agent/TCP/Reno"),
        m(
            "newreno",
            "variant = \"newreno\" (default)",
            ns2,
            "Agent/TCP/Newreno",
        ),
        m(
            "sack",
            "variant = \"sack\"",
            ns2,
            "Agent/TCP/Sack1 with TCPSink/Sack1",
        ),
        m(
            "cubic (ns2)",
            "variant = \"cubic\", profile = \"ns2\"",
            ns2,
            "Agent/TCP/Linux with select_ca cubic (Linux 2.6.22's module)",
        ),
        m(
            "cubic (rfc9438)",
            "variant = \"cubic\" (profile = \"rfc9438\", default)",
            "RFC 9438 on NS-2's Agent/TCP/Linux sender",
            "CUBIC as RFC 9438 specifies it; no NS-2 counterpart",
        ),
        m(
            "reno (linux)",
            "variant = \"reno\", profile = \"linux\"",
            "Linux 6.18 (net/ipv4; checked against the kernel: validation/linux/)",
            "Reno over SACK with RACK-TLP, PRR, F-RTO, IW 10, against the Linux receiver \
             (delayed, quick and compressed ACKs); no NS-2 counterpart",
        ),
        m(
            "cubic (linux)",
            "variant = \"cubic\", profile = \"linux\"",
            "Linux 6.18 (net/ipv4; checked against the kernel: validation/linux/)",
            "tcp_cubic.c (beta 717/1024, HyStart) on the same sender and receiver",
        ),
    ]
}

fn range(r: &ParamRange) -> RangeOut {
    RangeOut {
        min: r.min,
        max: r.max.is_finite().then_some(r.max),
        min_exclusive: r.min_exclusive,
        max_exclusive: r.max_exclusive,
        integer: r.integer,
        text: r.to_string(),
    }
}

/// The TFRC variants, in catalogue order.
pub fn tfrc_variants() -> Vec<VariantOut> {
    Variant::ALL
        .iter()
        .map(|v| {
            let i = v.info();
            VariantOut {
                name: i.name.to_string(),
                label: i.label.to_string(),
                scenario_key: format!("[[flows]] kind = \"tfrc\", variants = [\"{}\"]", i.name),
                paper: i.paper.to_string(),
                equations: i.equations.to_string(),
                summary: i.summary.to_string(),
                reconstruction: i.reconstruction,
                params: i
                    .params
                    .iter()
                    .map(|p| ParamOut {
                        name: p.name.to_string(),
                        default: p.default,
                        range: Some(range(&p.range)),
                        meaning: p.meaning.to_string(),
                    })
                    .collect(),
            }
        })
        .collect()
}

fn param(name: &str, default: f64, meaning: &str) -> ParamOut {
    ParamOut {
        name: name.to_string(),
        default: Some(default),
        range: None,
        meaning: meaning.to_string(),
    }
}

/// The AIMD parameters of an adaptive max_p (the same keys for Q3 and Adaptive RED).
fn aimd(alpha: f64, beta: f64, interval: f64, top: f64, bottom: f64, auto: bool) -> Vec<ParamOut> {
    vec![
        param(
            "alpha",
            alpha,
            "cap of the additive step min(alpha, max_p/4), in (0, 1]",
        ),
        param("beta", beta, "multiplicative decrease of max_p, in (0, 1)"),
        param("interval", interval, "seconds between adaptations, > 0"),
        param("top", top, "max_p's upper bound, in (0, 1]"),
        param(
            "bottom",
            bottom,
            if auto {
                "max_p's lower bound in [0, top]; 0 = NS-2's min(0.01, 80000/bandwidth)"
            } else {
                "max_p's lower bound, in [0, top]"
            },
        ),
    ]
}

/// The queue variants: seed 001's Q1–Q3, Adaptive RED, and the `ared` / `ered` presets, with
/// defaults from the simulator's configuration.
pub fn queue_variants() -> Vec<VariantOut> {
    let q3 = AdaptiveQ3::default();
    let ared = AdaptiveRed::default();
    let alpha_th = match RedConfig::ered().thresholds {
        RedThresholds::AutoTuned { alpha_th } => alpha_th,
        RedThresholds::Fixed => 0.0,
    };
    let v = |name: &str,
             label: &str,
             key: &str,
             paper: &str,
             equations: &str,
             summary: &str,
             params: Vec<ParamOut>| VariantOut {
        name: name.to_string(),
        label: label.to_string(),
        scenario_key: key.to_string(),
        paper: paper.to_string(),
        equations: equations.to_string(),
        summary: summary.to_string(),
        reconstruction: false,
        params,
    };
    vec![
        v(
            "shewhart-ewma",
            "Q1",
            "[links.red] average = \"shewhart-ewma\"",
            SEED_001,
            "eq. (4), Fig. 1",
            "RED's average plus the trend q_i - q_(i-1): RED acts on the instantaneous queue",
            Vec::new(),
        ),
        v(
            "auto-tuned",
            "Q2",
            "[links.red] thresholds = \"auto-tuned\"",
            SEED_001,
            "eq. (5)",
            "when the average rises by more than max_th - min_th, min_th += (q_i - q_(i-1)) + \
             alpha_th and max_th = 3 min_th; fires only while max_th - min_th is under about \
             one packet (never with NS-2's automatic thresholds)",
            vec![param(
                "alpha_th",
                alpha_th,
                "packets added to min_th per move, >= 0",
            )],
        ),
        v(
            "adaptive-q3",
            "Q3",
            "[links.red] max_p = \"adaptive-q3\"",
            SEED_001,
            "Fig. 1 (after Floyd et al. 2001)",
            "every interval, AIMD on max_p towards the 40-60% band of the thresholds, bounds as \
             printed (non-strict), the gentle segment following max_p",
            aimd(q3.alpha, q3.beta, q3.interval, q3.top, q3.bottom, false),
        ),
        v(
            "adaptive-red",
            "ARED",
            "[links.red] max_p = \"adaptive-red\"",
            ADAPTIVE_RED,
            "§4 (REDQueue::updateMaxP)",
            "NS-2.35's Adaptive RED: AIMD on max_p more than interval after its last change, \
             strict bounds, automatic bottom",
            aimd(
                ared.alpha,
                ared.beta,
                ared.interval,
                ared.top,
                ared.bottom,
                true,
            ),
        ),
        v(
            "ared",
            "ARED preset",
            "queue = \"ared\"",
            ADAPTIVE_RED,
            "§5 (automatic parameters)",
            "queue = \"red\" with max_p = \"adaptive-red\" and the paper's automatic parameters",
            vec![param(
                "q_weight",
                RedConfig::ared().q_weight,
                "NS-2's code 0: w_q = 1 - exp(-1/C)",
            )],
        ),
        v(
            "ered",
            "Q1 + Q2 + Q3",
            "queue = \"ered\"",
            SEED_001,
            "eq. (4), (5), Fig. 1",
            "seed 001's enhanced RED: queue = \"red\" with average = \"shewhart-ewma\", \
             thresholds = \"auto-tuned\", max_p = \"adaptive-q3\"",
            Vec::new(),
        ),
    ]
}

/// Every variant.
pub fn listing() -> Listing {
    Listing {
        tfrc: tfrc_variants(),
        queue: queue_variants(),
        tcp: tcp_models(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every catalogue entry is listed with its parameters and defaults, the queue defaults
    /// are the simulator's, and the Linux TCP models are listed with their profile key.
    #[test]
    fn listing_has_every_variant() {
        let l = listing();
        assert_eq!(l.tfrc.len(), Variant::ALL.len());
        for v in Variant::ALL {
            let i = v.info();
            let out = l.tfrc.iter().find(|o| o.name == i.name).expect(i.name);
            assert_eq!(out.params.len(), i.params.len(), "{}", i.name);
            for (p, q) in out.params.iter().zip(i.params) {
                assert_eq!((p.name.as_str(), p.default), (q.name, q.default));
            }
            assert_eq!(out.reconstruction, i.reconstruction);
        }
        let labels: Vec<&str> = l.queue.iter().map(|q| q.label.as_str()).collect();
        for want in ["Q1", "Q2", "Q3", "ARED"] {
            assert!(labels.contains(&want), "{labels:?}");
        }
        let q3 = l.queue.iter().find(|q| q.label == "Q3").unwrap();
        assert_eq!(q3.params[4].default, Some(AdaptiveQ3::default().bottom));
        let linux = l.tcp.iter().find(|t| t.name == "cubic (linux)").unwrap();
        assert!(
            linux.scenario_key.contains("profile = \"linux\""),
            "{linux:?}"
        );
    }
}
