//! The emulator's capture read as the simulator's statistics: a classifier that names each
//! real packet (flow, direction, NS-2 type, sequence number, payload), and the per-flow
//! recorders (`netsim::FlowRecorder`) fed from the capture exactly as `validate` feeds them
//! from an NS-2 trace — a packet is sent at its first `+` on a link leaving its source,
//! delivered at its `r` on a link into its destination, dropped at its `d` — so the real
//! run's metrics come from what crossed the links, not from the senders' reports, and are
//! computed by the code `tfrclab run` uses.

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::Ipv4Addr;

use netemu::engine::{CapPacket, Capture, Classifier, Tag};
use netemu::ip::{Ipv4, PROTO_TCP, PROTO_UDP};
use netemu::model::Event;
use netsim::trace::{TraceEvent, TraceLine};
use netsim::{FlowRecorder, PacketKind, StatsConfig, Time};

use crate::plan::{Plan, Runner};

/// `tfrc-udp`'s frame kinds (docs/real-network.md, "Framing").
const FRAME_DATA: u8 = 5;
const FRAME_FEEDBACK: u8 = 6;
/// Frame header bytes before a `tfrc::wire` packet.
const FRAME_HEADER: usize = 12;

#[derive(Clone, Copy)]
enum Proto {
    Tcp { mss: u32 },
    Tfrc,
    Cbr,
}

struct Known {
    flow: u32,
    proto: Proto,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    port: u16,
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
}

fn be_u64(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8)
        .and_then(|x| x.try_into().ok())
        .map(u64::from_be_bytes)
}

/// The classifier of `plan`'s flows, whose nodes have `addrs`: data go from the flow's source
/// to its destination's port, control comes back from that port. TCP sequence numbers count
/// segments from the connection's initial sequence number (learnt from the SYN), as NS-2's
/// one-way TCP numbers packets; TFRC's are the data header's; CBR's the payload's first 8
/// bytes.
pub fn classifier(plan: &Plan, addrs: &[Ipv4Addr]) -> Classifier {
    let known: Vec<Known> = plan
        .flows
        .iter()
        .map(|f| Known {
            flow: f.index as u32,
            proto: match f.runner {
                Runner::Tcp { mss, .. } => Proto::Tcp { mss },
                Runner::Tfrc { .. } => Proto::Tfrc,
                Runner::Cbr { .. } => Proto::Cbr,
            },
            src: addrs[f.from],
            dst: addrs[f.to],
            port: f.port,
        })
        .collect();
    let mut isn: HashMap<u32, u32> = HashMap::new();
    Box::new(move |h: &Ipv4, p: &[u8]| {
        let l4 = h.l4(p);
        if l4.len() < 8 {
            return None;
        }
        let sport = u16::from_be_bytes([l4[0], l4[1]]);
        let dport = u16::from_be_bytes([l4[2], l4[3]]);
        let k = known.iter().find(|k| {
            let proto_ok = match k.proto {
                Proto::Tcp { .. } => h.proto == PROTO_TCP,
                _ => h.proto == PROTO_UDP,
            };
            proto_ok
                && ((h.src == k.src && h.dst == k.dst && dport == k.port)
                    || (h.src == k.dst && h.dst == k.src && sport == k.port))
        })?;
        let forward = h.dst == k.dst;
        let body_len = |hdr: usize| (h.total_len - h.header_len).saturating_sub(hdr) as u32;
        let tag = |kind, seq, payload| Tag {
            flow: k.flow,
            forward,
            kind,
            seq,
            payload,
        };
        Some(match k.proto {
            Proto::Tcp { mss } => {
                let doff = usize::from(l4.get(12)? >> 4) * 4;
                let flags = *l4.get(13)?;
                let seq = be_u32(l4, 4)?;
                let ack = be_u32(l4, 8)?;
                let payload = body_len(doff);
                if forward && flags & 0x02 != 0 {
                    isn.insert(k.flow, seq);
                    return Some(tag(PacketKind::Tcp, -1, 0));
                }
                let base = isn.get(&k.flow).copied().unwrap_or(seq).wrapping_add(1);
                let mss = mss.max(1);
                if forward {
                    let n = seq.wrapping_sub(base) / mss;
                    tag(PacketKind::Tcp, i64::from(n), payload)
                } else {
                    let n = ack.wrapping_sub(base) / mss;
                    tag(PacketKind::Ack, i64::from(n), 0)
                }
            }
            Proto::Tfrc => {
                let frame = &l4[8..];
                let kind = *frame.get(1)?;
                let wire = &frame[FRAME_HEADER.min(frame.len())..];
                if forward {
                    if kind == FRAME_DATA {
                        let seq = be_u64(wire, 8).map_or(-1, |s| s as i64);
                        let payload = body_len(8 + FRAME_HEADER + tfrc::wire::DATA_HEADER_LEN);
                        tag(PacketKind::TfrcData, seq, payload)
                    } else {
                        // Handshake and FIN: not data.
                        tag(PacketKind::TfrcData, -1, 0)
                    }
                } else {
                    let seq = if kind == FRAME_FEEDBACK {
                        be_u64(wire, 16).map_or(-1, |s| s as i64)
                    } else {
                        -1
                    };
                    tag(PacketKind::TfrcFeedback, seq, 0)
                }
            }
            Proto::Cbr => {
                let seq = be_u64(l4, 8).map_or(-1, |s| s as i64);
                tag(PacketKind::Cbr, seq, body_len(8))
            }
        })
    })
}

