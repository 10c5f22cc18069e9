//! Pooled heap packet buffers for the backends without DPDK mempools (kernel UDP,
//! in-memory): fixed-size byte blocks recycled through a lock-free queue, shared by
//! reference count like an mbuf.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;

struct PoolInner {
    free: ArrayQueue<Box<[u8]>>,
    allocated: AtomicUsize,
    buf_size: usize,
}

/// A bounded pool of `buf_size`-byte blocks, allocated on first use and then
/// recycled (no allocation once warm). Cheap to clone; usable from any thread.
#[derive(Clone)]
pub struct HeapPool(Arc<PoolInner>);

impl std::fmt::Debug for HeapPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeapPool")
            .field("capacity", &self.0.free.capacity())
            .field("buf_size", &self.0.buf_size)
            .field("allocated", &self.0.allocated.load(Ordering::Relaxed))
            .finish()
    }
}

impl HeapPool {
    /// A pool of at most `count` blocks of `buf_size` bytes.
    pub fn new(count: usize, buf_size: usize) -> Self {
        Self(Arc::new(PoolInner {
            free: ArrayQueue::new(count.max(1)),
            allocated: AtomicUsize::new(0),
            buf_size,
        }))
    }

    /// Block size.
    pub fn buf_size(&self) -> usize {
        self.0.buf_size
    }

    /// Blocks handed out and not yet returned.
    pub fn in_use(&self) -> usize {
        self.0.allocated.load(Ordering::Relaxed) - self.0.free.len()
    }

    /// An empty writable block, or `None` when all `count` are in use.
    pub fn take(&self) -> Option<HeapBufMut> {
        let data = match self.0.free.pop() {
            Some(b) => b,
            None => {
                let cap = self.0.free.capacity();
                let n = self.0.allocated.fetch_add(1, Ordering::Relaxed);
                if n >= cap {
                    self.0.allocated.fetch_sub(1, Ordering::Relaxed);
                    return None;
                }
                vec![0u8; self.0.buf_size].into_boxed_slice()
            }
        };
        Some(HeapBufMut {
            data: Some(data),
            len: 0,
            pool: self.clone(),
        })
    }

    /// A shared block holding a copy of (at most `buf_size` bytes of) `bytes`.
    pub fn copy_from(&self, bytes: &[u8]) -> Option<HeapBuf> {
        let mut b = self.take()?;
        let n = bytes.len().min(self.0.buf_size);
        b.space()[..n].copy_from_slice(&bytes[..n]);
        b.set_len(n);
        Some(b.freeze())
    }

    fn give_back(&self, data: Box<[u8]>) {
        // The queue holds `count` entries and at most `count` blocks exist.
        let _ = self.0.free.push(data);
    }
}

/// A block being filled (one owner). [`HeapBufMut::freeze`] makes it shareable.
pub struct HeapBufMut {
    data: Option<Box<[u8]>>,
    len: usize,
    pool: HeapPool,
}

impl HeapBufMut {
    /// The whole block, to write into.
    pub fn space(&mut self) -> &mut [u8] {
        self.data.as_deref_mut().expect("present until dropped")
    }

    /// Sets how many bytes are valid.
    pub fn set_len(&mut self, len: usize) {
        self.len = len.min(self.pool.buf_size());
    }

    /// Makes the block shareable (read-only from now on).
    pub fn freeze(mut self) -> HeapBuf {
        HeapBuf(Arc::new(Frozen {
            data: self.data.take(),
            len: self.len,
            pool: self.pool.clone(),
        }))
    }
}

impl Drop for HeapBufMut {
    fn drop(&mut self) {
        if let Some(d) = self.data.take() {
            self.pool.give_back(d);
        }
    }
}

struct Frozen {
    data: Option<Box<[u8]>>,
    len: usize,
    pool: HeapPool,
}

impl Drop for Frozen {
    fn drop(&mut self) {
        if let Some(d) = self.data.take() {
            self.pool.give_back(d);
        }
    }
}

/// A read-only pooled block shared by reference count; the last reference returns
/// it to its pool.
#[derive(Clone)]
pub struct HeapBuf(Arc<Frozen>);

impl HeapBuf {
    /// The valid bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0.data.as_deref().expect("present until dropped")[..self.0.len]
    }
}

impl std::fmt::Debug for HeapBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HeapBuf({} bytes)", self.0.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_bounded_and_recycled() {
        let pool = HeapPool::new(2, 16);
        let a = pool.copy_from(b"hello").unwrap();
        let b = pool.copy_from(&[7u8; 40]).unwrap();
        assert_eq!(a.bytes(), b"hello");
        assert_eq!(b.bytes().len(), 16, "truncated to the block size");
        assert!(pool.take().is_none(), "exhausted");
        let a2 = a.clone();
        drop(a);
        assert!(pool.take().is_none(), "still referenced");
        drop(a2);
        assert_eq!(pool.in_use(), 1);
        let c = pool.copy_from(b"x").unwrap();
        assert_eq!(c.bytes(), b"x");
        drop((b, c));
        assert_eq!(pool.in_use(), 0);
    }
}
