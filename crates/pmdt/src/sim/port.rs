//! A simulated network port: the [`Link`] a runtime [`Session`](crate::runtime::Session)
//! drives inside the simulator. It behaves as a NIC does for the loop: received
//! datagrams are copied into buffers of the port's own pool (as a NIC writes
//! into the receive mbufs of its mempool; none free: the datagram is dropped and
//! counted), sent ones are serialized onto the wire when queued (header and
//! payload slice, as a NIC gathers them) and a transmit ring of fixed size says
//! when it is full. The simulator moves datagrams between ports.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use crate::link::{Buffer, BufferPool, HeapPool, Link, LinkStats, Outgoing, Received};

/// Smallest packet buffer of a port's pool (a DPDK mbuf's default data room).
pub const MIN_PORT_BUFFER: usize = 2048;

/// The datagrams between a port and the simulator.
#[derive(Debug, Default)]
pub(crate) struct PortQueues {
    /// Arrived, not yet received by the loop: (sender, datagram).
    pub inbox: VecDeque<(SocketAddr, Vec<u8>)>,
    /// Sent by the loop, not yet on the wire: (destination, datagram).
    pub outbox: VecDeque<(SocketAddr, Vec<u8>)>,
}

/// The simulator's handle on a port's queues.
#[derive(Debug, Clone, Default)]
pub(crate) struct PortHandle(Arc<Mutex<PortQueues>>);

impl PortHandle {
    pub fn lock(&self) -> MutexGuard<'_, PortQueues> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One port (see the module documentation).
pub struct SimPort {
    addr: SocketAddr,
    pool: HeapPool,
    queues: PortHandle,
    tx_ring: usize,
    stats: LinkStats,
}

impl SimPort {
    /// A port at `addr` with a pool of `buffers` packet buffers holding datagrams
    /// up to `max_datagram` bytes and a transmit ring of `tx_ring` datagrams; and
    /// the simulator's handle on it.
    pub(crate) fn new(
        addr: SocketAddr,
        buffers: usize,
        max_datagram: usize,
        tx_ring: usize,
    ) -> (Self, PortHandle) {
        let queues = PortHandle::default();
        let port = Self {
            addr,
            pool: HeapPool::new(buffers, max_datagram.max(MIN_PORT_BUFFER)),
            queues: queues.clone(),
            tx_ring: tx_ring.max(1),
            stats: LinkStats::default(),
        };
        (port, queues)
    }
}

impl Link for SimPort {
    fn describe(&self) -> String {
        format!("sim {}", self.addr)
    }

    fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    fn pool(&self) -> BufferPool {
        BufferPool::new(self.pool.clone())
    }

    fn recv(&mut self, _now: Instant, out: &mut Vec<Received>, max: usize) -> usize {
        let mut q = self.queues.lock();
        let mut n = 0;
        while n < max {
            let Some((from, data)) = q.inbox.pop_front() else {
                break;
            };
            if data.len() > self.pool.buf_size() {
                // Larger than the port's buffers (its MTU): dropped as oversized.
                self.stats.rx_malformed += 1;
                continue;
            }
            let Some(b) = self.pool.copy_from(&data) else {
                // No free receive buffer: the NIC drops the datagram.
                self.stats.rx_no_buffer += 1;
                continue;
            };
            self.stats.rx_datagrams += 1;
            self.stats.rx_bytes += data.len() as u64;
            out.push(Received {
                from,
                len: b.bytes().len(),
                buf: Buffer::new(b),
                start: 0,
            });
            n += 1;
        }
        n
    }

    fn tx_room(&self) -> usize {
        self.tx_ring.saturating_sub(self.queues.lock().outbox.len())
    }

    fn send(&mut self, _now: Instant, pkt: Outgoing<'_>) -> bool {
        let mut q = self.queues.lock();
        if q.outbox.len() >= self.tx_ring {
            self.stats.tx_queue_full += 1;
            return false;
        }
        let mut data = vec![0u8; pkt.len()];
        if pkt.copy_to(&mut data).is_none() {
            self.stats.tx_dropped += 1;
            return false;
        }
        self.stats.tx_datagrams += 1;
        self.stats.tx_bytes += data.len() as u64;
        q.outbox.push_back((pkt.to, data));
        true
    }

    fn flush(&mut self, _now: Instant) {}

    fn rx_pending(&self) -> Option<u32> {
        Some(self.queues.lock().inbox.len() as u32)
    }

    fn stats(&self) -> LinkStats {
        self.stats.clone()
    }
}
