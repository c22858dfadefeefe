//! Authenticated session keys with the Noise Protocol Framework: pattern IK with X25519,
//! ChaCha20-Poly1305 and BLAKE2s ([`NOISE_PATTERN`]), the pattern WireGuard uses. Every
//! handshake step is the `snow` crate's; this module only chooses the pattern, feeds it the
//! keys and hands the two transport keys it splits to the crate's packet framing
//! ([`crate::packet`]), which adds associated data and the replay window.
//!
//! The initiator (the UDP sender) knows the responder's static public key in advance (it is
//! pinned); the responder (the UDP receiver) learns the initiator's static key from the first
//! message and may check it against an allow-list. Whoever substitutes a key in between holds
//! neither private key, so the handshake fails: the initiator cannot read the second message,
//! and the responder's keys never open a packet the intermediary sealed.
//!
//! ```
//! use tfrc_protect::noise::{respond, NoiseInitiator, StaticKeypair};
//! let receiver = StaticKeypair::generate()?;
//! let sender = StaticKeypair::generate()?;
//! let mut init = NoiseInitiator::new(&sender, receiver.public(), b"same prologue")?;
//! let first = init.first_message()?;
//! let resp = respond(&receiver, b"same prologue", &first, |_| true)?;
//! assert_eq!(&resp.remote_static, sender.public());
//! let keys = init.finish(&resp.reply)?;
//! assert_eq!(keys.to_responder.as_bytes(), resp.keys.to_responder.as_bytes());
//! # Ok::<(), tfrc_protect::ProtectError>(())
//! ```

use std::fmt::Write as _;

use zeroize::Zeroize;

use crate::exchange::SessionKey;
use crate::ProtectError;

/// The Noise protocol name: pattern IK, X25519, ChaCha20-Poly1305, BLAKE2s.
pub const NOISE_PATTERN: &str = "Noise_IK_25519_ChaChaPoly_BLAKE2s";
/// Bytes of a static key (private or public).
pub const KEY_LEN: usize = 32;
/// Bytes of the initiator's first message (empty payload): e, s encrypted, two tags.
pub const FIRST_MESSAGE_LEN: usize = 96;
/// Bytes of the responder's answer (empty payload): e and a tag.
pub const REPLY_LEN: usize = 48;
/// Longest handshake message accepted.
pub const MAX_MESSAGE: usize = 256;
/// The unauthenticated protocol: pattern NN (ephemeral keys only), same primitives. It gives
/// confidentiality and integrity against anyone who was not an active man in the middle
/// during the handshake, and no authentication of either end (QUIC without a certificate
/// check).
pub const NOISE_NN_PATTERN: &str = "Noise_NN_25519_ChaChaPoly_BLAKE2s";
/// Bytes of an NN initiator's first message (empty payload): e, in clear.
pub const NN_FIRST_MESSAGE_LEN: usize = 32;
/// Bytes of an NN responder's answer (empty payload): e and a tag.
pub const NN_REPLY_LEN: usize = 48;

fn params() -> snow::params::NoiseParams {
    // A constant that parses: checked by the unit tests.
    NOISE_PATTERN.parse().expect("valid Noise protocol name")
}

fn nn_params() -> snow::params::NoiseParams {
    NOISE_NN_PATTERN.parse().expect("valid Noise protocol name")
}

fn handshake_err(_: snow::Error) -> ProtectError {
    ProtectError::Handshake
}

/// A static X25519 key pair. The private half is zeroed when dropped.
#[derive(Clone)]
pub struct StaticKeypair {
    private: [u8; KEY_LEN],
    public: [u8; KEY_LEN],
}

impl Drop for StaticKeypair {
    fn drop(&mut self) {
        self.private.zeroize();
    }
}

impl std::fmt::Debug for StaticKeypair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticKeypair")
            .field("public", &hex(&self.public))
            .finish_non_exhaustive()
    }
}

impl StaticKeypair {
    /// A fresh key pair from the operating system's random source (snow's key generation).
    pub fn generate() -> Result<StaticKeypair, ProtectError> {
        let kp = snow::Builder::new(params())
            .generate_keypair()
            .map_err(handshake_err)?;
        let mut private = [0u8; KEY_LEN];
        let mut public = [0u8; KEY_LEN];
        if kp.private.len() != KEY_LEN || kp.public.len() != KEY_LEN {
            return Err(ProtectError::InvalidKey(
                "snow returned a key of another length",
            ));
        }
        private.copy_from_slice(&kp.private);
        public.copy_from_slice(&kp.public);
        Ok(StaticKeypair { private, public })
    }

