//! The retransmission queue of the Linux profile: one entry per packet sent and not yet
//! cumulatively acknowledged, with the kernel's marks (SACKed, lost, retransmitted and still
//! in flight, ever retransmitted) and counters, SACK tagging (`tcp_sacktag_one`), the
//! cumulative clean-up (`tcp_clean_rtx_queue`) and RACK loss detection (RFC 8985,
//! `tcp_recovery.c`). Restated in `docs/simulator.md`, "Linux TCP".
//!
//! Sequence numbers count packets: packet `s` covers `[s, s + 1)`.

use std::collections::VecDeque;

use crate::Time;

/// One packet's marks (`TCP_SKB_CB(skb)->sacked`) and its latest transmission time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Seg {
    sent: Time,
    /// `TCPCB_SACKED_ACKED`.
    sacked: bool,
    /// `TCPCB_LOST`.
    lost: bool,
    /// `TCPCB_SACKED_RETRANS`: a retransmission is in flight.
    retrans: bool,
    /// `TCPCB_EVER_RETRANS`.
    ever_retrans: bool,
}

/// RACK's state (`tp->rack`): the most recently sent packet known delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rack {
    /// Its transmission time.
    pub mstamp: Time,
    /// Its end sequence (one past it).
    pub end_seq: i64,
    /// The RTT measured on it, ns.
    pub rtt_ns: u64,
    /// Something was delivered since the last loss check.
    pub advanced: bool,
}

/// What one ACK did to the queue (the kernel's `FLAG_*` bits and RTT timestamps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckEffects {
    /// `FLAG_DATA_ACKED`: new data cumulatively acknowledged.
    pub data_acked: bool,
    /// `FLAG_DATA_SACKED`: packets newly SACKed.
    pub data_sacked: bool,
    /// `FLAG_RETRANS_DATA_ACKED`.
    pub retrans_data_acked: bool,
    /// `FLAG_ORIG_SACK_ACKED`: a never-retransmitted packet sent before `high_seq` was
    /// (S)ACKed.
    pub orig_sack_acked: bool,
    /// Packets cumulatively acknowledged.
    pub pkts_acked: u32,
    /// Packets newly delivered (cumulatively acknowledged and not SACKed before, or SACKed).
    pub delivered: u32,
    /// Transmission times of the first and last newly cumulatively acknowledged
    /// never-retransmitted packets, and of the first and last newly SACKed ones.
    pub first_ackt: Option<Time>,
    /// See `first_ackt`.
    pub last_ackt: Option<Time>,
    /// See `first_ackt`.
    pub first_sackt: Option<Time>,
    /// See `first_ackt`.
    pub last_sackt: Option<Time>,
}

/// The queue. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct RtxQueue {
    /// Sequence of `segs[0]` (`snd_una`).
    una: i64,
    segs: VecDeque<Seg>,
    /// `sacked_out`, `lost_out`, `retrans_out`.
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// `tsorted_sent_queue`: (sequence, transmission time) in transmission order; entries
    /// that no longer match their packet are skipped (and dropped at the front).
    tsorted: VecDeque<(i64, Time)>,
    /// One past the highest SACKed packet (0: none).
    highest_sack: i64,
    /// Where the search for the next packet to retransmit starts.
    rtx_hint: i64,
    /// RACK.
    pub rack: Rack,
    /// Packets ever marked lost (`tp->lost`).
    pub lost_total: u64,
}

impl RtxQueue {
    /// An empty queue whose first packet will be `una`.
    pub fn new(una: i64) -> Self {
        RtxQueue {
            una,
            rtx_hint: una,
            ..RtxQueue::default()
        }
    }

    /// `snd_una`.
    pub fn una(&self) -> i64 {
        self.una
    }

    /// `snd_nxt`.
    pub fn nxt(&self) -> i64 {
        self.una + self.segs.len() as i64
    }

    /// `packets_out`.
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    /// `sacked_out`.
    pub fn sacked_out(&self) -> u32 {
        self.sacked_out
    }

    /// `lost_out`.
    pub fn lost_out(&self) -> u32 {
        self.lost_out
    }

    /// `retrans_out`.
    pub fn retrans_out(&self) -> u32 {
        self.retrans_out
    }

