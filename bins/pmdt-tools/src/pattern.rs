//! The generated payload of pmdt-send (and of pmdt-recv's reverse flows): a
//! reproducible byte stream per flow, so the receiving side can check every byte
//! (`-R`) and the two SHA-256 sums can be compared.

/// An endless reproducible byte stream (xorshift64*), one per flow seed. Reading
/// it in pieces of any size gives the same bytes as reading it at once.
pub struct Pattern {
    state: u64,
    word: [u8; 8],
    /// Bytes of `word` already handed out (8: none left).
    used: usize,
}

impl Pattern {
    /// The stream for `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            state: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            word: [0; 8],
            used: 8,
        }
    }

    fn next_word(&mut self) -> [u8; 8] {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes()
    }

    /// Fills `buf` with the next bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut out = buf;
        if self.used < 8 {
            let k = (8 - self.used).min(out.len());
            out[..k].copy_from_slice(&self.word[self.used..self.used + k]);
            self.used += k;
            out = &mut out[k..];
        }
        let mut chunks = out.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.next_word());
        }
        let tail = chunks.into_remainder();
        if !tail.is_empty() {
            self.word = self.next_word();
            tail.copy_from_slice(&self.word[..tail.len()]);
            self.used = tail.len();
        }
    }

    /// Whether `data` is the next bytes of the stream (consumes them either way);
    /// `scratch` is working memory.
    pub fn matches(&mut self, data: &[u8], scratch: &mut Vec<u8>) -> bool {
        scratch.resize(data.len(), 0);
        self.fill(scratch);
        scratch[..] == data[..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_of_any_size_give_the_same_stream() {
        let mut whole = vec![0u8; 1000];
        Pattern::new(7).fill(&mut whole);
        let mut p = Pattern::new(7);
        let mut got = Vec::new();
        for step in [1, 3, 8, 13, 64, 5, 906] {
            let mut b = vec![0u8; step];
            p.fill(&mut b);
            got.extend_from_slice(&b);
        }
        assert_eq!(got, whole);
        let mut v = Pattern::new(7);
        let mut scratch = Vec::new();
        assert!(v.matches(&whole[..17], &mut scratch));
        assert!(v.matches(&whole[17..500], &mut scratch));
        let mut bad = whole[500..].to_vec();
        bad[100] ^= 1;
        assert!(!v.matches(&bad, &mut scratch));
        assert_ne!(whole[..8], {
            let mut o = [0u8; 8];
            Pattern::new(8).fill(&mut o);
            o
        });
    }
}
