//! The sending end without a socket: [`SenderEngine`] runs the handshake, the core's data
//! packets and the close as datagrams in and datagrams out, with time given by the caller (the
//! receiver's counterpart is [`crate::ReceiverEngine`]). An application with its own socket
//! and event loop drives it; the threaded [`crate::Sender`] is one such driver.
//!
//! Driver contract (as the core's): after every input (`on_*`, `queue_message`,
//! `push_generated`, `set_infinite_backlog`, `close`) call [`SenderEngine::poll_transmit`]
//! until it returns `None`, send each datagram to the receiver, then sleep until
//! [`SenderEngine::poll_timeout`] or until a datagram arrives. Only datagrams from the
//! receiver's address go to [`SenderEngine::on_datagram`]; others are counted with
//! [`SenderEngine::on_stray_datagram`].

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use rand::rngs::OsRng;
use rand::RngCore;
use tfrc::{wire, DataHeader, Time};
use tfrc_protect::{Channel, NoiseInitiator, Opener, Sealer, StaticKeypair};

use super::{
    decode_input, hello_datagram, status_into, Input, Protect, SenderOptions, SenderReport,
    SenderStats, Smoothness, Source,
};
use crate::frame::{self, Kind, Mode};
use crate::stats::ReceiverReport;

/// A datagram the engine wants sent to the receiver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// The datagram (frame header and body).
    pub datagram: Vec<u8>,
    /// The IP TTL for this datagram alone (data packets carry the core's TTL, E5), or `None`
    /// for the socket's default.
    pub ttl: Option<u8>,
    /// The data packet's sequence number; `None` for handshake and close datagrams.
    pub seq: Option<u64>,
}

/// What an input changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineEvent {
    /// Nothing to report.
    None,
    /// The handshake completed: data may be queued.
    Established,
    /// A feedback packet was applied to the core (the allowed rate may have changed).
    Feedback,
    /// The receiver's final report arrived: the session is over.
    Closed,
}

/// What the handshake waits for.
// One per engine.
#[allow(clippy::large_enum_variant)]
enum Step {
    /// A RETRY (the first HELLO carries no token).
    Retry,
    /// The HELLO_ACK to the HELLO with the token.
    HelloAck(Option<NoiseInitiator>),
    /// RSA mode: the KEY_ACK.
    KeyAck,
}

// One per engine; the handshake's Noise state is the large part and lives only until the
// session is established.
#[allow(clippy::large_enum_variant)]
enum Phase {
    Handshake {
        step: Step,
        request: Vec<u8>,
        next: Time,
        sent_at: Time,
        sends: u32,
        deadline: Time,
        rtt: Option<Duration>,
    },
    Established,
    Closing {
        next: Time,
        end: Time,
        retry: Duration,
    },
    Closed,
}

/// The sending end of one session, without a socket.
pub struct SenderEngine {
    to: SocketAddr,
    opts: EngineOptions,
    session: u64,
    phase: Phase,
    sealer: Option<Sealer>,
    opener: Option<Opener>,
    core: Option<tfrc::Sender>,
    start: Time,
    stats: SenderStats,
    pending: VecDeque<Vec<u8>>,
    generated: Vec<u8>,
    infinite: bool,
    smooth: Smoothness,
    report: Option<ReceiverReport>,
    error: Option<io::Error>,
    /// The last data packet polled: its header and message, until the next one.
    last_data: Option<(DataHeader, Option<Vec<u8>>, usize)>,
    /// The socket refused a packet: nothing until [`SenderEngine::on_writable`].
    blocked: bool,
    /// A local queue dropped a packet: nothing before this time.
    local_until: Option<Time>,
    /// Data packets sent when the close began (the FIN carries it).
    sent_at_close: u64,
}

/// The parts of [`SenderOptions`] the engine uses.
struct EngineOptions {
    profile: tfrc::Profile,
    variants: Vec<tfrc::variants::VariantChoice>,
    protect: Protect,
    source: Source,
    handshake_rtt: bool,
    connect_timeout: Duration,
    fin_timeout: Duration,
    ecn: bool,
}

