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
//! be found. (Since session 81 a flow alone waits that long on a path without
//! random loss anyway, unless far below its recent peak, where the bottleneck
//! may come back; the checks still decide on lossy paths, and whether the
//! queue-sharing rules apply.)
//!
//! So the first time a queue stands in a Cruise, the flow asks: it paces one
//! round below its estimate, by the queue's share of the minimum RTT (a round
//! lasts a little longer than that, and a yield to a standing queue in the same
//! round takes a little more), and looks at the smallest RTT of the round after
//! (the packets it sent during the check), and of as many more as make
//! [`VERDICT_SPAN`] at short round trips. A flow alone drains its queue so; a
//! flow with a share `s` of the link drains about `s` of it. A queue down to
//! [`OWN_RESIDUE`] of what the check could drain, or below what is worth checking, was this
//! flow's own; one that kept more is another flow's. The relative test alone
//! took the emulator's jitter for another flow (6.3 ms drained to 2.7 at
//! 200 Mbit/s × 100 ms). Where what is worth checking is the 2 ms floor (40 ms
//! and less), a flow with half the link that halves a queue under 7 ms takes it
//! for its own: beside a loss-based flow that fills a shallow buffer, it is
//! the caller's memory of verdicts (`another_flow`: ten seconds once a second
//! confirms the first) that keeps the probes apart, as one deep queue in a
//! while is enough for it. A queue that
//! grew by a quarter of the RTT under the check, or a delivery that fell under
//! half of what the check paced, gives no verdict (see [`QueueOwner::judge`] and
//! [`QueueOwner::delivered`]): the path changed while the flow held back.

use std::time::Duration;

