//! Links whose bandwidth, delay, queue limit and loss rate change during a run.
//!
//! NS-2 sets `bandwidth_` and `delay_` of a link's delay element and `limit_` of its queue at
//! run time; a packet's transmission and arrival times are fixed when its transmission starts,
//! so packets on the wire keep the parameters they were sent with. The same run in netsim and
//! in NS-2.35 (validation/ns2/link_changes.tcl) must give the same `trace-all` output.

mod common;

use core::time::Duration;

use netsim::agents::{CbrConfig, CbrSource, NullSink};
use netsim::trace::TraceFormat;
use netsim::{BuildError, DropCause, LinkConfig, LinkSettings, NetworkBuilder, StatsConfig, Time};

fn at(secs: f64) -> Time {
    Time::from_secs_f64(secs)
}

/// One 1000-byte CBR flow at `rate_bps` over a 1 Mb/s link of `delay_ms`; returns the builder,
/// the a → b link and the flow.
fn one_link(rate_bps: f64, delay_ms: u64) -> (NetworkBuilder, u32, u32) {
    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    let b = net.add_node("b");
    let (ab, _) = net.add_duplex_link(
        a,
        b,
        LinkConfig::new(1_000_000, Duration::from_millis(delay_ms)),
    );
    let cbr = CbrSource::new(CbrConfig {
        packet_size: 1000,
        rate_bps,
        ..CbrConfig::default()
    });
    let f = net.add_flow(a, b, Time::ZERO, None, cbr.into(), NullSink::new().into());
    (net, ab, f)
}

/// The run of validation/ns2/link_changes.tcl.
fn ns2_script_run() -> NetworkBuilder {
    let (mut net, ab, _) = one_link(400_000.0, 100);
    let set = |net: &mut NetworkBuilder, t: f64, s: LinkSettings| net.set_link_at(at(t), ab, s);
    set(
        &mut net,
        0.2,
        LinkSettings {
            delay: Some(Duration::from_millis(1)),
            ..LinkSettings::default()
        },
    );
    set(
        &mut net,
        0.3,
        LinkSettings {
            bandwidth_bps: Some(100_000),
            ..LinkSettings::default()
        },
    );
    set(
        &mut net,
        0.5,
        LinkSettings {
            queue_limit: Some(5),
            ..LinkSettings::default()
        },
    );
    set(
        &mut net,
        0.9,
        LinkSettings {
            bandwidth_bps: Some(2_000_000),
            delay: Some(Duration::from_millis(50)),
            ..LinkSettings::default()
        },
    );
    net
}

#[test]
fn trace_matches_ns2_byte_for_byte() {
    common::require_ns("link_changes::trace_matches_ns2_byte_for_byte");
    let theirs = common::ns_output("link_changes.tcl", &[]);
    let buf = common::SharedBuf::default();
    let mut net = ns2_script_run();
    net.trace(Box::new(buf.clone()), TraceFormat::Ns2);
    let mut sim = net.build().expect("valid");
    sim.run(at(1.5)).expect("accounting holds");
    let mine = buf.text();
    // The script's run has overtaking packets and queue drops: a trace without them would not
    // test the changes.
    assert!(theirs.lines().filter(|l| l.starts_with('d')).count() > 10);
    for (i, (a, b)) in mine.lines().zip(theirs.lines()).enumerate() {
        assert_eq!(a, b, "first difference at line {}", i + 1);
    }
    assert_eq!(mine.lines().count(), theirs.lines().count(), "length");
}

