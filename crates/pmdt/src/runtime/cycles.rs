//! A cycle counter for the load estimator: the TSC on x86_64 (calibrated once
//! against the monotonic clock), nanoseconds elsewhere.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Current cycle count.
#[inline]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Cycles per second of [`now`] (measured once over 20 ms).
pub fn hz() -> u64 {
    static HZ: OnceLock<u64> = OnceLock::new();
    *HZ.get_or_init(|| {
        if cfg!(not(target_arch = "x86_64")) {
            return 1_000_000_000;
        }
        let (t0, c0) = (Instant::now(), now());
        std::thread::sleep(Duration::from_millis(20));
        let (dt, dc) = (t0.elapsed(), now() - c0);
        (dc as f64 / dt.as_secs_f64()) as u64
    })
}
