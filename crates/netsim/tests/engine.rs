//! Engine rules: TTL and time-exceeded notices, link failures and rerouting, wireless ARQ in a
//! run, determinism and per-component random streams, CSV traces, untrusted nodes, build
//! errors, per-bin statistics.

mod common;

use core::time::Duration;

use netsim::agents::{CbrConfig, CbrSource, NullSink};
use netsim::trace::TraceFormat;
use netsim::{
    BuildError, DropCause, LinkConfig, LossConfig, NetworkBuilder, PacketKind, RunResults,
    StatsConfig, Time, WirelessConfig,
};

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn secs(x: f64) -> Time {
    Time::from_secs_f64(x)
}

fn cbr(rate_bps: f64, size: u32) -> CbrSource {
    CbrSource::new(CbrConfig {
        rate_bps,
        packet_size: size,
        ..CbrConfig::default()
    })
}

/// A chain n0 → n1 → … → n{hops}, 10 Mb/s, 1 ms per link.
fn chain(net: &mut NetworkBuilder, hops: usize) -> Vec<u32> {
    let n: Vec<u32> = (0..=hops).map(|i| net.add_node(&format!("n{i}"))).collect();
    for w in n.windows(2) {
        net.add_duplex_link(w[0], w[1], LinkConfig::new(10_000_000, ms(1)));
    }
    n
}

/// A CBR flow from `from` to `to` into a null sink, from time zero to the end of the run.
fn cbr_flow(net: &mut NetworkBuilder, from: u32, to: u32, src: CbrSource) {
    net.add_flow(
        from,
        to,
        Time::ZERO,
        None,
        src.into(),
        NullSink::new().into(),
    );
}

/// One 100 kb/s CBR flow across a 4-hop chain, sent with IP TTL `ttl`, for 1 s.
fn ttl_run(ttl: u8, notices: bool) -> RunResults {
    let mut net = NetworkBuilder::new(1);
    let n = chain(&mut net, 4);
    net.ttl_notices(notices);
    let src = CbrSource::new(CbrConfig {
        rate_bps: 100_000.0,
        ttl,
        ..CbrConfig::default()
    });
    cbr_flow(&mut net, n[0], n[4], src);
    net.build().unwrap().run(secs(1.0)).unwrap()
}

#[test]
fn ttl_expiry_drops_and_notifies_the_source() {
    for notices in [false, true] {
        // TTL 3: NS-2's TTLChecker decrements at the end of every link and drops at 0, so the
        // packet dies arriving at n3 (after three links) and never reaches n4.
        let res = ttl_run(3, notices);
        let f = &res.flows[0];
        assert_eq!(f.forward.delivered_packets, 0);
        assert!(f.forward.sent_packets > 50);
        let ttl_drops = f.forward.dropped(DropCause::Ttl);
        // Packets sent in the last 3.05 ms (3 hops) are still on the way.
        assert_eq!(ttl_drops, f.forward.sent_packets - f.accounts[0].in_flight);
        // The drop happens on link n2 → n3 (id 4: links are created as duplex pairs).
        assert_eq!(res.links[4].stats.dropped(DropCause::Ttl), ttl_drops);
        if notices {
            // One notice per expiry, sent from n3 back to n0 (3 hops, 56 bytes).
            assert_eq!(f.reverse.sent_packets, ttl_drops);
            assert_eq!(
                f.reverse.delivered_packets + f.accounts[1].in_flight,
                ttl_drops
            );
            assert_eq!(f.reverse.delivered_bytes, 56 * f.reverse.delivered_packets);
        } else {
            assert_eq!(f.reverse.sent_packets, 0);
        }
    }
    // TTL 4 is enough for 4 hops.
    let res = ttl_run(5, false);
    assert_eq!(res.flows[0].forward.dropped(DropCause::Ttl), 0);
    assert!(res.flows[0].forward.delivered_packets > 50);
}

