//! Profiles: one sender and one receiver implementation, configured by policy values.
//!
//! Every behaviour that differs between RFC 5348 and NS-2.35's Agent/TFRC + Agent/TFRCSink (and,
//! later, between the seed variants) is a field of [`SenderConfig`] or [`ReceiverConfig`] whose
//! type is a small closed enum. [`Profile::rfc5348`] and [`Profile::ns2`] are two values of these
//! structs; `docs/tfrc-core.md` tabulates them.

use core::fmt;
use core::str::FromStr;
use core::time::Duration;

pub use crate::classifier::{OwdClassifier, OwdClock};
use crate::equation::Equation;
pub use crate::gaimd::{BacklogRule, GrowthCap, VenoRule};
use crate::loss_history::{Averaging, IntervalTransform};
pub use crate::rtt::{LinkErrorRto, LinkErrorSource};
use crate::rtt::{RtoPolicy, RttEstimator, SpikeThreshold, TcpRto, MAX_RTT_WINDOW};
pub use crate::ttl::{AdaptiveTtl, ProtectPolicy, TtlPolicy};
use crate::wire;

/// The initial window W_init that sets the first rate W_init/R (RFC 5348 §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InitialWindow {
    /// RFC 5348 §4.2: "W_init = min(4*MSS, max(2*MSS, 4380))", in bytes (with MSS = s).
    Rfc3390Bytes,
    /// NS-2.35 `rate_init_option_` 2: whole packets, 4 if s ≤ 1095, 3 if s < 2190, else 2
    /// (`docs/tfrc-core.md` N2).
    Rfc3390Packets,
    /// NS-2.35 `rate_init_option_` 1: a fixed number of packets (`rate_init_`).
    Packets(f64),
}

impl InitialWindow {
    /// W_init in packets of `s` bytes.
    pub fn packets(&self, s: u32) -> f64 {
        let sf = f64::from(s.max(1));
        match *self {
            InitialWindow::Rfc3390Bytes => (4.0 * sf).min((2.0 * sf).max(4380.0)) / sf,
            InitialWindow::Rfc3390Packets => {
                if s <= 1095 {
                    4.0
                } else if s < 2190 {
                    3.0
                } else {
                    2.0
                }
            }
            InitialWindow::Packets(n) => n,
        }
    }
}

/// The allowed rate before the first feedback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StartRate {
    /// RFC 5348 §4.2: "the value of X is set to s bytes per second".
    OneSegmentPerSecond,
    /// NS-2.35 `InitRate_` (300 B/s; `docs/tfrc-core.md` N1).
    BytesPerSecond(f64),
}

/// The nofeedback timer before the first feedback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StartTimer {
    /// RFC 5348 §4.2: "the nofeedback timer is set to expire after two seconds".
    Fixed(Duration),
    /// NS-2.35: `2*size_/rate_`, a number of packet intervals at the start rate.
    PacketIntervals(f64),
}

/// Start-up behaviour (RFC 5348 §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Startup {
    /// Rate before the first feedback.
    pub rate: StartRate,
    /// Nofeedback timer before the first feedback.
    pub timer: StartTimer,
}

/// RFC 5348 §4.3/§4.4/§8.2 rate control: X_recv_set, recv_limit, slow start doubling once per R,
/// the nofeedback cases (a)–(e) and the data-limited rules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rfc5348Rules {
    /// t_mbi, the maximum backoff interval: the rate never falls below s/t_mbi (64 s).
    pub t_mbi: Duration,
    /// Entries kept in X_recv_set (§8.2.2: N = 3 suffices).
    pub x_recv_set_len: usize,
    /// Detect data-limited intervals (§8.2.1) and apply §4.3's data-limited branches.
    pub data_limited: bool,
    /// How the sender recovers after idle and data-limited periods: RFC 5348's rules, or
    /// draft-ietf-dccp-tfrc-faster-restart-06's Faster Restart.
    pub restart: Restart,
}

/// Recovery after idle or data-limited periods under [`RateControl::Rfc5348`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Restart {
    /// RFC 5348 §4.3 step 4 and §4.4: recv_limit = 2·max(X_recv_set), an idle sender is not
    /// halved below initial_rate, slow start doubles per RTT.
    Rfc5348,
    /// Faster Restart (draft-ietf-dccp-tfrc-faster-restart-06 §3, `docs/variants.md`): recv_limit
    /// is doubled once more up to X_fast_max (the sender quadruples per RTT up to the highest
    /// loss-free receive rate, decaying with its age), and an idle sender is not halved below
    /// twice initial_rate.
    Faster {
        /// DecayTime (default two minutes): X_fast_max is the full X_active_recv for this long
        /// after it was measured, then falls linearly to zero at three times it.
        decay: Duration,
    },
}

