//! RFC 8698 (NADA), step by step: each test names the section or equation it checks, drives the
//! public API with scripted packets and feedback (tests/support), and compares with values
//! computed here from the RFC's formulas. `docs/rfc8698-conformance.md` is the table of these
//! tests. Budget: all of them well under a second.

mod support;

use rmcat::nada::{
    aggregate_signal, gradual_update, ramp_up_gamma, shaped_rates, warp_delay, NadaConfig, RampMode,
};
use rmcat::{Controller, ControllerKind, FeedbackGenerator, RateRange};
use support::{cbr, drive};

fn nada(rmin: f64, rmax: f64) -> (Controller, FeedbackGenerator) {
    let k = ControllerKind::Nada;
    (
        Controller::new(
            k,
            RateRange {
                min: rmin,
                max: rmax,
                start: rmin,
            },
        ),
        FeedbackGenerator::new(k.feedback_kind(), k.feedback_config()),
    )
}

fn state(c: &Controller) -> (f64, rmcat::nada::NadaState) {
    match c {
        Controller::Nada(n) => (n.reference_rate(), n.state()),
        _ => unreachable!(),
    }
}

#[test]
fn s6_3_figure3_reference_parameters() {
    let c = NadaConfig::rfc8698();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    assert_eq!((c.prio, c.rmin, c.rmax), (1.0, 150e3, 1.5e6));
    assert_eq!(
        (c.xref_ms, c.kappa, c.eta, c.tau_ms),
        (10.0, 0.5, 2.0, 500.0)
    );
    assert_eq!(
        (ms(c.delta), ms(c.logwin), c.qeps_ms, c.dfilt_ms),
        (100.0, 500.0, 10.0, 120.0)
    );
    assert_eq!((c.gamma_max, c.qbound_ms, c.multiloss), (0.5, 50.0, 7.0));
    assert_eq!(
        (c.qth_ms, c.lambda, c.plrref, c.pmrref),
        (50.0, 0.5, 0.01, 0.01)
    );
    assert_eq!((c.dloss_ms, c.dmark_ms, c.fps), (10.0, 2.0, 30.0));
    assert_eq!((c.beta_s, c.beta_v, c.alpha), (0.1, 0.1, 0.1));
    assert_eq!(c.min_filter_taps, 15);
    // The receiver's feedback interval is DELTA.
    assert_eq!(
        ControllerKind::Nada.feedback_config().interval(0.0),
        std::time::Duration::from_millis(100)
    );
}

#[test]
fn s4_2_eq1_warping_below_and_above_qth() {
    let c = NadaConfig::rfc8698();
    assert_eq!(warp_delay(30.0, &c), 30.0);
    // Continuous at QTH, then QTH·exp(−LAMBDA·(d − QTH)/QTH).
    assert_eq!(warp_delay(50.0, &c), 50.0);
    let at100 = 50.0 * (-0.5f64 * 1.0).exp();
    assert!((warp_delay(100.0, &c) - at100).abs() < 1e-12);
    assert!(warp_delay(200.0, &c) < warp_delay(100.0, &c));
}

#[test]
fn s4_2_eq2_aggregate_congestion_signal() {
    let c = NadaConfig::rfc8698();
    // At the reference ratios the penalties are DMARK and DLOSS.
    assert!((aggregate_signal(5.0, 0.01, 0.0, &c) - 7.0).abs() < 1e-12);
    assert!((aggregate_signal(5.0, 0.0, 0.01, &c) - 15.0).abs() < 1e-12);
    // Quadratic: twice the loss ratio, four times the penalty.
    assert!((aggregate_signal(0.0, 0.0, 0.02, &c) - 40.0).abs() < 1e-12);
}

#[test]
fn s4_3_eq3_ramp_up_ratio() {
    let c = NadaConfig::rfc8698();
    assert!((ramp_up_gamma(30.0, &c) - 50.0 / 250.0).abs() < 1e-12);
    let mut big = c.clone();
    big.qbound_ms = 1000.0;
    assert_eq!(ramp_up_gamma(30.0, &big), 0.5); // GAMMA_MAX binds
}

