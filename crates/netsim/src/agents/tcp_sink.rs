//! NS-2.35's `Agent/TCPSink` (one cumulative ACK per packet) and `Agent/TCPSink/DelAck`
//! (delayed ACKs), the receivers of the one-way TCP family, and their SACK forms
//! `Agent/TCPSink/Sack1` and `Agent/TCPSink/Sack1/DelAck` ([`TcpSinkConfig::sack_blocks`]):
//! the same ACKs, each with up to three SACK blocks and 8 bytes longer per block.
//!
//! The ACK number is the highest in-order sequence received (`next_ - 1`, -1 before packet 0).
//! ACKs are `packetSize_` (40) bytes, carry the arrival time as their timestamp and echo the
//! timestamp of the latest in-order data (`ts_echo_bugfix_`), or with `ts_echo_rfc1323_` (the
//! sink `Agent/TCP/Linux` is run against) that of the packet that advanced the cumulative ACK. The delayed-ACK sink holds the ACK
//! of an in-order packet for up to `interval_`, and ACKs at once a second packet, a packet that
//! fills a gap (`RFC2581_immediate_ack_`) or the SYN (`SYN_immediate_ack_`).
//!
//! ECN (RFC 3168 §6.1.3, as NS-2's `TcpSink::ack` does it): a packet with ECT and CE sets
//! `ecn_unacked_`, a packet carrying CWR clears it (clearing first, so a packet with both keeps
//! it set), and every ACK of an ECT packet carries ECE = `ecn_unacked_`. An ACK of a non-ECT
//! packet carrying ECE (an ECN sender's SYN) carries ECE: the negotiation. A delayed ACK looks
//! at the held packet's flags too. ACKs themselves are never ECT (`ecn_syn_` false).

use std::collections::BTreeMap;
use std::time::Duration;

use super::sacker::Sacker;
use super::seq_ring::SeqRing;
use crate::agent::{Agent, AgentCtx, TimerId};
use crate::packet::{Header, Packet, PacketKind, TcpHeader};
use crate::Time;

/// The delayed-ACK timer (`TCPSink/DelAck`'s `delay_timer_`).
const DELACK: TimerId = TimerId(0);

/// Parameters of a TCP sink, named after NS-2's bound variables.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpSinkConfig {
    /// `packetSize_`: ACK size on the wire, bytes.
    pub ack_size: u32,
    /// `None`: `Agent/TCPSink`, one ACK per packet. `Some(interval_)`: `Agent/TCPSink/DelAck`
    /// (NS-2's `interval_` default is 100 ms).
    pub delayed_ack: Option<Duration>,
    /// `RFC2581_immediate_ack_`: do not delay the ACK of a packet that fills a gap.
    pub rfc2581_immediate_ack: bool,
    /// `SYN_immediate_ack_`: do not delay the ACK of packet 0.
    pub syn_immediate_ack: bool,
    /// `None`: no SACK option (`Agent/TCPSink`). `Some(maxSackBlocks_)`: `Agent/TCPSink/Sack1`,
    /// reporting up to that many blocks (NS-2's default 3, also its header's limit).
    pub sack_blocks: Option<u32>,
    /// `ts_echo_rfc1323_`: echo the timestamp of the packet that advanced the cumulative ACK
    /// (RFC 1323: the next expected one) instead of the newest at or below it.
    pub ts_echo_rfc1323: bool,
}

impl TcpSinkConfig {
    /// NS-2's `Agent/TCPSink`.
    pub fn ns2() -> Self {
        TcpSinkConfig {
            ack_size: 40,
            delayed_ack: None,
            rfc2581_immediate_ack: true,
            syn_immediate_ack: true,
            sack_blocks: None,
            ts_echo_rfc1323: false,
        }
    }

    /// NS-2's `Agent/TCPSink/Sack1` (`maxSackBlocks_` 3).
    pub fn ns2_sack1() -> Self {
        TcpSinkConfig {
            sack_blocks: Some(3),
            ..TcpSinkConfig::ns2()
        }
    }

