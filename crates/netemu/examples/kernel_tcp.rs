//! One kernel TCP flow (Reno or CUBIC) across one emulated link, with the sender's TCP_INFO
//! sampled every 10 ms: the kernel side of the Linux TCP model's check (issue 26;
//! `validation/linux/README.md`, `docs/simulator.md` "Linux TCP").
//!
//! ```text
//! cargo run --release -p netemu --example kernel_tcp -- \
//!     --cc cubic --bw 10000000 --delay-ms 10 --limit 17 --secs 10 --out run.csv
//! ```
//!
//! Two namespaces `s` and `r`, one duplex link: forward `--bw` with netsim's DropTail of
//! `--limit` packets and `--delay-ms` of propagation, reverse the same rate and delay with a
//! large queue (ACKs only). Fresh namespaces per run, so no TCP metrics are cached. The CSV
//! has one row per sample: time (s since the connection started), cwnd, ssthresh, srtt (s),
//! rto (s), ca_state, total retransmissions, bytes acknowledged; a final `#` line holds the
//! namespace's TCP counters (timeouts, SACK recoveries, HyStart exits, loss probes), the
//! bytes the receiver read, and the emulator's write lateness. `--capture FILE` also writes
//! every packet event the emulator saw (time, direction, event, size).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

use netemu::engine::{Endpoint, LinkSpec};
use netemu::model::DirConfig;
use netemu::{sys, Config, Emulator, NetSpec, Network, Realtime};
use netsim::queue::{DropTailConfig, QueueConfig};

struct Args {
    cc: String,
    bw: u64,
    delay_ms: u64,
    limit: u32,
    secs: f64,
    out: String,
    capture: Option<String>,
}

fn args() -> Args {
    let mut a = Args {
        cc: "cubic".into(),
        bw: 10_000_000,
        delay_ms: 10,
        limit: 17,
        secs: 10.0,
        out: "kernel_tcp.csv".into(),
        capture: None,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i + 1 < v.len() {
        let x = v[i + 1].clone();
        match v[i].as_str() {
            "--cc" => a.cc = x,
            "--bw" => a.bw = x.parse().expect("--bw: bits/s"),
            "--delay-ms" => a.delay_ms = x.parse().expect("--delay-ms: ms"),
            "--limit" => a.limit = x.parse().expect("--limit: packets"),
            "--secs" => a.secs = x.parse().expect("--secs: seconds"),
            "--out" => a.out = x,
            "--capture" => a.capture = Some(x),
            o => panic!("unknown option {o}"),
        }
        i += 2;
    }
    a
}

/// `struct tcp_info` fields read by byte offset (include/uapi/linux/tcp.h).
struct Info {
    ca_state: u8,
    rto_us: u32,
    rtt_us: u32,
    ssthresh: u32,
    cwnd: u32,
    total_retrans: u32,
    bytes_acked: u64,
}

/// What the sender thread returns: the samples (time, TCP_INFO) and the namespace's counters.
type SenderOutput = (Vec<(f64, Info)>, Vec<(String, u64)>);

fn tcp_info(fd: i32) -> Option<Info> {
    let mut buf = [0u8; 256];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: a plain getsockopt into a buffer of the stated length.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r != 0 || len < 128 {
        return None;
    }
    let u32_at = |o: usize| u32::from_ne_bytes(buf[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_ne_bytes(buf[o..o + 8].try_into().unwrap());
    Some(Info {
        ca_state: buf[1],
        rto_us: u32_at(8),
        rtt_us: u32_at(68),
        ssthresh: u32_at(76),
        cwnd: u32_at(80),
        total_retrans: u32_at(100),
        bytes_acked: u64_at(120),
    })
}

/// TcpExt counters of the current namespace.
fn tcp_ext() -> Vec<(String, u64)> {
    let text = std::fs::read_to_string("/proc/thread-self/net/netstat").unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("TcpExt:")).collect();
    let mut out = Vec::new();
    if lines.len() == 2 {
        for (k, v) in lines[0]
            .split_whitespace()
            .zip(lines[1].split_whitespace())
            .skip(1)
        {
            if matches!(
                k,
                "TCPTimeouts"
                    | "TCPSackRecovery"
                    | "TCPLossProbes"
                    | "TCPHystartTrainDetect"
                    | "TCPHystartDelayDetect"
                    | "TCPHystartTrainCwnd"
                    | "TCPHystartDelayCwnd"
                    | "TCPSpuriousRTOs"
                    | "TCPFastRetrans"
                    | "TCPLostRetransmit"
            ) {
                out.push((k.to_string(), v.parse().unwrap_or(0)));
            }
        }
    }
    out
}

/// A TCP connection whose controller is `cc` from the start. Set after `connect` on a socket
/// that opened with another default (this machine's is bbr), the kernel would keep the
/// internal pacing BBR asked for (`sk_pacing_status`), and Reno or CUBIC would run paced.
fn connect_with(cc: &str, to: SocketAddr) -> TcpStream {
    use std::os::fd::FromRawFd;
    let SocketAddr::V4(v4) = to else {
        panic!("IPv4 only")
    };
    // SAFETY: plain socket calls on a descriptor this function owns until it is wrapped.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0, "socket");
        let r = libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr().cast(),
            cc.len() as libc::socklen_t,
        );
        assert_eq!(r, 0, "TCP_CONGESTION {cc}");
        let sa = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: v4.port().to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes(v4.ip().octets()),
            },
            sin_zero: [0; 8],
        };
        let r = libc::connect(
            fd,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(r, 0, "connect: {}", std::io::Error::last_os_error());
        TcpStream::from_raw_fd(fd)
    }
}

