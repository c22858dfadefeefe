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
            "marked_packets",
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
            f.marked_packets as f64,
        ]
        .iter()
        .map(|x| x.to_string()),
    );
    rec
}

/// Rows of `rows` as a CSV file, one column per field: nested objects flattened into
/// `key_field` columns (drops by cause into `dropped_<cause>`, as in `flows.csv`), lists of
/// values joined by spaces, absent and null values empty. The header is `lead`, then every
/// other column in name order.
pub fn write_rows_csv<T: Serialize>(path: &Path, rows: &[T], lead: &[&str]) -> anyhow::Result<()> {
    use serde_json::Value;
    /// Column names interned: a row is (column id, text) pairs, so that 10⁵ rows do not
    /// allocate 10⁶ copies of the same names.
    #[derive(Default)]
    struct Columns {
        ids: std::collections::HashMap<String, usize>,
        names: Vec<String>,
        key: String,
    }
    impl Columns {
        fn id(&mut self) -> usize {
            if let Some(&i) = self.ids.get(self.key.as_str()) {
                return i;
            }
            self.names.push(self.key.clone());
            self.ids.insert(self.key.clone(), self.names.len() - 1);
            self.names.len() - 1
        }
    }
    fn flatten(c: &mut Columns, v: &Value, out: &mut Vec<(usize, String)>) {
        match v {
            Value::Object(m) => {
                let len = c.key.len();
                for (k, x) in m {
                    c.key.truncate(len);
                    match (len, k.as_str()) {
                        (0, "dropped_by_cause") => c.key.push_str("dropped"),
                        (0, _) => c.key.push_str(k),
                        _ => {
                            c.key.push('_');
                            c.key.push_str(k);
                        }
                    }
                    flatten(c, x, out);
                }
                c.key.truncate(len);
            }
            Value::Array(a) => {
                let text: Vec<String> = a
                    .iter()
                    .map(|x| match x {
                        Value::String(t) => t.clone(),
                        other => other.to_string(),
                    })
                    .collect();
                out.push((c.id(), text.join(" ")));
            }
            Value::Null => out.push((c.id(), String::new())),
            Value::String(t) => out.push((c.id(), t.clone())),
            other => out.push((c.id(), other.to_string())),
        }
    }
    let mut c = Columns::default();
    for l in lead {
        c.key = l.to_string();
        c.id();
    }
    c.key.clear();
    let mut flat = Vec::with_capacity(rows.len());
    for r in rows {
        let mut cells = Vec::new();
        flatten(&mut c, &serde_json::to_value(r)?, &mut cells);
        flat.push(cells);
    }
    // Lead columns first, the others in name order.
    let mut order: Vec<usize> = (lead.len()..c.names.len()).collect();
    order.sort_by(|&a, &b| c.names[a].cmp(&c.names[b]));
    let order: Vec<usize> = (0..lead.len()).chain(order).collect();
    let mut pos = vec![0; order.len()];
    for (p, &id) in order.iter().enumerate() {
        pos[id] = p;
    }
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(order.iter().map(|&id| &c.names[id]))?;
    let mut rec = vec![String::new(); order.len()];
    for cells in flat {
        rec.iter_mut().for_each(String::clear);
        for (id, v) in cells {
            rec[pos[id]] = v;
        }
        w.write_record(&rec)?;
    }
    w.flush()?;
    Ok(())
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

/// Entries `summary.json` keeps of each per-flow or per-link list (`flows`, `links`,
/// `accounting`, `tfrc`, `fairness.friendliness`); a run with more keeps the first ones there,
/// says so in `rows_cut`, and has every entry in the list's CSV file.
pub const JSON_ROWS: usize = 1_000;

/// The data files of a run, written into `out`: `summary.json`, and every per-flow and
/// per-link list of it whole as CSV: `flows.csv`, `links.csv`, `accounting.csv`, `tfrc.csv`,
/// `friendliness.csv`; and `timeseries.csv`. (What `tfrclab run` and the library's
/// `RunResult::write` write besides the report.)
pub fn write_data_files(
    out: &crate::output::OutputDir,
    s: &Summary,
    rows: &[SeriesRow],
) -> anyhow::Result<()> {
    write_summary_json(&out.path("summary.json"), s)?;
    write_flows_csv(&out.path("flows.csv"), &s.flows)?;
    write_rows_csv(
        &out.path("links.csv"),
        &s.links,
        &["name", "direction", "from", "to"],
    )?;
    write_rows_csv(
        &out.path("accounting.csv"),
        &s.accounting,
        &["flow", "direction"],
    )?;
    write_rows_csv(
        &out.path("tfrc.csv"),
        &s.tfrc,
        &["flow", "profile", "variants"],
    )?;
    write_rows_csv(
        &out.path("friendliness.csv"),
        &s.fairness.friendliness,
        &[
            "flow",
            "bottleneck",
            "ratio",
            "same_rtt_ratio",
            "aggregate_ratio",
        ],
    )?;
    write_timeseries_csv(&out.path("timeseries.csv"), rows)
}

/// The CSV files [`write_data_files`] writes, with what each holds.
pub const DATA_FILES: [(&str, &str); 7] = [
    ("summary.json", "summary.json: every number of this report"),
    ("flows.csv", "flows.csv: per flow"),
    ("links.csv", "links.csv: per link direction"),
    (
        "accounting.csv",
        "accounting.csv: packet accounting per flow and direction",
    ),
    (
        "tfrc.csv",
        "tfrc.csv: TFRC flows' final state and variant counters",
    ),
    (
        "friendliness.csv",
        "friendliness.csv: each TFRC flow against TCP",
    ),
    (
        "timeseries.csv",
        "timeseries.csv: every time series of the charts",
    ),
];

/// What `summary.json` says of a list it cut: how many entries the run has and where they are.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowsCut {
    /// Entries in the run.
    pub total: usize,
    /// The file holding every one.
    pub file: String,
}

