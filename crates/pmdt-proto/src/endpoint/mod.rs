//! The endpoint: owns connections, demultiplexes datagrams by connection id, accepts
//! (server) and opens (client) connections, and schedules transmissions fairly.

mod connection_mut;
pub(crate) mod path_shares;
mod timer_heap;
mod transmit;

pub use connection_mut::ConnectionMut;
pub use transmit::EndpointTransmit;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use rustc_hash::FxBuildHasher;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::{AddressValidation, ConfigError, EndpointConfig, TransportConfig};
use crate::connect_options::ConnectOptions;
use crate::connection::ShareOnPath;
use crate::connection::{
    CloseReason, Connection, ConnectionParams, Event, Side, Transmit, REFUSED_CODE,
};
use crate::cookie::CookieKey;
use crate::linger::Lingering;
use crate::recv_buffer::{RecvRing, RecvStorage};
use crate::send_buffer::{ByteRing, SendStorage};
use crate::stats::EndpointStats;
use crate::wire::{self, Body, HandshakeParams, Header, Packet, PacketNumber, PacketType};
use path_shares::PathShares;

/// Most stateless answers (Retry, Reset) waiting to be sent: under a handshake
/// flood the rest are dropped rather than queued without bound.
const MAX_STATELESS_QUEUED: usize = 1024;
/// Room for one stateless answer: a Retry with the largest cookie, or a Reset.
const STATELESS_MAX_LEN: usize = 64;

/// Handle of a connection within its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionHandle(pub usize);

struct Slot<S: SendStorage, R: RecvStorage> {
    conn: Connection<S, R>,
    /// The timer the heap holds for this connection.
    scheduled: Option<Instant>,
    /// Something happened to the connection since its events were collected
    /// and its timer rescheduled (it is in `Endpoint::stale`).
    stale: bool,
    ready: bool,
    deficit: i64,
    init_key: Option<(SocketAddr, u64)>,
    address: PeerAddress,
    /// The connection's delivered bytes at the last share check
    /// ([`Endpoint::check_path_shares`]).
    delivered_at_check: u64,
}

/// Whether a connection's peer proved it receives at its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PeerAddress {
    /// Proven: the client returned a Retry cookie, sent a packet to the
    /// connection id only our Accept told it, or this side opened the
    /// connection.
    Proven,
    /// Accepted at the first Init, with nothing heard since at the connection
    /// id our Accept carried.
    Unproven,
}

/// Makes the send or receive storage of a new connection (given the configured
/// buffer size in bytes).
pub type StorageFactory<T> = Box<dyn FnMut(u64) -> T + Send>;

/// A pmdt endpoint: many connections over one datagram socket/port. `S` and `R` are
/// the connections' send and receive storage.
pub struct Endpoint<S: SendStorage = ByteRing, R: RecvStorage = RecvRing> {
    cfg: EndpointConfig,
    transport: Arc<crate::config::TransportConfig>,
    rng: ChaCha8Rng,
    epoch: Instant,
    cookie_key: CookieKey,
    slots: Vec<Option<Slot<S, R>>>,
    free: Vec<usize>,
    /// Connections by our connection id, looked up for every datagram: our ids
    /// are random 64-bit values, so a multiplicative hash (FxHash) spreads them as
    /// well as SipHash does, at a fraction of its cost (a peer can only look ids
    /// up, never insert one it chose).
    by_cid: HashMap<u64, usize, FxBuildHasher>,
    by_init: HashMap<(SocketAddr, u64), usize>,
    ready: VecDeque<usize>,
    /// Receive credit a new connection starts with (see
    /// `set_initial_recv_budget`).
    initial_recv_budget: Option<u64>,
    /// … and one whose peer announced a saved path (see
    /// `set_announced_recv_budget`).
    announced_recv_budget: Option<u64>,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    stateless: VecDeque<(SocketAddr, [u8; STATELESS_MAX_LEN], usize)>,
    accept_queue: VecDeque<ConnectionHandle>,
    events: VecDeque<(ConnectionHandle, Event)>,
    /// Scratch list of `handle_timeout` (kept to reuse its memory).
    due: Vec<usize>,
    /// Connections whose events and timer are collected at the next look at
    /// either ([`Endpoint::poll_event`], [`Endpoint::poll_timeout`], ...), not
    /// after every datagram: a burst of 32 datagrams then derives the
    /// connection's deadlines once instead of 32 times.
    stale: Vec<usize>,
    /// Released connections that closed gracefully, still answering their peer.
    lingering: Lingering,
    storage: StorageFactory<S>,
    recv_storage: StorageFactory<R>,
    stats: EndpointStats,
    /// Accepted connections whose address is not proven yet
    /// ([`PeerAddress::Unproven`]).
    unproven: usize,
    /// The per-host sums of the last share check and when the next is due
    /// ([`Endpoint::check_path_shares`]).
    path_shares: PathShares,
}

