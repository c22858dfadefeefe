use super::*;
use crate::equation::Equation;

fn apply1(profile: Profile, c: VariantChoice) -> Result<Profile, VariantError> {
    apply(profile, &[c])
}

/// Names are unique kebab-case; every default lies in its range; labels and papers are set.
#[test]
fn catalogue_is_well_formed() {
    for (i, v) in Variant::ALL.iter().enumerate() {
        let info = v.info();
        assert_eq!(info.variant, *v);
        assert!(info
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'));
        assert_eq!(info.name.parse::<Variant>().unwrap(), *v);
        assert!(Variant::ALL[..i].iter().all(|w| w.name() != info.name));
        for p in info.params {
            if let Some(d) = p.default {
                assert!(p.range.contains(d), "{}.{} = {d}", info.name, p.name);
            }
        }
        // Seed 003 and MulTFRC (whose draft could not be read whole) are reconstructions.
        assert_eq!(
            info.reconstruction,
            info.paper == SEED_003 || info.paper == MULTFRC_01,
            "{}",
            info.name
        );
    }
    assert_eq!(INFOS.len(), Variant::ALL.len());
}

/// Each variant alone applies to both presets and changes the profile; no choice changes
/// nothing.
#[test]
fn each_variant_applies_alone() {
    for base in [Profile::rfc5348(), Profile::ns2()] {
        assert_eq!(apply(base, &[]).unwrap(), base);
        for v in Variant::ALL {
            if v == Variant::RtoLinkError {
                continue;
            }
            if v == Variant::FasterRestart && base.kind == crate::ProfileKind::Ns2 {
                // Faster Restart rewrites RFC 5348's rate control, which the ns2 profile lacks.
                assert!(matches!(
                    apply1(base, VariantChoice::new(v.name())),
                    Err(VariantError::Requires { .. })
                ));
                continue;
            }
            let p = apply1(base, VariantChoice::new(v.name())).unwrap();
            p.validate().unwrap();
            if v == Variant::GeneralEquation {
                // Its defaults are RFC 5348's: no change at all.
                assert_eq!(p, base);
            } else {
                assert_ne!(p, base, "{v}");
            }
            assert_eq!(p.kind, base.kind);
        }
    }
}

#[test]
fn parameters_reach_the_policies() {
    let base = Profile::rfc5348();
    let p = apply1(base, "adaptive-rtt:k=16,lt_seconds=0.005".parse().unwrap()).unwrap();
    assert_eq!(
        p.sender.rtt,
        RttEstimator::Adaptive(AdaptiveRtt {
            q: 0.9,
            k: 16,
            threshold: SpikeThreshold::Seconds(0.005)
        })
    );
    let p = apply1(base, VariantChoice::new("adaptive-rtt")).unwrap();
    assert_eq!(p.sender.rtt, RttEstimator::Adaptive(AdaptiveRtt::DEFAULT));
    let p = apply1(base, VariantChoice::new("ali-ci-include").with("t", 2.58)).unwrap();
    assert_eq!(
        p.receiver.averaging.transform,
        IntervalTransform::ConfidenceInclude { t: 2.58 }
    );
    let p = apply1(base, VariantChoice::new("adaptive-ttl")).unwrap();
    assert_eq!(p.sender.ttl, TtlPolicy::Adaptive(AdaptiveTtl::DEFAULT));
    let p = apply1(base, VariantChoice::new("protect-raised-ttl")).unwrap();
    assert_eq!(p.sender.protect, ProtectPolicy::AboveBaseline(32));
    let p = apply1(base, VariantChoice::new("owd-classifier")).unwrap();
    assert_eq!(
        p.receiver.classifier,
        LossClassifier::OneWayDelay(OwdClassifier::SEED002)
    );
    let p = apply1(base, "owd-classifier:offset_clock=1".parse().unwrap()).unwrap();
    assert!(matches!(
        p.receiver.classifier,
        LossClassifier::OneWayDelay(OwdClassifier {
            clock: OwdClock::MinOffset,
            ..
        })
    ));
    // V1: random-loss equation X(1, 0.8), congestive RFC 5348.
    let p = apply1(base, VariantChoice::new("veno")).unwrap();
    assert_eq!(p.sender.equation, Equation::RFC5348);
    let BacklogRule::Veno(v) = p.sender.backlog else {
        panic!("veno sets the backlog rule")
    };
    assert_eq!(
        (v.random.alpha, v.random.gamma, v.random.k_to),
        (1.0, 0.8, 1.0)
    );
    assert_eq!((v.threshold, v.min_samples), (3.0, 3));
    // On ns2 the random-loss equation keeps NS-2's clamp and cap.
    let p = apply1(Profile::ns2(), VariantChoice::new("veno")).unwrap();
    let BacklogRule::Veno(v) = p.sender.backlog else {
        panic!()
    };
    assert!(v.random.clamp_timeout && v.random.max_rate == Equation::NS2.max_rate);
    // V2 defaults: beta 0.5, a = 1.265625 derived, gamma = 0.5, alpha = 2·0.5·1.5/1.5 = 1, no
    // timeout term, cap on.
    let p = apply1(base, VariantChoice::new("simd")).unwrap();
    assert_eq!(p.sender.growth_cap, GrowthCap::Simd { a: 1.265625 });
    assert!((p.sender.equation.alpha - 1.0).abs() < 1e-12);
    assert!((p.sender.equation.gamma - 0.5).abs() < 1e-12);
    assert_eq!(p.sender.equation.k_to, 0.0);
    let p = apply1(base, "simd:beta=0.25,a=2,cap=0".parse().unwrap()).unwrap();
    assert_eq!(p.sender.growth_cap, GrowthCap::Off);
    assert_eq!(p.sender.equation.gamma, 0.75);
    // V3 presets (alpha by hand in gaimd::tests).
    let p = apply1(base, VariantChoice::new("veno-simd-090")).unwrap();
    let BacklogRule::Veno(v) = p.sender.backlog else {
        panic!()
    };
    assert!((v.random.alpha - 2.7 / 2.8).abs() < 1e-12);
    assert_eq!(v.random.gamma, 0.9);
    let p = apply1(base, "veno-simd-055:cut_is_beta=1".parse().unwrap()).unwrap();
    let BacklogRule::Veno(v) = p.sender.backlog else {
        panic!()
    };
    assert!((v.random.alpha - 9.0 * 0.2475f64.sqrt() / 1.9).abs() < 1e-12);
}

/// E2 takes its classification from the receiver when owd-classifier is chosen, else from the
/// Veno backlog, and is refused without either.
#[test]
fn rto_link_error_needs_a_classifier() {
    let base = Profile::rfc5348();
    let e = apply1(base, VariantChoice::new("rto-link-error")).unwrap_err();
    assert!(matches!(
        e,
        VariantError::Requires {
            variant: "rto-link-error",
            ..
        }
    ));
    let names = |n: &[&str]| n.iter().map(|s| VariantChoice::new(*s)).collect::<Vec<_>>();
    let p = apply(base, &names(&["rto-link-error", "owd-classifier"])).unwrap();
    assert_eq!(
        p.sender.link_error_rto,
        LinkErrorRto::Rescale {
            source: LinkErrorSource::Receiver,
            spike: false
        }
    );
    let p = apply(base, &names(&["veno-simd-055", "rto-link-error"])).unwrap();
    assert_eq!(
        p.sender.link_error_rto,
        LinkErrorRto::Rescale {
            source: LinkErrorSource::VenoBacklog,
            spike: false
        }
    );
    // The core refuses the receiver source without a classifier too.
    let mut bad = base;
    bad.sender.link_error_rto = LinkErrorRto::Rescale {
        source: LinkErrorSource::Receiver,
        spike: false,
    };
    assert!(matches!(bad.validate(), Err(ConfigError::Incompatible(_))));
    bad.sender.link_error_rto = LinkErrorRto::Rescale {
        source: LinkErrorSource::VenoBacklog,
        spike: false,
    };
    assert!(matches!(bad.validate(), Err(ConfigError::Incompatible(_))));
}

#[test]
fn typed_errors() {
    let base = Profile::rfc5348();
    assert_eq!(
        apply1(base, VariantChoice::new("red-shewhart")),
        Err(VariantError::UnknownVariant("red-shewhart".into()))
    );
    assert_eq!(
        apply1(base, VariantChoice::new("veno").with("beta", 0.5)),
        Err(VariantError::UnknownParameter {
            variant: "veno",
            parameter: "beta".into()
        })
    );
    assert!(matches!(
        apply1(base, VariantChoice::new("adaptive-rtt").with("q", 1.0)),
        Err(VariantError::OutOfRange { parameter: "q", .. })
    ));
    assert!(matches!(
        apply1(base, VariantChoice::new("adaptive-rtt").with("k", 8.5)),
        Err(VariantError::OutOfRange { parameter: "k", .. })
    ));
    assert!(matches!(
        apply1(
            base,
            VariantChoice::new("ali-ci-replace").with("t", f64::NAN)
        ),
        Err(VariantError::OutOfRange { parameter: "t", .. })
    ));
    assert!(matches!(
        apply1(
            base,
            VariantChoice::new("ali-ci-replace")
                .with("t", 1.0)
                .with("t", 2.0)
        ),
        Err(VariantError::DuplicateParameter { parameter: "t", .. })
    ));
    let two = |a: &str, b: &str| apply(base, &[VariantChoice::new(a), VariantChoice::new(b)]);
    assert_eq!(two("veno", "veno"), Err(VariantError::Duplicate("veno")));
    assert!(matches!(
        two("ali-ci-replace", "ali-mean-include"),
        Err(VariantError::Conflict {
            first: "ali-ci-replace",
            second: "ali-mean-include",
            ..
        })
    ));
    assert!(matches!(
        two("simd", "veno"),
        Err(VariantError::Conflict { .. })
    ));
    assert!(matches!(
        two("protect-all", "protect-raised-ttl"),
        Err(VariantError::Conflict { .. })
    ));
    // ttl_min > ttl_max: each in range, the profile is not.
    assert!(matches!(
        apply1(
            base,
            VariantChoice::new("adaptive-ttl")
                .with("ttl_min", 64.0)
                .with("ttl_max", 40.0)
        ),
        Err(VariantError::Config(ConfigError::Parameter {
            name: "ttl.max",
            ..
        }))
    ));
    // Independent policies combine.
    let all = [
        "adaptive-rtt",
        "rto-link-error",
        "ali-ci-replace",
        "adaptive-ttl",
        "protect-raised-ttl",
        "owd-classifier",
        "veno",
    ];
    let c: Vec<VariantChoice> = all.iter().map(|n| VariantChoice::new(*n)).collect();
    apply(base, &c).unwrap().validate().unwrap();
    for e in [
        VariantError::UnknownVariant("x".into()),
        VariantError::Syntax("y".into()),
        two("veno", "simd").unwrap_err(),
    ] {
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn choice_syntax() {
    let c: VariantChoice = " adaptive-ttl : a = 0.6 , ttl_min=40".parse().unwrap();
    assert_eq!(c.name, "adaptive-ttl");
    assert_eq!(
        c.params,
        vec![("a".to_string(), 0.6), ("ttl_min".to_string(), 40.0)]
    );
    assert!("veno:threshold".parse::<VariantChoice>().is_err());
    assert!("veno:threshold=abc".parse::<VariantChoice>().is_err());
    assert_eq!(
        "ADAPTIVE-RTT".parse::<Variant>().unwrap(),
        Variant::AdaptiveRtt
    );
    assert_eq!(
        ParamRange::FRACTION.to_string(),
        "[0, 1)",
        "ranges print as intervals"
    );
    assert_eq!(ParamRange::int(2.0, 64.0).to_string(), "[2, 64] integer");
}
