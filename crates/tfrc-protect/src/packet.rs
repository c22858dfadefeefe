//! Per-packet protection: ChaCha20-Poly1305 sealing with an anti-replay window.
//!
//! Sealed form of one packet, appended after the caller's cleartext header:
//!
//! ```text
//! seq (8 bytes, big-endian) | ciphertext (payload length) | Poly1305 tag (16 bytes)
//! ```
//!
//! The 96-bit nonce is `channel (4 bytes) | seq (8 bytes)`: unique for every packet of a
//! session and direction, so a key never sees a nonce twice; tampering with `seq` changes
//! the nonce and fails authentication. The associated data is the packet's cleartext header
//! (the caller passes the bytes), so header fields such as the TTL-related ones the routers
//! need to read stay visible but cannot be altered undetected.
//!
//! The opener keeps a [`ReplayWindow`] of the last [`REPLAY_WINDOW`] sequence numbers (a
//! bitmap, as IPsec's ESP, RFC 4303 §3.4.3) and only marks a number as seen once the packet
//! has authenticated, so forged packets cannot poison the window.

use std::fmt;

use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce, Tag};
use serde::Serialize;

use crate::exchange::SessionKey;

/// Bytes a sealed packet adds to its payload: the sequence number and the tag.
pub const SEALED_OVERHEAD: usize = SEQ_LEN + TAG_LEN;
/// Sequence numbers the opener remembers behind the highest one seen.
pub const REPLAY_WINDOW: u64 = 1024;

const SEQ_LEN: usize = 8;
const TAG_LEN: usize = 16;
const WORDS: usize = (REPLAY_WINDOW / 64) as usize;

/// Which direction a key protects. Each direction has its own nonce space, so one session
/// key can protect data and feedback without ever reusing a nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// Sender to receiver (data packets).
    Data,
    /// Receiver to sender (feedback packets).
    Feedback,
}

impl Channel {
    fn prefix(self) -> [u8; 4] {
        match self {
            Channel::Data => *b"DATA",
            Channel::Feedback => *b"FDBK",
        }
    }

    fn nonce(self, seq: u64) -> Nonce {
        let mut n = [0u8; 12];
        n[..4].copy_from_slice(&self.prefix());
        n[4..].copy_from_slice(&seq.to_be_bytes());
        Nonce::from(n)
    }
}

/// Why a packet could not be sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SealError {
    /// All 2⁶⁴ sequence numbers of this key and channel are used; a new session key is needed.
    SequenceExhausted,
    /// The AEAD refused the payload (longer than ChaCha20-Poly1305's 256 GiB limit).
    PayloadTooLong,
}

impl fmt::Display for SealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SequenceExhausted => write!(f, "sequence numbers exhausted; rekey"),
            Self::PayloadTooLong => write!(f, "payload too long for the AEAD"),
        }
    }
}

impl std::error::Error for SealError {}

/// Why a packet was dropped by the opener. Each cause is counted in [`OpenStats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpenError {
    /// Shorter than [`SEALED_OVERHEAD`]: no room for a sequence number and a tag. (A packet
    /// cut but still that long fails authentication and is reported as `Tampered`.)
    Truncated,
    /// Authentication failed: header, sequence number, ciphertext or tag altered, the wrong
    /// key, or a cut packet.
    Tampered,
    /// The sequence number was already accepted within the window.
    Replayed,
    /// The sequence number is [`REPLAY_WINDOW`] or more behind the highest accepted one, so
    /// the window can no longer tell whether it is a replay.
    TooOld,
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated => write!(f, "packet too short to be sealed"),
            Self::Tampered => write!(f, "packet failed authentication"),
            Self::Replayed => write!(f, "packet sequence number already seen"),
            Self::TooOld => write!(f, "packet sequence number behind the replay window"),
        }
    }
}

impl std::error::Error for OpenError {}

/// Sliding anti-replay window over 64-bit sequence numbers: the highest accepted number and
/// a bitmap of the [`REPLAY_WINDOW`] numbers up to it.
#[derive(Debug, Clone, Default)]
pub struct ReplayWindow {
    highest: Option<u64>,
    // Ring bitmap: bit (s mod REPLAY_WINDOW) stands for sequence number s.
    bits: [u64; WORDS],
}

impl ReplayWindow {
    /// An empty window: any sequence number is acceptable.
    pub fn new() -> Self {
        Self::default()
    }

    /// The highest sequence number accepted so far.
    pub fn highest(&self) -> Option<u64> {
        self.highest
    }

