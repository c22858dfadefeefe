//! The receiving end: [`ReceiverEngine`] is the whole input path without a socket (datagram →
//! framing → address validation → session lookup → AEAD open → `tfrc::wire` decode →
//! sequence window and duplicate filter → core), and [`Receiver`] runs it on a thread over a
//! UDP socket.
//!
//! One receiver serves many independent sessions, in a bounded table (limits overall and per
//! sender IP address; idle sessions are evicted). Before it keeps any state for a sender, or
//! answers with more bytes than it received, the sender proves that it receives at its source
//! address: its first HELLO is answered with a stateless RETRY token (as QUIC's Retry, RFC 9000
//! §8.1.2) that the next HELLO must echo; a token opens at most one handshake, within budgets
//! per address and overall ([`crate::admission`]), and the handshake is verified before any
//! session state is built. Each session's data is held apart ([`crate::inbox`]), bounded in
//! bytes. `docs/security.md` has the threat model.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rand::rngs::OsRng;
use tfrc::wire;
use tfrc::{Arrival, Profile, Time};
use tfrc_protect::{
    Channel, KeyExchange, Opener, ReplayWindow, RetryTokens, Sealer, StaticKeypair,
};

use crate::admission::{Budgets, HandshakeBudget, UsedTokens};
use crate::capture::{Capture, Tap};
use crate::frame::{self, Hello, Kind, Mode};
pub use crate::inbox::Delivered;
use crate::inbox::{Inbox, SharedInbox};
use crate::stats::{DelayStats, Drops, ReceiverReport, IP_UDP_OVERHEAD};
use crate::sys;

/// How a receiver is set up.
#[derive(Clone, Debug)]
pub struct ReceiverOptions {
    /// Refuse sessions that do not ask for protection (plain mode). On by default: every
    /// session is encrypted and integrity-protected unless this is turned off.
    pub require_protection: bool,
    /// Refuse unauthenticated Noise sessions (pattern NN): only senders that pinned this
    /// receiver's key (IK) are served. Implied by `allowed_senders`.
    pub require_authentication: bool,
    /// The receiver's static Noise key: with it, Noise sessions are accepted (senders pin its
    /// public half). Without it, Noise HELLOs are refused.
    pub noise_key: Option<StaticKeypair>,
    /// Noise: accept only senders whose static public key is listed (none: any sender).
    pub allowed_senders: Option<Vec<[u8; 32]>>,
    /// Accept seed 000's unauthenticated RSA-OAEP exchange (E6); the RSA key is generated when
    /// the engine is built, never on a sender's request.
    pub rsa_unauthenticated: bool,
    /// RSA modulus bits of that key (at least 2048).
    pub rsa_bits: usize,
    /// Bytes of delivered messages held for the application per session (payload and 64 bytes
    /// a message). A data packet that does not fit is dropped before the TFRC core sees it
    /// and counted (`app_overflow`): to the sender it is a loss, so it slows down (the
    /// receiving host is the bottleneck), and memory stays bounded when the application is
    /// slow.
    pub buffer_per_session: usize,
    /// The same bound over all sessions together.
    pub buffer_total: usize,
    /// Handshakes run per sender address and overall ([`HandshakeBudget`]).
    pub handshake_budget: HandshakeBudget,
    /// How long to keep answering FIN retransmissions after the first FIN.
    pub linger: Duration,
    /// A session ends when none of its datagrams arrives for this long (none: data sessions
    /// never idle out; sessions still in the handshake always end after [`HANDSHAKE_IDLE`]).
    pub idle_timeout: Option<Duration>,
    /// Socket send and receive buffer size in bytes.
    pub socket_buffer: usize,
    /// Most sessions at once.
    pub max_sessions: usize,
    /// Most sessions at once from one sender IP address.
    pub max_sessions_per_address: usize,
    /// [`Receiver`]: stop after this many sessions that carried data have ended, by FIN or
    /// idle timeout (an evicted session does not count), whoever sent them; with
    /// `allowed_senders`, only listed senders can open one. None: serve until
    /// [`Receiver::shutdown`].
    pub sessions: Option<u64>,
    /// Agree to ECN when a sender asks for it: the receiver reads each datagram's ECN field
    /// and counts a Congestion Experienced mark as a loss event (RFC 5348 §5.1). On by default;
    /// [`Receiver::bind`] turns it off when the socket cannot report the field.
    pub ecn: bool,
    /// [`Receiver`]: give every datagram received and sent to this sink
    /// ([`crate::capture`]); none: no capture, at the cost of one branch per socket call.
    pub capture: Option<Capture>,
}

impl Default for ReceiverOptions {
    fn default() -> Self {
        ReceiverOptions {
            require_protection: true,
            require_authentication: false,
            noise_key: None,
            allowed_senders: None,
            rsa_unauthenticated: false,
            rsa_bits: tfrc_protect::DEFAULT_MODULUS_BITS,
            buffer_per_session: 8 << 20,
            buffer_total: 64 << 20,
            handshake_budget: HandshakeBudget::default(),
            linger: Duration::from_millis(500),
            idle_timeout: Some(Duration::from_secs(10)),
            socket_buffer: 4 << 20,
            max_sessions: 64,
            max_sessions_per_address: 4,
            sessions: Some(1),
            ecn: true,
            capture: None,
        }
    }
}

/// Smallest RSA modulus the transport accepts: 1024-bit keys are within reach of factoring.
pub const MIN_RSA_BITS: usize = 2048;

/// A retry token is valid this long after it was minted.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(10);

/// A session that has not delivered a data packet ends after this long without a datagram.
pub const HANDSHAKE_IDLE: Duration = Duration::from_secs(10);

/// A retransmitted HELLO is answered with the stored HELLO_ACK at most this often per session.
const MAX_ACK_RESENDS: u32 = 8;

/// A new session cannot be evicted for this long, so that it has time to show its rate.
pub const NEW_SESSION_GRACE: Duration = Duration::from_secs(1);

/// The window over which a session's usefulness (bytes of data received) is measured for
/// eviction: the current and the previous bin of this length.
const USEFUL_BIN: Duration = Duration::from_secs(2);

/// Reports of ended sessions kept for [`ReceiverEngine::reports`].
const MAX_FINISHED: usize = 1024;

// One per session, so the size of the keyed variant does not matter.
#[allow(clippy::large_enum_variant)]
enum Protection {
    Off,
    /// RSA mode: HELLO_ACK sent with the public key; waiting for KEY.
    AwaitingKey,
    Keyed {
        /// RSA mode: the KEY that was accepted (a retransmission is answered again).
        wrapped: Vec<u8>,
        data: Opener,
        feedback: Sealer,
    },
}

