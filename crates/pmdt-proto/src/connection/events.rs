//! What a connection tells the application, and why it ended.

use std::io;

use serde::{Deserialize, Serialize};

/// Why a connection ended. Also the error of an operation on a connection that
/// ended ([`crate::WriteError::Closed`], and as an [`io::Error`] through `From`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[non_exhaustive]
pub enum CloseReason {
    /// Both sides finished and every byte was acknowledged.
    #[error("connection closed gracefully")]
    Graceful,
    /// The peer closed (code) before this side finished.
    #[error("connection closed early by the peer (code {0})")]
    PeerClosed(u32),
    /// The peer aborted with this code.
    #[error("connection reset by peer (code {0})")]
    PeerReset(u32),
    /// This side aborted with this code.
    #[error("connection reset locally (code {0})")]
    LocalReset(u32),
    /// Nothing was heard from the peer for the idle timeout.
    #[error("connection timed out: peer silent for the idle timeout")]
    TimedOut,
    /// The handshake never completed (no server answered).
    #[error("peer unreachable: handshake not answered")]
    Unreachable,
    /// The server refused the connection.
    #[error("connection refused by the server")]
    Refused,
}

impl From<CloseReason> for io::Error {
    /// The `io::Error` an application sees on a connection that ended: the kind
    /// sockets use for the same ending, the reason as the inner error.
    fn from(r: CloseReason) -> Self {
        let kind = match r {
            CloseReason::Graceful => io::ErrorKind::NotConnected,
            CloseReason::PeerClosed(_) => io::ErrorKind::BrokenPipe,
            CloseReason::PeerReset(_) => io::ErrorKind::ConnectionReset,
            CloseReason::LocalReset(_) => io::ErrorKind::ConnectionAborted,
            CloseReason::TimedOut => io::ErrorKind::TimedOut,
            CloseReason::Unreachable => io::ErrorKind::HostUnreachable,
            CloseReason::Refused => io::ErrorKind::ConnectionRefused,
        };
        io::Error::new(kind, r)
    }
}

/// Something the application should know about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The handshake completed.
    Connected,
    /// New in-order data can be read.
    Readable,
    /// Send buffer space was freed after being full.
    Writable,
    /// The peer finished its stream and every byte of it has arrived.
    PeerFinished,
    /// A graceful close completed: both sides finished and every byte either
    /// way is acknowledged, so nothing written or read can be lost any more.
    /// The connection stays for its closing period (a few probe timeouts, or
    /// until the peer's Close), to answer a peer that missed our Close, then
    /// ends with [`Event::Closed`]. An application waiting for its close to
    /// complete need not wait for that.
    Completed,
    /// The connection ended.
    Closed(CloseReason),
}

/// Reset code the endpoint uses when refusing a connection.
pub const REFUSED_CODE: u32 = 0xffff_0001;

/// Reset code for a peer that broke the protocol (e.g. acknowledged a packet
/// number that was never sent: an optimistic ack).
pub const PROTOCOL_VIOLATION_CODE: u32 = 0xffff_0002;
