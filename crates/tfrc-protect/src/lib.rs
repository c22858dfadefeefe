//! Protection of raised-TTL packets: seed 000 §3.3, variant E6 (`docs/protection.md`), and the
//! authenticated keys of the UDP transport's protected mode (`docs/security.md`).
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
//! - [`noise`]: authenticated session keys with the Noise IK handshake (the `snow` crate), the
//!   UDP transport's default protection; [`token`]: stateless retry tokens for address
//!   validation. The RSA exchange above is unauthenticated (seed 000's E6, kept as the paper's
//!   variant).
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
//! ```
//! use rand_chacha::{rand_core::SeedableRng, ChaCha20Rng};
//! use tfrc_protect::{wrap_session_key, Channel, KeyExchange, OpenError, Opener, Sealer};
//!
//! let mut rng = ChaCha20Rng::seed_from_u64(7); // the caller's CSPRNG
//! // Receiver: an RSA key with d = e⁻¹ mod λ(n); its public key goes to the sender.
//! let receiver = KeyExchange::generate(1024, &mut rng)?;
//! // Sender: a fresh session key, wrapped with RSA-OAEP(SHA-256).
//! let wrapped = wrap_session_key(&receiver.public_key(), &mut rng)?;
//! let key = receiver.unwrap(&wrapped.wrapped, &mut rng)?;
//!
//! let mut sealer = Sealer::new(&wrapped.key, Channel::Data);
//! let mut opener = Opener::new(&key, Channel::Data);
//! let header = b"cleartext header, TTL=40";
//! let sealed = sealer.seal(header, b"payload")?;
//! assert_eq!(opener.open(header, &sealed).unwrap().payload, b"payload");
//! assert_eq!(opener.open(header, &sealed), Err(OpenError::Replayed));
//! assert_eq!(opener.stats().replayed, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Measured on the 2-core development machine with `cargo run --release -p tfrclab -- bench
//! rsa` (2048 bits): decryption with CRT ≈ 0.98 ms for either kind, without CRT ≈ 3.07 ms for
//! either kind (Carmichael/Euler ratio 0.996–1.008, i.e. noise: the CRT exponents are identical,
//! and `d_λ` is on average only ~2 bits shorter); seal + open of a 1000-byte packet ≈ 4.3 µs,
//! the simulator's default per-packet protection cost. See `docs/protection.md` for the tables
//! and the verdict on the paper's claim.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bench;
mod error;
pub mod exchange;
pub mod keys;
pub mod noise;
pub mod packet;
pub mod token;

pub use bench::{
    bench_rsa, bench_rsa_with_progress, processing_cost, survey_d_bits, BenchStage, BitStats,
    DBitsSurvey, ProcessingCost, RsaBenchReport, RsaBenchRow, TimingStats, COST_HEADER_LEN,
    MAX_ITERATIONS,
};
pub use error::ProtectError;
pub use exchange::{
    decode_public_key, encode_public_key, modulus_bits, wrap_session_key, KeyExchange, SessionKey,
    WrappedSessionKey,
};
pub use keys::{
    carmichael_lambda, euler_phi, private_exponent, KeyKind, RsaKeyPair, DEFAULT_MODULUS_BITS,
    MAX_MODULUS_BITS, MIN_MODULUS_BITS, PUBLIC_EXPONENT,
};
pub use noise::{NoiseInitiator, SessionKeys, StaticKeypair, NOISE_NN_PATTERN, NOISE_PATTERN};
pub use packet::{
    Channel, OpenError, OpenStats, Opened, Opener, ReplayWindow, SealError, Sealer, REPLAY_WINDOW,
    SEALED_OVERHEAD,
};
pub use token::{clock_tag, RetryTokens, TOKEN_LEN};

/// The `rsa` crate's public key and big-integer types, re-exported so callers need not
/// depend on it.
pub use rsa::{BigUint, RsaPublicKey};