    /// NS-2's `Agent/TCPSink/Sack1/DelAck`.
    pub fn ns2_sack1_delack() -> Self {
        TcpSinkConfig {
            sack_blocks: Some(3),
            ..TcpSinkConfig::ns2_delack()
        }
    }

    /// `Agent/TCPSink/Sack1` with `ts_echo_rfc1323_ true`, as paired with `Agent/TCP/Linux`.
    pub fn ns2_linux() -> Self {
        TcpSinkConfig {
            ts_echo_rfc1323: true,
            ..TcpSinkConfig::ns2_sack1()
        }
    }

    /// NS-2's `Agent/TCPSink/DelAck` (`interval_` 100 ms).
    pub fn ns2_delack() -> Self {
        TcpSinkConfig {
            delayed_ack: Some(Duration::from_millis(100)),
            ..TcpSinkConfig::ns2()
        }
    }
}

impl Default for TcpSinkConfig {
    fn default() -> Self {
        TcpSinkConfig::ns2()
    }
}

/// What the sink has received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSinkStats {
    /// Packets received, duplicates included.
    pub packets: u64,
    /// Packets received that were already held (retransmitted copies).
    pub duplicates: u64,
    /// Wire bytes released in order (NS-2's `bytes_`, headers included).
    pub bytes_in_order: u64,
    /// ACKs sent.
    pub acks_sent: u64,
}

/// Initial slots of the out-of-order ring (NS-2's `MWS`, the initial size of its own).
const HELD_INIT: usize = 64;
/// Largest ring: a packet further than this beyond the in-order point (no sender's window is
/// that wide) is held in `Held::far` instead, so arbitrary input cannot exhaust memory.
const HELD_MAX: usize = 1 << 20;

/// The packets held above the in-order point `next`, with their sizes: a ring whose slot
/// `seq & (len - 1)` holds packet `seq` for `seq` in `next..next + len`, so holding and
/// releasing a packet never allocates (a `BTreeMap` allocated per packet held). The ring
/// doubles when a packet lands beyond it, up to [`HELD_MAX`].
#[derive(Clone, Debug)]
pub(crate) struct Held {
    ring: SeqRing<Option<u32>>,
    /// Packets beyond the largest ring when they arrived (never in a real run).
    far: BTreeMap<i64, u32>,
    /// Largest ring ([`HELD_MAX`]; smaller in tests, to reach `far`).
    max: usize,
}

impl Held {
    pub(crate) fn new() -> Self {
        Held::with_max(HELD_MAX)
    }

    fn with_max(max: usize) -> Self {
        Held {
            ring: SeqRing::new(HELD_INIT),
            far: BTreeMap::new(),
            max,
        }
    }

    fn in_ring(&self, next: i64, seq: i64) -> bool {
        seq >= next && ((seq - next) as u64) < self.ring.len() as u64
    }

    /// Whether `release(next)` would release nothing: packet `next` is not held, nor any
    /// beyond the ring.
    #[inline]
    pub(crate) fn none_at(&self, next: i64) -> bool {
        self.far.is_empty() && self.ring.get(next).is_none()
    }

    /// Whether `seq` (at or above `next`) is held.
    pub(crate) fn contains(&self, next: i64, seq: i64) -> bool {
        (self.in_ring(next, seq) && self.ring.get(seq).is_some()) || self.far.contains_key(&seq)
    }

    /// Hold `seq` (at or above `next`) of `bytes` bytes, replacing a copy already held.
    pub(crate) fn insert(&mut self, next: i64, seq: i64, bytes: u32) {
        if seq < next {
            return; // released already: the caller counts it as a duplicate
        }
        if (seq - next) as u64 >= self.max as u64 {
            self.far.insert(seq, bytes);
            return;
        }
        while !self.in_ring(next, seq) {
            let end = next + self.ring.len() as i64 - 1;
            self.ring.double(next..=end);
            self.pull_far(next);
        }
        if !self.far.is_empty() {
            self.far.remove(&seq);
        }
        self.ring.set(seq, Some(bytes));
    }