/// Packets received per interval of one RTT, for the plain-mode sequence window.
#[derive(Default)]
struct RateMeter {
    bin_start: Time,
    count: u64,
    prev: u64,
}

impl RateMeter {
    fn on_packet(&mut self, now: Time, rtt: Duration) {
        let len = rtt.max(Duration::from_millis(1));
        if now >= self.bin_start + len {
            self.prev = if now >= self.bin_start + len + len {
                0
            } else {
                self.count
            };
            self.count = 0;
            self.bin_start = now;
        }
        self.count += 1;
    }

    fn per_rtt(&self) -> u64 {
        self.prev.max(self.count)
    }
}

/// Bytes of data a session delivered recently: its usefulness when the table is full.
#[derive(Default)]
struct Useful {
    bin_start: Time,
    cur: u64,
    prev: u64,
}

impl Useful {
    fn roll(&mut self, now: Time) {
        if now >= self.bin_start + USEFUL_BIN {
            self.prev = if now >= self.bin_start + USEFUL_BIN + USEFUL_BIN {
                0
            } else {
                self.cur
            };
            self.cur = 0;
            self.bin_start = now;
        }
    }

    fn add(&mut self, now: Time, bytes: u64) {
        self.roll(now);
        self.cur = self.cur.saturating_add(bytes);
    }

    /// Bytes over the last one to two bins.
    fn score(&self, now: Time) -> u64 {
        if now >= self.bin_start + USEFUL_BIN + USEFUL_BIN {
            0
        } else if now >= self.bin_start + USEFUL_BIN {
            self.cur
        } else {
            self.cur.saturating_add(self.prev)
        }
    }
}

struct Session {
    id: u64,
    created: Time,
    useful: Useful,
    peer: SocketAddr,
    hello: Hello,
    mode: Mode,
    core: tfrc::Receiver,
    prot: Protection,
    seen: ReplayWindow,
    highest: Option<u64>,
    delay: DelayStats,
    packets: u64,
    wire_bytes: u64,
    payload_bytes: u64,
    first: Option<Time>,
    last: Time,
    last_heard: Time,
    reordered: u64,
    hops: Option<u8>,
    sender_packets: Option<u64>,
    fin_at: Option<Time>,
    hello_ack: Vec<u8>,
    ack_resends: u32,
    rtt: Duration,
    meter: RateMeter,
    sender_key: Option<[u8; 32]>,
    feedbacks: u64,
    app_overflow: u64,
    /// IP bytes of data accepted since the last feedback, and when that feedback went.
    since_feedback: u64,
    last_feedback: Option<Time>,
    /// Feedbacks whose X_recv of 0 was replaced (see `flush_feedback`).
    x_recv_fixed: u64,
    /// When a packet was last marked because the application's buffer was full.
    overflow_mark: Option<Time>,
    /// Data packets that arrived marked CE by the network (an ECN session).
    ce_marks: u64,
}

impl Session {
    /// A session agreed at `now` with nothing received yet. Delays are one-way only when both
    /// ends read one clock (`same_clock`).
    #[allow(clippy::too_many_arguments)]
    fn new(
        now: Time,
        id: u64,
        peer: SocketAddr,
        hello: Hello,
        core: tfrc::Receiver,
        prot: Protection,
        same_clock: bool,
    ) -> Session {
        let mode = hello.mode;
        Session {
            id,
            created: now,
            useful: Useful {
                bin_start: now,
                ..Useful::default()
            },
            peer,
            hello,
            mode,
            core,
            prot,
            seen: ReplayWindow::new(),
            highest: None,
            delay: DelayStats::new(same_clock),
            packets: 0,
            wire_bytes: 0,
            payload_bytes: 0,
            first: None,
            last: now,
            last_heard: now,
            reordered: 0,
            hops: None,
            sender_packets: None,
            fin_at: None,
            hello_ack: Vec::new(),
            ack_resends: 0,
            rtt: Duration::ZERO,
            meter: RateMeter::default(),
            sender_key: None,
            feedbacks: 0,
            app_overflow: 0,
            since_feedback: 0,
            last_feedback: None,
            x_recv_fixed: 0,
            overflow_mark: None,
            ce_marks: 0,
        }
    }

    /// Plain-mode sequence window (as DCCP's, RFC 4340 §7.5): how far ahead of the newest
    /// number a data packet may be. A sender sends at most 2·X_recv (§4.3), and after the last
    /// feedback its nofeedback timer halves that at least every 4 R (§4.4), so no more than
    /// 16 R·X_recv worth of packets can go out unseen: 16 times the packets of the busiest
    /// recent RTT, with a floor for the start of a session.
    fn seq_window(&self) -> u64 {
        self.meter
            .per_rtt()
            .saturating_mul(16)
            .clamp(MIN_SEQ_WINDOW, MAX_SEQ_JUMP)
    }

    /// When this session ends if nothing more arrives.
    fn expiry(&self, opts: &ReceiverOptions) -> Time {
        let idle = if self.packets == 0 {
            opts.idle_timeout
                .map_or(HANDSHAKE_IDLE, |i| i.min(HANDSHAKE_IDLE))
        } else {
            opts.idle_timeout
                .unwrap_or(Duration::from_secs(86_400 * 365))
        };
        let mut t = self.last_heard + idle;
        if let Some(f) = self.fin_at {
            t = t.min(f + opts.linger);
        }
        t
    }

    fn report(&self) -> ReceiverReport {
        let st = self.core.status();
        ReceiverReport {
            packets: self.packets,
            wire_bytes: self.wire_bytes,
            payload_bytes: self.payload_bytes,
            span_s: self.first.map_or(0.0, |f| (self.last - f).as_secs_f64()),
            sender_packets: self.sender_packets,
            delay: self.delay.summary(),
            reordered: self.reordered,
            feedbacks: self.feedbacks,
            app_overflow: self.app_overflow,
            ecn: self.hello.ecn,
            ce_marks: self.ce_marks,
            p: st.p,
            loss_events: st.loss_events,
            lost_packets: st.lost_packets,
            hops: self.hops,
            protected: self.mode.protected(),
            variants: self
                .hello
                .variants
                .iter()
                .map(|c| frame::variants_text(std::slice::from_ref(c)))
                .collect(),
            congestion_losses: st.congestion_losses,
            wireless_losses: st.wireless_losses,
            avg_one_way_delay_s: st.avg_one_way_delay,
            session: self.id,
            peer: Some(self.peer.to_string()),
            protection: self.mode.name().to_string(),
            sender_key: self.sender_key.map(|k| tfrc_protect::noise::hex(&k)),
            x_recv_zero_replaced: self.x_recv_fixed,
            ..ReceiverReport::default()
        }
    }
}

