//! Closed-loop tests: a sender and a receiver joined by a fixed path (quinn-proto `Pair` style).

mod common;

use std::time::Duration;

use common::{secs, Loss, Pair, Path};
use tfrc::{Profile, ProfileKind, Time};

/// Run until `packets` data packets have been sent; returns the time.
fn run_packets(pair: &mut Pair, packets: usize) -> Time {
    let step = Duration::from_millis(100);
    while pair.sent.len() < packets {
        let t = pair.now + step;
        pair.run_until(t);
    }
    pair.now
}

/// RFC 5348 §3.1 / issue 2: with one loss every N packets on a fixed-delay path, the sender's
/// steady rate is within 10% of the profile's own equation at p = 1/N, R = the path RTT, and the
/// profile's t_RTO (4R for rfc5348; NS-2's TCP-tick RTO, 0.3 s for R ≤ 0.15 s, for ns2) and
/// clamp. The 10% is the bound; losses every N packets are separate loss events at
/// these rates (N packets always span more than one RTT), so p converges to exactly 1/N.
#[test]
fn closed_loop_rate_matches_profile_equation() {
    for profile in [Profile::rfc5348(), Profile::ns2()] {
        for &p in &[0.001f64, 0.01, 0.05] {
            for &r in &[0.010, 0.100] {
                let n = (1.0 / p).round() as u64;
                let path = Path {
                    delay: Duration::from_secs_f64(r / 2.0),
                    bandwidth: None,
                    loss: Loss::EveryNth(n),
                    queue_limit: None,
                };
                let mut pair = Pair::new(profile, path);
                // Warm up past slow start and until the synthetic first interval has left the
                // 8-interval window (9+ loss events), then measure over 10 more loss periods.
                let warm = (20 * n as usize).max(2000);
                let t1 = run_packets(&mut pair, warm);
                let t2 = run_packets(&mut pair, warm + 10 * n as usize);
                let measured = pair.send_rate(t1, t2);
                let st = pair.sender.status();
                let t_rto = st.t_rto.as_secs_f64();
                let want_t_rto = match profile.kind {
                    ProfileKind::Rfc5348 => 4.0 * r,
                    ProfileKind::Ns2 => 0.3,
                };
                assert!(
                    (t_rto - want_t_rto).abs() < 1e-9,
                    "{:?} p={p} R={r}: t_RTO {t_rto}",
                    profile.kind
                );
                let expected = profile.sender.equation.rate(1000.0, r, want_t_rto, p);
                let err = (measured - expected).abs() / expected;
                assert!(
                    err < 0.10,
                    "{:?} p={p} R={r}: measured {measured:.0} B/s, equation {expected:.0} B/s",
                    profile.kind
                );
                // The receiver's p is the loss event rate 1/N (within 5%, see loss_rate.rs).
                let rp = pair.receiver.loss_event_rate();
                assert!((rp * n as f64 - 1.0).abs() < 0.05, "p = {rp}");
                assert!(!st.slow_start);
            }
        }
    }
}

/// NS-2.35 reference: one Agent/TFRC → Agent/TFRCSink flow, default parameters, over a
/// 100 Mb/s duplex link with `ErrorModel/Periodic` (`unit pkt`, `offset_` 0) dropping every
/// `period`-th data packet. Numbers from `tests/ns2/one_flow.tcl` (`ns one_flow.tcl <period> 60
/// <delay_ms>`; Debian ns2 2.35): (period, delay ms, data packets sent in 60 s, data packets
/// sent in [20 s, 60 s)).
const NS2_REFERENCE: [(u64, u64, usize, usize); 8] = [
    (20, 5, 6707, 4664),
    (20, 50, 2309, 1605),
    (20, 150, 819, 588),
    (100, 5, 41562, 29061),
    (100, 50, 6730, 4585),
    (100, 150, 2314, 1569),
    (1000, 5, 207538, 143966),
    (1000, 50, 27230, 15375),
];

