//! The model's noise: zero-mean Laplacian factors.
//!
//! RFC 8593 §5 perturbs each frame's size (and interval) by a relative random factor. We use a
//! Laplace (double-exponential) distribution of mean 0 and scale `b`, as the reference
//! implementation (cisco/syncodecs) does from its measurements of a live H.264 encoder: its
//! standard deviation is `b·√2`. Sampled by inversion: for `u` uniform on (−½, ½),
//! `x = −b·sign(u)·ln(1 − 2|u|)`.

use rand::Rng;

/// A sample of Laplace(0, `b`). `b = 0` gives 0 without drawing.
pub fn laplace<R: Rng + ?Sized>(rng: &mut R, b: f64) -> f64 {
    if b <= 0.0 {
        return 0.0;
    }
    // Keep |u| < ½ so the logarithm stays finite.
    let u: f64 = rng.gen_range(-0.5..0.5);
    let u = u.clamp(-0.5 + 1e-12, 0.5 - 1e-12);
    -b * u.signum() * (1.0 - 2.0 * u.abs()).ln()
}

/// `value · (1 + Laplace(0, b))`, not below `floor`.
pub fn perturb<R: Rng + ?Sized>(rng: &mut R, value: f64, b: f64, floor: f64) -> f64 {
    (value * (1.0 + laplace(rng, b))).max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn laplace_has_mean_zero_and_its_variance() {
        // Budget: < 10 ms. 200,000 samples: the mean's standard error is b·√2/√n ≈ 0.0005 for
        // b = 0.15, so ±0.003 is 6 standard errors; the variance 2b² = 0.045 within 3%.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| laplace(&mut rng, 0.15)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.003, "mean {mean}");
        assert!((var / 0.045 - 1.0).abs() < 0.03, "variance {var}");
        // The median of |x| is b·ln 2.
        let mut abs: Vec<f64> = xs.iter().map(|x| x.abs()).collect();
        abs.sort_by(f64::total_cmp);
        let med = abs[n / 2];
        assert!(
            (med / (0.15 * 2f64.ln()) - 1.0).abs() < 0.02,
            "median |x| {med}"
        );
    }

    #[test]
    fn zero_scale_draws_nothing() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        assert_eq!(laplace(&mut rng, 0.0), 0.0);
        assert_eq!(perturb(&mut rng, 10.0, 0.0, 1.0), 10.0);
        assert_eq!(perturb(&mut rng, 0.5, 0.0, 1.0), 1.0);
    }
}
