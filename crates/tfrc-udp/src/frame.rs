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
//! | HELLO | S→R | [`Hello`]: 16 bytes (version 1), or 16 + 2 + the variant list (version 2) |
//! | HELLO_ACK | R→S | flags (protected, refused), 3 reserved, host id (u64), then the RSA public key (PKCS#1 DER) when protected |
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

use tfrc::variants::VariantChoice;

/// First byte of every datagram (framing version 1).
pub const MAGIC: u8 = 0xC5;
/// Bytes of the frame header.
pub const HEADER_LEN: usize = 12;
/// Bytes of a HELLO body without variants (version 1), and of the fixed part of a version 2
/// HELLO.
pub const HELLO_LEN: usize = 16;
/// Longest variant list a HELLO may carry (UTF-8 bytes).
pub const MAX_VARIANTS_TEXT: usize = 512;
/// Most variant choices a HELLO may carry (the catalogue has 15).
pub const MAX_VARIANTS: usize = 16;
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
#[derive(Clone, Debug, PartialEq)]
pub struct Hello {
    /// The sender asks for protected mode (E6).
    pub protected: bool,
    /// The TFRC profile the sender runs; the receiver runs the same one.
    pub profile: tfrc::ProfileKind,
    /// Segment size s in bytes (largest payload).
    pub segment_size: u32,
    /// The sender's host id: equal ids mean one host, hence one monotonic clock.
    pub host_id: u64,
    /// The variants (`tfrc::variants`) the sender applied to the profile, with every parameter
    /// it gave; the receiver applies the same list, so that receiver-side variants (the loss
    /// classifier, the loss-interval transforms) run at the receiver. Empty: version 1 HELLO.
    pub variants: Vec<VariantChoice>,
}

const FLAG_PROTECTED: u8 = 0x01;
/// HELLO_ACK flag: the receiver cannot run the session the HELLO asks for (it cannot apply the
/// variants); the sender gives up.
const FLAG_REFUSED: u8 = 0x02;

