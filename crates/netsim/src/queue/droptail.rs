//! NS-2's `Queue/DropTail` (semantics in `docs/simulator.md`, "Queues").

use std::collections::VecDeque;

use super::{Dropped, Queued};
use crate::packet::Packet;
use crate::stats::DropCause;

/// DropTail parameters, with NS-2's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct DropTailConfig {
    /// `limit_`: 50 packets. As in NS-2 it counts the packet being transmitted, so at most
    /// `limit − 1` packets wait.
    pub limit: u32,
    /// `queue_in_bytes_`: the cap is then `limit · mean_pktsize` bytes.
    pub in_bytes: bool,
    /// `mean_pktsize_`: 500 bytes (byte mode only).
    pub mean_pktsize: u32,
    /// `drop_front_`: on overflow drop the head of the queue instead of the arrival.
    pub drop_front: bool,
}

impl Default for DropTailConfig {
    fn default() -> Self {
        DropTailConfig {
            limit: 50,
            in_bytes: false,
            mean_pktsize: 500,
            drop_front: false,
        }
    }
}

/// A DropTail queue of `P`s: packets, or the simulator's handles to them ([`Queued`]).
#[derive(Clone, Debug)]
pub struct DropTail<P = Packet> {
    cfg: DropTailConfig,
    q: VecDeque<P>,
    bytes: u64,
}

impl<P: Queued> DropTail<P> {
    /// An empty queue.
    pub fn new(cfg: DropTailConfig) -> Self {
        DropTail {
            cfg,
            q: VecDeque::new(),
            bytes: 0,
        }
    }

    /// Set `limit_` (later arrivals see it; waiting packets stay).
    pub fn set_limit(&mut self, limit: u32) {
        self.cfg.limit = limit;
    }

    /// Offer a packet; returns the packet dropped, if any.
    pub fn enqueue(&mut self, pkt: P) -> Option<Dropped<P>> {
        // NS-2 DropTail::enque: the waiting queue (the packet in transmission already left it)
        // overflows when len + 1 ≥ limit, or bytes + size ≥ limit · mean_pktsize.
        let full = if self.cfg.in_bytes {
            self.bytes + u64::from(pkt.size())
                >= u64::from(self.cfg.limit) * u64::from(self.cfg.mean_pktsize)
        } else {
            self.q.len() as u64 + 1 >= u64::from(self.cfg.limit)
        };
        if !full {
            self.bytes += u64::from(pkt.size());
            self.q.push_back(pkt);
            return None;
        }
        if self.cfg.drop_front {
            // NS-2 enqueues the arrival and drops the head.
            self.bytes += u64::from(pkt.size());
            self.q.push_back(pkt);
            let head = self.dequeue()?;
            return Some(Dropped {
                pkt: head,
                cause: DropCause::Queue,
            });
        }
        Some(Dropped {
            pkt,
            cause: DropCause::Queue,
        })
    }

    /// Whether `enqueue(pkt)` followed by `dequeue()` would hand `pkt` straight back: the
    /// queue is empty and would accept it.
    #[inline]
    pub fn passes_through(&self, pkt: &P) -> bool {
        self.q.is_empty()
            && if self.cfg.in_bytes {
                u64::from(pkt.size()) < u64::from(self.cfg.limit) * u64::from(self.cfg.mean_pktsize)
            } else {
                1 < u64::from(self.cfg.limit)
            }
    }

    /// Whether `passes_through` holds for every packet while the queue is empty.
    pub(crate) fn passes_any_when_empty(&self) -> bool {
        !self.cfg.in_bytes && 1 < self.cfg.limit
    }

    /// The next packet to transmit.
    pub fn dequeue(&mut self) -> Option<P> {
        let p = self.q.pop_front()?;
        self.bytes -= u64::from(p.size());
        Some(p)
    }

    /// Waiting packets.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// True when no packet waits.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Waiting bytes.
    pub fn byte_len(&self) -> u64 {
        self.bytes
    }

    pub(super) fn packets(&self) -> &VecDeque<P> {
        &self.q
    }

    pub(super) fn clear(&mut self) -> VecDeque<P> {
        self.bytes = 0;
        std::mem::take(&mut self.q)
    }
}
