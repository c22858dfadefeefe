//! Seed 003: M. I. Ishak, "Performance Comparison and Analysis of TCP-Friendly Rate Control
//! (TFRC) over the Network" (MSc thesis, UniMAP 2013).
//!
//! The thesis compares TFRC, TFRC-SIMD, TFRC-Veno and its combined scheme (Veno with SIMD's
//! increase, β = 0.55 or 0.90), each competing with one TCP NewReno flow, by throughput, delay
//! and packet loss, and claims the combined scheme outperforms the others "up to 5% for
//! throughput efficiency and up to 20% on packet loss" (abstract). Only its front matter
//! survives, so everything here is a **reconstruction**: the variants follow
//! `docs/variants.md` (V1–V3), and the topology is a chosen dumbbell
//! (`scenarios/seeds/seed-003/wired.toml`). tfrclab also runs the same comparison on a lossy
//! path (`lossy.toml`, 5% random loss on the bottleneck), where Veno is meant to help. Both TFRC
//! profiles run. Every number comes from replicated runs (random start offsets per seed).

use std::time::Duration;

use super::{
    estimate, relative_change, Budget, Claim, Config, DataTable, Direction, Experiment, Paper,
    PaperReport, ReportSection, Results, RunResult, Value,
};
use lab::stats::MeanCi;
use report::{ErrorBarChart, ErrorPoint};

/// The seed 003 module.
pub struct Seed003;

/// Full and `--quick` simulated time (the thesis's is lost; 100 s as seed 004's NS-2 runs).
const SECONDS: (f64, f64) = (100.0, 20.0);
/// TFRC profiles: NS-2's and RFC 5348's.
const PROFILES: [&str; 2] = ["ns2", "rfc5348"];
/// The bottleneck's capacity (kb/s), for throughput efficiency.
const BOTTLENECK_KBPS: f64 = 2000.0;
/// The abstract's "up to 5% for throughput efficiency".
const CLAIMED_THROUGHPUT_GAIN: f64 = 0.05;
/// The abstract's "up to 20% on packet loss".
const CLAIMED_LOSS_REDUCTION: f64 = -0.20;

/// The two paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// The thesis's setting: a wired DropTail dumbbell.
    Wired,
    /// The same with 5% Bernoulli loss on the bottleneck (tfrclab's addition).
    Lossy,
}

const PATHS: [Path; 2] = [Path::Wired, Path::Lossy];

impl Path {
    fn id(self) -> &'static str {
        match self {
            Path::Wired => "wired",
            Path::Lossy => "lossy",
        }
    }

    fn file(self) -> &'static str {
        match self {
            Path::Wired => "seed-003/wired.toml",
            Path::Lossy => "seed-003/lossy.toml",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Path::Wired => "wired path (the thesis's setting)",
            Path::Lossy => "lossy path (5% random loss, tfrclab's addition)",
        }
    }
}

/// The TFRC mechanisms compared: (id, label, `variants` value).
const MECHANISMS: [(&str, &str, &str); 5] = [
    ("tfrc", "TFRC", "[]"),
    ("simd", "TFRC-SIMD", "[\"simd\"]"),
    ("veno", "TFRC-Veno", "[\"veno\"]"),
    ("combined-055", "combined, β 0.55", "[\"veno-simd-055\"]"),
    ("combined-090", "combined, β 0.90", "[\"veno-simd-090\"]"),
];

/// The combined scheme's presets (ids in [`MECHANISMS`]).
const PRESETS: [(&str, &str); 2] = [("combined-055", "β 0.55"), ("combined-090", "β 0.90")];

fn config_id(profile: &str, mechanism: &str) -> String {
    format!("{profile}-{mechanism}")
}

fn configs(duration: &str) -> Vec<Config> {
    let mut v = Vec::new();
    for p in PROFILES {
        for (id, label, variants) in MECHANISMS {
            v.push(
                Config::new(config_id(p, id), format!("{p}, {label}"))
                    .set("duration", format!("{duration}s"))
                    .set("flows.tfrc.profile", p)
                    .set("flows.tfrc.variants", variants),
            );
        }
    }
    v
}

