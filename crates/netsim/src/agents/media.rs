//! Media agents: a video application (`crates/media`) over a media congestion controller.
//!
//! The sender agent runs the application (source, packetiser, send buffer) and one controller
//! from the closed enum [`SenderCc`]; the receiver agent reassembles frames and runs the
//! matching [`ReceiverCc`]. Packets carry [`Header::MediaData`] (frame tag and the controller's
//! header) forward and [`Header::MediaFeedback`] back. The application's encoder target follows
//! the controller: for TFRC, the allowed rate X (a packet budget of X/s packets per second,
//! RFC 5348 §4.1) turned into a payload rate by [`media::sender::target_for_packet_rate`];
//! every TFRC packet is a full segment on the wire, padded as NS-2's Agent/TFRC sends
//! `packetSize_` packets (`docs/media.md`).
//!
//! For the RMCAT controllers (`crates/rmcat`: NADA, SCReAM, GCC) the encoder target is the
//! controller's target rate, packets leave the send buffer at its pacing rate (and, for SCReAM,
//! while its window lets them), each packet an RTP packet of its payload plus
//! [`RTP_OVERHEAD`] bytes (plus [`TWCC_EXTENSION`] for GCC); the receiver's feedback generator
//! answers with RFC 8888 or transport-wide RTCP reports, each packet the report's encoded
//! length plus [`RTCP_OVERHEAD`] bytes.
//!
//! To add a controller: a variant in [`SenderCc`], [`ReceiverCc`], [`MediaCcHeader`] and
//! [`MediaFeedback`], a constructor beside [`MediaSender::tfrc`], and one arm in each `match`
//! below.

use std::time::Duration;

use rmcat::{Controller, ControllerKind, FeedbackGenerator, RateRange};
use tfrc::{Arrival, Profile, Receiver, Sender};

use crate::agent::{Agent, AgentCtx, AppCounters, TimerId};
use crate::packet::{Header, MediaCcHeader, MediaData, MediaFeedback, Packet, PacketKind};
use crate::Time;

/// Each media agent's one timer: the sender's earliest of the application's next frame, the
/// controller's timeout and the next pause boundary (one timer, so that what is due at one
/// instant is handled in one call); the receiver's controller timeout.
const WAKE: TimerId = TimerId(0);

/// The most packets one call sends; the controllers bound their bursts well below it, so
/// reaching it means a controller bug, not a busy link.
const MAX_BURST: usize = 1 << 16;

/// IPv4 (20), UDP (8) and RTP (12) headers of an RTP media packet.
pub const RTP_OVERHEAD: u32 = 40;
/// The transport-wide sequence number's RTP header extension (4-byte extension header, 1-byte
/// id/length, 2-byte number, padded to 4): GCC's packets carry it.
pub const TWCC_EXTENSION: u32 = 8;
/// IPv4 (20) and UDP (8) headers of an RTCP feedback packet.
pub const RTCP_OVERHEAD: u32 = 28;
/// The longest pacing gap: a controller whose pacing rate collapses still sends a packet a
/// second (the floor keeps a zero rate from parking the flow forever).
const MAX_PACING_GAP: Duration = Duration::from_secs(1);

fn ns(t: Time) -> u64 {
    t.as_nanos()
}

fn rt(t: Time) -> rmcat::Time {
    rmcat::Time::from_nanos(t.as_nanos())
}

/// The sender side of a media flow's congestion controller.
#[derive(Clone, Debug)]
pub enum SenderCc {
    /// The TFRC core's sender (RFC 5348), in any profile and with any seed variant.
    Tfrc {
        /// The core.
        sender: Box<Sender>,
        /// Wire bytes of a data packet (segment plus the profile's overhead).
        data_len: u32,
        /// The segment size s.
        segment: u32,
    },
    /// An RMCAT controller (NADA, SCReAM or GCC).
    Rmcat {
        /// The controller.
        cc: Box<Controller>,
        /// Header bytes added to each packet's payload on the wire.
        overhead: u32,
        /// The next packet's sequence number (RTP's, or the transport-wide one for GCC).
        seq: u64,
        /// When the pacer lets the next packet go.
        next_send: Time,
        /// The flow stopped: nothing more leaves.
        stopped: bool,
    },
}

