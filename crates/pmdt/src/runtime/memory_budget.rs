//! How the runtime divides a link's packet memory among connections: every
//! connection gets an equal share of the receive part (its credit to the peer) and
//! of the send part (its unacknowledged data plus what its writer queued), so memory
//! stays bounded by the pool however many connections there are. The I/O loop
//! applies these shares; tools use [`MemoryBudget`] to tell a user what a pool holds
//! and to refuse settings it cannot hold.

/// How a link's packet pool is divided between the data its connections receive
/// and the data they send. A one-way transfer at a long RTT needs about two
/// bandwidth-delay products on the side it flows from (the data in flight plus
/// what a loss at the head holds back while it is repaired) and as much credit on
/// the side it flows to, and next to nothing the other way (acknowledgements take
/// no storage). Measured through `pmdt-wanem` (1 Gbit/s, 200 ms, 1% loss, the
/// tools' default 65,535-mbuf pools): with both ends splitting evenly the sender
/// could keep 30 MiB unacknowledged, 1.2 BDP, and the transfer waited on it for
/// 8.7 of its 20 s (366 Mbit/s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PoolSplit {
    /// Half for receiving, half for sending (data both ways; the default).
    #[default]
    Both,
    /// Mostly for sending ([`MOSTLY`] of the pool), the rest for receiving.
    Sending,
    /// Mostly for receiving ([`MOSTLY`] of the pool), the rest for sending.
    Receiving,
}

/// The share of the pool the main direction gets in a one-way [`PoolSplit`].
pub const MOSTLY: f64 = 0.85;

impl PoolSplit {
    /// The parts of the pool for received data and for sent data (they add to 1).
    pub fn shares(self) -> (f64, f64) {
        match self {
            PoolSplit::Both => (0.5, 0.5),
            PoolSplit::Sending => (1.0 - MOSTLY, MOSTLY),
            PoolSplit::Receiving => (MOSTLY, 1.0 - MOSTLY),
        }
    }

    /// The bytes of stream data a pool of `pool_buffers` buffers, each carrying
    /// up to `max_payload`, holds for receiving and for sending.
    pub(crate) fn bytes(self, pool_buffers: u64, max_payload: u64) -> (u64, u64) {
        let (recv, send) = self.shares();
        let bytes = pool_buffers as f64 * max_payload as f64;
        ((bytes * recv) as u64, (bytes * send) as u64)
    }
}

/// Of the packet pool, the part application writes leave free for receiving
/// (below the receive part of every [`PoolSplit`]).
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
    /// `max_payload` bytes of stream data, among `connections` connections, the
    /// pool split evenly between receiving and sending.
    pub fn of_pool(pool_buffers: u64, max_payload: u64, connections: u64) -> Self {
        Self::of_split_pool(pool_buffers, max_payload, connections, PoolSplit::Both)
    }

    /// As [`of_pool`](Self::of_pool), the pool split as `split` says.
    pub fn of_split_pool(
        pool_buffers: u64,
        max_payload: u64,
        connections: u64,
        split: PoolSplit,
    ) -> Self {
        let (recv_total, send_total) = split.bytes(pool_buffers, max_payload);
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

    #[test]
    fn a_one_way_split_gives_the_main_direction_most_of_the_pool() {
        let both = MemoryBudget::of_pool(65535, 1432, 1);
        let send = MemoryBudget::of_split_pool(65535, 1432, 1, PoolSplit::Sending);
        let recv = MemoryBudget::of_split_pool(65535, 1432, 1, PoolSplit::Receiving);
        assert_eq!(send.recv_credit, (65535.0 * 1432.0 * (1.0 - MOSTLY)) as u64);
        assert_eq!(recv.recv_credit, (65535.0 * 1432.0 * MOSTLY) as u64);
        // A sender keeps over twice what an even split keeps unacknowledged.
        assert!(send.send_storage > 2 * both.send_storage);
        assert!(recv.recv_credit > both.recv_credit * 3 / 2);
        // The receive part always covers what writes leave free for receiving.
        for split in [PoolSplit::Both, PoolSplit::Sending, PoolSplit::Receiving] {
            assert!(split.shares().0 > WRITE_RESERVE_SHARE);
            assert!((split.shares().0 + split.shares().1 - 1.0).abs() < 1e-12);
        }
    }
}
