//! Seed 000: N. R. Reddy, P. C. Reddy, M. Padmavathamma, "Efficient Traffic Engineering
//! Strategies for Improving the Performance of TCP Friendly Rate Control Protocol"
//! (Information, 2017).
//!
//! The paper runs "classical TFRC" (NS-2.35's Agent/TFRC) and an "enhanced TFRC" over the
//! 10-node multi-bottleneck topology (§4: 1000-byte packets, 175 s) and plots throughput, packet
//! loss ratio, end-to-end delay, packet delivery ratio and jitter against "data rate"
//! (Figures 3–7, missing from the text); §5 states one relative change per figure. The
//! enhancement combines E1 (adaptive RTT/RTO, §3.1), an enhanced average loss interval
//! (E3 or E4, §3.2) and the adaptive TTL with protection of raised-TTL packets (E5, E6, §3.3).
//!
//! What runs here (`scenarios/seeds/seed-000/tfrc.toml`; readings in `docs/reproduce.md`): two
//! TFRC flows fed by CBR at the data rate (0.5 … 10 Mb/s each), classical against enhanced
//! (E1 + E3 + E5 + E6) and each enhancement alone, with both TFRC profiles, N seeds each. The
//! claims compare the enhanced and classical runs of one seed (paired), each metric averaged
//! over the data rates. The paper's numbers and quotes are in
//! `scenarios/seeds/seed-000/paper.toml` (compiled in).
//!
//! This module also holds what seed 001 (same authors, topology and metrics) shares: the
//! pooled `Metric`s, the headline-claim data file (`Headlines`) and the data-rate helpers.

use serde::Deserialize;

use super::printed::{Printed, Printing};
use super::{
    mean_per_seed, relative_change, Budget, Claim, Config, DataTable, Direction, Experiment, Paper,
    PaperReport, ReportSection, Results, RunResult, Value,
};
use lab::runner::RunOutput;
use lab::stats::MeanCi;
use lab::sweep::MetricValue;
use report::{ErrorBarChart, ErrorPoint};
use scenario::Scenario;

/// The seed 000 module.
pub struct Seed000;

/// The transcribed claims.
const DATA: &str = include_str!("../../../scenarios/seeds/seed-000/paper.toml");
/// Where [`DATA`] comes from, for messages.
const DATA_FILE: &str = "scenarios/seeds/seed-000/paper.toml";
/// The scenario file, relative to the scenarios folder.
const SCENARIO: &str = "seed-000/tfrc.toml";
/// The experiment's id.
const EXPERIMENT: &str = "tfrc";

/// The data-rate axis: each TFRC flow's CBR rate, Mb/s, as written in configuration ids.
/// 0.5 Mb/s per flow fits the 2 Mb/s bottleneck; from 1 Mb/s on the two flows overload it.
/// The papers' figures are missing, so their axis is unknown; seed 004 (same authors and
/// topology) ran 1 … 10 Mb/s.
pub(super) const RATES: [&str; 5] = ["0.5", "1", "2", "5", "10"];
/// The rate whose runs show the mechanisms (well into overload).
pub(super) const MECHANISM_RATE: &str = "2";
/// TFRC profiles: NS-2's (the papers' "classical TFRC") and RFC 5348's (what a user deploys).
pub(super) const PROFILES: [&str; 2] = ["ns2", "rfc5348"];
/// The TFRC flows of the scenario files.
pub(super) const FLOWS: [&str; 2] = ["A", "B"];
/// The 2 Mb/s bottleneck link of the scenario files.
pub(super) const BOTTLENECK: &str = "n5-n6";
/// Full and `--quick` simulated seconds (§4: 175 s).
const SECONDS: (f64, f64) = (175.0, 20.0);

/// One combination of seed 000 variants, applied to both flows.
struct VariantSet {
    /// Configuration id part.
    id: &'static str,
    /// For tables and legends.
    label: &'static str,
    /// `variants = [...]` of both flows.
    variants: &'static [&'static str],
}

/// NS-2's / RFC 5348's TFRC without variants.
const CLASSICAL: VariantSet = VariantSet {
    id: "classical",
    label: "classical",
    variants: &[],
};

/// The paper's enhanced TFRC. E3 (§3.2.1, the confidence interval, replace form of eq. (7)) is
/// the loss-interval method the paper develops first and in full; eq. (8)'s include form and
/// E4 (§3.2.2) are introduced as alternatives. E2 is left out: it acts only on losses a
/// classifier calls link errors, the paper names no classifier for it, and its wired
/// experiment has no link errors (the catalogue refuses `rto-link-error` without one).
const ENHANCED: VariantSet = VariantSet {
    id: "enhanced",
    label: "enhanced (E1 + E3 + E5 + E6)",
    variants: &[
        "adaptive-rtt",
        "ali-ci-replace",
        "adaptive-ttl",
        "protect-raised-ttl",
    ],
};

