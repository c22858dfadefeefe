//! The scheduler, the event loop and the builder API.
//!
//! Events are ordered by `(time, NS-2 double time, sequence)` ([`crate::sched`]: a timing wheel
//! with a heap for the far future); equal times run in insertion order (NS-2's scheduler does
//! the same). To keep pending events few, each link holds at most one "transmission done" and
//! one "head of pipe arrives" event, a transmission that leaves its queue empty defers its
//! "done" event until a packet arrives (`settle_tx_done`), and each agent holds at most one
//! live wake-up. A packet's arrival at the next node keeps the sequence number it would have
//! had in NS-2, which schedules it when transmission starts (LinkDelay::recv: arrival first,
//! then the queue's resume), so equal-time ties break exactly as in NS-2.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::Write;
use std::time::Duration;

use rand_chacha::ChaCha8Rng;

use crate::agent::{Agent, AgentCtx, AppCounters};
use crate::agents::AnyAgent;
use crate::link::{InPipe, Link, LinkConfig, LinkId};
use crate::loss::{LossConfig, LossModel};
use crate::packet::{Direction, FlowId, Header, NodeId, Packet, PacketKind};
use crate::queue::Queue;
use crate::rng::{stream, Component};
use crate::routing::Routes;
pub(crate) use crate::sched::Key;
use crate::sched::{time_from_secs, EventQueue};
use crate::stats::{AgentSeries, DropCause, FlowRecorder, LinkStats, StatsConfig};
use crate::trace::{TraceEvent, TraceFormat, TraceLine, Tracer};
use crate::wireless::Wireless;
use crate::Time;

/// Size of a time-exceeded notice: 20 B IP + 8 B ICMP + 28 B of the dead packet (RFC 792).
pub const TIME_EXCEEDED_SIZE: u32 = 56;

/// Consecutive wake-ups of one agent at one instant before the run is declared stuck.
const MAX_WAKES_AT_ONE_INSTANT: u32 = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    TxDone(u32),
    PipeHead(u32),
    AgentWake(u32),
    FlowStart(u32),
    FlowStop(u32),
    LinkState(u32),
    Sample,
    /// The head of an agent's sealing queue is ready to enter the network (E6).
    Sealed(u32),
    /// The head of an agent's opening queue is ready for the agent (E6).
    Opened(u32),
}

/// A problem in the network description, reported by [`NetworkBuilder::build`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// A node id that was never added.
    UnknownNode(NodeId),
    /// A link id that was never added.
    UnknownLink(LinkId),
    /// A link from a node to itself.
    SelfLoop(NodeId),
    /// A link with zero bandwidth.
    ZeroBandwidth(LinkId),
    /// A flow whose source and destination are the same node.
    FlowToSelf(FlowId),
    /// A probability outside [0, 1] (or NaN) in a loss model or wireless hop.
    BadProbability(LinkId),
    /// A CBR rate that is not a positive number.
    BadRate(FlowId),
    /// A flow id that was never added.
    UnknownFlow(FlowId),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::UnknownNode(n) => write!(f, "unknown node {n}"),
            BuildError::UnknownLink(l) => write!(f, "unknown link {l}"),
            BuildError::SelfLoop(n) => write!(f, "link from node {n} to itself"),
            BuildError::ZeroBandwidth(l) => write!(f, "link {l} has zero bandwidth"),
            BuildError::FlowToSelf(fl) => {
                write!(f, "flow {fl} has the same source and destination")
            }
            BuildError::BadProbability(l) => write!(f, "link {l}: probability outside [0, 1]"),
            BuildError::BadRate(fl) => write!(f, "flow {fl}: CBR rate must be positive"),
            BuildError::UnknownFlow(fl) => write!(f, "unknown flow {fl}"),
        }
    }
}

impl std::error::Error for BuildError {}

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
        }
    }
}

impl std::error::Error for SimError {}

/// Packet conservation counters for one flow direction over the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Account {
    /// Packets that entered the network (agents' packets and time-exceeded notices).
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

/// Per-packet processing cost of protection (seed 000 E6): a protected packet enters the
/// network `seal` after its agent sends it and reaches its destination agent `open` after it
/// arrives. Each agent seals (and opens) one packet at a time, in order, as one CPU would.
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

/// A packet waiting for its protection cost, and when it will be ready.
#[derive(Clone, Debug)]
struct Processing {
    pkt: Packet,
    key: Key,
}

struct NodeSpec {
    name: String,
    untrusted: bool,
}

struct LinkSpec {
    from: NodeId,
    to: NodeId,
    cfg: LinkConfig,
}

struct FlowSpec {
    src: NodeId,
    dst: NodeId,
    start: Time,
    stop: Option<Time>,
    sender: AnyAgent,
    receiver: AnyAgent,
    fids: (u32, u32),
    protect: bool,
    drop_log: bool,
}

#[derive(Clone, Copy)]
struct LinkChange {
    at: Time,
    link: LinkId,
    up: bool,
}

/// Describes a network and its flows; [`NetworkBuilder::build`] validates it.
///
/// ```
/// use core::time::Duration;
/// use netsim::agents::{CbrConfig, CbrSource, NullSink};
/// use netsim::{LinkConfig, NetworkBuilder, Time};
///
/// let mut net = NetworkBuilder::new(1);
/// let a = net.add_node("a");
/// let b = net.add_node("b");
/// net.add_duplex_link(a, b, LinkConfig::new(1_000_000, Duration::from_millis(10)));
/// let cbr = CbrSource::new(CbrConfig { rate_bps: 100_000.0, ..CbrConfig::default() });
/// let f = net.add_flow(a, b, Time::ZERO, None, cbr.into(), NullSink::new().into());
/// let mut sim = net.build().expect("valid network");
/// let res = sim.run(Time::from_secs_f64(1.0)).expect("packets are conserved");
/// let fwd = &res.flows[f as usize].forward;
/// // 210-byte packets every 16.8 ms; each takes 1.68 ms + 10 ms to arrive, so the one sent
/// // at 991.2 ms is still in flight at 1 s.
/// assert_eq!(fwd.sent_packets, 60);
/// assert_eq!(fwd.delivered_packets, 59);
/// assert_eq!(res.flows[f as usize].accounts[0].in_flight, 1);
/// assert!((fwd.delay.mean_secs() - 0.01168).abs() < 1e-9);
/// ```
pub struct NetworkBuilder {
    seed: u64,
    nodes: Vec<NodeSpec>,
    links: Vec<LinkSpec>,
    flows: Vec<FlowSpec>,
    changes: Vec<LinkChange>,
    ttl_notices: bool,
    protection: ProtectionCost,
    stats: StatsConfig,
    tracer: Option<Tracer>,
    errors: Vec<BuildError>,
}

