//! `rte_ring` carrying owned values: single-producer/single-consumer halves, or a
//! shared multi-producer/multi-consumer ring.

use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::batch::MbufBatch;
use crate::eal::Eal;
use crate::error::{Error, ErrorKind, Result};
use crate::mbuf::Mbuf;

static RING_SEQ: AtomicU32 = AtomicU32::new(0);

/// A value that travels through a ring as one non-null pointer, ownership included.
pub trait RingItem: Send + Sized {
    /// Gives up ownership as a raw, non-null pointer.
    fn into_ring_ptr(self) -> *mut c_void;
    /// Takes ownership back.
    ///
    /// # Safety
    /// `p` must come from `into_ring_ptr` of the same type and be used once.
    unsafe fn from_ring_ptr(p: *mut c_void) -> Self;
}

impl RingItem for Mbuf {
    fn into_ring_ptr(self) -> *mut c_void {
        self.into_raw() as *mut c_void
    }
    unsafe fn from_ring_ptr(p: *mut c_void) -> Self {
        Mbuf::from_raw(p as *mut dpdk_sys::rte_mbuf)
    }
}

impl<T: Send> RingItem for Box<T> {
    fn into_ring_ptr(self) -> *mut c_void {
        Box::into_raw(self) as *mut c_void
    }
    unsafe fn from_ring_ptr(p: *mut c_void) -> Self {
        Box::from_raw(p as *mut T)
    }
}

struct RingInner<T: RingItem> {
    ptr: NonNull<dpdk_sys::rte_ring>,
    _eal: Eal,
    _t: PhantomData<T>,
}

// SAFETY: rte_ring is a lock-free structure shared between threads; the flags it was
// created with decide which sides may be used concurrently, which the handle types
// enforce. Items are Send.
unsafe impl<T: RingItem> Send for RingInner<T> {}
// SAFETY: see above.
unsafe impl<T: RingItem> Sync for RingInner<T> {}

impl<T: RingItem> RingInner<T> {
    fn create(eal: &Eal, capacity: u32, flags: u32) -> Result<Self> {
        let name = format!(
            "ring_{}_{}",
            std::process::id() % 100_000,
            RING_SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let op = format!("create ring of {capacity}");
        if capacity == 0 || capacity >= (1 << 28) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                op,
                "capacity must be in 1..2^28",
            ));
        }
        let c = CString::new(name).expect("generated name has no NUL");
        // SAFETY: valid name; EXACT_SZ allows any capacity.
        let p = unsafe {
            dpdk_sys::rte_ring_create(c.as_ptr(), capacity, -1, flags | dpdk_sys::RING_F_EXACT_SZ)
        };
        let ptr = NonNull::new(p).ok_or_else(|| Error::last(op))?;
        Ok(Self {
            ptr,
            _eal: eal.clone(),
            _t: PhantomData,
        })
    }

    #[inline]
    fn enqueue(&self, item: T) -> std::result::Result<(), T> {
        let p = item.into_ring_ptr();
        // SAFETY: valid ring; the generic enqueue follows the ring's creation flags.
        if unsafe { dpdk_sys::rte_ring_enqueue(self.ptr.as_ptr(), p) } == 0 {
            Ok(())
        } else {
            // SAFETY: not enqueued, so we still own it.
            Err(unsafe { T::from_ring_ptr(p) })
        }
    }

    #[inline]
    fn dequeue(&self) -> Option<T> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid ring and out pointer.
        if unsafe { dpdk_sys::rte_ring_dequeue(self.ptr.as_ptr(), &mut p) } == 0 {
            // SAFETY: the pointer was enqueued by into_ring_ptr and is consumed once.
            Some(unsafe { T::from_ring_ptr(p) })
        } else {
            None
        }
    }

    fn len(&self) -> usize {
        // SAFETY: valid ring.
        unsafe { dpdk_sys::rte_ring_count(self.ptr.as_ptr()) as usize }
    }

    fn capacity(&self) -> usize {
        // SAFETY: valid ring.
        unsafe { dpdk_sys::rte_ring_get_capacity(self.ptr.as_ptr()) as usize }
    }
}

impl<T: RingItem> Drop for RingInner<T> {
    fn drop(&mut self) {
        // Both sides are gone (they hold this Arc): drain what is left, then free.
        while self.dequeue().is_some() {}
        // SAFETY: valid ring no one else references.
        unsafe { dpdk_sys::rte_ring_free(self.ptr.as_ptr()) };
    }
}

/// Producer half of a single-producer/single-consumer ring.
pub struct Producer<T: RingItem> {
    inner: Arc<RingInner<T>>,
}

/// Consumer half of a single-producer/single-consumer ring.
pub struct Consumer<T: RingItem> {
    inner: Arc<RingInner<T>>,
}

/// Creates an SP/SC ring of `capacity` items, split into its two halves. Each half is
/// `Send` but not `Clone`, so there is one producer and one consumer.
pub fn spsc<T: RingItem>(eal: &Eal, capacity: u32) -> Result<(Producer<T>, Consumer<T>)> {
    let inner = Arc::new(RingInner::create(
        eal,
        capacity,
        dpdk_sys::RING_F_SP_ENQ | dpdk_sys::RING_F_SC_DEQ,
    )?);
    Ok((
        Producer {
            inner: inner.clone(),
        },
        Consumer { inner },
    ))
}

