//! The transport framing around the core's wire format (`tfrc::wire`), version 3.
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
//! Bodies by kind (`docs/real-network.md` and `docs/security.md` have the full tables):
//!
//! | kind | dir | body |
//! |---|---|---|
//! | HELLO | S→R | [`Hello`], padded with zeros to [`MIN_HELLO_DATAGRAM`] bytes in all |
//! | RETRY | R→S | a retry token ([`tfrc_protect::TOKEN_LEN`] bytes): echo it in the next HELLO |
//! | HELLO_ACK | R→S | flags (mode, refused, same clock), 3 reserved, then the Noise answer or the RSA public key |
//! | KEY | S→R | RSA mode only: the RSA-OAEP-wrapped session key |
//! | KEY_ACK | R→S | RSA mode only: an empty sealed message (proves the receiver holds the key) |
//! | DATA | S→R | a `tfrc::wire` data packet; protected: its 36-byte header, then the sealed payload |
//! | FEEDBACK | R→S | a `tfrc::wire` feedback packet (40 bytes); protected: followed by an empty sealed message |
//! | FIN | S→R | packets sent (u64); protected: followed by an empty sealed message |
//! | FIN_ACK | R→S | the receiver's report as JSON; protected: sealed |
//!
//! When protected, the associated data of every sealed part is the frame header plus the
//! cleartext part before it, so neither can be altered; in Noise mode the HELLO's cleartext
//! fields are the handshake's prologue, so they cannot be altered either.
//!
//! Decoding never panics: any byte string yields a value or a [`FrameError`].

use core::fmt;

use tfrc::variants::VariantChoice;

/// First byte of every datagram (framing version 1).
pub const MAGIC: u8 = 0xC5;
/// Bytes of the frame header.
pub const HEADER_LEN: usize = 12;
/// Bytes of the fixed part of a HELLO body.
pub const HELLO_LEN: usize = 16;
/// HELLO body version.
pub const HELLO_VERSION: u8 = 3;
/// Every HELLO datagram is padded to at least this many bytes, and the receiver ignores shorter
/// ones, so that its answers before validation (a RETRY, 36 bytes) are 3% of what it received:
/// QUIC's rule for a client's first flight (RFC 9000 §14.1: at least 1200 bytes), which also
/// keeps every HELLO within the smallest MTU a QUIC path must have.
pub const MIN_HELLO_DATAGRAM: usize = 1200;
/// Bytes of a RETRY datagram.
pub const RETRY_DATAGRAM: usize = HEADER_LEN + tfrc_protect::TOKEN_LEN;
// A RETRY is never larger than the HELLO it answers: no amplification before validation.
const _: () = assert!(RETRY_DATAGRAM < MIN_HELLO_DATAGRAM);
/// Longest token a HELLO may echo.
pub const MAX_TOKEN: usize = 64;
/// Longest variant list a HELLO may carry (UTF-8 bytes).
pub const MAX_VARIANTS_TEXT: usize = 512;
/// Most variant choices a HELLO may carry (the catalogue has 15).
pub const MAX_VARIANTS: usize = 16;
/// Cleartext bytes of a HELLO_ACK before its payload.
pub const HELLO_ACK_LEN: usize = 4;
/// Longest HELLO_ACK payload (a 4096-bit RSA key's DER is 526 bytes).
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
    /// Receiver asks the sender to prove its address: echo the token.
    Retry = 9,
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
            9 => Kind::Retry,
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

/// How a session is protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// No protection: the session id is the only defence (against off-path attackers).
    Plain,
    /// Noise IK (the receiver's key pinned by the sender) and sealed packets.
    Noise,
    /// Noise NN (ephemeral keys only) and sealed packets: confidentiality and integrity
    /// against passive and off-path attackers and against on-path injection after the
    /// handshake, no authentication of either end. The default when no key is pinned.
    NoiseUnauthenticated,
    /// Seed 000's RSA-OAEP exchange (E6), unauthenticated: an active attacker on the path can
    /// substitute the key. Kept as the paper's variant.
    RsaUnauthenticated,
}

impl Mode {
    fn code(self) -> u8 {
        match self {
            Mode::Plain => 0,
            Mode::Noise => 1,
            Mode::RsaUnauthenticated => 2,
            Mode::NoiseUnauthenticated => 3,
        }
    }

