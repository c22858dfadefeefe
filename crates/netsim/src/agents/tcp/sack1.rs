//! SACK loss recovery (NS-2's `Sack1TcpAgent`, `Agent/TCP/Sack1`): Tahoe's window rules, a
//! scoreboard of the SACK blocks the sink reported, and a fast recovery in which a `pipe_`
//! count of packets in flight, not window inflation, clocks out retransmissions of the holes
//! and new data. `docs/ns2-reference.md` ("SACK sender") restates the behaviour.
//!
//! - On the `numdupacks_`-th duplicate ACK that SACKs something new: `recover_ = maxseq_`,
//!   `pipe_ = maxseq_ - highest_ack_ - numdupacks_`, halve cwnd and ssthresh, retransmit the
//!   first hole. At most one such cut per window (`bugFix_`, via `recover_`).
//! - In recovery every ACK decrements `pipe_`, a partial ACK twice (and restarts the timer and
//!   clears the backoff); while `pipe_ < cwnd_` the sender sends the next hole above the last
//!   retransmission that has a SACK block above it, else new data within `window_` of the
//!   cumulative ACK, one `pipe_` each. An ACK at or past `recover_` ends recovery (no window
//!   growth on it).
//! - A timeout clears the scoreboard, leaves recovery and ignores duplicate ACKs until the next
//!   new ACK.
//!
//! Not modelled (off by default in NS-2): `partial_ack_`, `oldCode_`, `LimTransmitFix_`,
//! SACK-based F-RTO, ECN, Quick-Start, and D-SACK.

use crate::agent::AgentCtx;
use crate::packet::SackBlocks;

use super::{CwndAction, CwndCut, Slowdown, TcpSender};

/// The sender's scoreboard: NS-2's `ScoreBoardRQ`, a shim over the reassembly queue of its
/// full TCP. Blocks of SACKed sequences `[start, end)`, sorted and disjoint, plus the
/// retransmission point `h_seqno_` and `sack_min` (one past the cumulative ACK it knows).
#[derive(Clone, Debug, Default)]
pub(crate) struct Scoreboard {
    blocks: Vec<(i64, i64)>,
    /// Sequences covered (`total_`).
    total: i64,
    /// Next sequence to consider for retransmission (`h_seqno_`), -1 after a clear.
    h_seqno: i64,
    /// `sack_min`: the reassembly queue's `rcv_nxt_`, shared with it.
    sack_min: i64,
    /// The last update changed the scoreboard (`changed_`).
    changed: bool,
}

impl Scoreboard {
    fn new() -> Self {
        Scoreboard {
            h_seqno: -1,
            sack_min: -1,
            ..Scoreboard::default()
        }
    }

    /// `ClearScoreBoard()` (`sack_min` survives).
    fn clear(&mut self) {
        self.blocks.clear();
        self.total = 0;
        self.h_seqno = -1;
    }

    /// `MarkRetran()`.
    fn mark_retran(&mut self, seq: i64) {
        if seq >= self.h_seqno {
            self.h_seqno = seq + 1;
        }
    }

    /// `UpdateScoreBoard(last_ack, sacks)`: forget what the cumulative ACK covers, add the
    /// blocks; `changed` says whether anything moved.
    fn update(&mut self, last_ack: i64, sack: &SackBlocks) {
        let old_total = self.total;
        self.changed = false;
        if self.sack_min <= last_ack {
            self.sack_min = last_ack + 1;
            if !self.blocks.is_empty() {
                self.clear_to(self.sack_min);
                self.changed = true;
            }
        }
        for (l, r) in sack.iter() {
            self.add(l, r);
        }
        self.changed = self.changed || old_total != self.total;
    }

