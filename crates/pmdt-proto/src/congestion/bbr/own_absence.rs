//! A sender that loses its core: the queue its return builds is what keeps
//! the link busy through its next absence.

use std::time::{Duration, Instant};

use super::Bbr;
use crate::congestion::delivery_rate::RateSample;

/// How long after an absence from its core ([`RateSample::sent_catching_up`])
/// a flow still counts it. A sender sharing its core loses it every few
/// hundred milliseconds at most: through `pmdt-wanem` on the 2-vCPU VM, a
/// sender's absences of 1 ms or more came 5-1012 ms apart, half of them
/// within 220-320 ms of the one before.
const ABSENCE_MEMORY: Duration = Duration::from_secs(2);

/// How many absences are remembered: more than [`ABSENCE_MEMORY`] holds at
/// the VM's pace.
const ABSENCES_KEPT: usize = 8;

/// A queue up to this multiple of the sender's deepest recent absence is one
/// its catch-ups build: a catch-up sends what the absence owed at once (the
/// absence's worth of queue), on top of the pacer's bucket.
const OWN_QUEUE_PER_ABSENCE: u32 = 2;

/// The sender's recent absences from its core, as the samples of packets
/// sent catching up show them: one absence per run of such samples.
#[derive(Debug, Clone, Default)]
pub(super) struct Absences {
    /// The last [`ABSENCES_KEPT`] absences, newest first: when the run of
    /// samples started, and how long the sender was away (the most any
    /// sample of the run showed).
    runs: [Option<(Instant, Duration)>; ABSENCES_KEPT],
    /// Whether the last sample was of a packet sent catching up (a run is
    /// under way).
    in_run: bool,
}

impl Absences {
    /// Notes a sample at `now`, of a packet sent `late` after its deadline
    /// (catching up), or on schedule.
    fn note(&mut self, now: Instant, late: Option<Duration>) {
        match (late, self.in_run) {
            (Some(late), true) => {
                if let Some((_, away)) = &mut self.runs[0] {
                    *away = (*away).max(late);
                }
            }
            (Some(late), false) => {
                tracing::trace!(
                    late_us = late.as_micros() as u64,
                    since_last_ms = self.runs[0]
                        .map(|(t, _)| now.saturating_duration_since(t).as_millis() as u64),
                    "bbr: the sender was away from its core"
                );
                self.runs.rotate_right(1);
                self.runs[0] = Some((now, late));
            }
            (None, _) => {}
        }
        self.in_run = late.is_some();
    }

    /// The longest absence that started within [`ABSENCE_MEMORY`] of `now`.
    fn longest(&self, now: Instant) -> Option<Duration> {
        self.runs
            .iter()
            .flatten()
            .filter(|(t, _)| now.saturating_duration_since(*t) < ABSENCE_MEMORY)
            .map(|(_, away)| *away)
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
    /// longest absence from its core within [`ABSENCE_MEMORY`]): it does not
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
            && self
                .absences
                .longest(now)
                .is_some_and(|away| queue <= away * OWN_QUEUE_PER_ABSENCE)
    }
}
