//! An on/off TCP source: file transfers separated by idle periods (RFC 8867 §5.7's short TCP
//! flows, modelled as RFC 8868 describes them: "a sequence of file downloads interleaved with
//! idle periods").
//!
//! Each file's size is uniform in `[size_min, size_max]` bytes, each idle period exponential
//! with mean `off_mean`, drawn from the agent's own stream. An idle period starts when the
//! previous file is fully acknowledged. Every file is a new short connection in what matters
//! to the competing flows: the window restarts from the initial window and the initial
//! `ssthresh_` (`TcpSender::begin_transfer`); sequence numbers, the sink and the RTT estimate
//! carry over (a connection set-up exchange is not modelled).

use std::time::Duration;

use rand::Rng;

use crate::agent::{Agent, AgentCtx, AppCounters, TimerId};
use crate::agents::tcp::TcpSender;
use crate::packet::Packet;
use crate::Time;

/// The next file's start, after the TCP sender's own timers (ids 0 and 1).
const ON: TimerId = TimerId(2);

/// The on/off pattern.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OnOffConfig {
    /// Smallest file, bytes.
    pub size_min: u64,
    /// Largest file, bytes.
    pub size_max: u64,
    /// Mean idle period.
    pub off_mean: Duration,
    /// The first file starts at the flow's start (otherwise an idle period comes first).
    pub start_on: bool,
}

/// A TCP sender driven by an on/off source.
#[derive(Clone, Debug)]
pub struct OnOffTcp {
    tcp: Box<TcpSender>,
    cfg: OnOffConfig,
    /// When the next file starts, while idle.
    next_on: Option<Time>,
    busy: bool,
    files: u64,
}

impl OnOffTcp {
    /// `tcp` (not started) driven by `cfg`.
    pub fn new(tcp: TcpSender, cfg: OnOffConfig) -> Self {
        OnOffTcp {
            tcp: Box::new(tcp),
            cfg,
            next_on: None,
            busy: false,
            files: 0,
        }
    }

    /// The TCP sender.
    pub fn tcp(&self) -> &TcpSender {
        &self.tcp
    }

    /// Files started so far.
    pub fn files(&self) -> u64 {
        self.files
    }

    fn start_file(&mut self, ctx: &mut AgentCtx<'_>) {
        let bytes = ctx.rng().gen_range(self.cfg.size_min..=self.cfg.size_max);
        let size = u64::from(self.tcp.config().packet_size.max(1));
        self.files += 1;
        self.busy = true;
        self.tcp.begin_transfer(bytes.div_ceil(size).max(1), ctx);
        self.tcp.sync_timers(ctx);
    }

    fn idle(&mut self, ctx: &mut AgentCtx<'_>) {
        // Exponential by inversion; 1 − u is in (0, 1].
        let u: f64 = ctx.rng().gen();
        let off = -self.cfg.off_mean.as_secs_f64() * (1.0 - u).ln();
        self.busy = false;
        let at = ctx.now() + Duration::from_secs_f64(off.min(1e9));
        self.next_on = Some(at);
        ctx.set_timer(ON, at);
    }
}

impl Agent for OnOffTcp {
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        if self.cfg.start_on {
            self.start_file(ctx);
        } else {
            self.idle(ctx);
        }
    }

    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
        self.next_on = None;
        ctx.cancel_timer(ON);
        self.tcp.on_stop(ctx);
    }

    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        self.tcp.on_packet(pkt, ctx);
        if self.busy && self.tcp.transfer_done() {
            self.idle(ctx);
        }
    }

    fn on_timer(&mut self, timer: TimerId, ctx: &mut AgentCtx<'_>) {
        if timer == ON {
            self.next_on = None;
            self.start_file(ctx);
        } else {
            self.tcp.on_timer(timer, ctx);
        }
    }

    fn timers(&self) -> usize {
        3
    }

    fn app_counters(&self) -> AppCounters {
        self.tcp.app_counters()
    }

    fn sample_names(&self) -> &'static [&'static str] {
        self.tcp.sample_names()
    }

    fn sample(&self, out: &mut Vec<f64>) {
        self.tcp.sample(out)
    }
}
