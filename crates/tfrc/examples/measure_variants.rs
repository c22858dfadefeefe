//! The closed-loop measurements of the seed variants quoted in `docs/variants.md`
//! ("Measurements"), in the `Pair` harness (formerly the ignored test
//! `tests/variants.rs::measure`):
//!
//! ```text
//! cargo run --release -p tfrc --example measure_variants
//! ```

// The harness is the integration tests' own, shared rather than copied.
#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Duration;

use common::{path, profile, rate, secs, Loss, Pair, Path};
use tfrc::{LossClass, Profile};

fn main() {
    for names in [
        &["veno"][..],
        &["veno-simd-055"],
        &["veno-simd-090"],
        &["simd"],
    ] {
        for n in [10u64, 20, 100] {
            let pr = profile(names);
            let base = rate(
                &Profile::rfc5348(),
                path(50, Loss::EveryNth(n)),
                100.0,
                300.0,
            );
            let v = rate(&pr, path(50, Loss::EveryNth(n)), 100.0, 300.0);
            println!(
                "{names:?} N={n}: rfc {base:.0} variant {v:.0} ratio {:.3}",
                v / base
            );
        }
    }
    // Classifier confusion matrix: random loss + DropTail bottleneck.
    for (bw, limit, p) in [(10e6, 50usize, 0.01), (2e6, 20, 0.02), (10e6, 100, 0.005)] {
        for names in [
            &[][..],
            &["owd-classifier"],
            &["owd-classifier:k_frac=0.005"],
        ] {
            let path = Path {
                delay: Duration::from_millis(20),
                bandwidth: Some(bw),
                loss: Loss::Bernoulli { p, seed: 7 },
                queue_limit: Some(limit),
            };
            let mut pair = Pair::new(profile(names), path);
            pair.receiver.record_loss_decisions(true);
            pair.run_until(secs(200.0));
            let mut m = [[0u64; 2]; 2]; // [true random/queue][classified wireless/congestion]
            let mut unknown = 0;
            for d in pair.receiver.drain_loss_decisions().collect::<Vec<_>>() {
                for s in d.seqs() {
                    let truth = if pair.path_drop_seqs.binary_search(&s).is_ok() {
                        0
                    } else if pair.queue_drop_seqs.binary_search(&s).is_ok() {
                        1
                    } else {
                        unknown += 1;
                        continue;
                    };
                    let c = match d.class {
                        LossClass::Wireless => 0,
                        LossClass::Congestion => 1,
                    };
                    m[truth][c] += 1;
                }
            }
            let r = pair.send_rate(secs(50.0), secs(200.0));
            println!(
                "{names:?} bw {bw} limit {limit} p {p}: rate {:.0} B/s, link {:.0}; random→W {} random→C {} queue→W {} queue→C {} unknown {unknown}",
                r, bw / 8.0, m[0][0], m[0][1], m[1][0], m[1][1]
            );
        }
    }
    for names in [
        &[][..],
        &["veno"],
        &["veno-simd-090"],
        &["adaptive-rtt"],
        &["adaptive-rtt:lt_seconds=0.002"],
        &["simd"],
    ] {
        let path = Path {
            delay: Duration::from_millis(20),
            bandwidth: Some(2e6),
            loss: Loss::None,
            queue_limit: Some(20),
        };
        let mut pair = Pair::new(profile(names), path);
        pair.run_until(secs(200.0));
        println!(
            "{names:?} droptail 2 Mb/s: rate {:.0} drops {} random_losses {} R {:?}",
            pair.send_rate(secs(50.0), secs(200.0)),
            pair.queue_drops,
            pair.sender.status().random_losses,
            pair.sender.status().rtt
        );
    }
    for names in [
        &[][..],
        &["ali-ci-replace"],
        &["ali-ci-include"],
        &["ali-mean-replace"],
        &["ali-mean-include"],
        &["adaptive-rtt"],
    ] {
        for (bw, limit) in [(None, None), (Some(2e6), Some(20))] {
            let path = Path {
                delay: Duration::from_millis(20),
                bandwidth: bw,
                loss: Loss::Bernoulli { p: 0.02, seed: 3 },
                queue_limit: limit,
            };
            let mut pair = Pair::new(profile(names), path);
            pair.run_until(secs(300.0));
            let st = pair.sender.status();
            println!(
                "{names:?} bernoulli 0.02 bw {bw:?}: rate {:.0} p_rx {:.5} R {:?} drops {}",
                pair.send_rate(secs(50.0), secs(300.0)),
                pair.receiver.loss_event_rate(),
                st.rtt,
                pair.queue_drops
            );
        }
    }
}
