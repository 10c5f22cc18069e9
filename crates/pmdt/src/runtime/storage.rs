//! Connection storage over packet buffers: the send side keeps the buffers the
//! application's data was written into (one per packet payload) until acknowledged;
//! the receive side keeps references to the datagrams payloads arrived in until the
//! I/O loop hands them to the application.

use std::cell::Cell;
use std::collections::VecDeque;

use crate::link::{Buffer, BufferPool};
use pmdt_proto::{RecvStorage, SendStorage};

/// Buffers a connection's send storage has room for at first; past them it
/// makes room for a whole buffer's at once. Room for the whole send buffer up
/// front (about 5800 entries for 8 MiB, 227 KiB) was touched page by page as
/// the queue turned, for every connection of a sender whatever it kept
/// unacknowledged (with the sent-packet tracking's, about 200 MiB of a
/// 1000-flow sender's 560-580 MiB resident).
const INITIAL_SEND_CHUNKS: usize = 64;

/// Buffers `cap` bytes take in chunks of `chunk` (at most 65,537).
fn chunks_for(cap: u64, chunk: usize) -> usize {
    (cap as usize / chunk.max(1)).min(1 << 16) + 1
}

/// Unacknowledged stream bytes as a queue of whole buffers.
pub struct ChunkSend {
    chunks: VecDeque<(u64, Buffer)>,
    /// Index of the chunk found last: sends walk forward, so the next lookup is
    /// almost always this one or the next.
    hint: Cell<usize>,
    start: u64,
    end: u64,
    cap: u64,
    pool: BufferPool,
    chunk: usize,
    /// Buffers the whole of `cap` takes in full-size chunks: the room made
    /// at once when the first runs out (growing step by step would allocate
    /// again at each new peak of the unacknowledged data).
    most: usize,
}

impl ChunkSend {
    /// Storage for up to `cap` bytes; `pool` and `chunk` serve [`SendStorage::write`]
    /// (copying writes, used only when data does not arrive as buffers).
    ///
    /// The queue of buffers starts with room for 64 of them, and
    /// for the whole of `cap` once it holds more.
    pub fn new(cap: u64, pool: BufferPool, chunk: usize) -> Self {
        let most = chunks_for(cap, chunk);
        Self {
            chunks: VecDeque::with_capacity(most.min(INITIAL_SEND_CHUNKS)),
            most,
            hint: Cell::new(0),
            start: 0,
            end: 0,
            cap,
            pool,
            chunk,
        }
    }

    /// Free bytes.
    pub fn free(&self) -> u64 {
        self.cap - (self.end - self.start)
    }

    /// Appends a buffer of stream bytes; hands it back if it does not fit.
    pub fn push(&mut self, b: Buffer) -> Result<usize, Buffer> {
        let n = b.bytes().len();
        if n == 0 {
            return Ok(0);
        }
        if n as u64 > self.free() {
            return Err(b);
        }
        if self.chunks.len() == self.chunks.capacity() && self.chunks.capacity() < self.most {
            self.chunks.reserve_exact(self.most - self.chunks.len());
        }
        self.chunks.push_back((self.end, b));
        self.end += n as u64;
        Ok(n)
    }

    /// The buffer holding stream offset `offset` and the offset's position in it.
    pub fn chunk_at(&self, offset: u64) -> Option<(&Buffer, usize)> {
        let h = self.hint.get();
        let hit = |i: usize| {
            let (o, b) = self.chunks.get(i)?;
            let pos = offset.checked_sub(*o)? as usize;
            (pos < b.bytes().len()).then_some((b, pos))
        };
        if let Some(found) = hit(h) {
            return Some(found);
        }
        if let Some(found) = hit(h + 1) {
            self.hint.set(h + 1);
            return Some(found);
        }
        let i = self
            .chunks
            .partition_point(|(o, _)| *o <= offset)
            .checked_sub(1)?;
        self.hint.set(i);
        hit(i)
    }
}

