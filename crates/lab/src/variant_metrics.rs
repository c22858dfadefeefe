//! Metrics of the seed-paper variants (`docs/variants.md`, `docs/metrics.md` "Variant
//! metrics"): each TFRC flow's final sender and receiver state (`summary.json` `tfrc[]`), the
//! loss classifier's confusion matrix against the simulator's true drop causes, and each RED
//! queue's adaptation counters (`links[].red`).
//!
//! The simulator's agents and queues are inspected once, after the run ([`collect`]); the
//! confusion matrix needs two per-packet records that only runs with a loss classifier keep
//! (the receiver's decision log and the simulator's drop causes by sequence number).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use netsim::agents::AnyAgent;
use netsim::{DropCause, FlowId, Simulator};
use serde::{Deserialize, Serialize};
use tfrc::variants::VariantChoice;
use tfrc::{LossClass, LossDecision, ReceiverStatus, SenderStatus};

use scenario::{FlowKind, Queue, Scenario, TfrcProfile};

/// A decided range longer than this is counted only up to it: a receiver never declares more
/// packets lost than were sent, so this only bounds the work on a corrupted log.
const MAX_RANGE: u64 = 1 << 26;

/// What the run left in the agents and queues that the variant metrics need.
#[derive(Clone, Debug, Default)]
pub struct Internals {
    /// By flow index: the TFRC flows' final state (`None` for other kinds).
    pub tfrc: Vec<Option<TfrcFinal>>,
    /// By simplex link id: the RED queues' final state (`None` for DropTail).
    pub red: Vec<Option<RedFinal>>,
}

/// A TFRC flow at the end of the run.
#[derive(Clone, Debug)]
pub struct TfrcFinal {
    /// The sender's status.
    pub sender: SenderStatus,
    /// The receiver's status.
    pub receiver: ReceiverStatus,
    /// The classifier's confusion matrix, when the run recorded decisions and drop causes.
    pub confusion: Option<Confusion>,
}

/// A RED queue at the end of the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedFinal {
    /// max_p (Adaptive RED and Q3 move it).
    pub max_p: f64,
    /// The min and max thresholds in the queue's units (bytes in byte mode; Q2 moves them).
    pub thresholds: (f64, f64),
    /// The hard limit in the same units, to convert the thresholds to packets.
    pub limit_units: f64,
}

/// Whether a scenario's runs record loss-classification decisions and true drop causes: when
/// any TFRC flow runs a loss classifier, every TFRC flow does, so that the baseline flows'
/// matrices (every loss classified congestion) sit next to the classifier's.
pub fn classifies(s: &Scenario) -> bool {
    s.flows
        .iter()
        .any(|f| f.uses(tfrc::variants::Variant::OwdClassifier))
}

/// Read the final state of every TFRC flow (`flows[i]` is scenario flow `i`) and RED queue.
pub fn collect(sim: &Simulator, flows: &[FlowId], links: usize) -> Internals {
    let tfrc = flows
        .iter()
        .map(|&id| {
            let (Some(AnyAgent::TfrcSender(tx)), Some(AnyAgent::TfrcReceiver(rx))) =
                (sim.sender(id), sim.receiver(id))
            else {
                return None;
            };
            Some(TfrcFinal {
                sender: tx.core().status(),
                receiver: rx.core().status(),
                confusion: sim
                    .drop_causes(id)
                    .map(|causes| confusion(rx.decisions(), causes)),
            })
        })
        .collect();
    let red = (0..links)
        .map(|l| {
            let r = sim.red(u32::try_from(l).ok()?)?;
            Some(RedFinal {
                max_p: r.max_p(),
                thresholds: r.thresholds(),
                limit_units: r.limit_units(),
            })
        })
        .collect();
    Internals { tfrc, red }
}

/// One row of the confusion matrix: the lost packets of one true cause, by the class the
/// receiver gave them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfusionRow {
    /// Classified congestion (they entered the loss history).
    pub congestion: u64,
    /// Classified wireless (kept out of the loss history, seed 002).
    pub wireless: u64,
    /// Dropped but never declared lost by the receiver (for example the last packets before
    /// the end of the run, or a flow that received nothing more).
    pub undeclared: u64,
}

/// Seed 002's classifier against the truth, counted per lost data packet over the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Confusion {
    /// True cause congestion: the simulator dropped the packet at a queue (`queue`: full,
    /// `aqm`: RED's early drop).
    pub congestion: ConfusionRow,
    /// True cause wireless: a link error (`link`: a loss model, or a wireless frame out of
    /// retries).
    pub wireless: ConfusionRow,
    /// Dropped for TTL expiry (seed 000 E5's cause, neither congestion nor a link error).
    pub ttl: ConfusionRow,
    /// Dropped on a link that was down or had no route.
    pub down: ConfusionRow,
    /// Declared lost but never dropped: the packet arrived after its loss was declared
    /// (reordering by a route change). `undeclared` is always 0 here.
    pub not_dropped: ConfusionRow,
    /// Correctly classified ÷ classified, over the congestion and wireless rows; `None`
    /// when no such packet was classified.
    pub accuracy: Option<f64>,
}

