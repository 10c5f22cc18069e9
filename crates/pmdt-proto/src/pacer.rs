//! Token-bucket pacing: at most `burst` bytes at once, refilled at the pacing rate.
//!
//! A sender that waits for the pacer and wakes up late (an OS sleep overshoots by
//! tens of microseconds, a preempted poller by milliseconds) would lose the tokens
//! the bucket could not hold and fall below the pacing rate. The pacer remembers the
//! time it asked the sender to come back; the lateness beyond it, up to
//! [`MAX_CATCH_UP`], is credited on top of the bucket, so the average rate holds
//! while idle time (waiting for acks, for data) still earns no burst.

use std::time::{Duration, Instant};

/// How much late-wakeup time the pacer lets a sender make up (as Linux sizes a
/// burst to 1 ms of data at the pacing rate, `sk_pacing_shift`).
pub(crate) const MAX_CATCH_UP: Duration = Duration::from_millis(1);

/// A token bucket in bytes.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    capacity: u64,
    tokens: u64,
    last: Option<Instant>,
    /// Fractional token remainder in byte·nanoseconds, so slow rates are exact.
    remainder: u128,
    /// When the sender was told to come back (it was waiting for tokens only).
    due: Option<Instant>,
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
            due: None,
        }
    }

    /// The sender stopped for another reason than the pacer (window, credit,
    /// application): time until it comes back is idle time, not lateness.
    pub(crate) fn forget_due(&mut self) {
        self.due = None;
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
        // Woken up late for a pacing deadline: the bucket may hold what the
        // lateness earned (up to MAX_CATCH_UP) on top of its capacity.
        let late = self
            .due
            .take()
            .map_or(Duration::ZERO, |due| now.saturating_duration_since(due))
            .min(MAX_CATCH_UP);
        let cap = self.capacity as u128 + rate as u128 * late.as_nanos() / 1_000_000_000;
        self.tokens = (self.tokens as u128 + add).min(cap) as u64;
        if self.tokens as u128 == cap {
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
        let due = now + Duration::from_nanos(nanos.min(u64::MAX as u128) as u64);
        self.due = Some(due);
        Some(due)
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
    fn late_wakeups_keep_the_rate() {
        // The sender comes back 200 µs after every deadline (an OS sleep that
        // overshoots): with a 3-packet bucket at 1 Gbit/s it would fall to a third.
        let t0 = Instant::now();
        let rate = 125_000_000; // 1 Gbit/s
        let mut p = Pacer::new(3 * 1500, 3 * 1500);
        let mut now = t0;
        let mut sent = 0u64;
        while now < t0 + Duration::from_secs(1) {
            match p.try_send(now, 1500, rate) {
                None => sent += 1500,
                Some(t) => now = t + Duration::from_micros(200),
            }
        }
        // Within the last (unused) lateness and one packet of the rate, at most
        // the first bucket and one catch-up above it.
        assert!(sent >= rate - rate / 5000 - 1500, "{sent}");
        assert!(sent <= rate + 3 * 1500 + rate / 1000 + 1500, "{sent}");
    }

    #[test]
    fn idle_time_earns_no_burst() {
        let t0 = Instant::now();
        let rate = 125_000_000;
        let mut p = Pacer::new(3 * 1500, 3 * 1500);
        let mut now = t0;
        while p.try_send(now, 1500, rate).is_none() {}
        // Blocked by the window instead: 10 ms later only the bucket is there.
        p.forget_due();
        now += Duration::from_millis(10);
        let mut burst = 0;
        while p.try_send(now, 1500, rate).is_none() {
            burst += 1;
        }
        assert_eq!(burst, 3);
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
