//! Building a runtime: the backend, where the I/O loop runs, its options, and the
//! middleware wrapped around the link.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;

use super::cycles;
use super::dedicated;
use super::doorbell::ControlSender;
use super::io_loop::{IoLoop, LoopConfig, RxClock};
use super::stats::LoopStats;
use super::storage::{ChunkRecv, ChunkSend};
#[cfg(feature = "dpdk")]
use super::telemetry;
use super::{IdlePolicy, Join, LoopHandle, PoolSplit, Runtime, Session};
use crate::link::impair::{ImpairConfig, Impaired};
use crate::link::pcap::Captured;
use crate::link::udp::{UdpLink, UdpLinkConfig};
use crate::link::Link;
use pmdt_proto::{Endpoint, EndpointConfig, TransportConfig};

/// Where the application's stream calls run relative to the I/O loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Writer {
    /// On threads of their own (an I/O thread or lcore runs the loop).
    OtherThread,
    /// On the loop's own thread (run to completion, a [`Session`]).
    LoopThread,
}

/// Where the I/O loop runs.
#[derive(Clone)]
pub enum IoCore {
    /// A std thread, optionally pinned to a CPU.
    Thread {
        /// CPU to pin to.
        cpu: Option<usize>,
    },
    /// A DPDK worker lcore (one per queue for multi-queue ports: `ids[i]` drives
    /// queue `i`).
    #[cfg(feature = "dpdk")]
    Lcores {
        /// The EAL (kept alive by the runtime).
        eal: dpdk::Eal,
        /// Worker lcore ids.
        ids: Vec<u32>,
    },
    /// Run-to-completion: no core of its own; the application's threads poll the
    /// loop inside their stream calls whenever they would wait (see
    /// [`Runtime::poll`](super::Runtime::poll)). One link (one queue).
    Caller {
        /// CPU a thread is moved to when it first polls (the I/O core).
        cpu: Option<usize>,
    },
}

impl std::fmt::Debug for IoCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IoCore::Thread { cpu } => write!(f, "Thread(cpu {cpu:?})"),
            #[cfg(feature = "dpdk")]
            IoCore::Lcores { ids, .. } => write!(f, "Lcores({ids:?})"),
            IoCore::Caller { cpu } => write!(f, "Caller(cpu {cpu:?})"),
        }
    }
}

/// The link the runtime drives.
pub enum Backend {
    /// A kernel UDP socket.
    Udp(UdpLinkConfig),
    /// A DPDK port (one I/O loop per queue pair).
    #[cfg(feature = "dpdk")]
    Dpdk {
        /// The initialized EAL.
        eal: dpdk::Eal,
        /// Port options.
        cfg: crate::link::dpdk_port::DpdkLinkConfig,
    },
    /// Ready-made links (e.g. an in-memory pair end), one I/O loop each.
    Links(Vec<Box<dyn Link>>),
}

/// Builds a [`Runtime`].
pub struct RuntimeBuilder {
    backend: Option<Backend>,
    transport: TransportConfig,
    io_core: IoCore,
    burst: usize,
    ring_slots: usize,
    idle: IdlePolicy,
    impair: Option<ImpairConfig>,
    pcap: Option<PathBuf>,
    shutdown_timeout: Duration,
    max_connections: usize,
    accept_backlog: usize,
    listen_from_start: bool,
    seed: Option<u64>,
    work: Duration,
    park_timeout: Duration,
    pool_split: PoolSplit,
}

impl Default for RuntimeBuilder {
    fn default() -> Self {
        Self {
            backend: None,
            transport: TransportConfig::default(),
            io_core: IoCore::Thread { cpu: None },
            burst: 32,
            ring_slots: 4096,
            idle: IdlePolicy::default(),
            impair: None,
            pcap: None,
            shutdown_timeout: Duration::from_secs(5),
            max_connections: 4096,
            accept_backlog: 128,
            listen_from_start: false,
            seed: None,
            work: Duration::ZERO,
            park_timeout: Duration::from_millis(5),
            pool_split: PoolSplit::Both,
        }
    }
}

