//! NS-2 agreement for CUBIC (`CubicProfile::Ns2`) on NS-2.35's `Agent/TCP/Linux` with
//! `select_ca cubic`, timestamps and an `Agent/TCPSink/Sack1` sink, on the three-hop dumbbell
//! of issue 3 (n0 -10 Mb/2 ms- n1 -bottleneck- n2 -10 Mb/2 ms- n3, DropTail 50), against
//! validation/ns2/tcp_cubic.tcl.

mod common;
mod tcp_common;

use std::time::Duration;

use netsim::agents::tcp::cubic::{CubicConfig, CubicProfile, CubicSender};
use netsim::agents::AnyAgent;
use netsim::agents::{TcpSink, TcpSinkConfig};
use netsim::{
    DropTailConfig, LinkConfig, LossConfig, NetworkBuilder, QueueConfig, StatsConfig, Time,
};
use tcp_common::{ns_tcp_stats, TcpFlow, TcpTraceStats};

const FLOW: TcpFlow = TcpFlow {
    fid: 1,
    src: 0,
    dst: 3,
};

struct Path {
    window: u32,
    secs: u32,
    bw_bps: u64,
    delay_ms: u64,
    /// Bottleneck queue limit, packets.
    queue: usize,
    /// Packets dropped on the bottleneck by position among those crossing it.
    drops: Vec<u64>,
}

/// NS-2's trace metrics and its cwnd_ every 10 ms.
fn ns2(p: &Path) -> (TcpTraceStats, Vec<(f64, f64)>) {
    common::require_ns("tcp_cubic");
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let cw = std::env::temp_dir().join(format!(
        "netsim-cubic-cwnd-{}-{}.txt",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let cws = cw.to_str().expect("utf-8 path").to_string();
    let args = [
        p.window.to_string(),
        p.secs.to_string(),
        p.bw_bps.to_string(),
        format!("{}ms", p.delay_ms),
        p.queue.to_string(),
        if p.drops.is_empty() {
            "0".to_string()
        } else {
            let l: Vec<String> = p.drops.iter().map(u64::to_string).collect();
            format!("list:{}", l.join(","))
        },
        cws.clone(),
    ];
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let stats = ns_tcp_stats("tcp_cubic.tcl", &a, &[FLOW]).remove(0);
    let text = std::fs::read_to_string(&cw).expect("NS-2 wrote the cwnd samples");
    let _ = std::fs::remove_file(&cw);
    let series = text
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let t = it.next()?.parse().ok()?;
            let c = it.next()?.parse().ok()?;
            Some((t, c))
        })
        .collect();
    (stats, series)
}

fn netsim(p: &Path, profile: CubicProfile) -> (TcpTraceStats, Vec<(f64, f64)>, CubicSender) {
    let mut net = NetworkBuilder::new(1);
    let n: Vec<_> = (0..4).map(|i| net.add_node(&format!("n{i}"))).collect();
    let ms = Duration::from_millis;
    net.add_duplex_link(n[0], n[1], LinkConfig::new(10_000_000, ms(2)));
    let (bottleneck, _) =
        net.add_duplex_link(n[1], n[2], LinkConfig::new(p.bw_bps, ms(p.delay_ms)));
    net.set_queue(
        bottleneck,
        QueueConfig::DropTail(DropTailConfig {
            limit: p.queue as u32,
            ..DropTailConfig::default()
        }),
    );
    if !p.drops.is_empty() {
        net.set_loss(bottleneck, Some(LossConfig::Nth(p.drops.clone())));
    }
    net.add_duplex_link(n[2], n[3], LinkConfig::new(10_000_000, ms(2)));
    let cfg = CubicConfig {
        window: p.window,
        ..CubicConfig::ns2(profile)
    };
    let sender = CubicSender::new(cfg);
    let sink = TcpSink::new(TcpSinkConfig::ns2_linux());
    let flow = net.add_flow(n[0], n[3], Time::ZERO, None, sender.into(), sink.into());
    net.set_trace_fids(flow, FLOW.fid, FLOW.fid);
    net.stats(StatsConfig {
        bin_width: Duration::from_millis(10),
        record_delays: true,
        ..StatsConfig::default()
    });
    let mut sim = net.build().expect("valid network");
    let res = sim
        .run(Time::from_secs_f64(f64::from(p.secs)))
        .expect("accounting holds");
    let sender = match sim.sender(flow) {
        Some(AnyAgent::CubicSender(s)) => CubicSender::clone(s),
        other => panic!("sender is not CUBIC: {other:?}"),
    };
    let f = &res.flows[flow as usize];
    let stats = TcpTraceStats::from_recorders(&f.forward, &f.reverse, 1000);
    let s = res
        .agent_samples
        .iter()
        .find(|s| s.flow == flow && s.sender)
        .expect("sender sampled");
    let k = s.names.len();
    let series = s
        .times
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_secs_f64(), s.values[i * k]))
        .collect();
    (stats, series, sender)
}

