//! Where application threads get packet memory to write into: each backend's pool
//! behind one trait ([`PacketPool`]), handed around as a [`BufferPool`].

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use super::{Buffer, WriteBuf};

/// A backend's pool of packet memory, usable from any thread.
pub trait PacketPool: Send + Sync + fmt::Debug + 'static {
    /// Buffers the pool holds in all.
    fn capacity(&self) -> usize;
    /// Buffers free now (a snapshot: other threads allocate and free concurrently).
    fn available(&self) -> usize;
    /// A buffer holding a copy of up to `max` bytes of `data` (at most what one
    /// buffer holds), or `None` when the pool is exhausted.
    fn copy_from(&self, data: &[u8], max: usize) -> Option<Buffer>;
    /// Like [`PacketPool::copy_from`], taking the memory from a thread's `stash`
    /// where the pool keeps one (e.g. mbufs allocated in bulk); `None` also when
    /// only `keep_free` buffers are free (what the pool keeps for others: the
    /// I/O loop's receiving and headers; checked when the stash is refilled).
    /// The default ignores the stash.
    fn copy_from_stashed(
        &self,
        data: &[u8],
        max: usize,
        keep_free: usize,
        stash: &mut BufferStash,
    ) -> Option<Buffer> {
        let _ = stash;
        if self.available() <= keep_free {
            return None;
        }
        self.copy_from(data, max)
    }
    /// Empty packet memory to fill in place, for up to `max` bytes (less if one
    /// buffer holds less), taken from `stash` where the pool keeps one; `None`
    /// when the pool is exhausted or only `keep_free` buffers are free in it (what
    /// it keeps for others, e.g. receiving; checked when the stash is refilled).
    /// The default: `None`, a pool that only copies.
    fn take_writable(
        &self,
        max: usize,
        keep_free: usize,
        stash: &mut BufferStash,
    ) -> Option<WriteBuf> {
        let _ = (max, keep_free, stash);
        None
    }
    /// Whether [`PacketPool::take_writable`] hands out memory (the default: no).
    fn writable(&self) -> bool {
        false
    }
    /// Whether the payloads in this pool's memory are summed for a UDP
    /// checksum computed in software (a link without checksum offload): a
    /// copy into the pool sums as it copies, memory written in place is
    /// summed in a second pass over it. The default: no.
    fn sums_payloads(&self) -> bool {
        false
    }
    /// Prepares the calling thread to take and give back this pool's memory
    /// cheaply; a thread-local check after the first call on a thread. DPDK:
    /// registers the thread with the EAL, so its mbuf allocations and frees go
    /// through a per-lcore cache. The default does nothing.
    #[inline]
    fn attach_thread(&self) {}
    /// The pool as `Any` (to recover the backend's type, see
    /// [`BufferPool::downcast_ref`]).
    fn as_any(&self) -> &dyn Any;
}

/// A shared handle to a backend's [`PacketPool`]. Cheap to clone.
#[derive(Clone, Debug)]
pub struct BufferPool(Arc<dyn PacketPool>);

impl BufferPool {
    /// Wraps a backend's pool.
    pub fn new<P: PacketPool>(pool: P) -> Self {
        Self(Arc::new(pool))
    }

    /// Wraps a backend's pool already behind an `Arc`.
    pub fn from_arc<P: PacketPool>(pool: Arc<P>) -> Self {
        Self(pool)
    }

    /// Buffers the pool holds in all.
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Buffers free now (a snapshot: other threads allocate and free concurrently).
    pub fn available(&self) -> usize {
        self.0.available()
    }

    /// A buffer holding a copy of up to `max` bytes of `data` (the one copy on the
    /// sending side), or `None` when the pool is exhausted.
    pub fn copy_from(&self, data: &[u8], max: usize) -> Option<Buffer> {
        self.0.copy_from(data, max)
    }

    /// Like [`BufferPool::copy_from`], taking the buffer from `stash` (refilled in
    /// bulk where the backend does so), leaving `keep_free` buffers free (see
    /// [`PacketPool::copy_from_stashed`]).
    pub fn copy_from_stashed(
        &self,
        data: &[u8],
        max: usize,
        keep_free: usize,
        stash: &mut BufferStash,
    ) -> Option<Buffer> {
        self.0.copy_from_stashed(data, max, keep_free, stash)
    }

    /// See [`PacketPool::take_writable`].
    #[inline]
    pub fn take_writable(
        &self,
        max: usize,
        keep_free: usize,
        stash: &mut BufferStash,
    ) -> Option<WriteBuf> {
        self.0.take_writable(max, keep_free, stash)
    }

    /// See [`PacketPool::writable`].
    pub fn writable(&self) -> bool {
        self.0.writable()
    }

    /// See [`PacketPool::sums_payloads`].
    pub fn sums_payloads(&self) -> bool {
        self.0.sums_payloads()
    }

    /// See [`PacketPool::attach_thread`].
    #[inline]
    pub fn attach_thread(&self) {
        self.0.attach_thread()
    }

    /// The backend's pool, if it is a `P`.
    pub fn downcast_ref<P: PacketPool>(&self) -> Option<&P> {
        self.0.as_any().downcast_ref()
    }
}

/// A thread's stash of empty packet memory, kept between writes by whichever pool
/// uses it (e.g. mbufs taken from the mempool 32 at a time: a thread that is not an
/// EAL lcore has no per-lcore cache). What it holds goes back to its pool on drop.
#[derive(Default)]
pub struct BufferStash {
    /// What `slot` holds (checked without a virtual call: this runs per write).
    kind: Option<TypeId>,
    slot: Option<Box<dyn Any + Send>>,
}

impl BufferStash {
    /// The stash's contents as a `T`, made with `init` on first use (or when a
    /// different pool used the stash before).
    #[inline]
    pub fn get_or_insert_with<T: Any + Send>(&mut self, init: impl FnOnce() -> T) -> &mut T {
        if self.kind != Some(TypeId::of::<T>()) {
            self.slot = Some(Box::new(init()));
            self.kind = Some(TypeId::of::<T>());
        }
        let slot = self.slot.as_mut().expect("set with `kind`");
        // SAFETY: `kind` records the type `slot` was made with: it holds a `T`.
        unsafe { &mut *(&mut **slot as *mut (dyn Any + Send)).cast::<T>() }
    }
}

impl fmt::Debug for BufferStash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BufferStash")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stash_keeps_its_contents_until_another_type_replaces_them() {
        let mut stash = BufferStash::default();
        let mut made = 0;
        for i in 0..3u32 {
            let v = stash.get_or_insert_with(|| {
                made += 1;
                Vec::<u32>::new()
            });
            v.push(i);
        }
        assert_eq!(made, 1);
        assert_eq!(stash.get_or_insert_with(Vec::<u32>::new), &[0, 1, 2]);
        assert_eq!(*stash.get_or_insert_with(|| 7u8), 7);
        assert!(stash.get_or_insert_with(Vec::<u32>::new).is_empty());
    }
}
