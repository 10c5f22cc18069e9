//! Deterministic stream contents: byte `i` of flow `seed` is a pure function of both,
//! so a receiver verifies what arrived without storing what was sent.
//!
//! The stream is a sequence of 64-bit words (a SplitMix64 hash of the seed and the
//! word index), little-endian; [`fill`] and [`first_mismatch`] work a word at a
//! time, so generating or checking a byte costs an eighth of a hash.

/// Bytes in a flow tag: the big-endian flow number a tagged stream starts with.
pub const TAG_LEN: usize = 8;

/// Word `w` (bytes `8w..8w+8`) of stream `seed`.
#[inline]
fn word(seed: u64, w: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(w)
        .wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Byte `i` of stream `seed`.
#[inline]
pub fn byte_at(seed: u64, i: u64) -> u8 {
    word(seed, i / 8).to_le_bytes()[(i % 8) as usize]
}

/// Fills `out` with the bytes of stream `seed` starting at `offset`.
pub fn fill(seed: u64, offset: u64, out: &mut [u8]) {
    // Up to the next word boundary, byte by byte; then whole words; then the rest.
    let head = ((8 - offset % 8) % 8).min(out.len() as u64) as usize;
    let (first, rest) = out.split_at_mut(head);
    for (k, b) in first.iter_mut().enumerate() {
        *b = byte_at(seed, offset + k as u64);
    }
    let mut w = (offset + head as u64) / 8;
    let mut words = rest.chunks_exact_mut(8);
    for chunk in &mut words {
        chunk.copy_from_slice(&word(seed, w).to_le_bytes());
        w += 1;
    }
    let tail = words.into_remainder();
    let last = word(seed, w).to_le_bytes();
    tail.copy_from_slice(&last[..tail.len()]);
}

/// Index of the first byte of `data` (at stream `offset`) that differs from stream
/// `seed`, if any.
pub fn first_mismatch(seed: u64, offset: u64, data: &[u8]) -> Option<u64> {
    let mut expected = [0u8; 4096];
    let mut at = offset;
    for chunk in data.chunks(expected.len()) {
        let want = &mut expected[..chunk.len()];
        fill(seed, at, want);
        if let Some(k) = chunk.iter().zip(want.iter()).position(|(a, b)| a != b) {
            return Some(at + k as u64);
        }
        at += chunk.len() as u64;
    }
    None
}

/// Fills `out` with the bytes from `offset` of a tagged stream: the flow number
/// `tag` ([`TAG_LEN`] bytes, big-endian), then stream `seed` (which starts at
/// stream offset [`TAG_LEN`], so the pattern's byte `i` is the stream's byte `i`).
pub fn fill_tagged(tag: u64, seed: u64, offset: u64, out: &mut [u8]) {
    let tag = tag.to_be_bytes();
    let in_tag = (TAG_LEN as u64)
        .saturating_sub(offset)
        .min(out.len() as u64) as usize;
    let (head, rest) = out.split_at_mut(in_tag);
    let from = offset.min(TAG_LEN as u64) as usize;
    head.copy_from_slice(&tag[from..from + in_tag]);
    fill(seed, offset + in_tag as u64, rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time fill agrees with the byte definition at every alignment
    /// and length, and the mismatch search finds a flipped byte exactly.
    #[test]
    fn fill_matches_byte_at_at_every_alignment() {
        for offset in 0..20u64 {
            for len in 0..40usize {
                let mut out = vec![0u8; len];
                fill(7, offset, &mut out);
                let want: Vec<u8> = (0..len as u64).map(|k| byte_at(7, offset + k)).collect();
                assert_eq!(out, want, "offset {offset} len {len}");
                assert_eq!(first_mismatch(7, offset, &out), None);
                if len > 0 {
                    let k = len / 2;
                    out[k] ^= 1;
                    assert_eq!(first_mismatch(7, offset, &out), Some(offset + k as u64));
                }
            }
        }
    }

    #[test]
    fn a_mismatch_past_the_first_check_block_is_found() {
        let mut data = vec![0u8; 10_000];
        fill(3, 5, &mut data);
        data[9_000] ^= 0x80;
        assert_eq!(first_mismatch(3, 5, &data), Some(9_005));
        assert_eq!(first_mismatch(4, 5, &data), Some(5), "another seed differs");
    }

    #[test]
    fn a_tagged_stream_is_its_tag_then_its_pattern() {
        let mut whole = vec![0u8; 64];
        fill_tagged(0x0102_0304_0506_0708, 9, 0, &mut whole);
        assert_eq!(&whole[..TAG_LEN], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(first_mismatch(9, TAG_LEN as u64, &whole[TAG_LEN..]), None);
        for offset in 0..30 {
            let mut part = vec![0u8; 30];
            fill_tagged(0x0102_0304_0506_0708, 9, offset, &mut part);
            assert_eq!(part[..], whole[offset as usize..offset as usize + 30]);
        }
    }
}
