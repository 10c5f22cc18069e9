//! Whose queue stands while BBR cruises: this flow's own, or another flow's.
//!
//! Cruising, BBR paces at its estimate. A windowed maximum of delivery rates
//! sits a little above their mean (through `pmdt-wanem`, 0.5-0.8 % above the
//! link's rate), so a flow alone on a path builds a queue slowly: about 0.5 ms
//! a round at 100 ms, over the 2 ms that counts as a standing queue after four
//! or five rounds. A probe's queue can also outlast ProbeBW Down. Another
//! flow's queue (a loss-based flow filling the buffer) looks the same from
//! this flow's samples: by Little's law its flight grows with the queue either
//! way. Taking its own queue for another flow's made a flow alone wait
//! 20-28 rounds between probes (the shared-queue probe wait, 2-2.8 s at
//! 100 ms) instead of 6-8, and a bottleneck that grew back took that long to
//! be found.
//!
//! So the first time a queue stands in a Cruise, the flow asks: it paces one
//! round below its estimate, by as much as the queue it saw, and looks at the
//! smallest RTT of the round after (the packets it sent during the check). A
//! flow alone drains its queue so; a flow with a share `s` of the link drains
//! `s` of it. A queue down to [`OWN_RESIDUE`] of what it was was this flow's
//! own; one that kept more is another flow's. (An absolute test, the queue
//! under the 2 ms that counts as standing, took a CUBIC flow's shallow queue
//! that a flow with half the link halved for this one's: BBR then probed as
//! often as alone and took 81 % of the link from CUBIC in the simulator.)

use std::time::Duration;

/// The check drains this many times the queue the round showed.
const DRAIN_QUEUE_MULTIPLE: f64 = 1.0;
/// A queue down to this share of what it was after the check was this
/// flow's own.
const OWN_RESIDUE: f64 = 0.3;
/// The check's pacing gain at most (it takes at least 2 % off the rate).
const MAX_CHECK_GAIN: f64 = 0.98;
/// The check's pacing gain at least (ProbeBW Down's).
const MIN_CHECK_GAIN: f64 = 0.75;

/// What this Cruise found out about a queue standing in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum QueueOwner {
    /// No queue has stood in this Cruise yet.
    Unknown,
    /// The flow paces at `gain` times its estimate through `drain_round`; the
    /// round after it shows whether the queue drained.
    Checking {
        /// The round paced below the estimate.
        drain_round: u64,
        /// The pacing gain of that round.
        gain: f64,
        /// The queue that stood before it.
        queue: Duration,
    },
    /// The queue drained when this flow paced below its estimate: its own. A
    /// queue that stands again is asked about again (a probe's queue drained in
    /// Cruise's first round; a loss-based flow's fills the buffer later).
    Own,
    /// The queue stood through the check: another flow keeps it.
    Another,
}

impl QueueOwner {
    /// A queue of `queue` over a minimum RTT of `min_rtt` stood in the round
    /// that ended as `round` began: unless a check is under way or found
    /// another flow's queue in this Cruise, the check drains it during `round`.
    pub(super) fn ask(&mut self, round: u64, queue: Duration, min_rtt: Duration) {
        if !matches!(self, QueueOwner::Unknown | QueueOwner::Own) || min_rtt.is_zero() {
            return;
        }
        let share = queue.as_secs_f64() / min_rtt.as_secs_f64();
        let gain = (1.0 - DRAIN_QUEUE_MULTIPLE * share).clamp(MIN_CHECK_GAIN, MAX_CHECK_GAIN);
        *self = QueueOwner::Checking {
            drain_round: round,
            gain,
            queue,
        };
    }

    /// At the start of `round`: once the round after the check's has ended
    /// (its RTTs are those of the packets the check paced), the queue its
    /// smallest RTT showed gives the verdict.
    pub(super) fn judge(&mut self, round: u64, queue_after: Duration) {
        if let QueueOwner::Checking {
            drain_round, queue, ..
        } = *self
        {
            if round >= Self::verdict_round_after(drain_round) {
                *self = if queue_after.as_secs_f64() <= queue.as_secs_f64() * OWN_RESIDUE {
                    QueueOwner::Own
                } else {
                    QueueOwner::Another
                };
            }
        }
    }

    /// The round at whose start the verdict falls, while checking: the
    /// probe waits for it.
    pub(super) fn verdict_round(&self) -> Option<u64> {
        match *self {
            QueueOwner::Checking { drain_round, .. } => {
                Some(Self::verdict_round_after(drain_round))
            }
            _ => None,
        }
    }

    /// The pacing gain on top of Cruise's during `round`.
    pub(super) fn pacing_gain(&self, round: u64) -> f64 {
        match *self {
            QueueOwner::Checking {
                drain_round, gain, ..
            } if round == drain_round => gain,
            _ => 1.0,
        }
    }

    fn verdict_round_after(drain_round: u64) -> u64 {
        // The drain round's packets are acknowledged in the round after it.
        drain_round + 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_queue_that_drains_under_the_check_is_this_flows() {
        let mut q = QueueOwner::Unknown;
        q.ask(7, 4 * MS, 100 * MS);
        // 4 % of the rate off for round 7 only.
        assert!((q.pacing_gain(7) - 0.96).abs() < 1e-9, "{q:?}");
        assert_eq!(q.pacing_gain(8), 1.0);
        assert_eq!(q.verdict_round(), Some(9));
        // Round 8's RTTs are still those of packets sent before the check.
        q.judge(8, 4 * MS);
        assert_eq!(q.verdict_round(), Some(9));
        q.judge(9, MS);
        assert_eq!(q, QueueOwner::Own);
        assert_eq!(q.verdict_round(), None);
        // A queue that stands again is asked about again.
        q.ask(12, 4 * MS, 100 * MS);
        assert_eq!(q.verdict_round(), Some(14));
    }

    #[test]
    fn a_queue_that_stands_through_the_check_is_another_flows() {
        let mut q = QueueOwner::Unknown;
        q.ask(3, 12 * MS, 40 * MS);
        assert_eq!(q.pacing_gain(3), MIN_CHECK_GAIN, "a deep queue");
        // A flow with half the link drained half of it.
        q.judge(5, 6 * MS);
        assert_eq!(q, QueueOwner::Another);
        assert_eq!(q.pacing_gain(5), 1.0);
        // Not asked again in this Cruise.
        q.ask(9, 12 * MS, 40 * MS);
        assert_eq!(q, QueueOwner::Another);
    }

    #[test]
    fn a_shallow_queue_still_takes_two_percent_off() {
        let mut q = QueueOwner::Unknown;
        q.ask(1, MS / 2, 100 * MS);
        assert_eq!(q.pacing_gain(1), MAX_CHECK_GAIN);
        let mut q = QueueOwner::Unknown;
        q.ask(1, MS, Duration::ZERO);
        assert_eq!(q, QueueOwner::Unknown, "no minimum RTT yet");
    }
}