    /// Move packets of `far` that now fall in the ring into it.
    fn pull_far(&mut self, next: i64) {
        while let Some((&seq, &bytes)) = self.far.first_key_value() {
            if !self.in_ring(next, seq) {
                break;
            }
            self.far.remove(&seq);
            self.ring.set(seq, Some(bytes));
        }
    }

    /// Release the packets held in order from `next`: the new in-order point and the bytes
    /// released.
    pub(crate) fn release(&mut self, mut next: i64) -> (i64, u64) {
        let mut bytes = 0u64;
        loop {
            while let Some(b) = self.ring.get_mut(next).take() {
                bytes += u64::from(b);
                next += 1;
            }
            if self.far.is_empty() {
                return (next, bytes);
            }
            self.pull_far(next);
            if self.ring.get(next).is_none() {
                return (next, bytes);
            }
        }
    }
}

/// NS-2's TCP sink. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct TcpSink {
    cfg: TcpSinkConfig,
    /// Next sequence expected in order (`next_`).
    next: i64,
    /// Highest sequence seen (`maxseen_`).
    maxseen: i64,
    /// Out-of-order packets held above `next`, with their sizes.
    held: Held,
    /// Timestamp to echo (`ts_to_echo_`).
    ts_to_echo: Time,
    /// Last ACK number sent (`last_ack_sent_`).
    last_ack_sent: i64,
    /// Delayed-ACK deadline, while an ACK is held.
    delack_timer: Option<Time>,
    /// SACK block generation (`Sack1` sinks; boxed: most sinks have none).
    sacker: Option<Box<Sacker>>,
    /// A CE mark not yet answered by the sender's CWR (`ecn_unacked_`).
    ecn_unacked: bool,
    /// ECN flags of the packet whose ACK is being delayed (`save_`).
    held_flags: Option<EcnFlags>,
    stats: TcpSinkStats,
}

/// The ECN flags of a received data packet that its ACK depends on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct EcnFlags {
    ect: bool,
    ce: bool,
    cwr: bool,
    ece: bool,
}

impl EcnFlags {
    fn of(pkt: &Packet, hdr: &TcpHeader) -> Self {
        EcnFlags {
            ect: pkt.ect,
            ce: pkt.ce,
            cwr: hdr.cwr,
            ece: hdr.ece,
        }
    }
}

