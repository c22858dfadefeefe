//! Google Congestion Control as draft-ietf-rmcat-gcc-02 describes it, send-side.
//!
//! The draft's delay-based controller can run at the receiver (sending REMB) or at the sender
//! from transport-wide feedback (§4); this one runs at the sender, so no REMB message is needed:
//! the sender has every arrival time it would contain. The steps, restated in
//! `docs/gcc-conformance.md` with the test of each:
//!
//! 1. **Pre-filtering and arrival-time model** (§5.1–5.2): packets sent within `burst_time`
//!    (5 ms) of a group's first packet form one group; a packet arriving within `burst_time` of
//!    the previous one with a negative delay variation joins the group too. Between consecutive
//!    groups, `d(i) = t(i) − t(i−1) − (T(i) − T(i−1))` (arrival minus departure spacing).
//! 2. **Kalman filter** (§5.3) of the queuing-delay gradient `m(i)` — the draft's estimator
//!    (the trendline filter that replaced it in libwebrtc is not in the draft).
//! 3. **Over-use detector** (§5.4): `m(i)` against an adaptive threshold `del_var_th(i)`;
//!    over-use after `overuse_time_th` above it with `m` not falling, under-use below
//!    `−del_var_th`.
//! 4. **Rate controller** (§5.5): Increase / Decrease / Hold, multiplicative increase far from
//!    convergence, additive near it, decrease to `beta · R_hat`, never above `1.5 · R_hat`.
//! 5. **Loss-based controller** (§6): `As_hat` grows 5 % when loss is under 2 %, shrinks by
//!    `(1 − 0.5 p)` over 10 %; the target is the smaller of the two estimates.

use crate::feedback::TwccFeedback;
use crate::history::{Resolved, SentHistory};
use crate::time::Time;
use core::time::Duration;
use std::collections::VecDeque;

/// GCC's parameters (draft-ietf-rmcat-gcc-02 §5–6); [`GccConfig::draft02`] gives the draft's
/// values.
#[derive(Clone, Debug, PartialEq)]
pub struct GccConfig {
    /// burst_time: packets sent within it of a group's first form one group (§5.2).
    pub burst_time: Duration,
    /// q: the Kalman filter's state noise variance (§5.3), ms².
    pub q: f64,
    /// chi: filter coefficient of the measurement-noise estimate, in [0.001, 0.1] (§5.3).
    pub chi: f64,
    /// Groups over which f_max, the highest group rate, is taken (§5.3's K).
    pub f_max_groups: usize,
    /// Initial noise variance estimate var_v_hat(0), ms².
    pub var_v_initial: f64,
    /// Initial error variance P(0), ms².
    pub p_initial: f64,
    /// overuse_time_th (§5.4).
    pub overuse_time_th: Duration,
    /// The detector compares `min(groups seen, this) · m(i)` with the threshold. The draft's
    /// text compares `m(i)` itself, but with its 6–600 ms thresholds a per-group gradient of a
    /// fraction of a millisecond (a 10 % overload) would never count as over-use; libwebrtc's
    /// Kalman-era detector, which the draft documents, and pion's implementation scale by the
    /// number of deltas, capped at 60. Set 1 for the draft's literal comparison.
    pub gradient_scale_cap: u32,
    /// K_u: threshold gain upwards (§5.4).
    pub k_u: f64,
    /// K_d: threshold gain downwards (§5.4).
    pub k_d: f64,
    /// Initial del_var_th (ms).
    pub threshold_initial_ms: f64,
    /// Threshold clamp (ms).
    pub threshold_min_ms: f64,
    /// Threshold clamp (ms).
    pub threshold_max_ms: f64,
    /// The threshold is not updated when |m| exceeds it by more than this (ms).
    pub threshold_skip_ms: f64,
    /// Largest time step the threshold update uses (ms): a long gap between updates would
    /// otherwise move it all the way at once (libwebrtc's bound; the draft is silent).
    pub threshold_max_step_ms: f64,
    /// eta: multiplicative increase per second (§5.5).
    pub eta: f64,
    /// beta: decrease factor of the received rate (§5.5).
    pub beta: f64,
    /// Window over which the received rate R_hat is measured (§5.5: 0.5 s).
    pub rate_window: Duration,
    /// Frame rate assumed for the additive increase's packet size (§5.5: 30).
    pub fps: f64,
    /// Largest packet for the additive increase (§5.5: 1200 bytes).
    pub max_packet_bytes: f64,
    /// Loss below which As_hat grows (§6: 2 %).
    pub loss_low: f64,
    /// Loss above which As_hat shrinks (§6: 10 %).
    pub loss_high: f64,
    /// Fewest packets a loss fraction is computed over; feedback with fewer accumulates.
    pub loss_min_packets: u64,
    /// Lowest target (bit/s).
    pub min_rate: f64,
    /// Highest target (bit/s).
    pub max_rate: f64,
    /// Starting target (bit/s).
    pub start_rate: f64,
    /// Pacing rate as a multiple of the target (libwebrtc's 2.5; the draft leaves pacing to the
    /// sender's implementation).
    pub pacing_factor: f64,
}

