//! RSA keys whose private exponent is `e⁻¹ mod λ(n)` (Carmichael) or `e⁻¹ mod φ(n)` (Euler).
//!
//! What the `rsa` crate (0.9.10) does itself: `RsaPrivateKey::new` generates two primes and
//! computes `d = e⁻¹ mod φ(n)` (Euler, `compute_private_exponent_euler_totient`), while
//! `RsaPrivateKey::from_p_q` uses `λ(n) = lcm(p-1, q-1)` (Carmichael, after NIST SP 800-56B
//! §6.2.1). Here both come from the same primes, so the two kinds differ only in `d`.
//!
//! Why `d_λ ≤ d_φ`: `λ | φ` because `lcm(p-1, q-1)` divides `(p-1)(q-1)`; so
//! `d_φ·e ≡ 1 (mod φ)` implies `d_φ·e ≡ 1 (mod λ)`. The inverse of `e` modulo `λ` is unique
//! in `[0, λ)`, hence `d_λ = d_φ mod λ ≤ d_φ`. Since `p-1` and `q-1` are both even,
//! `g = gcd(p-1, q-1) ≥ 2` and `λ = φ/g`, so `d_λ` is shorter by about `log2 g` bits, which
//! for random primes is usually only one to a few bits.

use std::fmt;

use num_bigint_dig::{ModInverse, RandPrime};
use num_integer::Integer;
use num_traits::One;
use rand::{CryptoRng, RngCore};
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use rsa::{BigUint, RsaPrivateKey, RsaPublicKey};
use serde::Serialize;

use crate::ProtectError;

/// The public exponent of every key here, as in the `rsa` crate's own generator.
pub const PUBLIC_EXPONENT: u64 = 65_537;
/// Modulus size used when the caller does not choose one.
pub const DEFAULT_MODULUS_BITS: usize = 2048;
/// Smallest modulus accepted: RSA-OAEP with SHA-256 cannot wrap a 32-byte key in less than
/// 784 bits, and anything under 1024 bits is factorable.
pub const MIN_MODULUS_BITS: usize = 1024;
/// Largest modulus accepted: the `rsa` crate's default limit for public keys.
pub const MAX_MODULUS_BITS: usize = 4096;

/// Prime pairs to draw before giving up; each draw fails with probability about 2/65537
/// (e divides p-1 or q-1), so reaching this means a broken RNG.
const MAX_ATTEMPTS: usize = 1000;

/// Which modulus the private exponent is reduced by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyKind {
    /// `d = e⁻¹ mod λ(n)`, `λ(n) = lcm(p-1, q-1)`: the paper's choice and the default.
    #[default]
    Carmichael,
    /// `d = e⁻¹ mod φ(n)`, `φ(n) = (p-1)(q-1)`: textbook RSA, for comparison.
    Euler,
}

impl KeyKind {
    /// Both kinds, Carmichael first.
    pub const ALL: [KeyKind; 2] = [KeyKind::Carmichael, KeyKind::Euler];

    /// Lower-case name, as printed by the CLI.
    pub fn name(self) -> &'static str {
        match self {
            KeyKind::Carmichael => "carmichael",
            KeyKind::Euler => "euler",
        }
    }
}

impl fmt::Display for KeyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `λ(n) = lcm(p-1, q-1)` for `n = pq`. `None` if `p` or `q` is below 2.
pub fn carmichael_lambda(p: &BigUint, q: &BigUint) -> Option<BigUint> {
    let (p1, q1) = minus_one(p, q)?;
    Some(p1.lcm(&q1))
}

/// `φ(n) = (p-1)(q-1)` for `n = pq`. `None` if `p` or `q` is below 2.
pub fn euler_phi(p: &BigUint, q: &BigUint) -> Option<BigUint> {
    let (p1, q1) = minus_one(p, q)?;
    Some(p1 * q1)
}

fn minus_one(p: &BigUint, q: &BigUint) -> Option<(BigUint, BigUint)> {
    let two = BigUint::from(2u8);
    if *p < two || *q < two {
        return None;
    }
    Some((p - BigUint::one(), q - BigUint::one()))
}

