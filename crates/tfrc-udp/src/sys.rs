//! The socket and clock calls `std` does not offer: per-packet TTL on send (an `IP_TTL`
//! control message), the received TTL (`IP_RECVTTL`), ICMP errors (`IP_RECVERR`), a
//! nanosecond-resolution wait on several descriptors (`ppoll`), the monotonic clock, and an
//! eventfd to wake a transport thread. Linux only.
//!
//! This is the only module with `unsafe` code; every block is a single libc call on buffers
//! this module owns and sizes, or the CMSG macros over a buffer the kernel just filled.

#![allow(unsafe_code)]
// cmsghdr's field types differ between C libraries; the casts are needed on some.
#![allow(clippy::unnecessary_cast)]

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// `CLOCK_MONOTONIC` in nanoseconds. One clock for every process and network namespace of a
/// host (namespaces do not virtualise it unless a time namespace is set up), so a sender's
/// timestamp is comparable with a receiver's clock on the same host.
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

/// `CLOCK_REALTIME` in nanoseconds: the clock of the kernel's receive timestamps
/// (`SO_TIMESTAMPNS`), only used to convert them to [`monotonic_ns`].
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// Ask for hrtimer wake-ups within `ns` of the deadline for the calling thread (the default
/// slack of 50 µs is most of a packet gap at 100 Mb/s).
pub fn set_timer_slack(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

fn setsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    // SAFETY: the option value is a live c_int of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Deliver the received TTL (IPv4) or hop limit (IPv6) with every datagram.
pub fn enable_recv_ttl(sock: &UdpSocket) -> io::Result<()> {
    let fd = sock.as_raw_fd();
    if sock.local_addr()?.is_ipv4() {
        setsockopt_int(fd, libc::IPPROTO_IP, libc::IP_RECVTTL, 1)
    } else {
        setsockopt_int(fd, libc::IPPROTO_IPV6, libc::IPV6_RECVHOPLIMIT, 1)
    }
}

/// Deliver each datagram's ECN field (`IP_RECVTOS`, or `IPV6_RECVTCLASS` on an IPv6 socket):
/// the receiver counts a Congestion Experienced mark as a loss event.
pub fn enable_recv_ecn(sock: &UdpSocket) -> io::Result<()> {
    let fd = sock.as_raw_fd();
    if sock.local_addr()?.is_ipv4() {
        setsockopt_int(fd, libc::IPPROTO_IP, libc::IP_RECVTOS, 1)
    } else {
        setsockopt_int(fd, libc::IPPROTO_IPV6, libc::IPV6_RECVTCLASS, 1)
    }
}

/// The ECN codepoint ECT(0) (RFC 3168 §5), in the two low bits of the TOS / traffic class.
pub const ECT0: u8 = 0b10;
/// The ECN codepoint Congestion Experienced.
pub const CE: u8 = 0b11;

/// Send everything from this socket ECN-capable, ECT(0) (`IP_TOS` / `IPV6_TCLASS`).
pub fn set_ecn_capable(sock: &UdpSocket) -> io::Result<()> {
    let fd = sock.as_raw_fd();
    let v = libc::c_int::from(ECT0);
    if sock.local_addr()?.is_ipv4() {
        setsockopt_int(fd, libc::IPPROTO_IP, libc::IP_TOS, v)
    } else {
        setsockopt_int(fd, libc::IPPROTO_IPV6, libc::IPV6_TCLASS, v)
    }
}

/// Stamp every received datagram with the kernel's arrival time (`SO_TIMESTAMPNS`,
/// `CLOCK_REALTIME`): a receiver thread that was descheduled and reads a batch late still
/// learns when each packet arrived.
pub fn enable_rx_timestamps(sock: &UdpSocket) -> io::Result<()> {
    setsockopt_int(sock.as_raw_fd(), libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

/// Queue ICMP errors (time exceeded, unreachable) for [`recv_error`] (IPv4 only).
pub fn enable_recv_err(sock: &UdpSocket) -> io::Result<()> {
    if sock.local_addr()?.is_ipv4() {
        setsockopt_int(sock.as_raw_fd(), libc::IPPROTO_IP, libc::IP_RECVERR, 1)
    } else {
        Ok(())
    }
}

/// Raise the socket buffers to `bytes` (the forced variants work as root beyond
/// `net.core.rmem_max`; otherwise the plain ones, capped by the sysctl).
pub fn set_buffers(sock: &UdpSocket, bytes: usize) {
    let fd = sock.as_raw_fd();
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    if setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, v).is_err() {
        let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, v);
    }
    if setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, v).is_err() {
        let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, v);
    }
}

