//! # netsim — a deterministic packet-level discrete-event network simulator
//!
//! Links with bandwidth, delay and loss models, DropTail / RED queues, TTL, and agents for TFRC
//! (driving the `tfrc` core), TCP (Tahoe, Reno, NewReno, SACK) and UDP CBR, with NS-2.35
//! semantics.
//! Time is integer nanoseconds ([`Time`], shared with the core); randomness comes from one
//! seeded generator per run, split per component.

// Denied, not forbidden: `unchecked` (one audited function, issue 30) opts in.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod agents;
pub mod builder;
pub mod link;
pub mod loss;
pub mod packet;
pub mod policy;
pub mod queue;
pub mod rng;
pub mod routing;
pub mod sched;
pub mod sim;
pub mod stats;
mod store;
#[doc(hidden)]
pub mod testing;
pub mod trace;
mod unchecked;
pub mod wireless;

pub use builder::{BuildError, NetworkBuilder};
pub use link::{LinkConfig, LinkId, LinkSettings, LinkUpdate};
pub use loss::LossConfig;
pub use packet::{Direction, FlowId, NodeId, Packet, PacketKind};
pub use policy::{EcnCapability, Marking, NodePolicy, ProtectionCost, TtlExpiry};
pub use queue::{DropTailConfig, QueueConfig, RedConfig};
pub use sim::{
    Account, CountersOnly, FlowResults, FullStats, Limits, LinkResults, Metering, RunResults,
    SimError, Simulator,
};
pub use stats::{DropCause, FlowRecorder, StatsConfig};
pub use tfrc::Time;
pub use wireless::WirelessConfig;
