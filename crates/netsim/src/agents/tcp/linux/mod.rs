//! TCP as the Linux kernel this project is checked against runs it (`profile = "linux"`):
//! Reno or CUBIC with HyStart over SACK, RACK-TLP loss detection, proportional rate reduction,
//! F-RTO and the kernel's RTO, against the Linux receiver ([`crate::agents::LinuxSink`]:
//! delayed and quick ACKs, SACK blocks by recency, compressed SACKs). What each part does, and
//! what is left out, is restated in `docs/simulator.md` ("Linux TCP") from the kernel's
//! `net/ipv4/tcp_input.c`, `tcp_output.c`, `tcp_recovery.c`, `tcp_timer.c`, `tcp_cong.c` and
//! `tcp_cubic.c`.
//!
//! Sequence numbers count packets: 0 is the SYN (the handshake is modelled: its RTT is the
//! first sample and the initial window goes out after it), data starts at 1. Data packets are
//! `packet_size` (the MSS) + 52 bytes on the wire: IPv4 20 + TCP 20 + the timestamp option 12.
//! The source is a bulk writer on a full send buffer (module `app`), which decides which segments
//! carry PSH.

mod app;
pub mod cc;
pub mod clock;
pub mod rtx;

use std::time::Duration;

use rand::Rng;

use crate::agent::{Agent, AgentCtx, AppCounters, TimerId};
use crate::packet::{Header, Packet, PacketKind, TcpHeader};
use crate::Time;

use super::{TcpSenderStats, TCP_MAXSEQ};
use app::AppWrites;
use cc::{Clocks, Controller, Cwnd, HystartConfig, INFINITE_SSTHRESH};
use clock::{Jiffies, RttEstimator};
use rtx::{AckEffects, RtxQueue};

/// Which congestion controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinuxCc {
    /// `tcp_congestion_control = reno`.
    Reno,
    /// `cubic` (the kernel's default before BBR became this machine's).
    Cubic,
}

/// Parameters of a Linux TCP sender: the kernel's defaults ([`LinuxTcpConfig::new`]) as
/// this machine's 6.18 kernel reports them (sysctls and `/sys/module/tcp_cubic/parameters`).
#[derive(Clone, Debug, PartialEq)]
pub struct LinuxTcpConfig {
    /// The controller.
    pub cc: LinuxCc,
    /// MSS: payload bytes per data packet (1448 at an MTU of 1500 with timestamps).
    pub packet_size: u32,
    /// Header bytes per data packet and pure ACK: 20 + 20 + 12.
    pub header_size: u32,
    /// SYN and SYN-ACK size: 20 + 20 + 20 bytes of options (MSS, SACK permitted,
    /// timestamps, window scale).
    pub syn_size: u32,
    /// Initial window (`TCP_INIT_CWND`).
    pub window_init: u32,
    /// `snd_cwnd_clamp` and the receiver's window, packets (the kernel's receive window
    /// autotunes far above these paths' BDP: effectively unlimited).
    pub window: u32,
    /// `CONFIG_HZ`.
    pub hz: u32,
    /// `tcp_rto_min_us`.
    pub rto_min: Duration,
    /// `TCP_RTO_MAX` (`tcp_rto_max_ms`).
    pub rto_max: Duration,
    /// `TCP_TIMEOUT_INIT`: RTO before the first sample (and of the SYN).
    pub rto_init: Duration,
    /// `tcp_reordering`: SACKed packets that end RACK's reordering allowance.
    pub reordering: u32,
    /// `tcp_early_retrans` 3: tail loss probes.
    pub tlp: bool,
    /// `tcp_frto` 2: SACK-enhanced F-RTO after a timeout.
    pub frto: bool,
    /// CUBIC's HyStart.
    pub hystart: HystartConfig,
    /// PSH on the last segment of each application write (the kernel with a bulk writer;
    /// the receiver acknowledges such a segment at once). `false` sends none, as the model
    /// did before 2026-11-27.
    pub psh: bool,
}

impl LinuxTcpConfig {
    /// The kernel's defaults with controller `cc`.
    pub fn new(cc: LinuxCc) -> Self {
        LinuxTcpConfig {
            cc,
            packet_size: 1448,
            header_size: 52,
            syn_size: 60,
            window_init: 10,
            window: 1 << 24,
            hz: 250,
            rto_min: Duration::from_millis(200),
            rto_max: Duration::from_secs(120),
            rto_init: Duration::from_secs(1),
            reordering: 3,
            tlp: true,
            frto: true,
            hystart: HystartConfig::default(),
            psh: true,
        }
    }
}

