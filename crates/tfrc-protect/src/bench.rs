//! Measurements: RSA decryption time by key kind with and without CRT, and the per-packet
//! AEAD cost.
//!
//! Both functions read the monotonic clock (`std::time::Instant`); everything random still
//! comes from the caller's RNG. Numbers depend on the build: run them from a release build
//! (`cargo run --release -p tfrclab -- bench rsa`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use rand::{CryptoRng, RngCore};
use rsa::{Oaep, RsaPrivateKey};
use serde::Serialize;
use sha2::Sha256;

use crate::exchange::SessionKey;
use crate::keys::{KeyKind, RsaKeyPair, PUBLIC_EXPONENT};
use crate::packet::{Channel, Opener, Sealer};
use crate::ProtectError;

/// Most timed decryptions per configuration [`bench_rsa`] accepts.
pub const MAX_ITERATIONS: usize = 100_000;
/// Distinct ciphertexts the RSA benchmark cycles through.
const CIPHERTEXTS: usize = 16;
/// Packets timed together by [`processing_cost`], to keep clock reads out of the figure.
const BATCH: usize = 64;
/// Cleartext header length [`processing_cost`] authenticates: about a TFRC data header.
pub const COST_HEADER_LEN: usize = 16;

/// Summary of a set of timings, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TimingStats {
    /// Number of timings.
    pub samples: usize,
    /// Fastest.
    pub min_ns: f64,
    /// 10th percentile.
    pub p10_ns: f64,
    /// Median: the figure to quote.
    pub median_ns: f64,
    /// 90th percentile.
    pub p90_ns: f64,
    /// Slowest.
    pub max_ns: f64,
    /// Arithmetic mean.
    pub mean_ns: f64,
}

impl TimingStats {
    /// Summarise timings; `None` if there are none or one is not finite.
    pub fn from_ns(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let q = |f: f64| -> f64 {
            // Linear interpolation between closest ranks.
            let pos = f * (v.len() - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = pos.ceil() as usize;
            v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
        };
        Some(Self {
            samples: v.len(),
            min_ns: v[0],
            p10_ns: q(0.1),
            median_ns: q(0.5),
            p90_ns: q(0.9),
            max_ns: v[v.len() - 1],
            mean_ns: v.iter().sum::<f64>() / v.len() as f64,
        })
    }

    /// The median as a `Duration`.
    pub fn median(&self) -> Duration {
        Duration::from_nanos(self.median_ns.max(0.0).round() as u64)
    }
}

/// One key kind's row of the RSA benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RsaBenchRow {
    /// Which private exponent.
    pub kind: KeyKind,
    /// Bit length of `d`.
    pub d_bits: usize,
    /// 64-bit words of `d`. The library's `modpow` (num-bigint-dig 0.8, `monty_modpow`) runs
    /// a fixed 4-bit window over every word of the exponent, so without CRT its work follows
    /// this count, not `d_bits`.
    pub d_words: usize,
    /// Bit length of `d mod (p-1)`, the exponent CRT actually uses.
    pub dp_bits: usize,
    /// Bit length of `d mod (q-1)`.
    pub dq_bits: usize,
    /// RSA-OAEP decryption through the library's normal path (CRT values precomputed).
    pub with_crt: TimingStats,
    /// The same decryption with the CRT values cleared: the library computes `c^d mod n`.
    pub without_crt: TimingStats,
}

/// Result of [`bench_rsa`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RsaBenchReport {
    /// Modulus size in bits.
    pub modulus_bits: usize,
    /// Public exponent.
    pub public_exponent: u64,
    /// Timed decryptions per (kind, CRT) configuration.
    pub iterations: usize,
    /// Bit length of `λ(n)`.
    pub lambda_bits: usize,
    /// Bit length of `φ(n)`.
    pub phi_bits: usize,
    /// Bit length of `gcd(p-1, q-1) = φ/λ`: how many bits the Carmichael `d` can save.
    pub gcd_bits: usize,
    /// Whether both kinds have the same CRT exponents `d mod (p-1)`, `d mod (q-1)` (they must,
    /// computed here rather than assumed).
    pub crt_exponents_equal: bool,
    /// Carmichael row, then Euler row.
    pub rows: Vec<RsaBenchRow>,
}

