//! The bottleneck's rate read from the initial window's acknowledgments
//! (packet-train dispersion, as in Keshav's packet pair and RMDT's probe-based
//! bandwidth estimation).
//!
//! The initial window leaves as one burst, before anything was acknowledged. The
//! slowest link on the path spaces its datagrams out at its own rate: bytes the
//! receiver acknowledged after its first acknowledgment, over the time between
//! them, is the bottleneck's rate. The times are the receiver's (each ack's header
//! timestamp less its ack delay: when the receiver took in the newest datagram it
//! acknowledges), not the ack's arrival: a poll-mode sender that backed off while
//! its first round trip passed finds all the acknowledgments in its ring at once.
//! A receiver that backed off takes in the first datagrams together, late, but
//! does work from then on and polls the rest as they come. A delivery-rate sample cannot see it (its interval spans a round trip,
//! and Startup needs a round trip per doubling: 13 of them to fill 1 Gbit/s × 200
//! ms from 10 datagrams).
//!
//! The estimate is withheld when it could be the sender's rather than the path's
//! (the burst took a sizeable part of the acknowledgments' spread to leave), when
//! too few acknowledgments arrived apart to measure a spread, and when the train
//! was small (an application that wrote little). A datagram of the train lost on
//! the way only lowers it (its share of the bottleneck's time counts as idle): the
//! estimate comes once every datagram of the train is acknowledged or lost.

use std::time::{Duration, Instant};

/// Fewest datagrams a train must have.
const MIN_PACKETS: u32 = 6;
/// Fewest acknowledgments at distinct instants after the first (intervals of the
/// spread).
const MIN_INTERVALS: u32 = 2;
/// The acknowledgments' spread must be at least this many times the time the
/// burst took to leave: the path, not the sender, spaced it out.
const MIN_SPREAD_RATIO: u32 = 4;

/// The state of the initial window's train.
#[derive(Debug, Clone, Default)]
pub(crate) enum InitialTrain {
    /// Sending it: datagrams sent before anything was acknowledged.
    #[default]
    Forming,
    /// Sent; acknowledgments coming in.
    Measuring(Train),
    /// Measured or abandoned: nothing more to do.
    Done,
}

/// A train being measured.
#[derive(Debug, Clone)]
pub(crate) struct Train {
    packets: u32,
    bytes: u64,
    first_sent: Instant,
    last_sent: Instant,
    acked: u64,
    lost: u64,
    /// When the receiver took in what the first acknowledgment covers (its clock,
    /// µs), and the bytes delivered by it.
    first_ack: Option<(u32, u64)>,
    /// The same for the latest acknowledgment after the first.
    last_ack: Option<(u32, u64)>,
    intervals: u32,
}

impl InitialTrain {
    /// A datagram carrying `bytes` of data was sent; `delivered` bytes were
    /// delivered so far. Returns whether it is part of the train.
    pub(crate) fn on_sent(&mut self, now: Instant, bytes: u64, delivered: u64) -> bool {
        if delivered > 0 {
            // Acknowledgments have begun: the train is complete.
            return false;
        }
        match self {
            Self::Forming => {
                *self = Self::Measuring(Train {
                    packets: 1,
                    bytes,
                    first_sent: now,
                    last_sent: now,
                    acked: 0,
                    lost: 0,
                    first_ack: None,
                    last_ack: None,
                    intervals: 0,
                });
            }
            Self::Measuring(t) if t.first_ack.is_none() => {
                t.packets += 1;
                t.bytes += bytes;
                t.last_sent = now;
            }
            _ => return false,
        }
        true
    }

    /// A datagram of the train (sent before anything was delivered) was
    /// acknowledged by an ack for what the receiver took in at `received_at` (its
    /// clock, µs, wrapping), bringing the bytes delivered to `delivered`. Returns
    /// the rate in bytes/s once every datagram of the train is acknowledged or
    /// lost and the measurement holds.
    pub(crate) fn on_acked(&mut self, received_at: u32, bytes: u64, delivered: u64) -> Option<u64> {
        let Self::Measuring(t) = self else {
            return None;
        };
        t.acked += bytes;
        match t.first_ack {
            Some((at, _)) if after(received_at, at) => {
                if t.last_ack.is_none_or(|(l, _)| after(received_at, l)) {
                    t.intervals += 1;
                }
                if t.last_ack.is_none_or(|(l, _)| !after(l, received_at)) {
                    t.last_ack = Some((received_at, delivered));
                }
            }
            // Taken in together with the first: before the spread begins.
            _ => t.first_ack = Some((received_at, delivered)),
        }
        self.settle()
    }

    /// A datagram of the train, of `bytes`, was declared lost. Returns the rate
    /// when that settles the train (see [`InitialTrain::on_acked`]).
    pub(crate) fn on_lost(&mut self, bytes: u64) -> Option<u64> {
        let Self::Measuring(t) = self else {
            return None;
        };
        t.lost += bytes;
        self.settle()
    }

