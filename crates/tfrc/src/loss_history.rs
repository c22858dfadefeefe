//! Loss events, loss intervals and the average loss interval (RFC 5348 §5.2–§5.5).
//!
//! The receiver hands lost (or ECN-marked) packets to [`LossHistory`] as ranges of sequence
//! numbers together with the two received packets that bracket them; the history groups them into
//! loss events (§5.2), derives the loss intervals (§5.3) and averages them (§5.4) with optional
//! history discounting (§5.5). A late packet can remove a loss again (§5.1), which regroups the
//! events from that point on.
//!
//! The averaging itself ([`average_interval`]) is a pure function of the interval window so that
//! the seed variants E3/E4 (transforms of the window, `docs/variants.md`) slot in as values of
//! [`IntervalTransform`].

use std::collections::VecDeque;

use core::time::Duration;

use crate::Time;

/// Which intervals enter the "with I_0" average when fewer than n closed intervals exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AveragingWindow {
    /// RFC 5348 §5.4: with k closed intervals (k < n), I_0..I_(k-1) and I_1..I_k.
    Rfc5348,
    /// NS-2.35 WALI: the "with I_0" window holds one interval more, I_0..I_k (`docs/tfrc-core.md`
    /// N19).
    Ns2,
}

/// When the general discount factor DF of §5.5 is recomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscountUpdate {
    /// RFC 5348 §5.5: "updated on every packet arrival".
    EveryPacket,
    /// NS-2.35: only when a report is built (`docs/tfrc-core.md` N20).
    EveryReport,
}

/// History discounting (RFC 5348 §5.5, OPTIONAL).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Discounting {
    /// No discounting: every DF is 1.
    Off,
    /// Discount older intervals when I_0 > 2·I_mean, with DF floored at `threshold`
    /// (RFC 5348: 0.25; RFC 3448 and NS-2.35: 0.5).
    On {
        /// Lowest value of DF.
        threshold: f64,
        /// When DF is recomputed.
        update: DiscountUpdate,
    },
}

/// A transform applied to each window of intervals before the weighted mean (seed 000 §3.2,
/// variants E3/E4 in `docs/variants.md`). Each applies to both windows of §5.4's max rule; with
/// fewer than [`MIN_TRANSFORM_INTERVALS`] closed intervals every form falls back to `Plain`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IntervalTransform {
    /// The RFC 5348 §5.4 weighted mean of the intervals as they are.
    Plain,
    /// E3 replace form (seed 000 eq. 6–7): the smallest interval of the window becomes
    /// `lo = max(1, m - t*sd/sqrt(k))` and the largest `hi = m + t*sd/sqrt(k)`, each keeping its
    /// position and weight (`m`, `sd`: mean and sample standard deviation of the k values).
    ConfidenceReplace {
        /// Confidence coefficient (1.96 for 95%).
        t: f64,
    },
    /// E3 include form (seed 000 eq. 8): `lo` and `hi` are appended as the two oldest entries
    /// and the mean runs over k + 2 values with the general weights of eq. 5.
    ConfidenceInclude {
        /// Confidence coefficient (1.96 for 95%).
        t: f64,
    },
    /// E4 replace form (seed 000 eq. 9): the smallest and the largest interval each become the
    /// window mean, keeping their weights.
    MeanReplace,
    /// E4 include form (seed 000 eq. 10): the window mean is appended as the oldest entry and the
    /// mean runs over k + 1 values with the general weights of eq. 5.
    MeanInclude,
}

/// E3/E4 need this many closed intervals; with fewer they use the plain RFC mean
/// (`docs/variants.md` E3: "With fewer than 3 closed intervals, fall back to the plain RFC
/// mean").
pub const MIN_TRANSFORM_INTERVALS: usize = 3;

/// How the open interval I_0 is counted (RFC 5348 §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntervalCounting {
    /// "the size of I_0 is S_C - S_A + 1".
    Rfc5348,
    /// NS-2.35 counts I_0 = S_C - S_A (`docs/tfrc-core.md` N18).
    Ns2,
}

/// How the lost packets of a short loss interval are counted (RFC 4828 §3, Appendix C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShortLossCount {
    /// RFC 4828 §3: a short interval of N packets with K lost or marked packets has the
    /// length N/K ("contributing to a loss event rate of K/N instead of 1/N").
    All,
    /// RFC 4828 Appendix C's gradual alternative: an interval spanning m round-trip times (m =
    /// ⌈duration/R⌉, short when m ≤ `rtts`) counts max(1, ⌊K·(rtts + 1 − m)/rtts⌋) losses;
    /// with `rtts` = 3: every loss for one RTT, two thirds for two, one third for three, one
    /// loss for four or more.
    Gradual,
}

/// TFRC-SP's loss counting in short loss intervals (RFC 4828 §3 "Measuring the loss event rate
/// in times of high loss"; `docs/rfc4828-conformance.md`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShortIntervals {
    /// RFC 5348: every loss interval is its length in packets.
    Off,
    /// RFC 4828: an interval of at most `rtts` round-trip times counts its losses.
    Rfc4828 {
        /// An interval is short when it lasts at most this many RTTs (RFC 4828: 2; 3 for the
        /// gradual count).
        rtts: f64,
        /// How its losses are counted.
        counting: ShortLossCount,
        /// RFC 4828 §3: the open interval I_0 enters the average only once more than `rtts`
        /// round-trip times have passed since its loss event began ("If the current loss
        /// interval I_0 is short then I_tot = I_tot1"). Off: a short I_0 counts its losses too
        /// (NS-2.35's `ShortIntervals_` 1).
        exclude_open: bool,
    },
}

/// Parameters of the average loss interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Averaging {
    /// Number of intervals n (RFC 5348 §5.4: 8; "SHOULD NOT" exceed 8).
    pub n: usize,
    /// Window rule for fewer than n intervals.
    pub window: AveragingWindow,
    /// History discounting.
    pub discount: Discounting,
    /// Transform of the interval window.
    pub transform: IntervalTransform,
    /// How I_0 is counted.
    pub counting: IntervalCounting,
    /// TFRC-SP's counting of losses in short intervals (RFC 4828).
    pub short_intervals: ShortIntervals,
}

impl Averaging {
    /// RFC 5348 §5.4/§5.5: n = 8, discounting on with THRESHOLD 0.25 updated per packet.
    pub const RFC5348: Averaging = Averaging {
        n: 8,
        window: AveragingWindow::Rfc5348,
        discount: Discounting::On {
            threshold: 0.25,
            update: DiscountUpdate::EveryPacket,
        },
        transform: IntervalTransform::Plain,
        counting: IntervalCounting::Rfc5348,
        short_intervals: ShortIntervals::Off,
    };

    /// NS-2.35 Agent/TFRCSink defaults: WALI with n = 8, `smooth_` weights, discounting with
    /// `minDiscountRatio_` 0.5 evaluated per report.
    pub const NS2: Averaging = Averaging {
        n: 8,
        window: AveragingWindow::Ns2,
        discount: Discounting::On {
            threshold: 0.5,
            update: DiscountUpdate::EveryReport,
        },
        transform: IntervalTransform::Plain,
        counting: IntervalCounting::Ns2,
        short_intervals: ShortIntervals::Off,
    };
}