#[test]
fn link_failure_drops_in_flight_packets_and_reroutes() {
    // Diamond: a → b → d (short) and a → c → e → d (long); the a → b link fails in [1, 2) s.
    let mut net = NetworkBuilder::new(1);
    let [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map(|s| net.add_node(s));
    let l = LinkConfig::new(1_000_000, ms(10));
    let (ab, _) = net.add_duplex_link(a, b, l.clone());
    net.add_duplex_link(b, d, l.clone());
    net.add_duplex_link(a, c, l.clone());
    net.add_duplex_link(c, e, l.clone());
    net.add_duplex_link(e, d, l);
    net.link_down_at(secs(1.0), ab);
    net.link_up_at(secs(2.0), ab);
    net.stats(StatsConfig {
        record_delays: true,
        ..StatsConfig::default()
    });
    // 500 B at 0.5 Mb/s: one packet every 8 ms, 4 ms to serialise, 14 ms per hop.
    cbr_flow(&mut net, a, d, cbr(500_000.0, 500));
    let res = net.build().unwrap().run(secs(3.0)).unwrap();
    let f = &res.flows[0].forward;
    // At 1 s the packet on a → b (in propagation) is lost with cause `down`.
    assert!(
        f.dropped(DropCause::Down) >= 1 && f.dropped(DropCause::Down) <= 2,
        "{:?}",
        f.drops
    );
    assert_eq!(
        res.links[ab as usize].stats.dropped(DropCause::Down),
        f.dropped(DropCause::Down)
    );
    let delay_at = |t: f64| {
        f.delays()
            .iter()
            .find(|(at, _)| *at >= secs(t))
            .map(|(_, d)| *d)
            .unwrap()
    };
    // Two hops: 2 × (4 ms + 10 ms); three hops while rerouted.
    assert_eq!(delay_at(0.5), ms(28));
    assert_eq!(delay_at(1.5), ms(42));
    assert_eq!(delay_at(2.5), ms(28));
    // Everything else arrives.
    assert_eq!(
        f.sent_packets,
        f.delivered_packets + f.dropped_total() + res.flows[0].accounts[0].in_flight
    );
}

#[test]
fn packets_propagating_when_routes_change_take_the_new_routes() {
    // a → b (100 ms) then b → d (short) or b → c → d (long); b → d fails at 1 s, while the
    // packets of the last 100 ms propagate on a → b, routed (before the failure) through d.
    let mut net = NetworkBuilder::new(1);
    let [a, b, c, d] = ["a", "b", "c", "d"].map(|s| net.add_node(s));
    let l = LinkConfig::new(1_000_000, ms(10));
    net.add_duplex_link(a, b, LinkConfig::new(1_000_000, ms(100)));
    let (bd, _) = net.add_duplex_link(b, d, l.clone());
    net.add_duplex_link(b, c, l.clone());
    net.add_duplex_link(c, d, l);
    net.link_down_at(secs(1.0), bd);
    net.stats(StatsConfig {
        record_delays: true,
        ..StatsConfig::default()
    });
    // 500 B at 0.5 Mb/s: one packet every 8 ms, 4 ms to serialise.
    cbr_flow(&mut net, a, d, cbr(500_000.0, 500));
    let res = net.build().unwrap().run(secs(1.5)).unwrap();
    let f = &res.flows[0].forward;
    // Only the packets on b → d at 1 s are lost (14 ms of packets 8 ms apart); one routed
    // along b → d before the change would be dropped there on arrival at b.
    assert!(f.dropped(DropCause::Down) <= 2, "{:?}", f.drops);
    assert_eq!(
        res.links[bd as usize].stats.dropped(DropCause::Down),
        f.dropped(DropCause::Down)
    );
    let delays: Vec<_> = f
        .delays()
        .iter()
        .filter(|(at, _)| *at >= secs(1.0))
        .collect();
    assert!(delays.len() > 50, "{}", delays.len());
    // 104 ms to b, then 2 × 14 ms through c (one hop of 14 ms before the failure).
    assert!(f.delays().iter().any(|(_, d)| *d == ms(118)));
    assert!(delays.iter().all(|(_, d)| *d == ms(132)), "{delays:?}");
}

#[test]
fn wireless_hop_turns_frame_loss_into_delay() {
    let mut net = NetworkBuilder::new(5);
    let a = net.add_node("a");
    let b = net.add_node("b");
    // 11 Mb/s, 1 ms, 30 % frame loss, 7 attempts: residual loss 0.3^7 ≈ 2e-4.
    let w = LinkConfig::new(11_000_000, ms(1)).with_wireless(WirelessConfig {
        frame_loss: LossConfig::Bernoulli { p: 0.3 },
        ..WirelessConfig::default()
    });
    let (ab, _) = net.add_duplex_link(a, b, w);
    // 1000 B at 2 Mb/s: 250 packets/s for 40 s = 10 000 packets.
    cbr_flow(&mut net, a, b, cbr(2e6, 1000));
    let res = net.build().unwrap().run(secs(40.0)).unwrap();
    let f = &res.flows[0].forward;
    // Expected residual losses 2.2; Poisson: at most 9 at p < 1e-3.
    assert!(f.dropped(DropCause::Link) <= 9, "{:?}", f.drops);
    // Mean attempts 1/(1 − 0.3) ≈ 1.43 (sd of the mean over 10 000 frames ≈ 0.008).
    let attempts = res.links[ab as usize].stats.attempts as f64 / f.sent_packets as f64;
    assert!((attempts - 1.4283).abs() < 0.03, "{attempts}");
    // Delay: 727 µs + 1 ms without retries; a retry adds 727 µs plus 310 µs of backoff on
    // average, so the mean grows by about 0.43 × 1.04 ms ≈ 0.45 ms.
    let base = 1000.0 * 8.0 / 11e6 + 0.001;
    let mean = f.delay.mean_secs();
    assert!(mean > base + 0.0003 && mean < base + 0.0007, "{mean}");
}

#[test]
fn identical_inputs_identical_outputs_and_independent_streams() {
    // Flow 0 has CBR jitter (its own random stream) and a lossy path; flow 1 shares nothing.
    let build = |with_second: bool, seed: u64| {
        let mut net = NetworkBuilder::new(seed);
        let n: Vec<u32> = (0..4).map(|i| net.add_node(&format!("n{i}"))).collect();
        let lossy = LinkConfig::new(1_000_000, ms(5)).with_loss(LossConfig::Bernoulli { p: 0.1 });
        net.add_duplex_link(n[0], n[1], lossy.clone());
        net.add_duplex_link(n[2], n[3], lossy);
        let jittery = CbrSource::new(CbrConfig {
            random: true,
            ..CbrConfig::default()
        });
        cbr_flow(&mut net, n[0], n[1], jittery);
        if with_second {
            let other = CbrSource::new(CbrConfig {
                random: true,
                ..CbrConfig::default()
            });
            cbr_flow(&mut net, n[2], n[3], other);
        }
        net.build().unwrap().run(secs(20.0)).unwrap()
    };
    let key = |r: &netsim::RunResults| {
        let f = &r.flows[0].forward;
        (
            f.sent_packets,
            f.delivered_packets,
            f.drops,
            f.delay.mean_secs().to_bits(),
        )
    };
    let a = build(false, 9);
    assert_eq!(key(&a), key(&build(false, 9)), "same seed, same result");
    assert_eq!(
        key(&a),
        key(&build(true, 9)),
        "another flow must not perturb flow 0"
    );
    assert_ne!(
        key(&a),
        key(&build(false, 10)),
        "another seed, another result"
    );
    // 10 % loss over ~5300 packets: sd ≈ 22; allow 4 sd.
    let f = &a.flows[0].forward;
    let lost = f.dropped(DropCause::Link) as f64;
    assert!((lost - 0.1 * f.sent_packets as f64).abs() < 88.0, "{lost}");
}

#[test]
fn csv_trace_has_exact_times_and_drop_causes() {
    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    let b = net.add_node("b");
    let l = LinkConfig::new(1_000_000, ms(10)).with_loss(LossConfig::Nth(vec![1]));
    net.add_simplex_link(a, b, l);
    net.add_simplex_link(b, a, LinkConfig::new(1_000_000, ms(10)));
    let buf = common::SharedBuf::default();
    net.trace(Box::new(buf.clone()), TraceFormat::Csv);
    let src = CbrSource::new(CbrConfig {
        max_packets: 3,
        ..CbrConfig::default()
    });
    cbr_flow(&mut net, a, b, src);
    net.build().unwrap().run(secs(1.0)).unwrap();
    let text = buf.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], netsim::trace::CSV_HEADER);
    // Packet 1 (sent at 3.75 ms) is lost by the list model at 3.75 + 1.68 + 10 ms.
    assert!(
        lines.contains(&"d,15430000,0,1,cbr,210,-------,0,0,0,1,0,1,1,link"),
        "{text}"
    );
    assert!(
        lines.contains(&"r,11680000,0,1,cbr,210,-------,0,0,0,1,0,0,0,"),
        "{text}"
    );
    assert_eq!(lines.iter().filter(|l| l.starts_with("r,")).count(), 2);
}

