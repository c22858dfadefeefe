//! The receiver engine attacked as issue 16 describes, without sockets (deterministic, no
//! timing): squatting, spoofed-source reflection, sequence-number injection, a failed RSA KEY,
//! and the session table's limits. `tfrclab`'s tests run the same attacks over real sockets.

mod common;

use std::net::SocketAddr;

use common::*;
use rand::rngs::OsRng;
use tfrc_protect::KeyExchange;
use tfrc_udp::frame::{self, Kind, Mode};
use tfrc_udp::{ReceiverEngine, ReceiverOptions};

fn addr(i: u32, port: u16) -> SocketAddr {
    SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], port))
}

fn drain(e: &mut ReceiverEngine) -> Vec<(Vec<u8>, SocketAddr)> {
    std::iter::from_fn(|| e.poll_transmit()).collect()
}

/// A validated session `id` from `from` at `now` (the sender echoed the token).
fn open(e: &mut ReceiverEngine, now: tfrc::Time, id: u64, from: SocketAddr) {
    let h = hello_for(id, Mode::Plain, &e.retry_token(now, from, id));
    e.on_datagram(now, &h, from, None, false);
}

/// Spoofed HELLOs (any source, no token) get one RETRY each, smaller than the HELLO, and no
/// state: reflection below 1x, and nothing for the table to hold.
#[test]
fn spoofed_hellos_reflect_less_than_they_send_and_leave_no_state() {
    let mut e = ReceiverEngine::new(ReceiverOptions::default(), 2).unwrap();
    let mut sent_in = 0usize;
    let mut sent_out = 0usize;
    for i in 0..2_000u32 {
        let h = hello_for(u64::from(i), Mode::Noise, &[]);
        sent_in += h.len();
        e.on_datagram(ms(u64::from(i)), &h, addr(i, 9), None, false);
        for (d, to) in drain(&mut e) {
            assert_eq!(to, addr(i, 9));
            assert_eq!(frame::parse(&d).unwrap().kind, Kind::Retry);
            assert!(d.len() <= h.len());
            sent_out += d.len();
        }
    }
    assert!(!e.has_session(), "no state before validation");
    let ratio = sent_out as f64 / sent_in as f64;
    assert!(ratio <= 1.0, "reflection {ratio}");
    assert_eq!(
        (frame::RETRY_DATAGRAM, frame::MIN_HELLO_DATAGRAM),
        (36, 1200),
        "ratio 36/1200 = 0.03"
    );
    assert!((ratio - 36.0 / 1200.0).abs() < 1e-9, "{ratio}");
    let (i, o) = e.reflection();
    assert_eq!((i, o), (sent_in as u64, sent_out as u64));
    // A short HELLO (not padded) is not answered at all.
    let short = &hello_for(7, Mode::Plain, &[])[..frame::RETRY_DATAGRAM - 1];
    e.on_datagram(ms(3000), short, addr(1, 1), None, false);
    assert!(drain(&mut e).is_empty());
    // Forged, expired, or another address's tokens: no session, no answer.
    let tok = e.retry_token(ms(0), addr(1, 1), 5);
    for (now, from, id) in [
        (ms(1), addr(2, 1), 5), // stolen by another address
        (ms(1), addr(1, 1), 6), // another session id
        (ms(1) + tfrc_udp::receiver::TOKEN_LIFETIME, addr(1, 1), 5), // expired
    ] {
        e.on_datagram(now, &hello_for(id, Mode::Plain, &tok), from, None, false);
        assert!(drain(&mut e).is_empty());
    }
    assert_eq!(e.drops().bad_token, 3);
    assert!(!e.has_session());
}

