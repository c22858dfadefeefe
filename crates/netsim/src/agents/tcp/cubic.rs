//! TCP CUBIC over NS-2.35's `Agent/TCP/Linux` sender: SACK-based loss recovery with timestamps,
//! driving one CUBIC congestion controller in one of two configurations ([`CubicProfile`]).
//!
//! The sender (what NS-2's `LinuxTcpAgent` does; restated in `docs/ns2-reference.md`):
//! - the window is whole packets (`snd_cwnd`) with a growth counter (`snd_cwnd_cnt`), capped
//!   by `window_` (`snd_cwnd_clamp`); `ssthresh` starts at `window_`;
//! - it may send while `packets_in_flight = snd_nxt - snd_una - lost - sacked` is below the
//!   window, retransmitting packets the [scoreboard](super::scoreboard) deems lost first;
//! - every ACK carries a timestamp echo: every ACK (duplicates too) gives an RTT sample, in
//!   1 ms ticks rounded to nearest, and ends any timer backoff; the retransmission timer is
//!   restarted on every ACK;
//! - states Open, Recovery, Loss. Open + a packet newly deemed lost: `ssthresh` from the
//!   controller, `cwnd = ssthresh` at once, but the old window drains gradually
//!   (`next_pkts_in_flight_`: each packet sent lowers the allowance to `in_flight - 1`);
//!   Recovery ends when the ACK reaches the highest packet sent at its start, raising `cwnd`
//!   to `ssthresh` if below (but at most `in_flight + 3`). A timeout: `ssthresh` from the
//!   controller, `cwnd = 1`, every unSACKed packet deemed lost, state Loss (slow start), the
//!   controller's state reset. No undo, F-RTO, ECN or rate-halving beyond the above;
//! - the controller's `cong_avoid` runs only when the window was full
//!   (`in_flight >= cwnd` before the ACK); slow start adds one packet per ACK that
//!   acknowledged at least a packet (ABC, L = 1).
//!
//! Sequence numbers count packets, as in NS-2; data packets are
//! `packetSize_ + 40 + 10` bytes (the timestamp option adds `ts_option_size_`), the SYN 40.

use std::time::Duration;

use crate::agent::{Agent, AgentCtx, AppCounters, TimerId};
use crate::packet::{Header, Packet, PacketKind, TcpHeader, MAX_SACK_BLOCKS};
use crate::Time;

use super::scoreboard::ScoreBoard;
use super::{TcpSenderStats, TCP_MAXSEQ};

/// The retransmission timer, the agent's only one.
const RTX: TimerId = TimerId(0);

/// Which CUBIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CubicProfile {
    /// RFC 9438 as specified: β = 0.7, C = 0.4 with the flow's own smoothed RTT, the
    /// Reno-friendly region of §4.3 (α = 3(1−β)/(1+β), 1 once past the previous maximum),
    /// fast convergence, the §4.8 timeout rule, standard slow start.
    Rfc9438,
    /// The Linux 2.6.22.6 module NS-2.35 runs (`tcp_cubic.c`, CUBIC v2.1, no HyStart):
    /// β = 819/1024, C = 41/1024 scaled against a fixed 100 ms RTT, a growth of at least one
    /// packet per 50 ACKs until the first loss, at most `max_increment` (16) packets per RTT
    /// above the plateau, its own Reno estimate, the delayed-ACK ratio, kernel fixed point.
    Ns2,
}

/// Parameters of a CUBIC sender, named after NS-2's bound variables.
#[derive(Clone, Debug, PartialEq)]
pub struct CubicConfig {
    /// The controller.
    pub profile: CubicProfile,
    /// `window_`: cap on the congestion window and the initial `ssthresh`, packets.
    pub window: u32,
    /// `windowInit_`: initial window, packets (`delay_growth_` is false for `Agent/TCP/Linux`:
    /// the SYN goes out with it).
    pub window_init: u32,
    /// `packetSize_`: payload bytes per data packet.
    pub packet_size: u32,
    /// `tcpip_base_hdr_size_`: header bytes per packet, and the SYN's size.
    pub header_size: u32,
    /// `ts_option_size_`: the timestamp option's bytes on every data packet.
    pub ts_option_size: u32,
    /// `syn_`: packet 0 is a header-only SYN.
    pub syn: bool,
    /// `numdupacks_`: FACK threshold of the scoreboard.
    pub num_dupacks: u32,
    /// `tcpTick_` once `select_ca` ran (1 ms: `JIFFY_RATIO` 1000).
    pub tcp_tick: Duration,
    /// `minrto_`.
    pub min_rto: Duration,
    /// `maxrto_` (120 s for `Agent/TCP/Linux`).
    pub max_rto: Duration,
    /// `rtxcur_init_`: RTO before the first sample.
    pub rtxcur_init: Duration,
    /// `tcp_max_burst`: after recovery, cwnd is at most `in_flight` plus this.
    pub max_burst_after_recovery: u32,
}

