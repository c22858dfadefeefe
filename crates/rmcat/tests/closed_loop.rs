//! Each controller in a closed loop over one bottleneck: a test harness of its own (a FIFO link
//! stepped every 100 µs, not the simulator), so the crate's behaviour is checked without
//! `netsim`. Budget: well under a second per controller in release, a few seconds in debug.

use rmcat::{Controller, ControllerKind, FeedbackGenerator, RateRange, Time};
use std::collections::VecDeque;
use std::time::Duration;

const STEP: Duration = Duration::from_micros(100);
const PACKET: u32 = 1200;

struct Outcome {
    /// Mean received rate over the last half (bit/s).
    goodput: f64,
    /// Mean queuing delay over the last half (s).
    mean_queue: f64,
    /// Mean target rate over the last half.
    mean_target: f64,
    lost: u64,
    feedback_bytes: u64,
    /// NADA only: (x_curr, r_ref) at the end.
    nada: Option<(f64, f64)>,
}

/// `capacity(t)` bit/s, one-way propagation `owd`, a drop-tail buffer of `buffer` bytes.
fn run(
    kind: ControllerKind,
    secs: u64,
    owd: Duration,
    buffer: u64,
    capacity: impl Fn(f64) -> f64,
) -> Outcome {
    let mut tx = Controller::new(
        kind,
        RateRange {
            min: 150e3,
            max: 3e6,
            start: 300e3,
        },
    );
    let mut rx = FeedbackGenerator::new(kind.feedback_kind(), kind.feedback_config());
    let mut encoder_queue: u64 = 0;
    let mut encoded = 0f64;
    let mut link: VecDeque<(Time, u64, u32)> = VecDeque::new(); // (enqueued, seq, size)
    let mut queued_bytes = 0u64;
    let mut in_service: Option<(Time, u64, u32, Time)> = None; // (done, seq, size, enqueued)
    let mut to_rx: VecDeque<(Time, u64, u32)> = VecDeque::new();
    let mut to_tx: VecDeque<(Time, rmcat::FeedbackMessage)> = VecDeque::new();
    let mut next_send = Time::ZERO;
    let mut seq = 0u64;
    let (mut recv_bits, mut qsum, mut qn, mut tsum, mut tn, mut lost, mut fb_bytes) =
        (0f64, 0f64, 0u64, 0f64, 0u64, 0u64, 0u64);
    let end = Time::from_millis(secs * 1000);
    let half = Time::from_millis(secs * 500);
    let mut now = Time::ZERO;
    while now < end {
        let t = now.as_secs_f64();
        // Encoder: produces at the target rate.
        encoded += tx.target_rate() * STEP.as_secs_f64() / 8.0;
        encoder_queue += encoded as u64;
        encoded = encoded.fract();
        tx.set_queue_bytes(encoder_queue);
        // Sender: paced, window-limited.
        while encoder_queue >= u64::from(PACKET) && now >= next_send && tx.can_send(PACKET) {
            encoder_queue -= u64::from(PACKET);
            tx.on_packet_sent(now, seq, PACKET);
            if queued_bytes + u64::from(PACKET) <= buffer {
                link.push_back((now, seq, PACKET));
                queued_bytes += u64::from(PACKET);
            } else {
                lost += 1;
            }
            seq += 1;
            let gap = f64::from(PACKET) * 8.0 / tx.pacing_rate();
            next_send = now.saturating_add(Duration::from_secs_f64(gap.min(1.0)));
        }
        // Link.
        if in_service.is_none() {
            if let Some((enq, s, size)) = link.pop_front() {
                queued_bytes -= u64::from(size);
                let tx_time = Duration::from_secs_f64(f64::from(size) * 8.0 / capacity(t));
                in_service = Some((now.saturating_add(tx_time), s, size, enq));
            }
        }
        if let Some((done, s, size, enq)) = in_service {
            if now >= done {
                in_service = None;
                to_rx.push_back((now.saturating_add(owd), s, size));
                if now > half {
                    qsum += now.since(enq).as_secs_f64();
                    qn += 1;
                }
            }
        }
        while to_rx.front().is_some_and(|p| p.0 <= now) {
            let (_, s, size) = to_rx.pop_front().unwrap();
            rx.on_packet(now, s, size, 0);
            if now > half {
                recv_bits += f64::from(size) * 8.0;
            }
        }
        while let Some(fb) = rx.poll_feedback(now) {
            fb_bytes += fb.wire_len() as u64;
            to_tx.push_back((now.saturating_add(owd), fb));
        }
        while to_tx.front().is_some_and(|f| f.0 <= now) {
            let (_, fb) = to_tx.pop_front().unwrap();
            tx.on_feedback(now, &fb);
        }
        if tx.poll_timeout().is_some_and(|d| d <= now) {
            tx.on_timeout(now);
        }
        if now > half {
            tsum += tx.target_rate();
            tn += 1;
        }
        now = now.saturating_add(STEP);
    }
    let secs_half = secs as f64 / 2.0;
    Outcome {
        goodput: recv_bits / secs_half,
        mean_queue: qsum / qn.max(1) as f64,
        mean_target: tsum / tn.max(1) as f64,
        lost,
        feedback_bytes: fb_bytes,
        nada: match &tx {
            Controller::Nada(n) => Some((n.state().x_curr, n.reference_rate())),
            _ => None,
        },
    }
}

#[test]
fn each_controller_fills_a_1mbps_bottleneck_without_a_standing_queue() {
    for kind in ControllerKind::ALL {
        let o = run(kind, 60, Duration::from_millis(25), 62_500, |_| 1e6);
        eprintln!(
            "{kind}: goodput {:.0} kbit/s, queue {:.1} ms, target {:.0} kbit/s, lost {}, feedback {} B",
            o.goodput / 1e3,
            o.mean_queue * 1e3,
            o.mean_target / 1e3,
            o.lost,
            o.feedback_bytes
        );
        // Each should use most of the link once converged (RFC 8868's utilisation goal) ...
        assert!(o.goodput > 0.6e6, "{kind}: goodput {}", o.goodput);
        // ... without holding a queue near the 500-ms buffer (all three target delays of 100 ms
        // or less; SCReAM's target is 100 ms).
        assert!(o.mean_queue < 0.15, "{kind}: queue {}", o.mean_queue);
        // RFC 8698 §4.3: the gradual update's equilibrium is x_offset = 0, that is
        // x_curr = PRIO·XREF·RMAX/r_ref (10 ms · 3 Mbit/s / r_ref here). Tolerance 10 %: x_curr
        // is read at one feedback, between the per-packet delay swings of a 1-ms frame grid.
        if let Some((x, r)) = o.nada {
            let expect = 10.0 * 3e6 / r;
            assert!(
                (x - expect).abs() < 0.1 * expect,
                "NADA x_curr {x} vs {expect}"
            );
        }
    }
}
