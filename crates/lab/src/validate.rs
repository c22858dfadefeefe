//! Cross-validation against NS-2.35: run a scenario in both simulators and compare the metrics.
//!
//! [`validate`] exports the scenario ([`crate::ns2::export`]), runs `ns` on the script in a
//! scratch directory (time-limited, stderr captured, cleaned up), reads NS-2's `trace-all`
//! output with [`netsim::trace::Ns2TraceReader`] into the same [`netsim::FlowRecorder`]s the
//! simulator fills, and computes both sides' per-flow metrics with the one metric code
//! `tfrclab run` uses ([`crate::summary::flow_input`] + [`crate::metrics::flow_metrics`]). The
//! tfrclab run happens while `ns` runs.
//!
//! The checks ([`compare`]), with the scenario's `[validate]` tolerances:
//! - per-flow throughput and summed throughput: relative difference `(tfrclab − NS-2) / NS-2`;
//! - per-flow mean one-way delay: relative difference;
//! - per-flow loss rate: absolute difference, within `max(loss × NS-2's rate, loss_abs)`;
//! - per-flow ECN mark rate (marked / received), for flows with marks on either side: absolute
//!   difference, within `max(marks × NS-2's rate, loss_abs)`.
//!
//! A scenario with `[validate] seeds = [...]` runs both simulators once per seed and compares
//! the means over the seeds: random scenarios (RED, Bernoulli loss, CBR jitter) draw different
//! random numbers in NS-2 and tfrclab, so they agree statistically, not run by run.

use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use netsim::trace::{Ns2Flow, Ns2TraceReader, TraceFormat};
use serde::{Deserialize, Serialize};

use crate::metrics::{self, FlowMetrics};
use crate::ns2::{export, ExportError, ExportOptions};
use crate::runner::{self, RunError, RunOptions};
use crate::summary;
use scenario::{Scenario, Tolerances};

/// The hint printed when `ns` cannot be found.
pub const INSTALL_HINT: &str = "install NS-2.35 with `apt-get install ns2` (Debian/Ubuntu), \
     or give the binary's path with --ns PATH";

/// How to run NS-2.
#[derive(Clone, Debug)]
pub struct Options {
    /// The `ns` binary (a name looked up on `PATH`, or a path).
    pub ns: PathBuf,
    /// Kill `ns` after this long (per run).
    pub timeout: Duration,
    /// Keep both simulators' traces (NS-2 `trace-all` format) and the exported script of each
    /// seed in this folder, for packet-by-packet comparison.
    pub keep_traces: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ns: PathBuf::from("ns"),
            timeout: Duration::from_secs(600),
            keep_traces: None,
        }
    }
}

/// Why a validation could not be carried out (as opposed to "carried out and failed").
#[derive(Debug)]
pub enum Error {
    /// The scenario uses what NS-2 cannot express.
    Export(ExportError),
    /// The `ns` binary does not exist or cannot be executed.
    NsNotFound {
        /// What was run.
        binary: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// `ns` exited with an error, or wrote no trace.
    NsFailed {
        /// What was run.
        binary: PathBuf,
        /// Exit status.
        status: String,
        /// The end of its standard error and output.
        output: String,
    },
    /// `ns` ran longer than [`Options::timeout`] and was killed.
    NsTimeout {
        /// What was run.
        binary: PathBuf,
        /// The limit.
        after: Duration,
    },
    /// NS-2's trace could not be read.
    Trace(String),
    /// A file operation in the scratch or output folder failed.
    Io(String),
    /// tfrclab's own run failed.
    Run(RunError),
}

impl Error {
    /// Whether the user can fix it by changing the input (scenario, `--ns`): exit code 2.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Error::Export(_) | Error::NsNotFound { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Export(e) => write!(f, "{e}"),
            Error::NsNotFound { binary, reason } => write!(
                f,
                "cannot run the NS-2 simulator {:?}: {reason}; {INSTALL_HINT}",
                binary.display().to_string()
            ),
            Error::NsFailed {
                binary,
                status,
                output,
            } => write!(
                f,
                "{} failed ({status}); its output ends:\n{output}",
                binary.display()
            ),
            Error::NsTimeout { binary, after } => write!(
                f,
                "{} ran longer than {} s and was stopped (raise --timeout, or shorten the scenario)",
                binary.display(),
                after.as_secs_f64()
            ),
            Error::Trace(e) => write!(f, "cannot read NS-2's trace: {e}"),
            Error::Io(e) => write!(f, "{e}"),
            Error::Run(e) => write!(f, "tfrclab: {e}"),
        }
    }
}

impl std::error::Error for Error {}

