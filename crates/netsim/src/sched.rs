//! The scheduler's priority queue: events ordered by [`Key`] (NS-2's double time, then
//! insertion sequence).
//!
//! Profiling the 100-flow × 1 Gb/s dumbbell (callgrind, `docs/performance.md`) showed
//! `BinaryHeap::pop` taking about a quarter of all instructions: ~300 per pop over ~350
//! pending events, in comparisons and in moving entries down eight levels. What replaced it,
//! each part measured:
//! - a key is 16 bytes, NS-2's double time and a sequence number; the event's nanosecond time
//!   is derived ([`Key::time`]) where the running event reads it, not for every event.
//!   Rounding is monotone (a later double never rounds to an earlier nanosecond), so the
//!   double alone orders events exactly as (nanoseconds, double) did, and no transmission
//!   rounds its two times at push;
//! - [`EventQueue`] is a timing wheel for the next 31 ms plus a second level and a heap for
//!   later events: pending events are mostly transmission ends and propagation arrivals a
//!   few µs to ms ahead, so a pop is a bitmap scan and a list unlink instead of a walk down
//!   the heap.
//!
//! Keys are unique in the simulator (every key has its own sequence number), so the order is
//! total and both queues pop exactly the sequence `BinaryHeap<Reverse<Key>>` would.

use core::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::Time;

/// When an event runs: NS-2's double-precision time for it (computed with NS-2's
/// arithmetic, `clock + delay`), which orders events, and breaks ties between events at the
/// same nanosecond, exactly as NS-2's floating-point clock does; then insertion order.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// NS-2's double-precision time of the event, in seconds.
    pub secs: f64,
    /// Insertion order: unique per event, so keys never tie.
    pub seq: u64,
}

impl Key {
    /// The event's time: its double time rounded to the nanosecond
    /// ([`Time::from_secs_f64`], exact and without a conversion instruction).
    #[inline(always)]
    pub fn time(&self) -> Time {
        Time::from_secs_f64(self.secs)
    }

    /// The key as one integer, ordered as [`Key`] (`f64::total_cmp` on the double, then the
    /// sequence).
    #[inline(always)]
    fn order(&self) -> u128 {
        (u128::from(ordered_bits(self.secs)) << 64) | u128::from(self.seq)
    }
}

impl PartialEq for Key {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        self.secs.to_bits() == other.secs.to_bits() && self.seq == other.seq
    }
}

impl Eq for Key {}

impl Ord for Key {
    // Always: a link's deferred transmission end is compared with the current event at
    // every enqueue, and an out-of-line comparison cost more than the compare.
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        // Distinct numbers compare as `total_cmp` does; the encoding (two transforms, 15
        // instructions a hop in all) is left for ties, ±0 and NaN.
        if self.secs < other.secs {
            Ordering::Less
        } else if self.secs > other.secs {
            Ordering::Greater
        } else {
            self.order().cmp(&other.order())
        }
    }
}

impl PartialOrd for Key {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A nanosecond time as a double time that rounds back to it ([`Key::time`] of a key at
/// `secs_of(t)` is `t`), for events the simulator schedules at a whole nanosecond.
///
/// Under 2^50 ns (13 days) that is `t / 1e9`: the quotient and the product back are each
/// within half an ulp, so the round trip errs by under a quarter nanosecond. Later, where
/// doubles are too coarse or the quotient rounds short, the next doubles up are taken, so
/// such an event never runs before `t` (an agent woken before its deadline would re-arm the
/// timer at the same key and never see it).
pub fn secs_of(t: Time) -> f64 {
    let mut secs = t.as_nanos() as f64 / 1e9;
    if t.as_nanos() >= 1 << 50 {
        while Time::from_secs_f64(secs) < t {
            secs = f64::from_bits(secs.to_bits() + 1);
        }
    }
    secs
}

/// `f64::total_cmp`'s order as an unsigned integer order (the same transform `total_cmp`
/// applies to both operands on every call, done once here).
fn ordered_bits(x: f64) -> u64 {
    let b = x.to_bits() as i64;
    let t = b ^ ((((b >> 63) as u64) >> 1) as i64);
    (t as u64) ^ (1 << 63)
}

/// Inverse of [`ordered_bits`] (the transform is an involution on the signed pattern).
fn from_ordered_bits(u: u64) -> f64 {
    let t = (u ^ (1 << 63)) as i64;
    let b = t ^ ((((t >> 63) as u64) >> 1) as i64);
    f64::from_bits(b as u64)
}

/// One queued event with its encoded key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry<E> {
    /// [`Key::order`].
    order: u128,
    ev: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn new(key: Key, ev: E) -> Self {
        Entry {
            order: key.order(),
            ev,
        }
    }

    #[inline(always)]
    fn key(&self) -> Key {
        Key {
            secs: from_ordered_bits((self.order >> 64) as u64),
            seq: self.order as u64,
        }
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.order == other.order
    }
}

impl<E> Eq for Entry<E> {}

impl<E> Ord for Entry<E> {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: `BinaryHeap` is a max-heap and the earliest key must come out first.
        other.order.cmp(&self.order)
    }
}

impl<E> PartialOrd for Entry<E> {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }

    // BinaryHeap's sifts ask `<=`; answer it without building an `Ordering`.
    #[inline(always)]
    fn le(&self, other: &Self) -> bool {
        other.order <= self.order
    }
}

/// A binary heap of `(Key, E)` with the integer-encoded keys: the simple reference the
/// scheduler's [`EventQueue`] is checked and benchmarked against (and the far-future part of
/// it). [`HeapQueue::pop`] returns the smallest key.
#[derive(Clone, Debug)]
pub struct HeapQueue<E> {
    heap: BinaryHeap<Entry<E>>,
}

impl<E: Copy> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> HeapQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        HeapQueue {
            heap: BinaryHeap::new(),
        }
    }

    /// Queued events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Queue `ev` to run at `key`.
    #[inline]
    pub fn push(&mut self, key: Key, ev: E) {
        self.heap.push(Entry::new(key, ev));
    }

    /// The earliest event, without removing it.
    #[inline]
    pub fn peek(&self) -> Option<(Key, E)> {
        self.heap.peek().map(|e| (e.key(), e.ev))
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Key, E)> {
        self.heap.pop().map(|e| (e.key(), e.ev))
    }
}

/// The wheel's tick of a double time `secs ≥ +0.0` at offset `base` (a power of two,
/// [`EventQueue`]'s grain): the bit pattern of `secs + base` (in `[base, 2·base)` the mantissa
/// counts units of `base · 2^-52`, 2^-32 s at 2^20 s), an integer that never decreases as
/// `secs` grows (floating-point addition is monotone, and so are the bit patterns of
/// non-negative doubles), so buckets of ticks keep keys in order, at any offset. Beyond
/// `base` the unit doubles with each binade: still in order, only coarser. One addition, where
/// the nanosecond time would cost a rounding at every push.
#[inline(always)]
fn tick(secs: f64, base: f64) -> u64 {
    (secs + base).to_bits()
}