    /// `tcp_packets_in_flight`: out − (SACKed + lost) + retransmitted.
    pub fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// Transmission time of the first unacknowledged packet.
    pub fn head_sent(&self) -> Option<Time> {
        self.segs.front().map(|s| s.sent)
    }

    fn seg(&mut self, seq: i64) -> Option<&mut Seg> {
        let i = usize::try_from(seq - self.una).ok()?;
        self.segs.get_mut(i)
    }

    /// A new packet `nxt()` sent at `now`.
    pub fn push_new(&mut self, now: Time) {
        let seq = self.nxt();
        self.segs.push_back(Seg {
            sent: now,
            ..Seg::default()
        });
        self.tsorted.push_back((seq, now));
    }

    /// Packet `seq` retransmitted at `now` (`tcp_retransmit_skb`).
    pub fn retransmitted(&mut self, seq: i64, now: Time) {
        let Some(s) = self.seg(seq) else {
            return;
        };
        let was = s.retrans;
        s.retrans = true;
        s.ever_retrans = true;
        s.sent = now;
        if !was {
            self.retrans_out += 1;
        }
        self.tsorted.push_back((seq, now));
        self.compact();
    }

    /// The next packet marked lost that is neither SACKed nor already retransmitted, if any
    /// (`tcp_xmit_retransmit_queue`'s walk). None also once `retrans_out ≥ lost_out`.
    pub fn next_to_retransmit(&mut self) -> Option<i64> {
        if self.retrans_out >= self.lost_out {
            return None;
        }
        let start = usize::try_from(self.rtx_hint - self.una).unwrap_or(0);
        for (i, s) in self.segs.iter().enumerate().skip(start) {
            if s.lost && !s.sacked && !s.retrans {
                self.rtx_hint = self.una + i as i64;
                return Some(self.una + i as i64);
            }
        }
        self.rtx_hint = self.nxt();
        None
    }

