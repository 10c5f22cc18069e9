//! What an endpoint hands its driver to send.

use crate::connection::Transmit;

use super::ConnectionHandle;

/// A datagram an [`Endpoint`](super::Endpoint) wrote into the driver's buffer, from
/// [`Endpoint::poll_transmit`](super::Endpoint::poll_transmit) or
/// [`Endpoint::poll_transmit_header`](super::Endpoint::poll_transmit_header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointTransmit {
    /// A connection's datagram. With `poll_transmit_header`, the driver appends
    /// the payload ([`Transmit::payload`]) from the connection's send storage.
    Connection(ConnectionHandle, Transmit),
    /// A stateless answer to a handshake (a Retry carrying a cookie, or a Reset
    /// refusing the connection): complete in the buffer, no payload.
    Stateless(Transmit),
}

impl EndpointTransmit {
    /// Where to send it, its length and layout.
    pub fn transmit(&self) -> &Transmit {
        match self {
            Self::Connection(_, t) | Self::Stateless(t) => t,
        }
    }

    /// The connection that sent it (`None` for a stateless answer).
    pub fn connection(&self) -> Option<ConnectionHandle> {
        match self {
            Self::Connection(h, _) => Some(*h),
            Self::Stateless(_) => None,
        }
    }
}
