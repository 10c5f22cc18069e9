//! The receiver's view of packet numbers: what to acknowledge and when.

use std::time::{Duration, Instant};

use crate::range_set::RangeSet;
use crate::wire::{Ack, AckRange, AckRanges, MAX_ACK_RANGES};

/// Whether a packet's acknowledgement may wait for the delayed-ack timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AckWait {
    /// It may (ack every `ack_every` packets, or at `max_delay`).
    Delayable,
    /// It may not: the peer waits on it. A stream's FIN is the last data its
    /// sender has, and its close waits for the acknowledgement; delayed, every
    /// short flow took a millisecond more (1-packet flows over memif: 1.26 ms
    /// from connected to closed).
    AtOnce,
}

#[derive(Debug, Default)]
pub(crate) struct AckState {
    received: RangeSet,
    largest: Option<(u64, Instant)>,
    /// The largest packet number received, ack-only packets included: what the
    /// next packet follows when nothing was lost.
    largest_any: Option<u64>,
    unacked_eliciting: u32,
    immediate: bool,
    deadline: Option<Instant>,
}

impl AckState {
    /// Room for every range kept (one more while inserting): acknowledging never
    /// allocates.
    pub(crate) fn new() -> Self {
        Self {
            received: RangeSet::with_capacity(MAX_ACK_RANGES + 2),
            ..Self::default()
        }
    }

    /// Records an ack-eliciting packet; returns false for a duplicate packet number.
    pub(crate) fn on_packet(
        &mut self,
        pn: u64,
        now: Instant,
        wait: AckWait,
        ack_every: u32,
        max_delay: Duration,
    ) -> bool {
        let new = self.received.insert_one(pn);
        self.received.keep_highest(MAX_ACK_RANGES + 1);
        let in_order = match self.largest_any {
            None => true,
            Some(l) => pn == l + 1,
        };
        self.note_number(pn);
        if self.largest.is_none_or(|(l, _)| pn > l) {
            self.largest = Some((pn, now));
        }
        self.unacked_eliciting += 1;
        if wait == AckWait::AtOnce || !new || !in_order || self.unacked_eliciting >= ack_every {
            // Duplicates and gaps are acknowledged at once (fast retransmit needs it).
            self.immediate = true;
        } else if self.deadline.is_none() {
            self.deadline = Some(now + max_delay);
        }
        new
    }

    /// Records a packet that elicits no acknowledgement (an ack): it is not
    /// acknowledged, but it took a packet number, so the next data packet after
    /// it is in order, not after a gap (which is acknowledged at once: every
    /// request/response exchange paid an immediate ack on its critical path).
    pub(crate) fn on_non_eliciting(&mut self, pn: u64) {
        self.note_number(pn);
    }

    fn note_number(&mut self, pn: u64) {
        if self.largest_any.is_none_or(|l| pn > l) {
            self.largest_any = Some(pn);
        }
    }

    /// Turns a passed deadline into "send now" (so the deadline is not reported again).
    pub(crate) fn on_timeout(&mut self, now: Instant) {
        if self.deadline.is_some_and(|d| d <= now) {
            self.deadline = None;
            self.immediate = true;
        }
    }

    /// Whether ack-eliciting packets arrived since the last ack.
    pub(crate) fn has_unacked(&self) -> bool {
        self.unacked_eliciting > 0
    }

    pub(crate) fn wants_to_send(&self, now: Instant) -> bool {
        self.immediate || self.deadline.is_some_and(|d| d <= now)
    }

    pub(crate) fn deadline(&self) -> Option<Instant> {
        if self.immediate {
            None
        } else {
            self.deadline
        }
    }

    /// Forces an ack with the next transmission (e.g. a credit update).
    pub(crate) fn request(&mut self) {
        if self.largest.is_some() {
            self.immediate = true;
        }
    }

    /// Builds an ack of at most `max_ranges` ranges (the highest; what fits the
    /// datagram) and clears the pending state. With `max_ranges` 0 nothing is built
    /// and nothing forgotten.
    pub(crate) fn build(
        &mut self,
        now: Instant,
        data_cumulative: u64,
        max_data: u64,
        max_ranges: usize,
    ) -> Option<Ack> {
        let (largest, at) = self.largest?;
        if max_ranges == 0 {
            return None;
        }
        let ranges: AckRanges = self
            .received
            .iter()
            .rev()
            .take((MAX_ACK_RANGES + 1).min(max_ranges))
            .map(|r| AckRange {
                start: r.start,
                end: r.end - 1,
            })
            .collect();
        debug_assert_eq!(ranges.first().map(|r| r.end), Some(largest));
        self.immediate = false;
        self.deadline = None;
        self.unacked_eliciting = 0;
        Some(Ack {
            ranges,
            ack_delay_us: now
                .saturating_duration_since(at)
                .as_micros()
                .min(u32::MAX as u128) as u32,
            data_cumulative,
            max_data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DELAY: Duration = Duration::from_millis(1);

    /// Data after the peer's ack-only packet follows it (ack every 2: not acked
    /// at once); a real gap still is, and so is a duplicate.
    #[test]
    fn ack_only_numbers_close_the_gap_real_gaps_still_ack_at_once() {
        let now = Instant::now();
        let mut a = AckState::new();
        a.on_packet(0, now, AckWait::Delayable, 2, DELAY);
        assert!(!a.wants_to_send(now));
        a.build(now, 0, 0, 8).unwrap();
        a.on_non_eliciting(1);
        a.on_packet(2, now, AckWait::Delayable, 2, DELAY);
        assert!(
            !a.wants_to_send(now),
            "in order after the ack-only packet 1"
        );
        a.build(now, 0, 0, 8).unwrap();
        // 3 and 4 lost: 5 is after a gap.
        a.on_packet(5, now, AckWait::Delayable, 2, DELAY);
        assert!(a.wants_to_send(now), "a gap is acknowledged at once");
        a.build(now, 0, 0, 8).unwrap();
        a.on_packet(5, now, AckWait::Delayable, 2, DELAY);
        assert!(a.wants_to_send(now), "so is a duplicate");
    }

    /// A FIN is acknowledged at once: its sender's close waits for it.
    #[test]
    fn a_fin_is_acknowledged_at_once() {
        let now = Instant::now();
        let mut a = AckState::new();
        a.on_packet(0, now, AckWait::AtOnce, 2, DELAY);
        assert!(a.wants_to_send(now));
        a.build(now, 0, 0, 8).unwrap();
        a.on_packet(1, now, AckWait::Delayable, 2, DELAY);
        assert!(!a.wants_to_send(now), "one packet of two: it may wait");
    }
}