impl NetworkBuilder {
    /// An empty network whose random streams derive from `seed`.
    pub fn new(seed: u64) -> Self {
        NetworkBuilder {
            seed,
            nodes: Vec::new(),
            links: Vec::new(),
            flows: Vec::new(),
            changes: Vec::new(),
            ttl_notices: false,
            protection: ProtectionCost::default(),
            stats: StatsConfig::default(),
            tracer: None,
            errors: Vec::new(),
        }
    }

    /// Add a node; ids are 0, 1, 2 … in order (NS-2's node numbering).
    pub fn add_node(&mut self, name: &str) -> NodeId {
        self.nodes.push(NodeSpec {
            name: name.to_string(),
            untrusted: false,
        });
        (self.nodes.len() - 1) as NodeId
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as NodeId)
    }

    /// Mark a node untrusted: unprotected packets crossing it are flagged `exposed` (E6).
    pub fn set_untrusted(&mut self, node: NodeId, untrusted: bool) {
        match self.nodes.get_mut(node as usize) {
            Some(n) => n.untrusted = untrusted,
            None => self.errors.push(BuildError::UnknownNode(node)),
        }
    }

    fn check_node(&mut self, n: NodeId) {
        if n as usize >= self.nodes.len() {
            self.errors.push(BuildError::UnknownNode(n));
        }
    }

    /// Add a one-way link; ids are 0, 1, 2 … in order.
    pub fn add_simplex_link(&mut self, from: NodeId, to: NodeId, cfg: LinkConfig) -> LinkId {
        let id = self.links.len() as LinkId;
        self.check_node(from);
        self.check_node(to);
        if from == to {
            self.errors.push(BuildError::SelfLoop(from));
        }
        if cfg.bandwidth_bps == 0 {
            self.errors.push(BuildError::ZeroBandwidth(id));
        }
        if !probabilities_ok(cfg.loss.as_ref())
            || !probabilities_ok(cfg.wireless.as_ref().map(|w| &w.frame_loss))
        {
            self.errors.push(BuildError::BadProbability(id));
        }
        self.links.push(LinkSpec { from, to, cfg });
        id
    }

    /// Add a link in both directions with the same configuration (NS-2 `duplex-link`):
    /// returns (a → b, b → a).
    pub fn add_duplex_link(&mut self, a: NodeId, b: NodeId, cfg: LinkConfig) -> (LinkId, LinkId) {
        let ab = self.add_simplex_link(a, b, cfg.clone());
        let ba = self.add_simplex_link(b, a, cfg);
        (ab, ba)
    }

    /// Set or clear one link direction's loss model.
    pub fn set_loss(&mut self, link: LinkId, loss: Option<LossConfig>) {
        if !probabilities_ok(loss.as_ref()) {
            self.errors.push(BuildError::BadProbability(link));
        }
        match self.links.get_mut(link as usize) {
            Some(l) => l.cfg.loss = loss,
            None => self.errors.push(BuildError::UnknownLink(link)),
        }
    }

    /// Replace one link direction's queue (NS-2 `queue-limit` on one direction, or a different
    /// discipline per direction).
    pub fn set_queue(&mut self, link: LinkId, queue: crate::queue::QueueConfig) {
        match self.links.get_mut(link as usize) {
            Some(l) => l.cfg.queue = queue,
            None => self.errors.push(BuildError::UnknownLink(link)),
        }
    }

    /// The link from `from` to `to`, if any (the first one added).
    pub fn link(&self, from: NodeId, to: NodeId) -> Option<LinkId> {
        self.links
            .iter()
            .position(|l| l.from == from && l.to == to)
            .map(|i| i as LinkId)
    }

    /// Add a flow: `sender` runs at `src` from `start` (stopped at `stop`), `receiver` at
    /// `dst`. Flow ids are 0, 1, 2 …; the trace fid defaults to the flow id in both directions.
    pub fn add_flow(
        &mut self,
        src: NodeId,
        dst: NodeId,
        start: Time,
        stop: Option<Time>,
        sender: AnyAgent,
        receiver: AnyAgent,
    ) -> FlowId {
        let id = self.flows.len() as FlowId;
        self.check_node(src);
        self.check_node(dst);
        if src == dst {
            self.errors.push(BuildError::FlowToSelf(id));
        }
        for a in [&sender, &receiver] {
            if let AnyAgent::Cbr(c) = a {
                let r = c.config().rate_bps;
                if r.is_nan() || r <= 0.0 {
                    self.errors.push(BuildError::BadRate(id));
                }
            }
        }
        self.flows.push(FlowSpec {
            src,
            dst,
            start,
            stop,
            sender,
            receiver,
            fids: (id, id),
            protect: false,
            drop_log: false,
        });
        id
    }

    /// The fid printed in traces for a flow's forward and reverse packets (NS-2 `fid_` of the
    /// sender and of the receiver agent).
    pub fn set_trace_fids(&mut self, flow: FlowId, forward: u32, reverse: u32) {
        if let Some(f) = self.flows.get_mut(flow as usize) {
            f.fids = (forward, reverse);
        }
    }

    /// Take a link direction down at `at`: its queued and propagating packets are dropped
    /// (cause `down`) and routes are recomputed.
    pub fn link_down_at(&mut self, at: Time, link: LinkId) {
        self.changes.push(LinkChange {
            at,
            link,
            up: false,
        });
    }

    /// Bring a link direction back up at `at`; routes are recomputed.
    pub fn link_up_at(&mut self, at: Time, link: LinkId) {
        self.changes.push(LinkChange { at, link, up: true });
    }

    /// The per-packet cost of protection (E6); the default is [`ProtectionCost::default`].
    /// Unprotected packets cost nothing.
    pub fn protection_cost(&mut self, seal: Duration, open: Duration) {
        self.protection = ProtectionCost { seal, open };
    }

    /// Protect every packet of `flow`, both directions, whatever its agents decide (E6's "every
    /// packet, as an option"); otherwise a packet is protected when its agent sets
    /// [`Packet::protected`].
    pub fn protect_flow(&mut self, flow: FlowId, on: bool) {
        match self.flows.get_mut(flow as usize) {
            Some(f) => f.protect = on,
            None => self.errors.push(BuildError::UnknownFlow(flow)),
        }
    }

    /// Remember the cause of every dropped data packet of `flow` by its sequence number
    /// ([`Simulator::drop_causes`]): the true causes a loss classifier's decisions are compared
    /// with (seed 002's confusion matrix). Off by default, so other runs keep no per-packet
    /// state; the record grows with the flow's drops.
    pub fn record_drop_causes(&mut self, flow: FlowId, on: bool) {
        match self.flows.get_mut(flow as usize) {
            Some(f) => f.drop_log = on,
            None => self.errors.push(BuildError::UnknownFlow(flow)),
        }
    }

    /// Send a time-exceeded notice to the source of every packet dropped for TTL (E5).
    pub fn ttl_notices(&mut self, on: bool) {
        self.ttl_notices = on;
    }

    /// Statistics configuration (bin width, measurement window, per-packet delays).
    pub fn stats(&mut self, cfg: StatsConfig) {
        self.stats = cfg;
    }

    /// Trace every packet event to `out` (off by default).
    pub fn trace(&mut self, out: Box<dyn Write>, format: TraceFormat) {
        self.tracer = Some(Tracer::new(out, format));
    }

    /// Validate and produce a simulator ready to run.
    pub fn build(mut self) -> Result<Simulator, BuildError> {
        for c in &self.changes {
            if c.link as usize >= self.links.len() {
                self.errors.push(BuildError::UnknownLink(c.link));
            }
        }
        if let Some(e) = self.errors.first() {
            return Err(e.clone());
        }
        let seed = self.seed;
        let n = self.nodes.len();
        let links: Vec<Link> = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let i = i as u64;
                Link {
                    from: l.from,
                    to: l.to,
                    bandwidth_bps: l.cfg.bandwidth_bps,
                    delay_secs: l.cfg.delay.as_secs_f64(),
                    queue: Queue::new(
                        &l.cfg.queue,
                        l.cfg.bandwidth_bps as f64,
                        l.cfg.delay.as_secs_f64(),
                    ),
                    queue_rng: stream(seed, Component::Queue, i),
                    loss: l.cfg.loss.as_ref().map(LossModel::new),
                    loss_rng: stream(seed, Component::LinkLoss, i),
                    wireless: l.cfg.wireless.clone().map(Wireless::new),
                    wireless_rng: stream(seed, Component::Wireless, i),
                    busy: false,
                    tx_done: None,
                    tx_done_lazy: false,
                    lost_in_tx: None,
                    pipe: Default::default(),
                    up: true,
                    stats: LinkStats::new(self.stats.bin_width),
                }
            })
            .collect();
        // NS-2 ports: per node, in attach order (flow order, sender then receiver).
        let mut next_port = vec![0u32; n];
        let mut agents = Vec::with_capacity(self.flows.len() * 2);
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.into_iter().enumerate() {
            let fid = i as FlowId;
            let protect = f.protect;
            for (sender, agent, node, peer) in [
                (true, f.sender, f.src, f.dst),
                (false, f.receiver, f.dst, f.src),
            ] {
                let idx = 2 * i as u64 + u64::from(!sender);
                let port = next_port[node as usize];
                next_port[node as usize] += 1;
                agents.push(AgentSlot {
                    sampled: !agent.sample_names().is_empty(),
                    agent,
                    rng: stream(seed, Component::Agent, idx),
                    flow: fid,
                    dir: if sender {
                        Direction::Forward
                    } else {
                        Direction::Reverse
                    },
                    node,
                    peer,
                    port,
                    queued: None,
                    desired: None,
                    stuck: (Time::ZERO, 0),
                    protect,
                    sealing: VecDeque::new(),
                    opening: VecDeque::new(),
                });
            }
            flows.push(FlowState {
                src: f.src,
                dst: f.dst,
                start: f.start,
                stop: f.stop,
                fids: f.fids,
                rec: [
                    FlowRecorder::new(&self.stats),
                    FlowRecorder::new(&self.stats),
                ],
                acct: [Account::default(); 2],
                drop_causes: f.drop_log.then(HashMap::new),
            });
        }
        let routes = Routes::compute(
            n,
            &links
                .iter()
                .map(|l| (l.from, l.to, l.up))
                .collect::<Vec<_>>(),
        );
        let mut sim = Simulator {
            now: Time::ZERO,
            now_secs: 0.0,
            cur: Key {
                time: Time::ZERO,
                shadow: 0.0,
                seq: 0,
            },
            seq: 0,
            heap: EventQueue::new(),
            untrusted: self.nodes.iter().map(|n| n.untrusted).collect(),
            names: self.nodes.into_iter().map(|n| n.name).collect(),
            links,
            routes,
            agents,
            flows,
            changes: self.changes,
            scratch: Vec::new(),
            next_uid: 0,
            events: 0,
            hops: 0,
            stats: self.stats,
            tracer: self.tracer,
            ttl_notices: self.ttl_notices,
            seal: Cost::new(self.protection.seal),
            open: Cost::new(self.protection.open),
            samples: Vec::new(),
            sample_buf: Vec::new(),
            stuck: None,
        };
        // Like a Tcl script's `$ns at` lines: flow starts and stops in flow order, then link
        // changes, all before any packet event.
        for i in 0..sim.flows.len() {
            let (start, stop) = (sim.flows[i].start, sim.flows[i].stop);
            sim.schedule(start, secs(start), Event::FlowStart(i as u32));
            if let Some(stop) = stop {
                sim.schedule(stop, secs(stop), Event::FlowStop(i as u32));
            }
        }
        for i in 0..sim.changes.len() {
            let at = sim.changes[i].at;
            sim.schedule(at, secs(at), Event::LinkState(i as u32));
        }
        for (i, a) in sim.agents.iter().enumerate() {
            if a.sampled {
                sim.samples.push((
                    i,
                    AgentSeries {
                        flow: a.flow,
                        sender: a.dir == Direction::Forward,
                        names: a.agent.sample_names(),
                        times: Vec::new(),
                        values: Vec::new(),
                    },
                ));
            }
        }
        if !sim.samples.is_empty() {
            let w = Time::from_nanos(sim.bin_ns());
            sim.schedule(w, secs(w), Event::Sample);
        }
        Ok(sim)
    }
}

