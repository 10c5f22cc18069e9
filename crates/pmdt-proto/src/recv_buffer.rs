//! Reassembly of received stream bytes: out-of-order data is stored at its offset
//! and read in order. The buffer's capacity is the credit given to the peer.
//!
//! The core keeps the bookkeeping (what arrived, what was read); the bytes live in a
//! [`RecvStorage`]. The default [`RecvRing`] copies payloads into a ring; a runtime
//! can instead keep references to the packet memory the payloads arrived in (e.g.
//! mbufs), so the only copy on the receive side is the application's `read`.

use crate::offset_ring::OffsetRing;
use crate::range_set::RangeSet;

/// Disjoint received ranges (runs of bytes between holes) a connection may hold
/// whatever its credit. Beyond its limit (see [`RecvBuffer::max_fragments`]), a
/// packet that would open a new range is dropped unacknowledged (the sender
/// retransmits it later): memory stays bounded however a peer fragments its
/// stream.
pub(crate) const MIN_RECV_FRAGMENTS: usize = 4096;
/// Credit per received range the limit allows beyond [`MIN_RECV_FRAGMENTS`]. Loss
/// leaves one hole per lost datagram, and a path with a large pipe holds many:
/// at 1 Gbit/s × 200 ms, Startup's overshoot dropped about every other datagram
/// of a round at the bottleneck's queue, and a fixed limit of 4,096 ranges then
/// refused 7,934 datagrams that had arrived within the credit, all sent again.
/// Full-size datagrams with every other one lost make a range per 2 datagrams
/// (~2,900 bytes of credit); a range costs 16 bytes, 1.6 % of the credit.
const CREDIT_BYTES_PER_FRAGMENT: u64 = 1024;
/// The most received ranges whatever the credit: enough for every other
/// full-size datagram lost over 188 MB of credit (1 Gbit/s × 200 ms holds 25 MB
/// in flight), and a bound on what one datagram can cost: a range opened or
/// closed in the middle of the set moves up to half of it (512 KiB at this
/// bound), where one at either end, the usual case, moves a few.
const MAX_RECV_FRAGMENTS: usize = 65_536;

/// Where received stream bytes wait to be read.
pub trait RecvStorage: Send {
    /// What the caller passes along with each datagram so the storage can keep its
    /// memory instead of copying (an mbuf, say). `()` for copying storage.
    type Packet;
    /// Stores stream bytes `[offset, offset + data.len())`, all new and within the
    /// credit. `data` is a sub-slice of the datagram that `packet` holds.
    fn insert(&mut self, offset: u64, data: &[u8], packet: &Self::Packet);
    /// Whether `pieces` more stored runs fit the storage's memory budget (storage
    /// that keeps packet memory must bound how much of a shared pool one connection
    /// pins). `at_head`: the data continues the in-order bytes (readable at once),
    /// which a budget must always leave room for, or out-of-order data could fill
    /// it and block the hole's repair for good. A refusal drops the packet
    /// unacknowledged. Default: always.
    fn has_room(&self, pieces: usize, at_head: bool) -> bool {
        let _ = (pieces, at_head);
        true
    }
    /// Copies stream bytes `[offset, offset + out.len())`, all inserted before, into `out`.
    fn read(&mut self, offset: u64, out: &mut [u8]);
    /// Bytes below `offset` will not be read again and can be freed.
    fn release_to(&mut self, offset: u64);
    /// Raises the capacity to `capacity` bytes (receive-window autotuning), keeping
    /// whatever was inserted in `held`; false if the storage cannot (the default: a
    /// storage whose memory is bounded elsewhere, e.g. a packet pool, opts in).
    fn grow(&mut self, capacity: u64, held: std::ops::Range<u64>) -> bool {
        let _ = (capacity, held);
        false
    }
    /// Lowers the capacity to `capacity` bytes: the storage may free memory once
    /// the bytes it holds fit. Credit already given stays valid: bytes below
    /// `credit_end` may still arrive. Default: nothing to do.
    fn shrink(&mut self, capacity: u64, credit_end: u64) {
        let _ = (capacity, credit_end);
    }
}

