//! Round-trip time estimation at the sender: the smoothed RTT R (RFC 5348 §4.3 step 2), the
//! long-term mean of sqrt(R_sample) for oscillation damping (§4.5), and the t_RTO that goes
//! into the throughput equation (§3.1).
//!
//! Each of these is a policy value so that the seed variants (E1 adaptive RTT, E2 RTO rescaling)
//! can add estimators without touching the sender.

use core::time::Duration;

/// How the smoothed RTT R is computed from samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RttEstimator {
    /// RFC 5348 §4.3 step 2: `R = q*R + (1-q)*R_sample`, the first sample taken as is.
    /// RFC 5348 recommends q = 0.9; NS-2.35 uses `df_` = 0.95 (`docs/tfrc-core.md` N9).
    Ewma {
        /// Weight of the old estimate, in [0, 1).
        q: f64,
    },
    /// Seed 000 §3.1 pseudo-code (3), E1: the EWMA plus the spread of the last `k` samples
    /// whenever a sample rises by more than the threshold Lt over the previous one.
    Adaptive(AdaptiveRtt),
}

/// Seed 000 §3.1 pseudo-code (3) (E1, `docs/variants.md`):
/// ```text
/// if r_(i+1) - r_i > Lt:  R_new = q*R_old + (1-q)*r_(i+1) + (max(samples) - min(samples))
/// else:                   R_new = q*R_old + (1-q)*r_(i+1)
/// ```
/// The inflated R feeds the equation, t_RTO and the nofeedback timer wherever RFC 5348 uses R.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveRtt {
    /// Weight of the old estimate, in [0, 1) (RFC 5348: 0.9).
    pub q: f64,
    /// Samples kept for max − min, 2..=[`MAX_RTT_WINDOW`] (default 8).
    pub k: usize,
    /// The rise threshold Lt.
    pub threshold: SpikeThreshold,
}

impl AdaptiveRtt {
    /// The defaults of `docs/variants.md`: q = 0.9, k = 8, Lt = 0.1·R_old.
    pub const DEFAULT: AdaptiveRtt = AdaptiveRtt {
        q: 0.9,
        k: 8,
        threshold: SpikeThreshold::FractionOfR(0.1),
    };
}

/// E1's "limited threshold" Lt (`docs/variants.md` reading: absolute, or a fraction of R_old).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpikeThreshold {
    /// Lt in seconds.
    Seconds(f64),
    /// Lt = this fraction of R_old (default 0.1).
    FractionOfR(f64),
}

/// Largest RTT sample window (E1's `k`).
pub const MAX_RTT_WINDOW: usize = 64;

/// E2 (seed 000 eq. 4): what a feedback that reports a link-error loss does to t_RTO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkErrorRto {
    /// Link-error losses are not treated specially.
    Off,
    /// the reading in `docs/variants.md` of eq. 4 (after TCP-WELCOME): `RTO_new = (R_new/R_old) *
    /// RTO_old` instead of the t_RTO policy, for the feedback that reports the loss.
    Rescale {
        /// Who decides that a loss was a link error.
        source: LinkErrorSource,
        /// Paper-literal first line of eq. 4: R_new also gets the spread term
        /// `max(samples) - min(samples)` unconditionally (`docs/variants.md` reading: off).
        spike: bool,
    },
}

/// Where the sender learns that a loss was a link error (E2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkErrorSource {
    /// The receiver's classifier (seed 002): the feedback's `link_errors` count is non-zero.
    Receiver,
    /// The Veno backlog rule (seed 003 V1): the feedback reports a higher p while N < threshold.
    VenoBacklog,
}