/// The receiver's input path without a socket: feed it datagrams with
/// [`on_datagram`](Self::on_datagram), wake it at [`poll_timeout`](Self::poll_timeout), and
/// send what [`poll_transmit`](Self::poll_transmit) returns.
pub struct ReceiverEngine {
    opts: ReceiverOptions,
    host_id: u64,
    tokens: RetryTokens,
    rsa: Option<KeyExchange>,
    sessions: BTreeMap<u64, Session>,
    finished: VecDeque<ReceiverReport>,
    ended_with_data: u64,
    drops: Drops,
    out: VecDeque<(Vec<u8>, SocketAddr)>,
    inbox: Arc<SharedInbox>,
    used_tokens: UsedTokens,
    budgets: Budgets,
    evicted: u64,
    unvalidated_in: u64,
    unvalidated_out: u64,
}

/// Largest RTT a data header may tell the core; longer ones are clamped (no path TFRC can
/// control has a 10-second RTT).
pub const MAX_HEADER_RTT: Duration = Duration::from_secs(10);

/// Largest forward jump of the data sequence number ever accepted (the window's ceiling).
pub const MAX_SEQ_JUMP: u64 = 1 << 20;

/// The sequence window's floor: what a session may jump before its rate is known.
pub const MIN_SEQ_WINDOW: u64 = 1024;

/// Datagrams queued for sending at most; beyond, the oldest replies are dropped (a flood of
/// HELLO retransmissions cannot grow the queue).
const MAX_OUT: usize = 1024;

/// The profile a HELLO asks for: the preset with the sender's segment size and its variants
/// applied (`tfrc::variants::apply`), exactly as the sender built its own.
fn session_profile(h: &Hello) -> Result<Profile, tfrc::variants::VariantError> {
    tfrc::variants::apply(
        Profile::preset(h.profile).with_segment_size(h.segment_size),
        &h.variants,
    )
}

/// The address bytes a retry token binds: IP and port.
fn addr_bytes(a: &SocketAddr) -> Vec<u8> {
    let mut b = match a.ip() {
        std::net::IpAddr::V4(v) => v.octets().to_vec(),
        std::net::IpAddr::V6(v) => v.octets().to_vec(),
    };
    b.extend_from_slice(&a.port().to_be_bytes());
    b
}

