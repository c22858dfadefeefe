//! The scenario file as TOML gives it: every key with its source span, before validation.
//!
//! `deny_unknown_fields` everywhere, so a misspelt key is an error that names the keys that
//! would be right. Values with units stay `toml::Value` here so that validation can say
//! "expected a duration such as 100.0 or \"150ms\"" instead of a serde type error.

use serde::Deserialize;
use toml::{Spanned, Value};

/// Top level of a scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: Spanned<String>,
    pub description: Option<String>,
    pub duration: Spanned<Value>,
    pub seed: Option<Spanned<i64>>,
    pub warmup: Option<Spanned<Value>>,
    pub sample_interval: Option<Spanned<Value>>,
    pub max_events: Option<Spanned<i64>>,
    pub topology: Option<Spanned<RawTopology>>,
    #[serde(default)]
    pub nodes: Vec<RawNode>,
    #[serde(default)]
    pub links: Vec<Spanned<RawLink>>,
    #[serde(default)]
    pub flows: Vec<Spanned<RawFlow>>,
    #[serde(default)]
    pub events: Vec<Spanned<RawEvent>>,
    pub validate: Option<RawValidate>,
    pub protection: Option<Spanned<RawProtection>>,
    /// Seed 000 E5: routers return time-exceeded notices (default: on when a flow uses
    /// `adaptive-ttl`).
    pub ttl_notices: Option<bool>,
    /// Every node's random processing delay (phase-effect remedy).
    pub processing_jitter: Option<Spanned<Value>>,
    /// `[real]`: how `tfrclab validate --real` runs the scenario on a real network.
    pub real: Option<Spanned<RawReal>>,
}

/// `[real]`: settings of the real-network comparison.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReal {
    pub reps: Option<Spanned<i64>>,
    pub sim_seeds: Option<Spanned<i64>>,
    pub start_jitter: Option<Spanned<Value>>,
    pub lateness_p99: Option<Spanned<Value>>,
    pub send_lateness_p99: Option<Spanned<Value>>,
    pub tcp_info_interval: Option<Spanned<Value>>,
    pub processing_jitter: Option<Spanned<Value>>,
    pub why: Option<String>,
}

/// `[protection]`: seed 000 E6's per-packet processing cost, and flows protected in full.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProtection {
    pub seal: Option<Spanned<Value>>,
    pub open: Option<Spanned<Value>>,
    pub flows: Option<Spanned<Vec<Spanned<String>>>>,
}

/// `[[nodes]]`: attributes of a node (nodes themselves are implied by link endpoints).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNode {
    pub name: Spanned<String>,
    pub untrusted: Option<bool>,
    pub processing_jitter: Option<Spanned<Value>>,
}

/// `[topology]`: a generator that expands into links.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTopology {
    pub kind: Spanned<String>,
    pub senders: Option<Spanned<i64>>,
    pub receivers: Option<Spanned<i64>>,
    pub access_bandwidth: Option<Spanned<Value>>,
    pub access_delay: Option<Spanned<Value>>,
    pub receiver_access_delay: Option<Spanned<Value>>,
    pub access_queue_limit: Option<Spanned<i64>>,
    pub bottleneck_bandwidth: Option<Spanned<Value>>,
    pub bottleneck_delay: Option<Spanned<Value>>,
    pub queue: Option<Spanned<String>>,
    pub queue_limit: Option<Spanned<i64>>,
    pub red: Option<Spanned<RawRed>>,
    pub droptail: Option<Spanned<RawDropTail>>,
    pub loss: Option<Spanned<RawLoss>>,
    pub wireless: Option<Spanned<RawWireless>>,
}

