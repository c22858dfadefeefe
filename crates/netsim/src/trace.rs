//! Packet traces: NS-2's `trace-all` line format (writer and parser) and CSV, plus a reader
//! that feeds NS-2 traces into the same [`FlowRecorder`]s the simulator uses.
//!
//! NS-2 line (`trace.cc` without the TCP header option; fields in `docs/simulator.md`,
//! "Trace line"):
//! `r 0.02833 2 3 tcpFriend 1032 ------- 1 0.0 3.0 0 0` — event, time (rounded to 1 µs and
//! printed with `%.15g`), link from/to nodes, type, size, 7 flags, fid, `node.port` source
//! and destination, sequence number, unique id.
//!
//! Port numbering: every node numbers its agents 0, 1, 2 … in the order they are attached,
//! which is flow creation order, sender before receiver (what NS-2 does for scripts that
//! attach agents in that order).

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead, Write};

use crate::packet::{NodeId, Packet};
use crate::stats::{DropCause, FlowRecorder, StatsConfig};
use crate::Time;

/// The four per-packet events NS-2 traces on a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceEvent {
    /// `+`: offered to the link's queue (logged before the drop decision).
    Enqueue,
    /// `-`: leaves the queue, transmission starts.
    Dequeue,
    /// `r`: arrives at the link's far node.
    Receive,
    /// `d`: dropped.
    Drop,
}

impl TraceEvent {
    /// The NS-2 event character.
    pub fn symbol(self) -> char {
        match self {
            TraceEvent::Enqueue => '+',
            TraceEvent::Dequeue => '-',
            TraceEvent::Receive => 'r',
            TraceEvent::Drop => 'd',
        }
    }

    fn from_symbol(s: &str) -> Option<TraceEvent> {
        match s {
            "+" => Some(TraceEvent::Enqueue),
            "-" => Some(TraceEvent::Dequeue),
            "r" => Some(TraceEvent::Receive),
            "d" => Some(TraceEvent::Drop),
            _ => None,
        }
    }
}

/// Output format of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// NS-2 `trace-all` lines.
    Ns2,
    /// CSV with a header row: `event,time_ns,from,to,type,size,flags,fid,src_node,src_port,
    /// dst_node,dst_port,seq,uid,cause` (exact nanosecond times; cause empty unless a drop).
    Csv,
}

/// One trace line's fields. Times are exact nanoseconds when produced by the simulator and
/// the parsed value (a multiple of 1 µs) when read from NS-2.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceLine<'a> {
    /// Event.
    pub event: TraceEvent,
    /// Time.
    pub time: Time,
    /// Link's from-node.
    pub from: NodeId,
    /// Link's to-node.
    pub to: NodeId,
    /// Packet type name (`cbr`, `tcp`, `ack`, `tcpFriend`, `tcpFriendCtl`, `icmp`).
    pub ptype: &'a str,
    /// Size in bytes.
    pub size: u32,
    /// The 7 flag characters.
    pub flags: &'a str,
    /// Flow id (NS-2 `fid_`).
    pub fid: u32,
    /// Source (node, port).
    pub src: (NodeId, u32),
    /// Destination (node, port).
    pub dst: (NodeId, u32),
    /// Sequence number.
    pub seq: i64,
    /// Unique packet id.
    pub uid: u64,
    /// Drop cause (simulator traces only; NS-2 does not print one).
    pub cause: Option<DropCause>,
    /// The simulator's flow index (simulator traces only), for the CSV's names.
    pub flow: Option<u32>,
    /// The packet itself (simulator traces only): its protocol header, TTL and ECN bits, for
    /// a [`TraceSink`] that rebuilds it (the lab's pcap writer).
    pub packet: Option<&'a Packet>,
}

/// `%.15g` of `us` microseconds, as NS-2 prints a time rounded to 1e-6 s.
fn write_time_g15(w: &mut impl Write, us: u64) -> io::Result<()> {
    if us == 0 {
        return w.write_all(b"0");
    }
    if us < 100 {
        // Below 1e-4 %g switches to exponent form: d[.d]e-0X.
        let (mant, exp) = if us >= 10 { (us, 5) } else { (us * 10, 6) };
        let (a, b) = (mant / 10, mant % 10);
        return if b == 0 {
            write!(w, "{a}e-{exp:02}")
        } else {
            write!(w, "{a}.{b}e-{exp:02}")
        };
    }
    let int = us / 1_000_000;
    let mut frac = us % 1_000_000;
    if frac == 0 {
        return write!(w, "{int}");
    }
    let mut digits = 6;
    while frac % 10 == 0 {
        frac /= 10;
        digits -= 1;
    }
    write!(w, "{int}.{frac:0digits$}")
}