/// The default storage: a byte ring of the buffer's capacity (one copy in, one
/// out), whose memory grows with the span of bytes held.
#[derive(Debug, Clone)]
pub struct RecvRing {
    ring: OffsetRing,
    /// Bytes below were read (released).
    start: u64,
    /// One past the highest byte inserted.
    end: u64,
    /// After a shrink, the highest offset the peer may still send: the memory is
    /// given back once the limit covers it from the read offset.
    credit_end: u64,
}

impl RecvRing {
    /// A ring of `capacity` bytes (must equal the receive buffer's capacity),
    /// allocated as data arrives.
    pub fn new(capacity: usize) -> Self {
        Self {
            ring: OffsetRing::new(capacity),
            start: 0,
            end: 0,
            credit_end: 0,
        }
    }

    /// Bytes of memory the ring holds now (at most its capacity).
    pub fn allocated(&self) -> usize {
        self.ring.allocated()
    }

    /// After a shrink: gives memory back once every byte the peer may still send
    /// fits the lower limit from the read offset (not before, or bytes arriving
    /// under the old credit would grow it again).
    fn fit(&mut self) {
        if self.start + self.ring.limit() as u64 >= self.credit_end {
            self.ring.fit(self.start..self.end.max(self.start));
        }
    }
}

impl RecvStorage for RecvRing {
    type Packet = ();

    fn insert(&mut self, offset: u64, data: &[u8], _: &()) {
        let end = self.end.max(self.start);
        self.ring.put(self.start..end, offset, data);
        self.end = end.max(offset + data.len() as u64);
    }

    fn read(&mut self, offset: u64, out: &mut [u8]) {
        self.ring.get(offset, out);
    }

    fn release_to(&mut self, offset: u64) {
        self.start = self.start.max(offset);
        self.fit();
    }

    fn grow(&mut self, capacity: u64, _held: std::ops::Range<u64>) -> bool {
        self.ring
            .raise_limit(usize::try_from(capacity).unwrap_or(usize::MAX));
        true
    }

    fn shrink(&mut self, capacity: u64, credit_end: u64) {
        self.ring
            .lower_limit(usize::try_from(capacity).unwrap_or(usize::MAX));
        self.credit_end = credit_end;
        self.fit();
    }
}

/// The credit `memory` pays for (memory counted at `buffer_payload` stream
/// bytes per packet buffer) when the peer's datagrams carry `grain` bytes each:
/// every datagram pins a buffer whatever its size, so a peer sending smaller
/// datagrams gets proportionally less.
pub fn credit_of_memory(memory: u64, buffer_payload: u64, grain: u64) -> u64 {
    let scaled = u128::from(memory) * u128::from(grain) / u128::from(buffer_payload.max(1));
    u64::try_from(scaled).unwrap_or(u64::MAX)
}

/// Reassembly state over a storage.
#[derive(Debug, Clone)]
pub(crate) struct RecvBuffer<R: RecvStorage = RecvRing> {
    storage: R,
    capacity: u64,
    /// Next offset the application reads.
    read: u64,
    received: RangeSet,
    /// Most credit beyond `read` the owner's memory budget allows.
    budget: u64,
    /// The limit before the budget last shrank (credit given is never taken back).
    floor: u64,
    /// The credit beyond `read` is a whole number of these (a full datagram's
    /// payload) when it is at least one: see [`RecvBuffer::set_grain`].
    grain: u64,
}

impl RecvBuffer<RecvRing> {
    /// A copying buffer of `capacity` bytes.
    #[cfg(test)]
    pub(crate) fn new(capacity: usize) -> Self {
        Self::with_storage(RecvRing::new(capacity), capacity as u64)
    }
}

impl<R: RecvStorage> RecvBuffer<R> {
    /// A buffer crediting the peer with `capacity` bytes, storing them in `storage`.
    pub(crate) fn with_storage(storage: R, capacity: u64) -> Self {
        Self {
            storage,
            capacity: capacity.max(1),
            read: 0,
            // Room for some out-of-order holes before reassembly allocates.
            received: RangeSet::with_capacity(64),
            budget: u64::MAX,
            floor: 0,
            grain: 1,
        }
    }

