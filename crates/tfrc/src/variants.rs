//! The catalogue of seed-paper variants: each has a kebab-case name (used in scenario files and
//! on the command line), its paper and equation numbers, its parameters with defaults, and a
//! "reconstruction" mark; [`apply`] turns a list of choices into policy values of a [`Profile`].
//!
//! ```
//! use tfrc::variants::{self, VariantChoice};
//! use tfrc::Profile;
//!
//! let choices = [
//!     VariantChoice::new("adaptive-rtt").with("k", 16.0),
//!     "ali-ci-replace:t=2.58".parse().unwrap(),
//! ];
//! let profile = variants::apply(Profile::rfc5348(), &choices).unwrap();
//! assert!(profile.validate().is_ok());
//! assert!(variants::apply(Profile::rfc5348(), &[VariantChoice::new("red")]).is_err());
//! ```
//!
//! Every variant is a value of a policy enum of `SenderConfig`/`ReceiverConfig`; this module only
//! names them and checks combinations (`docs/variants.md` has the formulas and readings).

use core::fmt;
use core::str::FromStr;

use crate::classifier::{OwdClassifier, OwdClock};
use crate::gaimd::{
    combined_random_equation, simd_equation, simd_tcp_friendly_a, BacklogRule, GrowthCap, SimdCut,
    VenoRule,
};
use core::time::Duration;

use crate::equation::EquationForm;
use crate::loss_history::{IntervalTransform, ShortIntervals, ShortLossCount};
use crate::profile::{
    ConfigError, LossClassifier, LossMultiplicity, Profile, RateControl, Restart, SegmentPolicy,
};
use crate::rtt::{AdaptiveRtt, LinkErrorRto, LinkErrorSource, RttEstimator, SpikeThreshold};
use crate::ttl::{AdaptiveTtl, ProtectPolicy, TtlPolicy};

/// Seed 000's citation.
pub const SEED_000: &str = "seed 000: Reddy, Reddy & Padmavathamma, \"Efficient Traffic \
Engineering Strategies for Improving the Performance of TCP Friendly Rate Control Protocol\", \
Information 8(4), 2017";
/// Seed 002's citation.
pub const SEED_002: &str = "seed 002: Xu, Chu, Wu & Meng, \"An Improved TFRC Scheme for \
Wired/Wireless Hybrid Networks\", Information Technology Journal";
/// RFC 4828's citation (TFRC-SP).
pub const RFC_4828: &str = "RFC 4828: Floyd & Kohler, \"TCP Friendly Rate Control (TFRC): The \
Small-Packet (SP) Variant\", April 2007 (Experimental)";
/// Faster Restart's citation.
pub const FASTER_RESTART_06: &str = "draft-ietf-dccp-tfrc-faster-restart-06: Kohler, Floyd & \
Sathiaseelan, \"Faster Restart for TCP Friendly Rate Control (TFRC)\", July 2008";
/// MulTFRC's citation.
pub const MULTFRC_01: &str = "draft-irtf-iccrg-multfrc-01: Welzl, Damjanovic & Gjessing, \
\"MulTFRC: TFRC with weighted fairness\", July 2010";
/// Seed 003's citation.
pub const SEED_003: &str = "seed 003: Ishak, \"Performance Comparison and Analysis of \
TCP-Friendly Rate Control (TFRC) over the Network\", MSc thesis (front matter only)";

/// A variant of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// E1 `adaptive-rtt`.
    AdaptiveRtt,
    /// E2 `rto-link-error`.
    RtoLinkError,
    /// E3 `ali-ci-replace`.
    AliCiReplace,
    /// E3 `ali-ci-include`.
    AliCiInclude,
    /// E4 `ali-mean-replace`.
    AliMeanReplace,
    /// E4 `ali-mean-include`.
    AliMeanInclude,
    /// E5 `adaptive-ttl`.
    AdaptiveTtl,
    /// E6 `protect-raised-ttl`.
    ProtectRaisedTtl,
    /// E6 `protect-all`.
    ProtectAll,
    /// Seed 002 `owd-classifier`.
    OwdClassifier,
    /// V0 `general-equation`.
    GeneralEquation,
    /// V1 `veno`.
    Veno,
    /// V2 `simd`.
    Simd,
    /// V3 `veno-simd-055`.
    VenoSimd055,
    /// V3 `veno-simd-090`.
    VenoSimd090,
    /// RFC 4828 `tfrc-sp`.
    TfrcSp,
    /// draft-ietf-dccp-tfrc-faster-restart-06 `faster-restart`.
    FasterRestart,
    /// draft-irtf-iccrg-multfrc-01 `multfrc`.
    MulTfrc,
}

/// The admissible values of a parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamRange {
    /// Lower bound.
    pub min: f64,
    /// Upper bound (may be infinite).
    pub max: f64,
    /// The lower bound itself is excluded.
    pub min_exclusive: bool,
    /// The upper bound itself is excluded.
    pub max_exclusive: bool,
    /// Only whole numbers.
    pub integer: bool,
}

