//! The receiver: §3.2.2, §5.1–§5.5, §6, §6.1–§6.3.1. Packets are 1000-byte segments sent
//! every 10 ms (packet k at 10·k ms, a new sender round every 10 packets) and arriving 50 ms
//! later, carrying R = 100 ms, unless a test says otherwise.

use std::time::Duration;

use tfrc::{Feedback, Receiver, Time};

use crate::support::*;

/// Deliver packets `seqs` in order (each at its own arrival time), collecting every feedback
/// (timers included) with its time.
fn stream(r: &mut Receiver, seqs: impl IntoIterator<Item = u64>) -> Vec<(Time, Feedback)> {
    let mut out = Vec::new();
    for k in seqs {
        let now = ms(10 * k + 50);
        out.extend(fire_timers(r, now));
        if let Some(f) = deliver_at(r, k, now, 100, false) {
            out.push((now, f));
        }
    }
    out
}

/// §3.2.2: a feedback carries "the timestamp of the last data packet received" (t_recvdata)
/// and "the amount of time elapsed between the receipt of the last data packet … and the
/// generation of this feedback report" (t_delay). Both profiles.
#[test]
fn s3_2_2_feedback_contents() {
    for mut r in [rfc_rx(), ns2_rx()] {
        let fbs = stream(&mut r, 0..40);
        assert!(fbs.len() > 2);
        for (t, f) in fbs {
            // The newest packet at time t is the one that arrived last, at or before t.
            let k = (t.as_nanos() / 1_000_000 - 50) / 10;
            assert_eq!(f.timestamp_echo, ms(10 * k));
            assert_eq!(f.elapsed, t.saturating_since(ms(10 * k + 50)));
            assert_eq!(f.highest_seq, k);
        }
    }
}

/// §5.1: "The loss of a packet is detected by the arrival of at least NDUPACK packets with a
/// higher sequence number than the lost packet, for NDUPACK set to 3." `ns2`: one (N16).
#[test]
fn s5_1_ndupack_three() {
    let mut r = rfc_rx();
    stream(&mut r, (0..10).chain([11, 12]));
    assert_eq!(r.status().lost_packets, 0);
    stream(&mut r, [13]);
    assert_eq!(r.status().lost_packets, 1);
    let mut n = ns2_rx();
    stream(&mut n, (0..10).chain([11]));
    assert_eq!(n.status().lost_packets, 1);
}

/// §5.1: a reordered packet that arrives before NDUPACK later ones fills its hole: no loss.
/// `ns2` has already declared it lost after one later packet (N16).
#[test]
fn s5_1_reordered_packet_fills_hole() {
    let mut r = rfc_rx();
    stream(&mut r, (0..10).chain([11, 12]));
    deliver_at(&mut r, 10, ms(175), 100, false);
    stream(&mut r, 13..20);
    assert_eq!((r.status().lost_packets, r.loss_event_rate()), (0, 0.0));
    let mut n = ns2_rx();
    stream(&mut n, (0..10).chain([11, 12]));
    deliver_at(&mut n, 10, ms(175), 100, false);
    stream(&mut n, 13..20);
    assert_eq!(n.status().lost_packets, 1);
}

/// §5.1: "if a packet arrives late (after NDUPACK subsequent packets arrived) … the late packet
/// can fill the hole in TFRC's reception record, and the receiver can recalculate the loss
/// event rate", and (§6) is reported at once. `ns2` never undoes a loss (N16).
#[test]
fn s5_1_s6_late_packet_undoes_loss() {
    let mut r = rfc_rx();
    stream(&mut r, (0..10).chain(11..14));
    assert_eq!(r.status().lost_packets, 1);
    assert!(r.loss_event_rate() > 0.0);
    // §6: feedback "SHOULD also be sent … whenever an out-of-order data packet is received that
    // removes a loss event from the history".
    let f = deliver_at(&mut r, 10, ms(185), 100, false).expect("feedback at once");
    assert_eq!(f.p, 0.0);
    assert_eq!((r.status().lost_packets, r.loss_event_rate()), (0, 0.0));
    let mut n = ns2_rx();
    stream(&mut n, (0..10).chain(11..14));
    deliver_at(&mut n, 10, ms(185), 100, false);
    assert_eq!(n.status().lost_packets, 1);
}

