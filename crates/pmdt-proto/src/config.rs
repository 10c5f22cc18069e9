//! Transport and endpoint configuration.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::congestion::CongestionKind;
use crate::wire::MIN_MAX_DATAGRAM;

/// Per-connection protocol options. Start from [`TransportConfig::default`] and
/// set the fields to change (the struct may gain fields, so it cannot be built
/// with a literal outside this crate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
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
    /// autotuning), more while a hole at the head outlasts that (by the hole's
    /// age, until it fills), up to `max_window_bytes`.
    pub recv_buffer: u64,
    /// Per-connection memory limit: the most the send buffer, the receive buffer
    /// (credit) and the packet window (in bytes) may each grow to. Set it to the
    /// initial buffer sizes to turn autotuning off.
    pub max_window_bytes: u64,
    /// Congestion/rate control.
    pub congestion: CongestionKind,
    /// How a connection finds the path's rate at its start.
    pub startup: Startup,
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
    /// Written-but-unsent data a connection takes beyond one congestion window,
    /// as time at its pacing rate: the slack that keeps a sender supplied while
    /// its application is off the core. None: the runtime decides (20 ms with an
    /// I/O core of its own, where the writer is another thread; none in
    /// run-to-completion, where the writer is the loop's own thread and data
    /// written far ahead is cold in the cache by the time it is sent).
    pub unsent_time: Option<Duration>,
}

/// How a connection finds the path's rate at its start (the BBR controller's
/// Startup; the other controllers start from their initial window either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Startup {
    /// Double the rate each round trip from an initial window of 10 datagrams,
    /// the initial window paced over the handshake's RTT (BBR's Startup, TCP's
    /// slow start): 13 round trips to fill 1 Gbit/s × 200 ms.
    #[default]
    Doubling,
    /// Send the initial window as one burst, read the bottleneck's rate from the
    /// spacing of its acknowledgments (packet-train dispersion), send the next
    /// round at that rate and go on doubling from what it delivered: about four
    /// round trips to fill 1 Gbit/s × 200 ms. For paths a transfer mostly has to
    /// itself: the train sees the bottleneck's capacity, not what other flows
    /// leave, and a loss-based flow (CUBIC) starting beside it, its slow start
    /// cut short by the queue this one fills at once, keeps a small share (the
    /// simulator's `sim_adapt_cells` with `SIM_STARTUP=train`: 2.5 % and 15.5 %
    /// of 1 Gbit/s × 40 ms through a 1 and a 5 MiB queue, against 47.5 % and
    /// 50.0 % beside a doubling start). BBR flows that start together share
    /// as evenly as from doubling starts. Only the BBR controller uses it.
    FromInitialTrain,
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
            startup: Startup::Doubling,
            pacing: true,
            pacing_burst_packets: 16,
            initial_rtt: Duration::from_millis(100),
            max_ack_delay: Duration::from_millis(1),
            ack_every: 2,
            packet_threshold: 3,
            idle_timeout: Duration::from_secs(10),
            keepalive: Some(Duration::from_secs(2)),
            unsent_time: None,
        }
    }
}

/// Builder-style setters, one per field: `with_<field>(value)` returns the
/// configuration with that field set (the structs are `#[non_exhaustive]`, so other
/// crates cannot use struct literals).
macro_rules! with_setters {
    ($ty:ty { $($with:ident => $field:ident: $t:ty,)* }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
                #[must_use]
                pub fn $with(mut self, value: $t) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

with_setters!(TransportConfig {
    with_window_packets => window_packets: u64,
    with_max_datagram => max_datagram: u16,
    with_send_buffer => send_buffer: u64,
    with_recv_buffer => recv_buffer: u64,
    with_max_window_bytes => max_window_bytes: u64,
    with_congestion => congestion: CongestionKind,
    with_startup => startup: Startup,
    with_pacing => pacing: bool,
    with_pacing_burst_packets => pacing_burst_packets: u64,
    with_initial_rtt => initial_rtt: Duration,
    with_max_ack_delay => max_ack_delay: Duration,
    with_ack_every => ack_every: u32,
    with_packet_threshold => packet_threshold: u64,
    with_idle_timeout => idle_timeout: Duration,
    with_keepalive => keepalive: Option<Duration>,
    with_unsent_time => unsent_time: Option<Duration>,
});

with_setters!(EndpointConfig {
    with_transport => transport: TransportConfig,
    with_accept => accept: bool,
    with_max_connections => max_connections: usize,
    with_cookie_lifetime => cookie_lifetime: Duration,
    with_address_validation => address_validation: AddressValidation,
    with_seed => seed: Option<u64>,
});

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
    /// Whether a connection sends its initial window as a train and starts
    /// from the rate it measures: [`Startup::FromInitialTrain`] with the BBR
    /// controller (the others start from their initial window either way).
    pub fn starts_from_train(&self) -> bool {
        self.startup == Startup::FromInitialTrain && self.congestion == CongestionKind::Bbr
    }

    /// Packet window cap that `max_window_bytes` allows.
    pub fn max_window_packets(&self) -> u64 {
        (self.max_window_bytes / self.max_datagram.max(1) as u64).max(self.window_packets)
    }

    /// Largest data payload per packet.
    pub fn max_payload(&self) -> u64 {
        self.max_datagram as u64 - crate::wire::DATA_HEADER_LEN as u64
    }

    /// Checks values that would make the protocol misbehave.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_datagram < MIN_MAX_DATAGRAM {
            return Err(ConfigError::MaxDatagramTooSmall(self.max_datagram));
        }
        if self.window_packets == 0 {
            return Err(ConfigError::ZeroWindow);
        }
        if self.send_buffer < self.max_payload() || self.recv_buffer < self.max_payload() {
            return Err(ConfigError::BufferTooSmall);
        }
        if self.ack_every == 0 || self.packet_threshold == 0 {
            return Err(ConfigError::ZeroAckThreshold);
        }
        if let CongestionKind::Paced { rate_bps } = self.congestion {
            if rate_bps < MIN_PACED_RATE_BPS {
                return Err(ConfigError::PacedRateTooLow(rate_bps));
            }
        }
        Ok(())
    }
}

