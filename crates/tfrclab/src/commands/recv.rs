//! `tfrclab recv`: the receiving end of `tfrclab send` (issues 8, 16 and 29). Serves
//! concurrent sessions (`--sessions N` of them carrying data, then exits), writes the delivered
//! payloads of one session (`--out`) or of each session to its own file (`--out-dir`), never
//! mixing two sessions in one stream (in arrival order; TFRC does not retransmit, so losses
//! are gaps), shows a live status line on a terminal, and prints each session's flow summary,
//! also when interrupted (SIGINT, SIGTERM).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use serde::Serialize;
use std::path::PathBuf;
use tfrc_udp::{FlowSummary, Receiver, ReceiverOptions, ReceiverReport};

use super::send::{bad_input, resolve, Status};

/// Arguments of `tfrclab recv`.
#[derive(Parser, Debug)]
pub struct Args {
    /// Address to listen on (HOST:PORT).
    #[arg(long, value_name = "ADDR")]
    listen: String,
    /// Write the received data to FILE, or `-` for stdout (default: discard): the stream of
    /// the first session that delivers data, alone. Data of any other session is not written
    /// (the summary says how much); with `--sessions 1` only.
    #[arg(long, value_name = "FILE|-", conflicts_with = "out_dir")]
    out: Option<String>,
    /// Write each session's data to a file of its own in DIR (created if missing), named by
    /// the session id: `DIR/<16 hex digits>.bin`.
    #[arg(long = "out-dir", value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// Accept Noise sessions (authenticated keys) with this static key, from `tfrclab keygen`;
    /// senders pin its public half (`send --protect noise --peer-key`).
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// Noise: accept only this sender public key (64 hex digits or a key file); repeatable.
    /// Default: any sender that knows this receiver's public key.
    #[arg(long = "allow", value_name = "HEX|FILE")]
    allow: Vec<String>,
    /// Refuse sessions that are not protected. The default; kept so that older scripts run.
    #[arg(long = "require-protection", conflicts_with = "allow_plain")]
    require_protection: bool,
    /// Also accept plain sessions (`send --protect plain`): no encryption and no integrity.
    /// Anyone who sees the traffic can read it and inject data, feedback or a FIN into it; the
    /// random session id keeps out only attackers who cannot see it.
    #[arg(long = "allow-plain")]
    allow_plain: bool,
    /// Refuse unauthenticated Noise sessions: serve only senders that pinned this receiver's
    /// key (`send --peer-key`). Needs --key; implied by --allow.
    #[arg(long = "require-authentication")]
    require_authentication: bool,
    /// Also accept seed 000's RSA-OAEP exchange (E6). Unauthenticated: an active attacker on
    /// the path can substitute the key. The key is generated at start.
    #[arg(long = "rsa-unauthenticated")]
    rsa_unauthenticated: bool,
    /// RSA modulus bits of the receiver's key for `--rsa-unauthenticated` (at least 2048).
    #[arg(long = "rsa-bits", value_name = "N", default_value_t = tfrc_protect::DEFAULT_MODULUS_BITS,
          value_parser = rsa_bits)]
    rsa_bits: usize,
    /// Exit after this many sessions that carried data have ended, by FIN or idle timeout (0:
    /// serve until interrupted). They are anyone's sessions: whoever can reach the port and
    /// complete a handshake can be one of them and end the receiver. To count only your
    /// senders, give --key and list them with --allow (then no one else gets a session).
    #[arg(long, value_name = "N", default_value_t = 1)]
    sessions: u64,
    /// Most sessions at once.
    #[arg(long = "max-sessions", value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    max_sessions: u32,
    /// Most sessions at once from one sender IP address.
    #[arg(long = "max-per-address", value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    max_per_address: u32,
    /// End the session when the sender has been silent this long (seconds).
    #[arg(long = "idle-timeout", value_name = "SECONDS", default_value_t = 10.0,
          value_parser = positive)]
    idle_timeout: f64,
    /// Write every datagram this receiver received and sent to FILE, a pcap file of IP/UDP
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

