//! pcap files of a run (`tfrclab run --pcap DIR`): every packet as a capture on each link
//! sees it, with real IPv4, TCP, UDP and ICMP headers, so that Wireshark and tshark can open
//! a simulation ([docs/wireshark.md](../../docs/wireshark.md)).
//!
//! One file per scenario link, `<link>.pcap`, holding both directions: each packet when its
//! transmission onto the link starts (NS-2's `-` event), as a tap at the sending end sees it;
//! a packet dropped by the queue never reaches the wire and is not in the file (the CSV trace
//! has every drop with its cause). Timestamps are simulated time since the epoch, to the
//! nanosecond (nanosecond pcap). Frames are raw IPv4 (`LINKTYPE_RAW`), captured up to
//! [`SNAPLEN`] bytes (headers; the payload's length is kept, as `tcpdump -s` keeps it).
//!
//! How the model maps onto headers:
//! - node `n` is `10.a.b.c` with `a.b.c` = n + 1 (`hosts` in the folder names them, for
//!   Wireshark's and tshark's name resolution: `tshark -H DIR/hosts -N n`);
//! - flow `f` sends from port `10000 + f % 50000` to [`TCP_PORT`], [`TFRC_PORT`] or
//!   [`UDP_PORT`] by kind, so that each flow is one conversation;
//! - TCP: NS-2 counts segments, a real header bytes: segment `k` is sequence number
//!   `1 + k × packet_size` (the SYN, when the model sends one, is 0), an ACK of segment `k` acks
//!   `1 + (k + 1) × packet_size`, SACK blocks likewise; the timestamp option carries the
//!   model's send time and echo in microseconds; the window is the flow's `window` ×
//!   `packet_size` (at most 65,535, no scaling);
//! - TFRC: the core's wire format (`docs/wire-format.md`) over UDP, built by `tfrc::wire`;
//! - CBR: UDP; time-exceeded notices: ICMP type 11 from the router that sent them;
//! - the IP header carries the packet's TTL at that hop, its ECN bits and its uid's low 16
//!   bits as identification.
//!
//! The headers are built by `etherparse` and the files written by `pcap-file`.
//!
//! [`DatagramPcap`] writes real UDP datagrams the same way (`tfrclab send --pcap`, `recv
//! --pcap`): what the caller's socket sent and received, at wall-clock time.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use etherparse::{
    IpEcn, IpHeaders, IpNumber, Ipv4Header, Ipv6Header, PacketBuilder, TcpHeader, TcpOptionElement,
};
use netsim::packet::{Direction, Header, Packet};
use netsim::trace::{TraceEvent, TraceLine, TraceSink};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use scenario::{FlowKind, Scenario};

/// Bytes of each frame kept in the file: every header (IPv4 20, TCP at most 60, the TFRC
/// feedback 44), not the payload.
pub const SNAPLEN: u32 = 128;
/// The destination port of TCP flows (the data direction).
pub const TCP_PORT: u16 = 5001;
/// The destination port of TFRC flows, the dissector's default (`tools/wireshark/tfrc.lua`).
pub const TFRC_PORT: u16 = 5348;
/// The destination port of CBR flows.
pub const UDP_PORT: u16 = 5002;
/// Most files one run may write (one per link): a larger topology names its links.
pub const MAX_FILES: usize = 512;

/// What `--pcap` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapOptions {
    /// The folder the files go into.
    pub dir: PathBuf,
    /// The scenario links to capture, by name; empty: every link.
    pub links: Vec<String>,
}

impl PcapOptions {
    /// The options for a run writing into `out`: a pcap folder inside the output folder (as
    /// in `--out res --pcap res/pcap`) is written in its staging folder, or the commit, which
    /// replaces the output folder whole, would delete it.
    pub fn placed(&self, out: &crate::output::OutputDir) -> PcapOptions {
        PcapOptions {
            dir: out.place(&self.dir),
            links: self.links.clone(),
        }
    }
}