/// A scratch directory, removed when dropped.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// A new empty directory under the system's temporary folder.
    pub fn new() -> Result<Scratch, Error> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tfrclab-validate-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Scratch(dir))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The last `n` characters of `s` (on a character boundary).
fn tail(s: &str, n: usize) -> String {
    let count = s.chars().count();
    s.chars().skip(count.saturating_sub(n)).collect()
}

/// Run `binary script` in `dir` with a time limit; standard output and error go to files in
/// `dir` (no pipe can fill up and stall `ns`). Returns the standard error text.
struct NsChild {
    child: std::process::Child,
    binary: PathBuf,
    dir: PathBuf,
    started: Instant,
}

impl NsChild {
    fn spawn(binary: &Path, dir: &Path, script: &str) -> Result<NsChild, Error> {
        let io = |what: &str, e: std::io::Error| Error::Io(format!("cannot create {what}: {e}"));
        let stdout = File::create(dir.join("ns.stdout")).map_err(|e| io("ns.stdout", e))?;
        let stderr = File::create(dir.join("ns.stderr")).map_err(|e| io("ns.stderr", e))?;
        let child = Command::new(binary)
            .arg(script)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .map_err(|e| Error::NsNotFound {
                binary: binary.to_path_buf(),
                reason: e.to_string(),
            })?;
        Ok(NsChild {
            child,
            binary: binary.to_path_buf(),
            dir: dir.to_path_buf(),
            started: Instant::now(),
        })
    }

    /// Wait for the exit; kill at the time limit. Returns (stderr text, wall time).
    fn wait(mut self, timeout: Duration) -> Result<(String, Duration), Error> {
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if self.started.elapsed() > timeout => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(Error::NsTimeout {
                        binary: self.binary,
                        after: timeout,
                    });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(Error::Io(format!("waiting for ns: {e}"))),
            }
        };
        let wall = self.started.elapsed();
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        let (out, err) = (read("ns.stdout"), read("ns.stderr"));
        if !status.success() {
            return Err(Error::NsFailed {
                binary: self.binary,
                status: status.to_string(),
                output: tail(&format!("{out}{err}"), 2000),
            });
        }
        Ok((err, wall))
    }
}

/// Check that `binary` runs (a one-line script), before any scenario is run.
pub fn probe_ns(binary: &Path) -> Result<(), Error> {
    let scratch = Scratch::new()?;
    std::fs::write(scratch.path().join("probe.tcl"), "exit 0\n")
        .map_err(|e| Error::Io(format!("cannot write the probe script: {e}")))?;
    NsChild::spawn(binary, scratch.path(), "probe.tcl")?
        .wait(Duration::from_secs(30))
        .map(|_| ())
}

/// The figures compared for one flow (one run, or the mean over seeds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Flow name.
    pub flow: String,
    /// `tcp`, `udp` or `tfrc`.
    pub kind: String,
    /// Wire bits received per second over the measurement window.
    pub throughput_bps: f64,
    /// Payload bits received per second.
    pub goodput_bps: f64,
    /// Mean one-way delay, seconds.
    pub delay_mean_s: f64,
    /// (sent − received) / sent.
    pub loss_rate: f64,
    /// Packets sent in the window.
    pub sent_packets: f64,
    /// Packets received in the window.
    pub received_packets: f64,
    /// Packets dropped in the window.
    pub dropped_packets: f64,
    /// Received packets carrying an ECN-CE mark.
    #[serde(default)]
    pub marked_packets: f64,
}

impl Figures {
    /// Marked / received packets (0 when nothing was received).
    pub fn mark_rate(&self) -> f64 {
        if self.received_packets > 0.0 {
            self.marked_packets / self.received_packets
        } else {
            0.0
        }
    }
}

impl Figures {
    fn of(m: &FlowMetrics) -> Figures {
        Figures {
            flow: m.name.clone(),
            kind: m.kind.clone(),
            throughput_bps: m.throughput_bps,
            goodput_bps: m.goodput_bps,
            delay_mean_s: m.delay_mean_s,
            loss_rate: m.loss_rate,
            sent_packets: m.sent_packets as f64,
            received_packets: m.received_packets as f64,
            dropped_packets: m.dropped_packets as f64,
            marked_packets: m.marked_packets as f64,
        }
    }