#[test]
fn untrusted_nodes_expose_unprotected_packets() {
    let mut net = NetworkBuilder::new(1);
    let n = chain(&mut net, 2);
    net.set_untrusted(n[1], true);
    cbr_flow(&mut net, n[0], n[2], cbr(100_000.0, 210));
    let res = net.build().unwrap().run(secs(1.0)).unwrap();
    let f = &res.flows[0].forward;
    assert!(f.delivered_packets > 0);
    assert_eq!(f.exposed, f.delivered_packets);
}

#[test]
fn bad_descriptions_are_errors_not_panics() {
    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    net.add_simplex_link(a, 7, LinkConfig::new(1, ms(1)));
    assert_eq!(net.build().unwrap_err(), BuildError::UnknownNode(7));

    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    let b = net.add_node("b");
    net.add_simplex_link(a, b, LinkConfig::new(0, ms(1)));
    assert_eq!(net.build().unwrap_err(), BuildError::ZeroBandwidth(0));

    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    let b = net.add_node("b");
    net.add_simplex_link(
        a,
        b,
        LinkConfig::new(1, ms(1)).with_loss(LossConfig::Bernoulli { p: 1.5 }),
    );
    assert_eq!(net.build().unwrap_err(), BuildError::BadProbability(0));

    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    cbr_flow(&mut net, a, a, cbr(1e5, 210));
    assert_eq!(net.build().unwrap_err(), BuildError::FlowToSelf(0));

    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    let b = net.add_node("b");
    cbr_flow(&mut net, a, b, cbr(-1.0, 210));
    assert_eq!(net.build().unwrap_err(), BuildError::BadRate(0));

    // No route: packets are dropped with cause `down`, not a panic.
    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    let b = net.add_node("b");
    cbr_flow(&mut net, a, b, cbr(1e5, 210));
    let res = net.build().unwrap().run(secs(0.1)).unwrap();
    assert_eq!(
        res.flows[0].forward.dropped(DropCause::Down),
        res.flows[0].forward.sent_packets
    );
}

