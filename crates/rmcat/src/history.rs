//! The sender's record of packets sent, and the reading of feedback against it.
//!
//! Every controller needs the same bookkeeping: which packets are in flight (and how many bytes),
//! and, when feedback arrives, which of them it reports received (with their arrival time in the
//! receiver's clock and ECN mark) or lost. A packet is lost when a report says it was not
//! received, or when a later report starts past it (the report that covered it was lost: the
//! sender cannot tell a lost packet from a lost report, as on a real path).

use crate::feedback::rfc8888::ntp_units_to_nanos;
use crate::feedback::{unwrap_seq, CcfbReport, TwccFeedback};
use crate::time::Time;
use core::time::Duration;
use std::collections::VecDeque;

/// Most packets kept in flight before the oldest is declared lost: half the 16-bit sequence
/// space, so feedback sequence numbers always unwrap to one packet.
const MAX_TRACKED: usize = 1 << 15;

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    InFlight,
    Done,
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    sent: Time,
    size: u32,
    state: State,
}

/// A packet the feedback has just resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resolved {
    /// Extended sequence number.
    pub seq: u64,
    /// When it was sent (sender's clock).
    pub sent: Time,
    /// Its size in bytes, as given to `on_packet_sent`.
    pub size: u32,
    /// Arrival in the receiver's clock (nanoseconds), or `None` if lost.
    pub arrival: Option<i64>,
    /// Whether it arrived marked CE.
    pub ce: bool,
}

/// What one feedback message says, in the sender's terms.
#[derive(Clone, Debug, Default)]
pub struct Digest {
    /// Packets resolved by this message, in sequence order.
    pub packets: Vec<Resolved>,
    /// A round-trip sample: from sending the newest packet this message reports received to
    /// receiving the message, less the time the receiver held it when the format says (RFC 8888's
    /// arrival time offset; transport-wide feedback does not, so its sample includes the wait).
    pub rtt: Option<Duration>,
}

/// Packets sent and not yet forgotten.
#[derive(Clone, Debug, Default)]
pub struct SentHistory {
    first: u64,
    packets: VecDeque<Sent>,
    in_flight_bytes: u64,
    /// Last report timestamp seen (RFC 8888), extended past its 32-bit wrap.
    last_rts: Option<i64>,
}

impl SentHistory {
    /// An empty history.
    pub fn new() -> SentHistory {
        SentHistory::default()
    }

    /// Bytes sent and not yet resolved.
    pub fn in_flight_bytes(&self) -> u64 {
        self.in_flight_bytes
    }

    /// The next sequence number expected.
    pub fn next_seq(&self) -> u64 {
        self.first + self.packets.len() as u64
    }

    /// Packet `seq` of `size` bytes left at `now`. Sequence numbers must grow; a skipped number
    /// is recorded as never sent, a repeated one is ignored.
    pub fn on_sent(&mut self, now: Time, seq: u64, size: u32) -> Vec<Resolved> {
        if self.packets.is_empty() && self.first == 0 && seq > 0 {
            self.first = seq;
        }
        if seq < self.next_seq() {
            return Vec::new();
        }
        while self.next_seq() < seq {
            self.packets.push_back(Sent {
                sent: now,
                size: 0,
                state: State::Done,
            });
        }
        self.packets.push_back(Sent {
            sent: now,
            size,
            state: State::InFlight,
        });
        self.in_flight_bytes += u64::from(size);
        let mut dropped = Vec::new();
        while self.packets.len() > MAX_TRACKED {
            let seq = self.first;
            if let Some(r) = self.resolve(seq, None, false) {
                dropped.push(r);
            }
            self.packets.pop_front();
            self.first += 1;
        }
        self.prune();
        dropped
    }

    fn resolve(&mut self, seq: u64, arrival: Option<i64>, ce: bool) -> Option<Resolved> {
        let idx = usize::try_from(seq.checked_sub(self.first)?).ok()?;
        let p = self.packets.get_mut(idx)?;
        if p.state != State::InFlight {
            return None;
        }
        p.state = State::Done;
        self.in_flight_bytes -= u64::from(p.size);
        Some(Resolved {
            seq,
            sent: p.sent,
            size: p.size,
            arrival,
            ce,
        })
    }

    fn lose_before(&mut self, seq: u64, out: &mut Vec<Resolved>) {
        let end = seq.min(self.next_seq());
        for s in self.first..end {
            if let Some(r) = self.resolve(s, None, false) {
                out.push(r);
            }
        }
    }

