//! Packets as they cross the simulated network.

use crate::Time;

/// Index of a node in the topology.
pub type NodeId = u32;
/// Index of a flow (a sender agent and its receiver agent).
pub type FlowId = u32;

/// Which way a packet travels along its flow: data from the flow's source to its destination, or
/// control (ACKs, feedback, ICMP-like notices) back to the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Source → destination: delivered to the flow's receiver agent.
    Forward,
    /// Destination → source: delivered to the flow's sender agent.
    Reverse,
}

/// The packet type, as NS-2 names it in its traces (`docs/simulator.md`, "Trace line").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// TCP data segment (and the SYN): `tcp`.
    Tcp,
    /// TCP acknowledgement: `ack`.
    Ack,
    /// UDP datagram from a CBR source: `cbr`.
    Cbr,
    /// TFRC data: `tcpFriend`.
    TfrcData,
    /// TFRC feedback: `tcpFriendCtl`.
    TfrcFeedback,
    /// A time-exceeded notice sent back to the source when a packet's TTL runs out
    /// ([`crate::policy::TtlExpiry::Notify`]).
    TimeExceeded,
    /// RTP media of a flow under an RMCAT controller (NADA, SCReAM, GCC): `rtp`.
    Rtp,
    /// RTCP feedback of such a flow (RFC 8888 or transport-wide): `rtcp`.
    Rtcp,
}

impl PacketKind {
    /// The name NS-2 prints in field 5 of a trace line.
    pub fn ns2_name(self) -> &'static str {
        match self {
            PacketKind::Tcp => "tcp",
            PacketKind::Ack => "ack",
            PacketKind::Cbr => "cbr",
            PacketKind::TfrcData => "tcpFriend",
            PacketKind::TfrcFeedback => "tcpFriendCtl",
            PacketKind::TimeExceeded => "icmp",
            PacketKind::Rtp => "rtp",
            PacketKind::Rtcp => "rtcp",
        }
    }
}

/// TCP header fields used by NS-2's one-way TCP agents.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpHeader {
    /// Sequence number (data) or cumulative ACK number (ACK), in packets as in NS-2.
    pub seqno: i64,
    /// Sender timestamp (data), echoed back in the ACK.
    pub ts: Time,
    /// Echoed timestamp (ACK).
    pub ts_echo: Time,
    /// Set on the SYN.
    pub syn: bool,
    /// ECN-Echo (RFC 3168's ECE, NS-2's `ecnecho()`): on an ACK, the sink saw a CE mark the
    /// sender has not yet answered with CWR; on an ECN-capable sender's SYN, the request for ECN.
    pub ece: bool,
    /// Congestion Window Reduced (RFC 3168's CWR, NS-2's `cong_action()`): the first packet the
    /// sender sends after cutting its window.
    pub cwr: bool,
    /// PSH (RFC 9293): set by the Linux sender on the last segment of each application
    /// write; the Linux receiver acknowledges such a segment at once once it has been read.
    /// NS-2's agents never set it.
    pub psh: bool,
    /// SACK blocks (ACKs of `Agent/TCPSink/Sack1`; empty otherwise).
    pub sack: SackBlocks,
}

/// NS-2's `NSA`: the most SACK blocks a TCP header carries.
pub const MAX_SACK_BLOCKS: usize = 3;

/// The SACK option of an ACK: up to [`MAX_SACK_BLOCKS`] blocks, each `[left, right)` in
/// packets (RFC 2018's edges: first sequence of the block, one past its last), newest first.
/// Stored inline (sequence numbers as `i32`, NS-2's `int`) so headers stay `Copy` and small.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    len: u8,
    blocks: [[i32; 2]; MAX_SACK_BLOCKS],
}

