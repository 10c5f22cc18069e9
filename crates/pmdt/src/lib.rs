//! pmdt: a windowed reliable transport over UDP, in the spirit of RMDT (high-speed
//! bulk transfer over lossy, high-latency links).
//!
//! The protocol core is sans-IO, like quinn-proto, and lives in its own crate,
//! [`pmdt_proto`] (re-exported as [`proto`], its main types at this crate's root):
//! an [`Endpoint`] takes datagrams and the current time, and produces datagrams,
//! timeouts and events. It never reads a clock or touches a socket. This crate
//! drives it: the [`sim`] module over a deterministic simulated network, the
//! [`runtime`] (DPDK or kernel UDP) on an I/O core, through the [`link`]s.
//!
//! The wire format is specified in `docs/PROTOCOL.md`; how data flows through
//! the crates, in `ARCHITECTURE.md`.
//!
//! # Cargo features
//!
//! - `dpdk` (default): the DPDK backend, `link::dpdk_port` and
//!   `runtime::Backend::Dpdk`, through the `dpdk` crate; building it needs DPDK
//!   22.11 (`pkg-config libdpdk`) and clang for its bindings. Without it
//!   (`default-features = false`) the transport, the simulator and the runtime build
//!   with the kernel UDP and in-memory links only, on any Linux machine.
#![warn(missing_docs)]

pub mod link;
pub mod runtime;
pub mod sim;

pub use pmdt_proto as proto;
pub use pmdt_proto::{
    wire, AddressValidation, CloseReason, ConfigError, CongestionKind, ConnectOptions, Connection,
    ConnectionHandle, ConnectionStats, Endpoint, EndpointConfig, EndpointStats, Event, Side,
    Startup, Transmit, TransportConfig, WriteError,
};
pub use runtime::{Backend, IoCore, Listener, Runtime, Stream};
