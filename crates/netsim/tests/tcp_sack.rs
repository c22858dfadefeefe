//! NS-2 agreement for `Agent/TCP/Sack1` with `Agent/TCPSink/Sack1` (and its `DelAck` form) on
//! the three-hop dumbbell of validation/ns2/tcp_dumbbell.tcl (n0 -10 Mb/2 ms- n1
//! -1.5 Mb/20 ms, DropTail 50- n2 -10 Mb/2 ms- n3). Every deterministic run must produce
//! NS-2.35's trace line for line: the same packets (SACK ACKs are 8 bytes longer per block),
//! at the same microsecond, with the same drops and flags (NS-2's `A` after every window cut).
//! The sender takes the `boot_time_` NS-2 gave its agent (read with the script's probe) so tick-rounded RTT samples agree too.

mod common;
mod tcp_common;

use std::time::Duration;

use netsim::agents::tcp::{TcpConfig, TcpSender, TcpSenderStats, TcpVariant};
use netsim::agents::tcp_sink::{TcpSink, TcpSinkConfig};
use netsim::agents::AnyAgent;
use netsim::trace::TraceFormat;
use netsim::{LinkConfig, LossConfig, NetworkBuilder, StatsConfig, Time};
use rand::{Rng, SeedableRng};
use tcp_common::{ns_boot_times, ns_tcp_stats, within, TcpFlow, TcpTraceStats};

const FLOW: TcpFlow = TcpFlow {
    fid: 1,
    src: 0,
    dst: 3,
};

/// One dumbbell run, as passed to the Tcl script.
#[derive(Clone, Debug)]
struct Run {
    variant: TcpVariant,
    window: u32,
    secs: u32,
    /// `ErrorModel/List` drops (0-based positions among packets crossing n1 → n2), or a
    /// Bernoulli rate.
    drops: Vec<u64>,
    bernoulli: f64,
    delayed_ack: bool,
}

impl Run {
    fn sack(window: u32, secs: u32, drops: Vec<u64>) -> Self {
        Run {
            variant: TcpVariant::Sack,
            window,
            secs,
            drops,
            bernoulli: 0.0,
            delayed_ack: false,
        }
    }

    fn args(&self) -> Vec<String> {
        let (agent, sink) = match self.variant {
            TcpVariant::Sack => ("Sack1", "TCPSink/Sack1"),
            TcpVariant::NewReno => ("Newreno", "TCPSink"),
            TcpVariant::Reno => ("Reno", "TCPSink"),
            TcpVariant::Tahoe => ("TCP", "TCPSink"),
        };
        let sink = if self.delayed_ack {
            format!("{sink}/DelAck")
        } else {
            sink.to_string()
        };
        let loss = if self.drops.is_empty() {
            self.bernoulli.to_string()
        } else {
            let l: Vec<String> = self.drops.iter().map(u64::to_string).collect();
            format!("list:{}", l.join(","))
        };
        vec![
            agent.to_string(),
            self.window.to_string(),
            self.secs.to_string(),
            loss,
            "1500000".to_string(),
            "20ms".to_string(),
            sink,
        ]
    }

    /// NS-2's whole trace and the boot_time_ it gave the agent.
    fn ns2_trace(&self) -> (String, f64) {
        let args = self.args();
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.push("-");
        let trace = common::ns_output("tcp_dumbbell.tcl", &a);
        let boot = ns_boot_times("tcp_dumbbell.tcl", &a)[0];
        (trace, boot)
    }

    /// NS-2's trace metrics (long runs: read from a file, not kept).
    fn ns2_stats(&self) -> TcpTraceStats {
        let args = self.args();
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        ns_tcp_stats("tcp_dumbbell.tcl", &a, &[FLOW]).remove(0)
    }

