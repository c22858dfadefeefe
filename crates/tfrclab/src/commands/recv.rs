//! `tfrclab recv`: the receiving end of `tfrclab send` (issues 8 and 16). Serves concurrent
//! sessions (`--sessions N` of them carrying data, then exits), writes the delivered payloads
//! of a single session (in arrival order; TFRC does not retransmit, so losses are gaps), shows
//! a live status line on a terminal, and prints each session's flow summary.

use std::fs::File;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use serde::Serialize;
use std::path::PathBuf;
use tfrc_udp::{FlowSummary, Receiver, ReceiverOptions, ReceiverReport};

use super::send::{bad_input, print_flow, resolve, Status};

/// Arguments of `tfrclab recv`.
#[derive(Parser, Debug)]
pub struct Args {
    /// Address to listen on (HOST:PORT).
    #[arg(long, value_name = "ADDR")]
    listen: String,
    /// Write the received data to FILE, or `-` for stdout (default: discard). With one
    /// session only (`--sessions 1`).
    #[arg(long, value_name = "FILE|-")]
    out: Option<String>,
    /// Accept Noise sessions (authenticated keys) with this static key, from `tfrclab keygen`;
    /// senders pin its public half (`send --protect noise --peer-key`).
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// Noise: accept only this sender public key (64 hex digits or a key file); repeatable.
    /// Default: any sender that knows this receiver's public key.
    #[arg(long = "allow", value_name = "HEX|FILE")]
    allow: Vec<String>,
    /// Refuse sessions that are not protected.
    #[arg(long = "require-protection")]
    require_protection: bool,
    /// Also accept seed 000's RSA-OAEP exchange (E6). Unauthenticated: an active attacker on
    /// the path can substitute the key. The key is generated at start.
    #[arg(long = "rsa-unauthenticated")]
    rsa_unauthenticated: bool,
    /// RSA modulus bits of the receiver's key for `--rsa-unauthenticated` (at least 2048).
    #[arg(long = "rsa-bits", value_name = "N", default_value_t = tfrc_protect::DEFAULT_MODULUS_BITS,
          value_parser = rsa_bits)]
    rsa_bits: usize,
    /// Exit after this many sessions that carried data have ended (0: serve until
    /// interrupted).
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

fn status_line(r: &ReceiverReport) -> String {
    let mbps = if r.span_s > 0.0 {
        r.wire_bytes as f64 * 8.0 / r.span_s / 1e6
    } else {
        0.0
    };
    format!(
        "recv {:6.1}s  {:8.3} Mb/s  p {:.5}  packets {}  lost {}  drops {}  hops {}",
        r.span_s,
        mbps,
        r.p,
        r.packets,
        r.lost_packets,
        r.drops.total(),
        r.hops.map_or("-".to_string(), |h| h.to_string()),
    )
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let listen = match resolve("--listen", &args.listen) {
        Ok(a) => a,
        Err(m) => return Ok(bad_input(&m)),
    };
    let to_stdout = args.out.as_deref() == Some("-");
    let mut out: Option<Box<dyn Write>> = match args.out.as_deref() {
        None => None,
        Some("-") => Some(Box::new(io::BufWriter::new(io::stdout()))),
        Some(p) => match File::create(p) {
            Ok(f) => Some(Box::new(io::BufWriter::new(f))),
            Err(e) => return Ok(bad_input(&format!("--out {p}: {e}"))),
        },
    };
    if args.out.is_some() && args.sessions != 1 {
        return Ok(bad_input(
            "--out writes one session's data: it needs --sessions 1",
        ));
    }
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
    if args.require_protection && noise_key.is_none() && !args.rsa_unauthenticated {
        return Ok(bad_input(
            "--require-protection needs --key (Noise) or --rsa-unauthenticated",
        ));
    }
    let opts = ReceiverOptions {
        require_protection: args.require_protection,
        noise_key,
        allowed_senders: (!allowed.is_empty()).then_some(allowed),
        rsa_unauthenticated: args.rsa_unauthenticated,
        rsa_bits: args.rsa_bits,
        idle_timeout: Some(Duration::from_secs_f64(args.idle_timeout)),
        sessions: (args.sessions > 0).then_some(args.sessions),
        max_sessions: args.max_sessions as usize,
        max_sessions_per_address: args.max_per_address as usize,
        ..ReceiverOptions::default()
    };
    let rx = match Receiver::bind(listen, opts) {
        Ok(r) => r,
        Err(e) => return Ok(bad_input(&format!("--listen {listen}: {e}"))),
    };
    let status = Status::new(args.quiet);
    status.show(&format!("recv: listening on {} ...", rx.local_addr()));
    let mut next_status = std::time::Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(m) => {
                if let Some(w) = out.as_mut() {
                    w.write_all(&m.payload)?;
                }
            }
            Err(true) => break,
            Err(false) => {}
        }
        if std::time::Instant::now() >= next_status {
            let r = rx.report();
            if r.packets > 0 {
                status.show(&status_line(&r));
            }
            next_status = std::time::Instant::now() + Duration::from_millis(250);
        }
    }
    if let Some(w) = out.as_mut() {
        w.flush()?;
    }
    let reports: Vec<ReceiverReport> = rx
        .wait_all()?
        .into_iter()
        .filter(|r| r.packets > 0 || r.sender_packets.is_some())
        .collect();
    status.clear();
    let Some(first) = reports.first() else {
        anyhow::bail!("no session");
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
            print_flow(&mut sink, flow)?;
            writeln!(
                sink,
                "# receiver: session {:016x} from {}, protection {}{}, p {:.5}, loss events {}, drops {} ({:?}), reordered {}, hops {}{}",
                report.session,
                report.peer.as_deref().unwrap_or("-"),
                report.protection,
                report
                    .sender_key
                    .as_deref()
                    .map_or(String::new(), |k| format!(" (sender key {k})")),
                report.p,
                report.loss_events,
                report.drops.total(),
                report.drops,
                report.reordered,
                report.hops.map_or("-".to_string(), |h| h.to_string()),
                if report.sender_packets.is_none() {
                    ", no FIN (sent_packets estimated from received)"
                } else {
                    ""
                },
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
