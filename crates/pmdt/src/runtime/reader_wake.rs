//! When the I/O loop wakes a parked reader after handing it data. Waking costs a
//! system call on the loop's core and a context switch on the reader's, so while
//! a bulk transfer keeps arriving the loop lets data pile up a little before it
//! wakes the reader, instead of once per receive burst. It never delays the end
//! of a message: a segment shorter than a full payload (a write's last packet, a
//! small message) wakes the reader at once, and so do end of stream, close and a
//! reader the loop stopped delivering to. A deferred wake-up happens after
//! [`MAX_DEFER`] at the latest.

use std::time::Duration;

/// The longest a reader sleeps while data waits for it in its ring.
pub(crate) const MAX_DEFER: Duration = Duration::from_micros(100);

/// Unread bytes in a reader's ring that wake it at once (at most half its
/// read-ahead, so the loop never stops delivering for want of a read).
pub(crate) const WAKE_BYTES: u64 = 64 * 1024;

/// Whether handing over data ending with a segment of `last_len` bytes wakes the
/// reader now: the segment is shorter than a full payload of `full_len` bytes
/// (more is not known to follow), or `unread` bytes of its ring reached the
/// threshold (at most half of `read_ahead`, how far delivery may run ahead of
/// reads).
pub(crate) fn wake_now(last_len: usize, full_len: usize, unread: u64, read_ahead: u64) -> bool {
    last_len < full_len || unread >= WAKE_BYTES.min(read_ahead / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_segment_wakes_at_once() {
        assert!(wake_now(100, 1448, 100, 1 << 20));
    }

    #[test]
    fn full_segments_wait_for_the_threshold() {
        assert!(!wake_now(1448, 1448, 1448, 1 << 20));
        assert!(!wake_now(1448, 1448, WAKE_BYTES - 1, 1 << 20));
        assert!(wake_now(1448, 1448, WAKE_BYTES, 1 << 20));
    }

    #[test]
    fn a_small_read_ahead_lowers_the_threshold() {
        assert!(wake_now(1448, 1448, 8 * 1024, 16 * 1024));
        assert!(!wake_now(1448, 1448, 8 * 1024 - 1, 16 * 1024));
    }
}