/// Largest n accepted (the weights are recomputed per call; this bounds the work).
pub const MAX_N: usize = 64;

/// RFC 5348 §5.4 weight w_i for i in 0..n:
/// "If (i < n/2) { w_i = 1; } Else { w_i = 2 * (n-i)/(n+2); }"
pub fn weight(i: usize, n: usize) -> f64 {
    let (i, n) = (i as f64, n as f64);
    if i < n / 2.0 {
        1.0
    } else {
        2.0 * (n - i) / (n + 2.0)
    }
}

/// [`weight`] for `i` < `n` ≤ [`MAX_N`], the same bits from integers: exact small integers
/// convert in one instruction where `usize as f64` takes several.
fn weight_below(i: usize, n: usize) -> f64 {
    debug_assert!(i < n && n <= MAX_N);
    // Lossless: n ≤ MAX_N.
    let (i, n) = (i as u32, n as u32);
    let w = if 2 * i < n {
        1.0
    } else {
        2.0 * f64::from(n - i) / f64::from(n + 2)
    };
    debug_assert_eq!(w.to_bits(), weight(i as usize, n as usize).to_bits());
    w
}

/// Seed 000 eq. 5's general weight for position `i` (1-based, newest first) of `n` values:
/// "W_i = 1 for 1 <= i <= n/2, 1 - (i - n/2)/(n/2 + 1) for n/2 <= i <= n". For even n it equals
/// the RFC's [`weight`]`(i - 1, n)`; for n = 8 it is 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2.
pub fn general_weight(i: usize, n: usize) -> f64 {
    let (i, half) = (i as f64, n as f64 / 2.0);
    if i <= half {
        1.0
    } else {
        (1.0 - (i - half) / (half + 1.0)).max(0.0)
    }
}

/// One window of the §5.4 average: (interval, DF_i, DF) newest first; position j weighs
/// `weight(j, n) * DF_i * DF` (in that order, so the plain mean is bit-for-bit the RFC sum).
/// Windows hold at most n entries (n ≤ [`MAX_N`]) plus the include forms' extra entries.
struct Window {
    v: [(f64, f64, f64); MAX_N + 2],
    len: usize,
}

impl Window {
    fn new() -> Window {
        Window {
            v: [(0.0, 0.0, 0.0); MAX_N + 2],
            len: 0,
        }
    }

    fn push(&mut self, value: f64, df_i: f64, df: f64) {
        if self.len < self.v.len() {
            self.v[self.len] = (value, df_i, df);
            self.len += 1;
        }
    }

    /// The weighted mean, with the transform applied when `closed` ≥ 3 intervals exist; `None`
    /// when the weights sum to zero.
    fn mean(mut self, n: usize, transform: IntervalTransform, closed: usize) -> Option<f64> {
        let transform = if closed < MIN_TRANSFORM_INTERVALS || self.len < 2 {
            IntervalTransform::Plain
        } else {
            transform
        };
        if transform == IntervalTransform::Plain {
            return self.weighted(n, 0);
        }
        let m = self.len;
        let vals = || self.v[..m].iter().map(|e| e.0);
        let mean = vals().sum::<f64>() / m as f64;
        match transform {
            IntervalTransform::Plain => self.weighted(n, 0),
            IntervalTransform::ConfidenceReplace { t }
            | IntervalTransform::ConfidenceInclude { t } => {
                // Seed 000 eq. 6: (X - t*sigma/sqrt(k), X + t*sigma/sqrt(k)), sigma the sample
                // standard deviation; lo clamped to one packet (`docs/variants.md` E3).
                let var = vals().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (m - 1) as f64;
                let h = t * var.sqrt() / (m as f64).sqrt();
                let (lo, hi) = ((mean - h).max(1.0), mean + h);
                if let IntervalTransform::ConfidenceReplace { .. } = transform {
                    // Eq. 7: min and max replaced, "the corresponding weights ... are weights of
                    // min and max".
                    self.replace_extremes(lo, hi);
                    self.weighted(n, 0)
                } else {
                    // Eq. 8: lo and hi appended as the two oldest entries, k + 2 general weights.
                    let (_, d1, d2) = self.v[m - 1];
                    self.push(lo, d1, d2);
                    self.push(hi, d1, d2);
                    self.weighted(n + 2, 2)
                }
            }
            IntervalTransform::MeanReplace => {
                // Eq. 9: min and max each replaced by the mean.
                self.replace_extremes(mean, mean);
                self.weighted(n, 0)
            }
            IntervalTransform::MeanInclude => {
                // Eq. 10: the mean appended as the oldest entry, k + 1 general weights.
                let (_, d1, d2) = self.v[m - 1];
                self.push(mean, d1, d2);
                self.weighted(n + 1, 1)
            }
        }
    }

    /// Replace the first smallest value by `lo` and the first largest by `hi` (nothing when all
    /// values are equal).
    fn replace_extremes(&mut self, lo: f64, hi: f64) {
        let w = &mut self.v[..self.len];
        let (mut imin, mut imax) = (0, 0);
        for (i, e) in w.iter().enumerate() {
            if e.0 < w[imin].0 {
                imin = i;
            }
            if e.0 > w[imax].0 {
                imax = i;
            }
        }
        if imin != imax {
            w[imin].0 = lo;
            w[imax].0 = hi;
        }
    }

    /// Σ v·w·d / Σ w·d with the RFC weights of n (`extra` = 0) or eq. 5's general weights of
    /// n values (`extra` > 0: the include forms, n already counting the appended entries).
    fn weighted(&self, n: usize, extra: usize) -> Option<f64> {
        let mut sums = Sums::default();
        for (j, &(v, d1, d2)) in self.v[..self.len].iter().enumerate() {
            let w = if extra == 0 {
                weight(j, n)
            } else {
                general_weight(j + 1, n)
            } * d1
                * d2;
            sums.add_weighted(v, w);
        }
        sums.mean()
    }
}

/// Σ v·w and Σ w of one window, accumulated in window order.
#[derive(Clone, Copy, Default)]
struct Sums {
    tot: f64,
    wt: f64,
}

impl Sums {
    fn add_weighted(&mut self, v: f64, w: f64) {
        self.tot += v * w;
        self.wt += w;
    }

    /// Position `j` < n of a window of n with the RFC weight, as [`Window::weighted`] adds it.
    fn add(&mut self, j: usize, n: usize, v: f64, d1: f64, d2: f64) {
        self.add_weighted(v, weight_below(j, n) * d1 * d2);
    }

    fn mean(self) -> Option<f64> {
        (self.wt > 0.0).then(|| self.tot / self.wt)
    }
}

