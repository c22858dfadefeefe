//! Counters and summaries: what was dropped and why, delay and jitter, and the per-flow summary
//! with the metric names of `summary.json` (`docs/metrics.md`).

use serde::{Deserialize, Serialize};

/// Bytes IPv4 and UDP add to a datagram; throughput counts packets as on the wire (IP size),
/// as the simulator and NS-2 traces do.
pub const IP_UDP_OVERHEAD: u64 = 28;

/// Datagrams dropped before or by the core's input path, by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drops {
    /// Not a frame, or the frame's TFRC packet does not decode.
    pub malformed: u64,
    /// Shorter than its kind needs, or longer than the receive buffer.
    pub truncated: u64,
    /// A session id other than this session's, or this session's id from another address.
    pub spoofed: u64,
    /// A valid frame that makes no sense now (data before the handshake, a frame kind this
    /// end never receives, a feedback that echoes a time never sent).
    pub unexpected: u64,
    /// A data sequence number already received.
    pub duplicate: u64,
    /// A data sequence number more than `receiver::MAX_SEQ_JUMP` ahead of the newest.
    pub out_of_range: u64,
    /// A data sequence number too far behind the newest to tell whether it is a duplicate.
    pub stale: u64,
    /// Protected mode: shorter than a sequence number and a tag.
    pub auth_truncated: u64,
    /// Protected mode: failed authentication (tampered, cut, or a wrong key).
    pub tampered: u64,
    /// Protected mode: a replayed AEAD sequence number.
    pub replayed: u64,
    /// Protected mode: behind the replay window.
    pub too_old: u64,
    /// HELLOs asking for variants this receiver cannot apply (answered with a refusal).
    #[serde(default)]
    pub refused: u64,
    /// HELLOs with a retry token that is forged, expired, or minted for another address or
    /// session.
    #[serde(default)]
    pub bad_token: u64,
    /// Validated HELLOs refused because the session table (or the sender address's share of
    /// it) is full.
    #[serde(default)]
    pub table_full: u64,
    /// Noise handshakes that failed (a wrong or substituted key, tampered cleartext).
    #[serde(default)]
    pub handshake_failed: u64,
    /// Noise handshakes from a sender whose static key is not on the allow-list.
    #[serde(default)]
    pub not_allowed: u64,
    /// HELLOs shorter than `frame::MIN_HELLO_DATAGRAM` (1200 bytes): not answered.
    #[serde(default)]
    pub unpadded: u64,
    /// HELLOs whose valid retry token already opened a handshake (a copy): no second one.
    #[serde(default)]
    pub token_reused: u64,
    /// Validated HELLOs beyond the handshake budget of their address or of the receiver
    /// (`ReceiverOptions::handshake_budget`): not answered, token not spent.
    #[serde(default)]
    pub over_budget: u64,
}

impl Drops {
    /// Every counter with its name, in declaration order.
    pub fn by_cause(&self) -> [(&'static str, u64); 19] {
        [
            ("malformed", self.malformed),
            ("truncated", self.truncated),
            ("spoofed", self.spoofed),
            ("unexpected", self.unexpected),
            ("duplicate", self.duplicate),
            ("out of range", self.out_of_range),
            ("stale", self.stale),
            ("auth truncated", self.auth_truncated),
            ("tampered", self.tampered),
            ("replayed", self.replayed),
            ("too old", self.too_old),
            ("refused", self.refused),
            ("bad token", self.bad_token),
            ("table full", self.table_full),
            ("handshake failed", self.handshake_failed),
            ("not allowed", self.not_allowed),
            ("unpadded", self.unpadded),
            ("token reused", self.token_reused),
            ("over budget", self.over_budget),
        ]
    }

    /// All drops.
    pub fn total(&self) -> u64 {
        self.by_cause()
            .iter()
            .fold(0u64, |a, (_, b)| a.saturating_add(*b))
    }

    /// Count a datagram that is not a valid frame: too short for its kind, or otherwise bad.
    pub(crate) fn count_frame(&mut self, e: crate::frame::FrameError) {
        match e {
            crate::frame::FrameError::Truncated => self.truncated += 1,
            _ => self.malformed += 1,
        }
    }

    /// Count an opener's refusal.
    pub(crate) fn count_open(&mut self, e: tfrc_protect::OpenError) {
        let c = match e {
            tfrc_protect::OpenError::Truncated => &mut self.auth_truncated,
            tfrc_protect::OpenError::Tampered => &mut self.tampered,
            tfrc_protect::OpenError::Replayed => &mut self.replayed,
            tfrc_protect::OpenError::TooOld => &mut self.too_old,
        };
        *c = c.saturating_add(1);
    }
}

/// Log-spaced histogram buckets per factor of ten (about 1.2% wide), over 1 µs … 1000 s.
const PER_DECADE: f64 = 200.0;
const DECADES: f64 = 9.0;
const BUCKETS: usize = (PER_DECADE * DECADES) as usize + 1;
const LOWEST: f64 = 1e-6;

/// Streaming delay and jitter statistics over received data packets: constant memory whatever
/// the number of packets.
#[derive(Clone, Debug)]
pub struct DelayStats {
    one_way: bool,
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
    hist: Vec<u32>,
    prev: Option<(f64, f64)>,
    jitter_sum: f64,
    jitter_n: u64,
    rfc3550: f64,
}

impl DelayStats {
    /// Empty statistics; `one_way` says whether sender timestamps and arrival times share a
    /// clock, so that their difference is the one-way delay and not delay plus an offset.
    pub fn new(one_way: bool) -> DelayStats {
        DelayStats {
            one_way,
            n: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            hist: if one_way {
                vec![0; BUCKETS]
            } else {
                Vec::new()
            },
            prev: None,
            jitter_sum: 0.0,
            jitter_n: 0,
            rfc3550: 0.0,
        }
    }