/// The IPv4 address of node `n`.
pub fn node_address(n: u32) -> [u8; 4] {
    let a = n + 1;
    [10, (a >> 16) as u8, (a >> 8) as u8, a as u8]
}

/// How a flow's packets are written.
#[derive(Clone, Copy, Debug)]
enum Wire {
    Tcp { mss: u32, window: u16 },
    Tfrc,
    Udp,
}

#[derive(Clone, Copy, Debug)]
struct FlowWire {
    wire: Wire,
    /// The sender's port; the receiver's is the kind's.
    port: u16,
}

/// The pcap writer of a run, given every trace line by the simulator.
pub struct PcapSink {
    /// Scenario link index by (from node, to node), either direction.
    links: HashMap<(u32, u32), usize>,
    files: Vec<Option<PcapWriter<BufWriter<File>>>>,
    flows: Vec<FlowWire>,
    buf: Vec<u8>,
    zeros: Vec<u8>,
}

impl std::fmt::Debug for PcapSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapSink")
            .field("files", &self.files.iter().flatten().count())
            .finish_non_exhaustive()
    }
}

/// The links `opts` selects, by index, or why not.
pub fn selected_links(s: &Scenario, opts: &PcapOptions) -> Result<Vec<usize>, String> {
    let chosen: Vec<usize> = if opts.links.is_empty() {
        (0..s.links.len()).collect()
    } else {
        let mut v = Vec::new();
        for name in &opts.links {
            match s.links.iter().position(|l| &l.name == name) {
                Some(i) => v.push(i),
                None => {
                    let names: Vec<&str> =
                        s.links.iter().take(20).map(|l| l.name.as_str()).collect();
                    return Err(format!(
                        "--pcap-link {name}: no such link; links: {}{}",
                        names.join(", "),
                        if s.links.len() > 20 { ", …" } else { "" }
                    ));
                }
            }
        }
        v
    };
    if chosen.len() > MAX_FILES {
        return Err(format!(
            "--pcap would write {} files, one per link (at most {MAX_FILES}): choose links with --pcap-link NAME",
            chosen.len()
        ));
    }
    Ok(chosen)
}

