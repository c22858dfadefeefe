//! Sender unit tests, named after the RFC 5348 section (or the NS-2.35 departure,
//! `docs/tfrc-core.md` N1–N15) they check. Times are in milliseconds; R = 100 ms unless stated; s =
//! 1000 B, so RFC 5348's W_init is 4 packets and initial_rate = 40 000 B/s.

use super::test_support::{fb, ms};
use super::*;
use crate::profile::Profile;
use crate::Equation;

fn rfc() -> Sender {
    Sender::new(Profile::rfc5348().sender).unwrap()
}

fn ns2() -> Sender {
    Sender::new(Profile::ns2().sender).unwrap()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    ((a - b) / b).abs() <= rel
}

/// Drive the sender alone: wake at each poll_timeout up to `until`, collect send times.
fn run(s: &mut Sender, until: Time) -> Vec<Time> {
    let mut out = Vec::new();
    while let Some(t) = s.poll_timeout() {
        if t > until {
            break;
        }
        s.on_timeout(t);
        while s.poll_transmit(t).is_some() {
            out.push(t);
        }
    }
    out
}

fn rfc_eq(r: f64, p: f64) -> f64 {
    crate::equation::rfc5348_rate(1000.0, r, p)
}

// ----- RFC 5348 ------------------------------------------------------------------------------

/// §4.2: before any RTT sample X = s bytes/s and the nofeedback timer is 2 s; the first
/// feedback sets X = initial_rate = W_init/R and tld = now; §4.3 step 3 restarts the timer at
/// max(4R, 2s/X) with the X the feedback left in force (see `on_feedback`).
#[test]
fn rfc5348_s4_2_initial_rate_and_timer() {
    let mut s = rfc();
    assert_eq!(s.poll_transmit(ms(0)), None, "no data: not started");
    assert_eq!(s.poll_timeout(), None);
    s.set_infinite_backlog(ms(1000));
    let h = s.poll_transmit(ms(1000)).unwrap();
    assert_eq!((h.seq, h.rtt), (0, Duration::ZERO));
    assert_eq!(s.rate(), 1000.0, "X = s bytes/s");
    assert_eq!(s.poll_transmit(ms(1000)), None);
    assert_eq!(s.poll_timeout(), Some(ms(2000)), "t_ipi = s/X = 1 s");
    assert_eq!(s.nfb_at, Some(ms(3000)), "nofeedback timer 2 s");
    s.on_feedback(ms(1100), &fb(ms(1000), 0.0, 0.0));
    assert!(close(s.rate(), 40_000.0, 1e-12), "{}", s.rate());
    assert_eq!(s.tld, ms(1100));
    assert_eq!(s.nfb_at, Some(ms(1500)), "max(4R, 2s/X_new) = 4R");
    assert_eq!(s.status().nofeedback_at, s.nfb_at);
    assert_eq!(s.rtt(), Some(Duration::from_millis(100)));
    // The schedule is re-anchored: the next packet goes at once, then every 25 ms.
    assert!(s.poll_transmit(ms(1100)).is_some());
    assert!(s.poll_transmit(ms(1100)).is_none(), "no retroactive burst");
    assert_eq!(s.poll_timeout(), Some(ms(1125)));
}

/// §4.3 step 4: with p = 0, X doubles at most once per R: "X = max(min(2*X, recv_limit),
/// initial_rate); tld = t_now", and X_recv_set starts as {Infinity}.
#[test]
fn rfc5348_s4_3_slow_start_doubles_once_per_rtt() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    assert!(close(s.rate(), 40_000.0, 1e-12));
    s.on_feedback(ms(150), &fb(ms(50), 1e9, 0.0));
    assert!(close(s.rate(), 40_000.0, 1e-12), "only 50 ms since tld");
    s.on_feedback(ms(200), &fb(ms(100), 1e9, 0.0));
    assert!(close(s.rate(), 80_000.0, 1e-12), "doubled after R");
    assert_eq!(s.tld, ms(200));
    assert!(s.status().slow_start);
}

