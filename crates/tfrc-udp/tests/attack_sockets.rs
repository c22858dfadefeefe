//! Attacks over real loopback sockets against the library's `Receiver` and `Sender`: a proxy
//! that substitutes the receiver's Noise answer (the handshake fails at the sender, and the
//! receiver's half-open session ends without data), and a flood of junk, token-less HELLOs and
//! forged-session data during a legitimate rate-limited session, which keeps at least 80% of
//! what it delivers without the flood. Bounded in count; no timing is asserted.

mod common;

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
    common::relay(server, |d| {
        if let Ok(f) = frame::parse(d) {
            if f.kind == Kind::HelloAck && d.len() > frame::HEADER_LEN + 4 {
                for (i, b) in d[frame::HEADER_LEN + 4..].iter_mut().enumerate() {
                    *b = (i as u8).wrapping_mul(31);
                }
            }
        }
    })
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
            rate_limit_bps: Some(2e6),
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
                    ecn: false,
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

/// A raw IPv4 socket (needs root, as CI has): the only way to put another host's address in a
/// datagram's source field on loopback.
fn raw_socket() -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket(2) and setsockopt(2) calls with valid arguments; the descriptor is
    // owned by the returned OwnedFd.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW);
        assert!(
            fd >= 0,
            "a raw socket needs root (CAP_NET_RAW): run the tests as root, as CI does ({})",
            std::io::Error::last_os_error()
        );
        let one: libc::c_int = 1;
        let r = libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            libc::IP_HDRINCL,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        assert_eq!(r, 0, "IP_HDRINCL: {}", std::io::Error::last_os_error());
        std::os::fd::OwnedFd::from_raw_fd(fd)
    }
}

/// Send `payload` as a UDP datagram from `from` to `to` (IPv4), whatever `from` is.
fn send_spoofed(fd: &std::os::fd::OwnedFd, from: SocketAddr, to: SocketAddr, payload: &[u8]) {
    use std::os::fd::AsRawFd;
    let (SocketAddr::V4(f), SocketAddr::V4(t)) = (from, to) else {
        panic!("IPv4 only");
    };
    let total = 20 + 8 + payload.len();
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64;
    p[9] = 17; // UDP; the kernel fills in the IP checksum and ID
    p[12..16].copy_from_slice(&f.ip().octets());
    p[16..20].copy_from_slice(&t.ip().octets());
    p[20..22].copy_from_slice(&f.port().to_be_bytes());
    p[22..24].copy_from_slice(&t.port().to_be_bytes());
    p[24..26].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    // UDP checksum 0: none (allowed over IPv4).
    p[28..].copy_from_slice(payload);
    let sa = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(t.ip().octets()),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: the buffer and the address are valid for the lengths given.
    let n = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            p.as_ptr().cast(),
            p.len(),
            0,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    assert_eq!(n, p.len() as isize, "{}", std::io::Error::last_os_error());
}

/// Spoofed-source reflection over real sockets: 2,000 HELLOs (plain and Noise) whose source is
/// a victim's address make the receiver send the victim no more bytes than the HELLOs carried
/// (the RETRYs: 36 of 128 bytes), and open no session.
#[test]
fn spoofed_source_hellos_reflect_at_most_1x_to_the_victim() {
    let key = tfrc_protect::StaticKeypair::generate().unwrap();
    let rx = Receiver::bind(
        "127.0.0.1:0".parse().unwrap(),
        ReceiverOptions {
            noise_key: Some(key),
            sessions: None,
            ..ReceiverOptions::default()
        },
    )
    .unwrap();
    let victim = UdpSocket::bind("127.0.0.2:0").unwrap();
    victim
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let vaddr = victim.local_addr().unwrap();
    let server = rx.local_addr();
    // The victim reads while the attack runs (its socket buffer would overflow otherwise).
    let reader = std::thread::spawn(move || {
        let (mut got, mut n_retry) = (0usize, 0usize);
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = victim.recv_from(&mut buf) {
            assert_eq!(from, server);
            assert_eq!(frame::parse(&buf[..n]).unwrap().kind, Kind::Retry);
            got += n;
            n_retry += 1;
        }
        (got, n_retry)
    });
    let raw = raw_socket();
    let mut sent = 0usize;
    for i in 0..2_000u64 {
        let mode = if i % 2 == 0 {
            frame::Mode::Plain
        } else {
            frame::Mode::Noise
        };
        let mut d = frame::header(Kind::Hello, i).to_vec();
        d.extend_from_slice(
            &frame::encode_hello(&frame::Hello {
                mode,
                profile: tfrc::ProfileKind::Rfc5348,
                segment_size: 1000,
                clock_tag: 0,
                variants: Vec::new(),
                token: Vec::new(),
                noise: Vec::new(),
                ecn: false,
            })
            .unwrap(),
        );
        send_spoofed(&raw, vaddr, rx.local_addr(), &d);
        sent += d.len();
        if i % 200 == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let (got, n_retry) = reader.join().unwrap();
    rx.shutdown();
    let reports = rx.wait_all().unwrap();
    eprintln!(
        "spoofed: {sent} bytes sent as the victim, {got} bytes ({n_retry} RETRYs) reflected to it"
    );
    assert!(
        n_retry > 1_000,
        "the spoofed HELLOs reached the receiver: {n_retry}"
    );
    assert!(got <= sent, "reflection {got} > {sent}");
    assert!(reports.iter().all(|r| r.packets == 0));
}
