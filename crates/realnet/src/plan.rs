//! What runs for real: each simulated flow mapped to its real counterpart (the scenario's
//! `real` key), the sizes that make the real packets as large on the wire as the simulated
//! ones, and clear refusals for what a real network cannot run.

use std::fmt;
use std::time::Duration;

use scenario::{FlowKind, LinkAction, LinuxCc, Scenario, TcpVariant, TfrcProfile};

/// IPv4 + UDP header bytes.
const IP_UDP: u32 = 28;
/// What a sealed TFRC datagram carries besides its segment: `tfrc-udp`'s frame header (12
/// bytes), `tfrc::wire`'s data header (36), and the AEAD sequence number and tag (8 + 16;
/// sessions are sealed by default, docs/security.md).
const TFRC_UDP_OVERHEAD: u32 = IP_UDP + 12 + tfrc::wire::DATA_HEADER_LEN as u32 + 24;
/// IPv4 + TCP headers with the timestamp option Linux sends on every segment.
const IP_TCP_TS: u32 = 20 + 20 + 12;
/// The largest IP packet the emulator carries.
pub const MAX_WIRE: u32 = 2000;
/// Linux's smallest MSS (`TCP_MIN_MSS`).
const MIN_MSS: u32 = 88;
/// A CBR payload starts with a sequence number and a send time (8 bytes each).
const CBR_HEADER: u32 = 16;

/// What runs one flow for real.
#[derive(Clone, Debug, PartialEq)]
pub enum Runner {
    /// `tfrclab send` / `tfrclab recv` with the flow's profile and variants.
    Tfrc {
        /// `rfc5348` or `ns2`.
        profile: &'static str,
        /// The segment size s: the simulated data packet's wire size less the real
        /// datagram's headers, so that both are equally large on the wire.
        segment: u32,
        /// Variant choices (`--variant`), as the scenario wrote them.
        variants: Vec<String>,
        /// `app_rate` (`--rate-limit`), bit/s.
        rate_limit_bps: Option<f64>,
    },
    /// A kernel TCP connection from a sender thread to a receiver thread.
    Tcp {
        /// The kernel's congestion control (`TCP_CONGESTION`).
        cc: String,
        /// The payload of a full segment: the simulated packet's wire size less IP, TCP and
        /// the 12-byte timestamp option, so that a full real segment is as large on the wire
        /// as a simulated one (`TCP_MAXSEG` is set to it plus the option, `sys::set_mss`).
        mss: u32,
        /// `TCP_WINDOW_CLAMP` on the receiver: the simulated `window` in bytes.
        window_clamp: u32,
        /// Whether the simulated variant is a model of this congestion control (`sack`,
        /// `reno` or `newreno` of the kernel's `reno`; `cubic` of `cubic`). Flows without
        /// one (`bbr`) are run and reported, but not compared.
        counterpart: bool,
    },
    /// A paced UDP sender.
    Cbr {
        /// UDP payload bytes (the simulated packet's size less IP and UDP headers).
        payload: u32,
        /// bit/s on the wire.
        rate_bps: f64,
        /// NS-2's `random_`: each interval ± half an interval, uniformly.
        random: bool,
        /// Stop after this many packets.
        max_packets: Option<u64>,
    },
}

/// One flow as it runs for real.
#[derive(Clone, Debug, PartialEq)]
pub struct RealFlow {
    /// Index in the scenario.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Source node.
    pub from: usize,
    /// Destination node.
    pub to: usize,
    /// The receiver's port on `to` (data go to it, control comes from it).
    pub port: u16,
    /// IP bytes of a full data packet.
    pub wire: u32,
    /// What runs it.
    pub runner: Runner,
}

impl RealFlow {
    /// `tfrc`, `reno`, `cubic`, `cbr`, …: what the real side runs.
    pub fn label(&self) -> String {
        match &self.runner {
            Runner::Tfrc { .. } => "tfrc".into(),
            Runner::Tcp { cc, .. } => cc.clone(),
            Runner::Cbr { .. } => "cbr".into(),
        }
    }

    /// Whether the simulation models what runs here.
    pub fn has_counterpart(&self) -> bool {
        !matches!(
            self.runner,
            Runner::Tcp {
                counterpart: false,
                ..
            }
        )
    }
}

