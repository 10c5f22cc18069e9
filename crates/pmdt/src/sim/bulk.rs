//! A reusable experiment: N bulk flows from a client to a server over one simulated
//! path, every byte verified, with goodput, fairness and close reasons reported.

use std::collections::HashMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::pattern;
use super::Network;
use super::NodeId;
use super::{default_path, CoreShare, ImpairConfig, ImpairStats};
use crate::link::impair_model::ImpairConfigError;
use pmdt_proto::{
    CloseReason, ConfigError, CongestionKind, ConnectOptions, ConnectionHandle, ConnectionStats,
    EndpointConfig, EndpointStats, Event, TransportConfig,
};

/// What to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct BulkScenario {
    /// Seed of the network's impairments and the endpoints' randomness.
    pub seed: u64,
    /// Parallel connections.
    pub flows: usize,
    /// Stream bytes per connection.
    pub bytes_per_flow: u64,
    /// Client → server direction.
    pub forward: ImpairConfig,
    /// Server → client direction (acks).
    pub reverse: ImpairConfig,
    /// Protocol options for both ends.
    pub transport: TransportConfig,
    /// Give up after this much virtual time.
    pub time_limit: Duration,
    /// Per-flow congestion controllers. Empty: every flow uses `transport`'s, from
    /// one client endpoint. Otherwise one entry per flow, each flow from its own
    /// client endpoint (unless [`Self::flows_share_endpoint`]), all sharing the
    /// forward bottleneck.
    pub flow_congestion: Vec<CongestionKind>,
    /// With [`Self::flow_congestion`]: every flow from one client endpoint
    /// (each with its own controller), as `pmdt-send` runs flows of different
    /// controllers in one process: the flows are siblings on the path.
    pub flows_share_endpoint: bool,
    /// Forward bottleneck rate changes: at each virtual time, the new rate.
    pub rate_changes: Vec<(Duration, Option<u64>)>,
    /// Record each flow's received bytes at this interval ([`FlowReport::timeline`]).
    pub sample_every: Option<Duration>,
    /// Clear the forward link's counters at this virtual time, so
    /// [`BulkReport::forward_link`] covers only what follows (steady state).
    pub link_stats_from: Option<Duration>,
    /// Flow `i`'s application writes its first byte at `i × start_every` (all
    /// connect at once): flows that join a bottleneck already in use.
    pub start_every: Duration,
    /// The clients' cores: each client host runs on a core it shares, on and
    /// off by this schedule (None: a core of its own). The VM's sender shares
    /// its vCPU with `pmdt-wanem` and comes back late for its pacer.
    pub sender_core: Option<CoreShare>,
    /// The server's core, likewise: a receiver that shares it takes in what
    /// arrived while it was away all at once.
    pub receiver_core: Option<CoreShare>,
}

impl Default for BulkScenario {
    fn default() -> Self {
        Self {
            seed: 1,
            flows: 1,
            bytes_per_flow: 1 << 20,
            forward: default_path(),
            reverse: default_path(),
            transport: TransportConfig::default(),
            time_limit: Duration::from_secs(120),
            flow_congestion: Vec::new(),
            flows_share_endpoint: false,
            rate_changes: Vec::new(),
            sample_every: None,
            link_stats_from: None,
            start_every: Duration::ZERO,
            sender_core: None,
            receiver_core: None,
        }
    }
}

