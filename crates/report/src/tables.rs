//! Ready-made tables for reproduction reports: claim verdicts and paper-vs-measured comparisons.

use super::html::{Cell, CellClass, Table};
use super::scale::fmt_num;

/// A point estimate with its 95% confidence interval (NaN bounds: no interval known).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Point estimate (usually the mean over seeds).
    pub mean: f64,
    /// Lower bound of the 95% CI.
    pub lo: f64,
    /// Upper bound of the 95% CI.
    pub hi: f64,
}

impl Estimate {
    /// An estimate with interval `[lo, hi]`.
    pub fn new(mean: f64, lo: f64, hi: f64) -> Self {
        Estimate { mean, lo, hi }
    }

    /// An estimate with interval `mean ± half_width`.
    pub fn with_half_width(mean: f64, half_width: f64) -> Self {
        Estimate {
            mean,
            lo: mean - half_width,
            hi: mean + half_width,
        }
    }

    /// A single value without an interval.
    pub fn point(mean: f64) -> Self {
        Estimate {
            mean,
            lo: f64::NAN,
            hi: f64::NAN,
        }
    }

    /// `0.93 [0.91, 0.95]`, or just `0.93` without an interval, or `no data`.
    pub fn text(&self) -> String {
        if !self.mean.is_finite() {
            return "no data".to_string();
        }
        if self.lo.is_finite() && self.hi.is_finite() {
            format!(
                "{} [{}, {}]",
                fmt_num(self.mean),
                fmt_num(self.lo.min(self.hi)),
                fmt_num(self.lo.max(self.hi))
            )
        } else {
            fmt_num(self.mean)
        }
    }

    /// `−0.4% [−1.2%, +0.5%]` for an estimate in percent: as many decimals as give the
    /// interval's width two significant digits (0 to 3), or `no data`.
    pub fn percent_text(&self) -> String {
        if !self.mean.is_finite() {
            return "no data".to_string();
        }
        if self.lo.is_finite() && self.hi.is_finite() {
            let (lo, hi) = (self.lo.min(self.hi), self.lo.max(self.hi));
            let d = pct_decimals(if hi > lo { hi - lo } else { self.mean.abs() });
            format!(
                "{} [{}, {}]",
                fmt_pct(self.mean, d),
                fmt_pct(lo, d),
                fmt_pct(hi, d)
            )
        } else {
            fmt_pct_auto(self.mean)
        }
    }

    /// [`Estimate::percent_text`] for [`PERCENT`], else [`Estimate::text`] followed by the unit.
    pub fn text_with_unit(&self, unit: &str) -> String {
        if unit == PERCENT {
            self.percent_text()
        } else if unit.is_empty() || !self.mean.is_finite() {
            self.text()
        } else {
            format!("{} {unit}", self.text())
        }
    }
}

/// The unit of a relative quantity shown in percent: an estimate, a tick or a value in this unit
/// reads `+22%`, `−0.4% [−1.2%, +0.5%]`, the way papers print relative changes.
pub const PERCENT: &str = "%";

/// `+22%`, `−0.4%`, `0%`: a signed percentage with `decimals` decimals and a typographic minus.
pub fn fmt_pct(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return format!("{}%", fmt_num(v));
    }
    let s = format!("{:.*}", decimals, v.abs());
    if s.trim_start_matches(['0', '.']).is_empty() {
        // Rounds to zero: no sign.
        format!("{s}%")
    } else if v < 0.0 {
        format!("\u{2212}{s}%")
    } else {
        format!("+{s}%")
    }
}

/// Decimals for a percentage: two significant digits of `width` (an interval's width, or the
/// value itself), between 0 and 3.
fn pct_decimals(width: f64) -> usize {
    if !(width.is_finite() && width > 0.0) {
        return 1;
    }
    (1.0 - width.log10().floor()).clamp(0.0, 3.0) as usize
}

