//! Issue 29 (the transport's second audit), on the receiver engine without sockets: each
//! attack as the audit reproduced it, and what must hold now. Deterministic (virtual time);
//! the only figure printed is the handshake work per copy in point 3, which is not asserted.
//! `tfrclab/tests/udp_attack_netns.rs` runs them against a `tfrclab recv` process.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::*;
use tfrc::Time;
use tfrc_protect::{NoiseInitiator, StaticKeypair};
use tfrc_udp::frame::{self, Kind, Mode};
use tfrc_udp::{ReceiverEngine, ReceiverOptions};

fn addr(i: u32, port: u16) -> SocketAddr {
    SocketAddr::from(([10, 9, (i >> 8) as u8, i as u8], port))
}

fn drain(e: &mut ReceiverEngine) -> Vec<(Vec<u8>, SocketAddr)> {
    std::iter::from_fn(|| e.poll_transmit()).collect()
}

fn plain() -> ReceiverOptions {
    ReceiverOptions {
        require_protection: false,
        ..ReceiverOptions::default()
    }
}

fn secs(s: u64) -> Time {
    ms(s * 1000)
}

/// Whether the receiver answered `from` with a HELLO_ACK that accepts the session.
fn accepted(out: &[(Vec<u8>, SocketAddr)], from: SocketAddr) -> bool {
    out.iter().any(|(d, to)| {
        *to == from
            && frame::parse(d).is_ok_and(|f| {
                f.kind == Kind::HelloAck
                    && frame::decode_hello_ack(f.body).is_ok_and(|a| !a.refused)
            })
    })
}

/// Point 2: 64 sessions (16 addresses × 4) that each send one DATA every 2 s fill the table;
/// a real sender must still get in (before: refused as `table_full` until one of them
/// stopped), and its data must flow.
#[test]
fn sessions_that_trickle_cannot_hold_the_table() {
    let mut e = ReceiverEngine::new(plain(), 2).unwrap();
    let squatters: Vec<(u64, SocketAddr)> = (0..64u32)
        .map(|i| (1000 + u64::from(i), addr(i / 4, 2000 + i as u16)))
        .collect();
    for &(id, from) in &squatters {
        let h = hello_for(id, Mode::Plain, &e.retry_token(ms(0), from, id));
        e.on_datagram(ms(0), &h, from, None, false);
    }
    assert_eq!(e.active_sessions(), 64);
    // Twenty seconds of one DATA every 2 s each.
    for round in 0..10u64 {
        let t = secs(2 * round + 1);
        for &(id, from) in &squatters {
            e.on_datagram(t, &data(id, &header(round, t), b"k"), from, None, false);
        }
        e.on_timeout(t);
        drain(&mut e);
    }
    assert_eq!(e.active_sessions(), 64, "the squatters are alive");
    let legit = addr(200, 7);
    let now = secs(20);
    let h = hello_for(0x1e91, Mode::Plain, &e.retry_token(now, legit, 0x1e91));
    e.on_datagram(now, &h, legit, None, false);
    let out = drain(&mut e);
    assert!(
        accepted(&out, legit),
        "the real sender was refused: {:?}",
        e.drops()
    );
    for seq in 0..50u64 {
        let t = now + Duration::from_millis(10 * (seq + 1));
        e.on_datagram(
            t,
            &data(0x1e91, &header(seq, t), &[1; 1000]),
            legit,
            None,
            false,
        );
    }
    let mine = std::iter::from_fn(|| e.poll_delivered())
        .filter(|d| d.session == 0x1e91)
        .count();
    assert_eq!(mine, 50);
    // New squatter handshakes (each address may open more as others are evicted) evict
    // squatters, never the sender with data.
    for (k, &(_, from)) in squatters.iter().enumerate().take(16) {
        let id = 5000 + k as u64;
        let t = now + Duration::from_secs(2);
        let h = hello_for(id, Mode::Plain, &e.retry_token(t, from, id));
        e.on_datagram(t, &h, from, None, false);
    }
    assert!(
        e.reports()
            .iter()
            .any(|r| r.session == 0x1e91 && !r.evicted && r.packets == 50),
        "the real session was evicted"
    );
}

