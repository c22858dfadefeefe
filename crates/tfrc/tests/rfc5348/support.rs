//! Helpers and the RFC's formulas, written out here so that no expected value comes from the
//! code under test.

#![allow(dead_code)]

use std::time::Duration;

use tfrc::{Arrival, DataHeader, Feedback, Profile, Receiver, Sender, Time};

/// `x` milliseconds as a [`Time`].
pub fn ms(x: u64) -> Time {
    Time::from_nanos(x * 1_000_000)
}

/// `x` microseconds as a [`Time`].
pub fn us(x: u64) -> Time {
    Time::from_nanos(x * 1_000)
}

/// s of both presets, bytes.
pub const S: f64 = 1000.0;

/// t_mbi of §4.3, seconds.
pub const T_MBI: f64 = 64.0;

pub fn rfc_tx() -> Sender {
    Sender::new(Profile::rfc5348().sender).unwrap()
}

pub fn ns2_tx() -> Sender {
    Sender::new(Profile::ns2().sender).unwrap()
}

pub fn rfc_rx() -> Receiver {
    Receiver::new(Profile::rfc5348().receiver).unwrap()
}

pub fn ns2_rx() -> Receiver {
    Receiver::new(Profile::ns2().receiver).unwrap()
}

/// A feedback whose RTT sample is `now − echo` (t_delay = 0).
pub fn fb(echo: Time, x_recv: f64, p: f64) -> Feedback {
    Feedback {
        timestamp_echo: echo,
        elapsed: Duration::ZERO,
        x_recv,
        p,
        highest_seq: 0,
        hops: None,
        link_errors: 0,
        lost_per_event: 1.0,
    }
}

/// §3.1 with b = 1: X_Bps = s / (R·sqrt(2p/3) + t_RTO·(3·sqrt(3p/8)·p·(1 + 32p²))).
pub fn x_bps(s: f64, r: f64, t_rto: f64, p: f64) -> f64 {
    s / (r * (2.0 * p / 3.0).sqrt()
        + t_rto * (3.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p)))
}

/// NS-2.35's form of the equation (`docs/tfrc-core.md` N11): 3·sqrt(3p/8) clamped at 1.
pub fn x_bps_ns2(s: f64, r: f64, t_rto: f64, p: f64) -> f64 {
    let c = (3.0 * (3.0 * p / 8.0).sqrt()).min(1.0);
    (s / (r * (2.0 * p / 3.0).sqrt() + t_rto * (c * p * (1.0 + 32.0 * p * p)))).min(25e6)
}

/// §8.1: f(p) = sqrt(2p/3) + 12·sqrt(3p/8)·p·(1 + 32p²).
pub fn f(p: f64) -> f64 {
    (2.0 * p / 3.0).sqrt() + 12.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p)
}

/// §4.2: W_init = min(4·MSS, max(2·MSS, 4380)).
pub fn w_init(s: f64) -> f64 {
    (4.0 * s).min((2.0 * s).max(4380.0))
}

/// §5.4's weights.
pub fn w(i: usize, n: usize) -> f64 {
    if i < n / 2 {
        1.0
    } else {
        2.0 * (n - i) as f64 / (n + 2) as f64
    }
}

/// §5.4's I_mean for I_0 = `i[0]` and closed intervals `i[1..]` (k = i.len() − 1 ≤ n).
pub fn i_mean(i: &[f64], n: usize) -> f64 {
    let k = (i.len() - 1).min(n);
    let (mut t0, mut t1, mut wt) = (0.0, 0.0, 0.0);
    for j in 0..k {
        t0 += i[j] * w(j, n);
        wt += w(j, n);
    }
    for j in 1..=k {
        t1 += i[j] * w(j - 1, n);
    }
    t0.max(t1) / wt
}

pub fn close(a: f64, b: f64, rel: f64) -> bool {
    ((a - b) / b).abs() <= rel
}

/// A data header as a sender would write it.
pub fn hdr(seq: u64, ts: Time, rtt: Duration) -> DataHeader {
    DataHeader {
        seq,
        timestamp: ts,
        rtt,
        t_rto: 4 * rtt,
        segment_size: 1000,
        // A new sender round every 10 packets (100 ms), as feedback would start one.
        round: (seq / 10) as u32,
        urgent: false,
        initial_ttl: 64,
    }
}

/// Packet `seq` of a 10-ms-spaced stream (sent at 10·seq ms) carrying R = `rtt_ms`, arriving
/// 50 ms after it was sent. Fires the receiver's due timers first (answering each), delivers,
/// and returns the feedback produced at the arrival instant, if any.
pub fn deliver(r: &mut Receiver, seq: u64, rtt_ms: u64) -> Option<Feedback> {
    deliver_at(r, seq, ms(10 * seq + 50), rtt_ms, false)
}

/// As [`deliver`], arriving at `now`, CE-marked if `ce`.
pub fn deliver_at(
    r: &mut Receiver,
    seq: u64,
    now: Time,
    rtt_ms: u64,
    ce: bool,
) -> Option<Feedback> {
    fire_timers(r, now);
    let h = hdr(seq, ms(10 * seq), Duration::from_millis(rtt_ms));
    r.on_data_with(
        now,
        &h,
        Arrival {
            wire_len: 1036,
            ce,
            ttl: None,
        },
    );
    r.poll_feedback(now)
}

/// Fire receiver timers due strictly before `now`, returning the feedback each produced.
pub fn fire_timers(r: &mut Receiver, now: Time) -> Vec<(Time, Feedback)> {
    let mut out = Vec::new();
    while let Some(t) = r.poll_timeout() {
        if t >= now {
            break;
        }
        r.on_timeout(t);
        if let Some(f) = r.poll_feedback(t) {
            out.push((t, f));
        }
        if r.poll_timeout() == Some(t) {
            break;
        }
    }
    out
}

