//! The sending end: [`engine::SenderEngine`] runs the session without a socket (handshake,
//! the core's data packets, close); [`Sender`] is a thread that drives it over a socket, paces
//! data at the core's send times with a sleep-then-spin wait, and hands feedback to it.

pub mod engine;

use std::collections::VecDeque;
use std::io::{self, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tfrc::variants::VariantChoice;
use tfrc::wire;
use tfrc::{Profile, Time};
use tfrc_protect::{Opener, StaticKeypair};

use crate::capture::{Capture, Tap};
use crate::frame::{self, Hello, Kind, Mode};
use crate::stats::{Drops, FlowSummary, ReceiverReport};
use crate::sys;
use engine::{EngineEvent, SenderEngine, Transmit};

/// How a sender protects its session.
#[derive(Clone, Debug, Default)]
pub enum Protect {
    /// Plain: no encryption and no integrity. The random session id is the only defence, and
    /// only against off-path attackers: anyone who sees the traffic can read it and inject
    /// data, feedback or a FIN. Receivers refuse it unless told otherwise
    /// (`ReceiverOptions::require_protection`).
    None,
    /// Noise NN (ephemeral keys only), then every packet sealed with ChaCha20-Poly1305: the
    /// default. Confidentiality and integrity against passive and off-path attackers and
    /// against injection after the handshake; no authentication of the receiver, so an active
    /// man in the middle of the handshake can relay the session through itself. Pin the
    /// receiver's key ([`Protect::Noise`]) to rule that out.
    #[default]
    NoiseUnauthenticated,
    /// Noise IK with the receiver's static public key pinned; packets sealed with
    /// ChaCha20-Poly1305. A receiver that does not hold the pinned key's private half cannot
    /// complete the handshake.
    Noise {
        /// The receiver's static public key.
        receiver: [u8; 32],
        /// This sender's static key (for the receiver's allow-list); none: a fresh key for this
        /// session.
        identity: Option<StaticKeypair>,
    },
    /// Seed 000's RSA-OAEP exchange (E6): unauthenticated, an active attacker on the path can
    /// substitute the key. The paper's variant, not a protection to rely on.
    RsaUnauthenticated,
}

impl Protect {
    /// The frame mode.
    pub fn mode(&self) -> Mode {
        match self {
            Protect::None => Mode::Plain,
            Protect::Noise { .. } => Mode::Noise,
            Protect::NoiseUnauthenticated => Mode::NoiseUnauthenticated,
            Protect::RsaUnauthenticated => Mode::RsaUnauthenticated,
        }
    }
}

/// Where the data comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The application calls [`Sender::send`]; each message is one packet.
    Messages,
    /// The transport generates full-size packets (a bulk source, or CBR with a rate limit).
    Generated,
}

/// How much of its own host's queues (socket buffer, qdisc, device queue) a sender fills.
///
/// A packet waiting in this host is not yet on the path, and a queue here is shared with the
/// host's other flows: a sender that fills a shaper on its own interface (an operator's uplink
/// limit) delays and starves them, and loses packets there that no receiver will report in
/// time. Linux TCP keeps about max(2 packets, 1 ms at its pacing rate) per socket in these
/// queues (TCP Small Queues) and enters CWR when one drops a packet. `docs/real-network.md`,
/// "Local congestion", has the reasoning and the measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostQueue {
    /// The socket's send buffer follows the allowed rate: max(8 KiB, two segments, 1 ms at X)
    /// (the kernel doubles it for its bookkeeping). A full buffer refuses the next packet
    /// (`EAGAIN`) and the sender waits until the socket is writable.
    #[default]
    Small,
    /// The whole `socket_buffer` (4 MiB): local queues fill until they drop (`ENOBUFS`), each
    /// drop then a congestion signal. The behaviour before issue 16, kept for comparison.
    Buffer,
}

impl HostQueue {
    /// The send buffer to request for allowed rate `x` (bytes/s) and segment size `s`.
    pub(crate) fn send_buffer(self, x: f64, s: usize) -> Option<usize> {
        match self {
            HostQueue::Small => {
                let per_ms = if x.is_finite() { x / 1000.0 } else { 0.0 };
                Some(8192usize.max(2 * (s + 100)).max(per_ms.min(64e6) as usize))
            }
            HostQueue::Buffer => None,
        }
    }
}

