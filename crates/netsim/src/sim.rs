//! The event loop: packets, links, queues and agents. Features only some experiments use plug
//! in as policies ([`crate::policy`]); the network is described with
//! [`crate::builder::NetworkBuilder`].
//!
//! Events are ordered by `(NS-2 double time, sequence)` ([`crate::sched`]: a timing wheel
//! with a heap for the far future); an event's nanosecond time is its double rounded; equal
//! times run in insertion order (NS-2's scheduler does the same). Each link holds at most one "transmission done" event, a transmission that
//! leaves its queue empty defers it until a packet arrives (`settle_tx_done`), and each agent
//! timer (a slot of `Simulator::timers`, armed through [`crate::agent::AgentCtx`]) holds at
//! most one live event. A packet's arrival at the next node is its own event, pushed when its
//! transmission starts with the sequence number NS-2 gives it then (LinkDelay::recv: arrival
//! first, then the queue's resume), so equal-time ties break exactly as in NS-2; a link that
//! fails takes its packets' arrivals out of the scheduler and drops the packets at once.

use std::collections::HashMap;
use std::fmt;

use crate::agent::{Agent, AgentCtx, AgentIo, AppCounters, CallIo, TimerId, TimerPop, TimerSlot};
use crate::agents::AnyAgent;
use crate::link::{Entry, Link, LinkHot, LinkId, LinkSettings, LinkUpdate, Tx};
use crate::loss::{LossConfig, LossModel};
use crate::packet::{Direction, FlowId, Header, NodeId, Packet};
use crate::policy::{EcnCapability, HostStage, Marking, NodePolicy, NodeStage};
use crate::queue::Slot;
use crate::routing::{Paths, Routes, DELIVER, NO_ROUTE, PATH_END};
pub(crate) use crate::sched::Key;
use crate::sched::{secs_of, EventQueue};
use crate::stats::{
    AgentSeries, DropCause, FlowMeters, FlowRecorder, LinkStats, QueueGauges, StatsConfig,
};
use crate::store::{PacketStore, NONE_LENT};
use crate::trace::{TraceEvent, TraceLine, Tracer};
use crate::Time;

/// Consecutive wake-ups of one agent at one instant before the run is declared stuck.
const MAX_WAKES_AT_ONE_INSTANT: u32 = 1_000_000;

/// A tag byte of its own (`repr(u8)`): left to the compiler, the tag hid in a niche of
/// `Slot`'s flags and the dispatch decoded it, five instructions an event; the nodes that
/// hold events are no larger for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Event {
    TxDone(u32),
    /// A packet reaches the far end of the link at its route cursor (`Slot::path`).
    Arrive(Slot),
    /// A timer expires (its index in `Simulator::timers`).
    Timer(u32),
    FlowStart(u32),
    FlowStop(u32),
    LinkState(u32),
    Sample,
    /// The head of an agent's outgoing host stage is ready to enter the network.
    Egress(u32),
    /// The head of an agent's incoming host stage is ready for the agent.
    Ingress(u32),
    /// The head of a node's processing delay (`NodeStage`) is ready to go on.
    Node(u32),
}

/// A link change scheduled at build time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LinkChange {
    pub at: Time,
    pub link: LinkId,
    pub update: LinkUpdate,
}

/// A run that ended in an inconsistent state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// Packet conservation failed: sent ≠ delivered + dropped + in flight.
    Accounting {
        /// The flow.
        flow: FlowId,
        /// The direction.
        dir: Direction,
        /// Packets sent.
        sent: u64,
        /// Packets delivered.
        delivered: u64,
        /// Packets dropped (all causes).
        dropped: u64,
        /// Packets still in queues, pipes or transmissions.
        in_flight: u64,
    },
    /// An agent kept asking to be woken at the same instant.
    AgentStuck {
        /// The flow.
        flow: FlowId,
        /// Whether the sender (else the receiver).
        sender: bool,
        /// The instant.
        at: Time,
    },
    /// Writing the trace failed.
    Trace(String),
    /// The run processed [`crate::Limits::max_events`] events before its end.
    EventBudget {
        /// The budget.
        events: u64,
        /// Simulated time reached.
        at: Time,
    },
    /// More packets were in the network at once than [`crate::Limits::max_packets_in_network`]
    /// (a source far faster than its path, with queues too large to drop the excess).
    PacketCeiling {
        /// The ceiling.
        packets: u64,
        /// When it was crossed.
        at: Time,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Accounting {
                flow,
                dir,
                sent,
                delivered,
                dropped,
                in_flight,
            } => write!(
                f,
                "ACCOUNTING MISMATCH flow {flow} {dir:?}: sent {sent} ≠ delivered {delivered} + \
                 dropped {dropped} + in flight {in_flight}"
            ),
            SimError::AgentStuck { flow, sender, at } => write!(
                f,
                "flow {flow} {} asked to be woken at {at} over and over",
                if *sender { "sender" } else { "receiver" }
            ),
            SimError::Trace(e) => write!(f, "writing the trace failed: {e}"),
            SimError::EventBudget { events, at } => write!(
                f,
                "the event budget of {events} events ran out at simulated time {at} (raise the \
                 budget or shorten the run)"
            ),
            SimError::PacketCeiling { packets, at } => write!(
                f,
                "more than {packets} packets were in the network at once at simulated time {at}: \
                 a source sends far faster than its path carries and its queues hold the excess"
            ),
        }
    }
}

impl std::error::Error for SimError {}

/// Packet conservation counters for one flow direction over the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Account {
    /// Packets that entered the network (agents' packets and packets policies created, such as
    /// time-exceeded notices).
    pub sent: u64,
    /// Packets handed to the destination agent.
    pub delivered: u64,
    /// Drops by cause ([`DropCause::index`]).
    pub dropped: [u64; 5],
    /// Packets in queues, transmissions or pipes when the run ended.
    pub in_flight: u64,
}

impl Account {
    /// Drops of all causes.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }
}

pub(crate) struct AgentSlot {
    pub agent: AnyAgent,
    /// Its addressing and random stream, as its calls' contexts read them.
    pub io: AgentIo,
    pub port: u32,
    /// The agent's timers are `Simulator::timers[timer_base ..][.. timer_count]`.
    pub timer_base: u32,
    pub timer_count: u8,
    /// Consecutive timer expiries at one instant (a run that never advances is an error).
    pub stuck: (Time, u32),
    pub sampled: bool,
    /// How the host marks the packets this agent sends.
    pub marking: Marking,
    /// Whether the host sets ECT on them.
    pub ecn: EcnCapability,
    /// Packets this agent sent, being processed before they enter the network.
    pub egress: HostStage,
    /// Packets for this agent, being processed before it gets them.
    pub ingress: HostStage,
    /// Its sends enter the first link as sent: no marking, no ECT, no node stage at its
    /// node ([`AgentSlot::sends_plainly`]). Set once, by [`Simulator::new`].
    pub plain: bool,
    /// The route cursor of this agent's packets to `path_dst`, while it is current
    /// ([`Paths::current`]; 0 until the first send).
    pub path: u32,
    pub path_dst: NodeId,
    /// Packets this agent sent into the network, and packets handed to it: its flow's
    /// [`Account::sent`] for its direction and [`Account::delivered`] for the other, counted
    /// here where the send and delivery paths already are (no flow lookup per packet).
    /// [`Simulator::account`] adds them to the flow's own counts.
    pub sent: u64,
    pub delivered: u64,
}

impl AgentSlot {
    /// Whether the host and node leave this agent's packets as the agent sent them: the
    /// host neither marks them nor sets ECT, and its node (`node_stages`: one per node, or
    /// none) has no processing delay. (A node's policy never touches the packets its own
    /// agents send: [`NodePolicy::on_forward`].) Its egress stage may still hold one.
    fn sends_plainly(&self, node_stages: &[NodeStage]) -> bool {
        self.marking == Marking::AsSent
            && self.ecn == EcnCapability::NotEct
            && node_stages
                .get(self.io.node as usize)
                .is_none_or(|s| !s.holds())
    }
}

pub(crate) struct FlowState {
    pub src: NodeId,
    pub dst: NodeId,
    pub start: Time,
    pub stop: Option<Time>,
    pub fids: (u32, u32),
    pub acct: [Account; 2],
    /// Data-direction drops by sequence number, when
    /// [`crate::NetworkBuilder::record_drop_causes`] asked for them.
    pub drop_causes: Option<HashMap<u64, DropCause>>,
}

