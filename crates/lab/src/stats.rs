//! Statistics over independent runs (one per seed): mean, sample standard deviation and the
//! 95% confidence interval of the mean from Student's t distribution.
//!
//! Runs with different seeds are independent replications of one experiment, so the mean of a
//! metric over n runs has a t-distributed error with n − 1 degrees of freedom (the metric need
//! not be normal for the interval to be a good approximation at the sample sizes sweeps use, and
//! the papers report their results the same way). `sweep` uses this module; `reproduce` will.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The confidence level of every interval tfrclab reports.
pub const CONFIDENCE: f64 = 0.95;

/// The `p` quantile of Student's t distribution with `df` degrees of freedom, or `None` when
/// `df` is not positive and finite or `p` is outside (0, 1).
pub fn t_quantile(p: f64, df: f64) -> Option<f64> {
    if !(p > 0.0 && p < 1.0 && df > 0.0 && df.is_finite()) {
        return None;
    }
    let q = if df > LARGE_DF {
        // statrs inverts the incomplete beta function, which loses accuracy as df grows
        // (1e-4 off at df = 1e6, useless at 1e7); there the Cornish–Fisher expansion of t
        // around the normal quantile is accurate to better than 1e-9.
        let z = Normal::new(0.0, 1.0).ok()?.inverse_cdf(p);
        let (z2, n) = (z * z, df);
        z + z * (z2 + 1.0) / (4.0 * n)
            + z * ((5.0 * z2 + 16.0) * z2 + 3.0) / (96.0 * n * n)
            + z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / (384.0 * n * n * n)
    } else {
        StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(p)
    };
    q.is_finite().then_some(q)
}

/// Degrees of freedom above which [`t_quantile`] uses the normal expansion.
const LARGE_DF: f64 = 1000.0;

/// The two-sided critical value for [`CONFIDENCE`]: t_{0.975, df}.
pub fn t_critical(df: f64) -> Option<f64> {
    t_quantile(0.5 + CONFIDENCE / 2.0, df)
}

/// Mean, spread and confidence interval of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeanCi {
    /// Number of samples.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); `None` for a single sample.
    pub sd: Option<f64>,
    /// Half-width of the 95% confidence interval of the mean, t_{0.975, n−1} · sd / √n;
    /// `None` for a single sample, where no interval can be estimated.
    pub ci_half_width: Option<f64>,
}