/// Write one NS-2 `trace-all` line (with a trailing newline).
pub fn write_ns2_line(w: &mut impl Write, l: &TraceLine<'_>) -> io::Result<()> {
    // NS-2 rounds the time to the nearest microsecond (Trace::round).
    let us = (l.time.as_nanos() + 500) / 1000;
    write!(w, "{} ", l.event.symbol())?;
    write_time_g15(w, us)?;
    writeln!(
        w,
        " {} {} {} {} {} {} {}.{} {}.{} {} {}",
        l.from,
        l.to,
        l.ptype,
        l.size,
        l.flags,
        l.fid,
        l.src.0,
        l.src.1,
        l.dst.0,
        l.dst.1,
        l.seq,
        l.uid
    )
}

/// The CSV header row (without newline).
pub const CSV_HEADER: &str =
    "event,time_ns,from,to,type,size,flags,fid,src_node,src_port,dst_node,dst_port,seq,uid,cause";

/// The columns a CSV trace adds after [`CSV_HEADER`] when the tracer knows the names
/// ([`Tracer::set_names`]): the numbers' nodes and flow by name.
pub const CSV_NAME_COLUMNS: &str = "from_name,to_name,flow,src_name,dst_name";

/// Node names by id and flow names by the simulator's flow index, for CSV traces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceNames {
    /// By node id.
    pub nodes: Vec<String>,
    /// By flow index.
    pub flows: Vec<String>,
}

impl TraceNames {
    fn node(&self, id: NodeId) -> &str {
        self.nodes.get(id as usize).map_or("", String::as_str)
    }
}

/// A name for a CSV field: quoted when it holds a comma, a quote or a line break.
fn csv_field(w: &mut impl Write, s: &str) -> io::Result<()> {
    if s.contains([',', '"', '\n', '\r']) {
        write!(w, "\"{}\"", s.replace('"', "\"\""))
    } else {
        w.write_all(s.as_bytes())
    }
}

/// Write one CSV row (with a trailing newline), with the name columns when `names` is given.
pub fn write_csv_line_named(
    w: &mut impl Write,
    l: &TraceLine<'_>,
    names: Option<&TraceNames>,
) -> io::Result<()> {
    write_csv_fields(w, l)?;
    if let Some(n) = names {
        let flow = l
            .flow
            .and_then(|f| n.flows.get(f as usize))
            .map_or("", String::as_str);
        for name in [
            n.node(l.from),
            n.node(l.to),
            flow,
            n.node(l.src.0),
            n.node(l.dst.0),
        ] {
            w.write_all(b",")?;
            csv_field(w, name)?;
        }
    }
    w.write_all(b"\n")
}

/// Write one CSV row (with a trailing newline).
pub fn write_csv_line(w: &mut impl Write, l: &TraceLine<'_>) -> io::Result<()> {
    write_csv_line_named(w, l, None)
}

/// The fields of [`CSV_HEADER`], without the newline.
fn write_csv_fields(w: &mut impl Write, l: &TraceLine<'_>) -> io::Result<()> {
    write!(
        w,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        l.event.symbol(),
        l.time.as_nanos(),
        l.from,
        l.to,
        l.ptype,
        l.size,
        l.flags,
        l.fid,
        l.src.0,
        l.src.1,
        l.dst.0,
        l.dst.1,
        l.seq,
        l.uid,
        l.cause.map_or("", DropCause::name)
    )
}

/// Why a trace line could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceParseError {
    /// 1-based line number, when known (0 otherwise).
    pub line: u64,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for TraceParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trace line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TraceParseError {}

fn perr(message: impl Into<String>) -> TraceParseError {
    TraceParseError {
        line: 0,
        message: message.into(),
    }
}

fn parse_addr(s: &str) -> Result<(NodeId, u32), TraceParseError> {
    let (n, p) = s
        .split_once('.')
        .ok_or_else(|| perr(format!("address {s:?} is not node.port")))?;
    let n = n.parse().map_err(|_| perr(format!("bad node in {s:?}")))?;
    // NS-2 prints port −1 for unattached agents; keep it as u32::MAX.
    let p = if p == "-1" {
        u32::MAX
    } else {
        p.parse().map_err(|_| perr(format!("bad port in {s:?}")))?
    };
    Ok((n, p))
}

