//! The device under test: a worker lcore polling a DPDK port, doing per-packet work
//! (a checksum over the frame plus optional busy cycles), feeding the estimators.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use dpdk::{lcore, MbufBatch, RxQueue};
use load_estimator::{EstimatorConfig, LoadEstimator, ReportReader};

/// Knobs and counters shared with the controlling thread.
#[derive(Debug, Default)]
pub struct WorkerControl {
    /// Stop polling.
    pub stop: AtomicBool,
    /// Extra busy cycles per packet (on top of the checksum).
    pub work_cycles: AtomicU64,
    /// Extra busy cycles per non-empty burst.
    pub burst_work_cycles: AtomicU64,
    /// Packets processed so far.
    pub processed: AtomicU64,
    /// Checksum accumulator (keeps the work observable).
    pub checksum: AtomicU64,
}

/// Tells the worker to stop when dropped, so every exit path (errors included) ends
/// the poll loop before the lcore is joined.
pub struct StopOnDrop(pub Arc<WorkerControl>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop.store(true, Ordering::Relaxed);
    }
}

/// Runs the poll loop until `ctl.stop`. Returns the estimator's reader through `ready`.
pub fn run(
    mut rx: RxQueue,
    ctl: Arc<WorkerControl>,
    cfg: EstimatorConfig,
    ready: std::sync::mpsc::Sender<ReportReader>,
) -> RxQueue {
    let mut est = LoadEstimator::new(cfg);
    let _ = ready.send(est.reader());
    let mut batch = MbufBatch::<32>::new();
    let mut processed = 0u64;
    let mut sum = 0u64;
    while !ctl.stop.load(Ordering::Relaxed) {
        let t = lcore::tsc();
        let n = rx.rx_burst(&mut batch);
        est.on_poll(t, n as u32);
        if n == 0 {
            continue;
        }
        let per_burst = ctl.burst_work_cycles.load(Ordering::Relaxed);
        if per_burst > 0 {
            spin(per_burst);
        }
        let extra = ctl.work_cycles.load(Ordering::Relaxed);
        for m in batch.iter() {
            // Checksum forwarding's work: read every byte of the frame.
            let mut s = 0u64;
            for chunk in m.data().chunks_exact(8) {
                s = s.wrapping_add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
            }
            sum = sum.wrapping_add(s);
            if extra > 0 {
                spin(extra);
            }
        }
        processed += n as u64;
        batch.clear();
        ctl.processed.store(processed, Ordering::Relaxed);
    }
    ctl.checksum.store(sum, Ordering::Relaxed);
    rx
}

/// Busy work for `cycles` TSC cycles.
fn spin(cycles: u64) {
    let until = lcore::tsc() + cycles;
    while lcore::tsc() < until {
        std::hint::spin_loop();
    }
}
