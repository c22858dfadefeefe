//! A bounded, lazily paged log-bucket histogram for delay quantiles.
//!
//! The bucket layout is exactly that of an HDR histogram with 3 significant digits and a lowest
//! discernible value of 1000 ns (`hdrhistogram::Histogram::new_with_bounds(1000, 2000, 3)`):
//! sub-bucket count 2048, unit 2⁹ ns. Values below 2²⁰ ns share one 512 ns wide "bucket 0" of
//! 2048 slots; every further power of two (bucket `b` ≥ 1) has 1024 slots of width 2^(9+b) ns,
//! so a slot is at most 1/1024 of its value wide (< 0.1 % relative). Bucket 44 reaches `u64::MAX`:
//! 47,104 slots in all. Quantiles follow `hdrhistogram`'s `value_at_quantile` (the highest value
//! of the slot holding the `⌈q·n⌉`-th smallest sample; the lowest for q = 0), so results equal
//! that crate's; a unit test checks this against `hdrhistogram` itself.
//!
//! Written by hand because no crate offers this indexing with bounded, lazily allocated storage:
//! `hdrhistogram` keeps one contiguous `u64` array from 0 up to the largest value seen (with
//! auto-resize, 96 KiB once a delay passes 1 s, up to 368 KiB), which made the two histograms of
//! a busy flow most of its memory. Here counts are `u16` in pages of 32 slots (64 B), allocated
//! on first touch and found through a page table of `u16` entries that covers only the pages
//! from the lowest to the highest touched. Delays that vary by up to a factor of two touch at
//! most 35 pages (2.2 KiB, plus a table of at most 70 B); in the 1000-flow 1 Gb/s scaling
//! dumbbell a flow's two directions hold ≈ 0.95 KiB, against ≈ 186 KiB with `hdrhistogram`.
//! The bound, every slot touched, is 1,472 pages (92 KiB) plus a 2,944 B table. A count that
//! passes `u16::MAX` wraps into a carry list (multiples of 2¹⁶ per slot), so no count is ever
//! lost; a slot that wraps costs 16 B there, once.

/// log2 of the slot width in bucket 0 (lowest discernible value 1000 ns → 2⁹).
const UNIT_MAGNITUDE: u32 = 9;
/// log2 of half the sub-bucket count (2048 sub-buckets for 3 significant digits).
const SUB_HALF_MAGNITUDE: u32 = 10;
/// Half the sub-bucket count.
const SUB_HALF: usize = 1 << SUB_HALF_MAGNITUDE;
/// Bits of a value that fit in bucket 0.
const SUB_BUCKET_MASK: u64 = ((2 * SUB_HALF as u64) - 1) << UNIT_MAGNITUDE;
/// 64 − unit magnitude − sub-bucket count magnitude: `bucket = BASE − lz(v | mask)`.
const LEADING_ZERO_BASE: u32 = 64 - UNIT_MAGNITUDE - (SUB_HALF_MAGNITUDE + 1);
/// Slots in all: buckets 0..=44, bucket 0 counting double.
pub(crate) const SLOTS: usize = (LEADING_ZERO_BASE as usize + 2) << SUB_HALF_MAGNITUDE;
/// log2 of the slots per page: 32 `u16` counts, one cache line. Delays are sparse across
/// their range (a 1 Mb/s flow's 10 s touch ≈ 50 slots spread over ≈ 700), so smaller pages
/// hold fewer empty slots.
const PAGE_BITS: u32 = 5;
/// Slots per page.
const PAGE: usize = 1 << PAGE_BITS;
/// Pages in all.
const PAGES: usize = SLOTS / PAGE;

// Page numbers and slot indices fit the table's u16 and the carry list's u32.
const _: () = assert!(PAGES < u16::MAX as usize && SLOTS < u32::MAX as usize);

/// Delay histogram with HDR (3 significant digits, 1 µs) buckets and lazily paged counts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DelayHistogram {
    /// Page number − `base` → 1 + its position in `pages`; 0 when the page was never touched.
    table: Vec<u16>,
    /// The page number of `table[0]` (the lowest page touched).
    base: usize,
    /// Counts, `PAGE` slots per page, in order of first touch.
    pages: Vec<[u16; PAGE]>,
    /// (slot, multiples of 2¹⁶) for slots whose `u16` count wrapped, sorted by slot.
    carries: Vec<(u32, u64)>,
    /// Samples recorded.
    total: u64,
}