/// Drive a sender alone up to `until`: wake at each `poll_timeout`, run its timers, and
/// collect the send times.
pub fn run(s: &mut Sender, until: Time) -> Vec<Time> {
    let mut out = Vec::new();
    while let Some(t) = s.poll_timeout() {
        if t > until {
            break;
        }
        s.on_timeout(t);
        while s.poll_transmit(t).is_some() {
            out.push(t);
        }
    }
    out
}

/// A sender with an infinite backlog from t = 0 that sent its first packet at 0 and got the
/// first feedback (R_sample = 100 ms, X_recv = 0, p = 0) at 100 ms.
pub fn started(mut s: Sender) -> Sender {
    s.set_infinite_backlog(ms(0));
    while s.poll_transmit(ms(0)).is_some() {}
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s
}

/// splitmix64's output function: a deterministic hash for loss and jitter decisions.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A uniform number in [0, 1) from `(a, b)`.
pub fn unit(a: u64, b: u64) -> f64 {
    (splitmix64(a ^ b.rotate_left(32)) >> 11) as f64 / (1u64 << 53) as f64
}

/// A scripted closed loop: sender → (loss, jitter) → a relay that releases data only at
/// multiples of `batch` → receiver, whose timers fire at the next multiple of `gran`; feedback
/// returns after `one_way`. Everything is integer nanoseconds and deterministic.
pub struct Loop {
    pub tx: Sender,
    pub rx: Receiver,
    pub one_way: Duration,
    pub batch: Duration,
    pub gran: Duration,
    pub loss: f64,
    pub seed: u64,
    /// Drop the data packet with sequence number 0.
    pub drop_first: bool,
    /// Extra delay of each data packet, uniform in [0, jitter) (reorders packets).
    pub jitter: Duration,
    pub now: Time,
    /// (due at the relay, header)
    to_relay: Vec<(Time, tfrc::DataHeader)>,
    to_tx: Vec<(Time, Feedback)>,
    /// Data packets the sender emitted.
    pub sent: u64,
    /// Every feedback the sender received, with its arrival time.
    pub feedbacks: Vec<(Time, Feedback)>,
}

impl Loop {
    pub fn new(profile: Profile, one_way: Duration) -> Loop {
        Loop {
            tx: Sender::new(profile.sender).unwrap(),
            rx: Receiver::new(profile.receiver).unwrap(),
            one_way,
            batch: Duration::ZERO,
            gran: Duration::ZERO,
            loss: 0.0,
            seed: 1,
            drop_first: false,
            jitter: Duration::ZERO,
            now: Time::ZERO,
            to_relay: Vec::new(),
            to_tx: Vec::new(),
            sent: 0,
            feedbacks: Vec::new(),
        }
    }

    fn up(t: Time, step: Duration) -> Time {
        let step = step.as_nanos() as u64;
        if step == 0 {
            return t;
        }
        let n = t.as_nanos();
        Time::from_nanos(n.div_ceil(step) * step)
    }

    fn send(&mut self, now: Time) {
        while let Some(h) = self.tx.poll_transmit(now) {
            self.sent += 1;
            if (self.drop_first && h.seq == 0) || unit(h.seq, self.seed) < self.loss {
                continue;
            }
            let j = (unit(h.seq, self.seed ^ 0x5555) * self.jitter.as_nanos() as f64) as u64;
            let at = now + self.one_way + Duration::from_nanos(j);
            self.to_relay.push((at, h));
        }
    }

    fn answer(&mut self, now: Time) {
        if let Some(f) = self.rx.poll_feedback(now) {
            self.to_tx.push((now + self.one_way, f));
        }
    }

    /// Run until `until`, calling `check(now, sender, feedback_input)` after every sender input.
    pub fn run(&mut self, until: Time, mut check: impl FnMut(Time, &Sender, Option<&Feedback>)) {
        let mut guard = 0u64;
        loop {
            let release = self
                .to_relay
                .iter()
                .map(|e| Self::up(e.0, self.batch))
                .min();
            let next = [
                self.tx.poll_timeout(),
                self.rx.poll_timeout().map(|t| Self::up(t, self.gran)),
                release,
                self.to_tx.iter().map(|e| e.0).min(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(t) = next else { break };
            if t > until {
                break;
            }
            guard += 1;
            assert!(guard < 20_000_000, "no progress at {t:?}");
            let now = t.max(self.now);
            self.now = now;
            // Data released by the relay, in sequence order within a batch.
            let mut due: Vec<_> = Vec::new();
            self.to_relay.retain(|e| {
                let d = Self::up(e.0, self.batch) <= now;
                if d {
                    due.push(e.1);
                }
                !d
            });
            due.sort_by_key(|h| h.seq);
            for h in due {
                self.rx.on_data(now, &h, 1036);
                self.answer(now);
            }
            if self
                .rx
                .poll_timeout()
                .is_some_and(|r| Self::up(r, self.gran) <= now)
            {
                self.rx.on_timeout(now);
                self.answer(now);
            }
            let mut fbs: Vec<_> = Vec::new();
            self.to_tx.retain(|e| {
                let d = e.0 <= now;
                if d {
                    fbs.push(e.1);
                }
                !d
            });
            for f in fbs {
                self.tx.on_feedback(now, &f);
                self.feedbacks.push((now, f));
                check(now, &self.tx, Some(&f));
                self.send(now);
            }
            if self.tx.poll_timeout().is_some_and(|x| x <= now) {
                self.tx.on_timeout(now);
                check(now, &self.tx, None);
            }
            self.send(now);
        }
        self.now = until;
    }
}
