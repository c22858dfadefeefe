//! Dump the send (and feedback) times of the closed-loop `Pair` harness, for comparison with
//! the NS-2.35 scripts in `tests/ns2/` (formerly ignored tests in `tests/pair.rs`).
//!
//! ```text
//! cargo run --release -p tfrc --example pair_dump -- one-flow
//! <period>,<seconds>,<profile>[,<delay_ms>] [--timers-first] [--dir DIR] cargo run --release -p
//! tfrc --example pair_dump -- bottleneck <Mb/s>,<delay_ms>,<queue limit>,<seconds> [--dir DIR]
//! cargo run --release -p tfrc --example pair_dump -- cbr <kb/s>,<Mb/s>,<delay_ms>,<queue
//! limit>,<seconds> [--dir DIR]
//! ```
//!
//! `one-flow` matches `tests/ns2/one_flow.tcl` (100 Mb/s, `ErrorModel/Periodic`), `bottleneck`
//! matches `bottleneck.tcl` and `cbr` matches `cbr.tcl`. Each writes `DIR/ours.txt` (one line
//! per data packet: send time in seconds, sequence number; default DIR `/tmp`); `one-flow` also
//! writes `DIR/ours_fb.txt` (feedback send times, highest sequence number, p, X_recv).

// The harness is the integration tests' own, shared rather than copied.
#[path = "../tests/common/mod.rs"]
mod common;

use std::process::ExitCode;
use std::time::Duration;

use common::{secs, Loss, Pair, Path};
use tfrc::Profile;

const USAGE: &str = "usage: pair_dump one-flow <period>,<seconds>,<profile>[,<delay_ms>] [--timers-first] [--dir DIR]
       pair_dump bottleneck <Mb/s>,<delay_ms>,<queue limit>,<seconds> [--dir DIR]
       pair_dump cbr <kb/s>,<Mb/s>,<delay_ms>,<queue limit>,<seconds> [--dir DIR]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// Comma-separated numbers, exactly `min..=max` of them.
fn numbers(spec: &str, min: usize, max: usize) -> Result<Vec<f64>, String> {
    let v: Vec<f64> = spec
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("'{x}' in '{spec}' is not a non-negative number"))
        })
        .collect::<Result<_, _>>()?;
    if v.len() < min || v.len() > max {
        return Err(format!(
            "'{spec}' has {} values, expected {min} to {max}",
            v.len()
        ));
    }
    Ok(v)
}

fn write(dir: &str, name: &str, text: &str) -> Result<(), String> {
    let path = format!("{dir}/{name}");
    std::fs::write(&path, text).map_err(|e| format!("cannot write {path}: {e}"))?;
    println!("wrote {path}");
    Ok(())
}

fn send_times(pair: &Pair) -> String {
    let mut out = String::new();
    for (t, h) in &pair.sent {
        out.push_str(&format!("{:.6} {}\n", t.as_secs_f64(), h.seq));
    }
    out
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut dir = "/tmp".to_string();
    let mut timers_first = false;
    let mut positional = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dir" => dir = it.next().ok_or("--dir needs a directory")?.clone(),
            "--timers-first" => timers_first = true,
            _ => positional.push(a.as_str()),
        }
    }
    let [mode, spec] = positional[..] else {
        return Err("expected a mode and its parameters".into());
    };
    match mode {
        "one-flow" => {
            let v: Vec<&str> = spec.split(',').collect();
            if !(3..=4).contains(&v.len()) {
                return Err(format!(
                    "'{spec}' needs <period>,<seconds>,<profile>[,<delay_ms>]"
                ));
            }
            let nums = numbers(&format!("{},{}", v[0], v[1]), 2, 2)?;
            let profile: Profile = v[2]
                .parse()
                .map_err(|e| format!("profile '{}': {e}", v[2]))?;
            let delay_ms = match v.get(3) {
                Some(d) => numbers(d, 1, 1)?[0],
                None => 50.0,
            };
            let path = Path {
                delay: Duration::from_secs_f64(delay_ms / 1e3),
                bandwidth: Some(100e6),
                loss: Loss::Periodic {
                    period: nums[0] as u64,
                    offset: 0,
                },
                queue_limit: None,
            };
            let mut pair = Pair::new(profile, path);
            pair.timers_first = timers_first;
            pair.run_until(secs(nums[1]));
            write(&dir, "ours.txt", &send_times(&pair))?;
            let mut fb = String::new();
            for (t, f) in &pair.feedback {
                fb.push_str(&format!(
                    "{:.9} {} p={} x_recv={}\n",
                    t.as_secs_f64(),
                    f.highest_seq,
                    f.p,
                    f.x_recv
                ));
            }
            write(&dir, "ours_fb.txt", &fb)
        }
        "bottleneck" => {
            let v = numbers(spec, 4, 4)?;
            let path = Path {
                delay: Duration::from_secs_f64(v[1] / 1e3),
                bandwidth: Some(v[0] * 1e6),
                loss: Loss::None,
                queue_limit: Some(v[2] as usize),
            };
            let mut pair = Pair::new(Profile::ns2(), path);
            pair.run_until(secs(v[3]));
            write(&dir, "ours.txt", &send_times(&pair))?;
            println!("queue drops {}", pair.queue_drops);
            Ok(())
        }
        "cbr" => {
            let v = numbers(spec, 5, 5)?;
            if v[0] <= 0.0 {
                return Err("the CBR rate must be positive".into());
            }
            let path = Path {
                delay: Duration::from_secs_f64(v[2] / 1e3),
                bandwidth: Some(v[1] * 1e6),
                loss: Loss::None,
                queue_limit: Some(v[3] as usize),
            };
            let interval = Duration::from_secs_f64(1000.0 * 8.0 / (v[0] * 1e3));
            let mut pair = Pair::cbr(Profile::ns2(), path, interval);
            pair.run_until(secs(v[4]));
            write(&dir, "ours.txt", &send_times(&pair))?;
            println!("queue drops {}", pair.queue_drops);
            Ok(())
        }
        other => Err(format!(
            "unknown mode '{other}' (expected one-flow, bottleneck or cbr)"
        )),
    }
}
