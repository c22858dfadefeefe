//! Scripted paths for the conformance tests: packets sent at given times, each delivered after
//! a given one-way delay or lost, the receiver's real feedback generator answering, and the
//! feedback reaching the controller after a fixed return delay. No simulator, no randomness.
#![allow(dead_code)]

use rmcat::{Controller, FeedbackGenerator, Time};
use std::time::Duration;

/// One scripted packet.
#[derive(Clone, Copy, Debug)]
pub struct Pkt {
    pub sent_ms: f64,
    pub size: u32,
    /// One-way delay (ms), or `None` if lost.
    pub owd_ms: Option<f64>,
    pub ce: bool,
}

pub fn t(ms: f64) -> Time {
    Time::from_nanos((ms * 1e6).round() as u64)
}

/// Sends `pkts` (sequence numbers from `first_seq`) through `tx`, builds feedback with `rx` and
/// delivers it `back_ms` later; the feedback is polled every millisecond up to `until_ms`.
/// Calls `after_feedback` after each feedback reaches the controller.
pub fn drive(
    tx: &mut Controller,
    rx: &mut FeedbackGenerator,
    first_seq: u64,
    pkts: &[Pkt],
    back_ms: f64,
    until_ms: f64,
    mut after_feedback: impl FnMut(&Controller, Time),
) {
    let mut events: Vec<(Time, u8, usize)> = Vec::new(); // (time, kind 0 send 1 arrive, index)
    for (i, p) in pkts.iter().enumerate() {
        events.push((t(p.sent_ms), 0, i));
        if let Some(d) = p.owd_ms {
            events.push((t(p.sent_ms + d), 1, i));
        }
    }
    events.sort_by_key(|e| (e.0, e.1, e.2));
    let mut fb: Vec<(Time, rmcat::FeedbackMessage)> = Vec::new();
    let mut ev = events.into_iter().peekable();
    let mut now_ms = 0.0;
    while now_ms <= until_ms {
        let now = t(now_ms);
        while ev.peek().is_some_and(|e| e.0 <= now) {
            let (at, kind, i) = ev.next().unwrap();
            let p = pkts[i];
            let seq = first_seq + i as u64;
            if kind == 0 {
                tx.on_packet_sent(at, seq, p.size);
            } else {
                rx.on_packet(at, seq, p.size, if p.ce { 3 } else { 0 });
            }
        }
        while let Some(m) = rx.poll_feedback(now) {
            fb.push((t(now_ms + back_ms), m));
        }
        fb.sort_by_key(|f| f.0);
        while fb.first().is_some_and(|f| f.0 <= now) {
            let (at, m) = fb.remove(0);
            tx.on_feedback(at, &m);
            after_feedback(tx, at);
        }
        if tx.poll_timeout().is_some_and(|d| d <= now) {
            tx.on_timeout(now);
        }
        now_ms += 1.0;
    }
}

/// Packets of `size` bytes every `gap_ms` from `start_ms` for `count` packets, each with the
/// one-way delay `owd(i)`.
pub fn cbr(
    start_ms: f64,
    gap_ms: f64,
    count: usize,
    size: u32,
    owd: impl Fn(usize) -> Option<f64>,
) -> Vec<Pkt> {
    (0..count)
        .map(|i| Pkt {
            sent_ms: start_ms + gap_ms * i as f64,
            size,
            owd_ms: owd(i),
            ce: false,
        })
        .collect()
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
