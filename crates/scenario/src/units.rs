//! Units in scenario files: bandwidths, durations and sizes, written as numbers or as strings
//! with a unit ("10Mbps", "150ms").
//!
//! Bandwidths follow NS-2's conventions, where "1.5Mb" means 1.5 × 10^6 bit/s; an upper-case `B`
//! means bytes. Durations are parsed to integer nanoseconds without going through floating point
//! when written with a unit, so "150ms" is exactly 150 000 000 ns.

use std::time::Duration;

/// SI prefixes a bandwidth unit may carry, as written. `m` (milli) and `g` are refused rather
/// than guessed: "10mb" could mean megabits or millibits.
const RATE_PREFIXES: [(&str, f64); 6] = [
    ("", 1.0),
    ("k", 1e3),
    ("K", 1e3),
    ("M", 1e6),
    ("G", 1e9),
    ("T", 1e12),
];

/// Bit suffixes (`b` lower-case) and byte suffixes (`B` upper-case, × 8).
const BIT_SUFFIXES: [&str; 7] = ["b", "bps", "bit", "bits", "b/s", "bit/s", "bits/s"];
const BYTE_SUFFIXES: [&str; 5] = ["B", "Bps", "B/s", "byte/s", "bytes/s"];

/// Every accepted bandwidth unit, for error messages and `docs/scenario.md`'s table.
pub fn bandwidth_units() -> String {
    let bits: Vec<String> = ["", "k", "M", "G"]
        .iter()
        .flat_map(|p| ["b/s", "bps", "bit/s", "bit", "b"].map(|s| format!("{p}{s}")))
        .collect();
    format!(
        "{} (k or K = 10^3, M = 10^6, G = 10^9, T = 10^12; `b`/`bit` bits, `B`/`byte` bytes: \
         B/s, KB/s, MB/s, Bps, MBps, ...)",
        bits.join(", ")
    )
}

/// The multiplier to bit/s of a bandwidth unit, or `None`.
fn rate_unit(unit: &str) -> Option<f64> {
    if unit.is_empty() {
        return Some(1.0);
    }
    for (p, mult) in RATE_PREFIXES {
        let Some(rest) = unit.strip_prefix(p) else {
            continue;
        };
        if BIT_SUFFIXES.contains(&rest) {
            return Some(mult);
        }
        if BYTE_SUFFIXES.contains(&rest) {
            return Some(mult * 8.0);
        }
    }
    None
}

/// Parse a bandwidth in bit/s: a bare number is bit/s; with a unit (a space between number
/// and unit is allowed): an SI prefix (none, `k`/`K`, `M`, `G`, `T`) and `b`, `bps`, `bit`,
/// `b/s`, `bit/s` for bits — "1.5Mb" is 1.5 × 10^6 bit/s as NS-2 writes it — or `B`, `Bps`,
/// `B/s`, `byte/s` for bytes (× 8). Lower-case `m` and `g` are refused as ambiguous.
pub fn parse_bandwidth(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')
        })
        .unwrap_or(t.len());
    // "1e6bps": the exponent letter is part of the number only when followed by a digit or sign.
    let (num, unit) = split_number(t, split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a bandwidth"))?;
    let unit = unit.trim();
    let Some(mult) = rate_unit(unit) else {
        let hint = if unit.starts_with(['m', 'g']) {
            " (lower-case m and g are ambiguous: write M for mega, G for giga)"
        } else {
            ""
        };
        return Err(format!(
            "unknown bandwidth unit '{unit}' in '{text}'{hint}; expected one of {}",
            bandwidth_units()
        ));
    };
    let bps = value * mult;
    if !bps.is_finite() {
        return Err(format!("'{text}' is not a finite bandwidth"));
    }
    Ok(bps)
}

/// Parse a non-negative duration: a bare number is seconds; with a unit (see
/// [`DURATION_UNITS`]): `s`, `min`, `ms`, `us` (or `µs`), `ns` and their spelled-out forms. An integer with a unit is converted exactly.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (num, ns_per) = split_duration(text)?;
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(ns_per)
            .map(Duration::from_nanos)
            .ok_or_else(|| format!("'{text}' is too long"));
    }
    let secs = parse_signed_seconds(text)?;
    if secs < 0.0 {
        return Err(format!("'{text}' is negative"));
    }
    if secs > 1e9 {
        return Err(format!("'{text}' is too long"));
    }
    Ok(Duration::from_nanos((secs * 1e9).round() as u64))
}

/// Parse a duration in seconds, allowing a sign (so that callers can say "negative").
pub fn parse_signed_seconds(text: &str) -> Result<f64, String> {
    let (num, ns_per) = split_duration(text)?;
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a duration"))?;
    let v = value * ns_per as f64 * 1e-9;
    if !v.is_finite() {
        return Err(format!("'{text}' is not a finite duration"));
    }
    Ok(v)
}

/// Every accepted duration unit, for error messages.
pub const DURATION_UNITS: &str = "s (sec, second), min, ms (msec), us (µs, usec), ns (nsec)";

