//! The I/O loop: no async, no clock of its own. Each [`IoLoop::poll`] is one
//! iteration at the instant the caller gives: rx burst → parse (in the link) →
//! endpoint → events to application rings → application data into connections →
//! timers → transmit → tx burst; it says when it wants to be polled again. Who
//! polls decides the rest: a dedicated thread or lcore with its idle policy and
//! load accounting (`super::dedicated`), the application itself
//! ([`super::Session`]), or the deterministic simulator.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use load_estimator::{EstimatorConfig, LoadEstimator, LoadReport};

use super::caller::CallerLoop;
use super::cycles;
use super::doorbell::{Doorbell, Parked};
use super::memory_wait;
use super::reader_wake;
use super::recv_memory::{RecvMemory, Share};
use super::shared::StreamShared;
use super::stats::{ConnectionEntry, LoadPeriodEnd, LoopStats};
use super::storage::{ChunkRecv, ChunkSend, Segment};
use super::stream::Stream;
use super::stream_progress::{AppWrites, Delivery};
use crate::link::{Buffer, BufferPool, Link, Outgoing, PayloadSlice, Received};
use pmdt_proto::{
    CloseReason, ConnectOptions, ConnectionHandle, Endpoint, Event, SendStorage, StorageWrite,
    WriteError,
};

/// Requests from application threads (control path only; data goes through rings).
pub(crate) enum Control {
    Connect {
        to: SocketAddr,
        options: ConnectOptions,
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
    pub shutdown_timeout: Duration,
    pub max_connections: usize,
    /// Synthetic processing cost per received datagram, in cycles (experiments).
    pub work_cycles: u64,
    /// The longest a blocked application thread parks without a wake-up.
    pub park_timeout: Duration,
    /// Which time received datagrams are handled at.
    pub rx_clock: RxClock,
    /// How the packet pool is divided between receiving and sending.
    pub pool_split: PoolSplit,
}

/// The time received datagrams are handled at (what RTT samples are measured
/// against).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RxClock {
    /// The `now` the caller passed (a simulated clock, or a caller that owns time).
    Given,
    /// The monotonic clock read again after a burst arrived: a loop preempted
    /// between reading the clock and receiving would otherwise handle acks that
    /// arrived during the preemption at the older time, and an RTT sample short by
    /// the preemption (milliseconds on a busy host) would stick in the min-RTT
    /// filter and shrink the model's BDP.
    Monotonic,
}

struct IoStream {
    shared: Arc<StreamShared>,
    from_app: rtrb::Consumer<Buffer>,
    to_app: rtrb::Producer<Segment>,
    delivered: u64,
    writes: AppWrites,
    /// The peer finished its stream (the event came; delivery may still be behind).
    peer_fin: bool,
    closed: Option<CloseReason>,
    delivery: Delivery,
    /// Its part of the receive memory.
    share: Share,
    /// Bytes taken out of the receive storage and dropped (closing without
    /// reading) instead of handed to the reader.
    discarded: u64,
    /// Data was handed over and waking the reader was put off (more is arriving)
    /// since this instant.
    wake_deferred: Option<Instant>,
}

/// How receive memory is counted: stream bytes a packet buffer carries at most,
/// and the slots of a reader's ring.
#[derive(Debug, Clone, Copy)]
struct Memory {
    max_payload: u64,
    ring_slots: usize,
}

impl Memory {
    /// The stream bytes one of the peer's datagrams carries (the connection's
    /// `data_payload`), at least one and at most a packet buffer's `max_payload`.
    fn grain(self, data_payload: u64) -> u64 {
        data_payload.clamp(1, self.max_payload)
    }

    /// The receive memory what a reader's ring holds pins: its bytes, or a
    /// packet buffer per segment where segments are smaller.
    fn ring(self, ring_bytes: u64, ring_segments: usize) -> u64 {
        ring_bytes.max(ring_segments as u64 * self.max_payload)
    }
}

impl IoStream {
    /// What the reader has not read yet: bytes, and segments (packet buffers) in
    /// its ring.
    fn unread(&self, mem: Memory) -> (u64, usize) {
        let bytes = self.delivered - self.discarded - self.shared.app_read.load(Ordering::SeqCst);
        (bytes, mem.ring_slots - self.to_app.slots())
    }
}

/// Reset code a peer sees when this runtime shuts down while the application
/// still held a stream with data arriving.
pub const SHUTDOWN_CODE: u32 = 0xffff_0003;

use super::memory_budget::{self, PoolSplit, READ_AHEAD_MAX, READ_AHEAD_MIN, WRITE_RESERVE_SHARE};

/// How often an idle loop looks for free packet memory while writers wait for
/// some (see [`memory_wait`]).
const MEMORY_RECHECK: Duration = Duration::from_millis(1);

/// Credit a new connection's handshake may advertise before the loop sizes it.
const INITIAL_CREDIT_MAX: u64 = 64 * 1024;
/// How often the loop publishes its statistics (and re-checks readers).
pub(crate) const PUBLISH_PERIOD: Duration = Duration::from_millis(100);

/// What one [`IoLoop::poll`] did and when the loop wants the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Polled {
    /// Datagrams received and sent (the load estimator's work items).
    pub datagrams: usize,
    /// When to poll again.
    pub next: Next,
}

/// When an I/O loop wants to be polled again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Something happened: poll again at once (more may be pending).
    Immediately,
    /// Nothing to do before this instant (a timer, a delayed datagram, the stats
    /// period), unless a datagram arrives or an application acts first.
    Idle(Instant),
    /// Shut down: every connection closed (or the shutdown timeout abandoned them).
    Stopped,
}

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