/// One hostile address opening sessions (and never sending data) cannot fill the table, and
/// a legitimate sender is accepted beside them; a full table evicts the quietest session
/// without data before refusing anyone.
#[test]
fn squatters_cannot_block_a_new_sender() {
    let opts = ReceiverOptions {
        max_sessions: 8,
        max_sessions_per_address: 2,
        ..plain_ok()
    };
    let mut e = ReceiverEngine::new(opts, 2).unwrap();
    // One address tries 50 sessions: only 2 are kept.
    for id in 0..50u64 {
        open(&mut e, ms(id), id, addr(66, 1000 + id as u16));
    }
    assert_eq!(e.active_sessions(), 2);
    assert_eq!(e.drops().table_full, 48);
    // Many addresses (a botnet that can receive) fill the table...
    for i in 0..6u32 {
        open(&mut e, ms(100), 1000 + u64::from(i), addr(100 + i, 1));
    }
    assert_eq!(e.active_sessions(), 8);
    drain(&mut e);
    // ...and the legitimate sender still gets in once the squatters are past their grace: the
    // least useful squatter is evicted.
    let legit = addr(200, 7);
    open(&mut e, ms(200), 0x1e91, legit);
    assert_eq!(
        e.drops().table_full,
        49,
        "every squatter is within its grace"
    );
    drain(&mut e);
    let t0 = ms(100) + tfrc_udp::receiver::NEW_SESSION_GRACE;
    open(&mut e, t0, 0x1e91, legit);
    let out = drain(&mut e);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].1, legit);
    let a = frame::decode_hello_ack(frame::parse(&out[0].0).unwrap().body).unwrap();
    assert!(!a.refused);
    assert_eq!(e.active_sessions(), 8);
    // Its data flows; a squatter's duplicate HELLO for the legit id from elsewhere is spoofed.
    for seq in 0..10 {
        e.on_datagram(
            t0 + std::time::Duration::from_millis(1 + seq),
            &data(0x1e91, &header(seq, t0), b"ok"),
            legit,
            None,
            false,
        );
    }
    let mine: Vec<_> = std::iter::from_fn(|| e.poll_delivered()).collect();
    assert_eq!(mine.len(), 10);
    assert!(mine.iter().all(|m| m.session == 0x1e91));
    let h = hello_for(0x1e91, Mode::Plain, &e.retry_token(t0, addr(66, 5), 0x1e91));
    e.on_datagram(t0, &h, addr(66, 5), None, false);
    assert!(e.drops().spoofed >= 1);
    // Squatters without data expire after the handshake idle time; the legit session (with
    // data, heard recently) stays.
    let later = ms(100) + tfrc_udp::receiver::HANDSHAKE_IDLE;
    e.on_datagram(
        later,
        &data(0x1e91, &header(10, later), b"ok"),
        legit,
        None,
        false,
    );
    e.on_timeout(later + std::time::Duration::from_millis(1));
    assert_eq!(e.active_sessions(), 1);
}

/// Plain mode: a forged sequence number far ahead (an on-path attacker who read the session
/// id) is refused, so the legitimate packets after it are not stale.
#[test]
fn a_forged_sequence_jump_is_out_of_the_window() {
    let mut e = engine_with_session();
    let p = peer();
    for seq in 0..100 {
        e.on_datagram(
            ms(10 + seq),
            &data(SESSION, &header(seq, ms(9 + seq)), b"x"),
            p,
            None,
            false,
        );
    }
    // Just under the old limit of 2^20, and just past this session's window.
    for forged in [(1u64 << 20) - 1, 99 + 1025] {
        e.on_datagram(
            ms(200),
            &data(SESSION, &header(forged, ms(199)), b"evil"),
            p,
            None,
            false,
        );
    }
    assert_eq!(e.drops().out_of_range, 2);
    for seq in 100..200 {
        e.on_datagram(
            ms(210 + seq),
            &data(SESSION, &header(seq, ms(209 + seq)), b"x"),
            p,
            None,
            false,
        );
    }
    let r = e.report();
    assert_eq!(
        r.packets, 200,
        "every legitimate packet accepted: {:?}",
        r.drops
    );
    assert_eq!(r.drops.stale, 0);
    // Within the window (a burst of losses) is accepted.
    e.on_datagram(
        ms(500),
        &data(SESSION, &header(199 + 1000, ms(499)), b"x"),
        p,
        None,
        false,
    );
    assert_eq!(e.report().packets, 201);
}

