//! One closed enum over the three controllers, so a media sender (the simulator's media agent)
//! drives any of them through one set of calls and dispatches by `match`.

use crate::feedback::{FeedbackConfig, FeedbackKind, FeedbackMessage};
use crate::gcc::{Gcc, GccConfig};
use crate::nada::{Nada, NadaConfig};
use crate::scream::{Scream, ScreamConfig};
use crate::time::Time;
use core::fmt;
use core::time::Duration;

/// Which controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ControllerKind {
    /// NADA, RFC 8698.
    Nada,
    /// SCReAM v1, RFC 8298.
    Scream,
    /// GCC, draft-ietf-rmcat-gcc-02.
    Gcc,
}

impl ControllerKind {
    /// Every controller, in the order the reports list them.
    pub const ALL: [ControllerKind; 3] = [
        ControllerKind::Nada,
        ControllerKind::Scream,
        ControllerKind::Gcc,
    ];

    /// The scenario-file name (`controller = "nada" | "scream" | "gcc"`).
    pub fn name(self) -> &'static str {
        match self {
            ControllerKind::Nada => "nada",
            ControllerKind::Scream => "scream",
            ControllerKind::Gcc => "gcc",
        }
    }

    /// The kind called `name`, if any.
    pub fn from_name(name: &str) -> Option<ControllerKind> {
        ControllerKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The feedback format the controller reads.
    pub fn feedback_kind(self) -> FeedbackKind {
        match self {
            ControllerKind::Nada | ControllerKind::Scream => FeedbackKind::Rfc8888,
            ControllerKind::Gcc => FeedbackKind::Twcc,
        }
    }

    /// How often its receiver sends feedback: NADA every DELTA (100 ms, RFC 8698 §6.3);
    /// SCReAM by its media rate (RFC 8298 §4.2.1, see [`crate::feedback::scream_feedback_interval`]);
    /// GCC every 100 ms (libwebrtc's default; the draft does not fix one).
    pub fn feedback_config(self) -> FeedbackConfig {
        match self {
            ControllerKind::Nada => FeedbackConfig::fixed(Duration::from_millis(100)),
            ControllerKind::Scream => FeedbackConfig::scream(),
            ControllerKind::Gcc => FeedbackConfig::fixed(Duration::from_millis(100)),
        }
    }
}

