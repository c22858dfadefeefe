//! The statistical model against RFC 8593 §5's equations (as `docs/media.md` restates them):
//! mean rate, key-frame and transient sizes, reaction delay, rate limits, periodic key frames.
//! Budget: the whole file runs in well under a second in release.

use media::model::{StatisticalConfig, StatisticalSource};
use media::{Frame, Nanos, SECOND};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn quiet() -> StatisticalConfig {
    StatisticalConfig {
        size_noise: 0.0,
        interval_noise: 0.0,
        key_interval: None,
        ..StatisticalConfig::default()
    }
}

/// Every frame captured before `until`, asking for `target(t)` before each frame.
fn run(
    cfg: StatisticalConfig,
    seed: u64,
    until: Nanos,
    mut target: impl FnMut(Nanos) -> Option<f64>,
) -> Vec<Frame> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = StatisticalSource::new(cfg).unwrap();
    s.start(0);
    let mut out = Vec::new();
    while let Some(t) = s.next_frame_at() {
        if t >= until {
            break;
        }
        if let Some(r) = target(t) {
            s.set_target(t, r);
        }
        out.push(s.next_frame(&mut rng).unwrap());
    }
    out
}

fn rate(frames: &[Frame], from: Nanos, to: Nanos) -> f64 {
    let bytes: u64 = frames
        .iter()
        .filter(|f| f.capture >= from && f.capture < to)
        .map(|f| u64::from(f.size))
        .sum();
    bytes as f64 * 8.0 / ((to - from) as f64 / 1e9)
}

#[test]
fn mean_rate_follows_the_target_within_two_percent() {
    // With the default noise (Laplace scale 0.15 on sizes and intervals: each a relative
    // standard deviation of 0.21 per frame) and periodic key frames, 120 s at 30 frames/s
    // average 3,600 frames: the rate's relative standard error is about 0.3/√3600 = 0.5 %,
    // so 2 % is four standard errors. Three targets × ten seeds.
    for target in [300e3, 800e3, 1.4e6] {
        for seed in 0..10 {
            let frames = run(StatisticalConfig::default(), seed, 121 * SECOND, |_| {
                Some(target)
            });
            // Measured after the reaction delay, over 120 s.
            let r = rate(&frames, SECOND, 121 * SECOND);
            assert!(
                (r / target - 1.0).abs() < 0.02,
                "target {target}, seed {seed}: {r}"
            );
        }
    }
}

#[test]
fn frames_come_at_the_frame_rate() {
    // Interval noise is zero-mean: 3,600 frames in 120 s within 1 % (a sum of 3,600 intervals
    // has a relative standard error of 0.21/60 = 0.35 %).
    for seed in 0..5 {
        let frames = run(StatisticalConfig::default(), seed, 120 * SECOND, |_| None);
        let n = frames.len() as f64;
        assert!((n / 3600.0 - 1.0).abs() < 0.01, "seed {seed}: {n} frames");
    }
    let exact = run(quiet(), 0, SECOND, |_| None);
    assert_eq!(exact.len(), 30);
    assert_eq!(exact[1].capture - exact[0].capture, 33_333_333);
}

#[test]
fn key_frame_is_k_b_steady_frames_and_the_transient_averages_the_target() {
    let cfg = StatisticalConfig {
        r_init: 1.2e6,
        ..quiet()
    };
    let steady = 1.2e6 / (8.0 * 30.0); // 5,000 bytes
    let frames = run(cfg.clone(), 0, 2 * SECOND, |_| None);
    assert!(frames[0].key);
    assert_eq!(f64::from(frames[0].size), steady * cfg.key_ratio);
    // K_d − 1 = 9 frames scaled by (K_d − K_B)/(K_d − 1) = 6/9.
    for f in &frames[1..10] {
        assert!(!f.key);
        assert_eq!(f.size, (steady * 6.0 / 9.0).round() as u32);
    }
    for f in &frames[10..] {
        assert_eq!(f64::from(f.size), steady);
    }
    let transient: u64 = frames[..10].iter().map(|f| u64::from(f.size)).sum();
    assert!((transient as f64 - 10.0 * steady).abs() <= 5.0);
}

#[test]
fn key_frame_sizes_with_noise_average_k_b_steady_frames() {
    // 200 key frames (one every 2 s for 400 s): their mean within 5 % of K_B·steady (the
    // noise's relative standard error over 200 frames is 0.21/√200 = 1.5 %); the frames
    // between them average the steady size.
    let cfg = StatisticalConfig {
        r_init: 600e3,
        key_interval: Some(2 * SECOND),
        ..StatisticalConfig::default()
    };
    let steady = 600e3 / (8.0 * 30.0);
    let frames = run(cfg.clone(), 3, 400 * SECOND, |_| None);
    let keys: Vec<f64> = frames
        .iter()
        .filter(|f| f.key)
        .map(|f| f64::from(f.size))
        .collect();
    assert!(
        (keys.len() as i64 - 200).abs() <= 1,
        "{} key frames",
        keys.len()
    );
    let mean_key = keys.iter().sum::<f64>() / keys.len() as f64;
    assert!(
        (mean_key / (cfg.key_ratio * steady) - 1.0).abs() < 0.05,
        "mean key frame {mean_key}"
    );
    let r = rate(&frames, 0, 400 * SECOND);
    assert!((r / 600e3 - 1.0).abs() < 0.02, "rate {r}");
}