impl<T: RingItem> Producer<T> {
    /// Enqueues one item; gives it back if the ring is full (backpressure).
    #[inline]
    pub fn push(&mut self, item: T) -> std::result::Result<(), T> {
        self.inner.enqueue(item)
    }

    /// Items currently queued.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether no item is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ring capacity.
    pub fn capacity(&self) -> usize {
        self.inner.capacity()
    }
}

impl Producer<Mbuf> {
    /// Moves as many mbufs as fit from the front of `batch` into the ring; the rest
    /// stay in the batch. Returns how many moved.
    #[inline]
    pub fn push_burst<const N: usize>(&mut self, batch: &mut MbufBatch<N>) -> usize {
        let len = batch.len();
        // SAFETY: single producer (this handle); first len slots are owned mbufs,
        // ownership of the first n passes to the ring.
        let n = unsafe {
            dpdk_sys::rte_ring_sp_enqueue_burst(
                self.inner.ptr.as_ptr(),
                batch.as_raw_ptr() as *const *mut c_void,
                len as u32,
                std::ptr::null_mut(),
            )
        } as usize;
        batch.consume_front(n);
        n
    }
}

/// Most items moved by one burst call of the `Copy`-item API.
const COPY_BURST: usize = 64;

impl<T: RingItem + Copy> Producer<T> {
    /// Enqueues copies of up to 64 items from `items` in one burst (for plain handles
    /// and indices that are `Copy`); returns how many were enqueued.
    #[inline]
    pub fn push_copies(&mut self, items: &[T]) -> usize {
        let k = items.len().min(COPY_BURST);
        let mut ptrs = [std::ptr::null_mut::<c_void>(); COPY_BURST];
        for (p, it) in ptrs.iter_mut().zip(&items[..k]) {
            *p = it.into_ring_ptr();
        }
        // SAFETY: single producer; k valid pointers. Copy items own nothing to leak.
        unsafe {
            dpdk_sys::rte_ring_sp_enqueue_burst(
                self.inner.ptr.as_ptr(),
                ptrs.as_ptr(),
                k as u32,
                std::ptr::null_mut(),
            ) as usize
        }
    }
}

impl<T: RingItem + Copy> Consumer<T> {
    /// Dequeues up to `min(out.len(), 64)` items in one burst; returns how many.
    #[inline]
    pub fn pop_copies(&mut self, out: &mut [T]) -> usize {
        let k = out.len().min(COPY_BURST);
        let mut ptrs = [std::ptr::null_mut::<c_void>(); COPY_BURST];
        // SAFETY: single consumer; room for k pointers.
        let n = unsafe {
            dpdk_sys::rte_ring_sc_dequeue_burst(
                self.inner.ptr.as_ptr(),
                ptrs.as_mut_ptr(),
                k as u32,
                std::ptr::null_mut(),
            )
        } as usize;
        for (o, p) in out.iter_mut().zip(&ptrs[..n]) {
            // SAFETY: each pointer was enqueued by into_ring_ptr and is taken once.
            *o = unsafe { T::from_ring_ptr(*p) };
        }
        n
    }
}

impl<T: RingItem> Consumer<T> {
    /// Dequeues one item.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        self.inner.dequeue()
    }

    /// Items currently queued.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether no item is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Consumer<Mbuf> {
    /// Dequeues up to `batch.remaining()` mbufs into `batch`; returns how many.
    #[inline]
    pub fn pop_burst<const N: usize>(&mut self, batch: &mut MbufBatch<N>) -> usize {
        let (spare, room) = batch.spare_raw();
        // SAFETY: single consumer (this handle); `spare` has room for `room` pointers.
        let n = unsafe {
            dpdk_sys::rte_ring_sc_dequeue_burst(
                self.inner.ptr.as_ptr(),
                spare as *mut *mut c_void,
                room as u32,
                std::ptr::null_mut(),
            )
        } as usize;
        // SAFETY: n owned mbufs were written after len.
        unsafe { batch.set_len(batch.len() + n) };
        n
    }
}

/// A multi-producer/multi-consumer ring: `Clone` and `Sync`, usable from any thread.
pub struct MpmcRing<T: RingItem> {
    inner: Arc<RingInner<T>>,
}

impl<T: RingItem> Clone for MpmcRing<T> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<T: RingItem> MpmcRing<T> {
    /// Creates an MP/MC ring of `capacity` items.
    pub fn new(eal: &Eal, capacity: u32) -> Result<Self> {
        Ok(Self {
            inner: Arc::new(RingInner::create(eal, capacity, 0)?),
        })
    }

    /// Enqueues one item; gives it back if the ring is full.
    #[inline]
    pub fn push(&self, item: T) -> std::result::Result<(), T> {
        self.inner.enqueue(item)
    }

    /// Dequeues one item.
    #[inline]
    pub fn pop(&self) -> Option<T> {
        self.inner.dequeue()
    }

    /// Items currently queued.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether no item is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ring capacity.
    pub fn capacity(&self) -> usize {
        self.inner.capacity()
    }
}
