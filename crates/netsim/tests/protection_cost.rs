//! Seed 000 E6 in the simulator: protection is a header flag plus a per-packet processing cost
//! (seal at the source, open at the destination), and unprotected packets crossing an untrusted
//! node are counted.

use core::time::Duration;

use netsim::agents::{CbrConfig, CbrSource, NullSink};
use netsim::ProtectionCost;
use netsim::{BuildError, LinkConfig, NetworkBuilder, RunResults, StatsConfig, Time};

fn us(x: u64) -> Duration {
    Duration::from_micros(x)
}

/// a —`bw`, 1 ms— u —`bw`, 1 ms— b with a CBR flow a → b of 1000-byte packets at `rate`;
/// `u` untrusted when asked. `protect`: the flow's packets are protected.
fn run(
    bw: u64,
    rate: f64,
    max_packets: u64,
    cost: Option<ProtectionCost>,
    protect: bool,
    untrusted: bool,
    until: f64,
) -> RunResults {
    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    let u = net.add_node("u");
    let b = net.add_node("b");
    net.add_duplex_link(a, u, LinkConfig::new(bw, Duration::from_millis(1)));
    net.add_duplex_link(u, b, LinkConfig::new(bw, Duration::from_millis(1)));
    net.set_untrusted(u, untrusted);
    if let Some(c) = cost {
        net.protection_cost(c.seal, c.open);
    }
    let cbr = CbrSource::new(CbrConfig {
        packet_size: 1000,
        rate_bps: rate,
        max_packets,
        ..CbrConfig::default()
    });
    let f = net.add_flow(a, b, Time::ZERO, None, cbr.into(), NullSink::new().into());
    net.protect_flow(f, protect);
    net.stats(StatsConfig {
        record_delays: true,
        ..StatsConfig::default()
    });
    net.build()
        .expect("valid network")
        .run(Time::from_secs_f64(until))
        .expect("accounting holds")
}

#[test]
fn default_cost_is_the_measured_aead_seal_and_open() {
    // docs/protection.md: about 4.3 µs per 1000-byte packet, seal ≈ open.
    let c = ProtectionCost::default();
    assert_eq!(c.seal + c.open, Duration::from_nanos(4300));
    assert_eq!(c.seal, c.open);
}

#[test]
fn protected_delay_is_higher_by_exactly_seal_plus_open() {
    // 100 kb/s of 1000-byte packets (one per 80 ms) on 10 Mb/s links: no queueing, so every
    // packet takes 2 · (0.8 ms + 1 ms) = 3.6 ms unprotected.
    let cost = ProtectionCost {
        seal: us(3),
        open: us(5),
    };
    let plain = run(10_000_000, 1e5, 10, Some(cost), false, false, 2.0);
    let prot = run(10_000_000, 1e5, 10, Some(cost), true, false, 2.0);
    let (p, q) = (&plain.flows[0].forward, &prot.flows[0].forward);
    assert_eq!((p.delivered_packets, q.delivered_packets), (10, 10));
    assert_eq!(p.delay.min(), Some(Duration::from_micros(3600)));
    assert_eq!(p.delay.max(), Some(Duration::from_micros(3600)));
    assert_eq!(q.delay.min(), Some(Duration::from_micros(3608)));
    assert_eq!(q.delay.max(), Some(Duration::from_micros(3608)));
    // Two events per protected packet (sealed, opened), none otherwise.
    assert_eq!(prot.events, plain.events + 20);
    // The default cost: 4.3 µs more.
    let prot = run(10_000_000, 1e5, 10, None, true, false, 2.0);
    let q = &prot.flows[0].forward;
    assert_eq!(q.delay.max(), Some(Duration::from_nanos(3_604_300)));
}

#[test]
fn unprotected_runs_are_untouched_by_the_cost() {
    let base = run(10_000_000, 1e6, 0, None, false, false, 1.0);
    let zero = ProtectionCost {
        seal: Duration::ZERO,
        open: Duration::ZERO,
    };
    for cost in [zero, ProtectionCost::default()] {
        let other = run(10_000_000, 1e6, 0, Some(cost), false, false, 1.0);
        assert_eq!(other.events, base.events);
        assert_eq!(
            other.flows[0].forward.delay.mean_secs(),
            base.flows[0].forward.delay.mean_secs()
        );
    }
    // A zero cost on protected packets costs no event either.
    let prot = run(10_000_000, 1e6, 0, Some(zero), true, false, 1.0);
    assert_eq!(prot.events, base.events);
}

#[test]
fn an_agent_seals_one_packet_at_a_time() {
    // 1000-byte packets every 8 µs (1 Gb/s CBR) sealed at 20 µs each: packet k enters the
    // network at 20 (k + 1) µs, so its delay grows by 12 µs per packet; the 10 Gb/s links
    // (0.8 µs per packet) never queue. Delay of packet k: 20 + 12 k + 2 (800 ns + 1 ms) + open.
    let cost = ProtectionCost {
        seal: us(20),
        open: us(1),
    };
    let res = run(10_000_000_000, 1e9, 5, Some(cost), true, false, 1.0);
    let d: Vec<u64> = res.flows[0]
        .forward
        .delays()
        .iter()
        .map(|(_, d)| d.as_nanos() as u64)
        .collect();
    let want: Vec<u64> = (0..5)
        .map(|k| 20_000 + 12_000 * k + 2_001_600 + 1_000)
        .collect();
    assert_eq!(d, want);
}

#[test]
fn packets_being_sealed_or_opened_are_in_flight() {
    // Seal 10 ms: the first packet (sent at 0) is still being sealed at 5 ms.
    let cost = ProtectionCost {
        seal: Duration::from_millis(10),
        open: Duration::from_millis(10),
    };
    let res = run(10_000_000, 1e5, 1, Some(cost), true, false, 0.005);
    let acct = res.flows[0].accounts[0];
    assert_eq!((acct.sent, acct.delivered, acct.in_flight), (1, 0, 1));
    // At 15 ms it has crossed (enters at 10 ms, arrives at 13.6 ms) and is being opened.
    let res = run(10_000_000, 1e5, 1, Some(cost), true, false, 0.015);
    let acct = res.flows[0].accounts[0];
    assert_eq!((acct.sent, acct.delivered, acct.in_flight), (1, 0, 1));
    // Delivered at 23.6 ms.
    let res = run(10_000_000, 1e5, 1, Some(cost), true, false, 0.024);
    assert_eq!(res.flows[0].accounts[0].delivered, 1);
    assert_eq!(
        res.flows[0].forward.delay.max(),
        Some(Duration::from_micros(23_600))
    );
}

#[test]
fn only_unprotected_packets_crossing_an_untrusted_node_are_exposed() {
    for (protect, untrusted) in [(false, true), (true, true), (false, false)] {
        let res = run(10_000_000, 1e5, 10, None, protect, untrusted, 2.0);
        let f = &res.flows[0].forward;
        assert_eq!(f.delivered_packets, 10);
        let want = if untrusted && !protect { 10 } else { 0 };
        assert_eq!(f.exposed, want, "protect {protect} untrusted {untrusted}");
    }
}

#[test]
fn protecting_an_unknown_flow_is_an_error() {
    let mut net = NetworkBuilder::new(1);
    net.add_node("a");
    net.protect_flow(3, true);
    assert_eq!(net.build().unwrap_err(), BuildError::UnknownFlow(3));
}
