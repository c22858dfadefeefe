//! Claims and the one verdict rule.
//!
//! A paper's claim is a hypothesis about a quantity: that it lies above (or below) a reference
//! value (0 for a difference or a relative change; an operational threshold such as Jain's
//! index 0.9 for a qualitative word like "unfair"), and optionally by how much (the magnitude
//! the paper states). The quantity is measured once per seed (paired: every configuration of
//! one seed shares its random start offsets), and its mean gets a 95% Student-t confidence
//! interval [lo, hi] over the N seeds. Then, for a claim "above" (mirror everything for
//! "below"):
//!
//! - **supported** when lo > reference (the CI excludes the reference on the claimed side) and,
//!   if a magnitude is claimed, hi ≥ magnitude (the claimed value is inside the CI or the CI is
//!   beyond it);
//! - **contradicted** when hi < reference (the CI lies entirely on the opposite side);
//! - **not supported** otherwise: the CI contains the reference, or the effect is significantly
//!   smaller than claimed, or there is no interval (fewer than two samples).
//!
//! A claim of an **absolute value** (a throughput a paper prints: "2917 kb/s") is a claim
//! "within": the quantity equals the printed value v up to a tolerance t the paper module states
//! (the claim's magnitude), i.e. it lies above v − t and below v + t. The rule above is applied
//! to both edges of the band [v − t, v + t] (an equivalence test): **supported** when the CI lies
//! inside the band (both one-sided claims supported), **contradicted** when it lies entirely
//! outside it (either one-sided claim contradicted), **not supported** otherwise (the CI
//! straddles an edge). Without a tolerance the band is the point v and the claim can only be
//! contradicted or not supported.
//!
//! `docs/reproduce.md` states the same rule; [`verdict`] is its only implementation.

use serde::{Deserialize, Serialize};

use lab::stats::MeanCi;
use report::Verdict;

/// On which side of its reference a claim puts the quantity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The quantity is larger than the reference.
    Above,
    /// The quantity is smaller than the reference.
    Below,
    /// The quantity equals the reference (an absolute value a paper prints) within ± the
    /// claim's magnitude (the tolerance).
    Within,
}

impl Direction {
    /// `>`, `<` or `=`.
    pub fn symbol(self) -> &'static str {
        match self {
            Direction::Above => ">",
            Direction::Below => "<",
            Direction::Within => "=",
        }
    }

    /// `above`, `below` or `within` (the CSV spelling).
    pub fn name(self) -> &'static str {
        match self {
            Direction::Above => "above",
            Direction::Below => "below",
            Direction::Within => "within",
        }
    }
}

/// The verdict for a claim "quantity is `direction` `reference` (by `magnitude`, if given)"
/// given the 95% CI `[lo, hi]` of the quantity; for [`Direction::Within`], "quantity is
/// `reference` ± `magnitude`". A NaN bound (no interval) gives [`Verdict::NotSupported`]. See
/// the module documentation for the rule.
pub fn verdict(
    direction: Direction,
    reference: f64,
    magnitude: Option<f64>,
    lo: f64,
    hi: f64,
) -> Verdict {
    if !(lo.is_finite() && hi.is_finite()) {
        return Verdict::NotSupported;
    }
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    // Mirror "below" onto "above" so one set of comparisons serves both; "within" is the two
    // one-sided claims on the edges of its band.
    let (lo, hi, reference, magnitude) = match direction {
        Direction::Above => (lo, hi, reference, magnitude),
        Direction::Below => (-hi, -lo, -reference, magnitude.map(|m| -m)),
        Direction::Within => {
            let t = magnitude.map_or(0.0, f64::abs);
            let above = verdict(Direction::Above, reference - t, None, lo, hi);
            let below = verdict(Direction::Below, reference + t, None, lo, hi);
            return match (above, below) {
                (Verdict::Contradicted, _) | (_, Verdict::Contradicted) => Verdict::Contradicted,
                (Verdict::Supported, Verdict::Supported) => Verdict::Supported,
                _ => Verdict::NotSupported,
            };
        }
    };
    if hi < reference {
        Verdict::Contradicted
    } else if lo > reference && magnitude.is_none_or(|m| hi >= m) {
        Verdict::Supported
    } else {
        Verdict::NotSupported
    }
}

/// The lowercase machine name of a verdict (`supported`, `not supported`, `contradicted`), as
/// `claims.csv` and `summary.json` write it.
pub fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Supported => "supported",
        Verdict::NotSupported => "not supported",
        Verdict::Contradicted => "contradicted",
    }
}