impl Endpoint<ByteRing, RecvRing> {
    /// An endpoint whose connections copy data through byte rings.
    pub fn new(cfg: EndpointConfig, now: Instant) -> Result<Self, ConfigError> {
        Self::with_storage(
            cfg,
            now,
            Box::new(|cap| ByteRing::new(cap as usize)),
            Box::new(|cap| RecvRing::new(cap as usize)),
        )
    }
}

impl<S: SendStorage, R: RecvStorage<Packet = ()>> Endpoint<S, R> {
    /// Handles one received datagram from `remote` (storage that copies payloads).
    pub fn handle(&mut self, now: Instant, remote: SocketAddr, data: &[u8]) {
        self.handle_in(now, remote, data, &());
    }
}

impl<S: SendStorage, R: RecvStorage> Endpoint<S, R> {
    /// An endpoint whose connections get their send and receive storage from the
    /// factories (called with the configured buffer sizes).
    pub fn with_storage(
        cfg: EndpointConfig,
        now: Instant,
        storage: StorageFactory<S>,
        recv_storage: StorageFactory<R>,
    ) -> Result<Self, ConfigError> {
        cfg.transport.validate()?;
        let mut rng = match cfg.seed {
            Some(s) => ChaCha8Rng::seed_from_u64(s),
            None => ChaCha8Rng::from_os_rng(),
        };
        let cookie_key = CookieKey::new(rng.random(), rng.random());
        let max_connections = cfg.max_connections;
        Ok(Self {
            transport: Arc::new(cfg.transport.clone()),
            cfg,
            rng,
            epoch: now,
            cookie_key,
            slots: Vec::new(),
            free: Vec::new(),
            by_cid: HashMap::default(),
            by_init: HashMap::new(),
            ready: VecDeque::new(),
            initial_recv_budget: None,
            announced_recv_budget: None,
            timers: BinaryHeap::with_capacity(64),
            stateless: VecDeque::new(),
            accept_queue: VecDeque::new(),
            events: VecDeque::new(),
            due: Vec::new(),
            stale: Vec::new(),
            lingering: Lingering::new(max_connections),
            storage,
            recv_storage,
            stats: EndpointStats::default(),
            unproven: 0,
            path_shares: PathShares::default(),
        })
    }

    /// Endpoint counters.
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// The configuration.
    pub fn config(&self) -> &EndpointConfig {
        &self.cfg
    }

    /// Number of live connections.
    pub fn connection_count(&self) -> usize {
        self.by_cid.len()
    }

    /// A connection, if the handle is live.
    pub fn connection(&self, h: ConnectionHandle) -> Option<&Connection<S, R>> {
        self.slots.get(h.0)?.as_ref().map(|s| &s.conn)
    }

