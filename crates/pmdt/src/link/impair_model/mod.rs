//! The impairment model: decides each datagram's fate (dropped, or delivered once
//! or twice, each copy at its time and maybe corrupted), like netem or a WAN
//! emulator box. One model for every user, as smoltcp has one `FaultInjector`: the
//! simulator ([`crate::sim`]), the [`super::impair::Impaired`] link middleware and
//! `pmdt-wanem` on raw frames. The model only decides; the caller holds and
//! releases the datagrams (and flips the bit of a corrupted copy).

mod config;
mod stats;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use config::{GilbertElliott, ImpairConfig, ImpairConfigError};
pub use stats::ImpairStats;

/// Why a datagram was not delivered at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropCause {
    /// Larger than [`ImpairConfig::mtu`].
    Mtu,
    /// The bottleneck queue was full.
    QueueFull,
    /// Random or burst loss.
    Lost,
    /// Corrupted, and the receiver's checksum would have dropped it (every copy).
    Checksum,
}

/// One bit to flip in a corrupted copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitFlip {
    /// Byte index in the datagram (below the length given to
    /// [`ImpairModel::decide`]).
    pub byte: usize,
    /// The bit, as a mask with one bit set.
    pub mask: u8,
}

impl BitFlip {
    /// Flips the bit in `datagram` (nothing when it is shorter than `byte`).
    pub fn apply(&self, datagram: &mut [u8]) {
        if let Some(b) = datagram.get_mut(self.byte) {
            *b ^= self.mask;
        }
    }
}

/// One copy of a datagram to deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// When it arrives.
    pub at: Instant,
    /// Held back by [`ImpairConfig::reorder_delay`].
    pub reordered: bool,
    /// The bit to flip before delivering it (only with
    /// [`ImpairConfig::corrupt_bypasses_checksum`]; otherwise corrupted copies are
    /// dropped).
    pub flip: Option<BitFlip>,
}

/// What happens to one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Not delivered.
    Dropped(DropCause),
    /// Delivered once.
    Once(Delivery),
    /// Delivered twice (duplicated), each copy with its own time and corruption.
    Twice([Delivery; 2]),
}

impl Fate {
    /// The copies to deliver (none, one or two).
    pub fn deliveries(&self) -> &[Delivery] {
        match self {
            Fate::Dropped(_) => &[],
            Fate::Once(d) => std::slice::from_ref(d),
            Fate::Twice(d) => d,
        }
    }
}

/// One direction's impairment state: the burst-loss chain, the bottleneck queue,
/// the random source and the counters.
#[derive(Debug, Clone)]
pub struct ImpairModel {
    cfg: ImpairConfig,
    rng: ChaCha8Rng,
    /// The Gilbert–Elliott chain is in the bad state.
    bad: bool,
    /// When the bottleneck finishes sending what is queued.
    free_at: Option<Instant>,
    stats: ImpairStats,
}

impl ImpairModel {
    /// A model for `cfg` (checked), drawing from `cfg.seed`.
    pub fn new(cfg: ImpairConfig) -> Result<Self, ImpairConfigError> {
        let seed = cfg.seed;
        Self::with_seed(cfg, seed)
    }

