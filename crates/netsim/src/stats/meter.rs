//! The simulator's flow statistics during a run: per-flow arrays, hot counters apart.
//!
//! A [`FlowRecorder`] keeps everything of one flow direction in one struct, with its three
//! series and its histogram on separate heap blocks: a send or a delivery touched several
//! cache lines spread over the recorder and three heap blocks. Here what a send or a delivery
//! reads and writes (the sums of the current span, the delay sums and extremes, the delay
//! histogram's page table) sits in one dense array indexed by `2 · flow + direction`; the
//! series and what is rarely touched (the window counters, drops, marks, the high words of
//! the sums, the delay log) sit in a second array, which a common send or delivery does not
//! index. Each direction keeps the span (a time range within one bin and on one side of
//! each window bound) of its last send and of its last delivery, and adds up packets and
//! bytes there; when an event falls outside, the span's sums enter the series and, if it is
//! in the window, the window counters. So one range test per event stands for the bin
//! lookup, the bin change test and the window test. [`FlowMeters::recorder`] turns a
//! direction into the [`FlowRecorder`] the same events would have built, field for field:
//! the integer sums are the same sums, and every float operation (the RFC 3550 jitter) is
//! the recorder's, in the same order (`docs/performance.md`, "Third round").

use core::time::Duration;

use super::{
    merge_pairs, reserve_bins, rfc3550_step, DelayHistogram, DelayStats, DropCause, FlowRecorder,
};
use super::{StatsConfig, MAX_BINS};
use crate::Time;

/// No bin (no bin number reaches it: see [`Clock::new_span`]).
const NO_BIN: u64 = u64::MAX;

/// A time span: `[start, end)` in ns within one bin and on one side of each window bound,
/// its bin number and whether it is in the window.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u64,
    end: u64,
    bin: u64,
    in_window: bool,
}

impl Span {
    /// No span: it holds no time, and its bin is [`NO_BIN`].
    const NONE: Span = Span {
        start: 0,
        end: 0,
        bin: NO_BIN,
        in_window: false,
    };

    #[inline(always)]
    fn holds(&self, t: u64) -> bool {
        t >= self.start && t < self.end
    }
}

/// What a send or a delivery of one flow direction touches.
#[derive(Clone, Debug)]
struct Hot {
    /// The spans of the last send and of the last delivery ([`Span::NONE`] before any).
    sent_span: Span,
    recv_span: Span,
    /// Packets, wire and payload bytes sent in `sent_span`.
    sent_packets: u64,
    sent_bytes: u64,
    sent_payload: u64,
    /// Wire and payload bytes delivered in `recv_span`.
    recv_bytes: u64,
    recv_payload: u64,
    /// Packets delivered in the window (each one's delay statistics need the count).
    delivered_packets: u64,
    /// Low 64 bits of the delay sum and of the sum of |delay differences| (the high words,
    /// rarely touched, are in [`Cold`]).
    sum_lo: u64,
    diff_lo: u64,
    min_ns: u64,
    max_ns: u64,
    /// The last delivery's delay and time, and the first's (meaningful once
    /// `delivered_packets` > 0).
    last_ns: u64,
    last_at: u64,
    first_at: u64,
    rfc3550_ns: f64,
    /// Here, not in [`Cold`]: every delivery counts its delay in it.
    hist: DelayHistogram,
}

impl Hot {
    const EMPTY: Hot = Hot {
        sent_span: Span::NONE,
        recv_span: Span::NONE,
        sent_packets: 0,
        sent_bytes: 0,
        sent_payload: 0,
        recv_bytes: 0,
        recv_payload: 0,
        delivered_packets: 0,
        sum_lo: 0,
        diff_lo: 0,
        min_ns: u64::MAX,
        max_ns: 0,
        last_ns: 0,
        last_at: 0,
        first_at: 0,
        rfc3550_ns: 0.0,
        hist: DelayHistogram::EMPTY,
    };
}

