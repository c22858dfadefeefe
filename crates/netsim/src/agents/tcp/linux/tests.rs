use super::super::test_util::{seqs, Harness};
use super::*;
use crate::packet::{Direction, SackBlocks};
use crate::testing::packet;

fn ack(cum: i64, blocks: &[(i64, i64)]) -> Packet {
    let mut sack = SackBlocks::default();
    for &(l, r) in blocks {
        sack.push(l, r);
    }
    Packet {
        kind: PacketKind::Ack,
        dir: Direction::Reverse,
        payload: 0,
        header: Header::Tcp(TcpHeader {
            seqno: cum,
            sack,
            ..TcpHeader::default()
        }),
        ..packet(cum, 52)
    }
}

fn sender(cc: LinuxCc) -> Harness<LinuxTcpSender> {
    let mut h = Harness::new(
        LinuxTcpSender::new(LinuxTcpConfig::new(cc)),
        Direction::Forward,
    );
    let syn = h.at_ms(0.0).start();
    assert_eq!(seqs(&syn), vec![0]);
    assert_eq!(syn[0].size, 60);
    h
}

/// The SYN-ACK 20 ms later: the initial window of 10 goes out.
fn established(cc: LinuxCc) -> Harness<LinuxTcpSender> {
    let mut h = sender(cc);
    let iw = h.at_ms(20.0).deliver(ack(0, &[]));
    assert_eq!(seqs(&iw), (1..=10).collect::<Vec<_>>());
    assert!(iw.iter().all(|p| p.size == 1500 && p.payload == 1448));
    assert_eq!(h.agent.srtt_us(), 20_000);
    h
}

#[test]
fn the_initial_buffer_is_written_two_segments_at_a_time_with_psh() {
    let mut h = sender(LinuxCc::Cubic);
    let iw = h.at_ms(20.0).deliver(ack(0, &[]));
    let psh: Vec<i64> = iw
        .iter()
        .filter_map(|p| match &p.header {
            Header::Tcp(t) if t.psh => Some(t.seqno),
            _ => None,
        })
        .collect();
    assert_eq!(psh, vec![2, 4, 6, 8, 10]);
}

#[test]
fn initial_window_and_slow_start_per_packet_acknowledged() {
    let mut h = established(LinuxCc::Reno);
    // A delayed ACK covering two packets: cwnd 12, four packets out.
    let out = h.at_ms(40.0).deliver(ack(2, &[]));
    assert_eq!(h.agent.cwnd(), 12);
    assert_eq!(seqs(&out), vec![11, 12, 13, 14]);
    assert_eq!(h.agent.in_flight(), 12);
}

#[test]
fn rto_is_srtt_plus_200ms_and_resets_to_one_packet() {
    let mut h = established(LinuxCc::Cubic);
    // The RTO (TLP first: 2·srtt + 2 ms ≈ 42 ms, then the RTO).
    let probe = h.wake_next();
    assert_eq!(seqs(&probe), vec![11], "the loss probe sends new data");
    assert!(
        h.now.as_secs_f64() > 0.060 && h.now.as_secs_f64() < 0.075,
        "{}",
        h.now
    );
    let probe_at = h.now.as_secs_f64();
    let rtx = h.wake_next();
    assert_eq!(seqs(&rtx), vec![1]);
    // RTO = srtt + max(2·srtt, 200 ms) = 220 ms, restarted when the probe left; the timer
    // fires on the jiffy bucket after it (4 ms jiffies).
    let rto = h.now.as_secs_f64() - probe_at;
    assert!((0.220..=0.229).contains(&rto), "{rto}");
    assert_eq!(h.agent.ca_state(), CaState::Loss);
    assert_eq!(h.agent.cwnd(), 1);
    assert_eq!(h.agent.ssthresh(), 10 * 717 / 1024);
    assert_eq!(h.agent.stats().timeouts, 1);
}

