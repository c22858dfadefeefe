//! NS-2 agreement for the one-way TCP agents on a three-hop dumbbell
//! (n0 -10 Mb/2 ms- n1 -bottleneck- n2 -10 Mb/2 ms- n3, DropTail 50), against NS-2.35 running
//! validation/ns2/tcp_dumbbell.tcl. Each agent takes the `boot_time_` NS-2 gave its agent
//! (read with the script's probe), so tick-rounded RTT samples agree too.

mod common;
mod tcp_common;

use std::time::Duration;

use netsim::agents::tcp::{TcpConfig, TcpSender, TcpSenderStats, TcpVariant};
use netsim::agents::tcp_sink::{TcpSink, TcpSinkConfig};
use netsim::agents::AnyAgent;
use netsim::{LinkConfig, LossConfig, NetworkBuilder, StatsConfig, Time};
use tcp_common::{ns_boot_times, ns_tcp_stats, within, TcpFlow, TcpTraceStats};

const FLOW: TcpFlow = TcpFlow {
    fid: 1,
    src: 0,
    dst: 3,
};

/// Losses on the bottleneck n1 → n2, after propagation (NS-2's `link-lossmodel`).
#[derive(Clone, Debug)]
enum Loss {
    None,
    /// Drop the packets at these 0-based positions among those crossing (`ErrorModel/List`).
    List(Vec<u64>),
}

/// One scenario, as passed to the Tcl script.
#[derive(Clone, Debug)]
struct Dumbbell {
    variant: TcpVariant,
    window: u32,
    secs: u32,
    loss: Loss,
    bw_bps: u64,
    delay_ms: u64,
    delayed_ack: bool,
}

impl Dumbbell {
    /// NewReno, window_ 1000, 100 s over 1.5 Mb/20 ms, no loss model, TCPSink.
    fn issue3() -> Self {
        Dumbbell {
            variant: TcpVariant::NewReno,
            window: 1000,
            secs: 100,
            loss: Loss::None,
            bw_bps: 1_500_000,
            delay_ms: 20,
            delayed_ack: false,
        }
    }

    fn ns2_name(&self) -> &'static str {
        match self.variant {
            TcpVariant::Tahoe => "TCP",
            TcpVariant::Reno => "Reno",
            TcpVariant::NewReno => "Newreno",
            TcpVariant::Sack => "Sack1",
        }
    }

    fn args(&self) -> Vec<String> {
        let loss = match &self.loss {
            Loss::None => "0".to_string(),
            Loss::List(l) => {
                let l: Vec<String> = l.iter().map(u64::to_string).collect();
                format!("list:{}", l.join(","))
            }
        };
        vec![
            self.ns2_name().to_string(),
            self.window.to_string(),
            self.secs.to_string(),
            loss,
            self.bw_bps.to_string(),
            format!("{}ms", self.delay_ms),
            if self.delayed_ack {
                "TCPSink/DelAck"
            } else {
                "TCPSink"
            }
            .to_string(),
        ]
    }

    /// NS-2's trace metrics and the boot_time_ it gave the agent.
    fn ns2(&self) -> (TcpTraceStats, f64) {
        let args = self.args();
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        let stats = ns_tcp_stats("tcp_dumbbell.tcl", &a, &[FLOW]).remove(0);
        a.push("-");
        let boot = ns_boot_times("tcp_dumbbell.tcl", &a)[0];
        (stats, boot)
    }

    /// netsim's metrics and the sender's counters.
    fn netsim(&self, boot: Option<f64>, seed: u64) -> (TcpTraceStats, TcpSenderStats, TcpSender) {
        let mut net = NetworkBuilder::new(seed);
        let n: Vec<_> = (0..4).map(|i| net.add_node(&format!("n{i}"))).collect();
        let ms = Duration::from_millis;
        net.add_duplex_link(n[0], n[1], LinkConfig::new(10_000_000, ms(2)));
        let (bottleneck, _) =
            net.add_duplex_link(n[1], n[2], LinkConfig::new(self.bw_bps, ms(self.delay_ms)));
        net.add_duplex_link(n[2], n[3], LinkConfig::new(10_000_000, ms(2)));
        match &self.loss {
            Loss::None => {}
            Loss::List(l) => net.set_loss(bottleneck, Some(LossConfig::Nth(l.clone()))),
        }
        let cfg = TcpConfig {
            window: self.window,
            boot_time: boot.map(Duration::from_secs_f64),
            ..TcpConfig::ns2(self.variant)
        };
        let sender = TcpSender::new(cfg);
        let sink = TcpSink::new(if self.delayed_ack {
            TcpSinkConfig::ns2_delack()
        } else {
            TcpSinkConfig::ns2()
        });
        let flow = net.add_flow(n[0], n[3], Time::ZERO, None, sender.into(), sink.into());
        net.set_trace_fids(flow, FLOW.fid, FLOW.fid);
        net.stats(StatsConfig {
            record_delays: true,
            ..StatsConfig::default()
        });
        let mut sim = net.build().expect("valid network");
        let res = sim
            .run(Time::from_secs_f64(f64::from(self.secs)))
            .expect("accounting holds");
        let sender = match sim.sender(flow) {
            Some(AnyAgent::TcpSender(s)) => TcpSender::clone(s),
            other => panic!("sender is not TCP: {other:?}"),
        };
        let f = &res.flows[flow as usize];
        let stats = TcpTraceStats::from_recorders(&f.forward, &f.reverse, 1000);
        (stats, sender.stats(), sender)
    }
}

