//! Stateless retry tokens: address validation before a receiver keeps any state, as QUIC's
//! Retry (RFC 9000 §8.1.2). A token is the time it was minted and a truncated HMAC-SHA-256 of
//! that time, the client's address and the session id under a secret only the receiver
//! knows; a HELLO that echoes a fresh token proves that its sender receives at its source
//! address.

use hmac::{Hmac, Mac};
use rand::{CryptoRng, RngCore};
use sha2::Sha256;
use zeroize::Zeroize;

/// Bytes of a token: the minting time (u64 nanoseconds, big-endian) and 16 bytes of MAC.
pub const TOKEN_LEN: usize = 24;
const MAC_LEN: usize = 16;

type HmacSha256 = Hmac<Sha256>;

/// The receiver's token secret. Zeroed when dropped.
pub struct RetryTokens {
    secret: [u8; 32],
}

impl Drop for RetryTokens {
    fn drop(&mut self) {
        self.secret.zeroize();
    }
}

impl RetryTokens {
    /// A fresh secret from a cryptographic RNG.
    pub fn new<R: CryptoRng + RngCore>(rng: &mut R) -> RetryTokens {
        let mut secret = [0u8; 32];
        rng.fill_bytes(&mut secret);
        RetryTokens { secret }
    }

    fn mac(&self, at: u64, addr: &[u8], session: u64) -> HmacSha256 {
        let mut m = HmacSha256::new_from_slice(&self.secret).expect("HMAC takes any key length");
        m.update(&at.to_be_bytes());
        m.update(&session.to_be_bytes());
        m.update(addr);
        m
    }

    /// The token for a client at `addr` (its address and port, in any fixed encoding) asking
    /// for `session`, minted at `now_ns`.
    pub fn mint(&self, now_ns: u64, addr: &[u8], session: u64) -> [u8; TOKEN_LEN] {
        let mut t = [0u8; TOKEN_LEN];
        t[..8].copy_from_slice(&now_ns.to_be_bytes());
        let tag = self.mac(now_ns, addr, session).finalize().into_bytes();
        t[8..].copy_from_slice(&tag[..MAC_LEN]);
        t
    }

    /// Whether `token` was minted by this secret for `addr` and `session`, no more than
    /// `lifetime_ns` before `now_ns` (and not after it). The MAC is compared in constant time.
    pub fn check(
        &self,
        now_ns: u64,
        lifetime_ns: u64,
        token: &[u8],
        addr: &[u8],
        session: u64,
    ) -> bool {
        if token.len() != TOKEN_LEN {
            return false;
        }
        let mut a = [0u8; 8];
        a.copy_from_slice(&token[..8]);
        let at = u64::from_be_bytes(a);
        if at > now_ns || now_ns - at > lifetime_ns {
            return false;
        }
        self.mac(at, addr, session)
            .verify_truncated_left(&token[8..])
            .is_ok()
    }
}

/// A tag that tells two ends whether they share a clock without disclosing a host identifier:
/// HMAC-SHA-256 of the session id keyed with the host's boot id, truncated to 8 bytes. Two
/// ends on one host compute the same tag for a session; an observer learns nothing that
/// links two sessions.
pub fn clock_tag(boot_id: &[u8], session: u64) -> u64 {
    let mut m = HmacSha256::new_from_slice(boot_id).expect("HMAC takes any key length");
    m.update(&session.to_be_bytes());
    let d = m.finalize().into_bytes();
    let mut a = [0u8; 8];
    a.copy_from_slice(&d[..8]);
    u64::from_be_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::{rand_core::SeedableRng, ChaCha20Rng};

    #[test]
    fn tokens_bind_address_session_and_time() {
        let t = RetryTokens::new(&mut ChaCha20Rng::seed_from_u64(1));
        let tok = t.mint(1_000, b"10.0.0.1:5", 7);
        assert!(t.check(2_000, 5_000, &tok, b"10.0.0.1:5", 7));
        assert!(
            !t.check(2_000, 5_000, &tok, b"10.0.0.2:5", 7),
            "other address"
        );
        assert!(
            !t.check(2_000, 5_000, &tok, b"10.0.0.1:5", 8),
            "other session"
        );
        assert!(!t.check(7_000, 5_000, &tok, b"10.0.0.1:5", 7), "expired");
        assert!(
            !t.check(500, 5_000, &tok, b"10.0.0.1:5", 7),
            "from the future"
        );
        let mut bad = tok;
        bad[23] ^= 1;
        assert!(!t.check(2_000, 5_000, &bad, b"10.0.0.1:5", 7), "tampered");
        let other = RetryTokens::new(&mut ChaCha20Rng::seed_from_u64(2));
        assert!(
            !other.check(2_000, 5_000, &tok, b"10.0.0.1:5", 7),
            "other secret"
        );
        assert!(
            !t.check(2_000, 5_000, &tok[..20], b"10.0.0.1:5", 7),
            "short"
        );
    }

    #[test]
    fn clock_tags_match_only_on_one_host() {
        assert_eq!(clock_tag(b"boot-a", 1), clock_tag(b"boot-a", 1));
        assert_ne!(clock_tag(b"boot-a", 1), clock_tag(b"boot-b", 1));
        assert_ne!(clock_tag(b"boot-a", 1), clock_tag(b"boot-a", 2));
    }
}