    /// netsim's run: its NS-2-format trace (if asked), metrics and sender counters.
    fn netsim(&self, boot: Option<f64>, trace: bool) -> (String, TcpTraceStats, TcpSenderStats) {
        let mut net = NetworkBuilder::new(1);
        let n: Vec<_> = (0..4).map(|i| net.add_node(&format!("n{i}"))).collect();
        let ms = Duration::from_millis;
        net.add_duplex_link(n[0], n[1], LinkConfig::new(10_000_000, ms(2)));
        let (bottleneck, _) = net.add_duplex_link(n[1], n[2], LinkConfig::new(1_500_000, ms(20)));
        net.add_duplex_link(n[2], n[3], LinkConfig::new(10_000_000, ms(2)));
        if !self.drops.is_empty() {
            net.set_loss(bottleneck, Some(LossConfig::Nth(self.drops.clone())));
        } else if self.bernoulli > 0.0 {
            net.set_loss(
                bottleneck,
                Some(LossConfig::Bernoulli { p: self.bernoulli }),
            );
        }
        let cfg = TcpConfig {
            window: self.window,
            boot_time: boot.map(Duration::from_secs_f64),
            ..TcpConfig::ns2(self.variant)
        };
        let sink = match (self.variant == TcpVariant::Sack, self.delayed_ack) {
            (true, false) => TcpSinkConfig::ns2_sack1(),
            (true, true) => TcpSinkConfig::ns2_sack1_delack(),
            (false, false) => TcpSinkConfig::ns2(),
            (false, true) => TcpSinkConfig::ns2_delack(),
        };
        let flow = net.add_flow(
            n[0],
            n[3],
            Time::ZERO,
            None,
            TcpSender::new(cfg).into(),
            TcpSink::new(sink).into(),
        );
        net.set_trace_fids(flow, FLOW.fid, FLOW.fid);
        net.stats(StatsConfig {
            record_delays: true,
            ..StatsConfig::default()
        });
        let buf = common::SharedBuf::default();
        if trace {
            net.trace(Box::new(buf.clone()), TraceFormat::Ns2);
        }
        let mut sim = net.build().expect("valid network");
        let res = sim
            .run(Time::from_secs_f64(f64::from(self.secs)))
            .expect("accounting holds");
        let st = match sim.sender(flow) {
            Some(AnyAgent::TcpSender(s)) => s.stats(),
            other => panic!("sender is not TCP: {other:?}"),
        };
        drop(sim);
        let f = &res.flows[flow as usize];
        let stats = TcpTraceStats::from_recorders(&f.forward, &f.reverse, 1000);
        (buf.text(), stats, st)
    }

    /// Both traces must be identical, line for line; returns netsim's sender counters.
    fn assert_trace_identical(&self) -> TcpSenderStats {
        let (ns, boot) = self.ns2_trace();
        let (mine, _, st) = self.netsim(Some(boot), true);
        let what = format!("{:?} window {} {:?}", self.variant, self.window, self.drops);
        let ns_lines = by_instant(ns.lines());
        let my_lines = by_instant(mine.lines());
        assert!(ns_lines.len() > 1000, "{what}: NS-2 traced too little");
        for (i, (a, b)) in my_lines.iter().zip(&ns_lines).enumerate() {
            assert_eq!(a, b, "{what}: trace line {} differs", i + 1);
        }
        assert_eq!(my_lines.len(), ns_lines.len(), "{what}: trace lengths");
        st
    }
}

fn is_packet_line(l: &str) -> bool {
    matches!(l.as_bytes().first(), Some(b'+' | b'-' | b'r' | b'd'))
}

/// The packet lines, sorted within each printed instant. NS-2 computes times in `double`
/// seconds, netsim in integer nanoseconds (a 1040-byte packet takes 5 546 666.67 ns at
/// 1.5 Mb/s, kept as a whole number), so two events less than a microsecond apart, printed
/// with the same time, can be processed in either order. Which packets move where, and when
/// to the microsecond, must still be identical: a different order that changed anything
/// (a queue full one way and not the other) shows up as different lines.
fn by_instant<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = lines.filter(|l| is_packet_line(l)).collect();
    let time = |l: &str| l.split(' ').nth(1).unwrap_or("").to_string();
    let mut i = 0;
    while i < v.len() {
        let t = time(v[i]);
        let j = (i..v.len()).find(|&j| time(v[j]) != t).unwrap_or(v.len());
        v[i..j].sort_unstable();
        i = j;
    }
    v
}

/// A window large enough (1000) that slow start overflows the 50-packet DropTail queue and
/// loses many packets of one window; SACK repairs them in one recovery.
#[test]
fn droptail_overflow_is_trace_identical() {
    common::require_ns("tcp_sack::droptail_overflow_is_trace_identical");
    let st = Run::sack(1000, 60, vec![]).assert_trace_identical();
    assert!(st.fast_retransmits >= 2, "{st:?}");
    assert!(st.retransmissions >= 10, "{st:?}");
    // Window-limited below the queue: nothing lost at all.
    Run::sack(20, 20, vec![]).assert_trace_identical();
}