/// Every set run: classical, the combination, and each enhancement alone (E4 too: the paper's
/// alternative to E3).
const SETS: [VariantSet; 7] = [
    CLASSICAL,
    ENHANCED,
    VariantSet {
        id: "e1",
        label: "E1 adaptive-rtt",
        variants: &["adaptive-rtt"],
    },
    VariantSet {
        id: "e3",
        label: "E3 ali-ci-replace",
        variants: &["ali-ci-replace"],
    },
    VariantSet {
        id: "e4",
        label: "E4 ali-mean-replace",
        variants: &["ali-mean-replace"],
    },
    VariantSet {
        id: "e5",
        label: "E5 adaptive-ttl",
        variants: &["adaptive-ttl"],
    },
    VariantSet {
        id: "e6",
        label: "E6 protect-raised-ttl",
        variants: &["protect-raised-ttl"],
    },
];

/// A paper metric, pooled over the two flows of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Metric {
    /// Summed throughput.
    Throughput,
    /// Packet loss ratio.
    Loss,
    /// Mean end-to-end delay.
    Delay,
    /// Packet delivery ratio.
    Pdr,
    /// Seed 000's jitter.
    Jitter,
}

impl Metric {
    /// Seed 000's five, in the paper's figure order.
    pub(super) const ALL: [Metric; 5] = [
        Metric::Throughput,
        Metric::Loss,
        Metric::Delay,
        Metric::Pdr,
        Metric::Jitter,
    ];

    /// The data file's name for it.
    pub(super) fn id(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput",
            Metric::Loss => "loss",
            Metric::Delay => "delay",
            Metric::Pdr => "pdr",
            Metric::Jitter => "jitter",
        }
    }

    /// The paper's name.
    pub(super) fn name(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput",
            Metric::Loss => "packet loss ratio",
            Metric::Delay => "end-to-end delay",
            Metric::Pdr => "packet delivery ratio",
            Metric::Jitter => "jitter",
        }
    }

    /// Display unit (after [`Metric::scale`]).
    pub(super) fn unit(self) -> &'static str {
        match self {
            Metric::Throughput => "Mb/s",
            Metric::Loss | Metric::Pdr => "",
            Metric::Delay | Metric::Jitter => "ms",
        }
    }

    /// Factor from the measured unit (bit/s, seconds, fractions) to the display unit.
    pub(super) fn scale(self) -> f64 {
        match self {
            Metric::Throughput => 1e-6,
            Metric::Loss | Metric::Pdr => 1.0,
            Metric::Delay | Metric::Jitter => 1e3,
        }
    }

    /// A heading with the unit: `throughput (Mb/s)`.
    pub(super) fn heading(self) -> String {
        match self.unit() {
            "" => self.name().to_string(),
            u => format!("{} ({u})", self.name()),
        }
    }

    /// The operational definition, as the reports state it.
    pub(super) fn definition(self) -> &'static str {
        match self {
            Metric::Throughput => {
                "the TFRC flows' summed throughput (bits received per second, headers \
                 included as NS-2 counts them)"
            }
            Metric::Loss => {
                "the packet loss ratio pooled over the TFRC flows: (packets sent − packets \
                 received) ÷ packets sent"
            }
            Metric::Delay => {
                "the mean one-way delay of every packet the TFRC flows delivered (send to \
                 receive, queueing included)"
            }
            Metric::Pdr => {
                "the packet delivery ratio pooled over the TFRC flows: packets delivered ÷ \
                 packets their CBR applications generated"
            }
            Metric::Jitter => {
                "seed 000's jitter: the mean |dᵢ − dᵢ₋₁| over consecutive packets of each \
                 TFRC flow, pooled over the flows"
            }
        }
    }

    /// A short operational definition for the claims table.
    pub(super) fn short(self) -> &'static str {
        match self {
            Metric::Throughput => "summed throughput of the TFRC flows (wire bits received/s)",
            Metric::Loss => "pooled loss ratio (Σ sent − Σ received) ÷ Σ sent",
            Metric::Delay => "mean one-way delay over every delivered packet",
            Metric::Pdr => "pooled delivery ratio Σ delivered ÷ Σ generated",
            Metric::Jitter => "mean |dᵢ − dᵢ₋₁| over consecutive packets, pooled",
        }
    }

    /// The metric over `flows` of one run, in measured units.
    pub(super) fn of(self, r: &RunResult, flows: &[&str]) -> Result<f64, String> {
        let fs = flows
            .iter()
            .map(|f| r.flow(f))
            .collect::<Result<Vec<_>, _>>()?;
        let sum = |g: &dyn Fn(&lab::metrics::FlowMetrics) -> f64| fs.iter().map(|f| g(f)).sum();
        // A weighted mean with weights w (0 when nothing is weighed, as the per-flow metrics).
        let weighted = |v: &dyn Fn(&lab::metrics::FlowMetrics) -> f64,
                        w: &dyn Fn(&lab::metrics::FlowMetrics) -> f64| {
            let total: f64 = sum(w);
            if total > 0.0 {
                sum(&|f| v(f) * w(f)) / total
            } else {
                0.0
            }
        };
        Ok(match self {
            Metric::Throughput => sum(&|f| f.throughput_bps),
            Metric::Loss => {
                let sent: f64 = sum(&|f| f.sent_packets as f64);
                let received: f64 = sum(&|f| f.received_packets as f64);
                if sent > 0.0 {
                    ((sent - received) / sent).max(0.0)
                } else {
                    0.0
                }
            }
            Metric::Delay => weighted(&|f| f.delay_mean_s, &|f| f.received_packets as f64),
            Metric::Pdr => weighted(&|f| f.pdr, &|f| f.generated_packets as f64),
            // Each flow's jitter is a mean over its received − 1 consecutive pairs.
            Metric::Jitter => weighted(&|f| f.jitter_mean_s, &|f| {
                f.received_packets.saturating_sub(1) as f64
            }),
        })
    }
}

