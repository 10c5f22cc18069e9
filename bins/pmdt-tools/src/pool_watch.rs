//! How close pmdt-wanem's mbuf pool came to running dry. Every frame the
//! emulated path holds (in its delay line and its bottleneck queue) holds an
//! mbuf (several for a frame larger than one); when none is left the ports
//! cannot receive, frames wait in the ends' rings, and the path carries less
//! than its rate × delay however the impairment is set. The summary says so.

use std::time::{Duration, Instant};

use serde::Serialize;

/// How often the pool's free count is read (a few µs: it sums the per-lcore
/// caches); a dry spell lasts as long as the delay line holds its frames.
const SAMPLE_EVERY: Duration = Duration::from_millis(1);

/// Below this many free mbufs a port's receive burst can fail.
pub const DRY_BELOW: u32 = 64;

/// The pool's size and its least free count seen.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct PoolUse {
    /// Mbufs in the pool (`--pool-size`).
    pub size: u32,
    /// The fewest free at any sample.
    pub least_available: u32,
    /// Whether it came within a receive burst of empty.
    pub ran_dry: bool,
}

/// Samples a pool's free count at most every millisecond.
#[derive(Debug)]
pub struct PoolWatch {
    size: u32,
    least: u32,
    next: Option<Instant>,
}

impl PoolWatch {
    /// Watches a pool of `size` mbufs.
    pub fn new(size: u32) -> Self {
        Self {
            size,
            least: size,
            next: None,
        }
    }

    /// Reads `available()` if a sample is due at `now`.
    pub fn sample(&mut self, now: Instant, available: impl FnOnce() -> u32) {
        if self.next.is_some_and(|n| now < n) {
            return;
        }
        self.next = Some(now + SAMPLE_EVERY);
        self.least = self.least.min(available());
    }

    /// What was seen so far.
    pub fn usage(&self) -> PoolUse {
        PoolUse {
            size: self.size,
            least_available: self.least,
            ran_dry: self.least < DRY_BELOW,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_free_count_is_kept_and_sampled_at_most_every_millisecond() {
        let t0 = Instant::now();
        let mut w = PoolWatch::new(4096);
        w.sample(t0, || 4000);
        // Too soon: not read.
        w.sample(t0 + Duration::from_micros(10), || panic!("read too soon"));
        w.sample(t0 + SAMPLE_EVERY, || 100);
        w.sample(t0 + SAMPLE_EVERY * 2, || 3000);
        assert_eq!(
            w.usage(),
            PoolUse {
                size: 4096,
                least_available: 100,
                ran_dry: false
            }
        );
        w.sample(t0 + SAMPLE_EVERY * 3, || 5);
        assert!(w.usage().ran_dry);
    }
}
