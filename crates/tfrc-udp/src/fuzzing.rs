//! The bodies of the fuzz targets (`crates/tfrc-udp/fuzz`), here so that the corpus replays as
//! an ordinary test (`tests/fuzz_corpus.rs`) on the stable toolchain. Not part of the API.

use std::net::SocketAddr;

use tfrc::{ProfileKind, Time};
use tfrc_protect::{Channel, Opener, Sealer, SessionKey, StaticKeypair};

use crate::frame::{self, Hello, Kind, Mode};
use crate::{ReceiverEngine, ReceiverOptions};

const SESSION: u64 = 0x0123_4567_89ab_cdef;

/// One Noise key for every run: key generation is cheap, but one key keeps inputs reproducible
/// in what they reach.
fn noise_key() -> StaticKeypair {
    static KEY: std::sync::OnceLock<StaticKeypair> = std::sync::OnceLock::new();
    KEY.get_or_init(|| StaticKeypair::from_private([7; 32]))
        .clone()
}

/// The receiver's whole input path: datagram → framing → retry token → session lookup → (AEAD
/// open) → `tfrc::wire` decode → window and duplicate filter → core → feedback. The input is a
/// script of datagrams; the first byte picks the engine (no session, a plain session opened
/// with a valid token, or a session keyed with a fixed key), then per datagram a control byte
/// picks the source address, the TTL, whether a valid frame header is prefixed, whether the
/// rest is sealed under the session key, and whether a HELLO carries a valid token, so the
/// fuzzer gets past validation and authentication to the core. No RSA key is ever generated
/// (RSA mode is refused by this receiver), so no input is slow for that reason.
pub fn receiver(input: &[u8]) {
    let Some((&mode, mut rest)) = input.split_first() else {
        return;
    };
    let peer: SocketAddr = "10.0.0.1:5000".parse().expect("literal");
    let other: SocketAddr = "10.0.0.2:5000".parse().expect("literal");
    let hello = Hello {
        mode: Mode::Plain,
        profile: if mode & 0x10 != 0 {
            ProfileKind::Ns2
        } else {
            ProfileKind::Rfc5348
        },
        segment_size: 1000,
        clock_tag: 7,
        variants: Vec::new(),
        token: Vec::new(),
        noise: Vec::new(),
        ecn: false,
    };
    let key = SessionKey::from_bytes([9; 32]);
    let mut sealer = Sealer::new(&key, Channel::Data);
    let opts = ReceiverOptions {
        buffer_per_session: 64 << 10,
        buffer_total: 96 << 10,
        // Plain sessions are off by default; the fuzzer needs them to reach the core in clear.
        require_protection: false,
        noise_key: Some(noise_key()),
        max_sessions: 4,
        max_sessions_per_address: 2,
        ..ReceiverOptions::default()
    };
    let Ok(mut e) = ReceiverEngine::new(opts, 7) else {
        return;
    };
    match mode % 3 {
        0 => {}
        1 => {
            let mut h = hello.clone();
            h.token = e.retry_token(Time::ZERO, peer, SESSION);
            let mut d = frame::header(Kind::Hello, SESSION).to_vec();
            d.extend_from_slice(&frame::encode_hello(&h).unwrap_or_default());
            e.on_datagram(Time::ZERO, &d, peer, None, false);
        }
        _ => e = e.with_keyed_session(Time::ZERO, SESSION, peer, hello.clone(), &key),
    }
    let mut now = 0u64;
    // Each datagram: control byte, length byte, then that many bytes.
    while rest.len() >= 2 {
        let ctl = rest[0];
        let len = usize::from(rest[1]).min(rest.len() - 2);
        let body = &rest[2..2 + len];
        rest = &rest[2 + len..];
        now += u64::from(ctl & 0x0f) * 1_000_000;
        let t = Time::from_nanos(now);
        let from = if ctl & 0x08 != 0 && ctl & 0x04 != 0 {
            other
        } else {
            peer
        };
        // The HELLO decoder on the raw bytes (a datagram this short is refused as unpadded
        // before it is decoded, so this is its only way in).
        let _ = frame::decode_hello(body);
        let mut d = Vec::new();
        if ctl & 0x10 != 0 {
            let kind = [Kind::Data, Kind::Fin, Kind::Hello, Kind::Key][usize::from(ctl >> 6)];
            d.extend_from_slice(&frame::header(kind, SESSION));
            if kind == Kind::Hello && ctl & 0x20 != 0 {
                // A HELLO body whose token field is a valid token: fields from the input.
                let mut h = frame::decode_hello(body).unwrap_or_else(|_| hello.clone());
                h.token = e.retry_token(t, from, SESSION);
                d.extend_from_slice(&frame::encode_hello(&h).unwrap_or_default());
            } else if ctl & 0x20 != 0 && body.len() >= tfrc::wire::DATA_HEADER_LEN {
                // Cleartext part as given, the rest sealed under the session key.
                let clear = if kind == Kind::Fin {
                    8
                } else {
                    tfrc::wire::DATA_HEADER_LEN
                };
                d.extend_from_slice(&body[..clear.min(body.len())]);
                let aad = d.clone();
                let _ = sealer.seal_into(&aad, &body[clear.min(body.len())..], &mut d);
            } else {
                d.extend_from_slice(body);
            }
        } else {
            d.extend_from_slice(body);
        }
        let ttl = (ctl & 0x02 != 0).then_some(ctl);
        e.on_datagram(t, &d, from, ttl, ctl == 0xff);
        e.on_timeout(t);
        while let Some((out, to)) = e.poll_transmit() {
            // Before validation nothing larger than what came in goes out.
            assert!(to == peer || to == other);
            assert!(out.len() <= crate::MAX_SEGMENT + 200);
        }
        while e.poll_delivered().is_some() {}
    }
    let (i, o) = e.reflection();
    assert!(o <= i, "reflection {o} > {i}");
    let r = e.report();
    assert!(r.delay.jitter_range_s.is_none_or(|j| j >= 0.0));
}

