//! Hand-made packets and topologies for tests, examples and benchmarks.
//!
//! Not part of the simulator's API: it is public (and hidden from the docs) only so that the
//! unit tests, the integration tests, the examples and the benches build their packets and
//! their shared topologies in one place.

use core::time::Duration;

use crate::packet::{Direction, Header, NodeId, Packet, PacketKind, DEFAULT_TTL};
use crate::{LinkConfig, NetworkBuilder, Time};

/// A forward CBR packet of `size` bytes, all of them payload, with sequence number `seq`: flow 0
/// from node 0 to node 1, uid 0, sent at time zero with the default TTL, no ECN bits and no
/// header. A test that needs another field sets it with struct update syntax, e.g.
/// `Packet { flow: 3, ..packet(seq, 100) }`.
pub fn packet(seq: i64, size: u32) -> Packet {
    Packet {
        uid: 0,
        flow: 0,
        dir: Direction::Forward,
        src: 0,
        dst: 1,
        kind: PacketKind::Cbr,
        size,
        payload: size,
        seq,
        sent_at: Time::ZERO,
        ttl: DEFAULT_TTL,
        initial_ttl: DEFAULT_TTL,
        ect: false,
        ce: false,
        protected: false,
        exposed: false,
        header: Header::None,
    }
}

/// Seed 004's multi-bottleneck topology (`docs/simulator.md`, "Seed 004's topology"), as
/// validation/ns2/seed004_udp.tcl and tcp_seed004.tcl build it: nodes n0 … n9, added in that
/// order, and nine duplex links with 10 ms delay (the 2 Mb/s n5–n6 link is the tightest).
/// Returns the node ids, indexed by node number.
pub fn seed004_topology(net: &mut NetworkBuilder) -> Vec<NodeId> {
    let n: Vec<_> = (0..10).map(|i| net.add_node(&format!("n{i}"))).collect();
    for (a, b, mbps) in [
        (0, 2, 5),
        (1, 2, 5),
        (2, 3, 5),
        (3, 4, 4),
        (4, 5, 10),
        (5, 6, 2),
        (6, 7, 5),
        (7, 8, 5),
        (7, 9, 5),
    ] {
        let cfg = LinkConfig::new(mbps * 1_000_000, Duration::from_millis(10));
        net.add_duplex_link(n[a], n[b], cfg);
    }
    n
}
