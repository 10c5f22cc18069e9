//! A loss-based flow joining a flow alone through a buffer too shallow to
//! show in the RTT: the round its slow start overflows the queue loses what
//! another flow's overflow costs, not congestion of this flow's own.
//!
//! Through `pmdt-wanem` (1 Gbit/s × 40 ms, 1 MiB: 8.4 ms, under the quarter
//! of the minimum RTT that shows a queue), a CUBIC flow joining 2 s after
//! BBR overflowed the queue for 43-95 ms, and BBR lost 9.7-25.4 % of what it
//! sent then (session 102). Judged against the 20 % high-loss threshold,
//! whether BBR backed off at all was chance: where its window went uncut
//! through the join, it kept 80.9-88.0 % of the link over the minute. Here
//! such a round cuts `inflight_hi` as to a shared queue's overflow
//! ([`Bbr::take_shared_cut`]), whether it lost 6 % or 24 %, and gives no
//! verdict of another flow's queue of its own: a verdict starts Cruise's
//! climb beside other flows, which takes a loss-based flow's share (with
//! one, BBR kept 67.0-85.1 % in four runs against 57.4-72.1 without;
//! session 103). The rule for an overflow under a standing queue
//! ([`Bbr::overflow_says_another_flow`]) may still give one at the same
//! round's end. An overflow that spans two rounds cuts in each, as loss
//! in both says.

use std::time::Instant;

use super::loss::Overshoot;
use super::shared_queue::PATH_FELL_MIN_DATAGRAMS;
use super::{Bbr, Mode, Phase, ProbeFeedback, UpGrowth, RENO_COEXISTENCE_MAX_LOSS};

/// Least loss beyond the typical round's ([`Bbr::typical_round_loss`]) that
/// says a round of a flow alone met another flow's overflow: above what a
/// flow pacing at its estimate loses to its own queue (at most 2 %,
/// `OWN_OVERFLOW_MAX_EXCESS`).
const JOIN_MIN_EXCESS: f64 = 0.05;
/// Most loss beyond the loss floor that a round (or a sample) of a flow
/// alone takes for another flow's overflow; more is a path that fell under
/// its rate, congestion of its own.
pub(super) const JOIN_MAX_EXCESS: f64 = 0.25;
/// Rounds after the one a join's cut began in within which congestion of
/// the flow's own says the path fell instead, and undoes the cut.
const JOIN_CUT_UNDO_ROUNDS: u64 = 2;

/// What a cut for another flow's overflow replaced, kept to undo it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct JoinCut {
    /// The round the cut began (the one after the round that lost).
    round: u64,
    /// `inflight_hi` before the cut.
    inflight_hi: Option<u64>,
    /// How Up grew `inflight_hi` before the cut.
    up_growth: UpGrowth,
}

impl Bbr {
    /// Whether this is a flow alone (no check found another flow's queue
    /// lately) whose round ending is its second in Cruise or later (the
    /// round Cruise began in counting as the first), past Startup's overshoot
    /// and its last probe's flights, with no congestion of its own lately,
    /// on a path whose rounds typically lose under
    /// [`RENO_COEXISTENCE_MAX_LOSS`] (where a loss-based flow can live
    /// beside it at all). Its samples' loss counts as congestion above
    /// [`JOIN_MAX_EXCESS`] where no queue shows ([`Bbr::inflight_too_high`]),
    /// and the round's end judges less
    /// ([`Bbr::join_overflow_says_another_flow`]).
    pub(super) fn alone_cruising_clean(&self, now: Instant) -> bool {
        self.full_bw_reached
            && self.mode == Mode::ProbeBw(Phase::Cruise)
            && self.rounds_in_phase() >= 2
            && !self.shares_the_bottleneck(now)
            && matches!(self.overshoot, Overshoot::Resolved { .. })
            && self.probe_feedback == ProbeFeedback::Idle
            && !self.congested_lately(now)
            && self
                .typical_round_loss()
                .is_some_and(|loss| loss < RENO_COEXISTENCE_MAX_LOSS)
    }

