//! `tfrclab bench`: how fast the simulator is, alone and against NS-2.35.
//!
//! For each scenario, every repetition runs tfrclab (`tfrclab bench once SCENARIO`: parse,
//! build, simulate the scenario's duration, no trace, no output files) and, with NS-2, `ns` on
//! the scenario's untraced export (same simulated time), alternating A B A B so that a change
//! in machine load hits both. Each run is a fresh process measured from outside
//! ([`process`]): wall time, CPU time, peak RSS. The tfrclab child also reports its event and
//! packet-hop counts and the wall time of the event loop alone.
//!
//! Figures per scenario: medians with min–max over the repetitions; the NS-2/tfrclab ratio is
//! the median of the per-pair ratios of whole-process wall times. NS-2 runs the same scenario
//! for the same simulated time, so its packet-hop count is taken to be tfrclab's (an untraced
//! NS-2 run cannot count them; on the validation scenarios the two traces agree line for line,
//! `docs/validation.md`).

pub mod grid;
pub mod process;
pub mod scaling;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::ns2::{export, ExportOptions};
use crate::runner::{self, RunOptions};
use process::ProcessStats;
use scenario::Scenario;

/// What the tfrclab child prints (one JSON object on standard output).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimCounters {
    /// The scenario's name.
    pub scenario: String,
    /// Simulated time, seconds.
    pub duration_s: f64,
    /// Events the scheduler ran.
    pub events: u64,
    /// Packets that crossed a link, counted once per link.
    pub packet_hops: u64,
    /// Wall time of the event loop alone, seconds.
    pub sim_wall_s: f64,
    /// Wall time of loading the file and building the network, seconds.
    pub setup_wall_s: f64,
}

/// Run a scenario once, untraced, and report the counters (the body of `bench once`).
pub fn simulate_once(path: &Path, counters_only: bool) -> anyhow::Result<SimCounters> {
    let t0 = Instant::now();
    let s = Scenario::load(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    simulate_loaded(&s, t0, counters_only)
}

/// [`simulate_once`] on a scenario the caller loaded from the file from `loaded_at` on (its
/// loading counts in `setup_wall_s`), so a caller can report a bad file itself.
pub fn simulate_loaded(
    s: &Scenario,
    loaded_at: Instant,
    counters_only: bool,
) -> anyhow::Result<SimCounters> {
    let t0 = loaded_at;
    let (results, wall) = if counters_only {
        run_with::<netsim::CountersOnly>(s)?
    } else {
        run_with::<netsim::FullStats>(s)?
    };
    let total = t0.elapsed().as_secs_f64();
    Ok(SimCounters {
        scenario: s.name.clone(),
        duration_s: s.duration.as_secs_f64(),
        events: results.events,
        packet_hops: results.packet_hops,
        sim_wall_s: wall.as_secs_f64(),
        setup_wall_s: total - wall.as_secs_f64(),
    })
}

/// Build and run `s` for its duration, measuring what `M` says; the results and the event
/// loop's wall time.
fn run_with<M: netsim::Metering>(
    s: &Scenario,
) -> anyhow::Result<(netsim::RunResults, std::time::Duration)> {
    let (mut sim, _) = runner::build_with::<M>(s, &RunOptions::default())?;
    let t0 = Instant::now();
    let results = sim
        .run(runner::time(s.duration))
        .map_err(runner::RunError::Sim)?;
    Ok((results, t0.elapsed()))
}

/// How to benchmark.
#[derive(Clone, Debug)]
pub struct Options {
    /// Repetitions (pairs, with NS-2).
    pub reps: usize,
    /// Also run NS-2 on the untraced export.
    pub vs_ns2: bool,
    /// The `ns` binary.
    pub ns: PathBuf,
    /// Time tfrclab with packet conservation and link counters only
    /// ([`netsim::CountersOnly`]): no flow recorders or queue gauges, as NS-2 untraced keeps
    /// none.
    pub counters_only: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            reps: 3,
            vs_ns2: false,
            ns: PathBuf::from("ns"),
            counters_only: false,
        }
    }
}

