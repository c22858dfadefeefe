//! The measurements: shape and consistency of the reports (not speed, which is the machine's).

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use tfrc_protect::{
    bench_rsa, bench_rsa_with_progress, processing_cost, survey_d_bits, BenchStage, KeyKind,
    ProtectError, TimingStats, COST_HEADER_LEN,
};

#[test]
fn rsa_bench_reports_both_kinds_from_one_modulus() {
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let mut stages = Vec::new();
    let r = bench_rsa_with_progress(1024, 3, &mut rng, &mut |s| stages.push(s)).unwrap();
    assert_eq!(stages.first(), Some(&BenchStage::KeyGeneration));
    assert_eq!(
        stages.last(),
        Some(&BenchStage::Decrypting { done: 3, total: 3 })
    );
    assert_eq!(r.modulus_bits, 1024);
    assert_eq!(r.public_exponent, 65_537);
    assert_eq!(r.iterations, 3);
    assert!(r.crt_exponents_equal);
    assert!(r.gcd_bits >= 2, "gcd(p-1, q-1) >= 2");
    assert!(r.lambda_bits < r.phi_bits);
    let c = r.row(KeyKind::Carmichael).unwrap();
    let e = r.row(KeyKind::Euler).unwrap();
    assert!(c.d_bits <= e.d_bits && c.d_bits <= r.lambda_bits && e.d_bits <= r.phi_bits);
    assert_eq!((c.dp_bits, c.dq_bits), (e.dp_bits, e.dq_bits));
    assert!(c.d_words <= e.d_words && e.d_words <= 16);
    assert!(c.d_words * 64 >= c.d_bits && (c.d_words - 1) * 64 < c.d_bits);
    for row in [c, e] {
        for t in [row.with_crt, row.without_crt] {
            assert_eq!(t.samples, 3);
            assert!(t.min_ns > 0.0 && t.min_ns <= t.median_ns && t.median_ns <= t.max_ns);
        }
    }
}

#[test]
fn rsa_bench_rejects_bad_parameters() {
    let mut rng = ChaCha20Rng::seed_from_u64(10);
    assert!(matches!(
        bench_rsa(1024, 0, &mut rng),
        Err(ProtectError::InvalidParameter(_))
    ));
    assert!(matches!(
        bench_rsa(1024, 100_001, &mut rng),
        Err(ProtectError::InvalidParameter(_))
    ));
    assert!(matches!(
        bench_rsa(512, 1, &mut rng),
        Err(ProtectError::UnsupportedModulusSize { bits: 512 })
    ));
}

#[test]
fn processing_cost_seals_and_opens_whole_batches() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let c = processing_cost(1000, 100, &mut rng).unwrap();
    assert_eq!(c.payload_len, 1000);
    assert_eq!(c.header_len, COST_HEADER_LEN);
    assert_eq!(c.packets, 128);
    assert_eq!(c.seal.samples, 2);
    assert!(c.seal.median_ns > 0.0 && c.open.median_ns > 0.0);
    assert_eq!(c.seal_open_ns, c.seal.median_ns + c.open.median_ns);
    assert_eq!(c.per_packet().as_nanos(), c.seal_open_ns.round() as u128);
    assert!(processing_cost(0, 1, &mut rng).is_ok());
    assert!(processing_cost(1000, 0, &mut rng).is_err());
    assert!(processing_cost(70_000, 1, &mut rng).is_err());
}

#[test]
fn timing_stats_quantiles() {
    let v: Vec<f64> = (1..=10).map(f64::from).rev().collect();
    let t = TimingStats::from_ns(&v).unwrap();
    assert_eq!(t.samples, 10);
    assert_eq!((t.min_ns, t.max_ns), (1.0, 10.0));
    assert!((t.median_ns - 5.5).abs() < 1e-12);
    assert!((t.p10_ns - 1.9).abs() < 1e-12);
    assert!((t.p90_ns - 9.1).abs() < 1e-12);
    assert!((t.mean_ns - 5.5).abs() < 1e-12);
    assert_eq!(TimingStats::from_ns(&[4.0]).unwrap().median_ns, 4.0);
    assert!(TimingStats::from_ns(&[]).is_none());
    assert!(TimingStats::from_ns(&[1.0, f64::NAN]).is_none());
}

#[test]
fn d_bits_survey_is_consistent() {
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let mut done = 0;
    let s = survey_d_bits(1024, 6, &mut rng, &mut |n| done = n).unwrap();
    assert_eq!((s.keys, s.modulus_bits, done), (6, 1024, 6));
    let (c, e) = (s.carmichael_d_bits, s.euler_d_bits);
    assert!(c.min <= c.max && e.min <= e.max && c.max <= 1023 && e.max <= 1024);
    assert!(c.mean <= e.mean);
    assert!((s.mean_saving_bits - (e.mean - c.mean)).abs() < 1e-9);
    assert!(s.gcd_bits.min >= 2);
    assert!(s.carmichael_shorter <= s.keys);
    assert!(survey_d_bits(1024, 0, &mut rng, &mut |_| {}).is_err());
    assert!(survey_d_bits(100, 1, &mut rng, &mut |_| {}).is_err());
}
