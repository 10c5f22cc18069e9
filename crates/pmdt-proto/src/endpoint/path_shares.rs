//! Which of an endpoint's model-based flows to one host delivered less than
//! the average of the flows to that host, or more than
//! [`AHEAD_OF_AVERAGE`] times it (a loss-based flow among them counts in
//! the average): beside a loss-based flow, a model-based flow behind makes
//! up its absences from the core in full (up to its bound), as the
//! loss-based flow's window does; one level or ahead, and the loss-based
//! flow itself, leave out the queue that carried the link through them
//! (`Connection::queue_kept_through_an_absence`). A flow ahead also gives
//! way to the loss-based flow: while a queue stands it does not probe or
//! regrow, and it cuts to the queue's overflows as the loss-based flow
//! does (`congestion::bbr::ahead_on_path`, session 108).
//!
//! The flows of one sender stop together when it loses its core and come
//! back together. The queue that stood at the bottleneck carried the link
//! through the absence, but whoever refills it afterwards holds it: a
//! loss-based flow's window refills its part at once, and a paced flow that
//! leaves its catch-up out gives up its part, absence after absence. In the
//! simulator (`sim_core_share`, CUBIC joining BBR from a sender on its core
//! 14 ms of every 20), BBR kept 19.5 % of the link that way and CUBIC took
//! 73.0 %; with the flow behind making up, 44.0 and 42.6 %.
//!
//! The loss-based flow is not told it is behind (session 107): the rule's
//! reason is a paced flow's estimate, and a loss-based flow's window refills
//! its part at once whatever its pacer makes up. Through `pmdt-wanem`
//! (CUBIC joining BBR), where CUBIC was the flow behind from its first
//! millisecond, whether its catch-ups were whole made no difference the
//! tools could tell: over two sessions BBR took 67.7 % of the link on
//! average in 26 runs with them whole and 66.1 % in 26 without
//! (permutation p = 0.40), three runs over 3/4 in each; in the simulator
//! the two differ by less than two points (docs/RESULTS.md, sessions 106
//! and 107).
//!
//! The check runs from [`crate::Endpoint::handle_timeout`], at the first
//! call at least [`CHECK_EVERY`] after the last: a sending endpoint's timers
//! fire far more often, and an idle one has nothing to compare.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::connection::{ShareOnPath, AHEAD_OF_AVERAGE};

/// How often the shares are compared, at most: 2.5 round trips at 40 ms, one
/// at 100 ms (BBR's phases last a round trip each), short beside the
/// seconds its estimate takes to decay.
pub(crate) const CHECK_EVERY: Duration = Duration::from_millis(100);

/// The per-host sums of one check, and when the next is due.
#[derive(Debug, Default)]
pub(crate) struct PathShares {
    next_check: Option<Instant>,
    /// Per host: what the flows counted (every flow beside a loss-based
    /// flow, the loss-based ones included) delivered since the last check.
    hosts: HashMap<IpAddr, HostSum>,
}

/// What the flows to one host delivered since the last check.
#[derive(Debug, Default, Clone, Copy)]
struct HostSum {
    /// Bytes, every flow counted.
    bytes: u64,
    /// Flows counted.
    flows: u64,
    /// Bytes of the loss-based flows among them.
    loss_based: u64,
}

/// A flow is told it is ahead only while the loss-based flows to its host
/// delivered at least this share of the host's bytes: beside an idle or
/// app-limited loss-based connection (one that mostly receives, say), a
/// bulk flow is always well over the average, and giving way there would
/// hold its probes back for a flow that is not competing. In session 108's
/// runs of CUBIC joining BBR through `pmdt-wanem`, CUBIC kept at least
/// 12.2 % of the link from 15 s, squeezed or not.
const LOSS_BASED_LEAST_SHARE: f64 = 0.05;

