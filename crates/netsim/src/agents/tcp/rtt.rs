//! NS-2's TCP retransmission-timer arithmetic (`tcp.cc`: `rtt_init`, `rtt_update`,
//! `rtt_timeout`, `rtt_backoff`), in integer nanoseconds.
//!
//! RTT samples are counted in clock ticks (`tcpTick_`), as a BSD kernel would: a sample of `tao`
//! seconds, sent at `t`, spans `floor((tao + (t + boot_time_) mod tick) / tick)` tick
//! boundaries, at least one. The smoothed RTT and mean deviation are fixed point: `srtt` carries
//! `T_SRTT_BITS` fraction bits, `rttvar` carries `T_RTTVAR_BITS`, and the RTO is
//! `srtt + 2^rttvar_exp_ * rttvar` whole ticks (Jacobson/Karels, RFC 6298 with the kernel's
//! rounding).

/// RTO bounds and estimator parameters, in nanoseconds and bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttParams {
    /// `tcpTick_`: clock granularity.
    pub tick: u64,
    /// `minrto_`.
    pub min_rto: u64,
    /// `maxrto_`.
    pub max_rto: u64,
    /// `rtxcur_init_`: the RTO before the first sample.
    pub rtxcur_init: u64,
    /// `srtt_init_` in whole ticks.
    pub srtt_init_ticks: i32,
    /// `rttvar_init_` in whole ticks.
    pub rttvar_init_ticks: i32,
    /// `T_SRTT_BITS`.
    pub srtt_bits: u32,
    /// `T_RTTVAR_BITS`.
    pub rttvar_bits: u32,
    /// `rttvar_exp_`.
    pub rttvar_exp: u32,
    /// `rfc2988_`: clamp to `minrto_` before applying the backoff (RFC 2988), not after.
    pub rfc2988: bool,
}

/// The estimator state: NS-2's `t_rtt_`, `t_srtt_`, `t_rttvar_`, `t_rtxcur_`, `t_backoff_`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    p: RttParams,
    /// Last sample, in ticks.
    rtt: i32,
    /// Smoothed RTT in ticks, scaled by 2^srtt_bits.
    srtt: i32,
    /// Mean deviation in ticks, scaled by 2^rttvar_bits.
    rttvar: i32,
    /// Current RTO before backoff, in ns (whole ticks once a sample arrived).
    rtxcur: u64,
    /// Backoff multiplier, 1 when not backed off.
    backoff: u64,
    /// `rtt_timeout()` of the fields above, kept up to date by every change to them: the
    /// sender arms its timer with it on every ACK, and it changes about once per RTT.
    rto: u64,
}

impl RttEstimator {
    /// `rtt_init()`: no sample yet, RTO = `rtxcur_init_`.
    pub fn new(p: RttParams) -> Self {
        let tick = p.tick.max(1);
        let p = RttParams { tick, ..p };
        let mut e = RttEstimator {
            rtt: 0,
            srtt: p.srtt_init_ticks.saturating_mul(1 << p.srtt_bits.min(16)),
            rttvar: p
                .rttvar_init_ticks
                .saturating_mul(1 << p.rttvar_bits.min(16)),
            rtxcur: p.rtxcur_init,
            backoff: 1,
            rto: 0,
            p,
        };
        e.rto = e.compute_timeout();
        e
    }

    /// `rtt_update(tao)`: a sample of `tao_ns` for a segment sent at `sent_ns`, with the agent's
    /// `boot_time_` offset `boot_ns` (where between ticks its clock started).
    pub fn update(&mut self, tao_ns: u64, sent_ns: u64, boot_ns: u64) {
        let tick = self.p.tick;
        let tickoff = sent_ns.wrapping_add(boot_ns) % tick;
        let ticks = (tao_ns.saturating_add(tickoff) / tick).min(i32::MAX as u64) as i32;
        self.rtt = ticks.max(1);
        let (sb, vb) = (self.p.srtt_bits.min(16), self.p.rttvar_bits.min(16));
        if self.srtt != 0 {
            // NS-2 holds the difference in a `short`.
            let mut delta = i32::from(self.rtt.wrapping_sub(self.srtt >> sb) as i16);
            self.srtt = self.srtt.saturating_add(delta);
            if self.srtt <= 0 {
                self.srtt = 1;
            }
            if delta < 0 {
                delta = -delta;
            }
            delta = delta.saturating_sub(self.rttvar >> vb);
            self.rttvar = self.rttvar.saturating_add(delta);
            if self.rttvar <= 0 {
                self.rttvar = 1;
            }
        } else {
            // First sample: srtt = rtt, rttvar = rtt / 2.
            self.srtt = self.rtt.saturating_mul(1 << sb);
            self.rttvar = if vb >= 1 {
                self.rtt.saturating_mul(1 << (vb - 1))
            } else {
                self.rtt / 2
            };
        }
        // RTO = (srtt + 2^rttvar_exp * rttvar) in whole ticks, truncated.
        let shift = self.p.rttvar_exp + sb;
        let var_term = if shift >= vb {
            i64::from(self.rttvar).saturating_mul(1 << (shift - vb).min(31))
        } else {
            i64::from(self.rttvar) >> (vb - shift)
        };
        let ticks = (var_term.saturating_add(i64::from(self.srtt)) >> sb).max(0) as u64;
        self.rtxcur = ticks.saturating_mul(tick);
        self.rto = self.compute_timeout();
    }

