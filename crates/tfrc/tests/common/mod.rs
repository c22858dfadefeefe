//! A closed-loop test harness in the style of quinn-proto's `Pair`: one [`Sender`] and one
//! [`Receiver`] joined by a path with a fixed one-way delay, an optional serialisation rate and
//! a deterministic loss pattern on the data direction. Time advances from event to event; no
//! randomness, so every run is identical.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::Duration;

use tfrc::variants::{self, VariantChoice};
use tfrc::{DataHeader, Feedback, Profile, Receiver, Sender, Time};

/// Which data packets the path drops.
#[derive(Clone, Debug)]
pub enum Loss {
    /// None.
    None,
    /// Every n-th data packet put on the path (the n-th, 2n-th, …).
    EveryNth(u64),
    /// Data packet number k (from 0) is dropped when k % period == offset (NS-2's
    /// `ErrorModel/Periodic` with `unit pkt`).
    Periodic {
        /// Period in packets.
        period: u64,
        /// Offset in packets.
        offset: u64,
    },
    /// These sequence numbers.
    Seqs(Vec<u64>),
    /// Each data packet independently with probability `p`, from a splitmix64 hash of its
    /// index and `seed` (deterministic, no RNG state).
    Bernoulli {
        /// Drop probability.
        p: f64,
        /// Stream selector.
        seed: u64,
    },
}

/// splitmix64's output function: a well-mixed 64-bit hash.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The path between sender and receiver.
#[derive(Clone, Debug)]
pub struct Path {
    /// One-way propagation delay, each direction.
    pub delay: Duration,
    /// Serialisation rate of the link, each direction, in bits/s (`None`: infinitely fast).
    pub bandwidth: Option<f64>,
    /// Data losses.
    pub loss: Loss,
    /// DropTail queue limit of the forward link in packets, with NS-2's rule: an arrival is
    /// dropped when (waiting packets + 1) >= limit (`None`: unlimited).
    pub queue_limit: Option<usize>,
}

/// The sender's own host queue in front of the forward link (issue 16 item 8): it holds at
/// most `limit` packets (waiting or in transmission at the path's `bandwidth`); a packet that
/// finds it full is refused and given back with `Sender::on_send_refused`.
#[derive(Clone, Copy, Debug)]
pub struct LocalQueue {
    /// Packets the host queue holds.
    pub limit: usize,
    /// A refusal is also a local drop (`ENOBUFS`): `Sender::on_local_congestion` is called.
    pub congestion: bool,
}

/// A sender and a receiver joined by a [`Path`].
pub struct Pair {
    /// The sender's host queue (`None`: the host takes every packet).
    pub local: Option<LocalQueue>,
    /// Packets the host queue refused.
    pub refused: u64,
    /// The host queue refused the last packet; the sender waits for room.
    blocked: bool,
    pub profile: Profile,
    pub now: Time,
    pub sender: Sender,
    pub receiver: Receiver,
    pub path: Path,
    fwd: VecDeque<(Time, DataHeader)>,
    rev: VecDeque<(Time, Feedback)>,
    link_free: Time,
    /// End times of transmissions scheduled on the forward link.
    tx_ends: VecDeque<Time>,
    rev_free: Time,
    put_on_path: u64,
    /// (send time, header) of every data packet the sender emitted.
    pub sent: Vec<(Time, DataHeader)>,
    /// (send time, feedback) of every feedback packet the receiver emitted.
    pub feedback: Vec<(Time, Feedback)>,
    /// Data packets dropped by the path's loss pattern.
    pub dropped: u64,
    /// Data packets dropped by the forward queue.
    pub queue_drops: u64,
    /// Sequence numbers the path's loss pattern dropped (the "random" losses).
    pub path_drop_seqs: Vec<u64>,
    /// Sequence numbers the forward queue dropped (congestion losses).
    pub queue_drop_seqs: Vec<u64>,
    /// On equal times, run the sender's due timers before delivering packets (default: after).
    pub timers_first: bool,
    /// A CBR application: one segment every `.0`, the next at `.1`.
    app: Option<(Duration, Time)>,
}

