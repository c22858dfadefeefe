//! Liveness as a property: over random paths (loss, a first packet lost, a batching relay,
//! coarse receiver timers, reordering jitter) and with or without a handshake RTT, X stays
//! finite and positive, and a feedback that reports X_recv > 0 never leaves the sender at
//! s/t_mbi: the stated number of nofeedback periods spent there while such feedback arrives is
//! zero.

use std::time::Duration;

use proptest::prelude::*;
use tfrc::{Profile, Time};

use crate::support::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn liveness_x_positive_and_never_pinned(
        one_way_us in 500u64..50_000,
        batch_us in 0u64..8_000,
        gran_us in 0u64..2_000,
        jitter_us in 0u64..3_000,
        loss in 0.0f64..0.1,
        drop_first in any::<bool>(),
        handshake in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut l = Loop::new(Profile::rfc5348(), Duration::from_micros(one_way_us));
        l.batch = Duration::from_micros(batch_us);
        l.gran = Duration::from_micros(gran_us);
        l.jitter = Duration::from_micros(jitter_us);
        l.loss = loss;
        l.drop_first = drop_first;
        l.seed = seed;
        if handshake {
            l.tx.on_handshake_rtt(Time::ZERO, Duration::from_micros(2 * one_way_us));
        }
        l.tx.set_infinite_backlog(Time::ZERO);
        let mut bad: Option<String> = None;
        let mut check = |now: Time, tx: &tfrc::Sender, f: Option<&tfrc::Feedback>| {
            let x = tx.rate();
            if !(x.is_finite() && x > 0.0) && bad.is_none() {
                bad = Some(format!("X = {x} at {now:?}"));
            }
            if let Some(f) = f {
                if f.x_recv > 0.0 && x <= S / T_MBI && bad.is_none() {
                    bad = Some(format!("X = s/t_mbi after {f:?} at {now:?}"));
                }
            }
        };
        // Until the first feedback, the sender sends 1 packet/s and halves that on each
        // nofeedback timeout (§4.2, §4.4), so when the first packets are all lost (the first
        // one forced, the next ones at random) the first feedback comes seconds later: with k
        // of them lost, after the packet sent at about 2^k - 1 s. 60 s covers k <= 5.
        let mut t = 0.0;
        while l.feedbacks.is_empty() && t < 60.0 {
            t += 1.0;
            l.run(Time::from_secs_f64(t), &mut check);
        }
        prop_assert!(!l.feedbacks.is_empty(), "no feedback in {t} s");
        // Then it is alive: in the next 2 s at least 20 packets. The floor: the equation's
        // rate at p = 0.1 and R = 110 ms (the worst loss and RTT drawn here) is 16 packets/s.
        let before = l.sent;
        l.run(Time::from_secs_f64(t + 2.0), &mut check);
        prop_assert!(bad.is_none(), "{}", bad.unwrap());
        let n = l.sent - before;
        prop_assert!(n >= 20, "{n} packets in the 2 s after the first feedback (by {t} s)");
    }
}
