//! What an impairment did: the counters of [`super::ImpairModel`].

use serde::{Deserialize, Serialize};

use pmdt_proto::RttHistogram;

/// What happened to the datagrams offered to an impairment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImpairStats {
    /// Datagrams offered.
    pub offered: u64,
    /// Copies delivered (duplicates included).
    pub delivered: u64,
    /// Lost to random or burst loss.
    pub lost: u64,
    /// Dropped by the full bottleneck queue.
    pub queue_drops: u64,
    /// Dropped for exceeding the MTU.
    pub mtu_drops: u64,
    /// Copies held back out of order.
    pub reordered: u64,
    /// Datagrams duplicated.
    pub duplicated: u64,
    /// Copies corrupted (one bit flipped).
    pub corrupted: u64,
    /// Corrupted copies dropped as the receiver's UDP checksum would drop them.
    pub checksum_drops: u64,
    /// Time each datagram that entered the bottleneck queue waited there, µs
    /// (rate-limited paths only).
    pub queue_delay_us: RttHistogram,
    /// Largest bottleneck queue seen, bytes.
    pub max_queue_bytes: u64,
}
