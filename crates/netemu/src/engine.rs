//! The real-time engine: one thread reads the packets every node sends into its tun devices,
//! runs each through its link direction's [`LinkDir`] model, and writes it into the far node's
//! tun device when the model delivers it, measuring how late each write is.
//!
//! Timing. The thread runs at SCHED_FIFO priority when it may (a busy machine then cannot
//! delay it behind ordinary work), locks its memory (no page fault in the loop), asks for a
//! 1-µs timer slack, and waits with `ppoll` until `spin` before the next due event, then
//! busy-waits the rest: a timed wake-up on a virtual machine is typically tens of
//! microseconds late, against 1.2 ms per packet at 10 Mb/s. The lateness of every write
//! (`now − due`) is recorded, so every run states its own timing error ([`Report::lateness`]).

use std::collections::HashMap;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use netsim::queue::Slot;
use netsim::rng::{stream, Component};
use netsim::{Direction, DropCause, FlowId, LinkSettings, PacketKind, Time};
use serde::{Deserialize, Serialize};

use crate::ip::{self, HopKey, Ipv4};
use crate::model::{DirConfig, Event, LinkDir, ModelPacket};
use crate::sys;
use crate::timing::Lateness;

/// The largest packet the emulator handles; tun devices get an MTU no larger.
pub const MAX_PACKET: usize = 2048;

/// Packets held at once (queued and propagating, all links) before the emulator drops
/// arrivals itself (counted in [`Report::buffer_overflow`]); 64 Ki packets of 2 KiB.
const MAX_BUFFERS: usize = 1 << 16;

/// One end of a link: the node and the tun device opened in that node's namespace.
#[derive(Debug)]
pub struct Endpoint {
    /// Node index.
    pub node: u32,
    /// The tun device's descriptor.
    pub tun: OwnedFd,
}

/// A link between two nodes: what node `a` writes into its tun device crosses the forward
/// direction and comes out of `b`'s, and the reverse.
#[derive(Debug)]
pub struct LinkSpec {
    /// Name, for reports.
    pub name: String,
    /// The `from` end.
    pub a: Endpoint,
    /// The `to` end.
    pub b: Endpoint,
    /// a → b.
    pub forward: DirConfig,
    /// b → a; `None` for a simplex link (what `b` sends into it is dropped and counted).
    pub reverse: Option<DirConfig>,
}

/// A change of a link direction's parameters during the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Update {
    /// When, from the run's time zero.
    pub at: Duration,
    /// Index into [`Config::links`].
    pub link: usize,
    /// The forward (a → b) direction, or the reverse.
    pub forward: bool,
    /// What changes.
    pub settings: LinkSettings,
}

/// What a packet is, as the caller's classifier says: the flow it belongs to and the fields
/// an NS-2 trace line shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tag {
    /// Flow index.
    pub flow: FlowId,
    /// Data (forward) or control (reverse).
    pub forward: bool,
    /// NS-2's packet type.
    #[serde(with = "kind_name")]
    pub kind: PacketKind,
    /// Sequence number in packets (TCP: bytes / MSS; TFRC: the header's).
    pub seq: i64,
    /// Payload bytes (what goodput counts).
    pub payload: u32,
}

mod kind_name {
    use netsim::PacketKind;
    use serde::{Deserialize, Deserializer, Serializer};

    const ALL: [PacketKind; 8] = [
        PacketKind::Tcp,
        PacketKind::Ack,
        PacketKind::Cbr,
        PacketKind::TfrcData,
        PacketKind::TfrcFeedback,
        PacketKind::TimeExceeded,
        PacketKind::Rtp,
        PacketKind::Rtcp,
    ];