    /// Application access to a connection (write, read, finish, close, reset, ...),
    /// if the handle is live. The endpoint reschedules the connection when the
    /// returned guard is dropped.
    pub fn connection_mut(&mut self, h: ConnectionHandle) -> Option<ConnectionMut<'_, S, R>> {
        self.connection_at(h.0)?;
        Some(ConnectionMut::new(self, h.0))
    }

    fn connection_at(&self, i: usize) -> Option<&Connection<S, R>> {
        self.slots.get(i)?.as_ref().map(|s| &s.conn)
    }

    fn connection_at_mut(&mut self, i: usize) -> Option<&mut Connection<S, R>> {
        self.slots.get_mut(i)?.as_mut().map(|s| &mut s.conn)
    }

    /// Handles of all live connections.
    pub fn handles(&self) -> impl Iterator<Item = ConnectionHandle> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_some())
            .map(|(i, _)| ConnectionHandle(i))
    }

    fn new_cid(&mut self) -> u64 {
        loop {
            let c: u64 = self.rng.random();
            if c != 0 && !self.by_cid.contains_key(&c) {
                return c;
            }
        }
    }

    fn insert(
        &mut self,
        conn: Connection<S, R>,
        init_key: Option<(SocketAddr, u64)>,
        address: PeerAddress,
    ) -> ConnectionHandle {
        let cid = conn.local_cid();
        let host = conn.remote().ip();
        if address == PeerAddress::Unproven {
            self.unproven += 1;
        }
        let slot = Slot {
            conn,
            scheduled: None,
            stale: false,
            ready: false,
            deficit: 0,
            init_key,
            address,
            delivered_at_check: 0,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        };
        self.by_cid.insert(cid, i);
        if let Some(k) = init_key {
            self.by_init.insert(k, i);
        }
        // `handle_timeout` lists at most one due timer per slot: size its scratch
        // now, so the first timer to fire in steady state does not allocate.
        self.due.reserve(self.slots.len());
        self.stats.connections_opened += 1;
        self.tell_siblings(host);
        self.resync(i);
        ConnectionHandle(i)
    }

    /// A new connection with a fresh random id, initial packet number and storage.
    fn new_connection(
        &mut self,
        now: Instant,
        side: Side,
        remote: SocketAddr,
        peer: Option<HandshakeParams>,
        cfg: Arc<TransportConfig>,
    ) -> Connection<S, R> {
        let local_cid = self.new_cid();
        // Below 2^32, so the peer reads the first short-header numbers whole.
        let initial_pn = u64::from(self.rng.random::<u32>());
        let mut conn = Connection::new(ConnectionParams {
            side,
            local_cid,
            remote_cid: peer.map_or(0, |p| p.src_cid),
            remote,
            epoch: self.epoch,
            now,
            initial_pn,
            storage: (self.storage)(cfg.send_buffer),
            recv_storage: (self.recv_storage)(cfg.recv_buffer),
            cfg,
            peer,
        });
        let announced = peer.is_some_and(|p| p.path_bdp > 0);
        // Never less than a handshake from cold gets.
        let budget = match (announced, self.announced_recv_budget) {
            (true, Some(left)) => Some(self.initial_recv_budget.map_or(left, |b| b.max(left))),
            _ => self.initial_recv_budget,
        };
        if let Some(bytes) = budget {
            conn.set_initial_recv_budget(bytes);
        }
        if let (true, Some(left)) = (announced, self.announced_recv_budget.as_mut()) {
            // Drawn from until the owner sizes it again: a burst of such Inits
            // shares it instead of each being promised all of it.
            *left = left.saturating_sub(conn.recv_limit());
        }
        conn
    }

    /// Receive memory each new connection starts with, e.g. what a runtime's
    /// packet pool has free for it, counted in this side's full datagrams: its
    /// first packet (Init or Accept) advertises at most this much credit (less
    /// for a peer of smaller datagrams, which pin as many buffers), and credit
    /// once advertised cannot be taken back.
    /// The owner then sizes each connection's credit with
    /// [`Connection::set_recv_budget`]. `None`: the configured receive buffer.
    pub fn set_initial_recv_budget(&mut self, bytes: Option<u64>) {
        self.initial_recv_budget = bytes;
    }

    /// Receive memory a new connection starts with when its peer's Init
    /// announced a saved path (`path_bdp`, Careful Resume): its first round
    /// trip sends half that path's bandwidth-delay product, which a budget
    /// sized for a cold start (ten datagrams) would hold back for a round trip
    /// until the owner sizes the connection. Each such connection draws its
    /// credit from `bytes` until the next call (so a burst of them shares it),
    /// and only a peer that received the Accept (so proved its address) can
    /// send data into it; it never gets less than a connection from cold.
    /// `None`: [`Endpoint::set_initial_recv_budget`]'s.
    pub fn set_announced_recv_budget(&mut self, bytes: Option<u64>) {
        self.announced_recv_budget = bytes;
    }

    /// Opens a connection to `remote` (client).
    pub fn connect(&mut self, now: Instant, remote: SocketAddr) -> ConnectionHandle {
        let cfg = self.transport.clone();
        let conn = self.new_connection(now, Side::Client, remote, None, cfg);
        self.insert(conn, None, PeerAddress::Proven)
    }

    /// Opens a connection to `remote` (client) with its own controller or
    /// startup: the endpoint's transport configuration with `options` applied,
    /// refused when the result would not be valid.
    pub fn connect_with(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        options: &ConnectOptions,
    ) -> Result<ConnectionHandle, ConfigError> {
        // Without overrides the connection shares the endpoint's configuration,
        // as `connect` does (the runtime opens every connection through here).
        let cfg = if options.overrides_config() {
            Arc::new(options.apply(&self.transport)?)
        } else {
            self.transport.clone()
        };
        let mut conn = self.new_connection(now, Side::Client, remote, None, cfg);
        if let Some(saved) = options.resume {
            conn.set_resume(saved);
        }
        Ok(self.insert(conn, None, PeerAddress::Proven))
    }

    /// Next accepted incoming connection (server): one whose client proved its
    /// address, by a Retry cookie or by a packet sent to the connection id our
    /// Accept carried (see [`AddressValidation`]). Until then the application
    /// does not see it, so nothing it writes can go to a spoofed address.
    pub fn accept(&mut self) -> Option<ConnectionHandle> {
        self.accept_queue.pop_front()
    }

    /// Until when a connection that closed gracefully without hearing its
    /// peer's Close may still be needed: its own Close may have been lost, and
    /// the peer, still waiting, gets one only in answer to what it sends
    /// meanwhile (TCP's TIME-WAIT). Whoever runs the endpoint keeps it running
    /// (receiving and transmitting) until then before stopping, or that peer
    /// ends "timed out" although every byte arrived. None: no peer waits.
    pub fn lingering_until(&mut self, now: Instant) -> Option<Instant> {
        self.lingering.awaited_until(now)
    }

    /// Next connection event.
    pub fn poll_event(&mut self) -> Option<(ConnectionHandle, Event)> {
        self.collect_stale();
        self.events.pop_front()
    }

    /// Tells each connection to `host` how many others this endpoint holds to
    /// it (flows that share the path, and stop with this sender), and whether
    /// a loss-based one is among them. O(connections), once per connection
    /// opened or released.
    fn tell_siblings(&mut self, host: IpAddr) {
        let to_host = |s: &&mut Slot<S, R>| s.conn.remote().ip() == host;
        let (mut n, mut loss_based) = (0, false);
        for slot in self.slots.iter_mut().flatten().filter(to_host) {
            n += 1;
            loss_based |= slot.conn.is_loss_based();
        }
        for slot in self.slots.iter_mut().flatten().filter(to_host) {
            slot.conn.set_path_siblings(n - 1, loss_based);
        }
    }

    /// At most every [`path_shares::CHECK_EVERY`] (at the first call at
    /// least that long after the last): tells each model-based connection
    /// beside a loss-based flow on its path whether it delivered less than
    /// the flows to its host (the loss-based ones among them) did on average
    /// since the last check, or more than
    /// [`crate::connection::AHEAD_OF_AVERAGE`] times it while the
    /// loss-based ones delivered a share, and every other connection that it
    /// is even
    /// (see [`path_shares`]). O(connections) per check.
    fn check_path_shares(&mut self, now: Instant) {
        if !self.path_shares.begin(now) {
            return;
        }
        let counted = |s: &&Slot<S, R>| s.conn.beside_a_loss_based_flow();
        for slot in self.slots.iter().flatten().filter(counted) {
            let delivered = slot.conn.delivered_bytes();
            let since = delivered.saturating_sub(slot.delivered_at_check);
            self.path_shares
                .add(slot.conn.remote().ip(), since, slot.conn.is_loss_based());
        }
        for slot in self.slots.iter_mut().flatten() {
            let delivered = slot.conn.delivered_bytes();
            let compared = slot.conn.beside_a_loss_based_flow() && !slot.conn.is_loss_based();
            let share = if compared {
                let since = delivered.saturating_sub(slot.delivered_at_check);
                self.path_shares.share(slot.conn.remote().ip(), since)
            } else {
                ShareOnPath::Even
            };
            slot.delivered_at_check = delivered;
            slot.conn.set_share_on_path(share);
        }
    }

    /// Frees a closed connection's state. Returns false if it is still open.
    pub fn release(&mut self, h: ConnectionHandle) -> bool {
        // Its last events (its Closed among them) are queued before it goes.
        self.collect_stale();
        let closed = self.connection(h).is_some_and(|c| c.is_closed());
        if closed {
            if let Some(slot) = self.slots[h.0].take() {
                if slot.address == PeerAddress::Unproven {
                    self.unproven -= 1;
                }
                let c = &slot.conn;
                self.by_cid.remove(&c.local_cid());
                if c.close_reason() == Some(CloseReason::Graceful) {
                    self.lingering.insert(
                        c.local_cid(),
                        c.remote(),
                        c.remote_cid(),
                        c.linger_deadline(),
                        !c.peer_close_heard(),
                    );
                }
                if let Some(k) = slot.init_key {
                    self.by_init.remove(&k);
                }
                self.free.push(h.0);
                self.tell_siblings(slot.conn.remote().ip());
            }
        }
        closed
    }

    /// Reschedules connection `i` after something happened to it (a datagram, a
    /// timer, the application): it may have something to send now, new events and
    /// another deadline.
    fn resync(&mut self, i: usize) {
        let Some(Some(slot)) = self.slots.get_mut(i) else {
            return;
        };
        if !slot.ready {
            slot.ready = true;
            self.ready.push_back(i);
        }
        self.mark_stale(i);
    }

    /// Notes that connection `i` changed: its events and timer are collected at
    /// the next [`Endpoint::collect_stale`].
    fn mark_stale(&mut self, i: usize) {
        if let Some(Some(slot)) = self.slots.get_mut(i) {
            if !slot.stale {
                slot.stale = true;
                self.stale.push(i);
            }
        }
    }

    /// Collects the events and reschedules the timers of every connection that
    /// changed since the last call: before anything reads events or timers.
    fn collect_stale(&mut self) {
        if self.stale.is_empty() {
            return;
        }
        let mut stale = std::mem::take(&mut self.stale);
        for &i in &stale {
            if let Some(Some(slot)) = self.slots.get_mut(i) {
                if slot.stale {
                    slot.stale = false;
                    self.sync(i);
                }
            }
        }
        stale.clear();
        self.stale = stale;
    }

    /// Keeps one live heap entry per connection, pushed only when the deadline moves
    /// earlier: a later deadline (the usual case: each packet pushes the probe timeout
    /// back) waits for the existing entry, which re-arms when it fires. The heap stays
    /// the size of the connection count instead of growing with every packet.
    fn schedule(
        timers: &mut BinaryHeap<Reverse<(Instant, usize)>>,
        slot: &mut Slot<S, R>,
        i: usize,
    ) {
        let Some(t) = slot.conn.poll_timeout() else {
            return;
        };
        if slot.scheduled.is_none_or(|s| t < s) {
            slot.scheduled = Some(t);
            timers.push(Reverse((t, i)));
        }
    }

    /// Starts or stops accepting incoming connections.
    pub fn set_accept(&mut self, accept: bool) {
        self.cfg.accept = accept;
    }

    /// Handles one received datagram from `remote` that lives in `memory` (for
    /// storage that keeps packet memory instead of copying, e.g. an mbuf).
    pub fn handle_in(&mut self, now: Instant, remote: SocketAddr, data: &[u8], memory: &R::Packet) {
        self.stats.datagrams_in += 1;
        let pkt = match wire::decode(data) {
            Ok(p) => p,
            Err(error) => {
                tracing::trace!(%remote, %error, "undecodable datagram");
                self.stats.malformed += 1;
                return;
            }
        };
        if pkt.body.packet_type() == PacketType::Init {
            self.handle_init(now, remote, &pkt, data.len(), memory);
            return;
        }
        let Some(&i) = self.by_cid.get(&pkt.header.dst_cid) else {
            self.stats.unknown_connection += 1;
            match pkt.body {
                Body::Close { .. } | Body::Reset { .. } => {
                    self.lingering.peer_closed(pkt.header.dst_cid, remote);
                }
                _ => {
                    if let Some(peer) = self.lingering.answer(pkt.header.dst_cid, remote, now) {
                        self.stats.lingering_answered += 1;
                        self.queue_stateless(remote, peer, Body::Close { code: 0 });
                    }
                }
            }
            return;
        };
        let Some(slot) = self.slots[i].as_mut() else {
            self.stats.unknown_connection += 1;
            return;
        };
        if slot.conn.remote() != remote {
            self.stats.unknown_connection += 1;
            return;
        }
        if slot.address == PeerAddress::Unproven {
            // Only a client that received our Accept knows this connection id:
            // the application gets the connection now.
            slot.address = PeerAddress::Proven;
            self.unproven -= 1;
            if !slot.conn.is_closed() {
                self.accept_queue.push_back(ConnectionHandle(i));
            }
        }
        slot.conn.handle_packet(now, &pkt, data.len(), memory);
        self.resync(i);
    }

    fn now_secs(&self, now: Instant) -> u32 {
        now.saturating_duration_since(self.epoch).as_secs() as u32
    }

    fn handle_init(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        pkt: &Packet<'_>,
        len: usize,
        memory: &R::Packet,
    ) {
        let Body::Init { params, cookie } = &pkt.body else {
            return;
        };
        if pkt.header.dst_cid != 0 {
            self.stats.malformed += 1;
            return;
        }
        if let Some(&i) = self.by_init.get(&(remote, params.src_cid)) {
            if let Some(slot) = self.slots[i].as_mut() {
                slot.conn.handle_packet(now, pkt, len, memory);
            }
            self.resync(i);
            return;
        }
        if !self.cfg.accept || self.by_cid.len() >= self.cfg.max_connections {
            tracing::debug!(%remote, "connection refused");
            self.stats.refused += 1;
            self.queue_stateless(remote, params.src_cid, Body::Reset { code: REFUSED_CODE });
            return;
        }
        let secs = self.now_secs(now);
        let lifetime = self.cfg.cookie_lifetime.as_secs() as u32;
        let address = if cookie.is_empty() {
            let busy = match self.cfg.address_validation {
                AddressValidation::Always => true,
                AddressValidation::WhenBusy { max_unproven } => self.unproven >= max_unproven,
            };
            if busy {
                self.send_retry(remote, params.src_cid, secs);
                return;
            }
            PeerAddress::Unproven
        } else if self
            .cookie_key
            .verify(cookie, &remote, params.src_cid, secs, lifetime)
        {
            PeerAddress::Proven
        } else {
            // Stale (the client held it past its lifetime) or forged: a fresh one,
            // so a real client is not left repeating a dead cookie until its
            // handshake times out. Stateless and bounded like any Retry.
            tracing::debug!(%remote, "handshake with an invalid or stale cookie");
            self.stats.bad_cookies += 1;
            self.send_retry(remote, params.src_cid, secs);
            return;
        };
        let cfg = self.transport.clone();
        let mut conn = self.new_connection(now, Side::Server, remote, Some(*params), cfg);
        conn.handle_packet(now, pkt, len, memory);
        let h = self.insert(conn, Some((remote, params.src_cid)), address);
        tracing::debug!(%remote, handle = h.0, ?address, "connection accepted");
        if address == PeerAddress::Proven {
            self.accept_queue.push_back(h);
        }
    }

    /// Answers an Init with a Retry carrying a fresh cookie (no state kept).
    fn send_retry(&mut self, remote: SocketAddr, client_cid: u64, secs: u32) {
        self.stats.retries_sent += 1;
        let c = self.cookie_key.issue(&remote, client_cid, secs);
        self.queue_stateless(remote, client_cid, Body::Retry { cookie: &c });
    }

    fn queue_stateless(&mut self, remote: SocketAddr, dst_cid: u64, body: Body<'_>) {
        if self.stateless.len() >= MAX_STATELESS_QUEUED {
            tracing::debug!(%remote, "stateless answer dropped: queue full");
            return;
        }
        let mut buf = [0u8; STATELESS_MAX_LEN];
        let header = Header {
            dst_cid,
            pn: PacketNumber::Full(0),
            timestamp: 0,
            timestamp_echo: 0,
        };
        if let Ok(n) = wire::encode(&mut buf, &Packet { header, body }) {
            self.stateless.push_back((remote, buf, n));
        }
    }

    /// When [`Endpoint::handle_timeout`] must be called next.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.collect_stale();
        while let Some(Reverse((t, i))) = self.timers.peek().copied() {
            let live = self
                .slots
                .get(i)
                .and_then(|s| s.as_ref())
                .is_some_and(|s| s.scheduled == Some(t));
            if live {
                return Some(t);
            }
            self.timers.pop();
        }
        None
    }

    /// Runs every connection timer due at `now` (each connection once per
    /// call), and at most every 100 ms compares the delivery of the flows to
    /// each host that a loss-based flow shares (a flow behind makes up its
    /// absences from the core whole).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.collect_stale();
        self.check_path_shares(now);
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        while let Some(Reverse((t, i))) = self.timers.peek().copied() {
            if t > now {
                break;
            }
            self.timers.pop();
            let Some(Some(slot)) = self.slots.get_mut(i) else {
                continue;
            };
            if slot.scheduled != Some(t) {
                continue;
            }
            slot.scheduled = None;
            due.push(i);
        }
        for &i in &due {
            if let Some(Some(slot)) = self.slots.get_mut(i) {
                slot.conn.handle_timeout(now);
            }
            self.resync(i);
        }
        due.clear();
        self.due = due;
    }

    /// The next datagram to send, written into `buf`: first the stateless answers
    /// to handshakes, then the connections' datagrams. Connections with data are
    /// served by deficit round-robin (quantum: one full datagram), so each gets an
    /// equal share of the link.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<EndpointTransmit> {
        if let Some(t) = self.poll_stateless(buf) {
            return Some(EndpointTransmit::Stateless(t));
        }
        self.poll_transmit_with(now, buf, |c, now, buf| c.poll_transmit(now, buf))
            .map(|(h, t)| EndpointTransmit::Connection(h, t))
    }

    /// Like [`Endpoint::poll_transmit`], but a connection's datagram gets only its
    /// header written; the caller appends the payload from the connection's
    /// storage (zero-copy runtimes). Stateless answers are complete.
    pub fn poll_transmit_header(
        &mut self,
        now: Instant,
        buf: &mut [u8],
    ) -> Option<EndpointTransmit> {
        if let Some(t) = self.poll_stateless(buf) {
            return Some(EndpointTransmit::Stateless(t));
        }
        self.poll_transmit_with(now, buf, |c, now, buf| c.poll_transmit_header(now, buf))
            .map(|(h, t)| EndpointTransmit::Connection(h, t))
    }

    /// A queued stateless answer (Retry/Reset), if one is queued and fits `buf`.
    fn poll_stateless(&mut self, buf: &mut [u8]) -> Option<Transmit> {
        let (destination, b, n) = self.stateless.front()?;
        let len = *n;
        if buf.len() < len {
            return None;
        }
        buf[..len].copy_from_slice(&b[..len]);
        let t = Transmit {
            destination: *destination,
            len,
            header_len: len,
            payload: None,
        };
        self.stateless.pop_front();
        self.stats.datagrams_out += 1;
        Some(t)
    }

    fn poll_transmit_with<F>(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        mut f: F,
    ) -> Option<(ConnectionHandle, Transmit)>
    where
        F: FnMut(&mut Connection<S, R>, Instant, &mut [u8]) -> Option<Transmit>,
    {
        let quantum = self.transport.max_datagram as i64;
        let mut visits = self.ready.len();
        while visits > 0 {
            visits -= 1;
            let i = *self.ready.front()?;
            let Some(Some(slot)) = self.slots.get_mut(i) else {
                self.ready.pop_front();
                continue;
            };
            if slot.deficit <= 0 {
                slot.deficit += quantum;
            }
            match f(&mut slot.conn, now, buf) {
                Some(t) => {
                    slot.deficit -= t.len as i64;
                    if slot.deficit <= 0 {
                        // Used its share this round: to the back of the queue.
                        self.ready.pop_front();
                        self.ready.push_back(i);
                    }
                    self.stats.datagrams_out += 1;
                    self.mark_stale(i);
                    return Some((ConnectionHandle(i), t));
                }
                None => {
                    slot.ready = false;
                    slot.deficit = 0;
                    self.ready.pop_front();
                    self.mark_stale(i);
                }
            }
        }
        None
    }

    /// Collects a connection's events and reschedules its timer.
    fn sync(&mut self, i: usize) {
        if self.timers.len() == self.timers.capacity() && self.timers.len() >= 2 * self.slots.len()
        {
            // Full, and at least half the entries are stale or copies (one live
            // entry per connection): drop those rather than grow (allocate).
            // Amortized O(log n) per push.
            let slots = &self.slots;
            timer_heap::purge(&mut self.timers, |t, i| {
                slots
                    .get(i)
                    .and_then(|s| s.as_ref())
                    .is_some_and(|s| s.scheduled == Some(t))
            });
        }
        let Some(Some(slot)) = self.slots.get_mut(i) else {
            return;
        };
        // An unproven connection is not the application's yet (it is not in the
        // accept queue): its events wait for the proof, unless it ended (the
        // driver releases it on `Closed`).
        if slot.address == PeerAddress::Proven || slot.conn.is_closed() {
            while let Some(e) = slot.conn.poll_event() {
                self.events.push_back((ConnectionHandle(i), e));
            }
        }
        Self::schedule(&mut self.timers, slot, i);
    }
}

