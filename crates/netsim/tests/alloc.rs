//! No heap allocation per packet on the data path (issue 15): after a warm-up, a further stretch
//! of a dumbbell run allocates a number of times independent of the packets it carries.
//!
//! A counting global allocator (this test binary's own) counts the allocations (alloc,
//! alloc_zeroed, realloc) a thread makes while armed. Each run is measured twice: the stretch
//! `WARM..END`, and then an empty call `run(END)` again, which only builds the results (cloned
//! recorders, a cost per flow and link, not per packet). Their difference is what the packets
//! of the stretch cost.
//!
//! The time series grow one bin per simulated second per series by design; bins of 1000 s keep
//! them out of the count, so that what is left is the data path. What may still allocate there,
//! and why it is bounded: rings and queues grow only when a hole or a backlog is larger than
//! ever before (doubling, so a handful of times per flow after the warm-up), and the event
//! queue's calendar buckets each allocate on their first use (a fixed number of buckets).
//! [`PER_FLOW`] allows for that, while each flow carries over 10,000 packet hops in the
//! stretch: one allocation per packet, per ACK or per loss on any agent's path breaks it by an
//! order of magnitude (before the sink's ring, NewReno's four sinks made 507 allocations here
//! and CUBIC's SACK handling 9,772).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;

use netsim::agents::tcp::{TcpConfig, TcpSender, TcpVariant};
use netsim::agents::tcp_sink::{TcpSink, TcpSinkConfig};
use netsim::agents::tfrc::{TfrcApp, TfrcReceiver, TfrcSender};
use netsim::agents::{
    AnyAgent, CbrConfig, CbrSource, CubicConfig, CubicProfile, CubicSender, NullSink,
};
use netsim::{LinkConfig, LossConfig, NetworkBuilder, Simulator, StatsConfig, Time};

struct Counting;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