    /// Gives credit in whole datagrams of `payload` bytes. A sender filling its
    /// credit cuts a datagram short at the credit's edge; with the edge off the
    /// grid of its full datagrams (read offsets move by whole datagrams when a
    /// runtime hands them to its reader) every later datagram arrived in two
    /// pieces, each holding a packet buffer: a credit of three datagrams came as
    /// five segments, beyond what the receiver's storage holds (1000 flows over
    /// memif: 86,240 datagrams refused and sent again).
    /// `advertised`: the credit the peer was already given, which stays valid
    /// (the handshake tells a client the peer's datagram size after its Init gave
    /// credit at its own).
    pub(crate) fn set_grain(&mut self, payload: u64, advertised: u64) {
        let payload = payload.max(1);
        if payload != self.grain {
            self.floor = self.floor.max(advertised);
            self.grain = payload;
        }
    }

    /// The storage.
    pub(crate) fn storage(&self) -> &R {
        &self.storage
    }

    /// Capacity in bytes.
    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Most disjoint received ranges held at once: one per
    /// [`CREDIT_BYTES_PER_FRAGMENT`] of the credit given, from
    /// [`MIN_RECV_FRAGMENTS`] to [`MAX_RECV_FRAGMENTS`].
    pub(crate) fn max_fragments(&self) -> usize {
        let credit = self.limit() - self.read;
        usize::try_from(credit / CREDIT_BYTES_PER_FRAGMENT)
            .unwrap_or(usize::MAX)
            .clamp(MIN_RECV_FRAGMENTS, MAX_RECV_FRAGMENTS)
    }

    /// Distinct stream bytes received so far, in order or not.
    pub(crate) fn received_bytes(&self) -> u64 {
        self.read
            + self
                .received
                .iter()
                .map(|r| r.end.saturating_sub(r.start.max(self.read)))
                .sum::<u64>()
    }

    /// Raises the capacity (the credit) to `capacity` if the storage can grow;
    /// returns whether it did.
    pub(crate) fn grow(&mut self, capacity: u64) -> bool {
        if capacity <= self.capacity {
            return false;
        }
        let held = self.read..self.read + self.capacity;
        if self.storage.grow(capacity, held) {
            self.capacity = capacity;
            true
        } else {
            false
        }
    }

    /// Lowers the capacity (the credit beyond the read offset) to `capacity`;
    /// `advertised`: the credit the peer was already given, which stays valid.
    pub(crate) fn shrink(&mut self, capacity: u64, advertised: u64) {
        if capacity >= self.capacity {
            return;
        }
        self.floor = self.floor.max(advertised);
        self.capacity = capacity.max(1);
        let credit_end = self.limit();
        self.storage.shrink(self.capacity, credit_end);
    }

    /// Offset of the next byte the application reads.
    pub(crate) fn read_offset(&self) -> u64 {
        self.read
    }

    /// Every byte below this offset has arrived.
    pub(crate) fn contiguous_end(&self) -> u64 {
        self.received.contiguous_end(self.read)
    }

    /// One past the highest byte received (or read): a final size below it is a
    /// protocol violation.
    pub(crate) fn highest_received(&self) -> u64 {
        self.received
            .max()
            .map_or(self.read, |m| (m + 1).max(self.read))
    }

    /// Bytes ready to read in order.
    pub(crate) fn readable(&self) -> u64 {
        self.contiguous_end() - self.read
    }

    /// Highest offset that may be stored: the credit limit. It never moves back:
    /// credit already given stays valid when the budget shrinks.
    pub(crate) fn limit(&self) -> u64 {
        (self.read + self.window()).max(self.floor)
    }

    /// The credit this buffer gives beyond the read offset: its capacity, or less
    /// when its owner's memory budget allows less.
    pub(crate) fn window(&self) -> u64 {
        let w = self.capacity.min(self.budget);
        if w >= self.grain {
            w - w % self.grain
        } else {
            w
        }
    }