/// Set the send buffer alone to `bytes` (forced as root, else capped by `net.core.wmem_max`).
/// The kernel doubles the value for its bookkeeping and counts each datagram's whole buffer
/// (its truesize), not only its payload.
pub fn set_send_buffer(sock: &UdpSocket, bytes: usize) {
    let fd = sock.as_raw_fd();
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    if setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, v).is_err() {
        let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, v);
    }
}

/// Why the host did not take a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendFail {
    /// The socket's send buffer is full (`EAGAIN`): wait until it is writable.
    Blocked,
    /// A local queue (qdisc, device) dropped it for lack of room (`ENOBUFS`; Linux reports it
    /// to a UDP socket with `IP_RECVERR` on): local congestion.
    LocalDrop,
    /// Anything else (for example a queued ICMP error reported on this send).
    Other,
}

/// Classify a [`send_to`] error.
pub fn send_fail(e: &io::Error) -> SendFail {
    match e.raw_os_error() {
        Some(libc::EAGAIN) => SendFail::Blocked,
        Some(libc::ENOBUFS) => SendFail::LocalDrop,
        _ if e.kind() == io::ErrorKind::WouldBlock => SendFail::Blocked,
        _ => SendFail::Other,
    }
}

/// A socket address in the C layout.
struct CAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

fn to_c(addr: &SocketAddr) -> CAddr {
    // SAFETY: sockaddr_storage is plain old data; all-zero is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            size_of::<libc::sockaddr_in6>()
        }
    };
    CAddr {
        storage,
        len: len as libc::socklen_t,
    }
}

fn from_c(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match libc::c_int::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let sin: libc::sockaddr_in =
                unsafe { std::ptr::read((storage as *const libc::sockaddr_storage).cast()) };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes()),
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let sin6: libc::sockaddr_in6 =
                unsafe { std::ptr::read((storage as *const libc::sockaddr_storage).cast()) };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(sin6.sin6_addr.s6_addr),
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// Control buffer, aligned for `cmsghdr`, large enough for one int-sized message and for
/// `sock_extended_err` with its offender address.
#[repr(C, align(8))]
struct Cmsg([u8; 256]);

/// Send one datagram to `to`; with `ttl`, an `IP_TTL` (or `IPV6_HOPLIMIT`) control message
/// sets that packet's TTL alone (RFC 5348 says nothing of TTL; seed variant E5 needs it per
/// packet).
pub fn send_to(
    sock: &UdpSocket,
    buf: &[u8],
    to: &SocketAddr,
    ttl: Option<u8>,
) -> io::Result<usize> {
    let mut addr = to_c(to);
    let mut iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let mut cbuf = Cmsg([0; 256]);
    // SAFETY: msghdr is plain old data.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_name = (&mut addr.storage as *mut libc::sockaddr_storage).cast();
    msg.msg_namelen = addr.len;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if let Some(ttl) = ttl {
        let (level, kind) = if to.is_ipv4() {
            (libc::IPPROTO_IP, libc::IP_TTL)
        } else {
            (libc::IPPROTO_IPV6, libc::IPV6_HOPLIMIT)
        };
        // SAFETY: CMSG_SPACE is a pure size computation.
        let space = unsafe { libc::CMSG_SPACE(size_of::<libc::c_int>() as u32) } as usize;
        msg.msg_control = cbuf.0.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        // SAFETY: the control buffer is aligned, zeroed and `space` ≤ 256 bytes long, so
        // CMSG_FIRSTHDR returns a header inside it with room for one c_int of data.
        unsafe {
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = level;
            (*c).cmsg_type = kind;
            (*c).cmsg_len = libc::CMSG_LEN(size_of::<libc::c_int>() as u32) as _;
            std::ptr::write_unaligned(
                libc::CMSG_DATA(c).cast::<libc::c_int>(),
                libc::c_int::from(ttl),
            );
        }
    }
    // SAFETY: every pointer in `msg` refers to a live buffer of the stated length.
    let n = unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, 0) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// What arrived with a datagram.
