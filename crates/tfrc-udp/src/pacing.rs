//! Pacing error measurement: the transport's send loop (monotonic clock, sleep-then-spin
//! wait, `sendmsg`) driving a real `tfrc::Sender` whose allowed rate is held fixed, over
//! loopback to a sink that counts arrivals.
//!
//! The rate is fixed through the core's own rules rather than around them: every R = 10 ms
//! the harness hands the core a feedback with a constant RTT sample R, p chosen so that the
//! RFC 5348 equation gives the target rate, and X_recv equal to the target (so recv_limit
//! = 2·target does not bind). With a constant R, §4.5's X_inst equals X; the packets then go
//! at the §4.6 nominal times t_i = t_0 + i·s/X, which is what is measured against.

use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tfrc::{Equation, Feedback, Profile, Time};

use crate::sys;

/// Pacing figures for one run.
#[derive(Clone, Debug, Serialize)]
pub struct PacingReport {
    /// The allowed rate the core was held at, bits/s.
    pub target_bps: f64,
    /// The core's X at the end, bits/s (checks the rate was really held).
    pub core_x_bps: f64,
    /// Segment size s.
    pub segment_size: u32,
    /// The busy-wait part of each wait.
    pub spin_us: f64,
    /// Packets measured (after a warm-up).
    pub packets: u64,
    /// Payload rate achieved between the first and last measured packet, bits/s.
    pub achieved_bps: f64,
    /// achieved / target − 1.
    pub rate_error: f64,
    /// The nominal gap s/X, µs.
    pub gap_nominal_us: f64,
    /// Mean gap, µs.
    pub gap_mean_us: f64,
    /// |gap − nominal|: median, 90th, 99th percentile and maximum, µs.
    pub gap_abs_err_p50_us: f64,
    /// 90th percentile of |gap − nominal|, µs.
    pub gap_abs_err_p90_us: f64,
    /// 99th percentile of |gap − nominal|, µs.
    pub gap_abs_err_p99_us: f64,
    /// Largest |gap − nominal|, µs.
    pub gap_abs_err_max_us: f64,
    /// Lateness of each send against the nominal schedule t_0 + i·s/X: median, µs.
    pub late_p50_us: f64,
    /// 99th percentile lateness, µs.
    pub late_p99_us: f64,
    /// Largest lateness, µs.
    pub late_max_us: f64,
    /// Packets that left with another within 1 µs (a credit burst after a late wake-up).
    pub back_to_back: u64,
    /// Datagrams the sink received.
    pub sink_received: u64,
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((q * (sorted.len() - 1) as f64).round() as usize).min(sorted.len() - 1);
    sorted[i]
}

