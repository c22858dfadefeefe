//! What a validated HELLO must pass before the receiver spends a handshake on it: its retry
//! token not used before, and a budget of handshakes per sender address and overall.
//!
//! A retry token proves that its sender receives at its address, but it can be copied: before,
//! one valid token replayed with a garbage Noise message made the receiver run a handshake (and
//! build a session's core) per copy, about 87 µs each, so 10,000 copies a second starved a real
//! session (issue 29). Now a token opens at most one handshake ([`UsedTokens`]), and tokens
//! fetched anew from one address, or from many, cannot buy more handshakes than the budgets
//! ([`Budgets`]) allow, so the handshake work a second is bounded whatever arrives.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::IpAddr;
use std::time::Duration;

use tfrc::Time;

/// Tokens that opened a handshake, kept until they expire (a token is only valid for its
/// lifetime, so an expired one is refused anyway and need not be remembered).
#[derive(Debug, Default)]
pub struct UsedTokens {
    set: HashSet<[u8; 16]>,
    order: VecDeque<(Time, [u8; 16])>,
}

impl UsedTokens {
    /// Forget tokens used more than `lifetime` before `now` (they have expired: a token is
    /// used after it was minted).
    fn expire(&mut self, now: Time, lifetime: Duration) {
        while let Some(&(t, k)) = self.order.front() {
            if t + lifetime >= now {
                break;
            }
            self.order.pop_front();
            self.set.remove(&k);
        }
    }

    /// Whether `token` was used already.
    pub fn is_used(&mut self, now: Time, lifetime: Duration, token: &[u8]) -> bool {
        self.expire(now, lifetime);
        self.set.contains(&key(token))
    }

    /// Remember `token` as used at `now`.
    pub fn mark(&mut self, now: Time, token: &[u8]) {
        let k = key(token);
        if self.set.insert(k) {
            self.order.push_back((now, k));
        }
    }

    /// Tokens remembered.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// None remembered.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

/// The token's MAC part identifies it (the rest is its mint time, covered by the MAC).
fn key(token: &[u8]) -> [u8; 16] {
    let mut k = [0u8; 16];
    let tail = &token[token.len().saturating_sub(16)..];
    k[..tail.len()].copy_from_slice(tail);
    k
}

/// A token bucket: `burst` handshakes at once, `rate` a second after that.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Time,
}

impl Bucket {
    fn take(&mut self, now: Time, rate: f64, burst: f64) -> bool {
        let dt = now.saturating_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + dt * rate).min(burst);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// How many handshakes the receiver runs: per sender IP address and overall.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandshakeBudget {
    /// Handshakes a second from one IP address, sustained.
    pub per_address_rate: f64,
    /// Handshakes one IP address may run at once before the rate applies.
    pub per_address_burst: u32,
    /// Handshakes a second overall, sustained.
    pub global_rate: f64,
    /// Handshakes at once overall.
    pub global_burst: u32,
}

impl Default for HandshakeBudget {
    /// 4 a second from one address (burst 8), 500 a second overall (burst 500): an IK
    /// handshake costs the receiver about 0.1 ms, so the budget holds handshakes to about 5% of
    /// one core whatever arrives, and a host opening a few sessions never meets it.
    fn default() -> Self {
        HandshakeBudget {
            per_address_rate: 4.0,
            per_address_burst: 8,
            global_rate: 500.0,
            global_burst: 500,
        }
    }
}

/// The budgets' state. Per-address buckets are forgotten once full again, so their number is
/// bounded by the addresses seen within `burst / rate` seconds, each of which needed a valid
/// token (a round trip from that address).
#[derive(Debug)]
pub struct Budgets {
    cfg: HandshakeBudget,
    global: Bucket,
    per_addr: HashMap<IpAddr, Bucket>,
    last_sweep: Time,
}

impl Budgets {
    /// Budgets that start full at `now`.
    pub fn new(cfg: HandshakeBudget, now: Time) -> Budgets {
        Budgets {
            cfg,
            global: Bucket {
                tokens: f64::from(cfg.global_burst),
                at: now,
            },
            per_addr: HashMap::new(),
            last_sweep: now,
        }
    }

    /// Take one handshake for `ip` at `now`; false when either budget is spent (nothing taken).
    pub fn take(&mut self, now: Time, ip: IpAddr) -> bool {
        let c = self.cfg;
        let pa_burst = f64::from(c.per_address_burst.max(1));
        self.sweep(now);
        let mut mine = *self.per_addr.get(&ip).unwrap_or(&Bucket {
            tokens: pa_burst,
            at: now,
        });
        let mut global = self.global;
        if !mine.take(now, c.per_address_rate, pa_burst)
            || !global.take(now, c.global_rate, f64::from(c.global_burst.max(1)))
        {
            // Nothing spent: the stored buckets refill from where they were.
            return false;
        }
        self.global = global;
        self.per_addr.insert(ip, mine);
        true
    }

    /// Drop per-address buckets that have refilled (at most once a second).
    fn sweep(&mut self, now: Time) {
        if now.saturating_since(self.last_sweep) < Duration::from_secs(1) {
            return;
        }
        self.last_sweep = now;
        let c = self.cfg;
        let burst = f64::from(c.per_address_burst.max(1));
        self.per_addr.retain(|_, b| {
            b.tokens + now.saturating_since(b.at).as_secs_f64() * c.per_address_rate < burst
        });
    }

    /// Addresses with a bucket not yet full.
    pub fn tracked_addresses(&self) -> usize {
        self.per_addr.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> Time {
        Time::from_nanos(t * 1_000_000)
    }

    #[test]
    fn a_token_opens_one_handshake_until_it_expires() {
        let mut u = UsedTokens::default();
        let life = Duration::from_secs(10);
        let t = [7u8; 24];
        assert!(!u.is_used(ms(0), life, &t));
        u.mark(ms(0), &t);
        assert!(u.is_used(ms(5_000), life, &t));
        assert!(!u.is_used(ms(5_000), life, &[8u8; 24]));
        // Forgotten once its lifetime is over (the token is expired by then).
        assert!(!u.is_used(ms(10_001), life, &t));
        assert!(u.is_empty());
    }

    #[test]
    fn budgets_hold_per_address_and_overall() {
        let cfg = HandshakeBudget {
            per_address_rate: 2.0,
            per_address_burst: 3,
            global_rate: 10.0,
            global_burst: 5,
        };
        let mut b = Budgets::new(cfg, ms(0));
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let c: IpAddr = "10.0.0.2".parse().unwrap();
        assert_eq!((0..10).filter(|_| b.take(ms(0), a)).count(), 3, "burst");
        assert_eq!((0..10).filter(|_| b.take(ms(0), c)).count(), 2, "global");
        // Half a second later: one more for `a` (2/s), the global bucket has 5 more.
        assert_eq!((0..10).filter(|_| b.take(ms(500), a)).count(), 1);
        // Refilled buckets are forgotten.
        assert!(b.take(ms(10_000), c));
        assert!(b.tracked_addresses() <= 1);
    }
}
