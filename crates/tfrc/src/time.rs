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
    #[inline]
    pub fn from_secs_f64(secs: f64) -> Time {
        // Negative and NaN products give 0, and values past `u64::MAX` ns saturate.
        Time(round_u64(secs * 1e9))
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
#[inline]
pub fn duration_from_secs_f64(secs: f64) -> Duration {
    // `round_u64` clamps as `Time::from_secs_f64` needs: NaN and negatives to 0, huge to MAX.
    Duration::from_nanos(round_u64(secs * 1e9))
}

/// `x.round() as u64` (half away from zero, then Rust's saturating cast), for every `f64`, without
/// a call: `f64::round` is a libm call on x86-64 without SSE4.1, and the core rounds a few times
/// per packet.
///
/// Why it is exact.
/// - `0 ≤ x < 2^52` (every time and duration in practice: 2^52 ns is 52 days) exactly when x's
///   bits are below 2^52's (negatives and −0 have the sign bit set, NaN all exponent bits).
///   Then `y = x + 2^52` lies in [2^52, 2^53], where the doubles are the integers, so `y` is
///   `2^52 + r`, `r` being x rounded half to even, and `y`'s bits minus 2^52's are `r` (at
///   `y = 2^53` too). `(y − 2^52) − x = r − x` is exact (Sterbenz's lemma for x ≥ ½; `−x`
///   when r = 0), so it is −½ exactly when x is a half that was rounded down, where rounding
///   half away from zero gives one more. This needs no conversion instruction (`u64`
///   conversions take a dozen on x86-64 without AVX-512, and even `i64`'s carry Rust's
///   saturation fix-ups).
/// - Otherwise the cast alone is exact: from 2^52 up doubles are integers (and the cast
///   saturates at `u64::MAX` as the cast of `round(x)` does); negatives, −0 and NaN give 0,
///   as `round(x) ≤ 0` and NaN cast to 0.
#[inline(always)]
pub(crate) fn round_u64(x: f64) -> u64 {
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    if x.to_bits() < TWO_52.to_bits() {
        let y = x + TWO_52;
        let r = y.to_bits() - TWO_52.to_bits();
        r + u64::from((y - TWO_52) - x == -0.5)
    } else {
        x as u64
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
        assert_eq!(
            duration_from_secs_f64(f64::MAX),
            Duration::from_nanos(u64::MAX)
        );
        assert_eq!(duration_from_secs_f64(-1.0), Duration::ZERO);
        assert_eq!(duration_from_secs_f64(f64::NAN), Duration::ZERO);
        assert_eq!(duration_from_secs_f64(2.5e-9), Duration::from_nanos(3));
    }

    /// Halves, the values either side of them, and the edges of the integer range.
    #[test]
    #[allow(clippy::excessive_precision)]
    fn round_u64_edges() {
        let two52 = 4_503_599_627_370_496.0_f64;
        let two64 = 18_446_744_073_709_551_616.0_f64;
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            0.49999999999999994,
            1.5,
            2.5,
            two52 - 0.5,
            two52 - 1.5,
            two52,
            two52 + 1.0,
            two64,
            two64 * 2.0,
            two64 - 2048.0,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
        ];
        for k in [1u64, 2, 3, 1 << 20, 1 << 40, (1 << 51) + 7] {
            let h = k as f64 + 0.5;
            xs.extend([h, h.next_down(), h.next_up(), -h]);
        }
        for x in xs {
            assert_eq!(round_u64(x), x.round() as u64, "{x:e}");
        }
    }

    proptest::proptest! {
        /// Any double, by its bits (NaNs, infinities, subnormals and huge values included).
        #[test]
        fn round_u64_is_round_any_bits(bits in proptest::prelude::any::<u64>()) {
            let x = f64::from_bits(bits);
            proptest::prop_assert_eq!(round_u64(x), x.round() as u64);
        }

        /// Halves and their neighbours below 2^52, where the fraction matters.
        #[test]
        fn round_u64_is_round_near_halves(k in 0u64..1 << 52, d in -2i64..=2) {
            let mut x = k as f64 + 0.5;
            for _ in 0..d.unsigned_abs() {
                x = if d < 0 { x.next_down() } else { x.next_up() };
            }
            proptest::prop_assert_eq!(round_u64(x), x.round() as u64);
        }

        /// The nanosecond counts the simulator makes: seconds up to a day, times 1e9.
        #[test]
        fn round_u64_is_round_nanoseconds(secs in 0.0..86_400.0f64) {
            let x = secs * 1e9;
            proptest::prop_assert_eq!(round_u64(x), x.round() as u64);
        }
    }
}