#[test]
fn per_bin_series_and_queue_occupancy() {
    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    let b = net.add_node("b");
    let (ab, _) = net.add_duplex_link(a, b, LinkConfig::new(1_000_000, ms(10)));
    // 1.5 Mb/s of 500 B into 1 Mb/s from 1 s to 2 s, then silence.
    net.add_flow(
        a,
        b,
        secs(1.0),
        Some(secs(2.0)),
        cbr(1.5e6, 500).into(),
        NullSink::new().into(),
    );
    let res = net.build().unwrap().run(secs(4.0)).unwrap();
    let f = &res.flows[0].forward;
    let sent = f.sent_series();
    // Every 8/3 ms from 1 s: 375 packets in [1, 2) and one whose double-precision time
    // (as NS-2's timer accumulates it) is just below the 2 s stop, rounded to 2 s.
    assert_eq!(sent, &[0, 375 * 500, 500]);
    // The link delivers at most 1 Mb/s = 125 000 B per 1-s bin.
    assert!(f.received_series().iter().all(|&b| b <= 125_000));
    let q = &res.links[ab as usize].stats.queue_packets;
    assert_eq!(q.series().len(), 4);
    assert_eq!(q.series()[0], 0.0);
    assert!(q.series()[1] > 10.0, "{:?}", q.series());
    assert_eq!(q.max(), 49);
    assert_eq!(q.series()[3], 0.0);
    assert!(res.flows[0].forward.dropped(DropCause::Queue) > 0);
    assert_eq!(PacketKind::Cbr.ns2_name(), "cbr");
}