/// What only span changes, rare events and the end-of-run report touch.
#[derive(Clone, Debug, Default)]
struct Cold {
    /// Times the series' resolution was halved ([`MAX_BINS`]).
    shift: u32,
    sent_series: Vec<u64>,
    recv_series: Vec<u64>,
    goodput_series: Vec<u64>,
    /// The window counters of the spans closed so far.
    sent_packets: u64,
    sent_bytes: u64,
    sent_payload: u64,
    delivered_bytes: u64,
    delivered_payload: u64,
    sum_hi: u64,
    diff_hi: u64,
    drops: [u64; 5],
    exposed: u64,
    marked: u64,
    delays: Vec<(Time, Duration)>,
}

impl Cold {
    fn add(series: &mut Vec<u64>, bin: u64, shift: u32, v: u64) {
        if bin == NO_BIN {
            return;
        }
        // Below MAX_BINS once shifted (`enter` coarsens first), so the index fits.
        let idx = (bin >> shift) as usize;
        if series.len() <= idx {
            reserve_bins(series, idx + 1);
            series.resize(idx + 1, 0);
        }
        series[idx] += v;
    }

    /// The sends of `h`'s send span enter the series and, if it is in the window, the
    /// counters; the span ends.
    fn close_sent(&mut self, h: &mut Hot) {
        let s = h.sent_span;
        Self::add(&mut self.sent_series, s.bin, self.shift, h.sent_bytes);
        if s.in_window {
            self.sent_packets += h.sent_packets;
            self.sent_bytes += h.sent_bytes;
            self.sent_payload += h.sent_payload;
        }
        h.sent_span = Span::NONE;
        (h.sent_packets, h.sent_bytes, h.sent_payload) = (0, 0, 0);
    }

    /// [`Cold::close_sent`] for the deliveries.
    fn close_recv(&mut self, h: &mut Hot) {
        let s = h.recv_span;
        Self::add(&mut self.recv_series, s.bin, self.shift, h.recv_bytes);
        Self::add(&mut self.goodput_series, s.bin, self.shift, h.recv_payload);
        if s.in_window {
            self.delivered_bytes += h.recv_bytes;
            self.delivered_payload += h.recv_payload;
        }
        h.recv_span = Span::NONE;
        (h.recv_bytes, h.recv_payload) = (0, 0);
    }
}

/// The bins and the window, shared by every direction.
#[derive(Clone, Debug)]
struct Clock {
    bin_ns: u64,
    /// The last span looked up: consecutive span changes (of different flows) almost
    /// always fall in it, and spare a division.
    span: Span,
    /// The measurement window as inclusive bounds in ns (`window_end` − 1; empty as 1, 0).
    window: (u64, u64),
}

impl Clock {
    #[inline(always)]
    fn in_window(&self, t: u64) -> bool {
        t >= self.window.0 && t <= self.window.1
    }

    /// The span holding `t`.
    fn lookup(&mut self, t: u64) -> Span {
        if !self.span.holds(t) {
            self.span = self.new_span(t);
        }
        self.span
    }

    /// The span holding `t`, computed. Bin `u64::MAX` is [`NO_BIN`], so it becomes
    /// `u64::MAX − 1`: only a 1 ns bin reaches it, and there the series are coarsened
    /// (shift ≥ 1), where both numbers give the same bin.
    fn new_span(&self, t: u64) -> Span {
        let n = t / self.bin_ns;
        let mut start = n * self.bin_ns;
        let mut end = start.saturating_add(self.bin_ns);
        let (first, last) = self.window;
        let in_window = self.in_window(t);
        if t < first {
            end = end.min(first);
        } else if in_window {
            start = start.max(first);
            // `last` + 1 past u64::MAX: the span ends at u64::MAX, looked up anew there.
            end = end.min(last.saturating_add(1));
        } else {
            start = start.max(last + 1);
        }
        Span {
            start,
            end,
            bin: n.min(NO_BIN - 1),
            in_window,
        }
    }
}

/// Every flow direction's statistics during a run (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct FlowMeters {
    cfg: StatsConfig,
    clock: Clock,
    hot: Vec<Hot>,
    cold: Vec<Cold>,
}

