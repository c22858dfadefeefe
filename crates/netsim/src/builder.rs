//! The builder API: nodes, links, flows, link changes and the policies that plug into them
//! ([`crate::policy`]), validated into a [`Simulator`].

use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::time::Duration;

use crate::agent::{Agent, AgentIo};
use crate::agents::AnyAgent;
use crate::link::{Link, LinkCold, LinkConfig, LinkHot, LinkId, LinkSettings, LinkUpdate};
use crate::loss::{LossConfig, LossModel};
use crate::packet::{Direction, FlowId, NodeId};
use crate::policy::{
    EcnCapability, HostStage, Marking, NodePolicy, NodeStage, ProtectionCost, TtlExpiry,
};
use crate::queue::Queue;
use crate::rng::{stream, Component, LazyStream};
use crate::sim::{
    Account, AgentSlot, FlowState, FullStats, Limits, LinkChange, Metering, Simulator,
};
use crate::stats::{LinkStats, StatsConfig};
use crate::trace::{TraceFormat, TraceNames, TraceSink, Tracer};
use crate::wireless::Wireless;
use crate::Time;

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
    /// A CBR source whose packets would be less than the clock's 1 ns apart: the run would
    /// send packets at one instant over and over and never end.
    RateTooHigh {
        /// The flow.
        flow: FlowId,
        /// Its rate, bits per second (rounded).
        rate_bps: u64,
        /// Its packet size, bytes.
        packet_size: u32,
    },
    /// More flows than [`Limits::max_flows`].
    TooManyFlows {
        /// Flows added.
        flows: usize,
        /// The ceiling.
        limit: usize,
    },
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
            BuildError::RateTooHigh {
                flow,
                rate_bps,
                packet_size,
            } => write!(
                f,
                "flow {flow}: a CBR rate of {rate_bps} b/s with {packet_size}-byte packets sends \
                 packets less than 1 ns apart, below the simulator's clock resolution (at most \
                 {} b/s for this packet size)",
                u64::from(*packet_size) * 8 * 1_000_000_000
            ),
            BuildError::TooManyFlows { flows, limit } => write!(
                f,
                "{flows} flows exceed the ceiling of {limit} flows per run (raise it with \
                 `Limits::max_flows`)"
            ),
        }
    }
}

impl std::error::Error for BuildError {}

