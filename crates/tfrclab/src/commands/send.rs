//! `tfrclab send`: TFRC over a real UDP socket to a `tfrclab recv` (issue 8). Sends a file,
//! stdin, or generated data (bulk, or CBR with `--rate-limit`); shows a live status line on a
//! terminal; prints the flow summary with the metric names of `summary.json`.

use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use clap::Parser;
use serde::Serialize;
use tfrc::profile::{HeaderRtt, Oscillation};
use tfrc::variants::{VariantChoice, VariantError};
use tfrc::{Profile, ProfileKind};
use tfrc_udp::frame::Mode;
use tfrc_udp::{FlowSummary, HostQueue, Protect, Sender, SenderOptions, SenderStats, Source};

use crate::EXIT_BAD_INPUT;
use scenario::units;

/// Arguments of `tfrclab send`.
#[derive(Parser, Debug)]
// "--duration -3" is a bad duration, not an unknown flag.
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Receiver address (HOST:PORT) where `tfrclab recv` listens.
    #[arg(long, value_name = "ADDR")]
    to: String,
    /// Stop after this long ("30", "30s", "500ms"); default 10 s for generated data, until the
    /// end of the input otherwise.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    duration: Option<Duration>,
    /// Send this file, or `-` for stdin, one segment per packet (default: generated data).
    #[arg(long, value_name = "FILE|-")]
    input: Option<String>,
    /// The application's rate ("2Mbps", "500kb", bit/s): data become ready no faster, so TFRC
    /// sends at min(X, R). Without it, the source is greedy.
    #[arg(long = "rate-limit", value_name = "R", value_parser = rate)]
    rate_limit: Option<f64>,
    /// TFRC profile: `rfc5348` or `ns2`.
    #[arg(long, value_name = "NAME", default_value = "rfc5348", value_parser = profile)]
    profile: ProfileKind,
    /// Segment size s in bytes (payload per packet).
    #[arg(long = "segment-size", value_name = "BYTES", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(1..=tfrc_udp::MAX_SEGMENT as i64))]
    segment_size: u32,
    /// How the session is protected. `noise` (the default): a Noise handshake, then every
    /// packet encrypted and integrity-protected (ChaCha20-Poly1305); with --peer-key the
    /// receiver is authenticated (IK), without it the handshake is unauthenticated (NN: safe
    /// from eavesdroppers and from injection after the handshake, but an active man in the
    /// middle of the handshake can relay the session). `plain`: no encryption and no
    /// integrity: anyone who sees the traffic reads it and can inject data, feedback or a FIN
    /// (the receiver must allow it with `recv --allow-plain`). `rsa-unauthenticated`: seed
    /// 000's RSA-OAEP exchange (E6): an active attacker on the path can substitute the key;
    /// the paper's variant, not a protection to rely on.
    #[arg(long, value_name = "MODE", value_parser = protect_mode)]
    protect: Option<Mode>,
    /// The receiver's public key, pinned (Noise IK, the receiver is authenticated): 64 hex
    /// digits, or a file from `tfrclab keygen` (its `.pub`).
    #[arg(long = "peer-key", value_name = "HEX|FILE")]
    peer_key: Option<String>,
    /// This sender's key file (`tfrclab keygen`), for a receiver that allows listed senders
    /// only (`recv --allow`); default: a fresh key for each session.
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// A variant of the catalogue (`tfrclab variants` lists them, `docs/variants.md` explains
    /// them), with parameters: `NAME[:param=value,...]`; repeatable. Applied onto --profile;
    /// the receiver applies the same list (the HELLO carries it). `owd-classifier` gets
    /// `offset_clock=1` unless given: the two ends' clocks are not synchronised.
    #[arg(long = "variant", value_name = "NAME[:p=v,...]", value_parser = variant)]
    variants: Vec<VariantChoice>,
    /// Lower bound on the nofeedback interval ("100ms"); departs from RFC 5348, whose
    /// max(4R, 2s/X) fires between feedbacks on a LAN. Default: none (the RFC).
    #[arg(long = "nofeedback-min", value_name = "DURATION", value_parser = duration)]
    nofeedback_min: Option<Duration>,
    /// §4.5 oscillation damping: `rfc5348` (X_inst = X·R_sqmean/sqrt(R_sample), which the RFC
    /// RECOMMENDS), `capped` (the same, but never above X: Linux CCID-3's choice; not
    /// RFC 5348) or `off` (X_inst = X; not RFC 5348). On a path whose RTT is almost all
    /// queueing, one empty-queue sample makes the RFC's X_inst 25–30 × X.
    #[arg(long, value_name = "MODE", default_value = "rfc5348", value_parser = oscillation)]
    oscillation: OscillationMode,
    /// The RTT data packets carry to the receiver (§5.2): `smoothed` (R, as the RFC
    /// RECOMMENDS) or `latest` (max(R, latest R_sample); not RFC 5348's recommendation: while a
    /// deep queue builds, R lags the RTT and the receiver splits one loss event into several).
    #[arg(long = "header-rtt", value_name = "MODE", default_value = "smoothed", value_parser = header_rtt)]
    header_rtt: HeaderRtt,
    /// How much of this host's own queues the sender fills: `small` (the send buffer follows
    /// the rate, max(8 KiB, 1 ms at X), about what Linux TCP keeps there; a full buffer makes
    /// the sender wait) or `buffer` (a 4 MiB send buffer: a shaper on this host fills until it
    /// drops, each drop then halving X; before issue 16).
    #[arg(long = "host-queue", value_name = "MODE", default_value = "small", value_parser = host_queue)]
    host_queue: HostQueue,
    /// Do not give the core the handshake's RTT (RFC 5348 §4.2 allows it; without it the
    /// first packet goes at one segment per second until the first feedback).
    #[arg(long = "no-handshake-rtt")]
    no_handshake_rtt: bool,
    /// Ask for ECN (RFC 3168): if the receiver agrees, data go out ECN-capable (ECT(0)) and a
    /// router that marks Congestion Experienced slows the sender as a loss would (RFC 5348
    /// §5.1), without the packet being dropped. The summary says whether it was agreed.
    #[arg(long)]
    ecn: bool,
    /// Write one JSON line of sender state per feedback to FILE.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Write every datagram this sender sent and received to FILE, a pcap file of IP/UDP
    /// frames with the real addresses (docs/wireshark.md).
    #[arg(long, value_name = "FILE")]
    pcap: Option<PathBuf>,
    /// Flow name in the summary.
    #[arg(long, value_name = "NAME", default_value = "tfrc")]
    name: String,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// No live status line.
    #[arg(long)]
    quiet: bool,
}

