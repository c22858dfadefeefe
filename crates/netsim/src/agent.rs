//! The interface between the simulator and the transport agents.
//!
//! Every flow has two agents: a sender at its source node and a receiver at its destination.
//! The simulator calls an agent when its flow starts or stops ([`Agent::on_start`],
//! [`Agent::on_stop`]), when a packet addressed to it arrives ([`Agent::on_packet`], which
//! borrows the packet) and when one of its timers expires ([`Agent::on_timer`]). Each call gets
//! an [`AgentCtx`], through which the agent reads the clock, builds and sends packets, arms and
//! cancels its timers and draws random numbers from its own stream.
//!
//! # Timers
//!
//! An agent has [`Agent::timers`] timers (one by default), numbered by [`TimerId`] from 0. The
//! simulator owns them (one slot per timer in one array, not inside the agent), so it never
//! asks an agent when it next wants to run:
//! - [`AgentCtx::set_timer`] arms (or re-arms) a timer, [`AgentCtx::cancel_timer`] disarms it,
//!   [`AgentCtx::timer`] reads it; [`AgentCtx::sync_timer`] arms or disarms from an
//!   `Option<Time>` (for agents whose protocol state, or a sans-IO core's `poll_timeout`, holds
//!   the deadline). A deadline at or before now expires now, after the events already due now.
//! - [`AgentCtx::set_timer_ns2`] also gives the time as the double-precision seconds NS-2 would
//!   hold (a CBR source's accumulated `clock + interval`); it orders the expiry among events
//!   that fall on the same nanosecond exactly as NS-2 does (`set_timer_ns2_rounded` when the
//!   deadline was rounded from that double). Plain `set_timer` uses the nanosecond time's own
//!   value.
//! - When a timer expires the simulator disarms it and calls [`Agent::on_timer`] with its id,
//!   exactly once, at its deadline: no spurious or early calls.
//!
//! Event order follows NS-2's scheduler (`docs/simulator.md`, "Scheduler"): a timer armed in a
//! call takes its place among equal-time events (its sequence number) when the call returns,
//! after the packets the agent sent in that call (NS-2 agents send, then `resched`); timers
//! armed in one call are ordered by their last change. Re-arming a timer to the deadline it
//! already has changes nothing (it keeps its place). Re-arming to a later deadline costs no
//! scheduler work until the earlier one would have expired, so a retransmission timer
//! restarted on every ACK is cheap.
//!
//! # Packets
//!
//! [`AgentCtx::packet`] fills in a packet's addressing (flow, direction, nodes), its creation
//! time and the current TTL; [`AgentCtx::send`] puts it into the simulator's packet store, and
//! [`AgentCtx::send_packet`] does both at once, writing the packet where it will stay. The
//! simulator numbers it (its `uid`, in send order) and routes it when the call returns. A
//! received packet is lent to [`Agent::on_packet`] where it lies in the store (its slot is
//! freed when the call returns); copy out what must be kept.
//!
//! # Adding an agent
//!
//! Implement [`Agent`] for the new type in a module under `agents/`, then in
//! [`crate::agents`]: add a variant to [`crate::agents::AnyAgent`], a `From` impl, and one arm
//! in its `dispatch!` macro. Unit tests drive one agent by hand with [`AgentHarness`] (calls,
//! the packets each sent, its timers by the simulator's rules). A minimal sender that sends
//! one packet every millisecond until stopped:
//!
//! ```
//! use netsim::agent::{Agent, AgentCtx, TimerId};
//! use netsim::packet::{Header, Packet, PacketKind};
//! use netsim::Time;
//!
//! const TICK: TimerId = TimerId(0);
//!
//! struct Ticker { seq: i64 }
//!
//! impl Agent for Ticker {
//!     fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
//!         ctx.set_timer(TICK, ctx.now());          // expires now, after this call
//!     }
//!     fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
//!         ctx.cancel_timer(TICK);
//!     }
//!     fn on_packet(&mut self, pkt: &Packet, _ctx: &mut AgentCtx<'_>) {
//!         let _echo = pkt.seq;                     // the packet is borrowed
//!     }
//!     fn on_timer(&mut self, timer: TimerId, ctx: &mut AgentCtx<'_>) {
//!         debug_assert_eq!(timer, TICK);
//!         let pkt = ctx.packet(PacketKind::Cbr, 100, 100, self.seq, Header::None);
//!         ctx.send(pkt);
//!         self.seq += 1;
//!         let next = ctx.now() + std::time::Duration::from_millis(1);
//!         ctx.set_timer(TICK, next);               // ordered after the packet just sent
//!     }
//! }
//! ```