/// One headline claim as the data file holds it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeadline {
    figure: String,
    metric: String,
    change_percent: String,
    printing: Printing,
    quote: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeadlines {
    source: String,
    section: String,
    claims: Vec<RawHeadline>,
}

/// One relative change a paper states for one of its figures.
#[derive(Clone, Debug)]
pub(super) struct Headline {
    /// The figure number.
    pub figure: String,
    /// What tfrclab measures for it.
    pub metric: Metric,
    /// The printed change in percent (negative: "less").
    pub change: Printed,
    /// The paper's sentence.
    pub quote: String,
}

impl Headline {
    /// The claimed side of zero.
    pub fn direction(&self) -> Direction {
        if self.change.value >= 0.0 {
            Direction::Above
        } else {
            Direction::Below
        }
    }

    /// The claimed relative change as a fraction.
    pub fn magnitude(&self) -> f64 {
        self.change.value / 100.0
    }

    /// `+22%` / `−20%`.
    pub fn printed(&self) -> String {
        let t = self.change.text.trim_start_matches(['+', '-']);
        if self.change.value < 0.0 {
            format!("−{t}%")
        } else {
            format!("+{t}%")
        }
    }
}

/// A paper's headline claims: the relative changes its text states for its figures (seeds 000
/// and 001 print no tables). The data file format (TOML):
///
/// ```toml
/// source = "Authors, \"Title\", venue"
/// section = "5"                 # where the sentences are
/// [[claims]]
/// figure = "3"
/// metric = "throughput"         # throughput | loss | delay | pdr | jitter
/// change_percent = "22"         # as printed; negative for "less"
/// printing = "rounded"          # exact | rounded | truncated
/// quote = "… enhanced TFRC results in 22% more throughput than classical TFRC."
/// ```
#[derive(Clone, Debug)]
pub(super) struct Headlines {
    /// The paper.
    pub source: String,
    /// The section holding the sentences.
    pub section: String,
    /// In the file's order.
    pub claims: Vec<Headline>,
}

impl Headlines {
    /// Parse a data file's text; `file` names it in errors; only `allowed` metrics may appear.
    pub fn parse(file: &str, text: &str, allowed: &[Metric]) -> Result<Headlines, String> {
        let raw: RawHeadlines = toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
        let mut claims = Vec::with_capacity(raw.claims.len());
        for (i, c) in raw.claims.into_iter().enumerate() {
            let err = |m: String| format!("{file}: claim {}: {m}", i + 1);
            let metric = allowed
                .iter()
                .copied()
                .find(|m| m.id() == c.metric)
                .ok_or_else(|| {
                    let names: Vec<&str> = allowed.iter().map(|m| m.id()).collect();
                    err(format!(
                        "unknown metric \"{}\": expected one of {}",
                        c.metric,
                        names.join(", ")
                    ))
                })?;
            if claims.iter().any(|h: &Headline| h.metric == metric) {
                return Err(err(format!("metric \"{}\" appears twice", c.metric)));
            }
            let change = Printed::parse(&c.change_percent, c.printing).map_err(err)?;
            if change.value == 0.0 {
                return Err(err("a claimed change of 0% has no direction".into()));
            }
            claims.push(Headline {
                figure: c.figure,
                metric,
                change,
                quote: c.quote,
            });
        }
        if claims.is_empty() {
            return Err(format!("{file}: no claims"));
        }
        Ok(Headlines {
            source: raw.source,
            section: raw.section,
            claims,
        })
    }