    /// The mean of each figure over runs (all with the same flows).
    pub fn mean(runs: &[Vec<Figures>]) -> Vec<Figures> {
        let Some(first) = runs.first() else {
            return Vec::new();
        };
        let n = runs.len() as f64;
        first
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let avg = |g: fn(&Figures) -> f64| {
                    runs.iter().filter_map(|r| r.get(i)).map(g).sum::<f64>() / n
                };
                Figures {
                    flow: f.flow.clone(),
                    kind: f.kind.clone(),
                    throughput_bps: avg(|x| x.throughput_bps),
                    goodput_bps: avg(|x| x.goodput_bps),
                    delay_mean_s: avg(|x| x.delay_mean_s),
                    loss_rate: avg(|x| x.loss_rate),
                    sent_packets: avg(|x| x.sent_packets),
                    received_packets: avg(|x| x.received_packets),
                    dropped_packets: avg(|x| x.dropped_packets),
                    marked_packets: avg(|x| x.marked_packets),
                }
            })
            .collect()
    }
}

/// The metric a check compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// One flow's throughput (relative difference).
    Throughput,
    /// The flows' summed throughput (relative difference).
    TotalThroughput,
    /// One flow's mean one-way delay (relative difference).
    Delay,
    /// One flow's loss rate (absolute difference).
    Loss,
    /// One flow's ECN mark rate, marked / received (absolute difference).
    Marks,
}

impl Metric {
    /// The name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput",
            Metric::TotalThroughput => "total throughput",
            Metric::Delay => "mean delay",
            Metric::Loss => "loss rate",
            Metric::Marks => "mark rate",
        }
    }

    /// Whether the difference and tolerance are relative to NS-2's value.
    pub fn relative(self) -> bool {
        !matches!(self, Metric::Loss | Metric::Marks)
    }
}

/// One comparison of NS-2's and tfrclab's value of a metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What is compared.
    pub metric: Metric,
    /// The flow, or `all` for the total.
    pub subject: String,
    /// NS-2's value (bit/s, seconds, or a fraction).
    pub ns2: f64,
    /// tfrclab's value.
    pub tfrclab: f64,
    /// Relative metrics: `(tfrclab − ns2) / ns2` (0 when both are 0, infinite when only NS-2's
    /// is 0); loss: `tfrclab − ns2`.
    pub difference: f64,
    /// The largest |difference| that passes.
    pub tolerance: f64,
    /// |difference| ≤ tolerance.
    pub pass: bool,
}

fn relative_difference(ns2: f64, lab: f64) -> f64 {
    if ns2 == lab {
        0.0
    } else if ns2 == 0.0 {
        f64::INFINITY
    } else {
        (lab - ns2) / ns2.abs()
    }
}

fn check(metric: Metric, subject: &str, ns2: f64, lab: f64, tolerance: f64) -> Check {
    let difference = if metric.relative() {
        relative_difference(ns2, lab)
    } else {
        lab - ns2
    };
    Check {
        metric,
        subject: subject.to_string(),
        ns2,
        tfrclab: lab,
        difference,
        tolerance,
        // NaN (never produced by the metric code) fails.
        pass: difference.abs() <= tolerance,
    }
}

/// Compare NS-2's and tfrclab's figures (same flows, same order) under `tol`: per flow
/// throughput, mean delay and loss rate, then the summed throughput.
pub fn compare(tol: &Tolerances, ns2: &[Figures], lab: &[Figures]) -> Vec<Check> {
    let mut out = Vec::new();
    for (a, b) in ns2.iter().zip(lab) {
        out.push(check(
            Metric::Throughput,
            &a.flow,
            a.throughput_bps,
            b.throughput_bps,
            tol.throughput,
        ));
        out.push(check(
            Metric::Delay,
            &a.flow,
            a.delay_mean_s,
            b.delay_mean_s,
            tol.delay,
        ));
        out.push(check(
            Metric::Loss,
            &a.flow,
            a.loss_rate,
            b.loss_rate,
            (tol.loss * a.loss_rate).max(tol.loss_abs),
        ));
        if a.marked_packets > 0.0 || b.marked_packets > 0.0 {
            out.push(check(
                Metric::Marks,
                &a.flow,
                a.mark_rate(),
                b.mark_rate(),
                (tol.marks * a.mark_rate()).max(tol.loss_abs),
            ));
        }
    }
    if ns2.len() > 1 {
        let sum = |v: &[Figures]| v.iter().map(|f| f.throughput_bps).sum::<f64>();
        out.push(check(
            Metric::TotalThroughput,
            "all",
            sum(ns2),
            sum(lab),
            tol.total_throughput,
        ));
    }
    out
}

