//! How a run's congestion drops fall on its flows: per link direction, each flow's share of the
//! packets arriving at the queue against its share of the queue's drops, and how many of its
//! drops hit the second packet of a back-to-back pair.
//!
//! A deterministic gateway can drop one flow's packets far more often than its share of the
//! arrivals explains: the traffic-phase effect Floyd and Jacobson described (1992). When two
//! TCP segments leave a fast access link back to back, the second one reaches a full DropTail
//! queue exactly when it has no room, run after run; a TFRC flow's evenly spaced packets never
//! do. Under random (phase-free) dropping a flow's drops are binomial with its arrival share as
//! the probability; a flow whose drops exceed that by three standard deviations and by half
//! again is flagged ([`DropShare::concentrated`], `docs/phase-effects.md`).
//!
//! The counter is a [`TraceSink`]: the simulator, an NS-2 trace read back, and the link
//! emulator's capture feed it the same events.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use netsim::stats::DropCause;
use netsim::trace::{TraceEvent, TraceLine, TraceSink};
use netsim::Time;
use scenario::Scenario;
use serde::{Deserialize, Serialize};

/// Least drops at a link direction for its flows to be judged.
pub const MIN_DROPS: u64 = 20;
/// A flow is flagged when its drops exceed the binomial expectation by this many standard
/// deviations …
pub const Z_LIMIT: f64 = 3.0;
/// … and by this factor.
pub const RATIO_LIMIT: f64 = 1.5;

/// One flow at one link direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DropShare {
    /// The link, as `from->to` node names.
    pub link: String,
    /// The flow.
    pub flow: String,
    /// Its packets that arrived at the queue (enqueue attempts, drops included).
    pub arrivals: u64,
    /// Its share of the link direction's arrivals.
    pub arrival_share: f64,
    /// Its packets the queue dropped (full queue or AQM; link errors are not counted).
    pub drops: u64,
    /// The link direction's drops, all flows.
    pub link_drops: u64,
    /// `drops / link_drops`.
    pub drop_share: f64,
    /// `drop_share / arrival_share`: 1 when drops fall as the arrivals do.
    pub ratio: f64,
    /// `(drops − link_drops · share) / sqrt(link_drops · share · (1 − share))`.
    pub z: f64,
    /// Its drops that arrived less than one transmission time (at the link's initial
    /// bandwidth) after its previous packet at the same queue: the second of a back-to-back
    /// pair.
    pub pair_drops: u64,
    /// Its arrivals that were the second of a back-to-back pair.
    pub pair_arrivals: u64,
    /// At least [`MIN_DROPS`] drops at the link, `z ≥` [`Z_LIMIT`] and `ratio ≥`
    /// [`RATIO_LIMIT`].
    pub concentrated: bool,
}

impl DropShare {
    /// One sentence for a flagged flow.
    pub fn sentence(&self) -> String {
        format!(
            "drops concentrate on flow {:?} at {}: {} of {} drops ({:.0}%) against {:.0}% of the arrivals ({:.1}×, z = {:.1}); {} of its drops on the second packet of a back-to-back pair ({:.1}% of its arrivals are)",
            self.flow,
            self.link,
            self.drops,
            self.link_drops,
            100.0 * self.drop_share,
            100.0 * self.arrival_share,
            self.ratio,
            self.z,
            self.pair_drops,
            if self.arrivals > 0 {
                100.0 * self.pair_arrivals as f64 / self.arrivals as f64
            } else {
                0.0
            }
        )
    }
}

#[derive(Default)]
struct Counts {
    arrivals: u64,
    drops: u64,
    pair_drops: u64,
    pair_arrivals: u64,
    /// The flow's previous arrival at the queue, and whether it was back to back.
    last: Option<(Time, bool)>,
}

/// The shared state of a [`DropCounter`]: read it with [`DropTally::shares`] after the run.
#[derive(Default)]
pub struct DropTally {
    /// (from, to) → per flow.
    counts: HashMap<(u32, u32), HashMap<u32, Counts>>,
    /// (from, to) → bit/s.
    bandwidth: HashMap<(u32, u32), f64>,
    node_names: Vec<String>,
    flow_names: Vec<String>,
    from: Time,
}

