//! The Linux receiver of the `linux` TCP profile (`tcp_input.c`'s receive path, restated in
//! `docs/simulator.md`, "Linux TCP"): delayed ACKs (an ACK once two full segments are
//! unacknowledged, otherwise after the delayed-ACK timer, 40 ms at least), quick-ACK mode at
//! the start of the connection and after a duplicate or a long gap, an immediate ACK when a
//! hole fills, SACK blocks kept in order of recency (up to 3 with timestamps), and compressed
//! SACKs: after three immediate duplicate ACKs for the same cumulative point, further
//! out-of-order arrivals are answered together after min(1 ms, RTT/20). The receiving
//! application reads every segment as it arrives, so a full segment carrying PSH, once read,
//! is acknowledged at once even when it is the only one unacknowledged (`tcp_cleanup_rbuf`
//! with `ICSK_ACK_PUSHED`); the Linux sender sets PSH on the last segment of each write.
//!
//! Sequence numbers count packets (0 is the SYN). An ACK carries the highest in-order
//! sequence, as NS-2's sinks do.

use std::time::Duration;

use rand::Rng;

use super::tcp::linux::clock::Jiffies;
use super::tcp_sink::Held;
use crate::agent::{Agent, AgentCtx, TimerId};
use crate::packet::{Header, Packet, PacketKind, TcpHeader, MAX_SACK_BLOCKS};
use crate::Time;

/// The receiver's one simulator timer: the delayed-ACK and compressed-SACK timers, whichever
/// is earlier.
const ACK_TIMER: TimerId = TimerId(0);

/// Parameters of the Linux receiver (the kernel's defaults in [`LinuxSinkConfig::default`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LinuxSinkConfig {
    /// A pure ACK's size: IPv4 20 + TCP 20 + timestamps 12.
    pub ack_size: u32,
    /// The SYN-ACK's size (with MSS, SACK-permitted, timestamp and window-scale options).
    pub syn_ack_size: u32,
    /// `CONFIG_HZ`.
    pub hz: u32,
    /// `TCP_ATO_MIN` = `TCP_DELACK_MIN`: the delayed-ACK timer's floor (`HZ/25`).
    pub delack_min: Duration,
    /// `TCP_RTO_MIN`, which bounds the receiver's own RTO (the delayed-ACK ceiling).
    pub rto_min: Duration,
    /// Quick ACKs at the first data: `tcp_incr_quickack` gives the receive window over two
    /// segments, at most `TCP_MAX_QUICKACKS`; since Linux 4.19 the initial window is about
    /// 64 KB (22 segments of 1448 bytes over two), so 16. The kernel's capture shows its
    /// first 16 and more segments acknowledged one by one.
    pub initial_quickacks: u32,
    /// `TCP_MAX_QUICKACKS`.
    pub max_quickacks: u32,
    /// `tcp_comp_sack_nr`: most ACKs one compressed ACK may stand for.
    pub comp_sack_nr: u32,
    /// `tcp_comp_sack_delay_ns`.
    pub comp_sack_delay: Duration,
    /// `TCP_FASTRETRANS_THRESH`: duplicate ACKs sent at once before compression starts.
    pub dupacks_before_compression: u32,
}

impl Default for LinuxSinkConfig {
    fn default() -> Self {
        LinuxSinkConfig {
            ack_size: 52,
            syn_ack_size: 60,
            hz: 250,
            delack_min: Duration::from_millis(40),
            rto_min: Duration::from_millis(200),
            initial_quickacks: 16,
            max_quickacks: 16,
            comp_sack_nr: 44,
            comp_sack_delay: Duration::from_millis(1),
            dupacks_before_compression: 3,
        }
    }
}

/// What the receiver did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinuxSinkStats {
    /// Data packets received, duplicates included.
    pub packets: u64,
    /// Duplicates.
    pub duplicates: u64,
    /// ACKs sent (the SYN-ACK included).
    pub acks_sent: u64,
    /// ACKs sent by the delayed-ACK timer.
    pub delayed_acks: u64,
    /// ACKs sent in quick-ACK mode.
    pub quick_acks: u64,
    /// Out-of-order arrivals answered by a compressed ACK.
    pub compressed: u64,
    /// ACKs sent at once after the application read a segment carrying PSH.
    pub pushed_acks: u64,
}