/// §4.3: slow start is capped by recv_limit = 2·max(X_recv_set) once the initial Infinity is
/// older than two RTTs, and floored at initial_rate.
#[test]
fn rfc5348_s4_3_slow_start_capped_by_twice_x_recv() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s.on_feedback(ms(150), &fb(ms(50), 30_000.0, 0.0));
    // The Infinity (stamped at the first RTT measurement, t = 100 ms) is still there at
    // t = 250 ms and gone at 350 ms.
    s.on_feedback(ms(250), &fb(ms(150), 30_000.0, 0.0));
    assert_eq!(s.status().recv_limit, None);
    s.on_feedback(ms(350), &fb(ms(250), 30_000.0, 0.0));
    assert!(close(s.rate(), 60_000.0, 1e-12), "min(2X, 2*X_recv)");
    assert_eq!(s.status().recv_limit, Some(60_000.0));
    s.on_feedback(ms(700), &fb(ms(600), 10_000.0, 0.0));
    assert!(close(s.rate(), 40_000.0, 1e-12), "floored at initial_rate");
    assert_eq!(s.status().recv_limit, Some(20_000.0));
}

/// §8.2.2: "it is sufficient to limit X_recv_set to at most N=3 elements".
#[test]
fn rfc5348_s8_2_2_x_recv_set_holds_three() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    for k in 1..10 {
        s.on_feedback(ms(100 + k), &fb(ms(k), 1000.0 * k as f64, 0.0));
        assert!(s.x_recv_set.len() <= 3);
    }
    assert_eq!(s.x_recv_set.iter().map(|e| e.0).fold(0.0, f64::max), 9000.0);
}

/// §4.3 step 4, p > 0: "X = max(min(X_Bps, recv_limit), s/t_mbi)" with X_Bps from §3.1
/// (t_RTO = 4R).
#[test]
fn rfc5348_s4_3_congestion_avoidance_uses_equation_and_recv_limit() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s.on_feedback(ms(400), &fb(ms(300), 1e9, 0.01));
    assert!(close(s.rate(), rfc_eq(0.1, 0.01), 1e-9), "{}", s.rate());
    assert!(!s.in_slow_start());
    s.on_feedback(ms(700), &fb(ms(600), 20_000.0, 0.01));
    assert!(close(s.rate(), 40_000.0, 1e-12), "limited by 2*X_recv");
    let st = s.status();
    assert!(close(st.x_calc, rfc_eq(0.1, 0.01), 1e-9));
    assert_eq!(st.t_rto, Duration::from_millis(400));
}

/// §4.3: "The term s/t_mbi ensures that when p > 0, the sender is allowed to send at least one
/// packet every 64 seconds."
#[test]
fn rfc5348_s4_3_minimum_rate_one_packet_per_t_mbi() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s.on_feedback(ms(10_200), &fb(ms(200), 1e9, 1.0));
    assert_eq!(s.rate(), 1000.0 / 64.0);
}

/// §4.3 + §8.2.1: a feedback covering a data-limited interval maximises X_recv_set (a lower
/// X_recv does not lower recv_limit); with a p increase it halves the set and uses
/// 0.85·X_recv, and recv_limit is max(X_recv_set), not twice it.
#[test]
fn rfc5348_s8_2_1_data_limited_intervals() {
    let mut s = rfc();
    // One packet at a time: the sender is data-limited after every send.
    s.push_packets(ms(0), 1);
    assert!(s.poll_transmit(ms(0)).is_some());
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s.push_packets(ms(200), 1);
    assert!(s.poll_transmit(ms(200)).is_some());
    s.on_feedback(ms(300), &fb(ms(200), 5000.0, 0.0));
    assert_eq!(s.status().recv_limit, Some(10_000.0), "Maximize: {{5000}}");
    assert!(
        close(s.rate(), 40_000.0, 1e-12),
        "initial_rate floor in slow start"
    );
    s.push_packets(ms(400), 1);
    assert!(s.poll_transmit(ms(400)).is_some());
    s.on_feedback(ms(600), &fb(ms(400), 2000.0, 0.0));
    // "Update" would have dropped the 5000 entry (older than 2R) and given 4000.
    assert_eq!(s.status().recv_limit, Some(10_000.0));
    s.push_packets(ms(700), 1);
    assert!(s.poll_transmit(ms(700)).is_some());
    s.on_feedback(ms(800), &fb(ms(700), 2000.0, 0.05));
    // Halve {5000} → 2500; X_recv = 0.85·2000 = 1700; Maximize → {2500}; recv_limit = 2500.
    assert_eq!(s.rate(), 2500.0);
}

