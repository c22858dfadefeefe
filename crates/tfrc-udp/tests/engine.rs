//! The socket-free sender (`SenderEngine`) against the socket-free receiver (`ReceiverEngine`)
//! over an in-memory path with a fixed delay and a virtual clock: the application's own event
//! loop, as issue 16 item 6 asks. No sockets, no threads, no wall clock.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use tfrc::Time;
use tfrc_protect::StaticKeypair;
use tfrc_udp::{
    EngineEvent, Protect, ReceiverEngine, ReceiverOptions, SenderEngine, SenderOptions, Transmit,
};

const DELAY: Duration = Duration::from_millis(10);

fn tx_addr() -> SocketAddr {
    "10.0.0.1:4000".parse().unwrap()
}

fn rx_addr() -> SocketAddr {
    "10.0.0.2:7000".parse().unwrap()
}

/// Both ends and the path between them.
struct Loop {
    now: Time,
    tx: SenderEngine,
    rx: ReceiverEngine,
    to_rx: VecDeque<(Time, Vec<u8>)>,
    to_tx: VecDeque<(Time, Vec<u8>)>,
    /// Refuse the data packet with this sequence number once (the host's `EAGAIN`).
    refuse: Option<u64>,
    /// Data sequence numbers put on the path, in order.
    sent: Vec<u64>,
}

impl Loop {
    fn new(opts: &SenderOptions, rx_opts: ReceiverOptions) -> Loop {
        let now = Time::from_nanos(1_000_000_000);
        Loop {
            now,
            tx: SenderEngine::new(rx_addr(), opts, now),
            rx: ReceiverEngine::new(rx_opts, 1).unwrap(),
            to_rx: VecDeque::new(),
            to_tx: VecDeque::new(),
            refuse: None,
            sent: Vec::new(),
        }
    }

    /// One step at `now`: deliver what is due, let both ends transmit.
    fn step(&mut self) -> Vec<EngineEvent> {
        let now = self.now;
        let mut events = Vec::new();
        while self.to_rx.front().is_some_and(|e| e.0 <= now) {
            let (_, d) = self.to_rx.pop_front().unwrap();
            self.rx.on_datagram(now, &d, tx_addr(), Some(64), false);
        }
        while self.to_tx.front().is_some_and(|e| e.0 <= now) {
            let (_, d) = self.to_tx.pop_front().unwrap();
            events.push(self.tx.on_datagram(now, &d));
        }
        if self.rx.poll_timeout().is_some_and(|t| t <= now) {
            self.rx.on_timeout(now);
        }
        while let Some(t) = self.tx.poll_transmit(now) {
            if t.seq.is_some() && t.seq == self.refuse {
                self.refuse = None;
                self.tx.on_send_refused(now, &t, false);
                assert!(self.tx.wants_writable());
                // The socket drains at once here.
                self.tx.on_writable();
                continue;
            }
            self.put(t);
        }
        while let Some((d, to)) = self.rx.poll_transmit() {
            assert_eq!(to, tx_addr());
            self.to_tx.push_back((now + DELAY, d));
        }
        events
    }

    /// Advance the clock to the next event.
    fn advance(&mut self) {
        let now = self.now;
        let next = [
            self.tx.poll_timeout(),
            self.rx.poll_timeout(),
            self.to_rx.front().map(|e| e.0),
            self.to_tx.front().map(|e| e.0),
        ]
        .into_iter()
        .flatten()
        .min();
        // A wake-up in the past means "now"; time still moves by 1 µs.
        self.now = next.map_or(now + Duration::from_millis(1), |t| {
            t.max(now + Duration::from_micros(1))
        });
    }

    fn put(&mut self, t: Transmit) {
        if let Some(s) = t.seq {
            self.sent.push(s);
        }
        self.to_rx.push_back((self.now + DELAY, t.datagram));
    }

    /// Run until `done` or `limit` of virtual time.
    fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&mut Loop) -> bool) {
        let end = self.now + limit;
        while self.now < end {
            self.step();
            if done(self) {
                return;
            }
            self.advance();
        }
        let now = self.now;
        panic!(
            "not done within {limit:?} of virtual time: {:?}, receiver drops {:?}, delivered {}",
            self.tx.stats_at(now),
            self.rx.drops(),
            self.rx.delivered_len()
        );
    }
}

fn session(opts: SenderOptions, rx_opts: ReceiverOptions, refuse: Option<u64>) -> Loop {
    let mut l = Loop::new(&opts, rx_opts);
    l.refuse = refuse;
    l.run_until(Duration::from_secs(5), |l| l.tx.is_established());
    assert!(l.tx.take_error().is_none());
    assert!(l.tx.handshake_rtt().unwrap() >= 2 * DELAY);
    for i in 0..200u32 {
        let now = l.now;
        l.tx.queue_message(now, i.to_be_bytes().repeat(50));
    }
    l.run_until(Duration::from_secs(30), |l| l.tx.pending_messages() == 0);
    let now = l.now;
    l.tx.close(now);
    l.run_until(Duration::from_secs(5), |l| l.tx.is_closed());
    l
}

