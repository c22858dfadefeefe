//! No input sequence makes the core panic or report a negative, NaN or infinite rate, RTT,
//! interval or TTL — under both presets and under every seed variant of the catalogue (alone and
//! in combinations).

use std::time::Duration;

use proptest::prelude::*;
use tfrc::variants::{self, Variant, VariantChoice};
use tfrc::{wire, Arrival, DataHeader, Feedback, Profile, Receiver, Sender, Time};

/// The presets, each variant on each preset (with non-default parameters where they open other
/// code paths), and combinations that interact.
fn profiles() -> Vec<Profile> {
    let mut sets: Vec<Vec<VariantChoice>> = vec![vec![]];
    for v in Variant::ALL {
        if v != Variant::RtoLinkError {
            sets.push(vec![VariantChoice::new(v.name())]);
        }
    }
    let parse =
        |s: &[&str]| -> Vec<VariantChoice> { s.iter().map(|c| c.parse().unwrap()).collect() };
    sets.push(parse(&[
        "adaptive-rtt:lt_seconds=0,k=2",
        "rto-link-error:spike=1",
        "owd-classifier",
    ]));
    sets.push(parse(&[
        "rto-link-error",
        "veno",
        "adaptive-ttl:margin=0,a=0.5",
    ]));
    sets.push(parse(&[
        "owd-classifier:offset_clock=1",
        "ali-ci-include:t=0",
        "simd:beta=0.9,a=50",
    ]));
    sets.push(parse(&[
        "ali-mean-include",
        "veno-simd-090:threshold=0,min_samples=1",
    ]));
    sets.push(parse(&[
        "general-equation:alpha=0.01,gamma=0.99,k_to=0",
        "adaptive-ttl:ttl_min=1,ttl_max=1",
    ]));
    sets.push(parse(&[
        "tfrc-sp:counting=1,exclude_open=0,min_interval=0,header=0",
        "multfrc:n=0.5",
        "ali-ci-replace",
    ]));
    sets.push(parse(&[
        "tfrc-sp:nominal_segment=1,short_rtts=0.01",
        "multfrc:n=20",
        "faster-restart:decay_time=0.001",
    ]));
    let mut out = Vec::new();
    for base in [Profile::rfc5348(), Profile::ns2()] {
        for set in &sets {
            match variants::apply(base, set) {
                Ok(p) => out.push(p),
                // Faster Restart needs RFC 5348 rate control.
                Err(variants::VariantError::Requires { variant, .. })
                    if variant == "faster-restart" && base.kind == tfrc::ProfileKind::Ns2 => {}
                Err(e) => panic!("{set:?}: {e}"),
            }
        }
    }
    out
}

fn weird_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-1.0),
        Just(0.0),
        Just(1e-300),
        Just(1e300),
        0.0..1.0f64,
        0.0..1e9f64,
    ]
}

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::MAX),
        (0u64..5_000_000_000).prop_map(Duration::from_nanos),
        any::<u64>().prop_map(Duration::from_nanos),
    ]
}

#[derive(Clone, Debug)]
enum SenderOp {
    Advance(u64),
    Push(u64),
    Infinite,
    Timeout,
    Transmit,
    Feedback {
        echo_back: u64,
        elapsed: Duration,
        x_recv: f64,
        p: f64,
        hops: Option<u8>,
        link_errors: u32,
        lost_per_event: f64,
    },
    TtlExceeded(u8),
}

fn sender_op() -> impl Strategy<Value = SenderOp> {
    prop_oneof![
        (0u64..3_000_000_000).prop_map(SenderOp::Advance),
        any::<u64>().prop_map(SenderOp::Advance),
        (0u64..5).prop_map(SenderOp::Push),
        Just(SenderOp::Push(u64::MAX)),
        Just(SenderOp::Infinite),
        Just(SenderOp::Timeout),
        Just(SenderOp::Transmit),
        (
            prop_oneof![0u64..2_000_000_000, any::<u64>()],
            duration(),
            weird_f64(),
            weird_f64(),
            proptest::option::of(any::<u8>()),
            prop_oneof![Just(0u32), any::<u32>()],
            prop_oneof![Just(1.0), weird_f64()]
        )
            .prop_map(
                |(echo_back, elapsed, x_recv, p, hops, link_errors, lost_per_event)| {
                    SenderOp::Feedback {
                        echo_back,
                        elapsed,
                        x_recv,
                        p,
                        hops,
                        link_errors,
                        lost_per_event,
                    }
                },
            ),
        any::<u8>().prop_map(SenderOp::TtlExceeded),
    ]
}

