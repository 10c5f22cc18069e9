//! Round-trip time estimation (RFC 6298 / RFC 9002 §5).

use std::time::Duration;

/// Timer granularity (RFC 9002's kGranularity).
pub(crate) const GRANULARITY: Duration = Duration::from_millis(1);

/// 1/alpha of RFC 6298 §2.3 (alpha = 1/8): a sample moves the smoothed RTT by an
/// eighth, `SRTT <- (1 - 1/8)·SRTT + 1/8·R'` (RFC 9002 §5.3 uses the same).
const ALPHA_INV: u32 = 8;

/// 1/beta of RFC 6298 §2.3 (beta = 1/4): `RTTVAR <- (1 - 1/4)·RTTVAR + 1/4·|SRTT - R'|`.
const BETA_INV: u32 = 4;

/// K of RFC 6298 §2.3: the timeout allows this many RTT variations above the
/// smoothed RTT, `RTO = SRTT + max(G, K·RTTVAR)` (RFC 9002 §6.2.1's PTO, likewise).
const K: u32 = 4;

/// Smoothed RTT, variance and minimum, updated from ack samples.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RttEstimator {
    latest: Duration,
    smoothed: Option<Duration>,
    var: Duration,
    min: Duration,
}

impl RttEstimator {
    /// Starts from `initial` (used until the first sample).
    pub(crate) fn new(initial: Duration) -> Self {
        Self {
            latest: initial,
            smoothed: None,
            var: initial / 2,
            min: initial,
        }
    }

    /// Adds a sample: `rtt` measured from send to ack, `ack_delay` as reported by the
    /// peer (capped at `max_ack_delay`, and only subtracted when it leaves at least min_rtt).
    pub(crate) fn update(&mut self, rtt: Duration, ack_delay: Duration, max_ack_delay: Duration) {
        self.latest = rtt;
        if self.smoothed.is_none() {
            self.min = rtt;
            self.smoothed = Some(rtt);
            self.var = rtt / 2;
            return;
        }
        self.min = self.min.min(rtt);
        let ack_delay = ack_delay.min(max_ack_delay);
        let adjusted = if rtt >= self.min + ack_delay {
            rtt - ack_delay
        } else {
            rtt
        };
        let s = self.smoothed.unwrap_or(adjusted);
        let diff = s.abs_diff(adjusted);
        self.var = (self.var * (BETA_INV - 1) + diff) / BETA_INV;
        self.smoothed = Some((s * (ALPHA_INV - 1) + adjusted) / ALPHA_INV);
    }

    /// Smoothed RTT (the initial value before any sample).
    pub(crate) fn smoothed(&self) -> Duration {
        self.smoothed.unwrap_or(self.latest)
    }

    /// RTT variance.
    pub(crate) fn var(&self) -> Duration {
        self.var
    }

    /// Minimum RTT seen.
    pub(crate) fn min(&self) -> Duration {
        self.min
    }

    /// Whether any sample arrived.
    pub(crate) fn has_sample(&self) -> bool {
        self.smoothed.is_some()
    }

    /// max(smoothed, latest): the conservative RTT for loss timers.
    pub(crate) fn conservative(&self) -> Duration {
        self.smoothed().max(self.latest)
    }

    /// Probe timeout before backoff: srtt + max(K·rttvar, granularity) + max_ack_delay.
    pub(crate) fn pto_base(&self, max_ack_delay: Duration) -> Duration {
        self.smoothed() + (self.var * K).max(GRANULARITY) + max_ack_delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converges_to_a_steady_rtt() {
        let mut r = RttEstimator::new(Duration::from_millis(333));
        for _ in 0..100 {
            r.update(
                Duration::from_millis(10),
                Duration::ZERO,
                Duration::from_millis(1),
            );
        }
        assert_eq!(r.smoothed(), Duration::from_millis(10));
        assert!(r.var() < Duration::from_micros(10));
        assert_eq!(r.min(), Duration::from_millis(10));
    }

    #[test]
    fn subtracts_ack_delay_only_when_plausible() {
        let mut r = RttEstimator::new(Duration::from_millis(100));
        r.update(
            Duration::from_millis(10),
            Duration::ZERO,
            Duration::from_millis(25),
        );
        r.update(
            Duration::from_millis(20),
            Duration::from_millis(10),
            Duration::from_millis(25),
        );
        // 20 - 10 = 10 → smoothed stays at 10
        assert_eq!(r.smoothed(), Duration::from_millis(10));
        // A delay that would push the sample below min_rtt is ignored.
        r.update(
            Duration::from_millis(12),
            Duration::from_millis(10),
            Duration::from_millis(25),
        );
        assert!(r.smoothed() > Duration::from_millis(10));
    }
}