/// The number part and the unit's length in nanoseconds.
fn split_duration(text: &str) -> Result<(&str, u64), String> {
    let t = text.trim();
    let (num, unit) = split_number(t, first_unit_char(t));
    let ns_per = match unit.trim() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
        "min" | "minute" | "minutes" => 60_000_000_000,
        "ms" | "msec" | "millisecond" | "milliseconds" => 1_000_000,
        // micro: ASCII u, the micro sign U+00B5 and the Greek mu U+03BC
        "us" | "µs" | "μs" | "usec" | "microsecond" | "microseconds" => 1_000,
        "ns" | "nsec" | "nanosecond" | "nanoseconds" => 1,
        other => {
            return Err(format!(
                "unknown time unit '{other}' in '{text}'; expected one of {DURATION_UNITS}"
            ))
        }
    };
    if num.is_empty() {
        return Err(format!("'{text}' is not a duration"));
    }
    Ok((num, ns_per))
}

fn first_unit_char(t: &str) -> usize {
    t.find(|c: char| {
        !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')
    })
    .unwrap_or(t.len())
}

/// Split "1.5e6Mbps" into number and unit, treating an `e`/`E` as part of the number only when
/// a digit or sign follows it (so "5e" is not taken for an exponent).
fn split_number(t: &str, split: usize) -> (&str, &str) {
    let bytes = t.as_bytes();
    let mut end = split;
    // Walk back over a trailing 'e'/'E' (or "e+"/"e-") that has no digits after it.
    while end > 0 {
        let c = bytes[end - 1];
        if c == b'e' || c == b'E' || c == b'+' || c == b'-' {
            let rest = &t[end..];
            if !rest.starts_with(|c: char| c.is_ascii_digit()) {
                end -= 1;
                continue;
            }
        }
        break;
    }
    (&t[..end], &t[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidths() {
        assert_eq!(parse_bandwidth("10Mbps").unwrap(), 10e6);
        assert_eq!(parse_bandwidth("1.5Mb").unwrap(), 1.5e6);
        assert_eq!(parse_bandwidth("500kbps").unwrap(), 500e3);
        assert_eq!(parse_bandwidth("448Kb").unwrap(), 448e3);
        assert_eq!(parse_bandwidth("1e6").unwrap(), 1e6);
        assert_eq!(parse_bandwidth("2 Gbps").unwrap(), 2e9);
        assert_eq!(parse_bandwidth("1MB").unwrap(), 8e6);
        assert!(parse_bandwidth("10 furlongs").unwrap_err().contains("unit"));
        // One grammar: every spelling of the list, with or without a space.
        for (text, bps) in [
            ("10b/s", 10.0),
            ("10 bps", 10.0),
            ("10bit/s", 10.0),
            ("10 kb/s", 10e3),
            ("10Kbps", 10e3),
            ("10kbit", 10e3),
            ("10Mb/s", 10e6),
            ("10 Mbps", 10e6),
            ("10Mbit", 10e6),
            ("10 Mbit/s", 10e6),
            ("10Gb/s", 10e9),
            ("10B/s", 80.0),
            ("10 KB/s", 80e3),
            ("10MB/s", 80e6),
            ("10 MBps", 80e6),
        ] {
            assert_eq!(parse_bandwidth(text).unwrap(), bps, "{text}");
        }
        // "m" could be milli or mega: refused, with the accepted list.
        let e = parse_bandwidth("10mbps").unwrap_err();
        assert!(e.contains("ambiguous") && e.contains("Mbit/s"), "{e}");
        assert!(parse_bandwidth("10 Mbytes")
            .unwrap_err()
            .contains("expected one of"));
        assert!(parse_bandwidth("Mbps").is_err());
        assert!(parse_bandwidth("").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("150ms").unwrap(), Duration::from_millis(150));
        assert_eq!(parse_duration("100s").unwrap(), Duration::from_secs(100));
        assert_eq!(parse_duration("100").unwrap(), Duration::from_secs(100));
        assert_eq!(parse_duration("0.1").unwrap(), Duration::from_millis(100));
        assert_eq!(
            parse_duration("2.5ms").unwrap(),
            Duration::from_micros(2500)
        );
        assert_eq!(parse_duration("7us").unwrap(), Duration::from_micros(7));
        assert_eq!(parse_duration("7 µs").unwrap(), Duration::from_micros(7));
        assert_eq!(parse_duration("7μs").unwrap(), Duration::from_micros(7));
        assert_eq!(parse_duration("2 min").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("5 msec").unwrap(), Duration::from_millis(5));
        assert!(parse_duration("5 hours")
            .unwrap_err()
            .contains("expected one of"));
        assert!(parse_duration("-1s").unwrap_err().contains("negative"));
        assert!(parse_duration("3 fortnights").unwrap_err().contains("unit"));
        assert!(parse_duration("1e400").is_err());
        assert!(parse_duration("99999999999999999999s").is_err());
    }
}
