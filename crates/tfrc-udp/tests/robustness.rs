//! The receiver's input path under bad input: malformed, truncated, duplicated, reordered and
//! spoofed datagrams are counted and ignored; in protected mode tampered, truncated and
//! replayed datagrams are dropped and counted, and only authentic data reaches the core.

mod common;

use common::*;
use rand::rngs::OsRng;
use tfrc_protect::{Channel, KeyExchange, Opener, Sealer};
use tfrc_udp::frame::{self, Kind, Mode};
use tfrc_udp::{ReceiverEngine, ReceiverOptions};

#[test]
fn junk_spoofed_duplicate_and_reordered_data_are_counted() {
    let mut e = engine_with_session();
    let p = peer();
    // Malformed and truncated datagrams.
    e.on_datagram(ms(1), b"", p, None, false);
    e.on_datagram(ms(1), &[0xC5, 5, 0], p, None, false);
    e.on_datagram(ms(1), b"GET / HTTP/1.1\r\n\r\n", p, None, false);
    e.on_datagram(
        ms(1),
        &data(SESSION, &header(0, ms(0)), b"x"),
        p,
        None,
        true,
    );
    let mut bad_version = data(SESSION, &header(0, ms(0)), b"x");
    bad_version[frame::HEADER_LEN] = 9;
    e.on_datagram(ms(1), &bad_version, p, None, false);
    let short = data(SESSION, &header(0, ms(0)), b"");
    e.on_datagram(ms(1), &short[..frame::HEADER_LEN + 10], p, None, false);
    let d = e.drops();
    assert_eq!(d.truncated, 4, "{d:?}");
    assert_eq!(d.malformed, 2, "{d:?}");

    // Another session id (no such session), or the right id from another address (spoofed).
    e.on_datagram(
        ms(2),
        &data(SESSION ^ 1, &header(0, ms(1)), b"x"),
        p,
        None,
        false,
    );
    let other: std::net::SocketAddr = "127.0.0.1:4001".parse().unwrap();
    e.on_datagram(
        ms(2),
        &data(SESSION, &header(0, ms(1)), b"x"),
        other,
        None,
        false,
    );
    assert_eq!((e.drops().unexpected, e.drops().spoofed), (1, 1));
    assert_eq!(e.report().packets, 0, "nothing reached the core");

    // 0, 2, 1 (reordered), 2 again (duplicate), 1 again (duplicate).
    for (t, seq) in [(3, 0), (4, 2), (5, 1), (6, 2), (7, 1)] {
        e.on_datagram(
            ms(t),
            &data(SESSION, &header(seq, ms(t - 1)), b"p"),
            p,
            Some(60),
            false,
        );
    }
    let r = e.report();
    assert_eq!(r.packets, 3);
    assert_eq!(r.reordered, 1);
    assert_eq!(r.drops.duplicate, 2);
    assert_eq!(r.hops, Some(4), "64 sent, 60 received");
    assert_eq!(e.core_status().unwrap().packets_received, 3);
    let seqs: Vec<u64> = std::iter::from_fn(|| e.poll_delivered())
        .map(|m| m.seq)
        .collect();
    assert_eq!(seqs, vec![0, 2, 1]);
    // A frame kind the receiver never gets.
    let mut fb = frame::header(Kind::Feedback, SESSION).to_vec();
    fb.extend_from_slice(&[0; 40]);
    e.on_datagram(ms(8), &fb, p, None, false);
    assert_eq!(e.drops().unexpected, 2);
}

#[test]
fn data_before_the_handshake_is_ignored() {
    let mut e = ReceiverEngine::new(ReceiverOptions::default(), 2).unwrap();
    e.on_datagram(
        ms(0),
        &data(SESSION, &header(0, ms(0)), b"x"),
        peer(),
        None,
        false,
    );
    assert_eq!(e.drops().unexpected, 1);
    assert!(!e.has_session());
    // RSA mode: data before the key is unexpected.
    let mut e = ReceiverEngine::new(ReceiverOptions::default(), 2)
        .unwrap()
        .with_key(KeyExchange::generate(1024, &mut OsRng).unwrap());
    let h = validated_hello(&e, ms(0), peer(), Mode::RsaUnauthenticated);
    e.on_datagram(ms(0), &h, peer(), None, false);
    assert!(e.has_session());
    let ack = e.poll_transmit().expect("HELLO_ACK");
    assert_eq!(frame::parse(&ack.0).unwrap().kind, Kind::HelloAck);
    // Data before the key: unexpected.
    e.on_datagram(
        ms(1),
        &data(SESSION, &header(0, ms(0)), b"x"),
        peer(),
        None,
        false,
    );
    assert_eq!(e.drops().unexpected, 1);
}

/// A protected session set up through the engine, returning the sender's sealer.
fn protected_engine() -> (ReceiverEngine, Sealer, Opener) {
    let mut e = ReceiverEngine::new(ReceiverOptions::default(), 2)
        .unwrap()
        .with_key(KeyExchange::generate(1024, &mut OsRng).unwrap());
    let h = validated_hello(&e, ms(0), peer(), Mode::RsaUnauthenticated);
    e.on_datagram(ms(0), &h, peer(), None, false);
    let (ack, _) = e.poll_transmit().unwrap();
    let f = frame::parse(&ack).unwrap();
    let a = frame::decode_hello_ack(f.body).unwrap();
    let pk = tfrc_protect::decode_public_key(a.payload).unwrap();
    let w = tfrc_protect::wrap_session_key(&pk, &mut OsRng).unwrap();
    let mut key = frame::header(Kind::Key, SESSION).to_vec();
    key.extend_from_slice(&w.wrapped);
    e.on_datagram(ms(1), &key, peer(), None, false);
    let (kack, _) = e.poll_transmit().expect("KEY_ACK");
    let f = frame::parse(&kack).unwrap();
    assert_eq!(f.kind, Kind::KeyAck);
    let mut opener = Opener::new(&w.key, Channel::Feedback);
    opener
        .open(f.header, f.body)
        .expect("the receiver holds the key");
    (e, Sealer::new(&w.key, Channel::Data), opener)
}

