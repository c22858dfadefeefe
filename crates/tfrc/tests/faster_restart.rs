//! Faster Restart (draft-ietf-dccp-tfrc-faster-restart-06), requirement by requirement: one test
//! per row of the Faster Restart table in `docs/variants.md`, driving the public `Sender` (the
//! `faster-restart` variant on the `rfc5348` profile) with scripted feedback and checking values
//! computed here from the draft's procedures.

// The shared helpers write the RFC's formulas as index loops.
#![allow(clippy::needless_range_loop)]

#[path = "rfc5348/support.rs"]
mod support;

use std::time::Duration;

use support::*;
use tfrc::variants::{self, VariantChoice, VariantError};
use tfrc::{Profile, Sender, Time};

fn fr(decay_s: f64) -> Sender {
    let p = variants::apply(
        Profile::rfc5348(),
        &[VariantChoice::new("faster-restart").with("decay_time", decay_s)],
    )
    .unwrap();
    Sender::new(p.sender).unwrap()
}

/// §2: "recover_rate = min(8*s, max(4*s, 8760 bytes))/R" and §3.2 "this document sets
/// recover_rate to twice the initial_rate": a sender idle through many nofeedback expiries
/// stops halving once max(X_recv_set) < recover_rate (RFC 5348 §4.4 case (b)), so its X ends in
/// [recover_rate, 2·recover_rate): 80–160 kB/s at R = 100 ms, s = 1000 (RFC 5348: 40–80).
#[test]
fn s3_2_idle_rate_floor_twice_initial_rate() {
    let recover = (8.0 * S).min((4.0 * S).max(8760.0)) / 0.1;
    assert_eq!(recover, 2.0 * w_init(S) / 0.1);
    for (mut s, floor) in [(fr(120.0), recover), (rfc_tx(), w_init(S) / 0.1)] {
        // One packet, then the application is silent; feedback reported 1 MB/s, p = 0.1%.
        s.push_packets(ms(0), 1);
        s.poll_transmit(ms(0));
        for t in [100u64, 200, 300] {
            s.on_feedback(ms(t), &fb(ms(t - 100), 1e6, 0.001));
        }
        let before = s.status().nofeedback_expiries;
        while let Some(t) = s.poll_timeout().filter(|&t| t < ms(60_000)) {
            s.on_timeout(t);
        }
        assert!(s.status().nofeedback_expiries > before + 3);
        let x = s.rate();
        assert!(
            x >= floor && x < 2.0 * floor,
            "{x} not in [{floor}, {})",
            2.0 * floor
        );
    }
}

/// §3.1 "Update X_active_recv and X_fast_max": "If (the feedback packet does not indicate a loss
/// or mark, and X_recv >= X_fast_max) X_active_recv = X_fast_max = X_recv ... Else if (the
/// feedback packet DOES indicate a loss or mark, and X_recv < X_fast_max) X_active_recv =
/// X_fast_max = X_recv/2". A feedback indicates a loss when it or the previous one "reported an
/// increase in the loss event rate".
#[test]
fn s3_1_update_x_active_recv() {
    let mut s = fr(120.0);
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    let step = |s: &mut Sender, t: u64, x: f64, p: f64| {
        s.on_feedback(ms(t), &fb(ms(t - 100), x, p));
        s.status().x_fast_max
    };
    assert_eq!(step(&mut s, 100, 0.0, 0.0), 0.0);
    assert_eq!(
        step(&mut s, 200, 50_000.0, 0.0),
        50_000.0,
        "rises with X_recv"
    );
    assert_eq!(step(&mut s, 300, 80_000.0, 0.0), 80_000.0);
    assert_eq!(
        step(&mut s, 400, 70_000.0, 0.0),
        80_000.0,
        "a lower X_recv is kept out"
    );
    // p rises: a loss. X_recv < X_fast_max: halved to X_recv/2.
    assert_eq!(step(&mut s, 500, 60_000.0, 0.01), 30_000.0);
    // The next feedback still counts as indicating a loss (the previous one raised p), but
    // X_recv ≥ X_fast_max: unchanged.
    assert_eq!(step(&mut s, 600, 40_000.0, 0.01), 30_000.0);
    // And one with p flat and X_recv below X_fast_max: no loss, no rise: unchanged.
    assert_eq!(step(&mut s, 700, 20_000.0, 0.01), 30_000.0);
    assert_eq!(
        step(&mut s, 800, 45_000.0, 0.01),
        45_000.0,
        "loss-free and higher"
    );
    // RFC 5348 alone reports no X_fast_max.
    let mut plain = rfc_tx();
    plain.set_infinite_backlog(ms(0));
    plain.poll_transmit(ms(0));
    plain.on_feedback(ms(100), &fb(ms(0), 50_000.0, 0.0));
    assert_eq!(plain.status().x_fast_max, 0.0);
}

