//! Receiver unit tests, named after the RFC 5348 section (or the NS-2.35 departure,
//! `docs/tfrc-core.md` N16–N24) they check. Data packets are 1000-byte segments sent every 10 ms
//! and arriving 50 ms later; the sender's R in the headers is 100 ms unless stated.

use super::*;
use crate::profile::Profile;
use crate::Equation;

fn ms(x: u64) -> Time {
    Time::from_nanos(x * 1_000_000)
}

fn hdr(seq: u64, rtt_ms: u64) -> DataHeader {
    DataHeader {
        seq,
        timestamp: ms(10 * seq),
        rtt: Duration::from_millis(rtt_ms),
        t_rto: Duration::from_millis(4 * rtt_ms),
        segment_size: 1000,
        round: 0,
        urgent: false,
        initial_ttl: 64,
    }
}

fn rfc() -> Receiver {
    Receiver::new(Profile::rfc5348().receiver).unwrap()
}

fn ns2() -> Receiver {
    Receiver::new(Profile::ns2().receiver).unwrap()
}

/// Deliver packet `seq` (sent at 10·seq ms, arriving 50 ms later), fire due timers, and return
/// the feedback produced at that instant, if any.
fn deliver(r: &mut Receiver, seq: u64, rtt_ms: u64) -> Option<Feedback> {
    deliver_hdr(r, hdr(seq, rtt_ms))
}

fn deliver_hdr(r: &mut Receiver, h: DataHeader) -> Option<Feedback> {
    let now = h.timestamp + Duration::from_millis(50);
    fire_timers(r, now);
    r.on_data(now, &h, 1036);
    r.poll_feedback(now)
}

/// Fire receiver timers due strictly before `now`, answering each.
fn fire_timers(r: &mut Receiver, now: Time) -> Vec<Feedback> {
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
    out
}

/// §6.3: "When the first packet is received: Set p = 0. Set X_recv = 0. Prepare and send a
/// feedback packet. Set the feedback timer to expire after R_i seconds." §3.2.2: the feedback
/// echoes the timestamp and reports the elapsed time.
#[test]
fn rfc5348_s6_3_first_packet_answered_with_x_recv_zero() {
    let mut r = rfc();
    assert_eq!(r.poll_feedback(ms(0)), None);
    let f = deliver(&mut r, 0, 100).expect("first packet answered");
    assert_eq!((f.p, f.x_recv), (0.0, 0.0));
    assert_eq!(f.timestamp_echo, ms(0));
    assert_eq!(f.elapsed, Duration::ZERO);
    assert_eq!(f.highest_seq, 0);
    assert_eq!(r.poll_timeout(), Some(ms(150)));
}

/// §6.3: "If the first data packet does not contain an estimate R_i … the receiver sends a
/// feedback packet for every arriving data packet until a data packet arrives containing an
/// estimate of the round-trip time."
#[test]
fn rfc5348_s6_3_feedback_every_packet_until_rtt_known() {
    let mut r = rfc();
    for seq in 0..4 {
        assert!(deliver(&mut r, seq, 0).is_some(), "seq {seq}");
    }
    assert_eq!(r.poll_timeout(), None);
    assert!(
        deliver(&mut r, 4, 100).is_some(),
        "the first packet with R starts the timer"
    );
    assert_eq!(r.poll_timeout(), Some(ms(90 + 100)));
    assert!(deliver(&mut r, 5, 100).is_none());
}

/// §6.2 step 2: X_recv counts the packets received in the previous R_(m-1) seconds; at the
/// timer expiry the report covers one RTT of 1000-byte packets every 10 ms: 100 000 B/s.
#[test]
fn rfc5348_s6_2_x_recv_over_previous_rtt() {
    let mut r = rfc();
    deliver(&mut r, 0, 100).unwrap();
    for seq in 1..=10 {
        assert!(deliver(&mut r, seq, 100).is_none(), "seq {seq}");
    }
    // Timer at 150 ms, the arrival time of seq 10.
    assert_eq!(r.poll_timeout(), Some(ms(150)));
    r.on_timeout(ms(150));
    let f = r.poll_feedback(ms(150)).expect("timer report");
    assert!((f.x_recv - 100_000.0).abs() < 1e-6, "{}", f.x_recv);
    assert_eq!(r.poll_timeout(), Some(ms(250)));
}

