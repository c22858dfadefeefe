//! UDP with NS-2's `Application/Traffic/CBR` source (`spec/tfrc-reference.md` B9), and
//! `Agent/Null`.

use rand::Rng;

use crate::agent::{Agent, AgentCtx, AppCounters};
use crate::packet::{Header, Packet, PacketKind};
use crate::Time;

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

/// A UDP agent driven by a CBR application.
#[derive(Clone, Debug)]
pub struct CbrSource {
    cfg: CbrConfig,
    running: bool,
    next: Option<Time>,
    /// Packets generated (NS-2 CBR `seqno_`, and the UDP agent's next seqno).
    sent: u64,
    /// The next send time in seconds, accumulated in double precision exactly as NS-2's
    /// timer does (`clock + interval` per packet).
    next_secs: f64,
}

impl CbrSource {
    /// A stopped source.
    pub fn new(cfg: CbrConfig) -> Self {
        CbrSource {
            cfg,
            running: false,
            next: None,
            sent: 0,
            next_secs: 0.0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CbrConfig {
        &self.cfg
    }

    /// Seconds between packets: packetSize · 8 / rate (NS-2 CBR_Traffic::init).
    pub fn interval_secs(&self) -> f64 {
        if self.cfg.rate_bps > 0.0 {
            f64::from(self.cfg.packet_size) * 8.0 / self.cfg.rate_bps
        } else {
            f64::INFINITY
        }
    }

    /// NS-2 TrafficGenerator::timeout: send one packet, then schedule the next.
    fn fire(&mut self, ctx: &mut AgentCtx<'_>) {
        let size = self.cfg.packet_size;
        ctx.set_ttl(self.cfg.ttl);
        let pkt = ctx.packet(self.cfg.kind, size, size, self.sent as i64, Header::None);
        ctx.send(pkt);
        self.sent += 1;
        // next_interval: ++seqno_ < maxpkts_ keeps going.
        if self.sent >= self.cfg.max_packets {
            self.running = false;
            self.next = None;
            return;
        }
        let interval = self.interval_secs();
        if !interval.is_finite() {
            self.running = false;
            self.next = None;
            return;
        }
        let mut t = interval;
        if self.cfg.random {
            let u: f64 = ctx.rng().gen_range(-0.5..0.5);
            t += interval * u;
        }
        // TimerHandler::resched(t): clock + t, in double. Keeping NS-2's rounding makes
        // same-instant events order as in NS-2 (see `Agent::next_wake_secs`).
        self.next_secs += t;
        self.next = Some(Time::from_secs_f64(self.next_secs));
    }
}

impl Agent for CbrSource {
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        // CBR_Traffic::start: send the first packet at once.
        self.running = true;
        self.next_secs = ctx.now().as_nanos() as f64 / 1e9;
        self.fire(ctx);
    }

    fn on_stop(&mut self, _ctx: &mut AgentCtx<'_>) {
        self.running = false;
        self.next = None;
    }

    fn on_packet(&mut self, _pkt: Packet, _ctx: &mut AgentCtx<'_>) {}

    fn on_wake(&mut self, ctx: &mut AgentCtx<'_>) {
        if !self.running {
            return;
        }
        if let Some(t) = self.next {
            if t <= ctx.now() {
                self.fire(ctx);
            }
        }
    }

    fn next_wake(&self) -> Option<Time> {
        self.next
    }

    fn next_wake_secs(&self) -> Option<f64> {
        self.next.map(|_| self.next_secs)
    }

    fn app_counters(&self) -> AppCounters {
        AppCounters {
            generated_packets: self.sent,
            generated_bytes: self.sent * u64::from(self.cfg.packet_size),
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
    fn on_packet(&mut self, _pkt: Packet, _ctx: &mut AgentCtx<'_>) {
        self.received += 1;
    }
    fn on_wake(&mut self, _ctx: &mut AgentCtx<'_>) {}
    fn next_wake(&self) -> Option<Time> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Direction;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn drive(src: &mut CbrSource, until: Time, rng: &mut ChaCha8Rng) -> Vec<(Time, Packet)> {
        let mut out = Vec::new();
        let mut sent = Vec::new();
        let mut ctx = AgentCtx::new(Time::ZERO, 0, Direction::Forward, 0, 1, rng, &mut out);
        src.on_start(&mut ctx);
        sent.extend(out.drain(..).map(|p| (Time::ZERO, p)));
        while let Some(t) = src.next_wake() {
            if t >= until {
                break;
            }
            let mut ctx = AgentCtx::new(t, 0, Direction::Forward, 0, 1, rng, &mut out);
            src.on_wake(&mut ctx);
            sent.extend(out.drain(..).map(|p| (t, p)));
        }
        sent
    }

    #[test]
    fn cbr_interval_size_and_seqnos() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut src = CbrSource::new(CbrConfig {
            rate_bps: 0.5e6,
            ..CbrConfig::default()
        });
        // 210 B at 0.5 Mb/s: 3.36 ms apart; in [0, 100 ms) that is 30 packets (0 … 97.44 ms).
        let sent = drive(&mut src, Time::from_nanos(100_000_000), &mut rng);
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
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut src = CbrSource::new(CbrConfig {
            max_packets: 5,
            ..CbrConfig::default()
        });
        // NS-2 default 448 kb/s with 210 B: 3.75 ms.
        assert!((src.interval_secs() - 0.00375).abs() < 1e-15);
        let sent = drive(&mut src, Time::from_nanos(1_000_000_000), &mut rng);
        assert_eq!(sent.len(), 5);
        assert_eq!(sent[4].0.as_nanos(), 15_000_000);
    }

    #[test]
    fn cbr_random_jitter_stays_within_half_interval() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut src = CbrSource::new(CbrConfig {
            random: true,
            ..CbrConfig::default()
        });
        let sent = drive(&mut src, Time::from_nanos(10_000_000_000), &mut rng);
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