/// Runaway inputs end with an error naming the cause: a CBR rate finer than the clock, too
/// many flows, an event budget, too many packets held in the network.
#[test]
fn limits_end_runs_with_errors_that_name_the_cause() {
    use netsim::{DropTailConfig, Limits, QueueConfig, SimError};
    // 10^15 b/s with 1000-byte packets: a packet every 8 ps, below the 1-ns clock.
    let mut net = NetworkBuilder::new(1);
    let n = chain(&mut net, 1);
    cbr_flow(&mut net, n[0], n[1], cbr(1e15, 1000));
    let e = net.build().unwrap_err();
    assert_eq!(
        e,
        BuildError::RateTooHigh {
            flow: 0,
            rate_bps: 1_000_000_000_000_000,
            packet_size: 1000
        }
    );
    assert!(e.to_string().contains("at most 8000000000000 b/s"), "{e}");
    // Exactly one packet per nanosecond is still a valid rate.
    let mut net = NetworkBuilder::new(1);
    let n = chain(&mut net, 1);
    cbr_flow(&mut net, n[0], n[1], cbr(8e12, 1000));
    assert!(net.build().is_ok());

    let mut net = NetworkBuilder::new(1);
    let n = chain(&mut net, 1);
    for _ in 0..3 {
        cbr_flow(&mut net, n[0], n[1], cbr(1e5, 210));
    }
    net.limits(Limits {
        max_flows: 2,
        ..Limits::default()
    });
    assert_eq!(
        net.build().unwrap_err(),
        BuildError::TooManyFlows { flows: 3, limit: 2 }
    );

    // A budget of 50 events stops a 1-s run that needs hundreds.
    let mut net = NetworkBuilder::new(1);
    let n = chain(&mut net, 2);
    cbr_flow(&mut net, n[0], n[2], cbr(1e6, 210));
    net.limits(Limits {
        max_events: 50,
        ..Limits::default()
    });
    match net.build().unwrap().run(secs(1.0)) {
        Err(SimError::EventBudget { events: 50, at }) => assert!(at < secs(1.0)),
        other => panic!("expected the event budget to run out, got {other:?}"),
    }

    // 10 Mb/s into 1 Mb/s behind a 100,000-packet queue: the backlog crosses a ceiling of 100.
    let mut net = NetworkBuilder::new(1);
    let a = net.add_node("a");
    let b = net.add_node("b");
    let big = QueueConfig::DropTail(DropTailConfig {
        limit: 100_000,
        ..DropTailConfig::default()
    });
    net.add_duplex_link(a, b, LinkConfig::new(1_000_000, ms(1)).with_queue(big));
    cbr_flow(&mut net, a, b, cbr(1e7, 1000));
    net.limits(Limits {
        max_packets_in_network: 100,
        ..Limits::default()
    });
    match net.build().unwrap().run(secs(1.0)) {
        Err(e @ SimError::PacketCeiling { packets: 100, .. }) => {
            assert!(e.to_string().contains("more than 100 packets"), "{e}")
        }
        other => panic!("expected the packet ceiling, got {other:?}"),
    }
}

/// A dumbbell with what every metering must count alike: NewReno over a RED bottleneck with
/// random loss, TFRC (NS-2's profile) and CBR, for 20 s.
fn metered_dumbbell() -> NetworkBuilder {
    use netsim::agents::tcp::{TcpConfig, TcpSender, TcpVariant};
    use netsim::agents::tcp_sink::{TcpSink, TcpSinkConfig};
    use netsim::agents::{TfrcApp, TfrcReceiver, TfrcSender};
    let mut net = NetworkBuilder::new(7);
    let n: Vec<u32> = (0..4).map(|i| net.add_node(&format!("n{i}"))).collect();
    net.add_duplex_link(n[0], n[1], LinkConfig::new(100_000_000, ms(2)));
    let (b, _) = net.add_duplex_link(
        n[1],
        n[2],
        LinkConfig::new(5_000_000, ms(20))
            .with_queue(netsim::QueueConfig::Red(netsim::RedConfig::default())),
    );
    net.set_loss(b, Some(LossConfig::Bernoulli { p: 0.005 }));
    net.add_duplex_link(n[2], n[3], LinkConfig::new(100_000_000, ms(2)));
    for _ in 0..3 {
        let tx = TcpSender::new(TcpConfig::ns2(TcpVariant::NewReno));
        let rx = TcpSink::new(TcpSinkConfig::ns2());
        net.add_flow(n[0], n[3], Time::ZERO, None, tx.into(), rx.into());
    }
    let profile = tfrc::Profile::ns2();
    let tx = TfrcSender::new(&profile, TfrcApp::Bulk).unwrap();
    let rx = TfrcReceiver::new(&profile).unwrap();
    net.add_flow(n[0], n[3], secs(0.5), None, tx.into(), rx.into());
    cbr_flow(&mut net, n[3], n[0], cbr(1_000_000.0, 500));
    net
}