impl SenderEngine {
    /// A session to `to` (used in error messages only) with `opts` (profile and variants
    /// already applied, as [`crate::Sender::connect`] does; the socket options are ignored),
    /// starting at `now` with a random session id. The first [`poll_transmit`] yields the
    /// HELLO.
    ///
    /// [`poll_transmit`]: SenderEngine::poll_transmit
    pub fn new(to: SocketAddr, opts: &SenderOptions, now: Time) -> SenderEngine {
        let o = EngineOptions {
            profile: opts.profile,
            variants: opts.variants.clone(),
            protect: opts.protect.clone(),
            source: opts.source,
            handshake_rtt: opts.handshake_rtt,
            connect_timeout: opts.connect_timeout,
            fin_timeout: opts.fin_timeout,
            ecn: opts.ecn,
        };
        let session = OsRng.next_u64();
        let request = hello_datagram(
            &o.profile,
            &o.variants,
            &o.protect,
            session,
            &[],
            &[],
            o.ecn,
        );
        let s = o.profile.sender.segment_size as usize;
        SenderEngine {
            to,
            phase: Phase::Handshake {
                step: Step::Retry,
                request,
                next: now,
                sent_at: now,
                sends: 0,
                deadline: now + o.connect_timeout,
                rtt: None,
            },
            opts: o,
            session,
            sealer: None,
            opener: None,
            core: None,
            start: now,
            stats: SenderStats::default(),
            pending: VecDeque::new(),
            generated: (0..s).map(|i| (i % 251) as u8).collect(),
            infinite: false,
            smooth: Smoothness::default(),
            report: None,
            error: None,
            last_data: None,
            blocked: false,
            local_until: None,
            sent_at_close: 0,
        }
    }

    /// The session id.
    pub fn session(&self) -> u64 {
        self.session
    }

    /// The handshake is over and the session not closed: data may be queued.
    pub fn is_established(&self) -> bool {
        matches!(self.phase, Phase::Established)
    }

