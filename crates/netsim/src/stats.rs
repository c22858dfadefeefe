//! Streamed statistics: per-flow recorders, per-link queue occupancy, agent samples.
//!
//! Everything here is fed by events and keeps bounded memory per flow except the optional
//! per-packet delay log. The per-bin time series grow with simulated time up to [`MAX_BINS`]
//! bins; past that, adjacent bins are merged and the bin width doubles, so a series never holds
//! more than [`MAX_BINS`] entries (see [`FlowRecorder::bin_width`]). The same [`FlowRecorder`] is fed by the simulator and by the
//! NS-2 trace reader ([`crate::trace::Ns2TraceReader`]), so metrics computed from either source
//! come from identical code.

use core::time::Duration;

use crate::Time;

mod hist;
mod meter;

pub use hist::DelayHistogram;
pub(crate) use meter::FlowMeters;

/// Most bins a time series holds ([`FlowRecorder`], [`Occupancy`]): 65,536 (18.2 hours at the
/// default 1 s bins). An event past the last bin halves the series' resolution instead: adjacent
/// bins are merged and the bin width doubles. Runs shorter than this many bins, every scenario
/// shipped today (at most a few hundred bins), are unaffected. Bounds a flow's three series per
/// direction at 1.5 MiB and a gauge's at 0.5 MiB, however long the run or fine the bins.
pub const MAX_BINS: usize = 1 << 16;

/// Make room in `series` for `len` bins, leaving at most an eighth (and at least 2 bins) spare:
/// series grow a bin at a time to a length a run does not know in advance, and `Vec`'s
/// doubling left up to half of each one empty (`docs/performance.md`, "Third round").
fn reserve_bins<T>(series: &mut Vec<T>, len: usize) {
    if series.capacity() < len {
        let n = series.len();
        series.reserve_exact(len.max(n + (n / 8).max(2)) - n);
    }
}

/// Merge adjacent pairs of bins in place: `[a, b, c, d, e]` becomes `[a+b, c+d, e]`.
fn merge_pairs<T: Copy>(series: &mut Vec<T>, add: impl Fn(T, T) -> T) {
    let n = series.len().div_ceil(2);
    for i in 0..n {
        let a = series[2 * i];
        series[i] = match series.get(2 * i + 1) {
            Some(&b) => add(a, b),
            None => a,
        };
    }
    series.truncate(n);
}

/// Why a packet was dropped (`docs/simulator.md`, "Drop causes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropCause {
    /// The queue was full (DropTail overflow, RED forced drop on the hard limit).
    Queue,
    /// An active queue management early (probabilistic) drop.
    Aqm,
    /// A link error (loss model, or a wireless frame that exhausted its retries).
    Link,
    /// The IP TTL ran out.
    Ttl,
    /// The link was down, or no route existed.
    Down,
}

impl DropCause {
    /// Every cause, in [`DropCause::index`] order.
    pub const ALL: [DropCause; 5] = [
        DropCause::Queue,
        DropCause::Aqm,
        DropCause::Link,
        DropCause::Ttl,
        DropCause::Down,
    ];

    /// Position in [`DropCause::ALL`] (for per-cause counter arrays).
    pub fn index(self) -> usize {
        match self {
            DropCause::Queue => 0,
            DropCause::Aqm => 1,
            DropCause::Link => 2,
            DropCause::Ttl => 3,
            DropCause::Down => 4,
        }
    }

    /// Lower-case name used in CSV traces and reports.
    pub fn name(self) -> &'static str {
        match self {
            DropCause::Queue => "queue",
            DropCause::Aqm => "aqm",
            DropCause::Link => "link",
            DropCause::Ttl => "ttl",
            DropCause::Down => "down",
        }
    }

    /// The cause named `name` (inverse of [`DropCause::name`]).
    pub fn from_name(name: &str) -> Option<DropCause> {
        DropCause::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// How statistics are gathered.
#[derive(Clone, Debug, PartialEq)]
pub struct StatsConfig {
    /// Width of a time-series bin (default 1 s).
    pub bin_width: Duration,
    /// Start of the measurement window: events before it (warm-up) are left out of the
    /// counters, delays and jitter, but not out of the time series or the accounting.
    pub window_start: Time,
    /// End of the measurement window (exclusive); `None` means the end of the run.
    pub window_end: Option<Time>,
    /// Keep every delivered packet's (arrival time, delay) in [`FlowRecorder::delays`]. Off by
    /// default: memory then grows with delivered packets.
    pub record_delays: bool,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig {
            bin_width: Duration::from_secs(1),
            window_start: Time::ZERO,
            window_end: None,
            record_delays: false,
        }
    }
}