fn sealed_data(s: &mut Sealer, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut d = frame::header(Kind::Data, SESSION).to_vec();
    d.extend_from_slice(&tfrc::wire::encode_data(&header(seq, ms(1))));
    let aad = d.clone();
    s.seal_into(&aad, payload, &mut d).unwrap();
    d
}

#[test]
fn protected_mode_drops_tampered_truncated_and_replayed() {
    let (mut e, mut s, _) = protected_engine();
    let p = peer();
    let good = sealed_data(&mut s, 0, b"secret payload");
    // The payload is not in clear on the wire.
    assert!(!good.windows(6).any(|w| w == b"secret"));
    e.on_datagram(ms(2), &good, p, None, false);
    assert_eq!(e.poll_delivered().unwrap().payload, b"secret payload");
    // Replay of an accepted datagram.
    e.on_datagram(ms(3), &good, p, None, false);
    // Tampering: payload bit, header bit (the TTL byte), tag bit.
    let next = sealed_data(&mut s, 1, b"second");
    for at in [next.len() - 20, frame::HEADER_LEN + 3, next.len() - 1] {
        let mut t = next.clone();
        t[at] ^= 0x01;
        e.on_datagram(ms(4), &t, p, None, false);
    }
    // Truncation: cut the tag (fails authentication), and cut into the seq (too short).
    e.on_datagram(ms(4), &next[..next.len() - 5], p, None, false);
    e.on_datagram(ms(4), &next[..frame::HEADER_LEN + 36 + 10], p, None, false);
    // The authentic one still opens afterwards.
    e.on_datagram(ms(5), &next, p, None, false);
    let r = e.report();
    assert_eq!(r.drops.replayed, 1, "{:?}", r.drops);
    assert_eq!(r.drops.tampered, 4, "{:?}", r.drops);
    assert_eq!(r.drops.auth_truncated, 1, "{:?}", r.drops);
    assert_eq!(r.packets, 2, "only authentic packets reach the core");
    assert_eq!(e.core_status().unwrap().packets_received, 2);
    assert_eq!(e.poll_delivered().unwrap().payload, b"second");
    assert!(r.protected);
    // Unprotected data in a protected session fails authentication too.
    e.on_datagram(
        ms(6),
        &data(SESSION, &header(2, ms(5)), b"plain"),
        p,
        None,
        false,
    );
    assert!(e.report().drops.tampered + e.report().drops.auth_truncated > 5);
    assert_eq!(e.report().packets, 2);
}

#[test]
fn protected_feedback_is_sealed() {
    let (mut e, mut s, mut opener) = protected_engine();
    e.on_datagram(ms(2), &sealed_data(&mut s, 0, b"x"), peer(), None, false);
    e.on_timeout(ms(2));
    let mut n = 0;
    while let Some((d, to)) = e.poll_transmit() {
        assert_eq!(to, peer());
        let f = frame::parse(&d).unwrap();
        assert_eq!(f.kind, Kind::Feedback);
        let clear = frame::HEADER_LEN + tfrc::wire::FEEDBACK_LEN;
        opener
            .open(&d[..clear], &d[clear..])
            .expect("authentic feedback");
        let mut forged = d.clone();
        forged[frame::HEADER_LEN + 30] ^= 0x40; // X_recv
        assert!(opener.open(&forged[..clear], &forged[clear..]).is_err());
        n += 1;
    }
    assert!(n >= 1, "the first data packet is answered at once (§6.3)");
}

#[test]
fn random_datagrams_never_panic() {
    // A cheap stand-in for the fuzz target, run on every test: random bytes, and random
    // mutations of valid datagrams of every kind.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
    let mut e = engine_with_session();
    let valid = [
        validated_hello(&e, ms(0), peer(), Mode::Plain),
        data(SESSION, &header(5, ms(1)), b"abc"),
        {
            let mut f = frame::header(Kind::Fin, SESSION).to_vec();
            f.extend_from_slice(&7u64.to_be_bytes());
            f
        },
    ];
    for i in 0..20_000u64 {
        let mut d: Vec<u8> = if i % 2 == 0 {
            let n = rng.gen_range(0..120);
            (0..n).map(|_| rng.gen()).collect()
        } else {
            valid[(i as usize / 2) % valid.len()].clone()
        };
        if !d.is_empty() && i % 2 == 1 {
            for _ in 0..rng.gen_range(1..4) {
                let at = rng.gen_range(0..d.len());
                d[at] = rng.gen();
            }
        }
        e.on_datagram(ms(10 + i), &d, peer(), Some(rng.gen()), false);
        e.on_timeout(ms(10 + i));
        while e.poll_transmit().is_some() {}
        while e.poll_delivered().is_some() {}
    }
    assert!(e.drops().total() > 10_000);
}