/// `d = e⁻¹ mod λ(pq)` or `mod φ(pq)`, by the bigint library's modular inverse.
/// `None` if `p` or `q` is below 2 or `e` has no inverse (shares a factor with the modulus).
pub fn private_exponent(kind: KeyKind, p: &BigUint, q: &BigUint, e: &BigUint) -> Option<BigUint> {
    let m = match kind {
        KeyKind::Carmichael => carmichael_lambda(p, q)?,
        KeyKind::Euler => euler_phi(p, q)?,
    };
    if m <= BigUint::one() {
        return None;
    }
    e.mod_inverse(&m)?.to_biguint()
}

/// An RSA private key of a known [`KeyKind`], validated by the `rsa` crate, with its CRT values
/// precomputed.
#[derive(Clone)]
pub struct RsaKeyPair {
    kind: KeyKind,
    key: RsaPrivateKey,
}

impl fmt::Debug for RsaKeyPair {
    // Never print the private exponent or the primes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RsaKeyPair")
            .field("kind", &self.kind)
            .field("modulus_bits", &self.modulus_bits())
            .field("d_bits", &self.d_bits())
            .finish_non_exhaustive()
    }
}

impl RsaKeyPair {
    /// Generate a key of `bits` modulus bits: two primes from the `rsa` crate's bigint prime
    /// generator (`RandPrime::gen_prime`, the one `RsaPrivateKey::new` uses), `e = 65537`,
    /// and `d` by `kind`.
    pub fn generate<R: CryptoRng + RngCore>(
        kind: KeyKind,
        bits: usize,
        rng: &mut R,
    ) -> Result<Self, ProtectError> {
        let (p, q) = generate_primes(bits, rng)?;
        Self::from_primes(kind, p, q)
    }

    /// Generate one prime pair and build both kinds from it: `(Carmichael, Euler)`. The keys
    /// share `n` and `e`, so they decrypt the same ciphertexts; only `d` differs.
    pub fn generate_pair<R: CryptoRng + RngCore>(
        bits: usize,
        rng: &mut R,
    ) -> Result<(Self, Self), ProtectError> {
        let (p, q) = generate_primes(bits, rng)?;
        let carmichael = Self::from_primes(KeyKind::Carmichael, p.clone(), q.clone())?;
        let euler = Self::from_primes(KeyKind::Euler, p, q)?;
        Ok((carmichael, euler))
    }

    /// Build a key from primes `p` and `q` with `e = 65537`; the `rsa` crate validates it
    /// (`RsaPrivateKey::from_components` runs `validate`) and precomputes its CRT values.
    pub fn from_primes(kind: KeyKind, p: BigUint, q: BigUint) -> Result<Self, ProtectError> {
        if p == q {
            return Err(ProtectError::InvalidPrimes);
        }
        let e = BigUint::from(PUBLIC_EXPONENT);
        let d = private_exponent(kind, &p, &q, &e).ok_or(ProtectError::InvalidPrimes)?;
        let n = &p * &q;
        if n <= e {
            return Err(ProtectError::InvalidPrimes);
        }
        let key = RsaPrivateKey::from_components(n, e, d, vec![p, q])?;
        key.validate()?;
        Ok(Self { kind, key })
    }

    /// The same primes with the other kind's (or the same kind's) private exponent.
    pub fn with_kind(&self, kind: KeyKind) -> Result<Self, ProtectError> {
        let [p, q] = self.primes();
        Self::from_primes(kind, p.clone(), q.clone())
    }

    /// Which modulus `d` was reduced by.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// Bit length of the modulus `n`.
    pub fn modulus_bits(&self) -> usize {
        self.key.n().bits()
    }

    /// Bit length of the private exponent `d`: the paper's "key size".
    pub fn d_bits(&self) -> usize {
        self.key.d().bits()
    }

    /// The private exponent `d`.
    pub fn d(&self) -> &BigUint {
        self.key.d()
    }

    /// The public exponent `e` (always [`PUBLIC_EXPONENT`]).
    pub fn e(&self) -> &BigUint {
        self.key.e()
    }

    /// The modulus `n = pq`.
    pub fn n(&self) -> &BigUint {
        self.key.n()
    }

    /// The primes `[p, q]`, in the order the `rsa` crate keeps them.
    pub fn primes(&self) -> [&BigUint; 2] {
        let primes = self.key.primes();
        // from_primes always stores exactly two.
        [&primes[0], &primes[1]]
    }

