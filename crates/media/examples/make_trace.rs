//! Writes a frame-size trace (CSV `time,size,type`) from the statistical model at a constant
//! target: what an encoder that ignores its congestion controller records. The RFC 8867 suite's
//! trace configuration (`scenarios/seeds/rfc8867/trace-1200k.csv`) was made with
//!
//! ```sh
//! cargo run --release -p media --example make_trace -- 1200000 60 > scenarios/seeds/rfc8867/trace-1200k.csv
//! ```
//!
//! Arguments: target bit/s (default 1,200,000), seconds (default 60), seed (default 1).

use media::model::{StatisticalConfig, StatisticalSource};
use rand::SeedableRng;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: f64| -> f64 {
        args.get(i)
            .map(|a| a.parse().expect("arguments: target_bps seconds seed"))
            .unwrap_or(default)
    };
    let (target, secs, seed) = (arg(0, 1.2e6), arg(1, 60.0), arg(2, 1.0) as u64);
    let cfg = StatisticalConfig {
        r_init: target,
        r_max: target.max(StatisticalConfig::default().r_max),
        ..StatisticalConfig::default()
    };
    let mut src = StatisticalSource::new(cfg).expect("a valid model");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    src.start(0);
    println!("# RFC 8593 statistical model at a constant {target} bit/s, seed {seed}");
    println!("time,size,type");
    while let Some(t) = src.next_frame_at() {
        if t as f64 >= secs * 1e9 {
            break;
        }
        let f = src.next_frame(&mut rng).expect("started");
        let kind = if f.key { "I" } else { "P" };
        println!("{:.6},{},{kind}", f.capture as f64 / 1e9, f.size);
    }
}
