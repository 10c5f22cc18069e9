//! A sender that loses its core stops all its flows at once: which RTT
//! samples show the queue they share.

use super::Bbr;
use crate::congestion::delivery_rate::RateSample;

impl Bbr {
    /// Whether `rs` is of a packet sent to make up for the sender's absence
    /// from its core ([`RateSample::sent_catching_up`]) while this flow has
    /// siblings (other connections of its endpoint to the same host): such a
    /// sample's RTT does not count towards the round's smallest, which is
    /// what says whether a queue stands and whose it is.
    ///
    /// While the sender is away, every one of its flows stops, and the
    /// bottleneck drains the queue they keep together; the first packets sent
    /// on its return see that much less of it, whoever keeps it. A round's
    /// smallest RTT took that dip for the queue: checks of whose queue it is
    /// found the flow's own, and sibling flows that joined at different times
    /// never cut, climbed or waited for each other, and kept the shares their
    /// joining left them. In the simulator's four flows joining 1 Gbit/s ×
    /// 40 ms 2 s apart from a sender on its core 14 ms, then off it 6 ms
    /// (`SIM_SENDER_CORE=14,6`), Jain over the last 10 s for seeds 1-12: 0.52-0.98,
    /// mean 0.80 (10 under 0.95); with the dips left out, 0.92-1.00, mean
    /// 0.97 (2 under 0.95). On 17 ms and off 3: 0.90 (6 under) and 0.98 (1).
    ///
    /// Only beside siblings: a flow alone needs a queue as deep as the
    /// sender's absences to keep the link busy through them, and the dip is
    /// what stands beyond that. Left out for a flow alone too, its checks
    /// took that queue for another flow's: alone at 1 Gbit/s × 10 ms from a
    /// sender on its core 6 ms and off 4, it carried 81 % of the link
    /// instead of 96 %, and at 40 ms (on 14, off 6) a bottleneck's rise from
    /// 200 Mbit/s back to 1 Gbit/s was found 5.6 s late instead of 1.0 s.
    pub(super) fn paused_with_siblings(&self, rs: &RateSample) -> bool {
        rs.sent_catching_up.is_some() && self.siblings > 0
    }
}
