//! RFC 8888: RTP Control Protocol (RTCP) feedback for congestion control.
//!
//! One RTPFB message (PT 205, FMT 11) carries, for each media stream (SSRC), a run of
//! consecutive sequence numbers starting at `begin_seq`; for each the receiver says whether it
//! arrived, its ECN codepoint, and its arrival time as an offset before the message's report
//! timestamp, in 1/1024-second units (RFC 8888 §3.1). The layout, in bytes:
//!
//! | bytes | field |
//! |---|---|
//! | 4 | RTCP header: V=2, P, FMT=11, PT=205, length |
//! | 4 | SSRC of the feedback sender |
//! | per stream: 4 + 2 + 2 | media SSRC, `begin_seq`, `num_reports` |
//! | per stream: 2 × `num_reports`, padded to 4 | metric: R (1 bit), ECN (2), ATO (13) |
//! | 4 | report timestamp: the middle 32 bits of an NTP timestamp (16.16 seconds) |
//!
//! A packet not received has R = 0 and ECN and ATO zero. ATO 0x1FFE means "at least 0x1FFE";
//! 0x1FFF means "arrival time unavailable" (RFC 8888 §3.1).

use super::{check_rtcp_header, rtcp_header, DecodeError, FeedbackConfig, Pending};
use crate::time::Time;
use std::collections::BTreeMap;

/// RTCP packet type of transport-layer feedback (RTPFB, RFC 4585).
pub const PT_RTPFB: u8 = 205;
/// The feedback message type of RFC 8888 congestion control feedback.
pub const FMT_CCFB: u8 = 11;
/// ATO value meaning "this offset or more" (RFC 8888 §3.1).
pub const ATO_OVERRANGE: u16 = 0x1ffe;
/// ATO value meaning "arrival time not available".
pub const ATO_UNAVAILABLE: u16 = 0x1fff;
/// Most packets one report block may describe: RFC 8888 §3.1 limits `num_reports` to 16384.
pub const MAX_REPORTS: usize = 16384;

/// What the receiver says about one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMetric {
    /// R: the packet arrived.
    pub received: bool,
    /// Its ECN codepoint as in the IP header (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: u8,
    /// Arrival time offset before the report timestamp, in 1/1024 s (13 bits).
    pub ato: u16,
}

impl PacketMetric {
    /// The metric of a packet not (yet) received.
    pub const LOST: PacketMetric = PacketMetric {
        received: false,
        ecn: 0,
        ato: 0,
    };
}

/// One stream's run of packet metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportBlock {
    /// The stream's SSRC.
    pub media_ssrc: u32,
    /// Sequence number of the first metric.
    pub begin_seq: u16,
    /// Metrics for `begin_seq`, `begin_seq + 1`, ... (wrapping).
    pub metrics: Vec<PacketMetric>,
}

/// An RFC 8888 congestion control feedback message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcfbReport {
    /// SSRC of the feedback's sender.
    pub sender_ssrc: u32,
    /// One block per reported stream.
    pub blocks: Vec<ReportBlock>,
    /// When the report was made: the middle 32 bits of the receiver's NTP timestamp.
    pub report_timestamp: u32,
}

fn block_len(n: usize) -> usize {
    8 + 2 * n + if n % 2 == 1 { 2 } else { 0 }
}

impl CcfbReport {
    /// Encoded length in bytes.
    pub fn wire_len(&self) -> usize {
        8 + self
            .blocks
            .iter()
            .map(|b| block_len(b.metrics.len()))
            .sum::<usize>()
            + 4
    }