impl SackBlocks {
    /// Append the block `[left, right)`; ignored when the option is full. Edges saturate to
    /// the `i32` range.
    pub fn push(&mut self, left: i64, right: i64) {
        let i = usize::from(self.len);
        if i < MAX_SACK_BLOCKS {
            let c = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
            self.blocks[i] = [c(left), c(right)];
            self.len += 1;
        }
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// No blocks.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The blocks as `(left, right)`, newest first.
    pub fn iter(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.blocks[..self.len()]
            .iter()
            .map(|b| (i64::from(b[0]), i64::from(b[1])))
    }
}

/// Protocol header carried by a packet. A closed enum, not `dyn`: the hot path stays monomorphic.
#[derive(Clone, Debug, PartialEq)]
pub enum Header {
    /// No protocol header (CBR).
    None,
    /// TCP data or ACK.
    Tcp(TcpHeader),
    /// TFRC data header, exactly as the core produced it.
    TfrcData(tfrc::DataHeader),
    /// TFRC feedback, exactly as the core produced it.
    TfrcFeedback(tfrc::Feedback),
    /// A media packet: its frame tag and its controller's header ([`MediaData`]).
    MediaData(MediaData),
    /// A media controller's feedback ([`MediaFeedback`]).
    MediaFeedback(MediaFeedback),
    /// Time-exceeded notice: the TTL the dead packet was sent with and its flow sequence number.
    TimeExceeded {
        /// Initial TTL of the packet that expired.
        initial_ttl: u8,
        /// The expired packet's `seq`.
        seq: i64,
    },
}

impl Header {
    /// Overwrite this header (a reused store slot's) with `new`. Only a media feedback header
    /// owns memory; any other is forgotten rather than dropped, which spares every send an
    /// out-of-line call to the enum's drop glue.
    #[inline]
    pub(crate) fn overwrite(&mut self, new: Header) {
        // Forgetting is only right for payloads without drop glue.
        const _: () = assert!(
            !std::mem::needs_drop::<TcpHeader>()
                && !std::mem::needs_drop::<tfrc::DataHeader>()
                && !std::mem::needs_drop::<tfrc::Feedback>()
                && !std::mem::needs_drop::<MediaData>()
        );
        let old = std::mem::replace(self, new);
        if let Header::MediaFeedback(f) = old {
            drop(f);
        } else {
            std::mem::forget(old);
        }
    }
}

/// What a media packet carries: the frame it belongs to (`crates/media`, what RTP's timestamp
/// and marker bit tell a receiver) and the header of the flow's congestion controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MediaData {
    /// Frame number, packet index and count.
    pub tag: media::sender::PacketTag,
    /// The controller's per-packet header.
    pub cc: MediaCcHeader,
}

/// The per-packet header of a media flow's controller, one variant per controller (a closed
/// enum, as [`crate::agents::media::SenderCc`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MediaCcHeader {
    /// TFRC's data header, as the core produced it.
    Tfrc(tfrc::DataHeader),
    /// An RMCAT controller's packet (`crates/rmcat`): the sequence number its feedback reports
    /// on (RTP's for NADA and SCReAM, the transport-wide one for GCC; unwrapped here, 16 bits
    /// on the wire).
    Rmcat {
        /// The sequence number.
        seq: u64,
    },
}

/// A media controller's feedback, one variant per controller. Fixed-size reports travel in the
/// packet; variable-length reports (RFC 8888's per-packet lists, transport-wide reports) travel
/// boxed, so the header stays small, and the packet's size is the report's encoded length plus
/// IP/UDP (`docs/media.md`, "Adding a controller").
#[derive(Clone, Debug, PartialEq)]
pub enum MediaFeedback {
    /// TFRC feedback, as the core produced it.
    Tfrc(tfrc::Feedback),
    /// An RMCAT controller's RTCP feedback, as the receiver's generator built it.
    Rmcat(Box<rmcat::FeedbackMessage>),
}

/// A packet in flight. Agents create them through [`crate::agent::AgentCtx::packet`], which fills
/// in the addressing; the simulator fills `uid` and moves the value through queues and links.
#[derive(Clone, Debug, PartialEq)]
pub struct Packet {
    /// Unique id across the run (NS-2 trace field 12).
    pub uid: u64,
    /// Flow the packet belongs to.
    pub flow: FlowId,
    /// Direction along the flow, which picks the agent it is delivered to.
    pub dir: Direction,
    /// Node the packet was sent from.
    pub src: NodeId,
    /// Node the packet is addressed to.
    pub dst: NodeId,
    /// Type, for traces and metrics.
    pub kind: PacketKind,
    /// Size on the wire in bytes, all headers included: serialisation uses it.
    pub size: u32,
    /// Application payload bytes (for goodput); 0 for control packets.
    pub payload: u32,
    /// Sequence number printed in traces (NS-2 field 11).
    pub seq: i64,
    /// When the sending agent created the packet (for end-to-end delay).
    pub sent_at: Time,
    /// Remaining IP TTL; decremented per hop, dropped with cause `Ttl` at zero.
    pub ttl: u8,
    /// TTL the packet was sent with.
    pub initial_ttl: u8,
    /// ECN-capable transport.
    pub ect: bool,
    /// Congestion experienced (set by an AQM that marks instead of dropping).
    pub ce: bool,
    /// Protected: the sender sealed it (seed 000's E6, `docs/variants.md`); crossing an
    /// untrusted node unprotected is counted.
    pub protected: bool,
    /// Crossed a node marked untrusted while unprotected (set by the simulator).
    pub exposed: bool,
    /// Protocol header.
    pub header: Header,
}

/// Default IP TTL, NS-2's `ttl_` (32).
pub const DEFAULT_TTL: u8 = 32;
