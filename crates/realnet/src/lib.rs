//! # realnet — scenarios on a real network, held against the simulation
//!
//! `tfrclab validate --real` in library form. A scenario's topology is built as network
//! namespaces joined by emulated links (`netemu`: the simulator's own link, queue and loss
//! code on real packets), its flows run as real processes and sockets — TFRC as `tfrclab send`
//! and `tfrclab recv` with the flow's profile and packet size, TCP as the kernel's congestion
//! control named by the flow's `real` key, CBR as a paced UDP sender — and the emulator's
//! capture gives every flow the metrics a simulation gives (`lab::metrics`). The simulation runs
//! over start phases, the real network over repetitions, and each flow's metrics are compared
//! by their 95% confidence intervals ([`compare`]).
//!
//! - [`plan`]: what runs each flow for real, and refusals for what cannot run.
//! - [`run`]: one real run: build, start, stop, measure, check the timing.
//! - [`capture`]: the emulator's capture read into `netsim::FlowRecorder`s; a classifier.
//! - [`flows`]: the real flows' ends.
//! - [`host`]: the host's other work during a run (softirq, `ksoftirqd`, steal).
//! - [`compare`]: rows, verdicts, and their text.
//!
//! `docs/real-network.md` ("Real validation") describes the method and its results.

#![warn(missing_docs)]

pub mod baseline;
pub mod capture;
pub mod compare;
pub mod flows;
pub mod host;
pub mod plan;
pub mod run;
pub mod sys;

use std::fmt;
use std::path::PathBuf;

use rayon::prelude::*;
use scenario::Scenario;
use serde::{Deserialize, Serialize};

pub use compare::{Metric, Row, SimRun, Verdict};
pub use plan::{Plan, Refusals};
pub use run::{Options, RealRun};

/// Why a scenario could not be compared (as opposed to "compared, and it differs").
#[derive(Debug)]
pub enum Error {
    /// The scenario asks for what a real network cannot run.
    Refused(Refusals),
    /// This machine cannot build the real network (privileges, kernel).
    Machine(String),
    /// The simulation failed.
    Sim(lab::runner::RunError),
    /// A real run failed.
    Run(run::RunFailed),
    /// Writing a file failed.
    Io(String),
}

impl Error {
    /// Whether the user can fix it by changing the input or the machine (exit code 2).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Error::Refused(_) | Error::Machine(_))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Refused(r) => write!(f, "{r}"),
            Error::Machine(m) => f.write_str(m),
            Error::Sim(e) => write!(f, "simulation: {e}"),
            Error::Run(e) => write!(f, "real run: {e}"),
            Error::Io(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for Error {}

/// One flow's two sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Counterpart {
    /// Flow name.
    pub flow: String,
    /// What the simulation runs (`tcp sack`, `tfrc rfc5348`, `udp cbr`).
    pub simulated: String,
    /// What runs for real (`reno`, `tfrc`, `cbr`).
    pub real: String,
    /// Whether the simulation models it.
    pub modelled: bool,
}

/// The comparison of one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Scenario name.
    pub name: String,
    /// Its file.
    pub file: String,
    /// Each flow's two sides.
    pub counterparts: Vec<Counterpart>,
    /// Simulated start phases.
    pub sim: Vec<SimRun>,
    /// Real repetitions.
    pub real: Vec<RealRun>,
    /// The rows.
    pub rows: Vec<Row>,
    /// `[real] start_jitter`, seconds.
    pub start_jitter_s: f64,
}

impl Comparison {
    /// Real runs whose timing was good.
    pub fn valid_reps(&self) -> usize {
        self.real.iter().filter(|r| r.distorted.is_empty()).count()
    }

    /// The worst emulator lateness over the runs: (p50, p99, max) in ns.
    pub fn worst_lateness(&self) -> (u64, u64, u64) {
        self.real.iter().fold((0, 0, 0), |a, r| {
            let l = &r.emulator.lateness;
            (a.0.max(l.p50_ns), a.1.max(l.p99_ns), a.2.max(l.max_ns))
        })
    }

    /// A figure of the runs' host load over the runs that recorded it: (lowest, highest), or
    /// `None` when none did.
    pub fn host_range(&self, f: impl Fn(&host::HostLoad) -> f64) -> Option<(f64, f64)> {
        let v: Vec<f64> = self
            .real
            .iter()
            .filter_map(|r| r.host.as_ref().map(&f))
            .filter(|x| x.is_finite())
            .collect();
        let lo = v.iter().copied().reduce(f64::min)?;
        let hi = v.iter().copied().reduce(f64::max)?;
        Some((lo, hi))
    }

