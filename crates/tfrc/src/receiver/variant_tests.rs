//! Receiver tests of seed 002's one-way-delay classifier (`docs/variants.md`) and of the E3
//! transform in a running receiver. Data packets are sent every 10 ms; the one-way delay is set
//! per packet.

use super::*;
use crate::profile::Profile;
use crate::variants::{self, VariantChoice};

fn ms(x: u64) -> Time {
    Time::from_nanos(x * 1_000_000)
}

fn hdr(seq: u64) -> DataHeader {
    DataHeader {
        seq,
        timestamp: ms(10 * seq),
        rtt: Duration::from_millis(100),
        t_rto: Duration::from_millis(400),
        segment_size: 1000,
        round: 0,
        urgent: false,
        initial_ttl: 64,
    }
}

fn with(names: &[&str]) -> Receiver {
    let c: Vec<VariantChoice> = names.iter().map(|n| n.parse().unwrap()).collect();
    let mut r = Receiver::new(variants::apply(Profile::rfc5348(), &c).unwrap().receiver).unwrap();
    r.record_loss_decisions(true);
    r
}

/// Deliver `seq` after `delay_ms`, fire due timers; returns the feedback of that instant.
fn deliver(r: &mut Receiver, seq: u64, delay_ms: u64) -> Vec<Feedback> {
    let h = hdr(seq);
    let now = h.timestamp + Duration::from_millis(delay_ms);
    let mut out = Vec::new();
    while let Some(t) = r.poll_timeout() {
        if t >= now {
            break;
        }
        r.on_timeout(t);
        out.extend(r.poll_feedback(t));
        if r.poll_timeout() == Some(t) {
            break;
        }
    }
    r.on_data(now, &h, 1036);
    out.extend(r.poll_feedback(now));
    out
}

/// Seed 002 behaviour: a loss at steady delay (eta = 20/20 = 1 ≤ 3) is wireless and stays out
/// of p, and the next feedback reports it in `link_errors`; a loss revealed by a packet whose
/// delay jumped from 20 to 80 ms (eta = 80/20 = 4 > 3) is congestion and starts a loss event.
#[test]
fn seed002_delay_spike_is_congestion_random_loss_is_wireless() {
    let mut r = with(&["owd-classifier"]);
    let mut fbs = Vec::new();
    for seq in 0..100 {
        if seq != 50 {
            fbs.extend(deliver(&mut r, seq, 20));
        }
    }
    let st = r.status();
    assert_eq!((st.lost_packets, st.wireless_losses), (1, 1));
    assert_eq!((st.congestion_losses, st.loss_events), (0, 0));
    assert_eq!(st.p, 0.0, "a wireless loss stays out of the loss history");
    assert!((st.avg_one_way_delay.unwrap() - 0.020).abs() < 1e-9);
    assert_eq!(
        fbs.iter().map(|f| f.link_errors).sum::<u32>(),
        1,
        "exactly one report carries the wireless loss"
    );
    // Queueing builds up: packet 101 arrives 80 ms after sending and reveals the loss of 100.
    for seq in 101..140 {
        deliver(&mut r, seq, 80);
    }
    let st = r.status();
    assert_eq!((st.congestion_losses, st.wireless_losses), (1, 1));
    assert_eq!(st.loss_events, 1);
    assert!(st.p > 0.0);
    let d: Vec<LossDecision> = r.drain_loss_decisions().collect();
    assert_eq!(
        d,
        vec![
            LossDecision {
                lo: 50,
                hi: 50,
                class: LossClass::Wireless
            },
            LossDecision {
                lo: 100,
                hi: 100,
                class: LossClass::Congestion
            },
        ]
    );
    assert_eq!(r.drain_loss_decisions().count(), 0, "drained");
}

/// Without the classifier the same losses are both congestion (and both recorded as such).
#[test]
fn seed002_baseline_counts_everything_as_congestion() {
    let mut r = with(&[]);
    for seq in (0..140).filter(|&s| s != 50 && s != 100) {
        deliver(&mut r, seq, if seq < 100 { 20 } else { 80 });
    }
    let st = r.status();
    assert_eq!((st.congestion_losses, st.wireless_losses), (2, 0));
    assert_eq!(st.avg_one_way_delay, None);
    assert!(r
        .drain_loss_decisions()
        .all(|d| d.class == LossClass::Congestion));
    // Not recording: nothing is kept.
    let mut q = Receiver::new(Profile::rfc5348().receiver).unwrap();
    for seq in (0..20).filter(|&s| s != 5) {
        deliver(&mut q, seq, 20);
    }
    assert_eq!(q.drain_loss_decisions().count(), 0);
    assert_eq!(q.status().lost_packets, 1);
}

/// §5.1 for wireless losses: a late packet removes the loss from the counts.
#[test]
fn seed002_late_packet_undoes_a_wireless_loss() {
    let mut r = with(&["owd-classifier"]);
    for seq in (0..30).filter(|&s| s != 10) {
        deliver(&mut r, seq, 20);
    }
    assert_eq!(r.status().wireless_losses, 1);
    deliver(&mut r, 10, 200);
    let st = r.status();
    assert_eq!((st.lost_packets, st.wireless_losses), (0, 0));
}

/// E3 in a running receiver: with one loss every 20 packets every interval is 20, so the
/// confidence interval has zero width and p = 1/20 exactly as with the RFC mean.
#[test]
fn seed000_e3_equal_intervals_give_the_rfc_p() {
    let mut plain = with(&[]);
    let mut ci = with(&["ali-ci-include"]);
    for seq in (0..400).filter(|s| s % 20 != 19) {
        deliver(&mut plain, seq, 20);
        deliver(&mut ci, seq, 20);
    }
    let (a, b) = (plain.loss_event_rate(), ci.loss_event_rate());
    assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    assert!((a - 0.05).abs() < 0.0025, "{a}");
}