    pub fn serialize<S: Serializer>(k: &PacketKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.ns2_name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PacketKind, D::Error> {
        let name = String::deserialize(d)?;
        ALL.into_iter()
            .find(|k| k.ns2_name() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown packet type {name:?}")))
    }
}

/// Classifies a packet (its parsed IPv4 header and the whole packet) when it enters the
/// network at its source.
pub type Classifier = Box<dyn FnMut(&Ipv4, &[u8]) -> Option<Tag> + Send>;

/// How the engine thread asks the kernel for timely wake-ups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Realtime {
    /// SCHED_FIFO priority (1–99); `None`: the default scheduler.
    pub fifo_priority: Option<i32>,
    /// Lock the process's memory while the engine runs.
    pub lock_memory: bool,
    /// Busy-wait this long before each due event instead of sleeping.
    pub spin: Duration,
}

impl Default for Realtime {
    /// SCHED_FIFO 50 (above the default 0 of every ordinary process, below the kernel's own
    /// threaded interrupts at 50 — equal, so it does not starve them either), memory locked,
    /// 20 µs of spinning.
    fn default() -> Self {
        Realtime {
            fifo_priority: Some(50),
            lock_memory: true,
            spin: Duration::from_micros(20),
        }
    }
}

/// Everything the engine needs.
pub struct Config {
    /// `CLOCK_MONOTONIC` nanoseconds of the run's time zero: capture times and updates count
    /// from it.
    pub epoch_ns: u64,
    /// Each node's address (index = node): where packets enter and leave the network.
    pub nodes: Vec<Ipv4Addr>,
    /// The links.
    pub links: Vec<LinkSpec>,
    /// Parameter changes, in any order.
    pub updates: Vec<Update>,
    /// Seed of RED's, the loss models' and the arrival jitters' random streams (netsim's
    /// streams: the same (seed, component, link id) as a simulation of the same links).
    pub seed: u64,
    /// Names packets for the capture and the loss model's packet list; `None`: every packet
    /// is anonymous.
    pub classifier: Option<Classifier>,
    /// Scheduling.
    pub realtime: Realtime,
    /// Keep a record of every packet event (the capture).
    pub capture: bool,
}

/// Per link direction: what crossed it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirCounters {
    /// Link name and direction (`>` forward, `<` reverse).
    pub name: String,
    /// Packets that arrived at the sending end.
    pub arrived: u64,
    /// Packets that started transmission.
    pub tx_packets: u64,
    /// Bytes that started transmission.
    pub tx_bytes: u64,
    /// Packets written to the far end.
    pub delivered: u64,
    /// Drops: queue overflow.
    pub dropped_queue: u64,
    /// Drops: RED's early drops.
    pub dropped_aqm: u64,
    /// Drops: the loss model.
    pub dropped_link: u64,
    /// Packets marked CE.
    pub marked_ce: u64,
    /// Writes the kernel refused.
    pub write_errors: u64,
}

/// One packet the capture saw enter the network.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapPacket {
    /// The classifier's answer.
    pub tag: Option<Tag>,
    /// IP bytes.
    pub size: u32,
    /// Source node, if it is one of the nodes.
    pub src: Option<u32>,
    /// Destination node, if it is one of the nodes.
    pub dst: Option<u32>,
}

/// One event of the capture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapEvent {
    /// When (the model's due time for `-`, `r` and `d`; for `+`, the read time, or the end
    /// of the packet's arrival jitter when the direction has one).
    pub time: Time,
    /// Index into [`Capture::packets`].
    pub uid: u32,
    /// Simplex link: 2 · link (forward) or 2 · link + 1 (reverse).
    pub simplex: u32,
    /// What happened.
    pub event: Event,
}

/// Every packet event of a run: the emulator's equivalent of NS-2's `trace-all`, with exact
/// drop causes.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    /// Packets by uid.
    pub packets: Vec<CapPacket>,
    /// Events in the order they happened.
    pub events: Vec<CapEvent>,
}

