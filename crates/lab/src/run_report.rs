//! `report.html` of one run: the scenario, the per-flow table, throughput over time, delay
//! distributions, bottleneck queues, TFRC internals, links, fairness and packet accounting.

use std::collections::{BTreeMap, HashMap};

use crate::metrics::FlowMetrics;
use crate::runner::RunOutput;
use crate::summary::{LinkSummary, SeriesRow, Summary};
use report::{
    fmt_num, Cell, DistributionChart, DistributionKind, LineChart, Page, ScatterChart,
    ScatterPoint, Table,
};
use scenario::Scenario;

/// Flows drawn one by one in a chart (twelve colours, solid then dashed): a run with more
/// shows its first ones and says so; every series stays in `timeseries.csv`.
pub const CHART_FLOWS: usize = 24;
/// TFRC flows whose internals (rate, p, RTT) are charted.
pub const CHART_TFRC_FLOWS: usize = 8;
/// Rows of a per-flow or per-link table: a run with more shows the first (or busiest) ones
/// and says where the rest are.
pub const TABLE_ROWS: usize = 100;
/// Lines of the scenario file printed at the end of the report.
pub const SOURCE_LINES: usize = 300;
/// Distinct times marked on a time chart; past that, flows' starts and stops are left out.
pub const MARKED_TIMES: usize = 40;

/// Each (metric, subject) series of `rows`, scaled on request: built in one pass, so a report
/// is linear in the rows, however many flows it has.
struct SeriesIndex<'a> {
    by_key: HashMap<(&'a str, &'a str), Vec<usize>>,
    rows: &'a [SeriesRow],
}

impl<'a> SeriesIndex<'a> {
    fn new(rows: &'a [SeriesRow]) -> Self {
        let mut by_key: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
        for (i, r) in rows.iter().enumerate() {
            by_key
                .entry((r.metric.as_str(), r.subject.as_str()))
                .or_default()
                .push(i);
        }
        SeriesIndex { by_key, rows }
    }

    /// Points of one (metric, subject) series, scaled.
    fn series(&self, metric: &str, subject: &str, scale: f64) -> Vec<(f64, f64)> {
        self.by_key
            .get(&(metric, subject))
            .map_or_else(Vec::new, |ix| {
                ix.iter()
                    .map(|&i| (self.rows[i].time_s, self.rows[i].value * scale))
                    .collect()
            })
    }
}

/// "the first 24 of 10,000 flows" style note for a capped list.
fn first_of(shown: usize, total: usize, what: &str) -> String {
    format!(
        "the first {} of {} {what}",
        fmt_count(shown),
        fmt_count(total)
    )
}

/// An integer with thousands separators.
pub fn fmt_count(n: usize) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The per-flow table (also used by the sweep and reproduce reports).
pub fn flow_table(summary: &Summary) -> Table {
    flow_rows(&summary.flows)
}