/// The receiver side of a media flow's congestion controller.
#[derive(Clone, Debug)]
pub enum ReceiverCc {
    /// The TFRC core's receiver.
    Tfrc {
        /// The core.
        receiver: Box<Receiver>,
        /// Wire bytes of a feedback packet.
        feedback_len: u32,
    },
    /// The feedback generator of an RMCAT controller.
    Rmcat(Box<FeedbackGenerator>),
}

/// The media sender agent.
#[derive(Clone, Debug)]
pub struct MediaSender {
    app: media::sender::MediaSender,
    cc: SenderCc,
    fps: f64,
    /// Pauses of the source (from, to), sorted; `next_pause` indexes the first not yet over.
    pauses: Vec<(Time, Time)>,
    next_pause: usize,
    paused: bool,
}

impl MediaSender {
    /// `app` over TFRC with `profile`; the application's packets are at most the profile's
    /// segment size.
    pub fn tfrc(app: media::sender::MediaSender, profile: &Profile) -> Result<Self, String> {
        if app.max_payload() != profile.sender.segment_size {
            return Err(format!(
                "the media packets' largest payload ({}) must be the TFRC segment size ({})",
                app.max_payload(),
                profile.sender.segment_size
            ));
        }
        let fps = app.source().frame_rate();
        Ok(MediaSender {
            app,
            cc: SenderCc::Tfrc {
                sender: Box::new(Sender::new(profile.sender).map_err(|e| e.to_string())?),
                data_len: profile.data_wire_len(),
                segment: profile.sender.segment_size,
            },
            fps,
            pauses: Vec::new(),
            next_pause: 0,
            paused: false,
        })
    }

    /// `app` over the RMCAT controller `kind`, its target kept within `range` (bit/s).
    pub fn rmcat(app: media::sender::MediaSender, kind: ControllerKind, range: RateRange) -> Self {
        let overhead = RTP_OVERHEAD
            + match kind {
                ControllerKind::Gcc => TWCC_EXTENSION,
                ControllerKind::Nada | ControllerKind::Scream => 0,
            };
        let fps = app.source().frame_rate();
        MediaSender {
            app,
            cc: SenderCc::Rmcat {
                cc: Box::new(Controller::new(kind, range)),
                overhead,
                seq: 0,
                next_send: Time::ZERO,
                stopped: false,
            },
            fps,
            pauses: Vec::new(),
            next_pause: 0,
            paused: false,
        }
    }

    /// The source stops producing frames from each pause's first time to its second, then
    /// resumes (RFC 8867 §5.8); `pauses` sorted and disjoint. The controller keeps its state.
    pub fn with_pauses(mut self, pauses: Vec<(Time, Time)>) -> Self {
        self.pauses = pauses;
        self
    }

    /// Apply the pause boundaries due at `now`.
    fn pause_step(&mut self, now: Time) {
        while let Some(&(from, to)) = self.pauses.get(self.next_pause) {
            if !self.paused && from <= now {
                self.paused = true;
                self.app.stop();
            } else if self.paused && to <= now {
                self.paused = false;
                self.next_pause += 1;
                self.app.start(ns(to));
            } else {
                break;
            }
        }
    }

    fn next_pause_boundary(&self) -> Option<Time> {
        let &(from, to) = self.pauses.get(self.next_pause)?;
        Some(if self.paused { to } else { from })
    }

    /// The application.
    pub fn app(&self) -> &media::sender::MediaSender {
        &self.app
    }

    /// The controller.
    pub fn cc(&self) -> &SenderCc {
        &self.cc
    }

    /// The encoder target the controller allows now, bit/s of payload.
    pub fn allowed_target(&self) -> f64 {
        match &self.cc {
            SenderCc::Tfrc {
                sender, segment, ..
            } => {
                let pps = sender.rate() / f64::from(*segment);
                media::sender::target_for_packet_rate(pps, *segment, self.fps)
            }
            SenderCc::Rmcat { cc, .. } => cc.target_rate(),
        }
    }

