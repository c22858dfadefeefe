//! NS-2's `Queue/RED` with its defaults and auto-configuration (`docs/simulator.md`,
//! "Queues").
//!
//! The three places later variants change are separate methods dispatching on closed enums:
//! the average ([`RedAverage`], seed 001's Shewhart–EWMA is Q1), the thresholds
//! ([`RedThresholds`], Q2) and max_p ([`RedMaxP`], NS-2's Adaptive RED and Q3).

use std::collections::VecDeque;

use rand::{Rng, RngCore};

use super::Dropped;
use super::Queued;
use crate::packet::Packet;
use crate::stats::DropCause;
use crate::Time;

/// How the average queue is computed (update point 1).
#[derive(Clone, Debug, PartialEq)]
pub enum RedAverage {
    /// NS-2's EWMA with weight q_w, decayed over idle time as if `ptc · idle` packets of an
    /// empty queue had arrived (REDQueue::estimator).
    Ewma,
    /// Seed 001 Q1 (eq. 4): `avg_i = (1 − w_q)·avg_{i−1} + w_q·q_i + (q_i − q_{i−1})` on every
    /// arrival to a busy queue, with `q_{i−1}` the queue the previous arrival saw; the first
    /// arrival after an idle period only decays, `avg = (1 − w_q)^m · avg` with
    /// `m = int(ptc · idle)` (Fig. 1, as in Floyd & Jacobson 1993). Clamped to `[0, limit]`.
    ShewhartEwma,
}

/// How the thresholds evolve (update point 2).
#[derive(Clone, Debug, PartialEq)]
pub enum RedThresholds {
    /// Fixed at the configured (or auto-derived) values.
    Fixed,
    /// Seed 001 Q2 (eq. 5): on an arrival where the average rose by more than the gap,
    /// `(max_th − min_th) < (avg_i − avg_{i−1})`, set
    /// `min_th = min_th + (q_i − q_{i−1}) + alpha_th` and `max_th = 3·min_th`, then clamp
    /// `1 packet ≤ min_th ≤ limit` and `max_th ≤ limit`.
    AutoTuned {
        /// `alpha_th`, in packets (of `mean_pktsize` bytes in byte mode); `docs/variants.md`
        /// (Q2) reads the paper's overloaded α as its own parameter, default 1 packet.
        alpha_th: f64,
    },
}

/// How max_p evolves (update point 3).
#[derive(Clone, Debug, PartialEq)]
pub enum RedMaxP {
    /// Fixed at 1 / `linterm`.
    Fixed,
    /// The Adaptive RED baseline exactly as NS-2.35 runs it (`adaptive_ 1`, Floyd, Gummadi &
    /// Shenker 2001): on an arrival more than `interval` after max_p last *changed*, AIMD on
    /// max_p towards the middle 40–60 % of the thresholds, bounded by `top > max_p` and
    /// `max_p > bottom`; the gentle segment stays anchored at the initial max_p.
    AdaptiveRed(AdaptiveRed),
    /// Seed 001 Q3 (Fig. 1): the same AIMD, evaluated once per `interval` whether or not max_p
    /// changes, guarded by `max_p ≤ top` / `max_p ≥ bottom` as printed, with the target band
    /// taken from the current (possibly Q2-moved) thresholds and the whole p(avg) line,
    /// gentle segment included, following the current max_p.
    Q3(AdaptiveQ3),
}

/// Adaptive RED parameters (NS-2 defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveRed {
    /// `alpha_` 0.01: additive increase step (capped at max_p/4).
    pub alpha: f64,
    /// `beta_` 0.9: multiplicative decrease factor.
    pub beta: f64,
    /// `interval_` 0.5 s between updates.
    pub interval: f64,
    /// `top_` 0.5: max_p's ceiling.
    pub top: f64,
    /// `bottom_` 0 = auto: min(0.01, 80000 / bandwidth).
    pub bottom: f64,
}

impl Default for AdaptiveRed {
    fn default() -> Self {
        AdaptiveRed {
            alpha: 0.01,
            beta: 0.9,
            interval: 0.5,
            top: 0.5,
            bottom: 0.0,
        }
    }
}

/// Seed 001 Q3 parameters (Fig. 1 after Floyd et al. 2001; `docs/variants.md`, Q3).
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveQ3 {
    /// Cap of the additive step: `alpha = min(alpha, max_p/4)`, default 0.01.
    pub alpha: f64,
    /// Multiplicative decrease factor, default 0.9.
    pub beta: f64,
    /// Seconds between evaluations, default 0.5.
    pub interval: f64,
    /// Increase only while `max_p ≤ top`, default 0.5.
    pub top: f64,
    /// Decrease only while `max_p ≥ bottom`, default 0.01.
    pub bottom: f64,
}

impl Default for AdaptiveQ3 {
    fn default() -> Self {
        AdaptiveQ3 {
            alpha: 0.01,
            beta: 0.9,
            interval: 0.5,
            top: 0.5,
            bottom: 0.01,
        }
    }
}

/// RED parameters with NS-2.35's defaults. Thresholds are in packets of `mean_pktsize` bytes;
/// 0 means "derive from the link" as NS-2 does.
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// `limit_`: 50 (in `mean_pktsize` units in byte mode).
    pub limit: u32,
    /// `bytes_`: drop probability scaled by packet size, count in bytes.
    pub bytes: bool,
    /// `queue_in_bytes_`: queue, average and thresholds measured in bytes.
    pub queue_in_bytes: bool,
    /// `thresh_` (min threshold, packets); 0 = max(5, targetdelay · ptc / 2).
    pub thresh: f64,
    /// `maxthresh_` (packets); 0 = 3 · thresh.
    pub maxthresh: f64,
    /// `mean_pktsize_`: 500 bytes.
    pub mean_pktsize: u32,
    /// `q_weight_`: −1 = from bandwidth and delay, 0 = 1 − exp(−1/ptc), −2 = 1 − exp(−10/ptc).
    pub q_weight: f64,
    /// `wait_`: uniform inter-drop spacing waits (count · p in [1, 2)).
    pub wait: bool,
    /// `linterm_`: 10, max_p = 1/linterm.
    pub linterm: f64,
    /// `mark_p_`: 0.1; with `use_mark_p`, mark only while p ≤ mark_p.
    pub mark_p: f64,
    /// `use_mark_p_`: true.
    pub use_mark_p: bool,
    /// `setbit_`: mark ECN-capable packets instead of dropping them.
    pub setbit: bool,
    /// `gentle_`: p rises from max_p to 1 between maxthresh and 2 · maxthresh.
    pub gentle: bool,
    /// `targetdelay_`: 5 ms, for the automatic thresholds.
    pub targetdelay: f64,
    /// Average estimator.
    pub average: RedAverage,
    /// Threshold policy.
    pub thresholds: RedThresholds,
    /// max_p policy.
    pub max_p: RedMaxP,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            limit: 50,
            bytes: true,
            queue_in_bytes: true,
            thresh: 0.0,
            maxthresh: 0.0,
            mean_pktsize: 500,
            q_weight: -1.0,
            wait: true,
            linterm: 10.0,
            mark_p: 0.1,
            use_mark_p: true,
            setbit: false,
            gentle: true,
            targetdelay: 0.005,
            average: RedAverage::Ewma,
            thresholds: RedThresholds::Fixed,
            max_p: RedMaxP::Fixed,
        }
    }
}

impl RedConfig {
    /// The Adaptive RED baseline (Floyd, Gummadi & Shenker 2001) as NS-2.35 runs it with its
    /// automatic parameters: `adaptive_ 1`, thresholds from the target delay
    /// (`thresh_ 0`, `maxthresh_ 0`), `q_weight_ 0` (w_q = 1 − exp(−1/C), the paper's §5
    /// choice and NS-2's Adaptive RED test suite's), `bottom_ 0` (auto), gentle.
    pub fn ared() -> Self {
        RedConfig {
            q_weight: 0.0,
            max_p: RedMaxP::AdaptiveRed(AdaptiveRed::default()),
            ..RedConfig::default()
        }
    }

    /// Seed 001's enhanced RED: Q1 + Q2 + Q3 on NS-2's RED defaults.
    pub fn ered() -> Self {
        RedConfig {
            average: RedAverage::ShewhartEwma,
            thresholds: RedThresholds::AutoTuned { alpha_th: 1.0 },
            max_p: RedMaxP::Q3(AdaptiveQ3::default()),
            ..RedConfig::default()
        }
    }
}

/// Counters specific to RED.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RedCounters {
    /// Probabilistic (unforced) drops.
    pub early_drops: u64,
    /// Drops because the average exceeded the hard ceiling (non-gentle maxthresh, or
    /// 2 · maxthresh when gentle and `use_mark_p` is off).
    pub forced_avg_drops: u64,
    /// Drops because the queue was at its hard limit.
    pub overflow_drops: u64,
    /// ECN marks instead of drops.
    pub marks: u64,
    /// Q2: arrivals that moved the thresholds.
    pub threshold_moves: u64,
    /// Adaptive RED or Q3: max_p increases.
    pub max_p_increases: u64,
    /// Adaptive RED or Q3: max_p decreases.
    pub max_p_decreases: u64,
}