impl RuntimeBuilder {
    /// The link to drive (required).
    pub fn backend(mut self, b: Backend) -> Self {
        self.backend = Some(b);
        self
    }
    /// Protocol options (window, congestion control, rate, buffers, timeouts).
    pub fn transport(mut self, t: TransportConfig) -> Self {
        self.transport = t;
        self
    }
    /// Where the I/O loop runs (default: an unpinned thread).
    pub fn io_core(mut self, c: IoCore) -> Self {
        self.io_core = c;
        self
    }
    /// Datagrams per receive burst (default 32).
    pub fn burst(mut self, n: usize) -> Self {
        self.burst = n.max(1);
        self
    }
    /// Slots of each application ring, in packet buffers (default 4096).
    pub fn ring_slots(mut self, n: usize) -> Self {
        self.ring_slots = n.max(2);
        self
    }
    /// Idle behaviour of the loop.
    pub fn idle(mut self, p: IdlePolicy) -> Self {
        self.idle = p;
        self
    }
    /// How the packet pool is divided between received and sent data (default
    /// [`PoolSplit::Both`]; with the one-way split that matches its traffic, a
    /// side that only sends keeps twice as much unacknowledged, one that only
    /// receives grants 1.7 times the credit).
    pub fn pool_split(mut self, s: PoolSplit) -> Self {
        self.pool_split = s;
        self
    }
    /// Impair what this runtime sends (loss, delay, reordering, ...).
    pub fn impair(mut self, c: ImpairConfig) -> Self {
        self.impair = Some(c);
        self
    }
    /// Capture traffic to a pcap file.
    pub fn pcap(mut self, path: impl Into<PathBuf>) -> Self {
        self.pcap = Some(path.into());
        self
    }
    /// Longest a shutdown waits for connections to close gracefully (default 5 s).
    pub fn shutdown_timeout(mut self, t: Duration) -> Self {
        self.shutdown_timeout = t;
        self
    }
    /// Most simultaneous connections per I/O loop (default 4096).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }
    /// Accepted connections waiting for `accept` before new ones are refused.
    pub fn accept_backlog(mut self, n: usize) -> Self {
        self.accept_backlog = n.max(1);
        self
    }
    /// Accepts connections from the moment the link is up, before the first
    /// packet is read; [`Runtime::listen`] then hands out that listener. Without
    /// it, a handshake that arrives between [`RuntimeBuilder::start`] and
    /// `listen` is refused (a server whose peers may already be calling).
    pub fn listen_from_start(mut self) -> Self {
        self.listen_from_start = true;
        self
    }
    /// Synthetic processing cost the I/O loop spends per received datagram (load
    /// experiments: the load estimator sees it as real work).
    pub fn per_packet_work(mut self, d: Duration) -> Self {
        self.work = d;
        self
    }
    /// The longest an application thread blocked in a [`Stream`](super::Stream)
    /// call first parks before looking again by itself (default 5 ms; each park
    /// that ends without a wake-up doubles the next, up to 16 times this). A
    /// safety net: the I/O loop wakes it when there is something for it. Tests
    /// set it long to prove no wake-up is ever lost.
    pub fn park_timeout(mut self, t: Duration) -> Self {
        self.park_timeout = t;
        self
    }
    /// Seed for connection ids and the cookie key (reproducible runs).
    pub fn seed(mut self, s: u64) -> Self {
        self.seed = Some(s);
        self
    }

    fn wrap(&self, mut link: Box<dyn Link>, i: usize) -> io::Result<Box<dyn Link>> {
        if let Some(c) = &self.impair {
            let mut c = c.clone();
            c.seed = c.seed.wrapping_add(i as u64);
            link = Box::new(
                Impaired::new(link, c)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?,
            );
        }
        if let Some(p) = &self.pcap {
            let path = if i == 0 {
                p.clone()
            } else {
                p.with_extension(format!("q{i}.pcap"))
            };
            link = Box::new(Captured::new(link, &path)?);
        }
        Ok(link)
    }

