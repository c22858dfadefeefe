//! Where frames come from: the statistical model or a trace, as one closed enum.

use rand::Rng;

use crate::model::{StatisticalConfig, StatisticalSource};
use crate::trace::{FrameTrace, TraceSource};
use crate::{ConfigError, Frame, Nanos};

/// A video source.
#[derive(Clone, Debug)]
pub enum Source {
    /// The RMCAT statistical model, following the controller's target.
    Statistical(StatisticalSource),
    /// A recorded trace, deaf to the controller.
    Trace(TraceSource),
}

impl Source {
    /// The statistical model with `cfg`.
    pub fn statistical(cfg: StatisticalConfig) -> Result<Source, ConfigError> {
        Ok(Source::Statistical(StatisticalSource::new(cfg)?))
    }

    /// A trace, played once or looped.
    pub fn trace(trace: FrameTrace, looped: bool) -> Source {
        Source::Trace(TraceSource::new(trace, looped))
    }

    /// Start producing at `now`.
    pub fn start(&mut self, now: Nanos) {
        match self {
            Source::Statistical(s) => s.start(now),
            Source::Trace(s) => s.start(now),
        }
    }

    /// Stop producing.
    pub fn stop(&mut self) {
        match self {
            Source::Statistical(s) => s.stop(),
            Source::Trace(s) => s.stop(),
        }
    }

    /// When the next frame is due.
    pub fn next_frame_at(&self) -> Option<Nanos> {
        match self {
            Source::Statistical(s) => s.next_frame_at(),
            Source::Trace(s) => s.next_frame_at(),
        }
    }

    /// The frame due at [`Source::next_frame_at`].
    pub fn next_frame<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Option<Frame> {
        match self {
            Source::Statistical(s) => s.next_frame(rng),
            Source::Trace(s) => s.next_frame(),
        }
    }

    /// The controller's target rate, bit/s, requested at `now`.
    pub fn set_target(&mut self, now: Nanos, bps: f64) {
        match self {
            Source::Statistical(s) => s.set_target(now, bps),
            Source::Trace(s) => s.set_target(now, bps),
        }
    }

    /// Frames per second: the model's FPS, or a trace's frames over its period.
    pub fn frame_rate(&self) -> f64 {
        match self {
            Source::Statistical(s) => s.config().fps,
            Source::Trace(s) => {
                let t = s.trace();
                t.frames().len() as f64 / (t.period() as f64 / 1e9)
            }
        }
    }

    /// The rate the source aims at now, bit/s: the model's output rate R_o, or a trace's mean
    /// rate.
    pub fn output_rate(&self) -> f64 {
        match self {
            Source::Statistical(s) => s.output_rate(),
            Source::Trace(s) => s.trace().mean_rate(),
        }
    }
}