/// The tick offset at grain 0, 2^20 s (12 days): ticks of 2^-32 s.
const TICK_BASE: f64 = 1_048_576.0;
/// log2 of a level-0 bucket's width in ticks: at grain 0, 2^14 ticks of 2^-32 s, 3.8 µs, a
/// few 1000-byte transmissions at 1–10 Gb/s.
const SHIFT: u32 = 14;
/// The coarsest grain: buckets of 2^12 × 3.8 µs = 15.6 ms (slots of 128 s).
const MAX_GRAIN: u32 = 12;
/// Steps of level-0 insertions' walks in one slot that make the wheel finer: one per
/// bucket (the 100-flow dumbbell walks 2.8 a bucket at grain 1, 6 events a bucket; the seeds
/// 0.2 at grain 8).
const CROWDED: u32 = BUCKETS as u32;
/// The most a turn coarsens the grain by: a slot's estimate can be low (a run's start).
const MAX_STEP: u32 = 4;
/// Events per bucket a coarser grain aims at: the 100-flow dumbbell runs at about 3 at
/// grain 0, its best; seed 000 runs best at grain 8, about 2.7 (callgrind, docs/performance.md).
const TARGET_LOAD: f64 = 3.0;
/// log2 of the buckets per level: 8,192 buckets of 3.8 µs make one level-1 slot of 31.25 ms,
/// and 8,192 slots a level-1 horizon of 256 s.
const BITS: u32 = 13;
const BUCKETS: usize = 1 << BITS;
const MASK: u64 = BUCKETS as u64 - 1;
const WORDS: usize = BUCKETS / 64;
/// End of a list.
const NIL: u32 = u32::MAX;

/// Whether `n` is `NIL`, tested as its sign bit: `alloc` keeps indices below 2^31. Compared
/// with `u32::MAX`, the index widened for addressing needed the constant in a register
/// (three instructions, not two).
#[inline(always)]
fn nil(n: u32) -> bool {
    (n as i32) < 0
}

/// One event in the arena: its key, its payload and the next node of its list.
#[derive(Clone, Copy, Debug)]
struct Node<E> {
    /// The double time's bit pattern (the wheel holds only `+0.0 ≤ secs`, whose patterns
    /// order as the values).
    bits: u64,
    seq: u64,
    next: u32,
    ev: E,
}

impl<E> Node<E> {
    /// Whether this node's key is before the key (`bits`, `seq`), in [`Key`]'s order (keys
    /// are unique: no two nodes compare equal). The double's bit pattern alone decides unless
    /// it ties, one compare where the 128-bit key took a load and three instructions.
    #[inline(always)]
    fn before(&self, bits: u64, seq: u64) -> bool {
        self.bits < bits || (self.bits == bits && self.seq < seq)
    }

    #[inline(always)]
    fn key(&self) -> Key {
        Key {
            secs: f64::from_bits(self.bits),
            seq: self.seq,
        }
    }
}

/// A set of lists threaded through the arena, one per bucket, with a bitmap of the non-empty
/// ones. Heads and tails are dense `u32` indices into the arena, kept in pairs; a tail is meaningful only
/// while its head is not `NIL`. The array has a fixed length, so an index masked to
/// `BUCKETS` needs no bounds check (the checks on `Vec`s were a tenth of the scheduler's
/// instructions).
#[derive(Clone, Debug)]
struct Level {
    ends: Box<[Ends; BUCKETS]>,
    bits: Box<[u64; WORDS]>,
}

/// A bucket's first and last node, side by side: a push reads the head and writes the tail,
/// and with 1000 flows the buckets touched are spread over the wheel, so one cache line per
/// bucket instead of two (separate arrays of heads and tails) halves the scheduler's L1 misses.
#[derive(Clone, Copy, Debug)]
struct Ends {
    head: u32,
    tail: u32,
}

/// A boxed array of `n` copies of `v`, built on the heap (32 KiB would be a large stack copy).
fn boxed<T: Copy + std::fmt::Debug, const N: usize>(v: T) -> Box<[T; N]> {
    let b: Box<[T]> = vec![v; N].into_boxed_slice();
    b.try_into().expect("a slice of length N")
}

impl Level {
    fn new() -> Self {
        Level {
            ends: boxed(Ends {
                head: NIL,
                tail: NIL,
            }),
            bits: boxed(0),
        }
    }

    #[inline(always)]
    fn mark(&mut self, i: usize) {
        self.bits[(i / 64) % WORDS] |= 1 << (i % 64);
    }

    #[inline(always)]
    fn unmark(&mut self, i: usize) {
        self.bits[(i / 64) % WORDS] &= !(1 << (i % 64));
    }

    /// Clear the bitmap; returns how many bits were set.
    fn clear(&mut self) -> u32 {
        let mut set = 0;
        for w in self.bits.iter_mut() {
            set += std::mem::take(w).count_ones();
        }
        set
    }

    /// The first non-empty bucket at or after `from` (no wrap-around).
    #[inline]
    fn first_from(&self, from: usize) -> Option<usize> {
        let (mut w, bit) = (from / 64, from % 64);
        if w >= WORDS {
            return None;
        }
        let mut m = self.bits[w] & (!0u64 << bit);
        loop {
            if m != 0 {
                return Some(w * 64 + m.trailing_zeros() as usize);
            }
            w += 1;
            if w == WORDS {
                return None;
            }
            m = self.bits[w];
        }
    }
}

