//! Build a [`Scenario`] into a `netsim` network and run it.
//!
//! This is the only place that maps scenario keys onto simulator configuration; `run`, `sweep`,
//! `validate`, `reproduce` and `bench` all go through [`simulate`].

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use netsim::agents::{
    AnyAgent, CbrClock, CbrConfig, CbrSource, CubicConfig, CubicProfile, CubicSender, LinuxCc,
    LinuxSink, LinuxSinkConfig, LinuxTcpConfig, LinuxTcpSender, MediaReceiver, MediaSender,
    NullSink, OnOff, OnOffConfig, OnOffTcp, TcpConfig, TcpSender, TcpSink, TcpSinkConfig, TfrcApp,
    TfrcReceiver, TfrcSender,
};
use netsim::trace::TraceFormat;
use netsim::{
    DropTailConfig, LinkConfig, LinkId, LinkSettings, LossConfig, NetworkBuilder, QueueConfig,
    RedConfig, RunResults, StatsConfig, Time, WirelessConfig,
};

use scenario::{
    Flow, FlowKind, LinkDirection, Loss, LossModel, MediaController, MediaSource, Queue,
    RedAverage, RedMaxP, RedParams, RedThresholds, Scenario, TcpVariant, TfrcProfile, Wireless,
};

/// For each scenario link, its forward and (duplex) reverse simplex link ids.
pub type LinkIds = Vec<(LinkId, Option<LinkId>)>;

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Override the scenario's seed.
    pub seed: Option<u64>,
    /// Write a packet trace.
    pub trace: Option<(PathBuf, TraceFormat)>,
    /// Keep every delivered packet's delay (for delay distributions).
    pub record_delays: bool,
}

/// What a run produced, with the mapping back to the scenario.
#[derive(Debug)]
pub struct RunOutput {
    /// The seed used.
    pub seed: u64,
    /// The simulator's results.
    pub results: RunResults,
    /// Wall-clock time of the simulation itself.
    pub wall: Duration,
    /// For each scenario link, its forward and (duplex) reverse simplex link ids.
    pub link_ids: LinkIds,
    /// Each flow's forward path (simplex link ids) when the run started.
    pub paths: Vec<Vec<LinkId>>,
    /// The TFRC agents' and RED queues' final state, for the variant metrics.
    pub internals: crate::probes::Internals,
}

