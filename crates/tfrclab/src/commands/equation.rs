//! `tfrclab equation`: the RFC 5348 §3.1 allowed rate for given s, R and p.

use std::process::ExitCode;

use clap::Parser;
use serde::Serialize;
use tfrc::Equation;

/// Arguments of `tfrclab equation`.
#[derive(Parser, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Segment size s in bytes (payload, without IP/transport headers).
    #[arg(long = "s", value_name = "BYTES", value_parser = positive)]
    s: f64,
    /// Round-trip time R in seconds.
    #[arg(long = "rtt", value_name = "SECONDS", value_parser = positive)]
    rtt: f64,
    /// Loss event rate p, in (0, 1].
    #[arg(long = "p", value_name = "RATE", value_parser = loss_rate)]
    p: f64,
    /// t_RTO in seconds (default: 4R, as RFC 5348 §3.1 recommends).
    #[arg(long = "t-rto", value_name = "SECONDS", value_parser = positive)]
    t_rto: Option<f64>,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Output {
    s_bytes: f64,
    rtt_s: f64,
    p: f64,
    t_rto_s: f64,
    b: f64,
    bytes_per_second: f64,
    bits_per_second: f64,
    packets_per_second: f64,
}

fn number(v: &str) -> Result<f64, String> {
    let x: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("'{v}' is not a number"))?;
    if !x.is_finite() {
        return Err(format!("'{v}' is not a finite number"));
    }
    Ok(x)
}

fn positive(v: &str) -> Result<f64, String> {
    let x = number(v)?;
    if x <= 0.0 {
        return Err(format!("{x} must be greater than 0"));
    }
    Ok(x)
}

fn loss_rate(v: &str) -> Result<f64, String> {
    let x = number(v)?;
    if !(x > 0.0 && x <= 1.0) {
        return Err(format!("{x} is outside (0, 1]; p is a loss event rate"));
    }
    Ok(x)
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let t_rto = args.t_rto.unwrap_or(4.0 * args.rtt);
    let eq = Equation::RFC5348;
    let x = eq.rate(args.s, args.rtt, t_rto, args.p);
    let out = Output {
        s_bytes: args.s,
        rtt_s: args.rtt,
        p: args.p,
        t_rto_s: t_rto,
        b: eq.b,
        bytes_per_second: x,
        bits_per_second: 8.0 * x,
        packets_per_second: x / args.s,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "X = {:.1} bytes/s = {:.1} bit/s ({:.3} packets/s)  [s = {} B, R = {} s, p = {}, t_RTO = {} s, b = 1]",
            out.bytes_per_second, out.bits_per_second, out.packets_per_second, args.s, args.rtt, args.p, t_rto
        );
    }
    Ok(ExitCode::SUCCESS)
}
