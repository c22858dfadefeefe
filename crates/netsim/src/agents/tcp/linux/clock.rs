//! The kernel's clocks as the Linux profile sees them: a jiffy clock (`CONFIG_HZ`) whose
//! timers fire on the timer wheel's buckets, and the RTT estimator that sets the RTO
//! (`docs/simulator.md`, "Linux TCP").

use crate::Time;

/// The jiffy clock. The kernel's jiffies tick every `1/HZ` s from boot, so their phase
/// against a flow's start is arbitrary: `phase` (drawn once per agent) shifts the ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jiffies {
    /// Nanoseconds per jiffy (4 ms at `HZ` 250, this machine's kernel).
    pub jiffy_ns: u64,
    /// Where between two ticks the flow's time 0 falls, in `[0, jiffy_ns)`.
    pub phase_ns: u64,
}

impl Jiffies {
    /// A clock of `hz` ticks per second with the given phase.
    pub fn new(hz: u32, phase_ns: u64) -> Self {
        let jiffy_ns = 1_000_000_000 / u64::from(hz.max(1));
        Jiffies {
            jiffy_ns,
            phase_ns: phase_ns % jiffy_ns,
        }
    }

    /// `jiffies` at `t`.
    pub fn at(&self, t: Time) -> u64 {
        (t.as_nanos() + self.phase_ns) / self.jiffy_ns
    }

    /// The time of tick `j`.
    pub fn time_of(&self, j: u64) -> Time {
        Time::from_nanos((j * self.jiffy_ns).saturating_sub(self.phase_ns))
    }

    /// `usecs_to_jiffies`: rounds up.
    pub fn from_us(&self, us: u64) -> u64 {
        (us.saturating_mul(1000)).div_ceil(self.jiffy_ns)
    }

    /// `jiffies_to_usecs`.
    pub fn to_us(&self, j: u64) -> u64 {
        j.saturating_mul(self.jiffy_ns) / 1000
    }

    /// When a timer armed at `now` for `when` jiffies fires. The timer wheel never fires
    /// early: it files the expiry in a bucket of its level (level `n` spans `8^n` jiffies and
    /// takes delays from `63·8^(n−1)`), rounded up to the bucket after it.
    pub fn timer(&self, now: Time, when: u64) -> Time {
        let clk = self.at(now);
        let expires = clk + when;
        let mut lvl = 0u32;
        while lvl < 8 && when >= 63u64 << (3 * lvl) {
            lvl += 1;
        }
        let shift = 3 * lvl;
        let bucket = ((expires >> shift) + 1) << shift;
        self.time_of(bucket)
    }
}

/// The RTT estimator of `tcp_rtt_estimator` and `tcp_set_rto` (microseconds; `srtt` is kept
/// ×8 and `mdev`/`rttvar` ×4 as the kernel keeps them). The RTO is `srtt + rttvar` where
/// `rttvar` never falls below the minimum RTO, so the RTO is at least srtt + 200 ms.
#[derive(Clone, Debug, Default)]
pub struct RttEstimator {
    /// Smoothed RTT ×8, µs (0: no sample yet).
    pub srtt8: u64,
    mdev4: u64,
    mdev_max4: u64,
    /// `rttvar_us`.
    pub rttvar4: u64,
    /// `rtt_seq`: the estimator lowers `rttvar` once per window of data.
    rtt_seq: i64,
}

impl RttEstimator {
    /// One RTT sample `m` µs; `snd_una`/`snd_nxt` decide when a window of data has passed.
    pub fn sample(&mut self, m: u64, rto_min_us: u64, snd_una: i64, snd_nxt: i64) {
        let m = m as i64;
        if self.srtt8 != 0 {
            let mut srtt8 = self.srtt8 as i64;
            let mut err = m - (srtt8 >> 3);
            srtt8 += err;
            let mdev4 = self.mdev4 as i64;
            if err < 0 {
                err = -err - (mdev4 >> 2);
                // A falling RTT moves the deviation an eighth as much.
                if err > 0 {
                    err >>= 3;
                }
            } else {
                err -= mdev4 >> 2;
            }
            self.mdev4 = (mdev4 + err).max(0) as u64;
            if self.mdev4 > self.mdev_max4 {
                self.mdev_max4 = self.mdev4;
                if self.mdev_max4 > self.rttvar4 {
                    self.rttvar4 = self.mdev_max4;
                }
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max4 < self.rttvar4 {
                    self.rttvar4 -= (self.rttvar4 - self.mdev_max4) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max4 = rto_min_us;
            }
            self.srtt8 = srtt8.max(1) as u64;
        } else {
            self.srtt8 = (m.max(0) as u64) << 3;
            self.mdev4 = (m.max(0) as u64) << 1;
            self.rttvar4 = self.mdev4.max(rto_min_us);
            self.mdev_max4 = self.rttvar4;
            self.rtt_seq = snd_nxt;
            self.srtt8 = self.srtt8.max(1);
        }
    }

    /// Smoothed RTT, µs.
    pub fn srtt_us(&self) -> u64 {
        self.srtt8 >> 3
    }

    /// `__tcp_set_rto`: srtt + rttvar, µs.
    pub fn rto_us(&self) -> u64 {
        (self.srtt8 >> 3) + self.rttvar4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_wheel_rounds_up_by_level() {
        let j = Jiffies::new(250, 0);
        let t0 = Time::from_nanos(1_000_000); // inside tick 0
                                              // Level 0: the bucket after the expiry.
        assert_eq!(j.timer(t0, 10), Time::from_nanos(11 * 4_000_000));
        // Level 1 (63..504 jiffies): 8-jiffy buckets.
        assert_eq!(j.timer(t0, 63), Time::from_nanos(64 * 4_000_000));
        assert_eq!(j.timer(t0, 64), Time::from_nanos(72 * 4_000_000));
        assert_eq!(j.from_us(40_000), 10);
        assert_eq!(j.from_us(40_001), 11);
    }

    #[test]
    fn rto_is_srtt_plus_at_least_the_minimum() {
        let mut e = RttEstimator::default();
        e.sample(20_000, 200_000, 1, 10);
        assert_eq!(e.srtt_us(), 20_000);
        // First sample: mdev = 2·m = 40 ms, below the 200-ms floor of rttvar.
        assert_eq!(e.rto_us(), 220_000);
        for k in 0..50 {
            e.sample(20_000, 200_000, 11 + k, 20 + k);
        }
        assert_eq!(e.srtt_us(), 20_000);
        assert_eq!(e.rto_us(), 220_000, "rttvar never drops below rto_min");
        // A large sample raises the deviation at once.
        e.sample(120_000, 200_000, 100, 120);
        assert!(e.rto_us() > 220_000, "{}", e.rto_us());
    }
}
