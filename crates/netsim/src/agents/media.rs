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
//! To add a controller: a variant in [`SenderCc`], [`ReceiverCc`], [`MediaCcHeader`] and
//! [`MediaFeedback`], a constructor beside [`MediaSender::tfrc`], and one arm in each `match`
//! below.

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

fn ns(t: Time) -> u64 {
    t.as_nanos()
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
        let n = self.app.on_wake(ns(now), ctx.rng());
        match &mut self.cc {
            SenderCc::Tfrc { sender, .. } => sender.push_packets(now, n),
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
        }
    }
}

impl MediaSender {
    /// Arm the wake-up at the earliest of what the agent waits for.
    fn arm(&self, ctx: &mut AgentCtx<'_>) {
        let app = self.app.next_wake().map(Time::from_nanos);
        let cc = match &self.cc {
            SenderCc::Tfrc { sender, .. } => sender.poll_timeout(),
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
        }
    }
}

impl MediaReceiver {
    fn arm(&self, ctx: &mut AgentCtx<'_>) {
        match &self.cc {
            ReceiverCc::Tfrc { receiver, .. } => ctx.sync_timer(WAKE, receiver.poll_timeout()),
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
        }
        self.answer(ctx);
        self.arm(ctx);
    }
}
