//! `tfrclab reproduce rfc8867`: TFRC beside NADA, SCReAM and GCC as media congestion control,
//! judged the way the IETF's RMCAT working group judges one: the wired test cases of RFC 8867 §5
//! (5.1–5.8), the metrics of RFC 8868 §3, frame-level results of the video application
//! (`crates/media`), and a verdict per case and controller from stated rules with 95% confidence
//! intervals over the seeds.
//!
//! `docs/media.md` gives every case's parameters (with the ones the RFC leaves open), the
//! metrics' definitions and the rules; this module is their only implementation.
//!
//! Each case is a scenario file under `scenarios/seeds/rfc8867/`; each controller is a set of
//! overrides of its media flows ([`CONTROLLERS`]); case 5.1 also runs a frame trace that does
//! not follow the controller. Per run, [`Paper::measure`] reduces the run to the case's
//! numbers ([`CaseMetrics`]); the rules become [`Claim`]s whose verdicts the framework computes.

use std::collections::BTreeSet;
use std::time::Duration;

use lab::media::{self as lm, Rate};
use lab::runner::RunOutput;
use lab::sweep::MetricValue;
use report::{LineChart, ScatterChart, ScatterPoint, Series, Verdict};
use scenario::{FlowKind, LinkAction, MediaSource, Scenario};

use crate::{
    Budget, Claim, Config, DataTable, Direction, Experiment, Paper, PaperReport, ReportSection,
    Results, Value,
};

/// The paper.
pub struct Rfc8867;

/// A media congestion controller as the suite runs it: overrides of every media flow.
#[derive(Clone, Copy, Debug)]
pub struct Controller {
    /// Configuration id (`tfrc`).
    pub id: &'static str,
    /// Label in tables and legends.
    pub label: &'static str,
    /// `controller` key.
    pub controller: &'static str,
    /// TFRC's `profile` key and `variants` key (a TOML array); `None` for the RMCAT
    /// controllers, whose flows refuse both keys.
    pub tfrc: Option<(&'static str, &'static str)>,
}

/// The controllers every case runs: TFRC in both profiles, the seed variants that change
/// what a media flow sees (its RTT/RTO adaptation, its loss-interval averaging, a smoother
/// rate law), and the RMCAT controllers NADA, SCReAM and GCC with their reference parameters;
/// `docs/media.md` says why these.
pub const CONTROLLERS: &[Controller] = &[
    Controller {
        id: "tfrc",
        label: "TFRC rfc5348",
        controller: "tfrc",
        tfrc: Some(("rfc5348", "[]")),
    },
    Controller {
        id: "tfrc-ns2",
        label: "TFRC ns2",
        controller: "tfrc",
        tfrc: Some(("ns2", "[]")),
    },
    Controller {
        id: "tfrc-adaptive-rtt",
        label: "TFRC + adaptive-rtt (E1)",
        controller: "tfrc",
        tfrc: Some(("rfc5348", "[\"adaptive-rtt\"]")),
    },
    Controller {
        id: "tfrc-ali-mean",
        label: "TFRC + ali-mean-replace (E4)",
        controller: "tfrc",
        tfrc: Some(("rfc5348", "[\"ali-mean-replace\"]")),
    },
    Controller {
        id: "tfrc-simd",
        label: "TFRC + simd (V2)",
        controller: "tfrc",
        tfrc: Some(("rfc5348", "[\"simd\"]")),
    },
    Controller {
        id: "nada",
        label: "NADA (RFC 8698)",
        controller: "nada",
        tfrc: None,
    },
    Controller {
        id: "scream",
        label: "SCReAM (RFC 8298)",
        controller: "scream",
        tfrc: None,
    },
    Controller {
        id: "gcc",
        label: "GCC (gcc-02 draft)",
        controller: "gcc",
        tfrc: None,
    },
];

/// The configuration of case 5.1 whose source plays a recorded trace (1.2 Mb/s mean) over TFRC
/// rfc5348 instead of following it.
pub const TRACE: &str = "trace";

/// A rule of a case's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Media use at least 80 % of what they may use (RFC 8868 §3 bandwidth utilisation).
    Utilisation,
    /// p95 queueing delay of media packets at most 100 ms.
    Delay,
    /// At least 95 % of frames shown (complete by the playout deadline).
    Frames,
    /// Media flows within RFC 8868's [1/3, 3] of each other in at least 90 % of 20-s windows.
    Fairness,
    /// The media flow within [1/3, 3] of the long TCP flow in at least 90 % of 20-s windows.
    TcpShare,
    /// After a flow joins or resumes, or capacity grows, it reaches its share within 10 s.
    Convergence,
}