/// The segment size the throughput equation uses (RFC 5348 §3.1's s, or RFC 4828's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SegmentPolicy {
    /// The flow's own segment size (RFC 5348 §4.1).
    Actual,
    /// TFRC-SP (RFC 4828 §3): the equation uses the `nominal` segment size (1460 B) and the
    /// result is multiplied by s_true/(s_true + `header`), so the allowed rate counts header
    /// bytes too. The equation is linear in s, so this is the equation with the effective
    /// segment `nominal`·s_true/(s_true + header) ([`SegmentPolicy::equation_segment`]).
    Nominal {
        /// The nominal segment size s (RFC 4828: 1460 bytes, or the path's MSS if smaller).
        nominal: u32,
        /// H, the expected bytes of network and transport headers per packet (RFC 4828: 40).
        header: u32,
    },
}

impl SegmentPolicy {
    /// The s to put into the equation for a flow of true segment size `s_true` bytes:
    /// `s_true`, or RFC 4828 §3's "X := X * s_true / (s_true + H)" folded into s.
    pub fn equation_segment(&self, s_true: f64) -> f64 {
        match *self {
            SegmentPolicy::Actual => s_true,
            SegmentPolicy::Nominal { nominal, header } => {
                let st = s_true.max(0.0);
                let denom = st + f64::from(header);
                if denom > 0.0 {
                    f64::from(nominal) * st / denom
                } else {
                    0.0
                }
            }
        }
    }
}

/// NS-2.35 Agent/TFRC rate control (`docs/tfrc-core.md` N2–N14).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ns2Rules {
    /// `ssmult_`: slow-start multiplier per RTT (2).
    pub ssmult: f64,
    /// `slow_increase_`: ramp the pacing rate linearly within each slow-start RTT.
    pub slow_increase: bool,
    /// `idleFix_`: data-limited senders are not held below the initial rate.
    pub idle_fix: bool,
    /// `oldCode_`: the pre-2002 data-limited behaviour (no immediate send on new data).
    pub old_code: bool,
    /// `maxHeavyRounds_`: rounds allowed above max(2·X_recv, s/R) when decreasing (0).
    pub max_heavy_rounds: u32,
}

impl Ns2Rules {
    /// NS-2.35 defaults.
    pub const DEFAULT: Ns2Rules = Ns2Rules {
        ssmult: 2.0,
        slow_increase: true,
        idle_fix: true,
        old_code: false,
        max_heavy_rounds: 0,
    };
}

/// How the sender turns feedback and timer expiries into an allowed rate.
///
/// These rules are one dimension because they share state: recv_limit feeds slow start and
/// congestion avoidance, and the nofeedback response rewrites X_recv_set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateControl {
    /// RFC 5348 §4.3–§4.4, §8.2.
    Rfc5348(Rfc5348Rules),
    /// NS-2.35 Agent/TFRC.
    Ns2(Ns2Rules),
}

/// Oscillation damping (RFC 5348 §4.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Oscillation {
    /// Send at X.
    Off,
    /// "X_inst = X * R_sqmean / sqrt(R_sample)" with R_sqmean an EWMA of weight `q2`
    /// (RFC 5348: 0.9; NS-2.35 uses `df_` = 0.95, `docs/tfrc-core.md` N9/N13).
    SqrtRtt {
        /// Weight of the old R_sqmean.
        q2: f64,
    },
    /// §4.5's formula, but X_inst never exceeds X: `X_inst = X * min(1, R_sqmean /
    /// sqrt(R_sample))`. **Departs from RFC 5348**, which lets X_inst rise above X when the
    /// latest sample is below the long-term mean. §4.5 argues that "because we are using square
    /// roots, there is generally only a moderate difference between X_inst and X"; that holds
    /// while the RTT is dominated by propagation delay. On a path whose RTT is almost all
    /// queueing (0.1 ms empty, 100 ms full) one empty-queue sample makes X_inst 25–30 × X for a
    /// whole feedback interval. Linux CCID-3 never let X_inst exceed X
    /// (`docs/tfrc-core.md`, "Options beyond both profiles"); this is that choice.
    SqrtRttCapped {
        /// Weight of the old R_sqmean (RFC 5348: 0.9).
        q2: f64,
    },
}

/// The RTT a data packet carries to the receiver (RFC 5348 §3.2.1), which groups losses into
/// loss events with it (§5.2), runs its feedback timer on it (§6) and inverts the equation with
/// it for the first loss interval (§6.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderRtt {
    /// The smoothed R of §4.3 step 2: §5.2 "it is RECOMMENDED to use the sender's calculated
    /// RTT, R".
    Smoothed,
    /// max(R, the latest R_sample). **Departs from RFC 5348's RECOMMENDED choice**, which §5.2
    /// allows ("TFRC is not sensitive to how the RTT measurement sent to the receiver is
    /// made"). While a queue builds, R (q = 0.9, one sample per feedback) lags the RTT the
    /// packets actually see, several-fold on a deep buffer; the receiver then splits what TCP
    /// treats as one loss event ("one or more packets lost … in an RTT") into several, and
    /// seeds the first loss interval with an R the sender has already left behind.
    LatestSampleOrSmoothed,
}

