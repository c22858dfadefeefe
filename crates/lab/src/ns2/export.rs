//! The Tcl writer behind [`export`].
//!
//! Every NS-2 construct used here was checked by running `ns` (Debian ns2, 2.35):
//! - `link-lossmodel` puts the error model after the link's transmission and propagation,
//!   before the receiving node, as `netsim` does; a lost packet is traced `+`, `-`, then `d` at
//!   its would-be arrival time, with no `r`.
//! - `ErrorModel/List` counts every packet that reaches it from 0 and drops the listed counts,
//!   which is the scenario's "0-based index of packets crossing the link".
//! - `rtmodel-at` cannot take a simplex link down (it looks up the reverse link) nor schedule
//!   anything at time 0 ("Cannot set event in the past", and the event is lost), so link events
//!   use a small `link-event` proc doing what `rtmodel` does: mark the links dynamic, switch
//!   them, and notify the route logic. With `rtproto Session` that recomputes the
//!   shortest-hop routes at once, as `netsim` recomputes its static routes.
//! - RED computes its automatic thresholds and weight when the link is created; writing
//!   `thresh_ 0`, `maxthresh_ 0` and `q_weight_ -1` afterwards makes it recompute them at
//!   start-up with the parameters set here (e.g. another `targetdelay_` or `mean_pktsize_`).
//! - `Agent/UDP` splits a CBR packet larger than its own `packetSize_` (1000) into fragments,
//!   so the UDP agent's `packetSize_` is set to the flow's packet size.
//! - `Agent/TFRC` with `SndrType_ 1` takes its data from an application: a CBR application's
//!   `sendmsg` of one packet queues one packet, and the first one starts the agent.
//! - TCPSink acks copy the data packet's fid, but TFRCSink feedback carries the sink's own
//!   `fid_` (0 unless set), so both agents of a flow get `fid_`.
//! - `$defaultRNG seed N` takes 1 ≤ N ≤ 2³¹ − 2 (0 means "seed from the clock"), and each
//!   `new RNG` created after it is the next independent MRG32k3a stream derived from that seed.

use std::fmt;
use std::time::Duration;

use scenario::{
    CubicProfile, Event, Flow, FlowKind, Link, LinkAction, LinkDirection, LinuxCc, Loss, LossModel,
    MaxPAimd, Node, Queue, RedAverage, RedMaxP, RedParams, RedThresholds, Scenario, TcpVariant,
    TfrcProfile, Wireless,
};

/// How [`export`] writes the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// The file `$ns trace-all` writes, as `ns` will open it (a relative path is relative to
    /// the directory `ns` runs in). `None`: no tracing at all, for timing NS-2 itself.
    pub trace_file: Option<String>,
}

impl ExportOptions {
    /// Trace everything to [`default_trace_file`].
    pub fn traced(scenario: &Scenario) -> Self {
        ExportOptions {
            trace_file: Some(default_trace_file(scenario)),
        }
    }

    /// No tracing.
    pub fn untraced() -> Self {
        ExportOptions { trace_file: None }
    }
}

/// `<name>.tr`, with every character of the scenario's name other than ASCII letters, digits,
/// `-`, `_` and `.` replaced by `_` (a name may contain `/` or spaces).
pub fn default_trace_file(scenario: &Scenario) -> String {
    let stem: String = scenario
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stem = if stem.is_empty() || stem.starts_with('.') {
        format!("scenario{stem}")
    } else {
        stem
    };
    format!("{stem}.tr")
}

/// NS-2 accepts raw seeds 1 ..= 2³¹ − 2 (2³¹ − 1 is rejected, 0 means "from the clock").
const NS2_SEED_RANGE: u64 = 2_147_483_646;

/// The NS-2 `$defaultRNG seed` for a scenario seed: the seed itself when it is in
/// 1 ..= 2³¹ − 2, otherwise it wraps into that range (`1 + (seed − 1) mod (2³¹ − 2)`, so
/// seed 0 becomes 2³¹ − 2). Never 0, which NS-2 reads as "seed from the clock".
pub fn ns2_seed(seed: u64) -> u32 {
    let s = (seed % NS2_SEED_RANGE + NS2_SEED_RANGE - 1) % NS2_SEED_RANGE + 1;
    // s ≤ 2³¹ − 2, so it always fits.
    u32::try_from(s).unwrap_or(1)
}

/// One thing in a scenario that NS-2.35 cannot express (or that would overflow NS-2's
/// integer parameters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The scenario item, e.g. `flow "tfrc1"` or `link "r0-r1"`.
    pub item: String,
    /// What it uses and why NS-2 cannot express it.
    pub message: String,
    /// What would make it exportable.
    pub instead: String,
}

