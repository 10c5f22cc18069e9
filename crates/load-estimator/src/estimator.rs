//! The estimator a poll loop feeds once per iteration.

use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::config::EstimatorConfig;
use crate::cost_model::CostModel;
use crate::report::LoadReport;
use crate::saturation_calibration::SaturationCalibration;

/// Reads the latest [`LoadReport`] from any thread (wait-free, no lock shared with
/// the poll loop).
#[derive(Debug, Clone)]
pub struct ReportReader {
    cell: Arc<ArcSwap<LoadReport>>,
}

impl ReportReader {
    /// The latest report.
    pub fn latest(&self) -> LoadReport {
        (**self.cell.load()).clone()
    }
}

/// Per-iteration accounting for a poll-mode loop.
///
/// Call [`LoadEstimator::on_poll`] once per iteration with one TSC read taken at the
/// same point of every iteration (e.g. just before `rx_burst`) and the number of
/// packets that iteration's `rx_burst` returned. The cycles between two calls are
/// charged to the earlier iteration and its burst size.
pub struct LoadEstimator {
    cfg: EstimatorConfig,
    burst: usize,
    // hot path state
    last: u64,
    prev_n: usize,
    /// The pending iteration's packets, as given (not capped at a burst).
    prev_packets: u64,
    /// Packets of the period's iterations, every one counted (the cost figures
    /// leave out stolen iterations and cap a burst at `burst`).
    packets: u64,
    started: bool,
    cycles: Vec<u64>,
    count: Vec<u64>,
    stolen: u64,
    /// Per burst size: an iteration longer than this was preempted.
    stolen_threshold: Vec<u64>,
    period_start: u64,
    // slower state
    model: CostModel,
    calibration: SaturationCalibration,
    window: WindowTotals,
    m1: WindowTotals,
    report: LoadReport,
    risk_history: u16,
    rx_pending: Option<u32>,
    cell: Arc<ArcSwap<LoadReport>>,
}

#[derive(Debug, Clone, Copy, Default)]
struct WindowTotals {
    start: u64,
    iterations: u64,
    nonempty: u64,
    cycles: u64,
    busy_cycles: u64,
}

impl WindowTotals {
    fn add(&mut self, cycles: &[u64], count: &[u64]) {
        for k in 0..cycles.len() {
            self.iterations += count[k];
            self.cycles += cycles[k];
            if k > 0 {
                self.nonempty += count[k];
                self.busy_cycles += cycles[k];
            }
        }
    }
}

impl LoadEstimator {
    /// A new estimator.
    pub fn new(cfg: EstimatorConfig) -> Self {
        let burst = cfg.burst_size.max(1) as usize;
        Self {
            burst,
            last: 0,
            prev_n: 0,
            prev_packets: 0,
            packets: 0,
            started: false,
            cycles: vec![0; burst + 1],
            count: vec![0; burst + 1],
            stolen: 0,
            stolen_threshold: vec![u64::MAX; burst + 1],
            period_start: 0,
            model: CostModel::new(burst as u32),
            calibration: SaturationCalibration::new(
                burst,
                cfg.calibration_pair_cycles,
                cfg.calibration_time_constant_cycles,
            ),
            window: WindowTotals::default(),
            m1: WindowTotals::default(),
            report: LoadReport::default(),
            risk_history: 0,
            rx_pending: None,
            cell: Arc::new(ArcSwap::from_pointee(LoadReport::default())),
            cfg,
        }
    }

    /// A handle other threads use to read reports.
    pub fn reader(&self) -> ReportReader {
        ReportReader {
            cell: self.cell.clone(),
        }
    }

    /// The latest report (on the polling thread).
    pub fn report(&self) -> &LoadReport {
        &self.report
    }

    /// The configuration.
    pub fn config(&self) -> &EstimatorConfig {
        &self.cfg
    }

