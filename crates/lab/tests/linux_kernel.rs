//! The Linux TCP model (`profile = "linux"`) against the kernel it models (issue 26): one Reno
//! or CUBIC flow on 10 Mb/s × 20 ms and 50 Mb/s × 100 ms with a DropTail of one BDP and of a
//! quarter BDP, the kernel's runs recorded on the emulated link (`validation/linux/record.sh`,
//! 10 runs per case, cwnd from TCP_INFO every 10 ms) and summarised into
//! `validation/linux/kernel-runs.csv` by this file (`TFRCLAB_KERNEL_RUNS=DIR`), the model run
//! here over 10 seeds (each a different jiffy phase) with the same metric code.
//!
//! Targets (issue 26): slow-start exit within one RTT of the kernel's median; cwnd at the first
//! loss within 10%; sawtooth period and mean cwnd in congestion avoidance within 5%; goodput
//! within the kernel runs' 95% CI. Every row is printed and written to
//! `validation/linux/table.md` (`TFRCLAB_UPDATE_DOCS=1`, with the cwnd plots
//! `docs/linux-cwnd-*.svg`); the rows that meet a target are asserted, the others are listed
//! in `KNOWN_GAPS` with the measured gap (docs/simulator.md, "Linux TCP": checked against the
//! kernel).
//!
//! Budget: 80 simulated runs of 15–20 s, about 20 s in release.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lab::stats::MeanCi;
use lab::{RunOptions, Scenario};

/// One case: controller, path, queue.
#[derive(Clone, Copy, Debug)]
struct Case {
    cc: &'static str,
    path: &'static str,
    queue: &'static str,
    bw_bps: u64,
    delay_ms: u64,
    limit: u32,
    secs: f64,
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for cc in ["reno", "cubic"] {
        for (path, bw, d, full, quarter, secs) in [
            ("10m20", 10_000_000, 10, 17, 4, 15.0),
            ("50m100", 50_000_000, 50, 417, 104, 20.0),
        ] {
            for (queue, limit) in [("1bdp", full), ("q4", quarter)] {
                v.push(Case {
                    cc,
                    path,
                    queue,
                    bw_bps: bw,
                    delay_ms: d,
                    limit,
                    secs,
                });
            }
        }
    }
    v
}

impl Case {
    fn key(&self) -> String {
        format!("{}-{}-{}", self.cc, self.path, self.queue)
    }
    fn rtt(&self) -> f64 {
        2.0 * self.delay_ms as f64 / 1000.0
    }
}

/// One sample of the sender: time since data could first be sent (s), cwnd, ssthresh
/// (`None`: still infinite), state (TCP_INFO's numbering), payload bytes acknowledged.
#[derive(Clone, Copy, Debug)]
struct Sample {
    t: f64,
    cwnd: f64,
    ssthresh: Option<f64>,
    state: u8,
    acked: f64,
}

/// The metrics of one run (the same code for both sides).
#[derive(Clone, Copy, Debug, Default)]
struct Metrics {
    ss_exit: f64,
    cwnd_first_loss: f64,
    mean_cwnd_ca: f64,
    period: f64,
    goodput_bps: f64,
}

const INFINITE_SSTHRESH: f64 = 2_147_483_647.0;

