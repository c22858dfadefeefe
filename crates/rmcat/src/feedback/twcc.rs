//! Transport-wide congestion control feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01
//! §3.1), the feedback of GCC's send-side estimator.
//!
//! Every media packet carries a 16-bit transport-wide sequence number in an RTP header
//! extension; the receiver answers with an RTPFB message (PT 205, FMT 15):
//!
//! | bytes | field |
//! |---|---|
//! | 4 | RTCP header: V=2, P, FMT=15, PT=205, length |
//! | 4 + 4 | SSRC of the feedback sender, SSRC of the media source |
//! | 2 + 2 | base sequence number, packet status count |
//! | 3 + 1 | reference time (signed, multiples of 64 ms), feedback packet count |
//! | 2 each | packet chunks: run length (0, symbol, 13-bit run) or status vector (1, size bit, 14 one-bit or 7 two-bit symbols) |
//! | 1 or 2 each | receive deltas in 250 µs: one unsigned byte for symbol 01 (small), two signed bytes for 10 (large or negative) |
//! | 0–3 | zero padding to 32 bits |
//!
//! Symbols: 00 not received, 01 received with a small delta, 10 received with a large or
//! negative delta, 11 reserved. The first received packet's delta is relative to the reference
//! time; each later one to the previous received packet.

use super::{check_rtcp_header, rtcp_header, DecodeError, FeedbackConfig, Pending};
use crate::time::Time;
use std::collections::BTreeMap;

/// The feedback message type of transport-wide feedback.
pub const FMT_TWCC: u8 = 15;
/// Receive-delta resolution: 250 µs.
pub const DELTA_TICK_NS: i64 = 250_000;
/// Reference-time resolution: 64 ms.
pub const REFERENCE_TICK_NS: i64 = 64_000_000;
/// Bytes the transport-wide sequence number adds to every media packet: a one-byte-header
/// RTP extension block (4 bytes) holding the 3-byte element, padded to 4 (RFC 8285).
pub const PER_PACKET_EXTENSION_BYTES: u32 = 8;

/// One packet's status in a transport-wide feedback message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TwccStatus {
    /// Not received (symbol 00).
    NotReceived,
    /// Received; arrival minus the previous received packet's arrival (or the reference time
    /// for the first), in 250 µs ticks. 0..=255 is sent as a small delta (one byte), anything
    /// else as a large one (two bytes, signed).
    Received(i16),
}

impl TwccStatus {
    fn symbol(self) -> u8 {
        match self {
            TwccStatus::NotReceived => 0,
            TwccStatus::Received(d) if (0..=255).contains(&d) => 1,
            TwccStatus::Received(_) => 2,
        }
    }
}

/// A transport-wide feedback message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TwccFeedback {
    /// SSRC of the feedback's sender.
    pub sender_ssrc: u32,
    /// SSRC of the media source.
    pub media_ssrc: u32,
    /// Transport-wide sequence number of the first status.
    pub base_seq: u16,
    /// Reference time in 64-ms units (24-bit signed on the wire).
    pub reference_time: i32,
    /// Counter of feedback messages sent, modulo 256.
    pub fb_pkt_count: u8,
    /// Statuses of `base_seq`, `base_seq + 1`, ... (at most 65,535).
    pub packets: Vec<TwccStatus>,
}

/// The packet chunks carrying `symbols`: a run-length chunk for a run that fills the rest, 14
/// or more, or 7 or more that a one-bit vector could not hold; otherwise the densest vector.
fn chunks(symbols: &[u8]) -> Vec<u16> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < symbols.len() {
        let s = symbols[i];
        let run = symbols[i..]
            .iter()
            .take_while(|&&x| x == s)
            .count()
            .min(0x1fff);
        let rest = &symbols[i..];
        let one_bit_fits = rest.iter().take(14).all(|&x| x <= 1);
        if run == rest.len() || run >= 14 || (run >= 7 && !one_bit_fits) {
            // Run-length chunk: 0, symbol (2 bits), run length (13 bits).
            out.push((u16::from(s) << 13) | run as u16);
            i += run;
        } else if one_bit_fits {
            // One-bit status vector: 1, 0, 14 symbols (0 not received, 1 small delta).
            let mut w = 0x8000u16;
            for (k, &x) in rest.iter().take(14).enumerate() {
                w |= u16::from(x) << (13 - k);
            }
            out.push(w);
            i += rest.len().min(14);
        } else {
            // Two-bit status vector: 1, 1, 7 symbols.
            let mut w = 0xc000u16;
            for (k, &x) in rest.iter().take(7).enumerate() {
                w |= u16::from(x) << (12 - 2 * k);
            }
            out.push(w);
            i += rest.len().min(7);
        }
    }
    out
}

impl TwccFeedback {
    fn symbols(&self) -> Vec<u8> {
        self.packets.iter().map(|p| p.symbol()).collect()
    }

    fn deltas_len(&self) -> usize {
        self.packets
            .iter()
            .map(|p| match p.symbol() {
                1 => 1,
                2 => 2,
                _ => 0,
            })
            .sum()
    }