impl PcapSink {
    /// Files for the links of `s` that `opts` selects, in `opts.dir` (created), and its
    /// `hosts` file.
    pub fn create(s: &Scenario, opts: &PcapOptions) -> Result<PcapSink, String> {
        let chosen = selected_links(s, opts)?;
        let dir = &opts.dir;
        if dir.exists() && !dir.is_dir() {
            return Err(format!(
                "--pcap {}: it exists and is not a folder; name a folder for the pcap files",
                dir.display()
            ));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let hosts: String = s
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let a = node_address(i as u32);
                format!("{}.{}.{}.{}\t{}\n", a[0], a[1], a[2], a[3], n.name)
            })
            .collect();
        write(&dir.join("hosts"), hosts.as_bytes())?;
        let mut files: Vec<Option<PcapWriter<BufWriter<File>>>> =
            (0..s.links.len()).map(|_| None).collect();
        for i in chosen {
            let path = dir.join(format!(
                "{}.pcap",
                crate::output::file_stem(&s.links[i].name)
            ));
            files[i] = Some(create_file(&path, SNAPLEN)?);
        }
        let mut links = HashMap::new();
        for (i, l) in s.links.iter().enumerate() {
            links.insert((l.from as u32, l.to as u32), i);
            links.insert((l.to as u32, l.from as u32), i);
        }
        let flows = s
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| FlowWire {
                wire: match &f.kind {
                    FlowKind::Tcp { window, .. } => Wire::Tcp {
                        mss: f.packet_size.max(1),
                        window: (u64::from(*window) * u64::from(f.packet_size)).min(65_535) as u16,
                    },
                    // A media flow over TFRC sends TFRC's wire format (its frame tag, like RTP's,
                    // is not written).
                    FlowKind::Tfrc { .. } | FlowKind::Media { .. } => Wire::Tfrc,
                    FlowKind::Udp { .. } => Wire::Udp,
                },
                port: 10_000 + (i % 50_000) as u16,
            })
            .collect();
        Ok(PcapSink {
            links,
            files,
            flows,
            buf: Vec::with_capacity(256),
            zeros: Vec::new(),
        })
    }

    /// The frame of `p` (IPv4 and up), into `self.buf`; its full length.
    fn frame(&mut self, p: &Packet) -> io::Result<usize> {
        let fw = self
            .flows
            .get(p.flow as usize)
            .copied()
            .unwrap_or(FlowWire {
                wire: Wire::Udp,
                port: 9,
            });
        let forward = p.dir == Direction::Forward;
        let peer_port = match fw.wire {
            Wire::Tcp { .. } => TCP_PORT,
            Wire::Tfrc => TFRC_PORT,
            Wire::Udp => UDP_PORT,
        };
        let (sport, dport) = if forward {
            (fw.port, peer_port)
        } else {
            (peer_port, fw.port)
        };
        let mut ip = Ipv4Header::new(
            0,
            p.ttl,
            IpNumber::UDP,
            node_address(p.src),
            node_address(p.dst),
        )
        .map_err(io::Error::other)?;
        ip.identification = p.uid as u16;
        ip.dont_fragment = true;
        ip.ecn = match (p.ect, p.ce) {
            (_, true) => IpEcn::CongestionExperienced,
            (true, false) => IpEcn::Ect0,
            _ => IpEcn::NotEct,
        };
        let builder = PacketBuilder::ip(IpHeaders::Ipv4(ip, Default::default()));
        self.buf.clear();
        let payload = |zeros: &mut Vec<u8>, n: usize| {
            if zeros.len() < n {
                zeros.resize(n, 0);
            }
        };
        let err = |e: etherparse::err::packet::BuildWriteError| io::Error::other(e.to_string());
        match (&p.header, fw.wire) {
            (Header::Tcp(h), Wire::Tcp { mss, window }) => {
                let seq_of = |k: i64| (1 + k.max(0) as u64 * u64::from(mss)) as u32;
                let mut t = TcpHeader::new(sport, dport, 0, 65_535);
                let mut opts = vec![
                    TcpOptionElement::Noop,
                    TcpOptionElement::Noop,
                    TcpOptionElement::Timestamp(micros(h.ts), micros(h.ts_echo)),
                ];
                if forward {
                    // Data (or the SYN): the receiver sends nothing, so it acks its SYN only.
                    t.sequence_number = if h.syn { 0 } else { seq_of(h.seqno) };
                    t.syn = h.syn;
                    if !h.syn {
                        t.ack = true;
                        t.acknowledgment_number = 1;
                    }
                } else {
                    t.sequence_number = 1;
                    t.ack = true;
                    t.acknowledgment_number = seq_of(h.seqno + 1);
                    t.window_size = window;
                    if !h.sack.is_empty() {
                        let mut blocks = h.sack.iter().map(|(l, r)| (seq_of(l), seq_of(r)));
                        let first = blocks.next().unwrap_or((0, 0));
                        let rest = [blocks.next(), blocks.next(), blocks.next()];
                        opts.extend([
                            TcpOptionElement::Noop,
                            TcpOptionElement::Noop,
                            TcpOptionElement::SelectiveAcknowledgement(first, rest),
                        ]);
                    }
                }
                t.set_options(&opts).map_err(io::Error::other)?;
                let n = if forward && !h.syn {
                    p.payload as usize
                } else {
                    0
                };
                payload(&mut self.zeros, n);
                builder
                    .tcp_header(t)
                    .write(&mut self.buf, &self.zeros[..n])
                    .map_err(err)?;
            }
            (Header::TfrcData(h), _)
            | (
                Header::MediaData(netsim::packet::MediaData {
                    cc: netsim::packet::MediaCcHeader::Tfrc(h),
                    ..
                }),
                _,
            ) => {
                let n = p.payload as usize;
                payload(&mut self.zeros, tfrc::wire::DATA_HEADER_LEN + n);
                let mut body = tfrc::wire::encode_data(h).to_vec();
                body.extend_from_slice(&self.zeros[..n]);
                builder
                    .udp(sport, dport)
                    .write(&mut self.buf, &body)
                    .map_err(err)?;
            }
            (Header::TfrcFeedback(fb), _)
            | (Header::MediaFeedback(netsim::packet::MediaFeedback::Tfrc(fb)), _) => {
                let body = tfrc::wire::encode_feedback(fb);
                builder
                    .udp(sport, dport)
                    .write(&mut self.buf, &body)
                    .map_err(err)?;
            }
            (Header::TimeExceeded { .. }, _) => {
                let t = etherparse::Icmpv4Type::TimeExceeded(
                    etherparse::icmpv4::TimeExceededCode::TtlExceededInTransit,
                );
                builder.icmpv4(t).write(&mut self.buf, &[]).map_err(err)?;
            }
            _ => {
                let n = p.payload.max(1) as usize;
                payload(&mut self.zeros, n);
                builder
                    .udp(sport, dport)
                    .write(&mut self.buf, &self.zeros[..n])
                    .map_err(err)?;
            }
        }
        Ok(self.buf.len())
    }
}

