//! The standing RTT: the smallest RTT sample of the last few milliseconds,
//! as Copa reads its queue (Arun & Balakrishnan, NSDI 2018: the minimum over
//! the last half smoothed RTT, not the latest sample).
//!
//! A receiver that loses its core for a scheduler slice takes in what arrived
//! meanwhile all at once: the datagrams sent over those milliseconds are
//! received, and acknowledged, together, and their RTT samples fall in a
//! sawtooth, the oldest up to the whole gap above the newest. Their forward
//! one-way delay shows the same, so [`super::forward_delay`] cannot take it
//! out. Read one by one, those samples look like a queue: through
//! `pmdt-wanem` with a busy loop on the receiver's CPU, the receiver took in
//! its datagrams every 4 ms or so, and 34 % of the samples while a
//! bottleneck came back from 200 Mbit/s to 1 Gbit/s (100 ms) were over 2 ms
//! above the minimum, against 2.4 % of the standing RTT over 10 ms. ProbeBW's
//! Ups took them for their own queue (a quarter to two fifths of each Up's
//! samples) and ended after one round, so the flow grew 1.2× a probe cycle
//! and followed the rise in 2.8-3.6 s.
//!
//! A queue at the bottleneck raises every sample, the smallest of a window
//! too: it shows in the standing RTT [`window`] late at most.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The longest window: a scheduler slice or two (1-10 ms), what a receiver
/// sharing its core loses it for at a time.
pub(crate) const MAX_WINDOW: Duration = Duration::from_millis(10);

/// The window on a path of minimum RTT `min_rtt`: [`MAX_WINDOW`], at most a
/// quarter of the RTT, so a queue shows within a quarter round.
pub(crate) fn window(min_rtt: Duration) -> Duration {
    MAX_WINDOW.min(min_rtt / 4)
}

/// Samples kept at most. Samples that may still be a window's smallest rise
/// one after another; at most this many are kept (the oldest goes first), so
/// the memory is fixed and allocated once: a window of samples that only rose
/// (a queue building) then reads one shorter window, and shows the queue
/// sooner.
const MAX_SAMPLES: usize = 64;

/// The samples of the window that may still be its smallest: each smaller
/// than every later one (a monotonic queue), so the front is the minimum.
#[derive(Debug, Clone)]
pub(crate) struct StandingRtt {
    samples: VecDeque<(Instant, Duration)>,
}

impl Default for StandingRtt {
    fn default() -> Self {
        Self {
            samples: VecDeque::with_capacity(MAX_SAMPLES),
        }
    }
}

impl StandingRtt {
    /// Adds `rtt`, taken at `now`; returns the smallest sample of the last
    /// `window` (this one included).
    pub(crate) fn update(&mut self, now: Instant, rtt: Duration, window: Duration) -> Duration {
        while self.samples.back().is_some_and(|&(_, r)| r >= rtt) {
            self.samples.pop_back();
        }
        if self.samples.len() == MAX_SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back((now, rtt));
        while self
            .samples
            .front()
            .is_some_and(|&(t, _)| now.saturating_duration_since(t) > window)
        {
            self.samples.pop_front();
        }
        self.samples.front().map_or(rtt, |&(_, r)| r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_receivers_late_batch_stands_at_its_newest_sample() {
        let t0 = Instant::now();
        let mut s = StandingRtt::default();
        assert_eq!(s.update(t0, 100 * MS, 10 * MS), 100 * MS);
        // The receiver was away 4 ms: four samples read together, the oldest
        // 4 ms high, the newest on time.
        let t = t0 + 4 * MS;
        for extra in [4u32, 3, 2, 1] {
            assert_eq!(s.update(t, (100 + extra) * MS, 10 * MS), 100 * MS);
        }
        assert_eq!(s.update(t, 100 * MS, 10 * MS), 100 * MS);
    }

    #[test]
    fn a_queue_shows_once_the_window_has_passed() {
        let t0 = Instant::now();
        let mut s = StandingRtt::default();
        s.update(t0, 100 * MS, 10 * MS);
        // A queue builds, 1 ms per ms.
        let mut standing = Duration::ZERO;
        for i in 1..=20u32 {
            standing = s.update(t0 + i * MS, (100 + i) * MS, 10 * MS);
        }
        assert_eq!(standing, 110 * MS);
        // It drains: the standing RTT falls with the first sample.
        assert_eq!(s.update(t0 + 21 * MS, 101 * MS, 10 * MS), 101 * MS);
    }

    #[test]
    fn samples_that_only_rose_are_kept_to_a_bound() {
        let t0 = Instant::now();
        let mut s = StandingRtt::default();
        let us = Duration::from_micros(1);
        let mut standing = Duration::ZERO;
        for i in 0..1000u32 {
            standing = s.update(t0 + us * i, 100 * MS + us * i, 10 * MS);
        }
        assert_eq!(s.samples.len(), MAX_SAMPLES);
        assert_eq!(standing, 100 * MS + us * (1000 - MAX_SAMPLES as u32));
    }

    #[test]
    fn the_window_is_a_quarter_round_on_short_paths() {
        assert_eq!(window(100 * MS), MAX_WINDOW);
        assert_eq!(window(8 * MS), 2 * MS);
    }
}