/// §8.2.1: a sender that always has data is never data-limited, so X_recv_set is updated (old
/// entries age out) rather than maximised — also when feedbacks are more than an RTT apart,
/// where the two-timestamp heuristic of §8.2.1's pseudo-code would misjudge it.
#[test]
fn rfc5348_s8_2_1_backlogged_sender_is_not_data_limited() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    run(&mut s, ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    run(&mut s, ms(300));
    s.on_feedback(ms(300), &fb(ms(200), 5000.0, 0.0));
    run(&mut s, ms(600));
    s.on_feedback(ms(600), &fb(ms(500), 2000.0, 0.0));
    assert_eq!(s.status().recv_limit, Some(4000.0));
    // A p increase on such a feedback uses the normal branch: recv_limit = 2·max(set).
    run(&mut s, ms(700));
    s.on_feedback(ms(700), &fb(ms(600), 2000.0, 0.05));
    assert_eq!(s.status().recv_limit, Some(4000.0));
    assert!(close(s.rate(), 4000.0, 1e-12));
}

/// §4.4 case (a): no RTT sample yet and not idle: "X = max(X/2, s/t_mbi)"; the timer restarts
/// at max(4R, 2s/X).
#[test]
fn rfc5348_s4_4_nofeedback_case_a_halves_before_any_feedback() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_timeout(ms(2000));
    assert_eq!(s.rate(), 500.0);
    assert_eq!(s.nfb_at, Some(ms(6000)), "2s/X = 4 s");
    assert_eq!(s.status().nofeedback_expiries, 1);
}

/// §4.4 case (b): an idle sender with p = 0 and X < 2·recover_rate keeps its rate.
#[test]
fn rfc5348_s4_4_nofeedback_case_b_idle_sender_keeps_rate() {
    let mut s = rfc();
    s.push_packets(ms(0), 1);
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    assert_eq!(s.nfb_at, Some(ms(500)));
    s.on_timeout(ms(500));
    assert!(close(s.rate(), 40_000.0, 1e-12));
    assert_eq!(s.nfb_at, Some(ms(900)), "max(4R, 2s/X) = 4R");
}

/// §4.4 case (c): p = 0 and not idle: "X = max(X/2, s/t_mbi)".
#[test]
fn rfc5348_s4_4_nofeedback_case_c_halves_rate() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    assert!(s.poll_transmit(ms(100)).is_some());
    s.on_timeout(ms(2100));
    assert!(close(s.rate(), 20_000.0, 1e-12));
}

fn congestion_avoidance(x_recv: f64) -> Sender {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s.on_feedback(ms(400), &fb(ms(300), x_recv, 0.01));
    assert!(s.poll_transmit(ms(400)).is_some());
    assert_eq!(s.nfb_at, Some(ms(800)));
    s
}

/// §4.4 case (d): "X_Bps > 2*X_recv": Update_Limits(X_recv) — X_recv_set becomes {X_recv/2}
/// and X = min(X_Bps, X_recv).
#[test]
fn rfc5348_s4_4_nofeedback_case_d_limits_to_x_recv() {
    let mut s = congestion_avoidance(20_000.0);
    assert!(close(s.rate(), 40_000.0, 1e-12));
    s.on_timeout(ms(800));
    assert!(close(s.rate(), 20_000.0, 1e-12));
    assert_eq!(s.x_recv_set, vec![(10_000.0, ms(800))]);
}