/// The confusion matrix of `decisions` (the receiver's, oldest first) against `causes` (the
/// simulator's true cause of each dropped data sequence number).
pub fn confusion(decisions: &[LossDecision], causes: &HashMap<u64, DropCause>) -> Confusion {
    let mut m = Confusion::default();
    let mut decided: HashSet<u64> = HashSet::new();
    for d in decisions {
        let hi = d.hi.min(d.lo.saturating_add(MAX_RANGE));
        for seq in d.lo..=hi {
            decided.insert(seq);
            let row = match causes.get(&seq) {
                Some(c) => m.row_mut(*c),
                None => &mut m.not_dropped,
            };
            match d.class {
                LossClass::Congestion => row.congestion += 1,
                LossClass::Wireless => row.wireless += 1,
            }
        }
    }
    for (seq, c) in causes {
        if !decided.contains(seq) {
            m.row_mut(*c).undeclared += 1;
        }
    }
    let right = m.congestion.congestion + m.wireless.wireless;
    let all = m.congestion.congestion
        + m.congestion.wireless
        + m.wireless.congestion
        + m.wireless.wireless;
    m.accuracy = (all > 0).then(|| right as f64 / all as f64);
    m
}

impl Confusion {
    fn row_mut(&mut self, c: DropCause) -> &mut ConfusionRow {
        match c {
            DropCause::Queue | DropCause::Aqm => &mut self.congestion,
            DropCause::Link => &mut self.wireless,
            DropCause::Ttl => &mut self.ttl,
            DropCause::Down => &mut self.down,
        }
    }

    /// The rows with their names, in report order.
    pub fn rows(&self) -> [(&'static str, &ConfusionRow); 5] {
        [
            ("congestion (queue, aqm)", &self.congestion),
            ("wireless (link)", &self.wireless),
            ("ttl", &self.ttl),
            ("down", &self.down),
            ("not dropped", &self.not_dropped),
        ]
    }
}

/// `summary.json` `tfrc[]`: one TFRC flow's final state and variant counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TfrcSummary {
    /// The flow's name.
    pub flow: String,
    /// `rfc5348` or `ns2`.
    pub profile: String,
    /// The flow's `variants`, normalised (`name` or `name:param=value,...`).
    pub variants: Vec<String>,
    /// The sender's allowed rate X at the end, bit/s.
    pub x_bps: f64,
    /// X_recv of the last feedback, bit/s.
    pub x_recv_bps: f64,
    /// The loss event rate p of the last feedback.
    pub p: f64,
    /// The smoothed RTT R, seconds (`None`: never measured).
    pub rtt_s: Option<f64>,
    /// t_RTO, seconds.
    pub t_rto_s: f64,
    /// The TTL the next data packet would carry (seed 000 E5 moves it).
    pub ttl: u8,
    /// Data packets sent (whole run).
    pub packets_sent: u64,
    /// Feedback packets the sender processed.
    pub feedbacks: u64,
    /// Nofeedback timer expiries (each halves the rate).
    pub nofeedback_expiries: u64,
    /// Time-exceeded notices the sender received (E5).
    pub ttl_notices: u64,
    /// Data packets the protection policy selected (E6).
    pub protected_sent: u64,
    /// Feedbacks whose link-error report rescaled t_RTO (E2).
    pub link_error_rescales: u64,
    /// The Veno backlog N of the last feedback, packets (V1/V3; `None` before enough samples
    /// or without a backlog rule).
    pub backlog: Option<f64>,
    /// Whether the last feedback judged the losses random and used the random-loss equation
    /// (V1/V3).
    pub random_losses: bool,
    /// Loss events the receiver recorded.
    pub loss_events: u64,
    /// Packets the receiver declared lost (late arrivals taken back).
    pub lost_packets: u64,
    /// Of those, classified congestion (all of them without a classifier).
    pub congestion_losses: u64,
    /// Of those, classified wireless (seed 002).
    pub wireless_losses: u64,
    /// The classifier's confusion matrix, when the scenario runs a loss classifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confusion: Option<Confusion>,
}