fn duration(v: &str) -> Result<Duration, String> {
    let d = units::parse_duration(v)?;
    if d.is_zero() {
        return Err(format!("'{v}' must be longer than zero"));
    }
    Ok(d)
}

fn rate(v: &str) -> Result<f64, String> {
    let bps = units::parse_bandwidth(v)?;
    if bps <= 0.0 {
        return Err(format!("'{v}' must be a rate above zero"));
    }
    Ok(bps)
}

fn variant(v: &str) -> Result<VariantChoice, String> {
    let c: VariantChoice = v.parse().map_err(|e: VariantError| e.to_string())?;
    // Name, parameters and ranges are checked here, so that a typo is reported before
    // connecting; what a variant needs from the others (rto-link-error needs a classifier) is
    // checked on the whole list in `run`.
    match tfrc::variants::apply(Profile::rfc5348(), std::slice::from_ref(&c)) {
        Ok(_) | Err(VariantError::Requires { .. }) => Ok(c),
        Err(e) => Err(e.to_string()),
    }
}

fn protect_mode(v: &str) -> Result<Mode, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "noise" => Ok(Mode::Noise),
        "plain" => Ok(Mode::Plain),
        "rsa-unauthenticated" => Ok(Mode::RsaUnauthenticated),
        _ => Err(format!(
            "'{v}' is not a protection mode (expected noise, plain or rsa-unauthenticated)"
        )),
    }
}

