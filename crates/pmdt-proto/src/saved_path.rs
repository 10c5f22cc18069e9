//! What a finished connection learned about its path, to start the next one to
//! the same peer from: Careful Resume (RFC 9959, "Convergence of Congestion
//! Control from Retained State"), the way Linux's TCP metrics cache and QUIC's
//! resumption tokens carry a path's state from one connection to the next.
//!
//! A connection from cold doubles its rate each round trip from ten datagrams:
//! 13 round trips, 2.6 s, to fill 1 Gbit/s × 200 ms, most of a short transfer.
//! Given a [`SavedPath`] (the previous connection's bandwidth estimate and
//! propagation delay), a connection whose handshake RTT (else its first ack's,
//! RFC 9959's Reconnaissance: the handshake's can include the wait for the
//! peer's address) says the path is still the one it was saved on jumps at
//! once to half the saved bandwidth-delay product, paced over the current RTT
//! (RFC 9959's Unvalidated phase); the Init told the receiver the saved BDP, so
//! its credit covers that round and the next from the handshake on. BBR's
//! Startup then goes on from the rate that flight's acks came back at (RFC
//! 9959's Validating phase) and what the next rounds deliver, up to the saved
//! bandwidth and no further, and ends there (ProbeBW finds more if the path
//! has it): doubling past it would overshoot a full pipe by the doubling, the
//! very loss the saved path spares. Startup's exits on loss and on queueing
//! stand, so a path that became slower or busier shows as loss within the
//! jump's rounds and ends Startup at what the path delivered (RFC 9959's Safe
//! Retreat), not at the saved figure. The saved figures never enter the model
//! as samples.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::stats::ConnectionStats;

/// The handshake RTT below this fraction of the saved one means another path
/// (RFC 9959: a current RTT under half the saved one).
const SHORTER_RTT_LIMIT: f64 = 0.5;

/// The handshake RTT above this multiple of the saved one means another path
/// or a standing queue: no jump.
const LONGER_RTT_LIMIT: f64 = 10.0;

/// A path's state saved from one connection for the next to the same peer
/// (see the module docs). Build it from a finished connection's statistics
/// ([`SavedPath::from_stats`]) and pass it to the next connection with
/// [`crate::ConnectOptions::with_resume`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedPath {
    /// The bottleneck bandwidth the connection measured, bits/s.
    pub bandwidth_bps: u64,
    /// The round-trip propagation delay it measured.
    pub min_rtt: Duration,
}

/// What a connection did with the [`SavedPath`] it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum ResumeOutcome {
    /// The handshake confirmed the path: the first round went at `rate_bps`
    /// with a window of `window` bytes.
    Jumped {
        /// The jump's pacing rate, bits/s.
        rate_bps: u64,
        /// The jump's congestion window, bytes.
        window: u64,
    },
    /// The handshake's RTT and the first ack's were out of the saved one's
    /// range (under half, or over ten times): another path, started from cold.
    PathChanged {
        /// The saved propagation delay, µs.
        saved_rtt_us: u64,
        /// The first ack's RTT, µs.
        rtt_us: u64,
    },
    /// The controller has no model to resume (not BBR).
    NotSupported,
}

/// The first round of a resumed connection (RFC 9959's `jump_cwnd` and its
/// pacing rate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Jump {
    /// Pacing rate, bytes/s.
    pub(crate) rate: u64,
    /// Congestion window, bytes.
    pub(crate) window: u64,
    /// The saved bandwidth, bytes/s: Startup's ceiling, and where it ends.
    pub(crate) bandwidth: u64,
}

impl SavedPath {
    /// A saved path of `bandwidth_bps` bits/s and `min_rtt`.
    pub fn new(bandwidth_bps: u64, min_rtt: Duration) -> Self {
        Self {
            bandwidth_bps,
            min_rtt,
        }
    }