/// How a sender is set up.
pub struct SenderOptions {
    /// The TFRC profile (its segment size s is the largest message).
    pub profile: Profile,
    /// Variants of the catalogue (`tfrc::variants`) applied onto `profile` at
    /// [`Sender::connect`] with `tfrc::variants::apply`. The HELLO carries them, and the
    /// receiver applies the same list to its own profile, so receiver-side variants
    /// (`owd-classifier`, the `ali-*` transforms) run at the receiver. Over a real network the
    /// two ends' clocks are not synchronised, so `owd-classifier` without an `offset_clock`
    /// parameter gets `offset_clock=1` (`docs/variants.md`); give `offset_clock=0` to insist.
    pub variants: Vec<VariantChoice>,
    /// How the session is protected.
    pub protect: Protect,
    /// The data source.
    pub source: Source,
    /// The application's own rate, bits/s (the unit of every rate in this crate's API:
    /// [`SenderStats`], [`RateWatch`], the flow summaries): data become ready at most this
    /// fast (a CBR source), so TFRC sends at min(X, limit).
    pub rate_limit_bps: Option<f64>,
    /// Stop sending after this long (counted from the end of the handshake).
    pub duration: Option<Duration>,
    /// Give the core the RTT measured by the handshake (HELLO → HELLO_ACK, and KEY → KEY_ACK
    /// in protected mode; only exchanges that were not retransmitted), so that the first data
    /// go at W_init/R rather than one segment per second: RFC 5348 §4.2's "SYN exchange from
    /// the connection setup" ([`tfrc::Sender::on_handshake_rtt`]). On by default.
    pub handshake_rtt: bool,
    /// The last part of every wait is a busy loop this long, for sub-microsecond send times.
    pub spin: Duration,
    /// Messages the application may queue before [`Sender::send`] blocks.
    pub queue: usize,
    /// Give up the handshake after this long.
    pub connect_timeout: Duration,
    /// Give up waiting for the FIN_ACK after this long.
    pub fin_timeout: Duration,
    /// Local address to bind (default: the unspecified address of the destination's family).
    pub bind: Option<SocketAddr>,
    /// Socket send and receive buffer size in bytes (the send buffer is smaller under
    /// [`HostQueue::Small`]).
    pub socket_buffer: usize,
    /// How much of this host's queues the sender fills.
    pub host_queue: HostQueue,
    /// Write one JSON line of sender state per feedback here.
    pub feedback_log: Option<Box<dyn Write + Send>>,
    /// Ask for ECN (RFC 3168): when the receiver agrees, data packets go out ECN-capable
    /// (ECT(0)) and a router's Congestion Experienced mark is a loss event at the receiver
    /// (RFC 5348 §5.1), so the sender slows without a packet being dropped.
    pub ecn: bool,
    /// Give every datagram sent and received to this sink ([`crate::capture`]); none: no
    /// capture, at the cost of one branch per socket call.
    pub capture: Option<Capture>,
}

impl Default for SenderOptions {
    fn default() -> Self {
        SenderOptions {
            profile: Profile::rfc5348(),
            variants: Vec::new(),
            protect: Protect::default(),
            source: Source::Messages,
            rate_limit_bps: None,
            duration: None,
            handshake_rtt: true,
            spin: Duration::from_micros(50),
            queue: 256,
            connect_timeout: Duration::from_secs(10),
            fin_timeout: Duration::from_secs(3),
            bind: None,
            socket_buffer: 4 << 20,
            host_queue: HostQueue::Small,
            feedback_log: None,
            ecn: false,
            capture: None,
        }
    }
}

impl std::fmt::Debug for SenderOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SenderOptions")
            .field("profile", &self.profile.kind)
            .field("variants", &self.variants)
            .field("protect", &self.protect)
            .field("source", &self.source)
            .field("rate_limit_bps", &self.rate_limit_bps)
            .field("duration", &self.duration)
            .field("handshake_rtt", &self.handshake_rtt)
            .finish_non_exhaustive()
    }
}

/// The sender's state, for live status and the final report. Rates in bits/s.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SenderStats {
    /// Seconds since the handshake completed.
    pub elapsed_s: f64,
    /// Allowed rate X.
    pub x_bps: f64,
    /// Pacing rate X_inst (§4.5).
    pub x_inst_bps: f64,
    /// Equation rate X_Bps.
    pub x_calc_bps: f64,
    /// X_recv of the last feedback.
    pub x_recv_bps: f64,
    /// Loss event rate p of the last feedback.
    pub p: f64,
    /// Smoothed RTT R.
    pub rtt_s: Option<f64>,
    /// t_RTO.
    pub t_rto_s: f64,
    /// In the initial slow start.
    pub slow_start: bool,
    /// Data packets sent.
    pub packets_sent: u64,
    /// Their payload bytes.
    pub payload_bytes_sent: u64,
    /// Feedback packets accepted.
    pub feedbacks: u64,
    /// Nofeedback timer expiries.
    pub nofeedback_expiries: u64,
    /// Hop count of the last feedback (E5).
    pub hops: Option<u8>,
    /// TTL of the last data packet.
    pub ttl: u8,
    /// ICMP time-exceeded notices for our data (given to the core, E5).
    pub icmp_time_exceeded: u64,
    /// Other ICMP errors (for example port unreachable: no receiver).
    pub icmp_other: u64,
    /// Datagrams the kernel did not send for a reason other than the two below (for example a
    /// pending ICMP error reported on the send); counted as sent, so the receiver sees a loss.
    pub send_errors: u64,
    /// Data packets the socket refused because its send buffer was full (`EAGAIN`): not
    /// counted as sent, offered again once the socket is writable (backpressure).
    #[serde(default)]
    pub send_blocked: u64,
    /// Data packets a local queue dropped (`ENOBUFS`: a shaper or device queue on this host was
    /// full): not counted as sent, offered again, and a congestion signal to the core
    /// ([`tfrc::Sender::on_local_congestion`]).
    #[serde(default)]
    pub local_drops: u64,
    /// Datagrams dropped on input, by cause.
    pub drops: Drops,
    /// Messages waiting in the application queue.
    pub queued: usize,
    /// Packets the application made ready (admitted to the core).
    pub generated_packets: u64,
    /// Coefficient of variation of the packets sent per whole second.
    pub smoothness_cov: Option<f64>,
    /// The RTT the handshake measured (given to the core unless `handshake_rtt` is off).
    pub handshake_rtt_s: Option<f64>,
    /// Both ends agreed to ECN: data packets went out ECT(0).
    #[serde(default)]
    pub ecn: bool,
    /// The variants applied to the profile (as the HELLO carried them).
    pub variants: Vec<String>,
    /// How late the sender thread woke for the times it slept towards (send times and
    /// timers), microseconds: median, 99th percentile and maximum; `None` before the first.
    /// A thread that is descheduled on a busy machine sends late: this says by how much.
    #[serde(default)]
    pub wake_lateness_us: Option<[f64; 3]>,
}

