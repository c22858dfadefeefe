//! The IP TTL of data packets and which packets are protected: seed 000 §3.3 (E5 adaptive TTL,
//! eq. 11; E6 protection of raised-TTL packets), as read in `docs/variants.md`.

/// The IP TTL the sender writes into each data packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TtlPolicy {
    /// A fixed TTL (NS-2's default is 32).
    Fixed(u8),
    /// Seed 000 eq. 11 (E5).
    Adaptive(AdaptiveTtl),
}

/// Seed 000 eq. 11 (E5):
/// ```text
/// TTL_rt  = a*h_i + (1-a)*h_(i-1) + (h_i - h_(i-1)),     0.5 <= a < 1
/// TTL_new = max(TTL_min, min(TTL_rt, TTL_max))
/// ```
/// Observations `h` are the smallest TTL that reaches the receiver: `hops + margin` from each
/// feedback's hop count (hops = initial − received TTL), and `TTL_used + 1` from a time-exceeded
/// notice for a packet sent with the TTL currently in use. TTL_rt is rounded up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveTtl {
    /// Weight of the newest observation, in [0.5, 1) (default 0.75).
    pub a: f64,
    /// TTL_min (default 32, NS-2's TTL; also the TTL before any observation).
    pub min: u8,
    /// TTL_max (default 255).
    pub max: u8,
    /// Added to a feedback's hop count to make an observation (default 1: a router drops a
    /// packet whose TTL reaches 0, so a path of `hops` decrements needs TTL `hops + 1`; 0 is the
    /// paper-literal "h = hops", with which the TTL settles at the path length and every packet
    /// dies at the last router once the path is longer than TTL_min).
    pub margin: u8,
}

impl AdaptiveTtl {
    /// The defaults of `docs/variants.md`: a = 0.75, TTL_min = 32, TTL_max = 255, margin 1.
    pub const DEFAULT: AdaptiveTtl = AdaptiveTtl {
        a: 0.75,
        min: 32,
        max: 255,
        margin: 1,
    };

    /// Eq. 11 for observations `h_prev` then `h`: the TTL to use.
    pub fn next_ttl(&self, h_prev: f64, h: f64) -> u8 {
        let rt = self.a * h + (1.0 - self.a) * h_prev + (h - h_prev);
        let (lo, hi) = (f64::from(self.min.min(self.max)), f64::from(self.max));
        let rt = if rt.is_nan() { lo } else { rt.ceil() };
        rt.clamp(lo, hi) as u8
    }
}

/// Which data packets are protected (E6, seed 000 §3.3: "RSA … is applied to each increased TTL
/// packet or any packet that needs security").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtectPolicy {
    /// None.
    Off,
    /// Packets whose TTL exceeds this fixed baseline (the baseline of `docs/variants.md`: 32).
    AboveBaseline(u8),
    /// Every data packet.
    All,
}

impl ProtectPolicy {
    /// Whether a packet sent with TTL `ttl` is protected.
    pub fn protects(&self, ttl: u8) -> bool {
        match *self {
            ProtectPolicy::Off => false,
            ProtectPolicy::AboveBaseline(b) => ttl > b,
            ProtectPolicy::All => true,
        }
    }
}

/// The sender's TTL state.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TtlState {
    policy: TtlPolicy,
    ttl: u8,
    /// h_i, once observed.
    last: Option<f64>,
}

impl TtlState {
    pub(crate) fn new(policy: TtlPolicy) -> TtlState {
        let ttl = match policy {
            TtlPolicy::Fixed(t) => t,
            TtlPolicy::Adaptive(a) => a.min.min(a.max),
        };
        TtlState {
            policy,
            ttl,
            last: None,
        }
    }

    pub(crate) fn ttl(&self) -> u8 {
        self.ttl
    }

    fn observe(&mut self, h: f64) {
        let TtlPolicy::Adaptive(a) = self.policy else {
            return;
        };
        // The first observation has no predecessor: h_(i-1) = h_i (no trend).
        let prev = self.last.unwrap_or(h);
        self.ttl = a.next_ttl(prev, h);
        self.last = Some(h);
    }

    /// A feedback reported the hop count of a data packet.
    pub(crate) fn on_hops(&mut self, hops: u8) {
        if let TtlPolicy::Adaptive(a) = self.policy {
            self.observe(f64::from(hops) + f64::from(a.margin));
        }
    }

    /// A packet sent with TTL `sent` expired. `docs/variants.md` E5: the observation is `TTL_used +
    /// 1`. A notice for a packet sent with less than the current TTL says nothing new (the sender
    /// already sends with more) and, were it observed, its trend term would pull the TTL back down
    /// while the packets of the old TTL drain; it is ignored.
    pub(crate) fn on_exceeded(&mut self, sent: u8) {
        if sent >= self.ttl {
            self.observe(f64::from(sent) + 1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 000 eq. 11 by hand with a = 0.75: h = 33 after 21 gives 0.75·33 + 0.25·21 + 12 = 42;
    /// then 41 after 33: 30.75 + 8.25 + 8 = 47; then 41 after 41: 41.
    #[test]
    fn seed000_eq11_by_hand() {
        let a = AdaptiveTtl::DEFAULT;
        assert_eq!(a.next_ttl(21.0, 33.0), 42);
        assert_eq!(a.next_ttl(33.0, 41.0), 47);
        assert_eq!(a.next_ttl(41.0, 41.0), 41);
        // 0.75·40 + 0.25·41 − 1 = 39.25, rounded up to 40.
        assert_eq!(a.next_ttl(41.0, 40.0), 40);
        // Clamped into [TTL_min, TTL_max].
        assert_eq!(a.next_ttl(21.0, 21.0), 32);
        assert_eq!(a.next_ttl(100.0, 250.0), 255);
        assert_eq!(a.next_ttl(f64::NAN, 40.0), 32);
    }

    /// E5 reading: a path-length increase (time-exceeded at the current TTL) raises the TTL
    /// above the new path; stale notices are ignored.
    #[test]
    fn path_increase_raises_ttl() {
        let mut s = TtlState::new(TtlPolicy::Adaptive(AdaptiveTtl::DEFAULT));
        assert_eq!(s.ttl(), 32);
        s.on_hops(20); // h = 21
        assert_eq!(s.ttl(), 32);
        s.on_exceeded(32); // h = 33 after 21 → 42
        assert_eq!(s.ttl(), 42);
        s.on_exceeded(32); // stale: sent below the current 42
        assert_eq!(s.ttl(), 42);
        s.on_hops(40); // h = 41 after 33 → 47
        assert_eq!(s.ttl(), 47);
        s.on_hops(40); // 41 after 41 → 41 = 40 hops + 1
        assert_eq!(s.ttl(), 41);
        let mut f = TtlState::new(TtlPolicy::Fixed(32));
        f.on_hops(40);
        f.on_exceeded(32);
        assert_eq!(f.ttl(), 32);
    }

    #[test]
    fn protect_policy() {
        assert!(!ProtectPolicy::Off.protects(255));
        assert!(!ProtectPolicy::AboveBaseline(32).protects(32));
        assert!(ProtectPolicy::AboveBaseline(32).protects(33));
        assert!(ProtectPolicy::All.protects(1));
    }
}