impl DropTally {
    /// Per link direction with drops, per flow that crossed it: the shares, links and flows in
    /// node and flow order.
    pub fn shares(&self) -> Vec<DropShare> {
        let mut keys: Vec<&(u32, u32)> = self.counts.keys().collect();
        keys.sort();
        let mut out = Vec::new();
        for k in keys {
            let per = &self.counts[k];
            let total_arr: u64 = per.values().map(|c| c.arrivals).sum();
            let total_drop: u64 = per.values().map(|c| c.drops).sum();
            if total_drop == 0 || total_arr == 0 {
                continue;
            }
            let name = |n: u32| {
                self.node_names
                    .get(n as usize)
                    .cloned()
                    .unwrap_or_else(|| n.to_string())
            };
            let link = format!("{}->{}", name(k.0), name(k.1));
            let mut flows: Vec<&u32> = per.keys().collect();
            flows.sort();
            for f in flows {
                let c = &per[f];
                let p = c.arrivals as f64 / total_arr as f64;
                let d = total_drop as f64;
                let drop_share = c.drops as f64 / d;
                let sd = (d * p * (1.0 - p)).sqrt();
                let z = if sd > 0.0 {
                    (c.drops as f64 - d * p) / sd
                } else {
                    0.0
                };
                let ratio = if p > 0.0 { drop_share / p } else { 0.0 };
                out.push(DropShare {
                    link: link.clone(),
                    flow: self
                        .flow_names
                        .get(*f as usize)
                        .cloned()
                        .unwrap_or_else(|| f.to_string()),
                    arrivals: c.arrivals,
                    arrival_share: p,
                    drops: c.drops,
                    link_drops: total_drop,
                    drop_share,
                    ratio,
                    z,
                    pair_drops: c.pair_drops,
                    pair_arrivals: c.pair_arrivals,
                    concentrated: total_drop >= MIN_DROPS && z >= Z_LIMIT && ratio >= RATIO_LIMIT,
                });
            }
        }
        out
    }
}

/// The [`TraceSink`] that fills a [`DropTally`].
pub struct DropCounter(Rc<RefCell<DropTally>>);

impl DropCounter {
    /// A counter for the links and flows of `s`, counting from `from` (the measurement
    /// window's start, so that start-up does not dominate), and the tally it fills.
    pub fn new(s: &Scenario, from: Duration) -> (DropCounter, Rc<RefCell<DropTally>>) {
        let mut bandwidth = HashMap::new();
        for l in &s.links {
            let (a, b) = (l.from as u32, l.to as u32);
            bandwidth.insert((a, b), l.bandwidth_bps);
            if l.duplex {
                bandwidth.insert((b, a), l.bandwidth_bps);
            }
        }
        let tally = Rc::new(RefCell::new(DropTally {
            counts: HashMap::new(),
            bandwidth,
            node_names: s.nodes.iter().map(|n| n.name.clone()).collect(),
            flow_names: s.flows.iter().map(|f| f.name.clone()).collect(),
            from: Time::from_nanos(from.as_nanos() as u64),
        }));
        (DropCounter(tally.clone()), tally)
    }
}

impl TraceSink for DropCounter {
    fn record(&mut self, l: &TraceLine<'_>) -> io::Result<()> {
        let Some(flow) = l.flow.or((l.fid != u32::MAX).then_some(l.fid)) else {
            return Ok(());
        };
        let mut t = self.0.borrow_mut();
        if l.time < t.from {
            return Ok(());
        }
        let key = (l.from, l.to);
        match l.event {
            TraceEvent::Enqueue => {
                let bw = t.bandwidth.get(&key).copied().unwrap_or(f64::INFINITY);
                let tx = Duration::from_secs_f64(f64::from(l.size) * 8.0 / bw);
                let c = t.counts.entry(key).or_default().entry(flow).or_default();
                let pair = c
                    .last
                    .is_some_and(|(at, _)| l.time.saturating_since(at) < tx);
                c.arrivals += 1;
                c.pair_arrivals += u64::from(pair);
                c.last = Some((l.time, pair));
            }
            TraceEvent::Drop
                if matches!(l.cause, None | Some(DropCause::Queue | DropCause::Aqm)) =>
            {
                let c = t.counts.entry(key).or_default().entry(flow).or_default();
                c.drops += 1;
                // The drop follows its own enqueue attempt (`+` then `d`).
                c.pair_drops += u64::from(c.last.is_some_and(|(_, pair)| pair));
            }
            _ => {}
        }
        Ok(())
    }
}

/// `counter` beside `other` (a pcap writer, say), as one sink.
pub fn beside(other: Option<Box<dyn TraceSink>>, counter: DropCounter) -> Box<dyn TraceSink> {
    match other {
        Some(o) => Box::new(crate::pcap::Tee(vec![o, Box::new(counter)])),
        None => Box::new(counter),
    }
}

