//! End-to-end sessions over loopback: delivery, hop count, one-way delay, protected mode, and
//! the application rate limit.

use std::time::Duration;

use tfrc_protect::StaticKeypair;
use tfrc_udp::frame::Mode;
use tfrc_udp::{Protect, Receiver, ReceiverOptions, Sender, SenderOptions, Source};

fn receiver(mode: Mode, key: Option<&StaticKeypair>) -> Receiver {
    let opts = ReceiverOptions {
        require_protection: mode != Mode::Plain,
        rsa_unauthenticated: mode == Mode::RsaUnauthenticated,
        noise_key: key.cloned(),
        ..ReceiverOptions::default()
    };
    Receiver::bind("127.0.0.1:0".parse().unwrap(), opts).unwrap()
}

fn transfer(mode: Mode) {
    let key = StaticKeypair::generate().unwrap();
    let rx = receiver(mode, Some(&key));
    let protect = match mode {
        Mode::Plain => Protect::None,
        Mode::Noise => Protect::Noise {
            receiver: *key.public(),
            identity: None,
        },
        Mode::RsaUnauthenticated => Protect::RsaUnauthenticated,
        Mode::NoiseUnauthenticated => Protect::NoiseUnauthenticated,
    };
    let tx = Sender::connect(
        rx.local_addr(),
        SenderOptions {
            protect,
            ..SenderOptions::default()
        },
    )
    .unwrap();
    let n = 400u32;
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        while let Some(m) = rx.recv() {
            got.push(m);
        }
        (got, rx.wait().unwrap())
    });
    for i in 0..n {
        let mut m = i.to_be_bytes().to_vec();
        m.resize(1000, (i % 256) as u8);
        tx.send(m).unwrap();
    }
    let report = tx.close().unwrap();
    let (got, rreport) = reader.join().unwrap();
    // Loopback with 4 MB socket buffers does not lose 400 kB: every message arrives, in order,
    // intact.
    assert_eq!(got.len(), n as usize);
    for (i, m) in got.iter().enumerate() {
        assert_eq!(m.seq, i as u64);
        assert_eq!(&m.payload[..4], &(i as u32).to_be_bytes());
        assert_eq!(m.payload.len(), 1000);
        // Same host: one clock, so the delay is a real one-way delay, and small.
        assert!(
            m.delay.unwrap() < Duration::from_millis(500),
            "{:?}",
            m.delay
        );
    }
    let r = report.receiver.expect("FIN_ACK arrived");
    assert_eq!(r.sender_packets, Some(u64::from(n)));
    assert_eq!(r.packets, u64::from(n));
    assert_eq!(r.protected, mode.protected());
    assert_eq!(r.protection, mode.name());
    // Loopback does not route: TTL arrives as sent, so zero hops (E5).
    assert_eq!(r.hops, Some(0));
    assert_eq!(report.sender.hops, Some(0));
    assert_eq!(r.drops.total(), 0, "{:?}", r.drops);
    let f = report.flow.unwrap();
    assert_eq!(f.sent_packets, u64::from(n));
    assert_eq!(f.received_packets, u64::from(n));
    assert_eq!(f.loss_rate, 0.0);
    // Real one-way delays (kernel arrival stamps, so never before the send time): positive and
    // ordered. The mean is not compared with the percentiles: one packet whose sender was
    // descheduled between stamping and sending weighs more than 95% of a few-µs loopback.
    let (mean, med, p95, p99) = (
        f.delay_mean_s.unwrap(),
        f.delay_median_s.unwrap(),
        f.delay_p95_s.unwrap(),
        f.delay_p99_s.unwrap(),
    );
    assert!(
        mean > 0.0 && med > 0.0 && med <= p95 && p95 <= p99,
        "{mean} {med} {p95} {p99}"
    );
    assert!(report.sender.feedbacks > 0);
    assert_eq!(rreport.packets, u64::from(n));
}

#[test]
fn messages_arrive_in_order_with_hops_and_delay() {
    transfer(Mode::Plain);
}

#[test]
fn default_unauthenticated_noise_session_delivers() {
    transfer(Mode::NoiseUnauthenticated);
}

#[test]
fn noise_session_delivers() {
    transfer(Mode::Noise);
}

#[test]
fn rsa_unauthenticated_session_delivers() {
    transfer(Mode::RsaUnauthenticated);
}

#[test]
fn rate_limited_cbr_runs_at_the_application_rate() {
    let rx = receiver(Mode::Plain, None);
    let rate_bps = 4e6;
    let tx = Sender::connect(
        rx.local_addr(),
        SenderOptions {
            source: Source::Generated,
            rate_limit_bps: Some(rate_bps),
            duration: Some(Duration::from_secs(2)),
            ..SenderOptions::default()
        },
    )
    .unwrap();
    let drain = std::thread::spawn(move || rx.wait().unwrap());
    let report = tx.close().unwrap();
    let _ = drain.join().unwrap();
    let f = report.flow.expect("summary");
    // TFRC starts at one packet per RTT-ish and doubles; the application rate caps it. The
    // goodput over the active span must be near the limit.
    assert!(
        (f.goodput_bps - rate_bps).abs() < 0.15 * rate_bps,
        "goodput {} vs limit {rate_bps}",
        f.goodput_bps
    );
    assert!(f.loss_rate < 0.01, "{}", f.loss_rate);
}

#[test]
fn a_bad_rate_limit_is_refused_before_connecting() {
    for r in [0.0, -1.0, f64::NAN, f64::INFINITY, 0.5] {
        let err = Sender::connect(
            "127.0.0.1:9".parse().unwrap(),
            SenderOptions {
                rate_limit_bps: Some(r),
                ..SenderOptions::default()
            },
        )
        .err()
        .expect("refused");
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{r}: {err}");
    }
}

#[test]
fn connect_to_nobody_times_out_cleanly() {
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = sock.local_addr().unwrap();
    let err = Sender::connect(
        to,
        SenderOptions {
            connect_timeout: Duration::from_millis(600),
            ..SenderOptions::default()
        },
    )
    .err()
    .expect("nobody answers");
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
    assert!(err.to_string().contains("no answer"), "{err}");
}

/// An encoder's view: the rate watch reports changes of X without polling (the first within
/// the handshake's aftermath), and `try_send` never blocks, saying when the queue is full.
#[test]
fn rate_watch_and_try_send() {
    let rx = receiver(Mode::Plain, None);
    let tx = Sender::connect(
        rx.local_addr(),
        SenderOptions {
            queue: 4,
            ..SenderOptions::default()
        },
    )
    .unwrap();
    let drain = std::thread::spawn(move || while rx.recv().is_some() {});
    let mut w = tx.rate_watch();
    let first = w.wait_change(Duration::from_secs(5)).expect("a rate");
    assert!(first > 0.0);
    assert_eq!(w.rate_bps(), first);
    let mut full = 0;
    for _ in 0..2_000 {
        if !tx.try_send(vec![1u8; 1000]).unwrap() {
            full += 1;
        }
    }
    assert!(
        full > 0,
        "a 4-message queue fills when 2,000 are offered at once"
    );
    assert!(matches!(
        tx.try_send(vec![0u8; 5000]),
        Err(tfrc_udp::SendError::TooLong { .. })
    ));
    let _ = tx.close().unwrap();
    assert_eq!(w.wait_change(Duration::from_secs(1)), None, "stopped");
    drain.join().unwrap();
}