impl SendStorage for ChunkSend {
    fn capacity(&self) -> u64 {
        self.cap
    }
    /// Grows at once (chunks are packet buffers, nothing moves): the runtime keeps
    /// what a connection holds within its share of the pool.
    fn grow(&mut self, capacity: u64) -> u64 {
        self.cap = self.cap.max(capacity);
        self.most = self.most.max(chunks_for(self.cap, self.chunk));
        self.cap
    }
    fn start(&self) -> u64 {
        self.start
    }
    fn end(&self) -> u64 {
        self.end
    }
    fn write(&mut self, data: &[u8]) -> usize {
        let mut done = 0;
        while done < data.len() {
            let want = (data.len() - done)
                .min(self.chunk)
                .min(self.free() as usize);
            if want == 0 {
                break;
            }
            let Some(b) = self.pool.copy_from(&data[done..], want) else {
                break;
            };
            match self.push(b) {
                Ok(n) => done += n,
                Err(_) => break,
            }
        }
        done
    }
    fn contiguous_len(&self, offset: u64) -> u64 {
        self.chunk_at(offset)
            .map_or(0, |(b, pos)| (b.bytes().len() - pos) as u64)
    }
    fn copy_out(&self, offset: u64, out: &mut [u8]) {
        let mut done = 0;
        while done < out.len() {
            let Some((b, pos)) = self.chunk_at(offset + done as u64) else {
                return;
            };
            let k = (b.bytes().len() - pos).min(out.len() - done);
            out[done..done + k].copy_from_slice(&b.bytes()[pos..pos + k]);
            done += k;
        }
    }
    fn release_to(&mut self, offset: u64) {
        while let Some((o, b)) = self.chunks.front() {
            if o + b.bytes().len() as u64 > offset {
                break;
            }
            self.chunks.pop_front();
            self.hint.set(self.hint.get().saturating_sub(1));
        }
        self.start = self.start.max(offset.min(self.end));
    }
}

/// A received segment: `buf.bytes()[pos..pos + len]` holds stream bytes from `offset`.
pub struct Segment {
    /// Stream offset of the first byte.
    pub offset: u64,
    /// The datagram memory.
    pub buf: Buffer,
    /// Position in the buffer.
    pub pos: usize,
    /// Length.
    pub len: usize,
}

/// Received stream bytes as references to the datagrams they arrived in, sorted by
/// offset (arrivals in order append at the back; no allocation once warm).
pub struct ChunkRecv {
    segs: VecDeque<Segment>,
    /// Most out-of-order segments held at once by the credit: each pins a packet
    /// buffer of a pool shared by every connection of the port, so one peer
    /// sending tiny segments must not drain it. In-order data may use
    /// [`HEAD_RESERVE`] more.
    max_segs: usize,
    /// The owner's cap on held segments (its share of the pool in buffers), if
    /// set: it bounds both limits, whatever the credit.
    cap: Option<usize>,
    /// Stream offset the reader has consumed up to (from `release_to`).
    read: u64,
}

/// Receive credit per held segment the budget allows: full-size datagrams carry
/// ~1400 bytes, so this leaves room for smaller legitimate segments.
const CREDIT_BYTES_PER_SEGMENT: u64 = 512;
/// Segments always allowed whatever the credit.
const MIN_SEGMENT_BUDGET: usize = 64;
/// Segments kept for in-order data only, so out-of-order data can never fill the
/// budget and block the repair of the hole before it.
const HEAD_RESERVE: usize = 64;

impl ChunkRecv {
    /// Storage expecting around `cap / 1024` segments, holding at most
    /// `cap / 512 + 64` out of order and 64 more in order (the per-connection
    /// memory budget).
    pub fn new(cap: u64) -> Self {
        Self {
            segs: VecDeque::with_capacity((cap as usize / 1024).min(1 << 16) + 1),
            max_segs: (cap / CREDIT_BYTES_PER_SEGMENT) as usize + MIN_SEGMENT_BUDGET,
            cap: None,
            read: 0,
        }
    }

    /// Caps the segments held at `segments` (packet buffers the owner's memory
    /// budget gives this connection; at least one), in-order data included: a
    /// sixteenth more for in-order data, at least one, so a hole can always be
    /// repaired. Beyond it, data is refused (dropped unacknowledged) until the
    /// reader takes some.
    pub fn set_segment_cap(&mut self, segments: usize) {
        self.cap = Some(segments.max(1));
    }

    /// Takes the first segment if it starts at `offset` (in-order data).
    pub fn pop_at(&mut self, offset: u64) -> Option<Segment> {
        if self.segs.front().is_some_and(|s| s.offset == offset) {
            self.segs.pop_front()
        } else {
            None
        }
    }

    /// Held segments.
    pub fn len(&self) -> usize {
        self.segs.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
}

impl RecvStorage for ChunkRecv {
    type Packet = Buffer;

    /// Grows with the credit (the segment budget follows it); the runtime caps the
    /// credit at the connection's share of the pool.
    fn grow(&mut self, capacity: u64, _held: std::ops::Range<u64>) -> bool {
        self.max_segs = self
            .max_segs
            .max((capacity / CREDIT_BYTES_PER_SEGMENT) as usize + MIN_SEGMENT_BUDGET);
        true
    }

    fn has_room(&self, pieces: usize, at_head: bool) -> bool {
        if at_head && self.segs.front().is_none_or(|s| s.offset > self.read) {
            // Nothing readable is held: this repairs the first hole, which must
            // never be refused (whatever out-of-order data holds, e.g. after the
            // cap was lowered below it), or the stream could never move again.
            return true;
        }
        let (max, reserve) = match self.cap {
            Some(cap) => (self.max_segs.min(cap), (cap / 16).clamp(1, HEAD_RESERVE)),
            None => (self.max_segs, HEAD_RESERVE),
        };
        let limit = if at_head { max + reserve } else { max };
        self.segs.len() + pieces <= limit
    }

