//! Policies that plug into nodes, links and hosts: features a few experiments need and the
//! event loop knows nothing about. As htsim composes features as packet sinks on a route, each
//! is a small closed enum attached to one element, asked at one point of a packet's way:
//!
//! - [`NodePolicy`], at every node a packet is forwarded through: an untrusted node flags
//!   unprotected packets as exposed.
//! - [`TtlExpiry`], at a link's TTL check: drop the packet, or drop it and return a
//!   time-exceeded notice to its source.
//! - `HostStage`, between an agent and its node, both ways: a per-packet processing cost
//!   (sealing a protected packet before it leaves, opening it before the agent gets it), one
//!   packet at a time and in order, as one CPU would; and [`Marking`], which protects every
//!   packet an agent sends.
//! - `NodeStage`, at a node with a random processing delay (`processing_jitter`): every
//!   packet reaching the node waits a random time before it is forwarded or delivered, to
//!   break the traffic-phase effects of a deterministic network (`docs/phase-effects.md`).
//!
//! What each models, and why, is in `docs/simulator.md` (TTL, untrusted nodes, protection cost).

use std::collections::VecDeque;
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::packet::{Direction, Header, NodeId, Packet, PacketKind, DEFAULT_TTL};
use crate::sched::Key;
use crate::Time;

/// Size of a time-exceeded notice: 20 B IP + 8 B ICMP + 28 B of the dead packet (RFC 792).
pub const TIME_EXCEEDED_SIZE: u32 = 56;

/// What a node does to the packets it forwards (not those it sends or receives).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NodePolicy {
    /// Forward unchanged.
    #[default]
    Forward,
    /// An untrusted node: an unprotected packet crossing it is flagged `exposed`.
    Untrusted,
}

impl NodePolicy {
    /// Apply the policy to `pkt`, which is at `node` on its way elsewhere.
    #[inline]
    pub(crate) fn on_forward(self, pkt: &mut Packet, node: NodeId) {
        if self == NodePolicy::Untrusted && !pkt.protected && node != pkt.src {
            pkt.exposed = true;
        }
    }
}

/// What a link's TTL checker does with a packet whose TTL runs out there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TtlExpiry {
    /// Drop it (NS-2's `TTLChecker`).
    #[default]
    Drop,
    /// Drop it and send a time-exceeded notice from the link's far node back to the packet's
    /// source (as an IP router does; NS-2 has no such notice). A notice that itself expires is
    /// only dropped.
    Notify,
}

impl TtlExpiry {
    /// The notice to send for `dead`, which expired at node `at` at `now`, if the policy sends
    /// one. Its `uid` is 0: the simulator numbers it when it enters the network.
    pub(crate) fn notice(self, dead: &Packet, at: NodeId, now: Time) -> Option<Packet> {
        if self != TtlExpiry::Notify || dead.kind == PacketKind::TimeExceeded {
            return None;
        }
        let back = match dead.dir {
            Direction::Forward => Direction::Reverse,
            Direction::Reverse => Direction::Forward,
        };
        Some(Packet {
            uid: 0,
            flow: dead.flow,
            dir: back,
            src: at,
            dst: dead.src,
            kind: PacketKind::TimeExceeded,
            size: TIME_EXCEEDED_SIZE,
            payload: 0,
            seq: dead.seq,
            sent_at: now,
            ttl: DEFAULT_TTL,
            initial_ttl: DEFAULT_TTL,
            ect: false,
            ce: false,
            protected: false,
            exposed: false,
            header: Header::TimeExceeded {
                initial_ttl: dead.initial_ttl,
                seq: dead.seq,
            },
        })
    }
}

/// Whether a host marks the packets its agent sends as protected, whatever the agent decided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Marking {
    /// Leave the agent's choice.
    #[default]
    AsSent,
    /// Protect every packet.
    ProtectAll,
}

impl Marking {
    /// Apply the marking to a packet leaving the agent.
    #[inline]
    pub(crate) fn apply(self, pkt: &mut Packet) {
        if self == Marking::ProtectAll {
            pkt.protected = true;
        }
    }
}

/// Whether a sending host sets ECT (ECN-capable transport, RFC 3168) on its agent's packets.
/// NS-2 sets it in the agent (`ecn_`): TCP and TFRC mark every data packet, retransmissions
/// included, and never a TCP SYN, an ACK or a TFRC feedback; so does [`EcnCapability::Data`],
/// on the packets that carry payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnCapability {
    /// Not ECN-capable (NS-2's default).
    #[default]
    NotEct,
    /// Every packet with payload is ECT.
    Data,
}

impl EcnCapability {
    /// Apply to a packet leaving the agent.
    #[inline]
    pub(crate) fn apply(self, pkt: &mut Packet) {
        if self == EcnCapability::Data && pkt.payload > 0 {
            pkt.ect = true;
        }
    }
}

/// Per-packet processing cost of protection: a protected packet enters the network `seal`
/// after its agent sends it and reaches its destination agent `open` after it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtectionCost {
    /// Time to seal one packet at its source.
    pub seal: Duration,
    /// Time to open one packet at its destination.
    pub open: Duration,
}

impl Default for ProtectionCost {
    /// 2.15 µs + 2.15 µs: `docs/protection.md` measures ChaCha20-Poly1305 on a 1000-byte packet
    /// at about 4.3 µs per seal + open, split about evenly (medians 2.14 and 2.10 µs in
    /// `tfrclab bench rsa --json`, `aead.seal` and `aead.open`).
    fn default() -> Self {
        ProtectionCost {
            seal: Duration::from_nanos(2150),
            open: Duration::from_nanos(2150),
        }
    }
}

