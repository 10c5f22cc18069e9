//! Packet memory an application thread fills in place: taken from a link's pool,
//! written through `&mut [u8]` (or `std::io::Write`), then frozen into a shared
//! [`Buffer`] that the transport sends and retransmits without another copy.

use std::io;

use super::heap_buf::HeapBufMut;
use super::Buffer;

/// A backend's writable packet memory of one owner, for pools other than the
/// built-in ones (which [`WriteBuf`] holds without boxing).
pub trait WritableMemory: Send {
    /// The whole memory to write into (its length is the capacity).
    fn space(&mut self) -> &mut [u8];
    /// The first `len` bytes as shared, read-only packet memory.
    fn freeze(self: Box<Self>, len: usize) -> Buffer;
}

/// Writable packet memory of one owner (see the module documentation).
pub struct WriteBuf {
    mem: Writable,
    /// Bytes written so far.
    len: usize,
    /// Bytes it may hold.
    cap: usize,
}

enum Writable {
    Heap(HeapBufMut),
    /// Its data length is `cap` while it is being filled (trimmed to `len` when
    /// frozen).
    #[cfg(feature = "dpdk")]
    Mbuf(dpdk::Mbuf),
    Other(Box<dyn WritableMemory>),
}

impl std::fmt::Debug for WriteBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteBuf")
            .field("len", &self.len)
            .field("capacity", &self.cap)
            .finish()
    }
}

impl WriteBuf {
    /// A pooled heap block to fill, up to `max` bytes of it.
    pub(crate) fn heap(mut h: HeapBufMut, max: usize) -> Self {
        let cap = h.space().len().min(max);
        Self {
            mem: Writable::Heap(h),
            len: 0,
            cap,
        }
    }

    /// An mbuf to fill, up to `max` bytes of its tailroom.
    #[cfg(feature = "dpdk")]
    pub(crate) fn mbuf(mut m: dpdk::Mbuf, max: usize) -> Option<Self> {
        let cap = m.tailroom().min(max).min(u16::MAX as usize);
        m.append(cap).ok()?;
        Some(Self {
            mem: Writable::Mbuf(m),
            len: 0,
            cap,
        })
    }

    /// Another backend's memory to fill, up to `max` bytes of it.
    pub fn from_backend(mut mem: Box<dyn WritableMemory>, max: usize) -> Self {
        let cap = mem.space().len().min(max);
        Self {
            mem: Writable::Other(mem),
            len: 0,
            cap,
        }
    }

    /// Bytes it holds at most.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Bytes written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Room left.
    pub fn remaining(&self) -> usize {
        self.cap - self.len
    }

    fn space(&mut self) -> &mut [u8] {
        match &mut self.mem {
            Writable::Heap(h) => &mut h.space()[..self.cap],
            #[cfg(feature = "dpdk")]
            Writable::Mbuf(m) => m.data_mut().expect("a reserved mbuf has one owner"),
            Writable::Other(o) => &mut o.space()[..self.cap],
        }
    }

    /// The bytes written so far.
    pub fn filled_mut(&mut self) -> &mut [u8] {
        let n = self.len;
        &mut self.space()[..n]
    }

    /// The room after the bytes written: fill a prefix, then
    /// [`WriteBuf::advance`] by its length. Its contents are unspecified (packet
    /// memory is recycled, not cleared).
    pub fn spare(&mut self) -> &mut [u8] {
        let n = self.len;
        &mut self.space()[n..]
    }

    /// Marks `n` more bytes of [`WriteBuf::spare`] as written.
    ///
    /// # Panics
    /// When `n` exceeds [`WriteBuf::remaining`].
    pub fn advance(&mut self, n: usize) {
        assert!(
            n <= self.remaining(),
            "advance by {n} bytes with {} left",
            self.remaining()
        );
        self.len += n;
    }

    /// Appends what fits of `data`; returns how many bytes that was.
    pub fn put(&mut self, data: &[u8]) -> usize {
        let n = data.len().min(self.remaining());
        self.spare()[..n].copy_from_slice(&data[..n]);
        self.len += n;
        n
    }

    /// Makes the written bytes a shared, read-only buffer.
    pub(crate) fn freeze(self) -> Buffer {
        let len = self.len;
        match self.mem {
            Writable::Heap(mut h) => {
                h.set_len(len);
                Buffer::new(h.freeze())
            }
            #[cfg(feature = "dpdk")]
            Writable::Mbuf(mut m) => {
                m.trim(self.cap - len)
                    .expect("a reserved mbuf has one owner and `cap` bytes");
                // Summed while the bytes are in the writer's cache.
                super::dpdk_port::payload_sum::stamp(&mut m);
                Buffer::new(m)
            }
            Writable::Other(o) => o.freeze(len),
        }
    }
}

impl io::Write for WriteBuf {
    /// Copies what fits; `Ok(0)` once full.
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        Ok(self.put(data))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use crate::link::{BufferPool, BufferStash, HeapPool};

    #[test]
    fn filled_in_place_then_frozen_with_what_was_written() {
        let heap = HeapPool::new(2, 64);
        let pool = BufferPool::new(heap.clone());
        let mut stash = BufferStash::default();
        let mut w = pool.take_writable(40, 0, &mut stash).unwrap();
        assert_eq!((w.capacity(), w.len()), (40, 0));
        w.spare()[..3].copy_from_slice(b"abc");
        w.advance(3);
        assert_eq!(w.put(b"def"), 3);
        w.write_all(b"!").unwrap();
        assert_eq!(w.filled_mut(), b"abcdef!");
        assert_eq!(w.put(&[0u8; 100]), 33, "what fits");
        assert_eq!(w.write(b"x").unwrap(), 0, "full");
        let b = w.freeze();
        assert_eq!(&b.bytes()[..7], b"abcdef!");
        assert_eq!(b.bytes().len(), 40);
        assert_eq!(heap.in_use(), 1);
        drop(b);
        let unused = pool.take_writable(40, 0, &mut stash).unwrap();
        assert!(
            pool.take_writable(40, 1, &mut stash).is_none(),
            "the last free buffer is kept"
        );
        drop(unused);
        assert_eq!(heap.in_use(), 0, "dropped unsubmitted memory returns");
    }

    #[test]
    #[should_panic(expected = "advance by 9 bytes with 8 left")]
    fn advancing_past_the_end_panics() {
        let pool = BufferPool::new(HeapPool::new(1, 8));
        let mut w = pool
            .take_writable(100, 0, &mut BufferStash::default())
            .unwrap();
        w.advance(9);
    }
}