/// The slot of value `v` (no division: a leading-zero count and shifts).
#[inline(always)]
fn slot_of(v: u64) -> usize {
    let bucket = LEADING_ZERO_BASE - (v | SUB_BUCKET_MASK).leading_zeros();
    let sub = (v >> (bucket + UNIT_MAGNITUDE)) as usize;
    ((bucket as usize + 1) << SUB_HALF_MAGNITUDE) + sub - SUB_HALF
}

/// The lowest value of `slot` and log2 of its width.
fn slot_range(slot: usize) -> (u64, u32) {
    let (bucket, sub) = match (slot >> SUB_HALF_MAGNITUDE).checked_sub(1) {
        // The lower half of bucket 0.
        None => (0, slot),
        Some(b) => (b as u32, (slot & (SUB_HALF - 1)) + SUB_HALF),
    };
    let shift = bucket + UNIT_MAGNITUDE;
    ((sub as u64) << shift, shift)
}

impl DelayHistogram {
    /// An empty histogram (no heap), for constant initializers.
    pub(crate) const EMPTY: DelayHistogram = DelayHistogram {
        table: Vec::new(),
        base: 0,
        pages: Vec::new(),
        carries: Vec::new(),
        total: 0,
    };

    /// Record one sample of value `v` (ns).
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.add_one(v);
        self.total = self.total.saturating_add(1);
    }

    /// Record `n` samples of value `v` (ns).
    #[inline]
    pub fn record_n(&mut self, v: u64, n: u64) {
        let (slot, c) = self.slot_count(v);
        let sum = u64::from(*c) + n;
        *c = sum as u16;
        if sum >> 16 != 0 {
            self.carry(slot, sum >> 16);
        }
        self.total = self.total.saturating_add(n);
    }

    /// Count one sample of value `v` without counting it in [`DelayHistogram::len`]: for
    /// callers that count samples themselves and give the total with `set_len`.
    #[inline(always)]
    pub(crate) fn add_one(&mut self, v: u64) {
        let (slot, c) = self.slot_count(v);
        let wrapped;
        (*c, wrapped) = c.overflowing_add(1);
        if wrapped {
            self.carry(slot, 1);
        }
    }

    /// The slot of value `v` and its count, the page allocated on first touch.
    #[inline(always)]
    fn slot_count(&mut self, v: u64) -> (usize, &mut u16) {
        let slot = slot_of(v);
        let page = slot >> PAGE_BITS;
        // A page below `base` wraps to a large index, past the table.
        let at = match self.table.get(page.wrapping_sub(self.base)) {
            Some(&p) if p != 0 => usize::from(p) - 1,
            _ => self.new_page(page),
        };
        (slot, &mut self.pages[at][slot & (PAGE - 1)])
    }

    /// Set the samples recorded (after [`DelayHistogram::add_one`]).
    pub(crate) fn set_len(&mut self, n: u64) {
        self.total = n;
    }

    /// Allocate page `page` (first touch) and return its position in `pages`.
    #[cold]
    fn new_page(&mut self, page: usize) -> usize {
        if self.table.is_empty() {
            self.base = page;
        } else if page < self.base {
            // Extend the table down to `page` (delays seldom fall below the first ones).
            let below = self.base - page;
            self.table.reserve_exact(below);
            self.table.splice(0..0, std::iter::repeat_n(0, below));
            self.base = page;
        }
        let i = page - self.base;
        if self.table.len() <= i {
            self.table.reserve_exact(i + 1 - self.table.len());
            self.table.resize(i + 1, 0);
        }
        if self.pages.len() == self.pages.capacity() {
            // Grow by an eighth (at least one page) rather than double: pages are added
            // rarely, and doubling left a third of a busy run's pages empty. Never past the
            // number of pages that exist.
            let n = self.pages.len();
            self.pages.reserve_exact((n / 8).max(1).min(PAGES - n));
        }
        self.pages.push([0; PAGE]);
        let at = self.pages.len() - 1;
        // At most PAGES pages exist, so the position fits (checked above at compile time).
        self.table[i] = (at + 1) as u16;
        at
    }

    /// Add `wraps` · 2¹⁶ to the count of `slot`.
    #[cold]
    fn carry(&mut self, slot: usize, wraps: u64) {
        let slot = slot as u32;
        match self.carries.binary_search_by_key(&slot, |&(s, _)| s) {
            Ok(i) => self.carries[i].1 = self.carries[i].1.saturating_add(wraps),
            Err(i) => self.carries.insert(i, (slot, wraps)),
        }
    }

    /// Samples recorded.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Heap bytes held (page table, pages, carry list).
    pub fn heap_bytes(&self) -> usize {
        self.table.capacity() * size_of::<u16>()
            + self.pages.capacity() * size_of::<[u16; PAGE]>()
            + self.carries.capacity() * size_of::<(u32, u64)>()
    }

    /// Full count of `slot` in page `p` (its position in `pages`).
    fn count(&self, p: usize, slot: usize) -> u64 {
        let low = u64::from(self.pages[p][slot & (PAGE - 1)]);
        if self.carries.is_empty() {
            return low;
        }
        let wraps = self
            .carries
            .binary_search_by_key(&(slot as u32), |&(s, _)| s)
            .map_or(0, |i| self.carries[i].1);
        low.saturating_add(wraps.saturating_mul(1 << 16))
    }

    /// The value at quantile `q`, as `hdrhistogram`'s `value_at_quantile`: the highest value of
    /// the slot holding the `max(1, ⌈q·n⌉)`-th smallest sample (its lowest value when q = 0);
    /// q above 1 counts as 1. `None` when nothing was recorded.
    pub fn value_at_quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let q = q.min(1.0);
        let want = ((q * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &p) in self.table.iter().enumerate() {
            let Some(p) = usize::from(p).checked_sub(1) else {
                continue;
            };
            let first = (self.base + i) << PAGE_BITS;
            let page_total =
                (first..first + PAGE).fold(0u64, |a, s| a.saturating_add(self.count(p, s)));
            if seen.saturating_add(page_total) < want {
                seen = seen.saturating_add(page_total);
                continue;
            }
            for slot in first..first + PAGE {
                seen = seen.saturating_add(self.count(p, slot));
                if seen >= want {
                    let (low, shift) = slot_range(slot);
                    return Some(if q == 0.0 {
                        low
                    } else {
                        // hdrhistogram saturates the slot's end at u64::MAX before subtracting 1.
                        low.saturating_add(1 << shift) - 1
                    });
                }
            }
        }
        // Unreachable when `total` equals the counts' sum; hdrhistogram answers 0 here.
        Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;
    use proptest::prelude::*;

    /// The reference: the histogram `DelayStats` used before, configured the same way.
    fn reference() -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1000, 2000, 3).unwrap();
        h.auto(true);
        h
    }

    #[test]
    fn layout_matches_hdrhistogram() {
        let h = reference();
        // Slot boundaries: every value's slot range equals hdrhistogram's equivalence range.
        let mut probes = vec![
            0,
            1,
            511,
            512,
            1000,
            1 << 20,
            (1 << 20) - 1,
            u64::MAX,
            u64::MAX - 1,
        ];
        for b in 0..64 {
            let p = 1u64 << b;
            probes.extend([p - 1, p, p + 1, p | (p >> 1), p.wrapping_mul(3) / 2]);
        }
        for v in probes {
            let (low, shift) = slot_range(slot_of(v));
            assert_eq!(low, h.lowest_equivalent(v), "lowest of {v}");
            assert_eq!(1u64 << shift, h.equivalent_range(v), "width at {v}");
        }
        assert_eq!(slot_of(u64::MAX), SLOTS - 1);
        assert_eq!(slot_of(0), 0);
    }

    #[test]
    fn wrapped_counts_are_kept() {
        let mut ours = DelayHistogram::default();
        let mut hdr = reference();
        // u32::MAX + 3 samples at 5 ms, 10 above: the 0.5 quantile must stay at 5 ms, which a
        // wrapped count (2 samples) would move to 7 ms.
        for (v, n) in [
            (5_000_000, u64::from(u32::MAX)),
            (5_000_000, 3),
            (7_000_000, 10),
        ] {
            ours.record_n(v, n);
            hdr.record_n(v, n).unwrap();
        }
        assert_eq!(ours.len(), u64::from(u32::MAX) + 13);
        assert_eq!(ours.carries, vec![(slot_of(5_000_000) as u32, 1 << 16)]);
        for q in [0.0, 0.5, 0.999_999_999, 1.0] {
            assert_eq!(
                ours.value_at_quantile(q),
                Some(hdr.value_at_quantile(q)),
                "q {q}"
            );
        }
        assert!(ours.value_at_quantile(0.5).unwrap() < 5_010_000);
    }

    #[test]
    fn counts_wrap_one_sample_at_a_time() {
        let mut ours = DelayHistogram::default();
        let mut hdr = reference();
        // Three slots, the middle one passing u16::MAX three times, recorded one by one (the
        // simulator's path), in an order that touches the lowest page last.
        let n = 3 * (1 << 16) + 7;
        for i in 0..n {
            ours.record(30_000_000);
            hdr.record(30_000_000).unwrap();
            if i % 1000 == 0 {
                ours.record(90_000_000);
                hdr.record(90_000_000).unwrap();
            }
        }
        ours.record(2_000);
        hdr.record(2_000).unwrap();
        assert_eq!(ours.carries, vec![(slot_of(30_000_000) as u32, 3)]);
        for q in [0.0, 0.001, 0.5, 0.99, 0.999, 1.0] {
            assert_eq!(
                ours.value_at_quantile(q),
                Some(hdr.value_at_quantile(q)),
                "q {q}"
            );
        }
    }

    #[test]
    fn memory_is_lazy_and_bounded() {
        let mut h = DelayHistogram::default();
        assert_eq!(h.heap_bytes(), 0);
        assert_eq!(h.value_at_quantile(0.5), None);
        // A flow's delays between 20 and 40 ms, 1 µs apart: a factor of two spans 1024 slots,
        // 32 pages, one more where it straddles a page boundary, two more across a bucket.
        for v in (20_000_000..40_000_000).step_by(1000) {
            h.record(v);
        }
        assert!(h.pages.len() <= 35, "{} pages", h.pages.len());
        // At most an eighth of spare pages; the table covers the pages touched only.
        let table = 2 * (slot_of(40_000_000) / PAGE - slot_of(20_000_000) / PAGE + 1);
        assert!(
            h.heap_bytes() <= (35 + 4) * 64 + table,
            "{} B",
            h.heap_bytes()
        );
        // Every slot touched (the pages below the first ones after them): the bound.
        for s in 0..SLOTS {
            h.record(slot_range(s).0);
        }
        assert_eq!(h.pages.len(), PAGES);
        assert_eq!(h.heap_bytes(), PAGES * 64 + 2 * PAGES);
    }

    /// Delays from 0 ns to beyond hours, including the extremes, plus clusters (a path delay
    /// with a little queueing) so quantiles fall inside busy pages.
    fn delays() -> impl Strategy<Value = Vec<u64>> {
        let one = prop_oneof![
            0u64..2_000,
            0u64..2_000_000,
            0u64..20_000_000_000,
            0u64..36_000_000_000_000,
            Just(u64::MAX),
            (0u32..64).prop_flat_map(|b| 0u64..=(u64::MAX >> b)),
        ];
        prop_oneof![
            prop::collection::vec(one, 1..300),
            (1_000u64..10_000_000_000, 1u64..5_000_000, 1usize..2_000)
                .prop_flat_map(|(base, spread, n)| prop::collection::vec(base..base + spread, n)),
        ]
    }

    fn quantiles() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(prop_oneof![0.0f64..=1.0, Just(0.0), Just(1.0)], 1..20)
    }

    proptest! {
        #[test]
        fn quantiles_equal_hdrhistogram(values in delays(), qs in quantiles()) {
            let mut ours = DelayHistogram::default();
            let mut hdr = reference();
            for &v in &values {
                ours.record(v);
                hdr.record(v).unwrap();
            }
            prop_assert_eq!(ours.len(), hdr.len());
            for q in qs.into_iter().chain([0.0, 0.5, 0.95, 0.99, 1.0]) {
                prop_assert_eq!(ours.value_at_quantile(q), Some(hdr.value_at_quantile(q)), "q {}", q);
            }
        }
    }
}