impl Pair {
    /// A pair whose sender has an infinite backlog from time zero.
    pub fn new(profile: Profile, path: Path) -> Pair {
        let mut p = Pair::idle(profile, path);
        p.sender.set_infinite_backlog(Time::ZERO);
        p.drain();
        p
    }

    /// A pair whose sender has no data yet.
    pub fn idle(profile: Profile, path: Path) -> Pair {
        Pair {
            local: None,
            refused: 0,
            blocked: false,
            profile,
            now: Time::ZERO,
            sender: Sender::new(profile.sender).expect("valid sender config"),
            receiver: Receiver::new(profile.receiver).expect("valid receiver config"),
            path,
            fwd: VecDeque::new(),
            rev: VecDeque::new(),
            link_free: Time::ZERO,
            tx_ends: VecDeque::new(),
            rev_free: Time::ZERO,
            put_on_path: 0,
            sent: Vec::new(),
            feedback: Vec::new(),
            dropped: 0,
            queue_drops: 0,
            path_drop_seqs: Vec::new(),
            queue_drop_seqs: Vec::new(),
            timers_first: false,
            app: None,
        }
    }

    /// A pair whose sender is driven by a CBR application pushing one segment every
    /// `interval`, the first at time zero.
    pub fn cbr(profile: Profile, path: Path, interval: Duration) -> Pair {
        let mut p = Pair::idle(profile, path);
        p.app = Some((interval, Time::ZERO));
        p
    }

    fn drops(&self, h: &DataHeader, index: u64) -> bool {
        match &self.path.loss {
            Loss::None => false,
            Loss::EveryNth(n) => *n > 0 && index % n == n - 1,
            Loss::Periodic { period, offset } => *period > 0 && index % period == *offset,
            Loss::Seqs(s) => s.contains(&h.seq),
            Loss::Bernoulli { p, seed } => {
                let u =
                    (splitmix64(index ^ seed.rotate_left(32)) >> 11) as f64 / (1u64 << 53) as f64;
                u < *p
            }
        }
    }

    /// Collect the outputs of both ends at `self.now`.
    fn drain(&mut self) {
        let now = self.now;
        while !self.blocked {
            let Some(h) = self.sender.poll_transmit(now) else {
                break;
            };
            if let Some(local) = self.local {
                while self.tx_ends.front().is_some_and(|&e| e <= now) {
                    self.tx_ends.pop_front();
                }
                if self.tx_ends.len() >= local.limit {
                    assert!(self.sender.on_send_refused(now, &h), "refusal not undone");
                    if local.congestion {
                        self.sender.on_local_congestion(now);
                    }
                    self.refused += 1;
                    self.blocked = true;
                    break;
                }
            }
            self.sent.push((now, h));
            let index = self.put_on_path;
            self.put_on_path += 1;
            if let Some(limit) = self.path.queue_limit {
                while self.tx_ends.front().is_some_and(|&e| e <= now) {
                    self.tx_ends.pop_front();
                }
                let waiting = self.tx_ends.len().saturating_sub(1);
                if waiting + 1 >= limit {
                    self.queue_drops += 1;
                    self.queue_drop_seqs.push(h.seq);
                    continue;
                }
            }
            let start = now.max(self.link_free);
            let tx = self.serialisation(self.profile.data_wire_len());
            self.link_free = start + tx;
            self.tx_ends.push_back(self.link_free);
            if self.drops(&h, index) {
                self.dropped += 1;
                self.path_drop_seqs.push(h.seq);
                continue;
            }
            self.fwd.push_back((start + tx + self.path.delay, h));
        }
        if let Some(fb) = self.receiver.poll_feedback(now) {
            self.feedback.push((now, fb));
            let start = now.max(self.rev_free);
            self.rev_free = start + self.serialisation(self.profile.feedback_wire_len());
            self.rev.push_back((self.rev_free + self.path.delay, fb));
        }
    }

