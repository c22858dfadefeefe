//! Local congestion (issue 16 item 8): the host refuses a packet (`Sender::on_send_refused`)
//! or drops one for lack of room (`Sender::on_local_congestion`). `docs/tfrc-core.md`, "Local
//! congestion", gives the rules these tests check.

mod common;

use std::time::Duration;

use common::{path, secs, LocalQueue, Loss, Pair};
use tfrc::{Backlog, Profile, Sender, Time};

fn started(n: u64) -> Sender {
    let mut s = Sender::new(Profile::rfc5348().sender).unwrap();
    s.push_packets(Time::ZERO, n);
    s
}

#[test]
fn a_refused_packet_is_not_counted_and_comes_back() {
    let mut s = started(3);
    let h = s
        .poll_transmit(Time::ZERO)
        .expect("first packet goes at once");
    assert_eq!(s.backlog(), Backlog::Packets(2));
    assert!(s.on_send_refused(Time::ZERO, &h));
    assert_eq!(s.status().packets_sent, 0);
    assert_eq!(s.backlog(), Backlog::Packets(3));
    assert_eq!(s.send_refusals(), 1);
    // The same sequence number is offered again: the receiver sees no gap.
    let t = Time::from_nanos(1_000);
    let again = s.poll_transmit(t).expect("offered again");
    assert_eq!(again.seq, h.seq);
    assert_eq!(again.timestamp, t);
    assert_eq!(s.status().packets_sent, 1);
}

#[test]
fn only_the_last_packet_can_be_refused() {
    let mut s = Sender::new(Profile::rfc5348().sender).unwrap();
    s.set_infinite_backlog(Time::ZERO);
    s.on_handshake_rtt(Time::ZERO, Duration::from_millis(1));
    let first = s.poll_transmit(Time::ZERO).unwrap();
    let later = Time::from_nanos(10_000_000);
    let second = s.poll_transmit(later).unwrap();
    assert_eq!(second.seq, first.seq + 1);
    // Undoing the older one would leave a gap; refused.
    assert!(!s.on_send_refused(later, &first));
    assert_eq!(s.status().packets_sent, 2);
    assert!(s.on_send_refused(later, &second));
    // Nothing left to undo.
    assert!(!s.on_send_refused(later, &second));
    assert_eq!(s.status().packets_sent, 1);
}

#[test]
fn local_congestion_halves_x_once_per_rtt() {
    let mut path = path(20, Loss::None);
    path.bandwidth = Some(10e6);
    let mut p = Pair::new(Profile::rfc5348(), path);
    p.run_until(secs(2.0));
    let r = p.sender.rtt().expect("an RTT by now");
    let x = p.sender.rate();
    let now = p.now;
    p.sender.on_local_congestion(now);
    assert_eq!(p.sender.rate(), x / 2.0);
    // A second signal within the same RTT is the same event.
    p.sender.on_local_congestion(now + r / 2);
    assert_eq!(p.sender.rate(), x / 2.0);
    p.sender.on_local_congestion(now + r);
    assert_eq!(p.sender.rate(), x / 4.0);
    assert_eq!(p.sender.local_congestion_signals(), 3);
}

#[test]
fn local_congestion_respects_the_rate_floor_and_lifecycle() {
    // Not started: ignored.
    let mut s = Sender::new(Profile::rfc5348().sender).unwrap();
    s.on_local_congestion(Time::ZERO);
    assert_eq!(s.local_congestion_signals(), 0);
    // Started at s bytes/s: one halving would go below s/t_mbi.
    let mut s = started(1);
    let floor = f64::from(Profile::rfc5348().sender.segment_size) / 64.0;
    for i in 0..20u64 {
        s.on_local_congestion(Time::from_secs_f64(i as f64 * 10.0));
    }
    assert!(s.rate() >= floor, "{} < {floor}", s.rate());
    s.stop();
    s.on_local_congestion(Time::from_secs_f64(500.0));
    assert_eq!(s.local_congestion_signals(), 20);
}

/// A 10 Mb/s sender-local link, 20 ms each way: whether the host queue refuses (backpressure)
/// or the sender sends regardless.
fn local_link(limit: Option<usize>, congestion: bool) -> Pair {
    let mut path = path(20, Loss::None);
    path.bandwidth = Some(10e6);
    let mut p = Pair::new(Profile::rfc5348(), path);
    p.local = limit.map(|limit| LocalQueue { limit, congestion });
    p.run_until(secs(20.0));
    p
}

#[test]
fn backpressure_sends_at_the_local_link_rate_without_loss() {
    let p = local_link(Some(8), false);
    assert!(p.refused > 0, "the host queue never filled");
    // Every sequence number was sent once and in order: a refusal left no gap.
    for (i, (_, h)) in p.sent.iter().enumerate() {
        assert_eq!(h.seq, i as u64);
    }
    assert_eq!(p.receiver.status().p, 0.0, "the receiver saw a loss");
    // The link stays busy: at least 90% of 10 Mb/s over the last 10 s (the harness's wire
    // length per packet is what the link serialises).
    let wire = f64::from(p.profile.data_wire_len());
    let s = f64::from(p.profile.sender.segment_size);
    let rate = p.send_rate(secs(10.0), secs(20.0)) / s * wire * 8.0;
    assert!(rate >= 0.9 * 10e6, "{rate} b/s");
    // The queue never held more than its limit: the RTT stays below 2 × 20 ms plus nine
    // transmissions (eight waiting, one on the wire) and the feedback's own transmission.
    let tx = Duration::from_secs_f64(wire * 8.0 / 10e6);
    let rtt = p.sender.rtt().unwrap();
    assert!(rtt <= Duration::from_millis(40) + tx * 10, "{rtt:?}");
}

#[test]
fn local_drops_back_off_more_than_backpressure_alone() {
    let refuse = local_link(Some(8), false);
    let drop = local_link(Some(8), true);
    assert!(drop.sender.local_congestion_signals() > 0);
    // Local congestion halves X at most once per RTT; X stays within the link's reach and
    // never below what the link delivered (X_recv restores it at the next feedback).
    let x_refuse = refuse.sender.rate();
    let x_drop = drop.sender.rate();
    assert!(x_drop.is_finite() && x_drop > 0.0);
    assert!(
        x_drop <= x_refuse,
        "halving on local drops left X higher: {x_drop} vs {x_refuse}"
    );
    // Both still use the link (the halving lasts about one RTT).
    let s = f64::from(drop.profile.sender.segment_size);
    let wire = f64::from(drop.profile.data_wire_len());
    let rate = drop.send_rate(secs(10.0), secs(20.0)) / s * wire * 8.0;
    assert!(rate >= 0.5 * 10e6, "{rate} b/s");
}

#[test]
fn callers_that_never_refuse_see_no_change() {
    // The same run twice, one with a host queue that never fills: identical packets.
    let a = local_link(None, false);
    let b = local_link(Some(1_000_000), true);
    assert_eq!(b.refused, 0);
    assert_eq!(a.sent, b.sent);
    assert_eq!(a.feedback, b.feedback);
}
