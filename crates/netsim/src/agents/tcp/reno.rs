//! Reno loss recovery (NS-2's `RenoTcpAgent`): on the `numdupacks_`-th duplicate ACK,
//! retransmit the first unacknowledged packet, halve cwnd and ssthresh, and inflate the usable
//! window by one packet per further duplicate (`dupwnd_`, RFC 2581 fast recovery). The first new
//! ACK deflates the window back to cwnd and ends recovery, even if it is partial.

use crate::agent::AgentCtx;

use super::{CwndAction, CwndCut, Slowdown, TcpSender};

impl TcpSender {
    /// `RenoTcpAgent::recv()` for an ACK of `ack`.
    pub(crate) fn reno_recv(&mut self, ack: i64, ctx: &mut AgentCtx<'_>) {
        let now = ctx.now();
        let ndup = i64::from(self.cfg.num_dupacks);
        if ack > self.last_ack {
            if self.last_cwnd_action == CwndAction::DupAck {
                self.last_cwnd_action = CwndAction::Exited;
            }
            self.dupwnd = 0;
            self.recv_newack_helper(ack, now);
            self.after_first_ack();
        } else if ack == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == ndup {
                self.reno_dupack_action(false, ctx);
                if !self.cfg.exit_fast_retrans {
                    self.dupwnd = ndup;
                }
            } else if self.dupacks > ndup
                && (!self.cfg.exit_fast_retrans || self.last_cwnd_action == CwndAction::DupAck)
            {
                // Fast recovery: each duplicate means one more packet has left the network.
                self.dupwnd += 1;
            } else if self.dupacks < ndup && self.cfg.singledup {
                self.send_one(ctx);
            }
        }
        if (ack >= self.last_ack || self.cfg.aggressive_maxburst)
            && (self.dupacks == 0 || self.dupacks > ndup - 1)
        {
            self.send_much(false, self.cfg.max_burst, ctx);
        }
    }

    /// `RenoTcpAgent::dupack_action()`, and NewReno's (`newreno` true), which differ only in
    /// whether a fast retransmit is allowed during a previous one's recovery and in the order
    /// of the timer reset.
    pub(crate) fn reno_dupack_action(&mut self, newreno: bool, ctx: &mut AgentCtx<'_>) {
        // Reno may fast-retransmit again while still in (its own idea of) recovery.
        let allow_fr = !newreno && self.last_cwnd_action == CwndAction::DupAck;
        let allowed = self.fast_retransmit_allowed()
            || allow_fr
            || (self.cfg.bugfix_ss && self.highest_ack == 0);
        let now = ctx.now();
        if !allowed {
            if self.ecn_dupack() {
                // This window was cut by ECN: retransmit and inflate, without a second cut.
                self.reset_rtx_timer(now, true, false);
                self.output(self.last_ack + 1, ctx);
                self.dupwnd = i64::from(self.cfg.num_dupacks);
                return;
            }
            if self.cfg.bug_fix {
                return;
            }
        }
        self.recover = self.maxseq;
        if newreno {
            self.reset_rtx_timer(now, true, false);
        }
        self.last_cwnd_action = CwndAction::DupAck;
        self.stats.fast_retransmits += 1;
        self.slowdown(Slowdown {
            ssthresh_half: true,
            cwnd: CwndCut::Half,
        });
        if !newreno {
            self.reset_rtx_timer(now, true, false);
        }
        self.output(self.last_ack + 1, ctx);
        self.dupwnd = i64::from(self.cfg.num_dupacks);
    }

    /// `RenoTcpAgent::timeout()`: leave fast recovery, then the shared timeout.
    pub(crate) fn reno_timeout(&mut self, ctx: &mut AgentCtx<'_>) {
        self.dupwnd = 0;
        self.dupacks = 0;
        if self.cfg.bug_fix {
            self.recover = self.maxseq;
        }
        self.rtx_timeout_common(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::TcpVariant;

    /// Reno/NewReno after `open(.., 6)`: cwnd 8, packets 1..=14 sent, highest ACK 6.
    fn reno_in_flight(variant: TcpVariant) -> Harness<super::TcpSender> {
        let mut h = sender(variant, 100);
        let sent = open(&mut h, 6);
        assert_eq!(*seqs(&sent).last().unwrap(), 14);
        assert_eq!(h.agent.cwnd(), 8.0);
        h
    }

    #[test]
    fn fast_retransmit_halves_cwnd_and_inflates() {
        let mut h = reno_in_flight(TcpVariant::Reno);
        // Packet 7 lost. Dupacks 1, 2: limited transmit of 15 and 16 (no send_much).
        assert_eq!(seqs(&h.at_ms(110.0).deliver(ack(6))), vec![15]);
        assert_eq!(seqs(&h.at_ms(111.0).deliver(ack(6))), vec![16]);
        let fr = h.at_ms(112.0).deliver(ack(6));
        assert_eq!(seqs(&fr), vec![7]);
        assert_eq!(h.agent.cwnd(), 4.0);
        assert_eq!(h.agent.ssthresh(), 4);
        assert_eq!(h.agent.dupwnd(), 3);
        // Window = cwnd + dupwnd = 7 from 6: up to 13 already sent, nothing new.
        // Inflation: dupacks 4..=6 raise the window to 10: new packets only past 16.
        let mut new = Vec::new();
        for t in 0..6 {
            new.extend(seqs(&h.at_ms(113.0 + t as f64).deliver(ack(6))));
        }
        assert_eq!(h.agent.dupwnd(), 9);
        // window = 4 + 9 = 13 → up to 6 + 13 = 19.
        assert_eq!(new, vec![17, 18, 19]);
    }

    #[test]
    fn new_ack_deflates_and_exits_recovery() {
        let mut h = reno_in_flight(TcpVariant::Reno);
        for t in 0..5 {
            h.at_ms(110.0 + t as f64).deliver(ack(6));
        }
        assert!(h.agent.dupwnd() > 0);
        // A partial ACK (9 < recover_ = 16) ends Reno's recovery all the same.
        h.at_ms(200.0).deliver(ack(9));
        assert_eq!(h.agent.dupwnd(), 0);
        assert_eq!(h.agent.dupacks(), 0);
        // cwnd 4 = ssthresh: congestion avoidance, +1/4.
        assert_eq!(h.agent.cwnd(), 4.25);
    }

    #[test]
    fn reno_refast_retransmits_after_exiting_recovery_only_past_recover() {
        let mut h = reno_in_flight(TcpVariant::Reno);
        for t in 0..3 {
            h.at_ms(110.0 + t as f64).deliver(ack(6));
        }
        h.at_ms(200.0).deliver(ack(9)); // exits (last action Exited), below recover_ = 16
        for t in 0..3 {
            h.at_ms(210.0 + t as f64).deliver(ack(9));
        }
        assert_eq!(h.agent.stats().fast_retransmits, 1, "bugFix_ blocks it");
    }

    #[test]
    fn timeout_clears_inflation() {
        let mut h = reno_in_flight(TcpVariant::Reno);
        for t in 0..5 {
            h.at_ms(110.0 + t as f64).deliver(ack(6));
        }
        let rto = h.wake_next();
        assert_eq!(seqs(&rto), vec![7]);
        assert_eq!(h.agent.dupwnd(), 0);
        assert_eq!(h.agent.dupacks(), 0);
        assert_eq!(h.agent.cwnd(), 1.0);
    }
}