/// One flow's data direction as the capture saw it.
#[derive(Debug)]
pub struct FlowSeen {
    /// The statistics, as a simulation of the scenario gathers them.
    pub recorder: FlowRecorder,
    /// Data packets that entered the network, whole run.
    pub sent: u64,
    /// Data packets delivered, whole run.
    pub delivered: u64,
}

/// The simplex links' end nodes: `2 · link` is `from → to`, `2 · link + 1` the reverse.
pub fn simplex_nodes(links: &[(u32, u32)]) -> impl Fn(u32) -> (u32, u32) + '_ {
    move |s| {
        let (a, b) = links[(s / 2) as usize];
        if s % 2 == 0 {
            (a, b)
        } else {
            (b, a)
        }
    }
}

/// Feed `cap` into one recorder per flow (`n_flows`; flow `i` goes from `ends[i].0` to
/// `ends[i].1`), keeping events before `until`.
pub fn recorders(
    cap: &Capture,
    links: &[(u32, u32)],
    ends: &[(u32, u32)],
    cfg: &StatsConfig,
    until: Time,
) -> Vec<FlowSeen> {
    let mut out: Vec<FlowSeen> = ends
        .iter()
        .map(|_| FlowSeen {
            recorder: FlowRecorder::new(cfg),
            sent: 0,
            delivered: 0,
        })
        .collect();
    let nodes = simplex_nodes(links);
    let mut in_flight: HashMap<u32, Time> = HashMap::new();
    for e in &cap.events {
        if e.time > until {
            break;
        }
        let Some(CapPacket {
            tag: Some(tag),
            size,
            ..
        }) = cap.packets.get(e.uid as usize)
        else {
            continue;
        };
        if !tag.forward || tag.payload == 0 {
            continue; // control, or data without payload (a SYN, a handshake)
        }
        let Some(f) = out.get_mut(tag.flow as usize) else {
            continue;
        };
        let (src, dst) = ends[tag.flow as usize];
        let (from, to) = nodes(e.simplex);
        match e.event {
            Event::Enqueue if from == src => {
                if let std::collections::hash_map::Entry::Vacant(v) = in_flight.entry(e.uid) {
                    v.insert(e.time);
                    f.sent += 1;
                    f.recorder.on_sent(e.time, *size, tag.payload);
                }
            }
            Event::Receive if to == dst => {
                if let Some(sent) = in_flight.remove(&e.uid) {
                    f.delivered += 1;
                    f.recorder.on_delivered(e.time, sent, *size, tag.payload);
                }
            }
            Event::Drop(cause) if in_flight.remove(&e.uid).is_some() => {
                f.recorder.on_dropped(e.time, cause);
            }
            _ => {}
        }
    }
    out
}

/// Write the capture as NS-2 `trace-all` lines (the simulator's `--trace ns2` format), so the
/// real run and a simulation can be compared line by line. Flow `i` is fid `i`.
pub fn write_ns2(
    cap: &Capture,
    links: &[(u32, u32)],
    ports: &[u16],
    w: &mut impl Write,
) -> io::Result<()> {
    each_line(cap, links, ports, &mut |line| {
        netsim::trace::write_ns2_line(w, line)
    })
}