    /// Caps the credit at `bytes` beyond the read offset (the connection's share of
    /// a memory budget, e.g. a packet pool shared by every connection of a
    /// runtime). `advertised`: the credit the peer was already given, which stays
    /// valid.
    pub(crate) fn set_budget(&mut self, bytes: u64, advertised: u64) {
        self.floor = advertised;
        self.budget = bytes.max(1);
    }

    /// Stores the parts of `[offset, offset + data.len())` not yet received; the
    /// caller guarantees the range ends at or below [`RecvBuffer::limit`]. Returns
    /// how many bytes were new (0 also when refused, see [`RecvBuffer::try_insert`]).
    #[cfg(test)]
    pub(crate) fn insert(&mut self, offset: u64, data: &[u8], packet: &R::Packet) -> u64 {
        self.try_insert(offset, data, packet).unwrap_or(0)
    }

    /// Stores the parts of `[offset, offset + data.len())` not yet received (the
    /// caller guarantees the range ends at or below [`RecvBuffer::limit`]): how many
    /// bytes were new, or `None` when the data was refused: it would
    /// open a range beyond [`RecvBuffer::max_fragments`] or exceed the storage's budget
    /// ([`RecvStorage::has_room`]).
    pub(crate) fn try_insert(
        &mut self,
        offset: u64,
        data: &[u8],
        packet: &R::Packet,
    ) -> Option<u64> {
        let end = offset + data.len() as u64;
        debug_assert!(end <= self.limit());
        let start = offset.max(self.read);
        if start >= end {
            return Some(0);
        }
        // Data continuing the in-order bytes is always taken (the fragment limit
        // would otherwise block the repair of the first hole for good).
        let at_head = start <= self.contiguous_end();
        if !at_head
            && self.received.len() >= self.max_fragments()
            && !self.received.touches(start..end)
        {
            return None;
        }
        let mut pieces = 0;
        self.received.for_each_missing(start..end, |_| pieces += 1);
        if pieces > 0 && !self.storage.has_room(pieces, at_head) {
            return None;
        }
        let mut new = 0;
        let storage = &mut self.storage;
        self.received.for_each_missing(start..end, |gap| {
            let part = &data[(gap.start - offset) as usize..(gap.end - offset) as usize];
            storage.insert(gap.start, part, packet);
            new += gap.end - gap.start;
        });
        self.received.insert(start..end);
        Some(new)
    }

    /// Reads in-order bytes into `out`; returns how many.
    pub(crate) fn read(&mut self, out: &mut [u8]) -> usize {
        let n = (self.readable() as usize).min(out.len());
        if n == 0 {
            return 0;
        }
        self.storage.read(self.read, &mut out[..n]);
        self.read += n as u64;
        self.received.remove_below(self.read);
        self.storage.release_to(self.read);
        n
    }

    /// Marks up to `n` in-order bytes read without copying (their memory was taken
    /// out of the storage); returns how many.
    pub(crate) fn skip(&mut self, n: u64) -> u64 {
        let n = self.readable().min(n);
        if n == 0 {
            return 0;
        }
        self.read += n;
        self.received.remove_below(self.read);
        self.storage.release_to(self.read);
        n
    }

    /// Mutable storage.
    pub(crate) fn storage_mut(&mut self) -> &mut R {
        &mut self.storage
    }

