//! The TCP throughput equation (RFC 5348 §3.1) and its inverse (for §6.3.1).
//!
//! RFC 5348 §3.1:
//! ```text
//!                               s
//!   X_Bps = ----------------------------------------------------------
//!           R*sqrt(2*b*p/3) + (t_RTO * (3*sqrt(3*b*p/8)*p*(1+32*p^2)))
//! ```
//! One function serves every profile and variant. It is written in the GAIMD form of Padhye,
//! Yang & Lam (seed 003, `docs/variants.md` V0): a window protocol that adds `alpha` packets per
//! RTT and keeps the fraction `gamma` of its window on a loss event. `alpha = 1, gamma = 0.5,
//! k_to = 1` is exactly RFC 5348. NS-2.35's `p_to_b` additionally clamps the timeout factor
//! `3*sqrt(3bp/8)` at 1 (`docs/tfrc-core.md` N11), selected by [`Equation::clamp_timeout`].
//!
//! MulTFRC (draft-irtf-iccrg-multfrc-01, `docs/variants.md`) replaces the equation by one that
//! emulates N TFRC flows; it is the [`EquationForm::MulTfrc`] value of [`Equation::form`] and
//! also takes j, the number of packets lost per loss event ([`Equation::rate_j`]).

/// NS-2.35's `MAXRATE` (formula.h): the equation's result is capped at 25e6 bytes/s.
pub const NS2_MAX_RATE: f64 = 25e6;

/// Which throughput equation [`Equation::rate_j`] evaluates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EquationForm {
    /// One window flow: RFC 5348 §3.1 in the GAIMD form (`alpha`, `gamma`, `k_to`).
    Gaimd,
    /// MulTFRC (draft-irtf-iccrg-multfrc-01 §2, `docs/variants.md`): the rate of `n` TFRC flows
    /// that together lose j packets per loss event. `alpha`, `gamma` and `k_to` are not used;
    /// `b`, `clamp_timeout` (not used either: the formula has no such factor) and `max_rate`
    /// keep their meaning.
    MulTfrc {
        /// N, the number of TFRC flows emulated (any positive real).
        n: f64,
    },
}

/// Parameters of the throughput equation. Construct with [`Equation::RFC5348`] and adjust.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Equation {
    /// Packets acknowledged per ACK, `b` (RFC 5348 §3.1 recommends 1).
    pub b: f64,
    /// Additive increase in packets per RTT (`alpha`, V0). RFC 5348: 1.
    pub alpha: f64,
    /// Fraction of the window kept on a loss event (`gamma`, V0). RFC 5348: 0.5.
    pub gamma: f64,
    /// Multiplier on the timeout term (`k_to`, V0). RFC 5348: 1.
    pub k_to: f64,
    /// Clamp the timeout factor `3*sqrt((1-gamma^2)*b*p/(2*alpha))` at 1, as NS-2.35's `p_to_b`
    /// and the full Padhye model do (only matters for p > 8/27 with the RFC parameters).
    pub clamp_timeout: bool,
    /// Upper bound on the result in bytes/s. RFC 5348 has none (`f64::INFINITY`); NS-2.35's
    /// `p_to_b` caps at `MAXRATE` = 25e6 B/s and returns that cap for p = 0 (`docs/tfrc-core.md`
    /// N11).
    pub max_rate: f64,
    /// The equation itself: RFC 5348's (GAIMD form) or MulTFRC's.
    pub form: EquationForm,
}

impl Equation {
    /// The RFC 5348 §3.1 equation: b = 1, alpha = 1, gamma = 0.5, no clamp.
    pub const RFC5348: Equation = Equation {
        b: 1.0,
        alpha: 1.0,
        gamma: 0.5,
        k_to: 1.0,
        clamp_timeout: false,
        max_rate: f64::INFINITY,
        form: EquationForm::Gaimd,
    };

    /// NS-2.35's `p_to_b`: the RFC equation with the timeout factor clamped at 1 and the result
    /// capped at 25e6 B/s (`docs/tfrc-core.md` N11).
    pub const NS2: Equation = Equation {
        clamp_timeout: true,
        max_rate: NS2_MAX_RATE,
        ..Equation::RFC5348
    };

