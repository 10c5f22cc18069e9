//! The application's end of a connection: `std::io::Read`/`Write` (blocking, the
//! thread parks; it never spins) plus non-blocking `try_read`/`try_write`. Data
//! moves through two bounded SPSC rings (rtrb) to and from the I/O loop.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::shared::StreamShared;
use super::storage::Segment;
use crate::link::{Buffer, BufferPool, BufferStash};
use pmdt_proto::{CloseReason, ConnectionStats};

/// Buffers a write queues between two polls of the loop in run-to-completion
/// mode (a transmit burst).
const NUDGE_EVERY: usize = 32;

/// An established pmdt connection, as seen by an application thread. Dropping it
/// finishes the stream gracefully in the background (like a socket's close):
/// the peer reads end of stream after the last byte written. An application
/// that stops part way (an error, Ctrl-C) and whose peer must not take what
/// it got for the whole transfer calls [`Stream::reset`] instead.
pub struct Stream {
    pub(crate) shared: Arc<StreamShared>,
    pub(crate) tx: rtrb::Producer<Buffer>,
    pub(crate) rx: rtrb::Consumer<Segment>,
    pub(crate) cur: Option<Segment>,
    pub(crate) pool: BufferPool,
    pub(crate) stash: BufferStash,
    /// Free buffers the application's writes leave in the pool, for receiving
    /// (acks, the peer's data) and the I/O loop.
    pub(crate) reserve: usize,
}

/// Aborts a [`Stream`] from any thread (see [`Stream::abort_handle`]).
#[derive(Clone)]
pub struct AbortHandle {
    shared: Arc<StreamShared>,
}

impl std::fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AbortHandle")
            .field("peer", &self.shared.remote)
            .finish()
    }
}

impl AbortHandle {
    /// Resets the connection with `code` (once; later calls do nothing). The
    /// stream's blocked calls return `ConnectionAborted`.
    pub fn abort(&self, code: u32) {
        let _ = self.shared.reset.compare_exchange(
            0,
            (1u64 << 32) | code as u64,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        self.shared.ring_doorbell();
    }
}

/// Reads a [`Stream`]'s statistics and state from any thread (interval reports,
/// telemetry, supervisors) while another thread reads or writes it.
#[derive(Clone)]
pub struct StatsHandle {
    shared: Arc<StreamShared>,
}

impl std::fmt::Debug for StatsHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsHandle")
            .field("peer", &self.shared.remote)
            .finish()
    }
}

impl StatsHandle {
    /// The peer's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.shared.remote
    }

    /// Statistics of the connection, as [`Stream::stats`] (refreshed by the I/O loop
    /// every 100 ms and at close).
    pub fn stats(&self) -> ConnectionStats {
        self.shared
            .stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Why the connection ended, once it has (as [`Stream::close_reason`]); the
    /// statistics then hold everything sent and received (the closing period's
    /// Close may still add a packet).
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.close_reason()
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("peer", &self.shared.remote)
            .field("closed", &self.shared.close_reason())
            .finish()
    }
}