    /// The rate, once every datagram of the train is acknowledged or lost.
    fn settle(&mut self) -> Option<u64> {
        let Self::Measuring(t) = self else {
            return None;
        };
        if t.acked + t.lost < t.bytes {
            return None;
        }
        let rate = t.rate();
        tracing::debug!(
            packets = t.packets,
            intervals = t.intervals,
            spread_us = t.spread().as_micros() as u64,
            sending_us = t
                .last_sent
                .saturating_duration_since(t.first_sent)
                .as_micros() as u64,
            rate,
            "initial train measured"
        );
        *self = Self::Done;
        rate
    }
}

impl Train {
    /// From the first acknowledgment's receipt to the last's.
    fn spread(&self) -> Duration {
        match (self.first_ack, self.last_ack) {
            (Some((t0, _)), Some((t1, _))) => Duration::from_micros(t1.wrapping_sub(t0) as u64),
            _ => Duration::ZERO,
        }
    }

    fn rate(&self) -> Option<u64> {
        let (_, d0) = self.first_ack?;
        let (_, d1) = self.last_ack?;
        let spread = self.spread();
        let sending = self.last_sent.saturating_duration_since(self.first_sent);
        let enough = self.packets >= MIN_PACKETS && self.intervals >= MIN_INTERVALS;
        if !enough || spread.is_zero() || spread < sending * MIN_SPREAD_RATIO {
            return None;
        }
        Some(per_second(d1 - d0, spread))
    }
}

/// Whether wrapping microsecond time `a` is after `b`.
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

fn per_second(bytes: u64, over: Duration) -> u64 {
    (bytes as u128 * 1_000_000_000 / over.as_nanos().max(1)).min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    /// A train of `n` datagrams of 1000 bytes sent `apart` from `t0` on.
    fn sent(t0: Instant, n: u32, apart: Duration) -> InitialTrain {
        let mut train = InitialTrain::default();
        for i in 0..n {
            train.on_sent(t0 + apart * i, 1000, 0);
        }
        train
    }

    /// Ten datagrams of 1000 bytes leave within 2 µs; a 1 Gbit/s bottleneck spaces
    /// them 8 µs apart and the receiver acknowledges every second one.
    fn ten_through_a_gigabit(t0: Instant) -> (InitialTrain, Option<u64>) {
        let mut train = sent(t0, 10, US / 5);
        let mut delivered = 0;
        let mut rate = None;
        for k in 0..5u32 {
            let now = 100_000 + 16 * k + 8;
            for _ in 0..2 {
                delivered += 1000;
                rate = train.on_acked(now, 1000, delivered);
            }
        }
        (train, rate)
    }

    #[test]
    fn the_acknowledgments_spread_is_the_bottlenecks_rate() {
        let (train, rate) = ten_through_a_gigabit(Instant::now());
        // 8000 bytes after the first acknowledgment, over 64 µs.
        assert_eq!(rate, Some(125_000_000));
        assert!(matches!(train, InitialTrain::Done));
    }

    #[test]
    fn a_train_sent_slowly_measures_nothing() {
        let t0 = Instant::now();
        // Paced 100 µs apart: the spread at the receiver is the sender's.
        let mut train = sent(t0, 10, US * 100);
        let mut out = None;
        for i in 0..10u32 {
            let now = 100_000 + 100 * i;
            out = out.or(train.on_acked(now, 1000, 1000 * (i as u64 + 1)));
        }
        assert_eq!(out, None);
        assert!(matches!(train, InitialTrain::Done));
    }

    #[test]
    fn a_lost_datagram_lowers_the_rate_and_the_train_settles_when_it_is_declared() {
        let t0 = Instant::now();
        let mut train = sent(t0, 10, US / 5);
        // The fourth datagram is lost behind the bottleneck; the others arrive 8
        // µs apart and are acknowledged one by one.
        let mut delivered = 0;
        for i in (0..10u32).filter(|&i| i != 3) {
            delivered += 1000;
            let now = 100_000 + 8 * i;
            assert_eq!(train.on_acked(now, 1000, delivered), None);
        }
        // 8000 bytes after the first acknowledgment, over 72 µs.
        assert_eq!(train.on_lost(1000), Some(111_111_111));
        assert!(matches!(train, InitialTrain::Done));
    }

    #[test]
    fn a_small_train_measures_nothing() {
        let t0 = Instant::now();
        let mut small = sent(t0, 3, Duration::ZERO);
        let mut out = None;
        for i in 0..3u32 {
            out = out.or(small.on_acked(10 * (i + 1), 1000, 1000 * (i as u64 + 1)));
        }
        assert_eq!(out, None);
    }

    #[test]
    fn acknowledgments_all_at_once_measure_nothing() {
        let t0 = Instant::now();
        let mut train = sent(t0, 10, Duration::ZERO);
        let mut out = None;
        for i in 0..10u64 {
            out = out.or(train.on_acked(30, 1000, 1000 * (i + 1)));
        }
        assert_eq!(out, None);
    }

    #[test]
    fn datagrams_sent_after_the_first_acknowledgment_are_not_in_the_train() {
        let t0 = Instant::now();
        let mut train = sent(t0, 10, Duration::ZERO);
        train.on_sent(t0 + US * 10, 1000, 2000);
        let InitialTrain::Measuring(t) = &train else {
            panic!("measuring");
        };
        assert_eq!((t.packets, t.bytes), (10, 10_000));
    }
}
