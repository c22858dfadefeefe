//! Queue and loss-model agreement with NS-2.35 on one bottleneck
//! (validation/ns2/bottleneck.tcl): n0 —10 Mb/s, 1 ms— n1 —1 Mb/s, 10 ms, queue— n2.

mod common;

use core::time::Duration;

use netsim::agents::{CbrConfig, CbrSource, NullSink};
use netsim::queue::{DropTailConfig, QueueConfig, RedConfig};
use netsim::trace::{parse_ns2_line, TraceEvent, TraceFormat};
use netsim::{DropCause, LinkConfig, LossConfig, NetworkBuilder, RunResults, Time};

/// (packet size, rate Mb/s, CBR random_).
type Flow = (u32, f64, bool);

fn run(
    queue: &str,
    limit: u32,
    loss: f64,
    secs: f64,
    flows: &[Flow],
    seed: u64,
) -> (RunResults, String) {
    let mut net = NetworkBuilder::new(seed);
    let n0 = net.add_node("n0");
    let n1 = net.add_node("n1");
    let n2 = net.add_node("n2");
    let access = LinkConfig::new(10_000_000, Duration::from_millis(1));
    let (a, _) = net.add_duplex_link(n0, n1, access);
    // `queue-limit $n0 $n1 1000`: no drops on the access link.
    net.set_queue(
        a,
        QueueConfig::DropTail(DropTailConfig {
            limit: 1000,
            ..DropTailConfig::default()
        }),
    );
    let q = match queue {
        "RED" => QueueConfig::Red(RedConfig::default()),
        _ => QueueConfig::DropTail(DropTailConfig::default()),
    };
    let (b, _) = net.add_duplex_link(
        n1,
        n2,
        LinkConfig::new(1_000_000, Duration::from_millis(10)).with_queue(q),
    );
    net.set_queue(
        b,
        match queue {
            "RED" => QueueConfig::Red(RedConfig {
                limit,
                ..RedConfig::default()
            }),
            _ => QueueConfig::DropTail(DropTailConfig {
                limit,
                ..DropTailConfig::default()
            }),
        },
    );
    if loss > 0.0 {
        net.set_loss(b, Some(LossConfig::Bernoulli { p: loss }));
    }
    for (i, &(size, mbps, random)) in flows.iter().enumerate() {
        let cbr = CbrSource::new(CbrConfig {
            packet_size: size,
            rate_bps: mbps * 1e6,
            random,
            ..CbrConfig::default()
        });
        let f = net.add_flow(n0, n2, Time::ZERO, None, cbr.into(), NullSink::new().into());
        net.set_trace_fids(f, i as u32 + 1, 0);
    }
    let buf = common::SharedBuf::default();
    net.trace(Box::new(buf.clone()), TraceFormat::Ns2);
    let mut sim = net.build().expect("valid network");
    let res = sim
        .run(Time::from_secs_f64(secs))
        .expect("accounting holds");
    (res, buf.text())
}

fn ns_args(queue: &str, limit: u32, loss: f64, secs: f64, flows: &[Flow]) -> Vec<String> {
    let mut v = vec![
        queue.to_string(),
        limit.to_string(),
        loss.to_string(),
        secs.to_string(),
    ];
    for &(s, r, rnd) in flows {
        v.push(format!("{s}:{r}:{}", u8::from(rnd)));
    }
    v
}

fn ns(queue: &str, limit: u32, loss: f64, secs: f64, flows: &[Flow]) -> String {
    let args = ns_args(queue, limit, loss, secs, flows);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    common::ns_output("bottleneck.tcl", &refs)
}

/// What a trace says about link n1 → n2: time-averaged and largest number of waiting packets,
/// waiting bytes, drops per fid, packets received at n2 per fid.
#[derive(Debug, Default)]
struct LinkView {
    mean_pkts: f64,
    max_pkts: u64,
    mean_bytes: f64,
    drops: [u64; 3],
    received: [u64; 3],
}