use rand_chacha::ChaCha8Rng;

#[doc(hidden)]
pub mod harness;
#[doc(hidden)]
pub use harness::AgentHarness;

use crate::packet::{Direction, FlowId, Header, NodeId, Packet, PacketKind, DEFAULT_TTL};
use crate::sched::{secs_of, Key};
use crate::store::Outbox;
use crate::Time;

/// One of an agent's timers: `0 ..` [`Agent::timers`]. Agents name theirs as constants, e.g.
/// `const RTX: TimerId = TimerId(0);`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerId(pub u8);

/// The most timers one agent may have.
pub const MAX_TIMERS: usize = 16;

/// A change to a timer requested during a call: the deadline and the double-precision
/// seconds it expires at if it is after the call's time (NS-2's double when the agent gave one
/// that rounds to the deadline, else the nanosecond time's own value; resolved when the
/// request is made, so that it is computed once), or `None` to disarm.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimerReq {
    pub id: u8,
    pub at: Option<(Time, f64)>,
}

/// A timer as the simulator holds it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TimerSlot {
    /// The expiry the agent wants, with the sequence number it got when it was set.
    pub armed: Option<Key>,
    /// The expiry event the scheduler holds for this timer (any other in the scheduler is
    /// stale); at most `armed`, earlier when the timer was re-armed later since.
    pub queued: Option<Key>,
}

/// What a popped timer event means.
pub(crate) enum TimerPop {
    /// The timer expires: call the agent.
    Fire,
    /// The timer was re-armed later: schedule this key instead.
    Requeue(Key),
    /// Cancelled, or superseded by an earlier event: nothing to do.
    Stale,
}

impl TimerSlot {
    /// Apply a request made in a call that ran at (`now`, `now_secs`). Returns the key to
    /// schedule, if the scheduler must get a new event. `seq` numbers keys.
    ///
    /// The request's time is its resolved double ([`TimerReq`]); a deadline not after `now`
    /// expires at the current event's time. A deadline equal (as a double) to the armed one
    /// keeps its sequence number, as the simulator's single per-agent wake-up always did.
    #[inline]
    pub fn apply(
        &mut self,
        at: Option<(Time, f64)>,
        now: Time,
        now_secs: f64,
        seq: &mut u64,
    ) -> Option<Key> {
        let Some((t, secs)) = at else {
            self.armed = None;
            return None;
        };
        let secs = if t <= now { now_secs } else { secs };
        // The double rounds to the deadline (or now): the expiry runs at it, not before
        // (`secs_of` may take a later nanosecond only past 2^50 ns).
        debug_assert!(
            Time::from_secs_f64(secs) == t.max(now) || (t > now && t.as_nanos() >= 1 << 50),
            "{secs} s for {t:?}"
        );
        if self
            .armed
            .is_some_and(|k| k.secs.to_bits() == secs.to_bits())
        {
            return None;
        }
        let key = Key { secs, seq: *seq };
        *seq += 1;
        self.armed = Some(key);
        if self.queued.is_none_or(|q| q > key) {
            self.queued = Some(key);
            return Some(key);
        }
        None
    }

    /// The scheduler popped this timer's event with `key`.
    #[inline]
    pub fn pop(&mut self, key: Key) -> TimerPop {
        // Sequence numbers alone: each key has its own (`Key::seq`).
        if self.queued.map(|q| q.seq) != Some(key.seq) {
            return TimerPop::Stale;
        }
        self.queued = None;
        match self.armed {
            Some(a) if a.seq == key.seq => {
                self.armed = None;
                TimerPop::Fire
            }
            Some(a) => {
                // Re-armed later: schedule the expiry with the sequence number it got when it
                // was set, so ties still break in NS-2's order.
                self.queued = Some(a);
                TimerPop::Requeue(a)
            }
            None => TimerPop::Stale,
        }
    }
}

