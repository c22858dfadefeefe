//! Time as the core sees it: an integer count of nanoseconds, passed in by the caller.
//!
//! The core never reads a clock (sans-IO). The simulator passes its virtual time and the UDP
//! transport passes a monotonic clock's elapsed nanoseconds; both are [`Time`]. Intervals are
//! [`std::time::Duration`]. Arithmetic saturates rather than panics, so no input can crash the
//! core through time underflow.

use core::fmt;
use core::ops::{Add, AddAssign, Sub};
use core::time::Duration;

/// A point in time: nanoseconds since an epoch chosen by the caller (for example the start of a
/// simulation run).
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

impl Time {
    /// The epoch.
    pub const ZERO: Time = Time(0);
    /// The largest representable time (about 584 years after the epoch).
    pub const MAX: Time = Time(u64::MAX);

    /// A time `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Time {
        Time(nanos)
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// A time `secs` seconds after the epoch, rounded to the nearest nanosecond. Negative and NaN
    /// inputs give the epoch; values past [`Time::MAX`] saturate.
    pub fn from_secs_f64(secs: f64) -> Time {
        if secs.is_nan() || secs <= 0.0 {
            return Time::ZERO;
        }
        let ns = (secs * 1e9).round();
        if ns >= u64::MAX as f64 {
            Time::MAX
        } else {
            Time(ns as u64)
        }
    }

    /// Seconds since the epoch.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// The interval from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, saturating at [`Time::MAX`].
    pub fn saturating_add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(duration_nanos(d)))
    }

    /// `self - d`, saturating at the epoch.
    pub fn saturating_sub(self, d: Duration) -> Time {
        Time(self.0.saturating_sub(duration_nanos(d)))
    }
}

/// A duration's length in nanoseconds, saturating at `u64::MAX`.
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A duration of `secs` seconds; negative, NaN and non-finite inputs are clamped into range
/// (zero, or about 584 years).
pub fn duration_from_secs_f64(secs: f64) -> Duration {
    if secs.is_nan() || secs <= 0.0 {
        Duration::ZERO
    } else if secs >= u64::MAX as f64 * 1e-9 {
        Duration::from_nanos(u64::MAX)
    } else {
        Duration::from_nanos((secs * 1e9).round() as u64)
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = self.saturating_add(d);
    }
}

impl Sub<Duration> for Time {
    type Output = Time;
    fn sub(self, d: Duration) -> Time {
        self.saturating_sub(d)
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    /// Saturating: a later `rhs` gives zero.
    fn sub(self, rhs: Time) -> Duration {
        self.saturating_since(rhs)
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Time::from_nanos(5);
        assert_eq!(t - Time::from_nanos(9), Duration::ZERO);
        assert_eq!(t - Duration::from_nanos(9), Time::ZERO);
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(Time::from_secs_f64(-1.0), Time::ZERO);
        assert_eq!(Time::from_secs_f64(f64::NAN), Time::ZERO);
        assert_eq!(Time::from_secs_f64(1.5).as_nanos(), 1_500_000_000);
        assert_eq!(
            duration_from_secs_f64(f64::INFINITY),
            Duration::from_nanos(u64::MAX)
        );
    }
}
