//! Session-key exchange: the receiver's RSA key wraps a random 256-bit key with RSA-OAEP.
//!
//! The receiver holds an [`RsaKeyPair`] (Carmichael `d` by default) and publishes its public
//! key ([`encode_public_key`], PKCS#1 DER). The sender draws a [`SessionKey`] and wraps it
//! ([`wrap_session_key`]); the receiver unwraps it ([`KeyExchange::unwrap`]). Both then seal
//! and open packets under that key ([`crate::packet`]).
//!
//! OAEP uses SHA-256 for the hash and MGF1, with a fixed label that binds the ciphertext to
//! this protocol. Not done here (out of E6's scope): authenticating the public key itself,
//! so an active attacker on the key exchange path is not stopped.

use std::fmt;

use rand::{CryptoRng, RngCore};
use rsa::pkcs1::{DecodeRsaPublicKey, EncodeRsaPublicKey};
use rsa::{Oaep, RsaPublicKey};
use sha2::Sha256;
use zeroize::Zeroize;

use crate::keys::{KeyKind, RsaKeyPair};
use crate::ProtectError;

/// Bits of a public key's modulus (a sender refuses keys below its minimum).
pub fn modulus_bits(pk: &RsaPublicKey) -> usize {
    use rsa::traits::PublicKeyParts;
    pk.n().bits()
}

/// OAEP label: a wrapped key for another protocol does not unwrap here.
const OAEP_LABEL: &str = "tfrclab E6 session key v1";

fn oaep() -> Oaep {
    Oaep::new_with_label::<Sha256, _>(OAEP_LABEL)
}

/// A 256-bit ChaCha20-Poly1305 key shared by sender and receiver. Zeroed when dropped.
#[derive(Clone)]
pub struct SessionKey([u8; SessionKey::LEN]);

impl SessionKey {
    /// Key length in bytes.
    pub const LEN: usize = 32;

    /// Draw a fresh key from a cryptographic RNG.
    pub fn generate<R: CryptoRng + RngCore>(rng: &mut R) -> Self {
        let mut k = [0u8; Self::LEN];
        rng.fill_bytes(&mut k);
        Self(k)
    }

    /// A key from raw bytes (tests, or a key agreed by other means).
    pub fn from_bytes(bytes: [u8; Self::LEN]) -> Self {
        Self(bytes)
    }

    /// The raw key bytes.
    pub fn as_bytes(&self) -> &[u8; Self::LEN] {
        &self.0
    }
}

impl Drop for SessionKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

/// What the sender keeps and sends after wrapping: the key itself, and its RSA-OAEP
/// ciphertext for the receiver.
#[derive(Debug, Clone)]
pub struct WrappedSessionKey {
    /// The session key, for the sender's own [`crate::Sealer`].
    pub key: SessionKey,
    /// RSA-OAEP(SHA-256) ciphertext of the key, as long as the receiver's modulus.
    pub wrapped: Vec<u8>,
}

/// Sender side: draw a session key and wrap it for the receiver's public key.
pub fn wrap_session_key<R: CryptoRng + RngCore>(
    receiver: &RsaPublicKey,
    rng: &mut R,
) -> Result<WrappedSessionKey, ProtectError> {
    let key = SessionKey::generate(rng);
    let wrapped = receiver.encrypt(rng, oaep(), key.as_bytes())?;
    Ok(WrappedSessionKey { key, wrapped })
}

/// Receiver side of the exchange: holds the RSA private key and unwraps session keys.
#[derive(Debug, Clone)]
pub struct KeyExchange {
    key: RsaKeyPair,
}

impl KeyExchange {
    /// Generate a receiver key of `bits` bits with the default (Carmichael) private exponent.
    pub fn generate<R: CryptoRng + RngCore>(
        bits: usize,
        rng: &mut R,
    ) -> Result<Self, ProtectError> {
        Ok(Self::from_key_pair(RsaKeyPair::generate(
            KeyKind::default(),
            bits,
            rng,
        )?))
    }

    /// Use an existing key (for example an Euler one, for comparison).
    pub fn from_key_pair(key: RsaKeyPair) -> Self {
        Self { key }
    }

    /// The receiver's key.
    pub fn key_pair(&self) -> &RsaKeyPair {
        &self.key
    }

    /// The public key to send to the sender.
    pub fn public_key(&self) -> RsaPublicKey {
        self.key.public_key()
    }

    /// Unwrap a session key. Decryption is blinded with `rng` (the library's defence against
    /// timing attacks on `d`). Every failure is the same [`ProtectError::UnwrapFailed`].
    pub fn unwrap<R: CryptoRng + RngCore>(
        &self,
        wrapped: &[u8],
        rng: &mut R,
    ) -> Result<SessionKey, ProtectError> {
        let mut plain = self
            .key
            .private_key()
            .decrypt_blinded(rng, oaep(), wrapped)
            .map_err(|_| ProtectError::UnwrapFailed)?;
        let bytes: Result<[u8; SessionKey::LEN], _> = plain.as_slice().try_into();
        plain.zeroize();
        bytes
            .map(SessionKey)
            .map_err(|_| ProtectError::UnwrapFailed)
    }
}

/// Encode a public key as PKCS#1 DER (`RSAPublicKey ::= SEQUENCE { n, e }`).
pub fn encode_public_key(key: &RsaPublicKey) -> Result<Vec<u8>, ProtectError> {
    key.to_pkcs1_der()
        .map(|doc| doc.as_bytes().to_vec())
        .map_err(|_| ProtectError::InvalidPublicKey)
}

/// Decode a PKCS#1 DER public key; the `rsa` crate checks `e` and limits `n` to 4096 bits.
pub fn decode_public_key(der: &[u8]) -> Result<RsaPublicKey, ProtectError> {
    RsaPublicKey::from_pkcs1_der(der).map_err(|_| ProtectError::InvalidPublicKey)
}