/// The average loss interval I_mean of RFC 5348 §5.4 with the discounting of §5.5.
///
/// `open` is I_0; `closed` holds I_1, I_2, … newest first, each with its discount factor DF_i;
/// `df` is the general discount factor DF. Returns `None` when there is no closed interval (no
/// loss yet: "the receiver does not calculate the average loss interval"). The configured
/// [`IntervalTransform`] is applied to each of the two windows.
pub fn average_interval(open: f64, closed: &[(f64, f64)], df: f64, cfg: &Averaging) -> Option<f64> {
    average_with(Some(open), closed, df, cfg)
}

/// [`average_interval`] where `open` = `None` leaves I_0 out: I_mean = I_tot1/W_tot (RFC 4828
/// §3, a short current interval).
fn average_with(open: Option<f64>, closed: &[(f64, f64)], df: f64, cfg: &Averaging) -> Option<f64> {
    let n = cfg.n.clamp(1, MAX_N);
    if closed.is_empty() {
        return None;
    }
    let k = closed.len().min(n);
    // Number of intervals in the "with I_0" window: k (RFC) or k + 1 (NS-2), at most n.
    let with_len = match cfg.window {
        AveragingWindow::Rfc5348 => k,
        AveragingWindow::Ns2 => (k + 1).min(n),
    };
    // §5.5: I_tot0 = I_0*w_0 + sum_{i=1..} I_i*w_i*DF_i*DF; W_tot0 likewise.
    let mut w0 = Window::new();
    w0.push(open.unwrap_or(0.0), 1.0, 1.0);
    for &(len, df_i) in closed.iter().take(with_len.saturating_sub(1)) {
        w0.push(len, df_i, df);
    }
    // §5.5: I_tot1 = sum_{i=1..k} I_i*w_(i-1)*DF_i.
    let mut w1 = Window::new();
    for &(len, df_i) in closed.iter().take(k) {
        w1.push(len, df_i, 1.0);
    }
    // §5.4: "I_mean = max(I_tot0, I_tot1)/W_tot" — I_0 is used only if it raises the mean.
    let m1 = w1.mean(n, cfg.transform, k).unwrap_or(0.0);
    let m = match open {
        Some(_) => w0.mean(n, cfg.transform, k).unwrap_or(0.0).max(m1),
        None => m1,
    };
    if m.is_finite() {
        Some(m)
    } else {
        None
    }
}

/// A point of reference for interpolating the nominal time of a lost packet (§5.2): a received
/// packet's sequence number and the time to interpolate with (arrival time or sender timestamp,
/// per profile).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    /// Sequence number.
    pub seq: u64,
    /// Time attached to it.
    pub time: Time,
}

/// Consecutive lost (or ECN-marked) sequence numbers `lo..=hi` bracketed by two received packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostRange {
    /// First sequence number.
    pub lo: u64,
    /// Last sequence number (inclusive).
    pub hi: u64,
    /// S_before / T_before.
    pub before: Mark,
    /// S_after / T_after.
    pub after: Mark,
    /// The RTT to group with (the sender's R from the data packets, §5.2).
    pub rtt: Duration,
    /// The sender's feedback round carried in the data packets (NS-2 `round_id`).
    pub round: u32,
}

impl LostRange {
    /// §5.2: "T_loss = T_before + ((T_after - T_before) * (S_loss - S_before)/(S_after -
    /// S_before))". Sequence numbers are 64-bit and never wrap, so Dist() is a plain difference.
    pub fn time_of(&self, s: u64) -> Time {
        let (sb, sa) = (self.before.seq, self.after.seq);
        let (tb, ta) = (self.before.time.as_nanos(), self.after.time.as_nanos());
        if sa <= sb || ta <= tb {
            // Degenerate bracket (a marked packet, or times out of order): no interpolation,
            // which also keeps T monotone in s for the grouping search.
            return self.before.time;
        }
        let num = u128::from(ta - tb) * u128::from(s.saturating_sub(sb).min(sa - sb));
        let dt = num / u128::from(sa - sb);
        Time::from_nanos(tb.saturating_add(u64::try_from(dt).unwrap_or(u64::MAX)))
    }

    fn len(&self) -> u64 {
        self.hi.saturating_sub(self.lo).saturating_add(1)
    }
}

/// One loss event: its first lost packet and the losses grouped into it.
#[derive(Clone, Debug, PartialEq)]
pub struct LossEvent {
    /// S_A: the sequence number the interval starting at this event is counted from.
    pub start_seq: u64,
    /// T of the first loss (the grouping reference T_old for later losses).
    pub start_time: Time,
    /// Sender round of the first loss (NS-2 `lastloss_round_id`).
    pub round: u32,
    /// The RTT the data packets carried when the event began (§5.2's R; RFC 4828's "short"
    /// intervals are measured in it).
    pub rtt: Duration,
    /// Discount factor DF_i of the interval that starts at this event (§5.5).
    pub df: f64,
    /// The lost/marked packets of the event, ascending.
    pub lost: Vec<LostRange>,
}

/// Rules for grouping losses into events (§5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupingRule {
    /// NS-2 `PreciseLoss_`: a new event also needs a newer sender round than the last event.
    pub round_gate: bool,
}

/// A late packet's effect on the history (§5.1: "the late packet can fill the hole").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillOutcome {
    /// The sequence number was not a recorded loss.
    NotLost,
    /// The loss was removed; the events did not change.
    Removed,
    /// The loss started an event, so the events were regrouped; `events_removed` is how many
    /// fewer events there are now.
    Regrouped {
        /// Events that disappeared.
        events_removed: usize,
    },
}

/// Whether an interval is short under RFC 4828, and its length if so.
enum ShortOutcome {
    Long,
    Short(f64),
}

/// Lost or marked packets recorded in one event.
fn event_losses(ev: &LossEvent) -> u64 {
    ev.lost
        .iter()
        .map(LostRange::len)
        .fold(0u64, u64::saturating_add)
}

/// At most this many events are started from one lost range; beyond it the rest of the range
/// joins the last event. Only a pathological gap (thousands of RTTs of consecutive losses) can
/// reach it, and only the last n + 2 events are kept anyway.
const MAX_EVENTS_PER_RANGE: usize = 2 * MAX_N;

/// The loss-event record and loss intervals of one receiver.
#[derive(Clone, Debug, PartialEq)]
pub struct LossHistory {
    cfg: Averaging,
    rule: GroupingRule,
    /// Oldest first; at most n + 2 kept.
    events: VecDeque<LossEvent>,
    /// §6.3.1's synthetic first interval and its DF, while the first event ever is still kept.
    synthetic: Option<(f64, f64)>,
    /// General discount factor DF (§5.5).
    df: f64,
    events_total: u64,
    /// The emptied loss list of the last event dropped, reused by the next event so that
    /// recording losses does not allocate in steady state (always empty).
    spare: Vec<LostRange>,
    /// The newest packet's time (on the event clock) and R, for RFC 4828's short I_0.
    position: Option<(Time, Duration)>,
}

