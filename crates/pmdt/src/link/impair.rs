//! Impairment middleware: wraps any link and impairs what it sends (see
//! [`ImpairModel`]). The payload of a delayed datagram stays in its shared buffer
//! (no copy); only a corrupted copy is copied whole, to flip its bit.

use std::net::SocketAddr;
use std::time::Instant;

use super::delay_line::DelayLine;
use super::impair_model::{BitFlip, ImpairModel};
pub use super::impair_model::{GilbertElliott, ImpairConfig, ImpairConfigError};
use super::{Buffer, BufferPool, HeapBuf, HeapPool, Link, LinkStats, Outgoing, PayloadSlice};

/// Blocks for whole corrupted datagrams, allocated on first use: room for a jumbo
/// frame's payload, at most this many held at once (8 MiB); a corrupted copy
/// beyond that is dropped and counted in `tx_dropped`.
const CORRUPTED_BLOCK: usize = 16 * 1024;
const CORRUPTED_BLOCKS: usize = 512;

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
    corrupted: HeapPool,
    /// Copies that could not be held (no block free).
    tx_dropped: u64,
}

impl<L: Link> Impaired<L> {
    /// Wraps `inner`.
    pub fn new(inner: L, cfg: ImpairConfig) -> Result<Self, ImpairConfigError> {
        Ok(Self {
            inner,
            model: ImpairModel::new(cfg)?,
            held: DelayLine::default(),
            headers: HeapPool::new(64 * 1024, 2048),
            corrupted: HeapPool::new(CORRUPTED_BLOCKS, CORRUPTED_BLOCK),
            tx_dropped: 0,
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

    /// Holds a whole copy of `pkt` with `flip` applied (the shared payload is never
    /// written).
    fn hold_corrupted(&mut self, at: Instant, pkt: &Outgoing<'_>, flip: BitFlip) -> bool {
        let Some(mut block) = self.corrupted.take() else {
            return false;
        };
        let Some(n) = pkt.copy_to(block.space()) else {
            return false;
        };
        block.set_len(n);
        flip.apply(&mut block.space()[..n]);
        self.held.push(
            at,
            Held {
                to: pkt.to,
                header: block.freeze(),
                payload: None,
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
        let fate = self.model.decide(now, pkt.len());
        for d in fate.deliveries() {
            let kept = match d.flip {
                Some(flip) => self.hold_corrupted(d.at, &pkt, flip),
                None if d.at <= now && self.held.is_empty() => {
                    self.inner.send(now, pkt); // the inner link counts its own drops
                    true
                }
                None => self.hold(d.at, &pkt),
            };
            self.tx_dropped += !kept as u64;
        }
        true // delivered, dropped or held: it left this side
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
    fn wait_on(&mut self, wait: &mut dyn FnMut(Option<super::WakeOn<'_>>)) {
        self.inner.wait_on(wait)
    }

    fn stats(&self) -> LinkStats {
        let mut s = self.inner.stats();
        let m = self.model.stats();
        s.impair_lost += m.lost;
        s.impair_duplicated += m.duplicated;
        s.impair_reordered += m.reordered;
        s.impair_queue_drops += m.queue_drops;
        s.impair_mtu_drops += m.mtu_drops;
        s.impair_corrupted += m.corrupted;
        s.tx_dropped += self.tx_dropped;
        s
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::link::memory::MemoryLink;
    use crate::link::Received;

    fn pair(cfg: ImpairConfig) -> (Impaired<MemoryLink>, MemoryLink) {
        let (a, b) = MemoryLink::pair(
            "10.0.0.1:1".parse().unwrap(),
            "10.0.0.2:2".parse().unwrap(),
            4096,
        );
        (Impaired::new(a, cfg).unwrap(), b)
    }

    /// Sends `n` datagrams (a 4-byte header and a 60-byte payload by reference)
    /// at `now`, flushes at `then`, and returns what arrived.
    fn run(link: &mut Impaired<MemoryLink>, peer: &mut MemoryLink, n: usize) -> Vec<Vec<u8>> {
        let payload = Buffer::new(HeapPool::new(1, 2048).copy_from(&[0u8; 60]).unwrap());
        let now = Instant::now();
        for i in 0..n as u32 {
            let header = i.to_be_bytes();
            let pkt = Outgoing {
                to: peer.local_addr(),
                header: &header,
                payload: Some(PayloadSlice {
                    buf: &payload,
                    start: 0,
                    len: 60,
                }),
            };
            assert!(link.send(now, pkt));
        }
        link.flush(now + Duration::from_secs(1));
        assert_eq!(
            payload.bytes(),
            &[0u8; 60],
            "the shared payload is never written"
        );
        let mut got: Vec<Received> = Vec::new();
        peer.recv(now, &mut got, usize::MAX);
        got.iter().map(|r| r.payload().to_vec()).collect()
    }

    #[test]
    fn corrupted_copies_carry_one_flipped_bit_and_the_counters_show_them() {
        let (mut link, mut peer) = pair(ImpairConfig {
            corrupt: 0.5,
            corrupt_bypasses_checksum: true,
            ..Default::default()
        });
        let got = run(&mut link, &mut peer, 200);
        assert_eq!(got.len(), 200, "bypassing the checksum, nothing is lost");
        let flipped: u32 = got
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let mut want = (i as u32).to_be_bytes().to_vec();
                want.extend([0u8; 60]);
                want.iter()
                    .zip(d)
                    .map(|(a, b)| (a ^ b).count_ones())
                    .sum::<u32>()
            })
            .sum();
        let st = link.stats();
        assert_eq!(flipped as u64, st.impair_corrupted);
        assert!((60..140).contains(&st.impair_corrupted), "{st:?}");
    }

    #[test]
    fn loss_duplicates_and_checksum_drops_add_up_in_the_link_counters() {
        let (mut link, mut peer) = pair(ImpairConfig {
            loss: 0.2,
            duplicate: 0.2,
            corrupt: 0.1,
            delay: Duration::from_millis(3),
            ..Default::default()
        });
        let got = run(&mut link, &mut peer, 1000);
        let st = link.stats();
        assert!(st.impair_lost > 100 && st.impair_duplicated > 100 && st.impair_corrupted > 50);
        assert_eq!(
            got.len() as u64,
            1000 - st.impair_lost + st.impair_duplicated - st.impair_corrupted,
            "{st:?}"
        );
        assert!(
            got.iter().all(|d| d[4..] == [0u8; 60]),
            "no corrupted copy got through"
        );
        assert_eq!(st.tx_datagrams, got.len() as u64);
    }

    #[test]
    fn datagrams_above_the_mtu_never_reach_the_inner_link() {
        let (mut link, mut peer) = pair(ImpairConfig {
            mtu: Some(63),
            ..Default::default()
        });
        assert!(run(&mut link, &mut peer, 10).is_empty());
        let st = link.stats();
        assert_eq!((st.impair_mtu_drops, st.tx_datagrams), (10, 0));
    }
}
