//! Scenario keys reach the simulator: what `scenario` parses is what `lab` builds (RED variant
//! policies, protection cost, TFRC variants in the profile) and what NS-2 export refuses.

use std::time::Duration;

use scenario::testing::{red_params, with_red, with_tfrc_line, GOOD};
use scenario::{MaxPAimd, Protection, RedAverage, RedMaxP, RedThresholds, Scenario};

/// The scenario's default protection cost is the simulator's.
#[test]
fn protection_default_is_the_simulators() {
    let c = netsim::ProtectionCost::default();
    let p = Protection::default();
    assert_eq!((p.seal, p.open), (c.seal, c.open));
}

#[test]
fn red_variant_keys_combine_and_map_to_the_simulator() {
    let text = with_red(
        "red",
        "average = \"shewhart-ewma\"\nthresholds = \"auto-tuned\"\nalpha_th = 2\n\
         max_p = \"adaptive-q3\"\nalpha = 0.02\nbeta = 0.8\ninterval = \"1s\"\ntop = 0.4\n\
         bottom = 0.05\n",
    );
    let p = red_params(&text);
    assert_eq!(p.average, RedAverage::ShewhartEwma);
    assert_eq!(p.thresholds, RedThresholds::AutoTuned { alpha_th: 2.0 });
    let aimd = MaxPAimd {
        alpha: 0.02,
        beta: 0.8,
        interval: Duration::from_secs(1),
        top: 0.4,
        bottom: 0.05,
    };
    assert_eq!(p.max_p, RedMaxP::AdaptiveQ3(aimd));
    let c = lab::runner::red_config(50, &p);
    assert_eq!(c.average, netsim::queue::RedAverage::ShewhartEwma);
    assert_eq!(
        c.thresholds,
        netsim::queue::RedThresholds::AutoTuned { alpha_th: 2.0 }
    );
    assert_eq!(
        c.max_p,
        netsim::queue::RedMaxP::Q3(netsim::queue::AdaptiveQ3 {
            alpha: 0.02,
            beta: 0.8,
            interval: 1.0,
            top: 0.4,
            bottom: 0.05,
        })
    );
    let p = red_params(&with_red(
        "red",
        "max_p = \"adaptive-red\"\nbottom = 0.001\n",
    ));
    let c = lab::runner::red_config(50, &p);
    assert_eq!(
        c.max_p,
        netsim::queue::RedMaxP::AdaptiveRed(netsim::queue::AdaptiveRed {
            bottom: 0.001,
            ..netsim::queue::AdaptiveRed::default()
        })
    );
    // Plain RED maps to NS-2's defaults exactly as before.
    let c = lab::runner::red_config(50, &red_params(&with_red("red", "")));
    assert_eq!(
        c,
        netsim::RedConfig {
            limit: 50,
            ..netsim::RedConfig::default()
        }
    );
}

#[test]
fn protection_cost_and_flows_parse_and_reach_the_simulator() {
    let s = Scenario::parse("good.toml", GOOD).unwrap();
    assert_eq!(s.protection, Protection::default());
    assert_eq!(
        s.protection.seal + s.protection.open,
        Duration::from_nanos(4300)
    );
    // A one-link run: 100 kb/s of 1000-byte UDP packets on 10 Mb/s, 1 ms: 1.8 ms each,
    // plus seal + open when the flow is protected.
    let base = "name = \"p\"\nduration = \"2s\"\n[[links]]\nfrom = \"a\"\nto = \"b\"\n\
                bandwidth = \"10Mbps\"\ndelay = \"1ms\"\n[[flows]]\nname = \"u\"\nkind = \"udp\"\n\
                from = \"a\"\nto = \"b\"\npacket_size = 1000\nrate = \"100kbps\"\n";
    let delay = |text: &str| {
        let s = Scenario::parse("p.toml", text).unwrap();
        let out = lab::runner::simulate(&s, &lab::runner::RunOptions::default()).unwrap();
        let d = &out.results.flows[0].forward.delay;
        (d.min(), d.max())
    };
    let us = |x: u64| Some(Duration::from_nanos(x));
    assert_eq!(delay(base), (us(1_800_000), us(1_800_000)));
    let text = format!("{base}[protection]\nseal = \"3us\"\nopen = \"5us\"\nflows = [\"u\"]\n");
    let s = Scenario::parse("p.toml", &text).unwrap();
    assert_eq!(
        s.protection,
        Protection {
            seal: Duration::from_micros(3),
            open: Duration::from_micros(5),
            flows: vec![0],
        }
    );
    assert_eq!(delay(&text), (us(1_808_000), us(1_808_000)));
    // The cost alone protects nothing.
    let text = format!("{base}[protection]\nseal = \"3us\"\n");
    assert_eq!(delay(&text), (us(1_800_000), us(1_800_000)));
}