impl GccConfig {
    /// draft-ietf-rmcat-gcc-02's values, with the rate range of RFC 8867's defaults (150 kbit/s
    /// to 1.5 Mbit/s) and the choices the draft leaves open stated in the field docs.
    pub fn draft02() -> GccConfig {
        GccConfig {
            burst_time: Duration::from_millis(5),
            q: 1e-3,
            chi: 0.01,
            f_max_groups: 10,
            var_v_initial: 50.0,
            p_initial: 0.1,
            overuse_time_th: Duration::from_millis(10),
            gradient_scale_cap: 60,
            k_u: 0.01,
            k_d: 0.00018,
            threshold_initial_ms: 12.5,
            threshold_min_ms: 6.0,
            threshold_max_ms: 600.0,
            threshold_skip_ms: 15.0,
            threshold_max_step_ms: 100.0,
            eta: 1.08,
            beta: 0.85,
            rate_window: Duration::from_millis(500),
            fps: 30.0,
            max_packet_bytes: 1200.0,
            loss_low: 0.02,
            loss_high: 0.10,
            loss_min_packets: 20,
            min_rate: 150e3,
            max_rate: 1.5e6,
            start_rate: 150e3,
            pacing_factor: 2.5,
        }
    }
}

/// §5.3's scalar Kalman filter of the delay gradient m(i) (ms).
#[derive(Clone, Debug, PartialEq)]
pub struct Kalman {
    /// m_hat: the estimate (ms).
    pub m_hat: f64,
    /// var_v_hat: the measurement-noise variance estimate (ms²).
    pub var_v: f64,
    /// P: the estimate's error variance (ms²).
    pub p: f64,
}

impl Kalman {
    /// A filter at m = 0.
    pub fn new(c: &GccConfig) -> Kalman {
        Kalman {
            m_hat: 0.0,
            var_v: c.var_v_initial,
            p: c.p_initial,
        }
    }

    /// One update with measurement `d_ms` and the highest group rate `f_max` (groups per ms):
    /// `z = d − m_hat`; `alpha = (1 − chi)^(30 / (1000 · f_max))`;
    /// `var_v = max(alpha · var_v + (1 − alpha) · z², 1)` with z clamped to 3·sqrt(var_v) for
    /// this update; `k = (P + q) / (var_v + P + q)`; `m_hat += k · z`; `P = (1 − k)(P + q)`.
    pub fn update(&mut self, d_ms: f64, f_max: f64, c: &GccConfig) -> f64 {
        let z = d_ms - self.m_hat;
        let alpha = (1.0 - c.chi).powf(30.0 / (1000.0 * f_max.max(1e-3)));
        let bound = 3.0 * self.var_v.sqrt();
        let zc = z.clamp(-bound, bound);
        self.var_v = (alpha * self.var_v + (1.0 - alpha) * zc * zc).max(1.0);
        let k = (self.p + c.q) / (self.var_v + self.p + c.q);
        self.m_hat += k * z;
        self.p = (1.0 - k) * (self.p + c.q);
        self.m_hat
    }
}

/// The over-use detector's signal (§5.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// m below −del_var_th.
    Underuse,
    /// Between.
    Normal,
    /// m above del_var_th for overuse_time_th and not falling.
    Overuse,
}

/// §5.4's detector with its adaptive threshold.
#[derive(Clone, Debug, PartialEq)]
pub struct Detector {
    /// del_var_th (ms).
    pub threshold: f64,
    over_since: Option<Time>,
    prev_m: f64,
    last: Option<Time>,
    deltas: u32,
    /// The last signal.
    pub signal: Signal,
}

impl Detector {
    /// A detector at the initial threshold.
    pub fn new(c: &GccConfig) -> Detector {
        Detector {
            threshold: c.threshold_initial_ms,
            over_since: None,
            prev_m: 0.0,
            last: None,
            deltas: 0,
            signal: Signal::Normal,
        }
    }

