//! What a run writes: `summary.json`, `flows.csv` and `timeseries.csv`, computed from a
//! [`RunOutput`] by the metric code of [`crate::metrics`]. `docs/metrics.md` documents every
//! field.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use netsim::{DropCause, FlowRecorder};
use serde::{Deserialize, Serialize};

pub mod variants;

pub use variants::{choice_text, RedSummary, TfrcSummary};

use crate::metrics::{self, Bottleneck, Fairness, FlowInput, FlowMetrics};
use crate::runner::RunOutput;
use scenario::{Flow, Scenario};

/// `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Seed of the run.
    pub seed: u64,
    /// Simulated time, seconds.
    pub duration_s: f64,
    /// Warm-up left out of the metrics, seconds.
    pub warmup_s: f64,
    /// Events the simulator processed.
    pub events: u64,
    /// Packet transmissions over links.
    pub packet_hops: u64,
    /// Wall-clock time of the simulation, seconds (the only field that differs between two
    /// runs of the same scenario and seed).
    pub wall_s: f64,
    /// Per-flow metrics, in scenario order.
    pub flows: Vec<FlowMetrics>,
    /// Fairness and TCP-friendliness.
    pub fairness: Fairness,
    /// Per link direction.
    pub links: Vec<LinkSummary>,
    /// Packet conservation per flow and direction (whole run): sent = delivered + dropped +
    /// in flight, checked by the simulator.
    pub accounting: Vec<FlowAccount>,
    /// Per TFRC flow: the final sender and receiver state and the variant counters
    /// (`docs/metrics.md`, "Variant metrics").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tfrc: Vec<variants::TfrcSummary>,
    /// Per media flow: frame-level results (`docs/media.md`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<crate::media::MediaSummary>,
}

/// One link direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSummary {
    /// Scenario link name.
    pub name: String,
    /// `forward` (from → to) or `reverse`.
    pub direction: String,
    /// From-node name.
    pub from: String,
    /// To-node name.
    pub to: String,
    /// Packets that started transmission.
    pub tx_packets: u64,
    /// Fraction of the run's capacity used (wire bytes / (bandwidth × duration)).
    pub utilisation: f64,
    /// Drops at this link by cause.
    pub dropped_by_cause: BTreeMap<String, u64>,
    /// Time-averaged waiting packets.
    pub queue_mean_packets: f64,
    /// Most waiting packets.
    pub queue_max_packets: u64,
    /// RED queues: drop counters, the variants' adaptation counters and the final max_p and
    /// thresholds (absent for DropTail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red: Option<variants::RedSummary>,
}

/// Conservation counters of one flow direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowAccount {
    /// Flow name.
    pub flow: String,
    /// `data` or `control`.
    pub direction: String,
    /// Packets that entered the network.
    pub sent: u64,
    /// Packets delivered to the agent.
    pub delivered: u64,
    /// Drops by cause.
    pub dropped_by_cause: BTreeMap<String, u64>,
    /// Packets still in queues or on links at the end.
    pub in_flight: u64,
}

fn by_cause(drops: &[u64; 5]) -> BTreeMap<String, u64> {
    DropCause::ALL
        .iter()
        .map(|c| (c.name().to_string(), drops[c.index()]))
        .collect()
}

/// For each simplex link id of the run: (scenario link index, reverse direction).
pub fn simplex_map(out: &RunOutput) -> BTreeMap<u32, (usize, bool)> {
    let mut m = BTreeMap::new();
    for (i, (fwd, rev)) in out.link_ids.iter().enumerate() {
        m.insert(*fwd, (i, false));
        if let Some(r) = rev {
            m.insert(*r, (i, true));
        }
    }
    m
}

/// Each flow's bottleneck: the slowest link on its path (the first one on ties).
pub fn bottlenecks(s: &Scenario, out: &RunOutput) -> Vec<Option<Bottleneck>> {
    let map = simplex_map(out);
    out.paths
        .iter()
        .map(|path| {
            let mut best: Option<(f64, usize, bool)> = None;
            for id in path {
                let Some(&(i, rev)) = map.get(id) else {
                    continue;
                };
                let bw = s.links[i].bandwidth_bps;
                if best.is_none_or(|(b, _, _)| bw < b) {
                    best = Some((bw, i, rev));
                }
            }
            best.map(|(_, i, reverse)| Bottleneck {
                link: s.links[i].name.clone(),
                reverse,
            })
        })
        .collect()
}

/// Each flow's path RTT (twice its data path's propagation delay), active interval inside the
/// measurement window, and delivered bytes per bin, for the friendliness comparisons.
pub fn flow_timing<'a>(s: &Scenario, out: &'a RunOutput) -> Vec<metrics::FlowTiming<'a>> {
    let map = simplex_map(out);
    s.flows
        .iter()
        .zip(&out.results.flows)
        .zip(&out.paths)
        .map(|((f, r), path)| {
            let one_way: Option<std::time::Duration> = path
                .iter()
                .map(|id| map.get(id).map(|&(i, _)| s.links[i].delay))
                .sum();
            metrics::FlowTiming {
                path_rtt: one_way.filter(|_| !path.is_empty()).map(|d| d * 2),
                active: (f.start.max(s.warmup), f.stop.min(s.duration)),
                received_bins: r.forward.received_series(),
            }
        })
        .collect()
}

