//! [`AgentHarness`]: one agent driven by hand, for agents' unit tests.
//!
//! Not part of the simulator's API (hidden from the docs); it lives here, beside the agent
//! interface, because it builds [`AgentCtx`]s and keeps timers by the simulator's rules.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Agent, AgentCtx, AgentIo, CallIo, TimerId, TimerPop, TimerSlot};
use crate::packet::{Direction, Packet};
use crate::store::{PacketStore, NONE_LENT};
use crate::Time;

/// One agent driven by hand, without a network: its calls get an [`AgentCtx`] whose packets
/// are returned to the caller and whose timers are kept here, with the simulator's rules
/// ([`crate::agent`]: a deadline not after now expires now; re-arming changes nothing until
/// the timer is due). For agents' unit tests.
pub struct AgentHarness<A: Agent> {
    /// The agent under test.
    pub agent: A,
    /// Its random stream (seed 7 unless replaced).
    pub rng: ChaCha8Rng,
    /// The time of the next call.
    pub now: Time,
    /// The agent's addressing, and a spare stream swapped with `rng` during a call.
    me: AgentIo,
    store: PacketStore,
    io: CallIo,
    timers: Vec<TimerSlot>,
    seq: u64,
}

impl<A: Agent> AgentHarness<A> {
    /// An agent of flow 1 sending in `dir`: at node 0 with its peer at node 1 when
    /// forward, at node 1 with its peer at node 0 when reverse.
    pub fn new(agent: A, dir: Direction) -> Self {
        let (node, peer) = match dir {
            Direction::Forward => (0, 1),
            Direction::Reverse => (1, 0),
        };
        let timers = vec![TimerSlot::default(); agent.timers()];
        AgentHarness {
            agent,
            rng: ChaCha8Rng::seed_from_u64(7),
            now: Time::ZERO,
            me: AgentIo {
                flow: 1,
                dir,
                node,
                peer,
                rng: ChaCha8Rng::seed_from_u64(0),
            },
            store: PacketStore::default(),
            io: CallIo::default(),
            timers,
            seq: 0,
        }
    }

    /// Set the time of the next call to `ms` milliseconds.
    pub fn at_ms(&mut self, ms: f64) -> &mut Self {
        self.now = Time::from_secs_f64(ms / 1000.0);
        self
    }

    /// Call the agent now; return the packets it sent, in order.
    pub fn call(&mut self, f: impl FnOnce(&mut A, &mut AgentCtx<'_>)) -> Vec<Packet> {
        let now_secs = self.now.as_nanos() as f64 / 1e9;
        std::mem::swap(&mut self.rng, &mut self.me.rng);
        {
            let mut ctx = AgentCtx::new(
                self.now,
                &mut self.me,
                self.store.lend(NONE_LENT).0,
                &mut self.io,
                &self.timers,
            );
            f(&mut self.agent, &mut ctx);
        }
        std::mem::swap(&mut self.rng, &mut self.me.rng);
        for r in self.io.reqs.drain(..) {
            let slot = &mut self.timers[usize::from(r.id)];
            slot.apply(r.at, self.now, now_secs, &mut self.seq);
        }
        self.store.settle();
        let store = &mut self.store;
        self.io
            .sent
            .drain(..)
            .map(|id| {
                let pkt = store[id].clone();
                store.free(id);
                pkt
            })
            .collect()
    }

    /// The flow starts.
    pub fn start(&mut self) -> Vec<Packet> {
        self.call(|a, c| a.on_start(c))
    }

    /// The flow stops.
    pub fn stop(&mut self) -> Vec<Packet> {
        self.call(|a, c| a.on_stop(c))
    }

    /// `pkt` arrives.
    pub fn deliver(&mut self, pkt: Packet) -> Vec<Packet> {
        self.call(|a, c| a.on_packet(&pkt, c))
    }

    /// When `timer` expires, if armed.
    pub fn timer(&self, timer: TimerId) -> Option<Time> {
        self.timers[usize::from(timer.0)].armed.map(|k| k.time())
    }

    /// The armed timer that expires first (by the simulator's order) and when.
    pub fn next_timer(&self) -> Option<(TimerId, Time)> {
        (0..self.timers.len())
            .filter_map(|i| self.timers[i].armed.map(|k| (k, i)))
            .min_by(|a, b| a.0.cmp(&b.0))
            .map(|(k, i)| (TimerId(i as u8), k.time()))
    }

    /// Fire every timer due now, in expiry order (timers they arm for now included).
    pub fn wake(&mut self) -> Vec<Packet> {
        let mut out = Vec::new();
        while let Some((id, t)) = self.next_timer() {
            if t > self.now {
                break;
            }
            out.extend(self.fire(id));
        }
        out
    }

    /// Advance to the first armed timer's deadline and fire it (nothing if none is armed).
    pub fn wake_next(&mut self) -> Vec<Packet> {
        match self.next_timer() {
            Some((id, t)) => {
                self.now = self.now.max(t);
                self.fire(id)
            }
            None => Vec::new(),
        }
    }

    /// Expire `timer` now (it must be armed).
    fn fire(&mut self, timer: TimerId) -> Vec<Packet> {
        let slot = &mut self.timers[usize::from(timer.0)];
        let key = slot.armed.expect("an armed timer");
        slot.queued = Some(key);
        assert!(matches!(slot.pop(key), TimerPop::Fire));
        self.call(|a, c| a.on_timer(timer, c))
    }
}