/// Median, smallest and largest of a set of measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The median (mean of the middle two for an even count).
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `xs` (NaN for none).
    pub fn of(xs: impl IntoIterator<Item = f64>) -> Spread {
        let mut v: Vec<f64> = xs.into_iter().collect();
        if v.is_empty() {
            return Spread {
                median: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Spread {
            median,
            min: v[0],
            max: v[n - 1],
        }
    }
}

/// One repetition: tfrclab, and NS-2 right after it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Pair {
    /// The tfrclab process.
    pub tfrclab: ProcessStats,
    /// What it reported.
    pub counters: SimCounters,
    /// The `ns` process, with `--vs-ns2`.
    pub ns2: Option<ProcessStats>,
    /// `ns` on the same script with the simulated time cut to 1 ms (Tcl start-up and
    /// topology set-up only), with `--vs-ns2`.
    pub ns2_setup: Option<ProcessStats>,
}

/// The figures of one scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Figures {
    /// tfrclab whole-process wall time, s.
    pub wall_s: Spread,
    /// tfrclab whole-process CPU time (user + system), s.
    pub cpu_s: Spread,
    /// Event loop wall time, s.
    pub sim_wall_s: Spread,
    /// Events per second of event-loop wall time (median over repetitions).
    pub events_per_s: f64,
    /// Packet-hops per second of event-loop wall time (median).
    pub hops_per_s: f64,
    /// Packet-hops per second of whole-process wall time (median).
    pub hops_per_s_process: f64,
    /// Event-loop wall time per packet-hop, ns (median).
    pub ns_per_hop: f64,
    /// Peak RSS, MiB.
    pub max_rss_mib: Spread,
    /// NS-2 whole-process wall time, s.
    pub ns2_wall_s: Option<Spread>,
    /// NS-2 whole-process CPU time, s.
    pub ns2_cpu_s: Option<Spread>,
    /// NS-2 peak RSS, MiB.
    pub ns2_max_rss_mib: Option<Spread>,
    /// NS-2 packet-hops (counted as tfrclab's) per second of its wall time (median).
    pub ns2_hops_per_s: Option<f64>,
    /// NS-2 wall / tfrclab wall, whole processes, over the pairs.
    pub ratio: Option<Spread>,
    /// The same for CPU time (less sensitive to other load on the machine).
    pub cpu_ratio: Option<Spread>,
    /// NS-2's run phase (its wall time minus the 1-ms script's) over tfrclab's event loop
    /// wall time, over the pairs: the simulators' speed without start-up costs.
    pub run_ratio: Option<Spread>,
}

/// A benchmarked scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScenarioBench {
    /// Name.
    pub name: String,
    /// File.
    pub file: String,
    /// Simulated time, s.
    pub duration_s: f64,
    /// Flows.
    pub flows: usize,
    /// Events (from the first repetition; every repetition runs the same events).
    pub events: u64,
    /// Packet-hops.
    pub packet_hops: u64,
    /// With `--vs-ns2`: why NS-2 gave no figures, if it failed (its exit status and the end
    /// of its error output). NS-2 is not run again on that scenario; the others go on.
    pub ns2_error: Option<String>,
    /// The summary.
    pub figures: Figures,
    /// Every repetition.
    pub pairs: Vec<Pair>,
}

const MIB: f64 = 1024.0;