fn check_sender(s: &Sender) -> Result<(), TestCaseError> {
    let st = s.status();
    for (name, v) in [("x", st.x), ("x_inst", st.x_inst)] {
        prop_assert!(v.is_finite() && v > 0.0, "{} = {}", name, v);
    }
    for (name, v) in [("x_calc", st.x_calc), ("x_recv", st.x_recv)] {
        prop_assert!(v.is_finite() && v >= 0.0, "{} = {}", name, v);
    }
    prop_assert!((0.0..=1.0).contains(&st.p), "p = {}", st.p);
    if let Some(l) = st.recv_limit {
        prop_assert!(l.is_finite() && l >= 0.0, "recv_limit = {}", l);
    }
    if let Some(r) = st.rtt {
        prop_assert!(
            r > Duration::ZERO && r.as_secs_f64().is_finite(),
            "rtt = {:?}",
            r
        );
    }
    prop_assert!(st.t_rto.as_secs_f64().is_finite());
    prop_assert!(st.ttl >= 1, "ttl = {}", st.ttl);
    prop_assert_eq!(st.ttl, s.ttl());
    if let Some(n) = st.backlog {
        prop_assert!(n.is_finite() && n >= 0.0, "backlog = {}", n);
    }
    if let tfrc::ttl::TtlPolicy::Adaptive(a) = s.config().ttl {
        prop_assert!((a.min..=a.max).contains(&st.ttl), "ttl = {}", st.ttl);
    }
    Ok(())
}

#[derive(Clone, Debug)]
struct DataOp {
    advance: u64,
    seq: u64,
    ts: u64,
    rtt: Duration,
    t_rto: Duration,
    s: u32,
    round: u32,
    urgent: bool,
    ce: bool,
    ttl: Option<u8>,
    timeout: bool,
}

fn data_op() -> impl Strategy<Value = DataOp> {
    (
        prop_oneof![0u64..50_000_000, any::<u64>()],
        prop_oneof![0u64..200, any::<u64>(), Just(u64::MAX)],
        any::<u64>(),
        duration(),
        duration(),
        any::<u32>(),
        any::<u32>(),
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(any::<u8>()),
        any::<bool>(),
    )
        .prop_map(
            |(advance, seq, ts, rtt, t_rto, s, round, urgent, ce, ttl, timeout)| DataOp {
                advance,
                seq,
                ts,
                rtt,
                t_rto,
                s,
                round,
                urgent,
                ce,
                ttl,
                timeout,
            },
        )
}