/// A paper's claim with its per-seed measurements; the framework computes the estimate and
/// the verdict ([`Claim::evaluate`]), a paper module never types one.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    /// Identifier, unique within the paper (`udp-unfair`); names rows in `claims.csv`.
    pub id: String,
    /// The claim in the paper's words (quoted), with where it is (`§IV`, `Table 16`).
    pub text: String,
    /// The quantity measured and the operational definition of any qualitative word, as the
    /// report states it (e.g. "mean Jain's index of the two flows' throughput over the rates
    /// 2–10 Mb/s; unfair means below 0.9").
    pub quantity: String,
    /// Unit of the quantity (may be empty).
    pub unit: String,
    /// The claimed side of the reference.
    pub direction: Direction,
    /// The reference value (0 for differences and relative changes).
    pub reference: f64,
    /// The magnitude the paper claims, on the claimed side of the reference, if it states one.
    pub magnitude: Option<f64>,
    /// One value of the quantity per seed, in seed order.
    pub samples: Vec<f64>,
}

impl Claim {
    /// A claim that `quantity` lies `direction` `reference`, without a magnitude and without
    /// samples yet.
    pub fn new(
        id: impl Into<String>,
        text: impl Into<String>,
        quantity: impl Into<String>,
        direction: Direction,
        reference: f64,
    ) -> Claim {
        Claim {
            id: id.into(),
            text: text.into(),
            quantity: quantity.into(),
            unit: String::new(),
            direction,
            reference,
            magnitude: None,
            samples: Vec::new(),
        }
    }

    /// Sets the unit.
    pub fn unit(mut self, unit: impl Into<String>) -> Claim {
        self.unit = unit.into();
        self
    }

    /// Sets the magnitude the paper claims.
    pub fn magnitude(mut self, m: f64) -> Claim {
        self.magnitude = Some(m);
        self
    }

    /// Sets the per-seed samples.
    pub fn samples(mut self, samples: Vec<f64>) -> Claim {
        self.samples = samples;
        self
    }

    /// How reports show the quantity: the factor to multiply by and the unit shown. A relative
    /// change (unit `fraction`) is shown in percent (`report::PERCENT`), as the papers print
    /// it; `claims.csv` and `summary.json` keep the fraction.
    pub fn shown(&self) -> (f64, &str) {
        if self.unit == "fraction" {
            (100.0, report::PERCENT)
        } else {
            (1.0, &self.unit)
        }
    }

    /// A value of the quantity as reports show it: `0.93`, or `+22%` for a fraction.
    pub fn show(&self, v: f64) -> String {
        match self.shown() {
            (k, report::PERCENT) => report::fmt_pct_auto(v * k),
            _ => report::fmt_num(v),
        }
    }

    /// `> 0.9` (or with the magnitude: `> 0 (claimed 0.25)`; an absolute value: `= 2917 ± 291.7`;
    /// a fraction in percent: `> 0% (claimed +22%)`), for tables.
    pub fn hypothesis(&self) -> String {
        if self.direction == Direction::Within {
            let t = self.magnitude.map_or(0.0, f64::abs);
            let t = match self.shown() {
                (k, report::PERCENT) => format!("{}%", report::fmt_num(t * k)),
                _ => report::fmt_num(t),
            };
            return format!("= {} ± {t}", self.show(self.reference));
        }
        let mut s = format!("{} {}", self.direction.symbol(), self.show(self.reference));
        if let Some(m) = self.magnitude {
            s.push_str(&format!(" (claimed {})", self.show(m)));
        }
        s
    }

    /// The measured mean and 95% CI as reports show them (see [`Claim::shown`]).
    pub fn shown_estimate(&self, mean: f64, lo: f64, hi: f64) -> report::Estimate {
        let k = self.shown().0;
        report::Estimate::new(mean * k, lo * k, hi * k)
    }

    /// The estimate over the samples and the verdict of the rule.
    pub fn evaluate(&self) -> ClaimResult {
        let stat = MeanCi::of(&self.samples);
        let (lo, hi) = stat
            .and_then(|m| Some((m.ci_lo()?, m.ci_hi()?)))
            .unwrap_or((f64::NAN, f64::NAN));
        ClaimResult {
            claim: self.clone(),
            stat,
            verdict: verdict(self.direction, self.reference, self.magnitude, lo, hi),
        }
    }
}

/// A claim with its estimate and verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimResult {
    /// The claim.
    pub claim: Claim,
    /// Mean and CI of the samples (`None` without finite samples).
    pub stat: Option<MeanCi>,
    /// The verdict.
    pub verdict: Verdict,
}

