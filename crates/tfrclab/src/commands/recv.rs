//! `tfrclab recv`: the receiving end of `tfrclab send` (issue 8). Accepts one session, writes
//! the delivered payloads (in arrival order; TFRC does not retransmit, so losses are gaps),
//! shows a live status line on a terminal, and prints the flow summary.

use std::fs::File;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use serde::Serialize;
use tfrc_udp::{FlowSummary, Receiver, ReceiverOptions, ReceiverReport};

use super::send::{bad_input, print_flow, resolve, Status};

/// Arguments of `tfrclab recv`.
#[derive(Parser, Debug)]
pub struct Args {
    /// Address to listen on (HOST:PORT).
    #[arg(long, value_name = "ADDR")]
    listen: String,
    /// Write the received data to FILE, or `-` for stdout (default: discard).
    #[arg(long, value_name = "FILE|-")]
    out: Option<String>,
    /// Refuse sessions that are not protected (E6).
    #[arg(long = "require-protection")]
    require_protection: bool,
    /// RSA modulus bits of the receiver's key for protected sessions.
    #[arg(long = "rsa-bits", value_name = "N", default_value_t = tfrc_protect::DEFAULT_MODULUS_BITS,
          value_parser = super::rsa_modulus_bits)]
    rsa_bits: usize,
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
    receiver: &'a ReceiverReport,
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
    let opts = ReceiverOptions {
        require_protection: args.require_protection,
        rsa_bits: args.rsa_bits,
        idle_timeout: Some(Duration::from_secs_f64(args.idle_timeout)),
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
    let report = rx.wait()?;
    status.clear();
    let sent = report.sender_packets.unwrap_or(report.packets);
    let flow = report.flow_summary(&args.name, sent, sent, None);
    // With the data on stdout, the summary goes to stderr.
    let mut sink: Box<dyn Write> = if to_stdout {
        Box::new(io::stderr())
    } else {
        Box::new(io::stdout())
    };
    if args.json {
        let o = Output {
            flows: vec![&flow],
            receiver: &report,
        };
        writeln!(sink, "{}", serde_json::to_string_pretty(&o)?)?;
    } else {
        print_flow(&mut sink, &flow)?;
        writeln!(
            sink,
            "# receiver: p {:.5}, loss events {}, drops {} ({:?}), reordered {}, hops {}, protected {}{}",
            report.p,
            report.loss_events,
            report.drops.total(),
            report.drops,
            report.reordered,
            report.hops.map_or("-".to_string(), |h| h.to_string()),
            report.protected,
            if report.sender_packets.is_none() {
                ", no FIN (sent_packets estimated from received)"
            } else {
                ""
            },
        )?;
    }
    if report.packets == 0 && report.sender_packets.is_none() {
        anyhow::bail!("no session");
    }
    Ok(ExitCode::SUCCESS)
}
