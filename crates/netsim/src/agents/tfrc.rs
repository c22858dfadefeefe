//! TFRC agents: the `tfrc` core's sender and receiver, driven by the simulator's clock.
//!
//! The simulator knows TFRC only through the core's public API: packets carry the core's
//! `DataHeader` and `Feedback` values, wire sizes come from the profile's overhead, and every
//! rule (slow start, pacing, loss events, feedback timing) is the core's.

use tfrc::{Arrival, Backlog, LossDecision, Profile, Receiver, Sender};

use core::time::Duration;

use crate::agent::{Agent, AgentCtx, AppCounters, TimerId};
use crate::agents::udp::CbrClock;
use crate::packet::{Header, Packet, PacketKind};
use crate::Time;

/// Each TFRC agent's one timer: the earliest of the core's `poll_timeout` and (sender) the CBR
/// application's next segment. One timer, not two, so that a segment and a core timeout due at
/// the same instant are handled in one call (generate, time out, transmit).
const WAKE: TimerId = TimerId(0);

/// A sender wakes this many times at most for packets in one call; the core bounds its bursts
/// (§4.6: at most one RTT's worth), so reaching this means a core bug, not a busy link.
const MAX_BURST: usize = 1 << 16;

/// Where the sender's data comes from.
#[derive(Clone, Debug)]
pub enum TfrcApp {
    /// Always data to send (an FTP-like bulk source).
    Bulk,
    /// A CBR application hands the sender one segment every `packet_size · 8 / rate` seconds
    /// (NS-2 `Application/Traffic/CBR` attached to `Agent/TFRC`, as seed 004 runs it).
    Cbr(CbrClock),
    /// The same CBR application switched on and off: on for `on` from the start, silent for
    /// `off`, and so on (a talk-spurt source, or NS-2's CBR `start`/`stop` at those times).
    OnOff(OnOff),
}

/// An on-off CBR application: each on period starts with a packet at once (as NS-2's CBR
/// `start`), as the first one does.
#[derive(Clone, Debug)]
pub struct OnOff {
    clock: CbrClock,
    on: Duration,
    off: Duration,
    epoch: Time,
}

impl OnOff {
    /// CBR `clock` on for `on`, off for `off`, from the flow's start.
    pub fn new(clock: CbrClock, on: Duration, off: Duration) -> OnOff {
        OnOff {
            clock,
            on,
            off,
            epoch: Time::ZERO,
        }
    }

    /// Where `t` falls: `Ok(())` within an on period, `Err(next start)` within an off one.
    fn phase(&self, t: Time) -> Result<(), Time> {
        let period = self.on.saturating_add(self.off).as_nanos().max(1) as u64;
        let since = t.saturating_since(self.epoch).as_nanos() as u64;
        let into = since % period;
        if into < self.on.as_nanos() as u64 {
            Ok(())
        } else {
            Err(self.epoch + Duration::from_nanos(since - into + period))
        }
    }

    /// After a packet, move a next packet that falls silent to the next on period.
    fn skip_silence(&mut self) {
        if let Some(Err(start)) = self.clock.next().map(|n| self.phase(n)) {
            self.clock.start(start);
        }
    }
}

/// The TFRC sender agent.
#[derive(Clone, Debug)]
pub struct TfrcSender {
    sender: Sender,
    app: TfrcApp,
    data_len: u32,
    segment: u32,
}

impl TfrcSender {
    /// A sender with `profile` (its segment size and overhead set the packet sizes) fed by
    /// `app`.
    pub fn new(profile: &Profile, app: TfrcApp) -> Result<Self, tfrc::ConfigError> {
        Ok(TfrcSender {
            sender: Sender::new(profile.sender)?,
            app,
            data_len: profile.data_wire_len(),
            segment: profile.sender.segment_size,
        })
    }

    /// The core's sender state (for inspection after a run).
    pub fn core(&self) -> &Sender {
        &self.sender
    }

    /// Hand the core the application's segment if one is due; whether one was.
    // Inlined (with `arm_at`): once per wake, mostly a CBR segment and a re-arm.
    #[inline]
    fn generate(&mut self, ctx: &mut AgentCtx<'_>) -> bool {
        let now = ctx.now();
        match &mut self.app {
            TfrcApp::Cbr(clock) if clock.due(now) => {
                self.sender.push_packets(now, 1);
                clock.advance(ctx.rng());
                true
            }
            TfrcApp::OnOff(o) if o.clock.due(now) => {
                self.sender.push_packets(now, 1);
                o.clock.advance(ctx.rng());
                o.skip_silence();
                true
            }
            _ => false,
        }
    }

