//! A wireless hop with 802.11-style link-layer retransmission (ARQ).
//!
//! Each frame is transmitted until it gets through or `retry_limit` attempts have failed; every
//! retry costs another transmission time plus a random backoff drawn from a contention window
//! that doubles per retry (802.11 DCF). Frame losses thus become delay, and only a frame that
//! fails every attempt becomes a packet loss (cause `link`). The link is busy for the whole
//! exchange.

use core::time::Duration;

use rand::{Rng, RngCore};

use crate::loss::{LossConfig, LossModel};
use crate::packet::Packet;

/// Wireless hop parameters (802.11b DSSS timing by default).
#[derive(Clone, Debug, PartialEq)]
pub struct WirelessConfig {
    /// Per-attempt frame loss (Bernoulli or Gilbert–Elliott, stepped per attempt).
    pub frame_loss: LossConfig,
    /// Transmission attempts per frame, first one included (802.11 dot11ShortRetryLimit, 7).
    pub retry_limit: u32,
    /// Backoff slot time (20 µs).
    pub slot: Duration,
    /// Initial contention window in slots (CWmin 31).
    pub cw_min: u32,
    /// Largest contention window (CWmax 1023).
    pub cw_max: u32,
    /// Fixed cost added to every attempt (interframe spaces, link-layer ACK); 0 by default so a
    /// loss-free wireless hop behaves like a wired link.
    pub attempt_overhead: Duration,
}

impl Default for WirelessConfig {
    fn default() -> Self {
        WirelessConfig {
            frame_loss: LossConfig::Bernoulli { p: 0.0 },
            retry_limit: 7,
            slot: Duration::from_micros(20),
            cw_min: 31,
            cw_max: 1023,
            attempt_overhead: Duration::ZERO,
        }
    }
}

/// The outcome of sending one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// How long the link is busy (all attempts and backoffs), in nanoseconds.
    pub busy_ns: u64,
    /// Attempts made.
    pub attempts: u32,
    /// Whether an attempt got through.
    pub delivered: bool,
}

/// A wireless hop instance.
#[derive(Clone, Debug)]
pub struct Wireless {
    cfg: WirelessConfig,
    frames: LossModel,
}

impl Wireless {
    /// A hop in its initial state.
    pub fn new(cfg: WirelessConfig) -> Self {
        Wireless {
            frames: LossModel::new(&cfg.frame_loss),
            cfg,
        }
    }

    /// Send `pkt`, whose single transmission takes `tx_ns`.
    pub fn exchange(&mut self, pkt: &Packet, tx_ns: u64, rng: &mut impl RngCore) -> Exchange {
        let per_attempt = tx_ns.saturating_add(nanos(self.cfg.attempt_overhead));
        let limit = self.cfg.retry_limit.max(1);
        let mut busy = 0u64;
        let mut cw = u64::from(self.cfg.cw_min);
        for attempt in 1..=limit {
            if attempt > 1 {
                // 802.11: uniform backoff in [0, CW] slots, CW = min(2·(CW+1) − 1, CWmax).
                let slots = rng.gen_range(0..=cw);
                busy = busy.saturating_add(slots.saturating_mul(nanos(self.cfg.slot)));
                cw = (2 * (cw + 1) - 1).min(u64::from(self.cfg.cw_max.max(self.cfg.cw_min)));
            }
            busy = busy.saturating_add(per_attempt);
            if !self.frames.lose(pkt, rng) {
                return Exchange {
                    busy_ns: busy,
                    attempts: attempt,
                    delivered: true,
                };
            }
        }
        Exchange {
            busy_ns: busy,
            attempts: limit,
            delivered: false,
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::packet;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn retries_turn_loss_into_delay() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut w = Wireless::new(WirelessConfig {
            frame_loss: LossConfig::Bernoulli { p: 0.3 },
            ..WirelessConfig::default()
        });
        let n = 100_000;
        let tx = 727_000; // 1000 bytes at 11 Mb/s
        let mut lost = 0;
        let mut attempts = 0u64;
        let mut retried_busy = 0u64;
        let mut retried = 0u64;
        for _ in 0..n {
            let e = w.exchange(&packet(0, 1000), tx, &mut rng);
            attempts += u64::from(e.attempts);
            lost += u32::from(!e.delivered);
            if e.attempts == 2 {
                retried_busy += e.busy_ns - 2 * tx;
                retried += 1;
            }
        }
        // Residual loss p^7 = 2.2e-4 → 22 expected in 1e5; Poisson sd 4.7, allow 4 sd.
        assert!((f64::from(lost) - 21.87).abs() < 19.0, "lost {lost}");
        // Mean attempts (1 − p^7)/(1 − p) = 1.4283; sd per frame ≈ 0.78, of the mean 0.0025.
        let mean = attempts as f64 / n as f64;
        assert!((mean - 1.4283).abs() < 0.01, "attempts {mean}");
        // One retry: backoff uniform in 0..=31 slots of 20 µs, mean 310 µs, sd 185 µs; over
        // ~21 000 frames the mean's sd is 1.3 µs: allow 6 µs.
        let mean_backoff = retried_busy as f64 / retried as f64;
        assert!((mean_backoff - 310_000.0).abs() < 6_000.0, "{mean_backoff}");
    }

    #[test]
    fn lossless_hop_is_one_transmission() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut w = Wireless::new(WirelessConfig::default());
        let e = w.exchange(&packet(0, 1000), 1000, &mut rng);
        assert_eq!(
            e,
            Exchange {
                busy_ns: 1000,
                attempts: 1,
                delivered: true
            }
        );
    }
}