/// §4.4 case (e): X_Bps ≤ 2·X_recv: Update_Limits(X_Bps/2), so X = X_Bps/2.
#[test]
fn rfc5348_s4_4_nofeedback_case_e_halves_x_bps() {
    let mut s = congestion_avoidance(100_000.0);
    let x_bps = rfc_eq(0.1, 0.01);
    assert!(close(s.rate(), x_bps, 1e-9));
    s.on_timeout(ms(800));
    assert!(close(s.rate(), x_bps / 2.0, 1e-9));
    assert_eq!(s.nfb_at, Some(ms(1200)), "max(4R, 2s/X)");
}

/// §4.5: "X_inst = X * R_sqmean / sqrt(R_sample)" with R_sqmean an EWMA (q2 = 0.9) of
/// sqrt(R_sample); packets are paced at t_ipi = s/X_inst.
#[test]
fn rfc5348_s4_5_oscillation_damping() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    assert_eq!(s.status().x_inst, s.rate());
    s.on_feedback(ms(500), &fb(ms(100), 1e9, 0.0));
    let sqmean = 0.9 * 0.1f64.sqrt() + 0.1 * 0.4f64.sqrt();
    let want = s.rate() * sqmean / 0.4f64.sqrt();
    assert!(
        close(s.status().x_inst, want, 1e-12),
        "{}",
        s.status().x_inst
    );
    assert!(close(s.t_ipi(), 1000.0 / want, 1e-12));
}

/// §4.6: "t_(i+1) = t_i + t_ipi" with t_ipi = s/X_inst.
#[test]
fn rfc5348_s4_6_packets_paced_at_t_ipi() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    let times = run(&mut s, ms(200));
    let want: Vec<Time> = (0..5).map(|k| ms(100 + 25 * k)).collect();
    assert_eq!(times, want);
}

/// §4.6: credits for unused send times are kept for at most T = 1 RTT, so the burst after an
/// idle period is at most one RTT's worth of packets, X·R/s = 4.
#[test]
fn rfc5348_s4_6_credit_limited_to_one_rtt() {
    let mut s = rfc();
    s.push_packets(ms(0), 1);
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    // Idle: case (b) of §4.4 keeps X at each expiry (500 and 900 ms).
    s.on_timeout(ms(500));
    s.on_timeout(ms(900));
    assert_eq!(s.status().nofeedback_at, Some(ms(1300)));
    s.push_packets(ms(1100), 100);
    let mut burst = 0;
    while s.poll_transmit(ms(1100)).is_some() {
        burst += 1;
    }
    assert_eq!(burst, 4);
    assert_eq!(s.poll_timeout(), Some(Time::from_nanos(1_100_000_001)));
}

/// §8.3: a packet may leave t_delta = min(t_ipi, t_gran, R)/2 before its nominal time.
#[test]
fn rfc5348_s8_3_early_send_by_t_delta() {
    let mut cfg = Profile::rfc5348().sender;
    cfg.pacing = Pacing::Nominal {
        t_gran: Duration::from_millis(10),
        credit_rtts: 1.0,
    };
    let mut s = Sender::new(cfg).unwrap();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    assert!(s.poll_transmit(ms(100)).is_some());
    assert_eq!(s.t_delta(), Duration::from_millis(5));
    assert_eq!(s.poll_timeout(), Some(ms(120)));
    assert!(s.poll_transmit(ms(119)).is_none());
    assert!(s.poll_transmit(ms(120)).is_some(), "5 ms early");
}

/// §3.2.1: every data packet carries a sequence number +1, the send timestamp and R.
#[test]
fn rfc5348_s3_2_1_header_fields() {
    let mut s = rfc();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    let h = s.poll_transmit(ms(100)).unwrap();
    assert_eq!(h.seq, 1);
    assert_eq!(h.timestamp, ms(100));
    assert_eq!(h.rtt, Duration::from_millis(100));
    assert_eq!(h.t_rto, Duration::from_millis(400));
    assert_eq!(h.segment_size, 1000);
    assert_eq!(h.initial_ttl, 32);
}

