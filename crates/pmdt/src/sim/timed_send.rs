//! One cell of the experiment runner's loss grid (`pmdt-bench`'s `loss`
//! experiment) in virtual time: `pmdt-send -t T` to `pmdt-recv` through
//! `pmdt-wanem`.
//!
//! What the tools do, step by step, and what is modelled:
//! - the sender's clock starts before it connects; the handshake is part of the
//!   measured time;
//! - it writes as fast as the connection takes data until `T` after that start,
//!   then finishes its stream;
//! - the receiver reads everything, answers with a receipt (a short line of JSON)
//!   and closes; the sender reads the receipt and closes;
//! - goodput is the stream bytes written (all acknowledged: the close is graceful)
//!   over the sender's wall time, handshake and close included.
//!
//! The link counts what `pmdt-wanem` counts in its DPDK mode: Ethernet frames, so
//! each datagram costs [`TimedSendScenario::wire_overhead`] bytes (IPv4, UDP and
//! Ethernet headers) on top of its UDP payload at the bottleneck and in its queue.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{CoreShare, ImpairConfig, ImpairStats, Network};
use crate::link::impair_model::ImpairConfigError;
use pmdt_proto::wire::DATA_HEADER_LEN;
use pmdt_proto::{
    CloseReason, ConfigError, ConnectOptions, ConnectionStats, EndpointConfig, Event,
    TransportConfig,
};

/// Bytes an Ethernet frame carries beyond its UDP payload: Ethernet (14), IPv4
/// (20) and UDP (8) headers. `pmdt-wanem` in DPDK mode rates and queues frames.
pub const ETHERNET_IPV4_UDP_OVERHEAD: usize = 14 + 20 + 8;

/// The share of a frame-counting link's rate that stream bytes can have when every
/// datagram is `max_datagram` bytes (UDP payload): the data header
/// ([`DATA_HEADER_LEN`]) and the Ethernet, IPv4 and UDP headers take the rest. The
/// payload ceiling of a goodput figure: 1432 / 1514 = 94.58% at the default 1472.
pub fn stream_share_of_frames(max_datagram: u16) -> f64 {
    let datagram = usize::from(max_datagram);
    datagram.saturating_sub(DATA_HEADER_LEN) as f64 / (datagram + ETHERNET_IPV4_UDP_OVERHEAD) as f64
}

/// Length of the receiver's receipt (`pmdt-recv` answers with a JSON line holding
/// the byte count and a SHA-256: about this long).
const RECEIPT_BYTES: usize = 160;

/// What to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct TimedSendScenario {
    /// Seed of the network's impairments and the endpoints' randomness.
    pub seed: u64,
    /// Writing stops this long after the sender's start (`pmdt-send -t`).
    pub write_for: Duration,
    /// Sender → receiver direction.
    pub forward: ImpairConfig,
    /// Receiver → sender direction.
    pub reverse: ImpairConfig,
    /// Bytes each datagram costs on the link beyond its UDP payload.
    pub wire_overhead: usize,
    /// Protocol options for both ends.
    pub transport: TransportConfig,
    /// The sender's connection's own options (a saved path to resume from).
    pub connect: ConnectOptions,
    /// Give up after this much virtual time.
    pub time_limit: Duration,
    /// Record the sender's statistics at this interval.
    pub sample_every: Option<Duration>,
    /// The sender's core, when it shares one (None: a core of its own).
    pub sender_core: Option<CoreShare>,
    /// The receiver's core, when it shares one.
    pub receiver_core: Option<CoreShare>,
}

impl Default for TimedSendScenario {
    fn default() -> Self {
        Self {
            seed: 1,
            write_for: Duration::from_secs(20),
            forward: super::default_path(),
            reverse: super::default_path(),
            wire_overhead: ETHERNET_IPV4_UDP_OVERHEAD,
            transport: TransportConfig::default(),
            connect: ConnectOptions::default(),
            time_limit: Duration::from_secs(120),
            sample_every: None,
            sender_core: None,
            receiver_core: None,
        }
    }
}

/// The outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimedSendReport {
    /// Stream bytes written (and, with a graceful close, acknowledged).
    pub bytes: u64,
    /// Stream bytes the receiver read.
    pub bytes_received: u64,
    /// The sender's wall time: start to the end of its close.
    pub wall: Duration,
    /// `bytes` × 8 / `wall`, bits per second (the runner's `goodput`).
    pub goodput_bps: f64,
    /// When the handshake completed.
    pub established_at: Option<Duration>,
    /// When the sender read the receipt (every byte was received).
    pub receipt_at: Option<Duration>,
    /// Why the sender's connection ended (`None`: the time limit).
    pub close: Option<CloseReason>,
    /// Sender statistics at the end.
    pub sender: ConnectionStats,
    /// Receiver statistics at the end.
    pub receiver: ConnectionStats,
    /// Sender statistics at each `sample_every` tick.
    pub sender_timeline: Vec<ConnectionStats>,
    /// Forward link counters.
    pub forward_link: ImpairStats,
    /// Reverse link counters.
    pub reverse_link: ImpairStats,
}