/// The scheduler's priority queue: a two-level timing wheel over an arena of event nodes.
///
/// Events are placed by their tick (the bit pattern of `secs + 2^(20+g)`, which never
/// decreases as `secs` grows; `g` is the grain, below). Level 0 has 8,192 buckets (3.8 µs at
/// grain 0) covering one slot of level 1 (31.25 ms at grain 0; the current slot, `slot`);
/// each bucket is a list sorted by key (earliest at the head), threaded through the arena,
/// so a push is an append or a prepend in the usual cases (the event is the latest of its
/// bucket, as when many flows start at one instant, or the earliest) and a pop takes the
/// head of the first non-empty bucket, found with a few bitmap words. Level 1 has 8,192
/// unsorted lists of slots (a 256 s horizon at grain 0); when level 0 is empty, the earliest
/// non-empty slot (cached) moves down into it. Events beyond level 1's horizon, and events
/// pushed before the last one popped (never by the simulator) or before time +0.0, wait in
/// a binary heap. Pushes and pops cost a few dozen instructions. Keys are unique, so the
/// order is total and exactly [`HeapQueue`]'s.
///
/// The grain `g` (0 to 12) scales buckets and slots by `2^g` and follows the event rate, so
/// that a bucket holds a few events: a sparse run (seed 000: an event every 356 µs) would
/// otherwise scan and mark a bucket for every event, and turn the wheel every 31 ms. When
/// the wheel turns after a slot in which fewer than half the buckets held an event, the grain
/// grows to aim at `TARGET_LOAD` events per bucket (by `MAX_STEP` at most); when pushes
/// walk `CROWDED` steps into sorted buckets within a slot, the next pop makes it finer by
/// one, and no turn makes it that coarse again. Either re-places every pending event (linear
/// in them, rare). The grain changes where events sit, never their order.
#[derive(Clone, Debug)]
pub struct EventQueue<E> {
    nodes: Vec<Node<E>>,
    /// First free node (a list through `next`).
    free: u32,
    /// Level 0's bitmap marks its non-empty buckets, and (not cleared until the wheel turns,
    /// which saves an instruction or two a pop) buckets before `cursor` and `cursor`'s own that
    /// emptied since.
    l0: Level,
    l1: Level,
    /// Absolute level-1 slot (`bucket >> BITS`) that level 0 covers.
    slot: u64,
    /// The first bucket after `slot`'s (`(slot + 1) << BITS`): a push tests
    /// `cursor ≤ bucket < end`, two compares, where the slot's own test took four more
    /// instructions.
    end: u64,
    /// Absolute level-0 bucket (`tick >> SHIFT`) of the last event popped, or the start of
    /// `slot` if later: nothing in the wheel is earlier.
    cursor: u64,
    /// Events in level 1.
    len1: usize,
    /// The earliest non-empty level-1 slot (absolute), when `len1 > 0`.
    next1: u64,
    /// Events beyond level 1's horizon, before `cursor` when pushed, or before +0.0.
    spill: BinaryHeap<Entry<E>>,
    /// The bucket of the spill heap's earliest event (`spill_bucket`), `u64::MAX` when it
    /// is empty: `spill_at < cursor` (`at` says it) sends a pop to the cold path instead of
    /// peeking into the heap. 0 while `crowded`, which does the same.
    spill_at: u64,
    /// The level-0 bucket a pop reads first: `cursor`'s (`cursor & MASK`) while
    /// `spill_at ≥ cursor`, else `BUCKETS`, out of the array, which sends the pop to the cold
    /// path. Set wherever `cursor` or `spill_at` changes (`set_at`), so the pop's one test,
    /// `at < BUCKETS`, is the spill/cursor compare and the masked bucket's bounds at once (two
    /// instructions fewer a pop).
    at: usize,
    /// The tick offset, `2^(20 + grain)` s.
    base: f64,
    /// log2 of a bucket's width in units of 3.8 µs.
    grain: u32,
    /// Steps walked by level-0 insertions since the last turn or change of grain.
    walked: u32,
    /// The coarsest grain a turn may choose: below any grain found crowded.
    ceiling: u32,
    /// Pushes walked [`CROWDED`] steps: the next pop makes the wheel finer.
    crowded: bool,
}