/// §5.1: "a marked packet is detected as a congestion event as soon as it arrives, without
/// having to wait for the arrival of subsequent packets." Both profiles.
#[test]
fn s5_1_ecn_mark_is_an_event_at_once() {
    for mut r in [rfc_rx(), ns2_rx()] {
        stream(&mut r, 0..10);
        deliver_at(&mut r, 10, ms(150), 100, true);
        assert_eq!(r.status().marked_packets, 1);
        assert_eq!(r.status().loss_events, 1);
        assert!(r.loss_event_rate() > 0.0);
    }
}

/// §5.1: "If an ECN-marked packet is preceded by a possibly-lost packet, then the first
/// detected congestion event begins with the lost packet": n−1 = 9 received, n = 10 missing,
/// n+1 = 11 unmarked, n+2 = 12 marked.
#[test]
fn s5_1_ecn_event_begins_with_lost_packet() {
    let mut r = rfc_rx();
    stream(&mut r, (0..10).chain([11]));
    assert_eq!(r.status().loss_events, 0);
    deliver_at(&mut r, 12, ms(170), 100, true);
    assert_eq!(r.status().loss_events, 1);
    assert_eq!(r.history().first_event_start(), Some(10));
    assert_eq!(r.status().lost_packets, 1);
    // `ns2` declared 10 lost when 11 arrived (N16): its event also begins with 10.
    let mut n = ns2_rx();
    stream(&mut n, (0..10).chain([11]));
    deliver_at(&mut n, 12, ms(170), 100, true);
    assert_eq!(n.status().lost_packets, 1);
    assert_eq!(n.status().loss_events, 1);
}

/// §5.2: "If T_old + R >= T_new, then S_new is part of the existing loss event", with T
/// interpolated from the arrival times around each loss. Losses 10 and 20 arrive (nominally)
/// at 150 and 250 ms: exactly R apart, one event; 10 and 21: two events. `ns2` groups by
/// sender timestamps and needs a newer sender round (N17).
#[test]
fn s5_2_grouping_boundary() {
    let mut r = rfc_rx();
    stream(&mut r, (0..10).chain(11..20).chain(21..40));
    assert_eq!(r.status().loss_events, 1, "T_old + R == T_new");
    let mut r = rfc_rx();
    stream(&mut r, (0..10).chain(11..21).chain(22..40));
    assert_eq!(r.status().loss_events, 2, "T_old + R < T_new");
    // NS-2: 10 and 25, sent 150 ms apart and in sender rounds 1 and 2: two events.
    let mut n = ns2_rx();
    stream(&mut n, (0..10).chain(11..25).chain(26..40));
    assert_eq!(n.status().loss_events, 2);
}

/// §5.2 groups by time alone. `ns2` also needs a newer sender round (`PreciseLoss_`, N17): the
/// same two losses 150 ms apart, with every packet in round 0 (no feedback reached the sender),
/// are one event.
#[test]
fn s5_2_ns2_round_gate() {
    let lost = [10u64, 25];
    let mut counts = Vec::new();
    for mut r in [rfc_rx(), ns2_rx()] {
        for k in (0..40).filter(|k| !lost.contains(k)) {
            let now = ms(10 * k + 50);
            fire_timers(&mut r, now);
            let mut h = hdr(k, ms(10 * k), Duration::from_millis(100));
            h.round = 0;
            r.on_data(now, &h, 1036);
            r.poll_feedback(now);
        }
        counts.push(r.status().loss_events);
    }
    assert_eq!(counts, [2, 1]);
}

/// §5.2: losses within one RTT form one loss event, however many there are.
#[test]
fn s5_2_losses_within_rtt_are_one_event() {
    for mut r in [rfc_rx(), ns2_rx()] {
        // 10, 11, 13 and 15 lost within 60 ms.
        stream(&mut r, (0..10).chain([12, 14]).chain(16..40));
        assert_eq!(r.status().lost_packets, 4);
        assert_eq!(r.status().loss_events, 1);
    }
}

