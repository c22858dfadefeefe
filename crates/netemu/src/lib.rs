//! # netemu — a link emulator that runs netsim's queues on real packets
//!
//! Network namespaces stand for nodes, tun devices for the ends of links (the way Mahimahi's
//! `mm-link` and `mm-delay` work; this kernel has no netem), and one real-time thread is the
//! wire: it reads what each node sends into a link, runs it through that link direction's
//! model — bandwidth (constant or changed at run time), propagation delay, the simulator's own
//! queue code (`netsim::queue`: DropTail in packets or bytes, RED and its variants, which mark
//! ECN-capable packets CE when configured to) and loss models (`netsim::loss`: Bernoulli,
//! Gilbert–Elliott, packet lists) — and writes it into the far node's tun device when the
//! model delivers it. So a scenario and its real counterpart run literally the same queue
//! discipline.
//!
//! - [`model`]: one link direction without clock or device (what netsim's link does).
//! - [`engine`]: the real-time loop, its timing measurement and the packet capture.
//! - [`net`]: a topology built as namespaces, tun devices and netsim's routes.
//! - [`netns`]: namespaces held by descriptors; threads and commands inside them.
//! - [`ip`]: the IPv4 fields read and the ECN mark written.
//! - [`timing`]: lateness statistics and the rule that marks a run distorted.
//!
//! `docs/real-network.md` describes the emulator, its timing and its accuracy test.

#![warn(missing_docs)]

pub mod engine;
pub mod ip;
pub mod model;
pub mod net;
pub mod netns;
pub mod sys;
pub mod timing;

pub use engine::{Config, Emulator, Realtime, Report, Tag, Update};
pub use model::{DirConfig, LinkDir};
pub use net::{NetSpec, Network};
pub use netns::NetNs;
pub use timing::Lateness;
