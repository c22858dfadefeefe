//! Key generation: both private exponents, checked against number theory and the `rsa` crate.

use num_integer::Integer;
use num_traits::{One, Zero};
use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rsa::traits::PrivateKeyParts;
use rsa::{Oaep, RsaPrivateKey};
use sha2::Sha256;
use tfrc_protect::{
    carmichael_lambda, euler_phi, private_exponent, BigUint, KeyKind, ProtectError, RsaKeyPair,
    PUBLIC_EXPONENT,
};

const BITS: usize = 1024;

fn pair(seed: u64) -> (RsaKeyPair, RsaKeyPair) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    RsaKeyPair::generate_pair(BITS, &mut rng).expect("key generation")
}

#[test]
fn exponents_invert_e_modulo_lambda_and_phi() {
    for seed in 0..4 {
        let (c, eu) = pair(seed);
        let e = BigUint::from(PUBLIC_EXPONENT);
        let lambda = c.lambda();
        let phi = c.phi();
        assert_eq!(c.n(), eu.n());
        assert_eq!(c.modulus_bits(), BITS);
        assert_eq!((c.d() * &e) % &lambda, BigUint::one(), "seed {seed}");
        assert_eq!((eu.d() * &e) % &phi, BigUint::one(), "seed {seed}");
        assert!(c.d() < &lambda && eu.d() < &phi);
        // φ = λ·gcd(p-1, q-1), and the gcd is at least 2 (both p-1 and q-1 are even).
        let [p, q] = c.primes();
        let g = (p - 1u32).gcd(&(q - 1u32));
        assert_eq!(&lambda * &g, phi);
        assert!(g >= BigUint::from(2u8));
    }
}

#[test]
fn carmichael_d_is_euler_d_reduced_mod_lambda() {
    for seed in 10..14 {
        let (c, eu) = pair(seed);
        assert_eq!(&(eu.d() % c.lambda()), c.d(), "seed {seed}");
        assert!(c.d() <= eu.d());
        assert!(c.d_bits() <= eu.d_bits());
        assert_eq!(c.d_bits(), c.d().bits());
        assert_eq!(
            c.crt_exponents(),
            eu.crt_exponents(),
            "CRT exponents differ"
        );
    }
}

#[test]
fn exponents_match_the_rsa_crates_own_constructions() {
    // `from_p_q` is the library's Carmichael path, `from_primes` its Euler path.
    let (c, eu) = pair(20);
    let [p, q] = c.primes();
    let e = BigUint::from(PUBLIC_EXPONENT);
    let lib_c = RsaPrivateKey::from_p_q(p.clone(), q.clone(), e.clone()).unwrap();
    let lib_e = RsaPrivateKey::from_primes(vec![p.clone(), q.clone()], e).unwrap();
    assert_eq!(lib_c.d(), c.d());
    assert_eq!(lib_e.d(), eu.d());
}

#[test]
fn the_rsa_crates_generator_uses_euler() {
    // Documented claim: RsaPrivateKey::new reduces d modulo φ(n). Usually φ ≠ λ-reduced d.
    let mut rng = ChaCha20Rng::seed_from_u64(30);
    let mut euler_like = 0;
    for _ in 0..3 {
        let k = RsaPrivateKey::new(&mut rng, BITS).unwrap();
        let (p, q) = (&k.primes()[0], &k.primes()[1]);
        let e = BigUint::from(PUBLIC_EXPONENT);
        let d_phi = private_exponent(KeyKind::Euler, p, q, &e).unwrap();
        if k.d() == &d_phi {
            euler_like += 1;
        }
    }
    assert_eq!(euler_like, 3);
}

#[test]
fn both_kinds_decrypt_the_same_ciphertexts_with_and_without_crt() {
    let (c, eu) = pair(40);
    let public = c.public_key();
    assert_eq!(public, eu.public_key());
    let mut rng = ChaCha20Rng::seed_from_u64(41);
    for i in 0..4u8 {
        let msg = [i; 40];
        let ct = public
            .encrypt(&mut rng, Oaep::new::<Sha256>(), &msg)
            .unwrap();
        for key in [&c, &eu] {
            let with = key
                .private_key()
                .decrypt(Oaep::new::<Sha256>(), &ct)
                .unwrap();
            let without = key
                .private_key_without_crt()
                .decrypt(Oaep::new::<Sha256>(), &ct)
                .unwrap();
            assert_eq!(with, msg);
            assert_eq!(without, msg);
        }
    }
}