    /// `clearto(seq)`: drop blocks ending at or below `seq`, trim one straddling it.
    fn clear_to(&mut self, seq: i64) {
        let keep = self.blocks.iter().position(|b| b.1 > seq);
        let n = keep.unwrap_or(self.blocks.len());
        for b in self.blocks.drain(..n) {
            self.total -= b.1 - b.0;
        }
        if let Some(b) = self.blocks.first_mut() {
            if b.0 <= seq {
                self.total -= seq - b.0;
                b.0 = seq;
            }
        }
    }

    /// `ReassemblyQueue::add(start, end)`: merge `[start, end)` in, keeping the queue's
    /// side effect on `rcv_nxt_` (here `sack_min`): a block reaching down to it moves it to
    /// the block's end.
    fn add(&mut self, start: i64, end: i64) {
        if end < start {
            // NS-2 aborts; a malformed block is ignored here.
            return;
        }
        let (mut start, mut end) = (start, end);
        if self.blocks.is_empty() {
            self.blocks.push((start, end));
            self.total = end - start;
            if self.sack_min >= start {
                self.sack_min = end;
            }
            return;
        }
        let mut needmerge = false;
        // p: index of the block before the new one, q: of the block after (None: none).
        let (p, q);
        loop {
            let last = self.blocks.len() - 1;
            if start >= self.blocks[last].1 {
                needmerge = start == self.blocks[last].1;
                p = Some(last);
                q = None;
                break;
            }
            if end <= self.blocks[0].0 {
                needmerge = end == self.blocks[0].0;
                p = None;
                q = Some(0);
                break;
            }
            let qi = self.blocks.iter().position(|b| b.0 >= end);
            let pi = self.blocks.iter().rposition(|b| b.1 <= start);
            // Remove blocks the new one covers completely; an exact copy changes nothing.
            let from = pi.unwrap_or(0);
            let to = qi.unwrap_or(self.blocks.len());
            let mut altered = false;
            let mut r = from;
            let mut to_now = to;
            while r < to_now {
                let b = self.blocks[r];
                if start == b.0 && end == b.1 {
                    return;
                } else if start <= b.0 && end >= b.1 {
                    self.total -= b.1 - b.0;
                    self.blocks.remove(r);
                    to_now -= 1;
                    altered = true;
                } else {
                    r += 1;
                }
            }
            if self.blocks.is_empty() {
                self.blocks.push((start, end));
                self.total += end - start;
                if self.sack_min >= start {
                    self.sack_min = end;
                }
                return;
            }
            if altered {
                continue;
            }
            // Left-side merge: extend the first block overlapping the new one downwards.
            let mut pp = pi;
            if pi.is_none_or(|i| self.blocks[i + 1].0 < start) {
                let i = pi.map_or(0, |i| i + 1);
                if start < self.blocks[i].0 {
                    self.total += self.blocks[i].0 - start;
                    self.blocks[i].0 = start;
                }
                start = self.blocks[i].1;
                needmerge = true;
                pp = Some(i);
            }
            // Right-side merge: extend the last block overlapping it upwards.
            let mut qq = qi;
            if qi.is_none_or(|i| self.blocks[i - 1].1 > end) {
                let i = qi.map_or(self.blocks.len() - 1, |i| i - 1);
                if end > self.blocks[i].1 {
                    self.total += end - self.blocks[i].1;
                    self.blocks[i].1 = end;
                }
                end = self.blocks[i].0;
                needmerge = true;
                qq = Some(i);
            }
            if end <= start {
                if self.sack_min >= self.blocks[0].0 {
                    self.sack_min = self.blocks[0].1;
                }
                return;
            }
            if !needmerge {
                if let (Some(a), Some(b)) = (pp, qq) {
                    if a + 1 == b && self.blocks[a].1 <= start && self.blocks[b].0 >= end {
                        needmerge = self.blocks[a].1 == start || self.blocks[b].0 == end;
                    }
                }
            }
            p = pp;
            q = qq;
            break;
        }
        // Insert between p and q, then coalesce with adjacent neighbours.
        let at = p.map_or(0, |i| i + 1);
        debug_assert!(q.is_none_or(|j| j == at));
        self.blocks.insert(at, (start, end));
        self.total += end - start;
        if !needmerge {
            if self.sack_min >= start {
                self.sack_min = end;
            }
            return;
        }
        let mut n = at;
        if n + 1 < self.blocks.len() && self.blocks[n].1 == self.blocks[n + 1].0 {
            self.blocks[n].1 = self.blocks[n + 1].1;
            self.blocks.remove(n + 1);
        }
        if n > 0 && self.blocks[n - 1].1 == self.blocks[n].0 {
            self.blocks[n - 1].1 = self.blocks[n].1;
            self.blocks.remove(n);
            n -= 1;
        }
        if self.sack_min >= self.blocks[n].0 {
            self.sack_min = self.blocks[n].1;
        }
    }