impl ParamRange {
    const fn closed(min: f64, max: f64) -> ParamRange {
        ParamRange {
            min,
            max,
            min_exclusive: false,
            max_exclusive: false,
            integer: false,
        }
    }
    const fn int(min: f64, max: f64) -> ParamRange {
        ParamRange {
            integer: true,
            ..ParamRange::closed(min, max)
        }
    }
    const fn open_max(min: f64, max: f64) -> ParamRange {
        ParamRange {
            max_exclusive: true,
            ..ParamRange::closed(min, max)
        }
    }
    const fn open(min: f64, max: f64) -> ParamRange {
        ParamRange {
            min_exclusive: true,
            max_exclusive: true,
            ..ParamRange::closed(min, max)
        }
    }
    const FLAG: ParamRange = ParamRange::int(0.0, 1.0);
    const NON_NEG: ParamRange = ParamRange::open_max(0.0, f64::INFINITY);
    const POSITIVE: ParamRange = ParamRange::open(0.0, f64::INFINITY);
    const FRACTION: ParamRange = ParamRange::open_max(0.0, 1.0);

    /// Whether `v` is admissible (never NaN or infinite).
    pub fn contains(&self, v: f64) -> bool {
        v.is_finite()
            && (if self.min_exclusive {
                v > self.min
            } else {
                v >= self.min
            })
            && (if self.max_exclusive {
                v < self.max
            } else {
                v <= self.max
            })
            && (!self.integer || v.fract() == 0.0)
    }
}

impl fmt::Display for ParamRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let open = if self.min_exclusive { '(' } else { '[' };
        let close = if self.max_exclusive { ')' } else { ']' };
        let max = if self.max.is_infinite() {
            "inf".to_string()
        } else {
            format!("{}", self.max)
        };
        write!(f, "{open}{}, {max}{close}", self.min)?;
        if self.integer {
            f.write_str(" integer")?;
        }
        Ok(())
    }
}

/// One parameter of a variant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    /// Name, as written in scenario files (`snake_case`).
    pub name: &'static str,
    /// Default value; `None` when the default is derived from other parameters or the
    /// parameter only takes effect when given (see `meaning`).
    pub default: Option<f64>,
    /// Admissible values.
    pub range: ParamRange,
    /// What it means.
    pub meaning: &'static str,
}

/// What the catalogue says about a variant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VariantInfo {
    /// The variant.
    pub variant: Variant,
    /// Kebab-case name.
    pub name: &'static str,
    /// Short label used in the seed papers' discussion (E1…E6, V0…V3, seed 002), or the
    /// document's short name (RFC 4828, FR-06, MulTFRC-01).
    pub label: &'static str,
    /// The paper or specification (one of [`SEED_000`], [`SEED_002`], [`SEED_003`],
    /// [`RFC_4828`], [`FASTER_RESTART_06`], [`MULTFRC_01`]).
    pub paper: &'static str,
    /// Section and equation numbers in the paper.
    pub equations: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// Parameters with defaults.
    pub params: &'static [Param],
    /// The paper's text could not be obtained; this follows `docs/variants.md`'s
    /// reconstruction.
    pub reconstruction: bool,
}

const P_Q: Param = Param {
    name: "q",
    default: Some(0.9),
    range: ParamRange::FRACTION,
    meaning: "weight of the old RTT estimate (RFC 5348: 0.9)",
};

const ADAPTIVE_RTT: &[Param] = &[
    P_Q,
    Param {
        name: "k",
        default: Some(8.0),
        range: ParamRange::int(2.0, 64.0),
        meaning: "RTT samples kept for max - min",
    },
    Param {
        name: "lt_fraction",
        default: Some(0.1),
        range: ParamRange::NON_NEG,
        meaning: "rise threshold Lt as a fraction of R_old",
    },
    Param {
        name: "lt_seconds",
        default: None,
        range: ParamRange::NON_NEG,
        meaning: "absolute rise threshold Lt in seconds; when given it replaces lt_fraction",
    },
];

const RTO_LINK_ERROR: &[Param] = &[Param {
    name: "spike",
    default: Some(0.0),
    range: ParamRange::FLAG,
    meaning: "1: paper-literal eq. 4 first line, R_new also gets max - min of the last 8 \
              samples (the adaptive-rtt k when selected)",
}];

const CI: &[Param] = &[Param {
    name: "t",
    default: Some(1.96),
    range: ParamRange::NON_NEG,
    meaning: "confidence coefficient (1.96: 95%)",
}];