/// Mean |a - b| over the samples both series have at the same 10 ms step.
fn mean_abs_diff(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    // NS-2 samples at 0, 10 ms, …; netsim at the end of each 10 ms bin: align b[i] with a[i+1].
    let n = a.len().saturating_sub(1).min(b.len());
    let sum: f64 = (0..n).map(|i| (a[i + 1].1 - b[i].1).abs()).sum();
    sum / n.max(1) as f64
}

/// The cwnd trajectories side by side, every 100 ms, as docs/cubic-cwnd.svg shows them.
fn chart(a: &[(f64, f64)], b: &[(f64, f64)]) -> String {
    let thin = |s: &[(f64, f64)]| -> Vec<(f64, f64)> { s.iter().step_by(10).copied().collect() };
    let c = report::charts::LineChart::new(
        "CUBIC cwnd: NS-2.35 Agent/TCP/Linux (select_ca cubic) vs netsim (profile ns2)",
        "time (s)",
        "cwnd (packets)",
    )
    .series("NS-2.35", thin(a))
    .series("netsim", thin(b));
    report::standalone_svg(&report::Chart::to_svg(&c))
}

/// One CUBIC flow alone on the issue-3 path (1.5 Mb/s, 20 ms, DropTail 50), window_ 1000 so
/// that cwnd, not the receiver window, limits it: slow-start overshoot, a burst of losses,
/// SACK recovery, then CUBIC's periodic cycles.
///
/// Issue 17 asks for throughput within 5%. Nothing here is random and the agent follows NS-2's
/// code path for path, so the runs agree packet for packet; the assertions use 1% (room only
/// for NS-2's 1 µs trace rounding) on counts and a mean cwnd difference under half a packet,
/// which a wrong rule in recovery or in the cubic arithmetic would exceed by far.
#[test]
fn single_flow_agrees_with_ns2_linux_cubic() {
    let p = Path {
        window: 1000,
        secs: 100,
        bw_bps: 1_500_000,
        delay_ms: 20,
        queue: 50,
        drops: Vec::new(),
    };
    let (a, acw) = ns2(&p);
    let (b, bcw, s) = netsim(&p, CubicProfile::Ns2);
    println!("ns2    {a:?}\nnetsim {b:?}\n{:?}", s.stats());
    assert!(a.data_received > 15_000, "the path is used: {a:?}");
    assert!(
        s.stats().fast_retransmits > 20,
        "CUBIC cycles: {:?}",
        s.stats()
    );
    tcp_common::within(
        "throughput",
        b.data_received as f64,
        a.data_received as f64,
        0.01,
    );
    tcp_common::within("sent", b.data_sent as f64, a.data_sent as f64, 0.01);
    tcp_common::within("drops", b.data_drops as f64, a.data_drops as f64, 0.01);
    tcp_common::within("delay", b.mean_delay(), a.mean_delay(), 0.01);
    let d = mean_abs_diff(&acw, &bcw);
    assert!(acw.len() > 9_000 && bcw.len() > 9_000);
    assert!(d < 0.5, "mean |cwnd difference| {d} packets");
    // docs/cubic-cwnd.svg is this comparison; TFRCLAB_UPDATE_DOCS=1 rewrites it.
    let svg = chart(&acw, &bcw);
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/cubic-cwnd.svg");
    if std::env::var_os("TFRCLAB_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &svg).expect("docs/ is writable");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == svg,
        "docs/cubic-cwnd.svg is stale: rerun with TFRCLAB_UPDATE_DOCS=1"
    );
}