fn probabilities_ok(l: Option<&LossConfig>) -> bool {
    let ok = |p: f64| (0.0..=1.0).contains(&p);
    match l {
        None | Some(LossConfig::Nth(_)) | Some(LossConfig::Packets(_)) => true,
        Some(LossConfig::Bernoulli { p }) => ok(*p),
        Some(LossConfig::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_good,
            loss_bad,
        }) => ok(*p_good_to_bad) && ok(*p_bad_to_good) && ok(*loss_good) && ok(*loss_bad),
    }
}

struct AgentSlot {
    agent: AnyAgent,
    rng: ChaCha8Rng,
    flow: FlowId,
    dir: Direction,
    node: NodeId,
    peer: NodeId,
    port: u32,
    /// The wake-up event the scheduler holds for this agent (others in the heap are stale).
    queued: Option<Key>,
    /// The wake-up the agent wants, with the sequence number it got when it asked.
    desired: Option<Key>,
    stuck: (Time, u32),
    sampled: bool,
    /// Protect every packet this agent sends (`NetworkBuilder::protect_flow`).
    protect: bool,
    /// Packets this agent sent, being sealed (E6), in order; the head has an event.
    sealing: VecDeque<Processing>,
    /// Packets for this agent, being opened (E6), in order; the head has an event.
    opening: VecDeque<Processing>,
}