#[derive(Clone, Copy, Debug)]
pub struct RecvMeta {
    /// Bytes copied into the buffer.
    pub len: usize,
    /// The datagram was longer than the buffer (the rest is lost).
    pub truncated: bool,
    /// Source address (`None` for an unknown family).
    pub from: Option<SocketAddr>,
    /// The IP TTL or hop limit it arrived with, when the kernel reported it.
    pub ttl: Option<u8>,
    /// The kernel's arrival time, `CLOCK_REALTIME` nanoseconds, when timestamps are on.
    pub rx_realtime_ns: Option<u64>,
    /// The ECN field it arrived with (two bits), when [`enable_recv_ecn`] is on.
    pub ecn: Option<u8>,
}

fn read_int_cmsg(c: *const libc::cmsghdr) -> Option<u8> {
    // SAFETY: the caller passes a header from CMSG_NXTHDR over a kernel-filled buffer; the
    // length check guarantees a c_int of data.
    unsafe {
        if ((*c).cmsg_len as usize) < libc::CMSG_LEN(size_of::<libc::c_int>() as u32) as usize {
            return None;
        }
        let v = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>());
        u8::try_from(v).ok()
    }
}

/// Receive one datagram without blocking (the socket must be non-blocking), with its TTL.
pub fn recv_from(sock: &UdpSocket, buf: &mut [u8]) -> io::Result<RecvMeta> {
    // SAFETY: sockaddr_storage is plain old data.
    let mut storage: libc::sockaddr_storage = unsafe { zeroed() };
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut cbuf = Cmsg([0; 256]);
    // SAFETY: msghdr is plain old data.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_name = (&mut storage as *mut libc::sockaddr_storage).cast();
    msg.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.0.as_mut_ptr().cast();
    msg.msg_controllen = cbuf.0.len() as _;
    // SAFETY: every pointer in `msg` refers to a live, writable buffer of the stated length.
    let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut ttl = None;
    let mut rx_realtime_ns = None;
    let mut ecn = None;
    // SAFETY: the kernel filled msg_control/msg_controllen; the CMSG macros stay inside it, and
    // a timespec is read only from a message long enough to hold one.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let (l, t) = ((*c).cmsg_level, (*c).cmsg_type);
            if (l == libc::IPPROTO_IP && t == libc::IP_TTL)
                || (l == libc::IPPROTO_IPV6 && t == libc::IPV6_HOPLIMIT)
            {
                ttl = read_int_cmsg(c);
            } else if l == libc::IPPROTO_IP
                && t == libc::IP_TOS
                && (*c).cmsg_len as usize >= libc::CMSG_LEN(1) as usize
            {
                // IPv4 gives the TOS byte alone (not an int).
                ecn = Some(*libc::CMSG_DATA(c) & 3);
            } else if l == libc::IPPROTO_IPV6 && t == libc::IPV6_TCLASS {
                ecn = read_int_cmsg(c).map(|v| v & 3);
            } else if l == libc::SOL_SOCKET
                && t == libc::SCM_TIMESTAMPNS
                && (*c).cmsg_len as usize
                    >= libc::CMSG_LEN(size_of::<libc::timespec>() as u32) as usize
            {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::timespec>());
                if ts.tv_sec >= 0 && ts.tv_nsec >= 0 {
                    rx_realtime_ns = Some(
                        (ts.tv_sec as u64)
                            .saturating_mul(1_000_000_000)
                            .saturating_add(ts.tv_nsec as u64),
                    );
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok(RecvMeta {
        len: n as usize,
        truncated: msg.msg_flags & libc::MSG_TRUNC != 0,
        from: from_c(&storage),
        ttl,
        rx_realtime_ns,
        ecn,
    })
}

/// An ICMP error the kernel queued for a datagram this socket sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcmpError {
    /// ICMP type (11: time exceeded).
    pub icmp_type: u8,
    /// ICMP code.
    pub icmp_code: u8,
    /// Bytes of the offending datagram's payload copied into the buffer.
    pub len: usize,
}

