//! Impairment middleware: wraps any link and impairs what it sends — random and
//! burst (Gilbert–Elliott) loss, delay, jitter, reordering, duplication, and a
//! rate-limited drop-tail queue — the way netem or a WAN emulator box would. The
//! payload of a delayed datagram stays in its shared buffer (no copy).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Buffer, BufferPool, HeapBuf, HeapPool, Link, LinkStats, Outgoing, PayloadSlice};
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

    fn is_immediate(&self) -> bool {
        self.delay.is_zero() && self.jitter.is_zero() && self.rate_bps.is_none()
    }
}

struct Held {
    at: Instant,
    seq: u64,
    to: SocketAddr,
    header: HeapBuf,
    payload: Option<(Buffer, usize, usize)>,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// A link whose sends go through impairments.
pub struct Impaired<L: Link> {
    inner: L,
    cfg: ImpairConfig,
    rng: ChaCha8Rng,
    bad: bool,
    free_at: Option<Instant>,
    held: BinaryHeap<Reverse<Held>>,
    seq: u64,
    headers: HeapPool,
    stats: LinkStats,
}

impl<L: Link> Impaired<L> {
    /// Wraps `inner`.
    pub fn new(inner: L, cfg: ImpairConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(Self {
            inner,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            cfg,
            bad: false,
            free_at: None,
            held: BinaryHeap::new(),
            seq: 0,
            headers: HeapPool::new(64 * 1024, 2048),
            stats: LinkStats::default(),
        })
    }

    /// The wrapped link.
    pub fn inner(&self) -> &L {
        &self.inner
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

    fn hold(&mut self, at: Instant, pkt: &Outgoing<'_>) -> bool {
        let Some(header) = self.headers.copy_from(pkt.header) else {
            return false;
        };
        self.seq += 1;
        self.held.push(Reverse(Held {
            at,
            seq: self.seq,
            to: pkt.to,
            header,
            payload: pkt.payload.map(|p| (p.buf.share(), p.start, p.len)),
        }));
        true
    }

    fn release_due(&mut self, now: Instant) {
        while let Some(Reverse(h)) = self.held.peek() {
            if h.at > now || self.inner.tx_room() == 0 {
                break;
            }
            let Reverse(h) = self.held.pop().expect("peeked");
            let out = Outgoing {
                to: h.to,
                header: h.header.bytes(),
                payload: h.payload.as_ref().map(|(b, s, l)| PayloadSlice {
                    buf: b,
                    start: *s,
                    len: *l,
                }),
            };
            self.inner.send(now, out);
        }
    }
}

impl<L: Link> Link for Impaired<L> {
    fn describe(&self) -> String {
        format!("{} (impaired)", self.inner.describe())
    }
    fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }
    fn pool(&self) -> BufferPool {
        self.inner.pool()
    }
    fn recv(&mut self, now: Instant, out: &mut Vec<super::Received>, max: usize) -> usize {
        self.inner.recv(now, out, max)
    }
    fn tx_room(&self) -> usize {
        self.inner.tx_room()
    }

    fn send(&mut self, now: Instant, pkt: Outgoing<'_>) -> bool {
        if self.lost() {
            self.stats.impair_lost += 1;
            return true; // "sent" into the void
        }
        let copies = if self.cfg.duplicate > 0.0 && self.rng.random::<f64>() < self.cfg.duplicate {
            self.stats.impair_duplicated += 1;
            2
        } else {
            1
        };
        let reorder = self.cfg.reorder > 0.0 && self.rng.random::<f64>() < self.cfg.reorder;
        for _ in 0..copies {
            if !reorder && self.cfg.is_immediate() {
                self.inner.send(now, pkt);
                continue;
            }
            let mut at = now;
            if let Some(rate) = self.cfg.rate_bps {
                let start = self.free_at.map_or(now, |f| f.max(now));
                let backlog = start.saturating_duration_since(now);
                let backlog_bytes = backlog.as_secs_f64() * rate as f64 / 8.0;
                if backlog_bytes + pkt.len() as f64 > self.cfg.queue_bytes as f64 {
                    self.stats.impair_queue_drops += 1;
                    continue;
                }
                let tx = Duration::from_secs_f64(pkt.len() as f64 * 8.0 / rate as f64);
                self.free_at = Some(start + tx);
                at = start + tx;
            }
            at += self.cfg.delay;
            if !self.cfg.jitter.is_zero() {
                at += self.cfg.jitter.mul_f64(self.rng.random::<f64>());
            }
            if reorder {
                self.stats.impair_reordered += 1;
                at += self.cfg.reorder_delay;
            }
            if !self.hold(at, &pkt) {
                self.stats.tx_dropped += 1;
            }
        }
        true
    }

    fn flush(&mut self, now: Instant) {
        self.release_due(now);
        self.inner.flush(now);
    }

    fn next_deadline(&self) -> Option<Instant> {
        let mine = self.held.peek().map(|Reverse(h)| h.at);
        match (mine, self.inner.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn rx_pending(&self) -> Option<u32> {
        self.inner.rx_pending()
    }

    fn stats(&self) -> LinkStats {
        let mut s = self.inner.stats();
        s.impair_lost += self.stats.impair_lost;
        s.impair_duplicated += self.stats.impair_duplicated;
        s.impair_reordered += self.stats.impair_reordered;
        s.impair_queue_drops += self.stats.impair_queue_drops;
        s.tx_dropped += self.stats.tx_dropped;
        s
    }
}
