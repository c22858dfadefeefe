//! `tfrclab validate --real`: scenarios simulated and run on a real network (namespaces, the
//! `netemu` link emulator, kernel TCP, `tfrclab send`/`recv`), compared flow by flow.

use std::path::Path;
use std::process::ExitCode;

use lab::output::OutputDir;
use lab::validate::{splice, MARK_BEGIN, MARK_END};
use realnet::{Json, Progress, ScenarioJson};
use scenario::Scenario;

use crate::EXIT_BAD_INPUT;

/// What `validate --real` reads of `validate`'s arguments.
pub struct Args<'a> {
    /// Scenario files.
    pub scenarios: &'a [std::path::PathBuf],
    /// `--set` overrides.
    pub sets: &'a [(String, String)],
    /// `--reps`.
    pub reps: Option<u32>,
    /// `--out`.
    pub out: &'a std::path::Path,
    /// `--markdown`.
    pub markdown: Option<&'a std::path::Path>,
    /// `--keep-traces`.
    pub keep_traces: bool,
    /// `--baseline`.
    pub baseline: Option<&'a std::path::Path>,
    /// `--batch`.
    pub batch: Option<&'a std::path::Path>,
}

fn bad(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// `--baseline FILE --batch FILE`: hold an earlier batch against the baseline, running nothing.
fn batch_only(baseline: &Json, bpath: &Path, batch: &Path) -> ExitCode {
    let runs = match Json::read(batch) {
        Ok(j) => j,
        Err(e) => return bad(e),
    };
    let mut n = 0;
    for c in runs.scenarios.iter().filter_map(|s| s.comparison.as_ref()) {
        let spread = baseline
            .scenario(&c.name, bpath)
            .and_then(|b| realnet::baseline::check(b, c, &bpath.display().to_string()));
        match spread {
            Ok(s) => {
                println!(
                    "== {} ({}): {}",
                    c.name,
                    batch.display(),
                    realnet::timing_line(c)
                );
                println!("{}", realnet::baseline::text(&s));
                n += 1;
            }
            Err(e) => return bad(e),
        }
    }
    if n == 0 {
        return bad(format!("{}: holds no completed scenario", batch.display()));
    }
    ExitCode::SUCCESS
}

/// Run `validate --real`.
pub fn run(args: &Args<'_>) -> anyhow::Result<ExitCode> {
    let baseline = match args.baseline {
        Some(p) => match Json::read(p) {
            Ok(j) => Some((j, p)),
            Err(e) => return Ok(bad(e)),
        },
        None => None,
    };
    if let (Some((b, bpath)), Some(batch)) = (&baseline, args.batch) {
        return Ok(batch_only(b, bpath, batch));
    }
    // Everything that could be wrong with the input, or the machine, before anything runs.
    let mut scenarios = Vec::new();
    let mut invalid = false;
    for path in args.scenarios {
        match Scenario::load_with(path, args.sets)
            .map_err(|e| e.to_string())
            .and_then(|s| {
                realnet::preflight(&s)
                    .map(|p| (s, p))
                    .map_err(|e| e.to_string())
            }) {
            Ok(sp) => scenarios.push(sp),
            Err(e) => {
                eprintln!("error: {e}");
                invalid = true;
            }
        }
    }
    if let Some((b, bpath)) = &baseline {
        for (s, _) in &scenarios {
            let flows: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
            let found = b.scenario(&s.name, bpath).and_then(|c| {
                realnet::baseline::same_flows(
                    c,
                    &s.name,
                    &flows,
                    &bpath.display().to_string(),
                    &s.file,
                )
            });
            if let Err(e) = found {
                eprintln!("error: {e}");
                invalid = true;
            }
        }
    }
    if invalid {
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    if args.reps == Some(0) {
        return Ok(bad("--reps 0: at least one real run"));
    }
    let base = match args.markdown {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) if splice(&t, "").is_some() => Some(t),
            Ok(_) => {
                return Ok(bad(format!(
                    "{}: has no `{MARK_BEGIN}` … `{MARK_END}` markers",
                    p.display()
                )))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(String::new()),
            Err(e) => return Ok(bad(format!("{}: cannot read: {e}", p.display()))),
        },
        None => None,
    };
    let out = match OutputDir::create(args.out) {
        Ok(o) => o,
        Err(e) => return Ok(bad(e)),
    };
    let machine = realnet::machine();
    println!("{machine}");
    let mut entries = Vec::new();
    let mut done = Vec::new();
    for (s, plan) in &scenarios {
        let reps = args.reps.unwrap_or(s.real.reps);
        println!(
            "== {} ({}): {} simulated start phases, {reps} real runs",
            s.name, s.file, s.real.sim_seeds
        );
        if !plan.sim_only.is_empty() {
            println!("   simulated side only: {}", plan.sim_only.join("; "));
        }
        if !s.real.processing_jitter.is_zero() {
            println!(
                "   real side only: processing_jitter = {:?} on every emulated link direction",
                s.real.processing_jitter
            );
        }
        let opts = realnet::Options {
            tfrclab: std::env::current_exe()?,
            out: Some(realnet::scenario_dir(out.staging(), s)),
            keep_traces: args.keep_traces,
            realtime: netemu::Realtime::default(),
        };
        let mut progress = |p: Progress| match p {
            Progress::Simulated { runs } => eprintln!("  simulated {runs} runs"),
            Progress::Real {
                rep,
                of,
                distorted,
                lateness,
                load,
                host,
            } => eprintln!(
                "  real run {}/{of}: emulator lateness {}, load {load:.1}{}{}",
                rep + 1,
                lateness.summary(),
                host.map(|h| format!(", {}", h.summary()))
                    .unwrap_or_default(),
                if distorted.is_empty() {
                    String::new()
                } else {
                    format!("; DISTORTED: {}", distorted.join("; "))
                }
            ),
        };
        match realnet::validate(s, reps, &opts, &mut progress) {
            Ok(c) => {
                print!("{}", realnet::text_table(&c));
                println!("{}", realnet::timing_line(&c));
                println!("{}\n", realnet::concentration_line(&c));
                let spread = match &baseline {
                    Some((b, bpath)) => {
                        let file = bpath.display().to_string();
                        match b
                            .scenario(&s.name, bpath)
                            .and_then(|b| realnet::baseline::check(b, &c, &file))
                        {
                            Ok(sp) => {
                                println!("{}", realnet::baseline::text(&sp));
                                Some(sp)
                            }
                            Err(e) => {
                                eprintln!("error: {e}");
                                None
                            }
                        }
                    }
                    None => None,
                };
                entries.push(ScenarioJson {
                    file: s.file.clone(),
                    comparison: Some(c.clone()),
                    error: None,
                    baseline: spread,
                });
                done.push(c);
            }
            Err(e) => {
                eprintln!("error: {}: {e}", s.file);
                if e.is_bad_input() {
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                }
                entries.push(ScenarioJson {
                    file: s.file.clone(),
                    comparison: None,
                    error: Some(e.to_string()),
                    baseline: None,
                });
            }
        }
    }
    let failed = entries.iter().any(|e| e.comparison.is_none());
    let json = Json {
        machine: machine.clone(),
        scenarios: entries,
    };
    std::fs::write(
        out.path("validate-real.json"),
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    let dir = out.commit()?;
    let (agree, differ) = done
        .iter()
        .flat_map(|c| &c.rows)
        .fold((0, 0), |a, r| match r.verdict {
            realnet::Verdict::Agree => (a.0 + 1, a.1),
            realnet::Verdict::Differ => (a.0, a.1 + 1),
            _ => a,
        });
    println!(
        "{agree} rows agree, {differ} differ; wrote {}",
        dir.join("validate-real.json").display()
    );
    if let (Some(path), Some(base)) = (args.markdown, base) {
        let generated = realnet::markdown(&done, &machine);
        let text = splice(&base, &generated)
            .unwrap_or_else(|| format!("{base}{MARK_BEGIN}\n{generated}{MARK_END}\n"));
        if let Err(e) = std::fs::write(path, text) {
            return Ok(bad(format!("{}: cannot write: {e}", path.display())));
        }
        println!("wrote {}", path.display());
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
