//! A network of runtime sessions on a virtual clock: each node is the I/O loop
//! that ships ([`Session`]: the endpoint with the runtime's packet-buffer storage,
//! `poll_transmit_header`, the rings, doorbell and flags between the loop and its
//! [`Stream`](crate::runtime::Stream)s) over a [`SimPort`]; the network carries
//! datagrams between ports through the impairment model. The application runs
//! between steps, on the streams, without blocking. The same seed gives the same
//! run, datagram for datagram.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::port::{PortHandle, SimPort};
use super::NodeId;
use crate::link::impair_model::{ImpairConfig, ImpairConfigError, ImpairModel, ImpairStats};
use crate::link::{BufferPool, Link};
use crate::runtime::{Backend, LoopStats, PollAgain, RuntimeBuilder, Session};

/// How often a node is polled again at one instant while it reports work; after
/// that its next poll is [`BUSY_STEP`] later (a loop that never runs out of work
/// at one instant would otherwise stop virtual time).
const BUSY_POLLS_PER_INSTANT: u32 = 64;
/// Virtual time a node that stayed busy for [`BUSY_POLLS_PER_INSTANT`] polls waits.
const BUSY_STEP: Duration = Duration::from_micros(1);
/// Transmit ring of a port, datagrams.
const TX_RING: usize = 1024;

/// A node: a session, its port and pool, and when it wants to be polled (None:
/// stopped).
struct Node {
    session: Session,
    port: PortHandle,
    pool: BufferPool,
    next: Option<Instant>,
}

struct InFlight {
    at: Instant,
    seq: u64,
    to: usize,
    from: SocketAddr,
    data: Vec<u8>,
}

impl PartialEq for InFlight {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for InFlight {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Sees every datagram a node sends: when, from, to, the bytes, and whether the
/// path delivers it (at least once).
pub type Observer = Box<dyn FnMut(Instant, SocketAddr, SocketAddr, &[u8], bool) + Send>;

/// Decides, for every datagram a node sends (from, to, the bytes), whether the
/// network loses it before the path's impairments: a test's way to lose one
/// chosen packet (a Close, the last ack) rather than a random share.
pub type DropRule = Box<dyn FnMut(SocketAddr, SocketAddr, &[u8]) -> bool + Send>;

/// The network (see the module documentation).
pub struct LoopNet {
    seed: u64,
    start: Instant,
    now: Instant,
    nodes: Vec<Node>,
    by_addr: HashMap<SocketAddr, usize>,
    paths: HashMap<(usize, usize), ImpairModel>,
    default_path: ImpairConfig,
    wire: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    busy_overflows: u64,
    unroutable: u64,
    observer: Option<Observer>,
    drop_rule: Option<DropRule>,
}

impl LoopNet {
    /// An empty network; `seed` seeds every path's impairments. Paths not set
    /// with [`LoopNet::set_path`] are [`super::default_path`].
    pub fn new(seed: u64) -> Self {
        let start = Instant::now();
        Self {
            seed,
            start,
            now: start,
            nodes: Vec::new(),
            by_addr: HashMap::new(),
            paths: HashMap::new(),
            default_path: super::default_path(),
            wire: BinaryHeap::new(),
            seq: 0,
            busy_overflows: 0,
            unroutable: 0,
            observer: None,
            drop_rule: None,
        }
    }

    /// Virtual time now.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Virtual time since the network was made.
    pub fn elapsed(&self) -> Duration {
        self.now - self.start
    }

    /// Adds a node at `addr`: a session built by `builder` (transport, seed,
    /// rings; its backend is replaced by the node's port) over a port whose pool
    /// holds `buffers` packet buffers.
    pub fn add_node(
        &mut self,
        addr: SocketAddr,
        builder: RuntimeBuilder,
        buffers: usize,
        max_datagram: usize,
    ) -> std::io::Result<NodeId> {
        let (port, handle) = SimPort::new(addr, buffers, max_datagram, TX_RING);
        let pool = port.pool();
        let session = builder
            .backend(Backend::Links(vec![Box::new(port) as Box<dyn Link>]))
            .session(self.now)?;
        self.nodes.push(Node {
            session,
            port: handle,
            pool,
            next: Some(self.now),
        });
        self.by_addr.insert(addr, self.nodes.len() - 1);
        Ok(NodeId(self.nodes.len() - 1))
    }

    /// A node's session (connect, listen, accept, statistics).
    pub fn session(&mut self, n: NodeId) -> &mut Session {
        &mut self.nodes[n.0].session
    }

    /// A node's loop statistics now.
    pub fn stats(&mut self, n: NodeId) -> LoopStats {
        let now = self.now;
        self.nodes[n.0].session.stats(now)
    }

    /// Packet buffers of a node's pool in use now (by its loop, its streams and
    /// its application's unread data).
    pub fn buffers_in_use(&self, n: NodeId) -> usize {
        let pool = &self.nodes[n.0].pool;
        pool.capacity() - pool.available()
    }

    /// Whether a node's session stopped (after [`Session::shut_down`]).
    pub fn stopped(&self, n: NodeId) -> bool {
        self.nodes[n.0].next.is_none()
    }

    /// The address of a node.
    pub fn addr(&self, n: NodeId) -> SocketAddr {
        self.nodes[n.0].session.local_addr()
    }

