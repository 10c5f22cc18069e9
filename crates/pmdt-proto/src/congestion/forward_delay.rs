//! The part of an RTT sample's rise the path made: what the forward one-way
//! delay also shows.
//!
//! An RTT sample runs from the send to the sender reading the ack. Besides the
//! bottleneck's queue it holds the receiver's acknowledgment delay, the return
//! path, and the time the ack waited in the sender's ring while the sender was
//! off its core: a poller sharing its core with another busy process (on the
//! reference VM the sender shares one with `pmdt-wanem`) loses it for
//! scheduler slices of milliseconds, and the acks that came meanwhile are read
//! together on its return, each up to the whole absence "late". Taken for
//! queue, one such sample ends a ProbeBW Up: in the simulator, a sender on its
//! core 14 ms of every 20 followed a bottleneck back from 200 Mbit/s to
//! 1 Gbit/s at 40 ms in 1.0-5.5 s over seeds 1-6, where a sender with a core
//! of its own takes 0.4-0.5 s (session 70).
//!
//! Every header carries its sender's timestamp, and an ack's timestamp less
//! its ack delay is when the receiver took in the newest packet it
//! acknowledges, by the receiver's clock. That time less the packet's own send
//! timestamp is the forward one-way delay plus the two clocks' offset, fixed
//! (two hosts' clocks also drift apart, some tens of microseconds a second at
//! most, which the window below keeps to a fraction of a millisecond). Its
//! rise over its floor is the forward path's queue (and the receiver's own
//! scheduling, which delays the ack as much), and none of the rest. A sample's
//! RTT as the path made it is the RTT's floor plus the smaller of the two
//! rises: a queue at the bottleneck shows in both, the sender's lateness only
//! in the RTT. The result lies between the floor and the sample, so a peer's
//! timestamps can only take rise out of a sample, never add any.
//!
//! The floors are minimums over the last [`HALF_WINDOW`] to twice that (two
//! windows, the older dropped when the newer is that old), over the same
//! samples: a path whose delay changed for good moves both.

use std::time::{Duration, Instant};

/// Each of the two windows the floors are kept over lasts this long: the
/// floors are minimums over the last 5-10 s (BBR's min RTT filter is 10 s).
pub(crate) const HALF_WINDOW: Duration = Duration::from_secs(5);

/// The floors of the RTT and of the one-way delay over the last windows.
#[derive(Debug, Clone, Default)]
pub(crate) struct ForwardDelay {
    /// The first sample's one-way delay by the two clocks: the others are read
    /// relative to it (the clocks' offset is arbitrary; the µs stamps wrap).
    reference: Option<u32>,
    current: Option<Floor>,
    previous: Option<Floor>,
}

/// The smallest RTT and one-way delay of one window.
#[derive(Debug, Clone, Copy)]
struct Floor {
    since: Instant,
    rtt: Duration,
    /// Relative to `ForwardDelay::reference`, µs.
    one_way_us: i64,
}

impl Floor {
    fn lower(self, other: Floor) -> Floor {
        Floor {
            since: self.since,
            rtt: self.rtt.min(other.rtt),
            one_way_us: self.one_way_us.min(other.one_way_us),
        }
    }
}

impl ForwardDelay {
    /// A packet's RTT sample `rtt`, taken at `now`, and its one-way delay by the
    /// two clocks `one_way` (the receiver's receipt less the packet's send
    /// timestamp, µs, wrapping). Returns the RTT as the path made it: the
    /// floor plus the smaller of the RTT's and the one-way delay's rises over
    /// theirs.
    pub(crate) fn path_rtt(&mut self, now: Instant, rtt: Duration, one_way: u32) -> Duration {
        let reference = *self.reference.get_or_insert(one_way);
        let sample = Floor {
            since: now,
            rtt,
            one_way_us: i64::from(one_way.wrapping_sub(reference) as i32),
        };
        self.current = Some(match self.current {
            Some(c) if now.saturating_duration_since(c.since) < HALF_WINDOW => c.lower(sample),
            Some(c) => {
                self.previous = Some(c);
                sample
            }
            None => sample,
        });
        let floor = match (self.current, self.previous) {
            (Some(c), Some(p)) => c.lower(p),
            (Some(c), None) => c,
            _ => sample,
        };
        let rtt_rise = rtt.saturating_sub(floor.rtt);
        let one_way_rise =
            Duration::from_micros((sample.one_way_us - floor.one_way_us).max(0) as u64);
        floor.rtt + rtt_rise.min(one_way_rise)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// One-way delays by two clocks 3,000 s apart (wrapping): a path of 50 ms
    /// each way, plus `queue_ms`.
    fn one_way(queue_ms: u32) -> u32 {
        3_000_000_000u32.wrapping_add(50_000 + queue_ms * 1000)
    }

    #[test]
    fn a_sample_read_late_by_the_sender_shows_no_queue() {
        let t0 = Instant::now();
        let mut f = ForwardDelay::default();
        assert_eq!(f.path_rtt(t0, 100 * MS, one_way(0)), 100 * MS);
        // Read 4 ms late: the forward path shows nothing.
        assert_eq!(f.path_rtt(t0 + MS, 104 * MS, one_way(0)), 100 * MS);
    }

    #[test]
    fn the_bottlenecks_queue_shows_in_both() {
        let t0 = Instant::now();
        let mut f = ForwardDelay::default();
        f.path_rtt(t0, 100 * MS, one_way(0));
        assert_eq!(f.path_rtt(t0 + MS, 108 * MS, one_way(8)), 108 * MS);
        // Queued 8 ms and read 3 ms late: the queue stays, the lateness goes.
        assert_eq!(f.path_rtt(t0 + 2 * MS, 111 * MS, one_way(8)), 108 * MS);
    }

    #[test]
    fn timestamps_can_take_rise_out_of_a_sample_never_add_any() {
        let t0 = Instant::now();
        let mut f = ForwardDelay::default();
        f.path_rtt(t0, 100 * MS, one_way(0));
        // A one-way delay far above its floor: the RTT's own rise bounds it.
        assert_eq!(f.path_rtt(t0 + MS, 102 * MS, one_way(900)), 102 * MS);
        // Far below (a peer's clock jumped back): the floor, no lower.
        assert_eq!(
            f.path_rtt(t0 + 2 * MS, 103 * MS, one_way(0).wrapping_sub(90_000)),
            100 * MS
        );
    }

    #[test]
    fn a_path_whose_delay_rose_for_good_is_read_anew_within_two_windows() {
        let t0 = Instant::now();
        let mut f = ForwardDelay::default();
        f.path_rtt(t0, 100 * MS, one_way(0));
        // The forward path's delay rose by 20 ms for good: a rise in both,
        // until the windows holding the old floor pass.
        let mut t = t0;
        let mut path = Duration::ZERO;
        for _ in 0..30 {
            t += Duration::from_millis(500);
            path = f.path_rtt(t, 120 * MS, one_way(20));
        }
        assert_eq!(path, 120 * MS);
        // From then on a late read shows as late against the new floor.
        assert_eq!(f.path_rtt(t + MS, 125 * MS, one_way(20)), 120 * MS);
        assert_eq!(f.path_rtt(t + 2 * MS, 126 * MS, one_way(23)), 123 * MS);
    }
}