    /// Compares the (scaled, see [`GccConfig::gradient_scale_cap`]) gradient `m_hat` (ms) at
    /// `now` and then adapts the threshold:
    /// `del_var_th += Δt · K · (|m| − del_var_th)`, K = K_d below the threshold and K_u above,
    /// skipped when |m| − del_var_th > 15 ms, clamped to [6, 600] ms.
    pub fn update(&mut self, now: Time, m_hat: f64, c: &GccConfig) -> Signal {
        self.deltas = self.deltas.saturating_add(1);
        let m = m_hat * f64::from(self.deltas.min(c.gradient_scale_cap.max(1)));
        self.signal = if m > self.threshold {
            let since = *self.over_since.get_or_insert(now);
            if now.since(since) >= c.overuse_time_th && m >= self.prev_m {
                Signal::Overuse
            } else {
                Signal::Normal
            }
        } else {
            self.over_since = None;
            if m < -self.threshold {
                Signal::Underuse
            } else {
                Signal::Normal
            }
        };
        let dt_ms = self
            .last
            .map_or(0.0, |t| now.since(t).as_secs_f64() * 1e3)
            .min(c.threshold_max_step_ms);
        self.last = Some(now);
        if m.abs() - self.threshold <= c.threshold_skip_ms {
            let k = if m.abs() < self.threshold {
                c.k_d
            } else {
                c.k_u
            };
            self.threshold += dt_ms * k * (m.abs() - self.threshold);
            self.threshold = self.threshold.clamp(c.threshold_min_ms, c.threshold_max_ms);
        }
        self.prev_m = m;
        self.signal
    }
}

/// The rate controller's state (§5.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateState {
    /// Hold.
    Hold,
    /// Increase.
    Increase,
    /// Decrease.
    Decrease,
}

/// §5.5's transition table: the state after `state` sees `signal`.
pub fn next_state(state: RateState, signal: Signal) -> RateState {
    match (signal, state) {
        (Signal::Overuse, _) => RateState::Decrease,
        (Signal::Normal, RateState::Hold | RateState::Increase) => RateState::Increase,
        (Signal::Normal, RateState::Decrease) => RateState::Hold,
        (Signal::Underuse, _) => RateState::Hold,
    }
}

/// §6: the loss-based estimate after a report of loss fraction `p`.
pub fn loss_based_update(as_hat: f64, p: f64, c: &GccConfig) -> f64 {
    if p > c.loss_high {
        as_hat * (1.0 - 0.5 * p)
    } else if p < c.loss_low {
        1.05 * as_hat
    } else {
        as_hat
    }
}

/// Weight of a new sample in the average (and variance) of the received rate at decreases.
/// The draft keeps an average without fixing its filter; this is libwebrtc's weight.
const AVG_MAX_WEIGHT: f64 = 0.05;

/// Standard deviation of the rate at decreases, at least 10 % of their mean: after one
/// decrease the variance is zero and any higher rate would count as a new congestion level
/// (the draft gives no initial variance; this floor is this implementation's).
fn sigma(mean: f64, var: f64) -> f64 {
    var.sqrt().max(0.1 * mean)
}

#[derive(Clone, Copy, Debug)]
struct Group {
    first_sent: Time,
    last_sent: Time,
    last_arrival: i64,
    size: u64,
}

/// The GCC sender.
#[derive(Clone, Debug)]
pub struct Gcc {
    c: GccConfig,
    history: SentHistory,
    current: Option<Group>,
    prev: Option<Group>,
    group_rates: VecDeque<f64>,
    kalman: Kalman,
    detector: Detector,
    state: RateState,
    a_hat: f64,
    as_hat: f64,
    last_rate_update: Option<Time>,
    arrivals: VecDeque<(i64, u32)>,
    r_hat: f64,
    avg_max: Option<(f64, f64)>,
    rtt: Option<Duration>,
    loss_count: (u64, u64),
    deltas: u64,
}