/// The text form of a variant list in a HELLO: `name[:param=value,...]` choices joined by
/// `;`, values in Rust's shortest round-trip form, so that the receiver parses back exactly the
/// numbers the sender used.
pub fn variants_text(v: &[VariantChoice]) -> String {
    v.iter()
        .map(|c| {
            let mut t = c.name.trim().to_string();
            for (i, (k, x)) in c.params.iter().enumerate() {
                t.push(if i == 0 { ':' } else { ',' });
                t.push_str(&format!("{}={x}", k.trim()));
            }
            t
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// Encode a HELLO body: version 1 (16 bytes) without variants, so that a receiver built before
/// variants still accepts it; version 2 (the same 16 bytes, a u16 length and the
/// [`variants_text`]) with them. Lists longer than [`MAX_VARIANTS_TEXT`] bytes cannot be
/// encoded (`None`).
pub fn encode_hello(h: &Hello) -> Option<Vec<u8>> {
    let mut b = vec![0u8; HELLO_LEN];
    b[0] = if h.variants.is_empty() { 1 } else { 2 };
    b[1] = if h.protected { FLAG_PROTECTED } else { 0 };
    b[2] = profile_code(h.profile);
    b[4..8].copy_from_slice(&h.segment_size.to_be_bytes());
    b[8..16].copy_from_slice(&h.host_id.to_be_bytes());
    if !h.variants.is_empty() {
        let t = variants_text(&h.variants);
        if t.len() > MAX_VARIANTS_TEXT || h.variants.len() > MAX_VARIANTS {
            return None;
        }
        b.extend_from_slice(&(t.len() as u16).to_be_bytes());
        b.extend_from_slice(t.as_bytes());
    }
    Some(b)
}

/// Decode a HELLO body (version 1 or 2). The variant list is checked for syntax only; whether
/// the receiver can apply it is the receiver's decision.
pub fn decode_hello(b: &[u8]) -> Result<Hello, FrameError> {
    if b.len() < HELLO_LEN {
        return Err(FrameError::Truncated);
    }
    let version = b[0];
    if !(version == 1 || version == 2) || b[3] != 0 || b[1] & !FLAG_PROTECTED != 0 {
        return Err(FrameError::Reserved);
    }
    let variants = if version == 1 {
        if b.len() > HELLO_LEN {
            return Err(FrameError::BadField);
        }
        Vec::new()
    } else {
        if b.len() < HELLO_LEN + 2 {
            return Err(FrameError::Truncated);
        }
        let n = usize::from(u16::from_be_bytes([b[HELLO_LEN], b[HELLO_LEN + 1]]));
        let text = &b[HELLO_LEN + 2..];
        if text.len() < n {
            return Err(FrameError::Truncated);
        }
        if text.len() > n || n == 0 || n > MAX_VARIANTS_TEXT {
            return Err(FrameError::BadField);
        }
        let text = core::str::from_utf8(text).map_err(|_| FrameError::BadField)?;
        let v = text
            .split(';')
            .map(|c| c.parse::<VariantChoice>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| FrameError::BadField)?;
        if v.len() > MAX_VARIANTS {
            return Err(FrameError::BadField);
        }
        v
    };
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
        variants,
    })
}

/// The body of a HELLO_ACK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HelloAck<'a> {
    /// The receiver runs protected mode; `public_key` is its RSA key.
    pub protected: bool,
    /// The receiver cannot run the session (it cannot apply the HELLO's variants); no session
    /// was opened.
    pub refused: bool,
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

/// Encode a refusing HELLO_ACK body (12 bytes, never longer than the HELLO it answers).
pub fn encode_hello_refused(host_id: u64) -> Vec<u8> {
    let mut b = vec![0u8; HELLO_ACK_LEN];
    b[0] = FLAG_REFUSED;
    b[4..12].copy_from_slice(&host_id.to_be_bytes());
    b
}

/// Decode a HELLO_ACK body.
pub fn decode_hello_ack(b: &[u8]) -> Result<HelloAck<'_>, FrameError> {
    if b.len() < HELLO_ACK_LEN {
        return Err(FrameError::Truncated);
    }
    if b[0] & !(FLAG_PROTECTED | FLAG_REFUSED) != 0 || b[1..4] != [0, 0, 0] {
        return Err(FrameError::Reserved);
    }
    let protected = b[0] & FLAG_PROTECTED != 0;
    let refused = b[0] & FLAG_REFUSED != 0;
    let key = &b[HELLO_ACK_LEN..];
    if refused && (protected || !key.is_empty()) {
        return Err(FrameError::BadField);
    }
    if !refused && (key.len() > MAX_KEY_DER || protected == key.is_empty()) {
        return Err(FrameError::BadField);
    }
    Ok(HelloAck {
        protected,
        refused,
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
            variants: Vec::new(),
        };
        let b = encode_hello(&h).unwrap();
        assert_eq!(b.len(), HELLO_LEN);
        assert_eq!(b[0], 1, "no variants: version 1");
        assert_eq!(decode_hello(&b), Ok(h));
        assert_eq!(decode_hello(&b[..15]), Err(FrameError::Truncated));
        let mut bad = b.clone();
        bad[2] = 9;
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField));
        let mut bad = b.clone();
        bad[4..8].copy_from_slice(&0u32.to_be_bytes());
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField));
        let mut bad = b.clone();
        bad.push(0);
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField));
        let mut bad = b;
        bad[0] = 3;
        assert_eq!(decode_hello(&bad), Err(FrameError::Reserved));
        let ack = encode_hello_ack(true, 7, b"der");
        assert_eq!(
            decode_hello_ack(&ack),
            Ok(HelloAck {
                protected: true,
                refused: false,
                host_id: 7,
                public_key: b"der"
            })
        );
        let no = encode_hello_refused(9);
        assert_eq!(no.len(), HELLO_ACK_LEN);
        assert_eq!(
            decode_hello_ack(&no),
            Ok(HelloAck {
                protected: false,
                refused: true,
                host_id: 9,
                public_key: b""
            })
        );
        let mut bad = no.clone();
        bad.push(1);
        assert_eq!(decode_hello_ack(&bad), Err(FrameError::BadField));
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

    /// Version 2: the variant list round-trips exactly (names, parameters and the exact
    /// values); malformed lists are refused without a panic.
    #[test]
    fn hello_v2_variants_round_trip() {
        let v: Vec<VariantChoice> = vec![
            "owd-classifier:offset_clock=1,a=0.9".parse().unwrap(),
            "ali-ci-replace:t=2.58".parse().unwrap(),
            VariantChoice::new("adaptive-rtt").with("q", 0.1 + 0.2),
        ];
        let h = Hello {
            protected: false,
            profile: tfrc::ProfileKind::Rfc5348,
            segment_size: 1424,
            host_id: 1,
            variants: v,
        };
        let b = encode_hello(&h).unwrap();
        assert_eq!(b[0], 2);
        assert_eq!(
            variants_text(&h.variants),
            "owd-classifier:offset_clock=1,a=0.9;ali-ci-replace:t=2.58;adaptive-rtt:q=0.30000000000000004"
        );
        assert_eq!(decode_hello(&b), Ok(h.clone()));
        // Cut anywhere: truncated or malformed, never a panic.
        for n in 0..b.len() {
            assert!(decode_hello(&b[..n]).is_err(), "{n}");
        }
        let mut long = b.clone();
        long.push(b'x');
        assert_eq!(decode_hello(&long), Err(FrameError::BadField));
        let mut bad = b[..HELLO_LEN].to_vec();
        bad[0] = 2;
        bad.extend_from_slice(&3u16.to_be_bytes());
        bad.extend_from_slice(b"a:b");
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField), "no '='");
        let mut bad = b[..HELLO_LEN].to_vec();
        bad[0] = 2;
        bad.extend_from_slice(&0u16.to_be_bytes());
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField), "empty list");
        let mut bad = b[..HELLO_LEN].to_vec();
        bad[0] = 2;
        bad.extend_from_slice(&2u16.to_be_bytes());
        bad.extend_from_slice(&[0xff, 0xfe]);
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField), "not UTF-8");
        let many = Hello {
            variants: vec![VariantChoice::new("veno"); MAX_VARIANTS + 1],
            ..h
        };
        assert_eq!(encode_hello(&many), None);
    }
}
