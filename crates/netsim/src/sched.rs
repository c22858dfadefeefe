//! The scheduler's priority queue: events ordered by [`Key`] (time, NS-2's double time,
//! insertion sequence).
//!
//! Profiling the 100-flow × 1 Gb/s dumbbell (callgrind, `docs/performance.md`) showed
//! `BinaryHeap::pop` taking about a quarter of all instructions: ~300 per pop over ~350
//! pending events, in comparisons (`f64::total_cmp` on every one) and in moving 32-byte
//! entries down eight levels. Two changes, each measured:
//! - keys are encoded once, at push, as integers: `time` and the order-preserving bit pattern
//!   of the double time form one `u128` (`total_cmp`'s order is the integer order of that
//!   pattern), then `seq`; a comparison is two integer compares ([`HeapQueue`]);
//! - [`EventQueue`] is a timing wheel for the next 33 ms plus a heap for later events: pending
//!   events are mostly transmission ends and propagation arrivals a few µs to ms ahead, so a
//!   pop is a bitmap scan and a `Vec::pop` instead of a walk down the heap.
//!
//! Keys are unique in the simulator (every key has its own sequence number), so the order is
//! total and both queues pop exactly the sequence `BinaryHeap<Reverse<Key>>` would.

use core::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::Time;

/// When an event runs: its exact time; NS-2's double-precision time for it (computed with
/// NS-2's arithmetic, `clock + delay`), which breaks ties between events at the same
/// nanosecond exactly as NS-2's floating-point clock orders them; then insertion order.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// The event's time.
    pub time: Time,
    /// NS-2's double-precision time of the event, in seconds.
    pub shadow: f64,
    /// Insertion order: unique per event, so keys never tie.
    pub seq: u64,
}

impl PartialEq for Key {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl Ord for Key {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.time
            .cmp(&other.time)
            .then(self.shadow.total_cmp(&other.shadow))
            .then(self.seq.cmp(&other.seq))
    }
}

impl PartialOrd for Key {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// `Time::from_secs_f64(secs)`, bit for bit, without its call to libm's `round` (x86-64's
/// baseline has no rounding instruction; the call was 3% of a dumbbell's instructions, two per
/// packet-hop). For `0 < ns < 2^63`: truncate, then the fraction `ns − trunc(ns)` is exact
/// (Sterbenz), and rounding half away from zero is `frac ≥ 0.5`; other inputs take the original.
#[inline]
pub fn time_from_secs(secs: f64) -> Time {
    let ns = secs * 1e9;
    if ns > 0.0 && ns < 9.0e18 {
        let i = ns as i64;
        let frac = ns - i as f64;
        Time::from_nanos(i as u64 + u64::from(frac >= 0.5))
    } else {
        Time::from_secs_f64(secs)
    }
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
    /// `time` in the high 64 bits, `ordered_bits(shadow)` in the low 64.
    hi: u128,
    seq: u64,
    ev: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn new(key: Key, ev: E) -> Self {
        Entry {
            hi: (u128::from(key.time.as_nanos()) << 64) | u128::from(ordered_bits(key.shadow)),
            seq: key.seq,
            ev,
        }
    }

    /// Whether `self` runs before `other`.
    #[inline(always)]
    fn before(&self, other: &Self) -> bool {
        if self.hi != other.hi {
            self.hi < other.hi
        } else {
            self.seq < other.seq
        }
    }

    /// The wheel bucket number of the event's time.
    #[inline(always)]
    fn bucket(&self) -> u64 {
        ((self.hi >> 64) as u64) >> SHIFT
    }

    #[inline(always)]
    fn key(&self) -> Key {
        Key {
            time: Time::from_nanos((self.hi >> 64) as u64),
            shadow: from_ordered_bits(self.hi as u64),
            seq: self.seq,
        }
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.hi == other.hi && self.seq == other.seq
    }
}

impl<E> Eq for Entry<E> {}

impl<E> Ord for Entry<E> {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: `BinaryHeap` is a max-heap and the earliest key must come out first.
        if self.hi != other.hi {
            other.hi.cmp(&self.hi)
        } else {
            other.seq.cmp(&self.seq)
        }
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
        if self.hi != other.hi {
            other.hi < self.hi
        } else {
            other.seq <= self.seq
        }
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

/// log2 of a wheel bucket's width in nanoseconds: 4.096 µs, a few 1000-byte transmissions at
/// 1–10 Gb/s.
const SHIFT: u32 = 12;
/// Buckets in the wheel: with [`SHIFT`], a horizon of 33.5 ms, which holds the transmission
/// ends and propagation arrivals of typical links; later events (timers, long delays) wait in
/// the far heap until the wheel reaches them.
const BUCKETS: u64 = 1 << 13;
const MASK: u64 = BUCKETS - 1;
const WORDS: usize = (BUCKETS / 64) as usize;

/// The scheduler's priority queue: a timing wheel for the near future and a heap for the rest.
///
/// Bucket `b` of the wheel holds the events with `time >> SHIFT == b` (mod the wheel size),
/// sorted by full key; a bitmap of non-empty buckets finds the next one with a few word scans.
/// The wheel only ever holds events of the `BUCKETS` buckets from the one of the last event
/// popped (`cursor`), so buckets never mix laps, and bucket order is time order. Events
/// beyond that wait in a binary heap and move into the wheel as it turns. Since time is the
/// key's first component, the smallest key is the smallest in the first non-empty bucket,
/// unless the wheel is empty; the order is exactly [`HeapQueue`]'s. Push and pop cost a few
/// dozen instructions instead of a heap's walk over ~log2(n) levels.
#[derive(Clone, Debug)]
pub struct EventQueue<E> {
    /// Each bucket sorted by key, largest first (the next event is popped from the end).
    buckets: Vec<Vec<Entry<E>>>,
    /// Bit `b` set when bucket `b` is not empty.
    bits: Vec<u64>,
    /// Absolute bucket number (`time >> SHIFT`) of the last event popped.
    cursor: u64,
    /// Events in the wheel.
    wheel_len: usize,
    /// Events at or beyond `cursor + BUCKETS` when pushed.
    far: BinaryHeap<Entry<E>>,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            bits: vec![0; WORDS],
            cursor: 0,
            wheel_len: 0,
            far: BinaryHeap::new(),
        }
    }