/// What a context reads of the agent's own slot: its addressing and its random stream. A
/// context holds one pointer to it rather than a copy of each field, built on every call.
#[derive(Clone, Debug)]
pub(crate) struct AgentIo {
    /// The agent's flow.
    pub flow: FlowId,
    /// The direction its packets go in.
    pub dir: Direction,
    /// Its node.
    pub node: NodeId,
    /// Its peer's node.
    pub peer: NodeId,
    /// Its own random stream.
    pub rng: ChaCha8Rng,
}

/// What every agent call writes to on the simulator's side: the next packet number, the
/// handles of the packets the agent sent and its timer changes (the vectors are kept to
/// reuse their memory, and are empty between calls).
#[derive(Debug, Default)]
pub(crate) struct CallIo {
    pub next_uid: u64,
    pub sent: Vec<u32>,
    pub reqs: Vec<TimerReq>,
}

/// What an agent can do while the simulator has called it.
pub struct AgentCtx<'a> {
    now: Time,
    ttl: u8,
    me: &'a mut AgentIo,
    out: Outbox<'a>,
    io: &'a mut CallIo,
    timers: &'a [TimerSlot],
}

impl<'a> AgentCtx<'a> {
    /// A context for the agent `me`: packets it sends go into `out` (numbered, and their
    /// handles kept, in `io`); its timers are `timers` and changes to them go into `io`.
    #[inline]
    pub(crate) fn new(
        now: Time,
        me: &'a mut AgentIo,
        out: Outbox<'a>,
        io: &'a mut CallIo,
        timers: &'a [TimerSlot],
    ) -> Self {
        AgentCtx {
            now,
            ttl: DEFAULT_TTL,
            me,
            out,
            io,
            timers,
        }
    }

    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// The agent's flow.
    #[inline]
    pub fn flow(&self) -> FlowId {
        self.me.flow
    }