/// `[[links]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    pub name: Option<Spanned<String>>,
    pub from: Spanned<String>,
    pub to: Spanned<String>,
    pub bandwidth: Spanned<Value>,
    pub delay: Spanned<Value>,
    pub queue: Option<Spanned<String>>,
    pub queue_limit: Option<Spanned<i64>>,
    pub duplex: Option<bool>,
    pub red: Option<Spanned<RawRed>>,
    pub droptail: Option<Spanned<RawDropTail>>,
    pub loss: Option<Spanned<RawLoss>>,
    pub wireless: Option<Spanned<RawWireless>>,
    pub trace: Option<Spanned<RawLinkTrace>>,
}

/// `[links.trace]`: a capacity trace.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLinkTrace {
    /// A CSV file of `time_s,bandwidth` steps, or a Mahimahi trace, relative to the scenario
    /// file.
    pub file: Spanned<String>,
    /// `"csv"` (default) or `"mahimahi"`.
    pub format: Option<Spanned<String>>,
    /// Mahimahi traces: the bins their opportunities are counted over.
    pub bin: Option<Spanned<Value>>,
}

/// `[links.droptail]`: NS-2's Queue/DropTail options.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDropTail {
    pub queue_in_bytes: Option<bool>,
    pub mean_pktsize: Option<Spanned<i64>>,
    pub drop_front: Option<bool>,
}

/// `[links.red]`: NS-2's Queue/RED options, by their NS-2 names without the trailing `_`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRed {
    pub thresh: Option<Spanned<f64>>,
    pub maxthresh: Option<Spanned<f64>>,
    pub q_weight: Option<Spanned<f64>>,
    pub linterm: Option<Spanned<f64>>,
    pub mean_pktsize: Option<Spanned<i64>>,
    pub idle_pktsize: Option<Spanned<i64>>,
    pub bytes: Option<bool>,
    pub queue_in_bytes: Option<bool>,
    pub gentle: Option<bool>,
    pub wait: Option<bool>,
    pub setbit: Option<bool>,
    pub targetdelay: Option<Spanned<Value>>,
    // Seed 001 variants and Adaptive RED (docs/variants.md).
    pub average: Option<Spanned<String>>,
    pub thresholds: Option<Spanned<String>>,
    pub alpha_th: Option<Spanned<f64>>,
    pub max_p: Option<Spanned<String>>,
    pub alpha: Option<Spanned<f64>>,
    pub beta: Option<Spanned<f64>>,
    pub interval: Option<Spanned<Value>>,
    pub top: Option<Spanned<f64>>,
    pub bottom: Option<Spanned<f64>>,
}

/// `[links.loss]`: a loss model on one or both directions of a link.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLoss {
    pub model: Spanned<String>,
    pub direction: Option<Spanned<String>>,
    /// Bernoulli: per-packet loss probability.
    pub rate: Option<Spanned<f64>>,
    /// Gilbert–Elliott: P(good → bad) per packet.
    pub p_good_bad: Option<Spanned<f64>>,
    /// Gilbert–Elliott: P(bad → good) per packet.
    pub p_bad_good: Option<Spanned<f64>>,
    /// Gilbert–Elliott: loss probability in the good state.
    pub loss_good: Option<Spanned<f64>>,
    /// Gilbert–Elliott: loss probability in the bad state.
    pub loss_bad: Option<Spanned<f64>>,
    /// List: 0-based indices of the packets (in the order they cross the link) to drop.
    pub packets: Option<Spanned<Vec<i64>>>,
}

/// `[links.wireless]`: an 802.11-style hop with link-layer retransmission.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWireless {
    pub frame_loss: Spanned<f64>,
    pub retry_limit: Option<Spanned<i64>>,
    pub slot: Option<Spanned<Value>>,
    pub cw_min: Option<Spanned<i64>>,
    pub cw_max: Option<Spanned<i64>>,
    pub direction: Option<Spanned<String>>,
}