#[test]
fn s4_3_eq5_7_gradual_update() {
    let c = NadaConfig::rfc8698();
    // x_offset = 20 − 1·10·1.5e6/1e6 = 5; x_diff = 5.
    // r = 1e6 − 0.5·(100/500)·(5/500)·1e6 − 0.5·2·(5/500)·1e6 = 989,000.
    let r = gradual_update(1e6, 20.0, 15.0, 100.0, &c);
    assert!((r - 989_000.0).abs() < 1e-6, "{r}");
    // At x_curr = PRIO·XREF·RMAX/r_ref and no change, the rate is an equilibrium.
    assert!((gradual_update(1e6, 15.0, 15.0, 100.0, &c) - 1e6).abs() < 1e-6);
}

#[test]
fn s4_3_rate_shaping_buffer() {
    let c = NadaConfig::rfc8698();
    // r_vin = r_ref − BETA_V·8·buffer·FPS, r_send = r_ref + BETA_S·8·buffer·FPS.
    assert_eq!(shaped_rates(1e6, 1000, &c), (976_000.0, 1_024_000.0));
    // Clipped to RMIN and RMAX.
    assert_eq!(shaped_rates(160e3, 10_000, &c).0, 150e3);
    assert_eq!(shaped_rates(1.49e6, 10_000, &c).1, 1.5e6);
}

#[test]
fn s4_2_s4_3_accelerated_ramp_up_without_queue_or_loss() {
    let (mut tx, mut rx) = nada(150e3, 1.5e6);
    // 400 kbit/s of 1000-byte packets, constant 20 ms one-way delay.
    let pkts = cbr(0.0, 20.0, 40, 1000, |_| Some(20.0));
    let mut seen = Vec::new();
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 900.0, |c, _| {
        seen.push(state(c))
    });
    assert!(seen.len() >= 5);
    for w in seen.windows(2) {
        let ((_, _), (r1, s1)) = (w[0], w[1]);
        assert_eq!(s1.mode, RampMode::AcceleratedRampUp);
        // Eq. 4: r_ref = max(r_ref, (1 + gamma)·r_recv).
        let gamma = ramp_up_gamma(s1.rtt.unwrap().as_secs_f64() * 1e3, &NadaConfig::rfc8698());
        let expect = w[0].0.max((1.0 + gamma) * s1.r_recv).clamp(150e3, 1.5e6);
        assert!((r1 - expect).abs() < 1e-6, "{r1} vs {expect}");
    }
    // The receive rate over LOGWIN is the 400 kbit/s sent.
    let last = seen.last().unwrap().1;
    assert!((last.r_recv - 400e3).abs() < 20e3, "{}", last.r_recv);
}

#[test]
fn s4_2_gradual_mode_when_queuing_delay_reaches_qeps() {
    let (mut tx, mut rx) = nada(150e3, 1.5e6);
    // A queue building from 0 to 60 ms over the first 1.2 s, then steady.
    let pkts = cbr(0.0, 10.0, 200, 1000, |i| {
        Some(20.0 + (i as f64 * 0.5).min(60.0))
    });
    let mut seen = Vec::new();
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 2500.0, |c, _| {
        seen.push(state(c))
    });
    let (r, s) = *seen.last().unwrap();
    assert_eq!(s.mode, RampMode::GradualUpdate);
    // No loss or mark: x_curr is the queuing delay itself (~60 ms, to the 1/1024-s feedback
    // resolution).
    assert!((s.x_curr - s.d_queue_ms).abs() < 1e-9);
    assert!((s.d_queue_ms - 60.0).abs() < 1.5, "{}", s.d_queue_ms);
    // x_curr = 60 > XREF·RMAX/r_ref (=10·1.5e6/r): the gradual update lowers the rate each time.
    let prev = seen[seen.len() - 2].0;
    assert!(r <= prev);
}

