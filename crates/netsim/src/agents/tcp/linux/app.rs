//! The application above the Linux sender's socket, as far as the receiver can see it: which
//! segments end a write and so carry PSH (docs/simulator.md, "Linux TCP", the receiver).
//!
//! The model is the bulk writer of the kernel reference runs (`write` of 64 KB in a loop): it
//! always has data, so it fills the send buffer and blocks; every ACK that frees memory wakes
//! it, it writes what was freed and blocks again, and the kernel pushes before the writer
//! sleeps, marking PSH on the last segment written. The captures of the kernel's flows show
//! exactly that: PSH on every second segment while ACKs cover two, on a lone segment after an
//! ACK that covered one. What the writer adds lands behind the data already buffered, so the
//! ACK pattern reappears as the PSH pattern one buffer later.

use std::collections::VecDeque;

/// Send-buffer backlog (segments written but not yet acknowledged) for a window of `cwnd`:
/// the kernel sizes the send buffer at 2·max(10, cwnd) segments of 4,352 bytes of memory
/// (`tcp_sndbuf_expand`), and a queued 1448-byte segment took about 2.7 KB of it in the
/// captures (the first ACK-sized writes reached the wire 32 segments after the initial
/// window's), so the buffer holds 16/5 segments per segment of window.
fn backlog(cwnd: u32) -> i64 {
    (16 * i64::from(cwnd.max(10)) + 4) / 5
}

/// The writer's state: how far it has written and which written segments end a write.
#[derive(Clone, Debug, Default)]
pub(super) struct AppWrites {
    /// One past the last segment written (segments count from 1; 0 is the SYN).
    written: i64,
    /// Segments that end a write, ascending; those below `snd_una` are dropped.
    psh: VecDeque<i64>,
}

impl AppWrites {
    /// The first fill of the send buffer at connection: the writer blocks after each
    /// two-segment buffer (the size the kernel builds at these rates, `tcp_min_tso_segs`),
    /// so every second segment carries PSH.
    pub(super) fn open(&mut self) {
        let b = backlog(0);
        self.written = 1 + b;
        self.psh = (1..=b / 2).map(|i| 2 * i).collect();
    }

    /// The cumulative ACK moved from `prior_una` to `una`: the writer refills what the
    /// acknowledged segments freed, in one write.
    pub(super) fn on_acked(&mut self, prior_una: i64, una: i64) {
        if una > prior_una {
            self.written += una - prior_una;
            self.psh.push_back(self.written - 1);
        }
        while self.psh.front().is_some_and(|&s| s < una) {
            self.psh.pop_front();
        }
    }

    /// Segment `seq` is about to be sent for the first time: if the window has outgrown the
    /// buffer, the kernel grows the buffer with the window and the writer fills the new room
    /// in one write.
    pub(super) fn before_send(&mut self, seq: i64, una: i64, cwnd: u32) {
        if seq >= self.written {
            self.written = (seq + 1).max(una + backlog(cwnd));
            self.psh.push_back(self.written - 1);
        }
    }

    /// Whether segment `seq` ends a write (retransmissions keep the mark).
    pub(super) fn psh(&self, seq: i64) -> bool {
        self.psh.binary_search(&seq).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_follow_the_acks_one_buffer_later() {
        let mut a = AppWrites::default();
        a.open();
        // 32 segments buffered at the start, PSH on every second one.
        assert_eq!(a.written, 33);
        assert!(a.psh(2) && !a.psh(3) && a.psh(32));
        // ACKs of one, then two segments: writes of one and of two.
        a.on_acked(1, 2);
        a.on_acked(2, 4);
        assert!(a.psh(33) && !a.psh(34) && a.psh(35));
        assert!(!a.psh(1) && !a.psh(2), "acknowledged marks are dropped");
        // A window beyond the buffer: one write up to 16/5 of the window past snd_una.
        a.before_send(36, 4, 20);
        assert_eq!(a.written, 4 + 64);
        assert!(a.psh(67) && !a.psh(36));
    }
}
