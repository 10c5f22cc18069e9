//! Rx and tx queues: each handed out once, movable to the lcore that polls it.

use std::cell::Cell;
use std::marker::PhantomData;
use std::os::fd::BorrowedFd;
use std::sync::Arc;

use super::{BurstGate, PortShared};
use crate::batch::MbufBatch;

/// One receive queue of a started port. `Send` (move it to its polling lcore), not
/// `Sync` and not `Clone`: DPDK queues are single-consumer.
pub struct RxQueue {
    port: Arc<PortShared>,
    gate: Arc<BurstGate>,
    queue: u16,
    interrupt: RxInterrupt,
    _not_sync: PhantomData<Cell<()>>,
}

/// Whether a receive queue may have an interrupt to wait on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RxInterrupt {
    /// The port was configured without receive interrupts: DPDK is not asked
    /// (it logs an error for every query on such a port).
    NotConfigured,
    /// Configured: ask the device.
    Configured,
    /// Configured, but the device said it has none (memif, ring, null): not
    /// asked again.
    Unavailable,
}

/// One transmit queue of a port. `Send`, not `Sync`, not `Clone`.
pub struct TxQueue {
    port: Arc<PortShared>,
    gate: Arc<BurstGate>,
    queue: u16,
    _not_sync: PhantomData<Cell<()>>,
}

impl RxQueue {
    pub(super) fn new(
        port: Arc<PortShared>,
        gate: Arc<BurstGate>,
        queue: u16,
        interrupts: bool,
    ) -> Self {
        Self {
            port,
            gate,
            queue,
            interrupt: if interrupts {
                RxInterrupt::Configured
            } else {
                RxInterrupt::NotConfigured
            },
            _not_sync: PhantomData,
        }
    }

    /// Port id.
    pub fn port_id(&self) -> u16 {
        self.port.id
    }

    /// Queue index.
    pub fn queue_id(&self) -> u16 {
        self.queue
    }

    /// Receives up to `batch.remaining()` packets, appended to `batch`. Returns how
    /// many arrived (0 on a stopped port).
    #[inline]
    pub fn rx_burst<const N: usize>(&mut self, batch: &mut MbufBatch<N>) -> usize {
        let (spare, room) = batch.spare_raw();
        if room == 0 {
            return 0;
        }
        if !self.port.enter(&self.gate) {
            return 0;
        }
        // SAFETY: this is the queue's only handle (not Clone/Sync); the port is
        // started and no control operation runs (gate); `spare` has room for `room`
        // pointers; returned mbufs are owned by us.
        let n = unsafe { dpdk_sys::rte_eth_rx_burst(self.port.id, self.queue, spare, room as u16) }
            as usize;
        self.port.leave(&self.gate);
        // SAFETY: the PMD wrote n valid mbuf pointers after len.
        unsafe { batch.set_len(batch.len() + n) };
        n
    }

    /// Runs `f` with a descriptor that turns readable when packets arrive on
    /// this queue, its interrupt enabled for the call, so a quiet poller can
    /// sleep in `poll(2)` until then (with its own descriptors beside it).
    /// `None` (and `f` is not called) when the port was configured without
    /// [`PortConfig::rx_interrupts`](super::PortConfig::rx_interrupts), the
    /// device has no receive interrupt (memif, ring, null) or the port is
    /// stopped. The descriptor is the device's: read nothing from it (on TAP it
    /// is the queue's own file). The port cannot stop while `f` runs: a control
    /// operation (stop, MAC change) waits for it, so sleep briefly.
    pub fn with_interrupt<R>(&mut self, f: impl FnOnce(BorrowedFd<'_>) -> R) -> Option<R> {
        // DPDK is asked at most once per queue that cannot answer: it logs an
        // error for each query on a port without interrupts, and a quiet poller
        // asks thousands of times a second.
        if self.interrupt != RxInterrupt::Configured || !self.port.enter(&self.gate) {
            return None;
        }
        // SAFETY: valid port/queue of a started port (gate held); a query.
        let fd = unsafe { dpdk_sys::rte_eth_dev_rx_intr_ctl_q_get_fd(self.port.id, self.queue) };
        if fd < 0 {
            self.interrupt = RxInterrupt::Unavailable;
        }
        let r = (fd >= 0).then(|| {
            // SAFETY: enabling the interrupt of this queue, which only this
            // handle drives, on a started port. Devices whose descriptor turns
            // readable anyway (TAP) have no such call: its error is ignored.
            let enabled =
                unsafe { dpdk_sys::rte_eth_dev_rx_intr_enable(self.port.id, self.queue) } == 0;
            // SAFETY: the descriptor belongs to the started port's queue and is
            // closed only when the port stops or closes, which wait for the
            // gate this call holds until `f` returns.
            let r = f(unsafe { BorrowedFd::borrow_raw(fd) });
            if enabled {
                // SAFETY: as for the enable above.
                unsafe { dpdk_sys::rte_eth_dev_rx_intr_disable(self.port.id, self.queue) };
            }
            r
        });
        self.port.leave(&self.gate);
        r
    }

    /// Packets waiting in the rx descriptor ring, if the PMD can tell
    /// (`rte_eth_rx_queue_count`); `None` when unsupported or the port is stopped.
    pub fn pending(&self) -> Option<u32> {
        if !self.port.enter(&self.gate) {
            return None;
        }
        // SAFETY: valid port/queue of a started port; read-only query.
        let r = unsafe { dpdk_sys::rte_eth_rx_queue_count(self.port.id, self.queue) };
        self.port.leave(&self.gate);
        (r >= 0).then_some(r as u32)
    }
}

impl TxQueue {
    pub(super) fn new(port: Arc<PortShared>, gate: Arc<BurstGate>, queue: u16) -> Self {
        Self {
            port,
            gate,
            queue,
            _not_sync: PhantomData,
        }
    }

    /// Port id.
    pub fn port_id(&self) -> u16 {
        self.port.id
    }

    /// Queue index.
    pub fn queue_id(&self) -> u16 {
        self.queue
    }

    /// Hands the batch to the NIC. Returns how many were taken; those not taken stay
    /// at the front of `batch` (retry, or drop the batch to free them).
    #[inline]
    pub fn tx_burst<const N: usize>(&mut self, batch: &mut MbufBatch<N>) -> usize {
        let len = batch.len();
        if len == 0 {
            return 0;
        }
        if !self.port.enter(&self.gate) {
            return 0;
        }
        // SAFETY: the queue's only handle, on a started port with no control
        // operation running (gate); the first `len` slots hold owned mbufs, and the
        // PMD takes ownership of the first n it returns.
        let n = unsafe {
            dpdk_sys::rte_eth_tx_burst(self.port.id, self.queue, batch.as_raw_ptr(), len as u16)
        } as usize;
        self.port.leave(&self.gate);
        batch.consume_front(n);
        n
    }
}