/// Packet scheduling (RFC 5348 §4.6, §8.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pacing {
    /// RFC 5348 §4.6: nominal send times t_(i+1) = t_i + t_ipi; a packet may leave
    /// t_delta = min(t_ipi, t_gran, R)/2 early (§8.3); unused send times are kept as credit for
    /// up to `credit_rtts` round-trip times (RFC: at most 1).
    Nominal {
        /// Scheduler granularity t_gran (zero in a simulator).
        t_gran: Duration,
        /// Credit window in RTTs (0 disables credits).
        credit_rtts: f64,
    },
    /// NS-2.35: a send timer re-armed after each packet with the gap at that moment; no credit
    /// and no early sending (`docs/tfrc-core.md` N15). Immediate sends on feedback and timer
    /// expiry.
    Ns2Timer,
}

/// Everything that configures a [`crate::Sender`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderConfig {
    /// Segment size s in bytes, without IP/transport headers (RFC 5348 §4.1).
    pub segment_size: u32,
    /// The throughput equation (§3.1).
    pub equation: Equation,
    /// Smoothed RTT (§4.3 step 2).
    pub rtt: RttEstimator,
    /// t_RTO in the equation (§3.1).
    pub t_rto: RtoPolicy,
    /// W_init (§4.2).
    pub initial_window: InitialWindow,
    /// Rate and timer before the first feedback (§4.2).
    pub startup: Startup,
    /// Rate control rules (§4.3, §4.4, §8.2).
    pub rate_control: RateControl,
    /// The nofeedback interval is max(nofeedback_rtts·R, 2s/X): RFC 5348 §4.3 step 3 uses 4,
    /// NS-2.35 uses 2 (`docs/tfrc-core.md` N12).
    pub nofeedback_rtts: f64,
    /// Oscillation damping (§4.5).
    pub oscillation: Oscillation,
    /// A lower bound on the nofeedback interval: the timer is restarted after
    /// max(nofeedback_rtts·R, 2s/X, nofeedback_min). `None` (both presets) is RFC 5348 §4.3
    /// step 3 / §4.4. `Some` **departs from RFC 5348**: on a LAN, max(4R, 2s/X) is a fraction
    /// of a millisecond and expires between feedbacks (`docs/tfrc-core.md`, "Options beyond both
    /// profiles"); Linux CCID-3 bounded it below by 100 ms (`CONFIG_IP_DCCP_CCID3_RTO`).
    pub nofeedback_min: Option<Duration>,
    /// The RTT written into data packets (§3.2.1, §5.2).
    pub header_rtt: HeaderRtt,
    /// Packet scheduling (§4.6).
    pub pacing: Pacing,
    /// IP TTL of data packets (E5 adds [`TtlPolicy::Adaptive`]).
    pub ttl: TtlPolicy,
    /// Which data packets are protected (E6); the caller seals them.
    pub protect: ProtectPolicy,
    /// t_RTO after a feedback that reports a link-error loss (E2).
    pub link_error_rto: LinkErrorRto,
    /// Switch to a random-loss equation while the backlog is small (seed 003 V1/V3).
    pub backlog: BacklogRule,
    /// Cap on the growth of X between loss events (seed 003 V2).
    pub growth_cap: GrowthCap,
    /// The segment size of the throughput equation (TFRC-SP uses RFC 4828's nominal size).
    pub segment: SegmentPolicy,
    /// The least time between two data packets: `None` (RFC 5348), or RFC 4828 §3's Min
    /// Interval (10 ms) for TFRC-SP. No packet leaves earlier, immediate sends and send credits
    /// included.
    pub min_interval: Option<Duration>,
}

/// How the receiver decides a packet is lost (RFC 5348 §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossDetection {
    /// A packet is lost once this many packets with higher sequence numbers have arrived
    /// (RFC: NDUPACK = 3; NS-2.35: `numPkts_` = 1).
    pub ndupack: u32,
    /// A late packet removes its loss again (§5.1); NS-2.35 never undoes a loss
    /// (`docs/tfrc-core.md` N16).
    pub late_fill: bool,
}

/// The clock used to place losses in time when grouping them into events (RFC 5348 §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventClock {
    /// §5.2: interpolated receiver arrival times.
    ReceiverArrival,
    /// NS-2.35: interpolated sender timestamps (`docs/tfrc-core.md` N17).
    SenderTimestamp,
}

