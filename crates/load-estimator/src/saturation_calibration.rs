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

/// Smallest and largest efficiency accepted (a safety net against a pathological
/// pair, e.g. a stall inside the saturated period).
pub const EFFICIENCY_BOUNDS: (f64, f64) = (0.02, 1.5);

/// Learned efficiencies per burst size, and the latest observations they pair.
#[derive(Debug, Clone)]
pub struct SaturationCalibration {
    saturated: Option<(f64, u64)>,
    /// Per burst size: latest cycles per packet and its TSC.
    partial: Vec<Option<(f64, u64)>>,
    efficiency: Vec<Option<f64>>,
    samples: Vec<u64>,
}

impl SaturationCalibration {
    /// No calibration yet, for bursts of up to `full` packets.
    pub fn new(full: usize) -> Self {
        Self {
            saturated: None,
            partial: vec![None; full],
            efficiency: vec![None; full],
            samples: vec![0; full],
        }
    }

    /// Offers a saturated period's cycles per packet (in full bursts) at `now`;
    /// pairs it with every size seen within `pair_cycles`.
    pub fn offer_saturated(
        &mut self,
        cycles_per_packet: f64,
        now: u64,
        pair_cycles: u64,
        alpha: f64,
    ) {
        if !(cycles_per_packet.is_finite() && cycles_per_packet > 0.0) {
            return;
        }
        self.saturated = Some((cycles_per_packet, now));
        for k in 1..self.partial.len() {
            if let Some((c, t)) = self.partial[k] {
                if now.wrapping_sub(t) <= pair_cycles {
                    self.sample(k, cycles_per_packet / c, alpha);
                }
            }
        }
    }

    /// Offers the cycles per packet of `bursts` bursts of size `k` (a partial size)
    /// seen in one period at `now`; pairs it with a saturated period within
    /// `pair_cycles`.
    pub fn offer_partial(
        &mut self,
        k: usize,
        bursts: u64,
        cycles_per_packet: f64,
        now: u64,
        pair_cycles: u64,
        alpha: f64,
    ) {
        if k == 0
            || k >= self.partial.len()
            || bursts < MIN_BURSTS
            || !(cycles_per_packet.is_finite() && cycles_per_packet > 0.0)
        {
            return;
        }
        self.partial[k] = Some((cycles_per_packet, now));
        if let Some((sat, t)) = self.saturated {
            if now.wrapping_sub(t) <= pair_cycles {
                self.sample(k, sat / cycles_per_packet, alpha);
            }
        }
    }

    fn sample(&mut self, k: usize, e: f64, alpha: f64) {
        let e = e.clamp(EFFICIENCY_BOUNDS.0, EFFICIENCY_BOUNDS.1);
        self.samples[k] += 1;
        // The first samples are averaged equally, then exponentially.
        let w = alpha.max(1.0 / self.samples[k] as f64);
        self.efficiency[k] = Some(match self.efficiency[k] {
            None => e,
            Some(old) => old + w * (e - old),
        });
    }

    /// `e_k`, once calibrated: full-burst cycles per cycle spent in bursts of `k`.
    pub fn efficiency(&self, k: usize) -> Option<f64> {
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIR: u64 = 2_000;

    #[test]
    fn uncalibrated_sizes_have_no_efficiency() {
        let mut c = SaturationCalibration::new(32);
        for t in 0..100 {
            c.offer_partial(8, 100, 3400.0, t * 10, PAIR, 0.01);
        }
        assert_eq!(c.efficiency(8), None);
        assert_eq!(c.samples(), 0);
    }

    #[test]
    fn learns_per_size_from_close_pairs_and_holds() {
        let mut c = SaturationCalibration::new(32);
        c.offer_partial(8, 100, 3375.0, 900, PAIR, 0.01);
        c.offer_partial(16, 50, 3300.0, 900, PAIR, 0.01);
        c.offer_saturated(3240.0, 1_000, PAIR, 0.01);
        assert!((c.efficiency(8).unwrap() - 0.96).abs() < 1e-9);
        assert!((c.efficiency(16).unwrap() - 3240.0 / 3300.0).abs() < 1e-9);
        assert_eq!(c.efficiency(24), None);
        // Much later, partial periods alone (e.g. the work per packet doubled): held.
        for t in 0..1000 {
            c.offer_partial(8, 100, 6800.0, 100_000 + t * 10, PAIR, 0.01);
        }
        assert!((c.efficiency(8).unwrap() - 0.96).abs() < 1e-9);
        assert_eq!(c.samples(), 2);
    }

    #[test]
    fn far_apart_or_thin_observations_are_not_paired() {
        let mut c = SaturationCalibration::new(32);
        c.offer_saturated(3000.0, 0, PAIR, 0.01);
        c.offer_partial(8, 100, 4000.0, 10 * PAIR, PAIR, 0.01);
        c.offer_partial(4, MIN_BURSTS - 1, 4000.0, 10, PAIR, 0.01);
        c.offer_partial(5, 100, f64::NAN, 10, PAIR, 0.01);
        c.offer_partial(32, 100, 3000.0, 10, PAIR, 0.01);
        assert_eq!(c.samples(), 0);
    }

    #[test]
    fn a_pathological_pair_is_bounded() {
        let mut c = SaturationCalibration::new(32);
        c.offer_saturated(100.0, 0, PAIR, 0.01);
        c.offer_partial(8, 100, 100_000.0, 1, PAIR, 0.01);
        assert_eq!(c.efficiency(8), Some(EFFICIENCY_BOUNDS.0));
    }
}