    /// One claim per (profile, headline): the per-seed relative change of configuration
    /// `pair.0` over `pair.1` against the printed change; `compared` says what is compared,
    /// `rates` the data rates averaged over, and `avg` gives per (profile, configuration,
    /// metric) the per-seed values averaged over the rates. Also, for the summary, the ns2
    /// profile's changes beside the paper's ("metric change (paper printed)").
    pub fn claims_and_summary(
        &self,
        avg: &RateAverage<'_>,
        pair: (&str, &str),
        compared: &str,
        rates: &str,
    ) -> Result<(Vec<Claim>, Vec<String>), String> {
        let mut claims = Vec::new();
        let mut summary_parts = Vec::new();
        for p in PROFILES {
            for h in &self.claims {
                let variant = avg(p, pair.0, h.metric)?;
                let baseline = avg(p, pair.1, h.metric)?;
                if p == "ns2" {
                    summary_parts.push(format!(
                        "{} {} (paper {})",
                        h.metric.id(),
                        change_text(&variant, &baseline)?,
                        h.printed()
                    ));
                }
                claims.push(
                    Claim::new(
                        format!("{}-{p}", h.metric.id()),
                        format!("\"{}\" (§{}, Fig. {})", h.quote, self.section, h.figure),
                        format!(
                            "{p} profile, {compared}: per-seed relative change of the {}, mean \
                             over {rates}",
                            h.metric.short()
                        ),
                        h.direction(),
                        0.0,
                    )
                    .magnitude(h.magnitude())
                    .unit("fraction")
                    .samples(relative_change(&variant, &baseline)?),
                );
            }
        }
        Ok((claims, summary_parts))
    }

    /// The changes the paper states beside tfrclab's (configuration `pair.0` over `pair.1`,
    /// per profile, mean and CI over `n` seeds), as the report's "headline" table; `compared`
    /// and `rates` go into its caption, `avg` is as for
    /// [`claims_and_summary`](Self::claims_and_summary).
    pub fn table(
        &self,
        avg: &RateAverage<'_>,
        pair: (&str, &str),
        compared: &str,
        rates: &str,
        n: u32,
    ) -> Result<DataTable, String> {
        let mut headline = DataTable::new(
            "headline",
            format!(
                "The changes §{} states, beside tfrclab's: {compared}, each metric averaged over \
                 {rates}, mean [95% CI] over {n} seeds of the per-seed relative change (%)",
                self.section
            ),
            [
                "figure",
                "metric",
                "paper",
                "ns2 profile (%)",
                "rfc5348 profile (%)",
            ],
        )
        .in_markdown();
        for h in &self.claims {
            let mut row = vec![
                Value::Text(format!("Fig. {}", h.figure)),
                Value::Text(h.metric.name().into()),
                Value::Text(h.printed()),
            ];
            for p in PROFILES {
                row.push(change_cell(
                    &avg(p, pair.0, h.metric)?,
                    &avg(p, pair.1, h.metric)?,
                )?);
            }
            headline.row(row);
        }
        Ok(headline)
    }
}

/// Per (profile, configuration, metric), the per-seed values averaged over the data rates: how
/// a report reads its runs for [`Headlines`].
pub(super) type RateAverage<'a> = dyn Fn(&str, &str, Metric) -> Result<Vec<f64>, String> + 'a;

/// Per seed, `metric` of `flows` averaged over the data rates; `config` names the
/// configuration of a rate.
pub(super) fn over_rates(
    results: &Results,
    experiment: &str,
    config: &dyn Fn(&str) -> String,
    metric: Metric,
    flows: &[&str],
) -> Result<Vec<f64>, String> {
    let columns = RATES
        .iter()
        .map(|r| results.per_seed(experiment, &config(r), |run| metric.of(run, flows)))
        .collect::<Result<Vec<_>, _>>()?;
    mean_per_seed(&columns)
}

/// The mean and 95% CI of `xs` × `scale`, or an empty cell without samples.
pub(super) fn scaled_estimate(xs: &[f64], scale: f64) -> Value {
    let scaled: Vec<f64> = xs.iter().map(|x| x * scale).collect();
    MeanCi::of(&scaled).map_or(Value::Empty, |m| Value::estimate(&m))
}

/// Per-seed relative change in percent, as a table cell.
pub(super) fn change_cell(variant: &[f64], baseline: &[f64]) -> Result<Value, String> {
    Ok(scaled_estimate(&relative_change(variant, baseline)?, 100.0))
}

/// Mean and CI of the per-seed relative change, in percent, for summaries.
pub(super) fn change_text(variant: &[f64], baseline: &[f64]) -> Result<String, String> {
    let xs: Vec<f64> = relative_change(variant, baseline)?
        .iter()
        .map(|x| x * 100.0)
        .collect();
    Ok(match MeanCi::of(&xs) {
        Some(m) => match (m.ci_lo(), m.ci_hi()) {
            (Some(lo), Some(hi)) => format!("{:+.1}% [{lo:+.1}, {hi:+.1}]", m.mean),
            _ => format!("{:+.1}%", m.mean),
        },
        None => "n/a".into(),
    })
}