#[test]
fn the_encoder_reacts_after_its_reaction_delay() {
    // Ask for 1 Mb/s at 5 s (from 400 kb/s): frames captured before 5.2 s are still 400 kb/s
    // frames, the first at or after 5.2 s is a key frame of the new rate (a change of more than
    // 50 %), and the output rate switches then.
    let cfg = StatisticalConfig {
        r_init: 400e3,
        ..quiet()
    };
    let mut asked = None;
    let frames = run(cfg.clone(), 0, 8 * SECOND, |t| {
        (t >= 5 * SECOND && asked.is_none()).then(|| {
            asked = Some(t);
            1e6
        })
    });
    let asked = asked.unwrap();
    let switch = asked + cfg.reaction_delay;
    let old: f64 = 400e3 / 240.0;
    let new: f64 = 1e6 / 240.0;
    let first_new = frames.iter().position(|f| f.capture >= switch).unwrap();
    for f in &frames[10..first_new] {
        assert_eq!(
            f64::from(f.size).round(),
            old.round(),
            "frame {} at {}",
            f.id,
            f.capture
        );
    }
    let k = frames[first_new];
    assert!(k.key, "first frame after τ_v is a key frame");
    assert_eq!(f64::from(k.size), (new * cfg.key_ratio).round());
    // The reaction time, measured: within one frame interval of τ_v.
    let reaction = k.capture - asked;
    assert!(reaction >= cfg.reaction_delay && reaction < cfg.reaction_delay + cfg.frame_interval());
    // A 10 % change starts no transient.
    let mut asked = false;
    let frames = run(cfg.clone(), 0, 8 * SECOND, |t| {
        (t >= 5 * SECOND && !std::mem::replace(&mut asked, true)).then_some(440e3)
    });
    assert!(frames.iter().skip(1).all(|f| !f.key));
    let last = frames.last().unwrap();
    assert_eq!(f64::from(last.size), (440e3f64 / 240.0).round());
}

#[test]
fn the_rate_is_clipped_to_r_min_and_r_max() {
    let cfg = quiet();
    let frames = run(cfg.clone(), 0, 3 * SECOND, |t| {
        Some(if t < SECOND { 10e6 } else { 1e3 })
    });
    let at = |t: Nanos| {
        frames
            .iter()
            .find(|f| f.capture >= t && !f.key)
            .unwrap()
            .size
    };
    // At 0.9 s the 10 Mb/s asked at 0.7 s is in effect, clipped to 1.5 Mb/s; at 2.9 s 1 kb/s,
    // clipped to 150 kb/s.
    assert_eq!(f64::from(at(900_000_000)), (1.5e6f64 / 240.0).round());
    assert_eq!(f64::from(at(2_900_000_000)), (150e3f64 / 240.0).round());
}

#[test]
fn periodic_key_frames_come_every_key_interval() {
    let cfg = StatisticalConfig {
        key_interval: Some(3 * SECOND),
        ..quiet()
    };
    let frames = run(cfg, 0, 10 * SECOND, |_| None);
    let keys: Vec<Nanos> = frames.iter().filter(|f| f.key).map(|f| f.capture).collect();
    // Frames are 1/30 s apart, so each key frame is the first frame at or after 3 s past the
    // previous one.
    assert_eq!(keys.len(), 4);
    for w in keys.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            (3 * SECOND..3 * SECOND + 33_333_334).contains(&gap),
            "{gap}"
        );
    }
}

#[test]
fn bad_parameters_are_refused() {
    let bad = |f: fn(&mut StatisticalConfig)| {
        let mut c = StatisticalConfig::default();
        f(&mut c);
        StatisticalSource::new(c).unwrap_err().param
    };
    assert_eq!(bad(|c| c.fps = 0.0), "fps");
    assert_eq!(bad(|c| c.r_max = 1e3), "r_max");
    assert_eq!(bad(|c| c.transient_frames = 1), "transient_frames");
    assert_eq!(bad(|c| c.key_ratio = 20.0), "key_ratio");
    assert_eq!(bad(|c| c.size_noise = -0.1), "size_noise");
    assert_eq!(bad(|c| c.key_interval = Some(0)), "key_interval");
}