    /// `rtt_timeout()`: the retransmission timeout to arm now, in ns.
    #[inline]
    pub fn timeout(&self) -> u64 {
        // Kept, not derived per call: every change to what it depends on recomputes it.
        debug_assert_eq!(self.rto, self.compute_timeout(), "stale RTO");
        self.rto
    }

    /// `rtt_timeout()` computed from `rtxcur` and `backoff`.
    fn compute_timeout(&self) -> u64 {
        let mut t = if self.p.rfc2988 {
            if self.rtxcur < self.p.min_rto {
                self.p.min_rto.saturating_mul(self.backoff)
            } else {
                self.rtxcur.saturating_mul(self.backoff)
            }
        } else {
            self.rtxcur.saturating_mul(self.backoff).max(self.p.min_rto)
        };
        if t > self.p.max_rto {
            t = self.p.max_rto;
        }
        // Never less than two ticks.
        t.max(2 * self.p.tick)
    }

    /// `rtt_backoff()`: double the multiplier (up to 64, or further while the RTO is below
    /// `maxrto_` under RFC 2988); past 8 backoffs the smoothed RTT is folded into the deviation
    /// and forgotten, so the next sample starts the estimator afresh.
    pub fn backoff(&mut self) {
        if self.backoff < 64 || (self.p.rfc2988 && self.timeout() < self.p.max_rto) {
            self.backoff = self.backoff.saturating_mul(2);
        }
        if self.backoff > 8 {
            self.rttvar = self
                .rttvar
                .saturating_add(self.srtt >> self.p.srtt_bits.min(16));
            self.srtt = 0;
        }
        self.rto = self.compute_timeout();
    }

    /// End the backoff (a valid sample was taken).
    pub fn reset_backoff(&mut self) {
        if self.backoff != 1 {
            self.backoff = 1;
            self.rto = self.compute_timeout();
        }
    }

    /// The backoff multiplier (`backoff_`).
    pub fn backoff_multiplier(&self) -> u64 {
        self.backoff
    }

    /// Last RTT sample in ticks (`rtt_`).
    pub fn rtt_ticks(&self) -> i32 {
        self.rtt
    }

    /// Smoothed RTT in ticks scaled by 2^`T_SRTT_BITS` (`srtt_`).
    pub fn srtt_scaled(&self) -> i32 {
        self.srtt
    }

    /// Mean deviation in ticks scaled by 2^`T_RTTVAR_BITS` (`rttvar_`).
    pub fn rttvar_scaled(&self) -> i32 {
        self.rttvar
    }

    /// The un-backed-off RTO (`t_rtxcur_`) in ns.
    pub fn rtxcur(&self) -> u64 {
        self.rtxcur
    }