impl SenderStats {
    /// One line of live status (`tfrclab send` redraws it on a terminal).
    pub fn status_line(&self) -> String {
        format!(
            "send {:6.1}s  X {:8.3} Mb/s  X_recv {:8.3} Mb/s  RTT {}  p {:.5}  sent {}{}",
            self.elapsed_s,
            self.x_bps / 1e6,
            self.x_recv_bps / 1e6,
            self.rtt_s
                .map_or("-".to_string(), |r| format!("{:.2} ms", r * 1e3)),
            self.p,
            self.packets_sent,
            if self.slow_start {
                "  (slow start)"
            } else {
                ""
            },
        )
    }
}

/// Lateness of timed wake-ups in a fixed histogram (1-µs bins below 1 ms, 1-ms bins up to
/// 1 s, then one bin), so that memory stays constant however long the sender runs.
#[derive(Clone)]
pub(crate) struct WakeLateness {
    bins: Vec<u32>,
    max_ns: u64,
    n: u64,
}

impl Default for WakeLateness {
    fn default() -> Self {
        WakeLateness {
            bins: vec![0; 2001],
            max_ns: 0,
            n: 0,
        }
    }
}

impl WakeLateness {
    pub(crate) fn record(&mut self, late: Duration) {
        let us = late.as_micros() as u64;
        let i = if us < 1000 {
            us
        } else {
            (1000 + us / 1000).min(2000)
        };
        self.bins[i as usize] = self.bins[i as usize].saturating_add(1);
        self.max_ns = self.max_ns.max(late.as_nanos() as u64);
        self.n += 1;
    }

    fn quantile_us(&self, q: f64) -> f64 {
        let want = ((q * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in self.bins.iter().enumerate() {
            seen += u64::from(c);
            if seen >= want {
                return if i < 1000 {
                    i as f64
                } else {
                    (i as f64 - 1000.0) * 1000.0
                };
            }
        }
        self.max_ns as f64 / 1e3
    }

    pub(crate) fn summary(&self) -> Option<[f64; 3]> {
        (self.n > 0).then(|| {
            [
                self.quantile_us(0.5),
                self.quantile_us(0.99),
                self.max_ns as f64 / 1e3,
            ]
        })
    }
}

/// Welford's running mean and variance of packets per 1-second bin: constant memory.
#[derive(Default)]
pub(crate) struct Smoothness {
    bin: u64,
    count: u64,
    n: u64,
    mean: f64,
    m2: f64,
}

impl Smoothness {
    pub(crate) fn on_send(&mut self, since_start: Duration) {
        let bin = since_start.as_secs();
        while self.bin < bin {
            self.n += 1;
            let x = self.count as f64;
            let d = x - self.mean;
            self.mean += d / self.n as f64;
            self.m2 += d * (x - self.mean);
            self.count = 0;
            self.bin += 1;
        }
        self.count += 1;
    }

    /// Take back the last [`on_send`](Self::on_send) (the host refused the packet).
    pub(crate) fn unsend(&mut self) {
        self.count = self.count.saturating_sub(1);
    }

    pub(crate) fn cov(&self) -> Option<f64> {
        (self.n >= 2 && self.mean > 0.0).then(|| (self.m2 / (self.n - 1) as f64).sqrt() / self.mean)
    }
}

/// What a finished sender reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SenderReport {
    /// The sender's final state.
    pub sender: SenderStats,
    /// The receiver's report from the FIN_ACK (`None` if it never came).
    pub receiver: Option<ReceiverReport>,
    /// The flow summary (`None` without the receiver's report).
    pub flow: Option<FlowSummary>,
}

/// The variant list as the transport runs it: `owd-classifier` without an `offset_clock`
/// parameter gets `offset_clock=1`, since the two ends of a real path do not share a
/// synchronised clock (`docs/variants.md`, seed 002 "Clocks").
pub fn real_network_variants(v: &[VariantChoice]) -> Vec<VariantChoice> {
    v.iter()
        .map(|c| {
            let mut c = c.clone();
            let owd = c
                .name
                .trim()
                .eq_ignore_ascii_case(tfrc::variants::Variant::OwdClassifier.name());
            if owd && !c.params.iter().any(|(k, _)| k.trim() == "offset_clock") {
                c.params.push(("offset_clock".to_string(), 1.0));
            }
            c
        })
        .collect()
}

/// Why a message was not queued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// Longer than the segment size.
    TooLong {
        /// The message length.
        len: usize,
        /// The segment size.
        max: usize,
    },
    /// The sender has stopped (duration over, error, or closed).
    Closed,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::TooLong { len, max } => {
                write!(f, "message of {len} bytes exceeds the segment size {max}")
            }
            SendError::Closed => f.write_str("the sender has stopped"),
        }
    }
}

