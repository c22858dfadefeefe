//! The simulator's packet store. A packet lives here from the moment it enters the network
//! until it is delivered or dropped; queues and arrival events hold 4-byte handles
//! ([`crate::queue::Slot`], `Event::Arrive`) instead of moving the 136-byte packet at every
//! enqueue, dequeue and hop. Freed slots are reused last-in first-out, so the
//! store stays as large as the most packets ever in the network at once and recently touched
//! (cached) slots are reused first; nothing is allocated per packet once it has grown.
//!
//! A packet is written once, where it stays: an agent's send builds it in a free slot
//! ([`Outbox`]), and the agent it is delivered to reads it there, while the other slots take
//! what that agent sends in reply; its slot is freed when the call returns.

use crate::packet::Packet;

/// Slots of packets in the network, addressed by `u32` handles. A freed slot keeps its dead
/// packet until it is reused (no drop or write per free).
#[derive(Debug, Default)]
pub(crate) struct PacketStore {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// Packets sent in an agent call while no slot was free: they take the next handles, in
    /// order, when the call returns ([`PacketStore::settle`]).
    extra: Vec<Packet>,
    /// Which slots hold a live packet (debug builds check every handle against it).
    #[cfg(debug_assertions)]
    live: Vec<bool>,
}

/// No packet lent out: every slot is open to sends ([`PacketStore::lend`]).
pub(crate) const NONE_LENT: u32 = u32::MAX;

impl PacketStore {
    /// Store a packet; its handle stays valid until [`PacketStore::free`].
    #[inline]
    pub fn insert(&mut self, pkt: Packet) -> u32 {
        let (mut out, _) = self.lend(NONE_LENT);
        let id = out.put(pkt);
        self.settle();
        id
    }

    /// Free a packet's slot.
    #[inline]
    pub fn free(&mut self, id: u32) {
        #[cfg(debug_assertions)]
        {
            assert!(
                self.live[id as usize],
                "a live packet handle (simulator invariant)"
            );
            self.live[id as usize] = false;
        }
        self.free.push(id);
    }

    /// The store during an agent call: the packet `lent` (delivered to the agent; or
    /// [`NONE_LENT`]) to read, and an [`Outbox`] for what the agent sends. Call
    /// [`PacketStore::settle`] when the call returns.
    #[inline]
    pub fn lend(&mut self, lent: u32) -> (Outbox<'_>, Option<&Packet>) {
        let base = self.slots.len() as u32;
        let at = (lent as usize).min(self.slots.len());
        #[cfg(debug_assertions)]
        assert!(
            at == self.slots.len() || self.live[at],
            "a live packet handle (simulator invariant)"
        );
        let (lo, rest) = self.slots.split_at_mut(at);
        let (pkt, hi) = match rest.split_first_mut() {
            Some((p, hi)) => (Some(&*p), hi),
            None => (None, Default::default()),
        };
        let out = Outbox {
            lo,
            hi,
            at: at as u32,
            base,
            free: &mut self.free,
            extra: &mut self.extra,
            #[cfg(debug_assertions)]
            live: &mut self.live,
        };
        (out, pkt)
    }

    /// The packets an agent sent while no slot was free take their handles.
    #[inline]
    pub fn settle(&mut self) {
        if !self.extra.is_empty() {
            self.grow();
        }
    }

    #[cold]
    fn grow(&mut self) {
        // 2^32 packets at once would be over 500 GiB: memory, and the packet ceiling
        // (`Limits::max_packets_in_network`), run out long before the handles.
        assert!(
            self.slots.len() + self.extra.len() < NONE_LENT as usize,
            "fewer than 2^32 packets in the network"
        );
        #[cfg(debug_assertions)]
        self.live.extend(self.extra.iter().map(|_| true));
        self.slots.append(&mut self.extra);
    }
}

/// Where an agent's sends go during a call: the free slots of the store (split around the
/// packet lent to the agent, which stays where it is), then new slots past its end.
pub(crate) struct Outbox<'a> {
    lo: &'a mut [Packet],
    hi: &'a mut [Packet],
    /// The lent packet's slot (`lo.len()`); `hi` starts after it.
    at: u32,
    /// The store's length: the handle of the first of `extra`.
    base: u32,
    free: &'a mut Vec<u32>,
    extra: &'a mut Vec<Packet>,
    #[cfg(debug_assertions)]
    live: &'a mut Vec<bool>,
}

