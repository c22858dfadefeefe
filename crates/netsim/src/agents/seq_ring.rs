//! A ring indexed by sequence number modulo its power-of-two length: what NS-2's receivers
//! keep per sequence (`seen_` in its `Acker`). The TCP sink holds out-of-order packets in one
//! and the SACK sacker its receive bitmap, so neither allocates per packet: the ring is sized
//! once and doubles only when a packet lands further beyond the in-order point than ever before.

/// Slots indexed by `seq & (len - 1)`. Which sequence a slot stands for is the owner's
/// business (the ring does not remember it).
#[derive(Clone, Debug)]
pub(crate) struct SeqRing<T> {
    slots: Vec<T>,
}

impl<T: Copy + Default> SeqRing<T> {
    /// A ring of `len` slots (rounded up to a power of two), all `T::default()`.
    pub(crate) fn new(len: usize) -> Self {
        SeqRing {
            slots: vec![T::default(); len.max(1).next_power_of_two()],
        }
    }

    /// Number of slots.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    fn index(&self, seq: i64) -> usize {
        (seq & (self.slots.len() as i64 - 1)) as usize
    }

    /// The slot of `seq`.
    pub(crate) fn get(&self, seq: i64) -> T {
        self.slots[self.index(seq)]
    }

    /// The slot of `seq`, mutably.
    pub(crate) fn get_mut(&mut self, seq: i64) -> &mut T {
        let i = self.index(seq);
        &mut self.slots[i]
    }

    /// Set the slot of `seq`.
    pub(crate) fn set(&mut self, seq: i64, v: T) {
        *self.get_mut(seq) = v;
    }

    /// Double the ring, carrying over the slots of `keep` (at most the old length of
    /// sequences); every other slot of the new ring is `T::default()`.
    pub(crate) fn double(&mut self, keep: std::ops::RangeInclusive<i64>) {
        let len = self.slots.len() * 2;
        let mask = len as i64 - 1;
        let mut slots = vec![T::default(); len];
        for i in keep {
            slots[(i & mask) as usize] = self.get(i);
        }
        self.slots = slots;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_wrap_modulo_length() {
        let mut r = SeqRing::<u32>::new(5);
        assert_eq!(r.len(), 8);
        r.set(3, 7);
        assert_eq!(r.get(11), 7, "3 and 11 share a slot in 8");
        assert_eq!(r.get(4), 0);
    }

    #[test]
    fn doubling_keeps_only_the_range() {
        let mut r = SeqRing::<u32>::new(4);
        for s in 10..14 {
            r.set(s, s as u32);
        }
        r.double(11..=13);
        assert_eq!(r.len(), 8);
        assert_eq!(
            (8..16).map(|s| r.get(s)).collect::<Vec<_>>(),
            vec![0, 0, 0, 11, 12, 13, 0, 0]
        );
    }
}