/// Slowest target rate of [`CongestionKind::Paced`], bit/s (one byte per millisecond).
pub const MIN_PACED_RATE_BPS: u64 = 8000;

/// A configuration value that would make the protocol misbehave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `max_datagram` leaves no room for a useful payload.
    #[error("max_datagram {0} is too small (at least {MIN_MAX_DATAGRAM})")]
    MaxDatagramTooSmall(u16),
    /// `window_packets` is 0.
    #[error("window_packets must be at least 1")]
    ZeroWindow,
    /// A send or receive buffer holds less than one packet's payload.
    #[error("buffers must hold at least one packet")]
    BufferTooSmall,
    /// `ack_every` or `packet_threshold` is 0.
    #[error("ack_every and packet_threshold must be at least 1")]
    ZeroAckThreshold,
    /// The paced rate (bit/s) is below [`MIN_PACED_RATE_BPS`].
    #[error("paced rate {0} bit/s is below {MIN_PACED_RATE_BPS} bit/s")]
    PacedRateTooLow(u64),
}

/// When a server makes a client prove it receives at its address (a Retry with
/// a stateless cookie the client must return, as QUIC's Retry, RFC 9000 §8.1.2)
/// before it keeps any state for the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum AddressValidation {
    /// Every handshake: one more round trip per connection, and a flood of
    /// Inits from spoofed addresses costs the server no state at all.
    Always,
    /// Only while `max_unproven` accepted connections have not yet proven
    /// their address (by a packet sent to the connection id the server's
    /// Accept carried): a handshake takes one round trip, and a flood of
    /// spoofed Inits holds at most `max_unproven` connections (until their
    /// idle timeout) before every further client gets a Retry.
    WhenBusy {
        /// Accepted connections whose address is not proven yet, at most.
        max_unproven: usize,
    },
}

impl Default for AddressValidation {
    fn default() -> Self {
        AddressValidation::WhenBusy {
            max_unproven: DEFAULT_MAX_UNPROVEN,
        }
    }
}

/// Default bound on accepted connections whose address is not proven yet. Their
/// buffers are reserved but untouched (the storage grows as data arrives), so a
/// flood costs little resident memory.
pub const DEFAULT_MAX_UNPROVEN: usize = 32;

/// Endpoint options. Start from [`EndpointConfig::default`] (a client) or
/// [`EndpointConfig::server`] and set the fields to change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct EndpointConfig {
    /// Options for every connection of the endpoint.
    pub transport: TransportConfig,
    /// Accept incoming connections (a server).
    pub accept: bool,
    /// Most simultaneous connections.
    pub max_connections: usize,
    /// How long a handshake cookie stays valid.
    pub cookie_lifetime: Duration,
    /// When a client must prove its address (a Retry round trip) before the
    /// server keeps state for it.
    pub address_validation: AddressValidation,
    /// Seed for connection ids, initial packet numbers and the cookie key. `None`
    /// draws from the OS; a fixed seed makes runs reproducible (the simulator).
    pub seed: Option<u64>,
}

impl EndpointConfig {
    /// A server: accepts incoming connections with these transport options.
    pub fn server(transport: TransportConfig) -> Self {
        Self {
            transport,
            accept: true,
            ..Self::default()
        }
    }

    /// A client: opens connections with these transport options.
    pub fn client(transport: TransportConfig) -> Self {
        Self {
            transport,
            ..Self::default()
        }
    }
}

impl Default for EndpointConfig {
    fn default() -> Self {
        Self {
            transport: TransportConfig::default(),
            accept: false,
            max_connections: 65536,
            cookie_lifetime: Duration::from_secs(10),
            address_validation: AddressValidation::default(),
            seed: None,
        }
    }
}