/// The measurement window's length.
pub fn window(s: &Scenario) -> std::time::Duration {
    s.duration.saturating_sub(s.warmup)
}

/// The metric input of flow `f` of `s`, from its data-direction recorder and whole-run counts.
/// One builder for a tfrclab run ([`flow_metrics`]) and an NS-2 trace (`tfrclab validate`), so
/// both are measured alike.
pub fn flow_input<'a>(
    s: &Scenario,
    f: &'a Flow,
    forward: &'a FlowRecorder,
    generated_packets: u64,
    delivered_whole_run: u64,
) -> FlowInput<'a> {
    FlowInput {
        name: &f.name,
        kind: f.kind.name(),
        forward,
        generated_packets,
        delivered_whole_run,
        active: (f.start.max(s.warmup), f.stop.min(s.duration)),
    }
}

/// Per-flow metrics of a run.
pub fn flow_metrics(s: &Scenario, out: &RunOutput) -> Vec<FlowMetrics> {
    s.flows
        .iter()
        .zip(&out.results.flows)
        .map(|(f, r)| {
            metrics::flow_metrics(
                &flow_input(
                    s,
                    f,
                    &r.forward,
                    r.sender_app.generated_packets,
                    r.accounts[0].delivered,
                ),
                window(s),
            )
        })
        .collect()
}

/// Everything `summary.json` holds.
pub fn summarize(s: &Scenario, out: &RunOutput) -> Summary {
    let flows = flow_metrics(s, out);
    let payload: Vec<u64> = out
        .results
        .flows
        .iter()
        .map(|r| r.forward.delivered_payload)
        .collect();
    let timing = flow_timing(s, out);
    let fairness = metrics::fairness(
        &flows,
        &bottlenecks(s, out),
        &payload,
        &timing,
        s.sample_interval,
    );
    let map = simplex_map(out);
    let secs = s.duration.as_secs_f64();
    let links = out
        .results
        .links
        .iter()
        .enumerate()
        .filter_map(|(id, l)| {
            let &(i, rev) = map.get(&(id as u32))?;
            let sl = &s.links[i];
            Some(LinkSummary {
                name: sl.name.clone(),
                direction: if rev { "reverse" } else { "forward" }.to_string(),
                from: s.nodes[l.from as usize].name.clone(),
                to: s.nodes[l.to as usize].name.clone(),
                tx_packets: l.stats.tx_packets,
                utilisation: if secs > 0.0 {
                    l.stats.tx_bytes as f64 * 8.0 / (sl.bandwidth_bps * secs)
                } else {
                    0.0
                },
                dropped_by_cause: by_cause(&l.stats.drops),
                queue_mean_packets: l.stats.queue_packets.mean(),
                queue_max_packets: l.stats.queue_packets.max(),
                red: variants::red_summary(
                    s,
                    i,
                    l.red,
                    out.internals.red.get(id).and_then(Option::as_ref),
                ),
            })
        })
        .collect();
    let accounting = s
        .flows
        .iter()
        .zip(&out.results.flows)
        .flat_map(|(f, r)| {
            ["data", "control"]
                .iter()
                .zip(r.accounts)
                .map(|(dir, a)| FlowAccount {
                    flow: f.name.clone(),
                    direction: dir.to_string(),
                    sent: a.sent,
                    delivered: a.delivered,
                    dropped_by_cause: by_cause(&a.dropped),
                    in_flight: a.in_flight,
                })
        })
        .collect();
    Summary {
        scenario: s.name.clone(),
        seed: out.seed,
        duration_s: secs,
        warmup_s: s.warmup.as_secs_f64(),
        events: out.results.events,
        packet_hops: out.results.packet_hops,
        wall_s: out.wall.as_secs_f64(),
        flows,
        fairness,
        links,
        accounting,
        tfrc: variants::tfrc_summaries(s, &out.internals),
        media: crate::media::media_summaries(s, out),
    }
}

/// One row of `timeseries.csv` (long format: one value per row).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesRow {
    /// Start of the bin, seconds.
    pub time_s: f64,
    /// What is measured: `throughput_bps`, `goodput_bps`, `sending_bps` (flows),
    /// `queue_packets` (link directions), or a TFRC internal (`x_bps`, `x_recv_bps`, `p`,
    /// `rtt_s`).
    pub metric: String,
    /// Flow name, or link name with `>` (forward) or `<` (reverse).
    pub subject: String,
    /// What `subject` names: `flow` or `link` (a link direction), so that tools can split
    /// the two without parsing names.
    pub subject_kind: SubjectKind,
    /// The value.
    pub value: f64,
}

