//! SCReAM, Self-Clocked Rate Adaptation for Multimedia, version 1 (RFC 8298).
//!
//! Version 1 because it is the published RFC and the one RFC 8867's evaluations and ns-3/OpenWebRTC
//! results of the RMCAT era used; SCReAMv2 (draft-johansson-ccwg-rfc8298bis) is still a draft
//! that replaces the delay rule with L4S-style virtual marking and would be a second variant.
//!
//! Two loops, restated in `docs/rfc8298-conformance.md` with the test of each:
//!
//! - **Network congestion control** (§4.1.2): a congestion window in bytes, grown by the bytes
//!   acknowledged while in fast increase, then LEDBAT-like by `GAIN · off_target · acked · MSS /
//!   cwnd` with `off_target = (qdelay_target − qdelay) / qdelay_target`; cut by BETA_LOSS
//!   (loss) or BETA_ECN (CE) at most once per smoothed RTT; capped at
//!   MAX_BYTES_IN_FLIGHT_HEAD_ROOM × the most bytes in flight over 5 s; never under MIN_CWND.
//!   Fast increase ends when the queuing-delay trend reaches QDELAY_TREND_TH and resumes after
//!   T_RESUME_FAST_INCREASE below QDELAY_TREND_LO. `qdelay_target` rises towards
//!   QDELAY_TARGET_HI when the delay's statistics say a loss-based flow shares the bottleneck.
//!   The send window is `cwnd + MSS − bytes_in_flight` while `qdelay ≤ qdelay_target`, else
//!   `cwnd − bytes_in_flight`; packets are paced at `max(RATE_PACE_MIN, cwnd · 8 / s_rtt)`.
//! - **Media rate control** (§4.1.3): every RATE_ADJUST_INTERVAL, the encoder's target bitrate
//!   ramps by RAMP_UP_SPEED in fast increase, otherwise follows the measured throughput less
//!   the RTP queue; cut by BETA_R on loss at once.

use crate::feedback::CcfbReport;
use crate::history::SentHistory;
use crate::time::Time;
use core::time::Duration;
use std::collections::VecDeque;

/// SCReAM's constants (RFC 8298 §4.1.1.1 and §4.1.3); [`ScreamConfig::rfc8298`] gives the RFC's
/// recommended values.
#[derive(Clone, Debug, PartialEq)]
pub struct ScreamConfig {
    /// QDELAY_TARGET_LO: the queuing delay target's floor.
    pub qdelay_target_lo: Duration,
    /// QDELAY_TARGET_HI: the highest target competing-flow compensation may set.
    pub qdelay_target_hi: Duration,
    /// QDELAY_WEIGHT: EWMA weight of the queuing-delay fraction.
    pub qdelay_weight: f64,
    /// QDELAY_TREND_TH: trend that ends fast increase.
    pub qdelay_trend_th: f64,
    /// QDELAY_TREND_LO: trend below which fast increase may resume.
    pub qdelay_trend_lo: f64,
    /// T_RESUME_FAST_INCREASE: how long the trend must stay low to resume fast increase.
    pub t_resume_fast_increase: Duration,
    /// MIN_CWND (bytes).
    pub min_cwnd: f64,
    /// MAX_BYTES_IN_FLIGHT_HEAD_ROOM.
    pub max_bytes_in_flight_head_room: f64,
    /// GAIN of the window update.
    pub gain: f64,
    /// BETA_LOSS: window factor on a loss event.
    pub beta_loss: f64,
    /// BETA_ECN: window (and target bitrate) factor on an ECN-CE event.
    pub beta_ecn: f64,
    /// BETA_R: target bitrate factor on a loss event.
    pub beta_r: f64,
    /// MSS (bytes): the largest RTP packet.
    pub mss: f64,
    /// RATE_ADJUST_INTERVAL.
    pub rate_adjust_interval: Duration,
    /// TARGET_BITRATE_MIN (bit/s).
    pub target_bitrate_min: f64,
    /// TARGET_BITRATE_MAX (bit/s).
    pub target_bitrate_max: f64,
    /// RAMP_UP_SPEED (bit/s per second).
    pub ramp_up_speed: f64,
    /// PRE_CONGESTION_GUARD (0–0.2).
    pub pre_congestion_guard: f64,
    /// TX_QUEUE_SIZE_FACTOR (0–2).
    pub tx_queue_size_factor: f64,
    /// RTP_QDELAY_TH: RTP queue delay above which the target is scaled down.
    pub rtp_qdelay_th: Duration,
    /// TARGET_RATE_SCALE_RTP_QDELAY.
    pub target_rate_scale_rtp_qdelay: f64,
    /// RATE_PACE_MIN (bit/s).
    pub rate_pace_min: f64,
    /// Whether competing-flow compensation adjusts `qdelay_target` (RFC 8298 §4.1.2.3 allows
    /// turning it off; on by default, as for the Internet).
    pub competing_flows_compensation: bool,
}