/// `icsk_ca_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// Nothing wrong.
    Open,
    /// SACKs or retransmissions seen, no loss yet.
    Disorder,
    /// The window was reduced without a loss recovery (after a repaired tail loss).
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// Which of the kernel's xmit timers is armed (they share one timer, `icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XmitTimer {
    /// Retransmission timeout (also the SYN's).
    Retrans,
    /// Tail loss probe.
    LossProbe,
    /// RACK's reordering timer.
    ReoTimeout,
}

/// Where to go after ACK processing (`REXMIT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rexmit {
    None,
    Lost,
    New,
}

/// Counters beyond [`TcpSenderStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinuxStats {
    /// Entries into fast recovery.
    pub recoveries: u64,
    /// Tail loss probes sent.
    pub loss_probes: u64,
    /// Timeouts undone by F-RTO.
    pub frto_undos: u64,
    /// Slow-start exits by HyStart.
    pub hystart_exits: u64,
    /// Time of the first exit from slow start (HyStart or a loss), if any.
    pub slow_start_exit: Option<Time>,
    /// cwnd when the first loss was detected.
    pub cwnd_at_first_loss: Option<u32>,
}

/// A Linux TCP sender with an infinite source. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct LinuxTcpSender {
    cfg: LinuxTcpConfig,
    clk: Jiffies,
    q: RtxQueue,
    rtt: RttEstimator,
    cc: Controller,
    w: Cwnd,
    state: CaState,
    established: bool,
    syn_sent: Option<Time>,
    syn_retransmitted: bool,
    curseq: i64,
    high_seq: i64,
    prior_cwnd: u32,
    prior_ssthresh: u32,
    prr_delivered: u32,
    prr_out: u32,
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: i64,
    tlp_high_seq: Option<i64>,
    tlp_retrans: bool,
    frto: bool,
    undo_marker: bool,
    timer: Option<(Time, XmitTimer)>,
    /// `icsk_rto`, jiffies (backed off).
    rto_j: u64,
    retransmits: u32,
    min_rtt: Option<(u64, Time)>,
    delivered: u64,
    /// Timestamp echoed by the last ACK (for Karn's fallback).
    ts_echo: Time,
    app: AppWrites,
    stats: TcpSenderStats,
    lstats: LinuxStats,
}

/// The sender's one timer: the kernel's transmit timer (RTO, TLP or RACK reordering).
const XMIT: TimerId = TimerId(0);

