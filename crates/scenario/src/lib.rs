//! Scenario files: one TOML file describes an experiment (topology, flows, events, tolerances).
//!
//! [`Scenario::load`] reads and validates a file; every problem is reported with file, line and
//! column, what is wrong and what is expected (see [`ScenarioError`]). The validated model uses
//! node and link indices and SI units (bit/s, integer-nanosecond durations), ready to be built
//! into a simulation. `docs/scenario.md` documents every key.

#![warn(missing_docs)]

mod error;
pub mod overrides;
mod parse;
mod raw;
pub mod traces;
pub mod units;

use std::path::Path;
use std::time::Duration;

pub use error::{Problem, ScenarioError};
pub use parse::DEFAULT_DEADLINE;

/// The most flows a scenario may have. A flow costs about 15 KiB of simulator state before it
/// sends anything (agents, recorders, histograms), so 10⁵ flows take 1.5 GB; a 10⁵-flow run
/// is tested to finish (`tfrclab` `run_cli` tests).
pub const MAX_FLOWS: usize = 100_000;

/// A validated scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: Option<String>,
    /// The file it came from, as named by the user.
    pub file: String,
    /// The file's text (after `--set` overrides), for reports.
    pub source: String,
    /// `duration`: simulated time.
    pub duration: Duration,
    /// `seed`: the run's random seed.
    pub seed: u64,
    /// `warmup`: time left out of the metrics.
    pub warmup: Duration,
    /// `sample_interval`: time-series bin width.
    pub sample_interval: Duration,
    /// `max_events`: the run stops with an error after this many events (default: no budget).
    pub max_events: Option<u64>,
    /// Nodes, implied by link endpoints, in order of first appearance.
    pub nodes: Vec<Node>,
    /// Links, from `[topology]` first, then `[[links]]`.
    pub links: Vec<Link>,
    /// Flows, in file order.
    pub flows: Vec<Flow>,
    /// Scheduled events, sorted by time (stable).
    pub events: Vec<Event>,
    /// Tolerances for `tfrclab validate`.
    pub tolerances: Tolerances,
    /// `[protection]` (seed 000 E6).
    pub protection: Protection,
    /// `ttl_notices`: a router that drops a packet for TTL returns a time-exceeded notice to
    /// its source (seed 000 E5). Default: on when a TFRC flow uses `adaptive-ttl`.
    pub ttl_notices: bool,
    /// `[real]`: how `tfrclab validate --real` runs the scenario on a real network.
    pub real: RealSettings,
}

/// `[real]`: the real-network comparison's settings (`docs/scenario.md`, section `[real]`).
#[derive(Debug, Clone, PartialEq)]
pub struct RealSettings {
    /// `reps` (default 10): real runs, when the command line gives no `--reps`.
    pub reps: u32,
    /// `sim_seeds` (default 10): simulated runs (seeds 1…N) beside them.
    pub sim_seeds: u32,
    /// `start_jitter` (default 50 ms): with each simulated seed, every flow starts up to this
    /// much later (drawn from the seed), so that the simulated mean is over start phases as
    /// the real runs' is.
    pub start_jitter: Duration,
    /// `lateness_p99` (default 0.5 ms): a real run whose emulator writes are later than this
    /// at the 99th percentile is marked distorted.
    pub lateness_p99: Duration,
    /// `send_lateness_p99` (default 1 ms): the same for a paced sender (TFRC, CBR) against
    /// its own send times.
    pub send_lateness_p99: Duration,
    /// `tcp_info_interval` (default 10 ms): how often the kernel's TCP state is sampled.
    pub tcp_info_interval: Duration,
    /// `processing_jitter` (default 0: none): every emulated link direction offers each
    /// arriving packet to its queue after a uniform random delay below this, never before
    /// the packet ahead — the real side's counterpart of the simulated nodes'
    /// `processing_jitter`, which breaks the phase effect of a deterministic queue.
    pub processing_jitter: Duration,
    /// `why`: a sentence saying why these settings.
    pub why: Option<String>,
}

