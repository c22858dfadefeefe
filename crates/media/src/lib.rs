//! # media — a real-time video application, sans-IO
//!
//! What an interactive video application puts on the network and what its receiver makes of
//! it, with no sockets, clocks or simulator: time is passed in as integer nanoseconds
//! ([`Nanos`]) and randomness as a caller's generator, so the simulator (`netsim`) drives the
//! same code that tests script.
//!
//! - [`model`]: the RMCAT statistical video traffic model (RFC 8593, published from
//!   draft-ietf-rmcat-video-traffic-model): frames at a frame rate whose sizes follow a target
//!   bitrate, with the model's Laplacian noise, key frames (at start, after a large rate change
//!   and periodically) and a reaction delay to rate changes.
//! - [`trace`]: a recorded frame-size trace (CSV `time,size,type`) played back as is, whatever
//!   the congestion controller says.
//! - [`Source`]: either of the two, as one closed enum.
//! - [`sender::MediaSender`]: the sending application: a source, a packetiser that splits each
//!   frame into packets of at most a payload size, and the send buffer the transport drains.
//! - [`receiver::Reassembler`] and [`results::FrameResults`]: the receiving application: frames
//!   reassembled from packets, each frame's delay, whether it was complete before its playout
//!   deadline, and the freezes a viewer would see.
//!
//! `docs/media.md` restates the model and gives every default with its source.
//!
//! ```
//! use media::{model::StatisticalConfig, sender::MediaSender, Source};
//! use rand::SeedableRng;
//!
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
//! let source = Source::statistical(StatisticalConfig::default()).unwrap();
//! let mut app = MediaSender::new(source, 1000, 400_000_000).unwrap();
//! app.start(0);
//! app.set_target_rate(0, 1e6);
//! let mut packets = 0;
//! while let Some(t) = app.next_wake() {
//!     if t > 1_000_000_000 {
//!         break;
//!     }
//!     packets += app.on_wake(t, &mut rng);
//!     while app.pop_packet(t).is_some() {}
//! }
//! assert!(packets > 30); // about 31 frames in the first second, key frames split in several
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod model;
pub mod noise;
pub mod receiver;
pub mod results;
pub mod sender;
pub mod source;
pub mod trace;

pub use source::Source;

/// Time and durations in integer nanoseconds (the simulator's `Time` as a plain number; the
/// epoch is the caller's).
pub type Nanos = u64;

/// One second in [`Nanos`].
pub const SECOND: Nanos = 1_000_000_000;

/// One encoded video frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Frame number from 0, +1 per frame the source produced.
    pub id: u32,
    /// When it was captured (and encoded: the model has no encoding delay).
    pub capture: Nanos,
    /// Encoded size, bytes (≥ 1).
    pub size: u32,
    /// A key (I-) frame.
    pub key: bool,
}

/// A configuration value out of its range.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    /// The parameter's name.
    pub param: &'static str,
    /// What is wrong and what would be right.
    pub reason: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.param, self.reason)
    }
}

impl std::error::Error for ConfigError {}

pub(crate) fn check(ok: bool, param: &'static str, reason: &str) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError {
            param,
            reason: reason.to_string(),
        })
    }
}

/// Seconds as [`Nanos`], rounded to the nanosecond (negative and NaN give 0).
pub fn nanos_from_secs(secs: f64) -> Nanos {
    if secs.is_finite() && secs > 0.0 {
        (secs * 1e9).round().min(u64::MAX as f64) as Nanos
    } else {
        0
    }
}