/// The Linux receiver. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct LinuxSink {
    cfg: LinuxSinkConfig,
    clk: Jiffies,
    /// `rcv_nxt`: next sequence expected; `rcv_wup`: `rcv_nxt` when the last ACK left.
    rcv_nxt: i64,
    rcv_wup: i64,
    held: Held,
    /// Highest sequence held + 1.
    held_top: i64,
    /// `selective_acks`, most recent first.
    sacks: [(i64, i64); 4],
    num_sacks: usize,
    /// `ts_recent`.
    ts_recent: Time,
    synack_at: Option<Time>,
    /// The receiver's RTO (from the handshake's RTT), jiffies.
    rto_j: u64,
    /// Handshake RTT, µs (0: none).
    srtt_us: u64,
    /// `icsk_ack.ato`, jiffies (0 until the first data).
    ato: u64,
    /// `icsk_ack.quick`.
    quick: u32,
    /// `icsk_ack.lrcvtime`, jiffies.
    lrcvtime: u64,
    /// An ACK is scheduled (`ICSK_ACK_SCHED`) and must go at once (`ICSK_ACK_NOW`).
    ack_scheduled: bool,
    ack_now: bool,
    /// `ICSK_ACK_PUSHED`: an in-order full segment with PSH arrived since the last ACK.
    pushed: bool,
    /// The delayed-ACK timer: when it fires, and the deadline it stands for.
    delack: Option<(Time, u64)>,
    /// `compressed_ack`, `compressed_ack_rcv_nxt`, `dup_ack_counter` and the timer.
    compressed: u32,
    compressed_rcv_nxt: i64,
    dup_ack_counter: u32,
    comp_timer: Option<Time>,
    stats: LinuxSinkStats,
}

impl LinuxSink {
    /// A receiver with configuration `cfg`.
    pub fn new(cfg: LinuxSinkConfig) -> Self {
        LinuxSink {
            clk: Jiffies::new(cfg.hz, 0),
            rcv_nxt: 0,
            rcv_wup: 0,
            held: Held::new(),
            held_top: 0,
            sacks: [(0, 0); 4],
            num_sacks: 0,
            ts_recent: Time::ZERO,
            synack_at: None,
            rto_j: 0,
            srtt_us: 0,
            ato: 0,
            quick: 0,
            lrcvtime: 0,
            ack_scheduled: false,
            ack_now: false,
            pushed: false,
            delack: None,
            compressed: 0,
            compressed_rcv_nxt: -1,
            dup_ack_counter: 0,
            comp_timer: None,
            stats: LinuxSinkStats::default(),
            cfg,
        }
    }

    /// Counters.
    pub fn stats(&self) -> LinuxSinkStats {
        self.stats
    }

    /// The cumulative ACK number (highest in-order sequence).
    pub fn ack_number(&self) -> i64 {
        self.rcv_nxt - 1
    }