    /// The 1-minute load average over the runs: (lowest, highest).
    pub fn load_range(&self) -> (f64, f64) {
        self.real
            .iter()
            .flat_map(|r| r.load)
            .filter(|x| x.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |a, x| {
                (a.0.min(x), a.1.max(x))
            })
    }
}

/// Progress of a comparison, for a caller's display.
#[derive(Clone, Debug)]
pub enum Progress {
    /// The simulated runs are done.
    Simulated {
        /// How many.
        runs: usize,
    },
    /// A real run ended.
    Real {
        /// 0-based.
        rep: u32,
        /// Of how many.
        of: u32,
        /// Why it is distorted (empty: it is not).
        distorted: Vec<String>,
        /// The emulator's lateness.
        lateness: netemu::Lateness,
        /// Load average at its end.
        load: f64,
        /// The host's other work during it.
        host: Option<host::HostLoad>,
    },
}

fn simulated_label(f: &scenario::Flow) -> String {
    use scenario::{FlowKind, TcpVariant, TfrcProfile};
    match &f.kind {
        FlowKind::Tcp { variant, .. } => match variant {
            TcpVariant::Tahoe => "tcp tahoe".into(),
            TcpVariant::Reno => "tcp reno".into(),
            TcpVariant::NewReno => "tcp newreno".into(),
            TcpVariant::Sack => "tcp sack".into(),
            TcpVariant::Cubic(p) => format!("tcp cubic ({p:?})").to_lowercase(),
            TcpVariant::Linux(cc) => format!("tcp {cc:?} (linux)").to_lowercase(),
        },
        FlowKind::Udp { .. } => "udp cbr".into(),
        FlowKind::Tfrc { profile, .. } => match profile {
            TfrcProfile::Rfc5348 => "tfrc rfc5348".into(),
            TfrcProfile::Ns2 => "tfrc ns2".into(),
        },
        FlowKind::Media { controller, .. } => format!("media {}", controller.name()),
    }
}

/// Check what can be checked before anything runs: the scenario's real counterparts and this
/// machine. `Ok` carries the plan.
pub fn preflight(s: &Scenario) -> Result<Plan, Error> {
    let p = plan::plan(s).map_err(Error::Refused)?;
    plan::privileges().map_err(Error::Machine)?;
    plan::check_kernel(&p).map_err(Error::Machine)?;
    Ok(p)
}

/// Simulate `s` over its start phases (in parallel).
pub fn simulate(s: &Scenario) -> Result<(Vec<SimRun>, run::Topology), Error> {
    let outs: Vec<Result<(SimRun, Option<run::Topology>), Error>> = plan::sim_seeds(s)
        .into_par_iter()
        .map(|seed| {
            let ss = plan::seeded(s, seed);
            let opts = lab::runner::RunOptions {
                seed: Some(seed),
                ..Default::default()
            };
            let (counter, tally) = lab::drops::DropCounter::new(&ss, ss.warmup);
            let out = lab::runner::simulate_with_progress(
                &ss,
                &opts,
                Some(Box::new(counter)),
                &mut |_| {},
            )
            .map_err(Error::Sim)?;
            let drops = tally.borrow().shares();
            let summary = lab::summary::summarize(&ss, &out);
            let topo = (seed == 1).then(|| run::Topology {
                bottlenecks: lab::summary::bottlenecks(&ss, &out),
                path_rtts: lab::summary::flow_timing(&ss, &out)
                    .iter()
                    .map(|t| t.path_rtt)
                    .collect(),
            });
            Ok((
                SimRun {
                    seed,
                    starts_s: ss.flows.iter().map(|f| f.start.as_secs_f64()).collect(),
                    flows: summary.flows,
                    fairness: summary.fairness,
                    drops,
                },
                topo,
            ))
        })
        .collect();
    let mut sims = Vec::new();
    let mut topo = None;
    for o in outs {
        let (r, t) = o?;
        sims.push(r);
        if t.is_some() {
            topo = t;
        }
    }
    let topo = topo.ok_or_else(|| Error::Io("no simulated run".into()))?;
    Ok((sims, topo))
}

