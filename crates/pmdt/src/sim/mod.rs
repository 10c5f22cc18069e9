//! A deterministic in-memory network for pmdt endpoints: a virtual clock and seeded
//! impairments (random and burst loss, delay, jitter, reordering, duplication,
//! corruption, a rate-limited drop-tail bottleneck, MTU): each direction of a path
//! is a [`ImpairModel`], the model the link middleware and `pmdt-wanem` use too. The
//! same seed gives the same run, packet for packet.

mod bulk;
mod core_share;
mod flow_error;
mod flows;
mod loop_net;
pub mod pattern;
mod port;
pub mod sweep;
mod timed_send;

pub use crate::link::impair_model::{GilbertElliott, ImpairConfig, ImpairConfigError, ImpairStats};
pub use bulk::{jain_index, run_bulk, BulkReport, BulkScenario, FlowReport};
pub use core_share::CoreShare;
pub use flow_error::FlowError;
pub use flows::{
    run_flows, run_flows_observed, Connects, FlowOutcome, FlowsError, FlowsReport, FlowsScenario,
    ReadersStart, SideReport,
};
pub use loop_net::{DropRule, LoopNet, Observer};
pub use port::SimPort;
pub use timed_send::{
    run_timed_send, stream_share_of_frames, TimedSendError, TimedSendReport, TimedSendScenario,
    ETHERNET_IPV4_UDP_OVERHEAD,
};

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::link::impair_model::ImpairModel;
use pmdt_proto::{ConfigError, Endpoint, EndpointConfig};

