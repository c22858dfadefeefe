//! The seed papers' metrics (`docs/metrics.md`), computed by one piece of code from
//! a [`netsim::FlowRecorder`], whether the recorder was fed by tfrclab's simulator or by an NS-2
//! trace. `docs/metrics.md` gives every definition.

use std::collections::BTreeMap;
use std::time::Duration;

use netsim::{DropCause, FlowRecorder};
use serde::{Deserialize, Serialize};

/// One flow's metrics, as `summary.json` and `flows.csv` hold them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// TCP flows whose path crosses that link in the same direction.
    pub tcp_flows: Vec<String>,
    /// TFRC throughput / mean TCP throughput; `None` when no TCP flow shares the bottleneck.
    pub ratio: Option<f64>,
    /// The flow's propagation RTT (twice the one-way propagation delay of its data path), s.
    pub path_rtt_s: Option<f64>,
    /// The TCP flows of `tcp_flows` whose path RTT equals this flow's (within 1%).
    pub same_rtt_tcp_flows: Vec<String>,
    /// TFRC throughput / mean throughput of `same_rtt_tcp_flows`; `None` when there are none.
    pub same_rtt_ratio: Option<f64>,
    /// The TFRC flows sharing the bottleneck in the same direction (this one included).
    pub aggregate_tfrc_flows: Vec<String>,
    /// The interval over which every flow of `aggregate_tfrc_flows` and `tcp_flows` is active
    /// (inside the measurement window), s; whole time-series bins only.
    pub aggregate_interval_s: Option<[f64; 2]>,
    /// Bytes delivered to all of `aggregate_tfrc_flows` / to all of `tcp_flows` over
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
    let mut friendliness = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        if f.kind != "tfrc" {
            continue;
        }
        let Some(Some(b)) = bottlenecks.get(i) else {
            continue;
        };
        let tcp: Vec<usize> = flows
            .iter()
            .enumerate()
            .filter(|(j, g)| {
                g.kind == "tcp" && bottlenecks.get(*j).and_then(|x| x.as_ref()) == Some(b)
            })
            .map(|(j, _)| j)
            .collect();
        let mean = |ix: &[usize]| {
            ix.iter().map(|&j| flows[j].throughput_bps).sum::<f64>() / ix.len().max(1) as f64
        };
        let ratio_to = |ix: &[usize]| {
            let m = mean(ix);
            (!ix.is_empty() && m > 0.0).then(|| f.throughput_bps / m)
        };
        let rtt = timing.get(i).and_then(|t| t.path_rtt);
        let same: Vec<usize> = tcp
            .iter()
            .copied()
            .filter(|&j| same_rtt(rtt, timing.get(j).and_then(|t| t.path_rtt)))
            .collect();
        let tfrc: Vec<usize> = flows
            .iter()
            .enumerate()
            .filter(|(j, g)| {
                g.kind == "tfrc" && bottlenecks.get(*j).and_then(|x| x.as_ref()) == Some(b)
            })
            .map(|(j, _)| j)
            .collect();
        // The common active interval of every flow compared, in whole bins.
        let all: Vec<usize> = tfrc.iter().chain(&tcp).copied().collect();
        let interval = if tcp.is_empty() || all.iter().any(|&j| timing.get(j).is_none()) {
            None
        } else {
            let a = all
                .iter()
                .map(|&j| timing[j].active.0)
                .max()
                .unwrap_or_default();
            let z = all
                .iter()
                .map(|&j| timing[j].active.1)
                .min()
                .unwrap_or_default();
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
        let aggregate_ratio = interval.and_then(|iv| {
            let tcp_bytes = bytes(&tcp, iv);
            (tcp_bytes > 0).then(|| bytes(&tfrc, iv) as f64 / tcp_bytes as f64)
        });
        let names = |ix: &[usize]| ix.iter().map(|&j| flows[j].name.clone()).collect();
        friendliness.push(Friendliness {
            flow: f.name.clone(),
            bottleneck: b.link.clone(),
            tcp_flows: names(&tcp),
            ratio: ratio_to(&tcp),
            path_rtt_s: rtt.map(|d| d.as_secs_f64()),
            same_rtt_tcp_flows: names(&same),
            same_rtt_ratio: ratio_to(&same),
            aggregate_tfrc_flows: names(&tfrc),
            aggregate_interval_s: interval.map(|(first, last)| {
                let w = bin.as_secs_f64();
                [first as f64 * w, last as f64 * w]
            }),
            aggregate_ratio,
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
            sent_packets: 0,
            received_packets: 0,
            dropped_packets: 0,
            dropped_by_cause: BTreeMap::new(),
            generated_packets: 0,
            throughput_bps: thr,
            goodput_bps: thr,
            loss_rate: 0.0,
            pdr: 0.0,
            delay_mean_s: 0.0,
            delay_median_s: 0.0,
            delay_p95_s: 0.0,
            delay_p99_s: 0.0,
            jitter_mean_s: 0.0,
            jitter_range_s: 0.0,
            jitter_rfc3550_s: 0.0,
            smoothness_cov: 0.0,
            exposed_packets: 0,
            marked_packets: 0,
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
}