/// §6.2: "If no data packets have been received since the last feedback was sent, then no
/// feedback packet is sent, and the feedback timer is restarted"; §6.1: the next packet is
/// then answered at once ("no feedback packet was sent when the feedback timer last expired").
#[test]
fn rfc5348_s6_2_silent_expiry_then_next_packet_answered() {
    let mut r = rfc();
    deliver(&mut r, 0, 100).unwrap();
    r.on_timeout(ms(150));
    assert_eq!(r.poll_feedback(ms(150)), None);
    assert_eq!(r.poll_timeout(), Some(ms(250)));
    // Packet 30 (sent at 300 ms, arrives at 350 ms): answered at once.
    r.on_timeout(ms(250));
    assert_eq!(r.poll_feedback(ms(250)), None);
    let h = hdr(30, 100);
    r.on_data(ms(350), &h, 1036);
    assert!(r.poll_feedback(ms(350)).is_some());
}

/// §5.1: "The loss of a packet is detected by the arrival of at least NDUPACK packets with a
/// higher sequence number than the lost packet, for NDUPACK set to 3." §6.1: a new loss event
/// raises p and expires the feedback timer at once.
#[test]
fn rfc5348_s5_1_loss_after_three_later_packets() {
    let mut r = rfc();
    for seq in [0, 1, 2, 4, 5] {
        deliver(&mut r, seq, 100);
    }
    assert_eq!(r.status().lost_packets, 0);
    assert_eq!(r.loss_event_rate(), 0.0);
    let f = deliver(&mut r, 6, 100).expect("new loss event reported at once");
    assert!(f.p > 0.0);
    let st = r.status();
    assert_eq!((st.lost_packets, st.loss_events), (1, 1));
}

/// §5.1: a packet arriving out of order before NDUPACK later packets is not a loss.
#[test]
fn rfc5348_s5_1_reordered_packet_is_not_lost() {
    let mut r = rfc();
    for seq in [0, 1, 2, 4, 3, 5, 6, 7, 8] {
        deliver(&mut r, seq, 100);
    }
    assert_eq!(r.status().lost_packets, 0);
    assert_eq!(r.loss_event_rate(), 0.0);
}

/// §5.1: "if a packet arrives late (after NDUPACK subsequent packets arrived) in TFRC, the late
/// packet can fill the hole in TFRC's reception record, and the receiver can recalculate the
/// loss event rate"; §6: feedback "SHOULD also be sent … whenever an out-of-order data packet
/// is received that removes a loss event".
#[test]
fn rfc5348_s5_1_late_packet_fills_hole() {
    let mut r = rfc();
    for seq in [0, 1, 2, 4, 5, 6, 7] {
        deliver(&mut r, seq, 100);
    }
    assert!(r.loss_event_rate() > 0.0);
    let late = hdr(3, 100);
    r.on_data(ms(130), &late, 1036);
    let f = r
        .poll_feedback(ms(130))
        .expect("loss event removed: feedback");
    assert_eq!(f.p, 0.0);
    let st = r.status();
    assert_eq!((st.lost_packets, st.loss_events), (0, 0));
}

/// §5.1: "For an ECN-capable connection, a marked packet is detected as a congestion event as
/// soon as it arrives"; a possibly-lost packet before it starts the event.
#[test]
fn rfc5348_s5_1_ecn_mark_is_an_immediate_event() {
    let mut r = rfc();
    for seq in 0..3 {
        deliver(&mut r, seq, 100);
    }
    let h = hdr(3, 100);
    let arrival = Arrival {
        wire_len: 1036,
        ce: true,
        ttl: None,
    };
    r.on_data_with(ms(80), &h, arrival);
    assert!(r.poll_feedback(ms(80)).unwrap().p > 0.0);
    assert_eq!(r.status().marked_packets, 1);
    assert_eq!(r.history().first_event_start(), Some(3));
    // A gap before a mark: the event starts at the lost packet.
    let mut r = rfc();
    for seq in [0, 1, 2, 4] {
        deliver(&mut r, seq, 100);
    }
    r.on_data_with(ms(100), &hdr(5, 100), arrival);
    assert_eq!(r.history().first_event_start(), Some(3));
    assert_eq!(r.status().loss_events, 1);
}

/// §5.2: losses within R of the first loss of an event belong to it; later ones start a new
/// event. Packets are 10 ms apart and R = 100 ms.
#[test]
fn rfc5348_s5_2_losses_within_one_rtt_are_one_event() {
    let mut r = rfc();
    for seq in (0..40).filter(|s| ![5, 12, 25].contains(s)) {
        deliver(&mut r, seq, 100);
    }
    let starts: Vec<u64> = r.history().events().map(|e| e.start_seq).collect();
    // 12 is 70 ms after 5 (same event); 25 is 200 ms after it (new event).
    assert_eq!(starts, vec![5, 25]);
    assert_eq!(r.status().lost_packets, 3);
}