/// The t_RTO used in the throughput equation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RtoPolicy {
    /// RFC 5348 §3.1: "t_RTO SHOULD be 4*R" (the multiple is the field); `floor` gives the
    /// allowed variant max(4R, 1 s) when set to one second.
    RttMultiple {
        /// Multiple of R (RFC 5348: 4).
        multiple: f64,
        /// Lower bound (RFC 5348: zero, or 1 s for the MAY variant).
        floor: Duration,
    },
    /// NS-2.35's `update_rtt`: a TCP-style RTO in integer clock ticks (`docs/tfrc-core.md` N10).
    TcpTicks(TcpRto),
}

/// Parameters of NS-2.35's TCP-style RTO (`tcp_tick_`, `T_SRTT_BITS`, `T_RTTVAR_BITS`,
/// `rttvar_exp_`, `minrto_`; `docs/tfrc-core.md` N0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpRto {
    /// Clock tick (NS-2: 0.1 s).
    pub tick: Duration,
    /// Fixed-point shift of the smoothed RTT (NS-2: 3, a gain of 1/8).
    pub srtt_bits: u32,
    /// Fixed-point shift of the RTT variation (NS-2: 2, a gain of 1/4).
    pub rttvar_bits: u32,
    /// RTO = srtt + 2^rttvar_exp * rttvar (NS-2: 2).
    pub rttvar_exp: u32,
    /// Lower bound on the result (NS-2 `minrto_`: 0).
    pub min_rto: Duration,
}

impl TcpRto {
    /// NS-2.35's defaults for Agent/TFRC.
    pub const NS2: TcpRto = TcpRto {
        tick: Duration::from_millis(100),
        srtt_bits: 3,
        rttvar_bits: 2,
        rttvar_exp: 2,
        min_rto: Duration::ZERO,
    };
}

/// Integer state of the TCP-style RTO, in ticks scaled by the fixed-point shifts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct TcpRtoState {
    srtt: i64,
    rttvar: i64,
}

/// The sender's RTT state. Samples are in seconds and always positive (the sender floors them).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RttState {
    estimator: RttEstimator,
    rto: RtoPolicy,
    /// Smoothed R in seconds; 0 until the first sample.
    r: f64,
    /// Long-term mean of sqrt(R_sample) (§4.5 R_sqmean); 1 until the first sample, which is what
    /// NS-2 starts `sqrtrtt_` with.
    sqrt_mean: f64,
    /// The most recent sample (NS-2 `rttcur_`); 1 until the first sample, as in NS-2.
    last_sample: f64,
    samples: u64,
    /// R came from a measurement before any feedback ([`RttState::seed`]).
    seeded: bool,
    tcp: TcpRtoState,
    /// t_RTO for the equation in seconds; 0 until the first sample (NS-2 `tzero_` starts at 0).
    t_rto: f64,
    /// The most recent samples (E1's `k`, E2's spread), a ring of `window_len` entries.
    window: [f64; MAX_RTT_WINDOW],
    window_len: usize,
    window_next: usize,
    window_cap: usize,
}

/// The spread term of E1/E2 is never allowed to push R beyond this (about 11.6 days): far beyond
/// any real RTT, small enough that R, t_RTO and the timers stay finite.
const MAX_R: f64 = 1e6;

/// Samples kept for E2's spread when E1 does not set `k` (the default k of `docs/variants.md`).
const DEFAULT_WINDOW: usize = 8;

impl RttState {
    pub(crate) fn new(estimator: RttEstimator, rto: RtoPolicy) -> RttState {
        RttState {
            estimator,
            rto,
            r: 0.0,
            sqrt_mean: 1.0,
            last_sample: 1.0,
            samples: 0,
            seeded: false,
            tcp: TcpRtoState::default(),
            t_rto: 0.0,
            window: [0.0; MAX_RTT_WINDOW],
            window_len: 0,
            window_next: 0,
            window_cap: match estimator {
                RttEstimator::Adaptive(a) => a.k.clamp(1, MAX_RTT_WINDOW),
                RttEstimator::Ewma { .. } => DEFAULT_WINDOW,
            },
        }
    }

