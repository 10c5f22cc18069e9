//! pmdt-proto: the sans-IO protocol core of pmdt, a windowed reliable transport in
//! the spirit of RMDT (high-speed bulk transfer over lossy, high-latency links).
//!
//! Like quinn-proto, nothing here performs I/O: [`Endpoint`] and [`Connection`] take
//! datagrams and the current time, and produce datagrams, timeouts and events. They
//! never read a clock or touch a socket. The `pmdt` crate drives them: its runtime
//! (DPDK or kernel UDP) on an I/O core, its simulator over a deterministic network.
//!
//! The wire format is specified in `docs/PROTOCOL.md`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
pub mod congestion;
pub mod connection;
pub mod cookie;
pub mod endpoint;
pub mod pacer;
pub mod range_set;
pub mod recv_buffer;
pub mod rtt;
pub mod rtt_histogram;
pub mod send_buffer;
pub mod stats;
pub mod wire;

pub use config::{EndpointConfig, TransportConfig};
pub use congestion::CongestionKind;
pub use connection::{CloseReason, Connection, Event, Side, Transmit, WriteError};
pub use endpoint::{ConnectionHandle, Endpoint};
pub use stats::{ConnectionStats, EndpointStats};