impl std::error::Error for SendError {}

struct Queue {
    msgs: VecDeque<Vec<u8>>,
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    room: Condvar,
    stats: Mutex<SenderStats>,
    rate: Mutex<RateState>,
    rate_changed: Condvar,
    stop: AtomicBool,
    done: AtomicBool,
    wake: sys::EventFd,
}

/// The allowed rate as last published, with a generation number that grows at every change.
#[derive(Clone, Copy, Debug, Default)]
struct RateState {
    generation: u64,
    x_bps: f64,
    finished: bool,
}

/// Follows the sender's allowed rate X (bits/s) without polling
/// [`Sender::stats`]: an encoder waits for the next change and adapts its bitrate to it. Made by
/// [`Sender::rate_watch`]; any number may exist.
pub struct RateWatch {
    shared: Arc<Shared>,
    seen: u64,
}

impl RateWatch {
    /// The allowed rate now, bits/s (0 before the first send time).
    pub fn rate_bps(&self) -> f64 {
        self.shared.rate.lock().map(|r| r.x_bps).unwrap_or(0.0)
    }

    /// Wait up to `timeout` for X to change since this watch last returned a rate; the new rate
    /// in bits/s, or `None` on timeout or once the sender has stopped.
    pub fn wait_change(&mut self, timeout: Duration) -> Option<f64> {
        let g = self.shared.rate.lock().ok()?;
        let (g, _) = self
            .shared
            .rate_changed
            .wait_timeout_while(g, timeout, |r| r.generation == self.seen && !r.finished)
            .ok()?;
        if g.generation == self.seen || g.finished {
            return None;
        }
        self.seen = g.generation;
        Some(g.x_bps)
    }
}

/// Publish X when it changed (at feedbacks and timer expiries) and wake the watches.
fn publish_rate(shared: &Shared, x_bps: f64, finished: bool) {
    if let Ok(mut r) = shared.rate.lock() {
        if r.x_bps != x_bps || r.finished != finished {
            r.x_bps = x_bps;
            r.finished = finished;
            r.generation += 1;
            shared.rate_changed.notify_all();
        }
    }
}

/// Check `opts` (variants applied onto the profile, which must be valid; the variant list
/// must fit a HELLO; the rate limit and segment size in range) and bind the non-blocking socket
/// towards `to`: what every driver of a [`SenderEngine`] over a socket needs first.
pub(crate) fn prepare(
    to: SocketAddr,
    mut opts: SenderOptions,
) -> io::Result<(SenderOptions, UdpSocket)> {
    opts.variants = real_network_variants(&opts.variants);
    opts.profile = tfrc::variants::apply(opts.profile, &opts.variants)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    opts.profile
        .validate()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    if frame::encode_hello(&Hello {
        mode: Mode::Plain,
        profile: opts.profile.kind,
        segment_size: 1,
        clock_tag: 0,
        variants: opts.variants.clone(),
        token: Vec::new(),
        noise: Vec::new(),
        ecn: false,
    })
    .is_none()
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "the variant list is longer than a HELLO carries ({} bytes, {} choices)",
                frame::MAX_VARIANTS_TEXT,
                frame::MAX_VARIANTS
            ),
        ));
    }
    if let Some(r) = opts.rate_limit_bps {
        // At least 1 b/s keeps every admission interval (s/r) within days, not overflows.
        if !(r.is_finite() && r >= 1.0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("rate limit {r} b/s: expected a finite rate of at least 1 b/s"),
            ));
        }
    }
    let s = opts.profile.sender.segment_size as usize;
    if s > crate::MAX_SEGMENT {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("segment size {s} exceeds {}", crate::MAX_SEGMENT),
        ));
    }
    let bind = opts.bind.unwrap_or_else(|| {
        if to.is_ipv4() {
            "0.0.0.0:0".parse().expect("literal")
        } else {
            "[::]:0".parse().expect("literal")
        }
    });
    let sock = UdpSocket::bind(bind)?;
    sock.set_nonblocking(true)?;
    sys::set_buffers(&sock, opts.socket_buffer);
    let _ = sys::enable_recv_err(&sock);
    Ok((opts, sock))
}

