//! Packet numbers on the wire: whole in a long header (the handshake), their low 40
//! bits in a short header (everything after it), as QUIC truncates them (RFC 9000
//! §17.1). The receiver recovers the whole number from the largest it has seen.
//! Forty bits rather than QUIC's 32 at most: they make a data packet's header 30
//! bytes, even, and a software checksum over a chain of segments (DPDK's TAP PMD
//! in 22.11) sums an odd-length header segment wrongly.

use super::MAX_PN;

/// A packet number as a header carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketNumber {
    /// The whole number: what a sender encodes, and what a long header carries.
    Full(u64),
    /// Its low 40 bits (the higher ones are ignored), as a short header carries
    /// it; [`PacketNumber::expand`] recovers the whole number.
    Truncated(u64),
}

impl Default for PacketNumber {
    fn default() -> Self {
        Self::Full(0)
    }
}

impl From<u64> for PacketNumber {
    fn from(pn: u64) -> Self {
        Self::Full(pn)
    }
}

/// Numbers a short header tells apart: 2^40, centred on the next expected one.
pub(crate) const WINDOW: u64 = 1 << 40;
const HALF_WINDOW: u64 = WINDOW / 2;

/// How far from the next expected number a truncated one can be recovered: the
/// receiver takes the nearest whole number with those low bits (RFC 9000 §A.3), so
/// a sender must never have more than this many numbers unacknowledged, and a
/// receiver's window check must stay under it.
pub const MAX_PN_DISTANCE: u64 = HALF_WINDOW - 1;

impl PacketNumber {
    /// The low 40 bits a short header carries.
    pub fn low_bits(self) -> u64 {
        match self {
            Self::Full(pn) | Self::Truncated(pn) => pn & (WINDOW - 1),
        }
    }

    /// The whole number, given the largest one received so far on the connection
    /// (`None`: none yet, when a truncated number is taken as it is, so a sender's
    /// first packet numbers lie below 2^40). A truncated number becomes the whole
    /// number with those low bits nearest to `largest + 1` (RFC 9000 §A.3); the
    /// result may still lie far from `largest`, and the caller's window check judges it.
    pub fn expand(self, largest: Option<u64>) -> u64 {
        let t = match self {
            Self::Full(pn) => return pn,
            Self::Truncated(_) => self.low_bits(),
        };
        let expected = largest.map_or(0, |l| l.min(MAX_PN) + 1);
        let candidate = (expected & !(WINDOW - 1)) | t;
        if candidate + HALF_WINDOW <= expected && candidate < MAX_PN - WINDOW {
            candidate + WINDOW
        } else if candidate > expected + HALF_WINDOW && candidate >= WINDOW {
            candidate - WINDOW
        } else {
            candidate
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_9000_example_recovers_the_number() {
        // RFC 9000 §A.3's example, with 40 bits instead of 16: largest
        // 0xa82f_30ea, received low bits 0x9b32 in 16 bits → 0xa82f_9b32.
        let largest = 0x0000_a82f_30ea_u64 << 24;
        let want = 0x0000_a82f_9b32_u64 << 24;
        assert_eq!(
            PacketNumber::Truncated(want & (WINDOW - 1)).expand(Some(largest)),
            want
        );
    }

    #[test]
    fn numbers_near_the_expected_one_are_recovered_across_the_wrap() {
        for largest in [0u64, 5, WINDOW - 3, WINDOW + 7, 7 << 44, 1 << 41] {
            for pn in largest.saturating_sub(1 << 20)..=largest + (1 << 20) {
                if pn % 9973 != 0 && pn.abs_diff(largest) > 3 {
                    continue;
                }
                let got = PacketNumber::Truncated(pn).expand(Some(largest));
                assert_eq!(got, pn, "largest {largest} pn {pn}");
            }
        }
    }

    #[test]
    fn the_first_number_is_taken_as_it_is() {
        for t in [0u64, 1, WINDOW / 2, WINDOW - 1] {
            assert_eq!(PacketNumber::Truncated(t).expand(None), t);
        }
    }

    #[test]
    fn the_farthest_recoverable_numbers_are() {
        let largest = 10u64 << 40;
        let expected = largest + 1;
        for pn in [expected - MAX_PN_DISTANCE, expected + MAX_PN_DISTANCE] {
            assert_eq!(PacketNumber::Truncated(pn).expand(Some(largest)), pn);
        }
    }

    #[test]
    fn only_the_low_40_bits_count() {
        let pn = (3 << 40) | 12345;
        assert_eq!(PacketNumber::Full(pn).low_bits(), 12345);
        assert_eq!(
            PacketNumber::Truncated(pn).expand(Some(12000)),
            PacketNumber::Truncated(12345).expand(Some(12000))
        );
    }

    #[test]
    fn a_whole_number_stays_as_it_is() {
        assert_eq!(PacketNumber::Full(1 << 40).expand(Some(3)), 1 << 40);
    }

    #[test]
    fn expansion_never_overflows() {
        for largest in [MAX_PN - 1, MAX_PN - WINDOW, MAX_PN, u64::MAX] {
            for t in [0, 1, WINDOW / 2, WINDOW - 1, u64::MAX] {
                let _ = PacketNumber::Truncated(t).expand(Some(largest));
            }
        }
    }
}
