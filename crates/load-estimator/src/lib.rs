//! How busy a poll-mode core really is.
//!
//! A DPDK poll loop always shows 100% CPU. [`LoadEstimator`] turns one TSC read and
//! the burst size per iteration into load estimates that are linear in offered
//! traffic, a capacity and headroom estimate, and a drop warning. It has no DPDK
//! dependency: any poll loop can feed it.
//!
//! Side by side, every report carries:
//! 1. thesis method 1: non-empty / all iterations, per ≥100,000 iterations;
//! 2. thesis method 2: the same ratio per fixed time window (1 s);
//! 3. thesis method 3: cycles in bursts that returned packets / all cycles;
//! 4. ours: busy cycles expressed in full-burst cycles, over available cycles.
//!    Capacity is a saturation property (full bursts from a backlog), so the cycles
//!    of every partial burst size are converted by that size's efficiency against
//!    saturation, calibrated online whenever saturated periods and periods with that
//!    size occur close in time ([`saturation_calibration`]); a size not calibrated
//!    yet is corrected by the `a + b·n` cost model learned per burst size (the fixed
//!    cost a small burst pays that full bursts amortize). Stolen time (preemption) is
//!    excluded, and EWMAs give a fast (risk) and slow (display) value.
//!
//! ```
//! use load_estimator::{EstimatorConfig, LoadEstimator};
//! let mut est = LoadEstimator::new(EstimatorConfig::new(1_000_000_000, 32));
//! let mut tsc = 0u64;
//! for i in 0..1_000_000u64 {
//!     let n = if i % 2 == 0 { 8 } else { 0 }; // what rx_burst returned
//!     est.on_poll(tsc, n);
//!     tsc += if n > 0 { 100 + 20 * n as u64 } else { 50 };
//! }
//! assert!(est.report().load > 0.0);
//! ```
#![warn(missing_docs)]

mod config;
pub mod cost_model;
mod estimator;
mod report;
pub mod saturation_calibration;

pub use config::EstimatorConfig;
pub use estimator::{LoadEstimator, ReportReader};
pub use report::LoadReport;