    fn transmit(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        for _ in 0..MAX_BURST {
            let Some(hdr) = self.sender.poll_transmit(now) else {
                return;
            };
            // The core's TTL policy (fixed, or seed 000 E5's adaptive TTL) picks the TTL.
            ctx.set_ttl(hdr.initial_ttl);
            let protected = self.sender.protects(&hdr);
            let pkt = ctx.send_packet(
                PacketKind::TfrcData,
                self.data_len,
                self.segment,
                i64::try_from(hdr.seq).unwrap_or(i64::MAX),
                Header::TfrcData(hdr),
            );
            // E6: the core's protection policy decides; the simulator accounts for the flag.
            pkt.protected = protected;
        }
    }

    /// Arm the wake-up at the earliest of the application's next segment and the core's
    /// timeout (with NS-2's double time when it is the CBR clock's).
    fn arm(&self, ctx: &mut AgentCtx<'_>) {
        self.arm_at(self.sender.poll_timeout(), ctx);
    }

    /// [`TfrcSender::arm`] with the core's `poll_timeout` already read.
    #[inline]
    fn arm_at(&self, core: Option<Time>, ctx: &mut AgentCtx<'_>) {
        let clock = match &self.app {
            TfrcApp::Cbr(clock) | TfrcApp::OnOff(OnOff { clock, .. }) => Some(clock),
            TfrcApp::Bulk => None,
        };
        // The clock's time wins ties, so that its double is the one armed.
        match clock {
            Some(clock) if clock.next().is_some_and(|a| core.is_none_or(|b| a <= b)) => {
                clock.arm(WAKE, ctx);
            }
            _ => ctx.sync_timer(WAKE, core),
        }
    }
}

impl Agent for TfrcSender {
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        match &mut self.app {
            TfrcApp::Bulk => self.sender.set_infinite_backlog(now),
            TfrcApp::Cbr(clock) => clock.start(now),
            TfrcApp::OnOff(o) => {
                o.epoch = now;
                o.clock.start(now);
            }
        }
        self.generate(ctx);
        self.transmit(ctx);
        self.arm(ctx);
    }

    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
        match &mut self.app {
            TfrcApp::Cbr(clock) => clock.stop(),
            TfrcApp::OnOff(o) => o.clock.stop(),
            TfrcApp::Bulk => {}
        }
        self.sender.stop();
        self.arm(ctx);
    }

    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        match &pkt.header {
            Header::TfrcFeedback(fb) => self.sender.on_feedback(now, fb),
            Header::TimeExceeded { initial_ttl, .. } => {
                self.sender.on_ttl_exceeded(now, *initial_ttl)
            }
            _ => return,
        }
        self.transmit(ctx);
        self.arm(ctx);
    }

    // Inlined into `AnyAgent`'s dispatch, as it was before the short cut made it larger.
    #[inline(always)]
    fn on_timer(&mut self, _timer: TimerId, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        // A sender whose only segment is the one just handed over is likely to owe a packet
        // at once (NS-2's data-limited restart): then the short cut below is not tried.
        if self.generate(ctx) && self.sender.backlog() != Backlog::Packets(1) {
            // Most wakes on the seeds are the application's clock alone. With a segment just
            // queued, a core deadline after now means `on_timeout` and `poll_transmit` would do
            // nothing now (`Sender::poll_timeout`'s contract), so only the re-arm is left.
            let core = self.sender.poll_timeout();
            if core.is_none_or(|t| t > now) {
                #[cfg(debug_assertions)]
                {
                    let mut s = self.sender.clone();
                    s.on_timeout(now);
                    debug_assert!(s.poll_transmit(now).is_none() && s.poll_timeout() == core);
                }
                self.arm_at(core, ctx);
                return;
            }
        }
        // `on_timeout` handles only what is due (a wake for the CBR clock finds nothing); when
        // the sender has no data it drops owed immediate sends, as the poll just below does
        // anyway, so no `poll_timeout` check is needed first.
        self.sender.on_timeout(now);
        self.transmit(ctx);
        self.arm(ctx);
    }

    fn app_counters(&self) -> AppCounters {
        let n = match &self.app {
            TfrcApp::Cbr(clock) => clock.generated(),
            TfrcApp::OnOff(o) => o.clock.generated(),
            TfrcApp::Bulk => self.sender.status().packets_sent,
        };
        AppCounters {
            generated_packets: n,
            generated_bytes: n * u64::from(self.segment),
        }
    }

    fn sample_names(&self) -> &'static [&'static str] {
        &["x_bps", "x_recv_bps", "p", "rtt_s"]
    }

    fn sample(&self, out: &mut Vec<f64>) {
        let s = self.sender.status();
        out.push(s.x * 8.0);
        out.push(s.x_recv * 8.0);
        out.push(s.p);
        out.push(s.rtt.map_or(f64::NAN, |r| r.as_secs_f64()));
    }
}