/// Parse one NS-2 `trace-all` line (the 12-field format; extra fields, as printed with the
/// TCP header option, are ignored).
pub fn parse_ns2_line(line: &str) -> Result<TraceLine<'_>, TraceParseError> {
    let mut f = line.split_ascii_whitespace();
    let mut next = |what: &str| f.next().ok_or_else(|| perr(format!("missing {what}")));
    let ev = next("event")?;
    let event = TraceEvent::from_symbol(ev).ok_or_else(|| perr(format!("unknown event {ev:?}")))?;
    let t = next("time")?;
    let secs: f64 = t.parse().map_err(|_| perr(format!("bad time {t:?}")))?;
    if !secs.is_finite() || secs < 0.0 {
        return Err(perr(format!("bad time {t:?}")));
    }
    let num = |s: &str, what: &str| -> Result<u64, TraceParseError> {
        s.parse().map_err(|_| perr(format!("bad {what} {s:?}")))
    };
    let from = num(next("from node")?, "from node")?;
    let to = num(next("to node")?, "to node")?;
    let ptype = next("type")?;
    let size = num(next("size")?, "size")?;
    let flags = next("flags")?;
    let fid = num(next("fid")?, "fid")?;
    let src = parse_addr(next("source")?)?;
    let dst = parse_addr(next("destination")?)?;
    let seq_s = next("seqno")?;
    let seq: i64 = seq_s
        .parse()
        .map_err(|_| perr(format!("bad seqno {seq_s:?}")))?;
    let uid = num(next("uid")?, "uid")?;
    let small =
        |v: u64, what: &str| u32::try_from(v).map_err(|_| perr(format!("{what} too large")));
    Ok(TraceLine {
        event,
        time: Time::from_secs_f64(secs),
        from: small(from, "from node")?,
        to: small(to, "to node")?,
        ptype,
        size: small(size, "size")?,
        flags,
        fid: small(fid, "fid")?,
        src,
        dst,
        seq,
        uid,
        cause: None,
        flow: None,
        packet: None,
    })
}

/// Where trace lines go besides the text formats: a sink given every line, with the packet
/// ([`TraceLine::packet`]). The lab writes pcap files through one.
pub trait TraceSink {
    /// One packet event.
    fn record(&mut self, line: &TraceLine<'_>) -> io::Result<()>;
    /// The run ended: write out what is buffered.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A trace sink owned by the simulator: a text trace ([`TraceFormat`]), a [`TraceSink`], or
/// both.
pub struct Tracer {
    out: Option<Box<dyn Write>>,
    format: TraceFormat,
    error: Option<io::Error>,
    header_done: bool,
    names: Option<TraceNames>,
    sink: Option<Box<dyn TraceSink>>,
}

impl fmt::Debug for Tracer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracer")
            .field("format", &self.format)
            .field("text", &self.out.is_some())
            .field("sink", &self.sink.is_some())
            .finish_non_exhaustive()
    }
}

impl Tracer {
    /// Trace to `out` in `format`. Wrap files in a `BufWriter`.
    pub fn new(out: Box<dyn Write>, format: TraceFormat) -> Self {
        Tracer {
            out: Some(out),
            format,
            error: None,
            header_done: false,
            names: None,
            sink: None,
        }
    }

    /// Trace to `sink` only.
    pub fn with_sink(sink: Box<dyn TraceSink>) -> Self {
        Tracer {
            out: None,
            format: TraceFormat::Csv,
            error: None,
            header_done: false,
            names: None,
            sink: Some(sink),
        }
    }

    /// Also give every line to `sink` (replacing an earlier one).
    pub fn set_sink(&mut self, sink: Box<dyn TraceSink>) {
        self.sink = Some(sink);
    }

    pub(crate) fn take_sink(&mut self) -> Option<Box<dyn TraceSink>> {
        self.sink.take()
    }

    /// Add node and flow names to CSV traces (the [`CSV_NAME_COLUMNS`]); NS-2 traces keep
    /// NS-2's format.
    pub fn set_names(&mut self, names: TraceNames) {
        self.names = Some(names);
    }