    /// Encoded length in bytes.
    pub fn wire_len(&self) -> usize {
        let raw = 20 + 2 * chunks(&self.symbols()).len() + self.deltas_len();
        raw.div_ceil(4) * 4
    }

    /// The message's bytes (chunks chosen greedily: runs for repeated symbols, otherwise the
    /// densest status vector that fits). Panics on more than 65,535 statuses or a reference
    /// time outside 24 bits (a programming error: the generator never builds one).
    pub fn encode(&self) -> Vec<u8> {
        assert!(self.packets.len() <= 0xffff, "too many statuses");
        assert!(
            (-(1 << 23)..(1 << 23)).contains(&self.reference_time),
            "reference time out of 24 bits"
        );
        let len = self.wire_len();
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&rtcp_header(FMT_TWCC, super::rfc8888::PT_RTPFB, len));
        out.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        out.extend_from_slice(&self.media_ssrc.to_be_bytes());
        out.extend_from_slice(&self.base_seq.to_be_bytes());
        out.extend_from_slice(&(self.packets.len() as u16).to_be_bytes());
        let rt = (self.reference_time as u32) & 0x00ff_ffff;
        out.extend_from_slice(&rt.to_be_bytes()[1..]);
        out.push(self.fb_pkt_count);
        for c in chunks(&self.symbols()) {
            out.extend_from_slice(&c.to_be_bytes());
        }
        for p in &self.packets {
            if let TwccStatus::Received(d) = *p {
                if (0..=255).contains(&d) {
                    out.push(d as u8);
                } else {
                    out.extend_from_slice(&d.to_be_bytes());
                }
            }
        }
        out.resize(len, 0);
        out
    }

    /// Parses a message. Several encodings can carry the same statuses (the chunk choice is
    /// the sender's), so a decoded message re-encodes to the same statuses, not always to the
    /// same bytes.
    pub fn decode(b: &[u8]) -> Result<TwccFeedback, DecodeError> {
        let len = check_rtcp_header(b, FMT_TWCC, super::rfc8888::PT_RTPFB)?;
        if len < 20 {
            return Err(DecodeError::Truncated);
        }
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let count = u16_at(14) as usize;
        let rt_raw = (u32::from(b[16]) << 16) | (u32::from(b[17]) << 8) | u32::from(b[18]);
        let reference_time = ((rt_raw << 8) as i32) >> 8; // sign-extend 24 bits
        let mut symbols = Vec::with_capacity(count);
        let mut pos = 20;
        while symbols.len() < count {
            if pos + 2 > len {
                return Err(DecodeError::Truncated);
            }
            let c = u16_at(pos);
            pos += 2;
            let left = count - symbols.len();
            if c & 0x8000 == 0 {
                let s = ((c >> 13) & 3) as u8;
                let run = (c & 0x1fff) as usize;
                if run == 0 {
                    return Err(DecodeError::BadField("empty run-length chunk"));
                }
                if run > left {
                    return Err(DecodeError::BadField("run past the status count"));
                }
                symbols.extend(std::iter::repeat_n(s, run));
            } else if c & 0x4000 == 0 {
                for k in 0..14.min(left) {
                    symbols.push(((c >> (13 - k)) & 1) as u8);
                }
            } else {
                for k in 0..7.min(left) {
                    symbols.push(((c >> (12 - 2 * k)) & 3) as u8);
                }
            }
        }
        let mut packets = Vec::with_capacity(count);
        for s in symbols {
            packets.push(match s {
                0 => TwccStatus::NotReceived,
                1 => {
                    if pos + 1 > len {
                        return Err(DecodeError::Truncated);
                    }
                    pos += 1;
                    TwccStatus::Received(i16::from(b[pos - 1]))
                }
                2 => {
                    if pos + 2 > len {
                        return Err(DecodeError::Truncated);
                    }
                    pos += 2;
                    TwccStatus::Received(u16_at(pos - 2) as i16)
                }
                _ => return Err(DecodeError::BadField("reserved status symbol 11")),
            });
        }
        if len - pos >= 4 {
            return Err(DecodeError::BadLength);
        }
        Ok(TwccFeedback {
            sender_ssrc: u32_at(4),
            media_ssrc: u32_at(8),
            base_seq: u16_at(12),
            reference_time,
            fb_pkt_count: b[19],
            packets,
        })
    }

    /// Arrival times of the received packets, in the receiver's clock (nanoseconds from its
    /// epoch): `(index into packets, arrival)`.
    pub fn arrivals(&self) -> Vec<(usize, i64)> {
        let mut t = i64::from(self.reference_time) * REFERENCE_TICK_NS;
        let mut out = Vec::new();
        for (i, p) in self.packets.iter().enumerate() {
            if let TwccStatus::Received(d) = *p {
                t += i64::from(d) * DELTA_TICK_NS;
                out.push((i, t));
            }
        }
        out
    }
}

