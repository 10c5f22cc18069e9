//! How long the checks that found another flow's queue keep BBR's probes
//! apart (see `bbr`'s shared-queue probe wait and [`super::queue_owner`]).
//!
//! One verdict is not enough for long: through `pmdt-wanem` on two cores, a
//! flow alone at 1 Gbit/s × 40 ms saw one check in a few dozen find its 3 ms
//! of queue still standing after a round paced 8 % below its estimate (the
//! processes' scheduling held every RTT of that round up). Remembered for
//! ten seconds, that one verdict kept the probes two seconds apart through a
//! drop of the link to 200 Mbit/s and its return to 1 Gbit/s, which was found
//! 2.2 s late. A loss-based flow keeps its queue standing through check after
//! check: a second verdict within the first's memory is remembered for
//! [`CONFIRMED_MEMORY`].

use std::time::{Duration, Instant};

/// How long a single verdict keeps the probes apart: the wait it starts and
/// about one more, time for a later Cruise's check to confirm it.
pub(super) const ONCE_MEMORY: Duration = Duration::from_secs(5);
/// How long confirmed verdicts keep the probes apart after another flow's
/// queue last stood: a loss-based flow that backed off leaves the queue empty
/// for seconds while it regrows (CUBIC's epoch with half of 1 Gbit/s × 40 ms
/// and a 1 MiB buffer is about twelve), and probing into that gap takes its
/// share; one deep queue per epoch renews it.
pub(super) const CONFIRMED_MEMORY: Duration = Duration::from_secs(10);

/// What the checks found about another flow's queue lately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AnotherFlow {
    /// No check found another flow's queue (or it is forgotten).
    Unseen,
    /// One verdict, or the rounds its queue stood in after it, as late as
    /// `last`.
    Once {
        /// When the queue last stood after the verdict.
        last: Instant,
    },
    /// A second verdict within the first's memory, or a later one.
    Confirmed {
        /// When the queue last stood after a verdict.
        last: Instant,
    },
}

impl AnotherFlow {
    /// A check found another flow's queue at `now`.
    pub(super) fn verdict(&mut self, now: Instant) {
        *self = if self.remembers(now) {
            Self::Confirmed { last: now }
        } else {
            Self::Once { last: now }
        };
    }

    /// The queue a verdict of this Cruise found stood again at `now`.
    pub(super) fn stood(&mut self, now: Instant) {
        match self {
            Self::Unseen => *self = Self::Once { last: now },
            Self::Once { last } | Self::Confirmed { last } => *last = now,
        }
    }

    /// The path fell under this flow's rate at `now` (a round lost a large
    /// share of its datagrams, or the flow met congestion of its own far
    /// below its recent peak): a single verdict still remembered is
    /// forgotten, as it was about a path that is no more, or wrong (see
    /// `Bbr::forget_a_verdict_the_path_fell_under` and
    /// `Bbr::forget_a_verdict_it_overran`); whether one was.
    /// Confirmed verdicts are kept: a loss-based flow that kept its queue
    /// standing through two checks is still there.
    pub(super) fn path_fell(&mut self, now: Instant) -> bool {
        let forgets = matches!(self, Self::Once { .. }) && self.remembers(now);
        if forgets {
            *self = Self::Unseen;
        }
        forgets
    }

    /// Whether a second verdict confirmed the first and is still remembered
    /// at `now`.
    pub(super) fn confirmed(&self, now: Instant) -> bool {
        matches!(self, Self::Confirmed { .. }) && self.remembers(now)
    }

    /// Whether the probes still wait for another flow at `now`.
    pub(super) fn remembers(&self, now: Instant) -> bool {
        let (last, memory) = match *self {
            Self::Unseen => return false,
            Self::Once { last } => (last, ONCE_MEMORY),
            Self::Confirmed { last } => (last, CONFIRMED_MEMORY),
        };
        now.saturating_duration_since(last) < memory
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn one_verdict_is_remembered_briefly_and_a_second_for_long() {
        let t0 = Instant::now();
        let mut a = AnotherFlow::Unseen;
        assert!(!a.remembers(t0));
        a.verdict(t0);
        a.stood(t0 + S);
        assert!(a.remembers(t0 + 5 * S));
        assert!(!a.confirmed(t0 + S));
        assert!(!a.remembers(t0 + 6 * S), "{a:?}");
        // Forgotten: the next verdict is a first one again.
        a.verdict(t0 + 7 * S);
        assert_eq!(a, AnotherFlow::Once { last: t0 + 7 * S });
        // A second within the first's memory confirms it.
        a.verdict(t0 + 10 * S);
        assert_eq!(a, AnotherFlow::Confirmed { last: t0 + 10 * S });
        assert!(a.confirmed(t0 + 10 * S));
        a.stood(t0 + 11 * S);
        assert!(a.remembers(t0 + 20 * S));
        assert!(!a.remembers(t0 + 21 * S));
    }

    #[test]
    fn a_path_that_fell_forgets_a_single_verdict_not_confirmed_ones() {
        let t0 = Instant::now();
        let mut a = AnotherFlow::Unseen;
        a.verdict(t0);
        assert!(a.path_fell(t0));
        assert_eq!(a, AnotherFlow::Unseen);
        assert!(!a.remembers(t0 + S));
        a.verdict(t0 + S);
        a.verdict(t0 + 2 * S);
        assert!(!a.path_fell(t0 + 2 * S));
        assert!(a.confirmed(t0 + 3 * S), "{a:?}");
    }
}