/// Target rate for the synthetic first loss interval (RFC 5348 §6.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstTarget {
    /// RFC 5348: "the maximum value of X_recv so far".
    MaxXRecv,
    /// RFC 3448 / NS-2.35: the X_recv of the last RTT (`docs/tfrc-core.md` N21).
    LastXRecv,
}

/// How the throughput equation is inverted for the first loss interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inversion {
    /// [`Equation::invert`]: bisection to machine precision.
    Exact,
    /// [`Equation::invert_ns2`]: NS-2's `b_to_p`, first p within ±5%.
    Ns2Bisection,
}

/// What starts the first loss interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstTrigger {
    /// RFC 5348 §6.3.1: the first detected loss event.
    FirstLossEvent,
    /// NS-2.35 `adjust_history`: the first sequence gap (or ECN mark); the history restarts and
    /// its first interval counts from the last report (`docs/tfrc-core.md` N21).
    FirstGap,
}

/// The synthetic first loss interval (RFC 5348 §6.3.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FirstInterval {
    /// Which X_recv is the target.
    pub target: FirstTarget,
    /// How the equation is inverted.
    pub inversion: Inversion,
    /// The equation the receiver inverts.
    pub equation: Equation,
    /// §6.3.1's rules "X_target = 0.5/R packets/s if the first data packet is lost" and "0.5/R is
    /// the minimum X_target" (absent in NS-2.35).
    pub null_interval_rule: bool,
    /// The segment size the inverted equation uses: the sender's (RFC 5348) or TFRC-SP's
    /// nominal one (RFC 4828 §2: "TFRC-SP uses the segment size of 1460 bytes").
    pub segment: SegmentPolicy,
    /// What triggers it.
    pub trigger: FirstTrigger,
}

/// When the receiver sends feedback (RFC 5348 §6).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FeedbackPolicy {
    /// §6.1–§6.3: a timer at R_m; expire early when p rises or the last expiry sent nothing;
    /// feedback for every packet until an RTT estimate arrives.
    Rfc5348,
    /// NS-2.35 (`docs/tfrc-core.md` N22): report on an arrival at least R/`per_rtt` after the last
    /// one, on every packet flagged urgent, on a new loss event; a backup timer at
    /// `backup_factor`·R/`per_rtt`.
    Ns2 {
        /// Backup timer in RTTs (1.5).
        backup_factor: f64,
        /// `NumFeedback_` reports per RTT (1).
        per_rtt: f64,
    },
}

/// How the receiver measures X_recv.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XRecvEstimator {
    /// RFC 5348 §6.2: bytes received in the previous R_(m-1) seconds.
    Rfc5348,
    /// NS-2.35 `est_thput`: packets since the last report over the time since it, or packets
    /// in the last R if the report is less than R old; in packets/s times s (`docs/tfrc-core.md`
    /// N23).
    Ns2,
}

/// Loss classification at the receiver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossClassifier {
    /// Every loss is congestion.
    None,
    /// Seed 002's one-way-delay rule: losses classified as wireless stay out of the loss
    /// history and are counted in the feedback's `link_errors`.
    OneWayDelay(OwdClassifier),
}

/// Everything that configures a [`crate::Receiver`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReceiverConfig {
    /// Loss detection (§5.1).
    pub loss_detection: LossDetection,
    /// Clock for loss-event grouping (§5.2).
    pub event_clock: EventClock,
    /// NS-2 `PreciseLoss_`: a new loss event also needs a newer sender round.
    pub round_gate: bool,
    /// Average loss interval (§5.4, §5.5).
    pub averaging: Averaging,
    /// First loss interval (§6.3.1).
    pub first_interval: FirstInterval,
    /// Feedback timing (§6).
    pub feedback: FeedbackPolicy,
    /// X_recv measurement (§6.2).
    pub x_recv: XRecvEstimator,
    /// Loss classification.
    pub classifier: LossClassifier,
    /// Whether feedback reports j, the packets lost per loss event (MulTFRC).
    pub loss_multiplicity: LossMultiplicity,
}

/// j, the average number of packets lost (or marked) per loss event, which MulTFRC's equation
/// needs (draft-irtf-iccrg-multfrc-01, `docs/variants.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossMultiplicity {
    /// Not measured: feedback reports j = 1 (RFC 5348 needs no j).
    Off,
    /// The mean of the lost-or-marked packet counts of the most recent n loss events, weighted
    /// with §5.4's weights, the newest event first (reading, `docs/variants.md`).
    WeightedMean,
}

/// Header bytes a profile puts on the wire around the segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireOverhead {
    /// Bytes added to each data packet's segment.
    pub data_header: u32,
    /// Size of a feedback packet.
    pub feedback: u32,
}

/// Which preset a profile was built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProfileKind {
    /// RFC 5348.
    Rfc5348,
    /// NS-2.35's Agent/TFRC and Agent/TFRCSink with default parameters (the seed papers'
    /// "classical TFRC").
    Ns2,
}