/// Builds transport-wide feedback from arrivals.
///
/// Every `interval` while packets arrive, one message covers the packets from the first not
/// yet covered to the highest received. Arrival times are kept in 250-µs ticks from the
/// reference time so rounding does not accumulate across deltas. A gap too long for a two-byte
/// delta (over 8.19 s) ends the message; the next message starts a new reference time.
#[derive(Clone, Debug)]
pub struct TwccReceiver {
    /// SSRC this receiver reports as.
    pub sender_ssrc: u32,
    /// SSRC of the media source.
    pub media_ssrc: u32,
    arrivals: BTreeMap<u64, Time>,
    pending: Pending,
    fb_count: u8,
}

impl TwccReceiver {
    /// A receiver sending feedback at `config`'s interval.
    pub fn new(config: FeedbackConfig) -> TwccReceiver {
        TwccReceiver {
            sender_ssrc: 2,
            media_ssrc: 1,
            arrivals: BTreeMap::new(),
            pending: Pending::new(config),
            fb_count: 0,
        }
    }

    /// Packet with transport-wide sequence number `seq` and `size` bytes arrived at `now`.
    pub fn on_packet(&mut self, now: Time, seq: u64, size: u32) {
        if self.pending.accept(now, seq, size) {
            self.arrivals.insert(seq, now);
        }
    }

    /// When the next message falls due.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.pending.poll_timeout()
    }

    /// The message due at `now`, if any.
    pub fn poll_feedback(&mut self, now: Time) -> Option<TwccFeedback> {
        let (begin, highest) = self.pending.due(now)?;
        let first_arrival = self.arrivals.range(begin..).next().map(|(_, &t)| t)?;
        let reference_time =
            (first_arrival.as_nanos() as i64 / REFERENCE_TICK_NS) as i32 & 0x7f_ffff; // stays in 24 signed bits: wraps after ~6 days
        let mut prev_ticks = i64::from(reference_time) * (REFERENCE_TICK_NS / DELTA_TICK_NS);
        let mut packets = Vec::new();
        let mut seq = begin;
        while seq <= highest && packets.len() < 0xffff {
            match self.arrivals.get(&seq) {
                None => packets.push(TwccStatus::NotReceived),
                Some(&at) => {
                    let ticks = at.as_nanos() as i64 / DELTA_TICK_NS;
                    let d = ticks - prev_ticks;
                    let Ok(d16) = i16::try_from(d) else { break };
                    packets.push(TwccStatus::Received(d16));
                    prev_ticks = ticks;
                    self.arrivals.remove(&seq);
                }
            }
            seq += 1;
        }
        self.pending.covered(now, seq);
        let fb = TwccFeedback {
            sender_ssrc: self.sender_ssrc,
            media_ssrc: self.media_ssrc,
            base_seq: begin as u16,
            reference_time,
            fb_pkt_count: self.fb_count,
            packets,
        };
        self.fb_count = self.fb_count.wrapping_add(1);
        Some(fb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::time::Duration;

    fn fb(packets: Vec<TwccStatus>) -> TwccFeedback {
        TwccFeedback {
            sender_ssrc: 1,
            media_ssrc: 2,
            base_seq: 65530,
            reference_time: -3,
            fb_pkt_count: 9,
            packets,
        }
    }

    #[test]
    fn sizes_and_round_trip() {
        use TwccStatus::*;
        // 20 bytes of header, nothing else.
        assert_eq!(fb(vec![]).wire_len(), 20);
        // 20 received small: one run chunk (2) + 20 deltas = 42 -> 44.
        let f = fb(vec![Received(4); 20]);
        assert_eq!(f.wire_len(), 44);
        assert_eq!(f.encode().len(), 44);
        assert_eq!(TwccFeedback::decode(&f.encode()).unwrap(), f);
        // Mixed: small, lost, large, negative.
        let f = fb(vec![
            Received(1),
            NotReceived,
            Received(300),
            Received(-2),
            Received(0),
        ]);
        let bytes = f.encode();
        assert_eq!(bytes.len(), f.wire_len());
        // one two-bit vector chunk (2) + deltas 1 + 2 + 2 + 1 = 26 -> 28.
        assert_eq!(bytes.len(), 28);
        assert_eq!(TwccFeedback::decode(&bytes).unwrap(), f);
    }

    #[test]
    fn receiver_rebuilds_arrivals() {
        let mut rx = TwccReceiver::new(FeedbackConfig::fixed(Duration::from_millis(100)));
        rx.on_packet(Time::from_millis(1000), 7, 1000);
        rx.on_packet(Time::from_nanos(1_010_300_000), 9, 1000);
        let f = rx.poll_feedback(Time::from_millis(1100)).unwrap();
        assert_eq!(f.packets.len(), 3);
        let arr = f.arrivals();
        assert_eq!(arr[0], (0, 1_000_000_000));
        // 1010.3 ms truncated to the 250-µs grid: 1010.25 ms.
        assert_eq!(arr[1], (2, 1_010_250_000));
        assert_eq!(TwccFeedback::decode(&f.encode()).unwrap(), f);
    }
}