/// A RED queue.
#[derive(Clone, Debug)]
pub struct Red<P = Packet> {
    cfg: RedConfig,
    /// Packets per second at the mean packet size (NS-2 `ptc`).
    ptc: f64,
    /// [`Red::idle_packets`]' margin: more than `ptc · (b − a)` can differ from NS-2's m
    /// before truncation.
    idle_err: f64,
    /// `1 − idle_err`.
    idle_err_hi: f64,
    q_w: f64,
    /// `1 − q_w`, the EWMA's decay per packet time.
    keep: f64,
    /// `powi(keep, s)` for the first [`DECAYS`] step counts: an idle period's decay is a
    /// lookup, not a multiplication loop (the same bits: the same function computed them).
    decays: [f64; DECAYS],
    /// Plain RED: NS-2's average, fixed thresholds and max_p ([`Red::enqueue`]'s short path).
    plain: bool,
    /// One packet in queue units (`mean_pktsize` bytes in byte mode, else 1).
    unit: f64,
    /// The hard limit in queue units: Q1 clamps the average and Q2 the thresholds to it.
    lim: f64,
    /// The hard limit as the queue length is counted (bytes in byte mode, else packets).
    qlim: u64,
    /// Adaptive RED and Q3: `interval` in nanoseconds.
    interval_ns: u64,
    /// Thresholds in queue units (bytes in byte mode).
    th_min: f64,
    th_max: f64,
    cur_max_p: f64,
    /// max_p at reset: NS-2's gentle segment stays anchored there under Adaptive RED.
    init_max_p: f64,
    bottom: f64,
    v_a: f64,
    v_b: f64,
    v_c: f64,
    v_d: f64,
    ave: f64,
    /// The queue the previous arrival saw (q_{i−1} of seed 001 eq. 4 and 5).
    q_prev: f64,
    count: u64,
    old: bool,
    idle: bool,
    /// When the idle period began.
    idle_since: Since,
    /// Adaptive RED: when max_p last changed (NS-2 `lastset`); Q3: the last evaluation.
    lastset: Time,
    q: VecDeque<P>,
    bytes: u64,
    /// Bytes since the last drop (apart from `count`: adjacent, the two increments were
    /// vectorised into more instructions than two additions).
    count_bytes: u64,
    counters: RedCounters,
}

/// Step counts whose decay [`Red`] keeps in a table (idle gaps of a few packet times are the
/// common ones).
const DECAYS: usize = 64;

/// The start of an idle period: the simulator's double clock, rounded only if an arrival
/// reads it (a transmission's end that finds nothing queued would round it in the event
/// loop), or a time given as such.
#[derive(Clone, Copy, Debug)]
enum Since {
    Secs(f64),
    At(Time),
}

impl Since {
    #[inline(always)]
    fn time(self) -> Time {
        match self {
            Since::Secs(s) => Time::from_secs_f64(s),
            Since::At(t) => t,
        }
    }
}

enum DropType {
    None,
    ForcedAverage,
    ForcedLimit,
    Unforced,
}

impl<P: Queued> Red<P> {
    /// A RED queue on a link of `bandwidth_bps` and one-way `delay_secs`, with NS-2's
    /// automatic parameters (REDQueue::initialize_params and reset). A weight that is not in
    /// (0, 1] and not one of NS-2's codes (0, −1, −2), or a negative or non-finite threshold,
    /// falls back to the automatic choice, so no configuration yields a NaN average.
    pub fn new(cfg: RedConfig, bandwidth_bps: f64, delay_secs: f64) -> Self {
        let mean = f64::from(cfg.mean_pktsize.max(1));
        let bw = if bandwidth_bps > 0.0 && bandwidth_bps.is_finite() {
            bandwidth_bps
        } else {
            1.0
        };
        let ptc = bw / (8.0 * mean);
        let auto_q_w = || {
            let rtt = (3.0 * (delay_secs + 1.0 / ptc)).max(0.1);
            1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
        };
        let q_w = if cfg.q_weight == 0.0 {
            1.0 - (-1.0 / ptc).exp()
        } else if cfg.q_weight == -1.0 {
            auto_q_w()
        } else if cfg.q_weight == -2.0 {
            1.0 - (-10.0 / ptc).exp()
        } else {
            cfg.q_weight
        };
        let q_w = if q_w > 0.0 && q_w <= 1.0 {
            q_w
        } else {
            let w = auto_q_w();
            // On a link so fast that the weight underflows, keep a tiny positive one.
            if w > 0.0 && w <= 1.0 {
                w
            } else {
                f64::MIN_POSITIVE
            }
        };
        let sane = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
        let mut th_min_pkts = sane(cfg.thresh);
        if th_min_pkts == 0.0 {
            th_min_pkts = (cfg.targetdelay * ptc / 2.0).max(5.0);
            if !th_min_pkts.is_finite() {
                th_min_pkts = 5.0;
            }
        }
        let th_max_pkts = match sane(cfg.maxthresh) {
            0.0 => 3.0 * th_min_pkts,
            x => x,
        };
        let unit = if cfg.queue_in_bytes { mean } else { 1.0 };
        let bottom = match &cfg.max_p {
            RedMaxP::AdaptiveRed(a) if a.bottom == 0.0 => (80_000.0 / bw).min(0.01),
            RedMaxP::AdaptiveRed(a) => a.bottom,
            RedMaxP::Fixed | RedMaxP::Q3(_) => 0.0,
        };
        let linterm = if cfg.linterm > 0.0 { cfg.linterm } else { 1.0 };
        let interval = match &cfg.max_p {
            RedMaxP::Fixed => 0.0,
            RedMaxP::AdaptiveRed(a) => a.interval,
            RedMaxP::Q3(a) => a.interval,
        };
        let mut red = Red {
            ptc,
            idle_err: ptc * 1.75e-9 + 1e-12,
            idle_err_hi: 1.0 - (ptc * 1.75e-9 + 1e-12),
            q_w,
            keep: 1.0 - q_w,
            decays: std::array::from_fn(|s| powi(1.0 - q_w, s as u32)),
            plain: cfg.average == RedAverage::Ewma
                && cfg.thresholds == RedThresholds::Fixed
                && cfg.max_p == RedMaxP::Fixed,
            unit,
            lim: f64::from(cfg.limit) * unit,
            qlim: Self::qlim(&cfg),
            interval_ns: Time::from_secs_f64(interval).as_nanos(),
            th_min: th_min_pkts * unit,
            th_max: th_max_pkts * unit,
            cur_max_p: 1.0 / linterm,
            init_max_p: 1.0 / linterm,
            bottom,
            v_a: 0.0,
            v_b: 0.0,
            v_c: 0.0,
            v_d: 0.0,
            ave: 0.0,
            q_prev: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            idle: true,
            idle_since: Since::At(Time::ZERO),
            lastset: Time::ZERO,
            q: VecDeque::new(),
            bytes: 0,
            counters: RedCounters::default(),
            cfg,
        };
        red.derive_slopes();
        red
    }

    /// The p(avg) line's coefficients. NS-2 computes them once at reset, so under Adaptive RED
    /// the gentle segment keeps the initial max_p (as in NS-2); Q2 and Q3 recompute them
    /// whenever a threshold or max_p moves, so that the line stays continuous.
    fn derive_slopes(&mut self) {
        let mut diff = self.th_max - self.th_min;
        if diff == 0.0 {
            diff = 1.0;
        }
        self.v_a = 1.0 / diff;
        self.v_b = -self.th_min / diff;
        let anchor = match self.cfg.max_p {
            RedMaxP::AdaptiveRed(_) => self.init_max_p,
            RedMaxP::Fixed | RedMaxP::Q3(_) => self.cur_max_p,
        };
        if self.cfg.gentle && self.th_max > 0.0 {
            self.v_c = (1.0 - anchor) / self.th_max;
            self.v_d = 2.0 * anchor - 1.0;
        }
    }

    /// Current average queue (queue units).
    pub fn average(&self) -> f64 {
        self.ave
    }

    /// Current min and max thresholds (queue units).
    pub fn thresholds(&self) -> (f64, f64) {
        (self.th_min, self.th_max)
    }

    /// Current max_p.
    pub fn max_p(&self) -> f64 {
        self.cur_max_p
    }

    /// The EWMA weight in use.
    pub fn q_weight(&self) -> f64 {
        self.q_w
    }

    /// Set `limit_` (later arrivals see it; waiting packets stay). The thresholds and the
    /// packet-time constant keep the values NS-2 derived when the queue was configured.
    pub fn set_limit(&mut self, limit: u32) {
        self.cfg.limit = limit;
        self.lim = f64::from(limit) * self.unit;
        self.qlim = Self::qlim(&self.cfg);
    }

    /// The hard limit in the units [`Red::qlen`] counts.
    fn qlim(cfg: &RedConfig) -> u64 {
        if cfg.queue_in_bytes {
            u64::from(cfg.limit) * u64::from(cfg.mean_pktsize)
        } else {
            u64::from(cfg.limit)
        }
    }

