//! pmdt-proto: the sans-IO protocol core of pmdt, a windowed reliable transport in
//! the spirit of RMDT (high-speed bulk transfer over lossy, high-latency links).
//!
//! Like quinn-proto, nothing here performs I/O: an [`Endpoint`] takes datagrams and
//! the current time, and produces datagrams ([`Endpoint::poll_transmit`]), the next
//! timeout and [`Event`]s. It never reads a clock or touches a socket. The `pmdt`
//! crate drives it: its runtime (DPDK or kernel UDP) on an I/O core, its simulator
//! over a deterministic network.
//!
//! Stream bytes live in storage the driver chooses: [`SendStorage`] and
//! [`RecvStorage`], by default the copying [`ByteRing`] and [`RecvRing`]; a runtime
//! can keep its own packet memory (mbufs) instead.
//!
//! The wire format ([`wire`]) is specified in `docs/PROTOCOL.md`.
//!
//! # Cargo features
//!
//! - `pair` (off by default): the `pair` module, two endpoints on a virtual clock
//!   joined by a filtered fixed-delay path: the harness this crate's tests, its fuzz
//!   targets and experiments drive. Not needed to use the protocol.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod congestion;
mod connect_options;
mod connection;
mod cookie;
mod endpoint;
mod linger;
mod offset_ring;
mod pacer;
#[cfg(any(test, feature = "pair"))]
pub mod pair;
mod range_set;
mod recv_buffer;
mod rtt;
mod rtt_histogram;
mod saved_path;
mod send_buffer;
mod stats;
pub mod wire;

pub use config::{
    AddressValidation, ConfigError, EndpointConfig, Startup, TransportConfig, DEFAULT_MAX_UNPROVEN,
    DEFAULT_MAX_WINDOW_BYTES, MIN_PACED_RATE_BPS, RECV_WINDOW_PER_RTT, SEND_BUFFER_WINDOW_FACTOR,
};
pub use congestion::CongestionKind;
pub use connect_options::ConnectOptions;
pub use connection::{
    CloseReason, Connection, Event, PayloadRef, Side, StorageWrite, Transmit, WriteError,
    PROTOCOL_VIOLATION_CODE, REFUSED_CODE,
};
pub use endpoint::{ConnectionHandle, ConnectionMut, Endpoint, EndpointTransmit, StorageFactory};
pub use recv_buffer::{credit_of_memory, RecvRing, RecvStorage};
pub use rtt_histogram::RttHistogram;
pub use saved_path::{ResumeOutcome, SavedPath};
pub use send_buffer::{ByteRing, SendStorage};
pub use stats::{ConnectionStats, ControllerState, EndpointStats, QueueVerdicts};