/// The model's time in microseconds, as a TCP timestamp (wrapping).
fn micros(t: netsim::Time) -> u32 {
    (t.as_nanos() / 1_000) as u32
}

/// A nanosecond pcap file of raw IP frames (`LINKTYPE_RAW`) at `path`, keeping `snaplen`
/// bytes of each.
fn create_file(path: &Path, snaplen: u32) -> Result<PcapWriter<BufWriter<File>>, String> {
    let f = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let header = PcapHeader {
        version_major: 2,
        version_minor: 4,
        ts_correction: 0,
        ts_accuracy: 0,
        snaplen,
        datalink: DataLink::RAW,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
    };
    PcapWriter::with_header(BufWriter::new(f), header)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A pcap file of real UDP datagrams (`tfrclab send --pcap FILE`, `recv --pcap FILE`): each
/// datagram as an IPv4 or IPv6 frame with its real addresses, ports, TTL (hop limit) and ECN
/// bits, whole (the payload is the transport's frame, which the dissector reads), at its
/// wall-clock time to the nanosecond. The caller gives it what its socket sent and received
/// (`tfrc_udp::capture`); this writer knows nothing of sockets.
pub struct DatagramPcap {
    path: PathBuf,
    w: Option<PcapWriter<BufWriter<File>>>,
    buf: Vec<u8>,
    packets: u64,
    /// The first write error: the file stops there, and [`finish`](Self::finish) reports it.
    error: Option<String>,
}

impl std::fmt::Debug for DatagramPcap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatagramPcap")
            .field("path", &self.path)
            .field("packets", &self.packets)
            .finish_non_exhaustive()
    }
}

/// Largest frame kept whole: an IPv6 header and the largest UDP datagram.
const DATAGRAM_SNAPLEN: u32 = 40 + 65_535;

impl DatagramPcap {
    /// Create (or truncate) the file at `path`; the error names the path and what is wrong.
    pub fn create(path: &Path) -> Result<DatagramPcap, String> {
        if path.is_dir() {
            return Err(format!(
                "{}: is a folder (expected a file name, e.g. send.pcap)",
                path.display()
            ));
        }
        match path.parent() {
            Some(d) if !d.as_os_str().is_empty() && !d.is_dir() => {
                return Err(format!(
                    "{}: the folder {} does not exist",
                    path.display(),
                    d.display()
                ))
            }
            _ => {}
        }
        Ok(DatagramPcap {
            path: path.to_path_buf(),
            w: Some(create_file(path, DATAGRAM_SNAPLEN)?),
            buf: Vec::with_capacity(2048),
            packets: 0,
            error: None,
        })
    }

