//! The seed papers' metrics (`docs/metrics.md`), computed by one piece of code from
//! a [`netsim::FlowRecorder`], whether the recorder was fed by tfrclab's simulator or by an NS-2
//! trace. `docs/metrics.md` gives every definition.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use netsim::{DropCause, FlowRecorder};
use serde::{Deserialize, Serialize};

/// One flow's metrics, as `summary.json` and `flows.csv` hold them. `Default` is a flow that
/// sent nothing (every count and rate zero), for building fixtures field by field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowMetrics {
    /// Flow name.
    pub name: String,
    /// `tcp`, `udp` or `tfrc`.
    pub kind: String,
    /// Packets the source sent in the measurement window.
    pub sent_packets: u64,
    /// Packets the destination received in the window.
    pub received_packets: u64,
    /// Packets dropped in the window, all causes.
    pub dropped_packets: u64,
    /// Drops by cause: `queue`, `aqm`, `link`, `ttl`, `down`.
    pub dropped_by_cause: BTreeMap<String, u64>,
    /// Packets the source application generated (whole run).
    pub generated_packets: u64,
    /// Wire bits received per second over the window.
    pub throughput_bps: f64,
    /// Payload bits received per second over the window.
    pub goodput_bps: f64,
    /// (sent − received) / sent, packets, in the window.
    pub loss_rate: f64,
    /// Packet delivery ratio: received / generated (whole run).
    pub pdr: f64,
    /// Mean one-way delay of received packets, seconds.
    pub delay_mean_s: f64,
    /// Median delay.
    pub delay_median_s: f64,
    /// 95th percentile delay.
    pub delay_p95_s: f64,
    /// 99th percentile delay.
    pub delay_p99_s: f64,
    /// Mean |d_i − d_{i−1}| over consecutive received packets (seed 000's jitter).
    pub jitter_mean_s: f64,
    /// max − min delay (seed 004's jitter).
    pub jitter_range_s: f64,
    /// RFC 3550 interarrival jitter at the end of the window.
    pub jitter_rfc3550_s: f64,
    /// Coefficient of variation of the per-bin sending rate over the flow's active bins.
    pub smoothness_cov: f64,
    /// Received packets that crossed an untrusted node unprotected (E6).
    pub exposed_packets: u64,
    /// Received packets carrying an ECN-CE mark (an AQM marked them instead of dropping them).
    pub marked_packets: u64,
}

/// What one flow's metrics are computed from.
pub struct FlowInput<'a> {
    /// Flow name.
    pub name: &'a str,
    /// Flow kind.
    pub kind: &'a str,
    /// Data-direction recorder.
    pub forward: &'a FlowRecorder,
    /// Packets the application generated over the whole run (for PDR).
    pub generated_packets: u64,
    /// Packets delivered over the whole run (for PDR, which is whole-run).
    pub delivered_whole_run: u64,
    /// When the source is active: bins outside it are left out of smoothness.
    pub active: (Duration, Duration),
}

fn secs(d: Option<Duration>) -> f64 {
    d.map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// A flow's metrics over a measurement window of length `window`.
pub fn flow_metrics(input: &FlowInput<'_>, window: Duration) -> FlowMetrics {
    let r = input.forward;
    let d = &r.delay;
    FlowMetrics {
        name: input.name.to_string(),
        kind: input.kind.to_string(),
        sent_packets: r.sent_packets,
        received_packets: r.delivered_packets,
        dropped_packets: r.dropped_total(),
        dropped_by_cause: DropCause::ALL
            .iter()
            .map(|c| (c.name().to_string(), r.dropped(*c)))
            .collect(),
        generated_packets: input.generated_packets,
        throughput_bps: r.throughput_bps(window),
        goodput_bps: r.goodput_bps(window),
        loss_rate: r.loss_rate(),
        pdr: ratio(
            input.delivered_whole_run as f64,
            input.generated_packets as f64,
        )
        .min(1.0),
        delay_mean_s: d.mean_secs(),
        delay_median_s: secs(d.quantile(0.5)),
        delay_p95_s: secs(d.quantile(0.95)),
        delay_p99_s: secs(d.quantile(0.99)),
        jitter_mean_s: d.mean_abs_diff_secs(),
        jitter_range_s: d.range_secs(),
        jitter_rfc3550_s: d.rfc3550_secs(),
        smoothness_cov: smoothness(r.sent_series(), r.bin_width(), input.active),
        exposed_packets: r.exposed,
        marked_packets: r.marked,
    }
}

/// Coefficient of variation (σ/μ) of the per-bin sending rate over bins wholly inside the
/// flow's active period; 0 when fewer than two such bins exist.
pub fn smoothness(series: &[u64], bin: Duration, active: (Duration, Duration)) -> f64 {
    let bin_ns = bin.as_nanos().max(1);
    let first = active.0.as_nanos().div_ceil(bin_ns) as usize;
    let last = (active.1.as_nanos() / bin_ns) as usize; // exclusive
    let values: Vec<f64> = (first..last)
        .map(|i| series.get(i).copied().unwrap_or(0) as f64)
        .collect();
    if values.len() < 2 {
        return 0.0;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return 0.0;
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    var.sqrt() / mean
}

/// Jain's fairness index (Σx)² / (n Σx²); 1 for a single flow or all-equal shares, 0 when all
/// are zero.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 <= 0.0 {
        0.0
    } else {
        s * s / (n * s2)
    }
}