/// A protection cost in both of the simulator's clocks.
#[derive(Clone, Copy, Debug)]
struct Cost {
    ns: u64,
    secs: f64,
}

impl Cost {
    fn new(d: Duration) -> Self {
        Cost {
            ns: u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            secs: d.as_secs_f64(),
        }
    }
}

struct FlowState {
    src: NodeId,
    dst: NodeId,
    start: Time,
    stop: Option<Time>,
    fids: (u32, u32),
    rec: [FlowRecorder; 2],
    acct: [Account; 2],
    /// Data-direction drops by sequence number, when [`NetworkBuilder::record_drop_causes`]
    /// asked for them.
    drop_causes: Option<HashMap<u64, DropCause>>,
}

fn dir_index(d: Direction) -> usize {
    match d {
        Direction::Forward => 0,
        Direction::Reverse => 1,
    }
}

fn opposite(d: Direction) -> Direction {
    match d {
        Direction::Forward => Direction::Reverse,
        Direction::Reverse => Direction::Forward,
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

/// A built network, ready to run.
pub struct Simulator {
    now: Time,
    /// NS-2's double-precision clock for the current event.
    now_secs: f64,
    /// The key of the event being run.
    cur: Key,
    seq: u64,
    heap: EventQueue<Event>,
    names: Vec<String>,
    untrusted: Vec<bool>,
    links: Vec<Link>,
    routes: Routes,
    agents: Vec<AgentSlot>,
    flows: Vec<FlowState>,
    changes: Vec<LinkChange>,
    scratch: Vec<Packet>,
    next_uid: u64,
    events: u64,
    hops: u64,
    stats: StatsConfig,
    tracer: Option<Tracer>,
    ttl_notices: bool,
    seal: Cost,
    open: Cost,
    samples: Vec<(usize, AgentSeries)>,
    sample_buf: Vec<f64>,
    stuck: Option<SimError>,
}

impl fmt::Debug for Simulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulator")
            .field("now", &self.now)
            .field("nodes", &self.names.len())
            .field("links", &self.links.len())
            .field("flows", &self.flows.len())
            .finish_non_exhaustive()
    }
}

impl Simulator {
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
    /// was built with [`NetworkBuilder::record_drop_causes`] (`None` otherwise).
    pub fn drop_causes(&self, flow: FlowId) -> Option<&HashMap<u64, DropCause>> {
        self.flows.get(flow as usize)?.drop_causes.as_ref()
    }