/// Parked application threads a loop woke ([`LoopStats::thread_wakes`]).
#[derive(Debug, Default)]
struct WakeCount(u64);

impl WakeCount {
    /// Counts a wake-up if `woke` (what [`super::shared::Waiter::wake`]
    /// returned: a thread was parked).
    fn note(&mut self, woke: bool) {
        self.0 += u64::from(woke);
    }
}

pub(crate) struct IoLoop {
    link: Box<dyn Link>,
    ep: Endpoint<ChunkSend, ChunkRecv>,
    pool: BufferPool,
    chunk: usize,
    cfg: LoopConfig,
    streams: Vec<Option<IoStream>>,
    live: usize,
    /// Live connections when the last poll ended (connections open and close
    /// between polls too: [`super::Session::connect`]).
    live_polled: usize,
    doorbell: Arc<Doorbell>,
    /// The doorbell's control count when the channel was last drained.
    controls_seen: u64,
    deliver: Vec<usize>,
    retry: Vec<usize>,
    /// The lists being worked through (swapped with `deliver`/`retry`, so both
    /// keep their memory: no allocation per iteration).
    delivering: Vec<usize>,
    retrying: Vec<usize>,
    /// Streams whose reader's wake-up is deferred (see [`reader_wake`]), with
    /// since when, oldest first (an entry whose stream's `wake_deferred` no
    /// longer matches was woken otherwise: skipped).
    deferred_wakes: VecDeque<(usize, Instant)>,
    /// Run-to-completion: the loop the streams' waits poll (none: they park).
    driver: Weak<CallerLoop>,
    control: Receiver<Control>,
    accept: Option<SyncSender<Stream>>,
    rx: Vec<Received>,
    hdr: Vec<u8>,
    /// Stream bytes one datagram carries at most.
    max_payload: u64,
    /// The receive memory every connection shares (bytes of packet memory).
    recv_mem: RecvMemory,
    /// Connections below their fair share of `recv_mem` may get more once this
    /// much of it is free (set when a rebalance left some short).
    regrant_at: Option<u64>,
    /// Scratch list of the connections a rebalance regranted (kept to reuse
    /// its memory).
    regranted: Vec<usize>,
    /// Live connections when the shares were last rebalanced.
    balanced_for: usize,
    /// Unacknowledged data every connection shares (bytes of packet memory).
    send_budget: u64,
    /// Each connection's share of `send_budget` (half in its writer's ring, the
    /// rest in its send storage).
    send_share: u64,
    estimator: LoadEstimator,
    /// What closed the load estimator's last period.
    load_ended_by: LoadPeriodEnd,
    /// The load report made when the last transfer ended.
    transfer_load: Option<LoadReport>,
    stats: Arc<ArcSwap<LoopStats>>,
    iterations: u64,
    idle_sleeps: u64,
    idle_parks: u64,
    /// Writers waiting for packet memory this loop woke.
    memory_wakes: u64,
    /// Parked application threads this loop woke (any reason).
    thread_wakes: WakeCount,
    /// Stream bytes acknowledged and received by connections already released.
    closed_acked: u64,
    closed_received: u64,
    started: Instant,
    next_publish: Instant,
    shutting_down: Option<Instant>,
}

/// The segments a connection's storage may hold: its grant in full-size
/// datagrams, less what its reader's ring holds, but never less than the credit
/// it gave (`credit`: bytes beyond what was delivered the peer may send, at least
/// a datagram) in the peer's datagrams (`grain`: the stream bytes one carries). A
/// grant lowered when connections join lowers the credit to come; refusing data
/// sent within the credit given before would only have it sent again (256 flows
/// starting at once: 8,222-12,734 datagrams refused and resent). The pool
/// accounting counts that credit as the connection's commitment already, so this
/// stays within the receive total. Datagrams cut short at the credit's edge (a
/// runt and the rest of a split) can still exceed it and be refused.
fn segment_cap(grant: u64, ring_segments: usize, credit: u64, mem: Memory, grain: u64) -> usize {
    let buffers = (grant / mem.max_payload) as usize;
    let promised = credit.max(grain).div_ceil(grain) as usize;
    buffers.saturating_sub(ring_segments).max(promised)
}

/// The credit `bytes` of receive memory (counted at `max_payload` per packet
/// buffer) pays for when the peer's datagrams carry `grain` bytes each: every
/// datagram pins a buffer whatever its size, so a peer sending smaller datagrams
/// gets proportionally less (a 64-flow run with 1,064-byte datagrams into a
/// receiver of 1,500-byte ones: 24,050-41,193 datagrams refused beyond the
/// buffers their credit had been counted in).
fn credit_of(bytes: u64, mem: Memory, grain: u64) -> u64 {
    pmdt_proto::credit_of_memory(bytes, mem.max_payload, grain)
}

/// The receive memory (in packet buffers' worth of `max_payload`) a credit of
/// `credit` bytes commits when the peer's datagrams carry `grain` bytes each.
fn memory_of(credit: u64, mem: Memory, grain: u64) -> u64 {
    credit.div_ceil(grain).saturating_mul(mem.max_payload)
}

