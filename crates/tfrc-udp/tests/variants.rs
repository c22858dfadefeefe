//! Variants over the transport: the HELLO carries the sender's list, the receiver
//! applies it to its own profile, refuses a list it cannot apply (and stays free for another
//! session), and a sender with an invalid list fails before sending anything.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{data, header, ms, peer, plain_ok, SESSION};
use tfrc::variants::VariantChoice;
use tfrc_udp::frame::{self, Hello, Kind, Mode};
use tfrc_udp::{ReceiverEngine, Sender, SenderOptions};

/// A HELLO with a valid retry token from `e`.
fn hello_with(e: &ReceiverEngine, variants: &[&str]) -> Vec<u8> {
    let mut d = frame::header(Kind::Hello, SESSION).to_vec();
    d.extend_from_slice(
        &frame::encode_hello(&Hello {
            mode: Mode::Plain,
            profile: tfrc::ProfileKind::Rfc5348,
            segment_size: 1000,
            clock_tag: 1,
            variants: variants.iter().map(|v| v.parse().unwrap()).collect(),
            token: e.retry_token(ms(0), peer(), SESSION),
            noise: Vec::new(),
            ecn: false,
        })
        .unwrap(),
    );
    d
}

fn ack(e: &mut ReceiverEngine) -> (Vec<u8>, SocketAddr) {
    e.poll_transmit().expect("an answer")
}

/// The receiver runs the classifier and the transform the HELLO names: its report lists them,
/// the classifier's average one-way delay appears once data arrive, and a loss at a steady
/// delay is classified wireless (kept out of p), which the RFC profile alone never does.
#[test]
fn receiver_applies_the_hello_variants() {
    let mut e = ReceiverEngine::new(plain_ok(), 2).unwrap();
    let h = hello_with(&e, &["owd-classifier:offset_clock=1", "ali-mean-replace"]);
    e.on_datagram(ms(0), &h, peer(), Some(64), false);
    assert!(e.has_session());
    let (d, _) = ack(&mut e);
    let f = frame::parse(&d).unwrap();
    let a = frame::decode_hello_ack(f.body).unwrap();
    assert!(!a.refused);
    // 200 packets 5 ms apart, 20 ms one-way delay, packet 100 lost.
    for seq in 0..200u64 {
        if seq == 100 {
            continue;
        }
        let sent = ms(10 + seq * 5);
        let d = data(SESSION, &header(seq, sent), &[0u8; 100]);
        e.on_datagram(
            sent + Duration::from_millis(20),
            &d,
            peer(),
            Some(64),
            false,
        );
    }
    let r = e.report();
    assert_eq!(
        r.variants,
        ["owd-classifier:offset_clock=1", "ali-mean-replace"]
    );
    assert!(r.avg_one_way_delay_s.is_some(), "{r:?}");
    assert_eq!((r.wireless_losses, r.congestion_losses), (1, 0), "{r:?}");
    assert_eq!(r.p, 0.0);
    // Without variants: no classifier, the loss is congestion.
    let mut plain = ReceiverEngine::new(plain_ok(), 2).unwrap();
    let h = hello_with(&plain, &[]);
    plain.on_datagram(ms(0), &h, peer(), Some(64), false);
    for seq in 0..200u64 {
        if seq == 100 {
            continue;
        }
        let sent = ms(10 + seq * 5);
        let d = data(SESSION, &header(seq, sent), &[0u8; 100]);
        plain.on_datagram(
            sent + Duration::from_millis(20),
            &d,
            peer(),
            Some(64),
            false,
        );
    }
    let r = plain.report();
    assert!(r.variants.is_empty());
    assert_eq!(r.avg_one_way_delay_s, None);
    assert_eq!((r.wireless_losses, r.congestion_losses), (0, 1), "{r:?}");
    assert!(r.p > 0.0);
}

/// A variant the receiver does not know (a newer sender), or a combination it cannot run: a
/// refusing HELLO_ACK, no session, counted; a valid HELLO afterwards is accepted.
#[test]
fn receiver_refuses_variants_it_cannot_apply() {
    let mut e = ReceiverEngine::new(plain_ok(), 2).unwrap();
    for bad in [
        &["quantum-tfrc"][..],
        &["rto-link-error"],
        &["veno", "simd"],
    ] {
        let h = hello_with(&e, bad);
        e.on_datagram(ms(0), &h, peer(), Some(64), false);
        assert!(!e.has_session(), "{bad:?}");
        let (d, to) = ack(&mut e);
        assert_eq!(to, peer());
        let f = frame::parse(&d).unwrap();
        assert_eq!((f.kind, f.session), (Kind::HelloAck, SESSION));
        let a = frame::decode_hello_ack(f.body).unwrap();
        assert!(a.refused && !a.mode.protected() && a.payload.is_empty());
        // No larger than the HELLO: no amplification.
        assert!(d.len() <= h.len());
    }
    assert_eq!(e.drops().refused, 3);
    let h = hello_with(&e, &["ali-mean-include"]);
    e.on_datagram(ms(1), &h, peer(), None, false);
    assert!(e.has_session());
    assert!(
        !frame::decode_hello_ack(frame::parse(&ack(&mut e).0).unwrap().body)
            .unwrap()
            .refused
    );
}

/// An invalid list fails at `connect` with the variant's own message, before any datagram.
#[test]
fn sender_rejects_an_invalid_list() {
    let to: SocketAddr = "127.0.0.1:9".parse().unwrap();
    for (v, says) in [
        (VariantChoice::new("nope"), "unknown variant"),
        (VariantChoice::new("adaptive-rtt").with("q", 3.0), "outside"),
        (VariantChoice::new("rto-link-error"), "needs"),
    ] {
        let e = Sender::connect(
            to,
            SenderOptions {
                variants: vec![v],
                connect_timeout: Duration::from_millis(100),
                ..SenderOptions::default()
            },
        )
        .err()
        .expect("refused");
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains(says), "{e}");
    }
}

/// `owd-classifier` gets `offset_clock=1` over a real network unless the caller gave it.
#[test]
fn owd_classifier_defaults_to_the_offset_clock() {
    let v = tfrc_udp::sender::real_network_variants(&[
        "owd-classifier".parse().unwrap(),
        "adaptive-rtt".parse().unwrap(),
    ]);
    assert_eq!(
        frame::variants_text(&v),
        "owd-classifier:offset_clock=1;adaptive-rtt"
    );
    let v = tfrc_udp::sender::real_network_variants(&["owd-classifier:offset_clock=0"
        .parse()
        .unwrap()]);
    assert_eq!(frame::variants_text(&v), "owd-classifier:offset_clock=0");
}