impl Rule {
    /// (claim id suffix, quantity metric, direction, reference, the rule in words).
    fn spec(self) -> (&'static str, &'static str, Direction, f64, &'static str) {
        match self {
            Rule::Utilisation => (
                "util",
                "utilisation",
                Direction::Above,
                0.8,
                "media use > 80 % of what they may use (capacity, or their maximum rate)",
            ),
            Rule::Delay => (
                "delay",
                "p95_qdelay_ms",
                Direction::Below,
                100.0,
                "p95 queueing delay of media packets < 100 ms",
            ),
            Rule::Frames => (
                "frames",
                "frames_shown",
                Direction::Above,
                0.95,
                "> 95 % of frames complete by the 400-ms playout deadline",
            ),
            Rule::Fairness => (
                "fair",
                "fair20_within",
                Direction::Above,
                0.9,
                "media flows within [1/3, 3] of each other in > 90 % of 20-s windows",
            ),
            Rule::TcpShare => (
                "tcp",
                "tcp20_within",
                Direction::Above,
                0.9,
                "media within [1/3, 3] of the TCP flow in > 90 % of 20-s windows",
            ),
            Rule::Convergence => (
                "conv",
                "convergence_s",
                Direction::Below,
                10.0,
                "reaches its share within 10 s of a join, resume or capacity increase",
            ),
        }
    }
}

/// One RFC 8867 test case.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// `5.1`.
    pub id: &'static str,
    /// RFC 8867's section title.
    pub title: &'static str,
    /// What RFC 8867 expects, in our words.
    pub expected: &'static str,
    /// The rules of its verdict.
    pub rules: &'static [Rule],
}

/// The eight wired cases.
pub const CASES: &[Case] = &[
    Case {
        id: "5.1",
        title: "Variable Available Capacity with a Single Flow",
        expected: "the flow tracks the capacity: it uses it when it grows and backs off \
                   without a lasting queue when it shrinks",
        rules: &[
            Rule::Utilisation,
            Rule::Delay,
            Rule::Frames,
            Rule::Convergence,
        ],
    },
    Case {
        id: "5.2",
        title: "Variable Available Capacity with Multiple Flows",
        expected: "both flows track the capacity and share it",
        rules: &[Rule::Utilisation, Rule::Delay, Rule::Fairness, Rule::Frames],
    },
    Case {
        id: "5.3",
        title: "Congested Feedback Link with Bi-directional Media Flows",
        expected: "each direction's flow tracks its capacity although its feedback crosses \
                   the other, congested, direction",
        rules: &[Rule::Utilisation, Rule::Delay, Rule::Frames],
    },
    Case {
        id: "5.4",
        title: "Competing Media Flows with the Same Congestion Control Algorithm",
        expected: "newcomers get their share quickly and the flows share fairly",
        rules: &[
            Rule::Utilisation,
            Rule::Delay,
            Rule::Fairness,
            Rule::Convergence,
        ],
    },
    Case {
        id: "5.5",
        title: "Round Trip Time Fairness",
        expected: "flows with one-way delays from 10 to 150 ms share fairly",
        rules: &[Rule::Utilisation, Rule::Fairness, Rule::Frames],
    },
    Case {
        id: "5.6",
        title: "Media Flow Competing with a Long TCP Flow",
        expected: "the media flow neither starves nor starves the TCP flow",
        rules: &[Rule::Utilisation, Rule::TcpShare],
    },
    Case {
        id: "5.7",
        title: "Media Flow Competing with Short TCP Flows",
        expected: "the media flows keep a stable share and their frames despite bursts of \
                   short transfers",
        rules: &[Rule::Utilisation, Rule::Fairness, Rule::Frames],
    },
    Case {
        id: "5.8",
        title: "Media Pause and Resume",
        expected: "the others take the paused flow's capacity; the resumed flow gets its \
                   share back quickly",
        rules: &[
            Rule::Utilisation,
            Rule::Delay,
            Rule::Fairness,
            Rule::Convergence,
        ],
    },
];

/// Settling time left out after every event (capacity change, join, leave, pause, resume)
/// before a period counts as steady.
pub const SETTLE: f64 = 5.0;