/// A queue is checked only if it is at least this share of the minimum RTT
/// (and stands, by the caller's test: over 2 % of the minimum RTT, and 2 ms
/// at least). Through `pmdt-wanem`
/// sharing a core with the receiver, a flow alone at 1 Gbit/s × 100 ms saw
/// 1-3 ms come and go with the emulator's scheduling: checks of such a queue
/// drained nothing measurable, half of them found "another flow's" queue, and
/// the flow probed every 2-3 s instead of every 0.7-0.9 s.
const CHECKED_QUEUE_RTT_FRACTION: f64 = 0.05;
/// … but never more than this (up to 250 ms, where the caller's test of a
/// standing queue, 2 % of the RTT, takes over): the scheduling that lifts
/// RTTs is a few milliseconds, and so is a buffer (`pmdt-wanem`'s 1 MiB
/// holds 8.4 ms at 1 Gbit/s), at 200 ms as at 100. At 200 ms the share alone
/// asked for 10 ms, more than that buffer holds, and a flow alone never
/// checked its own queue: where no probe's overflow had bounded
/// `inflight_hi` near the BDP, its estimate a little above the link's rate
/// built the queue a millisecond or so a round until the buffer overflowed
/// with 5.8 ms showing in the round's RTTs, and the overflow was taken for
/// another flow's (`Bbr::overflow_says_another_flow`): `inflight_hi` cut
/// from 37.4 to 17.7 MB (the BDP is 25 MB), 65.5 % of the link over the run
/// (session 96, 1 Gbit/s × 200 ms × 0.1 %). Capped, through `pmdt-wanem`
/// at 1 Gbit/s × 200 ms (lossless, 0.1 % and 1 % loss), 34 checks in 16 of
/// 22 runs started at 5.1-8.1 ms (the larger of the RTT's queue and the
/// flight's), and the 32 that came to a verdict before the run ended found
/// the flow's own. A check that starts late still meets the overflow: one
/// that loses what a flow alone's queue can waits for the check's verdict
/// (`Bbr::overflow_says_another_flow`). The cap also sets the queue
/// under which a check's verdict is "own", and applies to the drain after
/// the flow's own congestion.
const CHECKED_QUEUE_MAX: Duration = Duration::from_millis(5);
/// The check takes this many times the queue's share of the minimum RTT off
/// the pacing rate.
const DRAIN_QUEUE_MULTIPLE: f64 = 1.0;
/// A queue down to this share of what the check could drain (the whole
/// queue, unless it is deeper than [`MIN_CHECK_GAIN`] drains in a round)
/// was this flow's own. Judged against the whole queue, a deep one was
/// always another flow's: through `pmdt-wanem` at 200 Mbit/s × 40 ms, a
/// probe's Cruise left 16-18 ms in a flow alone's flight, a check at 0.75
/// of its estimate drained 10 of them, and 6.3-8.2 ms stood after it (over
/// 0.3 of the queue): each time the next probes waited 2 s, and the rise
/// back to 1 Gbit/s was found 2.1-2.4 s late.
const OWN_RESIDUE: f64 = 0.3;
/// The check's pacing gain at least (ProbeBW Down's).
const MIN_CHECK_GAIN: f64 = 0.75;
/// A queue that grew by this share of the minimum RTT under the check, which
/// paced below the estimate, gives no verdict: the path changed under the
/// check. A bottleneck that slowed to a share `r` of the estimate grows the
/// queue by about `gain / r − 1` of the RTT a round (a fifth of it at
/// `r` = 0.75); a loss-based flow beside this one adds what its window grows
/// by, a few packets a round, and in slow start a few milliseconds. The test
/// was "twice the queue": through pmdt-wanem, beside a CUBIC flow starting
/// with it at 1 Gbit/s × 40 ms (1 MiB queue), the first check saw CUBIC's
/// queue grow from 2.9 to 7.1 ms, gave no verdict, and the flow probed every
/// eight rounds from then on: CUBIC fell to 7 % of the link and BBR took
/// 86.5 % (one run of eight; in the others the first verdict found CUBIC's
/// queue, and neither flow took more than 52 %).
const CHANGED_UNDER_CHECK_RTT: f64 = 0.25;
/// The verdict takes the smallest queue of the rounds after the check that
/// span at least this long (one round at 30 ms and more). At short round
/// trips, the processes' scheduling holds every RTT of a round up at times:
/// through `pmdt-wanem` sharing a core with the sender (the runner's
/// placement), a flow alone at 1 Gbit/s × 10 ms found 3 of its 20 checks'
/// queues standing (one of 3.7 ms was still 3.5 ms after a round paced at 0.75
/// of an estimate already below the link), and every probe of the next ten
/// seconds waited for a flow that was not there: 65 waits of about 70 rounds
/// in 20 s, 91.5 % of the link against 93.2 % with 0.1 % loss. A flow's own
/// queue stays drained after the check (it paces at its estimate again), and
/// another flow's keeps standing.
const VERDICT_SPAN: Duration = Duration::from_millis(30);
/// … in at most this many rounds.
const MAX_VERDICT_ROUNDS: u64 = 4;
/// A round after the check that delivered less than this share of what the
/// check paced gives no verdict: the bottleneck slowed down under the check.
/// Through pmdt-wanem, checks under way when the link fell from 1 Gbit/s to
/// 200 Mbit/s at 100 ms read a delivery of 24.3 MB/s against estimates of 60
/// and 85 MB/s, with 6-7 ms of queue: not twice what they had asked about
/// (the test for a changed path then), so they found another flow's queue,
/// and the rise back to 1 Gbit/s 10 s later waited for the shared-queue probe
/// (3.5 s instead of 1.1-1.9). A flow beside another delivers what it paces:
/// through the same emulator, 0.75-1.1 of its estimate.
const SLOWED_UNDER_CHECK: f64 = 0.5;

/// What a check of a standing queue is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CheckPurpose {
    /// Whose queue it is: a verdict of another flow's makes the probes wait.
    Whose,
    /// Draining a queue of the flow's own after its own congestion (a
    /// bottleneck that slowed down): its verdict is not taken (see
    /// `Bbr::update_shared_queue`).
    Drain,
}