/// The path between nodes the simulator is not told about: 1 ms one way, a
/// 1500-byte MTU, nothing else.
pub fn default_path() -> ImpairConfig {
    ImpairConfig {
        delay: Duration::from_millis(1),
        mtu: Some(1500),
        ..Default::default()
    }
}

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
    links: Vec<ImpairModel>,
    default_link: ImpairConfig,
    queue: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    buf: Vec<u8>,
    /// Bytes each datagram costs on a link beyond its UDP payload.
    wire_overhead: usize,
    /// Nodes that share their core (by node index; absent: a core of its own).
    cores: HashMap<usize, CoreShare>,
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
            default_link: default_path(),
            queue: BinaryHeap::new(),
            seq: 0,
            buf: vec![0; 65536],
            wire_overhead: 0,
            cores: HashMap::new(),
        }
    }

    /// Each datagram costs `bytes` more than its UDP payload on every link (its
    /// rate, queue and MTU count frames: [`ETHERNET_IPV4_UDP_OVERHEAD`] as
    /// `pmdt-wanem` in DPDK mode). Default 0: links count UDP payloads.
    pub fn set_wire_overhead(&mut self, bytes: usize) {
        self.wire_overhead = bytes;
    }

    /// Node `n` runs on a core it shares: on and off its core by `share` (None:
    /// a core of its own, the default).
    pub fn set_core_share(&mut self, n: NodeId, share: Option<CoreShare>) {
        match share {
            Some(s) => self.cores.insert(n.0, s),
            None => self.cores.remove(&n.0),
        };
    }

    /// When node `i` runs next, at or after `t`.
    fn next_run(&self, i: usize, t: Instant) -> Instant {
        match self.cores.get(&i) {
            Some(s) => self.start + s.next_run(t - self.start),
            None => t,
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

    /// A new link (its own random stream, drawn from the network's seed: the
    /// config's `seed` is not used). Returns its index.
    fn add_link(&mut self, cfg: ImpairConfig) -> Result<usize, ImpairConfigError> {
        let seed = self.rng.random();
        self.links.push(ImpairModel::with_seed(cfg, seed)?);
        Ok(self.links.len() - 1)
    }

    /// Sets the impairments from `a` to `b`.
    pub fn set_link(
        &mut self,
        a: NodeId,
        b: NodeId,
        cfg: ImpairConfig,
    ) -> Result<(), ImpairConfigError> {
        let l = self.add_link(cfg)?;
        self.routes.insert((a.0, b.0), l);
        Ok(())
    }

    /// One link, shared by the datagrams of every node in `from` to `to`: a common
    /// bottleneck (one queue, one rate) for several senders.
    pub fn set_shared_link(
        &mut self,
        from: &[NodeId],
        to: NodeId,
        cfg: ImpairConfig,
    ) -> Result<(), ImpairConfigError> {
        let l = self.add_link(cfg)?;
        for a in from {
            self.routes.insert((a.0, to.0), l);
        }
        Ok(())
    }

    /// Clears the counters of the link from `a` to `b` (to measure from now on).
    pub fn reset_link_stats(&mut self, a: NodeId, b: NodeId) {
        if let Some(&i) = self.routes.get(&(a.0, b.0)) {
            self.links[i].reset_stats();
        }
    }

    /// Changes the bottleneck rate of the link from `a` to `b` (None: unlimited).
    pub fn set_link_rate(
        &mut self,
        a: NodeId,
        b: NodeId,
        rate_bps: Option<u64>,
    ) -> Result<(), ImpairConfigError> {
        match self.routes.get(&(a.0, b.0)) {
            Some(&i) => self.links[i].set_rate(rate_bps),
            None => Ok(()),
        }
    }

    /// Sets the same impairments in both directions between `a` and `b`.
    pub fn set_path(
        &mut self,
        a: NodeId,
        b: NodeId,
        cfg: ImpairConfig,
    ) -> Result<(), ImpairConfigError> {
        self.set_link(a, b, cfg.clone())?;
        self.set_link(b, a, cfg)
    }

    /// Link counters from `a` to `b`.
    pub fn link_stats(&self, a: NodeId, b: NodeId) -> ImpairStats {
        self.routes
            .get(&(a.0, b.0))
            .map(|&i| self.links[i].stats().clone())
            .unwrap_or_default()
    }

    /// Takes every datagram the endpoints want to send now and puts it on the links.
    pub fn flush(&mut self) {
        for i in 0..self.nodes.len() {
            if self.next_run(i, self.now) > self.now {
                continue; // off its core: nothing leaves
            }
            loop {
                let from = self.nodes[i].0;
                let ep = &mut self.nodes[i].1;
                let Some(out) = ep.poll_transmit(self.now, &mut self.buf) else {
                    break;
                };
                let (dst, len) = (out.transmit().destination, out.transmit().len);
                let Some(&to) = self.by_addr.get(&dst) else {
                    continue; // nobody there: the datagram vanishes
                };
                let li = match self.routes.get(&(i, to)) {
                    Some(&li) => li,
                    None => {
                        let li = self
                            .add_link(self.default_link.clone())
                            .expect("the default path is a valid config");
                        self.routes.insert((i, to), li);
                        li
                    }
                };
                let fate = self.links[li].decide(self.now, len + self.wire_overhead);
                for d in fate.deliveries() {
                    let mut data = self.buf[..len].to_vec();
                    if let Some(flip) = d.flip {
                        flip.apply(&mut data);
                    }
                    self.seq += 1;
                    self.queue.push(Reverse(InFlight {
                        at: d.at,
                        seq: self.seq,
                        to,
                        from,
                        data,
                    }));
                }
            }
        }
    }

    /// The next instant something happens (a delivery or an endpoint timer).
    pub fn next_event(&mut self) -> Option<Instant> {
        let mut t = self.queue.peek().map(|r| r.0.at);
        for i in 0..self.nodes.len() {
            if let Some(x) = self.nodes[i].1.poll_timeout() {
                let x = self.next_run(i, x);
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
            let Reverse(mut p) = self.queue.pop().expect("peeked");
            let runs = self.next_run(p.to, self.now);
            if runs > self.now {
                // Off its core: the datagram waits in its ring, in order.
                self.seq += 1;
                (p.at, p.seq) = (runs, self.seq);
                self.queue.push(Reverse(p));
                continue;
            }
            self.nodes[p.to].1.handle(self.now, p.from, &p.data);
        }
        for i in 0..self.nodes.len() {
            if self.next_run(i, self.now) == self.now {
                self.nodes[i].1.handle_timeout(self.now);
            }
        }
        self.flush();
        true
    }

    /// Datagrams in flight now.
    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }

    /// The datagrams in flight from `a` to `b` (in no particular order): what an
    /// on-path observer sees, e.g. the packet numbers a forgery must be near.
    pub fn in_flight_between(&self, a: NodeId, b: NodeId) -> impl Iterator<Item = &[u8]> + '_ {
        let from = self.addr(a);
        self.queue
            .iter()
            .filter(move |p| p.0.to == b.0 && p.0.from == from)
            .map(|p| p.0.data.as_slice())
    }
}