    /// Take an RTT measured before any feedback, such as the connection's handshake (RFC 5348
    /// §4.2: "the first round-trip time measurement (e.g., after the first feedback packet or
    /// the SYN exchange from the connection setup, or from a previous connection)"). It sets R
    /// and t_RTO so that the initial rate W_init/R and the nofeedback timer have a value, but
    /// it is not a feedback sample: the first feedback's sample still replaces R (§4.3 step 2:
    /// "If no feedback has been received before { R = R_sample; }") and starts R_sqmean
    /// (§4.5). Ignored once a feedback sample has been taken.
    pub(crate) fn seed(&mut self, sample: f64) {
        if self.samples > 0 {
            return;
        }
        let sample = if sample.is_finite() && sample > 0.0 {
            sample.min(MAX_R)
        } else {
            MIN_SAMPLE
        };
        self.r = sample;
        // A TCP-style RTO keeps integer state that the first feedback must start afresh.
        let tcp = self.tcp;
        self.update_rto(sample);
        self.tcp = tcp;
        self.seeded = true;
    }

    /// Fold in one sample (seconds, > 0). `q2` is the §4.5 weight for R_sqmean.
    pub(crate) fn on_sample(&mut self, sample: f64, q2: f64) {
        self.sample(sample, q2, None);
    }

    /// Fold in the sample of a feedback that reports a link-error loss (E2, seed 000 eq. 4):
    /// "RTO_new = (R_new / R_old) * RTO_old" replaces the t_RTO policy for this sample, and with
    /// `spike` R_new carries the spread term whatever the rise (eq. 4's first line).
    pub(crate) fn on_link_error_sample(&mut self, sample: f64, q2: f64, spike: bool) {
        self.sample(sample, q2, Some(spike));
    }

    fn push_window(&mut self, sample: f64) {
        let cap = self.window_cap.clamp(1, MAX_RTT_WINDOW);
        self.window[self.window_next % cap] = sample;
        self.window_next = (self.window_next + 1) % cap;
        self.window_len = (self.window_len + 1).min(cap);
    }

    /// max − min over the kept samples (0 with fewer than two).
    pub(crate) fn spread(&self) -> f64 {
        let w = &self.window[..self.window_len];
        let max = w.iter().copied().fold(f64::MIN, f64::max);
        let min = w.iter().copied().fold(f64::MAX, f64::min);
        if w.len() < 2 || !(max - min).is_finite() {
            0.0
        } else {
            max - min
        }
    }

    fn sample(&mut self, sample: f64, q2: f64, link_error: Option<bool>) {
        let sample = if sample.is_finite() && sample > 0.0 {
            sample
        } else {
            MIN_SAMPLE
        };
        let (r_old, rto_old, prev) = (self.r, self.t_rto, self.last_sample);
        self.push_window(sample);
        // RFC 5348 §4.3 step 2: "If no feedback has been received before { R = R_sample; }
        // Else { R = q*R + (1-q)*R_sample; }"
        if self.samples == 0 {
            self.r = sample;
        } else {
            let q = match self.estimator {
                RttEstimator::Ewma { q } => q,
                RttEstimator::Adaptive(a) => a.q,
            };
            let mut r = q * self.r + (1.0 - q) * sample;
            // E1, pseudo-code (3): "if ((RTT_(i+1) - RTT_(i)) > Lt) RTT_new = Q*RTT_old +
            // (1-Q)*R_Sample + (RTT_max - RTT_min)". E2 with `spike`: eq. 4 adds it always.
            let spike = match self.estimator {
                RttEstimator::Adaptive(a) => {
                    let lt = match a.threshold {
                        SpikeThreshold::Seconds(s) => s,
                        SpikeThreshold::FractionOfR(f) => f * r_old,
                    };
                    sample - prev > lt
                }
                RttEstimator::Ewma { .. } => false,
            };
            if spike || link_error == Some(true) {
                r = (r + self.spread()).min(r.max(MAX_R));
            }
            self.r = r;
        }
        // RFC 5348 §4.5: "R_sqmean = q2*R_sqmean + (1-q2)*sqrt(R_sample)", first sample as is.
        if self.samples == 0 {
            self.sqrt_mean = sample.sqrt();
        } else {
            self.sqrt_mean = q2 * self.sqrt_mean + (1.0 - q2) * sample.sqrt();
        }
        self.last_sample = sample;
        self.update_rto(sample);
        if link_error.is_some() && r_old > 0.0 && rto_old > 0.0 {
            // E2 (the reading in `docs/variants.md` of seed 000 eq. 4): "RTO_new = (R_new / R_old)
            // * RTO_old".
            let rto = rto_old * (self.r / r_old);
            if rto.is_finite() {
                self.t_rto = rto.min(4.0 * MAX_R);
            }
        }
        self.samples = self.samples.saturating_add(1);
    }

