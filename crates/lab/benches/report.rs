//! What a run does after the simulation, against the number of flows: the summary
//! (`summary::summarize`, fairness included), the time series, `run_report` rendered to HTML,
//! and the data files (`summary::write_data_files`). Issue 32: these were quadratic in flows
//! (a 10⁴-flow run spent a minute in the report); they must grow linearly, which the time per
//! flow printed here shows (flat from 1,000 to 20,000 flows).
//!
//! `cargo bench -p lab --bench report` (add `-- --quick` for a fast pass). Results are in
//! `docs/performance.md`, "After the run".

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lab::runner::{simulate, RunOptions};
use lab::{run_report, summary};
use scenario::Scenario;

/// A dumbbell of `n` senders, one flow each (TCP, TFRC and UDP in turn), sharing a 1 Gb/s
/// bottleneck for 20 ms: every flow starts and sends, and the friendliness of a third of them
/// is computed against a third of TCP flows on the same bottleneck (the quadratic case).
fn scenario(n: usize) -> Scenario {
    let mut t = format!(
        "name = \"report-bench\"\nduration = \"20ms\"\nsample_interval = \"5ms\"\n\
         [topology]\nkind = \"dumbbell\"\nsenders = {n}\naccess_bandwidth = \"10Gbps\"\n\
         access_delay = \"1ms\"\nbottleneck_bandwidth = \"1Gbps\"\nbottleneck_delay = \"2ms\"\n\
         queue_limit = 10000\n"
    );
    for i in 0..n {
        let kind = ["tcp", "tfrc", "udp"][i % 3];
        t.push_str(&format!(
            "[[flows]]\nname = \"f{i}\"\nkind = \"{kind}\"\nfrom = \"s{i}\"\nto = \"d{i}\"\n\
             start = \"{}ms\"\n",
            i % 5
        ));
    }
    Scenario::from_str(&t).expect("the bench scenario is valid")
}

fn after_the_run(c: &mut Criterion) {
    let mut g = c.benchmark_group("after_the_run");
    g.sample_size(10);
    for n in [1_000, 5_000, 20_000] {
        let s = scenario(n);
        let out = simulate(&s, &RunOptions::default()).expect("the bench scenario runs");
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("summarize", n), &n, |b, _| {
            b.iter(|| black_box(summary::summarize(&s, &out)))
        });
        let sum = summary::summarize(&s, &out);
        let rows = summary::timeseries(&s, &out);
        g.bench_with_input(BenchmarkId::new("run_report", n), &n, |b, _| {
            b.iter(|| black_box(run_report::run_report(&s, &sum, &rows, &out).render().len()))
        });
        let dir = tempfile::tempdir().expect("a temporary folder");
        g.bench_with_input(BenchmarkId::new("write_data_files", n), &n, |b, _| {
            b.iter(|| {
                let o = lab::output::OutputDir::create(&dir.path().join("out")).unwrap();
                summary::write_data_files(&o, &sum, &rows).unwrap();
                o.commit().unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, after_the_run);
criterion_main!(benches);