impl StatsConfig {
    fn in_window(&self, t: Time) -> bool {
        t >= self.window_start && self.window_end.is_none_or(|end| t < end)
    }

    fn bin_ns(&self) -> u64 {
        // A zero bin width would divide by zero; treat it as 1 ns.
        u64::try_from(self.bin_width.as_nanos())
            .unwrap_or(u64::MAX)
            .max(1)
    }
}

/// Delay and jitter statistics of a flow's delivered packets.
///
/// Quantiles come from a [`DelayHistogram`]: HDR buckets with 3 significant digits (a quantile
/// is at most max(511 ns, value/1024) above the exact one), in lazily allocated pages (≈ 0.5 KiB
/// per direction in the 1000-flow scaling dumbbell, at most 95 KiB); count, sum, min and
/// max are exact (integer nanoseconds).
#[derive(Clone, Debug)]
pub struct DelayStats {
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    hist: DelayHistogram,
    last_ns: Option<u64>,
    sum_abs_diff_ns: u128,
    diffs: u64,
    rfc3550_ns: f64,
}

impl Default for DelayStats {
    fn default() -> Self {
        DelayStats {
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            hist: DelayHistogram::default(),
            last_ns: None,
            sum_abs_diff_ns: 0,
            diffs: 0,
            rfc3550_ns: 0.0,
        }
    }
}

impl DelayStats {
    /// Record one packet's one-way delay (packets in arrival order).
    #[inline]
    pub fn record(&mut self, delay: Duration) {
        self.record_ns(u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX));
    }

    /// [`DelayStats::record`] of a delay of `d` ns (the simulator's delays are nanosecond
    /// counts already: a `Duration` would split them into seconds and back).
    #[inline]
    fn record_ns(&mut self, d: u64) {
        self.count += 1;
        self.sum_ns += u128::from(d);
        self.min_ns = self.min_ns.min(d);
        self.max_ns = self.max_ns.max(d);
        // Pages are allocated on first touch: reverse directions of one-way flows never pay.
        self.hist.record(d);
        if let Some(last) = self.last_ns {
            let diff = d.abs_diff(last);
            self.sum_abs_diff_ns += u128::from(diff);
            self.diffs += 1;
            self.rfc3550_ns = rfc3550_step(self.rfc3550_ns, diff);
        }
        self.last_ns = Some(d);
    }

    /// Packets recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean delay in seconds (0 when nothing was recorded).
    pub fn mean_secs(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64 * 1e-9
        }
    }

    /// Smallest delay, if any.
    pub fn min(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_nanos(self.min_ns))
    }

    /// Largest delay, if any.
    pub fn max(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_nanos(self.max_ns))
    }

    /// Jitter as max − min delay (seed 004), in seconds.
    pub fn range_secs(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            (self.max_ns - self.min_ns) as f64 * 1e-9
        }
    }

    /// Jitter as the mean of |d_i − d_{i−1}| over consecutive packets (seed 000), in seconds.
    pub fn mean_abs_diff_secs(&self) -> f64 {
        if self.diffs == 0 {
            0.0
        } else {
            self.sum_abs_diff_ns as f64 / self.diffs as f64 * 1e-9
        }
    }

    /// RFC 3550 interarrival jitter after the last packet, in seconds.
    pub fn rfc3550_secs(&self) -> f64 {
        self.rfc3550_ns * 1e-9
    }

    /// The delay at quantile `q` (0..=1; NaN counts as 0.5), within the histogram's
    /// resolution ([`DelayHistogram::value_at_quantile`]); `None` when nothing was recorded.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let q = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
        self.hist.value_at_quantile(q).map(Duration::from_nanos)
    }

    /// Heap bytes held by the delay histogram.
    pub fn heap_bytes(&self) -> usize {
        self.hist.heap_bytes()
    }
}

