//! Per-burst-size efficiency against saturation, learned online: how many cycles a
//! packet handled in a burst of `k` would have cost in the full bursts a saturated
//! core runs.
//!
//! Capacity is a saturation property: the core then works through a backlog in full
//! bursts. Load relative to capacity must therefore count the cycles of a partial
//! burst in full-burst cycles. The `a + b·k` line of [`crate::cost_model`] does that
//! for the fixed cost of a burst, but real hardware has more: a packet taken from a
//! backlog streams through the prefetchers and finds the lines the sender wrote
//! settled, a burst taken right after idle polls starts cold, and a burst that grew
//! because the core was briefly slow is slow itself. On the memif harness of
//! `pmdt-load-sweep` a packet in a small burst at partial load costs 3–7% more than
//! in a full burst at saturation (heavy per-packet work) and ~20% more with light
//! work, and a per-period line fit cannot separate these effects.
//!
//! So the efficiency of each burst size is measured directly: whenever a saturated
//! period (nearly all bursts full) and a period with at least [`MIN_BURSTS`] bursts of
//! size `k` occur within a short time of each other (a traffic burst, an overload, a
//! capacity test), the machine's speed is the same for both, and
//! `e_k = (cycles per packet in full bursts) / (cycles per packet in bursts of k)` is
//! one sample for that size. Samples are averaged slowly and held. Being ratios, they
//! survive a slow drift of the machine's speed, and a change of per-packet work
//! moves them only by the change in the fixed share. A size never calibrated falls
//! back to the `a + b·k` correction.

/// Bursts of one size a period needs before its cost per packet is a sample.
pub const MIN_BURSTS: u64 = 20;

/// Pairs a size needs before its efficiency is used (the `a + b·k` correction
/// stands in until then).
pub const MIN_PAIRS: u64 = 50;

/// Weight of a new period in the short running averages of the cycles per packet of
/// saturated periods and of each size: one odd period (a stall that was not long
/// enough to count as stolen) must not become the reference of the hundreds of pairs
/// that follow it.
pub const PERIOD_SMOOTHING: f64 = 0.1;

/// Smallest and largest efficiency accepted (a safety net against a pathological
/// pair, e.g. a stall inside the saturated period).
pub const EFFICIENCY_BOUNDS: (f64, f64) = (0.02, 1.1);

/// Learned efficiencies per burst size, and the latest observations they pair.
#[derive(Debug, Clone)]
pub struct SaturationCalibration {
    saturated: Option<(f64, u64)>,
    /// Per burst size: latest cycles per packet and its TSC.
    partial: Vec<Option<(f64, u64)>>,
    efficiency: Vec<Option<f64>>,
    samples: Vec<u64>,
    last_sample: Vec<u64>,
    /// Longest gap, in cycles, between the two observations of a pair.
    pair_cycles: u64,
    /// Time constant, in cycles, of the average over pairs.
    time_constant: u64,
}

impl SaturationCalibration {
    /// No calibration yet, for bursts of up to `full` packets; observations at most
    /// `pair_cycles` apart form a pair, and pairs are averaged with time constant
    /// `time_constant` (cycles).
    pub fn new(full: usize, pair_cycles: u64, time_constant: u64) -> Self {
        Self {
            saturated: None,
            partial: vec![None; full],
            efficiency: vec![None; full],
            samples: vec![0; full],
            last_sample: vec![0; full],
            pair_cycles,
            time_constant: time_constant.max(1),
        }
    }

    /// Offers a saturated period's cycles per packet (in full bursts) at `now`;
    /// pairs it with every size seen within the pair window.
    pub fn offer_saturated(&mut self, cycles_per_packet: f64, now: u64) {
        if !(cycles_per_packet.is_finite() && cycles_per_packet > 0.0) {
            return;
        }
        let sat = smooth(self.saturated, cycles_per_packet, now, self.pair_cycles);
        self.saturated = Some((sat, now));
        for k in 1..self.partial.len() {
            if let Some((c, t)) = self.partial[k] {
                if now.wrapping_sub(t) <= self.pair_cycles {
                    self.sample(k, sat / c, now);
                }
            }
        }
    }

    /// Offers the cycles per packet of `bursts` bursts of size `k` (a partial size)
    /// seen in one period at `now`; pairs it with a saturated period within the pair
    /// window.
    pub fn offer_partial(&mut self, k: usize, bursts: u64, cycles_per_packet: f64, now: u64) {
        if k == 0
            || k >= self.partial.len()
            || bursts < MIN_BURSTS
            || !(cycles_per_packet.is_finite() && cycles_per_packet > 0.0)
        {
            return;
        }
        let part = smooth(self.partial[k], cycles_per_packet, now, self.pair_cycles);
        self.partial[k] = Some((part, now));
        if let Some((sat, t)) = self.saturated {
            if now.wrapping_sub(t) <= self.pair_cycles {
                self.sample(k, sat / part, now);
            }
        }
    }

