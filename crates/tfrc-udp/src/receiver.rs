//! The receiving end: [`ReceiverEngine`] is the whole input path without a socket (datagram →
//! framing → session check → AEAD open → `tfrc::wire` decode → duplicate filter → core), and
//! [`Receiver`] runs it on a thread over a UDP socket.
//!
//! One receiver serves one session: the first HELLO fixes the session id and the sender's
//! address; anything else is counted and ignored.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver as ChanRx, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rand::rngs::OsRng;
use tfrc::wire;
use tfrc::{Arrival, Profile, Time};
use tfrc_protect::{Channel, KeyExchange, Opener, ReplayWindow, Sealer};

use crate::frame::{self, Hello, Kind};
use crate::stats::{DelayStats, Drops, ReceiverReport, IP_UDP_OVERHEAD};
use crate::sys;

/// How a receiver is set up.
#[derive(Clone, Debug)]
pub struct ReceiverOptions {
    /// Refuse sessions that do not ask for protection (E6).
    pub require_protection: bool,
    /// RSA modulus bits of the receiver's key (generated at bind when protection is required,
    /// else at the first protected HELLO).
    pub rsa_bits: usize,
    /// Delivered messages buffered for the application; more are dropped and counted
    /// (`app_overflow`), so memory stays bounded when the application is slow.
    pub queue: usize,
    /// How long to keep answering FIN retransmissions after the first FIN.
    pub linger: Duration,
    /// Give up when no datagram of the session arrives for this long (none: wait forever).
    pub idle_timeout: Option<Duration>,
    /// Socket send and receive buffer size in bytes.
    pub socket_buffer: usize,
}

impl Default for ReceiverOptions {
    fn default() -> Self {
        ReceiverOptions {
            require_protection: false,
            rsa_bits: tfrc_protect::DEFAULT_MODULUS_BITS,
            queue: 4096,
            linger: Duration::from_millis(500),
            idle_timeout: Some(Duration::from_secs(10)),
            socket_buffer: 4 << 20,
        }
    }
}

/// A message delivered to the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The TFRC sequence number it travelled with (gaps are losses; arrival order is kept).
    pub seq: u64,
    /// The payload.
    pub payload: Vec<u8>,
    /// One-way delay, when sender and receiver share a clock.
    pub delay: Option<Duration>,
}

// One per session, so the size of the keyed variant does not matter.
#[allow(clippy::large_enum_variant)]
enum Protection {
    Off,
    /// HELLO_ACK sent with the public key; waiting for KEY.
    AwaitingKey,
    Keyed {
        wrapped: Vec<u8>,
        data: Opener,
        feedback: Sealer,
    },
}

struct Session {
    id: u64,
    peer: SocketAddr,
    hello: Hello,
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
}

impl Session {
    /// A session agreed at `now` with nothing received yet. Delays are one-way only when the
    /// sender runs on this host (`host_id`), where both ends read one clock.
    fn new(
        now: Time,
        id: u64,
        peer: SocketAddr,
        hello: Hello,
        core: tfrc::Receiver,
        prot: Protection,
        host_id: u64,
    ) -> Session {
        let delay = DelayStats::new(hello.host_id == host_id);
        Session {
            id,
            peer,
            hello,
            core,
            prot,
            seen: ReplayWindow::new(),
            highest: None,
            delay,
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
        }
    }
}

/// The receiver's input path without a socket: feed it datagrams with
/// [`on_datagram`](Self::on_datagram), wake it at [`poll_timeout`](Self::poll_timeout), and
/// send what [`poll_transmit`](Self::poll_transmit) returns.
pub struct ReceiverEngine {
    opts: ReceiverOptions,
    host_id: u64,
    key: Option<KeyExchange>,
    session: Option<Session>,
    drops: Drops,
    out: VecDeque<(Vec<u8>, SocketAddr)>,
    delivered: VecDeque<Delivered>,
    app_overflow: u64,
    feedbacks: u64,
}

/// Largest RTT a data header may tell the core; longer ones are clamped (no path TFRC can
/// control has a 10-second RTT).
pub const MAX_HEADER_RTT: Duration = Duration::from_secs(10);

/// Largest forward jump of the data sequence number that is accepted.
pub const MAX_SEQ_JUMP: u64 = 1 << 20;