impl ProfileKind {
    /// The name accepted by [`Profile::from_str`].
    pub fn name(self) -> &'static str {
        match self {
            ProfileKind::Rfc5348 => "rfc5348",
            ProfileKind::Ns2 => "ns2",
        }
    }
}

/// A complete TFRC configuration: sender, receiver and wire overhead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// The preset this was built from (variants change fields, not the kind).
    pub kind: ProfileKind,
    /// Sender configuration.
    pub sender: SenderConfig,
    /// Receiver configuration.
    pub receiver: ReceiverConfig,
    /// Wire overhead.
    pub overhead: WireOverhead,
}

impl Profile {
    /// RFC 5348 with its recommended values, s = 1000 B.
    pub fn rfc5348() -> Profile {
        Profile {
            kind: ProfileKind::Rfc5348,
            sender: SenderConfig {
                segment_size: 1000,
                equation: Equation::RFC5348,
                rtt: RttEstimator::Ewma { q: 0.9 },
                t_rto: RtoPolicy::RttMultiple {
                    multiple: 4.0,
                    floor: Duration::ZERO,
                },
                initial_window: InitialWindow::Rfc3390Bytes,
                startup: Startup {
                    rate: StartRate::OneSegmentPerSecond,
                    timer: StartTimer::Fixed(Duration::from_secs(2)),
                },
                rate_control: RateControl::Rfc5348(Rfc5348Rules {
                    t_mbi: Duration::from_secs(64),
                    x_recv_set_len: 3,
                    data_limited: true,
                    restart: Restart::Rfc5348,
                }),
                nofeedback_rtts: 4.0,
                oscillation: Oscillation::SqrtRtt { q2: 0.9 },
                nofeedback_min: None,
                header_rtt: HeaderRtt::Smoothed,
                pacing: Pacing::Nominal {
                    t_gran: Duration::ZERO,
                    credit_rtts: 1.0,
                },
                ttl: TtlPolicy::Fixed(32),
                protect: ProtectPolicy::Off,
                link_error_rto: LinkErrorRto::Off,
                backlog: BacklogRule::Off,
                growth_cap: GrowthCap::Off,
                segment: SegmentPolicy::Actual,
                min_interval: None,
            },
            receiver: ReceiverConfig {
                loss_detection: LossDetection {
                    ndupack: 3,
                    late_fill: true,
                },
                event_clock: EventClock::ReceiverArrival,
                round_gate: false,
                averaging: Averaging::RFC5348,
                first_interval: FirstInterval {
                    target: FirstTarget::MaxXRecv,
                    inversion: Inversion::Exact,
                    equation: Equation::RFC5348,
                    null_interval_rule: true,
                    trigger: FirstTrigger::FirstLossEvent,
                    segment: SegmentPolicy::Actual,
                },
                feedback: FeedbackPolicy::Rfc5348,
                x_recv: XRecvEstimator::Rfc5348,
                classifier: LossClassifier::None,
                loss_multiplicity: LossMultiplicity::Off,
            },
            overhead: WireOverhead {
                data_header: wire::DATA_HEADER_LEN as u32,
                feedback: wire::FEEDBACK_LEN as u32,
            },
        }
    }

    /// NS-2.35's Agent/TFRC + Agent/TFRCSink with default parameters (`docs/tfrc-core.md` N0–N24).
    pub fn ns2() -> Profile {
        Profile {
            kind: ProfileKind::Ns2,
            sender: SenderConfig {
                segment_size: 1000,
                equation: Equation::NS2,
                rtt: RttEstimator::Ewma { q: 0.95 },
                t_rto: RtoPolicy::TcpTicks(TcpRto::NS2),
                initial_window: InitialWindow::Rfc3390Packets,
                startup: Startup {
                    rate: StartRate::BytesPerSecond(300.0),
                    timer: StartTimer::PacketIntervals(2.0),
                },
                rate_control: RateControl::Ns2(Ns2Rules::DEFAULT),
                nofeedback_rtts: 2.0,
                oscillation: Oscillation::SqrtRtt { q2: 0.95 },
                nofeedback_min: None,
                header_rtt: HeaderRtt::Smoothed,
                pacing: Pacing::Ns2Timer,
                ttl: TtlPolicy::Fixed(32),
                protect: ProtectPolicy::Off,
                link_error_rto: LinkErrorRto::Off,
                backlog: BacklogRule::Off,
                growth_cap: GrowthCap::Off,
                segment: SegmentPolicy::Actual,
                min_interval: None,
            },
            receiver: ReceiverConfig {
                loss_detection: LossDetection {
                    ndupack: 1,
                    late_fill: false,
                },
                event_clock: EventClock::SenderTimestamp,
                round_gate: true,
                averaging: Averaging::NS2,
                first_interval: FirstInterval {
                    target: FirstTarget::LastXRecv,
                    inversion: Inversion::Ns2Bisection,
                    equation: Equation::NS2,
                    null_interval_rule: false,
                    trigger: FirstTrigger::FirstGap,
                    segment: SegmentPolicy::Actual,
                },
                feedback: FeedbackPolicy::Ns2 {
                    backup_factor: 1.5,
                    per_rtt: 1.0,
                },
                x_recv: XRecvEstimator::Ns2,
                classifier: LossClassifier::None,
                loss_multiplicity: LossMultiplicity::Off,
            },
            // `docs/tfrc-core.md` N24: `useHeaders_` adds `headersize_` = 32 B to each data packet;
            // the TFRCSink's `packetSize_` is 40 B.
            overhead: WireOverhead {
                data_header: 32,
                feedback: 40,
            },
        }
    }