fn throughput_bps(s: &TcpTraceStats, secs: u32) -> f64 {
    s.bytes_received as f64 * 8.0 / f64::from(secs)
}

/// Issue 3: one NewReno flow (window_ 1000) over 10 Mb/2 ms – 1.5 Mb/20 ms (DropTail 50) –
/// 10 Mb/2 ms for 100 s. Throughput within 2% and drop count within 10% of NS-2.
#[test]
fn newreno_dumbbell_matches_ns2() {
    common::require_ns("tcp_dumbbell::newreno_dumbbell_matches_ns2");
    let sc = Dumbbell::issue3();
    let (ns, boot) = sc.ns2();
    let (mine, st, _) = sc.netsim(Some(boot), 1);
    println!(
        "NewReno dumbbell: throughput {:.0} b/s vs NS-2 {:.0}; drops {} vs {}; received {} vs {}; \
         fast retransmits {}, timeouts {}",
        throughput_bps(&mine, sc.secs),
        throughput_bps(&ns, sc.secs),
        mine.data_drops,
        ns.data_drops,
        mine.data_received,
        ns.data_received,
        st.fast_retransmits,
        st.timeouts
    );
    assert!(
        ns.data_drops > 0,
        "the scenario must exercise loss recovery"
    );
    // Issue 3's tolerances.
    within(
        "throughput",
        throughput_bps(&mine, sc.secs),
        throughput_bps(&ns, sc.secs),
        0.02,
    );
    within("drops", mine.data_drops as f64, ns.data_drops as f64, 0.10);
}