impl Gcc {
    /// A sender at `start_rate`.
    pub fn new(c: GccConfig) -> Gcc {
        Gcc {
            kalman: Kalman::new(&c),
            detector: Detector::new(&c),
            a_hat: c.start_rate,
            as_hat: c.start_rate,
            c,
            history: SentHistory::new(),
            current: None,
            prev: None,
            group_rates: VecDeque::new(),
            state: RateState::Increase,
            last_rate_update: None,
            arrivals: VecDeque::new(),
            r_hat: 0.0,
            avg_max: None,
            rtt: None,
            loss_count: (0, 0),
            deltas: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &GccConfig {
        &self.c
    }

    /// A media packet (with transport-wide sequence number `seq`) left.
    pub fn on_packet_sent(&mut self, now: Time, seq: u64, size: u32) {
        let dropped = self.history.on_sent(now, seq, size);
        self.loss_count.1 += dropped.len() as u64;
    }

    /// A transport-wide feedback message arrived at `now`.
    pub fn on_feedback(&mut self, now: Time, fb: &TwccFeedback) {
        let d = self.history.digest_twcc(now, fb);
        if let Some(rtt) = d.rtt {
            self.rtt = Some(rtt);
        }
        let mut received: Vec<&Resolved> =
            d.packets.iter().filter(|p| p.arrival.is_some()).collect();
        self.loss_count.0 += received.len() as u64;
        self.loss_count.1 += (d.packets.len() - received.len()) as u64;
        received.sort_by_key(|p| p.seq);
        for p in received {
            self.on_arrival(p);
        }
        // §6: one loss-based update per report, over at least loss_min_packets packets.
        let (got, lost) = self.loss_count;
        if got + lost >= self.c.loss_min_packets {
            let p = lost as f64 / (got + lost) as f64;
            self.as_hat = loss_based_update(self.as_hat, p, &self.c);
            self.loss_count = (0, 0);
        }
        // §5.5: the rate controller acts once per feedback on the detector's latest signal
        // (the additive step's `max(1000, ...)` is per update, so per-group updates would
        // multiply it by the group rate).
        if self.prev.is_some() {
            self.state = next_state(self.state, self.detector.signal);
        }
        self.update_rate(now);
    }

    fn on_arrival(&mut self, p: &Resolved) {
        let arrival = p.arrival.unwrap_or(0);
        self.arrivals.push_back((arrival, p.size));
        let window = self.c.rate_window.as_nanos() as i64;
        while self
            .arrivals
            .front()
            .is_some_and(|&(t, _)| t <= arrival - window)
        {
            self.arrivals.pop_front();
        }
        let bytes: u64 = self.arrivals.iter().map(|&(_, s)| u64::from(s)).sum();
        self.r_hat = bytes as f64 * 8.0 / self.c.rate_window.as_secs_f64();

        let burst = self.c.burst_time;
        match &mut self.current {
            None => {
                self.current = Some(Group {
                    first_sent: p.sent,
                    last_sent: p.sent,
                    last_arrival: arrival,
                    size: u64::from(p.size),
                });
            }
            Some(g) => {
                let in_burst = p.sent.since(g.first_sent) <= burst;
                // §5.2: a packet arriving within burst_time of the previous one, with a negative
                // delay variation, belongs to the same group (the path delivered a burst).
                let arrival_gap = arrival - g.last_arrival;
                let send_gap = p.sent.since(g.last_sent).as_nanos() as i64;
                let bursty = arrival_gap <= burst.as_nanos() as i64 && arrival_gap - send_gap < 0;
                if in_burst || bursty {
                    if p.sent > g.last_sent {
                        g.last_sent = p.sent;
                    }
                    g.last_arrival = g.last_arrival.max(arrival);
                    g.size += u64::from(p.size);
                } else {
                    let done = *g;
                    *g = Group {
                        first_sent: p.sent,
                        last_sent: p.sent,
                        last_arrival: arrival,
                        size: u64::from(p.size),
                    };
                    self.group_complete(done);
                }
            }
        }
    }

    fn group_complete(&mut self, g: Group) {
        if let Some(prev) = self.prev {
            let dep = g.last_sent.as_nanos() as i64 - prev.last_sent.as_nanos() as i64;
            let arr = g.last_arrival - prev.last_arrival;
            let d_ms = (arr - dep) as f64 * 1e-6;
            if dep > 0 {
                // Groups per millisecond: §5.3's `30 / (1000 · f_max)` is 0.03 × the group
                // period in ms (libwebrtc's `ts_delta · 30 / 1000`), about 0.3 at 100 groups/s.
                // In groups per second the exponent was 1000 times smaller and var_v stayed at
                // its initial 50 ms², so m_hat trailed the delay (docs/media.md, "Cross-check").
                self.group_rates.push_back(1e6 / dep as f64);
                if self.group_rates.len() > self.c.f_max_groups {
                    self.group_rates.pop_front();
                }
            }
            let f_max = self.group_rates.iter().copied().fold(0.0, f64::max);
            let m = self.kalman.update(d_ms, f_max, &self.c);
            // §5.4 runs the detector at each group's arrival, in the receiver's clock: its
            // overuse_time_th and the threshold's time step are arrival-time spans. The
            // feedback's arrival (`now`) would lump a report's groups into one instant: the
            // first group's step spans the whole report interval (K_u · 100 ms = 1 snaps the
            // threshold onto |m|) and the rest have none, so over-use is never sustained
            // under frame-burst noise (lab/tests/media_rmcat.rs: a 242-ms standing queue).
            let at = Time::from_nanos(u64::try_from(g.last_arrival).unwrap_or(0));
            self.detector.update(at, m, &self.c);
            self.deltas += 1;
        }
        self.prev = Some(g);
    }

    /// §5.5: moves A_hat according to the state.
    fn update_rate(&mut self, now: Time) {
        let c = &self.c;
        let dt = self
            .last_rate_update
            .map_or(Duration::ZERO, |t| now.since(t));
        self.last_rate_update = Some(now);
        match self.state {
            RateState::Increase => {
                // Near convergence while the rates seen at decreases are remembered; a received
                // rate above their mean by three standard deviations means the congestion level
                // changed: forget them and increase multiplicatively again.
                if let Some((mean, var)) = self.avg_max {
                    if self.r_hat > mean + 3.0 * sigma(mean, var) {
                        self.avg_max = None;
                    }
                }
                let near = self.avg_max.is_some();
                if near {
                    let rtt_ms = self.rtt.map_or(100.0, |r| r.as_secs_f64() * 1e3);
                    let response_time_ms = 100.0 + rtt_ms;
                    let alpha = 0.5 * (dt.as_secs_f64() * 1e3 / response_time_ms).min(1.0);
                    let bits_per_frame = self.a_hat / c.fps;
                    let packets_per_frame = (bits_per_frame / (c.max_packet_bytes * 8.0))
                        .ceil()
                        .max(1.0);
                    let avg_packet_bits = bits_per_frame / packets_per_frame;
                    self.a_hat += (alpha * avg_packet_bits).max(1000.0);
                } else {
                    self.a_hat *= c.eta.powf(dt.as_secs_f64().min(1.0));
                }
            }
            RateState::Decrease => {
                if self.r_hat > 0.0 {
                    // Track the rates at decreases: mean and variance, smoothed (§5.5).
                    self.avg_max = Some(match self.avg_max {
                        None => (self.r_hat, 0.0),
                        Some((mean, var)) => {
                            let mean2 = (1.0 - AVG_MAX_WEIGHT) * mean + AVG_MAX_WEIGHT * self.r_hat;
                            let var2 = (1.0 - AVG_MAX_WEIGHT) * var
                                + AVG_MAX_WEIGHT * (self.r_hat - mean2).powi(2);
                            (mean2, var2)
                        }
                    });
                    self.a_hat = c.beta * self.r_hat;
                }
                self.state = RateState::Hold;
            }
            RateState::Hold => {}
        }
        if self.r_hat > 0.0 {
            self.a_hat = self.a_hat.min(1.5 * self.r_hat);
        }
        self.a_hat = self.a_hat.clamp(c.min_rate, c.max_rate);
        self.as_hat = self.as_hat.clamp(c.min_rate, c.max_rate);
    }

    /// The target rate: the smaller of the delay-based and loss-based estimates (§6).
    pub fn target_rate(&self) -> f64 {
        self.a_hat.min(self.as_hat)
    }

    /// The pacing rate.
    pub fn pacing_rate(&self) -> f64 {
        self.target_rate() * self.c.pacing_factor
    }

    /// Bytes in flight.
    pub fn in_flight_bytes(&self) -> u64 {
        self.history.in_flight_bytes()
    }

    /// The latest round-trip sample (from the feedback of the newest packet reported).
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt
    }

    /// A snapshot of GCC's state.
    pub fn state(&self) -> GccState {
        GccState {
            m_hat: self.kalman.m_hat,
            threshold: self.detector.threshold,
            signal: self.detector.signal,
            rate_state: self.state,
            a_hat: self.a_hat,
            as_hat: self.as_hat,
            r_hat: self.r_hat,
            deltas: self.deltas,
            var_v: self.kalman.var_v,
        }
    }
}

/// A snapshot of GCC's state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GccState {
    /// Delay-gradient estimate m_hat (ms).
    pub m_hat: f64,
    /// Over-use threshold (ms).
    pub threshold: f64,
    /// Last detector signal.
    pub signal: Signal,
    /// Rate controller state.
    pub rate_state: RateState,
    /// Delay-based estimate A_hat (bit/s).
    pub a_hat: f64,
    /// Loss-based estimate As_hat (bit/s).
    pub as_hat: f64,
    /// Received rate R_hat (bit/s).
    pub r_hat: f64,
    /// Inter-group delay variations measured so far.
    pub deltas: u64,
    /// The Kalman filter's measurement-noise variance estimate var_v_hat (ms²).
    pub var_v: f64,
}