/// Datagrams queued for sending at most; beyond, the oldest replies are dropped (a flood of
/// HELLO retransmissions cannot grow the queue).
const MAX_OUT: usize = 256;

/// The profile a HELLO asks for: the preset with the sender's segment size and its variants
/// applied (`tfrc::variants::apply`), exactly as the sender built its own.
fn session_profile(h: &Hello) -> Result<Profile, tfrc::variants::VariantError> {
    tfrc::variants::apply(
        Profile::preset(h.profile).with_segment_size(h.segment_size),
        &h.variants,
    )
}

impl ReceiverEngine {
    /// An engine that has seen nothing. With `require_protection` the RSA key is generated
    /// now (a 2048-bit key takes up to a second or so).
    pub fn new(opts: ReceiverOptions, host_id: u64) -> io::Result<ReceiverEngine> {
        let key = if opts.require_protection {
            Some(
                KeyExchange::generate(opts.rsa_bits, &mut OsRng)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?,
            )
        } else {
            None
        };
        Ok(ReceiverEngine {
            opts,
            host_id,
            key,
            session: None,
            drops: Drops::default(),
            out: VecDeque::new(),
            delivered: VecDeque::new(),
            app_overflow: 0,
            feedbacks: 0,
        })
    }

    /// Use an existing RSA key for protected sessions (tests, or a long-lived key).
    pub fn with_key(mut self, key: KeyExchange) -> ReceiverEngine {
        self.key = Some(key);
        self
    }

    /// Accept a protected session whose key was agreed by other means (a pre-shared key; the
    /// fuzz target uses it to reach the sealed data path without an RSA exchange). The HELLO
    /// and KEY steps are skipped; `peer` is the only address accepted.
    pub fn with_keyed_session(
        mut self,
        now: Time,
        id: u64,
        peer: SocketAddr,
        mut hello: Hello,
        key: &tfrc_protect::SessionKey,
    ) -> ReceiverEngine {
        hello.protected = true;
        let core = session_profile(&hello)
            .ok()
            .and_then(|p| tfrc::Receiver::new(p.receiver).ok());
        if let Some(core) = core {
            let prot = Protection::Keyed {
                wrapped: Vec::new(),
                data: Opener::new(key, Channel::Data),
                feedback: Sealer::new(key, Channel::Feedback),
            };
            self.session = Some(Session::new(now, id, peer, hello, core, prot, self.host_id));
        }
        self
    }

    /// Process one datagram of `len` bytes (`truncated`: it was longer than the buffer) from
    /// `from`, which arrived at `now` with IP TTL `ttl`.
    pub fn on_datagram(
        &mut self,
        now: Time,
        dgram: &[u8],
        from: SocketAddr,
        ttl: Option<u8>,
        truncated: bool,
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
        if f.kind == Kind::Hello && self.session.is_none() {
            self.on_first_hello(now, f.session, f.body, from);
            return;
        }
        let Some(s) = self.session.as_mut() else {
            // Anything but a HELLO before a session exists.
            self.drops.unexpected += 1;
            return;
        };
        if f.session != s.id || from != s.peer {
            self.drops.spoofed += 1;
            return;
        }
        match f.kind {
            Kind::Hello => {
                // A retransmission: the HELLO_ACK was lost.
                if frame::decode_hello(f.body).as_ref() == Ok(&s.hello) {
                    s.last_heard = now;
                    self.send_hello_ack();
                } else {
                    self.drops.malformed += 1;
                }
            }
            Kind::Key => self.on_key(now, f.body),
            Kind::Data => self.on_data(now, dgram, ttl),
            Kind::Fin => self.on_fin(now, dgram),
            Kind::HelloAck | Kind::KeyAck | Kind::Feedback | Kind::FinAck => {
                self.drops.unexpected += 1;
            }
        }
        self.flush_feedback(now);
    }

