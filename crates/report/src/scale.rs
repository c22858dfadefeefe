//! Axis scales, "nice" 1-2-5 ticks and number formatting for the charts.
//!
//! Everything here is total: non-finite or degenerate input yields a usable default axis rather
//! than a panic, because charts are drawn from whatever a run produced.

/// A tick-labelled axis domain: the data range widened to whole tick steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticks {
    /// Lower end of the axis domain.
    pub lo: f64,
    /// Upper end of the axis domain.
    pub hi: f64,
    /// Tick positions, ascending, within `[lo, hi]`.
    pub values: Vec<f64>,
    /// Distance between linear ticks (0 for log axes, whose labels are formatted one by one).
    pub step: f64,
}

/// The 1-2-5 step nearest above `span / target`.
///
/// Returns 0 when `span` or the result is not a positive finite number.
pub fn nice_step(span: f64, target: usize) -> f64 {
    let raw = span / target.max(1) as f64;
    if !(raw.is_finite() && raw > 0.0) {
        return 0.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm <= 1.0 + 1e-9 {
        1.0
    } else if norm <= 2.0 + 1e-9 {
        2.0
    } else if norm <= 5.0 + 1e-9 {
        5.0
    } else {
        10.0
    };
    let step = m * mag;
    if step.is_finite() && step > 0.0 {
        step
    } else {
        0.0
    }
}

/// Linear ticks with a 1-2-5 step covering `[lo, hi]`, about `target` of them.
///
/// A zero-width range is widened around its value so a constant series still gets an axis;
/// non-finite bounds give the axis `[0, 1]`.
pub fn linear_ticks(lo: f64, hi: f64, target: usize) -> Ticks {
    let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() {
        (lo.min(hi), lo.max(hi))
    } else {
        (0.0, 1.0)
    };
    let scale = lo.abs().max(hi.abs());
    if hi - lo <= scale * 1e-12 {
        // Constant data: centre it in a band 10% of its magnitude wide (or [0, 1] around zero).
        if scale == 0.0 {
            lo = 0.0;
            hi = 1.0;
        } else {
            let pad = scale * 0.1;
            lo -= pad;
            hi += pad;
        }
    }
    let step = nice_step(hi - lo, target);
    if step == 0.0 {
        // Spans too wide (or narrow) for f64 steps: label just the ends.
        return Ticks {
            lo,
            hi,
            values: vec![lo, hi],
            step: 0.0,
        };
    }
    let k0 = (lo / step + 1e-9).floor();
    let k1 = (hi / step - 1e-9).ceil();
    let (nlo, nhi) = (k0 * step, k1 * step);
    if !(nlo.is_finite() && nhi.is_finite()) || k1 - k0 > 1000.0 {
        return Ticks {
            lo,
            hi,
            values: vec![lo, hi],
            step: 0.0,
        };
    }
    let values = (0..=((k1 - k0) as i64))
        .map(|i| {
            let v = (k0 + i as f64) * step;
            // Avoid "-0" labels.
            if v == 0.0 {
                0.0
            } else {
                v
            }
        })
        .collect();
    Ticks {
        lo: nlo,
        hi: nhi,
        values,
        step,
    }
}

/// The 1-2-5 values (…, 0.5, 1, 2, 5, 10, …) at or below `v` (`down`) or at or above it.
fn nice_125(v: f64, down: bool) -> f64 {
    let e = (v.log10() + 1e-9).floor().clamp(-300.0, 300.0) as i32;
    let mags = [10f64.powi(e - 1), 10f64.powi(e), 10f64.powi(e + 1)];
    let cands = mags.iter().flat_map(|m| [1.0 * m, 2.0 * m, 5.0 * m]);
    if down {
        cands
            .filter(|c| *c <= v * (1.0 + 1e-9))
            .fold(mags[0], f64::max)
    } else {
        cands
            .filter(|c| *c >= v * (1.0 - 1e-9))
            .fold(mags[2] * 10.0, f64::min)
    }
}

/// Ticks for a log10 axis covering `[lo, hi]`; both must be positive (else `[1, 10]`).
///
/// Up to three decades, the domain is the data's range widened to the nearest 1-2-5 values
/// (data from 0.5 to 30 get the axis 0.5–50, not 0.1–100) with ticks at the 1-2-5 values in
/// it (every multiple of the decade when that gives fewer than three); wider ranges are widened
/// to whole decades, with ticks every decade up to about eight, and every n-th decade beyond.
pub fn log_ticks(lo: f64, hi: f64) -> Ticks {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    let (lo, hi) = if ok(lo) && ok(hi) {
        (lo.min(hi), lo.max(hi))
    } else {
        (1.0, 10.0)
    };
    let e0 = (lo.log10() + 1e-9).floor().clamp(-300.0, 300.0);
    let mut e1 = (hi.log10() - 1e-9).ceil().clamp(-300.0, 300.0);
    if e1 <= e0 {
        e1 = e0 + 1.0;
    }
    let decades = (e1 - e0) as i64;
    if decades <= 3 {
        let mut d0 = nice_125(lo, true);
        let mut d1 = nice_125(hi, false);
        if d1 <= d0 * (1.0 + 1e-9) {
            // One value: the 1-2-5 neighbours on either side.
            d0 = nice_125(d0 * 0.99, true);
            d1 = nice_125(d1 * 1.01, false);
        }
        let within = |v: &f64| *v >= d0 * (1.0 - 1e-9) && *v <= d1 * (1.0 + 1e-9);
        let decade_values = |ms: &[f64]| -> Vec<f64> {
            ((e0 as i32 - 1)..=(e1 as i32))
                .flat_map(|e| ms.iter().map(move |m| m * 10f64.powi(e)))
                .filter(within)
                .collect()
        };
        let mut values = decade_values(&[1.0, 2.0, 5.0]);
        if values.len() < 3 {
            values = decade_values(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        }
        return Ticks {
            lo: d0,
            hi: d1,
            values,
            step: 0.0,
        };
    }
    let mut values = Vec::new();
    let every = (decades + 7) / 8;
    let mut e = e0 as i64;
    while e <= e1 as i64 {
        values.push(10f64.powi(e as i32));
        e += every;
    }
    Ticks {
        lo: 10f64.powi(e0 as i32),
        hi: 10f64.powi(e1 as i32),
        values,
        step: 0.0,
    }
}

/// Label for a tick at `v` on a linear axis with step `step` (0: format `v` on its own).
///
/// Uses SI suffixes (k, M, G, T) from 10⁴ up, and exponent notation for tiny steps, with just
/// enough decimals to tell neighbouring ticks apart.
pub fn format_tick(v: f64, step: f64) -> String {
    if !v.is_finite() {
        return fmt_num(v);
    }
    if v == 0.0 {
        return "0".to_string();
    }
    if step <= 0.0 || !step.is_finite() {
        return fmt_num(v);
    }
    let big = v.abs().max(step);
    if big >= 1e4 {
        let (div, suffix) = si_prefix(big);
        return format!("{}{}", fixed_for_step(v / div, step / div), suffix);
    }
    if step < 1e-3 {
        return trim_exp(&format!("{:.*e}", sig_decimals(v, step), v));
    }
    fixed_for_step(v, step)
}

fn si_prefix(v: f64) -> (f64, &'static str) {
    let a = v.abs();
    if a >= 1e12 {
        (1e12, "T")
    } else if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else {
        (1e3, "k")
    }
}

/// Decimals needed to show multiples of `step`.
fn fixed_for_step(v: f64, step: f64) -> String {
    let d = (-(step.log10() + 1e-9).floor()).clamp(0.0, 12.0) as usize;
    // A step like 0.25 needs one decimal more than its magnitude says.
    let d = if ((step * 10f64.powi(d as i32)).round() - step * 10f64.powi(d as i32)).abs() > 1e-6 {
        d + 1
    } else {
        d
    };
    let s = format!("{v:.d$}");
    if s.trim_start_matches(['-', '0', '.']).is_empty() {
        // Rounds to zero: label it like the exact zero tick.
        "0".to_string()
    } else {
        s
    }
}

/// Mantissa decimals so that ticks `step` apart differ in exponent notation.
fn sig_decimals(v: f64, step: f64) -> usize {
    let ev = v.abs().log10().floor();
    let es = step.log10().floor();
    (ev - es).clamp(0.0, 6.0) as usize
}

/// `1.50e-5` → `1.5e-5`, `2.0e-5` → `2e-5`.
fn trim_exp(s: &str) -> String {
    match s.split_once('e') {
        Some((m, e)) if m.contains('.') => {
            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s.to_string(),
    }
}

/// A number for people: 4 significant digits, SI suffixes from 10⁴ up, exponent notation below
/// 10⁻³; `NaN` → `n/a`, infinities → `∞` / `−∞`.
pub fn fmt_num(v: f64) -> String {
    if v.is_nan() {
        return "n/a".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "∞".to_string()
        } else {
            "−∞".to_string()
        };
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let a = v.abs();
    if !(1e-3..1e15).contains(&a) {
        return trim_exp(&format!("{v:.3e}"));
    }
    if a >= 1e4 {
        let (div, suffix) = si_prefix(a);
        return format!("{}{}", sig4(v / div), suffix);
    }
    sig4(v)
}

/// Four significant digits, trailing zeros trimmed.
fn sig4(v: f64) -> String {
    let mag = v.abs().log10().floor() as i32;
    let d = (3 - mag).clamp(0, 12) as usize;
    let s = format!("{v:.d$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

/// Maps a data domain onto a pixel range, linearly or by log10.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// Domain start.
    pub d0: f64,
    /// Domain end.
    pub d1: f64,
    /// Pixel position of `d0`.
    pub r0: f64,
    /// Pixel position of `d1`.
    pub r1: f64,
    /// Whether the mapping is logarithmic.
    pub log: bool,
}

impl Scale {
    /// Pixel position of `v`, clamped to the range; `None` for values the scale cannot show
    /// (non-finite, or not positive on a log scale).
    pub fn map(&self, v: f64) -> Option<f64> {
        if !v.is_finite() || (self.log && v <= 0.0) {
            return None;
        }
        let t = if self.log {
            (v.ln() - self.d0.ln()) / (self.d1.ln() - self.d0.ln())
        } else {
            (v - self.d0) / (self.d1 - self.d0)
        };
        let t = if t.is_finite() {
            t.clamp(-0.02, 1.02)
        } else {
            0.5
        };
        Some(self.r0 + t * (self.r1 - self.r0))
    }

    /// Like [`Scale::map`], but clamps unshowable values to the nearer range end (for the far end
    /// of an error bar or a bar's base on a log axis).
    pub fn map_clamped(&self, v: f64) -> f64 {
        match self.map(v) {
            Some(p) => p,
            None if v == f64::INFINITY => self.r1,
            None => self.r0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_125(step: f64) -> bool {
        let mag = 10f64.powf(step.log10().floor());
        let m = step / mag;
        [1.0, 2.0, 5.0].iter().any(|c| (m - c).abs() < 1e-9)
    }

    #[test]
    fn steps_are_1_2_5() {
        for (span, target) in [(7.3, 5), (0.013, 4), (123456.0, 6), (1.0, 1), (99.0, 10)] {
            let s = nice_step(span, target);
            assert!(is_125(s), "{span}/{target} → {s}");
            assert!(
                s >= span / target as f64 - 1e-12,
                "{s} too small for {span}/{target}"
            );
            assert!(s < span / target as f64 * 5.0 + 1e-12);
        }
        assert_eq!(nice_step(f64::NAN, 5), 0.0);
        assert_eq!(nice_step(-1.0, 5), 0.0);
        assert_eq!(nice_step(f64::INFINITY, 5), 0.0);
    }

    #[test]
    fn linear_ticks_cover_data() {
        let t = linear_ticks(0.3, 9.7, 5);
        assert_eq!(t.lo, 0.0);
        assert_eq!(t.hi, 10.0);
        assert_eq!(t.step, 2.0);
        assert_eq!(t.values, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = linear_ticks(-0.042, 0.017, 5);
        assert!(t.lo <= -0.042 && t.hi >= 0.017);
        assert!(is_125(t.step));
        for w in t.values.windows(2) {
            assert!((w[1] - w[0] - t.step).abs() < 1e-12);
        }
    }

    #[test]
    fn degenerate_ranges_still_give_an_axis() {
        let t = linear_ticks(5.0, 5.0, 5);
        assert!(t.lo < 5.0 && t.hi > 5.0 && t.values.len() >= 2);
        let t = linear_ticks(0.0, 0.0, 5);
        assert_eq!((t.lo, t.hi), (0.0, 1.0));
        let t = linear_ticks(f64::NAN, 3.0, 5);
        assert_eq!((t.lo, t.hi), (0.0, 1.0));
        let t = linear_ticks(-f64::MAX, f64::MAX, 5);
        assert_eq!(t.values.len(), 2);
        assert!(t.values.iter().all(|v| v.is_finite()));
        let t = linear_ticks(1e-320, 2e-320, 5);
        assert!(t.values.len() >= 2);
    }

    #[test]
    fn log_ticks_span_decades() {
        let t = log_ticks(0.002, 0.3);
        assert_eq!(t.lo, 0.002);
        assert_eq!(t.hi, 0.5);
        assert!(t.values.contains(&0.01) && t.values.contains(&0.005));
        assert!(t.values.iter().all(|v| (t.lo..=t.hi).contains(v)));
        // Issue 18: data from 0.5 get an axis from 0.5, not 0.1.
        let t = log_ticks(0.5, 30.0);
        assert_eq!((t.lo, t.hi), (0.5, 50.0));
        assert_eq!(t.values, vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]);
        // Less than a 1-2-5 step apart: finer ticks, at least three.
        let t = log_ticks(0.55, 0.9);
        assert_eq!((t.lo, t.hi), (0.5, 1.0));
        assert!(t.values.len() >= 3, "{:?}", t.values);
        let t = log_ticks(1.0, 1e12);
        assert!(t.values.len() <= 13);
        assert_eq!(t.lo, 1.0);
        let t = log_ticks(-1.0, 0.0);
        assert_eq!((t.lo, t.hi), (1.0, 10.0));
        let t = log_ticks(10.0, 10.0);
        assert!(t.lo <= 10.0 && t.hi > 10.0);
    }

    #[test]
    fn tick_labels() {
        assert_eq!(format_tick(0.0, 0.5), "0");
        assert_eq!(format_tick(1.5, 0.5), "1.5");
        assert_eq!(format_tick(0.3 + 1e-16, 0.1), "0.3");
        assert_eq!(format_tick(2.5, 0.25), "2.50");
        assert_eq!(format_tick(1_500_000.0, 500_000.0), "1.5M");
        assert_eq!(format_tick(20_000.0, 10_000.0), "20k");
        assert_eq!(format_tick(2e-5, 1e-5), "2e-5");
        assert_eq!(format_tick(1.5e-5, 5e-6), "1.5e-5");
        assert_eq!(format_tick(-0.0000001, 0.1), "0");
        assert_eq!(format_tick(f64::NAN, 1.0), "n/a");
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(fmt_num(0.93), "0.93");
        assert_eq!(fmt_num(1234.5678), "1235");
        assert_eq!(fmt_num(1_500_000.0), "1.5M");
        assert_eq!(fmt_num(12345.0), "12.35k");
        assert_eq!(fmt_num(0.0001234), "1.234e-4");
        assert_eq!(fmt_num(-2.0), "-2");
        assert_eq!(fmt_num(f64::NAN), "n/a");
        assert_eq!(fmt_num(f64::NEG_INFINITY), "−∞");
    }

    #[test]
    fn scale_maps_and_rejects() {
        let s = Scale {
            d0: 0.0,
            d1: 10.0,
            r0: 100.0,
            r1: 0.0,
            log: false,
        };
        assert_eq!(s.map(5.0), Some(50.0));
        assert_eq!(s.map(f64::NAN), None);
        let l = Scale {
            d0: 1.0,
            d1: 100.0,
            r0: 0.0,
            r1: 200.0,
            log: true,
        };
        assert!((l.map(10.0).unwrap() - 100.0).abs() < 1e-9);
        assert_eq!(l.map(0.0), None);
        assert_eq!(l.map_clamped(-3.0), 0.0);
        assert_eq!(l.map_clamped(f64::INFINITY), 200.0);
    }
}