impl PathShares {
    /// Whether a check is due at `now`; if so, the next is due [`CHECK_EVERY`]
    /// later and the last check's sums are forgotten.
    pub(crate) fn begin(&mut self, now: Instant) -> bool {
        if self.next_check.is_some_and(|t| now < t) {
            return false;
        }
        self.next_check = Some(now + CHECK_EVERY);
        self.hosts.clear();
        true
    }

    /// A flow to `host` delivered `bytes` since the last check; `loss_based`
    /// if its controller is.
    pub(crate) fn add(&mut self, host: IpAddr, bytes: u64, loss_based: bool) {
        let sum = self.hosts.entry(host).or_default();
        sum.bytes += bytes;
        sum.flows += 1;
        if loss_based {
            sum.loss_based += bytes;
        }
    }

    /// How a flow to `host` that delivered `bytes` since the last check
    /// compares with the flows [`Self::add`] counted there: ahead only while
    /// the loss-based ones delivered [`LOSS_BASED_LEAST_SHARE`] of the host's
    /// bytes.
    pub(crate) fn share(&self, host: IpAddr, bytes: u64) -> ShareOnPath {
        let Some(sum) = self.hosts.get(&host) else {
            return ShareOnPath::Even;
        };
        let total = sum.bytes as f64;
        if (bytes as u128 * sum.flows as u128) < sum.bytes as u128 {
            ShareOnPath::Behind
        } else if bytes as f64 * sum.flows as f64 > total * AHEAD_OF_AVERAGE
            && sum.loss_based as f64 >= total * LOSS_BASED_LEAST_SHARE
        {
            ShareOnPath::Ahead
        } else {
            ShareOnPath::Even
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_under_its_hosts_average_is_behind_and_one_well_over_it_ahead() {
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let t0 = Instant::now();
        let mut s = PathShares::default();
        assert!(s.begin(t0));
        // Host a: 3, 2.3 and 0.7 MB (2 MB on average; the last one
        // loss-based); host b: one flow of 1 byte.
        s.add(a, 3_000_000, false);
        s.add(a, 2_300_000, false);
        s.add(a, 700_000, true);
        s.add(b, 1, false);
        assert_eq!(s.share(a, 700_000), ShareOnPath::Behind);
        assert_eq!(s.share(a, 2_300_000), ShareOnPath::Even, "within 1.2 times");
        assert_eq!(s.share(a, 3_000_000), ShareOnPath::Ahead);
        // Alone at its host, a flow is its own average.
        assert_eq!(s.share(b, 1), ShareOnPath::Even);
        // Two flows level: neither is behind.
        assert!(s.begin(t0 + CHECK_EVERY));
        s.add(a, 5, false);
        s.add(a, 5, true);
        assert_eq!(s.share(a, 5), ShareOnPath::Even);
        // Beside a loss-based flow that delivered under 5 % of the host's
        // bytes (idle, or mostly receiving), nobody is ahead.
        assert!(s.begin(t0 + 2 * CHECK_EVERY));
        s.add(a, 2_000_000, false);
        s.add(a, 99_999, true);
        assert_eq!(s.share(a, 2_000_000), ShareOnPath::Even);
        assert_eq!(s.share(a, 99_999), ShareOnPath::Behind);
    }

    #[test]
    fn checks_come_every_interval_and_start_afresh() {
        let t0 = Instant::now();
        let host: IpAddr = "10.0.0.1".parse().unwrap();
        let mut s = PathShares::default();
        assert!(s.begin(t0), "the first call checks");
        s.add(host, 10, false);
        s.add(host, 0, true);
        assert!(!s.begin(t0 + CHECK_EVERY / 2), "not before the interval");
        assert_eq!(s.share(host, 0), ShareOnPath::Behind, "sums kept meanwhile");
        assert!(s.begin(t0 + CHECK_EVERY));
        assert_eq!(
            s.share(host, 0),
            ShareOnPath::Even,
            "the last check's sums are forgotten"
        );
    }
}
