//! Building datagrams as a sender would, for driving a `ReceiverEngine` directly.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use tfrc::{DataHeader, Time};
use tfrc_udp::frame::{self, Hello, Kind};
use tfrc_udp::{ReceiverEngine, ReceiverOptions};

pub const SESSION: u64 = 0x5e55_1011_abcd_0001;

pub fn peer() -> SocketAddr {
    "127.0.0.1:4000".parse().unwrap()
}

pub fn ms(t: u64) -> Time {
    Time::from_nanos(t * 1_000_000)
}

pub fn hello(protected: bool) -> Vec<u8> {
    let mut d = frame::header(Kind::Hello, SESSION).to_vec();
    d.extend_from_slice(
        &frame::encode_hello(&Hello {
            protected,
            profile: tfrc::ProfileKind::Rfc5348,
            segment_size: 1000,
            host_id: 1,
            variants: Vec::new(),
        })
        .unwrap(),
    );
    d
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

/// An engine with an accepted unprotected session from `peer()`.
pub fn engine_with_session() -> ReceiverEngine {
    let mut e = ReceiverEngine::new(ReceiverOptions::default(), 2).unwrap();
    e.on_datagram(ms(0), &hello(false), peer(), Some(64), false);
    assert!(e.has_session());
    while e.poll_transmit().is_some() {}
    e
}