impl MeanCi {
    /// Statistics of the finite values among `samples`; `None` when there are none.
    ///
    /// Non-finite values are left out (and so not counted in `n`) because a NaN would make every
    /// statistic NaN; tfrclab's metrics are always finite, so this only guards odd input.
    pub fn of(samples: &[f64]) -> Option<MeanCi> {
        let xs: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        let n = xs.len();
        if n == 0 {
            return None;
        }
        let nf = n as f64;
        // Two passes: the naive Σx² − n·mean² cancels catastrophically for large, close values
        // (throughputs in bit/s). The second pass also corrects the mean's rounding error, so
        // n identical samples give exactly that value.
        let rough = xs.iter().sum::<f64>() / nf;
        let mean = rough + xs.iter().map(|x| x - rough).sum::<f64>() / nf;
        if n == 1 {
            return Some(MeanCi {
                n,
                mean,
                sd: None,
                ci_half_width: None,
            });
        }
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0);
        let sd = var.sqrt();
        let half = t_critical(nf - 1.0).map(|t| t * sd / nf.sqrt());
        Some(MeanCi {
            n,
            mean,
            sd: Some(sd),
            ci_half_width: half,
        })
    }

    /// Lower end of the confidence interval.
    pub fn ci_lo(&self) -> Option<f64> {
        self.ci_half_width.map(|h| self.mean - h)
    }

    /// Upper end of the confidence interval.
    pub fn ci_hi(&self) -> Option<f64> {
        self.ci_half_width.map(|h| self.mean + h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_tables() {
        // Two-sided 95% critical values from standard t tables (4 significant digits there;
        // the exact values to 6 digits from R's qt(0.975, df)).
        for (df, t) in [
            (1.0, 12.706205),
            (2.0, 4.302653),
            (4.0, 2.776445),
            (9.0, 2.262157),
            (19.0, 2.093024),
            (29.0, 2.045230),
            (100.0, 1.983972),
        ] {
            let got = t_critical(df).unwrap();
            assert!(close(got, t, 1e-5), "df {df}: {got} vs {t}");
        }
        // Large df: the normal expansion, continuous with the exact inversion at the switch.
        assert!(close(t_quantile(0.975, 1e6).unwrap(), 1.959966, 1e-6));
        assert!(close(t_quantile(0.975, 1e12).unwrap(), 1.959964, 1e-6));
        assert!(close(t_quantile(0.975, 2000.0).unwrap(), 1.961151, 1e-6));
        let below = t_quantile(0.975, LARGE_DF).unwrap();
        let above = t_quantile(0.975, LARGE_DF * (1.0 + 1e-12)).unwrap();
        assert!(close(below, above, 1e-8), "{below} vs {above}");
        assert!(close(below, 1.962339, 1e-6));
        assert!(close(t_quantile(0.5, 7.0).unwrap(), 0.0, 1e-12));
        assert!(close(t_quantile(0.025, 9.0).unwrap(), -2.262157, 1e-5));
        assert_eq!(t_quantile(0.975, 0.0), None);
        assert_eq!(t_quantile(1.0, 3.0), None);
        assert_eq!(t_quantile(f64::NAN, 3.0), None);
    }

    #[test]
    fn mean_sd_and_ci_of_one_to_ten() {
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let m = MeanCi::of(&xs).unwrap();
        assert_eq!(m.n, 10);
        assert_eq!(m.mean, 5.5);
        // Σ(x − 5.5)² = 82.5; sd = √(82.5/9).
        let sd = (82.5f64 / 9.0).sqrt();
        assert!(close(m.sd.unwrap(), sd, 1e-12));
        let h = 2.262157 * sd / 10f64.sqrt();
        assert!(close(m.ci_half_width.unwrap(), h, 1e-5), "{m:?}");
        assert!(close(m.ci_lo().unwrap(), 5.5 - h, 1e-5));
        assert!(close(m.ci_hi().unwrap(), 5.5 + h, 1e-5));
    }

    #[test]
    fn single_sample_has_no_interval() {
        let m = MeanCi::of(&[3.25]).unwrap();
        assert_eq!((m.n, m.mean, m.sd, m.ci_half_width), (1, 3.25, None, None));
        assert_eq!(m.ci_lo(), None);
        assert_eq!(MeanCi::of(&[]), None);
        assert_eq!(MeanCi::of(&[f64::NAN]), None);
    }

    #[test]
    fn identical_samples_are_exact_with_zero_width() {
        let m = MeanCi::of(&[0.1; 7]).unwrap();
        assert_eq!(m.mean, 0.1);
        assert_eq!(m.sd, Some(0.0));
        assert_eq!(m.ci_half_width, Some(0.0));
    }

    #[test]
    fn large_close_values_keep_their_spread() {
        // Throughputs near 1e9 bit/s differing by 1 bit/s: a one-pass formula loses this.
        let m = MeanCi::of(&[1e9, 1e9 + 1.0, 1e9 + 2.0]).unwrap();
        assert_eq!(m.mean, 1e9 + 1.0);
        assert!(close(m.sd.unwrap(), 1.0, 1e-9), "{m:?}");
    }

    #[test]
    fn non_finite_samples_are_left_out() {
        let m = MeanCi::of(&[1.0, f64::NAN, 3.0, f64::INFINITY]).unwrap();
        assert_eq!(m.n, 2);
        assert_eq!(m.mean, 2.0);
    }
}
