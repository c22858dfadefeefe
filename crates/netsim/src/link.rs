//! Links: bandwidth, propagation delay, a queue at the sending end, an optional loss model and
//! an optional wireless (ARQ) hop.
//!
//! As in NS-2's SimpleLink, a packet leaves the queue when the link is free, occupies the link
//! for its serialisation time (size · 8 / bandwidth) and arrives at the far node one
//! propagation delay after its last bit. A propagating packet is only its arrival event in the
//! scheduler (`sim.rs`); a link holds at most one pending "transmission done" event.

use core::time::Duration;

use crate::loss::{LossConfig, LossModel};
use crate::packet::NodeId;
use crate::queue::{Queue, QueueConfig, Slot};
use crate::rng::LazyStream;
use crate::stats::LinkStats;
use crate::wireless::{Wireless, WirelessConfig};

/// Index of a simplex link (one direction).
pub type LinkId = u32;

/// One direction of a link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// Bits per second (NS-2 `bandwidth_`).
    pub bandwidth_bps: u64,
    /// Propagation delay.
    pub delay: Duration,
    /// Queue at the sending end.
    pub queue: QueueConfig,
    /// Loss model applied after propagation (NS-2 `link-lossmodel` position).
    pub loss: Option<LossConfig>,
    /// Link-layer retransmission (wireless hop).
    pub wireless: Option<WirelessConfig>,
}

impl LinkConfig {
    /// A link of `bandwidth_bps` and `delay` with NS-2's default DropTail queue (limit 50).
    pub fn new(bandwidth_bps: u64, delay: Duration) -> Self {
        LinkConfig {
            bandwidth_bps,
            delay,
            queue: QueueConfig::default(),
            loss: None,
            wireless: None,
        }
    }

    /// The same link with another queue.
    pub fn with_queue(mut self, queue: QueueConfig) -> Self {
        self.queue = queue;
        self
    }

    /// The same link with a loss model.
    pub fn with_loss(mut self, loss: LossConfig) -> Self {
        self.loss = Some(loss);
        self
    }

    /// The same link as a wireless hop.
    pub fn with_wireless(mut self, w: WirelessConfig) -> Self {
        self.wireless = Some(w);
        self
    }
}

/// A change to one link direction during a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LinkUpdate {
    /// The link fails: its queued, transmitting and propagating packets are dropped (cause
    /// `down`) and routes are recomputed.
    Down,
    /// The link comes back; routes are recomputed.
    Up,
    /// New parameters. Packets already in transmission or propagation keep the bandwidth and
    /// delay they were sent with (NS-2 computes a packet's transmission and arrival times when
    /// its transmission starts); waiting packets get the new ones.
    Set(LinkSettings),
}

/// New values for some of a link direction's parameters; `None` keeps the current one.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkSettings {
    /// Bits per second (NS-2 `bandwidth_` of the link's delay element).
    pub bandwidth_bps: Option<u64>,
    /// Propagation delay (NS-2 `delay_`). A shorter delay lets later packets overtake
    /// earlier ones still propagating, as in NS-2.
    pub delay: Option<Duration>,
    /// The queue's `limit_` (see [`crate::queue::Queue::set_limit`]).
    pub queue_limit: Option<u32>,
    /// Per-packet loss probability of the link's loss model, which becomes Bernoulli
    /// ([`crate::loss::LossModel::set_rate`]; one is added if the link has none).
    pub loss_rate: Option<f64>,
}

/// What a transmission and an arrival read and write of a link direction, one 64-byte record
/// (one cache line) in a dense array by link id; the rest is in [`Link`]. A wired hop through
/// an idle or busy DropTail link touches nothing else of the link.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct LinkHot {
    /// The key of the transmission's end (its "transmission done" event's, queued or not),
    /// while `tx` is not [`Tx::Idle`].
    pub busy_until: crate::sched::Key,
    /// `bandwidth_bps as f64`, converted once (the conversion was a tenth of a transmission's
    /// own instructions).
    pub bandwidth_f64: f64,
    /// The delay in seconds, as NS-2 holds it (for its double-precision event times).
    pub delay_secs: f64,
    /// Packets and wire bytes that started transmission (copied to [`LinkStats`] at the end).
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub to: NodeId,
    /// Whether a transmission is in progress (NS-2 `blocked_`), and how its end is known.
    pub tx: Tx,
    pub entry: Entry,
    /// The link is a wireless hop (`Link::cold.wireless` is set).
    pub wireless: bool,
    /// The link has a loss model (`Link::loss` is set).
    pub lossy: bool,
}