fn rsa_bits(v: &str) -> Result<usize, String> {
    let b = super::rsa_modulus_bits(v)?;
    if b < tfrc_udp::receiver::MIN_RSA_BITS {
        return Err(format!(
            "{b} bits is too small for a key on the network: at least {}",
            tfrc_udp::receiver::MIN_RSA_BITS
        ));
    }
    Ok(b)
}

fn positive(v: &str) -> Result<f64, String> {
    let x: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("'{v}' is not a number"))?;
    if !(x.is_finite() && x > 0.0 && x < 1e6) {
        return Err(format!("{v} must be a number of seconds above zero"));
    }
    Ok(x)
}

#[derive(Serialize)]
struct Output<'a> {
    flows: Vec<&'a FlowSummary>,
    /// The first session's report (as before sessions were many).
    receiver: &'a ReceiverReport,
    sessions: &'a [ReceiverReport],
}

/// Where delivered data goes.
enum Sink {
    /// Discarded (but read, so that the receiver's buffer does not fill).
    Discard,
    /// One stream: the first session that delivers data.
    One {
        w: Box<dyn Write>,
        session: Option<u64>,
        /// Messages of other sessions, not written.
        others: BTreeMap<u64, u64>,
    },
    /// A file per session.
    Dir {
        dir: PathBuf,
        files: BTreeMap<u64, io::BufWriter<File>>,
    },
}

