//! Mahimahi's link trace format, and its reading as a capacity that changes in steps.
//!
//! A Mahimahi trace (`mm-link`) has one line per delivery opportunity: the time in whole
//! milliseconds at which one 1500-byte packet may leave; a time listed k times is k
//! opportunities. Times never decrease, and the trace repeats with the last time as its period.
//! The simulator's links change bandwidth in steps (NS-2's `set` of `bandwidth_`), so a
//! scenario reads the trace as the rate of its opportunities over bins of `bin`:
//! `1500 · 8 · (opportunities in the bin) / bin` bit/s. The emulator runs the same steps, so
//! simulation and emulation see the same capacity.

use std::time::Duration;

/// The bytes one delivery opportunity carries (Mahimahi's MTU).
pub const OPPORTUNITY_BYTES: u64 = 1500;

/// A problem in a trace, with its 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceProblem {
    /// Line number (1-based); 0 for the file as a whole.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The delivery opportunities of a Mahimahi trace, in milliseconds: non-negative integers
/// that never decrease, at least one, the last one positive (the period). Blank lines and
/// `#` comments are skipped.
pub fn parse_mahimahi(text: &str) -> Result<Vec<u64>, TraceProblem> {
    let mut out: Vec<u64> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let t: u64 = match l.parse::<i64>() {
            Ok(t) if t >= 0 => t as u64,
            Ok(t) => {
                return Err(TraceProblem {
                    line,
                    message: format!("time {t} ms is negative"),
                })
            }
            Err(_) => {
                return Err(TraceProblem {
                    line,
                    message: format!("`{l}` is not a whole number of milliseconds"),
                })
            }
        };
        if let Some(&prev) = out.last() {
            if t < prev {
                return Err(TraceProblem {
                    line,
                    message: format!("time {t} ms is before the previous line's {prev} ms"),
                });
            }
        }
        out.push(t);
    }
    match out.last() {
        None => Err(TraceProblem {
            line: 0,
            message: "no delivery opportunities".into(),
        }),
        Some(0) => Err(TraceProblem {
            line: 0,
            message: "the last time is 0 ms, so the trace has no period to repeat with".into(),
        }),
        Some(_) => Ok(out),
    }
}

/// The trace's capacity over `[0, until)` in bins of `bin`: `(start of the step, bit/s)`,
/// consecutive equal bins merged. A bin without an opportunity is an error (a link of zero
/// bandwidth cannot be simulated): it names the bin and asks for a wider one.
pub fn mahimahi_steps(
    opportunities: &[u64],
    bin: Duration,
    until: Duration,
) -> Result<Vec<(Duration, f64)>, TraceProblem> {
    let period = *opportunities.last().unwrap_or(&0);
    let bin_ns = bin.as_nanos();
    if period == 0 || bin_ns == 0 {
        return Err(TraceProblem {
            line: 0,
            message: "empty trace or zero bin".into(),
        });
    }
    let bins = until.as_nanos().div_ceil(bin_ns);
    let mut counts = vec![0u64; bins as usize];
    // Opportunity k of repetition r is at (r · period + t_k) ms.
    let mut rep: u128 = 0;
    'outer: loop {
        for &t in opportunities {
            let at_ns = (rep * u128::from(period) + u128::from(t)) * 1_000_000;
            let b = at_ns / bin_ns;
            if b >= bins {
                break 'outer;
            }
            counts[b as usize] += 1;
        }
        rep += 1;
    }
    let mut steps: Vec<(Duration, f64)> = Vec::new();
    for (k, &c) in counts.iter().enumerate() {
        let at = Duration::from_nanos((k as u128 * bin_ns) as u64);
        if c == 0 {
            return Err(TraceProblem {
                line: 0,
                message: format!(
                    "no delivery opportunity in the bin at {:.3} s (bin {} ms): a zero \
                     bandwidth cannot be simulated",
                    at.as_secs_f64(),
                    bin.as_secs_f64() * 1e3
                ),
            });
        }
        let bps = (c * OPPORTUNITY_BYTES * 8) as f64 / bin.as_secs_f64();
        if steps.last().is_none_or(|s| s.1 != bps) {
            steps.push((at, bps));
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        assert_eq!(
            parse_mahimahi("1\n1\n3\n\n# x\n4 # y\n").unwrap(),
            vec![1, 1, 3, 4]
        );
        let e = parse_mahimahi("1\n5\n4\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("before the previous"), "{e:?}");
        let e = parse_mahimahi("2\n-1\n").unwrap_err();
        assert_eq!((e.line, e.message.as_str()), (2, "time -1 ms is negative"));
        assert_eq!(parse_mahimahi("1.5\n").unwrap_err().line, 1);
        assert_eq!(parse_mahimahi("").unwrap_err().line, 0);
        assert!(parse_mahimahi("0\n0\n")
            .unwrap_err()
            .message
            .contains("period"));
    }

    #[test]
    fn steps_count_opportunities_per_bin_and_wrap() {
        // Two opportunities in the first 10 ms, one in the next, period 20 ms.
        let ops = [1, 5, 15, 20];
        let s = mahimahi_steps(&ops, Duration::from_millis(10), Duration::from_millis(40)).unwrap();
        // Bins: [0,10): 1,5 → 2; [10,20): 15 → 1; [20,30): 20 (end of the first period),
        // 21, 25 → 3; [30,40): 35 → 1. 1500 B · 8 per opportunity over 10 ms = 1.2 Mb/s each.
        assert_eq!(
            s,
            vec![
                (Duration::ZERO, 2.4e6),
                (Duration::from_millis(10), 1.2e6),
                (Duration::from_millis(20), 3.6e6),
                (Duration::from_millis(30), 1.2e6),
            ]
        );
        let e = mahimahi_steps(&[30], Duration::from_millis(10), Duration::from_millis(40))
            .unwrap_err();
        assert!(e.message.contains("at 0.000 s"), "{e:?}");
        // 2, 10 | 12, 20 | 22, 30 | …: one opportunity in the first bin, then two in each
        // (the end of one period and the start of the next share a bin); equal bins merge.
        let s = mahimahi_steps(
            &[2, 10],
            Duration::from_millis(10),
            Duration::from_millis(50),
        )
        .unwrap();
        assert_eq!(
            s,
            vec![(Duration::ZERO, 1.2e6), (Duration::from_millis(10), 2.4e6)]
        );
    }
}