/// §5.3: "the size of I_0 is S_C - S_A + 1" and a closed interval is S_B − S_A. `ns2` counts
/// I_0 = S_C − S_A (N18); its closed intervals agree (after the first, which NS-2 counts from
/// the last report, N21).
#[test]
fn s5_3_interval_sizes() {
    let seqs = || (0..65).filter(|k| ![10, 30, 50].contains(k));
    let mut r = rfc_rx();
    stream(&mut r, seqs());
    let st = r.status();
    assert_eq!(st.open_interval, Some((64 - 50 + 1) as f64));
    assert_eq!(st.loss_intervals[..2], [20.0, 20.0]);
    let mut n = ns2_rx();
    stream(&mut n, seqs());
    let st = n.status();
    assert_eq!(st.open_interval, Some((64 - 50) as f64));
    assert_eq!(st.loss_intervals[0], 20.0);
}

/// Ten losses 20 packets (200 ms) apart, delivered up to `last`.
fn ten_losses(r: &mut Receiver, last: u64) {
    let lost: Vec<u64> = (0..10).map(|j| 10 + 20 * j).collect();
    stream(r, (0..=last).filter(|k| !lost.contains(k)));
}

/// §5.4: weights 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 (n = 8), I_mean = max(I_tot0, I_tot1)/W_tot
/// and p = 1/I_mean, computed here from the intervals the receiver reports.
#[test]
fn s5_4_average_loss_interval() {
    assert_eq!(
        (0..8).map(|i| w(i, 8)).collect::<Vec<_>>(),
        [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]
    );
    let mut r = rfc_rx();
    ten_losses(&mut r, 195);
    let st = r.status();
    assert!(
        st.loss_intervals.iter().take(8).all(|&i| i == 20.0),
        "{:?}",
        st.loss_intervals
    );
    let mut i = vec![st.open_interval.unwrap()];
    i.extend(&st.loss_intervals);
    assert_eq!(i[0], 6.0);
    let want = 1.0 / i_mean(&i, 8);
    assert!(
        (r.loss_event_rate() - want).abs() < 1e-12,
        "{} vs {want}",
        r.loss_event_rate()
    );
    assert!(
        (want - 1.0 / 20.0).abs() < 1e-12,
        "I_0 is too small to count"
    );
}

/// §5.4: "We only include the current loss interval if it is sufficiently large to increase the
/// average loss interval": with one closed interval I_mean = max(I_0, I_1). `ns2` takes one
/// interval more with I_0: max((I_0 + I_1)/2, I_1) (N19).
#[test]
fn s5_4_current_interval_counts_only_when_larger() {
    let mut r = rfc_rx();
    stream(&mut r, (0..10).chain(11..80));
    let st = r.status();
    let (i0, i1) = (st.open_interval.unwrap(), st.loss_intervals[0]);
    let want = 1.0 / i0.max(i1);
    assert!((r.loss_event_rate() - want).abs() < 1e-12);
    let mut n = ns2_rx();
    stream(&mut n, (0..10).chain(11..80));
    let st = n.status();
    let (i0, i1) = (st.open_interval.unwrap(), st.loss_intervals[0]);
    assert!(i0 > i1, "{i0} {i1}");
    let want = 1.0 / ((i0 + i1) / 2.0).max(i1);
    assert!(
        (n.loss_event_rate() - want).abs() < 1e-12,
        "{} vs {want}",
        n.loss_event_rate()
    );
}

