//! A sender that loses its core: the queue its return builds is what keeps
//! the link busy through its next absence.

use std::time::{Duration, Instant};

use super::Bbr;
use crate::congestion::delivery_rate::RateSample;

/// How long after the last sample of a packet sent catching up
/// ([`RateSample::sent_catching_up`]) a flow still counts its sender as one
/// that loses its core. A sender sharing its core loses it every few tens of
/// milliseconds (the VM's scheduler slices), so a second spans many absences
/// at any round trip.
const ABSENCE_MEMORY: Duration = Duration::from_secs(1);

impl Bbr {
    /// Notes a sample of a packet sent to make up for the sender's absence
    /// from its core.
    pub(super) fn note_absence(&mut self, now: Instant, rs: &RateSample) {
        if rs.sent_catching_up {
            self.came_back_late_at = Some(now);
        }
    }

    /// Whether this flow is alone (no sibling flows, and no check found
    /// another flow's queue lately) and its sender came back late from an
    /// absence off its core within [`ABSENCE_MEMORY`]: a queue that stands
    /// while it paces at its estimate is then the one its catch-ups build,
    /// and it does not yield to it ([`Self::yield_to_standing_queue`]).
    ///
    /// A sender that loses its core for a few milliseconds leaves the link
    /// idle unless the bottleneck holds as much queue, and its pacer makes
    /// up for the absence on its return ([`crate::pacer`]): that burst is
    /// the queue that carries the link through the next absence. A yield
    /// took half its share of the round trip off the rate for the rest of
    /// the Cruise (up to 2 s), and the link stood idle through each
    /// absence: in the simulator a flow alone kept 89.7 % of a 1 Gbit/s ×
    /// 10 ms link over seconds 5-20 from a sender on its core 18 ms, then
    /// off it 2 (92.7 % keeping its queue, 95.2 % with a core of its own);
    /// through `pmdt-wanem` on the 2-vCPU VM, at 100 Mbit/s and 1 Gbit/s ×
    /// 10 ms, lossless and at 0.1 % loss, 87.9-92.5 % (94.1-94.9 % keeping it; docs/RESULTS.md,
    /// session 83). Lifting the yield once a
    /// check found the queue the flow's own, or not yielding while a check
    /// was under way, did the same for such a sender, but a flow whose
    /// sender has a core of its own needs the yield: a CUBIC flow joining it
    /// through a shallow buffer keeps a queue that drains within a check,
    /// and the yield is the room it grows into (BBR took 77.1-79.6 % of the
    /// link beside it without the yield, 70.0 % with it).
    ///
    /// One late wake-up in a second is enough: a sender on a core of its own
    /// that stalls once (an application's own work between polls) keeps its
    /// queue for that second, where a CUBIC flow joining would want the
    /// yield; the simulator's dedicated senders are never late, and the VM's
    /// shared ones are late many times a second.
    pub(super) fn alone_with_absences(&self, now: Instant) -> bool {
        self.siblings == 0
            && !self.shares_the_bottleneck(now)
            && self
                .came_back_late_at
                .is_some_and(|t| now.saturating_duration_since(t) < ABSENCE_MEMORY)
    }
}