fn figures(pairs: &[Pair]) -> Figures {
    let t = |f: &dyn Fn(&Pair) -> f64| Spread::of(pairs.iter().map(f));
    let ns = |f: fn(&ProcessStats) -> f64| {
        let v: Vec<f64> = pairs.iter().filter_map(|p| p.ns2.as_ref().map(f)).collect();
        (!v.is_empty()).then(|| Spread::of(v))
    };
    fn hops(p: &Pair) -> f64 {
        p.counters.packet_hops as f64
    }
    let ratio = |f: fn(&ProcessStats) -> f64| {
        let v: Vec<f64> = pairs
            .iter()
            .filter_map(|p| p.ns2.as_ref().map(|n| f(n) / f(&p.tfrclab)))
            .collect();
        (!v.is_empty()).then(|| Spread::of(v))
    };
    fn cpu(s: &ProcessStats) -> f64 {
        s.user_s + s.sys_s
    }
    Figures {
        wall_s: t(&|p| p.tfrclab.wall_s),
        cpu_s: t(&|p| cpu(&p.tfrclab)),
        sim_wall_s: t(&|p| p.counters.sim_wall_s),
        events_per_s: t(&|p| p.counters.events as f64 / p.counters.sim_wall_s).median,
        hops_per_s: t(&|p| hops(p) / p.counters.sim_wall_s).median,
        hops_per_s_process: t(&|p| hops(p) / p.tfrclab.wall_s).median,
        ns_per_hop: t(&|p| p.counters.sim_wall_s * 1e9 / hops(p).max(1.0)).median,
        max_rss_mib: t(&|p| p.tfrclab.max_rss_kib as f64 / MIB),
        ns2_wall_s: ns(|s| s.wall_s),
        ns2_cpu_s: ns(cpu),
        ns2_max_rss_mib: ns(|s| s.max_rss_kib as f64 / MIB),
        ns2_hops_per_s: {
            let v: Vec<f64> = pairs
                .iter()
                .filter_map(|p| p.ns2.as_ref().map(|n| hops(p) / n.wall_s))
                .collect();
            (!v.is_empty()).then(|| Spread::of(v).median)
        },
        ratio: ratio(|s| s.wall_s),
        cpu_ratio: ratio(cpu),
        run_ratio: {
            let v: Vec<f64> = pairs
                .iter()
                .filter_map(|p| {
                    let run = p.ns2.as_ref()?.wall_s - p.ns2_setup.as_ref()?.wall_s;
                    Some(run / p.counters.sim_wall_s)
                })
                .collect();
            (!v.is_empty()).then(|| Spread::of(v))
        },
    }
}

/// Benchmark one scenario file. `progress` is told what runs.
pub fn bench_scenario(
    path: &Path,
    opts: &Options,
    progress: &mut dyn FnMut(String),
) -> anyhow::Result<ScenarioBench> {
    let s = Scenario::load(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    let scratch = crate::validate::Scratch::new().map_err(|e| anyhow::anyhow!("{e}"))?;
    let script = "scenario.tcl";
    let setup_script = "setup.tcl";
    if opts.vs_ns2 {
        let tcl = export(&s, &ExportOptions::untraced()).map_err(|e| anyhow::anyhow!("{e}"))?;
        std::fs::write(scratch.path().join(script), tcl)?;
        // The same script run for 1 ms: what NS-2 spends before its run phase.
        let mut short = s.clone();
        short.duration = std::time::Duration::from_millis(1);
        let tcl = export(&short, &ExportOptions::untraced()).map_err(|e| anyhow::anyhow!("{e}"))?;
        std::fs::write(scratch.path().join(setup_script), tcl)?;
    }
    let me = std::env::current_exe()?;
    let me = me.to_string_lossy().into_owned();
    let file = path.to_string_lossy().into_owned();
    let ns = opts.ns.to_string_lossy().into_owned();
    let mut pairs = Vec::with_capacity(opts.reps);
    let mut ns2_error = None;
    for rep in 1..=opts.reps.max(1) {
        progress(format!(
            "{}: tfrclab, repetition {rep}/{}",
            s.name, opts.reps
        ));
        let mut once = vec!["bench".to_string(), "once".into(), file.clone()];
        if opts.counters_only {
            once.push("--counters-only".into());
        }
        let a = process::measure(&me, &once, None)?;
        let counters: SimCounters = serde_json::from_str(a.stdout.trim())
            .map_err(|e| anyhow::anyhow!("tfrclab bench once printed no counters: {e}"))?;
        let b = if opts.vs_ns2 && ns2_error.is_none() {
            progress(format!("{}: ns, repetition {rep}/{}", s.name, opts.reps));
            match process::measure(&ns, &[script.to_string()], Some(scratch.path())) {
                Ok(stats) => Some(stats),
                // NS-2.35 crashes on some scenarios (SIGFPE in its TFRC agent at 1 Gb/s): say
                // so in this row and keep benchmarking the rest.
                Err(e) => {
                    ns2_error = Some(e.to_string());
                    None
                }
            }
        } else {
            None
        };
        let setup = if b.is_some() {
            progress(format!(
                "{}: ns for 1 ms, repetition {rep}/{}",
                s.name, opts.reps
            ));
            process::measure(&ns, &[setup_script.to_string()], Some(scratch.path())).ok()
        } else {
            None
        };
        pairs.push(Pair {
            tfrclab: a,
            counters,
            ns2: b,
            ns2_setup: setup,
        });
    }
    let first = pairs[0].counters.clone();
    Ok(ScenarioBench {
        name: s.name.clone(),
        file,
        duration_s: first.duration_s,
        flows: s.flows.len(),
        events: first.events,
        packet_hops: first.packet_hops,
        ns2_error,
        figures: figures(&pairs),
        pairs,
    })
}

/// A duration for tables: `0.142 s`, `12.3 s`.
fn secs_text(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.3}")
    } else {
        format!("{s:.1}")
    }
}

