//! One direction of `pmdt-wanem`: frames from one port pass through an impairment
//! model (held in time order when delayed) to the other port. Mbufs are moved, never
//! copied; duplicates are extra references (a corrupted copy of a shared frame is
//! copied, to flip its bit).

use std::sync::Arc;
use std::time::Instant;

use dpdk::{Mbuf, MbufBatch, Mempool, RxQueue, TxQueue};
use pmdt::link::delay_line::DelayLine;
use pmdt::link::impair_model::{
    BitFlip, DropCause, Fate, ImpairConfigError, ImpairModel, ImpairStats,
};
use serde::Serialize;

use crate::arrival_spread::ArrivalSpread;
use crate::flow_drops::{Episode, FlowDrops};
use crate::frame_capture::FrameCapture;

/// The most frames one poll takes from the ingress ring (a backlog left by a
/// stall is read whole, so its arrival times spread over the stall).
const MAX_BACKLOG: usize = 1024;

/// Frames per receive burst.
const RX_BURST: usize = 32;

/// What one direction did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PathStats {
    /// Frames received on the ingress port.
    pub received: u64,
    /// Frames sent on the egress port.
    pub forwarded: u64,
    /// Frames other than IP (ARP) forwarded at once, unimpaired (see
    /// [`WanPath::poll`]).
    pub not_ip: u64,
    /// Lost to random or burst loss.
    pub lost: u64,
    /// Dropped by the rate limiter's full queue.
    pub queue_drops: u64,
    /// Those drops by flow (UDP ends and pmdt connection); DPDK mode only
    /// (the kernel-UDP relay has no frames to read them from).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_drops_by_flow: Option<FlowDrops>,
    /// Duplicated.
    pub duplicated: u64,
    /// Held back out of order.
    pub reordered: u64,
    /// Corrupted (a bit flipped, or dropped as the receiver's checksum would).
    pub corrupted: u64,
    /// Corrupted copies dropped rather than forwarded with the bit flipped: over
    /// kernel UDP (the relay's socket would checksum the flipped payload anew),
    /// or a frame without a UDP checksum (nothing would catch the flip).
    pub checksum_drops: u64,
    /// Dropped for exceeding the MTU.
    pub mtu_drops: u64,
    /// Dropped because the egress port's queue was full.
    pub tx_full: u64,
    /// Corrupted copies dropped because no mbuf was free to copy them into.
    pub no_buffer: u64,
    /// Frames waiting (delay line) now.
    pub held: u64,
    /// The longest time the ingress ring went unread, microseconds: how long the
    /// emulator lost its core (the path's capacity is kept over such gaps, see
    /// `arrival_spread`).
    pub longest_stall_us: u64,
}

impl PathStats {
    /// Takes the model's counters of what it did to the frames.
    pub fn update_from(&mut self, m: &ImpairStats) {
        self.lost = m.lost;
        self.queue_drops = m.queue_drops;
        self.duplicated = m.duplicated;
        self.reordered = m.reordered;
        self.corrupted = m.corrupted;
        self.checksum_drops = m.checksum_drops;
        self.mtu_drops = m.mtu_drops;
    }
}

/// Ingress queue → model → egress queue.
pub struct WanPath {
    rx: RxQueue,
    tx: TxQueue,
    model: Option<ImpairModel>,
    pool: Arc<Mempool>,
    held: DelayLine<Mbuf>,
    rx_batch: MbufBatch<RX_BURST>,
    backlog: Vec<Mbuf>,
    arrivals: ArrivalSpread,
    tx_batch: MbufBatch<32>,
    /// Overflow episodes over, kept for [`WanPath::take_overflows`] (None: not
    /// kept).
    overflows: Option<Vec<Episode>>,
    /// Counters.
    pub stats: PathStats,
}