    /// Frames due now, with the target the controller allows.
    fn produce(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        if self.app.next_wake().is_none_or(|t| t > ns(now)) {
            return;
        }
        let target = self.allowed_target();
        self.app.set_target_rate(ns(now), target);
        let before = self.app.counters().bytes;
        let n = self.app.on_wake(ns(now), ctx.rng());
        match &mut self.cc {
            SenderCc::Tfrc { sender, .. } => sender.push_packets(now, n),
            SenderCc::Rmcat { cc, .. } => {
                let bytes = self.app.counters().bytes - before;
                if bytes > 0 {
                    cc.on_media_frame(bytes);
                }
                cc.set_queue_bytes(self.app.buffered_bytes());
            }
        }
    }

    fn transmit(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        match &mut self.cc {
            SenderCc::Tfrc {
                sender, data_len, ..
            } => {
                for _ in 0..MAX_BURST {
                    let Some(hdr) = sender.poll_transmit(now) else {
                        return;
                    };
                    // The core's backlog counts exactly the buffered media packets.
                    let Some(mp) = self.app.pop_packet(ns(now)) else {
                        debug_assert!(false, "TFRC sent more packets than the application queued");
                        return;
                    };
                    ctx.set_ttl(hdr.initial_ttl);
                    let protected = sender.protects(&hdr);
                    let mut pkt = ctx.packet(
                        PacketKind::TfrcData,
                        *data_len,
                        mp.payload,
                        i64::try_from(hdr.seq).unwrap_or(i64::MAX),
                        Header::MediaData(MediaData {
                            tag: mp.tag,
                            cc: MediaCcHeader::Tfrc(hdr),
                        }),
                    );
                    pkt.protected = protected;
                    ctx.send(pkt);
                }
            }
            SenderCc::Rmcat {
                cc,
                overhead,
                seq,
                next_send,
                stopped,
            } => {
                if *stopped {
                    return;
                }
                for _ in 0..MAX_BURST {
                    if now < *next_send {
                        break;
                    }
                    let Some(next) = self.app.peek_packet() else {
                        break;
                    };
                    let wire = next.payload.saturating_add(*overhead);
                    if !cc.can_send(wire) {
                        break;
                    }
                    let Some(mp) = self.app.pop_packet(ns(now)) else {
                        break;
                    };
                    let pkt = ctx.packet(
                        PacketKind::Rtp,
                        wire,
                        mp.payload,
                        i64::try_from(*seq).unwrap_or(i64::MAX),
                        Header::MediaData(MediaData {
                            tag: mp.tag,
                            cc: MediaCcHeader::Rmcat { seq: *seq },
                        }),
                    );
                    ctx.send(pkt);
                    cc.on_packet_sent(rt(now), *seq, wire);
                    *seq += 1;
                    let rate = cc.pacing_rate();
                    if rate.is_finite() && rate > 0.0 {
                        let gap = Duration::try_from_secs_f64(f64::from(wire) * 8.0 / rate)
                            .map_or(MAX_PACING_GAP, |g| g.min(MAX_PACING_GAP));
                        *next_send = now + gap;
                    }
                }
                cc.set_queue_bytes(self.app.buffered_bytes());
            }
        }
    }
}

impl MediaSender {
    /// Arm the wake-up at the earliest of what the agent waits for.
    fn arm(&self, ctx: &mut AgentCtx<'_>) {
        let app = self.app.next_wake().map(Time::from_nanos);
        let cc = match &self.cc {
            SenderCc::Tfrc { sender, .. } => sender.poll_timeout(),
            SenderCc::Rmcat {
                cc,
                next_send,
                stopped,
                ..
            } => {
                // The pacer's deadline only while a packet waits for it; a packet held by
                // SCReAM's window waits for feedback instead.
                let pacer =
                    (!*stopped && *next_send > ctx.now() && self.app.peek_packet().is_some())
                        .then_some(*next_send);
                let timeout = cc.poll_timeout().map(|t| Time::from_nanos(t.as_nanos()));
                pacer.into_iter().chain(timeout).min()
            }
        };
        let next = [app, cc, self.next_pause_boundary()]
            .into_iter()
            .flatten()
            .min();
        ctx.sync_timer(WAKE, next);
    }
}

