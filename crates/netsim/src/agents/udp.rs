//! UDP with NS-2's `Application/Traffic/CBR` source (defaults in `docs/simulator.md`,
//! "NS-2.35 behaviour netsim follows"), and `Agent/Null`.

use rand::Rng;

use crate::agent::{Agent, AgentCtx, AppCounters, TimerId};
use crate::packet::{Header, Packet, PacketKind};
use crate::Time;

/// The CBR source's one timer: the next packet is due.
const SEND: TimerId = TimerId(0);

/// CBR parameters with NS-2's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct CbrConfig {
    /// `packetSize_`: 210 bytes. Agent/UDP adds no header, so this is the wire size.
    pub packet_size: u32,
    /// `rate_`: 448 kb/s.
    pub rate_bps: f64,
    /// `random_`: add uniform(−½, ½) · interval of noise to each interval.
    pub random: bool,
    /// `maxpkts_`: 2^28 packets.
    pub max_packets: u64,
    /// Packet type in traces (`cbr`).
    pub kind: PacketKind,
    /// IP TTL of the packets (NS-2 `ttl_` 32).
    pub ttl: u8,
}

impl Default for CbrConfig {
    fn default() -> Self {
        CbrConfig {
            packet_size: 210,
            rate_bps: 448_000.0,
            random: false,
            max_packets: 1 << 28,
            kind: PacketKind::Cbr,
            ttl: crate::packet::DEFAULT_TTL,
        }
    }
}

/// NS-2's `Application/Traffic/CBR` timing (`CBR_Traffic`): the first packet at start, then one
/// every `packetSize · 8 / rate` seconds (± half an interval with `random_`), at most
/// `maxpkts_`. Shared by the UDP source and by TFRC's CBR-driven application (seed 004 runs TFRC
/// that way).
#[derive(Clone, Debug)]
pub struct CbrClock {
    random: bool,
    max_packets: u64,
    /// [`CbrClock::interval_secs`], computed once: `advance` runs per generated packet.
    interval: f64,
    next: Option<Time>,
    /// The next send time in seconds, accumulated in double precision exactly as NS-2's
    /// timer does (`clock + interval` per packet).
    next_secs: f64,
    /// Packets generated (NS-2 CBR `seqno_`).
    generated: u64,
    /// `next` is `next_secs` rounded (always after `advance`; after `start` unless the time
    /// is past 2^50 ns), so arming need not check it.
    rounded: bool,
}

impl CbrClock {
    /// A stopped clock.
    pub fn new(packet_size: u32, rate_bps: f64, random: bool, max_packets: u64) -> Self {
        let interval = if rate_bps > 0.0 {
            f64::from(packet_size) * 8.0 / rate_bps
        } else {
            f64::INFINITY
        };
        CbrClock {
            random,
            max_packets,
            interval,
            next: None,
            next_secs: 0.0,
            generated: 0,
            rounded: true,
        }
    }

    /// Seconds between packets: packetSize · 8 / rate (NS-2 CBR_Traffic::init).
    pub fn interval_secs(&self) -> f64 {
        self.interval
    }

    /// CBR_Traffic::start: the first packet is due at once.
    pub fn start(&mut self, now: Time) {
        self.next_secs = now.as_nanos() as f64 / 1e9;
        self.next = (self.generated < self.max_packets).then_some(now);
        self.rounded = Time::from_secs_f64(self.next_secs) == now;
    }

    /// Stop generating.
    pub fn stop(&mut self) {
        self.next = None;
    }

    /// A packet is due at `now`.
    pub fn due(&self, now: Time) -> bool {
        self.next.is_some_and(|t| t <= now)
    }

    /// One packet was generated: schedule the next (NS-2 TrafficGenerator::timeout and
    /// `next_interval`: `++seqno_ < maxpkts_` keeps going).
    // Inlined (with `arm`): once per CBR packet, where the call's register saves cost more
    // than much of the body.
    #[inline]
    pub fn advance(&mut self, rng: &mut impl Rng) {
        self.generated += 1;
        let interval = self.interval_secs();
        if self.generated >= self.max_packets || !interval.is_finite() {
            self.next = None;
            return;
        }
        let mut t = interval;
        if self.random {
            let u: f64 = rng.gen_range(-0.5..0.5);
            t += interval * u;
        }
        // TimerHandler::resched(t): clock + t, in double. Keeping NS-2's rounding makes
        // same-instant events order as in NS-2 (see `AgentCtx::set_timer_ns2`).
        self.next_secs += t;
        self.next = Some(Time::from_secs_f64(self.next_secs));
        self.rounded = true;
    }

    /// When the next packet is due.
    pub fn next(&self) -> Option<Time> {
        self.next
    }

    /// The same instant as NS-2's double-precision clock holds it.
    pub fn next_secs(&self) -> Option<f64> {
        self.next.map(|_| self.next_secs)
    }

    /// Packets generated so far.
    pub fn generated(&self) -> u64 {
        self.generated
    }

    /// Hand the next send time, with NS-2's double for it, to the agent's `timer` (or disarm
    /// it when the clock is stopped).
    #[inline]
    pub fn arm(&self, timer: TimerId, ctx: &mut AgentCtx<'_>) {
        match self.next {
            Some(t) if self.rounded => ctx.set_timer_ns2_rounded(timer, t, self.next_secs),
            Some(t) => ctx.set_timer_ns2(timer, t, self.next_secs),
            None => ctx.cancel_timer(timer),
        }
    }
}

/// A UDP agent driven by a CBR application.
#[derive(Clone, Debug)]
pub struct CbrSource {
    cfg: CbrConfig,
    clock: CbrClock,
}

