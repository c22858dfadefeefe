//! Protection of raised-TTL packets: seed 000 §3.3, variant E6 of `shared/spec/variants.md`.
//!
//! The paper protects every packet whose TTL was raised (E5) with "RSA with the Carmichael
//! function", claiming that `d = e⁻¹ mod λ(n)` gives a smaller private key than
//! `d = e⁻¹ mod φ(n)` and so faster decryption. This crate implements the sound-engineering
//! reading of E6 and measures the claim:
//!
//! - [`keys`]: RSA key generation with either private exponent ([`KeyKind`]), built from
//!   primes the `rsa` crate's bigint generates and validated by `rsa` itself.
//! - [`exchange`]: the receiver's RSA key wraps a random 256-bit session key with RSA-OAEP
//!   (SHA-256).
//! - [`packet`]: every protected packet is sealed with ChaCha20-Poly1305 under that session
//!   key; the opener drops tampered, truncated, replayed and too-old packets and counts them.
//! - [`mod@bench`]: decryption time with and without CRT for both key kinds ([`bench_rsa`]), and
//!   the per-packet seal+open cost ([`processing_cost`]) the simulator uses as its default.
//!
//! Sans-IO like the TFRC core: no sockets; every random draw comes from an RNG the caller
//! passes in. Only [`mod@bench`] reads a clock, because measuring time is its purpose.
//!
//! No RSA arithmetic is written here: encryption, decryption, padding, CRT and key validation
//! are the `rsa` crate's; this crate computes only `d` (a modular inverse, with the bigint
//! library's `mod_inverse`) when it builds a key.
//!
//! Measured on the development machine (2 cores, `cargo run --release -p tfrclab -- bench
//! rsa`); see `docs/protection.md` for the full table and the verdict on the paper's claim.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bench;
mod error;
pub mod exchange;
pub mod keys;
pub mod packet;

pub use bench::{
    bench_rsa, bench_rsa_with_progress, processing_cost, survey_d_bits, BenchStage, BitStats,
    DBitsSurvey, ProcessingCost, RsaBenchReport, RsaBenchRow, TimingStats, COST_HEADER_LEN,
    MAX_ITERATIONS,
};
pub use error::ProtectError;
pub use exchange::{
    decode_public_key, encode_public_key, wrap_session_key, KeyExchange, SessionKey,
    WrappedSessionKey,
};
pub use keys::{
    carmichael_lambda, euler_phi, private_exponent, KeyKind, RsaKeyPair, DEFAULT_MODULUS_BITS,
    MAX_MODULUS_BITS, MIN_MODULUS_BITS, PUBLIC_EXPONENT,
};
pub use packet::{
    Channel, OpenError, OpenStats, Opened, Opener, ReplayWindow, SealError, Sealer, REPLAY_WINDOW,
    SEALED_OVERHEAD,
};

/// The `rsa` crate's public key and big-integer types, re-exported so callers need not
/// depend on it.
pub use rsa::{BigUint, RsaPublicKey};
