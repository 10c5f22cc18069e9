//! How the runtime divides a link's packet memory among connections: every
//! connection gets an equal share of the receive part (its credit to the peer) and
//! of the send part (its unacknowledged data plus what its writer queued), so memory
//! stays bounded by the pool however many connections there are. The I/O loop
//! applies these shares; tools use [`MemoryBudget`] to tell a user what a pool holds
//! and to refuse settings it cannot hold.

/// Of the packet pool, the part every connection's received data shares: credit
/// not yet used plus data handed to its reader and not read yet, never
/// overcommitted (see `super::recv_memory`). The rest: the device's receive
/// ring, acks and handshakes, the application's writes and their reserve.
pub(crate) const RECV_POOL_SHARE: f64 = 0.5;
/// Of the packet pool, the part every connection's unacknowledged data (send
/// storage and the writer's ring) shares.
pub(crate) const SEND_POOL_SHARE: f64 = 0.5;
/// Of the packet pool, the part application writes leave free for receiving.
pub(crate) const WRITE_RESERVE_SHARE: f64 = 0.125;
/// Delivery to a reader runs at least this far ahead of its reads (a few
/// datagrams, so a reader always finds data however small its share).
pub(crate) const READ_AHEAD_MIN: u64 = 64 * 1024;
/// ... and at most this far: beyond it the reader is the bottleneck anyway.
pub(crate) const READ_AHEAD_MAX: u64 = 16 << 20;

/// What each connection may hold when `connections` share a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    /// Receive credit (bytes the peer may send beyond what was delivered in order)
    /// when the reader keeps up: what its reader has not read yet counts against it.
    pub recv_credit: u64,
    /// Unacknowledged data the connection keeps for retransmission (its send
    /// window can be no larger).
    pub send_storage: u64,
    /// Data a writer may queue ahead of its connection.
    pub write_ahead: u64,
}

impl MemoryBudget {
    /// The shares of a pool of `pool_buffers` packet buffers, each carrying up to
    /// `max_payload` bytes of stream data, among `connections` connections.
    pub fn of_pool(pool_buffers: u64, max_payload: u64, connections: u64) -> Self {
        let recv_total = (pool_buffers as f64 * RECV_POOL_SHARE * max_payload as f64) as u64;
        let send_total = (recv_total as f64 * SEND_POOL_SHARE / RECV_POOL_SHARE) as u64;
        let n = connections.max(1);
        let send_share = send_total / n;
        let write_ahead = write_ahead(send_share);
        Self {
            recv_credit: recv_total / n,
            send_storage: send_storage(send_share, write_ahead),
            write_ahead,
        }
    }

    /// The most data in flight (unacknowledged) a connection can keep: the smaller
    /// of its send storage and the peer's credit when both ends use this budget.
    pub fn max_in_flight(&self) -> u64 {
        self.send_storage.min(self.recv_credit)
    }
}

/// How much data a writer may queue in its ring beyond what its connection took,
/// given the connection's send share.
pub(crate) fn write_ahead(send_share: u64) -> u64 {
    (send_share / 2).clamp(READ_AHEAD_MIN, READ_AHEAD_MAX)
}

/// What the connection's send storage may hold, given its send share.
pub(crate) fn send_storage(send_share: u64, write_ahead: u64) -> u64 {
    send_share.saturating_sub(write_ahead).max(READ_AHEAD_MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_connection_gets_the_whole_share() {
        // The tools' default pool at MTU 1500.
        let b = MemoryBudget::of_pool(65535, 1432, 1);
        assert_eq!(b.recv_credit, (65535.0 * 0.5 * 1432.0) as u64);
        assert_eq!(b.write_ahead, READ_AHEAD_MAX);
        assert_eq!(b.send_storage, b.recv_credit - READ_AHEAD_MAX);
        assert_eq!(b.max_in_flight(), b.send_storage);
    }

    #[test]
    fn shares_shrink_with_connections_and_stay_usable() {
        let one = MemoryBudget::of_pool(65535, 1432, 1);
        let many = MemoryBudget::of_pool(65535, 1432, 1000);
        assert_eq!(many.recv_credit, one.recv_credit / 1000);
        assert!(many.send_storage >= READ_AHEAD_MIN);
        assert!(many.write_ahead >= READ_AHEAD_MIN);
        assert_eq!(MemoryBudget::of_pool(65535, 1432, 0), one);
    }
}