fn metrics(s: &[Sample], secs: f64) -> Metrics {
    let ss_exit = s
        .iter()
        .find(|x| x.ssthresh.is_some() || x.state >= 3)
        .map_or(f64::NAN, |x| x.t);
    let first_loss = s.iter().position(|x| x.state >= 3).unwrap_or(s.len());
    let cwnd_first_loss = s[..first_loss]
        .iter()
        .map(|x| x.cwnd)
        .fold(f64::NAN, f64::max);
    // Congestion avoidance: the last two thirds of the run.
    let from = secs / 3.0;
    let ca: Vec<&Sample> = s.iter().filter(|x| x.t >= from && x.t <= secs).collect();
    let mean_cwnd_ca = ca.iter().map(|x| x.cwnd).sum::<f64>() / ca.len().max(1) as f64;
    let entries = ca
        .windows(2)
        .filter(|w| w[0].state < 3 && w[1].state >= 3)
        .count();
    let period = if entries >= 2 {
        (secs - from) / entries as f64
    } else {
        f64::NAN
    };
    let end = s.iter().rfind(|x| x.t <= secs).map_or(0.0, |x| x.acked);
    Metrics {
        ss_exit,
        cwnd_first_loss,
        mean_cwnd_ca,
        period,
        goodput_bps: end * 8.0 / secs,
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Read a raw kernel run (`crates/netemu/examples/kernel_tcp.rs`'s CSV).
fn read_kernel_run(p: &Path) -> Vec<Sample> {
    let text = std::fs::read_to_string(p).expect("kernel run");
    text.lines()
        .skip(1)
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            Sample {
                t: f[0],
                cwnd: f[1],
                ssthresh: (f[2] < INFINITE_SSTHRESH).then_some(f[2]),
                state: f[5] as u8,
                acked: (f[7] - 1.0).max(0.0),
            }
        })
        .collect()
}

/// The model's run of `c` with `seed`, sampled every 10 ms; times from when the SYN-ACK
/// arrived (when the kernel's `connect` returns and its samples start).
fn model_run(c: &Case, seed: u64) -> Vec<Sample> {
    let path = root().join(format!(
        "scenarios/linux/single-{}.toml",
        if c.path == "10m20" {
            "10m-20ms"
        } else {
            "50m-100ms"
        }
    ));
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text
        .replace("variant = \"cubic\"", &format!("variant = \"{}\"", c.cc))
        .replace(
            &format!("queue_limit = {}", if c.path == "10m20" { 17 } else { 417 }),
            &format!("queue_limit = {}", c.limit),
        )
        .replace(
            "duration = \"30s\"",
            &format!("duration = \"{}s\"", c.secs + 1.0),
        );
    let sc = Scenario::parse(path.to_str().unwrap(), &text).unwrap();
    let r = lab::run(
        &sc,
        &RunOptions {
            seed: Some(seed),
            ..RunOptions::default()
        },
    )
    .unwrap();
    let series = r
        .output
        .results
        .agent_samples
        .iter()
        .find(|a| a.sender)
        .expect("sender samples");
    let col = |name: &str| series.names.iter().position(|n| *n == name).unwrap();
    let (cw, ss, st, ack) = (
        col("cwnd"),
        col("ssthresh"),
        col("ca_state"),
        col("bytes_acked"),
    );
    let k = series.names.len();
    // The handshake takes one RTT plus two 60-byte serialisations.
    let t0 = c.rtt() + 2.0 * 60.0 * 8.0 / c.bw_bps as f64;
    series
        .times
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let v = &series.values[i * k..(i + 1) * k];
            Sample {
                t: t.as_secs_f64() - t0,
                cwnd: v[cw],
                ssthresh: (v[ss] < INFINITE_SSTHRESH).then_some(v[ss]),
                state: v[st] as u8,
                acked: v[ack],
            }
        })
        .filter(|s| s.t >= 0.0)
        .collect()
}

/// `TFRCLAB_KERNEL_RUNS=DIR`: summarise the raw runs into kernel-runs.csv and keep run 1 of
/// each case as a cwnd trace for the plots.
fn summarise_kernel(dir: &Path) {
    let mut out =
        String::from("case,rep,ss_exit,cwnd_first_loss,mean_cwnd_ca,period,goodput_bps\n");
    for c in cases() {
        for rep in 1..=10 {
            let p = dir.join(format!("{}-{rep}.csv", c.key()));
            if !p.exists() {
                continue;
            }
            let s = read_kernel_run(&p);
            let m = metrics(&s, c.secs);
            out.push_str(&format!(
                "{},{rep},{:.4},{},{:.3},{:.4},{:.0}\n",
                c.key(),
                m.ss_exit,
                m.cwnd_first_loss,
                m.mean_cwnd_ca,
                m.period,
                m.goodput_bps
            ));
            if rep == 1 {
                let trace: String = std::iter::once("t,cwnd\n".to_string())
                    .chain(s.iter().map(|x| format!("{:.2},{}\n", x.t, x.cwnd)))
                    .collect();
                std::fs::write(
                    root().join(format!("validation/linux/kernel-cwnd-{}.csv", c.key())),
                    trace,
                )
                .unwrap();
            }
        }
    }
    std::fs::write(root().join("validation/linux/kernel-runs.csv"), out).unwrap();
}