    /// The denominator divided by `s`: seconds per byte-of-segment, i.e. `s / X`.
    fn denominator(&self, r: f64, t_rto: f64, p: f64) -> f64 {
        let (a, g, b) = (self.alpha, self.gamma, self.b);
        let first = r * (2.0 * b * (1.0 - g) * p / (a * (1.0 + g))).sqrt();
        let mut to_factor = 3.0 * ((1.0 - g * g) * b * p / (2.0 * a)).sqrt();
        if self.clamp_timeout && to_factor > 1.0 {
            to_factor = 1.0;
        }
        first + self.k_to * t_rto * to_factor * p * (1.0 + 32.0 * p * p)
    }

    /// The allowed rate X_Bps in bytes/s for segment size `s` (bytes), round-trip time `r`
    /// (seconds), retransmission timeout `t_rto` (seconds) and loss event rate `p`.
    ///
    /// Out-of-range inputs never give NaN: `p` is clamped into [0, 1] and `p = 0` (no loss) gives
    /// [`Equation::max_rate`] (infinite for RFC 5348; callers cap the rate). Non-positive `r` is
    /// treated as 1 µs.
    pub fn rate(&self, s: f64, r: f64, t_rto: f64, p: f64) -> f64 {
        self.rate_j(s, r, t_rto, p, 1.0)
    }

    /// [`Equation::rate`] with j, the average number of packets lost (or marked) per loss event,
    /// which only MulTFRC's equation uses (j < 1 and NaN count as 1).
    pub fn rate_j(&self, s: f64, r: f64, t_rto: f64, p: f64, j: f64) -> f64 {
        let p = if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) };
        let cap = if self.max_rate.is_nan() {
            f64::INFINITY
        } else {
            self.max_rate.max(0.0)
        };
        if p == 0.0 {
            return cap;
        }
        let r = if r.is_finite() && r > 1e-6 { r } else { 1e-6 };
        let t_rto = if t_rto.is_finite() && t_rto > 0.0 {
            t_rto
        } else {
            0.0
        };
        let s = if s.is_finite() && s > 0.0 { s } else { 0.0 };
        let x = match self.form {
            EquationForm::Gaimd => s / self.denominator(r, t_rto, p),
            EquationForm::MulTfrc { n } => {
                s * multfrc_packets_per_second(n, self.b, r, t_rto, p, j)
            }
        };
        if x.is_nan() {
            // Only reachable with NaN parameters (alpha, gamma, b); report "no allowance".
            0.0
        } else {
            x.min(cap)
        }
    }

    /// The loss event rate p at which [`Equation::rate`] equals `x` (bytes/s), for §6.3.1's
    /// first loss interval. The rate falls strictly as p grows, so this bisects on log(p) over
    /// [1e-12, 1] to a relative error far below the RFC's ±5% requirement. A target above the
    /// rate at p = 1e-12 gives 1e-12; a target below the rate at p = 1 gives 1.
    pub fn invert(&self, x: f64, s: f64, r: f64, t_rto: f64) -> f64 {
        const P_MIN: f64 = 1e-12;
        if x.is_nan() || s.is_nan() || x <= 0.0 || s <= 0.0 {
            return 1.0;
        }
        if self.rate(s, r, t_rto, P_MIN) <= x {
            return P_MIN;
        }
        if self.rate(s, r, t_rto, 1.0) >= x {
            return 1.0;
        }
        let (mut lo, mut hi) = (P_MIN.ln(), 0.0_f64);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if self.rate(s, r, t_rto, mid.exp()) > x {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (0.5 * (lo + hi)).exp()
    }
}

impl Equation {
    /// NS-2.35's `b_to_p` (formula-with-inverse.h), the inverse its receiver uses for the first
    /// loss interval (`docs/tfrc-core.md` N21): a bisection that starts at p = 0.5 with step 0.25,
    /// halves the step each round, stops as soon as the rate is within ±5% of `x`, and gives up
    /// after 31 evaluations. It can return p outside the exact inverse by up to 5% in rate, which
    /// is what makes NS-2's first interval what it is; [`Equation::invert`] is the exact inverse.
    pub fn invert_ns2(&self, x: f64, s: f64, r: f64, t_rto: f64) -> f64 {
        let mut p = 0.5;
        let mut step = 0.25;
        for _ in 0..31 {
            let got = self.rate(s, r, t_rto, p);
            if got > 0.95 * x && got < 1.05 * x {
                return p;
            }
            if got > x {
                p += step;
            } else {
                p -= step;
            }
            step /= 2.0;
        }
        p
    }
}