/// One seed's figures on both sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedRun {
    /// The scenario seed (NS-2 gets [`crate::ns2::ns2_seed`] of it).
    pub seed: u64,
    /// Each flow's start time in this run, seconds (differs from the file's with
    /// `start_jitter`).
    pub starts_s: Vec<f64>,
    /// NS-2's figures.
    pub ns2: Vec<Figures>,
    /// tfrclab's figures.
    pub tfrclab: Vec<Figures>,
    /// Wall-clock time of `ns`, seconds (including writing its trace).
    pub ns2_wall_s: f64,
    /// Wall-clock time of tfrclab's simulation, seconds.
    pub tfrclab_wall_s: f64,
    /// How NS-2's congestion drops fell on the flows ([`crate::drops`]).
    #[serde(default)]
    pub ns2_drops: Vec<crate::drops::DropShare>,
    /// The same for tfrclab's run.
    #[serde(default)]
    pub tfrclab_drops: Vec<crate::drops::DropShare>,
}

/// The tolerances applied, as the report shows them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToleranceReport {
    /// Per-flow throughput, relative.
    pub throughput: f64,
    /// Summed throughput, relative.
    pub total_throughput: f64,
    /// Mean delay, relative.
    pub delay: f64,
    /// Loss rate, relative part.
    pub loss: f64,
    /// Loss rate, absolute part.
    pub loss_abs: f64,
    /// Mark rate, relative part (absolute part: `loss_abs`).
    #[serde(default)]
    pub marks: f64,
    /// Why (the scenario's `[validate] why`).
    pub why: Option<String>,
}

/// The validation of one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioReport {
    /// Scenario name.
    pub name: String,
    /// Scenario file.
    pub file: String,
    /// The seeds run; the compared figures are means over them.
    pub seeds: Vec<u64>,
    /// Tolerances.
    pub tolerances: ToleranceReport,
    /// NS-2's figures (mean over the seeds).
    pub ns2: Vec<Figures>,
    /// tfrclab's figures (mean over the seeds).
    pub tfrclab: Vec<Figures>,
    /// The comparisons.
    pub checks: Vec<Check>,
    /// Every check passed.
    pub pass: bool,
    /// Each seed's figures.
    pub runs: Vec<SeedRun>,
    /// What `ns` wrote on standard error (warnings), if anything.
    pub ns2_stderr: Option<String>,
}

impl ScenarioReport {
    /// Checks outside their tolerance.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.pass)
    }

    /// Total wall time of NS-2 and of tfrclab over the seeds, seconds.
    pub fn wall_s(&self) -> (f64, f64) {
        (
            self.runs.iter().map(|r| r.ns2_wall_s).sum(),
            self.runs.iter().map(|r| r.tfrclab_wall_s).sum(),
        )
    }
}

/// The seeds a validation of `s` runs.
pub fn seeds(s: &Scenario) -> Vec<u64> {
    if s.tolerances.seeds.is_empty() {
        vec![s.seed]
    } else {
        s.tolerances.seeds.clone()
    }
}

/// Refuse a scenario NS-2 cannot express, before anything runs.
pub fn check_exportable(s: &Scenario) -> Result<(), Error> {
    export(s, &ExportOptions::untraced())
        .map(|_| ())
        .map_err(Error::Export)
}

/// A file name for `s`'s kept traces.
fn stem(s: &Scenario, seed: u64) -> String {
    format!("{}-seed{seed}", crate::output::file_stem(&s.name))
}

/// Read an NS-2 trace of `s` into per-flow metrics, with the code `tfrclab run` uses.
pub fn ns2_trace_metrics(s: &Scenario, trace: &Path) -> Result<Vec<FlowMetrics>, Error> {
    let flows: Vec<Ns2Flow> = s
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| Ns2Flow {
            fid: i as u32,
            src: f.from as u32,
            dst: f.to as u32,
        })
        .collect();
    let mut reader = Ns2TraceReader::new(&flows, &runner::stats_config(s, false));
    let file = File::open(trace)
        .map_err(|e| Error::Trace(format!("cannot open {}: {e}", trace.display())))?;
    reader
        .feed_reader(BufReader::with_capacity(1 << 16, file))
        .map_err(|e| Error::Trace(format!("{}: {e}", trace.display())))?;
    Ok(s.flows
        .iter()
        .zip(reader.recorders())
        .zip(reader.totals())
        .map(|((f, rec), totals)| {
            // NS-2's trace shows what the agent sent, not what its application generated, so
            // the packet delivery ratio is taken over the packets sent.
            metrics::flow_metrics(
                &summary::flow_input(s, f, rec, totals.sent, totals.delivered),
                summary::window(s),
            )
        })
        .collect())
}