    /// Records one poll iteration: `now` is this iteration's TSC read, `n` the packets
    /// its `rx_burst` returned. Cost: a subtraction, three adds and two compares.
    #[inline]
    pub fn on_poll(&mut self, now: u64, n: u32) {
        let d = now.wrapping_sub(self.last);
        let k = self.prev_n;
        self.last = now;
        self.prev_n = (n as usize).min(self.burst);
        self.packets += std::mem::replace(&mut self.prev_packets, u64::from(n));
        if !self.started {
            self.started = true;
            self.period_start = now;
            self.window.start = now;
            self.m1.start = now;
            return;
        }
        if d > self.stolen_threshold[k] {
            // Far longer than this burst size ever takes: the core was taken away
            // (preemption, an interrupt storm), which is not work.
            self.stolen += d;
        } else {
            self.cycles[k] += d;
            self.count[k] += 1;
        }
        if now.wrapping_sub(self.period_start) >= self.cfg.report_cycles {
            self.publish(now);
        }
    }

    /// Records that the loop deliberately slept (idle back-off) since its last call:
    /// that time was available but not used, so it counts as idle (not as stolen
    /// time, which is excluded from the available time). Call it right after waking.
    #[inline]
    pub fn on_idle(&mut self, now: u64) {
        if self.started {
            self.last = now;
            self.prev_n = 0;
            // Its time included the sleep and is dropped; its packets were handled.
            self.packets += std::mem::take(&mut self.prev_packets);
        }
    }

    /// Presets the efficiency of bursts of `k` packets (full-burst cycles per cycle
    /// spent in bursts of `k`, see [`crate::saturation_calibration`]), e.g. from an
    /// earlier run on the same machine and workload; later calibration pairs refine
    /// it.
    pub fn preset_burst_efficiency(&mut self, k: usize, efficiency: f64) {
        self.calibration.preset(k, efficiency);
    }

    /// Reports the rx ring occupancy (`rte_eth_rx_queue_count`) when the PMD supports
    /// it; call occasionally (not needed every iteration).
    pub fn set_rx_pending(&mut self, pending: u32) {
        self.rx_pending = Some(pending);
    }

