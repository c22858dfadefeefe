//! Seed 003 (Ishak's thesis "Performance Comparison and Analysis of TCP-Friendly Rate Control
//! (TFRC) over the Network": TFRC-Veno, TFRC-SIMD and their combination), as parameter sets of the
//! one GAIMD equation [`Equation`] (`docs/variants.md` V0–V3).
//!
//! **Reconstruction.** Only the thesis's front matter survives and the TFRC-Veno and SIMD papers'
//! bodies could not be obtained; everything here follows the reconstruction in `docs/variants.md`,
//! and every constant is a parameter.

use crate::equation::Equation;

/// V1 TFRC-Veno (after TCP Veno, Fu & Liew 2003): on each feedback the sender estimates the
/// backlog `N = (X_recv/s)*(R_cur - BaseRTT)` packets and uses the `random` equation while
/// `N < threshold` (losses look random), the configured equation otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VenoRule {
    /// The equation for random losses (V1: X(1, 0.8); V3: X(alpha_SIMD, beta)).
    pub random: Equation,
    /// Backlog threshold in packets (Veno's beta: 3).
    pub threshold: f64,
    /// Plain RFC 5348 until this many RTT samples exist since BaseRTT was (re)set (3).
    pub min_samples: u32,
}

impl VenoRule {
    /// V1: `X(1, 0.8)` for random losses, N < 3, after 3 samples.
    pub const V1: VenoRule = VenoRule {
        random: Equation {
            gamma: 0.8,
            ..Equation::RFC5348
        },
        threshold: 3.0,
        min_samples: 3,
    };
}

/// How `alpha_SIMD` is computed for V3's random-loss equation `X(alpha_SIMD, gamma = beta)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimdCut {
    /// `docs/variants.md` reading: alpha_SIMD for a cut of `1 - beta` (the window keeps beta).
    OneMinusBeta,
    /// The other convention: alpha_SIMD for a cut of `beta`.
    Beta,
}

/// Which backlog rule the sender uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BacklogRule {
    /// None: the configured equation always.
    Off,
    /// V1/V3.
    Veno(VenoRule),
}

/// V2: between loss events the allowed rate may not grow faster than a SIMD window,
/// `X <= X0 * (1 + a*(t/R)^2 / w0^2)`, `w0 = X0*R/s`, `X0` the rate right after the last loss
/// event (a feedback reporting a higher p), `t` the time since.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GrowthCap {
    /// No cap.
    Off,
    /// The SIMD trajectory with increase parameter `a`.
    Simd {
        /// SIMD's `a` (TCP-friendly: [`simd_tcp_friendly_a`]).
        a: f64,
    },
}

/// The TCP-friendly SIMD increase parameter for decrease fraction `beta` (`docs/variants.md` V2):
/// `a = (81/4)*beta*(1-beta)/(3-2*beta)^2` (1.265625 at beta = 0.5).
pub fn simd_tcp_friendly_a(beta: f64) -> f64 {
    81.0 / 4.0 * beta * (1.0 - beta) / ((3.0 - 2.0 * beta) * (3.0 - 2.0 * beta))
}

/// SIMD's per-RTT additive increase for a cut of `c` (`docs/variants.md` V2):
/// `alpha = 2*sqrt(a) = 9*sqrt(c*(1-c))/(3-2*c)` (2.25 at c = 0.5).
pub fn simd_alpha(c: f64) -> f64 {
    9.0 * (c * (1.0 - c)).sqrt() / (3.0 - 2.0 * c)
}

/// V2's equation `X_SIMD = (s/R)*sqrt((1 - 2*beta/3)*sqrt(a/(beta*(1-beta)))/p)` as a parameter
/// set of the GAIMD equation: its first term `(s/R)*sqrt(alpha*(1+gamma)/(2*(1-gamma)*p))` equals
/// X_SIMD with `gamma = 1 - beta` and `alpha = 2*beta*C/(2 - beta)`,
/// `C = (1 - 2*beta/3)*sqrt(a/(beta*(1-beta)))`. `k_to` weighs the timeout term (X_SIMD has
/// none: 0).
pub fn simd_equation(beta: f64, a: f64, k_to: f64) -> Equation {
    let c = (1.0 - 2.0 * beta / 3.0) * (a / (beta * (1.0 - beta))).sqrt();
    Equation {
        alpha: 2.0 * beta * c / (2.0 - beta),
        gamma: 1.0 - beta,
        k_to,
        ..Equation::RFC5348
    }
}