    fn update_rto(&mut self, sample: f64) {
        self.t_rto = match self.rto {
            RtoPolicy::RttMultiple { multiple, floor } => {
                (multiple * self.r).max(floor.as_secs_f64())
            }
            RtoPolicy::TcpTicks(c) => self.tcp_rto(c, sample),
        };
    }

    /// NS-2.35 `update_rtt` (NS-2.35's TCP-tick RTO, `docs/tfrc-core.md` N10): the sample is
    /// rounded to whole ticks (at least one), smoothed in fixed point with gains 1/8 and 1/4, and
    /// the RTO is `((rttvar << (exp + srtt_bits - rttvar_bits)) + srtt) >> srtt_bits` ticks.
    fn tcp_rto(&mut self, c: TcpRto, sample: f64) -> f64 {
        let tick = c.tick.as_secs_f64().max(1e-9);
        let sb = c.srtt_bits.min(16);
        let vb = c.rttvar_bits.min(sb);
        let ticks = (sample / tick + 0.5).floor().clamp(1.0, 1e12) as i64;
        if self.tcp.srtt != 0 {
            let mut delta = ticks - (self.tcp.srtt >> sb);
            self.tcp.srtt = self.tcp.srtt.saturating_add(delta);
            if self.tcp.srtt <= 0 {
                self.tcp.srtt = 1;
            }
            delta = delta.saturating_abs() - (self.tcp.rttvar >> vb);
            self.tcp.rttvar = self.tcp.rttvar.saturating_add(delta);
            if self.tcp.rttvar <= 0 {
                self.tcp.rttvar = 1;
            }
        } else {
            self.tcp.srtt = ticks << sb;
            self.tcp.rttvar = ticks << vb.saturating_sub(1);
        }
        let shift = (c.rttvar_exp + sb - vb).min(32);
        let rto_ticks =
            (self.tcp.rttvar.saturating_mul(1 << shift)).saturating_add(self.tcp.srtt) >> sb;
        (rto_ticks as f64 * tick).max(c.min_rto.as_secs_f64())
    }

    /// Smoothed R in seconds (0 before the first sample).
    pub(crate) fn r(&self) -> f64 {
        self.r
    }

    /// The most recent feedback sample R_sample, once there is one.
    pub(crate) fn latest_sample(&self) -> Option<f64> {
        (self.samples > 0).then_some(self.last_sample)
    }

    /// Whether R has a value: a feedback sample, or a [`RttState::seed`].
    pub(crate) fn has_sample(&self) -> bool {
        self.samples > 0 || self.seeded
    }

    /// t_RTO for the equation, seconds.
    pub(crate) fn t_rto(&self) -> f64 {
        self.t_rto
    }

    /// §4.5's ratio R_sqmean / sqrt(R_sample) (1 before any sample).
    pub(crate) fn oscillation_factor(&self) -> f64 {
        let d = self.last_sample.sqrt();
        if d > 0.0 && self.sqrt_mean.is_finite() {
            self.sqrt_mean / d
        } else {
            1.0
        }
    }
}

