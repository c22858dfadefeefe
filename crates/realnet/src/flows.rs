//! The real flows' ends: kernel TCP between two threads (congestion control, MSS and window
//! clamp set on the sockets, `TCP_INFO` sampled on a timer), a paced UDP CBR sender and its
//! sink, and `tfrclab send` / `tfrclab recv` processes. Every thread and process runs inside
//! its node's namespace at the same real-time priority ([`FLOW_PRIORITY`], below the
//! emulator's), so the machine's other work cannot starve one flow more than another.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use netemu::sys::monotonic_ns;
use netemu::NetNs;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::sys;

/// SCHED_FIFO priority of every flow end (the emulator runs at 50).
pub const FLOW_PRIORITY: i32 = 30;

/// Give the calling thread the flows' priority; a refusal is returned, not fatal.
fn prioritise() -> Option<String> {
    sys::set_fifo(FLOW_PRIORITY).err().map(|e| e.to_string())
}

/// One `TCP_INFO` sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TcpSample {
    /// Seconds since the run's time zero.
    pub time_s: f64,
    /// The kernel's state.
    pub cwnd: u32,
    /// Slow-start threshold, segments.
    pub ssthresh: u32,
    /// Smoothed RTT, seconds.
    pub rtt_s: f64,
    /// RTT variance, seconds.
    pub rttvar_s: f64,
    /// Segments in flight.
    pub unacked: u32,
    /// Segments considered lost.
    pub lost: u32,
    /// Retransmissions so far.
    pub total_retrans: u32,
    /// 0 open, 1 disorder, 2 CWR, 3 recovery, 4 loss.
    pub ca_state: u8,
}

/// What a TCP sender thread reports.
#[derive(Debug, Default)]
pub struct TcpSent {
    /// Bytes the application wrote.
    pub bytes: u64,
    /// `TCP_INFO` every sampling interval while the connection was open.
    pub samples: Vec<TcpSample>,
    /// Why real-time priority was refused, if it was.
    pub priority_refused: Option<String>,
}

fn secs_since(epoch: u64) -> f64 {
    monotonic_ns().saturating_sub(epoch) as f64 / 1e9
}

/// Sleep until `at` (monotonic ns) or until `stop` is set; false if stopped.
fn sleep_until(at: u64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = monotonic_ns();
        if now >= at {
            return true;
        }
        std::thread::sleep(Duration::from_nanos((at - now).min(20_000_000)));
    }
}

/// A TCP receiver on `addr:port` in `ns`: accepts one connection (its advertised window
/// clamped to `clamp` bytes) and reads it to the end, or until `stop`.
pub fn tcp_receiver(
    ns: &NetNs,
    addr: Ipv4Addr,
    port: u16,
    clamp: u32,
    stop: Arc<AtomicBool>,
) -> io::Result<JoinHandle<io::Result<io::Result<u64>>>> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let h = ns.spawn(&format!("tcp-rx-{port}"), move || -> io::Result<u64> {
        let _ = prioritise();
        let l = TcpListener::bind((addr, port));
        let l = match l {
            Ok(l) => {
                let _ = ready_tx.send(Ok(()));
                l
            }
            Err(e) => {
                let _ = ready_tx.send(Err(io::Error::new(e.kind(), e.to_string())));
                return Err(e);
            }
        };
        // The clamp on the listener is inherited by the connection it accepts.
        sys::set_window_clamp(l.as_raw_fd(), clamp)?;
        l.set_nonblocking(true)?;
        let mut conn = loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(0);
            }
            match l.accept() {
                Ok((c, _)) => break c,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Err(e) => return Err(e),
            }
        };
        conn.set_nonblocking(false)?;
        conn.set_read_timeout(Some(Duration::from_millis(100)))?;
        let mut buf = vec![0u8; 1 << 16];
        let mut total = 0u64;
        loop {
            match conn.read(&mut buf) {
                Ok(0) => return Ok(total),
                Ok(n) => total += n as u64,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(total);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    })?;
    ready_rx
        .recv()
        .map_err(|_| io::Error::other("the TCP receiver thread ended"))??;
    Ok(h)
}

