//! Time as the controllers see it: integer nanoseconds passed in by the caller.
//!
//! The same representation as the TFRC core's `tfrc::Time` (this crate is layer 0 and depends
//! on nothing, so it carries its own copy of the type; `netsim` converts with `as_nanos`).
//! Arithmetic saturates, so no input can crash a controller through time underflow.

use core::fmt;
use core::time::Duration;

/// A point in time: nanoseconds since an epoch the caller chooses.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

impl Time {
    /// The epoch.
    pub const ZERO: Time = Time(0);

    /// A time `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Time {
        Time(nanos)
    }

    /// A time `ms` milliseconds after the epoch.
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms.saturating_mul(1_000_000))
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds since the epoch.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// The interval from `earlier` to `self`, or zero if `earlier` is later.
    pub fn since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, saturating.
    pub fn saturating_add(self, d: Duration) -> Time {
        Time(
            self.0
                .saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        )
    }

    /// `self - d`, saturating at the epoch.
    pub fn saturating_sub(self, d: Duration) -> Time {
        Time(
            self.0
                .saturating_sub(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        )
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

/// Milliseconds in `d`, as the specs state their delays.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturates() {
        let t = Time::from_millis(5);
        assert_eq!(t.since(Time::from_millis(9)), Duration::ZERO);
        assert_eq!(t.saturating_sub(Duration::from_secs(1)), Time::ZERO);
        assert_eq!(
            Time::from_nanos(u64::MAX)
                .saturating_add(Duration::from_secs(1))
                .as_nanos(),
            u64::MAX
        );
        assert_eq!(ms(Duration::from_micros(1500)), 1.5);
    }
}
