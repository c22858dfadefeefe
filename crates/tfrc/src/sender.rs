//! The TFRC sender (RFC 5348 §4, §8.2, §8.3), sans-IO.
//!
//! Inputs: [`Sender::on_feedback`], [`Sender::on_timeout`], and the application's data through
//! [`Sender::push_packets`] / [`Sender::set_infinite_backlog`]. Outputs:
//! [`Sender::poll_transmit`] (a header for the next packet, when one may leave now) and
//! [`Sender::poll_timeout`] (the next instant the sender needs to be woken).
//!
//! The sender holds no payloads: the application says how many segments are ready, and the
//! caller attaches a payload to each header it polls.
//!
//! One state machine serves every profile; where RFC 5348 and NS-2.35 differ, the branch is on
//! a [`SenderConfig`] policy value ([`RateControl`], [`Pacing`], …).

use core::time::Duration;

use crate::equation::Equation;
use crate::gaimd::{BacklogRule, GrowthCap, SimdState, VenoState};
use crate::packet::{DataHeader, Feedback};
use crate::profile::{
    ConfigError, HeaderRtt, InitialWindow, Ns2Rules, Oscillation, Pacing, RateControl, Restart,
    Rfc5348Rules, SenderConfig, StartRate, StartTimer,
};
use crate::rtt::{LinkErrorRto, LinkErrorSource, RttState, MIN_SAMPLE};
use crate::time::duration_from_secs_f64;
use crate::ttl::TtlState;
use crate::Time;

/// Largest allowed rate in bytes/s (about 9 Pb/s); keeps X finite through unbounded slow start.
pub const X_MAX: f64 = 1e15;

/// NS-2's `SMALLFLOAT`, the threshold of its rate comparisons.
const SMALLFLOAT: f64 = 1e-7;

/// How much data the application has ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backlog {
    /// Always data to send (an FTP-like bulk source; NS-2 `SndrType_` 0).
    Infinite,
    /// This many segments are waiting.
    Packets(u64),
}

/// A snapshot of the sender's state for reports and live status.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderStatus {
    /// Allowed sending rate X in bytes/s (NS-2 `rate_`).
    pub x: f64,
    /// The rate packets are actually paced at (X_inst of §4.5, or NS-2's ramp rate).
    pub x_inst: f64,
    /// The throughput equation's rate X_Bps for the current p, R and t_RTO (0 before p > 0 under
    /// RFC 5348).
    pub x_calc: f64,
    /// X_recv from the last feedback, bytes/s.
    pub x_recv: f64,
    /// The receive-rate limit in force: RFC 5348's recv_limit = 2·max(X_recv_set) (`None` while
    /// X_recv_set still holds its initial Infinity), or NS-2's `maxrate_` = 2·X_recv (`None`
    /// while it is 0, i.e. unset).
    pub recv_limit: Option<f64>,
    /// Loss event rate p from the last feedback.
    pub p: f64,
    /// Smoothed RTT R, once measured.
    pub rtt: Option<Duration>,
    /// t_RTO used in the equation.
    pub t_rto: Duration,
    /// In the initial slow start (RFC: p = 0; NS-2: state SLOW_START).
    pub slow_start: bool,
    /// Data packets sent.
    pub packets_sent: u64,
    /// Feedback packets processed.
    pub feedbacks: u64,
    /// Nofeedback timer expiries.
    pub nofeedback_expiries: u64,
    /// Time-exceeded notices received.
    pub ttl_exceeded: u64,
    /// The TTL the next data packet will carry (E5 changes it).
    pub ttl: u8,
    /// Data packets sent that the protection policy selected (E6).
    pub protected_sent: u64,
    /// Feedbacks that reported a link-error loss and so rescaled t_RTO (E2).
    pub link_error_rescales: u64,
    /// The Veno backlog estimate N in packets from the last feedback (V1/V3), once BaseRTT has
    /// enough samples.
    pub backlog: Option<f64>,
    /// Whether the last feedback judged losses random and so used the random-loss equation
    /// (V1/V3).
    pub random_losses: bool,
    /// When the nofeedback timer is armed to expire (`None` before the start and after
    /// [`Sender::stop`]). Under RFC 5348 rate control it is max(4R, 2s/X) after the last
    /// feedback or expiry, with the X that feedback or expiry left in force.
    pub nofeedback_at: Option<Time>,
    /// RTT samples refused as implausible (a feedback echoing a timestamp from the future, or
    /// reporting an elapsed time t_delay at least as long as the measured round trip; a
    /// handshake RTT of zero). `docs/tfrc-core.md` states the rule.
    pub rtt_samples_refused: u64,
    /// Faster Restart's X_fast_max after the last feedback (0 without Faster Restart): the
    /// rate up to which the sender may quadruple per RTT.
    pub x_fast_max: f64,
    /// j from the last feedback: packets lost per loss event (MulTFRC; 1 otherwise).
    pub lost_per_event: f64,
}

/// Faster Restart's state (draft-ietf-dccp-tfrc-faster-restart-06 §2).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct FasterRestart {
    /// X_active_recv: the receive rate reported during a recent loss-free period.
    x_active_recv: f64,
    /// T_active_recv: when X_active_recv was measured.
    t_active_recv: Time,
    /// X_fast_max: where quadrupling stops.
    x_fast_max: f64,
    /// The previous feedback reported a higher p than the one before it.
    prev_increase: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lifecycle {
    NotStarted,
    Running,
    Stopped,
}

/// NS-2's `rate_change_` state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ns2Phase {
    SlowStart,
    CongAvoid,
    RateDecrease,
    OutOfSlowStart,
}

#[derive(Clone, Debug, PartialEq)]
struct Ns2State {
    phase: Ns2Phase,
    ss_maxrate: f64,
    maxrate: f64,
    oldrate: f64,
    delta: f64,
    last_change: Time,
    datalimited: bool,
    /// Seconds since the epoch; 0 initially, exactly as NS-2's `lastlimited_` (`docs/tfrc-core.md`
    /// N14).
    lastlimited: f64,
    all_idle: bool,
    heavyrounds: u32,
}

/// Periods during which the application had data waiting, i.e. the sender was not
/// data-limited (RFC 5348 §4.3: "a sender [is] data-limited any time it is not sending as much
/// as it is allowed to send"). `None` as the end: still backlogged.
///
/// §8.2.1 gives "one possible implementation" that remembers two not-limited instants between
/// feedbacks; it misjudges a backlogged sender whenever a feedback covers an interval later
/// than those two instants (a lost or delayed feedback), and §8.2.1 notes that "the sender could
/// save more NotLimited times". Keeping the periods themselves answers the question exactly.
#[derive(Clone, Debug, Default, PartialEq)]
struct Backlogged {
    periods: std::collections::VecDeque<(Time, Option<Time>)>,
}

impl Backlogged {
    /// Record whether data is waiting at `now`.
    fn note(&mut self, now: Time, has_data: bool) {
        match self.periods.back_mut() {
            Some((_, end @ None)) if !has_data => *end = Some(now),
            Some((_, None)) => {}
            _ if has_data => self.periods.push_back((now, None)),
            _ => {}
        }
        // A few entries suffice: feedback covers about the last RTT.
        while self.periods.len() > 16 {
            self.periods.pop_front();
        }
    }