#[test]
fn with_kind_keeps_the_primes() {
    let mut rng = ChaCha20Rng::seed_from_u64(50);
    let c = RsaKeyPair::generate(KeyKind::Carmichael, BITS, &mut rng).unwrap();
    assert_eq!(c.kind(), KeyKind::Carmichael);
    let eu = c.with_kind(KeyKind::Euler).unwrap();
    assert_eq!(eu.kind(), KeyKind::Euler);
    assert_eq!(eu.n(), c.n());
    assert_eq!(eu.e(), c.e());
    assert_eq!(&(eu.d() % c.lambda()), c.d());
    // Debug must not leak d.
    let dbg = format!("{c:?}");
    assert!(!dbg.contains(&c.d().to_string()));
}

#[test]
fn rejects_unsupported_sizes_and_bad_primes() {
    let mut rng = ChaCha20Rng::seed_from_u64(60);
    for bits in [0, 1, 512, 1023, 4097, usize::MAX] {
        assert!(matches!(
            RsaKeyPair::generate(KeyKind::Carmichael, bits, &mut rng),
            Err(ProtectError::UnsupportedModulusSize { bits: b }) if b == bits
        ));
    }
    let p = BigUint::from(1_000_003u32);
    assert!(matches!(
        RsaKeyPair::from_primes(KeyKind::Euler, p.clone(), p.clone()),
        Err(ProtectError::InvalidPrimes)
    ));
    // A prime r with 65537 | r-1: e has no inverse, for either kind.
    let r = (1u64..)
        .map(|k| 65_537 * k + 1)
        .find(|&r| is_prime(r))
        .unwrap();
    for kind in KeyKind::ALL {
        assert!(matches!(
            RsaKeyPair::from_primes(kind, BigUint::from(r), p.clone()),
            Err(ProtectError::InvalidPrimes)
        ));
    }
    // 0 and 1 are not primes; no panic, an error.
    assert!(RsaKeyPair::from_primes(KeyKind::Carmichael, BigUint::zero(), p.clone()).is_err());
    assert!(RsaKeyPair::from_primes(KeyKind::Carmichael, BigUint::one(), p).is_err());
}

fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| n % d != 0)
}

fn small_primes() -> Vec<u64> {
    (3..1000).filter(|&n| is_prime(n)).collect()
}

/// Modular inverse by search: an oracle independent of the bigint library.
fn brute_inverse(e: u64, m: u64) -> Option<u64> {
    (1..m).find(|d| (d * e) % m == 1)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

proptest! {
    #[test]
    fn small_prime_exponents_agree_with_brute_force(
        i in 0usize..200, j in 0usize..200, e in prop::sample::select(vec![3u64, 5, 17, 257, 65_537]),
    ) {
        let primes = small_primes();
        let (p, q) = (primes[i % primes.len()], primes[j % primes.len()]);
        prop_assume!(p != q);
        let lambda = (p - 1) / gcd(p - 1, q - 1) * (q - 1);
        let phi = (p - 1) * (q - 1);
        let (bp, bq, be) = (BigUint::from(p), BigUint::from(q), BigUint::from(e));
        prop_assert_eq!(carmichael_lambda(&bp, &bq), Some(BigUint::from(lambda)));
        prop_assert_eq!(euler_phi(&bp, &bq), Some(BigUint::from(phi)));
        let d_l = private_exponent(KeyKind::Carmichael, &bp, &bq, &be);
        let d_p = private_exponent(KeyKind::Euler, &bp, &bq, &be);
        prop_assert_eq!(d_l.clone(), brute_inverse(e % lambda, lambda).map(BigUint::from));
        prop_assert_eq!(d_p.clone(), brute_inverse(e % phi, phi).map(BigUint::from));
        if let (Some(dl), Some(dp)) = (d_l, d_p) {
            prop_assert_eq!(&dp % BigUint::from(lambda), dl.clone());
            prop_assert!(dl <= dp);
        }
    }
}
