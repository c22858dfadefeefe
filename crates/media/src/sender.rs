//! The sending application: source, packetiser and send buffer.
//!
//! Each frame is split into `⌈size / max_payload⌉` packets of balanced sizes (the first
//! `size mod n` one byte larger), as an RTP packetiser does: a packet never carries two
//! frames. Packets wait in a FIFO send buffer until the transport takes them
//! ([`MediaSender::pop_packet`]). When the transport cannot keep up, the buffer would grow
//! without bound; like a real encoder the application then skips frames: a frame due while the
//! oldest buffered packet has waited longer than `max_buffer_delay` is not encoded (it is
//! logged as skipped, and the receiver sees a freeze).

use std::collections::VecDeque;

use rand::Rng;

use crate::{check, ConfigError, Frame, Nanos, Source};

/// The encoder target (bit/s of payload) that fills a packet budget of `packets_per_sec`
/// packets of at most `max_payload` bytes at `fps` frames per second.
///
/// A frame of `S` bytes takes `⌈S / max_payload⌉` packets; with the remainder of `S` uniform,
/// that is `S / max_payload + ½` on average, so a rate `R` costs
/// `R / (8·max_payload) + fps/2` packets per second. Solving for `R` gives
/// `8·max_payload·(packets_per_sec − fps/2)` (0 when the budget does not cover half a packet
/// per frame). A transport that limits packets, not bytes (TFRC with its segment size `s`,
/// RFC 5348 §4.1), sets its application's target this way.
pub fn target_for_packet_rate(packets_per_sec: f64, max_payload: u32, fps: f64) -> f64 {
    (8.0 * f64::from(max_payload) * (packets_per_sec - fps / 2.0)).max(0.0)
}

/// What a media packet carries besides its payload: which frame, which piece of it. RTP carries
/// the same (timestamp and marker bit); 8 bytes, so it fits a simulator header cheaply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PacketTag {
    /// The frame's number ([`Frame::id`]).
    pub frame: u32,
    /// This packet's index within the frame, from 0.
    pub index: u16,
    /// The frame's packet count.
    pub count: u16,
}

/// A packet ready for the transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaPacket {
    /// Frame and piece.
    pub tag: PacketTag,
    /// Media payload bytes.
    pub payload: u32,
    /// The frame's capture time (how long the packet waited is `now − capture`).
    pub capture: Nanos,
}

/// One frame as the sender produced (or skipped) it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRecord {
    /// The frame.
    pub frame: Frame,
    /// Packets it was split into (0 when skipped).
    pub packets: u16,
    /// Not encoded because the send buffer was too old.
    pub skipped: bool,
}

/// Counters of the sending application.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderCounters {
    /// Frames produced by the source (skipped ones included).
    pub frames: u64,
    /// Frames skipped.
    pub skipped: u64,
    /// Packets queued.
    pub packets: u64,
    /// Payload bytes queued.
    pub bytes: u64,
    /// Packets handed to the transport.
    pub sent_packets: u64,
    /// Payload bytes handed to the transport.
    pub sent_bytes: u64,
}

/// The sending application.
#[derive(Clone, Debug)]
pub struct MediaSender {
    source: Source,
    max_payload: u32,
    max_buffer_delay: Nanos,
    buffer: VecDeque<MediaPacket>,
    log: Vec<FrameRecord>,
    counters: SenderCounters,
}

impl MediaSender {
    /// An application sending `source` in packets of at most `max_payload` bytes, skipping
    /// frames while its oldest buffered packet is older than `max_buffer_delay`.
    pub fn new(
        source: Source,
        max_payload: u32,
        max_buffer_delay: Nanos,
    ) -> Result<Self, ConfigError> {
        check(max_payload > 0, "max_payload", "must be at least 1 byte")?;
        check(max_buffer_delay > 0, "max_buffer_delay", "must be positive")?;
        Ok(MediaSender {
            source,
            max_payload,
            max_buffer_delay,
            buffer: VecDeque::new(),
            log: Vec::new(),
            counters: SenderCounters::default(),
        })
    }

    /// The largest payload of a packet.
    pub fn max_payload(&self) -> u32 {
        self.max_payload
    }

    /// The source.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Start the source at `now`.
    pub fn start(&mut self, now: Nanos) {
        self.source.start(now);
    }

    /// Stop the source; packets already buffered may still be sent.
    pub fn stop(&mut self) {
        self.source.stop();
    }

    /// The controller's target rate for the encoder, bit/s.
    pub fn set_target_rate(&mut self, now: Nanos, bps: f64) {
        self.source.set_target(now, bps);
    }

    /// When the application next needs to run (its next frame).
    pub fn next_wake(&self) -> Option<Nanos> {
        self.source.next_frame_at()
    }

    /// Produce every frame due at or before `now`; returns the packets added to the buffer.
    pub fn on_wake<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) -> u64 {
        let mut added = 0;
        while self.source.next_frame_at().is_some_and(|t| t <= now) {
            let Some(frame) = self.source.next_frame(rng) else {
                break;
            };
            added += self.push_frame(frame);
        }
        added
    }

    fn push_frame(&mut self, frame: Frame) -> u64 {
        self.counters.frames += 1;
        let stale = self
            .buffer
            .front()
            .is_some_and(|p| frame.capture.saturating_sub(p.capture) > self.max_buffer_delay);
        if stale {
            self.counters.skipped += 1;
            self.log.push(FrameRecord {
                frame,
                packets: 0,
                skipped: true,
            });
            return 0;
        }
        let n = frame
            .size
            .div_ceil(self.max_payload)
            .clamp(1, u32::from(u16::MAX));
        let (base, extra) = (frame.size / n, frame.size % n);
        for i in 0..n {
            let payload = base + u32::from(i < extra);
            self.buffer.push_back(MediaPacket {
                tag: PacketTag {
                    frame: frame.id,
                    index: i as u16,
                    count: n as u16,
                },
                payload,
                capture: frame.capture,
            });
        }
        self.counters.packets += u64::from(n);
        self.counters.bytes += u64::from(frame.size);
        self.log.push(FrameRecord {
            frame,
            packets: n as u16,
            skipped: false,
        });
        u64::from(n)
    }

    /// The packet [`MediaSender::pop_packet`] would return next (a window-based transport asks
    /// whether it fits before taking it).
    pub fn peek_packet(&self) -> Option<&MediaPacket> {
        self.buffer.front()
    }

    /// Payload bytes waiting in the send buffer.
    pub fn buffered_bytes(&self) -> u64 {
        self.counters.bytes - self.counters.sent_bytes
    }

    /// The next packet for the transport, if any.
    pub fn pop_packet(&mut self, _now: Nanos) -> Option<MediaPacket> {
        let p = self.buffer.pop_front()?;
        self.counters.sent_packets += 1;
        self.counters.sent_bytes += u64::from(p.payload);
        Some(p)
    }

    /// Packets waiting in the send buffer.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Every frame produced so far, in order.
    pub fn frames(&self) -> &[FrameRecord] {
        &self.log
    }

    /// The counters.
    pub fn counters(&self) -> SenderCounters {
        self.counters
    }
}