struct NodeSpec {
    name: String,
    policy: NodePolicy,
    jitter: Duration,
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
    marking: Marking,
    ecn: EcnCapability,
    drop_log: bool,
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
    ttl_expiry: TtlExpiry,
    protection: ProtectionCost,
    stats: StatsConfig,
    tracer: Option<Tracer>,
    trace_flow_names: Option<Vec<String>>,
    limits: Limits,
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
            ttl_expiry: TtlExpiry::Drop,
            protection: ProtectionCost::default(),
            stats: StatsConfig::default(),
            tracer: None,
            trace_flow_names: None,
            limits: Limits::default(),
            errors: Vec::new(),
        }
    }

    /// Add a node; ids are 0, 1, 2 … in order (NS-2's node numbering).
    pub fn add_node(&mut self, name: &str) -> NodeId {
        self.nodes.push(NodeSpec {
            name: name.to_string(),
            policy: NodePolicy::Forward,
            jitter: Duration::ZERO,
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

    /// Set what a node does to the packets it forwards ([`NodePolicy`]).
    pub fn set_node_policy(&mut self, node: NodeId, policy: NodePolicy) {
        match self.nodes.get_mut(node as usize) {
            Some(n) => n.policy = policy,
            None => self.errors.push(BuildError::UnknownNode(node)),
        }
    }

    /// Mark a node untrusted ([`NodePolicy::Untrusted`]) or not: unprotected packets crossing
    /// it are flagged `exposed`.
    pub fn set_untrusted(&mut self, node: NodeId, untrusted: bool) {
        let p = if untrusted {
            NodePolicy::Untrusted
        } else {
            NodePolicy::Forward
        };
        self.set_node_policy(node, p);
    }

    /// Give a node a random processing delay: every packet reaching it (from a link or from
    /// one of its agents) waits a uniform random time in `[0, jitter)`, whole nanoseconds
    /// from the node's own random stream, before it is forwarded or delivered, never
    /// overtaking the packet ahead of it. Zero (the default) adds nothing and draws nothing.
    /// Breaks the traffic-phase effects of deterministic networks (`docs/phase-effects.md`).
    pub fn set_processing_jitter(&mut self, node: NodeId, jitter: Duration) {
        match self.nodes.get_mut(node as usize) {
            Some(n) => n.jitter = jitter,
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
                let size = c.config().packet_size;
                if r.is_nan() || r <= 0.0 {
                    self.errors.push(BuildError::BadRate(id));
                } else if f64::from(size) * 8.0 / r < 1e-9 {
                    self.errors.push(BuildError::RateTooHigh {
                        flow: id,
                        rate_bps: r.min(u64::MAX as f64) as u64,
                        packet_size: size,
                    });
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
            marking: Marking::AsSent,
            ecn: EcnCapability::NotEct,
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
        self.change_link_at(at, link, LinkUpdate::Down);
    }

    /// Bring a link direction back up at `at`; routes are recomputed.
    pub fn link_up_at(&mut self, at: Time, link: LinkId) {
        self.change_link_at(at, link, LinkUpdate::Up);
    }

    /// Change some of a link direction's parameters at `at` ([`LinkUpdate::Set`]): packets
    /// already in transmission or propagation keep the bandwidth and delay they were sent
    /// with.
    pub fn set_link_at(&mut self, at: Time, link: LinkId, settings: LinkSettings) {
        if settings.bandwidth_bps == Some(0) {
            self.errors.push(BuildError::ZeroBandwidth(link));
        }
        if settings
            .loss_rate
            .is_some_and(|p| !(0.0..=1.0).contains(&p))
        {
            self.errors.push(BuildError::BadProbability(link));
        }
        self.change_link_at(at, link, LinkUpdate::Set(settings));
    }

    /// Schedule a change to a link direction at `at`. Changes at the same time apply in the
    /// order they were added.
    pub fn change_link_at(&mut self, at: Time, link: LinkId, update: LinkUpdate) {
        self.changes.push(LinkChange { at, link, update });
    }

    /// The per-packet cost of protection at every host (its outgoing and incoming stages); the
    /// default is [`ProtectionCost::default`]. Unprotected packets cost nothing.
    pub fn protection_cost(&mut self, seal: Duration, open: Duration) {
        self.protection = ProtectionCost { seal, open };
    }

    /// Protect every packet of `flow`, both directions, whatever its agents decide
    /// ([`Marking::ProtectAll`]); otherwise a packet is protected when its agent sets
    /// [`crate::Packet::protected`].
    pub fn protect_flow(&mut self, flow: FlowId, on: bool) {
        match self.flows.get_mut(flow as usize) {
            Some(f) => {
                f.marking = if on {
                    Marking::ProtectAll
                } else {
                    Marking::AsSent
                }
            }
            None => self.errors.push(BuildError::UnknownFlow(flow)),
        }
    }

    /// Make `flow` ECN-capable: its sender's packets with payload carry ECT
    /// ([`EcnCapability::Data`], as NS-2's `ecn_` does), so an AQM that marks (RED's `setbit_`)
    /// marks them instead of dropping them early. The agents' response to marks is their own
    /// (the TFRC receiver counts a mark as a loss, RFC 5348 §5.1).
    pub fn ecn_capable_flow(&mut self, flow: FlowId, on: bool) {
        match self.flows.get_mut(flow as usize) {
            Some(f) => {
                f.ecn = if on {
                    EcnCapability::Data
                } else {
                    EcnCapability::NotEct
                }
            }
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

    /// What every link does with a packet whose TTL runs out ([`TtlExpiry`]).
    pub fn set_ttl_expiry(&mut self, policy: TtlExpiry) {
        self.ttl_expiry = policy;
    }

    /// Send a time-exceeded notice to the source of every packet dropped for TTL
    /// ([`TtlExpiry::Notify`]), or only drop it.
    pub fn ttl_notices(&mut self, on: bool) {
        self.set_ttl_expiry(if on {
            TtlExpiry::Notify
        } else {
            TtlExpiry::Drop
        });
    }

    /// Statistics configuration (bin width, measurement window, per-packet delays).
    pub fn stats(&mut self, cfg: StatsConfig) {
        self.stats = cfg;
    }

    /// Trace every packet event to `out` (off by default).
    pub fn trace(&mut self, out: Box<dyn Write>, format: TraceFormat) {
        let sink = self.tracer.take().and_then(|mut t| t.take_sink());
        let mut t = Tracer::new(out, format);
        if let Some(s) = sink {
            t.set_sink(s);
        }
        self.tracer = Some(t);
    }

    /// Also give every packet event to `sink` (beside a text trace, if any).
    pub fn trace_sink(&mut self, sink: Box<dyn TraceSink>) {
        match &mut self.tracer {
            Some(t) => t.set_sink(sink),
            None => self.tracer = Some(Tracer::with_sink(sink)),
        }
    }

    /// Name the flows (by the order they were added) in CSV traces, beside the nodes' names;
    /// without it a CSV trace has numbers only.
    pub fn trace_flow_names(&mut self, flows: Vec<String>) {
        self.trace_flow_names = Some(flows);
    }

    /// Ceilings on events, flows and packets in the network ([`Limits`]).
    pub fn limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Validate and produce a simulator ready to run, with every statistic ([`FullStats`]).
    pub fn build(self) -> Result<Simulator, BuildError> {
        self.build_with::<FullStats>()
    }

    /// [`NetworkBuilder::build`], measuring what `M` says ([`Metering`]): `CountersOnly`
    /// leaves flow recorders and queue gauges out of the event loop.
    pub fn build_with<M: Metering>(mut self) -> Result<Simulator<M>, BuildError> {
        if self.flows.len() > self.limits.max_flows {
            self.errors.insert(
                0,
                BuildError::TooManyFlows {
                    flows: self.flows.len(),
                    limit: self.limits.max_flows,
                },
            );
        }
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
        let (hot, links): (Vec<LinkHot>, Vec<Link>) = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let i = i as u64;
                let queue = Queue::new(
                    &l.cfg.queue,
                    l.cfg.bandwidth_bps as f64,
                    l.cfg.delay.as_secs_f64(),
                );
                let hot = LinkHot::new(l.to, &l.cfg, &queue);
                let link = Link {
                    from: l.from,
                    to: l.to,
                    bandwidth_bps: l.cfg.bandwidth_bps,
                    queue,
                    loss: l.cfg.loss.as_ref().map(LossModel::new),
                    lost_in_tx: None,
                    ttl_expiry: self.ttl_expiry,
                    stats: LinkStats::new(self.stats.bin_width),
                    cold: Box::new(LinkCold {
                        queue_rng: LazyStream::new(seed, Component::Queue, i),
                        loss_rng: LazyStream::new(seed, Component::LinkLoss, i),
                        wireless: l.cfg.wireless.clone().map(Wireless::new),
                        wireless_rng: LazyStream::new(seed, Component::Wireless, i),
                    }),
                };
                (hot, link)
            })
            .unzip();
        // NS-2 ports: per node, in attach order (flow order, sender then receiver).
        let mut next_port = vec![0u32; n];
        let mut agents = Vec::with_capacity(self.flows.len() * 2);
        let mut timers = 0usize;
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.into_iter().enumerate() {
            let fid = i as FlowId;
            let marking = f.marking;
            let ecn = f.ecn;
            for (sender, agent, node, peer) in [
                (true, f.sender, f.src, f.dst),
                (false, f.receiver, f.dst, f.src),
            ] {
                let idx = 2 * i as u64 + u64::from(!sender);
                let port = next_port[node as usize];
                next_port[node as usize] += 1;
                let timer_count = agent.timers();
                assert!(
                    timer_count <= crate::agent::MAX_TIMERS,
                    "an agent declares {timer_count} timers; at most {} (Agent::timers)",
                    crate::agent::MAX_TIMERS
                );
                let timer_base = u32::try_from(timers).expect("fewer than 2^32 timers");
                timers += timer_count;
                agents.push(AgentSlot {
                    sampled: !agent.sample_names().is_empty(),
                    agent,
                    io: AgentIo {
                        rng: stream(seed, Component::Agent, idx),
                        flow: fid,
                        dir: if sender {
                            Direction::Forward
                        } else {
                            Direction::Reverse
                        },
                        node,
                        peer,
                    },
                    port,
                    timer_base,
                    timer_count: timer_count as u8,
                    stuck: (Time::ZERO, 0),
                    marking,
                    ecn: if sender { ecn } else { EcnCapability::NotEct },
                    egress: HostStage::new(self.protection.seal),
                    ingress: HostStage::new(self.protection.open),
                    plain: false, // `Simulator::new` sets it.
                    path: 0,
                    path_dst: 0,
                    sent: 0,
                    delivered: 0,
                });
            }
            flows.push(FlowState {
                src: f.src,
                dst: f.dst,
                start: f.start,
                stop: f.stop,
                fids: f.fids,
                acct: [Account::default(); 2],
                drop_causes: f.drop_log.then(HashMap::new),
            });
        }
        if let (Some(tracer), Some(flows)) = (&mut self.tracer, self.trace_flow_names.take()) {
            tracer.set_names(TraceNames {
                nodes: self.nodes.iter().map(|n| n.name.clone()).collect(),
                flows,
            });
        }
        let nodes = self.nodes.iter().map(|n| n.policy).collect();
        // No stage at all unless some node delays: the exact path stays as it was.
        let node_stages = if self.nodes.iter().any(|n| !n.jitter.is_zero()) {
            self.nodes
                .iter()
                .enumerate()
                .map(|(i, n)| NodeStage::new(n.jitter, stream(seed, Component::Node, i as u64)))
                .collect()
        } else {
            Vec::new()
        };
        let names = self.nodes.into_iter().map(|n| n.name).collect();
        Ok(Simulator::<M>::new(
            names,
            nodes,
            node_stages,
            hot,
            links,
            agents,
            flows,
            self.changes,
            self.stats,
            self.tracer,
            self.limits,
        ))
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