/// The numbers of one run of a case.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CaseMetrics {
    /// Σ media rate ÷ what media may use, over steady periods (weighted by length).
    pub utilisation: f64,
    /// p95 queueing delay of every media packet after each flow's first 5 s, ms.
    pub p95_qdelay_ms: f64,
    /// Mean queueing delay of the same packets, ms.
    pub mean_qdelay_ms: f64,
    /// Fraction of frames shown, all media flows together.
    pub frames_shown: f64,
    /// Freeze time ÷ measured time, mean over media flows.
    pub freeze_ratio: f64,
    /// p95 frame delay, ms (largest over media flows).
    pub frame_p95_ms: f64,
    /// Media packets lost ÷ sent.
    pub loss: f64,
    /// Fairness among media flows sharing a bottleneck over 1, 5 and 20-s windows: fraction
    /// within [1/3, 3] (NaN when no two media flows share one).
    pub fair_within: [f64; 3],
    /// The worst ratio over 20-s windows.
    pub fair20_worst: f64,
    /// Media against the long TCP flow over 20-s windows (5.6; NaN elsewhere).
    pub tcp20_within: f64,
    /// Mean convergence time over the case's events, s (NaN without such an event).
    pub convergence_s: f64,
    /// Coefficient of variation of the 200-ms media rate in steady periods (mean over flows).
    pub oscillation: f64,
    /// Mean media receive rate (wire), Mb/s, mean over media flows.
    pub media_mbps: f64,
}

/// The fairness windows of RFC 8868: 1, 5 and 20 s.
pub const WINDOWS: [f64; 3] = [1.0, 5.0, 20.0];

struct FlowInfo {
    index: usize,
    name: String,
    media: bool,
    /// The scenario link it crosses that the case varies (its bottleneck).
    link: usize,
    /// Active intervals, seconds.
    active: Vec<(f64, f64)>,
    /// The encoder's largest rate, bit/s (∞ for TCP).
    r_max: f64,
}

/// The bottleneck of a flow: the link of the smallest initial capacity on its path.
fn bottleneck(s: &Scenario, out: &RunOutput, flow: usize) -> Option<usize> {
    let path = out.paths.get(flow)?;
    path.iter()
        .filter_map(|l| {
            out.link_ids
                .iter()
                .position(|&(f, r)| f == *l || r == Some(*l))
        })
        .min_by(|&a, &b| {
            s.links[a]
                .bandwidth_bps
                .total_cmp(&s.links[b].bandwidth_bps)
        })
}

/// The capacity steps of scenario link `link`: (from time s, bit/s), sorted.
pub fn capacity_steps(s: &Scenario, link: usize) -> Vec<(f64, f64)> {
    let mut steps = vec![(0.0, s.links[link].bandwidth_bps)];
    for e in &s.events {
        if let (true, LinkAction::Set(set)) = (e.link == link, e.action) {
            if let Some(b) = set.bandwidth_bps {
                steps.push((e.at.as_secs_f64(), b));
            }
        }
    }
    steps.sort_by(|a, b| a.0.total_cmp(&b.0));
    steps
}

fn capacity_at(steps: &[(f64, f64)], t: f64) -> f64 {
    steps
        .iter()
        .take_while(|(at, _)| *at <= t + 1e-9)
        .last()
        .map_or(f64::NAN, |&(_, c)| c)
}

fn flows(s: &Scenario, out: &RunOutput) -> Vec<FlowInfo> {
    s.flows
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let (start, stop) = (f.start.as_secs_f64(), f.stop.as_secs_f64());
            let (media, active, r_max) = match &f.kind {
                FlowKind::Media { pauses, source, .. } => {
                    let mut active = Vec::new();
                    let mut t = start;
                    for (a, b) in pauses {
                        active.push((t, a.as_secs_f64()));
                        t = b.as_secs_f64();
                    }
                    active.push((t, stop));
                    let r_max = match source {
                        MediaSource::Statistical(c) => c.r_max,
                        MediaSource::Trace { trace, .. } => trace.mean_rate(),
                    };
                    (true, active, r_max)
                }
                _ => (false, vec![(start, stop)], f64::INFINITY),
            };
            Some(FlowInfo {
                index: i,
                name: f.name.clone(),
                media,
                link: bottleneck(s, out, i)?,
                active,
                r_max,
            })
        })
        .collect()
}

fn active_over(f: &FlowInfo, from: f64, to: f64) -> bool {
    f.active
        .iter()
        .any(|&(a, b)| a <= from + 1e-9 && b >= to - 1e-9)
}

