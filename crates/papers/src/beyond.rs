//! A reproduction beyond the seeds: seed 004's and seed 002's TFRC-vs-TCP comparisons rerun
//! against the TCPs of today, with the papers' claim "TFRC is friendly to TCP" tested for each
//! beside the papers' own Tahoe and NewReno.
//!
//! Both papers ran NS-2's Tahoe (`Agent/TCP`; the seed 002 and 004 modules add NewReno). The
//! variants compared are listed once, in [`TCP_VARIANTS`]: adding a TCP (a new scenario
//! `variant` value) to the reproduction is one line there. Each runs
//! - seed 002's wired/wireless hybrid (`seed-002/bernoulli.toml` and `arq.toml`: the original
//!   TFRC, ns2 profile, beside TCP), as seed 002's scene 1 does with Tahoe;
//! - seed 004's 10-node topology with one TFRC flow (ns2 profile) competing with one TCP flow
//!   (`seed-004/tfrc-vs-tcp.toml`): the paper compared the two in separate runs and found
//!   TFRC's throughput above TCP's, so the two are put on the network together here, with
//!   NS-2's `window_` 20 and with 100.
//!
//! The claim is seed 002's operational "friendly": Jain's index of the TFRC and the TCP flow's
//! throughput at least 0.9, per seed, with a 95% CI over the seeds.
//!
//! A second part runs the rest of the TFRC family the seeds cite or leave out — TFRC-SP,
//! MulTFRC, TFRC with ECN — and answers issue 31's questions with confidence intervals
//! (`crate::family`).

use std::time::Duration;

use lab::stats::MeanCi;

use crate::{
    Budget, Claim, Config, DataTable, Direction, Experiment, Paper, PaperReport, ReportSection,
    Results, RunResult, Value,
};

/// One TCP compared: its id in the results, the scenario's `variant` and `profile`, a label,
/// the model the verdict rests on, and whether a seed paper ran it.
#[derive(Clone, Copy, Debug)]
pub struct TcpModel {
    /// Config id (unique).
    pub id: &'static str,
    /// Scenario `variant`.
    pub variant: &'static str,
    /// Scenario `profile` (`None`: the variant's default).
    pub profile: Option<&'static str>,
    /// Row label.
    pub label: &'static str,
    /// Which model of that TCP the simulator runs (docs/simulator.md).
    pub model: &'static str,
    /// A seed paper ran it.
    pub papers: bool,
}

const fn m(
    id: &'static str,
    variant: &'static str,
    profile: Option<&'static str>,
    label: &'static str,
    model: &'static str,
    papers: bool,
) -> TcpModel {
    TcpModel {
        id,
        variant,
        profile,
        label,
        model,
        papers,
    }
}

/// The TCPs compared. Add one here (its scenario values must exist) and every experiment,
/// claim and table follows.
pub const TCP_VARIANTS: &[TcpModel] = &[
    m(
        "tahoe",
        "tahoe",
        None,
        "Tahoe (the papers' TCP)",
        "NS-2.35 Agent/TCP",
        true,
    ),
    m(
        "newreno",
        "newreno",
        None,
        "NewReno (beside the papers)",
        "NS-2.35 Agent/TCP/Newreno",
        true,
    ),
    m(
        "sack",
        "sack",
        None,
        "SACK (NS-2's Sack1)",
        "NS-2.35 Agent/TCP/Sack1",
        false,
    ),
    m(
        "cubic",
        "cubic",
        None,
        "CUBIC (RFC 9438, SACK recovery)",
        "RFC 9438 on NS-2's Agent/TCP/Linux sender",
        false,
    ),
    m(
        "reno-linux",
        "reno",
        Some("linux"),
        "Reno (Linux 6.18)",
        "Linux 6.18 model (profile linux: RACK-TLP, PRR, delayed ACKs)",
        false,
    ),
    m(
        "cubic-linux",
        "cubic",
        Some("linux"),
        "CUBIC (Linux 6.18, HyStart)",
        "Linux 6.18 model (profile linux: tcp_cubic.c, RACK-TLP, PRR)",
        false,
    ),
];

/// Jain's index at or above which two flows count as sharing fairly ("friendly"), as seed 002
/// and seed 004 read it.
const FAIR_JAIN: f64 = 0.9;

/// The experiments: id, scenario file, TFRC flow, TCP flow, full and quick seconds, label, and
/// the TCP's `window_` (`None`: as the file has it).
type Setting = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    (f64, f64),
    &'static str,
    Option<u32>,
);