    /// The hard limit in queue units (bytes in byte mode).
    pub fn limit_units(&self) -> f64 {
        self.lim
    }

    /// Drop and mark counters.
    pub fn counters(&self) -> RedCounters {
        self.counters
    }

    fn qlen(&self) -> u64 {
        if self.cfg.queue_in_bytes {
            self.bytes
        } else {
            self.q.len() as u64
        }
    }

    /// NS-2's average (REDQueue::estimator) over `m + 1` packet times, the queue `nqueued`.
    #[inline(always)]
    fn ewma(&mut self, nqueued: u64, m: i64) {
        self.ave = self.ave * self.decay(m.saturating_add(1)) + self.q_w * exact_f64(nqueued);
    }

    /// `(1 − q_w)^steps`, 0 beyond `i32::MAX` steps, 1 below one step.
    #[inline(always)]
    fn decay(&self, steps: i64) -> f64 {
        if let Some(&d) = self.decays.get(steps as usize) {
            d
        } else if steps > i64::from(i32::MAX) {
            0.0
        } else {
            powi(self.keep, steps.max(0) as u32)
        }
    }

    /// [`Red::decay`] over `m + 1` steps, `m` from [`Red::leave_idle`] (not negative).
    #[inline(always)]
    fn decay_after(&self, m: i64) -> f64 {
        if (m as u64) < (DECAYS - 1) as u64 {
            self.decays[m as usize + 1]
        } else {
            self.decay(m.saturating_add(1))
        }
    }

    /// Update point 1: the average, given the instantaneous queue, whether this is the first
    /// arrival after an idle period, and `m` packet times of idleness to decay over.
    fn update_average(&mut self, nqueued: u64, after_idle: bool, m: i64) {
        let keep = self.keep;
        let q = exact_f64(nqueued);
        match self.cfg.average {
            RedAverage::Ewma => self.ewma(nqueued, m),
            RedAverage::ShewhartEwma => {
                let next = if after_idle {
                    // Fig. 1: "m = f(time − q_time); avg = (1 − wq)^m avg".
                    self.ave * self.decay(m)
                } else {
                    // Eq. 4: the EWMA plus the trend term.
                    keep * self.ave + self.q_w * q + (q - self.q_prev)
                };
                // docs/variants.md Q1: clamp to [0, limit]; the trend term alone could take
                // the average below zero when a burst drains.
                self.ave = if next.is_nan() {
                    0.0
                } else {
                    next.max(0.0).min(self.lim)
                };
            }
        }
    }

    /// Update point 2: the thresholds, after the average moved from `old_ave`, given the queue
    /// this arrival saw.
    fn update_thresholds(&mut self, old_ave: f64, nqueued: u64) {
        let RedThresholds::AutoTuned { alpha_th } = self.cfg.thresholds else {
            return;
        };
        // Eq. 5's trigger: the average rose by more than the gap between the thresholds.
        if self.th_max - self.th_min >= self.ave - old_ave {
            return;
        }
        let lo = self.th_min + (nqueued as f64 - self.q_prev) + alpha_th * self.unit;
        if !lo.is_finite() {
            return;
        }
        // docs/variants.md Q2: 1 packet ≤ min_th and max_th ≤ limit; min_th ≤ limit too, so
        // that min_th ≤ max_th and the p(avg) line keeps a non-negative slope.
        let lo = lo.max(self.unit).min(self.lim);
        self.th_min = lo;
        self.th_max = (3.0 * lo).min(self.lim);
        self.counters.threshold_moves += 1;
        self.derive_slopes();
    }

    /// Update point 3: max_p (NS-2 runs Adaptive RED inside the estimator, on every arrival).
    fn update_max_p(&mut self, now: Time) {
        let before = self.cur_max_p;
        match &self.cfg.max_p {
            RedMaxP::Fixed => return,
            RedMaxP::AdaptiveRed(a) => {
                // REDQueue::updateMaxP, called when now > lastset + interval.
                let interval = self.interval_ns;
                if now.as_nanos() <= self.lastset.as_nanos().saturating_add(interval) {
                    return;
                }
                let part = 0.4 * (self.th_max - self.th_min);
                if self.ave < self.th_min + part && self.cur_max_p > self.bottom {
                    self.cur_max_p *= a.beta;
                    self.lastset = now;
                } else if self.ave > self.th_max - part && a.top > self.cur_max_p {
                    self.cur_max_p += a.alpha.min(0.25 * self.cur_max_p);
                    self.lastset = now;
                }
            }
            RedMaxP::Q3(a) => {
                // Fig. 1: "Every interval seconds", here at the first arrival of each interval.
                let interval = self.interval_ns;
                if now.as_nanos().saturating_sub(self.lastset.as_nanos()) < interval {
                    return;
                }
                self.lastset = now;
                let gap = self.th_max - self.th_min;
                let (low, high) = (self.th_min + 0.4 * gap, self.th_min + 0.6 * gap);
                if self.ave > high && self.cur_max_p <= a.top {
                    // alpha = min(0.01, max_p/4), from max_p before the step (Floyd 2001).
                    self.cur_max_p += a.alpha.min(0.25 * self.cur_max_p);
                } else if self.ave < low && self.cur_max_p >= a.bottom {
                    self.cur_max_p *= a.beta;
                }
                // A probability bound: no parameter can take max_p outside [0, 1].
                self.cur_max_p = self.cur_max_p.clamp(0.0, 1.0);
            }
        }
        if !self.cur_max_p.is_finite() {
            self.cur_max_p = before;
        }
        if self.cur_max_p > before {
            self.counters.max_p_increases += 1;
        } else if self.cur_max_p < before {
            self.counters.max_p_decreases += 1;
        }
        if self.cur_max_p != before && matches!(self.cfg.max_p, RedMaxP::Q3(_)) {
            self.derive_slopes();
        }
    }

    /// NS-2 calculate_p_new: the drop probability for the current average.
    fn base_p(&self) -> f64 {
        let p = if self.cfg.gentle && self.ave >= self.th_max {
            self.v_c * self.ave + self.v_d
        } else if !self.cfg.gentle && self.ave >= self.th_max {
            1.0
        } else {
            (self.v_a * self.ave + self.v_b) * self.cur_max_p
        };
        p.min(1.0)
    }

    /// NS-2 modify_p: spread drops uniformly since the last one, and scale by size in byte
    /// mode. `count_bytes / mean_pktsize` is an integer division, as in NS-2.
    fn spaced_p(&self, p: f64, size: u32) -> f64 {
        let mean = u64::from(self.cfg.mean_pktsize.max(1));
        let count = if self.cfg.bytes {
            (self.count_bytes / mean) as f64
        } else {
            self.count as f64
        };
        let mut p = if self.cfg.wait {
            if count * p < 1.0 {
                0.0
            } else if count * p < 2.0 {
                p / (2.0 - count * p)
            } else {
                1.0
            }
        } else if count * p < 1.0 {
            p / (1.0 - count * p)
        } else {
            1.0
        };
        if self.cfg.bytes && p < 1.0 {
            p = p * f64::from(size) / mean as f64;
        }
        p.min(1.0)
    }

    /// NS-2 drop_early: true to drop; an ECN-capable packet may be marked instead.
    fn drop_early(&mut self, pkt: &mut P, rng: &mut impl RngCore) -> bool {
        let p1 = self.base_p();
        let p = self.spaced_p(p1, pkt.size());
        let u: f64 = rng.gen();
        if u <= p {
            self.count = 0;
            self.count_bytes = 0;
            if self.cfg.setbit && pkt.ect() && (!self.cfg.use_mark_p || p1 <= self.cfg.mark_p) {
                pkt.mark_ce();
                self.counters.marks += 1;
                return false;
            }
            return true;
        }
        false
    }

    /// Offer a packet at `now`; returns the packet dropped, if any (REDQueue::enque).
    pub fn enqueue(&mut self, pkt: P, now: Time, rng: &mut impl RngCore) -> Option<Dropped<P>> {
        self.enqueue_at(pkt, || now, rng)
    }

    /// [`Red::enqueue`] with the time asked of `now` only when it is read: by plain RED only
    /// at the first arrival after an idle period (the caller's clock is rounded when read).
    pub fn enqueue_at(
        &mut self,
        pkt: P,
        now: impl FnOnce() -> Time,
        rng: &mut impl RngCore,
    ) -> Option<Dropped<P>> {
        let nq = self.qlen();
        self.arrive(nq, pkt.size(), now);
        // The common arrival, short so that it saves few registers: no drop test, room left.
        if !(self.ave >= self.th_min && nq > 1) && nq < self.qlim {
            self.old = false;
            self.bytes += u64::from(pkt.size());
            self.q.push_back(pkt);
            return None;
        }
        self.decide(pkt, nq, rng)
    }

