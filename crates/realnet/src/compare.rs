//! The simulation held against the real runs: per flow and metric, the simulated mean and 95%
//! confidence interval over start phases beside the real runs' over repetitions, and a
//! verdict: the intervals overlap (agree) or not (differ).

use lab::drops::DropShare;
use lab::metrics::FlowMetrics;
use lab::stats::MeanCi;
use serde::{Deserialize, Serialize};

use crate::run::RealRun;

/// What a row compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// The flow's share of the flows' summed throughput (IP bytes: the two sides' headers
    /// differ, so payload shares would be biased by the header bytes alone).
    Share,
    /// IP bits received per second.
    Throughput,
    /// Payload bits received per second.
    Goodput,
    /// (sent − received) / sent.
    Loss,
    /// Mean one-way delay.
    Delay,
    /// A TFRC flow's throughput over the mean of the TCP flows at its bottleneck.
    Friendliness,
    /// The flow's share of the congestion drops at the link direction where it lost most
    /// (`lab::drops`): beside its share of the throughput, where a phase effect shows.
    DropShare,
}

impl Metric {
    /// The name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Share => "share",
            Metric::Throughput => "throughput",
            Metric::Goodput => "goodput",
            Metric::Loss => "loss rate",
            Metric::Delay => "mean delay",
            Metric::Friendliness => "TFRC/TCP",
            Metric::DropShare => "drop share",
        }
    }

    /// A value in the table's unit.
    pub fn text(self, v: f64) -> String {
        match self {
            Metric::Throughput | Metric::Goodput => format!("{:.3} Mb/s", v / 1e6),
            Metric::Delay => format!("{:.1} ms", v * 1e3),
            Metric::Loss => format!("{v:.4}"),
            Metric::Share | Metric::Friendliness | Metric::DropShare => format!("{v:.3}"),
        }
    }
}

/// A row's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The two 95% confidence intervals overlap.
    Agree,
    /// They do not.
    Differ,
    /// The real flow runs what the simulation does not model (e.g. `bbr`).
    NoCounterpart,
    /// A side has fewer than two (undistorted) runs: no interval.
    TooFewRuns,
}

impl Verdict {
    /// The word in tables.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Differ => "differ",
            Verdict::NoCounterpart => "n/a (no simulated counterpart)",
            Verdict::TooFewRuns => "n/a (fewer than 2 runs)",
        }
    }
}

/// One row of the comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The flow.
    pub flow: String,
    /// What is compared.
    pub metric: Metric,
    /// Over the simulated start phases.
    pub sim: Option<MeanCi>,
    /// Over the undistorted real runs.
    pub real: Option<MeanCi>,
    /// Agree, differ, or why neither.
    pub verdict: Verdict,
}

/// One simulated run's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimRun {
    /// Its seed.
    pub seed: u64,
    /// Each flow's start, seconds.
    pub starts_s: Vec<f64>,
    /// Per flow.
    pub flows: Vec<FlowMetrics>,
    /// Fairness and friendliness.
    pub fairness: lab::metrics::Fairness,
    /// How the congestion drops fell on the flows, from the warm-up on.
    #[serde(default)]
    pub drops: Vec<DropShare>,
}

/// The flow's share of the drops at the link direction where it lost most, if it lost any.
pub fn drop_share(drops: &[DropShare], flow: &str) -> Option<f64> {
    drops
        .iter()
        .filter(|d| d.flow == flow && d.drops > 0)
        .max_by_key(|d| d.drops)
        .map(|d| d.drop_share)
}

/// The figures of one metric, one per run, for flow `i`.
fn values(
    flows: &[&[FlowMetrics]],
    friendliness: &[Vec<(String, Option<f64>)>],
    drops: &[&[DropShare]],
    i: usize,
    name: &str,
    m: Metric,
) -> Vec<f64> {
    match m {
        Metric::DropShare => drops.iter().filter_map(|d| drop_share(d, name)).collect(),
        Metric::Friendliness => friendliness
            .iter()
            .filter_map(|f| f.iter().find(|(n, _)| n == name).and_then(|x| x.1))
            .collect(),
        _ => flows
            .iter()
            .filter_map(|fs| {
                let f = fs.get(i)?;
                Some(match m {
                    Metric::Share => {
                        let total: f64 = fs.iter().map(|g| g.throughput_bps).sum();
                        if total > 0.0 {
                            f.throughput_bps / total
                        } else {
                            f64::NAN
                        }
                    }
                    Metric::Throughput => f.throughput_bps,
                    Metric::Goodput => f.goodput_bps,
                    Metric::Loss => f.loss_rate,
                    Metric::Delay => f.delay_mean_s,
                    Metric::Friendliness | Metric::DropShare => unreachable!(),
                })
            })
            .collect(),
    }
}

