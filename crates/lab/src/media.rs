//! Media flows' metrics: frame-level results and the RFC 8868 §3 measures computed from a run
//! (`docs/media.md` defines each one).
//!
//! - frame-level results per media flow (`media::results`): frames on time, late, lost,
//!   skipped, frame delay, freezes, for the flow's playout deadline;
//! - rate series at the statistics bin (the RFC 8867 suite uses 200 ms), and the same rates
//!   averaged over longer windows;
//! - queueing delay per packet: its one-way delay minus the smallest one-way delay of the flow
//!   (the propagation and serialisation every packet pays);
//! - fairness ratios over windows (RFC 8868's 1, 5 and 20 s against its [1/3, 3] bound);
//! - convergence time after an event, and the oscillation (coefficient of variation) of a rate.

use serde::{Deserialize, Serialize};

use netsim::FlowRecorder;
use scenario::{FlowKind, Scenario};

use crate::runner::RunOutput;

/// The RFC 8868 fairness bound: each flow's rate within a factor 3 of the others'.
pub const FAIRNESS_BOUND: f64 = 3.0;

/// One media flow's frame-level results, in `summary.json` `media[]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MediaSummary {
    /// Flow name.
    pub flow: String,
    /// Controller name (`tfrc`).
    pub controller: String,
    /// Playout deadline, seconds.
    pub deadline_s: f64,
    /// Frames produced in the measurement window (capture time in `[warmup, duration)`).
    pub frames: u64,
    /// Complete by the deadline (shown).
    pub on_time: u64,
    /// Complete after the deadline.
    pub late: u64,
    /// Some packets missing.
    pub incomplete: u64,
    /// No packet arrived.
    pub lost: u64,
    /// Not encoded: the send buffer was older than the deadline.
    pub skipped: u64,
    /// Frames not shown ÷ frames.
    pub deadline_miss_ratio: f64,
    /// Frames incomplete or lost ÷ frames sent.
    pub frame_loss_ratio: f64,
    /// Mean delay of complete frames (capture to last packet), seconds.
    pub frame_delay_mean_s: f64,
    /// 95th percentile of the frame delay, seconds.
    pub frame_delay_p95_s: f64,
    /// Runs of frames not shown.
    pub freezes: u64,
    /// Their total length, seconds.
    pub freeze_s: f64,
    /// Freeze time ÷ the window's length.
    pub freeze_ratio: f64,
}

/// Frame-level results of every media flow of the run, over the measurement window.
pub fn media_summaries(s: &Scenario, out: &RunOutput) -> Vec<MediaSummary> {
    let from = nanos(s.warmup);
    let to = nanos(s.duration);
    s.flows
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let FlowKind::Media {
                controller,
                deadline,
                ..
            } = &f.kind
            else {
                return None;
            };
            let m = out.internals.media.get(i)?.as_ref()?;
            let d = nanos(*deadline);
            let o = media::results::outcomes(&m.frames, &m.received, d, from, to).ok()?;
            let r = media::results::FrameResults::from_outcomes(&o, d);
            let window = (s.duration - s.warmup).as_secs_f64();
            Some(MediaSummary {
                flow: f.name.clone(),
                controller: controller.name().to_string(),
                deadline_s: deadline.as_secs_f64(),
                frames: r.frames,
                on_time: r.on_time,
                late: r.late,
                incomplete: r.incomplete,
                lost: r.lost,
                skipped: r.skipped,
                deadline_miss_ratio: r.deadline_miss_ratio(),
                frame_loss_ratio: r.frame_loss_ratio(),
                frame_delay_mean_s: r.mean_delay,
                frame_delay_p95_s: r.p95_delay,
                freezes: r.freezes,
                freeze_s: r.freeze_time,
                freeze_ratio: if window > 0.0 {
                    r.freeze_time / window
                } else {
                    0.0
                },
            })
        })
        .collect()
}

fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Which rate of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// Wire bits sent by the source.
    Sent,
    /// Wire bits delivered to the receiver.
    Received,
    /// Payload bits delivered (goodput).
    Goodput,
}

/// A flow's rate per statistics bin, bit/s, over the whole run.
pub fn rate_series(rec: &FlowRecorder, which: Rate) -> Vec<f64> {
    let bin = rec.bin_width().as_secs_f64();
    let bytes = match which {
        Rate::Sent => rec.sent_series(),
        Rate::Received => rec.received_series(),
        Rate::Goodput => rec.goodput_series(),
    };
    bytes.iter().map(|&b| b as f64 * 8.0 / bin).collect()
}

