//! The congestion controllers of the Linux profile: Reno (`tcp_cong.c`) and CUBIC with HyStart
//! (`tcp_cubic.c`), restated in `docs/simulator.md` ("Linux TCP"). A closed enum: the sender
//! calls it where the kernel calls its `tcp_congestion_ops`.

use super::super::cubic::{cubic_root, reno_friendly_cnt};

/// The window the controller acts on: `snd_cwnd`, `snd_cwnd_cnt`, `snd_ssthresh` and the clamp,
/// in packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cwnd {
    /// `snd_cwnd`.
    pub cwnd: u32,
    /// `snd_cwnd_cnt`: acknowledged packets towards the next additive increase.
    pub cnt: u32,
    /// `snd_ssthresh` (`u32::MAX >> 1` until the first exit from slow start).
    pub ssthresh: u32,
    /// `snd_cwnd_clamp`.
    pub clamp: u32,
}

/// `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

impl Cwnd {
    /// `tcp_in_slow_start`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_slow_start`: one packet per packet acknowledged, up to ssthresh; returns what is
    /// left of `acked` beyond it.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd);
        self.cwnd = cwnd.min(self.clamp);
        left
    }

    /// `tcp_cong_avoid_ai`: one packet per `w` packets acknowledged, credit carried over.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cnt >= w {
            self.cnt = 0;
            self.cwnd = self.cwnd.saturating_add(1);
        }
        self.cnt = self.cnt.saturating_add(acked);
        if self.cnt >= w {
            let delta = self.cnt / w;
            self.cnt -= delta * w;
            self.cwnd = self.cwnd.saturating_add(delta);
        }
        self.cwnd = self.cwnd.min(self.clamp);
    }
}

/// What the kernel's clocks read when the controller is called.
#[derive(Clone, Copy, Debug)]
pub struct Clocks {
    /// `tcp_jiffies32`.
    pub jiffies: u32,
    /// `HZ`.
    pub hz: u32,
    /// `tcp_mstamp`, µs.
    pub now_us: u64,
}

/// HyStart's settings (`tcp_cubic` module parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HystartConfig {
    /// `hystart`.
    pub enabled: bool,
    /// `hystart_detect` bit 1: the ACK train.
    pub ack_train: bool,
    /// `hystart_detect` bit 2: the delay increase.
    pub delay: bool,
    /// `hystart_low_window`: no detection below this window.
    pub low_window: u32,
    /// `hystart_ack_delta_us`: the largest ACK spacing still counted as one train.
    pub ack_delta_us: u64,
    /// `hystart_ack_delay()`: the allowance for ACK compression added to the train threshold
    /// (min(1 ms, 4 GSO sizes at the pacing rate): 1 ms on every path below 250 MB/s).
    pub ack_delay_us: u64,
}

impl Default for HystartConfig {
    /// The module's defaults, as `/sys/module/tcp_cubic/parameters` shows them on 6.18.
    fn default() -> Self {
        HystartConfig {
            enabled: true,
            ack_train: true,
            delay: true,
            low_window: 16,
            ack_delta_us: 2000,
            ack_delay_us: 1000,
        }
    }
}