/// One metric of flow `i` (named `name`) in every undistorted real run: (repetition, value).
/// A run without the figure (e.g. no drop for a drop share) has no entry.
pub fn run_values(real: &[RealRun], i: usize, name: &str, m: Metric) -> Vec<(u32, f64)> {
    real.iter()
        .filter(|r| r.distorted.is_empty())
        .filter_map(|r| {
            let fr = friendliness(&r.fairness);
            values(
                &[r.flows.as_slice()],
                std::slice::from_ref(&fr),
                &[r.drops.as_slice()],
                i,
                name,
                m,
            )
            .first()
            .map(|&v| (r.rep, v))
        })
        .collect()
}

/// Each TFRC flow's friendliness ratio.
fn friendliness(f: &lab::metrics::Fairness) -> Vec<(String, Option<f64>)> {
    f.friendliness
        .iter()
        .map(|x| (x.flow.clone(), x.ratio))
        .collect()
}

/// Whether two intervals overlap (a single value is its own interval).
pub(crate) fn overlap(a: &MeanCi, b: &MeanCi) -> Option<bool> {
    let (alo, ahi) = (a.ci_lo()?, a.ci_hi()?);
    let (blo, bhi) = (b.ci_lo()?, b.ci_hi()?);
    Some(alo <= bhi && blo <= ahi)
}