/// §6.3.1: the first loss interval is 1/p for the p at which the equation gives the maximum
/// X_recv so far; §5.3: I_0 = S_C - S_A + 1.
#[test]
fn rfc5348_s6_3_1_first_interval_from_max_x_recv() {
    let mut r = rfc();
    let mut max_x: f64 = 0.0;
    for seq in 0..60 {
        if seq == 50 {
            continue;
        }
        if let Some(f) = deliver(&mut r, seq, 100) {
            max_x = max_x.max(f.x_recv);
        }
        for f in fire_timers(&mut r, ms(10 * seq + 55)) {
            max_x = max_x.max(f.x_recv);
        }
    }
    assert!((max_x - 100_000.0).abs() < 1e-6, "{max_x}");
    let st = r.status();
    assert_eq!(st.loss_intervals.len(), 1);
    let p = 1.0 / st.loss_intervals[0];
    let x = Equation::RFC5348.rate(1000.0, 0.1, 0.4, p);
    assert!((x / max_x - 1.0).abs() < 1e-6, "X(p) = {x}");
    assert_eq!(st.open_interval, Some((59 - 50 + 1) as f64));
}

/// §6.3.1: "if the first data packet is lost or ECN-marked … the TFRC receiver calculates the
/// loss interval that would be required to produce the target rate X_target of 0.5/R packets
/// per second" — f(p) = 2 with t_RTO = 4R, p ≈ 20.6%. The receiver sees a marked first packet
/// (a lost one is invisible to it, §6.3: it starts from the first arrival).
#[test]
fn rfc5348_s6_3_1_first_packet_marked() {
    let mut r = rfc();
    let h = hdr(7, 100);
    let now = h.timestamp + Duration::from_millis(50);
    r.on_data_with(
        now,
        &h,
        Arrival {
            wire_len: 1036,
            ce: true,
            ttl: None,
        },
    );
    r.poll_feedback(now);
    for seq in 8..12 {
        deliver(&mut r, seq, 100);
    }
    assert_eq!(r.history().first_event_start(), Some(7));
    let st = r.status();
    let p = 1.0 / st.loss_intervals[0];
    let x = Equation::RFC5348.rate(1000.0, 0.1, 0.4, p);
    assert!((x - 5000.0).abs() < 5000.0 * 1e-6, "X = {x}");
    assert!((p - 0.2064).abs() < 0.0005, "p = {p}");
}

/// §6.3: "The receiver is initialized by the first data packet that arrives": a first arrival
/// at sequence number 1 000 000 declares nothing lost (it used to declare 10^6 packets lost
/// and report p = 1e-6).
#[test]
fn rfc5348_s6_3_starts_from_first_arrival() {
    for mut r in [rfc(), ns2()] {
        for seq in 1_000_000..1_000_010 {
            deliver(&mut r, seq, 100);
        }
        let st = r.status();
        assert_eq!((st.lost_packets, st.loss_events, st.p), (0, 0, 0.0));
    }
}

/// §6.1: a new loss event raises p, so the timer expires at once even mid-RTT; without a new
/// event no extra feedback is sent.
#[test]
fn rfc5348_s6_1_p_increase_expires_timer() {
    let mut r = rfc();
    for seq in 0..30 {
        deliver(&mut r, seq, 100);
        fire_timers(&mut r, ms(10 * seq + 55));
    }
    for seq in [31, 32] {
        assert!(deliver(&mut r, seq, 100).is_none());
    }
    let before = r.status().feedbacks_sent;
    assert!(
        deliver(&mut r, 33, 100).is_some(),
        "loss of 30 detected at 33"
    );
    assert_eq!(r.status().feedbacks_sent, before + 1);
}

/// §5.4: with every 20th packet lost, p converges to 1/20 once the synthetic first interval has
/// left the window of n = 8.
#[test]
fn rfc5348_s5_4_periodic_loss_gives_one_over_n() {
    let mut r = rfc();
    for seq in 0..400 {
        if seq % 20 == 19 {
            continue;
        }
        deliver(&mut r, seq, 50);
        fire_timers(&mut r, ms(10 * seq + 55));
    }
    let st = r.status();
    assert!(
        st.loss_intervals[..8].iter().all(|&i| i == 20.0),
        "{:?}",
        st.loss_intervals
    );
    assert_eq!(r.loss_event_rate(), 0.05);
}

// ----- NS-2.35 ---------------------------------------------------------------------------------

fn urgent(seq: u64) -> DataHeader {
    DataHeader {
        urgent: true,
        ..hdr(seq, 100)
    }
}

