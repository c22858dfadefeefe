//! Sender tests of the seed variants (`docs/variants.md`): each drives a `Sender` alone with
//! hand-built feedback and checks the variant's rule with hand-computed numbers.

use super::test_support::{fb, ms};
use super::*;
use crate::equation::Equation;
use crate::profile::Profile;
use crate::variants::{self, VariantChoice};

fn with(names: &[&str]) -> Sender {
    let c: Vec<VariantChoice> = names.iter().map(|n| n.parse().unwrap()).collect();
    Sender::new(variants::apply(Profile::rfc5348(), &c).unwrap().sender).unwrap()
}

/// E5 through the sender: hop counts and time-exceeded notices drive eq. 11 (numbers as in
/// `ttl::tests`), the header carries the TTL, and E6 protects the raised-TTL packets only.
#[test]
fn seed000_e5_e6_adaptive_ttl_and_protection() {
    let mut s = with(&["adaptive-ttl", "protect-raised-ttl"]);
    s.set_infinite_backlog(ms(0));
    let h = s.poll_transmit(ms(0)).unwrap();
    assert_eq!(h.initial_ttl, 32);
    assert!(!s.protects(&h), "32 is the baseline, not above it");
    let mut f = fb(ms(0), 0.0, 0.0);
    f.hops = Some(20);
    s.on_feedback(ms(100), &f);
    assert_eq!(s.ttl(), 32, "21 clamps to TTL_min");
    s.on_ttl_exceeded(ms(150), 32);
    assert_eq!(s.ttl(), 42, "0.75·33 + 0.25·21 + 12");
    s.on_ttl_exceeded(ms(151), 32);
    assert_eq!(s.ttl(), 42, "a stale notice is ignored");
    let h = s.poll_transmit(ms(200)).unwrap();
    assert_eq!(h.initial_ttl, 42);
    assert!(s.protects(&h));
    f.hops = Some(40);
    f.timestamp_echo = ms(200);
    s.on_feedback(ms(300), &f);
    assert_eq!(s.ttl(), 47, "0.75·41 + 0.25·33 + 8");
    s.on_feedback(ms(400), &f);
    assert_eq!(s.ttl(), 41, "40 hops + 1");
    let st = s.status();
    assert_eq!((st.ttl, st.ttl_exceeded, st.protected_sent), (41, 2, 1));
    // protect-all protects the first packet already; the fixed-TTL baseline never protects.
    let mut all = with(&["protect-all"]);
    all.set_infinite_backlog(ms(0));
    let h = all.poll_transmit(ms(0)).unwrap();
    assert!(all.protects(&h));
    let mut none = with(&[]);
    none.set_infinite_backlog(ms(0));
    let h = none.poll_transmit(ms(0)).unwrap();
    assert!(!none.protects(&h));
    none.on_ttl_exceeded(ms(1), 32);
    assert_eq!(none.ttl(), 32, "the fixed policy only counts notices");
}