    /// A packet sent at `sent` (sender clock, seconds) arrived at `arrived` (receiver clock).
    pub fn record(&mut self, sent: f64, arrived: f64) {
        // With different clocks d carries an unknown constant offset; the jitter figures are
        // differences of d and do not see it.
        let d = arrived - sent;
        if !d.is_finite() {
            return;
        }
        self.n += 1;
        self.sum += d;
        self.min = self.min.min(d);
        self.max = self.max.max(d);
        if self.one_way {
            let i = ((d.max(LOWEST) / LOWEST).log10() * PER_DECADE).floor();
            let i = if i.is_finite() { i as usize } else { 0 };
            if let Some(b) = self.hist.get_mut(i.min(BUCKETS - 1)) {
                *b = b.saturating_add(1);
            }
        }
        if let Some((ps, pa)) = self.prev {
            let pd = pa - ps;
            self.jitter_sum += (d - pd).abs();
            self.jitter_n += 1;
            // RFC 3550 §6.4.1: D(i-1,i) = (R_i - R_(i-1)) - (S_i - S_(i-1)); J += (|D| - J)/16.
            let dd = (arrived - pa) - (sent - ps);
            self.rfc3550 += (dd.abs() - self.rfc3550) / 16.0;
        }
        self.prev = Some((sent, arrived));
    }

    /// The summary figures.
    pub fn summary(&self) -> DelaySummary {
        let have = self.n > 0;
        DelaySummary {
            one_way: self.one_way,
            delay_mean_s: (have && self.one_way).then(|| self.sum / self.n as f64),
            delay_median_s: (have && self.one_way).then(|| self.quantile(0.5)),
            delay_p95_s: (have && self.one_way).then(|| self.quantile(0.95)),
            delay_p99_s: (have && self.one_way).then(|| self.quantile(0.99)),
            jitter_mean_s: (self.jitter_n > 0).then(|| self.jitter_sum / self.jitter_n as f64),
            jitter_range_s: have.then_some(self.max - self.min),
            jitter_rfc3550_s: (self.jitter_n > 0).then_some(self.rfc3550),
        }
    }

    fn quantile(&self, q: f64) -> f64 {
        let target = (q * self.n as f64).ceil().max(1.0) as u64;
        let mut acc = 0u64;
        for (i, c) in self.hist.iter().enumerate() {
            acc += u64::from(*c);
            if acc >= target {
                // The bucket's geometric middle.
                let v = LOWEST * 10f64.powf((i as f64 + 0.5) / PER_DECADE);
                return v.clamp(self.min, self.max);
            }
        }
        self.max
    }
}

/// Delay and jitter figures; `None` where there is nothing to report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DelaySummary {
    /// Sender and receiver share a clock: the delays are one-way delays. Otherwise only the
    /// jitter figures are reported.
    pub one_way: bool,
    /// Mean one-way delay.
    pub delay_mean_s: Option<f64>,
    /// Median one-way delay (histogram, ±0.6%).
    pub delay_median_s: Option<f64>,
    /// 95th percentile of the one-way delay (histogram, ±0.6%).
    pub delay_p95_s: Option<f64>,
    /// 99th percentile of the one-way delay (histogram, ±0.6%).
    pub delay_p99_s: Option<f64>,
    /// Mean |d_i − d_(i−1)| over consecutive arrivals (seed 000).
    pub jitter_mean_s: Option<f64>,
    /// Largest minus smallest delay (seed 004).
    pub jitter_range_s: Option<f64>,
    /// RFC 3550 interarrival jitter at the end.
    pub jitter_rfc3550_s: Option<f64>,
}