    /// What a finished connection's controller believed about its path, if it
    /// had a model (BBR) with a bandwidth and a propagation delay.
    pub fn from_stats(stats: &ConnectionStats) -> Option<Self> {
        (stats.cc_bandwidth_bps > 0 && stats.cc_min_rtt_us > 0).then(|| {
            Self::new(
                stats.cc_bandwidth_bps,
                Duration::from_micros(stats.cc_min_rtt_us),
            )
        })
    }

    /// This path's bandwidth split evenly over `flows` connections (each of
    /// several flows to one peer resumes from its share).
    pub fn share(&self, flows: usize) -> Self {
        Self::new(self.bandwidth_bps / flows.max(1) as u64, self.min_rtt)
    }

    /// The saved bandwidth-delay product, bytes.
    pub fn bdp(&self) -> u64 {
        (self.bandwidth_bps as f64 / 8.0 * self.min_rtt.as_secs_f64()) as u64
    }

    /// The jump for a connection whose handshake took `rtt`, or why there is
    /// none: half the saved BDP as the window, paced over `rtt` (a longer RTT,
    /// a queue on the path, gives a lower rate), at least `floor` bytes.
    pub(crate) fn jump(&self, rtt: Duration, floor: u64) -> Result<Jump, ResumeOutcome> {
        let saved = self.min_rtt.as_secs_f64();
        let now = rtt.as_secs_f64();
        if saved <= 0.0 || now < saved * SHORTER_RTT_LIMIT || now > saved * LONGER_RTT_LIMIT {
            return Err(ResumeOutcome::PathChanged {
                saved_rtt_us: self.min_rtt.as_micros() as u64,
                rtt_us: rtt.as_micros() as u64,
            });
        }
        let window = (self.bdp() / 2).max(floor);
        Ok(Jump {
            rate: (window as f64 / now.max(1e-6)) as u64,
            window,
            bandwidth: self.bandwidth_bps / 8,
        })
    }
}

