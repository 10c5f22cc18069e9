//! The machine's state during a run, not only around it: a thread that measures
//! the core-to-core round trip ([`core_latency::DURING_RUN`]) when the run
//! starts and then once a period until it ends.
//!
//! On the machine these figures come from, the slow state comes and goes within
//! seconds: a run can start and end in the fast state and spend its middle in
//! the slow one, and the figures around it would not say so. Each measurement
//! takes both CPUs from the run for 1-7 ms (under `SCHED_FIFO`), 0.1-0.7% of
//! a run with a one-second period.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::core_latency::{self, Bounces};

/// How often a run's round trip is measured.
pub const PERIOD: Duration = Duration::from_secs(1);

/// The fastest round trip measured so far, ns: the fast state's figure once it
/// has been seen.
pub struct Fastest(AtomicU64);

impl Fastest {
    /// Nothing measured yet.
    pub const fn new() -> Fastest {
        Fastest(AtomicU64::new(f64::INFINITY.to_bits()))
    }

    /// Notes a measured round trip; returns the fastest so far.
    pub fn note(&self, ns: f64) -> f64 {
        let bits = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |cur| {
                (ns < f64::from_bits(cur)).then_some(ns.to_bits())
            })
            .unwrap_or_else(|cur| cur);
        f64::from_bits(bits).min(ns)
    }

    /// The fastest so far (None before any).
    pub fn get(&self) -> Option<f64> {
        let f = f64::from_bits(self.0.load(Ordering::Relaxed));
        f.is_finite().then_some(f)
    }
}

/// The fastest round trip this process has measured, between runs or during
/// them.
pub static FASTEST: Fastest = Fastest::new();

/// A round trip more than this many times the fastest is the slow state.
pub const SLOW_FACTOR: f64 = 2.0;

/// The share of `samples` in the slow state: more than [`SLOW_FACTOR`] × the
/// `fastest` round trip. None without samples.
pub fn slow_share(samples: &[f64], fastest: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let slow = samples
        .iter()
        .filter(|&&ns| ns > SLOW_FACTOR * fastest)
        .count();
    Some(slow as f64 / samples.len() as f64)
}

/// A running watch; [`stop`](Self::stop) ends it and hands over its samples.
pub struct StateWatch {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<f64>>,
}

impl StateWatch {
    /// Starts measuring as `how` says, at once and then every `period`.
    pub fn start(how: Bounces, period: Duration) -> StateWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut samples = Vec::new();
            loop {
                let next = Instant::now() + period;
                if let Some(ns) = core_latency::measure(how) {
                    FASTEST.note(ns);
                    samples.push(ns);
                }
                // Sleeps in short steps so that stop answers within one.
                while Instant::now() < next {
                    if flag.load(Ordering::Acquire) {
                        return samples;
                    }
                    std::thread::sleep(Duration::from_millis(20).min(period));
                }
                if flag.load(Ordering::Acquire) {
                    return samples;
                }
            }
        });
        StateWatch { stop, thread }
    }

    /// Ends the watch: the round trips measured while it ran, in order (empty
    /// where a measurement is refused: fewer than two CPUs, or no right to
    /// raise a thread's priority).
    pub fn stop(self) -> Vec<f64> {
        self.stop.store(true, Ordering::Release);
        self.thread.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slow_share_counts_round_trips_past_twice_the_fastest() {
        assert_eq!(slow_share(&[], 60.0), None);
        assert_eq!(slow_share(&[60.0, 90.0, 119.0], 60.0), Some(0.0));
        assert_eq!(slow_share(&[60.0, 330.0, 121.0, 58.0], 60.0), Some(0.5));
        assert_eq!(slow_share(&[330.0, 340.0], 60.0), Some(1.0));
    }

    #[test]
    fn the_fastest_is_the_smallest_noted() {
        let f = Fastest::new();
        assert_eq!(f.get(), None);
        assert_eq!(f.note(90.0), 90.0);
        assert_eq!(f.note(330.0), 90.0);
        assert_eq!(f.note(60.0), 60.0);
        assert_eq!(f.get(), Some(60.0));
    }

    /// The watch measures at once, so a run shorter than a period still has a
    /// figure wherever a prioritized measurement is allowed; a measurement that
    /// is refused leaves no figure rather than a wrong one.
    #[test]
    fn a_watch_measures_when_it_starts() {
        let w = StateWatch::start(core_latency::DURING_RUN, Duration::from_secs(3600));
        std::thread::sleep(Duration::from_millis(100));
        let samples = w.stop();
        let allowed = core_latency::measure(core_latency::DURING_RUN).is_some();
        if allowed {
            assert_eq!(samples.len(), 1, "{samples:?}");
        }
        for ns in samples {
            assert!(ns > 1.0 && ns <= 1e6 * 30.0 * 1.5, "{ns}");
        }
    }
}