    fn serialisation(&self, bytes: u32) -> Duration {
        match self.path.bandwidth {
            // Whole nanoseconds, rounded, like a simulator clock.
            Some(bw) => Duration::from_nanos((f64::from(bytes) * 8.0 / bw * 1e9).round() as u64),
            None => Duration::ZERO,
        }
    }

    /// The time of the next event, if any.
    fn next_event(&self) -> Option<Time> {
        // Blocked, the next packet is due already: wait for room (the next packet to leave the
        // host queue) or the nofeedback timer.
        let sender = if self.blocked {
            self.sender
                .status()
                .nofeedback_at
                .into_iter()
                .chain(self.tx_ends.front().copied())
                .min()
        } else {
            self.sender.poll_timeout()
        };
        [
            sender,
            self.receiver.poll_timeout(),
            self.fwd.front().map(|e| e.0),
            self.rev.front().map(|e| e.0),
            self.app.map(|a| a.1),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Process events up to and including `until`.
    pub fn run_until(&mut self, until: Time) {
        let mut guard = 0u64;
        while let Some(t) = self.next_event() {
            if t > until {
                break;
            }
            guard += 1;
            assert!(guard < 50_000_000, "no progress at {:?}", self.now);
            self.now = self.now.max(t);
            let now = self.now;
            self.blocked = false;
            if let Some((interval, next)) = self.app {
                if next <= now {
                    self.sender.push_packets(now, 1);
                    self.app = Some((interval, next + interval));
                    self.drain();
                }
            }
            if self.timers_first {
                if self.sender.poll_timeout().is_some_and(|x| x <= now) {
                    self.sender.on_timeout(now);
                }
                self.drain();
            }
            while self.fwd.front().is_some_and(|e| e.0 <= now) {
                let (_, h) = self.fwd.pop_front().unwrap();
                self.receiver.on_data(now, &h, self.profile.data_wire_len());
                self.drain();
            }
            while self.rev.front().is_some_and(|e| e.0 <= now) {
                let (_, fb) = self.rev.pop_front().unwrap();
                self.sender.on_feedback(now, &fb);
                self.drain();
            }
            if self.sender.poll_timeout().is_some_and(|x| x <= now) {
                self.sender.on_timeout(now);
            }
            if self.receiver.poll_timeout().is_some_and(|x| x <= now) {
                self.receiver.on_timeout(now);
            }
            self.drain();
        }
        self.now = self.now.max(until);
    }

    /// Mean sending rate in bytes/s (segments of s bytes) over packets sent in [from, to).
    pub fn send_rate(&self, from: Time, to: Time) -> f64 {
        let n = self
            .sent
            .iter()
            .filter(|(t, _)| *t >= from && *t < to)
            .count();
        n as f64 * f64::from(self.profile.sender.segment_size) / (to - from).as_secs_f64()
    }
}

/// Seconds to [`Time`].
pub fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

/// The `rfc5348` profile with the seed variants `names` (`"veno"`, `"simd:beta=0.5"`, …).
pub fn profile(names: &[&str]) -> Profile {
    let c: Vec<VariantChoice> = names.iter().map(|n| n.parse().unwrap()).collect();
    variants::apply(Profile::rfc5348(), &c).unwrap()
}

/// A path of `delay_ms` one way, no rate limit or queue, dropping data by `loss`.
pub fn path(delay_ms: u64, loss: Loss) -> Path {
    Path {
        delay: Duration::from_millis(delay_ms),
        bandwidth: None,
        loss,
        queue_limit: None,
    }
}

/// Mean send rate of profile `p` on `path` over [from, to) seconds.
pub fn rate(p: &Profile, path: Path, from: f64, to: f64) -> f64 {
    let mut pair = Pair::new(*p, path);
    pair.run_until(secs(to));
    pair.send_rate(secs(from), secs(to))
}