    /// The preset for `kind`.
    pub fn preset(kind: ProfileKind) -> Profile {
        match kind {
            ProfileKind::Rfc5348 => Profile::rfc5348(),
            ProfileKind::Ns2 => Profile::ns2(),
        }
    }

    /// The same profile with segment size `s` bytes.
    pub fn with_segment_size(mut self, s: u32) -> Profile {
        self.sender.segment_size = s;
        self
    }

    /// Bytes of a full data packet on the wire: s plus the profile's header.
    pub fn data_wire_len(&self) -> u32 {
        self.sender
            .segment_size
            .saturating_add(self.overhead.data_header)
    }

    /// Bytes of a feedback packet on the wire.
    pub fn feedback_wire_len(&self) -> u32 {
        self.overhead.feedback
    }

    /// Check every parameter, and that the sender and receiver policies fit together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.sender.validate()?;
        self.receiver.validate()?;
        if let LinkErrorRto::Rescale {
            source: LinkErrorSource::Receiver,
            ..
        } = self.sender.link_error_rto
        {
            if self.receiver.classifier == LossClassifier::None {
                return Err(ConfigError::Incompatible(
                    "link_error_rto needs a receiver loss classifier (E2 never fires without one)",
                ));
            }
        }
        Ok(())
    }
}

/// A configuration value out of range, or an unknown profile name.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigError {
    /// The segment size must be at least one byte.
    SegmentSize,
    /// A numeric parameter is outside its range.
    Parameter {
        /// Which parameter.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// `Profile::from_str` got an unknown name.
    UnknownProfile(String),
    /// Two policies that cannot work together.
    Incompatible(&'static str),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::SegmentSize => f.write_str("segment size must be at least 1 byte"),
            ConfigError::Parameter { name, value } => {
                write!(f, "parameter {name} = {value} is out of range")
            }
            ConfigError::UnknownProfile(s) => {
                write!(
                    f,
                    "unknown TFRC profile '{s}' (expected 'rfc5348' or 'ns2')"
                )
            }
            ConfigError::Incompatible(why) => write!(f, "incompatible policies: {why}"),
        }
    }
}

impl std::error::Error for ConfigError {}

fn check(name: &'static str, value: f64, ok: bool) -> Result<(), ConfigError> {
    if ok && !value.is_nan() {
        Ok(())
    } else {
        Err(ConfigError::Parameter { name, value })
    }
}

fn check_equation(eq: &Equation) -> Result<(), ConfigError> {
    check("equation.b", eq.b, eq.b > 0.0 && eq.b.is_finite())?;
    check(
        "equation.alpha",
        eq.alpha,
        eq.alpha > 0.0 && eq.alpha.is_finite(),
    )?;
    check("equation.gamma", eq.gamma, (0.0..1.0).contains(&eq.gamma))?;
    check(
        "equation.k_to",
        eq.k_to,
        eq.k_to >= 0.0 && eq.k_to.is_finite(),
    )?;
    check("equation.max_rate", eq.max_rate, eq.max_rate > 0.0)?;
    if let crate::equation::EquationForm::MulTfrc { n } = eq.form {
        check("equation.n", n, n > 0.0 && n <= 1e6)?;
    }
    Ok(())
}

