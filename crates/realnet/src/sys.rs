//! The socket options the real flows need and `std` does not offer: the kernel's TCP
//! congestion control, MSS, window clamp and state (`TCP_INFO`). Linux only.
//!
//! This is the only module with `unsafe` code; every block is one libc call on values this
//! module owns and sizes.

#![allow(unsafe_code)]

use std::io;
use std::mem::size_of;
use std::os::fd::RawFd;

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn set_int(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: a c_int option value of the size given.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
}

/// `TCP_CONGESTION`: the congestion control `name` for this socket.
pub fn set_congestion(fd: RawFd, name: &str) -> io::Result<()> {
    // SAFETY: the bytes of `name`, of the length given.
    check(unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    })
}

/// The timestamp option as Linux pads it (10 bytes + 2 NOPs).
pub const TCP_TS_OPTION: u32 = 12;

/// `TCP_MAXSEG` (before connecting) for full segments of `payload` bytes.
///
/// The kernel clamps the MSS to the value set and then subtracts the options every segment
/// carries (`tcp_mtu_to_mss`: the header length beyond 20 bytes, 12 with timestamps), so
/// the value set is the payload plus the timestamp option: set to the payload itself, the
/// segments came out 12 bytes short (1488 bytes on the wire for 1500-byte simulated ones,
/// seen in the emulator's capture).
pub fn set_mss(fd: RawFd, payload: u32) -> io::Result<()> {
    let maxseg = payload + TCP_TS_OPTION;
    set_int(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_MAXSEG,
        maxseg as libc::c_int,
    )
}

/// `TCP_WINDOW_CLAMP`: the largest window the receiver advertises, bytes.
pub fn set_window_clamp(fd: RawFd, bytes: u32) -> io::Result<()> {
    set_int(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_WINDOW_CLAMP,
        bytes.min(i32::MAX as u32) as libc::c_int,
    )
}

/// `TCP_NODELAY`: no Nagle delay on the sender's small writes.
pub fn set_nodelay(fd: RawFd) -> io::Result<()> {
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)
}

/// What `TCP_INFO` says, in the fields the time series keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpInfo {
    /// `tcpi_ca_state`: 0 open, 1 disorder, 2 CWR, 3 recovery, 4 loss.
    pub ca_state: u8,
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Slow-start threshold, segments (`u32::MAX`-ish while infinite).
    pub ssthresh: u32,
    /// Smoothed RTT, µs.
    pub rtt_us: u32,
    /// RTT variance, µs.
    pub rttvar_us: u32,
    /// Segments sent but not acknowledged.
    pub unacked: u32,
    /// Segments the kernel considers lost.
    pub lost: u32,
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    /// The sender's MSS.
    pub snd_mss: u32,
}

/// `TCP_INFO` of a TCP socket.
pub fn tcp_info(fd: RawFd) -> io::Result<TcpInfo> {
    // SAFETY: an all-zero tcp_info is a valid value of the plain C struct.
    let mut i: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `i` is writable for `len` bytes; the kernel writes at most that.
    check(unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut i as *mut libc::tcp_info).cast(),
            &mut len,
        )
    })?;
    Ok(TcpInfo {
        ca_state: i.tcpi_ca_state,
        cwnd: i.tcpi_snd_cwnd,
        ssthresh: i.tcpi_snd_ssthresh,
        rtt_us: i.tcpi_rtt,
        rttvar_us: i.tcpi_rttvar,
        unacked: i.tcpi_unacked,
        lost: i.tcpi_lost,
        total_retrans: i.tcpi_total_retrans,
        snd_mss: i.tcpi_snd_mss,
    })
}

/// A new, unconnected IPv4 TCP socket (so that options can be set before the handshake).
pub fn tcp_socket() -> io::Result<std::net::TcpStream> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain integer arguments.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new socket owned by nothing else.
    Ok(unsafe { std::net::TcpStream::from_raw_fd(fd) })
}

fn sockaddr(a: std::net::SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// Bind `fd` to `from` and connect it to `to` (blocking).
pub fn connect(
    fd: RawFd,
    from: std::net::SocketAddrV4,
    to: std::net::SocketAddrV4,
) -> io::Result<()> {
    let (f, t) = (sockaddr(from), sockaddr(to));
    let len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: `f` and `t` are valid sockaddr_in values of the length given.
    check(unsafe { libc::bind(fd, (&f as *const libc::sockaddr_in).cast(), len) })?;
    // SAFETY: as above.
    check(unsafe { libc::connect(fd, (&t as *const libc::sockaddr_in).cast(), len) })
}

/// Set the calling thread's SCHED_FIFO priority (1–99).
pub fn set_fifo(priority: i32) -> io::Result<()> {
    netemu::sys::set_fifo(priority)
}

/// For `pre_exec`: run the new process at SCHED_FIFO `priority`. One system call.
pub fn fifo_for_exec(priority: i32) -> io::Result<()> {
    let p = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `p` is a valid sched_param; 0 is the calling process.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
    use std::os::fd::AsRawFd;

    /// A full segment carries exactly the payload asked for: the kernel's own MSS after the
    /// handshake (loopback, timestamps on, as on the emulated links) equals it.
    #[test]
    fn set_mss_gives_segments_of_the_payload_asked_for() {
        let l = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).unwrap();
        let std::net::SocketAddr::V4(to) = l.local_addr().unwrap() else {
            unreachable!("bound to an IPv4 address")
        };
        for payload in [1448, 1436, 536] {
            let s = tcp_socket().unwrap();
            set_mss(s.as_raw_fd(), payload).unwrap();
            connect(s.as_raw_fd(), SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), to).unwrap();
            let _peer = l.accept().unwrap();
            assert_eq!(tcp_info(s.as_raw_fd()).unwrap().snd_mss, payload);
        }
    }
}