impl Sink {
    fn write(&mut self, m: &tfrc_udp::Delivered) -> anyhow::Result<()> {
        match self {
            Sink::Discard => {}
            Sink::One { w, session, others } => {
                if *session.get_or_insert(m.session) == m.session {
                    w.write_all(&m.payload)?;
                } else {
                    *others.entry(m.session).or_default() += 1;
                }
            }
            Sink::Dir { dir, files } => {
                let f = match files.entry(m.session) {
                    std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
                    std::collections::btree_map::Entry::Vacant(v) => {
                        let p = dir.join(format!("{:016x}.bin", m.session));
                        let f = File::create(&p)
                            .map_err(|e| anyhow::anyhow!("--out-dir: {}: {e}", p.display()))?;
                        v.insert(io::BufWriter::new(f))
                    }
                };
                f.write_all(&m.payload)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Discard => Ok(()),
            Sink::One { w, .. } => w.flush(),
            Sink::Dir { files, .. } => files.values_mut().try_for_each(|f| f.flush()),
        }
    }
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let listen = match resolve("--listen", &args.listen) {
        Ok(a) => a,
        Err(m) => return Ok(bad_input(&m)),
    };
    let to_stdout = args.out.as_deref() == Some("-");
    if args.out.is_some() && args.sessions != 1 {
        return Ok(bad_input(
            "--out writes one session's data: it needs --sessions 1 (--out-dir DIR writes a \
             file per session)",
        ));
    }
    let mut data_out = match (args.out.as_deref(), &args.out_dir) {
        (None, None) => Sink::Discard,
        (Some(o), _) => {
            let w: Box<dyn Write> = match o {
                "-" => Box::new(io::BufWriter::new(io::stdout())),
                p => match File::create(p) {
                    Ok(f) => Box::new(io::BufWriter::new(f)),
                    Err(e) => return Ok(bad_input(&format!("--out {p}: {e}"))),
                },
            };
            Sink::One {
                w,
                session: None,
                others: BTreeMap::new(),
            }
        }
        (None, Some(d)) => {
            if let Err(e) = std::fs::create_dir_all(d) {
                return Ok(bad_input(&format!("--out-dir {}: {e}", d.display())));
            }
            Sink::Dir {
                dir: d.clone(),
                files: BTreeMap::new(),
            }
        }
    };
    let pcap = match super::pcap_arg(args.pcap.as_deref()) {
        Ok(p) => p,
        Err(m) => return Ok(bad_input(&m)),
    };
    let noise_key = match &args.key {
        None => None,
        Some(p) => match super::key_file_arg("--key", p) {
            Ok(k) => Some(k),
            Err(m) => return Ok(bad_input(&m)),
        },
    };
    let mut allowed = Vec::new();
    for a in &args.allow {
        match super::public_key_arg("--allow", a) {
            Ok(k) => allowed.push(k),
            Err(m) => return Ok(bad_input(&m)),
        }
    }
    if !allowed.is_empty() && noise_key.is_none() {
        return Ok(bad_input("--allow needs --key (it lists Noise senders)"));
    }
    if args.require_authentication && noise_key.is_none() {
        return Ok(bad_input(
            "--require-authentication needs --key (senders authenticate it with --peer-key)",
        ));
    }
    let opts = ReceiverOptions {
        require_protection: !args.allow_plain,
        require_authentication: args.require_authentication,
        noise_key,
        allowed_senders: (!allowed.is_empty()).then_some(allowed),
        rsa_unauthenticated: args.rsa_unauthenticated,
        rsa_bits: args.rsa_bits,
        idle_timeout: Some(Duration::from_secs_f64(args.idle_timeout)),
        sessions: (args.sessions > 0).then_some(args.sessions),
        max_sessions: args.max_sessions as usize,
        max_sessions_per_address: args.max_per_address as usize,
        capture: pcap.clone().map(tfrc_udp::capture::Capture::new),
        ..ReceiverOptions::default()
    };
    let signals = super::Signals::catch()?;
    let rx = match Receiver::bind(listen, opts) {
        Ok(r) => r,
        Err(e) => return Ok(bad_input(&format!("--listen {listen}: {e}"))),
    };
    let status = Status::new(args.quiet);
    status.show(&format!("recv: listening on {} ...", rx.local_addr()));
    let mut next_status = std::time::Instant::now();
    let mut stopping = false;
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(m) => data_out.write(&m)?,
            Err(true) => break,
            Err(false) => {}
        }
        if !stopping && signals.exit_code().is_some() {
            // Stop serving; what was received is still written and summarised.
            stopping = true;
            rx.shutdown();
        }
        if std::time::Instant::now() >= next_status {
            let r = rx.report();
            if r.packets > 0 {
                status.show(&r.status_line());
            }
            next_status = std::time::Instant::now() + Duration::from_millis(250);
        }
    }
    data_out.flush()?;
    let reports: Vec<ReceiverReport> = rx
        .wait_all()?
        .into_iter()
        .filter(|r| r.packets > 0 || r.sender_packets.is_some())
        .collect();
    super::pcap_finish(pcap)?;
    status.clear();
    let interrupted = signals.exit_code();
    let empty = ReceiverReport::default();
    let first = match reports.first() {
        Some(f) => f,
        None if interrupted.is_some() => &empty,
        None => anyhow::bail!("no session"),
    };
    let flows: Vec<FlowSummary> = reports
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let sent = r.sender_packets.unwrap_or(r.packets);
            let name = if reports.len() > 1 {
                format!("{}#{}", args.name, i + 1)
            } else {
                args.name.clone()
            };
            r.flow_summary(&name, sent, sent, None)
        })
        .collect();
    // With the data on stdout, the summary goes to stderr.
    let mut sink: Box<dyn Write> = if to_stdout {
        Box::new(io::stderr())
    } else {
        Box::new(io::stdout())
    };
    if args.json {
        let o = Output {
            flows: flows.iter().collect(),
            receiver: first,
            sessions: &reports,
        };
        writeln!(sink, "{}", serde_json::to_string_pretty(&o)?)?;
    } else {
        for (flow, report) in flows.iter().zip(&reports) {
            flow.write_lines(&mut sink)?;
            writeln!(sink, "# receiver: {report}")?;
        }
    }
    if let Sink::One {
        session: Some(mine),
        others,
        ..
    } = &data_out
    {
        for (id, n) in others {
            eprintln!(
                "recv: {n} messages of session {id:016x} were not written to --out {}: it holds \
                 session {mine:016x}'s stream alone (--out-dir DIR writes a file per session)",
                args.out.as_deref().unwrap_or("-")
            );
        }
    }
    // Interrupted: the summary above, then the signal's exit code, except when serving until
    // interrupted (`--sessions 0`) was the plan.
    Ok(match interrupted {
        Some(code) if args.sessions > 0 => ExitCode::from(code),
        _ => ExitCode::SUCCESS,
    })
}
