//! The system calls the emulator needs and `std` does not offer: tun devices, network
//! namespaces, real-time scheduling, memory locking, a nanosecond wait on several descriptors,
//! and the parent-death signal of the processes it starts. Linux only.
//!
//! This is the only module with `unsafe` code; every block is one libc call on values this
//! module owns and sizes.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// `CLOCK_MONOTONIC` in nanoseconds: the clock of every process and namespace on the host
/// (`tfrc-udp` stamps its packets with it too).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags (the rest of the union is
/// padding here).
#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// The longest interface name Linux accepts (IFNAMSIZ less the terminating NUL).
pub const MAX_IFNAME: usize = libc::IFNAMSIZ - 1;

/// Create a layer-3 tun device `name` (no packet-information prefix) in the calling thread's
/// network namespace; non-blocking. The device exists while the descriptor is open (it is not
/// made persistent), so a process that dies leaves none behind.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() > MAX_IFNAME || name.contains(['/', ' ', '\0']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("tun device name {name:?}: 1 to {MAX_IFNAME} characters, no '/' or space"),
        ));
    }
    let path = CString::new("/dev/net/tun").map_err(io::Error::other)?;
    // SAFETY: `path` is a NUL-terminated string; the flags are plain integers.
    let fd = check(unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    })?;
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    for (d, s) in req.name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: TUNSETIFF reads an ifreq; `req` is one, alive for the call.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut IfReq) })?;
    Ok(fd)
}

/// A new network namespace, held only by the returned descriptor: made by a short-lived
/// thread (`unshare` moves only that thread), so the caller stays where it is. No name is
/// bound to it under `/run/netns`, so it vanishes with the last descriptor or process that
/// refers to it, however this process ends.
pub fn new_netns() -> io::Result<OwnedFd> {
    std::thread::Builder::new()
        .name("netemu-unshare".into())
        .spawn(|| -> io::Result<OwnedFd> {
            // SAFETY: CLONE_NEWNET only moves this thread, which exits right after.
            check(unsafe { libc::unshare(libc::CLONE_NEWNET) })?;
            let path = CString::new("/proc/thread-self/ns/net").map_err(io::Error::other)?;
            // SAFETY: `path` is NUL-terminated.
            let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })?;
            // SAFETY: just opened, owned by nothing else.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        })?
        .join()
        .map_err(|_| io::Error::other("the namespace thread panicked"))?
}

/// The calling thread's network namespace, as a descriptor (to come back to it).
pub fn current_netns() -> io::Result<OwnedFd> {
    let path = CString::new("/proc/thread-self/ns/net").map_err(io::Error::other)?;
    // SAFETY: `path` is NUL-terminated.
    let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })?;
    // SAFETY: just opened, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Move the calling thread into the network namespace `ns` (a descriptor from [`new_netns`]).
/// Safe to call between `fork` and `exec` (one system call, no allocation).
pub fn enter_netns(ns: RawFd) -> io::Result<()> {
    // SAFETY: setns takes a descriptor and a flag; a bad descriptor is an error, not UB.
    check(unsafe { libc::setns(ns, libc::CLONE_NEWNET) }).map(|_| ())
}

/// Ask the kernel to kill the calling process with SIGKILL when the thread that created it
/// ends, so that a killed run leaves no process behind. For `pre_exec` (one system call).
pub fn die_with_parent() -> io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number.
    check(unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    })
    .map(|_| ())
}

/// The calling thread's kernel id.
pub fn gettid() -> i32 {
    // SAFETY: no arguments.
    unsafe { libc::gettid() }
}

/// Run the calling thread at SCHED_FIFO `priority` (1–99). Fails without CAP_SYS_NICE.
pub fn set_fifo(priority: i32) -> io::Result<()> {
    let p = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `p` is a valid sched_param; 0 is the calling thread.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) }).map(|_| ())
}

/// Set the calling thread's nice value (negative raises its priority; needs CAP_SYS_NICE).
pub fn set_nice(nice: i32) -> io::Result<()> {
    // SAFETY: PRIO_PROCESS with a thread id sets that thread's nice value.
    check(unsafe { libc::setpriority(libc::PRIO_PROCESS, gettid() as libc::id_t, nice) })
        .map(|_| ())
}

/// Lock the process's pages, present and future, as they are touched (MCL_ONFAULT: no
/// pre-faulting of every thread stack), so the emulator's buffers are never paged out.
pub fn lock_memory() -> io::Result<()> {
    // SAFETY: flags only.
    check(unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE | libc::MCL_ONFAULT) })
        .map(|_| ())
}

/// Undo [`lock_memory`].
pub fn unlock_memory() {
    // SAFETY: no arguments.
    unsafe {
        libc::munlockall();
    }
}

/// Ask for timer wake-ups within `ns` of the deadline (the default slack is 50 µs).
pub fn set_timer_slack(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

/// Wait until one of `fds` is readable or `timeout` passed (`None`: no limit). Returns the
/// readable flags, one per descriptor. EINTR counts as a timeout.
pub fn poll_readable(
    fds: &[RawFd],
    timeout: Option<Duration>,
    ready: &mut Vec<bool>,
) -> io::Result<()> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs() as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `p` holds `p.len()` pollfds; `tsp` is null or a live timespec; no signal mask.
    let rc = unsafe {
        libc::ppoll(
            p.as_mut_ptr(),
            p.len() as libc::nfds_t,
            tsp,
            std::ptr::null(),
        )
    };
    ready.clear();
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            ready.resize(fds.len(), false);
            return Ok(());
        }
        return Err(e);
    }
    ready.extend(
        p.iter()
            .map(|x| x.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0),
    );
    Ok(())
}

/// Read one packet from a non-blocking descriptor; `Ok(None)` when there is none.
pub fn read_packet(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: `buf` is writable for `buf.len()` bytes.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(n as usize))
}

/// Write one packet to a descriptor.
pub fn write_packet(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<()> {
    // SAFETY: `buf` is readable for `buf.len()` bytes.
    let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// An eventfd: a descriptor another thread can make readable to wake a `ppoll`.
pub struct EventFd(OwnedFd);

impl EventFd {
    /// A new, non-blocking eventfd.
    pub fn new() -> io::Result<EventFd> {
        // SAFETY: flags only.
        let fd = check(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
        // SAFETY: just created, owned by nothing else.
        Ok(EventFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Make it readable.
    pub fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64.
        unsafe {
            libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8);
        }
    }

    /// The descriptor, for `ppoll`.
    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Whether this process may create network namespaces and tun devices (CAP_NET_ADMIN and
/// CAP_SYS_ADMIN, in practice: root).
pub fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

/// Send `signal` to process `pid`.
pub fn kill(pid: i32, signal: i32) -> io::Result<()> {
    // SAFETY: kill takes two integers.
    check(unsafe { libc::kill(pid, signal) }).map(|_| ())
}
