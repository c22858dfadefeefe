//! NewReno loss recovery (NS-2's `NewRenoTcpAgent`, RFC 2582): Reno's fast retransmit and
//! window inflation, but recovery lasts until the ACKs reach `recover_` (the highest packet
//! sent when it began). A partial ACK below it retransmits the next hole at once, deflates the
//! window by the amount acknowledged minus one (`partial_window_deflation_`) and restarts the
//! timer (only for the first partial ACK, `newreno_changes1_`). While recovering, each ACK may
//! send at most two packets.

use crate::agent::AgentCtx;

use super::{CwndAction, TcpSender};

impl TcpSender {
    /// `NewRenoTcpAgent::recv()` for an ACK of `ack` (with `newreno_changes_` 0, NS-2's
    /// default).
    pub(crate) fn newreno_recv(&mut self, ack: i64, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        let ndup = i64::from(self.cfg.num_dupacks);
        if ack > self.last_ack {
            if ack >= self.recover || self.last_cwnd_action != CwndAction::DupAck {
                // A full ACK (or not recovering): leave recovery.
                if self.dupwnd > 0 {
                    self.dupwnd = 0;
                    if self.last_cwnd_action == CwndAction::DupAck {
                        self.last_cwnd_action = CwndAction::Exited;
                    }
                    if self.cfg.exit_recovery_fix {
                        let outstanding = self.maxseq - ack + 1;
                        self.cwnd = self.ssthresh.min(outstanding) as f64;
                    }
                }
                self.first_partial = false;
                self.recv_newack_helper(ack, now);
                self.after_first_ack();
            } else {
                // A partial ACK: stay in fast recovery.
                if !self.cfg.partial_window_deflation {
                    self.dupwnd = 0;
                }
                self.partial_new_ack(ack, ctx);
            }
        } else if ack == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == ndup {
                self.reno_dupack_action(true, ctx);
                if !self.cfg.exit_fast_retrans {
                    self.dupwnd = ndup;
                }
            } else if self.dupacks > ndup
                && (!self.cfg.exit_fast_retrans || self.last_cwnd_action == CwndAction::DupAck)
            {
                self.dupwnd += 1;
            } else if self.dupacks < ndup && self.cfg.singledup {
                self.send_one(ctx);
            }
        }
        if ack >= self.last_ack || self.cfg.aggressive_maxburst {
            if self.dupacks == 0 {
                self.send_much(false, self.cfg.max_burst, ctx);
            } else if self.dupacks > ndup - 1 {
                // In recovery, at most two packets per ACK.
                self.send_much(false, 2, ctx);
            }
        }
    }

    /// `partialnewack_helper()` + `partialnewack()`: a partial ACK retransmits the next hole.
    /// `dupacks_` is not reset, so later duplicates keep inflating the window.
    fn partial_new_ack(&mut self, ack: i64, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        if !self.cfg.newreno_changes1 || !self.first_partial {
            self.first_partial = true;
            self.newtimer(now, ack);
        }
        if self.cfg.partial_window_deflation {
            // Deflate by the packets newly acknowledged, then add back one for the
            // retransmission (RFC 2582 §3 step 5).
            let deflate = ack - self.last_ack;
            if self.dupwnd > deflate {
                self.dupwnd -= deflate - 1;
            } else {
                self.cwnd -= (deflate - self.dupwnd) as f64;
                // Keep dupwnd_ > 0 as the "in fast recovery" flag.
                self.dupwnd = 1;
            }
            if self.cwnd < 1.0 {
                self.cwnd = 1.0;
            }
        }
        self.last_ack = ack;
        self.highest_ack = ack;
        if self.t_seqno < ack + 1 {
            self.t_seqno = ack + 1;
        }
        if self.rtt_active && ack >= self.rtt_seq {
            // Karn: the packet may have been retransmitted, so no RTT sample; end the backoff.
            self.rtt_active = false;
            self.rtt.reset_backoff();
        }
        self.output(self.last_ack + 1, ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::{TcpSender, TcpVariant};

    /// After `open(.., 6)`, lose 7 and 10: 3 dupacks trigger the fast retransmit of 7.
    fn in_recovery() -> Harness<TcpSender> {
        let mut h = sender(TcpVariant::NewReno, 100);
        open(&mut h, 6); // cwnd 8, sent 1..=14
        h.at_ms(110.0).deliver(ack(6)); // sends 15
        h.at_ms(111.0).deliver(ack(6)); // sends 16
        let fr = h.at_ms(112.0).deliver(ack(6));
        assert_eq!(seqs(&fr), vec![7]);
        assert_eq!(h.agent.cwnd(), 4.0);
        assert_eq!(h.agent.dupwnd(), 3);
        h
    }

    #[test]
    fn partial_ack_retransmits_next_hole_and_stays_in_recovery() {
        let mut h = in_recovery();
        // Duplicates for 8, 9, 11..16 arriving: six more (dupwnd 9).
        for t in 0..6 {
            h.at_ms(113.0 + t as f64).deliver(ack(6));
        }
        assert_eq!(h.agent.dupwnd(), 9);
        let before = h.agent.stats().fast_retransmits;
        // The retransmitted 7 arrives: cumulative ACK 9 (10 lost), below recover_ = 16.
        let sent = h.at_ms(200.0).deliver(ack(9));
        assert_eq!(seqs(&sent)[0], 10, "retransmits the next hole at once");
        assert_eq!(h.agent.stats().fast_retransmits, before);
        // Deflation: 3 newly acked < dupwnd 9: dupwnd -= 3 - 1.
        assert_eq!(h.agent.dupwnd(), 7);
        assert_eq!(h.agent.cwnd(), 4.0);
        assert_eq!(h.agent.dupacks(), 6 + 3, "partial ACKs keep dupacks_");
        // Still recovering: the full ACK exits, with cwnd back to 4 (+ CA growth).
        h.at_ms(300.0).deliver(ack(19));
        assert_eq!(h.agent.dupwnd(), 0);
        assert_eq!(h.agent.dupacks(), 0);
        assert_eq!(h.agent.cwnd(), 4.25);
    }

    #[test]
    fn partial_deflation_larger_than_inflation_cuts_cwnd() {
        let mut h = in_recovery(); // dupwnd 3, cwnd 4
        h.at_ms(200.0).deliver(ack(12)); // 6 newly acked > dupwnd 3
        assert_eq!(h.agent.cwnd(), 1.0, "4 - (6 - 3), floored at 1");
        assert_eq!(h.agent.dupwnd(), 1);
    }

    #[test]
    fn at_most_two_packets_per_ack_in_recovery() {
        let mut h = in_recovery();
        for t in 0..20 {
            h.at_ms(113.0 + t as f64).deliver(ack(6));
        }
        // A partial ACK with a large window: retransmission + at most two new packets.
        let sent = h.at_ms(200.0).deliver(ack(9));
        assert!(sent.len() <= 3, "{:?}", seqs(&sent));
        assert_eq!(seqs(&sent)[0], 10);
    }

    #[test]
    fn first_partial_ack_restarts_timer_only_once() {
        let mut h = in_recovery();
        h.at_ms(200.0).deliver(ack(8));
        let t1 = h.agent.rtx_deadline().unwrap();
        h.at_ms(250.0).deliver(ack(9));
        // newreno_changes1_: the second partial ACK leaves the timer alone.
        assert_eq!(h.agent.rtx_deadline(), Some(t1));
    }

    #[test]
    fn no_second_fast_retransmit_within_recovery() {
        let mut h = in_recovery();
        h.at_ms(200.0).deliver(ack(9));
        for t in 0..3 {
            h.at_ms(210.0 + t as f64).deliver(ack(9));
        }
        assert_eq!(h.agent.stats().fast_retransmits, 1);
    }
}
