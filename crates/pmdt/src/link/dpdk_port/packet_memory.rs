//! DPDK's packet memory for the runtime: an mbuf is a [`PacketMemory`] (its first
//! segment's data), a mempool a [`PacketPool`].

use std::ptr::NonNull;

use dpdk::{Mbuf, MbufBatch, Mempool};

use crate::link::{Buffer, BufferStash, PacketMemory, PacketPool, WriteBuf};

/// Mbufs a thread's stash takes from the mempool at once.
const STASH_BULK: usize = 32;

// SAFETY: `into_raw`/`from_raw` move the one reference the `Mbuf` owns; a shared
// mbuf refuses writes (`Mbuf` checks the reference count) and its data does not
// move while referenced; DPDK updates reference counts atomically.
unsafe impl PacketMemory for Mbuf {
    #[inline]
    fn bytes(&self) -> &[u8] {
        self.data()
    }
    #[inline]
    fn share(&self) -> Self {
        self.clone_ref()
    }
    #[inline]
    fn into_raw(self) -> NonNull<()> {
        NonNull::new(Mbuf::into_raw(self).cast()).expect("an Mbuf is never null")
    }
    #[inline]
    unsafe fn from_raw(raw: NonNull<()>) -> Self {
        // SAFETY: the caller passes a pointer from `into_raw`, once.
        unsafe { Mbuf::from_raw(raw.as_ptr().cast()) }
    }
}

/// Allocation works from any thread; threads that are not EAL lcores bypass the
/// per-lcore cache unless [`PacketPool::attach_thread`] registered them, and
/// [`PacketPool::copy_from_stashed`] allocates in bulk either way.
impl PacketPool for Mempool {
    fn capacity(&self) -> usize {
        Mempool::capacity(self) as usize
    }
    fn available(&self) -> usize {
        Mempool::available(self) as usize
    }
    fn copy_from(&self, data: &[u8], max: usize) -> Option<Buffer> {
        let m = self.alloc().ok()?;
        fill(m, data, max)
    }
    fn copy_from_stashed(
        &self,
        data: &[u8],
        max: usize,
        keep_free: usize,
        stash: &mut BufferStash,
    ) -> Option<Buffer> {
        let mbufs = stash.get_or_insert_with(MbufBatch::<STASH_BULK>::new);
        if mbufs.is_empty() {
            // Counting free mbufs walks every lcore's cache: only per refill.
            if PacketPool::available(self) <= keep_free {
                return None;
            }
            if self.alloc_bulk(mbufs, STASH_BULK).is_err() {
                return PacketPool::copy_from(self, data, max);
            }
        }
        fill(mbufs.pop()?, data, max)
    }
    fn take_writable(
        &self,
        max: usize,
        keep_free: usize,
        stash: &mut BufferStash,
    ) -> Option<WriteBuf> {
        let mbufs = stash.get_or_insert_with(MbufBatch::<STASH_BULK>::new);
        let m = match mbufs.pop() {
            Some(m) => m,
            // Counting free mbufs walks every lcore's cache: only per refill.
            None if PacketPool::available(self) <= keep_free => return None,
            None if self.alloc_bulk(mbufs, STASH_BULK).is_ok() => mbufs.pop()?,
            None => self.alloc().ok()?,
        };
        WriteBuf::mbuf(m, max)
    }
    fn writable(&self) -> bool {
        true
    }
    fn sums_payloads(&self) -> bool {
        super::payload_sum::registered()
    }
    #[inline]
    fn attach_thread(&self) {
        dpdk::register_current_thread(self.eal());
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `m` (fresh from the pool) holding up to `max` bytes of `data` (what fits),
/// summed as they are copied (see `payload_sum`).
#[inline]
fn fill(mut m: Mbuf, data: &[u8], max: usize) -> Option<Buffer> {
    let n = data.len().min(max).min(m.tailroom());
    super::payload_sum::copy_stamped(&mut m, &data[..n]).then(|| Buffer::new(m))
}