    /// An arrival of `size` at an idle link (so an empty queue), to be sent at once if RED
    /// takes it: with nothing queued no drop test is due, so only a zero limit refuses it
    /// (false, nothing else done). Otherwise RED's state becomes what `enqueue_at` then
    /// `dequeue_at` would leave, without the push and pop. `went_idle`: first
    /// [`Red::went_idle_secs`] at that double time. `now_secs`: now on the simulator's double
    /// clock, which [`Time::from_secs_f64`] rounds.
    #[inline(never)]
    pub(super) fn pass_idle(&mut self, went_idle: Option<f64>, size: u32, now_secs: f64) -> bool {
        debug_assert!(self.q.is_empty() && self.bytes == 0);
        // The idle start: from `went_idle` in a register, else as stored.
        let (idle, since) = match went_idle {
            Some(secs) => {
                self.went_idle(Since::Secs(secs));
                (true, Since::Secs(secs))
            }
            None => (self.idle, self.idle_since),
        };
        // Plain RED with room is a leaf (no registers saved); the rest is out of line.
        if !self.plain || self.qlim == 0 {
            return self.pass_idle_other(size, Time::from_secs_f64(now_secs));
        }
        // `arrive_plain` with nothing queued: q_w · 0 adds +0.0, which leaves the product
        // unchanged (plain RED's average is never negative nor −0.0).
        debug_assert!(self.ave.is_sign_positive());
        if idle {
            let m = self.leave_idle_secs(since, now_secs);
            self.ave *= self.decay_after(m);
        } else {
            self.ave *= self.keep;
        }
        self.q_prev = 0.0;
        self.count += 1;
        self.count_bytes += u64::from(size);
        self.old = false;
        self.idle = false;
        true
    }

    /// [`Red::pass_idle`] for the variants and a zero limit.
    #[inline(never)]
    fn pass_idle_other(&mut self, size: u32, now: Time) -> bool {
        if self.qlim == 0 {
            return false;
        }
        self.arrive(0, size, || now);
        self.old = false;
        self.idle = false;
        true
    }

    /// An arrival of `size` finding `nq` queued: the average, thresholds and max_p updated
    /// (update points 1–3) and the inter-drop counts advanced, before the drop decision.
    #[inline(always)]
    fn arrive(&mut self, nq: u64, size: u32, now: impl FnOnce() -> Time) {
        if !self.plain {
            self.arrive_variant(nq, size, now());
            return;
        }
        self.arrive_plain(nq, size, now);
    }

    /// [`Red::arrive`] for plain RED.
    #[inline(always)]
    fn arrive_plain(&mut self, nq: u64, size: u32, now: impl FnOnce() -> Time) {
        // What `arrive_variant` does when the thresholds and max_p are fixed. Without idleness
        // the decay is `powi(keep, 1)`, which is `keep`.
        if self.idle {
            let m = self.leave_idle(now());
            self.ave = self.ave * self.decay_after(m) + self.q_w * exact_f64(nq);
        } else {
            self.ave = self.ave * self.keep + self.q_w * exact_f64(nq);
        }
        self.q_prev = exact_f64(nq);
        self.count += 1;
        self.count_bytes += u64::from(size);
    }

    /// The first arrival after an idle period at `now`: the packet times `m` the average
    /// decays over. NS-2 pretends ptc · idle_time packets of an empty queue arrived while
    /// idle (int() truncation).
    #[inline(always)]
    fn leave_idle(&mut self, now: Time) -> i64 {
        self.idle = false;
        let since = self.idle_since.time();
        let idle = exact_f64(now.as_nanos().saturating_sub(since.as_nanos())) / 1e9;
        (self.ptc * idle) as i64
    }

    /// [`Red::leave_idle`] from `since` (the idle start) at `now_secs` on the double clock: m
    /// from the two doubles where that is proven to be the exact m, else from the rounded
    /// times.
    #[inline(always)]
    fn leave_idle_secs(&mut self, since: Since, now_secs: f64) -> i64 {
        if let Since::Secs(a) = since {
            if let Some(m) = self.idle_packets(a, now_secs) {
                self.idle = false;
                return m;
            }
        }
        self.leave_idle_rounded(now_secs)
    }

    /// [`Red::leave_idle_secs`]' fallback (an arrival near a packet-time boundary, or an idle
    /// start given as a [`Time`]).
    #[cold]
    #[inline(never)]
    fn leave_idle_rounded(&mut self, now_secs: f64) -> i64 {
        self.leave_idle(Time::from_secs_f64(now_secs))
    }

    /// NS-2's m for an idle period from `a` to `b` on the double clock, which
    /// [`Red::leave_idle`] computes as `int(x)`, `x = ptc · (B − A)⁺/1e9` from the rounded
    /// times `A = R(a)`, `B = R(b)` in ns (`R` = [`Time::from_secs_f64`]): `floor(y)` with
    /// `y = ptc · (b − a)` in doubles when `y` is provably on the same side of every
    /// integer as `x`, else `None`.
    ///
    /// Bound, for `0 ≤ a ≤ b < 1e6` s and u = 2^−53: `|R(s) − 1e9·s| ≤ 0.5 + u·1e9·s`, so
    /// `|(B − A)⁺ − 1e9·(b − a)| ≤ 1 + 2e15·u < 1.2221` ns; the division and product add a
    /// relative `2u`, and `y`'s subtraction and product a relative `2u` of
    /// `T = ptc·(b − a) < ptc·1e6`. So `|x − y| ≤ ptc·1.2221e-9·(1 + 3u) + 4u·T·(1 + u)
    /// < ptc·1.6662e-9`, below `idle_err` (`ptc·1.75e-9`, plus 1e-12 against underflow).
    /// With `r = floor(y)` and `f = y − r` (both exact), `idle_err < f < 1 − idle_err` puts
    /// `x` strictly between `r` and `r + 1`, so `int(x) = r`.
    #[inline(always)]
    fn idle_packets(&self, a: f64, b: f64) -> Option<i64> {
        // 1.5 · 2^52: adding it rounds any |z| < 2^51 to an integer, read from the bits.
        const ROUND: f64 = 6_755_399_441_055_744.0;
        // Non-negative doubles order as their bits: this is 0 ≤ a ≤ b < 1e6 (not NaN, not −0).
        if !(a.to_bits() <= b.to_bits() && b.to_bits() < 1e6f64.to_bits()) {
            return None;
        }
        let y = self.ptc * (b - a);
        // `y − 0.5` is exact for y ≥ 0.25, and rounding it gives floor(y) or, for a whole y,
        // possibly y − 1 (f = 1, refused); below 0.25 it gives 0. `y ≥ 2^51` only happens
        // when `idle_err > 1` (ptc > 2^51/1e6), which refuses every `f`.
        let z = (y - 0.5) + ROUND;
        let f = y - (z - ROUND);
        if f > self.idle_err && f < self.idle_err_hi {
            Some(z.to_bits().wrapping_sub(ROUND.to_bits()) as i64)
        } else {
            None
        }
    }

    /// [`Red::arrive`] for the variants (Q1, Q2, Q3, Adaptive RED).
    #[inline(never)]
    fn arrive_variant(&mut self, nq: u64, size: u32, now: Time) {
        let after_idle = self.idle;
        let m = if after_idle { self.leave_idle(now) } else { 0 };
        let old_ave = self.ave;
        // Fig. 1's order: average, thresholds, max_p, then the drop decision. Plain RED and
        // Adaptive RED have fixed thresholds, so their order is NS-2's.
        self.update_average(nq, after_idle, m);
        self.update_thresholds(old_ave, nq);
        self.update_max_p(now);
        self.q_prev = exact_f64(nq);
        self.count += 1;
        self.count_bytes += u64::from(size);
    }

    /// The drop decision for an arrival that found `nq` queued, the average updated.
    #[inline(never)]
    fn decide(&mut self, mut pkt: P, nq: u64, rng: &mut impl RngCore) -> Option<Dropped<P>> {
        let qavg = self.ave;
        let qlim = self.qlim;
        let mut droptype = DropType::None;
        if qavg >= self.th_min && nq > 1 {
            let ceiling = if self.cfg.gentle {
                2.0 * self.th_max
            } else {
                self.th_max
            };
            if !self.cfg.use_mark_p && qavg >= ceiling {
                droptype = DropType::ForcedAverage;
            } else if !self.old {
                // The average just crossed min_th (or the queue just became non-empty above
                // it): restart the inter-drop count.
                self.count = 1;
                self.count_bytes = u64::from(pkt.size());
                self.old = true;
            } else if self.drop_early(&mut pkt, rng) {
                droptype = DropType::Unforced;
            }
        } else {
            self.old = false;
        }
        // NS-2 compares the queue before this arrival with the limit: RED holds up to `limit`
        // waiting packets (DropTail holds limit − 1).
        if nq >= qlim {
            droptype = DropType::ForcedLimit;
        }
        let cause = match droptype {
            DropType::None => {
                self.bytes += u64::from(pkt.size());
                self.q.push_back(pkt);
                return None;
            }
            DropType::Unforced => {
                self.counters.early_drops += 1;
                DropCause::Aqm
            }
            DropType::ForcedAverage => {
                self.counters.forced_avg_drops += 1;
                self.count = 0;
                self.count_bytes = 0;
                DropCause::Aqm
            }
            DropType::ForcedLimit => {
                self.counters.overflow_drops += 1;
                self.count = 0;
                self.count_bytes = 0;
                DropCause::Queue
            }
        };
        // drop_tail_ (the default): the forced victim is the last packet, i.e. this arrival.
        Some(Dropped { pkt, cause })
    }