impl SenderConfig {
    /// Check every parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.segment_size == 0 {
            return Err(ConfigError::SegmentSize);
        }
        check_equation(&self.equation)?;
        match self.rtt {
            RttEstimator::Ewma { q } => check("rtt.q", q, (0.0..1.0).contains(&q))?,
            RttEstimator::Adaptive(a) => {
                check("rtt.q", a.q, (0.0..1.0).contains(&a.q))?;
                check("rtt.k", a.k as f64, (2..=MAX_RTT_WINDOW).contains(&a.k))?;
                let lt = match a.threshold {
                    SpikeThreshold::Seconds(s) => s,
                    SpikeThreshold::FractionOfR(f) => f,
                };
                check("rtt.threshold", lt, lt >= 0.0 && lt.is_finite())?;
            }
        }
        if let TtlPolicy::Adaptive(t) = self.ttl {
            check("ttl.a", t.a, (0.5..1.0).contains(&t.a))?;
            check("ttl.min", f64::from(t.min), t.min >= 1)?;
            check("ttl.max", f64::from(t.max), t.max >= t.min)?;
        }
        if let BacklogRule::Veno(v) = self.backlog {
            check_equation(&v.random)?;
            check(
                "backlog.threshold",
                v.threshold,
                v.threshold >= 0.0 && v.threshold.is_finite(),
            )?;
        }
        if let GrowthCap::Simd { a } = self.growth_cap {
            check("growth_cap.a", a, a > 0.0 && a.is_finite())?;
        }
        if let LinkErrorRto::Rescale {
            source: LinkErrorSource::VenoBacklog,
            ..
        } = self.link_error_rto
        {
            if self.backlog == BacklogRule::Off {
                return Err(ConfigError::Incompatible(
                    "link_error_rto from the Veno backlog needs backlog = Veno",
                ));
            }
        }
        match self.t_rto {
            RtoPolicy::RttMultiple { multiple, .. } => check(
                "t_rto.multiple",
                multiple,
                multiple >= 0.0 && multiple.is_finite(),
            )?,
            RtoPolicy::TcpTicks(c) => {
                check("t_rto.tick", c.tick.as_secs_f64(), !c.tick.is_zero())?;
                check("t_rto.srtt_bits", f64::from(c.srtt_bits), c.srtt_bits <= 16)?;
                check(
                    "t_rto.rttvar_bits",
                    f64::from(c.rttvar_bits),
                    (1..=c.srtt_bits).contains(&c.rttvar_bits),
                )?;
                check(
                    "t_rto.rttvar_exp",
                    f64::from(c.rttvar_exp),
                    c.rttvar_exp <= 16,
                )?;
            }
        }
        if let InitialWindow::Packets(n) = self.initial_window {
            check("initial_window", n, n > 0.0 && n.is_finite())?;
        }
        if let StartRate::BytesPerSecond(r) = self.startup.rate {
            check("startup.rate", r, r > 0.0 && r.is_finite())?;
        }
        match self.startup.timer {
            StartTimer::Fixed(d) => check("startup.timer", d.as_secs_f64(), !d.is_zero())?,
            StartTimer::PacketIntervals(k) => check("startup.timer", k, k > 0.0 && k.is_finite())?,
        }
        match self.rate_control {
            RateControl::Rfc5348(r) => {
                check("t_mbi", r.t_mbi.as_secs_f64(), !r.t_mbi.is_zero())?;
                check(
                    "x_recv_set_len",
                    r.x_recv_set_len as f64,
                    (1..=64).contains(&r.x_recv_set_len),
                )?;
            }
            RateControl::Ns2(r) => {
                check("ssmult", r.ssmult, r.ssmult >= 1.0 && r.ssmult.is_finite())?;
            }
        }
        check(
            "nofeedback_rtts",
            self.nofeedback_rtts,
            self.nofeedback_rtts > 0.0 && self.nofeedback_rtts.is_finite(),
        )?;
        if let Oscillation::SqrtRtt { q2 } | Oscillation::SqrtRttCapped { q2 } = self.oscillation {
            check("oscillation.q2", q2, (0.0..1.0).contains(&q2))?;
        }
        if let Some(m) = self.nofeedback_min {
            check(
                "nofeedback_min",
                m.as_secs_f64(),
                !m.is_zero() && m <= Duration::from_secs(3600),
            )?;
        }
        if let Pacing::Nominal { credit_rtts, .. } = self.pacing {
            check(
                "pacing.credit_rtts",
                credit_rtts,
                credit_rtts >= 0.0 && credit_rtts.is_finite(),
            )?;
        }
        check_segment(&self.segment)?;
        if let Some(m) = self.min_interval {
            check(
                "min_interval",
                m.as_secs_f64(),
                m <= Duration::from_secs(60),
            )?;
        }
        if let RateControl::Rfc5348(Rfc5348Rules {
            restart: Restart::Faster { decay },
            ..
        }) = self.rate_control
        {
            check(
                "restart.decay",
                decay.as_secs_f64(),
                !decay.is_zero() && decay <= Duration::from_secs(86_400),
            )?;
        }
        Ok(())
    }
}

fn check_segment(seg: &SegmentPolicy) -> Result<(), ConfigError> {
    if let SegmentPolicy::Nominal { nominal, header } = *seg {
        check("segment.nominal", f64::from(nominal), nominal >= 1)?;
        check("segment.header", f64::from(header), header <= 65_535)?;
    }
    Ok(())
}

