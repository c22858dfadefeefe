//! The interface between the simulator and the transport agents.
//!
//! Every flow has two agents: a sender at its source node and a receiver at its destination.
//! The simulator calls them on start, on packet arrival and on their wake-up time, handing them an
//! [`AgentCtx`] through which they create and send packets and draw random numbers. Agents keep
//! their own timers and report the earliest through [`Agent::next_wake`], which the simulator
//! polls after every call (quinn-proto's `poll_timeout` shape). A wake-up may come early or be
//! spurious: [`Agent::on_wake`] must act only on the timers that are due at `ctx.now()` and is
//! the only place timers fire. This keeps at most one pending event per agent in the scheduler.

use rand_chacha::ChaCha8Rng;

use crate::packet::{Direction, FlowId, Header, NodeId, Packet, PacketKind, DEFAULT_TTL};
use crate::Time;

/// What an agent can do while the simulator has called it.
pub struct AgentCtx<'a> {
    now: Time,
    flow: FlowId,
    dir: Direction,
    node: NodeId,
    peer: NodeId,
    ttl: u8,
    rng: &'a mut ChaCha8Rng,
    out: &'a mut Vec<Packet>,
}

impl<'a> AgentCtx<'a> {
    /// A context for an agent of `flow` at `node` whose peer is at `peer`; packets it sends go in
    /// direction `dir`. Packets are collected into `out`, and injected by the caller.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        now: Time,
        flow: FlowId,
        dir: Direction,
        node: NodeId,
        peer: NodeId,
        rng: &'a mut ChaCha8Rng,
        out: &'a mut Vec<Packet>,
    ) -> Self {
        AgentCtx {
            now,
            flow,
            dir,
            node,
            peer,
            ttl: DEFAULT_TTL,
            rng,
            out,
        }
    }

    /// The current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The agent's flow.
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// This agent's own random stream (seeded per run and per agent, so adding a flow does not
    /// change another flow's randomness).
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        self.rng
    }

    /// Set the TTL for packets created from now on in this call (seed 000's adaptive TTL, E5 in
    /// `docs/variants.md`).
    pub fn set_ttl(&mut self, ttl: u8) {
        self.ttl = ttl;
    }

    /// A new packet addressed to the peer, stamped with the current time. `uid` is assigned
    /// when it is sent.
    pub fn packet(
        &self,
        kind: PacketKind,
        size: u32,
        payload: u32,
        seq: i64,
        header: Header,
    ) -> Packet {
        Packet {
            uid: 0,
            flow: self.flow,
            dir: self.dir,
            src: self.node,
            dst: self.peer,
            kind,
            size,
            payload,
            seq,
            sent_at: self.now,
            ttl: self.ttl,
            initial_ttl: self.ttl,
            ect: false,
            ce: false,
            protected: false,
            exposed: false,
            header,
        }
    }

    /// Send a packet now, from this agent's node.
    pub fn send(&mut self, pkt: Packet) {
        self.out.push(pkt);
    }
}

/// Counters an agent keeps about its application, for the metrics the network cannot see.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AppCounters {
    /// Packets the application generated (CBR packets, or TFRC/TCP packets handed to the
    /// transport). For an always-backlogged source, the packets the transport sent.
    pub generated_packets: u64,
    /// Payload bytes the application generated.
    pub generated_bytes: u64,
}

/// Behaviour shared by every agent. Implementations are variants of [`crate::agents::AnyAgent`].
pub trait Agent {
    /// The flow starts (the sender's application begins; a receiver is started at the same time).
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>);
    /// The application stops producing data (the sender stops; packets in flight still arrive).
    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>);
    /// A packet addressed to this agent arrived.
    fn on_packet(&mut self, pkt: Packet, ctx: &mut AgentCtx<'_>);
    /// The wake-up time reported by [`Agent::next_wake`] was reached (or a spurious call):
    /// fire every timer due at `ctx.now()`.
    fn on_wake(&mut self, ctx: &mut AgentCtx<'_>);
    /// The earliest time this agent needs to be woken, if any.
    fn next_wake(&self) -> Option<Time>;
    /// Optional: [`Agent::next_wake`] as the double-precision seconds NS-2 would hold for
    /// the same timer (e.g. a CBR's accumulated `clock + interval`). The simulator uses it
    /// only to order events that fall on the same nanosecond exactly as NS-2 does; it is
    /// ignored unless it rounds to `next_wake`.
    fn next_wake_secs(&self) -> Option<f64> {
        None
    }
    /// Application-level counters (for PDR).
    fn app_counters(&self) -> AppCounters {
        AppCounters::default()
    }
    /// Names of the internals this agent reports each statistics bin (e.g. TFRC's X,
    /// X_recv, p, R); empty (the default) means the agent is not sampled.
    fn sample_names(&self) -> &'static [&'static str] {
        &[]
    }
    /// Append one value per [`Agent::sample_names`] entry, in that order.
    fn sample(&self, _out: &mut Vec<f64>) {}
}
