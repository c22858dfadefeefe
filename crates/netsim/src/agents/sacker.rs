//! The SACK half of NS-2.35's `Agent/TCPSink/Sack1` (its `Sacker`): which SACK blocks an ACK
//! carries. `docs/ns2-reference.md` ("SACK receiver") restates the rules.
//!
//! NS-2 builds the blocks from its receive bitmap `seen_`, a ring indexed by sequence modulo
//! its size (64, doubled whenever a packet lands a ring's length beyond the in-order point),
//! whose slots below the in-order point are never cleared. A duplicate far below the
//! cumulative ACK can therefore read a stale slot, which changes which old blocks the ACK
//! drops from its history. The ring is kept here exactly as NS-2 keeps it (separately from
//! the sink's own reassembly bookkeeping) so that such ACKs match NS-2's too.

use super::seq_ring::SeqRing;
use crate::packet::{SackBlocks, MAX_SACK_BLOCKS};

/// NS-2's initial `seen_` size (`MWS`).
const RING_INIT: usize = 64;
/// Largest ring kept: a packet further beyond the in-order point than this (never sent by a
/// real sender) is not recorded for SACK purposes, so arbitrary input cannot exhaust memory.
const RING_MAX: usize = 1 << 20;

/// NS-2's `Sacker` (with the `Acker` bitmap it reads). See the [module docs](self).
#[derive(Clone, Debug)]
pub(crate) struct Sacker {
    /// `maxSackBlocks_` (at most [`MAX_SACK_BLOCKS`]).
    nblocks: usize,
    /// `next_`: next sequence expected in order.
    next: i64,
    /// `maxseen_`.
    maxseen: i64,
    /// `seen_`: bytes received per slot, indexed by `seq & (len - 1)`.
    seen: SeqRing<u32>,
    /// `is_dup_`: the last packet had been received before.
    is_dup: bool,
    /// Sequence of the last packet recorded (the packet an ACK answers).
    last_seq: i64,
    /// The `SackStack`: earlier blocks, newest first; `(-1, -1)` marks an empty slot.
    stack: [(i64, i64); MAX_SACK_BLOCKS],
    /// Entries in `stack`.
    cnt: usize,
}

impl Sacker {
    /// A sacker reporting up to `nblocks` blocks (capped at NS-2's `NSA`, 3).
    pub(crate) fn new(nblocks: u32) -> Self {
        Sacker {
            nblocks: (nblocks as usize).min(MAX_SACK_BLOCKS),
            next: 0,
            maxseen: 0,
            seen: SeqRing::new(RING_INIT),
            is_dup: false,
            last_seq: 0,
            stack: [(-1, -1); MAX_SACK_BLOCKS],
            cnt: 0,
        }
    }

    fn mask(&self) -> i64 {
        self.seen.len() as i64 - 1
    }

    fn seen_at(&self, i: i64) -> u32 {
        self.seen.get(i)
    }

    fn set_seen(&mut self, i: i64, v: u32) {
        self.seen.set(i, v);
    }

    /// `Acker::update()` as far as the bitmap goes: record packet `seq` of `bytes` bytes.
    pub(crate) fn update(&mut self, seq: i64, bytes: u32) {
        self.last_seq = seq;
        self.is_dup = false;
        if seq < 0 {
            return;
        }
        let bytes = bytes.max(1);
        // resize_buffers(): double while the packet is a ring's length past next_.
        while seq + 1 - self.next >= self.mask() {
            if self.seen.len() * 2 > RING_MAX {
                self.last_seq = -1;
                return;
            }
            self.seen.double(self.next..=self.maxseen + 1);
        }
        let mut just_seen = false;
        if seq > self.maxseen {
            for i in self.maxseen + 1..seq {
                self.set_seen(i, 0);
            }
            self.maxseen = seq;
            self.set_seen(seq, bytes);
            self.set_seen(seq + 1, 0);
            just_seen = true;
        }
        if seq < self.next {
            self.is_dup = true;
        }
        if seq >= self.next && seq <= self.maxseen {
            if self.seen_at(seq) != 0 && !just_seen {
                self.is_dup = true;
            }
            self.set_seen(seq, bytes);
            while self.seen_at(self.next) != 0 {
                self.next += 1;
            }
        }
    }

    fn stack_push(&mut self, block: (i64, i64)) {
        let size = self.nblocks;
        if self.cnt >= size {
            self.cnt = size - 1;
        }
        for i in (0..self.cnt).rev() {
            self.stack[i + 1] = self.stack[i];
        }
        self.cnt += 1;
        self.stack[0] = block;
    }

    fn stack_pop(&mut self, n: usize) {
        let mut i = n;
        while i + 1 < self.cnt {
            self.stack[i] = self.stack[i + 1];
            i += 1;
        }
        self.stack[i] = (-1, -1);
        self.cnt -= 1;
    }

    fn stack_reset(&mut self) {
        self.stack = [(-1, -1); MAX_SACK_BLOCKS];
        self.cnt = 0;
    }

