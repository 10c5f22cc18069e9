//! The generated payload of `pmdt-send --bytes`: a reproducible byte stream, so the
//! receiver's SHA-256 can be checked against the sender's.

/// An endless reproducible byte stream (xorshift64*), one per flow seed.
pub struct Pattern(u64);

impl Pattern {
    /// The stream for `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// Fills `buf` with the next bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            let v = x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}