/// What a time-series row's subject is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubjectKind {
    /// A flow (its data direction).
    Flow,
    /// One direction of a link.
    Link,
}

/// Every time series of a run.
pub fn timeseries(s: &Scenario, out: &RunOutput) -> Vec<SeriesRow> {
    let mut rows = Vec::new();
    let bin = s.sample_interval.as_secs_f64();
    let nbins = (s
        .duration
        .as_nanos()
        .div_ceil(s.sample_interval.as_nanos().max(1))) as usize;
    for (f, r) in s.flows.iter().zip(&out.results.flows) {
        for (metric, series) in [
            ("throughput_bps", r.forward.received_series()),
            ("goodput_bps", r.forward.goodput_series()),
            ("sending_bps", r.forward.sent_series()),
        ] {
            for i in 0..nbins {
                rows.push(SeriesRow {
                    time_s: i as f64 * bin,
                    metric: metric.to_string(),
                    subject: f.name.clone(),
                    subject_kind: SubjectKind::Flow,
                    value: series.get(i).copied().unwrap_or(0) as f64 * 8.0 / bin,
                });
            }
        }
    }
    let map = simplex_map(out);
    for (id, l) in out.results.links.iter().enumerate() {
        let Some(&(i, rev)) = map.get(&(id as u32)) else {
            continue;
        };
        let subject = format!("{}{}", s.links[i].name, if rev { "<" } else { ">" });
        for (k, v) in l
            .stats
            .queue_packets
            .series()
            .iter()
            .enumerate()
            .take(nbins)
        {
            rows.push(SeriesRow {
                time_s: k as f64 * bin,
                metric: "queue_packets".to_string(),
                subject: subject.clone(),
                subject_kind: SubjectKind::Link,
                value: *v,
            });
        }
    }
    for a in &out.results.agent_samples {
        let Some(f) = s.flows.get(a.flow as usize) else {
            continue;
        };
        let w = a.names.len().max(1);
        for (k, t) in a.times.iter().enumerate() {
            for (j, name) in a.names.iter().enumerate() {
                rows.push(SeriesRow {
                    time_s: t.as_secs_f64(),
                    metric: (*name).to_string(),
                    subject: f.name.clone(),
                    subject_kind: SubjectKind::Flow,
                    value: a.values.get(k * w + j).copied().unwrap_or(f64::NAN),
                });
            }
        }
    }
    rows
}

/// Columns of `flows.csv`, one row per flow.
pub fn write_flows_csv(path: &Path, flows: &[FlowMetrics]) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(flows_csv_header())?;
    for f in flows {
        w.write_record(flows_csv_record(f))?;
    }
    w.flush()?;
    Ok(())
}

/// The header of `flows.csv`.
pub fn flows_csv_header() -> Vec<String> {
    let mut header: Vec<String> = [
        "name",
        "kind",
        "sent_packets",
        "received_packets",
        "dropped_packets",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(
        DropCause::ALL
            .iter()
            .map(|c| format!("dropped_{}", c.name())),
    );
    header.extend(
        [
            "generated_packets",
            "throughput_bps",
            "goodput_bps",
            "loss_rate",
            "pdr",
            "delay_mean_s",
            "delay_median_s",
            "delay_p95_s",
            "delay_p99_s",
            "jitter_mean_s",
            "jitter_range_s",
            "jitter_rfc3550_s",
            "smoothness_cov",
            "exposed_packets",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    header
}

/// One flow's row of `flows.csv`, in the order of [`flows_csv_header`].
pub fn flows_csv_record(f: &FlowMetrics) -> Vec<String> {
    let mut rec = vec![
        f.name.clone(),
        f.kind.clone(),
        f.sent_packets.to_string(),
        f.received_packets.to_string(),
        f.dropped_packets.to_string(),
    ];
    rec.extend(DropCause::ALL.iter().map(|c| {
        f.dropped_by_cause
            .get(c.name())
            .copied()
            .unwrap_or(0)
            .to_string()
    }));
    rec.extend(
        [
            f.generated_packets as f64,
            f.throughput_bps,
            f.goodput_bps,
            f.loss_rate,
            f.pdr,
            f.delay_mean_s,
            f.delay_median_s,
            f.delay_p95_s,
            f.delay_p99_s,
            f.jitter_mean_s,
            f.jitter_range_s,
            f.jitter_rfc3550_s,
            f.smoothness_cov,
            f.exposed_packets as f64,
        ]
        .iter()
        .map(|x| x.to_string()),
    );
    rec
}

/// `timeseries.csv`.
pub fn write_timeseries_csv(path: &Path, rows: &[SeriesRow]) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// `summary.json`, pretty-printed.
pub fn write_summary_json(path: &Path, s: &Summary) -> anyhow::Result<()> {
    // Buffered: the serialiser writes token by token, a system call each unbuffered
    // (2.2 million of them, 1.6 s, for a 2,000-flow summary).
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    serde_json::to_writer_pretty(&mut f, s)?;
    f.write_all(b"\n")?;
    f.flush()?;
    Ok(())
}
