//! One real run of a scenario: its topology built as namespaces and emulated links, its flows
//! started at their (seeded) start times, everything stopped at the end, the capture read into
//! the same metrics a simulation gives, and the run's timing checked.

use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use lab::metrics::{Bottleneck, Fairness, FlowMetrics, FlowTiming};
use lab::runner::{applies, link_settings, loss_config, queue_config};
use netemu::engine::{DirCounters, Endpoint, LinkSpec};
use netemu::sys::monotonic_ns;
use netemu::{Config, DirConfig, Emulator, Lateness, NetSpec, Network, Realtime, Update};
use netsim::Time;
use scenario::{LinkAction, Scenario};
use serde::{Deserialize, Serialize};

use crate::capture;
use crate::flows::{self, TcpSample};
use crate::plan::{self, Plan, Runner};

/// How real runs are made.
#[derive(Clone, Debug)]
pub struct Options {
    /// The `tfrclab` binary that runs TFRC flows (`tfrclab send` / `recv`).
    pub tfrclab: PathBuf,
    /// Where each run's files go (`tcp_info.csv`, the TFRC ends' JSON, a kept trace);
    /// `None`: a temporary folder, removed afterwards.
    pub out: Option<PathBuf>,
    /// Keep each run's capture as an NS-2 trace (`trace.tr`).
    pub keep_traces: bool,
    /// The emulator's scheduling.
    pub realtime: Realtime,
}

/// What the simulation knows of the topology that the real metrics need too: each flow's
/// bottleneck and path RTT (the topology is the same on both sides).
#[derive(Clone, Debug)]
pub struct Topology {
    /// Per flow.
    pub bottlenecks: Vec<Option<Bottleneck>>,
    /// Per flow: twice its data path's propagation delay.
    pub path_rtts: Vec<Option<Duration>>,
}

/// The emulator's figures for one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EmulatorFigures {
    /// Lateness of every write against its due time.
    pub lateness: Lateness,
    /// Lateness of its timed wake-ups.
    pub wakeups: Lateness,
    /// Why SCHED_FIFO was refused (`None`: granted).
    pub fifo_refused: Option<String>,
    /// Why memory locking was refused (`None`: locked).
    pub lock_refused: Option<String>,
    /// Per link direction.
    pub dirs: Vec<DirCounters>,
    /// Arrivals dropped because every buffer was in use.
    pub buffer_overflow: u64,
    /// Forwarded packets not seen entering.
    pub unmatched: u64,
}

/// A paced sender's timing in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SenderTiming {
    /// Flow name.
    pub flow: String,
    /// Median, 99th percentile and maximum lateness against its own schedule, µs.
    pub lateness_us: Option<[f64; 3]>,
}

/// One real run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RealRun {
    /// 0-based repetition.
    pub rep: u32,
    /// The seed its start offsets came from.
    pub seed: u64,
    /// Each flow's start, seconds.
    pub starts_s: Vec<f64>,
    /// Per flow, from the capture.
    pub flows: Vec<FlowMetrics>,
    /// Fairness and friendliness, from the capture.
    pub fairness: Fairness,
    /// The emulator's timing and counters.
    pub emulator: EmulatorFigures,
    /// TFRC and CBR senders' timing.
    pub senders: Vec<SenderTiming>,
    /// How the congestion drops fell on the flows, from the warm-up on (`lab::drops`).
    #[serde(default)]
    pub drops: Vec<lab::drops::DropShare>,
    /// Why the run is distorted; empty: it is not.
    pub distorted: Vec<String>,
    /// `/proc/loadavg`'s 1-minute figure at the start and the end.
    pub load: [f64; 2],
    /// The host's other work between the run's start and its end (softirq, `ksoftirqd`'s
    /// waiting, steal); absent in records made before it was measured.
    #[serde(default)]
    pub host: Option<crate::host::HostLoad>,
    /// Where its files are, if kept.
    pub dir: Option<String>,
}

/// Why a real run could not be made.
#[derive(Debug)]
pub struct RunFailed(pub String);

impl std::fmt::Display for RunFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RunFailed {}

fn fail(what: &str) -> impl Fn(io::Error) -> RunFailed + '_ {
    move |e| RunFailed(format!("{what}: {e}"))
}

