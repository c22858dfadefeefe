//! Frame-level results: what a viewer of the flow saw.
//!
//! Each frame the sender produced has a playout deadline, its capture time plus the playout
//! delay `D` (e.g. 400 ms). Its outcome is one of:
//!
//! - **on time**: every packet arrived by the deadline; the frame is shown;
//! - **late**: complete, but after the deadline;
//! - **incomplete**: some packets never arrived;
//! - **lost**: no packet arrived;
//! - **skipped**: the sender did not encode it (its send buffer was too old).
//!
//! Its delay is the arrival of its last packet minus its capture time (complete frames only).
//! Only on-time frames are shown; decoding dependencies between frames are not modelled (a
//! complete frame after a lost one is shown). A **freeze** is a run of frames not shown: it
//! starts at the playout time of its first frame and ends at the playout time of the next frame
//! shown (or of the last frame of the flow); the freeze time is the sum of their lengths.

use crate::receiver::Reassembler;
use crate::sender::FrameRecord;
use crate::{check, ConfigError, Nanos};

/// What became of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Complete by its deadline.
    OnTime,
    /// Complete after its deadline.
    Late,
    /// Some of its packets arrived, not all.
    Incomplete,
    /// None of its packets arrived.
    Lost,
    /// Never encoded.
    Skipped,
}

/// One frame's fate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameOutcome {
    /// Frame number.
    pub id: u32,
    /// Capture time.
    pub capture: Nanos,
    /// Size, bytes.
    pub size: u32,
    /// Key frame.
    pub key: bool,
    /// Last packet's arrival minus capture, when complete.
    pub delay: Option<Nanos>,
    /// The outcome.
    pub outcome: Outcome,
}

/// The outcome of every frame captured in `[from, to)`, in capture order.
pub fn outcomes(
    sent: &[FrameRecord],
    received: &Reassembler,
    deadline: Nanos,
    from: Nanos,
    to: Nanos,
) -> Result<Vec<FrameOutcome>, ConfigError> {
    check(deadline > 0, "deadline", "must be positive (e.g. 400 ms)")?;
    Ok(sent
        .iter()
        .filter(|r| r.frame.capture >= from && r.frame.capture < to)
        .map(|r| {
            let f = r.frame;
            let arrival = received.frame(f.id);
            let delay = arrival
                .filter(|a| a.complete())
                .map(|a| a.last.saturating_sub(f.capture));
            let outcome = match (r.skipped, arrival, delay) {
                (true, _, _) => Outcome::Skipped,
                (false, None, _) => Outcome::Lost,
                (false, Some(_), None) => Outcome::Incomplete,
                (false, Some(_), Some(d)) if d <= deadline => Outcome::OnTime,
                (false, Some(_), Some(_)) => Outcome::Late,
            };
            FrameOutcome {
                id: f.id,
                capture: f.capture,
                size: f.size,
                key: f.key,
                delay,
                outcome,
            }
        })
        .collect())
}

/// Frame-level summary of one flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameResults {
    /// Frames produced in the window.
    pub frames: u64,
    /// Shown in time.
    pub on_time: u64,
    /// Complete after the deadline.
    pub late: u64,
    /// Some packets missing.
    pub incomplete: u64,
    /// No packet arrived.
    pub lost: u64,
    /// Not encoded.
    pub skipped: u64,
    /// Mean delay of complete frames, seconds (NaN without any).
    pub mean_delay: f64,
    /// 95th percentile of the delay of complete frames, seconds (NaN without any).
    pub p95_delay: f64,
    /// Largest delay of a complete frame, seconds (NaN without any).
    pub max_delay: f64,
    /// Runs of frames not shown.
    pub freezes: u64,
    /// Their total length, seconds.
    pub freeze_time: f64,
}

impl FrameResults {
    /// Summarise `outcomes` (in capture order) for playout delay `deadline`.
    pub fn from_outcomes(outcomes: &[FrameOutcome], deadline: Nanos) -> FrameResults {
        let mut r = FrameResults {
            frames: outcomes.len() as u64,
            ..FrameResults::default()
        };
        let mut delays: Vec<f64> = Vec::with_capacity(outcomes.len());
        let mut freeze_start: Option<Nanos> = None;
        let mut freeze_ns: u64 = 0;
        for o in outcomes {
            match o.outcome {
                Outcome::OnTime => r.on_time += 1,
                Outcome::Late => r.late += 1,
                Outcome::Incomplete => r.incomplete += 1,
                Outcome::Lost => r.lost += 1,
                Outcome::Skipped => r.skipped += 1,
            }
            if let Some(d) = o.delay {
                delays.push(d as f64 / 1e9);
            }
            let playout = o.capture.saturating_add(deadline);
            match (o.outcome == Outcome::OnTime, freeze_start) {
                (true, Some(s)) => {
                    freeze_ns += playout.saturating_sub(s);
                    freeze_start = None;
                }
                (false, None) => {
                    freeze_start = Some(playout);
                    r.freezes += 1;
                }
                _ => {}
            }
        }
        if let (Some(s), Some(last)) = (freeze_start, outcomes.last()) {
            freeze_ns += last.capture.saturating_add(deadline).saturating_sub(s);
        }
        r.freeze_time = freeze_ns as f64 / 1e9;
        if delays.is_empty() {
            r.mean_delay = f64::NAN;
            r.p95_delay = f64::NAN;
            r.max_delay = f64::NAN;
        } else {
            r.mean_delay = delays.iter().sum::<f64>() / delays.len() as f64;
            delays.sort_by(f64::total_cmp);
            r.p95_delay = quantile_sorted(&delays, 0.95);
            r.max_delay = delays[delays.len() - 1];
        }
        r
    }

    /// Frames not shown (late, incomplete, lost or skipped) as a fraction of all frames.
    pub fn deadline_miss_ratio(&self) -> f64 {
        if self.frames == 0 {
            0.0
        } else {
            (self.frames - self.on_time) as f64 / self.frames as f64
        }
    }

    /// Frames of which not every packet arrived (incomplete or lost) as a fraction of the
    /// frames sent (skipped ones excluded).
    pub fn frame_loss_ratio(&self) -> f64 {
        let sent = self.frames - self.skipped;
        if sent == 0 {
            0.0
        } else {
            (self.incomplete + self.lost) as f64 / sent as f64
        }
    }
}

/// The `q` quantile of sorted `xs` by linear interpolation between closest ranks.
pub fn quantile_sorted(xs: &[f64], q: f64) -> f64 {
    match xs.len() {
        0 => f64::NAN,
        1 => xs[0],
        n => {
            let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            xs[lo] + (xs[hi] - xs[lo]) * (pos - lo as f64)
        }
    }
}