impl WanPath {
    /// A path; `model` None forwards untouched. Corrupted copies of shared frames
    /// are copied into mbufs from `pool`.
    pub fn new(rx: RxQueue, tx: TxQueue, model: Option<ImpairModel>, pool: Arc<Mempool>) -> Self {
        Self {
            rx,
            tx,
            model,
            pool,
            held: DelayLine::default(),
            rx_batch: MbufBatch::default(),
            backlog: Vec::with_capacity(MAX_BACKLOG),
            arrivals: ArrivalSpread::default(),
            tx_batch: MbufBatch::default(),
            overflows: None,
            stats: PathStats {
                queue_drops_by_flow: Some(FlowDrops::default()),
                ..PathStats::default()
            },
        }
    }

    /// Follows the overflow episodes of the bottleneck's queue and keeps them
    /// for [`WanPath::take_overflows`] (see `flow_drops`). Call before the
    /// first frame: the drops counted so far are forgotten.
    pub fn keep_overflows(&mut self) {
        self.stats.queue_drops_by_flow = Some(FlowDrops::with_episodes());
        self.overflows.get_or_insert_with(Vec::new);
    }

    /// Ends the overflow episode under way, if any (at the end of a run): the
    /// next [`WanPath::take_overflows`] has it.
    pub fn end_overflows(&mut self) {
        let ep = self
            .stats
            .queue_drops_by_flow
            .as_mut()
            .and_then(FlowDrops::close);
        self.overflow_over(ep);
    }

    /// The overflow episodes over since the last call (none unless kept).
    pub fn take_overflows(&mut self) -> Vec<Episode> {
        self.overflows
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn overflow_over(&mut self, ep: Option<Episode>) {
        if let (Some(ep), Some(kept)) = (ep, self.overflows.as_mut()) {
            kept.push(ep);
        }
    }

    /// Hands the queued frames to the egress port (what it cannot take stays
    /// queued).
    fn flush(&mut self) {
        let queued = self.tx_batch.len();
        if queued > 0 {
            self.tx.tx_burst(&mut self.tx_batch);
            self.stats.forwarded += (queued - self.tx_batch.len()) as u64;
        }
    }

    /// Whether the egress batch has room, handing it to the port first if full.
    fn room(&mut self) -> bool {
        if self.tx_batch.is_full() {
            self.flush();
        }
        !self.tx_batch.is_full()
    }

    fn emit(&mut self, m: Mbuf, capture: &mut Option<&mut FrameCapture>) {
        if !self.room() {
            drop(m);
            self.stats.tx_full += 1;
            return;
        }
        if let Some(c) = capture {
            c.record(m.data());
        }
        if self.tx_batch.push(m).is_err() {
            unreachable!("the batch had room");
        }
    }

    /// One pass; returns whether anything moved. Frames queued for the egress port
    /// are also written to `capture`. The impairment is the WAN between two
    /// routers: frames other than IPv4 and IPv6 (ARP) cross at once, untouched,
    /// as a host resolves its gateway on its own LAN, not across the WAN.
    /// Delayed, an ARP request held the first packet (a connection's Init) for a
    /// round trip of the emulated path, or for the resolver's retry when lost.
    pub fn poll(&mut self, now: Instant, mut capture: Option<&mut FrameCapture>) -> bool {
        let mut backlog = std::mem::take(&mut self.backlog);
        loop {
            let n = self.rx.rx_burst(&mut self.rx_batch);
            backlog.extend(self.rx_batch.drain());
            if n < RX_BURST || backlog.len() >= MAX_BACKLOG {
                break;
            }
        }
        let n = backlog.len();
        // Frames are delayed from when they were read, not from when the loop last
        // read the clock: preempted in between (milliseconds on a shared core), it
        // would release them early and the path would look shorter than set. A
        // backlog the loop finds after such a gap arrived during it: the
        // bottleneck takes it from its estimated arrivals (the gap's capacity is
        // kept), the delay counts from the read (never early).
        let now = if n > 0 { Instant::now().max(now) } else { now };
        let mut stamps = if n > 0 {
            Some(self.arrivals.backlog(now, n))
        } else {
            self.arrivals.empty(now);
            None
        };
        self.stats.longest_stall_us = self.arrivals.longest_gap().as_micros() as u64;
        for m in backlog.drain(..) {
            self.stats.received += 1;
            let arrived = stamps.as_mut().and_then(Iterator::next).unwrap_or(now);
            let Some(model) = &mut self.model else {
                self.emit(m, &mut capture);
                continue;
            };
            if !is_ip(m.data()) {
                self.stats.not_ip += 1;
                self.emit(m, &mut capture);
                continue;
            }
            let fate = model.decide_seen_late(arrived, now, m.pkt_len());
            let full = matches!(fate, Fate::Dropped(DropCause::QueueFull));
            let over = self
                .stats
                .queue_drops_by_flow
                .as_mut()
                .and_then(|d| d.offered(arrived, m.data(), full));
            self.overflow_over(over);
            let mut copies = fate.deliveries().iter();
            let (Some(first), second) = (copies.next(), copies.next()) else {
                continue; // dropped: the model counted why
            };
            let duplicate = second.map(|d| (d, m.clone_ref()));
            for (d, frame) in std::iter::once((first, m)).chain(duplicate) {
                let frame = match d.flip {
                    Some(flip) => match corrupted(frame, flip, &self.pool) {
                        Corrupted::Flipped(f) => f,
                        Corrupted::Unchecked => {
                            self.stats.checksum_drops += 1;
                            continue;
                        }
                        Corrupted::NoBuffer => {
                            self.stats.no_buffer += 1;
                            continue;
                        }
                    },
                    None => frame,
                };
                if d.at <= now && self.held.is_empty() {
                    self.emit(frame, &mut capture);
                } else {
                    self.held.push(d.at, frame);
                }
            }
        }
        if let Some(model) = &self.model {
            self.stats.update_from(model.stats());
        }
        let over = self
            .stats
            .queue_drops_by_flow
            .as_mut()
            .and_then(|d| d.close_if_over(now));
        self.overflow_over(over);
        self.backlog = backlog;
        // Everything due, as far as the egress port takes it (what it refuses
        // stays held, in order, for the next pass).
        while self.room() {
            let Some(m) = self.held.pop_due(now) else {
                break;
            };
            self.emit(m, &mut capture);
        }
        self.stats.held = self.held.len() as u64;
        let queued = self.tx_batch.len();
        self.flush();
        n > 0 || queued > 0
    }

    /// When the next held frame is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.held.next_due()
    }