impl Agent for MediaSender {
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        self.app.start(ns(ctx.now()));
        self.produce(ctx);
        self.transmit(ctx);
        self.arm(ctx);
    }

    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
        self.app.stop();
        self.pauses.clear();
        match &mut self.cc {
            SenderCc::Tfrc { sender, .. } => sender.stop(),
            SenderCc::Rmcat { stopped, .. } => *stopped = true,
        }
        self.arm(ctx);
    }

    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        match (&mut self.cc, &pkt.header) {
            (SenderCc::Tfrc { sender, .. }, Header::MediaFeedback(MediaFeedback::Tfrc(fb))) => {
                sender.on_feedback(now, fb)
            }
            (SenderCc::Tfrc { sender, .. }, Header::TimeExceeded { initial_ttl, .. }) => {
                sender.on_ttl_exceeded(now, *initial_ttl)
            }
            (SenderCc::Rmcat { cc, .. }, Header::MediaFeedback(MediaFeedback::Rmcat(fb))) => {
                cc.on_feedback(rt(now), fb)
            }
            _ => return,
        }
        self.transmit(ctx);
        self.arm(ctx);
    }

    fn on_timer(&mut self, _timer: TimerId, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        self.pause_step(now);
        self.produce(ctx);
        match &mut self.cc {
            SenderCc::Tfrc { sender, .. } => {
                if sender.poll_timeout().is_some_and(|t| t <= now) {
                    sender.on_timeout(now);
                }
            }
            SenderCc::Rmcat { cc, .. } => {
                if cc.poll_timeout().is_some_and(|t| t <= rt(now)) {
                    cc.on_timeout(rt(now));
                }
            }
        }
        self.transmit(ctx);
        self.arm(ctx);
    }

    fn app_counters(&self) -> AppCounters {
        let c = self.app.counters();
        AppCounters {
            generated_packets: c.packets,
            generated_bytes: c.bytes,
        }
    }

    /// The encoder's output rate R_o, the controller's allowed rate (TFRC's X, wire bits/s),
    /// its RTT estimate and the packets waiting in the send buffer.
    fn sample_names(&self) -> &'static [&'static str] {
        &["encoder_bps", "allowed_bps", "rtt_s", "buffer_pkts"]
    }

    fn sample(&self, out: &mut Vec<f64>) {
        out.push(self.app.source().output_rate());
        match &self.cc {
            SenderCc::Tfrc { sender, .. } => {
                out.push(sender.rate() * 8.0);
                out.push(sender.rtt().map_or(f64::NAN, |r| r.as_secs_f64()));
            }
            SenderCc::Rmcat { cc, .. } => {
                out.push(cc.target_rate());
                out.push(cc.rtt().map_or(f64::NAN, |r| r.as_secs_f64()));
            }
        }
        out.push(self.app.buffered() as f64);
    }
}

/// The media receiver agent.
#[derive(Clone, Debug)]
pub struct MediaReceiver {
    frames: media::receiver::Reassembler,
    cc: ReceiverCc,
}

impl MediaReceiver {
    /// A receiver for a flow over TFRC with `profile`.
    pub fn tfrc(profile: &Profile) -> Result<Self, String> {
        Ok(MediaReceiver {
            frames: media::receiver::Reassembler::new(),
            cc: ReceiverCc::Tfrc {
                receiver: Box::new(Receiver::new(profile.receiver).map_err(|e| e.to_string())?),
                feedback_len: profile.feedback_wire_len(),
            },
        })
    }