const SETTINGS: [Setting; 4] = [
    (
        "seed002-bernoulli",
        "seed-002/bernoulli.toml",
        "tfrc",
        "tcp",
        (120.0, 30.0),
        "seed 002, plain 5% loss on the wireless hops",
        None,
    ),
    (
        "seed002-arq",
        "seed-002/arq.toml",
        "tfrc",
        "tcp",
        (120.0, 30.0),
        "seed 002, 802.11 ARQ on the wireless hops",
        None,
    ),
    (
        "seed004-mixed",
        "seed-004/tfrc-vs-tcp.toml",
        "A",
        "B",
        (100.0, 30.0),
        "seed 004's topology, TFRC and TCP (window 20) competing",
        None,
    ),
    (
        "seed004-mixed-w100",
        "seed-004/tfrc-vs-tcp.toml",
        "A",
        "B",
        (100.0, 30.0),
        "seed 004's topology, TFRC and TCP (window 100, not window-limited) competing",
        Some(100),
    ),
];

/// The reproduction beyond the seeds.
pub struct Beyond;

/// Throughputs (Mb/s) of the TFRC and the TCP flow of a run.
fn pair(r: &RunResult, tfrc: &str, tcp: &str) -> Result<(f64, f64), String> {
    Ok((
        r.flow(tfrc)?.throughput_bps / 1e6,
        r.flow(tcp)?.throughput_bps / 1e6,
    ))
}

fn mean_ci(xs: &[f64]) -> Value {
    MeanCi::of(xs).map_or(Value::Empty, |m| Value::estimate(&m))
}