/// How the congestion drops of an NS-2 trace of `s` fell on its flows from the warm-up on
/// ([`crate::drops`]; flow i is fid i, as `export-ns2` writes it; NS-2 gives no drop cause,
/// so every drop counts).
pub fn ns2_trace_drops(s: &Scenario, trace: &Path) -> Result<Vec<crate::drops::DropShare>, Error> {
    use netsim::trace::TraceSink;
    use std::io::BufRead;
    let (mut counter, tally) = crate::drops::DropCounter::new(s, s.warmup);
    let file = File::open(trace)
        .map_err(|e| Error::Trace(format!("cannot open {}: {e}", trace.display())))?;
    for (n, line) in BufReader::with_capacity(1 << 16, file).lines().enumerate() {
        let line = line.map_err(|e| Error::Trace(format!("{}: {e}", trace.display())))?;
        if !matches!(line.split_ascii_whitespace().next(), Some("+" | "d")) {
            continue;
        }
        let l = netsim::trace::parse_ns2_line(&line).map_err(|e| {
            Error::Trace(format!("{} line {}: {}", trace.display(), n + 1, e.message))
        })?;
        counter
            .record(&l)
            .map_err(|e| Error::Trace(format!("{}: {e}", trace.display())))?;
    }
    let shares = tally.borrow().shares();
    Ok(shares)
}

/// `s` as run with `seed`: the seed set and, with `[validate] start_jitter`, every flow's
/// start moved later by an offset drawn uniformly from [0, jitter) (whole microseconds) with
/// a generator seeded by `seed` — the same offsets in both simulators.
pub fn seeded(s: &Scenario, seed: u64) -> Scenario {
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    let mut out = s.clone();
    out.seed = seed;
    let jitter_us = s.tolerances.start_jitter.as_micros() as u64;
    if jitter_us > 0 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        for f in &mut out.flows {
            let offset = Duration::from_micros(rng.next_u64() % jitter_us);
            // The parser checked start + jitter < stop; keep it so whatever the input.
            if f.start + offset < f.stop {
                f.start += offset;
            }
        }
    }
    out
}

/// Run seed `seed` of `s` in both simulators (tfrclab while `ns` runs).
pub fn run_seed(s: &Scenario, seed: u64, opts: &Options) -> Result<(SeedRun, String), Error> {
    let s_seed = seeded(s, seed);
    let scratch = Scratch::new()?;
    let script = export(
        &s_seed,
        &ExportOptions {
            trace_file: Some("trace.tr".to_string()),
        },
    )
    .map_err(Error::Export)?;
    let io = |e: std::io::Error| Error::Io(format!("scratch folder: {e}"));
    std::fs::write(scratch.path().join("scenario.tcl"), &script).map_err(io)?;
    let child = NsChild::spawn(&opts.ns, scratch.path(), "scenario.tcl")?;

    // Kept files: `<name>-seed<N>.{tfrclab.tr, ns2.tr, tcl}`.
    let keep = |ext: &str| {
        opts.keep_traces
            .as_ref()
            .map(|dir| dir.join(format!("{}.{ext}", stem(s, seed))))
    };
    let run_opts = RunOptions {
        seed: Some(seed),
        trace: keep("tfrclab.tr").map(|p| (p, TraceFormat::Ns2)),
        record_delays: false,
    };
    let (counter, tally) = crate::drops::DropCounter::new(&s_seed, s_seed.warmup);
    let lab =
        runner::simulate_with_progress(&s_seed, &run_opts, Some(Box::new(counter)), &mut |_| {});
    // Wait for ns even when tfrclab failed, so that no process is left behind.
    let waited = child.wait(opts.timeout);
    let lab = lab.map_err(Error::Run)?;
    let (stderr, ns_wall) = waited?;

    let trace = scratch.path().join("trace.tr");
    if !trace.exists() {
        return Err(Error::NsFailed {
            binary: opts.ns.clone(),
            status: "exit 0 but no trace.tr".to_string(),
            output: tail(&stderr, 2000),
        });
    }
    let ns = ns2_trace_metrics(&s_seed, &trace)?;
    let ns2_drops = ns2_trace_drops(&s_seed, &trace)?;
    let tfrclab_drops = tally.borrow().shares();
    for (from, to) in [
        (trace.clone(), keep("ns2.tr")),
        (scratch.path().join("scenario.tcl"), keep("tcl")),
    ] {
        if let Some(to) = to {
            std::fs::copy(&from, &to)
                .map_err(|e| Error::Io(format!("cannot keep {}: {e}", to.display())))?;
        }
    }
    let lab_metrics = summary::flow_metrics(&s_seed, &lab);
    Ok((
        SeedRun {
            seed,
            starts_s: s_seed.flows.iter().map(|f| f.start.as_secs_f64()).collect(),
            ns2: ns.iter().map(Figures::of).collect(),
            tfrclab: lab_metrics.iter().map(Figures::of).collect(),
            ns2_wall_s: ns_wall.as_secs_f64(),
            tfrclab_wall_s: lab.wall.as_secs_f64(),
            ns2_drops,
            tfrclab_drops,
        },
        stderr,
    ))
}

