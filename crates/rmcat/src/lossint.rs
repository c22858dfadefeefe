//! Average loss interval in packets, as RFC 5348 §5.4 computes it (the eight most recent
//! intervals, weights 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2). NADA's self-scaling loss expiry
//! (RFC 8698 §4.2, MULTILOSS × the average loss interval) needs one; RFC 8698 does not fix the
//! estimator. Its authors' ns-3 model uses these weights but also RFC 5348's open-interval term
//! (the larger of the averages with and without the current interval); with it the current
//! interval can never exceed MULTILOSS times the average, so the loss expiry never comes. This
//! one averages closed intervals only, so warping ends MULTILOSS intervals after the last loss
//! (docs/media.md, "Cross-check").

use std::collections::VecDeque;

const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// Loss intervals (packets between loss events), newest first.
#[derive(Clone, Debug, Default)]
pub struct LossIntervals {
    closed: VecDeque<u64>,
    /// Packets since the last loss event (the open interval).
    pub current: u64,
    in_event: bool,
}

impl LossIntervals {
    /// A packet arrived.
    pub fn on_received(&mut self) {
        self.current += 1;
        self.in_event = false;
    }

    /// A packet was lost. Consecutive losses form one loss event.
    pub fn on_lost(&mut self) {
        if self.in_event {
            return;
        }
        self.in_event = true;
        self.closed.push_front(self.current);
        self.closed.truncate(WEIGHTS.len());
        self.current = 0;
    }

    /// The weighted average of the closed intervals (packets), or `None` before any loss.
    pub fn average(&self) -> Option<f64> {
        if self.closed.is_empty() {
            return None;
        }
        let (mut num, mut den) = (0.0, 0.0);
        for (w, &i) in WEIGHTS.iter().zip(&self.closed) {
            num += w * i as f64;
            den += w;
        }
        Some(num / den)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_average() {
        let mut l = LossIntervals::default();
        assert_eq!(l.average(), None);
        for n in [10u64, 20] {
            for _ in 0..n {
                l.on_received();
            }
            l.on_lost();
            l.on_lost(); // same event
        }
        assert_eq!(l.average(), Some(15.0));
        assert_eq!(l.current, 0);
    }
}