/// A chart point per data rate: mean and CI of `metric` (display units).
pub(super) fn rate_points(
    results: &Results,
    experiment: &str,
    config: &dyn Fn(&str) -> String,
    metric: Metric,
    flows: &[&str],
) -> Result<Vec<ErrorPoint>, String> {
    RATES
        .iter()
        .map(|r| {
            let xs: Vec<f64> = results
                .per_seed(experiment, &config(r), |run| metric.of(run, flows))?
                .into_iter()
                .map(|x| x * metric.scale())
                .collect();
            let m = MeanCi::of(&xs).ok_or_else(|| format!("{experiment}: no samples"))?;
            let e = super::estimate(&m);
            let x: f64 = r.parse().map_err(|_| format!("rate \"{r}\""))?;
            Ok(ErrorPoint::new(x, e.mean, e.lo, e.hi))
        })
        .collect()
}

/// One table per metric against the data rate: a column per (profile, configuration), mean
/// [95% CI] over the seeds in display units. `configs` are (label, configuration id part);
/// `config(profile, part, rate)` names the configuration.
pub(super) fn rate_table(
    results: &Results,
    experiment: &str,
    name: &str,
    caption: String,
    metric: Metric,
    configs: &[(&str, &str)],
    config: &dyn Fn(&str, &str, &str) -> String,
) -> Result<DataTable, String> {
    let mut columns = vec!["data rate (Mb/s)".to_string()];
    for p in PROFILES {
        for (label, _) in configs {
            columns.push(format!("{p}, {label}"));
        }
    }
    let mut t = DataTable::new(name, caption, columns);
    for r in RATES {
        let mut row = vec![Value::Text(r.into())];
        for p in PROFILES {
            for (_, id) in configs {
                let xs = results
                    .per_seed(experiment, &config(p, id, r), |run| metric.of(run, &FLOWS))?;
                row.push(scaled_estimate(&xs, metric.scale()));
            }
        }
        t.row(row);
    }
    Ok(t)
}

/// The topology drawing shared by seeds 000, 001 and 004.
pub(super) const TOPOLOGY: &str = " n0 --5-+                                         +-5-- n8\n        n2 --5-- n3 --4-- n4 --10-- n5 ==2== n6 --5-- n7\n n1 --5-+                                         +-5-- n9";

/// Time-averaged R and p of each TFRC sender over the run (from the 1 s samples), as extra
/// metrics `mean_rtt_s` and `mean_p` of the flow: the final values alone would hide what E1
/// and E3/E4 did along the way.
fn sender_means(scenario: &Scenario, run: &RunOutput) -> Vec<MetricValue> {
    let mut out = Vec::new();
    for a in run.results.agent_samples.iter().filter(|a| a.sender) {
        let Some(flow) = scenario.flows.get(a.flow as usize) else {
            continue;
        };
        let w = a.names.len();
        for (name, metric) in [("rtt_s", "mean_rtt_s"), ("p", "mean_p")] {
            let Some(j) = a.names.iter().position(|n| *n == name) else {
                continue;
            };
            let xs: Vec<f64> = (0..a.times.len())
                .filter_map(|k| a.values.get(k * w + j).copied())
                .filter(|x| x.is_finite())
                .collect();
            if !xs.is_empty() {
                out.push(MetricValue {
                    subject: flow.name.clone(),
                    metric: metric.into(),
                    value: xs.iter().sum::<f64>() / xs.len() as f64,
                });
            }
        }
    }
    out
}

fn config_id(profile: &str, set: &str, rate: &str) -> String {
    format!("{profile}-{set}-r{rate}")
}