/// The case's numbers for one run (`docs/media.md`, "Metrics").
pub fn case_metrics(s: &Scenario, out: &RunOutput) -> CaseMetrics {
    let fl = flows(s, out);
    let dur = s.duration.as_secs_f64();
    let bin = s.sample_interval.as_secs_f64();
    let rate = |i: usize| lm::rate_series(&out.results.flows[i].forward, Rate::Received);
    let rates: Vec<Vec<f64>> = (0..s.flows.len()).map(rate).collect();
    let links: BTreeSet<usize> = fl.iter().filter(|f| f.media).map(|f| f.link).collect();

    // Event times per bottleneck: capacity steps and every flow's joins, leaves and pauses.
    let mut m = CaseMetrics::default();
    let (mut util_num, mut util_den) = (0.0, 0.0);
    let mut fair_counts = [(0.0, 0.0); 3];
    let mut fair_worst: f64 = f64::NAN;
    let (mut tcp_in, mut tcp_n) = (0.0, 0.0);
    let mut osc = Vec::new();
    let mut conv = Vec::new();
    for &link in &links {
        let steps = capacity_steps(s, link);
        let on_link: Vec<&FlowInfo> = fl.iter().filter(|f| f.link == link).collect();
        let mut events: Vec<f64> = steps.iter().map(|&(t, _)| t).collect();
        for f in &on_link {
            for &(a, b) in &f.active {
                events.extend([a, b]);
            }
        }
        events.push(dur);
        events.sort_by(f64::total_cmp);
        events.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        for w in events.windows(2) {
            let (from, to) = (w[0] + SETTLE, w[1]);
            if to - from < 1.0 {
                continue;
            }
            let cap = capacity_at(&steps, w[0]);
            let media: Vec<&&FlowInfo> = on_link
                .iter()
                .filter(|f| f.media && active_over(f, from, to))
                .collect();
            let tcp: Vec<&&FlowInfo> = on_link
                .iter()
                .filter(|f| !f.media && active_over(f, from, to))
                .collect();
            if media.is_empty() {
                continue;
            }
            // What media may use: the capacity, or their maximum rates; with TCP on the link,
            // the whole link's use is measured against the capacity.
            let used: f64 = media
                .iter()
                .chain(&tcp)
                .map(|f| lm::mean_over(&rates[f.index], bin, from, to))
                .sum();
            let may = if tcp.is_empty() {
                cap.min(media.iter().map(|f| f.r_max).sum())
            } else {
                cap
            };
            util_num += (to - from) * used / may;
            util_den += to - from;
            for f in &media {
                osc.push(lm::oscillation(&rates[f.index], bin, from, to));
            }
            if media.len() >= 2 {
                let series: Vec<&[f64]> = media.iter().map(|f| rates[f.index].as_slice()).collect();
                for (k, &win) in WINDOWS.iter().enumerate() {
                    let r = lm::fairness(&series, bin, win, from, to);
                    if r.windows > 0 {
                        fair_counts[k].0 += r.within_bound * r.windows as f64;
                        fair_counts[k].1 += r.windows as f64;
                        if k == 2 {
                            fair_worst = fair_worst.max(r.worst_ratio);
                            if fair_worst.is_nan() {
                                fair_worst = r.worst_ratio;
                            }
                        }
                    }
                }
            }
            if media.len() == 1 && tcp.len() == 1 {
                let series = [
                    rates[media[0].index].as_slice(),
                    rates[tcp[0].index].as_slice(),
                ];
                let r = lm::fairness(&series, bin, 20.0, from, to);
                tcp_in += r.within_bound * r.windows as f64;
                tcp_n += r.windows as f64;
            }
        }
        // Convergence: after a join or resume (not at time 0), or a capacity increase, each
        // media flow active then reaches [0.7, 1.3] × its share (1-s average, held 5 s).
        if on_link.iter().all(|f| f.media) {
            let mut conv_events: Vec<f64> = steps
                .windows(2)
                .filter(|w| w[1].1 > w[0].1)
                .map(|w| w[1].0)
                .collect();
            for f in &on_link {
                conv_events.extend(f.active.iter().map(|&(a, _)| a).filter(|&a| a > 0.0));
            }
            for at in conv_events {
                let next = events
                    .iter()
                    .cloned()
                    .find(|&t| t > at + 1e-9)
                    .unwrap_or(dur);
                let act: Vec<&&FlowInfo> = on_link
                    .iter()
                    .filter(|f| active_over(f, at, next))
                    .collect();
                let cap = capacity_at(&steps, at);
                let share = cap / act.len().max(1) as f64;
                for f in &act {
                    let target = share.min(f.r_max);
                    let t = lm::convergence_time(
                        &rates[f.index],
                        bin,
                        at,
                        (0.7 * target, 1.3 * target),
                        1.0,
                        5.0,
                        next,
                    );
                    // Never converged: censored at the end of the period.
                    conv.push(t.unwrap_or(next - at));
                }
            }
        }
    }
    m.utilisation = if util_den > 0.0 {
        util_num / util_den
    } else {
        f64::NAN
    };
    for (slot, &(within, n)) in m.fair_within.iter_mut().zip(&fair_counts) {
        *slot = if n > 0.0 { within / n } else { f64::NAN };
    }
    m.fair20_worst = fair_worst;
    m.tcp20_within = if tcp_n > 0.0 {
        tcp_in / tcp_n
    } else {
        f64::NAN
    };
    m.convergence_s = mean(&conv);
    m.oscillation = mean(
        &osc.into_iter()
            .filter(|x| x.is_finite())
            .collect::<Vec<_>>(),
    );

    // Queueing delay, loss and rates of the media packets.
    let mut qd: Vec<f64> = Vec::new();
    let (mut sent, mut lost) = (0u64, 0u64);
    let mut mbps = Vec::new();
    for f in fl.iter().filter(|f| f.media) {
        let rec = &out.results.flows[f.index].forward;
        let start = f.active.first().map_or(0.0, |a| a.0);
        qd.extend(
            lm::queueing_delays(rec)
                .into_iter()
                .filter(|&(t, _)| t >= start + SETTLE)
                .map(|(_, d)| d * 1e3),
        );
        let acc = out.results.flows[f.index].accounts[0];
        sent += acc.sent;
        lost += acc.sent - acc.delivered - acc.in_flight;
        let life: f64 = f.active.iter().map(|(a, b)| b - a).sum();
        mbps.push(rec.received_series().iter().sum::<u64>() as f64 * 8.0 / life.max(1e-9) / 1e6);
    }
    qd.sort_by(f64::total_cmp);
    m.p95_qdelay_ms = media::results::quantile_sorted(&qd, 0.95);
    m.mean_qdelay_ms = mean(&qd);
    m.loss = if sent > 0 {
        lost as f64 / sent as f64
    } else {
        f64::NAN
    };
    m.media_mbps = mean(&mbps);

    let frames = lm::media_summaries(s, out);
    let (shown, total): (u64, u64) = frames
        .iter()
        .fold((0, 0), |(a, b), f| (a + f.on_time, b + f.frames));
    m.frames_shown = if total > 0 {
        shown as f64 / total as f64
    } else {
        f64::NAN
    };
    m.freeze_ratio = mean(&frames.iter().map(|f| f.freeze_ratio).collect::<Vec<_>>());
    m.frame_p95_ms = frames
        .iter()
        .map(|f| f.frame_delay_p95_s * 1e3)
        .fold(f64::NAN, f64::max);
    m
}