#[test]
fn rack_starts_recovery_on_the_third_sack_and_prr_paces_the_reduction() {
    let mut h = established(LinuxCc::Reno);
    // Packet 1 lost; 2, 3, 4 SACKed one by one.
    let a = h.at_ms(40.0).deliver(ack(0, &[(2, 3)]));
    assert_eq!(h.agent.ca_state(), CaState::Disorder);
    assert_eq!(
        seqs(&a),
        vec![11],
        "a SACKed packet left the network: one new one"
    );
    h.at_ms(40.1).deliver(ack(0, &[(2, 4)]));
    assert_eq!(h.agent.ca_state(), CaState::Disorder);
    let c = h.at_ms(40.2).deliver(ack(0, &[(2, 5)]));
    assert_eq!(h.agent.ca_state(), CaState::Recovery);
    assert_eq!(h.agent.ssthresh(), 5);
    assert_eq!(seqs(&c), vec![1], "the hole first");
    // PRR: in flight 10 − 3 SACKed − 1 lost + 1 resent = 7 > ssthresh 5: about one packet
    // out per two delivered.
    let mut sent = 0;
    for k in 0..5 {
        sent += h
            .at_ms(41.0 + k as f64)
            .deliver(ack(0, &[(2, 6 + k)]))
            .len();
    }
    assert_eq!(sent, 2, "5 delivered × 5/10");
    // The retransmission is acknowledged with everything: recovery ends at ssthresh.
    h.at_ms(60.0).deliver(ack(12, &[]));
    assert_eq!(h.agent.ca_state(), CaState::Open);
    assert_eq!(h.agent.cwnd(), 5);
    assert_eq!(h.agent.stats().timeouts, 0);
}

#[test]
fn one_sack_waits_a_quarter_rtt_before_declaring_loss() {
    let mut h = established(LinuxCc::Cubic);
    h.at_ms(40.0).deliver(ack(0, &[(2, 3)]));
    // RACK's reordering window: min_rtt/4 = 5 ms (+ 2 jiffies), on the reordering timer.
    let (_, t) = h.next_timer().expect("reordering timer");
    let wait = t.as_secs_f64() * 1000.0 - 40.0;
    assert!((5.0..=20.0).contains(&wait), "{wait}");
    let out = h.wake_next();
    assert_eq!(h.agent.ca_state(), CaState::Recovery);
    assert_eq!(seqs(&out), vec![1]);
}

#[test]
fn frto_undoes_a_spurious_timeout() {
    let mut h = established(LinuxCc::Reno);
    h.wake_next(); // loss probe: 11
    h.wake_next(); // RTO: 1 again
    assert_eq!(h.agent.ca_state(), CaState::Loss);
    // The original 1..=11 were only delayed: the ACK covers them all, never-retransmitted
    // data included.
    h.at_ms(300.0).deliver(ack(3, &[]));
    h.at_ms(300.1).deliver(ack(11, &[]));
    assert_eq!(h.agent.ca_state(), CaState::Open);
    assert_eq!(h.agent.linux_stats().frto_undos, 1);
    assert!(h.agent.cwnd() >= 10, "{}", h.agent.cwnd());
}

proptest::proptest! {
    /// Arbitrary ACKs, SACK blocks and wake-ups never panic and keep the counters sane.
    #[test]
    fn arbitrary_acks_keep_invariants(
        cubic in proptest::bool::ANY,
        events in proptest::collection::vec((0u8..3, 0i64..40, 0i64..12, 0i64..6, 0u64..50), 1..200),
    ) {
        let mut h = established(if cubic { LinuxCc::Cubic } else { LinuxCc::Reno });
        let mut ms = 20.0;
        for (kind, a, l, len, dt) in events {
            ms += dt as f64;
            h.at_ms(ms);
            match kind {
                0 => drop(h.wake_next()),
                _ => {
                    let una = h.agent.snd_una();
                    let cum = (una - 1 + a % 8).min(h.agent.snd_nxt() - 1);
                    let l = cum + 1 + l;
                    drop(h.deliver(ack(cum, &[(l, l + len)])));
                }
            }
            proptest::prop_assert!(h.agent.cwnd() >= 1);
            let q = &h.agent.q;
            proptest::prop_assert!(q.sacked_out() + q.lost_out() <= q.packets_out());
            proptest::prop_assert!(q.retrans_out() <= q.packets_out());
            ms = h.now.as_secs_f64() * 1000.0;
        }
    }
}