#[cfg(test)]
mod tests {
    use crate::config::TransportConfig;
    use crate::congestion::CongestionKind;
    use crate::connect_options::ConnectOptions;
    use crate::connection::{CloseReason, Event};
    use crate::pair::Pair;
    use std::time::Duration;

    use super::path_shares;
    use crate::connection::ShareOnPath;

    /// `handle_timeout`'s list of due connections never grows while it runs:
    /// it holds at most one entry per slot, and inserting a connection sizes it
    /// (the first timer to fire, perhaps deep in a transfer, allocates nothing).
    #[test]
    fn the_due_list_is_sized_when_a_connection_is_added() {
        let p = Pair::connected(TransportConfig::default());
        for e in [&p.client, &p.server] {
            assert!(!e.slots.is_empty());
            assert!(e.due.is_empty());
            assert!(e.due.capacity() >= e.slots.len());
        }
    }

    /// A connection's events and deadline are collected when they are read, once
    /// for a burst of datagrams rather than after each, and are current whenever
    /// read: after a burst, the endpoint's next timeout is the connection's own,
    /// and a connection released before anyone looked still reports its end.
    #[test]
    fn events_and_deadlines_are_current_whenever_read() {
        let mut p = Pair::connected(TransportConfig::default());
        let h = p.client_conn.expect("connected");
        while p.client.poll_event().is_some() {}
        assert!(p.client_write(&[7; 100_000]) > 10_000);
        let mut buf = vec![0u8; 2048];
        let mut sent = 0;
        while p.client.poll_transmit(p.now, &mut buf).is_some() {
            sent += 1;
        }
        assert!(sent > 1, "a burst");
        assert!(!p.client.stale.is_empty(), "collected when read");
        let own = p.client.connection(h).and_then(|c| c.poll_timeout());
        assert!(own.is_some(), "the data in flight arms a timer");
        assert_eq!(p.client.poll_timeout(), own);
        assert!(p.client.stale.is_empty());

        p.client.connection_mut(h).expect("live").reset(9);
        while p.client.poll_transmit(p.now, &mut buf).is_some() {}
        assert!(p.client.connection(h).is_some_and(|c| c.is_closed()));
        assert!(p.client.release(h), "released before its events were read");
        let events: Vec<_> = std::iter::from_fn(|| p.client.poll_event()).collect();
        assert_eq!(events, [(h, Event::Closed(CloseReason::LocalReset(9)))]);
    }

