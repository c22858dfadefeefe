//! Attacks over real loopback sockets against the library's `Receiver` and `Sender`: a proxy
//! that substitutes the receiver's Noise answer (the handshake fails at the sender, and the
//! receiver's half-open session ends without data), and a flood of junk, token-less HELLOs and
//! forged-session data during a legitimate rate-limited session, which keeps at least 80% of
//! what it delivers without the flood. Bounded in count; no timing is asserted.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tfrc_protect::StaticKeypair;
use tfrc_udp::frame::{self, Kind};
use tfrc_udp::{Protect, Receiver, ReceiverOptions, Sender, SenderOptions, Source};

/// A UDP relay between one client and `server` that replaces the payload of every HELLO_ACK
/// with bytes of its own (what a key-substituting proxy can do without the receiver's private
/// key). Returns its address and a stop flag.
fn substituting_proxy(server: SocketAddr) -> (SocketAddr, Arc<AtomicBool>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let addr = sock.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
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
                if let Ok(f) = frame::parse(&d) {
                    if f.kind == Kind::HelloAck && d.len() > frame::HEADER_LEN + 4 {
                        for (i, b) in d[frame::HEADER_LEN + 4..].iter_mut().enumerate() {
                            *b = (i as u8).wrapping_mul(31);
                        }
                    }
                }
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

#[test]
fn a_key_substituting_proxy_fails_the_handshake_on_both_ends() {
    let key = StaticKeypair::generate().unwrap();
    let rx = Receiver::bind(
        "127.0.0.1:0".parse().unwrap(),
        ReceiverOptions {
            noise_key: Some(key.clone()),
            require_protection: true,
            idle_timeout: Some(Duration::from_secs(1)),
            sessions: None,
            ..ReceiverOptions::default()
        },
    )
    .unwrap();
    let (proxy, stop) = substituting_proxy(rx.local_addr());
    let err = Sender::connect(
        proxy,
        SenderOptions {
            protect: Protect::Noise {
                receiver: *key.public(),
                identity: None,
            },
            connect_timeout: Duration::from_secs(3),
            ..SenderOptions::default()
        },
    )
    .err()
    .expect("the substituted answer fails the handshake");
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied, "{err}");
    assert!(err.to_string().contains("Noise handshake"), "{err}");
    stop.store(true, Ordering::SeqCst);
    // The receiver's side: a session opened by the (authentic) first message never gets an
    // authenticated packet; it ends without data and delivered nothing.
    std::thread::sleep(Duration::from_millis(1500));
    rx.shutdown();
    let reports = rx.wait_all().unwrap();
    assert!(reports.iter().all(|r| r.packets == 0), "{reports:?}");
}

fn cbr_session(to: SocketAddr) -> u64 {
    let tx = Sender::connect(
        to,
        SenderOptions {
            source: Source::Generated,
            rate_limit: Some(2e6 / 8.0),
            duration: Some(Duration::from_secs(2)),
            ..SenderOptions::default()
        },
    )
    .unwrap();
    let r = tx.close().unwrap();
    r.receiver.expect("FIN_ACK").packets
}

#[test]
fn a_flood_leaves_a_legitimate_session_at_least_80_percent() {
    // Attack-free reference.
    let rx = Receiver::bind("127.0.0.1:0".parse().unwrap(), ReceiverOptions::default()).unwrap();
    let base = cbr_session(rx.local_addr());
    let _ = rx.wait().unwrap();
    // The same session under a flood: 60,000 datagrams over ~2 s from another socket (junk,
    // token-less HELLOs, HELLOs with forged tokens, data of random session ids).
    let rx = Receiver::bind("127.0.0.1:0".parse().unwrap(), ReceiverOptions::default()).unwrap();
    let target = rx.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let flooder = std::thread::spawn(move || {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        let hello = {
            let mut d = frame::header(Kind::Hello, 9).to_vec();
            d.extend_from_slice(
                &frame::encode_hello(&frame::Hello {
                    mode: frame::Mode::Plain,
                    profile: tfrc::ProfileKind::Rfc5348,
                    segment_size: 1000,
                    clock_tag: 0,
                    variants: Vec::new(),
                    token: Vec::new(),
                    noise: Vec::new(),
                })
                .unwrap(),
            );
            d
        };
        let mut forged = hello.clone();
        forged[frame::HEADER_LEN + 19] = 24; // token length 24, all zeros: forged
        let mut sent = 0u64;
        for i in 0..60_000u64 {
            if st.load(Ordering::SeqCst) {
                break;
            }
            let d: Vec<u8> = match i % 4 {
                0 => vec![(i % 251) as u8; 200],
                1 => hello.clone(),
                2 => forged.clone(),
                _ => {
                    let mut d =
                        frame::header(Kind::Data, i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_vec();
                    d.extend_from_slice(&[0u8; 1036]);
                    d
                }
            };
            let _ = s.send_to(&d, target);
            sent += 1;
            if i % 300 == 0 {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        sent
    });
    let attacked = cbr_session(target);
    stop.store(true, Ordering::SeqCst);
    let flood = flooder.join().unwrap();
    let r = rx.wait().unwrap();
    eprintln!(
        "base {base} attacked {attacked} flood {flood} drops {:?}",
        r.drops
    );
    assert!(flood > 10_000, "the flood ran: {flood}");
    assert!(r.drops.total() > 5_000, "{:?}", r.drops);
    assert!(r.drops.bad_token > 1_000, "{:?}", r.drops);
    // 80%: the target for a legitimate session under attack.
    assert!(
        attacked as f64 >= 0.8 * base as f64,
        "attacked {attacked} < 80% of {base}"
    );
    let (i, o) = (r.unvalidated_bytes_in, r.unvalidated_bytes_out);
    assert!(o <= i, "reflection {o} > {i}");
}