/// Compare `s` in simulation and on the real network: `reps` real runs (each in
/// `out/<rep>` when `opts.out` is set), after the simulated ones.
pub fn validate(
    s: &Scenario,
    reps: u32,
    opts: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Result<Comparison, Error> {
    let plan = preflight(s)?;
    let (sim, topo) = simulate(s)?;
    progress(Progress::Simulated { runs: sim.len() });
    let mut real = Vec::new();
    for rep in 0..reps {
        let mut o = opts.clone();
        o.out = opts
            .out
            .as_ref()
            .map(|d| d.join(format!("rep-{:02}", rep + 1)));
        let r = run::run(s, &plan, &topo, rep, &o).map_err(Error::Run)?;
        progress(Progress::Real {
            rep,
            of: reps,
            distorted: r.distorted.clone(),
            lateness: r.emulator.lateness,
            load: r.load[1],
            host: r.host,
        });
        real.push(r);
    }
    let names: Vec<String> = s.flows.iter().map(|f| f.name.clone()).collect();
    let modelled: Vec<bool> = plan.flows.iter().map(|f| f.has_counterpart()).collect();
    let rows = compare::rows(&names, &modelled, &sim, &real);
    Ok(Comparison {
        name: s.name.clone(),
        file: s.file.clone(),
        counterparts: s
            .flows
            .iter()
            .zip(&plan.flows)
            .map(|(f, p)| Counterpart {
                flow: f.name.clone(),
                simulated: simulated_label(f),
                real: p.label(),
                modelled: p.has_counterpart(),
            })
            .collect(),
        sim,
        real,
        rows,
        start_jitter_s: s.real.start_jitter.as_secs_f64(),
    })
}

/// One scenario's table as aligned text.
pub fn text_table(c: &Comparison) -> String {
    let mut rows: Vec<[String; 5]> = vec![[
        "flow".into(),
        "metric".into(),
        "simulated mean [95% CI] (n)".into(),
        "real mean [95% CI] (n)".into(),
        "verdict".into(),
    ]];
    for r in &c.rows {
        rows.push([
            r.flow.clone(),
            r.metric.label().into(),
            compare::ci_text(r.metric, &r.sim),
            compare::ci_text(r.metric, &r.real),
            r.verdict.label().into(),
        ]);
    }
    report::text::aligned(&rows, &[0, 1])
}

/// What the runs' timing was, in one line.
pub fn timing_line(c: &Comparison) -> String {
    let (p50, p99, max) = c.worst_lateness();
    let (lo, hi) = c.load_range();
    // Older records have no host figures; say nothing rather than a range of nothing.
    let host = match (
        c.host_range(|h| h.ksoftirqd_wait_ms_per_s),
        c.host_range(|h| h.softirq),
    ) {
        (Some((wl, wh)), Some((sl, sh))) => format!(
            "; ksoftirqd waited {wl:.1}–{wh:.1} ms/s, softirq {:.1}–{:.1}% of CPU time",
            100.0 * sl,
            100.0 * sh
        ),
        _ => String::new(),
    };
    format!(
        "{} of {} real runs undistorted; emulator write lateness (worst run) p50 {} / p99 {} / max {}; load average {lo:.1}–{hi:.1}{host}",
        c.valid_reps(),
        c.real.len(),
        netemu::timing::fmt_ns(p50),
        netemu::timing::fmt_ns(p99),
        netemu::timing::fmt_ns(max)
    )
}

/// How often each side's drops concentrated on one flow beyond its share (`lab::drops`), in
/// one line.
pub fn concentration_line(c: &Comparison) -> String {
    fn side(runs: &[&[lab::drops::DropShare]]) -> String {
        let mut flows: Vec<String> = Vec::new();
        let mut n = 0;
        for r in runs {
            let f: Vec<&str> = r
                .iter()
                .filter(|d| d.concentrated)
                .map(|d| d.flow.as_str())
                .collect();
            n += usize::from(!f.is_empty());
            flows.extend(f.into_iter().map(String::from));
        }
        flows.sort();
        flows.dedup();
        if flows.is_empty() {
            format!("0 of {}", runs.len())
        } else {
            format!("{n} of {} (on {})", runs.len(), flows.join(", "))
        }
    }
    let sim: Vec<&[lab::drops::DropShare]> = c.sim.iter().map(|r| r.drops.as_slice()).collect();
    let real: Vec<&[lab::drops::DropShare]> = c
        .real
        .iter()
        .filter(|r| r.distorted.is_empty())
        .map(|r| r.drops.as_slice())
        .collect();
    format!(
        "drops concentrated on one flow beyond its share in {} simulated and {} real runs",
        side(&sim),
        side(&real)
    )
}

fn md(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The markdown `validate --real --markdown` writes: a summary table (each flow's share on
/// both sides and its verdict), then each scenario's rows and its runs' timing.
pub fn markdown(cs: &[Comparison], machine: &str) -> String {
    let mut out = format!("{machine}\n\n");
    out.push_str(
        "| scenario | flow (simulated → real) | share simulated | share real | verdict | runs (undistorted/real, simulated) |\n|---|---|---|---|---|---|\n",
    );
    for c in cs {
        for (i, cp) in c.counterparts.iter().enumerate() {
            let row = c
                .rows
                .iter()
                .find(|r| r.flow == cp.flow && r.metric == Metric::Share);
            let (s, r, v) = match row {
                Some(r) => (
                    compare::ci_text(Metric::Share, &r.sim),
                    compare::ci_text(Metric::Share, &r.real),
                    r.verdict.label(),
                ),
                None => ("—".into(), "—".into(), "—"),
            };
            out.push_str(&format!(
                "| {} | {} ({} → {}) | {s} | {r} | {} | {} |\n",
                if i == 0 { md(&c.name) } else { String::new() },
                md(&cp.flow),
                md(&cp.simulated),
                md(&cp.real),
                if v == "differ" { "**differ**" } else { v },
                if i == 0 {
                    format!("{}/{}, {}", c.valid_reps(), c.real.len(), c.sim.len())
                } else {
                    String::new()
                },
            ));
        }
    }
    for c in cs {
        out.push_str(&format!(
            "\n#### {}\n\n`{}`. {}; {}.\n\n",
            md(&c.name),
            c.file,
            timing_line(c),
            concentration_line(c)
        ));
        out.push_str("| flow | metric | simulated mean [95% CI] (n) | real mean [95% CI] (n) | verdict |\n|---|---|---|---|---|\n");
        for r in &c.rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                md(&r.flow),
                r.metric.label(),
                compare::ci_text(r.metric, &r.sim),
                compare::ci_text(r.metric, &r.real),
                r.verdict.label()
            ));
        }
        let distorted: Vec<String> = c
            .real
            .iter()
            .filter(|r| !r.distorted.is_empty())
            .map(|r| format!("run {}: {}", r.rep + 1, r.distorted.join("; ")))
            .collect();
        if !distorted.is_empty() {
            out.push_str(&format!(
                "\nDistorted runs (left out): {}\n",
                md(&distorted.join(" · "))
            ));
        }
    }
    out
}