fn kernel_metrics() -> BTreeMap<String, Vec<Metrics>> {
    let text = std::fs::read_to_string(root().join("validation/linux/kernel-runs.csv"))
        .expect("validation/linux/kernel-runs.csv (record.sh, then TFRCLAB_KERNEL_RUNS)");
    let mut m: BTreeMap<String, Vec<Metrics>> = BTreeMap::new();
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let v = |i: usize| f[i].parse::<f64>().unwrap_or(f64::NAN);
        m.entry(f[0].to_string()).or_default().push(Metrics {
            ss_exit: v(2),
            cwnd_first_loss: v(3),
            mean_cwnd_ca: v(4),
            period: v(5),
            goodput_bps: v(6),
        });
    }
    m
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn mean(v: &[f64]) -> f64 {
    MeanCi::of(v).map_or(f64::NAN, |m| m.mean)
}

/// One target's verdict in one case.
struct Row {
    case: String,
    target: &'static str,
    kernel: String,
    model: String,
    gap: String,
    /// `None`: not measurable on either side (fewer than two recoveries in the window).
    met: Option<bool>,
}

/// Targets known to be missed, with the gap measured when they were written down
/// (docs/simulator.md, "Linux TCP": checked against the kernel). A met target listed here
/// fails the test too, so the list stays true.
///
/// - Goodput: the kernel's runs repeat within a few kb/s, so their 95% CI is 0.01–1.5% wide;
///   the model is 0.05–2% off (above in seven cases, by 0.05–1.96%), which the 5% targets on
///   the windows would accept but the CI does not.
/// - cubic-10m20-1bdp, cwnd at the first loss (35 in the kernel, 51 in the model, +45.7%):
///   the kernel's HyStart ends slow start by its ACK-train rule at cwnd 30 in every run. Its
///   receiver acknowledges every segment over much of the first rounds, because each segment
///   ending one of the writer's writes carries PSH and the receiving application's read
///   acknowledges it at once (`tcp_cleanup_rbuf`); the model has that rule and the writer
///   since 2026-11-27 (slow-start exit now within one RTT, period within 0.1%), but its
///   slow start still ends later (median 0.080 s against 0.060 s) and at a larger window.
/// - cubic-50m100-q4, period: some kernel runs have two recoveries within the last 13 s, no
///   model run has.
const KNOWN_GAPS: &[(&str, &str)] = &[
    ("reno-10m20-1bdp", "goodput"),
    ("reno-10m20-q4", "goodput"),
    ("reno-50m100-1bdp", "goodput"),
    ("reno-50m100-q4", "goodput"),
    ("cubic-10m20-1bdp", "goodput"),
    ("cubic-10m20-q4", "goodput"),
    ("cubic-50m100-1bdp", "goodput"),
    ("cubic-10m20-1bdp", "cwnd at first loss"),
    ("cubic-50m100-q4", "sawtooth period"),
];

