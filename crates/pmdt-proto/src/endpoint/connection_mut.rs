//! Mutable access to one connection of an endpoint, rescheduling it afterwards.

use std::ops::{Deref, DerefMut};

use super::Endpoint;
use crate::connection::Connection;
use crate::recv_buffer::RecvStorage;
use crate::send_buffer::SendStorage;

/// Mutable access to a connection of an [`Endpoint`], from
/// [`Endpoint::connection_mut`]. Dereferences to the [`Connection`]. Once it was
/// used mutably (a write, read, finish, close, reset, ...), dropping it re-syncs
/// the endpoint's view of the connection: its events are queued, its timer
/// rescheduled, and it is considered for [`Endpoint::poll_transmit`] again. There
/// is nothing to call afterwards.
pub struct ConnectionMut<'a, S: SendStorage, R: RecvStorage> {
    endpoint: &'a mut Endpoint<S, R>,
    index: usize,
    used: bool,
}

impl<'a, S: SendStorage, R: RecvStorage> ConnectionMut<'a, S, R> {
    /// Access to the connection in slot `index`, which must be live.
    pub(super) fn new(endpoint: &'a mut Endpoint<S, R>, index: usize) -> Self {
        debug_assert!(endpoint.connection_at(index).is_some());
        Self {
            endpoint,
            index,
            used: false,
        }
    }
}

impl<S: SendStorage, R: RecvStorage> Deref for ConnectionMut<'_, S, R> {
    type Target = Connection<S, R>;

    fn deref(&self) -> &Connection<S, R> {
        self.endpoint
            .connection_at(self.index)
            .expect("a borrowed connection keeps its slot")
    }
}

impl<S: SendStorage, R: RecvStorage> DerefMut for ConnectionMut<'_, S, R> {
    fn deref_mut(&mut self) -> &mut Connection<S, R> {
        self.used = true;
        self.endpoint
            .connection_at_mut(self.index)
            .expect("a borrowed connection keeps its slot")
    }
}

impl<S: SendStorage, R: RecvStorage> Drop for ConnectionMut<'_, S, R> {
    fn drop(&mut self) {
        if self.used {
            self.endpoint.resync(self.index);
        }
    }
}
