//! The flight a resumed connection sends in its first round trip (RFC 9959's
//! jump, see `crate::saved_path`), followed until its acks are back (the
//! Validating phase): the rate they came back at measures what the path
//! carries now.
//!
//! BBR's delivery-rate samples read about half of it for that flight: it left
//! before any ack could clock it, so each sample's interval spans the round
//! trip the flight waited for its first ack as well as the flight's own length
//! (BBR's first round from cold reads its ten datagrams the same way). Startup
//! would then pace the round after the jump at the jump's rate again, a round
//! trip lost on the way to the saved rate.

use std::time::{Duration, Instant};

/// The jump's flight (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JumpFlight {
    /// Sent at `rate` bytes/s over `length`; no ack of it yet.
    Unacked {
        /// The jump's pacing rate, bytes/s.
        rate: u64,
        /// How long the flight took to send (the RTT it was paced over).
        length: Duration,
    },
    /// Its acks have been arriving since `since`, when `delivered` bytes were.
    Acking {
        /// The jump's pacing rate, bytes/s.
        rate: u64,
        /// How long the flight took to send.
        length: Duration,
        /// The first ack's arrival.
        since: Instant,
        /// Bytes delivered by that ack.
        delivered: u64,
    },
    /// Every packet of the flight was acknowledged or lost.
    Back,
}

/// The share of the flight's length its acks are measured over at least
/// before their rate counts: a few acks that arrive together read faster than
/// the path (the rate is capped at the jump's own either way).
const MIN_MEASURED_SHARE: u32 = 4;

impl JumpFlight {
    /// A flight of `window` bytes paced at `rate` bytes/s.
    pub(crate) fn new(rate: u64, window: u64) -> Self {
        Self::Unacked {
            rate,
            length: Duration::from_secs_f64(window as f64 / rate.max(1) as f64),
        }
    }

    /// Whether the flight is back.
    pub(crate) fn is_back(&self) -> bool {
        *self == Self::Back
    }

    /// An ack at `now` brought the bytes delivered to `total_delivered`; it
    /// starts a round (`round_start`) when it acknowledges a packet sent after
    /// the previous round's first ack, so the round the flight's first ack
    /// started ends when the flight is back (all of it was sent before that
    /// ack). Returns the rate the flight's acks arrive at so far, once they
    /// span a quarter of its length, never more than it was sent at (acks
    /// that arrive in bursts read faster than the path).
    pub(crate) fn on_ack(
        &mut self,
        now: Instant,
        total_delivered: u64,
        round_start: bool,
    ) -> Option<u64> {
        match *self {
            Self::Back => None,
            Self::Unacked { rate, length } => {
                *self = Self::Acking {
                    rate,
                    length,
                    since: now,
                    delivered: total_delivered,
                };
                None
            }
            Self::Acking {
                rate,
                length,
                since,
                delivered,
            } => {
                if round_start {
                    *self = Self::Back;
                }
                let elapsed = now.saturating_duration_since(since);
                if elapsed.is_zero() || elapsed < length / MIN_MEASURED_SHARE {
                    return None;
                }
                let acked = total_delivered.saturating_sub(delivered) as f64;
                Some(((acked / elapsed.as_secs_f64()) as u64).min(rate))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_flights_ack_rate_counts_from_its_first_ack_until_the_round_ends() {
        let t0 = Instant::now();
        // 10 MB at 50 MB/s: a 200 ms flight.
        let mut f = JumpFlight::new(50_000_000, 10_000_000);
        // The first ack (it starts a round); the flight comes back at 40 MB/s.
        assert_eq!(f.on_ack(t0, 1_000, true), None);
        assert_eq!(f.on_ack(t0 + 40 * MS, 1_601_000, false), None, "too soon");
        assert_eq!(f.on_ack(t0 + 100 * MS, 4_001_000, false), Some(40_000_000));
        assert!(!f.is_back());
        assert_eq!(f.on_ack(t0 + 200 * MS, 8_001_000, true), Some(40_000_000));
        assert!(f.is_back());
        assert_eq!(f.on_ack(t0 + 300 * MS, 12_001_000, true), None);
    }

    #[test]
    fn acks_faster_than_the_flight_read_as_its_rate() {
        let t0 = Instant::now();
        let mut f = JumpFlight::new(10_000_000, 1_000_000);
        f.on_ack(t0, 1_000, true);
        assert_eq!(f.on_ack(t0 + 50 * MS, 5_001_000, false), Some(10_000_000));
        // A round that ends before a quarter of the flight's length measured
        // nothing.
        let mut g = JumpFlight::new(10_000_000, 1_000_000);
        g.on_ack(t0, 1_000, true);
        assert_eq!(g.on_ack(t0 + MS, 2_000, true), None);
        assert!(g.is_back());
    }
}