/// The 1-minute load average.
pub fn load1() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Everything a run started, stopped and reaped when it ends, however it ends.
struct Guard {
    stop: Arc<AtomicBool>,
    children: Vec<(String, Child)>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for (_, c) in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Wait for `c` to exit until `deadline` (monotonic ns); false if it is still running.
fn wait_until(c: &mut Child, deadline: u64) -> bool {
    loop {
        if matches!(c.try_wait(), Ok(Some(_))) {
            return true;
        }
        if monotonic_ns() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

type Joined<T> = JoinHandle<io::Result<io::Result<T>>>;

fn join<T>(h: Joined<T>, what: &str) -> Result<T, RunFailed> {
    h.join()
        .map_err(|_| RunFailed(format!("{what}: the thread panicked")))?
        .and_then(|r| r)
        .map_err(fail(what))
}

/// Make real run `rep` of `s` (planned as `plan`). Needs root.
pub fn run(
    s: &Scenario,
    plan: &Plan,
    topo: &Topology,
    rep: u32,
    opts: &Options,
) -> Result<RealRun, RunFailed> {
    let seed = plan::rep_seed(rep);
    let sr = plan::seeded(s, seed);
    let load_start = load1();
    let host_start = crate::host::Snapshot::take();
    let scratch;
    let dir = match &opts.out {
        Some(d) => d.clone(),
        None => {
            scratch = tempdir()?;
            scratch.0.clone()
        }
    };
    std::fs::create_dir_all(&dir).map_err(fail("output folder"))?;

    let spec = NetSpec {
        tag: std::process::id().to_string(),
        nodes: s.nodes.iter().map(|n| n.name.clone()).collect(),
        links: s
            .links
            .iter()
            .map(|l| (l.from as u32, l.to as u32, l.duplex))
            .collect(),
        mtu: plan.mtu,
    };
    let mut net = Network::build(&spec).map_err(fail("building the network"))?;
    let addrs: Vec<Ipv4Addr> = net.addrs.clone();
    let tuns = std::mem::take(&mut net.tuns);
    let links: Vec<LinkSpec> = s
        .links
        .iter()
        .zip(tuns)
        .map(|(l, (ta, tb))| {
            let dir = |forward: bool| DirConfig {
                bandwidth_bps: l.bandwidth_bps.round().max(1.0) as u64,
                delay: l.delay,
                queue: queue_config(&l.queue),
                loss: l
                    .loss
                    .as_ref()
                    .filter(|x| applies(x.direction, forward))
                    .map(|x| loss_config(&x.model)),
                // `[real] processing_jitter`: the real side's random service delay; the
                // emulator's lateness counts from the jittered due times, so the added delay
                // is not reported as timing error.
                arrival_jitter: s.real.processing_jitter,
            };
            LinkSpec {
                name: l.name.clone(),
                a: Endpoint {
                    node: l.from as u32,
                    tun: ta,
                },
                b: Endpoint {
                    node: l.to as u32,
                    tun: tb,
                },
                forward: dir(true),
                reverse: l.duplex.then(|| dir(false)),
            }
        })
        .collect();
    let mut updates = Vec::new();
    for e in &s.events {
        if let LinkAction::Set(set) = e.action {
            let l = &s.links[e.link];
            for forward in std::iter::once(true).chain(l.duplex.then_some(false)) {
                updates.push(Update {
                    at: e.at,
                    link: e.link,
                    forward,
                    settings: link_settings(l, set, forward),
                });
            }
        }
    }
    // Time zero: a second from now, for the receivers to start.
    let epoch = monotonic_ns() + 1_000_000_000;
    let at = |d: Duration| epoch + d.as_nanos() as u64;
    let emu = Emulator::start(Config {
        epoch_ns: epoch,
        nodes: addrs.clone(),
        links,
        updates,
        seed,
        classifier: Some(capture::classifier(plan, &addrs)),
        realtime: opts.realtime,
        capture: true,
    })
    .map_err(fail("starting the emulator"))?;

    let mut guard = Guard {
        stop: Arc::new(AtomicBool::new(false)),
        children: Vec::new(),
    };
    let stop = guard.stop.clone();
    let mut tcp_rx = Vec::new();
    let mut sinks = Vec::new();
    let mut tcp_tx = Vec::new();
    let mut cbr_tx = Vec::new();
    // Receiving ends first.
    for f in &plan.flows {
        let ns = &net.nodes[f.to];
        let what = format!("flow {:?}", f.name);
        match &f.runner {
            Runner::Tcp { window_clamp, .. } => tcp_rx.push(
                flows::tcp_receiver(ns, addrs[f.to], f.port, *window_clamp, stop.clone())
                    .map_err(fail(&what))?,
            ),
            Runner::Cbr { .. } => sinks
                .push(flows::udp_sink(ns, addrs[f.to], f.port, stop.clone()).map_err(fail(&what))?),
            Runner::Tfrc { .. } => {
                let args: Vec<String> = [
                    "recv",
                    "--listen",
                    &format!("{}:{}", addrs[f.to], f.port),
                    "--json",
                    "--quiet",
                    "--sessions",
                    "1",
                    "--idle-timeout",
                    "5",
                    "--name",
                    &f.name,
                ]
                .iter()
                .map(|x| x.to_string())
                .collect();
                let stem = file_stem(&f.name);
                let c = flows::tfrclab(
                    ns,
                    &opts.tfrclab,
                    &args,
                    &dir.join(format!("{stem}.recv.json")),
                    &dir.join(format!("{stem}.recv.err")),
                )
                .map_err(fail(&what))?;
                guard.children.push((format!("{} recv", f.name), c));
            }
        }
    }
    // Senders: threads wait for their start themselves; processes are started at theirs.
    let mut tfrc_tx: Vec<(usize, Duration, Vec<String>, String)> = Vec::new();
    for f in &plan.flows {
        let sf = &sr.flows[f.index];
        let ns = &net.nodes[f.from];
        let what = format!("flow {:?}", f.name);
        let to = SocketAddrV4::new(addrs[f.to], f.port);
        match &f.runner {
            Runner::Tcp { cc, mss, .. } => tcp_tx.push((
                f.index,
                flows::tcp_sender(
                    ns,
                    flows::TcpPlan {
                        from: addrs[f.from],
                        to,
                        cc: cc.clone(),
                        mss: *mss,
                        start_ns: at(sf.start),
                        stop_ns: at(sf.stop),
                        epoch_ns: epoch,
                        sample_every: s.real.tcp_info_interval,
                    },
                    stop.clone(),
                )
                .map_err(fail(&what))?,
            )),
            Runner::Cbr {
                payload,
                rate_bps,
                random,
                max_packets,
            } => cbr_tx.push((
                f.index,
                flows::cbr_sender(
                    ns,
                    flows::CbrPlan {
                        from: addrs[f.from],
                        to,
                        payload: *payload,
                        interval_s: f64::from(f.wire) * 8.0 / rate_bps,
                        random: *random,
                        max_packets: *max_packets,
                        start_ns: at(sf.start),
                        stop_ns: at(sf.stop),
                        seed: seed ^ (f.index as u64) << 32,
                    },
                    stop.clone(),
                )
                .map_err(fail(&what))?,
            )),
            Runner::Tfrc {
                profile,
                segment,
                variants,
                rate_limit_bps,
            } => {
                let mut args: Vec<String> = vec![
                    "send".into(),
                    "--to".into(),
                    to.to_string(),
                    "--duration".into(),
                    format!("{}ms", (sf.stop - sf.start).as_millis().max(1)),
                    "--profile".into(),
                    profile.to_string(),
                    "--segment-size".into(),
                    segment.to_string(),
                    "--json".into(),
                    "--quiet".into(),
                    "--name".into(),
                    f.name.clone(),
                ];
                for v in variants {
                    args.push("--variant".into());
                    args.push(v.clone());
                }
                if let Some(r) = rate_limit_bps {
                    args.push("--rate-limit".into());
                    args.push(format!("{}", r.round()));
                }
                tfrc_tx.push((f.index, sf.start, args, file_stem(&f.name)));
            }
        }
    }
    tfrc_tx.sort_by_key(|x| x.1);
    let mut senders: Vec<(usize, String)> = Vec::new();
    for (i, start, args, stem) in tfrc_tx {
        let never = AtomicBool::new(false);
        sleep_until(at(start), &never);
        let c = flows::tfrclab(
            &net.nodes[s.flows[i].from],
            &opts.tfrclab,
            &args,
            &dir.join(format!("{stem}.send.json")),
            &dir.join(format!("{stem}.send.err")),
        )
        .map_err(fail(&format!("flow {:?}", s.flows[i].name)))?;
        guard
            .children
            .push((format!("{} send", s.flows[i].name), c));
        senders.push((i, stem));
    }
    sleep_until(at(s.duration), &AtomicBool::new(false));
    // The TFRC senders end with their FIN exchange; the receivers after it.
    let grace = at(s.duration) + 5_000_000_000;
    for (name, c) in &mut guard.children {
        if name.ends_with(" send") && !wait_until(c, grace) {
            let _ = c.kill();
        }
    }
    for (name, c) in &mut guard.children {
        if name.ends_with(" recv") && !wait_until(c, grace + 1_000_000_000) {
            let _ = c.kill();
        }
    }
    stop.store(true, Ordering::SeqCst);
    let mut tcp_series: Vec<(usize, Vec<TcpSample>)> = Vec::new();
    for (i, h) in tcp_tx {
        let sent = join(h, &format!("flow {:?} (TCP sender)", s.flows[i].name))?;
        tcp_series.push((i, sent.samples));
    }
    for h in tcp_rx {
        join(h, "a TCP receiver")?;
    }
    let mut timing: Vec<SenderTiming> = Vec::new();
    for (i, h) in cbr_tx {
        let mut sent = join(h, &format!("flow {:?} (CBR sender)", s.flows[i].name))?;
        let l = Lateness::of(&mut sent.lateness_ns);
        timing.push(SenderTiming {
            flow: s.flows[i].name.clone(),
            lateness_us: (l.n > 0).then(|| {
                [
                    l.p50_ns as f64 / 1e3,
                    l.p99_ns as f64 / 1e3,
                    l.max_ns as f64 / 1e3,
                ]
            }),
        });
    }
    for h in sinks {
        join(h, "a UDP sink")?;
    }
    let report = emu.stop().map_err(fail("the emulator"))?;
    let host = host_start.until(&crate::host::Snapshot::take());
    drop(guard);
    drop(net);

    // TFRC senders' own timing, from their reports.
    let mut failures = Vec::new();
    for (i, stem) in &senders {
        let text =
            std::fs::read_to_string(dir.join(format!("{stem}.send.json"))).unwrap_or_default();
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(v) => timing.push(SenderTiming {
                flow: s.flows[*i].name.clone(),
                lateness_us: v["sender"]["wake_lateness_us"].as_array().and_then(|a| {
                    Some([
                        a.first()?.as_f64()?,
                        a.get(1)?.as_f64()?,
                        a.get(2)?.as_f64()?,
                    ])
                }),
            }),
            Err(_) => {
                let err = std::fs::read_to_string(dir.join(format!("{stem}.send.err")))
                    .unwrap_or_default();
                failures.push(format!(
                    "flow {:?}: `tfrclab send` gave no report: {}",
                    s.flows[*i].name,
                    err.trim()
                ));
            }
        }
    }
    if !failures.is_empty() {
        return Err(RunFailed(failures.join("; ")));
    }

    // Metrics from the capture.
    let cap = report.capture.clone().unwrap_or_default();
    let link_ends: Vec<(u32, u32)> = s
        .links
        .iter()
        .map(|l| (l.from as u32, l.to as u32))
        .collect();
    let ends: Vec<(u32, u32)> = s
        .flows
        .iter()
        .map(|f| (f.from as u32, f.to as u32))
        .collect();
    let cfg = lab::runner::stats_config(s, false);
    let until = Time::from_nanos(s.duration.as_nanos() as u64);
    let seen = capture::recorders(&cap, &link_ends, &ends, &cfg, until);
    let metrics: Vec<FlowMetrics> = s
        .flows
        .iter()
        .zip(&seen)
        .map(|(f, x)| {
            lab::metrics::flow_metrics(
                &lab::summary::flow_input(&sr, f, &x.recorder, x.sent, x.delivered),
                lab::summary::window(s),
            )
        })
        .collect();
    let timings: Vec<FlowTiming<'_>> = sr
        .flows
        .iter()
        .zip(&seen)
        .zip(&topo.path_rtts)
        .map(|((f, x), rtt)| FlowTiming {
            path_rtt: *rtt,
            active: (f.start.max(s.warmup), f.stop.min(s.duration)),
            received_bins: x.recorder.received_series(),
        })
        .collect();
    let payload: Vec<u64> = seen.iter().map(|x| x.recorder.delivered_payload).collect();
    let fairness = lab::metrics::fairness(
        &metrics,
        &topo.bottlenecks,
        &payload,
        &timings,
        s.sample_interval,
    );

    // How the drops fell, from the same events a simulation's trace gives.
    let (mut counter, tally) = lab::drops::DropCounter::new(s, s.warmup);
    let ports: Vec<u16> = plan.flows.iter().map(|f| f.port).collect();
    capture::each_line(&cap, &link_ends, &ports, &mut |l| {
        netsim::trace::TraceSink::record(&mut counter, l)
    })
    .map_err(fail("counting drops"))?;
    let drops = tally.borrow().shares();

    // Files: the kernel's TCP state, and the capture as a trace if asked for.
    write_tcp_info(&dir.join("tcp_info.csv"), s, &tcp_series).map_err(fail("tcp_info.csv"))?;
    if opts.keep_traces {
        let mut w = io::BufWriter::new(
            std::fs::File::create(dir.join("trace.tr")).map_err(fail("trace.tr"))?,
        );
        capture::write_ns2(&cap, &link_ends, &ports, &mut w).map_err(fail("trace.tr"))?;
        w.flush().map_err(fail("trace.tr"))?;
    }

    // Was the run's timing good enough?
    let mut distorted = Vec::new();
    if let Some(why) = report
        .lateness
        .distortion("emulator write", s.real.lateness_p99)
    {
        distorted.push(why);
    }
    for t in &timing {
        if let Some([p50, p99, max]) = t.lateness_us {
            let limit = s.real.send_lateness_p99.as_secs_f64() * 1e6;
            if p99 > limit {
                distorted.push(format!(
                    "flow {:?}: sender lateness p99 {p99:.0} µs exceeds {limit:.0} µs (p50 {p50:.0} µs, max {max:.0} µs)",
                    t.flow
                ));
            }
        }
    }
    if report.buffer_overflow > 0 {
        distorted.push(format!(
            "the emulator dropped {} arrivals for want of buffers",
            report.buffer_overflow
        ));
    }
    let write_errors: u64 = report.dirs.iter().map(|d| d.write_errors).sum();
    if write_errors > 0 {
        distorted.push(format!(
            "the kernel refused {write_errors} of the emulator's deliveries"
        ));
    }
    Ok(RealRun {
        rep,
        seed,
        starts_s: sr.flows.iter().map(|f| f.start.as_secs_f64()).collect(),
        flows: metrics,
        fairness,
        emulator: EmulatorFigures {
            lateness: report.lateness,
            wakeups: report.wakeups,
            fifo_refused: report.fifo_refused.clone(),
            lock_refused: report.lock_refused.clone(),
            dirs: report.dirs.clone(),
            buffer_overflow: report.buffer_overflow,
            unmatched: report.unmatched,
        },
        senders: timing,
        drops,
        distorted,
        load: [load_start, load1()],
        host: Some(host),
        dir: opts.out.as_ref().map(|d| d.display().to_string()),
    })
}

fn sleep_until(at: u64, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let now = monotonic_ns();
        if now >= at {
            return;
        }
        std::thread::sleep(Duration::from_nanos((at - now).min(50_000_000)));
    }
}

/// A flow name as a file name.
fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `tcp_info.csv`: one row per sample: flow, time, the kernel's congestion state.
fn write_tcp_info(path: &Path, s: &Scenario, series: &[(usize, Vec<TcpSample>)]) -> io::Result<()> {
    let mut w = io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        w,
        "flow,time_s,cwnd,ssthresh,rtt_s,rttvar_s,unacked,lost,total_retrans,ca_state"
    )?;
    for (i, samples) in series {
        for x in samples {
            writeln!(
                w,
                "{},{:.6},{},{},{:.6},{:.6},{},{},{},{}",
                s.flows[*i].name,
                x.time_s,
                x.cwnd,
                x.ssthresh,
                x.rtt_s,
                x.rttvar_s,
                x.unacked,
                x.lost,
                x.total_retrans,
                x.ca_state
            )?;
        }
    }
    w.flush()
}

/// A temporary folder, removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempdir() -> Result<TempDir, RunFailed> {
    use std::sync::atomic::AtomicU64;
    static N: AtomicU64 = AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!(
        "tfrclab-real-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).map_err(fail("temporary folder"))?;
    Ok(TempDir(d))
}
