//! When the frames of a receive backlog arrived, for an emulator without receive
//! timestamps.
//!
//! A poller that lost its core for a while (a busy core shared with the endpoints:
//! milliseconds at a time) finds everything that arrived meanwhile waiting in the
//! port's ring. Stamped with the time it read them, those frames would reach the
//! emulated bottleneck all at once after it stood idle for the whole gap: the path
//! would lose the gap's capacity. Measured: a 1 Gbit/s path delivered 280 Mbit/s to a
//! sender sharing `pmdt-wanem`'s core. The frames arrived between the last read
//! that found the ring empty and now; without hardware timestamps the best estimate
//! spreads them evenly over that interval, in ring (arrival) order.
//!
//! The estimate feeds the bottleneck's queue only
//! ([`ImpairModel::decide_seen_late`](pmdt::link::impair_model::ImpairModel::decide_seen_late)):
//! frames the sender put out in a burst at the gap's end would, back-dated, cross
//! the path up to a gap faster than set, and an endpoint's min-RTT filter keeps
//! such a sample (measured before that rule: 6.1 ms of min RTT on a 10 ms path,
//! which made every later round look queued).

use std::time::{Duration, Instant};

/// The longest gap a backlog is spread over: a poller stalled longer than this
/// has lost frames to a full ring anyway, and a path must not look faster than
/// set for more than one such gap.
pub const MAX_SPREAD: Duration = Duration::from_millis(20);

/// Remembers when the ring was last found empty.
#[derive(Debug, Default, Clone)]
pub struct ArrivalSpread {
    drained_at: Option<Instant>,
    /// The longest gap between two reads seen (how long the poller was starved).
    longest_gap: Duration,
}

impl ArrivalSpread {
    /// The arrival times of a backlog of `n` frames read at `read_at` that
    /// emptied the ring: frame `i` (0-based, in ring order) arrived at the
    /// `i+1`-th of `n` even steps after the ring was last seen empty (at most
    /// [`MAX_SPREAD`] back), the last one at `read_at`.
    pub fn backlog(&mut self, read_at: Instant, n: usize) -> Stamps {
        let since = self.drained_at.map_or(read_at, |d| d.min(read_at));
        let gap = read_at - since;
        self.longest_gap = self.longest_gap.max(gap);
        let gap = gap.min(MAX_SPREAD);
        self.drained_at = Some(read_at);
        let n = n.max(1) as u32;
        Stamps {
            read_at,
            gap,
            n,
            next: 1,
        }
    }

    /// The ring was read and found empty at `at`.
    pub fn empty(&mut self, at: Instant) {
        if let Some(d) = self.drained_at {
            self.longest_gap = self.longest_gap.max(at.saturating_duration_since(d));
        }
        self.drained_at = Some(at);
    }

    /// The longest time between two reads of the ring so far.
    pub fn longest_gap(&self) -> Duration {
        self.longest_gap
    }
}

/// The arrival times of one backlog, oldest first.
#[derive(Debug, Clone)]
pub struct Stamps {
    read_at: Instant,
    gap: Duration,
    n: u32,
    next: u32,
}

impl Iterator for Stamps {
    type Item = Instant;

    fn next(&mut self) -> Option<Instant> {
        let i = self.next;
        self.next += 1;
        // Frames past the count given (none in practice) arrive at the read.
        let back = self.gap * self.n.saturating_sub(i) / self.n;
        Some(self.read_at - back)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backlog_is_spread_over_the_gap_since_the_ring_was_empty() {
        let t0 = Instant::now();
        let mut s = ArrivalSpread::default();
        s.empty(t0);
        let read = t0 + Duration::from_millis(4);
        let at: Vec<_> = s.backlog(read, 4).take(4).collect();
        assert_eq!(
            at,
            [1, 2, 3, 4].map(|k| t0 + Duration::from_millis(k)),
            "even steps, the last at the read"
        );
        assert_eq!(s.longest_gap(), Duration::from_millis(4));
    }

    #[test]
    fn without_a_gap_frames_arrive_at_the_read() {
        let t0 = Instant::now();
        let mut s = ArrivalSpread::default();
        // First read ever: nothing known before it.
        assert!(s.backlog(t0, 3).take(3).all(|t| t == t0));
        // Read again at once: the previous read emptied the ring.
        assert!(s.backlog(t0, 2).take(2).all(|t| t == t0));
    }

    #[test]
    fn a_long_stall_is_spread_over_at_most_max_spread() {
        let t0 = Instant::now();
        let mut s = ArrivalSpread::default();
        s.empty(t0);
        let read = t0 + Duration::from_secs(1);
        let first = s.backlog(read, 10).next().unwrap();
        assert_eq!(read - first, MAX_SPREAD * 9 / 10);
        assert_eq!(s.longest_gap(), Duration::from_secs(1));
    }
}