impl RsaBenchReport {
    /// The row of one kind.
    pub fn row(&self, kind: KeyKind) -> Option<&RsaBenchRow> {
        self.rows.iter().find(|r| r.kind == kind)
    }
}

/// Where [`bench_rsa_with_progress`] is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchStage {
    /// Generating the prime pair (the slow part for large keys).
    KeyGeneration,
    /// Timing decryptions; `done` of `total` rounds (one round = one decryption per
    /// configuration).
    Decrypting {
        /// Rounds finished.
        done: usize,
        /// Rounds in all.
        total: usize,
    },
}

/// [`bench_rsa_with_progress`] without progress reports.
pub fn bench_rsa<R: CryptoRng + RngCore>(
    bits: usize,
    iterations: usize,
    rng: &mut R,
) -> Result<RsaBenchReport, ProtectError> {
    bench_rsa_with_progress(bits, iterations, rng, &mut |_| {})
}

/// Time RSA-OAEP (SHA-256) decryption of the same ciphertexts with a Carmichael and an
/// Euler key built from one prime pair, each with CRT (the library's precomputed
/// `d mod (p-1)`, `d mod (q-1)`) and without (`c^d mod n`, the library's `modpow`).
///
/// Decryptions are unblinded (`RsaPrivateKey::decrypt`), so the figure is the exponentiation
/// plus OAEP decoding and the library's re-encryption check, with no blinding noise. The four
/// configurations run interleaved, in rotating order, after one warm-up each, so clock drift
/// and cache effects fall on all of them alike. Every decryption is checked against its
/// plaintext.
pub fn bench_rsa_with_progress<R: CryptoRng + RngCore>(
    bits: usize,
    iterations: usize,
    rng: &mut R,
    progress: &mut dyn FnMut(BenchStage),
) -> Result<RsaBenchReport, ProtectError> {
    if iterations == 0 || iterations > MAX_ITERATIONS {
        return Err(ProtectError::InvalidParameter(
            "iterations must be in 1..=100000",
        ));
    }
    progress(BenchStage::KeyGeneration);
    let (carmichael, euler) = RsaKeyPair::generate_pair(bits, rng)?;

    let public = carmichael.public_key();
    let oaep = || Oaep::new::<Sha256>();
    let mut cases = Vec::with_capacity(CIPHERTEXTS);
    for _ in 0..CIPHERTEXTS.min(iterations) {
        let mut msg = [0u8; 32];
        rng.fill_bytes(&mut msg);
        let ct = public.encrypt(rng, oaep(), &msg)?;
        cases.push((msg, ct));
    }

    let keys: [(KeyKind, bool, RsaPrivateKey); 4] = [
        (KeyKind::Carmichael, true, carmichael.private_key().clone()),
        (
            KeyKind::Carmichael,
            false,
            carmichael.private_key_without_crt(),
        ),
        (KeyKind::Euler, true, euler.private_key().clone()),
        (KeyKind::Euler, false, euler.private_key_without_crt()),
    ];
    let decrypt = |key: &RsaPrivateKey, case: &([u8; 32], Vec<u8>)| -> Result<f64, ProtectError> {
        let t0 = Instant::now();
        let plain = key.decrypt(oaep(), black_box(&case.1))?;
        let ns = t0.elapsed().as_nanos() as f64;
        if plain.as_slice() != case.0.as_slice() {
            return Err(ProtectError::DecryptionMismatch);
        }
        Ok(ns)
    };

    for (_, _, key) in &keys {
        decrypt(key, &cases[0])?;
    }
    let mut samples: [Vec<f64>; 4] = Default::default();
    for i in 0..iterations {
        let case = &cases[i % cases.len()];
        for j in 0..keys.len() {
            let k = (i + j) % keys.len();
            samples[k].push(decrypt(&keys[k].2, case)?);
        }
        progress(BenchStage::Decrypting {
            done: i + 1,
            total: iterations,
        });
    }

    let stats =
        |k: usize| TimingStats::from_ns(&samples[k]).ok_or(ProtectError::DecryptionMismatch);
    let row = |pair: &RsaKeyPair, crt: usize, plain: usize| -> Result<RsaBenchRow, ProtectError> {
        let (dp, dq) = pair.crt_exponents();
        Ok(RsaBenchRow {
            kind: pair.kind(),
            d_bits: pair.d_bits(),
            d_words: pair.d_bits().div_ceil(64),
            dp_bits: dp.bits(),
            dq_bits: dq.bits(),
            with_crt: stats(crt)?,
            without_crt: stats(plain)?,
        })
    };
    let lambda = carmichael.lambda();
    let phi = carmichael.phi();
    let gcd = &phi / &lambda;
    Ok(RsaBenchReport {
        modulus_bits: carmichael.n().bits(),
        public_exponent: PUBLIC_EXPONENT,
        iterations,
        lambda_bits: lambda.bits(),
        phi_bits: phi.bits(),
        gcd_bits: gcd.bits(),
        crt_exponents_equal: carmichael.crt_exponents() == euler.crt_exponents(),
        rows: vec![row(&carmichael, 0, 1)?, row(&euler, 2, 3)?],
    })
}