impl FlowMeters {
    /// Meters for `n` flow directions (index `2 · flow + direction`).
    pub fn new(cfg: &StatsConfig, n: usize) -> Self {
        let start = cfg.window_start.as_nanos();
        let window = match cfg.window_end.map(Time::as_nanos) {
            None => (start, u64::MAX),
            Some(0) => (1, 0),
            Some(end) => (start, end - 1),
        };
        FlowMeters {
            cfg: cfg.clone(),
            clock: Clock {
                bin_ns: cfg.bin_ns(),
                span: Span::NONE,
                window,
            },
            hot: vec![Hot::EMPTY; n],
            cold: vec![Cold::default(); n],
        }
    }

    /// A direction's first send (`sent` = true) or delivery in the span of `t`: the last
    /// span's sums are closed, after coarsening the series if the new span's bin lies past
    /// [`MAX_BINS`]. Takes the direction's two parts, not an index, so that the common path
    /// indexes [`Cold`] nowhere.
    #[cold]
    #[inline(never)]
    fn enter(clock: &mut Clock, h: &mut Hot, c: &mut Cold, t: u64, sent: bool) {
        let s = clock.lookup(t);
        if s.bin >> c.shift >= MAX_BINS as u64 {
            // The recorder merges series holding every earlier event: close both first.
            c.close_sent(h);
            c.close_recv(h);
            while s.bin >> c.shift >= MAX_BINS as u64 {
                for s in [
                    &mut c.sent_series,
                    &mut c.recv_series,
                    &mut c.goodput_series,
                ] {
                    merge_pairs(s, |a, b| a + b);
                }
                c.shift += 1;
            }
        }
        if sent {
            c.close_sent(h);
            h.sent_span = s;
        } else {
            c.close_recv(h);
            h.recv_span = s;
        }
    }

    /// [`FlowRecorder::on_sent`] of direction `i`.
    #[inline(always)]
    pub fn on_sent(&mut self, i: usize, now: Time, size: u32, payload: u32) {
        let t = now.as_nanos();
        let h = &mut self.hot[i];
        if !h.sent_span.holds(t) {
            Self::enter(&mut self.clock, h, &mut self.cold[i], t, true);
        }
        h.sent_packets += 1;
        h.sent_bytes += u64::from(size);
        h.sent_payload += u64::from(payload);
    }

    /// [`FlowRecorder::on_delivered`] of direction `i`.
    #[inline(always)]
    pub fn on_delivered(&mut self, i: usize, now: Time, sent_at: Time, size: u32, payload: u32) {
        let t = now.as_nanos();
        let h = &mut self.hot[i];
        if !h.recv_span.holds(t) {
            Self::enter(&mut self.clock, h, &mut self.cold[i], t, false);
        }
        h.recv_bytes += u64::from(size);
        h.recv_payload += u64::from(payload);
        if !h.recv_span.in_window {
            return;
        }
        let k = h.delivered_packets;
        h.delivered_packets = k + 1;
        let d = t.saturating_sub(sent_at.as_nanos());
        let sum_carry;
        (h.sum_lo, sum_carry) = h.sum_lo.overflowing_add(d);
        let mut diff_carry = false;
        h.min_ns = h.min_ns.min(d);
        h.max_ns = h.max_ns.max(d);
        h.hist.add_one(d);
        if k == 0 {
            h.first_at = t;
        } else {
            let diff = d.abs_diff(h.last_ns);
            (h.diff_lo, diff_carry) = h.diff_lo.overflowing_add(diff);
            h.rfc3550_ns = rfc3550_step(h.rfc3550_ns, diff);
        }
        h.last_ns = d;
        h.last_at = t;
        let record = self.cfg.record_delays;
        if sum_carry | diff_carry | record {
            Self::rare(&mut self.cold[i], sum_carry, diff_carry, record, now, d);
        }
    }

    /// What a delivery seldom does: carry into the high words of the sums (the delays' if
    /// `sum`, the differences' if `diff`) and log the delay (if `record`).
    #[cold]
    #[inline(never)]
    fn rare(c: &mut Cold, sum: bool, diff: bool, record: bool, now: Time, d: u64) {
        c.sum_hi += u64::from(sum);
        c.diff_hi += u64::from(diff);
        if record {
            c.delays.push((now, Duration::from_nanos(d)));
        }
    }