/// One flow's figures under the names of `summary.json`'s flow objects (`tfrclab::metrics`).
/// A real network does not say why a packet was lost, and the delay figures need one clock
/// at both ends, so those are `null` when unknown.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowSummary {
    /// Flow name.
    pub name: String,
    /// Flow kind (`"tfrc"`).
    pub kind: String,
    /// Data packets the sender sent.
    pub sent_packets: u64,
    /// Distinct data packets the receiver accepted.
    pub received_packets: u64,
    /// `sent_packets − received_packets`.
    pub dropped_packets: u64,
    /// Drops by cause: only `network` (cause unknown) is known over a real path.
    pub dropped_by_cause: std::collections::BTreeMap<String, u64>,
    /// Packets the application generated (messages queued, or packets generated).
    pub generated_packets: u64,
    /// Received bits per second, IP packet sizes, between the first and last arrival.
    pub throughput_bps: f64,
    /// Payload bits delivered per second over the same span.
    pub goodput_bps: f64,
    /// (sent − received) / sent.
    pub loss_rate: f64,
    /// received / generated.
    pub pdr: f64,
    /// Mean one-way delay (only when both ends share a clock).
    pub delay_mean_s: Option<f64>,
    /// Median one-way delay.
    pub delay_median_s: Option<f64>,
    /// 95th percentile one-way delay (only when both ends share a clock).
    pub delay_p95_s: Option<f64>,
    /// 99th percentile one-way delay.
    pub delay_p99_s: Option<f64>,
    /// Mean |d_i − d_(i−1)|.
    pub jitter_mean_s: Option<f64>,
    /// max − min delay.
    pub jitter_range_s: Option<f64>,
    /// RFC 3550 jitter.
    pub jitter_rfc3550_s: Option<f64>,
    /// Coefficient of variation of the sender's rate over 1-second bins (sender side only).
    pub smoothness_cov: Option<f64>,
}

impl FlowSummary {
    /// Print as `name value` lines under the metric names of `summary.json` (`tfrclab send`
    /// and `recv`'s summary; `null` for an unknown figure).
    pub fn write_lines(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let opt = |v: Option<f64>| v.map_or("null".to_string(), |x| format!("{x:.6}"));
        writeln!(out, "name              {}", self.name)?;
        writeln!(out, "kind              {}", self.kind)?;
        writeln!(out, "sent_packets      {}", self.sent_packets)?;
        writeln!(out, "received_packets  {}", self.received_packets)?;
        writeln!(out, "dropped_packets   {}", self.dropped_packets)?;
        writeln!(out, "generated_packets {}", self.generated_packets)?;
        writeln!(out, "throughput_bps    {:.0}", self.throughput_bps)?;
        writeln!(out, "goodput_bps       {:.0}", self.goodput_bps)?;
        writeln!(out, "loss_rate         {:.6}", self.loss_rate)?;
        writeln!(out, "pdr               {:.6}", self.pdr)?;
        writeln!(out, "delay_mean_s      {}", opt(self.delay_mean_s))?;
        writeln!(out, "delay_median_s    {}", opt(self.delay_median_s))?;
        writeln!(out, "delay_p95_s       {}", opt(self.delay_p95_s))?;
        writeln!(out, "delay_p99_s       {}", opt(self.delay_p99_s))?;
        writeln!(out, "jitter_mean_s     {}", opt(self.jitter_mean_s))?;
        writeln!(out, "jitter_range_s    {}", opt(self.jitter_range_s))?;
        writeln!(out, "jitter_rfc3550_s  {}", opt(self.jitter_rfc3550_s))?;
        writeln!(out, "smoothness_cov    {}", opt(self.smoothness_cov))
    }
}