/// One line per seed, simulator and flow whose drops concentrated beyond its share
/// ([`crate::drops::DropShare::concentrated`]).
pub fn drop_notes(r: &ScenarioReport) -> Vec<String> {
    let mut out = Vec::new();
    for run in &r.runs {
        for (side, drops) in [("NS-2", &run.ns2_drops), ("tfrclab", &run.tfrclab_drops)] {
            for d in drops.iter().filter(|d| d.concentrated) {
                out.push(format!("seed {}, {side}: {}", run.seed, d.sentence()));
            }
        }
    }
    out
}

/// Validate `s`: run every seed in both simulators and compare the means.
pub fn validate(s: &Scenario, opts: &Options) -> Result<ScenarioReport, Error> {
    check_exportable(s)?;
    let mut runs = Vec::new();
    let mut stderr = String::new();
    for seed in seeds(s) {
        let (run, err) = run_seed(s, seed, opts)?;
        if !err.trim().is_empty() && !stderr.contains(err.trim()) {
            stderr.push_str(err.trim());
            stderr.push('\n');
        }
        runs.push(run);
    }
    let ns2 = Figures::mean(&runs.iter().map(|r| r.ns2.clone()).collect::<Vec<_>>());
    let lab = Figures::mean(&runs.iter().map(|r| r.tfrclab.clone()).collect::<Vec<_>>());
    let checks = compare(&s.tolerances, &ns2, &lab);
    let t = &s.tolerances;
    Ok(ScenarioReport {
        name: s.name.clone(),
        file: s.file.clone(),
        seeds: seeds(s),
        tolerances: ToleranceReport {
            throughput: t.throughput,
            total_throughput: t.total_throughput,
            delay: t.delay,
            loss: t.loss,
            loss_abs: t.loss_abs,
            marks: t.marks,
            why: t.why.clone(),
        },
        pass: checks.iter().all(|c| c.pass),
        ns2,
        tfrclab: lab,
        checks,
        runs,
        ns2_stderr: (!stderr.is_empty()).then(|| tail(&stderr, 2000)),
    })
}

// ---- presentation -----------------------------------------------------------------------

/// A value in a table's unit: Mb/s for throughput, ms for delay, a fraction for loss.
pub fn value_text(metric: Metric, v: f64) -> String {
    match metric {
        Metric::Throughput | Metric::TotalThroughput => format!("{:.4} Mb/s", v / 1e6),
        Metric::Delay => format!("{:.3} ms", v * 1e3),
        Metric::Loss | Metric::Marks => format!("{v:.4}"),
    }
}

/// A check's difference: a signed percentage (relative) or a signed fraction (loss).
pub fn difference_text(c: &Check) -> String {
    if c.metric.relative() {
        if c.difference.is_finite() {
            format!("{:+.2}%", c.difference * 100.0)
        } else {
            "n/a (NS-2: 0)".to_string()
        }
    } else {
        format!("{:+.4}", c.difference)
    }
}

/// A check's tolerance: `±15%` or `±0.0050`.
pub fn tolerance_text(c: &Check) -> String {
    if c.metric.relative() {
        format!("±{}%", trim_float(c.tolerance * 100.0))
    } else {
        format!("±{:.4}", c.tolerance)
    }
}