impl Default for RealSettings {
    fn default() -> Self {
        RealSettings {
            reps: 10,
            sim_seeds: 10,
            start_jitter: Duration::from_millis(50),
            lateness_p99: Duration::from_micros(500),
            send_lateness_p99: Duration::from_millis(1),
            tcp_info_interval: Duration::from_millis(10),
            processing_jitter: Duration::ZERO,
            why: None,
        }
    }
}

/// `[protection]`: what protecting a packet costs, and which flows protect every packet.
#[derive(Debug, Clone, PartialEq)]
pub struct Protection {
    /// `seal` (default 2.15 µs): time to seal a protected packet at its source.
    pub seal: Duration,
    /// `open` (default 2.15 µs): time to open it at its destination.
    pub open: Duration,
    /// `flows`: indices into [`Scenario::flows`] whose every packet (both directions) is
    /// protected, whatever their agents decide.
    pub flows: Vec<usize>,
}

impl Default for Protection {
    /// About 4.3 µs per 1000-byte packet, split evenly: ChaCha20-Poly1305 as measured in
    /// `docs/protection.md`. The same value as the simulator's own default
    /// (`netsim::ProtectionCost`), which a `lab` test checks.
    fn default() -> Self {
        Protection {
            seal: Duration::from_nanos(2150),
            open: Duration::from_nanos(2150),
            flows: Vec::new(),
        }
    }
}

/// A node.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Its name.
    pub name: String,
    /// Marked untrusted (`[[nodes]] untrusted = true`): unprotected packets crossing it are
    /// counted (seed 000, E6).
    pub untrusted: bool,
    /// Random processing delay (`processing_jitter`, the node's own or the file's top-level
    /// one; zero: none): every packet reaching the node waits a uniform random time below it
    /// before being forwarded or delivered, never overtaking the one ahead
    /// (`docs/phase-effects.md`).
    pub processing_jitter: Duration,
}

/// A link between two nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// `name`, default `"{from}-{to}"`.
    pub name: String,
    /// Index into [`Scenario::nodes`].
    pub from: usize,
    /// Index into [`Scenario::nodes`].
    pub to: usize,
    /// `bandwidth`, bit/s.
    pub bandwidth_bps: f64,
    /// `delay`: propagation delay.
    pub delay: Duration,
    /// `duplex` (default true): a link in each direction with the same parameters.
    pub duplex: bool,
    /// `queue`, `queue_limit` and its options: the queue at the sending end of each direction.
    pub queue: Queue,
    /// `[links.loss]`.
    pub loss: Option<Loss>,
    /// `[links.wireless]`.
    pub wireless: Option<Wireless>,
}

/// The queue discipline at a link's sending end.
#[derive(Debug, Clone, PartialEq)]
pub enum Queue {
    /// `queue = "droptail"`.
    DropTail {
        /// `queue_limit`, NS-2's `limit_` (packets; includes the one in transmission).
        limit: u32,
        /// `[links.droptail] queue_in_bytes`: the limit counts `limit × mean_pktsize` bytes.
        in_bytes: bool,
        /// `[links.droptail] mean_pktsize` (NS-2 default 500).
        mean_pktsize: u32,
        /// `[links.droptail] drop_front`.
        drop_front: bool,
    },
    /// `queue = "red"`, or its presets `"ared"` (Adaptive RED) and `"ered"` (seed 001's
    /// enhanced RED), which only change [`RedParams`]' defaults.
    Red {
        /// `queue_limit`.
        limit: u32,
        /// `[links.red]`.
        params: RedParams,
    },
}

