//! The I/O loop: one thread or lcore, no async. Each iteration: rx burst → parse
//! (in the link) → endpoint → events to application rings → application data into
//! connections → timers → transmit → tx burst, then load accounting and, when idle,
//! a bounded back-off.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use crossbeam_queue::ArrayQueue;
use load_estimator::{EstimatorConfig, LoadEstimator};

use super::cycles;
use super::shared::StreamShared;
use super::stats::{ConnectionEntry, LoopStats};
use super::storage::{ChunkRecv, ChunkSend, Segment};
use super::stream::Stream;
use super::IdlePolicy;
use crate::link::{Buffer, BufferPool, Link, Outgoing, PayloadSlice, Received};
use pmdt_proto::{
    CloseReason, ConnectionHandle, Endpoint, Event, SendStorage, StorageWrite, WriteError,
};

/// Requests from application threads (control path only; data goes through rings).
pub(crate) enum Control {
    Connect {
        to: SocketAddr,
        reply: SyncSender<std::io::Result<Stream>>,
    },
    Listen {
        accept: SyncSender<Stream>,
    },
    Shutdown,
}

/// Loop options.
pub(crate) struct LoopConfig {
    pub burst: usize,
    pub ring_slots: usize,
    pub idle: IdlePolicy,
    pub shutdown_timeout: Duration,
    pub max_connections: usize,
    /// Synthetic processing cost per received datagram, in cycles (experiments).
    pub work_cycles: u64,
}

struct IoStream {
    shared: Arc<StreamShared>,
    from_app: rtrb::Consumer<Buffer>,
    to_app: rtrb::Producer<Segment>,
    delivered: u64,
    finish_applied: bool,
    reset_applied: bool,
    blocked: bool,
    peer_fin: bool,
    closed: Option<CloseReason>,
    in_deliver: bool,
    /// Delivery stopped until the application reads (its ring or its share of
    /// packet memory is full); its next read rings the doorbell.
    waiting_for_reader: bool,
}

use super::memory_budget::{
    self, READ_AHEAD_MAX, READ_AHEAD_MIN, RECV_POOL_SHARE, SEND_POOL_SHARE, WRITE_RESERVE_SHARE,
};

