//! NS-2.35's `Agent/TCPSink/Sack1`: one cumulative ACK per data packet, with a SACK option,
//! the receiver `Agent/TCP/Linux` (netsim's [`crate::agents::tcp::cubic`]) is run against.
//!
//! The SACK option (`Sacker::append_ack`, `maxSackBlocks_` 3, no D-SACK) is built only while
//! packets are held above a hole (or for a duplicate): its first block is the run of held
//! packets around the packet just received, and the remaining slots repeat earlier blocks
//! (most recent first) that the new one does not cover and that are still above the
//! cumulative ACK. Each block adds 8 bytes to the 40-byte ACK.
//!
//! Timestamps: with `ts_echo_rfc1323_` true (what the CUBIC validation uses) the echoed
//! timestamp is the one of the packet that advanced the cumulative ACK (RFC 1323: the next
//! expected one), otherwise NS-2's `ts_echo_bugfix_` rule.
//!
//! netsim's `tcp_sink` covers `Agent/TCPSink`; this file is separate so that it adds to, and
//! does not change, that hot path.

use crate::agent::{Agent, AgentCtx};
use crate::packet::{Header, Packet, PacketKind, SackBlocks, TcpHeader, MAX_SACK_BLOCKS};
use crate::Time;

/// Parameters of the SACK sink, named after NS-2's bound variables.
#[derive(Clone, Debug, PartialEq)]
pub struct SackSinkConfig {
    /// `packetSize_`: ACK size without SACK blocks, bytes.
    pub ack_size: u32,
    /// `maxSackBlocks_` (at most [`MAX_SACK_BLOCKS`]).
    pub max_sack_blocks: u8,
    /// `ts_echo_rfc1323_`.
    pub ts_echo_rfc1323: bool,
}

impl SackSinkConfig {
    /// `Agent/TCPSink/Sack1` with `ts_echo_rfc1323_ true`, as paired with `Agent/TCP/Linux`.
    pub fn ns2_linux() -> Self {
        SackSinkConfig {
            ack_size: 40,
            max_sack_blocks: MAX_SACK_BLOCKS as u8,
            ts_echo_rfc1323: true,
        }
    }
}

impl Default for SackSinkConfig {
    fn default() -> Self {
        SackSinkConfig::ns2_linux()
    }
}

/// What the sink has received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackSinkStats {
    /// Packets received, duplicates included.
    pub packets: u64,
    /// Packets received that were already held.
    pub duplicates: u64,
    /// Wire bytes released in order (NS-2's `bytes_`).
    pub bytes_in_order: u64,
    /// ACKs sent.
    pub acks_sent: u64,
}

/// NS-2's `Agent/TCPSink/Sack1`. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct SackSink {
    cfg: SackSinkConfig,
    /// Next sequence expected in order (`next_`).
    next: i64,
    /// Highest sequence seen (`maxseen_`).
    maxseen: i64,
    /// Packets held above `next`, with their sizes.
    held: std::collections::BTreeMap<i64, u32>,
    ts_to_echo: Time,
    last_ack_sent: i64,
    /// Earlier SACK blocks, most recent first (`SackStack`).
    history: Vec<(i64, i64)>,
    stats: SackSinkStats,
}

impl SackSink {
    /// A sink with configuration `cfg`.
    pub fn new(cfg: SackSinkConfig) -> Self {
        SackSink {
            cfg,
            next: 0,
            maxseen: 0,
            held: Default::default(),
            ts_to_echo: Time::ZERO,
            last_ack_sent: 0,
            history: Vec::new(),
            stats: SackSinkStats::default(),
        }
    }

    /// The cumulative ACK number (`Seqno()`).
    pub fn ack_number(&self) -> i64 {
        self.next - 1
    }

    /// Counters.
    pub fn stats(&self) -> SackSinkStats {
        self.stats
    }

    fn seen(&self, seq: i64) -> bool {
        seq < self.next || self.held.contains_key(&seq)
    }

    /// `Acker::update()`; returns whether the packet was a duplicate.
    fn update(&mut self, seq: i64, bytes: u32) -> bool {
        let newly_highest = seq > self.maxseen;
        if newly_highest {
            self.maxseen = seq;
        }
        if seq < self.next {
            self.stats.duplicates += 1;
            return true;
        }
        let dup = !newly_highest && self.held.contains_key(&seq);
        if dup {
            self.stats.duplicates += 1;
        }
        self.held.insert(seq, bytes);
        while let Some(b) = self.held.remove(&self.next) {
            self.stats.bytes_in_order += u64::from(b);
            self.next += 1;
        }
        dup
    }