/// Fairness across flows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// Jain's index of throughput over the flows of each kind (kinds with ≥ 2 flows).
    pub jain: BTreeMap<String, f64>,
    /// Seed 004's "fairness": for each kind with exactly two flows, the difference in bytes
    /// received (first minus second, payload bytes as the paper counts them).
    pub seed004_byte_difference: BTreeMap<String, i64>,
    /// TCP-friendliness of each TFRC flow.
    pub friendliness: Vec<Friendliness>,
}

/// How a TFRC flow's throughput compares with the TCP flows sharing its bottleneck, three
/// ways (`docs/metrics.md`, "Friendliness"): against the mean of all of them (`ratio`), against
/// those with the same path RTT (`same_rtt_ratio`, the comparison the TCP-friendliness
/// definition makes), and all TFRC against all TCP traffic there over the interval when every
/// one of those flows is active (`aggregate_ratio`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Friendliness {
    /// The TFRC flow.
    pub flow: String,
    /// Its bottleneck link (the slowest link on its path).
    pub bottleneck: String,
    /// TCP flows whose path crosses that link in the same direction: the first
    /// [`LISTED_FLOWS`] names, in flow order.
    pub tcp_flows: Vec<String>,
    /// How many there are.
    #[serde(default)]
    pub tcp_flow_count: usize,
    /// TFRC throughput / mean TCP throughput; `None` when no TCP flow shares the bottleneck.
    pub ratio: Option<f64>,
    /// The flow's propagation RTT (twice the one-way propagation delay of its data path), s.
    pub path_rtt_s: Option<f64>,
    /// The TCP flows sharing the bottleneck whose path RTT equals this flow's (within 1%):
    /// the first [`LISTED_FLOWS`] names, in flow order.
    pub same_rtt_tcp_flows: Vec<String>,
    /// How many there are.
    #[serde(default)]
    pub same_rtt_tcp_flow_count: usize,
    /// TFRC throughput / mean throughput of `same_rtt_tcp_flows`; `None` when there are none.
    pub same_rtt_ratio: Option<f64>,
    /// The TFRC flows sharing the bottleneck in the same direction (this one included): the
    /// first [`LISTED_FLOWS`] names, in flow order.
    pub aggregate_tfrc_flows: Vec<String>,
    /// How many there are.
    #[serde(default)]
    pub aggregate_tfrc_flow_count: usize,
    /// The interval over which every TFRC and TCP flow on the bottleneck is active
    /// (inside the measurement window), s; whole time-series bins only.
    pub aggregate_interval_s: Option<[f64; 2]>,
    /// Bytes delivered to all those TFRC flows / to all those TCP flows over
    /// `aggregate_interval_s`; `None` without TCP flows, a common interval or TCP bytes.
    pub aggregate_ratio: Option<f64>,
}

/// What the friendliness comparisons need of each flow beyond its metrics.
#[derive(Clone, Debug)]
pub struct FlowTiming<'a> {
    /// Propagation RTT of the flow's path.
    pub path_rtt: Option<Duration>,
    /// When the source is active, already clipped to the measurement window.
    pub active: (Duration, Duration),
    /// Wire bytes delivered per time-series bin from time 0.
    pub received_bins: &'a [u64],
}