impl ClaimResult {
    /// Mean, CI low, CI high (NaN when unknown).
    pub fn interval(&self) -> (f64, f64, f64) {
        match self.stat {
            Some(m) => (
                m.mean,
                m.ci_lo().unwrap_or(f64::NAN),
                m.ci_hi().unwrap_or(f64::NAN),
            ),
            None => (f64::NAN, f64::NAN, f64::NAN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn above_zero() {
        let v = |lo, hi| verdict(Direction::Above, 0.0, None, lo, hi);
        assert_eq!(v(0.1, 0.3), Verdict::Supported);
        assert_eq!(v(-0.1, 0.3), Verdict::NotSupported);
        assert_eq!(
            v(0.0, 0.3),
            Verdict::NotSupported,
            "touching is not excluding"
        );
        assert_eq!(v(-0.3, -0.1), Verdict::Contradicted);
        assert_eq!(v(f64::NAN, f64::NAN), Verdict::NotSupported);
    }

    #[test]
    fn magnitude_must_be_reachable() {
        let v = |lo, hi| verdict(Direction::Above, 0.0, Some(0.25), lo, hi);
        assert_eq!(v(0.2, 0.3), Verdict::Supported, "claimed value inside");
        assert_eq!(v(0.3, 0.4), Verdict::Supported, "CI beyond the claim");
        assert_eq!(
            v(0.05, 0.1),
            Verdict::NotSupported,
            "significantly smaller than claimed"
        );
        assert_eq!(v(-0.2, -0.1), Verdict::Contradicted);
    }

    #[test]
    fn below_a_threshold_mirrors_above() {
        // "Unfair": Jain's index below 0.9.
        let v = |lo, hi| verdict(Direction::Below, 0.9, None, lo, hi);
        assert_eq!(v(0.6, 0.8), Verdict::Supported);
        assert_eq!(v(0.85, 0.95), Verdict::NotSupported);
        assert_eq!(v(0.95, 0.99), Verdict::Contradicted);
        // A claimed drop of 30%: relative change below 0, magnitude −0.3.
        let w = |lo, hi| verdict(Direction::Below, 0.0, Some(-0.3), lo, hi);
        assert_eq!(w(-0.35, -0.2), Verdict::Supported);
        assert_eq!(w(-0.1, -0.05), Verdict::NotSupported);
        assert_eq!(w(0.05, 0.1), Verdict::Contradicted);
        // Bounds given the wrong way round are the same interval.
        assert_eq!(v(0.8, 0.6), Verdict::Supported);
    }

    #[test]
    fn within_is_both_edges_of_the_band() {
        // A printed 2917 kb/s with a 10% tolerance: the band is [2625.3, 3208.7].
        let v = |lo, hi| verdict(Direction::Within, 2917.0, Some(291.7), lo, hi);
        assert_eq!(v(2800.0, 2950.0), Verdict::Supported, "CI inside the band");
        assert_eq!(
            v(3100.0, 3250.0),
            Verdict::NotSupported,
            "straddles the upper edge"
        );
        assert_eq!(
            v(2500.0, 3300.0),
            Verdict::NotSupported,
            "wider than the band"
        );
        assert_eq!(v(800.0, 850.0), Verdict::Contradicted, "entirely below");
        assert_eq!(v(3300.0, 3400.0), Verdict::Contradicted, "entirely above");
        assert_eq!(v(f64::NAN, 1.0), Verdict::NotSupported);
        // Without a tolerance the band is a point: never supported.
        let p = |lo, hi| verdict(Direction::Within, 1.0, None, lo, hi);
        assert_eq!(p(0.9, 1.1), Verdict::NotSupported);
        assert_eq!(p(1.1, 1.2), Verdict::Contradicted);
        let c = Claim::new("t", "t", "t", Direction::Within, 2917.0).magnitude(-291.7);
        assert_eq!(c.hypothesis(), "= 2917 ± 291.7");
    }

    #[test]
    fn evaluate_uses_the_t_interval() {
        let c = Claim::new("x", "x", "x", Direction::Above, 0.0).samples(vec![1.0, 2.0, 3.0]);
        let r = c.evaluate();
        let (m, lo, hi) = r.interval();
        assert_eq!(m, 2.0);
        // t(0.975, 2) = 4.303; sd = 1; half-width = 4.303 / √3 = 2.484: the CI holds 0.
        assert!((lo - (2.0 - 2.4842)).abs() < 1e-3 && (hi - 4.4842).abs() < 1e-3);
        assert_eq!(r.verdict, Verdict::NotSupported);
        let c = c.samples(vec![10.0, 11.0, 12.0]);
        assert_eq!(c.evaluate().verdict, Verdict::Supported);
        let one = Claim::new("y", "y", "y", Direction::Above, 0.0).samples(vec![5.0]);
        assert_eq!(one.evaluate().verdict, Verdict::NotSupported);
    }
}