    fn insert(&mut self, offset: u64, data: &[u8], packet: &Buffer) {
        let Some(pos) = packet.position_of(data) else {
            debug_assert!(false, "data lies in the packet");
            return;
        };
        let seg = Segment {
            offset,
            buf: packet.share(),
            pos,
            len: data.len(),
        };
        if self.segs.back().is_none_or(|s| s.offset < offset) {
            self.segs.push_back(seg);
        } else {
            let i = self.segs.partition_point(|s| s.offset < offset);
            self.segs.insert(i, seg);
        }
    }

    fn read(&mut self, offset: u64, out: &mut [u8]) {
        let mut done = 0;
        let mut i = self
            .segs
            .partition_point(|s| s.offset + s.len as u64 <= offset);
        while done < out.len() {
            let Some(s) = self.segs.get(i) else {
                return;
            };
            let at = offset + done as u64;
            let skip = (at - s.offset) as usize;
            let k = (s.len - skip).min(out.len() - done);
            out[done..done + k].copy_from_slice(&s.buf.bytes()[s.pos + skip..s.pos + skip + k]);
            done += k;
            i += 1;
        }
    }

    fn release_to(&mut self, offset: u64) {
        self.read = self.read.max(offset);
        while let Some(s) = self.segs.front_mut() {
            let end = s.offset + s.len as u64;
            if end <= offset {
                self.segs.pop_front();
            } else {
                if s.offset < offset {
                    let cut = (offset - s.offset) as usize;
                    s.pos += cut;
                    s.len -= cut;
                    s.offset = offset;
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::HeapPool;

    /// The queue of buffers keeps its first room while the data kept
    /// unacknowledged fits it, then makes room for a whole buffer's at once
    /// (no allocation at each new peak of a transfer).
    #[test]
    fn send_chunks_make_room_for_the_whole_buffer_once_the_first_is_outgrown() {
        let pool = BufferPool::new(HeapPool::new(4096, 64));
        let mut s = ChunkSend::new(1000 * 40, pool, 40);
        for _ in 0..10 {
            assert_eq!(s.write(&[1u8; 40 * 50]), 40 * 50);
            s.release_to(s.end);
        }
        let first = s.chunks.capacity();
        assert!((INITIAL_SEND_CHUNKS..1001).contains(&first), "{first}");
        assert_eq!(s.write(&[1u8; 40 * 80]), 40 * 80);
        let room = s.chunks.capacity();
        assert!(room >= 1001, "{room}");
        s.release_to(s.end);
        assert_eq!(s.write(&[1u8; 40 * 1000]), 40 * 1000);
        assert_eq!(s.chunks.capacity(), room, "allocated again");
    }

    #[test]
    fn send_chunks_are_found_by_offset_and_released() {
        let pool = BufferPool::new(HeapPool::new(16, 64));
        let mut s = ChunkSend::new(100, pool.clone(), 40);
        assert_eq!(s.write(&[1u8; 90]), 90);
        assert_eq!(s.contiguous_len(0), 40);
        assert_eq!(s.contiguous_len(45), 35);
        let (b, pos) = s.chunk_at(85).unwrap();
        assert_eq!((b.bytes().len(), pos), (10, 5));
        let big = pool.copy_from(&[2u8; 20], 20).unwrap();
        assert!(s.push(big).is_err(), "only 10 bytes free");
        // Backwards (a retransmission) and forwards again after the hint moved.
        assert_eq!(s.chunk_at(5).unwrap().1, 5);
        assert_eq!(s.chunk_at(41).unwrap().1, 1);
        assert_eq!(s.chunk_at(79).unwrap().1, 39);
        s.release_to(80);
        assert_eq!(s.start(), 80);
        assert_eq!(s.contiguous_len(80), 10);
        assert!(s.chunk_at(10).is_none(), "released");
    }

    #[test]
    fn recv_segments_sort_read_and_pop_in_order() {
        let pool = HeapPool::new(8, 64);
        let a = Buffer::new(pool.copy_from(b"xxabcdef").unwrap());
        let b = Buffer::new(pool.copy_from(b"ghij").unwrap());
        let mut r = ChunkRecv::new(1024);
        r.insert(6, &b.bytes()[..4], &b);
        r.insert(0, &a.bytes()[2..8], &a);
        let mut out = [0u8; 8];
        r.read(1, &mut out);
        assert_eq!(&out, b"bcdefghi");
        assert!(r.pop_at(1).is_none());
        let s = r.pop_at(0).unwrap();
        assert_eq!(&s.buf.bytes()[s.pos..s.pos + s.len], b"abcdef");
        r.release_to(8);
        let s = r.pop_at(8).unwrap();
        assert_eq!(&s.buf.bytes()[s.pos..s.pos + s.len], b"ij");
        assert!(r.is_empty());
    }
}