    /// The RED state of a link's queue, if it is RED.
    pub fn red(&self, link: LinkId) -> Option<&crate::queue::Red> {
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

    fn schedule(&mut self, time: Time, shadow: f64, ev: Event) -> Key {
        let key = Key {
            time,
            shadow,
            seq: self.next_seq(),
        };
        self.heap.push(key, ev);
        key
    }

    /// Run until `until` (events at `until` itself do not run, as when an NS-2 script's
    /// `finish` at that time exits; an event whose NS-2 double-precision time is just below
    /// `until` does), check packet conservation, and report. Calling it again continues.
    pub fn run(&mut self, until: Time) -> Result<RunResults, SimError> {
        let until_secs = secs(until);
        // Stop at `until`, but run an event NS-2's double clock puts just before it (a CBR
        // timer at 4.9999999999 s rounds to 5 s here).
        let due = |k: &Key| k.time < until || (k.time == until && k.shadow < until_secs);
        while let Some((key, ev)) = self.heap.pop_if(due) {
            self.cur = key;
            self.now = key.time;
            self.now_secs = key.shadow;
            self.events += 1;
            self.dispatch(key, ev);
            if let Some(e) = self.stuck.take() {
                return Err(e);
            }
        }
        // Deferred transmission ends the loop above would have run.
        for l in 0..self.links.len() {
            self.settle_tx_done(l, |k| {
                k.time < until || (k.time == until && k.shadow < until_secs)
            });
        }
        if until > self.now {
            self.now = until;
            self.now_secs = secs(until);
        }
        for l in &mut self.links {
            l.stats.queue_packets.finish(self.now);
            l.stats.queue_bytes.finish(self.now);
        }
        if let Some(t) = &mut self.tracer {
            t.flush().map_err(|e| SimError::Trace(e.to_string()))?;
        }
        self.check_accounts()?;
        Ok(self.results())
    }

    fn dispatch(&mut self, key: Key, ev: Event) {
        match ev {
            Event::TxDone(l) => self.on_tx_done(l as usize, key),
            Event::PipeHead(l) => self.on_pipe_head(l as usize, key),
            Event::AgentWake(a) => self.on_agent_wake(a as usize, key),
            Event::FlowStart(f) => {
                let f = f as usize;
                self.call_agent(2 * f + 1, |a, ctx| a.on_start(ctx));
                self.call_agent(2 * f, |a, ctx| a.on_start(ctx));
            }
            Event::FlowStop(f) => self.call_agent(2 * f as usize, |a, ctx| a.on_stop(ctx)),
            Event::LinkState(i) => self.on_link_change(i as usize),
            Event::Sample => self.on_sample(),
            Event::Sealed(a) => self.on_processed(a as usize, key, true),
            Event::Opened(a) => self.on_processed(a as usize, key, false),
        }
    }

    // ---- agents -------------------------------------------------------------------------

    fn call_agent(&mut self, idx: usize, f: impl FnOnce(&mut AnyAgent, &mut AgentCtx<'_>)) {
        let mut out = std::mem::take(&mut self.scratch);
        let now = self.now;
        let Some(slot) = self.agents.get_mut(idx) else {
            return;
        };
        {
            let mut ctx = AgentCtx::new(
                now,
                slot.flow,
                slot.dir,
                slot.node,
                slot.peer,
                &mut slot.rng,
                &mut out,
            );
            f(&mut slot.agent, &mut ctx);
        }
        // NS-2 agents usually transmit before re-arming their timers (CBR: send, then
        // resched), so packets get their scheduler sequence numbers first.
        for pkt in out.drain(..) {
            self.inject(idx, pkt);
        }
        self.scratch = out;
        self.update_wake(idx);
    }

    /// Poll the agent's next wake-up after a call. A new time gets a fresh sequence number (as
    /// NS-2's `resched` would); the heap only gets a new event when the wake-up moves earlier.
    fn update_wake(&mut self, idx: usize) {
        let agent = &self.agents[idx].agent;
        let want = agent.next_wake().map(|t| {
            if t <= self.now {
                (self.now, self.now_secs)
            } else {
                // NS-2's double time for the wake-up, when the agent keeps one.
                let shadow = agent
                    .next_wake_secs()
                    .filter(|s| s.is_finite() && Time::from_secs_f64(*s) == t)
                    .unwrap_or_else(|| secs(t));
                (t, shadow)
            }
        });
        let slot_desired = self.agents[idx].desired;
        match want {
            None => self.agents[idx].desired = None,
            Some((t, sh)) if slot_desired.map(|d| (d.time, d.shadow)) == Some((t, sh)) => {}
            Some((t, shadow)) => {
                let key = Key {
                    time: t,
                    shadow,
                    seq: self.next_seq(),
                };
                let slot = &mut self.agents[idx];
                slot.desired = Some(key);
                if slot.queued.is_none_or(|q| q > key) {
                    slot.queued = Some(key);
                    self.heap.push(key, Event::AgentWake(idx as u32));
                }
            }
        }
    }

    fn on_agent_wake(&mut self, idx: usize, key: Key) {
        let Some(slot) = self.agents.get_mut(idx) else {
            return;
        };
        if slot.queued != Some(key) {
            return; // superseded by an earlier wake-up
        }
        slot.queued = None;
        match slot.desired {
            Some(d) if d == key => {
                slot.desired = None;
                if slot.stuck.0 == key.time {
                    slot.stuck.1 += 1;
                    if slot.stuck.1 > MAX_WAKES_AT_ONE_INSTANT {
                        self.stuck = Some(SimError::AgentStuck {
                            flow: slot.flow,
                            sender: slot.dir == Direction::Forward,
                            at: key.time,
                        });
                        return;
                    }
                } else {
                    slot.stuck = (key.time, 0);
                }
                self.call_agent(idx, |a, ctx| a.on_wake(ctx));
            }
            Some(d) => {
                // The agent moved its wake-up later: re-queue it with the sequence number it
                // got when it asked, so ties still break in NS-2's order.
                slot.queued = Some(d);
                self.heap.push(d, Event::AgentWake(idx as u32));
            }
            None => {}
        }
    }

    /// A packet an agent sent enters the network at the agent's node.
    fn inject(&mut self, idx: usize, mut pkt: Packet) {
        let slot = &self.agents[idx];
        // The packet belongs to the agent's flow and direction whatever the agent wrote.
        pkt.flow = slot.flow;
        pkt.dir = slot.dir;
        pkt.src = slot.node;
        pkt.uid = self.next_uid;
        self.next_uid += 1;
        pkt.protected |= slot.protect;
        let node = slot.node;
        let f = &mut self.flows[pkt.flow as usize];
        let d = dir_index(pkt.dir);
        f.acct[d].sent += 1;
        if metered(&pkt) {
            f.rec[d].on_sent(self.now, pkt.size, pkt.payload);
        }
        // E6: a protected packet is sealed before it enters the network; a packet sent behind
        // one being sealed waits its turn. Otherwise nothing is added, not even an event.
        if (pkt.protected && self.seal.ns > 0) || !self.agents[idx].sealing.is_empty() {
            self.process(idx, pkt, true);
            return;
        }
        self.arrive(pkt, node);
    }

    /// Queue `pkt` behind the agent's sealing (`seal`) or opening work: it is ready one cost
    /// (if protected) after the packet ahead of it, or after now.
    fn process(&mut self, idx: usize, pkt: Packet, seal: bool) {
        let cost = match (pkt.protected, seal) {
            (false, _) => Cost { ns: 0, secs: 0.0 },
            (true, true) => self.seal,
            (true, false) => self.open,
        };
        let slot = &self.agents[idx];
        let fifo = if seal { &slot.sealing } else { &slot.opening };
        let (t, shadow) = fifo
            .back()
            .map_or((self.now, self.now_secs), |p| (p.key.time, p.key.shadow));
        let key = Key {
            time: Time::from_nanos(t.as_nanos().saturating_add(cost.ns)),
            shadow: shadow + cost.secs,
            seq: self.next_seq(),
        };
        let slot = &mut self.agents[idx];
        let fifo = if seal {
            &mut slot.sealing
        } else {
            &mut slot.opening
        };
        fifo.push_back(Processing { pkt, key });
        if fifo.len() == 1 {
            let ev = if seal {
                Event::Sealed(idx as u32)
            } else {
                Event::Opened(idx as u32)
            };
            self.heap.push(key, ev);
        }
    }

    /// The head of an agent's sealing or opening queue is done: send it on, and arm the next.
    fn on_processed(&mut self, idx: usize, key: Key, seal: bool) {
        let Some(slot) = self.agents.get_mut(idx) else {
            return;
        };
        let fifo = if seal {
            &mut slot.sealing
        } else {
            &mut slot.opening
        };
        if fifo.front().map(|p| p.key) != Some(key) {
            return;
        }
        let Some(Processing { pkt, .. }) = fifo.pop_front() else {
            return;
        };
        if let Some(next) = fifo.front() {
            let ev = if seal {
                Event::Sealed(idx as u32)
            } else {
                Event::Opened(idx as u32)
            };
            self.heap.push(next.key, ev);
        }
        if seal {
            let node = self.agents[idx].node;
            self.arrive(pkt, node);
        } else {
            self.hand_over(idx, pkt);
        }
    }

    // ---- forwarding ---------------------------------------------------------------------

    /// A packet is at `node`: deliver it, or forward it on the next-hop link.
    fn arrive(&mut self, mut pkt: Packet, node: NodeId) {
        if node == pkt.dst {
            self.deliver(pkt, node);
            return;
        }
        if self.untrusted.get(node as usize).copied().unwrap_or(false)
            && !pkt.protected
            && node != pkt.src
        {
            pkt.exposed = true;
        }
        match self.routes.next_link(node, pkt.dst) {
            Some(l) => self.enqueue(l as usize, pkt),
            None => self.drop_packet(None, pkt, DropCause::Down),
        }
    }

    fn deliver(&mut self, pkt: Packet, node: NodeId) {
        let idx = 2 * pkt.flow as usize + usize::from(pkt.dir == Direction::Forward);
        if self.agents.get(idx).map(|a| a.node) != Some(node) {
            // Addressed to a node where this flow has no agent.
            self.drop_packet(None, pkt, DropCause::Down);
            return;
        }
        // E6: a protected packet is opened before the agent gets it; a packet arriving behind
        // one being opened waits its turn.
        if (pkt.protected && self.open.ns > 0) || !self.agents[idx].opening.is_empty() {
            self.process(idx, pkt, false);
            return;
        }
        self.hand_over(idx, pkt);
    }

    /// Give a packet to its destination agent: it is delivered.
    fn hand_over(&mut self, idx: usize, pkt: Packet) {
        let f = &mut self.flows[pkt.flow as usize];
        let d = dir_index(pkt.dir);
        f.acct[d].delivered += 1;
        if metered(&pkt) {
            f.rec[d].on_delivered(self.now, pkt.sent_at, pkt.size, pkt.payload);
            if pkt.exposed {
                f.rec[d].on_exposed(self.now);
            }
        }
        self.call_agent(idx, move |a, ctx| a.on_packet(pkt, ctx));
    }

    fn drop_packet(&mut self, link: Option<usize>, pkt: Packet, cause: DropCause) {
        if let Some(l) = link {
            self.trace(TraceEvent::Drop, l, &pkt, Some(cause));
            self.links[l].stats.drops[cause.index()] += 1;
        }
        let f = &mut self.flows[pkt.flow as usize];
        let d = dir_index(pkt.dir);
        f.acct[d].dropped[cause.index()] += 1;
        if metered(&pkt) {
            f.rec[d].on_dropped(self.now, cause);
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
    }

    fn note_queue(&mut self, l: usize) {
        self.note_queue_at(l, self.now);
    }

    fn note_queue_at(&mut self, l: usize, at: Time) {
        let link = &mut self.links[l];
        let (n, b) = (link.queue.len() as u64, link.queue.byte_len());
        let st = &mut link.stats;
        crate::stats::Occupancy::set_pair(&mut st.queue_packets, n, &mut st.queue_bytes, b, at);
    }

    fn enqueue(&mut self, l: usize, pkt: Packet) {
        self.trace(TraceEvent::Enqueue, l, &pkt, None);
        if !self.links[l].up {
            self.drop_packet(Some(l), pkt, DropCause::Down);
            return;
        }
        let cur = self.cur;
        self.settle_tx_done(l, |k| k < cur);
        let now = self.now;
        let link = &mut self.links[l];
        let dropped = link.queue.enqueue(pkt, now, &mut link.queue_rng);
        if let Some(d) = dropped {
            self.drop_packet(Some(l), d.pkt, d.cause);
        }
        // NS-2 Queue::recv: an idle link takes the packet at once.
        if !self.links[l].busy {
            self.start_tx(l);
        } else {
            // A packet now waits: the transmission's end must be an event after all.
            let link = &mut self.links[l];
            if link.tx_done_lazy {
                link.tx_done_lazy = false;
                if let Some(k) = link.tx_done {
                    self.heap.push(k, Event::TxDone(l as u32));
                }
            }
            self.note_queue(l);
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
        let link = &mut self.links[l];
        if !link.tx_done_lazy {
            return;
        }
        let Some(k) = link.tx_done else {
            return;
        };
        if !ran(k) {
            return;
        }
        link.tx_done_lazy = false;
        link.tx_done = None;
        // What `on_tx_done` → `start_tx` does at `k` with nothing queued.
        let _none = link.queue.dequeue(k.time);
        debug_assert!(_none.is_none());
        link.busy = false;
        self.note_queue_at(l, k.time);
    }

    /// The link is free: start the next transmission, if a packet waits.
    fn start_tx(&mut self, l: usize) {
        let now = self.now;
        let Some(pkt) = self.links[l].queue.dequeue(now) else {
            self.links[l].busy = false;
            self.note_queue(l);
            return;
        };
        self.note_queue(l);
        self.trace(TraceEvent::Dequeue, l, &pkt, None);
        self.hops += 1;
        let link = &mut self.links[l];
        link.busy = true;
        link.stats.tx_packets += 1;
        link.stats.tx_bytes += u64::from(pkt.size);
        let tx = link.tx_ns(pkt.size);
        let (busy, delivered) = match &mut link.wireless {
            Some(w) => {
                let e = w.exchange(&pkt, tx, &mut link.wireless_rng);
                link.stats.attempts += u64::from(e.attempts);
                (e.busy_ns, e.delivered)
            }
            None => (tx, true),
        };
        // NS-2 LinkDelay: txtime = 8 · size / bandwidth in double; the arrival is scheduled
        // at clock + (txtime + delay), the queue's resume at clock + txtime.
        let txt = if busy == tx {
            8.0 * f64::from(pkt.size) / link.bandwidth_bps as f64
        } else {
            busy as f64 / 1e9
        };
        let done_secs = self.now_secs + txt;
        let arrival_secs = self.now_secs + (txt + link.delay_secs);
        // The nanosecond times are NS-2's double times rounded, not `now + tx_ns`: adding a
        // rounded serialisation time hop after hop drifts by up to 0.5 ns per transmission,
        // enough to swap two events NS-2 runs at (mathematically) the same instant — a queue's
        // resume and a packet's arrival — which decides which flow a full DropTail queue
        // drops. Rounding the double keeps `time` ordered exactly as NS-2's clock.
        let done = time_from_secs(done_secs).max(now);
        let arrival = time_from_secs(arrival_secs).max(done);
        if delivered {
            // The arrival is scheduled first, then the resume.
            let key = Key {
                time: arrival,
                shadow: arrival_secs,
                seq: self.seq,
            };
            self.seq += 1;
            let link = &mut self.links[l];
            link.pipe.push_back(InPipe { pkt, key });
            if link.pipe.len() == 1 {
                self.heap.push(key, Event::PipeHead(l as u32));
            }
        } else {
            link.lost_in_tx = Some(pkt);
        }
        let key = Key {
            time: done,
            shadow: done_secs,
            seq: self.next_seq(),
        };
        let link = &mut self.links[l];
        link.tx_done = Some(key);
        // Nothing waits and nothing fails at the end: defer the event (`settle_tx_done`).
        link.tx_done_lazy = link.queue.is_empty() && link.lost_in_tx.is_none();
        if !link.tx_done_lazy {
            self.heap.push(key, Event::TxDone(l as u32));
        }
    }

    fn on_tx_done(&mut self, l: usize, key: Key) {
        let Some(link) = self.links.get_mut(l) else {
            return;
        };
        if link.tx_done != Some(key) {
            return; // the link went down meanwhile
        }
        link.tx_done = None;
        link.tx_done_lazy = false;
        if let Some(p) = link.lost_in_tx.take() {
            self.drop_packet(Some(l), p, DropCause::Link);
        }
        self.start_tx(l);
    }

    fn on_pipe_head(&mut self, l: usize, key: Key) {
        let Some(link) = self.links.get_mut(l) else {
            return;
        };
        match link.pipe.front() {
            Some(p) if p.key == key => {}
            _ => return, // flushed by a link failure
        }
        let Some(InPipe { mut pkt, .. }) = link.pipe.pop_front() else {
            return;
        };
        if let Some(next) = link.pipe.front() {
            self.heap.push(next.key, Event::PipeHead(l as u32));
        }
        let link = &mut self.links[l];
        // NS-2 order after the delay line: loss module, TTL checker, `r` trace, node.
        if let Some(m) = &mut link.loss {
            if m.lose(&pkt, &mut link.loss_rng) {
                self.drop_packet(Some(l), pkt, DropCause::Link);
                return;
            }
        }
        // TTLChecker: ttl − 1 ≤ 0 drops.
        if pkt.ttl <= 1 {
            let notice = self.ttl_notices && pkt.kind != PacketKind::TimeExceeded;
            let (initial_ttl, seq, at) = (pkt.initial_ttl, pkt.seq, self.links[l].to);
            let (flow, dir, src) = (pkt.flow, pkt.dir, pkt.src);
            self.drop_packet(Some(l), pkt, DropCause::Ttl);
            if notice {
                self.send_time_exceeded(flow, dir, src, at, initial_ttl, seq);
            }
            return;
        }
        pkt.ttl -= 1;
        self.trace(TraceEvent::Receive, l, &pkt, None);
        let to = self.links[l].to;
        self.arrive(pkt, to);
    }

    /// E5: tell the source of a packet that died of TTL expiry at `at`.
    fn send_time_exceeded(
        &mut self,
        flow: FlowId,
        dir: Direction,
        src: NodeId,
        at: NodeId,
        initial_ttl: u8,
        seq: i64,
    ) {
        let back = opposite(dir);
        let pkt = Packet {
            uid: self.next_uid,
            flow,
            dir: back,
            src: at,
            dst: src,
            kind: PacketKind::TimeExceeded,
            size: TIME_EXCEEDED_SIZE,
            payload: 0,
            seq,
            sent_at: self.now,
            ttl: crate::packet::DEFAULT_TTL,
            initial_ttl: crate::packet::DEFAULT_TTL,
            ect: false,
            ce: false,
            protected: false,
            exposed: false,
            header: Header::TimeExceeded { initial_ttl, seq },
        };
        self.next_uid += 1;
        let f = &mut self.flows[flow as usize];
        let d = dir_index(back);
        f.acct[d].sent += 1;
        f.rec[d].on_sent(self.now, pkt.size, 0);
        self.arrive(pkt, at);
    }

    // ---- link failures ------------------------------------------------------------------

    fn on_link_change(&mut self, i: usize) {
        let Some(&c) = self.changes.get(i) else {
            return;
        };
        let l = c.link as usize;
        let cur = self.cur;
        self.settle_tx_done(l, |k| k < cur);
        if self.links[l].up == c.up {
            return;
        }
        self.links[l].up = c.up;
        if !c.up {
            // NS-2 resets the link's connectors: queued and in-transit packets are dropped.
            let now = self.now;
            let link = &mut self.links[l];
            let mut victims: Vec<Packet> = link.queue.clear(now).into_iter().collect();
            victims.extend(link.lost_in_tx.take());
            victims.extend(link.pipe.drain(..).map(|p| p.pkt));
            link.busy = false;
            link.tx_done = None;
            link.tx_done_lazy = false;
            for p in victims {
                self.drop_packet(Some(l), p, DropCause::Down);
            }
            self.note_queue(l);
        }
        self.routes = Routes::compute(
            self.names.len(),
            &self
                .links
                .iter()
                .map(|l| (l.from, l.to, l.up))
                .collect::<Vec<_>>(),
        );
    }

    // ---- sampling, tracing, accounting --------------------------------------------------

    fn on_sample(&mut self) {
        for (idx, series) in &mut self.samples {
            self.sample_buf.clear();
            self.agents[*idx].agent.sample(&mut self.sample_buf);
            // Keep rows rectangular even if an agent misreports.
            self.sample_buf.resize(series.names.len(), f64::NAN);
            series.times.push(self.now);
            series.values.extend_from_slice(&self.sample_buf);
        }
        let next = Time::from_nanos(self.now.as_nanos().saturating_add(self.bin_ns()));
        self.schedule(next, secs(next), Event::Sample);
    }

    /// Trace a packet event, if tracing is on. Inlined so that the usual case (off) costs one
    /// branch at the call site; the line itself is built out of line.
    #[inline(always)]
    fn trace(&mut self, ev: TraceEvent, l: usize, pkt: &Packet, cause: Option<DropCause>) {
        if self.tracer.is_some() {
            self.trace_line(ev, l, pkt, cause);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_line(&mut self, ev: TraceEvent, l: usize, pkt: &Packet, cause: Option<DropCause>) {
        let Some(t) = &mut self.tracer else {
            return;
        };
        let link = &self.links[l];
        let f = &self.flows[pkt.flow as usize];
        let (sender, receiver) = (
            &self.agents[2 * pkt.flow as usize],
            &self.agents[2 * pkt.flow as usize + 1],
        );
        let (src_agent, dst_agent, fid) = match pkt.dir {
            Direction::Forward => (sender, receiver, f.fids.0),
            Direction::Reverse => (receiver, sender, f.fids.1),
        };
        let src_port = if pkt.src == src_agent.node {
            src_agent.port
        } else {
            0
        };
        let mut flags = *b"-------";
        if pkt.ce {
            flags[4] = b'E';
        }
        if pkt.ect {
            flags[6] = b'N';
        }
        t.record(&TraceLine {
            event: ev,
            time: self.now,
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
        });
    }

    fn check_accounts(&mut self) -> Result<(), SimError> {
        for f in &mut self.flows {
            f.acct[0].in_flight = 0;
            f.acct[1].in_flight = 0;
        }
        for l in &self.links {
            for p in l.packets() {
                self.flows[p.flow as usize].acct[dir_index(p.dir)].in_flight += 1;
            }
        }
        // Packets being sealed or opened (E6) are sent but not yet delivered.
        for a in &self.agents {
            for p in a.sealing.iter().chain(a.opening.iter()) {
                self.flows[p.pkt.flow as usize].acct[dir_index(p.pkt.dir)].in_flight += 1;
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            for (d, a) in f.acct.iter().enumerate() {
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
                    forward: f.rec[0].clone(),
                    reverse: f.rec[1].clone(),
                    accounts: f.acct,
                    sender_app: self.agents[2 * i].agent.app_counters(),
                })
                .collect(),
            links: self
                .links
                .iter()
                .map(|l| LinkResults {
                    from: l.from,
                    to: l.to,
                    stats: l.stats.clone(),
                    red: l.queue.as_red().map(|r| r.counters()),
                })
                .collect(),
            agent_samples: self.samples.iter().map(|(_, s)| s.clone()).collect(),
            events: self.events,
            packet_hops: self.hops,
        }
    }
}

/// A time in seconds, as NS-2 holds it.
fn secs(t: Time) -> f64 {
    t.as_nanos() as f64 / 1e9
}