    /// A receiver for a flow over the RMCAT controller `kind`: its feedback generator.
    pub fn rmcat(kind: ControllerKind) -> Self {
        MediaReceiver {
            frames: media::receiver::Reassembler::new(),
            cc: ReceiverCc::Rmcat(Box::new(FeedbackGenerator::new(
                kind.feedback_kind(),
                kind.feedback_config(),
            ))),
        }
    }

    /// The frames received.
    pub fn frames(&self) -> &media::receiver::Reassembler {
        &self.frames
    }

    /// The controller.
    pub fn cc(&self) -> &ReceiverCc {
        &self.cc
    }

    fn answer(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        match &mut self.cc {
            ReceiverCc::Tfrc {
                receiver,
                feedback_len,
            } => {
                for _ in 0..MAX_BURST {
                    let Some(fb) = receiver.poll_feedback(now) else {
                        return;
                    };
                    let seq = i64::try_from(fb.highest_seq).unwrap_or(i64::MAX);
                    let pkt = ctx.packet(
                        PacketKind::TfrcFeedback,
                        *feedback_len,
                        0,
                        seq,
                        Header::MediaFeedback(MediaFeedback::Tfrc(fb)),
                    );
                    ctx.send(pkt);
                }
            }
            ReceiverCc::Rmcat(generator) => {
                let mut n = 0i64;
                while let Some(fb) = generator.poll_feedback(rt(now)) {
                    let size = u32::try_from(fb.wire_len())
                        .unwrap_or(u32::MAX)
                        .saturating_add(RTCP_OVERHEAD);
                    let pkt = ctx.packet(
                        PacketKind::Rtcp,
                        size,
                        0,
                        n,
                        Header::MediaFeedback(MediaFeedback::Rmcat(Box::new(fb))),
                    );
                    ctx.send(pkt);
                    n += 1;
                    if n as usize >= MAX_BURST {
                        debug_assert!(false, "the feedback generator never ran dry");
                        return;
                    }
                }
            }
        }
    }
}

impl MediaReceiver {
    fn arm(&self, ctx: &mut AgentCtx<'_>) {
        match &self.cc {
            ReceiverCc::Tfrc { receiver, .. } => ctx.sync_timer(WAKE, receiver.poll_timeout()),
            ReceiverCc::Rmcat(generator) => ctx.sync_timer(
                WAKE,
                generator
                    .poll_timeout()
                    .map(|t| Time::from_nanos(t.as_nanos())),
            ),
        }
    }
}

impl Agent for MediaReceiver {
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        self.arm(ctx);
    }

    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
        self.arm(ctx);
    }

    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        let Header::MediaData(d) = &pkt.header else {
            return;
        };
        let now = ctx.now();
        self.frames.on_packet(ns(now), d.tag, pkt.payload);
        match (&mut self.cc, &d.cc) {
            (ReceiverCc::Tfrc { receiver, .. }, MediaCcHeader::Tfrc(hdr)) => {
                let arrival = Arrival {
                    wire_len: pkt.size,
                    ce: pkt.ce,
                    ttl: Some(pkt.ttl),
                };
                receiver.on_data_with(now, hdr, arrival);
            }
            (ReceiverCc::Rmcat(generator), MediaCcHeader::Rmcat { seq }) => {
                // ECN codepoint as in the IP header: CE 3, ECT(0) 2, Not-ECT 0.
                let ecn = if pkt.ce {
                    3
                } else if pkt.ect {
                    2
                } else {
                    0
                };
                generator.on_packet(rt(now), *seq, pkt.size, ecn);
            }
            _ => {}
        }
        self.answer(ctx);
        self.arm(ctx);
    }

    fn on_timer(&mut self, _timer: TimerId, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        match &mut self.cc {
            ReceiverCc::Tfrc { receiver, .. } => {
                if receiver.poll_timeout().is_some_and(|t| t <= now) {
                    receiver.on_timeout(now);
                }
            }
            // The generator's reports fall due by time alone: `answer` polls them.
            ReceiverCc::Rmcat(_) => {}
        }
        self.answer(ctx);
        self.arm(ctx);
    }
}
