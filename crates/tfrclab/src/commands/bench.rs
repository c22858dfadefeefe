//! `tfrclab bench`: measurements. `bench [--vs-ns2] [SCENARIO...]` times the simulator on
//! scenario files, alone or against NS-2.35 (`lab::bench`); `bench scaling` runs the dumbbell
//! grid; `bench rsa` times RSA decryption for Carmichael and Euler private exponents, with and
//! without CRT, and the per-packet AEAD cost (seed 000 E6).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
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
// A form name (`rsa`, `scaling`) selects that form; anything else is a scenario file.
#[command(arg_required_else_help = false, args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    form: Option<Form>,
    #[command(flatten)]
    speed: SpeedArgs,
}

/// Arguments of `tfrclab bench [SCENARIO...]`.
#[derive(clap::Args, Debug)]
struct SpeedArgs {
    /// Scenario files to time (default: every `scenarios/bench/*.toml`).
    #[arg(value_name = "SCENARIO")]
    scenarios: Vec<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
    /// Write `bench.json` (every repetition's measurements) into DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Options shared by `bench` and `bench scaling`.
#[derive(clap::Args, Debug)]
struct CommonArgs {
    /// Also run NS-2 on each scenario's untraced export (same simulated time), alternating
    /// tfrclab and ns run by run, and report the NS-2/tfrclab ratio.
    #[arg(long = "vs-ns2")]
    vs_ns2: bool,
    /// Repetitions per scenario (pairs with --vs-ns2).
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    reps: u32,
    /// The NS-2.35 binary.
    #[arg(long, value_name = "PATH", default_value = "ns")]
    ns: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Time tfrclab with packet conservation and link counters only: no per-flow recorders
    /// (time series, delay quantiles) or queue gauges, compiled out of the event loop. NS-2
    /// untraced keeps no statistics either; the default keeps every statistic `run` reports.
    #[arg(long)]
    counters_only: bool,
}

impl CommonArgs {
    fn options(&self) -> lab::bench::Options {
        lab::bench::Options {
            reps: self.reps as usize,
            vs_ns2: self.vs_ns2,
            ns: self.ns.clone(),
            counters_only: self.counters_only,
        }
    }
}

/// The forms of `tfrclab bench`.
#[derive(Subcommand, Debug)]
enum Form {
    /// RSA decryption time for Carmichael vs Euler private exponents, with and without CRT,
    /// and the AEAD cost per packet (seed 000 E6).
    Rsa(RsaArgs),
    /// The scaling suite: dumbbells with N flows × bottleneck bandwidths × TCP/TFRC mixes, 10
    /// simulated seconds each; wall time, packet-hops/s and peak memory per case, plotted
    /// (report.html, scaling.json, scaling.csv under --out).
    Scaling(ScalingArgs),
    /// Run one scenario untraced and print its counters as JSON (what `bench` times).
    #[command(hide = true)]
    Once {
        /// The scenario file.
        scenario: PathBuf,
        /// Packet conservation and link counters only (see `bench --counters-only`).
        #[arg(long)]
        counters_only: bool,
    },
    /// Run a command as the only child and print its wall time, CPU time and peak RSS as JSON.
    #[command(hide = true)]
    Measure {
        /// Working directory of the command.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// The command and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        cmd: Vec<String>,
    },
}

/// Arguments of `tfrclab bench scaling`.
#[derive(Parser, Debug)]
struct ScalingArgs {
    /// Numbers of flows.
    #[arg(long, value_name = "N,...", value_delimiter = ',', default_values_t = [1usize, 10, 100, 1000],
          value_parser = flow_count)]
    flows: Vec<usize>,
    /// Bottleneck bandwidths.
    #[arg(long, value_name = "BW,...", value_delimiter = ',',
          default_values = ["10Mbps", "1Gbps", "10Gbps"], value_parser = bandwidth)]
    bandwidths: Vec<f64>,
    /// Flow mixes: `tcp` (all TCP NewReno), `tfrc` (all TFRC), `mixed` (half each).
    #[arg(long, value_name = "MIX,...", value_delimiter = ',',
          default_values = ["tcp", "mixed"], value_parser = lab::bench::grid::Mix::parse)]
    mixes: Vec<lab::bench::grid::Mix>,
    /// Simulated seconds per case.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 10.0,
        allow_negative_numbers = true
    )]
    duration: f64,
    /// Output folder: scenarios/, scaling.json, scaling.csv, report.html.
    #[arg(long, value_name = "DIR", default_value = "out/bench-scaling")]
    out: PathBuf,
    /// Only write the cases' scenario files into DIR, run nothing.
    #[arg(long, value_name = "DIR")]
    write: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

/// A number of flows for the scaling grid: 1 to 100,000 (a dumbbell needs a sender).
fn flow_count(v: &str) -> Result<usize, String> {
    match v.trim().parse::<usize>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err(format!("'{v}' is not a number of flows from 1 to 100000")),
    }
}

fn bandwidth(v: &str) -> Result<f64, String> {
    let t = v.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num
        .parse()
        .map_err(|_| format!("'{v}' is not a bandwidth (e.g. 10Mbps, 1Gbps, 1e9)"))?;
    let k = match unit {
        "" | "bps" | "b" => 1.0,
        "kbps" | "kb" | "Kb" => 1e3,
        "Mbps" | "Mb" => 1e6,
        "Gbps" | "Gb" => 1e9,
        _ => {
            return Err(format!(
                "'{v}': unknown unit {unit:?} (bps, kbps, Mbps, Gbps)"
            ))
        }
    };
    if !(x * k > 0.0 && (x * k).is_finite()) {
        return Err(format!("'{v}' must be a positive bandwidth"));
    }
    Ok(x * k)
}