    /// Would `seq` be accepted? Does not change the window.
    pub fn check(&self, seq: u64) -> Result<(), OpenError> {
        let Some(h) = self.highest else {
            return Ok(());
        };
        if seq > h {
            return Ok(());
        }
        if h - seq >= REPLAY_WINDOW {
            return Err(OpenError::TooOld);
        }
        if self.get(seq) {
            Err(OpenError::Replayed)
        } else {
            Ok(())
        }
    }

    /// Record `seq` as accepted (call only after the packet authenticated). Fails, leaving the
    /// window unchanged, if [`check`](Self::check) would.
    pub fn mark(&mut self, seq: u64) -> Result<(), OpenError> {
        self.check(seq)?;
        match self.highest {
            Some(h) if seq <= h => {}
            Some(h) if seq - h < REPLAY_WINDOW => {
                // Numbers h+1 ..= seq enter the window; forget what their slots held.
                let mut s = h;
                while s < seq {
                    s += 1;
                    self.clear(s);
                }
                self.highest = Some(seq);
            }
            _ => {
                self.bits = [0; WORDS];
                self.highest = Some(seq);
            }
        }
        self.set(seq);
        Ok(())
    }

    fn slot(seq: u64) -> (usize, u64) {
        let i = seq % REPLAY_WINDOW;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    fn get(&self, seq: u64) -> bool {
        let (w, m) = Self::slot(seq);
        self.bits[w] & m != 0
    }

    fn set(&mut self, seq: u64) {
        let (w, m) = Self::slot(seq);
        self.bits[w] |= m;
    }

    fn clear(&mut self, seq: u64) {
        let (w, m) = Self::slot(seq);
        self.bits[w] &= !m;
    }
}

/// Seals outgoing packets of one channel under a session key, numbering them 0, 1, 2, …
pub struct Sealer {
    cipher: ChaCha20Poly1305,
    channel: Channel,
    next_seq: Option<u64>,
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("channel", &self.channel)
            .field("next_seq", &self.next_seq)
            .finish_non_exhaustive()
    }
}

impl Sealer {
    /// A sealer whose first packet has sequence number 0.
    pub fn new(key: &SessionKey, channel: Channel) -> Self {
        Self {
            cipher: ChaCha20Poly1305::new(Key::from_slice(key.as_bytes())),
            channel,
            next_seq: Some(0),
        }
    }

    /// The sequence number the next packet will carry; `None` once all are used.
    pub fn next_seq(&self) -> Option<u64> {
        self.next_seq
    }

    /// Seal `payload`, authenticating `header` (the packet's cleartext header bytes) as
    /// associated data. Returns `seq | ciphertext | tag`.
    pub fn seal(&mut self, header: &[u8], payload: &[u8]) -> Result<Vec<u8>, SealError> {
        let mut out = Vec::with_capacity(payload.len() + SEALED_OVERHEAD);
        self.seal_into(header, payload, &mut out)?;
        Ok(out)
    }

    /// As [`seal`](Self::seal), appending to `out` (so a caller can reuse one buffer that
    /// already holds the header). Returns the sequence number used. On error `out` is
    /// unchanged and the sequence number is not consumed.
    pub fn seal_into(
        &mut self,
        header: &[u8],
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<u64, SealError> {
        let seq = self.next_seq.ok_or(SealError::SequenceExhausted)?;
        let start = out.len();
        out.extend_from_slice(&seq.to_be_bytes());
        out.extend_from_slice(payload);
        let body = &mut out[start + SEQ_LEN..];
        match self
            .cipher
            .encrypt_in_place_detached(&self.channel.nonce(seq), header, body)
        {
            Ok(tag) => {
                out.extend_from_slice(&tag);
                self.next_seq = seq.checked_add(1);
                Ok(seq)
            }
            Err(_) => {
                out.truncate(start);
                Err(SealError::PayloadTooLong)
            }
        }
    }
}

/// Counts of what an [`Opener`] accepted and dropped, by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct OpenStats {
    /// Packets that authenticated and were new.
    pub opened: u64,
    /// Dropped: shorter than [`SEALED_OVERHEAD`].
    pub truncated: u64,
    /// Dropped: failed authentication.
    pub tampered: u64,
    /// Dropped: sequence number already accepted.
    pub replayed: u64,
    /// Dropped: sequence number behind the replay window.
    pub too_old: u64,
}

impl OpenStats {
    /// All dropped packets.
    pub fn dropped(&self) -> u64 {
        self.truncated + self.tampered + self.replayed + self.too_old
    }

    fn count(&mut self, e: OpenError) {
        let c = match e {
            OpenError::Truncated => &mut self.truncated,
            OpenError::Tampered => &mut self.tampered,
            OpenError::Replayed => &mut self.replayed,
            OpenError::TooOld => &mut self.too_old,
        };
        *c = c.saturating_add(1);
    }
}