impl LossHistory {
    /// An empty history.
    pub fn new(cfg: Averaging, rule: GroupingRule) -> LossHistory {
        LossHistory {
            cfg,
            rule,
            events: VecDeque::new(),
            synthetic: None,
            df: 1.0,
            events_total: 0,
            spare: Vec::new(),
            position: None,
        }
    }

    /// The newest packet's time on the event clock and the RTT it carried: RFC 4828's open
    /// interval is short until more than the configured number of RTTs have passed since its
    /// loss event began.
    pub fn note_position(&mut self, time: Time, rtt: Duration) {
        self.position = Some((time, rtt));
    }

    /// Whether any loss event has been recorded.
    pub fn has_loss(&self) -> bool {
        !self.events.is_empty()
    }

    /// Loss events recorded since the start (or since the last [`LossHistory::reset`]).
    pub fn events_total(&self) -> u64 {
        self.events_total
    }

    /// The current events, oldest first.
    pub fn events(&self) -> impl Iterator<Item = &LossEvent> {
        self.events.iter()
    }

    /// The first event's start, if any (for §6.3.1's "first data packet lost" rule).
    pub fn first_event_start(&self) -> Option<u64> {
        self.events.front().map(|e| e.start_seq)
    }

    /// Forget everything (NS-2's `adjust_history` clears earlier loss marks).
    pub fn reset(&mut self) {
        self.events.clear();
        self.synthetic = None;
        self.df = 1.0;
        self.events_total = 0;
    }

    /// Set the synthetic first loss interval of §6.3.1 (it precedes the first event).
    pub fn seed_first_interval(&mut self, len: f64) {
        let len = if len.is_finite() && len >= 1.0 {
            len
        } else {
            1.0
        };
        self.synthetic = Some((len, 1.0));
    }

    /// Start an event directly (NS-2's first-gap event, whose counting start is not a lost
    /// packet).
    pub fn push_event(&mut self, start_seq: u64, start_time: Time, round: u32, rtt: Duration) {
        let lost = std::mem::take(&mut self.spare);
        self.push(
            LossEvent {
                start_seq,
                start_time,
                round,
                rtt,
                df: 1.0,
                lost,
            },
            true,
        );
    }

    fn push(&mut self, ev: LossEvent, fold: bool) {
        if fold {
            // §5.5: "DF_i = DF * DF_i" for the closed intervals, then shift; "DF_0 = 1; DF = 1".
            let df = self.df;
            let last = self.events.len().saturating_sub(1);
            for e in self.events.iter_mut().take(last) {
                e.df *= df;
            }
            if let Some(s) = self.synthetic.as_mut() {
                if !self.events.is_empty() {
                    s.1 *= df;
                }
            }
            self.df = 1.0;
        }
        self.events.push_back(ev);
        self.events_total = self.events_total.saturating_add(1);
        let keep = self.cfg.n.clamp(1, MAX_N) + 2;
        while self.events.len() > keep {
            if let Some(old) = self.events.pop_front() {
                let mut lost = old.lost;
                lost.clear();
                if lost.capacity() > self.spare.capacity() {
                    self.spare = lost;
                }
            }
            // The synthetic interval preceded the very first event, which is now gone.
            self.synthetic = None;
        }
    }

    /// Record lost packets; returns the number of new loss events.
    ///
    /// §5.2: "If T_old + R >= T_new, then S_new is part of the existing loss event. Otherwise,
    /// S_new is the first packet in a new loss event."
    pub fn add_lost(&mut self, range: LostRange) -> usize {
        self.add_lost_inner(range, true)
    }

    fn add_lost_inner(&mut self, range: LostRange, fold: bool) -> usize {
        if range.hi < range.lo {
            return 0;
        }
        let mut new_events = 0;
        let mut lo = range.lo;
        loop {
            let split = match self.events.back() {
                None => Some(lo),
                Some(last) => self.first_new_event(&range, lo, last),
            };
            match split {
                Some(s) if new_events < MAX_EVENTS_PER_RANGE => {
                    if s > lo {
                        self.attach(range, lo, s - 1);
                    }
                    let lost = std::mem::take(&mut self.spare);
                    self.push(
                        LossEvent {
                            start_seq: s,
                            start_time: range.time_of(s),
                            round: range.round,
                            rtt: range.rtt,
                            df: 1.0,
                            lost,
                        },
                        fold,
                    );
                    new_events += 1;
                    // Find the next split strictly after s.
                    match self.events.back().and_then(|last| {
                        if s == u64::MAX || s + 1 > range.hi {
                            None
                        } else {
                            self.first_new_event(&range, s + 1, last)
                        }
                    }) {
                        None => {
                            self.attach(range, s, range.hi);
                            return new_events;
                        }
                        Some(next) => {
                            self.attach(range, s, next - 1);
                            lo = next;
                        }
                    }
                }
                _ => {
                    self.attach(range, lo, range.hi);
                    return new_events;
                }
            }
        }
    }

    /// The first sequence number in `lo..=range.hi` that starts a new event after `last`.
    fn first_new_event(&self, range: &LostRange, lo: u64, last: &LossEvent) -> Option<u64> {
        if self.rule.round_gate && range.round <= last.round {
            return None;
        }
        let limit = last.start_time.saturating_add(range.rtt);
        // T(s) is non-decreasing in s, so binary search for the first T(s) > T_old + R.
        if range.time_of(range.hi) <= limit {
            return None;
        }
        let (mut a, mut b) = (lo, range.hi);
        while a < b {
            let mid = a + (b - a) / 2;
            if range.time_of(mid) > limit {
                b = mid;
            } else {
                a = mid + 1;
            }
        }
        Some(a)
    }

    fn attach(&mut self, range: LostRange, lo: u64, hi: u64) {
        if let Some(last) = self.events.back_mut() {
            last.lost.push(LostRange { lo, hi, ..range });
        }
    }

    /// Whether `seq` is recorded as lost.
    pub fn is_lost(&self, seq: u64) -> bool {
        self.events
            .iter()
            .any(|e| e.lost.iter().any(|r| r.lo <= seq && seq <= r.hi))
    }

    /// A late packet arrived: remove its loss and regroup the events if it started one.
    pub fn fill(&mut self, seq: u64) -> FillOutcome {
        // Late packets are mostly recent: search from the newest event and range (the ranges
        // are disjoint, so either end finds the same one), and edit the range in place, which
        // keeps a long event with thousands of holes cheap (one late packet was O(holes)).
        let holds = |r: &LostRange| r.lo <= seq && seq <= r.hi;
        let Some(idx) = self
            .events
            .iter()
            .rposition(|e| e.lost.iter().rev().any(holds))
        else {
            return FillOutcome::NotLost;
        };
        let ev = &mut self.events[idx];
        if let Some(ri) = ev.lost.iter().rposition(holds) {
            let r = ev.lost[ri];
            match (r.lo < seq, seq < r.hi) {
                (true, true) => {
                    ev.lost[ri].hi = seq - 1;
                    ev.lost.insert(ri + 1, LostRange { lo: seq + 1, ..r });
                }
                (true, false) => ev.lost[ri].hi = seq - 1,
                (false, true) => ev.lost[ri].lo = seq + 1,
                (false, false) => {
                    ev.lost.remove(ri);
                }
            }
        }
        if ev.start_seq != seq {
            return FillOutcome::Removed;
        }
        // The event's first loss is gone: regroup this event and every later one.
        let before = self.events.len();
        let total = self.events_total;
        let tail: Vec<LossEvent> = self.events.drain(idx..).collect();
        let was_first = idx == 0;
        for e in tail {
            for r in e.lost {
                self.add_lost_inner(r, false);
            }
        }
        // Regrouping re-counted the surviving events; count each event once.
        let after = self.events.len();
        self.events_total = total
            .saturating_sub(before as u64)
            .saturating_add(after as u64);
        if was_first && self.events.is_empty() {
            self.synthetic = None;
        }
        FillOutcome::Regrouped {
            events_removed: before.saturating_sub(after),
        }
    }

