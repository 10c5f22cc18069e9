//! A sender that loses its core: the queue its return builds is what keeps
//! the link busy through its next absence.

use std::time::{Duration, Instant};

use super::Bbr;
use crate::congestion::delivery_rate::RateSample;

/// How long after an absence from its core ([`RateSample::sent_catching_up`])
/// a flow still counts it, from the last packet sent making up for it. A
/// sender sharing its core loses it about once a second at least: through
/// `pmdt-wanem` on the 2-vCPU VM, a sender's absences of 1 ms or more came
/// 5-1012 ms apart, half of them within 220-320 ms of the one before.
const ABSENCE_MEMORY: Duration = Duration::from_secs(2);

/// The most absences remembered. Only those no shorter than every absence
/// after them are kept (a shorter, older one never decides the longest), so
/// a few are enough; when all are taken, the shortest goes.
const ABSENCES_KEPT: usize = 8;

/// A queue up to this multiple of the sender's deepest recent absence is one
/// its catch-ups build: a catch-up sends what the absence owed at once (the
/// absence's worth of queue, up to the pacer's catch-up limit, which is all
/// [`RateSample::sent_catching_up`] reports), on top of the pacer's bucket.
const OWN_QUEUE_PER_ABSENCE: u32 = 2;

/// One absence, as a run of samples of packets sent catching up shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Absence {
    /// The last sample of the run: the absence counts until
    /// [`ABSENCE_MEMORY`] after it.
    last_seen: Instant,
    /// How long the sender was away (the most any sample of the run showed).
    away: Duration,
}

/// The sender's recent absences from its core, as the samples of packets
/// sent catching up show them: one absence per run of such samples.
#[derive(Debug, Clone)]
pub(super) struct Absences {
    /// Newest first, each longer than every one after it (a windowed
    /// maximum: the first still within [`ABSENCE_MEMORY`] from the back is
    /// the longest); at most [`ABSENCES_KEPT`].
    runs: Vec<Absence>,
    /// Whether the last sample was of a packet sent catching up (a run is
    /// under way, its absence at the front).
    in_run: bool,
}

impl Default for Absences {
    /// Room for every absence kept and the one noted before the shortest
    /// goes, made up front: the first absence comes in the middle of a
    /// transfer, where the I/O loop must not allocate.
    fn default() -> Self {
        Self {
            runs: Vec::with_capacity(ABSENCES_KEPT + 1),
            in_run: false,
        }
    }
}

impl Absences {
    /// Notes a sample at `now`, of a packet sent `late` after its deadline
    /// (catching up), or on schedule.
    fn note(&mut self, now: Instant, late: Option<Duration>) {
        let Some(late) = late else {
            self.in_run = false;
            return;
        };
        if !self.in_run || self.runs.is_empty() {
            tracing::trace!(
                late_us = late.as_micros() as u64,
                since_last_ms = self
                    .runs
                    .first()
                    .map(|a| now.saturating_duration_since(a.last_seen).as_millis() as u64),
                "bbr: the sender was away from its core"
            );
            self.runs.insert(
                0,
                Absence {
                    last_seen: now,
                    away: late,
                },
            );
        }
        self.in_run = true;
        let newest = &mut self.runs[0];
        newest.last_seen = now;
        newest.away = newest.away.max(late);
        let away = newest.away;
        // Older absences no longer, or forgotten, never decide the longest.
        let mut i = 1;
        while i < self.runs.len() {
            let a = self.runs[i];
            if a.away <= away || now.saturating_duration_since(a.last_seen) >= ABSENCE_MEMORY {
                self.runs.remove(i);
            } else {
                i += 1;
            }
        }
        if self.runs.len() > ABSENCES_KEPT {
            // The shortest but the newest: the one after it.
            self.runs.remove(1);
        }
    }

    /// The longest absence seen within [`ABSENCE_MEMORY`] of `now`.
    fn longest(&self, now: Instant) -> Option<Duration> {
        self.runs
            .iter()
            .filter(|a| now.saturating_duration_since(a.last_seen) < ABSENCE_MEMORY)
            .map(|a| a.away)
            .max()
    }

    /// The longest absence whose catch-ups were still being acknowledged at
    /// or after `since` (an older, shorter one may have been dropped: never
    /// the longest since).
    pub(super) fn longest_since(&self, since: Instant) -> Option<Duration> {
        self.runs
            .iter()
            .filter(|a| a.last_seen >= since)
            .map(|a| a.away)
            .max()
    }
}

impl Bbr {
    /// Notes a sample of a packet sent to make up for the sender's absence
    /// from its core, or on schedule.
    pub(super) fn note_absence(&mut self, now: Instant, rs: &RateSample) {
        self.absences.note(now, rs.sent_catching_up);
    }