/// `HYSTART_MIN_SAMPLES`.
const HYSTART_MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN` / `_MAX`, µs.
const HYSTART_DELAY_MIN_US: u64 = 4000;
const HYSTART_DELAY_MAX_US: u64 = 16000;
/// `BICTCP_BETA_SCALE`, `beta`, `bic_scale`, `BICTCP_HZ`.
const BETA_SCALE: u64 = 1024;
const BETA: u64 = 717;
const BIC_SCALE: u64 = 41;
const BICTCP_HZ: u32 = 10;

/// CUBIC's state (`struct bictcp`).
#[derive(Clone, Debug, Default)]
pub struct Cubic {
    /// ACKed packets per one-packet increase.
    pub cnt: u32,
    /// W_max.
    pub last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    origin: u32,
    k: u32,
    /// Minimum RTT, µs (0: none).
    pub delay_min: u64,
    /// Epoch start, jiffies (0: none).
    pub epoch_start: u32,
    ack_cnt: u32,
    tcp_cwnd: u32,
    /// HyStart found the exit in this slow start.
    pub found: bool,
    round_start: u64,
    end_seq: i64,
    last_ack: u64,
    curr_rtt: u64,
    sample_cnt: u32,
    hystart: HystartConfig,
    /// Why slow start ended, if HyStart ended it (for tests and samples).
    pub exit: Option<HystartExit>,
}

/// Which HyStart detector ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartExit {
    /// The ACKs of one round spread over more than half the minimum RTT.
    AckTrain,
    /// The round's minimum RTT rose above the path's minimum by the threshold.
    Delay,
}

impl Cubic {
    fn new(hystart: HystartConfig) -> Self {
        Cubic {
            hystart,
            curr_rtt: u64::MAX,
            ..Cubic::default()
        }
    }

    /// `bictcp_reset`: forget everything but the settings.
    fn reset(&mut self) {
        *self = Cubic::new(self.hystart);
    }

    /// `bictcp_hystart_reset`: a new round starts at `snd_nxt`.
    fn hystart_reset(&mut self, now_us: u64, snd_nxt: i64) {
        self.round_start = now_us;
        self.last_ack = now_us;
        self.end_seq = snd_nxt;
        self.curr_rtt = u64::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_recalc_ssthresh`, with fast convergence.
    fn ssthresh(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = 0;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            ((u64::from(cwnd) * (BETA_SCALE + BETA)) / (2 * BETA_SCALE)) as u32
        } else {
            cwnd
        };
        (((u64::from(cwnd) * BETA) / BETA_SCALE) as u32).max(2)
    }

    /// `bictcp_update`: ACKs per one-packet increase towards the cubic target one minimum RTT
    /// ahead, and no slower than the Reno estimate.
    fn update(&mut self, cwnd: u32, acked: u32, c: Clocks) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd
            && (c.jiffies.wrapping_sub(self.last_time) as i32) <= (c.hz / 32) as i32
        {
            return;
        }
        // The cubic function is evaluated at most once per jiffy; the Reno estimate always.
        if !(self.epoch_start != 0 && c.jiffies == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = c.jiffies;
            if self.epoch_start == 0 {
                self.epoch_start = c.jiffies.max(1);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin = cwnd;
                } else {
                    let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE * 10);
                    self.k = cubic_root(cube_factor * u64::from(self.last_max_cwnd - cwnd));
                    self.origin = self.last_max_cwnd;
                }
            }
            let jiffy_us = 1_000_000 / u64::from(c.hz.max(1));
            let mut t = u64::from(c.jiffies.wrapping_sub(self.epoch_start) as i32 as u32);
            t += self.delay_min.div_ceil(jiffy_us);
            t = (t << BICTCP_HZ) / u64::from(c.hz.max(1));
            let k = u64::from(self.k);
            let offs = t.abs_diff(k);
            let cube_rtt_scale = BIC_SCALE * 10;
            let delta = (cube_rtt_scale
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                .wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ)) as u32;
            let target = if t < k {
                self.origin.wrapping_sub(delta)
            } else {
                self.origin.wrapping_add(delta)
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                cwnd.saturating_mul(100)
            };
            // Before the first loss the bandwidth is unknown: at least 5% per RTT.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        self.cnt = reno_friendly_cnt(
            &mut self.ack_cnt,
            &mut self.tcp_cwnd,
            self.cnt,
            cwnd,
            BETA as u32,
        );
        // At most 1.5× per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// `hystart_update` for one RTT sample `delay` µs.
    fn hystart_update(
        &mut self,
        w: &mut Cwnd,
        delay: u64,
        snd_una: i64,
        snd_nxt: i64,
        now_us: u64,
    ) {
        if snd_una > self.end_seq {
            self.hystart_reset(now_us, snd_nxt);
        }
        if w.cwnd < self.hystart.low_window {
            return;
        }
        if self.hystart.ack_train
            && now_us.saturating_sub(self.last_ack) <= self.hystart.ack_delta_us
        {
            self.last_ack = now_us;
            // No pacing here (no fq on the kernel), so half of delay_min + the ACK allowance.
            let threshold = (self.delay_min + self.hystart.ack_delay_us) >> 1;
            if now_us.saturating_sub(self.round_start) > threshold {
                self.found = true;
                self.exit = Some(HystartExit::AckTrain);
                w.ssthresh = w.cwnd;
            }
        }
        if self.hystart.delay {
            self.curr_rtt = self.curr_rtt.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh =
                    (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt > self.delay_min + thresh {
                    self.found = true;
                    self.exit = Some(HystartExit::Delay);
                    w.ssthresh = w.cwnd;
                }
            }
        }
    }
}

