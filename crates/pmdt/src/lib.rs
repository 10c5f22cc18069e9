//! pmdt: a windowed reliable transport over UDP, in the spirit of RMDT (high-speed
//! bulk transfer over lossy, high-latency links).
//!
//! The protocol core is sans-IO, like quinn-proto: [`Endpoint`] and [`Connection`]
//! take datagrams and the current time, and produce datagrams, timeouts and events.
//! They never read a clock or touch a socket. The [`sim`] module runs them over a
//! deterministic simulated network; the runtime (DPDK or kernel UDP) drives them on
//! an I/O core.
//!
//! The wire format is specified in `docs/PROTOCOL.md`.
#![warn(missing_docs)]

pub mod config;
pub mod congestion;
pub mod connection;
pub mod cookie;
pub mod endpoint;
pub mod link;
pub mod pacer;
pub mod range_set;
pub mod recv_buffer;
pub mod rtt;
pub mod rtt_histogram;
pub mod runtime;
pub mod send_buffer;
pub mod sim;
pub mod stats;
pub mod wire;

pub use config::{EndpointConfig, TransportConfig};
pub use congestion::CongestionKind;
pub use connection::{CloseReason, Connection, Event, Side, Transmit, WriteError};
pub use endpoint::{ConnectionHandle, Endpoint};
pub use runtime::{Backend, IoCore, Listener, Runtime, Stream};
pub use stats::{ConnectionStats, EndpointStats};
