//! The emulator's accuracy on real packets (root: namespaces and tun devices). Two nodes, one
//! link; a UDP sender in one namespace, a receiver in the other, both timestamping with the
//! host's monotonic clock.
//!
//! - Constant rate: a 15 Mb/s sender into a 10 Mb/s link; the rate the receiving socket sees
//!   over 4 s must be within 1% of 10 Mb/s (the bound).
//! - A capacity trace: 10 → 2 → 10 Mb/s steps; each step's received rate within 1%.
//! - Delay: a light CBR flow (no queue) sees the propagation delay plus one serialisation
//!   time; the median within 150 µs of that and the 99th percentile within the emulator's
//!   own 0.5-ms limit (what `realnet` uses to call a run distorted).
//!
//! Budget: about 20 s of wall time.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use netemu::engine::{Endpoint, LinkSpec};
use netemu::model::DirConfig;
use netemu::{sys, Config, Emulator, NetSpec, Network, Realtime, Update};
use netsim::queue::{DropTailConfig, QueueConfig};
use netsim::LinkSettings;

const PAYLOAD: usize = 1472; // 1500-byte IP packets

struct Bed {
    net: Network,
    emu: Option<Emulator>,
    epoch: u64,
}

fn bed(tag: &str, bw: u64, delay: Duration, limit: u32, updates: Vec<Update>) -> Bed {
    let q = QueueConfig::DropTail(DropTailConfig {
        limit,
        ..DropTailConfig::default()
    });
    bed_with(tag, bw, delay, q, updates)
}

fn bed_with(tag: &str, bw: u64, delay: Duration, queue: QueueConfig, updates: Vec<Update>) -> Bed {
    // CI runs as root; elsewhere the test fails saying why rather than passing unrun.
    assert!(
        sys::is_root(),
        "needs root: network namespaces and tun devices"
    );
    let spec = NetSpec {
        tag: format!("{}{tag}", std::process::id() % 100_000),
        nodes: vec!["a".into(), "b".into()],
        links: vec![(0, 1, true)],
        mtu: 1500,
    };
    let mut net = Network::build(&spec).expect("build");
    let (ta, tb): (OwnedFd, OwnedFd) = net.tuns.pop().unwrap();
    let dir = DirConfig {
        bandwidth_bps: bw,
        delay,
        queue,
        loss: None,
        arrival_jitter: Duration::ZERO,
    };
    let epoch = sys::monotonic_ns();
    let emu = Emulator::start(Config {
        epoch_ns: epoch,
        nodes: net.addrs.clone(),
        links: vec![LinkSpec {
            name: "ab".into(),
            a: Endpoint { node: 0, tun: ta },
            b: Endpoint { node: 1, tun: tb },
            forward: dir.clone(),
            reverse: Some(dir),
        }],
        updates,
        seed: 1,
        classifier: None,
        realtime: Realtime::default(),
        capture: false,
    })
    .expect("start");
    Bed {
        net,
        emu: Some(emu),
        epoch,
    }
}

/// Receive for `secs` seconds on b; return (receive time, send time) in ns since the epoch.
fn receiver(b: &Bed, secs: f64) -> std::thread::JoinHandle<std::io::Result<Vec<(u64, u64, u8)>>> {
    let addr = SocketAddr::new(b.net.addrs[1].into(), 9000);
    let epoch = b.epoch;
    let (tx, rx) = std::sync::mpsc::channel();
    let h = b.net.nodes[1]
        .spawn("rx", move || -> std::io::Result<Vec<(u64, u64, u8)>> {
            // The endpoints measure the emulator, not the machine's load: real-time priority,
            // below the emulator's.
            let _ = sys::set_fifo(40);
            let s = UdpSocket::bind(addr)?;
            s.set_read_timeout(Some(Duration::from_millis(50)))?;
            let _ = tx.send(());
            let end = sys::monotonic_ns() + (secs * 1e9) as u64;
            let mut out = Vec::new();
            let mut buf = [0u8; 2048];
            enable_rx_timestamps(&s);
            while sys::monotonic_ns() < end {
                if let Some((n, at, tos)) = recv_stamped(&s, &mut buf) {
                    if n >= 8 {
                        let sent = u64::from_be_bytes(buf[..8].try_into().unwrap()) - epoch;
                        out.push((at - epoch, sent, tos));
                    }
                }
            }
            Ok(out)
        })
        .unwrap();
    rx.recv().unwrap();
    std::thread::spawn(move || h.join().unwrap().and_then(|r| r))
}

/// Send `secs` seconds of 1500-byte packets from a to b, one every `gap`.
fn sender(b: &Bed, secs: f64, gap: Duration, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    sender_tos(b, secs, gap, stop, 0)
}