impl ReceiverEngine {
    /// An engine that has seen nothing. `host_id` identifies this host's clock
    /// ([`crate::host_id`]). With `rsa_unauthenticated` the RSA key is generated now (a 2048-bit
    /// key takes up to a second or so).
    pub fn new(opts: ReceiverOptions, host_id: u64) -> io::Result<ReceiverEngine> {
        let rsa = if opts.rsa_unauthenticated {
            if opts.rsa_bits < MIN_RSA_BITS {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "RSA modulus of {} bits is too small: at least {MIN_RSA_BITS}",
                        opts.rsa_bits
                    ),
                ));
            }
            Some(
                KeyExchange::generate(opts.rsa_bits, &mut OsRng)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?,
            )
        } else {
            None
        };
        let inbox = Inbox::new(opts.buffer_per_session, opts.buffer_total);
        let budgets = Budgets::new(opts.handshake_budget, Time::ZERO);
        Ok(ReceiverEngine {
            opts,
            host_id,
            tokens: RetryTokens::new(&mut OsRng),
            rsa,
            sessions: BTreeMap::new(),
            finished: VecDeque::new(),
            ended_with_data: 0,
            drops: Drops::default(),
            out: VecDeque::new(),
            inbox: Arc::new(SharedInbox::new(inbox)),
            used_tokens: UsedTokens::default(),
            budgets,
            evicted: 0,
            unvalidated_in: 0,
            unvalidated_out: 0,
        })
    }

    /// Use an existing RSA key for RSA-mode sessions (tests, or a long-lived key); enables the
    /// mode.
    pub fn with_key(mut self, key: KeyExchange) -> ReceiverEngine {
        self.rsa = Some(key);
        self.opts.rsa_unauthenticated = true;
        self
    }

    /// Accept a protected session whose keys were agreed by other means (the fuzz target uses
    /// it to reach the sealed data path without a handshake): `key` seals data, and a key
    /// derived from it by the Noise split is not needed. `peer` is the only address accepted.
    pub fn with_keyed_session(
        mut self,
        now: Time,
        id: u64,
        peer: SocketAddr,
        mut hello: Hello,
        key: &tfrc_protect::SessionKey,
    ) -> ReceiverEngine {
        hello.mode = Mode::Noise;
        let core = session_profile(&hello)
            .ok()
            .and_then(|p| tfrc::Receiver::new(p.receiver).ok());
        if let Some(core) = core {
            let prot = Protection::Keyed {
                wrapped: Vec::new(),
                data: Opener::new(key, Channel::Data),
                feedback: Sealer::new(key, Channel::Feedback),
            };
            let same = hello.clock_tag == tfrc_protect::clock_tag(&self.host_id.to_be_bytes(), id);
            self.sessions
                .insert(id, Session::new(now, id, peer, hello, core, prot, same));
        }
        self
    }

    /// A retry token for `from` and `session`, as a RETRY would carry it at `now` (tests and the
    /// fuzz target use it to open sessions without the round trip).
    pub fn retry_token(&self, now: Time, from: SocketAddr, session: u64) -> Vec<u8> {
        self.tokens
            .mint(now.as_nanos(), &addr_bytes(&from), session)
            .to_vec()
    }

    /// Process one datagram of `len` bytes (`truncated`: it was longer than the buffer) from
    /// `from`, which arrived at `now` with IP TTL `ttl` and no ECN mark.
    pub fn on_datagram(
        &mut self,
        now: Time,
        dgram: &[u8],
        from: SocketAddr,
        ttl: Option<u8>,
        truncated: bool,
    ) {
        self.on_datagram_ecn(now, dgram, from, ttl, truncated, false);
    }

    /// [`on_datagram`](Self::on_datagram) for a datagram that arrived marked Congestion
    /// Experienced (`ce`; RFC 3168). The mark counts only in a session that agreed to ECN:
    /// a packet sent not ECN-capable cannot be marked by a router that follows RFC 3168.
    pub fn on_datagram_ecn(
        &mut self,
        now: Time,
        dgram: &[u8],
        from: SocketAddr,
        ttl: Option<u8>,
        truncated: bool,
        ce: bool,
    ) {
        if truncated {
            self.drops.truncated += 1;
            return;
        }
        let f = match frame::parse(dgram) {
            Ok(f) => f,
            Err(e) => {
                self.drops.count_frame(e);
                return;
            }
        };
        if f.kind == Kind::Hello {
            self.on_hello(now, f.session, dgram, from);
            self.flush_feedback(now);
            return;
        }
        let Some(s) = self.sessions.get(&f.session) else {
            // Anything but a HELLO outside a session.
            self.drops.unexpected += 1;
            return;
        };
        if from != s.peer {
            self.drops.spoofed += 1;
            return;
        }
        match f.kind {
            Kind::Key => self.on_key(now, f.session, f.body),
            Kind::Data => self.on_data(now, f.session, dgram, ttl, ce),
            Kind::Fin => self.on_fin(now, f.session, dgram),
            Kind::Hello
            | Kind::HelloAck
            | Kind::KeyAck
            | Kind::Feedback
            | Kind::FinAck
            | Kind::Retry => {
                self.drops.unexpected += 1;
            }
        }
        self.flush_feedback(now);
    }

    /// Send a reply to an address not yet validated, if it is no larger than what that address
    /// sent (no amplification before validation).
    fn push_unvalidated(&mut self, d: Vec<u8>, to: SocketAddr, received: usize) {
        self.unvalidated_in = self.unvalidated_in.saturating_add(received as u64);
        if d.len() > received {
            return;
        }
        self.unvalidated_out = self.unvalidated_out.saturating_add(d.len() as u64);
        self.push_out(d, to);
    }

    fn on_hello(&mut self, now: Time, id: u64, dgram: &[u8], from: SocketAddr) {
        // The first flight is padded (QUIC's 1200 bytes): a shorter HELLO gets nothing, so no
        // answer before validation is more than 3% of what was received.
        if dgram.len() < frame::MIN_HELLO_DATAGRAM {
            self.drops.unpadded += 1;
            self.unvalidated_in = self.unvalidated_in.saturating_add(dgram.len() as u64);
            return;
        }
        let hello = match frame::decode_hello(&dgram[frame::HEADER_LEN..]) {
            Ok(h) => h,
            Err(e) => {
                self.drops.count_frame(e);
                self.unvalidated_in = self.unvalidated_in.saturating_add(dgram.len() as u64);
                return;
            }
        };
        if hello.token.is_empty() {
            // Stateless: the token is all the receiver remembers, and it travels with the
            // sender. Answered only when no larger than the HELLO.
            let mut d = frame::header(Kind::Retry, id).to_vec();
            d.extend_from_slice(&self.retry_token(now, from, id));
            self.push_unvalidated(d, from, dgram.len());
            return;
        }
        if !self.tokens.check(
            now.as_nanos(),
            TOKEN_LIFETIME.as_nanos() as u64,
            &hello.token,
            &addr_bytes(&from),
            id,
        ) {
            self.drops.bad_token += 1;
            self.unvalidated_in = self.unvalidated_in.saturating_add(dgram.len() as u64);
            return;
        }
        // The address is validated from here on.
        if let Some(s) = self.sessions.get_mut(&id) {
            // A retransmission (the HELLO_ACK was lost): the stored answer, a bounded number of
            // times; a HELLO for another's session id is refused.
            if s.peer != from || s.ack_resends >= MAX_ACK_RESENDS || s.hello_ack.is_empty() {
                self.drops.spoofed += 1;
                return;
            }
            s.ack_resends += 1;
            s.last_heard = now;
            let d = s.hello_ack.clone();
            self.push_out(d, from);
            return;
        }
        // Everything cheap first, then the handshake, then the session's state: a HELLO that
        // fails costs at most one handshake, and only when its token is fresh and the budgets
        // allow it.
        if self.used_tokens.is_used(now, TOKEN_LIFETIME, &hello.token) {
            self.drops.token_reused += 1;
            return;
        }
        let refuse = |e: &mut ReceiverEngine| {
            e.drops.refused += 1;
            let mut d = frame::header(Kind::HelloAck, id).to_vec();
            d.extend_from_slice(&frame::encode_hello_refused());
            e.push_out(d, from);
        };
        let offered = match hello.mode {
            Mode::Plain => !self.opts.require_protection,
            Mode::Noise => self.opts.noise_key.is_some(),
            Mode::NoiseUnauthenticated => {
                !self.opts.require_authentication && self.opts.allowed_senders.is_none()
            }
            Mode::RsaUnauthenticated => self.rsa.is_some(),
        };
        if !offered {
            refuse(self);
            return;
        }
        let Ok(profile) = session_profile(&hello) else {
            // A variant this receiver does not know, or a combination it cannot run: say so,
            // so that the sender stops instead of timing out.
            refuse(self);
            return;
        };
        if self.eviction_victim(now, from).is_err() {
            self.drops.table_full += 1;
            return;
        }
        if !self.budgets.take(now, from.ip()) {
            self.drops.over_budget += 1;
            return;
        }
        self.used_tokens.mark(now, &hello.token);
        let same_clock =
            hello.clock_tag == tfrc_protect::clock_tag(&self.host_id.to_be_bytes(), id);
        let mut sender_key = None;
        let keyed = |k: tfrc_protect::SessionKeys| Protection::Keyed {
            wrapped: Vec::new(),
            data: Opener::new(&k.to_responder, Channel::Data),
            feedback: Sealer::new(&k.to_initiator, Channel::Feedback),
        };
        let (prot, payload) = match hello.mode {
            Mode::Plain => (Protection::Off, Vec::new()),
            Mode::RsaUnauthenticated => {
                let der = match self
                    .rsa
                    .as_ref()
                    .map(|k| tfrc_protect::encode_public_key(&k.public_key()))
                {
                    Some(Ok(d)) => d,
                    _ => return,
                };
                (Protection::AwaitingKey, der)
            }
            Mode::Noise | Mode::NoiseUnauthenticated => {
                let Ok(prologue) = frame::hello_prologue(dgram) else {
                    self.drops.malformed += 1;
                    return;
                };
                let r = if hello.mode == Mode::NoiseUnauthenticated {
                    tfrc_protect::noise::respond_unauthenticated(&prologue, &hello.noise)
                } else {
                    let Some(key) = self.opts.noise_key.as_ref() else {
                        return;
                    };
                    let allowed = self.opts.allowed_senders.as_deref();
                    tfrc_protect::noise::respond(key, &prologue, &hello.noise, |k| {
                        allowed.is_none_or(|l| l.contains(k))
                    })
                    .map(|r| {
                        sender_key = Some(r.remote_static);
                        (r.keys, r.reply)
                    })
                };
                match r {
                    Ok((keys, reply)) => (keyed(keys), reply),
                    Err(tfrc_protect::ProtectError::NotAllowed) => {
                        self.drops.not_allowed += 1;
                        return;
                    }
                    Err(_) => {
                        self.drops.handshake_failed += 1;
                        return;
                    }
                }
            }
        };
        // The handshake is verified: now the session's state.
        let Ok(core) = tfrc::Receiver::new(profile.receiver) else {
            refuse(self);
            return;
        };
        match self.eviction_victim(now, from) {
            Ok(Some(v)) => {
                self.evicted += 1;
                self.end_session_as(v, true);
            }
            Ok(None) => {}
            Err(()) => {
                self.drops.table_full += 1;
                return;
            }
        }
        let mut hello = hello;
        hello.ecn = hello.ecn && self.opts.ecn;
        let mut d = frame::header(Kind::HelloAck, id).to_vec();
        d.extend_from_slice(&frame::encode_hello_ack(
            hello.mode, same_clock, hello.ecn, &payload,
        ));
        hello.token.clear();
        hello.noise.clear();
        let mut s = Session::new(now, id, from, hello, core, prot, same_clock);
        s.sender_key = sender_key;
        s.hello_ack = d.clone();
        self.sessions.insert(id, s);
        self.push_out(d, from);
    }

    /// Whether a new session from `from` fits: `Ok(None)` with room to spare, `Ok(Some(v))`
    /// when session `v` must make room, `Err` when there is none. Within the per-address
    /// limit; when the table is full, the least useful session goes, as a server would choose:
    /// the one that delivered the fewest bytes of data over the last 2–4 s (then the one heard
    /// from least recently), among those older than [`NEW_SESSION_GRACE`]. Sessions that send a
    /// packet now and then to stay alive cannot hold the table against a sender with data.
    fn eviction_victim(&self, now: Time, from: SocketAddr) -> Result<Option<u64>, ()> {
        let per_ip = self
            .sessions
            .values()
            .filter(|s| s.peer.ip() == from.ip())
            .count();
        if per_ip >= self.opts.max_sessions_per_address.max(1) {
            return Err(());
        }
        if self.sessions.len() < self.opts.max_sessions.max(1) {
            return Ok(None);
        }
        self.sessions
            .values()
            .filter(|s| now.saturating_since(s.created) >= NEW_SESSION_GRACE)
            .min_by_key(|s| (s.useful.score(now), s.last_heard, s.id))
            .map(|s| Some(s.id))
            .ok_or(())
    }

    fn end_session(&mut self, id: u64) {
        self.end_session_as(id, false);
    }

    /// End session `id`; an evicted one does not count towards [`ReceiverOptions::sessions`].
    fn end_session_as(&mut self, id: u64, evicted: bool) {
        if let Some(s) = self.sessions.remove(&id) {
            let mut r = s.report();
            r.evicted = evicted;
            if !evicted && (r.packets > 0 || r.sender_packets.is_some()) {
                self.ended_with_data += 1;
            }
            self.inbox.lock().end(id);
            self.inbox.notify();
            if self.finished.len() >= MAX_FINISHED {
                self.finished.pop_front();
            }
            self.finished.push_back(r);
        }
    }

    fn push_out(&mut self, d: Vec<u8>, to: SocketAddr) {
        if self.out.len() >= MAX_OUT {
            self.out.pop_front();
        }
        self.out.push_back((d, to));
    }

    fn on_key(&mut self, now: Time, id: u64, wrapped: &[u8]) {
        let Some(s) = self.sessions.get_mut(&id) else {
            return;
        };
        if wrapped.is_empty() || wrapped.len() > frame::MAX_WRAPPED {
            self.drops.malformed += 1;
            return;
        }
        match &mut s.prot {
            Protection::Off => {
                self.drops.unexpected += 1;
                return;
            }
            Protection::Keyed { wrapped: w, .. } => {
                // A retransmitted KEY (our KEY_ACK was lost) is answered again; another key
                // for the same session is refused.
                if s.mode != Mode::RsaUnauthenticated || w.as_slice() != wrapped {
                    self.drops.unexpected += 1;
                    return;
                }
            }
            Protection::AwaitingKey => {
                let Some(k) = self.rsa.as_ref() else {
                    self.drops.unexpected += 1;
                    return;
                };
                match k.unwrap(wrapped, &mut OsRng) {
                    Ok(key) => {
                        s.prot = Protection::Keyed {
                            wrapped: wrapped.to_vec(),
                            data: Opener::new(&key, Channel::Data),
                            feedback: Sealer::new(&key, Channel::Feedback),
                        };
                    }
                    Err(_) => {
                        // One RSA decryption per validated HELLO: a failed KEY ends the
                        // session, so it cannot be used as a decryption oracle.
                        self.drops.tampered += 1;
                        self.sessions.remove(&id);
                        return;
                    }
                }
            }
        }
        s.last_heard = now;
        let h = frame::header(Kind::KeyAck, s.id);
        let mut d = h.to_vec();
        if let Protection::Keyed { feedback, .. } = &mut s.prot {
            if feedback.seal_into(&h, &[], &mut d).is_err() {
                return;
            }
        }
        let to = s.peer;
        self.push_out(d, to);
    }

    fn on_data(&mut self, now: Time, id: u64, dgram: &[u8], ttl: Option<u8>, ce: bool) {
        let Some(s) = self.sessions.get_mut(&id) else {
            return;
        };
        let clear_end = frame::HEADER_LEN + wire::DATA_HEADER_LEN;
        let opened;
        let (hdr, payload): (tfrc::DataHeader, &[u8]) = match &mut s.prot {
            Protection::Off => match wire::decode_data(&dgram[frame::HEADER_LEN..]) {
                Ok(v) => v,
                Err(wire::WireError::Truncated { .. }) => {
                    self.drops.truncated += 1;
                    return;
                }
                Err(_) => {
                    self.drops.malformed += 1;
                    return;
                }
            },
            Protection::AwaitingKey => {
                self.drops.unexpected += 1;
                return;
            }
            Protection::Keyed { data, .. } => {
                if dgram.len() < clear_end {
                    self.drops.truncated += 1;
                    return;
                }
                let hdr = match wire::decode_data(&dgram[frame::HEADER_LEN..clear_end]) {
                    Ok((h, _)) => h,
                    Err(_) => {
                        self.drops.malformed += 1;
                        return;
                    }
                };
                // The frame header and the TFRC header (with the initial TTL) are the
                // associated data: visible, but not alterable.
                match data.open(&dgram[..clear_end], &dgram[clear_end..]) {
                    Ok(o) => {
                        opened = o.payload;
                        (hdr, opened.as_slice())
                    }
                    Err(e) => {
                        self.drops.count_open(e);
                        return;
                    }
                }
            }
        };
        // The sequence window: a number further ahead than the sender can have sent unseen is
        // forged (plain mode) and would make every later packet stale.
        let ceiling = s
            .highest
            .map_or(MIN_SEQ_WINDOW, |h| h.saturating_add(s.seq_window()));
        if hdr.seq > ceiling {
            self.drops.out_of_range += 1;
            return;
        }
        // Duplicates carry no news for §5 and would count twice in X_recv (§6.2).
        match s.seen.check(hdr.seq) {
            Ok(()) => {}
            Err(tfrc_protect::OpenError::Replayed) => {
                self.drops.duplicate += 1;
                return;
            }
            Err(_) => {
                self.drops.stale += 1;
                return;
            }
        }
        let _ = s.seen.mark(hdr.seq);
        match s.highest {
            Some(h) if hdr.seq < h => s.reordered += 1,
            _ => s.highest = Some(hdr.seq),
        }
        let wire_len = (dgram.len() as u64).saturating_add(IP_UDP_OVERHEAD);
        // The core keeps a few R_m of arrivals for X_recv (§6.2); a forged R_m of 71 minutes
        // would make that log (and the work per feedback) as large as its cap.
        let mut hdr = hdr;
        hdr.rtt = hdr.rtt.min(MAX_HEADER_RTT);
        hdr.t_rto = hdr.t_rto.min(MAX_HEADER_RTT.saturating_mul(4));
        s.rtt = hdr.rtt;
        s.meter.on_packet(now, hdr.rtt);
        // The application's buffer is full: the payload is dropped, and the core is told the
        // packet arrived marked Congestion Experienced, as an AQM at a congested router would
        // mark it. RFC 5348 §5.1 counts a marked packet as a loss event, so the next
        // feedback's p tells the sender to slow down to what the application reads (the
        // receiving host is the bottleneck), while feedback, X_recv and the sequence window
        // carry on as for any arrival.
        // One mark per RTT is enough: §5.2 makes all the losses and marks of one RTT a single
        // loss event, and fewer marks keep the core's loss record short under a flood.
        let room = self.inbox.lock().has_room(id, payload.len());
        let overflow = !room
            && s.overflow_mark
                .is_none_or(|t| now >= t + hdr.rtt.max(Duration::from_millis(1)));
        if overflow {
            s.overflow_mark = Some(now);
        }
        // A router's mark (RFC 3168), in a session that agreed to ECN.
        let marked = ce && s.hello.ecn;
        if marked {
            s.ce_marks += 1;
        }
        let ce = overflow || marked;
        s.core.on_data_with(
            now,
            &hdr,
            Arrival {
                wire_len: u32::try_from(wire_len).unwrap_or(u32::MAX),
                ce,
                ttl,
            },
        );
        if let Some(t) = ttl {
            s.hops = Some(hdr.initial_ttl.saturating_sub(t));
        }
        s.last_heard = now;
        if !room {
            s.app_overflow += 1;
            return;
        }
        s.packets += 1;
        s.since_feedback = s.since_feedback.saturating_add(wire_len);
        s.wire_bytes = s.wire_bytes.saturating_add(wire_len);
        s.payload_bytes = s.payload_bytes.saturating_add(payload.len() as u64);
        s.first.get_or_insert(now);
        s.last = now;
        s.last_heard = now;
        s.delay
            .record(hdr.timestamp.as_secs_f64(), now.as_secs_f64());
        let delay = s
            .delay
            .summary()
            .one_way
            .then(|| now.saturating_since(hdr.timestamp));
        s.useful.add(now, payload.len() as u64);
        // Room was checked above; nothing else fills the inbox in between.
        let pushed = self.inbox.lock().push(Delivered {
            session: id,
            seq: hdr.seq,
            payload: payload.to_vec(),
            delay,
        });
        if pushed {
            self.inbox.notify();
        }
    }

    fn on_fin(&mut self, now: Time, id: u64, dgram: &[u8]) {
        let Some(s) = self.sessions.get_mut(&id) else {
            return;
        };
        let clear_end = frame::HEADER_LEN + 8;
        if dgram.len() < clear_end {
            self.drops.truncated += 1;
            return;
        }
        match &mut s.prot {
            Protection::Off => {
                if dgram.len() != clear_end {
                    self.drops.malformed += 1;
                    return;
                }
            }
            Protection::AwaitingKey => {
                self.drops.unexpected += 1;
                return;
            }
            Protection::Keyed { data, .. } => {
                if let Err(e) = data.open(&dgram[..clear_end], &dgram[clear_end..]) {
                    // The sender seals each FIN retransmission anew, so a replay is an attack.
                    self.drops.count_open(e);
                    return;
                }
            }
        }
        let mut n = [0u8; 8];
        n.copy_from_slice(&dgram[frame::HEADER_LEN..clear_end]);
        s.sender_packets = Some(u64::from_be_bytes(n));
        s.fin_at.get_or_insert(now);
        s.last_heard = now;
        self.send_fin_ack(id);
    }

    fn send_fin_ack(&mut self, id: u64) {
        let drops = self.drops;
        let Some(s) = self.sessions.get_mut(&id) else {
            return;
        };
        let mut report = s.report();
        report.drops = drops;
        let Ok(json) = serde_json::to_vec(&report) else {
            return;
        };
        let h = frame::header(Kind::FinAck, s.id);
        let mut d = h.to_vec();
        match &mut s.prot {
            Protection::Keyed { feedback, .. } => {
                if feedback.seal_into(&h, &json, &mut d).is_err() {
                    return;
                }
            }
            _ => d.extend_from_slice(&json),
        }
        let to = s.peer;
        self.push_out(d, to);
    }

    /// Turn due feedback reports into datagrams.
    ///
    /// One correction to the core's report: the core measures X_recv over the previous
    /// R_(m-1) seconds (RFC 5348 §6.2 step 2) but rearms its timer for R_m, so when the RTT in
    /// the data headers grows, or when a batch is read late (arrivals carry the kernel's
    /// older stamps), data can arrive after one report and before the window of the next, which
    /// then says X_recv = 0 although data arrived. A sender that also has p > 0
    /// then sets X = s/t_mbi (§4.3 step 4) and, with X_recv tiny ever after, stays there:
    /// through a relay on loopback it stayed at 125 b/s (issue 16). A report due because data
    /// arrived since the last one (§6.2: only then is one sent) never says 0 here: it gives the
    /// rate since the last report instead. The first report keeps §6.3's X_recv = 0.
    fn flush_feedback(&mut self, now: Time) {
        let mut out = Vec::new();
        for s in self.sessions.values_mut() {
            while let Some(mut fb) = s.core.poll_feedback(now) {
                if let Some(last) = s.last_feedback {
                    let span = now.saturating_since(last).as_secs_f64();
                    if fb.x_recv == 0.0 && s.since_feedback > 0 && span > 0.0 {
                        fb.x_recv = s.since_feedback as f64 / span;
                        s.x_recv_fixed += 1;
                    }
                }
                s.last_feedback = Some(now);
                s.since_feedback = 0;
                let h = frame::header(Kind::Feedback, s.id);
                let mut d = h.to_vec();
                d.extend_from_slice(&wire::encode_feedback(&fb));
                if let Protection::Keyed { feedback, .. } = &mut s.prot {
                    let clear = d.clone();
                    if feedback.seal_into(&clear, &[], &mut d).is_err() {
                        continue;
                    }
                }
                s.feedbacks += 1;
                out.push((d, s.peer));
            }
        }
        for (d, to) in out {
            self.push_out(d, to);
        }
    }

    /// The next instant [`on_timeout`](Self::on_timeout) must be called, if any: a core's
    /// feedback timer or a session's end.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.sessions
            .values()
            .flat_map(|s| [s.core.poll_timeout(), Some(s.expiry(&self.opts))])
            .flatten()
            .min()
    }

    /// Run the cores' feedback timers and end sessions that are over (FIN and linger, or
    /// idle).
    pub fn on_timeout(&mut self, now: Time) {
        for s in self.sessions.values_mut() {
            if s.core.poll_timeout().is_some_and(|t| t <= now) {
                s.core.on_timeout(now);
            }
        }
        self.flush_feedback(now);
        let over: Vec<u64> = self
            .sessions
            .values()
            .filter(|s| s.expiry(&self.opts) <= now)
            .map(|s| s.id)
            .collect();
        for id in over {
            self.end_session(id);
        }
    }

    /// The next datagram to send and its destination.
    pub fn poll_transmit(&mut self) -> Option<(Vec<u8>, SocketAddr)> {
        self.out.pop_front()
    }

    /// The next delivered message of any session (in arrival order).
    pub fn poll_delivered(&mut self) -> Option<Delivered> {
        self.inbox.lock().pop_any()
    }

    /// The next delivered message of `session`.
    pub fn poll_delivered_from(&mut self, session: u64) -> Option<Delivered> {
        self.inbox.lock().pop(session)
    }

    /// Messages waiting for the application.
    pub fn delivered_len(&self) -> usize {
        self.inbox.lock().len()
    }

    /// Bytes waiting for the application (payloads and per-message overhead; bounded by
    /// [`ReceiverOptions::buffer_total`]).
    pub fn delivered_bytes(&self) -> usize {
        self.inbox.lock().bytes()
    }

    /// Sessions evicted to make room for new ones.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Retry tokens remembered as used (bounded by the handshake budget times the token
    /// lifetime).
    pub fn used_tokens(&self) -> usize {
        self.used_tokens.len()
    }

    pub(crate) fn shared_inbox(&self) -> Arc<SharedInbox> {
        self.inbox.clone()
    }

    /// Drops so far (all sessions, and datagrams that belong to none).
    pub fn drops(&self) -> Drops {
        self.drops
    }

    /// At least one session is open.
    pub fn has_session(&self) -> bool {
        !self.sessions.is_empty()
    }

    /// Sessions open now.
    pub fn active_sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Sessions that carried data (or a FIN) and have ended.
    pub fn sessions_ended(&self) -> u64 {
        self.ended_with_data
    }

    /// The core receiver's state of the oldest open session.
    pub fn core_status(&self) -> Option<tfrc::ReceiverStatus> {
        self.sessions.values().next().map(|s| s.core.status())
    }

    /// Bytes received from, and sent to, addresses not yet validated.
    pub fn reflection(&self) -> (u64, u64) {
        (self.unvalidated_in, self.unvalidated_out)
    }

    /// Every session's report: ended ones first (in the order they ended), then open ones.
    /// Drops are engine-wide in each.
    pub fn reports(&self) -> Vec<ReceiverReport> {
        self.finished
            .iter()
            .cloned()
            .chain(self.sessions.values().map(Session::report))
            .map(|mut r| {
                self.stamp(&mut r);
                r
            })
            .collect()
    }

    fn stamp(&self, r: &mut ReceiverReport) {
        r.drops = self.drops;
        r.unvalidated_bytes_in = self.unvalidated_in;
        r.unvalidated_bytes_out = self.unvalidated_out;
    }

    /// One report: the first session that carried data (ended or open), else the first open
    /// one, else an empty report with the engine-wide counters.
    pub fn report(&self) -> ReceiverReport {
        let mut r = self
            .finished
            .iter()
            .find(|r| r.packets > 0 || r.sender_packets.is_some())
            .cloned()
            .or_else(|| {
                self.sessions
                    .values()
                    .find(|s| s.packets > 0)
                    .or_else(|| self.sessions.values().next())
                    .map(Session::report)
            })
            .unwrap_or_default();
        self.stamp(&mut r);
        r
    }
}

