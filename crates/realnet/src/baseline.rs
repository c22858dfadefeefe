//! A batch of real runs held against an earlier batch of the same scenario, its baseline (for
//! example runs on a loaded host against runs on a quiet one): per flow and metric, whether
//! each run lies within the spread the baseline's runs predict for one more run, and whether
//! the two batches' means agree.
//!
//! The spread is the 95% prediction interval for one new run from the baseline's n runs,
//! mean ± t(0.975, n − 1) · sd · √(1 + 1/n) (the figures taken as normal): a run from the
//! baseline's own distribution falls outside it with probability 5%, so about one run in twenty
//! is outside by chance alone. The baseline's range (lowest to highest run) would be a poor
//! spread: a new run from the same distribution falls outside the range of n runs with
//! probability 2/(n + 1), a third of the time against five runs.

use lab::stats::{t_critical, MeanCi};
use serde::{Deserialize, Serialize};

use crate::compare::{overlap, run_values, Metric};
use crate::Comparison;

/// One run of the batch against the baseline's spread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCheck {
    /// The run's repetition, 0-based.
    pub rep: u32,
    /// Its figure.
    pub value: f64,
    /// Whether it lies within the baseline's prediction interval.
    pub inside: bool,
}

/// One flow and metric: the baseline's spread and the batch's runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpreadRow {
    /// The flow.
    pub flow: String,
    /// What is compared.
    pub metric: Metric,
    /// Over the baseline's undistorted runs.
    pub baseline: Option<MeanCi>,
    /// The baseline's 95% prediction interval for one run: [low, high]; `None` with fewer
    /// than two baseline runs.
    pub interval: Option<[f64; 2]>,
    /// Over the batch's undistorted runs.
    pub batch: Option<MeanCi>,
    /// Whether the two means' 95% confidence intervals overlap.
    pub means_agree: Option<bool>,
    /// The batch's runs, each inside or outside `interval` (empty without an interval).
    pub runs: Vec<RunCheck>,
}

impl SpreadRow {
    /// How many of the batch's runs lie outside the baseline's spread.
    pub fn outside(&self) -> usize {
        self.runs.iter().filter(|r| !r.inside).count()
    }
}

/// A batch against its baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Where the baseline came from (its `validate-real.json`).
    pub baseline_file: String,
    /// The baseline's undistorted real runs.
    pub baseline_runs: usize,
    /// The baseline runs' 1-minute load average: (lowest, highest).
    pub baseline_load: (f64, f64),
    /// Per flow and metric, in the batch's table order.
    pub rows: Vec<SpreadRow>,
}

/// The 95% prediction interval for one more run from `m`'s runs, or `None` with fewer than
/// two.
pub fn prediction_interval(m: &MeanCi) -> Option<[f64; 2]> {
    let sd = m.sd?;
    let n = m.n as f64;
    let h = t_critical(n - 1.0)? * sd * (1.0 + 1.0 / n).sqrt();
    Some([m.mean - h, m.mean + h])
}

/// Whether `baseline` can serve scenario `name` with `flows` (in order); the error, naming
/// `file` and `what` (where the flows come from), says what differs.
pub fn same_flows(
    baseline: &Comparison,
    name: &str,
    flows: &[&str],
    file: &str,
    what: &str,
) -> Result<(), String> {
    let theirs: Vec<&str> = baseline
        .counterparts
        .iter()
        .map(|f| f.flow.as_str())
        .collect();
    if baseline.name == name && theirs == flows {
        return Ok(());
    }
    Err(format!(
        "{file}: the baseline is scenario `{}` with flows {}; {what} is `{name}` with flows {}: \
         a baseline must be the same scenario with the same flows",
        baseline.name,
        theirs.join(", "),
        flows.join(", ")
    ))
}

/// Hold `batch`'s real runs against `baseline`'s, over the flows and metrics of `batch`'s
/// table. The two must be the same scenario with the same flows, in the same order.
pub fn check(baseline: &Comparison, batch: &Comparison, file: &str) -> Result<Spread, String> {
    let b: Vec<&str> = batch.counterparts.iter().map(|f| f.flow.as_str()).collect();
    same_flows(baseline, &batch.name, &b, file, "this batch")?;
    let mut rows = Vec::new();
    for r in &batch.rows {
        let Some(i) = b.iter().position(|n| *n == r.flow) else {
            continue;
        };
        let base: Vec<f64> = run_values(&baseline.real, i, &r.flow, r.metric)
            .into_iter()
            .map(|x| x.1)
            .collect();
        let now = run_values(&batch.real, i, &r.flow, r.metric);
        let bm = MeanCi::of(&base);
        let nm = MeanCi::of(&now.iter().map(|x| x.1).collect::<Vec<_>>());
        let interval = bm.as_ref().and_then(prediction_interval);
        let runs = match interval {
            Some([lo, hi]) => now
                .iter()
                .map(|&(rep, value)| RunCheck {
                    rep,
                    value,
                    inside: (lo..=hi).contains(&value),
                })
                .collect(),
            None => Vec::new(),
        };
        let means_agree = match (&bm, &nm) {
            (Some(x), Some(y)) => overlap(x, y),
            _ => None,
        };
        rows.push(SpreadRow {
            flow: r.flow.clone(),
            metric: r.metric,
            baseline: bm,
            interval,
            batch: nm,
            means_agree,
            runs,
        });
    }
    Ok(Spread {
        baseline_file: file.to_string(),
        baseline_runs: baseline.valid_reps(),
        baseline_load: baseline.load_range(),
        rows,
    })
}

