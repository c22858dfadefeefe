//! Helpers for the TCP agreement tests: the same metrics from an NS-2 trace and from a netsim
//! run's recorders, and the boot-time probe.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use netsim::packet::NodeId;
use netsim::stats::FlowRecorder;
use netsim::trace::{parse_ns2_line, TraceEvent};
use netsim::Time;

use super::common;

/// A TCP flow as it appears in a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpFlow {
    /// `fid_`.
    pub fid: u32,
    /// Sender node.
    pub src: NodeId,
    /// Sink node.
    pub dst: NodeId,
}

/// What one flow's trace lines say. Data packets are `tcp` packets larger than a bare header
/// (the 40-byte SYN is left out, as seed 004's tables leave it out).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TcpTraceStats {
    /// Data packets entering the first link (retransmissions included).
    pub data_sent: u64,
    /// Data packets arriving at the sink's node.
    pub data_received: u64,
    /// Wire bytes of the data received.
    pub bytes_received: u64,
    /// Data packets dropped (any traced link, any cause).
    pub data_drops: u64,
    /// Sum, min and max of the received data packets' one-way delays, in seconds (from the
    /// trace's 1 µs times).
    pub delay_sum: f64,
    /// Smallest one-way delay.
    pub delay_min: f64,
    /// Largest one-way delay.
    pub delay_max: f64,
    /// ACKs arriving at the sender's node, and the sum of their one-way delays.
    pub acks_received: u64,
    /// Sum of ACK one-way delays.
    pub ack_delay_sum: f64,
}

impl TcpTraceStats {
    /// Mean one-way delay of the data received.
    pub fn mean_delay(&self) -> f64 {
        self.delay_sum / self.data_received.max(1) as f64
    }

    /// Max − min one-way delay (seed 004's "jitter").
    pub fn jitter(&self) -> f64 {
        if self.data_received == 0 {
            0.0
        } else {
            self.delay_max - self.delay_min
        }
    }

    /// The same metrics from a netsim run's recorders (run with `record_delays`), without
    /// tracing it: faster for long runs. The simulator does not meter the SYN (no payload);
    /// times are rounded to 1 µs first, as NS-2's trace prints them, so both sides do the same
    /// arithmetic.
    pub fn from_recorders(fwd: &FlowRecorder, rev: &FlowRecorder, payload: u32) -> Self {
        let us = |t: Time| ((t.as_nanos() + 500) / 1000) as f64 * 1e-6;
        let payload = u64::from(payload);
        let data_received = fwd.delivered_payload / payload;
        // The simulator leaves the SYN (no payload) out of the flow statistics.
        assert_eq!(
            fwd.delivered_packets, data_received,
            "only data packets metered"
        );
        let mut s = TcpTraceStats {
            data_sent: fwd.sent_payload / payload,
            data_received,
            bytes_received: fwd.delivered_bytes,
            data_drops: fwd.dropped_total(),
            delay_min: f64::INFINITY,
            acks_received: rev.delivered_packets,
            ack_delay_sum: rev.delay.mean_secs() * rev.delivered_packets as f64,
            ..TcpTraceStats::default()
        };
        for &(arrival, delay) in fwd.delays() {
            let d = us(arrival) - us(arrival - delay);
            s.delay_sum += d;
            s.delay_min = s.delay_min.min(d);
            s.delay_max = s.delay_max.max(d);
        }
        s
    }

    /// Mean RTT seen by data and ACKs: mean data delay plus mean ACK delay.
    pub fn mean_rtt(&self) -> f64 {
        self.mean_delay() + self.ack_delay_sum / self.acks_received.max(1) as f64
    }
}

/// Accumulates [`TcpTraceStats`] for several flows from NS-2 trace lines.
#[derive(Debug, Default)]
pub struct TcpTraceReader {
    flows: Vec<TcpFlow>,
    pub stats: Vec<TcpTraceStats>,
    /// uid → time of the first `+` at the origin node.
    sent: HashMap<u64, f64>,
}

