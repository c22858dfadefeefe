//! Units in scenario files: bandwidths, durations and sizes, written as numbers or as strings
//! with a unit ("10Mbps", "150ms").
//!
//! Bandwidths follow NS-2's conventions, where "1.5Mb" means 1.5 × 10^6 bit/s; an upper-case `B`
//! means bytes. Durations are parsed to integer nanoseconds without going through floating point
//! when written with a unit, so "150ms" is exactly 150 000 000 ns.

use std::time::Duration;

/// Parse a bandwidth in bit/s: a bare number is bit/s; with a unit: `bps`, `kbps`, `Mbps`,
/// `Gbps` (also `b`, `kb`, `Kb`, `Mb`, `Gb` as NS-2 writes them), or bytes: `Bps`, `KBps`,
/// `MBps`, `GBps`, `B`, `KB`, `MB`, `GB` (× 8).
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
    let (mult, per_byte) = match unit {
        "" | "bps" | "b" | "bit/s" | "b/s" => (1.0, false),
        "kbps" | "Kbps" | "kb" | "Kb" | "kbit/s" | "kb/s" => (1e3, false),
        "Mbps" | "mbps" | "Mb" | "mb" | "Mbit/s" | "Mb/s" => (1e6, false),
        "Gbps" | "gbps" | "Gb" | "gb" | "Gbit/s" | "Gb/s" => (1e9, false),
        "Bps" | "B" | "B/s" => (1.0, true),
        "KBps" | "kBps" | "KB" | "kB" | "kB/s" | "KB/s" => (1e3, true),
        "MBps" | "MB" | "MB/s" => (1e6, true),
        "GBps" | "GB" | "GB/s" => (1e9, true),
        _ => return Err(format!("unknown bandwidth unit '{unit}' in '{text}'")),
    };
    let bps = value * mult * if per_byte { 8.0 } else { 1.0 };
    if !bps.is_finite() {
        return Err(format!("'{text}' is not a finite bandwidth"));
    }
    Ok(bps)
}

/// Parse a non-negative duration: a bare number is seconds; with a unit: `s`, `ms`, `us` (or
/// `µs`), `ns`. An integer with a unit is converted exactly.
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

/// The number part and the unit's length in nanoseconds.
fn split_duration(text: &str) -> Result<(&str, u64), String> {
    let t = text.trim();
    let (num, unit) = split_number(t, first_unit_char(t));
    let ns_per = match unit.trim() {
        "" | "s" => 1_000_000_000,
        "ms" => 1_000_000,
        "us" | "µs" => 1_000,
        "ns" => 1,
        other => return Err(format!("unknown time unit '{other}' in '{text}'")),
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
        assert!(parse_duration("-1s").unwrap_err().contains("negative"));
        assert!(parse_duration("3 fortnights").unwrap_err().contains("unit"));
        assert!(parse_duration("1e400").is_err());
        assert!(parse_duration("99999999999999999999s").is_err());
    }
}
