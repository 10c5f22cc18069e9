//! Verified bulk flows through the runtime that ships: a client session opens N
//! connections to a server session over a [`LoopNet`], writes each flow's
//! deterministic pattern through its stream (non-blocking writes of an uneven
//! size), closes it, and the server's readers check every byte. Readers may start
//! late (an application busy elsewhere), so the receiver's packet memory fills
//! while nobody reads. At the end both sessions shut down and every packet buffer
//! must be back in its pool.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::flow_error::FlowError;
use super::loop_net::{LoopNet, Observer};
use super::pattern;
use super::NodeId;
use crate::link::impair_model::{ImpairConfig, ImpairConfigError, ImpairStats};
use crate::link::LinkStats;
use crate::runtime::{ConnectionEntry, Runtime, Stream};
use pmdt_proto::EndpointStats;
use pmdt_proto::TransportConfig;

/// Bytes of flow id in front of each flow's pattern (the server learns which
/// flow an accepted stream carries from them).
const FLOW_TAG: usize = pattern::TAG_LEN;

/// When the server's readers start reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReadersStart {
    /// Each stream is read from the moment it is accepted.
    AtAccept,
    /// Nobody reads until every flow was accepted and this much more time passed
    /// (the application accepts all its connections first).
    AfterAllAccepted(Duration),
}

/// How the client opens its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Connects {
    /// All at the start.
    AtOnce,
    /// Each once the previous one is established (as a thread calling the
    /// blocking [`Runtime::connect`] in a loop does); each starts writing at once.
    OneAfterAnother,
}

/// What to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowsScenario {
    /// Seed of the paths' impairments and the sessions' randomness.
    pub seed: u64,
    /// Connections.
    pub flows: usize,
    /// Stream bytes per connection (after the flow tag).
    pub bytes_per_flow: u64,
    /// Client → server direction.
    pub forward: ImpairConfig,
    /// Server → client direction.
    pub reverse: ImpairConfig,
    /// Protocol options of both sessions.
    pub transport: TransportConfig,
    /// The client's largest datagram when it differs from `transport`'s (one
    /// side started with `--payload`); `None`: the same.
    pub client_max_datagram: Option<u16>,
    /// Packet buffers of the client's and the server's pool.
    pub client_buffers: usize,
    /// Packet buffers of the server's pool.
    pub server_buffers: usize,
    /// Slots of each stream's rings.
    pub ring_slots: usize,
    /// Size of each application write.
    pub write_size: usize,
    /// How connections are opened.
    pub connects: Connects,
    /// When readers start.
    pub readers: ReadersStart,
    /// How fast the server's application reads, bytes per second over all its
    /// readers, taken in turn (a reader pool slower than the link: threads
    /// sharing a core); `None`: everything available, at once.
    pub read_rate: Option<u64>,
    /// Virtual time allowed.
    pub time_limit: Duration,
}

impl Default for FlowsScenario {
    fn default() -> Self {
        Self {
            seed: 1,
            flows: 1,
            bytes_per_flow: 1 << 20,
            forward: ImpairConfig {
                delay: Duration::from_millis(1),
                ..Default::default()
            },
            reverse: ImpairConfig {
                delay: Duration::from_millis(1),
                ..Default::default()
            },
            transport: TransportConfig::default(),
            client_max_datagram: None,
            client_buffers: 16383,
            server_buffers: 16383,
            ring_slots: 1024,
            write_size: 64 * 1024 + 17,
            connects: Connects::AtOnce,
            readers: ReadersStart::AtAccept,
            read_rate: None,
            time_limit: Duration::from_secs(120),
        }
    }
}

/// One flow's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowOutcome {
    /// Stream bytes the client wrote.
    pub written: u64,
    /// Stream bytes the server read, verified or not.
    pub read: u64,
    /// Every byte read matched the flow's pattern.
    pub verified: bool,
    /// The server read the end of stream after every byte.
    pub complete: bool,
    /// When the server read the end of stream, from the run's start.
    pub completed_at: Option<Duration>,
    /// How the client's close ended: `Ok` once the server acknowledged every
    /// byte, the error otherwise (None: still waiting at the limit).
    pub client_close: Option<Result<(), FlowError>>,
    /// When the client's close returned, from the run's start.
    pub client_closed_at: Option<Duration>,
    /// How the server's close ended.
    pub server_close: Option<Result<(), FlowError>>,
    /// Data packets the server dropped unacknowledged (its connection's
    /// `out_of_window`: beyond the credit, or refused by its storage).
    pub server_refused: u64,
}

