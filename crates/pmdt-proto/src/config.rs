//! Transport and endpoint configuration.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::congestion::CongestionKind;

/// Per-connection protocol options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TransportConfig {
    /// Initial sending window in packets (the lab used 50). In-flight packets never
    /// exceed the window in force, which grows with the controller's window (the
    /// path's BDP) up to `max_window_bytes`, never below this.
    pub window_packets: u64,
    /// Largest UDP payload (pmdt header + data) this side sends and accepts.
    pub max_datagram: u16,
    /// Initial send buffer in bytes (application data not yet acknowledged). Grows
    /// to hold [`SEND_BUFFER_WINDOW_FACTOR`] congestion windows, up to
    /// `max_window_bytes`.
    pub send_buffer: u64,
    /// Initial receive buffer in bytes: the flow-control credit given to the peer.
    /// Grows to [`RECV_WINDOW_PER_RTT`] × the bytes received per RTT (receive-window
    /// autotuning), up to `max_window_bytes`.
    pub recv_buffer: u64,
    /// Per-connection memory limit: the most the send buffer, the receive buffer
    /// (credit) and the packet window (in bytes) may each grow to. Set it to the
    /// initial buffer sizes to turn autotuning off.
    pub max_window_bytes: u64,
    /// Congestion/rate control.
    pub congestion: CongestionKind,
    /// Pace at window / srtt when the controller has no rate of its own.
    pub pacing: bool,
    /// Largest burst the pacer lets out at once, in packets.
    pub pacing_burst_packets: u64,
    /// RTT assumed before the first sample.
    pub initial_rtt: Duration,
    /// Longest the receiver delays an acknowledgement.
    pub max_ack_delay: Duration,
    /// Acknowledge at once after this many ack-eliciting packets.
    pub ack_every: u32,
    /// Packets acknowledged after a packet before it is declared lost (fast retransmit).
    pub packet_threshold: u64,
    /// The connection ends with a timeout error after this long without hearing
    /// from the peer.
    pub idle_timeout: Duration,
    /// Send a keepalive after this long without sending (None: never).
    pub keepalive: Option<Duration>,
}

impl Default for TransportConfig {
    fn default() -> Self {
        Self {
            window_packets: 2048,
            max_datagram: 1472,
            send_buffer: 8 << 20,
            recv_buffer: 8 << 20,
            max_window_bytes: DEFAULT_MAX_WINDOW_BYTES,
            congestion: CongestionKind::Bbr,
            pacing: true,
            pacing_burst_packets: 16,
            initial_rtt: Duration::from_millis(100),
            max_ack_delay: Duration::from_millis(1),
            ack_every: 2,
            packet_threshold: 3,
            idle_timeout: Duration::from_secs(10),
            keepalive: Some(Duration::from_secs(2)),
        }
    }
}

/// Default per-connection buffer limit (each of send buffer, receive credit and
/// packet window): 4 × the BDP of 10 Gbit/s × 100 ms (125 MB). A lossy path needs
/// the credit at 3 BDPs (a lost retransmission holds the head for 2 RTTs) and the
/// send buffer a half window more; 256 MiB held 10 Gbit/s × 100 ms × 0.5 % loss to
/// 7 Gbit/s in the simulator. It is a limit: memory follows the measured BDP.
pub const DEFAULT_MAX_WINDOW_BYTES: u64 = 512 << 20;
/// The receive credit covers this many RTTs of received data, so a hole at the head
/// (a loss being repaired) does not stop the sender for an RTT (Linux's receive
/// buffer autotuning, tcp_rcv_space_adjust, uses 2 as well).
pub const RECV_WINDOW_PER_RTT: u64 = 2;
/// The send buffer holds this many congestion windows: the data in flight plus what
/// a loss at the head holds back while it is repaired (BBR's window is 2 × BDP, so
/// this is 3 × BDP).
pub const SEND_BUFFER_WINDOW_FACTOR: f64 = 1.5;

impl TransportConfig {
    /// Packet window cap that `max_window_bytes` allows.
    pub fn max_window_packets(&self) -> u64 {
        (self.max_window_bytes / self.max_datagram.max(1) as u64).max(self.window_packets)
    }

    /// Largest data payload per packet.
    pub fn max_payload(&self) -> u64 {
        self.max_datagram as u64 - crate::wire::DATA_HEADER_LEN as u64
    }

    /// Checks values that would make the protocol misbehave.
    pub fn validate(&self) -> Result<(), String> {
        if (self.max_datagram as usize) < crate::wire::DATA_HEADER_LEN + 64 {
            return Err(format!("max_datagram {} is too small", self.max_datagram));
        }
        if self.window_packets == 0 {
            return Err("window_packets must be at least 1".into());
        }
        if self.send_buffer < self.max_payload() || self.recv_buffer < self.max_payload() {
            return Err("buffers must hold at least one packet".into());
        }
        if self.ack_every == 0 || self.packet_threshold == 0 {
            return Err("ack_every and packet_threshold must be at least 1".into());
        }
        if let crate::congestion::CongestionKind::Paced { rate_bps } = self.congestion {
            if rate_bps < 8000 {
                return Err("paced rate must be at least 8 kbit/s".into());
            }
        }
        Ok(())
    }
}

/// Endpoint options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EndpointConfig {
    /// Options for every connection of the endpoint.
    pub transport: TransportConfig,
    /// Accept incoming connections (a server).
    pub accept: bool,
    /// Most simultaneous connections.
    pub max_connections: usize,
    /// How long a handshake cookie stays valid.
    pub cookie_lifetime: Duration,
    /// Seed for connection ids, initial packet numbers and the cookie key. `None`
    /// draws from the OS; a fixed seed makes runs reproducible (the simulator).
    pub seed: Option<u64>,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        Self {
            transport: TransportConfig::default(),
            accept: false,
            max_connections: 65536,
            cookie_lifetime: Duration::from_secs(10),
            seed: None,
        }
    }
}