/// The bucket an entry of the spill heap would have in the wheel at offset `base`; 0 for keys
/// before +0.0.
fn spill_bucket<E>(base: f64, e: &Entry<E>) -> u64 {
    let k = e.key();
    if k.secs.is_sign_negative() {
        0
    } else {
        tick(k.secs, base) >> SHIFT
    }
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        // The bucket of the earliest tick: where an empty wheel starts. Keys before +0.0
        // (negative doubles and −0.0, which `total_cmp` puts first) go to the spill heap with
        // bucket 0, which is before it.
        let start = tick(0.0, TICK_BASE) >> SHIFT;
        EventQueue {
            nodes: Vec::new(),
            free: NIL,
            l0: Level::new(),
            l1: Level::new(),
            slot: start >> BITS,
            end: ((start >> BITS) + 1) << BITS,
            cursor: start,
            len1: 0,
            next1: 0,
            spill: BinaryHeap::new(),
            spill_at: u64::MAX,
            at: (start & MASK) as usize,
            base: TICK_BASE,
            grain: 0,
            walked: 0,
            ceiling: MAX_GRAIN,
            crowded: false,
        }
    }

    /// Queued events (a walk of the free nodes: no count is kept, it cost two instructions
    /// an event).
    pub fn len(&self) -> usize {
        let mut free = 0;
        let mut n = self.free;
        while !nil(n) {
            free += 1;
            n = self.nodes[n as usize].next;
        }
        self.nodes.len() - free + self.spill.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queue `ev` to run at `key`.
    #[inline(always)]
    pub fn push(&mut self, key: Key, ev: E) {
        if key.secs.to_bits() >> 63 != 0 {
            // Before +0.0 (never in the simulator): the heap orders it.
            self.spill_push(Entry::new(key, ev));
            return;
        }
        self.push_forward(key, ev);
    }

    /// [`EventQueue::push`] for a key at or after +0.0, as every key the simulator makes
    /// (its clock starts at +0.0 and delays are not negative): without the sign test, two
    /// instructions a push. An earlier key would be misordered (checked in debug builds).
    #[inline(always)]
    pub(crate) fn push_forward(&mut self, key: Key, ev: E) {
        let bits = key.secs.to_bits();
        debug_assert!(bits >> 63 == 0, "{key:?} before +0.0");
        self.place::<true>(Node {
            bits,
            seq: key.seq,
            next: NIL,
            ev,
        });
    }

    /// Put `node` (`+0.0 ≤ secs`) where its tick belongs: level 0, level 1 or the spill heap.
    /// `PUSH`: a new event, whose walk into a crowded bucket may ask for a finer grain (not
    /// while the wheel moves events itself).
    #[inline(always)]
    fn place<const PUSH: bool>(&mut self, node: Node<E>) {
        let b = tick(f64::from_bits(node.bits), self.base) >> SHIFT;
        debug_assert_eq!(self.end, (self.slot + 1) << BITS);
        // The cursor is in `slot`: the two compares say `b >> BITS == slot && b >= cursor`.
        if b >= self.cursor && b < self.end {
            let n = self.alloc(node);
            self.insert0::<PUSH>((b & MASK) as usize, n, node.bits, node.seq);
            return;
        }
        let s = b >> BITS;
        if s > self.slot && s - self.slot < BUCKETS as u64 {
            let n = self.alloc(node);
            self.insert1(s, n);
        } else {
            // Beyond the horizon, or (never in the simulator) the past: the heap orders it.
            self.spill_push(Entry::new(node.key(), node.ev));
        }
    }

    #[cold]
    fn spill_push(&mut self, e: Entry<E>) {
        self.spill.push(e);
        self.set_spill_at();
    }

    /// Recompute `spill_at` (0 while `crowded`), and `at`.
    fn set_spill_at(&mut self) {
        let base = self.base;
        self.spill_at = match self.spill.peek() {
            _ if self.crowded => 0,
            Some(e) => spill_bucket(base, e),
            None => u64::MAX,
        };
        self.set_at();
    }

    /// Recompute `at` from `cursor` and `spill_at` (`cursor` is never 0: the earliest tick's
    /// bucket is `2^(20+g)`'s pattern shifted, so `crowded`'s 0 is always before it).
    #[inline]
    fn set_at(&mut self) {
        self.at = if self.spill_at >= self.cursor {
            (self.cursor & MASK) as usize
        } else {
            BUCKETS
        };
    }

    /// Node `n` of the arena, without the bounds check (`crate::unchecked`): every index a
    /// list, the free list or a bucket head holds came from [`EventQueue::alloc`], below the
    /// arena's length (only `extract` empties the arena, after emptying every list); `NIL` is
    /// tested before any use.
    #[inline(always)]
    fn node(&mut self, n: u32) -> &mut Node<E> {
        crate::unchecked::at_mut(&mut self.nodes, n as usize)
    }

    #[inline(always)]
    fn alloc(&mut self, node: Node<E>) -> u32 {
        if !nil(self.free) {
            let n = self.free;
            self.free = self.node(n).next;
            *self.node(n) = node;
            n
        } else {
            // `nil` reads bit 31 (a cold path: the arena grows only to its peak).
            assert!(self.nodes.len() < 1 << 31, "event arena full");
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    /// Insert node `n`, whose key is (`bits`, `seq`), into level-0 bucket `i`, keeping it
    /// sorted. The caller passes the key it holds: read back from the node just written, it
    /// cost four instructions a push (copying the whole node cost more than the comparisons).
    #[inline(always)]
    fn insert0<const PUSH: bool>(&mut self, i: usize, n: u32, bits: u64, seq: u64) {
        let head = self.l0.ends[i].head;
        if nil(head) {
            self.l0.ends[i].head = n;
            self.l0.ends[i].tail = n;
            self.l0.mark(i);
            return;
        }
        let tail = self.l0.ends[i].tail;
        if self.node(tail).before(bits, seq) {
            self.node(tail).next = n;
            self.l0.ends[i].tail = n;
            return;
        }
        if !self.node(head).before(bits, seq) {
            self.node(n).next = head;
            self.l0.ends[i].head = n;
            return;
        }
        // Between head and tail: walk (rare: buckets hold a handful of events).
        let mut p = head;
        let mut steps = 0u32;
        loop {
            let next = self.node(p).next;
            if nil(next) || !self.node(next).before(bits, seq) {
                self.node(n).next = next;
                self.node(p).next = n;
                break;
            }
            p = next;
            steps += 1;
        }
        // Wrapping: a count past 2^32 in one slot only delays a finer grain.
        self.walked = self.walked.wrapping_add(steps);
        if self.walked >= CROWDED {
            self.crowd::<PUSH>();
        }
    }

    /// Insertions walked [`CROWDED`] steps in this slot: ask the next pop for a finer grain
    /// (`front` takes the cold path while `spill_at` is 0), unless the grain is the finest,
    /// or the wheel is moving events itself (`PUSH` false).
    #[cold]
    fn crowd<const PUSH: bool>(&mut self) {
        if self.grain == 0 {
            self.walked = 0;
        } else if PUSH {
            self.crowded = true;
            self.spill_at = 0;
            self.at = BUCKETS;
        }
    }

    /// Append node `n` to level-1 slot `s` (absolute).
    #[inline(always)]
    fn insert1(&mut self, s: u64, n: u32) {
        let i = (s & MASK) as usize;
        if nil(self.l1.ends[i].head) {
            self.l1.ends[i].head = n;
            self.l1.mark(i);
        } else {
            let tail = self.l1.ends[i].tail;
            self.node(tail).next = n;
        }
        self.l1.ends[i].tail = n;
        if self.len1 == 0 || s < self.next1 {
            self.next1 = s;
        }
        self.len1 += 1;
    }

    /// With level 0 empty: turn the wheel to the earliest of level 1's next slot and the
    /// spill heap's earliest future event, and move that slot's events down (or re-place
    /// every event at a coarser grain, if the slot just done was sparse). False when there is
    /// nothing to turn to.
    #[cold]
    fn turn(&mut self) -> bool {
        let spill_slot = (self.spill_at != u64::MAX)
            .then_some(self.spill_at >> BITS)
            .filter(|&s| s > self.slot);
        let target = match (self.len1 > 0, spill_slot) {
            (true, Some(s)) => self.next1.min(s),
            (true, None) => self.next1,
            (false, Some(s)) => s,
            (false, None) => return false,
        };
        // Level 0 is empty: its bitmap marks the buckets that held an event since the last
        // turn, over `target - slot` slots (the skipped ones held none).
        let held = self.l0.clear();
        // Not if insertions walked (a burst at one instant, as many flows starting).
        if self.grain < self.ceiling && self.len1 > 0 && held >= 16 && self.walked < held {
            let share = f64::from(held) / (BUCKETS as f64 * (target - self.slot) as f64);
            if share < 0.5 {
                // Buckets holding events at random (Poisson) are non-empty with probability
                // 1 − e^−load.
                let load = -(1.0 - share).ln();
                let up = (TARGET_LOAD / load)
                    .log2()
                    .round()
                    .clamp(1.0, MAX_STEP.into()) as u32;
                self.regrain((self.grain + up).min(self.ceiling));
                return true;
            }
        }
        self.walked = 0;
        self.slot = target;
        self.end = (target + 1) << BITS;
        self.cursor = target << BITS;
        self.set_at();
        if self.len1 > 0 && self.next1 == target {
            let i = (target & MASK) as usize;
            let mut n = self.l1.ends[i].head;
            self.l1.ends[i].head = NIL;
            self.l1.unmark(i);
            while !nil(n) {
                let next = self.nodes[n as usize].next;
                self.nodes[n as usize].next = NIL;
                self.len1 -= 1;
                let (bits, seq) = (self.nodes[n as usize].bits, self.nodes[n as usize].seq);
                let b = tick(f64::from_bits(bits), self.base) >> SHIFT;
                self.insert0::<false>((b & MASK) as usize, n, bits, seq);
                n = next;
            }
            if self.len1 > 0 {
                // The earliest far bucket: the next marked slot after `target`, with wrap.
                let from = i + 1;
                let j = self
                    .l1
                    .first_from(from)
                    .or_else(|| self.l1.first_from(0))
                    .unwrap_or(i);
                let ahead = (j as u64).wrapping_sub(i as u64) & MASK;
                self.next1 = target + ahead;
            }
        }
        self.unspill();
        true
    }

    /// Move the spilled events the horizon now covers into the wheel, from the earliest on
    /// (one before `cursor` stays: it pops first).
    fn unspill(&mut self) {
        while self.spill_at != u64::MAX && self.spill_at >= self.cursor {
            if (self.spill_at >> BITS) - self.slot >= BUCKETS as u64 {
                break;
            }
            if let Some(e) = self.spill.pop() {
                self.set_spill_at();
                let k = e.key();
                self.place::<false>(Node {
                    bits: k.secs.to_bits(),
                    seq: k.seq,
                    next: NIL,
                    ev: e.ev,
                });
            }
        }
    }

    /// Re-place every event of the wheel at `grain`, the current slot becoming the earliest
    /// event's (as a turn would): linear in the pending events and the bitmaps.
    #[cold]
    #[inline(never)]
    fn regrain(&mut self, grain: u32) {
        let mut pending = Vec::with_capacity(self.nodes.len());
        for level in [&mut self.l0, &mut self.l1] {
            for w in 0..WORDS {
                let mut m = std::mem::take(&mut level.bits[w]);
                while m != 0 {
                    let i = w * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    let mut n = std::mem::replace(&mut level.ends[i].head, NIL);
                    while !nil(n) {
                        pending.push(n);
                        n = self.nodes[n as usize].next;
                    }
                }
            }
        }
        self.len1 = 0;
        self.walked = 0;
        self.grain = grain;
        self.base = TICK_BASE * f64::from(1u32 << grain);
        // With nothing pending (never), time 0: a cursor in the past only sends pushes to the
        // heap.
        let first = pending
            .iter()
            .map(|&n| self.nodes[n as usize].bits)
            .min()
            .unwrap_or(0);
        let first = tick(f64::from_bits(first), self.base) >> SHIFT;
        self.slot = first >> BITS;
        self.end = (self.slot + 1) << BITS;
        self.cursor = self.slot << BITS;
        self.set_spill_at();
        for n in pending {
            let node = self.nodes[n as usize];
            let b = tick(f64::from_bits(node.bits), self.base) >> SHIFT;
            let s = b >> BITS;
            self.nodes[n as usize].next = NIL;
            // Every node is at or after the earliest, and within the old horizon, which a
            // coarser grain only extends; a finer one may put it beyond: back to the heap.
            if s == self.slot {
                self.insert0::<false>((b & MASK) as usize, n, node.bits, node.seq);
            } else if s - self.slot < BUCKETS as u64 {
                self.insert1(s, n);
            } else {
                self.spill.push(Entry::new(node.key(), node.ev));
                self.node(n).next = self.free;
                self.free = n;
            }
        }
        self.set_spill_at();
        self.unspill();
    }

    /// The level-0 bucket of the earliest event, or `None` when it is in the spill heap (or
    /// nothing is queued).
    #[inline(always)]
    fn front(&mut self) -> Option<usize> {
        self.check_at();
        let i = self.at;
        if i >= BUCKETS {
            return self.front_cold();
        }
        // Usually the bucket of the last pop holds the next event too: no scan then.
        if !nil(self.l0.ends[i].head) {
            return Some(i);
        }
        self.seek(i + 1)
    }

    /// `at`'s invariant, checked in debug builds.
    #[inline(always)]
    fn check_at(&self) {
        debug_assert_eq!(
            self.at,
            if self.spill_at >= self.cursor {
                (self.cursor & MASK) as usize
            } else {
                BUCKETS
            },
            "at {} cursor {} spill_at {}",
            self.at,
            self.cursor,
            self.spill_at
        );
    }

    /// The first non-empty bucket from `from` on (bucket `from - 1`, the cursor's, is empty),
    /// turning the wheel as needed.
    #[inline(always)]
    fn seek(&mut self, from: usize) -> Option<usize> {
        // Level 0 holds nothing before `cursor`, and its bits after `cursor` are exact: no
        // bucket from it on means it is empty.
        let mut from = from;
        loop {
            if let Some(j) = self.l0.first_from(from) {
                // `spill_at ≥ cursor` still: the spill heap holds events pushed before the
                // cursor (then `at` sent the pop elsewhere) or beyond level 1's horizon, after
                // every bucket of this slot.
                self.cursor = (self.cursor & !MASK) | j as u64;
                self.at = j;
                return Some(j);
            }
            // (Spilled future events are beyond the horizon: a turn, or a change of grain,
            // never leaves one before the cursor.)
            if !self.turn() {
                return None;
            }
            from = 0;
        }
    }

    /// [`EventQueue::front`] when the spill heap's earliest event is before the cursor
    /// (pushed in the past: never by the simulator), or when a push asked for a finer grain.
    #[cold]
    #[inline(never)]
    fn front_cold(&mut self) -> Option<usize> {
        if self.crowded {
            self.crowded = false;
            self.ceiling = self.grain.saturating_sub(1);
            self.regrain(self.ceiling);
            if self.spill_at >= self.cursor {
                let i = (self.cursor & MASK) as usize;
                if !nil(self.l0.ends[i].head) {
                    return Some(i);
                }
                return self.seek(i + 1);
            }
        }
        None
    }

    /// The earliest event, without removing it (the wheel may turn to it).
    #[inline]
    pub fn peek(&mut self) -> Option<(Key, E)> {
        match self.front() {
            Some(i) => {
                let n = &self.nodes[self.l0.ends[i % BUCKETS].head as usize];
                Some((n.key(), n.ev))
            }
            None => self.spill.peek().map(|e| (e.key(), e.ev)),
        }
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Key, E)> {
        self.pop_if(|_| true)
    }

    /// Remove and return the earliest event if `due` accepts its key (the run loop's
    /// "before the end of the run" test, without a second search).
    #[inline(always)]
    pub fn pop_if(&mut self, due: impl FnOnce(&Key) -> bool) -> Option<(Key, E)> {
        self.pop_ref(due).map(|(k, e)| (k, *e))
    }

    /// Unlink the earliest event's node if `due` accepts its key and put it on the free list;
    /// its key, and its payload where it lies (intact until the next push). The run loop
    /// matches on the payload in place: a copy went through the stack (five instructions an
    /// event), and a node index cost a `NIL` test and the node's address again.
    #[inline(always)]
    pub(crate) fn pop_ref(&mut self, due: impl FnOnce(&Key) -> bool) -> Option<(Key, &E)> {
        // The bucket and its head: the fast path's head is read once.
        self.check_at();
        let i = self.at;
        let (i, n) = if i < BUCKETS {
            // Usually the bucket of the last pop holds the next event too: no scan then.
            let n = self.l0.ends[i].head;
            if !nil(n) {
                (i, n)
            } else {
                match self.seek(i + 1) {
                    Some(j) => (j, self.l0.ends[j % BUCKETS].head),
                    None => return self.pop_spill_ref(due),
                }
            }
        } else {
            match self.front_cold() {
                Some(j) => (j, self.l0.ends[j % BUCKETS].head),
                None => return self.pop_spill_ref(due),
            }
        };
        let i = i % BUCKETS;
        // The arrays' addresses in locals: through `self`, each store made the compiler
        // reload them (it cannot tell the boxed arrays from the queue's own fields).
        let ends = &mut *self.l0.ends;
        let nodes = &mut self.nodes[..];
        let node = crate::unchecked::at_mut(nodes, n as usize);
        let key = node.key();
        if !due(&key) {
            return None;
        }
        // An emptied bucket keeps its bit until the wheel turns (`l0`).
        ends[i].head = node.next;
        node.next = self.free;
        self.free = n;
        Some((key, &node.ev))
    }

    /// [`EventQueue::pop_ref`] for the spill heap, built from [`EventQueue::pop_spill`]'s node
    /// index: a returned `Option` would make every path's result go through the stack.
    #[inline(always)]
    fn pop_spill_ref(&mut self, due: impl FnOnce(&Key) -> bool) -> Option<(Key, &E)> {
        let n = self.pop_spill(due);
        if nil(n) {
            return None;
        }
        let node = &*self.node(n);
        Some((node.key(), &node.ev))
    }

    /// The spill heap's earliest event, if `due` accepts its key, goes through a node, put on
    /// the free list as [`EventQueue::pop_ref`] leaves it; `NIL` if there is none.
    #[cold]
    #[inline(never)]
    fn pop_spill(&mut self, due: impl FnOnce(&Key) -> bool) -> u32 {
        let Some(&e) = self.spill.peek() else {
            return NIL;
        };
        let k = e.key();
        if !due(&k) {
            return NIL;
        }
        self.spill.pop();
        self.set_spill_at();
        // Events behind it the horizon covers join the wheel, as a turn would have moved them.
        self.unspill();
        let n = self.alloc(Node {
            bits: k.secs.to_bits(),
            seq: k.seq,
            next: NIL,
            ev: e.ev,
        });
        self.node(n).next = self.free;
        self.free = n;
        n
    }
}

impl<E: Copy> EventQueue<E> {
    /// Calls `f` on every queued event, in no particular order.
    pub fn for_each(&self, mut f: impl FnMut(&Key, &E)) {
        for level in [&self.l0, &self.l1] {
            for h in level.ends.iter().map(|e| e.head) {
                let mut n = h;
                while !nil(n) {
                    let node = &self.nodes[n as usize];
                    f(&node.key(), &node.ev);
                    n = node.next;
                }
            }
        }
        for e in self.spill.iter() {
            f(&e.key(), &e.ev);
        }
    }

    /// Removes every queued event `take` accepts and returns them in key order (the order
    /// they would have run in). The rest keep their keys, so their order is unchanged.
    ///
    /// It rebuilds the queue: linear in the queued events and the wheel's buckets, for rare
    /// events (the simulator cancels a failed link's arrivals with it), not the hot path.
    pub fn extract(&mut self, mut take: impl FnMut(&E) -> bool) -> Vec<(Key, E)> {
        let mut kept = Vec::new();
        let mut out = Vec::new();
        for level in [&mut self.l0, &mut self.l1] {
            for i in 0..BUCKETS {
                let mut n = std::mem::replace(&mut level.ends[i].head, NIL);
                level.ends[i].tail = NIL;
                while !nil(n) {
                    let node = self.nodes[n as usize];
                    if take(&node.ev) {
                        out.push((node.key(), node.ev));
                    } else {
                        kept.push(node);
                    }
                    n = node.next;
                }
            }
            level.bits.fill(0);
        }
        self.nodes.clear();
        self.free = NIL;
        self.len1 = 0;
        // Every kept node goes back where it was: level-0 nodes are at or after `cursor` in
        // `slot`, level-1 nodes in later slots within the horizon.
        for mut node in kept {
            node.next = NIL;
            self.place::<false>(node);
        }
        let spill = std::mem::take(&mut self.spill).into_vec();
        for e in spill {
            if take(&e.ev) {
                out.push((e.key(), e.ev));
            } else {
                self.spill.push(e);
            }
        }
        self.set_spill_at();
        out.sort_unstable_by_key(|e| e.0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn ordered_bits_follow_total_cmp() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1e-300,
            0.1,
            1.0,
            1.0 + f64::EPSILON,
            1e300,
            f64::INFINITY,
            f64::NAN,
        ];
        for a in xs {
            assert_eq!(from_ordered_bits(ordered_bits(a)).to_bits(), a.to_bits());
            for b in xs {
                assert_eq!(
                    ordered_bits(a).cmp(&ordered_bits(b)),
                    a.total_cmp(&b),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn nil_is_only_the_end_marker_below_the_arena_cap() {
        assert!(nil(NIL));
        assert!(!nil(0));
        assert!(!nil((1 << 31) - 1));
    }

    #[test]
    fn push_forward_and_pop_ref_keep_the_heap_order() {
        // Keys at +0.0 and a few ticks on, many at one instant; public pushes of −0.0 and
        // negatives mixed in go to the spill heap and come out first, through `pop_ref`.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut q = EventQueue::new();
        let mut h = HeapQueue::new();
        let mut seq = 0u64;
        let mut now = 0.0f64;
        for round in 0..20_000u32 {
            for _ in 0..rng.gen_range(0..3) {
                let secs = match rng.gen_range(0..8) {
                    0 => now,
                    1 => now + 1e-9 * f64::from(rng.gen_range(0..4u32)),
                    _ => now + rng.gen_range(0.0..0.05),
                };
                let k = Key { secs, seq };
                seq += 1;
                if round < 100 && rng.gen_bool(0.1) {
                    let neg = Key {
                        secs: if rng.gen_bool(0.5) { -0.0 } else { -1e-12 },
                        seq,
                    };
                    seq += 1;
                    q.push(neg, round);
                    h.push(neg, round);
                }
                q.push_forward(k, round);
                h.push(k, round);
            }
            if rng.gen_bool(0.5) {
                let a = q.pop_ref(|_| true).map(|(k, &e)| (k, e));
                let b = h.pop();
                assert_eq!(
                    a.map(|(k, e)| (k.secs.to_bits(), k.seq, e)),
                    b.map(|(k, e)| (k.secs.to_bits(), k.seq, e))
                );
                if let Some((k, _)) = a {
                    now = now.max(k.secs);
                }
            }
        }
        while let Some(b) = h.pop() {
            let a = q.pop_ref(|_| true).map(|(k, &e)| (k.seq, e));
            assert_eq!(a, Some((b.0.seq, b.1)));
        }
        assert!(q.pop_ref(|_| true).is_none());
    }

    #[test]
    fn pushes_at_the_edges_of_level_0s_slot_keep_the_heap_order() {
        // Level 0 covers one slot (`cursor ≤ bucket < end`): 31.25 ms at grain 0, from a
        // multiple of 1/32 s. Keys just before, at and after the next edges, pushed as the
        // clock nears them, land in level 0, level 1 or (at the cursor's bucket) either.
        let mut q = EventQueue::new();
        let mut h = HeapQueue::new();
        let mut seq = 0u64;
        let mut now = 0.0f64;
        for k in 1..200u32 {
            let edge = f64::from(k) / 32.0;
            let ulp = f64::from_bits(edge.to_bits() + 1) - edge;
            for d in [-1e-9, -ulp, 0.0, ulp, 1e-9, 0.015, 0.031_25, 0.062_5] {
                let key = Key {
                    secs: (edge + d).max(now),
                    seq,
                };
                seq += 1;
                q.push_forward(key, seq);
                h.push(key, seq);
            }
            // Pop up to just before the edge, then a few past it.
            let before = |key: &Key| key.secs < edge - 2e-9;
            while let Some((key, e)) = q.pop_if(before) {
                assert_eq!(h.pop().map(|(k, e)| (k.seq, e)), Some((key.seq, e)));
                now = key.secs;
            }
            for _ in 0..3 {
                let (a, b) = (q.pop(), h.pop());
                assert_eq!(a.map(|(k, e)| (k.seq, e)), b.map(|(k, e)| (k.seq, e)));
                if let Some((key, _)) = a {
                    now = key.secs;
                }
            }
        }
        while let Some((k, e)) = h.pop() {
            assert_eq!(q.pop().map(|(k, e)| (k.seq, e)), Some((k.seq, e)));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn extract_takes_matching_events_and_keeps_the_order_of_the_rest() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut q = EventQueue::new();
        let mut model: Vec<(Key, u32)> = Vec::new();
        let (mut seq, mut now) = (0u64, 0u64);
        for round in 0..3_000u32 {
            for _ in 0..rng.gen_range(0..4) {
                // Level 0, level 1 and beyond the horizon (the spill heap).
                let t = now
                    + match rng.gen_range(0..20) {
                        0 => rng.gen_range(300_000_000_000..400_000_000_000),
                        1..=4 => rng.gen_range(0..10_000_000_000),
                        _ => rng.gen_range(0..1_000_000),
                    };
                let k = Key {
                    secs: t as f64 / 1e9,
                    seq,
                };
                seq += 1;
                q.push(k, round);
                model.push((k, round));
            }
            if rng.gen_bool(0.5) {
                model.sort_by_key(|e| e.0);
                let a = q.pop();
                let b = (!model.is_empty()).then(|| model.remove(0));
                assert_eq!(a.map(|(k, e)| (k.seq, e)), b.map(|(k, e)| (k.seq, e)));
                if let Some((k, _)) = a {
                    now = k.time().as_nanos();
                }
            }
            if round % 97 == 0 {
                let m = rng.gen_range(2..5);
                let got = q.extract(|&e| e % m == 0);
                let mut want: Vec<(Key, u32)> =
                    model.iter().copied().filter(|&(_, e)| e % m == 0).collect();
                want.sort_by_key(|e| e.0);
                model.retain(|&(_, e)| e % m != 0);
                let seqs =
                    |v: &[(Key, u32)]| v.iter().map(|(k, e)| (k.seq, *e)).collect::<Vec<_>>();
                assert_eq!(seqs(&got), seqs(&want));
                let mut all = Vec::new();
                q.for_each(|k, &e| all.push((*k, e)));
                all.sort_by_key(|e| e.0);
                model.sort_by_key(|e| e.0);
                assert_eq!(seqs(&all), seqs(&model));
                assert_eq!(q.len(), model.len());
            }
        }
        model.sort_by_key(|e| e.0);
        for (k, e) in model {
            assert_eq!(q.pop().map(|(k, e)| (k.seq, e)), Some((k.seq, e)));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn pops_in_key_order_like_a_binary_heap() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut q = EventQueue::new();
        let mut r = HeapQueue::new();
        let mut h = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for round in 0..20_000 {
            // Bursts of pushes at and after the current time, ties on time and on the double.
            for _ in 0..rng.gen_range(0..4) {
                // Mostly near (same and next buckets), some far beyond the wheel's horizon.
                // Rarely beyond level 1's 256 s horizon, or in the past (the simulator never
                // pushes there, but the queue orders it).
                let t = match rng.gen_range(0..400) {
                    0 => now + rng.gen_range(200_000_000_000..1_000_000_000_000),
                    1 => now.saturating_sub(rng.gen_range(0..50_000_000)),
                    r => {
                        now + match r % 10 {
                            0 => rng.gen_range(0..200_000_000),
                            1 => rng.gen_range(0..100_000_000_000),
                            2..=3 => rng.gen_range(0..100_000),
                            _ => rng.gen_range(0..5),
                        }
                    }
                };
                let secs = t as f64 / 1e9 + f64::from(rng.gen_range(0..3u8)) * 1e-18;
                let k = Key { secs, seq };
                seq += 1;
                q.push(k, round);
                r.push(k, round);
                h.push(Reverse((k, round)));
            }
            assert_eq!(q.len(), h.len());
            assert_at(&q);
            if rng.gen_bool(0.6) {
                let a = q.pop();
                assert_at(&q);
                assert_eq!(r.pop().map(|(k, e)| (k.seq, e)), a.map(|(k, e)| (k.seq, e)));
                let b = h.pop().map(|Reverse(x)| x);
                assert_eq!(a.map(|(k, e)| (k.seq, e)), b.map(|(k, e)| (k.seq, e)));
                if let Some((k, _)) = a {
                    assert_eq!(Some(k), b.map(|x| x.0));
                    now = k.time().as_nanos();
                }
            }
        }
        while let Some(Reverse((k, e))) = h.pop() {
            assert_eq!(q.peek().map(|(k, e)| (k.seq, e)), Some((k.seq, e)));
            assert_eq!(q.pop().map(|(k, e)| (k.seq, e)), Some((k.seq, e)));
        }
        assert!(q.is_empty());
    }

    /// `at`, the pop's first index, is the cursor's bucket exactly while the spill heap holds
    /// nothing before the cursor and no push asked for a finer grain (`spill_at` 0), and out
    /// of range otherwise (checked in release builds too, unlike `check_at`).
    fn assert_at<E: Copy>(q: &EventQueue<E>) {
        let want = if q.spill_at >= q.cursor {
            (q.cursor & MASK) as usize
        } else {
            BUCKETS
        };
        assert_eq!(q.at, want, "cursor {} spill_at {}", q.cursor, q.spill_at);
        assert!(!q.crowded || q.at == BUCKETS);
    }

    /// Drives an [`EventQueue`] and a [`HeapQueue`] through phases of `(events, gap_ns,
    /// ahead_ns)`: each step pushes one to three events up to `ahead_ns` after the clock (the
    /// last popped time) and pops one, the clock moving about `gap_ns` an event. Sparse and
    /// dense phases in turn make the wheel coarser and finer, and a few pushes far ahead and
    /// in the past go to the spill heap; `at` is checked after every push and pop. Returns the
    /// grains seen.
    fn run_phases(phases: &[(u32, u64, u64)], seed: u64) -> Vec<u32> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let (mut q, mut r) = (EventQueue::new(), HeapQueue::new());
        let (mut seq, mut now) = (0u64, 0u64);
        let mut grains = vec![0];
        for &(events, gap, ahead) in phases {
            for _ in 0..events {
                for _ in 0..rng.gen_range(1..=3) {
                    let t = match rng.gen_range(0..200) {
                        0 => now + rng.gen_range(0..1u64 << 45), // far, up to 9.8 hours
                        1 => now.saturating_sub(rng.gen_range(0..1_000_000)), // the past
                        _ => now + gap.min(ahead) / 2 + rng.gen_range(0..=ahead),
                    };
                    let k = Key {
                        secs: t as f64 / 1e9 + f64::from(rng.gen_range(0..3u8)) * 1e-18,
                        seq,
                    };
                    seq += 1;
                    q.push(k, seq);
                    r.push(k, seq);
                    assert_at(&q);
                }
                for _ in 0..rng.gen_range(1..=3) {
                    let (a, b) = (q.pop(), r.pop());
                    assert_at(&q);
                    assert_eq!(a.map(|(k, e)| (k.seq, e)), b.map(|(k, e)| (k.seq, e)));
                    if let Some((k, _)) = a {
                        now = now.max(k.time().as_nanos());
                    }
                    if grains.last() != Some(&q.grain) {
                        grains.push(q.grain);
                    }
                }
            }
        }
        assert_eq!(q.len(), r.len());
        while let Some((k, e)) = r.pop() {
            assert_eq!(q.pop().map(|(k, e)| (k.seq, e)), Some((k.seq, e)));
        }
        assert!(q.is_empty());
        grains
    }

    #[test]
    fn the_grain_follows_the_event_rate_and_keeps_the_order() {
        // Sparse (an event every 300 µs, 10-20 ms ahead, as seed 000), dense (every 10 ns,
        // up to 200 µs ahead: crowded buckets at a coarse grain), an idle gap, sparse again.
        let grains = run_phases(
            &[
                (20_000, 300_000, 20_000_000),
                (30_000, 10, 200_000),
                (100, 3_000_000_000, 5_000_000_000),
                (20_000, 300_000, 20_000_000),
            ],
            21,
        );
        let up = grains.windows(2).position(|w| w[1] > w[0]);
        let down = grains.windows(2).rposition(|w| w[1] < w[0]);
        assert!(
            matches!((up, down), (Some(u), Some(d)) if u < d),
            "{grains:?}"
        );
        assert!(grains.iter().any(|&g| g >= 6), "{grains:?}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Any sequence of sparse and dense phases pops in [`HeapQueue`]'s order.
        #[test]
        fn pops_in_heap_order_at_any_grain(
            phases in proptest::collection::vec(
                (1u32..3_000, 0u64..2_000_000, 0u64..50_000_000), 1..6),
            seed in 0u64..1000,
        ) {
            run_phases(&phases, seed);
        }
    }

    #[test]
    fn ticks_never_decrease() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        // Every scale of time from 0 up, the binade edges where a tick's unit doubles (2^20 s
        // and up) included, and pairs of neighbouring doubles.
        let mut xs = vec![
            0.0,
            f64::MIN_POSITIVE,
            1e-300,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
        ];
        for e in 15..40 {
            let edge = f64::from(1u32 << 15) * f64::from(1u32 << (e - 15));
            xs.extend([
                edge,
                f64::from_bits(edge.to_bits() - 1),
                f64::from_bits(edge.to_bits() + 1),
            ]);
        }
        for _ in 0..100_000 {
            let x = rng.gen::<f64>() * 10f64.powi(rng.gen_range(-12..12));
            xs.extend([x, f64::from_bits(x.to_bits() + 1)]);
        }
        xs.sort_by(f64::total_cmp);
        for g in 0..=MAX_GRAIN {
            let base = TICK_BASE * f64::from(1u32 << g);
            for w in xs.windows(2) {
                assert!(
                    tick(w[0], base) <= tick(w[1], base),
                    "{:e} {:e}",
                    w[0],
                    w[1]
                );
            }
        }
    }

    #[test]
    fn secs_of_rounds_back() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
        for _ in 0..200_000 {
            // Up to 2^50 ns the double rounds back exactly; beyond, never earlier.
            let short = Time::from_nanos(rng.gen_range(0..1u64 << 50));
            assert_eq!(Time::from_secs_f64(secs_of(short)), short);
            let long = Time::from_nanos(rng.gen_range(1u64 << 50..1u64 << 62));
            let t = Time::from_secs_f64(secs_of(long));
            assert!(
                t >= long && t.as_nanos() - long.as_nanos() < 1 << 12,
                "{long:?} {t:?}"
            );
        }
    }

    #[test]
    fn pops_in_heap_order_for_any_double() {
        // Keys the simulator never makes (negative times, −0.0, beyond 2^20 s where ticks
        // coarsen, infinities) still pop in `HeapQueue`'s order.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        let mut q = EventQueue::new();
        let mut r = HeapQueue::new();
        let mut seq = 0u64;
        for round in 0..20_000u32 {
            for _ in 0..rng.gen_range(0..4) {
                let secs = match rng.gen_range(0..12) {
                    0 => -rng.gen::<f64>() * 1e3,
                    1 => -0.0,
                    2 => 0.0,
                    3 => f64::INFINITY,
                    4 => f64::NEG_INFINITY,
                    5 => 1_048_576.0 * (1.0 + rng.gen::<f64>() * 3.0),
                    6 => rng.gen::<f64>() * 1e9,
                    _ => rng.gen::<f64>() * 1e-3 + f64::from(round) * 1e-4,
                };
                let k = Key { secs, seq };
                seq += 1;
                q.push(k, round);
                r.push(k, round);
            }
            assert_eq!(q.len(), r.len());
            if rng.gen_bool(0.6) {
                let (a, b) = (q.pop(), r.pop());
                assert_eq!(a.map(|(k, e)| (k.seq, e)), b.map(|(k, e)| (k.seq, e)));
            }
        }
        while let Some((k, e)) = r.pop() {
            assert_eq!(q.pop().map(|(k, e)| (k.seq, e)), Some((k.seq, e)));
        }
        assert!(q.is_empty());
    }
}
