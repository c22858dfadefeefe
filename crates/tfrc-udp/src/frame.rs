//! The transport framing around the core's wire format (`tfrc::wire`), version 1.
//!
//! Every datagram starts with a 12-byte frame header:
//!
//! ```text
//! 0      1      2      4                12
//! | 0xC5 | kind | 0x0000 | session id (u64, big-endian) | body ...
//! ```
//!
//! The session id is a random 64-bit number the sender draws: an off-path host that cannot see
//! the traffic cannot guess it, so spoofed datagrams are dropped before they reach the core.
//! Bodies by kind (see `docs/real-network.md` for the full table):
//!
//! | kind | dir | body |
//! |---|---|---|
//! | HELLO | S→R | [`Hello`] (16 bytes) |
//! | HELLO_ACK | R→S | flags, 3 reserved, host id (u64), then the RSA public key (PKCS#1 DER) when protected |
//! | KEY | S→R | the RSA-OAEP-wrapped session key |
//! | KEY_ACK | R→S | an empty sealed message (proves the receiver holds the key) |
//! | DATA | S→R | a `tfrc::wire` data packet; protected: its 36-byte header, then the sealed payload |
//! | FEEDBACK | R→S | a `tfrc::wire` feedback packet (40 bytes); protected: followed by an empty sealed message |
//! | FIN | S→R | packets sent (u64); protected: followed by an empty sealed message |
//! | FIN_ACK | R→S | the receiver's report as JSON; protected: sealed |
//!
//! When protected, the associated data of every sealed part is the frame header plus the
//! cleartext part before it, so neither can be altered.
//!
//! Decoding never panics: any byte string yields a value or a [`FrameError`].

use core::fmt;

/// First byte of every datagram (framing version 1).
pub const MAGIC: u8 = 0xC5;
/// Bytes of the frame header.
pub const HEADER_LEN: usize = 12;
/// Bytes of a HELLO body.
pub const HELLO_LEN: usize = 16;
/// Cleartext bytes before the host id ends in a HELLO_ACK.
pub const HELLO_ACK_LEN: usize = 12;
/// Longest public key a HELLO_ACK may carry (a 4096-bit key's DER is 526 bytes).
pub const MAX_KEY_DER: usize = 1024;
/// Longest wrapped key a KEY may carry (a 4096-bit modulus).
pub const MAX_WRAPPED: usize = 512;
/// Longest FIN_ACK report.
pub const MAX_REPORT: usize = 4096;

/// What a datagram is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Sender opens a session.
    Hello = 1,
    /// Receiver accepts it (with its public key when protected).
    HelloAck = 2,
    /// Sender sends the wrapped session key.
    Key = 3,
    /// Receiver confirms the key.
    KeyAck = 4,
    /// A TFRC data packet.
    Data = 5,
    /// A TFRC feedback packet.
    Feedback = 6,
    /// Sender is done.
    Fin = 7,
    /// Receiver's final report.
    FinAck = 8,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Hello,
            2 => Kind::HelloAck,
            3 => Kind::Key,
            4 => Kind::KeyAck,
            5 => Kind::Data,
            6 => Kind::Feedback,
            7 => Kind::Fin,
            8 => Kind::FinAck,
            _ => return None,
        })
    }
}

/// Why a datagram is not a valid frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Shorter than the header or the kind's fixed body.
    Truncated,
    /// The first byte is not [`MAGIC`].
    BadMagic,
    /// Unknown kind byte.
    UnknownKind(u8),
    /// Reserved bytes or flag bits are set.
    Reserved,
    /// A field is out of range (unknown profile, oversized key, …).
    BadField,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Truncated => f.write_str("truncated frame"),
            FrameError::BadMagic => f.write_str("not a tfrc-udp frame"),
            FrameError::UnknownKind(k) => write!(f, "unknown frame kind {k}"),
            FrameError::Reserved => f.write_str("reserved bits set"),
            FrameError::BadField => f.write_str("field out of range"),
        }
    }
}

impl std::error::Error for FrameError {}

/// A parsed frame header and its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// What the datagram is.
    pub kind: Kind,
    /// Session id.
    pub session: u64,
    /// The 12 header bytes (associated data of sealed parts).
    pub header: &'a [u8],
    /// Everything after the header.
    pub body: &'a [u8],
}

/// The frame header for `kind` and `session`.
pub fn header(kind: Kind, session: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0] = MAGIC;
    h[1] = kind as u8;
    h[4..12].copy_from_slice(&session.to_be_bytes());
    h
}

/// Split a datagram into header and body.
pub fn parse(b: &[u8]) -> Result<Frame<'_>, FrameError> {
    if b.len() < HEADER_LEN {
        return Err(FrameError::Truncated);
    }
    if b[0] != MAGIC {
        return Err(FrameError::BadMagic);
    }
    let kind = Kind::from_u8(b[1]).ok_or(FrameError::UnknownKind(b[1]))?;
    if b[2] != 0 || b[3] != 0 {
        return Err(FrameError::Reserved);
    }
    let (header, body) = b.split_at(HEADER_LEN);
    Ok(Frame {
        kind,
        session: u64_at(header, 4),
        header,
        body,
    })
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// Which `tfrc::Profile` preset both ends run.
pub fn profile_code(kind: tfrc::ProfileKind) -> u8 {
    match kind {
        tfrc::ProfileKind::Rfc5348 => 0,
        tfrc::ProfileKind::Ns2 => 1,
    }
}