/// Arguments of `tfrclab bench rsa`.
#[derive(Parser, Debug)]
struct RsaArgs {
    /// RSA modulus size in bits.
    #[arg(long, value_name = "N", default_value_t = tfrc_protect::DEFAULT_MODULUS_BITS,
          value_parser = super::rsa_modulus_bits)]
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
        Some(Form::Rsa(a)) => run_rsa(a),
        Some(Form::Scaling(a)) => run_scaling(a),
        Some(Form::Once {
            scenario,
            counters_only,
        }) => {
            // Bad input exits 2 with the file's own message, as `run` and `bench` do.
            let t0 = Instant::now();
            let s = match crate::commands::run::load(scenario, &[]) {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
            let c = lab::bench::simulate_loaded(&s, t0, *counters_only)?;
            println!("{}", serde_json::to_string(&c)?);
            Ok(ExitCode::SUCCESS)
        }
        Some(Form::Measure { dir, cmd }) => {
            let (prog, rest) = cmd
                .split_first()
                .ok_or_else(|| anyhow::anyhow!("nothing to measure"))?;
            let stats = lab::bench::process::run_wrapper(prog, rest, dir.as_deref())?;
            println!("{}", serde_json::to_string(&stats)?);
            Ok(ExitCode::SUCCESS)
        }
        None => run_speed(&args.speed),
    }
}

/// The machine and what tfrclab measured, for the record: CPU model, logical CPUs, load
/// average, statistics kept.
fn machine(counters_only: bool) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".to_string());
    let stats = if counters_only {
        "counters only"
    } else {
        "every statistic"
    };
    format!("{cpu}, {n} logical CPUs, 1-min load average {load} at the start; tfrclab statistics: {stats}")
}

/// Progress on stderr: one line per step when stderr is a terminal, rewritten in place.
fn step(msg: String) {
    let mut e = std::io::stderr().lock();
    if std::io::stderr().is_terminal() {
        let _ = write!(e, "\r\x1b[Kbench: {msg}");
    }
}

fn clear_step() {
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[K");
    }
}

fn run_speed(args: &SpeedArgs) -> anyhow::Result<ExitCode> {
    let files = if args.scenarios.is_empty() {
        let dir = PathBuf::from("scenarios/bench");
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                eprintln!(
                    "error: no scenario given and cannot read {}: {e} (run from the repository root, or name scenario files)",
                    dir.display()
                );
                return Ok(ExitCode::from(crate::EXIT_BAD_INPUT));
            }
        };
        let mut v: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        v.sort();
        v
    } else {
        args.scenarios.clone()
    };
    // Refuse bad input before anything runs.
    for f in &files {
        let s = match crate::commands::run::load(f, &[]) {
            Ok(s) => s,
            Err(code) => return Ok(code),
        };
        if args.common.vs_ns2 {
            // The export error names the file itself.
            if let Err(e) = lab::ns2::export(&s, &lab::ns2::ExportOptions::untraced()) {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(crate::EXIT_BAD_INPUT));
            }
        }
    }
    let opts = args.common.options();
    let machine = machine(args.common.counters_only);
    let mut rows = Vec::with_capacity(files.len());
    for f in &files {
        rows.push(lab::bench::bench_scenario(f, &opts, &mut step)?);
    }
    clear_step();
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)?;
        let doc = serde_json::json!({ "machine": machine, "scenarios": rows });
        std::fs::write(dir.join("bench.json"), serde_json::to_string_pretty(&doc)?)?;
    }
    if args.common.json {
        let doc = serde_json::json!({ "machine": machine, "scenarios": rows });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!("{machine}; {} repetition(s)", opts.reps);
        print!("{}", lab::bench::text_table(&rows));
    }
    Ok(ExitCode::SUCCESS)
}

fn run_scaling(args: &ScalingArgs) -> anyhow::Result<ExitCode> {
    use lab::bench::{grid, scaling};
    if !(args.duration > 0.0 && args.duration.is_finite()) {
        eprintln!("error: --duration must be a positive number of seconds");
        return Ok(ExitCode::from(crate::EXIT_BAD_INPUT));
    }
    let cases = grid::cases(&args.flows, &args.bandwidths, &args.mixes, args.duration);
    if let Some(dir) = &args.write {
        let files = scaling::write_scenarios(&cases, dir)?;
        println!(
            "wrote {} scenario files into {}",
            files.len(),
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let machine = machine(args.common.counters_only);
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let results = scaling::run(&cases, &args.out, &args.common.options(), &mut step)?;
    clear_step();
    let doc = serde_json::json!({ "machine": machine, "command": command, "cases": results });
    std::fs::write(
        args.out.join("scaling.json"),
        serde_json::to_string_pretty(&doc)?,
    )?;
    std::fs::write(args.out.join("scaling.csv"), scaling::csv(&results))?;
    scaling::report(&results, &machine, &command).write(&args.out.join("report.html"))?;
    if args.common.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!("{machine}; {} repetition(s)", args.common.reps);
        let rows: Vec<_> = results.into_iter().map(|r| r.bench).collect();
        print!("{}", lab::bench::text_table(&rows));
        println!(
            "wrote {}/{{report.html, scaling.json, scaling.csv, scenarios/}}",
            args.out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
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