/// The CPU model (`lscpu`'s "Model name", read from `/proc/cpuinfo`) and core count.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|x| x.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|x| x.trim().to_string())
        .unwrap_or_default();
    format!("{cpu}, {cores} cores, Linux {kernel}")
}

/// `validate-real.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Json {
    /// The machine.
    pub machine: String,
    /// Per scenario, in command-line order.
    pub scenarios: Vec<ScenarioJson>,
}

/// One scenario in `validate-real.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioJson {
    /// The scenario file.
    pub file: String,
    /// The comparison, when it was made.
    pub comparison: Option<Comparison>,
    /// Why it could not be made.
    pub error: Option<String>,
    /// The real runs held against an earlier batch (`validate --real --baseline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<baseline::Spread>,
}

impl Json {
    /// Read a `validate-real.json`; the error names the file and what is wrong.
    pub fn read(path: &std::path::Path) -> Result<Json, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: not the validate-real.json of `tfrclab validate --real` ({e})",
                path.display()
            )
        })
    }

    /// The comparison of scenario `name`; the error lists the scenarios there are.
    pub fn scenario(&self, name: &str, path: &std::path::Path) -> Result<&Comparison, String> {
        let all: Vec<&Comparison> = self
            .scenarios
            .iter()
            .filter_map(|s| s.comparison.as_ref())
            .collect();
        all.iter().copied().find(|c| c.name == name).ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
            format!(
                "{}: has no runs of scenario `{name}` (it has: {})",
                path.display(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )
        })
    }
}

/// Where a scenario's runs keep their files under `out`.
pub fn scenario_dir(out: &std::path::Path, s: &Scenario) -> PathBuf {
    out.join(
        s.name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>(),
    )
}