/// Why a run failed.
#[derive(Debug)]
pub enum RunError {
    /// The scenario could not be built into a network.
    Build(String),
    /// The trace file could not be created.
    Trace(PathBuf, std::io::Error),
    /// The simulation failed (for example packet accounting did not balance).
    Sim(netsim::SimError),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Build(e) => write!(f, "cannot build the network: {e}"),
            RunError::Trace(p, e) => write!(f, "cannot create trace file {}: {e}", p.display()),
            RunError::Sim(e) => write!(f, "simulation failed: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

pub(crate) fn time(d: Duration) -> Time {
    Time::from_nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// NS-2 Queue/RED parameters, and the variant policies, in the simulator's form.
pub fn red_config(limit: u32, p: &RedParams) -> RedConfig {
    use netsim::queue::{AdaptiveQ3, AdaptiveRed};
    let average = match p.average {
        RedAverage::Ewma => netsim::queue::RedAverage::Ewma,
        RedAverage::ShewhartEwma => netsim::queue::RedAverage::ShewhartEwma,
    };
    let thresholds = match p.thresholds {
        RedThresholds::Fixed => netsim::queue::RedThresholds::Fixed,
        RedThresholds::AutoTuned { alpha_th } => {
            netsim::queue::RedThresholds::AutoTuned { alpha_th }
        }
    };
    let max_p = match p.max_p {
        RedMaxP::Fixed => netsim::queue::RedMaxP::Fixed,
        RedMaxP::AdaptiveQ3(a) => netsim::queue::RedMaxP::Q3(AdaptiveQ3 {
            alpha: a.alpha,
            beta: a.beta,
            interval: a.interval.as_secs_f64(),
            top: a.top,
            bottom: a.bottom,
        }),
        RedMaxP::AdaptiveRed(a) => netsim::queue::RedMaxP::AdaptiveRed(AdaptiveRed {
            alpha: a.alpha,
            beta: a.beta,
            interval: a.interval.as_secs_f64(),
            top: a.top,
            bottom: a.bottom,
        }),
    };
    RedConfig {
        limit,
        bytes: p.bytes,
        queue_in_bytes: p.queue_in_bytes,
        thresh: p.thresh.unwrap_or(0.0),
        maxthresh: p.maxthresh.unwrap_or(0.0),
        mean_pktsize: p.mean_pktsize,
        q_weight: p.q_weight.unwrap_or(-1.0),
        wait: p.wait,
        linterm: p.linterm,
        setbit: p.setbit,
        gentle: p.gentle,
        targetdelay: p.targetdelay.as_secs_f64(),
        average,
        thresholds,
        max_p,
        ..RedConfig::default()
    }
}

/// A scenario queue as netsim's configuration (the simulator's, and the emulator's: `realnet`
/// gives the same value to `netemu`).
pub fn queue_config(q: &Queue) -> QueueConfig {
    match q {
        Queue::DropTail {
            limit,
            in_bytes,
            mean_pktsize,
            drop_front,
        } => QueueConfig::DropTail(DropTailConfig {
            limit: *limit,
            in_bytes: *in_bytes,
            mean_pktsize: *mean_pktsize,
            drop_front: *drop_front,
        }),
        Queue::Red { limit, params } => QueueConfig::Red(red_config(*limit, params)),
    }
}

/// A scenario loss model as netsim's configuration.
pub fn loss_config(m: &LossModel) -> LossConfig {
    match m {
        LossModel::Bernoulli { rate } => LossConfig::Bernoulli { p: *rate },
        LossModel::GilbertElliott {
            p_good_bad,
            p_bad_good,
            loss_good,
            loss_bad,
        } => LossConfig::GilbertElliott {
            p_good_to_bad: *p_good_bad,
            p_bad_to_good: *p_bad_good,
            loss_good: *loss_good,
            loss_bad: *loss_bad,
        },
        LossModel::List { packets } => LossConfig::Nth(packets.clone()),
    }
}

fn wireless_config(w: &Wireless) -> WirelessConfig {
    WirelessConfig {
        frame_loss: LossConfig::Bernoulli { p: w.frame_loss },
        retry_limit: w.retry_limit,
        slot: w.slot,
        cw_min: w.cw_min,
        cw_max: w.cw_max,
        ..WirelessConfig::default()
    }
}

/// Whether a loss model or wireless hop given for `d` applies to the forward (`from` → `to`)
/// or reverse direction.
pub fn applies(d: LinkDirection, forward: bool) -> bool {
    matches!(
        (d, forward),
        (LinkDirection::Both, _) | (LinkDirection::Forward, true) | (LinkDirection::Reverse, false)
    )
}

/// The TFRC profile a flow runs (a TFRC flow, or a media flow over TFRC), with its segment
/// size and its `variants` applied (`None` for other kinds). Validation has applied the same variants, so the error is only for a
/// scenario built by hand.
pub fn tfrc_profile(flow: &Flow) -> Option<Result<tfrc::Profile, tfrc::variants::VariantError>> {
    match &flow.kind {
        FlowKind::Tfrc {
            profile, variants, ..
        }
        | FlowKind::Media {
            controller: MediaController::Tfrc { profile, variants },
            ..
        } => {
            let base = match profile {
                TfrcProfile::Rfc5348 => tfrc::Profile::rfc5348(),
                TfrcProfile::Ns2 => tfrc::Profile::ns2(),
            };
            Some(tfrc::variants::apply(
                base.with_segment_size(flow.packet_size),
                variants,
            ))
        }
        _ => None,
    }
}

/// The agents of `flow`; `classify`: TFRC receivers keep their loss-classification decisions
/// (for the confusion matrix).
fn agents(flow: &Flow, classify: bool) -> Result<(AnyAgent, AnyAgent), RunError> {
    Ok(match &flow.kind {
        FlowKind::Udp {
            rate_bps,
            random,
            max_packets,
        } => {
            let cfg = CbrConfig {
                packet_size: flow.packet_size,
                rate_bps: *rate_bps,
                random: *random,
                max_packets: max_packets.unwrap_or(CbrConfig::default().max_packets),
                ..CbrConfig::default()
            };
            (CbrSource::new(cfg).into(), NullSink::new().into())
        }
        FlowKind::Tcp {
            variant,
            window,
            window_init,
            delayed_ack,
            overhead,
            on_off,
        } => {
            let v = match variant {
                TcpVariant::Linux(cc) => {
                    let cfg = LinuxTcpConfig {
                        window: *window,
                        window_init: *window_init,
                        packet_size: flow.packet_size,
                        ..LinuxTcpConfig::new(match cc {
                            scenario::LinuxCc::Reno => LinuxCc::Reno,
                            scenario::LinuxCc::Cubic => LinuxCc::Cubic,
                        })
                    };
                    return Ok((
                        LinuxTcpSender::new(cfg).into(),
                        LinuxSink::new(LinuxSinkConfig::default()).into(),
                    ));
                }
                TcpVariant::Tahoe => netsim::agents::TcpVariant::Tahoe,
                TcpVariant::Reno => netsim::agents::TcpVariant::Reno,
                TcpVariant::NewReno => netsim::agents::TcpVariant::NewReno,
                TcpVariant::Sack => netsim::agents::TcpVariant::Sack,
                TcpVariant::Cubic(p) => {
                    let profile = match p {
                        scenario::CubicProfile::Rfc9438 => CubicProfile::Rfc9438,
                        scenario::CubicProfile::Ns2 => CubicProfile::Ns2,
                    };
                    let cfg = CubicConfig {
                        window: *window,
                        window_init: *window_init,
                        packet_size: flow.packet_size,
                        ..CubicConfig::ns2(profile)
                    };
                    // The parser refuses delayed_ack with CUBIC: its sink is Sack1.
                    return Ok((
                        CubicSender::new(cfg).into(),
                        TcpSink::new(TcpSinkConfig::ns2_linux()).into(),
                    ));
                }
            };
            let cfg = TcpConfig {
                window: *window,
                window_init: *window_init,
                packet_size: flow.packet_size,
                overhead: *overhead,
                ecn: flow.ecn,
                ..TcpConfig::ns2(v)
            };
            let sink = TcpSinkConfig {
                // Sack1 needs the SACK blocks of NS-2's TCPSink/Sack1.
                sack_blocks: (*variant == TcpVariant::Sack).then_some(3),
                ..if *delayed_ack {
                    TcpSinkConfig::ns2_delack()
                } else {
                    TcpSinkConfig::ns2()
                }
            };
            let sender = TcpSender::new(cfg);
            let sender: AnyAgent = match on_off {
                Some(o) => OnOffTcp::new(
                    sender,
                    OnOffConfig {
                        size_min: o.size_min,
                        size_max: o.size_max,
                        off_mean: o.off_mean,
                        start_on: o.start_on,
                    },
                )
                .into(),
                None => sender.into(),
            };
            (sender, TcpSink::new(sink).into())
        }
        FlowKind::Media {
            controller: MediaController::Tfrc { .. },
            source,
            deadline,
            pauses,
        } => {
            let profile = tfrc_profile(flow)
                .ok_or_else(|| RunError::Build("not a media flow over TFRC".into()))?
                .map_err(|e| RunError::Build(format!("flow \"{}\": {e}", flow.name)))?;
            let bad = |e: String| RunError::Build(format!("flow \"{}\": {e}", flow.name));
            let app = media::sender::MediaSender::new(
                media_source(source).map_err(|e| bad(e.to_string()))?,
                flow.packet_size,
                u64::try_from(deadline.as_nanos()).unwrap_or(u64::MAX),
            )
            .map_err(|e| bad(e.to_string()))?;
            (
                MediaSender::tfrc(app, &profile)
                    .map_err(bad)?
                    .with_pauses(pauses.iter().map(|&(a, b)| (time(a), time(b))).collect())
                    .into(),
                MediaReceiver::tfrc(&profile).map_err(bad)?.into(),
            )
        }
        FlowKind::Media {
            controller: c @ (MediaController::Nada | MediaController::Scream | MediaController::Gcc),
            source,
            deadline,
            pauses,
        } => {
            let bad = |e: String| RunError::Build(format!("flow \"{}\": {e}", flow.name));
            let kind = rmcat::ControllerKind::from_name(c.name())
                .ok_or_else(|| bad(format!("no RMCAT controller \"{}\"", c.name())))?;
            let app = media::sender::MediaSender::new(
                media_source(source).map_err(|e| bad(e.to_string()))?,
                flow.packet_size,
                u64::try_from(deadline.as_nanos()).unwrap_or(u64::MAX),
            )
            .map_err(|e| bad(e.to_string()))?;
            (
                MediaSender::rmcat(app, kind, rate_range(source))
                    .with_pauses(pauses.iter().map(|&(a, b)| (time(a), time(b))).collect())
                    .into(),
                MediaReceiver::rmcat(kind).into(),
            )
        }
        FlowKind::Tfrc {
            app_rate_bps,
            app_on_off,
            ..
        } => {
            let profile = tfrc_profile(flow)
                .ok_or_else(|| RunError::Build("not a TFRC flow".into()))?
                .map_err(|e| RunError::Build(format!("flow \"{}\": {e}", flow.name)))?;
            let app = match (app_rate_bps, app_on_off) {
                (Some(r), None) => {
                    TfrcApp::Cbr(CbrClock::new(flow.packet_size, *r, false, u64::MAX))
                }
                (Some(r), Some((on, off))) => TfrcApp::OnOff(OnOff::new(
                    CbrClock::new(flow.packet_size, *r, false, u64::MAX),
                    *on,
                    *off,
                )),
                (None, _) => TfrcApp::Bulk,
            };
            let bad =
                |e: tfrc::ConfigError| RunError::Build(format!("flow \"{}\": {e}", flow.name));
            let receiver = TfrcReceiver::new(&profile).map_err(bad)?;
            let receiver = if classify {
                receiver.with_decision_log()
            } else {
                receiver
            };
            (
                TfrcSender::new(&profile, app).map_err(bad)?.into(),
                receiver.into(),
            )
        }
    })
}

/// The rate range an RMCAT controller keeps its target in: the statistical model's
/// `min_rate`, `max_rate` and `start_rate`; a trace, which ignores the controller, gets the
/// model's defaults (RFC 8867 §4's 150 kbit/s to 1.5 Mbit/s).
fn rate_range(s: &MediaSource) -> rmcat::RateRange {
    let default = media::model::StatisticalConfig::default();
    let cfg = match s {
        MediaSource::Statistical(cfg) => cfg,
        MediaSource::Trace { .. } => &default,
    };
    rmcat::RateRange {
        min: cfg.r_min,
        max: cfg.r_max,
        start: cfg.r_init,
    }
}

/// The video source a media flow's application runs.
pub fn media_source(s: &MediaSource) -> Result<media::Source, media::ConfigError> {
    match s {
        MediaSource::Statistical(cfg) => media::Source::statistical(cfg.clone()),
        MediaSource::Trace { trace, looped, .. } => {
            Ok(media::Source::trace(trace.clone(), *looped))
        }
    }
}

/// How a run of `s` gathers statistics (bins, measurement window); `validate` reads NS-2's
/// trace with the same configuration.
pub fn stats_config(s: &Scenario, record_delays: bool) -> StatsConfig {
    StatsConfig {
        bin_width: s.sample_interval,
        window_start: time(s.warmup),
        window_end: None,
        record_delays,
    }
}

/// The netsim settings of a `set` event for one direction of `link`: the loss rate changes
/// only in the directions the link's loss model applies to.
pub fn link_settings(link: &scenario::Link, set: scenario::LinkSet, forward: bool) -> LinkSettings {
    let lossy = link
        .loss
        .as_ref()
        .is_some_and(|l| applies(l.direction, forward));
    LinkSettings {
        bandwidth_bps: set.bandwidth_bps.map(|b| b.round().max(1.0) as u64),
        delay: set.delay,
        queue_limit: set.queue_limit,
        loss_rate: set.loss_rate.filter(|_| lossy),
    }
}

/// Refuse a scenario cut into more time-series bins than netsim keeps
/// ([`netsim::stats::MAX_BINS`]): past that netsim coarsens its series (bounded memory),
/// while every table and report here reads them as `sample_interval` wide. Runs that keep no
/// series (`CountersOnly`) have nothing to misread. Checked by [`build`]; callers that write
/// files can check first.
pub fn check_bins(s: &Scenario) -> Result<(), RunError> {
    let bin = s.sample_interval.as_nanos().max(1);
    let bins = s.duration.as_nanos().div_ceil(bin);
    if bins > netsim::stats::MAX_BINS as u128 {
        return Err(RunError::Build(format!(
            "`sample_interval` {:?} cuts `duration` {:?} into {bins} time-series bins; at most {} \
             are kept: use a `sample_interval` of at least {:?}",
            s.sample_interval,
            s.duration,
            netsim::stats::MAX_BINS,
            Duration::from_nanos(
                u64::try_from(
                    s.duration
                        .as_nanos()
                        .div_ceil(netsim::stats::MAX_BINS as u128)
                )
                .unwrap_or(u64::MAX)
            ),
        )));
    }
    Ok(())
}

/// Build the network of `s` (with `seed`), ready to run.
pub fn build(s: &Scenario, opts: &RunOptions) -> Result<(netsim::Simulator, LinkIds), RunError> {
    build_with::<netsim::FullStats>(s, opts)
}

/// [`build`], measuring what `M` says ([`netsim::Metering`]).
pub fn build_with<M: netsim::Metering>(
    s: &Scenario,
    opts: &RunOptions,
) -> Result<(netsim::Simulator<M>, LinkIds), RunError> {
    build_traced::<M>(s, opts, None)
}

/// [`build_with`], giving every packet event to `sink` too (the pcap writer,
/// [`crate::pcap::PcapSink`], or a caller's own analysis).
pub fn build_traced<M: netsim::Metering>(
    s: &Scenario,
    opts: &RunOptions,
    sink: Option<Box<dyn netsim::trace::TraceSink>>,
) -> Result<(netsim::Simulator<M>, LinkIds), RunError> {
    if M::FLOWS || M::QUEUES {
        check_bins(s)?;
    }
    let seed = opts.seed.unwrap_or(s.seed);
    let mut b = NetworkBuilder::new(seed);
    b.limits(netsim::Limits {
        max_events: s.max_events.unwrap_or(u64::MAX),
        max_flows: scenario::MAX_FLOWS,
        ..netsim::Limits::default()
    });
    for n in &s.nodes {
        let id = b.add_node(&n.name);
        b.set_untrusted(id, n.untrusted);
        b.set_processing_jitter(id, n.processing_jitter);
    }
    let mut link_ids = Vec::with_capacity(s.links.len());
    for l in &s.links {
        let bps = l.bandwidth_bps.round().max(1.0) as u64;
        let dir_cfg = |forward: bool| {
            let mut c = LinkConfig::new(bps, l.delay).with_queue(queue_config(&l.queue));
            if let Some(Loss { model, direction }) = &l.loss {
                if applies(*direction, forward) {
                    c = c.with_loss(loss_config(model));
                }
            }
            if let Some(w) = &l.wireless {
                if applies(w.direction, forward) {
                    c = c.with_wireless(wireless_config(w));
                }
            }
            c
        };
        let (from, to) = (l.from as u32, l.to as u32);
        let fwd = b.add_simplex_link(from, to, dir_cfg(true));
        let rev = l
            .duplex
            .then(|| b.add_simplex_link(to, from, dir_cfg(false)));
        link_ids.push((fwd, rev));
    }
    b.protection_cost(s.protection.seal, s.protection.open);
    b.ttl_notices(s.ttl_notices);
    let classify = crate::probes::classifies(s);
    for (i, f) in s.flows.iter().enumerate() {
        let (tx, rx) = agents(f, classify)?;
        let stop = (f.stop < s.duration).then(|| time(f.stop));
        let id = b.add_flow(f.from as u32, f.to as u32, time(f.start), stop, tx, rx);
        if s.protection.flows.contains(&i) {
            b.protect_flow(id, true);
        }
        // A TCP sender marks its own packets ECT (all but the SYN, which asks for ECN).
        if f.ecn && !matches!(f.kind, FlowKind::Tcp { .. }) {
            b.ecn_capable_flow(id, true);
        }
        if classify && matches!(f.kind, FlowKind::Tfrc { .. }) {
            b.record_drop_causes(id, true);
        }
    }
    for e in &s.events {
        let (fwd, rev) = link_ids[e.link];
        for (id, forward) in std::iter::once((fwd, true)).chain(rev.map(|r| (r, false))) {
            match e.action {
                scenario::LinkAction::Down => b.link_down_at(time(e.at), id),
                scenario::LinkAction::Up => b.link_up_at(time(e.at), id),
                scenario::LinkAction::Set(set) => b.set_link_at(
                    time(e.at),
                    id,
                    link_settings(&s.links[e.link], set, forward),
                ),
            }
        }
    }
    b.stats(stats_config(s, opts.record_delays));
    if let Some((path, format)) = &opts.trace {
        let f = File::create(path).map_err(|e| RunError::Trace(path.clone(), e))?;
        b.trace(Box::new(BufWriter::new(f)), *format);
        b.trace_flow_names(s.flows.iter().map(|f| f.name.clone()).collect());
    }
    if let Some(sink) = sink {
        b.trace_sink(sink);
    }
    let sim = b
        .build_with::<M>()
        .map_err(|e| RunError::Build(e.to_string()))?;
    Ok((sim, link_ids))
}

/// Build and run `s` for its duration.
pub fn simulate(s: &Scenario, opts: &RunOptions) -> Result<RunOutput, RunError> {
    simulate_with_progress(s, opts, None, &mut |_| {})
}

/// Where a run is, for a progress report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SimProgress {
    /// The network is built (that can take seconds with 10⁵ flows); the run starts.
    Built {
        /// Flows in the network.
        flows: usize,
    },
    /// Simulated time reached so far, of the run's duration, and events processed.
    Running {
        /// Simulated time reached.
        now: Duration,
        /// The run's duration.
        duration: Duration,
        /// Events processed so far.
        events: u64,
    },
}

/// Steps a run is cut into for [`simulate_with_progress`]: stopping the event loop between
/// steps changes nothing ([`netsim::Simulator::advance`]) and costs nothing measurable.
pub const PROGRESS_STEPS: u64 = 200;

/// [`simulate`], giving every packet event to `sink` too ([`build_traced`]) and calling
/// `progress` once the network is built and then after every 1/[`PROGRESS_STEPS`] of
/// simulated time. The results are those of [`simulate`].
pub fn simulate_with_progress(
    s: &Scenario,
    opts: &RunOptions,
    sink: Option<Box<dyn netsim::trace::TraceSink>>,
    progress: &mut dyn FnMut(SimProgress),
) -> Result<RunOutput, RunError> {
    let (mut sim, link_ids) = build_traced::<netsim::FullStats>(s, opts, sink)?;
    let paths = s
        .flows
        .iter()
        .map(|f| sim.path(f.from as u32, f.to as u32))
        .collect();
    progress(SimProgress::Built {
        flows: s.flows.len(),
    });
    let t0 = Instant::now();
    let end = time(s.duration);
    let step = (end.as_nanos() / PROGRESS_STEPS).max(1);
    let mut at = step;
    while at < end.as_nanos() {
        sim.advance(Time::from_nanos(at)).map_err(RunError::Sim)?;
        progress(SimProgress::Running {
            now: Duration::from_nanos(at),
            duration: s.duration,
            events: sim.events(),
        });
        at += step;
    }
    let results = sim.run(end).map_err(RunError::Sim)?;
    // Flow ids are the scenario's flow indices (added in order).
    let ids: Vec<netsim::FlowId> = (0..s.flows.len() as netsim::FlowId).collect();
    let internals = crate::probes::collect(&sim, &ids, results.links.len());
    Ok(RunOutput {
        seed: opts.seed.unwrap_or(s.seed),
        results,
        wall: t0.elapsed(),
        link_ids,
        paths,
        internals,
    })
}