impl Stream {
    /// The peer's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.shared.remote
    }

    /// Why the connection ended, once it has: [`CloseReason::Graceful`] as soon
    /// as a graceful close completed (every byte acknowledged both ways), while
    /// the I/O loop keeps the connection for its closing period.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.close_reason()
    }

    /// Whether the handshake completed (streams from [`Runtime::connect`] and
    /// `accept` always are; a [`Session`]'s `connect` returns at once).
    ///
    /// [`Runtime::connect`]: super::Runtime::connect
    /// [`Session`]: super::Session
    pub fn is_established(&self) -> bool {
        self.shared.connected.load(Ordering::Acquire)
    }

    /// Statistics of the connection (refreshed by the I/O loop every 100 ms and at
    /// close).
    pub fn stats(&self) -> ConnectionStats {
        self.shared
            .stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn wait_established(&self, timeout: Option<Duration>) -> io::Result<()> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if self.shared.connected.load(Ordering::Acquire) {
                return Ok(());
            }
            if let Some(r) = self.shared.close_reason() {
                return Err(io::Error::from(r));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "pmdt connect: no answer within the timeout",
                ));
            }
            let s = &self.shared;
            s.waiter.wait(|| {
                s.connected.load(Ordering::Acquire) || s.closed_flag.load(Ordering::Acquire)
            });
        }
    }

    pub(super) fn check_writable(&self) -> io::Result<()> {
        if let Some(r) = self.shared.close_reason() {
            return Err(io::Error::from(r));
        }
        if self.shared.finish.load(Ordering::Relaxed) {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "pmdt stream already finished",
            ));
        }
        Ok(())
    }

    /// About how many bytes [`Stream::try_write`] would take now: what the ring
    /// to the I/O loop, this stream's share of send memory and the packet
    /// pool have room for (one datagram's worth over the share, as `try_write`
    /// fills the last buffer it starts; the I/O loop may take buffers before
    /// the write, so it may take less); 0 when it would return `WouldBlock`
    /// (before the handshake completed, or with the packet pool at the part
    /// kept for receiving). An
    /// error when `try_write` would fail (the connection closed, the stream
    /// finished). An application serving many streams from one thread offers
    /// each what fits instead of producing data the stream cannot take.
    pub fn write_room(&self) -> io::Result<usize> {
        self.check_writable()?;
        let held = self.shared.ring_bytes.held();
        let share = self.shared.write_ahead.load(Ordering::Relaxed);
        if !self.is_established() || held >= share {
            return Ok(0);
        }
        // The pool's count last: it sums every lcore's cache
        // (`rte_mempool_avail_count`), and a stream at its share needs none.
        let free = self.pool.available();
        if free <= self.reserve {
            return Ok(0);
        }
        let chunk = self.shared.chunk() as u64;
        let by_pool = ((free - self.reserve) as u64).saturating_mul(chunk);
        let by_share = (share - held).div_ceil(chunk.max(1)).saturating_mul(chunk);
        let by_slots = (self.tx.slots() as u64).saturating_mul(chunk);
        Ok(by_share.min(by_slots).min(by_pool).min(usize::MAX as u64) as usize)
    }

    /// Writes what fits without blocking: copies into packet buffers (the one copy
    /// on the sending side) and queues them for the I/O loop. `WouldBlock` when the
    /// ring or the packet pool is full, or before the handshake completed.
    pub fn try_write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.check_writable()?;
        if !data.is_empty() && !self.is_established() {
            // The handshake decides the buffers' size (the peer's datagram):
            // writes wait for it (see [`Stream::is_established`]).
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.pool.attach_thread();
        if !data.is_empty() && self.pool.available() <= self.reserve {
            // The pool's last buffers are kept for receiving: wait for acks to
            // free some (the blocking `write` backs off and retries).
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let mut done = 0;
        let mut pushed = 0usize;
        while done < data.len() && self.tx.slots() > 0 && self.shared.may_write() {
            let Some(b) = self.pool.copy_from_stashed(
                &data[done..],
                self.shared.chunk(),
                self.reserve,
                &mut self.stash,
            ) else {
                break;
            };
            let n = b.bytes().len();
            if self.tx.push(b).is_err() {
                unreachable!("a slot was free and this is the only producer");
            }
            // Counted per buffer (the loop may take it at once), published by the
            // writer alone: no contention with the loop.
            self.shared.ring_bytes.queued(n as u64);
            done += n;
            pushed += 1;
            if pushed.is_multiple_of(NUDGE_EVERY) {
                // Run to completion: a burst's worth queued, send it now.
                self.shared.ring_doorbell();
                self.shared.waiter.nudge();
            }
        }
        if done > 0 {
            self.shared.ring_doorbell();
            self.shared.waiter.nudge();
            Ok(done)
        } else if data.is_empty() {
            Ok(0)
        } else {
            Err(io::ErrorKind::WouldBlock.into())
        }
    }

    /// Reads what is available without blocking. `Ok(0)`: end of stream (the peer
    /// finished and everything was read); `WouldBlock`: nothing yet.
    ///
    /// In run-to-completion mode the non-blocking calls poll the I/O loop
    /// (`try_read` first, the in-place reads when nothing is buffered,
    /// `try_write` after queueing data, `try_submit` every few buffers) and
    /// never pause in it, even when the loop is quiet: an application serving
    /// many streams calls them for each in turn, and once every one returned
    /// `WouldBlock` waits through [`crate::runtime::Poller::wait`] (or a
    /// blocking call).
    /// (Pausing in each call, a thread serving 1000 connections spent a fifth
    /// of its time in the scheduler, yielding between empty reads.)
    pub fn try_read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        // This thread frees the buffers it reads.
        self.pool.attach_thread();
        // Run to completion: take what arrived (and acknowledge it) first.
        self.shared.waiter.nudge();
        // Read the flag before the ring: the I/O loop sets it after pushing the
        // last data, so seeing it means every segment is visible.
        let fin = self.shared.peer_finished.load(Ordering::Acquire);
        let closed = self.shared.closed_flag.load(Ordering::Acquire);
        let mut done = 0;
        while done < out.len() {
            if self.cur.is_none() {
                match self.rx.pop() {
                    Ok(s) => self.cur = Some(s),
                    Err(_) => break,
                }
            }
            let s = self.cur.as_mut().expect("set above");
            let k = s.len.min(out.len() - done);
            out[done..done + k].copy_from_slice(&s.buf.bytes()[s.pos..s.pos + k]);
            s.pos += k;
            s.len -= k;
            done += k;
            if s.len == 0 {
                self.cur = None; // the datagram's memory returns to its pool
            }
        }
        if done > 0 {
            self.shared.note_read(done);
            return Ok(done);
        }
        if out.is_empty() {
            return Ok(0);
        }
        self.nothing_to_read(fin, closed).map(|()| 0)
    }

    /// With nothing left to read: `Ok` at the end of the stream (`fin`: the
    /// peer finished; or the connection closed gracefully), the close's error,
    /// or `WouldBlock`. `fin` and `closed` are read before the ring was
    /// emptied (see `try_read`).
    pub(super) fn nothing_to_read(&self, fin: bool, closed: bool) -> io::Result<()> {
        if fin {
            return Ok(());
        }
        if closed {
            return match self.shared.close_reason() {
                Some(CloseReason::Graceful) | None => Ok(()),
                Some(r) => Err(io::Error::from(r)),
            };
        }
        Err(io::ErrorKind::WouldBlock.into())
    }

    /// No more data from this side; the peer reads end of stream after the last
    /// byte. Reading continues to work.
    pub fn finish(&mut self) {
        self.shared.finish.store(true, Ordering::Release);
        self.shared.ring_doorbell();
    }

    /// The id telemetry lists this connection under (`/pmdt/list`,
    /// `/pmdt/connection,<id>`), unique in the process.
    pub fn connection_id(&self) -> u64 {
        self.shared.directory_id.load(Ordering::Relaxed)
    }

    /// A handle that reads this connection's statistics from another thread.
    pub fn stats_handle(&self) -> StatsHandle {
        StatsHandle {
            shared: self.shared.clone(),
        }
    }

    /// Aborts the connection at once; the peer sees a reset with `code`.
    pub fn reset(self, code: u32) {
        self.abort_handle().abort(code);
    }

    /// A handle that aborts this connection from another thread (a signal handler's
    /// flag, a supervisor): a `read`, `write` or `close` blocked on it returns
    /// `ConnectionAborted` at once, and the peer sees a reset.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle {
            shared: self.shared.clone(),
        }
    }

    /// Graceful close: finishes this side, discards data still arriving, and returns
    /// once the peer acknowledged every byte written (`Ok`) or the connection ended
    /// otherwise (the error says why: timeout, reset, unreachable).
    /// It does not wait for the connection's closing period (a few probe
    /// timeouts in which the I/O loop answers a peer that missed our Close):
    /// a runtime's shutdown does. Until that ends the connection keeps its
    /// place, counted against the runtime's connection limit. In
    /// run-to-completion mode the loop runs only inside the application's
    /// calls: keep using the runtime, or shut it down, for a peer that missed
    /// the Close to be answered.
    /// The handle stays usable for [`Stream::stats`] and [`Stream::close_reason`].
    pub fn close(&mut self) -> io::Result<()> {
        self.shared.discard.store(true, Ordering::Release);
        self.finish();
        loop {
            self.discard_received();
            if let Some(r) = self.shared.close_reason() {
                return match r {
                    CloseReason::Graceful => Ok(()),
                    r => Err(io::Error::from(r)),
                };
            }
            let s = &self.shared;
            s.waiter.wait(|| s.closed_flag.load(Ordering::Acquire));
        }
    }

    /// [`Stream::close`] without blocking: starts the graceful close (once) and
    /// returns `WouldBlock` until the peer acknowledged every byte written (`Ok`)
    /// or the connection ended otherwise (the error says why).
    pub fn try_close(&mut self) -> io::Result<()> {
        if !self.shared.discard.load(Ordering::Relaxed) {
            self.shared.discard.store(true, Ordering::Release);
            self.finish();
        }
        self.discard_received();
        match self.shared.close_reason() {
            Some(CloseReason::Graceful) => Ok(()),
            Some(r) => Err(io::Error::from(r)),
            None => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    /// Drops what was received and not read (closing), counting it as read: the
    /// I/O loop sizes the connection's credit by what its reader still holds.
    fn discard_received(&mut self) {
        let mut n = self.cur.take().map_or(0, |s| s.len);
        while let Ok(s) = self.rx.pop() {
            n += s.len;
        }
        if n > 0 {
            self.shared.note_read(n);
        }
    }

    /// Waits until the packet pool has buffers beyond the reserve kept for
    /// receiving: parked until the I/O loop, as acknowledgements free buffers,
    /// wakes this writer in its turn (see [`super::memory_wait`]). A
    /// run-to-completion writer polls the loop instead.
    pub(super) fn wait_for_memory(&self) {
        let s = &self.shared;
        let (pool, reserve) = (&self.pool, self.reserve);
        // Memory that looks free but could not be taken (buffers in other
        // threads' caches), or no room in the queue: nap and try again.
        if s.waiter.drives_loop() || pool.available() > reserve || !s.await_memory() {
            s.waiter.backoff();
            return;
        }
        s.waiter.wait(|| {
            s.closed_flag.load(Ordering::Acquire)
                || !s.awaits_memory.load(Ordering::Acquire)
                || pool.available() > reserve
        });
    }

    pub(super) fn wait_io(&self, writing: bool) {
        let s = &self.shared;
        let tx = &self.tx;
        let rx = &self.rx;
        s.waiter.wait(|| {
            s.closed_flag.load(Ordering::Acquire)
                || if writing {
                    s.connected.load(Ordering::Acquire)
                        && s.writer_may_resume(tx.slots(), tx.buffer().capacity())
                } else {
                    !rx.is_empty() || s.peer_finished.load(Ordering::Acquire)
                }
        });
    }
}

impl io::Write for Stream {
    /// Blocks (parking the thread) until some bytes were taken.
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        loop {
            match self.try_write(data) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.is_established() && self.tx.slots() > 0 && self.shared.may_write() {
                        // Ring has room but the packet pool is exhausted.
                        self.wait_for_memory();
                    } else {
                        self.wait_io(true);
                    }
                }
                r => return r,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl io::Read for Stream {
    /// Blocks (parking the thread) until data, end of stream, or an error.
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.try_read(out) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_io(false),
                r => return r,
            }
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // Background graceful finish; the I/O loop frees the connection once done.
        // Unread data goes back to the pool now.
        self.discard_received();
        self.shared.discard.store(true, Ordering::Release);
        self.shared.finish.store(true, Ordering::Release);
        self.shared.dropped.store(true, Ordering::Release);
        self.shared.ring_doorbell();
    }
}
