//! NS-2 agreement for CUBIC (`CubicProfile::Ns2`) on NS-2.35's `Agent/TCP/Linux` with
//! `select_ca cubic`, timestamps and an `Agent/TCPSink/Sack1` sink, on the three-hop dumbbell
//! of issue 3 (n0 -10 Mb/2 ms- n1 -bottleneck- n2 -10 Mb/2 ms- n3, DropTail 50), against
//! validation/ns2/tcp_cubic.tcl.

mod common;
mod tcp_common;

use std::time::Duration;

use netsim::agents::tcp::cubic::{CubicConfig, CubicProfile, CubicSender};
use netsim::agents::tcp_sack_sink::{SackSink, SackSinkConfig};
use netsim::agents::AnyAgent;
use netsim::{LinkConfig, NetworkBuilder, StatsConfig, Time};
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
}

/// NS-2's trace metrics and its cwnd_ every 10 ms.
fn ns2(p: &Path) -> (TcpTraceStats, Vec<(f64, f64)>) {
    common::require_ns("tcp_cubic");
    let cw = std::env::temp_dir().join(format!(
        "netsim-cubic-cwnd-{}-{}-{}.txt",
        std::process::id(),
        p.window,
        p.delay_ms
    ));
    let cws = cw.to_str().expect("utf-8 path").to_string();
    let args = [
        p.window.to_string(),
        p.secs.to_string(),
        p.bw_bps.to_string(),
        format!("{}ms", p.delay_ms),
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
    net.add_duplex_link(n[1], n[2], LinkConfig::new(p.bw_bps, ms(p.delay_ms)));
    net.add_duplex_link(n[2], n[3], LinkConfig::new(10_000_000, ms(2)));
    let cfg = CubicConfig {
        window: p.window,
        ..CubicConfig::ns2(profile)
    };
    let sender = CubicSender::new(cfg);
    let sink = SackSink::new(SackSinkConfig::ns2_linux());
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

#[test]
fn explore() {
    let p = Path {
        window: 1000,
        secs: 100,
        bw_bps: 1_500_000,
        delay_ms: 20,
    };
    let (a, acw) = ns2(&p);
    let (b, bcw, s) = netsim(&p, CubicProfile::Ns2);
    println!("ns2 {a:?}\nnetsim {b:?}\n{:?}", s.stats());
    for i in (0..acw.len().min(bcw.len())).step_by(50) {
        println!(
            "{:.2} ns2 {} netsim {:.2} {}",
            acw[i].0, acw[i].1, bcw[i].0, bcw[i].1
        );
    }
}