    /// Write a line; the first I/O error is kept and reported at the end of the run.
    pub fn record(&mut self, l: &TraceLine<'_>) {
        if self.error.is_some() {
            return;
        }
        let r = match (&mut self.out, self.format) {
            (None, _) => Ok(()),
            (Some(out), TraceFormat::Ns2) => write_ns2_line(out, l),
            (Some(out), TraceFormat::Csv) => {
                let h = if self.header_done {
                    Ok(())
                } else {
                    self.header_done = true;
                    match self.names {
                        Some(_) => writeln!(out, "{CSV_HEADER},{CSV_NAME_COLUMNS}"),
                        None => writeln!(out, "{CSV_HEADER}"),
                    }
                };
                h.and_then(|_| write_csv_line_named(out, l, self.names.as_ref()))
            }
        };
        let r = r.and_then(|_| self.sink.as_mut().map_or(Ok(()), |s| s.record(l)));
        if let Err(e) = r {
            self.error = Some(e);
        }
    }

    /// Flush, returning the first error seen.
    pub fn flush(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(s) = &mut self.sink {
            s.finish()?;
        }
        self.out.as_mut().map_or(Ok(()), |o| o.flush())
    }
}

/// A flow as seen in an NS-2 trace: packets with this fid from `src` to `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ns2Flow {
    /// NS-2 `fid_`.
    pub fid: u32,
    /// Source node.
    pub src: NodeId,
    /// Destination node.
    pub dst: NodeId,
}

/// Wire bytes of an NS-2 packet that are header, not payload, by packet type: TCP data
/// (`tcp`) carries a 40-byte TCP/IP header on top of `packetSize_`, TFRC data (`tcpFriend`)
/// 32 bytes (`hdr_tfrc` plus IP, as Agent/TFRC sizes it); CBR over UDP and every other type
/// count their whole size (NS-2's UDP adds no header bytes).
pub fn ns2_header_bytes(ptype: &str) -> u32 {
    match ptype {
        "tcp" => 40,
        "tcpFriend" => 32,
        _ => 0,
    }
}

/// Whole-run packet counts of one flow's data direction in an NS-2 trace (the recorders count
/// only the measurement window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ns2Totals {
    /// Packets the source sent.
    pub sent: u64,
    /// Packets delivered to the destination.
    pub delivered: u64,
}

/// Turns NS-2 trace lines into per-flow [`FlowRecorder`]s: a packet is sent at its first `+`
/// on a link leaving its source node, delivered at its `r` on a link into its destination node
/// (delay = the difference, matched by uid), dropped at a `d`. Packets of other flows, and the
/// reverse direction (ACKs), are ignored. Memory follows packets in flight.
///
/// Payload is the size minus [`ns2_header_bytes`]; a data packet without payload (NS-2's TCP
/// SYN, a 40-byte `tcp` packet) is left out of the statistics, as the simulator leaves it out
/// (connection set-up, not data: the seed papers' tables do not count it).
#[derive(Debug)]
pub struct Ns2TraceReader {
    flows: Vec<Ns2Flow>,
    index: HashMap<(u32, NodeId, NodeId), usize>,
    recorders: Vec<FlowRecorder>,
    totals: Vec<Ns2Totals>,
    in_flight: HashMap<u64, Time>,
    /// Cause assigned to `d` lines (NS-2 does not print one); default [`DropCause::Queue`].
    pub drop_cause: DropCause,
    lines: u64,
}

impl Ns2TraceReader {
    /// A reader for `flows`, with statistics gathered as `cfg` says.
    pub fn new(flows: &[Ns2Flow], cfg: &StatsConfig) -> Self {
        Ns2TraceReader {
            flows: flows.to_vec(),
            index: flows
                .iter()
                .enumerate()
                .map(|(i, f)| ((f.fid, f.src, f.dst), i))
                .collect(),
            recorders: flows.iter().map(|_| FlowRecorder::new(cfg)).collect(),
            totals: vec![Ns2Totals::default(); flows.len()],
            in_flight: HashMap::new(),
            drop_cause: DropCause::Queue,
            lines: 0,
        }
    }

