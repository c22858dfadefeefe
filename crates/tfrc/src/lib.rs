//! # tfrc — TCP-Friendly Rate Control (RFC 5348), sans-IO
//!
//! The sender and receiver state machines of RFC 5348 with no sockets, threads, clocks or
//! globals: time is passed in as [`Time`], packets are passed in and polled out as values.
//! The simulator (`netsim`) and the UDP transport drive the same code.
//!
//! ```
//! use tfrc::{Profile, Receiver, Sender, Time};
//!
//! let profile = Profile::rfc5348();
//! let mut tx = Sender::new(profile.sender).unwrap();
//! let mut rx = Receiver::new(profile.receiver).unwrap();
//! let now = Time::ZERO;
//! tx.set_infinite_backlog(now);
//! let hdr = tx.poll_transmit(now).expect("the first packet leaves at once");
//! // ... the packet crosses the network ...
//! let later = Time::from_nanos(50_000_000);
//! rx.on_data(later, &hdr, profile.data_wire_len());
//! let fb = rx.poll_feedback(later).expect("the first packet is answered at once");
//! // ... the feedback crosses back ...
//! tx.on_feedback(Time::from_nanos(100_000_000), &fb);
//! assert_eq!(tx.rtt(), Some(std::time::Duration::from_millis(100)));
//! // Wake the sender at tx.poll_timeout(), call on_timeout, then poll_transmit until None.
//! ```
//!
//! A profile ([`Profile::rfc5348`], [`Profile::ns2`]) is a value of [`SenderConfig`] and
//! [`ReceiverConfig`] whose fields are small closed enums, one per policy dimension; see
//! `docs/tfrc-core.md`. The seed papers' enhancements are further values of those enums, listed
//! by name in [`variants`] and applied to a profile with [`variants::apply`]; see
//! `docs/variants.md`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod classifier;
pub mod equation;
pub mod gaimd;
pub mod loss_history;
pub mod packet;
pub mod profile;
pub mod receiver;
pub mod rtt;
pub mod sender;
pub mod time;
pub mod ttl;
pub mod variants;
pub mod wire;

pub use classifier::{LossClass, LossDecision};
pub use equation::{Equation, EquationForm};
pub use packet::{DataHeader, Feedback};
pub use profile::{ConfigError, Profile, ProfileKind, ReceiverConfig, SenderConfig, WireOverhead};
pub use receiver::{Arrival, Receiver, ReceiverStatus};
pub use sender::{Backlog, Sender, SenderStatus};
pub use time::Time;