fn dir_index(d: Direction) -> usize {
    match d {
        Direction::Forward => 0,
        Direction::Reverse => 1,
    }
}

/// Whether a packet enters its flow's statistics ([`crate::stats::FlowRecorder`]). In the data direction only
/// packets carrying application payload count: a TCP SYN is connection set-up, and the papers'
/// tables (seed 004's sent/received/delay/jitter columns) leave it out. Every packet still
/// enters the conservation [`Account`].
fn metered(pkt: &Packet) -> bool {
    pkt.dir == Direction::Reverse || pkt.payload > 0
}

/// Results of one flow.
#[derive(Clone, Debug)]
pub struct FlowResults {
    /// Source node.
    pub src: NodeId,
    /// Destination node.
    pub dst: NodeId,
    /// Data direction statistics.
    pub forward: FlowRecorder,
    /// Control direction statistics (ACKs, feedback, notices).
    pub reverse: FlowRecorder,
    /// Whole-run conservation counters, [forward, reverse].
    pub accounts: [Account; 2],
    /// The sender's application counters.
    pub sender_app: AppCounters,
}

/// Results of one link direction.
#[derive(Clone, Debug)]
pub struct LinkResults {
    /// From-node.
    pub from: NodeId,
    /// To-node.
    pub to: NodeId,
    /// Counters and queue occupancy.
    pub stats: LinkStats,
    /// RED counters, for RED queues.
    pub red: Option<crate::queue::RedCounters>,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunResults {
    /// The time the run stopped.
    pub end: Time,
    /// Per flow, by flow id.
    pub flows: Vec<FlowResults>,
    /// Per link direction, by link id.
    pub links: Vec<LinkResults>,
    /// Agents' sampled internals.
    pub agent_samples: Vec<AgentSeries>,
    /// Events processed.
    pub events: u64,
    /// Packet transmissions over links.
    pub packet_hops: u64,
}

/// Ceilings that end a run with an error naming the cause instead of letting it exhaust time
/// or memory ([`crate::NetworkBuilder::limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Events a run may process before it stops with [`crate::SimError::EventBudget`]
    /// (default: no budget).
    pub max_events: u64,
    /// Flows a network may have (default 1,000,000: each costs a few KiB of agent and
    /// statistics state before it sends anything).
    pub max_flows: usize,
    /// Packets that may be in the network at once (queued, transmitting, propagating or in a
    /// host stage) before the run stops with [`crate::SimError::PacketCeiling`] (default
    /// 2^24, about 2.5 GiB of packets; no finite queue configuration reaches it).
    pub max_packets_in_network: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_events: u64::MAX,
            max_flows: 1_000_000,
            max_packets_in_network: 1 << 24,
        }
    }
}

/// What a run measures beyond packet conservation and link counters, chosen when the network
/// is built ([`crate::NetworkBuilder::build_with`]). It is a type parameter, not a flag: the
/// statistics a run does not ask for are compiled out of its event loop (a run-time switch
/// read per packet made the loop slower, not faster).
pub trait Metering: sealed::Sealed + 'static {
    /// Feed the per-flow recorders ([`crate::stats::FlowRecorder`]: windowed counters, time
    /// series, delay and jitter statistics).
    const FLOWS: bool;
    /// Integrate the time-weighted queue occupancy of every link
    /// ([`crate::stats::LinkStats::queue_packets`], `queue_bytes`).
    const QUEUES: bool;

    /// [`Simulator::run`]. Implemented here, for each concrete metering, so that the event
    /// loop is compiled inside this crate (where its helpers inline) rather than in every
    /// crate that runs a simulator.
    #[doc(hidden)]
    fn run(sim: &mut Simulator<Self>, until: Time) -> Result<RunResults, SimError>
    where
        Self: Sized;

    /// [`Simulator::advance`], compiled here for the same reason.
    #[doc(hidden)]
    fn advance(sim: &mut Simulator<Self>, until: Time) -> Result<(), SimError>
    where
        Self: Sized;
}

/// Every statistic: what `run`, `sweep` and `reproduce` need. The default.
#[derive(Clone, Copy, Debug, Default)]
pub struct FullStats;

/// Packet conservation ([`Account`]: sent, delivered and dropped per flow, direction and
/// cause) and link counters only; flow recorders and queue gauges stay empty. For benchmarks
/// and for users who need only totals.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountersOnly;

impl Metering for FullStats {
    const FLOWS: bool = true;
    const QUEUES: bool = true;
    fn run(sim: &mut Simulator<Self>, until: Time) -> Result<RunResults, SimError> {
        sim.run_loop(until)
    }
    fn advance(sim: &mut Simulator<Self>, until: Time) -> Result<(), SimError> {
        sim.run_events(until)
    }
}

impl Metering for CountersOnly {
    const FLOWS: bool = false;
    const QUEUES: bool = false;
    fn run(sim: &mut Simulator<Self>, until: Time) -> Result<RunResults, SimError> {
        sim.run_loop(until)
    }
    fn advance(sim: &mut Simulator<Self>, until: Time) -> Result<(), SimError> {
        sim.run_events(until)
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::FullStats {}
    impl Sealed for super::CountersOnly {}
}

/// A built network, ready to run, measuring what `M` says.
pub struct Simulator<M: Metering = FullStats> {
    /// The clock between runs: the last event's time, or the end of the last run if later.
    /// During a run, events read `cur.time()` instead.
    now: Time,
    /// The key of the event being run. Its double time is NS-2's clock; its nanosecond time
    /// ([`Key::time`]) is rounded where it is read, not per event: most events (transmission
    /// ends, arrivals at routers) never read it, and the rounding was 8 instructions an event.
    cur: Key,
    seq: u64,
    heap: EventQueue<Event>,
    names: Vec<String>,
    /// Each node's policy for the packets it forwards.
    nodes: Vec<NodePolicy>,
    /// Each node's random processing delay; empty when no node has one.
    node_stages: Vec<NodeStage>,
    /// What a hop reads and writes of each link, by link id; the rest is in `links`.
    hot: Vec<LinkHot>,
    links: Vec<Link>,
    /// Each link's queue gauges, copied into its [`LinkStats`] at the end of a run.
    queue_gauges: Vec<QueueGauges>,
    /// Packets in the network; links and queues hold their handles.
    store: PacketStore,
    routes: Routes,
    /// Source routes the packets in the network follow.
    paths: Paths,
    agents: Vec<AgentSlot>,
    flows: Vec<FlowState>,
    /// Flow statistics, by `2 · flow + direction`; none unless `M::FLOWS`.
    meters: FlowMeters,
    changes: Vec<LinkChange>,
    /// Every agent's timers (`AgentSlot::timer_base`), and the agent each belongs to.
    timers: Vec<TimerSlot>,
    timer_agent: Vec<u32>,
    /// Packet numbering, and the packets and timer changes of the agent being called.
    calls: CallIo,
    events: u64,
    stats: StatsConfig,
    /// Set by the builder only: `run_events` picks the traced or the untraced event loop by it.
    tracer: Option<Tracer>,
    samples: Vec<(usize, AgentSeries)>,
    sample_buf: Vec<f64>,
    stuck: Option<SimError>,
    /// The event count at which the loop stops: the event budget, or the current count once
    /// `stuck` is set (one test an event for both).
    halt_at: u64,
    limits: Limits,
    /// Packets sent and neither delivered nor dropped yet.
    in_network: u64,
    metering: std::marker::PhantomData<M>,
}

impl<M: Metering> fmt::Debug for Simulator<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulator")
            .field("now", &self.now)
            .field("nodes", &self.names.len())
            .field("links", &self.links.len())
            .field("flows", &self.flows.len())
            .finish_non_exhaustive()
    }
}