    /// `nexthole(seq)`: the first sequence at or above `seq` not SACKed, and how many blocks
    /// lie above it (-1: none known); `None` when `seq` is past every block.
    fn next_hole(&self, seq: i64) -> Option<(i64, i64)> {
        for (i, b) in self.blocks.iter().enumerate() {
            if b.0 > seq {
                return Some((seq, (self.blocks.len() - i) as i64));
            }
            if b.0 <= seq && b.1 >= seq {
                let above = self.blocks.len() - i - 1;
                return Some((b.1, if above > 0 { above as i64 } else { -1 }));
            }
        }
        None
    }

    /// `GetNextRetran()`: the next hole at or above the retransmission point with a SACK
    /// block above it, or `None`.
    fn next_retran(&mut self) -> Option<i64> {
        if self.h_seqno < self.sack_min {
            self.h_seqno = self.sack_min;
        }
        match self.next_hole(self.h_seqno) {
            Some((seq, above)) if seq > 0 => {
                if above <= 0 {
                    return None;
                }
                if seq > self.h_seqno {
                    self.h_seqno = seq;
                }
                Some(seq)
            }
            _ => None,
        }
    }
}

/// `Sack1TcpAgent`'s own state.
#[derive(Clone, Debug)]
pub(crate) struct Sack1State {
    scb: Scoreboard,
    /// `fastrecov_`.
    pub(crate) fastrecov: bool,
    /// `timeout_`: a timeout happened and no new ACK since.
    timeout: bool,
    /// `pipe_`: packets estimated in flight during fast recovery.
    pub(crate) pipe: i64,
}

impl Default for Sack1State {
    fn default() -> Self {
        Sack1State {
            scb: Scoreboard::new(),
            fastrecov: false,
            timeout: false,
            pipe: -1,
        }
    }
}

impl TcpSender {
    /// `Sack1TcpAgent::recv()` for an ACK of `ack` carrying `sack`.
    pub(crate) fn sack1_recv(&mut self, ack: i64, sack: &SackBlocks, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        let valid_ack = ack >= self.last_ack;
        let send = valid_ack || self.cfg.aggressive_maxburst;
        if !self.sack1.fastrecov {
            if ack > self.last_ack {
                self.recv_newack_helper(ack, now);
                self.sack1.timeout = false;
                self.sack1.scb.clear();
                self.after_first_ack();
            } else if ack == self.last_ack && !self.sack1.timeout {
                self.sack1.scb.update(self.highest_ack, sack);
                // A duplicate counts only if its SACK blocks say something new.
                if self.sack1.scb.changed {
                    self.dupacks += 1;
                    let ndup = i64::from(self.cfg.num_dupacks);
                    if self.dupacks == ndup {
                        self.sack1_dupack_action(ctx);
                    } else if self.dupacks < ndup && self.cfg.singledup {
                        self.send_one(ctx);
                    }
                }
            }
            if send && self.dupacks == 0 {
                self.send_much(false, self.cfg.max_burst, ctx);
            }
        } else {
            self.sack1.pipe -= 1;
            if ack >= self.recover {
                // Recovery is over.
                self.recover = 0;
                self.sack1.fastrecov = false;
                self.newack(ack, now);
                self.sack1.timeout = false;
                self.sack1.scb.clear();
            } else if ack > self.highest_ack {
                // A partial ACK: advance highest_ack_ (not last_ack_); the retransmission it
                // acknowledges has left the network too.
                self.highest_ack = ack;
                self.sack1.scb.update(self.highest_ack, sack);
                self.sack1.pipe -= 1;
                self.newtimer(now, ack);
                self.rtt.reset_backoff();
            } else if !self.sack1.timeout {
                self.sack1.scb.update(self.highest_ack, sack);
                if self.sack1.scb.changed && self.dupacks > 0 {
                    self.dupacks += 1;
                }
            }
            if send {
                self.send_much(false, self.cfg.max_burst, ctx);
            }
        }
    }