/// Minimum, mean and maximum of a set of bit lengths.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BitStats {
    /// Shortest.
    pub min: usize,
    /// Mean.
    pub mean: f64,
    /// Longest.
    pub max: usize,
}

impl BitStats {
    fn of(v: &[usize]) -> Option<Self> {
        Some(Self {
            min: *v.iter().min()?,
            mean: v.iter().sum::<usize>() as f64 / v.len() as f64,
            max: *v.iter().max()?,
        })
    }
}

/// Bit lengths of `d` over many key pairs, from [`survey_d_bits`]: how much shorter the
/// Carmichael exponent is, since one key pair says little.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DBitsSurvey {
    /// Modulus size in bits.
    pub modulus_bits: usize,
    /// Key pairs drawn.
    pub keys: usize,
    /// Bit length of `d = e⁻¹ mod λ(n)`.
    pub carmichael_d_bits: BitStats,
    /// Bit length of `d = e⁻¹ mod φ(n)` for the same primes.
    pub euler_d_bits: BitStats,
    /// Bit length of `gcd(p-1, q-1) = φ/λ`.
    pub gcd_bits: BitStats,
    /// Mean of (Euler d bits − Carmichael d bits).
    pub mean_saving_bits: f64,
    /// Pairs where the Carmichael `d` is strictly shorter.
    pub carmichael_shorter: usize,
}

/// Draw `keys` prime pairs of `bits` bits and record the bit lengths of both private
/// exponents and of `gcd(p-1, q-1)`. `progress` is called with the number of pairs done.
pub fn survey_d_bits<R: CryptoRng + RngCore>(
    bits: usize,
    keys: usize,
    rng: &mut R,
    progress: &mut dyn FnMut(usize),
) -> Result<DBitsSurvey, ProtectError> {
    if keys == 0 || keys > 10_000 {
        return Err(ProtectError::InvalidParameter("keys must be in 1..=10000"));
    }
    let (mut c, mut e, mut g) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..keys {
        let (kc, ke) = RsaKeyPair::generate_pair(bits, rng)?;
        c.push(kc.d_bits());
        e.push(ke.d_bits());
        g.push((kc.phi() / kc.lambda()).bits());
        progress(i + 1);
    }
    let saving: usize = e.iter().zip(&c).map(|(e, c)| e.saturating_sub(*c)).sum();
    let none = || ProtectError::InvalidParameter("no keys");
    Ok(DBitsSurvey {
        modulus_bits: bits,
        keys,
        carmichael_d_bits: BitStats::of(&c).ok_or_else(none)?,
        euler_d_bits: BitStats::of(&e).ok_or_else(none)?,
        gcd_bits: BitStats::of(&g).ok_or_else(none)?,
        mean_saving_bits: saving as f64 / keys as f64,
        carmichael_shorter: c.iter().zip(&e).filter(|(c, e)| c < e).count(),
    })
}