    /// The next packet to transmit; an empty queue starts an idle period (REDQueue::deque).
    pub fn dequeue(&mut self, now: Time) -> Option<P> {
        self.dequeue_at(|| now)
    }

    /// [`Red::dequeue`] with the time asked of `now` only when the queue is empty.
    #[inline]
    pub fn dequeue_at(&mut self, now: impl FnOnce() -> Time) -> Option<P> {
        match self.q.pop_front() {
            Some(p) => {
                self.bytes -= u64::from(p.size());
                self.idle = false;
                Some(p)
            }
            None => {
                self.went_idle(Since::At(now()));
                None
            }
        }
    }

    /// What [`Red::dequeue`] does on an empty queue at `secs` on the simulator's double clock,
    /// without looking at the queue.
    #[inline]
    pub(super) fn went_idle_secs(&mut self, secs: f64) {
        self.went_idle(Since::Secs(secs));
    }

    #[inline(always)]
    fn went_idle(&mut self, since: Since) {
        debug_assert!(self.q.is_empty(), "went_idle with packets waiting");
        self.idle = true;
        self.idle_since = since;
    }

    /// Waiting packets.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// True when no packet waits.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Waiting bytes.
    pub fn byte_len(&self) -> u64 {
        self.bytes
    }

    pub(super) fn packets(&self) -> &VecDeque<P> {
        &self.q
    }

    pub(super) fn clear(&mut self, now: Time) -> VecDeque<P> {
        self.bytes = 0;
        self.idle = true;
        self.idle_since = Since::At(now);
        std::mem::take(&mut self.q)
    }
}

/// `a^n` with the multiplications of compiler-builtins' `__powidf2` (what `f64::powi` calls
/// for an exponent known only at run time) in the same order, so the same bits; inlined, so
/// the common n = 1 (an arrival to a busy queue) is one multiplication by 1.
#[inline]
fn powi(mut a: f64, mut n: u32) -> f64 {
    let mut r = 1.0;
    loop {
        if n & 1 != 0 {
            r *= a;
        }
        n >>= 1;
        if n == 0 {
            return r;
        }
        a *= a;
    }
}