impl<M: Metering> Simulator<M> {
    /// Assemble a validated network and schedule its start.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        names: Vec<String>,
        nodes: Vec<NodePolicy>,
        node_stages: Vec<NodeStage>,
        hot: Vec<LinkHot>,
        links: Vec<Link>,
        mut agents: Vec<AgentSlot>,
        flows: Vec<FlowState>,
        changes: Vec<LinkChange>,
        stats: StatsConfig,
        tracer: Option<Tracer>,
        limits: Limits,
    ) -> Simulator<M> {
        debug_assert_eq!(hot.len(), links.len());
        for a in &mut agents {
            a.plain = a.sends_plainly(&node_stages);
        }
        let routes = Routes::compute(names.len(), &link_ends(&hot, &links));
        let mut timer_agent = Vec::new();
        for (i, a) in agents.iter().enumerate() {
            debug_assert_eq!(a.timer_base as usize, timer_agent.len());
            timer_agent.extend(std::iter::repeat_n(i as u32, usize::from(a.timer_count)));
        }
        let mut sim = Simulator {
            now: Time::ZERO,
            cur: Key { secs: 0.0, seq: 0 },
            seq: 0,
            heap: EventQueue::new(),
            names,
            nodes,
            node_stages,
            queue_gauges: vec![QueueGauges::new(stats.bin_width); links.len()],
            hot,
            links,
            store: PacketStore::default(),
            routes,
            paths: Paths::default(),
            agents,
            meters: FlowMeters::new(&stats, if M::FLOWS { 2 * flows.len() } else { 0 }),
            flows,
            changes,
            timers: vec![TimerSlot::default(); timer_agent.len()],
            timer_agent,
            calls: CallIo::default(),
            events: 0,
            stats,
            tracer,
            samples: Vec::new(),
            sample_buf: Vec::new(),
            stuck: None,
            halt_at: u64::MAX,
            limits,
            in_network: 0,
            metering: std::marker::PhantomData,
        };
        // Like a Tcl script's `$ns at` lines: flow starts and stops in flow order, then link
        // changes, all before any packet event.
        for i in 0..sim.flows.len() {
            let (start, stop) = (sim.flows[i].start, sim.flows[i].stop);
            sim.schedule(start, Event::FlowStart(i as u32));
            if let Some(stop) = stop {
                sim.schedule(stop, Event::FlowStop(i as u32));
            }
        }
        for i in 0..sim.changes.len() {
            let at = sim.changes[i].at;
            sim.schedule(at, Event::LinkState(i as u32));
        }
        for (i, a) in sim.agents.iter().enumerate() {
            if a.sampled {
                sim.samples.push((
                    i,
                    AgentSeries {
                        flow: a.io.flow,
                        sender: a.io.dir == Direction::Forward,
                        names: a.agent.sample_names(),
                        times: Vec::new(),
                        values: Vec::new(),
                    },
                ));
            }
        }
        if !sim.samples.is_empty() {
            let w = Time::from_nanos(sim.bin_ns());
            sim.schedule(w, Event::Sample);
        }
        sim
    }

    /// The current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Node names, by id.
    pub fn node_names(&self) -> &[String] {
        &self.names
    }

    /// A flow's sender agent (for inspection after a run).
    pub fn sender(&self, flow: FlowId) -> Option<&AnyAgent> {
        self.agents.get(2 * flow as usize).map(|a| &a.agent)
    }

    /// A flow's receiver agent.
    pub fn receiver(&self, flow: FlowId) -> Option<&AnyAgent> {
        self.agents.get(2 * flow as usize + 1).map(|a| &a.agent)
    }

    /// The links a packet from `src` to `dst` takes under the current routes (empty when
    /// `dst` is unreachable or equal to `src`).
    pub fn path(&self, src: NodeId, dst: NodeId) -> Vec<LinkId> {
        let mut out = Vec::new();
        let mut at = src;
        while at != dst && out.len() <= self.links.len() {
            let Some(l) = self.routes.next_link(at, dst) else {
                return Vec::new();
            };
            out.push(l);
            at = self.links[l as usize].to;
        }
        out
    }

    /// The true cause of each dropped data packet of `flow`, by sequence number, when the flow
    /// was built with [`crate::NetworkBuilder::record_drop_causes`] (`None` otherwise).
    pub fn drop_causes(&self, flow: FlowId) -> Option<&HashMap<u64, DropCause>> {
        self.flows.get(flow as usize)?.drop_causes.as_ref()
    }

    /// The RED state of a link's queue, if it is RED.
    pub fn red(&self, link: LinkId) -> Option<&crate::queue::Red<Slot>> {
        self.links.get(link as usize)?.queue.as_red()
    }

    fn bin_ns(&self) -> u64 {
        u64::try_from(self.stats.bin_width.as_nanos())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    fn next_seq(&mut self) -> u64 {
        let s = self.seq;
        self.seq += 1;
        s
    }

    /// Schedule `ev` at the whole nanosecond `time` (the double that rounds back to it).
    fn schedule(&mut self, time: Time, ev: Event) -> Key {
        let key = Key {
            secs: secs_of(time),
            seq: self.next_seq(),
        };
        self.push(key, ev);
        key
    }

    /// Queue `ev` at `key`. Every event is at or after the one running: the clock (NS-2's
    /// double, and the nanoseconds rounded from it) never goes back.
    #[inline(always)]
    fn push(&mut self, key: Key, ev: Event) {
        debug_assert!(
            key > self.cur || self.events == 0,
            "{key:?} before {:?}",
            self.cur
        );
        self.heap.push_forward(key, ev);
    }

    /// Run until `until` (events at `until` itself do not run, as when an NS-2 script's
    /// `finish` at that time exits; an event whose NS-2 double-precision time is just below
    /// `until` does), check packet conservation, and report. Calling it again continues.
    pub fn run(&mut self, until: Time) -> Result<RunResults, SimError> {
        M::run(self, until)
    }

    /// Run the events due before `until` (as [`Simulator::run`] does) and stop there, without
    /// settling, checking or reporting: `advance` to a few times on the way, then `run` to the
    /// end, processes exactly the events of one `run` to the end, in the same order. For
    /// progress reports between steps ([`Simulator::now`], [`Simulator::events`]).
    pub fn advance(&mut self, until: Time) -> Result<(), SimError> {
        M::advance(self, until)
    }

    /// Heap bytes of the packet store: a slot for each of the most packets that were ever in
    /// the network at once (memory benchmarks separate them from per-flow state).
    pub fn packet_store_bytes(&self) -> usize {
        self.store.heap_bytes()
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    fn run_loop(&mut self, until: Time) -> Result<RunResults, SimError> {
        self.run_events(until)?;
        let until_secs = secs(until);
        // Deferred transmission ends the loop above would have run.
        for l in 0..self.links.len() {
            self.settle_tx_done(l, |k| k.secs < until_secs);
        }
        if until > self.now {
            self.now = until;
        }
        for (l, g) in self.links.iter_mut().zip(&mut self.queue_gauges) {
            g.finish(self.now);
            l.stats.queue_packets = g.occupancy(0);
            l.stats.queue_bytes = g.occupancy(1);
        }
        if let Some(t) = &mut self.tracer {
            t.flush().map_err(|e| SimError::Trace(e.to_string()))?;
        }
        self.check_accounts()?;
        Ok(self.results())
    }

    /// Run the events due before `until`, with the event loop compiled for tracing or not:
    /// whether a run traces is known before its first event, so the loop tests it once here
    /// rather than at every enqueue, dequeue and receive (`TRACE` reaches `trace_slot`).
    fn run_events(&mut self, until: Time) -> Result<(), SimError> {
        let r = if self.tracer.is_some() {
            self.event_loop::<true>(until)
        } else {
            self.event_loop::<false>(until)
        };
        // The clock never goes back: the later of the last event and the end of a run.
        self.now = self.now.max(self.cur.time());
        r
    }

    #[inline(always)]
    fn event_loop<const TRACE: bool>(&mut self, until: Time) -> Result<(), SimError> {
        let until_secs = secs(until);
        // Stop at `until`, but run an event NS-2's double clock puts just before it (a CBR
        // timer at 4.9999999999 s rounds to 5 s here). As the rounding is monotone, that is
        // "rounds before `until`, or to it from below".
        let due = |k: &Key| k.secs < until_secs;
        self.halt_at = self.limits.max_events;
        if self.stuck.is_some() {
            self.halt_at = self.events;
        }
        // The event is matched where it lies in the popped node (`EventQueue::pop_ref`): each
        // arm copies its fields out before anything is pushed, and the borrow ends there.
        while let Some((key, ev)) = self.heap.pop_ref(due) {
            if self.events == self.halt_at {
                let ev = *ev;
                return Err(self.halt(key, ev));
            }
            // Only the key: the nanosecond clock is derived from it where it is read.
            self.cur = key;
            self.events += 1;
            match *ev {
                Event::TxDone(l) => self.on_tx_done::<TRACE>(l as usize, key),
                Event::Arrive(s) => self.on_arrive::<TRACE>(s),
                Event::Timer(t) => self.on_timer::<TRACE>(t as usize, key),
                Event::FlowStart(f) => {
                    let f = f as usize;
                    self.call_agent::<TRACE>(2 * f + 1, |a, ctx| a.on_start(ctx));
                    self.call_agent::<TRACE>(2 * f, |a, ctx| a.on_start(ctx));
                }
                Event::FlowStop(f) => {
                    self.call_agent::<TRACE>(2 * f as usize, |a, ctx| a.on_stop(ctx))
                }
                Event::LinkState(i) => self.on_link_change(i as usize),
                Event::Sample => self.on_sample(),
                Event::Egress(a) => self.on_stage_done::<TRACE>(a as usize, key, true),
                Event::Ingress(a) => self.on_stage_done::<TRACE>(a as usize, key, false),
                Event::Node(n) => self.on_node_done::<TRACE>(n as usize, key),
            }
        }
        match self.stuck.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The loop popped (`key`, `ev`) at `halt_at`: the last event left the run stuck (the
    /// event goes back, the queue as it was after that event), or the budget is spent.
    #[cold]
    #[inline(never)]
    fn halt(&mut self, key: Key, ev: Event) -> SimError {
        if let Some(e) = self.stuck.take() {
            self.heap.push(key, ev);
            return e;
        }
        self.cur = key;
        SimError::EventBudget {
            events: self.events,
            at: self.cur.time(),
        }
    }

    /// Stop the event loop after the current event with `e` (the first reason kept).
    #[cold]
    fn stop(&mut self, e: SimError) {
        if self.stuck.is_none() {
            self.stuck = Some(e);
            self.halt_at = self.events;
        }
    }

    // ---- agents -------------------------------------------------------------------------

    /// Call agent `idx`, then send what it sent and apply its timer changes, in that order:
    /// NS-2 agents transmit before they re-arm a timer (CBR: send, then `resched`), so packets
    /// take their scheduler sequence numbers first (`crate::agent`, "Timers").
    ///
    /// Calls do not nest: what an agent sends enters the network at its own node, and reaches
    /// an agent (the peer, at another node) only through a link's or host stage's event.
    #[inline]
    fn call_agent<const TRACE: bool>(
        &mut self,
        idx: usize,
        f: impl FnOnce(&mut AnyAgent, &mut AgentCtx<'_>),
    ) {
        let now = self.cur.time();
        self.call_agent_lending::<TRACE>(idx, NONE_LENT, now, |a, _, ctx| f(a, ctx));
    }

    /// [`Simulator::call_agent`], lending the agent packet `lent` (or [`NONE_LENT`]) where it
    /// lies in the store, and freeing its slot when the call returns. `now` is `cur.time()`,
    /// rounded once by the caller for the statistics and this call.
    #[inline]
    fn call_agent_lending<const TRACE: bool>(
        &mut self,
        idx: usize,
        lent: u32,
        now: Time,
        f: impl FnOnce(&mut AnyAgent, Option<&Packet>, &mut AgentCtx<'_>),
    ) {
        debug_assert!(
            self.calls.sent.is_empty() && self.calls.reqs.is_empty(),
            "nested agent call"
        );
        let Some(slot) = self.agents.get_mut(idx) else {
            return;
        };
        let base = slot.timer_base as usize;
        let timers = &self.timers[base..base + usize::from(slot.timer_count)];
        {
            let (out, pkt) = self.store.lend(lent);
            let mut ctx = AgentCtx::new(now, &mut slot.io, out, &mut self.calls, timers);
            f(&mut slot.agent, pkt, &mut ctx);
        }
        self.store.settle();
        if lent != NONE_LENT {
            self.store.free(lent);
        }
        if !self.calls.sent.is_empty() {
            for i in 0..self.calls.sent.len() {
                let id = self.calls.sent[i];
                self.inject::<TRACE>(idx, id, now);
            }
            self.calls.sent.clear();
        }
        if !self.calls.reqs.is_empty() {
            let now_secs = self.cur.secs;
            for i in 0..self.calls.reqs.len() {
                let r = self.calls.reqs[i];
                let ti = base + usize::from(r.id);
                if let Some(key) = self.timers[ti].apply(r.at, now, now_secs, &mut self.seq) {
                    self.push(key, Event::Timer(ti as u32));
                }
            }
            self.calls.reqs.clear();
        }
    }

    /// Timer `ti`'s event popped: expire it, or re-queue it if it was re-armed later.
    fn on_timer<const TRACE: bool>(&mut self, ti: usize, key: Key) {
        let Some(timer) = self.timers.get_mut(ti) else {
            return;
        };
        match timer.pop(key) {
            TimerPop::Stale => {}
            TimerPop::Requeue(k) => self.push(k, Event::Timer(ti as u32)),
            TimerPop::Fire => {
                let idx = self.timer_agent[ti] as usize;
                let slot = &mut self.agents[idx];
                let now = self.cur.time();
                if slot.stuck.0 == now {
                    slot.stuck.1 += 1;
                    if slot.stuck.1 > MAX_WAKES_AT_ONE_INSTANT {
                        let e = SimError::AgentStuck {
                            flow: slot.io.flow,
                            sender: slot.io.dir == Direction::Forward,
                            at: now,
                        };
                        self.stop(e);
                        return;
                    }
                } else {
                    slot.stuck = (now, 0);
                }
                let id = TimerId((ti - slot.timer_base as usize) as u8);
                // The clock rounded once, for the wake count and the call.
                self.call_agent_lending::<TRACE>(idx, NONE_LENT, now, |a, _, ctx| {
                    a.on_timer(id, ctx)
                });
            }
        }
    }

    /// A packet agent `idx` sent (`id`, in the store, addressed and numbered by
    /// [`AgentCtx::send`]) enters the network at the agent's node, through the host's
    /// outgoing stage; `now` is `cur.time()`.
    ///
    /// A plain agent's packet ([`AgentSlot::plain`]) that its egress stage lets through goes
    /// straight to its first link's queue: one test instead of the marking, ECT, stage, node
    /// stage and second route checks; any other takes [`Simulator::inject_staged`].
    #[inline]
    fn inject<const TRACE: bool>(&mut self, idx: usize, id: u32, now: Time) {
        // `idx` is the agent `call_agent_lending` just called (looked up with `get_mut`).
        let slot = crate::unchecked::at_mut(&mut self.agents, idx);
        debug_assert_eq!(slot.plain, slot.sends_plainly(&self.node_stages));
        let pkt = &self.store[id];
        if !slot.plain || slot.egress.holds(pkt.protected) {
            self.inject_staged::<TRACE>(idx, id, now);
            return;
        }
        slot.sent += 1;
        let (node, cached, cached_dst) = (slot.io.node, slot.path, slot.path_dst);
        let (size, payload, dst, ttl, ect) = (pkt.size, pkt.payload, pkt.dst, pkt.ttl, pkt.ect);
        if M::FLOWS && metered(pkt) {
            // Agent `2 f + d` sends flow f's direction d, whose meter is the same index.
            self.meters.on_sent(idx, now, size, payload);
        }
        self.count_sent();
        let path = self.cached_route(idx, cached, cached_dst, dst);
        let next = self.paths.hop_entry(path);
        if next >= PATH_END {
            // To its own node, or to no route.
            self.pass_cold::<TRACE>(id, path, node);
            return;
        }
        let s = Slot {
            id,
            size,
            path,
            ttl,
            ect,
            ce: false,
        };
        // `pass`, less the node's policy: it never touches a packet at its source.
        self.enqueue::<TRACE>(next as usize, s);
    }

    /// [`Simulator::inject`] for a packet the host marks or sets ECT on, or that goes
    /// through the host's outgoing stage or its node's processing delay.
    #[cold]
    #[inline(never)]
    fn inject_staged<const TRACE: bool>(&mut self, idx: usize, id: u32, now: Time) {
        let slot = &mut self.agents[idx];
        let pkt = &mut self.store[id];
        slot.marking.apply(pkt);
        slot.ecn.apply(pkt);
        slot.sent += 1;
        // The cached route is read with the rest of the slot: one lookup per packet.
        let (node, cached, cached_dst) = (slot.io.node, slot.path, slot.path_dst);
        let (size, payload, protected) = (pkt.size, pkt.payload, pkt.protected);
        let (dst, ttl, ect) = (pkt.dst, pkt.ttl, pkt.ect);
        let meter = M::FLOWS && metered(pkt);
        if meter {
            // Agent `2 f + d` sends flow f's direction d, whose meter is the same index.
            self.meters.on_sent(idx, now, size, payload);
        }
        let staged = slot.egress.holds(protected);
        self.count_sent();
        if staged {
            self.enter_stage(idx, id, true);
            return;
        }
        let path = self.cached_route(idx, cached, cached_dst, dst);
        let s = Slot {
            id,
            size,
            path,
            ttl,
            ect,
            ce: false,
        };
        self.arrive::<TRACE>(s, node);
    }

    /// The route from agent `idx`'s node to `dst`, cached in the agent's slot for the
    /// current routes.
    #[inline]
    fn agent_path(&mut self, idx: usize, dst: NodeId) -> u32 {
        let slot = &self.agents[idx];
        let (cached, cached_dst) = (slot.path, slot.path_dst);
        self.cached_route(idx, cached, cached_dst, dst)
    }

    /// Agent `idx`'s cached route (`cached`, to `cached_dst`, read by the caller with the
    /// rest of its slot) if it is current and goes to `dst`; else a fresh one, cached.
    #[inline(always)]
    fn cached_route(&mut self, idx: usize, cached: u32, cached_dst: NodeId, dst: NodeId) -> u32 {
        if self.paths.current(cached) && cached_dst == dst {
            cached
        } else {
            self.reroute(idx, dst)
        }
    }

    /// Route agent `idx`'s packets to `dst` afresh, and cache the route in its slot.
    #[cold]
    fn reroute(&mut self, idx: usize, dst: NodeId) -> u32 {
        let path = self.route(self.agents[idx].io.node, dst);
        let slot = &mut self.agents[idx];
        (slot.path, slot.path_dst) = (path, dst);
        path
    }

    /// The current route from `from` to `dst`.
    #[cold]
    fn route(&mut self, from: NodeId, dst: NodeId) -> u32 {
        let links = &self.links;
        self.paths
            .route(&self.routes, |l| links[l as usize].to, from, dst)
    }

    /// Packet `id`, in the store, as a hop record with no route yet (routed where it next
    /// reaches a node).
    fn unrouted(&self, id: u32) -> Slot {
        let pkt = &self.store[id];
        Slot {
            id,
            size: pkt.size,
            path: 0,
            ttl: pkt.ttl,
            ect: pkt.ect,
            ce: false,
        }
    }

    /// Queue packet `id` in the agent's outgoing (`egress`) or incoming host stage.
    fn enter_stage(&mut self, idx: usize, id: u32, egress: bool) {
        let (now_secs, seq) = (self.cur.secs, self.next_seq());
        let protected = self.store[id].protected;
        let slot = &mut self.agents[idx];
        let stage = if egress {
            &mut slot.egress
        } else {
            &mut slot.ingress
        };
        if let Some(key) = stage.push(id, protected, now_secs, seq) {
            self.push(key, stage_event(idx, egress));
        }
    }

    /// The head of an agent's host stage is done: send it on, and arm the next.
    fn on_stage_done<const TRACE: bool>(&mut self, idx: usize, key: Key, egress: bool) {
        let Some(slot) = self.agents.get_mut(idx) else {
            return;
        };
        let stage = if egress {
            &mut slot.egress
        } else {
            &mut slot.ingress
        };
        let Some((id, next)) = stage.pop(key) else {
            return;
        };
        if let Some(next) = next {
            self.push(next, stage_event(idx, egress));
        }
        if egress {
            let node = self.agents[idx].io.node;
            let mut s = self.unrouted(id);
            s.path = self.agent_path(idx, self.store[id].dst);
            self.arrive::<TRACE>(s, node);
        } else {
            self.hand_over::<TRACE>(idx, id);
        }
    }

    // ---- forwarding ---------------------------------------------------------------------

    /// The packet `s` is at `node` (`s.path` is the cursor of its next path entry): wait out
    /// the node's processing delay if it has one, then deliver it or forward it. Inlined, with
    /// `pass`, into each caller (a hop's arrival and an agent's send): the calls cost more
    /// than the work.
    #[inline(always)]
    fn arrive<const TRACE: bool>(&mut self, s: Slot, node: NodeId) {
        if !self.node_stages.is_empty() && self.node_stages[node as usize].holds() {
            // The stage holds handles: the packet keeps its TTL, and is routed when it leaves.
            self.store[s.id].ttl = s.ttl;
            let (now_secs, seq) = (self.cur.secs, self.next_seq());
            if let Some(key) = self.node_stages[node as usize].push(s.id, now_secs, seq) {
                self.push(key, Event::Node(node));
            }
            return;
        }
        self.pass::<TRACE>(s, node);
    }

    /// [`Simulator::pass`], out of line, for the rare packet `id` an agent at `node` sends
    /// to its own node or to an unreachable one (on route `path`).
    #[cold]
    #[inline(never)]
    fn pass_cold<const TRACE: bool>(&mut self, id: u32, path: u32, node: NodeId) {
        let mut s = self.unrouted(id);
        s.path = path;
        self.pass::<TRACE>(s, node);
    }

    /// The head of a node's processing delay is ready: send it on, and arm the next.
    fn on_node_done<const TRACE: bool>(&mut self, n: usize, key: Key) {
        let Some((id, next)) = self.node_stages.get_mut(n).and_then(|s| s.pop(key)) else {
            return;
        };
        if let Some(next) = next {
            self.push(next, Event::Node(n as u32));
        }
        let s = self.unrouted(id);
        self.pass::<TRACE>(s, n as NodeId);
    }

    /// Deliver packet `s`, now processed at `node`, or forward it on the next link of its
    /// route: a hop reads the route's next entry, not the packet or the routing table.
    #[inline(always)]
    fn pass<const TRACE: bool>(&mut self, mut s: Slot, node: NodeId) {
        if !self.paths.current(s.path) {
            // Not routed yet, or routed before the routes last changed.
            s.path = self.route(node, self.store[s.id].dst);
        }
        let next = self.paths.hop_entry(s.path);
        if next >= PATH_END {
            // The packet's own TTL is brought up to date for its agent (or its drop).
            self.store[s.id].ttl = s.ttl;
            if next == DELIVER {
                debug_assert_eq!(node, self.store[s.id].dst);
                self.deliver::<TRACE>(s.id, node);
            } else {
                debug_assert_eq!(next, NO_ROUTE);
                self.drop_id(None, s.id, DropCause::Down);
            }
            return;
        }
        if let Some(&p) = self.nodes.get(node as usize) {
            if p != NodePolicy::Forward {
                p.on_forward(&mut self.store[s.id], node);
            }
        }
        self.enqueue::<TRACE>(next as usize, s);
    }

    /// Out of line: it ends the cycle agent → send → `arrive` → `pass` → agent, so that the
    /// rest of the hop path inlines.
    #[inline(never)]
    fn deliver<const TRACE: bool>(&mut self, id: u32, node: NodeId) {
        let pkt = &self.store[id];
        let idx = 2 * pkt.flow as usize + usize::from(pkt.dir == Direction::Forward);
        let Some(agent) = self.agents.get(idx).filter(|a| a.io.node == node) else {
            // Addressed to a node where this flow has no agent.
            self.drop_id(None, id, DropCause::Down);
            return;
        };
        if agent.ingress.holds(pkt.protected) {
            self.enter_stage(idx, id, false);
            return;
        }
        self.hand_over::<TRACE>(idx, id);
    }

    /// Give packet `id` to its destination agent: it is delivered, read where it lies, and
    /// leaves the store when the agent returns.
    #[inline]
    fn hand_over<const TRACE: bool>(&mut self, idx: usize, id: u32) {
        self.in_network -= 1;
        self.agents[idx].delivered += 1;
        let pkt = &self.store[id];
        // Rounded once, for the statistics and the agent's call.
        let now = self.cur.time();
        if M::FLOWS && metered(pkt) {
            // Agent `2 f + 1 - d` receives flow f's direction d (meter `2 f + d`).
            let (i, m) = (idx ^ 1, &mut self.meters);
            m.on_delivered(i, now, pkt.sent_at, pkt.size, pkt.payload);
            if pkt.exposed {
                m.on_exposed(i, now);
            }
            if pkt.ce {
                m.on_marked(i, now);
            }
        }
        self.call_agent_lending::<TRACE>(idx, id, now, |a, pkt, ctx| {
            if let Some(pkt) = pkt {
                a.on_packet(pkt, ctx);
            }
        });
    }

    /// Drop packet `s`: a mark it got while queued and its TTL reach the packet first.
    fn drop_slot(&mut self, link: Option<usize>, s: Slot, cause: DropCause) {
        let id = self.unslot(s);
        self.store[id].ttl = s.ttl;
        self.drop_id(link, id, cause);
    }

    /// Drop a packet held in the store, freeing its slot.
    fn drop_id(&mut self, link: Option<usize>, id: u32, cause: DropCause) {
        self.in_network -= 1;
        if let Some(l) = link {
            self.trace_id(TraceEvent::Drop, l, id, Some(cause));
            self.links[l].stats.drops[cause.index()] += 1;
        }
        let pkt = &self.store[id];
        let f = &mut self.flows[pkt.flow as usize];
        let d = dir_index(pkt.dir);
        f.acct[d].dropped[cause.index()] += 1;
        if M::FLOWS && metered(pkt) {
            let i = 2 * pkt.flow as usize + d;
            self.meters.on_dropped(i, self.cur.time(), cause);
        }
        // Only payload-carrying data packets: their sequence numbers are the ones a TFRC
        // receiver declares lost.
        if let Some(m) = &mut f.drop_causes {
            if pkt.dir == Direction::Forward && pkt.payload > 0 {
                if let Ok(seq) = u64::try_from(pkt.seq) {
                    m.insert(seq, cause);
                }
            }
        }
        self.store.free(id);
    }

    /// Record the link's queue length now in its gauges. Inlined, with the gauges' common
    /// case: most calls stop at the zero-to-zero test (an uncongested link's queue stays
    /// empty), and a call would cost more than the update.
    #[inline(always)]
    fn note_queue(&mut self, l: usize) {
        if M::QUEUES {
            // `l` is a link id, as `hot_at`'s; there is one gauge per link.
            let (n, b) = crate::unchecked::at_mut(&mut self.links, l).queue.lens();
            let cur = self.cur;
            crate::unchecked::at_mut(&mut self.queue_gauges, l).set(|| cur.time(), n, b);
        }
    }

    /// Link `l`'s hot record, `l` read from a route's path (`crate::unchecked`: no bounds
    /// check on the hop path).
    #[inline(always)]
    fn hot_at(&mut self, l: usize) -> &mut LinkHot {
        crate::unchecked::at_mut(&mut self.hot, l)
    }

    /// Offer packet `slot` (its cursor at link `l` on its route) to link `l`'s queue.
    #[inline(always)]
    fn enqueue<const TRACE: bool>(&mut self, l: usize, slot: Slot) {
        self.trace_slot::<TRACE>(TraceEvent::Enqueue, l, &slot);
        let entry = self.hot_at(l).entry;
        if entry == Entry::Down {
            self.drop_slot(Some(l), slot, DropCause::Down);
            return;
        }
        let went_idle = self.settle_before_now(l);
        // Only RED reads the time: DropTail does not pay for its rounding. The closure holds
        // the double by value (a reference would keep the key in memory).
        let secs = self.cur.secs;
        // An idle link's queue is empty: with an empty DropTail, what enqueue, dequeue and the
        // queue gauge update (zero to zero) would do is nothing; RED does only its arrival's
        // bookkeeping (`Queue::pass_idle`). Transmit at once.
        if self.hot_at(l).tx == Tx::Idle
            && (entry == Entry::Direct || self.links[l].queue.pass_idle(went_idle, &slot, secs))
        {
            debug_assert!(entry == Entry::Queue || self.links[l].queue.passes_through(&slot));
            self.transmit::<TRACE>(l, slot, false);
            return;
        }
        let link = &mut self.links[l];
        let dropped = link.queue.enqueue_at(
            slot,
            move || Time::from_secs_f64(secs),
            &mut link.cold.queue_rng,
        );
        if let Some(d) = dropped {
            self.drop_slot(Some(l), d.pkt, d.cause);
        }
        // NS-2 Queue::recv: an idle link takes the packet at once.
        let hot = self.hot_at(l);
        match hot.tx {
            Tx::Idle => self.start_tx::<TRACE>(l),
            Tx::Deferred => {
                // A packet now waits: the transmission's end must be an event after all.
                hot.tx = Tx::Queued;
                let k = hot.busy_until;
                self.push(k, Event::TxDone(l as u32));
                self.note_queue(l);
            }
            Tx::Queued => self.note_queue(l),
        }
    }

    /// Run the link's deferred transmission-done now if `ran(key)` says the scheduler would
    /// already have run it.
    ///
    /// A transmission that leaves the queue empty gets no event (`start_tx`): its end would
    /// only find nothing to send, mark the link idle and record an unchanged (zero) queue
    /// length. Its key is kept, with the sequence number the event would have had, and
    /// whatever next touches the link first settles it: if the key is before the current
    /// event's, those effects happen now, exactly as they would have then (RED starts its idle
    /// period at the transmission's end; the zero-length gauge update is a no-op on the
    /// time-weighted areas); if not, the link is still busy and an arriving packet queues the
    /// event with that key. Event order, and so every result, is unchanged; only the `events`
    /// count drops (about a quarter of all events on a dumbbell's uncongested links).
    fn settle_tx_done(&mut self, l: usize, ran: impl Fn(Key) -> bool) {
        let hot = &self.hot[l];
        if hot.tx == Tx::Deferred && ran(hot.busy_until) {
            self.end_deferred_tx(l);
        }
    }

    /// [`Simulator::settle_tx_done`] before the current event, where a packet reaches the
    /// link (a closure there was an out-of-line call per enqueue). The link is then idle, so
    /// the packet goes to `Queue::pass_idle`, which also takes the queue's part of the settled
    /// end (RED's idle period from the returned double time): one call instead of two.
    #[inline(always)]
    fn settle_before_now(&mut self, l: usize) -> Option<f64> {
        let cur = self.cur;
        let hot = self.hot_at(l);
        if hot.tx == Tx::Deferred && hot.busy_until < cur {
            return Some(self.idle_since_deferred_end(l));
        }
        None
    }

    /// The deferred transmission end of link `l` is past: the link is idle since then.
    #[inline(always)]
    fn end_deferred_tx(&mut self, l: usize) {
        let secs = self.idle_since_deferred_end(l);
        // What `on_tx_done` → `start_tx` does at the end with nothing queued (only RED, among
        // the queues that are not `Entry::Direct`, does something).
        if self.hot[l].entry != Entry::Direct {
            self.links[l].queue.went_idle_secs(secs);
        }
    }

    /// Mark link `l`, whose deferred transmission end is past, idle; return that end's double
    /// time (RED's idle period starts there).
    #[inline(always)]
    fn idle_since_deferred_end(&mut self, l: usize) -> f64 {
        let hot = self.hot_at(l);
        hot.tx = Tx::Idle;
        let secs = hot.busy_until.secs;
        // No gauge update: the queue has been empty since the transmission started (a packet
        // that queues behind it makes the event real), and every queue change records itself
        // in the gauges, so they read zero already and the update would be zero to zero.
        debug_assert!(
            !M::QUEUES || (self.links[l].queue.lens() == (0, 0) && self.queue_gauges[l].is_zero())
        );
        secs
    }

    /// The link is free: start the next transmission, if a packet waits.
    fn start_tx<const TRACE: bool>(&mut self, l: usize) {
        let secs = self.cur.secs;
        let queue = &mut self.links[l].queue;
        let Some(slot) = queue.dequeue_at(move || Time::from_secs_f64(secs)) else {
            self.hot[l].tx = Tx::Idle;
            self.note_queue(l);
            return;
        };
        let waiting = !queue.is_empty();
        self.note_queue(l);
        self.transmit::<TRACE>(l, slot, waiting);
    }

    /// A packet leaves a queue: a mark the queue set reaches the packet.
    #[inline]
    fn unslot(&mut self, s: Slot) -> u32 {
        if s.ce {
            self.store[s.id].ce = true;
        }
        s.id
    }

    /// The packet in `slot` left the link's queue (`waiting`: packets wait behind it): occupy
    /// the link for its transmission, then propagate it.
    #[inline(always)]
    fn transmit<const TRACE: bool>(&mut self, l: usize, mut slot: Slot, waiting: bool) {
        let id = self.unslot(slot);
        slot.ce = false;
        self.trace_slot::<TRACE>(TraceEvent::Dequeue, l, &slot);
        let size = slot.size;
        let hot = self.hot_at(l);
        hot.tx_packets += 1;
        hot.tx_bytes += u64::from(size);
        // NS-2 LinkDelay: txtime = 8 · size / bandwidth in double; the arrival is scheduled
        // at clock + (txtime + delay), the queue's resume at clock + txtime.
        let wired = 8.0 * f64::from(size) / hot.bandwidth_f64;
        let delay_secs = hot.delay_secs;
        let (txt, delivered) = if hot.wireless {
            wireless_exchange(&mut self.links[l], &self.store[id], size, wired)
        } else {
            (wired, true)
        };
        // The events' nanosecond times are these double times rounded (`Key::time`), not
        // `now + tx_ns`: adding a rounded serialisation time hop after hop drifts by up to
        // 0.5 ns per transmission, enough to swap two events NS-2 runs at (mathematically) the
        // same instant — a queue's resume and a packet's arrival — which decides which flow a
        // full DropTail queue drops. Neither is before now, nor the arrival before the end,
        // with no clamp: `txt` and the delay are never negative (bandwidths are positive) and
        // floating-point addition is monotone (`push` asserts the first).
        let done_secs = self.cur.secs + txt;
        let arrival_secs = self.cur.secs + (txt + delay_secs);
        if delivered {
            // The arrival is scheduled first, then the resume (a shortened delay lets this
            // packet overtake earlier ones still propagating, as in NS-2).
            let key = Key {
                secs: arrival_secs,
                seq: self.next_seq(),
            };
            self.push(key, Event::Arrive(slot));
        } else {
            debug_assert!(self.links[l].lost_in_tx.is_none());
            self.links[l].lost_in_tx = Some(slot);
        }
        let key = Key {
            secs: done_secs,
            seq: self.next_seq(),
        };
        let hot = self.hot_at(l);
        hot.busy_until = key;
        // Nothing waits and nothing fails at the end: defer the event (`settle_tx_done`).
        if !waiting && delivered {
            hot.tx = Tx::Deferred;
        } else {
            hot.tx = Tx::Queued;
            self.push(key, Event::TxDone(l as u32));
        }
    }

    fn on_tx_done<const TRACE: bool>(&mut self, l: usize, key: Key) {
        let Some(hot) = self.hot.get(l) else {
            return;
        };
        if hot.tx != Tx::Queued || hot.busy_until != key {
            return; // the link went down meanwhile
        }
        if let Some(s) = self.links[l].lost_in_tx.take() {
            self.drop_slot(Some(l), s, DropCause::Link);
        }
        self.start_tx::<TRACE>(l);
    }

    /// Packet `s` reaches the far end of the link at its route cursor (a link failure
    /// removes the arrivals of the packets it drops from the scheduler, so every arrival that
    /// pops is live). Inlined into the event loop, its one caller: most events are arrivals.
    #[inline(always)]
    fn on_arrive<const TRACE: bool>(&mut self, mut s: Slot) {
        let l = self.paths.hop_entry(s.path) as usize;
        let hot = self.hot_at(l);
        let to = hot.to;
        // NS-2 order after the delay line: loss module, TTL checker, `r` trace, node.
        if hot.lossy {
            let link = &mut self.links[l];
            if let Some(m) = &mut link.loss {
                if m.lose(&self.store[s.id], &mut link.cold.loss_rng) {
                    self.drop_slot(Some(l), s, DropCause::Link);
                    return;
                }
            }
        }
        // TTLChecker: ttl − 1 ≤ 0 drops; the link's policy may send a notice back.
        if s.ttl <= 1 {
            let link = &self.links[l];
            let pkt = &mut self.store[s.id];
            pkt.ttl = s.ttl;
            let notice = link.ttl_expiry.notice(pkt, to, self.cur.time());
            self.drop_slot(Some(l), s, DropCause::Ttl);
            if let Some(n) = notice {
                self.send_created::<TRACE>(n);
            }
            return;
        }
        s.ttl -= 1;
        self.trace_slot::<TRACE>(TraceEvent::Receive, l, &s);
        s.path += 1;
        self.arrive::<TRACE>(s, to);
    }

    /// One more packet in the network; past the ceiling the run stops after this event.
    #[inline]
    fn count_sent(&mut self) {
        self.in_network += 1;
        if self.in_network > self.limits.max_packets_in_network {
            self.packet_ceiling();
        }
    }

    #[cold]
    #[inline(never)]
    fn packet_ceiling(&mut self) {
        self.stop(SimError::PacketCeiling {
            packets: self.limits.max_packets_in_network,
            at: self.cur.time(),
        });
    }

    /// A packet a policy created enters the network at its source node.
    fn send_created<const TRACE: bool>(&mut self, mut pkt: Packet) {
        pkt.uid = self.calls.next_uid;
        self.calls.next_uid += 1;
        self.count_sent();
        let f = &mut self.flows[pkt.flow as usize];
        let d = dir_index(pkt.dir);
        f.acct[d].sent += 1;
        if M::FLOWS {
            let i = 2 * pkt.flow as usize + d;
            self.meters.on_sent(i, self.cur.time(), pkt.size, 0);
        }
        let at = pkt.src;
        let id = self.store.insert(pkt);
        let s = self.unrouted(id);
        self.arrive::<TRACE>(s, at);
    }

    // ---- link failures ------------------------------------------------------------------

    fn on_link_change(&mut self, i: usize) {
        let Some(&c) = self.changes.get(i) else {
            return;
        };
        let l = c.link as usize;
        let cur = self.cur;
        self.settle_tx_done(l, |k| k < cur);
        let up = match c.update {
            LinkUpdate::Set(s) => {
                self.apply_settings(l, s);
                return;
            }
            LinkUpdate::Down => false,
            LinkUpdate::Up => true,
        };
        if self.hot[l].up() == up {
            return;
        }
        self.hot[l].entry = if up {
            Entry::of(&self.links[l].queue)
        } else {
            Entry::Down
        };
        if !up {
            // NS-2 resets the link's connectors: queued and in-transit packets are dropped.
            let now = self.cur.time();
            let link = &mut self.links[l];
            let mut victims: Vec<Slot> = link.queue.clear(now).into_iter().collect();
            victims.extend(link.lost_in_tx.take());
            self.hot[l].tx = Tx::Idle;
            // Packets propagating: their arrival events, in the order they would have arrived.
            let (l32, paths) = (l as u32, &self.paths);
            victims.extend(
                self.heap
                    .extract(|e| matches!(*e, Event::Arrive(s) if paths.entry(s.path) == l32))
                    .into_iter()
                    .filter_map(|(_, e)| match e {
                        Event::Arrive(s) => Some(s),
                        _ => None,
                    }),
            );
            for s in victims {
                self.drop_slot(Some(l), s, DropCause::Down);
            }
            self.note_queue(l);
        }
        self.routes = Routes::compute(self.names.len(), &link_ends(&self.hot, &self.links));
        self.paths.new_epoch();
    }

    /// New link parameters; transmissions already started keep theirs (`start_tx` reads
    /// them when a transmission starts, as NS-2's `LinkDelay::recv` does).
    fn apply_settings(&mut self, l: usize, s: LinkSettings) {
        let (link, hot) = (&mut self.links[l], &mut self.hot[l]);
        if let Some(b) = s.bandwidth_bps {
            link.bandwidth_bps = b;
            hot.bandwidth_f64 = b as f64;
        }
        if let Some(d) = s.delay {
            hot.delay_secs = d.as_secs_f64();
        }
        if let Some(n) = s.queue_limit {
            link.queue.set_limit(n);
            if hot.up() {
                hot.entry = Entry::of(&link.queue);
            }
        }
        if let Some(p) = s.loss_rate {
            hot.lossy = true;
            match &mut link.loss {
                Some(m) => m.set_rate(p),
                None => link.loss = Some(LossModel::new(&LossConfig::Bernoulli { p })),
            }
        }
    }

    // ---- sampling, tracing, accounting --------------------------------------------------

    fn on_sample(&mut self) {
        for (idx, series) in &mut self.samples {
            self.sample_buf.clear();
            self.agents[*idx].agent.sample(&mut self.sample_buf);
            // Keep rows rectangular even if an agent misreports.
            self.sample_buf.resize(series.names.len(), f64::NAN);
            series.times.push(self.cur.time());
            series.values.extend_from_slice(&self.sample_buf);
        }
        let next = Time::from_nanos(self.cur.time().as_nanos().saturating_add(self.bin_ns()));
        self.schedule(next, Event::Sample);
    }

    /// Trace an event of packet `s` (between nodes: its TTL is in `s`) in a traced run's
    /// event loop; the untraced loop has no code here.
    #[inline(always)]
    fn trace_slot<const TRACE: bool>(&mut self, ev: TraceEvent, l: usize, s: &Slot) {
        if TRACE {
            debug_assert!(self.tracer.is_some());
            self.store[s.id].ttl = s.ttl;
            self.trace_id(ev, l, s.id, None);
        }
    }

    /// Trace an event of the packet `id` in the store, if tracing is on. Inlined so that the
    /// usual case (off) costs one branch at the call site; the line itself is built out of
    /// line.
    #[inline(always)]
    fn trace_id(&mut self, ev: TraceEvent, l: usize, id: u32, cause: Option<DropCause>) {
        if let Some(t) = &mut self.tracer {
            let link = &self.links[l];
            let (pkt, now) = (&self.store[id], self.cur.time());
            trace_line(t, now, link, &self.flows, &self.agents, ev, pkt, cause);
        }
    }

    fn check_accounts(&mut self) -> Result<(), SimError> {
        for f in &mut self.flows {
            f.acct[0].in_flight = 0;
            f.acct[1].in_flight = 0;
        }
        for l in &self.links {
            for id in l.packets() {
                let p = &self.store[id];
                self.flows[p.flow as usize].acct[dir_index(p.dir)].in_flight += 1;
            }
        }
        // Packets propagating.
        let (store, flows) = (&self.store, &mut self.flows);
        self.heap.for_each(|_, e| {
            if let Event::Arrive(s) = *e {
                let p = &store[s.id];
                flows[p.flow as usize].acct[dir_index(p.dir)].in_flight += 1;
            }
        });
        // Packets in host stages and node delays are sent but not yet delivered.
        let staged = self
            .agents
            .iter()
            .flat_map(|a| a.egress.packets().chain(a.ingress.packets()));
        for id in staged.chain(self.node_stages.iter().flat_map(NodeStage::packets)) {
            let p = &self.store[id];
            self.flows[p.flow as usize].acct[dir_index(p.dir)].in_flight += 1;
        }
        for i in 0..self.flows.len() {
            for (d, a) in self.accounts(i).iter().enumerate() {
                if a.sent != a.delivered + a.dropped_total() + a.in_flight {
                    return Err(SimError::Accounting {
                        flow: i as FlowId,
                        dir: if d == 0 {
                            Direction::Forward
                        } else {
                            Direction::Reverse
                        },
                        sent: a.sent,
                        delivered: a.delivered,
                        dropped: a.dropped_total(),
                        in_flight: a.in_flight,
                    });
                }
            }
        }
        Ok(())
    }

    /// Flow `f`'s accounts in both directions: its own counts plus its agents' sends and
    /// deliveries ([`AgentSlot::sent`]).
    fn accounts(&self, f: usize) -> [Account; 2] {
        let mut acct = self.flows[f].acct;
        for (d, a) in acct.iter_mut().enumerate() {
            // Agent `2 f + d` sends direction d; agent `2 f + 1 - d` receives it.
            if let Some(s) = self.agents.get(2 * f + d) {
                a.sent += s.sent;
            }
            if let Some(r) = self.agents.get(2 * f + 1 - d) {
                a.delivered += r.delivered;
            }
        }
        acct
    }

    fn results(&self) -> RunResults {
        RunResults {
            end: self.now,
            flows: self
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| FlowResults {
                    src: f.src,
                    dst: f.dst,
                    forward: self.meters.recorder(2 * i),
                    reverse: self.meters.recorder(2 * i + 1),
                    accounts: self.accounts(i),
                    sender_app: self.agents[2 * i].agent.app_counters(),
                })
                .collect(),
            links: self
                .links
                .iter()
                .zip(&self.hot)
                .map(|(l, h)| LinkResults {
                    from: l.from,
                    to: l.to,
                    stats: LinkStats {
                        tx_packets: h.tx_packets,
                        tx_bytes: h.tx_bytes,
                        ..l.stats.clone()
                    },
                    red: l.queue.as_red().map(|r| r.counters()),
                })
                .collect(),
            agent_samples: self.samples.iter().map(|(_, s)| s.clone()).collect(),
            events: self.events,
            // Every transmission counts on its link: the sum is the packet-hops.
            packet_hops: self.hot.iter().map(|h| h.tx_packets).sum(),
        }
    }
}

/// Write one trace line (out of line: tracing is off in most runs).
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn trace_line(
    t: &mut Tracer,
    now: Time,
    link: &Link,
    flows: &[FlowState],
    agents: &[AgentSlot],
    ev: TraceEvent,
    pkt: &Packet,
    cause: Option<DropCause>,
) {
    let f = &flows[pkt.flow as usize];
    let (sender, receiver) = (
        &agents[2 * pkt.flow as usize],
        &agents[2 * pkt.flow as usize + 1],
    );
    let (src_agent, dst_agent, fid) = match pkt.dir {
        Direction::Forward => (sender, receiver, f.fids.0),
        Direction::Reverse => (receiver, sender, f.fids.1),
    };
    let src_port = if pkt.src == src_agent.io.node {
        src_agent.port
    } else {
        0
    };
    // NS-2's trace.cc: C = ECN-Echo, A = congestion action (CWR), E = CE, N = ECT.
    let mut flags = *b"-------";
    if let Header::Tcp(h) = &pkt.header {
        if h.ece {
            flags[0] = b'C';
        }
        if h.cwr {
            flags[3] = b'A';
        }
    }
    if pkt.ce {
        flags[4] = b'E';
    }
    if pkt.ect {
        flags[6] = b'N';
    }
    t.record(&TraceLine {
        event: ev,
        time: now,
        from: link.from,
        to: link.to,
        ptype: pkt.kind.ns2_name(),
        size: pkt.size,
        flags: std::str::from_utf8(&flags).unwrap_or("-------"),
        fid,
        src: (pkt.src, src_port),
        dst: (pkt.dst, dst_agent.port),
        seq: pkt.seq,
        uid: pkt.uid,
        cause,
        flow: Some(pkt.flow),
        packet: Some(pkt),
    });
}

/// A wireless hop's link-layer exchange for one frame (`wired` is its serialisation time in
/// NS-2's double): how long it holds the link and whether it gets through.
#[cold]
#[inline(never)]
fn wireless_exchange(link: &mut Link, pkt: &Packet, size: u32, wired: f64) -> (f64, bool) {
    let c = &mut *link.cold;
    let Some(w) = &mut c.wireless else {
        return (wired, true);
    };
    let tx = crate::link::tx_ns(link.bandwidth_bps, size);
    let e = w.exchange(pkt, tx, &mut c.wireless_rng);
    link.stats.attempts += u64::from(e.attempts);
    let txt = if e.busy_ns == tx {
        wired
    } else {
        e.busy_ns as f64 / 1e9
    };
    (txt, e.delivered)
}

/// Each link's ends and whether it is up, for the routing table.
fn link_ends(hot: &[LinkHot], links: &[Link]) -> Vec<(NodeId, NodeId, bool)> {
    links
        .iter()
        .zip(hot)
        .map(|(l, h)| (l.from, l.to, h.up()))
        .collect()
}

/// A time in seconds, as NS-2 holds it.
fn secs(t: Time) -> f64 {
    t.as_nanos() as f64 / 1e9
}

fn stage_event(idx: usize, egress: bool) -> Event {
    if egress {
        Event::Egress(idx as u32)
    } else {
        Event::Ingress(idx as u32)
    }
}