fn host_queue(v: &str) -> Result<HostQueue, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "small" => Ok(HostQueue::Small),
        "buffer" => Ok(HostQueue::Buffer),
        _ => Err(format!(
            "'{v}' is not a host queue mode (expected small or buffer)"
        )),
    }
}

fn header_rtt(v: &str) -> Result<HeaderRtt, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "smoothed" => Ok(HeaderRtt::Smoothed),
        "latest" => Ok(HeaderRtt::LatestSampleOrSmoothed),
        _ => Err(format!(
            "'{v}' is not a header RTT mode (expected smoothed or latest)"
        )),
    }
}

/// `--oscillation`'s values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OscillationMode {
    /// The profile's own §4.5 policy (RFC 5348: X_inst = X·R_sqmean/sqrt(R_sample)).
    Rfc5348,
    /// X_inst capped at X (not RFC 5348).
    Capped,
    /// No damping (not RFC 5348).
    Off,
}

fn oscillation(v: &str) -> Result<OscillationMode, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "rfc5348" => Ok(OscillationMode::Rfc5348),
        "capped" => Ok(OscillationMode::Capped),
        "off" => Ok(OscillationMode::Off),
        _ => Err(format!(
            "'{v}' is not an oscillation mode (expected rfc5348, capped or off)"
        )),
    }
}

fn profile(v: &str) -> Result<ProfileKind, String> {
    v.parse::<Profile>()
        .map(|p| p.kind)
        .map_err(|e| e.to_string())
}

/// Resolve `--flag ADDR` to one socket address, or say what is wrong with it.
pub(crate) fn resolve(flag: &str, addr: &str) -> Result<SocketAddr, String> {
    addr.to_socket_addrs()
        .map_err(|e| format!("{flag} {addr}: {e} (expected HOST:PORT)"))?
        .next()
        .ok_or_else(|| format!("{flag} {addr}: no address"))
}

