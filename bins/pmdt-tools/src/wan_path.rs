//! One direction of `pmdt-wanem`: frames from one port pass through an impairment
//! model (held in time order when delayed) to the other port. Mbufs are moved, never
//! copied; duplicates are extra references.

use std::time::Instant;

use dpdk::{Mbuf, MbufBatch, RxQueue, TxQueue};
use pmdt::link::delay_line::DelayLine;
use pmdt::link::impair_model::{Fate, ImpairModel};
use serde::Serialize;

use crate::frame_capture::FrameCapture;

/// What one direction did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PathStats {
    /// Frames received on the ingress port.
    pub received: u64,
    /// Frames sent on the egress port.
    pub forwarded: u64,
    /// Lost to random or burst loss.
    pub lost: u64,
    /// Dropped by the rate limiter's full queue.
    pub queue_drops: u64,
    /// Duplicated.
    pub duplicated: u64,
    /// Held back out of order.
    pub reordered: u64,
    /// Dropped because the egress port's queue was full.
    pub tx_full: u64,
    /// Frames waiting (delay line) now.
    pub held: u64,
}

/// Ingress queue → model → egress queue.
pub struct WanPath {
    rx: RxQueue,
    tx: TxQueue,
    model: Option<ImpairModel>,
    held: DelayLine<Mbuf>,
    rx_batch: MbufBatch<32>,
    tx_batch: MbufBatch<32>,
    /// Counters.
    pub stats: PathStats,
}

impl WanPath {
    /// A path; `model` None forwards untouched.
    pub fn new(rx: RxQueue, tx: TxQueue, model: Option<ImpairModel>) -> Self {
        Self {
            rx,
            tx,
            model,
            held: DelayLine::default(),
            rx_batch: MbufBatch::default(),
            tx_batch: MbufBatch::default(),
            stats: PathStats::default(),
        }
    }

    fn emit(&mut self, m: Mbuf, capture: &mut Option<&mut FrameCapture>) {
        if self.tx_batch.is_full() {
            drop(m);
            self.stats.tx_full += 1;
            return;
        }
        if let Some(c) = capture {
            c.record(m.data());
        }
        if self.tx_batch.push(m).is_err() {
            unreachable!("the batch had room");
        }
    }

    /// One pass; returns whether anything moved. Frames queued for the egress port
    /// are also written to `capture`.
    pub fn poll(&mut self, now: Instant, mut capture: Option<&mut FrameCapture>) -> bool {
        let n = self.rx.rx_burst(&mut self.rx_batch);
        let mut batch = std::mem::take(&mut self.rx_batch);
        for m in batch.drain() {
            self.stats.received += 1;
            let Some(model) = &mut self.model else {
                self.emit(m, &mut capture);
                continue;
            };
            match model.decide(now, m.pkt_len()) {
                Fate::Lost => self.stats.lost += 1,
                Fate::QueueDrop => self.stats.queue_drops += 1,
                Fate::Deliver {
                    at,
                    duplicate_at,
                    reordered,
                } => {
                    self.stats.reordered += reordered as u64;
                    if let Some(d) = duplicate_at {
                        self.stats.duplicated += 1;
                        let copy = m.clone_ref();
                        self.held.push(d, copy);
                    }
                    if at <= now && self.held.is_empty() {
                        self.emit(m, &mut capture);
                    } else {
                        self.held.push(at, m);
                    }
                }
            }
        }
        self.rx_batch = batch;
        while !self.tx_batch.is_full() {
            let Some(m) = self.held.pop_due(now) else {
                break;
            };
            self.emit(m, &mut capture);
        }
        self.stats.held = self.held.len() as u64;
        let queued = self.tx_batch.len();
        if queued > 0 {
            self.tx.tx_burst(&mut self.tx_batch);
            self.stats.forwarded += (queued - self.tx_batch.len()) as u64;
        }
        n > 0 || queued > 0
    }

    /// When the next held frame is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.held.next_due()
    }
}