impl Outbox<'_> {
    /// A slot for a new packet and its handle: a free one (never the lent packet's: it is not
    /// free until the call returns), or a new one past the store's end. Its old content is
    /// to be overwritten.
    #[inline]
    pub fn slot(&mut self) -> (u32, &mut Packet) {
        let Some(id) = self.free.pop() else {
            return self.new_slot();
        };
        #[cfg(debug_assertions)]
        {
            assert!(!self.live[id as usize], "a free slot (simulator invariant)");
            self.live[id as usize] = true;
        }
        let p = if id < self.at {
            &mut self.lo[id as usize]
        } else {
            &mut self.hi[(id - self.at - 1) as usize]
        };
        (id, p)
    }

    /// Store `pkt`: its handle.
    #[inline]
    pub fn put(&mut self, pkt: Packet) -> u32 {
        let (id, p) = self.slot();
        *p = pkt;
        id
    }

    #[cold]
    fn new_slot(&mut self) -> (u32, &mut Packet) {
        let id = self.base + self.extra.len() as u32;
        self.extra.push(vacant());
        (id, self.extra.last_mut().expect("just pushed"))
    }
}

/// The content of a new slot before its packet is written.
fn vacant() -> Packet {
    use crate::packet::{Direction, Header, PacketKind};
    Packet {
        uid: 0,
        flow: 0,
        dir: Direction::Forward,
        src: 0,
        dst: 0,
        kind: PacketKind::Cbr,
        size: 0,
        payload: 0,
        seq: 0,
        sent_at: crate::Time::ZERO,
        ttl: 0,
        initial_ttl: 0,
        ect: false,
        ce: false,
        protected: false,
        exposed: false,
        header: Header::None,
    }
}

impl PacketStore {
    /// Heap bytes held: a slot for each of the most packets ever in the network at once, and
    /// the free list.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Packet>() + self.free.capacity() * size_of::<u32>()
    }
}

impl std::ops::Index<u32> for PacketStore {
    type Output = Packet;
    #[inline]
    fn index(&self, id: u32) -> &Packet {
        #[cfg(debug_assertions)]
        assert!(
            self.live[id as usize],
            "a live packet handle (simulator invariant)"
        );
        &self.slots[id as usize]
    }
}

impl std::ops::IndexMut<u32> for PacketStore {
    #[inline]
    fn index_mut(&mut self, id: u32) -> &mut Packet {
        #[cfg(debug_assertions)]
        assert!(
            self.live[id as usize],
            "a live packet handle (simulator invariant)"
        );
        &mut self.slots[id as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::packet;

    #[test]
    fn handles_are_reused_last_in_first_out() {
        let mut s = PacketStore::default();
        let a = s.insert(packet(1, 100));
        let b = s.insert(packet(2, 200));
        assert_eq!((a, b), (0, 1));
        assert_eq!(s[b].seq, 2);
        s[a].ttl = 7;
        assert_eq!(s[a].ttl, 7);
        s.free(a);
        let c = s.insert(packet(3, 300));
        assert_eq!(c, a, "the freed slot is reused");
        assert_eq!((s[c].seq, s[b].seq), (3, 2));
    }

    #[test]
    fn a_lent_packet_stays_put_while_sends_fill_the_other_slots() {
        let mut s = PacketStore::default();
        let ids: Vec<u32> = (0..4).map(|i| s.insert(packet(i, 100))).collect();
        s.free(ids[0]);
        s.free(ids[3]);
        let (mut out, lent) = s.lend(ids[2]);
        assert_eq!(lent.map(|p| p.seq), Some(2));
        // Free slots on both sides of the lent one, then new slots past the end.
        let sent: Vec<u32> = (10..13).map(|i| out.put(packet(i, 100))).collect();
        assert_eq!(sent, vec![3, 0, 4]);
        s.settle();
        s.free(ids[2]);
        assert_eq!(s[3].seq, 10);
        assert_eq!(s[0].seq, 11);
        assert_eq!(s[4].seq, 12);
        assert_eq!(s[1].seq, 1, "the others are untouched");
        assert_eq!(
            s.insert(packet(20, 100)),
            2,
            "the lent slot is freed after the call"
        );
    }
}