const _: () = assert!(core::mem::size_of::<LinkHot>() <= 64);

/// What a packet reaching a link does first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// On an idle link it is transmitted at once: the queue is a DropTail counting packets
    /// with room for one, whose enqueue and dequeue of it would change nothing (an idle
    /// link's queue is empty).
    Direct,
    /// It is offered to the queue ([`Queue::passes_through`] may still let it through).
    Queue,
    /// The link is down: it is dropped.
    Down,
}

impl Entry {
    /// The entry of an up link with `queue`.
    pub fn of(queue: &Queue<Slot>) -> Entry {
        if queue.passes_any_when_empty() {
            Entry::Direct
        } else {
            Entry::Queue
        }
    }
}

impl LinkHot {
    /// The hot record of an idle, up link.
    pub fn new(to: NodeId, cfg: &LinkConfig, queue: &Queue<Slot>) -> LinkHot {
        LinkHot {
            busy_until: crate::sched::Key { secs: 0.0, seq: 0 },
            bandwidth_f64: cfg.bandwidth_bps as f64,
            delay_secs: cfg.delay.as_secs_f64(),
            tx_packets: 0,
            tx_bytes: 0,
            to,
            tx: Tx::Idle,
            entry: Entry::of(queue),
            wireless: cfg.wireless.is_some(),
            lossy: cfg.loss.is_some(),
        }
    }

    /// Whether the link is up.
    #[inline]
    pub fn up(&self) -> bool {
        self.entry != Entry::Down
    }
}

/// The rest of a link direction's run-time state (the hot part is [`LinkHot`]). The random
/// streams and the wireless model, touched only by RED's early drops, loss models and
/// wireless hops, are boxed.
#[derive(Clone, Debug)]
pub(crate) struct Link {
    pub from: NodeId,
    /// The same as `LinkHot::to` (it never changes), for what reads the cold part anyway.
    pub to: NodeId,
    pub bandwidth_bps: u64,
    /// A wireless frame that will fail every attempt: dropped when the exchange ends.
    pub lost_in_tx: Option<Slot>,
    pub queue: Queue<Slot>,
    pub loss: Option<LossModel>,
    pub stats: LinkStats,
    /// What the TTL check at the end of the link does with an expired packet.
    pub ttl_expiry: crate::policy::TtlExpiry,
    pub cold: Box<LinkCold>,
}

/// A link's transmitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tx {
    /// Nothing is being transmitted.
    Idle,
    /// Busy until `LinkHot::busy_until`, with no event: nothing waits and nothing fails at the
    /// end, so the end only makes the link idle, and whatever next touches the link does
    /// that if the end is past (`Simulator::settle_tx_done`).
    Deferred,
    /// Busy until `LinkHot::busy_until`, whose "transmission done" event is in the scheduler.
    Queued,
}

/// The parts of a link the per-hop path does not touch. Its random streams are created at
/// their first draw (most links never draw: a DropTail queue, no loss model, no wireless hop).
#[derive(Clone, Debug)]
pub(crate) struct LinkCold {
    pub queue_rng: LazyStream,
    pub loss_rng: LazyStream,
    pub wireless: Option<Wireless>,
    pub wireless_rng: LazyStream,
}

/// Serialisation time of `size` bytes at `bandwidth_bps`, rounded to the nearest nanosecond
/// (for wireless exchanges; wired transmissions use NS-2's double-precision time directly).
pub(crate) fn tx_ns(bandwidth_bps: u64, size: u32) -> u64 {
    let bw = u128::from(bandwidth_bps.max(1));
    let num = u128::from(size) * 8 * 1_000_000_000;
    u64::try_from((num + bw / 2) / bw).unwrap_or(u64::MAX)
}

impl Link {
    /// The handles of the packets the link holds before propagation: waiting, in a failing
    /// wireless exchange (propagating ones are in the scheduler's arrival events).
    pub fn packets(&self) -> impl Iterator<Item = u32> + '_ {
        self.queue.iter().chain(&self.lost_in_tx).map(|s| s.id)
    }
}