/// Per-flow, per-direction statistics fed by send, delivery and drop events.
#[derive(Clone, Debug)]
pub struct FlowRecorder {
    cfg: StatsConfig,
    bin_ns: u64,
    /// The last bin looked up, as `[start, end)` in ns and its index: consecutive events
    /// almost always fall in the same bin, and this spares a 64-bit division per event.
    last_bin: (u64, u64, usize),
    /// Packets sent by the source in the window.
    pub sent_packets: u64,
    /// Wire bytes sent in the window.
    pub sent_bytes: u64,
    /// Payload bytes sent in the window.
    pub sent_payload: u64,
    /// Packets delivered to the destination agent in the window.
    pub delivered_packets: u64,
    /// Wire bytes delivered in the window.
    pub delivered_bytes: u64,
    /// Payload bytes delivered in the window.
    pub delivered_payload: u64,
    /// Drops in the window, indexed by [`DropCause::index`].
    pub drops: [u64; 5],
    /// Delivered packets that crossed an untrusted node unprotected (E6).
    pub exposed: u64,
    /// Delivered packets carrying an ECN-CE mark (set by an AQM that marked instead of
    /// dropping).
    pub marked: u64,
    /// Delay and jitter of the packets delivered in the window.
    pub delay: DelayStats,
    /// First and last delivery times in the window.
    pub first_delivery: Option<Time>,
    /// Last delivery time in the window.
    pub last_delivery: Option<Time>,
    sent_series: Vec<u64>,
    recv_series: Vec<u64>,
    goodput_series: Vec<u64>,
    delays: Vec<(Time, Duration)>,
}

impl FlowRecorder {
    /// An empty recorder.
    pub fn new(cfg: &StatsConfig) -> Self {
        FlowRecorder {
            bin_ns: cfg.bin_ns(),
            last_bin: (0, 0, 0),
            cfg: cfg.clone(),
            sent_packets: 0,
            sent_bytes: 0,
            sent_payload: 0,
            delivered_packets: 0,
            delivered_bytes: 0,
            delivered_payload: 0,
            drops: [0; 5],
            exposed: 0,
            marked: 0,
            delay: DelayStats::default(),
            first_delivery: None,
            last_delivery: None,
            sent_series: Vec::new(),
            recv_series: Vec::new(),
            goodput_series: Vec::new(),
            delays: Vec::new(),
        }
    }

    fn add_bin(series: &mut Vec<u64>, bin: usize, v: u64) {
        if series.len() <= bin {
            series.resize(bin + 1, 0);
        }
        series[bin] += v;
    }

    #[inline]
    fn bin(&mut self, t: Time) -> usize {
        let t = t.as_nanos();
        let (start, end, idx) = self.last_bin;
        if t >= start && t < end {
            return idx;
        }
        self.new_bin(t)
    }

    /// Look up the bin of `t` outside the cached one, coarsening the series when `t` lies past
    /// [`MAX_BINS`] bins.
    #[cold]
    fn new_bin(&mut self, t: u64) -> usize {
        while t / self.bin_ns >= MAX_BINS as u64 {
            for series in [
                &mut self.sent_series,
                &mut self.recv_series,
                &mut self.goodput_series,
            ] {
                merge_pairs(series, |a, b| a + b);
            }
            self.bin_ns = self.bin_ns.saturating_mul(2);
        }
        let n = t / self.bin_ns;
        // Below MAX_BINS, so the index fits.
        let idx = n as usize;
        let start = n * self.bin_ns;
        self.last_bin = (start, start.saturating_add(self.bin_ns), idx);
        idx
    }

    /// The source sent a packet of `size` wire bytes carrying `payload` bytes.
    #[inline]
    pub fn on_sent(&mut self, now: Time, size: u32, payload: u32) {
        let bin = self.bin(now);
        Self::add_bin(&mut self.sent_series, bin, u64::from(size));
        if self.cfg.in_window(now) {
            self.sent_packets += 1;
            self.sent_bytes += u64::from(size);
            self.sent_payload += u64::from(payload);
        }
    }

    /// A packet sent at `sent_at` reached the destination agent.
    #[inline]
    pub fn on_delivered(&mut self, now: Time, sent_at: Time, size: u32, payload: u32) {
        let bin = self.bin(now);
        Self::add_bin(&mut self.recv_series, bin, u64::from(size));
        Self::add_bin(&mut self.goodput_series, bin, u64::from(payload));
        if self.cfg.in_window(now) {
            self.delivered_packets += 1;
            self.delivered_bytes += u64::from(size);
            self.delivered_payload += u64::from(payload);
            let d = now.as_nanos().saturating_sub(sent_at.as_nanos());
            self.delay.record_ns(d);
            if self.cfg.record_delays {
                self.delays.push((now, Duration::from_nanos(d)));
            }
            self.first_delivery.get_or_insert(now);
            self.last_delivery = Some(now);
        }
    }