    /// `Sack1TcpAgent::dupack_action()`: enter fast recovery unless this window was already
    /// cut (`bugFix_`).
    fn sack1_dupack_action(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        if !(self.fast_retransmit_allowed() || (self.cfg.bugfix_ss && self.highest_ack == 0)) {
            if self.ecn_dupack() {
                // This window was cut by ECN: recover the hole without a second cut.
                self.reset_rtx_timer(now, true, false);
                self.sack1.pipe = self.maxseq - self.highest_ack - i64::from(self.cfg.num_dupacks);
                self.sack1.fastrecov = true;
                self.sack1.scb.mark_retran(self.highest_ack + 1);
                self.output(self.last_ack + 1, ctx);
                return;
            }
            if self.cfg.bug_fix {
                return;
            }
        }
        self.recover = self.maxseq;
        self.sack1.pipe = self.maxseq - self.highest_ack - i64::from(self.cfg.num_dupacks);
        self.reset_rtx_timer(now, true, false);
        self.sack1.fastrecov = true;
        self.sack1.scb.mark_retran(self.highest_ack + 1);
        self.last_cwnd_action = CwndAction::DupAck;
        self.stats.fast_retransmits += 1;
        self.slowdown(Slowdown {
            ssthresh_half: true,
            cwnd: CwndCut::Half,
        });
        self.output(self.last_ack + 1, ctx);
    }

    /// `Sack1TcpAgent::timeout()` for the retransmission timer, then the shared timeout.
    pub(crate) fn sack1_timeout(&mut self, ctx: &mut AgentCtx<'_>) {
        self.dupacks = 0;
        self.sack1.fastrecov = false;
        self.sack1.timeout = true;
        if self.highest_ack > self.last_ack {
            self.last_ack = self.highest_ack;
        }
        self.recover = self.maxseq;
        self.sack1.scb.clear();
        self.rtx_timeout_common(ctx);
    }