/// A case's verdict from its rules' verdicts: supported when all are, contradicted when one
/// is, not supported otherwise.
pub fn case_verdict(rules: &[Verdict]) -> Verdict {
    if rules.iter().all(|v| *v == Verdict::Supported) {
        Verdict::Supported
    } else if rules.contains(&Verdict::Contradicted) {
        Verdict::Contradicted
    } else {
        Verdict::NotSupported
    }
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        f64::NAN
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

impl CaseMetrics {
    /// As (metric name, value), the names the report and `runs.csv` use.
    pub fn values(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("utilisation", self.utilisation),
            ("p95_qdelay_ms", self.p95_qdelay_ms),
            ("mean_qdelay_ms", self.mean_qdelay_ms),
            ("frames_shown", self.frames_shown),
            ("freeze_ratio", self.freeze_ratio),
            ("frame_p95_ms", self.frame_p95_ms),
            ("loss", self.loss),
            ("fair1_within", self.fair_within[0]),
            ("fair5_within", self.fair_within[1]),
            ("fair20_within", self.fair_within[2]),
            ("fair20_worst", self.fair20_worst),
            ("tcp20_within", self.tcp20_within),
            ("convergence_s", self.convergence_s),
            ("oscillation", self.oscillation),
            ("media_mbps", self.media_mbps),
        ]
    }
}

fn case_of(e: &Experiment) -> Option<&'static Case> {
    CASES.iter().find(|c| c.id == e.id)
}

/// The overrides that make every media flow of `s` run `c`.
fn controller_config(c: &Controller, media: &[String]) -> Config {
    let mut cfg = Config::new(c.id, c.label);
    for f in media {
        cfg = cfg.set(
            format!("flows.{f}.controller"),
            format!("\"{}\"", c.controller),
        );
        if let Some((profile, variants)) = c.tfrc {
            cfg = cfg
                .set(format!("flows.{f}.profile"), format!("\"{profile}\""))
                .set(format!("flows.{f}.variants"), variants);
        }
    }
    cfg
}