fn view(trace: &str, until: f64) -> LinkView {
    let mut v = LinkView::default();
    let (mut pkts, mut bytes) = (0i64, 0i64);
    let (mut last, mut area_p, mut area_b) = (0.0, 0.0, 0.0);
    let mut last_plus = None;
    for line in trace.lines() {
        let l = parse_ns2_line(line).expect("trace line parses");
        if (l.from, l.to) != (1, 2) {
            continue;
        }
        // The count after a `+` that the next line drops never really existed.
        if !(l.event == TraceEvent::Drop && last_plus == Some(l.uid)) {
            v.max_pkts = v.max_pkts.max(pkts as u64);
        }
        last_plus = (l.event == TraceEvent::Enqueue).then_some(l.uid);
        let t = l.time.as_nanos() as f64 * 1e-9;
        area_p += pkts as f64 * (t - last);
        area_b += bytes as f64 * (t - last);
        last = t;
        let fid = (l.fid as usize).min(2);
        let size = i64::from(l.size);
        match l.event {
            // `+` is logged before the drop decision, so a drop undoes it.
            TraceEvent::Enqueue => (pkts, bytes) = (pkts + 1, bytes + size),
            TraceEvent::Drop => {
                (pkts, bytes) = (pkts - 1, bytes - size);
                v.drops[fid] += 1;
            }
            TraceEvent::Dequeue => (pkts, bytes) = (pkts - 1, bytes - size),
            TraceEvent::Receive => v.received[fid] += 1,
        }
    }
    v.max_pkts = v.max_pkts.max(pkts as u64);
    area_p += pkts as f64 * (until - last);
    area_b += bytes as f64 * (until - last);
    v.mean_pkts = area_p / until;
    v.mean_bytes = area_b / until;
    v
}

#[test]
fn droptail_limit_semantics_match_ns2_exactly() {
    // 500-byte CBR at 1.5 Mb/s into 1 Mb/s, limit 10: the queue overflows every few packets.
    let flows = [(500, 1.5, false)];
    let (res, mine) = run("DropTail", 10, 0.0, 5.0, &flows, 1);
    let v = view(&mine, 5.0);
    // NS-2 (`docs/simulator.md`, "Queues"): limit 10 holds at most 9 waiting packets plus the
    // one in transmission.
    assert_eq!(v.max_pkts, 9);
    let link = &res.links[2].stats;
    assert_eq!(link.queue_packets.max(), 9);
    assert_eq!(link.dropped(DropCause::Queue), v.drops[1]);
    // Packets leave every 8/3 ms: 1875 in [0, 5 s), plus the one NS-2's double clock puts at
    // 4.99999999… s. The link carries 1250 (1 Mb/s); the rest, less the ones waiting or in
    // flight at the end, are dropped.
    assert_eq!(res.flows[0].forward.sent_packets, 1876);
    assert!(v.drops[1] > 600 && v.drops[1] < 630, "drops {}", v.drops[1]);
    common::require_ns("droptail_limit_semantics_match_ns2_exactly");
    let theirs = ns("DropTail", 10, 0.0, 5.0, &flows);
    for (i, (a, b)) in mine.lines().zip(theirs.lines()).enumerate() {
        assert_eq!(a, b, "first difference at line {}", i + 1);
    }
    assert_eq!(mine.lines().count(), theirs.lines().count());
}