/// Give every event of the capture, as the simulator's trace line, to `f` (a
/// `netsim::trace::TraceSink`, the NS-2 writer).
pub fn each_line(
    cap: &Capture,
    links: &[(u32, u32)],
    ports: &[u16],
    f: &mut dyn FnMut(&TraceLine<'_>) -> io::Result<()>,
) -> io::Result<()> {
    let nodes = simplex_nodes(links);
    for e in &cap.events {
        let p = &cap.packets[e.uid as usize];
        let (from, to) = nodes(e.simplex);
        let (event, cause) = match e.event {
            Event::Enqueue => (TraceEvent::Enqueue, None),
            Event::Dequeue => (TraceEvent::Dequeue, None),
            Event::Receive => (TraceEvent::Receive, None),
            Event::Drop(c) => (TraceEvent::Drop, Some(c)),
        };
        let (ptype, fid, seq) = match p.tag {
            Some(t) => (t.kind.ns2_name(), t.flow, t.seq),
            None => ("other", u32::MAX, -1),
        };
        let port = p
            .tag
            .and_then(|t| ports.get(t.flow as usize))
            .map_or(0, |&x| u32::from(x));
        let (sp, dp) = match p.tag {
            Some(t) if t.forward => (0, port),
            Some(_) => (port, 0),
            None => (0, 0),
        };
        let line = TraceLine {
            event,
            time: e.time,
            from,
            to,
            ptype,
            size: p.size,
            flags: "-------",
            fid,
            src: (p.src.unwrap_or(u32::MAX), sp),
            dst: (p.dst.unwrap_or(u32::MAX), dp),
            seq,
            uid: u64::from(e.uid),
            cause,
            flow: p.tag.map(|t| t.flow),
            packet: None,
        };
        f(&line)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use netemu::engine::CapEvent;
    use netsim::DropCause;

    fn tag(flow: u32, payload: u32) -> Option<Tag> {
        Some(Tag {
            flow,
            forward: true,
            kind: PacketKind::Tcp,
            seq: 0,
            payload,
        })
    }

    /// Two links s→r→d; packet 0 crosses both, packet 1 is dropped at r, packet 2 (no
    /// payload) is left out, packet 3 is still on the wire at `until`.
    #[test]
    fn capture_feeds_recorders_like_a_trace() {
        let links = [(0, 1), (1, 2)];
        let pk = |t: Option<Tag>| CapPacket {
            tag: t,
            size: 1500,
            src: Some(0),
            dst: Some(2),
        };
        let ev = |ms: u64, uid: u32, simplex: u32, event: Event| CapEvent {
            time: Time::from_nanos(ms * 1_000_000),
            uid,
            simplex,
            event,
        };
        let cap = Capture {
            packets: vec![
                pk(tag(0, 1448)),
                pk(tag(0, 1448)),
                pk(tag(0, 0)),
                pk(tag(0, 1448)),
            ],
            events: vec![
                ev(0, 0, 0, Event::Enqueue),
                ev(0, 2, 0, Event::Enqueue),
                ev(1, 0, 0, Event::Receive),
                ev(1, 0, 2, Event::Enqueue),
                ev(2, 1, 0, Event::Enqueue),
                ev(3, 1, 2, Event::Enqueue),
                ev(3, 1, 2, Event::Drop(DropCause::Queue)),
                ev(11, 0, 2, Event::Receive),
                ev(12, 3, 0, Event::Enqueue),
                ev(30, 3, 2, Event::Receive),
            ],
        };
        let cfg = StatsConfig::default();
        let seen = recorders(&cap, &links, &[(0, 2)], &cfg, Time::from_nanos(20_000_000));
        let f = &seen[0];
        assert_eq!((f.sent, f.delivered), (3, 1));
        assert_eq!(f.recorder.sent_packets, 3);
        assert_eq!(f.recorder.delivered_packets, 1);
        assert_eq!(f.recorder.dropped(DropCause::Queue), 1);
        assert!((f.recorder.delay.mean_secs() - 0.011).abs() < 1e-12);
        let mut out = Vec::new();
        write_ns2(&cap, &links, &[5000], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("+ 0 0 1 tcp 1500 ------- 0 0.0 2.5000 0 0\n"),
            "{text}"
        );
        assert!(text.contains("d 0.003 1 2 tcp 1500"), "{text}");
    }
}