/// A session's figures at the end of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SideReport {
    /// Link counters of its port.
    pub link: LinkStats,
    /// Endpoint counters.
    pub endpoint: EndpointStats,
    /// Packet buffers not back in the pool after shutdown (must be 0).
    pub buffers_in_use: usize,
    /// Connections still open when the transfer phase ended: what they were
    /// doing (after a clean run, only connections in their closing period,
    /// which a close does not wait for).
    pub open_connections: Vec<ConnectionEntry>,
}

/// The outcome of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowsReport {
    /// Per flow, in the client's order.
    pub flows: Vec<FlowOutcome>,
    /// Every flow's bytes arrived intact, with the end of stream.
    pub all_delivered: bool,
    /// Both ends of every flow closed gracefully.
    pub all_closed_gracefully: bool,
    /// Virtual time until the last close (or the limit).
    pub elapsed: Duration,
    /// The client session.
    pub client: SideReport,
    /// The server session.
    pub server: SideReport,
    /// Client → server path.
    pub forward_path: ImpairStats,
    /// Server → client path.
    pub reverse_path: ImpairStats,
    /// Times a loop stayed busy at one instant (see [`LoopNet::busy_overflows`]).
    pub busy_overflows: u64,
}

impl FlowsReport {
    /// Whether the run is correct: every byte delivered, every close graceful,
    /// every packet buffer returned.
    pub fn ok(&self) -> bool {
        self.all_delivered
            && self.all_closed_gracefully
            && self.client.buffers_in_use == 0
            && self.server.buffers_in_use == 0
    }
}

struct Writer {
    stream: Option<Stream>,
    written: u64,
    /// The current write's bytes (from stream offset `written`) and how many of
    /// them the stream took so far.
    pending: Vec<u8>,
    taken: usize,
    close: Option<Result<(), FlowError>>,
    /// When `close` was set, from the run's start.
    closed_at: Option<Duration>,
}

struct Reader {
    stream: Stream,
    flow: Option<usize>,
    tag: Vec<u8>,
    offset: u64,
    eof: bool,
    close: Option<Result<(), FlowError>>,
}

fn close_result(r: std::io::Result<()>) -> Option<Result<(), FlowError>> {
    match r {
        Ok(()) => Some(Ok(())),
        Err(e) if e.kind() == ErrorKind::WouldBlock => None,
        Err(e) => Some(Err(FlowError::from(e))),
    }
}

fn stream_seed(flow: usize, seed: u64) -> u64 {
    seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ flow as u64
}

/// Why a flows scenario cannot run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FlowsError {
    /// A runtime could not be started, or a connection not opened.
    #[error("runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// A path's impairments are invalid.
    #[error("path: {0}")]
    Path(#[from] ImpairConfigError),
}

/// Runs the scenario (see the module documentation).
pub fn run_flows(sc: &FlowsScenario) -> Result<FlowsReport, FlowsError> {
    run_flows_observed(sc, None)
}

