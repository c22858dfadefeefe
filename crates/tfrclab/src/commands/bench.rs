//! `tfrclab bench`: measurements. `bench rsa` times RSA decryption for Carmichael and Euler
//! private exponents, with and without CRT, and the per-packet AEAD cost (seed 000 E6).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;
use tfrc_protect::{
    bench_rsa_with_progress, processing_cost, survey_d_bits, BenchStage, DBitsSurvey, KeyKind,
    ProcessingCost, RsaBenchReport, TimingStats,
};

/// Arguments of `tfrclab bench`.
#[derive(Parser, Debug)]
// A missing form is a usage error (one line, exit 2), not a help page.
#[command(arg_required_else_help = false)]
pub struct Args {
    // One variant per form. A form with positional arguments (`bench [SCENARIO...]`) can be
    // added beside these by making this an `Option` and setting
    // `args_conflicts_with_subcommands`.
    #[command(subcommand)]
    form: Form,
}

/// The forms of `tfrclab bench`.
#[derive(Subcommand, Debug)]
enum Form {
    /// RSA decryption time for Carmichael vs Euler private exponents, with and without CRT,
    /// and the AEAD cost per packet (seed 000 E6).
    Rsa(RsaArgs),
}

/// Arguments of `tfrclab bench rsa`.
#[derive(Parser, Debug)]
struct RsaArgs {
    /// RSA modulus size in bits.
    #[arg(long, value_name = "N", default_value_t = tfrc_protect::DEFAULT_MODULUS_BITS,
          value_parser = bits)]
    bits: usize,
    /// Timed decryptions per (key kind, CRT) configuration.
    #[arg(long, value_name = "N", default_value_t = 200,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    iterations: u32,
    /// Payload size of the AEAD per-packet cost measurement, in bytes.
    #[arg(long = "packet-bytes", value_name = "BYTES", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(0..=65_535))]
    packet_bytes: u32,
    /// Further key pairs drawn only to survey the bit lengths of d (one pair says little).
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(0..=10_000))]
    keys: u32,
    /// Seed of the ChaCha20 RNG that draws the primes, plaintexts and session key.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

fn bits(v: &str) -> Result<usize, String> {
    let b: usize = v
        .trim()
        .parse()
        .map_err(|_| format!("'{v}' is not a whole number of bits"))?;
    let (lo, hi) = (
        tfrc_protect::MIN_MODULUS_BITS,
        tfrc_protect::MAX_MODULUS_BITS,
    );
    if !(lo..=hi).contains(&b) {
        return Err(format!("{b} is outside {lo}..={hi}"));
    }
    Ok(b)
}

/// Packets whose seal+open time is measured (in batches of 64).
const AEAD_PACKETS: usize = 64 * 1000;

#[derive(Serialize)]
struct RsaOutput {
    seed: u64,
    rsa: RsaBenchReport,
    /// Carmichael median / Euler median: below 1 means the Carmichael key is faster.
    carmichael_over_euler_with_crt: f64,
    carmichael_over_euler_without_crt: f64,
    aead: ProcessingCost,
    /// Absent with `--keys 0`.
    d_bits_survey: Option<DBitsSurvey>,
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    match &args.form {
        Form::Rsa(a) => run_rsa(a),
    }
}

fn run_rsa(args: &RsaArgs) -> anyhow::Result<ExitCode> {
    let progress = Progress::start();
    let status = progress.status.clone();
    let measured = measure(args, &mut |s| {
        if let Ok(mut g) = status.lock() {
            *g = s;
        }
    });
    progress.finish();
    let (rsa, aead, d_bits_survey) = measured?;

    let ratio = |f: fn(&tfrc_protect::RsaBenchRow) -> TimingStats| -> f64 {
        match (rsa.row(KeyKind::Carmichael), rsa.row(KeyKind::Euler)) {
            (Some(c), Some(e)) => f(c).median_ns / f(e).median_ns,
            _ => f64::NAN,
        }
    };
    let out = RsaOutput {
        seed: args.seed,
        carmichael_over_euler_with_crt: ratio(|r| r.with_crt),
        carmichael_over_euler_without_crt: ratio(|r| r.without_crt),
        rsa,
        aead,
        d_bits_survey,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_table(&out);
    }
    Ok(ExitCode::SUCCESS)
}

type Measured = (RsaBenchReport, ProcessingCost, Option<DBitsSurvey>);

fn measure(
    args: &RsaArgs,
    set: &mut dyn FnMut(String),
) -> Result<Measured, tfrc_protect::ProtectError> {
    let mut rng = ChaCha20Rng::seed_from_u64(args.seed);
    let bits = args.bits;
    let rsa = bench_rsa_with_progress(bits, args.iterations as usize, &mut rng, &mut |stage| {
        set(match stage {
            BenchStage::KeyGeneration => format!("generating a {bits}-bit prime pair"),
            BenchStage::Decrypting { done, total } => {
                format!("decrypting: round {done}/{total} (4 decryptions a round)")
            }
        })
    })?;
    set("timing the AEAD per packet".to_string());
    let aead = processing_cost(args.packet_bytes as usize, AEAD_PACKETS, &mut rng)?;
    let keys = args.keys as usize;
    let survey = if keys == 0 {
        None
    } else {
        Some(survey_d_bits(bits, keys, &mut rng, &mut |done| {
            set(format!("surveying d: key pair {done}/{keys}"))
        })?)
    };
    Ok((rsa, aead, survey))
}