    fn from_code(b: u8) -> Option<Mode> {
        match b {
            0 => Some(Mode::Plain),
            1 => Some(Mode::Noise),
            2 => Some(Mode::RsaUnauthenticated),
            3 => Some(Mode::NoiseUnauthenticated),
            _ => None,
        }
    }

    /// The name used in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Noise => "noise",
            Mode::RsaUnauthenticated => "rsa-unauthenticated",
            Mode::NoiseUnauthenticated => "noise-unauthenticated",
        }
    }

    /// A Noise handshake travels in the HELLO and the HELLO_ACK.
    pub fn is_noise(self) -> bool {
        matches!(self, Mode::Noise | Mode::NoiseUnauthenticated)
    }

    /// Packets are sealed.
    pub fn protected(self) -> bool {
        self != Mode::Plain
    }
}

/// The body of a HELLO (version 3):
///
/// ```text
/// 0 version | 1 mode | 2 profile | 3 flags | 4..8 segment size | 8..16 clock tag
/// | u16 V | V bytes of variants | u16 T | T bytes of token | u16 N | N bytes of Noise message
/// | zeros up to MIN_HELLO_DATAGRAM
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Hello {
    /// The protection the sender asks for.
    pub mode: Mode,
    /// The TFRC profile the sender runs; the receiver runs the same one.
    pub profile: tfrc::ProfileKind,
    /// Segment size s in bytes (largest payload).
    pub segment_size: u32,
    /// `tfrc_protect::clock_tag` of the sender's host and this session: equal tags mean one
    /// host, hence one monotonic clock, without disclosing a host identifier.
    pub clock_tag: u64,
    /// The variants (`tfrc::variants`) the sender applied to the profile, with every parameter
    /// it gave; the receiver applies the same list, so that receiver-side variants (the loss
    /// classifier, the loss-interval transforms) run at the receiver.
    pub variants: Vec<VariantChoice>,
    /// The retry token echoed from the receiver's RETRY (empty in the first HELLO).
    pub token: Vec<u8>,
    /// Noise mode, with a token: the initiator's first handshake message.
    pub noise: Vec<u8>,
    /// The sender asks for ECN (RFC 3168): it will send its data ECN-capable (ECT(0)) if the
    /// receiver agrees, and the receiver counts a Congestion Experienced mark as a loss event
    /// (RFC 5348 §5.1). Flag 0x01 of byte 3, inside the Noise prologue.
    pub ecn: bool,
}

/// HELLO flag (byte 3): the sender asks for ECN.
const HELLO_ECN: u8 = 0x01;

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

/// Encode a HELLO body, padded so that the datagram (with its header) is at least
/// [`MIN_HELLO_DATAGRAM`] bytes. `None` when a field does not fit (a variant list longer than
/// [`MAX_VARIANTS_TEXT`] bytes or [`MAX_VARIANTS`] choices, a token or Noise message too long).
pub fn encode_hello(h: &Hello) -> Option<Vec<u8>> {
    let t = variants_text(&h.variants);
    if t.len() > MAX_VARIANTS_TEXT
        || h.variants.len() > MAX_VARIANTS
        || h.token.len() > MAX_TOKEN
        || h.noise.len() > tfrc_protect::noise::MAX_MESSAGE
    {
        return None;
    }
    let mut b = vec![0u8; HELLO_LEN];
    b[0] = HELLO_VERSION;
    b[1] = h.mode.code();
    b[2] = profile_code(h.profile);
    b[3] = if h.ecn { HELLO_ECN } else { 0 };
    b[4..8].copy_from_slice(&h.segment_size.to_be_bytes());
    b[8..16].copy_from_slice(&h.clock_tag.to_be_bytes());
    for part in [t.as_bytes(), &h.token, &h.noise] {
        b.extend_from_slice(&(part.len() as u16).to_be_bytes());
        b.extend_from_slice(part);
    }
    let min_body = MIN_HELLO_DATAGRAM - HEADER_LEN;
    if b.len() < min_body {
        b.resize(min_body, 0);
    }
    Some(b)
}

/// One length-prefixed part of a HELLO at `at`: the bytes and where the next part starts.
fn part(b: &[u8], at: usize, max: usize) -> Result<(&[u8], usize), FrameError> {
    let Some(l) = b.get(at..at + 2) else {
        return Err(FrameError::Truncated);
    };
    let n = usize::from(u16::from_be_bytes([l[0], l[1]]));
    if n > max {
        return Err(FrameError::BadField);
    }
    let p = b.get(at + 2..at + 2 + n).ok_or(FrameError::Truncated)?;
    Ok((p, at + 2 + n))
}

