//! Byte encoding of TFRC data and feedback packets, version 2 (`docs/wire-format.md`).
//!
//! Both packets start with a version byte and a type byte; every field is fixed-size and
//! big-endian. The data packet carries the RFC 5348 §3.2.1 fields (sequence number, timestamp,
//! RTT estimate) plus the sender's t_RTO, segment size, feedback round, urgent flag and initial
//! TTL; the application payload follows the header. The feedback packet carries the §3.2.2
//! fields (t_recvdata, t_delay, X_recv, p) plus the highest sequence number, the hop count and
//! (new in version 2) the count of losses the receiver classified as link errors.
//!
//! Decoding never panics: any byte string yields a value or a [`WireError`].

use core::fmt;
use core::time::Duration;

use crate::packet::{DataHeader, Feedback};
use crate::Time;

/// The only version this module writes and reads. Version 2 added the feedback's link-error
/// count (bytes 40–43); version 1 packets are rejected.
pub const VERSION: u8 = 2;
/// Type byte of a data packet.
pub const TYPE_DATA: u8 = 1;
/// Type byte of a feedback packet.
pub const TYPE_FEEDBACK: u8 = 2;
/// Bytes of a data packet's header; the payload follows.
pub const DATA_HEADER_LEN: usize = 36;
/// Bytes of a feedback packet (it has no payload).
pub const FEEDBACK_LEN: usize = 44;

const DATA_FLAG_URGENT: u8 = 0x01;
const FEEDBACK_FLAG_HOPS: u8 = 0x01;

/// Why a byte string is not a valid TFRC packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the packet type needs.
    Truncated {
        /// Bytes needed.
        needed: usize,
        /// Bytes present.
        got: usize,
    },
    /// The version byte is not [`VERSION`].
    UnsupportedVersion(u8),
    /// The type byte is neither data nor feedback.
    UnknownType(u8),
    /// A different packet type than the caller asked for.
    WrongType {
        /// Type asked for.
        expected: u8,
        /// Type found.
        got: u8,
    },
    /// Flag bits that version 2 reserves are set.
    ReservedFlags(u8),
    /// A feedback packet is longer than [`FEEDBACK_LEN`].
    TrailingBytes {
        /// Bytes beyond the packet.
        extra: usize,
    },
    /// X_recv is negative, infinite or NaN.
    InvalidReceiveRate,
    /// p is outside [0, 1] or NaN.
    InvalidLossRate,
    /// A hop count is present while the "hops present" flag is clear.
    InconsistentHops,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated { needed, got } => {
                write!(f, "truncated packet: {got} bytes, {needed} needed")
            }
            WireError::UnsupportedVersion(v) => write!(f, "unsupported wire version {v}"),
            WireError::UnknownType(t) => write!(f, "unknown packet type {t}"),
            WireError::WrongType { expected, got } => {
                write!(f, "packet type {got}, expected {expected}")
            }
            WireError::ReservedFlags(b) => write!(f, "reserved flag bits set: {b:#04x}"),
            WireError::TrailingBytes { extra } => {
                write!(f, "{extra} bytes after the feedback packet")
            }
            WireError::InvalidReceiveRate => f.write_str("X_recv is not a finite rate >= 0"),
            WireError::InvalidLossRate => f.write_str("p is not in [0, 1]"),
            WireError::InconsistentHops => f.write_str("hop count without the hops flag"),
        }
    }
}

impl std::error::Error for WireError {}

/// A decoded packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decoded<'a> {
    /// A data packet and its payload.
    Data(DataHeader, &'a [u8]),
    /// A feedback packet.
    Feedback(Feedback),
}

/// Durations travel as whole microseconds (RFC 5348 §3.2.1: timestamps "typically" have
/// millisecond resolution), rounded to nearest and saturating at `u32::MAX` µs (71.6 min).
pub fn duration_to_micros(d: Duration) -> u32 {
    let us = d.as_nanos().saturating_add(500) / 1000;
    u32::try_from(us).unwrap_or(u32::MAX)
}

fn micros(us: u32) -> Duration {
    Duration::from_micros(u64::from(us))
}