fn spread_text(s: &Spread) -> String {
    format!(
        "{} [{}–{}]",
        secs_text(s.median),
        secs_text(s.min),
        secs_text(s.max)
    )
}

/// Millions, one decimal.
fn m(x: f64) -> String {
    format!("{:.1} M", x / 1e6)
}

/// The table `tfrclab bench` prints: one row per scenario.
pub fn text_table(rows: &[ScenarioBench]) -> String {
    use std::fmt::Write as _;
    let vs = rows
        .iter()
        .any(|r| r.figures.ratio.is_some() || r.ns2_error.is_some());
    let mut out = String::new();
    let _ = write!(
        out,
        "{:<32} {:>6} {:>9} {:>9} {:>22} {:>9} {:>9} {:>8} {:>8}",
        "scenario",
        "sim s",
        "events",
        "hops",
        "wall s median [min–max]",
        "events/s",
        "hops/s",
        "ns/hop",
        "RSS MiB"
    );
    if vs {
        let _ = write!(
            out,
            " {:>22} {:>8} {:>8} {:>17} {:>10}",
            "ns2 wall s", "ns2 hops/s", "ns2 MiB", "ns2/tfrclab [min–max]", "run phase"
        );
    }
    out.push('\n');
    for r in rows {
        let f = &r.figures;
        let _ = write!(
            out,
            "{:<32} {:>6} {:>9} {:>9} {:>22} {:>9} {:>9} {:>8.0} {:>8.1}",
            r.name,
            report::fmt_num(r.duration_s),
            m(r.events as f64),
            m(r.packet_hops as f64),
            spread_text(&f.wall_s),
            m(f.events_per_s),
            m(f.hops_per_s),
            f.ns_per_hop,
            f.max_rss_mib.median
        );
        if vs {
            match (
                &f.ns2_wall_s,
                &f.ns2_max_rss_mib,
                &f.ratio,
                f.ns2_hops_per_s,
            ) {
                (Some(w), Some(mem), Some(ratio), Some(h)) => {
                    let _ = write!(
                        out,
                        " {:>22} {:>10} {:>8.1} {:>17} {:>10}",
                        spread_text(w),
                        m(h),
                        mem.median,
                        format!("{:.1}× [{:.1}–{:.1}]", ratio.median, ratio.min, ratio.max),
                        f.run_ratio
                            .map_or_else(|| "-".to_string(), |r| format!("{:.1}×", r.median))
                    );
                }
                _ => {
                    let why = match &r.ns2_error {
                        Some(e) => e.lines().next().unwrap_or_default().to_string(),
                        None => "-".to_string(),
                    };
                    let _ = write!(out, " {why:>22}");
                }
            }
        }
        out.push('\n');
    }
    out.push_str(
        "wall s: whole tfrclab process (parse, build, simulate, exit); events/s, hops/s and ns/hop: \
         the event loop alone; RSS: peak resident memory.\n",
    );
    if vs {
        out.push_str(
            "ns2: `ns` on the untraced export, whole process; ns2 hops/s counts tfrclab's hops; \
             ns2/tfrclab: median over the A B pairs of the wall-time ratio; run phase: NS-2's wall \
             time minus the same script run for 1 ms, over tfrclab's event loop (median).\n",
        );
    }
    out
}