    /// A delivered packet had crossed an untrusted node unprotected.
    pub fn on_exposed(&mut self, now: Time) {
        if self.cfg.in_window(now) {
            self.exposed += 1;
        }
    }

    /// A delivered packet carried an ECN-CE mark.
    pub fn on_marked(&mut self, now: Time) {
        if self.cfg.in_window(now) {
            self.marked += 1;
        }
    }

    /// A packet of this flow and direction was dropped.
    pub fn on_dropped(&mut self, now: Time, cause: DropCause) {
        if self.cfg.in_window(now) {
            self.drops[cause.index()] += 1;
        }
    }

    /// Drops of one cause in the window.
    pub fn dropped(&self, cause: DropCause) -> u64 {
        self.drops[cause.index()]
    }

    /// All drops in the window.
    pub fn dropped_total(&self) -> u64 {
        self.drops.iter().sum()
    }

    /// (sent − delivered) / sent in packets, 0 when nothing was sent.
    pub fn loss_rate(&self) -> f64 {
        if self.sent_packets == 0 {
            0.0
        } else {
            self.sent_packets.saturating_sub(self.delivered_packets) as f64
                / self.sent_packets as f64
        }
    }

    /// Wire bits delivered per second over `duration`.
    pub fn throughput_bps(&self, duration: Duration) -> f64 {
        let s = duration.as_secs_f64();
        if s > 0.0 {
            self.delivered_bytes as f64 * 8.0 / s
        } else {
            0.0
        }
    }

    /// Payload bits delivered per second over `duration`.
    pub fn goodput_bps(&self, duration: Duration) -> f64 {
        let s = duration.as_secs_f64();
        if s > 0.0 {
            self.delivered_payload as f64 * 8.0 / s
        } else {
            0.0
        }
    }

    /// Wire bytes sent per bin of [`FlowRecorder::bin_width`] (whole run, not only the window).
    pub fn sent_series(&self) -> &[u64] {
        &self.sent_series
    }

    /// Wire bytes delivered per bin (whole run).
    pub fn received_series(&self) -> &[u64] {
        &self.recv_series
    }

    /// Payload bytes delivered per bin (whole run).
    pub fn goodput_series(&self) -> &[u64] {
        &self.goodput_series
    }

    /// Bin width of the series: the configured width, doubled once for each time the run went
    /// past [`MAX_BINS`] bins.
    pub fn bin_width(&self) -> Duration {
        Duration::from_nanos(self.bin_ns)
    }

    /// Heap bytes held: the delay histogram, the three series and the optional delay log.
    pub fn heap_bytes(&self) -> usize {
        self.delay.heap_bytes()
            + (self.sent_series.capacity()
                + self.recv_series.capacity()
                + self.goodput_series.capacity())
                * size_of::<u64>()
            + self.delays.capacity() * size_of::<(Time, Duration)>()
    }

    /// Every delivered packet's (arrival time, delay), when [`StatsConfig::record_delays`].
    pub fn delays(&self) -> &[(Time, Duration)] {
        &self.delays
    }
}

/// RFC 3550 §6.4.1: J += (|D| − J)/16, with D (`diff`, ns) the change in transit time.
#[inline(always)]
fn rfc3550_step(j: f64, diff: u64) -> f64 {
    j + (u64_to_f64(diff) - j) / 16.0
}

/// `x as f64`, faster: below 2^63 (always, for spans and queue lengths) the signed
/// conversion gives the same value and is one instruction where the unsigned one is a branchy
/// sequence.
#[inline(always)]
fn u64_to_f64(x: u64) -> f64 {
    match i64::try_from(x) {
        Ok(i) => i as f64,
        Err(_) => x as f64,
    }
}

/// A time-weighted gauge (queue occupancy): mean per bin, overall mean and maximum.
#[derive(Clone, Debug)]
pub struct Occupancy {
    bin_ns: u64,
    /// End of the bin holding `last_t`: `(last_t / bin_ns + 1) · bin_ns`, kept so that the
    /// common update (within the current bin) needs no division.
    bin_end: u64,
    last_t: u64,
    value: u64,
    bin_area: f64,
    total_area: f64,
    max: u64,
    series: Vec<f64>,
}