/// Encode a data packet's header. The payload, if any, is appended by the caller.
pub fn encode_data(h: &DataHeader) -> [u8; DATA_HEADER_LEN] {
    let mut b = [0u8; DATA_HEADER_LEN];
    b[0] = VERSION;
    b[1] = TYPE_DATA;
    b[2] = if h.urgent { DATA_FLAG_URGENT } else { 0 };
    b[3] = h.initial_ttl;
    b[4..8].copy_from_slice(&h.round.to_be_bytes());
    b[8..16].copy_from_slice(&h.seq.to_be_bytes());
    b[16..24].copy_from_slice(&h.timestamp.as_nanos().to_be_bytes());
    b[24..28].copy_from_slice(&duration_to_micros(h.rtt).to_be_bytes());
    b[28..32].copy_from_slice(&duration_to_micros(h.t_rto).to_be_bytes());
    b[32..36].copy_from_slice(&h.segment_size.to_be_bytes());
    b
}

/// Encode a feedback packet. Values are written as they are; the decoder rejects a NaN or
/// out-of-range X_recv or p.
pub fn encode_feedback(fb: &Feedback) -> [u8; FEEDBACK_LEN] {
    let mut b = [0u8; FEEDBACK_LEN];
    b[0] = VERSION;
    b[1] = TYPE_FEEDBACK;
    if let Some(h) = fb.hops {
        b[2] = FEEDBACK_FLAG_HOPS;
        b[3] = h;
    }
    b[4..8].copy_from_slice(&duration_to_micros(fb.elapsed).to_be_bytes());
    b[8..16].copy_from_slice(&fb.timestamp_echo.as_nanos().to_be_bytes());
    b[16..24].copy_from_slice(&fb.highest_seq.to_be_bytes());
    b[24..32].copy_from_slice(&fb.x_recv.to_bits().to_be_bytes());
    b[32..40].copy_from_slice(&fb.p.to_bits().to_be_bytes());
    b[40..44].copy_from_slice(&fb.link_errors.to_be_bytes());
    b
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_be_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// Check version and type; returns the type byte.
fn preamble(b: &[u8]) -> Result<u8, WireError> {
    if b.len() < 2 {
        return Err(WireError::Truncated {
            needed: 2,
            got: b.len(),
        });
    }
    if b[0] != VERSION {
        return Err(WireError::UnsupportedVersion(b[0]));
    }
    match b[1] {
        TYPE_DATA | TYPE_FEEDBACK => Ok(b[1]),
        t => Err(WireError::UnknownType(t)),
    }
}

/// Decode any TFRC packet.
pub fn decode(b: &[u8]) -> Result<Decoded<'_>, WireError> {
    match preamble(b)? {
        TYPE_DATA => decode_data(b).map(|(h, p)| Decoded::Data(h, p)),
        _ => decode_feedback(b).map(Decoded::Feedback),
    }
}

/// Decode a data packet; returns its header and payload.
pub fn decode_data(b: &[u8]) -> Result<(DataHeader, &[u8]), WireError> {
    let t = preamble(b)?;
    if t != TYPE_DATA {
        return Err(WireError::WrongType {
            expected: TYPE_DATA,
            got: t,
        });
    }
    if b.len() < DATA_HEADER_LEN {
        return Err(WireError::Truncated {
            needed: DATA_HEADER_LEN,
            got: b.len(),
        });
    }
    if b[2] & !DATA_FLAG_URGENT != 0 {
        return Err(WireError::ReservedFlags(b[2]));
    }
    let h = DataHeader {
        urgent: b[2] & DATA_FLAG_URGENT != 0,
        initial_ttl: b[3],
        round: u32_at(b, 4),
        seq: u64_at(b, 8),
        timestamp: Time::from_nanos(u64_at(b, 16)),
        rtt: micros(u32_at(b, 24)),
        t_rto: micros(u32_at(b, 28)),
        segment_size: u32_at(b, 32),
    };
    Ok((h, &b[DATA_HEADER_LEN..]))
}