/// §3.1 "Interpolate X_fast_max": "if at most DecayTime has elapsed since the last update of
/// X_active_recv ... X_fast_max is set to X_active_recv. If 3*DecayTime or more has elapsed,
/// X_fast_max is set to zero. Linear interpolation is used between these extremes." With
/// DecayTime = 10 s and X_active_recv = 80 kB/s set at 0.3 s, a feedback that neither raises nor
/// lowers X_active_recv (X_recv = 0 below it, p flat) shows F = 1 at 10.3 s, 1/2 at 20.3 s, 1/4
/// at 25.3 s and 0 from 30.3 s.
#[test]
fn s3_1_interpolate_x_fast_max() {
    for (t_ms, f) in [
        (5_300u64, 1.0),
        (10_300, 1.0),
        (20_300, 0.5),
        (25_300, 0.25),
        (30_300, 0.0),
        (60_000, 0.0),
    ] {
        let mut s = fr(10.0);
        s.set_infinite_backlog(ms(0));
        s.poll_transmit(ms(0));
        s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.01));
        s.on_feedback(ms(200), &fb(ms(100), 50_000.0, 0.01));
        s.on_feedback(ms(300), &fb(ms(200), 80_000.0, 0.01));
        assert_eq!(s.status().x_fast_max, 80_000.0);
        s.on_feedback(ms(t_ms), &fb(ms(t_ms - 100), 0.0, 0.01));
        assert!(
            (s.status().x_fast_max - f * 80_000.0).abs() < 1e-6,
            "{t_ms} ms: {}",
            s.status().x_fast_max
        );
    }
}

/// §3.1: "If (recv_limit < X_fast_max) recv_limit = min (2*recv_limit, X_fast_max);" — "Faster
/// Restart's doubling of recv_limit allows the TFRC sender to quadruple its sending rate each
/// round-trip time after an idle period". A receive-limited sender (p tiny, so X = recv_limit)
/// whose feedback reports X_recv = the X it was allowed: ×4 per feedback up to X_fast_max =
/// 1 MB/s, then ×2; RFC 5348: ×2 throughout.
#[test]
fn s3_1_quadruple_up_to_x_fast_max() {
    for (mut s, factor) in [(fr(120.0), 4.0), (rfc_tx(), 2.0)] {
        s.set_infinite_backlog(ms(0));
        s.poll_transmit(ms(0));
        // The first two feedbacks count as a loss (p rose from 0 at the first).
        s.on_feedback(ms(100), &fb(ms(0), 0.0, 1e-9));
        s.on_feedback(ms(200), &fb(ms(100), 0.0, 1e-9));
        // A loss-free receive rate of 1 MB/s sets X_active_recv.
        s.on_feedback(ms(300), &fb(ms(200), 1e6, 1e-9));
        // Then the path reports 10 kB/s (an idle application), which empties X_recv_set of
        // the old rate after two RTTs.
        for t in [400u64, 500, 600] {
            s.on_feedback(ms(t), &fb(ms(t - 100), 10_000.0, 1e-9));
        }
        let mut x = s.rate();
        assert!(close(x, 2.0 * 10_000.0 * factor / 2.0, 1e-9), "{x}");
        let mut t = 700;
        while x < 2e6 {
            s.on_feedback(ms(t), &fb(ms(t - 100), x, 1e-9));
            let next = s.rate();
            let want = if factor == 4.0 && 4.0 * x > 1e6 {
                if 2.0 * x >= 1e6 {
                    2.0 * x
                } else {
                    1e6
                }
            } else {
                factor * x
            };
            assert!(close(next, want, 1e-9), "{t} ms: {x} → {next}, want {want}");
            x = next;
            t += 100;
        }
    }
}

/// §3.1: in a data-limited interval with a new loss event "recv_limit = max (X_recv_set)" is
/// kept: Faster Restart doubles recv_limit only in the other two branches. X_active_recv =
/// 1 MB/s; the loss halves X_recv_set's 1 MB/s and X = recv_limit = 500 kB/s, not the doubled
/// 1 MB/s.
#[test]
fn s3_1_no_doubling_after_data_limited_loss() {
    let mut s = fr(120.0);
    // One packet, then nothing: every interval is data-limited.
    s.push_packets(ms(0), 1);
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s.on_feedback(ms(200), &fb(ms(100), 1e6, 0.0));
    assert_eq!(s.status().x_fast_max, 1e6);
    s.on_feedback(ms(300), &fb(ms(200), 10_000.0, 1e-9));
    assert!(close(s.rate(), 500_000.0, 1e-12), "{}", s.rate());
}

/// The catalogue: DecayTime defaults to "two minutes"; Faster Restart "is specified only for a
/// sender using [RFC3448bis]" (RFC 5348): the `ns2` profile's rules are refused.
#[test]
fn defaults_and_profile() {
    let p = variants::apply(Profile::rfc5348(), &[VariantChoice::new("faster-restart")]).unwrap();
    assert!(matches!(
        p.sender.rate_control,
        tfrc::profile::RateControl::Rfc5348(tfrc::profile::Rfc5348Rules {
            restart: tfrc::profile::Restart::Faster { decay },
            ..
        }) if decay == Duration::from_secs(120)
    ));
    assert!(matches!(
        variants::apply(Profile::ns2(), &[VariantChoice::new("faster-restart")]),
        Err(VariantError::Requires { .. })
    ));
    let _ = Time::ZERO;
}