    /// This agent's own random stream (seeded per run and per agent, so adding a flow does not
    /// change another flow's randomness).
    #[inline]
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.me.rng
    }

    /// Set the TTL for packets created from now on in this call (seed 000's adaptive TTL, E5 in
    /// `docs/variants.md`).
    #[inline]
    pub fn set_ttl(&mut self, ttl: u8) {
        self.ttl = ttl;
    }

    /// A new packet addressed to the peer, stamped with the current time. `uid` is assigned
    /// when it is sent.
    #[inline]
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
            flow: self.me.flow,
            dir: self.me.dir,
            src: self.me.node,
            dst: self.me.peer,
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

    /// Send a packet now, from this agent's node: it is numbered (`uid`, in send order), goes
    /// into the simulator's packet store and enters the network when the call returns. It
    /// belongs to this agent's flow and direction and leaves from its node whatever those
    /// fields say; `dst` is kept.
    #[inline]
    pub fn send(&mut self, mut pkt: Packet) {
        pkt.flow = self.me.flow;
        pkt.dir = self.me.dir;
        pkt.src = self.me.node;
        pkt.uid = self.take_uid();
        let id = self.out.put(pkt);
        self.io.sent.push(id);
    }

    /// `send(packet(kind, size, payload, seq, header))` with the packet written straight into
    /// its slot in the store instead of being built and then copied there (136 bytes, on the
    /// hot path of every agent that answers every packet). Returns it, for fields set before
    /// the call returns (e.g. `ect`). Always inlined: with the TFRC agents as callers too, a
    /// plain `#[inline]` left it out of line in the TCP sender's output (+3.3 per hop).
    #[inline(always)]
    pub fn send_packet(
        &mut self,
        kind: PacketKind,
        size: u32,
        payload: u32,
        seq: i64,
        header: Header,
    ) -> &mut Packet {
        let uid = self.take_uid();
        let (id, p) = self.out.slot();
        self.io.sent.push(id);
        p.uid = uid;
        p.flow = self.me.flow;
        p.dir = self.me.dir;
        p.src = self.me.node;
        p.dst = self.me.peer;
        p.kind = kind;
        p.size = size;
        p.payload = payload;
        p.seq = seq;
        p.sent_at = self.now;
        p.ttl = self.ttl;
        p.initial_ttl = self.ttl;
        p.ect = false;
        p.ce = false;
        p.protected = false;
        p.exposed = false;
        p.header.overwrite(header);
        p
    }

    #[inline]
    fn take_uid(&mut self) -> u64 {
        let uid = self.io.next_uid;
        self.io.next_uid += 1;
        uid
    }

    /// Arm `timer` to expire at `at` (re-arming it if it is armed). Panics if the agent has
    /// no such timer ([`Agent::timers`]).
    #[inline]
    pub fn set_timer(&mut self, timer: TimerId, at: Time) {
        self.request(timer, Some((at, secs_of(at))));
    }

    /// [`AgentCtx::set_timer`], with the deadline also as the double-precision seconds NS-2
    /// would hold for it (e.g. accumulated `clock + interval`): it orders the expiry among
    /// events of the same nanosecond as NS-2 does. Ignored (the nanosecond time is used)
    /// unless it rounds to `at`.
    #[inline]
    pub fn set_timer_ns2(&mut self, timer: TimerId, at: Time, secs: f64) {
        // The double matters only for a deadline after now (`TimerSlot::apply`).
        let secs = if at > self.now && secs.is_finite() && Time::from_secs_f64(secs) == at {
            secs
        } else {
            secs_of(at)
        };
        self.request(timer, Some((at, secs)));
    }

    /// [`AgentCtx::set_timer_ns2`] for a deadline the caller rounded from the double itself
    /// (`at == Time::from_secs_f64(secs)`, as a CBR clock does), so it is not rounded again.
    #[inline]
    pub fn set_timer_ns2_rounded(&mut self, timer: TimerId, at: Time, secs: f64) {
        debug_assert_eq!(Time::from_secs_f64(secs), at, "{secs} s");
        // As `set_timer_ns2`: a deadline not after now ignores the double (`TimerSlot::apply`).
        let secs = if secs.is_finite() { secs } else { secs_of(at) };
        self.request(timer, Some((at, secs)));
    }

    /// Disarm `timer` (nothing happens if it is not armed).
    #[inline]
    pub fn cancel_timer(&mut self, timer: TimerId) {
        if self.untouched(timer) && self.timers[usize::from(timer.0)].armed.is_none() {
            return;
        }
        self.request(timer, None);
    }

    /// Arm `timer` at `at`, or disarm it for `None`: for agents that keep a deadline in their
    /// own state (or a sans-IO core's `poll_timeout`) and hand it over at the end of a call.
    #[inline(always)]
    pub fn sync_timer(&mut self, timer: TimerId, at: Option<Time>) {
        match at {
            None => self.cancel_timer(timer),
            Some(t) => {
                // Already armed there (a future deadline given without NS-2's double): no
                // change to make.
                let secs = secs_of(t);
                let armed = self.timers[usize::from(timer.0)].armed;
                if t > self.now && armed.is_some_and(|k| k.secs == secs) && self.untouched(timer) {
                    return;
                }
                self.request(timer, Some((t, secs)));
            }
        }
    }

    /// No change to `timer` was requested in this call yet.
    #[inline]
    fn untouched(&self, timer: TimerId) -> bool {
        self.io.reqs.is_empty() || !self.io.reqs.iter().any(|r| r.id == timer.0)
    }

    /// When `timer` expires, if armed (as changed in this call so far). A deadline set at or
    /// before now reads as set; it expires now.
    pub fn timer(&self, timer: TimerId) -> Option<Time> {
        if let Some(r) = self.io.reqs.iter().rev().find(|r| r.id == timer.0) {
            return r.at.map(|(t, _)| t);
        }
        self.timers[usize::from(timer.0)].armed.map(|k| k.time())
    }

    #[inline]
    fn request(&mut self, timer: TimerId, at: Option<(Time, f64)>) {
        assert!(
            usize::from(timer.0) < self.timers.len(),
            "timer {} of an agent with {} timers (Agent::timers)",
            timer.0,
            self.timers.len()
        );
        // One request per timer per call, placed by its last change.
        if let Some(i) = self.io.reqs.iter().position(|r| r.id == timer.0) {
            self.io.reqs.remove(i);
        }
        self.io.reqs.push(TimerReq { id: timer.0, at });
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
    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>);
    /// `timer` expired (it is disarmed now; re-arm it through `ctx` if needed). Agents without
    /// timers keep the default, which is never called.
    fn on_timer(&mut self, _timer: TimerId, _ctx: &mut AgentCtx<'_>) {}
    /// How many timers the agent uses (ids `0..timers()`), at most [`MAX_TIMERS`]; read once,
    /// when the network is built. Default 1.
    fn timers(&self) -> usize {
        1
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