fn note() {
    // `try_with`: the allocator may run while thread-locals are being torn down.
    let _ = ARMED.try_with(|a| {
        if a.get() {
            let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        }
    });
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting only touches
// const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations (alloc, alloc_zeroed, realloc) this thread makes during `f`.
fn count<T>(f: impl FnOnce() -> T) -> (T, u64) {
    COUNT.with(|c| c.set(0));
    ARMED.with(|a| a.set(true));
    let out = f();
    ARMED.with(|a| a.set(false));
    (out, COUNT.with(|c| c.get()))
}

/// End of the warm-up: slow start over, windows and queues at their working sizes.
const WARM: f64 = 10.0;
/// End of the measured stretch.
const END: f64 = 40.0;
/// Flows per dumbbell.
const FLOWS: usize = 4;
/// Allocations allowed per flow in the stretch (see the module docs). Measured: CBR 0, CUBIC
/// 1, SACK 5, NewReno 6 and TFRC 27 for all four flows together (TFRC's are the event
/// queue's buckets: paced packets reach more of them).
const PER_FLOW: u64 = 16;

#[derive(Clone, Copy, Debug)]
enum Kind {
    NewReno,
    Sack,
    Cubic,
    Tfrc,
    Cbr,
}

fn agents(kind: Kind) -> (AnyAgent, AnyAgent) {
    let tcp = |variant| TcpConfig {
        window: 200,
        ..TcpConfig::ns2(variant)
    };
    match kind {
        Kind::NewReno => (
            TcpSender::new(tcp(TcpVariant::NewReno)).into(),
            TcpSink::new(TcpSinkConfig::ns2()).into(),
        ),
        Kind::Sack => (
            TcpSender::new(tcp(TcpVariant::Sack)).into(),
            TcpSink::new(TcpSinkConfig::ns2_sack1()).into(),
        ),
        Kind::Cubic => (
            CubicSender::new(CubicConfig {
                window: 200,
                ..CubicConfig::ns2(CubicProfile::Ns2)
            })
            .into(),
            TcpSink::new(TcpSinkConfig::ns2_linux()).into(),
        ),
        Kind::Tfrc => {
            let p = tfrc::Profile::rfc5348();
            (
                TfrcSender::new(&p, TfrcApp::Bulk).expect("valid").into(),
                TfrcReceiver::new(&p).expect("valid").into(),
            )
        }
        Kind::Cbr => (
            CbrSource::new(CbrConfig {
                packet_size: 1000,
                rate_bps: 3_000_000.0,
                random: true,
                ..CbrConfig::default()
            })
            .into(),
            NullSink::new().into(),
        ),
    }
}

/// `FLOWS` flows of `kind` over a 10 Mb/s, 20 ms bottleneck with 1% random loss (so that sinks
/// hold out-of-order packets and senders recover from losses in the stretch).
fn dumbbell(kind: Kind) -> Simulator {
    let mut net = NetworkBuilder::new(7);
    let ms = Duration::from_millis;
    let r1 = net.add_node("r1");
    let r2 = net.add_node("r2");
    let (bottleneck, _) = net.add_duplex_link(r1, r2, LinkConfig::new(10_000_000, ms(20)));
    net.set_loss(bottleneck, Some(LossConfig::Bernoulli { p: 0.01 }));
    for i in 0..FLOWS {
        let s = net.add_node(&format!("s{i}"));
        let d = net.add_node(&format!("d{i}"));
        net.add_duplex_link(s, r1, LinkConfig::new(100_000_000, ms(1 + i as u64)));
        net.add_duplex_link(r2, d, LinkConfig::new(100_000_000, ms(2)));
        let (tx, rx) = agents(kind);
        net.add_flow(s, d, Time::from_secs_f64(0.1 * i as f64), None, tx, rx);
    }
    net.stats(StatsConfig {
        bin_width: Duration::from_secs(1000),
        ..StatsConfig::default()
    });
    net.build().expect("valid network")
}

/// Allocations caused by the packets of `WARM..END`, and the packet hops of that stretch.
fn stretch(kind: Kind) -> (u64, u64) {
    let mut sim = dumbbell(kind);
    let warm = sim.run(Time::from_secs_f64(WARM)).expect("warm-up runs");
    let end = Time::from_secs_f64(END);
    let (res, with_packets) = count(|| sim.run(end).expect("stretch runs"));
    let (_, results_only) = count(|| sim.run(end).expect("empty run"));
    let hops = res.packet_hops - warm.packet_hops;
    (with_packets.saturating_sub(results_only), hops)
}

fn check(kind: Kind) {
    let (allocs, hops) = stretch(kind);
    println!("{kind:?}: {allocs} allocations over {hops} packet hops");
    // The stretch must carry real traffic, or the bound says nothing.
    assert!(
        hops > 10_000 * FLOWS as u64,
        "{kind:?}: only {hops} packet hops"
    );
    let bound = PER_FLOW * FLOWS as u64;
    assert!(
        allocs <= bound,
        "{kind:?}: {allocs} allocations over {hops} packet hops (at most {bound} allowed: \
         something allocates per packet)"
    );
}

#[test]
fn newreno_with_random_loss_allocates_nothing_per_packet() {
    check(Kind::NewReno);
}

#[test]
fn sack_allocates_nothing_per_packet() {
    check(Kind::Sack);
}

#[test]
fn cubic_allocates_nothing_per_packet() {
    check(Kind::Cubic);
}

#[test]
fn tfrc_allocates_nothing_per_packet() {
    check(Kind::Tfrc);
}

#[test]
fn cbr_allocates_nothing_per_packet() {
    check(Kind::Cbr);
}

#[test]
fn the_counter_sees_allocations() {
    // The instrument itself: a thousand boxes are a thousand allocations.
    let (v, n) = count(|| (0..1000).map(Box::new).collect::<Vec<_>>());
    assert_eq!(v.len(), 1000);
    assert!(n >= 1000, "counted {n}");
}
