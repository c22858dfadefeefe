//! Random streams: one seed per run, one independent stream per component.
//!
//! Each component (an agent, a link's loss model, a queue, a wireless hop, a node's delay) draws from its own
//! ChaCha8 stream selected by (run seed, component kind, component index). Adding a flow or a
//! link therefore never shifts another component's random numbers, and identical inputs give
//! identical outputs.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The kinds of component that own a random stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    /// A transport agent; index = 2·flow (sender) or 2·flow + 1 (receiver).
    Agent,
    /// A link direction's loss model; index = link id.
    LinkLoss,
    /// A link direction's queue (RED's drop decisions); index = link id.
    Queue,
    /// A wireless hop's per-attempt losses and backoffs; index = link id.
    Wireless,
    /// A node's random processing delay; index = node id.
    Node,
    /// The link emulator's (netemu's) random arrival delay at a link direction; index = link
    /// id. The simulator never draws from it: it is here so that every stream of a run is
    /// split from the one seed in one place, and no two components can share a stream.
    LinkJitter,
}

impl Component {
    fn tag(self) -> u64 {
        match self {
            Component::Agent => 1,
            Component::LinkLoss => 2,
            Component::Queue => 3,
            Component::Wireless => 4,
            Component::Node => 5,
            Component::LinkJitter => 6,
        }
    }
}

/// The random stream of component `index` of kind `kind` in a run seeded with `seed`.
///
/// ChaCha's 64-bit stream id keeps the streams independent: the key comes from the seed and the
/// stream id from (kind, index).
pub fn stream(seed: u64, kind: Component, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream((kind.tag() << 56) ^ (index & ((1 << 56) - 1)));
    rng
}

/// A component's stream, created at its first draw: [`stream`]`(seed, kind, index)` then, so
/// its numbers are the same as if it had been created with the network. A ChaCha stream is
/// 320 bytes and most links never draw (a DropTail queue, no loss model, no wireless hop): the
/// three streams of each link direction were a third of a dumbbell flow's memory.
#[derive(Clone, Debug)]
pub struct LazyStream {
    seed: u64,
    kind: Component,
    index: u64,
    rng: Option<Box<ChaCha8Rng>>,
}

impl LazyStream {
    /// The stream of component `index` of kind `kind` in a run seeded with `seed`, not
    /// created yet.
    pub fn new(seed: u64, kind: Component, index: u64) -> Self {
        LazyStream {
            seed,
            kind,
            index,
            rng: None,
        }
    }

    /// Whether the stream has been drawn from.
    pub fn drawn(&self) -> bool {
        self.rng.is_some()
    }

    #[inline]
    fn rng(&mut self) -> &mut ChaCha8Rng {
        let (seed, kind, index) = (self.seed, self.kind, self.index);
        self.rng
            .get_or_insert_with(|| Box::new(stream(seed, kind, index)))
    }
}

// Each method forwards to the same method of the stream, so every `Rng` draw (which goes
// through these) takes the numbers an eagerly created stream would give.
impl RngCore for LazyStream {
    fn next_u32(&mut self) -> u32 {
        self.rng().next_u32()
    }

    fn next_u64(&mut self) -> u64 {
        self.rng().next_u64()
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.rng().fill_bytes(dest)
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.rng().try_fill_bytes(dest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a1 = stream(7, Component::Agent, 3).next_u64();
        let a2 = stream(7, Component::Agent, 3).next_u64();
        assert_eq!(a1, a2, "same (seed, kind, index) must give the same stream");
        assert_ne!(a1, stream(7, Component::Agent, 4).next_u64());
        assert_ne!(a1, stream(7, Component::LinkLoss, 3).next_u64());
        assert_ne!(a1, stream(8, Component::Agent, 3).next_u64());
        assert_ne!(
            stream(7, Component::Queue, 3).next_u64(),
            stream(7, Component::LinkJitter, 3).next_u64()
        );
    }

    #[test]
    fn a_lazy_stream_draws_what_the_stream_would() {
        use rand::Rng;
        let mut eager = stream(11, Component::Queue, 5);
        let mut lazy = LazyStream::new(11, Component::Queue, 5);
        assert!(!lazy.drawn());
        let a: (f64, u32, u64) = (eager.gen(), eager.gen_range(0..1000), eager.next_u64());
        let b: (f64, u32, u64) = (lazy.gen(), lazy.gen_range(0..1000), lazy.next_u64());
        assert_eq!(a, b);
        assert!(lazy.drawn());
        let (mut x, mut y) = ([0u8; 13], [0u8; 13]);
        eager.fill_bytes(&mut x);
        lazy.fill_bytes(&mut y);
        assert_eq!(x, y);
        assert_ne!(
            LazyStream::new(11, Component::Queue, 6).next_u64(),
            stream(11, Component::Queue, 5).next_u64()
        );
    }
}