/// V3's random-loss equation `X(alpha_SIMD, gamma = beta)` (`docs/variants.md` reading: alpha_SIMD
/// for a cut of `1 - beta`; [`SimdCut::Beta`] is the other convention).
pub fn combined_random_equation(beta: f64, cut: SimdCut) -> Equation {
    let c = match cut {
        SimdCut::OneMinusBeta => 1.0 - beta,
        SimdCut::Beta => beta,
    };
    Equation {
        alpha: simd_alpha(c),
        gamma: beta,
        ..Equation::RFC5348
    }
}

/// The sender's Veno state (V1).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct VenoState {
    /// BaseRTT, the minimum sample since the last reset (seconds).
    base: Option<f64>,
    /// Samples since the last reset.
    samples: u32,
    /// The last backlog estimate N, once `min_samples` samples exist.
    backlog: Option<f64>,
    /// Whether the last feedback judged losses random (N < threshold).
    random: bool,
}

impl VenoState {
    /// A feedback with RTT `sample` (seconds; R_cur, the minimum — and only — sample since the
    /// previous feedback) and receive rate `x_recv` (bytes/s) arrived.
    pub(crate) fn on_feedback(&mut self, rule: &VenoRule, sample: f64, x_recv: f64, s: f64) {
        let base = self.base.map_or(sample, |b| b.min(sample));
        self.base = Some(base);
        self.samples = self.samples.saturating_add(1);
        if self.samples < rule.min_samples.max(1) || s <= 0.0 {
            self.backlog = None;
            self.random = false;
            return;
        }
        // N = (X_recv/s) * (R_cur - BaseRTT) packets.
        let n = x_recv / s * (sample - base);
        let n = if n.is_finite() { n.max(0.0) } else { f64::MAX };
        self.backlog = Some(n);
        self.random = n < rule.threshold;
    }

    /// Idle or nofeedback expiry: BaseRTT is measured afresh.
    pub(crate) fn reset(&mut self) {
        *self = VenoState::default();
    }

    pub(crate) fn random(&self) -> bool {
        self.random
    }

    pub(crate) fn backlog(&self) -> Option<f64> {
        self.backlog
    }
}

/// The sender's SIMD growth-cap state (V2): X0 and when it was set.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SimdState {
    anchor: Option<(f64, f64)>,
}