    /// RACK's `tcp_rack_advance` for a packet delivered now.
    fn rack_advance(
        &mut self,
        ever_retrans: bool,
        seq: i64,
        sent: Time,
        now: Time,
        min_rtt_ns: u64,
    ) {
        let rtt = now.as_nanos().saturating_sub(sent.as_nanos());
        // A retransmitted packet SACKed sooner than the minimum RTT was the original's
        // delivery: ambiguous, skipped.
        if ever_retrans && rtt < min_rtt_ns {
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt_ns = rtt;
        if sent_after(sent, self.rack.mstamp, seq + 1, self.rack.end_seq) {
            self.rack.mstamp = sent;
            self.rack.end_seq = seq + 1;
        }
    }

    /// Tag the packets of SACK block `[left, right)` (`tcp_sacktag_one`); blocks are
    /// clipped to what is outstanding. `high_seq` is the recovery point.
    pub fn sack(
        &mut self,
        left: i64,
        right: i64,
        now: Time,
        high_seq: i64,
        min_rtt_ns: u64,
        fx: &mut AckEffects,
    ) {
        let lo = left.max(self.una);
        let hi = right.min(self.nxt());
        for seq in lo..hi {
            let i = (seq - self.una) as usize;
            let s = self.segs[i];
            if s.sacked {
                continue;
            }
            self.rack_advance(s.ever_retrans, seq, s.sent, now, min_rtt_ns);
            let mut n = s;
            if s.retrans {
                // A retransmission still deemed in flight stays counted unless it was lost.
                if s.lost {
                    n.lost = false;
                    n.retrans = false;
                    self.lost_out -= 1;
                    self.retrans_out -= 1;
                }
            } else {
                if !s.ever_retrans {
                    if seq < high_seq {
                        fx.orig_sack_acked = true;
                    }
                    fx.first_sackt.get_or_insert(s.sent);
                    fx.last_sackt = Some(s.sent);
                }
                if s.lost {
                    n.lost = false;
                    self.lost_out -= 1;
                }
            }
            n.sacked = true;
            self.segs[i] = n;
            self.sacked_out += 1;
            fx.data_sacked = true;
            fx.delivered += 1;
            self.highest_sack = self.highest_sack.max(seq + 1);
        }
    }

    /// Remove every packet below `ack` (`tcp_clean_rtx_queue`).
    pub fn clean(
        &mut self,
        ack: i64,
        now: Time,
        high_seq: i64,
        min_rtt_ns: u64,
        fx: &mut AckEffects,
    ) {
        while self.una < ack {
            let Some(s) = self.segs.pop_front() else {
                self.una = ack;
                break;
            };
            let seq = self.una;
            self.una += 1;
            fx.pkts_acked += 1;
            fx.data_acked = true;
            if s.ever_retrans {
                if s.retrans {
                    self.retrans_out -= 1;
                }
                fx.retrans_data_acked = true;
            } else if !s.sacked {
                fx.first_ackt.get_or_insert(s.sent);
                fx.last_ackt = Some(s.sent);
                if seq < high_seq {
                    fx.orig_sack_acked = true;
                }
            }
            if s.sacked {
                self.sacked_out -= 1;
            } else {
                fx.delivered += 1;
                self.rack_advance(s.ever_retrans, seq, s.sent, now, min_rtt_ns);
            }
            if s.lost {
                self.lost_out -= 1;
            }
        }
        self.rtx_hint = self.rtx_hint.max(self.una);
        if self.segs.is_empty() {
            self.tsorted.clear();
        }
    }

    /// `tcp_mark_skb_lost`: a packet not yet lost becomes lost; a lost packet whose
    /// retransmission was in flight has lost that retransmission too.
    fn mark_lost(&mut self, seq: i64) {
        let Some(s) = self.seg(seq) else {
            return;
        };
        if s.sacked || (s.lost && !s.retrans) {
            return;
        }
        if s.lost {
            s.retrans = false;
            self.retrans_out -= 1;
        } else {
            s.lost = true;
            self.lost_out += 1;
        }
        self.lost_total += 1;
        self.rtx_hint = self.rtx_hint.min(seq);
    }

    /// RACK's `tcp_rack_detect_loss` with reordering window `reo_wnd_ns`: every packet sent
    /// before the most recently delivered one and outstanding for longer than RACK's RTT plus
    /// the window is lost. Returns the time until the earliest other such packet would
    /// qualify (0: none), ns.
    pub fn rack_detect_loss(&mut self, now: Time, reo_wnd_ns: u64) -> u64 {
        let mut timeout = 0u64;
        let mut i = 0;
        while i < self.tsorted.len() {
            let (seq, t) = self.tsorted[i];
            let live = match usize::try_from(seq - self.una)
                .ok()
                .and_then(|k| self.segs.get(k))
            {
                Some(s) => s.sent == t && !s.sacked && (s.retrans || !s.lost),
                None => false,
            };
            if !live {
                if i == 0 {
                    self.tsorted.pop_front();
                } else {
                    i += 1;
                }
                continue;
            }
            if !sent_after(self.rack.mstamp, t, self.rack.end_seq, seq + 1) {
                break;
            }
            let waited = now.as_nanos().saturating_sub(t.as_nanos());
            let limit = self.rack.rtt_ns + reo_wnd_ns;
            if waited >= limit {
                self.mark_lost(seq);
                if i == 0 {
                    self.tsorted.pop_front();
                } else {
                    i += 1;
                }
            } else {
                timeout = timeout.max(limit - waited);
                i += 1;
            }
        }
        timeout
    }

    /// `tcp_timeout_mark_lost`: at a retransmission timeout the first packet and every
    /// packet not SACKed and sent longer than RACK's RTT ago are lost.
    pub fn timeout_mark_lost(&mut self, now: Time) {
        let rtt = self.rack.rtt_ns;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.sacked {
                continue;
            }
            let recent = now.as_nanos().saturating_sub(s.sent.as_nanos()) < rtt;
            if i > 0 && recent {
                continue;
            }
            self.mark_lost(self.una + i as i64);
        }
    }

    /// Forget every loss mark (`tcp_undo_cwnd_reduction` with `unmark_loss`).
    pub fn unmark_lost(&mut self) {
        for s in self.segs.iter_mut() {
            s.lost = false;
        }
        self.lost_out = 0;
    }

    /// Keep the transmission-order list within a few times the queue.
    fn compact(&mut self) {
        if self.tsorted.len() > 2 * self.segs.len() + 64 {
            let (una, segs) = (self.una, &self.segs);
            self.tsorted.retain(|&(seq, t)| {
                usize::try_from(seq - una)
                    .ok()
                    .and_then(|k| segs.get(k))
                    .is_some_and(|s| s.sent == t && !s.sacked)
            });
        }
    }

