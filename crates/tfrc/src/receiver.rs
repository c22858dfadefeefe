//! The TFRC receiver (RFC 5348 §5, §6), sans-IO.
//!
//! Inputs: [`Receiver::on_data`] (or [`Receiver::on_data_with`] when the caller also knows the
//! ECN mark and the received TTL) and [`Receiver::on_timeout`]. Outputs:
//! [`Receiver::poll_feedback`] and [`Receiver::poll_timeout`]. Call `poll_feedback` after every
//! input; it returns the feedback packet to send, if one is due.
//!
//! One state machine serves every profile; where RFC 5348 and NS-2.35's Agent/TFRCSink differ,
//! the branch is on a [`ReceiverConfig`] policy value.

use std::collections::VecDeque;

use core::time::Duration;

use crate::classifier::{LossClass, LossDecision, OwdState};
use crate::loss_history::{
    DiscountUpdate, Discounting, FillOutcome, GroupingRule, LossHistory, LostRange, Mark,
};
use crate::packet::{DataHeader, Feedback};
use crate::profile::{
    ConfigError, EventClock, FeedbackPolicy, FirstTarget, FirstTrigger, Inversion, LossClassifier,
    LossMultiplicity, ReceiverConfig, XRecvEstimator,
};
use crate::time::{duration_from_secs_f64, round_u64};
use crate::Time;

/// What the network layer knows about an arriving data packet besides its TFRC header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    /// Bytes on the wire (for statistics).
    pub wire_len: u32,
    /// The packet carries an ECN Congestion Experienced mark (§5.1).
    pub ce: bool,
    /// The IP TTL it arrived with, if known (the hop count initial − received goes into the
    /// feedback, seed variant E5).
    pub ttl: Option<u8>,
}

/// A snapshot of the receiver's state for reports and live status.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceiverStatus {
    /// Current loss event rate p.
    pub p: f64,
    /// X_recv of the last feedback, bytes/s.
    pub x_recv: f64,
    /// The open interval I_0 (none before the first loss event).
    pub open_interval: Option<f64>,
    /// Closed loss intervals I_1, I_2, … newest first (the oldest may be §6.3.1's synthetic
    /// interval).
    pub loss_intervals: Vec<f64>,
    /// Packets declared lost.
    pub lost_packets: u64,
    /// Packets received with an ECN-CE mark.
    pub marked_packets: u64,
    /// Loss events recorded.
    pub loss_events: u64,
    /// Data packets received (duplicates and late packets included).
    pub packets_received: u64,
    /// Bytes received on the wire.
    pub bytes_received: u64,
    /// Feedback packets produced.
    pub feedbacks_sent: u64,
    /// Highest sequence number received.
    pub highest_seq: Option<u64>,
    /// Lost packets classified as congestion (all of them without a classifier); they entered
    /// the loss history.
    pub congestion_losses: u64,
    /// Lost packets classified as wireless link errors (seed 002); kept out of the history.
    pub wireless_losses: u64,
    /// Seed 002's average one-way delay avgSLD in seconds, under the one-way-delay classifier.
    pub avg_one_way_delay: Option<f64>,
}

/// A received packet used as an interpolation reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Arr {
    seq: u64,
    arrival: Time,
    ts: Time,
}

/// Missing sequence numbers `lo..=hi` waiting for NDUPACK later arrivals (§5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pending {
    lo: u64,
    hi: u64,
    later: u32,
    before: Arr,
    after: Arr,
    /// The class given by the packet that revealed the hole (seed 002: "j = the packet that
    /// revealed the gap").
    class: LossClass,
}

/// What the receiver knows from the highest-numbered packet so far.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Newest {
    arr: Arr,
    /// R_m: the sender's RTT in the packet, seconds.
    rtt: f64,
    t_rto: f64,
    s: u32,
    round: u32,
    urgent: bool,
    hops: Option<u8>,
}

/// Entries kept for X_recv estimation at most (a bound for absurd rates).
const MAX_LOG: usize = 1 << 20;
/// When the sender has not told us an RTT yet, §6.3.1 uses this R (conservative: it gives a
/// low target rate and so a short first interval).
const DEFAULT_RTT: f64 = 1.0;
/// Wireless-classified lost ranges remembered so that a late packet can undo its loss (§5.1),
/// as the history does for congestion losses.
const MAX_WIRELESS_RANGES: usize = 256;
/// Classification decisions kept at most between drains; older ones are dropped and counted.
const MAX_DECISIONS: usize = 1 << 16;