/// `summary.json` `links[].red`: a RED queue's counters over the whole run and its final
/// adaptive state.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RedSummary {
    /// Probabilistic (early) drops.
    pub early_drops: u64,
    /// Drops because the average exceeded the hard ceiling.
    pub forced_avg_drops: u64,
    /// Drops because the queue was at its hard limit.
    pub overflow_drops: u64,
    /// ECN marks instead of drops.
    pub marks: u64,
    /// Q2: arrivals that moved the thresholds.
    pub threshold_moves: u64,
    /// Adaptive RED or Q3: max_p increases.
    pub max_p_increases: u64,
    /// Adaptive RED or Q3: max_p decreases.
    pub max_p_decreases: u64,
    /// max_p at the end.
    pub max_p_final: f64,
    /// The min threshold at the end, packets (of `mean_pktsize` bytes in byte mode).
    pub min_th_final_packets: f64,
    /// The max threshold at the end, packets.
    pub max_th_final_packets: f64,
}

/// A variant choice as text: `name` or `name:param=value,...` (the form scenario files use).
pub fn choice_text(c: &VariantChoice) -> String {
    let mut out = c.name.trim().to_ascii_lowercase();
    for (i, (k, v)) in c.params.iter().enumerate() {
        out.push(if i == 0 { ':' } else { ',' });
        let _ = write!(out, "{}={v}", k.trim());
    }
    out
}

/// `tfrc[]` of a run: every TFRC flow, in scenario order.
pub fn tfrc_summaries(s: &Scenario, internals: &Internals) -> Vec<TfrcSummary> {
    s.flows
        .iter()
        .zip(&internals.tfrc)
        .filter_map(|(f, t)| {
            let t = t.as_ref()?;
            let FlowKind::Tfrc {
                profile, variants, ..
            } = &f.kind
            else {
                return None;
            };
            let (tx, rx) = (&t.sender, &t.receiver);
            Some(TfrcSummary {
                flow: f.name.clone(),
                profile: match profile {
                    TfrcProfile::Rfc5348 => "rfc5348",
                    TfrcProfile::Ns2 => "ns2",
                }
                .to_string(),
                variants: variants.iter().map(choice_text).collect(),
                x_bps: tx.x * 8.0,
                x_recv_bps: tx.x_recv * 8.0,
                p: tx.p,
                rtt_s: tx.rtt.map(|r| r.as_secs_f64()),
                t_rto_s: tx.t_rto.as_secs_f64(),
                ttl: tx.ttl,
                packets_sent: tx.packets_sent,
                feedbacks: tx.feedbacks,
                nofeedback_expiries: tx.nofeedback_expiries,
                ttl_notices: tx.ttl_exceeded,
                protected_sent: tx.protected_sent,
                link_error_rescales: tx.link_error_rescales,
                backlog: tx.backlog,
                random_losses: tx.random_losses,
                loss_events: rx.loss_events,
                lost_packets: rx.lost_packets,
                congestion_losses: rx.congestion_losses,
                wireless_losses: rx.wireless_losses,
                confusion: t.confusion,
            })
        })
        .collect()
}

/// `links[].red` of simplex link `id` of scenario link `link`, if its queue is RED.
pub fn red_summary(
    s: &Scenario,
    link: usize,
    counters: Option<netsim::queue::RedCounters>,
    last: Option<&RedFinal>,
) -> Option<RedSummary> {
    let c = counters?;
    let last = last?;
    // Thresholds in packets: the queue's units are `limit_units / limit` per packet.
    let limit = match s.links.get(link).map(|l| &l.queue) {
        Some(Queue::Red { limit, .. }) => f64::from(*limit),
        _ => 0.0,
    };
    let per_packet = if limit > 0.0 && last.limit_units > 0.0 {
        last.limit_units / limit
    } else {
        1.0
    };
    Some(RedSummary {
        early_drops: c.early_drops,
        forced_avg_drops: c.forced_avg_drops,
        overflow_drops: c.overflow_drops,
        marks: c.marks,
        threshold_moves: c.threshold_moves,
        max_p_increases: c.max_p_increases,
        max_p_decreases: c.max_p_decreases,
        max_p_final: last.max_p,
        min_th_final_packets: last.thresholds.0 / per_packet,
        max_th_final_packets: last.thresholds.1 / per_packet,
    })
}