impl ScreamConfig {
    /// RFC 8298's values; the target bitrate range is the application's (here RFC 8867's
    /// 150 kbit/s – 1.5 Mbit/s default, as NADA's).
    pub fn rfc8298() -> ScreamConfig {
        ScreamConfig {
            qdelay_target_lo: Duration::from_millis(100),
            qdelay_target_hi: Duration::from_millis(400),
            qdelay_weight: 0.1,
            qdelay_trend_th: 0.2,
            qdelay_trend_lo: 0.2,
            t_resume_fast_increase: Duration::from_secs(5),
            min_cwnd: 3000.0,
            max_bytes_in_flight_head_room: 1.1,
            gain: 1.0,
            beta_loss: 0.8,
            beta_ecn: 0.8,
            beta_r: 0.9,
            mss: 1000.0,
            rate_adjust_interval: Duration::from_millis(200),
            target_bitrate_min: 150e3,
            target_bitrate_max: 1.5e6,
            ramp_up_speed: 200e3,
            pre_congestion_guard: 0.1,
            tx_queue_size_factor: 1.0,
            rtp_qdelay_th: Duration::from_millis(20),
            target_rate_scale_rtp_qdelay: 0.95,
            rate_pace_min: 50e3,
            competing_flows_compensation: true,
        }
    }
}

/// How often the delay-trend histories take a sample (RFC 8298 §4.1.2.1: the fraction history
/// holds 20 samples over one second).
pub const HIST_INTERVAL: Duration = Duration::from_millis(50);
const FRACTION_HIST: usize = 20;
const NORM_HIST_VAR: usize = 200;
const NORM_HIST_AVG: usize = 50;
const MAX_BIF_WINDOW: Duration = Duration::from_secs(5);
/// The base delay is the minimum over ten one-minute buckets (RFC 6817's base-delay history,
/// which RFC 8298 §4.1.2 refers to).
const BASE_BUCKET: Duration = Duration::from_secs(60);
const BASE_BUCKETS: usize = 10;

/// The queuing-delay trend of RFC 8298 §4.1.2.1: the lag-one autocorrelation of the recent
/// fraction samples (how steadily the delay moves) times the averaged fraction, in [0, 1].
pub fn qdelay_trend(hist: &[f64], fraction_avg: f64) -> f64 {
    if hist.is_empty() {
        return 0.0;
    }
    let avg = hist.iter().sum::<f64>() / hist.len() as f64;
    let r0: f64 = hist.iter().map(|x| (x - avg) * (x - avg)).sum();
    let r1: f64 = hist.windows(2).map(|w| (w[0] - avg) * (w[1] - avg)).sum();
    if r0 <= 0.0 {
        return 0.0;
    }
    (r1 / r0 * fraction_avg).clamp(0.0, 1.0)
}

/// The SCReAM sender: network congestion control and media rate control of one stream.
#[derive(Clone, Debug)]
pub struct Scream {
    c: ScreamConfig,
    history: SentHistory,
    cwnd: f64,
    in_fast_increase: bool,
    qdelay: f64,
    qdelay_target: f64,
    qdelay_fraction_avg: f64,
    fraction_hist: VecDeque<f64>,
    norm_hist: VecDeque<f64>,
    qdelay_trend: f64,
    qdelay_trend_mem: f64,
    last_hist: Option<Time>,
    last_trend_above_lo: Time,
    base_buckets: VecDeque<(Time, i64)>,
    s_rtt: Option<f64>,
    last_congestion: Option<Time>,
    loss_event_rate: f64,
    loss_this_rtt: bool,
    last_rtt_tick: Time,
    bif_hist: VecDeque<(Time, u64)>,
    target_bitrate: f64,
    target_bitrate_last_max: f64,
    loss_pending: Option<f64>,
    rate_transmit: f64,
    rate_ack: f64,
    bytes_sent_interval: u64,
    bytes_acked_interval: u64,
    last_rate_adjust: Option<Time>,
    rtp_queue_bytes: u64,
    rtp_size: u32,
    media_bytes: u64,
    rate_media: f64,
    media_rates: VecDeque<f64>,
}