    /// Checks the options and opens the backend's link(s).
    fn open_links(&mut self) -> io::Result<Vec<Box<dyn Link>>> {
        self.transport
            .validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let backend = self.backend.take().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "no backend chosen for the runtime",
            )
        })?;
        let links: Vec<Box<dyn Link>> = match backend {
            Backend::Udp(c) => vec![Box::new(UdpLink::bind(&c)?)],
            #[cfg(feature = "dpdk")]
            Backend::Dpdk { eal, cfg } => crate::link::dpdk_port::DpdkLink::open(&eal, &cfg)
                .map_err(io::Error::other)?
                .into_iter()
                .map(|l| Box::new(l) as Box<dyn Link>)
                .collect(),
            Backend::Links(l) => l,
        };
        if links.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no link"));
        }
        Ok(links)
    }

    /// The transport configuration of the loops: the caller's, with the unsent
    /// slack it left to the runtime set for where `writer` runs. A writer on
    /// another thread keeps the transport's default (20 ms: it may lose its
    /// core for a scheduler slice while the loop keeps sending). One on the
    /// loop's thread gets none: what it writes is sent within its next calls,
    /// and data written further ahead is out of the cache by then (over memif
    /// at 20 ms of slack, a quarter of the sender's cycles went to missing the
    /// cache on payloads and mbuf headers).
    fn loop_transport(&self, writer: Writer) -> TransportConfig {
        let mut t = self.transport.clone();
        if writer == Writer::LoopThread && t.unsent_time.is_none() {
            t.unsent_time = Some(Duration::ZERO);
        }
        t
    }

    /// The I/O loop of link `i` (wrapped in the middleware), its control channel
    /// and its statistics, starting at `now`, for application calls made from
    /// `writer`.
    pub(super) fn build_loop(
        &self,
        i: usize,
        link: Box<dyn Link>,
        now: Instant,
        rx_clock: RxClock,
        writer: Writer,
    ) -> io::Result<(IoLoop, ControlSender, Arc<ArcSwap<LoopStats>>)> {
        let link = self.wrap(link, i)?;
        let chunk = self.transport.max_payload() as usize;
        let pool = link.pool();
        let (send_pool, recv_chunk) = (pool.clone(), chunk);
        let ep = Endpoint::with_storage(
            EndpointConfig::default()
                .with_transport(self.loop_transport(writer))
                .with_accept(false)
                .with_max_connections(self.max_connections)
                .with_seed(self.seed.map(|s| s.wrapping_add(i as u64))),
            now,
            Box::new(move |cap| ChunkSend::new(cap, send_pool.clone(), recv_chunk)),
            Box::new(ChunkRecv::new),
        )
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let (ctl_tx, ctl_rx) = mpsc::channel();
        let stats = Arc::new(ArcSwap::from_pointee(LoopStats::default()));
        let work_cycles = if self.work.is_zero() {
            0
        } else {
            (self.work.as_secs_f64() * cycles::hz() as f64) as u64
        };
        let lp = IoLoop::new(
            link,
            ep,
            chunk,
            LoopConfig {
                burst: self.burst,
                ring_slots: self.ring_slots,
                shutdown_timeout: self.shutdown_timeout,
                max_connections: self.max_connections,
                work_cycles,
                park_timeout: self.park_timeout,
                rx_clock,
                pool_split: self.pool_split,
            },
            ctl_rx,
            stats.clone(),
            now,
        );
        let control = ControlSender::new(ctl_tx, lp.doorbell());
        Ok((lp, control, stats))
    }

    /// Creates the link(s) and starts the I/O loop(s).
    pub fn start(mut self) -> io::Result<Runtime> {
        #[cfg(feature = "dpdk")]
        let is_dpdk = matches!(self.backend, Some(Backend::Dpdk { .. }));
        let links = self.open_links()?;
        if matches!(self.io_core, IoCore::Caller { .. }) && links.len() != 1 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "run-to-completion drives one link, the backend has {} (one per queue)",
                    links.len()
                ),
            ));
        }
        let local = links[0].local_addr();
        let mut link_name = String::new();
        let mut loops = Vec::new();
        let listener = self
            .listen_from_start
            .then(|| mpsc::sync_channel(self.accept_backlog));
        let writer = match self.io_core {
            IoCore::Caller { .. } => Writer::LoopThread,
            _ => Writer::OtherThread,
        };
        for (i, link) in links.into_iter().enumerate() {
            let (mut lp, control, stats) =
                self.build_loop(i, link, Instant::now(), RxClock::Monotonic, writer)?;
            if i == 0 {
                link_name = lp.describe_link();
            }
            if let Some((tx, _)) = &listener {
                lp.listen(tx.clone());
            }
            let join = self.launch(i, lp)?;
            loops.push(LoopHandle {
                control,
                join: Some(join),
                stats,
            });
        }
        let directory = Arc::new(super::directory::Directory::default());
        #[cfg(feature = "dpdk")]
        if is_dpdk {
            telemetry::forget_dead();
            let weak = loops.iter().map(|l| Arc::downgrade(&l.stats)).collect();
            if let Err(e) = telemetry::publish(weak, Arc::downgrade(&directory)) {
                tracing::warn!(error = %e, "telemetry commands not registered");
            }
        }
        Ok(Runtime {
            loops,
            local,
            link_name,
            next: std::sync::atomic::AtomicUsize::new(0),
            listening: Arc::new(AtomicBool::new(false)),
            accept_backlog: self.accept_backlog,
            directory,
            waiting_listener: std::sync::Mutex::new(listener.map(|(_, rx)| rx)),
        })
    }

    /// One I/O loop over the backend's link that the caller polls itself (see
    /// [`Session`]) instead of a thread or lcore of its own. `now` is the
    /// session's start on the caller's clock. The backend must have one link
    /// (one queue).
    pub fn session(mut self, now: Instant) -> io::Result<Session> {
        let mut links = self.open_links()?;
        if links.len() != 1 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a session drives one link, the backend has {} (one per queue)",
                    links.len()
                ),
            ));
        }
        let link = links.pop().expect("one link");
        let local = link.local_addr();
        let (lp, control, stats) =
            self.build_loop(0, link, now, RxClock::Given, Writer::LoopThread)?;
        Ok(Session::new(lp, control, stats, local, self.accept_backlog))
    }

    fn launch(&self, i: usize, lp: IoLoop) -> io::Result<Join> {
        let idle = self.idle;
        match &self.io_core {
            IoCore::Caller { cpu } => {
                let c = Arc::new(super::caller::CallerLoop::new(lp, idle, *cpu));
                // Streams of this loop poll it when they wait.
                c.with_loop(|lp| lp.set_driver(Arc::downgrade(&c)));
                Ok(Join::Caller(c))
            }
            IoCore::Thread { cpu } => {
                let cpu = *cpu;
                let h = std::thread::Builder::new()
                    .name(format!("pmdt-io{i}"))
                    .spawn(move || {
                        if let Some(c) = cpu {
                            pin_to(c + i);
                        }
                        dedicated::run(lp, idle)
                    })?;
                Ok(Join::Thread(h))
            }
            #[cfg(feature = "dpdk")]
            IoCore::Lcores { eal, ids } => {
                let id = *ids.get(i).ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("queue {i} has no I/O lcore (lcores given: {ids:?})"),
                    )
                })?;
                let h = dpdk::lcore::launch(eal, id, move || dedicated::run(lp, idle))
                    .map_err(io::Error::other)?;
                Ok(Join::Lcore(h))
            }
        }
    }
}

/// Moves the calling thread to `cpu`.
pub(crate) fn pin_to(cpu: usize) {
    // SAFETY: cpu_set_t is plain old data; CPU_SET writes inside it; the call only
    // affects this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsent_slack_follows_where_the_writer_runs_unless_set() {
        let b = Runtime::builder();
        // The transport's default (20 ms).
        assert_eq!(b.loop_transport(Writer::OtherThread).unsent_time, None);
        assert_eq!(
            b.loop_transport(Writer::LoopThread).unsent_time,
            Some(Duration::ZERO)
        );
        let set = Some(Duration::from_millis(3));
        let b = Runtime::builder().transport(TransportConfig::default().with_unsent_time(set));
        for w in [Writer::OtherThread, Writer::LoopThread] {
            assert_eq!(b.loop_transport(w).unsent_time, set, "{w:?}");
        }
    }
}