/// Samples are floored at 1 µs so that R, t_ipi and the equation stay finite.
pub(crate) const MIN_SAMPLE: f64 = 1e-6;

#[cfg(test)]
mod tests {
    use super::*;

    fn rfc() -> RttState {
        RttState::new(
            RttEstimator::Ewma { q: 0.9 },
            RtoPolicy::RttMultiple {
                multiple: 4.0,
                floor: Duration::ZERO,
            },
        )
    }

    /// RFC 5348 §4.3 step 2: first sample taken as is, then EWMA with q = 0.9.
    #[test]
    fn rfc5348_s4_3_rtt_ewma_q_0_9() {
        let mut s = rfc();
        s.on_sample(0.1, 0.9);
        assert_eq!(s.r(), 0.1);
        assert!((s.t_rto() - 0.4).abs() < 1e-12, "t_RTO = 4R");
        s.on_sample(0.2, 0.9);
        assert!((s.r() - 0.11).abs() < 1e-12, "{}", s.r());
        assert!((s.t_rto() - 0.44).abs() < 1e-12);
    }

    /// RFC 5348 §4.5: R_sqmean is the EWMA of sqrt(R_sample); the factor is
    /// R_sqmean / sqrt(R_sample).
    #[test]
    fn rfc5348_s4_5_sqrt_mean() {
        let mut s = rfc();
        assert_eq!(s.oscillation_factor(), 1.0);
        s.on_sample(0.04, 0.9);
        assert!((s.oscillation_factor() - 1.0).abs() < 1e-12);
        s.on_sample(0.16, 0.9);
        // R_sqmean = 0.9*0.2 + 0.1*0.4 = 0.22; sqrt(0.16) = 0.4.
        assert!((s.oscillation_factor() - 0.22 / 0.4).abs() < 1e-12);
    }

    /// `docs/tfrc-core.md` N10: NS-2's TCP-tick RTO is 0.3 s for any constant RTT up to 0.15 s, and
    /// settles at 0.5/0.6/0.8 s for 0.2/0.3/0.5 s.
    #[test]
    fn ns2_tcp_tick_rto() {
        for (rtt, want) in [
            (0.01, 0.3),
            (0.1, 0.3),
            (0.15, 0.3),
            (0.2, 0.5),
            (0.3, 0.6),
            (0.5, 0.8),
        ] {
            let mut s = RttState::new(
                RttEstimator::Ewma { q: 0.95 },
                RtoPolicy::TcpTicks(TcpRto::NS2),
            );
            for _ in 0..200 {
                s.on_sample(rtt, 0.95);
            }
            assert!(
                (s.t_rto() - want).abs() < 1e-9,
                "rtt {rtt}: {} vs {want}",
                s.t_rto()
            );
        }
    }

    /// `docs/tfrc-core.md` N10: the first TCP-tick sample sets srtt = t << 3, rttvar = t << 1, so
    /// one tick gives ((2 << 3) + 8) >> 3 = 3 ticks.
    #[test]
    fn ns2_first_sample_rto() {
        let mut s = RttState::new(
            RttEstimator::Ewma { q: 0.95 },
            RtoPolicy::TcpTicks(TcpRto::NS2),
        );
        assert_eq!(s.t_rto(), 0.0, "tzero_ starts at 0");
        s.on_sample(0.04, 0.95);
        assert!((s.t_rto() - 0.3).abs() < 1e-12);
        assert_eq!(s.r(), 0.04);
        s.on_sample(0.08, 0.95);
        assert!((s.r() - (0.95 * 0.04 + 0.05 * 0.08)).abs() < 1e-12);
    }