/// Why a scenario cannot be exported: every unsupported item, in scenario order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError {
    /// The scenario file, as the user named it.
    pub file: String,
    /// At least one problem.
    pub problems: Vec<Unsupported>,
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: cannot export to NS-2.35, the scenario uses what NS-2 cannot express:",
            self.file
        )?;
        for p in &self.problems {
            write!(
                f,
                "\n  {}: {}\n    instead: {}",
                p.item, p.message, p.instead
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for ExportError {}

/// NS-2 binds these parameters to C `int`s.
const NS2_INT_MAX: u64 = i32::MAX as u64;

/// Write an NS-2.35 Tcl script that builds `scenario`: the same nodes, links (bandwidth, delay,
/// DropTail or RED queue with the same parameters in each direction), loss models on the same
/// link directions, link events, flows (TCP + FTP, UDP + CBR, TFRC with its sink, fed by a CBR
/// application when `app_rate` is set) with the same start and stop times and packet sizes,
/// and, when [`ExportOptions::trace_file`] is set, a `trace-all` to that file. The script is a
/// pure function of its inputs.
///
/// Mapping, also written in the script's header comment:
/// - node `k` of [`Scenario::nodes`] is NS-2 node id `k` (created in that order);
/// - links are created in [`Scenario::links`] order, duplex links with `duplex-link`;
/// - flow `i` sets `fid_ i` on both its sender and its receiver agent, so the reverse packets
///   (TCP `ack`, TFRC `tcpFriendCtl`) carry fid `i` too; data is `tcp`, `cbr` or `tcpFriend`;
/// - agents are attached in flow order, sender before receiver, so every node numbers its
///   agents' ports 0, 1, 2, … in that order;
/// - the scenario seed becomes `$defaultRNG seed` [`ns2_seed`]; each Bernoulli loss model
///   draws from its own `RNG` stream, created in link order.
///
/// Fails, naming every item, when the scenario uses what NS-2 cannot express: the RFC 5348
/// TFRC profile (NS-2's Agent/TFRC is the `ns2` profile), a Gilbert–Elliott loss model, a
/// wireless (ARQ) hop, or values beyond NS-2's integer parameters.
pub fn export(scenario: &Scenario, options: &ExportOptions) -> Result<String, ExportError> {
    let problems = check(scenario);
    if !problems.is_empty() {
        return Err(ExportError {
            file: scenario.file.clone(),
            problems,
        });
    }
    Ok(Writer::new(scenario, options).script())
}

fn link_item(scenario: &Scenario, i: usize) -> String {
    match scenario.links.get(i) {
        Some(l) => format!("link {:?}", l.name),
        None => format!("link #{i}"),
    }
}

/// Everything [`export`] refuses, in scenario order.
fn check(scenario: &Scenario) -> Vec<Unsupported> {
    let mut out = Vec::new();
    let n_nodes = scenario.nodes.len();
    let mut bad = |item: String, message: String, instead: &str| {
        out.push(Unsupported {
            item,
            message,
            instead: instead.to_string(),
        })
    };
    let int_ok = |v: u64| v <= NS2_INT_MAX;
    for (i, link) in scenario.links.iter().enumerate() {
        // Destructured in full, so that a new link key cannot be silently left out.
        let Link {
            name: _,
            from,
            to,
            bandwidth_bps,
            delay: _,
            duplex,
            queue,
            loss,
            wireless,
        } = link;
        let item = link_item(scenario, i);
        if *from >= n_nodes || *to >= n_nodes || from == to {
            bad(
                item.clone(),
                format!("endpoints {from} and {to} are not two of the {n_nodes} nodes"),
                "a link between two different existing nodes",
            );
        }
        if !(bandwidth_bps.is_finite() && *bandwidth_bps > 0.0) {
            bad(
                item.clone(),
                format!("bandwidth {bandwidth_bps} bit/s"),
                "a positive, finite bandwidth",
            );
        }
        let (limit, sizes) = match queue {
            Queue::DropTail {
                limit,
                in_bytes: _,
                mean_pktsize,
                drop_front: _,
            } => (*limit, vec![*mean_pktsize]),
            Queue::Red { limit, params } => {
                let RedParams {
                    thresh,
                    maxthresh,
                    q_weight,
                    linterm,
                    mean_pktsize,
                    idle_pktsize,
                    bytes: _,
                    queue_in_bytes: _,
                    gentle: _,
                    wait: _,
                    setbit: _,
                    targetdelay: _,
                    average,
                    thresholds,
                    max_p,
                } = params;
                // Seed 001's variants have no NS-2 counterpart; Adaptive RED is NS-2's own
                // `adaptive_ 1` (netsim agrees with it: crates/netsim/tests/red_ared_ns2.rs).
                if *average == RedAverage::ShewhartEwma {
                    bad(
                        item.clone(),
                        "uses average = \"shewhart-ewma\" (seed 001 Q1); NS-2.35's Queue/RED \
                         averages with the plain EWMA only"
                            .to_string(),
                        "average = \"ewma\" (queue = \"red\" or \"ared\") for NS-2 \
                         cross-validation",
                    );
                }
                if let RedThresholds::AutoTuned { .. } = thresholds {
                    bad(
                        item.clone(),
                        "uses thresholds = \"auto-tuned\" (seed 001 Q2); NS-2.35's Queue/RED \
                         keeps its thresholds fixed"
                            .to_string(),
                        "thresholds = \"fixed\" for NS-2 cross-validation",
                    );
                }
                let aimd_ok = |a: &MaxPAimd| {
                    [a.alpha, a.beta, a.top, a.bottom]
                        .iter()
                        .all(|x| x.is_finite() && *x >= 0.0)
                };
                match max_p {
                    RedMaxP::Fixed => {}
                    RedMaxP::AdaptiveQ3(_) => bad(
                        item.clone(),
                        "uses max_p = \"adaptive-q3\" (seed 001 Q3, evaluated every interval \
                         with its own bounds); NS-2.35's adaptive_ 1 is Adaptive RED, whose \
                         timer restarts only when max_p changes"
                            .to_string(),
                        "max_p = \"adaptive-red\" (or queue = \"ared\") for NS-2 \
                         cross-validation",
                    ),
                    RedMaxP::AdaptiveRed(a) if !aimd_ok(a) => bad(
                        item.clone(),
                        "Adaptive RED alpha, beta, top or bottom is not a finite number ≥ 0"
                            .to_string(),
                        "finite, non-negative adaptive parameters",
                    ),
                    RedMaxP::AdaptiveRed(_) => {}
                }
                let finite_nonneg = |x: &Option<f64>| x.is_none_or(|v| v.is_finite() && v >= 0.0);
                let red_ok = finite_nonneg(thresh)
                    && finite_nonneg(maxthresh)
                    && q_weight.is_none_or(f64::is_finite)
                    && linterm.is_finite()
                    && *linterm > 0.0;
                if !red_ok {
                    bad(
                        item.clone(),
                        "RED thresh, maxthresh, q_weight or linterm is not a finite number in range"
                            .to_string(),
                        "thresh, maxthresh ≥ 0, a finite q_weight, linterm > 0",
                    );
                }
                (*limit, vec![*mean_pktsize, *idle_pktsize])
            }
        };
        if limit == 0 || !int_ok(u64::from(limit)) {
            bad(
                item.clone(),
                format!("queue_limit {limit} is outside NS-2's limit_ range"),
                "a queue_limit from 1 to 2147483647",
            );
        }
        if sizes.iter().any(|&s| s == 0 || !int_ok(u64::from(s))) {
            bad(
                item.clone(),
                "a queue's mean_pktsize or idle_pktsize is outside NS-2's int range".to_string(),
                "packet sizes from 1 to 2147483647 bytes",
            );
        }
        if let Some(Loss { model, direction }) = loss {
            if !duplex && *direction != LinkDirection::Forward {
                bad(
                    item.clone(),
                    "a loss model on the reverse direction of a simplex link".to_string(),
                    "direction = \"forward\", or a duplex link",
                );
            }
            match model {
                LossModel::Bernoulli { rate } => {
                    if !(rate.is_finite() && (0.0..=1.0).contains(rate)) {
                        bad(
                            item.clone(),
                            format!("Bernoulli loss rate {rate}"),
                            "a probability in [0, 1]",
                        );
                    }
                }
                LossModel::GilbertElliott { .. } => bad(
                    item.clone(),
                    "uses the gilbert-elliott loss model; NS-2's two-state error models \
                     (ErrorModel/TwoState, TwoStateMarkov) draw continuous state durations and \
                     lose every packet of the bad state, not a per-packet Markov chain with \
                     loss_good and loss_bad"
                        .to_string(),
                    "model = \"bernoulli\" or \"list\" for NS-2 cross-validation",
                ),
                LossModel::List { packets } => {
                    if packets.iter().any(|&p| !int_ok(p)) {
                        bad(
                            item.clone(),
                            "a list loss index beyond 2147483647 (NS-2's ErrorModel/List \
                             counts packets in a C int)"
                                .to_string(),
                            "indices up to 2147483647",
                        );
                    }
                }
            }
        }
        if let Some(w) = wireless {
            let Wireless {
                frame_loss: _,
                retry_limit: _,
                slot: _,
                cw_min: _,
                cw_max: _,
                direction: _,
            } = w;
            bad(
                item.clone(),
                "has [links.wireless] (an 802.11-style hop with link-layer retransmission); \
                 NS-2's wired links have no ARQ, and its 802.11 MAC needs a wireless node \
                 setup that is not this point-to-point link"
                    .to_string(),
                "remove [links.wireless] (or use a loss model) for NS-2 cross-validation",
            );
        }
    }
    for flow in &scenario.flows {
        let Flow {
            name,
            from,
            to,
            start: _,
            stop: _,
            packet_size,
            ecn: _,
            kind,
            // What runs the flow on a real network; NS-2 runs the simulated flow.
            real: _,
        } = flow;
        let item = format!("flow {name:?}");
        if *from >= n_nodes || *to >= n_nodes || from == to {
            bad(
                item.clone(),
                format!("endpoints {from} and {to} are not two of the {n_nodes} nodes"),
                "a flow between two different existing nodes",
            );
        }
        if *packet_size == 0 || !int_ok(u64::from(*packet_size)) {
            bad(
                item.clone(),
                format!("packet_size {packet_size}"),
                "a packet_size from 1 to 2147483647 bytes",
            );
        }
        match kind {
            FlowKind::Tcp {
                variant,
                window,
                window_init,
                delayed_ack: _,
                overhead: _,
                on_off,
            } => {
                if let TcpVariant::Linux(cc) = variant {
                    bad(
                        item.clone(),
                        format!(
                            "uses profile \"linux\" (variant = \"{}\"); NS-2.35 has no model of \
                             today's Linux TCP: its Agent/TCP/Linux runs 2.6.22-era congestion \
                             modules inside NS-2's own sender, without RACK-TLP, PRR, F-RTO, \
                             HyStart or the Linux receiver's delayed and quick ACKs",
                            match cc {
                                LinuxCc::Reno => "reno",
                                LinuxCc::Cubic => "cubic",
                            }
                        ),
                        "an NS-2 variant (\"reno\", \"sack\", or \"cubic\" with profile = \"ns2\") \
                         for NS-2 cross-validation; compare profile = \"linux\" with the kernel \
                         itself (`tfrclab validate --real`)",
                    );
                }
                if on_off.is_some() {
                    bad(
                        item.clone(),
                        "has [flows.on_off]; the NS-2 export writes only always-backlogged FTP \
                         sources"
                            .to_string(),
                        "remove [flows.on_off] for NS-2 cross-validation",
                    );
                }
                if *variant == TcpVariant::Cubic(CubicProfile::Rfc9438) {
                    bad(
                        item.clone(),
                        "uses CUBIC profile \"rfc9438\"; NS-2.35 has no RFC 9438 CUBIC: its \
                         Agent/TCP/Linux runs Linux 2.6.22's cubic module (beta 819/1024, C \
                         scaled against a fixed 100 ms RTT, 50-ACK growth before the first \
                         loss, its own TCP-friendly estimate), whose constants `select_ca` \
                         cannot change to RFC 9438's"
                            .to_string(),
                        "profile = \"ns2\" (the module's behaviour) for NS-2 cross-validation",
                    );
                }
                if !int_ok(u64::from(*window)) || !int_ok(u64::from(*window_init)) {
                    bad(
                        item.clone(),
                        "window or window_init beyond NS-2's int range".to_string(),
                        "values up to 2147483647",
                    );
                }
            }
            FlowKind::Udp {
                rate_bps,
                random: _,
                max_packets,
            } => {
                if !(rate_bps.is_finite() && *rate_bps > 0.0) {
                    bad(
                        item.clone(),
                        format!("rate {rate_bps} bit/s"),
                        "a positive, finite rate",
                    );
                }
                if max_packets.is_some_and(|m| !int_ok(m)) {
                    bad(
                        item.clone(),
                        "max_packets beyond NS-2's int maxpkts_".to_string(),
                        "max_packets up to 2147483647",
                    );
                }
            }
            FlowKind::Tfrc {
                profile,
                app_rate_bps,
                app_on_off: _,
                variants,
            } => {
                // The variants are policies of tfrclab's TFRC core; NS-2.35's Agent/TFRC has
                // none of them as specified.
                for v in variants {
                    bad(
                        item.clone(),
                        format!(
                            "uses TFRC variant \"{}\"; {}",
                            crate::summary::variants::choice_text(v),
                            ns2_lacks(v)
                        ),
                        "remove it from `variants` for NS-2 cross-validation",
                    );
                }
                match profile {
                    TfrcProfile::Ns2 => {}
                    TfrcProfile::Rfc5348 => bad(
                        item.clone(),
                        "uses TFRC profile \"rfc5348\"; NS-2.35's Agent/TFRC implements only \
                         its own behaviour, the \"ns2\" profile (docs/ns2-reference.md §1 lists the differences)"
                            .to_string(),
                        "profile = \"ns2\" for NS-2 cross-validation",
                    ),
                }
                if app_rate_bps.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
                    bad(
                        item.clone(),
                        "app_rate is not a positive, finite rate".to_string(),
                        "a positive app_rate, or none for an always-backlogged sender",
                    );
                }
            }
            FlowKind::Media { .. } => bad(
                item.clone(),
                "is a media flow; NS-2.35 has no video application or media congestion \
                 controller to run it with"
                    .to_string(),
                "tfrclab run (docs/media.md), or a tfrc flow for NS-2 cross-validation",
            ),
        }
    }
    // E6: NS-2 has no per-packet processing cost; protecting whole flows would shift their
    // timing by seal + open per packet. The cost alone (nothing protected) changes nothing.
    for &i in &scenario.protection.flows {
        let name = scenario.flows.get(i).map_or("?", |f| f.name.as_str());
        bad(
            format!("flow {name:?}"),
            "is listed in [protection] flows; NS-2 has no per-packet protection cost (seal \
             and open)"
                .to_string(),
            "remove it from [protection] flows for NS-2 cross-validation",
        );
    }
    // NS-2 has no node processing delay. Its one per-packet random delay, the `DelayModel`
    // connector, delays each packet independently (reordering a flow's packets) and belongs
    // to no node, so it would not be the same experiment (docs/phase-effects.md).
    let jittery: Vec<&scenario::Node> = scenario
        .nodes
        .iter()
        .filter(|n| !n.processing_jitter.is_zero())
        .collect();
    let why = |j: Duration| {
        format!(
            "has processing_jitter = {j:?}; NS-2.35 has no per-node processing delay (its \
             DelayModel delays packets independently, reordering them)"
        )
    };
    let instead = "processing_jitter = 0 for NS-2 cross-validation; to break phase effects in \
                   both simulators, a TCP flow's `overhead` (NS-2's overhead_)";
    // The same value at every node (the top-level key) is one problem, not one per node.
    match jittery.first() {
        Some(first)
            if jittery.len() == scenario.nodes.len()
                && jittery.len() > 1
                && jittery
                    .iter()
                    .all(|n| n.processing_jitter == first.processing_jitter) =>
        {
            bad(
                "every node".to_string(),
                why(first.processing_jitter),
                instead,
            );
        }
        _ => {
            for n in jittery {
                bad(
                    format!("node {:?}", n.name),
                    why(n.processing_jitter),
                    instead,
                );
            }
        }
    }
    // E5: NS-2's TTLChecker drops silently; it has no time-exceeded notices.
    if scenario.ttl_notices {
        bad(
            "ttl_notices".to_string(),
            "is on; NS-2 drops packets whose TTL runs out without telling their source".to_string(),
            "ttl_notices = false (and no adaptive-ttl flow) for NS-2 cross-validation",
        );
    }
    for (k, ev) in scenario.events.iter().enumerate() {
        if ev.link >= scenario.links.len() {
            bad(
                format!("event #{k}"),
                format!("names link #{} of {}", ev.link, scenario.links.len()),
                "an existing link",
            );
        }
    }
    out
}

/// Seconds, exact to the nanosecond, without trailing zeros (`0.02`, `100`).
fn secs(d: Duration) -> String {
    let whole = d.as_secs();
    let nanos = d.subsec_nanos();
    if nanos == 0 {
        return whole.to_string();
    }
    let frac = format!("{nanos:09}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// Whether an event takes a link down or up (and so needs dynamic links and routing).
fn switches(a: &LinkAction) -> bool {
    matches!(a, LinkAction::Down | LinkAction::Up)
}

/// A number as Tcl and NS-2's parsers read it (Rust's shortest round-trip form, never in
/// exponent notation).
fn num(x: f64) -> String {
    format!("{x}")
}

fn tcl_bool(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

/// A Tcl double-quoted string with every substitution character escaped.
fn tcl_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' | '"' | '$' | '[' | ']' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A name for a comment: Rust-quoted, so no newline, no trailing backslash (which would
/// continue a Tcl comment onto the next line).
fn quoted(s: &str) -> String {
    format!("{s:?}")
}

struct Writer<'a> {
    s: &'a Scenario,
    trace: Option<&'a str>,
    out: String,
}

impl<'a> Writer<'a> {
    fn new(s: &'a Scenario, options: &'a ExportOptions) -> Self {
        Writer {
            s,
            trace: options.trace_file.as_deref(),
            out: String::new(),
        }
    }

    fn line(&mut self, text: impl AsRef<str>) {
        self.out.push_str(text.as_ref());
        self.out.push('\n');
    }

    fn node_name(&self, k: usize) -> String {
        self.s
            .nodes
            .get(k)
            .map(|n| quoted(&n.name))
            .unwrap_or_else(|| format!("#{k}"))
    }

    fn script(mut self) -> String {
        self.header();
        self.line("set ns [new Simulator]");
        self.line("");
        self.seed();
        self.tracing();
        self.routing();
        self.nodes();
        self.links();
        self.events();
        self.flows();
        self.finish();
        self.out
    }

    fn header(&mut self) {
        let s = self.s;
        // Destructured in full so that a new top-level key cannot be silently left out; the
        // metric-only keys (warmup, sample_interval, tolerances) have no NS-2 counterpart.
        let Scenario {
            name,
            description,
            file,
            source: _,
            duration,
            seed,
            warmup: _,
            sample_interval: _,
            // A budget only stops a runaway run; NS-2 has none.
            max_events: _,
            nodes,
            links: _,
            flows,
            events: _,
            tolerances: _,
            // Whole-flow protection is refused in `check`; the cost alone changes nothing.
            protection: _,
            // Refused in `check` when on.
            ttl_notices: _,
            // Settings of `validate --real`; nothing in NS-2.
            real: _,
        } = s;
        self.line(format!(
            "# NS-2.35 script for the tfrclab scenario {}, written by `tfrclab export-ns2` from {}.",
            quoted(name),
            quoted(file)
        ));
        if let Some(d) = description {
            self.line(format!("# Description: {}", quoted(d)));
        }
        self.line(format!(
            "# Run: ns <this file>   (simulated time {} s)",
            secs(*duration)
        ));
        self.line("#");
        self.line(
            "# Identity mapping, so that tfrclab's metric code reads this trace like its own:",
        );
        self.line(
            "#   node id k    = scenario node k (below; numbered in order of first appearance)",
        );
        self.line("#   links        = created in scenario order; duplex links with duplex-link");
        self.line(
            "#   fid_ i       = flow i, on its sender and its receiver agent, so data and the",
        );
        self.line("#                  reverse packets (TCP ack, TFRC feedback) both carry fid i");
        self.line(
            "#   ports        = agents attached in flow order, sender before receiver, so each",
        );
        self.line(
            "#                  node numbers its agents 0, 1, 2, ... (NS-2's port allocation)",
        );
        self.line("#   packet types = tcp/ack (TCP), cbr (UDP), tcpFriend/tcpFriendCtl (TFRC)");
        self.line(
            "#   sizes        = packet_size is NS-2's packetSize_: TCP adds 40 header bytes on the",
        );
        self.line("#                  wire, TFRC 32, UDP none");
        self.line(format!(
            "#   seed         = scenario seed {seed} -> $defaultRNG seed {} (1 + (seed-1) mod (2^31-2);",
            ns2_seed(*seed)
        ));
        self.line("#                  NS-2's 0 would mean \"from the clock\")");
        match self.trace {
            Some(t) => self.line(format!("#   trace        = trace-all to {}", quoted(t))),
            None => self.line("#   trace        = none"),
        }
        self.line("#");
        self.line("# Nodes:");
        for (k, node) in nodes.iter().enumerate() {
            // A processing delay is refused in `check`.
            let Node {
                name,
                untrusted,
                processing_jitter: _,
            } = node;
            let note = if *untrusted {
                "   (untrusted: only tfrclab's metrics count packets crossing it)"
            } else {
                ""
            };
            self.line(format!("#   {k:>4} {}{note}", quoted(name)));
        }
        if !flows.is_empty() {
            self.line("# Flows (fid = index):");
            for (i, f) in flows.iter().enumerate() {
                let kind = match &f.kind {
                    FlowKind::Tcp { variant, .. } => format!("tcp {}", variant_name(*variant)),
                    FlowKind::Udp { .. } => "udp".to_string(),
                    FlowKind::Tfrc { .. } => "tfrc".to_string(),
                    FlowKind::Media { .. } => "media".to_string(),
                };
                self.line(format!(
                    "#   {i:>4} {}: {kind}, {} -> {}, {} s to {} s",
                    quoted(&f.name),
                    self.node_name(f.from),
                    self.node_name(f.to),
                    secs(f.start),
                    secs(f.stop)
                ));
            }
        }
        self.line("");
    }

    fn seed(&mut self) {
        self.line("# Randomness: TCP boot times, CBR random_ and RED draw from the default RNG;");
        self.line("# each loss model has its own stream (new RNG, created below in link order).");
        self.line("global defaultRNG");
        self.line(format!("$defaultRNG seed {}", ns2_seed(self.s.seed)));
        self.line("");
    }

    fn tracing(&mut self) {
        if let Some(t) = self.trace {
            self.line("# trace-all covers the links created after it, so it comes first.");
            self.line(format!("set tracefile [open {} w]", tcl_str(t)));
            self.line("$ns trace-all $tracefile");
            self.line("");
        }
    }

    fn routing(&mut self) {
        if !self.s.events.iter().any(|e| switches(&e.action)) {
            return;
        }
        self.line("# Link events: Session routing recomputes the shortest-hop routes as soon as a");
        self.line(
            "# link changes. link-event does what rtmodel does, but also for simplex links and",
        );
        self.line(
            "# at time 0 (where rtmodel-at fails): switch the links, then notify the routing.",
        );
        self.line("$ns rtproto Session");
        self.line("proc link-event {op pairs} {");
        self.line("    global ns n");
        self.line("    foreach {a b} $pairs {");
        self.line("        [$ns link $n($a) $n($b)] $op");
        self.line("    }");
        self.line("    foreach {a b} $pairs {");
        self.line("        $n($a) intf-changed");
        self.line("        $n($b) intf-changed");
        self.line("    }");
        self.line("    [$ns get-routelogic] notify");
        self.line("}");
        self.line("");
    }

    fn nodes(&mut self) {
        self.line("# Nodes, in scenario order: NS-2 node id = scenario node index.");
        for k in 0..self.s.nodes.len() {
            let name = self.node_name(k);
            self.line(format!("set n({k}) [$ns node] ;# {name}"));
        }
        self.line("");
    }

    /// The (from, to) node pairs of a link's directions that `dir` selects.
    fn directions(link: &Link, dir: LinkDirection) -> Vec<(usize, usize)> {
        let fwd = (link.from, link.to);
        let rev = (link.to, link.from);
        match dir {
            LinkDirection::Forward => vec![fwd],
            LinkDirection::Reverse => vec![rev],
            LinkDirection::Both => vec![fwd, rev],
        }
    }

    fn pairs(dirs: &[(usize, usize)]) -> String {
        dirs.iter()
            .map(|(a, b)| format!("{a} {b}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn links(&mut self) {
        let s = self.s;
        let mut rng = 0usize;
        for (i, link) in s.links.iter().enumerate() {
            let (a, b) = (link.from, link.to);
            let all = if link.duplex {
                LinkDirection::Both
            } else {
                LinkDirection::Forward
            };
            let dirs = Self::directions(link, all);
            let (qtype, limit) = match &link.queue {
                Queue::DropTail { limit, .. } => ("DropTail", *limit),
                Queue::Red { limit, .. } => ("RED", *limit),
            };
            self.line(format!(
                "# link {i} {}: {} {} {}, {} bit/s, delay {} s, {qtype} queue_limit {limit}",
                quoted(&link.name),
                self.node_name(a),
                if link.duplex { "<->" } else { "->" },
                self.node_name(b),
                num(link.bandwidth_bps),
                secs(link.delay),
            ));
            self.line(format!(
                "$ns {} $n({a}) $n({b}) {} {} {qtype}",
                if link.duplex {
                    "duplex-link"
                } else {
                    "simplex-link"
                },
                num(link.bandwidth_bps),
                secs(link.delay)
            ));
            for (x, y) in &dirs {
                self.line(format!("$ns queue-limit $n({x}) $n({y}) {limit}"));
            }
            let settings = queue_settings(&link.queue);
            if !settings.is_empty() {
                self.line(format!("foreach {{a b}} {{{}}} {{", Self::pairs(&dirs)));
                self.line("    set q [[$ns link $n($a) $n($b)] queue]");
                for (k, v) in settings {
                    self.line(format!("    $q set {k} {v}"));
                }
                self.line("}");
            }
            if let Some(loss) = &link.loss {
                for (x, y) in Self::directions(link, loss.direction) {
                    self.loss(&loss.model, x, y, &mut rng);
                }
            }
            self.line("");
        }
    }

    fn loss(&mut self, model: &LossModel, a: usize, b: usize, rng: &mut usize) {
        match model {
            LossModel::Bernoulli { rate } => {
                let k = *rng;
                *rng += 1;
                self.line(format!(
                    "# Bernoulli loss {} on {} -> {}: link-lossmodel sits after transmission and",
                    num(*rate),
                    self.node_name(a),
                    self.node_name(b)
                ));
                self.line("# propagation; a lost packet is traced + - d (no r).");
                self.line(format!("set rng({k}) [new RNG]"));
                self.line(format!("set ranvar({k}) [new RandomVariable/Uniform]"));
                self.line(format!("$ranvar({k}) set min_ 0"));
                self.line(format!("$ranvar({k}) set max_ 1"));
                self.line(format!("$ranvar({k}) use-rng $rng({k})"));
                self.line("set em [new ErrorModel]");
                self.line("$em unit pkt");
                self.line(format!("$em set rate_ {}", num(*rate)));
                self.line(format!("$em ranvar $ranvar({k})"));
                self.line(format!("$ns link-lossmodel $em $n({a}) $n({b})"));
                if self.loss_changes(a, b) {
                    self.line(format!("set lossmodel({a},{b}) $em"));
                }
            }
            LossModel::List { packets } => {
                self.line(format!(
                    "# List loss on {} -> {}: drop the packets crossing it with these 0-based indices.",
                    self.node_name(a),
                    self.node_name(b)
                ));
                if packets.is_empty() {
                    // ErrorModel/List warns on every packet when its list is empty.
                    self.line("# (the list is empty: no error model)");
                    return;
                }
                let mut sorted = packets.clone();
                sorted.sort_unstable();
                sorted.dedup();
                let list = sorted
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(" ");
                self.line("set em [new ErrorModel/List]");
                self.line("$em unit pkt");
                self.line(format!("$em droplist {{{list}}}"));
                self.line(format!("$ns link-lossmodel $em $n({a}) $n({b})"));
            }
            // Refused by `check`.
            LossModel::GilbertElliott { .. } => {}
        }
    }

    /// Whether an event sets the loss rate of the link direction `a` → `b`.
    fn loss_changes(&self, a: usize, b: usize) -> bool {
        self.s.events.iter().any(|e| {
            let LinkAction::Set(set) = &e.action else {
                return false;
            };
            let Some(link) = self.s.links.get(e.link) else {
                return false;
            };
            set.loss_rate.is_some()
                && link
                    .loss
                    .as_ref()
                    .is_some_and(|l| Self::directions(link, l.direction).contains(&(a, b)))
        })
    }

    fn events(&mut self) {
        let s = self.s;
        if s.events.is_empty() {
            return;
        }
        if !s.events.iter().any(|e| switches(&e.action)) {
            self.set_events();
            return;
        }
        // Every link an up/down event touches is made dynamic once, in link order.
        let mut touched: Vec<usize> = s
            .events
            .iter()
            .filter(|e| switches(&e.action))
            .map(|e| e.link)
            .collect();
        touched.sort_unstable();
        touched.dedup();
        self.line("# Links with events are dynamic; their state changes are traced as v lines.");
        for &l in &touched {
            let Some(link) = s.links.get(l) else { continue };
            let all = if link.duplex {
                LinkDirection::Both
            } else {
                LinkDirection::Forward
            };
            let dirs = Self::directions(link, all);
            self.line(format!("foreach {{a b}} {{{}}} {{", Self::pairs(&dirs)));
            self.line("    set l [$ns link $n($a) $n($b)]");
            self.line("    $l dynamic");
            if self.trace.is_some() {
                self.line("    $l trace-dynamics $ns $tracefile");
            }
            self.line("}");
        }
        for ev in &s.events {
            let Event { at, action, link } = ev;
            let Some(l) = s.links.get(*link) else {
                continue;
            };
            let all = if l.duplex {
                LinkDirection::Both
            } else {
                LinkDirection::Forward
            };
            let op = match action {
                LinkAction::Down => "down",
                LinkAction::Up => "up",
                LinkAction::Set(set) => {
                    self.set_event(*at, l, set);
                    continue;
                }
            };
            self.line(format!(
                "$ns at {} \"link-event {op} {{{}}}\" ;# {}",
                secs(*at),
                Self::pairs(&Self::directions(l, all)),
                quoted(&l.name)
            ));
        }
        self.line("");
    }

    /// Scenarios whose events only set link parameters.
    fn set_events(&mut self) {
        let s = self.s;
        for ev in &s.events {
            if let (LinkAction::Set(set), Some(l)) = (&ev.action, s.links.get(ev.link)) {
                self.set_event(ev.at, l, set);
            }
        }
        self.line("");
    }

    /// One `action = "set"` event: NS-2 reads `bandwidth_` and `delay_` of a link's delay
    /// element when a transmission starts, and `limit_` of its queue on each arrival, so
    /// setting them at run time leaves packets already on the wire as they were sent.
    fn set_event(&mut self, at: Duration, l: &Link, set: &scenario::LinkSet) {
        let all = if l.duplex {
            LinkDirection::Both
        } else {
            LinkDirection::Forward
        };
        let mut cmds = Vec::new();
        for (a, b) in Self::directions(l, all) {
            let link = format!("[[$ns link $n({a}) $n({b})] link]");
            if let Some(bw) = set.bandwidth_bps {
                cmds.push(format!(
                    "{link} set bandwidth_ {}",
                    num(bw.round().max(1.0))
                ));
            }
            if let Some(d) = set.delay {
                cmds.push(format!("{link} set delay_ {}", secs(d)));
            }
            if let Some(q) = set.queue_limit {
                cmds.push(format!("[[$ns link $n({a}) $n({b})] queue] set limit_ {q}"));
            }
        }
        if let (Some(p), Some(loss)) = (set.loss_rate, &l.loss) {
            for (a, b) in Self::directions(l, loss.direction) {
                cmds.push(format!("$lossmodel({a},{b}) set rate_ {}", num(p)));
            }
        }
        for c in cmds {
            self.line(format!(
                "$ns at {} \"{c}\" ;# {}",
                secs(at),
                quoted(&l.name)
            ));
        }
    }

    fn flows(&mut self) {
        let s = self.s;
        for (i, flow) in s.flows.iter().enumerate() {
            let (a, b) = (flow.from, flow.to);
            let size = flow.packet_size;
            // Stopping at the end of the run is the same as not stopping.
            let stops = flow.stop < s.duration;
            let starts = flow.start < s.duration;
            match &flow.kind {
                FlowKind::Tcp {
                    variant,
                    window,
                    window_init,
                    delayed_ack,
                    overhead,
                    // Refused in `check`.
                    on_off: _,
                } => {
                    let class = match variant {
                        TcpVariant::Tahoe => "Agent/TCP",
                        TcpVariant::Reno => "Agent/TCP/Reno",
                        TcpVariant::NewReno => "Agent/TCP/Newreno",
                        TcpVariant::Sack => "Agent/TCP/Sack1",
                        // Refused by the check above: never written.
                        TcpVariant::Cubic(_) | TcpVariant::Linux(_) => "Agent/TCP/Linux",
                    };
                    let cubic = matches!(variant, TcpVariant::Cubic(_));
                    // CUBIC runs on Agent/TCP/Linux, whose sink is Sack1 (the parser refuses
                    // delayed_ack with it).
                    let sink = match (*variant == TcpVariant::Sack || cubic, *delayed_ack) {
                        (false, true) => "Agent/TCPSink/DelAck",
                        (false, false) => "Agent/TCPSink",
                        (true, true) => "Agent/TCPSink/Sack1/DelAck",
                        (true, false) => "Agent/TCPSink/Sack1",
                    };
                    self.line(format!(
                        "# flow {i} {}: tcp {} + FTP, {} -> {}",
                        quoted(&flow.name),
                        variant_name(*variant),
                        self.node_name(a),
                        self.node_name(b)
                    ));
                    self.line(format!("set src({i}) [new {class}]"));
                    self.line(format!("$src({i}) set fid_ {i}"));
                    self.line(format!("$src({i}) set packetSize_ {size}"));
                    self.line(format!("$src({i}) set window_ {window}"));
                    self.line(format!("$src({i}) set windowInit_ {window_init}"));
                    if !overhead.is_zero() {
                        self.line(format!("$src({i}) set overhead_ {}", secs(*overhead)));
                    }
                    if cubic {
                        self.line(format!("$src({i}) set timestamps_ true"));
                    }
                    if flow.ecn {
                        // ECN-capable: ECT data, ECE on the SYN; the sink echoes CE marks.
                        self.line(format!("$src({i}) set ecn_ 1"));
                    }
                    self.attach(i, a, b, sink);
                    if cubic {
                        // The Linux agent expects RFC 1323 echoes; the module is installed
                        // at time 0, before the source starts (an `at` event, as in NS-2's
                        // own Linux TCP examples).
                        self.line(format!("$dst({i}) set ts_echo_rfc1323_ true"));
                        self.line(format!("$ns at 0 \"$src({i}) select_ca cubic\""));
                    }
                    self.line(format!("set app({i}) [new Application/FTP]"));
                    self.line(format!("$app({i}) attach-agent $src({i})"));
                    if starts {
                        self.line(format!("$ns at {} \"$app({i}) start\"", secs(flow.start)));
                    }
                    if stops {
                        self.line(format!("$ns at {} \"$app({i}) stop\"", secs(flow.stop)));
                    }
                }
                FlowKind::Udp {
                    rate_bps,
                    random,
                    max_packets,
                } => {
                    self.line(format!(
                        "# flow {i} {}: udp + CBR, {} -> {}",
                        quoted(&flow.name),
                        self.node_name(a),
                        self.node_name(b)
                    ));
                    self.line(format!("set src({i}) [new Agent/UDP]"));
                    self.line(format!("$src({i}) set fid_ {i}"));
                    self.line(
                        "# UDP fragments what exceeds its packetSize_: make it the CBR packet size.",
                    );
                    self.line(format!("$src({i}) set packetSize_ {size}"));
                    self.attach(i, a, b, "Agent/Null");
                    self.line(format!("set app({i}) [new Application/Traffic/CBR]"));
                    self.line(format!("$app({i}) set packetSize_ {size}"));
                    self.line(format!("$app({i}) set rate_ {}", num(*rate_bps)));
                    self.line(format!("$app({i}) set random_ {}", u8::from(*random)));
                    if let Some(m) = max_packets {
                        self.line(format!("$app({i}) set maxpkts_ {m}"));
                    }
                    self.line(format!("$app({i}) attach-agent $src({i})"));
                    if starts {
                        self.line(format!("$ns at {} \"$app({i}) start\"", secs(flow.start)));
                    }
                    if stops {
                        self.line(format!("$ns at {} \"$app({i}) stop\"", secs(flow.stop)));
                    }
                }
                FlowKind::Tfrc {
                    profile: _,
                    app_rate_bps,
                    app_on_off,
                    // Refused in `check`.
                    variants: _,
                } => {
                    self.line(format!(
                        "# flow {i} {}: tfrc (NS-2's Agent/TFRC = the ns2 profile), {} -> {}",
                        quoted(&flow.name),
                        self.node_name(a),
                        self.node_name(b)
                    ));
                    self.line(format!("set src({i}) [new Agent/TFRC]"));
                    self.line(format!("$src({i}) set fid_ {i}"));
                    self.line(format!("$src({i}) set packetSize_ {size}"));
                    if app_rate_bps.is_some() {
                        self.line(
                            "# Data comes from the CBR application below, one packet per sendmsg.",
                        );
                        self.line(format!("$src({i}) set SndrType_ 1"));
                    }
                    if flow.ecn {
                        // ECN-capable: data packets carry ECT; the sink counts CE marks as
                        // losses (ns2-reference §1a).
                        self.line(format!("$src({i}) set ecn_ 1"));
                    }
                    self.attach(i, a, b, "Agent/TFRCSink");
                    match app_rate_bps {
                        Some(rate) => {
                            self.line(format!("set app({i}) [new Application/Traffic/CBR]"));
                            self.line(format!("$app({i}) set packetSize_ {size}"));
                            self.line(format!("$app({i}) set rate_ {}", num(*rate)));
                            self.line(format!("$app({i}) set random_ 0"));
                            self.line(format!("$app({i}) attach-agent $src({i})"));
                            if starts {
                                self.line(format!(
                                    "$ns at {} \"$app({i}) start\"",
                                    secs(flow.start)
                                ));
                            }
                            if let Some((on, off)) = app_on_off {
                                // The on-off application: the CBR stopped at the end of each on
                                // period and started again after the off period.
                                let mut t = flow.start + *on;
                                while t < flow.stop {
                                    self.line(format!("$ns at {} \"$app({i}) stop\"", secs(t)));
                                    t += *off;
                                    if t >= flow.stop {
                                        break;
                                    }
                                    self.line(format!("$ns at {} \"$app({i}) start\"", secs(t)));
                                    t += *on;
                                }
                            }
                            if stops {
                                // The agent stops too, so that queued data is not sent on.
                                self.line(format!(
                                    "$ns at {} \"$app({i}) stop; $src({i}) stop\"",
                                    secs(flow.stop)
                                ));
                            }
                        }
                        None => {
                            if starts {
                                self.line(format!(
                                    "$ns at {} \"$src({i}) start\"",
                                    secs(flow.start)
                                ));
                            }
                            if stops {
                                self.line(format!("$ns at {} \"$src({i}) stop\"", secs(flow.stop)));
                            }
                        }
                    }
                }
                // Refused in `check`: NS-2 has no media application.
                FlowKind::Media { .. } => {}
            }
            self.line("");
        }
    }

    /// Attach flow `i`'s sender at node `a` and a new `sink` agent at node `b`, in that order
    /// (ports), with the flow's fid on the sink too, and connect them.
    fn attach(&mut self, i: usize, a: usize, b: usize, sink: &str) {
        self.line(format!("$ns attach-agent $n({a}) $src({i})"));
        self.line(format!("set dst({i}) [new {sink}]"));
        self.line(format!("$dst({i}) set fid_ {i}"));
        self.line(format!("$ns attach-agent $n({b}) $dst({i})"));
        self.line(format!("$ns connect $src({i}) $dst({i})"));
    }

    fn finish(&mut self) {
        if self.trace.is_some() {
            self.line("proc finish {} {");
            self.line("    global ns tracefile");
            self.line("    $ns flush-trace");
            self.line("    close $tracefile");
            self.line("    exit 0");
            self.line("}");
        } else {
            self.line("proc finish {} {");
            self.line("    exit 0");
            self.line("}");
        }
        self.line(format!("$ns at {} \"finish\"", secs(self.s.duration)));
        self.line("$ns run");
    }
}

/// Why NS-2.35 cannot run TFRC variant `v`.
fn ns2_lacks(v: &tfrc::variants::VariantChoice) -> &'static str {
    use tfrc::variants::Variant;
    match v.name.parse::<Variant>() {
        Ok(Variant::TfrcSp) => {
            "NS-2.35's Agent/TFRC has a `voip_` mode, TFRC-SP's ancestor, but not RFC 4828: its \
             `ShortIntervals_` modes keep a short current interval (1), cap the losses counted \
             at fsize_/size (2) or count them gradually (3, Appendix C), its H is the 32-byte \
             `headersize_` that is also added to every packet, and its first loss interval \
             leaves out the header correction (docs/rfc4828-conformance.md)"
        }
        Ok(Variant::FasterRestart) => {
            "NS-2.35's Agent/TFRC has no Faster Restart, nor the RFC 5348 rate control it \
             modifies (docs/variants.md)"
        }
        Ok(Variant::MulTfrc) => {
            "NS-2.35's Agent/TFRC has no MulTFRC (its authors' NS-2 patch is not part of the \
             release; docs/variants.md)"
        }
        _ => "NS-2.35's Agent/TFRC implements none of the seed-paper variants (docs/variants.md)",
    }
}

fn variant_name(v: TcpVariant) -> &'static str {
    match v {
        TcpVariant::Tahoe => "tahoe",
        TcpVariant::Reno => "reno",
        TcpVariant::NewReno => "newreno",
        TcpVariant::Sack => "sack",
        TcpVariant::Cubic(CubicProfile::Ns2) => "cubic (profile ns2)",
        TcpVariant::Cubic(CubicProfile::Rfc9438) => "cubic (profile rfc9438)",
        TcpVariant::Linux(LinuxCc::Reno) => "reno (profile linux)",
        TcpVariant::Linux(LinuxCc::Cubic) => "cubic (profile linux)",
    }
}

/// `$q set` lines for a queue: every RED parameter (automatic ones as NS-2's 0 / −1 so they
/// are recomputed at start-up), and the DropTail options that differ from NS-2's defaults.
fn queue_settings(q: &Queue) -> Vec<(&'static str, String)> {
    match q {
        Queue::DropTail {
            limit: _,
            in_bytes,
            mean_pktsize,
            drop_front,
        } => {
            let mut v = Vec::new();
            if *in_bytes {
                v.push(("queue_in_bytes_", tcl_bool(true).to_string()));
            }
            if *mean_pktsize != 500 {
                v.push(("mean_pktsize_", mean_pktsize.to_string()));
            }
            if *drop_front {
                v.push(("drop_front_", tcl_bool(true).to_string()));
            }
            v
        }
        Queue::Red { limit: _, params } => {
            let RedParams {
                thresh,
                maxthresh,
                q_weight,
                linterm,
                mean_pktsize,
                idle_pktsize,
                bytes,
                queue_in_bytes,
                gentle,
                wait,
                setbit,
                targetdelay,
                average: _,
                thresholds: _,
                max_p,
            } = params;
            let mut v = vec![
                ("thresh_", num(thresh.unwrap_or(0.0))),
                ("maxthresh_", num(maxthresh.unwrap_or(0.0))),
                ("q_weight_", num(q_weight.unwrap_or(-1.0))),
                ("linterm_", num(*linterm)),
                ("mean_pktsize_", mean_pktsize.to_string()),
                ("idle_pktsize_", idle_pktsize.to_string()),
                ("bytes_", tcl_bool(*bytes).to_string()),
                ("queue_in_bytes_", tcl_bool(*queue_in_bytes).to_string()),
                ("gentle_", tcl_bool(*gentle).to_string()),
                ("wait_", tcl_bool(*wait).to_string()),
                ("setbit_", tcl_bool(*setbit).to_string()),
                ("targetdelay_", secs(*targetdelay)),
            ];
            // Adaptive RED; `check` refused seed 001's variants.
            if let RedMaxP::AdaptiveRed(a) = max_p {
                v.extend([
                    ("adaptive_", "1".to_string()),
                    ("alpha_", num(a.alpha)),
                    ("beta_", num(a.beta)),
                    ("interval_", secs(a.interval)),
                    ("top_", num(a.top)),
                    ("bottom_", num(a.bottom)),
                ]);
            }
            v
        }
    }
}

#[cfg(test)]
mod tests;