/// A 2 Mb/s, 60 ms bottleneck with a window_ (90) just above what the path holds (about 80
/// packets): losses near the cap (`snd_cwnd_clamp`), longer epochs and the RTT-independent C of the
/// module. Same tolerances and reasons as above.
#[test]
fn longer_rtt_and_window_cap_agree_with_ns2() {
    let p = Path {
        window: 90,
        secs: 60,
        bw_bps: 2_000_000,
        delay_ms: 60,
        queue: 50,
        drops: Vec::new(),
    };
    let (a, acw) = ns2(&p);
    let (b, bcw, s) = netsim(&p, CubicProfile::Ns2);
    println!("ns2    {a:?}\nnetsim {b:?}\n{:?}", s.stats());
    tcp_common::within(
        "throughput",
        b.data_received as f64,
        a.data_received as f64,
        0.01,
    );
    tcp_common::within("drops", b.data_drops as f64, a.data_drops as f64, 0.01);
    let d = mean_abs_diff(&acw, &bcw);
    assert!(d < 0.5, "mean |cwnd difference| {d} packets");
}

/// RFC 9438's profile is a different controller (β 0.7, real RTT; its unit tests check the
/// rules): on the same path it must still fill the link (throughput above 90% of the ns2
/// profile's) while its losses differ.
#[test]
fn rfc9438_profile_still_fills_the_link() {
    let p = Path {
        window: 1000,
        secs: 100,
        bw_bps: 1_500_000,
        delay_ms: 20,
        queue: 50,
        drops: Vec::new(),
    };
    let (n, _, ns2s) = netsim(&p, CubicProfile::Ns2);
    let (r, _, rs) = netsim(&p, CubicProfile::Rfc9438);
    println!("ns2 {n:?} {:?}\nrfc {r:?} {:?}", ns2s.stats(), rs.stats());
    assert!(r.data_received as f64 > 0.9 * n.data_received as f64);
    assert_ne!(r.data_drops, n.data_drops, "a different controller");
}

/// Loss recovery beyond the cycles: small bottleneck queues (5 and 12 packets) with a burst
/// of dropped packets (positions 300-308, 309, 311, 900 and 2000-2012 among those crossing the
/// bottleneck, retransmissions included), which with the 5-packet queue needs a
/// retransmission timeout (Loss state, scoreboard marking every unSACKed packet) and
/// otherwise long SACK recoveries; and a run of 30 dropped packets that takes down the
/// retransmissions too, backing the timer off eight times (the backoff clobbering srtt). All
/// deterministic: the same 1% as above, and the mechanism each case is for must have run.
#[test]
fn timeouts_and_multiple_losses_agree_with_ns2() {
    let burst: Vec<u64> = (300..309)
        .chain([309, 311, 900])
        .chain(2000..2013)
        .collect();
    let cases = [
        (5usize, burst.clone(), 1u64, 1u64),
        (12, burst, 0, 1),
        (8, (300..330).chain([400, 401, 402, 800]).collect(), 8, 256),
    ];
    for (queue, drops, min_timeouts, min_backoff) in cases {
        let p = Path {
            window: 1000,
            secs: 60,
            bw_bps: 1_500_000,
            delay_ms: 20,
            queue,
            drops,
        };
        let (a, _) = ns2(&p);
        let (b, _, s) = netsim(&p, CubicProfile::Ns2);
        println!("queue {queue}\nns2    {a:?}\nnetsim {b:?}\n{:?}", s.stats());
        assert!(s.stats().timeouts >= min_timeouts, "{:?}", s.stats());
        assert!(s.stats().max_backoff >= min_backoff, "{:?}", s.stats());
        assert!(s.stats().fast_retransmits > 0);
        tcp_common::within(
            "throughput",
            b.data_received as f64,
            a.data_received as f64,
            0.01,
        );
        tcp_common::within("sent", b.data_sent as f64, a.data_sent as f64, 0.01);
        tcp_common::within("drops", b.data_drops as f64, a.data_drops as f64, 0.01);
        tcp_common::within("delay", b.mean_delay(), a.mean_delay(), 0.01);
    }
}
