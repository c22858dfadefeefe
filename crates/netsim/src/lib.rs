//! # netsim — a deterministic packet-level discrete-event network simulator
//!
//! Links with bandwidth, delay and loss models, DropTail / RED queues, TTL, and agents for TFRC
//! (driving the `tfrc` core), TCP (Tahoe, Reno, NewReno) and UDP CBR, with NS-2.35 semantics.
//! Time is integer nanoseconds ([`Time`], shared with the core); randomness comes from one
//! seeded generator per run, split per component.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod packet;

pub use tfrc::Time;
