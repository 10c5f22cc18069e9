//! Periods the caller closes (`report_cycles = u64::MAX`, as a transport's I/O
//! loop does when it publishes a report per statistics period and per transfer):
//! no report is made in between, and a report counts every packet of its period.

use load_estimator::{EstimatorConfig, LoadEstimator};

const HZ: u64 = 1_000_000_000;
const BURST: u32 = 4;

fn caller_closed() -> LoadEstimator {
    LoadEstimator::new(EstimatorConfig {
        report_cycles: u64::MAX,
        ..EstimatorConfig::new(HZ, BURST)
    })
}

/// Iterations of every burst size at `A + B·k` cycles, from `t`; returns the time after.
fn warm_up(est: &mut LoadEstimator, mut t: u64, iterations: u64) -> u64 {
    for i in 0..iterations {
        let k = i % (BURST as u64 + 1);
        est.on_poll(t, k as u32);
        t += 100 + 20 * k;
    }
    t
}

#[test]
fn only_the_caller_closes_periods() {
    let mut est = caller_closed();
    // Two seconds of iterations: far past the default 10 ms report period.
    let t = warm_up(&mut est, 1, 2 * HZ / 140);
    assert_eq!(est.report().tsc, 0, "no report the caller did not ask for");
    est.publish(t);
    assert_eq!(est.report().tsc, t);
    assert!(est.report().packets > 0);
}

#[test]
fn a_report_counts_every_packet_of_its_period() {
    let mut est = caller_closed();
    let mut t = warm_up(&mut est, 1, 10_000);
    est.on_poll(t, 0);
    est.publish(t);
    let start = t;
    // The model is fitted: an iteration far longer than its size takes is stolen
    // time (preemption).
    let mut period = Vec::new();
    for (n, cycles) in [(3, 160), (2, 1_000_000), (10, 300), (1, 120)] {
        est.on_poll(t, n);
        period.push(n as u64);
        t += cycles;
    }
    // The loop slept after its last iteration.
    t += 10_000;
    est.on_idle(t);
    // An iteration in progress when the period closes belongs to the next one.
    est.on_poll(t, 7);
    est.publish(t);
    let r = est.report().clone();
    assert!(r.stolen_fraction > 0.0, "the preempted iteration: {r:?}");
    // The preempted iteration's packets and those past a full burst count too.
    assert_eq!(r.packets, period.iter().sum::<u64>(), "{r:?}");
    let available = t - start - 1_000_000;
    let want = r.packets as f64 * HZ as f64 / available as f64;
    assert!((r.packets_per_s - want).abs() < 1e-6 * want, "{r:?}");
    est.on_poll(t + 100, 0);
    est.publish(t + 100);
    assert_eq!(est.report().packets, 7);
}