#[test]
fn tfrc_variants_parse_and_reach_the_profile() {
    use tfrc::variants::{Variant, VariantChoice};
    let text = with_tfrc_line("variants = [\"adaptive-rtt\", \"ali-ci-replace:t=2.58\"]");
    let s = Scenario::parse("v.toml", &text).unwrap();
    assert_eq!(
        s.flows[0].variants(),
        [
            VariantChoice::new("adaptive-rtt"),
            VariantChoice::new("ali-ci-replace").with("t", 2.58)
        ]
    );
    assert!(s.flows[0].uses(Variant::AdaptiveRtt));
    assert!(!s.flows[0].uses(Variant::Veno));
    assert!(s.flows[1].variants().is_empty());
    assert!(!s.ttl_notices, "off without adaptive-ttl");
    let p = lab::runner::tfrc_profile(&s.flows[0]).unwrap().unwrap();
    assert!(matches!(
        p.sender.rtt,
        tfrc::rtt::RttEstimator::Adaptive(a) if a.k == 8
    ));
    assert_eq!(
        p.receiver.averaging.transform,
        tfrc::loss_history::IntervalTransform::ConfidenceReplace { t: 2.58 }
    );
    // The profile key still applies underneath (ns2's TTL, segment size).
    assert_eq!(p.sender.segment_size, 1000);
    // E5 turns time-exceeded notices on by default; the key overrides either way.
    let text = with_tfrc_line("variants = [\"adaptive-ttl:ttl_min=40\"]");
    assert!(Scenario::parse("v.toml", &text).unwrap().ttl_notices);
    let off = format!("ttl_notices = false\n{text}");
    assert!(!Scenario::parse("v.toml", &off).unwrap().ttl_notices);
    let on = format!("ttl_notices = true\n{GOOD}");
    assert!(Scenario::parse("v.toml", &on).unwrap().ttl_notices);
}

#[test]
fn export_ns2_refuses_tfrc_variants_and_notices() {
    let t = with_tfrc_line("variants = [\"veno\", \"ali-ci-replace:t=2.58\"]");
    let s = Scenario::parse("v.toml", &t).unwrap();
    let e = lab::ns2::export(&s, &lab::ns2::ExportOptions::untraced())
        .expect_err("variants have no NS-2 counterpart");
    let ours: Vec<_> = e
        .problems
        .iter()
        .filter(|p| p.message.contains("variant"))
        .collect();
    assert_eq!(ours.len(), 2, "{e}");
    assert_eq!(ours[0].item, "flow \"tfrc1\"");
    assert!(ours[0].message.contains("\"veno\""), "{}", ours[0].message);
    assert!(ours[1].message.contains("\"ali-ci-replace:t=2.58\""));
    let t = format!("ttl_notices = true\n{GOOD}");
    let s = Scenario::parse("v.toml", &t).unwrap();
    let e = lab::ns2::export(&s, &lab::ns2::ExportOptions::untraced())
        .expect_err("NS-2 has no notices");
    assert!(e.problems.iter().any(|p| p.item == "ttl_notices"), "{e}");
    assert!(lab::ns2::export(
        &Scenario::parse("v.toml", GOOD).unwrap(),
        &lab::ns2::ExportOptions::untraced()
    )
    .is_ok());
}

/// netsim keeps at most `MAX_BINS` time-series bins (coarser past it) while lab reads every
/// series as `sample_interval` wide: a run with more bins is refused with the fix, and one
/// with exactly `MAX_BINS` bins builds.
#[test]
fn too_many_time_series_bins_are_refused() {
    let opts = lab::runner::RunOptions::default();
    // GOOD is 100 s long: 1 ms bins make 100,000 of them.
    let s = Scenario::parse("g.toml", &GOOD.replace("\"500ms\"", "\"1ms\"")).unwrap();
    let Err(err) = lab::runner::build(&s, &opts) else {
        panic!("100,000 bins built");
    };
    let msg = err.to_string();
    assert!(
        msg.contains("100000 time-series bins") && msg.contains("at least 1.525879ms"),
        "{msg}"
    );
    let fits = 100_000_000_000u64.div_ceil(netsim::stats::MAX_BINS as u64);
    let s = Scenario::parse(
        "g.toml",
        &GOOD.replace("\"500ms\"", &format!("\"{fits}ns\"")),
    );
    assert!(lab::runner::build(&s.unwrap(), &opts).is_ok());
}