/// The rows: for every flow, its share, throughput, goodput, loss rate and mean delay, and
/// for every TFRC flow with TCP at its bottleneck, its friendliness ratio. `counterpart[i]`
/// says whether flow `i`'s real runner is modelled by the simulation. Distorted real runs are
/// left out.
pub fn rows(names: &[String], counterpart: &[bool], sim: &[SimRun], real: &[RealRun]) -> Vec<Row> {
    let valid: Vec<&RealRun> = real.iter().filter(|r| r.distorted.is_empty()).collect();
    let sim_flows: Vec<&[FlowMetrics]> = sim.iter().map(|r| r.flows.as_slice()).collect();
    let real_flows: Vec<&[FlowMetrics]> = valid.iter().map(|r| r.flows.as_slice()).collect();
    let sim_fr: Vec<_> = sim.iter().map(|r| friendliness(&r.fairness)).collect();
    let real_fr: Vec<_> = valid.iter().map(|r| friendliness(&r.fairness)).collect();
    let sim_drops: Vec<&[DropShare]> = sim.iter().map(|r| r.drops.as_slice()).collect();
    let real_drops: Vec<&[DropShare]> = valid.iter().map(|r| r.drops.as_slice()).collect();
    // A ratio involves every TCP flow at the bottleneck: comparable only if all of them are.
    let tcp_ok = sim
        .first()
        .map(|r| {
            r.fairness
                .friendliness
                .iter()
                .map(|x| {
                    (
                        x.flow.clone(),
                        x.tcp_flows.iter().all(|t| {
                            names
                                .iter()
                                .position(|n| n == t)
                                .is_some_and(|j| counterpart[j])
                        }),
                    )
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let mut metrics = vec![
            Metric::Share,
            Metric::Throughput,
            Metric::Goodput,
            Metric::Loss,
            Metric::Delay,
            Metric::DropShare,
        ];
        let friendly = tcp_ok.iter().find(|(n, _)| n == name);
        if friendly.is_some()
            && sim_fr
                .iter()
                .flatten()
                .any(|(n, r)| n == name && r.is_some())
        {
            metrics.push(Metric::Friendliness);
        }
        for m in metrics {
            let s = MeanCi::of(&values(&sim_flows, &sim_fr, &sim_drops, i, name, m));
            let r = MeanCi::of(&values(&real_flows, &real_fr, &real_drops, i, name, m));
            let modelled =
                counterpart[i] && (m != Metric::Friendliness || friendly.is_some_and(|x| x.1));
            // Shares depend on every flow: one unmodelled flow makes them all incomparable.
            let all_modelled = counterpart.iter().all(|&c| c);
            let whole = matches!(m, Metric::Share | Metric::DropShare);
            let verdict = if !modelled || (whole && !all_modelled) {
                Verdict::NoCounterpart
            } else {
                match (&s, &r) {
                    (Some(a), Some(b)) => match overlap(a, b) {
                        Some(true) => Verdict::Agree,
                        Some(false) => Verdict::Differ,
                        None => Verdict::TooFewRuns,
                    },
                    _ => Verdict::TooFewRuns,
                }
            };
            out.push(Row {
                flow: name.clone(),
                metric: m,
                sim: s,
                real: r,
                verdict,
            });
        }
    }
    out
}

/// `mean [lo, hi] (n)`, or `—`.
pub fn ci_text(m: Metric, c: &Option<MeanCi>) -> String {
    match c {
        None => "—".into(),
        Some(c) => match (c.ci_lo(), c.ci_hi()) {
            (Some(lo), Some(hi)) => format!(
                "{} [{}, {}] ({})",
                m.text(c.mean),
                m.text(lo),
                m.text(hi),
                c.n
            ),
            _ => format!("{} ({})", m.text(c.mean), c.n),
        },
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    //! Runs and comparisons built by hand, for this module's tests and `baseline`'s.
    use super::*;

    fn fm(name: &str, thr: f64) -> FlowMetrics {
        FlowMetrics {
            name: name.into(),
            kind: "tcp".into(),
            throughput_bps: thr,
            goodput_bps: thr,
            pdr: 1.0,
            delay_mean_s: 0.01,
            ..FlowMetrics::default()
        }
    }

    fn fairness() -> lab::metrics::Fairness {
        lab::metrics::Fairness {
            jain: Default::default(),
            seed004_byte_difference: Default::default(),
            friendliness: vec![],
        }
    }

    /// A simulated run of flows `a` and `b` at these throughputs.
    pub fn sim(a: f64, b: f64) -> SimRun {
        SimRun {
            seed: 1,
            starts_s: vec![0.0, 0.0],
            flows: vec![fm("a", a), fm("b", b)],
            fairness: fairness(),
            drops: vec![],
        }
    }

    /// Real run `rep` of flows `a` and `b` at these throughputs.
    pub fn real(rep: u32, a: f64, b: f64, distorted: bool) -> RealRun {
        RealRun {
            rep,
            seed: 0,
            starts_s: vec![0.0, 0.0],
            flows: vec![fm("a", a), fm("b", b)],
            fairness: fairness(),
            emulator: crate::run::EmulatorFigures {
                lateness: Default::default(),
                wakeups: Default::default(),
                fifo_refused: None,
                lock_refused: None,
                dirs: vec![],
                buffer_overflow: 0,
                unmatched: 0,
            },
            senders: vec![],
            drops: vec![],
            distorted: if distorted {
                vec!["late".into()]
            } else {
                vec![]
            },
            load: [0.0; 2],
            host: None,
            dir: None,
        }
    }

    /// Scenario `name` with flows `a` and `b`, three simulated runs and these real ones.
    pub fn comparison(name: &str, real: Vec<RealRun>) -> crate::Comparison {
        let names = vec!["a".to_string(), "b".to_string()];
        let sim = vec![sim(6.0, 4.0), sim(6.2, 3.8), sim(5.8, 4.2)];
        let rows = rows(&names, &[true, true], &sim, &real);
        crate::Comparison {
            name: name.into(),
            file: format!("{name}.toml"),
            counterparts: names
                .iter()
                .map(|n| crate::Counterpart {
                    flow: n.clone(),
                    simulated: "tcp sack".into(),
                    real: "reno".into(),
                    modelled: true,
                })
                .collect(),
            sim,
            real,
            rows,
            start_jitter_s: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::{real, sim};
    use super::*;

    #[test]
    fn verdicts_from_overlapping_intervals() {
        let names = vec!["a".to_string(), "b".to_string()];
        let s = vec![sim(6.0, 4.0), sim(6.2, 3.8), sim(5.8, 4.2)];
        // Real: a ≈ 6 (agrees), b ≈ 2 (differs); the distorted run would pull a up if kept.
        let r = vec![
            real(0, 6.1, 2.0, false),
            real(0, 5.9, 2.1, false),
            real(0, 6.0, 1.9, false),
            real(0, 60.0, 2.0, true),
        ];
        let all = rows(&names, &[true, true], &s, &r);
        let get = |f: &str, m: Metric| all.iter().find(|x| x.flow == f && x.metric == m).unwrap();
        assert_eq!(get("a", Metric::Throughput).verdict, Verdict::Agree);
        assert_eq!(get("a", Metric::Throughput).real.unwrap().n, 3);
        assert_eq!(get("b", Metric::Throughput).verdict, Verdict::Differ);
        // Shares: a is 0.6 simulated, 0.75 real.
        assert_eq!(get("a", Metric::Share).verdict, Verdict::Differ);
        let one = rows(&names, &[true, false], &s, &r);
        let get = |f: &str, m: Metric| one.iter().find(|x| x.flow == f && x.metric == m).unwrap();
        assert_eq!(get("b", Metric::Throughput).verdict, Verdict::NoCounterpart);
        assert_eq!(get("a", Metric::Share).verdict, Verdict::NoCounterpart);
        assert_eq!(get("a", Metric::Throughput).verdict, Verdict::Agree);
        let few = rows(&names, &[true, true], &s, &r[..1]);
        assert_eq!(few[0].verdict, Verdict::TooFewRuns);
    }
}