    /// The key pair of a stored private key: the public half is X25519(private, base point).
    pub fn from_private(private: [u8; KEY_LEN]) -> StaticKeypair {
        let public = curve25519_dalek::MontgomeryPoint::mul_base_clamped(private).to_bytes();
        StaticKeypair { private, public }
    }

    /// The public half.
    pub fn public(&self) -> &[u8; KEY_LEN] {
        &self.public
    }

    /// The key file text: a comment, then `private HEX` and `public HEX` lines.
    pub fn to_key_file(&self) -> String {
        format!(
            "# tfrclab static key ({NOISE_PATTERN}); keep this file private\nprivate {}\npublic {}\n",
            hex(&self.private),
            hex(&self.public)
        )
    }

    /// Parse a key file written by [`to_key_file`](Self::to_key_file). Errors say which line
    /// is wrong and what was expected.
    pub fn from_key_file(text: &str) -> Result<StaticKeypair, String> {
        let mut private = None;
        let mut public = None;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (k, v) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let key = parse_hex_key(v.trim()).map_err(|e| format!("line {}: {k}: {e}", i + 1))?;
            match k {
                "private" => private = Some(key),
                "public" => public = Some(key),
                _ => {
                    return Err(format!(
                        "line {}: '{k}' is not a key line (expected 'private HEX' or 'public HEX')",
                        i + 1
                    ))
                }
            }
        }
        let private = private.ok_or("no 'private HEX' line (not a private key file)")?;
        let kp = StaticKeypair::from_private(private);
        if public.is_some_and(|p| p != kp.public) {
            return Err("the 'public' line is not the public half of the 'private' line".into());
        }
        Ok(kp)
    }
}