impl Occupancy {
    /// A gauge at zero from time zero.
    pub fn new(bin_width: Duration) -> Self {
        let bin_ns = u64::try_from(bin_width.as_nanos())
            .unwrap_or(u64::MAX)
            .max(1);
        Occupancy {
            bin_ns,
            bin_end: bin_ns,
            last_t: 0,
            value: 0,
            bin_area: 0.0,
            total_area: 0.0,
            max: 0,
            series: Vec::new(),
        }
    }

    #[inline]
    fn advance(&mut self, now: Time) {
        let now = now.as_nanos().max(self.last_t);
        if now >= self.bin_end {
            self.close_bins(now);
        }
        let dt = u64_to_f64(now - self.last_t);
        let v = u64_to_f64(self.value);
        self.bin_area += v * dt;
        self.total_area += v * dt;
        self.last_t = now;
    }

    /// Close every bin boundary crossed since the last change (once per bin).
    #[cold]
    fn close_bins(&mut self, now: u64) {
        let v = self.value as f64;
        while now >= self.bin_end {
            let dt = (self.bin_end - self.last_t) as f64;
            self.bin_area += v * dt;
            self.total_area += v * dt;
            self.series.push(self.bin_area / self.bin_ns as f64);
            self.bin_area = 0.0;
            self.last_t = self.bin_end;
            if self.series.len() == MAX_BINS {
                // Full: halve the resolution. MAX_BINS is even, so the merged bins end at
                // `last_t` and the next one starts there.
                merge_pairs(&mut self.series, |a, b| (a + b) / 2.0);
                self.bin_ns = self.bin_ns.saturating_mul(2);
            }
            self.bin_end = (self.last_t / self.bin_ns + 1).saturating_mul(self.bin_ns);
        }
    }

    /// The gauge changes to `value` at `now`.
    #[inline]
    pub fn set(&mut self, now: Time, value: u64) {
        self.advance(now);
        self.value = value;
        self.max = self.max.max(value);
    }

    /// Account for time up to `now` (end of run); completed bins appear in the series.
    pub fn finish(&mut self, now: Time) {
        self.advance(now);
    }

    /// Time-weighted mean per completed bin of [`Occupancy::bin_width`].
    pub fn series(&self) -> &[f64] {
        &self.series
    }

    /// Bin width of the series: the configured width, doubled once for each time the run went
    /// past [`MAX_BINS`] bins.
    pub fn bin_width(&self) -> Duration {
        Duration::from_nanos(self.bin_ns)
    }

    /// Time-weighted mean from time zero to the last update.
    pub fn mean(&self) -> f64 {
        if self.last_t == 0 {
            0.0
        } else {
            self.total_area / self.last_t as f64
        }
    }

    /// Largest value seen.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Current value.
    pub fn current(&self) -> u64 {
        self.value
    }
}

/// A link's two queue gauges (waiting packets and bytes) as the simulator keeps them during a
/// run: they always change together, so they share one clock (last change, bin end, bin
/// width) and one test for the common zero-to-zero update. Each gauge's float operations are
/// [`Occupancy`]'s, in the same order; [`QueueGauges::occupancy`] gives the two gauges as
/// [`Occupancy`] values.
#[derive(Clone, Debug)]
pub(crate) struct QueueGauges {
    bin_ns: u64,
    bin_end: u64,
    last_t: u64,
    /// Packets, then bytes.
    value: [u64; 2],
    bin_area: [f64; 2],
    total_area: [f64; 2],
    max: [u64; 2],
    series: [Vec<f64>; 2],
}

impl QueueGauges {
    /// Both gauges at zero from time zero.
    pub fn new(bin_width: Duration) -> Self {
        let o = Occupancy::new(bin_width);
        QueueGauges {
            bin_ns: o.bin_ns,
            bin_end: o.bin_end,
            last_t: 0,
            value: [0; 2],
            bin_area: [0.0; 2],
            total_area: [0.0; 2],
            max: [0; 2],
            series: [Vec::new(), Vec::new()],
        }
    }

    /// The queue holds `packets` and `bytes` from `now()` on. A change from zero to zero adds
    /// 0 · dt to the areas and leaves the maxima: it is skipped (the next change, or the end
    /// of the run, integrates the same values and closes the same bins) before `now` is
    /// called, so that the skipped calls do not round the event's time.
    #[inline(always)]
    pub fn set(&mut self, now: impl FnOnce() -> Time, packets: u64, bytes: u64) {
        if packets | bytes | self.value[0] | self.value[1] == 0 {
            return;
        }
        let t = now().as_nanos();
        if t < self.last_t || t >= self.bin_end {
            self.set_slow(t, packets, bytes);
            return;
        }
        self.step(t, packets, bytes);
    }

