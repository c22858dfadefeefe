//! Tahoe loss recovery (NS-2's base `TcpAgent::recv` and `dupack_action`): on the
//! `numdupacks_`-th duplicate ACK, halve ssthresh, close cwnd to one and go back to the first
//! unacknowledged packet; later duplicates do nothing. With `bugFix_`, no second fast
//! retransmit until the ACKs pass the highest packet sent at the first (`recover_`).

use crate::agent::AgentCtx;

use super::{CwndAction, CwndCut, Slowdown, TcpSender};

impl TcpSender {
    /// `TcpAgent::recv()` for an ACK of `ack`.
    pub(crate) fn tahoe_recv(&mut self, ack: i64, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        if ack > self.last_ack {
            self.recv_newack_helper(ack, now);
            self.after_first_ack();
        } else if ack == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == i64::from(self.cfg.num_dupacks) && !self.cfg.no_fast_retrans {
                self.tahoe_dupack_action(ctx);
            } else if self.dupacks < i64::from(self.cfg.num_dupacks) && self.cfg.singledup {
                self.send_one(ctx);
            }
        }
        // Old ACKs also try to send under aggressive_maxburst_ (NS-2's default).
        if ack >= self.last_ack || self.cfg.aggressive_maxburst {
            self.send_much(false, self.cfg.max_burst, ctx);
        }
    }

    /// `TcpAgent::dupack_action()`.
    fn tahoe_dupack_action(&mut self, ctx: &mut AgentCtx<'_>) {
        // highest_ack_ == 0: the first data packet after the SYN was lost.
        let allowed =
            self.fast_retransmit_allowed() || (self.cfg.bugfix_ss && self.highest_ack == 0);
        if !allowed {
            if self.ecn_dupack() {
                // This window was cut by ECN: back to one packet, go-back-N, ssthresh kept.
                self.slowdown(Slowdown {
                    ssthresh_half: false,
                    cwnd: CwndCut::One,
                });
                self.reset_rtx_timer(ctx.now(), false, false);
                return;
            }
            if self.cfg.bug_fix {
                return;
            }
        }
        self.recover = self.maxseq;
        self.last_cwnd_action = CwndAction::DupAck;
        self.stats.fast_retransmits += 1;
        self.slowdown(Slowdown {
            ssthresh_half: true,
            cwnd: CwndCut::One,
        });
        self.reset_rtx_timer(ctx.now(), false, false);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::TcpVariant;

    #[test]
    fn three_dupacks_retransmit_and_close_cwnd_to_one() {
        let mut h = sender(TcpVariant::Tahoe, 100);
        open(&mut h, 4); // cwnd 6, sent up to 10, highest ack 4
                         // Packet 5 lost: 6.. arrive and produce duplicate ACKs of 4.
                         // Dupacks 1 and 2: singledup_ sends one new packet each if cwnd + dupacks allows.
        let d1 = h.at_ms(110.0).deliver(ack(4));
        assert_eq!(seqs(&d1), vec![11]);
        let d2 = h.at_ms(111.0).deliver(ack(4));
        assert_eq!(seqs(&d2), vec![12]);
        let d3 = h.at_ms(112.0).deliver(ack(4));
        assert_eq!(seqs(&d3), vec![5], "fast retransmit of the first hole");
        assert_eq!(h.agent.cwnd(), 1.0);
        assert_eq!(h.agent.ssthresh(), 3);
        assert_eq!(h.agent.stats().fast_retransmits, 1);
        // Further duplicates send nothing: window one, t_seqno_ = 6.
        assert!(h.at_ms(113.0).deliver(ack(4)).is_empty());
        assert!(h.at_ms(114.0).deliver(ack(4)).is_empty());
        // The retransmission fills the hole: cumulative ACK 12; slow start from 1 resumes at 13
        // (go-back-N: t_seqno_ jumps forward to the ACK).
        let after = h.at_ms(200.0).deliver(ack(12));
        assert_eq!(h.agent.cwnd(), 2.0);
        assert_eq!(seqs(&after), vec![13, 14]);
    }

    #[test]
    fn go_back_n_resends_after_partial_ack() {
        let mut h = sender(TcpVariant::Tahoe, 100);
        open(&mut h, 4);
        for t in 0..3 {
            h.at_ms(110.0 + t as f64).deliver(ack(4));
        }
        // Packets 5 and 8 were lost: the retransmitted 5 brings ACK 7; Tahoe then sends 8 and 9
        // (cwnd 2), resending 9 although the receiver may already hold it.
        let after = h.at_ms(200.0).deliver(ack(7));
        assert_eq!(seqs(&after), vec![8, 9]);
    }

    #[test]
    fn bugfix_allows_one_fast_retransmit_per_window() {
        let mut h = sender(TcpVariant::Tahoe, 100);
        open(&mut h, 4);
        for t in 0..3 {
            h.at_ms(110.0 + t as f64).deliver(ack(4));
        }
        // recover_ = 12. ACK 7 (below recover_) then three duplicates of it: no second fast
        // retransmit (the rest of the old window is assumed lost with it).
        h.at_ms(200.0).deliver(ack(7));
        let cuts = h.agent.stats().cwnd_cuts;
        for t in 0..3 {
            h.at_ms(210.0 + t as f64).deliver(ack(7));
        }
        assert_eq!(h.agent.stats().cwnd_cuts, cuts);
        assert_eq!(h.agent.stats().fast_retransmits, 1);
        // Once past recover_, three duplicates retransmit again.
        h.at_ms(300.0).deliver(ack(13));
        for t in 0..3 {
            h.at_ms(310.0 + t as f64).deliver(ack(13));
        }
        assert_eq!(h.agent.stats().fast_retransmits, 2);
    }

    #[test]
    fn first_data_packet_loss_allows_fast_retransmit() {
        let mut h = sender(TcpVariant::Tahoe, 100);
        h.at_ms(0.0).start();
        h.at_ms(100.0).deliver(ack(0)); // sends 1, 2; highest_ack_ 0 = recover_
        h.agent.cwnd = 10.0;
        h.at_ms(101.0).deliver(ack(0));
        h.at_ms(102.0).deliver(ack(0));
        let fr = h.at_ms(103.0).deliver(ack(0));
        assert_eq!(
            seqs(&fr),
            vec![1],
            "bugfix_ss_: highest_ack_ == 0 allows it"
        );
    }

    #[test]
    fn singledup_respects_cwnd_plus_dupacks() {
        let mut h = sender(TcpVariant::Tahoe, 100);
        open(&mut h, 4); // cwnd 6, t_seqno_ 11 = highest_ack_ + cwnd_ + 1
                         // t_seqno_ (11) <= 4 + 6 + 1: one packet.
        assert_eq!(seqs(&h.at_ms(110.0).deliver(ack(4))), vec![11]);
        let mut h = sender(TcpVariant::Tahoe, 100);
        open(&mut h, 4);
        h.agent.cwnd = 4.0; // 11 > 4 + 4 + 1: nothing
        assert!(h.at_ms(110.0).deliver(ack(4)).is_empty());
    }
}