/// Whole bins `[first, last)` of width `bin` inside `[a, b)`.
fn whole_bins(a: Duration, b: Duration, bin: Duration) -> Option<(usize, usize)> {
    let w = bin.as_nanos().max(1);
    let first = a.as_nanos().div_ceil(w) as usize;
    let last = (b.as_nanos() / w) as usize;
    (last > first).then_some((first, last))
}

fn same_rtt(a: Option<Duration>, b: Option<Duration>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            let (a, b) = (a.as_secs_f64(), b.as_secs_f64());
            (a - b).abs() <= 0.01 * a.max(b) || (a - b).abs() < 1e-6
        }
        _ => false,
    }
}

/// A flow's path as the metrics need it: the slowest link (scenario link name and direction).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bottleneck {
    /// Scenario link name.
    pub link: String,
    /// `true` when crossed from the link's `to` to its `from`.
    pub reverse: bool,
}

/// The most flow names a [`Friendliness`] list holds; its `*_count` field gives how many
/// there are (every name is in `flows.csv` with its bottleneck and path RTT). Unbounded, the
/// lists made `summary.json` grow with the square of the flows.
pub const LISTED_FLOWS: usize = 20;

/// The flows sharing one bottleneck direction, and the figures every TFRC flow there shares.
#[derive(Default)]
struct Group {
    /// TCP and TFRC flows, in flow order.
    tcp: Vec<usize>,
    tfrc: Vec<usize>,
    /// The TCP flows with a path RTT, sorted by it (then by flow).
    by_rtt: Vec<(Duration, usize)>,
    /// Sum of the TCP flows' throughput, in flow order.
    tcp_sum: f64,
    interval: Option<(usize, usize)>,
    aggregate_ratio: Option<f64>,
}