    /// Number of disjoint received ranges (1 when in order): a measure of reordering.
    #[cfg(test)]
    pub(crate) fn fragments(&self) -> usize {
        self.received.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lower capacity keeps the credit already given (bytes up to it are still
    /// taken), lowers the limit as reads pass it, and gives the copying ring's
    /// memory back once everything the peer may still send fits.
    #[test]
    fn shrinking_keeps_the_credit_given_and_frees_memory_once_covered() {
        let byte = |o: u64| (o % 251) as u8;
        let data = |r: std::ops::Range<u64>| r.map(byte).collect::<Vec<u8>>();
        let mut b = RecvBuffer::new(1000);
        assert!(b.grow(4000));
        assert_eq!(b.insert(0, &data(0..3000), &()), 3000);
        b.shrink(1000, b.limit());
        assert_eq!(b.limit(), 4000, "credit given stays");
        assert_eq!(b.insert(3000, &data(3000..4000), &()), 1000);
        assert_eq!(b.storage().allocated(), 4000);
        let mut out = vec![0u8; 2500];
        assert_eq!(b.read(&mut out), 2500);
        assert_eq!(out, data(0..2500));
        assert_eq!(b.limit(), 4000);
        assert_eq!(b.storage().allocated(), 4000, "bytes up to 4000 may come");
        let mut out = vec![0u8; 600];
        assert_eq!(b.read(&mut out), 600);
        assert_eq!(b.limit(), 4100, "the smaller window from the read offset");
        assert_eq!(b.storage().allocated(), 1000, "memory given back");
        assert_eq!(b.insert(4000, &data(4000..4100), &()), 100);
        let mut out = vec![0u8; 1000];
        assert_eq!(b.read(&mut out), 1000);
        assert_eq!(out, data(3100..4100));
    }

    /// The received-range limit follows the credit: 4,096 up to 4 MiB, one per
    /// KiB beyond, 65,536 from 64 MiB; a read moves the credit with it.
    #[test]
    fn the_range_limit_follows_the_credit_within_its_bounds() {
        for (credit, limit) in [
            (1u64 << 20, 4_096),
            (16 << 20, 16_384),
            (64 << 20, 65_536),
            (1 << 30, 65_536),
        ] {
            let b = RecvBuffer::new(credit as usize);
            assert_eq!(b.max_fragments(), limit, "credit {credit}");
            assert_eq!(b.storage().allocated(), 0, "no memory before data");
        }
        let mut b = RecvBuffer::new(16 << 20);
        b.set_budget(8 << 20, 0);
        assert_eq!(
            b.max_fragments(),
            8_192,
            "a budget below the capacity binds"
        );
    }

    #[test]
    fn reassembles_out_of_order_and_ignores_duplicates() {
        let mut b = RecvBuffer::new(8);
        assert_eq!(b.insert(4, b"efgh", &()), 4);
        assert_eq!(b.readable(), 0);
        assert_eq!(b.insert(0, b"abcd", &()), 4);
        assert_eq!(b.insert(2, b"cdef", &()), 0, "duplicate");
        let mut out = [0u8; 5];
        assert_eq!(b.read(&mut out), 5);
        assert_eq!(&out, b"abcde");
        assert_eq!(b.limit(), 13);
        assert_eq!(b.insert(8, b"ijklm", &()), 5, "wraps");
        let mut out = [0u8; 16];
        assert_eq!(b.read(&mut out), 8);
        assert_eq!(&out[..8], b"fghijklm");
    }

    /// Credit comes in whole datagrams (its edge stays on the sender's grid of
    /// full datagrams), less than one only when less is allowed at all.
    #[test]
    fn credit_comes_in_whole_datagrams() {
        let mut b = RecvBuffer::new(10_000);
        b.set_grain(1432, 0);
        assert_eq!(b.limit(), 6 * 1432);
        b.set_budget(3000, 0);
        assert_eq!(b.limit(), 2 * 1432);
        b.set_budget(1000, 0);
        assert_eq!(b.limit(), 1000);
    }

    /// A smaller grain learnt after credit was given keeps that credit: the
    /// limit never moves back, and later credit ends on the new grid.
    #[test]
    fn a_new_grain_keeps_the_credit_given() {
        let mut b = RecvBuffer::new(8600);
        b.set_grain(1432, 0);
        let given = b.limit();
        assert_eq!(given, 6 * 1432);
        b.set_grain(1024, given);
        assert_eq!(b.limit(), given, "8 datagrams of 1024 would be less");
        // Reading on the new grid moves the edge onto it.
        b.insert(0, &[0; 1024], &());
        b.read(&mut [0; 1024]);
        assert_eq!(b.limit(), 1024 + 8 * 1024);
        assert!(b.limit() > given);
    }
}