    /// The message's bytes. Panics if a block holds more than [`MAX_REPORTS`] metrics or a
    /// metric's fields exceed their widths (a programming error: the generator never builds
    /// such a report).
    pub fn encode(&self) -> Vec<u8> {
        let len = self.wire_len();
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&rtcp_header(FMT_CCFB, PT_RTPFB, len));
        out.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        for b in &self.blocks {
            assert!(
                b.metrics.len() <= MAX_REPORTS,
                "too many metrics in one block"
            );
            out.extend_from_slice(&b.media_ssrc.to_be_bytes());
            out.extend_from_slice(&b.begin_seq.to_be_bytes());
            out.extend_from_slice(&(b.metrics.len() as u16).to_be_bytes());
            for m in &b.metrics {
                assert!(m.ecn <= 3 && m.ato <= 0x1fff, "metric field out of range");
                let w = (u16::from(m.received) << 15) | (u16::from(m.ecn) << 13) | m.ato;
                out.extend_from_slice(&w.to_be_bytes());
            }
            if b.metrics.len() % 2 == 1 {
                out.extend_from_slice(&[0, 0]);
            }
        }
        out.extend_from_slice(&self.report_timestamp.to_be_bytes());
        debug_assert_eq!(out.len(), len);
        out
    }

    /// Parses a message. The encoding is canonical: a decoded message re-encodes to the same
    /// bytes (padding and the fields of unreceived packets must be zero).
    pub fn decode(b: &[u8]) -> Result<CcfbReport, DecodeError> {
        let len = check_rtcp_header(b, FMT_CCFB, PT_RTPFB)?;
        if len < 12 {
            return Err(DecodeError::Truncated);
        }
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let sender_ssrc = u32_at(4);
        let end = len - 4;
        let mut pos = 8;
        let mut blocks = Vec::new();
        while pos < end {
            if end - pos < 8 {
                return Err(DecodeError::Truncated);
            }
            let media_ssrc = u32_at(pos);
            let begin_seq = u16_at(pos + 4);
            let n = u16_at(pos + 6) as usize;
            if n > MAX_REPORTS {
                return Err(DecodeError::BadField("num_reports over 16384"));
            }
            if end - pos < block_len(n) {
                return Err(DecodeError::Truncated);
            }
            let mut metrics = Vec::with_capacity(n);
            for k in 0..n {
                let w = u16_at(pos + 8 + 2 * k);
                let m = PacketMetric {
                    received: w & 0x8000 != 0,
                    ecn: ((w >> 13) & 3) as u8,
                    ato: w & 0x1fff,
                };
                if !m.received && (m.ecn != 0 || m.ato != 0) {
                    return Err(DecodeError::BadField("ECN or ATO of an unreceived packet"));
                }
                metrics.push(m);
            }
            if n % 2 == 1 && u16_at(pos + 8 + 2 * n) != 0 {
                return Err(DecodeError::BadField("non-zero padding"));
            }
            pos += block_len(n);
            blocks.push(ReportBlock {
                media_ssrc,
                begin_seq,
                metrics,
            });
        }
        Ok(CcfbReport {
            sender_ssrc,
            blocks,
            report_timestamp: u32_at(end),
        })
    }
}

/// The middle 32 bits of an NTP timestamp for `t` (seconds in the high 16 bits, the fraction
/// in 1/65536 s in the low 16), wrapping every 65,536 s.
pub fn ntp_mid(t: Time) -> u32 {
    ((u128::from(t.as_nanos()) << 16) / 1_000_000_000) as u32
}

/// Nanoseconds in `units` of 1/65536 s.
pub fn ntp_units_to_nanos(units: i64) -> i64 {
    ((i128::from(units) * 1_000_000_000) / 65536) as i64
}

/// Builds RFC 8888 reports from arrivals of one media stream.
///
/// Each report covers the packets from the first one not yet covered up to the highest
/// sequence number received, every `interval` while packets arrive. A packet that arrives
/// after a report said it had not is not reported again (RFC 8888 §3.1 lets a receiver repeat
/// packets across reports; this one does not, so a lost report loses its packets' metrics).
#[derive(Clone, Debug)]
pub struct Rfc8888Receiver {
    /// SSRC this receiver reports as (fixed: one receiver per flow).
    pub sender_ssrc: u32,
    /// SSRC of the stream it reports on.
    pub media_ssrc: u32,
    arrivals: BTreeMap<u64, (Time, u8)>,
    pending: Pending,
}

impl Rfc8888Receiver {
    /// A receiver reporting at `config`'s interval.
    pub fn new(config: FeedbackConfig) -> Rfc8888Receiver {
        Rfc8888Receiver {
            sender_ssrc: 2,
            media_ssrc: 1,
            arrivals: BTreeMap::new(),
            pending: Pending::new(config),
        }
    }

    /// Packet `seq` of `size` bytes arrived at `now` with ECN codepoint `ecn`.
    pub fn on_packet(&mut self, now: Time, seq: u64, size: u32, ecn: u8) {
        if self.pending.accept(now, seq, size) {
            self.arrivals.insert(seq, (now, ecn & 3));
        }
    }