/// The comparison as aligned text: a table, then every run outside the spread.
pub fn text(s: &Spread) -> String {
    let (lo, hi) = s.baseline_load;
    let mut out = format!(
        "against the baseline {} ({} undistorted real runs, load average {lo:.1}–{hi:.1}); \
         spread: the baseline's 95% prediction interval for one run (about 1 run in 20 falls \
         outside it by chance)\n",
        s.baseline_file, s.baseline_runs
    );
    let mut table: Vec<[String; 6]> = vec![[
        "flow".into(),
        "metric".into(),
        "baseline mean [spread] (n)".into(),
        "this batch mean [95% CI] (n)".into(),
        "means".into(),
        "runs outside".into(),
    ]];
    for r in &s.rows {
        let m = r.metric;
        let base = match (&r.baseline, r.interval) {
            (Some(b), Some([l, h])) => {
                format!(
                    "{} [{}, {}] ({})",
                    m.text(b.mean),
                    m.text(l),
                    m.text(h),
                    b.n
                )
            }
            (b, _) => crate::compare::ci_text(m, b),
        };
        table.push([
            r.flow.clone(),
            m.label().into(),
            base,
            crate::compare::ci_text(m, &r.batch),
            match r.means_agree {
                Some(true) => "agree".into(),
                Some(false) => "differ".into(),
                None => "n/a".into(),
            },
            if r.interval.is_some() {
                format!("{} of {}", r.outside(), r.runs.len())
            } else {
                "n/a (fewer than 2 baseline runs)".into()
            },
        ]);
    }
    out += &report::text::aligned(&table, &[0, 1]);
    for r in &s.rows {
        let outside: Vec<String> = r
            .runs
            .iter()
            .filter(|x| !x.inside)
            .map(|x| format!("run {} {}", x.rep + 1, r.metric.text(x.value)))
            .collect();
        if !outside.is_empty() {
            out += &format!(
                "  outside the spread, {} {}: {}\n",
                r.flow,
                r.metric.label(),
                outside.join(", ")
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests_support::{comparison, real};

    #[test]
    fn prediction_interval_by_hand() {
        // 0.4, 0.5, 0.6: mean 0.5, sd 0.1; t(0.975, 2) = 4.302653; √(1 + 1/3) = 1.154701.
        let m = MeanCi::of(&[0.4, 0.5, 0.6]).unwrap();
        let [lo, hi] = prediction_interval(&m).unwrap();
        let h = 4.302653 * 0.1 * 1.154701;
        assert!((lo - (0.5 - h)).abs() < 1e-6 && (hi - (0.5 + h)).abs() < 1e-6);
        assert_eq!(prediction_interval(&MeanCi::of(&[0.5]).unwrap()), None);
    }

    #[test]
    fn runs_outside_the_spread_are_named() {
        // Baseline shares of flow a: 0.50, 0.52, 0.48, 0.51, 0.49 (sd 0.0158, spread
        // 0.50 ± 0.048). The batch: 0.50 inside, 0.40 below, 0.60 above, and a distorted
        // 0.10 left out.
        let base = comparison(
            "s",
            vec![
                real(0, 5.0, 5.0, false),
                real(1, 5.2, 4.8, false),
                real(2, 4.8, 5.2, false),
                real(3, 5.1, 4.9, false),
                real(4, 4.9, 5.1, false),
            ],
        );
        let batch = comparison(
            "s",
            vec![
                real(0, 5.0, 5.0, false),
                real(1, 4.0, 6.0, false),
                real(2, 6.0, 4.0, false),
                real(3, 1.0, 9.0, true),
            ],
        );
        let s = check(&base, &batch, "q.json").unwrap();
        assert_eq!(s.baseline_runs, 5);
        let share = s
            .rows
            .iter()
            .find(|r| r.flow == "a" && r.metric == Metric::Share)
            .unwrap();
        assert_eq!(share.runs.len(), 3);
        assert_eq!(share.outside(), 2);
        let [lo, hi] = share.interval.unwrap();
        assert!(
            lo > 0.40 && lo < 0.46 && hi > 0.54 && hi < 0.60,
            "{lo} {hi}"
        );
        assert_eq!(
            share.runs.iter().map(|r| r.inside).collect::<Vec<_>>(),
            [true, false, false]
        );
        // Means: 0.50 [0.48, 0.52] against 0.50 with a wide interval: they agree.
        assert_eq!(share.means_agree, Some(true));
        let t = text(&s);
        assert!(
            t.contains("run 2 0.400") && t.contains("run 3 0.600"),
            "{t}"
        );
        assert!(t.contains("2 of 3"), "{t}");
    }

    #[test]
    fn another_scenario_is_refused() {
        let a = comparison("s", vec![real(0, 5.0, 5.0, false)]);
        let b = comparison("t", vec![real(0, 5.0, 5.0, false)]);
        let e = check(&a, &b, "q.json").unwrap_err();
        assert!(
            e.contains("q.json") && e.contains("`s`") && e.contains("`t`"),
            "{e}"
        );
        // Same scenario, other flows (a scenario file changed since the baseline ran).
        let e = same_flows(&a, "s", &["a", "c"], "q.json", "s.toml").unwrap_err();
        assert!(e.contains("flows a, b") && e.contains("flows a, c"), "{e}");
        assert!(same_flows(&a, "s", &["a", "b"], "q.json", "s.toml").is_ok());
    }
}