fn profile_from_code(b: u8) -> Option<tfrc::ProfileKind> {
    match b {
        0 => Some(tfrc::ProfileKind::Rfc5348),
        1 => Some(tfrc::ProfileKind::Ns2),
        _ => None,
    }
}

/// The body of a HELLO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    /// The sender asks for protected mode (E6).
    pub protected: bool,
    /// The TFRC profile the sender runs; the receiver runs the same one.
    pub profile: tfrc::ProfileKind,
    /// Segment size s in bytes (largest payload).
    pub segment_size: u32,
    /// The sender's host id: equal ids mean one host, hence one monotonic clock.
    pub host_id: u64,
}

const FLAG_PROTECTED: u8 = 0x01;

/// Encode a HELLO body.
pub fn encode_hello(h: &Hello) -> [u8; HELLO_LEN] {
    let mut b = [0u8; HELLO_LEN];
    b[0] = 1;
    b[1] = if h.protected { FLAG_PROTECTED } else { 0 };
    b[2] = profile_code(h.profile);
    b[4..8].copy_from_slice(&h.segment_size.to_be_bytes());
    b[8..16].copy_from_slice(&h.host_id.to_be_bytes());
    b
}

/// Decode a HELLO body.
pub fn decode_hello(b: &[u8]) -> Result<Hello, FrameError> {
    if b.len() < HELLO_LEN {
        return Err(FrameError::Truncated);
    }
    if b.len() > HELLO_LEN {
        return Err(FrameError::BadField);
    }
    if b[0] != 1 || b[3] != 0 || b[1] & !FLAG_PROTECTED != 0 {
        return Err(FrameError::Reserved);
    }
    let profile = profile_from_code(b[2]).ok_or(FrameError::BadField)?;
    let mut s = [0u8; 4];
    s.copy_from_slice(&b[4..8]);
    let segment_size = u32::from_be_bytes(s);
    if segment_size == 0 || segment_size as usize > crate::MAX_SEGMENT {
        return Err(FrameError::BadField);
    }
    Ok(Hello {
        protected: b[1] & FLAG_PROTECTED != 0,
        profile,
        segment_size,
        host_id: u64_at(b, 8),
    })
}

/// The body of a HELLO_ACK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HelloAck<'a> {
    /// The receiver runs protected mode; `public_key` is its RSA key.
    pub protected: bool,
    /// The receiver's host id.
    pub host_id: u64,
    /// PKCS#1 DER public key (empty when not protected).
    pub public_key: &'a [u8],
}

/// Encode a HELLO_ACK body.
pub fn encode_hello_ack(protected: bool, host_id: u64, public_key: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; HELLO_ACK_LEN];
    b[0] = if protected { FLAG_PROTECTED } else { 0 };
    b[4..12].copy_from_slice(&host_id.to_be_bytes());
    b.extend_from_slice(public_key);
    b
}

/// Decode a HELLO_ACK body.
pub fn decode_hello_ack(b: &[u8]) -> Result<HelloAck<'_>, FrameError> {
    if b.len() < HELLO_ACK_LEN {
        return Err(FrameError::Truncated);
    }
    if b[0] & !FLAG_PROTECTED != 0 || b[1..4] != [0, 0, 0] {
        return Err(FrameError::Reserved);
    }
    let protected = b[0] & FLAG_PROTECTED != 0;
    let key = &b[HELLO_ACK_LEN..];
    if key.len() > MAX_KEY_DER || protected == key.is_empty() {
        return Err(FrameError::BadField);
    }
    Ok(HelloAck {
        protected,
        host_id: u64_at(b, 4),
        public_key: key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_errors() {
        let mut d = header(Kind::Data, 0xDEAD_BEEF_0102_0304).to_vec();
        d.extend_from_slice(b"body");
        let f = parse(&d).unwrap();
        assert_eq!(f.kind, Kind::Data);
        assert_eq!(f.session, 0xDEAD_BEEF_0102_0304);
        assert_eq!(f.body, b"body");
        assert_eq!(parse(&d[..11]), Err(FrameError::Truncated));
        let mut bad = d.clone();
        bad[0] = 0;
        assert_eq!(parse(&bad), Err(FrameError::BadMagic));
        let mut bad = d.clone();
        bad[1] = 99;
        assert_eq!(parse(&bad), Err(FrameError::UnknownKind(99)));
        let mut bad = d;
        bad[3] = 1;
        assert_eq!(parse(&bad), Err(FrameError::Reserved));
    }

    #[test]
    fn hello_round_trip_and_errors() {
        let h = Hello {
            protected: true,
            profile: tfrc::ProfileKind::Ns2,
            segment_size: 1200,
            host_id: 42,
        };
        let b = encode_hello(&h);
        assert_eq!(decode_hello(&b), Ok(h));
        assert_eq!(decode_hello(&b[..15]), Err(FrameError::Truncated));
        let mut bad = b;
        bad[2] = 9;
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField));
        let mut bad = b;
        bad[4..8].copy_from_slice(&0u32.to_be_bytes());
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField));
        let ack = encode_hello_ack(true, 7, b"der");
        assert_eq!(
            decode_hello_ack(&ack),
            Ok(HelloAck {
                protected: true,
                host_id: 7,
                public_key: b"der"
            })
        );
        // Protected without a key, or a key without protection, is malformed.
        assert_eq!(
            decode_hello_ack(&encode_hello_ack(true, 7, b"")),
            Err(FrameError::BadField)
        );
        assert_eq!(
            decode_hello_ack(&encode_hello_ack(false, 7, b"k")),
            Err(FrameError::BadField)
        );
    }
}
