//! SCReAM or NADA driven open-loop by a script of sender-side events, for holding them against
//! other implementations fed the same script (docs/media.md, "Cross-check").
//!
//! ```text
//! cargo run --release -p rmcat --example rmcat_script -- gen > script.txt
//! cargo run --release -p rmcat --example rmcat_script -- scream script.txt > scream.csv
//! cargo run --release -p rmcat --example rmcat_script -- nada script.txt > nada.csv
//! ```
//!
//! `gen` writes the script: a constant-rate sender (1000-byte packets every 6.4 ms, 1.25 Mb/s,
//! 30 frames/s) over a drop-tail bottleneck whose capacity steps 5 → 1 → 5 → 1.2 → 5 Mb/s, so
//! the run passes through an empty queue (fast increase), a queue growing to its 300-ms limit
//! with tail drops, a drain, and a standing queue without loss; one-way base delay 25 ms,
//! one report every 20 ms, returned in 25 ms. Open loop: the sender does not obey the window,
//! so both implementations see exactly the same packets, arrivals and reports.
//!
//! Script lines (times in integer ns): `S t seq size` (a packet left), `M t bytes` (the encoder
//! produced a frame), `F t t_gen begin n a_0 … a_{n-1}` (a report made at `t_gen` reached the
//! sender at `t`; it covers sequence numbers `begin..begin+n` and gives each one's arrival
//! time, or `-` if it was dropped).
//!
//! `scream` prints, after each report, `t_ms,cwnd,target_bps,fast,qdelay_ms,srtt_ms`; `nada`
//! prints `t_ms,rref_bps,x_curr_ms,qdelay_ms,mode,p_loss` (mode 0 accelerated ramp-up, 1
//! gradual update). Both use the RFCs' parameters with RFC 8867's rate range, 150 kb/s to
//! 1.5 Mb/s.

use std::fmt::Write as _;
use std::time::Duration;

use rmcat::feedback::rfc8888::{ntp_mid, CcfbReport, PacketMetric, ReportBlock};
use rmcat::nada::{Nada, NadaConfig, RampMode};
use rmcat::scream::{Scream, ScreamConfig};
use rmcat::Time;

const MS: u64 = 1_000_000;
const PACKET: u32 = 1000;
const SEND_GAP: u64 = 6_400_000;
const FRAME_GAP: u64 = 33_333_333;
const BASE_OWD: u64 = 25 * MS;
const REPORT_EVERY: u64 = 20 * MS;
const QUEUE_LIMIT: Duration = Duration::from_millis(300);
const END: u64 = 60_000 * MS;

/// Bottleneck capacity (bit/s) from `t` (ns) on.
const CAPACITY: &[(u64, f64)] = &[
    (0, 5e6),
    (15_000 * MS, 1e6),
    (25_000 * MS, 5e6),
    (35_000 * MS, 1.2e6),
    (50_000 * MS, 5e6),
];

fn capacity_at(t: u64) -> f64 {
    CAPACITY
        .iter()
        .rev()
        .find(|&&(from, _)| t >= from)
        .map_or(5e6, |&(_, c)| c)
}

fn gen() -> String {
    // The bottleneck: a FIFO drained at the current capacity; a packet that would wait longer
    // than QUEUE_LIMIT is dropped (drop-tail measured in time, as the RFC 8867 cases size it).
    let mut link_free = 0u64;
    let mut arrivals: Vec<(u64, Option<u64>)> = Vec::new(); // (sent, arrival)
    let mut out = String::new();
    let mut events: Vec<(u64, String)> = Vec::new();
    let mut seq = 0u64;
    let mut t = 0u64;
    while t < END {
        let start = link_free.max(t);
        let wait = start - t;
        let serve = (f64::from(PACKET) * 8.0 / capacity_at(start) * 1e9) as u64;
        let arrival = if wait > QUEUE_LIMIT.as_nanos() as u64 {
            None
        } else {
            link_free = start + serve;
            Some(link_free + BASE_OWD)
        };
        arrivals.push((t, arrival));
        events.push((t, format!("S {t} {seq} {PACKET}")));
        seq += 1;
        t += SEND_GAP;
    }
    let mut f = 0u64;
    while f < END {
        events.push((f, format!("M {f} {}", (1.25e6 / 8.0 / 30.0) as u64)));
        f += FRAME_GAP;
    }
    // Reports: from the first packet not yet covered up to the highest one received by t_gen.
    let mut covered = 0usize;
    let mut t_gen = REPORT_EVERY;
    while t_gen < END + 500 * MS {
        let highest = arrivals
            .iter()
            .rposition(|&(_, a)| a.is_some_and(|a| a <= t_gen));
        if let Some(h) = highest.filter(|&h| h >= covered) {
            let mut line = format!(
                "F {} {t_gen} {covered} {}",
                t_gen + BASE_OWD,
                h + 1 - covered
            );
            for &(_, a) in &arrivals[covered..=h] {
                match a {
                    Some(a) => write!(line, " {a}").unwrap(),
                    None => line.push_str(" -"),
                }
            }
            events.push((t_gen + BASE_OWD, line));
            covered = h + 1;
        }
        t_gen += REPORT_EVERY;
    }
    // Stable sort: at equal times a packet leaves before a frame before a report.
    events.sort_by_key(|(t, _)| *t);
    for (_, e) in events {
        out.push_str(&e);
        out.push('\n');
    }
    out
}