    fn sample(&mut self, k: usize, e: f64, now: u64) {
        let e = e.clamp(EFFICIENCY_BOUNDS.0, EFFICIENCY_BOUNDS.1);
        self.samples[k] += 1;
        // Weighted by the time since this size's last sample (an average over time,
        // not over pairs: hundreds of periods pairing with one reference count as the
        // seconds they span); the first samples are averaged equally.
        let dt = now.wrapping_sub(self.last_sample[k]) as f64;
        self.last_sample[k] = now;
        let w = (dt / self.time_constant as f64)
            .min(1.0)
            .max(1.0 / self.samples[k] as f64);
        self.efficiency[k] = Some(match self.efficiency[k] {
            None => e,
            Some(old) => old + w * (e - old),
        });
    }

    /// `e_k`, once calibrated by at least [`MIN_PAIRS`] pairs (or preset): full-burst
    /// cycles per cycle spent in bursts of `k`.
    pub fn efficiency(&self, k: usize) -> Option<f64> {
        if self.samples.get(k).copied().unwrap_or(0) < MIN_PAIRS {
            return None;
        }
        self.efficiency.get(k).copied().flatten()
    }

    /// Calibration pairs behind all sizes.
    pub fn samples(&self) -> u64 {
        self.samples.iter().sum()
    }

    /// Presets `e_k` (e.g. from an earlier run on the same machine and workload).
    pub fn preset(&mut self, k: usize, efficiency: f64) {
        if k > 0 && k < self.efficiency.len() {
            self.efficiency[k] = Some(efficiency.clamp(EFFICIENCY_BOUNDS.0, EFFICIENCY_BOUNDS.1));
            self.samples[k] = self.samples[k].max(MIN_PAIRS);
        }
    }
}

/// A short running average of a period value, restarted when the previous value is
/// older than `horizon` cycles.
fn smooth(prev: Option<(f64, u64)>, value: f64, now: u64, horizon: u64) -> f64 {
    match prev {
        Some((avg, t)) if now.wrapping_sub(t) <= horizon => avg + PERIOD_SMOOTHING * (value - avg),
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIR: u64 = 2_000;
    const TAU: u64 = 20_000;

    #[test]
    fn uncalibrated_sizes_have_no_efficiency() {
        let mut c = SaturationCalibration::new(32, PAIR, TAU);
        for t in 0..100 {
            c.offer_partial(8, 100, 3400.0, t * 10);
        }
        assert_eq!(c.efficiency(8), None);
        assert_eq!(c.samples(), 0);
    }

    #[test]
    fn learns_per_size_from_close_pairs_and_holds() {
        let mut c = SaturationCalibration::new(32, PAIR, TAU);
        // Saturation and partial load alternate (a capacity test, traffic bursts).
        for round in 0..40u64 {
            let t0 = round * 1_000;
            c.offer_saturated(3240.0, t0);
            c.offer_partial(8, 100, 3375.0, t0 + 10);
            c.offer_partial(16, 50, 3300.0, t0 + 20);
        }
        assert!((c.efficiency(8).unwrap() - 0.96).abs() < 1e-9);
        assert!((c.efficiency(16).unwrap() - 3240.0 / 3300.0).abs() < 1e-9);
        assert_eq!(c.efficiency(24), None);
        let pairs = c.samples();
        // Much later, partial periods alone (e.g. the work per packet doubled): held.
        for t in 0..1000 {
            c.offer_partial(8, 100, 6800.0, 1_000_000 + t * 10);
        }
        assert!((c.efficiency(8).unwrap() - 0.96).abs() < 1e-9);
        assert_eq!(c.samples(), pairs);
    }

    #[test]
    fn few_pairs_are_not_used_and_one_odd_period_does_not_take_over() {
        let mut c = SaturationCalibration::new(32, PAIR, TAU);
        c.offer_saturated(3240.0, 0);
        c.offer_partial(8, 100, 3375.0, 10);
        assert_eq!(c.efficiency(8), None, "one pair is not a calibration");
        for t in 1..200 {
            c.offer_partial(8, 100, 3375.0, 10 + t);
        }
        let settled = c.efficiency(8).unwrap();
        // One saturated period twice as slow (a stall below the stolen threshold),
        // then 200 partial periods pairing with it.
        c.offer_saturated(6480.0, 300);
        for t in 0..200 {
            c.offer_partial(8, 100, 3375.0, 310 + t);
        }
        let after = c.efficiency(8).unwrap();
        assert!(after - settled < 0.05, "{settled} -> {after}");
    }

    #[test]
    fn far_apart_or_thin_observations_are_not_paired() {
        let mut c = SaturationCalibration::new(32, PAIR, TAU);
        c.offer_saturated(3000.0, 0);
        c.offer_partial(8, 100, 4000.0, 10 * PAIR);
        c.offer_partial(4, MIN_BURSTS - 1, 4000.0, 10);
        c.offer_partial(5, 100, f64::NAN, 10);
        c.offer_partial(32, 100, 3000.0, 10);
        assert_eq!(c.samples(), 0);
    }

    #[test]
    fn pathological_pairs_are_bounded() {
        let mut c = SaturationCalibration::new(32, PAIR, TAU);
        for t in 0..MIN_PAIRS {
            c.offer_saturated(100.0, t * 10);
            c.offer_partial(8, 100, 100_000.0, t * 10 + 1);
            c.offer_partial(9, 100, 10.0, t * 10 + 2);
        }
        assert_eq!(c.efficiency(8), Some(EFFICIENCY_BOUNDS.0));
        assert_eq!(c.efficiency(9), Some(EFFICIENCY_BOUNDS.1));
    }
}
