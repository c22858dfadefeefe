//! The feedback each controller needs, as typed messages with their byte encoding, and the
//! receiver-side generators that build them from packet arrivals.
//!
//! - [`rfc8888`]: RTP Control Protocol feedback for congestion control (RFC 8888), per-packet
//!   arrival times and ECN for one or more media streams. NADA and SCReAM use it.
//! - [`twcc`]: transport-wide congestion control feedback
//!   (draft-holmer-rmcat-transport-wide-cc-extensions-01), per-packet arrival deltas over a
//!   sequence number shared by all streams. GCC's send-side estimator uses it.
//!
//! Both are sent at an interval chosen by the receiver (see [`FeedbackConfig`]); a message's
//! size on the wire is its encoded length plus the IP/UDP headers the simulator adds, so
//! feedback overhead and feedback loss behave as they would on a real path.

pub mod rfc8888;
pub mod twcc;

use crate::time::Time;
use core::fmt;
use core::time::Duration;

pub use rfc8888::{CcfbReport, Rfc8888Receiver};
pub use twcc::{TwccFeedback, TwccReceiver};

/// Why a byte string is not a valid feedback message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the fixed header or than the header's length field says.
    Truncated,
    /// The RTCP version is not 2, or the packet type or format is not the one expected.
    NotThisMessage,
    /// The RTCP length field disagrees with the bytes given.
    BadLength,
    /// A field holds a value the format forbids (reserved symbol, non-zero padding, ...).
    BadField(&'static str),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "truncated feedback message"),
            DecodeError::NotThisMessage => write!(f, "not an RTCP message of the expected type"),
            DecodeError::BadLength => write!(f, "RTCP length field does not match the message"),
            DecodeError::BadField(what) => write!(f, "invalid field: {what}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Which feedback format a controller consumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeedbackKind {
    /// RFC 8888 congestion control feedback.
    Rfc8888,
    /// Transport-wide congestion control feedback.
    Twcc,
}

/// How often a receiver sends feedback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FeedbackConfig {
    /// A fixed interval while packets arrive.
    Fixed(Duration),
    /// RFC 8298 §4.2.1's rate-dependent interval (see [`scream_feedback_interval`]).
    ScreamRate,
}

impl FeedbackConfig {
    /// A fixed interval.
    pub fn fixed(d: Duration) -> FeedbackConfig {
        FeedbackConfig::Fixed(d)
    }

    /// SCReAM's rate-dependent interval.
    pub fn scream() -> FeedbackConfig {
        FeedbackConfig::ScreamRate
    }

    /// The interval to use when the media arrives at `rate` bit/s.
    pub fn interval(&self, rate: f64) -> Duration {
        match *self {
            FeedbackConfig::Fixed(d) => d,
            FeedbackConfig::ScreamRate => scream_feedback_interval(rate),
        }
    }
}

/// RFC 8298 §4.2.1: feedback `rate_fb = min(50, max(2.5, rate_media / 10000))` times a second,
/// that is every 20 ms at 500 kbit/s and above, every 400 ms at 25 kbit/s and below.
pub fn scream_feedback_interval(rate_media: f64) -> Duration {
    let per_second = (rate_media / 10_000.0).clamp(2.5, 50.0);
    Duration::from_secs_f64(1.0 / per_second)
}

/// What both receivers track between reports: the first sequence number not yet covered, the
/// highest received, when the next report falls due, and the received rate (for SCReAM's
/// rate-dependent interval).
#[derive(Clone, Debug)]
pub(crate) struct Pending {
    config: FeedbackConfig,
    next_begin: Option<u64>,
    highest: Option<u64>,
    next_due: Option<Time>,
    meter: RateMeter,
}

impl Pending {
    pub(crate) fn new(config: FeedbackConfig) -> Pending {
        Pending {
            config,
            next_begin: None,
            highest: None,
            next_due: None,
            meter: RateMeter::default(),
        }
    }