/// Deterministic losses: a lost SYN, single losses, pairs, bursts (several holes in one
/// window, where SACK differs from NewReno), lost retransmissions (timeouts with backoff),
/// with the plain and the delayed-ACK sink.
#[test]
fn drop_lists_are_trace_identical() {
    common::require_ns("tcp_sack::drop_lists_are_trace_identical");
    let burst = |from: u64, n: u64| from..from + n;
    let lists: Vec<(u32, Vec<u64>)> = vec![
        (20, vec![0, 20, 21, 50, 53, 54, 55, 56]),
        (
            1000,
            burst(54, 11)
                .chain([
                    95, 110, 143, 229, 307, 333, 343, 379, 387, 415, 422, 482, 512,
                ])
                .collect(),
        ),
        (
            30,
            [40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 60, 61, 62, 63].into(),
        ),
        // Every other packet of a window lost: five holes reported at once (more than the
        // three blocks an ACK carries).
        (40, [30, 32, 34, 36, 38, 40, 90, 93, 96].into()),
    ];
    let mut timeouts = 0;
    let mut fast = 0;
    for (window, list) in &lists {
        for delayed_ack in [false, true] {
            let run = Run {
                delayed_ack,
                ..Run::sack(*window, 40, list.clone())
            };
            let st = run.assert_trace_identical();
            timeouts += st.timeouts;
            fast += st.fast_retransmits;
        }
    }
    assert!(timeouts >= 2 && fast >= 8, "lists exercise both recoveries");
}

/// Random losses: a Bernoulli(2%) drop pattern drawn here (seeded) and given to both
/// simulators as the same list, so loss recovery under random loss is compared packet for
/// packet.
#[test]
fn random_loss_pattern_is_trace_identical() {
    common::require_ns("tcp_sack::random_loss_pattern_is_trace_identical");
    for seed in [1u64, 2, 3] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let drops: Vec<u64> = (0..4000u64).filter(|_| rng.gen_bool(0.02)).collect();
        assert!(drops.len() > 40);
        let st = Run::sack(100, 60, drops).assert_trace_identical();
        assert!(st.fast_retransmits > 10, "seed {seed}: {st:?}");
    }
}

/// With several packets of one window lost, SACK repairs all holes in about one RTT where
/// NewReno repairs one hole per RTT: in both simulators SACK delivers more, and netsim's gain
/// equals NS-2's (the runs are trace-identical above; here the comparison is the point).
#[test]
fn sack_beats_newreno_on_multiple_drops_as_in_ns2() {
    common::require_ns("tcp_sack::sack_beats_newreno_on_multiple_drops_as_in_ns2");
    // Six holes in one window, every 200 packets.
    let drops: Vec<u64> = (1..40u64)
        .flat_map(|k| {
            let b = 200 * k;
            [b, b + 2, b + 4, b + 6, b + 9, b + 12]
        })
        .collect();
    let sack = Run::sack(60, 30, drops.clone());
    let newreno = Run {
        variant: TcpVariant::NewReno,
        ..sack.clone()
    };
    let (ns_sack, ns_nr) = (sack.ns2_stats(), newreno.ns2_stats());
    let boot_sack = sack.ns2_trace().1;
    let boot_nr = newreno.ns2_trace().1;
    let (_, my_sack, _) = sack.netsim(Some(boot_sack), false);
    let (_, my_nr, _) = newreno.netsim(Some(boot_nr), false);
    println!(
        "multiple drops: SACK {} / NewReno {} packets (NS-2: {} / {})",
        my_sack.data_received, my_nr.data_received, ns_sack.data_received, ns_nr.data_received
    );
    assert_eq!(my_sack.data_received, ns_sack.data_received);
    assert_eq!(my_nr.data_received, ns_nr.data_received);
    assert!(
        ns_sack.data_received as f64 > 1.05 * ns_nr.data_received as f64,
        "the scenario must show SACK's advantage"
    );
}

/// NS-2's own random loss (its `ErrorModel` with MRG32k3a draws) against netsim's (ChaCha8
/// draws): the drop patterns differ, so the runs agree statistically, not packet for packet.
/// 300 s at 1% loss gives some 400 loss events, a sampling spread of the throughput of about
/// 1/sqrt(400) = 5%; the tolerance is twice that, as for the other variants (tcp_loss.rs).
#[test]
fn bernoulli_loss_throughput_within_ten_percent_of_ns2() {
    common::require_ns("tcp_sack::bernoulli_loss_throughput_within_ten_percent_of_ns2");
    let run = Run {
        bernoulli: 0.01,
        ..Run::sack(1000, 300, vec![])
    };
    let (_, mine, st) = run.netsim(None, false);
    let ns = run.ns2_stats();
    let thr = |s: &TcpTraceStats| s.bytes_received as f64 * 8.0 / 300.0;
    println!(
        "SACK at 1% loss: netsim {:.0} b/s vs NS-2 {:.0} b/s; fast retransmits {}, timeouts {}",
        thr(&mine),
        thr(&ns),
        st.fast_retransmits,
        st.timeouts
    );
    assert!(st.fast_retransmits > 100, "enough loss events");
    within("throughput vs NS-2", thr(&mine), thr(&ns), 0.10);
}
