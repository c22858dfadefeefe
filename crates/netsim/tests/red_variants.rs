//! Seed 001's RED variants (Q1 Shewhart–EWMA average, Q2 auto-tuned thresholds, Q3 adaptive
//! max_p) and the Adaptive RED baseline: property tests over arbitrary configurations and
//! arrival/departure/idle sequences, and one simulation per variant showing its mechanism act.

use core::time::Duration;

use netsim::agents::{CbrConfig, CbrSource, NullSink};
use netsim::queue::{
    AdaptiveQ3, AdaptiveRed, DropTailConfig, QueueConfig, Queued, Red, RedAverage, RedConfig,
    RedMaxP, RedThresholds, Slot,
};
use netsim::testing::packet;
use netsim::{LinkConfig, NetworkBuilder, Simulator, Time};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Debug)]
enum Op {
    /// A packet of this size arrives after this many microseconds.
    Arrive(u64, u32),
    /// The link takes the head packet after this many microseconds (an empty queue goes idle).
    Depart(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..20_000, 1u32..3000).prop_map(|(dt, s)| Op::Arrive(dt, s)),
        2 => (0u64..2_000_000).prop_map(Op::Depart),
    ]
}

fn average() -> impl Strategy<Value = RedAverage> {
    prop_oneof![Just(RedAverage::Ewma), Just(RedAverage::ShewhartEwma)]
}

fn thresholds() -> impl Strategy<Value = RedThresholds> {
    prop_oneof![
        Just(RedThresholds::Fixed),
        (0.0f64..5.0).prop_map(|alpha_th| RedThresholds::AutoTuned { alpha_th }),
    ]
}

fn max_p() -> impl Strategy<Value = RedMaxP> {
    let params = (
        0.001f64..0.5,
        0.05f64..0.99,
        0.0f64..2.0,
        0.01f64..1.0,
        0.0f64..0.2,
    );
    prop_oneof![
        Just(RedMaxP::Fixed),
        params
            .clone()
            .prop_map(|(alpha, beta, interval, top, bottom)| {
                RedMaxP::AdaptiveRed(AdaptiveRed {
                    alpha,
                    beta,
                    interval,
                    top,
                    bottom,
                })
            }),
        params.prop_map(|(alpha, beta, interval, top, bottom)| {
            RedMaxP::Q3(AdaptiveQ3 {
                alpha,
                beta,
                interval,
                top,
                bottom,
            })
        }),
    ]
}

prop_compose! {
    fn config()(
        limit in 1u32..200,
        qib in any::<bool>(),
        bytes in any::<bool>(),
        gentle in any::<bool>(),
        wait in any::<bool>(),
        thresh in prop_oneof![Just(0.0), 0.05f64..60.0],
        spread in prop_oneof![Just(0.0), 1.0f64..5.0],
        q_weight in prop_oneof![Just(-1.0), Just(0.0), Just(-2.0), 1e-6f64..=1.0],
        linterm in 1.0f64..100.0,
        mean_pktsize in 1u32..2000,
        average in average(),
        thresholds in thresholds(),
        max_p in max_p(),
    ) -> RedConfig {
        RedConfig {
            limit,
            queue_in_bytes: qib,
            bytes,
            gentle,
            wait,
            thresh,
            // maxthresh 0 (auto) or at least thresh, as the scenario validator requires.
            maxthresh: thresh * spread,
            q_weight,
            linterm,
            mean_pktsize,
            average,
            thresholds,
            max_p,
            ..RedConfig::default()
        }
    }
}

