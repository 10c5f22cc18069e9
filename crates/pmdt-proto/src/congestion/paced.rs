use std::time::{Duration, Instant};

use super::{bdp, Controller};
use crate::rtt::RttEstimator;

/// A target rate, paced; random loss does not reduce it. The window is sized to keep
/// the pipe full at that rate (2 × rate × srtt, at least 64 KiB), so the rate, not the
/// window, limits sending.
#[derive(Debug, Clone)]
pub(crate) struct Paced {
    rate: u64,
    window: u64,
}

impl Paced {
    /// Pace at `rate` bytes per second.
    pub(crate) fn new(rate: u64) -> Self {
        Self {
            rate,
            window: bdp(rate, Duration::from_millis(100)).max(64 * 1024),
        }
    }
}

impl Controller for Paced {
    fn on_ack(&mut self, _: Instant, _: Instant, _: u64, _: bool, rtt: &RttEstimator) {
        self.window = (2 * bdp(self.rate, rtt.smoothed())).max(64 * 1024);
    }
    fn on_congestion_event(&mut self, _: Instant, _: Instant, _: bool, _: u64) {}
    fn window(&self) -> u64 {
        self.window
    }
    fn pacing_rate(&self) -> Option<u64> {
        Some(self.rate)
    }
}
