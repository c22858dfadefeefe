//! The Adaptive RED baseline (`RedConfig::ared()`) against NS-2.35's `Queue/RED` with
//! `adaptive_ 1` and `q_weight_ 0`, on the bottleneck of `ns2_queues.rs`:
//! n0 —10 Mb/s, 1 ms— n1 —1 Mb/s, 10 ms, RED limit 50— n2, two randomised CBR flows.
//! Random streams differ, so the comparison is statistical (as for plain RED): mean waiting
//! bytes, drops per flow and the time-averaged max_p.

mod common;

use core::time::Duration;
use std::process::{Command, Stdio};

use netsim::agents::{CbrConfig, CbrSource, NullSink};
use netsim::queue::{DropTailConfig, QueueConfig, RedConfig};
use netsim::trace::{parse_ns2_line, TraceEvent, TraceFormat};
use netsim::{LinkConfig, NetworkBuilder, Time};

/// (packet size, rate Mb/s); both random_.
const FLOWS: [(u32, f64); 2] = [(1000, 0.8), (250, 0.4)];
const SECS: f64 = 300.0;

const SCRIPT: &str = r#"
set dur [lindex $argv 0]
set maxp_file [lindex $argv 1]
set ns [new Simulator]
$ns trace-all stdout
set n0 [$ns node]
set n1 [$ns node]
set n2 [$ns node]
Queue/RED set adaptive_ 1
Queue/RED set q_weight_ 0
$ns duplex-link $n0 $n1 10Mb 1ms DropTail
$ns duplex-link $n1 $n2 1Mb 10ms RED
$ns queue-limit $n1 $n2 50
$ns queue-limit $n0 $n1 1000
set redq [[$ns link $n1 $n2] queue]
set tf [open $maxp_file w]
$redq trace cur_max_p_
$redq attach $tf
set fid 0
foreach spec [lrange $argv 2 end] {
    incr fid
    foreach {size rate} [split $spec :] break
    set udp($fid) [new Agent/UDP]
    $udp($fid) set fid_ $fid
    $ns attach-agent $n0 $udp($fid)
    set sink($fid) [new Agent/Null]
    $ns attach-agent $n2 $sink($fid)
    $ns connect $udp($fid) $sink($fid)
    set cbr($fid) [new Application/Traffic/CBR]
    $cbr($fid) set packetSize_ $size
    $cbr($fid) set rate_ ${rate}Mb
    $cbr($fid) set random_ 1
    $cbr($fid) attach-agent $udp($fid)
    $ns at 0.0 "$cbr($fid) start"
}
$ns at $dur "close $tf; exit 0"
$ns run
"#;

/// What one run says about link n1 → n2.
#[derive(Debug, Default, Clone, Copy)]
struct View {
    mean_bytes: f64,
    drops: [f64; 2],
    mean_max_p: f64,
}

/// Time-averaged waiting bytes and drops per fid on link 1 → 2 of an NS-2 format trace.
fn trace_view(trace: &str) -> View {
    let mut v = View::default();
    let (mut bytes, mut last, mut area) = (0i64, 0.0, 0.0);
    for line in trace.lines() {
        let l = parse_ns2_line(line).expect("trace line parses");
        if (l.from, l.to) != (1, 2) {
            continue;
        }
        let t = l.time.as_nanos() as f64 * 1e-9;
        area += bytes as f64 * (t - last);
        last = t;
        let size = i64::from(l.size);
        match l.event {
            // `+` is logged before the drop decision, so a drop undoes it.
            TraceEvent::Enqueue => bytes += size,
            TraceEvent::Drop => {
                bytes -= size;
                if let Some(d) = v.drops.get_mut((l.fid as usize).wrapping_sub(1)) {
                    *d += 1.0;
                }
            }
            TraceEvent::Dequeue => bytes -= size,
            TraceEvent::Receive => {}
        }
    }
    area += bytes as f64 * (SECS - last);
    v.mean_bytes = area / SECS;
    v
}

/// max_p averaged over time from (time, new value) changes, starting at 0.1.
fn time_average(changes: &[(f64, f64)]) -> f64 {
    let (mut value, mut last, mut area) = (0.1, 0.0, 0.0);
    for &(t, x) in changes {
        area += value * (t - last);
        (value, last) = (x, t);
    }
    area += value * (SECS - last);
    area / SECS
}