#[test]
fn linux_model_against_the_kernel() {
    if let Ok(dir) = std::env::var("TFRCLAB_KERNEL_RUNS") {
        summarise_kernel(Path::new(&dir));
    }
    let kernel = kernel_metrics();
    let mut rows = Vec::new();
    let mut plots = Vec::new();
    for c in cases() {
        let Some(k) = kernel.get(&c.key()) else {
            panic!("no kernel runs for {}", c.key());
        };
        let mut runs: Vec<Vec<Sample>> = (1..=10).map(|seed| model_run(&c, seed)).collect();
        let m: Vec<Metrics> = runs.iter().map(|s| metrics(s, c.secs)).collect();
        let col = |v: &[Metrics], f: fn(&Metrics) -> f64| v.iter().map(f).collect::<Vec<_>>();
        let case = c.key();
        // Slow-start exit: medians within one RTT.
        let (ks, ms) = (
            median(col(k, |x| x.ss_exit)),
            median(col(&m, |x| x.ss_exit)),
        );
        rows.push(Row {
            case: case.clone(),
            target: "slow-start exit (s), within 1 RTT of the median",
            kernel: format!("{ks:.3}"),
            model: format!("{ms:.3}"),
            gap: format!("{:+.1} RTT", (ms - ks) / c.rtt()),
            met: Some((ms - ks).abs() <= c.rtt()),
        });
        let rel = |name: &'static str, f: fn(&Metrics) -> f64, tol: f64| {
            let (kv, mv) = (mean(&col(k, f)), mean(&col(&m, f)));
            let g = mv / kv - 1.0;
            Row {
                case: case.clone(),
                target: name,
                kernel: format!("{kv:.3}"),
                model: format!("{mv:.3}"),
                gap: if g.is_finite() {
                    format!("{:+.1}%", 100.0 * g)
                } else {
                    "–".to_string()
                },
                met: (kv.is_finite() || mv.is_finite()).then_some(g.abs() <= tol),
            }
        };
        rows.push(rel(
            "cwnd at first loss, within 10%",
            |x| x.cwnd_first_loss,
            0.10,
        ));
        rows.push(rel("mean cwnd in CA, within 5%", |x| x.mean_cwnd_ca, 0.05));
        rows.push(rel("sawtooth period (s), within 5%", |x| x.period, 0.05));
        let kg = MeanCi::of(&col(k, |x| x.goodput_bps)).unwrap();
        let mg = mean(&col(&m, |x| x.goodput_bps));
        let (lo, hi) = (kg.ci_lo().unwrap_or(kg.mean), kg.ci_hi().unwrap_or(kg.mean));
        rows.push(Row {
            case: case.clone(),
            target: "goodput (Mb/s), in the kernel's 95% CI",
            kernel: format!("{:.3} [{:.3}, {:.3}]", kg.mean / 1e6, lo / 1e6, hi / 1e6),
            model: format!("{:.3}", mg / 1e6),
            gap: format!("{:+.2}%", 100.0 * (mg / kg.mean - 1.0)),
            met: Some((lo..=hi).contains(&mg)),
        });
        plots.push((c, runs.swap_remove(0)));
    }
    let mut table = String::from(
        "| case | target | kernel (10 runs) | model (10 seeds) | gap | met |\n|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        table.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r.case,
            r.target,
            r.kernel,
            r.model,
            r.gap,
            match r.met {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "n/a (under two recoveries per run on both sides)",
            }
        ));
    }
    println!("{table}");
    if std::env::var_os("TFRCLAB_UPDATE_DOCS").is_some() {
        std::fs::write(root().join("validation/linux/table.md"), &table).unwrap();
        for (c, run) in &plots {
            let trace = std::fs::read_to_string(
                root().join(format!("validation/linux/kernel-cwnd-{}.csv", c.key())),
            )
            .unwrap();
            let kernel: Vec<(f64, f64)> = trace
                .lines()
                .skip(1)
                .map(|l| {
                    let (a, b) = l.split_once(',').unwrap();
                    (a.parse().unwrap(), b.parse().unwrap())
                })
                .collect();
            let model: Vec<(f64, f64)> = run.iter().map(|s| (s.t, s.cwnd)).collect();
            let chart = report::charts::LineChart::new(
                format!(
                    "cwnd, {}: Linux 6.18 (kernel run 1) vs netsim profile linux (seed 1)",
                    c.key()
                ),
                "time since the handshake (s)",
                "cwnd (packets)",
            )
            .series("kernel", kernel)
            .series("netsim", model);
            std::fs::write(
                root().join(format!("docs/linux-cwnd-{}.svg", c.key())),
                report::standalone_svg(&report::Chart::to_svg(&chart)),
            )
            .unwrap();
        }
    }
    let mut wrong = Vec::new();
    for r in &rows {
        let Some(met) = r.met else {
            continue;
        };
        let known = KNOWN_GAPS
            .iter()
            .any(|(case, target)| *case == r.case && r.target.starts_with(target));
        if met == known {
            wrong.push(format!(
                "{} / {}: kernel {}, model {}, gap {}{}",
                r.case,
                r.target,
                r.kernel,
                r.model,
                r.gap,
                if known {
                    " (listed as a known gap, but met)"
                } else {
                    ""
                }
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "targets missed or gaps closed:\n{}",
        wrong.join("\n")
    );
}
