//! One direction of a simulated path: impairments and a rate-limited drop-tail queue.

use std::time::{Duration, Instant};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use pmdt_proto::RttHistogram;

/// Gilbert–Elliott burst loss: a two-state Markov chain (good/bad) evaluated per packet.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GilbertElliott {
    /// P(good → bad) per packet.
    pub p_good_to_bad: f64,
    /// P(bad → good) per packet.
    pub p_bad_to_good: f64,
    /// Loss probability in the bad state (in the good state, `LinkConfig::loss` applies).
    pub loss_in_bad: f64,
}

/// Impairments of one direction of a path. The default is a perfect 1 ms link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LinkConfig {
    /// One-way propagation delay.
    pub delay: Duration,
    /// Extra delay drawn uniformly from `[0, jitter]` per packet (may reorder).
    pub jitter: Duration,
    /// Independent random loss probability.
    pub loss: f64,
    /// Burst loss model (replaces `loss` while in the bad state).
    pub burst: Option<GilbertElliott>,
    /// Probability a packet is held back by `reorder_delay` (reordering).
    pub reorder: f64,
    /// Extra delay of a reordered packet.
    pub reorder_delay: Duration,
    /// Probability a packet is delivered twice.
    pub duplicate: f64,
    /// Probability one random byte of a packet is flipped.
    pub corrupt: f64,
    /// Deliver corrupted packets anyway (as if the UDP checksum missed it). Off:
    /// corrupted datagrams are dropped by the receiver's UDP checksum, as on a real host.
    pub corrupt_bypasses_checksum: bool,
    /// Bottleneck rate in bits per second (None: unlimited).
    pub rate_bps: Option<u64>,
    /// Drop-tail queue in front of the bottleneck, bytes.
    pub queue_bytes: u64,
    /// Largest datagram the path carries; larger ones are dropped.
    pub mtu: usize,
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self {
            delay: Duration::from_millis(1),
            jitter: Duration::ZERO,
            loss: 0.0,
            burst: None,
            reorder: 0.0,
            reorder_delay: Duration::from_millis(2),
            duplicate: 0.0,
            corrupt: 0.0,
            corrupt_bypasses_checksum: false,
            rate_bps: None,
            queue_bytes: 1 << 20,
            mtu: 1500,
        }
    }
}

/// What happened to datagrams on a link.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkStats {
    /// Datagrams offered to the link.
    pub offered: u64,
    /// Datagrams delivered (duplicates included).
    pub delivered: u64,
    /// Lost to random or burst loss.
    pub lost: u64,
    /// Dropped by the full queue.
    pub queue_drops: u64,
    /// Dropped for exceeding the MTU.
    pub mtu_drops: u64,
    /// Reordered (held back).
    pub reordered: u64,
    /// Duplicated.
    pub duplicated: u64,
    /// Corrupted.
    pub corrupted: u64,
    /// Corrupted and dropped by the receiver's UDP checksum.
    pub checksum_drops: u64,
    /// Time each datagram that entered the bottleneck queue waited there, µs
    /// (rate-limited links only).
    pub queue_delay_us: RttHistogram,
    /// Largest bottleneck queue seen, bytes.
    pub max_queue_bytes: u64,
}

/// A delivery decided by the link: when, and the (possibly corrupted) bytes.
pub(crate) struct Delivery {
    pub at: Instant,
    pub data: Vec<u8>,
}

/// Link state: queue occupancy and the burst-loss chain.
pub(crate) struct Link {
    pub cfg: LinkConfig,
    pub stats: LinkStats,
    free_at: Option<Instant>,
    bad: bool,
}

impl Link {
    pub fn new(cfg: LinkConfig) -> Self {
        Self {
            cfg,
            stats: LinkStats::default(),
            free_at: None,
            bad: false,
        }
    }

    /// Changes the bottleneck rate from now on (datagrams already queued keep their
    /// departure times).
    pub fn set_rate(&mut self, rate_bps: Option<u64>) {
        self.cfg.rate_bps = rate_bps;
    }

    /// Decides the fate of one datagram sent at `now`; pushes 0, 1 or 2 deliveries.
    pub fn send(
        &mut self,
        now: Instant,
        data: &[u8],
        rng: &mut ChaCha8Rng,
        out: &mut Vec<Delivery>,
    ) {
        let c = &self.cfg;
        self.stats.offered += 1;
        if data.len() > c.mtu {
            self.stats.mtu_drops += 1;
            return;
        }
        // Serialization at the bottleneck, behind a drop-tail queue.
        let mut depart = now;
        if let Some(rate) = c.rate_bps {
            let start = self.free_at.map_or(now, |f| f.max(now));
            let backlog = start.saturating_duration_since(now);
            let queued = (backlog.as_nanos() * rate as u128 / 8 / 1_000_000_000) as u64;
            if queued + data.len() as u64 > c.queue_bytes {
                self.stats.queue_drops += 1;
                return;
            }
            self.stats.queue_delay_us.record(backlog.as_micros() as u64);
            self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(queued);
            let tx = Duration::from_nanos(
                (data.len() as u128 * 8 * 1_000_000_000 / rate as u128) as u64,
            );
            depart = start + tx;
            self.free_at = Some(depart);
        }
        // Loss: burst chain, else independent.
        let p_loss = if let Some(ge) = c.burst {
            self.bad = if self.bad {
                !rng.random_bool(ge.p_bad_to_good.clamp(0.0, 1.0))
            } else {
                rng.random_bool(ge.p_good_to_bad.clamp(0.0, 1.0))
            };
            if self.bad {
                ge.loss_in_bad
            } else {
                c.loss
            }
        } else {
            c.loss
        };
        if p_loss > 0.0 && rng.random_bool(p_loss.clamp(0.0, 1.0)) {
            self.stats.lost += 1;
            return;
        }
        let copies = if c.duplicate > 0.0 && rng.random_bool(c.duplicate.clamp(0.0, 1.0)) {
            self.stats.duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            let mut at = depart + c.delay;
            if !c.jitter.is_zero() {
                at += Duration::from_nanos(rng.random_range(0..=c.jitter.as_nanos() as u64));
            }
            if c.reorder > 0.0 && rng.random_bool(c.reorder.clamp(0.0, 1.0)) {
                self.stats.reordered += 1;
                at += c.reorder_delay;
            }
            let mut bytes = data.to_vec();
            if c.corrupt > 0.0 && !bytes.is_empty() && rng.random_bool(c.corrupt.clamp(0.0, 1.0)) {
                self.stats.corrupted += 1;
                let i = rng.random_range(0..bytes.len());
                bytes[i] ^= 1 << rng.random_range(0..8);
                if !c.corrupt_bypasses_checksum {
                    // The UDP checksum (a one's-complement sum) always catches a
                    // single flipped bit: the receiving host drops the datagram.
                    self.stats.checksum_drops += 1;
                    continue;
                }
            }
            self.stats.delivered += 1;
            out.push(Delivery { at, data: bytes });
        }
    }
}