    /// I_0 for highest received sequence number `s_c` (§5.3), or `None` before any loss.
    pub fn open_interval(&self, s_c: u64) -> Option<f64> {
        let start = self.events.back()?.start_seq;
        let base = s_c.saturating_sub(start) as f64;
        Some(match self.cfg.counting {
            IntervalCounting::Rfc5348 => base + 1.0,
            IntervalCounting::Ns2 => base,
        })
    }

    /// Closed intervals I_1, I_2, … newest first, each with its DF_i.
    pub fn closed_intervals(&self) -> Vec<(f64, f64)> {
        self.closed_iter().collect()
    }

    fn closed_iter(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let between = (1..self.events.len())
            .rev()
            .map(move |j| self.closed_between(&self.events[j - 1], &self.events[j]));
        let synthetic = if self.events.is_empty() {
            None
        } else {
            self.synthetic
        };
        between.chain(synthetic)
    }

    /// The closed interval from event `a` to the next event `b`, with `a`'s DF_i.
    fn closed_between(&self, a: &LossEvent, b: &LossEvent) -> (f64, f64) {
        let len = b.start_seq.saturating_sub(a.start_seq) as f64;
        let dur = b.start_time.saturating_since(a.start_time);
        (self.short_length(len, a, dur, b.rtt), a.df)
    }

    /// How many items [`LossHistory::closed_iter`] yields.
    fn closed_len(&self) -> usize {
        let len = match self.events.len() {
            0 => 0,
            e => e - 1 + usize::from(self.synthetic.is_some()),
        };
        debug_assert_eq!(len, self.closed_iter().count());
        len
    }

    /// The plain (untransformed) §5.4 windows summed straight from the events, as
    /// [`average_with`] and [`Window::weighted`] sum them: `(with I_0, without)`; `open` is
    /// (I_0, DF), or `None` to skip the first window. Copying the intervals into buffers cost
    /// two ~1 KB copies per report.
    fn plain_sums(&self, open: Option<(f64, f64)>) -> (Sums, Sums) {
        let n = self.cfg.n.clamp(1, MAX_N);
        let k = self.closed_len().min(n);
        let with_len = match self.cfg.window {
            AveragingWindow::Rfc5348 => k,
            AveragingWindow::Ns2 => (k + 1).min(n),
        };
        let (mut w0, mut w1) = (Sums::default(), Sums::default());
        if let Some((i0, _)) = open {
            w0.add(0, n, i0, 1.0, 1.0);
        }
        // `closed_iter` by hand: its adaptor chain cost as much as the sums.
        let mut older = self.events.iter().rev();
        let mut newer = older.next();
        for i in 0..k {
            let (len, df_i) = match (newer, older.next()) {
                (Some(b), Some(a)) => {
                    newer = Some(a);
                    self.closed_between(a, b)
                }
                _ => match self.synthetic {
                    Some(c) => c,
                    None => break,
                },
            };
            if let Some((_, df)) = open {
                if i + 1 < with_len {
                    w0.add(i + 1, n, len, df_i, df);
                }
            }
            w1.add(i, n, len, df_i, 1.0);
        }
        (w0, w1)
    }

    /// The closed intervals in a stack buffer (no allocation on the per-packet path).
    fn closed_buf(&self) -> ([(f64, f64); MAX_N + 3], usize) {
        let mut buf = [(0.0, 0.0); MAX_N + 3];
        let mut k = 0;
        for (slot, c) in buf.iter_mut().zip(self.closed_iter()) {
            *slot = c;
            k += 1;
        }
        (buf, k)
    }

    /// §5.5: recompute DF from I_0 for highest sequence number `s_c`:
    /// "if (I_0 > 2 * I_mean) { DF = 2 * I_mean/I_0; if (DF < THRESHOLD) DF = THRESHOLD; }
    /// else DF = 1".
    pub fn update_discount(&mut self, s_c: u64) {
        let Discounting::On { threshold, .. } = self.cfg.discount else {
            self.df = 1.0;
            return;
        };
        let Some(i0) = self.open_interval(s_c) else {
            return;
        };
        // The I_mean that §5.5 compares I_0 with is the configured average (E3/E4 included).
        let i_mean = if self.cfg.transform == IntervalTransform::Plain {
            let m = self.plain_sums(None).1.mean();
            debug_assert_eq!(m.map(f64::to_bits), self.closed_mean().map(f64::to_bits));
            m
        } else {
            self.closed_mean()
        };
        let Some(i_mean) = i_mean else {
            return;
        };
        if i0 <= 0.0 {
            return;
        }
        self.df = if i0 > 2.0 * i_mean {
            (2.0 * i_mean / i0).max(threshold)
        } else {
            1.0
        };
    }

    /// The configured mean of the closed intervals alone (DF not applied), from buffers.
    fn closed_mean(&self) -> Option<f64> {
        let (buf, k) = self.closed_buf();
        let closed = &buf[..k];
        let n = self.cfg.n.clamp(1, MAX_N);
        let mut w = Window::new();
        for &(len, df_i) in closed.iter().take(n) {
            w.push(len, df_i, 1.0);
        }
        w.mean(n, self.cfg.transform, closed.len().min(n))
    }

    /// The general discount factor DF.
    pub fn discount_factor(&self) -> f64 {
        self.df
    }

    /// The average loss interval for highest sequence number `s_c`, or `None` before any loss.
    pub fn mean_interval(&self, s_c: u64) -> Option<f64> {
        let i0 = self.open_interval(s_c)?;
        let df = match self.cfg.discount {
            Discounting::Off => 1.0,
            Discounting::On { .. } => self.df,
        };
        let open = self.open_for_average(i0);
        if self.cfg.transform != IntervalTransform::Plain {
            let (buf, k) = self.closed_buf();
            return average_with(open, &buf[..k], df, &self.cfg);
        }
        // No transform: sum the windows without copying the intervals.
        if self.closed_len() == 0 {
            return None;
        }
        let (w0, w1) = self.plain_sums(open.map(|i0| (i0, df)));
        let m1 = w1.mean().unwrap_or(0.0);
        let m = match open {
            Some(_) => w0.mean().unwrap_or(0.0).max(m1),
            None => m1,
        };
        let mean = m.is_finite().then_some(m);
        debug_assert_eq!(mean.map(f64::to_bits), {
            let (buf, k) = self.closed_buf();
            average_with(open, &buf[..k], df, &self.cfg).map(f64::to_bits)
        });
        mean
    }