const ADAPTIVE_TTL: &[Param] = &[
    Param {
        name: "a",
        default: Some(0.75),
        range: ParamRange::open_max(0.5, 1.0),
        meaning: "weight of the newest path-length observation (0.5 <= a < 1)",
    },
    Param {
        name: "ttl_min",
        default: Some(32.0),
        range: ParamRange::int(1.0, 255.0),
        meaning: "TTL_min, also the TTL before any observation (NS-2's TTL)",
    },
    Param {
        name: "ttl_max",
        default: Some(255.0),
        range: ParamRange::int(1.0, 255.0),
        meaning: "TTL_max",
    },
    Param {
        name: "margin",
        default: Some(1.0),
        range: ParamRange::int(0.0, 8.0),
        meaning: "added to a feedback's hop count to form an observation (0: paper-literal \
                  h = hops)",
    },
];

const PROTECT_RAISED: &[Param] = &[Param {
    name: "baseline",
    default: Some(32.0),
    range: ParamRange::int(0.0, 255.0),
    meaning: "fixed-TTL baseline: packets sent with a TTL above it are protected",
}];

const OWD: &[Param] = &[
    Param {
        name: "a",
        default: Some(0.95),
        range: ParamRange::FRACTION,
        meaning: "EWMA weight of the old average one-way delay",
    },
    Param {
        name: "k_frac",
        default: Some(0.1),
        range: ParamRange::NON_NEG,
        meaning: "K as a fraction of the average delay; congestion iff eta > k_frac/(1-a) + 1",
    },
    Param {
        name: "offset_clock",
        default: Some(0.0),
        range: ParamRange::FLAG,
        meaning: "1: unsynchronised clocks, SLD - min(SLD) + minRTT/2 (use over real networks)",
    },
];

const GENERAL: &[Param] = &[
    Param {
        name: "alpha",
        default: Some(1.0),
        range: ParamRange::POSITIVE,
        meaning: "additive increase in packets per RTT",
    },
    Param {
        name: "gamma",
        default: Some(0.5),
        range: ParamRange::FRACTION,
        meaning: "fraction of the window kept on a loss event",
    },
    Param {
        name: "k_to",
        default: Some(1.0),
        range: ParamRange::NON_NEG,
        meaning: "weight of the timeout term",
    },
];

const P_THRESHOLD: Param = Param {
    name: "threshold",
    default: Some(3.0),
    range: ParamRange::NON_NEG,
    meaning: "backlog N below which losses count as random (packets)",
};
const P_MIN_SAMPLES: Param = Param {
    name: "min_samples",
    default: Some(3.0),
    range: ParamRange::int(1.0, 1000.0),
    meaning: "RTT samples needed (since BaseRTT was reset) before the backlog rule applies",
};
const P_KTO_RANDOM: Param = Param {
    name: "k_to",
    default: Some(1.0),
    range: ParamRange::NON_NEG,
    meaning: "timeout-term weight of the random-loss equation (the knob that would close the \
              gap to the paper's claimed 3x)",
};

const VENO: &[Param] = &[
    Param {
        name: "gamma_random",
        default: Some(0.8),
        range: ParamRange::FRACTION,
        meaning: "fraction of the window kept on a random loss",
    },
    Param {
        name: "alpha_random",
        default: Some(1.0),
        range: ParamRange::POSITIVE,
        meaning: "additive increase of the random-loss equation",
    },
    P_THRESHOLD,
    P_MIN_SAMPLES,
    P_KTO_RANDOM,
];

const SIMD: &[Param] = &[
    Param {
        name: "beta",
        default: Some(0.5),
        range: ParamRange::open(0.0, 1.0),
        meaning: "multiplicative decrease: the window loses this fraction on a loss",
    },
    Param {
        name: "a",
        default: None,
        range: ParamRange::POSITIVE,
        meaning: "SIMD increase parameter; default the TCP-friendly (81/4)b(1-b)/(3-2b)^2 \
                  (1.265625 at beta = 0.5)",
    },
    Param {
        name: "k_to",
        default: Some(0.0),
        range: ParamRange::NON_NEG,
        meaning: "timeout-term weight (X_SIMD has none)",
    },
    Param {
        name: "cap",
        default: Some(1.0),
        range: ParamRange::FLAG,
        meaning: "1: cap the growth of X between loss events at the SIMD trajectory",
    },
];

const COMBINED_055: &[Param] = &[
    Param {
        name: "beta",
        default: Some(0.55),
        range: ParamRange::open(0.0, 1.0),
        meaning: "fraction of the window kept on a random loss (gamma of the random-loss \
                  equation)",
    },
    Param {
        name: "cut_is_beta",
        default: Some(0.0),
        range: ParamRange::FLAG,
        meaning: "1: alpha_SIMD computed for a cut of beta instead of 1 - beta",
    },
    P_THRESHOLD,
    P_MIN_SAMPLES,
    P_KTO_RANDOM,
];

const COMBINED_090: &[Param] = &[
    Param {
        name: "beta",
        default: Some(0.90),
        ..COMBINED_055[0]
    },
    COMBINED_055[1],
    P_THRESHOLD,
    P_MIN_SAMPLES,
    P_KTO_RANDOM,
];

