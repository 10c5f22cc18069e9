//! Impairment middleware: wraps any link and impairs what it sends (see
//! [`ImpairModel`]). The payload of a delayed datagram stays in its shared buffer
//! (no copy).

use std::net::SocketAddr;
use std::time::Instant;

use super::delay_line::DelayLine;
use super::impair_model::{Fate, ImpairModel};
pub use super::impair_model::{GilbertElliott, ImpairConfig};
use super::{Buffer, BufferPool, HeapBuf, HeapPool, Link, LinkStats, Outgoing, PayloadSlice};

/// A datagram waiting in the delay line (its payload by reference).
struct Held {
    to: SocketAddr,
    header: HeapBuf,
    payload: Option<(Buffer, usize, usize)>,
}

/// A link whose sends go through impairments.
pub struct Impaired<L: Link> {
    inner: L,
    model: ImpairModel,
    held: DelayLine<Held>,
    headers: HeapPool,
    stats: LinkStats,
}

impl<L: Link> Impaired<L> {
    /// Wraps `inner`.
    pub fn new(inner: L, cfg: ImpairConfig) -> Result<Self, String> {
        Ok(Self {
            inner,
            model: ImpairModel::new(cfg)?,
            held: DelayLine::default(),
            headers: HeapPool::new(64 * 1024, 2048),
            stats: LinkStats::default(),
        })
    }

    /// The wrapped link.
    pub fn inner(&self) -> &L {
        &self.inner
    }

    fn hold(&mut self, at: Instant, pkt: &Outgoing<'_>) -> bool {
        let Some(header) = self.headers.copy_from(pkt.header) else {
            return false;
        };
        self.held.push(
            at,
            Held {
                to: pkt.to,
                header,
                payload: pkt.payload.map(|p| (p.buf.share(), p.start, p.len)),
            },
        );
        true
    }

    fn release_due(&mut self, now: Instant) {
        while self.inner.tx_room() > 0 {
            let Some(h) = self.held.pop_due(now) else {
                break;
            };
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
        match self.model.decide(now, pkt.len()) {
            Fate::Lost => self.stats.impair_lost += 1,
            Fate::QueueDrop => self.stats.impair_queue_drops += 1,
            Fate::Deliver {
                at,
                duplicate_at,
                reordered,
            } => {
                self.stats.impair_reordered += reordered as u64;
                for t in std::iter::once(at).chain(duplicate_at) {
                    if t <= now && self.held.is_empty() {
                        self.inner.send(now, pkt);
                    } else if !self.hold(t, &pkt) {
                        self.stats.tx_dropped += 1;
                    }
                }
                self.stats.impair_duplicated += duplicate_at.is_some() as u64;
            }
        }
        true // lost or not, it left this side
    }

    fn flush(&mut self, now: Instant) {
        self.release_due(now);
        self.inner.flush(now);
    }

    fn next_deadline(&self) -> Option<Instant> {
        let mine = self.held.next_due();
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