    /// Closes the current period now and publishes a report. The iteration in
    /// progress (since the last [`LoadEstimator::on_poll`]) belongs to the next
    /// period.
    pub fn publish(&mut self, now: u64) {
        let period = now.wrapping_sub(self.period_start).max(1);
        self.model
            .absorb(&self.cycles, &self.count, self.cfg.model_forgetting);
        if self.model.is_fitted() {
            for (k, t) in self.stolen_threshold.iter_mut().enumerate() {
                let typical = self.model.cost(k as u32);
                *t = ((typical * self.cfg.stolen_factor as f64) as u64)
                    .max(self.cfg.stolen_min_cycles);
            }
        }
        let packets: u64 = self
            .count
            .iter()
            .enumerate()
            .map(|(k, c)| k as u64 * c)
            .sum();
        let nonempty: u64 = self.count[1..].iter().sum();
        let available = period.saturating_sub(self.stolen).max(1) as f64;
        let hz = self.cfg.tsc_hz as f64;
        // Busy cycles in full-burst terms: capacity is a saturation property (full
        // bursts from a backlog), see `saturation_calibration`.
        let busy: u64 = self.cycles[1..].iter().sum();
        let a = if self.model.is_fitted() {
            self.model.fixed_cost()
        } else {
            0.0
        };
        let n = self.burst as f64;
        let full_bursts = self.count[self.burst];
        let full_cycles = self.cycles[self.burst] as f64;
        if nonempty >= 10 && full_bursts as f64 >= 0.9 * nonempty as f64 {
            self.calibration
                .offer_saturated(full_cycles / (full_bursts as f64 * n), now);
        }
        // Partial bursts in full-burst cycles: by the calibrated efficiency of their
        // size when there is one, else minus the fixed cost full bursts would have
        // amortized (a burst of k costs a + b·k, the same packets in full bursts
        // k·(b + a/N): it over-counts a·(1 − k/N)).
        let mut corrected = full_cycles;
        let mut partial_raw = 0.0;
        for k in 1..self.burst {
            let (c, cnt) = (self.cycles[k] as f64, self.count[k]);
            if cnt == 0 {
                continue;
            }
            self.calibration
                .offer_partial(k, cnt, c / (k as f64 * cnt as f64), now);
            partial_raw += c;
            corrected += match self.calibration.efficiency(k) {
                Some(e) => e * c,
                None => (c - a * cnt as f64 * (1.0 - k as f64 / n)).max(0.0),
            };
        }
        let kappa = if partial_raw > 0.0 {
            (corrected - full_cycles) / partial_raw
        } else {
            1.0
        };
        let load = corrected / available;
        // Per-packet cost at full efficiency, measured this period (falls back to the
        // model when no packet arrived).
        let per_packet_full = if packets > 0 {
            corrected / packets as f64
        } else {
            self.model.cost(self.burst as u32) / n
        };
        let r = &mut self.report;
        r.tsc = now;
        r.iterations += self.count.iter().sum::<u64>();
        r.load = load;
        r.load_fast = ewma(r.load_fast, load, self.cfg.fast_alpha, r.iterations == 0);
        r.load_slow = ewma(r.load_slow, load, self.cfg.slow_alpha, r.iterations == 0);
        r.packets = self.packets;
        r.packets_per_s = self.packets as f64 * hz / available;
        r.capacity_pps = if per_packet_full > 0.0 {
            hz / per_packet_full
        } else {
            0.0
        };
        r.headroom_pps = (r.capacity_pps - r.packets_per_s).max(0.0);
        r.cycles_per_packet = if packets > 0 {
            ((busy as f64 - a * nonempty as f64) / packets as f64).max(0.0)
        } else {
            self.model.b()
        };
        r.cycles_per_burst = a;
        r.saturation_cost_ratio = kappa;
        r.calibration_pairs = self.calibration.samples();
        r.empty_poll_cycles = self.model.empty_cost().unwrap_or(0.0);
        r.stolen_fraction = self.stolen as f64 / period as f64;
        r.full_burst_fraction = if nonempty > 0 {
            self.count[self.burst] as f64 / nonempty as f64
        } else {
            0.0
        };
        // Thesis methods over their own windows.
        self.window.add(&self.cycles, &self.count);
        if now.wrapping_sub(self.window.start) >= self.cfg.window_cycles {
            let w = self.window;
            r.method2_nonempty_time_window = ratio(w.nonempty, w.iterations);
            r.method3_busy_cycles = ratio(w.busy_cycles, w.cycles);
            self.window = WindowTotals {
                start: now,
                ..Default::default()
            };
        }
        self.m1.add(&self.cycles, &self.count);
        if self.m1.iterations >= self.cfg.method1_iterations {
            r.method1_nonempty_iterations = ratio(self.m1.nonempty, self.m1.iterations);
            self.m1 = WindowTotals {
                start: now,
                ..Default::default()
            };
        }
        // Drop risk.
        r.rx_occupancy = match (self.rx_pending, self.cfg.rx_ring_size) {
            (Some(p), ring) if ring > 0 => (p as f64 / ring as f64).min(1.0),
            _ => 0.0,
        };
        let from_load = ((r.load_fast - 0.85) / 0.15).clamp(0.0, 1.0);
        let from_bursts = ((r.full_burst_fraction - 0.3) / 0.5).clamp(0.0, 1.0);
        let from_ring = ((r.rx_occupancy - 0.25) / 0.5).clamp(0.0, 1.0);
        r.drop_risk = from_load.max(from_bursts).max(from_ring);
        // One bit per report, newest lowest; the last 10 count.
        self.risk_history = (self.risk_history << 1) | u16::from(r.drop_risk >= 0.5);
        let risky = (self.risk_history & 0x3ff).count_ones();
        r.drop_warning = risky >= self.cfg.warn_after_reports.clamp(1, 10);
        r.time_to_overflow_s = if load > 1.0 && self.cfg.rx_ring_size > 0 {
            let excess = (load - 1.0) * r.capacity_pps;
            let free = self.cfg.rx_ring_size as f64 * (1.0 - r.rx_occupancy);
            Some(free / excess)
        } else {
            None
        };
        self.cell.store(Arc::new(r.clone()));
        self.cycles.iter_mut().for_each(|c| *c = 0);
        self.count.iter_mut().for_each(|c| *c = 0);
        self.stolen = 0;
        self.packets = 0;
        self.period_start = now;
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn ewma(old: f64, new: f64, alpha: f64, first: bool) -> f64 {
    if first {
        new
    } else {
        old + alpha * (new - old)
    }
}