/// A TOML array of strings.
fn toml_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|v| format!("\"{v}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

impl Seed000 {
    fn data() -> Result<Headlines, String> {
        Headlines::parse(DATA_FILE, DATA, &Metric::ALL)
    }
}

/// Per seed, the mean over flows of a per-flow value at the mechanism rate.
fn flow_mean(
    results: &Results,
    cfg: &str,
    metric: &str,
    flows: &[&str],
) -> Result<Vec<f64>, String> {
    results.per_seed(EXPERIMENT, cfg, |r| {
        let mut s = 0.0;
        for f in flows {
            s += r.value(f, metric)?;
        }
        Ok(s / flows.len() as f64)
    })
}

impl Paper for Seed000 {
    fn id(&self) -> &'static str {
        "seed-000"
    }

    fn title(&self) -> &'static str {
        "Nalavala, Pakanati & Mokkala, \"Efficient Traffic Engineering Strategies for Improving the Performance of TCP Friendly Rate Control Protocol\""
    }

    fn experiments(&self, budget: &Budget) -> Result<Vec<Experiment>, String> {
        let d = budget.duration(SECONDS.0, SECONDS.1);
        let mut e = Experiment::new(EXPERIMENT, SCENARIO);
        for p in PROFILES {
            for s in &SETS {
                for r in RATES {
                    let mut c =
                        Config::new(config_id(p, s.id, r), format!("{p}, {}, {r} Mb/s", s.label))
                            .x(r.parse().map_err(|_| format!("rate \"{r}\""))?)
                            .set("duration", format!("{d}s"));
                    for f in FLOWS {
                        c = c
                            .set(format!("flows.{f}.profile"), p)
                            .set(format!("flows.{f}.app_rate"), format!("{r}Mb"));
                        if !s.variants.is_empty() {
                            c = c.set(format!("flows.{f}.variants"), toml_list(s.variants));
                        }
                    }
                    e = e.config(c);
                }
            }
        }
        Ok(vec![e])
    }

    fn measure(
        &self,
        _experiment: &Experiment,
        scenario: &Scenario,
        run: &RunOutput,
    ) -> Vec<MetricValue> {
        sender_means(scenario, run)
    }

    fn report(&self, results: &Results, budget: &Budget) -> Result<PaperReport, String> {
        let data = Self::data()?;
        let secs = budget.duration(SECONDS.0, SECONDS.1);
        let n = budget.seeds;
        let rates = format!("{}–{} Mb/s", RATES[0], RATES[RATES.len() - 1]);
        // Per (profile, set, metric): per-seed values averaged over the rates.
        let avg = |p: &str, s: &str, m: Metric| {
            over_rates(results, EXPERIMENT, &|r| config_id(p, s, r), m, &FLOWS)
        };

        // ---- Claims ------------------------------------------------------------------------
        let (claims, summary_parts) = data.claims_and_summary(
            &avg,
            (ENHANCED.id, CLASSICAL.id),
            "enhanced (E1 + E3 + E5 + E6) vs classical",
            &rates,
        )?;

        // ---- The paper's numbers beside tfrclab's ------------------------------------------
        let headline = data.table(
            &avg,
            (ENHANCED.id, CLASSICAL.id),
            "enhanced vs classical TFRC",
            &rates,
            n,
        )?;

        // ---- Against data rate (Figures 3–7) -------------------------------------------------
        let mut figures = ReportSection::new("Against data rate (Figures 3–7)").text(format!(
            "Each metric of the two TFRC flows against the data rate (each flow's CBR rate), \
             classical and enhanced TFRC, both profiles: mean and 95% CI over {n} seeds, {secs} s \
             runs. Both flows together need more than the 2 Mb/s bottleneck from 1 Mb/s each on; \
             above that the TFRC senders' rate does not depend on the data rate (their \
             applications always have data waiting), only the packet delivery ratio does."
        ));
        for m in Metric::ALL {
            figures = figures.table(rate_table(
                results,
                EXPERIMENT,
                &format!("against-rate-{}", m.id()),
                format!(
                    "{} against data rate, classical and enhanced (E1 + E3 + E5 + E6) TFRC, \
                     mean [95% CI] over {n} seeds",
                    m.heading()
                ),
                m,
                &[("classical", CLASSICAL.id), ("enhanced", ENHANCED.id)],
                &config_id,
            )?);
        }
        for m in Metric::ALL {
            let mut chart = ErrorBarChart::new(
                format!("{} against data rate", m.name()),
                "data rate per flow (Mb/s)",
                m.heading(),
            )
            .log_x(true);
            for p in PROFILES {
                for s in [&CLASSICAL, &ENHANCED] {
                    let pts =
                        rate_points(results, EXPERIMENT, &|r| config_id(p, s.id, r), m, &FLOWS)?;
                    chart = chart.series(format!("{p} {}", s.id), pts);
                }
            }
            figures = figures.figure(
                chart,
                format!(
                    "{}: mean and 95% CI over {n} seeds ({}).",
                    m.name(),
                    m.definition()
                ),
            );
        }

        // ---- Each enhancement alone -----------------------------------------------------------
        let mut columns = vec!["configuration".to_string()];
        for m in Metric::ALL {
            columns.push(format!("Δ {} (%)", m.name()));
        }
        let mut alone = DataTable::new(
            "each-enhancement",
            format!(
                "Each enhancement alone and the combination: per-seed relative change vs classical \
                 TFRC of the same profile, each metric averaged over {rates}, mean [95% CI] over \
                 {n} seeds"
            ),
            columns,
        )
        .in_markdown();
        for p in PROFILES {
            for s in SETS.iter().skip(1) {
                let mut row = vec![Value::Text(format!("{p}, {}", s.label))];
                for m in Metric::ALL {
                    row.push(change_cell(&avg(p, s.id, m)?, &avg(p, CLASSICAL.id, m)?)?);
                }
                alone.row(row);
            }
        }
        let mut mech = DataTable::new(
            "mechanisms",
            format!(
                "What each set did at {MECHANISM_RATE} Mb/s per flow: the senders' time-averaged \
                 RTT estimate R and loss event rate p, and at the end of the run the TTL, \
                 time-exceeded notices and packets protected; mean over the two flows, mean \
                 [95% CI] over {n} seeds"
            ),
            [
                "configuration",
                "mean R (ms)",
                "mean p",
                "loss events",
                "final TTL",
                "TTL notices",
                "packets protected",
            ],
        );
        for p in PROFILES {
            for s in &SETS {
                let cfg = config_id(p, s.id, MECHANISM_RATE);
                let cell = |metric: &str, scale: f64| -> Result<Value, String> {
                    Ok(scaled_estimate(
                        &flow_mean(results, &cfg, metric, &FLOWS)?,
                        scale,
                    ))
                };
                mech.row(vec![
                    Value::Text(format!("{p}, {}", s.label)),
                    cell("mean_rtt_s", 1e3)?,
                    cell("mean_p", 1.0)?,
                    cell("tfrc_loss_events", 1.0)?,
                    cell("tfrc_ttl", 1.0)?,
                    cell("tfrc_ttl_notices", 1.0)?,
                    cell("tfrc_protected_sent", 1.0)?,
                ]);
            }
        }
        let each = ReportSection::new("Each enhancement alone")
            .text(
                "The paper reports only the combination. Each enhancement runs here alone too, on \
                 the same seeds (paired), so the combination's effect can be traced to its parts. \
                 E4 (the mean form of §3.2.2, the paper's alternative to E3) runs alone as well.",
            )
            .table(alone)
            .note(
                "E5 and E6 cannot act in this experiment: every path is 7 hops, so the adaptive \
                 TTL never leaves TTL_min = 32 (NS-2's TTL), no packet dies of TTL expiry, no \
                 time-exceeded notice arrives, and E6 protects only packets sent with a raised \
                 TTL: none. The paper's experiment has no route change and no untrusted domain \
                 (§4), so their runs are identical to classical TFRC's, packet for packet. \
                 scenarios/variants/adaptive-ttl.toml and protect-raised-ttl.toml show the two \
                 mechanisms where a route change makes them act.",
            )
            .table(mech);

        // ---- Readings ---------------------------------------------------------------------------
        let setup = ReportSection::new("Experiment and readings")
            .pre(TOPOLOGY)
            .text(
                "§4: NS-2.35, \"dumbbell topology with multiple bottleneck links consisting of ten \
                 nodes with different bandwidths (5 Mb, 4 Mb, 10 Mb, 2 Mb) incorporating delay of \
                 10 ms\", TFRC packets of 1000 bytes, 175 s. Figure 2 is missing; the layout is the \
                 one seed 004's tables pin down (same authors, same topology): 10 ms links, \
                 DropTail queues with NS-2's default limit of 50 packets.",
            )
            .text(format!(
                "Where the paper is silent, tfrclab reads it so: two TFRC flows, A = n0 → n8 and \
                 B = n1 → n9 (seed 004's TFRC case); \"data rate\" is the rate of the CBR \
                 application feeding each TFRC sender (NS-2's Agent/TFRC with SndrType_ 1), both \
                 flows at it, {rates}; no competing traffic; no warm-up; NS-2's defaults for \
                 everything else. Classical TFRC is NS-2.35's Agent/TFRC (profile ns2); every \
                 configuration also runs with the rfc5348 profile."
            ))
            .text(
                "Enhanced TFRC: E1 adaptive-rtt (§3.1, pseudo-code (3)), E3 ali-ci-replace \
                 (§3.2.1, eq. (5)–(7)), E5 adaptive-ttl (§3.3, eq. (11)) and E6 \
                 protect-raised-ttl (§3.3), with the catalogue's defaults (docs/variants.md). E3 \
                 rather than E4: §3.2.1 is the method the paper develops first and in full; the \
                 include form (eq. (8)) and E4 (§3.2.2) are offered as alternatives. E2 (eq. (4)) \
                 is left out: it rescales the RTO only for losses a classifier calls link errors, \
                 the paper names no classifier for it, and a wired network without loss models \
                 has no link errors.",
            )
            .text(format!(
                "Each configuration runs once per seed 1 … {n}, every flow starting up to 1 s late \
                 (random, shared by every configuration of a seed), so each claim compares enhanced \
                 and classical runs of the same seed. A claim's quantity is, per seed, the metric \
                 averaged over the five data rates for enhanced and for classical TFRC, then their \
                 relative change; \"22% more\" reads as a relative change of +0.22."
            ));

        let ns2_summary = summary_parts.join(", ");
        let utilisation = results
            .per_seed(
                EXPERIMENT,
                &config_id("ns2", CLASSICAL.id, MECHANISM_RATE),
                |r| {
                    r.summary
                        .links
                        .iter()
                        .find(|l| l.name == BOTTLENECK && l.direction == "forward")
                        .map(|l| l.utilisation)
                        .ok_or_else(|| format!("{}: no link {BOTTLENECK}", r.label()))
                },
            )
            .map(|xs| MeanCi::of(&xs).map_or(f64::NAN, |m| m.mean))?;
        Ok(PaperReport {
            summary: format!("enhanced vs classical TFRC (ns2 profile): {ns2_summary}"),
            intro: vec![
                "The paper adds adaptive RTT/RTO (E1), an enhanced average loss interval (E3/E4) \
                 and an adaptive TTL with RSA protection of raised-TTL packets (E5, E6) to TFRC, \
                 and reports, on a 10-node NS-2.35 topology over 175 s, 22% more throughput, 20% \
                 less loss, 20% less delay, 22% more packet delivery and 18% less jitter than \
                 classical TFRC. Its figures and flow setup are missing; tfrclab runs two CBR-fed \
                 TFRC flows at data rates from 0.5 to 10 Mb/s each, classical against enhanced and \
                 each enhancement alone, with the ns2 and rfc5348 profiles."
                    .into(),
                format!(
                    "Replicated runs: {n} seeds, each flow starting up to 1 s late, {secs} s runs \
                     (§4: 175 s). Classical TFRC (ns2 profile) already keeps the 2 Mb/s \
                     bottleneck {:.1}% busy at {MECHANISM_RATE} Mb/s per flow (its DropTail \
                     queue mostly full), so no TFRC variant can add much throughput where the \
                     flows overload it; what a variant can change there is how full it keeps \
                     the queue (delay, loss, jitter).",
                    utilisation * 100.0
                ),
            ],
            claims,
            sections: vec![
                ReportSection::new("The paper's numbers beside tfrclab's")
                    .text(format!(
                        "Transcribed once from {} into {DATA_FILE}: the paper prints no table, \
                         and its figures are missing from the text; the sentences quoted in the \
                         claims are all it states in numbers.",
                        data.source
                    ))
                    .table(headline),
                setup,
                figures,
                each,
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_file_names_the_five_figures() {
        let d = Seed000::data().unwrap();
        let ids: Vec<&str> = d.claims.iter().map(|h| h.metric.id()).collect();
        assert_eq!(ids, ["throughput", "loss", "delay", "pdr", "jitter"]);
        assert_eq!(d.claims[0].magnitude(), 0.22);
        assert_eq!(d.claims[1].direction(), Direction::Below);
        assert_eq!(d.claims[1].printed(), "−20%");
        assert_eq!(d.claims[0].printed(), "+22%");
    }

    #[test]
    fn headline_files_are_checked() {
        let good = r#"
source = "x"
section = "5"
[[claims]]
figure = "3"
metric = "throughput"
change_percent = "22"
printing = "rounded"
quote = "q"
"#;
        assert!(Headlines::parse("p.toml", good, &Metric::ALL).is_ok());
        let e = Headlines::parse("p.toml", good, &[Metric::Loss]).unwrap_err();
        assert!(e.contains("unknown metric \"throughput\""), "{e}");
        let zero = good.replace("\"22\"", "\"0\"");
        assert!(Headlines::parse("p.toml", &zero, &Metric::ALL).is_err());
        let text = good.replace("\"22\"", "\"lots\"");
        assert!(Headlines::parse("p.toml", &text, &Metric::ALL).is_err());
        let twice = format!("{good}{}", &good[good.find("[[claims]]").unwrap()..]);
        assert!(Headlines::parse("p.toml", &twice, &Metric::ALL)
            .unwrap_err()
            .contains("twice"));
    }

    #[test]
    fn every_configuration_applies_to_both_flows() {
        let e = &Seed000.experiments(&Budget::full(10)).unwrap()[0];
        assert_eq!(e.configs.len(), PROFILES.len() * SETS.len() * RATES.len());
        let c = e
            .configs
            .iter()
            .find(|c| c.id == "rfc5348-enhanced-r2")
            .unwrap();
        let get = |k: &str| {
            c.set
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("flows.B.profile"), Some("rfc5348"));
        assert_eq!(get("flows.A.app_rate"), Some("2Mb"));
        assert_eq!(
            get("flows.B.variants"),
            Some(
                "[\"adaptive-rtt\", \"ali-ci-replace\", \"adaptive-ttl\", \"protect-raised-ttl\"]"
            )
        );
        assert_eq!(get("duration"), Some("175s"));
        let classical = e
            .configs
            .iter()
            .find(|c| c.id == "ns2-classical-r0.5")
            .unwrap();
        assert!(classical.set.iter().all(|(k, _)| !k.ends_with("variants")));
    }
}