    /// Each connection knows how many others its endpoint holds to the same
    /// peer host (whatever the port), as connections open and are released.
    #[test]
    fn connections_know_their_siblings_to_the_same_host() {
        let mut p = Pair::connected(TransportConfig::default());
        let first = p.client_conn.expect("connected");
        let server = p.client.connection(first).expect("live").remote();
        let mut other_port = server;
        other_port.set_port(server.port() + 1);
        let second = p.client.connect(p.now, server);
        let third = p.client.connect(p.now, other_port);
        let elsewhere = p.client.connect(p.now, "192.0.2.7:9000".parse().unwrap());
        let siblings = |p: &Pair, h| p.client.connection(h).expect("live").path_siblings();
        for h in [first, second, third] {
            assert_eq!(siblings(&p, h), 2);
        }
        assert_eq!(siblings(&p, elsewhere), 0);
        p.client.connection_mut(third).expect("live").reset(1);
        let mut buf = vec![0u8; 2048];
        while p.client.poll_transmit(p.now, &mut buf).is_some() {}
        assert!(p.client.release(third));
        for h in [first, second] {
            assert_eq!(siblings(&p, h), 1);
        }
    }

    /// A loss-based flow among an endpoint's connections to a host bounds
    /// every one of those connections' catch-ups (its own too), and only
    /// while it is there and has company; flows of the default controller
    /// among themselves, and a loss-based flow alone, keep theirs.
    #[test]
    fn a_loss_based_flow_on_the_path_bounds_its_siblings_catch_ups() {
        let mut p = Pair::connected(TransportConfig::default());
        let first = p.client_conn.expect("connected");
        let server = p.client.connection(first).expect("live").remote();
        let second = p.client.connect(p.now, server);
        let beside = |p: &Pair, h| {
            p.client
                .connection(h)
                .expect("live")
                .beside_a_loss_based_flow()
        };
        assert!(!beside(&p, first) && !beside(&p, second));
        let cubic = ConnectOptions::default().with_congestion(CongestionKind::Cubic);
        let third = p.client.connect_with(p.now, server, &cubic).expect("valid");
        let alone = "192.0.2.7:9000".parse().unwrap();
        let elsewhere = p.client.connect_with(p.now, alone, &cubic).expect("valid");
        for h in [first, second, third] {
            assert!(beside(&p, h));
        }
        assert!(!beside(&p, elsewhere), "a loss-based flow alone");
        p.client.connection_mut(third).expect("live").reset(1);
        let mut buf = vec![0u8; 2048];
        while p.client.poll_transmit(p.now, &mut buf).is_some() {}
        assert!(p.client.release(third));
        assert!(!beside(&p, first) && !beside(&p, second));
    }