    /// Whether this flow is alone (no sibling flows, and no check found
    /// another flow's queue lately) and a standing queue of `queue` (the
    /// round's smallest RTT over the minimum) is no deeper than its
    /// sender's catch-ups build ([`OWN_QUEUE_PER_ABSENCE`] times its
    /// longest absence from its core seen within [`ABSENCE_MEMORY`]): it does not
    /// yield to it ([`Self::yield_to_standing_queue`]).
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
    /// 10 ms, lossless and at 0.1 % loss, 87.9-92.5 % (94.1-94.9 % keeping
    /// it; docs/RESULTS.md, session 83). Lifting the yield once a check
    /// found the queue the flow's own, or not yielding while a check was
    /// under way, did the same for such a sender, but a flow whose sender
    /// has a core of its own needs the yield: a CUBIC flow joining it
    /// through a shallow buffer keeps a queue that drains within a check,
    /// and the yield is the room it grows into (BBR took 77.1-79.6 % of the
    /// link beside it without the yield, 70.0 % with it).
    ///
    /// Only a queue as deep as the absences explain: a sender on a core of
    /// its own that stalls once (an application's own work between polls)
    /// still yields to a deeper queue, as a CUBIC flow joining it wants.
    /// Counting absences instead (three within a second) missed the VM's
    /// senders, whose absences of a millisecond or more come every few
    /// hundred milliseconds (87.6-94.3 % in the 10 ms cells, session 84).
    pub(super) fn keeps_own_absences_queue(&self, now: Instant, queue: Duration) -> bool {
        self.siblings == 0
            && !self.shares_the_bottleneck(now)
            && self.own_absences_explain(now, queue)
    }

    /// Whether a round that overflowed a standing queue of `queue` is what
    /// this flow's sender's catch-ups do: the queue no deeper than they
    /// build ([`Self::own_absences_explain`]), and the round's loss no more
    /// than the sender owes after its longest recent absence (its estimate
    /// over that absence), which a catch-up sends at once and which is all
    /// it can overflow the queue by. Through `pmdt-wanem` on the 2-vCPU VM,
    /// a CUBIC flow's slow start joining BBR through 1 MiB at 1 Gbit/s ×
    /// 40 ms overflowed the queue for three rounds; in one, BBR lost 202
    /// datagrams (6.3 %, 300 kB) with 2.1 ms of queue standing and gave no
    /// verdict, every other test passed: a recent absence explained the
    /// queue, by its depth alone (CUBIC's window went from 1.45 to 0.62 MB
    /// over those rounds).
    pub(super) fn own_absences_explain_overflow(&self, now: Instant, queue: Duration) -> bool {
        self.own_absences_explain(now, queue)
            && self
                .absences
                .longest(now)
                .is_some_and(|away| self.round_lost as f64 <= self.bw() as f64 * away.as_secs_f64())
    }

    /// Whether a standing queue of `queue` is no deeper than this flow's
    /// sender's catch-ups build: [`OWN_QUEUE_PER_ABSENCE`] times its longest
    /// absence from its core seen within [`ABSENCE_MEMORY`].
    pub(super) fn own_absences_explain(&self, now: Instant, queue: Duration) -> bool {
        self.absences
            .longest(now)
            .is_some_and(|away| queue <= away.saturating_mul(OWN_QUEUE_PER_ABSENCE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// The longest absence counts for [`ABSENCE_MEMORY`] after the last
    /// packet sent making up for it, however long its run of samples.
    #[test]
    fn an_absence_counts_from_its_last_catch_up() {
        let t0 = Instant::now();
        let mut a = Absences::default();
        assert_eq!(a.longest(t0), None);
        // A run of catch-ups 3 s long (a sender that keeps losing its core).
        for i in 0..=30 {
            a.note(t0 + 100 * MS * i, Some(3 * MS));
        }
        let end = t0 + 3000 * MS;
        assert_eq!(a.longest(end + ABSENCE_MEMORY - MS), Some(3 * MS));
        assert_eq!(a.longest(end + ABSENCE_MEMORY), None);
        assert_eq!(a.longest_since(end), Some(3 * MS));
        assert_eq!(a.longest_since(end + MS), None);
        // The run's longest sample is its absence.
        a.note(end + 10 * MS, None);
        a.note(end + 20 * MS, Some(2 * MS));
        a.note(end + 21 * MS, Some(7 * MS));
        a.note(end + 22 * MS, Some(MS));
        assert_eq!(a.longest(end + 30 * MS), Some(7 * MS));
    }

    /// Many short absences after a long one do not push it out while it
    /// counts; once it is forgotten the longest of the rest counts.
    #[test]
    fn short_absences_do_not_push_out_a_long_one() {
        let t0 = Instant::now();
        let mut a = Absences::default();
        a.note(t0, Some(9 * MS));
        a.note(t0 + MS, None);
        for i in 1..=3 * ABSENCES_KEPT as u32 {
            let t = t0 + 50 * MS * i;
            a.note(t, Some(MS + (MS * i) / 100));
            a.note(t + MS, None);
        }
        assert!(a.runs.len() <= ABSENCES_KEPT, "{:?}", a.runs);
        let last = t0 + 50 * MS * 3 * ABSENCES_KEPT as u32;
        assert_eq!(a.longest(last), Some(9 * MS));
        // The 9 ms absence is forgotten; the longest short one is the last.
        assert_eq!(
            a.longest(t0 + ABSENCE_MEMORY),
            Some(MS + (MS * 3 * ABSENCES_KEPT as u32) / 100)
        );
    }

    /// Memory stays bounded when every absence is shorter than the one
    /// before (none dominates another).
    #[test]
    fn ever_shorter_absences_keep_the_longest_within_the_bound() {
        let t0 = Instant::now();
        let mut a = Absences::default();
        for i in 0..40u32 {
            a.note(t0 + 10 * MS * i, Some(100 * MS - MS * i));
            a.note(t0 + 10 * MS * i + MS, None);
        }
        assert_eq!(a.runs.len(), ABSENCES_KEPT);
        assert_eq!(a.longest(t0 + 400 * MS), Some(100 * MS));
    }
}
