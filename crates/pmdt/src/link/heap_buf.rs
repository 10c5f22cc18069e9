//! Pooled heap packet buffers for the backends without DPDK mempools (kernel UDP,
//! in-memory): fixed-size blocks recycled through a lock-free queue and shared by an
//! atomic reference count, like mbufs. Once the pool is warm, taking, sharing and
//! releasing a block allocate nothing.

use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;

use super::{Buffer, BufferStash, PacketMemory, PacketPool, WriteBuf};

/// A block and its bookkeeping. Lives in a `Box` that moves between the pool's
/// free queue and the buffers referring to it.
struct Slot {
    refs: AtomicUsize,
    len: usize,
    data: Box<[u8]>,
    /// The pool to return to, held while the block is out (keeps the pool alive).
    home: Option<Arc<PoolInner>>,
}

struct PoolInner {
    free: ArrayQueue<Box<Slot>>,
    allocated: AtomicUsize,
    buf_size: usize,
}

impl PoolInner {
    fn give_back(&self, mut slot: Box<Slot>) {
        slot.home = None;
        slot.len = 0;
        // The queue holds `count` entries and at most `count` blocks exist; if it
        // were ever full the block is simply freed.
        let _ = self.free.push(slot);
    }
}

/// A bounded pool of `buf_size`-byte blocks, allocated on first use and then
/// recycled. Cheap to clone; usable from any thread.
#[derive(Clone)]
pub struct HeapPool(Arc<PoolInner>);

