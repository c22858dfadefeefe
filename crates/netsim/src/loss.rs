//! Per-link-direction loss models, applied where NS-2's `link-lossmodel` sits: after the
//! propagation delay, before the TTL check and the `r` trace (the lost packet used the link's
//! bandwidth).

use std::collections::BTreeSet;

use rand::{Rng, RngCore};

use crate::packet::{Direction, FlowId, Packet};

/// A loss model configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum LossConfig {
    /// Each packet is lost independently with probability `p` (NS-2 `ErrorModel` with
    /// `unit_ pkt` and a uniform random variable: lost when u < p).
    Bernoulli {
        /// Loss probability per packet.
        p: f64,
    },
    /// Gilbert–Elliott two-state chain stepped once per packet: the packet is lost with the
    /// current state's loss probability, then the state moves.
    GilbertElliott {
        /// P(good → bad) per packet.
        p_good_to_bad: f64,
        /// P(bad → good) per packet.
        p_bad_to_good: f64,
        /// Loss probability in the good state.
        loss_good: f64,
        /// Loss probability in the bad state.
        loss_bad: f64,
    },
    /// Deterministic: drop the packets with these 0-based positions in the stream of packets
    /// crossing this loss point (like NS-2's `ErrorModel/List`).
    Nth(Vec<u64>),
    /// Deterministic: drop the first packet of each (flow, direction, seq) listed.
    Packets(Vec<(FlowId, Direction, i64)>),
}

/// A loss model instance.
#[derive(Clone, Debug)]
pub struct LossModel {
    kind: Kind,
    seen: u64,
}

#[derive(Clone, Debug)]
enum Kind {
    Bernoulli(f64),
    Ge {
        g2b: f64,
        b2g: f64,
        lg: f64,
        lb: f64,
        bad: bool,
    },
    Nth(BTreeSet<u64>),
    Packets(BTreeSet<(FlowId, bool, i64)>),
}

impl LossModel {
    /// A model in its initial state (Gilbert–Elliott starts good).
    pub fn new(cfg: &LossConfig) -> Self {
        let kind = match cfg {
            LossConfig::Bernoulli { p } => Kind::Bernoulli(*p),
            LossConfig::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => Kind::Ge {
                g2b: *p_good_to_bad,
                b2g: *p_bad_to_good,
                lg: *loss_good,
                lb: *loss_bad,
                bad: false,
            },
            LossConfig::Nth(v) => Kind::Nth(v.iter().copied().collect()),
            LossConfig::Packets(v) => Kind::Packets(
                v.iter()
                    .map(|&(f, d, s)| (f, d == Direction::Forward, s))
                    .collect(),
            ),
        };
        LossModel { kind, seen: 0 }
    }

    /// Whether `pkt` is lost. Random models draw from `rng` exactly once per packet (twice for
    /// Gilbert–Elliott: loss, then transition).
    pub fn lose(&mut self, pkt: &Packet, rng: &mut impl RngCore) -> bool {
        self.lose_key((pkt.flow, pkt.dir, pkt.seq), rng)
    }

    /// [`LossModel::lose`] for a packet known only by (flow, direction, sequence number): the
    /// one thing a [`LossConfig::Packets`] list matches on. The link emulator (`netemu`), whose
    /// packets are real datagrams, calls this with what it parsed from their headers.
    pub fn lose_key(&mut self, key: (FlowId, Direction, i64), rng: &mut impl RngCore) -> bool {
        let n = self.seen;
        self.seen += 1;
        match &mut self.kind {
            Kind::Bernoulli(p) => rng.gen::<f64>() < *p,
            Kind::Ge {
                g2b,
                b2g,
                lg,
                lb,
                bad,
            } => {
                let lost = rng.gen::<f64>() < if *bad { *lb } else { *lg };
                let flip = rng.gen::<f64>() < if *bad { *b2g } else { *g2b };
                if flip {
                    *bad = !*bad;
                }
                lost
            }
            Kind::Nth(set) => set.remove(&n),
            Kind::Packets(set) => set.remove(&(key.0, key.1 == Direction::Forward, key.2)),
        }
    }

    /// Lose each packet from now on with probability `p` (NS-2: `$em set rate_ p` on a
    /// uniform `ErrorModel`). Any other model becomes Bernoulli; the count of packets seen is
    /// kept.
    pub fn set_rate(&mut self, p: f64) {
        self.kind = Kind::Bernoulli(p);
    }

    /// Packets that crossed this loss point.
    pub fn seen(&self) -> u64 {
        self.seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::packet;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn pkt(seq: i64) -> Packet {
        Packet {
            flow: 3,
            ..packet(seq, 100)
        }
    }

    #[test]
    fn bernoulli_rate() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let mut m = LossModel::new(&LossConfig::Bernoulli { p: 0.05 });
        let n = 200_000;
        let lost = (0..n).filter(|_| m.lose(&pkt(0), &mut rng)).count() as f64;
        // Binomial sd = sqrt(n p (1−p)) ≈ 97; allow 4 sd (≈ 0.2 % of n·p... 390 packets).
        assert!((lost - 0.05 * n as f64).abs() < 4.0 * 97.5, "lost {lost}");
    }

    #[test]
    fn gilbert_elliott_stationary_loss_and_burstiness() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let cfg = LossConfig::GilbertElliott {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.1,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mut m = LossModel::new(&cfg);
        let n = 400_000;
        let mut lost = 0u64;
        let mut runs = 0u64;
        let mut prev = false;
        for _ in 0..n {
            let l = m.lose(&pkt(0), &mut rng);
            lost += u64::from(l);
            if l && !prev {
                runs += 1;
            }
            prev = l;
        }
        // Stationary P(bad) = 0.01 / (0.01 + 0.1) = 0.0909; mean burst = 1 / 0.1 = 10.
        // Bursts of ~10 make the count's sd ≈ sqrt(n·π·(1−π)·(2/0.11 − 1)) ≈ 750; allow 4 sd.
        let rate = lost as f64 / n as f64;
        assert!((rate - 0.0909).abs() < 0.0075, "rate {rate}");
        let mean_burst = lost as f64 / runs as f64;
        assert!((mean_burst - 10.0).abs() < 1.0, "burst {mean_burst}");
    }

    #[test]
    fn deterministic_lists() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut m = LossModel::new(&LossConfig::Nth(vec![1, 3]));
        let v: Vec<bool> = (0..5).map(|i| m.lose(&pkt(i), &mut rng)).collect();
        assert_eq!(v, vec![false, true, false, true, false]);
        let mut m = LossModel::new(&LossConfig::Packets(vec![(3, Direction::Forward, 2)]));
        let v: Vec<bool> = [1, 2, 2, 3]
            .iter()
            .map(|&s| m.lose(&pkt(s), &mut rng))
            .collect();
        // Only the first copy of seq 2 is dropped (a retransmission gets through).
        assert_eq!(v, vec![false, true, false, false]);
    }
}