/// The TFRC receiver.
#[derive(Clone, Debug, PartialEq)]
pub struct Receiver {
    cfg: ReceiverConfig,
    newest: Option<Newest>,
    /// i of §6.3: the sequence number of the first packet that arrived.
    first_seq: Option<u64>,
    pending: Vec<Pending>,
    /// Scratch for the holes being declared lost (empty between calls; kept so that
    /// declaring a loss does not allocate).
    declared: Vec<Pending>,
    history: LossHistory,
    packets_received: u64,
    bytes_received: u64,
    lost_packets: u64,
    marked_packets: u64,
    feedbacks_sent: u64,
    /// (arrival, s) of every data packet, for §6.2's X_recv.
    arrivals: VecDeque<(Time, u32)>,
    /// (seq, arrival) of NS-2's RCVD packets, for `est_thput`.
    rcvd: VecDeque<(u64, Time)>,
    rcvd_since_report: u64,
    /// Segment bytes received since the last report (also those arriving at its very instant).
    bytes_since_report: u64,
    data_since_report: bool,
    last_report: Option<Time>,
    max_x_recv: f64,
    last_x_recv: f64,
    /// R_(m-1): the R_m of the previous report.
    r_prev_report: f64,
    due: bool,
    due_since: Time,
    timer: Option<Time>,
    /// §6.1 "no feedback packet was sent when the feedback timer last expired" is its negation.
    last_expiry_sent: bool,
    p_prev: f64,
    /// NS-2: the p `adjust_history` computed, sent as is in the next report.
    pending_p: Option<f64>,
    /// NS-2 `loss_seen_yet`.
    loss_seen: bool,
    /// NS-2: the highest sequence number counted by the last `est_loss` (`last_sample - 1`).
    last_walk_end: u64,
    /// Seed 002's one-way-delay state, under [`LossClassifier::OneWayDelay`].
    owd: Option<OwdState>,
    congestion_losses: u64,
    wireless_losses: u64,
    /// Wireless losses since the last report (the feedback's `link_errors`).
    link_errors: u32,
    wireless_ranges: VecDeque<(u64, u64)>,
    /// Decisions not yet drained, when recording is on.
    decisions: Option<VecDeque<LossDecision>>,
    decisions_dropped: u64,
}

impl Receiver {
    /// A receiver that has seen nothing yet.
    pub fn new(cfg: ReceiverConfig) -> Result<Receiver, ConfigError> {
        cfg.validate()?;
        Ok(Receiver {
            history: LossHistory::new(
                cfg.averaging,
                GroupingRule {
                    round_gate: cfg.round_gate,
                },
            ),
            cfg,
            newest: None,
            first_seq: None,
            pending: Vec::new(),
            declared: Vec::new(),
            packets_received: 0,
            bytes_received: 0,
            lost_packets: 0,
            marked_packets: 0,
            feedbacks_sent: 0,
            arrivals: VecDeque::new(),
            rcvd: VecDeque::new(),
            rcvd_since_report: 0,
            bytes_since_report: 0,
            data_since_report: false,
            last_report: None,
            max_x_recv: 0.0,
            last_x_recv: 0.0,
            r_prev_report: 0.0,
            due: false,
            due_since: Time::ZERO,
            timer: None,
            last_expiry_sent: true,
            p_prev: 0.0,
            pending_p: None,
            loss_seen: false,
            last_walk_end: 0,
            owd: match cfg.classifier {
                LossClassifier::None => None,
                LossClassifier::OneWayDelay(c) => Some(OwdState::new(c)),
            },
            congestion_losses: 0,
            wireless_losses: 0,
            link_errors: 0,
            wireless_ranges: VecDeque::new(),
            decisions: None,
            decisions_dropped: 0,
        })
    }

    /// Start (or stop) recording each classification decision for
    /// [`Receiver::drain_loss_decisions`]; either call discards undrained decisions. Off by
    /// default so that a transport that never drains does not accumulate them; the simulator
    /// turns it on to build the classifier's confusion matrix. Without a classifier every
    /// decision is [`LossClass::Congestion`].
    pub fn record_loss_decisions(&mut self, on: bool) {
        self.decisions = on.then(VecDeque::new);
    }