/// What a TCP sender does.
#[derive(Clone, Debug)]
pub struct TcpPlan {
    /// Its node's address (the source).
    pub from: Ipv4Addr,
    /// The receiver.
    pub to: SocketAddrV4,
    /// `TCP_CONGESTION`.
    pub cc: String,
    /// The payload of a full segment (`TCP_MAXSEG` is set from it by `sys::set_mss`).
    pub mss: u32,
    /// When to connect and when to stop writing, monotonic ns.
    pub start_ns: u64,
    /// See `start_ns`.
    pub stop_ns: u64,
    /// The run's time zero (for sample times).
    pub epoch_ns: u64,
    /// `TCP_INFO` sampling interval.
    pub sample_every: Duration,
}

/// A connected TCP socket with the congestion control and MSS set before the handshake.
fn tcp_connect(p: &TcpPlan) -> io::Result<TcpStream> {
    let s = sys::tcp_socket()?;
    sys::set_congestion(s.as_raw_fd(), &p.cc)
        .map_err(|e| io::Error::new(e.kind(), format!("TCP_CONGESTION {:?}: {e}", p.cc)))?;
    sys::set_mss(s.as_raw_fd(), p.mss)?;
    sys::set_nodelay(s.as_raw_fd())?;
    sys::connect(s.as_raw_fd(), SocketAddrV4::new(p.from, 0), p.to)?;
    Ok(s)
}

/// A TCP sender in `ns`: waits for its start, connects, writes as fast as the connection
/// takes data until its stop, then closes; a second thread samples `TCP_INFO`.
pub fn tcp_sender(
    ns: &NetNs,
    p: TcpPlan,
    stop: Arc<AtomicBool>,
) -> io::Result<JoinHandle<io::Result<io::Result<TcpSent>>>> {
    ns.spawn(
        &format!("tcp-tx-{}", p.to.port()),
        move || -> io::Result<TcpSent> {
            let priority_refused = prioritise();
            if !sleep_until(p.start_ns, &stop) {
                return Ok(TcpSent::default());
            }
            let mut s = tcp_connect(&p)?;
            s.set_write_timeout(Some(Duration::from_millis(20)))?;
            // The sampler holds its own descriptor of the socket, so the socket outlives it.
            let probe = s.try_clone()?;
            let done = Arc::new(AtomicBool::new(false));
            let d = done.clone();
            let (every, epoch) = (p.sample_every, p.epoch_ns);
            let sampler = std::thread::Builder::new()
                .name("tcp-info".into())
                .spawn(move || {
                    let _ = prioritise();
                    let mut out = Vec::new();
                    let mut next = monotonic_ns();
                    while !d.load(Ordering::Relaxed) {
                        if let Ok(i) = sys::tcp_info(probe.as_raw_fd()) {
                            out.push(TcpSample {
                                time_s: secs_since(epoch),
                                cwnd: i.cwnd,
                                ssthresh: i.ssthresh,
                                rtt_s: f64::from(i.rtt_us) / 1e6,
                                rttvar_s: f64::from(i.rttvar_us) / 1e6,
                                unacked: i.unacked,
                                lost: i.lost,
                                total_retrans: i.total_retrans,
                                ca_state: i.ca_state,
                            });
                        }
                        next += every.as_nanos() as u64;
                        let never = AtomicBool::new(false);
                        sleep_until(next, &never);
                    }
                    out
                })?;
            let buf = vec![0x5au8; 1 << 16];
            let mut bytes = 0u64;
            while monotonic_ns() < p.stop_ns && !stop.load(Ordering::Relaxed) {
                match s.write(&buf) {
                    Ok(n) => bytes += n as u64,
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                        ) => {}
                    Err(e) => {
                        done.store(true, Ordering::Relaxed);
                        let _ = sampler.join();
                        return Err(e);
                    }
                }
            }
            let _ = s.flush();
            let _ = s.shutdown(std::net::Shutdown::Write);
            done.store(true, Ordering::Relaxed);
            let samples = sampler.join().unwrap_or_default();
            Ok(TcpSent {
                bytes,
                samples,
                priority_refused,
            })
        },
    )
}

/// What a CBR sender reports.
#[derive(Debug, Default)]
pub struct CbrSent {
    /// Packets sent.
    pub packets: u64,
    /// Lateness of each send against its schedule, ns.
    pub lateness_ns: Vec<u32>,
    /// Why real-time priority was refused, if it was.
    pub priority_refused: Option<String>,
}