/// Why a scenario cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TimedSendError {
    /// The transport configuration is invalid.
    #[error("invalid transport configuration: {0}")]
    Config(#[from] ConfigError),
    /// A path's impairments are invalid.
    #[error("path: {0}")]
    Path(#[from] ImpairConfigError),
}

/// Runs the cell: connect, write for `write_for`, finish, wait for the receipt,
/// close.
pub fn run_timed_send(sc: &TimedSendScenario) -> Result<TimedSendReport, TimedSendError> {
    let mut net = Network::new(sc.seed);
    net.set_wire_overhead(sc.wire_overhead);
    let client = net.add_endpoint(
        "10.0.0.1:4000".parse().expect("addr"),
        EndpointConfig::default()
            .with_transport(sc.transport.clone())
            .with_seed(Some(sc.seed ^ 0x00c1_1e47)),
    )?;
    let server = net.add_endpoint(
        "10.0.0.2:5000".parse().expect("addr"),
        EndpointConfig::default()
            .with_transport(sc.transport.clone())
            .with_accept(true)
            .with_seed(Some(sc.seed ^ 0x005e_4ee4)),
    )?;
    net.set_link(client, server, sc.forward.clone())?;
    net.set_link(server, client, sc.reverse.clone())?;
    net.set_core_share(client, sc.sender_core);
    net.set_core_share(server, sc.receiver_core);
    let start = net.now();
    let limit = start + sc.time_limit;
    let deadline = start + sc.write_for;
    let to = net.addr(server);
    let h = net.endpoint(client).connect_with(start, to, &sc.connect)?;
    let zeros = vec![0u8; 64 * 1024];
    let mut buf = vec![0u8; 64 * 1024];
    let mut report = TimedSendReport {
        bytes: 0,
        bytes_received: 0,
        wall: Duration::ZERO,
        goodput_bps: 0.0,
        established_at: None,
        receipt_at: None,
        close: None,
        sender: ConnectionStats::default(),
        receiver: ConnectionStats::default(),
        sender_timeline: Vec::new(),
        forward_link: ImpairStats::default(),
        reverse_link: ImpairStats::default(),
    };
    let mut finished = false;
    let mut next_sample = sc.sample_every.map(|e| start + e);
    let mut server_conn = None;
    let mut receipt_sent = false;
    let mut receipt = 0usize;
    loop {
        let mut step_limit = limit;
        if !finished {
            step_limit = step_limit.min(deadline);
        }
        if let Some(t) = next_sample {
            step_limit = step_limit.min(t);
        }
        let progressed = net.step(step_limit) || net.now() == step_limit && step_limit < limit;
        let now = net.now();
        let elapsed = now - start;
        while let Some(t) = next_sample.filter(|&t| now >= t) {
            let s = net
                .endpoint(client)
                .connection(h)
                .map(|c| c.stats())
                .unwrap_or_default();
            report.sender_timeline.push(s);
            next_sample = sc.sample_every.map(|e| t + e.max(Duration::from_millis(1)));
        }
        // The sender: write until the deadline, then finish; read the receipt and
        // close once it is complete.
        {
            let ep = net.endpoint(client);
            if let Some(mut c) = ep.connection_mut(h) {
                if report.established_at.is_none() && c.is_established() {
                    report.established_at = Some(elapsed);
                }
                if !finished && now >= deadline {
                    finished = true;
                    c.finish();
                }
                while !finished && c.is_established() {
                    match c.write(&zeros) {
                        Ok(k) if k > 0 => report.bytes += k as u64,
                        _ => break,
                    }
                }
                while c.readable() > 0 {
                    receipt += c.read(&mut buf);
                }
                if report.receipt_at.is_none() && c.is_peer_finished() {
                    report.receipt_at = Some(elapsed);
                    c.close(now);
                }
            }
        }
        // The receiver: read everything, answer with the receipt, close.
        {
            let ep = net.endpoint(server);
            if server_conn.is_none() {
                server_conn = ep.accept();
            }
            if let Some(sh) = server_conn {
                if let Some(mut c) = ep.connection_mut(sh) {
                    while c.readable() > 0 {
                        report.bytes_received += c.read(&mut buf) as u64;
                    }
                    if !receipt_sent && c.is_peer_finished() {
                        receipt_sent = true;
                        let _ = c.write(&zeros[..RECEIPT_BYTES]);
                        c.close(now);
                    }
                }
            }
        }
        while let Some((ch, e)) = net.endpoint(client).poll_event() {
            if let (true, Event::Closed(r)) = (ch == h, e) {
                report.close = Some(r);
            }
        }
        while net.endpoint(server).poll_event().is_some() {}
        if report.close.is_some() || !progressed {
            break;
        }
    }
    report.wall = net.elapsed();
    if report.receipt_at.is_none() || receipt < RECEIPT_BYTES {
        report.close = report.close.filter(|r| *r != CloseReason::Graceful);
    }
    report.goodput_bps = report.bytes as f64 * 8.0 / report.wall.as_secs_f64().max(1e-9);
    if let Some(c) = net.endpoint(client).connection(h) {
        report.sender = c.stats();
    }
    if let Some(c) = server_conn.and_then(|sh| net.endpoint(server).connection(sh)) {
        report.receiver = c.stats();
    }
    report.forward_link = net.link_stats(client, server);
    report.reverse_link = net.link_stats(server, client);
    Ok(report)
}