/// The sender's decoders: everything a receiver (or an attacker) can send it. The first byte
/// picks the path: the handshake answers (RETRY, HELLO_ACK, and the Noise answer inside it,
/// read by a real initiator), or the input after the handshake (`sender::decode_input`:
/// FEEDBACK and FIN_ACK, plain or opened with a fixed key), with an optional valid frame
/// header prefixed.
pub fn sender(input: &[u8]) {
    let Some((&ctl, body)) = input.split_first() else {
        return;
    };
    let mut d = Vec::new();
    if ctl & 0x80 != 0 {
        let kind =
            [Kind::Feedback, Kind::FinAck, Kind::HelloAck, Kind::Retry][usize::from(ctl & 3)];
        d.extend_from_slice(&frame::header(kind, SESSION));
    }
    d.extend_from_slice(body);
    match (ctl >> 2) & 3 {
        0 => {
            let mut drops = crate::Drops::default();
            let _ = crate::sender::decode_input(&d, SESSION, None, &mut drops);
        }
        1 => {
            let key = SessionKey::from_bytes([9; 32]);
            let mut o = Opener::new(&key, Channel::Feedback);
            let mut drops = crate::Drops::default();
            let _ = crate::sender::decode_input(&d, SESSION, Some(&mut o), &mut drops);
        }
        2 => {
            if let Ok(f) = frame::parse(&d) {
                let _ = frame::decode_retry(f.body);
                if let Ok(a) = frame::decode_hello_ack(f.body) {
                    if a.mode == Mode::RsaUnauthenticated {
                        let _ = tfrc_protect::decode_public_key(a.payload);
                    }
                }
            }
        }
        _ if ctl & 0x40 != 0 => {
            // An unauthenticated (NN) initiator reading an arbitrary answer, and a responder
            // reading an arbitrary first message: never a panic.
            if let Ok(mut i) = tfrc_protect::NoiseInitiator::unauthenticated(b"fuzz") {
                if i.first_message().is_ok() {
                    assert!(
                        i.finish(body).is_err() || body.len() == tfrc_protect::noise::NN_REPLY_LEN
                    );
                }
            }
            let _ = tfrc_protect::noise::respond_unauthenticated(b"fuzz", body);
        }
        _ => {
            // A real initiator reading an arbitrary answer: must fail, never panic.
            let me = StaticKeypair::from_private([3; 32]);
            if let Ok(mut i) = tfrc_protect::NoiseInitiator::new(&me, noise_key().public(), b"fuzz")
            {
                if i.first_message().is_ok() {
                    assert!(
                        i.finish(body).is_err() || body.len() == tfrc_protect::noise::REPLY_LEN
                    );
                }
            }
        }
    }
}
