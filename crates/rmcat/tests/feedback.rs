//! The feedback formats: every message round-trips through its bytes, its wire length is its
//! encoded length, and no byte string makes a decoder panic (the fuzz targets under
//! `crates/rmcat/fuzz` run the same properties unbounded). Budget: about a second.

use proptest::prelude::*;
use rmcat::feedback::rfc8888::{PacketMetric, ReportBlock};
use rmcat::feedback::twcc::TwccStatus;
use rmcat::feedback::{CcfbReport, TwccFeedback};

fn metric() -> impl Strategy<Value = PacketMetric> {
    prop_oneof![
        Just(PacketMetric::LOST),
        (0u8..4, 0u16..0x2000).prop_map(|(ecn, ato)| PacketMetric {
            received: true,
            ecn,
            ato
        }),
    ]
}

fn status() -> impl Strategy<Value = TwccStatus> {
    prop_oneof![
        Just(TwccStatus::NotReceived),
        (0i16..=255).prop_map(TwccStatus::Received),
        any::<i16>().prop_map(TwccStatus::Received),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn rfc8888_round_trips(ssrc in any::<u32>(), rts in any::<u32>(),
                           blocks in prop::collection::vec((any::<u32>(), any::<u16>(), prop::collection::vec(metric(), 0..40)), 0..3)) {
        let r = CcfbReport {
            sender_ssrc: ssrc,
            blocks: blocks.into_iter().map(|(m, b, v)| ReportBlock { media_ssrc: m, begin_seq: b, metrics: v }).collect(),
            report_timestamp: rts,
        };
        let bytes = r.encode();
        prop_assert_eq!(bytes.len(), r.wire_len());
        prop_assert_eq!(bytes.len() % 4, 0);
        prop_assert_eq!(CcfbReport::decode(&bytes).unwrap(), r);
    }

    #[test]
    fn twcc_round_trips(base in any::<u16>(), rt in -(1i32 << 23)..(1i32 << 23), n in any::<u8>(),
                        packets in prop::collection::vec(status(), 0..200)) {
        let f = TwccFeedback { sender_ssrc: 1, media_ssrc: 2, base_seq: base, reference_time: rt, fb_pkt_count: n, packets };
        let bytes = f.encode();
        prop_assert_eq!(bytes.len(), f.wire_len());
        prop_assert_eq!(bytes.len() % 4, 0);
        prop_assert_eq!(TwccFeedback::decode(&bytes).unwrap(), f);
    }

    #[test]
    fn decoders_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = CcfbReport::decode(&bytes);
        let _ = TwccFeedback::decode(&bytes);
    }
}