fn main() {
    let a = args();
    assert!(
        sys::is_root(),
        "needs root: network namespaces and tun devices"
    );
    let spec = NetSpec {
        tag: format!("k{}", std::process::id() % 100_000),
        nodes: vec!["s".into(), "r".into()],
        links: vec![(0, 1, true)],
        mtu: 1500,
    };
    let mut net = Network::build(&spec).expect("build the namespaces");
    for ns in &net.nodes {
        ns.sysctls(&[("net.ipv4.tcp_no_metrics_save", "1")])
            .expect("sysctl");
    }
    let (ta, tb) = net.tuns.pop().unwrap();
    let q = |limit| {
        QueueConfig::DropTail(DropTailConfig {
            limit,
            ..DropTailConfig::default()
        })
    };
    let dir = |limit| DirConfig {
        bandwidth_bps: a.bw,
        delay: Duration::from_millis(a.delay_ms),
        queue: q(limit),
        loss: None,
        arrival_jitter: Duration::ZERO,
    };
    let emu = Emulator::start(Config {
        epoch_ns: sys::monotonic_ns(),
        nodes: net.addrs.clone(),
        links: vec![LinkSpec {
            name: "bottleneck".into(),
            a: Endpoint { node: 0, tun: ta },
            b: Endpoint { node: 1, tun: tb },
            forward: dir(a.limit),
            reverse: Some(dir(100_000)),
        }],
        updates: Vec::new(),
        seed: 1,
        classifier: None,
        realtime: Realtime::default(),
        capture: a.capture.is_some(),
    })
    .expect("start the emulator");

    let to = SocketAddr::new(net.addrs[1].into(), 5201);
    let secs = a.secs;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let rx = net.nodes[1]
        .spawn("rx", move || -> u64 {
            let _ = sys::set_fifo(30);
            let l = TcpListener::bind(to).expect("listen");
            ready_tx.send(()).unwrap();
            let (mut s, _) = l.accept().expect("accept");
            let mut buf = vec![0u8; 1 << 16];
            let mut n = 0u64;
            while let Ok(k) = s.read(&mut buf) {
                if k == 0 {
                    break;
                }
                n += k as u64;
            }
            n
        })
        .expect("receiver thread");
    ready_rx.recv().unwrap();
    let cc = a.cc.clone();
    let tx = net.nodes[0]
        .spawn("tx", move || -> SenderOutput {
            let _ = sys::set_fifo(30);
            let s = connect_with(&cc, to);
            let fd = s.as_raw_fd();
            let mut name = [0u8; 16];
            let mut len = name.len() as libc::socklen_t;
            // SAFETY: getsockopt into a buffer of the stated length.
            let r = unsafe {
                libc::getsockopt(
                    fd,
                    libc::IPPROTO_TCP,
                    libc::TCP_CONGESTION,
                    name.as_mut_ptr().cast(),
                    &mut len,
                )
            };
            let got = String::from_utf8_lossy(&name[..len as usize]);
            assert!(
                r == 0 && got.trim_end_matches('\0') == cc,
                "the socket runs {got}, not {cc}"
            );
            let start = sys::monotonic_ns();
            let end = start + (secs * 1e9) as u64;
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (s2, stop2) = (s.try_clone().unwrap(), stop.clone());
            let writer = std::thread::spawn(move || {
                let mut s2 = s2;
                let buf = vec![0u8; 1 << 16];
                while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
                    if s2.write_all(&buf).is_err() {
                        break;
                    }
                }
            });
            let mut samples = Vec::new();
            let mut next = start;
            while sys::monotonic_ns() < end {
                while sys::monotonic_ns() < next {
                    std::thread::sleep(Duration::from_micros(200));
                }
                if let Some(i) = tcp_info(fd) {
                    samples.push(((sys::monotonic_ns() - start) as f64 * 1e-9, i));
                }
                next += 10_000_000;
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = s.shutdown(std::net::Shutdown::Both);
            let _ = writer.join();
            (samples, tcp_ext())
        })
        .expect("sender thread");
    let (samples, ext) = tx.join().unwrap().expect("sender");
    let received = rx.join().unwrap().expect("receiver");
    let report = emu.stop().expect("emulator");
    let mut f = std::fs::File::create(&a.out).expect("output");
    writeln!(
        f,
        "t,cwnd,ssthresh,srtt,rto,ca_state,total_retrans,bytes_acked"
    )
    .unwrap();
    for (t, i) in &samples {
        writeln!(
            f,
            "{t:.4},{},{},{:.6},{:.6},{},{},{}",
            i.cwnd,
            i.ssthresh.min(0x7fff_ffff),
            f64::from(i.rtt_us) * 1e-6,
            f64::from(i.rto_us) * 1e-6,
            i.ca_state,
            i.total_retrans,
            i.bytes_acked
        )
        .unwrap();
    }
    let l = &report.lateness;
    let ext: Vec<String> = ext.iter().map(|(k, v)| format!("{k}={v}")).collect();
    writeln!(
        f,
        "# {} received={received} lateness_p50_us={:.1} lateness_p99_us={:.1} lateness_max_us={:.1} drops={}",
        ext.join(" "),
        l.p50_ns as f64 / 1e3,
        l.p99_ns as f64 / 1e3,
        l.max_ns as f64 / 1e3,
        report.dirs.first().map_or(0, |d| d.dropped_queue),
    )
    .unwrap();
    if let (Some(path), Some(cap)) = (&a.capture, &report.capture) {
        // One line per event: time (s since the emulator's epoch), simplex link (0 data, 1
        // ACKs), event (+ - r d), IP size.
        let mut f = std::fs::File::create(path).expect("capture file");
        for e in &cap.events {
            let ev = match e.event {
                netemu::model::Event::Enqueue => "+",
                netemu::model::Event::Dequeue => "-",
                netemu::model::Event::Receive => "r",
                netemu::model::Event::Drop(_) => "d",
            };
            let size = cap.packets.get(e.uid as usize).map_or(0, |p| p.size);
            writeln!(f, "{:.6} {} {ev} {size}", e.time.as_secs_f64(), e.simplex).unwrap();
        }
    }
    drop(net);
}
