//! NADA, Network-Assisted Dynamic Adaptation (RFC 8698), sender-based.
//!
//! RFC 8698 puts the delay, loss and rate statistics at the receiver (§4.2) and the rate
//! calculation at the sender (§4.3); §5.1 lets the sender compute the receiver's statistics
//! itself from per-packet feedback, which is what this sender does with RFC 8888 reports. The
//! steps, restated in `docs/rfc8698-conformance.md` with the test of each:
//!
//! 1. Per packet: one-way delay `d_fwd`, its minimum `d_base`, queuing delay
//!    `d_queue = d_fwd - d_base`, through a 15-sample minimum filter (§4.2).
//! 2. Per update: loss and ECN-marking ratios over the last LOGWIN, smoothed by ALPHA; the
//!    queuing delay warped (Eq. 1) while the last loss is recent (within MULTILOSS average loss
//!    intervals); the aggregate congestion signal `x_curr` (Eq. 2); the receiving rate over
//!    LOGWIN; `rmode` = accelerated ramp-up when LOGWIN saw no loss, no mark and no queuing
//!    delay of QEPS or more (§4.2).
//! 3. The reference rate `r_ref`: accelerated ramp-up (Eqs. 3–4) or gradual update
//!    (Eqs. 5–7), clipped to [RMIN, RMAX] (§4.3).
//! 4. The encoder and sending rates from `r_ref` and the rate-shaping buffer (Eqs. 8–9, §4.3).

use crate::feedback::CcfbReport;
use crate::history::{Resolved, SentHistory};
use crate::lossint::LossIntervals;
use crate::time::{ms, Time};
use core::time::Duration;
use std::collections::VecDeque;

/// NADA's parameters; [`NadaConfig::rfc8698`] is the RFC's recommended set (RFC 8698 §6.3,
/// Figure 3). Delays in the RFC's equations are in milliseconds and kept so here.
#[derive(Clone, Debug, PartialEq)]
pub struct NadaConfig {
    /// PRIO: weight of the flow's priority.
    pub prio: f64,
    /// RMIN: lowest rate the encoder supports (bit/s).
    pub rmin: f64,
    /// RMAX: highest rate the encoder supports (bit/s).
    pub rmax: f64,
    /// XREF: reference congestion level (ms).
    pub xref_ms: f64,
    /// KAPPA: scaling of the gradual update.
    pub kappa: f64,
    /// ETA: scaling of the gradual update's derivative term.
    pub eta: f64,
    /// TAU: upper bound of RTT in the gradual update (ms).
    pub tau_ms: f64,
    /// DELTA: target feedback interval.
    pub delta: Duration,
    /// LOGWIN: window of the packet statistics.
    pub logwin: Duration,
    /// QEPS: queuing delay below which the path counts as empty (ms).
    pub qeps_ms: f64,
    /// DFILT: bound on the filtering delay (ms).
    pub dfilt_ms: f64,
    /// GAMMA_MAX: largest rate increase ratio of accelerated ramp-up.
    pub gamma_max: f64,
    /// QBOUND: bound on the queuing delay ramp-up may cause (ms).
    pub qbound_ms: f64,
    /// MULTILOSS: multiplier of the average loss interval after which a loss expires.
    pub multiloss: f64,
    /// QTH: queuing delay above which warping applies (ms).
    pub qth_ms: f64,
    /// LAMBDA: exponent scale of the warping.
    pub lambda: f64,
    /// PLRREF: reference loss ratio.
    pub plrref: f64,
    /// PMRREF: reference marking ratio.
    pub pmrref: f64,
    /// DLOSS: delay penalty at loss ratio PLRREF (ms).
    pub dloss_ms: f64,
    /// DMARK: delay penalty at marking ratio PMRREF (ms).
    pub dmark_ms: f64,
    /// FPS: the video's frame rate.
    pub fps: f64,
    /// BETA_S: rate-shaping buffer's weight on the sending rate.
    pub beta_s: f64,
    /// BETA_V: rate-shaping buffer's weight on the encoder rate.
    pub beta_v: f64,
    /// ALPHA: smoothing of the loss and marking ratios.
    pub alpha: f64,
    /// Taps of the minimum filter on queuing delay samples (§4.2 suggests 15).
    pub min_filter_taps: usize,
}