/// E2 through the sender with the receiver's count: a feedback with `link_errors > 0` rescales
/// t_RTO = RTO_old·R_new/R_old. With t_RTO = max(4R, 1 s): 1 s → 1.1 s (R 0.1 → 0.11); the next
/// ordinary feedback returns to max(4·0.109, 1) = 1 s.
#[test]
fn seed000_e2_feedback_link_errors_rescale_t_rto() {
    let mut p = variants::apply(
        Profile::rfc5348(),
        &[
            VariantChoice::new("owd-classifier"),
            VariantChoice::new("rto-link-error"),
        ],
    )
    .unwrap();
    p.sender.t_rto = crate::rtt::RtoPolicy::RttMultiple {
        multiple: 4.0,
        floor: Duration::from_secs(1),
    };
    let mut s = Sender::new(p.sender).unwrap();
    s.set_infinite_backlog(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    assert_eq!(s.t_rto(), Duration::from_secs(1));
    let mut f = fb(ms(100), 40_000.0, 0.0);
    f.link_errors = 2;
    s.on_feedback(ms(300), &f);
    assert!(
        (s.t_rto().as_secs_f64() - 1.1).abs() < 1e-9,
        "{:?}",
        s.t_rto()
    );
    assert_eq!(s.status().link_error_rescales, 1);
    s.on_feedback(ms(400), &fb(ms(300), 40_000.0, 0.0));
    assert_eq!(s.t_rto(), Duration::from_secs(1));
    assert_eq!(s.status().link_error_rescales, 1);
}

/// V1 through the sender: X_recv = 100 000 B/s (100 packets/s); samples 100, 120, 120 ms give
/// N = 100·0.02 = 2 < 3 at the third: X_calc is X(1, 0.8); 150 ms gives N = 5: RFC 5348. A
/// nofeedback expiry resets BaseRTT.
#[test]
fn seed003_v1_veno_switches_equation() {
    let mut s = with(&["veno"]);
    s.set_infinite_backlog(ms(0));
    let eq = |s: &Sender, e: &Equation| {
        e.rate(
            1000.0,
            s.rtt().unwrap().as_secs_f64(),
            s.t_rto().as_secs_f64(),
            0.1,
        )
    };
    let veno = Equation {
        gamma: 0.8,
        ..Equation::RFC5348
    };
    s.on_feedback(ms(100), &fb(ms(0), 100_000.0, 0.1));
    s.on_feedback(ms(1120), &fb(ms(1000), 100_000.0, 0.1));
    assert_eq!(s.status().backlog, None, "fewer than 3 samples: plain RFC");
    assert!((s.status().x_calc / eq(&s, &Equation::RFC5348) - 1.0).abs() < 1e-9);
    s.on_feedback(ms(2120), &fb(ms(2000), 100_000.0, 0.1));
    let st = s.status();
    assert!((st.backlog.unwrap() - 2.0).abs() < 1e-6, "{:?}", st.backlog);
    assert!(st.random_losses);
    assert!((st.x_calc / eq(&s, &veno) - 1.0).abs() < 1e-9);
    s.on_feedback(ms(3150), &fb(ms(3000), 100_000.0, 0.1));
    let st = s.status();
    assert!((st.backlog.unwrap() - 5.0).abs() < 1e-6);
    assert!(!st.random_losses);
    assert!((st.x_calc / eq(&s, &Equation::RFC5348) - 1.0).abs() < 1e-9);
    // Nofeedback expiry: BaseRTT and the sample count start over.
    let t = s.nfb_at.unwrap();
    s.on_timeout(t);
    assert_eq!(s.status().backlog, None);
}

/// V2 through the sender: after the loss event (p rises to 0.01 at t = 200 ms) X0 = X; at
/// t = 400 ms p falls to 0.001 and X_Bps jumps, but X ≤ X0·(1 + a·(t/R)²/w0²) with
/// a = 1.265625, t = 0.2 s, w0 = X0·R/s.
#[test]
fn seed003_v2_simd_caps_growth() {
    let mut s = with(&["simd"]);
    s.set_infinite_backlog(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 1e9, 0.0));
    s.on_feedback(ms(200), &fb(ms(100), 1e9, 0.01));
    let x0 = s.rate();
    let r = s.rtt().unwrap().as_secs_f64();
    assert!((r - 0.1).abs() < 1e-12);
    s.on_feedback(ms(400), &fb(ms(300), 1e9, 0.001));
    let w0 = x0 * r / 1000.0;
    let cap = x0 * (1.0 + 1.265625 * (0.2 / r) * (0.2 / r) / (w0 * w0));
    let x_bps = s.equation().rate(1000.0, r, s.rtt.t_rto(), 0.001);
    assert!(x_bps > cap, "the equation alone would exceed the cap");
    assert!((s.rate() / cap - 1.0).abs() < 1e-9, "{} vs {cap}", s.rate());
    // Without the cap the equation rules.
    let mut u = with(&["simd:cap=0"]);
    u.set_infinite_backlog(ms(0));
    u.on_feedback(ms(100), &fb(ms(0), 1e9, 0.0));
    u.on_feedback(ms(200), &fb(ms(100), 1e9, 0.01));
    u.on_feedback(ms(400), &fb(ms(300), 1e9, 0.001));
    assert!((u.rate() / x_bps - 1.0).abs() < 1e-9);
}

/// E1 through the sender: the spread term inflates R where RFC 5348 uses it (equation and
/// nofeedback timer). Samples 100 ms then 150 ms: R = 0.09 + 0.015 + 0.05 = 0.155 s.
#[test]
fn seed000_e1_inflated_r_reaches_the_equation() {
    let mut s = with(&["adaptive-rtt"]);
    s.set_infinite_backlog(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 1e9, 0.0));
    s.on_feedback(ms(1150), &fb(ms(1000), 1e9, 0.05));
    let r = s.rtt().unwrap().as_secs_f64();
    assert!((r - 0.155).abs() < 1e-9, "{r}");
    assert!((s.t_rto().as_secs_f64() - 0.62).abs() < 1e-9);
    let want = Equation::RFC5348.rate(1000.0, 0.155, 0.62, 0.05);
    assert!((s.status().x_calc / want - 1.0).abs() < 1e-6);
    assert_eq!(s.nfb_at, Some(ms(1150) + Duration::from_millis(620)));
}
