//! A deterministic in-memory network for pmdt endpoints: a virtual clock and seeded
//! impairments (random and burst loss, delay, jitter, reordering, duplication,
//! corruption, a rate-limited drop-tail bottleneck, MTU). The same seed gives the
//! same run, packet for packet.

mod bulk;
mod link;
pub mod pattern;

pub use bulk::{jain_index, run_bulk, BulkReport, BulkScenario, FlowReport};
pub use link::{GilbertElliott, LinkConfig, LinkStats};

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use link::{Delivery, Link};
use pmdt_proto::{ConfigError, Endpoint, EndpointConfig};

/// Index of a node (one endpoint) in the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeId(pub usize);

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

/// The simulated network.
pub struct Network {
    start: Instant,
    now: Instant,
    rng: ChaCha8Rng,
    nodes: Vec<(SocketAddr, Endpoint)>,
    by_addr: HashMap<SocketAddr, usize>,
    /// Which link carries datagrams from one node to another (several pairs may
    /// share one: a common bottleneck).
    routes: HashMap<(usize, usize), usize>,
    links: Vec<Link>,
    default_link: LinkConfig,
    queue: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    buf: Vec<u8>,
    scratch: Vec<Delivery>,
}

impl Network {
    /// An empty network whose impairments draw from `seed`.
    pub fn new(seed: u64) -> Self {
        let start = Instant::now();
        Self {
            start,
            now: start,
            rng: ChaCha8Rng::seed_from_u64(seed),
            nodes: Vec::new(),
            by_addr: HashMap::new(),
            routes: HashMap::new(),
            links: Vec::new(),
            default_link: LinkConfig::default(),
            queue: BinaryHeap::new(),
            seq: 0,
            buf: vec![0; 65536],
            scratch: Vec::new(),
        }
    }

    /// Virtual time now.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Virtual time elapsed since the network was made.
    pub fn elapsed(&self) -> Duration {
        self.now - self.start
    }

    /// Adds an endpoint at `addr`.
    pub fn add_endpoint(
        &mut self,
        addr: SocketAddr,
        cfg: EndpointConfig,
    ) -> Result<NodeId, ConfigError> {
        let ep = Endpoint::new(cfg, self.now)?;
        self.nodes.push((addr, ep));
        self.by_addr.insert(addr, self.nodes.len() - 1);
        Ok(NodeId(self.nodes.len() - 1))
    }

    /// Address of a node.
    pub fn addr(&self, n: NodeId) -> SocketAddr {
        self.nodes[n.0].0
    }

    /// The endpoint of a node.
    pub fn endpoint(&mut self, n: NodeId) -> &mut Endpoint {
        &mut self.nodes[n.0].1
    }

    /// Sets the impairments from `a` to `b`.
    pub fn set_link(&mut self, a: NodeId, b: NodeId, cfg: LinkConfig) {
        self.links.push(Link::new(cfg));
        self.routes.insert((a.0, b.0), self.links.len() - 1);
    }

    /// One link, shared by the datagrams of every node in `from` to `to`: a common
    /// bottleneck (one queue, one rate) for several senders.
    pub fn set_shared_link(&mut self, from: &[NodeId], to: NodeId, cfg: LinkConfig) {
        self.links.push(Link::new(cfg));
        for a in from {
            self.routes.insert((a.0, to.0), self.links.len() - 1);
        }
    }

    /// Clears the counters of the link from `a` to `b` (to measure from now on).
    pub fn reset_link_stats(&mut self, a: NodeId, b: NodeId) {
        if let Some(&i) = self.routes.get(&(a.0, b.0)) {
            self.links[i].stats = LinkStats::default();
        }
    }

    /// Changes the bottleneck rate of the link from `a` to `b` (None: unlimited).
    pub fn set_link_rate(&mut self, a: NodeId, b: NodeId, rate_bps: Option<u64>) {
        if let Some(&i) = self.routes.get(&(a.0, b.0)) {
            self.links[i].set_rate(rate_bps);
        }
    }

    /// Sets the same impairments in both directions between `a` and `b`.
    pub fn set_path(&mut self, a: NodeId, b: NodeId, cfg: LinkConfig) {
        self.set_link(a, b, cfg.clone());
        self.set_link(b, a, cfg);
    }

    /// Link counters from `a` to `b`.
    pub fn link_stats(&self, a: NodeId, b: NodeId) -> LinkStats {
        self.routes
            .get(&(a.0, b.0))
            .map(|&i| self.links[i].stats.clone())
            .unwrap_or_default()
    }

    /// Takes every datagram the endpoints want to send now and puts it on the links.
    pub fn flush(&mut self) {
        for i in 0..self.nodes.len() {
            loop {
                let from = self.nodes[i].0;
                let ep = &mut self.nodes[i].1;
                let (dst, len) = if let Some((dst, n)) = ep.poll_stateless(&mut self.buf) {
                    (dst, n)
                } else if let Some((_, t)) = ep.poll_transmit(self.now, &mut self.buf) {
                    (t.destination, t.len)
                } else {
                    break;
                };
                let Some(&to) = self.by_addr.get(&dst) else {
                    continue; // nobody there: the datagram vanishes
                };
                let li = match self.routes.get(&(i, to)) {
                    Some(&li) => li,
                    None => {
                        self.links.push(Link::new(self.default_link.clone()));
                        self.routes.insert((i, to), self.links.len() - 1);
                        self.links.len() - 1
                    }
                };
                let link = &mut self.links[li];
                link.send(self.now, &self.buf[..len], &mut self.rng, &mut self.scratch);
                for d in self.scratch.drain(..) {
                    self.seq += 1;
                    self.queue.push(Reverse(InFlight {
                        at: d.at,
                        seq: self.seq,
                        to,
                        from,
                        data: d.data,
                    }));
                }
            }
        }
    }

    /// The next instant something happens (a delivery or an endpoint timer).
    pub fn next_event(&mut self) -> Option<Instant> {
        let mut t = self.queue.peek().map(|r| r.0.at);
        for (_, ep) in &mut self.nodes {
            if let Some(x) = ep.poll_timeout() {
                t = Some(t.map_or(x, |t: Instant| t.min(x)));
            }
        }
        t
    }

    /// Advances to the next event (not past `limit`), delivers datagrams and fires
    /// timers due then, and sends what the endpoints produce. Returns false when
    /// nothing is left to happen before `limit`.
    pub fn step(&mut self, limit: Instant) -> bool {
        self.flush();
        let Some(t) = self.next_event() else {
            return false;
        };
        if t > limit {
            self.now = limit;
            return false;
        }
        self.now = self.now.max(t);
        while self.queue.peek().is_some_and(|r| r.0.at <= self.now) {
            let Reverse(p) = self.queue.pop().expect("peeked");
            self.nodes[p.to].1.handle(self.now, p.from, &p.data);
        }
        for (_, ep) in &mut self.nodes {
            ep.handle_timeout(self.now);
        }
        self.flush();
        true
    }

    /// Datagrams in flight now.
    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }
}