fn check_feedback(f: &Feedback) -> Result<(), TestCaseError> {
    prop_assert!(
        f.x_recv.is_finite() && f.x_recv >= 0.0,
        "x_recv = {}",
        f.x_recv
    );
    prop_assert!((0.0..=1.0).contains(&f.p), "p = {}", f.p);
    prop_assert!(
        f.lost_per_event.is_finite() && f.lost_per_event >= 1.0,
        "j = {}",
        f.lost_per_event
    );
    // Every feedback the receiver produces is encodable and decodes to itself (up to the µs
    // resolution of t_delay).
    let back = wire::decode_feedback(&wire::encode_feedback(f)).unwrap();
    prop_assert_eq!(back.p, f.p);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn sender_never_reports_bad_numbers(which in any::<prop::sample::Index>(), ops in proptest::collection::vec(sender_op(), 0..120)) {
        let all = profiles();
        let profile = all[which.index(all.len())];
        let mut s = Sender::new(profile.sender).unwrap();
        let mut now = Time::ZERO;
        let mut last_sent: Option<Time> = None;
        for op in ops {
            match op {
                SenderOp::Advance(d) => now += Duration::from_nanos(d),
                SenderOp::Push(n) => s.push_packets(now, n),
                SenderOp::Infinite => s.set_infinite_backlog(now),
                SenderOp::Timeout => s.on_timeout(now),
                SenderOp::Transmit => {
                    for _ in 0..1000 {
                        let Some(h) = s.poll_transmit(now) else { break };
                        // RFC 4828 §3: no two data packets closer than the Min Interval.
                        if let (Some(mi), Some(last)) = (profile.sender.min_interval, last_sent) {
                            prop_assert!(h.timestamp >= last + mi, "{:?} after {:?}", h.timestamp, last);
                        }
                        last_sent = Some(h.timestamp);
                    }
                }
                SenderOp::Feedback {
                    echo_back,
                    elapsed,
                    x_recv,
                    p,
                    hops,
                    link_errors,
                    lost_per_event,
                } => {
                    let fb = Feedback {
                        timestamp_echo: now - Duration::from_nanos(echo_back),
                        elapsed,
                        x_recv,
                        p,
                        highest_seq: 0,
                        hops,
                        link_errors,
                        lost_per_event,
                    };
                    s.on_feedback(now, &fb);
                }
                SenderOp::TtlExceeded(t) => s.on_ttl_exceeded(now, t),
            }
            check_sender(&s)?;
            if let Some(t) = s.poll_timeout() {
                // A due time in the past is fine (wake at once); it must not be absurd.
                prop_assert!(t <= Time::MAX);
            }
        }
    }

    #[test]
    fn receiver_never_reports_bad_numbers(which in any::<prop::sample::Index>(), ops in proptest::collection::vec(data_op(), 0..120)) {
        let all = profiles();
        let profile = all[which.index(all.len())];
        let mut r = Receiver::new(profile.receiver).unwrap();
        r.record_loss_decisions(true);
        let mut now = Time::ZERO;
        for op in ops {
            now += Duration::from_nanos(op.advance);
            if op.timeout {
                r.on_timeout(now);
            }
            let h = DataHeader {
                seq: op.seq,
                timestamp: Time::from_nanos(op.ts),
                rtt: op.rtt,
                t_rto: op.t_rto,
                segment_size: op.s,
                round: op.round,
                urgent: op.urgent,
                initial_ttl: 64,
            };
            r.on_data_with(now, &h, Arrival { wire_len: 1000, ce: op.ce, ttl: op.ttl });
            if let Some(f) = r.poll_feedback(now) {
                check_feedback(&f)?;
            }
            let st = r.status();
            prop_assert!((0.0..=1.0).contains(&st.p), "p = {}", st.p);
            prop_assert!(st.loss_intervals.iter().all(|i| i.is_finite() && *i >= 0.0));
            if let Some(i0) = st.open_interval {
                prop_assert!(i0.is_finite() && i0 >= 0.0, "I_0 = {}", i0);
            }
            if let Some(mean) = r.history().mean_interval(st.highest_seq.unwrap_or(0)) {
                prop_assert!(mean.is_finite() && mean >= 0.0, "I_mean = {}", mean);
            }
            if let Some(d) = st.avg_one_way_delay {
                prop_assert!(d.is_finite() && d >= 0.0, "avgSLD = {}", d);
            }
            // Every lost packet is counted in exactly one class (away from saturation).
            if st.lost_packets < 1 << 62 {
                prop_assert_eq!(st.congestion_losses + st.wireless_losses, st.lost_packets);
            }
            for d in r.drain_loss_decisions() {
                prop_assert!(d.lo <= d.hi);
            }
        }
    }
}

/// Closed loop with both ends fed through the wire format: the receiver's feedback and the
/// sender's headers survive encoding, so the UDP transport sees what the simulator sees.
#[test]
fn closed_loop_through_wire_encoding() {
    let profile = Profile::rfc5348();
    let mut s = Sender::new(profile.sender).unwrap();
    let mut r = Receiver::new(profile.receiver).unwrap();
    s.set_infinite_backlog(Time::ZERO);
    let mut now = Time::ZERO;
    let step = Duration::from_millis(1);
    let delay = Duration::from_millis(25);
    let mut fwd: Vec<(Time, Vec<u8>)> = Vec::new();
    let mut rev: Vec<(Time, Vec<u8>)> = Vec::new();
    for _ in 0..5000 {
        s.on_timeout(now);
        r.on_timeout(now);
        while let Some(h) = s.poll_transmit(now) {
            let mut b = wire::encode_data(&h).to_vec();
            b.extend_from_slice(&[0u8; 1000]);
            if h.seq % 50 != 49 {
                fwd.push((now + delay, b));
            }
        }
        for (_, b) in fwd.iter().filter(|(t, _)| *t <= now) {
            let (h, payload) = wire::decode_data(b).unwrap();
            assert_eq!(payload.len(), 1000);
            r.on_data(now, &h, b.len() as u32);
        }
        fwd.retain(|(t, _)| *t > now);
        if let Some(f) = r.poll_feedback(now) {
            rev.push((now + delay, wire::encode_feedback(&f).to_vec()));
        }
        for (_, b) in rev.iter().filter(|(t, _)| *t <= now) {
            s.on_feedback(now, &wire::decode_feedback(b).unwrap());
        }
        rev.retain(|(t, _)| *t > now);
        now += step;
    }
    // p = 1/50 on a 50 ms path: the equation's rate within 10% (header fields round to µs).
    let want = tfrc::equation::rfc5348_rate(1000.0, 0.05, 0.02);
    let got = s.rate();
    assert!((got / want - 1.0).abs() < 0.10, "{got} vs {want}");
}