/// A TFRC sender running on its own thread.
pub struct Sender {
    shared: Arc<Shared>,
    max_msg: usize,
    queue_cap: usize,
    thread: Option<JoinHandle<io::Result<SenderReport>>>,
}

impl Sender {
    /// Open a session to `to`: bind, handshake (and key exchange when protected), then start
    /// sending. Returns once the receiver has answered, or an error after
    /// `connect_timeout`.
    pub fn connect(to: SocketAddr, opts: SenderOptions) -> io::Result<Sender> {
        let (opts, sock) = prepare(to, opts)?;
        let s = opts.profile.sender.segment_size as usize;
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                msgs: VecDeque::new(),
                closed: false,
            }),
            room: Condvar::new(),
            stats: Mutex::new(SenderStats::default()),
            rate: Mutex::new(RateState::default()),
            rate_changed: Condvar::new(),
            stop: AtomicBool::new(false),
            done: AtomicBool::new(false),
            wake: sys::EventFd::new()?,
        });
        let (ready_tx, ready_rx) = mpsc::channel();
        let sh = shared.clone();
        let queue_cap = opts.queue.max(1);
        let thread = std::thread::Builder::new()
            .name("tfrc-udp-send".into())
            .spawn(move || {
                let r = run(sock, to, opts, &sh, ready_tx);
                sh.done.store(true, Ordering::SeqCst);
                let x = sh.rate.lock().map(|r| r.x_bps).unwrap_or(0.0);
                publish_rate(&sh, x, true);
                sh.room.notify_all();
                r
            })?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Sender {
                shared,
                max_msg: s,
                queue_cap,
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => match thread.join() {
                Ok(Err(e)) => Err(e),
                _ => Err(io::Error::other("sender thread ended during the handshake")),
            },
        }
    }

    /// Queue one message (at most the segment size); blocks while the queue is full.
    pub fn send(&self, msg: Vec<u8>) -> Result<(), SendError> {
        if msg.len() > self.max_msg {
            return Err(SendError::TooLong {
                len: msg.len(),
                max: self.max_msg,
            });
        }
        let mut q = self.shared.queue.lock().map_err(|_| SendError::Closed)?;
        loop {
            if q.closed || self.shared.done.load(Ordering::SeqCst) {
                return Err(SendError::Closed);
            }
            if q.msgs.len() < self.queue_cap {
                break;
            }
            q = self
                .shared
                .room
                .wait_timeout(q, Duration::from_millis(50))
                .map_err(|_| SendError::Closed)?
                .0;
        }
        let was_empty = q.msgs.is_empty();
        q.msgs.push_back(msg);
        drop(q);
        if was_empty {
            self.shared.wake.notify();
        }
        Ok(())
    }

    /// Queue one message without blocking: `Ok(false)` when the queue is full (the
    /// application's cue that it produces faster than TFRC allows).
    pub fn try_send(&self, msg: Vec<u8>) -> Result<bool, SendError> {
        if msg.len() > self.max_msg {
            return Err(SendError::TooLong {
                len: msg.len(),
                max: self.max_msg,
            });
        }
        let mut q = self.shared.queue.lock().map_err(|_| SendError::Closed)?;
        if q.closed || self.shared.done.load(Ordering::SeqCst) {
            return Err(SendError::Closed);
        }
        if q.msgs.len() >= self.queue_cap {
            return Ok(false);
        }
        let was_empty = q.msgs.is_empty();
        q.msgs.push_back(msg);
        drop(q);
        if was_empty {
            self.shared.wake.notify();
        }
        Ok(true)
    }

    /// A watch of the allowed rate X, for an encoder that follows it (see [`RateWatch`]).
    pub fn rate_watch(&self) -> RateWatch {
        RateWatch {
            shared: self.shared.clone(),
            seen: 0,
        }
    }

    /// The largest message [`send`](Self::send) accepts.
    pub fn max_message(&self) -> usize {
        self.max_msg
    }

    /// A snapshot of the sender's state (refreshed at every feedback and every 20 ms).
    pub fn stats(&self) -> SenderStats {
        self.shared
            .stats
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// The sender has stopped sending (duration over, closed, or an error).
    pub fn is_finished(&self) -> bool {
        self.shared.done.load(Ordering::SeqCst)
    }

    /// No more messages: send what is queued, close the session, and return the report.
    pub fn close(mut self) -> io::Result<SenderReport> {
        if let Ok(mut q) = self.shared.queue.lock() {
            q.closed = true;
        }
        self.shared.wake.notify();
        self.join()
    }

    /// Stop now, dropping queued messages, and close the session.
    pub fn abort(mut self) -> io::Result<SenderReport> {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake.notify();
        self.join()
    }

    fn join(&mut self) -> io::Result<SenderReport> {
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| io::Error::other("sender thread panicked"))?,
            None => Err(io::Error::other("sender already joined")),
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.shared.stop.store(true, Ordering::SeqCst);
            self.shared.wake.notify();
            let _ = self.join();
        }
    }
}