/// Report bad input: one line, exit code 2.
pub(crate) fn bad_input(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// The live status line, redrawn in place on a terminal.
pub(crate) struct Status {
    on: bool,
}

impl Status {
    pub(crate) fn new(quiet: bool) -> Status {
        Status {
            on: !quiet && io::stderr().is_terminal(),
        }
    }

    pub(crate) fn show(&self, line: &str) {
        if self.on {
            eprint!("\r\x1b[K{line}");
            let _ = io::stderr().flush();
        }
    }

    pub(crate) fn clear(&self) {
        if self.on {
            eprint!("\r\x1b[K");
        }
    }
}

#[derive(Serialize)]
struct Output<'a> {
    flows: Vec<&'a FlowSummary>,
    sender: &'a SenderStats,
    receiver: Option<&'a tfrc_udp::ReceiverReport>,
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let to = match resolve("--to", &args.to) {
        Ok(a) => a,
        Err(m) => return Ok(bad_input(&m)),
    };
    let mut input: Option<Box<dyn Read + Send>> = match args.input.as_deref() {
        None => None,
        Some("-") => Some(Box::new(io::stdin())),
        // A directory opens on Linux and fails only at the first read, after the handshake.
        Some(p) if std::path::Path::new(p).is_dir() => {
            return Ok(bad_input(&format!(
                "--input {p}: is a directory (expected a file, or - for stdin)"
            )))
        }
        Some(p) => match File::open(p) {
            Ok(f) => Some(Box::new(f)),
            Err(e) => return Ok(bad_input(&format!("--input {p}: {e}"))),
        },
    };
    let log: Option<Box<dyn Write + Send>> = match &args.log {
        None => None,
        Some(p) => match File::create(p) {
            Ok(f) => Some(Box::new(io::BufWriter::new(f))),
            Err(e) => return Ok(bad_input(&format!("--log {}: {e}", p.display()))),
        },
    };
    let pcap = match super::pcap_arg(args.pcap.as_deref()) {
        Ok(p) => p,
        Err(m) => return Ok(bad_input(&m)),
    };
    let source = if input.is_some() {
        Source::Messages
    } else {
        Source::Generated
    };
    let duration = match (args.duration, source) {
        (None, Source::Generated) => Some(Duration::from_secs(10)),
        (d, _) => d,
    };
    let mut profile = Profile::preset(args.profile).with_segment_size(args.segment_size);
    let q2 = match profile.sender.oscillation {
        Oscillation::SqrtRtt { q2 } | Oscillation::SqrtRttCapped { q2 } => q2,
        Oscillation::Off => 0.9,
    };
    match args.oscillation {
        OscillationMode::Rfc5348 => {}
        OscillationMode::Capped => profile.sender.oscillation = Oscillation::SqrtRttCapped { q2 },
        OscillationMode::Off => profile.sender.oscillation = Oscillation::Off,
    }
    profile.sender.nofeedback_min = args.nofeedback_min;
    profile.sender.header_rtt = args.header_rtt;
    let variants = tfrc_udp::sender::real_network_variants(&args.variants);
    if let Err(e) = tfrc::variants::apply(profile, &variants) {
        return Ok(bad_input(&format!("--variant: {e}")));
    }
    let protect = match (args.protect, &args.peer_key, &args.key) {
        (None | Some(Mode::Noise), None, None) => Protect::NoiseUnauthenticated,
        (Some(Mode::Plain), None, None) => Protect::None,
        (None | Some(Mode::Noise), Some(pk), key) => {
            let receiver = match super::public_key_arg("--peer-key", pk) {
                Ok(k) => k,
                Err(m) => return Ok(bad_input(&m)),
            };
            let identity = match key {
                None => None,
                Some(p) => match super::key_file_arg("--key", p) {
                    Ok(k) => Some(k),
                    Err(m) => return Ok(bad_input(&m)),
                },
            };
            Protect::Noise { receiver, identity }
        }
        (None | Some(Mode::Noise), None, Some(_)) => {
            return Ok(bad_input(
                "--key needs --peer-key: a sender proves its key only to a receiver it \
                 authenticates (the receiver's public key: `tfrclab keygen` printed it, or give \
                 its .pub file)",
            ))
        }
        (Some(Mode::RsaUnauthenticated), None, None) => Protect::RsaUnauthenticated,
        _ => {
            return Ok(bad_input(
                "--peer-key and --key go with --protect noise only",
            ))
        }
    };
    let opts = SenderOptions {
        profile,
        variants,
        protect,
        source,
        rate_limit_bps: args.rate_limit,
        duration,
        handshake_rtt: !args.no_handshake_rtt,
        feedback_log: log,
        host_queue: args.host_queue,
        ecn: args.ecn,
        capture: pcap.clone().map(tfrc_udp::capture::Capture::new),
        ..SenderOptions::default()
    };
    let signals = super::Signals::catch()?;
    let status = Status::new(args.quiet);
    status.show(&format!("send: connecting to {to} ..."));
    let tx = match Sender::connect(to, opts) {
        Ok(t) => t,
        Err(e) => {
            status.clear();
            anyhow::bail!("send --to {to}: {e}");
        }
    };
    // The input is read on a thread of its own that hands chunks over a small channel, so that
    // a signal ends the session even while a read blocks (on a terminal or a pipe).
    let s = tx.max_message();
    let chunks = input.take().map(|r| spawn_reader(r, s));
    let mut pending: Option<Vec<u8>> = None;
    let mut input_done = chunks.is_none();
    let mut read_err = None;
    let mut next_status = std::time::Instant::now();
    while !tx.is_finished() && signals.exit_code().is_none() {
        let mut progressed = false;
        if let Some(rx) = chunks.as_ref().filter(|_| !input_done) {
            if pending.is_none() {
                match rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(Ok(c)) => pending = Some(c),
                    Ok(Err(e)) => {
                        read_err = Some(e);
                        input_done = true;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => input_done = true,
                }
            }
            if let Some(c) = pending.take() {
                match tx.try_send(c.clone()) {
                    Ok(true) => progressed = true,
                    Ok(false) => pending = Some(c),
                    // The sender stopped (duration over).
                    Err(_) => input_done = true,
                }
            }
        } else {
            std::thread::sleep(Duration::from_millis(50));
        }
        if input_done && chunks.is_some() {
            break;
        }
        if !progressed && pending.is_some() {
            std::thread::sleep(Duration::from_millis(2));
        }
        if std::time::Instant::now() >= next_status {
            status.show(&tx.stats().status_line());
            next_status = std::time::Instant::now() + Duration::from_millis(250);
        }
    }
    let interrupted = signals.exit_code();
    // Interrupted: stop now (what is queued is dropped), FIN, and the summary as usual.
    let report = if interrupted.is_some() {
        tx.abort()
    } else {
        tx.close()
    };
    status.clear();
    if let Some(e) = read_err {
        let what = args.input.as_deref().unwrap_or("-");
        anyhow::bail!("--input {what}: {e}");
    }
    let report = report?;
    super::pcap_finish(pcap)?;
    let mut stdout = io::stdout().lock();
    match &report.flow {
        Some(flow) => {
            let f = FlowSummary {
                name: args.name.clone(),
                ..flow.clone()
            };
            if args.json {
                let o = Output {
                    flows: vec![&f],
                    sender: &report.sender,
                    receiver: report.receiver.as_ref(),
                };
                writeln!(stdout, "{}", serde_json::to_string_pretty(&o)?)?;
            } else {
                f.write_lines(&mut stdout)?;
                let r = report.receiver.as_ref();
                writeln!(
                    stdout,
                    "# sender: X {:.3} Mb/s, RTT {}, p {:.5}, feedbacks {}, nofeedback expiries {}, hops {}, ECN {}",
                    report.sender.x_bps / 1e6,
                    report
                        .sender
                        .rtt_s
                        .map_or("-".into(), |r| format!("{:.3} ms", r * 1e3)),
                    report.sender.p,
                    report.sender.feedbacks,
                    report.sender.nofeedback_expiries,
                    report
                        .sender
                        .hops
                        .map_or("-".to_string(), |h| h.to_string()),
                    if report.sender.ecn { "on" } else { "off" },
                )?;
                if let Some(r) = r {
                    writeln!(
                        stdout,
                        "# receiver: drops {} ({}), reordered {}, protection {}",
                        r.drops.total(),
                        r.drops,
                        r.reordered,
                        if r.protection.is_empty() {
                            "plain"
                        } else {
                            &r.protection
                        }
                    )?;
                }
            }
            Ok(interrupted.map_or(ExitCode::SUCCESS, ExitCode::from))
        }
        None => {
            anyhow::bail!(
                "the receiver did not answer the FIN; sent {} packets, no summary",
                report.sender.packets_sent
            )
        }
    }
}

/// Read `r` in chunks of `s` bytes (the last one shorter) on a thread of its own; the channel
/// ends after the last chunk or the first error.
fn spawn_reader(mut r: Box<dyn Read + Send>, s: usize) -> mpsc::Receiver<io::Result<Vec<u8>>> {
    let (tx, rx) = mpsc::sync_channel(4);
    std::thread::spawn(move || loop {
        let mut chunk = vec![0u8; s];
        let mut n = 0;
        while n < s {
            match r.read(&mut chunk[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        if n == 0 {
            return;
        }
        chunk.truncate(n);
        if tx.send(Ok(chunk)).is_err() || n < s {
            return;
        }
    });
    rx
}
