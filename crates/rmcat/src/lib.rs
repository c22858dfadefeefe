//! # rmcat — media congestion controllers, sans-IO
//!
//! The three congestion controllers the IETF's RMCAT group standardised or documented for
//! real-time media, with no sockets, clocks or simulator: time is passed in as [`Time`],
//! packets sent and feedback received are passed in, and the controller answers with a target
//! rate for the encoder, a pacing rate and (SCReAM) whether its window lets a packet go.
//!
//! - [`nada`]: NADA (RFC 8698), rate-based, from RFC 8888 feedback.
//! - [`scream`]: SCReAM version 1 (RFC 8298), window-based self-clocking, from RFC 8888 feedback.
//! - [`gcc`]: Google Congestion Control (draft-ietf-rmcat-gcc-02), Kalman-filtered delay
//!   gradient, over-use detector, AIMD and loss-based control, from transport-wide feedback.
//! - [`feedback`]: the feedback messages as typed values with their byte encoding (so their
//!   size on the wire is real), and the receiver-side generators.
//! - [`controller`]: a closed enum over the three.
//!
//! ```
//! use rmcat::{Controller, ControllerKind, FeedbackGenerator, RateRange, Time};
//!
//! let kind = ControllerKind::Nada;
//! let mut tx = Controller::new(kind, RateRange { min: 150e3, max: 1.5e6, start: 150e3 });
//! let mut rx = FeedbackGenerator::new(kind.feedback_kind(), kind.feedback_config());
//! for seq in 0..10u64 {
//!     let sent = Time::from_millis(10 * seq);
//!     tx.on_packet_sent(sent, seq, 1200);
//!     rx.on_packet(sent.saturating_add(std::time::Duration::from_millis(20)), seq, 1200, 0);
//! }
//! let due = rx.poll_timeout().unwrap();
//! let fb = rx.poll_feedback(due).unwrap();
//! assert_eq!(fb.wire_len(), fb.encode().len());
//! tx.on_feedback(due.saturating_add(std::time::Duration::from_millis(20)), &fb);
//! assert!(tx.target_rate() >= 150e3);
//! ```
//!
//! `docs/rfc8698-conformance.md`, `docs/rfc8298-conformance.md` and `docs/gcc-conformance.md`
//! restate each spec step by step with the test that checks it.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod controller;
pub mod feedback;
pub mod gcc;
pub mod history;
mod lossint;
pub mod nada;
pub mod scream;
pub mod time;

pub use controller::{Controller, ControllerKind, RateRange};
pub use feedback::{FeedbackGenerator, FeedbackKind, FeedbackMessage};
pub use time::Time;