impl ResumeOutcome {
    /// The outcome of a jump taken.
    pub(crate) fn jumped(j: Jump) -> Self {
        Self::Jumped {
            rate_bps: j.rate.saturating_mul(8),
            window: j.window,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_jump_is_half_the_saved_bdp_paced_over_the_current_rtt() {
        // 1 Gbit/s × 200 ms: a 25 MB BDP.
        let p = SavedPath::new(1_000_000_000, 200 * MS);
        assert_eq!(p.bdp(), 25_000_000);
        let j = p.jump(200 * MS, 14_400).unwrap();
        assert_eq!(j.window, 12_500_000);
        assert_eq!(j.rate, 62_500_000, "half of 125 MB/s");
        assert_eq!(j.bandwidth, 125_000_000);
        // A queue on the path now (RTT 400 ms): the same window, half the rate.
        let j = p.jump(400 * MS, 14_400).unwrap();
        assert_eq!((j.window, j.rate), (12_500_000, 31_250_000));
        // A tiny saved path: no less than the initial window.
        let j = SavedPath::new(8_000, 10 * MS)
            .jump(10 * MS, 14_400)
            .unwrap();
        assert_eq!(j.window, 14_400);
    }

    #[test]
    fn an_rtt_out_of_the_saved_ones_range_is_another_path() {
        let p = SavedPath::new(1_000_000_000, 100 * MS);
        for rtt in [49 * MS, 1001 * MS] {
            assert_eq!(
                p.jump(rtt, 14_400),
                Err(ResumeOutcome::PathChanged {
                    saved_rtt_us: 100_000,
                    rtt_us: rtt.as_micros() as u64
                })
            );
        }
        assert!(p.jump(50 * MS, 14_400).is_ok());
        assert!(p.jump(1000 * MS, 14_400).is_ok());
        assert!(SavedPath::new(1, Duration::ZERO).jump(MS, 1).is_err());
    }

    /// The credit the server's connection gives a client connecting with
    /// `options`, once the handshake is done.
    fn server_credit(options: &crate::ConnectOptions) -> u64 {
        use crate::pair::Pair;
        use crate::TransportConfig;
        let mut p = Pair::new(TransportConfig::default(), TransportConfig::default());
        let (now, to) = (p.now, p.server_addr);
        p.client.connect_with(now, to, options).unwrap();
        p.drive_for(20 * MS);
        let h = p.server.accept().expect("accepted");
        p.server.connection(h).unwrap().stats().recv_window
    }

    #[test]
    fn the_receiver_credits_the_announced_path_from_the_handshake() {
        let cold = server_credit(&crate::ConnectOptions::default());
        // The configured receive buffer, in whole datagrams.
        assert!(cold <= 8 << 20 && cold > (8 << 20) - 1500, "{cold}");
        // 1 Gbit/s × 200 ms: two BDPs of credit at once, not after round trips
        // of autotuning (the jump alone is half a BDP).
        let saved = SavedPath::new(1_000_000_000, 200 * MS);
        let resumed = server_credit(&crate::ConnectOptions::default().with_resume(saved));
        assert!(
            resumed >= 2 * saved.bdp() - 1500 && resumed <= 2 * saved.bdp(),
            "{resumed}"
        );
        // Whatever a peer claims, the credit stays within the memory limit.
        let huge = SavedPath::new(u64::MAX, Duration::from_secs(3600));
        let capped = server_credit(&crate::ConnectOptions::default().with_resume(huge));
        assert!(
            capped <= crate::DEFAULT_MAX_WINDOW_BYTES
                && capped > crate::DEFAULT_MAX_WINDOW_BYTES / 2,
            "{capped}"
        );
    }

    #[test]
    fn an_owners_budget_for_announced_paths_is_shared_by_their_handshakes() {
        use crate::pair::Pair;
        use crate::TransportConfig;
        // A runtime's budgets: 64 KiB for a handshake from cold, 30 MB of free
        // memory for handshakes that announce a saved path.
        let mut p = Pair::new(TransportConfig::default(), TransportConfig::default());
        p.server.set_initial_recv_budget(Some(64 << 10));
        p.server.set_announced_recv_budget(Some(30_000_000));
        let (now, to) = (p.now, p.server_addr);
        let saved = SavedPath::new(1_000_000_000, 200 * MS); // 25 MB BDP
        let resume = crate::ConnectOptions::default().with_resume(saved);
        p.client.connect(now, to);
        p.client.connect_with(now, to, &resume).unwrap();
        p.client.connect_with(now, to, &resume).unwrap();
        p.drive_for(20 * MS);
        let handles: Vec<_> = std::iter::from_fn(|| p.server.accept()).collect();
        let mut credits: Vec<u64> = handles
            .into_iter()
            .map(|h| p.server.connection(h).unwrap().stats().recv_window)
            .collect();
        credits.sort_unstable();
        // The cold one: its budget. The announced ones: the first all of the
        // 30 MB (it asked for 50), the second what is left, no less than the
        // cold one's.
        assert_eq!(credits.len(), 3);
        let cold = 64 << 10;
        assert!(
            credits[0] <= cold && credits[0] > cold - 1500,
            "{credits:?}"
        );
        assert_eq!(credits[0], credits[1], "{credits:?}");
        assert!(
            credits[2] <= 30_000_000 && credits[2] > 29_990_000,
            "{credits:?}"
        );
    }

    #[test]
    fn only_a_model_with_both_figures_is_saved_and_flows_share_it() {
        let mut s = ConnectionStats::default();
        assert_eq!(SavedPath::from_stats(&s), None);
        s.cc_bandwidth_bps = 800_000_000;
        assert_eq!(SavedPath::from_stats(&s), None);
        s.cc_min_rtt_us = 40_000;
        let p = SavedPath::from_stats(&s).unwrap();
        assert_eq!(p, SavedPath::new(800_000_000, 40 * MS));
        assert_eq!(p.share(4), SavedPath::new(200_000_000, 40 * MS));
        assert_eq!(p.share(0), p);
    }
}