/// RSA mode: a KEY that does not decrypt ends the session, so no address gets more than one
/// RSA decryption per validated HELLO; the RSA key exists before any HELLO.
#[test]
fn a_failed_rsa_key_ends_the_session() {
    let mut e = ReceiverEngine::new(ReceiverOptions::default(), 2)
        .unwrap()
        .with_key(KeyExchange::generate(1024, &mut OsRng).unwrap());
    let h = validated_hello(&e, ms(0), peer(), Mode::RsaUnauthenticated);
    e.on_datagram(ms(0), &h, peer(), None, false);
    assert!(e.has_session());
    drain(&mut e);
    let mut key = frame::header(Kind::Key, SESSION).to_vec();
    key.extend_from_slice(&[0x55; 128]);
    e.on_datagram(ms(1), &key, peer(), None, false);
    assert!(!e.has_session());
    assert_eq!(e.drops().tampered, 1);
    e.on_datagram(ms(2), &key, peer(), None, false);
    assert_eq!(e.drops().tampered, 1, "no second decryption");
    // The default receiver offers no RSA mode at all, and refuses 1024-bit keys.
    let mut plain = ReceiverEngine::new(ReceiverOptions::default(), 2).unwrap();
    let h = validated_hello(&plain, ms(0), peer(), Mode::RsaUnauthenticated);
    plain.on_datagram(ms(0), &h, peer(), None, false);
    assert!(!plain.has_session());
    assert_eq!(plain.drops().refused, 1);
    let weak = ReceiverOptions {
        rsa_unauthenticated: true,
        rsa_bits: 1024,
        ..ReceiverOptions::default()
    };
    assert!(ReceiverEngine::new(weak, 2).is_err());
}

/// Noise: a sender that pinned another key, or is not on the allow-list, gets no session.
#[test]
fn noise_refuses_wrong_keys_and_unlisted_senders() {
    use tfrc_protect::{NoiseInitiator, StaticKeypair};
    let real = StaticKeypair::generate().unwrap();
    let impostor = StaticKeypair::generate().unwrap();
    let listed = StaticKeypair::generate().unwrap();
    let opts = ReceiverOptions {
        noise_key: Some(real.clone()),
        allowed_senders: Some(vec![*listed.public()]),
        ..ReceiverOptions::default()
    };
    let mut e = ReceiverEngine::new(opts, 2).unwrap();
    let attempt = |e: &mut ReceiverEngine, me: &StaticKeypair, pinned: &[u8; 32], id: u64| {
        let tok = e.retry_token(ms(0), peer(), id);
        let plain = hello_for(id, Mode::Noise, &tok);
        let prologue = frame::hello_prologue(&plain).unwrap();
        let mut i = NoiseInitiator::new(me, pinned, &prologue).unwrap();
        let msg = i.first_message().unwrap();
        let mut h = frame::header(Kind::Hello, id).to_vec();
        let mut hello = frame::decode_hello(&plain[frame::HEADER_LEN..]).unwrap();
        hello.noise = msg;
        h.extend_from_slice(&frame::encode_hello(&hello).unwrap());
        e.on_datagram(ms(1), &h, peer(), None, false);
        let out = drain(e);
        (i, out)
    };
    // Pinned the impostor's key: the receiver cannot read the handshake.
    let (_, out) = attempt(&mut e, &listed, impostor.public(), 1);
    assert!(out.is_empty());
    assert_eq!(e.drops().handshake_failed, 1);
    // Right key, unlisted sender.
    let (_, out) = attempt(&mut e, &impostor, real.public(), 2);
    assert!(out.is_empty());
    assert_eq!(e.drops().not_allowed, 1);
    assert!(!e.has_session());
    // Listed sender: accepted, and its handshake completes.
    let (i, out) = attempt(&mut e, &listed, real.public(), 3);
    assert_eq!(out.len(), 1);
    let a = frame::decode_hello_ack(frame::parse(&out[0].0).unwrap().body).unwrap();
    assert_eq!(a.mode, Mode::Noise);
    assert!(i.finish(a.payload).is_ok());
    assert!(e.has_session());
}
