//! The IPv4 header fields the emulator reads (addresses, ECN, the fields that identify a
//! packet from hop to hop) and the one it writes: congestion experienced (RFC 3168 §5), with
//! the header checksum recomputed (RFC 791 §3.1).

use std::net::Ipv4Addr;

/// Protocol numbers.
pub const PROTO_TCP: u8 = 6;
/// UDP.
pub const PROTO_UDP: u8 = 17;

/// What the emulator reads from an IPv4 header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    /// Header length in bytes (IHL · 4).
    pub header_len: usize,
    /// Total length field.
    pub total_len: usize,
    /// The ECN field (the two low bits of the TOS byte): 0 not ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    pub ecn: u8,
    /// Identification.
    pub id: u16,
    /// Protocol.
    pub proto: u8,
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
}

impl Ipv4 {
    /// Parse the header at the start of `p`; `None` for anything but a well-formed IPv4
    /// header.
    pub fn parse(p: &[u8]) -> Option<Ipv4> {
        if p.len() < 20 || p[0] >> 4 != 4 {
            return None;
        }
        let header_len = usize::from(p[0] & 0x0f) * 4;
        let total_len = usize::from(u16::from_be_bytes([p[2], p[3]]));
        if header_len < 20 || header_len > p.len() || total_len < header_len {
            return None;
        }
        Some(Ipv4 {
            header_len,
            total_len,
            ecn: p[1] & 3,
            id: u16::from_be_bytes([p[4], p[5]]),
            proto: p[9],
            src: Ipv4Addr::new(p[12], p[13], p[14], p[15]),
            dst: Ipv4Addr::new(p[16], p[17], p[18], p[19]),
        })
    }

    /// An ECN-capable transport (ECT(0) or ECT(1)).
    pub fn ect(&self) -> bool {
        matches!(self.ecn, 1 | 2)
    }

    /// The transport header and payload.
    pub fn l4<'a>(&self, p: &'a [u8]) -> &'a [u8] {
        &p[self.header_len.min(p.len())..self.total_len.min(p.len())]
    }

    /// What identifies this packet on every hop: addresses, protocol, identification and the
    /// transport checksum (routers change TTL and the header checksum only).
    pub fn hop_key(&self, p: &[u8]) -> HopKey {
        let l4 = self.l4(p);
        let csum = match self.proto {
            PROTO_TCP if l4.len() >= 18 => u16::from_be_bytes([l4[16], l4[17]]),
            PROTO_UDP if l4.len() >= 8 => u16::from_be_bytes([l4[6], l4[7]]),
            _ => 0,
        };
        HopKey {
            src: u32::from(self.src),
            dst: u32::from(self.dst),
            proto: self.proto,
            id: self.id,
            csum,
        }
    }
}

/// See [`Ipv4::hop_key`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HopKey {
    src: u32,
    dst: u32,
    proto: u8,
    id: u16,
    csum: u16,
}

/// RFC 791's header checksum of `h` (the checksum field taken as zero).
pub fn header_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, w) in h.chunks(2).enumerate() {
        if i == 5 {
            continue; // the checksum field itself
        }
        let hi = u32::from(w[0]) << 8;
        let lo = w.get(1).map_or(0, |&b| u32::from(b));
        sum += hi | lo;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Mark an ECN-capable packet congestion experienced (RFC 3168 §5: "the router sets the CE
/// codepoint"), fixing the header checksum. Returns false (and changes nothing) when the
/// packet is not ECT or not IPv4.
pub fn mark_ce(p: &mut [u8]) -> bool {
    let Some(h) = Ipv4::parse(p) else {
        return false;
    };
    if !h.ect() {
        return false;
    }
    p[1] |= 3;
    let c = header_checksum(&p[..h.header_len]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 20-byte ICMP header from 10.0.0.1 to 10.0.0.2, id 0x1c46, DF, TTL 64, padded to its
    /// total length.
    fn header(tos: u8) -> Vec<u8> {
        let mut h = vec![
            0x45, tos, 0x00, 0x54, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x01, 0, 0, 10, 0, 0, 1, 10, 0, 0,
            2,
        ];
        let c = header_checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h.resize(0x54, 0);
        h
    }

    /// The Internet checksum of a header including its checksum field is zero.
    fn verifies(h: &[u8]) -> bool {
        let mut sum: u32 = 0;
        for w in h.chunks(2) {
            sum += (u32::from(w[0]) << 8) | u32::from(w[1]);
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum == 0xffff
    }

    #[test]
    fn checksum_of_a_known_header() {
        let h = header(0);
        // By hand: 0x4500 + 0x0054 + 0x1c46 + 0x4000 + 0x4001 + 0x0a00 + 0x0001 + 0x0a00 +
        // 0x0002 = 0xf59e (no carry); its complement is 0x0a61.
        assert_eq!(u16::from_be_bytes([h[10], h[11]]), 0x0a61);
        assert!(verifies(&h[..20]));
    }

    #[test]
    fn ce_mark_only_on_ect_and_checksum_stays_valid() {
        for (tos, marks) in [(0x00, false), (0x01, true), (0x02, true), (0xb8 | 2, true)] {
            let mut p = header(tos);
            assert_eq!(mark_ce(&mut p), marks, "tos {tos:#x}");
            assert!(verifies(&p[..20]));
            let ecn = p[1] & 3;
            assert_eq!(ecn, if marks { 3 } else { tos & 3 });
            // DSCP bits untouched.
            assert_eq!(p[1] & !3, tos & !3);
        }
        assert!(!mark_ce(&mut [0x60; 40])); // IPv6
        assert!(!mark_ce(&mut [0x45; 10])); // short
    }

    #[test]
    fn parse_rejects_malformed_headers() {
        let p = header(0);
        let h = Ipv4::parse(&p).unwrap();
        assert_eq!((h.header_len, h.total_len, h.proto), (20, 0x54, 1));
        assert_eq!(h.src, Ipv4Addr::new(10, 0, 0, 1));
        let mut bad = p.clone();
        bad[0] = 0x44; // IHL 4 < 5
        assert!(Ipv4::parse(&bad).is_none());
        let mut bad = p.clone();
        bad[2] = 0;
        bad[3] = 10; // total length below the header's
        assert!(Ipv4::parse(&bad).is_none());
        assert!(Ipv4::parse(&p[..19]).is_none());
    }
}