/// The scenario as it runs for real.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// One per scenario flow, in order.
    pub flows: Vec<RealFlow>,
    /// MTU of every emulated link: the largest packet any flow sends.
    pub mtu: u32,
    /// Settings that apply to the simulated side only, said so before the runs: the
    /// phase-effect remedies (`processing_jitter`, TCP `overhead`) model host timing that the
    /// real hosts have of their own.
    pub sim_only: Vec<String>,
}

/// Something a real network cannot run, and what would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// What is refused: `link "r0-r1"`, `flow "tcp"`, …
    pub what: String,
    /// Why.
    pub why: String,
    /// What to write instead.
    pub instead: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}; {}", self.what, self.why, self.instead)
    }
}

/// Every refusal of a scenario, for one error message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusals {
    /// The scenario file.
    pub file: String,
    /// What cannot run.
    pub items: Vec<Refusal>,
}

impl fmt::Display for Refusals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: cannot run on a real network:", self.file)?;
        for r in &self.items {
            write!(f, "\n  - {r}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Refusals {}

/// IP bytes of a full simulated data packet: TCP's 40-byte header (NS-2's) on the segment,
/// TFRC's profile overhead, a CBR packet's own size.
fn simulated_wire(f: &scenario::Flow) -> u32 {
    match &f.kind {
        // The Linux model's packets carry the timestamp option, as the kernel's do.
        FlowKind::Tcp {
            variant: TcpVariant::Linux(_),
            ..
        } => f.packet_size + IP_TCP_TS,
        FlowKind::Tcp { .. } => f.packet_size + 40,
        FlowKind::Udp { .. } => f.packet_size,
        FlowKind::Tfrc { .. } | FlowKind::Media { .. } => lab::runner::tfrc_profile(f)
            .and_then(Result::ok)
            .map(|p| p.data_wire_len())
            .unwrap_or(f.packet_size + 36),
    }
}

/// Map every flow of `s` to what runs it for real, or say everything that cannot run.
pub fn plan(s: &Scenario) -> Result<Plan, Refusals> {
    let mut no = Vec::new();
    let mut refuse = |what: String, why: &str, instead: &str| {
        no.push(Refusal {
            what,
            why: why.to_string(),
            instead: instead.to_string(),
        })
    };
    for l in &s.links {
        if l.wireless.is_some() {
            refuse(
                format!("link {:?}", l.name),
                "[links.wireless] is an 802.11-style hop with link-layer retransmission; the \
                 emulator carries packets over a wire and has no MAC to retransmit them",
                "remove [links.wireless] (a [links.loss] model runs on both sides)",
            );
        }
    }
    for n in &s.nodes {
        if n.untrusted {
            refuse(
                format!("node {:?}", n.name),
                "an untrusted node counts the unprotected packets crossing it (seed 000 E6), \
                 which only the simulator observes",
                "remove `untrusted` for the real comparison",
            );
        }
    }
    if !s.protection.flows.is_empty() {
        refuse(
            "[protection] flows".into(),
            "whole-flow protection is a modelled per-packet cost in the simulator; the real \
             transport protects with `--protect`, which changes packet sizes",
            "remove [protection] flows",
        );
    }
    for e in &s.events {
        if matches!(e.action, LinkAction::Down | LinkAction::Up) {
            refuse(
                format!(
                    "event at {} s on link {:?}",
                    e.at.as_secs_f64(),
                    s.links[e.link].name
                ),
                "a link failure recomputes routes in the simulator; the emulated nodes keep \
                 static routes",
                "use `action = \"set\"` events (bandwidth, delay, queue_limit, loss_rate)",
            );
        }
    }
    let mut flows = Vec::new();
    for (i, f) in s.flows.iter().enumerate() {
        let what = format!("flow {:?}", f.name);
        let wire = simulated_wire(f);
        if wire > MAX_WIRE {
            refuse(
                what.clone(),
                &format!("its packets are {wire} bytes on the wire; the emulator carries at most {MAX_WIRE}"),
                "a smaller packet_size",
            );
            continue;
        }
        let runner = match &f.kind {
            FlowKind::Media { .. } => {
                refuse(
                    what.clone(),
                    "a media flow's video source and its frame measures exist only in the \
                     simulator; `tfrclab send` carries bulk data",
                    "a `tfrc` flow with the same profile (its rate is then not the video's)",
                );
                continue;
            }
            FlowKind::Tfrc {
                profile,
                app_rate_bps,
                app_on_off,
                variants,
            } => {
                if app_on_off.is_some() {
                    refuse(
                        what.clone(),
                        "its on-off application (app_on/app_off) exists only in the simulator; \
                         `tfrclab send` has no on-off source",
                        "the flow without app_on and app_off",
                    );
                    continue;
                }
                if wire <= TFRC_UDP_OVERHEAD {
                    refuse(
                        what.clone(),
                        &format!(
                            "its {wire}-byte packets cannot hold the real datagram's {TFRC_UDP_OVERHEAD} header bytes"
                        ),
                        "a larger packet_size",
                    );
                    continue;
                }
                Runner::Tfrc {
                    profile: match profile {
                        TfrcProfile::Rfc5348 => "rfc5348",
                        TfrcProfile::Ns2 => "ns2",
                    },
                    segment: wire - TFRC_UDP_OVERHEAD,
                    variants: variants.iter().map(lab::summary::choice_text).collect(),
                    rate_limit_bps: *app_rate_bps,
                }
            }
            FlowKind::Tcp {
                variant, window, ..
            } => {
                // The Linux model names its kernel counterpart itself.
                let linux_cc = match variant {
                    TcpVariant::Linux(LinuxCc::Reno) => Some("reno"),
                    TcpVariant::Linux(LinuxCc::Cubic) => Some("cubic"),
                    _ => None,
                };
                let Some(cc) = f.real.clone().or(linux_cc.map(String::from)) else {
                    let hint = match variant {
                        TcpVariant::Cubic(_) => "real = \"cubic\"",
                        _ => "real = \"reno\" (Linux's Reno recovers with SACK: the closest simulated variant is \"sack\")",
                    };
                    refuse(
                        what.clone(),
                        &format!(
                            "a simulated TCP {variant:?} has no one real counterpart: say which \
                             kernel congestion control runs it"
                        ),
                        &format!("add {hint}"),
                    );
                    continue;
                };
                let mss = wire.saturating_sub(IP_TCP_TS);
                if mss < MIN_MSS {
                    refuse(
                        what.clone(),
                        &format!(
                            "a {}-byte segment is below Linux's smallest MSS",
                            f.packet_size
                        ),
                        &format!("packet_size of at least {}", MIN_MSS + 12),
                    );
                    continue;
                }
                let counterpart = matches!(
                    (variant, cc.as_str()),
                    (TcpVariant::Cubic(_), "cubic")
                        | (
                            TcpVariant::Sack | TcpVariant::Reno | TcpVariant::NewReno,
                            "reno"
                        )
                ) || linux_cc == Some(cc.as_str());
                Runner::Tcp {
                    cc,
                    mss,
                    window_clamp: window.saturating_mul(mss),
                    counterpart,
                }
            }
            FlowKind::Udp {
                rate_bps,
                random,
                max_packets,
            } => {
                if wire < IP_UDP + CBR_HEADER {
                    refuse(
                        what.clone(),
                        &format!(
                            "{wire}-byte packets cannot hold IP, UDP and the 16-byte sequence \
                             number and send time the real CBR flow carries"
                        ),
                        &format!("packet_size of at least {}", IP_UDP + CBR_HEADER),
                    );
                    continue;
                }
                Runner::Cbr {
                    payload: wire - IP_UDP,
                    rate_bps: *rate_bps,
                    random: *random,
                    max_packets: *max_packets,
                }
            }
        };
        let base = match runner {
            Runner::Tcp { .. } => 5000,
            Runner::Cbr { .. } => 6000,
            Runner::Tfrc { .. } => 7000,
        };
        flows.push(RealFlow {
            index: i,
            name: f.name.clone(),
            from: f.from,
            to: f.to,
            port: base + (i % 1000) as u16,
            wire,
            runner,
        });
    }
    if s.flows.len() > 1000 {
        refuse(
            format!("{} flows", s.flows.len()),
            "each flow needs a port of its own",
            "at most 1000 flows",
        );
    }
    if !no.is_empty() {
        return Err(Refusals {
            file: s.file.clone(),
            items: no,
        });
    }
    let mtu = flows.iter().map(|f| f.wire).max().unwrap_or(1500).max(576);
    Ok(Plan {
        flows,
        mtu,
        sim_only: sim_only(s),
    })
}

/// [`Plan::sim_only`] of `s`.
fn sim_only(s: &Scenario) -> Vec<String> {
    let mut notes = Vec::new();
    let jittered: Vec<&scenario::Node> = s
        .nodes
        .iter()
        .filter(|n| !n.processing_jitter.is_zero())
        .collect();
    let uniform = jittered
        .first()
        .filter(|_| jittered.len() == s.nodes.len())
        .filter(|a| {
            jittered
                .iter()
                .all(|n| n.processing_jitter == a.processing_jitter)
        });
    if let Some(n) = uniform {
        notes.push(format!(
            "processing_jitter = {:?} on every node",
            n.processing_jitter
        ));
    } else {
        for n in jittered {
            notes.push(format!(
                "processing_jitter = {:?} on node {:?}",
                n.processing_jitter, n.name
            ));
        }
    }
    for f in &s.flows {
        if let FlowKind::Tcp { overhead, .. } = &f.kind {
            if !overhead.is_zero() {
                notes.push(format!("overhead = {overhead:?} on flow {:?}", f.name));
            }
        }
    }
    notes
}

/// The refusal for a machine where the real network cannot be built at all.
pub fn privileges() -> Result<(), String> {
    if !netemu::sys::is_root() {
        return Err(
            "the real network needs root: network namespaces, tun devices and \
                    real-time scheduling (run as root, e.g. with sudo)"
                .into(),
        );
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(
            "/dev/net/tun is missing: the kernel's tun driver (CONFIG_TUN) is needed".into(),
        );
    }
    Ok(())
}

/// Check that every kernel congestion control the plan names is available here.
pub fn check_kernel(plan: &Plan) -> Result<(), String> {
    let avail = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default();
    let have: Vec<&str> = avail.split_whitespace().collect();
    for f in &plan.flows {
        if let Runner::Tcp { cc, .. } = &f.runner {
            if !have.contains(&cc.as_str()) {
                return Err(format!(
                    "flow {:?}: this kernel has no congestion control {cc:?} (available: {}; a \
                     module may need loading: modprobe tcp_{cc})",
                    f.name,
                    have.join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// The time every flow of `s` starts in run `seed` of the comparison: the simulator's
/// start-phase offsets (`lab::validate::seeded` with `[real] start_jitter`), used by both
/// sides so that both sample the same start phases.
pub fn seeded(s: &Scenario, seed: u64) -> Scenario {
    let mut t = s.clone();
    t.tolerances.start_jitter = s.real.start_jitter;
    lab::validate::seeded(&t, seed)
}

/// The simulated runs' seeds: 1 … `sim_seeds`.
pub fn sim_seeds(s: &Scenario) -> Vec<u64> {
    (1..=u64::from(s.real.sim_seeds)).collect()
}

/// The seed of real repetition `rep` (0-based): offsets drawn as for a simulated seed, from
/// seeds the simulation does not use.
pub fn rep_seed(rep: u32) -> u64 {
    1_000_000 + u64::from(rep)
}

/// A duration as `1.5 s`.
pub fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
name = "remedies"
duration = "5s"
[topology]
kind = "dumbbell"
senders = 2
access_bandwidth = "1Gbps"
bottleneck_bandwidth = "10Mbps"
bottleneck_delay = "10ms"
[[flows]]
name = "t"
kind = "tcp"
variant = "sack"
real = "reno"
from = "s0"
to = "d0"
[[flows]]
name = "u"
kind = "tfrc"
from = "s1"
to = "d1"
"#;

    fn notes(extra_top: &str, extra: &str) -> Vec<String> {
        let text = format!("{extra_top}{BASE}{extra}");
        let s = Scenario::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        plan(&s).expect("runs for real").sim_only
    }

    #[test]
    fn simulation_only_remedies_are_named() {
        assert!(notes("", "").is_empty());
        assert_eq!(
            notes("processing_jitter = \"1ms\"\n", ""),
            ["processing_jitter = 1ms on every node"]
        );
        // One node exempted: the others are listed one by one.
        let some = notes(
            "processing_jitter = \"1ms\"\n",
            "[[nodes]]\nname = \"r0\"\nprocessing_jitter = 0\n",
        );
        assert!(!some.is_empty());
        assert!(some
            .iter()
            .all(|n| n.starts_with("processing_jitter = 1ms on node")));
        assert!(!some.iter().any(|n| n.contains("\"r0\"")), "{some:?}");
        let over = BASE.replace("real = \"reno\"\n", "real = \"reno\"\noverhead = \"1ms\"\n");
        let s = Scenario::from_str(&over).unwrap();
        assert_eq!(plan(&s).unwrap().sim_only, ["overhead = 1ms on flow \"t\""]);
    }
}