/// [`sender`] with the IP TOS byte set (its two low bits are the ECN field).
fn sender_tos(
    b: &Bed,
    secs: f64,
    gap: Duration,
    stop: Arc<AtomicBool>,
    tos: u8,
) -> std::thread::JoinHandle<()> {
    let to = SocketAddr::new(b.net.addrs[1].into(), 9000);
    let from = SocketAddr::new(b.net.addrs[0].into(), 0);
    let h = b.net.nodes[0]
        .spawn("tx", move || {
            // The sender must keep its times: real-time priority, below the emulator's. (It
            // sleeps between packets; a greedy one would hold a core until the kernel's
            // real-time throttling stopped every real-time thread on it, the emulator's too.)
            let _ = sys::set_fifo(40);
            let s = UdpSocket::bind(from).unwrap();
            s.connect(to).unwrap();
            if tos != 0 {
                set_int(&s, libc::IPPROTO_IP, libc::IP_TOS, libc::c_int::from(tos));
            }
            let end = sys::monotonic_ns() + (secs * 1e9) as u64;
            let mut next = sys::monotonic_ns();
            let mut buf = [0u8; PAYLOAD];
            while sys::monotonic_ns() < end && !stop.load(Ordering::Relaxed) {
                while sys::monotonic_ns() < next {
                    std::thread::sleep(Duration::from_micros(50));
                }
                next += gap.as_nanos() as u64;
                buf[..8].copy_from_slice(&sys::monotonic_ns().to_be_bytes());
                // The tun's queue may refuse a burst (ENOBUFS): a greedy sender just retries.
                if s.send(&buf).is_err() {
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        })
        .unwrap();
    std::thread::spawn(move || {
        let _ = h.join();
    })
}

fn set_int(s: &UdpSocket, level: libc::c_int, name: libc::c_int, v: libc::c_int) {
    use std::os::fd::AsRawFd;
    // SAFETY: a c_int option of the size given.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            name,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0);
}

fn enable_rx_timestamps(s: &UdpSocket) {
    set_int(s, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1);
    set_int(s, libc::IPPROTO_IP, libc::IP_RECVTOS, 1);
}

fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One datagram, the kernel's receive time on the monotonic clock (the kernel stamps with the
/// real-time clock; the offset between the two is read at once) and its TOS byte.
fn recv_stamped(s: &UdpSocket, buf: &mut [u8]) -> Option<(usize, u64, u8)> {
    use std::os::fd::AsRawFd;
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut cbuf = [0u64; 16];
    // SAFETY: zeroed msghdr, then pointed at live buffers of the sizes given.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
    // SAFETY: `msg` describes live buffers.
    let n = unsafe { libc::recvmsg(s.as_raw_fd(), &mut msg, 0) };
    if n < 0 {
        return None;
    }
    let offset = realtime_ns() as i64 - sys::monotonic_ns() as i64;
    let (mut at, mut tos) = (sys::monotonic_ns(), 0u8);
    // SAFETY: walking the control buffer the kernel filled, with the CMSG macros.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                let real = ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64;
                at = (real - offset) as u64;
            }
            if (*c).cmsg_level == libc::IPPROTO_IP && (*c).cmsg_type == libc::IP_TOS {
                tos = *libc::CMSG_DATA(c);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Some((n as usize, at, tos))
}

/// Received IP bit rate between `from` and `to` seconds (receive times).
fn rate(rx: &[(u64, u64, u8)], from: f64, to: f64) -> f64 {
    let inside: Vec<u64> = rx
        .iter()
        .map(|r| r.0)
        .filter(|&t| t as f64 >= from * 1e9 && (t as f64) < to * 1e9)
        .collect();
    let (first, last) = (inside[0], *inside.last().unwrap());
    // n packets span n − 1 gaps.
    (inside.len() - 1) as f64 * 1500.0 * 8.0 / ((last - first) as f64 / 1e9)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default()
}

#[test]
fn constant_rate_and_a_capacity_trace() {
    let step = |at_ms: u64, bw: u64| Update {
        at: Duration::from_millis(at_ms),
        link: 0,
        forward: true,
        settings: LinkSettings {
            bandwidth_bps: Some(bw),
            ..LinkSettings::default()
        },
    };
    // 10 Mb/s until 5 s, 2 Mb/s until 9 s, 10 Mb/s again until the end (13 s).
    let mut b = bed(
        "c",
        10_000_000,
        Duration::from_millis(10),
        100,
        vec![step(5_000, 2_000_000), step(9_000, 10_000_000)],
    );
    let rx = receiver(&b, 13.5);
    let stop = Arc::new(AtomicBool::new(false));
    // 1500 bytes every 0.8 ms: 15 Mb/s, above every step's capacity.
    let tx = sender(&b, 13.0, Duration::from_micros(800), stop.clone());
    let got = rx.join().unwrap().unwrap();
    stop.store(true, Ordering::Relaxed);
    tx.join().unwrap();
    let rep = b.emu.take().unwrap().stop().unwrap();
    println!(
        "load {}; emulator lateness {}; wake-ups {}; fifo {:?}",
        load(),
        rep.lateness.summary(),
        rep.wakeups.summary(),
        rep.fifo_refused
    );
    println!("{:?}", rep.dirs[0]);
    // Windows inside each step, leaving 0.5 s for the queue to settle after a change (a
    // packet that started at the old rate finishes at it) and the 10-ms delay.
    for (from, to, bw) in [(0.5, 4.9, 10e6), (5.5, 8.9, 2e6), (9.5, 12.9, 10e6)] {
        let r = rate(&got, from, to);
        println!(
            "{from}–{to} s: {:.4} Mb/s (link {:.1} Mb/s), error {:+.3}%",
            r / 1e6,
            bw / 1e6,
            (r / bw - 1.0) * 100.0
        );
        assert!(
            (r / bw - 1.0).abs() < 0.01,
            "received {r} b/s on a {bw} b/s link"
        );
    }
    assert!(
        rep.dirs[0].dropped_queue > 0,
        "the sender did not fill the queue"
    );
}

#[test]
fn delay_is_propagation_plus_serialisation() {
    let mut b = bed("d", 10_000_000, Duration::from_millis(20), 100, vec![]);
    let rx = receiver(&b, 4.5);
    let stop = Arc::new(AtomicBool::new(false));
    // 1500 bytes every 5 ms: 2.4 Mb/s, never a queue.
    let tx = sender(&b, 4.0, Duration::from_millis(5), stop);
    let got = rx.join().unwrap().unwrap();
    tx.join().unwrap();
    let rep = b.emu.take().unwrap().stop().unwrap();
    let mut d: Vec<i64> = got
        .iter()
        .filter(|r| r.0 > 500_000_000)
        .map(|r| r.0 as i64 - r.1 as i64)
        .collect();
    d.sort_unstable();
    let expect = 20_000_000 + 1_200_000; // delay + 1500 B at 10 Mb/s
    let p50 = d[d.len() / 2] - expect;
    let p99 = d[d.len() * 99 / 100] - expect;
    println!(
        "load {}; {} packets; one-way delay − {} µs: p50 {:+} µs, p99 {:+} µs, min {:+} µs; emulator lateness {}",
        load(),
        d.len(),
        expect / 1000,
        p50 / 1000,
        p99 / 1000,
        (d[0] - expect) / 1000,
        rep.lateness.summary()
    );
    assert!(d.len() > 600);
    // Never early: the emulator cannot deliver before the model says.
    assert!(
        d[0] >= expect,
        "a packet arrived {} ns early",
        expect - d[0]
    );
    // The stated error: a packet is read when the kernel wakes the emulator thread (it is
    // stamped then, not when the sender's kernel queued it) and written when the thread
    // wakes for its due time; each wake-up costs tens of µs on this virtual machine (the
    // report's `wakeups`), so the median one-way delay is up to 150 µs above the model's
    // and 99% within the 0.5 ms a run may lose before `realnet` calls it distorted.
    assert!(p50 < 150_000, "median {p50} ns late");
    assert!(p99 < 500_000, "p99 {p99} ns late");
}

/// RED with `setbit` marks ECN-capable packets instead of dropping them early: the receiver
/// sees CE (0b11) in exactly as many packets as the emulator marked (the IP checksum fixed,
/// or the kernel would have dropped them), and only in packets sent as ECT(0).
#[test]
fn red_marks_ect_packets_ce() {
    let red = netsim::queue::RedConfig {
        limit: 60,
        setbit: true,
        ..netsim::queue::RedConfig::default()
    };
    let mut b = bed_with(
        "e",
        2_000_000,
        Duration::from_millis(5),
        QueueConfig::Red(red),
        vec![],
    );
    let rx = receiver(&b, 4.5);
    let stop = Arc::new(AtomicBool::new(false));
    // 1500 bytes every 5 ms (2.4 Mb/s into 2 Mb/s), ECT(0).
    let tx = sender_tos(&b, 4.0, Duration::from_millis(5), stop, 0b10);
    let got = rx.join().unwrap().unwrap();
    tx.join().unwrap();
    let rep = b.emu.take().unwrap().stop().unwrap();
    let ce = got.iter().filter(|r| r.2 & 3 == 3).count() as u64;
    let ect0 = got.iter().filter(|r| r.2 & 3 == 2).count() as u64;
    println!(
        "received {} ({ce} CE, {ect0} ECT(0)); emulator marked {}, dropped {} early, {} overflow",
        got.len(),
        rep.dirs[0].marked_ce,
        rep.dirs[0].dropped_aqm,
        rep.dirs[0].dropped_queue
    );
    assert!(ce > 10, "RED marked too few packets to test");
    assert_eq!(ce, rep.dirs[0].marked_ce);
    assert_eq!(ce + ect0, got.len() as u64);
}