    /// Beside a loss-based flow, the endpoint tells a model-based flow that
    /// delivered less than the average of the flows to its host that it is
    /// behind (it then makes up its absences whole), but not that it is
    /// ahead beside a loss-based flow that delivers nothing; the loss-based
    /// flow counts in the average but is not told, and flows of the default
    /// controller among themselves are not compared.
    #[test]
    fn a_flow_behind_its_siblings_beside_a_loss_based_one_is_told_so() {
        let mut p = Pair::connected(TransportConfig::default());
        let bbr = p.client_conn.expect("connected");
        let server = p.client.connection(bbr).expect("live").remote();
        let other_bbr = p.client.connect(p.now, server);
        let share = |p: &Pair, h| p.client.connection(h).expect("live").share_on_path();
        // Only the first flow sends: it writes up to 1 MiB every 5 ms (the
        // pair's path is 5 ms each way).
        let data = vec![7u8; 1 << 20];
        let sending = |p: &mut Pair, for_: Duration| {
            let until = p.now + for_;
            while p.now < until {
                p.client_write(&data);
                p.server_read_all();
                p.drive_for(Duration::from_millis(5));
            }
        };
        sending(&mut p, Duration::from_millis(300));
        assert!(p.client.connection(bbr).expect("live").delivered_bytes() > 0);
        assert_eq!(share(&p, other_bbr), ShareOnPath::Even, "BBR flows only");
        let cubic = ConnectOptions::default().with_congestion(CongestionKind::Cubic);
        let cubic = p.client.connect_with(p.now, server, &cubic).expect("valid");
        sending(&mut p, 2 * path_shares::CHECK_EVERY);
        // Far over the average, but the CUBIC flow delivers nothing: no
        // competitor to give way to (`path_shares::LOSS_BASED_LEAST_SHARE`).
        assert_eq!(share(&p, bbr), ShareOnPath::Even, "the one delivering");
        assert_eq!(share(&p, other_bbr), ShareOnPath::Behind);
        assert_eq!(share(&p, cubic), ShareOnPath::Even, "loss-based: not told");
        // The loss-based flow gone, nobody is compared.
        p.client.connection_mut(cubic).expect("live").reset(1);
        let mut buf = vec![0u8; 2048];
        while p.client.poll_transmit(p.now, &mut buf).is_some() {}
        assert!(p.client.release(cubic));
        sending(&mut p, 2 * path_shares::CHECK_EVERY);
        for h in [bbr, other_bbr] {
            assert_eq!(share(&p, h), ShareOnPath::Even);
        }
    }
}