    /// A model for `cfg` drawing from `seed` instead of `cfg.seed` (the simulator
    /// gives each link its own stream derived from the network's seed).
    pub fn with_seed(cfg: ImpairConfig, seed: u64) -> Result<Self, ImpairConfigError> {
        cfg.validate()?;
        Ok(Self {
            cfg,
            rng: ChaCha8Rng::seed_from_u64(seed),
            bad: false,
            free_at: None,
            stats: ImpairStats::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ImpairConfig {
        &self.cfg
    }

    /// The counters.
    pub fn stats(&self) -> &ImpairStats {
        &self.stats
    }

    /// Clears the counters (to measure from now on).
    pub fn reset_stats(&mut self) {
        self.stats = ImpairStats::default();
    }

    /// Changes the bottleneck rate from now on (None: unlimited; datagrams already
    /// queued keep their departure times). A zero rate is refused.
    pub fn set_rate(&mut self, rate_bps: Option<u64>) -> Result<(), ImpairConfigError> {
        if rate_bps == Some(0) {
            return Err(ImpairConfigError::ZeroRate);
        }
        self.cfg.rate_bps = rate_bps;
        Ok(())
    }

    /// Decides the fate of a `len`-byte datagram sent at `now`, and counts it.
    pub fn decide(&mut self, now: Instant, len: usize) -> Fate {
        self.decide_seen_late(now, now, len)
    }

    /// As [`decide`](Self::decide) for a datagram whose arrival time is only an
    /// estimate: read at `seen` from a backlog, it is thought to have arrived at
    /// `arrived` (earlier). The bottleneck queue takes it from `arrived`, so a
    /// link left idle while its emulator was off its core keeps that capacity;
    /// the path's delay counts from `seen` at the earliest, so no datagram ever
    /// crosses the path faster than set (an early release would show the ends a
    /// round trip shorter than the path's: their min-RTT filters keep it).
    pub fn decide_seen_late(&mut self, arrived: Instant, seen: Instant, len: usize) -> Fate {
        let now = arrived.min(seen);
        self.stats.offered += 1;
        if self.cfg.mtu.is_some_and(|mtu| len > mtu) {
            self.stats.mtu_drops += 1;
            return Fate::Dropped(DropCause::Mtu);
        }
        let Some(depart) = self.enqueue(now, len) else {
            self.stats.queue_drops += 1;
            return Fate::Dropped(DropCause::QueueFull);
        };
        if self.lost() {
            self.stats.lost += 1;
            return Fate::Dropped(DropCause::Lost);
        }
        let duplicated = self.chance(self.cfg.duplicate);
        self.stats.duplicated += duplicated as u64;
        let depart = depart.max(seen);
        let first = self.copy(depart, len);
        let second = if duplicated {
            self.copy(depart, len)
        } else {
            None
        };
        match (first, second) {
            (Some(a), Some(b)) => Fate::Twice([a, b]),
            (Some(d), None) | (None, Some(d)) => Fate::Once(d),
            (None, None) => Fate::Dropped(DropCause::Checksum),
        }
    }

    /// Serialization at the bottleneck behind a drop-tail queue: when the datagram
    /// leaves it, or `None` when the queue is full.
    fn enqueue(&mut self, now: Instant, len: usize) -> Option<Instant> {
        let Some(rate) = self.cfg.rate_bps else {
            return Some(now);
        };
        let start = self.free_at.map_or(now, |f| f.max(now));
        let backlog = start.saturating_duration_since(now);
        let queued = (backlog.as_nanos() * rate as u128 / 8 / 1_000_000_000) as u64;
        if queued + len as u64 > self.cfg.queue_bytes {
            return None;
        }
        self.stats.queue_delay_us.record(backlog.as_micros() as u64);
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(queued);
        let tx = Duration::from_nanos((len as u128 * 8 * 1_000_000_000 / rate as u128) as u64);
        let depart = start + tx;
        self.free_at = Some(depart);
        Some(depart)
    }

    /// Loss: the burst chain steps once per datagram; in the bad state its loss
    /// probability applies, otherwise the independent one.
    fn lost(&mut self) -> bool {
        let p_loss = match self.cfg.burst {
            Some(ge) => {
                let flip = if self.bad {
                    ge.p_bad_to_good
                } else {
                    ge.p_good_to_bad
                };
                if self.chance(flip) {
                    self.bad = !self.bad;
                }
                if self.bad {
                    ge.loss_in_bad
                } else {
                    self.cfg.loss
                }
            }
            None => self.cfg.loss,
        };
        self.chance(p_loss)
    }

    /// One copy leaving the bottleneck at `depart`: its arrival time, and its
    /// corruption (`None`: corrupted and dropped by the checksum).
    fn copy(&mut self, depart: Instant, len: usize) -> Option<Delivery> {
        let mut at = depart + self.cfg.delay;
        if !self.cfg.jitter.is_zero() {
            let ns = self.cfg.jitter.as_nanos().min(u64::MAX as u128) as u64;
            at += Duration::from_nanos(self.rng.random_range(0..=ns));
        }
        let reordered = self.chance(self.cfg.reorder);
        if reordered {
            self.stats.reordered += 1;
            at += self.cfg.reorder_delay;
        }
        let mut flip = None;
        if len > 0 && self.chance(self.cfg.corrupt) {
            self.stats.corrupted += 1;
            if !self.cfg.corrupt_bypasses_checksum {
                self.stats.checksum_drops += 1;
                return None;
            }
            flip = Some(BitFlip {
                byte: self.rng.random_range(0..len),
                mask: 1 << self.rng.random_range(0..8u32),
            });
        }
        self.stats.delivered += 1;
        Some(Delivery {
            at,
            reordered,
            flip,
        })
    }

    /// True with probability `p` (no draw when `p` is 0, so a feature that is off
    /// does not shift the random stream of the others).
    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.random_bool(p)
    }
}
