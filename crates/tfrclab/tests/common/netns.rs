//! Network namespaces, spoofed datagrams and process watching for the real-network attack
//! tests (`udp_attack_netns.rs`, `udp_flood_netns.rs`). Needs root and iproute2.

use std::fs::File;
use std::net::SocketAddrV4;
use std::net::UdpSocket;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tfrc_udp::frame::{self, Hello, Kind, Mode};

/// A network namespace of this test's own, with its loopback up; deleted on drop (after
/// killing what still runs in it, all started by this test).
pub struct Netns(pub String);

impl Netns {
    pub fn new(tag: &str) -> Netns {
        let name = format!("tfrcatk{tag}{}", std::process::id());
        must(Command::new("ip").args(["netns", "add", &name]));
        let ns = Netns(name);
        must(Command::new("ip").args(["netns", "exec", &ns.0, "ip", "link", "set", "lo", "up"]));
        ns
    }

    /// `tfrclab ARGS` inside the namespace (`ip netns exec` execs it: the child is tfrclab).
    pub fn tfrclab(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0, env!("CARGO_BIN_EXE_tfrclab")])
            .args(args);
        c
    }

    /// A thread inside the namespace: sockets it creates live there.
    pub fn spawn<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> std::thread::JoinHandle<T> {
        let path = format!("/run/netns/{}", self.0);
        std::thread::spawn(move || {
            let fd = File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            // SAFETY: setns on a valid namespace descriptor changes this thread's network
            // namespace only.
            let rc = unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
            f()
        })
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if let Ok(o) = Command::new("ip").args(["netns", "pids", &self.0]).output() {
            for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-9", pid]).status();
            }
        }
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

pub fn must(c: &mut Command) {
    let o = c.output().unwrap_or_else(|e| {
        panic!("{c:?}: {e}; this suite needs root (namespaces, raw sockets) and iproute2")
    });
    assert!(
        o.status.success(),
        "{c:?} failed ({}); this suite needs root (namespaces, raw sockets) and iproute2",
        String::from_utf8_lossy(&o.stderr).trim()
    );
}

pub fn keygen(dir: &std::path::Path, name: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_tfrclab"))
        .args(["keygen", "--out"])
        .arg(dir.join(name))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Peak resident memory (KiB) and CPU time (user + system, clock ticks) of a process,
/// sampled every 20 ms until it exits or the watch is read.
pub struct Hwm {
    peak: Arc<AtomicU64>,
    cpu: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Hwm {
    pub fn watch(pid: u32) -> Hwm {
        let peak = Arc::new(AtomicU64::new(0));
        let cpu = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, c, s) = (peak.clone(), cpu.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                let Ok(t) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
                    break;
                };
                if let Some(kib) = t
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                {
                    p.fetch_max(kib, Ordering::SeqCst);
                }
                if let Some(ticks) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|st| cpu_ticks(&st))
                {
                    c.fetch_max(ticks, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Hwm {
            peak,
            cpu,
            stop,
            thread: Some(thread),
        }
    }

    /// Stop watching: (peak resident KiB, CPU seconds last seen).
    pub fn finish(mut self) -> (u64, f64) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        (
            self.peak.load(Ordering::SeqCst),
            self.cpu.load(Ordering::SeqCst) as f64 / hz,
        )
    }

    pub fn peak_kib(self) -> u64 {
        self.finish().0
    }
}

/// utime + stime of a `/proc/PID/stat` line (fields 14 and 15; the command name, field 2,
/// may hold spaces, so count from its closing parenthesis).
fn cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// A receiver process in `ns` on 127.0.0.1:7000 with the Noise key `key` and `extra`
/// arguments, serving one session that carries data; returned once it answers.
pub fn receiver(ns: &Netns, key: &std::path::Path, extra: &[&str]) -> (Child, Hwm) {
    let child = ns
        .tfrclab(&[
            "recv",
            "--listen",
            "127.0.0.1:7000",
            "--json",
            "--quiet",
            "--sessions",
            "1",
            "--idle-timeout",
            "3",
            "--key",
            key.to_str().unwrap(),
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let hwm = Hwm::watch(child.id());
    // The receiver is listening once its port answers a HELLO with a RETRY.
    let ready = ns
        .spawn(|| {
            let s = UdpSocket::bind("127.0.0.1:0").unwrap();
            s.set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
            let mut buf = [0u8; 2048];
            for _ in 0..100 {
                let _ = s.send_to(&hello(1, Mode::Plain, &[]), "127.0.0.1:7000");
                if s.recv_from(&mut buf).is_ok() {
                    return true;
                }
            }
            false
        })
        .join()
        .unwrap();
    assert!(ready, "the receiver did not start");
    (child, hwm)
}

/// The receiver's JSON summary, once it exited with success.
pub fn finish(child: Child) -> serde_json::Value {
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "recv: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A first HELLO of `session` asking for `mode`, echoing `token` (padded to 1200 bytes by
/// the encoder, as a sender's).
pub fn hello(session: u64, mode: Mode, token: &[u8]) -> Vec<u8> {
    let mut d = frame::header(Kind::Hello, session).to_vec();
    d.extend_from_slice(
        &frame::encode_hello(&Hello {
            mode,
            profile: tfrc::ProfileKind::Rfc5348,
            segment_size: 1000,
            clock_tag: 0,
            variants: Vec::new(),
            token: token.to_vec(),
            noise: Vec::new(),
            ecn: false,
        })
        .unwrap(),
    );
    d
}

/// A raw IPv4 socket (the caller builds the IP header, so it chooses the source address).
pub fn raw_socket() -> OwnedFd {
    // SAFETY: plain socket(2) call; the descriptor is owned below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW) };
    assert!(
        fd >= 0,
        "raw socket: {} (needs root)",
        std::io::Error::last_os_error()
    );
    // SAFETY: `fd` is a fresh descriptor owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Send `payload` as a UDP datagram from `src` (spoofed) to `dst` through a raw socket; the
/// kernel fills in the IP checksum and id. Returns whether the kernel took it.
pub fn raw_udp(fd: &OwnedFd, src: SocketAddrV4, dst: SocketAddrV4, payload: &[u8]) -> bool {
    let total = 20 + 8 + payload.len();
    let mut p = Vec::with_capacity(total);
    p.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0x40,
        0,
        64,
        17,
        0,
        0,
    ]);
    p.extend_from_slice(&src.ip().octets());
    p.extend_from_slice(&dst.ip().octets());
    let ulen = 8 + payload.len();
    p.extend_from_slice(&src.port().to_be_bytes());
    p.extend_from_slice(&dst.port().to_be_bytes());
    p.extend_from_slice(&[(ulen >> 8) as u8, ulen as u8, 0, 0]);
    p.extend_from_slice(payload);
    let sa = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: dst.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(dst.ip().octets()),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `p` and `sa` are live for the call and their lengths are given.
    let n = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            p.as_ptr().cast(),
            p.len(),
            0,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    n == p.len() as isize
}
