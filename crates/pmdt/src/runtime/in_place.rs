//! In-place I/O on a [`Stream`]: the application writes straight into packet
//! memory and reads received payloads where they arrived, next to the copying
//! `Read`/`Write` calls (which it may mix with these freely).
//!
//! - Sending: [`Stream::reserve`] takes a buffer from the link's packet pool (an
//!   mbuf on DPDK) holding up to one packet's payload, the application fills it
//!   ([`WriteBuf::spare`] + [`WriteBuf::advance`], or `std::io::Write`), and
//!   [`Stream::submit`] queues it: the transport sends and retransmits that memory;
//!   no copy is made on this side.
//! - Receiving: [`Stream::read_segment`] hands over the next received payload as a
//!   [`ReadSegment`], a guard that borrows the packet memory it arrived in; dropping
//!   it returns the memory to the pool and counts the bytes as read (the sender's
//!   credit grows again). Holding segments holds packet memory: a reader keeping
//!   many is throttled like one that does not read. [`Stream::read_in_place`]
//!   hands a batch of received payloads to a closure where they arrived and
//!   releases them after it, for a reader that consumes bytes at once (hashes,
//!   checks, writes them): no guard per payload.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use pmdt::link::memory::MemoryLink;
//! use pmdt::link::Link;
//! use pmdt::runtime::{Backend, Runtime};
//!
//! let (a, b) = MemoryLink::pair("10.0.0.1:1".parse()?, "10.0.0.2:2".parse()?, 1024);
//! let client = Runtime::builder()
//!     .backend(Backend::Links(vec![Box::new(a) as Box<dyn Link>]))
//!     .start()?;
//! let server = Runtime::builder()
//!     .backend(Backend::Links(vec![Box::new(b) as Box<dyn Link>]))
//!     .start()?;
//! let listener = server.listen(0)?;
//! let reader = std::thread::spawn(move || -> std::io::Result<Vec<u8>> {
//!     let mut s = listener.accept()?;
//!     let mut got = Vec::new();
//!     // Each segment is a received payload in packet memory, released on drop.
//!     while let Some(seg) = s.read_segment()? {
//!         got.extend_from_slice(&seg);
//!     }
//!     Ok(got)
//! });
//! let mut s = client.connect("10.0.0.2:2".parse()?)?;
//! for i in 0..100u8 {
//!     let mut buf = s.reserve()?; // packet memory for up to one payload
//!     let n = buf.remaining().min(1000);
//!     buf.spare()[..n].fill(i); // written in place
//!     buf.advance(n);
//!     s.submit(buf)?; // sent from this memory, no copy
//! }
//! s.close()?;
//! let got = reader.join().unwrap()?;
//! assert_eq!(got.len(), 100_000);
//! assert!(got.chunks(1000).enumerate().all(|(i, c)| c.iter().all(|&b| b == i as u8)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io;
use std::ops::Deref;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::shared::StreamShared;
use super::storage::Segment;
use super::stream::Stream;
use crate::link::WriteBuf;

/// A received payload, read in the packet memory it arrived in (see the module
/// documentation). Dereferences to its bytes; dropping it releases the memory.
pub struct ReadSegment {
    seg: Segment,
    shared: Arc<StreamShared>,
}

impl ReadSegment {
    /// The bytes (also through `Deref`).
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.seg.buf.bytes()[self.seg.pos..self.seg.pos + self.seg.len]
    }
}

impl Deref for ReadSegment {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        self.bytes()
    }
}

impl AsRef<[u8]> for ReadSegment {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

impl fmt::Debug for ReadSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReadSegment({} bytes)", self.seg.len)
    }
}

impl Drop for ReadSegment {
    fn drop(&mut self) {
        // Read once released: until then the reader holds the packet memory.
        self.shared.note_read(self.seg.len);
    }
}

/// A buffer [`Stream::try_submit`] could not queue, with the reason.
pub struct SubmitError {
    error: io::Error,
    buf: WriteBuf,
}

impl SubmitError {
    /// Why (`WouldBlock`: the stream's ring is full; otherwise the connection's
    /// end, as for `write`).
    pub fn error(&self) -> &io::Error {
        &self.error
    }

    /// The buffer back, to submit again later.
    pub fn into_buf(self) -> WriteBuf {
        self.buf
    }
}

impl fmt::Debug for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubmitError")
            .field("error", &self.error)
            .field("buf", &self.buf)
            .finish()
    }
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "submit {} bytes: {}", self.buf.len(), self.error)
    }
}

impl std::error::Error for SubmitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<SubmitError> for io::Error {
    fn from(e: SubmitError) -> io::Error {
        e.error
    }
}