const TFRC_SP: &[Param] = &[
    Param {
        name: "nominal_segment",
        default: Some(1460.0),
        range: ParamRange::int(1.0, 65535.0),
        meaning: "nominal segment size s of the equation in bytes (RFC 4828: 1460, or the \
                  path's MSS if known and smaller)",
    },
    Param {
        name: "header",
        default: Some(40.0),
        range: ParamRange::int(0.0, 65535.0),
        meaning: "H, header bytes per packet: the rate is multiplied by s/(s + H) \
                  (RFC 4828: 40)",
    },
    Param {
        name: "min_interval",
        default: Some(0.010),
        range: ParamRange::closed(0.0, 60.0),
        meaning: "Min Interval between data packets in seconds (RFC 4828: 10 ms)",
    },
    Param {
        name: "counting",
        default: Some(0.0),
        range: ParamRange::FLAG,
        meaning: "losses in a short interval: 0 = all (RFC 4828 §3), 1 = gradual \
                  (Appendix C)",
    },
    Param {
        name: "short_rtts",
        default: None,
        range: ParamRange::open(0.0, 64.0),
        meaning: "an interval is short when it lasts at most this many RTTs; default 2 \
                  (RFC 4828 §3), 3 with counting = 1 (Appendix C)",
    },
    Param {
        name: "exclude_open",
        default: Some(1.0),
        range: ParamRange::FLAG,
        meaning: "1: a short current interval I_0 stays out of the average (RFC 4828 §3); \
                  0: it counts its losses like a closed one",
    },
];

const FASTER_RESTART: &[Param] = &[Param {
    name: "decay_time",
    default: Some(120.0),
    range: ParamRange::closed(1e-3, 86_400.0),
    meaning: "DecayTime in seconds: X_fast_max is the full old rate for this long, then decays \
              linearly to zero at 3 x DecayTime (draft default: 2 minutes)",
}];

const MULTFRC: &[Param] = &[Param {
    name: "n",
    default: Some(1.0),
    range: ParamRange::closed(1e-3, 1e6),
    meaning: "N, the number of TFRC flows emulated (any positive real; below 1 less \
              aggressive than one TFRC)",
}];

