//! The measurement behind the `rfc5348` profile's oscillation default (RFC 5348 §4.5), quoted in
//! `docs/rfc5348-conformance.md`: one bulk flow over a path whose RTT is almost all queueing
//! (1 Mb/s, 2 ms propagation RTT, a 200-packet DropTail queue, 60 s), with §4.5's X_inst on,
//! off, and capped at X.
//!
//! ```text
//! cargo run --release -p tfrc --example oscillation
//! ```

// The harness is the integration tests' own, shared rather than copied.
#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Duration;

use common::{secs, Loss, Pair, Path};
use tfrc::profile::Oscillation;
use tfrc::Profile;

fn main() {
    let link = 1e6;
    println!("1 Mb/s, 2 ms propagation RTT, 200-packet DropTail queue, 60 s bulk, rfc5348 profile");
    println!("oscillation            | X_inst/X min..max | queue drops | goodput / link | mean R");
    for (name, osc) in [
        ("SqrtRtt (RFC, default)", Oscillation::SqrtRtt { q2: 0.9 }),
        ("Off", Oscillation::Off),
        ("SqrtRttCapped", Oscillation::SqrtRttCapped { q2: 0.9 }),
    ] {
        let mut profile = Profile::rfc5348();
        profile.sender.oscillation = osc;
        let path = Path {
            delay: Duration::from_millis(1),
            bandwidth: Some(link),
            loss: Loss::None,
            queue_limit: Some(200),
        };
        let mut pair = Pair::new(profile, path);
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        let (mut r_sum, mut r_n) = (0.0, 0u64);
        let mut t = 0.0;
        while t < 60.0 {
            t += 0.001;
            pair.run_until(secs(t));
            let st = pair.sender.status();
            // After slow start, once the queue has formed.
            if t >= 5.0 {
                let ratio = st.x_inst / st.x;
                lo = lo.min(ratio);
                hi = hi.max(ratio);
                if let Some(r) = st.rtt {
                    r_sum += r.as_secs_f64();
                    r_n += 1;
                }
            }
        }
        let delivered = pair.sent.iter().filter(|(t, _)| *t >= secs(5.0)).count() as u64;
        let delivered = delivered.saturating_sub(
            pair.queue_drop_seqs
                .iter()
                .filter(|&&s| pair.sent.iter().any(|(t, h)| h.seq == s && *t >= secs(5.0)))
                .count() as u64,
        );
        let goodput = delivered as f64 * f64::from(profile.data_wire_len()) * 8.0 / 55.0;
        println!(
            "{name:22} | {lo:.2}..{hi:.2} | {:11} | {:.3} | {:.1} ms",
            pair.queue_drops,
            goodput / link,
            r_sum / r_n.max(1) as f64 * 1e3
        );
    }
}