/// A number with at most 2 decimals and no trailing zeros.
fn trim_float(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// The side-by-side table of one scenario as aligned text.
pub fn text_table(r: &ScenarioReport) -> String {
    let mut rows: Vec<[String; 7]> = vec![[
        "metric".into(),
        "flow".into(),
        "NS-2".into(),
        "tfrclab".into(),
        "difference".into(),
        "tolerance".into(),
        "pass".into(),
    ]];
    for c in &r.checks {
        rows.push([
            c.metric.label().to_string(),
            c.subject.clone(),
            value_text(c.metric, c.ns2),
            value_text(c.metric, c.tfrclab),
            difference_text(c),
            tolerance_text(c),
            if c.pass { "yes" } else { "NO" }.to_string(),
        ]);
    }
    report::text::aligned(&rows, &[0, 1])
}

/// The widest |difference| / tolerance among `r`'s checks of `metric`, as
/// `"+1.23% (±15%)"`; `—` when there is no such check.
fn worst(r: &ScenarioReport, metric: Metric) -> String {
    let worst = r
        .checks
        .iter()
        .filter(|c| c.metric == metric)
        .max_by(|a, b| {
            let ka = a.difference.abs() / a.tolerance.max(f64::MIN_POSITIVE);
            let kb = b.difference.abs() / b.tolerance.max(f64::MIN_POSITIVE);
            ka.total_cmp(&kb)
        });
    match worst {
        Some(c) => format!("{} ({})", difference_text(c), tolerance_text(c)),
        None => "—".to_string(),
    }
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The markdown `tfrclab validate --markdown` writes: a summary table with one row per
/// scenario (each flow's throughput in NS-2 and tfrclab, the total, and the widest difference
/// of each metric against its tolerance), then each scenario's full side-by-side table.
pub fn markdown(reports: &[ScenarioReport]) -> String {
    let mut out = String::new();
    out.push_str(
        "| scenario | seeds | throughput NS-2 (Mb/s) | throughput tfrclab (Mb/s) | widest flow \
         throughput difference | total difference | widest delay difference | widest loss \
         difference | pass |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in reports {
        let per_flow = |v: &[Figures]| {
            v.iter()
                .map(|f| format!("{}: {:.3}", md_escape(&f.flow), f.throughput_bps / 1e6))
                .collect::<Vec<_>>()
                .join("<br>")
        };
        let seeds = if r.seeds.len() == 1 {
            r.seeds[0].to_string()
        } else {
            format!("mean of {}", r.seeds.len())
        };
        out.push_str(&format!(
            "| [{}](#{}) | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            md_escape(&r.name),
            anchor(&r.name),
            seeds,
            per_flow(&r.ns2),
            per_flow(&r.tfrclab),
            worst(r, Metric::Throughput),
            worst(r, Metric::TotalThroughput),
            worst(r, Metric::Delay),
            worst(r, Metric::Loss),
            if r.pass { "yes" } else { "**NO**" },
        ));
    }
    for r in reports {
        out.push_str(&format!("\n### {}\n\n", md_escape(&r.name)));
        out.push_str(&format!("`{}`", r.file));
        if r.seeds.len() > 1 {
            let list: Vec<String> = r.seeds.iter().map(u64::to_string).collect();
            out.push_str(&format!(
                "; means over seeds {} on both sides",
                list.join(", ")
            ));
        } else {
            out.push_str(&format!("; seed {}", r.seeds[0]));
        }
        out.push('.');
        if let Some(why) = &r.tolerances.why {
            let why = why.trim();
            let stop = if why.ends_with(['.', '!', '?']) {
                ""
            } else {
                "."
            };
            out.push_str(&format!(" Tolerances: {}{stop}", md_escape(why)));
        }
        out.push_str("\n\n| metric | flow | NS-2 | tfrclab | difference | tolerance | pass |\n");
        out.push_str("|---|---|---|---|---|---|---|\n");
        for c in &r.checks {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                c.metric.label(),
                md_escape(&c.subject),
                value_text(c.metric, c.ns2),
                value_text(c.metric, c.tfrclab),
                difference_text(c),
                tolerance_text(c),
                if c.pass { "yes" } else { "**NO**" }
            ));
        }
    }
    out
}