impl fmt::Display for ControllerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The rate range a media flow gives its controller (bit/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateRange {
    /// Lowest target.
    pub min: f64,
    /// Highest target.
    pub max: f64,
    /// Starting target (NADA and SCReAM start at `min` as their RFCs say; GCC at this).
    pub start: f64,
}

/// A media congestion controller (closed enum).
#[derive(Clone, Debug)]
pub enum Controller {
    /// NADA.
    Nada(Box<Nada>),
    /// SCReAM.
    Scream(Box<Scream>),
    /// GCC.
    Gcc(Box<Gcc>),
}

impl Controller {
    /// A controller of `kind` with its spec's parameters and the given rate range.
    pub fn new(kind: ControllerKind, range: RateRange) -> Controller {
        match kind {
            ControllerKind::Nada => {
                let mut c = NadaConfig::rfc8698();
                c.rmin = range.min;
                c.rmax = range.max;
                Controller::Nada(Box::new(Nada::new(c)))
            }
            ControllerKind::Scream => {
                let mut c = ScreamConfig::rfc8298();
                c.target_bitrate_min = range.min;
                c.target_bitrate_max = range.max;
                Controller::Scream(Box::new(Scream::new(c)))
            }
            ControllerKind::Gcc => {
                let mut c = GccConfig::draft02();
                c.min_rate = range.min;
                c.max_rate = range.max;
                c.start_rate = range.start.clamp(range.min, range.max);
                Controller::Gcc(Box::new(Gcc::new(c)))
            }
        }
    }

    /// Which controller this is.
    pub fn kind(&self) -> ControllerKind {
        match self {
            Controller::Nada(_) => ControllerKind::Nada,
            Controller::Scream(_) => ControllerKind::Scream,
            Controller::Gcc(_) => ControllerKind::Gcc,
        }
    }

    /// A media packet of `size` bytes with sequence number `seq` (RTP for NADA and SCReAM,
    /// transport-wide for GCC; consecutive from the flow's first) left at `now`.
    pub fn on_packet_sent(&mut self, now: Time, seq: u64, size: u32) {
        match self {
            Controller::Nada(c) => c.on_packet_sent(now, seq, size),
            Controller::Scream(c) => c.on_packet_sent(now, seq, size),
            Controller::Gcc(c) => c.on_packet_sent(now, seq, size),
        }
    }

    /// A feedback message arrived. A message of the wrong kind for the controller is ignored
    /// (the simulator never builds one).
    pub fn on_feedback(&mut self, now: Time, fb: &FeedbackMessage) {
        match (self, fb) {
            (Controller::Nada(c), FeedbackMessage::Ccfb(r)) => c.on_feedback(now, r),
            (Controller::Scream(c), FeedbackMessage::Ccfb(r)) => c.on_feedback(now, r),
            (Controller::Gcc(c), FeedbackMessage::Twcc(t)) => c.on_feedback(now, t),
            _ => {}
        }
    }

    /// The sender's queue of encoded media (NADA's rate-shaping buffer, SCReAM's RTP queue)
    /// holds `bytes`.
    pub fn set_queue_bytes(&mut self, bytes: u64) {
        match self {
            Controller::Nada(c) => c.set_buffer_bytes(bytes),
            Controller::Scream(c) => c.set_rtp_queue_bytes(bytes),
            Controller::Gcc(_) => {}
        }
    }

    /// The encoder produced a frame of `bytes`.
    pub fn on_media_frame(&mut self, bytes: u64) {
        if let Controller::Scream(c) = self {
            c.on_media_frame(bytes);
        }
    }

    /// The encoder's target rate (bit/s).
    pub fn target_rate(&self) -> f64 {
        match self {
            Controller::Nada(c) => c.target_rate(),
            Controller::Scream(c) => c.target_rate(),
            Controller::Gcc(c) => c.target_rate(),
        }
    }

    /// The rate at which packets leave the sender's queue (bit/s; infinite before SCReAM has an
    /// RTT).
    pub fn pacing_rate(&self) -> f64 {
        match self {
            Controller::Nada(c) => c.pacing_rate(),
            Controller::Scream(c) => c.pacing_rate(),
            Controller::Gcc(c) => c.pacing_rate(),
        }
    }

    /// Whether a packet of `size` bytes may leave now: SCReAM's send window; always true for
    /// the rate-based controllers.
    pub fn can_send(&self, size: u32) -> bool {
        match self {
            Controller::Scream(c) => c.can_send(size),
            _ => true,
        }
    }

    /// When the controller wants `on_timeout` (SCReAM's rate adjustment).
    pub fn poll_timeout(&self) -> Option<Time> {
        match self {
            Controller::Scream(c) => c.poll_timeout(),
            _ => None,
        }
    }

    /// Time passed.
    pub fn on_timeout(&mut self, now: Time) {
        if let Controller::Scream(c) = self {
            c.on_timeout(now);
        }
    }

    /// The controller's latest round-trip estimate (SCReAM's smoothed RTT; NADA's and GCC's
    /// latest sample), if it has one.
    pub fn rtt(&self) -> Option<Duration> {
        match self {
            Controller::Nada(c) => c.state().rtt,
            Controller::Scream(c) => c
                .state()
                .s_rtt
                .and_then(|r| Duration::try_from_secs_f64(r).ok()),
            Controller::Gcc(c) => c.rtt(),
        }
    }

    /// Bytes sent and not yet reported.
    pub fn in_flight_bytes(&self) -> u64 {
        match self {
            Controller::Nada(c) => c.in_flight_bytes(),
            Controller::Scream(c) => c.in_flight_bytes(),
            Controller::Gcc(c) => c.in_flight_bytes(),
        }
    }
}