/// `summary.json`: indented, each object inside an array on one line (a flow, a link
/// direction, an account), so that it stays readable and greppable, and about a third the size
/// of fully indented JSON for runs with many flows.
///
/// Lists longer than [`JSON_ROWS`] keep their first entries, and `rows_cut` names each list
/// cut with its length and CSV file: a 10⁵-flow run's summary would otherwise be 200 MB.
pub fn write_summary_json(path: &Path, s: &Summary) -> anyhow::Result<()> {
    #[derive(Serialize)]
    struct Cut<'a> {
        #[serde(flatten)]
        summary: &'a Summary,
        rows_cut: BTreeMap<&'static str, RowsCut>,
    }
    // Buffered: the serialiser writes token by token, a system call each unbuffered
    // (2.2 million of them, 1.6 s, for a 2,000-flow summary).
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut ser = serde_json::Serializer::with_formatter(&mut f, RowsFormatter::default());
    let mut rows_cut = BTreeMap::new();
    let mut note = |name: &'static str, total: usize, file: &str| {
        if total > JSON_ROWS {
            rows_cut.insert(
                name,
                RowsCut {
                    total,
                    file: file.into(),
                },
            );
        }
    };
    note("flows", s.flows.len(), "flows.csv");
    note("links", s.links.len(), "links.csv");
    note("accounting", s.accounting.len(), "accounting.csv");
    note("tfrc", s.tfrc.len(), "tfrc.csv");
    note(
        "fairness.friendliness",
        s.fairness.friendliness.len(),
        "friendliness.csv",
    );
    if rows_cut.is_empty() {
        s.serialize(&mut ser)?;
    } else {
        let first = |n: usize| n.min(JSON_ROWS);
        let cut = Summary {
            scenario: s.scenario.clone(),
            seed: s.seed,
            duration_s: s.duration_s,
            warmup_s: s.warmup_s,
            events: s.events,
            packet_hops: s.packet_hops,
            wall_s: s.wall_s,
            flows: s.flows[..first(s.flows.len())].to_vec(),
            fairness: Fairness {
                jain: s.fairness.jain.clone(),
                seed004_byte_difference: s.fairness.seed004_byte_difference.clone(),
                friendliness: s.fairness.friendliness[..first(s.fairness.friendliness.len())]
                    .to_vec(),
            },
            links: s.links[..first(s.links.len())].to_vec(),
            accounting: s.accounting[..first(s.accounting.len())].to_vec(),
            tfrc: s.tfrc[..first(s.tfrc.len())].to_vec(),
            media: s.media[..first(s.media.len())].to_vec(),
        };
        Cut {
            summary: &cut,
            rows_cut,
        }
        .serialize(&mut ser)?;
    }
    f.write_all(b"\n")?;
    f.flush()?;
    Ok(())
}

/// serde_json's pretty printer, except that an object inside an array and everything in it
/// is written on one line. serde_json has the two formatters but not this mix.
#[derive(Default)]
struct RowsFormatter {
    /// Open containers, `true` for arrays.
    stack: Vec<bool>,
    /// Depth (in `stack`) of the object that went on one line, while inside it.
    inline_from: Option<usize>,
    /// The container just opened has no element yet.
    empty: bool,
}

impl RowsFormatter {
    fn inline(&self) -> bool {
        self.inline_from.is_some()
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.stack.len() {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, array: bool) -> std::io::Result<()> {
        if !array && !self.inline() && self.stack.last() == Some(&true) {
            self.inline_from = Some(self.stack.len());
        }
        self.stack.push(array);
        self.empty = true;
        w.write_all(if array { b"[" } else { b"{" })
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, array: bool) -> std::io::Result<()> {
        self.stack.pop();
        if !self.inline() && !self.empty {
            self.newline(w)?;
        }
        if self.inline_from == Some(self.stack.len()) {
            self.inline_from = None;
        }
        self.empty = false;
        w.write_all(if array { b"]" } else { b"}" })
    }

    fn element<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.empty = false;
        match (first, self.inline()) {
            (true, true) => Ok(()),
            (false, true) => w.write_all(b", "),
            (true, false) => self.newline(w),
            (false, false) => {
                w.write_all(b",")?;
                self.newline(w)
            }
        }
    }
}

impl serde_json::ser::Formatter for RowsFormatter {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, true)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, true)
    }
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.element(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, false)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, false)
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.element(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Objects in arrays on one line, the rest indented; the text parses back to the same
    /// value, empty containers included.
    #[test]
    fn summary_json_puts_each_row_on_a_line() {
        let v = serde_json::json!({
            "a": 1,
            "rows": [{"x": 1, "m": {"k": [1, 2]}, "e": []}, {"x": 2, "o": {}}],
            "nested": {"list": [1, 2], "empty": [], "objs": [{"y": null}]},
            "none": {}
        });
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, RowsFormatter::default());
        v.serialize(&mut ser).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            r#"{
  "a": 1,
  "nested": {
    "empty": [],
    "list": [
      1,
      2
    ],
    "objs": [
      {"y": null}
    ]
  },
  "none": {},
  "rows": [
    {"e": [], "m": {"k": [1, 2]}, "x": 1},
    {"o": {}, "x": 2}
  ]
}"#
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
    }
}
