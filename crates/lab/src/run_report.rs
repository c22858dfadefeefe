//! `report.html` of one run: the scenario, the per-flow table, throughput over time, delay
//! distributions, bottleneck queues, TFRC internals, links, fairness and packet accounting.

use std::collections::BTreeMap;

use crate::runner::RunOutput;
use crate::summary::{LinkSummary, SeriesRow, Summary};
use report::{fmt_num, Cell, DistributionChart, DistributionKind, LineChart, Page, Table};
use scenario::Scenario;

/// Points of one (metric, subject) series, scaled.
fn series(rows: &[SeriesRow], metric: &str, subject: &str, scale: f64) -> Vec<(f64, f64)> {
    rows.iter()
        .filter(|r| r.metric == metric && r.subject == subject)
        .map(|r| (r.time_s, r.value * scale))
        .collect()
}

/// The per-flow table (also used by the sweep and reproduce reports).
pub fn flow_table(summary: &Summary) -> Table {
    let mut t = Table::new([
        "flow",
        "kind",
        "sent",
        "received",
        "dropped",
        "throughput (Mb/s)",
        "goodput (Mb/s)",
        "loss rate",
        "PDR",
        "delay mean (ms)",
        "delay p95 (ms)",
        "jitter mean (ms)",
        "jitter range (ms)",
        "RFC 3550 jitter (ms)",
    ]);
    for f in &summary.flows {
        t.push_row([
            Cell::new(&f.name),
            Cell::new(&f.kind),
            Cell::num(f.sent_packets as f64),
            Cell::num(f.received_packets as f64),
            Cell::num(f.dropped_packets as f64).title(
                f.dropped_by_cause
                    .iter()
                    .filter(|(_, n)| **n > 0)
                    .map(|(c, n)| format!("{c}: {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            Cell::num(f.throughput_bps / 1e6),
            Cell::num(f.goodput_bps / 1e6),
            Cell::num(f.loss_rate),
            Cell::num(f.pdr),
            Cell::num(f.delay_mean_s * 1e3),
            Cell::num(f.delay_p95_s * 1e3),
            Cell::num(f.jitter_mean_s * 1e3),
            Cell::num(f.jitter_range_s * 1e3),
            Cell::num(f.jitter_rfc3550_s * 1e3),
        ]);
    }
    t
}

/// Build the run report.
pub fn run_report(s: &Scenario, summary: &Summary, rows: &[SeriesRow], out: &RunOutput) -> Page {
    let mut page = Page::new(format!("tfrclab run: {}", s.name));
    let intro = page.intro();
    intro.paragraph(format!(
        "Seed {}, {} s simulated ({} s warm-up left out of the metrics), {} events, {} packet-hops, {} s of wall-clock time.",
        summary.seed,
        fmt_num(summary.duration_s),
        fmt_num(summary.warmup_s),
        summary.events,
        summary.packet_hops,
        fmt_num(summary.wall_s)
    ));
    if let Some(d) = &s.description {
        intro.paragraph(d.clone());
    }

    page.section("Flows")
        .table(flow_table(summary))
        .note("Throughput counts wire bytes (headers included, as NS-2 does); goodput counts payload. Loss rate is (sent − received)/sent over the measurement window; PDR is received/generated over the whole run. Definitions: docs/metrics.md.");

    let bin = s.sample_interval.as_secs_f64();
    let mut thr = LineChart::new("Throughput per flow", "time (s)", "throughput (Mb/s)").step(true);
    for f in &s.flows {
        thr = thr.series(&f.name, series(rows, "throughput_bps", &f.name, 1e-6));
    }
    page.section("Throughput over time").figure(
        &thr,
        format!("Wire bits received per {} s bin.", fmt_num(bin)),
    );

    let mut cdf = DistributionChart::new("End-to-end delay", "delay (ms)", DistributionKind::Cdf);
    for (f, r) in s.flows.iter().zip(&out.results.flows) {
        let pts: Vec<(f64, f64)> = (0..=100)
            .filter_map(|i| {
                let q = i as f64 / 100.0;
                r.forward
                    .delay
                    .quantile(q)
                    .map(|d| (q, d.as_secs_f64() * 1e3))
            })
            .collect();
        if !pts.is_empty() {
            cdf = cdf.quantiles(&f.name, pts);
        }
    }
    page.section("Delay distribution").figure(&cdf, "Cumulative distribution of one-way delay of the packets received in the measurement window (HDR histogram, 0.1% resolution).");

    // Bottleneck queues: the busiest link directions by mean occupancy.
    let mut busy: Vec<(f64, String)> = summary
        .links
        .iter()
        .filter(|l| l.queue_mean_packets > 0.01)
        .map(|l| {
            let arrow = if l.direction == "reverse" { "<" } else { ">" };
            (l.queue_mean_packets, format!("{}{}", l.name, arrow))
        })
        .collect();
    busy.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    busy.truncate(4);
    let queues = page.section("Bottleneck queues");
    if busy.is_empty() {
        queues.paragraph("No queue ever held a waiting packet.");
    } else {
        let mut q = LineChart::new(
            "Queue occupancy",
            "time (s)",
            "waiting packets (time-averaged per bin)",
        )
        .step(true);
        for (_, subject) in &busy {
            q = q.series(subject.clone(), series(rows, "queue_packets", subject, 1.0));
        }
        queues.figure(
            &q,
            "The busiest link directions ('>' from → to, '<' to → from).",
        );
    }

    let tfrc: Vec<&str> = s
        .flows
        .iter()
        .filter(|f| f.kind.name() == "tfrc")
        .map(|f| f.name.as_str())
        .collect();
    if !tfrc.is_empty() {
        let sec = page.section("TFRC internals");
        for name in tfrc {
            let rates = LineChart::new(
                format!("{name}: allowed rate X and receive rate X_recv"),
                "time (s)",
                "Mb/s",
            )
            .series("X", series(rows, "x_bps", name, 1e-6))
            .series("X_recv", series(rows, "x_recv_bps", name, 1e-6));
            let p = LineChart::new(format!("{name}: loss event rate p"), "time (s)", "p")
                .series("p", series(rows, "p", name, 1.0));
            let r = LineChart::new(format!("{name}: smoothed RTT R"), "time (s)", "R (ms)")
                .series("R", series(rows, "rtt_s", name, 1e3));
            sec.figure(&rates, "Sampled at the end of each bin.")
                .figure(&p, "As reported in the last feedback.")
                .figure(&r, "");
        }
    }

    variant_section(&mut page, summary);

    let mut links = Table::new([
        "link",
        "direction",
        "from",
        "to",
        "packets",
        "utilisation",
        "drops",
        "queue mean",
        "queue max",
    ]);
    for l in &summary.links {
        let drops: u64 = l.dropped_by_cause.values().sum();
        links.push_row([
            Cell::new(&l.name),
            Cell::new(&l.direction),
            Cell::new(&l.from),
            Cell::new(&l.to),
            Cell::num(l.tx_packets as f64),
            Cell::num(l.utilisation),
            Cell::num(drops as f64).title(cause_text(&l.dropped_by_cause)),
            Cell::num(l.queue_mean_packets),
            Cell::num(l.queue_max_packets as f64),
        ]);
    }
    page.section("Links").table(links);

    let fair = page.section("Fairness");
    let mut j = Table::new(["kind", "Jain's index (throughput)"]);
    for (k, v) in &summary.fairness.jain {
        j.push_row([Cell::new(k), Cell::num(*v)]);
    }
    fair.table(j);
    if !summary.fairness.friendliness.is_empty() {
        let mut t = Table::new([
            "TFRC flow",
            "bottleneck",
            "TCP flows there",
            "TFRC / mean TCP throughput",
            "same-RTT TCP flows",
            "TFRC / same-RTT TCP",
            "aggregate TFRC / TCP (common interval)",
        ]);
        let ratio =
            |r: Option<f64>, none: &str| r.map(Cell::num).unwrap_or_else(|| Cell::new(none));
        for f in &summary.fairness.friendliness {
            t.push_row([
                Cell::new(&f.flow),
                Cell::new(&f.bottleneck),
                Cell::new(f.tcp_flows.join(", ")),
                ratio(f.ratio, "no TCP flow"),
                Cell::new(f.same_rtt_tcp_flows.join(", ")),
                ratio(f.same_rtt_ratio, "none"),
                match (f.aggregate_ratio, f.aggregate_interval_s) {
                    (Some(a), Some([t0, t1])) => Cell::new(format!("{} ({t0}–{t1} s)", fmt_num(a))),
                    _ => Cell::new("none"),
                },
            ]);
        }
        fair.table(t);
    }

    let mut acc = Table::new([
        "flow",
        "direction",
        "sent",
        "delivered",
        "dropped",
        "in flight",
    ]);
    for a in &summary.accounting {
        let dropped: u64 = a.dropped_by_cause.values().sum();
        acc.push_row([
            Cell::new(&a.flow),
            Cell::new(&a.direction),
            Cell::num(a.sent as f64),
            Cell::num(a.delivered as f64),
            Cell::num(dropped as f64).title(cause_text(&a.dropped_by_cause)),
            Cell::num(a.in_flight as f64),
        ]);
    }
    page.section("Packet accounting")
        .paragraph("Every packet is accounted for: sent = delivered + dropped + in flight, checked at the end of the run (whole run, warm-up included).")
        .table(acc);

    page.section("Scenario").pre(s.source.clone());
    page
}

fn cause_text(m: &BTreeMap<String, u64>) -> String {
    m.iter()
        .filter(|(_, n)| **n > 0)
        .map(|(c, n)| format!("{c}: {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The report's "Variant metrics" section: every TFRC flow's final state and variant
/// counters, each confusion matrix, and the RED queues' counters. Nothing when the run has no
/// TFRC flow and no RED queue.
fn variant_section(page: &mut report::Page, sum: &Summary) {
    use report::{Cell, Table};
    let red: Vec<&LinkSummary> = sum.links.iter().filter(|l| l.red.is_some()).collect();
    if sum.tfrc.is_empty() && red.is_empty() {
        return;
    }
    let sec = page.section("Variant metrics");
    sec.paragraph(
        "The seed-paper variants' counters (docs/metrics.md, \"Variant metrics\"; \
         docs/variants.md for each variant). TFRC values are the sender's and receiver's state \
         at the end of the run; counts cover the whole run.",
    );
    if !sum.tfrc.is_empty() {
        let mut t = Table::new([
            "TFRC flow",
            "variants",
            "X (Mb/s)",
            "p",
            "R (ms)",
            "TTL",
            "nofeedback expiries",
            "TTL notices",
            "protected sent",
            "RTO rescales",
            "loss events",
            "lost: congestion",
            "lost: wireless",
        ]);
        for f in &sum.tfrc {
            t.push_row([
                Cell::new(&f.flow),
                Cell::new(if f.variants.is_empty() {
                    format!("none ({})", f.profile)
                } else {
                    f.variants.join(", ")
                }),
                Cell::num(f.x_bps / 1e6),
                Cell::num(f.p),
                f.rtt_s.map_or(Cell::new("-"), |r| Cell::num(r * 1e3)),
                Cell::num(f64::from(f.ttl)),
                Cell::num(f.nofeedback_expiries as f64),
                Cell::num(f.ttl_notices as f64),
                Cell::num(f.protected_sent as f64),
                Cell::num(f.link_error_rescales as f64),
                Cell::num(f.loss_events as f64),
                Cell::num(f.congestion_losses as f64),
                Cell::num(f.wireless_losses as f64),
            ]);
        }
        sec.table(t);
    }
    for f in &sum.tfrc {
        let Some(c) = &f.confusion else {
            continue;
        };
        let mut t = Table::new([
            "true cause",
            "classified congestion",
            "classified wireless",
            "undeclared",
        ])
        .caption(format!(
            "{}: loss classification against the simulator's true drop causes, per lost \
                 data packet{}",
            f.flow,
            c.accuracy.map_or(String::new(), |a| format!(
                " (accuracy {})",
                report::fmt_num(a)
            ))
        ));
        for (name, r) in c.rows() {
            t.push_row([
                Cell::new(name),
                Cell::num(r.congestion as f64),
                Cell::num(r.wireless as f64),
                Cell::num(r.undeclared as f64),
            ]);
        }
        sec.table(t);
    }
    if !red.is_empty() {
        let mut t = Table::new([
            "RED link",
            "direction",
            "early drops",
            "forced drops",
            "overflow drops",
            "threshold moves (Q2)",
            "max_p increases",
            "max_p decreases",
            "final max_p",
            "final thresholds (packets)",
        ]);
        for l in red {
            let Some(r) = l.red else {
                continue;
            };
            t.push_row([
                Cell::new(&l.name),
                Cell::new(&l.direction),
                Cell::num(r.early_drops as f64),
                Cell::num(r.forced_avg_drops as f64),
                Cell::num(r.overflow_drops as f64),
                Cell::num(r.threshold_moves as f64),
                Cell::num(r.max_p_increases as f64),
                Cell::num(r.max_p_decreases as f64),
                Cell::num(r.max_p_final),
                Cell::new(format!(
                    "{} / {}",
                    report::fmt_num(r.min_th_final_packets),
                    report::fmt_num(r.max_th_final_packets)
                )),
            ]);
        }
        sec.table(t);
    }
}
