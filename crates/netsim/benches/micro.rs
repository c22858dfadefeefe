//! Criterion micro-benchmarks of the simulator's per-event and per-packet building blocks:
//! the event scheduler (the timing wheel `EventQueue` against the binary heaps it replaced),
//! each queue discipline, and the TFRC receiver's per-packet path.
//!
//! `cargo bench -p netsim --bench micro` (add `-- --quick` for a fast pass). Results and their
//! reading are in `docs/performance.md`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use netsim::packet::{Packet, PacketKind};
use netsim::queue::{DropTailConfig, Queue, QueueConfig, RedConfig};
use netsim::sched::{EventQueue, HeapQueue, Key};
use netsim::Time;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Time steps of the "hold" model, in ns: mostly transmission ends and propagation arrivals
/// (µs to ms ahead), sometimes a timer far ahead, as in the simulator's dumbbells.
fn steps(n: usize) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    (0..n)
        .map(|_| match rng.gen_range(0..100) {
            0 => rng.gen_range(50_000_000..500_000_000),
            1..=49 => rng.gen_range(800..12_000),
            _ => rng.gen_range(1_000_000..12_000_000),
        })
        .collect()
}

fn key(t: u64, seq: u64) -> Key {
    Key {
        secs: t as f64 / 1e9,
        seq,
    }
}

/// The classic hold benchmark: `pending` events queued; each operation pops the earliest and
/// pushes one a random step after it.
fn scheduler(c: &mut Criterion) {
    let mut g = c.benchmark_group("scheduler_hold");
    g.throughput(Throughput::Elements(1));
    let steps = steps(1 << 16);
    for pending in [16usize, 350, 4000] {
        g.bench_with_input(BenchmarkId::new("wheel", pending), &pending, |b, &n| {
            let mut q = EventQueue::new();
            let mut seq = 0;
            for (i, &t) in steps.iter().enumerate().take(n) {
                q.push(key(t, seq), i as u32);
                seq += 1;
            }
            let mut i = 0;
            b.iter(|| {
                let (k, e) = q.pop().unwrap_or((key(0, 0), 0));
                i = (i + 1) & (steps.len() - 1);
                seq += 1;
                q.push(key(k.time().as_nanos() + steps[i], seq), black_box(e));
            })
        });
        g.bench_with_input(
            BenchmarkId::new("heap_int_keys", pending),
            &pending,
            |b, &n| {
                let mut q = HeapQueue::new();
                let mut seq = 0;
                for (i, &t) in steps.iter().enumerate().take(n) {
                    q.push(key(t, seq), i as u32);
                    seq += 1;
                }
                let mut i = 0;
                b.iter(|| {
                    let (k, e) = q.pop().unwrap_or((key(0, 0), 0));
                    i = (i + 1) & (steps.len() - 1);
                    seq += 1;
                    q.push(key(k.time().as_nanos() + steps[i], seq), black_box(e));
                })
            },
        );
        g.bench_with_input(
            BenchmarkId::new("std_binary_heap", pending),
            &pending,
            |b, &n| {
                // What the simulator used before: `Key`'s `Ord` (three comparisons, one of them
                // `f64::total_cmp`) in a max-heap of reversed entries.
                let mut q = BinaryHeap::new();
                let mut seq = 0;
                for (i, &t) in steps.iter().enumerate().take(n) {
                    q.push(Reverse((key(t, seq), i as u32)));
                    seq += 1;
                }
                let mut i = 0;
                b.iter(|| {
                    let Reverse((k, e)) = q.pop().unwrap_or(Reverse((key(0, 0), 0)));
                    i = (i + 1) & (steps.len() - 1);
                    seq += 1;
                    q.push(Reverse((
                        key(k.time().as_nanos() + steps[i], seq),
                        black_box(e),
                    )));
                })
            },
        );
    }
    g.finish();
}

/// A TCP-like data packet of `size` bytes (40 of them headers); uid and flow vary with `seq`.
fn packet(seq: i64, size: u32) -> Packet {
    Packet {
        uid: seq as u64,
        flow: (seq % 7) as u32,
        kind: PacketKind::Tcp,
        payload: size - 40,
        ..netsim::testing::packet(seq, size)
    }
}

/// One arrival and one departure at a queue holding about `backlog` packets (a congested
/// bottleneck: arrivals slightly faster than departures, so drops happen too).
fn queues(c: &mut Criterion) {
    let mut g = c.benchmark_group("queue_enqueue_dequeue");
    g.throughput(Throughput::Elements(1));
    let configs = [
        (
            "droptail",
            QueueConfig::DropTail(DropTailConfig {
                limit: 100,
                ..DropTailConfig::default()
            }),
        ),
        (
            "red",
            QueueConfig::Red(RedConfig {
                limit: 100,
                ..RedConfig::default()
            }),
        ),
        ("ared", QueueConfig::Red(RedConfig::ared())),
        ("ered", QueueConfig::Red(RedConfig::ered())),
    ];
    for (name, cfg) in configs {
        g.bench_function(name, |b| {
            let mut q = Queue::new(&cfg, 1e9, 0.01);
            let mut rng = ChaCha8Rng::seed_from_u64(2);
            let mut seq = 0i64;
            let mut now = 0u64;
            for _ in 0..60 {
                seq += 1;
                let _ = q.enqueue(packet(seq, 1040), Time::from_nanos(now), &mut rng);
            }
            b.iter(|| {
                // 8.32 µs per 1040-byte packet at 1 Gb/s; arrivals every 8 µs.
                now += 8_000;
                seq += 1;
                let t = Time::from_nanos(now);
                black_box(q.enqueue(packet(seq, 1040), t, &mut rng));
                if seq % 25 != 0 {
                    black_box(q.dequeue(t));
                }
                if q.len() < 10 {
                    for _ in 0..30 {
                        seq += 1;
                        let _ = q.enqueue(packet(seq, 1040), t, &mut rng);
                    }
                }
            })
        });
    }
    g.finish();
}

/// The TFRC receiver core's work per data packet: `on_data` and the feedback poll the agent
/// does after it, with a loss every 100 packets (ns2 and RFC 5348 profiles).
fn tfrc_receiver(c: &mut Criterion) {
    let mut g = c.benchmark_group("tfrc_receiver_per_packet");
    g.throughput(Throughput::Elements(1));
    for (name, profile) in [
        ("ns2", tfrc::Profile::ns2()),
        ("rfc5348", tfrc::Profile::rfc5348()),
    ] {
        g.bench_function(name, |b| {
            let mut r = tfrc::Receiver::new(profile.receiver).expect("valid profile");
            let mut seq = 0u64;
            let mut now = 1_000_000u64;
            b.iter(|| {
                seq += 1;
                if seq % 100 == 0 {
                    seq += 1; // one packet lost
                }
                now += 80_000; // 100 Mb/s of 1000-byte packets
                let t = Time::from_nanos(now);
                let hdr = tfrc::DataHeader {
                    seq,
                    timestamp: Time::from_nanos(now - 20_000_000),
                    rtt: Duration::from_millis(40),
                    t_rto: Duration::from_millis(160),
                    segment_size: 1000,
                    round: (seq / 50) as u32,
                    urgent: false,
                    initial_ttl: 32,
                };
                r.on_data(t, &hdr, 1040);
                black_box(r.poll_feedback(t));
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = scheduler, queues, tfrc_receiver
}
criterion_main!(benches);