/// One flow's outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowReport {
    /// Stream bytes received in order and verified.
    pub bytes_received: u64,
    /// Whether every received byte matched what was sent.
    pub verified: bool,
    /// Virtual time when the receiver had every byte and the end of stream.
    pub completed_at: Option<Duration>,
    /// Bytes received by the time the first flow completed.
    pub bytes_at_first_completion: u64,
    /// Bytes received when all flows together had 20% of the total (end of warm-up).
    pub bytes_at_warmup: u64,
    /// Receiver goodput: bytes / completion time, bits per second.
    pub goodput_bps: f64,
    /// Why the client side ended.
    pub client_close: Option<CloseReason>,
    /// Why the server side ended.
    pub server_close: Option<CloseReason>,
    /// Sender statistics at the end.
    pub sender: ConnectionStats,
    /// Stream bytes received by each `sample_every` tick (the first at one interval).
    pub timeline: Vec<u64>,
    /// Sender statistics at each `sample_every` tick.
    pub sender_timeline: Vec<ConnectionStats>,
    /// Receiver statistics at the end (its receive window, out-of-window drops).
    pub receiver: ConnectionStats,
    /// Distinct stream bytes that had arrived at the receiver (in order or not) by
    /// each `sample_every` tick: goodput without head-of-line waits.
    pub arrived_timeline: Vec<u64>,
}

/// The outcome of a scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BulkReport {
    /// Per flow.
    pub flows: Vec<FlowReport>,
    /// Virtual time the run took.
    pub elapsed: Duration,
    /// Every flow delivered every byte, verified.
    pub all_delivered: bool,
    /// Every connection ended gracefully on both sides.
    pub all_closed_gracefully: bool,
    /// Virtual time when all flows together had 20% of the total (end of warm-up).
    pub warmup_at: Option<Duration>,
    /// Jain's fairness index of the bytes each flow received in steady state: from
    /// the end of warm-up (20% of all bytes delivered) to the first completion.
    pub jain_index: f64,
    /// Total verified bytes / elapsed, bits per second.
    pub aggregate_goodput_bps: f64,
    /// Forward link counters.
    pub forward_link: ImpairStats,
    /// Reverse link counters.
    pub reverse_link: ImpairStats,
    /// Server endpoint counters.
    pub server_endpoint: EndpointStats,
    /// How many client endpoints the flows were sent from.
    #[serde(default)]
    pub client_endpoints: usize,
}

/// Jain's fairness index: 1 when all equal, 1/n when one takes everything.
pub fn jain_index(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if sq == 0.0 {
        return 1.0;
    }
    sum * sum / (x.len() as f64 * sq)
}

struct Flow {
    node: NodeId,
    client: ConnectionHandle,
    written: u64,
    closed_client: bool,
    report: FlowReport,
}

const FLOW_TAG: usize = pattern::TAG_LEN;

/// Why a scenario cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// `flow_congestion` is neither empty nor one entry per flow.
    #[error("flow_congestion needs one entry per flow ({flows} flows, {entries} entries)")]
    FlowCongestionCount {
        /// Flows in the scenario.
        flows: usize,
        /// Entries in `flow_congestion`.
        entries: usize,
    },
    /// The transport configuration is invalid.
    #[error("invalid transport configuration: {0}")]
    Config(#[from] ConfigError),
    /// The forward path's impairments are invalid.
    #[error("forward path: {0}")]
    ForwardPath(ImpairConfigError),
    /// The reverse path's impairments are invalid.
    #[error("reverse path: {0}")]
    ReversePath(ImpairConfigError),
    /// A scheduled rate change is invalid.
    #[error("rate change: {0}")]
    RateChange(ImpairConfigError),
}