/// A datagram from the receiver, decoded and checked.
// Short-lived, one at a time.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Input {
    /// A feedback packet.
    Feedback(tfrc::Feedback),
    /// The receiver's final report.
    FinAck(ReceiverReport),
    /// A handshake answer after the handshake (a retransmission's), or nothing to act on.
    Other,
}

/// Decode one datagram from the receiver once the handshake is over: framing, session id,
/// AEAD open (`opener`, protected sessions), then the feedback or FIN_ACK body. Anything that
/// is not valid is counted in `drops` and yields `None`. The sender's whole input path after
/// the handshake; the fuzz target drives it.
pub fn decode_input(
    d: &[u8],
    session: u64,
    opener: Option<&mut Opener>,
    drops: &mut Drops,
) -> Option<Input> {
    let f = match frame::parse(d) {
        Ok(f) => f,
        Err(e) => {
            drops.count_frame(e);
            return None;
        }
    };
    if f.session != session {
        drops.spoofed += 1;
        return None;
    }
    match f.kind {
        Kind::Feedback => {
            let clear_end = frame::HEADER_LEN + wire::FEEDBACK_LEN;
            if d.len() < clear_end {
                drops.truncated += 1;
                return None;
            }
            if let Some(o) = opener {
                if let Err(e) = o.open(&d[..clear_end], &d[clear_end..]) {
                    drops.count_open(e);
                    return None;
                }
            } else if d.len() != clear_end {
                drops.malformed += 1;
                return None;
            }
            match wire::decode_feedback(&d[frame::HEADER_LEN..clear_end]) {
                Ok(fb) => Some(Input::Feedback(fb)),
                Err(_) => {
                    drops.malformed += 1;
                    None
                }
            }
        }
        Kind::FinAck => {
            let json = match opener {
                Some(o) => match o.open(f.header, f.body) {
                    Ok(p) => p.payload,
                    Err(e) => {
                        drops.count_open(e);
                        return None;
                    }
                },
                None => f.body.to_vec(),
            };
            if json.len() > frame::MAX_REPORT {
                drops.malformed += 1;
                return None;
            }
            match serde_json::from_slice::<ReceiverReport>(&json) {
                Ok(r) => Some(Input::FinAck(r)),
                Err(_) => {
                    drops.malformed += 1;
                    None
                }
            }
        }
        // Late handshake answers (retransmissions) are harmless.
        Kind::HelloAck | Kind::KeyAck | Kind::Retry => Some(Input::Other),
        _ => {
            drops.unexpected += 1;
            None
        }
    }
}

/// A HELLO datagram of `session` with `token` and the Noise message `noise` (both empty in the
/// first).
pub(crate) fn hello_datagram(
    profile: &Profile,
    variants: &[VariantChoice],
    protect: &Protect,
    session: u64,
    token: &[u8],
    noise: &[u8],
    ecn: bool,
) -> Vec<u8> {
    let hello = Hello {
        mode: protect.mode(),
        profile: profile.kind,
        segment_size: profile.sender.segment_size,
        clock_tag: tfrc_protect::clock_tag(&crate::host_id().to_be_bytes(), session),
        variants: variants.to_vec(),
        token: token.to_vec(),
        noise: noise.to_vec(),
        ecn,
    };
    let mut d = frame::header(Kind::Hello, session).to_vec();
    // `connect` checked that the list fits.
    d.extend_from_slice(&frame::encode_hello(&hello).unwrap_or_default());
    d
}

pub(crate) fn status_into(st: &mut SenderStats, core: &tfrc::Sender, start: Time, now: Time) {
    let c = core.status();
    st.elapsed_s = (now - start).as_secs_f64();
    st.x_bps = c.x * 8.0;
    st.x_inst_bps = c.x_inst * 8.0;
    st.x_calc_bps = c.x_calc * 8.0;
    st.x_recv_bps = c.x_recv * 8.0;
    st.p = c.p;
    st.rtt_s = c.rtt.map(|r| r.as_secs_f64());
    st.t_rto_s = c.t_rto.as_secs_f64();
    st.slow_start = c.slow_start;
    st.packets_sent = c.packets_sent;
    st.feedbacks = c.feedbacks;
    st.nofeedback_expiries = c.nofeedback_expiries;
    st.ttl = core.ttl();
}

#[derive(Serialize)]
struct LogLine<'a> {
    t_s: f64,
    #[serde(flatten)]
    stats: &'a SenderStats,
}

