//! Queues at the sending end of a link: a closed enum dispatched by `match`.

mod droptail;
mod red;

pub use droptail::{DropTail, DropTailConfig};
pub use red::{
    AdaptiveQ3, AdaptiveRed, Red, RedAverage, RedConfig, RedCounters, RedMaxP, RedThresholds,
};

use rand::RngCore;

use crate::packet::Packet;
use crate::stats::DropCause;
use crate::Time;

/// What a queue holds: a packet, or the simulator's handle to one, with what queue
/// disciplines read (size) and may change (the ECN mark).
pub trait Queued {
    /// Size on the wire in bytes.
    fn size(&self) -> u32;
    /// ECN-capable transport.
    fn ect(&self) -> bool;
    /// Set congestion experienced (an AQM that marks instead of dropping).
    fn mark_ce(&mut self);
}

/// A packet as the simulator queues it: a handle into its packet store plus the fields queue
/// disciplines read, 16 bytes instead of the packet's 136 (queues at 1 Gb/s hold hundreds,
/// and every enqueue and dequeue moved the whole packet). A mark set while queued is copied
/// to the packet when it leaves the queue.
///
/// The simulator also carries a packet's source route and remaining TTL here, and in its
/// arrival event, so that a hop reads neither the packet nor the routing table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Index in the simulator's packet store.
    pub id: u32,
    /// Size on the wire in bytes.
    pub size: u32,
    /// The simulator's source-route cursor: the index, in its path arena, of the link the
    /// packet is queued on or crossing (0 outside the simulator: no route).
    pub path: u32,
    /// Remaining TTL while the packet is between nodes (the packet's own copy is brought up
    /// to date where it is read: traces, delivery, expiry).
    pub ttl: u8,
    /// ECN-capable transport.
    pub ect: bool,
    /// Marked congestion experienced while queued.
    pub ce: bool,
}

impl Slot {
    /// A handle for a queue outside the simulator: no route, no TTL, not marked.
    pub fn new(id: u32, size: u32, ect: bool) -> Slot {
        Slot {
            id,
            size,
            path: 0,
            ttl: 0,
            ect,
            ce: false,
        }
    }
}

/// `Packet` and `Slot` name the fields queue disciplines use alike.
macro_rules! queued_by_fields {
    ($($t:ty),*) => {$(
        impl Queued for $t {
            #[inline]
            fn size(&self) -> u32 {
                self.size
            }
            #[inline]
            fn ect(&self) -> bool {
                self.ect
            }
            #[inline]
            fn mark_ce(&mut self) {
                self.ce = true;
            }
        }
    )*};
}

queued_by_fields!(Packet, Slot);

/// A packet a queue refused or evicted, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Dropped<P = Packet> {
    /// The dropped packet.
    pub pkt: P,
    /// [`DropCause::Queue`] for overflow, [`DropCause::Aqm`] for an early drop.
    pub cause: DropCause,
}

/// Which queue discipline a link direction uses.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    /// NS-2 `Queue/DropTail`.
    DropTail(DropTailConfig),
    /// NS-2 `Queue/RED`.
    Red(RedConfig),
}

impl Default for QueueConfig {
    /// DropTail with NS-2's limit of 50 packets.
    fn default() -> Self {
        QueueConfig::DropTail(DropTailConfig::default())
    }
}

/// A queue instance holding `P`s.
#[derive(Clone, Debug)]
pub enum Queue<P = Packet> {
    /// DropTail.
    DropTail(DropTail<P>),
    /// RED (boxed: its state is large and links are few).
    Red(Box<Red<P>>),
}

impl<P: Queued> Queue<P> {
    /// A queue for a link of `bandwidth_bps` and `delay_secs` (RED derives its parameters from
    /// them, as NS-2 does when the queue is attached to its link).
    pub fn new(cfg: &QueueConfig, bandwidth_bps: f64, delay_secs: f64) -> Queue<P> {
        match cfg {
            QueueConfig::DropTail(c) => Queue::DropTail(DropTail::new(c.clone())),
            QueueConfig::Red(c) => {
                Queue::Red(Box::new(Red::new(c.clone(), bandwidth_bps, delay_secs)))
            }
        }
    }

    /// Offer a packet arriving at `now`; returns the packet dropped, if any.
    pub fn enqueue(&mut self, pkt: P, now: Time, rng: &mut impl RngCore) -> Option<Dropped<P>> {
        self.enqueue_at(pkt, || now, rng)
    }

    /// [`Queue::enqueue`] with the time asked of `now` only by a discipline that reads it
    /// (RED; the simulator's clock is rounded from a double when it is read).
    #[inline]
    pub fn enqueue_at(
        &mut self,
        pkt: P,
        now: impl FnOnce() -> Time,
        rng: &mut impl RngCore,
    ) -> Option<Dropped<P>> {
        match self {
            Queue::DropTail(q) => q.enqueue(pkt),
            Queue::Red(q) => q.enqueue_at(pkt, now, rng),
        }
    }

    /// Whether a packet arriving at an idle link would go through this queue untouched
    /// (`enqueue` then `dequeue` give it back and leave no state behind), so the link can
    /// transmit it at once. Only an empty DropTail that accepts it: RED updates its average
    /// on every arrival.
    #[inline]
    pub fn passes_through(&self, pkt: &P) -> bool {
        match self {
            Queue::DropTail(q) => q.passes_through(pkt),
            Queue::Red(_) => false,
        }
    }

