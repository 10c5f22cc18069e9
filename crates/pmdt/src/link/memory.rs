//! An in-memory link pair: two ends that exchange datagrams through bounded
//! lock-free queues (for tests and single-process experiments).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_queue::ArrayQueue;

use super::{Buffer, BufferPool, HeapPool, Link, LinkStats, Outgoing, Received};

type Wire = ArrayQueue<(SocketAddr, Buffer)>;

/// One end of an in-memory pair.
pub struct MemoryLink {
    addr: SocketAddr,
    inbox: Arc<Wire>,
    outbox: Arc<Wire>,
    pool: HeapPool,
    /// The other end's pool: a datagram crosses into its memory, as a NIC
    /// receives into its own buffers.
    peer_pool: HeapPool,
    /// Datagrams this end could not take in for want of a buffer of its pool
    /// (counted by the sending end).
    rx_no_buffer: Arc<AtomicU64>,
    /// The same for the other end.
    peer_rx_no_buffer: Arc<AtomicU64>,
    cut: Arc<AtomicBool>,
    stats: LinkStats,
}

impl MemoryLink {
    /// Two connected ends with addresses `a` and `b`; each direction queues up to
    /// `depth` datagrams (more are dropped, like a full NIC ring).
    pub fn pair(a: SocketAddr, b: SocketAddr, depth: usize) -> (MemoryLink, MemoryLink) {
        Self::pair_with_pool(a, b, depth, 64 * 1024)
    }

    /// Like [`MemoryLink::pair`], each end with a pool of `blocks` packet buffers
    /// (allocated on first use; see [`HeapPool::prefill`]).
    pub fn pair_with_pool(
        a: SocketAddr,
        b: SocketAddr,
        depth: usize,
        blocks: usize,
    ) -> (MemoryLink, MemoryLink) {
        let cut = Arc::new(AtomicBool::new(false));
        let ab = Arc::new(ArrayQueue::new(depth.max(1)));
        let ba = Arc::new(ArrayQueue::new(depth.max(1)));
        let a = MemoryLink {
            addr: a,
            inbox: ba,
            outbox: ab,
            pool: HeapPool::new(blocks, 2048),
            peer_pool: HeapPool::new(blocks, 2048),
            rx_no_buffer: Arc::new(AtomicU64::new(0)),
            peer_rx_no_buffer: Arc::new(AtomicU64::new(0)),
            cut,
            stats: LinkStats::default(),
        };
        // The other end: the same queues, pools and counters, each the other way.
        let b = MemoryLink {
            addr: b,
            inbox: a.outbox.clone(),
            outbox: a.inbox.clone(),
            pool: a.peer_pool.clone(),
            peer_pool: a.pool.clone(),
            rx_no_buffer: a.peer_rx_no_buffer.clone(),
            peer_rx_no_buffer: a.rx_no_buffer.clone(),
            cut: a.cut.clone(),
            stats: LinkStats::default(),
        };
        (a, b)
    }

    /// A switch that, once set, silently drops everything both ends send (a pulled
    /// cable: the peers vanish for each other).
    pub fn cable(&self) -> Arc<AtomicBool> {
        self.cut.clone()
    }
}

impl Link for MemoryLink {
    fn describe(&self) -> String {
        format!("memory {}", self.addr)
    }

    fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    fn pool(&self) -> BufferPool {
        BufferPool::new(self.pool.clone())
    }

    fn recv(&mut self, _now: Instant, out: &mut Vec<Received>, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            let Some((from, buf)) = self.inbox.pop() else {
                break;
            };
            let len = buf.bytes().len();
            self.stats.rx_datagrams += 1;
            self.stats.rx_bytes += len as u64;
            out.push(Received {
                from,
                buf,
                start: 0,
                len,
            });
            n += 1;
        }
        n
    }

    fn tx_room(&self) -> usize {
        self.outbox.capacity() - self.outbox.len()
    }

    fn send(&mut self, _now: Instant, pkt: Outgoing<'_>) -> bool {
        if self.cut.load(Ordering::Relaxed) {
            return true; // into the void
        }
        // The "wire" copy: the datagram is serialized into a fresh block of the
        // receiving end's pool, as its NIC would DMA it into its own buffers
        // (a sender's pool never pins what its peer holds). None free: the
        // receiver drops it, as a NIC out of receive buffers does.
        let Some(mut b) = self.peer_pool.take() else {
            self.peer_rx_no_buffer.fetch_add(1, Ordering::Relaxed);
            return true;
        };
        let Some(n) = pkt.copy_to(b.space()) else {
            self.stats.tx_dropped += 1;
            return false;
        };
        b.set_len(n);
        if self
            .outbox
            .push((self.addr, Buffer::new(b.freeze())))
            .is_err()
        {
            self.stats.tx_dropped += 1;
            return false;
        }
        let _ = pkt.to;
        self.stats.tx_datagrams += 1;
        self.stats.tx_bytes += n as u64;
        true
    }

    fn flush(&mut self, _now: Instant) {}

    fn stats(&self) -> LinkStats {
        let mut s = self.stats.clone();
        s.rx_no_buffer = self.rx_no_buffer.load(Ordering::Relaxed);
        s
    }
}