impl Scream {
    /// A sender at MIN_CWND, in fast increase, with the target bitrate at its minimum.
    pub fn new(c: ScreamConfig) -> Scream {
        Scream {
            cwnd: c.min_cwnd,
            in_fast_increase: true,
            qdelay: 0.0,
            qdelay_target: c.qdelay_target_lo.as_secs_f64(),
            qdelay_fraction_avg: 0.0,
            fraction_hist: VecDeque::new(),
            norm_hist: VecDeque::new(),
            qdelay_trend: 0.0,
            qdelay_trend_mem: 0.0,
            last_hist: None,
            last_trend_above_lo: Time::ZERO,
            base_buckets: VecDeque::new(),
            s_rtt: None,
            last_congestion: None,
            loss_event_rate: 0.0,
            loss_this_rtt: false,
            last_rtt_tick: Time::ZERO,
            bif_hist: VecDeque::new(),
            target_bitrate: c.target_bitrate_min,
            // No congestion yet: no last maximum to slow down near (scale 1).
            target_bitrate_last_max: f64::MIN_POSITIVE,
            loss_pending: None,
            rate_transmit: 0.0,
            rate_ack: 0.0,
            bytes_sent_interval: 0,
            bytes_acked_interval: 0,
            last_rate_adjust: None,
            rtp_queue_bytes: 0,
            rtp_size: 0,
            media_bytes: 0,
            rate_media: 0.0,
            media_rates: VecDeque::new(),
            history: SentHistory::new(),
            c,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ScreamConfig {
        &self.c
    }

    fn note_bif(&mut self, now: Time) {
        let bif = self.history.in_flight_bytes();
        self.bif_hist.push_back((now, bif));
        while self
            .bif_hist
            .front()
            .is_some_and(|&(t, _)| now.since(t) > MAX_BIF_WINDOW)
        {
            self.bif_hist.pop_front();
        }
    }

    fn max_bytes_in_flight(&self) -> f64 {
        self.bif_hist.iter().map(|&(_, b)| b).max().unwrap_or(0) as f64
    }

    /// The RTP queue (encoded bytes waiting to be sent) now holds `bytes`.
    pub fn set_rtp_queue_bytes(&mut self, bytes: u64) {
        self.rtp_queue_bytes = bytes;
    }

    /// The encoder produced a frame of `bytes` (measures `rate_media`, §4.1.3).
    pub fn on_media_frame(&mut self, bytes: u64) {
        self.media_bytes += bytes;
    }

    /// Whether a packet of `size` bytes may be sent now (§4.1.2.5's send window).
    pub fn can_send(&self, size: u32) -> bool {
        let bif = self.history.in_flight_bytes() as f64;
        let slack = if self.qdelay <= self.qdelay_target {
            self.c.mss
        } else {
            0.0
        };
        self.cwnd + slack - bif >= f64::from(size)
    }

    /// The pacing rate (§4.1.2.6): `max(RATE_PACE_MIN, cwnd · 8 / s_rtt)`.
    pub fn pacing_rate(&self) -> f64 {
        match self.s_rtt {
            Some(s) if s > 0.0 => self.c.rate_pace_min.max(self.cwnd * 8.0 / s),
            _ => f64::INFINITY,
        }
    }

    /// The gap after sending the last packet before the next may leave (`t_pace`).
    pub fn t_pace(&self) -> Duration {
        let r = self.pacing_rate();
        if r.is_finite() {
            Duration::from_secs_f64(f64::from(self.rtp_size) * 8.0 / r)
        } else {
            Duration::ZERO
        }
    }

    /// A media packet left.
    pub fn on_packet_sent(&mut self, now: Time, seq: u64, size: u32) {
        let dropped = self.history.on_sent(now, seq, size);
        self.rtp_size = size;
        self.bytes_sent_interval += u64::from(size);
        if !dropped.is_empty() {
            self.on_congestion(now, true);
        }
        self.note_bif(now);
        self.last_rate_adjust.get_or_insert(now);
    }

    /// When the media rate control next runs.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.last_rate_adjust
            .map(|t| t.saturating_add(self.c.rate_adjust_interval))
    }

    /// Runs the media rate control if it is due.
    pub fn on_timeout(&mut self, now: Time) {
        if self.poll_timeout().is_some_and(|due| now >= due) {
            self.adjust_rate(now);
        }
    }

    /// An RFC 8888 report arrived at `now`.
    pub fn on_feedback(&mut self, now: Time, report: &CcfbReport) {
        let d = self.history.digest_ccfb(now, report);
        if let Some(rtt) = d.rtt {
            let r = rtt.as_secs_f64();
            // RFC 6298's smoothing, as §4.1.1.2 says of s_rtt.
            self.s_rtt = Some(match self.s_rtt {
                None => r,
                Some(s) => 0.875 * s + 0.125 * r,
            });
        }
        let newly_acked: u64 = d.packets.iter().map(|p| u64::from(p.size)).sum();
        self.bytes_acked_interval += d
            .packets
            .iter()
            .filter(|p| p.arrival.is_some())
            .map(|p| u64::from(p.size))
            .sum::<u64>();
        // One queuing-delay sample per feedback, from its newest received packet (§4.1.2).
        if let Some(p) = d.packets.iter().rev().find(|p| p.arrival.is_some()) {
            let owd = p.arrival.unwrap_or(0) - p.sent.as_nanos() as i64;
            let base = self.update_base(now, owd);
            self.qdelay = (owd - base) as f64 * 1e-9;
        }
        let lost = d.packets.iter().any(|p| p.arrival.is_none());
        let ce = d.packets.iter().any(|p| p.ce);
        self.update_histories(now);
        if lost || ce {
            self.on_congestion(now, lost);
        } else if newly_acked > 0 {
            self.update_cwnd(newly_acked as f64);
        }
        self.tick_loss_rate(now);
        self.note_bif(now);
        // Resume fast increase after T_RESUME_FAST_INCREASE of low trend (§4.1.2.7).
        if !self.in_fast_increase
            && now.since(self.last_trend_above_lo) >= self.c.t_resume_fast_increase
        {
            self.in_fast_increase = true;
        }
        self.on_timeout(now);
    }

    fn update_base(&mut self, now: Time, owd: i64) -> i64 {
        match self.base_buckets.back_mut() {
            Some((start, min)) if now.since(*start) < BASE_BUCKET => *min = (*min).min(owd),
            _ => {
                self.base_buckets.push_back((now, owd));
                if self.base_buckets.len() > BASE_BUCKETS {
                    self.base_buckets.pop_front();
                }
            }
        }
        self.base_buckets
            .iter()
            .map(|&(_, m)| m)
            .min()
            .unwrap_or(owd)
    }

    fn update_histories(&mut self, now: Time) {
        if self.last_hist.is_some_and(|t| now.since(t) < HIST_INTERVAL) {
            return;
        }
        self.last_hist = Some(now);
        let fraction = self.qdelay / self.qdelay_target;
        let w = self.c.qdelay_weight;
        self.qdelay_fraction_avg = (1.0 - w) * self.qdelay_fraction_avg + w * fraction;
        push_bounded(&mut self.fraction_hist, fraction, FRACTION_HIST);
        let hist: Vec<f64> = self.fraction_hist.iter().copied().collect();
        self.qdelay_trend = qdelay_trend(&hist, self.qdelay_fraction_avg);
        self.qdelay_trend_mem = (0.99 * self.qdelay_trend_mem).max(self.qdelay_trend);
        if self.qdelay_trend > self.c.qdelay_trend_lo {
            self.last_trend_above_lo = now;
        }
        if self.c.competing_flows_compensation {
            self.adjust_qdelay_target();
        }
    }

    /// §4.1.2.3: a steady queue (low variance) or recurring losses suggest a loss-based flow
    /// shares the bottleneck; raise the target to what the queue holds, else let it fall back.
    fn adjust_qdelay_target(&mut self) {
        let lo = self.c.qdelay_target_lo.as_secs_f64();
        push_bounded(&mut self.norm_hist, self.qdelay / lo, NORM_HIST_VAR);
        let all: Vec<f64> = self.norm_hist.iter().copied().collect();
        let recent = &all[all.len().saturating_sub(NORM_HIST_AVG)..];
        let mean_all = all.iter().sum::<f64>() / all.len() as f64;
        let var = all.iter().map(|x| (x - mean_all).powi(2)).sum::<f64>() / all.len() as f64;
        let avg = recent.iter().sum::<f64>() / recent.len() as f64;
        let new_target = (avg + var.sqrt()) * lo;
        let t = &mut self.qdelay_target;
        if self.loss_event_rate > 0.002 {
            *t = 1.5 * new_target;
        } else if var < 0.2 {
            *t = new_target;
        } else if new_target < lo {
            *t = (*t * 0.5).max(new_target);
        } else {
            *t *= 0.9;
        }
        *t = t.clamp(lo, self.c.qdelay_target_hi.as_secs_f64());
    }

    /// A loss (`lost`) or ECN-CE event.
    fn on_congestion(&mut self, now: Time, lost: bool) {
        if lost {
            self.loss_this_rtt = true;
        }
        let s_rtt = Duration::from_secs_f64(self.s_rtt.unwrap_or(0.0));
        if self.last_congestion.is_some_and(|t| now.since(t) <= s_rtt) {
            return; // at most one reduction per smoothed RTT
        }
        self.last_congestion = Some(now);
        let beta = if lost {
            self.c.beta_loss
        } else {
            self.c.beta_ecn
        };
        self.cwnd = (self.cwnd * beta).max(self.c.min_cwnd);
        self.in_fast_increase = false;
        self.last_trend_above_lo = now;
        // §4.1.3: the target bitrate drops at once; the last maximum is where congestion began.
        self.target_bitrate_last_max = self.target_bitrate;
        self.loss_pending = Some(if lost { self.c.beta_r } else { self.c.beta_ecn });
        self.adjust_rate(now);
    }

    fn tick_loss_rate(&mut self, now: Time) {
        let s_rtt = Duration::from_secs_f64(self.s_rtt.unwrap_or(0.1));
        if now.since(self.last_rtt_tick) > s_rtt {
            // The fraction of RTTs with losses, smoothed (§4.1.2.3's loss_event_rate).
            self.loss_event_rate = if self.loss_this_rtt {
                0.99 * self.loss_event_rate + 0.01
            } else {
                0.99 * self.loss_event_rate
            };
            self.loss_this_rtt = false;
            self.last_rtt_tick = now;
        }
    }

    /// §4.1.2.4's update_cwnd.
    fn update_cwnd(&mut self, bytes_newly_acked: f64) {
        let bif = self.history.in_flight_bytes() as f64;
        if self.in_fast_increase {
            if self.qdelay_trend >= self.c.qdelay_trend_th {
                self.in_fast_increase = false;
            } else {
                if bif * 1.5 + bytes_newly_acked > self.cwnd {
                    self.cwnd += bytes_newly_acked;
                }
                return;
            }
        }
        let off_target = (self.qdelay_target - self.qdelay) / self.qdelay_target;
        let mut delta = self.c.gain * off_target * bytes_newly_acked * self.c.mss / self.cwnd;
        if off_target > 0.0 && bif * 1.25 + bytes_newly_acked <= self.cwnd {
            delta = 0.0; // the window is not used: do not grow it
        }
        self.cwnd += delta;
        self.cwnd = self
            .cwnd
            .min(self.max_bytes_in_flight() * self.c.max_bytes_in_flight_head_room)
            .max(self.c.min_cwnd);
    }

    /// §4.1.3's media rate control.
    fn adjust_rate(&mut self, now: Time) {
        let c = &self.c;
        if let Some(last) = self.last_rate_adjust {
            let secs = now.since(last).as_secs_f64();
            if secs > 0.0 {
                self.rate_transmit = self.bytes_sent_interval as f64 * 8.0 / secs;
                self.rate_ack = self.bytes_acked_interval as f64 * 8.0 / secs;
                self.rate_media = self.media_bytes as f64 * 8.0 / secs;
                if self.rate_media > 0.0 {
                    push_bounded(&mut self.media_rates, self.rate_media, 50);
                }
            }
        }
        self.last_rate_adjust = Some(now);
        self.bytes_sent_interval = 0;
        self.bytes_acked_interval = 0;
        self.media_bytes = 0;
        let current_rate = self.rate_transmit.max(self.rate_ack);
        if let Some(beta) = self.loss_pending.take() {
            self.target_bitrate = (beta * self.target_bitrate).max(c.target_bitrate_min);
            return;
        }
        let ramp_up_speed = c.ramp_up_speed.min(self.target_bitrate / 2.0);
        let interval = c.rate_adjust_interval.as_secs_f64();
        let scale = ((self.target_bitrate - self.target_bitrate_last_max)
            / self.target_bitrate_last_max
            * 4.0)
            .powi(2)
            .clamp(0.2, 1.0);
        let rtp_queue_bits = self.rtp_queue_bytes as f64 * 8.0;
        if self.in_fast_increase {
            self.target_bitrate += ramp_up_speed * interval * scale;
        } else {
            let mut delta = current_rate * (1.0 - c.pre_congestion_guard * self.qdelay_trend)
                - c.tx_queue_size_factor * rtp_queue_bits;
            // The pseudo-code's delta is the new rate less the RTP queue; as a change it is
            // measured from the current target.
            delta -= self.target_bitrate;
            if delta > 0.0 {
                delta = (delta * scale).min(ramp_up_speed * interval);
            }
            self.target_bitrate += delta;
            if current_rate > 0.0 && rtp_queue_bits / current_rate > c.rtp_qdelay_th.as_secs_f64() {
                self.target_bitrate *= c.target_rate_scale_rtp_qdelay;
            }
        }
        let median = median(&self.media_rates);
        let limit = current_rate.max(self.rate_media).max(median) * (2.0 - self.qdelay_trend_mem);
        if limit > 0.0 {
            self.target_bitrate = self.target_bitrate.min(limit);
        }
        self.target_bitrate = self
            .target_bitrate
            .clamp(c.target_bitrate_min, c.target_bitrate_max);
    }

    /// The encoder's target bitrate (bit/s).
    pub fn target_rate(&self) -> f64 {
        self.target_bitrate
    }

    /// The congestion window (bytes).
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Bytes in flight.
    pub fn in_flight_bytes(&self) -> u64 {
        self.history.in_flight_bytes()
    }

    /// A snapshot of the congestion state.
    pub fn state(&self) -> ScreamState {
        ScreamState {
            cwnd: self.cwnd,
            in_fast_increase: self.in_fast_increase,
            qdelay: self.qdelay,
            qdelay_target: self.qdelay_target,
            qdelay_trend: self.qdelay_trend,
            s_rtt: self.s_rtt,
            rate_transmit: self.rate_transmit,
            rate_ack: self.rate_ack,
        }
    }
}

fn push_bounded(q: &mut VecDeque<f64>, v: f64, cap: usize) {
    q.push_back(v);
    if q.len() > cap {
        q.pop_front();
    }
}

fn median(q: &VecDeque<f64>) -> f64 {
    if q.is_empty() {
        return 0.0;
    }
    let mut v: Vec<f64> = q.iter().copied().collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// A snapshot of SCReAM's state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScreamState {
    /// Congestion window (bytes).
    pub cwnd: f64,
    /// Fast increase mode.
    pub in_fast_increase: bool,
    /// Latest queuing delay (s).
    pub qdelay: f64,
    /// Queuing delay target (s).
    pub qdelay_target: f64,
    /// Queuing-delay trend in [0, 1].
    pub qdelay_trend: f64,
    /// Smoothed RTT (s).
    pub s_rtt: Option<f64>,
    /// Measured transmit rate (bit/s).
    pub rate_transmit: f64,
    /// Measured acknowledged rate (bit/s).
    pub rate_ack: f64,
}
