//! Estimator settings.

use serde::{Deserialize, Serialize};

/// Settings of a [`crate::LoadEstimator`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EstimatorConfig {
    /// TSC frequency (cycles per second).
    pub tsc_hz: u64,
    /// Largest burst the poll loop asks for (`nb_pkts` of `rx_burst`).
    pub burst_size: u32,
    /// Thesis method 1: iterations per ratio.
    pub method1_iterations: u64,
    /// Thesis method 2 and report cadence: window length in cycles (default 1 s).
    pub window_cycles: u64,
    /// Our estimate is published every this many cycles (default 10 ms);
    /// `u64::MAX`: only when the caller closes a period
    /// ([`crate::LoadEstimator::publish`]).
    pub report_cycles: u64,
    /// EWMA weight of a new report in the fast (drop-risk) average.
    pub fast_alpha: f64,
    /// EWMA weight of a new report in the slow (display) average.
    pub slow_alpha: f64,
    /// Forgetting factor of the cost model per report (1.0 = never forget).
    pub model_forgetting: f64,
    /// A saturated period and a period with bursts of some partial size, at most
    /// this many cycles apart, calibrate that size's efficiency (default 2 s: the
    /// machine's speed is the same for both).
    pub calibration_pair_cycles: u64,
    /// Time constant, in cycles, of the average that turns calibration pairs into a
    /// size's efficiency (default 20 s of pairs; the first pairs are averaged
    /// equally). Single pairs are noisy on a shared machine.
    pub calibration_time_constant_cycles: u64,
    /// An iteration longer than this many times the typical iteration of its burst size
    /// (and longer than `stolen_min_cycles`) is preemption: excluded from the time base.
    pub stolen_factor: u64,
    /// Minimum length of a stolen interval, cycles.
    pub stolen_min_cycles: u64,
    /// Rx descriptor ring size (for occupancy-based risk); 0 if unknown.
    pub rx_ring_size: u32,
    /// The warning is raised when at least this many of the last 10 reports were
    /// risky (drop risk ≥ 0.5): a spike of a few reports (a short stall of the
    /// machine) is filtered, an intermittent but sustained risk is not (default 5).
    pub warn_after_reports: u32,
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        let hz = 2_000_000_000;
        Self {
            tsc_hz: hz,
            burst_size: 32,
            method1_iterations: 100_000,
            window_cycles: hz,
            report_cycles: hz / 100,
            fast_alpha: 0.3,
            slow_alpha: 0.05,
            model_forgetting: 0.98,
            calibration_pair_cycles: 2 * hz,
            calibration_time_constant_cycles: 20 * hz,
            stolen_factor: 20,
            stolen_min_cycles: hz / 50_000, // 20 µs
            rx_ring_size: 0,
            warn_after_reports: 5,
        }
    }
}

impl EstimatorConfig {
    /// Defaults for a TSC of `tsc_hz` and bursts of `burst_size`.
    pub fn new(tsc_hz: u64, burst_size: u32) -> Self {
        Self {
            tsc_hz,
            burst_size,
            window_cycles: tsc_hz,
            calibration_pair_cycles: 2 * tsc_hz,
            calibration_time_constant_cycles: 20 * tsc_hz,
            report_cycles: tsc_hz / 100,
            stolen_min_cycles: tsc_hz / 50_000,
            ..Default::default()
        }
    }
}