/// `+22%`, `−0.4%`: a percentage to two significant digits (at most three decimals).
pub fn fmt_pct_auto(v: f64) -> String {
    if v == 0.0 {
        return "0%".to_string();
    }
    fmt_pct(v, pct_decimals(v.abs()))
}

/// The outcome of checking a paper's claim against measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The measurements show what the paper claims.
    Supported,
    /// The measurements neither show nor refute it (e.g. the CI straddles the threshold).
    NotSupported,
    /// The measurements show the opposite.
    Contradicted,
}

impl Verdict {
    /// Human label with a symbol, so the verdict reads without colour.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Supported => "✓ supported",
            Verdict::NotSupported => "– not supported",
            Verdict::Contradicted => "✗ contradicted",
        }
    }

    /// Style class of the verdict cell.
    pub fn class(self) -> CellClass {
        match self {
            Verdict::Supported => CellClass::Supported,
            Verdict::NotSupported => CellClass::NotSupported,
            Verdict::Contradicted => CellClass::Contradicted,
        }
    }

    /// A coloured table cell for the verdict.
    pub fn cell(self) -> Cell {
        Cell::new(self.label()).class(self.class())
    }
}

/// One row of a verdict table.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictRow {
    /// The claim, in the paper's words or close to them.
    pub claim: String,
    /// What was measured.
    pub measured: Estimate,
    /// Unit of the measurement (may be empty).
    pub unit: String,
    /// The verdict.
    pub verdict: Verdict,
}

/// Claim | Measured (95% CI) | Unit | Verdict, with coloured verdict cells.
pub fn verdict_table(rows: &[VerdictRow]) -> Table {
    let mut t = Table::new(["Claim", "Measured [95% CI]", "Unit", "Verdict"]);
    for r in rows {
        t.push_row([
            Cell::new(&r.claim),
            Cell::new(r.measured.text()).class(CellClass::Num),
            Cell::new(&r.unit),
            r.verdict.cell(),
        ]);
    }
    t
}

/// One row of a paper-vs-measured comparison table.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparisonRow {
    /// What is compared (e.g. "throughput of flow 1 at p = 1%").
    pub quantity: String,
    /// Unit of both values (may be empty).
    pub unit: String,
    /// The value printed in the paper.
    pub paper: f64,
    /// The measured value.
    pub measured: Estimate,
    /// Whether the measured value is acceptably close (the caller's tolerance).
    pub pass: bool,
}

/// `+0.05 (+5.3%)`: measured minus paper, and relative to the paper's value when it is not 0.
pub fn difference_text(paper: f64, measured: f64) -> String {
    let d = measured - paper;
    if !d.is_finite() {
        return "n/a".to_string();
    }
    let sign = if d > 0.0 { "+" } else { "" };
    if paper != 0.0 {
        let rel = d / paper.abs() * 100.0;
        format!("{sign}{} ({sign}{rel:.1}%)", fmt_num(d))
    } else {
        format!("{sign}{}", fmt_num(d))
    }
}

/// Quantity | Unit | Paper | Measured (95% CI) | Difference | Result, with coloured results.
///
/// A row whose measured value is not finite always shows "✗ fail": no data is not a pass.
pub fn comparison_table(rows: &[ComparisonRow]) -> Table {
    let mut t = Table::new([
        "Quantity",
        "Unit",
        "Paper",
        "Measured [95% CI]",
        "Difference",
        "Result",
    ]);
    for r in rows {
        let pass = r.pass && r.measured.mean.is_finite();
        let result = if pass {
            Cell::new("✓ pass").class(CellClass::Pass)
        } else {
            Cell::new("✗ fail").class(CellClass::Fail)
        };
        t.push_row([
            Cell::new(&r.quantity),
            Cell::new(&r.unit),
            Cell::num(r.paper),
            Cell::new(r.measured.text()).class(CellClass::Num),
            Cell::new(difference_text(r.paper, r.measured.mean)).class(CellClass::Num),
            result,
        ]);
    }
    t
}
