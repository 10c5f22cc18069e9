use std::time::Instant;

use super::Controller;
use crate::rtt::RttEstimator;

/// Minimum congestion window in datagrams (RFC 9002 §7.2).
const MIN_WINDOW_PACKETS: u64 = 2;

/// NewReno (RFC 9002 §7): slow start, congestion avoidance (+1 MSS per window),
/// halving on loss once per recovery period, collapse to 2 MSS on persistent congestion.
/// MSS here is the largest datagram, header included (RFC 9002's
/// max_datagram_size), the unit bytes in flight are counted in.
#[derive(Debug, Clone)]
pub(crate) struct NewReno {
    mss: u64,
    window: u64,
    ssthresh: u64,
    recovery_start: Option<Instant>,
    acked_in_ca: u64,
}

impl NewReno {
    /// A controller for datagrams of at most `mss` bytes (header included); initial
    /// window 10 MSS (RFC 9002 §7.2).
    pub(crate) fn new(mss: u64) -> Self {
        Self {
            mss,
            window: 10 * mss,
            ssthresh: u64::MAX,
            recovery_start: None,
            acked_in_ca: 0,
        }
    }

    /// RFC 9002 §7.2: the minimum window is 2 × max_datagram_size.
    fn min_window(&self) -> u64 {
        MIN_WINDOW_PACKETS * self.mss
    }
}

impl Controller for NewReno {
    fn on_ack(
        &mut self,
        _now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        _: &RttEstimator,
    ) {
        if app_limited || self.recovery_start.is_some_and(|r| sent <= r) {
            return;
        }
        if self.window < self.ssthresh {
            self.window += bytes;
        } else {
            self.acked_in_ca += bytes;
            if self.acked_in_ca >= self.window {
                self.acked_in_ca -= self.window;
                self.window += self.mss;
            }
        }
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        largest_lost_sent: Instant,
        persistent: bool,
        _: u64,
    ) {
        if self.recovery_start.is_some_and(|r| largest_lost_sent <= r) && !persistent {
            return;
        }
        self.recovery_start = Some(now);
        self.window = (self.window / 2).max(self.min_window());
        self.ssthresh = self.window;
        self.acked_in_ca = 0;
        if persistent {
            self.window = self.min_window();
        }
    }

    fn window(&self) -> u64 {
        self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn slow_start_then_halving_once_per_recovery() {
        let t0 = Instant::now();
        let rtt = RttEstimator::new(Duration::from_millis(10));
        let mut c = NewReno::new(1000);
        assert_eq!(c.window(), 10_000);
        c.on_ack(t0, t0, 10_000, false, &rtt);
        assert_eq!(c.window(), 20_000, "slow start doubles per window");
        let t1 = t0 + Duration::from_millis(10);
        c.on_congestion_event(t1, t0, false, 1000);
        assert_eq!(c.window(), 10_000);
        // A second loss from before the recovery started does not halve again.
        c.on_congestion_event(t1 + Duration::from_millis(1), t0, false, 1000);
        assert_eq!(c.window(), 10_000);
        // Acks of packets sent before recovery do not grow the window.
        c.on_ack(t1, t0, 5000, false, &rtt);
        assert_eq!(c.window(), 10_000);
        // Congestion avoidance: +1 MSS per window of acked bytes.
        let t2 = t1 + Duration::from_millis(5);
        c.on_ack(t2, t2, 10_000, false, &rtt);
        assert_eq!(c.window(), 11_000);
        c.on_congestion_event(
            t2 + Duration::from_millis(20),
            t2 + Duration::from_millis(1),
            true,
            1,
        );
        assert_eq!(
            c.window(),
            2000,
            "persistent congestion collapses the window"
        );
    }
}
