//! What the estimator publishes.

use serde::{Deserialize, Serialize};

/// A snapshot of every estimator, plain and serde-serializable. Loads are fractions
/// (1.0 = the core is saturated).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// TSC value when this report was made.
    pub tsc: u64,
    /// Thesis method 1: non-empty / all iterations over the last ≥100,000 iterations.
    pub method1_nonempty_iterations: f64,
    /// Thesis method 2: the same ratio over the last fixed time window (1 s).
    pub method2_nonempty_time_window: f64,
    /// Thesis method 3: cycles in bursts that returned packets / cycles in all bursts,
    /// over the last window.
    pub method3_busy_cycles: f64,
    /// Ours, over the last report period: packets × full-burst cost per packet /
    /// available cycles.
    pub load: f64,
    /// Ours, fast EWMA (drop risk).
    pub load_fast: f64,
    /// Ours, slow EWMA (display).
    pub load_slow: f64,
    /// Packets handled in the last period: every packet given to
    /// [`crate::LoadEstimator::on_poll`], those of stolen iterations and of
    /// iterations past a full burst included.
    pub packets: u64,
    /// Packets per second handled in the last period (`packets` over its
    /// available time).
    pub packets_per_s: f64,
    /// Estimated capacity: packets per second at saturation (full bursts).
    pub capacity_pps: f64,
    /// Capacity left: `capacity_pps - packets_per_s` (0 when overloaded).
    pub headroom_pps: f64,
    /// Cost model: cycles per packet.
    pub cycles_per_packet: f64,
    /// Cost model: fixed cycles per non-empty iteration.
    pub cycles_per_burst: f64,
    /// κ: the partial-burst cycles of the last period expressed in full-burst cycles,
    /// over their raw count (1.0: no correction). Per burst size, by the efficiency
    /// calibrated against saturation, else by the `a + b·k` fixed-cost correction.
    pub saturation_cost_ratio: f64,
    /// Saturated/partial pairs behind the per-size efficiencies.
    pub calibration_pairs: u64,
    /// Mean cycles of an empty poll.
    pub empty_poll_cycles: f64,
    /// Fraction of the period's time excluded as stolen (preemption).
    pub stolen_fraction: f64,
    /// Fraction of non-empty iterations that returned a full burst.
    pub full_burst_fraction: f64,
    /// Rx ring occupancy (0..1) when the caller reports it, else 0.
    pub rx_occupancy: f64,
    /// Drop risk, 0 (none) to 1 (drops imminent or happening).
    pub drop_risk: f64,
    /// Sustained risk: expect drops.
    pub drop_warning: bool,
    /// Seconds until the rx ring overflows at the current excess rate, when over capacity.
    pub time_to_overflow_s: Option<f64>,
    /// Iterations seen in total.
    pub iterations: u64,
}