/// The controller: a closed enum.
#[derive(Clone, Debug)]
pub enum Controller {
    /// `reno` (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh`).
    Reno,
    /// `cubic`.
    Cubic(Box<Cubic>),
}

impl Controller {
    /// A CUBIC controller with these HyStart settings.
    pub fn cubic(hystart: HystartConfig) -> Self {
        Controller::Cubic(Box::new(Cubic::new(hystart)))
    }

    /// `init` at the end of the handshake.
    pub fn init(&mut self, now_us: u64, snd_nxt: i64) {
        if let Controller::Cubic(c) = self {
            c.reset();
            if c.hystart.enabled {
                c.hystart_reset(now_us, snd_nxt);
            }
        }
    }

    /// `ssthresh`: the window after a congestion event.
    pub fn ssthresh(&mut self, cwnd: u32) -> u32 {
        match self {
            Controller::Reno => (cwnd >> 1).max(2),
            Controller::Cubic(c) => c.ssthresh(cwnd),
        }
    }

    /// `undo_cwnd` (both use `tcp_reno_undo_cwnd`).
    pub fn undo_cwnd(&self, cwnd: u32, prior_cwnd: u32) -> u32 {
        cwnd.max(prior_cwnd)
    }

    /// `cong_avoid` for `acked` newly delivered packets, when the window may grow.
    pub fn cong_avoid(&mut self, w: &mut Cwnd, acked: u32, cwnd_limited: bool, c: Clocks) {
        if !cwnd_limited {
            return;
        }
        let mut acked = acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        match self {
            Controller::Reno => w.cong_avoid_ai(w.cwnd, acked),
            Controller::Cubic(cu) => {
                cu.update(w.cwnd, acked, c);
                w.cong_avoid_ai(cu.cnt, acked);
            }
        }
    }

    /// `pkts_acked` with the RTT of the newest (S)ACKed packet, µs (None: no sample).
    pub fn pkts_acked(
        &mut self,
        w: &mut Cwnd,
        rtt_us: Option<u64>,
        snd_una: i64,
        snd_nxt: i64,
        c: Clocks,
    ) {
        let Controller::Cubic(cu) = self else {
            return;
        };
        let Some(rtt) = rtt_us else {
            return;
        };
        // Samples right after a reduction are discarded.
        if cu.epoch_start != 0 && (c.jiffies.wrapping_sub(cu.epoch_start) as i32) < c.hz as i32 {
            return;
        }
        let delay = rtt.max(1);
        if cu.delay_min == 0 || cu.delay_min > delay {
            cu.delay_min = delay;
        }
        if !cu.found && w.in_slow_start() && cu.hystart.enabled {
            cu.hystart_update(w, delay, snd_una, snd_nxt, c.now_us);
        }
    }

    /// `set_state(TCP_CA_Loss)`: CUBIC starts over.
    pub fn on_loss_state(&mut self, now_us: u64, snd_nxt: i64) {
        if let Controller::Cubic(c) = self {
            c.reset();
            c.hystart_reset(now_us, snd_nxt);
        }
    }