    /// Changes the bottleneck rate from now on (a path without a model forwards
    /// untouched and stays so).
    pub fn set_rate(&mut self, rate_bps: u64) -> Result<(), ImpairConfigError> {
        self.model
            .as_mut()
            .map_or(Ok(()), |m| m.set_rate(Some(rate_bps)))
    }
}

/// A frame the model corrupted.
enum Corrupted {
    /// One bit of its UDP payload flipped.
    Flipped(Mbuf),
    /// Not an IPv4/UDP frame with a checksum: nothing would catch the flip, so
    /// it is dropped as a checksum would drop it.
    Unchecked,
    /// No mbuf to copy a shared frame into.
    NoBuffer,
}

/// `frame` with `flip` applied to a byte of its UDP payload (the receiver's UDP
/// checksum, not a header check, must be what rejects it): in place when the
/// frame is ours alone and in one segment, else in a copy from `pool` (a jumbo
/// frame larger than the pool's mbufs is copied into a chain of them).
fn corrupted(frame: Mbuf, flip: BitFlip, pool: &Mempool) -> Corrupted {
    let Some(start) = checked_udp_payload(frame.data()) else {
        return Corrupted::Unchecked;
    };
    let flip_in = |payload: &mut [u8]| {
        let len = payload.len();
        BitFlip {
            byte: flip.byte % len,
            mask: flip.mask,
        }
        .apply(payload);
    };
    if frame.is_unique() && frame.nb_segs() == 1 {
        let mut frame = frame;
        let Ok(data) = frame.data_mut() else {
            return Corrupted::NoBuffer;
        };
        flip_in(&mut data[start..]);
        return Corrupted::Flipped(frame);
    }
    let mut bytes = frame.to_vec();
    if start >= bytes.len() {
        return Corrupted::Unchecked;
    }
    flip_in(&mut bytes[start..]);
    match copied_frame(&bytes, pool) {
        Some(copy) => Corrupted::Flipped(copy),
        None => Corrupted::NoBuffer,
    }
}