/// Bytes of a HELLO body the Noise prologue covers: the fixed part and the variant list (the
/// token and the Noise message change between the HELLOs of one session).
pub fn hello_prologue_len(b: &[u8]) -> Result<usize, FrameError> {
    if b.len() < HELLO_LEN {
        return Err(FrameError::Truncated);
    }
    Ok(part(b, HELLO_LEN, MAX_VARIANTS_TEXT)?.1)
}

/// The Noise prologue of a HELLO datagram: a protocol label, the frame header and the body's
/// cleartext fields ([`hello_prologue_len`]), so that neither end accepts a session whose
/// HELLO was altered on the way.
pub fn hello_prologue(dgram: &[u8]) -> Result<Vec<u8>, FrameError> {
    let body = dgram.get(HEADER_LEN..).ok_or(FrameError::Truncated)?;
    let n = hello_prologue_len(body)?;
    let mut p = b"tfrc-udp hello v3 ".to_vec();
    p.extend_from_slice(&dgram[..HEADER_LEN + n]);
    Ok(p)
}

/// Decode a HELLO body. The variant list is checked for syntax only; whether the receiver can
/// apply it is the receiver's decision.
pub fn decode_hello(b: &[u8]) -> Result<Hello, FrameError> {
    if b.len() < HELLO_LEN {
        return Err(FrameError::Truncated);
    }
    if b[0] != HELLO_VERSION || b[3] & !HELLO_ECN != 0 {
        return Err(FrameError::Reserved);
    }
    let mode = Mode::from_code(b[1]).ok_or(FrameError::BadField)?;
    let profile = profile_from_code(b[2]).ok_or(FrameError::BadField)?;
    let (text, at) = part(b, HELLO_LEN, MAX_VARIANTS_TEXT)?;
    let (token, at) = part(b, at, MAX_TOKEN)?;
    let (noise, at) = part(b, at, tfrc_protect::noise::MAX_MESSAGE)?;
    if b[at..].iter().any(|&x| x != 0) {
        return Err(FrameError::BadField);
    }
    let variants = if text.is_empty() {
        Vec::new()
    } else {
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
    let mut s = [0u8; 4];
    s.copy_from_slice(&b[4..8]);
    let segment_size = u32::from_be_bytes(s);
    if segment_size == 0 || segment_size as usize > crate::MAX_SEGMENT {
        return Err(FrameError::BadField);
    }
    if !mode.is_noise() && !noise.is_empty() {
        return Err(FrameError::BadField);
    }
    Ok(Hello {
        mode,
        profile,
        segment_size,
        clock_tag: u64_at(b, 8),
        variants,
        token: token.to_vec(),
        noise: noise.to_vec(),
        ecn: b[3] & HELLO_ECN != 0,
    })
}

/// Decode a RETRY body: the token.
pub fn decode_retry(b: &[u8]) -> Result<&[u8], FrameError> {
    if b.len() != tfrc_protect::TOKEN_LEN {
        return Err(if b.len() < tfrc_protect::TOKEN_LEN {
            FrameError::Truncated
        } else {
            FrameError::BadField
        });
    }
    Ok(b)
}

const ACK_RSA: u8 = 0x01;
/// HELLO_ACK flag: the receiver cannot run the session the HELLO asks for (it cannot apply the
/// variants, or does not offer the mode); the sender gives up.
const ACK_REFUSED: u8 = 0x02;
const ACK_SAME_CLOCK: u8 = 0x04;
const ACK_NOISE: u8 = 0x08;
const ACK_NOISE_NN: u8 = 0x10;
/// HELLO_ACK flag: the receiver agreed to ECN (the HELLO asked for it and it reads the marks).
const ACK_ECN: u8 = 0x20;

/// The body of a HELLO_ACK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HelloAck<'a> {
    /// The mode the receiver runs (the one asked for).
    pub mode: Mode,
    /// The receiver cannot run the session (variants or mode); no session was opened.
    pub refused: bool,
    /// The receiver's clock tag equals the HELLO's: both ends read one clock.
    pub same_clock: bool,
    /// Noise: the responder's handshake answer; RSA: the PKCS#1 DER public key; else empty.
    pub payload: &'a [u8],
    /// The receiver agreed to ECN: the sender may send its data ECT(0).
    pub ecn: bool,
}