    /// Whether packet `seq` is SACKed (tests and the loss probe).
    pub fn is_sacked(&self, seq: i64) -> bool {
        usize::try_from(seq - self.una)
            .ok()
            .and_then(|k| self.segs.get(k))
            .is_some_and(|s| s.sacked)
    }
}

/// `tcp_skb_sent_after`: sent later, or at the same time with a higher sequence.
fn sent_after(t1: Time, t2: Time, seq1: i64, seq2: i64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_nanos(x * 1_000_000)
    }

    /// Ten packets 1..=10 sent 1 ms apart from t = 0.
    fn ten() -> RtxQueue {
        let mut q = RtxQueue::new(1);
        for k in 0..10 {
            q.push_new(ms(k));
        }
        q
    }

    #[test]
    fn sack_and_clean_keep_the_counters() {
        let mut q = ten();
        let mut fx = AckEffects::default();
        q.sack(3, 6, ms(25), 11, 0, &mut fx);
        assert_eq!((q.sacked_out(), q.in_flight()), (3, 7));
        assert!(fx.data_sacked && fx.orig_sack_acked);
        assert_eq!(fx.first_sackt, Some(ms(2)));
        assert_eq!(fx.last_sackt, Some(ms(4)));
        let mut fx = AckEffects::default();
        q.clean(6, ms(26), 11, 0, &mut fx);
        assert_eq!((q.una(), q.sacked_out(), q.packets_out()), (6, 0, 5));
        assert_eq!(fx.pkts_acked, 5);
        assert_eq!(fx.delivered, 2, "3..5 were delivered by the SACK");
    }

    #[test]
    fn rack_marks_what_was_sent_before_the_delivered_packet_after_an_rtt() {
        let mut q = ten();
        let mut fx = AckEffects::default();
        // Packet 5 (sent at 4 ms) SACKed at 24 ms: RACK RTT 20 ms.
        q.sack(5, 6, ms(24), 11, 0, &mut fx);
        assert_eq!(q.rack.rtt_ns, 20_000_000);
        // With no reordering window, 1..4 (sent 0–3 ms) have waited ≥ 20 ms: lost.
        let t = q.rack_detect_loss(ms(24), 0);
        assert_eq!(q.lost_out(), 4);
        assert_eq!(t, 0);
        // With a 5-ms window they would wait until 20 + 5 ms after their own sending.
        let mut q = ten();
        q.sack(5, 6, ms(24), 11, 0, &mut AckEffects::default());
        let t = q.rack_detect_loss(ms(24), 5_000_000);
        assert_eq!(q.lost_out(), 0);
        assert_eq!(t, 4_000_000, "packet 4, sent at 3 ms, qualifies at 28 ms");
        assert_eq!(q.next_to_retransmit(), None);
    }

    #[test]
    fn lost_retransmission_is_detected_and_resent() {
        let mut q = ten();
        q.sack(3, 11, ms(25), 11, 0, &mut AckEffects::default());
        q.rack_detect_loss(ms(25), 0);
        assert_eq!(q.lost_out(), 2);
        assert_eq!(q.next_to_retransmit(), Some(1));
        q.retransmitted(1, ms(25));
        assert_eq!(q.next_to_retransmit(), Some(2));
        q.retransmitted(2, ms(25));
        assert_eq!(q.in_flight(), 2);
        // A packet sent after the retransmissions is delivered (a new packet 11 at 26 ms,
        // SACKed at 50 ms): both retransmissions, sent before it and older than RACK's
        // RTT, are lost again.
        q.push_new(ms(26));
        q.sack(11, 12, ms(50), 11, 0, &mut AckEffects::default());
        q.rack_detect_loss(ms(60), 0);
        assert_eq!(q.retrans_out(), 0);
        assert_eq!(q.lost_out(), 2);
        assert_eq!(q.next_to_retransmit(), Some(1));
    }

    #[test]
    fn timeout_marks_all_but_recent_packets() {
        let mut q = ten();
        q.sack(9, 10, ms(30), 11, 0, &mut AckEffects::default()); // RACK RTT 22 ms
        q.timeout_mark_lost(ms(31));
        // 1..=8 lost (sent ≥ 23 ms ago); 10, sent at 9 ms, waited 22 ms = RTT: lost too.
        assert_eq!(q.lost_out(), 9);
        assert_eq!(q.in_flight(), 0);
    }
}
