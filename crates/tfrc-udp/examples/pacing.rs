//! Pacing error at fixed allowed rates over loopback (see `tfrc_udp::pacing`).
//!
//! `cargo run --release -p tfrc-udp --example pacing -- [SECONDS]` prints one JSON object per
//! (rate, spin) pair: 10 and 100 Mb/s, 1000-byte segments, pure sleep and 50 µs spin.

use std::time::Duration;

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .filter(|v: &f64| *v > 0.0 && v.is_finite())
        .unwrap_or(5.0);
    for rate in [10e6, 100e6] {
        for spin_us in [0u64, 50] {
            match tfrc_udp::pacing::measure(
                rate,
                Duration::from_secs_f64(secs),
                1000,
                Duration::from_micros(spin_us),
            ) {
                Ok(r) => println!("{}", serde_json::to_string(&r).unwrap_or_default()),
                Err(e) => eprintln!("pacing at {rate} b/s: {e}"),
            }
        }
    }
}
