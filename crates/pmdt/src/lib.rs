//! pmdt: a windowed reliable transport over UDP, in the spirit of RMDT (high-speed
//! bulk transfer over lossy, high-latency links).
//!
//! The protocol core is sans-IO, like quinn-proto, and lives in its own crate,
//! [`pmdt_proto`] (re-exported here as [`proto`], its public surface at the root):
//! [`Endpoint`] and [`Connection`] take datagrams and the current time, and produce
//! datagrams, timeouts and events. They never read a clock or touch a socket. This
//! crate drives them: the [`sim`] module over a deterministic simulated network, the
//! [`runtime`] (DPDK or kernel UDP) on an I/O core, through the [`link`]s.
//!
//! The wire format is specified in `docs/PROTOCOL.md`.
#![warn(missing_docs)]

pub mod link;
pub mod runtime;
pub mod sim;

pub use pmdt_proto as proto;
pub use pmdt_proto::{
    config, congestion, connection, endpoint, recv_buffer, rtt_histogram, send_buffer, stats, wire,
};

pub use config::{EndpointConfig, TransportConfig};
pub use congestion::CongestionKind;
pub use connection::{CloseReason, Connection, Event, Side, Transmit, WriteError};
pub use endpoint::{ConnectionHandle, Endpoint};
pub use runtime::{Backend, IoCore, Listener, Runtime, Stream};
pub use stats::{ConnectionStats, EndpointStats};