/// The per-run quantities compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Q {
    /// The TFRC flow's throughput, kb/s of wire bits.
    TfrcKbps,
    /// The TCP flow's throughput, kb/s.
    TcpKbps,
    /// The TFRC flow's mean one-way delay, ms.
    TfrcDelay,
    /// The TCP flow's mean one-way delay, ms.
    TcpDelay,
    /// The TFRC flow's packet loss rate.
    TfrcLoss,
    /// The TCP flow's packet loss rate.
    TcpLoss,
    /// Jain's index of the two throughputs.
    Jain,
}

impl Q {
    fn of(self, r: &RunResult) -> Result<f64, String> {
        let (a, b) = (r.flow("tfrc")?, r.flow("tcp")?);
        Ok(match self {
            Q::TfrcKbps => a.throughput_bps / 1e3,
            Q::TcpKbps => b.throughput_bps / 1e3,
            Q::TfrcDelay => a.delay_mean_s * 1e3,
            Q::TcpDelay => b.delay_mean_s * 1e3,
            Q::TfrcLoss => a.loss_rate,
            Q::TcpLoss => b.loss_rate,
            Q::Jain => {
                let (x, y) = (a.throughput_bps, b.throughput_bps);
                let s = x * x + y * y;
                if s > 0.0 {
                    (x + y) * (x + y) / (2.0 * s)
                } else {
                    0.0
                }
            }
        })
    }
}

fn samples(results: &Results, path: Path, cfg: &str, q: Q) -> Result<Vec<f64>, String> {
    results.per_seed(path.id(), cfg, |r| q.of(r))
}

fn mean_ci(xs: &[f64]) -> Value {
    MeanCi::of(xs).map_or(Value::Empty, |m| Value::estimate(&m))
}

/// Per-seed relative change of `q`, `mechanism` against TFRC, in percent.
fn change_pct(
    results: &Results,
    path: Path,
    profile: &str,
    mechanism: &str,
    q: Q,
) -> Result<Vec<f64>, String> {
    Ok(relative_change(
        &samples(results, path, &config_id(profile, mechanism), q)?,
        &samples(results, path, &config_id(profile, "tfrc"), q)?,
    )?
    .into_iter()
    .map(|x| x * 100.0)
    .collect())
}