/// §5.5 (OPTIONAL, on in `rfc5348`): once I_0 > 2·I_mean, DF = max(2·I_mean/I_0, 0.25) and
/// p = min(W_tot0/I_tot0, W_tot1/I_tot1) with the older intervals weighted by DF. §8.5's MAY
/// (a power-of-two DF) is not taken: DF here is not a power of two.
#[test]
fn s5_5_s8_5_history_discounting() {
    // I_0 = 100 (DF = 2·20/100 = 0.4) and I_0 = 211 (DF at the 0.25 floor).
    for last in [289u64, 400] {
        let mut r = rfc_rx();
        ten_losses(&mut r, last);
        let st = r.status();
        let i0 = st.open_interval.unwrap();
        let closed: Vec<f64> = st.loss_intervals.iter().copied().take(8).collect();
        let (mut it, mut wt) = (0.0, 0.0);
        for (j, &ij) in closed.iter().enumerate() {
            it += ij * w(j, 8);
            wt += w(j, 8);
        }
        let mean = it / wt;
        assert!(i0 > 2.0 * mean);
        let df = (2.0 * mean / i0).max(0.25);
        if last == 289 {
            assert!(
                (df - 0.4).abs() < 1e-12 && df.log2().fract() != 0.0,
                "DF = {df}"
            );
        }
        let (mut i_tot0, mut w_tot0) = (i0 * w(0, 8), w(0, 8));
        for j in 1..8 {
            i_tot0 += closed[j - 1] * w(j, 8) * df;
            w_tot0 += w(j, 8) * df;
        }
        let (mut i_tot1, mut w_tot1) = (0.0, 0.0);
        for j in 1..=8 {
            i_tot1 += closed[j - 1] * w(j - 1, 8);
            w_tot1 += w(j - 1, 8);
        }
        let want = (w_tot0 / i_tot0).min(w_tot1 / i_tot1);
        let got = r.loss_event_rate();
        assert!((got - want).abs() < 1e-12, "I_0 {i0}: {got} vs {want}");
    }
}

/// §6: "Feedback packets SHOULD normally be sent at least once per RTT": the timer runs every
/// R_m = 100 ms. `ns2`: on an arrival at least R after the last report (N22), also about once
/// per R.
#[test]
fn s6_feedback_once_per_rtt() {
    let mut r = rfc_rx();
    let fbs = stream(&mut r, 0..60);
    let times: Vec<Time> = fbs.iter().map(|f| f.0).collect();
    let want: Vec<Time> = (0..6).map(|k| ms(50 + 100 * k)).collect();
    assert_eq!(times, want);
    let mut n = ns2_rx();
    let fbs = stream(&mut n, 0..60);
    let gaps: Vec<u64> = fbs
        .windows(2)
        .map(|w| (w[1].0.as_nanos() - w[0].0.as_nanos()) / 1_000_000)
        .collect();
    assert!(gaps.iter().skip(1).all(|&g| g == 100), "{gaps:?}");
}

/// §6 / §6.1 step 4: a new loss event raises p, so feedback goes out at once ("If p > p_prev,
/// cause the feedback timer to expire"). `ns2` reports at the first gap (N21, N22).
#[test]
fn s6_1_new_loss_event_reported_at_once() {
    let mut r = rfc_rx();
    stream(&mut r, (0..10).chain(11..13));
    let f = deliver_at(&mut r, 13, ms(180), 100, false).expect("feedback at once");
    assert!(f.p > 0.0);
    let mut n = ns2_rx();
    stream(&mut n, 0..10);
    let f = deliver_at(&mut n, 11, ms(160), 100, false).expect("feedback at the first gap");
    assert!(f.p > 0.0);
}

/// §6.1 step 4: "If p <= p_prev and a feedback packet was sent when the feedback timer last
/// expired, no action need be performed": a second loss in the same event sends nothing early.
#[test]
fn s6_1_no_early_feedback_without_p_increase() {
    let mut r = rfc_rx();
    stream(&mut r, (0..10).chain(11..13));
    assert!(deliver_at(&mut r, 13, ms(180), 100, false).is_some());
    stream(&mut r, [14]);
    // 15 lost, within R of 10: same event; its detection at 18 sends nothing.
    let out = stream(&mut r, 16..19);
    assert!(
        out.iter().all(|(t, _)| *t == ms(250)),
        "only the timer: {out:?}"
    );
}

/// §6.1 step 2: "if no feedback packet was sent when the feedback timer last expired", the
/// next data packet causes a feedback at once.
#[test]
fn s6_1_feedback_after_silent_expiry() {
    let mut r = rfc_rx();
    stream(&mut r, 0..5);
    // Data until 90 ms: the timer reports at 150 ms, then (no data) stays silent at 250, 350.
    let out = fire_timers(&mut r, ms(400));
    assert_eq!(out.iter().map(|f| f.0).collect::<Vec<_>>(), [ms(150)]);
    let f = deliver_at(&mut r, 5, ms(400), 100, false);
    assert!(f.is_some(), "fed back on arrival");
}