/// Read every datagram waiting on `sock` into the engine; the events it reported.
fn read_all(
    sock: &UdpSocket,
    to: SocketAddr,
    eng: &mut SenderEngine,
    buf: &mut [u8],
    tap: &mut Option<Tap>,
) -> Vec<EngineEvent> {
    let mut events = Vec::new();
    for _ in 0..256 {
        let m = match sys::recv_from(sock, buf) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            // ICMP errors (port unreachable) come back through recvmsg on Linux; they are read
            // from the error queue separately.
            Err(_) => continue,
        };
        if let Some(t) = tap {
            t.received(&m, &buf[..m.len.min(buf.len())]);
        }
        if m.truncated || m.from != Some(to) {
            eng.on_stray_datagram(m.truncated);
            continue;
        }
        let now = crate::now();
        let ev = eng.on_datagram(now, &buf[..m.len.min(buf.len())]);
        if ev != EngineEvent::None {
            events.push(ev);
        }
    }
    events
}

/// Send one datagram of the engine's; tell it when the host refused or failed. Returns false
/// when the host refused it (wait before sending more).
fn transmit(
    sock: &UdpSocket,
    to: &SocketAddr,
    eng: &mut SenderEngine,
    t: &Transmit,
    tap: &mut Option<Tap>,
) -> bool {
    let Err(e) = sys::send_to(sock, &t.datagram, to, t.ttl) else {
        if let Some(tap) = tap {
            tap.sent(*to, &t.datagram, t.ttl);
        }
        return true;
    };
    match sys::send_fail(&e) {
        sys::SendFail::Blocked => {
            eng.on_send_refused(crate::now(), t, false);
            false
        }
        sys::SendFail::LocalDrop => {
            eng.on_send_refused(crate::now(), t, true);
            false
        }
        sys::SendFail::Other => {
            eng.on_send_error();
            true
        }
    }
}