impl ReceiverConfig {
    /// Check every parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check(
            "loss_detection.ndupack",
            f64::from(self.loss_detection.ndupack),
            self.loss_detection.ndupack >= 1,
        )?;
        let n = self.averaging.n;
        check(
            "averaging.n",
            n as f64,
            (1..=crate::loss_history::MAX_N).contains(&n),
        )?;
        if let crate::loss_history::Discounting::On { threshold, .. } = self.averaging.discount {
            check(
                "discount.threshold",
                threshold,
                (0.0..=1.0).contains(&threshold),
            )?;
        }
        match self.averaging.transform {
            IntervalTransform::ConfidenceReplace { t }
            | IntervalTransform::ConfidenceInclude { t } => {
                check("averaging.t", t, t >= 0.0 && t.is_finite())?;
            }
            IntervalTransform::Plain
            | IntervalTransform::MeanReplace
            | IntervalTransform::MeanInclude => {}
        }
        if let LossClassifier::OneWayDelay(c) = self.classifier {
            check("classifier.a", c.a, (0.0..1.0).contains(&c.a))?;
            check(
                "classifier.k_frac",
                c.k_frac,
                c.k_frac >= 0.0 && c.k_frac.is_finite(),
            )?;
        }
        check_equation(&self.first_interval.equation)?;
        check_segment(&self.first_interval.segment)?;
        if let crate::loss_history::ShortIntervals::Rfc4828 { rtts, .. } =
            self.averaging.short_intervals
        {
            check(
                "averaging.short_intervals.rtts",
                rtts,
                rtts > 0.0 && rtts <= 64.0,
            )?;
        }
        if let FeedbackPolicy::Ns2 {
            backup_factor,
            per_rtt,
        } = self.feedback
        {
            check(
                "feedback.backup_factor",
                backup_factor,
                backup_factor > 0.0 && backup_factor.is_finite(),
            )?;
            check(
                "feedback.per_rtt",
                per_rtt,
                per_rtt > 0.0 && per_rtt.is_finite(),
            )?;
        }
        Ok(())
    }
}

impl FromStr for Profile {
    type Err = ConfigError;

    /// "rfc5348" or "ns2" (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Profile, ConfigError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "rfc5348" => Ok(Profile::rfc5348()),
            "ns2" => Ok(Profile::ns2()),
            _ => Err(ConfigError::UnknownProfile(s.to_string())),
        }
    }
}

impl FromStr for ProfileKind {
    type Err = ConfigError;

    /// "rfc5348" or "ns2" (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<ProfileKind, ConfigError> {
        Profile::from_str(s).map(|p| p.kind)
    }
}

impl fmt::Display for ProfileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 5348 §4.2: W_init = min(4*MSS, max(2*MSS, 4380)); NS-2 rounds to 4/3/2 packets.
    #[test]
    fn rfc5348_s4_2_initial_window() {
        assert_eq!(InitialWindow::Rfc3390Bytes.packets(1000), 4.0);
        assert!((InitialWindow::Rfc3390Bytes.packets(1200) - 3.65).abs() < 1e-12);
        assert_eq!(InitialWindow::Rfc3390Bytes.packets(3000), 2.0);
        assert_eq!(InitialWindow::Rfc3390Packets.packets(1095), 4.0);
        assert_eq!(InitialWindow::Rfc3390Packets.packets(1200), 3.0);
        assert_eq!(InitialWindow::Rfc3390Packets.packets(2190), 2.0);
    }

    #[test]
    fn presets_validate_and_parse() {
        for name in ["rfc5348", "ns2", "NS2", " Rfc5348 "] {
            let p: Profile = name.parse().unwrap();
            p.validate().unwrap();
            assert_eq!(p.kind.name(), name.trim().to_ascii_lowercase());
        }
        assert_eq!(
            "tcp".parse::<Profile>(),
            Err(ConfigError::UnknownProfile("tcp".into()))
        );
        assert_eq!(Profile::ns2().data_wire_len(), 1032);
        assert_eq!(Profile::ns2().feedback_wire_len(), 40);
        assert_eq!(
            Profile::rfc5348().data_wire_len(),
            1000 + wire::DATA_HEADER_LEN as u32
        );
    }

    #[test]
    fn invalid_parameters_are_typed_errors() {
        let mut p = Profile::rfc5348();
        p.sender.segment_size = 0;
        assert_eq!(p.validate(), Err(ConfigError::SegmentSize));
        let mut p = Profile::rfc5348();
        p.sender.rtt = RttEstimator::Ewma { q: 1.0 };
        assert!(matches!(
            p.validate(),
            Err(ConfigError::Parameter { name: "rtt.q", .. })
        ));
        let mut p = Profile::ns2();
        p.receiver.loss_detection.ndupack = 0;
        assert!(p.validate().is_err());
        let mut p = Profile::ns2();
        p.sender.equation.gamma = f64::NAN;
        assert!(p.validate().is_err());
    }
}