    fn adaptive(k: usize, threshold: SpikeThreshold) -> RttState {
        RttState::new(
            RttEstimator::Adaptive(AdaptiveRtt {
                q: 0.9,
                k,
                threshold,
            }),
            RtoPolicy::RttMultiple {
                multiple: 4.0,
                floor: Duration::ZERO,
            },
        )
    }

    /// Seed 000 pseudo-code (3) by hand, q = 0.9, k = 8, Lt = 0.1·R_old. Samples 100, 105, 150,
    /// 140 ms: R = 0.1; rise 5 ms ≤ 10 ms → 0.9·0.1 + 0.1·0.105 = 0.1005; rise 45 ms > 10.05 ms →
    /// 0.09045 + 0.015 + (0.150 − 0.100) = 0.15545 and RTO = 4R = 0.6218; fall → 0.9·0.15545 +
    /// 0.014 = 0.153905.
    #[test]
    fn seed000_e1_adaptive_rtt_by_hand() {
        let mut s = adaptive(8, SpikeThreshold::FractionOfR(0.1));
        s.on_sample(0.100, 0.9);
        assert_eq!(s.r(), 0.1);
        s.on_sample(0.105, 0.9);
        assert!((s.r() - 0.1005).abs() < 1e-12, "{}", s.r());
        s.on_sample(0.150, 0.9);
        assert!((s.r() - 0.15545).abs() < 1e-12, "{}", s.r());
        assert!((s.t_rto() - 0.6218).abs() < 1e-12);
        s.on_sample(0.140, 0.9);
        assert!((s.r() - 0.153905).abs() < 1e-12, "{}", s.r());
        // k = 2 keeps 105 and 150 ms: spread 45 ms → 0.09045 + 0.015 + 0.045 = 0.15045.
        let mut s = adaptive(2, SpikeThreshold::FractionOfR(0.1));
        for x in [0.100, 0.105, 0.150] {
            s.on_sample(x, 0.9);
        }
        assert!((s.r() - 0.15045).abs() < 1e-12, "{}", s.r());
        // An absolute Lt of 50 ms is not exceeded by a 45 ms rise: plain EWMA 0.10545.
        let mut s = adaptive(8, SpikeThreshold::Seconds(0.05));
        for x in [0.100, 0.105, 0.150] {
            s.on_sample(x, 0.9);
        }
        assert!((s.r() - 0.10545).abs() < 1e-12, "{}", s.r());
    }

    /// E2 (the reading in `docs/variants.md` of seed 000 eq. 4): RTO_new = (R_new/R_old)·RTO_old
    /// for a link-error sample. Under t_RTO = 4R it is an identity; it matters where RTO_old is not
    /// 4·R_old.
    #[test]
    fn seed000_e2_rto_rescale_by_hand() {
        // 4R: 0.4·(0.11/0.1) = 0.44 = 4·0.11.
        let mut s = rfc();
        s.on_sample(0.1, 0.9);
        s.on_link_error_sample(0.2, 0.9, false);
        assert!((s.r() - 0.11).abs() < 1e-12);
        assert!((s.t_rto() - 0.44).abs() < 1e-12);
        // max(4R, 1 s): RTO_old = 1 s → 1.1 s, where the policy would give max(0.44, 1) = 1 s.
        let floor = RtoPolicy::RttMultiple {
            multiple: 4.0,
            floor: Duration::from_secs(1),
        };
        let mut s = RttState::new(RttEstimator::Ewma { q: 0.9 }, floor);
        s.on_sample(0.1, 0.9);
        assert_eq!(s.t_rto(), 1.0);
        s.on_link_error_sample(0.2, 0.9, false);
        assert!((s.t_rto() - 1.1).abs() < 1e-12, "{}", s.t_rto());
        // The next ordinary sample returns to the policy: R = 0.9·0.11 + 0.1·0.11 = 0.11 → 1 s.
        s.on_sample(0.11, 0.9);
        assert_eq!(s.t_rto(), 1.0);
        // NS-2's tick RTO: 0.3 s after a 0.1 s sample; q = 0.95 gives R_new = 0.105 → 0.315 s.
        let mut s = RttState::new(
            RttEstimator::Ewma { q: 0.95 },
            RtoPolicy::TcpTicks(TcpRto::NS2),
        );
        s.on_sample(0.1, 0.95);
        s.on_link_error_sample(0.2, 0.95, false);
        assert!((s.t_rto() - 0.315).abs() < 1e-12, "{}", s.t_rto());
        // Paper-literal eq. 4 line 1 (`spike`): R_new = 0.11 + (0.2 − 0.1) = 0.21, RTO = 0.84.
        let mut s = rfc();
        s.on_sample(0.1, 0.9);
        s.on_link_error_sample(0.2, 0.9, true);
        assert!((s.r() - 0.21).abs() < 1e-12);
        assert!((s.t_rto() - 0.84).abs() < 1e-12);
    }

