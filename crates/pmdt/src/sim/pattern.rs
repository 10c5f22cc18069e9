//! Deterministic stream contents: byte `i` of flow `seed` is a pure function of both,
//! so a receiver verifies what arrived without storing what was sent.

/// Fills `out` with the bytes of stream `seed` starting at `offset`.
pub fn fill(seed: u64, offset: u64, out: &mut [u8]) {
    for (k, b) in out.iter_mut().enumerate() {
        *b = byte_at(seed, offset + k as u64);
    }
}

/// Byte `i` of stream `seed`.
#[inline]
pub fn byte_at(seed: u64, i: u64) -> u8 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(i / 8)
        .wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> ((i % 8) * 8)) as u8
}

/// Index of the first byte of `data` (at stream `offset`) that differs from stream
/// `seed`, if any.
pub fn first_mismatch(seed: u64, offset: u64, data: &[u8]) -> Option<u64> {
    data.iter()
        .enumerate()
        .find(|(k, b)| **b != byte_at(seed, offset + *k as u64))
        .map(|(k, _)| offset + k as u64)
}