/// NS-2 Queue/RED parameters (`docs/ns2-reference.md` §3) and the variant policies
/// (`docs/variants.md`). `None` thresholds and weight mean NS-2's automatic configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RedParams {
    /// `thresh` (min threshold), in packets of `mean_pktsize` when in byte mode; None: auto.
    pub thresh: Option<f64>,
    /// `maxthresh`; None: auto (3 × thresh).
    pub maxthresh: Option<f64>,
    /// `q_weight`; None: auto (NS-2's −1); `Some(0.0)`: NS-2's `q_weight_ 0`,
    /// 1 − exp(−1/C) (Floyd et al. 2001, the `"ared"` preset).
    pub q_weight: Option<f64>,
    /// `linterm`: max_p = 1/linterm (default 10).
    pub linterm: f64,
    /// `mean_pktsize` (default 500 bytes).
    pub mean_pktsize: u32,
    /// `idle_pktsize` (default 100 bytes).
    pub idle_pktsize: u32,
    /// `bytes` (default true): drop probability scaled by packet size.
    pub bytes: bool,
    /// `queue_in_bytes` (default true): thresholds and limit count bytes in `mean_pktsize` units.
    pub queue_in_bytes: bool,
    /// `gentle` (default true).
    pub gentle: bool,
    /// `wait` (default true).
    pub wait: bool,
    /// `setbit` (default false): mark ECN instead of dropping.
    pub setbit: bool,
    /// `targetdelay` (default 5 ms), used by the automatic thresholds.
    pub targetdelay: Duration,
    /// `average` (default `"ewma"`).
    pub average: RedAverage,
    /// `thresholds` (default `"fixed"`) and `alpha_th`.
    pub thresholds: RedThresholds,
    /// `max_p` (default `"fixed"`) and `alpha`, `beta`, `interval`, `top`, `bottom`.
    pub max_p: RedMaxP,
}

/// `[links.red] average`: how RED averages the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedAverage {
    /// `"ewma"`: NS-2's EWMA.
    Ewma,
    /// `"shewhart-ewma"`: seed 001 Q1 (eq. 4), the EWMA plus the trend `q_i − q_{i−1}`.
    ShewhartEwma,
}

/// `[links.red] thresholds`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RedThresholds {
    /// `"fixed"`: as configured or automatic.
    Fixed,
    /// `"auto-tuned"`: seed 001 Q2 (eq. 5).
    AutoTuned {
        /// `alpha_th`, packets (default 1).
        alpha_th: f64,
    },
}

/// `[links.red] max_p`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RedMaxP {
    /// `"fixed"`: 1 / `linterm`.
    Fixed,
    /// `"adaptive-q3"`: seed 001 Q3 (Fig. 1), evaluated every `interval`, bounds as printed.
    AdaptiveQ3(MaxPAimd),
    /// `"adaptive-red"`: Adaptive RED (Floyd, Gummadi & Shenker 2001) as NS-2.35's
    /// `adaptive_ 1`; `bottom` 0 means NS-2's automatic min(0.01, 80000/bandwidth).
    AdaptiveRed(MaxPAimd),
}

/// The AIMD parameters of both adaptive max_p rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaxPAimd {
    /// `alpha` (0.01): the additive step's cap, min(alpha, max_p/4).
    pub alpha: f64,
    /// `beta` (0.9): the multiplicative decrease.
    pub beta: f64,
    /// `interval` (0.5 s).
    pub interval: Duration,
    /// `top` (0.5): the increase bound.
    pub top: f64,
    /// `bottom` (Q3 0.01; Adaptive RED 0 = automatic): the decrease bound.
    pub bottom: f64,
}

impl MaxPAimd {
    /// The defaults of `"adaptive-q3"` (`bottom` 0.01) or `"adaptive-red"` (`bottom` 0, auto).
    pub fn defaults(adaptive_red: bool) -> Self {
        MaxPAimd {
            alpha: 0.01,
            beta: 0.9,
            interval: Duration::from_millis(500),
            top: 0.5,
            bottom: if adaptive_red { 0.0 } else { 0.01 },
        }
    }
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            thresh: None,
            maxthresh: None,
            q_weight: None,
            linterm: 10.0,
            mean_pktsize: 500,
            idle_pktsize: 100,
            bytes: true,
            queue_in_bytes: true,
            gentle: true,
            wait: true,
            setbit: false,
            targetdelay: Duration::from_millis(5),
            average: RedAverage::Ewma,
            thresholds: RedThresholds::Fixed,
            max_p: RedMaxP::Fixed,
        }
    }
}

/// Which direction(s) of a link a loss model or wireless hop applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkDirection {
    /// `from` → `to`.
    Forward,
    /// `to` → `from` (duplex links only).
    Reverse,
    /// Both.
    Both,
}

/// `[links.loss]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Loss {
    /// The model.
    pub model: LossModel,
    /// `direction` (default forward).
    pub direction: LinkDirection,
}

