//! NS-2.35's one-way TCP senders: `Agent/TCP` (Tahoe), `Agent/TCP/Reno`,
//! `Agent/TCP/Newreno` and `Agent/TCP/Sack1`, driven by an FTP-like infinite source.
//!
//! One state machine ([`TcpSender`]) holds what NS-2's `TcpAgent` holds: the send sequence
//! (`t_seqno_`, `maxseq_`, `highest_ack_`, `last_ack_`), the congestion window and threshold, the
//! duplicate-ACK count, the tick-based RTT estimator ([`rtt`]) and the retransmission timer. The
//! variants differ only in their loss-recovery policy, one module each:
//! - [`tahoe`]: fast retransmit on the third duplicate ACK, then slow start from one packet
//!   (go-back-N);
//! - [`reno`]: fast retransmit, then fast recovery with window inflation by `dupwnd_`;
//! - [`newreno`]: Reno whose partial ACKs retransmit the next hole and stay in recovery
//!   (RFC 2582/6582), with NS-2's partial window deflation;
//! - [`sack1`]: a scoreboard of the sink's SACK blocks and a `pipe_`-clocked fast recovery
//!   that repairs every reported hole (NS-2's `Sack1TcpAgent`; pair it with a `Sack1` sink).
//!
//! Sequence numbers count packets, as in NS-2. With `syn_` (the default) packet 0 is a 40-byte
//! SYN sent with a one-packet window; data starts at 1 and every data packet is
//! `packetSize_ + tcpip_base_hdr_size_` bytes on the wire. Defaults are NS-2.35's, checked on
//! instances (listed in `docs/simulator.md`, "NS-2.35 behaviour netsim follows").
//!
//! NS-2 resets every agent when `$ns run` starts: `ssthresh_` becomes `window_` as the script
//! set it, and `boot_time_` is drawn from NS-2's default RNG (see [`TcpConfig::boot_time`]).
//!
//! ECN (`ecn_`, RFC 3168 as NS-2.35 does it; off by default): data packets are ECT, the SYN
//! carries ECE instead (the request), and an ACK carrying ECE makes the sender halve cwnd and
//! ssthresh at most once per window of data (`TcpAgent::ecn`: only for an ACK beyond
//! `recover_`, or after a timeout), without retransmitting. Every window cut sets
//! `cong_action_`, and the next packet sent carries CWR (`SetCWRonRetransmit_`, NS-2's
//! default, so a fast retransmission can carry it). Once the sink has echoed ECE on a new ACK
//! (`ect_`: the SYN's answer), ACKs carrying ECE do not open the window, and a duplicate ACK
//! that would fast-retransmit within the window an ECN response already cut retransmits
//! without a second cut. `docs/ns2-reference.md` §1b lists the rules.
//!
//! Not modelled (off in NS-2's defaults): the timestamp option (`timestamps_`), F-RTO,
//! Quick-Start, `newreno_changes_ > 0`, `windowOption_` 2–8, `max_ssthresh_` and `old_ecn_`.

pub mod cubic;
pub mod linux;
pub mod newreno;
pub mod reno;
pub mod rtt;
pub mod sack1;
pub mod scoreboard;
pub mod tahoe;

use std::time::Duration;

use crate::agent::{Agent, AgentCtx, AppCounters, TimerId};
use crate::packet::{Header, Packet, PacketKind, TcpHeader};
use crate::Time;
use rand::Rng;

use rtt::{RttEstimator, RttParams};

/// The retransmission timer (`rtx_timer_`).
const RTX: TimerId = TimerId(0);
/// The delayed-send timer (`delsnd_timer_`, used with `overhead_`).
const DELSND: TimerId = TimerId(1);

/// NS-2's `TCP_MAXSEQ`: the sequence an infinite (FTP) source advances the application limit to.
pub const TCP_MAXSEQ: i64 = 1 << 30;

/// Which member of NS-2's one-way TCP family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TcpVariant {
    /// `Agent/TCP`: NS-2's default TCP, which papers often call plain "TCP".
    Tahoe,
    /// `Agent/TCP/Reno`.
    Reno,
    /// `Agent/TCP/Newreno`.
    NewReno,
    /// `Agent/TCP/Sack1` (needs SACK blocks: an `Agent/TCPSink/Sack1` sink).
    Sack,
}

/// How the congestion window grows above `ssthresh_` (`windowOption_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowOption {
    /// `windowOption_ 0`: one packet after `cwnd_` ACKs (an ACK counter).
    Counted,
    /// `windowOption_ 1` (default): `increase_num_ / cwnd_` per ACK.
    Standard,
}

/// The initial window rule (`windowInitOption_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowInitOption {
    /// `windowInitOption_ 1` (default): `windowInit_` packets.
    Static,
    /// `windowInitOption_ 2`: RFC 3390's 4/3/2 packets by `packetSize_` (≤ 1095, < 2190, else).
    Rfc3390,
}

/// Parameters of a TCP sender, named after NS-2's bound variables. [`TcpConfig::ns2`] gives
/// NS-2.35's defaults for a variant.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// The agent class.
    pub variant: TcpVariant,
    /// `window_`: the receiver's advertised window cap, packets. Also the initial `ssthresh_`
    /// (NS-2 resets agents when the simulation starts, after the script set `window_`).
    pub window: u32,
    /// `windowInit_`: initial congestion window, packets.
    pub window_init: u32,
    /// `windowInitOption_`.
    pub window_init_option: WindowInitOption,
    /// `windowOption_`.
    pub window_option: WindowOption,
    /// `packetSize_`: payload bytes per data packet.
    pub packet_size: u32,
    /// `tcpip_base_hdr_size_`: header bytes added to every data packet; also the SYN's size.
    pub header_size: u32,
    /// `syn_`: model a SYN exchange (packet 0 is a header-only SYN).
    pub syn: bool,
    /// `delay_growth_`: with `syn_`, start with one packet (the SYN) and set the initial window
    /// when it is acknowledged.
    pub delay_growth: bool,
    /// `tcpTick_`: timer granularity for RTT samples and the RTO.
    pub tcp_tick: Duration,
    /// `minrto_`.
    pub min_rto: Duration,
    /// `maxrto_`.
    pub max_rto: Duration,
    /// `rtxcur_init_`: RTO before the first RTT sample.
    pub rtxcur_init: Duration,
    /// `srtt_init_` (NS-2 binds it as an integer, whole seconds).
    pub srtt_init: Duration,
    /// `rttvar_init_` (NS-2 binds it as an integer, whole seconds).
    pub rttvar_init: Duration,
    /// `T_SRTT_BITS`.
    pub srtt_bits: u32,
    /// `T_RTTVAR_BITS`.
    pub rttvar_bits: u32,
    /// `rttvar_exp_`.
    pub rttvar_exp: u32,
    /// `rfc2988_`: apply `minrto_` before the backoff.
    pub rfc2988: bool,
    /// `timerfix_`: restart the retransmission timer after, not before, the RTT update.
    pub timerfix: bool,
    /// `boot_time_`: where between clock ticks the agent's clock started (in `[0, tcpTick_)`).
    /// NS-2 draws it from its default RNG when the simulation starts; `None` draws it from the
    /// agent's own stream.
    pub boot_time: Option<Duration>,
    /// `maxburst_`: most packets sent back to back per call (0: unlimited).
    pub max_burst: u32,
    /// `aggressive_maxburst_`: try to send even on an old ACK.
    pub aggressive_maxburst: bool,
    /// `maxcwnd_`: congestion window cap (0: none).
    pub max_cwnd: u32,
    /// `numdupacks_`: duplicate ACKs that trigger fast retransmit.
    pub num_dupacks: u32,
    /// `noFastRetrans_`.
    pub no_fast_retrans: bool,
    /// `decrease_num_`: multiplicative decrease after the first.
    pub decrease_num: f64,
    /// `increase_num_`: additive increase per RTT in congestion avoidance.
    pub increase_num: f64,
    /// `precisionReduce_`: halve the window without rounding it down first.
    pub precision_reduce: bool,
    /// `singledup_`: send a new packet on each of the first `numdupacks_ - 1` duplicate ACKs if
    /// the window allows (limited transmit).
    pub singledup: bool,
    /// `bugFix_`: at most one fast retransmit per window of data.
    pub bug_fix: bool,
    /// `bugfix_ss_`: allow fast retransmit when the first data packet is lost; a lost SYN drops
    /// the initial window to one packet.
    pub bugfix_ss: bool,
    /// `slow_start_restart_`: on a timeout with nothing outstanding, still close the window.
    pub slow_start_restart: bool,
    /// `restart_bugfix_`: on a timeout with nothing outstanding, keep `ssthresh_` and do not back
    /// off the timer.
    pub restart_bugfix: bool,
    /// `exitFastRetrans_` (Reno, NewReno): inflate the window only in fast recovery.
    pub exit_fast_retrans: bool,
    /// `overhead_`: if non-zero, each send is delayed by a uniform random time in
    /// `[0, overhead_)` (NS-2's guard against phase effects).
    pub overhead: Duration,
    /// `partial_window_deflation_` (NewReno).
    pub partial_window_deflation: bool,
    /// `newreno_changes1_` (NewReno): restart the timer on the first partial ACK only.
    pub newreno_changes1: bool,
    /// `exit_recovery_fix_` (NewReno): on leaving recovery set `cwnd_` to
    /// min(`ssthresh_`, outstanding).
    pub exit_recovery_fix: bool,
    /// `ecn_`: ECN-capable (RFC 3168): data packets carry ECT and the sender answers ECE
    /// (see the [module docs](self)). Tahoe, Reno, NewReno and SACK; not CUBIC.
    pub ecn: bool,
}

