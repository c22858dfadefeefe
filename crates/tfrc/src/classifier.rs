//! Loss classification at the receiver: seed 002's one-way-delay rule (Xu, Chu, Wu, Meng, "An
//! Improved TFRC Scheme for Wired/Wireless Hybrid Networks"; `docs/variants.md` seed 002).
//!
//! For data packet i, `SLD_i = recv_time_i - send_time_i` and (seed 002 eq. 4)
//! `avgSLD_i = a*avgSLD_(i-1) + (1-a)*SLD_i`. A loss revealed by packet j is congestion when
//! (eq. 9 with K = K_frac·avgSLD_(j-1)) `eta = SLD_j/avgSLD_(j-1) > K_frac/(1-a) + 1`, and a
//! wireless (link-error) loss otherwise; wireless losses stay out of the loss-event history.

use crate::Time;

/// The cause the receiver assigns to a lost packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LossClass {
    /// Queue overflow or AQM drop: enters the loss-event history (RFC 5348 §5).
    Congestion,
    /// A link error (seed 002's "wireless link error loss"): kept out of the history.
    Wireless,
}

/// One classification decision: lost sequence numbers `lo..=hi` and their class. The simulator,
/// which knows the true cause of every drop, builds the classifier's confusion matrix from these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossDecision {
    /// First lost sequence number.
    pub lo: u64,
    /// Last lost sequence number (inclusive).
    pub hi: u64,
    /// The class given to all of them (they were revealed by the same packet).
    pub class: LossClass,
}

impl LossDecision {
    /// The sequence numbers of the decision.
    pub fn seqs(&self) -> core::ops::RangeInclusive<u64> {
        self.lo..=self.hi
    }
}

/// How the one-way delay is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwdClock {
    /// Sender and receiver clocks agree (the simulator): `SLD = recv - send`.
    Synchronized,
    /// Real networks, where the clocks differ by an unknown offset (`docs/variants.md` seed 002
    /// "Clocks"): `SLD - min(SLD) + base`, `base` half the minimum RTT the sender reports in its
    /// headers.
    MinOffset,
}

/// Seed 002's one-way-delay loss classifier.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OwdClassifier {
    /// EWMA weight of the old average (seed 002: 0.95, "the best choice for α").
    pub a: f64,
    /// K as a fraction of avgSLD_(j-1) (seed 002: "K is generally set to be 0.1 × avgSLD").
    pub k_frac: f64,
    /// Clock handling.
    pub clock: OwdClock,
}

impl OwdClassifier {
    /// Seed 002's values: a = 0.95, K_frac = 0.1 (threshold 3.0), synchronized clocks.
    pub const SEED002: OwdClassifier = OwdClassifier {
        a: 0.95,
        k_frac: 0.1,
        clock: OwdClock::Synchronized,
    };

    /// The eta threshold `K_frac/(1-a) + 1` (seed 002 eq. 9 divided by avgSLD).
    pub fn threshold(&self) -> f64 {
        let t = self.k_frac / (1.0 - self.a) + 1.0;
        if t.is_finite() {
            t
        } else {
            f64::MAX
        }
    }

    /// The class of a loss revealed by a packet with ratio `eta = SLD_j/avgSLD_(j-1)`: congestion
    /// iff eta exceeds the threshold. An unknown eta (no average yet) is congestion, the
    /// conservative answer.
    pub fn classify(&self, eta: Option<f64>) -> LossClass {
        match eta {
            Some(e) if !e.is_nan() && e <= self.threshold() => LossClass::Wireless,
            _ => LossClass::Congestion,
        }
    }
}

/// The receiver's one-way-delay state.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OwdState {
    cfg: OwdClassifier,
    /// avgSLD in seconds, once a packet arrived.
    avg: Option<f64>,
    /// min(raw SLD) for [`OwdClock::MinOffset`].
    min_sld: f64,
    /// Minimum non-zero RTT the sender reported, seconds.
    min_rtt: f64,
}

impl OwdState {
    pub(crate) fn new(cfg: OwdClassifier) -> OwdState {
        OwdState {
            cfg,
            avg: None,
            min_sld: f64::INFINITY,
            min_rtt: f64::INFINITY,
        }
    }

    /// The SLD of a packet sent at `sent` (sender clock) and received at `now`, in seconds.
    fn sld(&mut self, now: Time, sent: Time, sender_rtt: f64) -> f64 {
        let raw = (i128::from(now.as_nanos()) - i128::from(sent.as_nanos())) as f64 * 1e-9;
        match self.cfg.clock {
            OwdClock::Synchronized => raw.max(0.0),
            OwdClock::MinOffset => {
                if sender_rtt.is_finite() && sender_rtt > 0.0 {
                    self.min_rtt = self.min_rtt.min(sender_rtt);
                }
                self.min_sld = self.min_sld.min(raw);
                let base = if self.min_rtt.is_finite() {
                    self.min_rtt / 2.0
                } else {
                    0.0
                };
                (raw - self.min_sld + base).max(0.0)
            }
        }
    }