/// Read one queued ICMP error (`MSG_ERRQUEUE`); the buffer receives the payload of the
/// datagram that caused it. `Ok(None)` for a queued error that is not from ICMP.
pub fn recv_error(sock: &UdpSocket, buf: &mut [u8]) -> io::Result<Option<IcmpError>> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut cbuf = Cmsg([0; 256]);
    // SAFETY: msghdr is plain old data.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.0.as_mut_ptr().cast();
    msg.msg_controllen = cbuf.0.len() as _;
    // SAFETY: every pointer in `msg` refers to a live, writable buffer of the stated length.
    let n = unsafe {
        libc::recvmsg(
            sock.as_raw_fd(),
            &mut msg,
            libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = None;
    // SAFETY: as in `recv_from`; the length check guarantees a whole sock_extended_err.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::IPPROTO_IP
                && (*c).cmsg_type == libc::IP_RECVERR
                && (*c).cmsg_len as usize
                    >= libc::CMSG_LEN(size_of::<libc::sock_extended_err>() as u32) as usize
            {
                let e =
                    std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::sock_extended_err>());
                if e.ee_origin == libc::SO_EE_ORIGIN_ICMP {
                    out = Some(IcmpError {
                        icmp_type: e.ee_type,
                        icmp_code: e.ee_code,
                        len: n as usize,
                    });
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok(out)
}

/// What [`wait_rw`] saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    /// The first descriptor is readable.
    pub first: bool,
    /// The second descriptor is readable.
    pub second: bool,
    /// The first descriptor has a queued error.
    pub error: bool,
    /// The first descriptor is writable (only reported when asked for).
    pub writable: bool,
}

/// Block until one of `fds` is readable or `timeout` passes (nanosecond resolution; the
/// thread's timer slack bounds the lateness); with `writable`, also until the first descriptor
/// can take a datagram (socket backpressure: a UDP socket is writable again once half its send
/// buffer has drained).
pub fn wait_rw(fds: &[RawFd], writable: bool, timeout: Duration) -> io::Result<Ready> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .enumerate()
        .map(|(i, &fd)| libc::pollfd {
            fd,
            events: if i == 0 && writable {
                libc::POLLIN | libc::POLLOUT
            } else {
                libc::POLLIN
            },
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
    };
    // SAFETY: `p` holds `p.len()` pollfds; `ts` is a valid timespec; no signal mask.
    let rc = unsafe {
        libc::ppoll(
            p.as_mut_ptr(),
            p.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(Ready::default());
        }
        return Err(e);
    }
    let get = |i: usize, m: libc::c_short| p.get(i).is_some_and(|x| x.revents & m != 0);
    Ok(Ready {
        first: get(0, libc::POLLIN),
        second: get(1, libc::POLLIN),
        error: get(0, libc::POLLERR),
        writable: writable && get(0, libc::POLLOUT),
    })
}

/// A counter descriptor another thread writes to wake a transport thread out of [`wait_rw`].
#[derive(Debug)]
pub struct EventFd(OwnedFd);

impl EventFd {
    /// A non-blocking eventfd.
    pub fn new() -> io::Result<EventFd> {
        // SAFETY: eventfd takes no pointers; a non-negative result is a new descriptor we own.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor owned by nobody else.
        Ok(EventFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Wake the waiting thread.
    pub fn notify(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64.
        unsafe {
            libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8);
        }
    }

    /// Reset the counter after a wake-up.
    pub fn drain(&self) {
        let mut v: u64 = 0;
        // SAFETY: reads at most 8 bytes into a live u64.
        unsafe {
            libc::read(self.0.as_raw_fd(), (&mut v as *mut u64).cast(), 8);
        }
    }

    /// The descriptor, for [`wait_rw`].
    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_travels_per_packet_over_loopback() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_nonblocking(true).unwrap();
        enable_recv_ttl(&rx).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = rx.local_addr().unwrap();
        for ttl in [7u8, 200, 1] {
            send_to(&tx, b"x", &to, Some(ttl)).unwrap();
            let mut buf = [0u8; 16];
            let mut got = None;
            for _ in 0..1000 {
                match recv_from(&rx, &mut buf) {
                    Ok(m) => {
                        got = Some(m);
                        break;
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(1)),
                }
            }
            let m = got.expect("datagram arrives");
            // Loopback does not route, so the TTL arrives as sent.
            assert_eq!(m.ttl, Some(ttl));
            assert_eq!(m.len, 1);
            assert_eq!(m.from, Some(tx.local_addr().unwrap()));
        }
    }

    #[test]
    fn wait_times_out_and_wakes() {
        let e = EventFd::new().unwrap();
        let t0 = monotonic_ns();
        let r = wait_rw(&[e.fd()], false, Duration::from_millis(2)).unwrap();
        assert!(!r.first);
        assert!(monotonic_ns() - t0 >= 2_000_000);
        e.notify();
        let r = wait_rw(&[e.fd()], false, Duration::from_secs(5)).unwrap();
        assert!(r.first);
        e.drain();
    }
}