    /// [`FlowRecorder::on_exposed`] of direction `i`.
    pub fn on_exposed(&mut self, i: usize, now: Time) {
        if self.clock.in_window(now.as_nanos()) {
            self.cold[i].exposed += 1;
        }
    }

    /// [`FlowRecorder::on_marked`] of direction `i`.
    pub fn on_marked(&mut self, i: usize, now: Time) {
        if self.clock.in_window(now.as_nanos()) {
            self.cold[i].marked += 1;
        }
    }

    /// [`FlowRecorder::on_dropped`] of direction `i`.
    pub fn on_dropped(&mut self, i: usize, now: Time, cause: DropCause) {
        if self.clock.in_window(now.as_nanos()) {
            self.cold[i].drops[cause.index()] += 1;
        }
    }

    /// The recorder of direction `i` (an empty one past the meters, as when flows are not
    /// metered).
    pub fn recorder(&self, i: usize) -> FlowRecorder {
        let (Some(h), Some(c)) = (self.hot.get(i), self.cold.get(i)) else {
            return FlowRecorder::new(&self.cfg);
        };
        let (mut h, mut c) = (h.clone(), c.clone());
        c.close_sent(&mut h);
        c.close_recv(&mut h);
        let count = h.delivered_packets;
        let mut hist = h.hist;
        hist.set_len(count);
        let delivered = count > 0;
        FlowRecorder {
            cfg: self.cfg.clone(),
            bin_ns: self.clock.bin_ns << c.shift,
            last_bin: (0, 0, 0),
            sent_packets: c.sent_packets,
            sent_bytes: c.sent_bytes,
            sent_payload: c.sent_payload,
            delivered_packets: count,
            delivered_bytes: c.delivered_bytes,
            delivered_payload: c.delivered_payload,
            drops: c.drops,
            exposed: c.exposed,
            marked: c.marked,
            delay: DelayStats {
                count,
                sum_ns: (u128::from(c.sum_hi) << 64) | u128::from(h.sum_lo),
                min_ns: h.min_ns,
                max_ns: h.max_ns,
                hist,
                last_ns: delivered.then_some(h.last_ns),
                sum_abs_diff_ns: (u128::from(c.diff_hi) << 64) | u128::from(h.diff_lo),
                diffs: count.saturating_sub(1),
                rfc3550_ns: h.rfc3550_ns,
            },
            first_delivery: delivered.then(|| Time::from_nanos(h.first_at)),
            last_delivery: delivered.then(|| Time::from_nanos(h.last_at)),
            sent_series: c.sent_series,
            recv_series: c.recv_series,
            goodput_series: c.goodput_series,
            delays: c.delays,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Ev {
        Sent(u32, u32),
        Delivered(u64, u32, u32),
        Dropped(usize),
        Exposed,
        Marked,
    }

    fn ev() -> impl Strategy<Value = Ev> {
        prop_oneof![
            4 => (0u32..2000, 0u32..1500).prop_map(|(s, p)| Ev::Sent(s, p)),
            4 => (0u64..3_000_000_000, 0u32..2000, 0u32..1500)
                .prop_map(|(d, s, p)| Ev::Delivered(d, s, p)),
            1 => (0usize..5).prop_map(Ev::Dropped),
            1 => Just(Ev::Exposed),
            1 => Just(Ev::Marked),
        ]
    }

    /// Every field of two recorders (the cached bin lookup aside), floats by their bits.
    fn assert_same(a: &FlowRecorder, b: &FlowRecorder) {
        assert_eq!(a.cfg, b.cfg);
        assert_eq!(a.bin_ns, b.bin_ns);
        assert_eq!(
            (a.sent_packets, a.sent_bytes, a.sent_payload),
            (b.sent_packets, b.sent_bytes, b.sent_payload)
        );
        assert_eq!(
            (a.delivered_packets, a.delivered_bytes, a.delivered_payload),
            (b.delivered_packets, b.delivered_bytes, b.delivered_payload)
        );
        assert_eq!(
            (a.drops, a.exposed, a.marked),
            (b.drops, b.exposed, b.marked)
        );
        let (x, y) = (&a.delay, &b.delay);
        assert_eq!(
            (x.count, x.sum_ns, x.min_ns, x.max_ns, x.last_ns),
            (y.count, y.sum_ns, y.min_ns, y.max_ns, y.last_ns)
        );
        assert_eq!((x.sum_abs_diff_ns, x.diffs), (y.sum_abs_diff_ns, y.diffs));
        assert_eq!(x.rfc3550_ns.to_bits(), y.rfc3550_ns.to_bits());
        assert_eq!(x.hist, y.hist);
        assert_eq!(
            (a.first_delivery, a.last_delivery),
            (b.first_delivery, b.last_delivery)
        );
        assert_eq!(a.sent_series, b.sent_series);
        assert_eq!(a.recv_series, b.recv_series);
        assert_eq!(a.goodput_series, b.goodput_series);
        assert_eq!(a.delays, b.delays);
    }

    /// Feed the same events to a recorder and to meter 1 of 3 (its neighbours get events of
    /// their own), checking the two after each step.
    fn check(cfg: &StatsConfig, events: &[(u64, Ev)]) {
        let mut rec = FlowRecorder::new(cfg);
        let mut m = FlowMeters::new(cfg, 3);
        for (t, e) in events {
            let now = Time::from_nanos(*t);
            match *e {
                Ev::Sent(s, p) => {
                    rec.on_sent(now, s, p);
                    m.on_sent(1, now, s, p);
                    m.on_sent(0, now, 1, 1);
                }
                Ev::Delivered(d, s, p) => {
                    let at = Time::from_nanos(t.saturating_sub(d));
                    rec.on_delivered(now, at, s, p);
                    m.on_delivered(1, now, at, s, p);
                    m.on_delivered(2, now, now, 1, 1);
                }
                Ev::Dropped(c) => {
                    rec.on_dropped(now, DropCause::ALL[c]);
                    m.on_dropped(1, now, DropCause::ALL[c]);
                }
                Ev::Exposed => {
                    rec.on_exposed(now);
                    m.on_exposed(1, now);
                }
                Ev::Marked => {
                    rec.on_marked(now);
                    m.on_marked(1, now);
                }
            }
            assert_same(&rec, &m.recorder(1));
        }
        assert_same(&FlowRecorder::new(cfg), &m.recorder(3));
    }

    proptest! {
        /// The meters build the recorder the same events build, whatever the bin width,
        /// window, order of times (the simulator's are increasing; the meters do not need
        /// it) and coarsening.
        #[test]
        fn meters_build_the_recorders_events_build(
            bin_us in prop_oneof![Just(0u64), 1u64..5, Just(1_000_000)],
            window in (0u64..4_000_000_000, proptest::option::of(0u64..8_000_000_000)),
            record_delays in any::<bool>(),
            steps in proptest::collection::vec((0u64..400_000_000, ev()), 1..60),
            sorted in any::<bool>(),
        ) {
            let cfg = StatsConfig {
                bin_width: Duration::from_micros(bin_us),
                window_start: Time::from_nanos(window.0),
                window_end: window.1.map(Time::from_nanos),
                record_delays,
            };
            let mut t = 0u64;
            let events: Vec<(u64, Ev)> = steps
                .into_iter()
                .map(|(dt, e)| {
                    // Increasing times (a third of the steps 0: events at one instant), or
                    // times in any order.
                    t = if sorted { t + dt * u64::from(dt % 3 != 0) } else { dt * 5 };
                    (t, e)
                })
                .collect();
            check(&cfg, &events);
        }
    }

    #[test]
    fn extreme_times_and_sums() {
        let cfg = StatsConfig {
            bin_width: Duration::from_nanos(1),
            ..StatsConfig::default()
        };
        let big = u64::MAX - 5;
        check(
            &cfg,
            &[
                (3, Ev::Sent(10, 8)),
                (big, Ev::Delivered(big, 10, 8)),
                (big, Ev::Delivered(big, 10, 8)),
                (u64::MAX, Ev::Sent(7, 7)),
                (u64::MAX, Ev::Delivered(1, 7, 7)),
                (u64::MAX, Ev::Delivered(u64::MAX, 7, 7)),
                (5, Ev::Sent(1, 1)),
            ],
        );
    }
}