impl Stream {
    /// Packet memory to fill, for up to one packet's payload, without blocking.
    /// `WouldBlock` before the handshake completed, or when the pool's free part
    /// is down to what is kept for receiving (acknowledgements free more);
    /// `Unsupported` when the link's pool
    /// only copies (see [`PacketPool::take_writable`](crate::link::PacketPool)).
    pub fn try_reserve(&mut self) -> io::Result<WriteBuf> {
        self.check_writable()?;
        if !self.is_established() {
            // The handshake decides the buffer's size (the peer's datagram).
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.pool.attach_thread();
        if !self.pool.writable() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "this link's packet pool hands out no memory to write in place",
            ));
        }
        self.pool
            .take_writable(self.shared.chunk(), self.reserve, &mut self.stash)
            .ok_or_else(|| io::ErrorKind::WouldBlock.into())
    }

    /// Whether this stream's packet memory is summed for a UDP checksum taken
    /// in software (a DPDK port without checksum offload, memif or TAP): then
    /// a copying `write` sums the bytes as it copies them in, where memory
    /// filled in place is summed in a second pass at [`Stream::submit`], so
    /// for data the application has to produce anyway (a pattern, a file's
    /// read buffer) the copy costs no more than writing in place. On kernel
    /// UDP and on offloading ports, false: writing in place saves the copy.
    pub fn sums_payloads(&self) -> bool {
        self.pool.sums_payloads()
    }

    /// Like [`Stream::try_reserve`], waiting for packet memory.
    pub fn reserve(&mut self) -> io::Result<WriteBuf> {
        loop {
            match self.try_reserve() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.is_established() {
                        self.wait_for_memory();
                    } else {
                        self.wait_io(true);
                    }
                }
                r => return r,
            }
        }
    }

    /// Queues a filled buffer for sending without blocking (an empty one is
    /// dropped). Fails with `WouldBlock`, handing the buffer back, when the ring
    /// to the I/O loop or this stream's share of packet memory is full.
    pub fn try_submit(&mut self, buf: WriteBuf) -> Result<(), SubmitError> {
        if let Err(error) = self.check_writable() {
            return Err(SubmitError { error, buf });
        }
        if buf.is_empty() {
            return Ok(());
        }
        if self.tx.slots() == 0 || !self.shared.may_write() {
            return Err(SubmitError {
                error: io::ErrorKind::WouldBlock.into(),
                buf,
            });
        }
        let len = buf.len() as u64;
        if self.tx.push(buf.freeze()).is_err() {
            unreachable!("a slot was free and this is the only producer");
        }
        self.shared.ring_bytes.queued(len);
        self.shared.ring_doorbell();
        if self.tx.slots().is_multiple_of(32) {
            // Run to completion: send a burst's worth now and then.
            self.shared.waiter.nudge();
        }
        Ok(())
    }

    /// Like [`Stream::try_submit`], parking the thread until the buffer is queued.
    pub fn submit(&mut self, mut buf: WriteBuf) -> io::Result<()> {
        loop {
            match self.try_submit(buf) {
                Ok(()) => return Ok(()),
                Err(e) if e.error.kind() == io::ErrorKind::WouldBlock => {
                    buf = e.buf;
                    self.wait_io(true);
                }
                Err(e) => return Err(e.error),
            }
        }
    }

    /// The next received payload in place, without blocking: `Ok(None)` at the end
    /// of the stream, `WouldBlock` when nothing arrived yet. Continues where a
    /// copying read left off.
    pub fn try_read_segment(&mut self) -> io::Result<Option<ReadSegment>> {
        // This thread frees the segments it drops.
        self.pool.attach_thread();
        // Flags before the ring (see `try_read`).
        let fin = self.shared.peer_finished.load(Ordering::Acquire);
        let closed = self.shared.closed_flag.load(Ordering::Acquire);
        if self.cur.is_none() && self.rx.is_empty() {
            // Run to completion: take what arrived (and acknowledge it).
            self.shared.waiter.nudge();
        }
        if let Some(seg) = self.cur.take().or_else(|| self.rx.pop().ok()) {
            return Ok(Some(ReadSegment {
                seg,
                shared: self.shared.clone(),
            }));
        }
        self.nothing_to_read(fin, closed).map(|()| None)
    }

    /// Like [`Stream::try_read_segment`], parking the thread until a payload, the
    /// end of the stream, or an error.
    pub fn read_segment(&mut self) -> io::Result<Option<ReadSegment>> {
        loop {
            match self.try_read_segment() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_io(false),
                r => return r,
            }
        }
    }

    /// Hands the payloads received so far to `visit` where they arrived, in
    /// order, without blocking: whole payloads, at least one, while their total
    /// stays within `max` bytes. Returns the bytes visited; `Ok(0)` at the end
    /// of the stream, `WouldBlock` when nothing arrived yet. Continues where a
    /// copying read left off.
    ///
    /// The zero-copy read for a reader that consumes the bytes at once (hashes,
    /// checks or writes them): no copy, as with [`Stream::try_read_segment`],
    /// and the batch is reported read once, where a [`ReadSegment`] reports
    /// each payload as it drops (a full memory fence apiece).
    pub fn try_read_in_place(
        &mut self,
        max: usize,
        mut visit: impl FnMut(&[u8]),
    ) -> io::Result<usize> {
        // This thread frees the payloads it visits.
        self.pool.attach_thread();
        // Flags before the ring (see `try_read`).
        let fin = self.shared.peer_finished.load(Ordering::Acquire);
        let closed = self.shared.closed_flag.load(Ordering::Acquire);
        if self.cur.is_none() && self.rx.is_empty() {
            // Run to completion: take what arrived (and acknowledge it).
            self.shared.waiter.nudge();
        }
        let mut done = 0;
        loop {
            let seg = match self.cur.take() {
                Some(s) => s,
                None => match self.rx.pop() {
                    Ok(s) => s,
                    Err(_) => break,
                },
            };
            if done > 0 && done + seg.len > max {
                self.cur = Some(seg);
                break;
            }
            visit(&seg.buf.bytes()[seg.pos..seg.pos + seg.len]);
            done += seg.len;
            // `seg` drops here: its memory returns to its pool.
        }
        if done > 0 {
            self.shared.note_read(done);
            return Ok(done);
        }
        self.nothing_to_read(fin, closed).map(|()| 0)
    }

    /// Like [`Stream::try_read_in_place`], parking the thread until a payload,
    /// the end of the stream, or an error.
    pub fn read_in_place(&mut self, max: usize, mut visit: impl FnMut(&[u8])) -> io::Result<usize> {
        loop {
            match self.try_read_in_place(max, &mut visit) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_io(false),
                r => return r,
            }
        }
    }
}
