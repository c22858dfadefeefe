//! The RMCAT statistical video traffic model (RFC 8593 §5).
//!
//! A live encoder is asked for a target rate `R_v` by the congestion controller and produces
//! frames at `FPS` frames per second. RFC 8593 models its output with two phases:
//!
//! - **steady state**: each frame is `R_o / (8·FPS)` bytes, perturbed by zero-mean noise
//!   (Laplacian here, [`crate::noise`]), where `R_o` is the rate the encoder currently
//!   produces, `R_v` clipped to `[R_min, R_max]`;
//! - **transient**: when the target changes a lot, the encoder sends a key (I-) frame `K_B`
//!   times the steady frame size, then makes the next `K_d − 1` frames smaller, by the factor
//!   `max(0.2, (K_d − K_B)/(K_d − 1))`, so that the `K_d` frames together average the
//!   target rate (unless the floor 0.2 binds).
//!
//! The encoder reacts to a new target after its reaction latency `τ_v`: the output rate at time
//! `t` is the target requested at `t − τ_v`. A transient also starts at the first frame and,
//! when [`StatisticalConfig::key_interval`] is set, every that often (periodic key frames).
//! `docs/media.md` gives each parameter's default and where it comes from.

use std::collections::VecDeque;

use rand::Rng;

use crate::noise::perturb;
use crate::{check, nanos_from_secs, ConfigError, Frame, Nanos, SECOND};

/// Pending rate requests kept at most; older ones are applied at once when more arrive (only
/// a caller asking many times per `τ_v` reaches it).
const MAX_PENDING: usize = 4096;

/// Parameters of the statistical model. Rates are in bit/s, durations in [`Nanos`].
#[derive(Clone, Debug, PartialEq)]
pub struct StatisticalConfig {
    /// FPS: frames per second.
    pub fps: f64,
    /// R_min: the lowest rate the encoder produces.
    pub r_min: f64,
    /// R_max: the highest rate the encoder produces.
    pub r_max: f64,
    /// The rate before the controller asks for one (clipped to `[r_min, r_max]`).
    pub r_init: f64,
    /// τ_v: the encoder's reaction latency to a new target.
    pub reaction_delay: Nanos,
    /// K_d: frames in a transient phase (the key frame included); at least 2.
    pub transient_frames: u32,
    /// K_B: the key frame's size in steady frames; in `[1, transient_frames]`.
    pub key_ratio: f64,
    /// A change of the output rate by more than this fraction of the old one starts a
    /// transient (a new key frame).
    pub transient_threshold: f64,
    /// The smallest factor a frame after a key frame is scaled by.
    pub min_transient_scale: f64,
    /// Laplace scale of the relative frame-size noise (0: none).
    pub size_noise: f64,
    /// Laplace scale of the relative frame-interval noise (0: frames exactly 1/FPS apart).
    pub interval_noise: f64,
    /// A key frame every this often, counted from the previous key frame (`None`: only at
    /// start and after large rate changes).
    pub key_interval: Option<Nanos>,
}

impl Default for StatisticalConfig {
    /// The defaults `docs/media.md` lists: the RFC 8867 reference implementation's rate range
    /// (150 kb/s to 1.5 Mb/s, starting at 150 kb/s) and 30 frames/s, syncodecs' noise scales (0.15) and transient length
    /// (10 frames), K_B = 4, τ_v = 200 ms, a transient on a change of more than 50 %, a key
    /// frame every 10 s.
    fn default() -> Self {
        StatisticalConfig {
            fps: 30.0,
            r_min: 150e3,
            r_max: 1.5e6,
            r_init: 150e3,
            reaction_delay: 200_000_000,
            transient_frames: 10,
            key_ratio: 4.0,
            transient_threshold: 0.5,
            min_transient_scale: 0.2,
            size_noise: 0.15,
            interval_noise: 0.15,
            key_interval: Some(10 * SECOND),
        }
    }
}

impl StatisticalConfig {
    /// Check every parameter's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let finite_pos = |x: f64| x.is_finite() && x > 0.0;
        check(
            finite_pos(self.fps) && self.fps <= 1000.0,
            "fps",
            "must be in (0, 1000]",
        )?;
        check(finite_pos(self.r_min), "r_min", "must be a positive rate")?;
        check(
            finite_pos(self.r_max) && self.r_max >= self.r_min,
            "r_max",
            "must be a rate at least r_min",
        )?;
        check(finite_pos(self.r_init), "r_init", "must be a positive rate")?;
        check(
            self.transient_frames >= 2,
            "transient_frames",
            "must be at least 2 (the key frame and one frame after it)",
        )?;
        check(
            self.key_ratio.is_finite()
                && self.key_ratio >= 1.0
                && self.key_ratio <= f64::from(self.transient_frames),
            "key_ratio",
            "must be in [1, transient_frames]",
        )?;
        check(
            self.transient_threshold.is_finite() && self.transient_threshold >= 0.0,
            "transient_threshold",
            "must be a fraction ≥ 0",
        )?;
        check(
            self.min_transient_scale.is_finite()
                && self.min_transient_scale > 0.0
                && self.min_transient_scale <= 1.0,
            "min_transient_scale",
            "must be in (0, 1]",
        )?;
        for (v, name) in [
            (self.size_noise, "size_noise"),
            (self.interval_noise, "interval_noise"),
        ] {
            check(
                v.is_finite() && (0.0..1.0).contains(&v),
                name,
                "must be a Laplace scale in [0, 1)",
            )?;
        }
        check(
            self.key_interval != Some(0),
            "key_interval",
            "must be positive (leave it out for no periodic key frames)",
        )?;
        Ok(())
    }

    /// The steady frame interval 1/FPS.
    pub fn frame_interval(&self) -> Nanos {
        nanos_from_secs(1.0 / self.fps)
    }

    /// The factor the `K_d − 1` frames after a key frame are scaled by.
    pub fn transient_scale(&self) -> f64 {
        let kd = f64::from(self.transient_frames);
        ((kd - self.key_ratio) / (kd - 1.0)).max(self.min_transient_scale)
    }
}