impl CubicConfig {
    /// NS-2.35's `Agent/TCP/Linux` defaults with `profile`.
    pub fn ns2(profile: CubicProfile) -> Self {
        CubicConfig {
            profile,
            window: 20,
            window_init: 2,
            packet_size: 1000,
            header_size: 40,
            ts_option_size: 10,
            syn: true,
            num_dupacks: 3,
            tcp_tick: Duration::from_millis(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(120),
            rtxcur_init: Duration::from_secs(3),
            max_burst_after_recovery: 3,
        }
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig::ns2(CubicProfile::Ns2)
    }
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `icsk_ca_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// Normal operation.
    Open,
    /// Fast recovery after a packet was deemed lost.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// The Linux agent's RTT estimator (`rtt_update` with timestamps, `rtt_timeout`,
/// `rtt_backoff`): integer ticks, srtt with 3 and rttvar with 2 fraction bits.
#[derive(Clone, Debug)]
struct LinuxRtt {
    tick: u64,
    srtt: i32,
    rttvar: i32,
    rtxcur: u64,
    backoff: u64,
}

impl LinuxRtt {
    fn update(&mut self, mut t_rtt: i32) {
        if t_rtt < 1 {
            t_rtt = 1;
        }
        if self.srtt != 0 {
            // NS-2 holds the difference in a `short`.
            let mut delta = i32::from(t_rtt.wrapping_sub(self.srtt >> 3) as i16);
            self.srtt = self.srtt.saturating_add(delta);
            if self.srtt <= 0 {
                self.srtt = 1;
            }
            if delta < 0 {
                delta = -delta - (self.rttvar >> 2);
                // A falling RTT moves the variance an eighth as much (Linux's rule).
                if delta > 0 {
                    delta >>= 3;
                }
            } else {
                delta -= self.rttvar >> 2;
            }
            self.rttvar = self.rttvar.saturating_add(delta);
        } else {
            self.srtt = t_rtt.saturating_mul(8);
            self.rttvar = t_rtt.saturating_mul(2);
        }
        // (rttvar << (rttvar_exp_ + 1) + srtt) >> 3 whole ticks: srtt + 4 rttvar.
        let ticks = (i64::from(self.rttvar) * 8 + i64::from(self.srtt)) >> 3;
        self.rtxcur = (ticks.max(0) as u64).saturating_mul(self.tick);
    }

    fn timeout(&self, cfg: &CubicConfig) -> u64 {
        let min_rto = ns(cfg.min_rto);
        let mut t = if self.rtxcur < min_rto {
            min_rto.saturating_mul(self.backoff)
        } else {
            self.rtxcur.saturating_mul(self.backoff)
        };
        t = t.min(ns(cfg.max_rto));
        t.max(2 * self.tick)
    }

    fn back_off(&mut self, cfg: &CubicConfig) {
        if self.backoff < 64 || self.timeout(cfg) < ns(cfg.max_rto) {
            self.backoff = self.backoff.saturating_mul(2);
        }
        if self.backoff > 8 {
            self.rttvar = self.rttvar.saturating_add(self.srtt >> 3);
            self.srtt = 0;
        }
    }
}

/// The CUBIC controller's state (`struct bictcp`, plus what the RFC profile needs).
#[derive(Clone, Debug, Default)]
struct Cubic {
    /// ACKs per one-packet increase.
    cnt: u32,
    last_max_cwnd: u32,
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    origin: u32,
    /// Time to the plateau, in 2^-10 s (ns2 profile).
    k: u32,
    /// Minimum RTT in ms << 3 (ns2 profile).
    delay_min: u32,
    /// Epoch start in ms (0: none), ns2 profile.
    epoch_start: u32,
    ack_cnt: u32,
    tcp_cwnd: u32,
    /// Packets per ACK << 4.
    delayed_ack: u32,
    /// RFC profile: epoch start (ns), K (s), origin, W_est, cwnd before the last reduction.
    epoch_ns: Option<u64>,
    k_s: f64,
    origin_f: f64,
    w_est: f64,
    cwnd_prior: f64,
    w_max: f64,
}

const BETA_SCALE: u32 = 1024;
const LINUX_BETA: u32 = 819;
const BIC_SCALE: u32 = 41;
const MAX_INCREMENT: u32 = 16;
const HZ: u32 = 1000;
const ACK_RATIO_SHIFT: u32 = 4;
const RFC_BETA: f64 = 0.7;
const RFC_C: f64 = 0.4;

impl Cubic {
    fn reset(&mut self) {
        *self = Cubic {
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            ..Cubic::default()
        };
    }
}

/// `bictcp_update`'s TCP-friendly part, the same in Linux 2.6.22 and 6.x: the window Reno
/// would have with CUBIC's β grows by one packet per `cwnd·beta_scale/8` ACKed packets
/// (`beta_scale = 8(1024 + β)/3/(1024 − β)` in integers); when it is ahead of cwnd, `cnt` is
/// lowered so that cwnd keeps up with it. Returns the new `cnt`.
pub(crate) fn reno_friendly_cnt(
    ack_cnt: &mut u32,
    tcp_cwnd: &mut u32,
    cnt: u32,
    cwnd: u32,
    beta: u32,
) -> u32 {
    let beta_scale = 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta);
    let d = (cwnd.wrapping_mul(beta_scale)) >> 3;
    if d > 0 {
        while *ack_cnt > d {
            *ack_cnt -= d;
            *tcp_cwnd = tcp_cwnd.wrapping_add(1);
        }
    }
    if *tcp_cwnd > cwnd {
        cnt.min(cwnd / (*tcp_cwnd - cwnd))
    } else {
        cnt
    }
}

/// The kernel's cube root: a table lookup refined by one Newton–Raphson step (average error
/// about 0.2%), reproduced because K depends on its exact value.
pub(crate) fn cubic_root(a: u64) -> u32 {
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164,
        168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209,
        211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229, 231, 232, 234, 236, 237, 239, 240,
        242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let b = 64 - a.leading_zeros();
    if b < 7 {
        return (u32::from(V[a as usize]) + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let mut x = ((u32::from(V[shift.min(63)]) + 10) << b) >> 6;
    let div = u64::from(x) * u64::from(x.saturating_sub(1));
    if div == 0 {
        return x;
    }
    x = (2u32.wrapping_mul(x)).wrapping_add((a / div) as u32);
    ((u64::from(x) * 341) >> 10) as u32
}

/// A CUBIC sender on NS-2's Linux TCP agent, with an infinite (FTP) source. See the
/// [module docs](self).
#[derive(Clone, Debug)]
pub struct CubicSender {
    cfg: CubicConfig,
    rtt: LinuxRtt,
    sb: ScoreBoard,
    ca: Cubic,
    state: CaState,
    initialized: bool,
    /// `t_seqno_`, `curseq_`, `highest_ack_`, `maxseq_`, `recover_`.
    t_seqno: i64,
    curseq: i64,
    highest_ack: i64,
    maxseq: i64,
    recover: i64,
    snd_cwnd: u32,
    snd_ssthresh: u32,
    snd_cwnd_cnt: u32,
    bytes_acked: u64,
    next_pkts_in_flight: i64,
    ts_peer: Time,
    /// Timestamp echoed by the last ACK (`rcv_tsecr`).
    ts_peer_echo: Time,
    rtt_active: bool,
    rtt_seq: i64,
    rtx_timer: Option<Time>,
    stats: TcpSenderStats,
}

impl CubicSender {
    /// A sender with configuration `cfg`, in NS-2's reset state.
    pub fn new(cfg: CubicConfig) -> Self {
        let mut ca = Cubic::default();
        ca.reset();
        CubicSender {
            rtt: LinuxRtt {
                tick: ns(cfg.tcp_tick).max(1),
                srtt: 0,
                rttvar: 0,
                rtxcur: ns(cfg.rtxcur_init),
                backoff: 1,
            },
            sb: ScoreBoard::new(),
            ca,
            state: CaState::Open,
            initialized: false,
            t_seqno: 0,
            curseq: 0,
            highest_ack: -1,
            maxseq: -1,
            recover: 0,
            snd_cwnd: cfg.window_init.min(cfg.window.max(1)),
            snd_ssthresh: cfg.window,
            snd_cwnd_cnt: 0,
            bytes_acked: 0,
            next_pkts_in_flight: 0,
            ts_peer: Time::ZERO,
            ts_peer_echo: Time::ZERO,
            rtt_active: false,
            rtt_seq: -1,
            rtx_timer: None,
            stats: TcpSenderStats {
                max_backoff: 1,
                ..TcpSenderStats::default()
            },
            cfg,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CubicConfig {
        &self.cfg
    }

    /// The window as NS-2 reports it in `cwnd_`: `snd_cwnd`, or the allowance still draining
    /// after a reduction if larger.
    pub fn cwnd(&self) -> f64 {
        self.next_pkts_in_flight.max(i64::from(self.snd_cwnd)) as f64
    }

    /// `snd_cwnd`, packets.
    pub fn snd_cwnd(&self) -> u32 {
        self.snd_cwnd
    }

    /// `ssthresh`, packets.
    pub fn ssthresh(&self) -> u32 {
        self.snd_ssthresh
    }

    /// The recovery state.
    pub fn ca_state(&self) -> CaState {
        self.state
    }

    /// Highest cumulative ACK (`highest_ack_`), -1 before any.
    pub fn highest_ack(&self) -> i64 {
        self.highest_ack
    }

    /// Highest sequence sent (`maxseq_`).
    pub fn maxseq(&self) -> i64 {
        self.maxseq
    }

    /// Counters, as for NS-2's other TCP senders (`fast_retransmits` counts entries into
    /// Recovery).
    pub fn stats(&self) -> TcpSenderStats {
        self.stats
    }

    /// Packets the sender counts as in the network.
    pub fn packets_in_flight(&self) -> i64 {
        self.sb
            .packets_in_flight(self.highest_ack + 1, self.t_seqno)
    }

    fn set_rtx_timer(&mut self, now: Time) {
        self.rtx_timer = Some(now + Duration::from_nanos(self.rtt.timeout(&self.cfg)));
    }

    /// `output(seqno)`.
    fn output(&mut self, seqno: i64, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        let is_syn = seqno == 0 && self.cfg.syn;
        let (size, payload) = if is_syn {
            if self.maxseq == -1 {
                self.curseq += 1;
            }
            (self.cfg.header_size, 0)
        } else {
            (
                self.cfg
                    .packet_size
                    .saturating_add(self.cfg.header_size)
                    .saturating_add(self.cfg.ts_option_size),
                self.cfg.packet_size,
            )
        };
        let force = self.highest_ack == self.maxseq;
        let header = Header::Tcp(TcpHeader {
            seqno,
            ts: now,
            ts_echo: self.ts_peer,
            syn: is_syn,
            ..TcpHeader::default()
        });
        let pkt = ctx.packet(PacketKind::Tcp, size, payload, seqno, header);
        ctx.send(pkt);
        self.stats.packets_sent += 1;
        self.stats.payload_bytes_sent += u64::from(payload);
        if seqno > self.maxseq {
            self.maxseq = seqno;
            if !is_syn {
                self.stats.new_data_packets += 1;
            }
            if !self.rtt_active {
                self.rtt_active = true;
                if seqno > self.rtt_seq {
                    self.rtt_seq = seqno;
                }
            }
        } else {
            self.stats.retransmissions += 1;
        }
        if self.rtx_timer.is_none() || force {
            self.set_rtx_timer(now);
        }
    }

    /// `send_much()`: retransmissions first, then new data, while in flight is below the
    /// window (or the draining allowance).
    fn send_much(&mut self, ctx: &mut AgentCtx<'_>) {
        self.next_pkts_in_flight = self.next_pkts_in_flight.min(self.packets_in_flight() + 1);
        // Bounded by the window and the source; the guard only protects against a logic error.
        let mut guard = 0u64;
        while self.packets_in_flight() < i64::from(self.snd_cwnd).max(self.next_pkts_in_flight) {
            guard += 1;
            if guard > 1 << 24 {
                break;
            }
            let seq = match self.sb.next_retransmission() {
                Some(s) => {
                    self.sb.mark_retransmitted(s, self.t_seqno);
                    s
                }
                None => {
                    if self.t_seqno >= self.curseq {
                        return;
                    }
                    self.t_seqno += 1;
                    self.t_seqno - 1
                }
            };
            self.output(seq, ctx);
            self.next_pkts_in_flight = self
                .next_pkts_in_flight
                .min((self.packets_in_flight() - 1).max(1));
            if self.t_seqno <= seq {
                self.t_seqno = seq + 1;
            }
        }
    }

    /// `ssthresh()` of the controller: a congestion event.
    fn ca_ssthresh(&mut self) -> u32 {
        let cwnd = self.snd_cwnd;
        let ca = &mut self.ca;
        match self.cfg.profile {
            CubicProfile::Ns2 => {
                ca.epoch_start = 0;
                ca.last_max_cwnd = if cwnd < ca.last_max_cwnd {
                    // Fast convergence: release bandwidth to newer flows.
                    ((u64::from(cwnd) * u64::from(BETA_SCALE + LINUX_BETA))
                        / u64::from(2 * BETA_SCALE)) as u32
                } else {
                    cwnd
                };
                ca.loss_cwnd = cwnd;
                (((u64::from(cwnd) * u64::from(LINUX_BETA)) / u64::from(BETA_SCALE)) as u32).max(2)
            }
            CubicProfile::Rfc9438 => {
                let w = f64::from(cwnd);
                ca.epoch_ns = None;
                // §4.7 fast convergence.
                ca.w_max = if w < ca.w_max {
                    w * (1.0 + RFC_BETA) / 2.0
                } else {
                    w
                };
                ca.cwnd_prior = w;
                ca.loss_cwnd = cwnd;
                ((w * RFC_BETA) as u32).max(2)
            }
        }
    }

    /// `cong_avoid()` of the controller.
    fn ca_cong_avoid(&mut self, in_flight: i64, good: bool, acked: u32, now: Time) {
        if self.cfg.profile == CubicProfile::Ns2 && good {
            self.measure_delay(now);
        }
        if in_flight < i64::from(self.snd_cwnd) {
            return;
        }
        if self.snd_cwnd <= self.snd_ssthresh {
            self.slow_start();
            return;
        }
        let cnt = match self.cfg.profile {
            CubicProfile::Ns2 => {
                self.linux_update(now);
                self.ca.cnt
            }
            CubicProfile::Rfc9438 => self.rfc_update(acked, now),
        };
        let step = match self.cfg.profile {
            CubicProfile::Ns2 => 1,
            CubicProfile::Rfc9438 => acked.max(1),
        };
        if self.snd_cwnd_cnt >= cnt {
            if self.snd_cwnd < self.cfg.window {
                self.snd_cwnd += 1;
            }
            self.snd_cwnd_cnt = 0;
        } else {
            self.snd_cwnd_cnt = self.snd_cwnd_cnt.saturating_add(step);
        }
    }

    /// `tcp_slow_start()` with ABC (L = 1): one packet per ACK that acknowledged a full packet.
    fn slow_start(&mut self) {
        if self.bytes_acked < u64::from(self.cfg.packet_size) {
            return;
        }
        self.bytes_acked = 0;
        self.snd_cwnd_cnt = self.snd_cwnd_cnt.saturating_add(self.snd_cwnd);
        while self.snd_cwnd > 0 && self.snd_cwnd_cnt >= self.snd_cwnd {
            self.snd_cwnd_cnt -= self.snd_cwnd;
            if self.snd_cwnd < self.cfg.window {
                self.snd_cwnd += 1;
            }
        }
    }

    /// Jiffies (ms) as the kernel's 32-bit `tcp_time_stamp`.
    fn jiffies(now: Time) -> u32 {
        (now.as_nanos() / 1_000_000) as u32
    }

    /// `measure_delay()`: the minimum RTT from timestamp echoes, ignoring the first second of
    /// an epoch.
    fn measure_delay(&mut self, now: Time) {
        let tsecr = ((self.ts_peer_echo.as_nanos() + 500_000) / 1_000_000) as u32;
        let stamp = Self::jiffies(now);
        if tsecr == 0 || (stamp.wrapping_sub(self.ca.epoch_start) as i32) < HZ as i32 {
            return;
        }
        let mut delay = stamp.wrapping_sub(tsecr) << 3;
        if delay == 0 {
            delay = 1;
        }
        if self.ca.delay_min == 0 || self.ca.delay_min > delay {
            self.ca.delay_min = delay;
        }
    }

    /// `bictcp_update()`: the kernel's fixed-point CUBIC, C scaled against a 100 ms RTT.
    fn linux_update(&mut self, now: Time) {
        let cwnd = self.snd_cwnd;
        let stamp = Self::jiffies(now);
        let ca = &mut self.ca;
        ca.ack_cnt = ca.ack_cnt.wrapping_add(1);
        if ca.last_cwnd == cwnd && (stamp.wrapping_sub(ca.last_time) as i32) <= (HZ / 32) as i32 {
            return;
        }
        ca.last_cwnd = cwnd;
        ca.last_time = stamp;
        // 2^40 / (bic_scale * 10): (Wmax - cwnd) in packets to K^3 in 2^-30 s^3.
        let cube_factor: u64 = (1u64 << 40) / u64::from(BIC_SCALE * 10);
        let cube_rtt_scale = u64::from(BIC_SCALE * 10);
        if ca.epoch_start == 0 {
            ca.epoch_start = stamp;
            ca.ack_cnt = 1;
            ca.tcp_cwnd = cwnd;
            if ca.last_max_cwnd <= cwnd {
                ca.k = 0;
                ca.origin = cwnd;
            } else {
                ca.k = cubic_root(cube_factor.wrapping_mul(u64::from(ca.last_max_cwnd - cwnd)));
                ca.origin = ca.last_max_cwnd;
            }
        }
        let t = ((stamp
            .wrapping_add(ca.delay_min >> 3)
            .wrapping_sub(ca.epoch_start) as u64)
            << 10)
            / u64::from(HZ);
        let t = t as u32;
        let offs = u64::from(ca.k.abs_diff(t));
        let delta = (cube_rtt_scale
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            >> 40) as u32;
        let target = if t < ca.k {
            ca.origin.wrapping_sub(delta)
        } else {
            ca.origin.wrapping_add(delta)
        };
        ca.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            cwnd.wrapping_mul(100)
        };
        if ca.delay_min > 0 {
            // At most max_increment packets per 100 ms above the plateau.
            let min_cnt =
                cwnd.wrapping_mul(HZ * 8) / (10 * MAX_INCREMENT).wrapping_mul(ca.delay_min).max(1);
            if ca.cnt < min_cnt && t >= ca.k {
                ca.cnt = min_cnt;
            }
        }
        if ca.loss_cwnd == 0 {
            ca.cnt = 50;
        }
        ca.cnt = reno_friendly_cnt(&mut ca.ack_cnt, &mut ca.tcp_cwnd, ca.cnt, cwnd, LINUX_BETA);
        ca.cnt = (ca.cnt.wrapping_shl(ACK_RATIO_SHIFT)) / ca.delayed_ack.max(1);
        if ca.cnt == 0 {
            ca.cnt = 1;
        }
    }

    /// RFC 9438 §4.2–4.4: ACKs per one-packet increase towards the cubic target one RTT
    /// ahead (at most 1.5 cwnd), or towards the Reno-friendly estimate when that is larger.
    fn rfc_update(&mut self, acked: u32, now: Time) -> u32 {
        let cwnd = f64::from(self.snd_cwnd);
        let rtt = f64::from(self.rtt.srtt.max(0)) / 8.0 * self.rtt.tick as f64 * 1e-9;
        let ca = &mut self.ca;
        let start = match ca.epoch_ns {
            Some(s) => s,
            None => {
                let s = now.as_nanos();
                ca.epoch_ns = Some(s);
                if ca.w_max > cwnd {
                    ca.k_s = ((ca.w_max - cwnd) / RFC_C).cbrt();
                    ca.origin_f = ca.w_max;
                } else {
                    ca.k_s = 0.0;
                    ca.origin_f = cwnd;
                }
                ca.w_est = cwnd;
                s
            }
        };
        let t = now.as_nanos().saturating_sub(start) as f64 * 1e-9;
        let target = (ca.origin_f + RFC_C * (t + rtt - ca.k_s).powi(3)).clamp(cwnd, 1.5 * cwnd);
        let alpha = if ca.w_est >= ca.cwnd_prior && ca.cwnd_prior > 0.0 {
            1.0
        } else {
            3.0 * (1.0 - RFC_BETA) / (1.0 + RFC_BETA)
        };
        ca.w_est += alpha * f64::from(acked.max(1)) / cwnd;
        let cubic_wc = ca.origin_f + RFC_C * (t - ca.k_s).powi(3);
        // §4.3: in the Reno-friendly region cwnd follows W_est; otherwise the cubic target.
        let goal = if cubic_wc < ca.w_est {
            ca.w_est
        } else {
            target
        };
        if goal > cwnd {
            ((cwnd / (goal - cwnd)) as u32).max(1)
        } else {
            (100.0 * cwnd) as u32
        }
    }

    /// `bictcp_acked()`: track packets per ACK (ns2 profile), in Open only.
    fn ca_pkts_acked(&mut self, cnt: u32) {
        if self.cfg.profile == CubicProfile::Ns2 && cnt > 0 && self.state == CaState::Open {
            let ca = &mut self.ca;
            ca.delayed_ack = ca
                .delayed_ack
                .wrapping_sub(ca.delayed_ack >> ACK_RATIO_SHIFT)
                .wrapping_add(cnt);
        }
    }

    fn set_state(&mut self, s: CaState) {
        if s == CaState::Loss {
            match self.cfg.profile {
                CubicProfile::Ns2 => self.ca.reset(),
                CubicProfile::Rfc9438 => {
                    // §4.8: the first congestion avoidance after a timeout starts at K = 0
                    // from the window it then has.
                    self.ca.epoch_ns = None;
                    self.ca.w_max = 0.0;
                }
            }
        }
        self.state = s;
    }

    /// `tcp_fastretrans_alert()`: leave recovery, or enter it on a newly lost packet.
    fn fastretrans_alert(&mut self, lost: bool) {
        if self.state != CaState::Open && self.highest_ack >= self.recover {
            self.sb.clear();
            if self.snd_cwnd < self.snd_ssthresh {
                self.snd_cwnd = self.snd_ssthresh;
                let cap = self.packets_in_flight() + i64::from(self.cfg.max_burst_after_recovery);
                self.snd_cwnd = i64::from(self.snd_cwnd).min(cap).max(0) as u32;
            }
            self.set_state(CaState::Open);
            self.next_pkts_in_flight = 0;
            return;
        }
        if self.state != CaState::Recovery && lost {
            self.recover = self.maxseq;
            self.next_pkts_in_flight = i64::from(self.snd_cwnd);
            self.snd_ssthresh = self.ca_ssthresh();
            self.snd_cwnd_cnt = 0;
            self.bytes_acked = 0;
            self.snd_cwnd = self.snd_ssthresh;
            self.stats.cwnd_cuts += 1;
            self.stats.fast_retransmits += 1;
            self.set_state(CaState::Recovery);
        }
    }

    fn on_rtx_timeout(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        let idle = self.highest_ack == self.maxseq;
        if idle {
            // Nothing outstanding (restart_bugfix_): back to the initial window.
            self.snd_cwnd = self.cfg.window_init.max(1);
            self.stats.cwnd_cuts += 1;
        } else {
            self.snd_ssthresh = self.ca_ssthresh();
            self.snd_cwnd = 1;
            self.snd_cwnd_cnt = 0;
            self.bytes_acked = 0;
            self.stats.cwnd_cuts += 1;
            self.recover = self.maxseq;
            self.set_state(CaState::Loss);
            self.sb.mark_loss(self.highest_ack + 1, self.t_seqno);
            self.stats.timeouts += 1;
        }
        if !idle {
            self.rtt.back_off(&self.cfg);
            self.stats.max_backoff = self.stats.max_backoff.max(self.rtt.backoff);
        }
        self.set_rtx_timer(now);
        self.rtt_active = false;
        self.next_pkts_in_flight = 0;
        self.bytes_acked = 0;
        self.send_much(ctx);
    }

    fn on_ack(&mut self, hdr: TcpHeader, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        self.stats.acks_received += 1;
        let prior_snd_una = self.highest_ack + 1;
        // A real sink never ACKs beyond what was sent; the bound keeps arithmetic safe.
        let ack = hdr.seqno.clamp(-1, 2 * TCP_MAXSEQ) + 1;
        if ack > self.t_seqno || ack < prior_snd_una {
            return;
        }
        let prior_in_flight = self.packets_in_flight();
        let data_acked = ack > prior_snd_una;
        let mut unsure_ts = false;
        if data_acked {
            self.bytes_acked = self
                .bytes_acked
                .saturating_add((ack - prior_snd_una) as u64 * u64::from(self.cfg.packet_size));
            self.highest_ack = ack - 1;
            self.maxseq = self.maxseq.max(self.highest_ack);
            if self.t_seqno < ack {
                self.t_seqno = ack;
            }
        } else {
            unsure_ts = true;
        }
        let mut sacked = false;
        let mut lost = false;
        if !hdr.sack.is_empty() || !self.sb.is_empty() {
            // Only blocks within what was sent can describe real packets. On the stack: an
            // ACK carries at most MAX_SACK_BLOCKS.
            let mut valid = [(0i64, 0i64); MAX_SACK_BLOCKS];
            let mut n = 0;
            for (l, r) in hdr.sack.iter() {
                if l < r && l > self.highest_ack && r <= self.t_seqno {
                    valid[n] = (l, r);
                    n += 1;
                }
            }
            let f = self.sb.update(
                self.highest_ack,
                &valid[..n],
                i64::from(self.cfg.num_dupacks),
            );
            sacked = f.sacked;
            lost = f.lost;
            unsure_ts |= f.unsure_ts;
        }
        let _ = unsure_ts;
        // time_processing(): every ACK echoes a timestamp.
        self.ts_peer = hdr.ts;
        self.ts_peer_echo = hdr.ts_echo;
        let tao = now.saturating_since(hdr.ts_echo);
        let tick = self.rtt.tick;
        let t_rtt = ((ns(tao).saturating_add(tick / 2)) / tick).min(i32::MAX as u64) as i32;
        self.rtt.update(t_rtt);
        self.rtt.backoff = 1;
        if self.rtt_active && hdr.seqno >= self.rtt_seq {
            self.rtt_active = false;
        }
        // The timer restarts on every ACK (t_seqno_ > highest_ack_ always holds).
        self.set_rtx_timer(now);

        if !self.initialized {
            self.ca.reset();
            self.initialized = true;
        }
        if data_acked {
            self.ca_pkts_acked((ack - prior_snd_una).min(i64::from(u32::MAX)) as u32);
        }
        let dubious = !data_acked || sacked || self.state != CaState::Open;
        let acked = (ack - prior_snd_una).clamp(0, i64::from(u32::MAX)) as u32;
        if dubious {
            if data_acked && self.state != CaState::Recovery {
                self.ca_cong_avoid(prior_in_flight, false, acked, now);
            }
            self.fastretrans_alert(lost);
        } else if data_acked {
            self.ca_cong_avoid(prior_in_flight, true, acked, now);
        }
        self.send_much(ctx);
    }
}

impl Agent for CubicSender {
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        if self.curseq <= TCP_MAXSEQ {
            self.curseq = TCP_MAXSEQ;
        }
        self.send_much(ctx);
        ctx.sync_timer(RTX, self.rtx_timer);
    }

    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
        self.curseq = self.maxseq;
        self.send_much(ctx);
        ctx.sync_timer(RTX, self.rtx_timer);
    }

    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        if let (PacketKind::Ack, Header::Tcp(h)) = (&pkt.kind, &pkt.header) {
            self.on_ack(*h, ctx);
            ctx.sync_timer(RTX, self.rtx_timer);
        }
    }

    fn on_timer(&mut self, _timer: TimerId, ctx: &mut AgentCtx<'_>) {
        self.rtx_timer = None;
        self.on_rtx_timeout(ctx);
        ctx.sync_timer(RTX, self.rtx_timer);
    }

    fn app_counters(&self) -> AppCounters {
        AppCounters {
            generated_packets: self.stats.new_data_packets,
            generated_bytes: self.stats.new_data_packets * u64::from(self.cfg.packet_size),
        }
    }

    /// cwnd as NS-2's `cwnd_` (packets), ssthresh (packets), srtt and the RTO now (seconds).
    fn sample_names(&self) -> &'static [&'static str] {
        &["cwnd", "ssthresh", "srtt", "rto"]
    }

    fn sample(&self, out: &mut Vec<f64>) {
        out.push(self.cwnd());
        out.push(f64::from(self.snd_ssthresh));
        out.push(f64::from(self.rtt.srtt.max(0)) / 8.0 * self.rtt.tick as f64 * 1e-9);
        out.push(self.rtt.timeout(&self.cfg) as f64 * 1e-9);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{ack, seqs, Harness};
    use super::*;
    use crate::packet::{Direction, SackBlocks};

    fn sender(profile: CubicProfile, window: u32) -> Harness<CubicSender> {
        let cfg = CubicConfig {
            window,
            ..CubicConfig::ns2(profile)
        };
        Harness::new(CubicSender::new(cfg), Direction::Forward)
    }

    fn sack(cum: i64, blocks: &[(i64, i64)], echo_ms: f64) -> Packet {
        let mut p = ack(cum);
        let mut sack = SackBlocks::default();
        for &(l, r) in blocks {
            sack.push(l, r);
        }
        p.header = Header::Tcp(TcpHeader {
            seqno: cum,
            ts_echo: Time::from_secs_f64(echo_ms / 1000.0),
            sack,
            ..TcpHeader::default()
        });
        p
    }

    #[test]
    fn kernel_cube_root_is_within_a_percent() {
        for x in [64u64, 1000, 12_345, 1 << 30, 987_654_321_012, 1 << 50] {
            let want = (x as f64).cbrt();
            let got = f64::from(cubic_root(x));
            assert!(
                (got - want).abs() <= 0.01 * want + 1.0,
                "{x}: {got} vs {want}"
            );
        }
        assert_eq!(cubic_root(0), 0);
    }

    #[test]
    fn syn_goes_with_the_initial_window_and_timestamps_add_ten_bytes() {
        let mut h = sender(CubicProfile::Ns2, 100);
        let first = h.at_ms(0.0).start();
        assert_eq!(seqs(&first), vec![0, 1], "delay_growth_ is false");
        assert_eq!(first[0].size, 40);
        assert_eq!(first[1].size, 1050);
        // The SYN's ACK: slow start adds one packet (ABC): two more go out.
        let next = h.at_ms(50.0).deliver(sack(0, &[], 0.0));
        assert_eq!(h.agent.snd_cwnd(), 3);
        assert_eq!(seqs(&next), vec![2, 3]);
    }

    /// Open a window of 20 in slow start, then SACKs for 6.. after a hole at 5.
    fn with_hole(profile: CubicProfile) -> Harness<CubicSender> {
        let mut h = sender(profile, 1000);
        h.at_ms(0.0).start();
        let mut a = 0;
        while h.agent.snd_cwnd() < 20 {
            h.at_ms(50.0 + a as f64).deliver(sack(a, &[], a as f64));
            a += 1;
        }
        let cum = h.agent.highest_ack();
        let hole = cum + 1;
        // Leave congestion avoidance out of it: the cut is what is checked.
        h.agent.snd_ssthresh = 10;
        let before = h.agent.snd_cwnd();
        for k in 1..=3 {
            h.at_ms(200.0 + k as f64)
                .deliver(sack(cum, &[(hole + 1, hole + 1 + k)], 40.0));
            assert_eq!(h.agent.ca_state(), CaState::Open, "{k} SACKed: not yet");
        }
        let sent = h
            .at_ms(204.0)
            .deliver(sack(cum, &[(hole + 1, hole + 5)], 40.0));
        assert_eq!(h.agent.ca_state(), CaState::Recovery);
        assert_eq!(
            seqs(&sent).first(),
            Some(&hole),
            "the hole is retransmitted first"
        );
        assert_eq!(h.agent.stats().fast_retransmits, 1);
        assert!(h.agent.snd_cwnd() < before, "cut at once");
        h
    }

    #[test]
    fn ns2_profile_cuts_to_819_over_1024() {
        let h = with_hole(CubicProfile::Ns2);
        let w = h.agent.ca.loss_cwnd;
        assert_eq!(h.agent.ssthresh(), (w * 819 / 1024).max(2));
        assert_eq!(h.agent.snd_cwnd(), h.agent.ssthresh());
    }

    #[test]
    fn rfc_profile_cuts_to_seven_tenths() {
        let h = with_hole(CubicProfile::Rfc9438);
        let w = h.agent.ca.loss_cwnd;
        assert_eq!(h.agent.ssthresh(), ((f64::from(w) * 0.7) as u32).max(2));
        assert_eq!(h.agent.ca.w_max, f64::from(w));
    }

    #[test]
    fn fast_convergence_lowers_the_plateau_below_the_last_one() {
        for profile in [CubicProfile::Ns2, CubicProfile::Rfc9438] {
            let mut s = CubicSender::new(CubicConfig::ns2(profile));
            s.snd_cwnd = 100;
            s.ca_ssthresh();
            s.snd_cwnd = 80;
            s.ca_ssthresh();
            match profile {
                CubicProfile::Ns2 => assert_eq!(s.ca.last_max_cwnd, 80 * 1843 / 2048),
                CubicProfile::Rfc9438 => assert!((s.ca.w_max - 68.0).abs() < 1e-9),
            }
        }
    }

    #[test]
    fn rfc_profile_follows_the_cubic_curve_and_the_reno_estimate() {
        let mut s = CubicSender::new(CubicConfig::ns2(CubicProfile::Rfc9438));
        s.snd_cwnd = 100;
        s.snd_ssthresh = s.ca_ssthresh();
        s.snd_cwnd = s.snd_ssthresh;
        assert_eq!(s.snd_cwnd, 70);
        // srtt 0 (no sample): the target is W_cubic(t) itself.
        let t0 = Time::from_secs_f64(10.0);
        let slow = s.rfc_update(1, t0);
        let k = (30.0f64 / 0.4).cbrt();
        assert!((s.ca.k_s - k).abs() < 1e-12);
        // At the epoch start the curve is at cwnd: growth comes from the Reno estimate only
        // (alpha 3(1-0.7)/(1+0.7) per window), slowly.
        assert!(slow > 70, "{slow}");
        // At t = K the curve is back at W_max = 100: cnt = cwnd / (100 - cwnd) = 2.
        let at_k = s.rfc_update(1, t0 + Duration::from_secs_f64(k));
        assert_eq!(at_k, 2);
        // Far beyond, the target is capped at 1.5 cwnd: cnt = cwnd / (0.5 cwnd) = 2, never 1.
        assert_eq!(s.rfc_update(1, t0 + Duration::from_secs(60)), 2);
    }

    #[test]
    fn recovery_ends_when_the_ack_passes_the_recovery_point() {
        let mut h = with_hole(CubicProfile::Ns2);
        let top = h.agent.maxseq();
        h.at_ms(300.0).deliver(sack(top, &[], 250.0));
        assert_eq!(h.agent.ca_state(), CaState::Open);
        assert_eq!(h.agent.packets_in_flight(), h.agent.t_seqno - top - 1);
    }

    #[test]
    fn timeout_marks_everything_lost_and_restarts_from_one() {
        let mut h = with_hole(CubicProfile::Ns2);
        let una = h.agent.highest_ack() + 1;
        let resent = h.wake_next();
        assert_eq!(h.agent.ca_state(), CaState::Loss);
        assert_eq!(h.agent.snd_cwnd(), 1);
        assert_eq!(h.agent.stats().timeouts, 1);
        assert_eq!(seqs(&resent), vec![una], "one packet: the oldest unSACKed");
        // The controller starts over: growth of one per 50 ACKs until the next loss.
        assert_eq!(h.agent.ca.loss_cwnd, 0);
    }

    proptest::proptest! {
        /// Arbitrary (even bogus) ACKs, SACK blocks and wake-ups never panic and keep the
        /// window positive and the accounting consistent.
        #[test]
        fn arbitrary_acks_keep_invariants(
            rfc in proptest::bool::ANY,
            window in 1u32..64,
            events in proptest::collection::vec(
                (0u8..3, -3i64..40, 0i64..40, 0i64..8, 0u64..300), 1..200),
        ) {
            let profile = if rfc { CubicProfile::Rfc9438 } else { CubicProfile::Ns2 };
            let mut h = sender(profile, window);
            h.at_ms(0.0).start();
            let mut ms = 0.0;
            for (kind, a, l, len, dt) in events {
                ms += dt as f64;
                h.at_ms(ms);
                match kind {
                    0 => drop(h.wake_next()),
                    1 => drop(h.deliver(sack(i64::MAX - 40 - a, &[(l, l + len)], ms))),
                    _ => {
                        let cum = (h.agent.highest_ack() + a % 6).min(h.agent.maxseq());
                        let l = cum + 1 + l % 10;
                        drop(h.deliver(sack(cum, &[(l, l + len)], ms / 2.0)));
                    }
                }
                proptest::prop_assert!(h.agent.snd_cwnd() >= 1);
                proptest::prop_assert!(h.agent.packets_in_flight() >= 0);
                ms = h.now.as_secs_f64() * 1000.0;
            }
        }
    }
}