    /// Feed one parsed line.
    pub fn feed(&mut self, l: &TraceLine<'_>) {
        let Some(&i) = self.index.get(&(l.fid, l.src.0, l.dst.0)) else {
            return;
        };
        let header = ns2_header_bytes(l.ptype);
        if header > 0 && l.size <= header {
            // No payload: the TCP SYN.
            return;
        }
        let payload = l.size - header;
        let flow = self.flows[i];
        let rec = &mut self.recorders[i];
        let totals = &mut self.totals[i];
        match l.event {
            TraceEvent::Enqueue if l.from == flow.src => {
                if let std::collections::hash_map::Entry::Vacant(e) = self.in_flight.entry(l.uid) {
                    e.insert(l.time);
                    totals.sent += 1;
                    rec.on_sent(l.time, l.size, payload);
                }
            }
            TraceEvent::Receive if l.to == flow.dst => {
                if let Some(sent) = self.in_flight.remove(&l.uid) {
                    totals.delivered += 1;
                    rec.on_delivered(l.time, sent, l.size, payload);
                    // Flag 5 of 7 is NS-2's `E`: congestion experienced (ns2-reference §5).
                    if l.flags.as_bytes().get(4) == Some(&b'E') {
                        rec.on_marked(l.time);
                    }
                }
            }
            // Only packets seen leaving the source count, as for deliveries.
            TraceEvent::Drop if self.in_flight.remove(&l.uid).is_some() => {
                rec.on_dropped(l.time, l.cause.unwrap_or(self.drop_cause));
            }
            _ => {}
        }
    }

    /// Parse and feed one text line; blank lines and non-packet lines (`v`, `h` …) are skipped.
    pub fn feed_line(&mut self, line: &str) -> Result<(), TraceParseError> {
        self.lines += 1;
        let first = line.split_ascii_whitespace().next();
        match first {
            Some("+" | "-" | "r" | "d") => {}
            _ => return Ok(()),
        }
        let l = parse_ns2_line(line).map_err(|mut e| {
            e.line = self.lines;
            e
        })?;
        self.feed(&l);
        Ok(())
    }

    /// Feed every line of `r`.
    pub fn feed_reader(&mut self, r: impl BufRead) -> Result<(), TraceParseError> {
        for line in r.lines() {
            let line = line.map_err(|e| TraceParseError {
                line: self.lines + 1,
                message: e.to_string(),
            })?;
            self.feed_line(&line)?;
        }
        Ok(())
    }

    /// The recorders, in the order of the flows given to [`Ns2TraceReader::new`].
    pub fn recorders(&self) -> &[FlowRecorder] {
        &self.recorders
    }

    /// Whole-run counts, in the order of the flows given to [`Ns2TraceReader::new`].
    pub fn totals(&self) -> &[Ns2Totals] {
        &self.totals
    }

    /// Packets sent but neither delivered nor dropped yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(line: &str) -> String {
        let l = parse_ns2_line(line).unwrap();
        let mut out = Vec::new();
        write_ns2_line(&mut out, &l).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ns2_lines_round_trip_byte_for_byte() {
        for line in [
            "r 0.02833 2 3 tcpFriend 1032 ------- 1 0.0 3.0 0 0",
            "+ 0 0 2 cbr 210 ------- 1 0.0 8.0 0 0",
            "- 1.5e-05 0 2 cbr 210 ------- 1 0.0 8.0 0 0",
            "d 100 5 6 cbr 210 ------- 2 1.0 9.0 119046 238093",
            "+ 99.99696 0 2 cbr 210 ---A-FN 1 0.0 8.0 29761 59522",
            "r 0.0001 2 3 ack 40 ------- 0 3.0 0.0 -1 7",
            "+ 2e-06 2 3 ack 40 ------- 0 3.0 0.0 -1 7",
        ] {
            assert_eq!(roundtrip(line), format!("{line}\n"));
        }
    }

    #[test]
    fn times_are_rounded_to_microseconds_like_ns2() {
        let mut l = parse_ns2_line("+ 0 0 2 cbr 210 ------- 1 0.0 8.0 0 0").unwrap();
        let mut out = Vec::new();
        for ns in [1_499, 1_500, 72_770_499, 12_345_678_901] {
            l.time = Time::from_nanos(ns);
            write_ns2_line(&mut out, &l).unwrap();
        }
        let s = String::from_utf8(out).unwrap();
        let times: Vec<&str> = s.lines().map(|x| x.split(' ').nth(1).unwrap()).collect();
        assert_eq!(times, vec!["1e-06", "2e-06", "0.07277", "12.345679"]);
    }

