//! Any sequence of sends and decoded feedback (a peer's bytes) leaves every controller with a
//! finite, in-range target rate and no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rmcat::feedback::{CcfbReport, TwccFeedback};
use rmcat::{Controller, ControllerKind, FeedbackMessage, RateRange, Time};

fuzz_target!(|data: &[u8]| {
    let range = RateRange { min: 100e3, max: 5e6, start: 300e3 };
    for kind in ControllerKind::ALL {
        let mut c = Controller::new(kind, range);
        let mut now = 0u64;
        let mut seq = 0u64;
        for chunk in data.split(|&b| b == 0xff) {
            now += 1_000_000 * u64::from(chunk.first().copied().unwrap_or(1));
            for _ in 0..chunk.len() % 8 {
                c.on_packet_sent(Time::from_nanos(now), seq, 1200);
                seq += 1;
            }
            let fb = match kind {
                ControllerKind::Gcc => TwccFeedback::decode(chunk).ok().map(FeedbackMessage::Twcc),
                _ => CcfbReport::decode(chunk).ok().map(FeedbackMessage::Ccfb),
            };
            if let Some(fb) = fb {
                c.on_feedback(Time::from_nanos(now), &fb);
            }
            c.on_timeout(Time::from_nanos(now));
            let r = c.target_rate();
            assert!(r.is_finite() && (range.min..=range.max).contains(&r), "{kind}: {r}");
        }
    }
});
