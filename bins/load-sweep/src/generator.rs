//! A paced packet generator on the main lcore: constant-rate or Poisson bursts.

use std::sync::atomic::Ordering;

use dpdk::{lcore, MbufBatch, Mempool, TxQueue};
use load_estimator::{LoadReport, ReportReader};

use crate::worker::WorkerControl;

/// Arrival process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum Arrivals {
    /// Bursts at fixed intervals.
    Constant,
    /// Bursts with exponentially distributed gaps (Poisson arrivals).
    Poisson,
}

/// What one measurement step saw.
#[derive(Debug, Clone, Default)]
pub struct StepResult {
    /// Packets per second offered (accepted + refused by the full rx ring).
    pub offered_pps: f64,
    /// Packets the worker's rx ring refused (drops).
    pub dropped: u64,
    /// Packets offered.
    pub offered: u64,
    /// Packets the worker processed during the measured part of the step.
    pub processed: u64,
    /// Bursts not sent because the pool was empty (the generator's own limit).
    pub alloc_failures: u64,
    /// Mean of the estimator reports published during the step.
    pub mean: LoadReport,
    /// Whether a drop warning was raised during the step.
    pub warned: bool,
    /// TSC of the first warning and of the first drop in the step.
    pub first_warning_tsc: Option<u64>,
    /// TSC of the first drop.
    pub first_drop_tsc: Option<u64>,
}

/// Sends at `rate_pps` for `cycles` TSC cycles; the reports published meanwhile are
/// averaged (after `warmup` cycles).
pub struct Generator<'a> {
    pub tx: &'a mut TxQueue,
    pub pool: &'a Mempool,
    pub frame: Vec<u8>,
    pub burst: usize,
    pub arrivals: Arrivals,
    pub hz: u64,
    pub reader: &'a ReportReader,
    pub ctl: &'a WorkerControl,
    pub rng: u64,
    /// Packets the generator may send late to catch up after losing its core (a
    /// fraction of the worker's rx ring, so catching up never overflows it).
    pub max_catch_up: usize,
}

impl StepResult {
    /// Packets accepted into the worker's queue during the measured part of the step
    /// beyond those it processed: a queue that grows is a worker that cannot keep up,
    /// whether or not the ring has filled yet.
    pub fn queue_growth(&self) -> u64 {
        (self.offered - self.dropped).saturating_sub(self.processed)
    }
}

impl Generator<'_> {
    fn uniform(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        ((self.rng >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// One step at `rate_pps`; the first `warmup_s` seconds are not measured.
    pub fn step(&mut self, rate_pps: f64, warmup_s: f64, measure_s: f64) -> StepResult {
        let hz = self.hz as f64;
        let start = lcore::tsc();
        let measure_from = start + (warmup_s * hz) as u64;
        let end = measure_from + (measure_s * hz) as u64;
        let gap = self.burst as f64 / rate_pps.max(1.0) * hz;
        let mut next = start as f64;
        let mut r = StepResult::default();
        let mut batch = MbufBatch::<64>::new();
        let mut reports: Vec<LoadReport> = Vec::new();
        let mut last_report_tsc = 0u64;
        let mut next_sample = start;
        // Later than this behind schedule, the backlog beyond it is forgiven.
        let max_behind = (self.max_catch_up as f64 / rate_pps.max(1.0) * hz).max(4.0 * gap);
        let mut processed_from: Option<u64> = None;
        loop {
            let now = lcore::tsc();
            if now >= end {
                break;
            }
            if processed_from.is_none() && now >= measure_from {
                processed_from = Some(self.ctl.processed.load(Ordering::Relaxed));
            }
            if now >= next_sample {
                next_sample = now + self.hz / 200;
                let rep = self.reader.latest();
                if rep.tsc != last_report_tsc && rep.tsc >= measure_from {
                    last_report_tsc = rep.tsc;
                    if rep.drop_warning {
                        r.warned = true;
                        r.first_warning_tsc.get_or_insert(rep.tsc);
                    }
                    reports.push(rep);
                }
            }
            if (now as f64) < next {
                continue;
            }
            if now as f64 - next > max_behind {
                // The generator itself was descheduled for long: catch up only a
                // bounded backlog (burst by burst, as fast as it can), rather than
                // sending everything it missed as one artificial burst.
                next = now as f64 - max_behind;
            }
            next += match self.arrivals {
                Arrivals::Constant => gap,
                Arrivals::Poisson => -gap * self.uniform().ln(),
            };
            if self.pool.alloc_bulk(&mut batch, self.burst).is_err() {
                r.alloc_failures += 1;
                continue;
            }
            for m in batch.as_mut_slice() {
                let _ = m.extend_from_slice(&self.frame);
            }
            let n = batch.len() as u64;
            let sent = self.tx.tx_burst(&mut batch) as u64;
            if now >= measure_from {
                r.offered += n;
                if sent < n {
                    r.dropped += n - sent;
                    r.first_drop_tsc.get_or_insert(now);
                }
            }
            batch.clear(); // refused by the full ring: dropped
        }
        r.offered_pps = r.offered as f64 / measure_s;
        r.mean = mean(&reports);
        let processed_to = self.ctl.processed.load(Ordering::Relaxed);
        r.processed = processed_to.saturating_sub(processed_from.unwrap_or(processed_to));
        r
    }
}

fn mean(v: &[LoadReport]) -> LoadReport {
    let mut m = LoadReport::default();
    if v.is_empty() {
        return m;
    }
    let n = v.len() as f64;
    for r in v {
        m.load += r.load / n;
        m.load_fast += r.load_fast / n;
        m.load_slow += r.load_slow / n;
        m.capacity_pps += r.capacity_pps / n;
        m.packets_per_s += r.packets_per_s / n;
        m.drop_risk += r.drop_risk / n;
        m.cycles_per_packet += r.cycles_per_packet / n;
        m.stolen_fraction += r.stolen_fraction / n;
        m.full_burst_fraction += r.full_burst_fraction / n;
    }
    // The thesis methods update on their own (slower) cadence: take the last value.
    let last = v.last().expect("non-empty");
    m.method1_nonempty_iterations = last.method1_nonempty_iterations;
    m.method2_nonempty_time_window = last.method2_nonempty_time_window;
    m.method3_busy_cycles = last.method3_busy_cycles;
    m.drop_warning = v.iter().any(|r| r.drop_warning);
    m.tsc = last.tsc;
    m.cycles_per_burst = last.cycles_per_burst;
    m.saturation_cost_ratio = last.saturation_cost_ratio;
    m.calibration_pairs = last.calibration_pairs;
    m
}
