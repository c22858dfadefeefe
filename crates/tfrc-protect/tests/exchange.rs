//! RSA-OAEP session-key wrap and unwrap.

use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::sync::OnceLock;
use tfrc_protect::{
    decode_public_key, encode_public_key, wrap_session_key, Channel, KeyExchange, KeyKind, Opener,
    ProtectError, RsaKeyPair, Sealer,
};

const BITS: usize = 1024;

fn receiver() -> &'static KeyExchange {
    static K: OnceLock<KeyExchange> = OnceLock::new();
    K.get_or_init(|| {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        KeyExchange::generate(BITS, &mut rng).expect("key generation")
    })
}

#[test]
fn wrapped_key_unwraps_to_the_same_key_and_protects_packets() {
    let rx = receiver();
    assert_eq!(rx.key_pair().kind(), KeyKind::Carmichael);
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    // The public key travels as DER.
    let der = encode_public_key(&rx.public_key()).unwrap();
    let public = decode_public_key(&der).unwrap();
    assert_eq!(public, rx.public_key());

    let w = wrap_session_key(&public, &mut rng).unwrap();
    assert_eq!(w.wrapped.len(), BITS / 8);
    let key = rx.unwrap(&w.wrapped, &mut rng).unwrap();
    assert_eq!(key.as_bytes(), w.key.as_bytes());

    let mut sealer = Sealer::new(&w.key, Channel::Data);
    let mut opener = Opener::new(&key, Channel::Data);
    let sealed = sealer.seal(b"hdr", b"payload").unwrap();
    assert_eq!(opener.open(b"hdr", &sealed).unwrap().payload, b"payload");

    // Two wraps give two different keys (fresh randomness each time).
    let w2 = wrap_session_key(&public, &mut rng).unwrap();
    assert_ne!(w2.key.as_bytes(), w.key.as_bytes());
    assert_ne!(w2.wrapped, w.wrapped);
}

#[test]
fn euler_receiver_unwraps_too() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let eu = receiver().key_pair().with_kind(KeyKind::Euler).unwrap();
    let rx = KeyExchange::from_key_pair(eu);
    let w = wrap_session_key(&rx.public_key(), &mut rng).unwrap();
    // Same n and e: the Carmichael receiver unwraps the same ciphertext.
    let a = rx.unwrap(&w.wrapped, &mut rng).unwrap();
    let b = receiver().unwrap(&w.wrapped, &mut rng).unwrap();
    assert_eq!(a.as_bytes(), w.key.as_bytes());
    assert_eq!(b.as_bytes(), w.key.as_bytes());
}

#[test]
fn wrong_key_or_altered_ciphertext_fails_uniformly() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let other = KeyExchange::from_key_pair(
        RsaKeyPair::generate(KeyKind::Carmichael, BITS, &mut rng).unwrap(),
    );
    let w = wrap_session_key(&receiver().public_key(), &mut rng).unwrap();
    assert!(matches!(
        other.unwrap(&w.wrapped, &mut rng),
        Err(ProtectError::UnwrapFailed)
    ));
    for bit in [0, 7, 500, BITS - 1] {
        let mut bad = w.wrapped.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        assert!(matches!(
            receiver().unwrap(&bad, &mut rng),
            Err(ProtectError::UnwrapFailed)
        ));
    }
    assert!(matches!(
        receiver().unwrap(&w.wrapped[1..], &mut rng),
        Err(ProtectError::UnwrapFailed)
    ));
    assert!(matches!(
        receiver().unwrap(&[], &mut rng),
        Err(ProtectError::UnwrapFailed)
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_wrapped_bytes_never_unwrap_or_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        prop_assert!(receiver().unwrap(&bytes, &mut rng).is_err());
    }

    #[test]
    fn arbitrary_modulus_length_bytes_never_unwrap(bytes in prop::collection::vec(any::<u8>(), BITS / 8)) {
        // The right length reaches the RSA decryption and OAEP decoding.
        let mut rng = ChaCha20Rng::seed_from_u64(8);
        prop_assert!(matches!(receiver().unwrap(&bytes, &mut rng), Err(ProtectError::UnwrapFailed)));
    }

    #[test]
    fn arbitrary_public_key_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut rng = ChaCha20Rng::seed_from_u64(6);
        if let Ok(k) = decode_public_key(&bytes) {
            // Whatever decodes must also work as (or cleanly refuse to be) a wrapping key.
            let _ = wrap_session_key(&k, &mut rng);
        }
    }

    #[test]
    fn mutated_public_key_der_never_panics(pos in 0usize..200, val in any::<u8>()) {
        let der = encode_public_key(&receiver().public_key()).unwrap();
        let mut bad = der.clone();
        let i = pos % bad.len();
        bad[i] = val;
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        if let Ok(k) = decode_public_key(&bad) {
            let _ = wrap_session_key(&k, &mut rng);
        }
    }
}
