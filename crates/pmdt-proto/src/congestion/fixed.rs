use std::time::Instant;

use super::Controller;
use crate::rtt::RttEstimator;

/// A static window: no reaction to acks or losses.
#[derive(Debug, Clone)]
pub(crate) struct Fixed {
    window: u64,
}

impl Fixed {
    /// A fixed window of `window` bytes.
    pub(crate) fn new(window: u64) -> Self {
        Self { window }
    }
}

impl Controller for Fixed {
    fn on_ack(&mut self, _: Instant, _: Instant, _: u64, _: bool, _: &RttEstimator) {}
    fn on_congestion_event(&mut self, _: Instant, _: Instant, _: bool, _: u64) {}
    fn window(&self) -> u64 {
        self.window
    }
}