/// What this Cruise found out about a queue standing in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum QueueOwner {
    /// No queue worth checking has stood in this Cruise yet.
    Unknown,
    /// The flow paces at `gain` times its estimate through `drain_round`; the
    /// round after it shows whether the queue drained.
    Checking {
        /// What the check is for.
        purpose: CheckPurpose,
        /// The round paced below the estimate.
        drain_round: u64,
        /// The round at whose start the verdict falls.
        verdict_round: u64,
        /// The smallest queue a round after the drain round showed so far.
        smallest_after: Option<Duration>,
        /// The pacing gain of that round.
        gain: f64,
        /// The queue that stood before it.
        queue: Duration,
        /// How much of it the check can drain in its round: all of it
        /// unless the gain is at [`MIN_CHECK_GAIN`].
        drainable: Duration,
        /// The least queue worth checking.
        least: Duration,
        /// Growth of the queue under the check that says the path changed.
        changed: Duration,
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
    /// that ended as `round` began: unless it is under `floor` or
    /// [`CHECKED_QUEUE_RTT_FRACTION`] of `min_rtt` (at most
    /// [`CHECKED_QUEUE_MAX`]), `min_rtt` is not known, or
    /// a check is under way or found another flow's queue in this Cruise, the
    /// check drains it during `round`, for `purpose`.
    pub(super) fn ask(
        &mut self,
        purpose: CheckPurpose,
        round: u64,
        queue: Duration,
        min_rtt: Duration,
        floor: Duration,
    ) {
        let least = min_rtt
            .mul_f64(CHECKED_QUEUE_RTT_FRACTION)
            .min(CHECKED_QUEUE_MAX)
            .max(floor);
        if !matches!(self, QueueOwner::Unknown | QueueOwner::Own)
            || min_rtt.is_zero()
            || queue < least
        {
            return;
        }
        let share = queue.as_secs_f64() / min_rtt.as_secs_f64();
        let gain = (1.0 - DRAIN_QUEUE_MULTIPLE * share).max(MIN_CHECK_GAIN);
        let drainable = min_rtt.mul_f64(1.0 - gain).min(queue);
        // The drain round's packets are acknowledged in the round after it;
        // the verdict waits for as many more as `VERDICT_SPAN` takes.
        let observed = (VERDICT_SPAN.as_secs_f64() / min_rtt.as_secs_f64())
            .ceil()
            .clamp(1.0, MAX_VERDICT_ROUNDS as f64) as u64;
        *self = QueueOwner::Checking {
            purpose,
            drain_round: round,
            verdict_round: round + 1 + observed,
            smallest_after: None,
            gain,
            queue,
            drainable,
            least,
            changed: min_rtt.mul_f64(CHANGED_UNDER_CHECK_RTT),
        };
    }

    /// At the start of `round`, with `queue_after` the queue the last round's
    /// smallest RTT showed: once the round after the check's has ended (its
    /// RTTs are those of the packets the check paced) and the rounds
    /// [`VERDICT_SPAN`] takes after it, the smallest queue they showed gives
    /// the verdict. A queue that grew by [`CHANGED_UNDER_CHECK_RTT`] of the
    /// minimum RTT while this flow held back gives none (back to
    /// [`QueueOwner::Unknown`]: the next queue that stands is asked about
    /// afresh). This flow's own queue shrinks under the check and another
    /// flow's stays or grows by what that flow adds in two rounds; one that
    /// grows by a quarter of the RTT says the path changed, such as a
    /// bottleneck that slowed down: through pmdt-wanem, a check under way when
    /// the link fell from 1 Gbit/s to 200 Mbit/s at 100 ms saw 5-7 ms become
    /// 35-40, took that queue for another flow's, and every probe of the next
    /// 10 s waited 2-2.8 s (a rise to 1 Gbit/s in that time was found 2.2 s
    /// late).
    pub(super) fn judge(&mut self, round: u64, queue_after: Duration) {
        if let QueueOwner::Checking {
            drain_round,
            verdict_round,
            ref mut smallest_after,
            queue,
            drainable,
            least,
            changed,
            ..
        } = *self
        {
            if !Self::reads_the_check(drain_round, round) {
                return;
            }
            let queue_after = smallest_after.map_or(queue_after, |s| s.min(queue_after));
            *smallest_after = Some(queue_after);
            if round >= verdict_round {
                *self = if queue_after >= queue + changed {
                    QueueOwner::Unknown
                } else if queue_after < least
                    || queue_after.as_secs_f64()
                        <= (queue - drainable).as_secs_f64() + drainable.as_secs_f64() * OWN_RESIDUE
                {
                    QueueOwner::Own
                } else {
                    QueueOwner::Another
                };
            }
        }
    }

    /// At the start of `round`, before [`Self::judge`]: the last round
    /// delivered `delivered_share` of the estimate (its largest delivery-rate
    /// sample over it). A round after the check's that delivered less than
    /// [`SLOWED_UNDER_CHECK`] of what the check paced ends the check with no
    /// verdict (back to [`QueueOwner::Unknown`]).
    pub(super) fn delivered(&mut self, round: u64, delivered_share: f64) {
        if let QueueOwner::Checking {
            drain_round, gain, ..
        } = *self
        {
            if Self::reads_the_check(drain_round, round)
                && delivered_share < SLOWED_UNDER_CHECK * gain
            {
                *self = QueueOwner::Unknown;
            }
        }
    }

    /// Whether the round that ended as `round` began carried the packets the
    /// check paced in `drain_round`, or later ones: the drain round's are
    /// acknowledged in the round after it.
    fn reads_the_check(drain_round: u64, round: u64) -> bool {
        round >= drain_round + 2
    }

    /// What the check under way is for (`None`: no check is).
    pub(super) fn checking(&self) -> Option<CheckPurpose> {
        match *self {
            QueueOwner::Checking { purpose, .. } => Some(purpose),
            _ => None,
        }
    }

    /// The round at whose start the verdict falls, while checking: the
    /// probe waits for it.
    pub(super) fn verdict_round(&self) -> Option<u64> {
        match *self {
            QueueOwner::Checking { verdict_round, .. } => Some(verdict_round),
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
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_queue_that_drains_under_the_check_is_this_flows() {
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 7, 6 * MS, 100 * MS, 2 * MS);
        // 6 % of the rate off for round 7 only.
        assert!((q.pacing_gain(7) - 0.94).abs() < 1e-9, "{q:?}");
        assert_eq!(q.pacing_gain(8), 1.0);
        assert_eq!(q.verdict_round(), Some(9));
        // Round 8's RTTs are still those of packets sent before the check.
        q.judge(8, 4 * MS);
        assert_eq!(q.verdict_round(), Some(9));
        q.judge(9, MS);
        assert_eq!(q, QueueOwner::Own);
        assert_eq!(q.verdict_round(), None);
        // A queue that stands again is asked about again.
        q.ask(CheckPurpose::Whose, 12, 6 * MS, 100 * MS, 2 * MS);
        assert_eq!(q.verdict_round(), Some(14));
    }

    #[test]
    fn a_queue_that_stands_through_the_check_is_another_flows() {
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 12 * MS, 40 * MS, 2 * MS);
        assert_eq!(q.pacing_gain(3), MIN_CHECK_GAIN, "a deep queue");
        // A flow with half the link drained half of it.
        q.judge(5, 6 * MS);
        assert_eq!(q, QueueOwner::Another);
        assert_eq!(q.pacing_gain(5), 1.0);
        // Not asked again in this Cruise.
        q.ask(CheckPurpose::Whose, 9, 12 * MS, 40 * MS, 2 * MS);
        assert_eq!(q, QueueOwner::Another);
        // Under what is worth checking: jitter, not another flow's queue.
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 8 * MS, 100 * MS, 2 * MS);
        q.judge(5, 4 * MS);
        assert_eq!(q, QueueOwner::Own);
    }

    /// At a short round trip the verdict takes the smallest queue of the
    /// rounds spanning [`VERDICT_SPAN`]: one round whose every RTT the
    /// processes' scheduling held up does not make a flow alone wait for
    /// another flow, and another flow's queue still stands through them all.
    #[test]
    fn at_a_short_round_trip_the_verdict_takes_several_rounds() {
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 3 * MS, 10 * MS, 2 * MS);
        // Three rounds after the one that carries the check's packets.
        assert_eq!(q.verdict_round(), Some(7));
        q.judge(5, 3 * MS);
        q.judge(6, 3 * MS);
        assert!(q.verdict_round().is_some(), "{q:?}");
        q.judge(7, MS / 10);
        assert_eq!(q, QueueOwner::Own);
        // A queue that stands in every one of them is another flow's; the
        // smallest is the one judged.
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 3 * MS, 10 * MS, 2 * MS);
        for (round, queue) in [(5, 4 * MS), (6, 3 * MS), (7, 5 * MS)] {
            q.judge(round, queue);
        }
        assert_eq!(q, QueueOwner::Another);
        // At 20 ms, two rounds; at 30 ms and more, one.
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 3 * MS, 20 * MS, 2 * MS);
        assert_eq!(q.verdict_round(), Some(6));
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 3 * MS, 30 * MS, 2 * MS);
        assert_eq!(q.verdict_round(), Some(5));
        // At most MAX_VERDICT_ROUNDS.
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, MS, MS, Duration::ZERO);
        assert_eq!(q.verdict_round(), Some(3 + 1 + MAX_VERDICT_ROUNDS));
    }

    /// A check under which the path delivered less than half of what it
    /// paced gives no verdict: the bottleneck slowed down.
    #[test]
    fn a_check_whose_delivery_falls_gives_no_verdict() {
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 6 * MS, 100 * MS, 2 * MS);
        // The drain round's own samples are older packets'.
        q.delivered(4, 0.2);
        assert!(q.verdict_round().is_some(), "{q:?}");
        q.delivered(5, 0.29);
        q.judge(5, 7 * MS);
        assert_eq!(q, QueueOwner::Unknown);
        // A flow beside another delivers what it paced.
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 6 * MS, 100 * MS, 2 * MS);
        q.delivered(5, 0.8);
        q.judge(5, 5 * MS);
        assert_eq!(q, QueueOwner::Another);
    }

    #[test]
    fn a_queue_that_grows_under_the_check_gives_no_verdict() {
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 6 * MS, 100 * MS, 2 * MS);
        q.judge(5, 35 * MS);
        assert_eq!(q, QueueOwner::Unknown);
        assert_eq!(q.verdict_round(), None);
        assert_eq!(q.pacing_gain(5), 1.0);
        // Asked afresh; a queue that grew less is still another flow's.
        q.ask(CheckPurpose::Whose, 8, 6 * MS, 100 * MS, 2 * MS);
        q.judge(10, 11 * MS);
        assert_eq!(q, QueueOwner::Another);
    }

    /// A loss-based flow's queue that more than doubles under the check, by
    /// what that flow adds in two rounds, is still that flow's: taking it for
    /// a changed path left BBR probing every eight rounds beside CUBIC
    /// starting with it (86.5 % of the link against CUBIC's 7 %).
    #[test]
    fn a_queue_another_flow_fills_under_the_check_is_its() {
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 12, 2900 * MS / 1000, 40 * MS, 2 * MS);
        q.delivered(14, 0.73);
        q.judge(14, 7100 * MS / 1000);
        assert_eq!(q, QueueOwner::Another);
        // By a quarter of the RTT: the path changed.
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 12, 2900 * MS / 1000, 40 * MS, 2 * MS);
        q.judge(14, 13 * MS);
        assert_eq!(q, QueueOwner::Unknown);
    }

    /// A queue deeper than a check drains in a round (at [`MIN_CHECK_GAIN`]):
    /// judged by what the check could drain of it, not by the whole.
    #[test]
    fn a_deep_queue_is_judged_by_what_the_check_can_drain() {
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 18 * MS, 40 * MS, 2 * MS);
        assert_eq!(q.pacing_gain(3), MIN_CHECK_GAIN);
        // A flow alone drains the 10 ms the check can; 8 ms stand.
        q.judge(5, 8 * MS);
        assert_eq!(q, QueueOwner::Own);
        // A flow with half the link drains half of that.
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 3, 18 * MS, 40 * MS, 2 * MS);
        q.judge(5, 13 * MS);
        assert_eq!(q, QueueOwner::Another);
    }

    #[test]
    fn a_shallow_queue_is_not_checked() {
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 1, 4 * MS, 100 * MS, 2 * MS);
        assert_eq!(q, QueueOwner::Unknown, "4 ms of 100: jitter");
        q.ask(CheckPurpose::Whose, 1, 3 * MS, 20 * MS, 4 * MS);
        assert_eq!(q, QueueOwner::Unknown, "under the floor");
        q.ask(CheckPurpose::Whose, 1, 2 * MS, 40 * MS, 2 * MS);
        assert!((q.pacing_gain(1) - 0.95).abs() < 1e-9, "{q:?}");
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 1, MS, Duration::ZERO, Duration::ZERO);
        assert_eq!(q, QueueOwner::Unknown, "no minimum RTT yet");
    }

    /// At a long round trip the least queue worth checking is
    /// [`CHECKED_QUEUE_MAX`], not a share of the RTT that a buffer of a few
    /// milliseconds never holds.
    #[test]
    fn at_a_long_round_trip_a_queue_of_a_few_milliseconds_is_checked() {
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 1, 5 * MS, 200 * MS, 2 * MS);
        assert!((q.pacing_gain(1) - 0.975).abs() < 1e-9, "{q:?}");
        // Drained to a millisecond: this flow's own.
        q.judge(3, MS);
        assert_eq!(q, QueueOwner::Own);
        let mut q = QueueOwner::Unknown;
        q.ask(CheckPurpose::Whose, 1, 4 * MS, 200 * MS, 2 * MS);
        assert_eq!(q, QueueOwner::Unknown, "4 ms of 200: jitter");
        // At 100 ms, 5 % of the RTT as before.
        q.ask(CheckPurpose::Whose, 1, 4900 * MS / 1000, 100 * MS, 2 * MS);
        assert_eq!(q, QueueOwner::Unknown);
    }
}