/// The mean of `series` (one value per `bin` seconds from 0) over `[from, to)` seconds, bins
/// counted by their start; NaN when no bin falls in it.
pub fn mean_over(series: &[f64], bin: f64, from: f64, to: f64) -> f64 {
    let (a, b) = bin_range(series.len(), bin, from, to);
    if a >= b {
        return f64::NAN;
    }
    series[a..b].iter().sum::<f64>() / (b - a) as f64
}

fn bin_range(len: usize, bin: f64, from: f64, to: f64) -> (usize, usize) {
    // Small tolerance: bin starts are multiples of `bin` computed in floating point.
    let a = ((from / bin) - 1e-9).ceil().max(0.0) as usize;
    let b = (((to / bin) - 1e-9).ceil().max(0.0) as usize).min(len);
    (a.min(len), b)
}

/// Means of `series` over consecutive windows of `window` seconds covering `[from, to)` (a
/// last partial window is dropped).
pub fn window_means(series: &[f64], bin: f64, window: f64, from: f64, to: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut t = from;
    while t + window <= to + 1e-9 {
        out.push(mean_over(series, bin, t, t + window));
        t += window;
    }
    out
}

/// Fairness of flows over windows of one length.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowFairness {
    /// The window, seconds.
    pub window_s: f64,
    /// Windows counted.
    pub windows: usize,
    /// Fraction of them in which every pair of flows' rates is within [1/3, 3].
    pub within_bound: f64,
    /// The largest ratio between two flows' rates in any window (∞ when a flow got nothing).
    pub worst_ratio: f64,
}

/// Fairness ratios of `flows` (rate series on one bin width) over windows of `window` seconds
/// in `[from, to)`.
pub fn fairness(flows: &[&[f64]], bin: f64, window: f64, from: f64, to: f64) -> WindowFairness {
    let per_flow: Vec<Vec<f64>> = flows
        .iter()
        .map(|s| window_means(s, bin, window, from, to))
        .collect();
    let windows = per_flow.iter().map(Vec::len).min().unwrap_or(0);
    let mut within = 0;
    let mut worst: f64 = 1.0;
    for w in 0..windows {
        let rates: Vec<f64> = per_flow.iter().map(|f| f[w]).collect();
        let hi = rates.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lo = rates.iter().cloned().fold(f64::INFINITY, f64::min);
        let ratio = if lo > 0.0 { hi / lo } else { f64::INFINITY };
        worst = worst.max(ratio);
        if ratio <= FAIRNESS_BOUND {
            within += 1;
        }
    }
    WindowFairness {
        window_s: window,
        windows,
        within_bound: if windows == 0 {
            f64::NAN
        } else {
            within as f64 / windows as f64
        },
        worst_ratio: if windows == 0 { f64::NAN } else { worst },
    }
}

/// Per delivered packet: (arrival time s, queueing delay s), the queueing delay being the
/// packet's one-way delay minus the flow's smallest. Needs a run with `record_delays`.
pub fn queueing_delays(rec: &FlowRecorder) -> Vec<(f64, f64)> {
    let base = rec.delays().iter().map(|&(_, d)| d).min();
    let Some(base) = base else {
        return Vec::new();
    };
    rec.delays()
        .iter()
        .map(|&(t, d)| (t.as_secs_f64(), (d - base).as_secs_f64()))
        .collect()
}

/// The `q` quantile of the values of `samples` whose time is in `[from, to)`.
pub fn quantile_between(samples: &[(f64, f64)], q: f64, from: f64, to: f64) -> f64 {
    let mut v: Vec<f64> = samples
        .iter()
        .filter(|(t, _)| *t >= from && *t < to)
        .map(|&(_, x)| x)
        .collect();
    v.sort_by(f64::total_cmp);
    media::results::quantile_sorted(&v, q)
}