    /// At a round's end: a flow alone cruising on a clean path
    /// ([`Self::alone_cruising_clean`]) whose round lost more than
    /// [`JOIN_MIN_EXCESS`] beyond the typical round's and less than
    /// [`JOIN_MAX_EXCESS`] beyond the floor met another flow's overflow, and
    /// cuts as to a shared queue's. Not a round that began before Startup's
    /// overshoot was resolved (its repair's losses), nor one whose loss a
    /// catch-up of the sender's explains: a sender back from an absence
    /// within the last two round trips sends what it owed at once, and
    /// loses up to that much where the buffer is full (through
    /// `pmdt-wanem`, a round of a flow alone lost 10.5 % with an absence of
    /// 12 ms just before it).
    pub(super) fn join_overflow_says_another_flow(&mut self, now: Instant) {
        if !self.alone_cruising_clean(now) {
            return;
        }
        let (datagrams, lost) = self.round_loss_packets();
        let typical = self.typical_round_loss().unwrap_or_default();
        if datagrams < PATH_FELL_MIN_DATAGRAMS
            || lost <= datagrams * (typical + JOIN_MIN_EXCESS)
            || lost >= datagrams * (self.loss_floor + JOIN_MAX_EXCESS)
        {
            return;
        }
        let began_behind = matches!(self.overshoot, Overshoot::Resolved { delivered }
            if self.total_delivered.saturating_sub(self.round_acked) >= delivered);
        if !began_behind {
            return;
        }
        let queued = self.queue_in(self.round_min_rtt);
        let since = now
            .checked_sub(self.min_rtt.unwrap_or_default() * 2)
            .unwrap_or(now);
        let away = self.absences.longest_since(since);
        if away.is_some_and(|away| self.round_lost as f64 <= self.bw() as f64 * away.as_secs_f64())
        {
            tracing::debug!(
                queued_us = queued.as_micros() as u64,
                datagrams,
                lost,
                away_us = away.unwrap_or_default().as_micros() as u64,
                "bbr: a Cruise round of a flow alone overflowed; the sender's absence explains it"
            );
            return;
        }
        tracing::debug!(
            queued_us = queued.as_micros() as u64,
            datagrams,
            lost,
            "bbr: a Cruise round of a flow alone overflowed: another flow joined"
        );
        // A second cut while the first can still be undone keeps what the
        // first replaced.
        let undoable = self
            .join_cut
            .is_some_and(|cut| self.round_count <= cut.round + JOIN_CUT_UNDO_ROUNDS);
        if !undoable {
            self.join_cut = Some(JoinCut {
                round: self.round_count,
                inflight_hi: self.inflight_hi,
                up_growth: self.up_growth,
            });
        }
        self.take_shared_cut();
    }

    /// At congestion of this flow's own: in the round a cut for another
    /// flow's overflow began or the [`JOIN_CUT_UNDO_ROUNDS`] after it, the path fell under the flow's
    /// rate instead (a fall's first round can lose as a join does): the cut
    /// is undone, and the short-term bounds answer the fall as they would
    /// have. Kept, the cut's bound held the flow at 0.7 of a flight the
    /// fallen path no longer carried, and it settled at the new rate later
    /// (the simulator's fall from 1 Gbit/s to 200 Mbit/s at 40 ms: 1.2 s
    /// instead of 0.6, seeds 1-2).
    pub(super) fn undo_a_join_cut(&mut self) {
        let Some(cut) = self.join_cut.take() else {
            return;
        };
        if self.round_count > cut.round + JOIN_CUT_UNDO_ROUNDS {
            return;
        }
        tracing::debug!(
            inflight_hi = cut.inflight_hi,
            "bbr: congestion of its own just after a join's cut: the path fell; the cut is undone"
        );
        self.inflight_hi = cut.inflight_hi;
        self.up_growth = cut.up_growth;
        self.shared_regrow_step = None;
        self.shared_cut_round = None;
    }
}