    fn j(&self, d: Duration) -> u64 {
        self.clk
            .from_us(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
    }

    /// `tcp_incr_quickack`.
    fn incr_quickack(&mut self, n: u32) {
        self.quick = self.quick.max(n.max(2).min(self.cfg.max_quickacks));
    }

    /// `tcp_sack_new_ofo_skb`: the block holding `seq` goes first.
    fn sack_new(&mut self, seq: i64) {
        let (l, r) = (seq, seq + 1);
        for i in 0..self.num_sacks {
            let b = &mut self.sacks[i];
            if l <= b.1 && r >= b.0 {
                b.0 = b.0.min(l);
                b.1 = b.1.max(r);
                self.sacks[..=i].rotate_right(1);
                // Coalesce the head with any block it now touches.
                let mut k = 1;
                while k < self.num_sacks {
                    let (h, o) = (self.sacks[0], self.sacks[k]);
                    if h.0 <= o.1 && h.1 >= o.0 {
                        self.sacks[0] = (h.0.min(o.0), h.1.max(o.1));
                        self.sacks.copy_within(k + 1..self.num_sacks, k);
                        self.num_sacks -= 1;
                    } else {
                        k += 1;
                    }
                }
                return;
            }
        }
        if self.num_sacks == self.sacks.len() {
            self.num_sacks -= 1;
        }
        self.sacks.copy_within(0..self.num_sacks, 1);
        self.sacks[0] = (l, r);
        self.num_sacks += 1;
    }

    /// `tcp_sack_remove`: blocks now below the in-order point go.
    fn sack_remove(&mut self) {
        if self.held_top <= self.rcv_nxt {
            self.num_sacks = 0;
            return;
        }
        let mut k = 0;
        while k < self.num_sacks {
            if self.sacks[k].0 <= self.rcv_nxt {
                self.sacks.copy_within(k + 1..self.num_sacks, k);
                self.num_sacks -= 1;
            } else {
                k += 1;
            }
        }
    }

    /// `tcp_send_ack` (and `tcp_event_ack_sent`).
    fn send_ack(&mut self, ctx: &mut AgentCtx<'_>) {
        let mut sack = crate::packet::SackBlocks::default();
        for &(l, r) in self.sacks[..self.num_sacks].iter().take(MAX_SACK_BLOCKS) {
            sack.push(l, r);
        }
        let n = sack.len() as u32;
        let size = self.cfg.ack_size + if n > 0 { 4 + 8 * n } else { 0 };
        let seq = self.rcv_nxt - 1;
        let h = TcpHeader {
            seqno: seq,
            ts: ctx.now(),
            ts_echo: self.ts_recent,
            sack,
            ..TcpHeader::default()
        };
        ctx.send(ctx.packet(PacketKind::Ack, size, 0, seq, Header::Tcp(h)));
        self.stats.acks_sent += 1;
        if self.quick > 0 {
            let pkts = u32::from(self.ack_scheduled);
            if pkts >= self.quick {
                self.quick = 0;
                self.ato = self.j(self.cfg.delack_min);
            } else {
                self.quick -= pkts;
            }
        }
        self.compressed = 0;
        self.comp_timer = None;
        self.ack_scheduled = false;
        self.ack_now = false;
        self.pushed = false;
        self.delack = None;
        self.rcv_wup = self.rcv_nxt;
    }

    /// `tcp_send_delayed_ack`.
    fn send_delayed_ack(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        let now_j = self.clk.at(now);
        let mut ato = self.ato;
        let min = self.j(self.cfg.delack_min);
        if ato > min {
            let mut max_ato = u64::from(self.cfg.hz / 2);
            if self.srtt_us > 0 {
                max_ato = max_ato.min(self.clk.from_us(self.srtt_us).max(min));
            }
            ato = ato.min(max_ato);
        }
        let mut deadline = now_j + ato;
        if let Some((_, old)) = self.delack {
            // About to expire: send now.
            if old <= now_j + (ato >> 2) {
                self.send_ack(ctx);
                return;
            }
            deadline = deadline.min(old);
        }
        self.delack = Some((self.clk.timer(now, deadline - now_j), deadline));
    }

    /// `__tcp_ack_snd_check` after a data packet.
    fn ack_snd_check(&mut self, ctx: &mut AgentCtx<'_>) {
        if !self.ack_scheduled {
            return;
        }
        if self.rcv_nxt - self.rcv_wup >= 2 || self.quick > 0 || self.ack_now {
            if self.quick > 0 {
                self.stats.quick_acks += 1;
            }
            self.send_ack(ctx);
            return;
        }
        if self.held_top <= self.rcv_nxt {
            self.send_delayed_ack(ctx);
            return;
        }
        if self.compressed >= self.cfg.comp_sack_nr {
            self.send_ack(ctx);
            return;
        }
        if self.compressed_rcv_nxt != self.rcv_nxt {
            self.compressed_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < self.cfg.dupacks_before_compression {
            self.dup_ack_counter += 1;
            self.send_ack(ctx);
            return;
        }
        self.compressed += 1;
        self.stats.compressed += 1;
        if self.comp_timer.is_none() {
            let d = self.cfg.comp_sack_delay.as_nanos() as u64;
            let rtt_ns = self.srtt_us * 1000;
            let delay = if rtt_ns > 0 { d.min(rtt_ns / 20) } else { d };
            self.comp_timer = Some(Time::from_nanos(ctx.now().as_nanos() + delay));
        }
    }

    /// `tcp_cleanup_rbuf` after the application's read. The application here reads every
    /// in-order segment at once, so the read always drains what is in order; a segment that
    /// arrived with PSH then gets its ACK now instead of waiting for a second segment or the
    /// delayed-ACK timer. The kernel requires the receive memory to be empty, which
    /// out-of-order data held would prevent (and those are acknowledged at once anyway).
    fn cleanup_rbuf(&mut self, ctx: &mut AgentCtx<'_>) {
        if self.ack_scheduled && self.pushed && self.held_top <= self.rcv_nxt {
            self.stats.pushed_acks += 1;
            self.send_ack(ctx);
        }
    }

    fn on_data(&mut self, seq: i64, ts: Time, psh: bool, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        self.stats.packets += 1;
        if seq == 0 {
            // A (retransmitted) SYN: the SYN-ACK.
            self.rcv_nxt = self.rcv_nxt.max(1);
            self.rcv_wup = self.rcv_nxt;
            self.ts_recent = ts;
            self.synack_at = Some(now);
            let h = TcpHeader {
                seqno: 0,
                ts: now,
                ts_echo: ts,
                syn: true,
                ..TcpHeader::default()
            };
            ctx.send(ctx.packet(PacketKind::Ack, self.cfg.syn_ack_size, 0, 0, Header::Tcp(h)));
            self.stats.acks_sent += 1;
            return;
        }
        if self.srtt_us == 0 {
            if let Some(t) = self.synack_at {
                // The handshake's last ACK (here: the first data) gives the receiver an RTT.
                let m = now.as_nanos().saturating_sub(t.as_nanos()) / 1000;
                self.srtt_us = m.max(1);
                let rto_min = u64::try_from(self.cfg.rto_min.as_micros()).unwrap_or(u64::MAX);
                self.rto_j = self.clk.from_us(m + (2 * m).max(rto_min));
            }
        }
        if seq <= self.rcv_wup && seq <= self.rcv_nxt {
            self.ts_recent = ts;
        }
        if seq < self.rcv_nxt || self.held.contains(self.rcv_nxt, seq) {
            // A duplicate: quick ACKs (and a D-SACK the model does not send).
            self.stats.duplicates += 1;
            if seq < self.rcv_nxt {
                self.incr_quickack(self.cfg.max_quickacks);
                self.ato = self.j(self.cfg.delack_min);
            }
            self.ack_scheduled = true;
            self.ack_snd_check(ctx);
            return;
        }
        self.ack_scheduled = true;
        if seq == self.rcv_nxt {
            // `tcp_measure_rcv_mss`: a full segment with PSH marks the ACK as pushed.
            self.pushed |= psh;
            self.event_data_recv(now);
            let had_ofo = self.held_top > self.rcv_nxt + 1;
            let (next, _) = self.held.release(seq + 1);
            self.rcv_nxt = next;
            if had_ofo && self.held_top <= self.rcv_nxt {
                self.ack_now = true;
            }
            if self.num_sacks > 0 {
                self.sack_remove();
            }
        } else {
            self.held.insert(self.rcv_nxt, seq, 1);
            self.held_top = self.held_top.max(seq + 1);
            self.sack_new(seq);
        }
        self.ack_snd_check(ctx);
        self.cleanup_rbuf(ctx);
    }

    /// The earlier of the delayed-ACK and compressed-SACK timers.
    fn next_timer(&self) -> Option<Time> {
        match (self.comp_timer, self.delack.map(|(t, _)| t)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Hands the earlier of the two timers to the simulator (one simulator timer serves both:
    /// when it fires, both are checked, as one kernel softirq would); called at the end of
    /// every agent call.
    fn sync_timer(&self, ctx: &mut AgentCtx<'_>) {
        ctx.sync_timer(ACK_TIMER, self.next_timer());
    }

    /// `tcp_event_data_recv`: the quick-ACK and delayed-ACK estimator on in-order data.
    fn event_data_recv(&mut self, now: Time) {
        let now_j = self.clk.at(now);
        let ato_min = self.j(self.cfg.delack_min);
        if self.ato == 0 {
            self.incr_quickack(self.cfg.initial_quickacks);
            self.ato = ato_min;
        } else {
            let m = now_j - self.lrcvtime;
            let rto = self.rto_j.max(1);
            if m <= ato_min / 2 {
                self.ato = (self.ato >> 1) + ato_min / 2;
            } else if m < self.ato {
                self.ato = ((self.ato >> 1) + m).min(rto);
            } else if m > rto {
                // A long gap: the sender restarted; ACK quickly again.
                self.incr_quickack(self.cfg.max_quickacks);
            }
        }
        self.lrcvtime = now_j;
    }
}

impl Agent for LinuxSink {
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        let phase = ctx.rng().gen_range(0..self.clk.jiffy_ns);
        self.clk = Jiffies::new(self.cfg.hz, phase);
    }

    fn on_stop(&mut self, _ctx: &mut AgentCtx<'_>) {}

    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        if let (PacketKind::Tcp, Header::Tcp(h)) = (pkt.kind, &pkt.header) {
            self.on_data(h.seqno, h.ts, h.psh, ctx);
        }
        self.sync_timer(ctx);
    }

    fn on_timer(&mut self, _timer: TimerId, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        if self.comp_timer.is_some_and(|t| t <= now) {
            self.comp_timer = None;
            if self.compressed > 0 {
                self.send_ack(ctx);
            }
        }
        if let Some((t, _)) = self.delack {
            if t <= now {
                self.delack = None;
                if self.ack_scheduled {
                    // The timer had to fire: ACKs are further apart than thought.
                    self.ato = (self.ato << 1).min(self.rto_j.max(1));
                    self.stats.delayed_acks += 1;
                    self.send_ack(ctx);
                }
            }
        }
        self.sync_timer(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tcp::test_util::Harness;
    use super::*;
    use crate::packet::Direction;
    use crate::testing::packet;

    fn data(seq: i64, ms: f64) -> Packet {
        Packet {
            kind: PacketKind::Tcp,
            header: Header::Tcp(TcpHeader {
                seqno: seq,
                ts: Time::from_secs_f64(ms / 1000.0),
                syn: seq == 0,
                ..TcpHeader::default()
            }),
            ..packet(seq, 1500)
        }
    }

    /// Data with PSH (the last segment of a write).
    fn pushed(seq: i64, ms: f64) -> Packet {
        let mut p = data(seq, ms);
        if let Header::Tcp(h) = &mut p.header {
            h.psh = true;
        }
        p
    }

    fn acks(out: &[Packet]) -> Vec<(i64, Vec<(i64, i64)>)> {
        out.iter()
            .map(|p| match &p.header {
                Header::Tcp(h) => (h.seqno, h.sack.iter().collect()),
                _ => panic!("not TCP"),
            })
            .collect()
    }

    fn sink() -> Harness<LinuxSink> {
        let mut h = Harness::new(
            LinuxSink::new(LinuxSinkConfig::default()),
            Direction::Reverse,
        );
        h.at_ms(0.0).start();
        // Jiffies aligned with time 0 so that timer instants are round.
        h.agent.clk = Jiffies::new(250, 0);
        let synack = h.at_ms(0.0).deliver(data(0, 0.0));
        assert_eq!(synack.len(), 1);
        assert_eq!(synack[0].size, 60);
        h
    }

    #[test]
    fn quick_acks_at_start_then_one_ack_per_two_segments() {
        let mut h = sink();
        let mut sent = Vec::new();
        for s in 1..=25 {
            sent.push(h.at_ms(20.0 + s as f64 * 0.1).deliver(data(s, 0.0)).len());
        }
        // Sixteen quick ACKs (`TCP_MAX_QUICKACKS`), then every second segment.
        let mut want = vec![1; 16];
        want.extend([0, 1, 0, 1, 0, 1, 0, 1, 0]);
        assert_eq!(sent, want);
        // The odd one waits for the delayed-ACK timer: 40 ms, on a jiffy bucket.
        let (_, t) = h.next_timer().expect("delack armed");
        let waited = t.as_secs_f64() * 1000.0 - 22.5;
        assert!((40.0..=48.0).contains(&waited), "{waited}");
        let late = h.wake_next();
        assert_eq!(acks(&late), vec![(25, vec![])]);
        assert_eq!(h.agent.stats().delayed_acks, 1);
        assert_eq!(late[0].size, 52);
    }

    #[test]
    fn a_pushed_segment_is_acknowledged_alone_once_read() {
        let mut h = sink();
        for s in 1..=16 {
            h.at_ms(20.0).deliver(data(s, 0.0));
        }
        // Past the quick ACKs, a segment without PSH waits for a second one ...
        assert!(h.at_ms(21.0).deliver(data(17, 0.0)).is_empty());
        assert_eq!(
            acks(&h.at_ms(21.1).deliver(data(18, 0.0))),
            vec![(18, vec![])]
        );
        // ... one with PSH is acknowledged alone as soon as the application reads it.
        assert_eq!(
            acks(&h.at_ms(21.2).deliver(pushed(19, 0.0))),
            vec![(19, vec![])]
        );
        assert_eq!(h.agent.stats().pushed_acks, 1);
        assert_eq!(h.next_timer(), None, "no delayed ACK left pending");
        // PSH on the second of a pair changes nothing: one ACK for both.
        assert!(h.at_ms(21.3).deliver(data(20, 0.0)).is_empty());
        assert_eq!(
            acks(&h.at_ms(21.4).deliver(pushed(21, 0.0))),
            vec![(21, vec![])]
        );
        assert_eq!(h.agent.stats().pushed_acks, 1);
    }

    #[test]
    fn out_of_order_data_is_acked_at_once_with_sack_blocks_newest_first() {
        let mut h = sink();
        // The 16 quick ACKs spent first: in quick-ACK mode every ACK goes at once, so
        // nothing would be compressed.
        for s in 1..=16 {
            h.at_ms(20.0).deliver(data(s, 0.0));
        }
        // 17 lost; 18 and 20 arrive (19 lost too), then 21.
        let a = h.at_ms(21.0).deliver(data(18, 0.0));
        assert_eq!(acks(&a), vec![(16, vec![(18, 19)])]);
        assert_eq!(a[0].size, 52 + 4 + 8);
        let b = h.at_ms(21.1).deliver(data(20, 0.0));
        assert_eq!(acks(&b), vec![(16, vec![(20, 21), (18, 19)])]);
        let c = h.at_ms(21.2).deliver(data(21, 0.0));
        assert_eq!(acks(&c), vec![(16, vec![(20, 22), (18, 19)])]);
        // The fourth duplicate for the same point is compressed: 1 ms later (no RTT yet).
        let d = h.at_ms(21.3).deliver(data(22, 0.0));
        assert!(d.is_empty());
        let e = h.wake_next();
        assert_eq!(acks(&e), vec![(16, vec![(20, 23), (18, 19)])]);
        // Filling 17 and 19 empties the queue: an immediate ACK, no blocks.
        h.at_ms(30.0).deliver(data(17, 0.0));
        let f = h.at_ms(30.1).deliver(data(19, 0.0));
        assert_eq!(acks(&f), vec![(22, vec![])]);
    }
}