fn report(t_gen: u64, begin: u64, arrivals: &[Option<u64>]) -> CcfbReport {
    let metrics = arrivals
        .iter()
        .map(|a| match a {
            // RFC 8888's arrival time offset, 1/1024 s before the report, rounded.
            Some(a) => PacketMetric {
                received: true,
                ecn: 0,
                ato: (((t_gen - a) as u128 * 1024 + 500_000_000) / 1_000_000_000) as u16,
            },
            None => PacketMetric::LOST,
        })
        .collect();
    CcfbReport {
        sender_ssrc: 2,
        blocks: vec![ReportBlock {
            media_ssrc: 1,
            begin_seq: begin as u16,
            metrics,
        }],
        report_timestamp: ntp_mid(Time::from_nanos(t_gen)),
    }
}

/// One of the two controllers under the script.
enum Under {
    Scream(Box<Scream>),
    Nada(Box<Nada>),
}

impl Under {
    fn header(&self) -> &'static str {
        match self {
            Under::Scream(_) => "t_ms,cwnd,target_bps,fast,qdelay_ms,srtt_ms\n",
            Under::Nada(_) => "t_ms,rref_bps,x_curr_ms,qdelay_ms,mode,p_loss\n",
        }
    }

    fn row(&self, t_ms: u64, out: &mut String) {
        match self {
            Under::Scream(s) => {
                let st = s.state();
                writeln!(
                    out,
                    "{t_ms},{:.0},{:.0},{},{:.1},{:.1}",
                    st.cwnd,
                    s.target_rate(),
                    u8::from(st.in_fast_increase),
                    st.qdelay * 1e3,
                    st.s_rtt.unwrap_or(0.0) * 1e3
                )
            }
            Under::Nada(n) => {
                let st = n.state();
                writeln!(
                    out,
                    "{t_ms},{:.0},{:.2},{:.1},{},{:.5}",
                    n.reference_rate(),
                    st.x_curr,
                    st.d_queue_ms,
                    u8::from(st.mode == RampMode::GradualUpdate),
                    st.p_loss
                )
            }
        }
        .unwrap();
    }
}

fn run(script: &str, mut c: Under) -> Result<String, String> {
    let mut out = String::from(c.header());
    for (n, line) in script.lines().enumerate() {
        let bad = |what: &str| format!("script line {}: {what}: {line}", n + 1);
        let mut w = line.split_whitespace();
        let kind = w.next().ok_or_else(|| bad("empty line"))?;
        let mut num = || -> Result<u64, String> {
            w.next()
                .ok_or_else(|| bad("missing field"))?
                .parse::<u64>()
                .map_err(|e| bad(&e.to_string()))
        };
        let t = num()?;
        let now = Time::from_nanos(t);
        // SCReAM's media rate control runs at its own times, between events.
        if let Under::Scream(s) = &mut c {
            while let Some(due) = s.poll_timeout().filter(|&d| d <= now) {
                s.on_timeout(due);
            }
        }
        match kind {
            "S" => {
                let seq = num()?;
                let size = num()? as u32;
                match &mut c {
                    Under::Scream(s) => s.on_packet_sent(now, seq, size),
                    Under::Nada(x) => x.on_packet_sent(now, seq, size),
                }
            }
            "M" => {
                let bytes = num()?;
                if let Under::Scream(s) = &mut c {
                    s.on_media_frame(bytes);
                }
            }
            "F" => {
                let t_gen = num()?;
                let begin = num()?;
                let count = num()? as usize;
                let rest: Vec<&str> = line.split_whitespace().skip(5).collect();
                if rest.len() != count {
                    return Err(bad("arrival count"));
                }
                let arr: Vec<Option<u64>> = rest
                    .iter()
                    .map(|a| {
                        if *a == "-" {
                            Ok(None)
                        } else {
                            a.parse::<u64>().map(Some)
                        }
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|e| bad(&e.to_string()))?;
                let r = report(t_gen, begin, &arr);
                match &mut c {
                    Under::Scream(s) => s.on_feedback(now, &r),
                    Under::Nada(x) => x.on_feedback(now, &r),
                }
                c.row(t / MS, &mut out);
            }
            _ => return Err(bad("unknown event")),
        }
    }
    Ok(out)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let under = |name: &str| match name {
        "scream" => {
            let mut c = ScreamConfig::rfc8298();
            // The reference code's default: no competing-flow compensation (its
            // shared-bottleneck detection is off unless asked for); both are held to that.
            c.competing_flows_compensation = false;
            Under::Scream(Box::new(Scream::new(c)))
        }
        _ => Under::Nada(Box::new(Nada::new(NadaConfig::rfc8698()))),
    };
    let res = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["gen"] => Ok(gen()),
        [name @ ("scream" | "nada"), path] => std::fs::read_to_string(path)
            .map_err(|e| format!("{path}: {e}"))
            .and_then(|s| run(&s, under(name))),
        _ => Err("usage: rmcat_script gen | rmcat_script scream|nada SCRIPT".to_string()),
    };
    match res {
        Ok(s) => print!("{s}"),
        Err(e) => {
            eprintln!("rmcat_script: {e}");
            std::process::exit(2);
        }
    }
}
