//! The highest delivery rate two ProbeBW rounds in a row showed in the last
//! [`PEAK_MEMORY`]: what the path carried a moment ago, which a bottleneck
//! that slowed down (a radio link's fade, a policer's step, a rate that an
//! operator lowered for a while) may give back. Not Startup's rounds, nor the
//! bandwidth filter (which carries them ten rounds into ProbeBW): an ack clock
//! in bursts inflates a small flight's samples, and through `pmdt-wanem` one
//! flow's Startup left a peak over twice what its ProbeBW delivered, so it
//! probed every few rounds while three more flows joined, and it kept 362
//! Mbit/s of the last ten seconds against the others' 153-218 (Jain 0.896,
//! where runs without it kept 0.965-0.995). Two rounds in a row, not one: a
//! round's rate swings with the poll loops' bursts (where those dominate the
//! RTT, as over a memif pair, even two rounds' do, and the rule is off). A
//! flow alone whose estimate sits
//! far below the peak probes sooner
//! ([`SLOWED_CRUISE_ROUNDS`](super::SLOWED_CRUISE_ROUNDS)): one that waits a whole Cruise after a probe that
//! just missed the bottleneck's return follows it half a second late at 100 ms.

use std::time::{Duration, Instant};

/// How long a peak is remembered once the estimate stops reaching it.
pub(super) const PEAK_MEMORY: Duration = Duration::from_secs(30);
/// An estimate below this share of the peak is far below it.
const FAR_BELOW_PEAK: f64 = 0.5;

/// The peak, when two rounds last reached it, and the last round's rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RecentPeak {
    bw: u64,
    at: Option<Instant>,
    last_round: u64,
}

impl RecentPeak {
    /// Takes a round's delivery rate `round_bw` at `now`: what it and the
    /// round before both reached is a new peak if it reaches the old one or
    /// the old one is forgotten.
    pub(super) fn update(&mut self, now: Instant, round_bw: u64) {
        let sustained = round_bw.min(self.last_round);
        self.last_round = round_bw;
        if sustained > 0 && (sustained >= self.bw || !self.remembered(now)) {
            self.bw = sustained;
            self.at = Some(now);
        }
    }

    /// Whether the estimate `bw` is under half the peak remembered at `now`.
    pub(super) fn far_above(&self, now: Instant, bw: u64) -> bool {
        self.remembered(now) && (bw as f64) < self.bw as f64 * FAR_BELOW_PEAK
    }

    /// The peak, bytes/s (for the logs).
    pub(super) fn bw(&self) -> u64 {
        self.bw
    }

    fn remembered(&self, now: Instant) -> bool {
        self.at
            .is_some_and(|at| now.saturating_duration_since(at) < PEAK_MEMORY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peak_is_far_above_an_estimate_under_half_of_it_until_forgotten() {
        let t0 = Instant::now();
        let mut p = RecentPeak::default();
        assert!(!p.far_above(t0, 0), "no peak yet");
        p.update(t0, 1000);
        assert!(!p.far_above(t0, 200), "one round is no peak");
        p.update(t0, 1000);
        p.update(t0 + Duration::from_secs(1), 200);
        assert!(p.far_above(t0 + Duration::from_secs(1), 200));
        assert!(
            !p.far_above(t0 + Duration::from_secs(1), 500),
            "half is not far"
        );
        // Forgotten: the next estimate is the peak.
        let later = t0 + PEAK_MEMORY;
        assert!(!p.far_above(later, 200));
        p.update(later, 200);
        assert!(!p.far_above(later, 150));
        // A single round's swing is no peak either.
        p.update(later, 1000);
        p.update(later, 200);
        assert!(!p.far_above(later, 150), "{p:?}");
    }

    #[test]
    fn reaching_the_peak_again_renews_it() {
        let t0 = Instant::now();
        let mut p = RecentPeak::default();
        p.update(t0, 1000);
        p.update(t0, 1000);
        p.update(t0 + PEAK_MEMORY / 2, 1000);
        assert!(
            p.far_above(t0 + PEAK_MEMORY, 400),
            "renewed at the second reach"
        );
    }
}