/// GitHub's heading anchor for `### name`: lower case, spaces to `-`, other punctuation
/// (but `-` and `_`) dropped.
fn anchor(name: &str) -> String {
    name.chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_ascii_lowercase())
            } else if c == ' ' {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// Where generated text starts and ends in a markdown file.
pub const MARK_BEGIN: &str = "<!-- tfrclab validate: begin (generated; do not edit) -->";
/// See [`MARK_BEGIN`].
pub const MARK_END: &str = "<!-- tfrclab validate: end -->";

/// `existing` with the text between [`MARK_BEGIN`] and [`MARK_END`] replaced by `generated`;
/// `None` when the markers are missing or out of order.
pub fn splice(existing: &str, generated: &str) -> Option<String> {
    let b = existing.find(MARK_BEGIN)?;
    let e = existing[b..].find(MARK_END)? + b;
    Some(format!(
        "{}{MARK_BEGIN}\n{}{}",
        &existing[..b],
        generated,
        &existing[e..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(flow: &str, thr: f64, delay: f64, loss: f64) -> Figures {
        Figures {
            flow: flow.into(),
            kind: "tcp".into(),
            throughput_bps: thr,
            goodput_bps: thr,
            delay_mean_s: delay,
            loss_rate: loss,
            sent_packets: 0.0,
            received_packets: 0.0,
            dropped_packets: 0.0,
            marked_packets: 0.0,
        }
    }

    /// Mark rates are compared only for flows marked on either side, like loss rates:
    /// absolute difference within max(marks × NS-2's rate, loss_abs).
    #[test]
    fn mark_rates_are_checked_where_there_are_marks() {
        let tol = Tolerances::default();
        let marked = |flow: &str, received: f64, marked: f64| Figures {
            received_packets: received,
            marked_packets: marked,
            ..fig(flow, 1e6, 0.1, 0.01)
        };
        let ns = [marked("a", 1000.0, 50.0), marked("b", 1000.0, 0.0)];
        let lab = [marked("a", 1000.0, 62.0), marked("b", 1000.0, 0.0)];
        let c = compare(&tol, &ns, &lab);
        let m: Vec<_> = c.iter().filter(|x| x.metric == Metric::Marks).collect();
        assert_eq!(m.len(), 1, "no check for a flow without marks");
        // 0.05 vs 0.062: 25% of 0.05 = 0.0125 ≥ 0.012, passes.
        assert!(
            m[0].pass && (m[0].tolerance - 0.0125).abs() < 1e-12,
            "{:?}",
            m[0]
        );
        let lab = [marked("a", 1000.0, 64.0), marked("b", 1000.0, 0.0)];
        assert!(
            !compare(&tol, &ns, &lab)
                .iter()
                .find(|x| x.metric == Metric::Marks)
                .unwrap()
                .pass
        );
    }

    #[test]
    fn checks_apply_each_tolerance_as_documented() {
        let tol = Tolerances::default();
        let ns = [fig("a", 1e6, 0.1, 0.02), fig("b", 1e6, 0.1, 0.0)];
        // a: +14.9% (passes 15%); b: −20% (fails); total −2.55% (passes 3%).
        let lab = [fig("a", 1.149e6, 0.111, 0.024), fig("b", 0.8e6, 0.1, 0.006)];
        let c = compare(&tol, &ns, &lab);
        let get = |m: Metric, s: &str| c.iter().find(|x| x.metric == m && x.subject == s).unwrap();
        assert!(get(Metric::Throughput, "a").pass);
        assert!(!get(Metric::Throughput, "b").pass);
        assert!((get(Metric::Throughput, "b").difference + 0.2).abs() < 1e-12);
        assert!(get(Metric::TotalThroughput, "all").pass);
        // Delay +11% > 10%.
        assert!(!get(Metric::Delay, "a").pass);
        // Loss 0.02 vs 0.024: 25% of 0.02 is 0.005 ≥ 0.004; passes.
        assert!(get(Metric::Loss, "a").pass);
        assert!((get(Metric::Loss, "a").tolerance - 0.005).abs() < 1e-12);
        // Loss 0 vs 0.006: the absolute floor 0.005 applies; fails.
        assert!(!get(Metric::Loss, "b").pass);
        // One flow: no total.
        assert!(compare(&tol, &ns[..1], &lab[..1])
            .iter()
            .all(|x| x.metric != Metric::TotalThroughput));
    }

    #[test]
    fn zero_on_both_sides_agrees_and_zero_on_one_side_does_not() {
        let tol = Tolerances::default();
        let c = compare(&tol, &[fig("a", 0.0, 0.0, 0.0)], &[fig("a", 0.0, 0.0, 0.0)]);
        assert!(c.iter().all(|x| x.pass));
        let c = compare(&tol, &[fig("a", 0.0, 0.0, 0.0)], &[fig("a", 1.0, 0.0, 0.0)]);
        assert!(!c[0].pass);
        assert_eq!(difference_text(&c[0]), "n/a (NS-2: 0)");
    }

    #[test]
    fn means_over_seeds() {
        let m = Figures::mean(&[vec![fig("a", 1.0, 0.1, 0.0)], vec![fig("a", 3.0, 0.3, 0.1)]]);
        assert_eq!(m.len(), 1);
        assert!((m[0].throughput_bps - 2.0).abs() < 1e-12);
        assert!((m[0].delay_mean_s - 0.2).abs() < 1e-12);
        assert!((m[0].loss_rate - 0.05).abs() < 1e-12);
        assert!(Figures::mean(&[]).is_empty());
    }

    #[test]
    fn splice_replaces_only_the_generated_part() {
        let doc = format!("intro\n{MARK_BEGIN}\nold\n{MARK_END}\noutro\n");
        let new = splice(&doc, "new\n").unwrap();
        assert_eq!(
            new,
            format!("intro\n{MARK_BEGIN}\nnew\n{MARK_END}\noutro\n")
        );
        assert!(splice("no markers", "x").is_none());
        assert!(splice(&format!("{MARK_END}{MARK_BEGIN}"), "x").is_none());
    }

    #[test]
    fn anchors_follow_github() {
        assert_eq!(anchor("TFRC + TCP (RED)"), "tfrc--tcp-red");
        assert_eq!(anchor("single-tcp_1"), "single-tcp_1");
    }
}
