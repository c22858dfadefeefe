//! Per-packet sealing: round trip, tampering, truncation, replay, arbitrary input.

use std::collections::BTreeSet;

use proptest::prelude::*;
use tfrc_protect::{
    Channel, OpenError, Opener, ReplayWindow, Sealer, SessionKey, REPLAY_WINDOW, SEALED_OVERHEAD,
};

fn key(b: u8) -> SessionKey {
    SessionKey::from_bytes([b; 32])
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

proptest! {
    #[test]
    fn round_trip(k in any::<u8>(), packets in prop::collection::vec((bytes(40), bytes(1500)), 1..8)) {
        let mut s = Sealer::new(&key(k), Channel::Data);
        let mut o = Opener::new(&key(k), Channel::Data);
        for (i, (h, p)) in packets.iter().enumerate() {
            let sealed = s.seal(h, p).unwrap();
            prop_assert_eq!(sealed.len(), p.len() + SEALED_OVERHEAD);
            let opened = o.open(h, &sealed).unwrap();
            prop_assert_eq!(opened.seq, i as u64);
            prop_assert_eq!(&opened.payload, p);
        }
        prop_assert_eq!(o.stats().opened, packets.len() as u64);
        prop_assert_eq!(o.stats().dropped(), 0);
    }

    #[test]
    fn any_single_bit_flip_is_rejected(h in bytes(40), p in bytes(300), bit in any::<prop::sample::Index>()) {
        let mut s = Sealer::new(&key(1), Channel::Data);
        let mut o = Opener::new(&key(1), Channel::Data);
        // Advance the window a little so flips in seq can also land on seen or old numbers.
        for _ in 0..3 {
            let x = s.seal(&h, &p).unwrap();
            o.open(&h, &x).unwrap();
        }
        let sealed = s.seal(&h, &p).unwrap();
        // Flip one bit of header ‖ sealed: the whole authenticated packet.
        let mut wire = [h.clone(), sealed.clone()].concat();
        let i = bit.index(wire.len() * 8);
        wire[i / 8] ^= 1 << (i % 8);
        let (h2, s2) = wire.split_at(h.len());
        let before = o.stats();
        prop_assert!(o.open(h2, s2).is_err());
        prop_assert_eq!(o.stats().dropped(), before.dropped() + 1);
        prop_assert_eq!(o.stats().opened, before.opened);
        // The forgery did not consume the genuine packet's sequence number.
        prop_assert_eq!(o.open(&h, &sealed).unwrap().payload, p);
    }

    #[test]
    fn truncation_is_rejected(h in bytes(40), p in bytes(300), cut in any::<prop::sample::Index>()) {
        let mut s = Sealer::new(&key(2), Channel::Data);
        let mut o = Opener::new(&key(2), Channel::Data);
        let sealed = s.seal(&h, &p).unwrap();
        let keep = cut.index(sealed.len());
        let r = o.open(&h, &sealed[..keep]);
        if keep < SEALED_OVERHEAD {
            prop_assert_eq!(r, Err(OpenError::Truncated));
            prop_assert_eq!(o.stats().truncated, 1);
        } else {
            prop_assert_eq!(r, Err(OpenError::Tampered));
            prop_assert_eq!(o.stats().tampered, 1);
        }
        prop_assert!(o.open(&h, &sealed).is_ok());
    }

    #[test]
    fn replay_is_rejected(h in bytes(40), p in bytes(300), n in 1usize..20, pick in any::<prop::sample::Index>()) {
        let mut s = Sealer::new(&key(3), Channel::Data);
        let mut o = Opener::new(&key(3), Channel::Data);
        let sealed: Vec<_> = (0..n).map(|_| s.seal(&h, &p).unwrap()).collect();
        for x in &sealed {
            o.open(&h, x).unwrap();
        }
        let again = &sealed[pick.index(n)];
        prop_assert_eq!(o.open(&h, again), Err(OpenError::Replayed));
        prop_assert_eq!(o.stats().replayed, 1);
    }

    #[test]
    fn arbitrary_bytes_never_open_or_panic(h in bytes(64), junk in bytes(2000)) {
        let mut o = Opener::new(&key(4), Channel::Data);
        prop_assert!(o.open(&h, &junk).is_err());
        prop_assert_eq!(o.stats().dropped(), 1);
    }

    /// The window against a model: every number ever accepted, and the highest.
    #[test]
    fn window_matches_a_set_model(steps in prop::collection::vec(0u64..5000, 1..300)) {
        let mut w = ReplayWindow::new();
        let mut seen = BTreeSet::new();
        for seq in steps {
            let highest = seen.iter().next_back().copied();
            let expect = match highest {
                Some(h) if seq <= h && h - seq >= REPLAY_WINDOW => Err(OpenError::TooOld),
                _ if seen.contains(&seq) => Err(OpenError::Replayed),
                _ => Ok(()),
            };
            prop_assert_eq!(w.check(seq), expect);
            prop_assert_eq!(w.mark(seq), expect);
            if expect.is_ok() {
                seen.insert(seq);
            }
            prop_assert_eq!(w.highest(), seen.iter().next_back().copied());
        }
    }
}

#[test]
fn wrong_key_channel_or_header_is_tampered() {
    let mut s = Sealer::new(&key(5), Channel::Data);
    let sealed = s.seal(b"header", b"data").unwrap();
    let mut other_key = Opener::new(&key(6), Channel::Data);
    let mut other_channel = Opener::new(&key(5), Channel::Feedback);
    let mut right = Opener::new(&key(5), Channel::Data);
    assert_eq!(other_key.open(b"header", &sealed), Err(OpenError::Tampered));
    assert_eq!(
        other_channel.open(b"header", &sealed),
        Err(OpenError::Tampered)
    );
    assert_eq!(right.open(b"HEADER", &sealed), Err(OpenError::Tampered));
    assert_eq!(right.open(b"header", &sealed).unwrap().payload, b"data");
}

#[test]
fn reordering_within_the_window_is_accepted_beyond_it_too_old() {
    let mut s = Sealer::new(&key(7), Channel::Data);
    let mut o = Opener::new(&key(7), Channel::Data);
    let n = REPLAY_WINDOW as usize + 10;
    let sealed: Vec<_> = (0..n).map(|i| s.seal(b"", &[i as u8]).unwrap()).collect();
    // Deliver 10 first, then 0..10 late: 10 - 0 < window, so all are accepted.
    o.open(b"", &sealed[10]).unwrap();
    for x in &sealed[..10] {
        o.open(b"", x).unwrap();
    }
    for x in &sealed[11..n - 1] {
        o.open(b"", x).unwrap();
    }
    // Packet 9, replayed when it is exactly one window behind the highest: the window can
    // no longer tell, so it is too old rather than a replay.
    let last = sealed[n - 1].clone();
    o.open(b"", &last).unwrap();
    assert_eq!(o.window().highest(), Some(n as u64 - 1));
    let early = &sealed[(n - 1) - REPLAY_WINDOW as usize];
    assert_eq!(o.open(b"", early), Err(OpenError::TooOld));
    // Packet 10 is 1023 behind: still inside, so a replay is recognised as one.
    assert_eq!(o.open(b"", &sealed[10]), Err(OpenError::Replayed));
    let s = o.stats();
    assert_eq!((s.opened, s.too_old, s.replayed), (n as u64, 1, 1));
}