impl TcpTraceReader {
    /// A reader for `flows`.
    pub fn new(flows: &[TcpFlow]) -> Self {
        TcpTraceReader {
            flows: flows.to_vec(),
            stats: flows
                .iter()
                .map(|_| TcpTraceStats {
                    delay_min: f64::INFINITY,
                    ..TcpTraceStats::default()
                })
                .collect(),
            sent: HashMap::new(),
        }
    }

    /// Feed one trace line (non-packet lines are ignored).
    pub fn line(&mut self, line: &str) {
        if !matches!(line.as_bytes().first(), Some(b'+' | b'-' | b'r' | b'd')) {
            return;
        }
        let l = parse_ns2_line(line).expect("trace line parses");
        let Some(i) = self.flows.iter().position(|f| f.fid == l.fid) else {
            return;
        };
        let flow = self.flows[i];
        let t = l.time.as_nanos() as f64 * 1e-9;
        let s = &mut self.stats[i];
        match l.ptype {
            "tcp" if l.size > 40 => match l.event {
                TraceEvent::Enqueue if l.from == flow.src => {
                    // Each packet once, at the first link it enters.
                    s.data_sent += u64::from(self.sent.insert(l.uid, t).is_none());
                }
                TraceEvent::Receive if l.to == flow.dst => {
                    if let Some(t0) = self.sent.remove(&l.uid) {
                        let d = t - t0;
                        s.data_received += 1;
                        s.bytes_received += u64::from(l.size);
                        s.delay_sum += d;
                        s.delay_min = s.delay_min.min(d);
                        s.delay_max = s.delay_max.max(d);
                    }
                }
                TraceEvent::Drop => {
                    self.sent.remove(&l.uid);
                    s.data_drops += 1;
                }
                _ => {}
            },
            "ack" => match l.event {
                TraceEvent::Enqueue if l.from == flow.dst => {
                    self.sent.insert(l.uid, t);
                }
                TraceEvent::Receive if l.to == flow.src => {
                    if let Some(t0) = self.sent.remove(&l.uid) {
                        s.acks_received += 1;
                        s.ack_delay_sum += t - t0;
                    }
                }
                TraceEvent::Drop => {
                    self.sent.remove(&l.uid);
                }
                _ => {}
            },
            _ => {}
        }
    }
}

/// Run `ns <script> <args…> <trace file>` and read `flows` from its trace. The trace goes to
/// a temporary file: NS-2 writes its stdout unbuffered, a system call per line.
pub fn ns_tcp_stats(name: &str, args: &[&str], flows: &[TcpFlow]) -> Vec<TcpTraceStats> {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "netsim-{}-{}-{}.tr",
        name.trim_end_matches(".tcl"),
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let trace = path.to_str().expect("temporary path is UTF-8");
    let status = Command::new("ns")
        .arg(common::script(name))
        .args(args)
        .arg(trace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .expect("ns runs");
    assert!(status.success(), "ns {name} {args:?} failed: {status}");
    let mut reader = TcpTraceReader::new(flows);
    let file = std::fs::File::open(&path).expect("NS-2 wrote its trace");
    for line in BufReader::new(file).lines() {
        reader.line(&line.expect("trace is text"));
    }
    let _ = std::fs::remove_file(&path);
    reader.stats
}

/// The `boot_time_` NS-2 gives each TCP agent of a script run with a trailing `probe`
/// argument: the script prints the default RNG's next uniform draws, which the agents' resets
/// at `$ns run` consume in node-reset order; `boot_time_ = tcpTick_ (10 ms) · u`.
pub fn ns_boot_times(name: &str, args: &[&str]) -> Vec<f64> {
    let mut a: Vec<&str> = args.to_vec();
    a.push("probe");
    common::ns_output(name, &a)
        .split_whitespace()
        .map(|u| u.parse::<f64>().expect("a uniform draw") * 0.01)
        .collect()
}

/// `|a - b| <= tol * |b|`, with a message.
pub fn within(what: &str, a: f64, b: f64, tol: f64) {
    assert!(
        (a - b).abs() <= tol * b.abs(),
        "{what}: {a} vs {b} (relative difference {:.4} > {tol})",
        (a - b).abs() / b.abs()
    );
}
