//! Where unacknowledged stream bytes live on the sending side.

use crate::offset_ring::OffsetRing;

/// Storage for stream bytes between `write` and acknowledgement. The connection only
/// tracks offsets; a runtime can supply storage that keeps packet memory (e.g. mbufs),
/// sending payloads without copying them again.
pub trait SendStorage: Send {
    /// Bytes the storage can hold.
    fn capacity(&self) -> u64;
    /// Offset of the first byte held (everything below was released).
    fn start(&self) -> u64;
    /// Offset one past the last byte written.
    fn end(&self) -> u64;
    /// Copies as much of `data` as fits; returns how many bytes were taken.
    fn write(&mut self, data: &[u8]) -> usize;
    /// Longest run starting at `offset` that may go into one packet (storage chunk
    /// boundaries are never crossed). Only asked for held offsets (`start..end`).
    fn contiguous_len(&self, offset: u64) -> u64 {
        self.end().saturating_sub(offset)
    }
    /// Copies `[offset, offset + out.len())` into `out`; the range is held.
    fn copy_out(&self, offset: u64, out: &mut [u8]);
    /// Drops every byte below `offset` (acknowledged).
    fn release_to(&mut self, offset: u64);
    /// Raises the capacity towards `capacity` bytes (send-buffer autotuning), keeping
    /// the bytes held; returns the capacity now. Storage that cannot grow keeps its
    /// capacity (the default).
    fn grow(&mut self, capacity: u64) -> u64 {
        let _ = capacity;
        self.capacity()
    }
}

/// A byte ring: the default storage (one copy in on `write`, one copy out per
/// packet). Its memory grows with the bytes held, up to its capacity.
#[derive(Debug, Clone)]
pub struct ByteRing {
    ring: OffsetRing,
    start: u64,
    end: u64,
}

impl ByteRing {
    /// A ring holding up to `capacity` bytes (allocated as they are written).
    pub fn new(capacity: usize) -> Self {
        Self {
            ring: OffsetRing::new(capacity),
            start: 0,
            end: 0,
        }
    }

    /// Bytes of memory the ring holds now (at most its capacity).
    pub fn allocated(&self) -> usize {
        self.ring.allocated()
    }
}

impl SendStorage for ByteRing {
    fn capacity(&self) -> u64 {
        self.ring.limit() as u64
    }
    fn start(&self) -> u64 {
        self.start
    }
    fn end(&self) -> u64 {
        self.end
    }
    fn write(&mut self, data: &[u8]) -> usize {
        let free = self.ring.limit() - (self.end - self.start) as usize;
        let n = data.len().min(free);
        self.ring.put(self.start..self.end, self.end, &data[..n]);
        self.end += n as u64;
        n
    }
    fn copy_out(&self, offset: u64, out: &mut [u8]) {
        debug_assert!(offset >= self.start && offset + out.len() as u64 <= self.end);
        self.ring.get(offset, out);
    }
    fn release_to(&mut self, offset: u64) {
        self.start = self.start.max(offset.min(self.end));
    }
    fn grow(&mut self, capacity: u64) -> u64 {
        self.ring
            .raise_limit(usize::try_from(capacity).unwrap_or(usize::MAX));
        self.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_around_and_respects_capacity() {
        let mut r = ByteRing::new(10);
        assert_eq!(r.write(b"abcdefgh"), 8);
        r.release_to(6);
        assert_eq!(r.write(b"123456789"), 8);
        assert_eq!(r.end(), 16);
        let mut out = [0u8; 10];
        r.copy_out(6, &mut out);
        assert_eq!(&out, b"gh12345678");
        assert_eq!(r.write(b"x"), 0, "full");
    }

    /// A large ring costs memory only for what it holds; growing its capacity
    /// keeps the bytes.
    #[test]
    fn memory_follows_the_bytes_held() {
        let mut r = ByteRing::new(8 << 20);
        assert_eq!(r.allocated(), 0);
        assert_eq!(r.write(&[5; 1000]), 1000);
        assert!(r.allocated() < 64 * 1024, "{}", r.allocated());
        assert_eq!(r.grow(16 << 20), 16 << 20);
        let mut out = [0u8; 1000];
        r.copy_out(0, &mut out);
        assert_eq!(out, [5; 1000]);
    }
}