impl IoLoop {
    pub fn new(
        link: Box<dyn Link>,
        ep: Endpoint<ChunkSend, ChunkRecv>,
        chunk: usize,
        cfg: LoopConfig,
        control: Receiver<Control>,
        stats: Arc<ArcSwap<LoopStats>>,
        now: Instant,
    ) -> Self {
        let pool = link.pool();
        let max_datagram = ep.config().transport.max_datagram as usize;
        let max_payload = ep.config().transport.max_payload();
        // One datagram pins one buffer, holding up to a payload of stream.
        let (recv_budget, send_budget) = cfg.pool_split.bytes(pool.capacity() as u64, max_payload);
        // Work items per iteration: datagrams received plus datagrams sent (a
        // transport core is busy sending too), up to an rx burst plus a tx burst.
        // The loop closes the estimator's periods itself, when it publishes
        // (`LoadPeriodEnd`): periods the estimator closed on its own (every 10 ms
        // by default) would be seen by nobody, and a transfer shorter than the
        // statistics period would be reported by its last few milliseconds.
        let est = LoadEstimator::new(EstimatorConfig {
            report_cycles: u64::MAX,
            ..EstimatorConfig::new(cycles::hz(), cfg.burst as u32 + 32)
        });
        let mut lp = Self {
            pool,
            doorbell: Arc::new(Doorbell::new(cfg.max_connections)),
            controls_seen: 0,
            rx: Vec::with_capacity(cfg.burst),
            link,
            ep,
            chunk,
            streams: Vec::new(),
            live: 0,
            live_polled: 0,
            deliver: Vec::with_capacity(cfg.max_connections.clamp(1, 1024)),
            retry: Vec::with_capacity(cfg.max_connections.clamp(1, 1024)),
            delivering: Vec::with_capacity(cfg.max_connections.clamp(1, 1024)),
            retrying: Vec::with_capacity(cfg.max_connections.clamp(1, 1024)),
            deferred_wakes: VecDeque::with_capacity(cfg.max_connections.clamp(1, 1024)),
            driver: Weak::new(),
            control,
            accept: None,
            // The connection sizes packets by this buffer (only headers are written
            // into it; payloads stay in their buffers).
            hdr: vec![0; max_datagram.max(2048)],
            max_payload,
            recv_mem: RecvMemory::new(recv_budget),
            regrant_at: None,
            regranted: Vec::new(),
            balanced_for: usize::MAX,
            send_budget,
            send_share: u64::MAX,
            estimator: est,
            load_ended_by: LoadPeriodEnd::Period,
            transfer_load: None,
            stats,
            iterations: 0,
            idle_sleeps: 0,
            idle_parks: 0,
            memory_wakes: 0,
            thread_wakes: WakeCount::default(),
            closed_acked: 0,
            closed_received: 0,
            started: now,
            next_publish: now,
            shutting_down: None,
            cfg,
        };
        lp.set_initial_credit();
        lp
    }

    /// One iteration at `now`: receive, hand events and data to the application
    /// rings, take the applications' data, fire due timers, transmit, publish the
    /// statistics when a period has passed or a transfer began or ended (so
    /// short transfers, under one period, still get true figures). Reads no clock
    /// and never sleeps (only the experiments' synthetic per-packet work spins on
    /// the cycle counter).
    pub fn poll(&mut self, now: Instant) -> Polled {
        self.poll_measured(now, |_, _, _| {})
    }

    /// [`IoLoop::poll`] for a poller that measures the load: `measure` runs
    /// right after the iteration with the datagrams it handled and, when this
    /// poll publishes the statistics, why (the poller closes the estimator's
    /// period then, [`IoLoop::close_load_period`], so the report published is
    /// fresh and every report is published): the statistics period passed, or a
    /// transfer began (the first connection opened on an idle loop: the report
    /// before it closes, so the transfer's reports cover it alone, and the
    /// statistics period restarts) or ended (the last connection closed: its
    /// report covers the transfer since the report before, all of it when it
    /// lasted under one period, and is kept).
    pub fn poll_measured(
        &mut self,
        now: Instant,
        measure: impl FnOnce(&mut Self, usize, Option<LoadPeriodEnd>),
    ) -> Polled {
        IN_ITERATION.with(|c| c.set(true));
        let (datagrams, work) = self.iteration(now);
        IN_ITERATION.with(|c| c.set(false));
        self.iterations += 1;
        let due = now >= self.next_publish;
        let publication = match (self.live_polled, self.live) {
            (0, 1..) => Some(LoadPeriodEnd::TransferStarted),
            (1.., 0) => Some(LoadPeriodEnd::TransferEnded),
            _ => due.then_some(LoadPeriodEnd::Period),
        };
        self.live_polled = self.live;
        measure(self, datagrams, publication);
        if let Some(why) = publication {
            // A transfer's periods count from its start: one shorter than a
            // period gets one report, covering exactly it.
            if due || why == LoadPeriodEnd::TransferStarted {
                self.next_publish = now + PUBLISH_PERIOD;
            }
            self.publish(now);
            if due {
                self.recheck_readers();
            }
        }
        // A peer whose last Close from us may have been lost gets one in answer
        // to its retransmissions as long as the loop runs: a shutdown waits for
        // those (bounded by the shutdown timeout), or the peer of a transfer
        // that fully succeeded would end "timed out".
        let lingering = self.ep.lingering_until(now);
        if let Some(t) = self.shutting_down {
            if (self.live == 0 && lingering.is_none()) || now >= t {
                self.publish(now);
                self.abandon_streams();
                return Polled {
                    datagrams,
                    next: Next::Stopped,
                };
            }
        }
        let next = if work || !self.deliver.is_empty() || !self.retry.is_empty() {
            Next::Immediately
        } else {
            let mut t = self.next_publish;
            for d in [
                self.ep.poll_timeout(),
                self.link.next_deadline(),
                self.shutting_down,
                lingering.filter(|_| self.shutting_down.is_some()),
                self.next_deferred_wake(),
                // Writers short of memory: memory this loop does not free (reads
                // dropping received buffers, another queue's acknowledgements)
                // is looked for this often.
                (!self.doorbell.memory_waiters().is_empty()).then(|| now + MEMORY_RECHECK),
            ]
            .into_iter()
            .flatten()
            {
                t = t.min(d);
            }
            Next::Idle(t)
        };
        Polled { datagrams, next }
    }