/// The sender thread: a [`SenderEngine`] driven over `sock`.
fn run(
    sock: UdpSocket,
    to: SocketAddr,
    mut opts: SenderOptions,
    shared: &Shared,
    ready: mpsc::Sender<io::Result<()>>,
) -> io::Result<SenderReport> {
    sys::set_timer_slack(1_000);
    let mut eng = SenderEngine::new(to, &opts, crate::now());
    let mut tap = Tap::new(opts.capture.take(), &sock);
    let mut buf = vec![0u8; crate::RECV_BUF];
    let fds = [sock.as_raw_fd(), shared.wake.fd()];

    // The handshake.
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            eng.close(crate::now());
        }
        let now = crate::now();
        while let Some(t) = eng.poll_transmit(now) {
            transmit(&sock, &to, &mut eng, &t, &mut tap);
        }
        read_all(&sock, to, &mut eng, &mut buf, &mut tap);
        if let Some(e) = eng.take_error() {
            let msg = e.to_string();
            let _ = ready.send(Err(e));
            return Err(io::Error::other(msg));
        }
        if eng.is_established() {
            break;
        }
        let wake = eng
            .poll_timeout()
            .unwrap_or(now + Duration::from_millis(20));
        let _ = crate::wait_until(wake, &fds, Duration::ZERO)?;
        shared.wake.drain();
    }
    let _ = ready.send(Ok(()));
    // Data ECN-capable once both ends agreed (the handshake itself went Not-ECT). Should the
    // option fail, packets stay Not-ECT: routers drop instead of marking, nothing breaks.
    if eng.ecn() && sys::set_ecn_capable(&sock).is_ok() {
        if let Some(t) = &mut tap {
            t.ecn = sys::ECT0;
        }
    }

    let s = opts.profile.sender.segment_size as usize;
    // The core's unit is bytes/s.
    let rate_limit = opts.rate_limit_bps.map(|b| b / 8.0);
    let start = crate::now();
    let end = opts.duration.map(|d| start + d);
    let mut next_admit = start;
    let mut next_publish = start;
    let mut closing = false;
    let mut queued = 0usize;
    let mut log = opts.feedback_log.take();
    let spin = opts.spin;
    let mut ebuf = vec![0u8; 2048];
    // The send buffer last requested (0: not set since the handshake).
    let mut sndbuf = 0usize;
    let mut late = WakeLateness::default();

    while !eng.is_closed() {
        let now = crate::now();
        // 1. Feedback (and, closing, the FIN_ACK).
        for ev in read_all(&sock, to, &mut eng, &mut buf, &mut tap) {
            if let (EngineEvent::Feedback, Some(w)) = (ev, log.as_mut()) {
                let now = crate::now();
                let stats = eng.stats_at(now);
                let line = LogLine {
                    t_s: (now - start).as_secs_f64(),
                    stats: &stats,
                };
                if let Ok(j) = serde_json::to_string(&line) {
                    let _ = writeln!(w, "{j}");
                }
            }
        }
        // ICMP errors for our data: time exceeded feeds the core's TTL policy (E5).
        while let Ok(Some(e)) = sys::recv_error(&sock, &mut ebuf) {
            if e.icmp_type == 11 {
                eng.on_icmp_time_exceeded(now, &ebuf[..e.len.min(ebuf.len())]);
            } else {
                eng.on_icmp_other();
            }
        }
        let now = crate::now();
        // 2. Application data becomes ready.
        let stopping = shared.stop.load(Ordering::SeqCst) || end.is_some_and(|e| now >= e);
        let mut app_closed = false;
        if !stopping && !closing {
            match opts.source {
                Source::Generated => match rate_limit {
                    None => eng.set_infinite_backlog(now),
                    Some(r) => {
                        let mut n = 0;
                        while next_admit <= now && n < 1024 {
                            n += 1;
                            next_admit += Duration::from_secs_f64(s as f64 / r);
                        }
                        // After a stall, do not let a backlog of admissions build up.
                        next_admit = next_admit.max(now - Duration::from_millis(100));
                        eng.push_generated(now, n);
                    }
                },
                Source::Messages => {
                    let mut q = shared
                        .queue
                        .lock()
                        .map_err(|_| io::Error::other("queue poisoned"))?;
                    let mut n = 0u64;
                    while let Some(m) = q.msgs.front() {
                        if let Some(r) = rate_limit {
                            if next_admit > now {
                                break;
                            }
                            next_admit += Duration::from_secs_f64(m.len().max(1) as f64 / r);
                            next_admit = next_admit.max(now - Duration::from_millis(100));
                        }
                        if let Some(m) = q.msgs.pop_front() {
                            eng.queue_message(now, m);
                            n += 1;
                        }
                    }
                    app_closed = q.closed && q.msgs.is_empty();
                    queued = q.msgs.len();
                    drop(q);
                    if n > 0 {
                        shared.room.notify_all();
                    }
                }
            }
        }
        publish_rate(shared, eng.rate_bps(), false);
        if let Some(b) = opts.host_queue.send_buffer(eng.rate_bps() / 8.0, s) {
            // Resize only on a change of more than a quarter (one system call).
            if b * 4 < sndbuf * 3 || b * 4 > sndbuf * 5 {
                sys::set_send_buffer(&sock, b);
                sndbuf = b;
            }
        }
        if !closing
            && (stopping
                || (opts.source == Source::Messages && app_closed && eng.pending_messages() == 0))
        {
            // Close: FIN until FIN_ACK.
            closing = true;
            if let Some(w) = log.as_mut() {
                let _ = w.flush();
            }
            eng.close(now);
        }
        // 3. Transmit whatever the engine allows now (data, or FINs when closing).
        while let Some(t) = eng.poll_transmit(now) {
            if !transmit(&sock, &to, &mut eng, &t, &mut tap) {
                break;
            }
        }
        // 4. Publish.
        let now = crate::now();
        if now >= next_publish || eng.is_closed() {
            let mut st = eng.stats_at(now);
            st.queued = queued;
            st.wake_lateness_us = late.summary();
            if let Ok(mut g) = shared.stats.lock() {
                *g = st;
            }
            next_publish = now + Duration::from_millis(20);
        }
        if eng.is_closed() {
            break;
        }
        // 5. Sleep until the next send time, timer or input (or until the socket is writable
        // again after it refused a packet).
        let mut wake = now + Duration::from_millis(20);
        if let Some(t) = eng.poll_timeout() {
            wake = wake.min(t.max(now));
        }
        if rate_limit.is_some() && !closing {
            wake = wake.min(next_admit.max(now));
        }
        if let (Some(e), false) = (end, closing) {
            wake = wake.min(e);
        }
        let spin = if closing { Duration::ZERO } else { spin };
        let r = crate::wait_until_rw(wake, &fds, eng.wants_writable(), spin)?;
        if !(r.first || r.second || r.error || r.writable) {
            late.record(crate::now().saturating_since(wake));
        }
        if r.second {
            shared.wake.drain();
        }
        if r.writable {
            eng.on_writable();
        }
    }
    if let Some(w) = log.as_mut() {
        let _ = w.flush();
    }
    let unsent = shared.queue.lock().map(|q| q.msgs.len()).unwrap_or(0);
    let now = crate::now();
    let mut report = eng.report(now, unsent as u64);
    report.sender.queued = queued;
    report.sender.wake_lateness_us = late.summary();
    if let Ok(mut g) = shared.stats.lock() {
        *g = report.sender.clone();
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_lateness_quantiles() {
        let mut l = WakeLateness::default();
        assert_eq!(l.summary(), None);
        for us in 1..=98 {
            l.record(Duration::from_micros(us));
        }
        l.record(Duration::from_micros(2_500)); // a 1-ms bin
        l.record(Duration::from_secs(3)); // beyond the last bin: the maximum keeps it
        let [p50, p99, max] = l.summary().unwrap();
        assert_eq!(p50, 50.0);
        assert_eq!(p99, 2_000.0); // the 99th of 100 is the 2.5-ms one, in the 2-ms bin
        assert_eq!(max, 3e6);
    }
}