    /// The classification decisions since the last drain, oldest first: each lost range with
    /// the class it was given (ECN marks are not losses and are not listed). At most 65 536 are
    /// kept between drains; [`Receiver::loss_decisions_dropped`] counts the rest.
    pub fn drain_loss_decisions(&mut self) -> impl Iterator<Item = LossDecision> + '_ {
        self.decisions.iter_mut().flat_map(|d| d.drain(..))
    }

    /// Decisions discarded because they were not drained in time.
    pub fn loss_decisions_dropped(&self) -> u64 {
        self.decisions_dropped
    }

    /// The configuration.
    pub fn config(&self) -> &ReceiverConfig {
        &self.cfg
    }

    /// A data packet of `wire_len` bytes arrived at `now`.
    pub fn on_data(&mut self, now: Time, hdr: &DataHeader, wire_len: u32) {
        self.on_data_with(
            now,
            hdr,
            Arrival {
                wire_len,
                ..Arrival::default()
            },
        );
    }

    /// A data packet arrived at `now`, with what the network layer knows about it.
    pub fn on_data_with(&mut self, now: Time, hdr: &DataHeader, arrival: Arrival) {
        self.packets_received = self.packets_received.saturating_add(1);
        self.bytes_received = self
            .bytes_received
            .saturating_add(u64::from(arrival.wire_len));
        self.rcvd_since_report = self.rcvd_since_report.saturating_add(1);
        self.bytes_since_report = self
            .bytes_since_report
            .saturating_add(u64::from(hdr.segment_size));
        self.data_since_report = true;
        if self.cfg.x_recv == XRecvEstimator::Rfc5348 {
            self.arrivals.push_back((now, hdr.segment_size));
        }
        let this = Arr {
            seq: hdr.seq,
            arrival: now,
            ts: hdr.timestamp,
        };
        // Seed 002: eta = SLD_j/avgSLD_(j-1) for this packet, should it reveal a gap.
        let class = match self.owd.as_mut() {
            Some(o) => {
                let eta = o.on_packet(now, hdr.timestamp, hdr.rtt.as_secs_f64());
                o.classify(eta)
            }
            None => LossClass::Congestion,
        };
        let first = self.newest.is_none();
        let had_loss = self.history.has_loss();
        let mut new_events = 0usize;
        let mut removed_events = false;
        let mut gap = false;
        let new_highest = match self.newest {
            None => true,
            Some(n) => hdr.seq > n.arr.seq,
        };
        if first {
            // §6.3: "The receiver is initialized by the first data packet that arrives at the
            // receiver. Let the sequence number of this packet be i." Nothing below i is a hole:
            // a sender may start anywhere (DCCP's initial sequence numbers are random, RFC 4340
            // §7.2), and the receiver cannot tell a lost first packet from a later start. (NS-2
            // does the same: "maxseq = seqno - 1".)
            self.first_seq = Some(hdr.seq);
        }
        if new_highest {
            if let Some(n) = self.newest {
                if hdr.seq > n.arr.seq.saturating_add(1) {
                    // A wireless gap never starts NS-2's first loss interval either.
                    gap = class == LossClass::Congestion;
                    self.pending.push(Pending {
                        lo: n.arr.seq + 1,
                        hi: hdr.seq - 1,
                        later: 0,
                        before: n.arr,
                        after: this,
                        class,
                    });
                }
            }
            self.newest = Some(Newest {
                arr: this,
                rtt: hdr.rtt.as_secs_f64(),
                t_rto: hdr.t_rto.as_secs_f64(),
                s: hdr.segment_size,
                round: hdr.round,
                urgent: hdr.urgent,
                hops: arrival.ttl.map(|t| hdr.initial_ttl.saturating_sub(t)),
            });
            let m = self.mark(this);
            self.history.note_position(m.time, hdr.rtt);
            // NS-2's est_thput counts RCVD (unmarked, in-order) packets and skips seq 0.
            if self.cfg.x_recv == XRecvEstimator::Ns2 && !arrival.ce && hdr.seq > 0 {
                self.rcvd.push_back((hdr.seq, now));
            }
            self.count_later(hdr.seq);
        } else if let Some(i) = self
            .pending
            .iter()
            .position(|p| p.lo <= hdr.seq && hdr.seq <= p.hi)
        {
            // §5.1: an out-of-order packet fills a hole before it is declared lost.
            let p = self.pending.remove(i);
            if hdr.seq < p.hi {
                self.pending.insert(
                    i,
                    Pending {
                        lo: hdr.seq + 1,
                        ..p
                    },
                );
            }
            if p.lo < hdr.seq {
                self.pending.insert(
                    i,
                    Pending {
                        hi: hdr.seq - 1,
                        ..p
                    },
                );
            }
            self.count_later(hdr.seq);
        } else if self.cfg.loss_detection.late_fill {
            // §5.1: "the late packet can fill the hole in TFRC's reception record, and the
            // receiver can recalculate the loss event rate".
            match self.history.fill(hdr.seq) {
                FillOutcome::NotLost => self.fill_wireless(hdr.seq),
                FillOutcome::Removed => self.uncount_congestion_loss(),
                FillOutcome::Regrouped { events_removed } => {
                    self.uncount_congestion_loss();
                    removed_events = events_removed > 0;
                }
            }
        }
        // §5.1: "If an ECN-marked packet is preceded by a possibly-lost packet, then the first
        // detected congestion event begins with the lost packet."
        if arrival.ce {
            self.marked_packets = self.marked_packets.saturating_add(1);
            new_events += self.declare(|p| p.lo < hdr.seq);
            let m = self.mark(this);
            new_events += self.history.add_lost(self.range(hdr.seq, hdr.seq, m, m));
        }
        let ndupack = self.cfg.loss_detection.ndupack;
        new_events += self.declare(|p| p.later >= ndupack);

        // First loss interval (§6.3.1).
        match self.cfg.first_interval.trigger {
            FirstTrigger::FirstLossEvent => {
                if !had_loss && self.history.has_loss() {
                    self.seed_first_interval(now);
                }
            }
            FirstTrigger::FirstGap => {
                if new_highest && !first && !self.loss_seen && (gap || arrival.ce) {
                    self.ns2_adjust_history(now, hdr);
                    new_events = new_events.max(1);
                }
            }
        }
        if let Discounting::On {
            update: DiscountUpdate::EveryPacket,
            ..
        } = self.cfg.averaging.discount
        {
            if let Some(n) = self.newest {
                self.history.update_discount(n.arr.seq);
            }
        }
        self.trim_logs(now);

        match self.cfg.feedback {
            FeedbackPolicy::Rfc5348 => {
                self.rfc_on_data(now, first, new_events > 0, removed_events);
            }
            FeedbackPolicy::Ns2 { per_rtt, .. } => {
                let n = self.newest.unwrap_or(Newest {
                    arr: this,
                    rtt: 0.0,
                    t_rto: 0.0,
                    s: hdr.segment_size,
                    round: 0,
                    urgent: false,
                    hops: None,
                });
                let last_report = self.last_report.unwrap_or(Time::ZERO);
                let mut urgent = new_highest && n.urgent;
                if new_highest
                    && n.rtt > 1e-7
                    && now.saturating_since(last_report).as_secs_f64() >= n.rtt / per_rtt
                {
                    urgent = true;
                }
                if urgent || new_events > 0 {
                    self.make_due(now);
                }
            }
        }
    }

    /// Increment the later-arrivals count of every hole below `seq`.
    fn count_later(&mut self, seq: u64) {
        for p in &mut self.pending {
            if p.hi < seq {
                p.later = p.later.saturating_add(1);
            }
        }
    }

    /// The interpolation reference for the configured clock (§5.2 vs NS-2's sender timestamps).
    fn mark(&self, a: Arr) -> Mark {
        Mark {
            seq: a.seq,
            time: match self.cfg.event_clock {
                EventClock::ReceiverArrival => a.arrival,
                EventClock::SenderTimestamp => a.ts,
            },
        }
    }

    fn range(&self, lo: u64, hi: u64, before: Mark, after: Mark) -> LostRange {
        let (rtt, round) = self
            .newest
            .map(|n| (duration_from_secs_f64(n.rtt), n.round))
            .unwrap_or((Duration::ZERO, 0));
        LostRange {
            lo,
            hi,
            before,
            after,
            rtt,
            round,
        }
    }

    /// Declare the holes selected by `pick` lost, lowest first; returns the new loss events.
    #[inline(always)]
    fn declare(&mut self, pick: impl Fn(&Pending) -> bool) -> usize {
        // The usual case on every packet, tested without a call: no hole open.
        if self.pending.is_empty() {
            return 0;
        }
        self.declare_open(pick)
    }

    /// [`Receiver::declare`] with at least one hole open.
    #[inline(never)]
    fn declare_open(&mut self, pick: impl Fn(&Pending) -> bool) -> usize {
        let mut lost = std::mem::take(&mut self.declared);
        self.pending.retain(|p| {
            if pick(p) {
                lost.push(*p);
                false
            } else {
                true
            }
        });
        lost.sort_by_key(|p| p.lo);
        let mut events = 0;
        for p in lost.drain(..) {
            let n = p.hi.saturating_sub(p.lo).saturating_add(1);
            self.lost_packets = self.lost_packets.saturating_add(n);
            if let Some(d) = self.decisions.as_mut() {
                if d.len() >= MAX_DECISIONS {
                    d.pop_front();
                    self.decisions_dropped = self.decisions_dropped.saturating_add(1);
                }
                d.push_back(LossDecision {
                    lo: p.lo,
                    hi: p.hi,
                    class: p.class,
                });
            }
            match p.class {
                LossClass::Wireless => {
                    // Seed 002: "the packet loss caused by wireless link error is ignored by the
                    // calculation of event loss rate".
                    self.wireless_losses = self.wireless_losses.saturating_add(n);
                    self.link_errors = self
                        .link_errors
                        .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
                    if self.wireless_ranges.len() >= MAX_WIRELESS_RANGES {
                        self.wireless_ranges.pop_front();
                    }
                    self.wireless_ranges.push_back((p.lo, p.hi));
                }
                LossClass::Congestion => {
                    self.congestion_losses = self.congestion_losses.saturating_add(n);
                    let r = self.range(p.lo, p.hi, self.mark(p.before), self.mark(p.after));
                    events += self.history.add_lost(r);
                }
            }
        }
        self.declared = lost;
        events
    }

    /// A late packet removed a loss from the history: undo its counts. (A duplicate of an
    /// ECN-marked packet also removes its mark from the history, but no loss was counted for it.)
    fn uncount_congestion_loss(&mut self) {
        if self.congestion_losses > 0 {
            self.congestion_losses -= 1;
            self.lost_packets = self.lost_packets.saturating_sub(1);
        }
    }

    /// A late packet fills a hole declared lost as wireless: undo its counts (§5.1).
    fn fill_wireless(&mut self, seq: u64) {
        let Some(i) = self
            .wireless_ranges
            .iter()
            .position(|&(lo, hi)| lo <= seq && seq <= hi)
        else {
            return;
        };
        let (lo, hi) = self.wireless_ranges[i];
        self.wireless_ranges.remove(i);
        if seq < hi {
            self.wireless_ranges.insert(i, (seq + 1, hi));
        }
        if lo < seq {
            self.wireless_ranges.insert(i, (lo, seq - 1));
        }
        self.lost_packets = self.lost_packets.saturating_sub(1);
        self.wireless_losses = self.wireless_losses.saturating_sub(1);
        self.link_errors = self.link_errors.saturating_sub(1);
    }

    // ----- X_recv ------------------------------------------------------------------------

    fn trim_logs(&mut self, now: Time) {
        let r = self.newest.map_or(0.0, |n| n.rtt).max(self.r_prev_report);
        // Keep a few RTTs of arrivals (and at least a second) for the X_recv windows. The span
        // in ns directly: a `Duration` would split it into seconds and back.
        let span = round_u64((4.0 * r).max(1.0) * 1e9);
        let horizon = Time::from_nanos(now.as_nanos().saturating_sub(span));
        while self.arrivals.front().is_some_and(|e| e.0 < horizon) || self.arrivals.len() > MAX_LOG
        {
            self.arrivals.pop_front();
        }
        while self.rcvd.front().is_some_and(|e| e.1 < horizon) || self.rcvd.len() > MAX_LOG {
            self.rcvd.pop_front();
        }
    }

    /// §6.2 step 2: "Calculate the measured receive rate, X_recv, based on the packets received
    /// within the previous R_(m-1) seconds."
    fn rfc_x_recv(&self, now: Time) -> f64 {
        let Some(last) = self.last_report else {
            // §6.3: "When the first packet is received: … Set X_recv = 0."
            return 0.0;
        };
        let w = if self.r_prev_report > 0.0 {
            self.r_prev_report
        } else {
            now.saturating_since(last).as_secs_f64()
        };
        if w <= 0.0 {
            return 0.0;
        }
        let from = now.saturating_sub(duration_from_secs_f64(w));
        let bytes = self.bytes_since(from);
        if bytes == 0 && self.bytes_since_report > 0 && now > last {
            // "the receive rate MAY be calculated over a longer time interval, the time interval
            // going back to the most recent feedback timer expiration that was at least R_(m-1)
            // seconds ago" (§6.2 step 2): a report is only sent when data arrived since the last
            // one, so going back to the last report keeps "a minimum value for the measured
            // receive rate X_recv of one packet per round-trip time" when the timer fired late
            // or the packets arrived in a burst earlier than R_(m-1) ago (counted by number, so
            // that a burst arriving at the instant of the last report is not lost). A zero X_recv
            // would tell the sender the receiver had measured nothing.
            let w = now.saturating_since(last).as_secs_f64();
            return self.bytes_since_report as f64 / w;
        }
        bytes as f64 / w
    }

    /// Segment bytes of the data packets that arrived strictly after `from`.
    fn bytes_since(&self, from: Time) -> u64 {
        self.arrivals
            .iter()
            .rev()
            .take_while(|e| e.0 > from)
            .map(|e| u64::from(e.1))
            .sum()
    }

    /// NS-2 `est_thput()` in packets/s (`docs/tfrc-core.md` N23).
    fn ns2_thput(&self, now: Time) -> f64 {
        let Some(n) = self.newest else { return 1.0 };
        let last_report = self.last_report.unwrap_or(Time::ZERO);
        let since = now.saturating_since(last_report).as_secs_f64();
        if n.rtt > 0.0 && since >= n.rtt {
            if self.rcvd_since_report > 0 {
                return self.rcvd_since_report as f64 / since;
            }
            return 1.0;
        }
        if n.rtt > 0.0 {
            // Count RCVD packets that arrived within rtt_ of the newest one.
            let last = n.arr.arrival.as_secs_f64();
            let rcvd = self
                .rcvd
                .iter()
                .rev()
                .take_while(|e| e.1.as_secs_f64() + n.rtt > last)
                .count();
            if rcvd > 0 {
                return rcvd as f64 / n.rtt;
            }
        }
        1.0
    }

    fn x_recv(&self, now: Time) -> f64 {
        match self.cfg.x_recv {
            XRecvEstimator::Rfc5348 => self.rfc_x_recv(now),
            XRecvEstimator::Ns2 => self.ns2_thput(now) * f64::from(self.newest.map_or(0, |n| n.s)),
        }
    }

    // ----- first loss interval ----------------------------------------------------------------

    /// The p at which the sender's equation gives `target` bytes/s of segments of `s` bytes;
    /// TFRC-SP inverts its own rate (nominal segment, header correction; RFC 4828 §2).
    fn invert(&self, target: f64, s: f64, r: f64, t_rto: f64) -> f64 {
        let eq = &self.cfg.first_interval.equation;
        let s = self.cfg.first_interval.segment.equation_segment(s);
        match self.cfg.first_interval.inversion {
            Inversion::Exact => eq.invert(target, s, r, t_rto),
            Inversion::Ns2Bisection => eq.invert_ns2(target, s, r, t_rto),
        }
    }

    /// RFC 5348 §6.3.1: seed the history with the interval that would give X_target.
    fn seed_first_interval(&mut self, now: Time) {
        let Some(n) = self.newest else { return };
        let s = f64::from(n.s.max(1));
        let r = if n.rtt > 0.0 { n.rtt } else { DEFAULT_RTT };
        let t_rto = if n.t_rto > 0.0 { n.t_rto } else { 4.0 * r };
        let current = self.x_recv(now);
        let mut target = match self.cfg.first_interval.target {
            FirstTarget::MaxXRecv => self.max_x_recv.max(current),
            FirstTarget::LastXRecv => current,
        };
        if self.cfg.first_interval.null_interval_rule {
            // "X_target of 0.5/R packets per second" when the first data packet is "lost or
            // ECN-marked" (the receiver sees the mark; a loss below the first arrival it cannot
            // see, §6.3), and "0.5/R packets per second as the minimum value for X_target".
            let floor = 0.5 * s / r;
            target =
                if self.first_seq.is_some() && self.history.first_event_start() == self.first_seq {
                    floor
                } else {
                    target.max(floor)
                };
        }
        let p = self.invert(target, s, r, t_rto);
        let len = match self.cfg.first_interval.inversion {
            Inversion::Exact => 1.0 / p,
            Inversion::Ns2Bisection => (1.0 / p).floor(),
        };
        self.history.seed_first_interval(len);
    }

    /// NS-2 `adjust_history()` at the first gap (`docs/tfrc-core.md` N21).
    fn ns2_adjust_history(&mut self, now: Time, hdr: &DataHeader) {
        self.loss_seen = true;
        let Some(n) = self.newest else { return };
        self.history.reset();
        let s = f64::from(n.s);
        let target = self.ns2_thput(now) * s;
        let p = self.invert(target, s, n.rtt, n.t_rto);
        let len = match self.cfg.first_interval.inversion {
            Inversion::Exact => 1.0 / p,
            Inversion::Ns2Bisection => (1.0 / p).floor(),
        };
        self.history.seed_first_interval(len);
        let t = match self.cfg.event_clock {
            EventClock::ReceiverArrival => now,
            EventClock::SenderTimestamp => hdr.timestamp,
        };
        // sample[0] restarts from the last report's count (`last_sample` is not reset).
        self.history.push_event(
            self.last_walk_end,
            t,
            hdr.round,
            duration_from_secs_f64(n.rtt),
        );
        self.pending_p = Some(p);
    }

    // ----- feedback ------------------------------------------------------------------------

    fn make_due(&mut self, now: Time) {
        if !self.due {
            self.due = true;
            self.due_since = now;
        }
    }

    /// §6.1 steps 2–4 (and §6.3 for the first packets).
    fn rfc_on_data(&mut self, now: Time, first: bool, new_event: bool, removed_event: bool) {
        let r_m = self.newest.map_or(0.0, |n| n.rtt);
        if first || r_m <= 0.0 || self.timer.is_none() {
            // §6.3: "Prepare and send a feedback packet" on the first packet, and "for every
            // arriving data packet until a data packet arrives containing an estimate of the
            // round-trip time".
            self.make_due(now);
            return;
        }
        if new_event || !self.last_expiry_sent {
            let p = self.current_p();
            // "If p > p_prev, cause the feedback timer to expire"; "If p <= p_prev and no
            // feedback packet was sent when the feedback timer last expired, cause the feedback
            // timer to expire".
            if p > self.p_prev || !self.last_expiry_sent {
                self.make_due(now);
            }
            self.p_prev = p;
        }
        if removed_event {
            // §6: feedback "SHOULD also be sent … whenever an out-of-order data packet is
            // received that removes a loss event from the history".
            self.make_due(now);
        }
    }

    fn current_p(&self) -> f64 {
        self.newest
            .map_or(0.0, |n| self.history.loss_event_rate(n.arr.seq))
    }

    /// The feedback timer (or NS-2's backup report timer) expired at `now`.
    pub fn on_timeout(&mut self, now: Time) {
        let Some(t) = self.timer else { return };
        if t > now {
            return;
        }
        match self.cfg.feedback {
            FeedbackPolicy::Rfc5348 => {
                // §6.2: "If no data packets have been received since the last feedback was sent,
                // then no feedback packet is sent, and the feedback timer is restarted to expire
                // after R_m seconds."
                if self.data_since_report {
                    self.make_due(now);
                } else {
                    self.last_expiry_sent = false;
                    self.timer = self.rfc_timer(now);
                }
            }
            FeedbackPolicy::Ns2 { .. } => self.make_due(now),
        }
    }

    fn rfc_timer(&self, now: Time) -> Option<Time> {
        let r_m = self.newest.map_or(0.0, |n| n.rtt);
        (r_m > 0.0).then(|| now.saturating_add(duration_from_secs_f64(r_m)))
    }

    /// The feedback packet to send now, if one is due.
    pub fn poll_feedback(&mut self, now: Time) -> Option<Feedback> {
        if !self.due {
            return None;
        }
        self.due = false;
        let n = self.newest?;
        match self.cfg.feedback {
            FeedbackPolicy::Rfc5348 => {
                // §6.2 steps 1–4.
                let p = self.current_p();
                let x_recv = self.x_recv(now);
                self.p_prev = p;
                self.r_prev_report = n.rtt;
                self.timer = self.rfc_timer(now);
                self.last_expiry_sent = true;
                Some(self.build(now, n, p, x_recv))
            }
            FeedbackPolicy::Ns2 {
                backup_factor,
                per_rtt,
            } => {
                // NS-2 nextpkt(): report, then the backup timer at 1.5·rtt_/NumFeedback_.
                if n.rtt > 0.0 {
                    self.timer = Some(
                        now.saturating_add(duration_from_secs_f64(backup_factor * n.rtt / per_rtt)),
                    );
                }
                let pending_p = self.pending_p.take();
                // "don't send an ACK unless we've received new data".
                if n.arr.arrival < self.last_report.unwrap_or(Time::ZERO) {
                    return None;
                }
                let p = match pending_p {
                    Some(p) => p,
                    None => self.ns2_est_loss(n),
                };
                let x_recv = self.x_recv(now);
                self.rcvd_since_report = 0;
                Some(self.build(now, n, p, x_recv))
            }
        }
    }

    /// NS-2 `est_loss_WALI()`: discounting is evaluated here, at report time (`docs/tfrc-core.md`
    /// N20).
    fn ns2_est_loss(&mut self, n: Newest) -> f64 {
        if let Discounting::On {
            update: DiscountUpdate::EveryReport,
            ..
        } = self.cfg.averaging.discount
        {
            self.history.update_discount(n.arr.seq);
        }
        self.last_walk_end = n.arr.seq;
        self.history.loss_event_rate(n.arr.seq)
    }

    fn build(&mut self, now: Time, n: Newest, p: f64, x_recv: f64) -> Feedback {
        self.max_x_recv = self.max_x_recv.max(x_recv);
        self.last_x_recv = x_recv;
        self.last_report = Some(now);
        self.data_since_report = false;
        self.bytes_since_report = 0;
        self.feedbacks_sent = self.feedbacks_sent.saturating_add(1);
        let link_errors = core::mem::take(&mut self.link_errors);
        Feedback {
            // §3.2.2: "The timestamp of the last data packet received" and "The amount of time
            // elapsed between the receipt of the last data packet … and the generation of this
            // feedback report".
            timestamp_echo: n.arr.ts,
            elapsed: now.saturating_since(n.arr.arrival),
            x_recv,
            p: if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) },
            highest_seq: n.arr.seq,
            hops: n.hops,
            link_errors,
            lost_per_event: match self.cfg.loss_multiplicity {
                LossMultiplicity::Off => 1.0,
                LossMultiplicity::WeightedMean => self.history.lost_per_event(),
            },
        }
    }

    /// The next instant the receiver must be woken, if any.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.due {
            return Some(self.due_since);
        }
        self.timer
    }

    // ----- introspection -------------------------------------------------------------------

    /// Current loss event rate p.
    pub fn loss_event_rate(&self) -> f64 {
        self.current_p()
    }

    /// The loss-interval history.
    pub fn history(&self) -> &LossHistory {
        &self.history
    }

    /// A snapshot for reports and live status.
    pub fn status(&self) -> ReceiverStatus {
        let s_c = self.newest.map(|n| n.arr.seq);
        ReceiverStatus {
            p: self.current_p(),
            x_recv: self.last_x_recv,
            open_interval: s_c.and_then(|s| self.history.open_interval(s)),
            loss_intervals: self
                .history
                .closed_intervals()
                .into_iter()
                .map(|c| c.0)
                .collect(),
            lost_packets: self.lost_packets,
            marked_packets: self.marked_packets,
            loss_events: self.history.events_total(),
            packets_received: self.packets_received,
            bytes_received: self.bytes_received,
            feedbacks_sent: self.feedbacks_sent,
            highest_seq: s_c,
            congestion_losses: self.congestion_losses,
            wireless_losses: self.wireless_losses,
            avg_one_way_delay: self.owd.as_ref().and_then(OwdState::average),
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod variant_tests;