    /// The session is over (closed, timed out or failed).
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed)
    }

    /// Why the session failed (handshake refused, timed out, keys not authentic), once.
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// The allowed rate X in bits/s (0 before the handshake ends).
    pub fn rate_bps(&self) -> f64 {
        self.core.as_ref().map_or(0.0, |c| c.rate() * 8.0)
    }

    /// Both ends agreed to ECN: the driver sends the data ECT(0) (`IP_TOS`).
    pub fn ecn(&self) -> bool {
        self.stats.ecn
    }

    /// The RTT the handshake measured, if it did.
    pub fn handshake_rtt(&self) -> Option<Duration> {
        self.stats.handshake_rtt_s.map(Duration::from_secs_f64)
    }

    /// Messages given to the core and not yet sent.
    pub fn pending_messages(&self) -> usize {
        self.pending.len()
    }

    /// The sender's state at `now`.
    pub fn stats_at(&mut self, now: Time) -> SenderStats {
        if let Some(c) = &self.core {
            status_into(&mut self.stats, c, self.start, now);
        }
        self.stats.clone()
    }

    fn fail(&mut self, kind: io::ErrorKind, msg: String) {
        self.error = Some(io::Error::new(kind, msg));
        self.phase = Phase::Closed;
    }

    // ----- application input ---------------------------------------------------------------

    /// Queue one message (at most the segment size; longer ones are cut) as one packet.
    /// Ignored unless established.
    pub fn queue_message(&mut self, now: Time, mut msg: Vec<u8>) {
        let Some(core) = self.core.as_mut() else {
            return;
        };
        if !matches!(self.phase, Phase::Established) {
            return;
        }
        msg.truncate(self.generated.len());
        self.pending.push_back(msg);
        core.push_packets(now, 1);
        self.stats.generated_packets += 1;
    }

    /// `n` more generated (full-size) packets are ready (a CBR source).
    pub fn push_generated(&mut self, now: Time, n: u64) {
        if let (Some(core), Phase::Established) = (self.core.as_mut(), &self.phase) {
            core.push_packets(now, n);
            self.stats.generated_packets += n;
        }
    }

    /// Generated data from now on, as fast as TFRC allows (a bulk source).
    pub fn set_infinite_backlog(&mut self, now: Time) {
        if let (Some(core), Phase::Established) = (self.core.as_mut(), &self.phase) {
            if !self.infinite {
                core.set_infinite_backlog(now);
                self.infinite = true;
            }
        }
    }

    /// Stop sending data and close the session: FIN until the receiver's FIN_ACK (its report)
    /// or the FIN timeout. Queued messages not yet sent are dropped.
    pub fn close(&mut self, now: Time) {
        match self.phase {
            Phase::Established => {}
            Phase::Handshake { .. } => {
                self.fail(io::ErrorKind::Interrupted, "aborted".into());
                return;
            }
            _ => return,
        }
        let Some(core) = self.core.as_mut() else {
            return;
        };
        core.stop();
        self.sent_at_close = core.status().packets_sent;
        let rtt = self.stats.rtt_s.unwrap_or(0.05);
        self.phase = Phase::Closing {
            next: now,
            end: now + self.opts.fin_timeout,
            retry: Duration::from_secs_f64((2.0 * rtt).clamp(0.02, 0.25)),
        };
    }

    // ----- network input -------------------------------------------------------------------

    /// A datagram from the receiver's address arrived at `now`.
    pub fn on_datagram(&mut self, now: Time, d: &[u8]) -> EngineEvent {
        match self.phase {
            Phase::Handshake { .. } => self.handshake_input(now, d),
            Phase::Established | Phase::Closing { .. } => {
                match decode_input(d, self.session, self.opener.as_mut(), &mut self.stats.drops) {
                    Some(Input::Feedback(fb)) => self.on_feedback(now, &fb),
                    Some(Input::FinAck(r)) => {
                        if matches!(self.phase, Phase::Closing { .. }) {
                            self.report = Some(r);
                            self.phase = Phase::Closed;
                            return EngineEvent::Closed;
                        }
                        EngineEvent::None
                    }
                    _ => EngineEvent::None,
                }
            }
            Phase::Closed => EngineEvent::None,
        }
    }

    /// A datagram from another address, or one the kernel truncated: counted, not read.
    pub fn on_stray_datagram(&mut self, truncated: bool) {
        match (truncated, &self.phase) {
            (true, Phase::Established | Phase::Closing { .. }) => self.stats.drops.truncated += 1,
            _ => self.stats.drops.spoofed += 1,
        }
    }

    /// An ICMP time-exceeded notice quoting `quoted` (the start of one of our datagrams):
    /// given to the core's TTL policy (E5) when it quotes a data packet of this session.
    pub fn on_icmp_time_exceeded(&mut self, now: Time, quoted: &[u8]) {
        self.stats.icmp_time_exceeded += 1;
        let n = quoted.len();
        if let (Ok(f), Some(core)) = (frame::parse(quoted), self.core.as_mut()) {
            let body_end = (frame::HEADER_LEN + wire::DATA_HEADER_LEN).min(n);
            if f.kind == Kind::Data && f.session == self.session {
                if let Ok((h, _)) = wire::decode_data(&quoted[frame::HEADER_LEN..body_end]) {
                    core.on_ttl_exceeded(now, h.initial_ttl);
                }
            }
        }
    }

    /// Another ICMP error for our datagrams (for example port unreachable): counted.
    pub fn on_icmp_other(&mut self) {
        self.stats.icmp_other += 1;
    }

    fn on_feedback(&mut self, now: Time, fb: &tfrc::Feedback) -> EngineEvent {
        let Some(core) = self.core.as_mut() else {
            return EngineEvent::None;
        };
        // A feedback must echo a time we sent at and a sequence number we used; anything
        // else is forged or corrupt.
        if fb.timestamp_echo < self.start
            || fb.timestamp_echo > now
            || fb.highest_seq >= core.status().packets_sent
        {
            self.stats.drops.unexpected += 1;
            return EngineEvent::None;
        }
        core.on_feedback(now, fb);
        if fb.hops.is_some() {
            self.stats.hops = fb.hops;
        }
        status_into(&mut self.stats, core, self.start, now);
        EngineEvent::Feedback
    }

    fn handshake_input(&mut self, now: Time, d: &[u8]) -> EngineEvent {
        let Ok(f) = frame::parse(d) else {
            self.stats.drops.malformed += 1;
            return EngineEvent::None;
        };
        if f.session != self.session {
            self.stats.drops.spoofed += 1;
            return EngineEvent::None;
        }
        let Phase::Handshake {
            step,
            request,
            next,
            sent_at,
            sends,
            rtt,
            ..
        } = &mut self.phase
        else {
            return EngineEvent::None;
        };
        // The RTT of an exchange answered without a retransmission (the answer to a
        // retransmitted request cannot be matched to its send time).
        let measured = |rtt: &mut Option<Duration>, sent_at: Time, sends: u32| {
            if sends == 1 {
                let r = now - sent_at;
                *rtt = Some(rtt.map_or(r, |o: Duration| o.min(r)));
            }
            *rtt
        };
        match (f.kind, &mut *step) {
            (Kind::Retry, Step::Retry) => {
                let Ok(token) = frame::decode_retry(f.body) else {
                    self.stats.drops.malformed += 1;
                    return EngineEvent::None;
                };
                measured(rtt, *sent_at, *sends);
                let mut init = None;
                let mut msg = Vec::new();
                if self.opts.protect.mode().is_noise() {
                    let protect = &self.opts.protect;
                    let noise = (|| -> Result<(NoiseInitiator, Vec<u8>), String> {
                        // The prologue covers the fields that do not change with the token.
                        let prologue = frame::hello_prologue(request).map_err(|e| e.to_string())?;
                        let mut i = match protect {
                            Protect::Noise { receiver, identity } => {
                                let me = match identity {
                                    Some(k) => k.clone(),
                                    None => StaticKeypair::generate().map_err(|e| e.to_string())?,
                                };
                                NoiseInitiator::new(&me, receiver, &prologue)
                            }
                            _ => NoiseInitiator::unauthenticated(&prologue),
                        }
                        .map_err(|e| e.to_string())?;
                        let m = i.first_message().map_err(|e| e.to_string())?;
                        Ok((i, m))
                    })();
                    match noise {
                        Ok((i, m)) => {
                            init = Some(i);
                            msg = m;
                        }
                        Err(e) => {
                            self.fail(io::ErrorKind::Other, e);
                            return EngineEvent::None;
                        }
                    }
                }
                *request = hello_datagram(
                    &self.opts.profile,
                    &self.opts.variants,
                    &self.opts.protect,
                    self.session,
                    token,
                    &msg,
                    self.opts.ecn,
                );
                *step = Step::HelloAck(init);
                *sends = 0;
                *next = now;
                EngineEvent::None
            }
            (Kind::HelloAck, Step::HelloAck(init)) => {
                let ack = match frame::decode_hello_ack(f.body) {
                    Ok(a) => a,
                    Err(_) => {
                        self.stats.drops.malformed += 1;
                        return EngineEvent::None;
                    }
                };
                if ack.refused {
                    let msg = format!(
                        "{} refused the session: it does not offer {} mode, or cannot apply \
                         the variants '{}'",
                        self.to,
                        self.opts.protect.mode().name(),
                        frame::variants_text(&self.opts.variants)
                    );
                    self.fail(io::ErrorKind::Unsupported, msg);
                    return EngineEvent::None;
                }
                if ack.mode != self.opts.protect.mode() {
                    self.stats.drops.unexpected += 1;
                    return EngineEvent::None;
                }
                let r = measured(rtt, *sent_at, *sends);
                // ECN only when asked for and agreed to; a receiver that did not agree gets
                // no ECN-capable packets (RFC 3168 §6.1.1).
                self.stats.ecn = self.opts.ecn && ack.ecn;
                match ack.mode {
                    Mode::Plain => self.established(now, r),
                    Mode::Noise | Mode::NoiseUnauthenticated => {
                        let Some(i) = init.take() else {
                            self.stats.drops.unexpected += 1;
                            return EngineEvent::None;
                        };
                        match i.finish(ack.payload) {
                            Ok(keys) => {
                                self.sealer = Some(Sealer::new(&keys.to_responder, Channel::Data));
                                self.opener =
                                    Some(Opener::new(&keys.to_initiator, Channel::Feedback));
                                self.established(now, r)
                            }
                            Err(_) => {
                                let msg = if ack.mode == Mode::Noise {
                                    format!(
                                        "the Noise handshake with {} failed: the answer was not \
                                         made with the pinned receiver key (a substituted key, \
                                         the wrong --peer-key, or tampering)",
                                        self.to
                                    )
                                } else {
                                    format!(
                                        "the Noise handshake with {} failed: the answer does not \
                                         match this session's handshake (tampering on the path)",
                                        self.to
                                    )
                                };
                                self.fail(io::ErrorKind::PermissionDenied, msg);
                                EngineEvent::None
                            }
                        }
                    }
                    Mode::RsaUnauthenticated => {
                        let pk = match tfrc_protect::decode_public_key(ack.payload) {
                            Ok(pk) => pk,
                            Err(e) => {
                                self.fail(
                                    io::ErrorKind::InvalidData,
                                    format!("receiver's public key: {e}"),
                                );
                                return EngineEvent::None;
                            }
                        };
                        let bits = tfrc_protect::modulus_bits(&pk);
                        if bits < crate::receiver::MIN_RSA_BITS {
                            self.fail(
                                io::ErrorKind::InvalidData,
                                format!(
                                    "receiver's RSA key has {bits} bits: at least {} needed",
                                    crate::receiver::MIN_RSA_BITS
                                ),
                            );
                            return EngineEvent::None;
                        }
                        let w = match tfrc_protect::wrap_session_key(&pk, &mut OsRng) {
                            Ok(w) => w,
                            Err(e) => {
                                self.fail(io::ErrorKind::Other, e.to_string());
                                return EngineEvent::None;
                            }
                        };
                        self.sealer = Some(Sealer::new(&w.key, Channel::Data));
                        self.opener = Some(Opener::new(&w.key, Channel::Feedback));
                        let mut k = frame::header(Kind::Key, self.session).to_vec();
                        k.extend_from_slice(&w.wrapped);
                        *request = k;
                        *step = Step::KeyAck;
                        *sends = 0;
                        *next = now;
                        EngineEvent::None
                    }
                }
            }
            (Kind::KeyAck, Step::KeyAck) => {
                let ok = self
                    .opener
                    .as_mut()
                    .is_some_and(|o| o.open(f.header, f.body).is_ok());
                if ok {
                    let r = measured(rtt, *sent_at, *sends);
                    return self.established(now, r);
                }
                self.stats.drops.tampered += 1;
                EngineEvent::None
            }
            _ => {
                self.stats.drops.unexpected += 1;
                EngineEvent::None
            }
        }
    }

    fn established(&mut self, now: Time, rtt: Option<Duration>) -> EngineEvent {
        let mut core = match tfrc::Sender::new(self.opts.profile.sender) {
            Ok(c) => c,
            Err(e) => {
                self.fail(io::ErrorKind::InvalidInput, e.to_string());
                return EngineEvent::None;
            }
        };
        self.stats.handshake_rtt_s = rtt.map(|r| r.as_secs_f64());
        self.stats.variants = self
            .opts
            .variants
            .iter()
            .map(|c| frame::variants_text(std::slice::from_ref(c)))
            .collect();
        if let (true, Some(r)) = (self.opts.handshake_rtt, rtt) {
            core.on_handshake_rtt(now, r);
        }
        self.core = Some(core);
        self.start = now;
        self.phase = Phase::Established;
        EngineEvent::Established
    }

    // ----- output ----------------------------------------------------------------------------

    /// The next datagram to send at `now`, if any: a handshake request (sent again every
    /// 200 ms until answered), a data packet when the core allows one, or a FIN.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        match &mut self.phase {
            Phase::Handshake {
                request,
                next,
                sent_at,
                sends,
                deadline,
                ..
            } => {
                if now >= *deadline {
                    let msg = format!(
                        "no answer from {} within {:.1} s",
                        self.to,
                        self.opts.connect_timeout.as_secs_f64()
                    );
                    self.fail(io::ErrorKind::TimedOut, msg);
                    return None;
                }
                if now < *next {
                    return None;
                }
                *sent_at = now;
                *sends += 1;
                *next = now + Duration::from_millis(200);
                Some(Transmit {
                    datagram: request.clone(),
                    ttl: None,
                    seq: None,
                })
            }
            Phase::Established => self.poll_data(now),
            Phase::Closing { next, end, retry } => {
                if now >= *end {
                    self.phase = Phase::Closed;
                    return None;
                }
                if now < *next {
                    return None;
                }
                *next = now + *retry;
                let sent = self.sent_at_close.to_be_bytes();
                self.seal(Kind::Fin, &sent, &[]).map(|datagram| Transmit {
                    datagram,
                    ttl: None,
                    seq: None,
                })
            }
            Phase::Closed => None,
        }
    }

    fn poll_data(&mut self, now: Time) -> Option<Transmit> {
        let core = self.core.as_mut()?;
        // Timers first (the nofeedback timer).
        if core.poll_timeout().is_some_and(|t| t <= now) {
            core.on_timeout(now);
        }
        if self.local_until.is_some_and(|t| now >= t) {
            self.local_until = None;
        }
        if self.blocked || self.local_until.is_some() {
            return None;
        }
        let h = core.poll_transmit(now)?;
        let payload = match self.opts.source {
            Source::Generated => None,
            Source::Messages => self.pending.pop_front(),
        };
        let len = payload.as_ref().map_or(self.generated.len(), |p| p.len());
        let hdr = wire::encode_data(&h);
        let body = payload.as_deref().unwrap_or(&self.generated).to_vec();
        let datagram = self.seal(Kind::Data, &hdr, &body)?;
        self.stats.payload_bytes_sent += len as u64;
        self.smooth.on_send(now - self.start);
        if self.infinite {
            self.stats.generated_packets += 1;
        }
        self.last_data = Some((h, payload, len));
        Some(Transmit {
            datagram,
            ttl: Some(h.initial_ttl),
            seq: Some(h.seq),
        })
    }

    /// `frame | clear | sealed(secret)` (or `frame | clear | secret` unprotected).
    fn seal(&mut self, kind: Kind, clear: &[u8], secret: &[u8]) -> Option<Vec<u8>> {
        let mut out = frame::header(kind, self.session).to_vec();
        out.extend_from_slice(clear);
        match self.sealer.as_mut() {
            Some(s) => {
                let aad = out.clone();
                s.seal_into(&aad, secret, &mut out).ok()?;
            }
            None => out.extend_from_slice(secret),
        }
        Some(out)
    }

    /// The host did not take `t`: its socket buffer was full (`local_drop` false: `EAGAIN`;
    /// call [`on_writable`](Self::on_writable) once the socket is writable again) or a local
    /// queue dropped it (`ENOBUFS`: a congestion signal; the engine tries again one packet
    /// interval later). A data packet is given back to the core, not counted as sent
    /// (`docs/real-network.md`, "Local congestion"); a handshake or close datagram is simply
    /// sent again at its next retry.
    pub fn on_send_refused(&mut self, now: Time, t: &Transmit, local_drop: bool) {
        let Some(seq) = t.seq else { return };
        let Some((h, payload, len)) = self.last_data.take() else {
            return;
        };
        let Some(core) = self.core.as_mut() else {
            return;
        };
        if h.seq != seq || !core.on_send_refused(now, &h) {
            return;
        }
        if let Some(m) = payload {
            self.pending.push_front(m);
        }
        self.stats.payload_bytes_sent = self.stats.payload_bytes_sent.saturating_sub(len as u64);
        self.smooth.unsend();
        if self.infinite {
            self.stats.generated_packets = self.stats.generated_packets.saturating_sub(1);
        }
        if local_drop {
            self.stats.local_drops += 1;
            core.on_local_congestion(now);
            // Nothing signals room in a qdisc: one packet interval at the (reduced) rate,
            // within [50 µs, 10 ms].
            let gap = (self.generated.len() as f64 / core.rate()).clamp(50e-6, 10e-3);
            self.local_until = Some(now + Duration::from_secs_f64(gap));
        } else {
            self.stats.send_blocked += 1;
            self.blocked = true;
        }
    }

    /// Whether the engine waits for the socket to become writable (after `EAGAIN`).
    pub fn wants_writable(&self) -> bool {
        self.blocked
    }

    /// The socket is writable again.
    pub fn on_writable(&mut self) {
        self.blocked = false;
    }

    /// The host failed to send a datagram for another reason (counted; a data packet counts
    /// as sent and lost).
    pub fn on_send_error(&mut self) {
        self.stats.send_errors += 1;
    }

    /// The next instant the engine must be woken, if any (a datagram arriving wakes it too).
    pub fn poll_timeout(&self) -> Option<Time> {
        match &self.phase {
            Phase::Handshake { next, deadline, .. } => Some((*next).min(*deadline)),
            Phase::Established => {
                let core = self.core.as_ref()?;
                let t = core.poll_timeout()?;
                if self.blocked || self.local_until.is_some() {
                    // The next packet is due already; only the nofeedback timer counts (and
                    // the time to try again after a local drop).
                    let nfb = core.status().nofeedback_at.unwrap_or(t);
                    Some(self.local_until.map_or(nfb, |l| l.min(nfb)))
                } else {
                    Some(t)
                }
            }
            Phase::Closing { next, end, .. } => Some((*next).min(*end)),
            Phase::Closed => None,
        }
    }

    /// The session's report once closed (the receiver's part `None` if its FIN_ACK never
    /// came); `unsent` counts messages the application queued that never reached the engine.
    pub fn report(&mut self, now: Time, unsent: u64) -> SenderReport {
        let mut stats = self.stats_at(now);
        // Messages given to the engine were counted when queued.
        stats.generated_packets += unsent;
        stats.smoothness_cov = self.smooth.cov();
        let sent = self.sent_at_close;
        let flow = self
            .report
            .as_ref()
            .map(|r| r.flow_summary("tfrc", sent, stats.generated_packets, stats.smoothness_cov));
        SenderReport {
            sender: stats,
            receiver: self.report.clone(),
            flow,
        }
    }
}