fn check_delivered(l: &mut Loop) {
    let mut got = Vec::new();
    while let Some(d) = l.rx.poll_delivered() {
        got.push(d);
    }
    assert_eq!(got.len(), 200);
    for (i, d) in got.iter().enumerate() {
        assert_eq!(d.seq, i as u64, "in order, no gap");
        assert_eq!(d.payload, (i as u32).to_be_bytes().repeat(50));
    }
    let now = l.now;
    let report = l.tx.report(now, 0);
    let flow = report.flow.expect("the receiver's report came back");
    assert_eq!(flow.received_packets, 200);
    assert_eq!(flow.dropped_packets, 0);
    assert!(report.sender.feedbacks > 0);
}

#[test]
fn plain_session_without_sockets() {
    let mut l = session(SenderOptions::default(), ReceiverOptions::default(), None);
    check_delivered(&mut l);
}

#[test]
fn noise_session_without_sockets_and_a_wrong_key_fails() {
    let key = StaticKeypair::generate().unwrap();
    let rx_opts = || ReceiverOptions {
        noise_key: Some(key.clone()),
        ..ReceiverOptions::default()
    };
    let opts = SenderOptions {
        protect: Protect::Noise {
            receiver: *key.public(),
            identity: None,
        },
        ..SenderOptions::default()
    };
    let mut l = session(opts, rx_opts(), None);
    check_delivered(&mut l);
    // A sender that pinned another key: the handshake fails with a clear error.
    let other = StaticKeypair::generate().unwrap();
    let opts = SenderOptions {
        protect: Protect::Noise {
            receiver: *other.public(),
            identity: None,
        },
        connect_timeout: Duration::from_secs(2),
        ..SenderOptions::default()
    };
    let mut l = Loop::new(&opts, rx_opts());
    l.run_until(Duration::from_secs(5), |l| l.tx.is_closed());
    let e = l.tx.take_error().expect("an error");
    assert!(
        e.to_string().contains("no answer") || e.to_string().contains("Noise"),
        "{e}"
    );
    assert!(!l.rx.has_session());
}

#[test]
fn a_refused_datagram_is_offered_again_without_a_gap() {
    let mut l = session(
        SenderOptions::default(),
        ReceiverOptions::default(),
        Some(17),
    );
    // Sequence 17 was refused once and put on the path once, in order.
    assert_eq!(l.sent, (0..200).collect::<Vec<u64>>());
    let now = l.now;
    assert_eq!(l.tx.stats_at(now).send_blocked, 1);
    check_delivered(&mut l);
}

/// Issue 29 point 4: a session with both ends' defaults is sealed, so a DATA forged by an
/// on-path attacker who read the session id (900 sequence numbers ahead, inside the plain
/// mode's 1,024-packet window) is refused as tampered and the session goes on; before, the
/// defaults were plain, the forgery was accepted, the receiver's honest feedback then named a
/// sequence number never sent, and the sender's nofeedback timer took its rate down.
#[test]
fn default_sessions_are_sealed_so_a_forged_data_is_refused() {
    let mut l = Loop::new(&SenderOptions::default(), ReceiverOptions::default());
    l.run_until(Duration::from_secs(5), |l| l.tx.is_established());
    for i in 0..100u32 {
        let now = l.now;
        l.tx.queue_message(now, i.to_be_bytes().repeat(50));
    }
    l.run_until(Duration::from_secs(30), |l| l.tx.pending_messages() == 0);
    l.run_until(Duration::from_secs(1), |l| l.to_rx.is_empty());
    let before = l.rx.report().packets;
    assert_eq!(before, 100);
    // The forger copies the session id from a datagram it saw and writes a data packet in
    // clear, as plain mode carries it.
    let session = l.tx.session();
    let now = l.now;
    let mut forged = tfrc_udp::frame::header(tfrc_udp::frame::Kind::Data, session).to_vec();
    let h = tfrc::DataHeader {
        seq: 99 + 900,
        timestamp: now,
        rtt: DELAY * 2,
        t_rto: DELAY * 8,
        segment_size: 200,
        round: 1,
        urgent: false,
        initial_ttl: 64,
    };
    forged.extend_from_slice(&tfrc::wire::encode_data(&h));
    forged.extend_from_slice(&[0xee; 200]);
    l.rx.on_datagram(now, &forged, tx_addr(), Some(64), false);
    let r = l.rx.report();
    assert_eq!(r.packets, before, "the forgery reached the core");
    assert!(r.protected, "{r:?}");
    assert_eq!(r.protection, "noise-unauthenticated");
    assert!(
        r.drops.tampered + r.drops.auth_truncated >= 1,
        "{:?}",
        r.drops
    );
    // The session carries on: more data is delivered and the rate is not cut to nothing.
    for i in 100..200u32 {
        let now = l.now;
        l.tx.queue_message(now, i.to_be_bytes().repeat(50));
    }
    l.run_until(Duration::from_secs(30), |l| l.tx.pending_messages() == 0);
    l.run_until(Duration::from_secs(1), |l| l.to_rx.is_empty());
    assert_eq!(l.rx.report().packets, 200);
    let now = l.now;
    assert_eq!(
        l.tx.stats_at(now).drops.unexpected,
        0,
        "no feedback named a forged number"
    );
}