    /// The loss event rate p = 1/I_mean (§5.4), 0 before any loss, at most 1.
    pub fn loss_event_rate(&self, s_c: u64) -> f64 {
        match self.mean_interval(s_c) {
            Some(m) if m > 0.0 => (1.0 / m).min(1.0),
            Some(_) => 1.0,
            None => 0.0,
        }
    }

    /// RFC 4828 §3: the length of an interval of `len` packets that began with loss event `ev`
    /// and lasted `dur`, with R = `rtt`: `len` unless it is short, then `len` over its counted
    /// losses (`None`: the interval is short and I_0, so it is left out of the average).
    fn short_interval(
        &self,
        len: f64,
        ev: &LossEvent,
        dur: Duration,
        rtt: Duration,
    ) -> ShortOutcome {
        let ShortIntervals::Rfc4828 { rtts, counting, .. } = self.cfg.short_intervals else {
            return ShortOutcome::Long;
        };
        let r = rtt.as_secs_f64();
        if r <= 0.0 {
            return ShortOutcome::Long;
        }
        let d = dur.as_secs_f64();
        let k = (event_losses(ev).max(1)) as f64;
        match counting {
            ShortLossCount::All if d <= rtts * r => ShortOutcome::Short(len / k),
            ShortLossCount::Gradual => {
                let m = (d / r).ceil().max(1.0);
                if m > rtts {
                    return ShortOutcome::Long;
                }
                // A hair above the product so that 6·(2/3) counts 4, not 3.999….
                let counted = (k * (rtts + 1.0 - m) / rtts + 1e-9).floor().max(1.0);
                ShortOutcome::Short(len / counted)
            }
            ShortLossCount::All => ShortOutcome::Long,
        }
    }

    fn short_length(&self, len: f64, ev: &LossEvent, dur: Duration, rtt: Duration) -> f64 {
        match self.short_interval(len, ev, dur, rtt) {
            ShortOutcome::Long => len,
            ShortOutcome::Short(v) => v,
        }
    }

    /// I_0 as it enters the average: `None` when RFC 4828 leaves a short I_0 out.
    fn open_for_average(&self, i0: f64) -> Option<f64> {
        let (Some(last), Some((now, rtt))) = (self.events.back(), self.position) else {
            return Some(i0);
        };
        let dur = now.saturating_since(last.start_time);
        match self.short_interval(i0, last, dur, rtt) {
            ShortOutcome::Long => Some(i0),
            ShortOutcome::Short(v) => match self.cfg.short_intervals {
                ShortIntervals::Rfc4828 {
                    exclude_open: true, ..
                } => None,
                _ => Some(v),
            },
        }
    }

    /// MulTFRC's j: the packets lost or marked per loss event, averaged over the most recent n
    /// events (newest first) with §5.4's weights; 1 before any loss (`docs/variants.md`).
    pub fn lost_per_event(&self) -> f64 {
        let n = self.cfg.n.clamp(1, MAX_N);
        let (mut tot, mut wt) = (0.0, 0.0);
        for (i, ev) in self.events.iter().rev().take(n).enumerate() {
            let w = weight(i, n);
            tot += w * event_losses(ev).max(1) as f64;
            wt += w;
        }
        if wt > 0.0 {
            tot / wt
        } else {
            1.0
        }
    }

