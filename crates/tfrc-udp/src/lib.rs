//! # tfrc-udp — TFRC (RFC 5348) over real UDP sockets
//!
//! Drives the sans-IO core (`tfrc`) over a UDP socket, the way the simulator drives it over
//! virtual links. Linux only (it reads the received TTL and ICMP errors through control
//! messages).
//!
//! - [`Sender`]: a dedicated thread paces data packets at the core's send times with a
//!   monotonic clock and a sleep-then-spin wait (tokio's 1 ms timer is too coarse for the
//!   80 µs gaps of 100 Mb/s), processes feedback, sets each packet's IP TTL from
//!   `tfrc::Sender::ttl()` (E5), and closes with a FIN that the receiver answers with its
//!   report. The application feeds it messages ([`Sender::send`]) or lets it generate data
//!   ([`Source::Generated`]). It keeps its host queue small ([`HostQueue`]): a datagram the
//!   host refuses is given back to the core, not counted as sent, and a local drop is a
//!   congestion signal (`docs/real-network.md`, "Local congestion").
//! - [`SenderEngine`]: the sender without a socket (datagrams in, datagrams out, time given
//!   by the caller), for applications with their own socket and event loop; [`Sender`] and,
//!   with the `tokio` feature, `async_sender::AsyncSender` drive it.
//! - [`Receiver`]: a thread that runs the receiver side ([`ReceiverEngine`], socket-free, the
//!   path the fuzz target drives) for many concurrent sessions in a bounded table, answers
//!   with feedback, reads each packet's TTL (`IP_RECVTTL`) to report hops, and hands delivered
//!   messages to the application. A sender proves its address with a stateless retry token
//!   before the receiver keeps state or answers with more than it received.
//! - Protection ([`Protect`]): Noise IK (the `snow` crate) with the receiver's static key
//!   pinned by the sender, then ChaCha20-Poly1305 on data, feedback, FIN and FIN_ACK;
//!   tampered, truncated and replayed datagrams are dropped and counted. Seed 000's
//!   RSA-OAEP exchange (E6) stays available as an explicitly unauthenticated mode.
//!
//! - Capture ([`capture`]): off by default; with a sink in the options, every datagram the
//!   sender or receiver puts on or reads from its socket, with its addresses, TTL, ECN field
//!   and time (`tfrclab send --pcap`, `recv --pcap`).
//!
//! The framing around `tfrc::wire` is in [`frame`]; `docs/real-network.md` has the tables and
//! the measured figures, `docs/security.md` the threat model.
//!
//! ```no_run
//! use tfrc_udp::{Receiver, ReceiverOptions, Sender, SenderOptions};
//! let rx = Receiver::bind("127.0.0.1:0".parse()?, ReceiverOptions::default())?;
//! let tx = Sender::connect(rx.local_addr(), SenderOptions::default())?;
//! tx.send(b"hello".to_vec())?;
//! let report = tx.close()?;
//! let msg = rx.recv().expect("delivered");
//! assert_eq!(msg.payload, b"hello");
//! # let _ = report;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod admission;
#[cfg(feature = "tokio")]
pub mod async_sender;
pub mod capture;
pub mod frame;
#[doc(hidden)]
pub mod fuzzing;
pub mod inbox;
pub mod pacing;
pub mod receiver;
pub mod sender;
pub mod stats;
mod sys;

use std::time::Duration;

pub use receiver::{Delivered, Receiver, ReceiverEngine, ReceiverOptions};
pub use sender::engine;
pub use sender::engine::{EngineEvent, SenderEngine, Transmit};
pub use sender::{
    HostQueue, Protect, RateWatch, SendError, Sender, SenderOptions, SenderReport, SenderStats,
    Source,
};
pub use stats::{DelaySummary, Drops, FlowSummary, ReceiverReport};

/// Largest segment (payload) size a session may use: one datagram, less the frame, TFRC and
/// AEAD headers, within IPv4's 65,507-byte UDP payload.
pub const MAX_SEGMENT: usize = 65_507 - frame::HEADER_LEN - tfrc::wire::DATA_HEADER_LEN - 24;

/// Receive buffer: any datagram fits, so a longer one is reported as truncated by the kernel.
pub(crate) const RECV_BUF: usize = 65_536;

/// The transport's clock: `CLOCK_MONOTONIC` nanoseconds as a [`tfrc::Time`].
///
/// The epoch is the kernel's (boot), not the start of the transport: every process and
/// network namespace of a host reads the same clock, so a receiver on the same host can take
/// the data header's timestamp as the send time and measure one-way delay. [`host_id`] tells
/// whether two ends share it.
pub fn now() -> tfrc::Time {
    tfrc::Time::from_nanos(sys::monotonic_ns())
}

/// An identifier of this host's monotonic clock: a hash of the kernel's boot id (the same in
/// every network namespace, different after a reboot or on another host). Random when the
/// boot id cannot be read, so that two ends never wrongly believe they share a clock. It never
/// leaves the host: a HELLO carries `tfrc_protect::clock_tag` keyed with it, which differs per
/// session.
pub fn host_id() -> u64 {
    match std::fs::read_to_string("/proc/sys/kernel/random/boot_id") {
        Ok(s) if !s.trim().is_empty() => {
            // FNV-1a: a stable hash, no dependency.
            s.trim().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            })
        }
        _ => rand::random(),
    }
}

/// Sleep until `deadline` (monotonic), waking early when one of `fds` becomes readable: a
/// `ppoll` to within `spin` of the deadline, then a busy wait. Returns what woke it.
pub(crate) fn wait_until(
    deadline: tfrc::Time,
    fds: &[std::os::fd::RawFd],
    spin: Duration,
) -> std::io::Result<sys::Ready> {
    wait_until_rw(deadline, fds, false, spin)
}

/// [`wait_until`], also waking when the first of `fds` becomes writable (with `writable`).
pub(crate) fn wait_until_rw(
    deadline: tfrc::Time,
    fds: &[std::os::fd::RawFd],
    writable: bool,
    spin: Duration,
) -> std::io::Result<sys::Ready> {
    loop {
        let now = now();
        if now >= deadline {
            return Ok(sys::Ready::default());
        }
        let remaining = deadline - now;
        if remaining > spin {
            let r = sys::wait_rw(fds, writable, remaining - spin)?;
            if r.first || r.second || r.error || r.writable {
                return Ok(r);
            }
        } else {
            while self::now() < deadline {
                std::hint::spin_loop();
            }
            return Ok(sys::Ready::default());
        }
    }
}
