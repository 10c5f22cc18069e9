//! How much cheaper a packet is when the core works through a backlog in full
//! bursts than when it takes small bursts between idle polls, learned online.
//!
//! The per-burst correction (`a + b·k`, see [`crate::cost_model`]) removes the fixed
//! cost of small bursts. On real hardware a packet taken from a backlog is cheaper
//! still: the driver's ring and the packet buffers stream through the prefetchers
//! and the cache lines the sender just wrote have settled, while a burst taken right
//! after idle polls starts cold. On the memif harness of `pmdt-load-sweep` a packet
//! in a small burst at partial load costs 3–7% more cycles than in a full burst at
//! saturation, which is a positive bias of 2–5 points at mid-to-high load against
//! "offered / capacity" when only busy time is counted.
//!
//! Capacity is a saturation property, so the load relative to it has to express
//! partial-burst cycles in full-burst cycles. The ratio
//! `κ = (cycles per packet, full bursts) / (cycles per packet, partial bursts after
//! the per-burst correction)` is measured whenever a period of saturation (nearly all
//! bursts full) and a period of partial load (no full bursts) occur within a short
//! time of each other (a traffic burst, an overload, a capacity test), so the
//! machine's speed is the same for both; it is then held. Being a ratio, it survives
//! both a slow drift of the machine's speed and a change of per-packet work better
//! than a cost in cycles would. Until the first pair, `κ = 1` (no correction).

/// Kind of a report period, by its burst sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeriodKind {
    /// Nearly every burst was full: the core worked through a backlog.
    Saturated,
    /// No full bursts: the core kept up and polled idle between bursts.
    Partial,
    /// Neither: not used for calibration.
    Mixed,
}

/// The learned ratio and the latest observation of each kind.
#[derive(Debug, Clone, Default)]
pub struct SaturationCalibration {
    saturated: Option<(f64, u64)>,
    partial: Option<(f64, u64)>,
    ratio: Option<f64>,
    samples: u64,
}

/// Smallest and largest ratio accepted (a safety net against a pathological pair).
pub const RATIO_BOUNDS: (f64, f64) = (0.5, 1.2);

impl SaturationCalibration {
    /// No calibration yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Offers one period: its kind, its cycles per packet (full bursts for
    /// [`PeriodKind::Saturated`], corrected partial bursts for
    /// [`PeriodKind::Partial`]), its TSC. A pair closer than `pair_cycles` moves the
    /// ratio by weight `alpha` (the first samples are averaged equally).
    pub fn offer(
        &mut self,
        kind: PeriodKind,
        cycles_per_packet: f64,
        now: u64,
        pair_cycles: u64,
        alpha: f64,
    ) {
        if !(cycles_per_packet.is_finite() && cycles_per_packet > 0.0) {
            return;
        }
        let other = match kind {
            PeriodKind::Saturated => {
                self.saturated = Some((cycles_per_packet, now));
                self.partial
            }
            PeriodKind::Partial => {
                self.partial = Some((cycles_per_packet, now));
                self.saturated
            }
            PeriodKind::Mixed => return,
        };
        let Some((_, seen)) = other else { return };
        if now.wrapping_sub(seen) > pair_cycles {
            return;
        }
        let (Some((sat, _)), Some((part, _))) = (self.saturated, self.partial) else {
            return;
        };
        let sample = (sat / part).clamp(RATIO_BOUNDS.0, RATIO_BOUNDS.1);
        self.samples += 1;
        let w = alpha.max(1.0 / self.samples as f64);
        self.ratio = Some(match self.ratio {
            None => sample,
            Some(r) => r + w * (sample - r),
        });
    }

    /// `κ`: full-burst cycles per partial-burst cycle (1.0 until calibrated).
    pub fn ratio(&self) -> f64 {
        self.ratio.unwrap_or(1.0)
    }

    /// Pairs behind the ratio.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Sets the ratio directly (e.g. from an earlier run on the same machine).
    pub fn preset(&mut self, ratio: f64) {
        self.ratio = Some(ratio.clamp(RATIO_BOUNDS.0, RATIO_BOUNDS.1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIR: u64 = 2_000;

    #[test]
    fn uncalibrated_is_neutral() {
        let mut c = SaturationCalibration::new();
        for t in 0..100 {
            c.offer(PeriodKind::Partial, 3400.0, t * 10, PAIR, 0.05);
        }
        assert_eq!(c.ratio(), 1.0);
        assert_eq!(c.samples(), 0);
    }

    #[test]
    fn learns_from_close_pairs_and_holds() {
        let mut c = SaturationCalibration::new();
        c.offer(PeriodKind::Saturated, 3240.0, 1_000, PAIR, 0.05);
        c.offer(PeriodKind::Partial, 3375.0, 1_500, PAIR, 0.05);
        assert!((c.ratio() - 0.96).abs() < 1e-9);
        // Much later, partial periods alone (e.g. the work per packet doubled): held.
        for t in 0..1000 {
            c.offer(PeriodKind::Partial, 6800.0, 100_000 + t * 10, PAIR, 0.05);
        }
        assert!((c.ratio() - 0.96).abs() < 1e-9);
        assert_eq!(c.samples(), 1);
    }

    #[test]
    fn far_apart_periods_are_not_paired_and_mixed_ones_are_ignored() {
        let mut c = SaturationCalibration::new();
        c.offer(PeriodKind::Saturated, 3000.0, 0, PAIR, 0.05);
        c.offer(PeriodKind::Mixed, 3100.0, 10, PAIR, 0.05);
        c.offer(PeriodKind::Partial, 4000.0, 10 * PAIR, PAIR, 0.05);
        assert_eq!(c.samples(), 0);
        c.offer(PeriodKind::Partial, f64::NAN, 10 * PAIR, PAIR, 0.05);
        assert_eq!(c.ratio(), 1.0);
    }

    #[test]
    fn a_pathological_pair_is_bounded() {
        let mut c = SaturationCalibration::new();
        c.offer(PeriodKind::Saturated, 100.0, 0, PAIR, 0.05);
        c.offer(PeriodKind::Partial, 10_000.0, 1, PAIR, 0.05);
        assert_eq!(c.ratio(), RATIO_BOUNDS.0);
    }
}