    /// `Sacker::append_ack()`: the blocks for an ACK answering the last packet recorded. The
    /// first block holds that packet (if it lies above the cumulative ACK); then earlier
    /// blocks from the history that the first does not cover.
    pub(crate) fn blocks(&mut self) -> SackBlocks {
        let mut out = SackBlocks::default();
        let old = self.last_seq;
        let seqno = self.next - 1;
        if old < 0 {
            return out;
        }
        if seqno >= self.maxseen && self.cnt != 0 {
            self.stack_reset();
            return out;
        }
        if !((seqno < self.maxseen || self.is_dup) && self.nblocks > 0) {
            return out;
        }
        let right = (old..=self.maxseen)
            .find(|&i| self.seen_at(i) == 0)
            .unwrap_or(self.maxseen + 1);
        let left = if old <= seqno {
            0
        } else {
            let l = (seqno + 1..right)
                .rev()
                .find(|&i| self.seen_at(i) == 0)
                .map_or(-1, |i| i + 1);
            out.push(l, right);
            l
        };
        let recent = (left, right);
        let mut k = 0;
        while out.len() < self.nblocks {
            let (l, r) = self.stack[k];
            if l < 0 || r < 0 || r > self.maxseen + 1 {
                break;
            }
            if recent.0 <= l && recent.1 >= r {
                // The newest block covers this one.
                self.stack_pop(k);
                continue;
            }
            out.push(l, r);
            k += 1;
        }
        if old > seqno {
            self.stack_push(recent);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recv(s: &mut Sacker, seq: i64) -> Vec<(i64, i64)> {
        s.update(seq, 1040);
        s.blocks().iter().collect()
    }

    #[test]
    fn in_order_data_carries_no_blocks() {
        let mut s = Sacker::new(3);
        for q in 0..5 {
            assert!(recv(&mut s, q).is_empty());
        }
    }

    #[test]
    fn blocks_newest_first_and_covered_ones_dropped() {
        let mut s = Sacker::new(3);
        for q in 0..3 {
            recv(&mut s, q);
        }
        // 3 lost: 4, 5 form one block; 6 lost; 7 a second block.
        assert_eq!(recv(&mut s, 4), vec![(4, 5)]);
        assert_eq!(recv(&mut s, 5), vec![(4, 6)]);
        assert_eq!(recv(&mut s, 7), vec![(7, 8), (4, 6)]);
        // 9 lost, 10: three blocks.
        assert_eq!(recv(&mut s, 10), vec![(10, 11), (7, 8), (4, 6)]);
        // 6 arrives: joins 4..6 and 7 into one block, which covers both old ones.
        assert_eq!(recv(&mut s, 6), vec![(4, 8), (10, 11)]);
        // 3 arrives: cumulative ACK 7; the block of 10 stays.
        assert_eq!(recv(&mut s, 3), vec![(10, 11)]);
        // Everything in: no blocks, history cleared.
        recv(&mut s, 8);
        assert!(recv(&mut s, 9).is_empty());
        assert_eq!(s.cnt, 0);
    }

    #[test]
    fn at_most_nblocks() {
        let mut s = Sacker::new(2);
        recv(&mut s, 0);
        for q in [2, 4, 6, 8] {
            assert!(recv(&mut s, q).len() <= 2);
        }
        assert_eq!(recv(&mut s, 10), vec![(10, 11), (8, 9)]);
        let mut none = Sacker::new(0);
        recv(&mut none, 0);
        assert!(recv(&mut none, 2).is_empty());
    }

    proptest::proptest! {
        /// Any arrival order (duplicates included) gives at most `nblocks` blocks, and every
        /// block names packets that arrived.
        #[test]
        fn blocks_name_received_packets(
            n in 0u32..4,
            seqs in proptest::collection::vec(0i64..150, 1..200),
        ) {
            let mut s = Sacker::new(n);
            let mut got = std::collections::BTreeSet::new();
            for q in seqs {
                got.insert(q);
                s.update(q, 1040);
                let b = s.blocks();
                proptest::prop_assert!(b.len() <= n as usize);
                for (l, r) in b.iter() {
                    proptest::prop_assert!(l < r && (l..r).all(|x| got.contains(&x)));
                }
                if q >= s.next {
                    // Above the cumulative ACK: the first block is the run around it.
                    let (l, r) = b.iter().next().unwrap_or((-1, -1));
                    proptest::prop_assert!(n == 0 || (l <= q && q < r));
                }
            }
        }
    }

    #[test]
    fn ring_grows_and_survives_far_sequences() {
        let mut s = Sacker::new(3);
        recv(&mut s, 0);
        assert_eq!(recv(&mut s, 200), vec![(200, 201)]);
        assert!(s.seen.len() >= 256);
        // Beyond the cap: not recorded, no panic.
        s.update(1 << 40, 1040);
        let _ = s.blocks();
        s.update(-5, 40);
        assert!(s.blocks().is_empty());
    }
}
