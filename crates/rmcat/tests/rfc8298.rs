//! RFC 8298 (SCReAM v1), step by step, as `docs/rfc8298-conformance.md` lists: constants, the
//! delay trend, the window update in and out of fast increase, loss reaction, the send window,
//! pacing and the media rate control, each driven with scripted packets and RFC 8888 feedback.
//! Budget: under a second.

mod support;

use rmcat::feedback::scream_feedback_interval;
use rmcat::scream::{qdelay_trend, ScreamConfig, ScreamState};
use rmcat::{Controller, ControllerKind, FeedbackGenerator, RateRange};
use std::time::Duration;
use support::{cbr, drive};

fn scream() -> (Controller, FeedbackGenerator) {
    let k = ControllerKind::Scream;
    (
        Controller::new(
            k,
            RateRange {
                min: 150e3,
                max: 3e6,
                start: 150e3,
            },
        ),
        FeedbackGenerator::new(k.feedback_kind(), k.feedback_config()),
    )
}

fn st(c: &Controller) -> ScreamState {
    match c {
        Controller::Scream(s) => s.state(),
        _ => unreachable!(),
    }
}

#[test]
fn s4_1_1_constants() {
    let c = ScreamConfig::rfc8298();
    assert_eq!(
        (
            c.qdelay_target_lo.as_millis(),
            c.qdelay_target_hi.as_millis()
        ),
        (100, 400)
    );
    assert_eq!(
        (c.qdelay_weight, c.qdelay_trend_th, c.qdelay_trend_lo),
        (0.1, 0.2, 0.2)
    );
    assert_eq!(
        (c.min_cwnd, c.max_bytes_in_flight_head_room, c.gain),
        (3000.0, 1.1, 1.0)
    );
    assert_eq!(
        (c.beta_loss, c.beta_ecn, c.beta_r, c.mss),
        (0.8, 0.8, 0.9, 1000.0)
    );
    assert_eq!(
        (c.rate_adjust_interval.as_millis(), c.ramp_up_speed),
        (200, 200e3)
    );
    assert!((0.0..=0.2).contains(&c.pre_congestion_guard));
    assert_eq!(
        (c.tx_queue_size_factor, c.rtp_qdelay_th.as_millis()),
        (1.0, 20)
    );
    assert_eq!(
        (c.target_rate_scale_rtp_qdelay, c.rate_pace_min),
        (0.95, 50e3)
    );
    assert_eq!(c.t_resume_fast_increase.as_secs(), 5);
}

#[test]
fn s4_2_1_feedback_interval() {
    // fb_int = 1 / min(50, max(2.5, rate_media / 10000)).
    assert_eq!(scream_feedback_interval(10e3), Duration::from_millis(400));
    assert_eq!(scream_feedback_interval(200e3), Duration::from_millis(50));
    assert_eq!(scream_feedback_interval(2e6), Duration::from_millis(20));
}

#[test]
fn s4_1_2_1_qdelay_trend() {
    // A steady queue has no trend.
    assert_eq!(qdelay_trend(&[0.5; 20], 0.5), 0.0);
    // [0, 1, 2, 3]: mean 1.5, R0 = 5, R1 = 0.75 − 0.25 + 0.75 = 1.25, a = 0.25.
    assert!((qdelay_trend(&[0.0, 1.0, 2.0, 3.0], 0.8) - 0.2).abs() < 1e-12);
    // Clamped to [0, 1].
    assert_eq!(qdelay_trend(&[0.0, 1.0, 0.0, 1.0], 1.0), 0.0);
    assert_eq!(
        qdelay_trend(&(0..20).map(f64::from).collect::<Vec<_>>(), 50.0),
        1.0
    );
}

#[test]
fn s4_1_2_4_fast_increase_grows_cwnd_by_acked_bytes_when_used() {
    let (mut tx, mut rx) = scream();
    // 1000-byte packets every 5 ms (1.6 Mbit/s offered) over a 20-ms path with no queue: the
    // window is used, so each feedback adds the bytes it acknowledges.
    let pkts = cbr(0.0, 5.0, 60, 1000, |_| Some(20.0));
    let mut seen: Vec<ScreamState> = Vec::new();
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 600.0, |c, _| {
        seen.push(st(c))
    });
    assert!(seen.iter().all(|s| s.in_fast_increase));
    let grew = seen.windows(2).filter(|w| w[1].cwnd > w[0].cwnd).count();
    assert!(grew >= seen.len() / 2, "{grew} of {}", seen.len());
    // Capped by MAX_BYTES_IN_FLIGHT_HEAD_ROOM only out of fast increase: here it exceeds
    // MIN_CWND by more than the bytes in flight allow in congestion avoidance.
    assert!(seen.last().unwrap().cwnd > 3000.0);
}