impl NadaConfig {
    /// RFC 8698 Figure 3.
    pub fn rfc8698() -> NadaConfig {
        NadaConfig {
            prio: 1.0,
            rmin: 150e3,
            rmax: 1.5e6,
            xref_ms: 10.0,
            kappa: 0.5,
            eta: 2.0,
            tau_ms: 500.0,
            delta: Duration::from_millis(100),
            logwin: Duration::from_millis(500),
            qeps_ms: 10.0,
            dfilt_ms: 120.0,
            gamma_max: 0.5,
            qbound_ms: 50.0,
            multiloss: 7.0,
            qth_ms: 50.0,
            lambda: 0.5,
            plrref: 0.01,
            pmrref: 0.01,
            dloss_ms: 10.0,
            dmark_ms: 2.0,
            fps: 30.0,
            beta_s: 0.1,
            beta_v: 0.1,
            alpha: 0.1,
            min_filter_taps: 15,
        }
    }
}

/// Eq. 1: the queuing delay as NADA counts it while losses are recent. Below QTH it is the
/// delay itself; above, it decays exponentially, so a standing loss-based queue stops looking
/// like ever more congestion (the loss penalty takes over).
pub fn warp_delay(d_queue_ms: f64, c: &NadaConfig) -> f64 {
    if d_queue_ms < c.qth_ms {
        d_queue_ms
    } else {
        c.qth_ms * (-c.lambda * (d_queue_ms - c.qth_ms) / c.qth_ms).exp()
    }
}

/// Eq. 2: aggregate congestion signal `x_curr` (ms) from the (possibly warped) queuing delay
/// and the smoothed marking and loss ratios.
pub fn aggregate_signal(d_tilde_ms: f64, p_mark: f64, p_loss: f64, c: &NadaConfig) -> f64 {
    d_tilde_ms + c.dmark_ms * (p_mark / c.pmrref).powi(2) + c.dloss_ms * (p_loss / c.plrref).powi(2)
}

/// Eq. 3: accelerated ramp-up's increase ratio for round-trip time `rtt_ms`.
pub fn ramp_up_gamma(rtt_ms: f64, c: &NadaConfig) -> f64 {
    c.gamma_max
        .min(c.qbound_ms / (rtt_ms + ms(c.delta) + c.dfilt_ms))
}

/// Eqs. 5–7: the gradual update of `r_ref` after `delta_ms` with congestion signals `x_curr`
/// and `x_prev` (ms); not clipped.
pub fn gradual_update(r_ref: f64, x_curr: f64, x_prev: f64, delta_ms: f64, c: &NadaConfig) -> f64 {
    let x_offset = x_curr - c.prio * c.xref_ms * c.rmax / r_ref;
    let x_diff = x_curr - x_prev;
    r_ref
        - c.kappa * (delta_ms / c.tau_ms) * (x_offset / c.tau_ms) * r_ref
        - c.kappa * c.eta * (x_diff / c.tau_ms) * r_ref
}

/// Eqs. 8–9: the encoder's target rate `r_vin` and the sending rate `r_send` from `r_ref` and
/// the rate-shaping buffer's occupancy in bytes.
pub fn shaped_rates(r_ref: f64, buffer_bytes: u64, c: &NadaConfig) -> (f64, f64) {
    let b = 8.0 * buffer_bytes as f64 * c.fps;
    (
        (r_ref - c.beta_v * b).max(c.rmin),
        (r_ref + c.beta_s * b).min(c.rmax),
    )
}

/// Which rule the last update used (`rmode` of RFC 8698 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RampMode {
    /// rmode = 0.
    AcceleratedRampUp,
    /// rmode = 1.
    GradualUpdate,
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    /// Receiver-clock time (ns): arrival, or the estimated arrival of a lost packet.
    at: i64,
    size: u32,
    lost: bool,
    marked: bool,
    dq_ms: f64,
}

