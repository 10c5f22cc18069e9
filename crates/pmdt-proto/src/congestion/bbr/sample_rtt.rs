//! Which RTT of a sample the flow reads its queue from.

use std::time::Duration;

use super::Bbr;
use crate::congestion::delivery_rate::RateSample;

impl Bbr {
    /// The sample's RTT for the round's smallest, the minimum RTT and the
    /// queue checks: the path's ([`RateSample::rtt`]: a sender that read the
    /// ack late adds nothing) for a flow alone; beside siblings (other
    /// connections of its endpoint to the same host) the RTT as read.
    ///
    /// Beside siblings the checks of whose queue stands and the shared cuts
    /// that even flows out were built on the RTT as read, and read the path's
    /// they shared less evenly: the simulator's four flows joining 1 Gbit/s
    /// × 40 ms 2 s apart (`sim_adapt_cells`, seeds 1-28) from a mean Jain of
    /// 0.9727 (5 under 0.95, the lowest 0.927) to 0.9658 with the path's RTT
    /// and 0.9604 (7, 0.823) with the standing RTT too. A sender's absence
    /// and a receiver's late batches hit its sibling flows alike.
    pub(super) fn sample_rtt(&self, rs: &RateSample) -> Duration {
        if self.siblings > 0 {
            rs.raw_rtt
        } else {
            rs.rtt
        }
    }

    /// The sample's RTT for checks made sample by sample (a ProbeBW Up's end
    /// and queued count, a probe's rate filter, Startup's loss): the standing
    /// RTT ([`RateSample::standing_rtt`]: a receiver's late batch is no
    /// queue) for a flow alone, the RTT as read beside siblings (see
    /// [`Bbr::sample_rtt`]).
    pub(super) fn sample_standing_rtt(&self, rs: &RateSample) -> Duration {
        if self.siblings > 0 {
            rs.raw_rtt
        } else {
            rs.standing_rtt
        }
    }
}