    /// RFC 5348 §4.2 / §4.3 step 2: a handshake RTT gives R and t_RTO = 4R before any feedback,
    /// and the first feedback's sample still replaces R (it is "the first feedback") and starts
    /// R_sqmean.
    #[test]
    fn rfc5348_s4_2_seed_before_feedback() {
        let mut s = rfc();
        assert!(!s.has_sample());
        s.seed(0.05);
        assert!(s.has_sample());
        assert_eq!(s.r(), 0.05);
        assert!((s.t_rto() - 0.2).abs() < 1e-12);
        assert_eq!(s.oscillation_factor(), 1.0);
        s.on_sample(0.1, 0.9);
        assert_eq!(s.r(), 0.1, "the first feedback sample is taken as is");
        assert!((s.oscillation_factor() - 1.0).abs() < 1e-12);
        s.on_sample(0.2, 0.9);
        assert!((s.r() - 0.11).abs() < 1e-12);
        // After a feedback sample a seed is ignored; degenerate seeds stay finite.
        s.seed(5.0);
        assert!((s.r() - 0.11).abs() < 1e-12);
        for x in [f64::NAN, -1.0, 0.0, f64::INFINITY] {
            let mut t = rfc();
            t.seed(x);
            assert!(t.r().is_finite() && t.r() > 0.0, "{x}");
        }
        // NS-2's tick RTO: the seed does not disturb the integer state the first sample sets.
        let mut t = RttState::new(
            RttEstimator::Ewma { q: 0.95 },
            RtoPolicy::TcpTicks(TcpRto::NS2),
        );
        t.seed(0.5);
        t.on_sample(0.04, 0.95);
        assert!((t.t_rto() - 0.3).abs() < 1e-12);
    }

    #[test]
    fn degenerate_samples_stay_finite() {
        let mut s = rfc();
        for x in [f64::NAN, -1.0, 0.0, f64::INFINITY, 1e300] {
            s.on_sample(x, 0.9);
            assert!(s.r().is_finite() && s.r() > 0.0, "{x}: {}", s.r());
            assert!(s.t_rto().is_finite());
            assert!(s.oscillation_factor().is_finite());
        }
        let mut t = RttState::new(
            RttEstimator::Ewma { q: 0.95 },
            RtoPolicy::TcpTicks(TcpRto::NS2),
        );
        for x in [1e300, 0.0, f64::NAN, 5.0] {
            t.on_sample(x, 0.95);
            assert!(t.t_rto().is_finite() && t.t_rto() >= 0.0);
        }
        let mut a = adaptive(64, SpikeThreshold::Seconds(0.0));
        for x in [1e300, 1e-9, 1e300, f64::NAN, 1e300, 0.0, 1e300] {
            a.on_sample(x, 0.9);
            a.on_link_error_sample(x, 0.9, true);
            assert!(a.r().is_finite() && a.r() > 0.0, "{x}: {}", a.r());
            assert!(a.t_rto().is_finite() && a.t_rto() >= 0.0);
        }
    }
}