    /// When the next report falls due.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.pending.poll_timeout()
    }

    /// The report due at `now`, if any.
    pub fn poll_feedback(&mut self, now: Time) -> Option<CcfbReport> {
        let (begin, highest) = self.pending.due(now)?;
        let end = highest.min(begin + MAX_REPORTS as u64 - 1);
        let rts = ntp_mid(now);
        let mut metrics = Vec::with_capacity((end - begin + 1) as usize);
        for seq in begin..=end {
            metrics.push(match self.arrivals.remove(&seq) {
                None => PacketMetric::LOST,
                Some((at, ecn)) => {
                    // Offset in 1/1024 s, rounded to nearest; the report's own timestamp has
                    // 1/65536-s resolution, so the arrival is recovered to within ~0.5 ms.
                    let units = (now.since(at).as_nanos() * 1024 + 500_000_000) / 1_000_000_000;
                    PacketMetric {
                        received: true,
                        ecn,
                        ato: units.min(u128::from(ATO_OVERRANGE)) as u16,
                    }
                }
            });
        }
        self.pending.covered(now, end + 1);
        Some(CcfbReport {
            sender_ssrc: self.sender_ssrc,
            blocks: vec![ReportBlock {
                media_ssrc: self.media_ssrc,
                begin_seq: begin as u16,
                metrics,
            }],
            report_timestamp: rts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::time::Duration;

    fn cfg() -> FeedbackConfig {
        FeedbackConfig::fixed(Duration::from_millis(100))
    }

    #[test]
    fn size_follows_rfc8888_layout() {
        // 8 header + (8 + 2n + pad) + 4 timestamp.
        let r = |n| CcfbReport {
            sender_ssrc: 1,
            blocks: vec![ReportBlock {
                media_ssrc: 2,
                begin_seq: 0,
                metrics: vec![PacketMetric::LOST; n],
            }],
            report_timestamp: 0,
        };
        assert_eq!(r(0).wire_len(), 20);
        assert_eq!(r(1).wire_len(), 24);
        assert_eq!(r(2).wire_len(), 24);
        assert_eq!(r(10).wire_len(), 40);
        for n in [0, 1, 2, 3, 10, 101] {
            assert_eq!(r(n).encode().len(), r(n).wire_len());
        }
    }

    #[test]
    fn receiver_reports_holes_and_offsets() {
        let mut rx = Rfc8888Receiver::new(cfg());
        rx.on_packet(Time::from_millis(10), 100, 1000, 0);
        rx.on_packet(Time::from_millis(20), 102, 1000, 3);
        assert_eq!(rx.poll_timeout(), Some(Time::from_millis(110)));
        assert!(rx.poll_feedback(Time::from_millis(109)).is_none());
        let r = rx.poll_feedback(Time::from_millis(110)).unwrap();
        let b = &r.blocks[0];
        assert_eq!(b.begin_seq, 100);
        assert_eq!(b.metrics.len(), 3);
        assert!(b.metrics[0].received && !b.metrics[1].received);
        // 100 ms before the report = 102.4 units of 1/1024 s.
        assert_eq!(b.metrics[0].ato, 102);
        assert_eq!(b.metrics[2].ato, 92);
        assert_eq!(b.metrics[2].ecn, 3);
        assert_eq!(CcfbReport::decode(&r.encode()).unwrap(), r);
        // Nothing new: nothing due.
        assert_eq!(rx.poll_timeout(), None);
        // A late packet 101 is not reported again.
        rx.on_packet(Time::from_millis(120), 101, 1000, 0);
        assert_eq!(rx.poll_timeout(), None);
    }

    #[test]
    fn decoder_rejects_garbage() {
        assert_eq!(CcfbReport::decode(&[]), Err(DecodeError::Truncated));
        let mut ok = CcfbReport {
            sender_ssrc: 1,
            blocks: vec![],
            report_timestamp: 7,
        }
        .encode();
        assert!(CcfbReport::decode(&ok).is_ok());
        ok[1] = 206;
        assert_eq!(CcfbReport::decode(&ok), Err(DecodeError::NotThisMessage));
    }
}
