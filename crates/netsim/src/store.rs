//! The simulator's packet store. A packet lives here from the moment it enters the network
//! until it is delivered or dropped; queues and arrival events hold 4-byte handles
//! ([`crate::queue::Slot`], `Event::Arrive`) instead of moving the 128-byte packet at every
//! enqueue, dequeue and hop. Freed slots are reused last-in first-out, so the
//! store stays as large as the most packets ever in the network at once and recently touched
//! (cached) slots are reused first; nothing is allocated per packet once it has grown.

use crate::packet::Packet;

/// Slots of packets in the network, addressed by `u32` handles.
#[derive(Debug, Default)]
pub(crate) struct PacketStore {
    slots: Vec<Option<Packet>>,
    free: Vec<u32>,
}

impl PacketStore {
    /// Store a packet; its handle stays valid until [`PacketStore::remove`].
    #[inline]
    pub fn insert(&mut self, pkt: Packet) -> u32 {
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = Some(pkt);
            return id;
        }
        // 2^32 packets at once would be over 500 GiB: memory, and the packet ceiling
        // (`Limits::max_packets_in_network`), run out long before the handles.
        let id = u32::try_from(self.slots.len()).expect("fewer than 2^32 packets in the network");
        self.slots.push(Some(pkt));
        id
    }

    /// Free a packet's slot (dropping the packet).
    #[inline]
    pub fn free(&mut self, id: u32) {
        let old = self.slots[id as usize].take();
        debug_assert!(old.is_some(), "a live packet handle (simulator invariant)");
        self.free.push(id);
    }

    /// Take a packet out of the store, freeing its handle.
    #[inline]
    pub fn remove(&mut self, id: u32) -> Packet {
        // The handle is freed first: with the push (which may grow `free`) after the take,
        // the packet was copied twice, into a temporary and then out.
        self.free.push(id);
        self.slots[id as usize]
            .take()
            .expect("a live packet handle (simulator invariant)")
    }
}

impl PacketStore {
    /// Heap bytes held: a slot for each of the most packets ever in the network at once, and
    /// the free list.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Option<Packet>>()
            + self.free.capacity() * size_of::<u32>()
    }
}

impl std::ops::Index<u32> for PacketStore {
    type Output = Packet;
    #[inline]
    fn index(&self, id: u32) -> &Packet {
        self.slots[id as usize]
            .as_ref()
            .expect("a live packet handle (simulator invariant)")
    }
}

impl std::ops::IndexMut<u32> for PacketStore {
    #[inline]
    fn index_mut(&mut self, id: u32) -> &mut Packet {
        self.slots[id as usize]
            .as_mut()
            .expect("a live packet handle (simulator invariant)")
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
        assert_eq!(s.remove(a).ttl, 7);
        let c = s.insert(packet(3, 300));
        assert_eq!(c, a, "the freed slot is reused");
        assert_eq!((s[c].seq, s[b].seq), (3, 2));
    }
}
