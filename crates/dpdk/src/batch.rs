//! A fixed-capacity burst of owned mbufs, the unit of rx/tx bursts and ring transfers.

use crate::mbuf::Mbuf;
use dpdk_sys as sys;

/// Default burst size (as in DPDK's examples).
pub const DEFAULT_BURST: usize = 32;

/// Up to `N` owned mbufs, stored inline (no allocation). `Drop` frees what it still
/// holds, so nothing leaks on any path: mbufs a `tx_burst` did not send stay in the
/// batch, at its front, for the caller to retry or drop.
pub struct MbufBatch<const N: usize = DEFAULT_BURST> {
    len: usize,
    bufs: [*mut sys::rte_mbuf; N],
}

// SAFETY: the batch uniquely owns the mbufs it holds, and Mbuf is Send.
unsafe impl<const N: usize> Send for MbufBatch<N> {}

impl<const N: usize> Default for MbufBatch<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> MbufBatch<N> {
    /// An empty batch.
    pub const fn new() -> Self {
        Self {
            len: 0,
            bufs: [std::ptr::null_mut(); N],
        }
    }

    /// Number of mbufs held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the batch is full.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == N
    }

    /// Maximum number of mbufs.
    #[inline]
    pub const fn capacity(&self) -> usize {
        N
    }

    /// Free slots.
    #[inline]
    pub fn remaining(&self) -> usize {
        N - self.len
    }

    /// Adds an mbuf at the end; hands it back if the batch is full.
    #[inline]
    pub fn push(&mut self, m: Mbuf) -> Result<(), Mbuf> {
        if self.len == N {
            return Err(m);
        }
        self.bufs[self.len] = m.into_raw();
        self.len += 1;
        Ok(())
    }

    /// Removes the last mbuf.
    #[inline]
    pub fn pop(&mut self) -> Option<Mbuf> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: slots below the old len hold owned, valid mbufs.
        Some(unsafe { Mbuf::from_raw(self.bufs[self.len]) })
    }

    /// The held mbufs as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[Mbuf] {
        // SAFETY: Mbuf is repr(transparent) over NonNull<rte_mbuf>, and slots
        // 0..len hold non-null owned mbufs.
        unsafe { std::slice::from_raw_parts(self.bufs.as_ptr() as *const Mbuf, self.len) }
    }

    /// The held mbufs as a mutable slice (mbufs can be edited, not removed).
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Mbuf] {
        // SAFETY: as in as_slice; the slice cannot change len.
        unsafe { std::slice::from_raw_parts_mut(self.bufs.as_mut_ptr() as *mut Mbuf, self.len) }
    }

    /// Iterates over the held mbufs.
    pub fn iter(&self) -> std::slice::Iter<'_, Mbuf> {
        self.as_slice().iter()
    }

    /// Takes every mbuf out, front to back; any not consumed are freed when the
    /// iterator is dropped.
    pub fn drain(&mut self) -> Drain<'_, N> {
        let end = self.len;
        self.len = 0;
        Drain {
            batch: self,
            pos: 0,
            end,
        }
    }

    /// Frees every held mbuf.
    pub fn clear(&mut self) {
        if self.len > 0 {
            // SAFETY: slots 0..len hold owned mbufs; after the call none are held.
            unsafe { sys::rte_pktmbuf_free_bulk(self.bufs.as_mut_ptr(), self.len as u32) };
            self.len = 0;
        }
    }

    /// Pointer to the first free slot and the number of free slots, for FFI fills.
    #[inline]
    pub(crate) fn spare_raw(&mut self) -> (*mut *mut sys::rte_mbuf, usize) {
        // SAFETY: len <= N, so the pointer is within or one past the array.
        (
            unsafe { self.bufs.as_mut_ptr().add(self.len) },
            N - self.len,
        )
    }

    /// Pointer to the first held mbuf, for FFI consumers.
    #[inline]
    pub(crate) fn as_raw_ptr(&mut self) -> *mut *mut sys::rte_mbuf {
        self.bufs.as_mut_ptr()
    }

    /// Sets the length after an FFI call filled slots.
    ///
    /// # Safety
    /// Slots `0..new_len` must hold owned, valid mbufs.
    #[inline]
    pub(crate) unsafe fn set_len(&mut self, new_len: usize) {
        debug_assert!(new_len <= N);
        self.len = new_len;
    }

    /// Forgets the first `n` mbufs (ownership went elsewhere, e.g. to a NIC) and
    /// moves the rest to the front.
    #[inline]
    pub(crate) fn consume_front(&mut self, n: usize) {
        debug_assert!(n <= self.len);
        if n == 0 {
            return;
        }
        self.bufs.copy_within(n..self.len, 0);
        self.len -= n;
    }
}

impl<const N: usize> Drop for MbufBatch<N> {
    fn drop(&mut self) {
        self.clear();
    }
}

impl<const N: usize> std::fmt::Debug for MbufBatch<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MbufBatch")
            .field("len", &self.len)
            .field("capacity", &N)
            .finish()
    }
}

/// Draining iterator of [`MbufBatch::drain`].
pub struct Drain<'a, const N: usize> {
    batch: &'a mut MbufBatch<N>,
    pos: usize,
    end: usize,
}

impl<const N: usize> Iterator for Drain<'_, N> {
    type Item = Mbuf;
    #[inline]
    fn next(&mut self) -> Option<Mbuf> {
        if self.pos == self.end {
            return None;
        }
        let p = self.batch.bufs[self.pos];
        self.pos += 1;
        // SAFETY: slots pos..end still hold owned mbufs not yet handed out.
        Some(unsafe { Mbuf::from_raw(p) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.end - self.pos, Some(self.end - self.pos))
    }
}

impl<const N: usize> Drop for Drain<'_, N> {
    fn drop(&mut self) {
        let rest = self.end - self.pos;
        if rest > 0 {
            // SAFETY: slots pos..end hold owned mbufs no one else has.
            unsafe {
                sys::rte_pktmbuf_free_bulk(self.batch.bufs.as_mut_ptr().add(self.pos), rest as u32)
            };
        }
    }
}