/// `drops.csv`: one row per flow and link direction with drops.
pub fn write_csv(path: &std::path::Path, shares: &[DropShare]) -> io::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    for s in shares {
        w.serialize(s)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(event: TraceEvent, ns: u64, flow: u32) -> TraceLine<'static> {
        TraceLine {
            event,
            time: Time::from_nanos(ns),
            from: 1,
            to: 2,
            ptype: "tcp",
            size: 1250,
            flags: "-------",
            fid: flow,
            src: (0, 0),
            dst: (3, 0),
            seq: 0,
            uid: 0,
            cause: (event == TraceEvent::Drop).then_some(DropCause::Queue),
            flow: Some(flow),
            packet: None,
        }
    }

    #[test]
    fn back_to_back_drops_of_one_flow_are_flagged() {
        let s = Scenario::parse(
            "d.toml",
            "name = \"d\"\nduration = \"10s\"\n[topology]\nkind = \"dumbbell\"\nsenders = 2\n\
             access_bandwidth = \"1Gbps\"\nbottleneck_bandwidth = \"10Mbps\"\nbottleneck_delay = \"10ms\"\n\
             [[flows]]\nname = \"a\"\nkind = \"tcp\"\nfrom = \"s0\"\nto = \"d0\"\n\
             [[flows]]\nname = \"b\"\nkind = \"tfrc\"\nfrom = \"s1\"\nto = \"d1\"\n",
        )
        .unwrap();
        let (r0, r1) = (
            s.nodes.iter().position(|n| n.name == "r0").unwrap() as u32,
            s.nodes.iter().position(|n| n.name == "r1").unwrap() as u32,
        );
        let (mut c, tally) = DropCounter::new(&s, Duration::ZERO);
        let mut at = |l: TraceLine<'static>| {
            c.record(&TraceLine {
                from: r0,
                to: r1,
                ..l
            })
            .unwrap()
        };
        // 1 ms of transmission at 10 Mb/s; flow a sends pairs 10 µs apart, flow b two packets
        // 1 ms apart per 2 ms; the second packet of a's pairs is dropped 40 times, b loses 2.
        let mut t = 0u64;
        for k in 0..40u64 {
            at(line(TraceEvent::Enqueue, t, 0));
            at(line(TraceEvent::Enqueue, t + 10_000, 0));
            at(line(TraceEvent::Drop, t + 10_000, 0));
            at(line(TraceEvent::Enqueue, t + 500_000, 1));
            at(line(TraceEvent::Enqueue, t + 1_500_000, 1));
            if k % 20 == 0 {
                at(line(TraceEvent::Drop, t + 1_500_000, 1));
            }
            t += 2_000_000;
        }
        let sh = tally.borrow().shares();
        assert_eq!(sh.len(), 2);
        let (a, b) = (&sh[0], &sh[1]);
        assert_eq!(
            (a.flow.as_str(), a.arrivals, a.drops, a.link_drops),
            ("a", 80, 40, 42)
        );
        assert_eq!((a.pair_arrivals, a.pair_drops), (40, 40));
        assert_eq!(a.arrival_share, 0.5);
        // 40/42 of the drops against half the arrivals: 1.9×, z = (40 − 21)/√(42/4) = 5.86.
        assert!((a.z - 5.86).abs() < 0.01, "{a:?}");
        assert!(a.concentrated);
        assert_eq!((b.drops, b.pair_drops, b.pair_arrivals), (2, 0, 0));
        assert!(!b.concentrated);
        // Counting from 40 ms leaves 20 of the cycles: 20 of a's drops, 1 of b's.
        let (mut c, tally) = DropCounter::new(&s, Duration::from_millis(40));
        let mut t = 0u64;
        for k in 0..40u64 {
            for l in [
                line(TraceEvent::Enqueue, t, 0),
                line(TraceEvent::Enqueue, t + 10_000, 0),
                line(TraceEvent::Drop, t + 10_000, 0),
            ] {
                c.record(&TraceLine {
                    from: r0,
                    to: r1,
                    ..l
                })
                .unwrap();
            }
            if k % 20 == 0 {
                let l = line(TraceEvent::Drop, t, 1);
                c.record(&TraceLine {
                    from: r0,
                    to: r1,
                    ..l
                })
                .unwrap();
            }
            t += 2_000_000;
        }
        let sh = tally.borrow().shares();
        assert_eq!((sh[0].drops, sh[0].link_drops), (20, 21));
        assert!(a.link.contains("r0->r1"));
        assert!(a.sentence().contains("40 of 42 drops"));
    }
}