/// The media flows' names of a case's scenario file.
fn media_flows(case: &Case) -> Result<Vec<String>, String> {
    let text = scenario_text(case.id)?;
    let s = Scenario::parse(&format!("rfc8867/case-{}.toml", case.id), text)
        .map_err(|e| e.to_string())?;
    Ok(s.flows
        .iter()
        .filter(|f| matches!(f.kind, FlowKind::Media { .. }))
        .map(|f| f.name.clone())
        .collect())
}

/// The case files, compiled in so the flow names are known without the scenarios folder
/// (the runs read the folder's copies, as for every paper).
fn scenario_text(id: &str) -> Result<&'static str, String> {
    Ok(match id {
        "5.1" => include_str!("../../../scenarios/seeds/rfc8867/case-5.1.toml"),
        "5.2" => include_str!("../../../scenarios/seeds/rfc8867/case-5.2.toml"),
        "5.3" => include_str!("../../../scenarios/seeds/rfc8867/case-5.3.toml"),
        "5.4" => include_str!("../../../scenarios/seeds/rfc8867/case-5.4.toml"),
        "5.5" => include_str!("../../../scenarios/seeds/rfc8867/case-5.5.toml"),
        "5.6" => include_str!("../../../scenarios/seeds/rfc8867/case-5.6.toml"),
        "5.7" => include_str!("../../../scenarios/seeds/rfc8867/case-5.7.toml"),
        "5.8" => include_str!("../../../scenarios/seeds/rfc8867/case-5.8.toml"),
        other => return Err(format!("no RFC 8867 case {other}")),
    })
}

/// Under `--quick`: only these cases, at their full length (`docs/media.md`).
const QUICK_CASES: &[&str] = &["5.1", "5.4", "5.6"];

