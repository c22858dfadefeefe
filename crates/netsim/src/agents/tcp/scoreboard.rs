//! The SACK scoreboard of NS-2.35's `Agent/TCP/Linux` (its `ScoreBoard1`, which loosely follows
//! Linux's `tcp_clean_rtx_queue` and `tcp_sacktag_write_queue`).
//!
//! Every packet between the cumulative ACK and the highest SACKed packet (`fack`) is in one of
//! four states: in flight, SACKed, deemed lost, or retransmitted (remembering `snd_nxt` at the
//! time and a retransmission counter). A packet is deemed lost once a packet
//! `numdupacks_ + 1` above it has been SACKed (FACK), and a retransmission is deemed lost again
//! once a packet sent after it was SACKed, or once a retransmission sent
//! `numdupacks_ + 1` later has been acknowledged. NS-2 stores runs of equal state as linked
//! blocks; this keeps one entry per packet (windows are at most a few thousand packets), which
//! gives the same marks except where noted on [`ScoreBoard::update`].
//!
//! `packets_in_flight = snd_nxt - snd_una - lost - sacked`, the quantity the sender's window is
//! compared with.

use std::collections::VecDeque;

/// One packet's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    /// Sent, not known to be SACKed or lost.
    InFlight,
    /// Covered by a SACK block.
    Sacked,
    /// Deemed lost: waiting to be retransmitted.
    Lost,
    /// Retransmitted when the next new packet was `snd_nxt`, as retransmission number `id`.
    Retransmitted { snd_nxt: i64, id: i64 },
}

/// Flags the update reports (`FLAG_DATA_SACKED`, `FLAG_DATA_LOST`, `FLAG_UNSURE_TSTAMP`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScoreFlags {
    /// A packet was newly SACKed.
    pub sacked: bool,
    /// A packet was newly deemed lost.
    pub lost: bool,
    /// A retransmitted packet was acknowledged (its timestamp is ambiguous).
    pub unsure_ts: bool,
}

/// The scoreboard. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct ScoreBoard {
    /// Sequence number of `marks[0]`.
    base: i64,
    marks: VecDeque<Mark>,
    /// Highest SACKed sequence (`fack_`), 0 when cleared.
    fack: i64,
    /// Packets marked lost (`fack_out_`).
    lost: i64,
    /// Packets marked SACKed (`sack_out_`).
    sacked: i64,
    /// Next retransmission id (`rtx_id_`) and the highest acknowledged one (`acked_rtx_id_`).
    rtx_id: i64,
    acked_rtx_id: i64,
    /// Where the search for the next packet to retransmit starts (`nxt_to_retrx_`).
    next_retx: Option<i64>,
    /// Scratch for an update's sorted SACK blocks, kept so that updates do not allocate.
    sacks: Vec<(i64, i64)>,
}

impl ScoreBoard {
    /// An empty scoreboard.
    pub fn new() -> Self {
        ScoreBoard {
            acked_rtx_id: -1,
            ..ScoreBoard::default()
        }
    }

    /// Nothing recorded.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// Packets deemed lost and not yet retransmitted.
    pub fn lost_count(&self) -> i64 {
        self.lost
    }

    /// Packets SACKed above the cumulative ACK.
    pub fn sacked_count(&self) -> i64 {
        self.sacked
    }

    /// `snd_nxt - snd_una - lost - sacked`.
    pub fn packets_in_flight(&self, snd_una: i64, snd_nxt: i64) -> i64 {
        snd_nxt - snd_una - self.lost - self.sacked
    }

    /// `ClearScoreBoard()`. The buffers keep their capacity for the next loss episode.
    pub fn clear(&mut self) {
        let mut marks = std::mem::take(&mut self.marks);
        let mut sacks = std::mem::take(&mut self.sacks);
        marks.clear();
        sacks.clear();
        *self = ScoreBoard {
            marks,
            sacks,
            ..ScoreBoard::new()
        };
    }

    fn mark(&self, seq: i64) -> Option<Mark> {
        let i = usize::try_from(seq - self.base).ok()?;
        self.marks.get(i).copied()
    }

    fn set(&mut self, seq: i64, m: Mark) {
        if let Ok(i) = usize::try_from(seq - self.base) {
            if let Some(slot) = self.marks.get_mut(i) {
                *slot = m;
            }
        }
    }

    fn end(&self) -> i64 {
        self.base + self.marks.len() as i64
    }

    /// Extend the board with in-flight packets up to `last` inclusive.
    fn extend_to(&mut self, last: i64) {
        // A bogus SACK far beyond anything sent must not allocate without bound; the sender
        // only passes blocks it has checked against snd_nxt.
        while self.end() <= last {
            self.marks.push_back(Mark::InFlight);
        }
    }

