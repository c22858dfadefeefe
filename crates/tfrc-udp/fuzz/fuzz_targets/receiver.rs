//! The receiver's whole input path: datagram → framing → session check → (AEAD open) →
//! `tfrc::wire` decode → duplicate filter → core → feedback. The input is a script of
//! datagrams; a control byte per datagram picks the engine (plain session, protected session,
//! or none yet), the source address, the TTL, whether a valid frame header is prefixed, and
//! whether the rest is sealed with the session key, so the fuzzer reaches the core quickly.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tfrc::{ProfileKind, Time};
use tfrc_protect::{Channel, Sealer, SessionKey};
use tfrc_udp::frame::{self, Hello, Kind};
use tfrc_udp::{ReceiverEngine, ReceiverOptions};

const SESSION: u64 = 0x0123_4567_89ab_cdef;

/// One RSA key for every run: a protected HELLO would otherwise generate one per input.
fn rsa_key() -> tfrc_protect::KeyExchange {
    static KEY: std::sync::OnceLock<tfrc_protect::KeyExchange> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        tfrc_protect::KeyExchange::generate(1024, &mut rand::rngs::OsRng).expect("keygen")
    })
    .clone()
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, mut rest)) = input.split_first() else {
        return;
    };
    let peer: std::net::SocketAddr = "10.0.0.1:5000".parse().unwrap();
    let other: std::net::SocketAddr = "10.0.0.2:5000".parse().unwrap();
    let hello = Hello {
        protected: false,
        profile: if mode & 0x10 != 0 {
            ProfileKind::Ns2
        } else {
            ProfileKind::Rfc5348
        },
        segment_size: 1000,
        host_id: 7,
        variants: Vec::new(),
    };
    let key = SessionKey::from_bytes([9; 32]);
    let mut sealer = Sealer::new(&key, Channel::Data);
    let opts = ReceiverOptions {
        queue: 64,
        ..ReceiverOptions::default()
    };
    let Ok(mut e) = ReceiverEngine::new(opts, 7) else {
        return;
    };
    match mode % 3 {
        0 => {}
        1 => {
            let mut d = frame::header(Kind::Hello, SESSION).to_vec();
            d.extend_from_slice(&frame::encode_hello(&hello).unwrap_or_default());
            e.on_datagram(Time::ZERO, &d, peer, None, false);
        }
        _ => e = e.with_keyed_session(Time::ZERO, SESSION, peer, hello, &key),
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
        let mut d = Vec::new();
        if ctl & 0x10 != 0 {
            let kind = [Kind::Data, Kind::Fin, Kind::Hello, Kind::Key][usize::from(ctl >> 6)];
            d.extend_from_slice(&frame::header(kind, SESSION));
            if ctl & 0x20 != 0 && body.len() >= tfrc::wire::DATA_HEADER_LEN {
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
        let from = if ctl & 0x08 != 0 && ctl & 0x04 != 0 {
            other
        } else {
            peer
        };
        let ttl = (ctl & 0x02 != 0).then_some(ctl);
        e.on_datagram(t, &d, from, ttl, ctl == 0xff);
        e.on_timeout(t);
        while e.poll_transmit().is_some() {}
        while e.poll_delivered().is_some() {}
    }
    let r = e.report();
    assert!(r.delay.jitter_range_s.map_or(true, |j| j >= 0.0));
});