const INFOS: &[VariantInfo] = &[
    VariantInfo {
        variant: Variant::AdaptiveRtt,
        name: "adaptive-rtt",
        label: "E1",
        paper: SEED_000,
        equations: "§3.1, pseudo-code (3)",
        summary: "smoothed RTT plus max - min of the last k samples when a sample rises by \
                  more than Lt; RTO = 4R",
        params: ADAPTIVE_RTT,
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::RtoLinkError,
        name: "rto-link-error",
        label: "E2",
        paper: SEED_000,
        equations: "§3.1, eq. (4) (after TCP-WELCOME, ref. [24])",
        summary: "after a loss classified as a link error, RTO_new = (R_new/R_old)*RTO_old; \
                  needs owd-classifier or a Veno variant",
        params: RTO_LINK_ERROR,
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::AliCiReplace,
        name: "ali-ci-replace",
        label: "E3",
        paper: SEED_000,
        equations: "§3.2.1, eq. (5)-(7)",
        summary: "average loss interval with the smallest/largest interval replaced by the \
                  confidence interval's ends",
        params: CI,
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::AliCiInclude,
        name: "ali-ci-include",
        label: "E3",
        paper: SEED_000,
        equations: "§3.2.1, eq. (5), (6), (8)",
        summary: "average loss interval with the confidence interval's ends appended as two \
                  oldest entries",
        params: CI,
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::AliMeanReplace,
        name: "ali-mean-replace",
        label: "E4",
        paper: SEED_000,
        equations: "§3.2.2, eq. (9)",
        summary: "average loss interval with the smallest and largest interval replaced by the \
                  mean",
        params: &[],
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::AliMeanInclude,
        name: "ali-mean-include",
        label: "E4",
        paper: SEED_000,
        equations: "§3.2.2, eq. (5), (10)",
        summary: "average loss interval with the mean appended as the oldest entry",
        params: &[],
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::AdaptiveTtl,
        name: "adaptive-ttl",
        label: "E5",
        paper: SEED_000,
        equations: "§3.3, eq. (11)",
        summary: "TTL from the two latest path-length observations plus their trend, \
                  clamped to [TTL_min, TTL_max]; time-exceeded notices raise it",
        params: ADAPTIVE_TTL,
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::ProtectRaisedTtl,
        name: "protect-raised-ttl",
        label: "E6",
        paper: SEED_000,
        equations: "§3.3 (text after eq. (11))",
        summary: "protect every data packet sent with a TTL above the fixed baseline",
        params: PROTECT_RAISED,
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::ProtectAll,
        name: "protect-all",
        label: "E6",
        paper: SEED_000,
        equations: "§3.3 (text after eq. (11))",
        summary: "protect every data packet",
        params: &[],
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::OwdClassifier,
        name: "owd-classifier",
        label: "seed 002",
        paper: SEED_002,
        equations: "eq. (4), (9) and eta",
        summary: "receiver classifies a loss as congestion iff SLD_j/avgSLD_(j-1) > \
                  K/(1-a) + 1; wireless losses stay out of the loss history",
        params: OWD,
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::GeneralEquation,
        name: "general-equation",
        label: "V0",
        paper: SEED_003,
        equations: "GAIMD equation X(alpha, gamma, k_to) (Padhye, Yang & Lam)",
        summary: "the sender's equation with additive increase alpha, kept fraction gamma and \
                  timeout weight k_to; (1, 0.5, 1) is RFC 5348",
        params: GENERAL,
        reconstruction: true,
    },
    VariantInfo {
        variant: Variant::Veno,
        name: "veno",
        label: "V1",
        paper: SEED_003,
        equations: "TFRC-Veno (Zhou, Fu & Li, ICNP 2007), backlog N of TCP Veno",
        summary: "X(1, 0.8) while the backlog N = (X_recv/s)(R_cur - BaseRTT) < 3, RFC 5348 \
                  otherwise",
        params: VENO,
        reconstruction: true,
    },
    VariantInfo {
        variant: Variant::Simd,
        name: "simd",
        label: "V2",
        paper: SEED_003,
        equations: "TFRC-SIMD (after Jin, Guo, Matta & Bestavros), X_SIMD",
        summary: "X_SIMD as the equation, growth between loss events capped at the SIMD window \
                  trajectory",
        params: SIMD,
        reconstruction: true,
    },
    VariantInfo {
        variant: Variant::VenoSimd055,
        name: "veno-simd-055",
        label: "V3",
        paper: SEED_003,
        equations: "thesis §3.3 'Enhancement of Equation', beta = 0.55",
        summary: "Veno whose random-loss equation is X(alpha_SIMD, beta), beta = 0.55",
        params: COMBINED_055,
        reconstruction: true,
    },
    VariantInfo {
        variant: Variant::VenoSimd090,
        name: "veno-simd-090",
        label: "V3",
        paper: SEED_003,
        equations: "thesis §3.3 'Enhancement of Equation', beta = 0.90",
        summary: "Veno whose random-loss equation is X(alpha_SIMD, beta), beta = 0.90",
        params: COMBINED_090,
        reconstruction: true,
    },
    VariantInfo {
        variant: Variant::TfrcSp,
        name: "tfrc-sp",
        label: "RFC 4828",
        paper: RFC_4828,
        equations: "§3 (nominal segment, header correction, short loss intervals, Min \
                    Interval), Appendix C",
        summary: "TFRC for small packets: the equation with a 1460-byte segment times s/(s + H), \
                  losses counted in intervals of at most 2 RTTs, at most one packet per 10 ms",
        params: TFRC_SP,
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::FasterRestart,
        name: "faster-restart",
        label: "FR-06",
        paper: FASTER_RESTART_06,
        equations: "§3.1 (X_active_recv, X_fast_max, recv_limit), §3.2 (recover_rate)",
        summary: "after idle, not below twice the initial rate, and quadruple per RTT up to the \
                  last loss-free receive rate (decaying over DecayTime); rfc5348 rate control \
                  only",
        params: FASTER_RESTART,
        reconstruction: false,
    },
    VariantInfo {
        variant: Variant::MulTfrc,
        name: "multfrc",
        label: "MulTFRC-01",
        paper: MULTFRC_01,
        equations: "§2 equation X(N, j); j, packets lost per loss event, reported by the \
                    receiver",
        summary: "the rate of N TFRC flows in one: MulTFRC's equation with the receiver's \
                  weighted mean of packets lost per loss event",
        params: MULTFRC,
        reconstruction: true,
    },
];

impl Variant {
    /// Every variant, in catalogue order.
    pub const ALL: [Variant; 18] = [
        Variant::AdaptiveRtt,
        Variant::RtoLinkError,
        Variant::AliCiReplace,
        Variant::AliCiInclude,
        Variant::AliMeanReplace,
        Variant::AliMeanInclude,
        Variant::AdaptiveTtl,
        Variant::ProtectRaisedTtl,
        Variant::ProtectAll,
        Variant::OwdClassifier,
        Variant::GeneralEquation,
        Variant::Veno,
        Variant::Simd,
        Variant::VenoSimd055,
        Variant::VenoSimd090,
        Variant::TfrcSp,
        Variant::FasterRestart,
        Variant::MulTfrc,
    ];