/// A loss model.
#[derive(Debug, Clone, PartialEq)]
pub enum LossModel {
    /// `model = "bernoulli"`, `rate`.
    Bernoulli {
        /// Per-packet loss probability.
        rate: f64,
    },
    /// `model = "gilbert-elliott"`.
    GilbertElliott {
        /// P(good → bad) per packet.
        p_good_bad: f64,
        /// P(bad → good) per packet.
        p_bad_good: f64,
        /// Loss probability in the good state (default 0).
        loss_good: f64,
        /// Loss probability in the bad state (default 1).
        loss_bad: f64,
    },
    /// `model = "list"`, `packets`: drop these packets (0-based, in crossing order).
    List {
        /// Sorted, unique indices.
        packets: Vec<u64>,
    },
}

/// `[links.wireless]`: 802.11-style ARQ.
#[derive(Debug, Clone, PartialEq)]
pub struct Wireless {
    /// Per-attempt frame loss probability.
    pub frame_loss: f64,
    /// Retransmissions before the frame is dropped (default 7).
    pub retry_limit: u32,
    /// Backoff slot time (default 20 µs).
    pub slot: Duration,
    /// Initial contention window in slots (default 31).
    pub cw_min: u32,
    /// Maximum contention window (default 1023).
    pub cw_max: u32,
    /// `direction` (default forward).
    pub direction: LinkDirection,
}

/// A flow between two nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    /// `name`, unique.
    pub name: String,
    /// Index of the source node.
    pub from: usize,
    /// Index of the destination node.
    pub to: usize,
    /// `start` (default 0).
    pub start: Duration,
    /// `stop` (default: the end of the run).
    pub stop: Duration,
    /// `packet_size`: payload bytes (tcp and tfrc default 1000, udp 210).
    pub packet_size: u32,
    /// `ecn` (tfrc and tcp flows except CUBIC and the Linux model; default false): the data
    /// packets are ECN-capable (NS-2's `ecn_`), so a RED queue with `setbit` marks them instead
    /// of dropping them early. The TFRC receiver counts each mark as a loss (RFC 5348 §5.1); the TCP sink
    /// echoes it (ECE) and the sender halves its window once per window of data (RFC 3168).
    pub ecn: bool,
    /// Kind and kind-specific settings.
    pub kind: FlowKind,
    /// `real`: what runs the flow on a real network (`tfrclab validate --real`): for TCP the
    /// kernel's congestion control (`"reno"`, `"cubic"`, `"bbr"`, …), for TFRC `"tfrc"`
    /// (`tfrclab send`), for UDP `"cbr"`. `None`: not said (TFRC and UDP then run as
    /// `"tfrc"` and `"cbr"`; a TCP flow has no default).
    pub real: Option<String>,
}

/// What a flow runs.
#[derive(Debug, Clone, PartialEq)]
pub enum FlowKind {
    /// `kind = "tcp"`: an FTP source over NS-2's one-way TCP.
    Tcp {
        /// `variant` (default newreno).
        variant: TcpVariant,
        /// `window`: NS-2's `window_`, the receiver window cap (default 20).
        window: u32,
        /// `window_init`: NS-2's `windowInit_` (default 2).
        window_init: u32,
        /// `delayed_ack`: TCPSink/DelAck (default false).
        delayed_ack: bool,
        /// `overhead`: NS-2's `overhead_`, each send delayed by a uniform random time below it
        /// (default 0: off), the remedy for phase effects (docs/phase-effects.md).
        overhead: Duration,
        /// `[flows.on_off]`: short transfers separated by idle periods instead of one
        /// always-backlogged transfer (RFC 8867 §5.7's short TCP flows).
        on_off: Option<OnOff>,
    },
    /// `kind = "udp"`: a CBR source over UDP.
    Udp {
        /// `rate`, bit/s (default NS-2's 448 kb/s).
        rate_bps: f64,
        /// `random`: NS-2's `random_` jitter on the interval.
        random: bool,
        /// `max_packets`: stop after this many.
        max_packets: Option<u64>,
    },
    /// `kind = "tfrc"`.
    Tfrc {
        /// `profile` (default rfc5348).
        profile: TfrcProfile,
        /// `app_rate`: a CBR application feeding the sender, bit/s; None: always has data.
        app_rate_bps: Option<f64>,
        /// `app_on`, `app_off`: the application is on for the first, silent for the second,
        /// and so on from the flow's start (an on-off source); None: always on.
        app_on_off: Option<(Duration, Duration)>,
        /// `variants`: seed-paper variants applied to the profile (validated against the
        /// catalogue `tfrc::variants`, in file order; empty: the plain profile).
        variants: Vec<tfrc::variants::VariantChoice>,
    },
    /// `kind = "media"`: a video application (`crates/media`) over a media congestion
    /// controller; the application's target rate follows the controller.
    Media {
        /// `controller` and its settings.
        controller: MediaController,
        /// `[flows.source]`: where frames come from.
        source: MediaSource,
        /// `deadline`: the playout delay; a frame complete later is late (default 400 ms).
        deadline: Duration,
        /// `pauses = [["40s", "60s"], ...]`: the source stops producing frames from the first
        /// time to the second and then resumes (RFC 8867 §5.8); sorted, disjoint, within the
        /// flow's life.
        pauses: Vec<(Duration, Duration)>,
    },
}