    /// The load estimator, fed by whoever polls the loop on a real core.
    pub fn estimator_mut(&mut self) -> &mut LoadEstimator {
        &mut self.estimator
    }

    /// Closes the load estimator's period at cycle count `tsc` (with the link's
    /// receive ring occupancy): its report is the one the statistics publish
    /// next, and the last transfer's when `why` is its end.
    pub fn close_load_period(&mut self, tsc: u64, why: LoadPeriodEnd) {
        if let Some(p) = self.link.rx_pending() {
            self.estimator.set_rx_pending(p);
        }
        self.estimator.publish(tsc);
        self.load_ended_by = why;
        if why == LoadPeriodEnd::TransferEnded {
            self.transfer_load = Some(self.estimator.report().clone());
        }
    }

    /// The poller slept on purpose (idle back-off).
    pub fn note_idle_sleep(&mut self) {
        self.idle_sleeps += 1;
    }

    /// The doorbell application threads ring (and control requests wake).
    pub fn doorbell(&self) -> Arc<Doorbell> {
        Arc::clone(&self.doorbell)
    }

    /// The wake path: after a poll that found nothing to do, sleeps until an
    /// application thread has something for the loop, the link has a datagram
    /// (or room for those waiting to leave), or `until`. `Unavailable` when
    /// the link offers nothing to wait on (a poll-mode device): the caller naps.
    pub fn park(&mut self, now: Instant, until: Instant) -> Parked {
        if !self.doorbell.can_park() {
            return Parked::Unavailable;
        }
        let (doorbell, seen) = (&self.doorbell, self.controls_seen);
        let timeout = until.saturating_duration_since(now);
        let mut r = Parked::Unavailable;
        self.link.wait_on(&mut |wake| {
            if let Some(w) = wake {
                r = doorbell.park(seen, Some(w), timeout);
            }
        });
        if matches!(r, Parked::Woken | Parked::TimedOut) {
            self.idle_parks += 1;
        }
        r
    }

    /// Run-to-completion: streams opened from now on poll `driver` when they wait.
    pub fn set_driver(&mut self, driver: Weak<CallerLoop>) {
        self.driver = driver;
    }

    /// Live connections.
    pub fn live(&self) -> usize {
        self.live
    }

    /// What the loop drives (the link's description).
    pub fn describe_link(&self) -> String {
        self.link.describe()
    }

    /// The loop is ending with connections still open (shutdown timeout): their
    /// application handles learn it instead of waiting forever.
    fn abandon_streams(&mut self) {
        for s in self.streams.iter_mut().filter_map(Option::take) {
            s.shared.set_closed(CloseReason::LocalReset(0));
            self.thread_wakes.note(s.shared.waiter.wake());
        }
        self.live = 0;
    }

    /// A safety net under the reader's doorbell: streams waiting for their reader
    /// are looked at again (every publish period).
    fn recheck_readers(&mut self) {
        for (i, s) in self.streams.iter_mut().enumerate() {
            if let Some(s) = s {
                if s.delivery.wake_reader_wait() {
                    self.deliver.push(i);
                }
            }
        }
    }