/// Per-packet cost of protection, from [`processing_cost`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProcessingCost {
    /// Payload bytes per packet.
    pub payload_len: usize,
    /// Cleartext header bytes authenticated as associated data.
    pub header_len: usize,
    /// Packets sealed and opened.
    pub packets: usize,
    /// Time to seal one packet (per-packet mean of each batch of 64).
    pub seal: TimingStats,
    /// Time to open one packet (per-packet mean of each batch of 64).
    pub open: TimingStats,
    /// Median seal plus median open, in nanoseconds: the default per-packet protection cost
    /// for the simulator.
    pub seal_open_ns: f64,
}

impl ProcessingCost {
    /// [`seal_open_ns`](Self::seal_open_ns) as a `Duration`.
    pub fn per_packet(&self) -> Duration {
        Duration::from_nanos(self.seal_open_ns.max(0.0).round() as u64)
    }
}

/// Measure sealing and opening `packets` packets of `payload_len` bytes (rounded up to
/// whole batches of 64) with a fresh session key, a [`COST_HEADER_LEN`]-byte header, and the
/// opener's replay window in use, as in a real session.
pub fn processing_cost<R: CryptoRng + RngCore>(
    payload_len: usize,
    packets: usize,
    rng: &mut R,
) -> Result<ProcessingCost, ProtectError> {
    if packets == 0 || packets > 100_000_000 {
        return Err(ProtectError::InvalidParameter(
            "packets must be in 1..=100000000",
        ));
    }
    if payload_len > 65_535 {
        return Err(ProtectError::InvalidParameter(
            "payload_len must be at most 65535",
        ));
    }
    let key = SessionKey::generate(rng);
    let mut sealer = Sealer::new(&key, Channel::Data);
    let mut opener = Opener::new(&key, Channel::Data);
    let mut header = [0u8; COST_HEADER_LEN];
    rng.fill_bytes(&mut header);
    let mut payload = vec![0u8; payload_len];
    rng.fill_bytes(&mut payload);

    let batches = packets.div_ceil(BATCH);
    let mut sealed: Vec<Vec<u8>> = (0..BATCH)
        .map(|_| Vec::with_capacity(payload_len + crate::SEALED_OVERHEAD))
        .collect();
    let mut seal_ns = Vec::with_capacity(batches);
    let mut open_ns = Vec::with_capacity(batches);
    for _ in 0..batches {
        for buf in sealed.iter_mut() {
            buf.clear();
        }
        let t0 = Instant::now();
        for buf in sealed.iter_mut() {
            sealer
                .seal_into(&header, black_box(&payload), buf)
                .map_err(|_| ProtectError::Packet("seal failed"))?;
        }
        seal_ns.push(t0.elapsed().as_nanos() as f64 / BATCH as f64);

        let t0 = Instant::now();
        let mut ok = true;
        for buf in &sealed {
            match opener.open(&header, black_box(buf)) {
                Ok(p) => ok &= p.payload.len() == payload_len,
                Err(_) => ok = false,
            }
        }
        open_ns.push(t0.elapsed().as_nanos() as f64 / BATCH as f64);
        if !ok {
            return Err(ProtectError::Packet("a sealed packet did not open"));
        }
    }
    let seal = TimingStats::from_ns(&seal_ns).ok_or(ProtectError::Packet("no timings"))?;
    let open = TimingStats::from_ns(&open_ns).ok_or(ProtectError::Packet("no timings"))?;
    Ok(ProcessingCost {
        payload_len,
        header_len: COST_HEADER_LEN,
        packets: batches * BATCH,
        seal,
        open,
        seal_open_ns: seal.median_ns + open.median_ns,
    })
}
