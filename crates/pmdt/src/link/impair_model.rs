//! The impairment model: decides each datagram's fate (lost, dropped by the
//! bottleneck queue, or delivered at some time, maybe twice), like netem or a WAN
//! emulator box. Used by the [`super::impair::Impaired`] link middleware and by
//! `pmdt-wanem` on raw frames.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

pub use crate::sim::GilbertElliott;

/// What to do to sent datagrams. The default does nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ImpairConfig {
    /// Independent loss probability.
    pub loss: f64,
    /// Burst loss (replaces `loss` while in the bad state).
    pub burst: Option<GilbertElliott>,
    /// Added one-way delay.
    pub delay: Duration,
    /// Extra delay drawn uniformly from `[0, jitter]` (reorders when large enough).
    pub jitter: Duration,
    /// Probability a datagram is held back by `reorder_delay`.
    pub reorder: f64,
    /// Hold-back of a reordered datagram.
    pub reorder_delay: Duration,
    /// Probability a datagram is sent twice.
    pub duplicate: f64,
    /// Bottleneck rate, bits/s (None: unlimited).
    pub rate_bps: Option<u64>,
    /// Drop-tail queue in front of the bottleneck, bytes.
    pub queue_bytes: u64,
    /// Random seed (runs are reproducible).
    pub seed: u64,
}

impl Default for ImpairConfig {
    fn default() -> Self {
        Self {
            loss: 0.0,
            burst: None,
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            reorder: 0.0,
            reorder_delay: Duration::from_millis(1),
            duplicate: 0.0,
            rate_bps: None,
            queue_bytes: 1 << 20,
            seed: 1,
        }
    }
}

impl ImpairConfig {
    /// Checks probabilities and rates.
    pub fn validate(&self) -> Result<(), String> {
        for (name, p) in [
            ("loss", self.loss),
            ("reorder", self.reorder),
            ("duplicate", self.duplicate),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{name} must be a probability in [0, 1], got {p}"));
            }
        }
        if self.rate_bps == Some(0) {
            return Err("rate must be above 0".into());
        }
        Ok(())
    }
}

/// What happens to one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Lost (random or burst loss).
    Lost,
    /// Dropped by the full bottleneck queue.
    QueueDrop,
    /// Delivered at `at` (now: at once), and a second time at `duplicate_at`.
    Deliver {
        /// When.
        at: Instant,
        /// When the duplicate goes, if duplicated.
        duplicate_at: Option<Instant>,
        /// Held back out of order.
        reordered: bool,
    },
}

/// Impairment state: the burst-loss chain, the bottleneck queue and the random source.
#[derive(Debug, Clone)]
pub struct ImpairModel {
    cfg: ImpairConfig,
    rng: ChaCha8Rng,
    bad: bool,
    free_at: Option<Instant>,
}

impl ImpairModel {
    /// A model for `cfg` (checked).
    pub fn new(cfg: ImpairConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(Self {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            cfg,
            bad: false,
            free_at: None,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ImpairConfig {
        &self.cfg
    }

    fn lost(&mut self) -> bool {
        let c = &self.cfg;
        if let Some(ge) = c.burst {
            let flip = if self.bad {
                ge.p_bad_to_good
            } else {
                ge.p_good_to_bad
            };
            if self.rng.random::<f64>() < flip {
                self.bad = !self.bad;
            }
            if self.bad {
                return self.rng.random::<f64>() < ge.loss_in_bad;
            }
        }
        c.loss > 0.0 && self.rng.random::<f64>() < c.loss
    }

    fn delivery_time(&mut self, now: Instant, len: usize, reorder: bool) -> Option<Instant> {
        let mut at = now;
        if let Some(rate) = self.cfg.rate_bps {
            let start = self.free_at.map_or(now, |f| f.max(now));
            let backlog = start.saturating_duration_since(now);
            let backlog_bytes = backlog.as_secs_f64() * rate as f64 / 8.0;
            if backlog_bytes + len as f64 > self.cfg.queue_bytes as f64 {
                return None;
            }
            let tx = Duration::from_secs_f64(len as f64 * 8.0 / rate as f64);
            self.free_at = Some(start + tx);
            at = start + tx;
        }
        at += self.cfg.delay;
        if !self.cfg.jitter.is_zero() {
            at += self.cfg.jitter.mul_f64(self.rng.random::<f64>());
        }
        if reorder {
            at += self.cfg.reorder_delay;
        }
        Some(at)
    }

    /// Decides the fate of a `len`-byte datagram sent at `now`.
    pub fn decide(&mut self, now: Instant, len: usize) -> Fate {
        if self.lost() {
            return Fate::Lost;
        }
        let dup = self.cfg.duplicate > 0.0 && self.rng.random::<f64>() < self.cfg.duplicate;
        let reordered = self.cfg.reorder > 0.0 && self.rng.random::<f64>() < self.cfg.reorder;
        let Some(at) = self.delivery_time(now, len, reordered) else {
            return Fate::QueueDrop;
        };
        let duplicate_at = if dup {
            self.delivery_time(now, len, false)
        } else {
            None
        };
        Fate::Deliver {
            at,
            duplicate_at,
            reordered,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_of_loss_duplication_and_reordering_match_the_config() {
        let mut m = ImpairModel::new(ImpairConfig {
            loss: 0.1,
            duplicate: 0.05,
            reorder: 0.2,
            delay: Duration::from_millis(10),
            ..Default::default()
        })
        .unwrap();
        let now = Instant::now();
        let (mut lost, mut dup, mut reo, mut n) = (0, 0, 0, 0);
        for _ in 0..100_000 {
            match m.decide(now, 1000) {
                Fate::Lost => lost += 1,
                Fate::QueueDrop => unreachable!("no rate limit"),
                Fate::Deliver {
                    at,
                    duplicate_at,
                    reordered,
                } => {
                    n += 1;
                    assert!(at >= now + Duration::from_millis(10));
                    dup += duplicate_at.is_some() as u32;
                    reo += reordered as u32;
                }
            }
        }
        assert!((9_500..10_500).contains(&lost), "{lost}");
        assert!((0.045..0.055).contains(&(dup as f64 / n as f64)));
        assert!((0.19..0.21).contains(&(reo as f64 / n as f64)));
    }

    #[test]
    fn bottleneck_paces_and_drops_at_the_queue_limit() {
        let mut m = ImpairModel::new(ImpairConfig {
            rate_bps: Some(8_000_000), // 1 MB/s: 1 ms per 1000 bytes
            queue_bytes: 10_000,
            ..Default::default()
        })
        .unwrap();
        let now = Instant::now();
        let mut last = now;
        let mut drops = 0;
        for _ in 0..20 {
            match m.decide(now, 1000) {
                Fate::Deliver { at, .. } => {
                    assert!(at > last);
                    last = at;
                }
                Fate::QueueDrop => drops += 1,
                Fate::Lost => unreachable!(),
            }
        }
        assert_eq!(drops, 10, "10 KB of queue at once, the rest dropped");
        assert_eq!(last - now, Duration::from_millis(10));
        assert!(ImpairModel::new(ImpairConfig {
            loss: 1.5,
            ..Default::default()
        })
        .is_err());
    }
}