    /// `Sacker::append_ack()`: the SACK blocks for an ACK of packet `old`.
    fn sack_blocks(&mut self, old: i64, dup: bool) -> SackBlocks {
        let mut out = SackBlocks::default();
        let nblocks = usize::from(self.cfg.max_sack_blocks).min(MAX_SACK_BLOCKS);
        let seqno = self.ack_number();
        if old < 0 {
            return out;
        }
        if seqno >= self.maxseen && !self.history.is_empty() {
            self.history.clear();
            return out;
        }
        if !((seqno < self.maxseen || dup) && nblocks > 0) {
            return out;
        }
        // The run of received packets around `old`: right edge at the first hole at or
        // after it, left edge after the first hole below that.
        let mut right = self.maxseen + 1;
        let mut i = old;
        while i <= self.maxseen {
            if !self.seen(i) {
                right = i;
                break;
            }
            i += 1;
        }
        let mut left = 0;
        if old > seqno {
            let mut j = right - 1;
            while j > seqno {
                if !self.seen(j) {
                    left = j + 1;
                    break;
                }
                j -= 1;
            }
            out.blocks[0] = (left, right);
            out.len = 1;
        }
        // Earlier blocks not covered by the new one, most recent first.
        let mut k = 0;
        while usize::from(out.len) < nblocks && k < self.history.len() {
            let (l, r) = self.history[k];
            if l < 0 || r < 0 || r > self.maxseen + 1 {
                break;
            }
            if left <= l && right >= r {
                self.history.remove(k);
                continue;
            }
            out.blocks[usize::from(out.len)] = (l, r);
            out.len += 1;
            k += 1;
        }
        if old > seqno {
            self.history.insert(0, (left, right));
            self.history.truncate(nblocks);
        }
        out
    }
}

impl Agent for SackSink {
    fn on_start(&mut self, _ctx: &mut AgentCtx<'_>) {}

    fn on_stop(&mut self, _ctx: &mut AgentCtx<'_>) {}

    fn on_packet(&mut self, pkt: Packet, ctx: &mut AgentCtx<'_>) {
        let hdr = match (&pkt.kind, &pkt.header) {
            (PacketKind::Tcp, Header::Tcp(h)) => *h,
            _ => return,
        };
        self.stats.packets += 1;
        // Acker::update_ts().
        let next_expected = hdr.seqno == self.last_ack_sent + 1;
        let newer_at_or_below = hdr.ts >= self.ts_to_echo && hdr.seqno <= self.last_ack_sent + 1;
        if (self.cfg.ts_echo_rfc1323 && next_expected) || newer_at_or_below {
            self.ts_to_echo = hdr.ts;
        }
        let dup = self.update(hdr.seqno, pkt.size);
        let blocks = self.sack_blocks(hdr.seqno, dup);
        let seqno = self.ack_number();
        let tcp = TcpHeader {
            seqno,
            ts: ctx.now(),
            ts_echo: self.ts_to_echo,
            syn: false,
        };
        let size = self.cfg.ack_size + 8 * u32::from(blocks.len);
        let header = if blocks.len == 0 {
            Header::Tcp(tcp)
        } else {
            Header::TcpSack(tcp, blocks)
        };
        let ack = ctx.packet(PacketKind::Ack, size, 0, seqno, header);
        ctx.send(ack);
        self.last_ack_sent = seqno;
        self.stats.acks_sent += 1;
    }

    fn on_wake(&mut self, _ctx: &mut AgentCtx<'_>) {}

    fn next_wake(&self) -> Option<Time> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Direction;
    use crate::testing::packet;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn deliver(s: &mut SackSink, seq: i64) -> (i64, Vec<(i64, i64)>, u32) {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut out = Vec::new();
        let mut ctx = AgentCtx::new(Time::ZERO, 1, Direction::Reverse, 1, 0, &mut rng, &mut out);
        let p = Packet {
            flow: 1,
            kind: PacketKind::Tcp,
            header: Header::Tcp(TcpHeader {
                seqno: seq,
                ..TcpHeader::default()
            }),
            ..packet(seq, 1050)
        };
        s.on_packet(p, &mut ctx);
        let a = out.pop().expect("one ACK per packet");
        let blocks = match a.header {
            Header::TcpSack(_, b) => b.as_slice().to_vec(),
            _ => Vec::new(),
        };
        (a.seq, blocks, a.size)
    }

    #[test]
    fn blocks_describe_held_runs_newest_first() {
        let mut s = SackSink::new(SackSinkConfig::ns2_linux());
        for q in 0..=2 {
            assert_eq!(deliver(&mut s, q), (q, vec![], 40));
        }
        // 3 lost; 4, 5 held.
        assert_eq!(deliver(&mut s, 4), (2, vec![(4, 5)], 48));
        assert_eq!(deliver(&mut s, 5), (2, vec![(4, 6)], 48));
        // 6 lost; 7 held: a second block, the older one repeated.
        assert_eq!(deliver(&mut s, 7), (2, vec![(7, 8), (4, 6)], 56));
        // 3 arrives: the ACK jumps to 5, the block above the new hole remains.
        assert_eq!(deliver(&mut s, 3), (5, vec![(7, 8)], 48));
        // 6 fills the last hole: no blocks.
        assert_eq!(deliver(&mut s, 6), (7, vec![], 40));
    }
}