/// The TFRC receiver agent.
#[derive(Clone, Debug)]
pub struct TfrcReceiver {
    receiver: Receiver,
    feedback_len: u32,
    /// Every loss-classification decision of the run, when asked for
    /// ([`TfrcReceiver::with_decision_log`]).
    decisions: Option<Vec<LossDecision>>,
}

impl TfrcReceiver {
    /// A receiver with `profile`.
    pub fn new(profile: &Profile) -> Result<Self, tfrc::ConfigError> {
        Ok(TfrcReceiver {
            receiver: Receiver::new(profile.receiver)?,
            feedback_len: profile.feedback_wire_len(),
            decisions: None,
        })
    }

    /// Keep every loss-classification decision of the run ([`TfrcReceiver::decisions`]), so
    /// that they can be compared with the simulator's true drop causes (seed 002's confusion
    /// matrix). The core keeps a bounded log between drains; the agent drains it after every
    /// call, so nothing is lost, and keeps one entry per declared lost range.
    pub fn with_decision_log(mut self) -> Self {
        self.receiver.record_loss_decisions(true);
        self.decisions = Some(Vec::new());
        self
    }

    /// The decisions recorded since the start, oldest first (empty without
    /// [`TfrcReceiver::with_decision_log`]).
    pub fn decisions(&self) -> &[LossDecision] {
        self.decisions.as_deref().unwrap_or(&[])
    }

    fn drain_decisions(&mut self) {
        if let Some(log) = &mut self.decisions {
            log.extend(self.receiver.drain_loss_decisions());
        }
    }

    /// The core's receiver state (for inspection after a run).
    pub fn core(&self) -> &Receiver {
        &self.receiver
    }

    fn answer(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        for _ in 0..MAX_BURST {
            let Some(fb) = self.receiver.poll_feedback(now) else {
                return;
            };
            let seq = i64::try_from(fb.highest_seq).unwrap_or(i64::MAX);
            ctx.send_packet(
                PacketKind::TfrcFeedback,
                self.feedback_len,
                0,
                seq,
                Header::TfrcFeedback(fb),
            );
        }
    }
}

impl Agent for TfrcReceiver {
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        ctx.sync_timer(WAKE, self.receiver.poll_timeout());
    }

    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
        ctx.sync_timer(WAKE, self.receiver.poll_timeout());
    }

    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        let Header::TfrcData(hdr) = &pkt.header else {
            return;
        };
        let arrival = Arrival {
            wire_len: pkt.size,
            ce: pkt.ce,
            ttl: Some(pkt.ttl),
        };
        self.receiver.on_data_with(ctx.now(), hdr, arrival);
        self.drain_decisions();
        self.answer(ctx);
        ctx.sync_timer(WAKE, self.receiver.poll_timeout());
    }

    fn on_timer(&mut self, _timer: TimerId, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        if self.receiver.poll_timeout().is_some_and(|t| t <= now) {
            self.receiver.on_timeout(now);
        }
        self.drain_decisions();
        self.answer(ctx);
        ctx.sync_timer(WAKE, self.receiver.poll_timeout());
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    /// A 1000-byte CBR at 8 Mb/s (a packet per ms) on for 10 ms, off for 20 ms, from 5 ms: a
    /// packet at the start of every on period and every ms within it, none while silent.
    #[test]
    fn on_off_sends_only_while_on() {
        let mut o = OnOff::new(
            CbrClock::new(1000, 8e6, false, u64::MAX),
            Duration::from_millis(10),
            Duration::from_millis(20),
        );
        let start = Time::from_nanos(5_000_000);
        o.epoch = start;
        o.clock.start(start);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut times = Vec::new();
        while times.len() < 30 {
            let t = o.clock.next().expect("the clock runs");
            assert!(o.phase(t).is_ok(), "{t:?} falls silent");
            times.push(t.as_nanos() / 1_000_000);
            o.clock.advance(&mut rng);
            o.skip_silence();
        }
        let want: Vec<u64> = (0..3)
            .flat_map(|k| (0..10).map(move |i| 5 + 30 * k + i))
            .collect();
        assert_eq!(times, want);
        assert_eq!(o.clock.generated(), 30);
    }
}
