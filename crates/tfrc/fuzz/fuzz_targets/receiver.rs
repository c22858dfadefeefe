//! Arbitrary byte strings cut into packets and fed, decoded, to a receiver and a sender of
//! both profiles, plain and with seed variants: no panic, and every feedback stays in range.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tfrc::variants::{self, VariantChoice};
use tfrc::wire::{self, Decoded};
use tfrc::{Profile, Receiver, Sender, Time};

/// Two variant sets that together touch every policy the catalogue sets.
const SETS: [&[&str]; 3] = [
    &[],
    &[
        "adaptive-rtt",
        "rto-link-error:spike=1",
        "ali-ci-include",
        "adaptive-ttl",
        "protect-raised-ttl",
        "owd-classifier:offset_clock=1",
        "veno-simd-055",
    ],
    &["ali-mean-replace", "simd", "protect-all"],
];

fuzz_target!(|data: &[u8]| {
    let mut profiles = Vec::new();
    for base in [Profile::rfc5348(), Profile::ns2()] {
        for set in SETS {
            let c: Vec<VariantChoice> = set.iter().map(|n| n.parse().unwrap()).collect();
            profiles.push(variants::apply(base, &c).unwrap());
        }
    }
    for profile in profiles {
        let mut rx = Receiver::new(profile.receiver).unwrap();
        let mut tx = Sender::new(profile.sender).unwrap();
        tx.set_infinite_backlog(Time::ZERO);
        let mut now = Time::ZERO;
        // Each chunk: 1 byte of time step (ms), then a packet of the length the type needs.
        let mut rest = data;
        while rest.len() > 2 {
            now += Duration::from_millis(u64::from(rest[0]));
            let body = &rest[1..];
            let len = match body.get(1) {
                Some(&wire::TYPE_DATA) => wire::DATA_HEADER_LEN,
                _ => wire::FEEDBACK_LEN,
            }
            .min(body.len());
            match wire::decode(&body[..len]) {
                Ok(Decoded::Data(h, _)) => rx.on_data(now, &h, len as u32),
                Ok(Decoded::Feedback(fb)) => tx.on_feedback(now, &fb),
                Err(_) => {}
            }
            rx.on_timeout(now);
            tx.on_timeout(now);
            if let Some(fb) = rx.poll_feedback(now) {
                assert!(fb.x_recv.is_finite() && fb.x_recv >= 0.0);
                assert!((0.0..=1.0).contains(&fb.p));
                tx.on_feedback(now, &fb);
            }
            for _ in 0..64 {
                match tx.poll_transmit(now) {
                    Some(h) => rx.on_data(now, &h, 1000),
                    None => break,
                }
            }
            let st = tx.status();
            assert!(st.x.is_finite() && st.x > 0.0);
            rest = &body[len..];
        }
    }
});