    /// A packet arriving at an idle link (so an empty queue): whether it goes straight to
    /// the wire, as an enqueue then a dequeue would send it. DropTail: `passes_through`. RED
    /// updates its state as the two would (its average moves on every arrival) and refuses
    /// only with a zero limit; a refusal changes nothing. `went_idle`: the link's
    /// transmission ended at that double time with nothing queued and the queue has not been
    /// told ([`Queue::went_idle_secs`] is done first, refused or not). `now_secs`: now on the
    /// simulator's double clock (RED's idle decay reads it).
    #[inline]
    pub(crate) fn pass_idle(&mut self, went_idle: Option<f64>, pkt: &P, now_secs: f64) -> bool {
        match self {
            Queue::DropTail(q) => q.passes_through(pkt),
            Queue::Red(q) => q.pass_idle(went_idle, pkt.size(), now_secs),
        }
    }

    /// Whether `passes_through` holds for every packet while the queue is empty: a DropTail
    /// counting packets with a limit above one (in bytes, it depends on the packet's size).
    pub(crate) fn passes_any_when_empty(&self) -> bool {
        match self {
            Queue::DropTail(q) => q.passes_any_when_empty(),
            Queue::Red(_) => false,
        }
    }

    /// The next packet to transmit, called when the link becomes free.
    pub fn dequeue(&mut self, now: Time) -> Option<P> {
        self.dequeue_at(|| now)
    }

    /// [`Queue::dequeue`] with the time asked of `now` only by a discipline that reads it
    /// (RED).
    #[inline]
    pub fn dequeue_at(&mut self, now: impl FnOnce() -> Time) -> Option<P> {
        match self {
            Queue::DropTail(q) => q.dequeue(),
            Queue::Red(q) => q.dequeue_at(now),
        }
    }

    /// Waiting packets (not counting the one in transmission, as NS-2).
    pub fn len(&self) -> usize {
        match self {
            Queue::DropTail(q) => q.len(),
            Queue::Red(q) => q.len(),
        }
    }

    /// True when no packet waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waiting packets and bytes (one match on the discipline for both).
    #[inline]
    pub fn lens(&self) -> (u64, u64) {
        match self {
            Queue::DropTail(q) => (q.len() as u64, q.byte_len()),
            Queue::Red(q) => (q.len() as u64, q.byte_len()),
        }
    }

    /// Waiting bytes.
    pub fn byte_len(&self) -> u64 {
        match self {
            Queue::DropTail(q) => q.byte_len(),
            Queue::Red(q) => q.byte_len(),
        }
    }

    /// The waiting packets, head first.
    pub fn iter(&self) -> impl Iterator<Item = &P> {
        match self {
            Queue::DropTail(q) => q.packets().iter(),
            Queue::Red(q) => q.packets().iter(),
        }
    }

    /// Remove every waiting packet (link down: NS-2 resets the queue).
    pub fn clear(&mut self, now: Time) -> std::collections::VecDeque<P> {
        match self {
            Queue::DropTail(q) => q.clear(),
            Queue::Red(q) => q.clear(now),
        }
    }

    /// Set `limit_` at run time (NS-2 `$ns queue-limit` during a run): later arrivals see the
    /// new limit; packets already waiting stay, even above it.
    pub fn set_limit(&mut self, limit: u32) {
        match self {
            Queue::DropTail(q) => q.set_limit(limit),
            Queue::Red(q) => q.set_limit(limit),
        }
    }

    /// The RED state, for inspection.
    pub fn as_red(&self) -> Option<&Red<P>> {
        match self {
            Queue::Red(r) => Some(r),
            Queue::DropTail(_) => None,
        }
    }

    /// The link went idle at `secs` on the simulator's double clock with nothing waiting:
    /// what an empty dequeue at the end of a transmission does (RED starts its idle period;
    /// DropTail has nothing to do), without a dequeue's work for the disciplines that ignore
    /// it. RED rounds the time only if an arrival reads it.
    #[inline(never)]
    pub(crate) fn went_idle_secs(&mut self, secs: f64) {
        if let Queue::Red(r) = self {
            r.went_idle_secs(secs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::packet;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn droptail_limit_includes_packet_in_transmission() {
        // NS-2 (`docs/simulator.md`, "Queues"): limit 10 → at most 9 waiting (the 10th slot is
        // the packet on the wire).
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut q = Queue::new(
            &QueueConfig::DropTail(DropTailConfig {
                limit: 10,
                ..Default::default()
            }),
            1e6,
            0.0,
        );
        let drops: Vec<i64> = (0..12)
            .filter_map(|i| q.enqueue(packet(i, 100), Time::ZERO, &mut rng))
            .map(|d| d.pkt.seq)
            .collect();
        assert_eq!(q.len(), 9);
        assert_eq!(drops, vec![9, 10, 11]);
        assert_eq!(q.dequeue(Time::ZERO).map(|p| p.seq), Some(0));
    }

    #[test]
    fn droptail_byte_mode_and_drop_front() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        // Cap 2 · 500 = 1000 bytes: bytes + size ≥ 1000 drops.
        let mut q = Queue::new(
            &QueueConfig::DropTail(DropTailConfig {
                limit: 2,
                in_bytes: true,
                drop_front: true,
                ..Default::default()
            }),
            1e6,
            0.0,
        );
        assert!(q.enqueue(packet(0, 400), Time::ZERO, &mut rng).is_none());
        assert!(q.enqueue(packet(1, 500), Time::ZERO, &mut rng).is_none());
        // 900 + 100 ≥ 1000: drop the head (seq 0), keep the arrival.
        let d = q.enqueue(packet(2, 100), Time::ZERO, &mut rng).unwrap();
        assert_eq!((d.pkt.seq, d.cause), (0, DropCause::Queue));
        assert_eq!(q.byte_len(), 600);
        assert_eq!(q.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1, 2]);
    }
}