    /// Whether data was waiting for a positive length of time within (t_old, t_new].
    fn any_within(&self, t_old: Time, t_new: Time) -> bool {
        self.periods.iter().any(|&(start, end)| match end {
            None => start < t_new,
            Some(end) => end > start && start < t_new && end > t_old,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Pacer {
    /// §4.6: the nominal send time of the previous packet (None: the next goes at once).
    Nominal { last: Option<Time> },
    /// NS-2's send timer. `exact` is its expiry in seconds as NS-2's double-valued clock would
    /// hold it: successive gaps are added in floating point and only `at` is rounded to a
    /// nanosecond, so k gaps of R/k end exactly one R later, as they do in NS-2, instead of
    /// drifting by the rounding of each gap.
    Timer { at: Option<Time>, exact: f64 },
}

/// The TFRC sender.
#[derive(Clone, Debug, PartialEq)]
pub struct Sender {
    cfg: SenderConfig,
    s: f64,
    life: Lifecycle,
    backlog: Backlog,
    /// `backlog` is not empty; cached because the send path asks several times per packet.
    data: bool,
    next_seq: u64,
    /// Allowed rate X, bytes/s.
    x: f64,
    /// X_Bps for the current p (NS-2 `rcvrate`).
    x_calc: f64,
    p: f64,
    rtt: RttState,
    /// tld, the time X last doubled in slow start (§4.2).
    tld: Time,
    /// R was measured before the first feedback ([`Sender::on_handshake_rtt`]), so the first
    /// feedback is not "the first round-trip time measurement" of §4.2.
    handshake_rtt: bool,
    /// §4.3 X_recv_set: (X_recv, timestamp), at most `x_recv_set_len` entries.
    x_recv_set: Vec<(f64, Time)>,
    last_x_recv: f64,
    nfb_at: Option<Time>,
    /// Sent anything since the nofeedback timer was last set (§4.4's "idle" is the opposite).
    sent_since_nfb: bool,
    backlogged: Backlogged,
    round: u32,
    urgent: bool,
    ns2: Ns2State,
    pacer: Pacer,
    /// Packets owed at once (NS-2's immediate sends) and since when.
    immediate: u32,
    immediate_since: Time,
    ttl: TtlState,
    veno: VenoState,
    simd: SimdState,
    /// The feedback being processed reported a link-error loss (E2).
    link_error_fb: bool,
    packets_sent: u64,
    feedbacks: u64,
    nofeedback_expiries: u64,
    ttl_exceeded: u64,
    protected_sent: u64,
    link_error_rescales: u64,
    rtt_samples_refused: u64,
    /// What the last [`Sender::poll_transmit`] changed, so that [`Sender::on_send_refused`] can
    /// undo it (the host did not take the packet).
    last_emit: Option<Emitted>,
    /// When [`Sender::on_local_congestion`] last halved X (at most once per R).
    local_cut_at: Option<Time>,
    send_refusals: u64,
    local_congestion: u64,
    /// The s the equation uses: s, or TFRC-SP's nominal segment with its header correction.
    s_eq: f64,
    /// j from the last feedback (MulTFRC).
    j: f64,
    /// When the last data packet left (for the minimum interval).
    last_sent: Option<Time>,
    faster: FasterRestart,
}

/// The state one emitted packet changed, kept until the next one.
#[derive(Clone, Debug, PartialEq)]
struct Emitted {
    seq: u64,
    pacer: Pacer,
    immediate: u32,
    immediate_since: Time,
    backlog: Backlog,
    sent_since_nfb: bool,
    protected: bool,
    last_sent: Option<Time>,
}

impl Sender {
    /// A sender that has not sent anything yet. It starts when the application first has data.
    pub fn new(cfg: SenderConfig) -> Result<Sender, ConfigError> {
        cfg.validate()?;
        let s = f64::from(cfg.segment_size);
        let pacer = match cfg.pacing {
            Pacing::Nominal { .. } => Pacer::Nominal { last: None },
            Pacing::Ns2Timer => Pacer::Timer {
                at: None,
                exact: 0.0,
            },
        };
        Ok(Sender {
            cfg,
            s,
            life: Lifecycle::NotStarted,
            backlog: Backlog::Packets(0),
            data: false,
            next_seq: 0,
            x: s,
            x_calc: 0.0,
            p: 0.0,
            rtt: RttState::new(cfg.rtt, cfg.t_rto),
            tld: Time::ZERO,
            handshake_rtt: false,
            x_recv_set: Vec::new(),
            last_x_recv: 0.0,
            nfb_at: None,
            sent_since_nfb: false,
            backlogged: Backlogged::default(),
            round: 0,
            urgent: false,
            ns2: Ns2State {
                phase: Ns2Phase::SlowStart,
                ss_maxrate: 0.0,
                maxrate: 0.0,
                oldrate: s,
                delta: 0.0,
                last_change: Time::ZERO,
                datalimited: false,
                lastlimited: 0.0,
                all_idle: false,
                heavyrounds: 0,
            },
            pacer,
            immediate: 0,
            immediate_since: Time::ZERO,
            ttl: TtlState::new(cfg.ttl),
            veno: VenoState::default(),
            simd: SimdState::default(),
            link_error_fb: false,
            packets_sent: 0,
            feedbacks: 0,
            nofeedback_expiries: 0,
            ttl_exceeded: 0,
            protected_sent: 0,
            link_error_rescales: 0,
            rtt_samples_refused: 0,
            last_emit: None,
            local_cut_at: None,
            send_refusals: 0,
            local_congestion: 0,
            s_eq: cfg.segment.equation_segment(s),
            j: 1.0,
            last_sent: None,
            faster: FasterRestart::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SenderConfig {
        &self.cfg
    }

    // ----- application input -------------------------------------------------------------

    /// The application has `n` more segments ready. The first data starts the sender.
    pub fn push_packets(&mut self, now: Time, n: u64) {
        if n == 0 {
            return;
        }
        self.set_backlog(match self.backlog {
            Backlog::Infinite => Backlog::Infinite,
            Backlog::Packets(k) => Backlog::Packets(k.saturating_add(n)),
        });
        self.on_new_data(now);
    }

    /// The application always has data from now on.
    pub fn set_infinite_backlog(&mut self, now: Time) {
        self.set_backlog(Backlog::Infinite);
        self.on_new_data(now);
    }

    /// How much data is waiting.
    pub fn backlog(&self) -> Backlog {
        self.backlog
    }

    /// Stop sending for good: no more packets, no more timers.
    pub fn stop(&mut self) {
        self.life = Lifecycle::Stopped;
        self.set_backlog(Backlog::Packets(0));
        self.nfb_at = None;
        self.immediate = 0;
    }

    fn has_data(&self) -> bool {
        // Catches a `backlog` change that bypassed `set_backlog`.
        debug_assert_eq!(self.data, !matches!(self.backlog, Backlog::Packets(0)));
        self.data
    }

    /// The only way `backlog` changes, so that `data` follows it.
    fn set_backlog(&mut self, b: Backlog) {
        self.backlog = b;
        self.data = match b {
            Backlog::Infinite => true,
            Backlog::Packets(k) => k > 0,
        };
    }

    fn on_new_data(&mut self, now: Time) {
        self.backlogged.note(now, self.has_data());
        match self.life {
            Lifecycle::NotStarted => self.start(now),
            Lifecycle::Stopped => {}
            Lifecycle::Running => {
                // NS-2 `advanceby`: "We were data-limited - send a packet now!"
                if let RateControl::Ns2(r) = self.cfg.rate_control {
                    if self.ns2.datalimited && self.has_data() {
                        self.ns2.datalimited = false;
                        self.ns2.lastlimited = now.as_secs_f64();
                        self.ns2.all_idle = false;
                        if !r.old_code {
                            self.owe_immediate(now);
                        }
                    }
                }
            }
        }
    }

    /// RFC 5348 §4.2 / NS-2 `start()`.
    fn start(&mut self, now: Time) {
        self.life = Lifecycle::Running;
        // §4.2: "the value of X is set to s bytes per second" (NS-2: InitRate_, N1).
        self.x = match self.cfg.startup.rate {
            StartRate::OneSegmentPerSecond => self.s,
            StartRate::BytesPerSecond(r) => r,
        };
        // §4.2: "the nofeedback timer is set to expire after two seconds" (NS-2: 2*size_/rate_).
        let t = match self.cfg.startup.timer {
            StartTimer::Fixed(d) => d.as_secs_f64(),
            StartTimer::PacketIntervals(k) => k * self.s / self.x,
        };
        self.nfb_at = Some(add_secs(now, t));
        if self.handshake_rtt {
            // §4.2: with an RTT from the connection setup, "tld is set to the current time, and
            // the allowed transmit rate, X, is set to the initial_rate"; the nofeedback timer
            // is §4.3 step 3's max(4R, 2s/X), not the 2 s used without an RTT.
            self.x = self.initial_rate();
            self.tld = now;
            self.nfb_at = Some(add_secs(now, self.nofeedback_interval()));
        }
        self.sent_since_nfb = false;
        // §4.3: "X_recv_set is first initialized to contain a single item, with value Infinity."
        self.x_recv_set.clear();
        self.x_recv_set.push((f64::INFINITY, now));
        self.urgent = true;
        // Faster Restart: "T_active_recv is initialized to the start time of the connection".
        self.faster = FasterRestart {
            t_active_recv: now,
            ..FasterRestart::default()
        };
        self.ns2.phase = Ns2Phase::SlowStart;
        self.ns2.oldrate = self.x;
        self.ns2.delta = 0.0;
        self.ns2.last_change = now;
        match &mut self.pacer {
            Pacer::Nominal { last } => *last = None,
            Pacer::Timer { at, exact } => {
                // NS-2 start(): send one packet now, then the timer at size_/rate_.
                *exact = now.as_secs_f64() + self.s / self.x;
                *at = Some(timer_time(now, *exact));
                self.immediate = 1;
                self.immediate_since = now;
            }
        }
    }

    fn owe_immediate(&mut self, now: Time) {
        if self.immediate == 0 {
            self.immediate_since = now;
        }
        self.immediate = self.immediate.saturating_add(1);
    }

    // ----- rates ---------------------------------------------------------------------------

    fn initial_window(&self) -> f64 {
        self.cfg.initial_window.packets(self.cfg.segment_size)
    }

    /// §4.2: "initial_rate = W_init/R".
    fn initial_rate(&self) -> f64 {
        self.initial_window() * self.s / self.rtt.r()
    }

    /// The lowest allowed rate: s/t_mbi under RFC 5348 (§4.3), none in NS-2 (`docs/tfrc-core.md`
    /// N8).
    fn min_rate(&self) -> f64 {
        match self.cfg.rate_control {
            RateControl::Rfc5348(r) => self.s / r.t_mbi.as_secs_f64(),
            RateControl::Ns2(_) => 0.0,
        }
    }

    /// The equation in force: the configured one, or Veno's random-loss equation while the
    /// backlog is small (seed 003 V1: "X(1, 0.8) when N < 3 … and X(1, 0.5) otherwise").
    fn equation(&self) -> &Equation {
        match &self.cfg.backlog {
            BacklogRule::Veno(v) if self.veno.random() => &v.random,
            _ => &self.cfg.equation,
        }
    }

    /// X_Bps for the current p, R and t_RTO (and j: MulTFRC), with the equation's segment size
    /// (TFRC-SP: RFC 4828 §3's nominal s and "X := X * s_true / (s_true + H)").
    fn equation_rate(&self) -> f64 {
        let x = self
            .equation()
            .rate_j(self.s_eq, self.rtt.r(), self.rtt.t_rto(), self.p, self.j);
        if x.is_nan() {
            0.0
        } else {
            x
        }
    }

    /// Keep X finite and positive whatever the inputs.
    fn sanitize_x(&mut self) {
        let floor = self.min_rate().max(f64::MIN_POSITIVE);
        if self.x.is_nan() || self.x < floor {
            self.x = floor;
        }
        if self.x > X_MAX {
            self.x = X_MAX;
        }
    }

    /// §4.5: "X_inst = X * R_sqmean / sqrt(R_sample); If (X_inst < s/t_mbi) X_inst = s/t_mbi".
    fn x_inst(&self) -> f64 {
        let f = match self.cfg.oscillation {
            Oscillation::Off => 1.0,
            Oscillation::SqrtRtt { .. } => self.rtt.oscillation_factor(),
            // Not RFC 5348: X_inst never above X (Linux CCID-3; `docs/tfrc-core.md`, "Options
            // beyond both profiles").
            Oscillation::SqrtRttCapped { .. } => self.rtt.oscillation_factor().min(1.0),
        };
        (self.x * f).max(self.min_rate()).min(X_MAX)
    }

    fn q2(&self) -> f64 {
        match self.cfg.oscillation {
            Oscillation::SqrtRtt { q2 } | Oscillation::SqrtRttCapped { q2 } => q2,
            Oscillation::Off => 0.0,
        }
    }

    // ----- pacing --------------------------------------------------------------------------

    /// §4.6: "t_ipi = s/X_inst".
    fn t_ipi(&self) -> f64 {
        (self.s / self.x_inst()).max(self.min_interval_secs())
    }

    /// RFC 4828 §3's Min Interval in seconds (0 without it).
    fn min_interval_secs(&self) -> f64 {
        self.cfg.min_interval.map_or(0.0, |d| d.as_secs_f64())
    }

    /// The earliest time the next data packet may leave under the Min Interval.
    fn min_interval_floor(&self) -> Option<Time> {
        match (self.cfg.min_interval, self.last_sent) {
            (Some(mi), Some(last)) => Some(last.saturating_add(mi)),
            _ => None,
        }
    }

    /// §8.3: "t_delta = min(t_ipi, t_gran, rtt)/2".
    fn t_delta(&self) -> Duration {
        match self.cfg.pacing {
            Pacing::Nominal { t_gran, .. } => {
                let r = if self.rtt.has_sample() {
                    self.rtt.r()
                } else {
                    f64::INFINITY
                };
                duration_from_secs_f64(self.t_ipi().min(t_gran.as_secs_f64()).min(r) / 2.0)
            }
            Pacing::Ns2Timer => Duration::ZERO,
        }
    }

    /// §4.6: "t_(i+1) = t_i + t_ipi", with t_ipi from the current rate.
    fn next_nominal(&self, last: Option<Time>) -> Option<Time> {
        last.map(|t| add_gap(t, self.t_ipi()))
    }

    /// After a rate change: a backlogged sender continues its nominal schedule from at most one
    /// new t_ipi ago, so send times computed retroactively under the new rate do not become
    /// credit. §4.6 meant credits for "a burst of data after an idle or data-limited period";
    /// while the application has no data the schedule is left alone and credit accrues.
    fn reanchor(&mut self, now: Time) {
        if !self.has_data() {
            return;
        }
        let ipi = duration_from_secs_f64(self.t_ipi());
        if let Pacer::Nominal { last: Some(l) } = &mut self.pacer {
            *l = (*l).max(now.saturating_sub(ipi));
        }
    }

    /// NS-2 `nextpkt()`'s gap: the slow-start ramp, else the oscillation-damped rate.
    fn ns2_gap(&mut self) -> Option<f64> {
        let ramp = matches!(self.cfg.rate_control, RateControl::Ns2(r) if r.slow_increase)
            && self.round > 2
            && self.ns2.phase == Ns2Phase::SlowStart
            && self.ns2.oldrate + SMALLFLOAT < self.x;
        let xrate = if ramp {
            // `docs/tfrc-core.md` N4: the pacing rate ramps linearly to the new rate over one RTT.
            self.ns2.oldrate += self.ns2.delta;
            self.ns2.oldrate
        } else {
            self.x_inst()
        };
        if xrate > SMALLFLOAT && xrate.is_finite() {
            // NS-2's `voip_` mode floors the gap at 1/`voip_max_pkt_rate_` likewise.
            Some((self.s / xrate).max(self.min_interval_secs()))
        } else {
            None
        }
    }

    /// NS-2 `nextpkt()` called outside the send timer: one packet now (or mark the sender
    /// data-limited) and re-arm the timer.
    fn ns2_nextpkt(&mut self, now: Time) {
        if self.has_data() {
            self.owe_immediate(now);
        } else {
            self.ns2.datalimited = true;
        }
        self.rearm_timer(now, now.as_secs_f64());
    }

    /// Re-arm the send timer one gap after `base` (seconds; the exact time of the event that
    /// re-arms it).
    fn rearm_timer(&mut self, now: Time, base: f64) {
        if matches!(self.pacer, Pacer::Timer { .. }) {
            let gap = self.ns2_gap();
            if let Pacer::Timer { at, exact } = &mut self.pacer {
                match gap {
                    Some(g) => {
                        *exact = base + g;
                        *at = Some(timer_time(now, *exact));
                    }
                    None => *at = None,
                }
            }
        }
    }

    /// The exact time of a due send-timer tick handled at `now` (NS-2 runs it at its own time;
    /// a driver waking late is treated as if the tick happened now).
    fn tick_base(&self, now: Time) -> f64 {
        match self.pacer {
            Pacer::Timer {
                at: Some(t), exact, ..
            } if t == now => exact,
            _ => now.as_secs_f64(),
        }
    }

    /// A header for the next data packet if one may leave at `now`; the caller sends it (and
    /// calls [`Sender::on_send_refused`] if the host does not take it).
    pub fn poll_transmit(&mut self, now: Time) -> Option<DataHeader> {
        let h = self.poll_transmit_inner(now);
        if h.is_none() {
            self.last_emit = None;
        }
        h
    }

    /// Keep what emitting a packet is about to change, for [`Sender::on_send_refused`]. Called
    /// only once a packet will leave, before any state changes, so that the many polls that
    /// send nothing do not copy it.
    fn remember(&mut self) {
        self.last_emit = Some(Emitted {
            seq: self.next_seq,
            pacer: self.pacer.clone(),
            immediate: self.immediate,
            immediate_since: self.immediate_since,
            backlog: self.backlog,
            sent_since_nfb: self.sent_since_nfb,
            protected: false,
            last_sent: self.last_sent,
        });
    }

    fn poll_transmit_inner(&mut self, now: Time) -> Option<DataHeader> {
        if self.life != Lifecycle::Running {
            return None;
        }
        if !self.has_data() {
            self.idle_tick(now);
            return None;
        }
        // RFC 4828 §3: "TFRC-SP enforces a Min Interval between packets of 10 ms".
        if self.min_interval_floor().is_some_and(|t| now < t) {
            return None;
        }
        if self.immediate > 0 {
            self.remember();
            self.immediate -= 1;
            if let Pacer::Nominal { last } = &mut self.pacer {
                *last = Some(now);
            }
            return Some(self.emit(now));
        }
        match self.pacer {
            Pacer::Nominal { last } => {
                let next = self.next_nominal(last).unwrap_or(now);
                if now.saturating_add(self.t_delta()) < next {
                    return None;
                }
                // §4.6: "the sender would be allowed to use unused nominal send times t_j for
                // t_j < now - T" is read as: only send times later than now - T (T =
                // credit_rtts·R) may be used, so a burst holds at most X·T/s packets.
                let credit = match self.cfg.pacing {
                    Pacing::Nominal { credit_rtts, .. } => {
                        duration_from_secs_f64(credit_rtts * self.rtt.r())
                    }
                    Pacing::Ns2Timer => Duration::ZERO,
                };
                let oldest = if credit.is_zero() {
                    now
                } else {
                    now.saturating_sub(credit)
                        .saturating_add(Duration::from_nanos(1))
                };
                let nominal = next.max(oldest);
                self.remember();
                self.pacer = Pacer::Nominal {
                    last: Some(nominal),
                };
                Some(self.emit(now))
            }
            Pacer::Timer { at, .. } => match at {
                Some(t) if t <= now => {
                    let base = self.tick_base(now);
                    self.remember();
                    let h = self.emit(now);
                    self.rearm_timer(now, base);
                    Some(h)
                }
                _ => None,
            },
        }
    }

    /// A send opportunity with nothing to send.
    fn idle_tick(&mut self, now: Time) {
        if let Pacer::Timer { at: Some(t), .. } = self.pacer {
            if t <= now {
                // NS-2 nextpkt(): "datalimited_ = 1" and the timer runs on.
                self.ns2.datalimited = true;
                let base = self.tick_base(now);
                self.rearm_timer(now, base);
            }
        }
        self.immediate = 0;
    }

    /// Build the next packet's header and account for it; after [`Sender::remember`].
    fn emit(&mut self, now: Time) -> DataHeader {
        let h = DataHeader {
            seq: self.next_seq,
            timestamp: now,
            rtt: duration_from_secs_f64(self.header_rtt()),
            t_rto: duration_from_secs_f64(self.rtt.t_rto()),
            segment_size: self.cfg.segment_size,
            round: self.round,
            urgent: self.urgent,
            initial_ttl: self.ttl.ttl(),
        };
        if self.cfg.protect.protects(h.initial_ttl) {
            self.protected_sent = self.protected_sent.saturating_add(1);
            if let Some(e) = &mut self.last_emit {
                e.protected = true;
            }
        }
        self.next_seq = self.next_seq.saturating_add(1);
        if let Backlog::Packets(k) = self.backlog {
            self.set_backlog(Backlog::Packets(k.saturating_sub(1)));
        }
        self.packets_sent = self.packets_sent.saturating_add(1);
        self.sent_since_nfb = true;
        self.last_sent = Some(now);
        self.backlogged.note(now, self.has_data());
        h
    }

    /// The next instant the sender must be woken (for a packet or a timer), if any. Until
    /// then nothing is due: while it is later than `now` (or `None`), [`Sender::poll_transmit`]
    /// at `now` returns `None`, and [`Sender::on_timeout`] at `now` changes nothing for a
    /// sender with data queued, so a driver may skip both (a skipped poll leaves the last
    /// packet refusable by [`Sender::on_send_refused`], as a poll returning `None` would not).
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.life != Lifecycle::Running {
            return None;
        }
        // With data, a packet's send time; without, NS-2's send-timer tick, which runs anyway
        // (and marks the sender data-limited). Never both, so one minimum with `nfb_at` does.
        let next = if self.has_data() {
            let paced = match self.pacer {
                Pacer::Nominal { last } => {
                    let next = self.next_nominal(last).unwrap_or(Time::ZERO);
                    Some(next.saturating_sub(self.t_delta()))
                }
                Pacer::Timer { at, .. } => at,
            };
            let send = match paced {
                Some(p) if self.immediate > 0 => Some(p.min(self.immediate_since)),
                None if self.immediate > 0 => Some(self.immediate_since),
                p => p,
            };
            match (send, self.min_interval_floor()) {
                (Some(t), Some(floor)) => Some(t.max(floor)),
                (send, _) => send,
            }
        } else {
            match self.pacer {
                Pacer::Timer { at, .. } => at,
                Pacer::Nominal { .. } => None,
            }
        };
        match (self.nfb_at, next) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, None) => a,
            (None, b) => b,
        }
    }

    // ----- timers --------------------------------------------------------------------------

    /// Handle whatever timer is due at `now` (the nofeedback timer; an idle send tick). Called
    /// before anything is due, it changes nothing, except that a sender with no data drops the
    /// immediate sends it owed, as [`Sender::poll_transmit`] does.
    pub fn on_timeout(&mut self, now: Time) {
        if self.life != Lifecycle::Running {
            return;
        }
        if matches!(self.nfb_at, Some(t) if t <= now) {
            self.nofeedback_expired(now);
        }
        if !self.has_data() {
            self.idle_tick(now);
        }
    }

    fn nofeedback_expired(&mut self, now: Time) {
        self.nofeedback_expiries = self.nofeedback_expiries.saturating_add(1);
        // Seed 003 V1 (`docs/variants.md`): BaseRTT is "reset after idle / nofeedback expiry".
        self.veno.reset();
        match self.cfg.rate_control {
            RateControl::Rfc5348(r) => self.rfc_nofeedback(now, r),
            RateControl::Ns2(r) => self.ns2_nofeedback(now, r),
        }
        self.sanitize_x();
        self.reanchor(now);
        if let RateControl::Ns2(_) = self.cfg.rate_control {
            // NS-2 reduce_rate_on_no_feedback(): "nextpkt()" — a packet goes out at once.
            self.ns2_nextpkt(now);
        }
    }

    /// The nofeedback interval max(k·R, 2s/X) (§4.3 step 3 / §4.4 step 2; NS-2 k = 2), and
    /// not below the configured `nofeedback_min` (a departure from RFC 5348, off by default).
    fn nofeedback_interval(&self) -> f64 {
        let t = (self.cfg.nofeedback_rtts * self.rtt.r()).max(2.0 * self.s / self.x);
        match self.cfg.nofeedback_min {
            Some(m) => t.max(m.as_secs_f64()),
            None => t,
        }
    }

    /// RFC 5348 §4.4.
    fn rfc_nofeedback(&mut self, now: Time, r: Rfc5348Rules) {
        let min_rate = self.s / r.t_mbi.as_secs_f64();
        // "X_recv = max (X_recv_set);"
        let x_recv = self.max_x_recv();
        let idle = !self.sent_since_nfb;
        if !self.rtt.has_sample() {
            // (a) "sender does not have an RTT sample, has not received any feedback from
            // receiver, and has not been idle ever since the nofeedback timer was set":
            // "X = max(X/2, s/t_mbi)". With no RTT there is no recover_rate, so an idle sender
            // keeps its rate (the spirit of case (b)).
            if !idle {
                self.x = (self.x / 2.0).max(min_rate);
            }
        } else {
            // Faster Restart §3.2: "this document sets recover_rate to twice the initial_rate".
            let recover_rate = match r.restart {
                Restart::Rfc5348 => self.initial_rate(),
                Restart::Faster { .. } => 2.0 * self.initial_rate(),
            };
            let x_bps = self.equation_rate();
            if idle
                && ((self.p > 0.0 && x_recv < recover_rate)
                    || (self.p == 0.0 && self.x < 2.0 * recover_rate))
            {
                // (b) "Don't halve the allowed sending rate."
            } else if self.p == 0.0 {
                // (c) "We do not have X_Bps yet."
                self.x = (self.x / 2.0).max(min_rate);
            } else if x_bps > 2.0 * x_recv {
                // (d) "2*X_recv was already limiting the sending rate."
                self.update_limits(now, x_recv, x_bps, min_rate);
            } else {
                // (e) "The sending rate was limited by X_Bps, not by X_recv."
                self.update_limits(now, x_bps / 2.0, x_bps, min_rate);
            }
            if self.p > 0.0 {
                self.x_calc = x_bps;
            }
        }
        self.sanitize_x();
        // "Restart the nofeedback timer to expire after max(4*R, 2*s/X) seconds."
        self.nfb_at = Some(add_secs(now, self.nofeedback_interval()));
        self.sent_since_nfb = false;
    }

    /// §4.4 Update_Limits(timer_limit).
    fn update_limits(&mut self, now: Time, limit: f64, x_bps: f64, min_rate: f64) {
        // "If (timer_limit < s/t_mbi) timer_limit = s/t_mbi;"
        let limit = limit.max(min_rate);
        // "Replace X_recv_set contents with the single item timer_limit/2;"
        self.x_recv_set.clear();
        self.x_recv_set.push((limit / 2.0, now));
        // "Recalculate X as in step (4) of Section 4.3": recv_limit = 2*max(X_recv_set), p > 0.
        let recv_limit = 2.0 * self.max_x_recv();
        self.x = x_bps.min(recv_limit).max(min_rate);
    }

    /// NS-2 `reduce_rate_on_no_feedback()` (`docs/tfrc-core.md` N12).
    fn ns2_nofeedback(&mut self, now: Time, r: Ns2Rules) {
        if self.ns2.phase != Ns2Phase::SlowStart {
            self.ns2.phase = Ns2Phase::RateDecrease;
        }
        let w = self.initial_window();
        let per_rtt = self.s / self.rtt.r();
        if r.old_code || (!self.ns2.all_idle && !self.ns2.datalimited) {
            self.x *= 0.5;
        } else if let InitialWindow::Packets(n) = self.cfg.initial_window {
            // rate_init_option_ 1: "Don't reduce rate below rate_init_ * size_/rtt_."
            if self.x > 2.0 * n * per_rtt {
                self.x *= 0.5;
            }
        } else if self.x > 2.0 * w * per_rtt {
            self.x *= 0.5;
        } else if self.x > w * per_rtt {
            // "Don't reduce rate below the RFC3390 rate."
            self.x = w * per_rtt;
        }
        self.urgent = true;
        self.round = self.round.saturating_add(1);
        self.sanitize_x();
        self.nfb_at = Some(add_secs(now, self.nofeedback_interval()));
        if self.ns2.datalimited {
            self.ns2.all_idle = true;
        }
    }

    // ----- feedback ------------------------------------------------------------------------

    /// Process a feedback packet received at `now` (RFC 5348 §4.3).
    pub fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        if self.life != Lifecycle::Running {
            return;
        }
        // §4.3 step 1: "R_sample = (t_now - t_recvdata) - t_delay."
        let sample = plausible_sample(now, fb);
        if sample.is_none() {
            self.rtt_samples_refused = self.rtt_samples_refused.saturating_add(1);
            if !self.rtt.has_sample() {
                // Without any R the feedback cannot be applied (§4.2 needs R for
                // initial_rate); wait for one whose sample is plausible.
                return;
            }
        }
        let x_recv = if fb.x_recv.is_finite() && fb.x_recv >= 0.0 {
            fb.x_recv
        } else {
            0.0
        };
        let p = if fb.p.is_nan() {
            1.0
        } else {
            fb.p.clamp(0.0, 1.0)
        };
        let first = self.feedbacks == 0;
        self.feedbacks = self.feedbacks.saturating_add(1);
        let p_before = self.p;
        self.j = if fb.lost_per_event.is_finite() && fb.lost_per_event >= 1.0 {
            fb.lost_per_event
        } else {
            1.0
        };
        if let (BacklogRule::Veno(v), Some(sample)) = (&self.cfg.backlog, sample) {
            self.veno.on_feedback(v, sample, x_recv, self.s);
        }
        // E2: does this feedback report a link-error loss?
        self.link_error_fb = match self.cfg.link_error_rto {
            LinkErrorRto::Off => false,
            LinkErrorRto::Rescale { source, .. } => match source {
                LinkErrorSource::Receiver => fb.link_errors > 0,
                // `docs/variants.md` V1: "N < 3 is also available as a loss classifier for E2": a
                // feedback with a higher p reports a new loss, judged random by the backlog.
                LinkErrorSource::VenoBacklog => p > p_before && self.veno.random(),
            },
        };
        match self.cfg.rate_control {
            RateControl::Rfc5348(r) => self.rfc_feedback(now, fb, sample, x_recv, p, first, r),
            RateControl::Ns2(r) => self.ns2_feedback(now, sample, x_recv, p, first, r),
        }
        if let GrowthCap::Simd { a } = self.cfg.growth_cap {
            if p > 0.0 {
                // `docs/variants.md` V2: X <= X0*(1 + a*(t/R)^2/w0^2) between loss events; a
                // feedback with a higher p is a loss event and re-anchors X0.
                self.x = self.simd.cap(
                    a,
                    self.x,
                    now.as_secs_f64(),
                    self.rtt.r(),
                    self.s,
                    p > p_before,
                );
            }
        }
        if let Some(h) = fb.hops {
            self.ttl.on_hops(h);
        }
        self.last_x_recv = x_recv;
        self.sanitize_x();
        if let RateControl::Rfc5348(_) = self.cfg.rate_control {
            // §4.3 steps 3 and 6: "RTO = max(4*R, 2*s/X)", "Reset the nofeedback timer to
            // expire after RTO seconds". RTO is computed here, with the X this feedback left in
            // force, not before step 4 with the previous X as the RFC lists the steps (Linux
            // CCID-3's order): after the first feedback raises X from s B/s to W_init/R the
            // timer is 4R, not 2 s, and it agrees with `status().nofeedback_at`.
            self.nfb_at = Some(add_secs(now, self.nofeedback_interval()));
            self.sent_since_nfb = false;
        }
        self.reanchor(now);
    }

    /// Fold in a feedback's RTT sample (§4.3 step 2), rescaling t_RTO when the feedback reported
    /// a link-error loss (E2). A refused sample (`None`) leaves R, R_sqmean and t_RTO alone.
    fn rtt_sample(&mut self, sample: Option<f64>) {
        let Some(sample) = sample else { return };
        let q2 = self.q2();
        match self.cfg.link_error_rto {
            LinkErrorRto::Rescale { spike, .. } if self.link_error_fb => {
                self.link_error_rescales = self.link_error_rescales.saturating_add(1);
                self.rtt.on_link_error_sample(sample, q2, spike);
            }
            _ => self.rtt.on_sample(sample, q2),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rfc_feedback(
        &mut self,
        now: Time,
        fb: &Feedback,
        sample: Option<f64>,
        x_recv: f64,
        p: f64,
        first: bool,
        r: Rfc5348Rules,
    ) {
        // Step 2: update R.
        self.rtt_sample(sample);
        self.round = self.round.saturating_add(1);
        self.urgent = false;
        let rr = self.rtt.r();
        // Step 3 (RTO) and step 6 (the nofeedback timer) are done by `on_feedback` once X is
        // final.
        let p_prev = self.p;
        self.p = p;
        let min_rate = self.s / r.t_mbi.as_secs_f64();
        // §8.2.1: "t_new = timestamp reported in feedback packet. t_old = t_new - R." The
        // interval was data-limited unless data was waiting at some time within (t_old, t_new].
        let t_new = fb.timestamp_echo;
        let t_old = t_new.saturating_sub(duration_from_secs_f64(rr));
        let limited_interval = !self.backlogged.any_within(t_old, t_new);
        if let Restart::Faster { decay } = r.restart {
            self.faster_restart_update(now, decay, x_recv, p > p_prev);
        }
        if first && !self.handshake_rtt {
            // §4.2: "Upon receiving the first round-trip time measurement … tld is set to the
            // current time, and the allowed transmit rate, X, is set to the initial_rate".
            // (After a handshake RTT the first feedback is an ordinary one.)
            self.x = self.initial_rate();
            self.tld = now;
            // "recv_limit is set to Infinity for the first two round-trip times of the
            // connection": two round-trip times are counted from the first R, not from the
            // first send, so a first packet lost or a first feedback delayed by more than 2R
            // does not cut the Infinity short.
            self.restamp_infinity(now);
        } else {
            // Step 4. "If the feedback packet reports a receive rate X_recv of zero … the sender
            // does not consider that the entire interval … was a data-limited interval."
            let limited = r.data_limited && x_recv > 0.0 && limited_interval;
            let recv_limit = if x_recv == 0.0 {
                // A zero X_recv says the receiver had nothing to measure yet (§6.3's first
                // report, or a feedback sent before any packet fell in its R_(m-1) window); it is
                // not a receive rate. Entering it into X_recv_set would delete the Infinity and
                // give recv_limit = 0, pinning X at s/t_mbi with p > 0 (one packet per 64 s)
                // until the receiver had something to measure, which it never would. The set is
                // left as it is, as Linux CCID-3 ignored the first feedback's X_recv.
                2.0 * self.max_x_recv()
            } else if limited {
                if p > p_prev {
                    // "Halve entries in X_recv_set; X_recv = 0.85 * X_recv; Maximize X_recv_set();
                    // recv_limit = max (X_recv_set);"
                    for e in &mut self.x_recv_set {
                        e.0 /= 2.0;
                    }
                    self.maximize_x_recv_set(now, 0.85 * x_recv);
                    self.max_x_recv()
                } else {
                    self.maximize_x_recv_set(now, x_recv);
                    self.faster_limit(r, 2.0 * self.max_x_recv())
                }
            } else {
                self.update_x_recv_set(now, x_recv, rr, r.x_recv_set_len);
                self.faster_limit(r, 2.0 * self.max_x_recv())
            };
            if p > 0.0 {
                // "X = max(min(X_Bps, recv_limit), s/t_mbi);"
                self.x = self.equation_rate().min(recv_limit).max(min_rate);
            } else if now.saturating_since(self.tld).as_secs_f64() >= rr {
                // "X = max(min(2*X, recv_limit), initial_rate); tld = t_now;"
                self.x = (2.0 * self.x).min(recv_limit).max(self.initial_rate());
                self.tld = now;
            }
        }
        self.x_calc = if p > 0.0 { self.equation_rate() } else { 0.0 };
    }

    /// Faster Restart §3.1, "Interpolate X_fast_max" then "Update X_active_recv and X_fast_max",
    /// run on every feedback. A feedback indicates a loss or mark when it or the previous one
    /// reported a higher p (the draft's inference for feedback that reports p only).
    fn faster_restart_update(&mut self, now: Time, decay: Duration, x_recv: f64, increase: bool) {
        let f = &mut self.faster;
        // "If at most DecayTime has elapsed since the last update of X_active_recv … X_fast_max
        // is set to X_active_recv. If 3*DecayTime or more has elapsed, X_fast_max is set to
        // zero. Linear interpolation is used between these extremes." (The draft's pseudo-code
        // divides by 2 minutes with 6-minute bounds, which gives F = 2 right after an update;
        // the prose is followed: F = (3D − clamp(ΔT, D, 3D))/(2D), `docs/variants.md`.)
        let d = decay.as_secs_f64();
        let dt = now.saturating_since(f.t_active_recv).as_secs_f64();
        let factor = (3.0 * d - dt.clamp(d, 3.0 * d)) / (2.0 * d);
        f.x_fast_max = factor * f.x_active_recv;
        let loss = increase || f.prev_increase;
        f.prev_increase = increase;
        if !loss && x_recv >= f.x_fast_max {
            f.x_active_recv = x_recv;
            f.x_fast_max = x_recv;
            f.t_active_recv = now;
        } else if loss && x_recv < f.x_fast_max {
            f.x_active_recv = x_recv / 2.0;
            f.x_fast_max = x_recv / 2.0;
            f.t_active_recv = now;
        }
    }

    /// Faster Restart: "If (recv_limit < X_fast_max) recv_limit = min (2*recv_limit,
    /// X_fast_max);" (RFC 5348's recv_limit otherwise).
    fn faster_limit(&self, r: Rfc5348Rules, recv_limit: f64) -> f64 {
        match r.restart {
            Restart::Faster { .. } if recv_limit < self.faster.x_fast_max => {
                (2.0 * recv_limit).min(self.faster.x_fast_max)
            }
            _ => recv_limit,
        }
    }

    /// Re-stamp X_recv_set's initial Infinity, if still there, at the first RTT measurement.
    fn restamp_infinity(&mut self, now: Time) {
        for e in &mut self.x_recv_set {
            if e.0.is_infinite() {
                e.1 = now;
            }
        }
    }

    /// §4.3 "Maximize X_recv_set()": keep only the largest of the set and X_recv, without the
    /// initial Infinity, stamped now.
    fn maximize_x_recv_set(&mut self, now: Time, x_recv: f64) {
        let m = self
            .x_recv_set
            .iter()
            .map(|e| e.0)
            .filter(|v| v.is_finite())
            .fold(x_recv, f64::max);
        self.x_recv_set = vec![(m, now)];
    }

    /// §4.3 "Update X_recv_set()": add X_recv; "Delete from X_recv_set values older than two
    /// round-trip times"; §8.2.2 "Keep only the most recent N values".
    fn update_x_recv_set(&mut self, now: Time, x_recv: f64, r: f64, keep: usize) {
        self.x_recv_set.push((x_recv, now));
        let horizon = now.saturating_sub(duration_from_secs_f64(2.0 * r));
        self.x_recv_set.retain(|e| e.1 >= horizon);
        let excess = self.x_recv_set.len().saturating_sub(keep.max(1));
        self.x_recv_set.drain(..excess);
    }

    fn max_x_recv(&self) -> f64 {
        self.x_recv_set.iter().map(|e| e.0).fold(0.0, f64::max)
    }

    /// NS-2.35 `TfrcAgent::recv()` (the NS-2 sender rules in `docs/tfrc-core.md`).
    fn ns2_feedback(
        &mut self,
        now: Time,
        sample: Option<f64>,
        x_recv: f64,
        p: f64,
        first: bool,
        r: Ns2Rules,
    ) {
        self.round = self.round.saturating_add(1);
        self.urgent = false;
        // The first report's X_recv is ignored (`docs/tfrc-core.md` N2): round_id > 1 only.
        if self.round > 1 && x_recv > 0.0 {
            self.ns2.ss_maxrate = 2.0 * x_recv;
            self.ns2.maxrate = 2.0 * x_recv;
        } else {
            self.ns2.ss_maxrate = 0.0;
            self.ns2.maxrate = 0.0;
        }
        self.rtt_sample(sample);
        self.p = p;
        self.x_calc = self.equation_rate();
        // "Nofeedback timer ← max(2·rtt_, 2·size_/rate_)" with the rate before this feedback.
        self.nfb_at = Some(add_secs(now, self.nofeedback_interval()));
        self.sent_since_nfb = false;
        if first {
            self.ns2_slowstart(now, r);
            self.ns2_nextpkt(now);
        } else if self.ns2.phase == Ns2Phase::SlowStart {
            if p > 0.0 {
                // N6: leave slow start at X_calc, with no receive-rate cap.
                self.ns2.phase = Ns2Phase::OutOfSlowStart;
                self.x = self.x_calc;
                self.ns2.oldrate = self.x;
            } else {
                self.ns2_slowstart(now, r);
                self.ns2_nextpkt(now);
            }
        } else if self.x_calc > self.x {
            self.ns2_increase(now);
        } else {
            self.ns2_decrease(now, r);
        }
    }

    fn ns2_recently_limited(&self, now: Time) -> bool {
        self.ns2.datalimited || self.ns2.lastlimited > now.as_secs_f64() - 1.5 * self.rtt.r()
    }

    fn ns2_set_delta(&mut self) {
        // delta_ = (rate_ - oldrate_)/(rate_*rtt_/size_): the ramp step per packet.
        let pkts = self.x * self.rtt.r() / self.s;
        self.ns2.delta = if pkts > 0.0 {
            (self.x - self.ns2.oldrate) / pkts
        } else {
            0.0
        };
    }

    /// NS-2 `slowstart()` (`docs/tfrc-core.md` N3).
    fn ns2_slowstart(&mut self, now: Time, r: Ns2Rules) {
        let rr = self.rtt.r();
        let w = self.initial_window();
        let initrate = w * self.s / rr;
        if self.round <= 1 || (self.round == 2 && w > 1.0) {
            // "We don't have a good rate report yet, so keep to the initial rate."
            self.ns2.oldrate = self.x;
            self.x = self.x.max(initrate);
            self.ns2_set_delta();
            self.ns2.last_change = now;
        } else if self.ns2.ss_maxrate > 0.0 {
            if r.idle_fix && self.ns2_recently_limited(now) && self.ns2.ss_maxrate < initrate {
                self.ns2.oldrate = self.x;
                self.x = self.x.max(initrate);
                self.ns2_set_delta();
                self.ns2.last_change = now;
            } else if self.x < self.ns2.ss_maxrate
                && now.saturating_since(self.ns2.last_change).as_secs_f64() > rr
            {
                self.ns2.oldrate = self.x;
                self.x = (r.ssmult * self.x).min(self.ns2.ss_maxrate);
                self.x = self.x.max(self.s / rr);
                self.ns2_set_delta();
                self.ns2.last_change = now;
            } else if self.x > self.ns2.ss_maxrate {
                // `docs/tfrc-core.md` N3: a rate above the cap falls to X_recv (half the cap).
                self.x = self.ns2.ss_maxrate / 2.0;
                self.ns2.oldrate = self.x;
                self.ns2.delta = 0.0;
                self.ns2.last_change = now;
            }
        } else {
            self.ns2.oldrate = self.x;
            self.x = self.s / rr;
            self.ns2.delta = 0.0;
            self.ns2.last_change = now;
        }
    }

    /// NS-2 `increase_rate()`: about +1 packet/RTT per RTT (`docs/tfrc-core.md` N7).
    fn ns2_increase(&mut self, now: Time) {
        let rr = self.rtt.r();
        let mult = (now.saturating_since(self.ns2.last_change).as_secs_f64() / rr).min(2.0);
        self.x += self.s / rr * mult;
        let floor = if self.ns2_recently_limited(now) {
            self.initial_window() * self.s / rr
        } else {
            self.s / rr
        };
        let maximum = self.ns2.maxrate.max(floor).min(self.x_calc);
        self.x = self.x.min(maximum);
        self.ns2.phase = Ns2Phase::CongAvoid;
        self.ns2.last_change = now;
        self.ns2.heavyrounds = 0;
    }

    /// NS-2 `decrease_rate()`: X = min(X_calc, max(2·X_recv, s/R)) (`docs/tfrc-core.md` N8).
    fn ns2_decrease(&mut self, now: Time, r: Ns2Rules) {
        self.x = self.x_calc;
        let maximum = self.ns2.maxrate.max(self.s / self.rtt.r());
        if self.x > maximum {
            self.ns2.heavyrounds = self.ns2.heavyrounds.saturating_add(1);
        } else {
            self.ns2.heavyrounds = 0;
        }
        if self.ns2.heavyrounds > r.max_heavy_rounds {
            self.x = self.x.min(maximum);
        }
        self.ns2.phase = Ns2Phase::RateDecrease;
        self.ns2.last_change = now;
    }

    // ----- other input ---------------------------------------------------------------------

    /// An RTT measured before the first feedback: the connection's handshake, or a previous
    /// connection to the same peer. RFC 5348 §4.2: "Upon receiving the first round-trip time
    /// measurement (e.g., after the first feedback packet or the SYN exchange from the
    /// connection setup, or from a previous connection), tld is set to the current time, and
    /// the allowed transmit rate, X, is set to the initial_rate". So the sender starts at
    /// W_init/R instead of one segment per second, with the nofeedback timer at
    /// max(4R, 2s/X) instead of 2 s, and the first feedback is then handled by §4.3 steps 4–5
    /// like any other (its RTT sample still replaces R, §4.3 step 2). Call it before or after
    /// the first data; it is ignored once a feedback has arrived, after
    /// [`Sender::stop`], a second time, and under NS-2 rate control (NS-2's agent has no
    /// connection setup).
    pub fn on_handshake_rtt(&mut self, now: Time, rtt: Duration) {
        if self.handshake_rtt
            || self.feedbacks > 0
            || self.life == Lifecycle::Stopped
            || matches!(self.cfg.rate_control, RateControl::Ns2(_))
        {
            return;
        }
        if rtt.is_zero() {
            // Implausible (see `plausible_sample`): W_init/R would be unbounded.
            self.rtt_samples_refused = self.rtt_samples_refused.saturating_add(1);
            return;
        }
        self.rtt.seed(rtt.as_secs_f64().max(MIN_SAMPLE));
        self.handshake_rtt = true;
        if self.life == Lifecycle::Running {
            // Already sending at s bytes/s (§4.2 without an RTT): switch to initial_rate now.
            self.x = self.initial_rate();
            self.sanitize_x();
            self.tld = now;
            self.restamp_infinity(now);
            self.nfb_at = Some(add_secs(now, self.nofeedback_interval()));
            self.sent_since_nfb = false;
            self.reanchor(now);
        }
    }

    /// A router reported that a data packet sent with TTL `sent_ttl` expired in the network.
    /// Under [`crate::ttl::TtlPolicy::Adaptive`] it is an observation `h = sent_ttl + 1` of
    /// seed 000 eq. 11 (E5); under a fixed TTL it is only counted.
    pub fn on_ttl_exceeded(&mut self, _now: Time, sent_ttl: u8) {
        self.ttl_exceeded = self.ttl_exceeded.saturating_add(1);
        self.ttl.on_exceeded(sent_ttl);
    }

    /// The host did not take the packet `hdr` that the last [`Sender::poll_transmit`] returned:
    /// its socket buffer was full (`EAGAIN`), or a local queue refused it (`ENOBUFS`). The packet
    /// never left, so it is not counted as sent: its sequence number is given back, it returns
    /// to the backlog, and the pacing schedule is as if it had not been polled, so the next
    /// [`Sender::poll_transmit`] offers it again (with a fresh timestamp). The caller should
    /// poll again once the host can take a packet (the socket is writable): that is socket
    /// backpressure, and a sender that respects it cannot send faster than its own interface.
    ///
    /// Returns `false` (and changes nothing) when `hdr` is not the last packet polled: only the
    /// most recent one can be taken back without leaving a gap the receiver would count as a
    /// loss. `docs/tfrc-core.md` ("Local congestion") gives the reasoning.
    pub fn on_send_refused(&mut self, now: Time, hdr: &DataHeader) -> bool {
        let Some(e) = self.last_emit.take() else {
            return false;
        };
        if e.seq != hdr.seq || self.next_seq != e.seq.saturating_add(1) {
            self.last_emit = Some(e);
            return false;
        }
        self.next_seq = e.seq;
        self.pacer = e.pacer;
        self.immediate = e.immediate;
        self.immediate_since = e.immediate_since;
        if self.life == Lifecycle::Running {
            self.set_backlog(e.backlog);
        }
        self.sent_since_nfb = e.sent_since_nfb;
        self.last_sent = e.last_sent;
        self.packets_sent = self.packets_sent.saturating_sub(1);
        if e.protected {
            self.protected_sent = self.protected_sent.saturating_sub(1);
        }
        self.send_refusals = self.send_refusals.saturating_add(1);
        self.backlogged.note(now, self.has_data());
        true
    }

    /// The sender's own host signalled congestion: a local queue (a shaper on the sender's
    /// interface, the device queue) dropped or refused one of its packets for lack of room
    /// (`ENOBUFS`). Treated as a congestion signal at once, as Linux TCP enters CWR on a local
    /// drop: the allowed rate X is halved, not below s/t_mbi (RFC 5348 §4.4's reduction when
    /// the nofeedback timer expires), at most once per round-trip time R so that one overflow
    /// burst counts as one event (as §5.2 groups losses within one RTT into one loss event).
    /// The next feedback recomputes X from p and X_recv as usual. Call it in addition to
    /// [`Sender::on_send_refused`] for the refused packet. Ignored before the sender starts and
    /// after [`Sender::stop`].
    pub fn on_local_congestion(&mut self, now: Time) {
        if self.life != Lifecycle::Running {
            return;
        }
        self.local_congestion = self.local_congestion.saturating_add(1);
        let r = duration_from_secs_f64(self.rtt.r());
        if self
            .local_cut_at
            .is_some_and(|t| now.saturating_since(t) < r)
        {
            return;
        }
        self.local_cut_at = Some(now);
        self.x /= 2.0;
        if let RateControl::Ns2(_) = self.cfg.rate_control {
            self.ns2.oldrate = self.ns2.oldrate.min(self.x);
        }
        self.sanitize_x();
        self.reanchor(now);
    }

    /// Packets the host refused ([`Sender::on_send_refused`] calls that undid a packet).
    pub fn send_refusals(&self) -> u64 {
        self.send_refusals
    }

    /// Local congestion signals ([`Sender::on_local_congestion`] calls while running), whether
    /// or not they halved X.
    pub fn local_congestion_signals(&self) -> u64 {
        self.local_congestion
    }

    // ----- introspection -------------------------------------------------------------------

    /// Allowed rate X in bytes/s.
    pub fn rate(&self) -> f64 {
        self.x
    }

    /// Loss event rate p from the last feedback.
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }

    /// Smoothed RTT R, once measured.
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt
            .has_sample()
            .then(|| duration_from_secs_f64(self.rtt.r()))
    }

    /// Current t_RTO of the equation.
    pub fn t_rto(&self) -> Duration {
        duration_from_secs_f64(self.rtt.t_rto())
    }

    /// Whether the sender is in its initial slow start.
    pub fn in_slow_start(&self) -> bool {
        match self.cfg.rate_control {
            RateControl::Rfc5348(_) => self.p == 0.0,
            RateControl::Ns2(_) => self.ns2.phase == Ns2Phase::SlowStart,
        }
    }

    /// The TTL the next data packet will carry.
    pub fn ttl(&self) -> u8 {
        self.ttl.ttl()
    }

    /// Whether the data packet `hdr` (as [`Sender::poll_transmit`] returned it) must be
    /// protected under the configured [`crate::ttl::ProtectPolicy`] (E6): the simulator sets its
    /// packet's `protected` flag, the UDP transport seals it.
    pub fn protects(&self, hdr: &DataHeader) -> bool {
        self.cfg.protect.protects(hdr.initial_ttl)
    }

    /// The RTT a data packet carries (§3.2.1): R, or max(R, R_sample) under
    /// [`HeaderRtt::LatestSampleOrSmoothed`].
    fn header_rtt(&self) -> f64 {
        match (self.cfg.header_rtt, self.rtt.latest_sample()) {
            (HeaderRtt::LatestSampleOrSmoothed, Some(x)) => self.rtt.r().max(x),
            _ => self.rtt.r(),
        }
    }

    /// A snapshot for reports and live status.
    pub fn status(&self) -> SenderStatus {
        let x_inst = match self.cfg.pacing {
            Pacing::Ns2Timer
                if self.round > 2
                    && self.ns2.phase == Ns2Phase::SlowStart
                    && matches!(self.cfg.rate_control, RateControl::Ns2(r) if r.slow_increase)
                    && self.ns2.oldrate + SMALLFLOAT < self.x =>
            {
                self.ns2.oldrate
            }
            _ => self.x_inst(),
        };
        SenderStatus {
            x: self.x,
            x_inst,
            x_calc: self.x_calc,
            x_recv: self.last_x_recv,
            recv_limit: match self.cfg.rate_control {
                RateControl::Rfc5348(_) => {
                    let m = 2.0 * self.max_x_recv();
                    (m.is_finite() && self.life != Lifecycle::NotStarted).then_some(m)
                }
                RateControl::Ns2(_) => (self.ns2.maxrate > 0.0).then_some(self.ns2.maxrate),
            },
            p: self.p,
            rtt: self.rtt(),
            t_rto: self.t_rto(),
            slow_start: self.in_slow_start(),
            packets_sent: self.packets_sent,
            feedbacks: self.feedbacks,
            nofeedback_expiries: self.nofeedback_expiries,
            ttl_exceeded: self.ttl_exceeded,
            ttl: self.ttl.ttl(),
            protected_sent: self.protected_sent,
            link_error_rescales: self.link_error_rescales,
            backlog: self.veno.backlog(),
            random_losses: self.veno.random(),
            nofeedback_at: self.nfb_at,
            rtt_samples_refused: self.rtt_samples_refused,
            x_fast_max: self.faster.x_fast_max,
            lost_per_event: self.j,
        }
    }
}

/// §4.3 step 1's R_sample = (t_now − t_recvdata) − t_delay in seconds, or `None` when it is
/// implausible: the echoed timestamp is not in the past (t_recvdata ≥ t_now), or the receiver's
/// t_delay is at least the measured round trip. Either says a clock or a header is wrong, and a
/// sample of zero, floored to 1 µs, would make §4.5's X_inst = X·R_sqmean/sqrt(R_sample)
/// hundreds of times X (or a first R of 1 µs would start at W_init/1 µs). Such samples are
/// refused and counted (Linux DCCP clamps its samples for the same reason; QUIC, RFC 9002 §5.3,
/// never lets an ack delay take a sample below min_rtt). Positive samples are floored at
/// 1 µs so that R, t_ipi and the equation stay finite.
fn plausible_sample(now: Time, fb: &Feedback) -> Option<f64> {
    // An echo from the future measures zero (saturating), and so is refused below.
    let measured = now.saturating_since(fb.timestamp_echo);
    let sample = measured.checked_sub(fb.elapsed)?;
    (!sample.is_zero()).then(|| sample.as_secs_f64().max(MIN_SAMPLE))
}

/// `t + secs`, saturating; negative or NaN `secs` add nothing.
fn add_secs(t: Time, secs: f64) -> Time {
    t.saturating_add(duration_from_secs_f64(secs))
}

/// `t + gap`, at least one nanosecond later so that pacing always advances time.
fn add_gap(t: Time, gap: f64) -> Time {
    t.saturating_add(duration_from_secs_f64(gap).max(Duration::from_nanos(1)))
}

/// Helpers the sender's test modules share.
#[cfg(test)]
mod test_support {
    use super::*;

    /// `x` milliseconds as a [`Time`].
    pub(super) fn ms(x: u64) -> Time {
        Time::from_nanos(x * 1_000_000)
    }

    /// A feedback whose RTT sample is `now - echo` (t_delay = 0).
    pub(super) fn fb(echo: Time, x_recv: f64, p: f64) -> Feedback {
        Feedback {
            timestamp_echo: echo,
            elapsed: Duration::ZERO,
            x_recv,
            p,
            highest_seq: 0,
            hops: None,
            link_errors: 0,
            lost_per_event: 1.0,
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod variant_tests;

/// The send timer's expiry as a [`Time`]: `exact` seconds rounded to the nanosecond, at least
/// 1 ns after `now` so that pacing always advances time.
fn timer_time(now: Time, exact: f64) -> Time {
    Time::from_secs_f64(exact).max(now.saturating_add(Duration::from_nanos(1)))
}

/// Tests of the handshake RTT (§4.2), the capped oscillation policy and the nofeedback floor.
#[cfg(test)]
mod transport_tests {
    use super::*;
    use crate::profile::Profile;

    use super::test_support::{fb, ms};

    fn close(a: f64, b: f64) -> bool {
        ((a - b) / b).abs() <= 1e-12
    }

    /// §4.2 "the SYN exchange from the connection setup": an RTT before the data starts the
    /// sender at initial_rate = W_init/R (40 000 B/s at R = 100 ms) with tld = now and the
    /// nofeedback timer at max(4R, 2s/X) = 400 ms; the first feedback is then an ordinary one
    /// (§4.3 steps 4–5: it may double X once R has passed since tld), and its sample replaces R.
    #[test]
    fn rfc5348_s4_2_handshake_rtt_before_data() {
        let mut s = Sender::new(Profile::rfc5348().sender).unwrap();
        s.on_handshake_rtt(ms(0), Duration::from_millis(100));
        assert_eq!(s.rtt(), Some(Duration::from_millis(100)));
        s.set_infinite_backlog(ms(10));
        assert!(close(s.rate(), 40_000.0), "{}", s.rate());
        assert_eq!(s.tld, ms(10));
        assert_eq!(s.nfb_at, Some(ms(410)));
        let h = s.poll_transmit(ms(10)).unwrap();
        assert_eq!(h.rtt, Duration::from_millis(100), "R goes into the header");
        // Paced at s/X = 25 ms.
        assert_eq!(s.poll_transmit(ms(20)), None);
        assert!(s.poll_transmit(ms(35)).is_some());
        // First feedback, 120 ms after tld, X_recv = 0 (§6.3): slow start doubles.
        s.on_feedback(ms(130), &fb(ms(10), 0.0, 0.0));
        assert!(close(s.rate(), 80_000.0), "{}", s.rate());
        assert_eq!(s.rtt(), Some(Duration::from_millis(120)), "R = R_sample");
        assert_eq!(s.tld, ms(130));
        // A second handshake RTT, or one after feedback, is ignored.
        s.on_handshake_rtt(ms(140), Duration::from_millis(1));
        assert_eq!(s.rtt(), Some(Duration::from_millis(120)));
    }

    /// The handshake RTT may arrive after the first data (the sender then leaves s bytes/s for
    /// W_init/R at once); the NS-2 profile ignores it.
    #[test]
    fn handshake_rtt_after_start_and_ns2() {
        let mut s = Sender::new(Profile::rfc5348().sender).unwrap();
        s.set_infinite_backlog(ms(0));
        assert!(s.poll_transmit(ms(0)).is_some());
        assert_eq!(s.rate(), 1000.0);
        s.on_handshake_rtt(ms(5), Duration::from_millis(50));
        assert!(close(s.rate(), 80_000.0), "{}", s.rate());
        assert_eq!(s.nfb_at, Some(ms(205)));
        // No credit for the time at 1 segment/s: the next packet goes one new t_ipi (12.5 ms)
        // after the last, then every 12.5 ms.
        assert_eq!(s.poll_transmit(ms(5)), None);
        assert_eq!(
            s.poll_timeout(),
            Some(ms(0) + Duration::from_micros(12_500))
        );
        assert!(s.poll_transmit(ms(13)).is_some());
        assert_eq!(s.poll_transmit(ms(13)), None);
        let mut n = Sender::new(Profile::ns2().sender).unwrap();
        n.on_handshake_rtt(ms(0), Duration::from_millis(50));
        assert_eq!(n.rtt(), None);
        n.set_infinite_backlog(ms(0));
        assert_eq!(n.rate(), 300.0);
    }

    /// Without a handshake RTT a nofeedback expiry before any feedback is §4.4 case (a); with
    /// one, the sender has an RTT sample, so it is case (c) (p = 0: halve).
    #[test]
    fn rfc5348_s4_4_nofeedback_with_handshake_rtt() {
        let mut s = Sender::new(Profile::rfc5348().sender).unwrap();
        s.on_handshake_rtt(ms(0), Duration::from_millis(100));
        s.set_infinite_backlog(ms(0));
        while s.poll_transmit(ms(0)).is_some() {}
        s.on_timeout(ms(400));
        assert_eq!(s.status().nofeedback_expiries, 1);
        assert!(close(s.rate(), 20_000.0), "{}", s.rate());
    }

    /// `SqrtRttCapped` (not RFC 5348): X_inst = X·min(1, R_sqmean/sqrt(R_sample)). A sample far
    /// below the mean leaves X_inst at X (RFC: 10 × X here); one above it damps as §4.5 does.
    #[test]
    fn capped_oscillation_never_exceeds_x() {
        let mut cfg = Profile::rfc5348().sender;
        let mut rfc = Sender::new(cfg).unwrap();
        cfg.oscillation = Oscillation::SqrtRttCapped { q2: 0.9 };
        let mut cap = Sender::new(cfg).unwrap();
        for s in [&mut rfc, &mut cap] {
            s.set_infinite_backlog(ms(0));
            s.poll_transmit(ms(0));
            s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
            // A 1 ms sample after a 100 ms one.
            s.on_feedback(ms(301), &fb(ms(300), 1e9, 0.0));
        }
        let sqmean = 0.9 * 0.1f64.sqrt() + 0.1 * 0.001f64.sqrt();
        let f = sqmean / 0.001f64.sqrt();
        assert!(f > 9.0);
        assert!(close(rfc.status().x_inst, rfc.rate() * f));
        assert!(close(cap.status().x_inst, cap.rate()));
        // A sample above the mean damps both alike.
        for s in [&mut rfc, &mut cap] {
            s.on_feedback(ms(800), &fb(ms(400), 1e9, 0.0));
        }
        let sqmean = 0.9 * sqmean + 0.1 * 0.4f64.sqrt();
        let f = sqmean / 0.4f64.sqrt();
        assert!(f < 1.0);
        assert!(close(rfc.status().x_inst, rfc.rate() * f));
        assert!(close(cap.status().x_inst, cap.rate() * f));
        cfg.oscillation = Oscillation::SqrtRttCapped { q2: 1.0 };
        assert!(Sender::new(cfg).is_err());
    }

    /// §5.2: data packets carry R (RECOMMENDED); `LatestSampleOrSmoothed` (not the RFC's
    /// recommendation) carries max(R, latest R_sample), so a sample far above the lagging R
    /// reaches the receiver at once, and a sample below R changes nothing.
    #[test]
    fn header_rtt_policies() {
        let mut cfg = Profile::rfc5348().sender;
        let mut rfc = Sender::new(cfg).unwrap();
        cfg.header_rtt = HeaderRtt::LatestSampleOrSmoothed;
        let mut latest = Sender::new(cfg).unwrap();
        for s in [&mut rfc, &mut latest] {
            s.set_infinite_backlog(ms(0));
            assert_eq!(s.poll_transmit(ms(0)).unwrap().rtt, Duration::ZERO);
            s.on_feedback(ms(20), &fb(ms(0), 0.0, 0.0));
            // A queue builds: a 120 ms sample after a 20 ms one; R = 0.9·20 + 0.1·120 = 30 ms.
            s.on_feedback(ms(220), &fb(ms(100), 1e9, 0.0));
            assert_eq!(s.rtt(), Some(Duration::from_millis(30)));
        }
        let h = rfc.poll_transmit(ms(220)).unwrap();
        assert_eq!(h.rtt, Duration::from_millis(30));
        let h = latest.poll_transmit(ms(220)).unwrap();
        assert_eq!(h.rtt, Duration::from_millis(120));
        // The queue drains: a 10 ms sample; R = 28 ms is the larger.
        latest.on_feedback(ms(300), &fb(ms(290), 1e9, 0.0));
        assert_eq!(latest.rtt(), Some(Duration::from_millis(28)));
        latest.poll_transmit(ms(300));
        let h = latest.poll_transmit(ms(400)).unwrap();
        assert_eq!(h.rtt, Duration::from_millis(28));
    }

    /// `nofeedback_min` (not RFC 5348): the nofeedback timer is max(4R, 2s/X, floor) after a
    /// feedback and after an expiry; without it, §4.3 step 3's max(4R, 2s/X).
    #[test]
    fn nofeedback_floor() {
        let mut cfg = Profile::rfc5348().sender;
        let mut rfc = Sender::new(cfg).unwrap();
        cfg.nofeedback_min = Some(Duration::from_millis(100));
        let mut floor = Sender::new(cfg).unwrap();
        for s in [&mut rfc, &mut floor] {
            s.set_infinite_backlog(ms(0));
            s.poll_transmit(ms(0));
            // R = 1 ms: the first feedback sets X = W_init/R = 4 MB/s; at the second, 4R = 4 ms
            // dominates 2s/X = 0.5 ms.
            s.on_feedback(ms(1), &fb(ms(0), 0.0, 0.0));
            s.on_feedback(ms(3), &fb(ms(2), 0.0, 0.0));
        }
        assert_eq!(rfc.nfb_at, Some(ms(7)));
        assert_eq!(floor.nfb_at, Some(ms(103)));
        rfc.on_timeout(ms(7));
        assert_eq!(rfc.status().nofeedback_expiries, 1);
        assert_eq!(floor.poll_timeout().map(|t| t < ms(103)), Some(true));
        floor.on_timeout(ms(7));
        assert_eq!(floor.status().nofeedback_expiries, 0);
        floor.on_timeout(ms(103));
        assert_eq!(floor.status().nofeedback_expiries, 1);
        assert_eq!(floor.nfb_at, Some(ms(203)));
        cfg.nofeedback_min = Some(Duration::ZERO);
        assert!(Sender::new(cfg).is_err());
    }
}
