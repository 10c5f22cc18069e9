//! Reassembly of received stream bytes: out-of-order data is stored at its offset
//! and read in order. The buffer's capacity is the credit given to the peer.

use crate::range_set::RangeSet;

/// A fixed-size reassembly ring.
#[derive(Debug, Clone)]
pub struct RecvBuffer {
    buf: Vec<u8>,
    /// Next offset the application reads.
    read: u64,
    received: RangeSet,
}

impl RecvBuffer {
    /// A buffer of `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        Self {
            buf: vec![0; capacity.max(1)],
            read: 0,
            received: RangeSet::new(),
        }
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.buf.len() as u64
    }

    /// Offset of the next byte the application reads.
    pub fn read_offset(&self) -> u64 {
        self.read
    }

    /// Every byte below this offset has arrived.
    pub fn contiguous_end(&self) -> u64 {
        self.received.contiguous_end(self.read)
    }

    /// Bytes ready to read in order.
    pub fn readable(&self) -> u64 {
        self.contiguous_end() - self.read
    }

    /// Highest offset that may be stored: the credit limit.
    pub fn limit(&self) -> u64 {
        self.read + self.buf.len() as u64
    }

    /// Stores the parts of `[offset, offset + data.len())` not yet received; the
    /// caller guarantees the range ends at or below [`RecvBuffer::limit`]. Returns
    /// how many bytes were new.
    pub fn insert(&mut self, offset: u64, data: &[u8]) -> u64 {
        let end = offset + data.len() as u64;
        debug_assert!(end <= self.limit());
        let start = offset.max(self.read);
        if start >= end {
            return 0;
        }
        let mut new = 0;
        let buf = &mut self.buf;
        self.received.for_each_missing(start..end, |gap| {
            let src = &data[(gap.start - offset) as usize..(gap.end - offset) as usize];
            let mut done = 0usize;
            while done < src.len() {
                let i = ((gap.start + done as u64) % buf.len() as u64) as usize;
                let k = (buf.len() - i).min(src.len() - done);
                buf[i..i + k].copy_from_slice(&src[done..done + k]);
                done += k;
            }
            new += gap.end - gap.start;
        });
        self.received.insert(start..end);
        new
    }

    /// Reads in-order bytes into `out`; returns how many.
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        let n = (self.readable() as usize).min(out.len());
        let mut done = 0;
        while done < n {
            let i = ((self.read + done as u64) % self.buf.len() as u64) as usize;
            let k = (self.buf.len() - i).min(n - done);
            out[done..done + k].copy_from_slice(&self.buf[i..i + k]);
            done += k;
        }
        self.read += n as u64;
        self.received.remove_below(self.read);
        n
    }

    /// Number of disjoint received ranges (1 when in order): a measure of reordering.
    pub fn fragments(&self) -> usize {
        self.received.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reassembles_out_of_order_and_ignores_duplicates() {
        let mut b = RecvBuffer::new(8);
        assert_eq!(b.insert(4, b"efgh"), 4);
        assert_eq!(b.readable(), 0);
        assert_eq!(b.insert(0, b"abcd"), 4);
        assert_eq!(b.insert(2, b"cdef"), 0, "duplicate");
        let mut out = [0u8; 5];
        assert_eq!(b.read(&mut out), 5);
        assert_eq!(&out, b"abcde");
        assert_eq!(b.limit(), 13);
        assert_eq!(b.insert(8, b"ijklm"), 5, "wraps");
        let mut out = [0u8; 16];
        assert_eq!(b.read(&mut out), 8);
        assert_eq!(&out[..8], b"fghijklm");
    }
}