/// Run the core at a fixed `rate_bps` for `duration` (plus 300 ms of warm-up) with segment
/// size `segment` and busy-wait `spin`, sending to a loopback sink.
pub fn measure(
    rate_bps: f64,
    duration: Duration,
    segment: u32,
    spin: Duration,
) -> io::Result<PacingReport> {
    let sink = UdpSocket::bind("127.0.0.1:0")?;
    sys::set_buffers(&sink, 8 << 20);
    sink.set_read_timeout(Some(Duration::from_millis(50)))?;
    let to = sink.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let counter = std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        let mut n = 0u64;
        while !st.load(Ordering::SeqCst) {
            if sink.recv(&mut buf).is_ok() {
                n += 1;
            }
        }
        n
    });

    let sock = UdpSocket::bind("127.0.0.1:0")?;
    sys::set_buffers(&sock, 8 << 20);
    sys::set_timer_slack(1_000);
    let profile = Profile::rfc5348().with_segment_size(segment);
    let mut core = tfrc::Sender::new(profile.sender)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let s = f64::from(segment);
    let x = rate_bps / 8.0;
    let r = 0.010;
    let p = Equation::RFC5348.invert(x, s, r, 4.0 * r);
    let payload = vec![0u8; segment as usize];
    let fds = [sock.as_raw_fd()];

    let t0 = crate::now();
    core.set_infinite_backlog(t0);
    let warm_end = t0 + Duration::from_millis(300);
    let end = warm_end + duration;
    let mut next_fb = t0 + Duration::from_secs_f64(r);
    let mut sends: Vec<Time> = Vec::new();
    let mut seq = 0u64;
    loop {
        let now = crate::now();
        if now >= end {
            break;
        }
        if now >= next_fb {
            let fb = Feedback {
                timestamp_echo: now - Duration::from_secs_f64(r),
                elapsed: Duration::ZERO,
                x_recv: x,
                p,
                highest_seq: seq.saturating_sub(1),
                hops: None,
                link_errors: 0,
                lost_per_event: 1.0,
            };
            core.on_feedback(now, &fb);
            next_fb = now + Duration::from_secs_f64(r);
        }
        core.on_timeout(now);
        while let Some(h) = core.poll_transmit(now) {
            let mut d = tfrc::wire::encode_data(&h).to_vec();
            d.extend_from_slice(&payload);
            let _ = sys::send_to(&sock, &d, &to, Some(h.initial_ttl));
            seq = h.seq + 1;
            let t = crate::now();
            // Only once the rate has settled at the target.
            if t >= warm_end && (core.rate() - x).abs() <= 1e-6 * x {
                sends.push(t);
            }
        }
        let mut wake = next_fb.min(end);
        if let Some(t) = core.poll_timeout() {
            wake = wake.min(t.max(now));
        }
        crate::wait_until(wake, &fds, spin)?;
    }
    let core_x = core.rate();
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::SeqCst);
    let sink_received = counter.join().unwrap_or(0);

    let nominal = s / x;
    let gaps: Vec<f64> = sends
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    let mut errs: Vec<f64> = gaps.iter().map(|g| (g - nominal).abs()).collect();
    errs.sort_by(f64::total_cmp);
    let mut late: Vec<f64> = Vec::with_capacity(sends.len());
    if let Some(&first) = sends.first() {
        // Lateness against the schedule anchored at the earliest-ahead packet, so that the
        // schedule is the one the packets actually followed.
        let raw: Vec<f64> = sends
            .iter()
            .enumerate()
            .map(|(i, t)| (*t - first).as_secs_f64() - i as f64 * nominal)
            .collect();
        let min = raw.iter().copied().fold(f64::INFINITY, f64::min);
        late = raw.iter().map(|v| v - min).collect();
    }
    late.sort_by(f64::total_cmp);
    let span = match (sends.first(), sends.last()) {
        (Some(a), Some(b)) => (*b - *a).as_secs_f64(),
        _ => 0.0,
    };
    let achieved = if span > 0.0 {
        (sends.len() - 1) as f64 * s * 8.0 / span
    } else {
        0.0
    };
    let us = 1e6;
    Ok(PacingReport {
        target_bps: rate_bps,
        core_x_bps: core_x * 8.0,
        segment_size: segment,
        spin_us: spin.as_secs_f64() * us,
        packets: sends.len() as u64,
        achieved_bps: achieved,
        rate_error: achieved / rate_bps - 1.0,
        gap_nominal_us: nominal * us,
        gap_mean_us: if gaps.is_empty() {
            f64::NAN
        } else {
            gaps.iter().sum::<f64>() / gaps.len() as f64 * us
        },
        gap_abs_err_p50_us: quantile(&errs, 0.5) * us,
        gap_abs_err_p90_us: quantile(&errs, 0.9) * us,
        gap_abs_err_p99_us: quantile(&errs, 0.99) * us,
        gap_abs_err_max_us: errs.last().copied().unwrap_or(f64::NAN) * us,
        late_p50_us: quantile(&late, 0.5) * us,
        late_p99_us: quantile(&late, 0.99) * us,
        late_max_us: late.last().copied().unwrap_or(f64::NAN) * us,
        back_to_back: gaps.iter().filter(|g| **g < 1e-6).count() as u64,
        sink_received,
    })
}