/// `docs/tfrc-core.md` N22: urgent packets are answered; otherwise a report goes out on
/// a new highest packet at least rtt_ after the last report, with a backup timer at 1.5·rtt_.
#[test]
fn ns2_report_timing() {
    let mut r = ns2();
    assert!(deliver_hdr(&mut r, urgent(0)).is_some());
    assert!(
        deliver_hdr(&mut r, urgent(1)).is_some(),
        "urgent: every packet"
    );
    assert_eq!(r.poll_timeout(), Some(ms(60 + 150)), "backup at 1.5·rtt_");
    for seq in 2..11 {
        assert!(deliver(&mut r, seq, 100).is_none(), "seq {seq}");
    }
    assert!(
        deliver(&mut r, 11, 100).is_some(),
        "100 ms after the last report"
    );
    // The backup timer, 1.5·rtt_ later, answers once more: NS-2 sends when
    // `last_arrival_ >= last_report_sent`, and the last report left at the arrival instant.
    assert_eq!(r.poll_timeout(), Some(ms(310)));
    r.on_timeout(ms(310));
    assert!(r.poll_feedback(ms(310)).is_some());
    // Then it stays silent without new data, but keeps running.
    r.on_timeout(ms(460));
    assert!(r.poll_feedback(ms(460)).is_none());
    assert_eq!(r.poll_timeout(), Some(ms(610)));
}

/// `docs/tfrc-core.md` N23: X_recv is packets per second (times s) since the last report when
/// that is at least rtt_ ago.
#[test]
fn ns2_x_recv_in_packets_per_second() {
    let mut r = ns2();
    deliver_hdr(&mut r, urgent(0)).unwrap();
    let mut last = None;
    for seq in 1..=10 {
        last = deliver(&mut r, seq, 100);
    }
    let f = last.expect("report at 100 ms");
    assert!(
        (f.x_recv - 10.0 / 0.1 * 1000.0).abs() < 1e-6,
        "{}",
        f.x_recv
    );
}

/// `docs/tfrc-core.md` N16: `numPkts_` = 1 — the first later packet reveals the loss;
/// `docs/tfrc-core.md` N21: the history restarts from the last report, its first interval is
/// floor(1/p) for NS-2's `b_to_p` of the last-RTT X_recv, and that p is reported as is.
#[test]
fn ns2_first_gap_adjusts_history() {
    let mut r = ns2();
    deliver_hdr(&mut r, urgent(0)).unwrap();
    let mut x_recv = 0.0;
    for seq in 1..=10 {
        if let Some(f) = deliver(&mut r, seq, 100) {
            x_recv = f.x_recv;
        }
    }
    assert!(x_recv > 0.0);
    for seq in 11..15 {
        deliver(&mut r, seq, 100);
    }
    let f = deliver(&mut r, 16, 100).expect("first gap reported at once");
    // est_thput: fewer than rtt_ since the report at seq 10, so packets within rtt_ of the
    // newest arrival: seqs 7..=16 minus 15 received → 9 packets / 0.1 s.
    let want_p = Equation::NS2.invert_ns2(9.0 / 0.1 * 1000.0, 1000.0, 0.1, 0.4);
    assert_eq!(f.p, want_p);
    let st = r.status();
    assert_eq!(st.lost_packets, 1);
    assert_eq!(st.loss_intervals, vec![(1.0 / want_p).floor()]);
    // I_0 counts from the last report's highest sequence number (10), without the +1.
    assert_eq!(st.open_interval, Some(6.0));
}

/// `docs/tfrc-core.md` N17: loss events use interpolated sender timestamps and need a newer sender
/// round (`PreciseLoss_`); I_0 = S_C - S_A (N18).
#[test]
fn ns2_loss_events_need_a_new_round() {
    let mut r = ns2();
    let at = |seq: u64, round: u32| DataHeader {
        round,
        ..hdr(seq, 100)
    };
    deliver_hdr(
        &mut r,
        DataHeader {
            urgent: true,
            ..at(0, 0)
        },
    );
    for seq in 1..10 {
        deliver_hdr(&mut r, at(seq, 1));
    }
    deliver_hdr(&mut r, at(11, 1)); // first gap: history restarts
    for seq in 12..40 {
        deliver_hdr(&mut r, at(seq, 1));
    }
    deliver_hdr(&mut r, at(41, 1));
    assert_eq!(
        r.status().loss_events,
        1,
        "same round: no new event 300 ms later"
    );
    for seq in 42..60 {
        deliver_hdr(&mut r, at(seq, 2));
    }
    deliver_hdr(&mut r, at(61, 2));
    let st = r.status();
    assert_eq!(st.loss_events, 2);
    // I_0 = S_C - S_A = 61 - 60; the first interval counts from the report before the first
    // gap (seq 0), so I_1 = 60 - 0.
    assert_eq!(st.open_interval, Some(1.0));
    assert_eq!(st.loss_intervals[0], 60.0);
}