impl Paper for Seed003 {
    fn id(&self) -> &'static str {
        "seed-003"
    }

    fn title(&self) -> &'static str {
        "Ishak, \"Performance Comparison and Analysis of TCP-Friendly Rate Control (TFRC) over the Network\""
    }

    fn experiments(&self, budget: &Budget) -> Result<Vec<Experiment>, String> {
        let d = budget.duration(SECONDS.0, SECONDS.1);
        Ok(PATHS
            .iter()
            .map(|p| {
                configs(&d)
                    .into_iter()
                    .fold(Experiment::new(p.id(), p.file()), Experiment::config)
                    .start_offset_max(Duration::from_secs(1))
            })
            .collect())
    }

    fn report(&self, results: &Results, budget: &Budget) -> Result<PaperReport, String> {
        let secs = budget.duration(SECONDS.0, SECONDS.1);
        let n = budget.seeds;

        // ---- Claims -------------------------------------------------------------------------
        let mut claims = Vec::new();
        for path in PATHS {
            for p in PROFILES {
                for (preset, plabel) in PRESETS {
                    let what = format!("{plabel}, {p} profile, {}", path.label());
                    claims.push(
                        Claim::new(
                            format!("{}-{p}-{preset}-throughput", path.id()),
                            "\"The results of applying the proposed scheme outperform the other \
                             mechanisms up to 5% for throughput efficiency\" (abstract)",
                            format!(
                                "relative change of the TFRC flow's throughput (the same for \
                                 throughput efficiency), combined scheme vs TFRC; {what}"
                            ),
                            Direction::Above,
                            0.0,
                        )
                        .magnitude(CLAIMED_THROUGHPUT_GAIN)
                        .unit("fraction")
                        .samples(relative_change(
                            &samples(results, path, &config_id(p, preset), Q::TfrcKbps)?,
                            &samples(results, path, &config_id(p, "tfrc"), Q::TfrcKbps)?,
                        )?),
                    );
                    claims.push(
                        Claim::new(
                            format!("{}-{p}-{preset}-loss", path.id()),
                            "\"… and up to 20% on packet loss\" (abstract)",
                            format!(
                                "relative change of the TFRC flow's packet loss rate, combined \
                                 scheme vs TFRC; {what}"
                            ),
                            Direction::Below,
                            0.0,
                        )
                        .magnitude(CLAIMED_LOSS_REDUCTION)
                        .unit("fraction")
                        .samples(relative_change(
                            &samples(results, path, &config_id(p, preset), Q::TfrcLoss)?,
                            &samples(results, path, &config_id(p, "tfrc"), Q::TfrcLoss)?,
                        )?),
                    );
                }
            }
        }

        // ---- Results per mechanism ----------------------------------------------------------
        let mut sections = Vec::new();
        let mut means = DataTable::new(
            "results",
            format!(
                "Each mechanism against one TCP NewReno flow: mean [95% CI] over {n} seeds, \
                 {secs} s runs (throughput in kb/s of wire bits; delay: mean one-way delay; \
                 loss: (sent − received) ÷ sent)"
            ),
            [
                "path",
                "profile",
                "mechanism",
                "TFRC throughput (kb/s)",
                "TFRC efficiency",
                "TCP throughput (kb/s)",
                "TFRC delay (ms)",
                "TCP delay (ms)",
                "TFRC loss",
                "TCP loss",
                "Jain",
                "Veno backlog N at the end",
            ],
        );
        for path in PATHS {
            for p in PROFILES {
                for (id, label, _) in MECHANISMS {
                    let cfg = config_id(p, id);
                    let col = |q: Q| samples(results, path, &cfg, q).map(|xs| mean_ci(&xs));
                    let eff: Vec<f64> = samples(results, path, &cfg, Q::TfrcKbps)?
                        .iter()
                        .map(|x| x / BOTTLENECK_KBPS)
                        .collect();
                    let backlog = if id.starts_with("veno") || id.starts_with("combined") {
                        let xs = results.per_seed(path.id(), &cfg, |r| {
                            Ok(r.summary
                                .tfrc
                                .iter()
                                .find(|t| t.flow == "tfrc")
                                .and_then(|t| t.backlog)
                                .unwrap_or(f64::NAN))
                        })?;
                        mean_ci(&xs)
                    } else {
                        Value::Empty
                    };
                    means.row(vec![
                        Value::Text(path.id().into()),
                        Value::Text(p.into()),
                        Value::Text(label.into()),
                        col(Q::TfrcKbps)?,
                        mean_ci(&eff),
                        col(Q::TcpKbps)?,
                        col(Q::TfrcDelay)?,
                        col(Q::TcpDelay)?,
                        col(Q::TfrcLoss)?,
                        col(Q::TcpLoss)?,
                        col(Q::Jain)?,
                        backlog,
                    ]);
                }
            }
        }
        let mut results_section = ReportSection::new("Throughput, delay and loss (Figs. 4.1–4.11)")
            .text(
                "The thesis's chapter 4 plots, for each mechanism competing with TCP NewReno, \
                 throughput efficiency (Figs. 4.1–4.5), delay (Figs. 4.6–4.10) and packet loss \
                 (Tables 4.1–4.5, Fig. 4.11); its figures and tables are lost. \"Veno backlog N\" \
                 is TFRC-Veno's estimate of its packets queued in the network at the last \
                 feedback: below 3 it takes losses for random and uses its gentler equation.",
            )
            .table(means);
        for path in PATHS {
            let mut chart = ErrorBarChart::new(
                format!("Throughput, {}", path.label()),
                "mechanism",
                "throughput (kb/s)",
            );
            for p in PROFILES {
                for (flow, q) in [("TFRC flow", Q::TfrcKbps), ("TCP", Q::TcpKbps)] {
                    let pts = MECHANISMS
                        .iter()
                        .map(|(id, label, _)| {
                            let xs = samples(results, path, &config_id(p, id), q)?;
                            let e = estimate(&MeanCi::of(&xs).ok_or("no samples")?);
                            Ok(ErrorPoint::new(*label, e.mean, e.lo, e.hi))
                        })
                        .collect::<Result<Vec<_>, String>>()?;
                    chart = chart.series(format!("{flow} ({p})"), pts);
                }
            }
            results_section = results_section.figure(
                chart,
                format!("Mean and 95% CI over {n} seeds; each mechanism runs beside TCP NewReno."),
            );
        }
        sections.push(results_section);

        // ---- Tables 4.6–4.8: improvement and degradation against TFRC -------------------------
        let mut imp = DataTable::new(
            "improvement",
            format!(
                "Improvement (+) or degradation (−) against TFRC, the thesis's benchmark (its \
                 Tables 4.6–4.8): per-seed paired relative change in percent, mean [95% CI] over \
                 {n} seeds. For delay and loss a negative change is an improvement."
            ),
            [
                "path",
                "profile",
                "mechanism",
                "TFRC-flow throughput change (%)",
                "TFRC-flow delay change (%)",
                "TFRC-flow loss change (%)",
                "TCP throughput change (%)",
                "throughput vs TFRC-SIMD (%)",
                "throughput vs TFRC-Veno (%)",
            ],
        )
        .in_markdown();
        for path in PATHS {
            for p in PROFILES {
                for (id, label, _) in &MECHANISMS[1..] {
                    let col = |q: Q| change_pct(results, path, p, id, q).map(|xs| mean_ci(&xs));
                    // The combined scheme against the other two enhanced mechanisms as well.
                    let against = |other: &str| -> Result<Value, String> {
                        if !id.starts_with("combined") {
                            return Ok(Value::Empty);
                        }
                        let xs = relative_change(
                            &samples(results, path, &config_id(p, id), Q::TfrcKbps)?,
                            &samples(results, path, &config_id(p, other), Q::TfrcKbps)?,
                        )?;
                        let pct: Vec<f64> = xs.iter().map(|x| x * 100.0).collect();
                        Ok(mean_ci(&pct))
                    };
                    imp.row(vec![
                        Value::Text(path.id().into()),
                        Value::Text(p.into()),
                        Value::Text((*label).into()),
                        col(Q::TfrcKbps)?,
                        col(Q::TfrcDelay)?,
                        col(Q::TfrcLoss)?,
                        col(Q::TcpKbps)?,
                        against("simd")?,
                        against("veno")?,
                    ]);
                }
            }
        }
        sections.push(
            ReportSection::new("Improvement and degradation against TFRC (Tables 4.6–4.8)")
                .text(
                    "The thesis's headline: the combined scheme outperforms the other \
                     mechanisms \"up to 5%\" in throughput efficiency and \"up to 20%\" in packet \
                     loss. Read here as the combined scheme's change against TFRC (the thesis's \
                     \"analysis benchmark\"), each β preset separately: \"up to\" is taken as the \
                     claimed magnitude, which the CI must reach (a larger effect also supports \
                     it); the claims table evaluates it on both paths and with both profiles. \
                     TFRC-SIMD and TFRC-Veno are the other mechanisms the thesis compares; the \
                     last two columns set the combined scheme against them directly.",
                )
                .table(imp),
        );

        // ---- Setup ----------------------------------------------------------------------------
        sections.insert(
            0,
            ReportSection::new("Topology and reconstruction")
                .pre(
                    " S1 (TFRC) --10 Mb/s, 2 ms--+                               +--10 Mb/s, 2 ms-- D1\n                            R1 --2 Mb/s, 20 ms, DropTail-- R2\n S2 (TCP)  --10 Mb/s, 2 ms--+                               +--10 Mb/s, 2 ms-- D2",
                )
                .note(
                    "Reconstruction: only the thesis's front matter survives (title, abstract, \
                     contents, lists of tables and figures). Its topology (Fig. 3.4, Table 3.4), \
                     its equation (§3.3) and every printed result are lost, as are the bodies of \
                     the TFRC-Veno and SIMD papers it builds on. The variants are the \
                     reconstructions of docs/variants.md (V1 veno, V2 simd, V3 veno-simd-055 / \
                     veno-simd-090), the topology is a chosen dumbbell, and no printed value \
                     can be compared; only the abstract's claim is tested.",
                )
                .text(format!(
                    "A 2 Mb/s, 20 ms DropTail bottleneck (NS-2's default limit 50) between \
                     10 Mb/s, 2 ms access links; one TFRC flow S1 → D1 (always data) and one TCP \
                     NewReno flow S2 → D2 (the thesis's figures name \"TCP Newreno\"; TCPSink, \
                     window_ 20), 1000-byte packets, {secs} s, each flow starting up to 1 s late \
                     per seed. The lossy path loses each data packet on the bottleneck with \
                     probability 0.05 (seed 002's wireless loss rate): there the random losses, \
                     not the queue, limit the flows, so the queue stays short and Veno's \
                     backlog rule can call losses random; at lower rates (1%) the two flows \
                     still fill the link and Veno mostly sees a standing queue."
                )),
        );

        let best = |path: Path| -> Result<(f64, &str), String> {
            let mut best = (f64::NEG_INFINITY, "");
            for (preset, plabel) in PRESETS {
                let xs = change_pct(results, path, "ns2", preset, Q::TfrcKbps)?;
                let m = MeanCi::of(&xs).map_or(f64::NAN, |m| m.mean);
                if m > best.0 {
                    best = (m, plabel);
                }
            }
            Ok(best)
        };
        let (wired_best, wired_preset) = best(Path::Wired)?;
        let (lossy_best, lossy_preset) = best(Path::Lossy)?;
        Ok(PaperReport {
            summary: format!(
                "reconstruction; combined scheme vs TFRC (ns2), best preset: {wired_best:+.1}% \
                 throughput on the wired path ({wired_preset}), {lossy_best:+.1}% on the lossy \
                 path ({lossy_preset}); thesis: up to +5%"
            ),
            intro: vec![
                "The thesis proposes a \"TFRC proposed scheme\" combining TFRC-SIMD and \
                 TFRC-Veno and compares it with TFRC, TFRC-SIMD and TFRC-Veno, each competing \
                 with one TCP NewReno flow in NS-2, by throughput efficiency, delay and packet \
                 loss. Only its front matter survives: the variants, the topology and the \
                 reading of its claim are reconstructions, stated below."
                    .into(),
                format!(
                    "Replicated runs: {n} seeds, each flow starting up to 1 s late, {secs} s \
                     runs; both TFRC profiles (ns2, the thesis's NS-2 TFRC, and rfc5348)."
                ),
            ],
            claims,
            sections,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_cover_every_mechanism_and_profile() {
        let cs = configs("100");
        assert_eq!(cs.len(), PROFILES.len() * MECHANISMS.len());
        for (preset, _) in PRESETS {
            assert!(MECHANISMS.iter().any(|(id, _, _)| *id == preset));
            assert!(cs.iter().any(|c| c.id == config_id("rfc5348", preset)));
        }
        assert!(cs.iter().all(|c| c
            .set
            .iter()
            .any(|(k, v)| k == "flows.tfrc.variants" && v.starts_with('['))));
    }
}