/// MulTFRC's rate in packets per second (draft-irtf-iccrg-multfrc-01 §2, restated in
/// `docs/variants.md`): N flows whose aggregate loses j packets per loss event, of which `af`
/// flows are hit; x is the number of rounds in a loss-free period, q the number of flows in
/// timeout. For N ≤ 1 one flow is always hit (`af` = 1), where the draft's
/// `N*(1 - (1 - 1/N)^j)` is undefined for N < 1 (reading, `docs/variants.md`). p = 1 gives
/// an infinite `z` and so q·/z = 0: the rate of the first term.
fn multfrc_packets_per_second(n: f64, b: f64, r: f64, t_rto: f64, p: f64, j: f64) -> f64 {
    let n = if n.is_finite() && n > 0.0 { n } else { 1.0 };
    let j = if j.is_finite() && j >= 1.0 { j } else { 1.0 };
    // "If (N < 12) af = N * (1-(1-1/N)^j) Else af = j; af = max(min(af, ceil(N)), 1)".
    let af = if n <= 1.0 {
        1.0
    } else if n < 12.0 {
        n * (1.0 - (1.0 - 1.0 / n).powf(j))
    } else {
        j
    };
    let af = af.min(n.ceil()).max(1.0);
    // "a = p*b*af*(24*N^2 + p*b*af*(N-2*af)^2)"; "x = (af*p*b*(2*af-N) + sqrt(a))/(6*N^2*p)".
    let pb = p * b;
    let a = pb * af * (24.0 * n * n + pb * af * (n - 2.0 * af) * (n - 2.0 * af));
    let x = (af * pb * (2.0 * af - n) + a.sqrt()) / (6.0 * n * n * p);
    // "z = t_RTO*(1+32*p^2)/(1-p)".
    let z = t_rto * (1.0 + 32.0 * p * p) / (1.0 - p);
    // "q = min(2*j*b*z/(R*(1+3*N/j)*x^2), N*z/(x*R), N)".
    let q = (2.0 * j * b * z / (r * (1.0 + 3.0 * n / j) * x * x))
        .min(n * z / (x * r))
        .min(n);
    let q = if q.is_nan() { n } else { q };
    // "X_Bps = ((1-q/N)/(p*x*R) + q/(z*(1-p)))*s".
    let timeout = if z.is_finite() && z > 0.0 {
        q / (z * (1.0 - p))
    } else {
        0.0
    };
    (1.0 - q / n) / (p * x * r) + timeout
}

impl Default for Equation {
    fn default() -> Self {
        Equation::RFC5348
    }
}

