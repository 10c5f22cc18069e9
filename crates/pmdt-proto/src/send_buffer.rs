//! Where unacknowledged stream bytes live on the sending side.

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

/// A byte ring: the default storage (one copy in on `write`, one copy out per packet).
#[derive(Debug, Clone)]
pub struct ByteRing {
    buf: Vec<u8>,
    start: u64,
    end: u64,
}

impl ByteRing {
    /// A ring holding up to `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        Self {
            buf: vec![0; capacity.max(1)],
            start: 0,
            end: 0,
        }
    }

    fn idx(&self, offset: u64) -> usize {
        (offset % self.buf.len() as u64) as usize
    }
}

impl SendStorage for ByteRing {
    fn capacity(&self) -> u64 {
        self.buf.len() as u64
    }
    fn start(&self) -> u64 {
        self.start
    }
    fn end(&self) -> u64 {
        self.end
    }
    fn write(&mut self, data: &[u8]) -> usize {
        let free = self.buf.len() - (self.end - self.start) as usize;
        let n = data.len().min(free);
        let mut done = 0;
        while done < n {
            let i = self.idx(self.end + done as u64);
            let k = (self.buf.len() - i).min(n - done);
            self.buf[i..i + k].copy_from_slice(&data[done..done + k]);
            done += k;
        }
        self.end += n as u64;
        n
    }
    fn copy_out(&self, offset: u64, out: &mut [u8]) {
        debug_assert!(offset >= self.start && offset + out.len() as u64 <= self.end);
        let mut done = 0;
        while done < out.len() {
            let i = self.idx(offset + done as u64);
            let k = (self.buf.len() - i).min(out.len() - done);
            out[done..done + k].copy_from_slice(&self.buf[i..i + k]);
            done += k;
        }
    }
    fn release_to(&mut self, offset: u64) {
        self.start = self.start.max(offset.min(self.end));
    }
    fn grow(&mut self, capacity: u64) -> u64 {
        if capacity as usize > self.buf.len() {
            let mut next = ByteRing {
                buf: vec![0; capacity as usize],
                start: self.start,
                end: self.start,
            };
            let mut held = vec![0; (self.end - self.start) as usize];
            self.copy_out(self.start, &mut held);
            next.write(&held);
            *self = next;
        }
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
}