/// [`run_flows`], showing every datagram to `observer` (debugging a seed).
pub fn run_flows_observed(
    sc: &FlowsScenario,
    observer: Option<Observer>,
) -> Result<FlowsReport, FlowsError> {
    let max_datagram = sc.transport.max_datagram as usize;
    let mut net = LoopNet::new(sc.seed);
    if let Some(o) = observer {
        net.observe(o);
    }
    let mut client_transport = sc.transport.clone();
    if let Some(d) = sc.client_max_datagram {
        client_transport.max_datagram = d;
    }
    let builder = |seed: u64, transport: &TransportConfig| {
        Runtime::builder()
            .transport(transport.clone())
            .ring_slots(sc.ring_slots)
            .accept_backlog(sc.flows.max(1))
            .shutdown_timeout(Duration::from_secs(1))
            .seed(seed)
    };
    let ca: SocketAddr = "10.0.0.1:4000".parse().expect("address");
    let sa: SocketAddr = "10.0.0.2:5000".parse().expect("address");
    let client = net.add_node(
        ca,
        builder(sc.seed ^ 0xc1, &client_transport),
        sc.client_buffers,
        client_transport.max_datagram as usize,
    )?;
    let server = net.add_node(
        sa,
        builder(sc.seed ^ 0x5e, &sc.transport),
        sc.server_buffers,
        max_datagram,
    )?;
    net.set_path(client, server, sc.forward.clone())?;
    net.set_path(server, client, sc.reverse.clone())?;
    net.session(server).listen();
    let mut writers: Vec<Writer> = Vec::new();
    let started = net.now();
    let limit = started + sc.time_limit;
    let total = sc.bytes_per_flow + FLOW_TAG as u64;
    let mut readers: Vec<Reader> = Vec::new();
    let mut read_from: Option<Instant> = match sc.readers {
        ReadersStart::AtAccept => Some(net.now()),
        ReadersStart::AfterAllAccepted(_) => None,
    };
    let mut outcomes: Vec<FlowOutcome> = (0..sc.flows)
        .map(|_| FlowOutcome {
            written: 0,
            read: 0,
            verified: true,
            complete: false,
            completed_at: None,
            client_close: None,
            server_close: None,
            client_closed_at: None,
            server_refused: 0,
        })
        .collect();
    let mut rbuf = vec![0u8; 64 * 1024];
    let (mut read_budget, mut read_cursor, mut last_read) = (0f64, 0usize, None::<Instant>);
    let done = |w: &[Writer], r: &[Reader]| {
        w.len() == sc.flows
            && w.iter().all(|w| w.close.is_some())
            && r.len() == w.len()
            && r.iter().all(|r| r.close.is_some())
    };
    loop {
        let now = net.now();
        // Client application: open connections, write each flow, then close it.
        while writers.len() < sc.flows
            && (sc.connects == Connects::AtOnce
                || writers
                    .last()
                    .is_none_or(|w| w.stream.as_ref().is_none_or(|s| s.is_established())))
        {
            let stream = net.session(client).connect(now, sa)?;
            writers.push(Writer {
                stream: Some(stream),
                written: 0,
                pending: Vec::with_capacity(sc.write_size.max(1)),
                taken: 0,
                close: None,
                closed_at: None,
            });
        }
        for (i, w) in writers.iter_mut().enumerate() {
            let Some(s) = w.stream.as_mut() else {
                continue;
            };
            while w.written < total {
                if w.taken == w.pending.len() {
                    let n = (total - w.written).min(sc.write_size.max(1) as u64) as usize;
                    w.pending.resize(n, 0);
                    pattern::fill_tagged(
                        i as u64,
                        stream_seed(i, sc.seed),
                        w.written,
                        &mut w.pending,
                    );
                    w.taken = 0;
                }
                match s.try_write(&w.pending[w.taken..]) {
                    Ok(k) => {
                        w.taken += k;
                        w.written += k as u64;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => {
                        w.close = Some(Err(FlowError::from(e)));
                        break;
                    }
                }
            }
            if w.close.is_none() && w.written == total {
                w.close = close_result(s.try_close());
            }
            if w.close.is_some() {
                w.closed_at.get_or_insert(net.elapsed());
                w.stream = None;
            }
        }
        // Server application: accept; read and verify once reading started.
        while let Some(stream) = net.session(server).accept() {
            readers.push(Reader {
                stream,
                flow: None,
                tag: Vec::new(),
                offset: 0,
                eof: false,
                close: None,
            });
        }
        if read_from.is_none() && readers.len() == sc.flows {
            if let ReadersStart::AfterAllAccepted(d) = sc.readers {
                read_from = Some(now + d);
            }
        }
        if read_from.is_some_and(|t| now >= t) {
            let at = now.saturating_duration_since(started);
            match sc.read_rate {
                None => {
                    for r in readers.iter_mut().filter(|r| r.close.is_none()) {
                        read_some(r, &mut rbuf, &mut outcomes, sc.seed, at, usize::MAX);
                    }
                }
                Some(rate) => {
                    let dt = now.saturating_duration_since(last_read.unwrap_or(now));
                    last_read = Some(now);
                    read_budget =
                        (read_budget + rate as f64 * dt.as_secs_f64()).min(rate as f64 * 0.01); // at most 10 ms of reading saved up
                                                                                                // Readers in turn from where the last round stopped; ends
                                                                                                // of stream and closes cost nothing.
                    let n = readers.len();
                    for k in 0..n {
                        let i = (read_cursor + k) % n;
                        let r = &mut readers[i];
                        if r.close.is_some() {
                            continue;
                        }
                        let limit = read_budget as usize;
                        let got = read_some(r, &mut rbuf, &mut outcomes, sc.seed, at, limit);
                        read_budget -= got as f64;
                        if read_budget < 1.0 {
                            read_cursor = i + 1;
                            break;
                        }
                    }
                }
            }
        }
        if done(&writers, &readers) {
            break;
        }
        if !net.step(limit) {
            break;
        }
    }
    let elapsed = net.elapsed();
    let open_client = net.stats(client).connection_list;
    let open_server = net.stats(server).connection_list;
    for (o, w) in outcomes.iter_mut().zip(&writers) {
        // (Flows never opened keep written 0 and no close.)
        o.written = w.written.saturating_sub(FLOW_TAG as u64);
        o.client_close = w.close.clone();
        o.client_closed_at = w.closed_at;
    }
    for r in &readers {
        if let Some(f) = r.flow {
            outcomes[f].server_close = r.close.clone();
            // Final once the close completed.
            outcomes[f].server_refused = r.stream.stats().out_of_window;
        }
    }
    let all_delivered = outcomes
        .iter()
        .all(|o| o.verified && o.complete && o.read == sc.bytes_per_flow);
    let all_closed_gracefully = outcomes
        .iter()
        .all(|o| o.client_close == Some(Ok(())) && o.server_close == Some(Ok(())));
    // Tear down: streams dropped, both sessions shut down, pools checked.
    drop(writers);
    drop(readers);
    let forward_path = net.path_stats(client, server);
    let reverse_path = net.path_stats(server, client);
    let now = net.now();
    net.session(client).shut_down(now);
    net.session(server).shut_down(now);
    let end = net.now() + Duration::from_secs(5);
    net.run_until(end, |n| n.stopped(client) && n.stopped(server));
    let side = |net: &mut LoopNet, n: NodeId, open_connections| {
        let st = net.stats(n);
        SideReport {
            link: st.link,
            endpoint: st.endpoint,
            buffers_in_use: net.buffers_in_use(n),
            open_connections,
        }
    };
    Ok(FlowsReport {
        all_delivered,
        all_closed_gracefully,
        elapsed,
        client: side(&mut net, client, open_client),
        server: side(&mut net, server, open_server),
        forward_path,
        reverse_path,
        busy_overflows: net.busy_overflows(),
        flows: outcomes,
    })
}

/// Reads what `r`'s stream has, verifies it, closes at the end of stream.
/// `at`: the time since the run started (when the end of stream is read).
/// Reads at most about `limit` bytes (a buffer's worth past it); returns how
/// many.
fn read_some(
    r: &mut Reader,
    buf: &mut [u8],
    outcomes: &mut [FlowOutcome],
    seed: u64,
    at: Duration,
    limit: usize,
) -> usize {
    if r.eof {
        r.close = close_result(r.stream.try_close());
        return 0;
    }
    let mut total = 0usize;
    loop {
        if total >= limit {
            return total;
        }
        let want = buf.len().min(limit - total);
        let n = match r.stream.try_read(&mut buf[..want]) {
            Ok(0) => {
                r.eof = true;
                if let Some(f) = r.flow {
                    outcomes[f].complete = true;
                    outcomes[f].completed_at = Some(at);
                }
                r.close = close_result(r.stream.try_close());
                return total;
            }
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return total,
            Err(e) => {
                r.close = Some(Err(FlowError::from(e)));
                return total;
            }
        };
        total += n;
        let mut data = &buf[..n];
        if r.tag.len() < FLOW_TAG {
            let k = (FLOW_TAG - r.tag.len()).min(data.len());
            r.tag.extend_from_slice(&data[..k]);
            data = &data[k..];
            r.offset += k as u64;
            if r.tag.len() == FLOW_TAG {
                let id = u64::from_be_bytes(r.tag[..].try_into().expect("8 bytes")) as usize;
                r.flow = (id < outcomes.len()).then_some(id);
            }
        }
        match r.flow {
            Some(f) => {
                let o = &mut outcomes[f];
                if pattern::first_mismatch(stream_seed(f, seed), r.offset, data).is_some() {
                    o.verified = false;
                }
                o.read += data.len() as u64;
            }
            None if r.tag.len() == FLOW_TAG => {
                // A tag no flow has: the stream's first bytes are corrupt.
                for o in outcomes.iter_mut() {
                    o.verified = false;
                }
            }
            None => {}
        }
        r.offset += data.len() as u64;
    }
}
