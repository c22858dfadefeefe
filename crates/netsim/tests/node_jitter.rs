//! A node's random processing delay (`NetworkBuilder::set_processing_jitter`, the scenario key
//! `processing_jitter`): bounded, in order, accounted for, reproducible, and nothing at all
//! when zero. Runtime budget: well under a second in release.

use core::time::Duration;

use netsim::agents::{CbrConfig, CbrSource, NullSink};
use netsim::{BuildError, LinkConfig, NetworkBuilder, RunResults, StatsConfig, Time};

/// a —10 Mb/s, 1 ms— u —10 Mb/s, 1 ms— b, a CBR flow a → b of 1000-byte packets at `rate`
/// (at most `max_packets`), `u` delaying each packet up to `jitter` (`None`: never set).
fn run(seed: u64, rate: f64, max_packets: u64, jitter: Option<Duration>, until: f64) -> RunResults {
    let mut net = NetworkBuilder::new(seed);
    let a = net.add_node("a");
    let u = net.add_node("u");
    let b = net.add_node("b");
    net.add_duplex_link(a, u, LinkConfig::new(10_000_000, Duration::from_millis(1)));
    net.add_duplex_link(u, b, LinkConfig::new(10_000_000, Duration::from_millis(1)));
    if let Some(j) = jitter {
        net.set_processing_jitter(u, j);
    }
    let cbr = CbrSource::new(CbrConfig {
        packet_size: 1000,
        rate_bps: rate,
        max_packets,
        ..CbrConfig::default()
    });
    net.add_flow(a, b, Time::ZERO, None, cbr.into(), NullSink::new().into());
    net.stats(StatsConfig {
        record_delays: true,
        ..StatsConfig::default()
    });
    net.build()
        .expect("valid network")
        .run(Time::from_secs_f64(until))
        .expect("accounting holds")
}

/// Delays in ns and send times (arrival − delay) of the delivered packets, in arrival order.
fn delays(res: &RunResults) -> (Vec<u64>, Vec<u64>) {
    let d = res.flows[0].forward.delays();
    (
        d.iter().map(|(_, d)| d.as_nanos() as u64).collect(),
        d.iter()
            .map(|(t, d)| t.as_nanos() - d.as_nanos() as u64)
            .collect(),
    )
}

#[test]
fn each_packet_waits_less_than_the_jitter_and_none_overtakes() {
    // 8 Mb/s of 1000-byte packets on 10 Mb/s links: one packet per 1 ms, no queueing, so
    // without jitter every packet takes 2 · (0.8 ms + 1 ms) = 3.6 ms. A 5 ms jitter at u
    // spans five packets: independent delays would reorder them; the node's FIFO must not.
    const BASE: u64 = 3_600_000;
    const J: u64 = 5_000_000;
    let res = run(1, 8e6, 1000, Some(Duration::from_nanos(J)), 2.0);
    let (d, sent) = delays(&res);
    assert_eq!(d.len(), 1000);
    assert!(d.iter().all(|&x| (BASE..BASE + J).contains(&x)), "{d:?}");
    assert!(
        sent.windows(2).all(|w| w[0] < w[1]),
        "delivered out of order"
    );
    // Random, not a constant shift. A packet waits behind one drawn later, so with J five
    // packet spacings few waits come near 0 (seed 1: they span 3.06 ms of the 5).
    let (lo, hi) = (d.iter().min().unwrap(), d.iter().max().unwrap());
    assert!(hi - lo > J / 2, "spread {} ns", hi - lo);
}

#[test]
fn packets_waiting_at_a_node_are_in_flight() {
    // One packet, sent at 0, reaches u at 1.8 ms and waits there up to 1 s: at 1 ms after
    // it arrived it is still waiting for most seeds, and always accounted for.
    let mut waiting = 0;
    for seed in 1..=20 {
        let res = run(seed, 1e5, 1, Some(Duration::from_secs(1)), 0.0028);
        let a = res.flows[0].accounts[0];
        assert_eq!(a.sent, 1);
        assert_eq!(a.delivered + a.in_flight, 1, "seed {seed}");
        waiting += a.in_flight;
    }
    // P(wait < 1 ms) = 0.1% per seed.
    assert!(waiting >= 18, "{waiting} of 20 still waiting");
}

#[test]
fn the_same_seed_gives_the_same_waits_and_another_seed_others() {
    let j = Some(Duration::from_millis(2));
    let a = delays(&run(7, 1e6, 200, j, 2.0)).0;
    assert_eq!(a, delays(&run(7, 1e6, 200, j, 2.0)).0);
    assert_ne!(a, delays(&run(8, 1e6, 200, j, 2.0)).0);
}

#[test]
fn zero_jitter_changes_nothing() {
    let base = run(1, 8e6, 1000, None, 2.0);
    let zero = run(1, 8e6, 1000, Some(Duration::ZERO), 2.0);
    assert_eq!(zero.events, base.events);
    assert_eq!(delays(&zero), delays(&base));
    // With jitter: one more event per packet crossing u (at most).
    let on = run(1, 8e6, 1000, Some(Duration::from_micros(100)), 2.0);
    assert!(on.events > base.events && on.events <= base.events + 1000);
}

#[test]
fn jitter_on_an_unknown_node_is_an_error() {
    let mut net = NetworkBuilder::new(1);
    net.add_node("a");
    net.set_processing_jitter(3, Duration::from_millis(1));
    assert_eq!(net.build().unwrap_err(), BuildError::UnknownNode(3));
}