#[test]
fn red_overload_agrees_with_ns2() {
    // Two randomised CBR flows, 1000-byte at 0.8 Mb/s and 250-byte at 0.4 Mb/s, into 1 Mb/s
    // through NS-2's default RED (byte mode, gentle, thresholds 5/15 × 500 B, q_w auto).
    let flows = [(1000, 0.8, true), (250, 0.4, true)];
    let secs = 300.0;
    // Several netsim seeds give the run-to-run spread the tolerances below are based on.
    let runs: Vec<(RunResults, LinkView)> = (1..=4)
        .map(|seed| {
            let (res, tr) = run("RED", 50, 0.0, secs, &flows, seed);
            let v = view(&tr, secs);
            (res, v)
        })
        .collect();
    for (res, v) in &runs {
        let red = res.links[2].red.expect("RED counters");
        // Overload is 20 %, far below what would fill 25 000 bytes: RED's early drops do the
        // work and the hard limit never triggers.
        assert!(red.early_drops > 1000, "{red:?}");
        assert_eq!(red.overflow_drops, 0, "{red:?}");
        // Gentle RED with max_p 0.1 settles where the drop rate is about 1/6 of the bytes:
        // between th_max (7500 B) and 2 th_max.
        assert!(v.mean_bytes > 5_000.0 && v.mean_bytes < 15_000.0, "{v:?}");
        // Byte mode scales p by size: the 1000-byte flow loses a larger share of packets.
        let frac = |i: usize| v.drops[i] as f64 / res.flows[i - 1].forward.sent_packets as f64;
        assert!(frac(1) > 2.0 * frac(2), "{} vs {}", frac(1), frac(2));
    }
    common::require_ns("red_overload_agrees_with_ns2");
    let theirs = view(&ns("RED", 50, 0.0, secs, &flows), secs);
    let mean = |f: &dyn Fn(&LinkView) -> f64| {
        runs.iter().map(|(_, v)| f(v)).sum::<f64>() / runs.len() as f64
    };
    let spread = |f: &dyn Fn(&LinkView) -> f64| {
        let m = mean(f);
        (runs.iter().map(|(_, v)| (f(v) - m).powi(2)).sum::<f64>() / (runs.len() - 1) as f64).sqrt()
    };
    eprintln!("NS-2 RED: {theirs:?}");
    for (_, v) in &runs {
        eprintln!("netsim RED: {v:?}");
    }
    type Metric<'a> = (&'a str, Box<dyn Fn(&LinkView) -> f64>);
    let metrics: Vec<Metric> = vec![
        ("mean waiting bytes", Box::new(|v: &LinkView| v.mean_bytes)),
        (
            "drops of flow 1",
            Box::new(|v: &LinkView| v.drops[1] as f64),
        ),
        (
            "drops of flow 2",
            Box::new(|v: &LinkView| v.drops[2] as f64),
        ),
    ];
    for (name, f) in &metrics {
        let (m, sd) = (mean(f.as_ref()), spread(f.as_ref()));
        let t = f(&theirs);
        // NS-2 is one more draw from the same distribution if the models agree: allow 4
        // run-to-run standard deviations, plus 2 % for the estimate of the spread itself.
        assert!(
            (t - m).abs() <= 4.0 * sd + 0.02 * m.abs(),
            "{name}: NS-2 {t} vs netsim {m} ± {sd}"
        );
    }
}

#[test]
fn bernoulli_loss_rate_agrees_with_ns2() {
    // 500-byte CBR at 0.5 Mb/s (no queueing loss) with 5 % per-packet loss on n1 → n2.
    let flows = [(500, 0.5, false)];
    let (p, secs) = (0.05, 200.0);
    let (res, mine) = run("DropTail", 50, p, secs, &flows, 3);
    let sent = res.flows[0].forward.sent_packets as f64; // 25 000
    let lost = res.flows[0].forward.dropped(DropCause::Link) as f64;
    // Binomial: sd = sqrt(n p (1 − p)) ≈ 34.5 packets; allow 4 sd.
    let sd = (sent * p * (1.0 - p)).sqrt();
    assert!((lost - sent * p).abs() <= 4.0 * sd, "lost {lost} of {sent}");
    assert_eq!(view(&mine, secs).drops[1] as f64, lost);
    common::require_ns("bernoulli_loss_rate_agrees_with_ns2");
    let theirs = view(&ns("DropTail", 50, p, secs, &flows), secs);
    let ns_lost = theirs.drops[1] as f64;
    assert!(
        (ns_lost - sent * p).abs() <= 4.0 * sd,
        "NS-2 lost {ns_lost} of {sent}"
    );
    // Two independent draws: their difference has sd √2 · sd.
    assert!(
        (ns_lost - lost).abs() <= 4.0 * 2f64.sqrt() * sd,
        "NS-2 {ns_lost} vs {lost}"
    );
    // Losses happen after the delay line, as with NS-2's link-lossmodel: the link carried them.
    assert_eq!(
        theirs.received[1] + theirs.drops[1],
        view(&mine, secs).received[1] + lost as u64
    );
}