/// The congestion controller of a media flow (`controller`).
#[derive(Debug, Clone, PartialEq)]
pub enum MediaController {
    /// `controller = "tfrc"` (default): the TFRC core, with `profile` and `variants` as on a
    /// TFRC flow; `packet_size` is its segment size and the media packets' largest payload.
    Tfrc {
        /// `profile` (default rfc5348).
        profile: TfrcProfile,
        /// `variants`, as on a TFRC flow.
        variants: Vec<tfrc::variants::VariantChoice>,
    },
    /// `controller = "nada"`: NADA (RFC 8698) with its reference parameters, from RFC 8888
    /// feedback; `packet_size` is the media packets' largest payload.
    Nada,
    /// `controller = "scream"`: SCReAM version 1 (RFC 8298), from RFC 8888 feedback.
    Scream,
    /// `controller = "gcc"`: Google Congestion Control (draft-ietf-rmcat-gcc-02), from
    /// transport-wide feedback.
    Gcc,
}

impl MediaController {
    /// The names `controller` accepts.
    pub const NAMES: [&'static str; 4] = ["tfrc", "nada", "scream", "gcc"];

    /// The name used in the scenario file and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            MediaController::Tfrc { .. } => "tfrc",
            MediaController::Nada => "nada",
            MediaController::Scream => "scream",
            MediaController::Gcc => "gcc",
        }
    }
}

/// Where a media flow's frames come from (`[flows.source]`).
#[derive(Debug, Clone, PartialEq)]
pub enum MediaSource {
    /// `model = "statistical"` (default): RFC 8593's model, following the controller.
    Statistical(media::model::StatisticalConfig),
    /// `model = "trace"`: a frame-size trace played as recorded.
    Trace {
        /// `file`, relative to the scenario file, as written.
        file: String,
        /// The parsed trace.
        trace: media::trace::FrameTrace,
        /// `loop` (default true): repeat the trace until the flow stops.
        looped: bool,
    },
}

/// `[flows.on_off]` of a TCP flow: a sequence of file transfers interleaved with idle periods.
/// Each file's size is uniform in `[size_min, size_max]` bytes; each idle period is exponential
/// with mean `off_mean`; every transfer restarts from the initial window (a new short
/// connection, `docs/media.md`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnOff {
    /// `size_min`, bytes.
    pub size_min: u64,
    /// `size_max`, bytes.
    pub size_max: u64,
    /// `off_mean`.
    pub off_mean: Duration,
    /// `start_on` (default true): the first transfer starts at `start`; otherwise an idle
    /// period comes first.
    pub start_on: bool,
}

/// TCP variant (loss-recovery policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpVariant {
    /// NS-2's default `Agent/TCP`.
    Tahoe,
    /// `Agent/TCP/Reno`.
    Reno,
    /// `Agent/TCP/Newreno`.
    NewReno,
    /// `Agent/TCP/Sack1` with an `Agent/TCPSink/Sack1` sink (SACK blocks, scoreboard recovery).
    Sack,
    /// `variant = "cubic"`: CUBIC with SACK recovery and timestamps, on NS-2.35's
    /// `Agent/TCP/Linux` sender and an `Agent/TCPSink/Sack1` sink; `profile` picks the
    /// controller.
    Cubic(CubicProfile),
    /// `profile = "linux"` with `variant = "reno"` or `"cubic"`: TCP as the Linux kernel runs
    /// it (SACK with RACK-TLP, PRR, F-RTO, HyStart for CUBIC) against the Linux receiver
    /// (delayed and quick ACKs); `docs/simulator.md`, "Linux TCP". No NS-2 counterpart.
    Linux(LinuxCc),
}