/// `bytes` in mbufs from `pool`: one, or a chain when they do not fit one.
fn copied_frame(bytes: &[u8], pool: &Mempool) -> Option<Mbuf> {
    let mut head: Option<Mbuf> = None;
    let mut rest = bytes;
    while !rest.is_empty() || head.is_none() {
        let mut seg = pool.alloc().ok()?;
        let n = rest.len().min(seg.tailroom());
        if n == 0 && !rest.is_empty() {
            return None;
        }
        seg.extend_from_slice(&rest[..n]).ok()?;
        rest = &rest[n..];
        match head.as_mut() {
            None => head = Some(seg),
            Some(h) => h.chain(seg).ok()?,
        }
    }
    head
}

/// Whether an Ethernet frame carries IPv4 or IPv6 (behind at most one VLAN tag).
fn is_ip(f: &[u8]) -> bool {
    let ethertype = match f.get(12..14) {
        Some([0x81, 0x00]) => f.get(16..18),
        t => t,
    };
    matches!(ethertype, Some([0x08, 0x00] | [0x86, 0xdd]))
}

/// Where the UDP payload of an Ethernet/IPv4/UDP frame starts, if the frame is
/// one, carries a UDP checksum (0: none) and has a payload.
fn checked_udp_payload(f: &[u8]) -> Option<usize> {
    const ETH: usize = 14;
    if f.get(12..14)? != [0x08, 0x00] {
        return None;
    }
    let ihl = usize::from(f.get(ETH)? & 0x0f) * 4;
    if ihl < 20 || *f.get(ETH + 9)? != 17 {
        return None;
    }
    let udp = ETH + ihl;
    let checksum = f.get(udp + 6..udp + 8)?;
    let start = udp + 8;
    (checksum != [0, 0] && start < f.len()).then_some(start)
}

#[cfg(test)]
mod tests {
    use super::{checked_udp_payload, is_ip};

    #[test]
    fn only_ipv4_and_ipv6_frames_are_impaired() {
        let mut f = vec![0u8; 60];
        for (ethertype, ip) in [
            ([0x08, 0x00], true),
            ([0x86, 0xdd], true),
            ([0x08, 0x06], false),
        ] {
            f[12..14].copy_from_slice(&ethertype);
            assert_eq!(is_ip(&f), ip, "{ethertype:x?}");
            // Behind a VLAN tag.
            let mut tagged = f.clone();
            tagged[12..14].copy_from_slice(&[0x81, 0x00]);
            tagged[16..18].copy_from_slice(&ethertype);
            assert_eq!(is_ip(&tagged), ip, "tagged {ethertype:x?}");
        }
        assert!(!is_ip(&f[..13]), "a runt");
    }

    #[test]
    fn the_udp_payload_is_found_only_in_checksummed_ipv4_udp_frames() {
        let mut f = vec![0u8; 14 + 20 + 8 + 10];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[14 + 9] = 17;
        f[14 + 20 + 6] = 0x12;
        assert_eq!(checked_udp_payload(&f), Some(42));
        f[14] = 0x46; // 24-byte IPv4 header: the UDP header 4 bytes later
        assert_eq!(checked_udp_payload(&f), None, "its checksum field is 0");
        f[14 + 24 + 6] = 0x34;
        assert_eq!(checked_udp_payload(&f), Some(46));
        f[14] = 0x45;
        let no_sum = {
            let mut g = f.clone();
            g[14 + 20 + 6] = 0;
            g
        };
        assert_eq!(checked_udp_payload(&no_sum), None, "no checksum");
        assert_eq!(checked_udp_payload(&f[..42]), None, "no payload");
        f[14 + 9] = 6;
        assert_eq!(checked_udp_payload(&f), None, "TCP");
        f[12] = 0x86;
        assert_eq!(checked_udp_payload(&f), None, "not IPv4");
    }
}
