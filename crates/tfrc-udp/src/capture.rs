//! A capture hook (`tfrclab send --pcap`, `recv --pcap`): every datagram a [`crate::Sender`],
//! `async_sender::AsyncSender` (feature `tokio`) or [`crate::Receiver`] hands to its socket or reads
//! from it, with what a packet capture on the host would show of it (the real addresses and
//! ports, TTL, ECN field, the time), given to a [`CaptureSink`].
//!
//! Off by default (`capture: None` in the options): then each socket call costs one branch.
//! This crate only reports the datagrams; writing them is the sink's (the CLI gives `lab`'s
//! pcap writer, `docs/wireshark.md`). An application that drives the socket-free engines
//! ([`crate::SenderEngine`], [`crate::ReceiverEngine`]) over its own socket can feed the same
//! sink through [`Capture::record`].
//!
//! What it is not: a capture below the socket. A datagram the kernel refused (`EAGAIN`,
//! `ENOBUFS`) is not recorded (it was never sent); one the kernel accepted and a queue on the
//! host then dropped is. The local address of a socket bound to the unspecified address is
//! the one the host's routing table picks for the peer (a `connect` of a scratch socket), which
//! is what the kernel would use unless a policy route says otherwise.

use std::collections::HashMap;
use std::fmt;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};

use crate::sys;

/// One datagram as a capture on the host shows it.
#[derive(Clone, Copy, Debug)]
pub struct Captured<'a> {
    /// When it was sent, or when the kernel received it: `CLOCK_REALTIME` nanoseconds since
    /// 1970 (a capture's clock).
    pub realtime_ns: u64,
    /// Source address and port.
    pub src: SocketAddr,
    /// Destination address and port.
    pub dst: SocketAddr,
    /// IP TTL or hop limit (outgoing: the one it was sent with; incoming: as it arrived, or
    /// 64 when the kernel did not report it).
    pub ttl: u8,
    /// The two ECN bits of the IP header (incoming: as they arrived, when reported).
    pub ecn: u8,
    /// The UDP payload: the transport's frame.
    pub datagram: &'a [u8],
}

/// Where captured datagrams go.
pub trait CaptureSink: Send {
    /// One datagram, in the order the socket saw them.
    fn datagram(&mut self, d: &Captured<'_>);
}

/// A shared handle on a [`CaptureSink`], for the options of a sender or receiver (cloning it
/// shares the sink).
#[derive(Clone)]
pub struct Capture(Arc<Mutex<dyn CaptureSink>>);

impl Capture {
    /// A handle on `sink`; the caller keeps its own clone of the `Arc` to read or close the
    /// sink once the sender or receiver has finished.
    pub fn new<S: CaptureSink + 'static>(sink: Arc<Mutex<S>>) -> Capture {
        Capture(sink)
    }

    /// Give the sink one datagram.
    pub fn record(&self, d: &Captured<'_>) {
        // A sink that panicked once stays usable: captures are best effort.
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        s.datagram(d);
    }
}

impl fmt::Debug for Capture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Capture")
    }
}

/// Peers whose local address is remembered, at most (a receiver bound to the unspecified
/// address under a flood of sources looks further ones up each time).
const MAX_ROUTES: usize = 4096;

/// The socket end of a capture: the socket's own address, and the sink.
pub(crate) struct Tap {
    capture: Capture,
    local: SocketAddr,
    /// The socket's default TTL (outgoing datagrams without their own).
    ttl: u8,
    /// The ECN bits outgoing datagrams carry (ECT(0) once a sender set it on the socket).
    pub(crate) ecn: u8,
    /// Local address by peer, when the socket is bound to the unspecified address.
    routes: HashMap<SocketAddr, SocketAddr>,
}

impl Tap {
    /// A tap on `sock` when the options asked for a capture.
    pub(crate) fn new(capture: Option<Capture>, sock: &UdpSocket) -> Option<Tap> {
        let capture = capture?;
        let local = sock.local_addr().ok()?;
        // IPv4: what the kernel puts in the header (the sysctl default unless set); IPv6's
        // default hop limit is not exposed by std and is 64 on Linux unless changed.
        let ttl = sock
            .ttl()
            .ok()
            .and_then(|t| u8::try_from(t).ok())
            .unwrap_or(64);
        Some(Tap {
            capture,
            local,
            ttl,
            ecn: 0,
            routes: HashMap::new(),
        })
    }

    /// This end's address as a datagram to or from `peer` carries it.
    fn local_for(&mut self, peer: SocketAddr) -> SocketAddr {
        if !self.local.ip().is_unspecified() {
            return self.local;
        }
        if let Some(a) = self.routes.get(&peer) {
            return *a;
        }
        let ip = route_source(self.local, peer).unwrap_or(self.local.ip());
        let a = SocketAddr::new(ip, self.local.port());
        if self.routes.len() < MAX_ROUTES {
            self.routes.insert(peer, a);
        }
        a
    }

    /// A datagram the socket accepted for `to`.
    pub(crate) fn sent(&mut self, to: SocketAddr, datagram: &[u8], ttl: Option<u8>) {
        let src = self.local_for(to);
        self.capture.record(&Captured {
            realtime_ns: sys::realtime_ns(),
            src,
            dst: to,
            ttl: ttl.unwrap_or(self.ttl),
            ecn: self.ecn,
            datagram,
        });
    }

    /// A datagram read from the socket.
    pub(crate) fn received(&mut self, m: &sys::RecvMeta, datagram: &[u8]) {
        let Some(from) = m.from else { return };
        let dst = self.local_for(from);
        self.capture.record(&Captured {
            realtime_ns: m.rx_realtime_ns.unwrap_or_else(sys::realtime_ns),
            src: from,
            dst,
            ttl: m.ttl.unwrap_or(64),
            ecn: m.ecn.unwrap_or(0),
            datagram,
        });
    }
}

/// The source address the routing table picks for `peer` (no packet is sent: a UDP
/// `connect` only looks the route up).
fn route_source(local: SocketAddr, peer: SocketAddr) -> Option<std::net::IpAddr> {
    let s = UdpSocket::bind(SocketAddr::new(local.ip(), 0)).ok()?;
    s.connect(peer).ok()?;
    Some(s.local_addr().ok()?.ip())
}