/// RFC 5348 §3.1 with its recommended constants: b = 1 and t_RTO = 4R.
pub fn rfc5348_rate(s: f64, r: f64, p: f64) -> f64 {
    Equation::RFC5348.rate(s, r, 4.0 * r, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        ((a - b) / b).abs() <= rel
    }

    /// RFC 5348 §3.1: test vectors computed by hand from the formula (s = 1000 B, R = 0.1 s,
    /// t_RTO = 4R, b = 1), which the issue requires to ±0.1%.
    #[test]
    fn rfc5348_s3_1_test_vectors() {
        for (p, x) in [
            (1e-4, 1_223_643.6),
            (1e-3, 383_843.6),
            (0.01, 112_332.2),
            (0.05, 36_858.8),
            (0.1, 17_701.0),
            (0.2, 5_365.6),
            (0.5, 417.4),
            (1.0, 41.1),
        ] {
            let got = rfc5348_rate(1000.0, 0.1, p);
            assert!(close(got, x, 0.001), "p={p}: {got} vs {x}");
        }
    }

    /// RFC 5348 §8.1: with b = 1 and t_RTO = 4R the equation is s / (R f(p)).
    #[test]
    fn rfc5348_s8_1_simplified_form() {
        for p in [1e-5, 0.003, 0.07, 0.4, 1.0] {
            let f = (2.0 * p / 3.0_f64).sqrt()
                + 12.0 * (3.0 * p / 8.0_f64).sqrt() * p * (1.0 + 32.0 * p * p);
            let want = 1460.0 / (0.25 * f);
            assert!(close(rfc5348_rate(1460.0, 0.25, p), want, 1e-12));
        }
    }

    /// `docs/tfrc-core.md` N11: NS-2's clamp gives 538 B/s at p = 0.5, R = 0.1 (the RFC gives 417).
    #[test]
    fn ns2_clamp_at_high_loss() {
        let x = Equation::NS2.rate(1000.0, 0.1, 0.4, 0.5);
        assert!(close(x, 538.0, 0.002), "{x}");
        // Below p = 8/27 the clamp is inactive.
        let p = 0.2;
        assert_eq!(
            Equation::NS2.rate(1000.0, 0.1, 0.4, p),
            rfc5348_rate(1000.0, 0.1, p)
        );
    }

    /// RFC 5348 §6.3.1: the inverse finds p within ±5% of the target rate (here far tighter).
    #[test]
    fn rfc5348_s6_3_1_inverse_round_trips() {
        for p in [1e-6, 1e-4, 0.01, 0.1, 0.5, 0.9] {
            let x = rfc5348_rate(1000.0, 0.05, p);
            let back = Equation::RFC5348.invert(x, 1000.0, 0.05, 0.2);
            assert!(close(back, p, 1e-9), "{p} -> {back}");
        }
        // Out of range targets clamp instead of failing.
        assert_eq!(Equation::RFC5348.invert(1e30, 1000.0, 0.1, 0.4), 1e-12);
        assert_eq!(Equation::RFC5348.invert(1e-9, 1000.0, 0.1, 0.4), 1.0);
        assert_eq!(Equation::RFC5348.invert(f64::NAN, 1000.0, 0.1, 0.4), 1.0);
    }

    /// Seed 003 V0: the GAIMD form with alpha = 1, gamma = 0.5, k_to = 1 is RFC 5348 §3.1
    /// "X_Bps = s / (R*sqrt(2*b*p/3) + (t_RTO * (3*sqrt(3*b*p/8)*p*(1+32*p^2))))" to 1e-12
    /// relative, over a grid of p, R, t_RTO and b.
    #[test]
    fn seed003_v0_general_equation_is_rfc5348() {
        for b in [1.0, 2.0] {
            let eq = Equation {
                b,
                alpha: 1.0,
                gamma: 0.5,
                k_to: 1.0,
                clamp_timeout: false,
                max_rate: f64::INFINITY,
                form: EquationForm::Gaimd,
            };
            for p in [1e-6, 1e-4, 0.003, 0.05, 0.1, 0.3, 0.7, 1.0] {
                for (r, t_rto) in [(0.001, 0.004), (0.1, 0.4), (0.25, 1.0), (2.0, 0.3)] {
                    let s = 1460.0;
                    let rfc = s
                        / (r * (2.0 * b * p / 3.0).sqrt()
                            + t_rto
                                * (3.0 * (3.0 * b * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p)));
                    let got = eq.rate(s, r, t_rto, p);
                    assert!(close(got, rfc, 1e-12), "b {b} p {p} r {r}: {got} vs {rfc}");
                }
            }
        }
    }

    /// Seed 003 V1 (`docs/variants.md`: "this reading gives about 1.56x" at 10% random loss): X(1,
    /// 0.8) over X(1, 0.5) at p = 0.1, t_RTO = 4R. First terms sqrt(2·0.5·0.1/1.5) = 0.2581989 and
    /// sqrt(2·0.2·0.1/1.8) = 0.1490712; timeout factors 3·sqrt(0.75·0.1/2) = 0.5809475 and
    /// 3·sqrt(0.36·0.1/2) = 0.4024922, times 4·0.1·1.32 = 0.528: denominators (R = 1) 0.2581989 +
    /// 0.3067403 = 0.5649392 and 0.1490712 + 0.2125159 = 0.3615871; ratio 1.56239.
    #[test]
    fn seed003_v1_veno_gain_at_ten_percent() {
        let veno = Equation {
            gamma: 0.8,
            ..Equation::RFC5348
        };
        let ratio =
            veno.rate(1000.0, 1.0, 4.0, 0.1) / Equation::RFC5348.rate(1000.0, 1.0, 4.0, 0.1);
        assert!((ratio - 1.56239).abs() < 1e-5, "{ratio}");
    }

    #[test]
    fn degenerate_inputs_never_nan() {
        for p in [f64::NAN, -1.0, 0.0, 2.0] {
            for r in [f64::NAN, -1.0, 0.0, 1e9] {
                let x = rfc5348_rate(1000.0, r, p);
                assert!(!x.is_nan() && x >= 0.0, "p={p} r={r} x={x}");
            }
        }
    }
}