/// The kernel's jiffies counter starts far from 0 (`INITIAL_JIFFIES`), so that 0 can mean "no
/// time" in CUBIC's state.
const JIFFIES_BASE: u64 = 1 << 20;
/// `TCP_TIMEOUT_MIN`, jiffies; `TCP_TIMEOUT_MIN_US`.
const TIMEOUT_MIN_J: u64 = 2;
const TIMEOUT_MIN_US: u64 = 2000;
/// `tcp_min_rtt_wlen`: the minimum RTT filter's window.
const MIN_RTT_WINDOW: Duration = Duration::from_secs(300);

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl LinuxTcpSender {
    /// A sender in the closed state.
    pub fn new(cfg: LinuxTcpConfig) -> Self {
        let cc = match cfg.cc {
            LinuxCc::Reno => Controller::Reno,
            LinuxCc::Cubic => Controller::cubic(cfg.hystart),
        };
        let clk = Jiffies::new(cfg.hz, 0);
        let rto_j = clk.from_us(us(cfg.rto_init));
        LinuxTcpSender {
            clk,
            q: RtxQueue::new(1),
            rtt: RttEstimator::default(),
            cc,
            w: Cwnd {
                cwnd: cfg.window_init.max(1),
                cnt: 0,
                ssthresh: INFINITE_SSTHRESH,
                clamp: cfg.window.max(1),
            },
            state: CaState::Open,
            established: false,
            syn_sent: None,
            syn_retransmitted: false,
            curseq: 0,
            high_seq: 1,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            prr_delivered: 0,
            prr_out: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 1,
            tlp_high_seq: None,
            tlp_retrans: false,
            frto: false,
            undo_marker: false,
            timer: None,
            rto_j,
            retransmits: 0,
            min_rtt: None,
            delivered: 0,
            ts_echo: Time::ZERO,
            app: AppWrites::default(),
            stats: TcpSenderStats {
                max_backoff: 1,
                ..TcpSenderStats::default()
            },
            lstats: LinuxStats::default(),
            cfg,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LinuxTcpConfig {
        &self.cfg
    }

    /// `snd_cwnd`, packets.
    pub fn cwnd(&self) -> u32 {
        self.w.cwnd
    }

    /// `snd_ssthresh`, packets.
    pub fn ssthresh(&self) -> u32 {
        self.w.ssthresh
    }

    /// The state.
    pub fn ca_state(&self) -> CaState {
        self.state
    }

    /// `tcp_packets_in_flight`.
    pub fn in_flight(&self) -> u32 {
        self.q.in_flight()
    }

    /// `snd_una`.
    pub fn snd_una(&self) -> i64 {
        self.q.una()
    }

    /// `snd_nxt`.
    pub fn snd_nxt(&self) -> i64 {
        self.q.nxt()
    }

    /// Smoothed RTT, µs (0 before any sample).
    pub fn srtt_us(&self) -> u64 {
        self.rtt.srtt_us()
    }

    /// The RTO now, µs.
    pub fn rto_us(&self) -> u64 {
        self.clk.to_us(self.rto_j)
    }

    /// Counters as for NS-2's senders (`fast_retransmits` counts entries into recovery).
    pub fn stats(&self) -> TcpSenderStats {
        self.stats
    }

    /// Linux-specific counters.
    pub fn linux_stats(&self) -> LinuxStats {
        self.lstats
    }

    fn clocks(&self, now: Time) -> Clocks {
        Clocks {
            jiffies: (self.clk.at(now) + JIFFIES_BASE) as u32,
            hz: self.cfg.hz,
            now_us: now.as_nanos() / 1000,
        }
    }

    fn min_rtt_ns(&self) -> u64 {
        self.min_rtt.map_or(0, |(m, _)| m * 1000)
    }

    /// Hands the kernel's one transmit timer (`icsk_retransmit_timer`), kept in
    /// `self.timer`, to the simulator; called at the end of every agent call.
    fn sync_timer(&self, ctx: &mut AgentCtx<'_>) {
        ctx.sync_timer(XMIT, self.timer.map(|(t, _)| t));
    }

    fn set_timer(&mut self, now: Time, when_j: u64, kind: XmitTimer) {
        let max_j = self.clk.from_us(us(self.cfg.rto_max));
        self.timer = Some((self.clk.timer(now, when_j.min(max_j)), kind));
    }

    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.state, CaState::Cwr | CaState::Recovery)
    }

    /// `tcp_is_cwnd_limited`.
    fn cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        self.w.in_slow_start() && self.w.cwnd < 2 * self.max_packets_out
    }

    /// `tcp_current_ssthresh`.
    fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.w.ssthresh
        } else {
            self.w
                .ssthresh
                .max(((u64::from(self.w.cwnd) * 3) / 4) as u32)
        }
    }

    fn first_exit(&mut self, now: Time) {
        self.lstats.slow_start_exit.get_or_insert(now);
    }

    // ----- sending -----

    fn emit(&mut self, seq: i64, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        let (size, payload) = if seq == 0 {
            (self.cfg.syn_size, 0)
        } else {
            (
                self.cfg.packet_size.saturating_add(self.cfg.header_size),
                self.cfg.packet_size,
            )
        };
        let header = Header::Tcp(TcpHeader {
            seqno: seq,
            ts: now,
            syn: seq == 0,
            psh: self.cfg.psh && seq > 0 && self.app.psh(seq),
            ..TcpHeader::default()
        });
        ctx.send(ctx.packet(PacketKind::Tcp, size, payload, seq, header));
        self.stats.packets_sent += 1;
        self.stats.payload_bytes_sent += u64::from(payload);
    }

    /// Send new packet `snd_nxt` (`tcp_event_new_data_sent`).
    fn send_new(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        let prior_packets = self.q.packets_out();
        let seq = self.q.nxt();
        self.app.before_send(seq, self.q.una(), self.w.cwnd);
        self.q.push_new(now);
        self.emit(seq, ctx);
        self.stats.new_data_packets += 1;
        if prior_packets == 0 || matches!(self.timer, Some((_, XmitTimer::LossProbe))) {
            self.rearm_rto(now);
        }
    }

    fn retransmit(&mut self, seq: i64, ctx: &mut AgentCtx<'_>) {
        self.q.retransmitted(seq, ctx.now());
        self.emit(seq, ctx);
        self.stats.retransmissions += 1;
    }

    /// Room for new data: the application and the receiver's window.
    fn may_send_new(&self) -> bool {
        self.q.nxt() < self.curseq && self.q.nxt() < self.q.una() + i64::from(self.w.clamp)
    }

    /// `tcp_write_xmit`: new data while the window allows (one packet regardless when
    /// `probe`), then `tcp_cwnd_validate`.
    fn write_xmit(&mut self, probe: bool, ctx: &mut AgentCtx<'_>) -> u32 {
        let mut sent = 0u32;
        while self.may_send_new() {
            if self.q.in_flight() >= self.w.cwnd && !(probe && sent == 0) {
                break;
            }
            self.send_new(ctx);
            sent += 1;
            if probe {
                break;
            }
        }
        if sent > 0 {
            if self.in_cwnd_reduction() {
                self.prr_out += sent;
            }
            if !probe {
                self.schedule_loss_probe(ctx.now(), false);
            }
        }
        let limited = self.q.in_flight() >= self.w.cwnd;
        if sent > 0 || limited {
            self.cwnd_validate(limited);
        }
        sent
    }

    /// `tcp_cwnd_validate`: remember whether the window was used up in this round.
    fn cwnd_validate(&mut self, limited: bool) {
        let packets_out = self.q.packets_out();
        if self.q.una() >= self.cwnd_usage_seq
            || limited
            || (!self.is_cwnd_limited && packets_out > self.max_packets_out)
        {
            self.is_cwnd_limited = limited;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.q.nxt();
        }
    }

    /// `tcp_xmit_retransmit_queue`: packets marked lost, while the window allows.
    fn xmit_retransmit_queue(&mut self, ctx: &mut AgentCtx<'_>) {
        let head = self.q.una();
        let mut rearm = false;
        while self.q.in_flight() < self.w.cwnd {
            let Some(seq) = self.q.next_to_retransmit() else {
                break;
            };
            self.retransmit(seq, ctx);
            if self.in_cwnd_reduction() {
                self.prr_out += 1;
            }
            if seq == head && !matches!(self.timer, Some((_, XmitTimer::ReoTimeout))) {
                rearm = true;
            }
        }
        if rearm {
            self.set_timer(ctx.now(), self.rto_j, XmitTimer::Retrans);
        }
    }

    // ----- timers -----

    /// Microseconds until the RTO of the first unacknowledged packet expires.
    fn rto_delta_us(&self, now: Time) -> i64 {
        let head = self.q.head_sent().unwrap_or(now);
        (head.as_nanos() / 1000 + self.clk.to_us(self.rto_j)) as i64
            - (now.as_nanos() / 1000) as i64
    }

    /// `tcp_rearm_rto`.
    fn rearm_rto(&mut self, now: Time) {
        if self.q.packets_out() == 0 {
            self.timer = None;
            return;
        }
        let mut rto = self.rto_j;
        if matches!(
            self.timer,
            Some((_, XmitTimer::ReoTimeout | XmitTimer::LossProbe))
        ) {
            rto = self.clk.from_us(self.rto_delta_us(now).max(1) as u64);
        }
        self.set_timer(now, rto, XmitTimer::Retrans);
    }

    /// `tcp_schedule_loss_probe`: a probe two smoothed RTTs after the last transmission or
    /// ACK, when in Open or CWR and something is outstanding.
    fn schedule_loss_probe(&mut self, now: Time, advancing_rto: bool) -> bool {
        if !self.cfg.tlp
            || self.q.packets_out() == 0
            || !matches!(self.state, CaState::Open | CaState::Cwr)
        {
            return false;
        }
        let mut timeout = if self.rtt.srtt8 != 0 {
            let mut t = 2 * self.rtt.srtt_us();
            t += if self.q.packets_out() == 1 {
                us(self.cfg.rto_min)
            } else {
                TIMEOUT_MIN_US
            };
            self.clk.from_us(t)
        } else {
            self.clk.from_us(us(self.cfg.rto_init))
        };
        let rto_delta = if advancing_rto {
            self.clk.to_us(self.rto_j) as i64
        } else {
            self.rto_delta_us(now)
        };
        if rto_delta > 0 {
            timeout = timeout.min(self.clk.from_us(rto_delta as u64));
        }
        self.set_timer(now, timeout, XmitTimer::LossProbe);
        true
    }

    /// `tcp_set_xmit_timer`.
    fn set_xmit_timer(&mut self, now: Time) {
        if !self.schedule_loss_probe(now, true) {
            self.rearm_rto(now);
        }
    }

    /// `tcp_retransmit_timer`.
    fn on_rto(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        if !self.established {
            // The SYN again, backed off.
            self.syn_retransmitted = true;
            self.emit(0, ctx);
            self.stats.retransmissions += 1;
            self.rto_j = (self.rto_j * 2).min(self.clk.from_us(us(self.cfg.rto_max)));
            self.set_timer(now, self.rto_j, XmitTimer::Retrans);
            return;
        }
        if self.q.packets_out() == 0 {
            return;
        }
        self.enter_loss(now);
        self.stats.timeouts += 1;
        let head = self.q.una();
        self.retransmit(head, ctx);
        self.retransmits += 1;
        self.stats.max_backoff = self.stats.max_backoff.max(1 << self.retransmits.min(30));
        self.rto_j = (self.rto_j * 2).min(self.clk.from_us(us(self.cfg.rto_max)));
        self.set_timer(now, self.rto_j, XmitTimer::Retrans);
    }

    /// `tcp_enter_loss`.
    fn enter_loss(&mut self, now: Time) {
        let new_recovery = self.state < CaState::Recovery;
        self.q.timeout_mark_lost(now);
        if self.state <= CaState::Disorder
            || self.high_seq <= self.q.una()
            || (self.state == CaState::Loss && self.retransmits == 0)
        {
            self.prior_ssthresh = self.current_ssthresh();
            self.prior_cwnd = self.w.cwnd;
            self.w.ssthresh = self.cc.ssthresh(self.w.cwnd);
            self.undo_marker = true;
            self.lstats.cwnd_at_first_loss.get_or_insert(self.w.cwnd);
            self.first_exit(now);
        }
        self.w.cwnd = self.q.in_flight() + 1;
        self.w.cnt = 0;
        self.set_state(CaState::Loss, now);
        self.high_seq = self.q.nxt();
        self.tlp_high_seq = None;
        self.frto = self.cfg.frto && (new_recovery || self.retransmits > 0);
    }

    /// `tcp_send_loss_probe`: one new packet, or the last one again.
    fn on_loss_probe(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        if self.tlp_high_seq.is_none() {
            self.tlp_retrans = false;
            let sent = if self.may_send_new() {
                self.write_xmit(true, ctx) > 0
            } else if self.q.packets_out() > 0 {
                let last = self.q.nxt() - 1;
                self.retransmit(last, ctx);
                self.tlp_retrans = true;
                true
            } else {
                false
            };
            if sent {
                self.tlp_high_seq = Some(self.q.nxt());
                self.lstats.loss_probes += 1;
                self.timer = None;
            }
        }
        self.rearm_rto(now);
    }

    /// `tcp_rack_reo_timeout`.
    fn on_reo_timeout(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        let prior_in_flight = self.q.in_flight();
        let lost_before = self.q.lost_total;
        let reo = self.reo_wnd_ns();
        self.q.rack_detect_loss(now, reo);
        if prior_in_flight != self.q.in_flight() {
            if self.state != CaState::Recovery {
                self.enter_recovery(now);
                let newly_lost = (self.q.lost_total - lost_before) as u32;
                self.cwnd_reduction(1, newly_lost, false);
            }
            self.xmit_retransmit_queue(ctx);
        }
        if !matches!(self.timer, Some((_, XmitTimer::Retrans))) {
            self.timer = None;
            self.rearm_rto(now);
        }
    }

    // ----- ACK processing -----

    /// RACK's reordering window (`tcp_rack_reo_wnd`); no reordering is ever seen here (the
    /// network is FIFO), so it is min_rtt/4 only before recovery and below the duplicate
    /// threshold.
    fn reo_wnd_ns(&self) -> u64 {
        if self.state >= CaState::Recovery || self.q.sacked_out() >= self.cfg.reordering {
            return 0;
        }
        (self.min_rtt_ns() / 4).min(self.rtt.srtt_us() * 1000)
    }

    /// `tcp_rack_mark_lost`; true if the reordering timer was armed.
    fn rack_mark_lost(&mut self, now: Time) -> bool {
        if !self.q.rack.advanced {
            return false;
        }
        self.q.rack.advanced = false;
        let reo = self.reo_wnd_ns();
        let timeout_ns = self.q.rack_detect_loss(now, reo);
        if timeout_ns > 0 {
            let j = self.clk.from_us(timeout_ns.div_ceil(1000)) + TIMEOUT_MIN_J;
            self.set_timer(now, j, XmitTimer::ReoTimeout);
            return true;
        }
        false
    }

    fn set_state(&mut self, s: CaState, now: Time) {
        if s == CaState::Loss && self.state != CaState::Loss {
            self.cc.on_loss_state(now.as_nanos() / 1000, self.q.nxt());
        }
        self.state = s;
    }

    /// `tcp_init_cwnd_reduction`.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.q.nxt();
        self.tlp_high_seq = None;
        self.w.cnt = 0;
        self.prior_cwnd = self.w.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.w.ssthresh = self.cc.ssthresh(self.w.cwnd);
    }

    /// `tcp_end_cwnd_reduction`.
    fn end_cwnd_reduction(&mut self) {
        if self.w.ssthresh < INFINITE_SSTHRESH && (self.state == CaState::Cwr || self.undo_marker) {
            self.w.cwnd = self.w.ssthresh;
        }
    }

    /// `tcp_enter_recovery`.
    fn enter_recovery(&mut self, now: Time) {
        self.undo_marker = true;
        if !self.in_cwnd_reduction() {
            self.prior_ssthresh = self.current_ssthresh();
            self.lstats.cwnd_at_first_loss.get_or_insert(self.w.cwnd);
            self.first_exit(now);
            self.init_cwnd_reduction();
        }
        self.stats.fast_retransmits += 1;
        self.stats.cwnd_cuts += 1;
        self.lstats.recoveries += 1;
        self.set_state(CaState::Recovery, now);
    }

    /// `tcp_cwnd_reduction`: proportional rate reduction (RFC 6937) with the slow-start
    /// reduction bound.
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.prior_cwnd == 0 {
            return;
        }
        let in_flight = i64::from(self.q.in_flight());
        let ssthresh = i64::from(self.w.ssthresh);
        let delta = ssthresh - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let prr_delivered = i64::from(self.prr_delivered);
        let prr_out = i64::from(self.prr_out);
        let mut sndcnt = if delta < 0 {
            let prior = i64::from(self.prior_cwnd);
            (ssthresh * prr_delivered + prior - 1) / prior - prr_out
        } else {
            let mut s = (prr_delivered - prr_out).max(i64::from(newly_acked_sacked));
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.w.cwnd = (in_flight + sndcnt).max(0) as u32;
    }

    /// `tcp_try_keep_open` / `tcp_try_to_open`.
    fn try_to_open(&mut self, now: Time) {
        if self.state == CaState::Cwr {
            return;
        }
        let s = if self.q.sacked_out() + self.q.lost_out() > 0 || self.q.retrans_out() > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.state != s {
            self.set_state(s, now);
            self.high_seq = self.q.nxt();
        }
    }

    /// `tcp_identify_packet_loss` (RACK); returns whether a retransmission was lost.
    fn identify_packet_loss(&mut self, now: Time, set_xmit_timer: &mut bool) -> bool {
        if self.q.packets_out() == 0 {
            return false;
        }
        let prior_retrans = self.q.retrans_out();
        if self.rack_mark_lost(now) {
            *set_xmit_timer = false;
        }
        prior_retrans > self.q.retrans_out()
    }

    /// `tcp_undo_cwnd_reduction` after F-RTO found the timeout spurious.
    fn undo_loss(&mut self, now: Time) {
        self.q.unmark_lost();
        if self.prior_ssthresh > 0 {
            self.w.cwnd = self.cc.undo_cwnd(self.w.cwnd, self.prior_cwnd);
            if self.prior_ssthresh > self.w.ssthresh {
                self.w.ssthresh = self.prior_ssthresh;
            }
        }
        self.undo_marker = false;
        self.q.rack.advanced = true;
        self.retransmits = 0;
        self.lstats.frto_undos += 1;
        self.set_state(CaState::Open, now);
    }

    /// `tcp_process_loss` (F-RTO, RFC 5682 §3 with SACK).
    fn process_loss(
        &mut self,
        fx: &AckEffects,
        una_advanced: bool,
        dupack: bool,
        now: Time,
    ) -> Rexmit {
        let recovered = self.q.una() >= self.high_seq;
        if self.frto {
            if fx.orig_sack_acked {
                self.undo_loss(now);
                return Rexmit::None;
            }
            if self.q.nxt() > self.high_seq {
                if fx.data_sacked || dupack {
                    self.frto = false;
                }
            } else if una_advanced && !recovered {
                self.high_seq = self.q.nxt();
                if self.may_send_new() {
                    return Rexmit::New;
                }
                self.frto = false;
            }
        }
        if recovered {
            self.set_state(CaState::Open, now);
            return Rexmit::None;
        }
        Rexmit::Lost
    }

    /// `tcp_fastretrans_alert` (SACK with RACK; no ECN, D-SACK or reneging here).
    fn fastretrans_alert(
        &mut self,
        fx: &AckEffects,
        una_advanced: bool,
        dupack: bool,
        set_xmit_timer: &mut bool,
        now: Time,
    ) -> Rexmit {
        // State exits once high_seq is acknowledged.
        if self.state != CaState::Open && self.q.una() >= self.high_seq {
            match self.state {
                CaState::Cwr if self.q.una() != self.high_seq => {
                    self.end_cwnd_reduction();
                    self.set_state(CaState::Open, now);
                }
                CaState::Recovery => {
                    self.set_state(CaState::Open, now);
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        let mut rexmit = Rexmit::None;
        match self.state {
            CaState::Recovery => {
                self.identify_packet_loss(now, set_xmit_timer);
                return Rexmit::Lost;
            }
            CaState::Loss => {
                rexmit = self.process_loss(fx, una_advanced, dupack, now);
                let lost_retrans = self.identify_packet_loss(now, set_xmit_timer);
                if !(self.state == CaState::Open || lost_retrans) {
                    return rexmit;
                }
            }
            _ => {}
        }
        self.identify_packet_loss(now, set_xmit_timer);
        if self.q.lost_out() == 0 {
            self.try_to_open(now);
            return rexmit;
        }
        self.enter_recovery(now);
        Rexmit::Lost
    }

    /// `tcp_ack_update_rtt`.
    fn update_rtt(&mut self, fx: &AckEffects, now: Time) -> Option<u64> {
        let since = |t: Time| now.as_nanos().saturating_sub(t.as_nanos()) / 1000;
        let mut seq_rtt = fx.first_ackt.map(since);
        let mut ca_rtt = fx.last_ackt.map(since);
        if let Some(t) = fx.first_sackt {
            if seq_rtt.is_none() {
                seq_rtt = Some(since(t));
            }
            ca_rtt = fx.last_sackt.map(since);
        }
        if seq_rtt.is_none() && fx.pkts_acked > 0 && self.ts_echo > Time::ZERO {
            // Karn: only retransmitted data acknowledged; the timestamp echo in ms ticks.
            let d =
                (now.as_nanos() / 1_000_000).saturating_sub(self.ts_echo.as_nanos() / 1_000_000);
            let v = d.max(1) * 1000;
            seq_rtt = Some(v);
            ca_rtt = Some(v);
        }
        let seq_rtt = seq_rtt?;
        let ca = ca_rtt.unwrap_or(seq_rtt);
        match self.min_rtt {
            Some((m, t)) if ca > m && now.saturating_since(t) < MIN_RTT_WINDOW => {}
            _ => self.min_rtt = Some((ca.max(1), now)),
        }
        self.rtt
            .sample(seq_rtt, us(self.cfg.rto_min), self.q.una(), self.q.nxt());
        let rto = self.rtt.rto_us().min(us(self.cfg.rto_max));
        self.rto_j = self.clk.from_us(rto);
        self.retransmits = 0;
        Some(ca)
    }

    /// The SYN-ACK: the connection is established, data may flow.
    fn on_synack(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        self.established = true;
        if let (Some(t), false) = (self.syn_sent, self.syn_retransmitted) {
            let rtt = now.as_nanos().saturating_sub(t.as_nanos()) / 1000;
            self.min_rtt = Some((rtt.max(1), now));
            self.rtt.sample(rtt, us(self.cfg.rto_min), 1, 1);
            self.rto_j = self.clk.from_us(self.rtt.rto_us());
        }
        self.timer = None;
        self.cc.init(now.as_nanos() / 1000, self.q.nxt());
        self.app.open();
        self.write_xmit(false, ctx);
    }

    fn on_ack(&mut self, h: &TcpHeader, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        self.stats.acks_received += 1;
        if !self.established {
            if h.seqno >= 0 {
                self.on_synack(ctx);
            }
            return;
        }
        let ack = h.seqno.saturating_add(1);
        let prior_una = self.q.una();
        if ack > self.q.nxt() || ack < prior_una {
            return;
        }
        self.ts_echo = h.ts_echo;
        let lost_before = self.q.lost_total;
        let mut fx = AckEffects::default();
        let una_advanced = ack > prior_una;
        let min_rtt = self.min_rtt_ns();
        for (l, r) in h.sack.iter() {
            if l < r && l >= ack {
                self.q.sack(l, r, now, self.high_seq, min_rtt, &mut fx);
            }
        }
        if una_advanced {
            self.q.clean(ack, now, self.high_seq, min_rtt, &mut fx);
        }
        self.delivered += u64::from(fx.delivered);
        let rtt = self.update_rtt(&fx, now);
        let mut set_xmit_timer = fx.pkts_acked > 0;
        let clocks = self.clocks(now);
        let before = self.w.ssthresh;
        self.cc
            .pkts_acked(&mut self.w, rtt, self.q.una(), self.q.nxt(), clocks);
        if self.w.ssthresh != before {
            self.lstats.hystart_exits += 1;
            self.first_exit(now);
        }
        if let Some(tlp) = self.tlp_high_seq {
            if ack >= tlp {
                if !self.tlp_retrans {
                    self.tlp_high_seq = None;
                } else if ack > tlp {
                    // The probe repaired a tail loss: reduce once, as CWR.
                    self.init_cwnd_reduction();
                    self.set_state(CaState::Cwr, now);
                    self.end_cwnd_reduction();
                    self.try_to_open(now);
                } else if !una_advanced && !fx.data_sacked {
                    self.tlp_high_seq = None;
                }
            }
        }
        let dupack = !una_advanced && !fx.data_sacked;
        let dubious = dupack || fx.data_sacked || self.state != CaState::Open;
        let mut rexmit = Rexmit::None;
        if dubious {
            rexmit = self.fastretrans_alert(&fx, una_advanced, dupack, &mut set_xmit_timer, now);
        }
        if set_xmit_timer {
            self.set_xmit_timer(now);
        }
        // tcp_cong_control.
        let newly_lost = (self.q.lost_total - lost_before) as u32;
        if self.in_cwnd_reduction() {
            self.cwnd_reduction(fx.delivered, newly_lost, una_advanced);
        } else if fx.data_acked {
            let limited = self.cwnd_limited();
            let was_ss = self.w.in_slow_start();
            self.cc
                .cong_avoid(&mut self.w, fx.delivered, limited, clocks);
            if was_ss && !self.w.in_slow_start() && self.state == CaState::Open {
                self.first_exit(now);
            }
        }
        match rexmit {
            Rexmit::None => {}
            Rexmit::Lost => self.xmit_retransmit_queue(ctx),
            Rexmit::New => {
                self.write_xmit(false, ctx);
                if self.q.nxt() <= self.high_seq {
                    self.frto = false;
                    self.xmit_retransmit_queue(ctx);
                }
            }
        }
        self.write_xmit(false, ctx);
        // The writer runs after the ACK's transmissions and refills what it freed.
        self.app.on_acked(prior_una, self.q.una());
        if self.q.packets_out() == 0 {
            self.timer = None;
        }
    }
}

impl Agent for LinuxTcpSender {
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        // Where the flow starts between two jiffies.
        let phase = ctx.rng().gen_range(0..self.clk.jiffy_ns);
        self.clk = Jiffies::new(self.cfg.hz, phase);
        self.rto_j = self.clk.from_us(us(self.cfg.rto_init));
        if self.curseq <= TCP_MAXSEQ {
            self.curseq = TCP_MAXSEQ;
        }
        let now = ctx.now();
        self.syn_sent = Some(now);
        self.emit(0, ctx);
        self.set_timer(now, self.rto_j, XmitTimer::Retrans);
        self.sync_timer(ctx);
    }

    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
        self.curseq = self.q.nxt();
        let _ = ctx;
    }

    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        if let (PacketKind::Ack, Header::Tcp(h)) = (pkt.kind, &pkt.header) {
            self.on_ack(h, ctx);
        }
        self.sync_timer(ctx);
    }

    fn on_timer(&mut self, _timer: TimerId, ctx: &mut AgentCtx<'_>) {
        // The simulator fires XMIT at the deadline handed over by `sync_timer`; which of the
        // kernel's three uses of it (RTO, TLP, RACK reordering) is armed is kept here.
        if let Some((_, kind)) = self.timer.take() {
            match kind {
                XmitTimer::Retrans => self.on_rto(ctx),
                XmitTimer::LossProbe => self.on_loss_probe(ctx),
                XmitTimer::ReoTimeout => self.on_reo_timeout(ctx),
            }
        }
        self.sync_timer(ctx);
    }

    fn app_counters(&self) -> AppCounters {
        AppCounters {
            generated_packets: self.stats.new_data_packets,
            generated_bytes: self.stats.new_data_packets * u64::from(self.cfg.packet_size),
        }
    }

    /// cwnd and ssthresh (packets), srtt and the RTO now (seconds), the state (numbered as
    /// TCP_INFO's `tcpi_ca_state`: 0 Open … 4 Loss) and the payload bytes acknowledged, as
    /// TCP_INFO reports them.
    fn sample_names(&self) -> &'static [&'static str] {
        &["cwnd", "ssthresh", "srtt", "rto", "ca_state", "bytes_acked"]
    }

    fn sample(&self, out: &mut Vec<f64>) {
        out.push(f64::from(self.w.cwnd));
        out.push(f64::from(self.w.ssthresh.min(INFINITE_SSTHRESH)));
        out.push(self.rtt.srtt_us() as f64 * 1e-6);
        out.push(self.rto_us() as f64 * 1e-6);
        out.push(match self.state {
            CaState::Open => 0.0,
            CaState::Disorder => 1.0,
            CaState::Cwr => 2.0,
            CaState::Recovery => 3.0,
            CaState::Loss => 4.0,
        });
        out.push(((self.q.una() - 1).max(0) as f64) * f64::from(self.cfg.packet_size));
    }
}

#[cfg(test)]
mod tests;