#[test]
fn a_shorter_delay_lets_later_packets_overtake() {
    let mut net = ns2_script_run();
    net.stats(StatsConfig {
        record_delays: true,
        ..StatsConfig::default()
    });
    let mut sim = net.build().expect("valid");
    let res = sim.run(at(0.3)).expect("accounting holds");
    let delays = res.flows[0].forward.delays();
    // Packets 0–10 were sent up to 0.2 s with 100 ms of delay (108 ms each; NS-2's CBR timer
    // for packet 10 runs before the change, as its double time is a hair below 0.2 s); 11–14,
    // sent after, take 9 ms and arrive among 6–9. Packet 10 arrives at 0.308 s, after the end.
    let arrivals: Vec<u64> = delays.iter().map(|(t, _)| t.as_nanos()).collect();
    assert!(
        arrivals.windows(2).all(|w| w[0] <= w[1]),
        "in arrival order"
    );
    let d: Vec<u64> = delays.iter().map(|(_, d)| d.as_nanos() as u64).collect();
    assert_eq!(d.iter().filter(|&&x| x == 108_000_000).count(), 10, "{d:?}");
    assert_eq!(d.iter().filter(|&&x| x == 9_000_000).count(), 4, "{d:?}");
    // The eighth arrival is packet 11, not packet 7.
    assert_eq!(d[6], 108_000_000);
    assert_eq!(d[7], 9_000_000);
}

#[test]
fn the_packet_on_the_wire_keeps_its_bandwidth() {
    // One packet every 100 ms; it takes 8 ms at 1 Mb/s. The bandwidth drops to 0.1 Mb/s 4 ms
    // into the second packet's transmission: that packet still takes 8 ms, the third 80 ms.
    let (mut net, ab, _) = one_link(80_000.0, 10);
    net.set_link_at(
        at(0.104),
        ab,
        LinkSettings {
            bandwidth_bps: Some(100_000),
            ..LinkSettings::default()
        },
    );
    net.stats(StatsConfig {
        record_delays: true,
        ..StatsConfig::default()
    });
    let mut sim = net.build().expect("valid");
    let res = sim.run(at(0.35)).expect("accounting holds");
    let d: Vec<u64> = res.flows[0]
        .forward
        .delays()
        .iter()
        .map(|(_, d)| d.as_nanos() as u64)
        .collect();
    assert_eq!(d, vec![18_000_000, 18_000_000, 90_000_000]);
}

#[test]
fn loss_rate_changes_apply_from_then_on() {
    // A link without a loss model loses every packet reaching its far end in [1, 2) s.
    let (mut net, ab, f) = one_link(800_000.0, 1);
    for (t, p) in [(1.0, 1.0), (2.0, 0.0)] {
        net.set_link_at(
            at(t),
            ab,
            LinkSettings {
                loss_rate: Some(p),
                ..LinkSettings::default()
            },
        );
    }
    let mut sim = net.build().expect("valid");
    let res = sim.run(at(3.0)).expect("accounting holds");
    // 100 packets a second (800 kb/s of 1000-byte packets), sent at k·10 ms and reaching the
    // loss point 9 ms later: k = 100 … 199 are lost, and nothing else.
    let acct = &res.flows[f as usize].accounts[0];
    assert_eq!(acct.dropped[DropCause::Link.index()], 100, "{acct:?}");
    assert_eq!(acct.dropped_total(), 100, "{acct:?}");
}

#[test]
fn bad_settings_are_build_errors() {
    let (mut net, ab, _) = one_link(100_000.0, 1);
    net.set_link_at(
        at(1.0),
        ab,
        LinkSettings {
            bandwidth_bps: Some(0),
            ..LinkSettings::default()
        },
    );
    assert_eq!(net.build().err(), Some(BuildError::ZeroBandwidth(ab)));
    let (mut net, ab, _) = one_link(100_000.0, 1);
    net.set_link_at(
        at(1.0),
        ab,
        LinkSettings {
            loss_rate: Some(1.5),
            ..LinkSettings::default()
        },
    );
    assert_eq!(net.build().err(), Some(BuildError::BadProbability(ab)));
    let (mut net, _, _) = one_link(100_000.0, 1);
    net.set_link_at(at(1.0), 99, LinkSettings::default());
    assert_eq!(net.build().err(), Some(BuildError::UnknownLink(99)));
}