impl TcpSink {
    /// A sink with configuration `cfg`.
    pub fn new(cfg: TcpSinkConfig) -> Self {
        let sacker = cfg.sack_blocks.map(|n| Box::new(Sacker::new(n)));
        TcpSink {
            cfg,
            next: 0,
            maxseen: 0,
            held: Held::new(),
            ts_to_echo: Time::ZERO,
            last_ack_sent: 0,
            delack_timer: None,
            sacker,
            ecn_unacked: false,
            held_flags: None,
            stats: TcpSinkStats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TcpSinkConfig {
        &self.cfg
    }

    /// The cumulative ACK number: highest in-order sequence received (`Seqno()`).
    pub fn ack_number(&self) -> i64 {
        self.next - 1
    }

    /// Counters.
    pub fn stats(&self) -> TcpSinkStats {
        self.stats
    }

    /// `Acker::update_ts()`: echo the newest timestamp of a segment at or below the ACK point
    /// (with `ts_echo_rfc1323_`, first that of the next expected segment).
    fn update_ts(&mut self, seqno: i64, ts: Time) {
        let next = seqno == self.last_ack_sent + 1;
        if (self.cfg.ts_echo_rfc1323 && next)
            || (ts >= self.ts_to_echo && seqno <= self.last_ack_sent + 1)
        {
            self.ts_to_echo = ts;
        }
    }

    /// `Acker::update()`: record `seq`, advance the in-order point, count duplicates.
    fn update(&mut self, seq: i64, bytes: u32) {
        let newly_highest = seq > self.maxseen;
        if newly_highest {
            self.maxseen = seq;
        }
        if seq < self.next {
            self.stats.duplicates += 1;
            return;
        }
        if seq == self.next && self.held.none_at(seq + 1) {
            // In order with nothing held behind it, the common case: what `insert` and
            // `release` would do, without their calls.
            self.next = seq + 1;
            self.stats.bytes_in_order += u64::from(bytes);
            return;
        }
        if !newly_highest && self.held.contains(self.next, seq) {
            self.stats.duplicates += 1;
        }
        self.held.insert(self.next, seq, bytes);
        let (next, bytes) = self.held.release(self.next);
        self.next = next;
        self.stats.bytes_in_order += bytes;
    }

    /// The ECE bit of the ACK of a packet with flags `of` (and `held`, the delayed one), after
    /// updating `ecn_unacked_` from them, in NS-2's order: CWR clears, then CE sets.
    fn ecn_echo(&mut self, of: EcnFlags, held: Option<EcnFlags>) -> bool {
        if held.is_none() && of == EcnFlags::default() {
            // No flag anywhere (every packet of a non-ECN flow): no test below holds.
            return false;
        }
        // No held packet counts as one with no flags: it sets none of the tests below.
        let h = held.unwrap_or_default();
        if of.cwr || h.cwr {
            self.ecn_unacked = false;
        }
        if (of.ect && of.ce) || (h.ect && h.ce) {
            self.ecn_unacked = true;
        }
        let mut ece = (of.ect || h.ect) && self.ecn_unacked;
        // ECN negotiation: a non-ECT packet carrying ECE is an ECN-capable sender's SYN.
        if (!of.ect && of.ece) || (!h.ect && h.ece) {
            ece = true;
        }
        ece
    }

    /// `TcpSink::ack()`: send the cumulative ACK of a packet with ECN flags `of`.
    fn ack(&mut self, of: EcnFlags, ctx: &mut AgentCtx<'_>) {
        let held = self.held_flags.take();
        let ece = self.ecn_echo(of, held);
        let seqno = self.ack_number();
        let sack = self.sacker.as_mut().map(|s| s.blocks()).unwrap_or_default();
        let hdr = TcpHeader {
            seqno,
            ts: ctx.now(),
            ts_echo: self.ts_to_echo,
            syn: false,
            ece,
            cwr: false,
            psh: false,
            sack,
        };
        // Each SACK block adds 8 bytes (two 4-byte edges), as NS-2 counts it.
        let size = self.cfg.ack_size.saturating_add(8 * sack.len() as u32);
        ctx.send_packet(PacketKind::Ack, size, 0, seqno, Header::Tcp(hdr));
        self.last_ack_sent = seqno;
        self.stats.acks_sent += 1;
    }
}

impl Agent for TcpSink {
    fn on_start(&mut self, _ctx: &mut AgentCtx<'_>) {}

    fn on_stop(&mut self, _ctx: &mut AgentCtx<'_>) {}

    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        // Borrowed, not copied: the packet lies in the store for the whole call.
        let hdr = match (&pkt.kind, &pkt.header) {
            (PacketKind::Tcp, Header::Tcp(h)) => h,
            _ => return,
        };
        self.stats.packets += 1;
        let flags = EcnFlags::of(pkt, hdr);
        self.update_ts(hdr.seqno, hdr.ts);
        self.update(hdr.seqno, pkt.size);
        if let Some(s) = self.sacker.as_mut() {
            s.update(hdr.seqno, pkt.size);
        }
        if let Some(interval) = self.cfg.delayed_ack {
            // DelAckSink::recv(): hold the ACK of an in-order packet if no ACK is held yet.
            if self.delack_timer.is_none() && hdr.seqno == self.ack_number() {
                let fills_gap = self.cfg.rfc2581_immediate_ack && hdr.seqno < self.maxseen;
                let syn = self.cfg.syn_immediate_ack && hdr.seqno == 0;
                if !fills_gap && !syn {
                    let at = ctx.now() + interval;
                    self.delack_timer = Some(at);
                    self.held_flags = Some(flags);
                    ctx.set_timer(DELACK, at);
                    return;
                }
            }
            if self.delack_timer.take().is_some() {
                ctx.cancel_timer(DELACK);
            }
        }
        self.ack(flags, ctx);
    }

    fn on_timer(&mut self, _timer: TimerId, ctx: &mut AgentCtx<'_>) {
        self.delack_timer = None;
        // NS-2 acknowledges the held packet itself (`ack(save_)`).
        let held = self.held_flags.unwrap_or_default();
        self.ack(held, ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentHarness;
    use crate::packet::Direction;
    use crate::testing::packet;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    struct H {
        h: AgentHarness<TcpSink>,
        now: Time,
    }

    impl H {
        fn new(cfg: TcpSinkConfig) -> Self {
            let mut h = AgentHarness::new(TcpSink::new(cfg), Direction::Reverse);
            h.rng = ChaCha8Rng::seed_from_u64(1);
            H { h, now: Time::ZERO }
        }

        fn sink(&self) -> &TcpSink {
            &self.h.agent
        }

        fn ctx_call(&mut self, f: impl FnOnce(&mut TcpSink, &mut AgentCtx<'_>)) -> Vec<Packet> {
            self.h.now = self.now;
            self.h.call(f)
        }

        /// Deliver data packet `seq` at `ms`; return the ACK numbers sent.
        fn data(&mut self, seq: i64, ms: u64) -> Vec<i64> {
            self.now = Time::from_nanos(ms * 1_000_000);
            let pkt = Packet {
                flow: 1,
                kind: PacketKind::Tcp,
                payload: if seq == 0 { 0 } else { 1000 },
                header: Header::Tcp(TcpHeader {
                    seqno: seq,
                    ts: self.now,
                    ts_echo: Time::ZERO,
                    syn: seq == 0,
                    ..TcpHeader::default()
                }),
                ..packet(seq, if seq == 0 { 40 } else { 1040 })
            };
            let out = self.ctx_call(|s, c| s.on_packet(&pkt, c));
            for p in &out {
                assert_eq!(p.kind, PacketKind::Ack);
                assert_eq!(p.size, 40);
                assert_eq!(p.dir, Direction::Reverse);
            }
            out.iter().map(|p| p.seq).collect()
        }

        fn wake_at(&mut self, ms: u64) -> Vec<i64> {
            self.now = Time::from_nanos(ms * 1_000_000);
            self.h.now = self.now;
            self.h.wake().iter().map(|p| p.seq).collect()
        }
    }

    #[test]
    fn one_cumulative_ack_per_packet() {
        let mut h = H::new(TcpSinkConfig::ns2());
        assert_eq!(h.data(0, 1), vec![0]);
        assert_eq!(h.data(1, 2), vec![1]);
        assert_eq!(h.data(2, 3), vec![2]);
        assert_eq!(h.sink().stats().bytes_in_order, 40 + 2 * 1040);
    }

    #[test]
    fn gap_gives_duplicate_acks_then_jump() {
        let mut h = H::new(TcpSinkConfig::ns2());
        h.data(0, 1);
        h.data(1, 2);
        // 2 lost
        assert_eq!(h.data(3, 3), vec![1]);
        assert_eq!(h.data(4, 4), vec![1]);
        assert_eq!(
            h.data(2, 5),
            vec![4],
            "the hole filled: ACK jumps over held packets"
        );
        // A retransmitted copy of 3 is a duplicate and re-ACKs 4.
        assert_eq!(h.data(3, 6), vec![4]);
        assert_eq!(h.sink().stats().duplicates, 1);
    }

    #[test]
    fn lost_first_packet_acks_minus_one() {
        let mut h = H::new(TcpSinkConfig::ns2());
        assert_eq!(h.data(1, 1), vec![-1]);
        assert_eq!(h.data(0, 2), vec![1]);
    }

    #[test]
    fn duplicate_of_held_packet_counted_once() {
        let mut h = H::new(TcpSinkConfig::ns2());
        h.data(0, 1);
        h.data(2, 2);
        h.data(2, 3);
        assert_eq!(h.sink().stats().duplicates, 1);
        assert_eq!(h.sink().ack_number(), 0);
    }

    #[test]
    fn ack_echoes_in_order_timestamp() {
        let mut h = H::new(TcpSinkConfig::ns2());
        h.data(0, 10);
        h.data(1, 20);
        let echo_of = |h: &mut H, seq: i64, ms: u64| -> Option<Time> {
            h.now = Time::from_nanos(ms * 1_000_000);
            let mut p = ack_like_data(seq, h.now);
            p.header = Header::Tcp(TcpHeader {
                seqno: seq,
                ts: h.now,
                ts_echo: Time::ZERO,
                syn: false,
                ..TcpHeader::default()
            });
            let out = h.ctx_call(|s, c| s.on_packet(&p, c));
            match out.first().map(|a| &a.header) {
                Some(Header::Tcp(t)) => Some(t.ts_echo),
                _ => None,
            }
        };
        // In order: echo its own timestamp.
        assert_eq!(echo_of(&mut h, 2, 30), Some(Time::from_nanos(30_000_000)));
        // Beyond a gap (3 missing): keep echoing the last in-order one.
        assert_eq!(echo_of(&mut h, 4, 40), Some(Time::from_nanos(30_000_000)));
    }

    #[test]
    fn rfc1323_echo_takes_the_packet_that_advances_the_ack() {
        // Packet 2, sent at 2 ms, arrives after a copy of 1 sent at 5 ms. NS-2's default
        // rule keeps echoing the newer 5 ms; `ts_echo_rfc1323_` echoes packet 2's 2 ms.
        let ms = |v: u64| Time::from_nanos(v * 1_000_000);
        for (cfg, want) in [
            (TcpSinkConfig::ns2_sack1(), 5),
            (TcpSinkConfig::ns2_linux(), 2),
        ] {
            let mut h = H::new(cfg);
            let mut echo = None;
            for (seq, sent) in [(0, 0), (1, 1), (1, 5), (2, 2)] {
                let mut p = ack_like_data(seq, ms(sent));
                p.header = Header::Tcp(TcpHeader {
                    seqno: seq,
                    ts: ms(sent),
                    ..TcpHeader::default()
                });
                let out = h.ctx_call(|s, c| s.on_packet(&p, c));
                if let Some(Header::Tcp(t)) = out.first().map(|a| &a.header) {
                    echo = Some(t.ts_echo);
                }
            }
            assert_eq!(echo, Some(ms(want)));
        }
    }

    fn ack_like_data(seq: i64, now: Time) -> Packet {
        Packet {
            flow: 1,
            kind: PacketKind::Tcp,
            payload: 1000,
            sent_at: now,
            ..packet(seq, 1040)
        }
    }

    #[test]
    fn delayed_ack_every_second_packet_or_interval() {
        let mut h = H::new(TcpSinkConfig::ns2_delack());
        assert_eq!(h.data(0, 0), vec![0], "SYN acked at once");
        assert_eq!(h.data(1, 10), Vec::<i64>::new(), "held");
        assert_eq!(h.h.timer(DELACK), Some(Time::from_nanos(110_000_000)));
        assert_eq!(h.data(2, 20), vec![2], "second packet: ACK now");
        assert_eq!(h.h.timer(DELACK), None);
        assert!(h.data(3, 30).is_empty());
        assert!(
            h.wake_at(100).is_empty(),
            "spurious wake before the interval"
        );
        assert_eq!(h.wake_at(130), vec![3], "interval expired");
        assert_eq!(h.h.timer(DELACK), None);
    }

    #[test]
    fn delayed_ack_immediate_for_gaps() {
        let mut h = H::new(TcpSinkConfig::ns2_delack());
        h.data(0, 0);
        h.data(1, 1);
        h.data(2, 2); // acked (second)
                      // Out of order: ACK at once (not in sequence).
        assert_eq!(h.data(4, 3), vec![2]);
        // The gap filled: in order, below maxseen: ACK at once.
        assert_eq!(h.data(3, 4), vec![4]);
    }

    proptest::proptest! {
        /// The ring holds and releases exactly what a sorted map would, near and far
        /// sequences (beyond the largest ring, here 256 slots) included, with in-order
        /// packets taking the sink's fast path when nothing is held behind them.
        #[test]
        fn held_ring_matches_a_map(
            // Packet i arrives at time 10·i + delay: mostly reordered a little, now and then
            // so late that the hole before it outgrows the ring; some arrive twice.
            delays in proptest::collection::vec(
                (
                    proptest::prop_oneof![8 => 0u64..30, 1 => 0u64..5000],
                    proptest::option::weighted(0.1, 0u64..5000),
                    1u32..2000,
                ),
                1..1500,
            ),
        ) {
            let mut arrivals = Vec::new();
            for (i, &(d, dup, b)) in delays.iter().enumerate() {
                arrivals.push((10 * i as u64 + d, i as i64, b));
                if let Some(d2) = dup {
                    arrivals.push((10 * i as u64 + d2, i as i64, b + 1));
                }
            }
            arrivals.sort();
            let seqs = arrivals.into_iter().map(|(_, seq, b)| (seq, b));
            let mut held = Held::with_max(256);
            let mut model = BTreeMap::new();
            let (mut next, mut model_next) = (0i64, 0i64);
            let (mut bytes, mut model_bytes) = (0u64, 0u64);
            for (seq, b) in seqs {
                if seq < next {
                    continue;
                }
                proptest::prop_assert_eq!(held.contains(next, seq), model.contains_key(&seq));
                if seq == next && held.none_at(next + 1) {
                    // `TcpSink::update`'s fast path, which must keep the ring's invariant.
                    proptest::prop_assert!(!model.contains_key(&(next + 1)));
                    next += 1;
                    bytes += u64::from(b);
                } else {
                    held.insert(next, seq, b);
                    let (n, got) = held.release(next);
                    next = n;
                    bytes += got;
                }
                model.insert(seq, b);
                while let Some(b) = model.remove(&model_next) {
                    model_bytes += u64::from(b);
                    model_next += 1;
                }
                proptest::prop_assert_eq!((next, bytes), (model_next, model_bytes));
            }
            proptest::prop_assert!(held.ring.len() <= 256);
            proptest::prop_assert_eq!(next, delays.len() as i64, "everything arrived");
        }
    }

    #[test]
    fn held_ring_grows_for_a_wide_hole_only() {
        let mut held = Held::new();
        held.insert(0, 63, 1);
        assert_eq!(held.ring.len(), HELD_INIT);
        held.insert(0, 64, 1);
        assert_eq!(held.ring.len(), 2 * HELD_INIT);
        held.insert(0, 1 << 40, 1);
        assert_eq!(
            held.ring.len(),
            2 * HELD_INIT,
            "far packets do not grow the ring"
        );
        assert!(held.contains(0, 1 << 40));
    }

    #[test]
    fn non_tcp_is_ignored() {
        let mut h = H::new(TcpSinkConfig::ns2());
        let p = ack_like_data(0, Time::ZERO);
        assert!(h.ctx_call(|s, c| s.on_packet(&p, c)).is_empty());
        assert_eq!(h.sink().stats().packets, 0);
    }

    /// Deliver `seq` with ECN flags at `ms` to `h`'s sink; the ECE bit of each ACK sent.
    fn ecn_data(h: &mut H, seq: i64, ms: u64, f: EcnFlags) -> Vec<bool> {
        h.now = Time::from_nanos(ms * 1_000_000);
        let pkt = Packet {
            flow: 1,
            kind: PacketKind::Tcp,
            payload: if seq == 0 { 0 } else { 1000 },
            ect: f.ect,
            ce: f.ce,
            header: Header::Tcp(TcpHeader {
                seqno: seq,
                ts: h.now,
                syn: seq == 0,
                ece: f.ece,
                cwr: f.cwr,
                ..TcpHeader::default()
            }),
            ..packet(seq, if seq == 0 { 40 } else { 1040 })
        };
        let out = h.ctx_call(|s, c| s.on_packet(&pkt, c));
        out.iter()
            .map(|p| match &p.header {
                Header::Tcp(t) => {
                    assert!(!p.ect, "ACKs are not ECT");
                    t.ece
                }
                _ => panic!("an ACK"),
            })
            .collect()
    }

    const ECT: EcnFlags = EcnFlags {
        ect: true,
        ce: false,
        cwr: false,
        ece: false,
    };

    #[test]
    fn ce_is_echoed_until_cwr() {
        let mut h = H::new(TcpSinkConfig::ns2());
        // The ECN SYN (ECE, not ECT) is answered with ECE.
        let syn = EcnFlags {
            ect: false,
            ece: true,
            ..EcnFlags::default()
        };
        assert_eq!(ecn_data(&mut h, 0, 0, syn), vec![true]);
        assert_eq!(ecn_data(&mut h, 1, 1, ECT), vec![false]);
        let ce = EcnFlags { ce: true, ..ECT };
        assert_eq!(ecn_data(&mut h, 2, 2, ce), vec![true]);
        // Every later ACK of an ECT packet echoes it, marked or not ...
        assert_eq!(ecn_data(&mut h, 3, 3, ECT), vec![true]);
        // ... but an ACK of a non-ECT packet carries no ECE.
        assert_eq!(ecn_data(&mut h, 4, 4, EcnFlags::default()), vec![false]);
        assert_eq!(ecn_data(&mut h, 5, 5, ECT), vec![true]);
        // CWR ends it; CWR and CE on one packet: cleared, then set again.
        let cwr = EcnFlags { cwr: true, ..ECT };
        assert_eq!(ecn_data(&mut h, 6, 6, cwr), vec![false]);
        assert_eq!(ecn_data(&mut h, 7, 7, ECT), vec![false]);
        assert_eq!(
            ecn_data(&mut h, 8, 8, EcnFlags { ce: true, ..cwr }),
            vec![true]
        );
        // CE without ECT is not a mark (RFC 3168: not-ECT packets are never marked).
        let mut h = H::new(TcpSinkConfig::ns2());
        let not_ect_ce = EcnFlags {
            ce: true,
            ..EcnFlags::default()
        };
        assert_eq!(ecn_data(&mut h, 0, 0, not_ect_ce), vec![false]);
        assert_eq!(ecn_data(&mut h, 1, 1, ECT), vec![false]);
    }

    #[test]
    fn delayed_ack_echoes_the_held_packets_mark() {
        let mut h = H::new(TcpSinkConfig::ns2_delack());
        assert_eq!(
            ecn_data(&mut h, 0, 0, ECT),
            vec![false],
            "SYN acked at once"
        );
        // Packet 1 (marked) is held; packet 2 (clean) releases the ACK of both: ECE.
        let ce = EcnFlags { ce: true, ..ECT };
        assert!(ecn_data(&mut h, 1, 10, ce).is_empty());
        assert_eq!(ecn_data(&mut h, 2, 11, ECT), vec![true]);
        // A held packet acked by the timer: its own flags (CWR here) count.
        let cwr = EcnFlags { cwr: true, ..ECT };
        assert!(ecn_data(&mut h, 3, 20, cwr).is_empty());
        h.now = Time::from_nanos(200 * 1_000_000);
        let out = h.ctx_call(|s, c| s.on_timer(DELACK, c));
        assert!(matches!(&out[0].header, Header::Tcp(t) if !t.ece));
    }
}