thread_local! {
    static IN_ITERATION: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the calling thread is inside an I/O loop iteration (receive, events,
/// application data, timers, transmit; not the periodic stats publication). For
/// tests that count allocations in the steady-state loop; cheap and
/// allocation-free, so a global allocator may call it.
#[doc(hidden)]
pub fn in_io_iteration() -> bool {
    IN_ITERATION.try_with(|c| c.get()).unwrap_or(false)
}

pub(crate) struct IoLoop {
    link: Box<dyn Link>,
    ep: Endpoint<ChunkSend, ChunkRecv>,
    pool: BufferPool,
    chunk: usize,
    cfg: LoopConfig,
    streams: Vec<Option<IoStream>>,
    live: usize,
    doorbell: Arc<ArrayQueue<usize>>,
    deliver: Vec<usize>,
    retry: Vec<usize>,
    /// The lists being worked through (swapped with `deliver`/`retry`, so both
    /// keep their memory: no allocation per iteration).
    delivering: Vec<usize>,
    retrying: Vec<usize>,
    control: Receiver<Control>,
    accept: Option<SyncSender<Stream>>,
    rx: Vec<Received>,
    hdr: Vec<u8>,
    /// Receive credit every connection shares (bytes of packet memory), if the
    /// pool is bounded.
    recv_budget: u64,
    /// Each connection's share of `recv_budget`.
    recv_share: u64,
    /// Unacknowledged data every connection shares (bytes of packet memory).
    send_budget: u64,
    /// Each connection's share of `send_budget` (half in its writer's ring, the
    /// rest in its send storage).
    send_share: u64,
    estimator: LoadEstimator,
    stats: Arc<ArcSwap<LoopStats>>,
    iterations: u64,
    idle_sleeps: u64,
    /// Stream bytes acknowledged and received by connections already released.
    closed_acked: u64,
    closed_received: u64,
    started: Instant,
    shutting_down: Option<Instant>,
}

impl IoLoop {
    pub fn new(
        link: Box<dyn Link>,
        ep: Endpoint<ChunkSend, ChunkRecv>,
        chunk: usize,
        cfg: LoopConfig,
        control: Receiver<Control>,
        stats: Arc<ArcSwap<LoopStats>>,
    ) -> Self {
        let pool = link.pool();
        let max_datagram = ep.config().transport.max_datagram as usize;
        // One received datagram pins one buffer, holding up to a payload of stream.
        let recv_budget = (pool.capacity() as f64
            * RECV_POOL_SHARE
            * ep.config().transport.max_payload() as f64) as u64;
        // Work items per iteration: datagrams received plus datagrams sent (a
        // transport core is busy sending too), up to an rx burst plus a tx burst.
        let est = LoadEstimator::new(EstimatorConfig::new(cycles::hz(), cfg.burst as u32 + 32));
        let mut lp = Self {
            pool,
            doorbell: Arc::new(ArrayQueue::new(cfg.max_connections.max(1))),
            rx: Vec::with_capacity(cfg.burst),
            link,
            ep,
            chunk,
            streams: Vec::new(),
            live: 0,
            deliver: Vec::with_capacity(cfg.max_connections.clamp(1, 1024)),
            retry: Vec::with_capacity(cfg.max_connections.clamp(1, 1024)),
            delivering: Vec::with_capacity(cfg.max_connections.clamp(1, 1024)),
            retrying: Vec::with_capacity(cfg.max_connections.clamp(1, 1024)),
            control,
            accept: None,
            // The connection sizes packets by this buffer (only headers are written
            // into it; payloads stay in their buffers).
            hdr: vec![0; max_datagram.max(2048)],
            recv_budget,
            recv_share: u64::MAX,
            send_budget: (recv_budget as f64 * SEND_POOL_SHARE / RECV_POOL_SHARE) as u64,
            send_share: u64::MAX,
            estimator: est,
            stats,
            iterations: 0,
            idle_sleeps: 0,
            closed_acked: 0,
            closed_received: 0,
            started: Instant::now(),
            shutting_down: None,
            cfg,
        };
        lp.ep.set_recv_budget_total(Some(lp.recv_budget));
        lp
    }

    /// Runs until shut down (and every connection closed or the shutdown timeout).
    pub fn run(mut self) {
        let mut idle_run = 0u32;
        let mut sleep = Duration::from_micros(1);
        let mut next_publish = Instant::now();
        loop {
            let now = Instant::now();
            let tsc = cycles::now();
            let (n_items, work) = self.iteration(now);
            self.estimator.on_poll(tsc, n_items as u32);
            self.iterations += 1;
            if now >= next_publish {
                next_publish = now + Duration::from_millis(100);
                if let Some(p) = self.link.rx_pending() {
                    self.estimator.set_rx_pending(p);
                }
                self.estimator.publish(cycles::now());
                self.publish(now);
                self.recheck_readers();
            }
            if let Some(t) = self.shutting_down {
                if self.live == 0 || now >= t {
                    self.publish(now);
                    self.abandon_streams();
                    return;
                }
            }
            if work {
                idle_run = 0;
                sleep = Duration::from_micros(1);
                continue;
            }
            idle_run = idle_run.saturating_add(1);
            if let IdlePolicy::Backoff {
                spin_iterations,
                max_sleep,
            } = self.cfg.idle
            {
                if idle_run > spin_iterations {
                    let mut s = sleep;
                    for d in [self.ep.poll_timeout(), self.link.next_deadline()]
                        .into_iter()
                        .flatten()
                    {
                        s = s.min(d.saturating_duration_since(now));
                    }
                    if !s.is_zero() {
                        std::thread::sleep(s);
                        self.idle_sleeps += 1;
                        // Slept on purpose: idle time, not time taken by others.
                        self.estimator.on_idle(cycles::now());
                    }
                    sleep = (sleep * 2).min(max_sleep);
                }
            }
        }
    }

    /// The loop is ending with connections still open (shutdown timeout): their
    /// application handles learn it instead of waiting forever.
    fn abandon_streams(&mut self) {
        for s in self.streams.iter_mut().filter_map(Option::take) {
            s.shared.set_closed(CloseReason::LocalReset(0));
            s.shared.waiter.wake();
        }
        self.live = 0;
    }

    /// A safety net under the reader's doorbell: streams waiting for their reader
    /// are looked at again (every publish period).
    fn recheck_readers(&mut self) {
        for (i, s) in self.streams.iter_mut().enumerate() {
            if let Some(s) = s {
                if s.waiting_for_reader && !s.in_deliver {
                    s.waiting_for_reader = false;
                    s.in_deliver = true;
                    self.deliver.push(i);
                }
            }
        }
    }

    fn publish(&mut self, now: Instant) {
        let mut list = Vec::new();
        let (mut acked, mut received) = (self.closed_acked, self.closed_received);
        for (i, s) in self.streams.iter().enumerate() {
            if let (Some(s), Some(c)) = (s, self.ep.connection(ConnectionHandle(i))) {
                let st = c.stats();
                acked += st.stream_bytes_acked;
                received += st.stream_bytes_received;
                if list.len() < 256 {
                    list.push(ConnectionEntry {
                        peer: s.shared.remote.to_string(),
                        stats: st.clone(),
                    });
                }
                *s.shared.stats.lock().unwrap_or_else(|e| e.into_inner()) = st;
            }
        }
        self.stats.store(Arc::new(LoopStats {
            link_name: self.link.describe(),
            link: self.link.stats(),
            endpoint: self.ep.stats().clone(),
            load: self.estimator.report().clone(),
            connections: self.live,
            iterations: self.iterations,
            idle_sleeps: self.idle_sleeps,
            uptime_s: now.duration_since(self.started).as_secs_f64(),
            connection_list: list,
            stream_bytes_acked: acked,
            stream_bytes_received: received,
        }));
    }

    /// One pass; returns (datagrams received + sent, whether anything happened).
    fn iteration(&mut self, now: Instant) -> (usize, bool) {
        let live_before = self.live;
        IN_ITERATION.with(|c| c.set(true));
        let (n, work) = self.iteration_inner(now);
        IN_ITERATION.with(|c| c.set(false));
        if live_before > 0 && self.live == 0 {
            // A transfer ended: a report now, so short transfers (under one
            // publish period) still get true load figures.
            self.estimator.publish(cycles::now());
            self.publish(now);
        }
        (n, work)
    }

    fn iteration_inner(&mut self, now: Instant) -> (usize, bool) {
        let mut work = self.control(now);
        // Receive.
        self.rx.clear();
        let n = self.link.recv(now, &mut self.rx, self.cfg.burst);
        for r in self.rx.drain(..) {
            let payload = &r.buf.bytes()[r.start..r.start + r.len];
            self.ep.handle_in(now, r.from, payload, &r.buf);
            if self.cfg.work_cycles > 0 {
                let t0 = cycles::now();
                while cycles::now().wrapping_sub(t0) < self.cfg.work_cycles {
                    std::hint::spin_loop();
                }
            }
        }
        work |= n > 0;
        // New connections.
        while let Some(h) = self.ep.accept() {
            self.on_accept(h);
            work = true;
        }
        // Events.
        while let Some((h, ev)) = self.ep.poll_event() {
            self.on_event(h, ev);
            work = true;
        }
        // Application data and requests.
        while let Some(i) = self.doorbell.pop() {
            self.drain_app(i, now);
            work = true;
        }
        std::mem::swap(&mut self.retry, &mut self.retrying);
        for k in 0..self.retrying.len() {
            let i = self.retrying[k];
            self.drain_app(i, now);
        }
        self.retrying.clear();
        // Deliveries to applications.
        if !self.deliver.is_empty() {
            std::mem::swap(&mut self.deliver, &mut self.delivering);
            for k in 0..self.delivering.len() {
                let i = self.delivering[k];
                if let Some(Some(s)) = self.streams.get_mut(i) {
                    s.in_deliver = false;
                }
                self.deliver_to_app(i);
            }
            self.delivering.clear();
            work = true;
        }
        // Timers.
        if self.ep.poll_timeout().is_some_and(|t| t <= now) {
            self.ep.handle_timeout(now);
            while let Some((h, ev)) = self.ep.poll_event() {
                self.on_event(h, ev);
            }
            work = true;
        }
        // Transmit.
        let sent = self.transmit(now);
        self.link.flush(now);
        (n + sent, work || sent > 0)
    }

    fn control(&mut self, now: Instant) -> bool {
        let mut any = false;
        loop {
            match self.control.try_recv() {
                Ok(Control::Connect { to, reply }) => {
                    any = true;
                    if self.shutting_down.is_some() {
                        let _ = reply.send(Err(std::io::Error::other("runtime shutting down")));
                        continue;
                    }
                    if self.live >= self.cfg.max_connections {
                        let _ = reply.send(Err(std::io::Error::other(format!(
                            "too many connections (limit {})",
                            self.cfg.max_connections
                        ))));
                        continue;
                    }
                    let h = self.ep.connect(now, to);
                    let stream = self.new_stream(h, to);
                    let _ = reply.send(Ok(stream));
                }
                Ok(Control::Listen { accept }) => {
                    any = true;
                    self.accept = Some(accept);
                    self.ep.set_accept(true);
                }
                Ok(Control::Shutdown) | Err(TryRecvError::Disconnected) => {
                    if self.shutting_down.is_none() {
                        self.begin_shutdown(now);
                    }
                    return any;
                }
                Err(TryRecvError::Empty) => return any,
            }
        }
    }

    fn begin_shutdown(&mut self, now: Instant) {
        self.shutting_down = Some(now + self.cfg.shutdown_timeout);
        self.ep.set_accept(false);
        self.accept = None;
        let handles: Vec<_> = self.ep.handles().collect();
        for h in handles {
            if let Some(Some(s)) = self.streams.get(h.0) {
                s.shared.discard.store(true, Ordering::Release);
                s.shared.finish.store(true, Ordering::Release);
                s.shared.ring_doorbell();
            } else if let Some(mut c) = self.ep.connection_mut(h) {
                c.close(now);
            }
        }
    }

    /// Aborts connection `h`; the peer learns `code`.
    fn reset(&mut self, h: ConnectionHandle, code: u32) {
        if let Some(mut c) = self.ep.connection_mut(h) {
            c.reset(code);
        }
    }

    fn new_stream(&mut self, h: ConnectionHandle, remote: SocketAddr) -> Stream {
        let shared = Arc::new(StreamShared::new(h.0, remote, self.doorbell.clone()));
        let (app_tx, from_app) = rtrb::RingBuffer::new(self.cfg.ring_slots);
        let (to_app, app_rx) = rtrb::RingBuffer::new(self.cfg.ring_slots);
        if self.streams.len() <= h.0 {
            self.streams.resize_with(h.0 + 1, || None);
        }
        self.streams[h.0] = Some(IoStream {
            shared: shared.clone(),
            from_app,
            to_app,
            delivered: 0,
            finish_applied: false,
            reset_applied: false,
            blocked: false,
            peer_fin: false,
            closed: None,
            in_deliver: false,
            waiting_for_reader: false,
        });
        self.live += 1;
        self.rebalance_recv_budget();
        Stream {
            shared,
            tx: app_tx,
            rx: app_rx,
            cur: None,
            pool: self.pool.clone(),
            stash: Default::default(),
            chunk: self.chunk,
            reserve: (self.pool.capacity() as f64 * WRITE_RESERVE_SHARE) as usize,
        }
    }

    /// Gives every connection an equal share of the receive budget (called when
    /// the number of connections changes): memory stays bounded by the pool
    /// however many connections there are, and each gets as much as fits.
    fn rebalance_recv_budget(&mut self) {
        let share = self.recv_budget / self.live.max(1) as u64;
        if share == self.recv_share {
            return;
        }
        self.recv_share = share;
        self.send_share = self.send_budget / self.live.max(1) as u64;
        let write_ahead = self.write_ahead();
        for i in 0..self.streams.len() {
            let Some(s) = &self.streams[i] else {
                continue;
            };
            s.shared.write_ahead.store(write_ahead, Ordering::Relaxed);
            // A writer waiting for its share may now have room.
            s.shared.waiter.wake();
            let h = ConnectionHandle(i);
            if let Some(mut c) = self.ep.connection_mut(h) {
                c.set_recv_budget(share);
            }
        }
    }

    /// How much data a writer may queue in its ring beyond what its connection
    /// took.
    fn write_ahead(&self) -> u64 {
        memory_budget::write_ahead(self.send_share)
    }

    /// How far delivery to a reader may run ahead of what it has read.
    fn read_ahead(&self) -> u64 {
        (self.recv_share / 2).clamp(READ_AHEAD_MIN, READ_AHEAD_MAX)
    }

    fn on_accept(&mut self, h: ConnectionHandle) {
        let Some(remote) = self.ep.connection(h).map(|c| c.remote()) else {
            return;
        };
        let Some(accept) = self.accept.clone() else {
            self.reset(h, pmdt_proto::REFUSED_CODE);
            return;
        };
        if self.live >= self.cfg.max_connections {
            self.reset(h, pmdt_proto::REFUSED_CODE);
            return;
        }
        let stream = self.new_stream(h, remote);
        match accept.try_send(stream) {
            Ok(()) => {}
            Err(TrySendError::Full(s)) | Err(TrySendError::Disconnected(s)) => {
                // Backlog full or nobody listening: refuse.
                drop(s);
                self.reset(h, pmdt_proto::REFUSED_CODE);
            }
        }
    }

    fn on_event(&mut self, h: ConnectionHandle, ev: Event) {
        let Some(Some(s)) = self.streams.get_mut(h.0) else {
            if let Event::Closed(_) = ev {
                self.ep.release(h);
            }
            return;
        };
        match ev {
            Event::Connected => {
                s.shared.connected.store(true, Ordering::Release);
                s.shared.waiter.wake();
            }
            Event::Readable => {}
            Event::Writable => {
                s.blocked = false;
                self.retry.push(h.0);
                return;
            }
            Event::PeerFinished => s.peer_fin = true,
            Event::Closed(r) => s.closed = Some(r),
        }
        if !s.in_deliver {
            s.in_deliver = true;
            self.deliver.push(h.0);
        }
    }

    /// Moves application data from the stream's ring into its connection.
    fn drain_app(&mut self, i: usize, now: Instant) {
        let h = ConnectionHandle(i);
        let storage_share = memory_budget::send_storage(self.send_share, self.write_ahead());
        let Some(Some(s)) = self.streams.get_mut(i) else {
            return;
        };
        s.shared.queued.store(false, Ordering::Release);
        if std::mem::take(&mut s.waiting_for_reader) && !s.in_deliver {
            s.in_deliver = true;
            self.deliver.push(i);
        }
        let reset = s.shared.reset.load(Ordering::Acquire);
        if reset != 0 && !s.reset_applied {
            s.reset_applied = true;
            self.reset(h, reset as u32);
            return;
        }
        let mut popped = false;
        if !s.blocked && !s.from_app.is_empty() {
            let from_app = &mut s.from_app;
            let shared = &s.shared;
            // The send storage holds at most the connection's share of packet
            // memory (beyond what its writer's ring holds).
            let held_max = storage_share;
            let mut left_over = false;
            let writer = |st: &mut ChunkSend| {
                let mut total = 0;
                while let Ok(b) = from_app.peek() {
                    let len = b.bytes().len() as u64;
                    let held = st.end() - st.start();
                    if len > st.free() || (held > 0 && held + len > held_max) {
                        break;
                    }
                    let b = from_app.pop().expect("peeked");
                    shared.ring_bytes.fetch_sub(len, Ordering::AcqRel);
                    total += st.push(b).unwrap_or(0);
                }
                // Data left in the ring did not fit: the connection signals
                // Writable once the storage frees space. (Data the writer pushes
                // after this look rings the doorbell again.)
                left_over = !from_app.is_empty();
                StorageWrite {
                    bytes: total,
                    full: left_over,
                }
            };
            let r = match self.ep.connection_mut(h) {
                Some(mut c) => c.write_with(writer),
                None => Err(WriteError::Closed(CloseReason::LocalReset(0))),
            };
            match r {
                Ok(_) => {
                    popped = true;
                    if left_over {
                        s.blocked = true;
                    }
                }
                Err(WriteError::Blocked) => s.blocked = true,
                Err(_) => {
                    // Closed or finished: nothing more will be sent; free the data.
                    while let Ok(b) = s.from_app.pop() {
                        let len = b.bytes().len() as u64;
                        s.shared.ring_bytes.fetch_sub(len, Ordering::AcqRel);
                    }
                    popped = true;
                }
            }
        }
        if s.from_app.is_empty() && s.shared.finish.load(Ordering::Acquire) && !s.finish_applied {
            s.finish_applied = true;
            if s.shared.discard.load(Ordering::Acquire) {
                // Closing: finish this side and end once everything is acknowledged.
                if let Some(mut c) = self.ep.connection_mut(h) {
                    c.close(now);
                }
            } else if let Some(mut c) = self.ep.connection_mut(h) {
                c.finish();
            }
        }
        if s.shared.discard.load(Ordering::Acquire) && !s.in_deliver {
            s.in_deliver = true;
            self.deliver.push(i);
        }
        if popped {
            s.shared.waiter.wake();
        }
        // Data pushed after we cleared `queued` rang again; data that did not fit
        // waits for Writable.
    }

    /// Moves in-order received data to the application's ring; publishes end of
    /// stream and close once everything before them was handed over.
    fn deliver_to_app(&mut self, i: usize) {
        let h = ConnectionHandle(i);
        let ahead = self.read_ahead();
        let Some(Some(s)) = self.streams.get_mut(i) else {
            return;
        };
        let discard = s.shared.discard.load(Ordering::Acquire);
        let mut moved = 0u64;
        let mut pushed = false;
        let room = |s: &IoStream| {
            s.to_app.slots() > 0 && s.delivered - s.shared.app_read.load(Ordering::SeqCst) < ahead
        };
        if let Some(mut c) = self.ep.connection_mut(h) {
            let storage = c.recv_storage_mut();
            while discard || room(s) {
                let Some(seg) = storage.pop_at(s.delivered) else {
                    break;
                };
                s.delivered += seg.len as u64;
                moved += seg.len as u64;
                if !discard {
                    let _ = s.to_app.push(seg);
                    pushed = true;
                }
            }
            c.consume(moved);
        }
        let Some(Some(s)) = self.streams.get_mut(i) else {
            return;
        };
        let drained = self.ep.connection(h).is_none_or(|c| c.readable() == 0);
        if !drained {
            // The reader is behind (its ring or its read-ahead is full): it rings
            // the doorbell after its next read. Re-checked after raising the flag
            // (pairs with `StreamShared::note_read`), so a read in between is seen.
            s.shared.wake_on_read.store(true, Ordering::SeqCst);
            std::sync::atomic::fence(Ordering::SeqCst);
            if discard || room(s) {
                s.shared.wake_on_read.store(false, Ordering::Relaxed);
                if !s.in_deliver {
                    s.in_deliver = true;
                    self.deliver.push(i);
                }
            } else {
                s.waiting_for_reader = true;
            }
        }
        if drained && s.peer_fin && !s.shared.peer_finished.load(Ordering::Relaxed) {
            s.shared.peer_finished.store(true, Ordering::Release);
            pushed = true;
        }
        if let Some(r) = s.closed {
            let data_lost = !matches!(r, CloseReason::Graceful);
            if drained || data_lost {
                if let Some(c) = self.ep.connection(h) {
                    let st = c.stats();
                    self.closed_acked += st.stream_bytes_acked;
                    self.closed_received += st.stream_bytes_received;
                    *s.shared.stats.lock().unwrap_or_else(|e| e.into_inner()) = st;
                }
                s.shared.set_closed(r);
                s.shared.waiter.wake();
                self.streams[i] = None;
                self.live -= 1;
                self.ep.release(h);
                self.rebalance_recv_budget();
                return;
            }
        }
        if pushed {
            s.shared.waiter.wake();
        }
    }

    fn transmit(&mut self, now: Instant) -> usize {
        let mut sent = 0;
        let mut room = self.link.tx_room();
        while room > 0 {
            let Some(out) = self.ep.poll_transmit_header(now, &mut self.hdr) else {
                break;
            };
            let t = *out.transmit();
            let pkt = match out.connection().zip(t.payload) {
                Some((h, p)) => {
                    let chunk = self
                        .ep
                        .connection(h)
                        .and_then(|c| c.send_storage().chunk_at(p.offset));
                    let Some((buf, pos)) = chunk else {
                        debug_assert!(false, "payload offset is held");
                        continue;
                    };
                    Outgoing {
                        to: t.destination,
                        header: &self.hdr[..t.header_len],
                        payload: Some(PayloadSlice {
                            buf,
                            start: pos,
                            len: p.len,
                        }),
                    }
                }
                None => Outgoing {
                    to: t.destination,
                    header: &self.hdr[..t.len],
                    payload: None,
                },
            };
            self.link.send(now, pkt);
            room -= 1;
            sent += 1;
        }
        sent
    }
}