/// The ns2 profile against NS-2.35 itself on the same path (see [`NS2_REFERENCE`]).
///
/// Tolerances: steady state ([20 s, 60 s)) within 1% — the profile reproduces NS-2's rules, so
/// only rounding separates them (observed ≤ 0.1%). Whole run within 5%, the simulator's
/// validation bound: in slow start, feedback arrivals coincide exactly with send-timer expiries
/// and with "one RTT since the last change" thresholds, and NS-2 breaks such ties by
/// floating-point noise in its double-valued clock while this core's integer clock breaks them
/// the same way every time (observed up to 3.5% at 150 ms).
#[test]
fn ns2_profile_matches_ns2_35() {
    for &(period, delay_ms, total, steady) in &NS2_REFERENCE {
        let path = Path {
            delay: Duration::from_millis(delay_ms),
            bandwidth: Some(100e6),
            loss: Loss::Periodic { period, offset: 0 },
            queue_limit: None,
        };
        let mut pair = Pair::new(Profile::ns2(), path);
        pair.run_until(secs(60.0));
        let ours_total = pair.sent.iter().filter(|(t, _)| *t < secs(60.0)).count();
        let ours_steady = pair
            .sent
            .iter()
            .filter(|(t, _)| *t >= secs(20.0) && *t < secs(60.0))
            .count();
        let e_total = (ours_total as f64 - total as f64).abs() / total as f64;
        let e_steady = (ours_steady as f64 - steady as f64).abs() / steady as f64;
        assert!(
            e_steady < 0.01,
            "period {period} delay {delay_ms} ms: [20,60) {ours_steady} vs NS-2 {steady}"
        );
        assert!(
            e_total < 0.05,
            "period {period} delay {delay_ms} ms: total {ours_total} vs NS-2 {total}"
        );
    }
}

/// NS-2.35 reference trajectory: the first packets of `ns one_flow.tcl 100 20 50` (seq 0 is
/// dropped by the error model, so the first feedback answers seq 1). Send times in µs, as the
/// trace prints them (rounded to 1 µs). They match exactly up to the first exact tie.
#[test]
fn ns2_profile_start_matches_ns2_35_trace() {
    let want_us: [u64; 7] = [
        0, 3_333_333, 3_433_419, 3_458_441, 3_483_462, 3_508_483, 3_533_505,
    ];
    let path = Path {
        delay: Duration::from_millis(50),
        bandwidth: Some(100e6),
        loss: Loss::Periodic {
            period: 100,
            offset: 0,
        },
        queue_limit: None,
    };
    let mut pair = Pair::new(Profile::ns2(), path);
    pair.run_until(secs(3.6));
    for (i, &w) in want_us.iter().enumerate() {
        let (t, h) = pair.sent[i];
        assert_eq!(h.seq, i as u64);
        let us = (t.as_nanos() + 500) / 1000;
        assert_eq!(us, w, "seq {i}");
    }
}

/// NS-2.35 reference with congestion: one Agent/TFRC flow (defaults) through a DropTail
/// bottleneck, from `tests/ns2/bottleneck.tcl` (`ns bottleneck.tcl <Mb/s> <delay ms> <limit> 100`):
/// (bandwidth Mb/s, one-way delay ms, queue limit, data packets sent in 100 s, sent in
/// [20 s, 100 s), data packets dropped by the queue).
const NS2_BOTTLENECK: [(f64, u64, usize, usize, usize, u64); 5] = [
    (1.5, 20, 10, 18253, 14611, 104),
    (1.5, 20, 50, 18202, 14562, 11),
    (10.0, 50, 50, 115924, 96872, 143),
    (5.0, 100, 20, 54623, 46212, 84),
    (2.0, 10, 5, 24477, 19606, 291),
];

