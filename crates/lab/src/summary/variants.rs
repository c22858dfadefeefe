//! The variant metrics' summary types (`summary.json` `tfrc[]` and `links[].red`), built
//! from what [`crate::probes`] collected.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use tfrc::variants::VariantChoice;

use crate::probes::*;
use scenario::{FlowKind, Queue, Scenario, TfrcProfile};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_text_round_trips() {
        let c: VariantChoice = "Veno:threshold=2, k_to=0.5".parse().unwrap();
        assert_eq!(choice_text(&c), "veno:threshold=2,k_to=0.5");
        let back: VariantChoice = choice_text(&c).parse().unwrap();
        assert_eq!(back.params, c.params);
        assert_eq!(choice_text(&VariantChoice::new("simd")), "simd");
    }
}