    /// Queued events.
    pub fn len(&self) -> usize {
        self.wheel_len + self.far.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queue `ev` to run at `key`.
    #[inline]
    pub fn push(&mut self, key: Key, ev: E) {
        let e = Entry::new(key, ev);
        let b = key.time.as_nanos() >> SHIFT;
        if b >= self.cursor && b - self.cursor < BUCKETS {
            self.insert(b, e);
        } else {
            // Far future (or, never in the simulator, the past: the heap orders it right).
            self.far.push(e);
        }
    }

    #[inline]
    fn insert(&mut self, b: u64, e: Entry<E>) {
        let i = (b & MASK) as usize;
        let bucket = &mut self.buckets[i];
        // Largest first. Usually the bucket is empty or `e` is its earliest event: push.
        match bucket.last() {
            Some(x) if x.before(&e) => {
                let pos = bucket.iter().position(|x| x.before(&e)).unwrap_or(0);
                bucket.insert(pos, e);
            }
            _ => bucket.push(e),
        }
        self.bits[i / 64] |= 1 << (i % 64);
        self.wheel_len += 1;
    }

    /// The wheel bucket holding the earliest wheel event.
    #[inline]
    fn first_bucket(&self) -> Option<usize> {
        if self.wheel_len == 0 {
            return None;
        }
        let start = (self.cursor & MASK) as usize;
        let (w0, bit) = (start / 64, start % 64);
        let m = self.bits[w0] & (!0u64 << bit);
        if m != 0 {
            return Some(w0 * 64 + m.trailing_zeros() as usize);
        }
        for k in 1..=WORDS {
            let w = (w0 + k) % WORDS;
            let m = if k == WORDS {
                // Back at the first word: the buckets before `start`, a lap later.
                self.bits[w] & ((1u64 << bit) - 1)
            } else {
                self.bits[w]
            };
            if m != 0 {
                return Some(w * 64 + m.trailing_zeros() as usize);
            }
        }
        None
    }

    /// Move far events that the wheel now covers into it; with an empty wheel, turn it to the
    /// earliest far event first.
    #[inline]
    fn refill(&mut self) {
        if self.wheel_len == 0 {
            match self.far.peek() {
                Some(top) => self.cursor = self.cursor.max(top.bucket()),
                None => return,
            }
        }
        while let Some(top) = self.far.peek() {
            let b = top.bucket();
            if b < self.cursor || b - self.cursor >= BUCKETS {
                break;
            }
            if let Some(e) = self.far.pop() {
                self.insert(b, e);
            }
        }
    }

    /// Where the earliest event is: `Some(bucket)` in the wheel, `None` in the far heap.
    #[inline(always)]
    fn select(&mut self) -> Option<Option<usize>> {
        self.refill();
        if let Some(top) = self.far.peek() {
            if top.bucket() < self.cursor {
                return Some(None); // pushed in the past: never by the simulator
            }
        }
        match self.first_bucket() {
            Some(i) => Some(Some(i)),
            None => (!self.far.is_empty()).then_some(None),
        }
    }

    /// The earliest event, without removing it (the wheel may turn to it).
    #[inline]
    pub fn peek(&mut self) -> Option<(Key, E)> {
        let e = match self.select()? {
            Some(i) => self.buckets[i].last(),
            None => self.far.peek(),
        }?;
        Some((e.key(), e.ev))
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Key, E)> {
        self.pop_if(|_| true)
    }

    /// Remove and return the earliest event if `due` accepts its key (the run loop's
    /// "before the end of the run" test, without a second search).
    #[inline]
    pub fn pop_if(&mut self, due: impl FnOnce(&Key) -> bool) -> Option<(Key, E)> {
        let e = match self.select()? {
            Some(i) => {
                let bucket = &mut self.buckets[i];
                let e = *bucket.last()?;
                if !due(&e.key()) {
                    return None;
                }
                bucket.pop();
                if bucket.is_empty() {
                    self.bits[i / 64] &= !(1 << (i % 64));
                }
                self.wheel_len -= 1;
                e
            }
            None => {
                let e = *self.far.peek()?;
                if !due(&e.key()) {
                    return None;
                }
                self.far.pop();
                e
            }
        };
        self.cursor = self.cursor.max(e.bucket());
        Some((e.key(), e.ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn time_from_secs_is_from_secs_f64() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        // The edge cases are written with the digits that show where they sit (one ulp below a
        // half nanosecond, a halfway case at 2^52 ns), not clippy's shortest form.
        #[allow(clippy::excessive_precision)]
        let mut xs = vec![
            0.0,
            -0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::MIN_POSITIVE,
            0.5e-9,
            0.49999999999999994e-9,
            1.5e-9,
            2.5e-9,
            4_503_599_627.370_495_5,
            9.007_199_254_740_993,
            1e10,
            1.8e10,
            1e300,
        ];
        for _ in 0..200_000 {
            // Times of day in seconds at every scale, and exact half-nanoseconds.
            let e = rng.gen_range(-12..11);
            xs.push(rng.gen::<f64>() * 10f64.powi(e));
            xs.push((rng.gen_range(0..1u64 << 40) as f64 + 0.5) / 1e9);
        }
        for x in xs {
            assert_eq!(time_from_secs(x), Time::from_secs_f64(x), "{x:e}");
        }
    }

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
                let t = now
                    + match rng.gen_range(0..10) {
                        0 => rng.gen_range(0..200_000_000),
                        1..=3 => rng.gen_range(0..100_000),
                        _ => rng.gen_range(0..5),
                    };
                let shadow = t as f64 / 1e9 + f64::from(rng.gen_range(0..3u8)) * 1e-18;
                let k = Key {
                    time: Time::from_nanos(t),
                    shadow,
                    seq,
                };
                seq += 1;
                q.push(k, round);
                r.push(k, round);
                h.push(Reverse((k, round)));
            }
            assert_eq!(q.len(), h.len());
            if rng.gen_bool(0.6) {
                let a = q.pop();
                assert_eq!(r.pop().map(|(k, e)| (k.seq, e)), a.map(|(k, e)| (k.seq, e)));
                let b = h.pop().map(|Reverse(x)| x);
                assert_eq!(a.map(|(k, e)| (k.seq, e)), b.map(|(k, e)| (k.seq, e)));
                if let Some((k, _)) = a {
                    assert_eq!(Some(k), b.map(|x| x.0));
                    now = k.time.as_nanos();
                }
            }
        }
        while let Some(Reverse((k, e))) = h.pop() {
            assert_eq!(q.peek().map(|(k, e)| (k.seq, e)), Some((k.seq, e)));
            assert_eq!(q.pop().map(|(k, e)| (k.seq, e)), Some((k.seq, e)));
        }
        assert!(q.is_empty());
    }
}