    fn on_first_hello(&mut self, now: Time, id: u64, body: &[u8], from: SocketAddr) {
        let hello = match frame::decode_hello(body) {
            Ok(h) => h,
            Err(e) => {
                self.drops.count_frame(e);
                return;
            }
        };
        if self.opts.require_protection && !hello.protected {
            self.drops.unexpected += 1;
            return;
        }
        if hello.protected && self.key.is_none() {
            match KeyExchange::generate(self.opts.rsa_bits, &mut OsRng) {
                Ok(k) => self.key = Some(k),
                Err(_) => {
                    self.drops.unexpected += 1;
                    return;
                }
            }
        }
        let Ok(core) = session_profile(&hello).and_then(|p| {
            tfrc::Receiver::new(p.receiver).map_err(tfrc::variants::VariantError::Config)
        }) else {
            // A variant this receiver does not know, or a combination it cannot run: say so,
            // so that the sender stops instead of timing out, and stay free for another HELLO.
            self.drops.refused += 1;
            let mut d = frame::header(Kind::HelloAck, id).to_vec();
            d.extend_from_slice(&frame::encode_hello_refused(self.host_id));
            self.push_out(d, from);
            return;
        };
        let prot = if hello.protected {
            Protection::AwaitingKey
        } else {
            Protection::Off
        };
        self.session = Some(Session::new(now, id, from, hello, core, prot, self.host_id));
        self.send_hello_ack();
    }

    fn push_out(&mut self, d: Vec<u8>, to: SocketAddr) {
        if self.out.len() >= MAX_OUT {
            self.out.pop_front();
        }
        self.out.push_back((d, to));
    }

    fn send_hello_ack(&mut self) {
        let Some(s) = self.session.as_ref() else {
            return;
        };
        let der = if s.hello.protected {
            match self
                .key
                .as_ref()
                .map(|k| tfrc_protect::encode_public_key(&k.public_key()))
            {
                Some(Ok(d)) => d,
                _ => return,
            }
        } else {
            Vec::new()
        };
        let mut d = frame::header(Kind::HelloAck, s.id).to_vec();
        d.extend_from_slice(&frame::encode_hello_ack(
            s.hello.protected,
            self.host_id,
            &der,
        ));
        let to = s.peer;
        self.push_out(d, to);
    }

