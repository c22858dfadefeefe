//! Building datagrams as a sender would, for driving a `ReceiverEngine` directly.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use tfrc::{DataHeader, Time};
use tfrc_udp::frame::{self, Hello, Kind, Mode};
use tfrc_udp::{ReceiverEngine, ReceiverOptions};

pub const SESSION: u64 = 0x5e55_1011_abcd_0001;

pub fn peer() -> SocketAddr {
    "127.0.0.1:4000".parse().unwrap()
}

pub fn ms(t: u64) -> Time {
    Time::from_nanos(t * 1_000_000)
}

/// A HELLO of `session` asking for `mode`, echoing `token` (empty: the first HELLO).
pub fn hello_for(session: u64, mode: Mode, token: &[u8]) -> Vec<u8> {
    let mut d = frame::header(Kind::Hello, session).to_vec();
    d.extend_from_slice(
        &frame::encode_hello(&Hello {
            mode,
            profile: tfrc::ProfileKind::Rfc5348,
            segment_size: 1000,
            clock_tag: 1,
            variants: Vec::new(),
            token: token.to_vec(),
            noise: Vec::new(),
            ecn: false,
        })
        .unwrap(),
    );
    d
}

/// The HELLO a validated sender at `from` sends at `now` (with the engine's token).
pub fn validated_hello(e: &ReceiverEngine, now: Time, from: SocketAddr, mode: Mode) -> Vec<u8> {
    hello_for(SESSION, mode, &e.retry_token(now, from, SESSION))
}

pub fn header(seq: u64, sent: Time) -> DataHeader {
    DataHeader {
        seq,
        timestamp: sent,
        rtt: Duration::from_millis(20),
        t_rto: Duration::from_millis(80),
        segment_size: 1000,
        round: 1,
        urgent: false,
        initial_ttl: 64,
    }
}

/// An unprotected data datagram.
pub fn data(session: u64, h: &DataHeader, payload: &[u8]) -> Vec<u8> {
    let mut d = frame::header(Kind::Data, session).to_vec();
    d.extend_from_slice(&tfrc::wire::encode_data(h));
    d.extend_from_slice(payload);
    d
}

/// Receiver options that also accept plain sessions (off by default).
pub fn plain_ok() -> ReceiverOptions {
    ReceiverOptions {
        require_protection: false,
        ..ReceiverOptions::default()
    }
}

/// An engine with an accepted unprotected session from `peer()`.
pub fn engine_with_session() -> ReceiverEngine {
    let mut e = ReceiverEngine::new(plain_ok(), 2).unwrap();
    let h = validated_hello(&e, ms(0), peer(), Mode::Plain);
    e.on_datagram(ms(0), &h, peer(), Some(64), false);
    assert!(e.has_session());
    while e.poll_transmit().is_some() {}
    e
}

/// A UDP relay between one client and `server` on loopback: what the client sends goes to
/// `server`, what `server` sends goes to the client after `rewrite` (a proxy's tampering, or
/// nothing). Returns the relay's address and a flag that stops it.
pub fn relay(
    server: SocketAddr,
    rewrite: impl Fn(&mut Vec<u8>) + Send + 'static,
) -> (SocketAddr, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let addr = sock.local_addr().unwrap();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    std::thread::spawn(move || {
        let mut client: Option<SocketAddr> = None;
        let mut buf = [0u8; 65_536];
        while !st.load(Ordering::SeqCst) {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            let mut d = buf[..n].to_vec();
            if from == server {
                rewrite(&mut d);
                if let Some(c) = client {
                    let _ = sock.send_to(&d, c);
                }
            } else {
                client = Some(from);
                let _ = sock.send_to(&d, server);
            }
        }
    });
    (addr, stop)
}