impl SimdState {
    /// Apply the cap to `x` at time `now` (seconds) with smoothed RTT `r`; `loss_event` marks a
    /// feedback that reported a higher p, which re-anchors X0 at the resulting `x`.
    pub(crate) fn cap(
        &mut self,
        a: f64,
        x: f64,
        now: f64,
        r: f64,
        s: f64,
        loss_event: bool,
    ) -> f64 {
        if loss_event {
            self.anchor = Some((x, now));
            return x;
        }
        let Some((x0, t0)) = self.anchor else {
            return x;
        };
        if r <= 0.0 || s <= 0.0 || x0 <= 0.0 {
            return x;
        }
        let w0 = x0 * r / s;
        let t = (now - t0).max(0.0) / r;
        let cap = x0 * (1.0 + a * t * t / (w0 * w0));
        if cap.is_finite() {
            x.min(cap)
        } else {
            x
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    /// `docs/variants.md` V2 by hand: a(0.5) = 20.25·0.25/4 = 1.265625, alpha(0.5) = 9·0.5/2 =
    /// 2.25, alpha(0.1) = 9·0.3/2.8 = 0.964285714…
    #[test]
    fn simd_constants_by_hand() {
        assert!((simd_tcp_friendly_a(0.5) - 1.265625).abs() < 1e-15);
        assert!((simd_alpha(0.5) - 2.25).abs() < 1e-15);
        assert!((simd_alpha(0.1) - 2.7 / 2.8).abs() < 1e-15);
        // alpha = 2*sqrt(a) for the TCP-friendly a.
        for b in [0.1, 0.3, 0.5, 0.7] {
            assert!(rel(simd_alpha(b), 2.0 * simd_tcp_friendly_a(b).sqrt()) < 1e-12);
        }
    }

    /// V2: the GAIMD parameter set reproduces X_SIMD written out. With beta = 0.25, a = 2:
    /// C = (1 − 1/6)·sqrt(2/0.1875) = 0.8333…·3.2659863… = 2.7216553; X = (s/R)·sqrt(C/p) with
    /// s = 1000, R = 0.1, p = 0.01 is 10000·16.497440 = 164 974.40 B/s.
    #[test]
    fn simd_equation_matches_x_simd() {
        let eq = simd_equation(0.25, 2.0, 0.0);
        let x = eq.rate(1000.0, 0.1, 0.4, 0.01);
        assert!(rel(x, 164_974.40) < 1e-6, "{x}");
        for (beta, a, p) in [
            (0.5f64, 1.265625f64, 0.05),
            (0.125, 0.3, 0.2),
            (0.8, 4.0, 0.001),
        ] {
            let c: f64 = (1.0 - 2.0 * beta / 3.0) * (a / (beta * (1.0 - beta))).sqrt();
            let want = 1000.0 / 0.2 * (c / p).sqrt();
            let got = simd_equation(beta, a, 0.0).rate(1000.0, 0.2, 0.8, p);
            assert!(rel(got, want) < 1e-12, "beta {beta}: {got} vs {want}");
        }
        // With the TCP-friendly a, C = 3/2: X_SIMD is the RFC equation's first term.
        let eq = simd_equation(0.5, simd_tcp_friendly_a(0.5), 0.0);
        let first = 1000.0 / (0.1 * (2.0 * 0.05 / 3.0f64).sqrt());
        assert!(rel(eq.rate(1000.0, 0.1, 0.4, 0.05), first) < 1e-12);
    }

    /// V3 by hand: beta = 0.55 keeps 0.55, alpha for a cut of 0.45 is 9·sqrt(0.2475)/2.1 =
    /// 2.1321159…; the other convention (cut 0.55) is 9·sqrt(0.2475)/1.9 = 2.3565492…; beta = 0.9
    /// gives 2.7/2.8 = 0.9642857… and 2.7/1.2 = 2.25.
    #[test]
    fn combined_presets_by_hand() {
        let e = combined_random_equation(0.55, SimdCut::OneMinusBeta);
        assert!((e.alpha - 2.132_115_9).abs() < 1e-6, "{}", e.alpha);
        assert_eq!(e.gamma, 0.55);
        let e = combined_random_equation(0.55, SimdCut::Beta);
        assert!((e.alpha - 2.356_549_2).abs() < 1e-6, "{}", e.alpha);
        let e = combined_random_equation(0.9, SimdCut::OneMinusBeta);
        assert!((e.alpha - 0.964_285_714).abs() < 1e-8);
        let e = combined_random_equation(0.9, SimdCut::Beta);
        assert!((e.alpha - 2.25).abs() < 1e-12);
    }

    /// V1 backlog by hand: X_recv = 100 000 B/s, s = 1000 → 100 packets/s; R_cur − BaseRTT =
    /// 0.02 s → N = 2 < 3 (random); 0.05 s → N = 5 (congestion). Plain RFC before 3 samples.
    #[test]
    fn veno_backlog_by_hand() {
        let rule = VenoRule::V1;
        let mut v = VenoState::default();
        v.on_feedback(&rule, 0.10, 100_000.0, 1000.0);
        v.on_feedback(&rule, 0.12, 100_000.0, 1000.0);
        assert_eq!(v.backlog(), None);
        assert!(!v.random());
        v.on_feedback(&rule, 0.12, 100_000.0, 1000.0);
        assert!((v.backlog().unwrap() - 2.0).abs() < 1e-9);
        assert!(v.random());
        v.on_feedback(&rule, 0.15, 100_000.0, 1000.0);
        assert!((v.backlog().unwrap() - 5.0).abs() < 1e-9);
        assert!(!v.random());
        v.reset();
        assert_eq!(v.backlog(), None);
    }

    /// V2 cap by hand: X0 = 100 000 B/s, R = 0.1 s, s = 1000 → w0 = 10 packets; a = 1.265625,
    /// t = 1 s = 10 RTTs: cap = 100 000·(1 + 1.265625·100/100) = 226 562.5 B/s.
    #[test]
    fn simd_cap_by_hand() {
        let mut c = SimdState::default();
        assert_eq!(
            c.cap(1.265625, 5e5, 0.0, 0.1, 1000.0, false),
            5e5,
            "no anchor yet"
        );
        assert_eq!(c.cap(1.265625, 1e5, 3.0, 0.1, 1000.0, true), 1e5);
        let x = c.cap(1.265625, 5e5, 4.0, 0.1, 1000.0, false);
        assert!((x - 226_562.5).abs() < 1e-6, "{x}");
        assert_eq!(
            c.cap(1.265625, 2e5, 4.0, 0.1, 1000.0, false),
            2e5,
            "below the cap"
        );
    }
}
