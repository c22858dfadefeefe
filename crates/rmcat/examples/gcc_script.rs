//! GCC's delay-gradient filter and over-use threshold (draft-ietf-rmcat-gcc-02 §5.3–5.4) driven
//! by a script of inter-group delay variations, for holding them against another
//! implementation fed the same script (docs/media.md, "Cross-check").
//!
//! ```text
//! cargo run --release -p rmcat --example gcc_script -- gen > gcc-script.txt
//! cargo run --release -p rmcat --example gcc_script -- run gcc-script.txt > ours.csv
//! ```
//!
//! `gen` writes one line per packet group, every 10 ms for 30 s: `t d`, the group's arrival
//! time and its delay variation `d(i)` against the previous group, both in integer ns. Phases:
//! jitter of ±1 ms (0–5 s), a queue growing 50 ms/s (5–8 s), draining at 100 ms/s (8–10 s),
//! jitter of ±3 ms (10–20 s), a queue growing 20 ms/s (20–22 s), jitter of ±1 ms (22–30 s).
//! The jitter comes from a fixed linear congruential generator, so the script is the same
//! on every machine.
//!
//! `run` prints, per group, `t_ms,m_hat_ms,scaled_ms,threshold_ms,usage`: the Kalman estimate,
//! the estimate scaled by the number of deltas (capped at 60) as the detector compares it, the
//! threshold after its update, and the raw comparison against the threshold before it (0 over,
//! 1 under, 2 normal; before the over-use timer and the "not falling" test).
//!
//! `run-frozen` does the same with the measurement-noise estimate frozen at its floor of
//! 1 ms² (`chi = 0`, `var_v(0) = 1`): the filter pion's implementation computes in effect,
//! whose noise-estimate weight rounds to 1 (docs/media.md says why), so the two can be
//! compared term by term.

use std::fmt::Write as _;

use rmcat::gcc::{Detector, GccConfig, Kalman};
use rmcat::Time;

const MS: i64 = 1_000_000;
const GROUP_GAP: i64 = 10 * MS;
const END: i64 = 30_000 * MS;

fn gen() -> String {
    // Numerical Recipes' 32-bit LCG: fixed, so the script is reproducible.
    let mut x: u32 = 12345;
    let mut unit = move || {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        f64::from(x) / f64::from(u32::MAX) * 2.0 - 1.0
    };
    let mut out = String::new();
    let mut t = GROUP_GAP;
    while t <= END {
        let s = t / MS;
        let (trend_ms, jitter_ms) = match s {
            0..5_000 => (0.0, 1.0),
            5_000..8_000 => (0.5, 0.3),
            8_000..10_000 => (-1.0, 0.3),
            10_000..20_000 => (0.0, 3.0),
            20_000..22_000 => (0.2, 0.3),
            _ => (0.0, 1.0),
        };
        let d = ((trend_ms + jitter_ms * unit()) * MS as f64).round() as i64;
        writeln!(out, "{t} {d}").unwrap();
        t += GROUP_GAP;
    }
    out
}

fn run(script: &str, c: &GccConfig) -> Result<String, String> {
    let mut k = Kalman::new(c);
    let mut det = Detector::new(c);
    // Groups per millisecond, as the sender computes f_max.
    let f_max = 1e6 / GROUP_GAP as f64;
    let mut n = 0u32;
    let mut out = String::from("t_ms,m_hat_ms,scaled_ms,threshold_ms,usage\n");
    for (i, line) in script.lines().enumerate() {
        let bad = |what: String| format!("script line {}: {what}: {line}", i + 1);
        let v: Vec<i64> = line
            .split_whitespace()
            .map(|w| w.parse::<i64>().map_err(|e| bad(e.to_string())))
            .collect::<Result<_, _>>()?;
        let [t, d] = v[..] else {
            return Err(bad("want `t d`".to_string()));
        };
        let t = u64::try_from(t).map_err(|e| bad(e.to_string()))?;
        let m = k.update(d as f64 / MS as f64, f_max, c);
        n += 1;
        let scaled = m * f64::from(n.min(c.gradient_scale_cap));
        let before = det.threshold;
        det.update(Time::from_nanos(t), m, c);
        let usage = if scaled > before {
            0
        } else if scaled < -before {
            1
        } else {
            2
        };
        writeln!(
            out,
            "{},{m:.4},{scaled:.4},{:.4},{usage}",
            t / MS as u64,
            det.threshold
        )
        .unwrap();
    }
    Ok(out)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut c = GccConfig::draft02();
    let res = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["gen"] => Ok(gen()),
        [mode @ ("run" | "run-frozen"), path] => {
            if mode == "run-frozen" {
                c.chi = 0.0;
                c.var_v_initial = 1.0;
            }
            std::fs::read_to_string(path)
                .map_err(|e| format!("{path}: {e}"))
                .and_then(|s| run(&s, &c))
        }
        _ => Err("usage: gcc_script gen | gcc_script run|run-frozen SCRIPT".to_string()),
    };
    match res {
        Ok(s) => print!("{s}"),
        Err(e) => {
            eprintln!("gcc_script: {e}");
            std::process::exit(2);
        }
    }
}
