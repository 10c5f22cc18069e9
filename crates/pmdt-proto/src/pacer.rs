//! Token-bucket pacing: at most `burst` bytes at once, refilled at the pacing rate.

use std::time::{Duration, Instant};

/// A token bucket in bytes.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    capacity: u64,
    tokens: u64,
    last: Option<Instant>,
    /// Fractional token remainder in byte·nanoseconds, so slow rates are exact.
    remainder: u128,
}

impl Pacer {
    /// A bucket holding up to `burst` bytes, starting with `initial` bytes of
    /// allowance (small, so many new flows do not burst into a queue at once).
    pub(crate) fn new(burst: u64, initial: u64) -> Self {
        Self {
            capacity: burst,
            tokens: initial.min(burst),
            last: None,
            remainder: 0,
        }
    }

    fn refill(&mut self, now: Instant, rate: u64) {
        let last = *self.last.get_or_insert(now);
        if now <= last {
            return;
        }
        let elapsed = now - last;
        self.last = Some(now);
        let total = rate as u128 * elapsed.as_nanos() + self.remainder;
        let add = total / 1_000_000_000;
        self.remainder = total % 1_000_000_000;
        self.tokens = (self.tokens as u128 + add).min(self.capacity as u128) as u64;
        if self.tokens == self.capacity {
            self.remainder = 0;
        }
    }

    /// When a packet of `bytes` may be sent at `rate` bytes/s: `None` = now (and the
    /// tokens are spent), `Some(t)` = not before `t`.
    pub(crate) fn try_send(&mut self, now: Instant, bytes: u64, rate: u64) -> Option<Instant> {
        if rate == 0 {
            return None;
        }
        self.refill(now, rate);
        let need = bytes.min(self.capacity);
        if self.tokens >= need {
            self.tokens -= need;
            return None;
        }
        let missing = (need - self.tokens) as u128 * 1_000_000_000;
        let nanos = missing
            .saturating_sub(self.remainder)
            .div_ceil(rate as u128);
        Some(now + Duration::from_nanos(nanos.min(u64::MAX as u128) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_run_rate_is_the_configured_rate() {
        let t0 = Instant::now();
        let rate = 1_250_000; // 10 Mbit/s
        let mut p = Pacer::new(3000, 3000);
        let mut now = t0;
        let mut sent = 0u64;
        while now < t0 + Duration::from_secs(1) {
            match p.try_send(now, 1000, rate) {
                None => sent += 1000,
                Some(t) => now = t,
            }
        }
        // 1 s at 1.25 MB/s plus the initial burst.
        assert!((1_250_000..=1_254_000).contains(&sent), "{sent}");
    }

    #[test]
    fn burst_is_bounded() {
        let t0 = Instant::now();
        let mut p = Pacer::new(3000, 3000);
        assert!(p.try_send(t0, 1000, 1000).is_none());
        assert!(p.try_send(t0, 1000, 1000).is_none());
        assert!(p.try_send(t0, 1000, 1000).is_none());
        let next = p.try_send(t0, 1000, 1000).unwrap();
        assert_eq!(next - t0, Duration::from_secs(1));
    }
}