    /// Fold in a packet; returns `eta = SLD_j/avgSLD_(j-1)` computed before the update (`None`
    /// without a positive previous average).
    pub(crate) fn on_packet(&mut self, now: Time, sent: Time, sender_rtt: f64) -> Option<f64> {
        let sld = self.sld(now, sent, sender_rtt);
        let eta = self.avg.filter(|&a| a > 0.0).map(|a| sld / a);
        // Seed 002 eq. 4: avgSLD_i = a*avgSLD_(i-1) + (1-a)*SLD_i (the first packet sets it).
        let a = self.cfg.a;
        self.avg = Some(match self.avg {
            None => sld,
            Some(prev) => a * prev + (1.0 - a) * sld,
        });
        eta.filter(|e| e.is_finite())
    }

    /// The class of a loss revealed by a packet with ratio `eta`.
    pub(crate) fn classify(&self, eta: Option<f64>) -> LossClass {
        self.cfg.classify(eta)
    }

    /// avgSLD in seconds.
    pub(crate) fn average(&self) -> Option<f64> {
        self.avg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_nanos(x * 1_000_000)
    }

    /// Seed 002: "η > 0.1/(1−α) + 1" with α = 0.95 is η > 3.
    #[test]
    fn seed002_threshold_is_three() {
        let c = OwdClassifier::SEED002;
        assert!((c.threshold() - 3.0).abs() < 1e-12);
        assert_eq!(c.classify(Some(2.999)), LossClass::Wireless);
        assert_eq!(c.classify(Some(3.001)), LossClass::Congestion);
        assert_eq!(c.classify(None), LossClass::Congestion);
        let c2 = OwdClassifier {
            a: 0.9,
            k_frac: 0.2,
            ..OwdClassifier::SEED002
        };
        // 0.2/0.1 + 1 = 3 as well; a = 0.8, K = 0.1 gives 1.5.
        assert!((c2.threshold() - 3.0).abs() < 1e-12);
        let c3 = OwdClassifier {
            a: 0.8,
            ..OwdClassifier::SEED002
        };
        assert!((c3.threshold() - 1.5).abs() < 1e-12);
    }

    /// Seed 002 eq. 4 by hand: SLDs 10, 10, 30 ms give averages 10, 10, 11 ms; the eta of the
    /// third packet uses the average before it: 30/10 = 3.
    #[test]
    fn seed002_eq4_ewma_and_eta() {
        let mut s = OwdState::new(OwdClassifier::SEED002);
        assert_eq!(s.on_packet(ms(10), ms(0), 0.0), None);
        assert_eq!(s.average(), Some(0.01));
        let eta = s.on_packet(ms(20), ms(10), 0.0).unwrap();
        assert!((eta - 1.0).abs() < 1e-12);
        let eta = s.on_packet(ms(50), ms(20), 0.0).unwrap();
        assert!((eta - 3.0).abs() < 1e-9);
        // 0.95*0.010 + 0.05*0.030 = 0.011.
        assert!((s.average().unwrap() - 0.011).abs() < 1e-12);
    }

    /// `docs/variants.md` seed 002 "Clocks": with an unknown offset the SLD is SLD − min(SLD) +
    /// minRTT/2. A receiver clock 1000 s behind gives negative raw SLDs and the same etas as exact
    /// clocks.
    #[test]
    fn min_offset_clock_removes_the_offset() {
        let mut s = OwdState::new(OwdClassifier {
            clock: OwdClock::MinOffset,
            ..OwdClassifier::SEED002
        });
        let off = 1_000_000; // ms
                             // Raw SLDs −999 990, −999 990 ms; minimum RTT reported 40 ms → base 20
                             // ms.
        s.on_packet(ms(10), ms(off), 0.04);
        assert!((s.average().unwrap() - 0.020).abs() < 1e-9);
        let eta = s.on_packet(ms(20), ms(off + 10), 0.05).unwrap();
        assert!((eta - 1.0).abs() < 1e-9);
        // A packet 40 ms later than the others: SLD 60 ms, eta = 60/20 = 3.
        let eta = s.on_packet(ms(70), ms(off + 20), 0.05).unwrap();
        assert!((eta - 3.0).abs() < 1e-6, "{eta}");
    }
}