    /// The catalogue entry.
    pub fn info(self) -> &'static VariantInfo {
        // INFOS is in the order of ALL; fall back to a search so a reordering cannot misname.
        INFOS
            .iter()
            .find(|i| i.variant == self)
            .unwrap_or(&INFOS[0])
    }

    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The policy dimension the variant sets; two variants of one dimension conflict.
    fn slot(self) -> &'static str {
        match self {
            Variant::AdaptiveRtt => "the RTT estimator",
            Variant::RtoLinkError => "the link-error RTO rule",
            Variant::AliCiReplace
            | Variant::AliCiInclude
            | Variant::AliMeanReplace
            | Variant::AliMeanInclude => "the average-loss-interval transform",
            Variant::AdaptiveTtl => "the TTL policy",
            Variant::ProtectRaisedTtl | Variant::ProtectAll => "the protection policy",
            Variant::OwdClassifier => "the loss classifier",
            Variant::GeneralEquation
            | Variant::Veno
            | Variant::Simd
            | Variant::VenoSimd055
            | Variant::VenoSimd090
            | Variant::MulTfrc => "the throughput equation",
            Variant::TfrcSp => "the segment size of the equation",
            Variant::FasterRestart => "the restart rule",
        }
    }

    fn is_veno(self) -> bool {
        matches!(
            self,
            Variant::Veno | Variant::VenoSimd055 | Variant::VenoSimd090
        )
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Variant {
    type Err = VariantError;

    /// The kebab-case name (ASCII case-insensitive, surrounding blanks ignored).
    fn from_str(s: &str) -> Result<Variant, VariantError> {
        let want = s.trim().to_ascii_lowercase();
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == want)
            .ok_or_else(|| VariantError::UnknownVariant(s.to_string()))
    }
}

/// A variant chosen by name with parameter overrides, as a scenario file or `--variant` gives it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VariantChoice {
    /// The variant's name.
    pub name: String,
    /// Parameter overrides `(name, value)`; unnamed parameters keep their defaults.
    pub params: Vec<(String, f64)>,
}

impl VariantChoice {
    /// A choice of `name` with default parameters.
    pub fn new(name: impl Into<String>) -> VariantChoice {
        VariantChoice {
            name: name.into(),
            params: Vec::new(),
        }
    }

    /// The same choice with parameter `param` set to `value`.
    pub fn with(mut self, param: impl Into<String>, value: f64) -> VariantChoice {
        self.params.push((param.into(), value));
        self
    }
}

impl FromStr for VariantChoice {
    type Err = VariantError;

    /// `name` or `name:param=value,param=value` (the command-line form).
    fn from_str(s: &str) -> Result<VariantChoice, VariantError> {
        let (name, rest) = match s.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (s, None),
        };
        let mut c = VariantChoice::new(name.trim());
        for kv in rest.into_iter().flat_map(|r| r.split(',')) {
            let Some((k, v)) = kv.split_once('=') else {
                return Err(VariantError::Syntax(s.to_string()));
            };
            let v: f64 = v
                .trim()
                .parse()
                .map_err(|_| VariantError::Syntax(s.to_string()))?;
            c.params.push((k.trim().to_string(), v));
        }
        Ok(c)
    }
}