/// The first message of a Noise IK handshake made with `me`, pinning `receiver`, inside a
/// HELLO of session `id` that echoes `token`.
fn noise_hello(
    id: u64,
    token: &[u8],
    me: &StaticKeypair,
    receiver: &[u8; 32],
    garbage: bool,
) -> Vec<u8> {
    let plain = hello_for(id, Mode::Noise, token);
    let mut hello = frame::decode_hello(&plain[frame::HEADER_LEN..]).unwrap();
    hello.noise = if garbage {
        vec![0x5a; tfrc_protect::noise::FIRST_MESSAGE_LEN]
    } else {
        let prologue = frame::hello_prologue(&plain).unwrap();
        NoiseInitiator::new(me, receiver, &prologue)
            .unwrap()
            .first_message()
            .unwrap()
    };
    let mut d = frame::header(Kind::Hello, id).to_vec();
    d.extend_from_slice(&frame::encode_hello(&hello).unwrap());
    d
}

/// Point 3: one valid retry token replayed with a garbage Noise message (or a non-allowed
/// key) costs at most one handshake, and tokens fetched anew from one address, or from many,
/// cannot buy more handshakes than the budgets allow. Before, every copy ran a handshake
/// (and built a session's core first): 10,000 handshakes for 10,000 copies.
#[test]
fn a_replayed_token_opens_one_handshake_and_budgets_bound_the_rest() {
    let key = StaticKeypair::generate().unwrap();
    let listed = StaticKeypair::generate().unwrap();
    let stranger = StaticKeypair::generate().unwrap();
    let opts = ReceiverOptions {
        noise_key: Some(key.clone()),
        allowed_senders: Some(vec![*listed.public()]),
        ..ReceiverOptions::default()
    };
    let mut e = ReceiverEngine::new(opts, 2).unwrap();
    let from = addr(1, 4000);
    let tok = e.retry_token(ms(0), from, 77);
    let garbage = noise_hello(77, &tok, &stranger, key.public(), true);
    let started = Instant::now();
    for i in 0..10_000u64 {
        e.on_datagram(
            ms(1) + Duration::from_micros(50 * i),
            &garbage,
            from,
            None,
            false,
        );
    }
    let per_copy = started.elapsed() / 10_000;
    println!(
        "a replayed token: {per_copy:?} per copy, drops {:?}",
        e.drops()
    );
    assert_eq!(e.drops().handshake_failed, 1, "{:?}", e.drops());
    assert!(!e.has_session());
    // The same with a real handshake from a key that is not allowed.
    let tok = e.retry_token(ms(600), from, 78);
    let unlisted = noise_hello(78, &tok, &stranger, key.public(), false);
    for i in 0..1_000u64 {
        e.on_datagram(
            ms(600) + Duration::from_micros(50 * i),
            &unlisted,
            from,
            None,
            false,
        );
    }
    assert_eq!(e.drops().not_allowed, 1, "{:?}", e.drops());
    // Fresh tokens from one address: at most its burst at once.
    let t = secs(5);
    for id in 0..100u64 {
        let tok = e.retry_token(t, from, 100 + id);
        let h = noise_hello(100 + id, &tok, &stranger, key.public(), true);
        e.on_datagram(t, &h, from, None, false);
    }
    let per_address = e.drops().handshake_failed - 1;
    assert!(
        per_address <= 8,
        "{per_address} handshakes from one address at once"
    );
    // From 2,000 addresses at once: at most the global burst.
    let before = e.drops().handshake_failed;
    let t = secs(20);
    for i in 0..2_000u32 {
        let a = addr(1000 + i, 5000);
        let tok = e.retry_token(t, a, u64::from(i));
        let h = noise_hello(u64::from(i), &tok, &stranger, key.public(), true);
        e.on_datagram(t, &h, a, None, false);
    }
    let global = e.drops().handshake_failed - before;
    assert!(global <= 500, "{global} handshakes at once");
    // A listed sender still gets in afterwards (the budgets refill).
    let t = secs(30);
    let a = addr(3, 4000);
    let tok = e.retry_token(t, a, 4242);
    let h = noise_hello(4242, &tok, &listed, key.public(), false);
    e.on_datagram(t, &h, a, None, false);
    assert!(accepted(&drain(&mut e), a), "{:?}", e.drops());
}