    /// Smoothed RTT in ns, as NS-2 prints it (`(srtt_ >> T_SRTT_BITS) * tcpTick_`).
    pub fn srtt_ns(&self) -> u64 {
        ((self.srtt >> self.p.srtt_bits.min(16)).max(0) as u64).saturating_mul(self.p.tick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn params() -> RttParams {
        RttParams {
            tick: 10 * MS,
            min_rto: 200 * MS,
            max_rto: 60_000 * MS,
            rtxcur_init: 3_000 * MS,
            srtt_init_ticks: 0,
            rttvar_init_ticks: 1200,
            srtt_bits: 3,
            rttvar_bits: 2,
            rttvar_exp: 2,
            rfc2988: true,
        }
    }

    #[test]
    fn initial_rto_is_rtxcur_init() {
        let e = RttEstimator::new(params());
        assert_eq!(e.timeout(), 3_000 * MS);
    }

    #[test]
    fn sample_counts_tick_boundaries_from_boot_offset() {
        // 95 ms sent at a tick boundary (boot offset 0): 9 whole ticks.
        let mut e = RttEstimator::new(params());
        e.update(95 * MS, 0, 0);
        assert_eq!(e.rtt_ticks(), 9);
        // The same sample sent 6 ms past a tick crosses 10 boundaries.
        let mut e = RttEstimator::new(params());
        e.update(95 * MS, 0, 6 * MS);
        assert_eq!(e.rtt_ticks(), 10);
        // A sub-tick sample still counts one tick.
        let mut e = RttEstimator::new(params());
        e.update(MS, 0, 0);
        assert_eq!(e.rtt_ticks(), 1);
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = RttEstimator::new(params());
        e.update(100 * MS, 0, 0); // 10 ticks
        assert_eq!(e.srtt_scaled(), 80); // 10 << 3
        assert_eq!(e.rttvar_scaled(), 20); // 5 << 2
                                           // RTO = srtt + 4 * rttvar = 10 + 20 = 30 ticks.
        assert_eq!(e.rtxcur(), 300 * MS);
        assert_eq!(e.timeout(), 300 * MS);
    }

    #[test]
    fn later_samples_use_fixed_point_gains() {
        let mut e = RttEstimator::new(params());
        e.update(100 * MS, 0, 0); // srtt 80, rttvar 20
        e.update(180 * MS, 0, 0); // 18 ticks: delta = 18 - 10 = 8
        assert_eq!(e.srtt_scaled(), 88); // 80 + 8
        assert_eq!(e.rttvar_scaled(), 23); // 20 + (8 - 5)
                                           // ((23 << 3) + 88) >> 3 = (184 + 88) / 8 = 34 ticks.
        assert_eq!(e.rtxcur(), 340 * MS);
        e.update(20 * MS, 0, 0); // 2 ticks: delta = 2 - 11 = -9
        assert_eq!(e.srtt_scaled(), 79);
        assert_eq!(e.rttvar_scaled(), 23 + (9 - 5));
    }

    #[test]
    fn min_rto_applies_before_backoff() {
        let mut e = RttEstimator::new(params());
        e.update(20 * MS, 0, 0); // 2 ticks: RTO 2 + 4 = 6 ticks = 60 ms < minrto
        assert_eq!(e.rtxcur(), 60 * MS);
        assert_eq!(e.timeout(), 200 * MS);
        e.backoff();
        // RFC 2988: minrto * backoff, not max(minrto, rtxcur * backoff).
        assert_eq!(e.timeout(), 400 * MS);
        let mut old = RttEstimator::new(RttParams {
            rfc2988: false,
            ..params()
        });
        old.update(20 * MS, 0, 0);
        old.backoff();
        assert_eq!(old.timeout(), 200 * MS);
    }

    #[test]
    fn backoff_doubles_caps_at_maxrto_and_forgets_srtt() {
        let mut e = RttEstimator::new(params());
        e.update(100 * MS, 0, 0); // RTO 300 ms
        for expect in [2u64, 4, 8] {
            e.backoff();
            assert_eq!(e.backoff_multiplier(), expect);
            assert_eq!(e.timeout(), 300 * MS * expect);
            assert_eq!(e.srtt_scaled(), 80);
        }
        e.backoff();
        assert_eq!(e.backoff_multiplier(), 16);
        // Past 8: srtt folded into rttvar (20 + 10) and zeroed.
        assert_eq!(e.srtt_scaled(), 0);
        assert_eq!(e.rttvar_scaled(), 30);
        for _ in 0..20 {
            e.backoff();
        }
        assert_eq!(e.timeout(), 60_000 * MS);
        // The multiplier stops once the RTO reaches maxrto_ (300 ms * 256 > 60 s).
        assert_eq!(e.backoff_multiplier(), 256);
        e.reset_backoff();
        assert_eq!(e.timeout(), 300 * MS);
    }

    proptest::proptest! {
        /// Any parameters and samples: no panic, and the RTO stays within its bounds.
        #[test]
        fn arbitrary_inputs_never_panic(
            tick in 0u64..100_000_000,
            min_rto in 0u64..10_000_000_000,
            max_rto in 0u64..100_000_000_000,
            bits in (0u32..40, 0u32..40, 0u32..40),
            init in (-5i32..5000, -5i32..5000),
            samples in proptest::collection::vec((0u64..u64::MAX, 0u64..u64::MAX, any_backoff()), 0..50),
        ) {
            let mut e = RttEstimator::new(RttParams {
                tick,
                min_rto,
                max_rto,
                rtxcur_init: 3_000 * MS,
                srtt_init_ticks: init.0,
                rttvar_init_ticks: init.1,
                srtt_bits: bits.0.min(16),
                rttvar_bits: bits.1.min(16),
                rttvar_exp: bits.2.min(16),
                rfc2988: bits.0 % 2 == 0,
            });
            for (tao, sent, backoff) in samples {
                if backoff {
                    e.backoff();
                } else {
                    e.update(tao, sent, sent / 3);
                }
                let t = e.timeout();
                proptest::prop_assert!(t >= 2 * tick.max(1));
                proptest::prop_assert!(t <= max_rto.max(2 * tick.max(1)));
            }
        }
    }

    fn any_backoff() -> impl proptest::strategy::Strategy<Value = bool> {
        proptest::bool::ANY
    }

    #[test]
    fn timeout_floor_is_two_ticks() {
        let mut e = RttEstimator::new(RttParams {
            min_rto: 0,
            ..params()
        });
        e.update(MS, 0, 0); // 1 tick: RTO = 1 + 2 = 3 ticks
        assert_eq!(e.timeout(), 30 * MS);
        let e = RttEstimator::new(RttParams {
            min_rto: 0,
            rtxcur_init: 0,
            ..params()
        });
        assert_eq!(e.timeout(), 20 * MS);
    }
}