/// A window-limited flow: window_ 20 on a path whose bandwidth-delay product is about 38
/// packets (1.5 Mb/s, RTT ≈ 214 ms). Nothing is lost, so the run is deterministic and must
/// match NS-2 packet for packet; the rate is window_ packets per RTT, below the link's.
#[test]
fn window_limited_tahoe_matches_ns2_exactly() {
    let sc = Dumbbell {
        variant: TcpVariant::Tahoe,
        window: 20,
        secs: 30,
        delay_ms: 100,
        ..Dumbbell::issue3()
    };
    let (mine, st, sender) = sc.netsim(Some(0.0), 1);
    assert_eq!(mine.data_drops, 0);
    assert_eq!(st.retransmissions, 0);
    // The window never opens past window_: ssthresh_ starts at window_ and cwnd grows past it,
    // but at most 20 packets are unacknowledged.
    assert!(sender.cwnd() > 20.0);
    // Steady state: 20 packets per RTT. RTT = 2 × (2 + 100 + 2) ms propagation plus one
    // 1040-byte serialisation per hop (0.832 + 5.547 + 0.832 ms) and one 40-byte ACK
    // serialisation per hop (0.032 + 0.213 + 0.032 ms), and no queueing (the bottleneck is
    // busy only 20 × 5.547 ms per 215 ms).
    let rtt = 0.208 + 0.007_211 + 0.000_277;
    assert!(
        20.0 * 1040.0 * 8.0 / rtt < 1.5e6 * 0.6,
        "window-limited, not link-limited"
    );
    // After the SYN and slow start (well within 10 s), 20 packets per RTT. Runs are
    // deterministic, so a 10 s run is the first 10 s of the 30 s one. Packets arrive in
    // bursts of 20, so the 20 s span can cut one burst: allow one window either side.
    let early = Dumbbell {
        secs: 10,
        ..sc.clone()
    }
    .netsim(Some(0.0), 1)
    .0;
    let count = (mine.data_received - early.data_received) as f64;
    let expect = 20.0 / rtt * 20.0;
    assert!(
        (count - expect).abs() <= 20.0,
        "window-limited: {count} packets in 20 s, expected {expect:.1} ± 20"
    );
    common::require_ns("tcp_dumbbell::window_limited_tahoe_matches_ns2_exactly");
    let (ns, _) = sc.ns2();
    assert_eq!(mine.data_sent, ns.data_sent, "sent");
    assert_eq!(mine.data_received, ns.data_received, "received");
    assert!((mine.mean_delay() - ns.mean_delay()).abs() <= 1e-6);
    assert!((mine.jitter() - ns.jitter()).abs() <= 2e-6);
}

/// Deterministic losses (NS-2's `ErrorModel/List`) make every variant's loss recovery
/// comparable packet for packet: a lost SYN, single losses (fast retransmit), bursts
/// (Tahoe's go-back-N, Reno's timeouts, NewReno's partial ACKs), lost retransmissions
/// (backed-off timeouts), with both sinks. Counts must be identical and delays equal to the
/// trace's 1 µs.
#[test]
fn drop_lists_match_ns2_exactly() {
    common::require_ns("tcp_dumbbell::drop_lists_match_ns2_exactly");
    let burst = |from: u64, n: u64| from..from + n;
    let lists: Vec<(u32, Vec<u64>)> = vec![
        // SYN lost (3 s timeout, window of one after), one loss, a pair, a burst of four.
        (20, vec![0, 20, 21, 50, 53, 54, 55, 56]),
        // An eleven-packet burst and scattered losses with a large window: queue drops too.
        (
            1000,
            burst(54, 11)
                .chain([
                    95, 110, 143, 229, 307, 333, 343, 379, 387, 415, 422, 482, 512,
                ])
                .collect(),
        ),
        // Losses on consecutive retransmissions of the same hole (backoff).
        (
            30,
            [40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 60, 61, 62, 63].into(),
        ),
    ];
    let mut max_backoff = 0;
    for (window, list) in &lists {
        for variant in [TcpVariant::Tahoe, TcpVariant::Reno, TcpVariant::NewReno] {
            for delayed_ack in [false, true] {
                let sc = Dumbbell {
                    variant,
                    window: *window,
                    secs: 40,
                    loss: Loss::List(list.clone()),
                    delayed_ack,
                    ..Dumbbell::issue3()
                };
                let (ns, boot) = sc.ns2();
                let (mine, st, _) = sc.netsim(Some(boot), 1);
                let what = format!("{variant:?} window {window} delack {delayed_ack} {list:?}");
                max_backoff = max_backoff.max(st.max_backoff);
                assert_eq!(mine.data_sent, ns.data_sent, "{what}: sent");
                assert_eq!(mine.data_received, ns.data_received, "{what}: received");
                assert_eq!(mine.data_drops, ns.data_drops, "{what}: drops");
                assert_eq!(mine.acks_received, ns.acks_received, "{what}: ACKs");
                assert!(
                    (mine.mean_delay() - ns.mean_delay()).abs() <= 1e-6,
                    "{what}: delay"
                );
                assert!(
                    (mine.jitter() - ns.jitter()).abs() <= 2e-6,
                    "{what}: jitter"
                );
            }
        }
    }
    assert!(
        max_backoff >= 4,
        "the lists must exercise repeated timeouts"
    );
}