/// §6.2 step 2: X_recv is "based on the packets received within the previous R_(m-1)
/// seconds": the 10 packets of 1000 B that arrived in (50, 150] ms, reported at 150 ms.
#[test]
fn s6_2_x_recv_over_previous_rtt() {
    let mut r = rfc_rx();
    let fbs = stream(&mut r, 0..15);
    let (t, f) = fbs[1];
    assert_eq!(t, ms(150));
    assert!((f.x_recv - 10.0 * S / 0.1).abs() < 1e-6, "{}", f.x_recv);
}

/// §6.2: "If no data packets have been received since the last feedback was sent, then no
/// feedback packet is sent, and the feedback timer is restarted to expire after R_m seconds."
#[test]
fn s6_2_no_data_no_feedback() {
    let mut r = rfc_rx();
    stream(&mut r, 0..10);
    assert_eq!(
        fire_timers(&mut r, ms(200)).len(),
        1,
        "data arrived: the 150-ms report"
    );
    assert_eq!(r.poll_timeout(), Some(ms(250)));
    r.on_timeout(ms(250));
    assert_eq!(r.poll_feedback(ms(250)), None);
    assert_eq!(r.poll_timeout(), Some(ms(350)));
}

/// §6.3: on the first packet "Set p = 0. Set X_recv = 0. Prepare and send a feedback packet.
/// Set the feedback timer to expire after R_i seconds." `ns2` reports only if the packet is
/// urgent (N22), and these are not.
#[test]
fn s6_3_first_packet() {
    let mut r = rfc_rx();
    let f = deliver(&mut r, 0, 100).expect("feedback at once");
    assert_eq!((f.p, f.x_recv), (0.0, 0.0));
    assert_eq!(r.poll_timeout(), Some(ms(150)));
    let mut n = ns2_rx();
    assert!(deliver(&mut n, 0, 100).is_none());
}

/// §6.3: "If the first data packet does not contain an estimate R_i of the round-trip time,
/// then the receiver sends a feedback packet for every arriving data packet until a data packet
/// arrives containing an estimate".
#[test]
fn s6_3_feedback_per_packet_until_rtt_known() {
    let mut r = rfc_rx();
    for k in 0..4 {
        assert!(deliver(&mut r, k, 0).is_some(), "packet {k}");
    }
    assert!(deliver(&mut r, 4, 100).is_some(), "the first with R");
    assert!(deliver(&mut r, 5, 100).is_none());
}

/// §6.3: "The receiver is initialized by the first data packet that arrives … Let the
/// sequence number of this packet be i": a sender starting at 1 000 000 loses nothing. Both.
#[test]
fn s6_3_initialized_by_first_arrival() {
    for mut r in [rfc_rx(), ns2_rx()] {
        stream(&mut r, 1_000_000..1_000_050);
        let st = r.status();
        assert_eq!((st.lost_packets, st.loss_events, st.p), (0, 0, 0.0));
        assert_eq!(st.highest_seq, Some(1_000_049));
    }
}

/// §6.3.1: the first loss interval is the one "that would be required to produce the data rate
/// X_target", X_target = the maximum X_recv so far, inverted exactly (within 1e-9, inside the
/// RFC's 5%). `ns2` uses the last RTT's X_recv and its bisection, within 5% (N21).
#[test]
fn s6_3_1_synthetic_first_interval() {
    let mut r = rfc_rx();
    let fbs = stream(&mut r, (0..40).chain(41..60));
    let max_x = fbs.iter().map(|f| f.1.x_recv).fold(0.0, f64::max);
    assert!((max_x - 100.0 * S).abs() < 1e-6, "{max_x}");
    let st = r.status();
    let p = 1.0 / st.loss_intervals[0];
    let x = x_bps(S, 0.1, 0.4, p);
    assert!((x / max_x - 1.0).abs() < 1e-9, "X(1/I_1) = {x}");
    let mut n = ns2_rx();
    stream(&mut n, (0..40).chain(41..60));
    let st = n.status();
    let p = 1.0 / (st.loss_intervals[0] + 1.0);
    let x = x_bps_ns2(S, 0.1, 0.4, p);
    assert!((x / (100.0 * S) - 1.0).abs() < 0.06, "X = {x}");
}

