//! Packet memory the runtime moves between application threads, the protocol and
//! the wire without copying. Each backend brings its own ([`PacketMemory`]): an
//! mbuf on DPDK, a pooled heap block on kernel UDP and in memory, a UMEM frame on a
//! future AF_XDP link. [`Buffer`] holds any of them behind one type, type-erased as
//! `std::task::RawWaker` or `bytes::Bytes` are (a handle and a table of functions),
//! so it costs no allocation, and reading the bytes costs no call.

use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

/// A backend's handle to packet memory: immutable bytes shared by reference count.
///
/// # Safety
///
/// Implementors promise, for [`Buffer`] to rely on:
/// - [`PacketMemory::from_raw`] on the pointer from [`PacketMemory::into_raw`] gives
///   back the same handle (ownership of one reference round-trips);
/// - the slice [`PacketMemory::bytes`] returns stays at the same address with the
///   same contents as long as any handle to that memory lives (the memory is not
///   written while shared, nor moved), and [`PacketMemory::share`] returns a handle
///   to the same bytes;
/// - sharing and dropping handles to the same memory may happen concurrently on
///   different threads (an atomic reference count).
pub unsafe trait PacketMemory: Send + 'static {
    /// The bytes.
    fn bytes(&self) -> &[u8];
    /// Another reference to the same memory.
    fn share(&self) -> Self;
    /// The handle as one pointer (ownership moves into it).
    fn into_raw(self) -> NonNull<()>;
    /// The handle back from [`PacketMemory::into_raw`].
    ///
    /// # Safety
    ///
    /// `raw` comes from `into_raw` of this type, and each such pointer is turned
    /// back at most once.
    unsafe fn from_raw(raw: NonNull<()>) -> Self;
}

/// The functions of one [`PacketMemory`] type, for a type-erased handle.
struct VTable {
    share: unsafe fn(NonNull<()>) -> NonNull<()>,
    drop: unsafe fn(NonNull<()>),
    type_id: fn() -> TypeId,
}

struct VTableOf<M>(PhantomData<M>);

impl<M: PacketMemory> VTableOf<M> {
    const VTABLE: VTable = VTable {
        share: share_raw::<M>,
        drop: drop_raw::<M>,
        type_id: TypeId::of::<M>,
    };
}

/// # Safety
/// `raw` is a live handle from `M::into_raw`; it stays owned by the caller.
unsafe fn share_raw<M: PacketMemory>(raw: NonNull<()>) -> NonNull<()> {
    // SAFETY: the caller keeps ownership, so the handle is borrowed, never dropped.
    let m = ManuallyDrop::new(unsafe { M::from_raw(raw) });
    m.share().into_raw()
}

/// # Safety
/// `raw` is a live handle from `M::into_raw`, given up by the caller.
unsafe fn drop_raw<M: PacketMemory>(raw: NonNull<()>) {
    // SAFETY: ownership comes back from the caller, once.
    drop(unsafe { M::from_raw(raw) });
}

/// A reference to packet memory of any backend. Sharing ([`Buffer::share`]) bumps
/// a reference count; the memory returns to its pool when the last reference drops.
pub struct Buffer {
    /// The bytes, cached from the handle (stable while it lives: see
    /// [`PacketMemory`]'s contract).
    ptr: NonNull<u8>,
    len: usize,
    raw: NonNull<()>,
    vtable: &'static VTable,
}

// SAFETY: the handle inside is a `PacketMemory`, which is `Send`, and the cached
// pointer only reads memory that handle keeps alive and unchanged.
unsafe impl Send for Buffer {}

impl Buffer {
    /// Wraps a backend's handle.
    #[inline]
    pub fn new<M: PacketMemory>(memory: M) -> Buffer {
        let bytes = memory.bytes();
        let (ptr, len) = (NonNull::from(bytes).cast::<u8>(), bytes.len());
        Buffer {
            ptr,
            len,
            raw: memory.into_raw(),
            vtable: &VTableOf::<M>::VTABLE,
        }
    }

