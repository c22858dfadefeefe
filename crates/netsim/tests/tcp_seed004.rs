//! Seed 004 case 1 (Tables 1 and 2): two FTP/TCP flows, n0 → n8 and n1 → n9, over the
//! 10-node multi-bottleneck topology (`docs/simulator.md`, "Seed 004's topology"),
//! window_ 10 … 100, 100 s.
//!
//! "TCP" there is NS-2's default `Agent/TCP` (Tahoe) with `TCPSink`, packetSize_ 1000 and NS-2
//! defaults otherwise: NS-2.35 (validation/ns2/tcp_seed004.tcl) reproduces every printed row.
//! The runs are deterministic once each agent has the `boot_time_` NS-2 drew for it (read
//! with the script's probe), so netsim must agree with NS-2 packet for packet, and with the
//! paper to its printed digits. NewReno is reported beside (NS-2 agrees with the paper only
//! while nothing is lost).

mod common;
mod tcp_common;

use std::time::Duration;

use netsim::agents::tcp::{TcpConfig, TcpSender, TcpVariant};
use netsim::agents::tcp_sink::{TcpSink, TcpSinkConfig};
use netsim::testing::seed004_topology;
use netsim::{NetworkBuilder, StatsConfig, Time};
use tcp_common::{ns_boot_times, ns_tcp_stats, TcpFlow, TcpTraceStats};

const FLOWS: [TcpFlow; 2] = [
    TcpFlow {
        fid: 1,
        src: 0,
        dst: 8,
    },
    TcpFlow {
        fid: 2,
        src: 1,
        dst: 9,
    },
];

/// Table 1 (flow n0 → n8): window, sent bytes, received bytes, packet loss rate, mean delay,
/// jitter (max − min delay). Bytes count 1000 per data packet; the SYN is not counted.
const TABLE1: [(u32, u64, u64, f64, f64, f64); 10] = [
    (10, 6462000, 6454000, 0.00123, 0.083764, 0.024960),
    (20, 11962000, 11950000, 0.00100, 0.095899, 0.049920),
    (30, 11970000, 11956000, 0.00116, 0.178754, 0.095344),
    (40, 11982000, 11955000, 0.00225, 0.261435, 0.178544),
    (50, 11153000, 11125000, 0.00251, 0.206581, 0.203504),
    (60, 11173000, 11117000, 0.00501, 0.206704, 0.203504),
    (70, 11184000, 11113000, 0.00634, 0.210559, 0.203504),
    (80, 11715000, 11668000, 0.00401, 0.211151, 0.211824),
    (90, 11338000, 11253000, 0.00749, 0.207680, 0.211824),
    (100, 10959000, 10886000, 0.00666, 0.209426, 0.207664),
];

/// Table 2 (flow n1 → n9): window, loss rate, mean delay, jitter. (Its byte columns repeat
/// Table 1's, a copying slip: NS-2 gives flow 2 different counts, e.g. 6460000 sent at 10.)
const TABLE2: [(u32, f64, f64, f64); 10] = [
    (10, 0.00092, 0.083785, 0.033280),
    (20, 0.00091, 0.095945, 0.062559),
    (30, 0.00242, 0.178858, 0.112480),
    (40, 0.00300, 0.261620, 0.174544),
    (50, 0.00457, 0.210124, 0.203504),
    (60, 0.00448, 0.210332, 0.203504),
    (70, 0.00573, 0.206787, 0.203504),
    (80, 0.00794, 0.210671, 0.203504),
    (90, 0.00712, 0.207646, 0.203504),
    (100, 0.00644, 0.208149, 0.203504),
];

fn ns2_name(v: TcpVariant) -> &'static str {
    match v {
        TcpVariant::Tahoe => "TCP",
        TcpVariant::Reno => "Reno",
        TcpVariant::NewReno => "Newreno",
        TcpVariant::Sack => "Sack1",
    }
}

/// The seed 004 network with two TCP flows; `boot` is each agent's `boot_time_` (seconds).
fn netsim_run(window: u32, variant: TcpVariant, boot: [f64; 2]) -> Vec<TcpTraceStats> {
    let mut net = NetworkBuilder::new(4);
    let n = seed004_topology(&mut net);
    let mut ids = Vec::new();
    for (i, f) in FLOWS.iter().enumerate() {
        let cfg = TcpConfig {
            window,
            boot_time: Some(Duration::from_secs_f64(boot[i])),
            ..TcpConfig::ns2(variant)
        };
        ids.push(net.add_flow(
            n[f.src as usize],
            n[f.dst as usize],
            Time::ZERO,
            Some(Time::from_secs_f64(100.0)),
            TcpSender::new(cfg).into(),
            TcpSink::new(TcpSinkConfig::ns2()).into(),
        ));
    }
    // Recorders rather than a trace: a 100 s trace of every link is ten times the work.
    net.stats(StatsConfig {
        record_delays: true,
        ..StatsConfig::default()
    });
    let mut sim = net.build().expect("valid topology");
    let res = sim
        .run(Time::from_secs_f64(100.0))
        .expect("accounting holds");
    ids.iter()
        .map(|&id| {
            let f = &res.flows[id as usize];
            TcpTraceStats::from_recorders(&f.forward, &f.reverse, 1000)
        })
        .collect()
}

