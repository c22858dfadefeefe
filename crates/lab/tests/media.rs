//! Media flows end to end through the simulator: the application's target follows TFRC, a
//! trace does not, pauses pause, on/off TCP sources idle between files, and every frame is
//! accounted for. Runs the RFC 8867 case files (`scenarios/seeds/rfc8867/`). Budget: < 5 s in
//! release.

use std::path::PathBuf;

use lab::runner::{simulate, RunOptions, RunOutput};
use lab::summary::summarize;
use scenario::{overrides, Scenario};

fn case(id: &str, sets: &[(&str, &str)]) -> (Scenario, RunOutput) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../scenarios/seeds/rfc8867/case-{id}.toml"));
    let file = path.to_str().unwrap().to_string();
    let text = std::fs::read_to_string(&path).unwrap();
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let text = overrides::apply(&file, &text, &sets).unwrap();
    let s = Scenario::parse(&file, &text).unwrap();
    let out = simulate(
        &s,
        &RunOptions {
            record_delays: true,
            ..RunOptions::default()
        },
    )
    .unwrap();
    (s, out)
}

/// The sender agent's sampled column `name` as (time s, value).
fn sampled(out: &RunOutput, flow: u32, name: &str) -> Vec<(f64, f64)> {
    let a = out
        .results
        .agent_samples
        .iter()
        .find(|a| a.flow == flow && a.sender)
        .expect("the media sender is sampled");
    let k = a.names.iter().position(|n| *n == name).expect(name);
    a.times
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_secs_f64(), a.values[i * a.names.len() + k]))
        .collect()
}

fn mean_between(xs: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let v: Vec<f64> = xs
        .iter()
        .filter(|(t, _)| *t >= from && *t < to)
        .map(|&(_, x)| x)
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn the_encoder_follows_tfrc_through_the_capacity_steps() {
    let (s, out) = case("5.1", &[]);
    let enc = sampled(&out, 0, "encoder_bps");
    // 45-60 s (2.5 Mb/s): TFRC allows more than R_max, the encoder sits at 1.5 Mb/s;
    // 65-80 s (0.6 Mb/s): it follows TFRC down, below the capacity.
    assert!(
        mean_between(&enc, 45.0, 60.0) > 1.4e6,
        "{}",
        mean_between(&enc, 45.0, 60.0)
    );
    let low = mean_between(&enc, 65.0, 80.0);
    assert!((150e3..0.6e6).contains(&low), "{low}");
    // Every frame has exactly one outcome, and about 30 frames/s were produced.
    let sum = summarize(&s, &out);
    let m = &sum.media[0];
    assert_eq!(
        m.on_time + m.late + m.incomplete + m.lost + m.skipped,
        m.frames
    );
    assert!(
        (m.frames as f64 / 3000.0 - 1.0).abs() < 0.03,
        "{} frames",
        m.frames
    );
    assert!(m.on_time > m.frames / 2);
    // Goodput is media payload: never above the wire rate.
    let f = &sum.flows[0];
    assert!(f.goodput_bps <= f.throughput_bps);
}

#[test]
fn a_trace_does_not_follow_and_overflows_its_buffer() {
    let (s, out) = case(
        "5.1",
        &[
            ("flows.media1.source.model", "\"trace\""),
            ("flows.media1.source.file", "\"trace-1200k.csv\""),
        ],
    );
    let enc = sampled(&out, 0, "encoder_bps");
    // A trace's rate is its recording's, whatever TFRC allows.
    let mean = mean_between(&enc, 0.0, 100.0);
    assert!((mean / 1.2e6 - 1.0).abs() < 0.05, "{mean}");
    // At 0.6 Mb/s the send buffer fills and frames are skipped; far more frames miss their
    // deadline than when the encoder follows TFRC.
    let traced = summarize(&s, &out).media[0].clone();
    assert!(traced.skipped > 100, "{} skipped", traced.skipped);
    let (s2, out2) = case("5.1", &[]);
    let adaptive = summarize(&s2, &out2).media[0].clone();
    assert!(
        traced.deadline_miss_ratio > adaptive.deadline_miss_ratio + 0.1,
        "trace {} vs adaptive {}",
        traced.deadline_miss_ratio,
        adaptive.deadline_miss_ratio
    );
}

#[test]
fn a_paused_flow_sends_nothing_and_resumes() {
    let (_, out) = case("5.8", &[]);
    let rec = &out.results.flows[1].forward;
    let bin = rec.bin_width().as_secs_f64();
    let sent = rec.sent_series();
    let bytes = |from: f64, to: f64| -> u64 {
        sent[(from / bin) as usize..(to / bin) as usize]
            .iter()
            .sum()
    };
    // After the buffer drains (the pause starts at 40 s), nothing until 60 s.
    assert_eq!(bytes(42.0, 60.0), 0);
    assert!(bytes(61.0, 70.0) > 100_000);
    assert!(bytes(20.0, 40.0) > 100_000);
}

#[test]
fn on_off_tcp_idles_between_short_files() {
    let (s, out) = case("5.7", &[]);
    for (i, f) in s.flows.iter().enumerate().skip(2) {
        let rec = &out.results.flows[i].forward;
        let series = rec.sent_series();
        let idle = series.iter().filter(|&&b| b == 0).count() as f64 / series.len() as f64;
        // Files of 30-50 KB take well under a second at 2 Mb/s shared; idle periods average
        // 10 s: most bins are idle, and some are not.
        assert!(idle > 0.6, "{}: idle {idle}", f.name);
        let bytes: u64 = series.iter().sum();
        assert!(bytes > 30_000, "{}: {bytes} bytes", f.name);
    }
    // The flows that start idle send nothing in their first bin.
    assert_eq!(out.results.flows[4].forward.sent_series()[0], 0);
    assert!(out.results.flows[2].forward.sent_series()[0] > 0);
}