impl TcpConfig {
    /// NS-2.35's defaults for `variant` (verified on instances; `docs/simulator.md`).
    pub fn ns2(variant: TcpVariant) -> Self {
        TcpConfig {
            variant,
            window: 20,
            window_init: 2,
            window_init_option: WindowInitOption::Static,
            window_option: WindowOption::Standard,
            packet_size: 1000,
            header_size: 40,
            syn: true,
            delay_growth: true,
            tcp_tick: Duration::from_millis(10),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            rtxcur_init: Duration::from_secs(3),
            srtt_init: Duration::ZERO,
            rttvar_init: Duration::from_secs(12),
            srtt_bits: 3,
            rttvar_bits: 2,
            rttvar_exp: 2,
            rfc2988: true,
            timerfix: true,
            boot_time: None,
            max_burst: 0,
            aggressive_maxburst: true,
            max_cwnd: 0,
            num_dupacks: 3,
            no_fast_retrans: false,
            decrease_num: 0.5,
            increase_num: 1.0,
            precision_reduce: true,
            singledup: true,
            bug_fix: true,
            bugfix_ss: true,
            slow_start_restart: true,
            restart_bugfix: true,
            exit_fast_retrans: true,
            overhead: Duration::ZERO,
            partial_window_deflation: true,
            newreno_changes1: true,
            exit_recovery_fix: false,
            ecn: false,
        }
    }

    fn rtt_params(&self) -> RttParams {
        let tick = ns(self.tcp_tick).max(1);
        // NS-2: int(srtt_init_ / tcp_tick_) with srtt_init_ an integer number of seconds.
        let whole_ticks = |d: Duration| {
            (d.as_secs().saturating_mul(1_000_000_000) / tick).min(i32::MAX as u64) as i32
        };
        RttParams {
            tick,
            min_rto: ns(self.min_rto),
            max_rto: ns(self.max_rto),
            rtxcur_init: ns(self.rtxcur_init),
            srtt_init_ticks: whole_ticks(self.srtt_init),
            rttvar_init_ticks: whole_ticks(self.rttvar_init),
            srtt_bits: self.srtt_bits.min(16),
            rttvar_bits: self.rttvar_bits.min(16),
            rttvar_exp: self.rttvar_exp.min(16),
            rfc2988: self.rfc2988,
        }
    }
}

impl Default for TcpConfig {
    /// NS-2's default `Agent/TCP` (Tahoe).
    fn default() -> Self {
        TcpConfig::ns2(TcpVariant::Tahoe)
    }
}