/// `[[flows]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFlow {
    pub name: Spanned<String>,
    pub kind: Spanned<String>,
    pub from: Spanned<String>,
    pub to: Spanned<String>,
    pub start: Option<Spanned<Value>>,
    pub stop: Option<Spanned<Value>>,
    pub packet_size: Option<Spanned<i64>>,
    // tcp
    pub variant: Option<Spanned<String>>,
    pub window: Option<Spanned<i64>>,
    pub window_init: Option<Spanned<i64>>,
    pub delayed_ack: Option<bool>,
    pub overhead: Option<Spanned<Value>>,
    // udp
    pub rate: Option<Spanned<Value>>,
    pub random: Option<bool>,
    pub max_packets: Option<Spanned<i64>>,
    // tfrc
    pub profile: Option<Spanned<String>>,
    pub app_rate: Option<Spanned<Value>>,
    /// With `app_rate`: the application is on for this long, then off for `app_off`, and so on.
    pub app_on: Option<Spanned<Value>>,
    pub app_off: Option<Spanned<Value>>,
    /// Seed-paper variants, `"name"` or `"name:param=value,..."` (`tfrc::variants`).
    pub variants: Option<Spanned<Vec<Spanned<String>>>>,
    // tfrc and tcp
    /// ECN-capable transport (NS-2's `ecn_`).
    pub ecn: Option<Spanned<bool>>,
    /// What runs this flow on a real network (`tfrclab validate --real`).
    pub real: Option<Spanned<String>>,
    // media
    pub controller: Option<Spanned<String>>,
    pub deadline: Option<Spanned<Value>>,
    pub source: Option<Spanned<RawMediaSource>>,
    pub pauses: Option<Spanned<Vec<RawPause>>>,
    // tcp cross traffic
    pub on_off: Option<Spanned<RawOnOff>>,
}

/// One `[from, to]` pair of a media flow's `pauses`.
pub type RawPause = Spanned<Vec<Spanned<Value>>>;

/// `[flows.source]` of a media flow.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMediaSource {
    pub model: Option<Spanned<String>>,
    // statistical
    pub fps: Option<Spanned<f64>>,
    pub min_rate: Option<Spanned<Value>>,
    pub max_rate: Option<Spanned<Value>>,
    pub start_rate: Option<Spanned<Value>>,
    pub reaction_delay: Option<Spanned<Value>>,
    pub key_interval: Option<Spanned<Value>>,
    pub transient_frames: Option<Spanned<i64>>,
    pub key_ratio: Option<Spanned<f64>>,
    pub transient_threshold: Option<Spanned<f64>>,
    pub size_noise: Option<Spanned<f64>>,
    pub interval_noise: Option<Spanned<f64>>,
    // trace
    pub file: Option<Spanned<String>>,
    #[serde(rename = "loop")]
    pub looped: Option<bool>,
}

/// `[flows.on_off]` of a TCP flow.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOnOff {
    pub size_min: Spanned<i64>,
    pub size_max: Spanned<i64>,
    pub off_mean: Spanned<Value>,
    pub start_on: Option<bool>,
}

/// `[[events]]`: scheduled link state changes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvent {
    pub at: Spanned<Value>,
    pub action: Spanned<String>,
    pub link: Spanned<String>,
    /// `action = "set"`: new bandwidth.
    pub bandwidth: Option<Spanned<Value>>,
    /// `action = "set"`: new propagation delay.
    pub delay: Option<Spanned<Value>>,
    /// `action = "set"`: new queue limit.
    pub queue_limit: Option<Spanned<i64>>,
    /// `action = "set"`: new rate of the link's bernoulli loss model.
    pub loss_rate: Option<Spanned<f64>>,
}

/// `[validate]`: tolerances for `tfrclab validate`, and why.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawValidate {
    pub throughput: Option<Spanned<f64>>,
    pub total_throughput: Option<Spanned<f64>>,
    pub delay: Option<Spanned<f64>>,
    pub loss: Option<Spanned<f64>>,
    pub loss_abs: Option<Spanned<f64>>,
    pub marks: Option<Spanned<f64>>,
    pub seeds: Option<Spanned<Vec<Spanned<i64>>>>,
    pub start_jitter: Option<Spanned<Value>>,
    pub why: Option<String>,
}