    /// The bytes the buffer holds.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr`/`len` came from the handle's `bytes()`, which stay valid and
        // unchanged while the handle (owned by `self`) lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Another reference to the same memory.
    #[inline]
    pub fn share(&self) -> Buffer {
        Buffer {
            ptr: self.ptr,
            len: self.len,
            // SAFETY: `raw` is our live handle of the vtable's type; we keep it.
            raw: unsafe { (self.vtable.share)(self.raw) },
            vtable: self.vtable,
        }
    }

    /// Byte position of `part` (a sub-slice of [`Buffer::bytes`]) in the buffer.
    #[inline]
    pub fn position_of(&self, part: &[u8]) -> Option<usize> {
        let b = self.bytes();
        let start = (part.as_ptr() as usize).checked_sub(b.as_ptr() as usize)?;
        (start + part.len() <= b.len()).then_some(start)
    }

    /// Whether the memory is of backend type `M`.
    #[inline]
    pub fn is<M: PacketMemory>(&self) -> bool {
        (self.vtable.type_id)() == TypeId::of::<M>()
    }

    /// Runs `f` on the backend's handle when the memory is of type `M` (a backend
    /// recognizing its own memory, e.g. to chain an mbuf instead of copying it).
    #[inline]
    pub fn with<M: PacketMemory, R>(&self, f: impl FnOnce(&M) -> R) -> Option<R> {
        if !self.is::<M>() {
            return None;
        }
        // SAFETY: the type matches, and the handle stays ours: it is only lent to
        // `f` and never dropped here.
        let m = ManuallyDrop::new(unsafe { M::from_raw(self.raw) });
        Some(f(&m))
    }
}

impl Drop for Buffer {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `raw` is our handle of the vtable's type, given up once here.
        unsafe { (self.vtable.drop)(self.raw) }
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buffer({} bytes)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::link::HeapPool;

    /// A backend brought from outside: an `Arc<Vec<u8>>` (its strong count shows
    /// the handles alive).
    struct Counted(Arc<Vec<u8>>);

    // SAFETY: `Arc` round-trips through `into_raw`/`from_raw`; the vector is never
    // written after creation; `Arc` counts atomically.
    unsafe impl PacketMemory for Counted {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
        fn share(&self) -> Self {
            Counted(self.0.clone())
        }
        fn into_raw(self) -> NonNull<()> {
            NonNull::new(Arc::into_raw(self.0) as *mut ()).expect("Arc is never null")
        }
        unsafe fn from_raw(raw: NonNull<()>) -> Self {
            // SAFETY: the caller passes a pointer from `into_raw`, once.
            Counted(unsafe { Arc::from_raw(raw.as_ptr() as *const Vec<u8>) })
        }
    }

    #[test]
    fn a_new_backend_brings_its_own_memory() {
        let inner = Arc::new(b"hello".to_vec());
        let b = Buffer::new(Counted(inner.clone()));
        assert_eq!(b.bytes(), b"hello");
        assert!(b.is::<Counted>() && !b.is::<crate::link::HeapBuf>());
        let s = b.share();
        assert_eq!(Arc::strong_count(&inner), 3);
        assert_eq!(s.with(|c: &Counted| c.0.len()), Some(5));
        assert_eq!(s.with(|_: &crate::link::HeapBuf| ()), None);
        assert_eq!(Arc::strong_count(&inner), 3, "`with` lends, never drops");
        let t = std::thread::spawn(move || s.bytes().to_vec())
            .join()
            .unwrap();
        assert_eq!(t, b"hello");
        assert_eq!(
            Arc::strong_count(&inner),
            2,
            "the share dropped on its thread"
        );
        drop(b);
        assert_eq!(Arc::strong_count(&inner), 1, "each handle dropped once");
    }

    #[test]
    fn heap_blocks_return_to_their_pool_when_the_last_share_drops() {
        let pool = HeapPool::new(1, 64);
        let b = Buffer::new(pool.copy_from(b"abc").unwrap());
        let s = b.share();
        assert_eq!(b.position_of(&s.bytes()[1..]), Some(1));
        assert_eq!(b.position_of(b"zz"), None);
        drop(b);
        assert_eq!(pool.in_use(), 1);
        drop(s);
        assert_eq!(pool.in_use(), 0);
    }
}