/// The NADA sender.
#[derive(Clone, Debug)]
pub struct Nada {
    c: NadaConfig,
    history: SentHistory,
    d_base: Option<i64>,
    last_owd: i64,
    taps: VecDeque<f64>,
    window: VecDeque<Sample>,
    first_arrival: Option<i64>,
    losses: LossIntervals,
    p_loss: f64,
    p_mark: f64,
    d_queue_ms: f64,
    x_curr: f64,
    x_prev: f64,
    r_recv: f64,
    rtt: Option<Duration>,
    r_ref: f64,
    mode: RampMode,
    warping: bool,
    last_update: Option<Time>,
    buffer_bytes: u64,
}

impl Nada {
    /// A sender starting at `r_ref = RMIN` (§4.3).
    pub fn new(c: NadaConfig) -> Nada {
        Nada {
            r_ref: c.rmin,
            c,
            history: SentHistory::new(),
            d_base: None,
            last_owd: 0,
            taps: VecDeque::new(),
            window: VecDeque::new(),
            first_arrival: None,
            losses: LossIntervals::default(),
            p_loss: 0.0,
            p_mark: 0.0,
            d_queue_ms: 0.0,
            x_curr: 0.0,
            x_prev: 0.0,
            r_recv: 0.0,
            rtt: None,
            mode: RampMode::AcceleratedRampUp,
            warping: false,
            last_update: None,
            buffer_bytes: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &NadaConfig {
        &self.c
    }

    /// A media packet left.
    pub fn on_packet_sent(&mut self, now: Time, seq: u64, size: u32) {
        let dropped = self.history.on_sent(now, seq, size);
        for p in dropped {
            self.record(&p);
        }
    }

    /// The rate-shaping buffer now holds `bytes` (RFC 8698 §4.3: encoded bytes waiting to be
    /// sent).
    pub fn set_buffer_bytes(&mut self, bytes: u64) {
        self.buffer_bytes = bytes;
    }

    fn record(&mut self, p: &Resolved) {
        match p.arrival {
            Some(arr) => {
                let owd = arr - p.sent.as_nanos() as i64;
                self.last_owd = owd;
                let base = *self.d_base.get_or_insert(owd);
                let base = base.min(owd);
                self.d_base = Some(base);
                let raw_ms = (owd - base) as f64 * 1e-6;
                self.taps.push_back(raw_ms);
                if self.taps.len() > self.c.min_filter_taps.max(1) {
                    self.taps.pop_front();
                }
                let dq = self.taps.iter().copied().fold(f64::INFINITY, f64::min);
                self.d_queue_ms = dq;
                self.first_arrival.get_or_insert(arr);
                self.losses.on_received();
                self.push(Sample {
                    at: arr,
                    size: p.size,
                    lost: false,
                    marked: p.ce,
                    dq_ms: dq,
                });
            }
            None => {
                self.losses.on_lost();
                let at = p.sent.as_nanos() as i64 + self.last_owd;
                self.push(Sample {
                    at,
                    size: p.size,
                    lost: true,
                    marked: false,
                    dq_ms: 0.0,
                });
            }
        }
    }

    fn push(&mut self, s: Sample) {
        // Samples arrive in sequence order; reordering can put one slightly out of time order,
        // which only delays its expiry.
        self.window.push_back(s);
    }

    /// An RFC 8888 report arrived at `now`: read it and update the rate (§4.3: the sender
    /// updates `r_ref` on every feedback).
    pub fn on_feedback(&mut self, now: Time, report: &CcfbReport) {
        let d = self.history.digest_ccfb(now, report);
        if let Some(rtt) = d.rtt {
            self.rtt = Some(rtt);
        }
        for p in &d.packets {
            self.record(p);
        }
        self.update(now);
    }

    fn update(&mut self, now: Time) {
        let c = &self.c;
        // LOGWIN statistics, ending at the newest arrival.
        let newest = self.window.iter().map(|s| s.at).max();
        if let Some(end) = newest {
            let start = end - c.logwin.as_nanos() as i64;
            while self.window.front().is_some_and(|s| s.at <= start) {
                self.window.pop_front();
            }
        }
        let (mut n, mut lost, mut marked, mut bytes, mut queued) = (0u64, 0u64, 0u64, 0u64, false);
        for s in &self.window {
            n += 1;
            if s.lost {
                lost += 1;
            } else {
                bytes += u64::from(s.size);
                marked += u64::from(s.marked);
                queued |= s.dq_ms >= c.qeps_ms;
            }
        }
        if n > 0 {
            let recv = n - lost;
            let inst_loss = lost as f64 / n as f64;
            let inst_mark = if recv > 0 {
                marked as f64 / recv as f64
            } else {
                0.0
            };
            self.p_loss = c.alpha * inst_loss + (1.0 - c.alpha) * self.p_loss;
            self.p_mark = c.alpha * inst_mark + (1.0 - c.alpha) * self.p_mark;
        }
        // Receiving rate over LOGWIN, or over the time since the first arrival when shorter.
        if let (Some(end), Some(first)) = (newest, self.first_arrival) {
            let span = (end - first).clamp(ms_to_ns(ms(c.delta)), c.logwin.as_nanos() as i64);
            self.r_recv = bytes as f64 * 8.0 / (span as f64 * 1e-9);
        }
        // Eq. 1 applies while the last loss is within MULTILOSS average loss intervals.
        self.warping = self
            .losses
            .average()
            .is_some_and(|avg| (self.losses.current as f64) < c.multiloss * avg);
        let d_tilde = if self.warping {
            warp_delay(self.d_queue_ms, c)
        } else {
            self.d_queue_ms
        };
        self.x_prev = self.x_curr;
        self.x_curr = aggregate_signal(d_tilde, self.p_mark, self.p_loss, c);
        self.mode = if lost == 0 && marked == 0 && !queued {
            RampMode::AcceleratedRampUp
        } else {
            RampMode::GradualUpdate
        };
        let delta_ms = match self.last_update {
            None => ms(c.delta),
            // A long feedback gap would swing the gradual update by delta/TAU; the bound is
            // this implementation's guard (RFC 8698 assumes feedback every DELTA).
            Some(t) => ms(now.since(t)).min(c.tau_ms),
        };
        self.last_update = Some(now);
        self.r_ref = match self.mode {
            RampMode::AcceleratedRampUp => {
                let rtt_ms = self.rtt.map_or(0.0, ms);
                let gamma = ramp_up_gamma(rtt_ms, c);
                self.r_ref.max((1.0 + gamma) * self.r_recv)
            }
            RampMode::GradualUpdate => {
                gradual_update(self.r_ref, self.x_curr, self.x_prev, delta_ms, c)
            }
        }
        .clamp(c.rmin, c.rmax);
    }

    /// The reference rate `r_ref` (bit/s).
    pub fn reference_rate(&self) -> f64 {
        self.r_ref
    }

    /// The encoder's target rate `r_vin` (Eq. 8).
    pub fn target_rate(&self) -> f64 {
        shaped_rates(self.r_ref, self.buffer_bytes, &self.c).0
    }

    /// The sending (pacing) rate `r_send` (Eq. 9).
    pub fn pacing_rate(&self) -> f64 {
        shaped_rates(self.r_ref, self.buffer_bytes, &self.c).1
    }

    /// Bytes in flight.
    pub fn in_flight_bytes(&self) -> u64 {
        self.history.in_flight_bytes()
    }

    /// The last update's state, for tests and traces.
    pub fn state(&self) -> NadaState {
        NadaState {
            d_queue_ms: self.d_queue_ms,
            x_curr: self.x_curr,
            x_prev: self.x_prev,
            p_loss: self.p_loss,
            p_mark: self.p_mark,
            r_recv: self.r_recv,
            mode: self.mode,
            warping: self.warping,
            rtt: self.rtt,
        }
    }
}

fn ms_to_ns(v: f64) -> i64 {
    (v * 1e6) as i64
}

/// A snapshot of NADA's congestion state after the last update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NadaState {
    /// Filtered queuing delay (ms).
    pub d_queue_ms: f64,
    /// Aggregate congestion signal (ms).
    pub x_curr: f64,
    /// The previous update's signal (ms).
    pub x_prev: f64,
    /// Smoothed loss ratio.
    pub p_loss: f64,
    /// Smoothed marking ratio.
    pub p_mark: f64,
    /// Receiving rate over LOGWIN (bit/s).
    pub r_recv: f64,
    /// The rule of the last update.
    pub mode: RampMode,
    /// Whether Eq. 1's warping applied.
    pub warping: bool,
    /// Latest round-trip sample.
    pub rtt: Option<Duration>,
}
