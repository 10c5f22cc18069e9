//! What a connection tells the application, and why it ended.

use serde::{Deserialize, Serialize};

/// Why a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CloseReason {
    /// Both sides finished and every byte was acknowledged.
    Graceful,
    /// The peer closed (code) before this side finished.
    PeerClosed(u32),
    /// The peer aborted with this code.
    PeerReset(u32),
    /// This side aborted with this code.
    LocalReset(u32),
    /// Nothing was heard from the peer for the idle timeout.
    TimedOut,
    /// The handshake never completed (no server answered).
    Unreachable,
    /// The server refused the connection.
    Refused,
}

impl std::fmt::Display for CloseReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Graceful => write!(f, "closed gracefully"),
            Self::PeerClosed(c) => write!(f, "peer closed early (code {c})"),
            Self::PeerReset(c) => write!(f, "reset by peer (code {c})"),
            Self::LocalReset(c) => write!(f, "reset locally (code {c})"),
            Self::TimedOut => write!(f, "timed out: peer silent for the idle timeout"),
            Self::Unreachable => write!(f, "peer unreachable: handshake not answered"),
            Self::Refused => write!(f, "connection refused by the server"),
        }
    }
}

/// Something the application should know about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed.
    Connected,
    /// New in-order data can be read.
    Readable,
    /// Send buffer space was freed after being full.
    Writable,
    /// The peer finished its stream and every byte of it has arrived.
    PeerFinished,
    /// The connection ended.
    Closed(CloseReason),
}

/// Reset code the endpoint uses when refusing a connection.
pub const REFUSED_CODE: u32 = 0xffff_0001;

/// Reset code for a peer that broke the protocol (e.g. acknowledged a packet
/// number that was never sent: an optimistic ack).
pub const PROTOCOL_VIOLATION_CODE: u32 = 0xffff_0002;
