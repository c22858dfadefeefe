//! Seed 004 case 2 with netsim: `cargo run --example seed004_udp -- <rate Mb/s> [seconds] [trace]`
//! prints each flow's sent/received packets, mean delay and jitter (max − min); with a third
//! argument, writes an NS-2 trace of the four links validation/ns2/seed004_udp.tcl traces.

use std::io::BufWriter;

use netsim::agents::{CbrConfig, CbrSource, NullSink};
use netsim::testing::seed004_topology;
use netsim::trace::TraceFormat;
use netsim::{NetworkBuilder, Time};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rate: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let secs: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100.0);
    let mut net = NetworkBuilder::new(1);
    let n = seed004_topology(&mut net);
    if let Some(path) = args.get(3) {
        match std::fs::File::create(path) {
            Ok(f) => net.trace(Box::new(BufWriter::new(f)), TraceFormat::Ns2),
            Err(e) => {
                eprintln!("cannot create {path}: {e}");
                std::process::exit(1);
            }
        }
    }
    for (fid, (s, d)) in [(0, 8), (1, 9)].into_iter().enumerate() {
        let cbr = CbrSource::new(CbrConfig {
            rate_bps: rate * 1e6,
            ..CbrConfig::default()
        });
        let f = net.add_flow(
            n[s],
            n[d],
            Time::ZERO,
            Some(Time::from_secs_f64(secs)),
            cbr.into(),
            NullSink::new().into(),
        );
        net.set_trace_fids(f, fid as u32 + 1, 0);
    }
    let mut sim = match net.build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let t0 = std::time::Instant::now();
    let res = match sim.run(Time::from_secs_f64(secs)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    for (i, f) in res.flows.iter().enumerate() {
        let r = &f.forward;
        println!(
            "flow {i}: sent {} recv {} ({} B) mean delay {:.5} jitter {:.5} drops {:?}",
            r.sent_packets,
            r.delivered_packets,
            r.delivered_bytes,
            r.delay.mean_secs(),
            r.delay.range_secs(),
            r.drops
        );
    }
    println!(
        "{} events, {} packet-hops in {wall:.3} s ({:.1} M hops/s)",
        res.events,
        res.packet_hops,
        res.packet_hops as f64 / wall / 1e6
    );
}