impl CbrSource {
    /// A stopped source.
    pub fn new(cfg: CbrConfig) -> Self {
        let clock = CbrClock::new(cfg.packet_size, cfg.rate_bps, cfg.random, cfg.max_packets);
        CbrSource { cfg, clock }
    }

    /// The configuration.
    pub fn config(&self) -> &CbrConfig {
        &self.cfg
    }

    /// Seconds between packets: packetSize · 8 / rate (NS-2 CBR_Traffic::init).
    pub fn interval_secs(&self) -> f64 {
        self.clock.interval_secs()
    }

    /// NS-2 TrafficGenerator::timeout: send one packet, then schedule the next.
    fn fire(&mut self, ctx: &mut AgentCtx<'_>) {
        let size = self.cfg.packet_size;
        ctx.set_ttl(self.cfg.ttl);
        let seq = self.clock.generated() as i64;
        let pkt = ctx.packet(self.cfg.kind, size, size, seq, Header::None);
        ctx.send(pkt);
        self.clock.advance(ctx.rng());
        self.clock.arm(SEND, ctx);
    }
}

impl Agent for CbrSource {
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        // CBR_Traffic::start: send the first packet at once.
        self.clock.start(ctx.now());
        if self.clock.due(ctx.now()) {
            self.fire(ctx);
        } else {
            self.clock.arm(SEND, ctx);
        }
    }

    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
        self.clock.stop();
        ctx.cancel_timer(SEND);
    }

    fn on_packet(&mut self, _pkt: &Packet, _ctx: &mut AgentCtx<'_>) {}

    fn on_timer(&mut self, _timer: TimerId, ctx: &mut AgentCtx<'_>) {
        if self.clock.due(ctx.now()) {
            self.fire(ctx);
        }
    }

    fn app_counters(&self) -> AppCounters {
        let n = self.clock.generated();
        AppCounters {
            generated_packets: n,
            generated_bytes: n * u64::from(self.cfg.packet_size),
        }
    }
}

/// NS-2 `Agent/Null`: receives and discards (the simulator's recorders count deliveries).
#[derive(Clone, Debug, Default)]
pub struct NullSink {
    received: u64,
}

impl NullSink {
    /// A sink.
    pub fn new() -> Self {
        NullSink::default()
    }

    /// Packets received.
    pub fn received(&self) -> u64 {
        self.received
    }
}

impl Agent for NullSink {
    fn on_start(&mut self, _ctx: &mut AgentCtx<'_>) {}
    fn on_stop(&mut self, _ctx: &mut AgentCtx<'_>) {}
    fn on_packet(&mut self, _pkt: &Packet, _ctx: &mut AgentCtx<'_>) {
        self.received += 1;
    }
    fn timers(&self) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentHarness;
    use crate::packet::Direction;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn drive(src: CbrSource, until: Time, seed: u64) -> (Vec<(Time, Packet)>, CbrSource) {
        let mut h = AgentHarness::new(src, Direction::Forward);
        h.rng = ChaCha8Rng::seed_from_u64(seed);
        let mut sent: Vec<_> = h.start().into_iter().map(|p| (Time::ZERO, p)).collect();
        while h.next_timer().is_some_and(|(_, t)| t < until) {
            let out = h.wake_next();
            sent.extend(out.into_iter().map(|p| (h.now, p)));
        }
        (sent, h.agent)
    }

    #[test]
    fn cbr_interval_size_and_seqnos() {
        let src = CbrSource::new(CbrConfig {
            rate_bps: 0.5e6,
            ..CbrConfig::default()
        });
        // 210 B at 0.5 Mb/s: 3.36 ms apart; in [0, 100 ms) that is 30 packets (0 … 97.44 ms).
        let (sent, src) = drive(src, Time::from_nanos(100_000_000), 1);
        assert_eq!(sent.len(), 30);
        for (k, (t, p)) in sent.iter().enumerate() {
            assert_eq!(t.as_nanos(), 3_360_000 * k as u64);
            assert_eq!(
                (p.size, p.payload, p.seq, p.kind),
                (210, 210, k as i64, PacketKind::Cbr)
            );
        }
        assert_eq!(src.app_counters().generated_bytes, 30 * 210);
    }

    #[test]
    fn cbr_default_rate_and_maxpkts() {
        let src = CbrSource::new(CbrConfig {
            max_packets: 5,
            ..CbrConfig::default()
        });
        // NS-2 default 448 kb/s with 210 B: 3.75 ms.
        assert!((src.interval_secs() - 0.00375).abs() < 1e-15);
        let (sent, _) = drive(src, Time::from_nanos(1_000_000_000), 1);
        assert_eq!(sent.len(), 5);
        assert_eq!(sent[4].0.as_nanos(), 15_000_000);
    }

    #[test]
    fn cbr_random_jitter_stays_within_half_interval() {
        let src = CbrSource::new(CbrConfig {
            random: true,
            ..CbrConfig::default()
        });
        let (sent, _) = drive(src, Time::from_nanos(10_000_000_000), 9);
        let gaps: Vec<f64> = sent
            .windows(2)
            .map(|w| (w[1].0.as_nanos() - w[0].0.as_nanos()) as f64 * 1e-9)
            .collect();
        assert!(gaps
            .iter()
            .all(|g| (0.5 * 0.00375 - 1e-9..=1.5 * 0.00375 + 1e-9).contains(g)));
        // Mean gap is the interval (uniform noise has mean 0): sd of the mean over ~2700 gaps is
        // 0.00375 · 0.289 / 52 = 2.1e-5 s; allow 4 sd.
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean - 0.00375).abs() < 8.4e-5, "{mean}");
        // Not constant.
        assert!(gaps.iter().any(|g| (g - 0.00375).abs() > 1e-4));
    }
}