/// What a run of the engine measured.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Lateness of every write into a tun device against its due time.
    pub lateness: Lateness,
    /// Lateness of the thread's timed wake-ups against the time it asked for (what the
    /// kernel's timer and scheduler cost, before spinning).
    pub wakeups: Lateness,
    /// Per simplex direction (2 · link, 2 · link + 1).
    pub dirs: Vec<DirCounters>,
    /// Why SCHED_FIFO was not granted (`None`: it was).
    pub fifo_refused: Option<String>,
    /// Why memory was not locked (`None`: it was).
    pub lock_refused: Option<String>,
    /// Packets that were not IPv4 (dropped).
    pub non_ipv4: u64,
    /// Forwarded packets not seen entering the network (new uids).
    pub unmatched: u64,
    /// Arrivals dropped because every buffer was in use.
    pub buffer_overflow: u64,
    /// Packets larger than [`MAX_PACKET`] (truncated by the read; dropped).
    pub oversized: u64,
    /// Packets still held when the engine stopped.
    pub in_flight_at_stop: u64,
    /// The capture, when asked for.
    pub capture: Option<Capture>,
}

/// A running engine.
pub struct Emulator {
    stop: Arc<AtomicBool>,
    wake: Arc<sys::EventFd>,
    thread: Option<JoinHandle<io::Result<Report>>>,
}

impl Emulator {
    /// Start the engine thread.
    pub fn start(cfg: Config) -> io::Result<Emulator> {
        let stop = Arc::new(AtomicBool::new(false));
        let wake = Arc::new(sys::EventFd::new()?);
        let (s, w) = (stop.clone(), wake.clone());
        let thread = std::thread::Builder::new()
            .name("netemu".into())
            .spawn(move || Engine::new(cfg).run(&s, &w))?;
        Ok(Emulator {
            stop,
            wake,
            thread: Some(thread),
        })
    }

    /// Stop the engine and return what it measured.
    pub fn stop(mut self) -> io::Result<Report> {
        self.halt()
    }

    fn halt(&mut self) -> io::Result<Report> {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.signal();
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| io::Error::other("the emulator thread panicked"))?,
            None => Err(io::Error::other("the emulator was already stopped")),
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.halt();
        }
    }
}

struct Buf {
    data: Box<[u8]>,
    len: usize,
    uid: u32,
    key: Option<HopKey>,
}

/// An end's position: link, and whether it is end `b`.
#[derive(Clone, Copy)]
struct EndRef {
    link: usize,
    is_b: bool,
}

struct Engine {
    cfg: Config,
    dirs: Vec<Option<LinkDir>>,
    counters: Vec<DirCounters>,
    bufs: Vec<Buf>,
    free: Vec<u32>,
    uids: HashMap<HopKey, u32>,
    capture: Capture,
    report: Report,
    lateness: Vec<u32>,
    wakeups: Vec<u32>,
    next_uid: u32,
}

fn rel(now_ns: u64, epoch_ns: u64) -> Time {
    Time::from_nanos(now_ns.saturating_sub(epoch_ns))
}

impl Engine {
    fn new(cfg: Config) -> Engine {
        let mut dirs = Vec::new();
        let mut counters = Vec::new();
        // Random streams by simplex id as `lab` numbers netsim's links: forward, then reverse
        // of a duplex link.
        let mut id = 0u64;
        for l in &cfg.links {
            for (d, tag) in [(Some(&l.forward), '>'), (l.reverse.as_ref(), '<')] {
                counters.push(DirCounters {
                    name: format!("{}{tag}", l.name),
                    ..DirCounters::default()
                });
                dirs.push(d.map(|c| {
                    let dir = LinkDir::new(
                        c,
                        stream(cfg.seed, Component::Queue, id),
                        stream(cfg.seed, Component::LinkLoss, id),
                        stream(cfg.seed, Component::LinkJitter, id),
                    );
                    id += 1;
                    dir
                }));
            }
        }
        let mut updates = cfg.updates.clone();
        updates.sort_by_key(|u| u.at);
        for u in updates {
            let s = 2 * u.link + usize::from(!u.forward);
            if let Some(Some(d)) = dirs.get_mut(s) {
                d.schedule(
                    Time::from_nanos(u64::try_from(u.at.as_nanos()).unwrap_or(u64::MAX)),
                    u.settings,
                );
            }
        }
        Engine {
            cfg,
            dirs,
            counters,
            bufs: Vec::new(),
            free: Vec::new(),
            uids: HashMap::new(),
            capture: Capture::default(),
            report: Report::default(),
            lateness: Vec::with_capacity(1 << 20),
            wakeups: Vec::with_capacity(1 << 18),
            next_uid: 0,
        }
    }