    /// `CleanRtxQueue()`: forget packets up to `last_ack`. Returns whether the highest
    /// acknowledged retransmission id grew.
    fn clean(&mut self, last_ack: i64, flags: &mut ScoreFlags) -> bool {
        let mut changed = false;
        while self.base <= last_ack {
            let Some(m) = self.marks.pop_front() else {
                break;
            };
            self.base += 1;
            match m {
                Mark::Sacked => self.sacked -= 1,
                Mark::Lost => self.lost -= 1,
                Mark::Retransmitted { id, .. } => {
                    if id > self.acked_rtx_id {
                        changed = true;
                        self.acked_rtx_id = id;
                    }
                    flags.unsure_ts = true;
                }
                Mark::InFlight => {}
            }
        }
        if self.marks.is_empty() {
            self.base = last_ack + 1;
        }
        if self.next_retx.is_some_and(|s| s < self.base) {
            self.next_retx = Some(self.base);
        }
        changed
    }

    /// `UpdateScoreBoard()` for an ACK of cumulative `last_ack` carrying `blocks`
    /// (`[left, right)`), with duplicate-ACK threshold `dupthresh`.
    ///
    /// As in NS-2, one pass from the left: once the SACK blocks are used up and nothing forces a
    /// thorough pass (`fack` advanced or a retransmission was acknowledged), the pass stops
    /// after the run of equally marked packets it is in (NS-2 stops after the block).
    pub fn update(&mut self, last_ack: i64, blocks: &[(i64, i64)], dupthresh: i64) -> ScoreFlags {
        let mut flags = ScoreFlags::default();
        let mut thorough = self.clean(last_ack, &mut flags);
        if self.marks.is_empty() {
            let base = self.base;
            self.clear();
            self.base = base;
            thorough = false;
        }
        if !thorough && blocks.is_empty() {
            return flags;
        }
        // Drop D-SACKs (blocks below the cumulative ACK) and sort by left edge.
        let mut sacks = std::mem::take(&mut self.sacks);
        sacks.clear();
        sacks.extend(blocks.iter().copied().filter(|&(l, _)| l >= last_ack));
        sacks.sort_by_key(|&(l, _)| l);
        let flags = self.apply(last_ack, &sacks, dupthresh, thorough, flags);
        self.sacks = sacks;
        flags
    }

    /// The part of [`ScoreBoard::update`] after the blocks are sorted.
    fn apply(
        &mut self,
        last_ack: i64,
        sacks: &[(i64, i64)],
        dupthresh: i64,
        mut thorough: bool,
        mut flags: ScoreFlags,
    ) -> ScoreFlags {
        if !thorough && sacks.is_empty() {
            return flags;
        }
        if let Some(&(_, right)) = sacks.last() {
            if self.fack < right - 1 {
                self.fack = right - 1;
                thorough = true;
            }
        }
        if self.marks.is_empty() {
            self.base = last_ack + 1;
        }
        self.extend_to(self.fack);
        self.next_retx = None;
        let lost_threshold = self.fack - (dupthresh + 1);
        let mut si = 0;
        let mut seq = self.base;
        // The mark of the run the pass is in, to finish it when the pass would stop.
        let mut run: Option<Mark> = None;
        while seq < self.end() {
            let m = self.mark(seq).unwrap_or(Mark::InFlight);
            if si >= sacks.len() && !thorough {
                let same_run = match (run, m) {
                    (Some(Mark::Retransmitted { .. }), _) | (_, Mark::Retransmitted { .. }) => {
                        false
                    }
                    (Some(r), m) => r == m,
                    (None, _) => false,
                };
                if !same_run {
                    break;
                }
            }
            run = Some(m);
            if m != Mark::Sacked {
                while si < sacks.len() && sacks[si].1 <= seq {
                    si += 1;
                }
                if si < sacks.len() && sacks[si].0 <= seq {
                    match m {
                        Mark::Lost => self.lost -= 1,
                        Mark::Retransmitted { id, .. } => {
                            self.acked_rtx_id = id;
                            flags.unsure_ts = true;
                            thorough = true;
                        }
                        _ => {}
                    }
                    self.sacked += 1;
                    flags.sacked = true;
                    self.set(seq, Mark::Sacked);
                } else {
                    match m {
                        Mark::Retransmitted { snd_nxt, id } => {
                            if snd_nxt <= self.fack || id + dupthresh + 1 < self.acked_rtx_id {
                                self.set(seq, Mark::Lost);
                                self.lost += 1;
                                flags.lost = true;
                                self.next_retx.get_or_insert(seq);
                            }
                        }
                        Mark::InFlight => {
                            if seq <= lost_threshold {
                                self.set(seq, Mark::Lost);
                                self.lost += 1;
                                flags.lost = true;
                                self.next_retx.get_or_insert(seq);
                            }
                        }
                        Mark::Lost => {
                            self.next_retx.get_or_insert(seq);
                        }
                        Mark::Sacked => {}
                    }
                }
            }
            seq += 1;
        }
        flags
    }