    /// `Sack1TcpAgent::send_much()`: outside recovery, as much as the window allows from the
    /// cumulative ACK; in recovery, while `pipe_ < cwnd_`. Holes the scoreboard names go
    /// first, then new data.
    pub(crate) fn sack1_send_much(&mut self, force: bool, maxburst: u32, ctx: &mut AgentCtx<'_>) {
        if !force && self.delsnd_timer.is_some() {
            return;
        }
        let wnd = i64::from(self.cfg.window);
        let mut win = self.window();
        let mut npackets = 0u32;
        loop {
            let fr = self.sack1.fastrecov;
            let open = if fr {
                self.sack1.pipe < self.cwnd as i64
            } else {
                self.t_seqno <= self.last_ack + win
            };
            if !open || self.last_ack + 1 >= self.curseq {
                break;
            }
            if !(self.cfg.overhead.is_zero() || force) {
                if self.delsnd_timer.is_none() {
                    self.arm_delsnd(ctx);
                }
                return;
            }
            let xmit = match self.sack1.scb.next_retran() {
                None => {
                    let limit = self.highest_ack + if fr { wnd } else { win };
                    if self.t_seqno <= limit && self.t_seqno < self.curseq {
                        let s = self.t_seqno;
                        self.t_seqno += 1;
                        Some(s)
                    } else {
                        None
                    }
                }
                Some(s) if self.recover > 0 && s <= self.highest_ack + wnd => {
                    self.sack1.scb.mark_retran(s);
                    win = self.window();
                    Some(s)
                }
                Some(_) => None,
            };
            let Some(seq) = xmit else { break };
            self.output(seq, ctx);
            if self.t_seqno <= seq {
                self.t_seqno = seq + 1;
            }
            npackets += 1;
            self.sack1.pipe += 1;
            if maxburst != 0 && npackets == maxburst {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::TcpVariant;
    use super::*;

    fn sb(blocks: &[(i64, i64)]) -> SackBlocks {
        let mut s = SackBlocks::default();
        for &(l, r) in blocks {
            s.push(l, r);
        }
        s
    }

    #[test]
    fn scoreboard_merges_and_finds_holes() {
        let mut s = Scoreboard::new();
        s.update(4, &sb(&[(6, 7)]));
        assert!(s.changed);
        assert_eq!(s.blocks, vec![(6, 7)]);
        s.update(4, &sb(&[(6, 8), (10, 11)]));
        assert_eq!(s.blocks, vec![(6, 8), (10, 11)]);
        assert_eq!(s.total, 3);
        // The same again: nothing new.
        s.update(4, &sb(&[(10, 11), (6, 8)]));
        assert!(!s.changed);
        // Holes with a block above them: 5, then 8 (9 too: 8..10 is one gap), not 11.
        assert_eq!(s.next_retran(), Some(5));
        s.mark_retran(5);
        assert_eq!(s.next_retran(), Some(8));
        s.mark_retran(8);
        assert_eq!(s.next_retran(), Some(9));
        s.mark_retran(9);
        assert_eq!(s.next_retran(), None);
        // A block bridging two merges them; a cumulative ACK trims.
        s.update(4, &sb(&[(7, 10)]));
        assert_eq!(s.blocks, vec![(6, 11)]);
        s.update(7, &sb(&[]));
        assert!(s.changed);
        assert_eq!(s.blocks, vec![(8, 11)]);
        assert_eq!(s.total, 3);
        s.update(7, &sb(&[(2, 20)]));
        assert_eq!(s.blocks, vec![(2, 20)]);
        assert_eq!(s.total, 18);
        s.clear();
        assert_eq!(s.next_retran(), None);
    }

    #[test]
    fn scoreboard_partial_overlaps() {
        let mut s = Scoreboard::new();
        s.update(0, &sb(&[(10, 20), (30, 40)]));
        s.update(0, &sb(&[(15, 33)]));
        assert_eq!(s.blocks, vec![(10, 40)]);
        assert_eq!(s.total, 30);
        s.update(0, &sb(&[(5, 12), (38, 45)]));
        assert_eq!(s.blocks, vec![(5, 45)]);
        assert_eq!(s.total, 40);
        s.update(0, &sb(&[(50, 52), (47, 49), (45, 47)]));
        assert_eq!(s.blocks, vec![(5, 49), (50, 52)]);
        assert_eq!(s.total, 46);
    }

    proptest::proptest! {
        /// Whatever blocks arrive, the scoreboard holds exactly their union (above what the
        /// cumulative ACK covers) as sorted, disjoint, non-adjacent blocks, and `total` counts it.
        #[test]
        fn scoreboard_is_the_union_of_its_blocks(
            adds in proptest::collection::vec((0i64..60, 1i64..8), 1..40),
        ) {
            let mut s = Scoreboard::new();
            let mut set = std::collections::BTreeSet::new();
            for (l, n) in adds {
                s.update(0, &sb(&[(l + 2, l + 2 + n)]));
                set.extend(l + 2..l + 2 + n);
            }
            let mut want = Vec::new();
            for &q in &set {
                match want.last_mut() {
                    Some((_, e)) if *e == q => *e += 1,
                    _ => want.push((q, q + 1)),
                }
            }
            proptest::prop_assert_eq!(&s.blocks, &want);
            proptest::prop_assert_eq!(s.total, set.len() as i64);
        }
    }

    /// After `open(.., 6)`: cwnd 8, 1..=14 sent. Lose 7 and 9; three SACKed duplicates.
    fn in_recovery() -> Harness<TcpSender> {
        let mut h = sender(TcpVariant::Sack, 100);
        open(&mut h, 6);
        assert_eq!(
            seqs(&h.at_ms(110.0).deliver(sack_ack(6, &[(8, 9)]))),
            vec![15]
        );
        let s = h.at_ms(111.0).deliver(sack_ack(6, &[(10, 11), (8, 9)]));
        assert_eq!(seqs(&s), vec![16]);
        let fr = h.at_ms(112.0).deliver(sack_ack(6, &[(10, 12), (8, 9)]));
        assert_eq!(seqs(&fr), vec![7]);
        assert_eq!(h.agent.cwnd(), 4.0);
        assert_eq!(h.agent.ssthresh(), 4);
        // pipe_ = maxseq_ - highest_ack_ - numdupacks_ = 16 - 6 - 3 (the retransmission is
        // not counted).
        assert_eq!(h.agent.sack1.pipe, 7);
        h
    }

    #[test]
    fn fast_recovery_retransmits_every_hole_by_pipe() {
        let mut h = in_recovery();
        // Duplicates: pipe falls 7 → 4 before anything goes (pipe < cwnd 4 opens at 3).
        let mut sent = Vec::new();
        for (t, hi) in [(113.0, 13), (114.0, 14), (115.0, 15), (116.0, 16)] {
            sent.extend(seqs(&h.at_ms(t).deliver(sack_ack(6, &[(10, hi), (8, 9)]))));
        }
        // The second hole (9) goes before any new data.
        assert_eq!(sent, vec![9]);
        // A partial ACK (7 repaired, 9 still out): pipe -2, timer restarted, new data.
        let p = h.at_ms(200.0).deliver(sack_ack(8, &[(10, 17)]));
        assert_eq!(seqs(&p), vec![17, 18]);
        assert_eq!(h.agent.highest_ack(), 8);
        assert!(h.agent.sack1.fastrecov);
        // The full ACK ends recovery without growing the window.
        h.at_ms(300.0).deliver(sack_ack(18, &[]));
        assert!(!h.agent.sack1.fastrecov);
        assert_eq!(h.agent.cwnd(), 4.0);
        assert_eq!(h.agent.stats().fast_retransmits, 1);
    }

    #[test]
    fn duplicates_without_new_sack_information_do_not_count() {
        let mut h = sender(TcpVariant::Sack, 100);
        open(&mut h, 6);
        for t in 0..5 {
            h.at_ms(110.0 + f64::from(t))
                .deliver(sack_ack(6, &[(8, 9)]));
        }
        assert_eq!(h.agent.dupacks(), 1);
        assert_eq!(h.agent.stats().fast_retransmits, 0);
    }

    #[test]
    fn timeout_clears_scoreboard_and_ignores_duplicates() {
        let mut h = in_recovery();
        let rto = h.wake_next();
        assert_eq!(seqs(&rto), vec![7]);
        assert!(!h.agent.sack1.fastrecov);
        assert_eq!(h.agent.cwnd(), 1.0);
        // Duplicates are ignored until a new ACK.
        let t = h.now.as_secs_f64() * 1000.0;
        for i in 0..4 {
            h.at_ms(t + 1.0 + f64::from(i))
                .deliver(sack_ack(6, &[(8, 9 + i64::from(i))]));
        }
        assert_eq!(h.agent.dupacks(), 0);
        assert_eq!(h.agent.stats().fast_retransmits, 1);
    }
}
