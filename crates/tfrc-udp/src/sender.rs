//! The sending end: a thread that owns the socket and a `tfrc::Sender`, paces data at the
//! core's send times, processes feedback, and closes the session.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rand::rngs::OsRng;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use tfrc::variants::VariantChoice;
use tfrc::wire;
use tfrc::{Profile, Time};
use tfrc_protect::{Channel, NoiseInitiator, Opener, Sealer, StaticKeypair};

use crate::frame::{self, Hello, Kind, Mode};
use crate::stats::{Drops, FlowSummary, ReceiverReport};
use crate::sys;

/// How a sender protects its session.
#[derive(Clone, Debug, Default)]
pub enum Protect {
    /// Plain: the random session id is the only defence (against off-path attackers).
    #[default]
    None,
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
    fn send_buffer(self, x: f64, s: usize) -> Option<usize> {
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
}

impl Default for SenderOptions {
    fn default() -> Self {
        SenderOptions {
            profile: Profile::rfc5348(),
            variants: Vec::new(),
            protect: Protect::None,
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
    /// The variants applied to the profile (as the HELLO carried them).
    pub variants: Vec<String>,
}

/// Welford's running mean and variance of packets per 1-second bin: constant memory.
#[derive(Default)]
struct Smoothness {
    bin: u64,
    count: u64,
    n: u64,
    mean: f64,
    m2: f64,
}

impl Smoothness {
    fn on_send(&mut self, since_start: Duration) {
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

    fn cov(&self) -> Option<f64> {
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
    pub fn connect(to: SocketAddr, mut opts: SenderOptions) -> io::Result<Sender> {
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

/// The sender thread's state.
struct Io {
    sock: UdpSocket,
    to: SocketAddr,
    session: u64,
    sealer: Option<Sealer>,
    opener: Option<Opener>,
    buf: Vec<u8>,
    out: Vec<u8>,
    stats: SenderStats,
}

impl Io {
    fn send_raw(&mut self, d: &[u8], ttl: Option<u8>) {
        if sys::send_to(&self.sock, d, &self.to, ttl).is_err() {
            self.stats.send_errors += 1;
        }
    }

    /// Build `frame | clear | sealed(secret)` (or `frame | clear | secret` unprotected) in
    /// `self.out`.
    fn build(&mut self, kind: Kind, clear: &[u8], secret: &[u8]) -> bool {
        self.out.clear();
        self.out
            .extend_from_slice(&frame::header(kind, self.session));
        self.out.extend_from_slice(clear);
        match self.sealer.as_mut() {
            Some(s) => {
                let aad = self.out.clone();
                s.seal_into(&aad, secret, &mut self.out).is_ok()
            }
            None => {
                self.out.extend_from_slice(secret);
                true
            }
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

/// Read and check one datagram from the receiver (`None`: nothing to read).
fn read_one(io: &mut Io, _now: Time) -> io::Result<Option<Input>> {
    let m = match sys::recv_from(&io.sock, &mut io.buf) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
        // ICMP errors (port unreachable) come back through recvmsg on Linux; they are read
        // from the error queue separately.
        Err(_) => return Ok(Some(Input::Other)),
    };
    if m.truncated {
        io.stats.drops.truncated += 1;
        return Ok(Some(Input::Other));
    }
    if m.from != Some(io.to) {
        io.stats.drops.spoofed += 1;
        return Ok(Some(Input::Other));
    }
    let d = &io.buf[..m.len.min(io.buf.len())];
    Ok(Some(
        decode_input(d, io.session, io.opener.as_mut(), &mut io.stats.drops)
            .unwrap_or(Input::Other),
    ))
}

/// What the handshake waits for (one at a time, on the stack of one thread).
#[allow(clippy::large_enum_variant)]
enum Step {
    /// A RETRY (the first HELLO carries no token).
    Retry,
    /// The HELLO_ACK to the HELLO with the token.
    HelloAck(Option<NoiseInitiator>),
    /// RSA mode: the KEY_ACK.
    KeyAck,
}

/// The first HELLO datagram of `session` (no token).
fn hello_datagram(opts: &SenderOptions, session: u64, token: &[u8], noise: &[u8]) -> Vec<u8> {
    let hello = Hello {
        mode: opts.protect.mode(),
        profile: opts.profile.kind,
        segment_size: opts.profile.sender.segment_size,
        clock_tag: tfrc_protect::clock_tag(&crate::host_id().to_be_bytes(), session),
        variants: opts.variants.clone(),
        token: token.to_vec(),
        noise: noise.to_vec(),
    };
    let mut d = frame::header(Kind::Hello, session).to_vec();
    // `connect` checked that the list fits.
    d.extend_from_slice(&frame::encode_hello(&hello).unwrap_or_default());
    d
}

/// The handshake: HELLO until RETRY, HELLO with the token (and the Noise message) until
/// HELLO_ACK, then (RSA mode) KEY until KEY_ACK. Returns the RTT it measured: the smallest
/// of the exchanges that were answered without a retransmission (an answer to a retransmitted
/// request cannot be matched to its send time).
fn handshake(io: &mut Io, opts: &SenderOptions, shared: &Shared) -> io::Result<Option<Duration>> {
    let start = crate::now();
    let deadline = start + opts.connect_timeout;
    let mut request = hello_datagram(opts, io.session, &[], &[]);
    let retry = Duration::from_millis(200);
    let mut step = Step::Retry;
    let mut next = start;
    // Send time and number of sends of the current request.
    let mut sent_at = start;
    let mut sends = 0u32;
    let mut rtt: Option<Duration> = None;
    let mut measured = |sent_at: Time, sends: u32| {
        if sends == 1 {
            let r = crate::now() - sent_at;
            rtt = Some(rtt.map_or(r, |o: Duration| o.min(r)));
        }
        rtt
    };
    loop {
        let now = crate::now();
        if shared.stop.load(Ordering::SeqCst) {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "aborted"));
        }
        if now >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "no answer from {} within {:.1} s",
                    io.to,
                    opts.connect_timeout.as_secs_f64()
                ),
            ));
        }
        if now >= next {
            sent_at = crate::now();
            sends += 1;
            let d = request.clone();
            io.send_raw(&d, None);
            next = now + retry;
        }
        // Read answers.
        loop {
            let m = match sys::recv_from(&io.sock, &mut io.buf) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => continue,
            };
            if m.from != Some(io.to) || m.truncated {
                io.stats.drops.spoofed += 1;
                continue;
            }
            let d = io.buf[..m.len.min(io.buf.len())].to_vec();
            let Ok(f) = frame::parse(&d) else {
                io.stats.drops.malformed += 1;
                continue;
            };
            if f.session != io.session {
                io.stats.drops.spoofed += 1;
                continue;
            }
            match (f.kind, &mut step) {
                (Kind::Retry, Step::Retry) => {
                    let Ok(token) = frame::decode_retry(f.body) else {
                        io.stats.drops.malformed += 1;
                        continue;
                    };
                    measured(sent_at, sends);
                    let mut init = None;
                    let mut msg = Vec::new();
                    if let Protect::Noise { receiver, identity } = &opts.protect {
                        let me = match identity {
                            Some(k) => k.clone(),
                            None => StaticKeypair::generate()
                                .map_err(|e| io::Error::other(e.to_string()))?,
                        };
                        // The prologue covers the fields that do not change with the token.
                        let prologue = frame::hello_prologue(&request)
                            .map_err(|e| io::Error::other(e.to_string()))?;
                        let mut i = NoiseInitiator::new(&me, receiver, &prologue)
                            .map_err(|e| io::Error::other(e.to_string()))?;
                        msg = i
                            .first_message()
                            .map_err(|e| io::Error::other(e.to_string()))?;
                        init = Some(i);
                    }
                    request = hello_datagram(opts, io.session, token, &msg);
                    step = Step::HelloAck(init);
                    sends = 0;
                    next = crate::now();
                }
                (Kind::HelloAck, Step::HelloAck(init)) => {
                    let ack = match frame::decode_hello_ack(f.body) {
                        Ok(a) => a,
                        Err(_) => {
                            io.stats.drops.malformed += 1;
                            continue;
                        }
                    };
                    if ack.refused {
                        return Err(io::Error::new(
                            io::ErrorKind::Unsupported,
                            format!(
                                "{} refused the session: it does not offer {} mode, or cannot \
                                 apply the variants '{}'",
                                io.to,
                                opts.protect.mode().name(),
                                frame::variants_text(&opts.variants)
                            ),
                        ));
                    }
                    if ack.mode != opts.protect.mode() {
                        io.stats.drops.unexpected += 1;
                        continue;
                    }
                    let rtt = measured(sent_at, sends);
                    match ack.mode {
                        Mode::Plain => return Ok(rtt),
                        Mode::Noise => {
                            let Some(i) = init.take() else {
                                io.stats.drops.unexpected += 1;
                                continue;
                            };
                            let keys = i.finish(ack.payload).map_err(|_| {
                                io::Error::new(
                                    io::ErrorKind::PermissionDenied,
                                    format!(
                                        "the Noise handshake with {} failed: the answer was not \
                                         made with the pinned receiver key (a substituted key, \
                                         the wrong --peer-key, or tampering)",
                                        io.to
                                    ),
                                )
                            })?;
                            io.sealer = Some(Sealer::new(&keys.to_responder, Channel::Data));
                            io.opener = Some(Opener::new(&keys.to_initiator, Channel::Feedback));
                            return Ok(rtt);
                        }
                        Mode::RsaUnauthenticated => {
                            let pk = tfrc_protect::decode_public_key(ack.payload).map_err(|e| {
                                io::Error::new(
                                    io::ErrorKind::InvalidData,
                                    format!("receiver's public key: {e}"),
                                )
                            })?;
                            let bits = tfrc_protect::modulus_bits(&pk);
                            if bits < crate::receiver::MIN_RSA_BITS {
                                return Err(io::Error::new(
                                    io::ErrorKind::InvalidData,
                                    format!(
                                        "receiver's RSA key has {bits} bits: at least {} needed",
                                        crate::receiver::MIN_RSA_BITS
                                    ),
                                ));
                            }
                            let w = tfrc_protect::wrap_session_key(&pk, &mut OsRng)
                                .map_err(|e| io::Error::other(e.to_string()))?;
                            io.sealer = Some(Sealer::new(&w.key, Channel::Data));
                            io.opener = Some(Opener::new(&w.key, Channel::Feedback));
                            let mut k = frame::header(Kind::Key, io.session).to_vec();
                            k.extend_from_slice(&w.wrapped);
                            request = k;
                            step = Step::KeyAck;
                            sends = 0;
                            next = crate::now();
                        }
                    }
                }
                (Kind::KeyAck, Step::KeyAck) => {
                    let ok = io
                        .opener
                        .as_mut()
                        .is_some_and(|o| o.open(f.header, f.body).is_ok());
                    if ok {
                        return Ok(measured(sent_at, sends));
                    }
                    io.stats.drops.tampered += 1;
                }
                _ => io.stats.drops.unexpected += 1,
            }
        }
        let wake = next.min(deadline);
        let _ = crate::wait_until(
            wake,
            &[io.sock.as_raw_fd(), shared.wake.fd()],
            Duration::ZERO,
        )?;
        shared.wake.drain();
    }
}

fn status_into(st: &mut SenderStats, core: &tfrc::Sender, start: Time, now: Time) {
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

fn run(
    sock: UdpSocket,
    to: SocketAddr,
    mut opts: SenderOptions,
    shared: &Shared,
    ready: mpsc::Sender<io::Result<()>>,
) -> io::Result<SenderReport> {
    sys::set_timer_slack(1_000);
    let mut io = Io {
        sock,
        to,
        session: OsRng.next_u64(),
        sealer: None,
        opener: None,
        buf: vec![0u8; crate::RECV_BUF],
        out: Vec::with_capacity(crate::RECV_BUF),
        stats: SenderStats::default(),
    };
    let handshake_rtt = match handshake(&mut io, &opts, shared) {
        Ok(r) => r,
        Err(e) => {
            let msg = e.to_string();
            let _ = ready.send(Err(e));
            return Err(io::Error::other(msg));
        }
    };
    let _ = ready.send(Ok(()));

    let mut core = tfrc::Sender::new(opts.profile.sender)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    io.stats.handshake_rtt_s = handshake_rtt.map(|r| r.as_secs_f64());
    io.stats.variants = opts
        .variants
        .iter()
        .map(|c| frame::variants_text(std::slice::from_ref(c)))
        .collect();
    if let (true, Some(r)) = (opts.handshake_rtt, handshake_rtt) {
        core.on_handshake_rtt(crate::now(), r);
    }
    let s = opts.profile.sender.segment_size as usize;
    // The core's unit is bytes/s.
    let rate_limit = opts.rate_limit_bps.map(|b| b / 8.0);
    let generated: Vec<u8> = (0..s).map(|i| (i % 251) as u8).collect();
    let start = crate::now();
    let end = opts.duration.map(|d| start + d);
    let mut pending: VecDeque<Vec<u8>> = VecDeque::new();
    let mut next_admit = start;
    let mut infinite = false;
    let mut next_publish = start;
    let mut finished_sending = false;
    let mut log = opts.feedback_log.take();
    let fds = [io.sock.as_raw_fd(), shared.wake.fd()];
    let spin = opts.spin;
    let mut ebuf = vec![0u8; 2048];
    let mut smooth = Smoothness::default();
    // The socket refused a packet (EAGAIN): send nothing until it is writable again.
    let mut blocked = false;
    // A local queue dropped a packet (ENOBUFS): send nothing before this time.
    let mut local_until: Option<Time> = None;
    // The send buffer last requested (0: not set since the handshake).
    let mut sndbuf = 0usize;

    while !finished_sending {
        let now = crate::now();
        // 1. Feedback.
        for _ in 0..256 {
            match read_one(&mut io, now)? {
                None => break,
                Some(Input::Feedback(fb)) => {
                    let now = crate::now();
                    // A feedback must echo a time we sent at and a sequence number we used;
                    // anything else is forged or corrupt.
                    if fb.timestamp_echo < start
                        || fb.timestamp_echo > now
                        || fb.highest_seq >= core.status().packets_sent
                    {
                        io.stats.drops.unexpected += 1;
                        continue;
                    }
                    core.on_feedback(now, &fb);
                    if fb.hops.is_some() {
                        io.stats.hops = fb.hops;
                    }
                    status_into(&mut io.stats, &core, start, now);
                    if let Some(w) = log.as_mut() {
                        let line = LogLine {
                            t_s: (now - start).as_secs_f64(),
                            stats: &io.stats,
                        };
                        if let Ok(j) = serde_json::to_string(&line) {
                            let _ = writeln!(w, "{j}");
                        }
                    }
                }
                Some(_) => {}
            }
        }
        // ICMP errors for our data: time exceeded feeds the core's TTL policy (E5).
        while let Ok(Some(e)) = sys::recv_error(&io.sock, &mut ebuf) {
            if e.icmp_type == 11 {
                io.stats.icmp_time_exceeded += 1;
                let n = e.len.min(ebuf.len());
                if let Ok(f) = frame::parse(&ebuf[..n]) {
                    let body_end = (frame::HEADER_LEN + wire::DATA_HEADER_LEN).min(n);
                    if f.kind == Kind::Data && f.session == io.session {
                        if let Ok((h, _)) = wire::decode_data(&ebuf[frame::HEADER_LEN..body_end]) {
                            core.on_ttl_exceeded(now, h.initial_ttl);
                        }
                    }
                }
            } else {
                io.stats.icmp_other += 1;
            }
        }
        let now = crate::now();
        // 2. Application data becomes ready.
        let stopping = shared.stop.load(Ordering::SeqCst) || end.is_some_and(|e| now >= e);
        let mut app_closed = false;
        if !stopping {
            match opts.source {
                Source::Generated => match rate_limit {
                    None => {
                        if !infinite {
                            core.set_infinite_backlog(now);
                            infinite = true;
                        }
                    }
                    Some(r) => {
                        let mut n = 0;
                        while next_admit <= now && n < 1024 {
                            n += 1;
                            next_admit += Duration::from_secs_f64(s as f64 / r);
                        }
                        // After a stall, do not let a backlog of admissions build up.
                        next_admit = next_admit.max(now - Duration::from_millis(100));
                        core.push_packets(now, n);
                        io.stats.generated_packets += n;
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
                            pending.push_back(m);
                            n += 1;
                        }
                    }
                    app_closed = q.closed && q.msgs.is_empty();
                    io.stats.queued = q.msgs.len();
                    drop(q);
                    if n > 0 {
                        shared.room.notify_all();
                        core.push_packets(now, n);
                        io.stats.generated_packets += n;
                    }
                }
            }
        }
        // 3. Timers (the nofeedback timer; its optional floor is the core's `nofeedback_min`).
        if core.poll_timeout().is_some_and(|t| t <= now) {
            core.on_timeout(now);
        }
        publish_rate(shared, core.rate() * 8.0, false);
        if let Some(b) = opts.host_queue.send_buffer(core.rate(), s) {
            // Resize only on a change of more than a quarter (one system call).
            if b * 4 < sndbuf * 3 || b * 4 > sndbuf * 5 {
                sys::set_send_buffer(&io.sock, b);
                sndbuf = b;
            }
        }
        // 4. Transmit whatever the core allows now.
        if local_until.is_some_and(|t| now >= t) {
            local_until = None;
        }
        if !stopping && local_until.is_none() {
            while !blocked {
                let Some(h) = core.poll_transmit(now) else {
                    break;
                };
                let payload = match opts.source {
                    Source::Generated => None,
                    Source::Messages => pending.pop_front(),
                };
                let body = payload.as_deref().unwrap_or(&generated);
                let hdr = wire::encode_data(&h);
                if !io.build(Kind::Data, &hdr, body) {
                    continue;
                }
                let d = std::mem::take(&mut io.out);
                let sent = sys::send_to(&io.sock, &d, &io.to, Some(h.initial_ttl));
                io.out = d;
                let fail = sent.as_ref().err().map(sys::send_fail);
                match fail {
                    Some(f @ (sys::SendFail::Blocked | sys::SendFail::LocalDrop)) => {
                        // The packet never left: give it back to the core (same sequence
                        // number next time), keep its payload, and wait for the socket
                        // (docs/real-network.md, "Local congestion").
                        core.on_send_refused(now, &h);
                        if let Some(m) = payload {
                            pending.push_front(m);
                        }
                        if f == sys::SendFail::LocalDrop {
                            io.stats.local_drops += 1;
                            core.on_local_congestion(now);
                            // A full qdisc does not make the socket unwritable, and nothing
                            // signals room in it: try again one packet interval at the
                            // (reduced) rate later, within [50 µs, 10 ms].
                            let gap = (s as f64 / core.rate()).clamp(50e-6, 10e-3);
                            local_until = Some(now + Duration::from_secs_f64(gap));
                            break;
                        }
                        io.stats.send_blocked += 1;
                        blocked = true;
                    }
                    _ => {
                        if fail.is_some() {
                            io.stats.send_errors += 1;
                        }
                        io.stats.payload_bytes_sent += body.len() as u64;
                        smooth.on_send(now - start);
                        if infinite {
                            io.stats.generated_packets += 1;
                        }
                    }
                }
            }
        }
        if stopping || (opts.source == Source::Messages && app_closed && pending.is_empty()) {
            finished_sending = true;
        }
        // 5. Publish.
        let now = crate::now();
        if now >= next_publish || finished_sending {
            status_into(&mut io.stats, &core, start, now);
            if let Ok(mut g) = shared.stats.lock() {
                *g = io.stats.clone();
            }
            next_publish = now + Duration::from_millis(20);
        }
        if finished_sending {
            break;
        }
        // 6. Sleep until the next send time, timer or input.
        let mut wake = now + Duration::from_millis(20);
        if let Some(t) = core.poll_timeout() {
            // Blocked, the next packet is due already; only the nofeedback timer counts (and,
            // after a local drop, the time to try again).
            let t = if blocked || local_until.is_some() {
                let nfb = core.status().nofeedback_at.unwrap_or(t);
                local_until.map_or(nfb, |l| l.min(nfb))
            } else {
                t
            };
            wake = wake.min(t.max(now));
        }
        if rate_limit.is_some() {
            wake = wake.min(next_admit.max(now));
        }
        if let Some(e) = end {
            wake = wake.min(e);
        }
        let r = crate::wait_until_rw(wake, &fds, blocked, spin)?;
        if r.second {
            shared.wake.drain();
        }
        if r.writable {
            blocked = false;
        }
    }

    // Close: FIN until FIN_ACK.
    core.stop();
    let sent = io.stats.packets_sent;
    let mut report = None;
    let fin_start = crate::now();
    let fin_end = fin_start + opts.fin_timeout;
    let rtt = io.stats.rtt_s.unwrap_or(0.05);
    let retry = Duration::from_secs_f64((2.0 * rtt).clamp(0.02, 0.25));
    let mut next = fin_start;
    while report.is_none() {
        let now = crate::now();
        if now >= fin_end {
            break;
        }
        if now >= next {
            if io.build(Kind::Fin, &sent.to_be_bytes(), &[]) {
                let d = std::mem::take(&mut io.out);
                io.send_raw(&d, None);
                io.out = d;
            }
            next = now + retry;
        }
        while let Some(i) = read_one(&mut io, now)? {
            if let Input::FinAck(r) = i {
                report = Some(r);
                break;
            }
        }
        if report.is_none() {
            crate::wait_until(next.min(fin_end), &fds, Duration::ZERO)?;
            shared.wake.drain();
        }
    }
    if let Some(w) = log.as_mut() {
        let _ = w.flush();
    }
    let now = crate::now();
    status_into(&mut io.stats, &core, start, now);
    if let Ok(mut g) = shared.stats.lock() {
        *g = io.stats.clone();
    }
    if let Ok(q) = shared.queue.lock() {
        // Messages still queued were generated but never sent.
        io.stats.generated_packets += q.msgs.len() as u64;
    }
    io.stats.smoothness_cov = smooth.cov();
    let flow = report.as_ref().map(|r: &ReceiverReport| {
        r.flow_summary(
            "tfrc",
            sent,
            io.stats.generated_packets,
            io.stats.smoothness_cov,
        )
    });
    Ok(SenderReport {
        sender: io.stats,
        receiver: report,
        flow,
    })
}