    /// The CUBIC state, if this is CUBIC.
    pub fn as_cubic(&self) -> Option<&Cubic> {
        match self {
            Controller::Cubic(c) => Some(c),
            Controller::Reno => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(cwnd: u32, ssthresh: u32) -> Cwnd {
        Cwnd {
            cwnd,
            cnt: 0,
            ssthresh,
            clamp: u32::MAX,
        }
    }

    fn clocks(ms: u64) -> Clocks {
        Clocks {
            jiffies: (ms / 4) as u32,
            hz: 250,
            now_us: ms * 1000,
        }
    }

    #[test]
    fn slow_start_counts_packets_and_stops_at_ssthresh() {
        let mut x = w(10, 14);
        assert_eq!(x.slow_start(2), 0);
        assert_eq!(x.cwnd, 12);
        assert_eq!(x.slow_start(4), 2, "two of four beyond ssthresh");
        assert_eq!(x.cwnd, 14);
    }

    #[test]
    fn reno_adds_one_packet_per_window() {
        let mut r = Controller::Reno;
        let mut x = w(20, 10);
        for _ in 0..10 {
            r.cong_avoid(&mut x, 2, true, clocks(0));
        }
        assert_eq!(x.cwnd, 21, "20 packets acknowledged: one more");
        assert_eq!(r.ssthresh(21), 10);
        r.cong_avoid(&mut x, 2, false, clocks(0));
        assert_eq!(x.cnt, 0, "not cwnd-limited: no growth");
    }

    #[test]
    fn cubic_beta_and_fast_convergence() {
        let mut c = Controller::cubic(HystartConfig::default());
        assert_eq!(c.ssthresh(100), 70, "100·717/1024");
        // A loss below the previous maximum lowers the plateau further.
        assert_eq!(c.ssthresh(80), 56);
        assert_eq!(c.as_cubic().unwrap().last_max_cwnd, 80 * 1741 / 2048);
    }

    #[test]
    fn cubic_returns_to_the_plateau_about_k_after_the_loss() {
        let mut c = Controller::cubic(HystartConfig::default());
        c.init(0, 1);
        let mut x = w(100, INFINITE_SSTHRESH);
        // A 100-ms path: delay_min 100 ms (taken before the epoch starts).
        c.pkts_acked(&mut x, Some(100_000), 2, 3, clocks(1000));
        x.ssthresh = c.ssthresh(100);
        x.cwnd = x.ssthresh;
        // Each ms a hundredth of the window is acknowledged (the window per RTT).
        let (mut ms, mut credit, mut at_plateau) = (10_000u64, 0.0f64, None);
        while ms < 20_000 {
            credit += f64::from(x.cwnd) / 100.0;
            let acked = credit.floor() as u32;
            credit -= f64::from(acked);
            if acked > 0 {
                c.cong_avoid(&mut x, acked, true, clocks(ms));
            }
            if at_plateau.is_none() && x.cwnd >= 100 {
                at_plateau = Some(ms - 10_000);
            }
            ms += 1;
        }
        // K = cbrt(30 / 0.4) = 4.2 s with C = 0.4; the target runs one minimum RTT ahead, and
        // the integer target reaches 100 once C·(K − t − RTT)³ < 1 packet.
        let t = at_plateau.expect("reaches the plateau") as f64 / 1000.0;
        let k = (30.0f64 / 0.4).cbrt();
        let want = k - 0.1 - (1.0f64 / 0.4).cbrt();
        assert!((t - want).abs() < 0.1, "{t} vs {want}");
        assert!(x.cwnd > 105, "then grows beyond it: {}", x.cwnd);
    }

    #[test]
    fn hystart_delay_exit() {
        let mut c = Controller::cubic(HystartConfig::default());
        c.init(0, 1);
        let mut x = w(32, INFINITE_SSTHRESH);
        // Round 1: RTT 20 ms (delay_min), spaced ACKs (no train).
        for i in 0..10 {
            c.pkts_acked(&mut x, Some(20_000), 2 + i, 40, clocks(100 + 3 * i as u64));
        }
        assert!(x.in_slow_start());
        // Round 2: 8 samples of 25 ms: 5 ms above 20 + max(2.5, 4) ms.
        for i in 0..9 {
            c.pkts_acked(&mut x, Some(25_000), 41 + i, 80, clocks(200 + 3 * i as u64));
        }
        assert_eq!(x.ssthresh, 32);
        assert_eq!(c.as_cubic().unwrap().exit, Some(HystartExit::Delay));
    }

    #[test]
    fn hystart_ack_train_exit() {
        let mut c = Controller::cubic(HystartConfig::default());
        c.init(0, 1);
        let mut x = w(64, INFINITE_SSTHRESH);
        c.pkts_acked(&mut x, Some(100_000), 2, 64, clocks(0));
        // ACKs 1 ms apart: the train passes (100 + 1)/2 ms after the round started.
        let mut us = 0u64;
        let mut seq = 2;
        while x.in_slow_start() && us < 100_000 {
            us += 1000;
            seq += 1;
            c.pkts_acked(
                &mut x,
                Some(100_000),
                seq,
                64,
                Clocks {
                    jiffies: (us / 4000) as u32,
                    hz: 250,
                    now_us: us,
                },
            );
        }
        assert_eq!(c.as_cubic().unwrap().exit, Some(HystartExit::AckTrain));
        assert!((50_000..=52_000).contains(&us), "{us}");
    }
}