/// What a CBR sender does.
#[derive(Clone, Debug)]
pub struct CbrPlan {
    /// Source address.
    pub from: Ipv4Addr,
    /// The sink.
    pub to: SocketAddrV4,
    /// UDP payload bytes.
    pub payload: u32,
    /// Seconds between packets (NS-2 CBR: packet size · 8 / rate).
    pub interval_s: f64,
    /// NS-2's `random_`: each interval ± half an interval.
    pub random: bool,
    /// Stop after this many.
    pub max_packets: Option<u64>,
    /// Start and stop, monotonic ns.
    pub start_ns: u64,
    /// See `start_ns`.
    pub stop_ns: u64,
    /// Seed of the interval noise.
    pub seed: u64,
}

/// A paced UDP sender in `ns`: a packet at start, then one every interval (with NS-2's
/// `random_` noise), each carrying its sequence number and send time; sleeps to 200 µs before
/// each send time and spins the rest, recording how late each send is.
pub fn cbr_sender(
    ns: &NetNs,
    p: CbrPlan,
    stop: Arc<AtomicBool>,
) -> io::Result<JoinHandle<io::Result<io::Result<CbrSent>>>> {
    ns.spawn(
        &format!("cbr-tx-{}", p.to.port()),
        move || -> io::Result<CbrSent> {
            let priority_refused = prioritise();
            let s = UdpSocket::bind(SocketAddrV4::new(p.from, 0))?;
            s.connect(p.to)?;
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(p.seed);
            let mut buf = vec![0u8; p.payload as usize];
            let mut out = CbrSent {
                priority_refused,
                ..CbrSent::default()
            };
            let mut due = p.start_ns as f64;
            loop {
                let at = due as u64;
                if at >= p.stop_ns || p.max_packets.is_some_and(|m| out.packets >= m) {
                    break;
                }
                if !sleep_until(at.saturating_sub(200_000), &stop) {
                    break;
                }
                while monotonic_ns() < at {
                    std::hint::spin_loop();
                }
                let now = monotonic_ns();
                out.lateness_ns
                    .push(u32::try_from(now - at).unwrap_or(u32::MAX));
                buf[..8].copy_from_slice(&out.packets.to_be_bytes());
                buf[8..16].copy_from_slice(&now.to_be_bytes());
                // A refused send (a full device queue) is a lost packet, as in a real host.
                let _ = s.send(&buf);
                out.packets += 1;
                let mut t = p.interval_s;
                if p.random {
                    t += p.interval_s * rng.gen_range(-0.5..0.5);
                }
                due += t * 1e9;
            }
            Ok(out)
        },
    )
}

/// A UDP sink on `addr:port` in `ns`, until `stop`; returns the datagrams received.
pub fn udp_sink(
    ns: &NetNs,
    addr: Ipv4Addr,
    port: u16,
    stop: Arc<AtomicBool>,
) -> io::Result<JoinHandle<io::Result<io::Result<u64>>>> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let h = ns.spawn(&format!("cbr-rx-{port}"), move || -> io::Result<u64> {
        let _ = prioritise();
        let s = match UdpSocket::bind((addr, port)) {
            Ok(s) => {
                let _ = ready_tx.send(Ok(()));
                s
            }
            Err(e) => {
                let _ = ready_tx.send(Err(io::Error::new(e.kind(), e.to_string())));
                return Err(e);
            }
        };
        s.set_read_timeout(Some(Duration::from_millis(100)))?;
        let mut buf = vec![0u8; 4096];
        let mut n = 0u64;
        while !stop.load(Ordering::Relaxed) {
            if s.recv(&mut buf).is_ok() {
                n += 1;
            }
        }
        Ok(n)
    })?;
    ready_rx
        .recv()
        .map_err(|_| io::Error::other("the UDP sink thread ended"))??;
    Ok(h)
}

/// Start `tfrclab ARGS` inside `ns` at the flows' real-time priority, its standard output
/// and error into `out` and `err`. It gets SIGKILL when the calling thread ends.
pub fn tfrclab(
    ns: &NetNs,
    bin: &Path,
    args: &[String],
    out: &Path,
    err: &Path,
) -> io::Result<Child> {
    let mut c = ns.command(bin);
    c.args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(out)?)
        .stderr(std::fs::File::create(err)?);
    // SAFETY: one system call (sched_setscheduler); a refusal is ignored (the run records
    // the priority the emulator got, and the sender's own lateness).
    unsafe {
        c.pre_exec(|| {
            let _ = sys::fifo_for_exec(FLOW_PRIORITY);
            Ok(())
        });
    }
    c.spawn().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot start {} {}: {e}", bin.display(), args.join(" ")),
        )
    })
}

/// The address a socket address string gives (for messages).
pub fn addr(ip: Ipv4Addr, port: u16) -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(ip, port))
}