    /// Publishes a statistics snapshot.
    pub fn publish(&mut self, now: Instant) {
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
            load_ended_by: self.load_ended_by,
            last_transfer_load: self.transfer_load.clone(),
            connections: self.live,
            iterations: self.iterations,
            idle_sleeps: self.idle_sleeps,
            idle_parks: self.idle_parks,
            memory_waits: self.doorbell.memory_waiters().queued_total(),
            memory_wakes: self.memory_wakes,
            thread_wakes: self.thread_wakes.0,
            uptime_s: now.duration_since(self.started).as_secs_f64(),
            connection_list: list,
            stream_bytes_acked: acked,
            stream_bytes_received: received,
        }));
    }

    /// One pass; returns (datagrams received + sent, whether anything happened).
    fn iteration(&mut self, now: Instant) -> (usize, bool) {
        let mut work = self.control(now);
        // Receive.
        self.rx.clear();
        let n = self.link.recv(now, &mut self.rx, self.cfg.burst);
        let now = match self.cfg.rx_clock {
            RxClock::Monotonic if n > 0 => Instant::now().max(now),
            _ => now,
        };
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
                    s.delivery = Delivery::Idle;
                }
                self.deliver_to_app(i, now);
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
        if !self.deferred_wakes.is_empty() {
            self.wake_deferred_readers(now);
        }
        // Transmit.
        let sent = self.transmit(now);
        self.link.flush(now);
        // Writers short of memory, now that acknowledgements freed some.
        self.wake_memory_waiters();
        (n + sent, work || sent > 0)
    }

    fn control(&mut self, now: Instant) -> bool {
        let mut any = false;
        // Read before draining: a request sent after this wakes a parked loop.
        self.controls_seen = self.doorbell.controls();
        loop {
            match self.control.try_recv() {
                Ok(Control::Connect { to, options, reply }) => {
                    any = true;
                    let _ = reply.send(self.open(now, to, &options));
                }
                Ok(Control::Listen { accept }) => {
                    any = true;
                    self.listen(accept);
                }
                Ok(Control::Shutdown) | Err(TryRecvError::Disconnected) => {
                    self.shut_down(now);
                    return any;
                }
                Err(TryRecvError::Empty) => return any,
            }
        }
    }

    /// Opens a connection to `to` with `options` applied to the transport
    /// configuration; its stream reports when it is established.
    pub fn open(
        &mut self,
        now: Instant,
        to: SocketAddr,
        options: &ConnectOptions,
    ) -> std::io::Result<Stream> {
        if self.shutting_down.is_some() {
            return Err(std::io::Error::other("runtime shutting down"));
        }
        if self.live >= self.cfg.max_connections {
            return Err(std::io::Error::other(format!(
                "too many connections (limit {})",
                self.cfg.max_connections
            )));
        }
        let h = self
            .ep
            .connect_with(now, to, options)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        Ok(self.new_stream(h, to))
    }

    /// Accepts incoming connections from now on, handing their streams to `accept`.
    pub fn listen(&mut self, accept: SyncSender<Stream>) {
        self.accept = Some(accept);
        self.ep.set_accept(true);
    }

    /// Starts a graceful shutdown (once): connections finish, new ones are refused;
    /// [`Next::Stopped`] once all closed or after the shutdown timeout.
    pub fn shut_down(&mut self, now: Instant) {
        if self.shutting_down.is_none() {
            self.begin_shutdown(now);
        }
    }

    fn begin_shutdown(&mut self, now: Instant) {
        self.shutting_down = Some(now + self.cfg.shutdown_timeout);
        self.ep.set_accept(false);
        self.accept = None;
        let handles: Vec<_> = self.ep.handles().collect();
        for h in handles {
            if let Some(Some(s)) = self.streams.get(h.0) {
                let app_closed = s.shared.discard.load(Ordering::Acquire);
                if !app_closed && !s.peer_fin {
                    // The application still holds the stream and the peer is still
                    // sending: acknowledging data nobody will read would lose it
                    // silently. Reset instead: the peer learns its data did not
                    // arrive (as closing a TCP socket with unread data does).
                    let _ = s.shared.reset.compare_exchange(
                        0,
                        (1u64 << 32) | SHUTDOWN_CODE as u64,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    );
                }
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
        let shared = Arc::new(StreamShared::new(
            h.0,
            remote,
            self.doorbell.clone(),
            self.cfg.park_timeout,
            self.driver.clone(),
            self.chunk_of(h),
        ));
        if self.ep.connection(h).is_some_and(|c| c.is_established()) {
            // Accepted: established already (its chunk is final), so writes on the
            // stream handed out go at once, before `Event::Connected` is polled.
            shared.connected.store(true, Ordering::Release);
        }
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
            writes: AppWrites::Flowing,
            peer_fin: false,
            closed: None,
            delivery: Delivery::Idle,
            share: Share::default(),
            discarded: 0,
            wake_deferred: None,
        });
        self.live += 1;
        // Nothing was sent yet: the connection commits its initial credit (in
        // the buffers its peer's datagrams will pin).
        let mem = self.memory();
        let committed = self.ep.connection(h).map_or(0, |c| {
            memory_of(c.recv_limit(), mem, mem.grain(c.data_payload()))
        });
        if let Some(Some(s)) = self.streams.get_mut(h.0) {
            s.share = self.recv_mem.join(committed);
        }
        self.rebalance();
        Stream {
            shared,
            tx: app_tx,
            rx: app_rx,
            cur: None,
            pool: self.pool.clone(),
            stash: Default::default(),
            reserve: self.write_reserve(),
        }
    }

    /// Free buffers writers leave in the pool for receiving.
    fn write_reserve(&self) -> usize {
        (self.pool.capacity() as f64 * WRITE_RESERVE_SHARE) as usize
    }

    /// Wakes the writers waiting for packet memory that the buffers free
    /// beyond the reserve can serve, longest waiting first (see
    /// [`memory_wait`]).
    fn wake_memory_waiters(&mut self) {
        // Pairs with the fence in the writer's wait: either this sees its
        // stream queued, or the writer sees the memory this pass freed.
        std::sync::atomic::fence(Ordering::SeqCst);
        let waiters = self.doorbell.memory_waiters();
        if waiters.is_empty() {
            return;
        }
        let free = self.pool.available().saturating_sub(self.write_reserve());
        let mut n = memory_wait::writers_to_wake(free, self.pool.capacity(), waiters.len());
        while n > 0 {
            let Some(i) = waiters.pop() else {
                break;
            };
            // Cleared before the wake-up (the writer's wait ends once it is): a
            // stale entry (a stream closed while queued) wakes nobody, and a
            // writer that found memory by itself meanwhile does not count.
            if let Some(Some(s)) = self.streams.get(i) {
                if s.shared.awaits_memory.swap(false, Ordering::AcqRel) && s.shared.waiter.wake() {
                    self.memory_wakes += 1;
                    self.thread_wakes.note(true);
                    n -= 1;
                }
            }
        }
    }

    /// Stream bytes per packet buffer for connection `h`'s writer: its full
    /// datagram payload when the peer's datagrams are smaller than this side's
    /// (a buffer of ours would leave as a full datagram and a runt, each pinning
    /// a buffer at the peer).
    fn chunk_of(&self, h: ConnectionHandle) -> usize {
        self.ep.connection(h).map_or(self.chunk, |c| {
            (c.data_payload() as usize).clamp(1, self.chunk)
        })
    }

    /// Brings every connection's share of the receive memory to the fair share
    /// (called when the number of connections changes, and when memory a
    /// connection was short of frees): lowered at once, raised from free memory.
    /// Send-side shares follow the number of connections.
    fn rebalance(&mut self) {
        let live_changed = self.balanced_for != self.live;
        self.balanced_for = self.live;
        if live_changed {
            self.send_share = self.send_budget / self.live.max(1) as u64;
        }
        let mem = self.memory();
        for i in 0..self.streams.len() {
            let ring_ahead = self.ring_ahead(ConnectionHandle(i));
            if let (true, Some(s)) = (live_changed, &mut self.streams[i]) {
                if s.shared.set_write_ahead(ring_ahead) {
                    self.thread_wakes.note(s.shared.waiter.wake());
                }
            }
        }
        let mut changed = std::mem::take(&mut self.regranted);
        changed.clear();
        let short =
            self.recv_mem
                .rebalance(&mut self.streams, |s| &mut s.share, |i| changed.push(i));
        for &i in &changed {
            if let Some(s) = &self.streams[i] {
                Self::apply_credit(&mut self.ep, ConnectionHandle(i), s, mem);
            }
        }
        self.regranted = changed;
        // Short ones get more once a meaningful part of a share is free.
        self.regrant_at = short.then(|| (self.recv_mem.fair() / 8).clamp(1, READ_AHEAD_MIN));
        self.set_initial_credit();
    }

    /// The credit a handshake may advertise before the loop accounts for its
    /// connection.
    ///
    /// Those that announced a saved path draw from a connection's fair share
    /// of the free memory (see `Endpoint::set_announced_recv_budget`). The
    /// loop accounts a connection's credit once its application accepts it:
    /// a rebalance in between offers what was promised again, and if both
    /// peers then fill their credit the pool runs short, the port drops what
    /// does not fit, and the transport sends it again (never unsafe; at most a
    /// fair share over).
    fn set_initial_credit(&mut self) {
        let c = self
            .recv_mem
            .initial_credit(self.cfg.burst, INITIAL_CREDIT_MAX);
        self.ep.set_initial_recv_budget(Some(c));
        let announced = self.recv_mem.initial_credit(1, u64::MAX);
        self.ep.set_announced_recv_budget(Some(announced));
    }

    /// Sizes a connection's credit and the segments its storage may hold to its
    /// grant: what its reader's ring holds counts against both, in packet
    /// buffers (small segments pin a whole buffer each), and the credit is
    /// counted in the peer's datagrams (see [`credit_of`]). Credit already given
    /// stays honoured (see [`segment_cap`]).
    fn apply_credit(
        ep: &mut Endpoint<ChunkSend, ChunkRecv>,
        h: ConnectionHandle,
        s: &IoStream,
        mem: Memory,
    ) {
        let (ring_bytes, ring_segments) = s.unread(mem);
        if let Some(mut c) = ep.connection_mut(h) {
            let grain = mem.grain(c.data_payload());
            let free = s
                .share
                .grant
                .saturating_sub(mem.ring(ring_bytes, ring_segments));
            let budget = credit_of(free, mem, grain);
            c.set_recv_budget(budget);
            let given = c.recv_limit().saturating_sub(s.delivered);
            c.recv_storage_mut().set_segment_cap(segment_cap(
                s.share.grant,
                ring_segments,
                given.max(budget),
                mem,
                grain,
            ));
        }
    }

    /// Records what a connection commits now (credit beyond what it delivered,
    /// plus its reader's unread data; packet buffers where small segments pin
    /// more than their bytes) and hands memory that freed to connections short
    /// of their share.
    fn account(&mut self, i: usize) {
        let h = ConnectionHandle(i);
        let mem = self.memory();
        let Some(Some(s)) = self.streams.get_mut(i) else {
            return;
        };
        let Some(c) = self.ep.connection(h) else {
            return;
        };
        let (ring_bytes, ring_segments) = s.unread(mem);
        let stored = (c.recv_storage().len() as u64) * mem.max_payload;
        let credit = c.recv_limit().saturating_sub(s.delivered);
        let committed = memory_of(credit, mem, mem.grain(c.data_payload())).max(stored)
            + mem.ring(ring_bytes, ring_segments);
        self.recv_mem.update(&mut s.share, committed);
        if self.regrant_at.is_some_and(|t| self.recv_mem.free() >= t) {
            self.rebalance();
        }
    }

    /// The sizes receive memory is counted in.
    fn memory(&self) -> Memory {
        Memory {
            max_payload: self.max_payload,
            ring_slots: self.cfg.ring_slots,
        }
    }

    /// How much data a writer may queue in its ring beyond what its connection
    /// took.
    fn write_ahead(&self) -> u64 {
        memory_budget::write_ahead(self.send_share)
    }

    /// How much a stream's writer may hold in its ring: its share of the write
    /// memory, and no further ahead than its connection takes unsent data (what
    /// the ring holds must drain too before a close completes).
    fn ring_ahead(&self, h: ConnectionHandle) -> u64 {
        let write_ahead = self.write_ahead();
        self.ep.connection(h).map_or(write_ahead, |c| {
            write_ahead.min(c.unsent_limit().max(READ_AHEAD_MIN))
        })
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
        let chunk = self.chunk_of(h);
        let Some(Some(s)) = self.streams.get_mut(h.0) else {
            if let Event::Closed(_) = ev {
                self.ep.release(h);
            }
            return;
        };
        match ev {
            Event::Connected => {
                // The handshake told the peer's datagram size: writers (waiting
                // for this) fill buffers of it. Stored before `connected`, which
                // publishes it.
                s.shared.chunk.store(chunk, Ordering::Relaxed);
                s.shared.connected.store(true, Ordering::Release);
                self.thread_wakes.note(s.shared.waiter.wake());
            }
            Event::Readable => {}
            Event::Writable => {
                s.writes.unblock();
                self.retry.push(h.0);
                return;
            }
            Event::PeerFinished => s.peer_fin = true,
            Event::Completed => {
                // The close's outcome is known (every byte acknowledged both
                // ways): the application's close returns now, with the figures
                // as they are. The connection keeps its place (and counts as
                // live, so a shutdown waits for it) until its closing period
                // ends.
                if let Some(c) = self.ep.connection(h) {
                    *s.shared.stats.lock().unwrap_or_else(|e| e.into_inner()) = c.stats();
                }
                s.shared.set_closed(CloseReason::Graceful);
                self.thread_wakes.note(s.shared.waiter.wake());
                return;
            }
            Event::Closed(r) => s.closed = Some(r),
            // `Event` is non-exhaustive: a kind this runtime does not act on.
            _ => return,
        }
        if s.delivery.queue() {
            self.deliver.push(h.0);
        }
    }

    /// Moves application data from the stream's ring into its connection.
    fn drain_app(&mut self, i: usize, now: Instant) {
        let h = ConnectionHandle(i);
        let storage_share = memory_budget::send_storage(self.send_share, self.write_ahead());
        let ring_ahead = self.ring_ahead(h);
        let Some(Some(s)) = self.streams.get_mut(i) else {
            return;
        };
        s.shared.queued.store(false, Ordering::Release);
        if s.shared.set_write_ahead(ring_ahead) {
            self.thread_wakes.note(s.shared.waiter.wake());
        }
        // Pairs with the fence in `StreamShared::ring_doorbell`: what the
        // application pushed before ringing is seen below, or it queues again.
        std::sync::atomic::fence(Ordering::SeqCst);
        if s.delivery.wake_reader_wait() {
            self.deliver.push(i);
        }
        let reset = s.shared.reset.load(Ordering::Acquire);
        if reset != 0 && s.writes != AppWrites::Reset {
            s.writes = AppWrites::Reset;
            self.reset(h, reset as u32);
            return;
        }
        let mut popped = false;
        if s.writes != AppWrites::WaitingForWritable && !s.from_app.is_empty() {
            let from_app = &mut s.from_app;
            let shared = &s.shared;
            // The send storage holds at most the connection's share of packet
            // memory (beyond what its writer's ring holds).
            let held_max = storage_share;
            let mut left_over = false;
            let writer = |st: &mut ChunkSend, unsent_room: u64| {
                let mut total = 0;
                let mut taken = 0;
                while let Ok(b) = from_app.peek() {
                    let len = b.bytes().len() as u64;
                    let held = st.end() - st.start();
                    if len > st.free() || (held > 0 && held + len > held_max) {
                        break;
                    }
                    if taken >= unsent_room {
                        // As far ahead of the sending as the connection goes
                        // (within one buffer): the rest waits in the ring.
                        break;
                    }
                    let b = from_app.pop().expect("peeked");
                    taken += len;
                    total += st.push(b).unwrap_or(0);
                }
                shared.ring_bytes.taken(taken);
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
                        s.writes.block();
                    }
                }
                Err(WriteError::Blocked) => s.writes.block(),
                Err(_) => {
                    // Closed or finished: nothing more will be sent; free the data.
                    let mut taken = 0;
                    while let Ok(b) = s.from_app.pop() {
                        taken += b.bytes().len() as u64;
                    }
                    s.shared.ring_bytes.taken(taken);
                    popped = true;
                }
            }
        }
        if s.from_app.is_empty() && s.shared.finish.load(Ordering::Acquire) {
            let closing = s.shared.discard.load(Ordering::Acquire);
            if closing && s.writes < AppWrites::Closing {
                // Closing, after a finish or not: end once everything is
                // acknowledged. (Told only of the finish, the connection never
                // closed itself: it waited for the peer's Close, and when that
                // was lost, for its keepalive to draw another, 2 s.)
                s.writes = AppWrites::Closing;
                if let Some(mut c) = self.ep.connection_mut(h) {
                    c.close(now);
                }
            } else if !closing && s.writes < AppWrites::Finished {
                s.writes = AppWrites::Finished;
                if let Some(mut c) = self.ep.connection_mut(h) {
                    c.finish();
                }
            }
        }
        if s.shared.discard.load(Ordering::Acquire) && s.delivery.queue() {
            self.deliver.push(i);
        }
        if popped {
            let cap = s.from_app.buffer().capacity();
            if s.shared.writer_may_resume(cap - s.from_app.slots(), cap) {
                self.thread_wakes.note(s.shared.waiter.wake());
            }
        }
        // Data pushed after we cleared `queued` rang again; data that did not fit
        // waits for Writable.
    }

    /// Moves in-order received data to the application's ring; publishes end of
    /// stream and close once everything before them was handed over.
    fn deliver_to_app(&mut self, i: usize, now: Instant) {
        let h = ConnectionHandle(i);
        let mem = self.memory();
        let Some(Some(s)) = self.streams.get_mut(i) else {
            return;
        };
        // Delivery runs ahead of the reader by at most half its grant (the rest
        // stays credit for the peer), and at least two datagrams whatever the
        // grant (a reader always finds data; a connection short of memory holds
        // little beyond its grant).
        let ahead = (s.share.grant / 2).clamp(2 * mem.max_payload, READ_AHEAD_MAX);
        let ahead_segments = ((ahead / mem.max_payload) as usize).max(2);
        let discard = s.shared.discard.load(Ordering::Acquire);
        let mut moved = 0u64;
        // Data handed over (the last segment's length), and whether the reader
        // must learn something at once (end of stream, delivery waiting for it).
        let mut last_pushed = None;
        let mut pushed = false;
        let unread = |s: &IoStream| s.unread(mem).0;
        let room = |s: &IoStream| {
            let (bytes, segments) = s.unread(mem);
            s.to_app.slots() > 0 && bytes < ahead && segments < ahead_segments
        };
        if let Some(mut c) = self.ep.connection_mut(h) {
            let storage = c.recv_storage_mut();
            while discard || room(s) {
                let Some(seg) = storage.pop_at(s.delivered) else {
                    break;
                };
                s.delivered += seg.len as u64;
                moved += seg.len as u64;
                if discard {
                    s.discarded += seg.len as u64;
                } else {
                    last_pushed = Some(seg.len);
                    let _ = s.to_app.push(seg);
                }
            }
        }
        // Credit: the grant less what the reader has not read yet (set before the
        // consumed bytes extend it).
        let read_before = s.shared.app_read.load(Ordering::SeqCst);
        Self::apply_credit(&mut self.ep, h, s, mem);
        if moved > 0 {
            if let Some(mut c) = self.ep.connection_mut(h) {
                c.consume(moved);
            }
        }
        let drained = self.ep.connection(h).is_none_or(|c| c.readable() == 0);
        // Unread data holds more than half the grant: credit is short until the
        // reader reads.
        let squeezed = !discard && unread(s) > s.share.grant / 2;
        if !drained || squeezed {
            // The reader is behind (its ring, its read-ahead or its grant is
            // full): it rings the doorbell after its next read. Re-checked after
            // raising the flag (pairs with `StreamShared::note_read`), so a read
            // in between is seen.
            s.shared.wake_on_read.store(true, Ordering::SeqCst);
            std::sync::atomic::fence(Ordering::SeqCst);
            let read_since = s.shared.app_read.load(Ordering::SeqCst) != read_before;
            if read_since || (!drained && (discard || room(s))) {
                s.shared.wake_on_read.store(false, Ordering::Relaxed);
                if s.delivery.queue() {
                    self.deliver.push(i);
                }
            } else {
                s.delivery = Delivery::WaitingForReader;
                // Delivery or credit waits for the reader: it must not sleep
                // through that.
                pushed = true;
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
                self.thread_wakes.note(s.shared.waiter.wake());
                self.recv_mem.leave(s.share);
                self.streams[i] = None;
                self.live -= 1;
                self.ep.release(h);
                self.rebalance();
                return;
            }
        }
        if pushed {
            s.wake_deferred = None;
            self.thread_wakes.note(s.shared.waiter.wake());
        } else if let Some(len) = last_pushed {
            if reader_wake::wake_now(len, self.chunk, unread(s), ahead) {
                s.wake_deferred = None;
                self.thread_wakes.note(s.shared.waiter.wake());
            } else if s.wake_deferred.is_none() {
                s.wake_deferred = Some(now);
                self.deferred_wakes.push_back((i, now));
            }
        }
        self.account(i);
    }

    /// Wakes the readers whose deferred wake-up is due (see [`reader_wake`]).
    fn wake_deferred_readers(&mut self, now: Instant) {
        while let Some(&(i, since)) = self.deferred_wakes.front() {
            let Some(Some(s)) = self.streams.get_mut(i) else {
                self.deferred_wakes.pop_front();
                continue;
            };
            if s.wake_deferred != Some(since) {
                // Woken since (or deferred again: a later entry).
                self.deferred_wakes.pop_front();
                continue;
            }
            if now < since + reader_wake::MAX_DEFER {
                break;
            }
            s.wake_deferred = None;
            self.thread_wakes.note(s.shared.waiter.wake());
            self.deferred_wakes.pop_front();
        }
    }

    /// When the next deferred reader wake-up is due (at the latest: the oldest
    /// entry may have been woken otherwise).
    fn next_deferred_wake(&self) -> Option<Instant> {
        self.deferred_wakes
            .front()
            .map(|&(_, since)| since + reader_wake::MAX_DEFER)
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

#[cfg(test)]
mod segment_cap_tests {
    use super::{credit_of, memory_of, segment_cap, Memory};

    const MEM: Memory = Memory {
        max_payload: 1432,
        ring_slots: 64,
    };

    #[test]
    fn storage_keeps_room_for_the_credit_given_and_the_grant_otherwise() {
        let mp = MEM.max_payload;
        // A grant of 10 datagrams, 4 of them in the reader's ring, 3 of credit.
        assert_eq!(segment_cap(10 * mp, 4, 3 * mp, MEM, mp), 6);
        // The grant lowered to 2 datagrams after 45 were promised: 45 stay.
        assert_eq!(segment_cap(2 * mp, 0, 45 * mp, MEM, mp), 45);
        // Part of a datagram of credit counts as one; none still leaves one.
        assert_eq!(segment_cap(0, 0, mp / 2, MEM, mp), 1);
        assert_eq!(segment_cap(0, 3, 0, MEM, mp), 1);
    }

    #[test]
    fn a_peer_sending_smaller_datagrams_gets_credit_for_as_many_buffers() {
        let mp = MEM.max_payload;
        // 1,064-byte datagrams carry 1,024 stream bytes.
        let grain = 1024;
        // 10 buffers' worth of memory is 10 of the peer's datagrams of credit.
        let credit = credit_of(10 * mp, MEM, grain);
        assert_eq!(credit, 10 * grain);
        // That credit commits the same 10 buffers, and the storage holds them.
        assert_eq!(memory_of(credit, MEM, grain), 10 * mp);
        assert_eq!(segment_cap(2 * mp, 0, credit, MEM, grain), 10);
        // Credit given at the full size before the handshake told the peer's
        // size comes in more of its datagrams: the storage keeps room for them.
        assert_eq!(segment_cap(0, 0, 10 * mp, MEM, grain), 14);
        assert_eq!(memory_of(10 * mp, MEM, grain), 14 * mp);
        // No overflow at the extremes.
        assert_eq!(credit_of(u64::MAX, MEM, mp), u64::MAX);
        assert_eq!(memory_of(u64::MAX, MEM, 1), u64::MAX);
    }
}