fn check<P: Queued>(r: &Red<P>, cfg: &RedConfig, at: usize) -> Result<(), TestCaseError> {
    let avg = r.average();
    prop_assert!(avg.is_finite() && avg >= 0.0, "op {at}: average {avg}");
    if cfg.average == RedAverage::ShewhartEwma {
        prop_assert!(
            avg <= r.limit_units(),
            "op {at}: average {avg} above the limit"
        );
    }
    let (lo, hi) = r.thresholds();
    prop_assert!(lo.is_finite() && hi.is_finite(), "op {at}: {lo} {hi}");
    prop_assert!(lo > 0.0 && lo <= hi, "op {at}: thresholds {lo} {hi}");
    if r.counters().threshold_moves > 0 {
        // Q2's clamps: one packet ≤ min_th ≤ max_th ≤ limit.
        let unit = if cfg.queue_in_bytes {
            f64::from(cfg.mean_pktsize)
        } else {
            1.0
        };
        let lim = r.limit_units();
        prop_assert!(lo >= unit.min(lim) && hi <= lim, "op {at}: {lo} {hi} {lim}");
    }
    let p = r.max_p();
    prop_assert!(p.is_finite() && p > 0.0, "op {at}: max_p {p}");
    match &cfg.max_p {
        RedMaxP::Fixed => prop_assert_eq!(p, 1.0 / cfg.linterm),
        RedMaxP::Q3(_) => prop_assert!(p <= 1.0, "op {at}: max_p {p}"),
        // NS-2's rule: increase only while below top, by at most alpha.
        RedMaxP::AdaptiveRed(a) => prop_assert!(
            p <= (1.0 / cfg.linterm).max(a.top + a.alpha),
            "op {at}: max_p {p}"
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn no_sequence_makes_average_thresholds_or_max_p_invalid(
        cfg in config(),
        bandwidth in prop_oneof![Just(0.0), 1e3f64..1e11],
        delay in 0.0f64..2.0,
        ops in proptest::collection::vec(op(), 0..400),
        seed in any::<u64>(),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut r = Red::new(cfg.clone(), bandwidth, delay);
        check(&r, &cfg, 0)?;
        let mut now = 0u64;
        for (i, o) in ops.iter().enumerate() {
            match *o {
                Op::Arrive(dt, size) => {
                    now += dt * 1000;
                    let before = r.len();
                    let dropped = r.enqueue(packet(0, size), Time::from_nanos(now), &mut rng);
                    prop_assert_eq!(r.len(), before + usize::from(dropped.is_none()));
                }
                Op::Depart(dt) => {
                    now += dt * 1000;
                    r.dequeue(Time::from_nanos(now));
                }
            }
            check(&r, &cfg, i + 1)?;
        }
    }
}

// ---- simulations --------------------------------------------------------------------------

/// n0 —10 Mb/s, 1 ms— n1 —1 Mb/s, 10 ms, `red`— n2, with CBR flows (packet size, bit/s) from
/// n0 to n2. Returns the simulator and the bottleneck link id.
fn bottleneck(red: RedConfig, flows: &[(u32, f64)], seed: u64) -> (Simulator, u32) {
    let mut net = NetworkBuilder::new(seed);
    let n0 = net.add_node("n0");
    let n1 = net.add_node("n1");
    let n2 = net.add_node("n2");
    let access = LinkConfig::new(10_000_000, Duration::from_millis(1)).with_queue(
        QueueConfig::DropTail(DropTailConfig {
            limit: 1000,
            ..DropTailConfig::default()
        }),
    );
    net.add_duplex_link(n0, n1, access);
    let (b, _) = net.add_duplex_link(
        n1,
        n2,
        LinkConfig::new(1_000_000, Duration::from_millis(10)).with_queue(QueueConfig::Red(red)),
    );
    for &(size, rate_bps) in flows {
        let cbr = CbrSource::new(CbrConfig {
            packet_size: size,
            rate_bps,
            random: true,
            ..CbrConfig::default()
        });
        net.add_flow(n0, n2, Time::ZERO, None, cbr.into(), NullSink::new().into());
    }
    (net.build().expect("valid network"), b)
}

/// Run in steps of `step`, calling `each` with the bottleneck's RED state after every step.
fn sample(
    sim: &mut Simulator,
    link: u32,
    step: f64,
    until: f64,
    mut each: impl FnMut(f64, &Red<Slot>),
) {
    let mut t = step;
    while t <= until + 1e-9 {
        sim.run(Time::from_secs_f64(t)).expect("accounting holds");
        each(t, sim.red(link).expect("RED queue"));
        t += step;
    }
}

#[test]
fn q1_average_follows_the_queue_where_the_ewma_lags() {
    // 1000-byte CBR at 1.2 Mb/s into 1 Mb/s: the queue builds at 25 kB/s until RED holds it.
    // Byte mode: the queue, average and limit (50 · 500 B) count bytes.
    let flows = [(1000, 1.2e6)];
    let run = |average: RedAverage| {
        let (mut sim, b) = bottleneck(
            RedConfig {
                average,
                ..RedConfig::default()
            },
            &flows,
            1,
        );
        let mut worst = 0.0f64;
        let mut at_half_second = (0.0, 0.0);
        sample(&mut sim, b, 0.01, 20.0, |t, r| {
            let q = r.byte_len() as f64;
            worst = worst.max((r.average() - q).abs());
            if (t - 0.5).abs() < 1e-9 {
                at_half_second = (r.average(), q);
            }
        });
        (worst, at_half_second)
    };
    let (q1_worst, _) = run(RedAverage::ShewhartEwma);
    let (_, (ewma_avg, ewma_q)) = run(RedAverage::Ewma);
    eprintln!("Q1 worst |avg − q| {q1_worst} B; EWMA at 0.5 s: avg {ewma_avg} B, queue {ewma_q} B");
    // avg − q is an EWMA of the queue increments (each at most one 1000-byte packet per
    // arrival); the queue a sample sees differs from the last arrival's by that arrival
    // (1000 B) and at most one departure since (8 ms per packet, arrivals every 6.7 ms on
    // average): within 3000 B.
    assert!(
        q1_worst <= 3000.0,
        "Shewhart–EWMA strays {q1_worst} B from the queue"
    );
    // NS-2's EWMA (w ≈ 0.0027 per arrival, time constant ≈ 2.5 s at 150 arrivals/s) is still
    // far below the queue after 0.5 s of growth (about 12 kB).
    assert!(
        ewma_q - ewma_avg > 5000.0,
        "EWMA {ewma_avg} B vs queue {ewma_q} B at 0.5 s"
    );
}

#[test]
fn q2_thresholds_move_only_when_the_gap_is_under_a_packet() {
    // A single arrival moves the average by w·(q − avg) + (q_i − q_{i−1}); the second term is at
    // most the previous packet (1000 B = 2 units). With NS-2's automatic thresholds (5 / 15
    // units of 500 B at 1 Mb/s), eq. 5 needs a rise above 10 units: it can never fire.
    let flows = [(1000, 1.2e6)];
    let q2 = RedThresholds::AutoTuned { alpha_th: 1.0 };
    let (mut sim, b) = bottleneck(
        RedConfig {
            average: RedAverage::ShewhartEwma,
            thresholds: q2.clone(),
            ..RedConfig::default()
        },
        &flows,
        2,
    );
    sim.run(Time::from_secs_f64(20.0)).unwrap();
    let r = sim.red(b).unwrap();
    assert_eq!(r.counters().threshold_moves, 0);
    assert_eq!(r.thresholds(), (2500.0, 7500.0));
    // With a gap of 0.5 units (thresholds 0.25 / 0.75, packet mode) the first arrival that
    // finds one more packet waiting than the previous one fires eq. 5: min_th = 0.25 + 1 + 1.
    let (mut sim, b) = bottleneck(
        RedConfig {
            average: RedAverage::ShewhartEwma,
            thresholds: q2,
            queue_in_bytes: false,
            bytes: false,
            thresh: 0.25,
            maxthresh: 0.75,
            ..RedConfig::default()
        },
        &flows,
        2,
    );
    let mut trajectory = Vec::new();
    sample(&mut sim, b, 0.1, 20.0, |_, r| {
        trajectory.push(r.thresholds())
    });
    let moves = sim.red(b).unwrap().counters().threshold_moves;
    eprintln!("Q2 moves {moves}, thresholds {:?}", trajectory.last());
    assert!(moves >= 1);
    assert_eq!(trajectory.first(), Some(&(2.25, 6.75)));
    // Thresholds only ever ratchet upwards here, and stay within the limit (50 packets).
    for w in trajectory.windows(2) {
        assert!(w[1].0 >= w[0].0 && w[1].1 <= 50.0, "{w:?}");
        assert_eq!(w[1].1, (3.0 * w[1].0).min(50.0));
    }
}

#[test]
fn q3_and_adaptive_red_raise_max_p_under_persistent_overload() {
    // Two CBR flows, 1.6 Mb/s in total, into 1 Mb/s: dropping the excess 37.5 % needs an
    // average above the target band for any max_p up to 0.5, so both AIMD rules push max_p up
    // by 0.01 per interval until the ceiling.
    let flows = [(1000, 1.0e6), (500, 0.6e6)];
    for (name, max_p) in [
        ("q3", RedMaxP::Q3(AdaptiveQ3::default())),
        ("ared", RedMaxP::AdaptiveRed(AdaptiveRed::default())),
    ] {
        let (mut sim, b) = bottleneck(
            RedConfig {
                max_p,
                ..RedConfig::default()
            },
            &flows,
            3,
        );
        let mut trajectory = Vec::new();
        sample(&mut sim, b, 0.5, 30.0, |_, r| trajectory.push(r.max_p()));
        let c = sim.red(b).unwrap().counters();
        eprintln!("{name}: {c:?}\n  max_p every 0.5 s: {trajectory:.3?}");
        assert!(c.max_p_increases >= 5, "{name}: {c:?}");
        // The first increase needs 0.5 s (Q3: at or after, Adaptive RED: strictly after).
        assert_eq!(trajectory[0], 0.1, "{name}");
        let peak = trajectory.iter().cloned().fold(0.0, f64::max);
        assert!(peak >= 0.15, "{name}: {trajectory:?}");
        // At most one step per interval, each at most 0.01.
        for w in trajectory.windows(2) {
            assert!(w[1] - w[0] <= 0.01 + 1e-12, "{name}: {w:?}");
        }
    }
}