    /// Whether both gauges read zero.
    pub fn is_zero(&self) -> bool {
        self.value == [0; 2]
    }

    /// [`QueueGauges::set`] when `t` is before the last change or a bin ends: out of line, so
    /// that the common case, inlined at its callers, needs no registers saved for a call.
    #[inline(never)]
    fn set_slow(&mut self, t: u64, packets: u64, bytes: u64) {
        let t = self.close_bins(t);
        self.step(t, packets, bytes);
    }

    /// [`Occupancy::advance`]'s span (`t` ≥ `last_t`, within the current bin) and set.
    #[inline(always)]
    fn step(&mut self, t: u64, packets: u64, bytes: u64) {
        let dt = u64_to_f64(t - self.last_t);
        for (k, v) in [packets, bytes].into_iter().enumerate() {
            let old = u64_to_f64(self.value[k]);
            self.bin_area[k] += old * dt;
            self.total_area[k] += old * dt;
            self.value[k] = v;
            self.max[k] = self.max[k].max(v);
        }
        self.last_t = t;
    }

    /// [`Occupancy::close_bins`] on both gauges, for a change at `t` (clamped to the last
    /// change, as [`Occupancy::advance`] does, and returned).
    #[cold]
    fn close_bins(&mut self, t: u64) -> u64 {
        let t = t.max(self.last_t);
        while t >= self.bin_end {
            let dt = (self.bin_end - self.last_t) as f64;
            for k in 0..2 {
                let v = self.value[k] as f64;
                self.bin_area[k] += v * dt;
                self.total_area[k] += v * dt;
                let s = &mut self.series[k];
                reserve_bins(s, s.len() + 1);
                s.push(self.bin_area[k] / self.bin_ns as f64);
                self.bin_area[k] = 0.0;
            }
            self.last_t = self.bin_end;
            if self.series[0].len() == MAX_BINS {
                for s in &mut self.series {
                    merge_pairs(s, |a, b| (a + b) / 2.0);
                }
                self.bin_ns = self.bin_ns.saturating_mul(2);
            }
            self.bin_end = (self.last_t / self.bin_ns + 1).saturating_mul(self.bin_ns);
        }
        t
    }

    /// Account for time up to `now` (end of run), as [`Occupancy::finish`].
    pub fn finish(&mut self, now: Time) {
        let t = self.close_bins(now.as_nanos());
        let [p, b] = self.value;
        self.step(t, p, b);
    }

    /// Gauge `k` (0: packets, 1: bytes) as an [`Occupancy`].
    pub fn occupancy(&self, k: usize) -> Occupancy {
        Occupancy {
            bin_ns: self.bin_ns,
            bin_end: self.bin_end,
            last_t: self.last_t,
            value: self.value[k],
            bin_area: self.bin_area[k],
            total_area: self.total_area[k],
            max: self.max[k],
            series: self.series[k].clone(),
        }
    }
}

/// Per-link (one direction) statistics.
#[derive(Clone, Debug)]
pub struct LinkStats {
    /// Packets that started transmission.
    pub tx_packets: u64,
    /// Wire bytes that started transmission.
    pub tx_bytes: u64,
    /// Drops at this link, indexed by [`DropCause::index`].
    pub drops: [u64; 5],
    /// Waiting packets (NS-2's queue length: the packet in transmission is not counted).
    pub queue_packets: Occupancy,
    /// Waiting bytes.
    pub queue_bytes: Occupancy,
    /// Wireless transmission attempts (frames, including retries).
    pub attempts: u64,
}

impl LinkStats {
    /// Empty statistics with the given bin width.
    pub fn new(bin_width: Duration) -> Self {
        LinkStats {
            tx_packets: 0,
            tx_bytes: 0,
            drops: [0; 5],
            queue_packets: Occupancy::new(bin_width),
            queue_bytes: Occupancy::new(bin_width),
            attempts: 0,
        }
    }

    /// Drops of one cause.
    pub fn dropped(&self, cause: DropCause) -> u64 {
        self.drops[cause.index()]
    }
}