/// The statistical model as a frame generator.
#[derive(Clone, Debug)]
pub struct StatisticalSource {
    cfg: StatisticalConfig,
    /// R_o: the rate the encoder produces now.
    rate: f64,
    /// Requests not yet in effect: (when they take effect, rate).
    pending: VecDeque<(Nanos, f64)>,
    /// Frames left in the current transient (K_d at its key frame, 0 in steady state).
    transient_left: u32,
    next_at: Option<Nanos>,
    /// The next frame's time before rounding to the nanosecond, so that rounding does not
    /// accumulate over frames.
    clock: f64,
    next_key_at: Option<Nanos>,
    next_id: u32,
}

impl StatisticalSource {
    /// A source with `cfg`, not started.
    pub fn new(cfg: StatisticalConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let rate = cfg.r_init.clamp(cfg.r_min, cfg.r_max);
        Ok(StatisticalSource {
            cfg,
            rate,
            pending: VecDeque::new(),
            transient_left: 0,
            next_at: None,
            clock: 0.0,
            next_key_at: None,
            next_id: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &StatisticalConfig {
        &self.cfg
    }

    /// Start producing: the first frame, a key frame, is due at `now`.
    pub fn start(&mut self, now: Nanos) {
        self.next_at = Some(now);
        self.clock = now as f64;
        self.transient_left = self.cfg.transient_frames;
        self.next_key_at = self.cfg.key_interval.map(|k| now.saturating_add(k));
    }

    /// Stop producing frames.
    pub fn stop(&mut self) {
        self.next_at = None;
    }

    /// When the next frame is due (`None` before start or after stop).
    pub fn next_frame_at(&self) -> Option<Nanos> {
        self.next_at
    }

    /// R_o: the rate the encoder produces now, bit/s.
    pub fn output_rate(&self) -> f64 {
        self.rate
    }

    /// The controller asks for `bps` at `now`; it takes effect τ_v later.
    pub fn set_target(&mut self, now: Nanos, bps: f64) {
        if !bps.is_finite() || bps <= 0.0 {
            return;
        }
        let at = now.saturating_add(self.cfg.reaction_delay);
        if self.pending.len() >= MAX_PENDING {
            if let Some((_, r)) = self.pending.pop_front() {
                self.apply(r);
            }
        }
        self.pending.push_back((at, bps));
    }

    fn apply(&mut self, bps: f64) {
        let new = bps.clamp(self.cfg.r_min, self.cfg.r_max);
        // RFC 8593 §5: a large change of the target starts a transient phase.
        if (new - self.rate).abs() > self.cfg.transient_threshold * self.rate {
            self.transient_left = self.cfg.transient_frames;
        }
        self.rate = new;
    }

    /// Produce the frame due at [`StatisticalSource::next_frame_at`] (`None` when stopped)
    /// and schedule the next one.
    pub fn next_frame<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Option<Frame> {
        let now = self.next_at?;
        while let Some(&(at, bps)) = self.pending.front() {
            if at > now {
                break;
            }
            self.pending.pop_front();
            self.apply(bps);
        }
        if self.next_key_at.is_some_and(|k| now >= k) {
            self.transient_left = self.cfg.transient_frames;
        }
        let steady = self.rate / (8.0 * self.cfg.fps);
        let (mut bytes, key) = if self.transient_left == self.cfg.transient_frames {
            (steady * self.cfg.key_ratio, true)
        } else if self.transient_left > 0 {
            (steady * self.cfg.transient_scale(), false)
        } else {
            (steady, false)
        };
        if key {
            // The periodic key-frame clock restarts at any key frame.
            if let Some(k) = self.cfg.key_interval {
                self.next_key_at = Some(now.saturating_add(k));
            }
        }
        self.transient_left = self.transient_left.saturating_sub(1);
        bytes = perturb(rng, bytes, self.cfg.size_noise, 1.0);
        let t0 = 1e9 / self.cfg.fps;
        self.clock += perturb(rng, t0, self.cfg.interval_noise, 0.0);
        self.next_at = Some((self.clock.round().min(u64::MAX as f64) as Nanos).max(now));
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        Some(Frame {
            id,
            capture: now,
            size: bytes.round().min(f64::from(u32::MAX)) as u32,
            key,
        })
    }
}