/// Why a list of variant choices cannot be applied.
#[derive(Clone, Debug, PartialEq)]
pub enum VariantError {
    /// No variant has this name.
    UnknownVariant(String),
    /// The variant has no such parameter.
    UnknownParameter {
        /// Variant name.
        variant: &'static str,
        /// The parameter given.
        parameter: String,
    },
    /// A parameter was given twice.
    DuplicateParameter {
        /// Variant name.
        variant: &'static str,
        /// The parameter.
        parameter: &'static str,
    },
    /// A parameter value outside its range.
    OutOfRange {
        /// Variant name.
        variant: &'static str,
        /// The parameter.
        parameter: &'static str,
        /// The value given.
        value: f64,
        /// The admissible values.
        range: ParamRange,
    },
    /// The same variant chosen twice.
    Duplicate(&'static str),
    /// Two variants set the same policy.
    Conflict {
        /// The first variant.
        first: &'static str,
        /// The second variant.
        second: &'static str,
        /// The policy both set.
        policy: &'static str,
    },
    /// A variant needs another that was not chosen.
    Requires {
        /// The variant.
        variant: &'static str,
        /// What it needs.
        needs: &'static str,
    },
    /// A choice string is not `name[:param=value,...]`.
    Syntax(String),
    /// The resulting profile is invalid (for example ttl_min > ttl_max).
    Config(ConfigError),
}

impl fmt::Display for VariantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VariantError::UnknownVariant(n) => {
                write!(f, "unknown variant '{n}' (known: ")?;
                for (i, v) in Variant::ALL.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(v.name())?;
                }
                f.write_str(")")
            }
            VariantError::UnknownParameter { variant, parameter } => {
                write!(f, "variant {variant} has no parameter '{parameter}'")
            }
            VariantError::DuplicateParameter { variant, parameter } => {
                write!(f, "variant {variant}: parameter {parameter} given twice")
            }
            VariantError::OutOfRange {
                variant,
                parameter,
                value,
                range,
            } => write!(
                f,
                "variant {variant}: {parameter} = {value} is outside {range}"
            ),
            VariantError::Duplicate(v) => write!(f, "variant {v} chosen twice"),
            VariantError::Conflict {
                first,
                second,
                policy,
            } => write!(f, "variants {first} and {second} both set {policy}"),
            VariantError::Requires { variant, needs } => {
                write!(f, "variant {variant} needs {needs}")
            }
            VariantError::Syntax(s) => {
                write!(f, "'{s}' is not of the form name[:param=value,...]")
            }
            VariantError::Config(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for VariantError {}

impl From<ConfigError> for VariantError {
    fn from(e: ConfigError) -> Self {
        VariantError::Config(e)
    }
}

/// A choice resolved against the catalogue: every parameter's value (`None`: unset optional).
struct Resolved {
    variant: Variant,
    values: Vec<Option<f64>>,
}

impl Resolved {
    fn get(&self, name: &str) -> Option<f64> {
        let params = self.variant.info().params;
        params
            .iter()
            .position(|p| p.name == name)
            .and_then(|i| self.values.get(i).copied().flatten())
    }

    /// A parameter that has a default (the catalogue guarantees one for these names).
    fn num(&self, name: &str) -> f64 {
        self.get(name).unwrap_or(0.0)
    }

    fn flag(&self, name: &str) -> bool {
        self.num(name) != 0.0
    }
}

fn resolve(choice: &VariantChoice) -> Result<Resolved, VariantError> {
    let variant: Variant = choice.name.parse()?;
    let info = variant.info();
    let mut values: Vec<Option<f64>> = info.params.iter().map(|p| p.default).collect();
    let mut given = vec![false; info.params.len()];
    for (k, v) in &choice.params {
        let key = k.trim();
        let Some(i) = info.params.iter().position(|p| p.name == key) else {
            return Err(VariantError::UnknownParameter {
                variant: info.name,
                parameter: k.clone(),
            });
        };
        let p = &info.params[i];
        if given[i] {
            return Err(VariantError::DuplicateParameter {
                variant: info.name,
                parameter: p.name,
            });
        }
        if !p.range.contains(*v) {
            return Err(VariantError::OutOfRange {
                variant: info.name,
                parameter: p.name,
                value: *v,
                range: p.range,
            });
        }
        given[i] = true;
        values[i] = Some(*v);
    }
    Ok(Resolved { variant, values })
}

/// Apply `choices` to `profile`: each variant sets its policy values; unknown names or
/// parameters, out-of-range values, two variants of one policy and missing prerequisites are
/// typed errors, and the result is validated. With no choices the profile is returned unchanged.
pub fn apply(profile: Profile, choices: &[VariantChoice]) -> Result<Profile, VariantError> {
    let resolved = choices.iter().map(resolve).collect::<Result<Vec<_>, _>>()?;
    for (i, a) in resolved.iter().enumerate() {
        for b in &resolved[..i] {
            if a.variant == b.variant {
                return Err(VariantError::Duplicate(a.variant.name()));
            }
            if a.variant.slot() == b.variant.slot() {
                return Err(VariantError::Conflict {
                    first: b.variant.name(),
                    second: a.variant.name(),
                    policy: a.variant.slot(),
                });
            }
        }
    }
    let has = |f: fn(Variant) -> bool| resolved.iter().any(|r| f(r.variant));
    let mut p = profile;
    for r in &resolved {
        set(
            &mut p,
            r,
            has(|v| v == Variant::OwdClassifier),
            has(Variant::is_veno),
        )?;
    }
    p.validate()?;
    Ok(p)
}

/// Set the policy values of one resolved variant.
fn set(p: &mut Profile, r: &Resolved, owd: bool, veno: bool) -> Result<(), VariantError> {
    let s = &mut p.sender;
    match r.variant {
        Variant::AdaptiveRtt => {
            let threshold = match r.get("lt_seconds") {
                Some(secs) => SpikeThreshold::Seconds(secs),
                None => SpikeThreshold::FractionOfR(r.num("lt_fraction")),
            };
            s.rtt = RttEstimator::Adaptive(AdaptiveRtt {
                q: r.num("q"),
                k: r.num("k") as usize,
                threshold,
            });
        }
        Variant::RtoLinkError => {
            // The receiver's classifier when there is one, else the Veno backlog rule.
            let source = if owd {
                LinkErrorSource::Receiver
            } else if veno {
                LinkErrorSource::VenoBacklog
            } else {
                return Err(VariantError::Requires {
                    variant: r.variant.name(),
                    needs: "a loss classifier: owd-classifier, veno, veno-simd-055 or \
                            veno-simd-090",
                });
            };
            s.link_error_rto = LinkErrorRto::Rescale {
                source,
                spike: r.flag("spike"),
            };
        }
        Variant::AliCiReplace => {
            p.receiver.averaging.transform = IntervalTransform::ConfidenceReplace { t: r.num("t") }
        }
        Variant::AliCiInclude => {
            p.receiver.averaging.transform = IntervalTransform::ConfidenceInclude { t: r.num("t") }
        }
        Variant::AliMeanReplace => p.receiver.averaging.transform = IntervalTransform::MeanReplace,
        Variant::AliMeanInclude => p.receiver.averaging.transform = IntervalTransform::MeanInclude,
        Variant::AdaptiveTtl => {
            s.ttl = TtlPolicy::Adaptive(AdaptiveTtl {
                a: r.num("a"),
                min: r.num("ttl_min") as u8,
                max: r.num("ttl_max") as u8,
                margin: r.num("margin") as u8,
            });
        }
        Variant::ProtectRaisedTtl => {
            s.protect = ProtectPolicy::AboveBaseline(r.num("baseline") as u8)
        }
        Variant::ProtectAll => s.protect = ProtectPolicy::All,
        Variant::OwdClassifier => {
            p.receiver.classifier = LossClassifier::OneWayDelay(OwdClassifier {
                a: r.num("a"),
                k_frac: r.num("k_frac"),
                clock: if r.flag("offset_clock") {
                    OwdClock::MinOffset
                } else {
                    OwdClock::Synchronized
                },
            });
        }
        // Seed 003 changes the sender only ("receiver unchanged"); the profile's clamp and cap
        // (NS-2's p_to_b) are kept.
        Variant::GeneralEquation => {
            s.equation.alpha = r.num("alpha");
            s.equation.gamma = r.num("gamma");
            s.equation.k_to = r.num("k_to");
        }
        Variant::Veno => {
            let mut random = s.equation;
            random.alpha = r.num("alpha_random");
            random.gamma = r.num("gamma_random");
            random.k_to = r.num("k_to");
            s.backlog = BacklogRule::Veno(VenoRule {
                random,
                threshold: r.num("threshold"),
                min_samples: r.num("min_samples") as u32,
            });
        }
        Variant::Simd => {
            let beta = r.num("beta");
            let a = r.get("a").unwrap_or_else(|| simd_tcp_friendly_a(beta));
            let e = simd_equation(beta, a, r.num("k_to"));
            s.equation.alpha = e.alpha;
            s.equation.gamma = e.gamma;
            s.equation.k_to = e.k_to;
            if r.flag("cap") {
                s.growth_cap = GrowthCap::Simd { a };
            }
        }
        Variant::TfrcSp => {
            let nominal = r.num("nominal_segment") as u32;
            let header = r.num("header") as u32;
            let segment = SegmentPolicy::Nominal { nominal, header };
            s.segment = segment;
            let mi = r.num("min_interval");
            s.min_interval = (mi > 0.0).then(|| Duration::from_secs_f64(mi));
            let gradual = r.flag("counting");
            let rtts = r
                .get("short_rtts")
                .unwrap_or(if gradual { 3.0 } else { 2.0 });
            p.receiver.averaging.short_intervals = ShortIntervals::Rfc4828 {
                rtts,
                counting: if gradual {
                    ShortLossCount::Gradual
                } else {
                    ShortLossCount::All
                },
                exclude_open: r.flag("exclude_open"),
            };
            // RFC 4828 §2: the first loss interval is computed "using the segment size of 1460
            // bytes"; the receiver inverts the same rate function as the sender.
            p.receiver.first_interval.segment = segment;
        }
        Variant::FasterRestart => {
            let RateControl::Rfc5348(rules) = &mut s.rate_control else {
                return Err(VariantError::Requires {
                    variant: r.variant.name(),
                    needs: "RFC 5348 rate control (the rfc5348 profile): Faster Restart \
                            rewrites RFC 5348 §4.3 step 4 and §4.4, which NS-2's rules do not \
                            have",
                });
            };
            rules.restart = Restart::Faster {
                decay: Duration::from_secs_f64(r.num("decay_time")),
            };
        }
        Variant::MulTfrc => {
            let form = EquationForm::MulTfrc { n: r.num("n") };
            s.equation.form = form;
            // The receiver's §6.3.1 inversion uses the same N-flow equation (with j = 1).
            p.receiver.first_interval.equation.form = form;
            p.receiver.loss_multiplicity = LossMultiplicity::WeightedMean;
        }
        Variant::VenoSimd055 | Variant::VenoSimd090 => {
            let cut = if r.flag("cut_is_beta") {
                SimdCut::Beta
            } else {
                SimdCut::OneMinusBeta
            };
            let e = combined_random_equation(r.num("beta"), cut);
            let mut random = s.equation;
            random.alpha = e.alpha;
            random.gamma = e.gamma;
            random.k_to = r.num("k_to");
            s.backlog = BacklogRule::Veno(VenoRule {
                random,
                threshold: r.num("threshold"),
                min_samples: r.num("min_samples") as u32,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
