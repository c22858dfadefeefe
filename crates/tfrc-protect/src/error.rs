//! The crate's error type for key generation, key exchange and benchmarks.

use std::fmt;

/// Why a key, key exchange or benchmark operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ProtectError {
    /// The requested modulus size is outside the supported range.
    UnsupportedModulusSize {
        /// The requested size in bits.
        bits: usize,
    },
    /// The primes cannot form a key: equal, or `e` shares a factor with `p-1` or `q-1`.
    InvalidPrimes,
    /// The `rsa` crate rejected a key or an operation.
    Rsa(rsa::Error),
    /// An RSA-OAEP wrapped session key did not decrypt. Deliberately says nothing more, so
    /// that the error is no padding oracle.
    UnwrapFailed,
    /// Bytes offered as a public key are not a PKCS#1 DER RSA public key the library accepts.
    InvalidPublicKey,
    /// A benchmark parameter is out of range.
    InvalidParameter(&'static str),
    /// A decryption in the benchmark did not return the plaintext (never expected; the
    /// benchmark refuses to time wrong answers).
    DecryptionMismatch,
    /// A packet could not be sealed or opened while measuring the processing cost.
    Packet(&'static str),
    /// A Noise handshake message did not verify (a substituted or wrong key, tampered
    /// cleartext, or not a handshake message). Deliberately says nothing more.
    Handshake,
    /// The initiator's static key is not on the responder's allow-list.
    NotAllowed,
    /// A static key is unusable.
    InvalidKey(&'static str),
}

impl fmt::Display for ProtectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedModulusSize { bits } => write!(
                f,
                "RSA modulus of {bits} bits is outside the supported {}..={} bits",
                crate::keys::MIN_MODULUS_BITS,
                crate::keys::MAX_MODULUS_BITS
            ),
            Self::InvalidPrimes => write!(f, "the primes cannot form an RSA key with e = 65537"),
            Self::Rsa(e) => write!(f, "RSA: {e}"),
            Self::UnwrapFailed => write!(f, "the wrapped session key did not decrypt"),
            Self::InvalidPublicKey => write!(f, "not a valid PKCS#1 DER RSA public key"),
            Self::InvalidParameter(what) => write!(f, "invalid parameter: {what}"),
            Self::DecryptionMismatch => write!(f, "a decryption returned the wrong plaintext"),
            Self::Packet(what) => write!(f, "packet protection failed: {what}"),
            Self::Handshake => {
                f.write_str("the Noise handshake failed (wrong or substituted key, or tampered)")
            }
            Self::NotAllowed => f.write_str("the sender's static key is not on the allow-list"),
            Self::InvalidKey(what) => write!(f, "unusable static key: {what}"),
        }
    }
}

impl std::error::Error for ProtectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Rsa(e) => Some(e),
            _ => None,
        }
    }
}

impl From<rsa::Error> for ProtectError {
    fn from(e: rsa::Error) -> Self {
        Self::Rsa(e)
    }
}