/// Point 5: with 65,000-byte segments and an application that never reads, what the receiver
/// holds stays within a bound in bytes (before: 4,096 messages, 266 MB), and the data that do
/// not fit are dropped before the core, so the sender sees losses and slows down.
#[test]
fn an_application_that_does_not_read_holds_bounded_bytes() {
    let mut e = ReceiverEngine::new(plain(), 2).unwrap();
    let from = peer();
    let mut h = hello_for(SESSION, Mode::Plain, &e.retry_token(ms(0), from, SESSION));
    // The segment size field of the HELLO: 65,000 bytes.
    let at = frame::HEADER_LEN + 4;
    h[at..at + 4].copy_from_slice(&65_000u32.to_be_bytes());
    e.on_datagram(ms(0), &h, from, None, false);
    assert!(e.has_session());
    let payload = vec![0xabu8; 65_000];
    for seq in 0..2_000u64 {
        let t = ms(1 + seq);
        let mut hd = header(seq, t);
        hd.segment_size = 65_000;
        e.on_datagram(t, &data(SESSION, &hd, &payload), from, None, false);
        e.on_timeout(t);
        drain(&mut e);
    }
    let r = e.report();
    let held: usize = std::iter::from_fn(|| e.poll_delivered())
        .map(|d| d.payload.len())
        .sum();
    println!(
        "held {held} bytes of 130,000,000; app_overflow {}, p {}",
        r.app_overflow, r.p
    );
    let bound = ReceiverOptions::default().buffer_per_session;
    assert!(held <= bound, "{held} bytes held, bound {bound}");
    assert!(held >= bound / 2, "the buffer was used: {held}");
    // What did not fit is a loss to TFRC.
    assert!(r.app_overflow >= 1_800, "{r:?}");
    assert!(r.p > 0.0, "the sender is not told: p = {}", r.p);
}

/// Point 6: the first flight must be padded to 1200 bytes (QUIC's rule). Before, an unpadded
/// HELLO of 36 bytes got a 36-byte RETRY (1.0×), one of 128 bytes too (0.28×).
#[test]
fn an_unpadded_hello_gets_no_answer() {
    let mut e = ReceiverEngine::new(ReceiverOptions::default(), 2).unwrap();
    let full = hello_for(9, Mode::NoiseUnauthenticated, &[]);
    assert_eq!(
        full.len(),
        1200,
        "the sender's HELLO is padded to 1200 bytes"
    );
    // Shorter forms of the same HELLO (its padding is zeros, so any cut above the fields is
    // still a well-formed HELLO).
    for len in [36, 128, 600, 1199] {
        e.on_datagram(ms(1), &full[..len], addr(1, 1), None, false);
        assert!(drain(&mut e).is_empty(), "a {len}-byte HELLO was answered");
    }
    e.on_datagram(ms(2), &full, addr(1, 1), None, false);
    let out = drain(&mut e);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0.len(), frame::RETRY_DATAGRAM);
    let (i, o) = e.reflection();
    assert!(o * 30 <= i, "reflection {o}/{i}");
}

/// Point 1 in the library: each session's data is handed over apart, in its own order, and
/// an ended session's messages can still be read to the end.
#[test]
fn each_sessions_data_is_handed_over_apart() {
    let mut e = ReceiverEngine::new(plain(), 2).unwrap();
    let (a, b) = (addr(1, 1), addr(2, 2));
    for (id, from) in [(1u64, a), (2u64, b)] {
        let h = hello_for(id, Mode::Plain, &e.retry_token(ms(0), from, id));
        e.on_datagram(ms(0), &h, from, None, false);
    }
    for seq in 0..20u64 {
        let t = ms(10 + seq);
        e.on_datagram(t, &data(1, &header(seq, t), b"aaaa"), a, None, false);
        e.on_datagram(t, &data(2, &header(seq, t), b"bbbb"), b, None, false);
    }
    let from_b: Vec<_> = std::iter::from_fn(|| e.poll_delivered_from(2)).collect();
    assert_eq!(from_b.len(), 20);
    assert!(from_b.iter().all(|d| d.payload == b"bbbb"));
    assert_eq!(
        from_b.iter().map(|d| d.seq).collect::<Vec<_>>(),
        (0..20).collect::<Vec<_>>()
    );
    let from_a: Vec<_> = std::iter::from_fn(|| e.poll_delivered_from(1)).collect();
    assert_eq!(from_a.len(), 20);
    assert!(from_a.iter().all(|d| d.payload == b"aaaa"));
}