#[test]
fn counters_only_metering_runs_the_same_events_and_counts() {
    let full = metered_dumbbell().build().unwrap().run(secs(20.0)).unwrap();
    let lean = metered_dumbbell()
        .build_with::<netsim::CountersOnly>()
        .unwrap()
        .run(secs(20.0))
        .unwrap();
    assert!(full.packet_hops > 10_000, "the dumbbell carried traffic");
    assert_eq!(
        (lean.events, lean.packet_hops),
        (full.events, full.packet_hops)
    );
    for (a, b) in full.flows.iter().zip(&lean.flows) {
        assert_eq!(a.accounts, b.accounts);
        assert!(
            a.forward.delivered_packets > 0,
            "full metering records flows"
        );
        assert_eq!(
            b.forward.delivered_packets, 0,
            "counters only: no recorder fed"
        );
    }
    for (a, b) in full.links.iter().zip(&lean.links) {
        let counts = |l: &netsim::LinkResults| {
            (
                l.stats.tx_packets,
                l.stats.tx_bytes,
                l.stats.drops,
                l.red.as_ref().map(|r| r.marks),
            )
        };
        assert_eq!(counts(a), counts(b));
        assert_eq!(
            b.stats.queue_packets.max(),
            0,
            "counters only: no queue gauge"
        );
    }
    assert!(full.links.iter().any(|l| l.stats.queue_packets.max() > 0));
}

/// `advance` in steps, then `run`, processes the events of one `run` in the same order: the
/// same trace, byte for byte, and the same results (what the lab's progress reports rely on).
/// A [`netsim::trace::TraceSink`] beside the text trace sees every line, with its packet.
#[test]
fn advancing_in_steps_changes_nothing_and_sinks_see_every_packet() {
    use netsim::trace::{TraceLine, TraceSink};
    use std::cell::RefCell;
    use std::rc::Rc;

    #[derive(Default)]
    struct Count {
        lines: u64,
        with_packet: u64,
        finished: bool,
    }
    struct Sink(Rc<RefCell<Count>>);
    impl TraceSink for Sink {
        fn record(&mut self, l: &TraceLine<'_>) -> std::io::Result<()> {
            let mut c = self.0.borrow_mut();
            c.lines += 1;
            c.with_packet += u64::from(l.packet.is_some_and(|p| p.uid == l.uid));
            Ok(())
        }
        fn finish(&mut self) -> std::io::Result<()> {
            self.0.borrow_mut().finished = true;
            Ok(())
        }
    }

    let traced = |steps: &[f64]| {
        let mut net = metered_dumbbell();
        let buf = common::SharedBuf::default();
        let count = Rc::new(RefCell::new(Count::default()));
        net.trace_sink(Box::new(Sink(count.clone())));
        net.trace(Box::new(buf.clone()), TraceFormat::Csv);
        let mut sim = net.build().unwrap();
        let mut last = 0;
        for &t in steps {
            sim.advance(secs(t)).unwrap();
            assert!(sim.events() >= last && sim.now() <= secs(t));
            last = sim.events();
        }
        let r = sim.run(secs(20.0)).unwrap();
        (buf.text(), r, count)
    };
    let (one, a, _) = traced(&[]);
    let (stepped, b, count) = traced(&[0.3, 0.5, 7.25, 7.25, 19.999]);
    assert!(one.lines().count() > 10_000);
    assert!(one == stepped, "advancing in steps changed the trace");
    assert_eq!((a.events, a.packet_hops), (b.events, b.packet_hops));
    for (x, y) in a.flows.iter().zip(&b.flows) {
        assert_eq!(x.accounts, y.accounts);
        assert_eq!(x.forward.received_series(), y.forward.received_series());
    }
    let c = count.borrow();
    assert_eq!(
        c.lines,
        one.lines().count() as u64 - 1,
        "every line but the header"
    );
    assert_eq!(c.with_packet, c.lines);
    assert!(c.finished);
}