    /// `MarkLoss()` on a timeout: every packet from `snd_una` to `snd_nxt - 1` not SACKed is
    /// deemed lost.
    pub fn mark_loss(&mut self, snd_una: i64, snd_nxt: i64) {
        self.next_retx = None;
        if self.marks.is_empty() {
            self.base = snd_una;
        }
        self.extend_to(snd_nxt - 1);
        for i in 0..self.marks.len() {
            let seq = self.base + i as i64;
            match self.marks[i] {
                Mark::Sacked => {}
                Mark::Lost => {
                    self.next_retx.get_or_insert(seq);
                }
                _ => {
                    self.marks[i] = Mark::Lost;
                    self.lost += 1;
                    self.next_retx.get_or_insert(seq);
                }
            }
        }
        self.rtx_id = 0;
        self.acked_rtx_id = -1;
    }

    /// `GetNextRetran()`: the first packet deemed lost at or after the search point.
    pub fn next_retransmission(&mut self) -> Option<i64> {
        let mut s = self.next_retx?;
        while s < self.end() {
            if self.mark(s) == Some(Mark::Lost) {
                self.next_retx = Some(s);
                return Some(s);
            }
            s += 1;
        }
        self.next_retx = None;
        None
    }

    /// `MarkRetran()`: `seq` (from [`ScoreBoard::next_retransmission`]) is retransmitted now,
    /// when the next new packet is `snd_nxt`.
    pub fn mark_retransmitted(&mut self, seq: i64, snd_nxt: i64) {
        if self.mark(seq) == Some(Mark::Lost) {
            self.lost -= 1;
            let id = self.rtx_id;
            self.set(seq, Mark::Retransmitted { snd_nxt, id });
            self.rtx_id += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fourth_sacked_packet_above_a_hole_marks_it_lost() {
        let mut sb = ScoreBoard::new();
        // 1 acked, 2 missing, 3.. SACKed one by one.
        let f = sb.update(1, &[(3, 4)], 3);
        assert!(f.sacked && !f.lost);
        sb.update(1, &[(3, 5)], 3);
        sb.update(1, &[(3, 6)], 3);
        assert_eq!(sb.next_retransmission(), None);
        let f = sb.update(1, &[(3, 7)], 3);
        assert!(f.lost, "fack 6 = hole 2 + 4");
        assert_eq!(sb.next_retransmission(), Some(2));
        assert_eq!(sb.packets_in_flight(2, 10), 8 - 1 - 4);
        sb.mark_retransmitted(2, 10);
        assert_eq!(sb.next_retransmission(), None);
        assert_eq!(sb.packets_in_flight(2, 10), 8 - 4);
        // The retransmission fills the hole: everything up to 6 acknowledged.
        sb.update(6, &[], 3);
        assert_eq!(sb.packets_in_flight(7, 10), 3);
        assert_eq!(sb.sacked_count(), 0);
    }

    #[test]
    fn lost_retransmission_is_marked_again_once_later_data_is_sacked() {
        let mut sb = ScoreBoard::new();
        sb.update(1, &[(3, 7)], 3);
        assert_eq!(sb.next_retransmission(), Some(2));
        sb.mark_retransmitted(2, 10);
        // 10 (sent after the retransmission) SACKed: the retransmission is lost too.
        let f = sb.update(1, &[(10, 11), (3, 7)], 3);
        assert!(f.lost);
        assert_eq!(sb.next_retransmission(), Some(2));
    }

    #[test]
    fn timeout_marks_everything_unsacked_lost() {
        let mut sb = ScoreBoard::new();
        sb.update(1, &[(4, 5)], 3);
        sb.mark_loss(2, 8);
        assert_eq!(sb.lost_count(), 5, "2, 3, 5, 6, 7");
        assert_eq!(sb.packets_in_flight(2, 8), 0);
        let mut order = Vec::new();
        while let Some(s) = sb.next_retransmission() {
            sb.mark_retransmitted(s, 8);
            order.push(s);
        }
        assert_eq!(order, vec![2, 3, 5, 6, 7]);
        let mut empty = ScoreBoard::new();
        empty.mark_loss(5, 7);
        assert_eq!(empty.next_retransmission(), Some(5));
    }
}