impl Group {
    fn prepare(&mut self, flows: &[FlowMetrics], timing: &[FlowTiming<'_>], bin: Duration) {
        self.tcp_sum = self.tcp.iter().map(|&j| flows[j].throughput_bps).sum();
        self.by_rtt = self
            .tcp
            .iter()
            .filter_map(|&j| Some((timing.get(j)?.path_rtt?, j)))
            .collect();
        self.by_rtt.sort_unstable();
        // The common active interval of every flow compared, in whole bins.
        let all = || self.tfrc.iter().chain(&self.tcp).copied();
        self.interval = if self.tcp.is_empty() || all().any(|j| timing.get(j).is_none()) {
            None
        } else {
            let a = all().map(|j| timing[j].active.0).max().unwrap_or_default();
            let z = all().map(|j| timing[j].active.1).min().unwrap_or_default();
            whole_bins(a, z, bin)
        };
        let bytes = |ix: &[usize], (first, last): (usize, usize)| -> u64 {
            ix.iter()
                .map(|&j| {
                    let s = timing[j].received_bins;
                    s.get(first..last.min(s.len()))
                        .map_or(0, |x| x.iter().sum())
                })
                .sum()
        };
        self.aggregate_ratio = self.interval.and_then(|iv| {
            let tcp_bytes = bytes(&self.tcp, iv);
            (tcp_bytes > 0).then(|| bytes(&self.tfrc, iv) as f64 / tcp_bytes as f64)
        });
    }

    /// The part of `by_rtt` whose RTT is the same as `a` ([`same_rtt`]): a contiguous run,
    /// as the relation holds on an interval around `a`.
    fn same_rtt_range(&self, a: Duration) -> (usize, usize) {
        let lo = self
            .by_rtt
            .partition_point(|&(b, _)| b < a && !same_rtt(Some(a), Some(b)));
        let hi = self
            .by_rtt
            .partition_point(|&(b, _)| b <= a || same_rtt(Some(a), Some(b)));
        (lo, hi.max(lo))
    }
}

/// Fairness over `flows`; `bottlenecks[i]` is flow i's bottleneck, `payload_bytes[i]` the
/// payload bytes it received (for seed 004's difference), `timing[i]` its RTT, activity and
/// delivered bytes per bin of width `bin` (for the same-RTT and aggregate friendliness).
pub fn fairness(
    flows: &[FlowMetrics],
    bottlenecks: &[Option<Bottleneck>],
    payload_bytes: &[u64],
    timing: &[FlowTiming<'_>],
    bin: Duration,
) -> Fairness {
    let mut by_kind: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, f) in flows.iter().enumerate() {
        by_kind.entry(f.kind.clone()).or_default().push(i);
    }
    let jain_map = by_kind
        .iter()
        .filter(|(_, ix)| ix.len() >= 2)
        .map(|(k, ix)| {
            let xs: Vec<f64> = ix.iter().map(|&i| flows[i].throughput_bps).collect();
            (k.clone(), jain(&xs))
        })
        .collect();
    let diff = by_kind
        .iter()
        .filter(|(_, ix)| ix.len() == 2)
        .map(|(k, ix)| {
            let a = payload_bytes.get(ix[0]).copied().unwrap_or(0) as i64;
            let b = payload_bytes.get(ix[1]).copied().unwrap_or(0) as i64;
            (k.clone(), a - b)
        })
        .collect();
    // Flows grouped by bottleneck in one pass, and each group's shared figures computed once:
    // linear in flows (a scan of every flow per TFRC flow made 10⁴-flow runs take minutes).
    let mut groups: BTreeMap<(&str, bool), Group> = BTreeMap::new();
    for (j, g) in flows.iter().enumerate() {
        let Some(Some(b)) = bottlenecks.get(j) else {
            continue;
        };
        let e = groups.entry((b.link.as_str(), b.reverse)).or_default();
        match g.kind.as_str() {
            "tcp" => e.tcp.push(j),
            "tfrc" => e.tfrc.push(j),
            _ => {}
        }
    }
    for g in groups.values_mut() {
        g.prepare(flows, timing, bin);
    }
    let names = |ix: &mut dyn Iterator<Item = usize>| -> Vec<String> {
        ix.take(LISTED_FLOWS)
            .map(|j| flows[j].name.clone())
            .collect()
    };
    let mut friendliness = Vec::new();
    let mut same_cache: HashMap<(usize, usize), (Vec<usize>, f64)> = HashMap::new();
    for (i, f) in flows.iter().enumerate() {
        if f.kind != "tfrc" {
            continue;
        }
        let Some(Some(b)) = bottlenecks.get(i) else {
            continue;
        };
        let g = &groups[&(b.link.as_str(), b.reverse)];
        let ratio_to = |n: usize, sum: f64| {
            let m = sum / n.max(1) as f64;
            (n > 0 && m > 0.0).then(|| f.throughput_bps / m)
        };
        let rtt = timing.get(i).and_then(|t| t.path_rtt);
        // The TCP flows with the same RTT are a run of the group's TCP flows sorted by RTT;
        // their sum is taken in flow order, as before, so results keep their last bits.
        let range = rtt.map_or((0, 0), |a| g.same_rtt_range(a));
        let (same, same_sum) = same_cache.entry(range).or_insert_with(|| {
            let mut ix: Vec<usize> = g.by_rtt[range.0..range.1].iter().map(|&(_, j)| j).collect();
            ix.sort_unstable();
            let sum = ix.iter().map(|&j| flows[j].throughput_bps).sum();
            (ix, sum)
        });
        friendliness.push(Friendliness {
            flow: f.name.clone(),
            bottleneck: b.link.clone(),
            tcp_flows: names(&mut g.tcp.iter().copied()),
            tcp_flow_count: g.tcp.len(),
            ratio: ratio_to(g.tcp.len(), g.tcp_sum),
            path_rtt_s: rtt.map(|d| d.as_secs_f64()),
            same_rtt_tcp_flows: names(&mut same.iter().copied()),
            same_rtt_tcp_flow_count: same.len(),
            same_rtt_ratio: ratio_to(same.len(), *same_sum),
            aggregate_tfrc_flows: names(&mut g.tfrc.iter().copied()),
            aggregate_tfrc_flow_count: g.tfrc.len(),
            aggregate_interval_s: g.interval.map(|(first, last)| {
                let w = bin.as_secs_f64();
                [first as f64 * w, last as f64 * w]
            }),
            aggregate_ratio: g.aggregate_ratio,
        });
    }
    Fairness {
        jain: jain_map,
        seed004_byte_difference: diff,
        friendliness,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
        assert!((jain(&[3.0, 1.0]) - 16.0 / 20.0).abs() < 1e-12);
        assert_eq!(jain(&[]), 0.0);
        assert_eq!(jain(&[0.0, 0.0]), 0.0);
    }

    #[test]
    fn smoothness_uses_active_bins_only() {
        let bin = Duration::from_secs(1);
        // Bins 0 and 5 are partial (start 0.5 s, stop 5.5 s): left out.
        let series = [1, 10, 10, 10, 10, 3];
        let active = (Duration::from_millis(500), Duration::from_millis(5500));
        assert_eq!(smoothness(&series, bin, active), 0.0);
        let series = [0, 10, 20, 10, 20, 0];
        let cov = smoothness(&series, bin, active);
        // mean 15, sample sd = sqrt(100/3)
        assert!(
            (cov - (100.0f64 / 3.0).sqrt() / 15.0).abs() < 1e-12,
            "{cov}"
        );
    }

    fn fm(name: &str, kind: &str, thr: f64) -> FlowMetrics {
        FlowMetrics {
            name: name.into(),
            kind: kind.into(),
            throughput_bps: thr,
            goodput_bps: thr,
            ..FlowMetrics::default()
        }
    }

    #[test]
    fn friendliness_against_tcp_on_the_same_bottleneck() {
        let b = |l: &str| {
            Some(Bottleneck {
                link: l.into(),
                reverse: false,
            })
        };
        let flows = [
            fm("t", "tfrc", 3e6),
            fm("a", "tcp", 1e6),
            fm("b", "tcp", 3e6),
            fm("c", "tcp", 9e6),
        ];
        let ms = Duration::from_millis;
        let s = Duration::from_secs;
        // Bins of 1 s; t and a run 0-10 s, b only 4-8 s, c elsewhere.
        let bins_t = [30u64; 10];
        let bins_a = [10u64; 10];
        let bins_b = [0, 0, 0, 0, 20, 20, 20, 20, 0, 0];
        let timing = [
            FlowTiming {
                path_rtt: Some(ms(40)),
                active: (s(0), s(10)),
                received_bins: &bins_t,
            },
            FlowTiming {
                path_rtt: Some(ms(40)),
                active: (s(0), s(10)),
                received_bins: &bins_a,
            },
            FlowTiming {
                path_rtt: Some(ms(160)),
                active: (ms(3500), ms(8500)),
                received_bins: &bins_b,
            },
            FlowTiming {
                path_rtt: Some(ms(40)),
                active: (s(0), s(10)),
                received_bins: &bins_a,
            },
        ];
        let bl = [b("x"), b("x"), b("x"), b("y")];
        let f = fairness(&flows, &bl, &[10, 20, 30, 40], &timing, s(1));
        let fr = &f.friendliness[0];
        assert_eq!(fr.tcp_flows, ["a", "b"]);
        assert!((fr.ratio.unwrap() - 1.5).abs() < 1e-12);
        // Same RTT: only a (c is on another bottleneck).
        assert_eq!(fr.same_rtt_tcp_flows, ["a"]);
        assert!((fr.same_rtt_ratio.unwrap() - 3.0).abs() < 1e-12);
        // Common interval: b's 3.5-8.5 s in whole bins = 4-8 s: t 4×30 vs a 4×10 + b 4×20.
        assert_eq!(fr.aggregate_interval_s, Some([4.0, 8.0]));
        assert!((fr.aggregate_ratio.unwrap() - 1.0).abs() < 1e-12);
        assert!(f.jain.contains_key("tcp") && !f.jain.contains_key("tfrc"));
        assert!(f.seed004_byte_difference.is_empty());
        let lone = fairness(&flows[..1], &bl[..1], &[1], &timing[..1], s(1));
        assert_eq!(lone.friendliness[0].ratio, None);
        assert_eq!(lone.friendliness[0].same_rtt_ratio, None);
        assert_eq!(lone.friendliness[0].aggregate_ratio, None);
    }

    /// The grouped computation gives what comparing every TFRC flow with every other flow
    /// gives (the definition, written out below), bit for bit, on many flows over two
    /// bottlenecks with RTTs on and around the 1% edge; the name lists stop at
    /// [`LISTED_FLOWS`] while the counts go on.
    #[test]
    fn friendliness_by_group_equals_the_definition() {
        let n = 300;
        let kinds = ["tcp", "tfrc", "udp", "tcp", "tfrc"];
        let rtts_us = [40_000, 40_399, 40_400, 40_405, 39_600, 39_599, 80_000];
        let flows: Vec<FlowMetrics> = (0..n)
            .map(|i| {
                let thr = 1e5 + ((i * 7919) % 1000) as f64 * 1.37;
                fm(&format!("f{i}"), kinds[i % kinds.len()], thr)
            })
            .collect();
        let bins: Vec<Vec<u64>> = (0..n).map(|i| vec![i as u64; 12]).collect();
        let timing: Vec<FlowTiming<'_>> = (0..n)
            .map(|i| FlowTiming {
                path_rtt: (i % 11 != 0).then(|| Duration::from_micros(rtts_us[i % 7])),
                active: (
                    Duration::from_millis((i % 5) as u64 * 300),
                    Duration::from_secs(10),
                ),
                received_bins: &bins[i],
            })
            .collect();
        let bl: Vec<Option<Bottleneck>> = (0..n)
            .map(|i| {
                (i % 13 != 0).then(|| Bottleneck {
                    link: if i % 3 == 0 { "x" } else { "y" }.into(),
                    reverse: false,
                })
            })
            .collect();
        let got = fairness(&flows, &bl, &vec![0; n], &timing, Duration::from_secs(1));
        let mut checked = 0;
        for fr in &got.friendliness {
            let i = flows.iter().position(|f| f.name == fr.flow).unwrap();
            let b = bl[i].as_ref().unwrap();
            let on = |j: usize, k: &str| flows[j].kind == k && bl[j].as_ref() == Some(b);
            let tcp: Vec<usize> = (0..n).filter(|&j| on(j, "tcp")).collect();
            let tfrc: Vec<usize> = (0..n).filter(|&j| on(j, "tfrc")).collect();
            let same: Vec<usize> = tcp
                .iter()
                .copied()
                .filter(|&j| same_rtt(timing[i].path_rtt, timing[j].path_rtt))
                .collect();
            let ratio = |ix: &[usize]| {
                let m = ix.iter().map(|&j| flows[j].throughput_bps).sum::<f64>()
                    / ix.len().max(1) as f64;
                (!ix.is_empty() && m > 0.0).then(|| flows[i].throughput_bps / m)
            };
            let names = |ix: &[usize]| -> Vec<String> {
                ix.iter()
                    .take(LISTED_FLOWS)
                    .map(|&j| flows[j].name.clone())
                    .collect()
            };
            assert_eq!(fr.ratio.map(f64::to_bits), ratio(&tcp).map(f64::to_bits));
            assert_eq!(
                fr.same_rtt_ratio.map(f64::to_bits),
                ratio(&same).map(f64::to_bits)
            );
            assert_eq!(
                (fr.tcp_flow_count, fr.tcp_flows.clone()),
                (tcp.len(), names(&tcp))
            );
            assert_eq!(
                (fr.same_rtt_tcp_flow_count, fr.same_rtt_tcp_flows.clone()),
                (same.len(), names(&same))
            );
            assert_eq!(fr.aggregate_tfrc_flow_count, tfrc.len());
            assert_eq!(fr.aggregate_tfrc_flows, names(&tfrc));
            assert!(tcp.len() > LISTED_FLOWS && fr.tcp_flows.len() == LISTED_FLOWS);
            checked += usize::from(!same.is_empty() && same.len() < tcp.len());
        }
        assert!(got.friendliness.len() > 100 && checked > 50, "{checked}");
        // The 1% edge: 40.4 ms is the same RTT as 40 ms, 40.405 ms and 39.599 ms are not.
        assert!(same_rtt(
            Some(Duration::from_micros(40_000)),
            Some(Duration::from_micros(40_400))
        ));
        assert!(!same_rtt(
            Some(Duration::from_micros(40_000)),
            Some(Duration::from_micros(40_405))
        ));
        assert!(!same_rtt(
            Some(Duration::from_micros(40_000)),
            Some(Duration::from_micros(39_599))
        ));
    }
}
