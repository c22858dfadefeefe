//! Memory per flow, beyond packets in flight (issue 30's target: ≤ 16 KiB).
//!
//! Peak RSS counts everything a run holds, the packets in flight included, and a process's
//! start-up too. Here a counting global allocator (`stats_alloc`) gives the heap bytes live at
//! three points of the scaling suite's 1 Gb/s dumbbells (`tfrclab bench scaling`'s files,
//! every statistic): after the network is built, before any packet (each flow's agents,
//! statistics, timers, host links and routes; no packet can be in flight yet), and after the
//! scenario's 10 s (`Simulator::advance`: the state has grown with the traffic, histogram pages,
//! series bins, agents' rings, and the results are not built yet). From the second, the packet
//! store's bytes (a slot for each of the most packets ever in the network at once) are taken
//! off; what scales with packets on the wire elsewhere (queue rings, pending arrival events)
//! stays in, so the figure errs high. Per flow is the slope between two flow counts.
//!
//! Both meterings are measured: every statistic (what `run` reports: each flow's delay
//! histograms and time series grow with the traffic) and counters only (`bench --counters-only`).
//!
//! `cargo bench -p lab --bench flow_memory` (a few seconds; only the counting itself is
//! asserted). Results are in `docs/performance.md`, "Third round".

use lab::bench::grid::{Case, Mix};
use lab::runner::{build_with, RunOptions};
use netsim::{CountersOnly, FullStats, Metering, Time};
use scenario::Scenario;
use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// Heap bytes live now: allocated less freed. `stats_alloc` adds a reallocation's growth to
/// `bytes_allocated` (and a shrink to `bytes_deallocated`) itself; adding `bytes_reallocated`
/// too, as this bench did before issue 30's statistics step, counted every growth twice.
fn live() -> i64 {
    let s = GLOBAL.stats();
    s.bytes_allocated as i64 - s.bytes_deallocated as i64
}

struct Point {
    flows: usize,
    built: i64,
    run: i64,
    store: i64,
}

fn measure<M: Metering>(flows: usize) -> Point {
    let case = Case {
        flows,
        bandwidth_bps: 1e9,
        mix: Mix::Tcp,
        duration_s: 10.0,
    };
    let s = Scenario::from_str(&case.toml()).expect("a scaling-suite scenario is valid");
    let base = live();
    let (mut sim, _) = build_with::<M>(&s, &RunOptions::default()).expect("it builds");
    let built = live() - base;
    let until = Time::from_nanos(u64::try_from(s.duration.as_nanos()).expect("10 s"));
    sim.advance(until).expect("it runs");
    let run = live() - base;
    let store = sim.packet_store_bytes() as i64;
    drop(sim);
    Point {
        flows,
        built,
        run,
        store,
    }
}

/// A `Vec` grown by reallocation counts once, at its capacity.
fn check_counting() {
    let base = live();
    let mut v: Vec<u64> = Vec::with_capacity(1);
    v.extend(0..10_000);
    assert_eq!(live() - base, (v.capacity() * size_of::<u64>()) as i64);
}

fn main() {
    check_counting();
    report::<FullStats>("every statistic");
    report::<CountersOnly>("counters only");
}

fn report<M: Metering>(metering: &str) {
    let points: Vec<Point> = [1, 10, 100, 1000].into_iter().map(measure::<M>).collect();
    let kib = |b: f64| b / 1024.0;
    println!("{metering}:");
    println!("flows  built KiB  after 10 s KiB  packet store KiB  beyond store KiB");
    for p in &points {
        println!(
            "{:>5}  {:>9.1}  {:>14.1}  {:>16.1}  {:>16.1}",
            p.flows,
            kib(p.built as f64),
            kib(p.run as f64),
            kib(p.store as f64),
            kib((p.run - p.store) as f64)
        );
    }
    for w in points.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let dn = (b.flows - a.flows) as f64;
        println!(
            "per added flow, {} -> {}: built {:.2} KiB, after 10 s beyond the packet store {:.2} KiB",
            a.flows,
            b.flows,
            kib((b.built - a.built) as f64 / dn),
            kib(((b.run - b.store) - (a.run - a.store)) as f64 / dn)
        );
    }
}