/// The application's backlog is consumed one segment per packet, and a stopped sender is
/// silent.
#[test]
fn backlog_and_stop() {
    let mut s = rfc();
    s.push_packets(ms(0), 2);
    assert!(s.poll_transmit(ms(0)).is_some());
    assert_eq!(s.backlog(), Backlog::Packets(1));
    s.stop();
    assert!(s.poll_transmit(ms(5000)).is_none());
    assert_eq!(s.poll_timeout(), None);
}

// ----- NS-2.35 ---------------------------------------------------------------------------------

/// `docs/tfrc-core.md` N1: rate 300 B/s, one packet at once, the send timer at size_/rate_ =
/// 3.33 s and the nofeedback timer at 2·size_/rate_ = 6.67 s; the first packets are urgent.
#[test]
fn ns2_start_at_300_bytes_per_second() {
    let mut s = ns2();
    s.set_infinite_backlog(ms(0));
    let h = s.poll_transmit(ms(0)).unwrap();
    assert!(h.urgent);
    assert_eq!((h.seq, h.round), (0, 0));
    assert_eq!(s.rate(), 300.0);
    assert!(s.poll_transmit(ms(0)).is_none());
    assert_eq!(s.poll_timeout(), Some(Time::from_nanos(3_333_333_333)));
    assert_eq!(s.nfb_at, Some(Time::from_nanos(6_666_666_667)));
}

/// `docs/tfrc-core.md` N2, N5: the first feedback sets rate_ = 4 whole packets
/// per R and sends a packet at once; the first report's X_recv is ignored; the nofeedback
/// timer becomes max(2R, 2s/rate_) with the old rate.
#[test]
fn ns2_first_feedback_integer_window_and_immediate_packet() {
    let mut s = ns2();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 1000.0, 0.0));
    assert!(close(s.rate(), 40_000.0, 1e-12));
    assert_eq!(s.status().recv_limit, None, "first X_recv ignored");
    let h = s.poll_transmit(ms(100)).expect("immediate packet");
    assert!(!h.urgent);
    assert_eq!(h.round, 1);
    assert_eq!(s.poll_timeout(), Some(ms(125)));
    assert_eq!(s.nfb_at, Some(Time::from_nanos(6_766_666_667)));
}

fn ns2_after_two_feedbacks() -> Sender {
    let mut s = ns2();
    s.set_infinite_backlog(ms(0));
    s.poll_transmit(ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 1000.0, 0.0));
    s.poll_transmit(ms(100));
    // Round 2 with an initial window > 1 packet still keeps the initial rate.
    s.on_feedback(ms(200), &fb(ms(100), 5000.0, 0.0));
    assert!(close(s.rate(), 40_000.0, 1e-12));
    assert_eq!(s.status().recv_limit, Some(10_000.0));
    assert!(
        s.poll_transmit(ms(200)).is_some(),
        "slow-start feedback sends at once"
    );
    s
}

/// `docs/tfrc-core.md` N3/N4: after more than R since the last change the rate doubles,
/// capped by 2·X_recv, and the pacing rate ramps linearly (slow_increase_) by
/// delta = (new - old)/(new·R/s) per packet.
#[test]
fn ns2_slow_start_doubles_capped_and_ramps() {
    let mut s = ns2_after_two_feedbacks();
    s.on_feedback(ms(301), &fb(ms(201), 30_000.0, 0.0));
    assert!(close(s.rate(), 60_000.0, 1e-12), "min(2·40000, 2·30000)");
    assert!(s.poll_transmit(ms(301)).is_some());
    let delta = 20_000.0 / 6.0;
    let gap = 1000.0 / (40_000.0 + delta);
    let want = ms(301).saturating_add(duration_from_secs_f64(gap));
    assert_eq!(s.poll_timeout(), Some(want));
    assert!(close(s.status().x_inst, 40_000.0 + delta, 1e-12));
}

