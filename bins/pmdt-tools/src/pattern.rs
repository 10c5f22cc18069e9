//! The generated payload of pmdt-send (and of pmdt-recv's reverse flows): a
//! reproducible byte stream per flow, so the receiving side can check every byte
//! (`-R`) and the two SHA-256 sums can be compared.

/// Words in a pattern's table (32 KiB: it stays in the L1/L2 cache).
const TABLE_WORDS: usize = 4096;

/// An endless reproducible byte stream, one per flow seed. Reading it in pieces
/// of any size gives the same bytes as reading it at once.
///
/// Word `k` of the stream (8 bytes, little-endian) is `table[k mod 4096] ^
/// key(k / 4096)`: a 32 KiB table of xorshift64* words drawn from the seed,
/// whitened per 32 KiB block by a splitmix64 key of the block's index. No two
/// blocks repeat (a segment delivered at the wrong offset does not match), and
/// filling is a vectorized load-xor-store: the generator costs about as much as a
/// copy, where a serial generator cost a quarter of pmdt-send's core.
pub struct Pattern {
    table: Box<[u64; TABLE_WORDS]>,
    seed: u64,
    /// Bytes of the stream handed out so far.
    pos: u64,
}

/// splitmix64's finalizer: a well-mixed key per block index.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Pattern {
    /// The stream for `seed`.
    pub fn new(seed: u64) -> Self {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut table = Box::new([0u64; TABLE_WORDS]);
        for w in table.iter_mut() {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            *w = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
        }
        Self {
            table,
            seed: mix(seed ^ 0x6a09_e667_f3bc_c908),
            pos: 0,
        }
    }

    /// Word `k` of the stream.
    fn word(&self, k: u64) -> u64 {
        self.table[(k % TABLE_WORDS as u64) as usize] ^ self.key(k / TABLE_WORDS as u64)
    }

    fn key(&self, block: u64) -> u64 {
        mix(self
            .seed
            .wrapping_add(block.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    }

    /// Moves to byte `pos` of the stream: the next [`Pattern::fill`] gives the
    /// bytes from there (the stream is a function of the position, so a writer
    /// whose transport took only part of what it generated regenerates the rest
    /// instead of keeping it).
    pub fn seek(&mut self, pos: u64) {
        self.pos = pos;
    }

    /// Fills `buf` with the next bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut out = buf;
        // The rest of a word a previous call began.
        let skip = (self.pos % 8) as usize;
        if skip != 0 && !out.is_empty() {
            let w = self.word(self.pos / 8).to_le_bytes();
            let k = (8 - skip).min(out.len());
            out[..k].copy_from_slice(&w[skip..skip + k]);
            self.pos += k as u64;
            out = &mut out[k..];
        }
        // Whole words, a run within one block at a time.
        while out.len() >= 8 {
            let k = self.pos / 8;
            let at = (k % TABLE_WORDS as u64) as usize;
            let run = (TABLE_WORDS - at).min(out.len() / 8);
            let key = self.key(k / TABLE_WORDS as u64);
            let (head, rest) = out.split_at_mut(run * 8);
            for (c, w) in head.chunks_exact_mut(8).zip(&self.table[at..at + run]) {
                c.copy_from_slice(&(w ^ key).to_le_bytes());
            }
            self.pos += (run * 8) as u64;
            out = rest;
        }
        // The start of a word the next call finishes.
        if !out.is_empty() {
            let w = self.word(self.pos / 8).to_le_bytes();
            let n = out.len();
            out.copy_from_slice(&w[..n]);
            self.pos += n as u64;
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
        // Across 32 KiB blocks, in odd pieces: the same stream, and no block
        // repeats the one before it.
        let mut long = vec![0u8; 3 * 32768 + 11];
        Pattern::new(7).fill(&mut long);
        let mut p = Pattern::new(7);
        let mut got = Vec::new();
        while got.len() < long.len() {
            let mut b = vec![0u8; 4093.min(long.len() - got.len())];
            p.fill(&mut b);
            got.extend_from_slice(&b);
        }
        assert_eq!(got, long);
        assert_ne!(long[..32768], long[32768..65536]);
        // From any position, as read in order.
        let mut p = Pattern::new(7);
        for at in [999u64, 0, 13, 32768 * 2 + 5, 500] {
            let mut b = vec![0u8; 700.min(long.len() - at as usize)];
            p.seek(at);
            p.fill(&mut b);
            assert_eq!(b[..], long[at as usize..at as usize + b.len()]);
        }
        assert_ne!(whole[..8], {
            let mut o = [0u8; 8];
            Pattern::new(8).fill(&mut o);
            o
        });
    }
}