/// The variant metrics of a run as text for `tfrclab run`: when a flow runs a variant, a line
/// per TFRC flow; each confusion matrix; each RED queue whose variant adapted it.
pub fn text(sum: &crate::summary::Summary) -> String {
    let tfrc = &sum.tfrc;
    let red: Vec<(String, RedSummary)> = sum
        .links
        .iter()
        .filter_map(|l| Some((format!("{} {}", l.name, l.direction), l.red?)))
        .collect();
    let mut out = String::new();
    let any_variant = tfrc.iter().any(|t| !t.variants.is_empty());
    for t in tfrc.iter().filter(|_| any_variant) {
        let v = if t.variants.is_empty() {
            "(none)".to_string()
        } else {
            t.variants.join(" ")
        };
        let _ = writeln!(
            out,
            "tfrc {}: variants {v}; X {:.4} Mb/s, p {:.5}, R {}, TTL {}, nofeedback {}, \
             loss events {}, lost {} (congestion {}, wireless {}), notices {}, protected {}, \
             RTO rescales {}",
            t.flow,
            t.x_bps / 1e6,
            t.p,
            t.rtt_s
                .map_or("-".to_string(), |r| format!("{:.1} ms", r * 1e3)),
            t.ttl,
            t.nofeedback_expiries,
            t.loss_events,
            t.lost_packets,
            t.congestion_losses,
            t.wireless_losses,
            t.ttl_notices,
            t.protected_sent,
            t.link_error_rescales,
        );
    }
    for t in tfrc {
        let Some(c) = &t.confusion else {
            continue;
        };
        let _ = writeln!(
            out,
            "confusion matrix of {} (lost packets; rows: true cause, columns: class):",
            t.flow
        );
        let _ = writeln!(
            out,
            "  {:<24} {:>10} {:>10} {:>10}",
            "", "congestion", "wireless", "undeclared"
        );
        for (name, r) in c.rows() {
            let _ = writeln!(
                out,
                "  {name:<24} {:>10} {:>10} {:>10}",
                r.congestion, r.wireless, r.undeclared
            );
        }
        if let Some(a) = c.accuracy {
            let _ = writeln!(out, "  accuracy {a:.4}");
        }
    }
    for (name, r) in &red {
        if r.threshold_moves + r.max_p_increases + r.max_p_decreases == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "red {name}: early drops {}, threshold moves {}, max_p +{} -{} (final {:.4}), \
             thresholds {:.2}/{:.2} packets",
            r.early_drops,
            r.threshold_moves,
            r.max_p_increases,
            r.max_p_decreases,
            r.max_p_final,
            r.min_th_final_packets,
            r.max_th_final_packets
        );
    }
    out
}

/// The report's "Variant metrics" section: every TFRC flow's final state and variant
/// counters, each confusion matrix, and the RED queues' counters. Nothing when the run has no
/// TFRC flow and no RED queue.
pub fn report_section(page: &mut report::Page, sum: &crate::summary::Summary) {
    use report::{Cell, Table};
    let red: Vec<&crate::summary::LinkSummary> =
        sum.links.iter().filter(|l| l.red.is_some()).collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn d(lo: u64, hi: u64, class: LossClass) -> LossDecision {
        LossDecision { lo, hi, class }
    }

    /// Every lost packet lands in the row of its true cause and the column of its class;
    /// drops the receiver never declared are `undeclared`; declared losses the simulator never
    /// dropped are `not dropped`.
    #[test]
    fn confusion_by_hand() {
        let causes: HashMap<u64, DropCause> = [
            (3, DropCause::Queue),
            (4, DropCause::Aqm),
            (7, DropCause::Link),
            (8, DropCause::Link),
            (9, DropCause::Link),
            (12, DropCause::Ttl),
            (20, DropCause::Down),
            (30, DropCause::Queue),
        ]
        .into_iter()
        .collect();
        let decisions = [
            d(3, 4, LossClass::Wireless),
            d(7, 8, LossClass::Wireless),
            d(9, 9, LossClass::Congestion),
            d(12, 12, LossClass::Congestion),
            d(15, 15, LossClass::Wireless),
            d(20, 20, LossClass::Congestion),
        ];
        let m = confusion(&decisions, &causes);
        let row = |c, w, u| ConfusionRow {
            congestion: c,
            wireless: w,
            undeclared: u,
        };
        assert_eq!(m.congestion, row(0, 2, 1));
        assert_eq!(m.wireless, row(1, 2, 0));
        assert_eq!(m.ttl, row(1, 0, 0));
        assert_eq!(m.down, row(1, 0, 0));
        assert_eq!(m.not_dropped, row(0, 1, 0));
        // Right: 0 + 2 of 0 + 2 + 1 + 2 classified.
        assert_eq!(m.accuracy, Some(0.4));
        assert_eq!(confusion(&[], &HashMap::new()).accuracy, None);
    }

    #[test]
    fn choice_text_round_trips() {
        let c: VariantChoice = "Veno:threshold=2, k_to=0.5".parse().unwrap();
        assert_eq!(choice_text(&c), "veno:threshold=2,k_to=0.5");
        let back: VariantChoice = choice_text(&c).parse().unwrap();
        assert_eq!(back.params, c.params);
        assert_eq!(choice_text(&VariantChoice::new("simd")), "simd");
    }
}
