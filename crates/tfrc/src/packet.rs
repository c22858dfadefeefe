//! The information TFRC packets carry (RFC 5348 §3.2), as typed values.
//!
//! These are what the sender and receiver exchange through the sans-IO API. Their byte encoding
//! lives in [`crate::wire`].

use core::time::Duration;

use crate::Time;

/// The fields of a TFRC data packet (RFC 5348 §3.2.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataHeader {
    /// Sequence number, +1 per data packet from 0 (§3.2.1, §5.1).
    pub seq: u64,
    /// Send timestamp (§3.2.1).
    pub timestamp: Time,
    /// The sender's current RTT estimate R_i (§3.2.1); zero while the sender has no estimate.
    pub rtt: Duration,
    /// The sender's t_RTO (NS-2 carries `tzero` for the receiver's equation inversion).
    pub t_rto: Duration,
    /// The segment size s the sender's equation uses, in bytes.
    pub segment_size: u32,
    /// Feedback rounds the sender has seen (NS-2's `round_id`, for its loss-event gate).
    pub round: u32,
    /// Ask the receiver to answer this packet at once (NS-2's `UrgentFlag`).
    pub urgent: bool,
    /// The IP TTL the packet was sent with (E5: the receiver reports the hop count).
    pub initial_ttl: u8,
}

/// The fields of a TFRC feedback packet (RFC 5348 §3.2.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Feedback {
    /// t_recvdata: the timestamp of the last data packet received (§3.2.2).
    pub timestamp_echo: Time,
    /// t_delay: time between receiving that packet and generating this report (§3.2.2).
    pub elapsed: Duration,
    /// X_recv: the rate at which data was received over the last RTT, bytes/s of segment
    /// (§3.2.2). The `ns2` profile measures packets/s and reports them times s (`docs/tfrc-core.md`
    /// N23).
    pub x_recv: f64,
    /// p: the receiver's loss event rate (§3.2.2).
    pub p: f64,
    /// Highest sequence number received so far.
    pub highest_seq: u64,
    /// Hop count of the last data packet (initial TTL − received TTL), when known (E5).
    pub hops: Option<u8>,
    /// Losses the receiver classified as link errors (seed 002's "wireless" class) since its
    /// previous report, saturating; always 0 without a classifier. The sender's E2 rescales
    /// t_RTO on a non-zero count.
    pub link_errors: u32,
    /// j: packets lost or marked per loss event, a weighted mean over recent events, which
    /// MulTFRC's equation needs (draft-irtf-iccrg-multfrc-01, `docs/variants.md`); 1 when the
    /// receiver does not measure it. Wire format version 2 does not carry it (it decodes as 1).
    pub lost_per_event: f64,
}