/// The default `window` of a `profile = "linux"` TCP flow, packets: the kernel's receive
/// window autotunes (up to `tcp_rmem`'s 32 MB here) far above any path's BDP, so the model's
/// window is unlimited unless the file sets one.
pub const LINUX_WINDOW: u32 = 1 << 24;

/// The congestion controller of a `profile = "linux"` TCP flow (its `variant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinuxCc {
    /// `variant = "reno"`.
    Reno,
    /// `variant = "cubic"`.
    Cubic,
}

/// CUBIC profile name (`profile` on a TCP flow with `variant = "cubic"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CubicProfile {
    /// `profile = "rfc9438"` (default): RFC 9438 as specified.
    Rfc9438,
    /// `profile = "ns2"`: the Linux 2.6.22 module NS-2.35 runs (`select_ca cubic`).
    Ns2,
}

/// TFRC profile name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TfrcProfile {
    /// RFC 5348 as specified.
    Rfc5348,
    /// NS-2.35's Agent/TFRC.
    Ns2,
}

/// A scheduled event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// `at`.
    pub at: Duration,
    /// `action`.
    pub action: LinkAction,
    /// Index into [`Scenario::links`].
    pub link: usize,
}

/// What happens to a link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LinkAction {
    /// `action = "down"`: both directions fail; routes are recomputed.
    Down,
    /// `action = "up"`.
    Up,
    /// `action = "set"`: new parameters for both directions (of a duplex link); packets
    /// already being transmitted or propagating keep the ones they were sent with.
    Set(LinkSet),
}

/// The parameters an `action = "set"` event changes; `None` keeps the current value.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkSet {
    /// `bandwidth`, bit/s.
    pub bandwidth_bps: Option<f64>,
    /// `delay`.
    pub delay: Option<Duration>,
    /// `queue_limit` (NS-2 `limit_`; packets already waiting stay).
    pub queue_limit: Option<u32>,
    /// `loss_rate`: the new rate of the link's bernoulli `[links.loss]`, in the directions
    /// that model applies to.
    pub loss_rate: Option<f64>,
}

/// `[validate]` tolerances (relative unless named `_abs`).
#[derive(Debug, Clone, PartialEq)]
pub struct Tolerances {
    /// Per-flow throughput (default 0.15).
    pub throughput: f64,
    /// Summed throughput (default 0.03).
    pub total_throughput: f64,
    /// Mean delay (default 0.10).
    pub delay: f64,
    /// Loss rate, relative (default 0.25)…
    pub loss: f64,
    /// …or absolute (default 0.005), whichever is larger.
    pub loss_abs: f64,
    /// Mark rate (marked / received packets) of a flow whose packets were marked, relative
    /// (default 0.25), or absolute `loss_abs`, whichever is larger.
    pub marks: f64,
    /// `seeds`: run both simulators with each of these seeds and compare the means (for
    /// random scenarios whose single runs are too noisy for the tolerances); empty (the
    /// default) means the scenario's own seed.
    pub seeds: Vec<u64>,
    /// `start_jitter`: with each seed, every flow starts up to this much later (the same
    /// offsets in both simulators, drawn from the seed), so that the means over the seeds
    /// average out the start phase, which decides how deterministic flows share a DropTail
    /// queue. Zero (the default): the file's start times.
    pub start_jitter: Duration,
    /// Why these tolerances.
    pub why: Option<String>,
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances {
            throughput: 0.15,
            total_throughput: 0.03,
            delay: 0.10,
            loss: 0.25,
            loss_abs: 0.005,
            marks: 0.25,
            seeds: Vec::new(),
            start_jitter: Duration::ZERO,
            why: None,
        }
    }
}

