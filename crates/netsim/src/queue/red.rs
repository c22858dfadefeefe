//! NS-2's `Queue/RED` with its defaults and auto-configuration (`spec/tfrc-reference.md` B8).
//!
//! The three places later variants change are separate methods dispatching on closed enums:
//! the average ([`RedAverage`], seed 001's Shewhart–EWMA is Q1), the thresholds
//! ([`RedThresholds`], Q2) and max_p ([`RedMaxP`], NS-2's Adaptive RED and Q3).

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Dropped;
use crate::packet::Packet;
use crate::stats::DropCause;
use crate::Time;

/// How the average queue is computed.
#[derive(Clone, Debug, PartialEq)]
pub enum RedAverage {
    /// NS-2's EWMA with weight q_w, decayed over idle time as if `ptc · idle` packets of an
    /// empty queue had arrived.
    Ewma,
}

/// How the thresholds evolve.
#[derive(Clone, Debug, PartialEq)]
pub enum RedThresholds {
    /// Fixed at the configured (or auto-derived) values.
    Fixed,
}

/// How max_p evolves.
#[derive(Clone, Debug, PartialEq)]
pub enum RedMaxP {
    /// Fixed at 1 / `linterm`.
    Fixed,
    /// NS-2's Adaptive RED (`adaptive_ 1`, Floyd, Gummadi & Shenker 2001): every `interval`,
    /// AIMD on max_p to keep the average in the middle of the thresholds.
    Adaptive(AdaptiveRed),
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
}

/// A RED queue.
#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedConfig,
    /// Packets per second at the mean packet size (NS-2 `ptc`).
    ptc: f64,
    q_w: f64,
    /// Thresholds in queue units (bytes in byte mode).
    th_min: f64,
    th_max: f64,
    cur_max_p: f64,
    bottom: f64,
    v_a: f64,
    v_b: f64,
    v_c: f64,
    v_d: f64,
    ave: f64,
    count: u64,
    count_bytes: u64,
    old: bool,
    idle: bool,
    idletime: Time,
    lastset: Time,
    q: VecDeque<Packet>,
    bytes: u64,
    counters: RedCounters,
}

enum DropType {
    None,
    ForcedAverage,
    ForcedLimit,
    Unforced,
}

impl Red {
    /// A RED queue on a link of `bandwidth_bps` and one-way `delay_secs`, with NS-2's
    /// automatic parameters (REDQueue::initialize_params and reset).
    pub fn new(cfg: RedConfig, bandwidth_bps: f64, delay_secs: f64) -> Self {
        let mean = f64::from(cfg.mean_pktsize.max(1));
        let bw = if bandwidth_bps > 0.0 {
            bandwidth_bps
        } else {
            1.0
        };
        let ptc = bw / (8.0 * mean);
        let q_w = if cfg.q_weight == 0.0 {
            1.0 - (-1.0 / ptc).exp()
        } else if cfg.q_weight == -1.0 {
            let rtt = (3.0 * (delay_secs + 1.0 / ptc)).max(0.1);
            1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
        } else if cfg.q_weight == -2.0 {
            1.0 - (-10.0 / ptc).exp()
        } else {
            cfg.q_weight
        };
        let mut th_min_pkts = cfg.thresh;
        if th_min_pkts == 0.0 {
            th_min_pkts = (cfg.targetdelay * ptc / 2.0).max(5.0);
        }
        let th_max_pkts = if cfg.maxthresh == 0.0 {
            3.0 * th_min_pkts
        } else {
            cfg.maxthresh
        };
        let unit = if cfg.queue_in_bytes { mean } else { 1.0 };
        let bottom = match &cfg.max_p {
            RedMaxP::Adaptive(a) if a.bottom == 0.0 => (80_000.0 / bw).min(0.01),
            RedMaxP::Adaptive(a) => a.bottom,
            RedMaxP::Fixed => 0.0,
        };
        let linterm = if cfg.linterm > 0.0 { cfg.linterm } else { 1.0 };
        let mut red = Red {
            ptc,
            q_w,
            th_min: th_min_pkts * unit,
            th_max: th_max_pkts * unit,
            cur_max_p: 1.0 / linterm,
            bottom,
            v_a: 0.0,
            v_b: 0.0,
            v_c: 0.0,
            v_d: 0.0,
            ave: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            idle: true,
            idletime: Time::ZERO,
            lastset: Time::ZERO,
            q: VecDeque::new(),
            bytes: 0,
            counters: RedCounters::default(),
            cfg,
        };
        red.derive_slopes();
        red
    }