    /// Impairments of the direction from `a` to `b` (drawing from a stream of
    /// the network's seed and the pair, whatever `cfg.seed` says).
    pub fn set_path(
        &mut self,
        a: NodeId,
        b: NodeId,
        cfg: ImpairConfig,
    ) -> Result<(), ImpairConfigError> {
        let model = self.make_path(a.0, b.0, cfg)?;
        self.paths.insert((a.0, b.0), model);
        Ok(())
    }

    fn make_path(
        &self,
        a: usize,
        b: usize,
        cfg: ImpairConfig,
    ) -> Result<ImpairModel, ImpairConfigError> {
        let seed = self.seed ^ ((a as u64) << 40) ^ ((b as u64) << 20) ^ 0x5eed;
        ImpairModel::with_seed(cfg, seed)
    }

    /// What the direction from `a` to `b` did to its datagrams.
    pub fn path_stats(&self, a: NodeId, b: NodeId) -> ImpairStats {
        self.paths
            .get(&(a.0, b.0))
            .map(|p| p.stats().clone())
            .unwrap_or_default()
    }

    /// Shows every datagram sent from now on to `f` (debugging a seed).
    pub fn observe(&mut self, f: Observer) {
        self.observer = Some(f);
    }

    /// Loses every datagram sent from now on for which `rule` holds (counted in
    /// no path's statistics; the observer sees it as not delivered).
    pub fn drop_when(&mut self, rule: DropRule) {
        self.drop_rule = Some(rule);
    }

    /// Times a node was still busy after 64 polls at one
    /// instant (virtual time then moved on by a microsecond for it).
    pub fn busy_overflows(&self) -> u64 {
        self.busy_overflows
    }

    /// Datagrams sent to an address no node has.
    pub fn unroutable(&self) -> u64 {
        self.unroutable
    }

    /// Datagrams on the wire now.
    pub fn in_flight(&self) -> usize {
        self.wire.len()
    }

    /// Polls every node at the current instant (the application may have used
    /// its streams), then advances to the next event not after `limit` (a
    /// delivery, a node's deadline), delivers what is due and polls again.
    /// Returns false once `limit` is reached.
    pub fn step(&mut self, limit: Instant) -> bool {
        self.poll_all();
        let next = self.next_event();
        if next > limit {
            self.now = self.now.max(limit);
            return false;
        }
        self.now = self.now.max(next);
        self.deliver_due();
        self.poll_all();
        true
    }

    /// Runs steps until `done` holds (checked after each, with the network) or
    /// `limit` passes; returns whether `done` held.
    pub fn run_until(&mut self, limit: Instant, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        loop {
            if done(self) {
                return true;
            }
            if !self.step(limit) {
                return done(self);
            }
        }
    }

    fn next_event(&self) -> Instant {
        let mut t = self.wire.peek().map(|w| w.0.at);
        for n in &self.nodes {
            if let Some(x) = n.next {
                t = Some(t.map_or(x, |t| t.min(x)));
            }
        }
        // Every live session has a deadline (its statistics period at least).
        t.unwrap_or(self.now + Duration::from_secs(3600))
    }

    fn deliver_due(&mut self) {
        while self.wire.peek().is_some_and(|w| w.0.at <= self.now) {
            let Reverse(w) = self.wire.pop().expect("peeked");
            self.nodes[w.to]
                .port
                .lock()
                .inbox
                .push_back((w.from, w.data));
        }
    }

    fn poll_all(&mut self) {
        let now = self.now;
        for i in 0..self.nodes.len() {
            if self.nodes[i].next.is_none() {
                // Stopped: its process would have exited; nothing answers for it.
                continue;
            }
            let mut polls = 0;
            let next = loop {
                polls += 1;
                match self.nodes[i].session.poll(now) {
                    PollAgain::Now if polls < BUSY_POLLS_PER_INSTANT => {
                        self.transmit(i);
                    }
                    PollAgain::Now => {
                        self.busy_overflows += 1;
                        break Some(now + BUSY_STEP);
                    }
                    PollAgain::At(t) => break Some(t.max(now)),
                    PollAgain::Stopped => break None,
                }
            };
            self.transmit(i);
            self.nodes[i].next = next;
        }
    }

    /// Puts what node `i` sent on the wire, through the path's impairments.
    fn transmit(&mut self, i: usize) {
        let from = self.nodes[i].session.local_addr();
        let out: Vec<_> = self.nodes[i].port.lock().outbox.drain(..).collect();
        for (to, data) in out {
            let Some(&j) = self.by_addr.get(&to) else {
                self.unroutable += 1;
                continue;
            };
            if !self.paths.contains_key(&(i, j)) {
                let path = self
                    .make_path(i, j, self.default_path.clone())
                    .expect("the default path is valid");
                self.paths.insert((i, j), path);
            }
            if self.drop_rule.as_mut().is_some_and(|r| r(from, to, &data)) {
                if let Some(f) = self.observer.as_mut() {
                    f(self.now, from, to, &data, false);
                }
                continue;
            }
            let path = self.paths.get_mut(&(i, j)).expect("inserted");
            let fate = path.decide(self.now, data.len());
            if let Some(f) = self.observer.as_mut() {
                f(self.now, from, to, &data, !fate.deliveries().is_empty());
            }
            for d in fate.deliveries() {
                let mut copy = data.clone();
                if let Some(flip) = d.flip {
                    flip.apply(&mut copy);
                }
                self.seq += 1;
                self.wire.push(Reverse(InFlight {
                    at: d.at,
                    seq: self.seq,
                    to: j,
                    from,
                    data: copy,
                }));
            }
        }
    }
}

#[cfg(test)]
#[path = "close_loss_tests.rs"]
mod close_loss_tests;