/// A packet that authenticated and was not a replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// Its sequence number.
    pub seq: u64,
    /// The decrypted payload.
    pub payload: Vec<u8>,
}

/// Opens incoming packets of one channel: authenticates, decrypts, drops replays.
pub struct Opener {
    cipher: ChaCha20Poly1305,
    channel: Channel,
    window: ReplayWindow,
    stats: OpenStats,
}

impl fmt::Debug for Opener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opener")
            .field("channel", &self.channel)
            .field("window", &self.window.highest())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Opener {
    /// An opener for packets sealed by a [`Sealer`] with the same key and channel.
    pub fn new(key: &SessionKey, channel: Channel) -> Self {
        Self {
            cipher: ChaCha20Poly1305::new(Key::from_slice(key.as_bytes())),
            channel,
            window: ReplayWindow::new(),
            stats: OpenStats::default(),
        }
    }

    /// What has been opened and dropped so far.
    pub fn stats(&self) -> OpenStats {
        self.stats
    }

    /// The replay window's state.
    pub fn window(&self) -> &ReplayWindow {
        &self.window
    }

    /// Open `sealed` (`seq | ciphertext | tag`), with `header` the cleartext header bytes the
    /// sealer authenticated. Any input is safe: errors are counted and returned, never panics.
    pub fn open(&mut self, header: &[u8], sealed: &[u8]) -> Result<Opened, OpenError> {
        let r = self.open_inner(header, sealed);
        match &r {
            Ok(_) => self.stats.opened = self.stats.opened.saturating_add(1),
            Err(e) => self.stats.count(*e),
        }
        r
    }

    fn open_inner(&mut self, header: &[u8], sealed: &[u8]) -> Result<Opened, OpenError> {
        if sealed.len() < SEALED_OVERHEAD {
            return Err(OpenError::Truncated);
        }
        let (seq_bytes, rest) = sealed.split_at(SEQ_LEN);
        let (body, tag) = rest.split_at(rest.len() - TAG_LEN);
        let mut seq_arr = [0u8; SEQ_LEN];
        seq_arr.copy_from_slice(seq_bytes);
        let seq = u64::from_be_bytes(seq_arr);
        // Cheap window check first: replays are dropped without spending an AEAD pass.
        self.window.check(seq)?;
        let mut payload = body.to_vec();
        self.cipher
            .decrypt_in_place_detached(
                &self.channel.nonce(seq),
                header,
                &mut payload,
                Tag::from_slice(tag),
            )
            .map_err(|_| OpenError::Tampered)?;
        self.window.mark(seq)?;
        Ok(Opened { seq, payload })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealer_stops_at_the_last_sequence_number() {
        let key = SessionKey::from_bytes([7; 32]);
        let mut sealer = Sealer::new(&key, Channel::Data);
        let mut opener = Opener::new(&key, Channel::Data);
        sealer.next_seq = Some(u64::MAX);
        let last = sealer.seal(b"h", b"last").expect("u64::MAX is usable once");
        assert_eq!(sealer.next_seq(), None);
        assert_eq!(
            sealer.seal(b"h", b"more"),
            Err(SealError::SequenceExhausted)
        );
        let mut out = vec![1, 2, 3];
        assert_eq!(
            sealer.seal_into(b"h", b"more", &mut out),
            Err(SealError::SequenceExhausted)
        );
        assert_eq!(out, vec![1, 2, 3]);
        let opened = opener.open(b"h", &last).expect("opens");
        assert_eq!(opened.seq, u64::MAX);
        assert_eq!(opener.window().highest(), Some(u64::MAX));
    }

    #[test]
    fn window_edges() {
        let mut w = ReplayWindow::new();
        assert_eq!(w.check(0), Ok(()));
        w.mark(2000).unwrap();
        // 2000 - 977 = 1023 is the oldest number still inside the window.
        assert_eq!(w.check(977), Ok(()));
        assert_eq!(w.check(976), Err(OpenError::TooOld));
        w.mark(977).unwrap();
        assert_eq!(w.mark(977), Err(OpenError::Replayed));
        // Moving up by one pushes 977 out.
        w.mark(2001).unwrap();
        assert_eq!(w.check(977), Err(OpenError::TooOld));
        assert_eq!(w.check(978), Ok(()));
        // A jump beyond the window forgets everything below it.
        w.mark(10_000).unwrap();
        assert_eq!(w.check(2001), Err(OpenError::TooOld));
        assert_eq!(w.check(9_999), Ok(()));
        assert_eq!(w.check(10_000), Err(OpenError::Replayed));
    }
}
