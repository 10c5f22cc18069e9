//! Packet memory the runtime moves between application threads, the protocol and
//! the wire without copying: an mbuf on DPDK, a pooled heap block elsewhere.

use super::heap_buf::{HeapBuf, HeapPool};

/// A reference to packet memory. Sharing ([`Buffer::share`]) bumps a reference
/// count; the memory returns to its pool when the last reference drops.
#[derive(Debug)]
pub enum Buffer {
    /// A pooled heap block (kernel UDP and in-memory links).
    Heap(HeapBuf),
    /// A DPDK mbuf (first segment's data).
    #[cfg(feature = "dpdk")]
    Mbuf(dpdk::Mbuf),
}

impl Buffer {
    /// The bytes the buffer holds.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        match self {
            Buffer::Heap(h) => h.bytes(),
            #[cfg(feature = "dpdk")]
            Buffer::Mbuf(m) => m.data(),
        }
    }

    /// Another reference to the same memory.
    #[inline]
    pub fn share(&self) -> Buffer {
        match self {
            Buffer::Heap(h) => Buffer::Heap(h.clone()),
            #[cfg(feature = "dpdk")]
            Buffer::Mbuf(m) => Buffer::Mbuf(m.clone_ref()),
        }
    }

    /// Byte position of `part` (a sub-slice of [`Buffer::bytes`]) in the buffer.
    #[inline]
    pub fn position_of(&self, part: &[u8]) -> Option<usize> {
        let b = self.bytes();
        let start = (part.as_ptr() as usize).checked_sub(b.as_ptr() as usize)?;
        (start + part.len() <= b.len()).then_some(start)
    }
}

/// Where application threads get packet memory to write into.
#[derive(Clone, Debug)]
pub enum BufferPool {
    /// Heap blocks.
    Heap(HeapPool),
    /// A DPDK mempool (allocation works from any thread; non-EAL threads bypass the
    /// per-lcore cache).
    #[cfg(feature = "dpdk")]
    Mempool(std::sync::Arc<dpdk::Mempool>),
}

impl BufferPool {
    /// Buffers the pool holds in all.
    pub fn capacity(&self) -> usize {
        match self {
            BufferPool::Heap(p) => p.capacity(),
            #[cfg(feature = "dpdk")]
            BufferPool::Mempool(p) => p.capacity() as usize,
        }
    }

    /// Buffers free now (a snapshot: other threads allocate and free concurrently).
    pub fn available(&self) -> usize {
        match self {
            BufferPool::Heap(p) => p.capacity().saturating_sub(p.in_use()),
            #[cfg(feature = "dpdk")]
            BufferPool::Mempool(p) => p.available() as usize,
        }
    }

    /// A buffer holding a copy of up to `max` bytes of `data` (the one copy on the
    /// sending side), or `None` when the pool is exhausted.
    pub fn copy_from(&self, data: &[u8], max: usize) -> Option<Buffer> {
        let data = &data[..data.len().min(max)];
        match self {
            BufferPool::Heap(p) => p.copy_from(data).map(Buffer::Heap),
            #[cfg(feature = "dpdk")]
            BufferPool::Mempool(p) => {
                let mut m = p.alloc().ok()?;
                let n = data.len().min(m.tailroom());
                m.extend_from_slice(&data[..n]).ok()?;
                Some(Buffer::Mbuf(m))
            }
        }
    }
}

/// A thread's stash of empty packet buffers: mbufs come from the mempool 32 at a
/// time (a thread that is not an EAL lcore has no per-lcore mempool cache, so single
/// allocations would each hit the shared ring). Unused mbufs return to the pool on
/// drop.
#[derive(Default)]
pub struct BufferStash {
    #[cfg(feature = "dpdk")]
    pub(super) mbufs: dpdk::MbufBatch<32>,
}

impl std::fmt::Debug for BufferStash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BufferStash")
    }
}

impl BufferPool {
    /// Like [`BufferPool::copy_from`], taking the buffer from `stash` (refilled in
    /// bulk).
    pub fn copy_from_stashed(
        &self,
        data: &[u8],
        max: usize,
        stash: &mut BufferStash,
    ) -> Option<Buffer> {
        match self {
            #[cfg(feature = "dpdk")]
            BufferPool::Mempool(p) => {
                if stash.mbufs.is_empty() && p.alloc_bulk(&mut stash.mbufs, 32).is_err() {
                    return self.copy_from(data, max);
                }
                let mut m = stash.mbufs.pop()?;
                let n = data.len().min(max).min(m.tailroom());
                m.extend_from_slice(&data[..n]).ok()?;
                Some(Buffer::Mbuf(m))
            }
            _ => {
                let _ = stash;
                self.copy_from(data, max)
            }
        }
    }
}