/// A time series of an agent's internals (e.g. TFRC's X, X_recv, p, R), one row per bin.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentSeries {
    /// The agent's flow.
    pub flow: crate::packet::FlowId,
    /// `true` for the sender, `false` for the receiver.
    pub sender: bool,
    /// Column names, from [`crate::agent::Agent::sample_names`].
    pub names: &'static [&'static str],
    /// Sample times.
    pub times: Vec<Time>,
    /// Row-major values: `names.len()` per time.
    pub values: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn delay_and_jitter_definitions() {
        let mut d = DelayStats::default();
        for x in [10, 14, 12, 20] {
            d.record(ms(x));
        }
        assert_eq!(d.count(), 4);
        assert!((d.mean_secs() - 0.014).abs() < 1e-12);
        assert!((d.range_secs() - 0.010).abs() < 1e-12);
        // |14−10| + |12−14| + |20−12| = 14 over 3 differences.
        assert!((d.mean_abs_diff_secs() - 0.014 / 3.0).abs() < 1e-12);
        // RFC 3550: J1 = 4/16, J2 = J1 + (2 − J1)/16, J3 = J2 + (8 − J2)/16 (ms).
        let mut j = 0.0f64;
        for diff in [4.0, 2.0, 8.0] {
            j += (diff - j) / 16.0;
        }
        assert!((d.rfc3550_secs() - j * 1e-3).abs() < 1e-12);
        // Median of {10,12,14,20} within 0.1 % histogram resolution.
        let med = d.quantile(0.5).unwrap().as_secs_f64();
        assert!((med - 0.012).abs() <= 0.012 * 1e-3, "median {med}");
    }

    proptest::proptest! {
        /// `DelayStats::quantile` answers what the `hdrhistogram` it replaced answered
        /// (`value_at_quantile` after clamping q to 0..=1, NaN as the median).
        #[test]
        fn quantile_matches_the_former_hdrhistogram(
            delays in proptest::collection::vec(0u64..7_200_000_000_000, 1..200),
            q in proptest::prop_oneof![-0.5f64..1.5, proptest::strategy::Just(f64::NAN)],
        ) {
            let mut d = DelayStats::default();
            let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1000, 2000, 3).unwrap();
            h.auto(true);
            for &x in &delays {
                d.record(Duration::from_nanos(x));
                h.record(x.max(1)).unwrap();
            }
            let hq = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
            proptest::prop_assert_eq!(d.quantile(q), Some(Duration::from_nanos(h.value_at_quantile(hq))));
        }
    }

    #[test]
    fn window_excludes_warmup_but_series_do_not() {
        let cfg = StatsConfig {
            window_start: Time::from_secs_f64(1.0),
            ..StatsConfig::default()
        };
        let mut r = FlowRecorder::new(&cfg);
        r.on_sent(Time::from_secs_f64(0.5), 100, 80);
        r.on_delivered(Time::from_secs_f64(0.6), Time::from_secs_f64(0.5), 100, 80);
        r.on_sent(Time::from_secs_f64(1.5), 100, 80);
        r.on_dropped(Time::from_secs_f64(1.6), DropCause::Queue);
        assert_eq!(r.sent_packets, 1);
        assert_eq!(r.delivered_packets, 0);
        assert_eq!(r.dropped(DropCause::Queue), 1);
        assert_eq!(r.sent_series(), &[100, 100]);
        assert_eq!(r.received_series(), &[100]);
        assert_eq!(r.loss_rate(), 1.0);
    }

    #[test]
    fn flow_series_coarsen_past_max_bins() {
        let cfg = StatsConfig {
            bin_width: Duration::from_micros(1),
            ..StatsConfig::default()
        };
        let mut r = FlowRecorder::new(&cfg);
        let us = |i: u64| Time::from_nanos(i * 1000);
        // One 10 B packet per 1 µs bin, in every bin the series can hold.
        for i in 0..MAX_BINS as u64 {
            r.on_sent(us(i), 10, 8);
            r.on_delivered(us(i), us(i), 10, 8);
        }
        assert_eq!(r.sent_series().len(), MAX_BINS);
        assert_eq!(r.bin_width(), Duration::from_micros(1));
        // The next bin is one too many: pairs merge, the width doubles, bytes are kept.
        r.on_sent(us(MAX_BINS as u64), 10, 8);
        assert_eq!(r.bin_width(), Duration::from_micros(2));
        assert_eq!(r.sent_series().len(), MAX_BINS / 2 + 1);
        assert!(r.sent_series()[..MAX_BINS / 2].iter().all(|&b| b == 20));
        assert_eq!(r.sent_series()[MAX_BINS / 2], 10);
        assert_eq!(r.received_series().len(), MAX_BINS / 2);
        assert_eq!(r.goodput_series().iter().sum::<u64>(), 8 * MAX_BINS as u64);
        // Far later: several doublings at once, never more than MAX_BINS bins.
        r.on_sent(us(40 * MAX_BINS as u64 + 3), 10, 8);
        assert_eq!(r.bin_width(), Duration::from_micros(64));
        assert!(r.sent_series().len() <= MAX_BINS);
        assert_eq!(
            r.sent_series().iter().sum::<u64>(),
            10 * (MAX_BINS as u64 + 2)
        );
        assert_eq!(*r.sent_series().last().unwrap(), 10);
        assert!(r.heap_bytes() <= 3 * MAX_BINS * 8 + r.delay.heap_bytes());
    }

    #[test]
    fn occupancy_coarsens_past_max_bins() {
        let mut o = Occupancy::new(Duration::from_micros(1));
        // Value 2 in even bins and 4 in odd ones, MAX_BINS + 2 bins in all.
        for i in 0..MAX_BINS as u64 + 2 {
            o.set(Time::from_nanos(i * 1000), if i % 2 == 0 { 2 } else { 4 });
        }
        o.finish(Time::from_nanos((MAX_BINS as u64 + 2) * 1000));
        assert_eq!(o.bin_width(), Duration::from_micros(2));
        assert_eq!(o.series().len(), MAX_BINS / 2 + 1);
        assert!(
            o.series().iter().all(|&m| m == 3.0),
            "{:?}",
            &o.series()[..4]
        );
        assert_eq!(o.mean(), 3.0);
        assert_eq!(o.max(), 4);
    }

    proptest::proptest! {
        /// The gauge pair is two [`Occupancy`] gauges set together, bit for bit, with
        /// zero-to-zero changes skipped as the simulator skipped them before the pair.
        #[test]
        fn queue_gauges_are_two_occupancies(
            bin_ns in 1_000u64..2_000_000,
            steps in proptest::collection::vec(
                (0u64..3_000_000, 0u64..4, 0u64..5000, proptest::bool::ANY), 1..80),
        ) {
            let w = Duration::from_nanos(bin_ns);
            let (mut a, mut b, mut g) = (Occupancy::new(w), Occupancy::new(w), QueueGauges::new(w));
            let mut t = 0u64;
            for (dt, n, bytes, back) in steps {
                // Forward in time, or back (clamped, as `advance` does); with the shortest
                // bins, far enough to coarsen the series (past MAX_BINS bins).
                t = if back { t.saturating_sub(dt / 4) } else { t + dt };
                let (n, bytes) = if n == 0 { (0, 0) } else { (n, bytes) };
                let now = Time::from_nanos(t);
                if !(n == 0 && a.current() == 0 && b.current() == 0) {
                    a.set(now, n);
                    b.set(now, bytes);
                }
                g.set(|| now, n, bytes);
            }
            let end = Time::from_nanos(t + 1_000_000);
            a.finish(end);
            b.finish(end);
            g.finish(end);
            for (o, k) in [(&a, 0), (&b, 1)] {
                let p = g.occupancy(k);
                proptest::prop_assert_eq!(
                    (o.bin_ns, o.bin_end, o.last_t, o.value, o.max),
                    (p.bin_ns, p.bin_end, p.last_t, p.value, p.max)
                );
                proptest::prop_assert_eq!(o.bin_area.to_bits(), p.bin_area.to_bits());
                proptest::prop_assert_eq!(o.total_area.to_bits(), p.total_area.to_bits());
                let bits = |s: &[f64]| s.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                proptest::prop_assert_eq!(bits(&o.series), bits(&p.series));
            }
        }
    }

    #[test]
    fn occupancy_is_time_weighted_per_bin() {
        let mut o = Occupancy::new(Duration::from_secs(1));
        o.set(Time::from_secs_f64(0.5), 4); // 0 for 0.5 s, then 4
        o.set(Time::from_secs_f64(1.5), 2); // 4 until 1.5 s, then 2
        o.finish(Time::from_secs_f64(2.0));
        assert_eq!(o.series(), &[2.0, 3.0]);
        assert!((o.mean() - 2.5).abs() < 1e-12);
        assert_eq!(o.max(), 4);
    }
}
