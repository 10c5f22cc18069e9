//! A flow ahead of its siblings beside a loss-based flow gives way to it.
//!
//! The endpoint compares the delivery of its flows to one host at most
//! every 100 ms (`endpoint::path_shares`) and tells a model-based flow
//! beside a loss-based one that it is ahead when it delivered more than
//! 1.2 times their average ([`ShareOnPath::Ahead`]: with two flows, over
//! 60 % of their sum), while the loss-based flows delivered a share (5 % of
//! the host's bytes at least: an idle one is no competitor). Such a flow
//! shares the bottleneck with the loss-based flow whatever its checks of
//! whose queue stands found (`QueueOwner`), and already has the larger part
//! of it:
//! - while a queue stands (the link is busy), it does not start a probe
//!   (unless its estimate grew), climb above its estimate, or regrow
//!   `inflight_hi` after a cut: any of them could only take from the flow
//!   behind ([`Bbr::holds_back_ahead`]). The hold ends when the flow is
//!   level again (the endpoint's next check) or the queue goes: a flow
//!   ahead is above the average, so it never holds back below it;
//! - it cuts `inflight_hi` to a shared queue's overflow as a flow whose
//!   check found another flow's queue does
//!   ([`Bbr::ahead_beside_loss_based`]): multiplicative decrease, as the
//!   loss-based flow's own.
//!
//! Level again, or with no queue (the link has room, or the loss-based
//! flow is held back by something else: its window, random loss), it
//! probes and regrows as before.
//!
//! Beside a CUBIC flow joining through a shallow queue, CUBIC's window
//! regrows after a cut along its cubic curve, seconds to reach its old
//! size at 40 ms, while BBR's probes and regrowth took the room the cut
//! left within a few rounds, and its checks of whose queue stands mostly
//! found the queue its own (it drained when BBR paced a round below its
//! estimate: CUBIC's window was too small to keep one): in the simulator,
//! with the sender on its own core, 128 verdicts of its own against 2 of
//! another flow's over 60 s. BBR kept 65.7 % of the link and CUBIC 31.2 %
//! from 15 s (seed 1); giving way, 57.0 and 39.9 % (55.1-55.3 and
//! 41.7-41.9 % at seeds 2 and 3, 56.0-57.0 and 40.0-41.0 % before). Through
//! `pmdt-wanem` (CUBIC joining BBR through 1 MiB at 1 Gbit/s × 40 ms, both
//! from one sender) see docs/RESULTS.md, "Session 108".

use super::shared_queue::PROBE_PUT_OFF_QUEUE;
use super::Bbr;
use crate::connection::ShareOnPath;

impl Bbr {
    /// Whether this flow holds back its probes, its climbs above the
    /// estimate and its regrowth of `inflight_hi`: it is ahead of its
    /// siblings beside a loss-based flow ([`Self::ahead_beside_loss_based`])
    /// and the last round's every RTT showed a queue
    /// ([`PROBE_PUT_OFF_QUEUE`]: the link is busy).
    pub(super) fn holds_back_ahead(&self) -> bool {
        self.ahead_beside_loss_based()
            && self.queue_in(self.prev_round_min_rtt) > PROBE_PUT_OFF_QUEUE
    }

    /// Whether the endpoint found this flow ahead of its siblings beside a
    /// loss-based flow ([`ShareOnPath::Ahead`]): it shares the bottleneck
    /// with that flow, whatever its checks found, and cuts to a shared
    /// queue's overflow ([`Self::cut_for_shared_queue`]).
    pub(super) fn ahead_beside_loss_based(&self) -> bool {
        self.share_on_path == ShareOnPath::Ahead
    }
}