impl Scenario {
    /// Read and validate a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        Self::load_with(path, &[])
    }

    /// Read a scenario file, apply `--set KEY=VALUE` overrides, and validate.
    pub fn load_with(path: &Path, sets: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: file.clone(),
            problems: vec![Problem::at(
                "",
                None,
                format!("cannot read the file: {e}"),
                None,
            )],
        })?;
        let edited = overrides::apply(&file, &text, sets)?;
        Self::parse(&file, &edited).map_err(|e| overrides::attribute(e, &text, &edited, sets))
    }

    /// Validate scenario text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        parse::parse(file, text)
    }

    /// Read and validate a scenario file: the same as [`Scenario::load`], under the name the
    /// library API uses (`lab::run`, the Python package).
    ///
    /// ```
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/examples/dumbbell.toml");
    /// let s = scenario::Scenario::from_path(path)?;
    /// assert_eq!(s.name, "dumbbell");
    /// # Ok::<(), scenario::ScenarioError>(())
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        Self::load(path.as_ref())
    }

    /// Validate scenario text that comes from no file; errors name it [`Scenario::TEXT_FILE`].
    /// Use [`Scenario::parse`] to give it a name of your own.
    ///
    /// ```
    /// let s = scenario::Scenario::from_str(r#"
    /// name = "one-link"
    /// duration = "2s"
    /// [[links]]
    /// from = "a"
    /// to = "b"
    /// bandwidth = "1Mbps"
    /// delay = "10ms"
    /// [[flows]]
    /// name = "u"
    /// kind = "udp"
    /// from = "a"
    /// to = "b"
    /// rate = "500kbps"
    /// "#)?;
    /// assert_eq!(s.flows[0].name, "u");
    /// let e = scenario::Scenario::from_str("duration = 3").unwrap_err();
    /// assert!(e.to_string().starts_with("<string>:1:"), "{e}");
    /// # Ok::<(), scenario::ScenarioError>(())
    /// ```
    // An inherent fn beside the `FromStr` impl, so callers need no trait import.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str) -> Result<Scenario, ScenarioError> {
        Self::parse(Self::TEXT_FILE, text)
    }

    /// The name errors give to text read by [`Scenario::from_str`].
    pub const TEXT_FILE: &'static str = "<string>";

    /// This scenario with `--set KEY=VALUE` overrides applied to its source text and validated
    /// again: the same keys and the same errors as the CLI's `--set`, positions in the file
    /// unchanged.
    pub fn with_sets(&self, sets: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let edited = overrides::apply(&self.file, &self.source, sets)?;
        Self::parse(&self.file, &edited)
            .map_err(|e| overrides::attribute(e, &self.source, &edited, sets))
    }

    /// Index of the node called `name`.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// The flow called `name`.
    pub fn flow(&self, name: &str) -> Option<&Flow> {
        self.flows.iter().find(|f| f.name == name)
    }
}

impl std::str::FromStr for Scenario {
    type Err = ScenarioError;

    /// [`Scenario::from_str`]: `text.parse::<Scenario>()`.
    fn from_str(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse(Scenario::TEXT_FILE, text)
    }
}

impl Flow {
    /// The TFRC variants the flow runs (a TFRC flow's, or a media flow's TFRC controller's;
    /// empty for other kinds).
    pub fn variants(&self) -> &[tfrc::variants::VariantChoice] {
        match &self.kind {
            FlowKind::Tfrc { variants, .. } => variants,
            FlowKind::Media {
                controller: MediaController::Tfrc { variants, .. },
                ..
            } => variants,
            _ => &[],
        }
    }

    /// Whether the flow runs variant `v`.
    pub fn uses(&self, v: tfrc::variants::Variant) -> bool {
        self.variants()
            .iter()
            .any(|c| c.name.parse::<tfrc::variants::Variant>() == Ok(v))
    }
}

impl FlowKind {
    /// The `kind` key's value.
    pub fn name(&self) -> &'static str {
        match self {
            FlowKind::Tcp { .. } => "tcp",
            FlowKind::Udp { .. } => "udp",
            FlowKind::Tfrc { .. } => "tfrc",
            FlowKind::Media { .. } => "media",
        }
    }
}

#[doc(hidden)]
pub mod testing;
#[cfg(test)]
mod tests;
