//! The fuzz targets' bodies (`tfrc_udp::fuzzing`) as an ordinary test on stable: the checked-in
//! seeds (`fuzz/seeds/<target>/`), the local cargo-fuzz corpus when there is one
//! (`fuzz/corpus/<target>/`, not committed), and structured inputs built here that reach each
//! path (a plain session's data, sealed data, a validated HELLO, every sender-side decoder).

mod common;

use std::path::Path;

use common::{header, ms};
use tfrc_udp::frame::{self, Kind};

fn replay_dir(dir: &Path, target: fn(&[u8])) -> usize {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for e in rd.flatten() {
        let p = e.path();
        if p.is_file() {
            let bytes = std::fs::read(&p).unwrap();
            target(&bytes);
            n += 1;
        }
    }
    n
}

fn dgram(ctl: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![ctl, body.len().min(255) as u8];
    v.extend_from_slice(&body[..body.len().min(255)]);
    v
}

/// Inputs for `fuzzing::receiver` that reach the core: a plain session's data (ctl 0x10:
/// Data kind with a valid header prefixed), sealed data in the keyed engine (0x30), a HELLO
/// with a valid token (0xB0), a FIN.
fn receiver_inputs() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for mode in [0u8, 1, 2, 0x11, 0x12] {
        let mut v = vec![mode];
        for seq in 0..40u64 {
            let mut d = tfrc::wire::encode_data(&header(seq, ms(seq))).to_vec();
            d.extend_from_slice(b"payload");
            // Data kind (bits 6-7 = 0), header prefixed; sealed in the keyed engine.
            let ctl = if mode % 3 == 2 { 0x31 } else { 0x11 };
            v.extend(dgram(ctl, &d));
        }
        v.extend(dgram(0x50 | 0x01, &40u64.to_be_bytes()));
        v.extend(dgram(0xB0, &[]));
        v.extend(dgram(0x0f, b"junk"));
        out.push(v);
    }
    out
}

/// Inputs for `fuzzing::sender`: each decoder path with a valid frame header.
fn sender_inputs() -> Vec<Vec<u8>> {
    let fb = tfrc::Feedback {
        timestamp_echo: ms(1),
        elapsed: std::time::Duration::from_micros(10),
        x_recv: 125_000.0,
        p: 0.01,
        highest_seq: 3,
        hops: Some(2),
        link_errors: 0,
        lost_per_event: 1.0,
    };
    let mut out = Vec::new();
    let fbw = tfrc::wire::encode_feedback(&fb).to_vec();
    out.push([&[0x80u8][..], &fbw].concat());
    out.push([&[0x84u8][..], &fbw, &[0; 24]].concat());
    out.push([&[0x81u8][..], b"{\"packets\":1}"].concat());
    out.push(
        [
            &[0x8Au8][..],
            &frame::encode_hello_ack(frame::Mode::Noise, true, false, &[1; 48]),
        ]
        .concat(),
    );
    out.push([&[0x8Bu8][..], &[0u8; tfrc_protect::TOKEN_LEN]].concat());
    out.push([&[0x0Cu8][..], &[5u8; tfrc_protect::noise::REPLY_LEN]].concat());
    out.push(vec![0x0C]);
    out
}

#[test]
fn receiver_corpus_replays_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let seeds = replay_dir(&root.join("seeds/receiver"), tfrc_udp::fuzzing::receiver);
    assert!(seeds >= 5, "checked-in seeds missing: {seeds}");
    replay_dir(&root.join("corpus/receiver"), tfrc_udp::fuzzing::receiver);
    for i in receiver_inputs() {
        tfrc_udp::fuzzing::receiver(&i);
    }
}

#[test]
fn sender_corpus_replays_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let seeds = replay_dir(&root.join("seeds/sender"), tfrc_udp::fuzzing::sender);
    assert!(seeds >= 5, "checked-in seeds missing: {seeds}");
    replay_dir(&root.join("corpus/sender"), tfrc_udp::fuzzing::sender);
    for i in sender_inputs() {
        tfrc_udp::fuzzing::sender(&i);
    }
}

/// The structured inputs reach what they are meant to: the plain session accepts the data.
#[test]
fn structured_inputs_reach_the_core() {
    use tfrc_udp::{ReceiverEngine, ReceiverOptions};
    let opts = ReceiverOptions {
        require_protection: false,
        ..ReceiverOptions::default()
    };
    let mut e = ReceiverEngine::new(opts, 7).unwrap();
    let peer = "10.0.0.1:5000".parse().unwrap();
    let tok = e.retry_token(tfrc::Time::ZERO, peer, 1);
    e.on_datagram(
        tfrc::Time::ZERO,
        &common::hello_for(1, frame::Mode::Plain, &tok),
        peer,
        None,
        false,
    );
    let mut d = frame::header(Kind::Data, 1).to_vec();
    d.extend_from_slice(&tfrc::wire::encode_data(&header(0, ms(0))));
    e.on_datagram(ms(1), &d, peer, None, false);
    assert_eq!(e.report().packets, 1);
}