/// What the receiver measured over a session; the FIN_ACK carries it to the sender.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReceiverReport {
    /// Distinct data packets accepted and given to the core.
    pub packets: u64,
    /// Their IP bytes (datagram + 28).
    pub wire_bytes: u64,
    /// Their payload bytes.
    pub payload_bytes: u64,
    /// Seconds from the first to the last accepted data packet.
    pub span_s: f64,
    /// Data packets the sender said (in its FIN) it sent; `None` before the FIN.
    pub sender_packets: Option<u64>,
    /// Delay and jitter.
    pub delay: DelaySummary,
    /// Packets that arrived after a higher-numbered one (accepted).
    pub reordered: u64,
    /// Drops by cause.
    pub drops: Drops,
    /// Data packets dropped because the application's buffer (`ReceiverOptions::
    /// buffer_per_session`, `buffer_total`) was full; dropped before the core, so the sender
    /// sees them as losses and slows down.
    pub app_overflow: u64,
    /// The session agreed to ECN (the sender's data went out ECT(0)).
    #[serde(default)]
    pub ecn: bool,
    /// Data packets that arrived marked Congestion Experienced by the network; each is a
    /// loss (RFC 5348 §5.1) without a packet lost.
    #[serde(default)]
    pub ce_marks: u64,
    /// Feedback packets sent.
    pub feedbacks: u64,
    /// The core's loss event rate p at the end.
    pub p: f64,
    /// Loss events the core recorded.
    pub loss_events: u64,
    /// Packets the core declared lost.
    pub lost_packets: u64,
    /// Hop count of the last data packet (initial TTL − received TTL), when the TTL was read.
    pub hops: Option<u8>,
    /// The session was protected (E6).
    pub protected: bool,
    /// The variants the receiver applied (from the HELLO), one `name[:param=value,...]` each.
    #[serde(default)]
    pub variants: Vec<String>,
    /// Lost packets the core classified as congestion (all of them without a classifier).
    #[serde(default)]
    pub congestion_losses: u64,
    /// Lost packets the seed 002 classifier (`owd-classifier`) called wireless: kept out of p.
    #[serde(default)]
    pub wireless_losses: u64,
    /// Seed 002's average one-way delay avgSLD, seconds, under `owd-classifier` (with
    /// `offset_clock=1` it is relative: SLD − min(SLD) + minRTT/2).
    #[serde(default)]
    pub avg_one_way_delay_s: Option<f64>,
    /// The session id (0 in an engine-wide report without a session).
    #[serde(default)]
    pub session: u64,
    /// The sender's address.
    #[serde(default)]
    pub peer: Option<String>,
    /// How the session was protected: `plain`, `noise`, `noise-unauthenticated` or
    /// `rsa-unauthenticated`.
    #[serde(default)]
    pub protection: String,
    /// Noise: the sender's static public key (hex), authenticated by the handshake.
    #[serde(default)]
    pub sender_key: Option<String>,
    /// Bytes received from addresses not yet validated, and bytes sent to them (reflection:
    /// the receiver never sends more than it received before validation).
    #[serde(default)]
    pub unvalidated_bytes_in: u64,
    /// See `unvalidated_bytes_in`.
    #[serde(default)]
    pub unvalidated_bytes_out: u64,
    /// Feedbacks whose X_recv the core computed as 0 although data had arrived since the
    /// previous feedback, sent with the rate since that feedback instead
    /// (`docs/real-network.md`, "X_recv = 0").
    #[serde(default)]
    pub x_recv_zero_replaced: u64,
    /// The session was evicted to make room for another (it was the least useful when the
    /// table was full).
    #[serde(default)]
    pub evicted: bool,
}

impl ReceiverReport {
    /// One line of live status (`tfrclab recv` redraws it on a terminal).
    pub fn status_line(&self) -> String {
        let mbps = if self.span_s > 0.0 {
            self.wire_bytes as f64 * 8.0 / self.span_s / 1e6
        } else {
            0.0
        };
        format!(
            "recv {:6.1}s  {:8.3} Mb/s  p {:.5}  packets {}  lost {}  drops {}  hops {}",
            self.span_s,
            mbps,
            self.p,
            self.packets,
            self.lost_packets,
            self.drops.total(),
            self.hops.map_or("-".to_string(), |h| h.to_string()),
        )
    }

    /// The flow summary, with `sent` data packets at the sender, `generated` by its
    /// application, and the sender's smoothness if known.
    pub fn flow_summary(
        &self,
        name: &str,
        sent: u64,
        generated: u64,
        smoothness_cov: Option<f64>,
    ) -> FlowSummary {
        let received = self.packets;
        let per_s = |bytes: u64| {
            if self.span_s > 0.0 {
                bytes as f64 * 8.0 / self.span_s
            } else {
                0.0
            }
        };
        let ratio = |a: u64| {
            if sent > 0 {
                a as f64 / sent as f64
            } else {
                0.0
            }
        };
        FlowSummary {
            name: name.to_string(),
            kind: "tfrc".to_string(),
            sent_packets: sent,
            received_packets: received,
            dropped_packets: sent.saturating_sub(received),
            dropped_by_cause: [("network".to_string(), sent.saturating_sub(received))]
                .into_iter()
                .collect(),
            generated_packets: generated,
            throughput_bps: per_s(self.wire_bytes),
            goodput_bps: per_s(self.payload_bytes),
            loss_rate: ratio(sent.saturating_sub(received)),
            pdr: if generated > 0 {
                received as f64 / generated as f64
            } else {
                0.0
            },
            delay_mean_s: self.delay.delay_mean_s,
            delay_median_s: self.delay.delay_median_s,
            delay_p95_s: self.delay.delay_p95_s,
            delay_p99_s: self.delay.delay_p99_s,
            jitter_mean_s: self.delay.jitter_mean_s,
            jitter_range_s: self.delay.jitter_range_s,
            jitter_rfc3550_s: self.delay.jitter_rfc3550_s,
            smoothness_cov,
        }
    }
}