impl std::fmt::Debug for HeapPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeapPool")
            .field("capacity", &self.0.free.capacity())
            .field("buf_size", &self.0.buf_size)
            .field("in_use", &self.in_use())
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

    /// Blocks the pool can hand out in all.
    pub fn capacity(&self) -> usize {
        self.0.free.capacity()
    }

    /// Blocks handed out and not yet returned.
    pub fn in_use(&self) -> usize {
        self.0.allocated.load(Ordering::Relaxed) - self.0.free.len()
    }

    /// Allocates every block not allocated yet, up front (as a DPDK mempool is):
    /// afterwards [`HeapPool::take`] never allocates. Blocks are otherwise
    /// allocated on first need.
    pub fn prefill(&self) {
        let cap = self.0.free.capacity();
        while self.0.allocated.fetch_add(1, Ordering::Relaxed) < cap {
            let slot = Box::new(Slot {
                refs: AtomicUsize::new(0),
                len: 0,
                data: vec![0u8; self.0.buf_size].into_boxed_slice(),
                home: None,
            });
            if self.0.free.push(slot).is_err() {
                break;
            }
        }
        self.0.allocated.fetch_sub(1, Ordering::Relaxed);
    }

    /// An empty writable block, or `None` when all `count` are in use.
    pub fn take(&self) -> Option<HeapBufMut> {
        let slot = match self.0.free.pop() {
            Some(s) => s,
            None => {
                let cap = self.0.free.capacity();
                if self.0.allocated.fetch_add(1, Ordering::Relaxed) >= cap {
                    self.0.allocated.fetch_sub(1, Ordering::Relaxed);
                    return None;
                }
                Box::new(Slot {
                    refs: AtomicUsize::new(0),
                    len: 0,
                    data: vec![0u8; self.0.buf_size].into_boxed_slice(),
                    home: None,
                })
            }
        };
        Some(HeapBufMut {
            slot: Some(slot),
            pool: self.0.clone(),
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
}

/// A block being filled (one owner). [`HeapBufMut::freeze`] makes it shareable.
pub struct HeapBufMut {
    slot: Option<Box<Slot>>,
    pool: Arc<PoolInner>,
}

impl HeapBufMut {
    /// The whole block, to write into.
    pub fn space(&mut self) -> &mut [u8] {
        &mut self.slot.as_mut().expect("present until frozen").data
    }

    /// Sets how many bytes are valid.
    pub fn set_len(&mut self, len: usize) {
        let s = self.slot.as_mut().expect("present until frozen");
        s.len = len.min(s.data.len());
    }

    /// Makes the block shareable (read-only from now on).
    pub fn freeze(mut self) -> HeapBuf {
        let mut slot = self.slot.take().expect("present until frozen");
        slot.refs.store(1, Ordering::Relaxed);
        slot.home = Some(self.pool.clone());
        HeapBuf(NonNull::from(Box::leak(slot)))
    }
}

impl Drop for HeapBufMut {
    fn drop(&mut self) {
        if let Some(s) = self.slot.take() {
            self.pool.give_back(s);
        }
    }
}

/// A read-only pooled block shared by reference count; the last reference returns
/// it to its pool.
pub struct HeapBuf(NonNull<Slot>);

// SAFETY: the block is immutable once frozen and its reference count is atomic, so
// references may move to and be used from any thread (like `Arc<[u8]>`).
unsafe impl Send for HeapBuf {}
// SAFETY: as above; shared access is read-only.
unsafe impl Sync for HeapBuf {}

impl HeapBuf {
    fn slot(&self) -> &Slot {
        // SAFETY: the slot lives until the last reference drops, and we are one.
        unsafe { self.0.as_ref() }
    }

    /// The valid bytes.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        let s = self.slot();
        &s.data[..s.len]
    }
}

impl Clone for HeapBuf {
    fn clone(&self) -> Self {
        self.slot().refs.fetch_add(1, Ordering::Relaxed);
        HeapBuf(self.0)
    }
}

impl Drop for HeapBuf {
    fn drop(&mut self) {
        if self.slot().refs.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        fence(Ordering::Acquire);
        // SAFETY: we held the last reference: nobody else can reach the slot, which
        // came from Box::leak in `freeze`.
        let mut slot = unsafe { Box::from_raw(self.0.as_ptr()) };
        if let Some(home) = slot.home.take() {
            home.give_back(slot);
        }
    }
}

// SAFETY: the pointer is the leaked slot, turned back once; a frozen block is
// never written and never moves until its last reference drops; the reference
// count is atomic.
unsafe impl PacketMemory for HeapBuf {
    #[inline]
    fn bytes(&self) -> &[u8] {
        HeapBuf::bytes(self)
    }
    #[inline]
    fn share(&self) -> Self {
        self.clone()
    }
    #[inline]
    fn into_raw(self) -> NonNull<()> {
        let me = std::mem::ManuallyDrop::new(self);
        me.0.cast()
    }
    #[inline]
    unsafe fn from_raw(raw: NonNull<()>) -> Self {
        HeapBuf(raw.cast())
    }
}

impl PacketPool for HeapPool {
    fn capacity(&self) -> usize {
        HeapPool::capacity(self)
    }
    fn available(&self) -> usize {
        HeapPool::capacity(self).saturating_sub(self.in_use())
    }
    fn copy_from(&self, data: &[u8], max: usize) -> Option<Buffer> {
        HeapPool::copy_from(self, &data[..data.len().min(max)]).map(Buffer::new)
    }
    fn take_writable(&self, max: usize, keep_free: usize, _: &mut BufferStash) -> Option<WriteBuf> {
        if PacketPool::available(self) <= keep_free {
            return None;
        }
        self.take().map(|h| WriteBuf::heap(h, max))
    }
    fn writable(&self) -> bool {
        true
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl std::fmt::Debug for HeapBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HeapBuf({} bytes)", self.slot().len)
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

    #[test]
    fn references_cross_threads_and_outlive_the_pool_handle() {
        let pool = HeapPool::new(64, 32);
        let bufs: Vec<HeapBuf> = (0..64u8)
            .map(|i| pool.copy_from(&[i; 8]).unwrap())
            .collect();
        drop(pool); // blocks keep their pool alive
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let mine: Vec<HeapBuf> = bufs.to_vec();
                std::thread::spawn(move || mine.iter().map(|b| b.bytes()[0] as u64).sum::<u64>())
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), (0..64u64).sum::<u64>());
        }
        drop(bufs);
    }
}