/// `x as f64` for a queue length or a span of nanoseconds, both far below 2^63: the signed
/// conversion is one instruction, the unsigned one several, and they agree there.
#[inline(always)]
fn exact_f64(x: u64) -> f64 {
    debug_assert!(i64::try_from(x).is_ok());
    x as i64 as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::packet;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn auto_parameters_match_ns2_examples() {
        // The values NS-2.35 prints (`docs/simulator.md`, "Queues").
        let r = Red::<Packet>::new(RedConfig::default(), 1.5e6, 0.020);
        let (lo, hi) = r.thresholds();
        assert_eq!((lo / 500.0, hi / 500.0), (5.0, 15.0));
        assert!((r.q_weight() - 0.002663).abs() < 5e-7, "{}", r.q_weight());
        let r = Red::<Packet>::new(RedConfig::default(), 15e6, 0.010);
        let (lo, hi) = r.thresholds();
        assert!((lo / 500.0 - 9.375).abs() < 1e-12 && (hi / 500.0 - 28.125).abs() < 1e-12);
        assert!((r.q_weight() - 0.0002666).abs() < 5e-8, "{}", r.q_weight());
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let cfg = RedConfig {
            queue_in_bytes: false,
            bytes: false,
            q_weight: 0.5,
            ..RedConfig::default()
        };
        // ptc = 8e6 / 4000 = 2000 packets/s.
        let mut r = Red::<Packet>::new(cfg, 8e6, 0.01);
        r.idle = false;
        for _ in 0..4 {
            r.enqueue(packet(0, 500), Time::ZERO, &mut rng);
        }
        let before = r.average();
        assert!(before > 1.0);
        while r.dequeue(Time::ZERO).is_some() {}
        // Idle 1 ms = 2 packet times: average decays by (1 − 0.5)^(2 + 1), queue was 0.
        r.enqueue(packet(0, 500), Time::from_secs_f64(0.001), &mut rng);
        assert!((r.average() - before * 0.125).abs() < 1e-12);
    }

    #[test]
    fn hard_limit_counts_waiting_packets_only() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // Thresholds far above the limit: only the hard limit can drop.
        let cfg = RedConfig {
            limit: 10,
            queue_in_bytes: false,
            bytes: false,
            thresh: 100.0,
            maxthresh: 300.0,
            ..RedConfig::default()
        };
        let mut r = Red::<Packet>::new(cfg, 1e6, 0.01);
        let mut kept = 0;
        for _ in 0..15 {
            if r.enqueue(packet(0, 500), Time::ZERO, &mut rng).is_none() {
                kept += 1;
            }
        }
        // RED drops when the queue before the arrival is ≥ limit: 10 wait.
        assert_eq!(kept, 10);
        assert_eq!(r.counters().overflow_drops, 5);
    }

    #[test]
    fn byte_mode_probability_scales_with_size_and_count() {
        let r = Red::<Packet>::new(RedConfig::default(), 10e6, 0.01);
        let mut r2 = r.clone();
        // count_bytes 400 → integer count 0 → no drop with wait_.
        r2.count_bytes = 400;
        assert_eq!(r2.spaced_p(0.05, 500), 0.0);
        // count 30 (15000 bytes): 30 · 0.05 = 1.5 → p / (2 − 1.5) = 0.1, scaled by 250/500.
        r2.count_bytes = 15_000;
        assert!((r2.spaced_p(0.05, 250) - 0.05).abs() < 1e-12);
        // count 40: 40 · 0.05 = 2 → certain drop, not scaled.
        r2.count_bytes = 20_000;
        assert_eq!(r2.spaced_p(0.05, 250), 1.0);
    }

    #[test]
    fn gentle_line_reaches_one_at_twice_maxthresh() {
        let mut r = Red::<Packet>::new(RedConfig::default(), 10e6, 0.01);
        let (lo, hi) = r.thresholds();
        r.ave = lo;
        assert!(r.base_p().abs() < 1e-12);
        r.ave = hi;
        assert!((r.base_p() - 0.1).abs() < 1e-12);
        r.ave = 1.5 * hi;
        assert!((r.base_p() - 0.55).abs() < 1e-12);
        r.ave = 2.0 * hi;
        assert!((r.base_p() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn ecn_capable_packets_are_marked_not_dropped() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let cfg = RedConfig {
            setbit: true,
            queue_in_bytes: false,
            bytes: false,
            q_weight: 1.0, // average = instantaneous queue
            thresh: 2.0,
            maxthresh: 40.0,
            limit: 1000,
            ..RedConfig::default()
        };
        let mut r = Red::<Packet>::new(cfg, 1e6, 0.01);
        let (mut marks, mut drops) = (0, 0);
        for i in 0..2000 {
            // Hold the queue near 20 packets, below maxthresh: p stays under mark_p.
            if r.len() > 20 {
                r.dequeue(Time::ZERO);
            }
            let mut p = packet(0, 500);
            p.ect = i % 2 == 0;
            match r.enqueue(p, Time::ZERO, &mut rng) {
                Some(d) => {
                    assert!(!d.pkt.ect, "an ECN-capable packet was dropped");
                    assert_eq!(d.cause, DropCause::Aqm);
                    drops += 1;
                }
                None => marks += u32::from(r.q.back().is_some_and(|p| p.ce)),
            }
        }
        // use_mark_p: marking only while p ≤ mark_p (0.1), true below maxthresh, so every
        // early decision on an ECT packet is a mark and only non-ECT packets are dropped.
        assert!(marks > 0 && drops > 0, "marks {marks} drops {drops}");
        assert_eq!(u64::from(marks), r.counters().marks);
    }

    #[test]
    fn adaptive_max_p_moves_toward_target() {
        let cfg = RedConfig {
            max_p: RedMaxP::AdaptiveRed(AdaptiveRed::default()),
            ..RedConfig::default()
        };
        let mut r = Red::<Packet>::new(cfg, 10e6, 0.01);
        let (lo, hi) = r.thresholds();
        r.ave = hi; // above th_max − 0.4 (th_max − th_min)
        r.update_max_p(Time::from_secs_f64(1.0));
        assert!((r.max_p() - 0.11).abs() < 1e-12);
        // Within the interval nothing changes.
        r.update_max_p(Time::from_secs_f64(1.2));
        assert!((r.max_p() - 0.11).abs() < 1e-12);
        r.ave = lo;
        r.update_max_p(Time::from_secs_f64(2.0));
        assert!((r.max_p() - 0.099).abs() < 1e-12);
    }

    /// Packet-mode RED with explicit weight and thresholds, on 8 Mb/s (ptc = 2000 packets/s
    /// of 500 bytes).
    fn packet_red(average: RedAverage, q_weight: f64, thresh: f64, max: f64, limit: u32) -> Red {
        Red::new(
            RedConfig {
                queue_in_bytes: false,
                bytes: false,
                q_weight,
                thresh,
                maxthresh: max,
                limit,
                average,
                ..RedConfig::default()
            },
            8e6,
            0.01,
        )
    }

    #[test]
    fn q1_shewhart_ewma_adds_the_trend_and_clamps() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Thresholds far above the limit: only the hard limit (4) drops.
        let mut r = packet_red(RedAverage::ShewhartEwma, 0.5, 100.0, 300.0, 4);
        let t0 = Time::ZERO;
        // First arrival, to an idle queue idle for 0 s: m = 0, avg = 0.5^0 · 0 = 0.
        r.enqueue(packet(0, 500), t0, &mut rng);
        assert_eq!(r.average(), 0.0);
        // q = 1, q_prev = 0: 0.5·0 + 0.5·1 + (1 − 0) = 1.5.
        r.enqueue(packet(0, 500), t0, &mut rng);
        assert_eq!(r.average(), 1.5);
        // q = 2: 0.75 + 1 + 1 = 2.75.
        r.enqueue(packet(0, 500), t0, &mut rng);
        assert_eq!(r.average(), 2.75);
        // q = 3: 1.375 + 1.5 + 1 = 3.875.
        r.enqueue(packet(0, 500), t0, &mut rng);
        assert_eq!(r.average(), 3.875);
        // q = 4: 1.9375 + 2 + 1 = 4.9375, clamped to the limit 4; the packet overflows.
        assert!(r.enqueue(packet(0, 500), t0, &mut rng).is_some());
        assert_eq!(r.average(), 4.0);
        // Drain without going idle (every dequeue finds a packet).
        for _ in 0..4 {
            assert!(r.dequeue(t0).is_some());
        }
        // q = 0, q_prev = 4: 0.5·4 + 0 + (0 − 4) = −2, clamped to 0.
        r.enqueue(packet(0, 500), t0, &mut rng);
        assert_eq!(r.average(), 0.0);
        // q = 1, q_prev = 0: 0 + 0.5 + 1 = 1.5.
        r.enqueue(packet(0, 500), t0, &mut rng);
        assert_eq!(r.average(), 1.5);
        // Idle from 0 s; an arrival at 1 ms: m = int(2000 · 0.001) = 2, avg = 0.5² · 1.5, with
        // no trend term (Fig. 1's idle branch).
        while r.dequeue(t0).is_some() {}
        r.enqueue(packet(0, 500), Time::from_nanos(1_000_000), &mut rng);
        assert_eq!(r.average(), 0.375);
        // The next arrival sees q = 1 after q_prev = 0 (the idle arrival's queue):
        // 0.5·0.375 + 0.5·1 + 1 = 1.6875.
        r.enqueue(packet(0, 500), Time::from_nanos(1_000_000), &mut rng);
        assert_eq!(r.average(), 1.6875);
    }

    #[test]
    fn q1_average_minus_queue_is_an_ewma_of_the_increments() {
        // Eq. 4 rearranged: avg_i − q_i = (1 − w)(avg_{i−1} − q_{i−1}) + w (q_i − q_{i−1}), so
        // away from the clamps the Shewhart–EWMA average follows the instantaneous queue.
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut r = packet_red(RedAverage::ShewhartEwma, 0.25, 1000.0, 3000.0, 1000);
        let t = Time::ZERO;
        // The first arrival, to the idle queue, leaves avg = 0 with q = 0: e = 0.
        r.enqueue(packet(0, 500), t, &mut rng);
        let (mut prev_e, mut prev_q) = (0.0, 0.0);
        // Departures before each arrival (never emptying the queue): the arrivals see queues
        // 1, 2, 3, 4, 3, 3, 4, 3, 4.
        for (k, d) in [0, 0, 0, 0, 2, 1, 0, 2, 0].into_iter().enumerate() {
            for _ in 0..d {
                assert!(r.dequeue(t).is_some());
            }
            let q = r.len() as f64;
            r.enqueue(packet(0, 500), t, &mut rng);
            let e = r.average() - q;
            let want = 0.75 * prev_e + 0.25 * (q - prev_q);
            assert!((e - want).abs() < 1e-12, "arrival {k}: {e} vs {want}");
            // |e| stays within one packet: the queue is followed, not averaged.
            assert!(e.abs() <= 1.0, "arrival {k}: e = {e}");
            (prev_e, prev_q) = (e, q);
        }
    }

    #[test]
    fn q2_moves_thresholds_when_the_average_jumps_more_than_the_gap() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        // EWMA with w = 1 (avg = q); thresholds 0.25 / 0.75: gap 0.5 packet; limit 10.
        let mut r = Red::<Packet>::new(
            RedConfig {
                queue_in_bytes: false,
                bytes: false,
                q_weight: 1.0,
                thresh: 0.25,
                maxthresh: 0.75,
                limit: 10,
                thresholds: RedThresholds::AutoTuned { alpha_th: 1.0 },
                ..RedConfig::default()
            },
            8e6,
            0.01,
        );
        let t = Time::ZERO;
        // avg 0 → 0: no move.
        r.enqueue(packet(0, 500), t, &mut rng);
        assert_eq!(r.thresholds(), (0.25, 0.75));
        // avg 0 → 1 > 0.5: min_th = 0.25 + (1 − 0) + 1 = 2.25, max_th = 6.75.
        r.enqueue(packet(0, 500), t, &mut rng);
        assert_eq!(r.thresholds(), (2.25, 6.75));
        assert_eq!(r.counters().threshold_moves, 1);
        // avg 1 → 2 < 4.5: no move.
        r.enqueue(packet(0, 500), t, &mut rng);
        assert_eq!(r.thresholds(), (2.25, 6.75));
        // The p(avg) line follows: p = max_p · (avg − 2.25)/4.5, 0.1 · 0.5 at avg 4.5.
        r.ave = 4.5;
        assert!((r.base_p() - 0.05).abs() < 1e-12);
    }

    #[test]
    fn q2_clamps_min_to_one_packet_and_both_to_the_limit() {
        let cfg = |qib: bool| RedConfig {
            queue_in_bytes: qib,
            q_weight: 0.5,
            thresh: 0.25,
            maxthresh: 0.75,
            limit: 10,
            thresholds: RedThresholds::AutoTuned { alpha_th: 1.0 },
            ..RedConfig::default()
        };
        // Packet mode. Average up 3 (> 0.5) while the queue fell 5 → 2:
        // 0.25 + (2 − 5) + 1 = −1.75 → 1 packet; max_th = 3.
        let mut r = Red::<Packet>::new(cfg(false), 8e6, 0.01);
        r.ave = 3.0;
        r.q_prev = 5.0;
        r.update_thresholds(0.0, 2);
        assert_eq!(r.thresholds(), (1.0, 3.0));
        // Thresholds 4 / 4.2, up 1, queue 0 → 8: 4 + 8 + 1 = 13 → limit 10, max_th 10.
        r.th_min = 4.0;
        r.th_max = 4.2;
        r.ave = 1.0;
        r.q_prev = 0.0;
        r.update_thresholds(0.0, 8);
        assert_eq!(r.thresholds(), (10.0, 10.0));
        assert_eq!(r.counters().threshold_moves, 2);
        // Byte mode, 500-byte units: 250 / 750 B, average up 1000 B, queue 0 → 1000 B:
        // 250 + 1000 + 1·500 = 1750 B, max_th 5250 B (limit 5000 B) → 5000 B.
        let mut r = Red::<Packet>::new(cfg(true), 8e6, 0.01);
        assert_eq!(r.thresholds(), (125.0, 375.0));
        r.th_min = 250.0;
        r.th_max = 750.0;
        r.ave = 1000.0;
        r.update_thresholds(0.0, 1000);
        assert_eq!(r.thresholds(), (1750.0, 5000.0));
        // No move when the rise equals the gap (eq. 5 is strict).
        r.ave = 1000.0 + 3250.0;
        r.update_thresholds(1000.0, 1000);
        assert_eq!(r.counters().threshold_moves, 1);
    }

    #[test]
    fn q3_aimd_every_interval_with_the_printed_bounds() {
        let cfg = RedConfig {
            max_p: RedMaxP::Q3(AdaptiveQ3::default()),
            ..RedConfig::default()
        };
        // 10 Mb/s: ptc 2500, min_th = max(5, 0.005 · 2500 / 2) = 6.25 packets = 3125 B,
        // max_th 9375 B; target band (3125 + 0.4 · 6250, 3125 + 0.6 · 6250) = (5625, 6875).
        let mut r = Red::<Packet>::new(cfg, 10e6, 0.01);
        assert_eq!(r.thresholds(), (3125.0, 9375.0));
        let at = |s: f64| Time::from_secs_f64(s);
        r.ave = 9375.0;
        r.update_max_p(at(0.3)); // less than 0.5 s since 0
        assert_eq!(r.max_p(), 0.1);
        r.update_max_p(at(0.5)); // 0.1 + min(0.01, 0.025)
        assert!((r.max_p() - 0.11).abs() < 1e-12);
        // The gentle segment follows max_p: p(max_th) = max_p, p(2·max_th) = 1.
        assert!((r.base_p() - 0.11).abs() < 1e-12);
        r.ave = 2.0 * 9375.0;
        assert!((r.base_p() - 1.0).abs() < 1e-12);
        r.ave = 9375.0;
        r.update_max_p(at(0.9));
        assert!((r.max_p() - 0.11).abs() < 1e-12);
        r.update_max_p(at(1.0));
        assert!((r.max_p() - 0.12).abs() < 1e-12);
        r.ave = 3125.0;
        r.update_max_p(at(1.5)); // 0.12 · 0.9
        assert!((r.max_p() - 0.108).abs() < 1e-12);
        // In the band nothing changes, but the evaluation still restarts the interval: an
        // excursion 0.3 s later waits until 2.5 s (NS-2's Adaptive RED would act at 2.3 s).
        r.ave = 6000.0;
        r.update_max_p(at(2.0));
        r.ave = 9375.0;
        r.update_max_p(at(2.3));
        assert!((r.max_p() - 0.108).abs() < 1e-12);
        r.update_max_p(at(2.5));
        assert!((r.max_p() - 0.118).abs() < 1e-12);
        // `max_p ≤ 0.5` admits one last step to 0.51, then stops.
        r.cur_max_p = 0.5;
        r.update_max_p(at(3.0));
        assert!((r.max_p() - 0.51).abs() < 1e-12);
        r.update_max_p(at(3.5));
        assert!((r.max_p() - 0.51).abs() < 1e-12);
        // `max_p ≥ 0.01` admits one last decrease to 0.009, then stops.
        r.cur_max_p = 0.01;
        r.ave = 0.0;
        r.update_max_p(at(4.0));
        assert!((r.max_p() - 0.009).abs() < 1e-12);
        r.update_max_p(at(4.5));
        assert!((r.max_p() - 0.009).abs() < 1e-12);
        // Below 0.04 the step is max_p / 4: 0.02 → 0.025.
        r.cur_max_p = 0.02;
        r.ave = 9375.0;
        r.update_max_p(at(5.0));
        assert!((r.max_p() - 0.025).abs() < 1e-12);
        // Increases at 0.5, 1.0, 2.5, 3.0 and 5.0 s; decreases at 1.5 and 4.0 s.
        let c = r.counters();
        assert_eq!((c.max_p_increases, c.max_p_decreases), (5, 2));
    }

    #[test]
    fn adaptive_red_keeps_ns2_bounds_timer_and_gentle_anchor() {
        let cfg = RedConfig {
            max_p: RedMaxP::AdaptiveRed(AdaptiveRed::default()),
            ..RedConfig::default()
        };
        let mut r = Red::<Packet>::new(cfg, 10e6, 0.01);
        let at = |s: f64| Time::from_secs_f64(s);
        // bottom_ 0 → min(0.01, 80000 / 10e6) = 0.008.
        assert!((r.bottom - 0.008).abs() < 1e-15);
        r.ave = 9375.0;
        // NS-2: now > lastset + interval, strictly.
        r.update_max_p(at(0.5));
        assert_eq!(r.max_p(), 0.1);
        r.update_max_p(at(0.6));
        assert!((r.max_p() - 0.11).abs() < 1e-12);
        // The gentle segment stays at the initial max_p (NS-2 computes v_c, v_d at reset).
        assert!((r.base_p() - 0.1).abs() < 1e-12);
        // In the band nothing changes and lastset stays 0.6, so an excursion acts at 1.2 s.
        r.ave = 6000.0;
        r.update_max_p(at(1.15));
        r.ave = 9375.0;
        r.update_max_p(at(1.2));
        assert!((r.max_p() - 0.12).abs() < 1e-12);
        // top_ 0.5 is strict: 0.5 stays 0.5.
        r.cur_max_p = 0.5;
        r.update_max_p(at(2.0));
        assert_eq!(r.max_p(), 0.5);
        // bottom 0.008 is strict: 0.0085 → 0.00765, then no further.
        r.cur_max_p = 0.0085;
        r.ave = 0.0;
        r.update_max_p(at(3.0));
        assert!((r.max_p() - 0.00765).abs() < 1e-15);
        r.update_max_p(at(4.0));
        assert!((r.max_p() - 0.00765).abs() < 1e-15);
    }

    #[test]
    fn presets_select_the_variants() {
        let a = RedConfig::ared();
        assert_eq!(a.q_weight, 0.0);
        assert_eq!(a.max_p, RedMaxP::AdaptiveRed(AdaptiveRed::default()));
        assert_eq!(
            (&a.average, &a.thresholds),
            (&RedAverage::Ewma, &RedThresholds::Fixed)
        );
        // q_weight_ 0 gives 1 − exp(−1/ptc): at 10 Mb/s ptc = 2500.
        let r = Red::<Packet>::new(a, 10e6, 0.01);
        assert!((r.q_weight() - (1.0 - (-1.0f64 / 2500.0).exp())).abs() < 1e-15);
        let e = RedConfig::ered();
        assert_eq!(e.average, RedAverage::ShewhartEwma);
        assert_eq!(e.thresholds, RedThresholds::AutoTuned { alpha_th: 1.0 });
        assert_eq!(e.max_p, RedMaxP::Q3(AdaptiveQ3::default()));
        assert_eq!(e.q_weight, -1.0);
    }

    #[test]
    fn invalid_weights_and_thresholds_fall_back_to_the_automatic_ones() {
        let auto = Red::<Packet>::new(RedConfig::default(), 1.5e6, 0.02);
        for w in [f64::NAN, 1.5, -0.3, f64::INFINITY] {
            let r = Red::<Packet>::new(
                RedConfig {
                    q_weight: w,
                    thresh: f64::NAN,
                    maxthresh: -3.0,
                    ..RedConfig::default()
                },
                1.5e6,
                0.02,
            );
            assert_eq!(r.q_weight(), auto.q_weight(), "{w}");
            assert_eq!(r.thresholds(), auto.thresholds());
        }
    }

    /// `f64::powi` behind a call the optimiser cannot see through, so that it runs
    /// `__powidf2` as the decay did.
    #[inline(never)]
    fn builtin_powi(a: f64, n: i32) -> f64 {
        std::hint::black_box(a).powi(std::hint::black_box(n))
    }

    #[test]
    fn powi_matches_the_builtin_on_edges() {
        for a in [
            0.0,
            -0.0,
            1.0,
            0.5,
            1.0 - 1e-16,
            f64::MIN_POSITIVE,
            1e-300,
            0.999_733_4,
        ] {
            for n in [0, 1, 2, 3, 7, 64, 1023, 1 << 20, i32::MAX as u32] {
                let want = builtin_powi(a, n as i32);
                assert_eq!(powi(a, n).to_bits(), want.to_bits(), "{a}^{n}");
            }
        }
    }

    #[test]
    fn decay_table_is_the_power() {
        let r = Red::<Packet>::new(RedConfig::default(), 5e6, 0.01);
        for s in 0..2 * DECAYS as i64 {
            assert_eq!(
                r.decay(s).to_bits(),
                powi(r.keep, s as u32).to_bits(),
                "{s}"
            );
            assert_eq!(r.decay_after(s).to_bits(), r.decay(s + 1).to_bits(), "{s}");
        }
    }

    #[test]
    fn idle_since_a_double_time_is_since_its_rounding() {
        // The simulator's transmission end at a double time, the clock rounded at arrival.
        for (end, at) in [(0.1234567894, 0.13), (1.0000000005, 1.0035), (7.25, 7.5)] {
            let mut a = Red::<Packet>::new(RedConfig::default(), 5e6, 0.01);
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            for _ in 0..3 {
                assert!(a.enqueue(packet(0, 1000), Time::ZERO, &mut rng).is_none());
            }
            while a.dequeue(Time::ZERO).is_some() {}
            let mut b = a.clone();
            assert!(b.dequeue(Time::from_secs_f64(end)).is_none());
            let t = Time::from_secs_f64(at);
            assert!(a.pass_idle(Some(end), 1000, at));
            assert!(b.enqueue(packet(0, 1000), t, &mut rng).is_none());
            assert!(b.dequeue(t).is_some());
            assert_eq!(a.average().to_bits(), b.average().to_bits());
            assert!(a.average() > 0.0);
        }
    }

    /// NS-2's m the long way: an idle period from `a`, left at `b` rounded.
    fn exact_m(r: &Red<Packet>, a: f64, b: f64) -> i64 {
        let mut r = r.clone();
        r.went_idle(Since::Secs(a));
        r.leave_idle(Time::from_secs_f64(b))
    }

    /// `idle_packets(a, b)`, checked against the long way when it answers; `leave_idle_secs`
    /// must give the exact m either way.
    fn fast_m(r: &Red<Packet>, a: f64, b: f64) -> Option<i64> {
        let fast = r.idle_packets(a, b);
        // The long way takes idle spans below 2^63 ns (292 years; `exact_f64`): past that
        // only the shortcut's refusal (it answers below 1e6 s) is checked.
        if Time::from_secs_f64(b).as_nanos() >= 1 << 63 {
            assert_eq!(fast, None, "ptc {} a {a:e} b {b:e}", r.ptc);
            return fast;
        }
        let want = exact_m(r, a, b);
        if let Some(m) = fast {
            assert_eq!(m, want, "ptc {} a {a:e} b {b:e}", r.ptc);
        }
        let mut s = r.clone();
        s.went_idle(Since::Secs(a));
        assert_eq!(
            s.leave_idle_secs(Since::Secs(a), b),
            want,
            "ptc {} a {a:e} b {b:e}",
            r.ptc
        );
        assert!(!s.idle);
        fast
    }

    fn red_at(bandwidth: f64, mean: u32) -> Red<Packet> {
        let cfg = RedConfig {
            mean_pktsize: mean,
            ..RedConfig::default()
        };
        Red::new(cfg, bandwidth, 0.01)
    }

    #[test]
    fn idle_packets_near_boundaries_and_ties() {
        let (mut fast, mut slow) = (0, 0);
        for (bw, mean) in [
            (5e6, 1000),
            (4e6, 500),
            (2e6, 1000),
            (1e9, 1000),
            (1e3, 1),
            (4e11, 1),
        ] {
            let r = red_at(bw, mean);
            // Idle starts on whole and half nanoseconds (rounding ties) and between them.
            for a in [
                0.0,
                0.5e-9,
                1.0,
                2.5e-9,
                1.0000000005,
                123.456_789_123_5,
                999_990.0,
            ] {
                for k in [0u32, 1, 2, 62, 63, 64, 1000, 123_457] {
                    let at_k = a + f64::from(k) / r.ptc;
                    for e in -24..=24 {
                        for b in [
                            at_k + f64::from(e) * 0.25e-9,
                            at_k + f64::from(e) * 1e-13,
                            f64::from_bits(at_k.to_bits().wrapping_add_signed(i64::from(e))),
                        ] {
                            match fast_m(&r, a, b) {
                                Some(_) => fast += 1,
                                None => slow += 1,
                            }
                        }
                    }
                }
            }
        }
        // Both the shortcut and its fallback ran.
        assert!(fast > 1000 && slow > 1000, "{fast} {slow}");
    }

    #[test]
    fn idle_packets_falls_back_outside_its_bound() {
        let r = red_at(5e6, 1000);
        // The fast answer where it is clear.
        assert_eq!(fast_m(&r, 1.0, 1.0 + 10.5 / r.ptc), Some(10));
        for (a, b) in [
            (f64::NAN, 1.0),
            (0.0, f64::NAN),
            (-1.0, 1.0),
            (-0.0, 1.0),
            (2.0, 1.0),
            (1.0, 1.0),
            (1.0, 1e6 + 1.0),
            (1.0, f64::INFINITY),
            (f64::NEG_INFINITY, 1.0),
            // On a packet-time boundary: 16 ms at 625 packets/s is 10 packets.
            (1.0, 1.016),
            (1.0, 1.016 + 1e-12),
            (1.0, 1.016 - 1e-12),
        ] {
            assert_eq!(fast_m(&r, a, b), None, "{a} {b}");
        }
        // A rate so high that the margin exceeds half a packet: always the long way.
        let r = red_at(1e18, 1);
        assert_eq!(fast_m(&r, 1.0, 1.0 + 10.5 / r.ptc), None);
    }

    #[test]
    fn pass_idle_falls_back_to_the_rounded_times() {
        // At a packet-time boundary (and from an idle start kept as a `Time`), `pass_idle`
        // takes the long way and still leaves what an enqueue then a dequeue would.
        for (end, at) in [(1.0, 1.016), (0.5e-9, 0.016_000_000_5), (1.0, 1.0165)] {
            let mut a = red_at(5e6, 1000);
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            for _ in 0..3 {
                assert!(a.enqueue(packet(0, 1000), Time::ZERO, &mut rng).is_none());
            }
            while a.dequeue(Time::ZERO).is_some() {}
            let mut b = a.clone();
            let mut c = a.clone();
            assert!(b.dequeue(Time::from_secs_f64(end)).is_none());
            assert!(c.dequeue(Time::from_secs_f64(end)).is_none());
            let t = Time::from_secs_f64(at);
            assert!(a.pass_idle(Some(end), 1000, at));
            assert!(c.pass_idle(None, 1000, at));
            assert!(b.enqueue(packet(0, 1000), t, &mut rng).is_none());
            assert!(b.dequeue(t).is_some());
            assert_eq!(a.average().to_bits(), b.average().to_bits());
            assert_eq!(c.average().to_bits(), b.average().to_bits());
        }
    }

    proptest::proptest! {
        /// The shortcut m equals the m of the rounded times wherever it answers, at any rate,
        /// idle start and length, near packet-time boundaries too.
        #[test]
        fn idle_packets_is_the_exact_m(
            bw in proptest::sample::select(vec![1e3, 64e3, 1.5e6, 4e6, 5e6, 1e8, 1e9, 1e10, 1e12]),
            mean in proptest::sample::select(vec![1u32, 40, 500, 1000, 1500]),
            a in 0.0f64..1.1e6,
            k in 0u32..200_000,
            frac in -1.0f64..1.0,
            scale in proptest::sample::select(vec![1e-15, 1e-12, 1e-9, 1e-6, 1.0]),
        ) {
            let r = red_at(bw, mean);
            // Just off the boundary of k packet times, by `frac · scale` packet times.
            let b = a + (f64::from(k) + frac * scale) / r.ptc;
            fast_m(&r, a, b);
        }

        /// The same from anywhere: random doubles on both ends.
        #[test]
        fn idle_packets_is_the_exact_m_anywhere(
            bw in 1.0f64..1e12,
            a in proptest::num::f64::ANY,
            b in proptest::num::f64::ANY,
        ) {
            fast_m(&red_at(bw, 500), a, b);
        }
    }

    proptest::proptest! {
        /// `pass_idle` (the simulator's idle-link shortcut) leaves RED exactly as an enqueue
        /// then a dequeue of the same packet would, for plain RED, Q1–Q3 and Adaptive RED, at
        /// any point of a run of bursts and idle gaps.
        #[test]
        fn pass_idle_is_an_enqueue_then_a_dequeue(
            preset in 0usize..3,
            bursts in proptest::collection::vec((0usize..12, 1u32..1500, 0u64..50_000_000), 1..40),
        ) {
            let cfg = match preset {
                0 => RedConfig { queue_in_bytes: false, bytes: false, ..RedConfig::default() },
                1 => RedConfig::ared(),
                _ => RedConfig::ered(),
            };
            let mut short = Red::<Packet>::new(cfg, 8e6, 0.01);
            let mut long = short.clone();
            let (mut rs, mut rl) = (ChaCha8Rng::seed_from_u64(7), ChaCha8Rng::seed_from_u64(7));
            let mut now = 0u64;
            for (queued, size, gap) in bursts {
                now += gap;
                let t = Time::from_nanos(now);
                // An arrival at the idle link: the shortcut on one queue, the long way on the other.
                let passed = short.pass_idle(None, size, crate::sched::secs_of(t));
                let kept = long.enqueue(packet(0, size), t, &mut rl).is_none();
                proptest::prop_assert_eq!(passed, kept);
                if kept {
                    proptest::prop_assert!(long.dequeue(t).is_some());
                }
                proptest::prop_assert_eq!(format!("{short:?}"), format!("{long:?}"));
                // A burst behind it, drained until the link goes idle.
                for _ in 0..queued {
                    let a = short.enqueue(packet(0, size), t, &mut rs).is_none();
                    let b = long.enqueue(packet(0, size), t, &mut rl).is_none();
                    proptest::prop_assert_eq!(a, b);
                }
                while short.dequeue(t).is_some() {
                    proptest::prop_assert!(long.dequeue(t).is_some());
                }
                proptest::prop_assert!(long.dequeue(t).is_none());
                proptest::prop_assert_eq!(format!("{short:?}"), format!("{long:?}"));
            }
        }
    }

    proptest::proptest! {
        /// The decay's inlined `powi` gives `__powidf2`'s bits for every weight and idle
        /// length RED can meet.
        #[test]
        fn powi_matches_the_builtin(keep in 0.0f64..=1.0, n in 0u32..=(i32::MAX as u32)) {
            proptest::prop_assert_eq!(powi(keep, n).to_bits(), builtin_powi(keep, n as i32).to_bits());
        }

        /// The same on the small exponents most arrivals use.
        #[test]
        fn powi_matches_the_builtin_small(keep in 0.9f64..=1.0, n in 0u32..5000) {
            proptest::prop_assert_eq!(powi(keep, n).to_bits(), builtin_powi(keep, n as i32).to_bits());
        }
    }
}