    /// The p(avg) line's coefficients. NS-2 computes them once at reset, so with Adaptive RED
    /// the gentle segment keeps the initial max_p (as in NS-2).
    fn derive_slopes(&mut self) {
        let mut diff = self.th_max - self.th_min;
        if diff == 0.0 {
            diff = 1.0;
        }
        self.v_a = 1.0 / diff;
        self.v_b = -self.th_min / diff;
        if self.cfg.gentle && self.th_max > 0.0 {
            self.v_c = (1.0 - self.cur_max_p) / self.th_max;
            self.v_d = 2.0 * self.cur_max_p - 1.0;
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

    /// Update point 1: the average, given the instantaneous queue and `m` packet times of
    /// idleness to decay over (NS-2 REDQueue::estimator with m + 1 steps).
    fn update_average(&mut self, nqueued: u64, m: i64) {
        match self.cfg.average {
            RedAverage::Ewma => {
                let keep = 1.0 - self.q_w;
                let steps = m.saturating_add(1);
                let decay = if steps > i64::from(i32::MAX) {
                    0.0
                } else {
                    keep.powi(steps as i32)
                };
                self.ave = self.ave * decay + self.q_w * nqueued as f64;
            }
        }
    }

    /// Update point 2: the thresholds, after the average moved from `_old_ave`.
    fn update_thresholds(&mut self, _old_ave: f64) {
        match self.cfg.thresholds {
            RedThresholds::Fixed => {}
        }
    }

    /// Update point 3: max_p (NS-2 runs it inside the estimator, on every arrival).
    fn update_max_p(&mut self, now: Time) {
        if let RedMaxP::Adaptive(a) = &self.cfg.max_p {
            let interval = Time::from_secs_f64(a.interval).as_nanos();
            if now.as_nanos() <= self.lastset.as_nanos().saturating_add(interval) {
                return;
            }
            let part = 0.4 * (self.th_max - self.th_min);
            if self.ave < self.th_min + part && self.cur_max_p > self.bottom {
                self.cur_max_p *= a.beta;
                self.lastset = now;
            } else if self.ave > self.th_max - part && a.top > self.cur_max_p {
                let step = a.alpha.min(0.25 * self.cur_max_p);
                self.cur_max_p += step;
                self.lastset = now;
            }
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
    fn drop_early(&mut self, pkt: &mut Packet, rng: &mut ChaCha8Rng) -> bool {
        let p1 = self.base_p();
        let p = self.spaced_p(p1, pkt.size);
        let u: f64 = rng.gen();
        if u <= p {
            self.count = 0;
            self.count_bytes = 0;
            if self.cfg.setbit && pkt.ect && (!self.cfg.use_mark_p || p1 <= self.cfg.mark_p) {
                pkt.ce = true;
                self.counters.marks += 1;
                return false;
            }
            return true;
        }
        false
    }

    /// Offer a packet at `now`; returns the packet dropped, if any (REDQueue::enque).
    pub fn enqueue(&mut self, mut pkt: Packet, now: Time, rng: &mut ChaCha8Rng) -> Option<Dropped> {
        let mut m: i64 = 0;
        if self.idle {
            // NS-2 pretends ptc · idle_time packets of an empty queue arrived while idle
            // (int() truncation).
            self.idle = false;
            let idle = now.as_nanos().saturating_sub(self.idletime.as_nanos()) as f64 / 1e9;
            m = (self.ptc * idle) as i64;
        }
        let old_ave = self.ave;
        let nq = self.qlen();
        self.update_average(nq, m);
        self.update_max_p(now);
        self.update_thresholds(old_ave);

        self.count += 1;
        self.count_bytes += u64::from(pkt.size);

        let qavg = self.ave;
        let qlim = if self.cfg.queue_in_bytes {
            u64::from(self.cfg.limit) * u64::from(self.cfg.mean_pktsize)
        } else {
            u64::from(self.cfg.limit)
        };
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
                self.count_bytes = u64::from(pkt.size);
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
                self.bytes += u64::from(pkt.size);
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
    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        match self.q.pop_front() {
            Some(p) => {
                self.bytes -= u64::from(p.size);
                self.idle = false;
                Some(p)
            }
            None => {
                self.idle = true;
                self.idletime = now;
                None
            }
        }
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

    pub(super) fn packets(&self) -> &VecDeque<Packet> {
        &self.q
    }

    pub(super) fn clear(&mut self, now: Time) -> VecDeque<Packet> {
        self.bytes = 0;
        self.idle = true;
        self.idletime = now;
        std::mem::take(&mut self.q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Direction, Header, PacketKind};
    use rand::SeedableRng;

    fn pkt(size: u32) -> Packet {
        Packet {
            uid: 0,
            flow: 0,
            dir: Direction::Forward,
            src: 0,
            dst: 1,
            kind: PacketKind::Cbr,
            size,
            payload: size,
            seq: 0,
            sent_at: Time::ZERO,
            ttl: 32,
            initial_ttl: 32,
            ect: false,
            ce: false,
            protected: false,
            exposed: false,
            header: Header::None,
        }
    }

    #[test]
    fn auto_parameters_match_ns2_examples() {
        // spec B8 "verified examples" (printed by NS-2.35).
        let r = Red::new(RedConfig::default(), 1.5e6, 0.020);
        let (lo, hi) = r.thresholds();
        assert_eq!((lo / 500.0, hi / 500.0), (5.0, 15.0));
        assert!((r.q_weight() - 0.002663).abs() < 5e-7, "{}", r.q_weight());
        let r = Red::new(RedConfig::default(), 15e6, 0.010);
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
        let mut r = Red::new(cfg, 8e6, 0.01);
        r.idle = false;
        for _ in 0..4 {
            r.enqueue(pkt(500), Time::ZERO, &mut rng);
        }
        let before = r.average();
        assert!(before > 1.0);
        while r.dequeue(Time::ZERO).is_some() {}
        // Idle 1 ms = 2 packet times: average decays by (1 − 0.5)^(2 + 1), queue was 0.
        r.enqueue(pkt(500), Time::from_secs_f64(0.001), &mut rng);
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
        let mut r = Red::new(cfg, 1e6, 0.01);
        let mut kept = 0;
        for _ in 0..15 {
            if r.enqueue(pkt(500), Time::ZERO, &mut rng).is_none() {
                kept += 1;
            }
        }
        // RED drops when the queue before the arrival is ≥ limit: 10 wait.
        assert_eq!(kept, 10);
        assert_eq!(r.counters().overflow_drops, 5);
    }

    #[test]
    fn byte_mode_probability_scales_with_size_and_count() {
        let r = Red::new(RedConfig::default(), 10e6, 0.01);
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
        let mut r = Red::new(RedConfig::default(), 10e6, 0.01);
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
        let mut r = Red::new(cfg, 1e6, 0.01);
        let (mut marks, mut drops) = (0, 0);
        for i in 0..2000 {
            // Hold the queue near 20 packets, below maxthresh: p stays under mark_p.
            if r.len() > 20 {
                r.dequeue(Time::ZERO);
            }
            let mut p = pkt(500);
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
            max_p: RedMaxP::Adaptive(AdaptiveRed::default()),
            ..RedConfig::default()
        };
        let mut r = Red::new(cfg, 10e6, 0.01);
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
}