/// The receiver's one-line summary (`recv`'s text output, after `# receiver: `): session, peer,
/// protection, p, loss events, ECN marks when agreed, drops, reordering, hops.
impl std::fmt::Display for ReceiverReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "session {:016x} from {}, ",
            self.session,
            self.peer.as_deref().unwrap_or("-")
        )?;
        write!(f, "protection {}", self.protection)?;
        if let Some(k) = &self.sender_key {
            write!(f, " (sender key {k})")?;
        }
        write!(f, ", p {:.5}, loss events {}", self.p, self.loss_events)?;
        if self.ecn {
            write!(f, ", ECN marks {}", self.ce_marks)?;
        }
        let hops = self.hops.map_or("-".to_string(), |h| h.to_string());
        let (n, d, r) = (self.drops.total(), &self.drops, self.reordered);
        write!(f, ", drops {n} ({d}), reordered {r}, hops {hops}")?;
        if self.sender_packets.is_none() {
            f.write_str(", no FIN (sent_packets estimated from received)")?;
        }
        Ok(())
    }
}

/// "none", or the non-zero causes: "3 duplicate, 1 tampered" (the terminal summaries).
impl std::fmt::Display for Drops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .by_cause()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| format!("{n} {name}"))
            .collect();
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_read_as_text() {
        let mut d = Drops::default();
        assert_eq!(d.to_string(), "none");
        d.duplicate = 3;
        d.tampered = 1;
        assert_eq!(d.to_string(), "3 duplicate, 1 tampered");
        assert_eq!(d.total(), 4);
    }

    #[test]
    fn delay_figures() {
        let mut d = DelayStats::new(true);
        // Delays 10 ms, 12 ms, 10 ms, …: jitter mean 2 ms, range 2 ms.
        for i in 0..100 {
            let delay = if i % 2 == 0 { 0.010 } else { 0.012 };
            d.record(i as f64 * 0.1, i as f64 * 0.1 + delay);
        }
        let s = d.summary();
        assert!((s.delay_mean_s.unwrap() - 0.011).abs() < 1e-9);
        assert!((s.jitter_mean_s.unwrap() - 0.002).abs() < 1e-9);
        assert!((s.jitter_range_s.unwrap() - 0.002).abs() < 1e-9);
        let p95 = s.delay_p95_s.unwrap();
        assert!((p95 - 0.012).abs() < 0.012 * 0.01, "{p95}");
        // RFC 3550 J converges towards |D| = 2 ms.
        assert!((s.jitter_rfc3550_s.unwrap() - 0.002).abs() < 1e-4);
    }

    #[test]
    fn offset_clocks_give_jitter_but_no_delay() {
        let mut d = DelayStats::new(false);
        for i in 0..10 {
            d.record(
                i as f64,
                i as f64 + 1000.0 + if i % 2 == 0 { 0.0 } else { 0.001 },
            );
        }
        let s = d.summary();
        assert_eq!(s.delay_mean_s, None);
        assert_eq!(s.delay_p95_s, None);
        assert!((s.jitter_mean_s.unwrap() - 0.001).abs() < 1e-9);
    }

    #[test]
    fn summary_ratios() {
        let r = ReceiverReport {
            packets: 90,
            wire_bytes: 90_000,
            payload_bytes: 80_000,
            span_s: 2.0,
            ..ReceiverReport::default()
        };
        let f = r.flow_summary("f", 100, 100, None);
        assert_eq!(f.dropped_packets, 10);
        assert!((f.loss_rate - 0.1).abs() < 1e-12);
        assert!((f.pdr - 0.9).abs() < 1e-12);
        assert!((f.throughput_bps - 360_000.0).abs() < 1e-9);
        assert!((f.goodput_bps - 320_000.0).abs() < 1e-9);
    }
}