    /// Append one datagram from `src` to `dst`, sent or received at `realtime_ns` (nanoseconds
    /// since 1970) with IP TTL `ttl` and ECN bits `ecn`. Both addresses must be of one family.
    pub fn write(
        &mut self,
        realtime_ns: u64,
        src: SocketAddr,
        dst: SocketAddr,
        ttl: u8,
        ecn: u8,
        payload: &[u8],
    ) {
        let Some(w) = &mut self.w else { return };
        self.buf.clear();
        let built = udp_frame(&mut self.buf, src, dst, ttl, ecn, payload).and_then(|()| {
            let pkt = PcapPacket::new(
                Duration::from_nanos(realtime_ns),
                self.buf.len() as u32,
                &self.buf,
            );
            w.write_packet(&pkt).map(|_| ()).map_err(|e| e.to_string())
        });
        match built {
            Ok(()) => self.packets += 1,
            Err(e) => {
                self.error = Some(format!("cannot write {}: {e}", self.path.display()));
                self.w = None;
            }
        }
    }

    /// Datagrams written so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Flush the file; the number of datagrams written, or the first error.
    pub fn finish(&mut self) -> Result<u64, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(w) = self.w.take() {
            io::Write::flush(&mut w.into_writer())
                .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        }
        Ok(self.packets)
    }
}

/// An IPv4 or IPv6 frame of a UDP datagram, into `buf`.
fn udp_frame(
    buf: &mut Vec<u8>,
    src: SocketAddr,
    dst: SocketAddr,
    ttl: u8,
    ecn: u8,
    payload: &[u8],
) -> Result<(), String> {
    let builder = match (src, dst) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => {
            let mut ip = Ipv4Header::new(0, ttl, IpNumber::UDP, s.ip().octets(), d.ip().octets())
                .map_err(|e| e.to_string())?;
            // Linux sets DF on UDP (path MTU discovery on by default).
            ip.dont_fragment = true;
            ip.ecn = IpEcn::try_new(ecn & 3).map_err(|e| e.to_string())?;
            PacketBuilder::ip(IpHeaders::Ipv4(ip, Default::default()))
        }
        (SocketAddr::V6(s), SocketAddr::V6(d)) => {
            let ip = Ipv6Header {
                traffic_class: ecn & 3,
                flow_label: Default::default(),
                payload_length: 0,
                next_header: IpNumber::UDP,
                hop_limit: ttl,
                source: s.ip().octets(),
                destination: d.ip().octets(),
            };
            PacketBuilder::ip(IpHeaders::Ipv6(ip, Default::default()))
        }
        _ => return Err(format!("{src} and {dst} are of different families")),
    };
    builder
        .udp(src.port(), dst.port())
        .write(buf, payload)
        .map_err(|e| e.to_string())
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

impl TraceSink for PcapSink {
    fn record(&mut self, l: &TraceLine<'_>) -> io::Result<()> {
        if l.event != TraceEvent::Dequeue {
            return Ok(());
        }
        let (Some(p), Some(&link)) = (l.packet, self.links.get(&(l.from, l.to))) else {
            return Ok(());
        };
        if self.files[link].is_none() {
            return Ok(());
        }
        let len = self.frame(p)?;
        let kept = len.min(SNAPLEN as usize);
        let pkt = PcapPacket::new(
            Duration::from_nanos(l.time.as_nanos()),
            len as u32,
            &self.buf[..kept],
        );
        if let Some(w) = &mut self.files[link] {
            w.write_packet(&pkt).map_err(io::Error::other)?;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        for w in self.files.iter_mut() {
            if let Some(w) = w.take() {
                io::Write::flush(&mut w.into_writer())?;
            }
        }
        Ok(())
    }
}

/// Gives every line to each of its sinks (the pcap writer and a caller's own).
pub struct Tee(pub Vec<Box<dyn TraceSink>>);

impl TraceSink for Tee {
    fn record(&mut self, l: &TraceLine<'_>) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|s| s.record(l))
    }

    fn finish(&mut self) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|s| s.finish())
    }
}