    fn on_key(&mut self, now: Time, wrapped: &[u8]) {
        let Some(s) = self.session.as_mut() else {
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
                if w.as_slice() != wrapped {
                    self.drops.unexpected += 1;
                    return;
                }
            }
            Protection::AwaitingKey => {
                let Some(k) = self.key.as_ref() else {
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
                        self.drops.tampered += 1;
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

    fn on_data(&mut self, now: Time, dgram: &[u8], ttl: Option<u8>) {
        let Some(s) = self.session.as_mut() else {
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
        // A jump of more than MAX_SEQ_JUMP cannot come from a real sender: long before a
        // million packets go out unanswered, the nofeedback timer (§4.4) has cut the rate to
        // s/t_mbi. Refusing it keeps one forged number from making every later packet stale.
        if hdr.seq > s.highest.map_or(0, |h| h).saturating_add(MAX_SEQ_JUMP) {
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
        s.core.on_data_with(
            now,
            &hdr,
            Arrival {
                wire_len: u32::try_from(wire_len).unwrap_or(u32::MAX),
                ce: false,
                ttl,
            },
        );
        if let Some(t) = ttl {
            s.hops = Some(hdr.initial_ttl.saturating_sub(t));
        }
        s.packets += 1;
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
        if self.delivered.len() >= self.opts.queue.max(1) {
            self.app_overflow += 1;
        } else {
            self.delivered.push_back(Delivered {
                seq: hdr.seq,
                payload: payload.to_vec(),
                delay,
            });
        }
    }

    fn on_fin(&mut self, now: Time, dgram: &[u8]) {
        let Some(s) = self.session.as_mut() else {
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
                    // A replayed FIN is a FIN retransmission only if it was never accepted;
                    // the sender seals each retransmission anew, so a replay is an attack.
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
        self.send_fin_ack();
    }

    fn send_fin_ack(&mut self) {
        let report = self.report();
        let Some(s) = self.session.as_mut() else {
            return;
        };
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

    /// Turn a due feedback report into a datagram.
    fn flush_feedback(&mut self, now: Time) {
        let Some(s) = self.session.as_mut() else {
            return;
        };
        while let Some(fb) = s.core.poll_feedback(now) {
            let h = frame::header(Kind::Feedback, s.id);
            let mut d = h.to_vec();
            d.extend_from_slice(&wire::encode_feedback(&fb));
            if let Protection::Keyed { feedback, .. } = &mut s.prot {
                let clear = d.clone();
                if feedback.seal_into(&clear, &[], &mut d).is_err() {
                    continue;
                }
            }
            let to = s.peer;
            self.feedbacks += 1;
            if self.out.len() >= MAX_OUT {
                self.out.pop_front();
            }
            self.out.push_back((d, to));
        }
    }

    /// The next instant [`on_timeout`](Self::on_timeout) must be called, if any.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.session.as_ref().and_then(|s| s.core.poll_timeout())
    }

    /// Run the core's feedback timer.
    pub fn on_timeout(&mut self, now: Time) {
        if let Some(s) = self.session.as_mut() {
            if s.core.poll_timeout().is_some_and(|t| t <= now) {
                s.core.on_timeout(now);
            }
        }
        self.flush_feedback(now);
    }

    /// The next datagram to send and its destination.
    pub fn poll_transmit(&mut self) -> Option<(Vec<u8>, SocketAddr)> {
        self.out.pop_front()
    }

    /// The next delivered message.
    pub fn poll_delivered(&mut self) -> Option<Delivered> {
        self.delivered.pop_front()
    }

    /// Put back a message the application channel had no room for (it stays first).
    fn unpoll_delivered(&mut self, d: Delivered) {
        self.delivered.push_front(d);
    }

    /// Messages waiting for the application.
    pub fn delivered_len(&self) -> usize {
        self.delivered.len()
    }

    /// Drops so far.
    pub fn drops(&self) -> Drops {
        self.drops
    }

    /// A session has been accepted.
    pub fn has_session(&self) -> bool {
        self.session.is_some()
    }

    /// When the FIN arrived, if it has.
    pub fn fin_at(&self) -> Option<Time> {
        self.session.as_ref().and_then(|s| s.fin_at)
    }

    /// When the session was last heard from.
    pub fn last_heard(&self) -> Option<Time> {
        self.session.as_ref().map(|s| s.last_heard)
    }

    /// The core receiver's state (None before a session).
    pub fn core_status(&self) -> Option<tfrc::ReceiverStatus> {
        self.session.as_ref().map(|s| s.core.status())
    }

    /// What has been measured so far.
    pub fn report(&self) -> ReceiverReport {
        let mut r = ReceiverReport {
            drops: self.drops,
            app_overflow: self.app_overflow,
            feedbacks: self.feedbacks,
            ..ReceiverReport::default()
        };
        if let Some(s) = self.session.as_ref() {
            let st = s.core.status();
            r.packets = s.packets;
            r.wire_bytes = s.wire_bytes;
            r.payload_bytes = s.payload_bytes;
            r.span_s = s.first.map_or(0.0, |f| (s.last - f).as_secs_f64());
            r.sender_packets = s.sender_packets;
            r.delay = s.delay.summary();
            r.reordered = s.reordered;
            r.p = st.p;
            r.loss_events = st.loss_events;
            r.lost_packets = st.lost_packets;
            r.hops = s.hops;
            r.protected = s.hello.protected;
            r.variants = s
                .hello
                .variants
                .iter()
                .map(|c| frame::variants_text(std::slice::from_ref(c)))
                .collect();
            r.congestion_losses = st.congestion_losses;
            r.wireless_losses = st.wireless_losses;
            r.avg_one_way_delay_s = st.avg_one_way_delay;
        }
        r
    }
}

struct Shared {
    report: Mutex<ReceiverReport>,
    stop: AtomicBool,
    wake: sys::EventFd,
}

/// A receiver running on its own thread.
pub struct Receiver {
    local: SocketAddr,
    rx: ChanRx<Delivered>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<io::Result<ReceiverReport>>>,
}

impl Receiver {
    /// Bind `addr` and start receiving one session.
    pub fn bind(addr: SocketAddr, opts: ReceiverOptions) -> io::Result<Receiver> {
        let sock = UdpSocket::bind(addr)?;
        sock.set_nonblocking(true)?;
        sys::set_buffers(&sock, opts.socket_buffer);
        sys::enable_recv_ttl(&sock)?;
        // Without kernel timestamps the arrival time is the read time (less accurate under
        // load), so a failure here is not fatal.
        let _ = sys::enable_rx_timestamps(&sock);
        let local = sock.local_addr()?;
        let engine = ReceiverEngine::new(opts.clone(), crate::host_id())?;
        let (tx, rx) = mpsc::sync_channel(opts.queue.max(1));
        let shared = Arc::new(Shared {
            report: Mutex::new(ReceiverReport::default()),
            stop: AtomicBool::new(false),
            wake: sys::EventFd::new()?,
        });
        let sh = shared.clone();
        let thread = std::thread::Builder::new()
            .name("tfrc-udp-recv".into())
            .spawn(move || run(sock, engine, opts, tx, sh))?;
        Ok(Receiver {
            local,
            rx,
            shared,
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The next delivered message; `None` once the session has ended and all were read.
    pub fn recv(&self) -> Option<Delivered> {
        self.rx.recv().ok()
    }

    /// As [`recv`](Self::recv), giving up after `timeout` (`Err(true)`: the session ended).
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Delivered, bool> {
        self.rx.recv_timeout(timeout).map_err(|e| match e {
            mpsc::RecvTimeoutError::Timeout => false,
            mpsc::RecvTimeoutError::Disconnected => true,
        })
    }

    /// A snapshot of what has been measured (refreshed every 100 ms and at the end).
    pub fn report(&self) -> ReceiverReport {
        self.shared
            .report
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// Stop now, whatever the session's state.
    pub fn shutdown(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake.notify();
    }

    /// Wait for the session to end (FIN and linger, idle timeout, or [`shutdown`](Self::shutdown))
    /// and return the final report. Undelivered messages are discarded.
    pub fn wait(mut self) -> io::Result<ReceiverReport> {
        // Keep draining so the thread never blocks on a full channel.
        let Some(t) = self.thread.take() else {
            return Ok(self.report());
        };
        while !t.is_finished() {
            let _ = self.rx.recv_timeout(Duration::from_millis(20));
        }
        t.join()
            .map_err(|_| io::Error::other("receiver thread panicked"))?
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
    tx: SyncSender<Delivered>,
    shared: Arc<Shared>,
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
                    let read = crate::now();
                    let at = m
                        .rx_realtime_ns
                        .map(|rt| Time::from_nanos(rt.wrapping_sub(offset)))
                        .filter(|&t| t <= read && t + Duration::from_secs(1) >= read)
                        .unwrap_or(read)
                        .max(last);
                    last = at;
                    engine.on_datagram(at, &buf[..n], from, m.ttl, m.truncated);
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
            let _ = sys::send_to(&sock, &d, &to, None);
        }
        while let Some(d) = engine.poll_delivered() {
            match tx.try_send(d) {
                Ok(()) => {}
                Err(TrySendError::Full(d)) => {
                    engine.unpoll_delivered(d);
                    break;
                }
                Err(TrySendError::Disconnected(_)) => {}
            }
        }
        if now >= next_publish {
            if let Ok(mut r) = shared.report.lock() {
                *r = engine.report();
            }
            next_publish = now + Duration::from_millis(100);
        }
        // End of session.
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        if let Some(f) = engine.fin_at() {
            if now >= f + opts.linger {
                break;
            }
        }
        if let Some(idle) = opts.idle_timeout {
            let heard = engine.last_heard().unwrap_or(started);
            if engine.has_session() && now >= heard + idle {
                break;
            }
        }
        // Wait for input or the next timer; poll at least every 50 ms for the stop flag,
        // the linger and idle deadlines, and the application channel's room.
        let mut wake = now + Duration::from_millis(50);
        if let Some(t) = engine.poll_timeout() {
            wake = wake.min(t);
        }
        if engine.delivered_len() > 0 {
            wake = wake.min(now + Duration::from_millis(1));
        }
        let r = crate::wait_until(wake, &[sock.as_raw_fd(), shared.wake.fd()], Duration::ZERO)?;
        if r.second {
            shared.wake.drain();
        }
    }
    // Whatever is still queued for the application goes if there is room.
    while let Some(d) = engine.poll_delivered() {
        if tx.try_send(d).is_err() {
            break;
        }
    }
    let report = engine.report();
    if let Ok(mut r) = shared.report.lock() {
        *r = report.clone();
    }
    Ok(report)
}
