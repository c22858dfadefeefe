//! What a run leaves in the agents and queues that the seed-paper variants' metrics need
//! (`docs/variants.md`, `docs/metrics.md` "Variant metrics"): each TFRC flow's final sender
//! and receiver state, the loss classifier's decisions against the simulator's true drop
//! causes, and each RED queue's adaptation counters.
//!
//! The simulator's agents and queues are inspected once, after the run ([`collect`]); the
//! confusion matrix needs two per-packet records that only runs with a loss classifier keep
//! (the receiver's decision log and the simulator's drop causes by sequence number).

use std::collections::{HashMap, HashSet};

use netsim::agents::AnyAgent;
use netsim::{DropCause, FlowId, Simulator};
use serde::{Deserialize, Serialize};
use tfrc::{LossClass, LossDecision, ReceiverStatus, SenderStatus};

use scenario::Scenario;

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
    /// By flow index: the media flows' applications (`None` for other kinds).
    pub media: Vec<Option<MediaFinal>>,
}

/// A media flow's applications at the end of the run: the frames the sender produced and what
/// the receiver got of them (frame-level results come from both, `crate::media`).
#[derive(Clone, Debug)]
pub struct MediaFinal {
    /// Every frame the sender's source produced, skipped ones included.
    pub frames: Vec<media::sender::FrameRecord>,
    /// The sender application's counters.
    pub sender: media::sender::SenderCounters,
    /// What arrived of each frame.
    pub received: media::receiver::Reassembler,
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
    let media = flows
        .iter()
        .map(|&id| {
            let (Some(AnyAgent::MediaSender(tx)), Some(AnyAgent::MediaReceiver(rx))) =
                (sim.sender(id), sim.receiver(id))
            else {
                return None;
            };
            Some(MediaFinal {
                frames: tx.app().frames().to_vec(),
                sender: tx.app().counters(),
                received: rx.frames().clone(),
            })
        })
        .collect();
    Internals { tfrc, red, media }
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
}