#[test]
fn s4_2_minimum_filter_ignores_a_single_delay_spike() {
    let (mut tx, mut rx) = nada(150e3, 1.5e6);
    // Constant delay except one packet delayed by 80 ms more.
    let pkts = cbr(0.0, 10.0, 60, 1000, |i| {
        Some(if i == 30 { 100.0 } else { 20.0 })
    });
    let mut max_dq: f64 = 0.0;
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 1000.0, |c, _| {
        max_dq = max_dq.max(state(c).1.d_queue_ms)
    });
    assert!(max_dq < 1.5, "{max_dq}");
}

#[test]
fn s4_2_loss_penalty_and_warping_expiry() {
    let (mut tx, mut rx) = nada(150e3, 1.5e6);
    // Losses every 20th packet for 200 packets, then 600 packets without loss.
    let pkts = cbr(0.0, 5.0, 800, 1000, |i| {
        if i < 200 && i % 20 == 19 {
            None
        } else {
            Some(20.0)
        }
    });
    let mut seen = Vec::new();
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 4200.0, |c, at| {
        seen.push((at, state(c).1))
    });
    let during = seen
        .iter()
        .find(|(at, _)| at.as_secs_f64() > 0.9)
        .unwrap()
        .1;
    assert!(during.p_loss > 0.0);
    assert!(during.warping, "a recent loss warps the delay (Eq. 1)");
    assert_eq!(during.mode, RampMode::GradualUpdate);
    // Eq. 2's loss term: x_curr − d_tilde = DLOSS·(p_loss/PLRREF)².
    let penalty = 10.0 * (during.p_loss / 0.01).powi(2);
    assert!((during.x_curr - during.d_queue_ms - penalty).abs() < 1e-9);
    // Average loss interval is 19 received packets: after MULTILOSS·19 = 133 packets without
    // loss (665 ms at 5 ms), the warping expires.
    let late = seen
        .iter()
        .find(|(at, _)| at.as_secs_f64() > 1.0 + 0.665 + 0.3)
        .unwrap()
        .1;
    assert!(!late.warping);
    // And p_loss decays by (1 − ALPHA) per update once LOGWIN holds no loss.
    assert!(seen.last().unwrap().1.p_loss < during.p_loss * 0.5);
}

#[test]
fn s4_3_reference_rate_clipped_to_rmin_and_rmax() {
    let (mut tx, mut rx) = nada(150e3, 1.5e6);
    // A standing 400-ms queue drives the rate down to RMIN and no further.
    let pkts = cbr(0.0, 10.0, 400, 1000, |i| {
        Some(20.0 + (i as f64 * 4.0).min(400.0))
    });
    let mut rates = Vec::new();
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 4500.0, |c, _| {
        rates.push(state(c).0)
    });
    assert!(rates.iter().all(|&r| (150e3..=1.5e6).contains(&r)));
    assert_eq!(*rates.last().unwrap(), 150e3);
    // And an empty path at a high rate ramps to RMAX, not past it.
    let (mut tx, mut rx) = nada(150e3, 1.5e6);
    let pkts = cbr(0.0, 2.0, 2000, 1000, |_| Some(20.0));
    let mut last = 0.0;
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 4200.0, |c, _| {
        last = state(c).0
    });
    assert_eq!(last, 1.5e6);
}

#[test]
fn s4_2_ecn_marks_add_the_marking_penalty() {
    let (mut tx, mut rx) = nada(150e3, 1.5e6);
    let mut pkts = cbr(0.0, 10.0, 100, 1000, |_| Some(20.0));
    for p in pkts.iter_mut().skip(50).step_by(10) {
        p.ce = true;
    }
    let mut s = None;
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 1100.0, |c, _| {
        s = Some(state(c).1)
    });
    let s = s.unwrap();
    assert!(s.p_mark > 0.0 && s.p_loss == 0.0);
    assert_eq!(s.mode, RampMode::GradualUpdate);
    assert!((s.x_curr - s.d_queue_ms - 2.0 * (s.p_mark / 0.01).powi(2)).abs() < 1e-9);
}