    fn prune(&mut self) {
        while self.packets.front().is_some_and(|p| p.state == State::Done) && self.packets.len() > 1
        {
            self.packets.pop_front();
            self.first += 1;
        }
    }

    fn reference(&self) -> u64 {
        self.next_seq().saturating_sub(1)
    }

    /// Reads an RFC 8888 report (its first block: one media stream per flow) received at `now`.
    pub fn digest_ccfb(&mut self, now: Time, r: &CcfbReport) -> Digest {
        let mut d = Digest::default();
        let Some(b) = r.blocks.first() else {
            return d;
        };
        // Extend the 32-bit report timestamp (1/65536 s) past its wrap every 65,536 s.
        let raw = i64::from(r.report_timestamp);
        let rts = match self.last_rts {
            None => raw,
            Some(prev) => {
                let base = prev - prev.rem_euclid(1 << 32);
                let cands = [base - (1 << 32) + raw, base + raw, base + (1 << 32) + raw];
                *cands.iter().min_by_key(|c| (*c - prev).abs()).unwrap()
            }
        };
        self.last_rts = Some(rts);
        let begin = unwrap_seq(b.begin_seq, self.reference());
        self.lose_before(begin, &mut d.packets);
        let mut newest: Option<(u64, Duration)> = None;
        for (k, m) in b.metrics.iter().enumerate() {
            let seq = begin + k as u64;
            let arrival = (m.received && m.ato != crate::feedback::rfc8888::ATO_UNAVAILABLE)
                .then(|| ntp_units_to_nanos(rts - i64::from(m.ato) * 64));
            let held = Duration::from_nanos(u64::from(m.ato) * 1_000_000_000 / 1024);
            if m.received && arrival.is_none() {
                // Received but time unknown: not lost, not usable for delay.
                let _ = self.resolve(seq, None, false);
                continue;
            }
            if let Some(p) = self.resolve(seq, arrival, m.received && m.ecn == 3) {
                if m.received {
                    newest = Some((seq, now.since(p.sent).saturating_sub(held)));
                }
                d.packets.push(p);
            }
        }
        d.rtt = newest.map(|(_, rtt)| rtt);
        self.prune();
        d
    }

    /// Reads a transport-wide feedback message received at `now`.
    pub fn digest_twcc(&mut self, now: Time, f: &TwccFeedback) -> Digest {
        let mut d = Digest::default();
        let begin = unwrap_seq(f.base_seq, self.reference());
        self.lose_before(begin, &mut d.packets);
        let arrivals = f.arrivals();
        let mut a = arrivals.iter().peekable();
        for k in 0..f.packets.len() {
            let seq = begin + k as u64;
            let arrival = match a.peek() {
                Some(&&(i, t)) if i == k => {
                    a.next();
                    Some(t)
                }
                _ => None,
            };
            if let Some(p) = self.resolve(seq, arrival, false) {
                if arrival.is_some() {
                    d.rtt = Some(now.since(p.sent));
                }
                d.packets.push(p);
            }
        }
        self.prune();
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feedback::rfc8888::{PacketMetric, ReportBlock};

    #[test]
    fn in_flight_and_loss_by_skipped_report() {
        let mut h = SentHistory::new();
        for s in 0..6 {
            h.on_sent(Time::from_millis(s), s, 100);
        }
        assert_eq!(h.in_flight_bytes(), 600);
        let m = PacketMetric {
            received: true,
            ecn: 0,
            ato: 0,
        };
        // A report starting at 3: 0..3 were in a lost report.
        let r = CcfbReport {
            sender_ssrc: 0,
            blocks: vec![ReportBlock {
                media_ssrc: 0,
                begin_seq: 3,
                metrics: vec![m, PacketMetric::LOST, m],
            }],
            report_timestamp: 65536, // 1 s
        };
        let d = h.digest_ccfb(Time::from_millis(1010), &r);
        let lost: Vec<u64> = d
            .packets
            .iter()
            .filter(|p| p.arrival.is_none())
            .map(|p| p.seq)
            .collect();
        assert_eq!(lost, vec![0, 1, 2, 4]);
        assert_eq!(
            d.packets.iter().find(|p| p.seq == 5).unwrap().arrival,
            Some(1_000_000_000)
        );
        assert_eq!(h.in_flight_bytes(), 0);
        // RTT: sent at 5 ms, report received at 1010 ms, held 0: 1005 ms.
        assert_eq!(d.rtt, Some(Duration::from_millis(1005)));
    }
}