struct Shared {
    report: Mutex<ReceiverReport>,
    reports: Mutex<Vec<ReceiverReport>>,
    stop: AtomicBool,
    wake: sys::EventFd,
}

/// A receiver running on its own thread. Each session's messages are held apart: read them
/// in arrival order across sessions ([`recv`](Self::recv)), or one session at a time
/// ([`accept`](Self::accept), then [`recv_from`](Self::recv_from)).
pub struct Receiver {
    local: SocketAddr,
    inbox: Arc<SharedInbox>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<io::Result<ReceiverReport>>>,
}

impl Receiver {
    /// Bind `addr` and start serving sessions (until `opts.sessions` have ended, or
    /// [`shutdown`](Self::shutdown)).
    pub fn bind(addr: SocketAddr, opts: ReceiverOptions) -> io::Result<Receiver> {
        let sock = UdpSocket::bind(addr)?;
        sock.set_nonblocking(true)?;
        sys::set_buffers(&sock, opts.socket_buffer);
        sys::enable_recv_ttl(&sock)?;
        let mut opts = opts;
        opts.ecn = opts.ecn && sys::enable_recv_ecn(&sock).is_ok();
        // Without kernel timestamps the arrival time is the read time (less accurate under
        // load), so a failure here is not fatal.
        let _ = sys::enable_rx_timestamps(&sock);
        let local = sock.local_addr()?;
        let tap = Tap::new(opts.capture.take(), &sock);
        let engine = ReceiverEngine::new(opts.clone(), crate::host_id())?;
        let inbox = engine.shared_inbox();
        let shared = Arc::new(Shared {
            report: Mutex::new(ReceiverReport::default()),
            reports: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            wake: sys::EventFd::new()?,
        });
        let sh = shared.clone();
        let ib = inbox.clone();
        let thread = std::thread::Builder::new()
            .name("tfrc-udp-recv".into())
            .spawn(move || {
                let r = run(sock, engine, opts, &sh, tap);
                // Whatever happened, readers must not wait for more.
                ib.lock().close();
                ib.notify();
                r
            })?;
        Ok(Receiver {
            local,
            inbox,
            shared,
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The next delivered message of any session (arrival order); `None` once the receiver
    /// has stopped and all were read.
    pub fn recv(&self) -> Option<Delivered> {
        self.inbox
            .wait_for(None, Inbox::pop_any, Inbox::is_closed)
            .ok()
    }

    /// As [`recv`](Self::recv), giving up after `timeout` (`Err(true)`: the receiver has
    /// stopped and every message was read).
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Delivered, bool> {
        self.inbox
            .wait_for(Some(timeout), Inbox::pop_any, Inbox::is_closed)
    }

    /// The next session that has delivered a message and was not accepted yet (its id), in the
    /// order of their first messages; `Err(true)` once the receiver has stopped.
    pub fn accept(&self, timeout: Duration) -> Result<u64, bool> {
        self.inbox
            .wait_for(Some(timeout), Inbox::accept, Inbox::is_closed)
    }

    /// The next message of `session` alone; `Err(true)` once that session has ended (or the
    /// receiver stopped) and all its messages were read, `Err(false)` on timeout.
    pub fn recv_from(&self, session: u64, timeout: Duration) -> Result<Delivered, bool> {
        self.inbox.wait_for(
            Some(timeout),
            |i| i.pop(session),
            |i| i.is_closed() || i.is_finished(session),
        )
    }

    /// Bytes of messages waiting to be read (bounded by [`ReceiverOptions::buffer_total`]).
    pub fn buffered_bytes(&self) -> usize {
        self.inbox.lock().bytes()
    }

    /// A snapshot of what has been measured (refreshed every 100 ms and at the end).
    pub fn report(&self) -> ReceiverReport {
        self.shared
            .report
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// Stop now, whatever the sessions' state.
    pub fn shutdown(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake.notify();
    }

    /// Every session's report so far (refreshed every 100 ms and at the end).
    pub fn reports(&self) -> Vec<ReceiverReport> {
        self.shared
            .reports
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// As [`wait`](Self::wait), returning every session's report.
    pub fn wait_all(mut self) -> io::Result<Vec<ReceiverReport>> {
        self.join()?;
        Ok(self.reports())
    }

    fn join(&mut self) -> io::Result<ReceiverReport> {
        let Some(t) = self.thread.take() else {
            return Ok(self.report());
        };
        t.join()
            .map_err(|_| io::Error::other("receiver thread panicked"))?
    }

    /// Wait for the sessions to end (each by FIN and linger or idle timeout, the receiver
    /// after `opts.sessions` of them, or [`shutdown`](Self::shutdown)) and return the report of
    /// the first session that carried data. Unread messages are discarded.
    pub fn wait(mut self) -> io::Result<ReceiverReport> {
        self.join()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.shutdown();
            let _ = t.join();
        }
    }
}

fn run(
    sock: UdpSocket,
    mut engine: ReceiverEngine,
    opts: ReceiverOptions,
    shared: &Shared,
    mut tap: Option<Tap>,
) -> io::Result<ReceiverReport> {
    let mut buf = vec![0u8; crate::RECV_BUF];
    let started = crate::now();
    let mut next_publish = started;
    // The latest time given to the engine: arrival times never go back before it.
    let mut last = started;
    loop {
        // The kernel stamps arrivals on CLOCK_REALTIME; the transport runs on CLOCK_MONOTONIC.
        // Their offset, read now, converts the stamps (a packet read late after the thread was
        // descheduled keeps its real arrival time: X_recv (§6.2), the loss-time interpolation
        // (§5.2) and the one-way delays do not see the receiver's scheduling).
        let mono = sys::monotonic_ns();
        let offset = sys::realtime_ns().wrapping_sub(mono);
        // Input: everything queued, up to a batch, so timers still run under a flood.
        for _ in 0..1024 {
            match sys::recv_from(&sock, &mut buf) {
                Ok(m) => {
                    let Some(from) = m.from else { continue };
                    let n = m.len.min(buf.len());
                    if let Some(t) = &mut tap {
                        t.received(&m, &buf[..n]);
                    }
                    let read = crate::now();
                    let at = m
                        .rx_realtime_ns
                        .map(|rt| Time::from_nanos(rt.wrapping_sub(offset)))
                        .filter(|&t| t <= read && t + Duration::from_secs(1) >= read)
                        .unwrap_or(read)
                        .max(last);
                    last = at;
                    let ce = m.ecn == Some(sys::CE);
                    engine.on_datagram_ecn(at, &buf[..n], from, m.ttl, m.truncated, ce);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // ICMP errors for our feedback (the sender went away) surface here.
                Err(_) => continue,
            }
        }
        let now = crate::now().max(last);
        last = now;
        engine.on_timeout(now);
        while let Some((d, to)) = engine.poll_transmit() {
            if sys::send_to(&sock, &d, &to, None).is_ok() {
                if let Some(t) = &mut tap {
                    t.sent(to, &d, None);
                }
            }
        }
        if now >= next_publish {
            publish(&engine, shared);
            next_publish = now + Duration::from_millis(100);
        }
        // End of session.
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        if opts.sessions.is_some_and(|n| engine.sessions_ended() >= n) {
            break;
        }
        // Wait for input or the next timer; poll at least every 50 ms for the stop flag and
        // the linger and idle deadlines.
        let mut wake = now + Duration::from_millis(50);
        if let Some(t) = engine.poll_timeout() {
            wake = wake.min(t);
        }
        let r = crate::wait_until(wake, &[sock.as_raw_fd(), shared.wake.fd()], Duration::ZERO)?;
        if r.second {
            shared.wake.drain();
        }
    }
    publish(&engine, shared);
    Ok(engine.report())
}

fn publish(engine: &ReceiverEngine, shared: &Shared) {
    if let Ok(mut r) = shared.report.lock() {
        *r = engine.report();
    }
    if let Ok(mut r) = shared.reports.lock() {
        *r = engine.reports();
    }
}
