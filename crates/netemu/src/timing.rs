//! Timing error: the distribution of how late events happened against when they were due, and
//! the rule that says when a run's timing would distort its results.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Lateness of a set of events: count, median, 99th percentile, maximum, and how many were
/// over 1 ms late.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lateness {
    /// Events measured.
    pub n: u64,
    /// Median, nanoseconds.
    pub p50_ns: u64,
    /// 99th percentile, nanoseconds.
    pub p99_ns: u64,
    /// Maximum, nanoseconds.
    pub max_ns: u64,
    /// Events more than 1 ms late.
    pub over_1ms: u64,
}

impl Lateness {
    /// The statistics of `samples` (nanoseconds; sorted in place). Percentiles are the
    /// nearest-rank ones: the smallest sample with at least that share of samples at or below.
    pub fn of(samples: &mut [u32]) -> Lateness {
        if samples.is_empty() {
            return Lateness::default();
        }
        samples.sort_unstable();
        let n = samples.len();
        let rank = |q: f64| {
            let k = (q * n as f64).ceil() as usize;
            u64::from(samples[k.clamp(1, n) - 1])
        };
        Lateness {
            n: n as u64,
            p50_ns: rank(0.5),
            p99_ns: rank(0.99),
            max_ns: u64::from(samples[n - 1]),
            over_1ms: samples.iter().filter(|&&x| x > 1_000_000).count() as u64,
        }
    }

    /// Why these timings would distort a run whose events must keep within `p99_limit` (99%
    /// of them no later) — `None` when they keep to it.
    pub fn distortion(&self, what: &str, p99_limit: Duration) -> Option<String> {
        let limit = u64::try_from(p99_limit.as_nanos()).unwrap_or(u64::MAX);
        (self.p99_ns > limit).then(|| {
            format!(
                "{what} lateness p99 {} exceeds {} (p50 {}, max {}, {} of {} over 1 ms)",
                fmt_ns(self.p99_ns),
                fmt_ns(limit),
                fmt_ns(self.p50_ns),
                fmt_ns(self.max_ns),
                self.over_1ms,
                self.n
            )
        })
    }

    /// `p50 / p99 / max` in readable units.
    pub fn summary(&self) -> String {
        format!(
            "p50 {} / p99 {} / max {} (n {})",
            fmt_ns(self.p50_ns),
            fmt_ns(self.p99_ns),
            fmt_ns(self.max_ns),
            self.n
        )
    }
}

/// Nanoseconds as `12 µs`, `1.25 ms` or `2.0 s`.
pub fn fmt_ns(ns: u64) -> String {
    if ns < 10_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else if ns < 1_000_000 {
        format!("{:.0} µs", ns as f64 / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} s", ns as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<u32> = (1..=200).rev().collect();
        let l = Lateness::of(&mut v);
        assert_eq!((l.n, l.p50_ns, l.p99_ns, l.max_ns), (200, 100, 198, 200));
        assert_eq!(Lateness::of(&mut []), Lateness::default());
        let mut one = [7];
        assert_eq!(Lateness::of(&mut one).p99_ns, 7);
    }

    #[test]
    fn distortion_names_the_figures() {
        let mut v = vec![10_000u32; 98];
        v.extend([600_000, 2_000_000]);
        let l = Lateness::of(&mut v);
        assert_eq!(l.p99_ns, 600_000);
        assert_eq!(l.over_1ms, 1);
        assert!(l
            .distortion("emulator", Duration::from_micros(700))
            .is_none());
        let why = l
            .distortion("emulator", Duration::from_micros(500))
            .unwrap();
        assert!(why.contains("p99 600 µs exceeds 500 µs"), "{why}");
        assert!(why.contains("1 of 100 over 1 ms"), "{why}");
    }
}