/// A duration in ns, saturating.
fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Why the window was last cut (`last_cwnd_action_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CwndAction {
    /// No cut yet.
    None,
    /// Fast retransmit (`CWND_ACTION_DUPACK`).
    DupAck,
    /// Retransmission timeout (`CWND_ACTION_TIMEOUT`).
    Timeout,
    /// Fast recovery ended (`CWND_ACTION_EXITED`).
    Exited,
    /// ECN response (`CWND_ACTION_ECN`).
    Ecn,
}

/// `slowdown()` flags: which of ssthresh and cwnd to cut, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slowdown {
    /// `CLOSE_SSTHRESH_HALF`.
    pub ssthresh_half: bool,
    /// The new cwnd.
    pub cwnd: CwndCut,
}

/// How `slowdown()` sets cwnd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CwndCut {
    /// `CLOSE_CWND_HALF`.
    Half,
    /// `CLOSE_CWND_RESTART`: `wnd_restart_` (1).
    Restart,
    /// `CLOSE_CWND_ONE`.
    One,
}

/// Counters NS-2 keeps on the agent (`ndatapack_`, `nrexmitpack_`, `nrexmit_`, …).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSenderStats {
    /// Packets sent, SYNs and retransmissions included (`ndatapack_`).
    pub packets_sent: u64,
    /// Payload bytes sent, retransmissions included (`ndatabytes_`).
    pub payload_bytes_sent: u64,
    /// Data packets sent for the first time (what the application handed to TCP).
    pub new_data_packets: u64,
    /// Retransmitted packets (`nrexmitpack_`).
    pub retransmissions: u64,
    /// Retransmission timeouts that cut the window (`nrexmit_`).
    pub timeouts: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// ACKs received (`nackpack_`).
    pub acks_received: u64,
    /// Window cuts (`ncwndcuts_`).
    pub cwnd_cuts: u64,
    /// Largest RTO backoff multiplier reached (`backoff_`; 1 if no timeout ever backed off).
    pub max_backoff: u64,
    /// Window cuts in answer to ECE (`necnresponses_`).
    pub ecn_responses: u64,
}

/// An NS-2 one-way TCP sender with an infinite (FTP) source. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct TcpSender {
    pub(crate) cfg: TcpConfig,
    pub(crate) rtt: RttEstimator,
    /// Next sequence number to send (`t_seqno_`).
    pub(crate) t_seqno: i64,
    /// One past the last sequence the application produced (`curseq_`).
    pub(crate) curseq: i64,
    /// Highest cumulative ACK, advanced by partial ACKs too (`highest_ack_`).
    pub(crate) highest_ack: i64,
    /// Last cumulative ACK (`last_ack_`).
    pub(crate) last_ack: i64,
    /// `highest_ack_` before the last new ACK (`prev_highest_ack_`).
    pub(crate) prev_highest_ack: i64,
    /// Highest sequence sent (`maxseq_`).
    pub(crate) maxseq: i64,
    /// `cwnd_`, packets.
    pub(crate) cwnd: f64,
    /// `ssthresh_`, packets.
    pub(crate) ssthresh: i64,
    /// `dupacks_`.
    pub(crate) dupacks: i64,
    /// Fast-recovery window inflation (`dupwnd_`, Reno and NewReno).
    pub(crate) dupwnd: i64,
    /// Highest sequence sent when loss recovery began (`recover_`).
    pub(crate) recover: i64,
    pub(crate) last_cwnd_action: CwndAction,
    /// ACK counter for [`WindowOption::Counted`] (`count_`).
    pub(crate) count: i64,
    /// `first_decrease_`.
    pub(crate) first_decrease: bool,
    /// An RTT sample is being timed (`rtt_active_`), on `rtt_seq_` sent at `rtt_ts_`.
    pub(crate) rtt_active: bool,
    pub(crate) rtt_seq: i64,
    pub(crate) rtt_ts: Time,
    /// NewReno's `firstpartial_`.
    pub(crate) first_partial: bool,
    /// Initial window and its option: a lost SYN changes them (`bugfix_ss_`).
    pub(crate) wnd_init: u32,
    pub(crate) wnd_init_option: WindowInitOption,
    /// `boot_time_` in ns, drawn on start when not configured.
    pub(crate) boot_time: Option<u64>,
    /// Timestamp of the last ACK, echoed in data (`ts_peer_`).
    pub(crate) ts_peer: Time,
    /// Retransmission timer deadline.
    pub(crate) rtx_timer: Option<Time>,
    /// Delayed-send timer deadline (`overhead_`).
    pub(crate) delsnd_timer: Option<Time>,
    /// `Sack1TcpAgent`'s scoreboard and recovery state (unused by the other variants).
    pub(crate) sack1: sack1::Sack1State,
    /// A window cut not yet announced with CWR (`cong_action_`).
    pub(crate) cong_action: bool,
    /// The sink has echoed ECE on a new ACK (`ect_`): from then on ECE holds back growth.
    pub(crate) ect: bool,
    /// An ECN response found cwnd at one packet (`ecn_backoff_`): the next backs off the timer.
    pub(crate) ecn_backoff: bool,
    /// The ACK being processed carries ECE.
    pub(crate) ack_ece: bool,
    pub(crate) stats: TcpSenderStats,
}

impl TcpSender {
    /// A sender with configuration `cfg`, in NS-2's reset state.
    pub fn new(cfg: TcpConfig) -> Self {
        let rtt = RttEstimator::new(cfg.rtt_params());
        let boot_time = cfg.boot_time.map(|d| ns(d) % ns(cfg.tcp_tick).max(1));
        let mut s = TcpSender {
            rtt,
            t_seqno: 0,
            curseq: 0,
            highest_ack: -1,
            last_ack: -1,
            prev_highest_ack: -1,
            maxseq: -1,
            cwnd: 0.0,
            ssthresh: i64::from(cfg.window),
            dupacks: 0,
            dupwnd: 0,
            recover: 0,
            last_cwnd_action: CwndAction::None,
            count: 0,
            first_decrease: true,
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: Time::ZERO,
            first_partial: false,
            wnd_init: cfg.window_init,
            wnd_init_option: cfg.window_init_option,
            boot_time,
            ts_peer: Time::ZERO,
            rtx_timer: None,
            delsnd_timer: None,
            sack1: sack1::Sack1State::default(),
            cong_action: false,
            ect: false,
            ecn_backoff: false,
            ack_ece: false,
            stats: TcpSenderStats {
                max_backoff: 1,
                ..TcpSenderStats::default()
            },
            cfg,
        };
        // set_initial_window(): the SYN goes alone when growth is delayed.
        s.cwnd = if s.cfg.syn && s.cfg.delay_growth {
            1.0
        } else {
            s.initial_window()
        };
        s
    }

    /// The configuration.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// Draw `boot_time_` on the first start, when not configured.
    fn boot(&mut self, ctx: &mut AgentCtx<'_>) {
        if self.boot_time.is_none() {
            let tick = ns(self.cfg.tcp_tick).max(1);
            self.boot_time = Some(ctx.rng().gen_range(0..tick));
        }
    }

    /// A new transfer of `packets` packets on an idle sender (an on/off source's next file,
    /// [`crate::agents::OnOffTcp`]): the application limit moves up by `packets` and the
    /// window restarts as a new connection's would (RFC 5681 §4.1's restart after idle, with
    /// the initial `ssthresh_`), keeping the RTT estimate.
    pub(crate) fn begin_transfer(&mut self, packets: u64, ctx: &mut AgentCtx<'_>) {
        self.boot(ctx);
        self.curseq = self
            .curseq
            .saturating_add(i64::try_from(packets).unwrap_or(i64::MAX))
            .min(TCP_MAXSEQ);
        self.cwnd = self.initial_window();
        self.ssthresh = i64::from(self.cfg.window);
        self.dupacks = 0;
        self.send_much(false, self.cfg.max_burst, ctx);
    }

    /// Every packet the application produced is acknowledged.
    pub(crate) fn transfer_done(&self) -> bool {
        self.highest_ack + 1 >= self.curseq
    }

    /// Congestion window, packets (`cwnd_`).
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Slow-start threshold, packets (`ssthresh_`).
    pub fn ssthresh(&self) -> i64 {
        self.ssthresh
    }

    /// Highest cumulative ACK received (`ack_`), -1 before any.
    pub fn highest_ack(&self) -> i64 {
        self.highest_ack
    }

    /// Highest sequence number sent (`maxseq_`), -1 before any.
    pub fn maxseq(&self) -> i64 {
        self.maxseq
    }

    /// Next sequence number to send (`t_seqno_`).
    pub fn next_seqno(&self) -> i64 {
        self.t_seqno
    }

    /// Duplicate ACKs counted since the last new ACK (`dupacks_`).
    pub fn dupacks(&self) -> i64 {
        self.dupacks
    }

    /// Fast-recovery window inflation (`dupwnd_`), 0 for Tahoe.
    pub fn dupwnd(&self) -> i64 {
        self.dupwnd
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// The retransmission timer's deadline, if armed.
    pub fn rtx_deadline(&self) -> Option<Time> {
        self.rtx_timer
    }

    /// NS-2's agent counters.
    pub fn stats(&self) -> TcpSenderStats {
        self.stats
    }

    /// `initial_window()`.
    pub(crate) fn initial_window(&self) -> f64 {
        match self.wnd_init_option {
            WindowInitOption::Static => f64::from(self.wnd_init),
            WindowInitOption::Rfc3390 => {
                if self.cfg.packet_size <= 1095 {
                    4.0
                } else if self.cfg.packet_size < 2190 {
                    3.0
                } else {
                    2.0
                }
            }
        }
    }

    /// `window()`: packets the sender may have outstanding, `min(cwnd_ + dupwnd_, window_)` in
    /// whole packets (Reno's inflation is zero for Tahoe).
    pub(crate) fn window(&self) -> i64 {
        let wnd = f64::from(self.cfg.window);
        match self.cfg.variant {
            TcpVariant::Tahoe | TcpVariant::Sack => {
                if self.cwnd < wnd {
                    self.cwnd as i64
                } else {
                    wnd as i64
                }
            }
            TcpVariant::Reno | TcpVariant::NewReno => {
                (self.cwnd as i64 + self.dupwnd).min(i64::from(self.cfg.window))
            }
        }
    }

    /// `windowd()`: the same without rounding.
    pub(crate) fn windowd(&self) -> f64 {
        let wnd = f64::from(self.cfg.window);
        (self.cwnd + self.dupwnd as f64).min(wnd)
    }

    fn boot_ns(&self) -> u64 {
        self.boot_time.unwrap_or(0)
    }

    /// `set_rtx_timer()`.
    pub(crate) fn set_rtx_timer(&mut self, now: Time) {
        self.rtx_timer = Some(now + Duration::from_nanos(self.rtt.timeout()));
    }

    /// `reset_rtx_timer(mild, backoff)`: after a loss, restart the timer (backed off if asked);
    /// unless `mild`, go back to the first unacknowledged packet.
    pub(crate) fn reset_rtx_timer(&mut self, now: Time, mild: bool, backoff: bool) {
        if backoff {
            self.rtt.backoff();
            self.stats.max_backoff = self.stats.max_backoff.max(self.rtt.backoff_multiplier());
        }
        self.set_rtx_timer(now);
        if !mild {
            self.t_seqno = self.highest_ack + 1;
        }
        self.rtt_active = false;
    }

    /// `newtimer()`: keep the timer running while data is outstanding, cancel it otherwise.
    pub(crate) fn newtimer(&mut self, now: Time, ack: i64) {
        if self.t_seqno > ack || ack < self.maxseq || self.cwnd < 1.0 {
            self.set_rtx_timer(now);
        } else {
            self.rtx_timer = None;
        }
    }

    /// `output(seqno)`: send packet `seqno` (the SYN if it is 0 and `syn_`), time it if it is
    /// new and nothing is being timed, and arm the timer if none is pending or nothing was
    /// outstanding.
    pub(crate) fn output(&mut self, seqno: i64, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        let is_syn = seqno == 0 && self.cfg.syn;
        let (size, payload) = if is_syn {
            if self.maxseq == -1 {
                // NS-2 counts the SYN as one sequence number of application data.
                self.curseq += 1;
            }
            (self.cfg.header_size, 0)
        } else {
            (
                self.cfg.packet_size.saturating_add(self.cfg.header_size),
                self.cfg.packet_size,
            )
        };
        let force_set_rtx_timer = self.highest_ack == self.maxseq;
        // SetCWRonRetransmit_ (NS-2's default): the first packet after a cut carries CWR,
        // retransmission or not.
        let cwr = std::mem::take(&mut self.cong_action);
        // Packet 0 (the SYN, or the first data packet without syn_) asks for ECN with ECE and
        // is not ECT itself.
        let first = seqno == 0;
        let header = Header::Tcp(TcpHeader {
            seqno,
            ts: now,
            ts_echo: self.ts_peer,
            syn: is_syn,
            ece: self.cfg.ecn && first,
            cwr,
            ..TcpHeader::default()
        });
        ctx.send_packet(PacketKind::Tcp, size, payload, seqno, header)
            .ect = self.cfg.ecn && !first;
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
                    self.rtt_ts = now;
                }
            }
        } else {
            self.stats.retransmissions += 1;
        }
        if self.rtx_timer.is_none() || force_set_rtx_timer {
            self.set_rtx_timer(now);
        }
    }

    /// `send_much()`: send as much as the window allows (at most `maxburst` back to back).
    /// With `overhead_`, the first packet waits for the delayed-send timer instead.
    pub(crate) fn send_much(&mut self, force: bool, maxburst: u32, ctx: &mut AgentCtx<'_>) {
        if self.cfg.variant == TcpVariant::Sack {
            return self.sack1_send_much(force, maxburst, ctx);
        }
        if !force && self.delsnd_timer.is_some() {
            return;
        }
        // `output` changes neither the window nor `highest_ack_`, so the limit NS-2 recomputes
        // per packet is computed once.
        let limit = self.highest_ack + self.window();
        if !force && !self.cfg.overhead.is_zero() {
            // The delayed-send timer is not armed here (checked above): the first packet waits
            // for it.
            if self.t_seqno <= limit && self.t_seqno < self.curseq {
                self.arm_delsnd(ctx);
            }
            return;
        }
        let mut npackets = 0u32;
        // `output` may move `curseq_` (the SYN's), so it is read per packet.
        while self.t_seqno <= limit && self.t_seqno < self.curseq {
            self.output(self.t_seqno, ctx);
            npackets += 1;
            self.t_seqno += 1;
            // `npackets` is at least 1 here, so `maxburst` 0 (unlimited) never matches.
            if npackets == maxburst {
                break;
            }
        }
    }

    /// Arm the delayed-send timer a uniform random time in `[0, overhead_)` from now.
    pub(crate) fn arm_delsnd(&mut self, ctx: &mut AgentCtx<'_>) {
        let overhead = ns(self.cfg.overhead);
        let delay = ctx.rng().gen_range(0..overhead.max(1));
        self.delsnd_timer = Some(ctx.now() + Duration::from_nanos(delay));
    }

    /// `send_one()`: on one of the first `numdupacks_ - 1` duplicate ACKs, send one new packet
    /// if the advertised window allows and the flight stays within `cwnd_ + dupacks_`.
    pub(crate) fn send_one(&mut self, ctx: &mut AgentCtx<'_>) {
        let t = self.t_seqno as f64;
        if t <= self.highest_ack as f64 + f64::from(self.cfg.window)
            && self.t_seqno < self.curseq
            && t <= self.highest_ack as f64 + self.cwnd + self.dupacks as f64
        {
            self.output(self.t_seqno, ctx);
            self.t_seqno += 1;
        }
    }

    /// `opencwnd()`: slow start below `ssthresh_`, congestion avoidance above.
    pub(crate) fn opencwnd(&mut self) {
        if self.cwnd < self.ssthresh as f64 {
            self.cwnd += 1.0;
        } else {
            match self.cfg.window_option {
                WindowOption::Counted => {
                    self.count += 1;
                    if self.count as f64 >= self.cwnd {
                        self.count = 0;
                        self.cwnd += 1.0;
                    }
                }
                WindowOption::Standard => {
                    self.cwnd += self.cfg.increase_num / self.cwnd;
                }
            }
        }
        let max = i64::from(self.cfg.max_cwnd);
        if max != 0 && (self.cwnd as i64) > max {
            self.cwnd = max as f64;
        }
    }

    /// `slowdown()`: cut ssthresh and/or cwnd. The first cut, a cut in slow start and a cut
    /// after a timeout halve the window whatever `decrease_num_` is.
    pub(crate) fn slowdown(&mut self, how: Slowdown) {
        self.stats.cwnd_cuts += 1;
        let slowstart = self.cwnd < self.ssthresh as f64;
        let (halfwin, decreasewin) = if self.cfg.precision_reduce {
            let w = self.windowd();
            (w / 2.0, self.cfg.decrease_num * w)
        } else {
            let w = self.window();
            (
                (w / 2) as f64,
                (self.cfg.decrease_num * w as f64) as i64 as f64,
            )
        };
        if how.ssthresh_half {
            self.ssthresh =
                if self.first_decrease || slowstart || self.last_cwnd_action == CwndAction::Timeout
                {
                    halfwin as i64
                } else {
                    decreasewin as i64
                };
        }
        match how.cwnd {
            CwndCut::Half => {
                self.cwnd = if self.first_decrease || slowstart || self.cfg.decrease_num == 0.5 {
                    halfwin
                } else {
                    decreasewin
                };
            }
            // wnd_restart_ is 1.
            CwndCut::Restart | CwndCut::One => self.cwnd = 1.0,
        }
        if self.ssthresh < 2 {
            self.ssthresh = 2;
        }
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        // Every cut of cwnd is announced with CWR on the next packet.
        self.cong_action = true;
        self.count = 0;
        self.first_decrease = false;
    }

    /// `TcpAgent::ecn()`: an ACK of `ack` carries ECE. Halve cwnd and ssthresh, at most once
    /// per window of data (RFC 3168 §6.1.2): only for an ACK beyond the data outstanding at the
    /// last cut (`recover_`), or after a timeout. Called before the ACK is processed.
    pub(crate) fn ecn_response(&mut self, ack: i64) {
        if ack > self.recover || self.last_cwnd_action == CwndAction::Timeout {
            self.recover = self.maxseq;
            self.last_cwnd_action = CwndAction::Ecn;
            if self.cwnd <= 1.0 {
                // A second mark at one packet backs the timer off (RFC 3168 §6.1.2).
                if self.ecn_backoff {
                    self.rtt.backoff();
                    self.stats.max_backoff =
                        self.stats.max_backoff.max(self.rtt.backoff_multiplier());
                } else {
                    self.ecn_backoff = true;
                }
            } else {
                self.ecn_backoff = false;
            }
            self.slowdown(Slowdown {
                ssthresh_half: true,
                cwnd: CwndCut::Half,
            });
            self.stats.ecn_responses += 1;
        }
    }

    /// The ECN branch of every variant's `dupack_action()`: a fast retransmit is not allowed
    /// (this window was already cut) but the cut was an ECN response: retransmit without a
    /// second cut. Returns whether it applies (and records the action).
    pub(crate) fn ecn_dupack(&mut self) -> bool {
        if self.cfg.ecn && self.last_cwnd_action == CwndAction::Ecn {
            self.last_cwnd_action = CwndAction::DupAck;
            self.stats.fast_retransmits += 1;
            true
        } else {
            false
        }
    }

    /// `recovered || (!bug_fix_ && !ecn_)`: the start of every variant's `dupack_action()`
    /// test for a fast retransmit with a cut.
    pub(crate) fn fast_retransmit_allowed(&self) -> bool {
        self.highest_ack > self.recover || (!self.cfg.bug_fix && !self.cfg.ecn)
    }

    /// `newack()`: a new cumulative ACK. Takes the RTT sample if it covers the timed packet.
    #[inline]
    pub(crate) fn newack(&mut self, ack: i64, now: Time) {
        if !self.cfg.timerfix {
            self.newtimer(now, ack);
        }
        self.dupacks = 0;
        self.last_ack = ack;
        self.prev_highest_ack = self.highest_ack;
        self.highest_ack = ack;
        if self.t_seqno < ack + 1 {
            self.t_seqno = ack + 1;
        }
        if self.rtt_active && ack >= self.rtt_seq {
            // Still in ECN-Echo at one packet: keep the backoff.
            if !self.ect || !self.ecn_backoff || !self.ack_ece {
                self.rtt.reset_backoff();
                self.ecn_backoff = false;
            }
            self.rtt_active = false;
            let tao = now.saturating_since(self.rtt_ts);
            self.rtt
                .update(ns(tao), self.rtt_ts.as_nanos(), self.boot_ns());
        }
        if self.cfg.timerfix {
            self.newtimer(now, ack);
        }
    }

    /// `recv_newack_helper()`: a new ACK opens the window, unless it carries ECE once ECN is
    /// on (`ect_`, set by the first new ACK carrying ECE: the SYN's answer).
    pub(crate) fn recv_newack_helper(&mut self, ack: i64, now: Time) {
        self.newack(ack, now);
        if !self.ect || !self.ack_ece {
            self.opencwnd();
        }
        if self.ect && !self.ack_ece {
            self.ecn_backoff = false;
        }
        if !self.ect && self.ack_ece {
            self.ect = true;
        }
    }

    /// After the first new ACK (the SYN's, with `syn_`), set the initial window
    /// (`delay_growth_`).
    pub(crate) fn after_first_ack(&mut self) {
        if self.last_ack == 0 && self.cfg.delay_growth {
            self.cwnd = self.initial_window();
        }
    }

    /// `TcpAgent::timeout(TCP_TIMER_RTX)`: the shared part of a retransmission timeout.
    pub(crate) fn rtx_timeout_common(&mut self, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        let idle = self.highest_ack == self.maxseq;
        if !idle || self.cfg.slow_start_restart {
            self.recover = self.maxseq;
            if self.highest_ack == -1 {
                // The SYN (or first packet) was lost: do not use a larger initial window.
                if self.wnd_init_option == WindowInitOption::Rfc3390 {
                    self.wnd_init_option = WindowInitOption::Static;
                } else if self.wnd_init > 1 && self.cfg.bugfix_ss {
                    self.wnd_init = 1;
                }
            }
            if idle && self.cfg.restart_bugfix {
                self.slowdown(Slowdown {
                    ssthresh_half: false,
                    cwnd: CwndCut::One,
                });
            } else {
                self.stats.timeouts += 1;
                self.last_cwnd_action = CwndAction::Timeout;
                self.slowdown(Slowdown {
                    ssthresh_half: true,
                    cwnd: CwndCut::Restart,
                });
            }
        }
        let backoff = !(idle && self.cfg.restart_bugfix);
        self.reset_rtx_timer(now, false, backoff);
        self.last_cwnd_action = CwndAction::Timeout;
        self.send_much(false, self.cfg.max_burst, ctx);
    }

    /// An ACK arrived: the bookkeeping every variant does first.
    fn recv_common(&mut self, hdr: &TcpHeader) {
        self.stats.acks_received += 1;
        self.ts_peer = hdr.ts;
    }

    /// Hand the timers' deadlines, which the protocol code keeps in `rtx_timer` and
    /// `delsnd_timer` as NS-2's agent does, to the simulator at the end of a call.
    #[inline]
    pub(crate) fn sync_timers(&self, ctx: &mut AgentCtx<'_>) {
        ctx.sync_timer(RTX, self.rtx_timer);
        // Only `overhead_` ever arms the delayed-send timer.
        if !self.cfg.overhead.is_zero() {
            ctx.sync_timer(DELSND, self.delsnd_timer);
        }
    }

    /// The retransmission timer fired.
    fn on_rtx_timeout(&mut self, ctx: &mut AgentCtx<'_>) {
        match self.cfg.variant {
            TcpVariant::Tahoe => self.rtx_timeout_common(ctx),
            TcpVariant::Reno | TcpVariant::NewReno => self.reno_timeout(ctx),
            TcpVariant::Sack => self.sack1_timeout(ctx),
        }
    }
}

impl Agent for TcpSender {
    /// The FTP source starts (`$ftp start` → `send -1`): the application limit becomes
    /// [`TCP_MAXSEQ`] and the window's worth of packets (the SYN) goes out.
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        self.boot(ctx);
        if self.curseq <= TCP_MAXSEQ {
            self.curseq = TCP_MAXSEQ;
        }
        self.send_much(false, self.cfg.max_burst, ctx);
        self.sync_timers(ctx);
    }

    /// The FTP source stops (`$ftp stop` → `advance 0`): nothing beyond what was already sent
    /// will be sent; retransmissions continue.
    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
        self.curseq = self.maxseq;
        self.send_much(false, self.cfg.max_burst, ctx);
        self.sync_timers(ctx);
    }

    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        // Borrowed, not copied: the ACK lies in the packet store for the whole call.
        let hdr = match (&pkt.kind, &pkt.header) {
            (PacketKind::Ack, Header::Tcp(h)) => h,
            _ => return,
        };
        self.recv_common(hdr);
        // A real sink never ACKs beyond what was sent; bounding the value keeps sequence
        // arithmetic overflow-free on arbitrary input without changing any genuine ACK.
        let ack = hdr.seqno.clamp(-1, 2 * TCP_MAXSEQ);
        self.ack_ece = hdr.ece;
        if hdr.ece && self.cfg.ecn {
            self.ecn_response(ack);
        }
        match self.cfg.variant {
            TcpVariant::Tahoe => self.tahoe_recv(ack, ctx),
            TcpVariant::Reno => self.reno_recv(ack, ctx),
            TcpVariant::NewReno => self.newreno_recv(ack, ctx),
            TcpVariant::Sack => self.sack1_recv(ack, &hdr.sack, ctx),
        }
        self.sync_timers(ctx);
    }

    fn on_timer(&mut self, timer: TimerId, ctx: &mut AgentCtx<'_>) {
        if timer == DELSND {
            self.delsnd_timer = None;
            self.send_much(true, self.cfg.max_burst, ctx);
        } else {
            self.rtx_timer = None;
            self.on_rtx_timeout(ctx);
        }
        self.sync_timers(ctx);
    }

    fn timers(&self) -> usize {
        2
    }

    /// Data packets handed to TCP by the always-backlogged source: first transmissions.
    fn app_counters(&self) -> AppCounters {
        AppCounters {
            generated_packets: self.stats.new_data_packets,
            generated_bytes: self.stats.new_data_packets * u64::from(self.cfg.packet_size),
        }
    }

    /// cwnd and ssthresh in packets; srtt (tick-rounded, as NS-2 reports `srtt_`) and the RTO
    /// that would be armed now (backoff included), in seconds.
    fn sample_names(&self) -> &'static [&'static str] {
        &["cwnd", "ssthresh", "srtt", "rto"]
    }

    fn sample(&self, out: &mut Vec<f64>) {
        out.push(self.cwnd);
        out.push(self.ssthresh as f64);
        out.push(self.rtt.srtt_ns() as f64 * 1e-9);
        out.push(self.rtt.timeout() as f64 * 1e-9);
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Driving one TCP sender by hand (`crate::agent::AgentHarness`), no engine.
    use super::*;
    use crate::packet::Direction;
    use crate::testing::packet;

    pub use crate::agent::AgentHarness as Harness;

    /// A cumulative ACK for `seqno` as TCPSink sends it.
    pub fn ack(seqno: i64) -> Packet {
        Packet {
            flow: 1,
            dir: Direction::Reverse,
            src: 1,
            dst: 0,
            kind: PacketKind::Ack,
            payload: 0,
            header: Header::Tcp(TcpHeader {
                seqno,
                ..TcpHeader::default()
            }),
            ..packet(seqno, 40)
        }
    }

    /// A cumulative ACK for `seqno` carrying SACK `blocks`, as TCPSink/Sack1 sends it.
    pub fn sack_ack(seqno: i64, blocks: &[(i64, i64)]) -> Packet {
        let mut p = ack(seqno);
        if let Header::Tcp(h) = &mut p.header {
            for &(l, r) in blocks {
                h.sack.push(l, r);
            }
        }
        p
    }

    /// Sequence numbers of the packets sent.
    pub fn seqs(pkts: &[Packet]) -> Vec<i64> {
        pkts.iter().map(|p| p.seq).collect()
    }

    /// A sender of `variant` with NS-2 defaults except `window_`, boot offset 0.
    pub fn sender(variant: TcpVariant, window: u32) -> Harness<TcpSender> {
        let cfg = TcpConfig {
            window,
            boot_time: Some(Duration::ZERO),
            ..TcpConfig::ns2(variant)
        };
        Harness::new(TcpSender::new(cfg), Direction::Forward)
    }

    /// Start `h`, complete the SYN exchange at 100 ms and ACK packets `1..=upto` one by one
    /// (each ACK at +1 ms), returning every packet sent after the SYN.
    pub fn open(h: &mut Harness<TcpSender>, upto: i64) -> Vec<Packet> {
        let syn = h.at_ms(0.0).start();
        assert_eq!(seqs(&syn), vec![0]);
        let mut sent = h.at_ms(100.0).deliver(ack(0));
        for a in 1..=upto {
            let t = 100.0 + a as f64;
            sent.extend(h.at_ms(t).deliver(ack(a)));
        }
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;

    #[test]
    fn defaults_are_ns2s() {
        let c = TcpConfig::default();
        assert_eq!(c.variant, TcpVariant::Tahoe);
        assert_eq!(
            (c.window, c.window_init, c.packet_size, c.header_size),
            (20, 2, 1000, 40)
        );
        assert!(c.syn && c.delay_growth && c.singledup && c.bug_fix);
        assert_eq!(c.tcp_tick, Duration::from_millis(10));
        assert_eq!(c.min_rto, Duration::from_millis(200));
        assert_eq!(c.max_burst, 0);
    }

    #[test]
    fn syn_goes_alone_then_initial_window_of_two() {
        let mut h = sender(TcpVariant::Tahoe, 20);
        let syn = h.at_ms(0.0).start();
        assert_eq!(syn.len(), 1);
        assert_eq!(syn[0].size, 40, "the SYN is header only");
        assert_eq!(syn[0].payload, 0);
        assert!(matches!(
            syn[0].header,
            Header::Tcp(TcpHeader { syn: true, .. })
        ));
        assert_eq!(h.agent.cwnd(), 1.0);
        // The SYN's RTO is rtxcur_init_ (3 s).
        assert_eq!(
            h.next_timer().map(|(_, t)| t),
            Some(Time::from_secs_f64(3.0))
        );
        let data = h.at_ms(100.0).deliver(ack(0));
        assert_eq!(seqs(&data), vec![1, 2]);
        assert!(data.iter().all(|p| p.size == 1040 && p.payload == 1000));
        assert_eq!(h.agent.cwnd(), 2.0);
        assert_eq!(h.agent.app_counters().generated_packets, 2);
        assert_eq!(h.agent.app_counters().generated_bytes, 2000);
    }

    #[test]
    fn without_syn_data_starts_at_zero_with_initial_window() {
        let cfg = TcpConfig {
            syn: false,
            ..TcpConfig::ns2(TcpVariant::Tahoe)
        };
        let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
        let first = h.at_ms(0.0).start();
        assert_eq!(seqs(&first), vec![0, 1]);
        assert_eq!(first[0].size, 1040);
    }

    #[test]
    fn slow_start_adds_one_packet_per_ack() {
        let mut h = sender(TcpVariant::Tahoe, 100);
        let sent = open(&mut h, 4);
        // cwnd: 2 after the SYN ack, then +1 per ACK: each ACK releases two packets.
        assert_eq!(h.agent.cwnd(), 6.0);
        assert_eq!(seqs(&sent), (1..=10).collect::<Vec<_>>());
    }

    #[test]
    fn congestion_avoidance_adds_increase_num_over_cwnd() {
        let mut h = sender(TcpVariant::Tahoe, 100);
        open(&mut h, 1);
        h.agent.ssthresh = 3;
        h.agent.cwnd = 4.0;
        h.at_ms(200.0).deliver(ack(2));
        assert_eq!(h.agent.cwnd(), 4.25);
        h.at_ms(201.0).deliver(ack(3));
        assert!((h.agent.cwnd() - (4.25 + 1.0 / 4.25)).abs() < 1e-12);
    }

    #[test]
    fn counted_window_option_adds_one_per_cwnd_acks() {
        let cfg = TcpConfig {
            window: 100,
            window_option: WindowOption::Counted,
            ..TcpConfig::ns2(TcpVariant::Tahoe)
        };
        let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
        open(&mut h, 1);
        h.agent.ssthresh = 2;
        h.agent.cwnd = 3.0;
        for a in 2..=3 {
            h.at_ms(200.0 + a as f64).deliver(ack(a));
            assert_eq!(h.agent.cwnd(), 3.0);
        }
        h.at_ms(210.0).deliver(ack(4));
        assert_eq!(h.agent.cwnd(), 4.0);
    }

    #[test]
    fn window_cap_limits_flight_to_window() {
        let mut h = sender(TcpVariant::Tahoe, 5);
        let sent = open(&mut h, 10);
        assert!(h.agent.cwnd() > 5.0, "cwnd keeps growing past window_");
        // Never more than window_ packets beyond the cumulative ACK.
        assert_eq!(h.agent.next_seqno() - 1, 10 + 5);
        assert_eq!(*seqs(&sent).last().unwrap(), 15);
        // window_ is the initial ssthresh: growth became linear at 5.
        assert_eq!(h.agent.ssthresh(), 5);
        assert!(h.agent.cwnd() < 10.0);
    }

    #[test]
    fn max_cwnd_caps_cwnd() {
        let cfg = TcpConfig {
            window: 100,
            max_cwnd: 4,
            boot_time: Some(Duration::ZERO),
            ..TcpConfig::ns2(TcpVariant::Tahoe)
        };
        let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
        open(&mut h, 6);
        assert_eq!(h.agent.cwnd(), 4.0);
    }

    #[test]
    fn max_burst_limits_packets_per_ack() {
        let cfg = TcpConfig {
            window: 100,
            max_burst: 1,
            ..TcpConfig::ns2(TcpVariant::Tahoe)
        };
        let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
        h.at_ms(0.0).start();
        let sent = h.at_ms(100.0).deliver(ack(0));
        assert_eq!(seqs(&sent), vec![1]);
        assert_eq!(h.agent.cwnd(), 2.0);
    }

    #[test]
    fn rtt_sample_from_syn_sets_rto() {
        let mut h = sender(TcpVariant::Tahoe, 20);
        h.at_ms(0.0).start();
        h.at_ms(100.0).deliver(ack(0));
        // 100 ms = 10 ticks: RTO = 10 + 4 * 5 = 30 ticks, armed at 100 ms.
        assert_eq!(h.agent.rtt().rtt_ticks(), 10);
        assert_eq!(h.agent.rtx_deadline(), Some(Time::from_secs_f64(0.4)));
    }

    #[test]
    fn one_rtt_sample_per_window_karn() {
        let mut h = sender(TcpVariant::Tahoe, 20);
        h.at_ms(0.0).start();
        h.at_ms(100.0).deliver(ack(0)); // sends 1 (timed) and 2
                                        // ACK 1 at 150 ms completes the sample for packet 1 (50 ms = 5 ticks).
        h.at_ms(150.0).deliver(ack(1));
        assert_eq!(h.agent.rtt().rtt_ticks(), 5);
        // Packet 3 (sent at 150 ms) is now timed; ACK 2 does not cover it: no new sample.
        h.at_ms(170.0).deliver(ack(2));
        assert_eq!(h.agent.rtt().rtt_ticks(), 5);
        h.at_ms(260.0).deliver(ack(3));
        assert_eq!(h.agent.rtt().rtt_ticks(), 11);
    }

    #[test]
    fn idle_timeout_restarts_slow_start_without_backoff() {
        let mut h = sender(TcpVariant::Tahoe, 20);
        h.at_ms(0.0).start();
        h.at_ms(100.0).deliver(ack(0));
        h.stop();
        h.at_ms(150.0).deliver(ack(1));
        let sent = h.at_ms(151.0).deliver(ack(2));
        assert!(sent.is_empty(), "stopped source sends nothing new");
        let ssthresh = h.agent.ssthresh();
        assert!(h.agent.cwnd() > 2.0);
        // NS-2 keeps the timer armed (t_seqno_ > ack); with nothing outstanding it fires,
        // closes cwnd to one (slow_start_restart_), keeps ssthresh_ and does not back off
        // (restart_bugfix_).
        let fired = h.wake_next();
        assert!(fired.is_empty());
        assert_eq!(h.agent.cwnd(), 1.0);
        assert_eq!(h.agent.ssthresh(), ssthresh);
        assert_eq!(h.agent.rtt().backoff_multiplier(), 1);
        assert_eq!(h.agent.stats().timeouts, 0);
    }

    #[test]
    fn lost_syn_is_resent_with_backoff_and_window_one() {
        let mut h = sender(TcpVariant::Tahoe, 20);
        h.at_ms(0.0).start();
        let again = h.wake_next();
        assert_eq!(h.now, Time::from_secs_f64(3.0));
        assert_eq!(seqs(&again), vec![0]);
        assert_eq!(again[0].size, 40);
        // Backed off: next timeout 2 * 3 s later.
        assert_eq!(
            h.next_timer().map(|(_, t)| t),
            Some(Time::from_secs_f64(9.0))
        );
        // bugfix_ss_: the initial window is now one packet.
        let data = h.at_ms(3100.0).deliver(ack(0));
        assert_eq!(seqs(&data), vec![1]);
        assert_eq!(h.agent.stats().retransmissions, 1);
    }

    #[test]
    fn no_timer_fires_before_its_deadline() {
        let mut h = sender(TcpVariant::Tahoe, 20);
        h.at_ms(0.0).start();
        let deadline = h.next_timer().map(|(_, t)| t);
        assert!(h.at_ms(1000.0).wake().is_empty());
        assert_eq!(h.next_timer().map(|(_, t)| t), deadline);
    }

    #[test]
    fn timeout_halves_ssthresh_and_goes_back_n() {
        for variant in [
            TcpVariant::Tahoe,
            TcpVariant::Reno,
            TcpVariant::NewReno,
            TcpVariant::Sack,
        ] {
            let mut h = sender(variant, 100);
            open(&mut h, 4); // cwnd 6, packets up to 10 sent
            assert_eq!(h.agent.maxseq(), 10);
            let rto_at = h.next_timer().map(|(_, t)| t).unwrap();
            let resent = h.wake_next();
            assert_eq!(h.now, rto_at);
            assert_eq!(
                seqs(&resent),
                vec![5],
                "{variant:?}: go back to highest_ack + 1"
            );
            assert_eq!(h.agent.cwnd(), 1.0);
            assert_eq!(
                h.agent.ssthresh(),
                3,
                "{variant:?}: half of min(cwnd, window_)"
            );
            assert_eq!(h.agent.rtt().backoff_multiplier(), 2);
            assert_eq!(h.agent.stats().timeouts, 1);
        }
    }

    #[test]
    fn overhead_delays_sends_by_random_time() {
        let cfg = TcpConfig {
            overhead: Duration::from_millis(5),
            ..TcpConfig::ns2(TcpVariant::Tahoe)
        };
        let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
        assert!(h.at_ms(0.0).start().is_empty());
        let wake = h.next_timer().map(|(_, t)| t).unwrap();
        assert!(wake < Time::from_secs_f64(0.005));
        let syn = h.wake_next();
        assert_eq!(seqs(&syn), vec![0]);
    }

    proptest::proptest! {
        /// Arbitrary ACK numbers (bogus ones included) and wake-up times never panic, never
        /// send beyond the advertised window, and keep cwnd positive. (Not at least one: as in
        /// NS-2, Reno halving a `window_` of 1 leaves 0.5.)
        #[test]
        fn arbitrary_acks_keep_invariants(
            variant in 0usize..4,
            window in 1u32..64,
            events in proptest::collection::vec((0u8..5, -3i64..80, 0u64..400), 1..300),
        ) {
            let variant = [TcpVariant::Tahoe, TcpVariant::Reno, TcpVariant::NewReno, TcpVariant::Sack][variant];
            let mut h = sender(variant, window);
            h.at_ms(0.0).start();
            let mut ms = 0.0;
            let mut maxseq = h.agent.maxseq();
            for (kind, val, dt) in events {
                ms += dt as f64;
                h.at_ms(ms);
                let sent = match kind {
                    0 => h.wake(),
                    1 => h.wake_next(),
                    2 => h.deliver(ack(i64::MAX - 80 + val)),
                    4 => {
                        // A duplicate with SACK blocks, sometimes bogus (reversed, huge).
                        let a = h.agent.highest_ack();
                        let l = a + 1 + val % 9;
                        let r = if dt % 7 == 0 { l - 3 } else { l + 1 + (dt % 5) as i64 };
                        h.deliver(sack_ack(a, &[(l, r), (a + 40, a + 42), (0, 1 << 40)]))
                    }
                    _ => {
                        let a = (h.agent.highest_ack() + val % 8).min(h.agent.maxseq());
                        h.deliver(ack(a))
                    }
                };
                for p in &sent {
                    proptest::prop_assert!(p.seq <= h.agent.highest_ack() + i64::from(window));
                }
                proptest::prop_assert!(h.agent.cwnd() > 0.0 && h.agent.cwnd().is_finite());
                proptest::prop_assert!(h.agent.maxseq() >= maxseq);
                maxseq = h.agent.maxseq();
                ms = h.now.as_secs_f64() * 1000.0;
            }
        }
    }

    proptest::proptest! {
        /// Odd configurations (zero windows, zero ticks, no dupack threshold, odd gains) with
        /// arbitrary ACKs and wake-ups never panic.
        #[test]
        fn arbitrary_configs_never_panic(
            variant in 0usize..4,
            window in 0u32..8,
            window_init in 0u32..4,
            num_dupacks in 0u32..4,
            max_burst in 0u32..3,
            gains in (0.0f64..2.0, 0.0f64..3.0),
            tick_us in 0u64..20_000,
            flags in proptest::collection::vec(proptest::bool::ANY, 8),
            events in proptest::collection::vec((0u8..3, -2i64..12, 0u64..300), 1..120),
        ) {
            let cfg = TcpConfig {
                window,
                window_init,
                num_dupacks,
                max_burst,
                decrease_num: gains.0,
                increase_num: gains.1,
                tcp_tick: Duration::from_micros(tick_us),
                syn: flags[0],
                delay_growth: flags[1],
                precision_reduce: flags[2],
                singledup: flags[3],
                bug_fix: flags[4],
                overhead: if flags[5] { Duration::from_millis(3) } else { Duration::ZERO },
                window_option: if flags[6] { WindowOption::Counted } else { WindowOption::Standard },
                partial_window_deflation: flags[7],
                ..TcpConfig::ns2([TcpVariant::Tahoe, TcpVariant::Reno, TcpVariant::NewReno, TcpVariant::Sack][variant])
            };
            let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
            h.at_ms(0.0).start();
            let mut ms = 0.0;
            for (kind, val, dt) in events {
                ms += dt as f64;
                h.at_ms(ms);
                match kind {
                    0 => drop(h.wake_next()),
                    1 => drop(h.stop()),
                    _ => {
                        let a = (h.agent.highest_ack() + val).min(h.agent.maxseq());
                        drop(h.deliver(ack(a)));
                    }
                }
                ms = h.now.as_secs_f64() * 1000.0;
            }
        }
    }

    #[test]
    fn samples_report_window_and_timer() {
        let mut h = sender(TcpVariant::Tahoe, 20);
        assert_eq!(h.agent.sample_names().len(), 4);
        h.at_ms(0.0).start();
        h.at_ms(100.0).deliver(ack(0));
        let mut v = Vec::new();
        h.agent.sample(&mut v);
        // srtt 10 ticks, RTO 30 ticks (ns converted to seconds: equal to 1e-12).
        for (got, want) in v.iter().zip([2.0, 20.0, 0.1, 0.3]) {
            assert!((got - want).abs() < 1e-12, "{v:?}");
        }
    }

    #[test]
    fn later_cuts_use_decrease_num() {
        let cfg = TcpConfig {
            window: 100,
            decrease_num: 0.75,
            boot_time: Some(Duration::ZERO),
            ..TcpConfig::ns2(TcpVariant::Reno)
        };
        let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
        open(&mut h, 6); // cwnd 8
        for t in 0..3 {
            h.at_ms(110.0 + t as f64).deliver(ack(6));
        }
        // The first decrease halves whatever decrease_num_ is.
        assert_eq!(h.agent.cwnd(), 4.0);
        // The full ACK ends recovery; then grow in congestion avoidance from 10.
        let top = h.agent.maxseq();
        h.at_ms(200.0).deliver(ack(top));
        h.agent.cwnd = 10.0;
        let next = h.agent.next_seqno();
        for a in top + 1..next {
            h.at_ms(200.0 + a as f64).deliver(ack(a));
        }
        let last = h.agent.highest_ack();
        let w = h.agent.cwnd();
        for t in 0..3 {
            h.at_ms(400.0 + t as f64).deliver(ack(last));
        }
        assert!(
            (h.agent.cwnd() - 0.75 * w).abs() < 1e-9,
            "{} vs {}",
            h.agent.cwnd(),
            w
        );
        assert_eq!(h.agent.ssthresh(), (0.75 * w) as i64);
    }

    #[test]
    fn without_precision_reduce_the_window_is_halved_in_whole_packets() {
        let cfg = TcpConfig {
            window: 100,
            precision_reduce: false,
            boot_time: Some(Duration::ZERO),
            ..TcpConfig::ns2(TcpVariant::Reno)
        };
        let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
        open(&mut h, 6);
        h.agent.cwnd = 7.9; // window() = 7
        for t in 0..3 {
            h.at_ms(110.0 + t as f64).deliver(ack(6));
        }
        assert_eq!(h.agent.cwnd(), 3.0);
        assert_eq!(h.agent.ssthresh(), 3);
    }

    #[test]
    fn rfc3390_initial_window_and_its_fallback_after_a_lost_syn() {
        let cfg = TcpConfig {
            window_init_option: WindowInitOption::Rfc3390,
            boot_time: Some(Duration::ZERO),
            ..TcpConfig::ns2(TcpVariant::Tahoe)
        };
        let mut h = Harness::new(
            TcpSender::new(cfg.clone()),
            crate::packet::Direction::Forward,
        );
        h.at_ms(0.0).start();
        // 1000-byte packets: four.
        assert_eq!(seqs(&h.at_ms(100.0).deliver(ack(0))), vec![1, 2, 3, 4]);
        let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
        h.at_ms(0.0).start();
        h.wake_next(); // the SYN timed out: back to windowInit_ (2)
        assert_eq!(seqs(&h.at_ms(3100.0).deliver(ack(0))), vec![1, 2]);
    }

    #[test]
    fn no_fast_retrans_waits_for_the_timeout() {
        let cfg = TcpConfig {
            window: 100,
            no_fast_retrans: true,
            boot_time: Some(Duration::ZERO),
            ..TcpConfig::ns2(TcpVariant::Tahoe)
        };
        let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
        open(&mut h, 4);
        for t in 0..5 {
            h.at_ms(110.0 + t as f64).deliver(ack(4));
        }
        assert_eq!(h.agent.stats().fast_retransmits, 0);
        assert_eq!(seqs(&h.wake_next()), vec![5]);
        assert_eq!(h.agent.stats().timeouts, 1);
    }

    #[test]
    fn backoff_is_recorded_and_ended_by_a_fresh_sample() {
        let mut h = sender(TcpVariant::Tahoe, 20);
        open(&mut h, 2);
        h.wake_next();
        h.wake_next();
        assert_eq!(h.agent.stats().max_backoff, 4);
        assert_eq!(h.agent.rtt().backoff_multiplier(), 4);
        // Retransmissions are not timed (Karn): ACKs for them keep the backoff.
        let t = h.now.as_secs_f64() * 1000.0;
        assert!(!h.at_ms(t + 50.0).deliver(ack(3)).is_empty());
        let old_top = h.agent.maxseq();
        h.at_ms(t + 100.0).deliver(ack(old_top));
        assert_eq!(h.agent.rtt().backoff_multiplier(), 4);
        // New data past the old maxseq_ is timed; its ACK ends the backoff.
        assert!(h.agent.maxseq() > old_top);
        let top = h.agent.maxseq();
        h.at_ms(t + 200.0).deliver(ack(top));
        assert_eq!(h.agent.rtt().backoff_multiplier(), 1);
    }

    #[test]
    fn non_tcp_packets_are_ignored() {
        let mut h = sender(TcpVariant::Tahoe, 20);
        h.at_ms(0.0).start();
        let mut p = ack(0);
        p.header = Header::None;
        assert!(h.deliver(p).is_empty());
        assert_eq!(h.agent.highest_ack(), -1);
    }

    /// An ACK for `seqno` carrying ECE.
    fn ece_ack(seqno: i64) -> Packet {
        let mut p = ack(seqno);
        if let Header::Tcp(h) = &mut p.header {
            h.ece = true;
        }
        p
    }

    fn cwr(p: &Packet) -> bool {
        matches!(&p.header, Header::Tcp(h) if h.cwr)
    }

    /// An ECN-capable sender of `variant` (window 100) after the SYN exchange (answered with
    /// ECE) and ACKs up to 6: cwnd 8, packets up to 14 sent.
    fn ecn_sender(variant: TcpVariant) -> Harness<TcpSender> {
        let cfg = TcpConfig {
            window: 100,
            boot_time: Some(Duration::ZERO),
            ecn: true,
            ..TcpConfig::ns2(variant)
        };
        let mut h = Harness::new(TcpSender::new(cfg), crate::packet::Direction::Forward);
        let syn = h.at_ms(0.0).start();
        assert!(matches!(&syn[0].header, Header::Tcp(t) if t.syn && t.ece));
        assert!(!syn[0].ect, "the SYN is not ECT");
        let first = h.at_ms(100.0).deliver(ece_ack(0));
        assert!(first.iter().all(|p| p.ect), "data is ECT");
        assert_eq!(
            h.agent.stats().ecn_responses,
            0,
            "the SYN's ECE is the answer"
        );
        for a in 1..=6 {
            h.at_ms(100.0 + a as f64).deliver(ack(a));
        }
        assert_eq!(h.agent.cwnd(), 8.0);
        assert_eq!(h.agent.maxseq(), 14);
        h
    }

    #[test]
    fn ece_halves_once_per_window_then_cwr_on_next_packet() {
        for variant in [
            TcpVariant::Tahoe,
            TcpVariant::Reno,
            TcpVariant::NewReno,
            TcpVariant::Sack,
        ] {
            let mut h = ecn_sender(variant);
            // ECE on the ACK of 7: cwnd and ssthresh halve; the ACK does not open the window;
            // nothing is retransmitted, and the next new packet carries CWR.
            let out = h.at_ms(110.0).deliver(ece_ack(7));
            assert_eq!(h.agent.cwnd(), 4.0, "{variant:?}");
            assert_eq!(h.agent.ssthresh(), 4, "{variant:?}");
            assert_eq!(h.agent.stats().ecn_responses, 1);
            assert_eq!(h.agent.stats().retransmissions, 0);
            // Window 4 from 7: up to 11 allowed, 14 already out: nothing sent yet.
            assert!(out.is_empty(), "{variant:?}: {:?}", seqs(&out));
            // More ECE within the same window (up to 14, the maxseq_ at the cut): no cut.
            let mut out = Vec::new();
            for a in 8..=11 {
                out.extend(h.at_ms(110.0 + a as f64).deliver(ece_ack(a)));
            }
            assert_eq!(h.agent.cwnd(), 4.0, "{variant:?}");
            assert_eq!(h.agent.stats().ecn_responses, 1);
            // The ACK of 11 lets 15 out (window 4); the clean ACK of 12 grows cwnd to 4.25.
            out.extend(h.at_ms(130.0).deliver(ack(12)));
            assert_eq!(seqs(&out), vec![15, 16], "{variant:?}");
            assert!(
                cwr(&out[0]) && !cwr(&out[1]),
                "{variant:?}: CWR on the first only"
            );
            assert!(out.iter().all(|p| p.ect));
            // An ECE for data sent after the cut: the next window's response.
            h.at_ms(140.0).deliver(ack(14));
            let cwnd = h.agent.cwnd();
            h.at_ms(150.0).deliver(ece_ack(15));
            assert_eq!(h.agent.stats().ecn_responses, 2, "{variant:?}");
            assert_eq!(h.agent.cwnd(), cwnd / 2.0, "{variant:?}");
            assert_eq!(h.agent.stats().cwnd_cuts, 2);
        }
    }

    #[test]
    fn without_ecn_ece_is_ignored_and_packets_are_not_ect() {
        let mut h = sender(TcpVariant::Reno, 100);
        let sent = open(&mut h, 6);
        assert!(sent.iter().all(|p| !p.ect));
        h.at_ms(110.0).deliver(ece_ack(7));
        assert_eq!(h.agent.cwnd(), 9.0);
        assert_eq!(h.agent.stats().ecn_responses, 0);
    }

    #[test]
    fn duplicate_acks_after_an_ecn_cut_retransmit_without_a_second_cut() {
        for variant in [TcpVariant::Reno, TcpVariant::NewReno, TcpVariant::Sack] {
            let mut h = ecn_sender(variant);
            h.at_ms(110.0).deliver(ece_ack(7));
            assert_eq!(h.agent.cwnd(), 4.0);
            // Packet 8 lost: three duplicate ACKs of 7 (SACK: each reporting more).
            let mut out = Vec::new();
            for (i, right) in [10, 11, 12].into_iter().enumerate() {
                let p = if variant == TcpVariant::Sack {
                    sack_ack(7, &[(9, right)])
                } else {
                    ack(7)
                };
                out.extend(h.at_ms(111.0 + i as f64).deliver(p));
            }
            assert!(seqs(&out).contains(&8), "{variant:?}: {:?}", seqs(&out));
            assert_eq!(h.agent.cwnd(), 4.0, "{variant:?}: no second cut");
            assert_eq!(h.agent.ssthresh(), 4);
            assert_eq!(h.agent.stats().cwnd_cuts, 1);
            assert_eq!(h.agent.stats().fast_retransmits, 1);
        }
        // Tahoe goes back to one packet, keeping ssthresh.
        let mut h = ecn_sender(TcpVariant::Tahoe);
        h.at_ms(110.0).deliver(ece_ack(7));
        for i in 0..3 {
            h.at_ms(111.0 + i as f64).deliver(ack(7));
        }
        assert_eq!(h.agent.cwnd(), 1.0);
        assert_eq!(h.agent.ssthresh(), 4);
    }
}