/// `docs/tfrc-core.md` N3: a rate above the cap falls to X_recv (half the cap).
#[test]
fn ns2_slow_start_over_cap_drops_to_x_recv() {
    let mut s = ns2_after_two_feedbacks();
    s.on_feedback(ms(301), &fb(ms(201), 15_000.0, 0.0));
    assert!(close(s.rate(), 15_000.0, 1e-12));
}

/// `docs/tfrc-core.md` N6: on the first loss report slow start ends at X_calc, with no X_recv cap;
/// the equation is the clamped one with the TCP-tick t_RTO.
#[test]
fn ns2_leaves_slow_start_at_x_calc() {
    let mut s = ns2_after_two_feedbacks();
    s.on_feedback(ms(301), &fb(ms(201), 100.0, 0.01));
    assert!(!s.in_slow_start());
    assert_eq!(s.t_rto(), Duration::from_millis(300));
    let want = Equation::NS2.rate(1000.0, 0.1, 0.3, 0.01);
    assert!(close(s.rate(), want, 1e-9));
    assert_eq!(s.immediate, 0, "no immediate send when leaving slow start");
}

/// `docs/tfrc-core.md` N7/N8: a rising X_calc is followed by
/// +s/R·min(elapsed/R, 2); a falling one is taken at once but capped at max(2·X_recv, s/R).
#[test]
fn ns2_additive_increase_and_capped_decrease() {
    let mut s = ns2_after_two_feedbacks();
    s.on_feedback(ms(500), &fb(ms(400), 1e6, 0.05));
    let x5 = Equation::NS2.rate(1000.0, 0.1, 0.3, 0.05);
    assert!(close(s.rate(), x5, 1e-9));
    s.on_feedback(ms(650), &fb(ms(550), 1e6, 0.01));
    // Leaving slow start does not touch last_change_ (still t = 200 ms), so
    // mult = min((650 - 200)/100, 2) = 2.
    assert!(close(s.rate(), x5 + 10_000.0 * 2.0, 1e-9), "{}", s.rate());
    s.on_feedback(ms(700), &fb(ms(600), 10_000.0, 0.05));
    assert!(
        close(s.rate(), 20_000.0, 1e-12),
        "min(X_calc, max(2·X_recv, s/R))"
    );
}

/// `docs/tfrc-core.md` N12: after max(2R, 2s/X) without feedback the rate halves,
/// the round advances, the next packet is urgent and goes at once.
#[test]
fn ns2_nofeedback_halves_and_sends_at_once() {
    let mut s = ns2_after_two_feedbacks();
    s.on_feedback(ms(500), &fb(ms(400), 1e6, 0.05));
    let x = s.rate();
    let t = ms(500).saturating_add(duration_from_secs_f64((0.2f64).max(2000.0 / 40_000.0)));
    assert_eq!(s.nfb_at, Some(t));
    s.on_timeout(t);
    assert!(close(s.rate(), x / 2.0, 1e-12));
    let h = s.poll_transmit(t).expect("immediate packet");
    assert!(h.urgent);
    assert_eq!(h.round, 4);
}

/// `docs/tfrc-core.md` N5, N14: data arriving after a send-timer
/// tick found nothing to send goes out at once.
#[test]
fn ns2_data_limited_sender_sends_new_data_at_once() {
    let mut s = ns2();
    s.push_packets(ms(0), 1);
    assert!(s.poll_transmit(ms(0)).is_some());
    let tick = s.poll_timeout().unwrap();
    s.on_timeout(tick);
    assert!(s.ns2.datalimited);
    s.push_packets(ms(5000), 1);
    assert!(s.poll_transmit(ms(5000)).is_some());
    assert!(!s.ns2.datalimited);
}

/// `docs/tfrc-core.md` N9: the RTT filter weight is 0.95.
#[test]
fn ns2_rtt_filter_q_0_95() {
    let mut s = ns2_after_two_feedbacks();
    s.on_feedback(ms(500), &fb(ms(300), 1e6, 0.0));
    let r = s.rtt().unwrap().as_secs_f64();
    assert!((r - (0.95 * 0.1 + 0.05 * 0.2)).abs() < 1e-9, "{r}");
}
