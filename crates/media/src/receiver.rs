//! The receiving application: frames reassembled from their packets.
//!
//! The reassembler keeps, per frame number, how many of its packets arrived and when the first
//! and the last did; a frame is complete when all `count` packets arrived. What that means for a
//! viewer (delay, deadline, freezes) needs the sender's frame log and is computed by
//! [`crate::results::FrameResults`].

use crate::sender::PacketTag;
use crate::Nanos;

/// A frame number this far beyond the highest seen is ignored (a corrupt tag must not make the
/// receiver allocate without bound): over an hour of frames at 240 frames/s.
const MAX_FRAME_JUMP: u32 = 1 << 20;

/// What arrived of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameArrival {
    /// Packets received (duplicates not counted twice only if the transport does not
    /// duplicate; TFRC never retransmits).
    pub received: u16,
    /// The frame's packet count, from the tags.
    pub count: u16,
    /// Arrival of its first packet.
    pub first: Nanos,
    /// Arrival of its last packet so far.
    pub last: Nanos,
    /// Payload bytes received.
    pub bytes: u32,
}

impl FrameArrival {
    /// Every packet arrived.
    pub fn complete(&self) -> bool {
        self.count > 0 && self.received >= self.count
    }
}

/// Frames as they arrive.
#[derive(Clone, Debug, Default)]
pub struct Reassembler {
    frames: Vec<FrameArrival>,
    packets: u64,
    bytes: u64,
    ignored: u64,
}

impl Reassembler {
    /// An empty reassembler.
    pub fn new() -> Self {
        Reassembler::default()
    }

    /// A packet with `tag` and `payload` bytes arrived at `now`.
    pub fn on_packet(&mut self, now: Nanos, tag: PacketTag, payload: u32) {
        let id = tag.frame as usize;
        if tag.count == 0
            || tag.index >= tag.count
            || tag.frame > (self.frames.len() as u32).saturating_add(MAX_FRAME_JUMP)
        {
            self.ignored += 1;
            return;
        }
        if id >= self.frames.len() {
            self.frames.resize(id + 1, FrameArrival::default());
        }
        let f = &mut self.frames[id];
        if f.received == 0 {
            f.first = now;
            f.count = tag.count;
        }
        f.received = f.received.saturating_add(1);
        f.last = now;
        f.bytes = f.bytes.saturating_add(payload);
        self.packets += 1;
        self.bytes += u64::from(payload);
    }

    /// What arrived of frame `id` (`None` if nothing did).
    pub fn frame(&self, id: u32) -> Option<&FrameArrival> {
        self.frames.get(id as usize).filter(|f| f.received > 0)
    }

    /// Packets received.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Payload bytes received.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Packets whose tag made no sense (index beyond count, absurd frame number).
    pub fn ignored(&self) -> u64 {
        self.ignored
    }
}