    #[test]
    fn malformed_lines_are_errors_not_panics() {
        for bad in [
            "",
            "x 0 0 1 cbr 1 ------- 0 0.0 1.0 0 0",
            "+ abc 0 1 cbr 1 ------- 0 0.0 1.0 0 0",
            "+ 0 0 1 cbr 1 ------- 0 0.0 1.0 0",
            "+ 0 0 1 cbr 1 ------- 0 00 1.0 0 0",
            "+ -1 0 1 cbr 1 ------- 0 0.0 1.0 0 0",
            "+ 0 0 99999999999 cbr 1 ------- 0 0.0 1.0 0 0",
        ] {
            assert!(parse_ns2_line(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn reader_computes_delay_and_drops() {
        let trace = "\
+ 0 0 1 cbr 210 ------- 1 0.0 2.0 0 0
- 0 0 1 cbr 210 ------- 1 0.0 2.0 0 0
+ 0.001 0 1 cbr 210 ------- 1 0.0 2.0 1 1
d 0.001 0 1 cbr 210 ------- 1 0.0 2.0 1 1
r 0.01 1 2 cbr 210 ------- 1 0.0 2.0 0 0
r 0.02 1 2 ack 40 ------- 1 2.0 0.0 0 2
v 0.03 eval {set sim_annotation {x}}
";
        let mut r = Ns2TraceReader::new(
            &[Ns2Flow {
                fid: 1,
                src: 0,
                dst: 2,
            }],
            &StatsConfig::default(),
        );
        r.feed_reader(trace.as_bytes()).unwrap();
        let rec = &r.recorders()[0];
        assert_eq!(rec.sent_packets, 2);
        assert_eq!(rec.delivered_packets, 1);
        assert_eq!(rec.dropped(DropCause::Queue), 1);
        assert!((rec.delay.mean_secs() - 0.01).abs() < 1e-12);
        assert_eq!(r.in_flight(), 0);
        assert_eq!(
            r.totals(),
            &[Ns2Totals {
                sent: 2,
                delivered: 1
            }]
        );
    }

    /// A delivery whose flags carry NS-2's `E` (congestion experienced, the fifth flag) is a
    /// marked packet; `N` alone (ECN-capable) is not.
    #[test]
    fn reader_counts_ce_marks() {
        let trace = "\
+ 0 0 1 tcpFriend 1032 ------N 1 0.0 1.0 0 0
+ 0.001 0 1 tcpFriend 1032 ------N 1 0.0 1.0 1 1
r 0.01 0 1 tcpFriend 1032 ----E-N 1 0.0 1.0 0 0
r 0.011 0 1 tcpFriend 1032 ------N 1 0.0 1.0 1 1
";
        let mut r = Ns2TraceReader::new(
            &[Ns2Flow {
                fid: 1,
                src: 0,
                dst: 1,
            }],
            &StatsConfig::default(),
        );
        r.feed_reader(trace.as_bytes()).unwrap();
        let rec = &r.recorders()[0];
        assert_eq!((rec.delivered_packets, rec.marked), (2, 1));
    }

    #[test]
    fn reader_leaves_out_the_syn_and_counts_payload_without_headers() {
        let trace = "\
+ 0 0 1 tcp 40 ------- 0 0.0 1.0 0 0
r 0.01 0 1 tcp 40 ------- 0 0.0 1.0 0 0
+ 0.02 0 1 tcp 1040 ------- 0 0.0 1.0 1 1
d 0.02 0 1 tcp 40 ------- 0 0.0 1.0 0 7
r 0.03 0 1 tcp 1040 ------- 0 0.0 1.0 1 1
+ 0.02 1 0 ack 40 ------- 0 1.0 0.0 0 2
+ 0 2 1 tcpFriend 1032 ------- 1 2.0 1.0 0 3
r 0.01 2 1 tcpFriend 1032 ------- 1 2.0 1.0 0 3
";
        let mut r = Ns2TraceReader::new(
            &[
                Ns2Flow {
                    fid: 0,
                    src: 0,
                    dst: 1,
                },
                Ns2Flow {
                    fid: 1,
                    src: 2,
                    dst: 1,
                },
            ],
            &StatsConfig::default(),
        );
        r.feed_reader(trace.as_bytes()).unwrap();
        let [tcp, tfrc] = r.recorders() else {
            panic!("two recorders")
        };
        assert_eq!((tcp.sent_packets, tcp.delivered_packets), (1, 1));
        assert_eq!(tcp.dropped_total(), 0, "a SYN drop is not a data drop");
        assert_eq!((tcp.delivered_bytes, tcp.delivered_payload), (1040, 1000));
        assert!((tcp.delay.mean_secs() - 0.01).abs() < 1e-12);
        assert_eq!((tfrc.delivered_bytes, tfrc.delivered_payload), (1032, 1000));
    }
}