/// NS-2's boot times for the two agents: the resets at `$ns run` go in node order
/// 8 4 0 9 5 1 … (Tcl's array order), so flow 1's agent (n0) draws first.
fn ns2_boot(window: u32, variant: TcpVariant) -> [f64; 2] {
    let w = window.to_string();
    let b = ns_boot_times("tcp_seed004.tcl", &[&w, ns2_name(variant), "-"]);
    [b[0], b[1]]
}

fn plr(s: &TcpTraceStats) -> f64 {
    (s.data_sent - s.data_received) as f64 / s.data_sent as f64
}

/// `a` agrees with a value printed to `unit` (the paper truncates or rounds at its last
/// digit, so one unit either way).
fn printed(what: &str, a: f64, printed: f64, unit: f64) {
    assert!(
        (a - printed).abs() <= unit * (1.0 + 1e-9),
        "{what}: {a:.7} vs printed {printed}"
    );
}

fn compare_with_ns2(window: u32, variant: TcpVariant) -> Vec<TcpTraceStats> {
    let boot = ns2_boot(window, variant);
    let mine = netsim_run(window, variant, boot);
    let w = window.to_string();
    let ns = ns_tcp_stats("tcp_seed004.tcl", &[&w, ns2_name(variant)], &FLOWS);
    for (f, (a, b)) in mine.iter().zip(&ns).enumerate() {
        let what = format!("{variant:?} window {window} flow {}", f + 1);
        println!(
            "{what}: sent {} vs NS-2 {}, received {} vs {}, delay {:.6} vs {:.6}, jitter {:.6} vs {:.6}",
            a.data_sent * 1000,
            b.data_sent * 1000,
            a.data_received * 1000,
            b.data_received * 1000,
            a.mean_delay(),
            b.mean_delay(),
            a.jitter(),
            b.jitter()
        );
    }
    for (f, (a, b)) in mine.iter().zip(&ns).enumerate() {
        let what = format!("{variant:?} window {window} flow {}", f + 1);
        assert_eq!(a.data_sent, b.data_sent, "{what}: data packets sent");
        assert_eq!(
            a.data_received, b.data_received,
            "{what}: data packets received"
        );
        // Both traces print times rounded to 1 µs; identical events give identical values.
        assert!(
            (a.mean_delay() - b.mean_delay()).abs() <= 1e-6,
            "{what}: mean delay"
        );
        assert!((a.jitter() - b.jitter()).abs() <= 2e-6, "{what}: jitter");
    }
    mine
}

/// Tahoe against NS-2 and the paper, windows `windows`.
fn tahoe_rows(windows: &[u32]) {
    common::require_ns("tcp_seed004");
    for &(window, sent, received, loss, delay, jitter) in &TABLE1 {
        if !windows.contains(&window) {
            continue;
        }
        let got = compare_with_ns2(window, TcpVariant::Tahoe);
        let a = &got[0];
        let what = format!("window {window} flow 1");
        assert_eq!(a.data_sent * 1000, sent, "{what}: sent bytes");
        assert_eq!(a.data_received * 1000, received, "{what}: received bytes");
        printed(&format!("{what}: loss rate"), plr(a), loss, 1e-5);
        printed(&format!("{what}: delay"), a.mean_delay(), delay, 1e-6);
        printed(&format!("{what}: jitter"), a.jitter(), jitter, 1e-6);
        let &(_, loss2, delay2, jitter2) = TABLE2.iter().find(|r| r.0 == window).expect("row");
        let b = &got[1];
        let what = format!("window {window} flow 2");
        printed(&format!("{what}: loss rate"), plr(b), loss2, 1e-5);
        printed(&format!("{what}: delay"), b.mean_delay(), delay2, 1e-6);
        printed(&format!("{what}: jitter"), b.jitter(), jitter2, 1e-6);
    }
}

#[test]
fn tahoe_windows_10_to_40() {
    tahoe_rows(&[10, 20, 30, 40]);
}

#[test]
fn tahoe_windows_50_to_70() {
    tahoe_rows(&[50, 60, 70]);
}

#[test]
fn tahoe_windows_80_to_100() {
    tahoe_rows(&[80, 90, 100]);
}

/// NewReno on the same topology, beside the paper's Tahoe rows: equal to NS-2's NewReno, and
/// equal to the paper while nothing is dropped (window ≤ 40 in NS-2).
#[test]
fn newreno_beside() {
    common::require_ns("tcp_seed004::newreno_beside");
    for window in [10, 40, 50, 100] {
        let got = compare_with_ns2(window, TcpVariant::NewReno);
        let paper = TABLE1.iter().find(|r| r.0 == window).expect("row");
        println!(
            "NewReno window {window}: flow 1 received {} (paper's Tahoe {}), delay {:.6} ({})",
            got[0].data_received * 1000,
            paper.2,
            got[0].mean_delay(),
            paper.4
        );
    }
}