    /// `λ(n)` of this key's modulus.
    pub fn lambda(&self) -> BigUint {
        let [p, q] = self.primes();
        // Both primes are > 2 for a validated key, so the helper cannot return None here;
        // fall back to zero rather than panic.
        carmichael_lambda(p, q).unwrap_or_default()
    }

    /// `φ(n)` of this key's modulus.
    pub fn phi(&self) -> BigUint {
        let [p, q] = self.primes();
        euler_phi(p, q).unwrap_or_default()
    }

    /// The CRT exponents `(d mod (p-1), d mod (q-1))` the library precomputed. They are equal
    /// for both kinds, because `p-1` and `q-1` divide `λ`.
    pub fn crt_exponents(&self) -> (BigUint, BigUint) {
        let [p, q] = self.primes();
        let one = BigUint::one();
        (self.d() % (p - &one), self.d() % (q - &one))
    }

    /// The private key, CRT values precomputed (the library's normal decryption path).
    pub fn private_key(&self) -> &RsaPrivateKey {
        &self.key
    }

    /// A copy of the private key without precomputed CRT values, so that the library
    /// decrypts with `c^d mod n` (num-bigint-dig's `modpow`) instead.
    pub fn private_key_without_crt(&self) -> RsaPrivateKey {
        let mut key = self.key.clone();
        key.clear_precomputed();
        key
    }

    /// The public key `(n, e)`.
    pub fn public_key(&self) -> RsaPublicKey {
        self.key.to_public_key()
    }
}

/// Draw primes as `rsa`'s own generator does (top two bits set, `n` exactly `bits` long),
/// retrying when `p = q`, `e | p-1` or `e | q-1`.
fn generate_primes<R: CryptoRng + RngCore>(
    bits: usize,
    rng: &mut R,
) -> Result<(BigUint, BigUint), ProtectError> {
    if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&bits) {
        return Err(ProtectError::UnsupportedModulusSize { bits });
    }
    let e = BigUint::from(PUBLIC_EXPONENT);
    for _ in 0..MAX_ATTEMPTS {
        let p = rng.gen_prime(bits / 2);
        let q = rng.gen_prime(bits - p.bits());
        if p == q || (&p * &q).bits() != bits {
            continue;
        }
        // gcd(e, λ) = 1 iff gcd(e, φ) = 1 (same prime factors), so one check serves both kinds.
        if private_exponent(KeyKind::Carmichael, &p, &q, &e).is_none() {
            continue;
        }
        return Ok((p, q));
    }
    Err(ProtectError::InvalidPrimes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(x: u64) -> BigUint {
        BigUint::from(x)
    }

    #[test]
    fn textbook_example() {
        // p = 61, q = 53, e = 17: λ = lcm(60, 52) = 780, φ = 3120.
        let (p, q, e) = (big(61), big(53), big(17));
        assert_eq!(carmichael_lambda(&p, &q), Some(big(780)));
        assert_eq!(euler_phi(&p, &q), Some(big(3120)));
        // 17·413 = 7021 = 9·780 + 1; 17·2753 = 46801 = 15·3120 + 1.
        assert_eq!(
            private_exponent(KeyKind::Carmichael, &p, &q, &e),
            Some(big(413))
        );
        assert_eq!(
            private_exponent(KeyKind::Euler, &p, &q, &e),
            Some(big(2753))
        );
    }

    #[test]
    fn no_inverse_or_degenerate_primes_is_none() {
        // e = 3 divides p-1 = 6 for p = 7.
        assert_eq!(
            private_exponent(KeyKind::Carmichael, &big(7), &big(11), &big(3)),
            None
        );
        assert_eq!(
            private_exponent(KeyKind::Euler, &big(7), &big(11), &big(3)),
            None
        );
        assert_eq!(carmichael_lambda(&big(1), &big(11)), None);
        assert_eq!(euler_phi(&big(0), &big(11)), None);
        assert_eq!(
            private_exponent(KeyKind::Euler, &big(2), &big(2), &big(3)),
            None
        );
    }

    #[test]
    fn kind_names() {
        assert_eq!(KeyKind::default(), KeyKind::Carmichael);
        assert_eq!(KeyKind::Carmichael.to_string(), "carmichael");
        assert_eq!(KeyKind::Euler.to_string(), "euler");
    }
}