    /// Number of lost sequence numbers currently recorded in the kept events.
    pub fn recorded_losses(&self) -> u64 {
        self.events
            .iter()
            .flat_map(|e| e.lost.iter())
            .map(LostRange::len)
            .fold(0u64, u64::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(window: AveragingWindow) -> Averaging {
        Averaging {
            discount: Discounting::Off,
            window,
            ..Averaging::RFC5348
        }
    }

    /// RFC 5348 §5.4: for n = 8 the weights are 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2.
    #[test]
    fn rfc5348_s5_4_weights() {
        let w: Vec<f64> = (0..8).map(|i| weight(i, 8)).collect();
        let want = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
        for (a, b) in w.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{w:?}");
        }
    }

    /// RFC 5348 §5.4: I_mean = max(I_tot0, I_tot1)/W_tot over n = 8 intervals, I_0 counted only
    /// if it raises the mean.
    #[test]
    fn rfc5348_s5_4_average_with_and_without_i0() {
        let cfg = plain(AveragingWindow::Rfc5348);
        let closed: Vec<(f64, f64)> = (1..=9).map(|i| (i as f64 * 10.0, 1.0)).collect();
        let w = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
        let wt: f64 = w.iter().sum();
        // Without I_0: I_1..I_8 = 10..80.
        let tot1: f64 = (0..8).map(|i| closed[i].0 * w[i]).sum();
        // A small I_0 does not count.
        let m = average_interval(5.0, &closed, 1.0, &cfg).unwrap();
        assert!((m - tot1 / wt).abs() < 1e-9, "{m}");
        // A large I_0 does: I_0 = 500, I_1..I_7.
        let tot0: f64 = 500.0 + (1..8).map(|i| closed[i - 1].0 * w[i]).sum::<f64>();
        let m = average_interval(500.0, &closed, 1.0, &cfg).unwrap();
        assert!((m - tot0 / wt).abs() < 1e-9, "{m}");
        // No closed interval: no average.
        assert_eq!(average_interval(5.0, &[], 1.0, &cfg), None);
    }

    /// `docs/tfrc-core.md` N19: with one closed interval the RFC gives max(I_0, I_1) and NS-2 gives
    /// max((I_0 + I_1)/2, I_1).
    #[test]
    fn ns2_window_has_one_more_interval() {
        let closed = [(100.0, 1.0)];
        let rfc = average_interval(300.0, &closed, 1.0, &plain(AveragingWindow::Rfc5348)).unwrap();
        assert_eq!(rfc, 300.0);
        let ns2 = average_interval(300.0, &closed, 1.0, &plain(AveragingWindow::Ns2)).unwrap();
        assert_eq!(ns2, 200.0);
        // With n or more closed intervals both agree.
        let many: Vec<(f64, f64)> = (0..10).map(|i| (50.0 + i as f64, 1.0)).collect();
        let a = average_interval(400.0, &many, 1.0, &plain(AveragingWindow::Rfc5348)).unwrap();
        let b = average_interval(400.0, &many, 1.0, &plain(AveragingWindow::Ns2)).unwrap();
        assert_eq!(a, b);
    }

    /// Seed 000 eq. 5: for n = 8 the RFC weights; n = 10: 1 ×5, 5/6, 4/6, 3/6, 2/6, 1/6;
    /// n = 9 (odd, where it departs from the RFC formula): 1 ×4, 10/11, 8/11, 6/11, 4/11, 2/11.
    #[test]
    fn seed000_eq5_general_weights() {
        let want8 = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
        let want10 = [
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            5.0 / 6.0,
            4.0 / 6.0,
            0.5,
            2.0 / 6.0,
            1.0 / 6.0,
        ];
        let want9 = [
            1.0,
            1.0,
            1.0,
            1.0,
            10.0 / 11.0,
            8.0 / 11.0,
            6.0 / 11.0,
            4.0 / 11.0,
            2.0 / 11.0,
        ];
        for (n, want) in [(8, &want8[..]), (10, &want10[..]), (9, &want9[..])] {
            for (i, w) in want.iter().enumerate() {
                assert!(
                    (general_weight(i + 1, n) - w).abs() < 1e-12,
                    "n {n} i {}",
                    i + 1
                );
            }
        }
    }

    fn transform(t: IntervalTransform) -> Averaging {
        Averaging {
            transform: t,
            ..plain(AveragingWindow::Rfc5348)
        }
    }

    /// The closed intervals of the E3/E4 tests, newest first (I_1..I_9).
    const E3: [(f64, f64); 9] = [
        (40.0, 1.0),
        (10.0, 1.0),
        (70.0, 1.0),
        (30.0, 1.0),
        (90.0, 1.0),
        (20.0, 1.0),
        (60.0, 1.0),
        (50.0, 1.0),
        (80.0, 1.0),
    ];

    /// E3/E4 by hand on the window I_1..I_8 = 40, 10, 70, 30, 90, 20, 60, 50 (I_0 = 5 is too
    /// small to count). RFC weights 1,1,1,1,.8,.6,.4,.2 (sum 6): plain = 268/6 = 44.6667.
    /// Mean 46.25, sample sd 26.69270, t·sd/√8 = 18.49709: lo = 27.75291, hi = 64.74709.
    /// - replace (eq. 7): 10 → lo (weight 1), 90 → hi (weight .8):
    ///   (268 − 10 + 27.75291 − 72 + 51.79767)/6 = 44.25843.
    /// - include (eq. 8): + lo, hi with eq. 5 weights of 10 (…, 2/6, 1/6; sum 7.5):
    ///   (321.66667 + 27.75291/3 + 64.74709/6)/7.5 = 45.56118.
    /// - mean replace (eq. 9): 10 and 90 → 46.25: (268 − 10 + 46.25 − 72 + 37)/6 = 44.875.
    /// - mean include (eq. 10): + 46.25 with eq. 5 weights of 9 (sum 74/11):
    ///   (150 + (90·10 + 20·8 + 60·6 + 50·4 + 46.25·2)/11)/(74/11) = 45.43919.
    #[test]
    fn seed000_e3_e4_transforms_by_hand() {
        for (t, want) in [
            (IntervalTransform::Plain, 44.666_667),
            (IntervalTransform::ConfidenceReplace { t: 1.96 }, 44.258_430),
            (IntervalTransform::ConfidenceInclude { t: 1.96 }, 45.561_176),
            (IntervalTransform::MeanReplace, 44.875),
            (IntervalTransform::MeanInclude, 45.439_189),
        ] {
            let m = average_interval(5.0, &E3, 1.0, &transform(t)).unwrap();
            assert!((m - want).abs() < 1e-5, "{t:?}: {m} vs {want}");
        }
    }

    /// E3 applies to the "with I_0" window too (`docs/variants.md`: "apply the transform to each of
    /// the two windows"). I_0 = 200: window 200, 40, 10, 70, 30, 90, 20, 60 has mean 65, sd
    /// 60.71008, lo = 22.93006, hi = 107.06994; 10 → lo, 200 → hi (both weight 1): (418 − 10 +
    /// 22.93006 − 200 + 107.06994)/6 = 56.33333, above window 1's 44.25843.
    #[test]
    fn seed000_e3_applies_to_both_windows() {
        let plain_m =
            average_interval(200.0, &E3, 1.0, &transform(IntervalTransform::Plain)).unwrap();
        assert!((plain_m - 418.0 / 6.0).abs() < 1e-9);
        let m = average_interval(
            200.0,
            &E3,
            1.0,
            &transform(IntervalTransform::ConfidenceReplace { t: 1.96 }),
        )
        .unwrap();
        assert!((m - 56.333_333).abs() < 1e-5, "{m}");
    }

    /// `docs/variants.md` E3: "With fewer than 3 closed intervals, fall back to the plain RFC
    /// mean"; with all intervals equal every transform is the identity; lo is clamped to 1 packet.
    #[test]
    fn seed000_transform_fallback_and_identity() {
        let two = [(10.0, 1.0), (40.0, 1.0)];
        let equal = [(25.0, 1.0); 9];
        for t in [
            IntervalTransform::ConfidenceReplace { t: 1.96 },
            IntervalTransform::ConfidenceInclude { t: 1.96 },
            IntervalTransform::MeanReplace,
            IntervalTransform::MeanInclude,
        ] {
            let p = average_interval(30.0, &two, 1.0, &transform(IntervalTransform::Plain));
            assert_eq!(average_interval(30.0, &two, 1.0, &transform(t)), p, "{t:?}");
            let m = average_interval(25.0, &equal, 1.0, &transform(t)).unwrap();
            assert!((m - 25.0).abs() < 1e-12, "{t:?}: {m}");
        }
        // Intervals 1, 1, 1, 30: mean 8.25, sd 14.5, t·sd/√4 = 14.21 → lo = −5.96 clamped to 1,
        // hi = 22.46. Window 1 (positions 0–3 of n = 8 all weigh 1): the first 1 → 1, 30 →
        // 22.46: (1 + 1 + 1 + 22.46)/4 = 6.365; window 0 (I_0 = 1, 1, 1, 1) stays 1.
        let spiky = [(1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (30.0, 1.0)];
        let m = average_interval(
            1.0,
            &spiky,
            1.0,
            &transform(IntervalTransform::ConfidenceReplace { t: 1.96 }),
        )
        .unwrap();
        assert!((m - (3.0 + 8.25 + 14.21) / 4.0).abs() < 1e-9, "{m}");
    }

    fn range(lo: u64, hi: u64, t0: u64, t1: u64, s0: u64, s1: u64, rtt_ms: u64) -> LostRange {
        LostRange {
            lo,
            hi,
            before: Mark {
                seq: s0,
                time: Time::from_nanos(t0),
            },
            after: Mark {
                seq: s1,
                time: Time::from_nanos(t1),
            },
            rtt: Duration::from_millis(rtt_ms),
            round: 0,
        }
    }

    /// RFC 5348 §5.2: interpolated nominal arrival times.
    #[test]
    fn rfc5348_s5_2_interpolation() {
        let r = range(11, 13, 1_000, 5_000, 10, 14, 100);
        assert_eq!(r.time_of(11).as_nanos(), 2_000);
        assert_eq!(r.time_of(12).as_nanos(), 3_000);
        assert_eq!(r.time_of(13).as_nanos(), 4_000);
    }

    /// RFC 5348 §5.2: losses within R of the event's first loss join it; later ones start a new
    /// event. §5.3: closed interval = S_B - S_A, I_0 = S_C - S_A + 1.
    #[test]
    fn rfc5348_s5_2_grouping_and_s5_3_intervals() {
        let ms = 1_000_000;
        let mut h = LossHistory::new(
            plain(AveragingWindow::Rfc5348),
            GroupingRule { round_gate: false },
        );
        // Packets 1 ms apart; R = 10 ms. Loss at 100 (t = 100 ms), 105 (same event), 130 (new).
        assert_eq!(
            h.add_lost(range(100, 100, 99 * ms, 101 * ms, 99, 101, 10)),
            1
        );
        assert_eq!(
            h.add_lost(range(105, 105, 104 * ms, 106 * ms, 104, 106, 10)),
            0
        );
        assert_eq!(
            h.add_lost(range(130, 130, 129 * ms, 131 * ms, 129, 131, 10)),
            1
        );
        assert_eq!(h.events_total(), 2);
        h.seed_first_interval(50.0);
        assert_eq!(h.closed_intervals(), vec![(30.0, 1.0), (50.0, 1.0)]);
        assert_eq!(h.open_interval(140), Some(11.0));
        // A burst spanning more than R splits: 200..=260 lost at 1 ms spacing.
        let n = h.add_lost(range(200, 260, 199 * ms, 261 * ms, 199, 261, 10));
        assert_eq!(n, 6, "starts at 200, 211, 222, 233, 244, 255");
        let starts: Vec<u64> = h.events().map(|e| e.start_seq).collect();
        assert_eq!(&starts[starts.len() - 3..], &[233, 244, 255]);
    }

    /// RFC 5348 §5.1: a late packet fills the hole; if it started an event the events regroup.
    #[test]
    fn rfc5348_s5_1_late_packet_removes_loss_event() {
        let ms = 1_000_000;
        let mut h = LossHistory::new(
            plain(AveragingWindow::Rfc5348),
            GroupingRule { round_gate: false },
        );
        h.add_lost(range(10, 10, 9 * ms, 11 * ms, 9, 11, 5));
        h.seed_first_interval(100.0);
        h.add_lost(range(50, 50, 49 * ms, 51 * ms, 49, 51, 5));
        h.add_lost(range(52, 52, 51 * ms, 53 * ms, 51, 53, 5));
        assert_eq!(h.events_total(), 2);
        assert_eq!(h.fill(52), FillOutcome::Removed);
        assert_eq!(h.fill(52), FillOutcome::NotLost);
        h.add_lost(range(52, 52, 51 * ms, 53 * ms, 51, 53, 5));
        // Filling 50 moves the event start to 52.
        assert_eq!(h.fill(50), FillOutcome::Regrouped { events_removed: 0 });
        assert_eq!(h.closed_intervals()[0], (42.0, 1.0));
        // Filling 52 removes that event entirely.
        assert_eq!(h.fill(52), FillOutcome::Regrouped { events_removed: 1 });
        assert_eq!(h.events_total(), 1);
        // Removing the only event clears the synthetic interval too: no loss at all.
        assert_eq!(h.fill(10), FillOutcome::Regrouped { events_removed: 1 });
        assert!(!h.has_loss());
        assert_eq!(h.loss_event_rate(100), 0.0);
    }

    /// RFC 5348 §5.5: DF = max(2*I_mean/I_0, THRESHOLD) when I_0 > 2*I_mean, folded into DF_i at
    /// the next loss event.
    #[test]
    fn rfc5348_s5_5_history_discounting() {
        let ms = 1_000_000;
        let cfg = Averaging {
            window: AveragingWindow::Rfc5348,
            ..Averaging::RFC5348
        };
        let mut h = LossHistory::new(cfg, GroupingRule { round_gate: false });
        for k in 0..9u64 {
            let s = 100 + 10 * k;
            h.add_lost(range(s, s, s * ms, (s + 2) * ms, s - 1, s + 1, 1));
        }
        // All closed intervals are 10; I_0 = 1000 - 180 + 1 = 821 > 20.
        h.update_discount(1000);
        assert_eq!(h.discount_factor(), 0.25, "floored at THRESHOLD");
        h.update_discount(200);
        // I_0 = 21 > 20: DF = 20/21.
        assert!((h.discount_factor() - 20.0 / 21.0).abs() < 1e-12);
        // With DF < 1 the older intervals weigh less in I_tot0, so I_mean rises above the plain
        // "with I_0" mean.
        let plain_m = average_interval(21.0, &h.closed_intervals(), 1.0, &cfg).unwrap();
        let disc_m = h.mean_interval(200).unwrap();
        assert!(disc_m > plain_m, "{disc_m} vs {plain_m}");
        h.update_discount(1000);
        h.add_lost(range(1000, 1000, 1000 * ms, 1002 * ms, 999, 1001, 1));
        let closed = h.closed_intervals();
        assert_eq!(
            closed[0],
            (820.0, 1.0),
            "the just-closed interval keeps DF 1"
        );
        assert!(
            closed[1..].iter().all(|&(_, d)| (d - 0.25).abs() < 1e-12),
            "{closed:?}"
        );
        assert_eq!(h.discount_factor(), 1.0);
    }

    /// NS-2 `PreciseLoss_`: a new event needs a newer sender round.
    #[test]
    fn ns2_round_gate() {
        let ms = 1_000_000;
        let mut h = LossHistory::new(Averaging::NS2, GroupingRule { round_gate: true });
        let mut r = range(10, 10, 10 * ms, 12 * ms, 9, 11, 1);
        r.round = 3;
        assert_eq!(h.add_lost(r), 1);
        let mut r2 = range(100, 100, 100 * ms, 102 * ms, 99, 101, 1);
        r2.round = 3;
        assert_eq!(h.add_lost(r2), 0, "same round: same event");
        r2.round = 4;
        r2.lo = 101;
        r2.hi = 101;
        assert_eq!(h.add_lost(r2), 1);
        assert_eq!(h.open_interval(150), Some(49.0), "NS-2 I_0 = S_C - S_A");
    }

    #[test]
    fn pathological_gap_is_bounded() {
        let mut h = LossHistory::new(
            plain(AveragingWindow::Rfc5348),
            GroupingRule { round_gate: false },
        );
        let r = LostRange {
            lo: 1,
            hi: u64::MAX - 1,
            before: Mark {
                seq: 0,
                time: Time::ZERO,
            },
            after: Mark {
                seq: u64::MAX,
                time: Time::MAX,
            },
            rtt: Duration::ZERO,
            round: 0,
        };
        let n = h.add_lost(r);
        assert_eq!(n, MAX_EVENTS_PER_RANGE);
        assert!(h.events().count() <= 10);
        let p = h.loss_event_rate(u64::MAX);
        assert!(p.is_finite() && (0.0..=1.0).contains(&p));
    }
}