/// The ns2 profile against NS-2.35 through a DropTail bottleneck, where queueing varies the
/// RTT (exercising the sqrt(R) damping and the X_recv limits) and losses come from the queue.
///
/// Tolerances: packets sent within 1% over [20 s, 100 s) and 2% over the whole run (observed
/// ≤ 0.2% and ≤ 0.5%); queue drops within 10% where NS-2 drops at least 80 (observed ≤ 3%) —
/// with fewer drops, one slow-start overshoot decides the count (11 vs 18 at 1.5 Mb/s, limit 50).
#[test]
fn ns2_profile_matches_ns2_35_bottleneck() {
    for &(mbps, delay_ms, limit, total, steady, drops) in &NS2_BOTTLENECK {
        let path = Path {
            delay: Duration::from_millis(delay_ms),
            bandwidth: Some(mbps * 1e6),
            loss: Loss::None,
            queue_limit: Some(limit),
        };
        let mut pair = Pair::new(Profile::ns2(), path);
        pair.run_until(secs(100.0));
        let n = |lo: f64, hi: f64| {
            pair.sent
                .iter()
                .filter(|(t, _)| *t >= secs(lo) && *t < secs(hi))
                .count() as f64
        };
        let (ours_total, ours_steady) = (n(0.0, 100.0), n(20.0, 100.0));
        let what = format!("{mbps} Mb/s, {delay_ms} ms, limit {limit}");
        assert!(
            (ours_steady / steady as f64 - 1.0).abs() < 0.01,
            "{what}: [20,100) {ours_steady} vs NS-2 {steady}"
        );
        assert!(
            (ours_total / total as f64 - 1.0).abs() < 0.02,
            "{what}: total {ours_total} vs NS-2 {total}"
        );
        if drops >= 80 {
            let e = (pair.queue_drops as f64 / drops as f64 - 1.0).abs();
            assert!(
                e < 0.10,
                "{what}: drops {} vs NS-2 {drops}",
                pair.queue_drops
            );
        }
    }
}

/// NS-2.35 reference for a data-limited sender: Agent/TFRC with `SndrType_ 1` driven by an
/// Application/Traffic/CBR of 1000-byte packets, through a DropTail link, from
/// `tests/ns2/cbr.tcl` (`ns cbr.tcl <kb/s> <Mb/s> <delay ms> <limit> 60`): (CBR kb/s, link Mb/s,
/// delay ms, queue limit, data packets sent before 60 s, sent in [20 s, 60 s), queue drops).
const NS2_CBR: [(f64, f64, u64, usize, usize, usize, u64); 6] = [
    (200.0, 1.5, 20, 10, 1500, 1000, 0),
    (1000.0, 1.5, 20, 10, 7500, 5000, 0),
    (1400.0, 1.5, 20, 10, 10500, 7000, 9),
    (3000.0, 1.5, 20, 10, 10947, 7305, 66),
    (800.0, 1.0, 50, 20, 6000, 4000, 6),
    (5000.0, 10.0, 30, 30, 37500, 25000, 67),
];

/// The ns2 profile driven by a CBR application (`push_packets`) against NS-2.35: exercises
/// `datalimited_`, the immediate send of new data after a data-limited tick, and `idleFix_`.
///
/// Tolerances: packets sent within 0.5% over the run and over [20 s, 60 s) (observed: equal in
/// [20, 60), ≤ 0.12% overall; the 200 and 1000 kb/s runs match NS-2's trace to the µs). Queue
/// drops within 15% where NS-2 drops at least 50: which packets a full queue drops depends on
/// how timer/arrival ties resolve (NS-2 resolves them by floating-point noise), observed 9%.
#[test]
fn ns2_profile_matches_ns2_35_cbr() {
    for &(kbps, mbps, delay_ms, limit, total, steady, drops) in &NS2_CBR {
        let path = Path {
            delay: Duration::from_millis(delay_ms),
            bandwidth: Some(mbps * 1e6),
            loss: Loss::None,
            queue_limit: Some(limit),
        };
        let interval = Duration::from_secs_f64(8000.0 / (kbps * 1e3));
        let mut pair = Pair::cbr(Profile::ns2(), path, interval);
        pair.run_until(secs(60.0));
        let n = |lo: f64, hi: f64| {
            pair.sent
                .iter()
                .filter(|(t, _)| *t >= secs(lo) && *t < secs(hi))
                .count() as f64
        };
        let what = format!("CBR {kbps} kb/s over {mbps} Mb/s, {delay_ms} ms, limit {limit}");
        let (ours_total, ours_steady) = (n(0.0, 60.0), n(20.0, 60.0));
        assert!(
            (ours_total / total as f64 - 1.0).abs() < 0.005,
            "{what}: total {ours_total} vs NS-2 {total}"
        );
        assert!(
            (ours_steady / steady as f64 - 1.0).abs() < 0.005,
            "{what}: [20,60) {ours_steady} vs NS-2 {steady}"
        );
        if drops >= 50 {
            let e = (pair.queue_drops as f64 / drops as f64 - 1.0).abs();
            assert!(
                e < 0.15,
                "{what}: drops {} vs NS-2 {drops}",
                pair.queue_drops
            );
        }
    }
}