/// Decode a feedback packet.
pub fn decode_feedback(b: &[u8]) -> Result<Feedback, WireError> {
    let t = preamble(b)?;
    if t != TYPE_FEEDBACK {
        return Err(WireError::WrongType {
            expected: TYPE_FEEDBACK,
            got: t,
        });
    }
    if b.len() < FEEDBACK_LEN {
        return Err(WireError::Truncated {
            needed: FEEDBACK_LEN,
            got: b.len(),
        });
    }
    if b.len() > FEEDBACK_LEN {
        return Err(WireError::TrailingBytes {
            extra: b.len() - FEEDBACK_LEN,
        });
    }
    if b[2] & !FEEDBACK_FLAG_HOPS != 0 {
        return Err(WireError::ReservedFlags(b[2]));
    }
    let hops = if b[2] & FEEDBACK_FLAG_HOPS != 0 {
        Some(b[3])
    } else if b[3] != 0 {
        return Err(WireError::InconsistentHops);
    } else {
        None
    };
    let x_recv = f64::from_bits(u64_at(b, 24));
    if !(x_recv.is_finite() && x_recv >= 0.0) {
        return Err(WireError::InvalidReceiveRate);
    }
    let p = f64::from_bits(u64_at(b, 32));
    if !(0.0..=1.0).contains(&p) {
        return Err(WireError::InvalidLossRate);
    }
    Ok(Feedback {
        elapsed: micros(u32_at(b, 4)),
        timestamp_echo: Time::from_nanos(u64_at(b, 8)),
        highest_seq: u64_at(b, 16),
        x_recv,
        p,
        hops,
        link_errors: u32_at(b, 40),
        // Version 2 has no field for MulTFRC's j (`docs/wire-format.md`).
        lost_per_event: 1.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn micros_dur() -> impl Strategy<Value = Duration> {
        any::<u32>().prop_map(|us| Duration::from_micros(u64::from(us)))
    }

    prop_compose! {
        fn data_header()(seq in any::<u64>(), ts in any::<u64>(), rtt in micros_dur(),
                         t_rto in micros_dur(), s in any::<u32>(), round in any::<u32>(),
                         urgent in any::<bool>(), ttl in any::<u8>()) -> DataHeader {
            DataHeader { seq, timestamp: Time::from_nanos(ts), rtt, t_rto, segment_size: s,
                         round, urgent, initial_ttl: ttl }
        }
    }

    prop_compose! {
        fn feedback()(echo in any::<u64>(), elapsed in micros_dur(), x in 0.0..1e12f64,
                      p in 0.0..=1.0f64, seq in any::<u64>(), hops in proptest::option::of(any::<u8>()),
                      link_errors in any::<u32>())
                      -> Feedback {
            Feedback { timestamp_echo: Time::from_nanos(echo), elapsed, x_recv: x, p,
                       highest_seq: seq, hops, link_errors, lost_per_event: 1.0 }
        }
    }

    proptest! {
        /// RFC 5348 §3.2.1 fields survive encode → decode, with the payload after the header.
        #[test]
        fn rfc5348_s3_2_1_data_round_trip(h in data_header(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut bytes = encode_data(&h).to_vec();
            bytes.extend_from_slice(&payload);
            let (back, rest) = decode_data(&bytes).unwrap();
            prop_assert_eq!(back, h);
            prop_assert_eq!(rest, &payload[..]);
            prop_assert_eq!(decode(&bytes).unwrap(), Decoded::Data(h, &payload[..]));
        }

        /// RFC 5348 §3.2.2 fields survive encode → decode.
        #[test]
        fn rfc5348_s3_2_2_feedback_round_trip(fb in feedback()) {
            let bytes = encode_feedback(&fb);
            prop_assert_eq!(decode_feedback(&bytes).unwrap(), fb);
            prop_assert_eq!(decode(&bytes).unwrap(), Decoded::Feedback(fb));
        }

        /// Decoding arbitrary bytes returns a value or a typed error, never panics; a value
        /// re-encodes to the same bytes.
        #[test]
        fn decode_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..90)) {
            match decode(&bytes) {
                Ok(Decoded::Data(h, rest)) => {
                    let mut again = encode_data(&h).to_vec();
                    again.extend_from_slice(rest);
                    prop_assert_eq!(again, bytes);
                }
                Ok(Decoded::Feedback(fb)) => {
                    prop_assert_eq!(&encode_feedback(&fb)[..], &bytes[..]);
                }
                Err(_) => {}
            }
        }

        /// The same with a valid preamble, so the field checks are reached.
        #[test]
        fn decode_valid_preamble_never_panics(t in 1u8..=2, tail in proptest::collection::vec(any::<u8>(), 0..60)) {
            let mut bytes = vec![VERSION, t];
            bytes.extend_from_slice(&tail);
            let _ = decode(&bytes);
            let _ = decode_data(&bytes);
            let _ = decode_feedback(&bytes);
        }
    }

    #[test]
    fn typed_errors() {
        let fb = Feedback {
            timestamp_echo: Time::from_nanos(5),
            elapsed: Duration::from_micros(7),
            x_recv: 1000.0,
            p: 0.01,
            highest_seq: 9,
            hops: None,
            link_errors: 3,
            lost_per_event: 1.0,
        };
        let good = encode_feedback(&fb);
        assert_eq!(decode(&[]), Err(WireError::Truncated { needed: 2, got: 0 }));
        assert_eq!(decode(&[3, 1]), Err(WireError::UnsupportedVersion(3)));
        // Version 1 (no link-error count) is no longer read.
        assert_eq!(decode(&[1, 1]), Err(WireError::UnsupportedVersion(1)));
        assert_eq!(decode(&[2, 9]), Err(WireError::UnknownType(9)));
        assert_eq!(
            decode(&good[..43]),
            Err(WireError::Truncated {
                needed: 44,
                got: 43
            })
        );
        // The count sits big-endian in bytes 40..44.
        assert_eq!(&good[40..44], &[0, 0, 0, 3]);
        assert_eq!(decode_feedback(&good).unwrap().link_errors, 3);
        let mut long = good.to_vec();
        long.push(0);
        assert_eq!(decode(&long), Err(WireError::TrailingBytes { extra: 1 }));
        assert_eq!(
            decode_data(&good),
            Err(WireError::WrongType {
                expected: TYPE_DATA,
                got: TYPE_FEEDBACK
            })
        );
        let mut bad = good;
        bad[2] = 0x80;
        assert_eq!(decode(&bad), Err(WireError::ReservedFlags(0x80)));
        let mut bad = good;
        bad[3] = 4;
        assert_eq!(decode(&bad), Err(WireError::InconsistentHops));
        for p in [f64::NAN, -0.1, 1.5] {
            let b = encode_feedback(&Feedback { p, ..fb });
            assert_eq!(decode(&b), Err(WireError::InvalidLossRate), "{p}");
        }
        for x in [f64::NAN, -1.0, f64::INFINITY] {
            let b = encode_feedback(&Feedback { x_recv: x, ..fb });
            assert_eq!(decode(&b), Err(WireError::InvalidReceiveRate), "{x}");
        }
        let h = DataHeader {
            seq: 1,
            timestamp: Time::ZERO,
            rtt: Duration::ZERO,
            t_rto: Duration::ZERO,
            segment_size: 1000,
            round: 0,
            urgent: false,
            initial_ttl: 64,
        };
        let mut d = encode_data(&h);
        d[2] = 0x02;
        assert_eq!(decode(&d), Err(WireError::ReservedFlags(0x02)));
        assert_eq!(
            decode(&encode_data(&h)[..20]),
            Err(WireError::Truncated {
                needed: 36,
                got: 20
            })
        );
    }

    /// Durations are rounded to the nearest microsecond and saturate.
    #[test]
    fn duration_rounding() {
        assert_eq!(duration_to_micros(Duration::from_nanos(1499)), 1);
        assert_eq!(duration_to_micros(Duration::from_nanos(1500)), 2);
        assert_eq!(duration_to_micros(Duration::from_secs(1 << 40)), u32::MAX);
    }
}