impl Paper for Rfc8867 {
    fn id(&self) -> &'static str {
        "rfc8867"
    }

    fn title(&self) -> &'static str {
        "RFC 8867 / RFC 8868: TFRC beside NADA, SCReAM and GCC as media congestion control, \
         judged as RMCAT judges"
    }

    fn experiments(&self, budget: &Budget) -> Result<Vec<Experiment>, String> {
        let mut out = Vec::new();
        for case in CASES {
            if budget.quick && !QUICK_CASES.contains(&case.id) {
                continue;
            }
            let media = media_flows(case)?;
            let mut e = Experiment::new(case.id, format!("rfc8867/case-{}.toml", case.id))
                .record_delays(true)
                .start_offset_max(Duration::from_millis(500));
            for c in CONTROLLERS {
                let cfg = controller_config(c, &media);
                e = e.config(cfg);
            }
            if case.id == "5.1" {
                let cfg = Config::new(TRACE, "trace (1.2 Mb/s, deaf to TFRC)")
                    .set("flows.media1.source.model", "\"trace\"")
                    .set("flows.media1.source.file", "\"trace-1200k.csv\"");
                e = e.config(cfg);
            }
            out.push(e);
        }
        Ok(out)
    }

    fn measure(&self, e: &Experiment, s: &Scenario, run: &RunOutput) -> Vec<MetricValue> {
        if case_of(e).is_none() {
            return Vec::new();
        }
        case_metrics(s, run)
            .values()
            .into_iter()
            .map(|(metric, value)| MetricValue {
                subject: "case".into(),
                metric: metric.into(),
                value,
            })
            .collect()
    }

    fn series(&self, _e: &Experiment, s: &Scenario, run: &RunOutput) -> Vec<Series> {
        let bin = s.sample_interval.as_secs_f64();
        let fl = flows(s, run);
        let mut out = Vec::new();
        let media: Vec<&FlowInfo> = fl.iter().filter(|f| f.media).collect();
        // Capacity of each bottleneck the media flows cross, as steps.
        let links: BTreeSet<usize> = media.iter().map(|f| f.link).collect();
        let dur = s.duration.as_secs_f64();
        for &l in &links {
            let steps = capacity_steps(s, l);
            let mut pts = Vec::new();
            for (k, &(t, c)) in steps.iter().enumerate() {
                let end = steps.get(k + 1).map_or(dur, |n| n.0);
                pts.push((t, c / 1e6));
                pts.push((end, c / 1e6));
            }
            out.push(Series {
                name: format!("capacity {}", s.links[l].name),
                points: pts,
            });
        }
        for f in &fl {
            let r = lm::rate_series(&run.results.flows[f.index].forward, Rate::Received);
            out.push(Series {
                name: format!("rate {}", f.name),
                points: r
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i as f64 * bin, v / 1e6))
                    .collect(),
            });
        }
        for f in &media {
            let q = lm::queueing_delays(&run.results.flows[f.index].forward);
            let b = lm::binned_mean(&q, bin, dur);
            out.push(Series {
                name: format!("qdelay {}", f.name),
                points: b
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i as f64 * bin, v * 1e3))
                    .collect(),
            });
        }
        out
    }

    fn report(&self, results: &Results, budget: &Budget) -> Result<PaperReport, String> {
        let mut claims = Vec::new();
        // Two verdict matrices, each narrow enough for a laptop screen: the TFRC configurations
        // (and the trace), then TFRC rfc5348 beside the RMCAT controllers.
        let rule_words = "supported (the case passes) when every rule of the case is supported \
             (its 95% CI on the right side of the bound), contradicted (it fails) when one is \
             contradicted (the CI entirely on the wrong side), not supported (inconclusive) \
             otherwise";
        let tfrc_ids: Vec<&str> = CONTROLLERS
            .iter()
            .filter(|c| c.tfrc.is_some())
            .map(|c| c.id)
            .chain(std::iter::once(TRACE))
            .collect();
        let rmcat_ids: Vec<&str> = CONTROLLERS
            .iter()
            .enumerate()
            .filter(|(i, c)| *i == 0 || c.tfrc.is_none())
            .map(|(_, c)| c.id)
            .collect();
        let label = |id: &str| {
            CONTROLLERS
                .iter()
                .find(|c| c.id == id)
                .map_or("trace (5.1)", |c| c.label)
                .to_string()
        };
        let matrix_of = |name: &str, caption: String, ids: &[&str]| {
            DataTable::new(
                name,
                caption,
                std::iter::once("case".to_string()).chain(ids.iter().map(|id| label(id))),
            )
            .in_markdown()
        };
        let mut matrix = matrix_of(
            "verdicts",
            format!("Verdict per case and TFRC configuration: {rule_words}"),
            &tfrc_ids,
        );
        let mut rmcat_matrix = matrix_of(
            "verdicts-rmcat",
            format!("Verdict per case, TFRC beside NADA, SCReAM and GCC: {rule_words}"),
            &rmcat_ids,
        );
        let mut sections = Vec::new();
        for case in CASES {
            let Ok(e) = results.experiment(case.id) else {
                continue;
            };
            let mut case_verdicts: Vec<(&str, Verdict)> = Vec::new();
            let mut table = DataTable::new(
                format!("case-{}", case.id.replace('.', "-")),
                format!("§{} metrics, mean and 95% CI over the seeds", case.id),
                [
                    "controller",
                    "utilisation",
                    "p95 qdelay (ms)",
                    "loss",
                    "frames shown",
                    "freeze ratio",
                    "frame p95 (ms)",
                    "fair 1 s",
                    "fair 5 s",
                    "fair 20 s",
                    "TCP 20 s",
                    "convergence (s)",
                    "rate CoV",
                ],
            )
            .in_markdown();
            let mut scatter = ScatterChart::new(
                format!(
                    "§{}: throughput against p95 queueing delay, one point per seed",
                    case.id
                ),
                "p95 queueing delay (ms)",
                "media rate (Mb/s)",
            );
            for cfg in &e.configs {
                let est = |metric: &str| -> Value {
                    results
                        .estimate(case.id, &cfg.id, "case", metric)
                        .map(|m| Value::estimate(&m))
                        .unwrap_or(Value::Empty)
                };
                table.row(vec![
                    Value::Text(cfg.label.clone()),
                    est("utilisation"),
                    est("p95_qdelay_ms"),
                    est("loss"),
                    est("frames_shown"),
                    est("freeze_ratio"),
                    est("frame_p95_ms"),
                    est("fair1_within"),
                    est("fair5_within"),
                    est("fair20_within"),
                    est("tcp20_within"),
                    est("convergence_s"),
                    est("oscillation"),
                ]);
                let xs = results.samples(case.id, &cfg.id, "case", "p95_qdelay_ms")?;
                let ys = results.samples(case.id, &cfg.id, "case", "media_mbps")?;
                scatter = scatter.series(
                    cfg.label.clone(),
                    xs.iter()
                        .zip(&ys)
                        .zip(&results.seeds)
                        .map(|((&x, &y), seed)| ScatterPoint {
                            x,
                            y,
                            x_range: (f64::NAN, f64::NAN),
                            label: format!("seed {seed}"),
                        })
                        .collect(),
                );
                // The verdict: every rule a claim.
                let mut verdicts = Vec::new();
                for rule in case.rules {
                    let (suffix, metric, dir, reference, words) = rule.spec();
                    let samples = results.samples(case.id, &cfg.id, "case", metric)?;
                    let claim = Claim::new(
                        format!("{}-{}-{suffix}", case.id, cfg.id),
                        format!("§{} {}: {words}", case.id, cfg.label),
                        format!("{metric} (docs/media.md, \"Verdict rules\")"),
                        dir,
                        reference,
                    )
                    .samples(samples);
                    verdicts.push(claim.evaluate().verdict);
                    claims.push(claim);
                }
                case_verdicts.push((&cfg.id, case_verdict(&verdicts)));
            }
            let row = |ids: &[&str]| {
                std::iter::once(Value::Text(format!("{} {}", case.id, case.title)))
                    .chain(ids.iter().map(|id| {
                        case_verdicts
                            .iter()
                            .find(|(c, _)| c == id)
                            .map_or(Value::Empty, |&(_, v)| Value::Verdict(v))
                    }))
                    .collect::<Vec<_>>()
            };
            matrix.row(row(&tfrc_ids));
            rmcat_matrix.row(row(&rmcat_ids));
            let mut section = ReportSection::new(format!("§{} {}", case.id, case.title))
                .text(format!(
                    "Expected (RFC 8867 §{}): {}. Rules: {}.",
                    case.id,
                    case.expected,
                    case.rules
                        .iter()
                        .map(|r| r.spec().4)
                        .collect::<Vec<_>>()
                        .join("; ")
                ))
                .table(table);
            // Charts for TFRC in both profiles, the RMCAT controllers and the trace; the TFRC
            // variants are in the table and the scatter.
            let charted = |id: &str| {
                CONTROLLERS
                    .iter()
                    .position(|c| c.id == id)
                    .is_none_or(|i| i < 2 || CONTROLLERS[i].tfrc.is_none())
            };
            for cfg in e.configs.iter().filter(|c| charted(&c.id)) {
                let Some(first) = results.replicated(case.id, &cfg.id)?.first().copied() else {
                    continue;
                };
                let mut rate = LineChart::new(
                    format!("§{} {}: rate against capacity (seed 1)", case.id, cfg.label),
                    "time (s)",
                    "Mb/s",
                )
                .step(true);
                let mut delay = LineChart::new(
                    format!(
                        "§{} {}: queueing delay (seed 1, 200-ms means)",
                        case.id, cfg.label
                    ),
                    "time (s)",
                    "queueing delay (ms)",
                )
                .step(true);
                for sr in &first.series {
                    if let Some(name) = sr.name.strip_prefix("qdelay ") {
                        delay = delay.series(name, sr.points.clone());
                    } else if let Some(name) = sr.name.strip_prefix("rate ") {
                        rate = rate.series(name, sr.points.clone());
                    } else {
                        rate = rate.series(sr.name.clone(), sr.points.clone());
                    }
                }
                section = section
                    .figure(rate, "Receive rate per 200-ms bin and the bottleneck capacity.")
                    .figure(
                        delay,
                        "Queueing delay: one-way delay minus the flow's smallest, averaged per bin.",
                    );
            }
            section = section.figure(
                scatter,
                "Pantheon's view: each point one seed's mean media rate against its p95 queueing \
                 delay; up and to the left is better.",
            );
            sections.push(section);
        }
        let mut first = ReportSection::new("Verdict per case and controller")
            .table(rmcat_matrix)
            .table(matrix);
        if budget.quick {
            first = first.note(
                "quick: cases 5.1, 5.4 and 5.6 only, at full length, 3 seeds: indicative only",
            );
        }
        sections.insert(0, first);
        Ok(PaperReport {
            summary: format!(
                "{} cases × {} controller configurations ({} of TFRC, NADA, SCReAM, GCC), \
                 RFC 8868 metrics and frame-level results",
                results.experiments.len(),
                CONTROLLERS.len(),
                CONTROLLERS.iter().filter(|c| c.tfrc.is_some()).count()
            ),
            intro: vec![
                "RFC 8867 defines the test cases the IETF's RMCAT group uses to evaluate \
                 congestion control for interactive real-time media, RFC 8868 the metrics. \
                 Here a synthetic video encoder (RFC 8593's statistical model) follows the \
                 target rate of its congestion controller: TFRC (RFC 5348) in both profiles and \
                 with three seed variants, and beside it the controllers RMCAT standardised or \
                 deployed, NADA (RFC 8698), SCReAM (RFC 8298) and GCC \
                 (draft-ietf-rmcat-gcc-02), each with its own feedback. Each case runs \
                 every controller configuration over the seeds; each rule of a case is a claim \
                 with a 95% CI, and the case passes for a controller when all its claims are \
                 supported (docs/media.md gives every parameter and rule)."
                    .to_string(),
            ],
            claims,
            sections,
        })
    }
}