    /// Packet `seq` of `size` bytes arrived at `now`; false if an earlier report already said
    /// it was missing (it is not reported again).
    pub(crate) fn accept(&mut self, now: Time, seq: u64, size: u32) -> bool {
        self.meter.on_packet(now, size);
        if self.next_begin.is_some_and(|b| seq < b) {
            return false;
        }
        self.next_begin.get_or_insert(seq);
        if self.highest.is_none_or(|h| seq > h) {
            self.highest = Some(seq);
        }
        if self.next_due.is_none() {
            self.next_due = Some(now.saturating_add(self.config.interval(self.meter.rate())));
        }
        true
    }

    pub(crate) fn poll_timeout(&self) -> Option<Time> {
        self.next_due
    }

    /// The range `(first, highest)` a report at `now` should cover, if one is due.
    pub(crate) fn due(&self, now: Time) -> Option<(u64, u64)> {
        if now < self.next_due? {
            return None;
        }
        Some((self.next_begin?, self.highest?))
    }

    /// A report at `now` covered up to `next - 1`; if packets remain, the next is due at once.
    pub(crate) fn covered(&mut self, now: Time, next: u64) {
        self.next_begin = Some(next);
        self.next_due = if self.highest.is_some_and(|h| next <= h) {
            Some(now)
        } else {
            None
        };
    }
}

/// The received media rate over the last [`RateMeter::WINDOW`], which a rate-dependent
/// feedback interval needs.
#[derive(Clone, Debug, Default)]
pub(crate) struct RateMeter {
    recent: std::collections::VecDeque<(Time, u32)>,
    bytes: u64,
}

impl RateMeter {
    pub(crate) const WINDOW: Duration = Duration::from_millis(500);

    pub(crate) fn on_packet(&mut self, now: Time, size: u32) {
        self.recent.push_back((now, size));
        self.bytes += u64::from(size);
        while let Some(&(t, s)) = self.recent.front() {
            if now.since(t) <= Self::WINDOW {
                break;
            }
            self.bytes -= u64::from(s);
            self.recent.pop_front();
        }
    }

    pub(crate) fn rate(&self) -> f64 {
        self.bytes as f64 * 8.0 / Self::WINDOW.as_secs_f64()
    }
}

/// A feedback message of either kind.
#[derive(Clone, Debug, PartialEq)]
pub enum FeedbackMessage {
    /// RFC 8888.
    Ccfb(CcfbReport),
    /// Transport-wide.
    Twcc(TwccFeedback),
}

impl FeedbackMessage {
    /// Encoded length in bytes (the RTCP packet, without IP/UDP headers).
    pub fn wire_len(&self) -> usize {
        match self {
            FeedbackMessage::Ccfb(r) => r.wire_len(),
            FeedbackMessage::Twcc(t) => t.wire_len(),
        }
    }

    /// The message's bytes.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            FeedbackMessage::Ccfb(r) => r.encode(),
            FeedbackMessage::Twcc(t) => t.encode(),
        }
    }
}

/// A receiver-side feedback generator of either kind (closed enum; the simulator holds one per
/// media flow).
#[derive(Clone, Debug)]
pub enum FeedbackGenerator {
    /// Builds RFC 8888 reports.
    Rfc8888(Rfc8888Receiver),
    /// Builds transport-wide feedback.
    Twcc(TwccReceiver),
}

impl FeedbackGenerator {
    /// A generator of `kind` sending at `config.interval`.
    pub fn new(kind: FeedbackKind, config: FeedbackConfig) -> FeedbackGenerator {
        match kind {
            FeedbackKind::Rfc8888 => FeedbackGenerator::Rfc8888(Rfc8888Receiver::new(config)),
            FeedbackKind::Twcc => FeedbackGenerator::Twcc(TwccReceiver::new(config)),
        }
    }