fn netsim_view(seed: u64) -> View {
    let mut net = NetworkBuilder::new(seed);
    let n0 = net.add_node("n0");
    let n1 = net.add_node("n1");
    let n2 = net.add_node("n2");
    let access = LinkConfig::new(10_000_000, Duration::from_millis(1)).with_queue(
        QueueConfig::DropTail(DropTailConfig {
            limit: 1000,
            ..DropTailConfig::default()
        }),
    );
    net.add_duplex_link(n0, n1, access);
    let red = QueueConfig::Red(RedConfig {
        limit: 50,
        ..RedConfig::ared()
    });
    let (b, _) = net.add_duplex_link(
        n1,
        n2,
        LinkConfig::new(1_000_000, Duration::from_millis(10)).with_queue(red),
    );
    for (i, &(size, mbps)) in FLOWS.iter().enumerate() {
        let cbr = CbrSource::new(CbrConfig {
            packet_size: size,
            rate_bps: mbps * 1e6,
            random: true,
            ..CbrConfig::default()
        });
        let f = net.add_flow(n0, n2, Time::ZERO, None, cbr.into(), NullSink::new().into());
        net.set_trace_fids(f, i as u32 + 1, 0);
    }
    let buf = common::SharedBuf::default();
    net.trace(Box::new(buf.clone()), TraceFormat::Ns2);
    let mut sim = net.build().expect("valid network");
    // max_p changes at most once per 0.5 s: sampling every 10 ms finds each change within
    // 10 ms, an error below 0.01 · 0.01 / 0.5 per change on the average.
    let mut changes = Vec::new();
    let mut last = 0.1;
    let mut k = 1u64;
    while k as f64 * 0.01 <= SECS {
        sim.run(Time::from_nanos(k * 10_000_000))
            .expect("accounting holds");
        let p = sim.red(b).expect("RED").max_p();
        if p != last {
            changes.push((k as f64 * 0.01, p));
            last = p;
        }
        k += 1;
    }
    let mut v = trace_view(&buf.text());
    v.mean_max_p = time_average(&changes);
    v
}

fn ns2_view() -> View {
    let dir = std::env::temp_dir();
    let script = dir.join(format!("netsim-ared-{}.tcl", std::process::id()));
    let maxp = dir.join(format!("netsim-ared-{}.maxp", std::process::id()));
    std::fs::write(&script, SCRIPT).expect("write the script");
    let mut args = vec![
        script.display().to_string(),
        SECS.to_string(),
        maxp.display().to_string(),
    ];
    args.extend(FLOWS.iter().map(|(s, r)| format!("{s}:{r}")));
    let out = Command::new("ns")
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .expect("ns runs");
    assert!(out.status.success(), "ns failed: {:?}", out.status);
    let mut v = trace_view(&String::from_utf8_lossy(&out.stdout));
    // RED's variable trace: "c <time> <value>" for each change of cur_max_p_.
    let text = std::fs::read_to_string(&maxp).expect("max_p trace");
    let changes: Vec<(f64, f64)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            (f.next() == Some("c")).then_some(())?;
            Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
        })
        .collect();
    let _ = std::fs::remove_file(&script);
    let _ = std::fs::remove_file(&maxp);
    assert!(!changes.is_empty(), "NS-2 never changed max_p");
    v.mean_max_p = time_average(&changes);
    v
}

#[test]
fn adaptive_red_agrees_with_ns2_adaptive() {
    let runs: Vec<View> = (1..=4).map(netsim_view).collect();
    for v in &runs {
        // 1.2 Mb/s into 1 Mb/s: the excess must be dropped, mostly early.
        assert!(v.drops[0] + v.drops[1] > 1000.0, "{v:?}");
        // Adaptive RED moves max_p off its initial 0.1.
        assert!((v.mean_max_p - 0.1).abs() > 0.005, "{v:?}");
    }
    common::require_ns("adaptive_red_agrees_with_ns2_adaptive");
    let theirs = ns2_view();
    eprintln!("NS-2 Adaptive RED: {theirs:?}");
    for v in &runs {
        eprintln!("netsim Adaptive RED: {v:?}");
    }
    type Metric = (&'static str, fn(&View) -> f64);
    let metrics: [Metric; 4] = [
        ("mean waiting bytes", |v| v.mean_bytes),
        ("drops of flow 1", |v| v.drops[0]),
        ("drops of flow 2", |v| v.drops[1]),
        ("time-averaged max_p", |v| v.mean_max_p),
    ];
    let n = runs.len() as f64;
    for (name, f) in metrics {
        let m = runs.iter().map(f).sum::<f64>() / n;
        let sd = (runs.iter().map(|v| (f(v) - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let t = f(&theirs);
        // As for plain RED (ns2_queues.rs): NS-2 is one more draw from the same distribution
        // if the models agree; 4 run-to-run standard deviations plus 2 % for the estimate.
        assert!(
            (t - m).abs() <= 4.0 * sd + 0.02 * m.abs(),
            "{name}: NS-2 {t} vs netsim {m} ± {sd}"
        );
    }
}