/// Runs the scenario to completion (or the time limit).
pub fn run_bulk(sc: &BulkScenario) -> Result<BulkReport, ScenarioError> {
    let mut net = Network::new(sc.seed);
    if !sc.flow_congestion.is_empty() && sc.flow_congestion.len() != sc.flows {
        return Err(ScenarioError::FlowCongestionCount {
            flows: sc.flows,
            entries: sc.flow_congestion.len(),
        });
    }
    let kinds: Vec<Option<CongestionKind>> = if sc.flow_congestion.is_empty() {
        vec![None]
    } else if sc.flows_share_endpoint {
        vec![sc.flow_congestion.first().copied()]
    } else {
        sc.flow_congestion.iter().copied().map(Some).collect()
    };
    let mut clients = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let mut transport = sc.transport.clone();
        if let Some(k) = kind {
            transport.congestion = *k;
        }
        clients.push(
            net.add_endpoint(
                format!("10.0.0.{}:4000", i + 1).parse().expect("addr"),
                EndpointConfig::default()
                    .with_transport(transport)
                    .with_seed(Some(sc.seed ^ 0x00c1_1e47 ^ ((i as u64) << 32))),
            )?,
        );
    }
    let client = clients[0];
    let server = net.add_endpoint(
        "10.0.0.2:5000".parse().expect("addr"),
        EndpointConfig::default()
            .with_transport(sc.transport.clone())
            .with_accept(true)
            .with_seed(Some(sc.seed ^ 0x005e_4ee4)),
    )?;
    net.set_shared_link(&clients, server, sc.forward.clone())
        .map_err(ScenarioError::ForwardPath)?;
    for &c in &clients {
        net.set_link(server, c, sc.reverse.clone())
            .map_err(ScenarioError::ReversePath)?;
        net.set_core_share(c, sc.sender_core);
    }
    net.set_core_share(server, sc.receiver_core);
    let server_addr = net.addr(server);
    let now = net.now();
    let mut flows: Vec<Flow> = (0..sc.flows)
        .map(|i| {
            let node = clients[i % clients.len()];
            let client = match sc.flow_congestion.get(i) {
                Some(&kind) if sc.flows_share_endpoint => net.endpoint(node).connect_with(
                    now,
                    server_addr,
                    &ConnectOptions::default().with_congestion(kind),
                )?,
                _ => net.endpoint(node).connect(now, server_addr),
            };
            Ok((node, client))
        })
        .collect::<Result<Vec<_>, ScenarioError>>()?
        .into_iter()
        .map(|(node, client)| Flow {
            node,
            client,
            written: 0,
            closed_client: false,
            report: FlowReport {
                bytes_received: 0,
                verified: true,
                completed_at: None,
                bytes_at_first_completion: 0,
                bytes_at_warmup: 0,
                goodput_bps: 0.0,
                client_close: None,
                server_close: None,
                sender: ConnectionStats::default(),
                timeline: Vec::new(),
                sender_timeline: Vec::new(),
                receiver: ConnectionStats::default(),
                arrived_timeline: Vec::new(),
            },
        })
        .collect();
    let by_client: HashMap<(NodeId, ConnectionHandle), usize> = flows
        .iter()
        .enumerate()
        .map(|(i, f)| ((f.node, f.client), i))
        .collect();
    let mut rate_changes = sc.rate_changes.clone();
    rate_changes.sort_by_key(|c| c.0);
    let mut next_change = 0;
    let mut next_sample = sc.sample_every;
    let mut stats_reset = sc.link_stats_from;
    let mut warmup_at = None;
    // Server connection → (flow index once known, tag bytes, stream offset, closed)
    let mut server_conns: HashMap<ConnectionHandle, (Option<usize>, Vec<u8>, u64, bool)> =
        HashMap::new();
    let limit = net.now() + sc.time_limit;
    let mut buf = vec![0u8; 64 * 1024];
    let mut first_done = false;
    let mut warm = false;
    let total_stream = sc.bytes_per_flow + FLOW_TAG as u64;

    loop {
        // Stop at the next rate change or sample tick so they happen on time.
        let mut step_limit = limit;
        if let Some(&(at, _)) = rate_changes.get(next_change) {
            step_limit = step_limit.min(net.start + at);
        }
        if let Some(at) = next_sample {
            step_limit = step_limit.min(net.start + at);
        }
        if let Some(at) = stats_reset {
            step_limit = step_limit.min(net.start + at);
        }
        if let Some(at) = (1..flows.len() as u32)
            .map(|i| sc.start_every * i)
            .find(|&at| at > net.elapsed())
        {
            step_limit = step_limit.min(net.start + at);
        }
        let mut progressed = net.step(step_limit);
        if step_limit < limit && net.now() >= step_limit {
            progressed = true;
        }
        let now = net.now();
        let elapsed = net.elapsed();
        if stats_reset.is_some_and(|at| elapsed >= at) {
            stats_reset = None;
            net.reset_link_stats(client, server);
        }
        while let Some(&(at, rate)) = rate_changes.get(next_change) {
            if elapsed < at {
                break;
            }
            for &c in &clients {
                net.set_link_rate(c, server, rate)
                    .map_err(ScenarioError::RateChange)?;
            }
            next_change += 1;
        }
        if let Some(every) = sc.sample_every {
            while next_sample.is_some_and(|at| elapsed >= at) {
                for f in flows.iter_mut() {
                    f.report.timeline.push(f.report.bytes_received);
                    let s = net
                        .endpoint(f.node)
                        .connection(f.client)
                        .map(|c| c.stats())
                        .unwrap_or_default();
                    f.report.sender_timeline.push(s);
                    let prev = f.report.arrived_timeline.last().copied().unwrap_or(0);
                    f.report.arrived_timeline.push(prev);
                }
                for (h, (flow, ..)) in &server_conns {
                    if let (Some(fi), Some(c)) = (flow, net.endpoint(server).connection(*h)) {
                        if let Some(last) = flows[*fi].report.arrived_timeline.last_mut() {
                            *last = c.stats().stream_bytes_arrived;
                        }
                    }
                }
                next_sample = next_sample.map(|t| t + every.max(Duration::from_millis(1)));
            }
        }
        // Client application: write the pattern, then close.
        for (i, f) in flows.iter_mut().enumerate() {
            if elapsed < sc.start_every * i as u32 {
                continue;
            }
            let ep = net.endpoint(f.node);
            while f.written < total_stream {
                // Generate only what the connection takes now: the pattern costs
                // per byte.
                let room = ep.connection(f.client).map_or(0, |c| c.write_room());
                let n = (total_stream - f.written)
                    .min(buf.len() as u64)
                    .min(room.max(1)) as usize;
                pattern::fill_tagged(
                    i as u64,
                    stream_seed(i as u64, sc.seed),
                    f.written,
                    &mut buf[..n],
                );
                let Some(mut c) = ep.connection_mut(f.client) else {
                    break;
                };
                match c.write(&buf[..n]) {
                    Ok(k) if k > 0 => f.written += k as u64,
                    _ => break,
                }
            }
            if f.written == total_stream && !f.closed_client {
                f.closed_client = true;
                if let Some(mut c) = ep.connection_mut(f.client) {
                    c.close(now);
                }
            }
        }
        // Server application: accept, read and verify, close at end of stream.
        {
            let ep = net.endpoint(server);
            while let Some(h) = ep.accept() {
                server_conns.insert(h, (None, Vec::new(), 0, false));
            }
            for (h, (flow, tag, off, closed)) in server_conns.iter_mut() {
                // Read only what is there (a read reschedules the connection).
                while ep.connection(*h).is_some_and(|c| c.readable() > 0) {
                    let Some(mut c) = ep.connection_mut(*h) else {
                        break;
                    };
                    let n = c.read(&mut buf);
                    drop(c);
                    let mut data = &buf[..n];
                    if tag.len() < FLOW_TAG {
                        let k = (FLOW_TAG - tag.len()).min(data.len());
                        tag.extend_from_slice(&data[..k]);
                        data = &data[k..];
                        *off += k as u64;
                        if tag.len() == FLOW_TAG {
                            let id =
                                u64::from_be_bytes(tag[..].try_into().expect("8 bytes")) as usize;
                            *flow = (id < flows.len()).then_some(id);
                        }
                    }
                    if let Some(fi) = *flow {
                        let f = &mut flows[fi];
                        if pattern::first_mismatch(stream_seed(fi as u64, sc.seed), *off, data)
                            .is_some()
                        {
                            f.report.verified = false;
                        }
                        f.report.bytes_received += data.len() as u64;
                    } else if tag.len() == FLOW_TAG {
                        // Unknown flow tag: corruption got through.
                        for f in flows.iter_mut() {
                            f.report.verified = false;
                        }
                    }
                    *off += data.len() as u64;
                }
                let finished = ep.connection(*h).is_some_and(|c| c.is_peer_finished());
                if finished && !*closed {
                    *closed = true;
                    if let Some(fi) = *flow {
                        let f = &mut flows[fi];
                        f.report.completed_at = Some(elapsed);
                        first_done = true;
                    }
                    if let Some(mut c) = ep.connection_mut(*h) {
                        c.close(now);
                    }
                }
            }
        }
        let delivered: u64 = flows.iter().map(|f| f.report.bytes_received).sum();
        if !warm && delivered * 5 >= sc.bytes_per_flow * flows.len() as u64 {
            warm = true;
            warmup_at = Some(elapsed);
            for f in flows.iter_mut() {
                f.report.bytes_at_warmup = f.report.bytes_received;
            }
        }
        if first_done
            && flows
                .iter()
                .all(|f| f.report.bytes_at_first_completion == 0)
        {
            for f in flows.iter_mut() {
                f.report.bytes_at_first_completion = f.report.bytes_received.max(1);
            }
        }
        // Events: close reasons.
        for &c in &clients {
            while let Some((h, e)) = net.endpoint(c).poll_event() {
                if let (Event::Closed(r), Some(&i)) = (e, by_client.get(&(c, h))) {
                    flows[i].report.client_close = Some(r);
                }
            }
        }
        while let Some((h, e)) = net.endpoint(server).poll_event() {
            if let Event::Closed(r) = e {
                if let Some((Some(fi), ..)) = server_conns.get(&h) {
                    flows[*fi].report.server_close = Some(r);
                }
            }
        }
        let all_done = flows
            .iter()
            .all(|f| f.report.client_close.is_some() && f.report.server_close.is_some());
        if all_done || !progressed {
            break;
        }
    }
    let elapsed = net.elapsed();
    for (h, (flow, ..)) in &server_conns {
        if let (Some(fi), Some(c)) = (flow, net.endpoint(server).connection(*h)) {
            flows[*fi].report.receiver = c.stats();
        }
    }
    for f in flows.iter_mut() {
        if let Some(c) = net.endpoint(f.node).connection(f.client) {
            f.report.sender = c.stats();
        }
        if let Some(t) = f.report.completed_at {
            f.report.goodput_bps = f.report.bytes_received as f64 * 8.0 / t.as_secs_f64().max(1e-9);
        }
    }
    let shares: Vec<f64> = flows
        .iter()
        .map(|f| {
            f.report
                .bytes_at_first_completion
                .saturating_sub(f.report.bytes_at_warmup) as f64
        })
        .collect();
    let total: u64 = flows.iter().map(|f| f.report.bytes_received).sum();
    let last_completion = flows
        .iter()
        .filter_map(|f| f.report.completed_at)
        .max()
        .unwrap_or(elapsed);
    Ok(BulkReport {
        client_endpoints: clients.len(),
        all_delivered: flows.iter().all(|f| {
            f.report.verified
                && f.report.bytes_received == sc.bytes_per_flow
                && f.report.completed_at.is_some()
        }),
        all_closed_gracefully: flows.iter().all(|f| {
            f.report.client_close == Some(CloseReason::Graceful)
                && f.report.server_close == Some(CloseReason::Graceful)
        }),
        jain_index: jain_index(&shares),
        aggregate_goodput_bps: total as f64 * 8.0 / last_completion.as_secs_f64().max(1e-9),
        forward_link: net.link_stats(client, server),
        reverse_link: net.link_stats(server, client),
        warmup_at,
        server_endpoint: net.endpoint(server).stats().clone(),
        flows: flows.into_iter().map(|f| f.report).collect(),
        elapsed,
    })
}

fn stream_seed(flow: u64, seed: u64) -> u64 {
    seed.wrapping_mul(31).wrapping_add(flow)
}