/// Mean of `samples` per bin of `bin` seconds over `[0, end)`, NaN for empty bins.
pub fn binned_mean(samples: &[(f64, f64)], bin: f64, end: f64) -> Vec<f64> {
    let n = (end / bin).ceil().max(0.0) as usize;
    let mut sum = vec![0.0; n];
    let mut count = vec![0u32; n];
    for &(t, x) in samples {
        let i = (t / bin) as usize;
        if i < n {
            sum[i] += x;
            count[i] += 1;
        }
    }
    sum.iter()
        .zip(&count)
        .map(|(s, &c)| if c > 0 { s / f64::from(c) } else { f64::NAN })
        .collect()
}

/// Convergence time after an event at `at` seconds: how long until the rate, averaged over
/// `smooth` seconds, first reaches `[lo, hi]` and stays there for `hold` seconds; `None` if it
/// never does before `until`.
pub fn convergence_time(
    series: &[f64],
    bin: f64,
    at: f64,
    (lo, hi): (f64, f64),
    smooth: f64,
    hold: f64,
    until: f64,
) -> Option<f64> {
    let k = ((smooth / bin).round() as usize).max(1);
    let need = ((hold / bin).round() as usize).max(1);
    let (a, b) = bin_range(series.len(), bin, at, until);
    let mut run = 0usize;
    let mut start = None;
    for i in a..b {
        let lo_i = (i + 1).saturating_sub(k).max(a);
        let m = series[lo_i..=i].iter().sum::<f64>() / (i + 1 - lo_i) as f64;
        if (lo..=hi).contains(&m) {
            if run == 0 {
                start = Some(i);
            }
            run += 1;
            if run >= need {
                return start.map(|s| ((s + 1) as f64 * bin - at).max(0.0));
            }
        } else {
            run = 0;
        }
    }
    None
}

/// Coefficient of variation (standard deviation ÷ mean) of `series` over `[from, to)`.
pub fn oscillation(series: &[f64], bin: f64, from: f64, to: f64) -> f64 {
    let (a, b) = bin_range(series.len(), bin, from, to);
    if b <= a + 1 {
        return f64::NAN;
    }
    let xs = &series[a..b];
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    if mean <= 0.0 {
        return f64::NAN;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
    var.sqrt() / mean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_fairness() {
        // Two flows on 0.5-s bins: equal for 4 s, then 4:1 for 4 s.
        let a = [1.0; 16];
        let mut b = [1.0; 16];
        b[8..].fill(0.25);
        let f = fairness(&[&a, &b], 0.5, 2.0, 0.0, 8.0);
        assert_eq!(f.windows, 4);
        assert_eq!(f.within_bound, 0.5);
        assert_eq!(f.worst_ratio, 4.0);
        assert_eq!(window_means(&b, 0.5, 4.0, 0.0, 8.0), [1.0, 0.25]);
        assert!(mean_over(&b, 0.5, 8.0, 8.0).is_nan());
    }

    #[test]
    fn convergence_and_oscillation() {
        // A rate that ramps up by 0.1 per bin from 0 after t = 1 s (bins of 0.1 s) to 1.
        let s: Vec<f64> = (0..60)
            .map(|i| ((i as f64 - 10.0) * 0.1).clamp(0.0, 1.0))
            .collect();
        // Smoothing one bin: first in [0.8, 1.2] at bin 18 (value 0.8), held 1 s.
        let t = convergence_time(&s, 0.1, 1.0, (0.8, 1.2), 0.1, 1.0, 6.0).unwrap();
        assert!((t - 0.9).abs() < 1e-9, "{t}");
        assert_eq!(
            convergence_time(&s, 0.1, 1.0, (2.0, 3.0), 0.1, 1.0, 6.0),
            None
        );
        assert_eq!(oscillation(&s, 0.1, 2.0, 6.0), 0.0);
        let alt: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 1.0 } else { 3.0 })
            .collect();
        let cv = oscillation(&alt, 1.0, 0.0, 10.0);
        assert!((cv - (10.0f64 / 9.0).sqrt() / 2.0).abs() < 1e-12, "{cv}");
    }

    #[test]
    fn queueing_delay_quantiles() {
        let xs: Vec<(f64, f64)> = (0..101).map(|i| (i as f64, i as f64 / 100.0)).collect();
        assert!((quantile_between(&xs, 0.95, 0.0, 1000.0) - 0.95).abs() < 1e-12);
        let b = binned_mean(&xs, 50.0, 150.0);
        assert_eq!(b.len(), 3);
        assert!((b[0] - 0.245).abs() < 1e-12);
    }
}