    fn now(&self) -> Time {
        rel(sys::monotonic_ns(), self.cfg.epoch_ns)
    }

    fn run(mut self, stop: &AtomicBool, wake: &sys::EventFd) -> io::Result<Report> {
        sys::set_timer_slack(1_000);
        let rt = self.cfg.realtime;
        self.report.fifo_refused = match rt.fifo_priority {
            Some(p) => sys::set_fifo(p)
                .err()
                .map(|e| format!("SCHED_FIFO {p}: {e}")),
            None => Some("not asked for".into()),
        };
        self.report.lock_refused = if rt.lock_memory {
            sys::lock_memory().err().map(|e| format!("mlockall: {e}"))
        } else {
            Some("not asked for".into())
        };
        // Buffers for the first packets, touched now (not in the loop).
        for _ in 0..1024 {
            grow(&mut self.bufs, &mut self.free);
        }
        let ends: Vec<EndRef> = (0..self.cfg.links.len())
            .flat_map(|link| [EndRef { link, is_b: false }, EndRef { link, is_b: true }])
            .collect();
        let mut fds: Vec<RawFd> = vec![wake.fd()];
        fds.extend(ends.iter().map(|e| self.end_fd(*e)));
        let mut ready = Vec::with_capacity(fds.len());
        let mut out: Vec<(Time, Event, ModelPacket, usize)> = Vec::with_capacity(256);
        let result = loop {
            if stop.load(Ordering::SeqCst) {
                break Ok(());
            }
            let now = self.now();
            for (s, d) in self.dirs.iter_mut().enumerate() {
                if let Some(d) = d {
                    d.advance(now, &mut |t, e, p| out.push((t, e, p, s)));
                }
            }
            self.handle(&mut out);
            // Packets the nodes sent.
            let mut failed = None;
            for (i, &r) in ready.iter().enumerate().skip(1) {
                if r {
                    if let Err(e) = self.read_end(ends[i - 1], &mut out) {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = failed {
                break Err(e);
            }
            let next = self
                .dirs
                .iter()
                .flatten()
                .filter_map(LinkDir::next_due)
                .min();
            let now = self.now();
            let timeout = match next {
                None => Some(Duration::from_millis(50)),
                Some(t) if t <= now => Some(Duration::ZERO),
                Some(t) => Some((t - now).saturating_sub(rt.spin)),
            };
            let timed = timeout.filter(|t| !t.is_zero());
            if let Err(e) = sys::poll_readable(&fds, timeout, &mut ready) {
                break Err(e);
            }
            if let (Some(t), Some(due)) = (timed, next) {
                if !ready.iter().any(|&r| r) {
                    // A timed wake-up: how late the kernel woke us against what we asked.
                    let asked = now + t;
                    let woke = self.now();
                    self.wakeups.push(sat_ns(woke.saturating_since(asked)));
                    // Spin the rest of the way.
                    while self.now() < due {
                        std::hint::spin_loop();
                    }
                }
            }
            if ready.first() == Some(&true) {
                continue; // the stop signal
            }
        };
        if self.report.lock_refused.is_none() {
            sys::unlock_memory();
        }
        result?;
        self.finish();
        Ok(self.report)
    }

    fn end_fd(&self, e: EndRef) -> RawFd {
        let l = &self.cfg.links[e.link];
        if e.is_b {
            l.b.tun.as_raw_fd()
        } else {
            l.a.tun.as_raw_fd()
        }
    }

    /// Read every packet waiting on one end's tun device into the model.
    fn read_end(
        &mut self,
        end: EndRef,
        out: &mut Vec<(Time, Event, ModelPacket, usize)>,
    ) -> io::Result<()> {
        // At most a batch per wake-up, so one busy device cannot starve the rest.
        for _ in 0..64 {
            let link = &self.cfg.links[end.link];
            let fd = if end.is_b {
                link.b.tun.as_fd()
            } else {
                link.a.tun.as_fd()
            };
            let Some(id) = take_buf(&mut self.bufs, &mut self.free) else {
                // Read and discard: the kernel would otherwise hold the packet.
                let mut scratch = [0u8; MAX_PACKET + 1];
                match sys::read_packet(fd, &mut scratch)? {
                    Some(_) => {
                        self.report.buffer_overflow += 1;
                        continue;
                    }
                    None => return Ok(()),
                }
            };
            let n = match sys::read_packet(fd, &mut self.bufs[id as usize].data)? {
                Some(n) => n,
                None => {
                    self.free.push(id);
                    return Ok(());
                }
            };
            let now = self.now();
            self.arrive(end, id, n, now, out);
            self.handle(out);
        }
        Ok(())
    }

    fn arrive(
        &mut self,
        end: EndRef,
        id: u32,
        n: usize,
        now: Time,
        out: &mut Vec<(Time, Event, ModelPacket, usize)>,
    ) {
        if n > MAX_PACKET {
            self.report.oversized += 1;
            self.free.push(id);
            return;
        }
        let link = &self.cfg.links[end.link];
        let from = if end.is_b { link.b.node } else { link.a.node };
        let simplex = 2 * end.link + usize::from(end.is_b);
        let buf = &self.bufs[id as usize].data[..n];
        let Some(h) = Ipv4::parse(buf) else {
            self.report.non_ipv4 += 1;
            self.free.push(id);
            return;
        };
        let key = h.hop_key(buf);
        let entering = self.cfg.nodes.get(from as usize) == Some(&h.src);
        let uid = match (entering, self.uids.get(&key)) {
            (false, Some(&u)) => u,
            _ => {
                if !entering {
                    self.report.unmatched += 1;
                }
                let uid = self.next_uid;
                self.next_uid = self.next_uid.wrapping_add(1);
                self.uids.insert(key, uid);
                if self.cfg.capture {
                    let tag = self.cfg.classifier.as_mut().and_then(|c| c(&h, buf));
                    let node = |a: Ipv4Addr| {
                        self.cfg
                            .nodes
                            .iter()
                            .position(|&x| x == a)
                            .map(|i| i as u32)
                    };
                    self.capture.packets.push(CapPacket {
                        tag,
                        size: n as u32,
                        src: node(h.src),
                        dst: node(h.dst),
                    });
                }
                uid
            }
        };
        let tag = if self.cfg.capture {
            self.capture.packets.get(uid as usize).and_then(|p| p.tag)
        } else {
            None
        };
        let b = &mut self.bufs[id as usize];
        b.len = n;
        b.uid = uid;
        b.key = Some(key);
        self.counters[simplex].arrived += 1;
        let pkt = ModelPacket {
            slot: Slot::new(id, n as u32, h.ect()),
            key: match tag {
                Some(t) => (
                    t.flow,
                    if t.forward {
                        Direction::Forward
                    } else {
                        Direction::Reverse
                    },
                    t.seq,
                ),
                None => (FlowId::MAX, Direction::Forward, i64::from(uid)),
            },
        };
        match &mut self.dirs[simplex] {
            Some(d) => d.arrive(now, pkt, &mut |t, e, p| out.push((t, e, p, simplex))),
            None => {
                // A simplex link's far end sent into it: nothing carries it.
                out.push((now, Event::Drop(DropCause::Down), pkt, simplex));
            }
        }
    }

    /// Act on the model's events: record them, write deliveries, free what left.
    fn handle(&mut self, out: &mut Vec<(Time, Event, ModelPacket, usize)>) {
        for (t, ev, p, s) in out.drain(..) {
            let id = p.slot.id as usize;
            let uid = self.bufs[id].uid;
            if self.cfg.capture {
                self.capture.events.push(CapEvent {
                    time: t,
                    uid,
                    simplex: s as u32,
                    event: ev,
                });
            }
            let c = &mut self.counters[s];
            match ev {
                Event::Enqueue => {}
                Event::Dequeue => {
                    c.tx_packets += 1;
                    c.tx_bytes += u64::from(p.slot.size);
                }
                Event::Drop(cause) => {
                    match cause {
                        DropCause::Queue => c.dropped_queue += 1,
                        DropCause::Aqm => c.dropped_aqm += 1,
                        _ => c.dropped_link += 1,
                    }
                    self.release(id);
                }
                Event::Receive => {
                    let link = &self.cfg.links[s / 2];
                    let to = if s % 2 == 0 { &link.b } else { &link.a };
                    let len = self.bufs[id].len;
                    if p.slot.ce && ip::mark_ce(&mut self.bufs[id].data[..len]) {
                        self.counters[s].marked_ce += 1;
                    }
                    let now = rel(sys::monotonic_ns(), self.cfg.epoch_ns);
                    self.lateness.push(sat_ns(now.saturating_since(t)));
                    let r = sys::write_packet(to.tun.as_fd(), &self.bufs[id].data[..len]);
                    let c = &mut self.counters[s];
                    match r {
                        Ok(()) => c.delivered += 1,
                        Err(_) => c.write_errors += 1,
                    }
                    // Delivered to its destination: the hop key may be reused.
                    let dst_here = Ipv4::parse(&self.bufs[id].data[..len])
                        .is_some_and(|h| self.cfg.nodes.get(to.node as usize) == Some(&h.dst));
                    if dst_here {
                        if let Some(k) = self.bufs[id].key {
                            self.uids.remove(&k);
                        }
                    }
                    self.free.push(id as u32);
                }
            }
        }
    }

    /// A dropped packet's buffer and hop key are free again.
    fn release(&mut self, id: usize) {
        if let Some(k) = self.bufs[id].key.take() {
            self.uids.remove(&k);
        }
        self.free.push(id as u32);
    }

    fn finish(&mut self) {
        let held: u64 = self
            .dirs
            .iter()
            .flatten()
            .map(|d| d.held().count() as u64)
            .sum();
        self.report.in_flight_at_stop = held;
        self.report.lateness = Lateness::of(&mut self.lateness);
        self.report.wakeups = Lateness::of(&mut self.wakeups);
        for (c, d) in self.counters.iter_mut().zip(&self.dirs) {
            if let Some(d) = d {
                debug_assert_eq!(c.tx_packets, d.tx_packets);
            }
        }
        self.report.dirs = std::mem::take(&mut self.counters);
        if self.cfg.capture {
            self.report.capture = Some(std::mem::take(&mut self.capture));
        }
    }
}

fn sat_ns(t: Duration) -> u32 {
    u32::try_from(t.as_nanos()).unwrap_or(u32::MAX)
}

fn grow(bufs: &mut Vec<Buf>, free: &mut Vec<u32>) -> Option<u32> {
    if bufs.len() >= MAX_BUFFERS {
        return None;
    }
    // Zeroed, so every page is touched now rather than in the loop.
    bufs.push(Buf {
        data: vec![0u8; MAX_PACKET + 1].into_boxed_slice(),
        len: 0,
        uid: 0,
        key: None,
    });
    let id = (bufs.len() - 1) as u32;
    free.push(id);
    Some(id)
}

fn take_buf(bufs: &mut Vec<Buf>, free: &mut Vec<u32>) -> Option<u32> {
    if free.is_empty() {
        grow(bufs, free)?;
    }
    free.pop()
}