/// Encode a HELLO_ACK body.
pub fn encode_hello_ack(mode: Mode, same_clock: bool, ecn: bool, payload: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; HELLO_ACK_LEN];
    b[0] = match mode {
        Mode::Plain => 0,
        Mode::Noise => ACK_NOISE,
        Mode::RsaUnauthenticated => ACK_RSA,
        Mode::NoiseUnauthenticated => ACK_NOISE_NN,
    } | if same_clock { ACK_SAME_CLOCK } else { 0 }
        | if ecn { ACK_ECN } else { 0 };
    b.extend_from_slice(payload);
    b
}

/// Encode a refusing HELLO_ACK body (4 bytes).
pub fn encode_hello_refused() -> Vec<u8> {
    vec![ACK_REFUSED, 0, 0, 0]
}

/// Decode a HELLO_ACK body.
pub fn decode_hello_ack(b: &[u8]) -> Result<HelloAck<'_>, FrameError> {
    if b.len() < HELLO_ACK_LEN {
        return Err(FrameError::Truncated);
    }
    let f = b[0];
    if f & !(ACK_RSA | ACK_REFUSED | ACK_SAME_CLOCK | ACK_NOISE | ACK_NOISE_NN | ACK_ECN) != 0
        || b[1..4] != [0, 0, 0]
    {
        return Err(FrameError::Reserved);
    }
    let payload = &b[HELLO_ACK_LEN..];
    let refused = f & ACK_REFUSED != 0;
    let mode = match f & (ACK_NOISE | ACK_RSA | ACK_NOISE_NN) {
        0 => Mode::Plain,
        ACK_NOISE => Mode::Noise,
        ACK_RSA => Mode::RsaUnauthenticated,
        ACK_NOISE_NN => Mode::NoiseUnauthenticated,
        _ => return Err(FrameError::BadField),
    };
    if refused
        && (mode != Mode::Plain || !payload.is_empty() || f & (ACK_SAME_CLOCK | ACK_ECN) != 0)
    {
        return Err(FrameError::BadField);
    }
    if payload.len() > MAX_KEY_DER || (mode == Mode::Plain) != payload.is_empty() {
        return Err(FrameError::BadField);
    }
    Ok(HelloAck {
        mode,
        refused,
        same_clock: f & ACK_SAME_CLOCK != 0,
        payload,
        ecn: f & ACK_ECN != 0,
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

    fn hello(variants: Vec<VariantChoice>) -> Hello {
        Hello {
            mode: Mode::Noise,
            profile: tfrc::ProfileKind::Ns2,
            segment_size: 1200,
            clock_tag: 42,
            variants,
            token: vec![7; tfrc_protect::TOKEN_LEN],
            noise: vec![1; tfrc_protect::noise::FIRST_MESSAGE_LEN],
            ecn: true,
        }
    }

    #[test]
    fn hello_round_trip_padding_and_errors() {
        let h = Hello {
            token: Vec::new(),
            noise: Vec::new(),
            mode: Mode::Plain,
            ..hello(Vec::new())
        };
        let b = encode_hello(&h).unwrap();
        assert_eq!(b.len() + HEADER_LEN, MIN_HELLO_DATAGRAM, "padded");
        assert_eq!(decode_hello(&b), Ok(h.clone()));
        let full = hello(Vec::new());
        let fb = encode_hello(&full).unwrap();
        assert_eq!(decode_hello(&fb), Ok(full));
        assert_eq!(decode_hello(&b[..15]), Err(FrameError::Truncated));
        let mut bad = b.clone();
        bad[2] = 9;
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField));
        let mut bad = b.clone();
        bad[1] = 4;
        assert_eq!(
            decode_hello(&bad),
            Err(FrameError::BadField),
            "unknown mode"
        );
        let mut bad = b.clone();
        bad[4..8].copy_from_slice(&0u32.to_be_bytes());
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField));
        let mut bad = b.clone();
        *bad.last_mut().unwrap() = 1;
        assert_eq!(
            decode_hello(&bad),
            Err(FrameError::BadField),
            "padding not zero"
        );
        let mut bad = b.clone();
        bad[0] = 2;
        assert_eq!(decode_hello(&bad), Err(FrameError::Reserved), "old version");
        // A Noise message outside Noise mode is malformed.
        let mut p = hello(Vec::new());
        p.mode = Mode::Plain;
        assert_eq!(
            decode_hello(&encode_hello(&p).unwrap()),
            Err(FrameError::BadField)
        );
        // The prologue covers the cleartext fields but neither token nor Noise message.
        let mut d1 = header(Kind::Hello, 5).to_vec();
        d1.extend_from_slice(&b);
        let mut plain_tok = h.clone();
        plain_tok.token = vec![3; 24];
        let mut d3 = header(Kind::Hello, 5).to_vec();
        d3.extend_from_slice(&encode_hello(&plain_tok).unwrap());
        assert_eq!(hello_prologue(&d1), hello_prologue(&d3));
        let mut d4 = d1.clone();
        d4[HEADER_LEN + 5] ^= 1;
        assert_ne!(hello_prologue(&d1), hello_prologue(&d4));
    }

    #[test]
    fn hello_ack_and_retry() {
        for ecn in [false, true] {
            let ack = encode_hello_ack(Mode::Noise, true, ecn, b"reply");
            assert_eq!(
                decode_hello_ack(&ack),
                Ok(HelloAck {
                    mode: Mode::Noise,
                    refused: false,
                    same_clock: true,
                    payload: b"reply",
                    ecn,
                })
            );
        }
        let no = encode_hello_refused();
        assert_eq!(no.len(), HELLO_ACK_LEN);
        assert!(decode_hello_ack(&no).unwrap().refused);
        let mut bad = no.clone();
        bad.push(1);
        assert_eq!(decode_hello_ack(&bad), Err(FrameError::BadField));
        assert_eq!(
            decode_hello_ack(&encode_hello_ack(Mode::Noise, false, false, b"")),
            Err(FrameError::BadField),
            "protected without a payload"
        );
        assert_eq!(
            decode_hello_ack(&encode_hello_ack(Mode::Plain, false, false, b"k")),
            Err(FrameError::BadField)
        );
        assert_eq!(
            decode_hello_ack(&[0x09, 0, 0, 0, 1]),
            Err(FrameError::BadField)
        );
        assert_eq!(
            decode_hello_ack(&[0x40, 0, 0, 0]),
            Err(FrameError::Reserved)
        );
        assert!(decode_retry(&[0; tfrc_protect::TOKEN_LEN]).is_ok());
        assert_eq!(decode_retry(&[0; 3]), Err(FrameError::Truncated));
        assert_eq!(decode_retry(&[0; 30]), Err(FrameError::BadField));
    }

    /// The variant list round-trips exactly (names, parameters and the exact values);
    /// malformed lists are refused without a panic.
    #[test]
    fn hello_variants_round_trip() {
        let v: Vec<VariantChoice> = vec![
            "owd-classifier:offset_clock=1,a=0.9".parse().unwrap(),
            "ali-ci-replace:t=2.58".parse().unwrap(),
            VariantChoice::new("adaptive-rtt").with("q", 0.1 + 0.2),
        ];
        let h = hello(v);
        let b = encode_hello(&h).unwrap();
        assert_eq!(
            variants_text(&h.variants),
            "owd-classifier:offset_clock=1,a=0.9;ali-ci-replace:t=2.58;adaptive-rtt:q=0.30000000000000004"
        );
        assert_eq!(decode_hello(&b), Ok(h.clone()));
        // Cut anywhere: truncated or malformed, never a panic.
        for n in 0..b.len() {
            let _ = decode_hello(&b[..n]);
        }
        let mut bad = b[..HELLO_LEN].to_vec();
        bad.extend_from_slice(&3u16.to_be_bytes());
        bad.extend_from_slice(b"a:b");
        bad.extend_from_slice(&[0; 4]);
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField), "no '='");
        let mut bad = b[..HELLO_LEN].to_vec();
        bad.extend_from_slice(&2u16.to_be_bytes());
        bad.extend_from_slice(&[0xff, 0xfe]);
        bad.extend_from_slice(&[0; 4]);
        assert_eq!(decode_hello(&bad), Err(FrameError::BadField), "not UTF-8");
        let many = Hello {
            variants: vec![VariantChoice::new("veno"); MAX_VARIANTS + 1],
            ..h
        };
        assert_eq!(encode_hello(&many), None);
    }
}