/// Lower-case hex of bytes.
pub fn hex(b: &[u8]) -> String {
    b.iter()
        .fold(String::with_capacity(2 * b.len()), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

/// A 32-byte key written as 64 hex digits.
pub fn parse_hex_key(v: &str) -> Result<[u8; KEY_LEN], String> {
    let v = v.trim();
    if v.len() != 2 * KEY_LEN || !v.is_ascii() {
        return Err(format!(
            "expected {} hex digits, got {} characters",
            2 * KEY_LEN,
            v.chars().count()
        ));
    }
    let mut k = [0u8; KEY_LEN];
    for (i, o) in k.iter_mut().enumerate() {
        *o = u8::from_str_radix(&v[2 * i..2 * i + 2], 16)
            .map_err(|_| format!("'{}' is not a hex byte", &v[2 * i..2 * i + 2]))?;
    }
    Ok(k)
}

/// A public key given as 64 hex digits, or as the text of a key file (its `public` line).
pub fn parse_public_key(text: &str) -> Result<[u8; KEY_LEN], String> {
    let t = text.trim();
    if !t.contains('\n') && !t.starts_with("public") && !t.starts_with('#') {
        return parse_hex_key(t);
    }
    for (i, line) in t.lines().enumerate() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("public") {
            return parse_hex_key(v).map_err(|e| format!("line {}: public: {e}", i + 1));
        }
    }
    Err("no 'public HEX' line".into())
}

/// The two transport keys of a finished handshake.
pub struct SessionKeys {
    /// Initiator to responder (the UDP sender's data).
    pub to_responder: SessionKey,
    /// Responder to initiator (the UDP receiver's feedback).
    pub to_initiator: SessionKey,
}

fn split(hs: &mut snow::HandshakeState) -> SessionKeys {
    let (a, b) = hs.dangerously_get_raw_split();
    SessionKeys {
        to_responder: SessionKey::from_bytes(a),
        to_initiator: SessionKey::from_bytes(b),
    }
}

/// The initiator's side of a Noise IK handshake.
pub struct NoiseInitiator {
    hs: snow::HandshakeState,
}

impl NoiseInitiator {
    /// Start a handshake to the responder whose static public key is `remote`. Both sides must
    /// pass the same `prologue` (it binds the cleartext that travels beside the handshake).
    pub fn new(
        local: &StaticKeypair,
        remote: &[u8; KEY_LEN],
        prologue: &[u8],
    ) -> Result<NoiseInitiator, ProtectError> {
        let hs = snow::Builder::new(params())
            .local_private_key(&local.private)
            .and_then(|b| b.remote_public_key(remote))
            .and_then(|b| b.prologue(prologue))
            .and_then(|b| b.build_initiator())
            .map_err(handshake_err)?;
        Ok(NoiseInitiator { hs })
    }

    /// Start an unauthenticated handshake ([`NOISE_NN_PATTERN`]): no static key on either
    /// side, so it resists passive and off-path attackers but not an active man in the middle
    /// of the handshake.
    pub fn unauthenticated(prologue: &[u8]) -> Result<NoiseInitiator, ProtectError> {
        let hs = snow::Builder::new(nn_params())
            .prologue(prologue)
            .and_then(|b| b.build_initiator())
            .map_err(handshake_err)?;
        Ok(NoiseInitiator { hs })
    }

    /// The first message (IK: `-> e, es, s, ss`; NN: `-> e`), with an empty payload.
    pub fn first_message(&mut self) -> Result<Vec<u8>, ProtectError> {
        let mut m = vec![0u8; MAX_MESSAGE];
        let n = self.hs.write_message(&[], &mut m).map_err(handshake_err)?;
        m.truncate(n);
        Ok(m)
    }

    /// Read the responder's answer (`<- e, ee, se`) and split the transport keys. Fails when
    /// the answer was not made with the pinned key's private half.
    pub fn finish(mut self, reply: &[u8]) -> Result<SessionKeys, ProtectError> {
        if reply.len() > MAX_MESSAGE {
            return Err(ProtectError::Handshake);
        }
        let mut p = [0u8; MAX_MESSAGE];
        self.hs.read_message(reply, &mut p).map_err(handshake_err)?;
        if !self.hs.is_handshake_finished() {
            return Err(ProtectError::Handshake);
        }
        Ok(split(&mut self.hs))
    }
}

/// What the responder gets from a valid first message.
pub struct NoiseResponse {
    /// The transport keys.
    pub keys: SessionKeys,
    /// The answer to send back.
    pub reply: Vec<u8>,
    /// The initiator's static public key (authenticated by the handshake).
    pub remote_static: [u8; KEY_LEN],
}

/// Answer an unauthenticated ([`NOISE_NN_PATTERN`]) first message: the transport keys and
/// the answer. The first message is an ephemeral key in clear, so nothing in it can fail to
/// verify except its length: what stands before this call (a retry token, budgets) is what
/// bounds the work it costs.
pub fn respond_unauthenticated(
    prologue: &[u8],
    first: &[u8],
) -> Result<(SessionKeys, Vec<u8>), ProtectError> {
    if first.len() != NN_FIRST_MESSAGE_LEN {
        return Err(ProtectError::Handshake);
    }
    let mut hs = snow::Builder::new(nn_params())
        .prologue(prologue)
        .and_then(|b| b.build_responder())
        .map_err(handshake_err)?;
    let mut p = [0u8; MAX_MESSAGE];
    hs.read_message(first, &mut p).map_err(handshake_err)?;
    let mut reply = vec![0u8; MAX_MESSAGE];
    let n = hs.write_message(&[], &mut reply).map_err(handshake_err)?;
    reply.truncate(n);
    if !hs.is_handshake_finished() {
        return Err(ProtectError::Handshake);
    }
    Ok((split(&mut hs), reply))
}

/// Answer a first message as the responder holding `local`. `allow` decides from the
/// initiator's static key whether to go on ([`ProtectError::NotAllowed`] otherwise).
pub fn respond(
    local: &StaticKeypair,
    prologue: &[u8],
    first: &[u8],
    allow: impl Fn(&[u8; KEY_LEN]) -> bool,
) -> Result<NoiseResponse, ProtectError> {
    if first.len() > MAX_MESSAGE {
        return Err(ProtectError::Handshake);
    }
    let mut hs = snow::Builder::new(params())
        .local_private_key(&local.private)
        .and_then(|b| b.prologue(prologue))
        .and_then(|b| b.build_responder())
        .map_err(handshake_err)?;
    let mut p = [0u8; MAX_MESSAGE];
    hs.read_message(first, &mut p).map_err(handshake_err)?;
    let mut remote_static = [0u8; KEY_LEN];
    match hs.get_remote_static() {
        Some(r) if r.len() == KEY_LEN => remote_static.copy_from_slice(r),
        _ => return Err(ProtectError::Handshake),
    }
    if !allow(&remote_static) {
        return Err(ProtectError::NotAllowed);
    }
    let mut reply = vec![0u8; MAX_MESSAGE];
    let n = hs.write_message(&[], &mut reply).map_err(handshake_err)?;
    reply.truncate(n);
    if !hs.is_handshake_finished() {
        return Err(ProtectError::Handshake);
    }
    Ok(NoiseResponse {
        keys: split(&mut hs),
        reply,
        remote_static,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Channel, Opener, Sealer};

    #[test]
    fn handshake_agrees_and_sizes_hold() {
        let r = StaticKeypair::generate().unwrap();
        let s = StaticKeypair::generate().unwrap();
        let mut i = NoiseInitiator::new(&s, r.public(), b"p").unwrap();
        let m1 = i.first_message().unwrap();
        assert_eq!(m1.len(), FIRST_MESSAGE_LEN);
        let resp = respond(&r, b"p", &m1, |k| k == s.public()).unwrap();
        assert_eq!(resp.reply.len(), REPLY_LEN);
        let k = i.finish(&resp.reply).unwrap();
        let mut seal = Sealer::new(&k.to_responder, Channel::Data);
        let mut open = Opener::new(&resp.keys.to_responder, Channel::Data);
        let c = seal.seal(b"h", b"x").unwrap();
        assert_eq!(open.open(b"h", &c).unwrap().payload, b"x");
        assert_ne!(k.to_responder.as_bytes(), k.to_initiator.as_bytes());
    }

    /// A man in the middle with its own key pair: the sender pinned the real key, so the
    /// impostor cannot read the first message, and an answer it makes with its own key fails
    /// at the sender.
    #[test]
    fn substituted_keys_fail_on_both_ends() {
        let real = StaticKeypair::generate().unwrap();
        let mitm = StaticKeypair::generate().unwrap();
        let s = StaticKeypair::generate().unwrap();
        let mut i = NoiseInitiator::new(&s, real.public(), b"p").unwrap();
        let m1 = i.first_message().unwrap();
        assert!(matches!(
            respond(&mitm, b"p", &m1, |_| true),
            Err(ProtectError::Handshake)
        ));
        // The impostor starts its own handshake to the real receiver and answers the sender
        // with a reply of its own making: the sender refuses it.
        let mut i2 = NoiseInitiator::new(&mitm, real.public(), b"p").unwrap();
        let m1b = i2.first_message().unwrap();
        let resp = respond(&real, b"p", &m1b, |_| true).unwrap();
        assert!(matches!(
            i.finish(&resp.reply),
            Err(ProtectError::Handshake)
        ));
        // A tampered prologue (cleartext HELLO fields) fails too.
        let mut i3 = NoiseInitiator::new(&s, real.public(), b"p").unwrap();
        let m = i3.first_message().unwrap();
        assert!(respond(&real, b"q", &m, |_| true).is_err());
        // Allow-list.
        let mut i4 = NoiseInitiator::new(&s, real.public(), b"p").unwrap();
        let m = i4.first_message().unwrap();
        assert!(matches!(
            respond(&real, b"p", &m, |k| k == mitm.public()),
            Err(ProtectError::NotAllowed)
        ));
    }

    #[test]
    fn unauthenticated_handshake_agrees_and_binds_the_prologue() {
        let mut i = NoiseInitiator::unauthenticated(b"p").unwrap();
        let m1 = i.first_message().unwrap();
        assert_eq!(m1.len(), NN_FIRST_MESSAGE_LEN);
        let (keys, reply) = respond_unauthenticated(b"p", &m1).unwrap();
        assert_eq!(reply.len(), NN_REPLY_LEN);
        let k = i.finish(&reply).unwrap();
        assert_eq!(k.to_responder.as_bytes(), keys.to_responder.as_bytes());
        assert_eq!(k.to_initiator.as_bytes(), keys.to_initiator.as_bytes());
        // Altered cleartext (prologue), a cut message, a forged answer: all fail.
        let mut i = NoiseInitiator::unauthenticated(b"p").unwrap();
        let m1 = i.first_message().unwrap();
        let (_, reply) = respond_unauthenticated(b"q", &m1).unwrap();
        assert!(i.finish(&reply).is_err());
        assert!(respond_unauthenticated(b"p", &m1[..31]).is_err());
        let mut i = NoiseInitiator::unauthenticated(b"p").unwrap();
        let _ = i.first_message().unwrap();
        assert!(i.finish(&[7; NN_REPLY_LEN]).is_err());
    }

    #[test]
    fn key_files_round_trip_and_errors_name_the_line() {
        let k = StaticKeypair::generate().unwrap();
        let t = k.to_key_file();
        let back = StaticKeypair::from_key_file(&t).unwrap();
        assert_eq!(back.public(), k.public());
        assert_eq!(parse_public_key(&t).unwrap(), *k.public());
        assert_eq!(parse_public_key(&hex(k.public())).unwrap(), *k.public());
        let e = StaticKeypair::from_key_file("# x\nprivate zz\n").unwrap_err();
        assert!(e.starts_with("line 2: private:"), "{e}");
        let e = StaticKeypair::from_key_file(&format!("public {}\n", hex(k.public()))).unwrap_err();
        assert!(e.contains("no 'private HEX' line"), "{e}");
        let other = StaticKeypair::generate().unwrap();
        let mixed = format!(
            "private {}\npublic {}\n",
            hex(&k.private),
            hex(other.public())
        );
        assert!(StaticKeypair::from_key_file(&mixed).is_err());
    }
}