/// The per-flow table of `flows`.
fn flow_rows(flows: &[FlowMetrics]) -> Table {
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
    for f in flows {
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

/// Marks where each flow starts and stops (a stop at the end of the run is no event) and where
/// links go down or up, on a time chart. Flows starting or stopping at one time share a mark
/// ("12 flows start"); past [`MARKED_TIMES`] distinct times the flows' marks are left out
/// ([`flow_marks`] says so in the caption).
fn with_events(mut chart: LineChart, s: &Scenario, marks: &FlowMarks) -> LineChart {
    for (at, label) in &marks.marks {
        chart = chart.marker(*at, label.clone());
    }
    // A capacity trace makes one `set` event per row: past a dozen, markers would hide the plot.
    let sets = s
        .events
        .iter()
        .filter(|e| matches!(e.action, scenario::LinkAction::Set(_)))
        .count();
    for e in &s.events {
        if sets > 12 && matches!(e.action, scenario::LinkAction::Set(_)) {
            continue;
        }
        let name = s.links.get(e.link).map_or("link", |l| l.name.as_str());
        let what = match &e.action {
            scenario::LinkAction::Down => "down".to_string(),
            scenario::LinkAction::Up => "up".to_string(),
            scenario::LinkAction::Set(set) => {
                let mut parts = Vec::new();
                if let Some(b) = set.bandwidth_bps {
                    parts.push(format!("{} Mb/s", report::fmt_num(b / 1e6)));
                }
                if let Some(d) = set.delay {
                    parts.push(format!("{} ms", report::fmt_num(d.as_secs_f64() * 1e3)));
                }
                if let Some(q) = set.queue_limit {
                    parts.push(format!("limit {q}"));
                }
                if let Some(p) = set.loss_rate {
                    parts.push(format!("loss {}", report::fmt_num(p)));
                }
                format!("set {}", parts.join(", "))
            }
        };
        chart = chart.marker(e.at.as_secs_f64(), format!("{name} {what}"));
    }
    chart
}

/// The flows' start and stop marks of the time charts, computed once per report.
struct FlowMarks {
    marks: Vec<(f64, String)>,
    /// Said in captions when the marks were left out.
    left_out: Option<String>,
}

/// Per time: the first few names of flows starting then and their count, the same for stops.
type MarksAt<'a> = BTreeMap<u64, (Vec<&'a str>, usize, Vec<&'a str>, usize)>;

fn flow_marks(s: &Scenario) -> FlowMarks {
    let end = s.duration.as_secs_f64();
    // (time, starts, stops) in time order, with the names of the first few.
    let mut at: MarksAt<'_> = BTreeMap::new();
    for f in &s.flows {
        let e = at.entry(f.start.as_nanos() as u64).or_default();
        e.1 += 1;
        if e.0.len() < 3 {
            e.0.push(&f.name);
        }
        if f.stop.as_secs_f64() < end {
            let e = at.entry(f.stop.as_nanos() as u64).or_default();
            e.3 += 1;
            if e.2.len() < 3 {
                e.2.push(&f.name);
            }
        }
    }
    if at.len() > MARKED_TIMES {
        return FlowMarks {
            marks: Vec::new(),
            left_out: Some(format!(
                "Flows start or stop at {} different times: not marked.",
                fmt_count(at.len())
            )),
        };
    }
    let text = |names: &[&str], n: usize, verb: &str| match n {
        0 => None,
        1 => Some(format!("{} {verb}s", names[0])),
        2 | 3 => Some(format!("{} {verb}", names.join(", "))),
        _ => Some(format!("{} flows {verb}", fmt_count(n))),
    };
    let mut marks = Vec::new();
    for (t, (starts, n_starts, stops, n_stops)) in &at {
        let x = *t as f64 / 1e9;
        if let Some(l) = text(starts, *n_starts, "start") {
            marks.push((x, l));
        }
        if let Some(l) = text(stops, *n_stops, "stop") {
            marks.push((x, l));
        }
    }
    FlowMarks {
        marks,
        left_out: None,
    }
}

/// Pantheon's throughput–delay plot: one point per flow at (mean one-way delay, throughput),
/// its whisker reaching to the 95th percentile delay. A series per flow up to [`CHART_FLOWS`]
/// flows; past that a series per kind, of the first [`CHART_POINTS`] flows.
pub fn throughput_delay_chart(summary: &Summary) -> ScatterChart {
    let mut c = ScatterChart::new(
        "Throughput against delay, per flow",
        "one-way delay (ms): mean, whisker to p95",
        "throughput (Mb/s)",
    );
    let point = |f: &FlowMetrics, label: String| ScatterPoint {
        x: f.delay_mean_s * 1e3,
        y: f.throughput_bps / 1e6,
        x_range: (f.delay_mean_s * 1e3, f.delay_p95_s * 1e3),
        label,
    };
    if summary.flows.len() <= CHART_FLOWS {
        for f in &summary.flows {
            c = c.series(&f.name, vec![point(f, f.kind.clone())]);
        }
        return c;
    }
    let mut by_kind: BTreeMap<&str, Vec<ScatterPoint>> = BTreeMap::new();
    for f in summary.flows.iter().take(CHART_POINTS) {
        by_kind
            .entry(&f.kind)
            .or_default()
            .push(point(f, f.name.clone()));
    }
    for (kind, points) in by_kind {
        c = c.series(kind, points);
    }
    c
}

/// Flows drawn as points when a chart has a series per kind.
pub const CHART_POINTS: usize = 2_000;

/// Build the run report. Linear in flows, links and time-series rows: per-flow charts and
/// tables stop at [`CHART_FLOWS`] and [`TABLE_ROWS`] (saying so and where the rest is), so a
/// run of 10⁴ flows has a report of the size of one of a hundred.
pub fn run_report(s: &Scenario, summary: &Summary, rows: &[SeriesRow], out: &RunOutput) -> Page {
    let index = SeriesIndex::new(rows);
    let marks = flow_marks(s);
    let mut page = Page::new(format!("tfrclab run: {}", s.name));
    let intro = page.intro();
    intro.paragraph(format!(
        "Seed {}, {} s simulated ({} s warm-up left out of the metrics), {} flows, {} events, {} packet-hops, {} s of wall-clock time.",
        summary.seed,
        fmt_num(summary.duration_s),
        fmt_num(summary.warmup_s),
        fmt_count(summary.flows.len()),
        summary.events,
        summary.packet_hops,
        fmt_num(summary.wall_s)
    ));
    if let Some(d) = &s.description {
        intro.paragraph(d.clone());
    }

    let n_flows = s.flows.len();
    let flows_sec = page.section("Flows");
    if summary.flows.len() > TABLE_ROWS {
        flows_sec.table(kind_table(summary)).note(format!(
            "Per flow kind. The table below shows {}; every flow is in flows.csv and summary.json.",
            first_of(TABLE_ROWS, summary.flows.len(), "flows")
        ));
    }
    flows_sec.table(flow_rows(&summary.flows[..summary.flows.len().min(TABLE_ROWS)]))
        .note("Throughput counts wire bytes (headers included, as NS-2 does); goodput counts payload. Loss rate is (sent − received)/sent over the measurement window; PDR is received/generated over the whole run. Definitions: docs/metrics.md.");

    let charted = n_flows.min(CHART_FLOWS);
    let which = if n_flows > CHART_FLOWS {
        format!(
            " Drawn: {}; every series is in timeseries.csv.",
            first_of(charted, n_flows, "flows")
        )
    } else {
        String::new()
    };
    let marked = match &marks.left_out {
        Some(l) => format!(" {l}"),
        None => String::new(),
    };
    let bin = s.sample_interval.as_secs_f64();
    let mut thr = LineChart::new("Throughput per flow", "time (s)", "throughput (Mb/s)").step(true);
    for f in &s.flows[..charted] {
        thr = thr.series(&f.name, index.series("throughput_bps", &f.name, 1e-6));
    }
    let thr = with_events(thr, s, &marks);
    let scatter_note = if n_flows > CHART_FLOWS {
        format!(
            " A colour per flow kind; {}.",
            if n_flows > CHART_POINTS {
                format!("drawn: {}", first_of(CHART_POINTS, n_flows, "flows"))
            } else {
                "hover a point for its flow".to_string()
            }
        )
    } else {
        String::new()
    };
    page.section("Throughput over time")
        .figure(
            &thr,
            format!(
                "Wire bits received per {} s bin. Dotted lines: flows starting or stopping, links going down or up.{which}{marked}",
                fmt_num(bin)
            ),
        )
        .figure(
            &throughput_delay_chart(summary),
            format!("Each flow's throughput against its mean one-way delay (whisker: to the 95th percentile), as Pantheon plots schemes: up and left is better.{scatter_note}"),
        );

    let mut cdf = DistributionChart::new("End-to-end delay", "delay (ms)", DistributionKind::Cdf);
    for (f, r) in s.flows.iter().zip(&out.results.flows).take(charted) {
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
    page.section("Delay distribution").figure(&cdf, format!("Cumulative distribution of one-way delay of the packets received in the measurement window (HDR histogram, 0.1% resolution).{which}"));

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
            q = q.series(subject.clone(), index.series("queue_packets", subject, 1.0));
        }
        let q = with_events(q, s, &marks);
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
        if tfrc.len() > CHART_TFRC_FLOWS {
            sec.paragraph(format!(
                "Charted: {}; every flow's X, X_recv, p and R are in timeseries.csv.",
                first_of(CHART_TFRC_FLOWS, tfrc.len(), "TFRC flows")
            ));
        }
        for name in tfrc.into_iter().take(CHART_TFRC_FLOWS) {
            let rates = LineChart::new(
                format!("{name}: allowed rate X and receive rate X_recv"),
                "time (s)",
                "Mb/s",
            )
            .series("X", index.series("x_bps", name, 1e-6))
            .series("X_recv", index.series("x_recv_bps", name, 1e-6));
            let p = LineChart::new(format!("{name}: loss event rate p"), "time (s)", "p")
                .series("p", index.series("p", name, 1.0));
            let r = LineChart::new(format!("{name}: smoothed RTT R"), "time (s)", "R (ms)")
                .series("R", index.series("rtt_s", name, 1e3));
            let (rates, p, r) = (
                with_events(rates, s, &marks),
                with_events(p, s, &marks),
                with_events(r, s, &marks),
            );
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
    // Past TABLE_ROWS link directions, the busiest (most packets sent) in link order.
    let mut shown: Vec<&LinkSummary> = summary.links.iter().collect();
    if shown.len() > TABLE_ROWS {
        let mut by_busy: Vec<usize> = (0..shown.len()).collect();
        by_busy.sort_by(|&a, &b| {
            shown[b]
                .tx_packets
                .cmp(&shown[a].tx_packets)
                .then(a.cmp(&b))
        });
        by_busy.truncate(TABLE_ROWS);
        by_busy.sort_unstable();
        shown = by_busy.into_iter().map(|i| shown[i]).collect();
    }
    for l in &shown {
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
    let links_sec = page.section("Links");
    links_sec.table(links);
    if summary.links.len() > TABLE_ROWS {
        links_sec.note(format!(
            "The {} busiest of {} link directions (most packets sent), in link order; every one is in links.csv and summary.json.",
            fmt_count(TABLE_ROWS),
            fmt_count(summary.links.len())
        ));
    }

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
        let listed = |names: &[String], n: usize| {
            if n > names.len() {
                Cell::new(format!("{} flows", fmt_count(n)))
                    .title(format!("{}, …", names.join(", ")))
            } else {
                Cell::new(names.join(", "))
            }
        };
        let all = &summary.fairness.friendliness;
        for f in all.iter().take(TABLE_ROWS) {
            t.push_row([
                Cell::new(&f.flow),
                Cell::new(&f.bottleneck),
                listed(&f.tcp_flows, f.tcp_flow_count),
                ratio(f.ratio, "no TCP flow"),
                listed(&f.same_rtt_tcp_flows, f.same_rtt_tcp_flow_count),
                ratio(f.same_rtt_ratio, "none"),
                match (f.aggregate_ratio, f.aggregate_interval_s) {
                    (Some(a), Some([t0, t1])) => Cell::new(format!("{} ({t0}–{t1} s)", fmt_num(a))),
                    _ => Cell::new("none"),
                },
            ]);
        }
        fair.table(t);
        if all.len() > TABLE_ROWS {
            fair.note(format!(
                "Shown: {}; every one is in summary.json (fairness.friendliness).",
                first_of(TABLE_ROWS, all.len(), "TFRC flows")
            ));
        }
    }

    let mut acc = Table::new([
        "flow",
        "direction",
        "sent",
        "delivered",
        "dropped",
        "in flight",
    ]);
    let mut total = [0u64; 4];
    for (k, a) in summary.accounting.iter().enumerate() {
        let dropped: u64 = a.dropped_by_cause.values().sum();
        for (t, v) in total
            .iter_mut()
            .zip([a.sent, a.delivered, dropped, a.in_flight])
        {
            *t += v;
        }
        if k < TABLE_ROWS {
            acc.push_row([
                Cell::new(&a.flow),
                Cell::new(&a.direction),
                Cell::num(a.sent as f64),
                Cell::num(a.delivered as f64),
                Cell::num(dropped as f64).title(cause_text(&a.dropped_by_cause)),
                Cell::num(a.in_flight as f64),
            ]);
        }
    }
    let acc_sec = page.section("Packet accounting");
    acc_sec.paragraph("Every packet is accounted for: sent = delivered + dropped + in flight, checked at the end of the run (whole run, warm-up included).");
    if summary.accounting.len() > TABLE_ROWS {
        acc.push_row([
            Cell::new(format!("all {} flows", fmt_count(summary.flows.len()))),
            Cell::new("both"),
            Cell::num(total[0] as f64),
            Cell::num(total[1] as f64),
            Cell::num(total[2] as f64),
            Cell::num(total[3] as f64),
        ]);
        acc_sec.table(acc).note(format!(
            "Shown: {}, then the total of all; every row is in summary.json (accounting).",
            first_of(TABLE_ROWS, summary.accounting.len(), "rows")
        ));
    } else {
        acc_sec.table(acc);
    }

    let lines = s.source.lines().count();
    let scen = page.section("Scenario");
    if lines > SOURCE_LINES {
        let cut: String = s
            .source
            .lines()
            .take(SOURCE_LINES)
            .flat_map(|l| [l, "\n"])
            .collect();
        scen.pre(cut).note(format!(
            "The first {} of the file's {} lines.",
            fmt_count(SOURCE_LINES),
            fmt_count(lines)
        ));
    } else {
        scen.pre(s.source.clone());
    }
    page
}

/// Per flow kind: flows, their summed and mean throughput, mean loss rate and delay.
fn kind_table(summary: &Summary) -> Table {
    let mut t = Table::new([
        "kind",
        "flows",
        "throughput, all (Mb/s)",
        "throughput, mean (Mb/s)",
        "loss rate, mean",
        "delay mean, mean (ms)",
    ]);
    let mut by: BTreeMap<&str, (usize, f64, f64, f64)> = BTreeMap::new();
    for f in &summary.flows {
        let e = by.entry(&f.kind).or_default();
        e.0 += 1;
        e.1 += f.throughput_bps;
        e.2 += f.loss_rate;
        e.3 += f.delay_mean_s;
    }
    for (kind, (n, thr, loss, delay)) in by {
        let m = n.max(1) as f64;
        t.push_row([
            Cell::new(kind),
            Cell::num(n as f64),
            Cell::num(thr / 1e6),
            Cell::num(thr / m / 1e6),
            Cell::num(loss / m),
            Cell::num(delay / m * 1e3),
        ]);
    }
    t
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
        for f in sum.tfrc.iter().take(TABLE_ROWS) {
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
        if sum.tfrc.len() > TABLE_ROWS {
            sec.note(format!(
                "Shown: {}; every one is in summary.json (tfrc).",
                first_of(TABLE_ROWS, sum.tfrc.len(), "TFRC flows")
            ));
        }
    }
    for f in sum.tfrc.iter().take(CHART_TFRC_FLOWS) {
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