/// A duration in both of the simulator's clocks.
#[derive(Clone, Copy, Debug)]
struct Cost {
    ns: u64,
    secs: f64,
}

impl Cost {
    const ZERO: Cost = Cost { ns: 0, secs: 0.0 };

    fn new(d: Duration) -> Self {
        Cost {
            ns: u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            secs: d.as_secs_f64(),
        }
    }
}

/// A packet in a host stage (its handle in the packet store), and when it will be ready.
#[derive(Clone, Copy, Debug)]
struct Held {
    id: u32,
    key: Key,
}

/// Packets waiting in a stage, in order; only the head has a pending event.
#[derive(Clone, Debug, Default)]
struct Fifo(VecDeque<Held>);

impl Fifo {
    /// The key of the last packet in, if any.
    fn back(&self) -> Option<Key> {
        self.0.back().map(|p| p.key)
    }

    /// Queue `id`, ready at `key`; returns the key to schedule when it is the head.
    fn push(&mut self, id: u32, key: Key) -> Option<Key> {
        self.0.push_back(Held { id, key });
        (self.0.len() == 1).then_some(key)
    }

    /// The head is done if its key is `key` (else the event is stale): returns it and the
    /// key of the next head to schedule.
    fn pop(&mut self, key: Key) -> Option<(u32, Option<Key>)> {
        if self.0.front().map(|p| p.key) != Some(key) {
            return None;
        }
        let Held { id, .. } = self.0.pop_front()?;
        Some((id, self.0.front().map(|p| p.key)))
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn packets(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().map(|h| h.id)
    }
}

/// Processing between an agent and its node in one direction: each protected packet costs a
/// fixed time, one packet at a time, in order; a packet behind one being processed waits its
/// turn at no cost of its own. Holds at most one pending event (the head's).
#[derive(Clone, Debug)]
pub(crate) struct HostStage {
    cost: Cost,
    fifo: Fifo,
}

impl HostStage {
    /// A stage where each protected packet costs `protected`.
    pub(crate) fn new(protected: Duration) -> Self {
        HostStage {
            cost: Cost::new(protected),
            fifo: Fifo::default(),
        }
    }

    /// Whether a packet (`protected` or not) must go through the stage. If not, it passes on
    /// at once: no cost, no event.
    #[inline]
    pub(crate) fn holds(&self, protected: bool) -> bool {
        (protected && self.cost.ns > 0) || !self.fifo.is_empty()
    }

    /// Queue packet `id`: it is ready one cost (none unless `protected`) after the packet
    /// ahead of it, or after now (`now_secs`, NS-2's double clock); `seq` orders its event.
    /// Returns the key to schedule when it is at the head.
    pub(crate) fn push(
        &mut self,
        id: u32,
        protected: bool,
        now_secs: f64,
        seq: u64,
    ) -> Option<Key> {
        let cost = if protected { self.cost } else { Cost::ZERO };
        let from = self.fifo.back().map_or(now_secs, |k| k.secs);
        let key = Key {
            secs: from + cost.secs,
            seq,
        };
        self.fifo.push(id, key)
    }

    /// The head is done if its key is `key` (else the event is stale): returns it and the
    /// key of the next head to schedule.
    pub(crate) fn pop(&mut self, key: Key) -> Option<(u32, Option<Key>)> {
        self.fifo.pop(key)
    }

    /// Packets in the stage (sent but not yet delivered).
    pub(crate) fn packets(&self) -> impl Iterator<Item = u32> + '_ {
        self.fifo.packets()
    }
}

/// A node's random processing delay: each packet that reaches the node (from a link or from
/// one of its agents) waits a uniform random whole number of nanoseconds in `[0, jitter)`
/// before the node forwards or delivers it, but never leaves before the packet ahead of it,
/// so a node does not reorder (a router's forwarding path is one FIFO). Unlike a
/// [`HostStage`] it is a delay, not a server: packets wait concurrently, so it adds no
/// capacity limit. Draws from the node's own random stream.
#[derive(Clone, Debug)]
pub(crate) struct NodeStage {
    jitter_ns: u64,
    rng: ChaCha8Rng,
    fifo: Fifo,
}

impl NodeStage {
    /// A node whose packets wait up to `jitter` (0: none), drawing from `rng`.
    pub(crate) fn new(jitter: Duration, rng: ChaCha8Rng) -> Self {
        NodeStage {
            jitter_ns: u64::try_from(jitter.as_nanos()).unwrap_or(u64::MAX),
            rng,
            fifo: Fifo::default(),
        }
    }

    /// Whether the node delays packets at all.
    #[inline]
    pub(crate) fn holds(&self) -> bool {
        self.jitter_ns > 0
    }

    /// Queue packet `id`, arrived now (`now_secs`, NS-2's double clock): it is ready after
    /// its random delay, or with the packet ahead of it if that one is ready later; `seq`
    /// orders its event. Returns the key to schedule when it is at the head.
    pub(crate) fn push(&mut self, id: u32, now_secs: f64, seq: u64) -> Option<Key> {
        let d = self.rng.gen_range(0..self.jitter_ns);
        let mut key = Key {
            secs: now_secs + d as f64 * 1e-9,
            seq,
        };
        if let Some(b) = self.fifo.back() {
            if b.secs > key.secs {
                key.secs = b.secs;
            }
        }
        self.fifo.push(id, key)
    }

    /// The head is ready if its key is `key`: returns it and the next head's key.
    pub(crate) fn pop(&mut self, key: Key) -> Option<(u32, Option<Key>)> {
        self.fifo.pop(key)
    }

    /// Packets waiting at the node (sent but not yet delivered).
    pub(crate) fn packets(&self) -> impl Iterator<Item = u32> + '_ {
        self.fifo.packets()
    }
}