#[test]
fn s4_1_2_2_loss_cuts_cwnd_once_per_rtt_and_leaves_fast_increase() {
    let (mut tx, mut rx) = scream();
    // Two losses 10 ms apart (within one RTT of 40 ms), after 1 s of clean sending.
    let pkts = cbr(0.0, 5.0, 300, 1000, |i| {
        if i == 200 || i == 202 {
            None
        } else {
            Some(20.0)
        }
    });
    let mut seen: Vec<(ScreamState, f64)> = Vec::new();
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 1400.0, |c, _| {
        seen.push((st(c), c.target_rate()))
    });
    let i = seen
        .iter()
        .position(|(s, _)| !s.in_fast_increase)
        .expect("left fast increase");
    let (before, rate_before) = seen[i - 1];
    let (after, rate_after) = seen[i];
    assert!(
        (after.cwnd - (before.cwnd * 0.8).max(3000.0)).abs() < 1e-6,
        "{} -> {}",
        before.cwnd,
        after.cwnd
    );
    // The target bitrate is cut by BETA_R at once.
    assert!((rate_after - (rate_before * 0.9).max(150e3)).abs() < 1e-6);
    // One reduction only: the next feedback does not cut again.
    assert!(seen[i + 1].0.cwnd >= after.cwnd * 0.999);
}

#[test]
fn s4_1_2_4_off_target_update_shrinks_cwnd_above_the_delay_target() {
    let (mut tx, mut rx) = scream();
    // Clean for 1 s, one loss to leave fast increase, then a queue growing to 300 ms.
    let pkts = cbr(0.0, 5.0, 800, 1000, |i| match i {
        200 => None,
        i if i > 240 => Some(20.0 + ((i - 240) as f64).min(300.0)),
        _ => Some(20.0),
    });
    let mut seen: Vec<ScreamState> = Vec::new();
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 4400.0, |c, _| {
        seen.push(st(c))
    });
    let high: Vec<&ScreamState> = seen
        .iter()
        .filter(|s| !s.in_fast_increase && s.qdelay > s.qdelay_target)
        .collect();
    assert!(!high.is_empty());
    // While qdelay > qdelay_target, off_target < 0 and the window only shrinks (to MIN_CWND).
    for w in high.windows(2) {
        assert!(w[1].cwnd <= w[0].cwnd + 1e-9);
    }
    // (Competing-flow compensation raises qdelay_target towards 400 ms as the 300-ms queue
    // stays steady, so the shrinking slows; it does not stop while qdelay is above target.)
    assert!(high.last().unwrap().cwnd < high[0].cwnd);
}

#[test]
fn s4_1_2_5_send_window_and_pacing() {
    let (mut tx, mut rx) = scream();
    // Before any RTT sample there is no pacing limit; MIN_CWND + MSS bytes may be in flight.
    assert!(tx.can_send(1000));
    for s in 0..4u64 {
        tx.on_packet_sent(support::t(s as f64), s, 1000);
    }
    assert!(!tx.can_send(1000), "4000 in flight = cwnd 3000 + MSS 1000");
    let pkts = cbr(10.0, 10.0, 30, 1000, |_| Some(20.0));
    let mut s = None;
    drive(&mut tx, &mut rx, 4, &pkts, 20.0, 1000.0, |c, _| {
        s = Some((st(c), c.pacing_rate()))
    });
    let (s, pace) = s.unwrap();
    // pace_bitrate = max(RATE_PACE_MIN, cwnd·8/s_rtt).
    assert!((pace - (s.cwnd * 8.0 / s.s_rtt.unwrap()).max(50e3)).abs() < 1e-6);
}

#[test]
fn s4_1_3_media_rate_ramps_in_fast_increase() {
    let (mut tx, mut rx) = scream();
    let pkts = cbr(0.0, 5.0, 400, 1000, |_| Some(20.0));
    let mut rates = Vec::new();
    drive(&mut tx, &mut rx, 0, &pkts, 20.0, 2000.0, |c, at| {
        rates.push((at, c.target_rate()))
    });
    // Every RATE_ADJUST_INTERVAL: + min(RAMP_UP_SPEED, target/2)·0.2 s·scale (scale 1: no
    // congestion yet), never more; between two observations at most one step per interval
    // passed (plus one).
    assert!(rates.len() > 3);
    for w in rates.windows(2) {
        let ((t1, r1), (t2, r2)) = (w[0], w[1]);
        let steps = ((t2.as_secs_f64() - t1.as_secs_f64()) / 0.2).floor() + 1.0;
        let bound = steps * (200e3f64).min(r2 / 2.0) * 0.2;
        assert!(r2 - r1 <= bound + 1e-6, "{r1} -> {r2} over {bound}");
    }
    // Below 400 kbit/s, target/2 < RAMP_UP_SPEED, so each step multiplies the target by 1.1:
    // after 2 s it is 150 kbit/s · 1.1^n for a whole number n of adjustments (9 here).
    let n = (rates.last().unwrap().1 / 150e3).ln() / 1.1f64.ln();
    assert!((n - n.round()).abs() < 1e-6 && n.round() >= 8.0, "{n}");
}