fn us(ns: f64) -> f64 {
    ns / 1000.0
}

fn cell(t: &TimingStats) -> String {
    format!(
        "{:.1} [{:.1}–{:.1}]",
        us(t.median_ns),
        us(t.p10_ns),
        us(t.p90_ns)
    )
}

fn print_table(out: &RsaOutput) {
    let r = &out.rsa;
    println!(
        "RSA-OAEP(SHA-256) decryption, {}-bit modulus, e = {}, seed {}: {} timed decryptions per cell",
        r.modulus_bits, r.public_exponent, out.seed, r.iterations
    );
    println!(
        "lambda(n) {} bits, phi(n) {} bits, gcd(p-1, q-1) {} bits; CRT exponents equal for both kinds: {}",
        r.lambda_bits,
        r.phi_bits,
        r.gcd_bits,
        if r.crt_exponents_equal { "yes" } else { "NO" }
    );
    println!();
    println!(
        "{:<11} {:>6} {:>7} {:>12}  {:<28} {:<28}",
        "key kind",
        "d bits",
        "d words",
        "d mod p-1",
        "with CRT µs median [p10–p90]",
        "without CRT µs"
    );
    for row in &r.rows {
        println!(
            "{:<11} {:>6} {:>7} {:>12}  {:<28} {:<28}",
            row.kind.name(),
            row.d_bits,
            row.d_words,
            format!("{} bits", row.dp_bits),
            cell(&row.with_crt),
            cell(&row.without_crt)
        );
    }
    println!();
    println!(
        "Carmichael/Euler median time: with CRT {:.4}, without CRT {:.4} (below 1 = Carmichael faster)",
        out.carmichael_over_euler_with_crt, out.carmichael_over_euler_without_crt
    );
    if let Some(s) = &out.d_bits_survey {
        let (c, e) = (&s.carmichael_d_bits, &s.euler_d_bits);
        println!(
            "d bits over {} further key pairs: carmichael mean {:.2} [{}–{}], euler mean {:.2} [{}–{}]; \
             mean saving {:.2} bits, carmichael shorter in {}/{}; gcd(p-1, q-1) mean {:.2} bits",
            s.keys,
            c.mean,
            c.min,
            c.max,
            e.mean,
            e.min,
            e.max,
            s.mean_saving_bits,
            s.carmichael_shorter,
            s.keys,
            s.gcd_bits.mean
        );
    }
    let a = &out.aead;
    println!(
        "AEAD ChaCha20-Poly1305 per {}-B packet ({}-B header as AD): seal {:.2} µs + open {:.2} µs = {:.2} µs (median over {} packets)",
        a.payload_len,
        a.header_len,
        us(a.seal.median_ns),
        us(a.open.median_ns),
        us(a.seal_open_ns),
        a.packets
    );
}

/// Progress on stderr, shown only once a run has lasted more than two seconds.
struct Progress {
    status: Arc<Mutex<String>>,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<bool>>,
}

impl Progress {
    const QUIET_FOR: Duration = Duration::from_secs(2);

    fn start() -> Self {
        let status = Arc::new(Mutex::new(String::new()));
        let done = Arc::new(AtomicBool::new(false));
        let (s, d) = (status.clone(), done.clone());
        let thread = std::thread::spawn(move || {
            let t0 = Instant::now();
            let tty = std::io::stderr().is_terminal();
            // A terminal gets one line rewritten in place; a log gets a line every 10 s.
            let every = if tty {
                Duration::from_millis(250)
            } else {
                Duration::from_secs(10)
            };
            let mut last: Option<Instant> = None;
            let mut shown = false;
            while !d.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                let now = Instant::now();
                if now - t0 < Self::QUIET_FOR || last.is_some_and(|l| now - l < every) {
                    continue;
                }
                last = Some(now);
                let msg = s.lock().map(|g| g.clone()).unwrap_or_default();
                let mut e = std::io::stderr().lock();
                let secs = (now - t0).as_secs();
                let _ = if tty {
                    write!(e, "\r\x1b[Kbench rsa: {msg} ({secs} s)")
                } else {
                    writeln!(e, "bench rsa: {msg} ({secs} s)")
                };
                shown = true;
            }
            shown && tty
        });
        Self {
            status,
            done,
            thread: Some(thread),
        }
    }

    fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            if t.join().unwrap_or(false) {
                // Clear the progress line so that only the results stay on screen.
                eprint!("\r\x1b[K");
            }
        }
    }
}