    /// A media packet of `size` bytes with sequence number `seq` (the RTP sequence number for
    /// RFC 8888, the transport-wide one for TWCC; the generator keeps their low 16 bits on the
    /// wire) arrived at `now` carrying ECN codepoint `ecn` (two bits, as in the IP header).
    pub fn on_packet(&mut self, now: Time, seq: u64, size: u32, ecn: u8) {
        match self {
            FeedbackGenerator::Rfc8888(r) => r.on_packet(now, seq, size, ecn),
            FeedbackGenerator::Twcc(t) => t.on_packet(now, seq, size),
        }
    }

    /// The next message due at `now`, if any. Call until `None`.
    pub fn poll_feedback(&mut self, now: Time) -> Option<FeedbackMessage> {
        match self {
            FeedbackGenerator::Rfc8888(r) => r.poll_feedback(now).map(FeedbackMessage::Ccfb),
            FeedbackGenerator::Twcc(t) => t.poll_feedback(now).map(FeedbackMessage::Twcc),
        }
    }

    /// When the next message falls due (None while nothing is waiting to be reported).
    pub fn poll_timeout(&self) -> Option<Time> {
        match self {
            FeedbackGenerator::Rfc8888(r) => r.poll_timeout(),
            FeedbackGenerator::Twcc(t) => t.poll_timeout(),
        }
    }
}

/// The RTCP common header: version 2, no padding, `fmt`, packet type, length in 32-bit words
/// minus one (RFC 3550 §6.4.1, RFC 4585 §6.1).
pub(crate) fn rtcp_header(fmt: u8, pt: u8, total_len: usize) -> [u8; 4] {
    let words = (total_len / 4 - 1) as u16;
    let w = words.to_be_bytes();
    [0x80 | (fmt & 0x1f), pt, w[0], w[1]]
}

/// Checks the RTCP header of `b` and returns the total length it declares.
pub(crate) fn check_rtcp_header(b: &[u8], fmt: u8, pt: u8) -> Result<usize, DecodeError> {
    if b.len() < 4 {
        return Err(DecodeError::Truncated);
    }
    if b[0] >> 6 != 2 || b[0] & 0x1f != fmt || b[1] != pt {
        return Err(DecodeError::NotThisMessage);
    }
    if b[0] & 0x20 != 0 {
        // Padding is for compound packets and encryption; these messages never need it.
        return Err(DecodeError::BadField("RTCP padding bit"));
    }
    let len = (u16::from_be_bytes([b[2], b[3]]) as usize + 1) * 4;
    if len != b.len() {
        return Err(if len > b.len() {
            DecodeError::Truncated
        } else {
            DecodeError::BadLength
        });
    }
    Ok(len)
}

/// The extended sequence number whose low 16 bits are `low` and which is nearest `reference`
/// (RFC 3550 Appendix A.1's idea, without its probation).
pub fn unwrap_seq(low: u16, reference: u64) -> u64 {
    let cand = (reference & !0xffff) | u64::from(low);
    let up = cand.wrapping_add(0x1_0000);
    let down = cand.checked_sub(0x1_0000);
    let dist = |x: u64| x.abs_diff(reference);
    let mut best = cand;
    if dist(up) < dist(best) {
        best = up;
    }
    if let Some(d) = down {
        if dist(d) < dist(best) {
            best = d;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scream_interval_follows_rfc8298() {
        assert_eq!(scream_feedback_interval(0.0), Duration::from_millis(400));
        assert_eq!(scream_feedback_interval(100e3), Duration::from_millis(100));
        assert_eq!(scream_feedback_interval(5e6), Duration::from_millis(20));
    }

    #[test]
    fn unwrap_picks_the_nearest() {
        assert_eq!(unwrap_seq(5, 3), 5);
        assert_eq!(unwrap_seq(0xfffe, 0x1_0003), 0xfffe);
        assert_eq!(unwrap_seq(2, 0x1_fff0), 0x2_0002);
        assert_eq!(unwrap_seq(0xffff, 0), 0xffff);
    }
}