impl Paper for Beyond {
    fn id(&self) -> &'static str {
        "beyond-seeds"
    }

    fn title(&self) -> &'static str {
        "Beyond the seeds: TFRC-vs-TCP friendliness against newer TCPs, and the rest of the \
         TFRC family (TFRC-SP, Faster Restart, MulTFRC, ECN)"
    }

    fn experiments(&self, budget: &Budget) -> Result<Vec<Experiment>, String> {
        let mut out: Vec<Experiment> = SETTINGS
            .iter()
            .map(|&(id, file, _, tcp, secs, _, window)| {
                let d = budget.duration(secs.0, secs.1);
                TCP_VARIANTS
                    .iter()
                    .map(|t| {
                        let mut c = Config::new(t.id, t.label)
                            .set("duration", format!("{d}s"))
                            .set(format!("flows.{tcp}.variant"), t.variant);
                        if let Some(p) = t.profile {
                            // The same segments as the NS-2 rows: only the model differs.
                            c = c
                                .set(format!("flows.{tcp}.profile"), p)
                                .set(format!("flows.{tcp}.packet_size"), "1000");
                        }
                        match window {
                            Some(w) => c.set(format!("flows.{tcp}.window"), w.to_string()),
                            None => c,
                        }
                    })
                    .fold(Experiment::new(id, file), Experiment::config)
                    .start_offset_max(Duration::from_secs(1))
            })
            .collect();
        out.extend(crate::family::experiments(budget));
        Ok(out)
    }

    fn measure(
        &self,
        experiment: &Experiment,
        scenario: &scenario::Scenario,
        run: &lab::runner::RunOutput,
    ) -> Vec<lab::sweep::MetricValue> {
        crate::family::measure(experiment, scenario, run)
    }

    fn report(&self, results: &Results, budget: &Budget) -> Result<PaperReport, String> {
        let mut claims = Vec::new();
        let mut sections = Vec::new();
        for &(id, _, tfrc, tcp, secs, label, _) in &SETTINGS {
            let mut tcp_drops = 0.0;
            let mut t = DataTable::new(
                format!("{id}-by-tcp"),
                format!(
                    "{label}: TFRC (ns2 profile) beside each TCP, mean [95% CI] over {} seeds",
                    budget.seeds
                ),
                [
                    "TCP",
                    "model the verdict rests on",
                    "run by a seed paper",
                    "TFRC Mb/s",
                    "TCP Mb/s",
                    "TFRC / TCP",
                    "Jain's index",
                    "TCP drops per run",
                ],
            )
            .in_markdown();
            for tm in TCP_VARIANTS {
                let (v, vlabel, papers) = (tm.id, tm.label, tm.papers);
                let q = |f: fn(f64, f64) -> f64| {
                    results.per_seed(id, v, |r| pair(r, tfrc, tcp).map(|(a, b)| f(a, b)))
                };
                let jain = q(|a, b| lab::metrics::jain(&[a, b]))?;
                let drops = results.per_seed(id, v, |r| Ok(r.flow(tcp)?.dropped_packets as f64))?;
                tcp_drops += drops.iter().sum::<f64>();
                t.row(vec![
                    Value::Text(vlabel.to_string()),
                    Value::Text(tm.model.to_string()),
                    Value::Text(if papers { "yes" } else { "no" }.to_string()),
                    mean_ci(&q(|a, _| a)?),
                    mean_ci(&q(|_, b| b)?),
                    mean_ci(&q(|a, b| if b > 0.0 { a / b } else { f64::NAN })?),
                    mean_ci(&jain),
                    mean_ci(&drops),
                ]);
                claims.push(
                    Claim::new(
                        format!("{id}-friendly-{v}"),
                        "\"TFRC is friendly to TCP\" (seed 002, scene 1; seed 004 §IV compares \
                         TFRC with TCP)",
                        format!(
                            "Jain's index of TFRC's and TCP {v}'s throughput ({}), {label}; \
                             friendly means at least {FAIR_JAIN}",
                            tm.model
                        ),
                        Direction::Above,
                        FAIR_JAIN,
                    )
                    .samples(jain),
                );
            }
            let secs = budget.duration(secs.0, secs.1);
            let mut section = ReportSection::new(label)
                .text(format!(
                    "{secs} s runs, each flow starting up to 1 s late (the same offsets for \
                     every TCP within a seed, so the rows are paired). Jain's index is \
                     symmetric: the TFRC / TCP column says which flow takes more (below 1, \
                     TFRC yields to TCP)."
                ))
                .table(t);
            if tcp_drops == 0.0 {
                section = section.note(
                    "The TCP flow lost no packet in any of these runs (its window, not loss, \
                     limits it), so the variants, which differ only in loss recovery, behave \
                     identically here.",
                );
            }
            sections.push(section);
        }
        let (family_claims, family_sections) = crate::family::report(results, budget)?;
        claims.extend(family_claims);
        sections.extend(family_sections);
        let names: Vec<&str> = TCP_VARIANTS.iter().map(|v| v.id).collect();
        Ok(PaperReport {
            summary: format!(
                "TFRC's friendliness to TCP {} on seed 002's and seed 004's networks \
                 (Jain's index ≥ {FAIR_JAIN}); TFRC-SP, Faster Restart, MulTFRC and ECN against TCP",
                names.join(", ")
            ),
            intro: vec![
                "Seed 002 and seed 004 compared TFRC with NS-2's default TCP (Tahoe). \"TCP \
                 friendly\" today means friendly to the TCPs hosts run: this reproduction reruns \
                 both comparisons against each TCP variant of the list, the papers' own beside \
                 the newer ones, and tests the papers' claim for each."
                    .into(),
                format!(
                    "Friendly: Jain's index of the two flows' throughput at least {FAIR_JAIN} \
                     (seed 002's reading; seed 004's tables use the same index). Seed 004's TFRC \
                     and TCP ran in separate runs in the paper; here one TFRC and one TCP flow \
                     share its topology (scenarios/seeds/seed-004/tfrc-vs-tcp.toml)."
                ),
                "The second part puts the rest of the TFRC family on the lab's networks (issue \
                 31): TFRC-SP (RFC 4828) against TCP at random packet loss, Faster Restart for \
                 an on-off source beside TCP, MulTFRC with N = 1 and 2 beside two TCPs, and \
                 TFRC with and without ECN at a marking RED queue \
                 (scenarios/seeds/family/)."
                    .into(),
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
    fn every_variant_runs_in_every_setting() {
        let ex = Beyond.experiments(&Budget::full(2)).unwrap();
        assert_eq!(ex.len(), SETTINGS.len() + 4);
        for e in &ex[..SETTINGS.len()] {
            let ids: Vec<&str> = e.configs.iter().map(|c| c.id.as_str()).collect();
            let want: Vec<&str> = TCP_VARIANTS.iter().map(|v| v.id).collect();
            assert_eq!(ids, want);
            for (c, t) in e.configs.iter().zip(TCP_VARIANTS) {
                assert!(c
                    .set
                    .iter()
                    .any(|(k, v)| k.ends_with(".variant") && v == t.variant));
            }
        }
        // Each variant and profile is a scenario value the parser knows.
        for t in TCP_VARIANTS {
            let profile = t
                .profile
                .map_or(String::new(), |p| format!("\nprofile = \"{p}\""));
            let text = include_str!("../../../scenarios/seeds/seed-004/tfrc-vs-tcp.toml").replace(
                "variant = \"tahoe\"",
                &format!("variant = \"{}\"{profile}", t.variant),
            );
            scenario::Scenario::parse("tfrc-vs-tcp.toml", &text).expect("variant parses");
        }
    }
}
