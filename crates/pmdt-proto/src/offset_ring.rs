//! A byte ring indexed by stream offset whose memory grows on demand, up to a
//! limit: a connection with an 8 MiB buffer that carries a few kilobytes holds a
//! few kilobytes, however the allocator treats a large zeroed allocation.

use std::ops::Range;

/// The first allocation, in bytes; each growth at least doubles it.
const FIRST_ALLOCATION: usize = 16 * 1024;

/// Stream byte `o` lives at `o % allocated` while it is held.
#[derive(Debug, Clone)]
pub(crate) struct OffsetRing {
    buf: Vec<u8>,
    limit: usize,
}

impl OffsetRing {
    /// An empty ring that may grow to `limit` bytes; nothing is allocated yet.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            buf: Vec::new(),
            limit: limit.max(1),
        }
    }

    /// The most bytes the ring holds at once.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Lets the ring grow to `limit` bytes (never lowers it).
    pub(crate) fn raise_limit(&mut self, limit: usize) {
        self.limit = self.limit.max(limit);
    }

    /// Lowers the limit to `limit` bytes. It takes effect as the held bytes allow
    /// ([`OffsetRing::fit`]): bytes stored beyond it meanwhile still fit.
    pub(crate) fn lower_limit(&mut self, limit: usize) {
        self.limit = self.limit.min(limit.max(1));
    }

    /// Gives memory back when the allocation exceeds the limit and what is held
    /// (`held`) fits it: the held bytes move to a smaller allocation.
    pub(crate) fn fit(&mut self, held: Range<u64>) {
        let span = (held.end - held.start) as usize;
        if self.buf.len() > self.limit && span <= self.limit {
            let len = span
                .next_power_of_two()
                .max(FIRST_ALLOCATION)
                .min(self.limit);
            self.reallocate(held, len);
        }
    }

    /// Bytes allocated now.
    pub(crate) fn allocated(&self) -> usize {
        self.buf.len()
    }

    /// Stores `data` at stream offset `offset`. `held` is what the ring holds now
    /// (kept if the ring grows); `held.start..offset + data.len()` fits the
    /// limit, or a limit that was lowered since.
    pub(crate) fn put(&mut self, held: Range<u64>, offset: u64, data: &[u8]) {
        let end = offset + data.len() as u64;
        debug_assert!(offset >= held.start);
        self.cover(held, end);
        self.copy_in(offset, data);
    }

    /// Copies the held bytes `[offset, offset + out.len())` into `out`.
    pub(crate) fn get(&self, offset: u64, out: &mut [u8]) {
        let len = self.buf.len();
        let mut done = 0;
        while done < out.len() {
            let i = ((offset + done as u64) % len as u64) as usize;
            let k = (len - i).min(out.len() - done);
            out[done..done + k].copy_from_slice(&self.buf[i..i + k]);
            done += k;
        }
    }

    /// Grows the allocation, if needed, to span `held.start..end`, moving the held
    /// bytes to their places in the larger ring.
    fn cover(&mut self, held: Range<u64>, end: u64) {
        let span = (end - held.start) as usize;
        if span <= self.buf.len() {
            return;
        }
        let len = span
            .next_power_of_two()
            .max(FIRST_ALLOCATION)
            .min(self.limit.max(span));
        self.reallocate(held, len);
    }

    /// Moves the held bytes to a new allocation of `len` bytes.
    fn reallocate(&mut self, held: Range<u64>, len: usize) {
        let mut next = OffsetRing {
            buf: vec![0; len],
            limit: self.limit,
        };
        let old = self.buf.len();
        let mut o = held.start;
        while o < held.end && old > 0 {
            let i = (o % old as u64) as usize;
            let k = (old - i).min((held.end - o) as usize);
            next.copy_in(o, &self.buf[i..i + k]);
            o += k as u64;
        }
        *self = next;
    }

    fn copy_in(&mut self, offset: u64, data: &[u8]) {
        let len = self.buf.len();
        let mut done = 0;
        while done < data.len() {
            let i = ((offset + done as u64) % len as u64) as usize;
            let k = (len - i).min(data.len() - done);
            self.buf[i..i + k].copy_from_slice(&data[done..done + k]);
            done += k;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes written across several growths and wrap-arounds read back as written,
    /// and the allocation follows what is held, not the limit.
    #[test]
    fn grows_on_demand_and_keeps_what_it_holds() {
        let mut r = OffsetRing::new(1 << 20);
        assert_eq!(r.allocated(), 0);
        let byte = |o: u64| (o * 7 % 251) as u8;
        let (mut start, mut end) = (0u64, 0u64);
        for step in 0..200u64 {
            let n = 1000 + (step * 977) % 9000;
            let data: Vec<u8> = (end..end + n).map(byte).collect();
            if end + n - start > r.limit() as u64 {
                start = end + n - r.limit() as u64;
            }
            r.put(start..end, end, &data);
            end += n;
            start += (end - start) / 3; // release part of it
            let mut out = vec![0u8; (end - start) as usize];
            r.get(start, &mut out);
            assert!(out.iter().zip(start..).all(|(b, o)| *b == byte(o)));
            assert!(r.allocated() <= r.limit());
        }
        let mut small = OffsetRing::new(8 << 20);
        small.put(0..0, 0, &[1; 3000]);
        assert_eq!(small.allocated(), FIRST_ALLOCATION);
    }

    #[test]
    fn a_limit_that_is_not_a_power_of_two_is_used_to_the_byte() {
        let mut r = OffsetRing::new(10);
        r.put(0..0, 0, b"abcdefgh");
        r.put(6..8, 8, b"12345678");
        assert_eq!(r.allocated(), 10);
        let mut out = [0u8; 10];
        r.get(6, &mut out);
        assert_eq!(&out, b"gh12345678");
    }
}