/// §6.3.1: "if the first data packet is lost or ECN-marked … X_target of 0.5/R packets per
/// second": f(p) = 2, p ≈ 20.64%. The receiver sees a mark (a loss before the first arrival it
/// cannot see, §6.3). `ns2` has no such rule (N21).
#[test]
fn s6_3_1_first_packet_marked() {
    let mut r = rfc_rx();
    deliver_at(&mut r, 0, ms(50), 100, true);
    stream(&mut r, 1..10);
    let p = 1.0 / r.status().loss_intervals[0];
    assert!((f(p) - 2.0).abs() < 1e-9, "f(p) = {}", f(p));
    assert!((x_bps(S, 0.1, 0.4, p) - 0.5 * S / 0.1).abs() < 1e-6);
    let mut n = ns2_rx();
    deliver_at(&mut n, 0, ms(50), 100, true);
    stream(&mut n, 1..10);
    assert!(n.status().loss_intervals.is_empty());
}

/// §5: "If the receiver has not yet detected a lost or marked packet, then the receiver does not
/// calculate the loss event rate, but reports a loss event rate of zero." Both profiles.
#[test]
fn s5_p_zero_before_any_loss() {
    for mut r in [rfc_rx(), ns2_rx()] {
        let fbs = stream(&mut r, 0..60);
        assert!(fbs.len() >= 5);
        assert!(fbs.iter().all(|(_, f)| f.p == 0.0));
        assert!(r.history().closed_intervals().is_empty());
    }
}

/// §8.4: the weights are the exact 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2, not the MAY of power-of-two
/// weights (…, 0.75, 0.5, 0.25, 0.25): with unequal intervals the two give different p, and the
/// receiver's is the exact one.
#[test]
fn s8_4_exact_weights() {
    let lost = [10u64, 30, 70, 90, 130, 150, 190, 210, 250, 270];
    let mut r = rfc_rx();
    stream(&mut r, (0..=275).filter(|k| !lost.contains(k)));
    let st = r.status();
    let mut i = vec![st.open_interval.unwrap()];
    i.extend(&st.loss_intervals);
    let exact = 1.0 / i_mean(&i, 8);
    let pow2 = [1.0, 1.0, 1.0, 1.0, 0.75, 0.5, 0.25, 0.25];
    let (mut t1, mut wt) = (0.0, 0.0);
    for j in 1..=8 {
        t1 += i[j] * pow2[j - 1];
        wt += pow2[j - 1];
    }
    let alt = wt / t1;
    assert!(
        (r.loss_event_rate() - exact).abs() < 1e-12,
        "{} vs {exact}",
        r.loss_event_rate()
    );
    assert!((alt - exact).abs() > 1e-4, "{alt} vs {exact}");
}

/// §6.2 step 2's MAY ("over a longer time interval, … going back to the most recent feedback
/// timer expiration"), taken when the previous R_(m-1) holds no arrival although data arrived
/// since the last report: here five packets arrive at the very instant of the 150-ms report,
/// just after it, and nothing more; the 250-ms report covers them over the 100 ms since the last
/// report instead of reporting X_recv = 0 ("a minimum value for the measured receive rate X_recv
/// of one packet per round-trip time").
#[test]
fn s6_2_x_recv_never_zero_once_data_arrived() {
    let mut r = rfc_rx();
    stream(&mut r, 0..10);
    let out = fire_timers(&mut r, ms(151));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, ms(150));
    for k in 10..15 {
        assert!(deliver_at(&mut r, k, ms(150), 100, false).is_none());
    }
    let out = fire_timers(&mut r, ms(251));
    assert_eq!(out.len(), 1, "{out:?}");
    let (t, f) = out[0];
    assert_eq!(t, ms(250));
    assert!((f.x_recv - 5.0 * S / 0.1).abs() < 1e-6, "{}", f.x_recv);
}
