//! Runtime statistics: one serde snapshot per I/O loop, published every 100 ms
//! and when a transfer begins or ends.

use serde::{Deserialize, Serialize};

use crate::link::LinkStats;
use load_estimator::LoadReport;
use pmdt_proto::{ConnectionStats, EndpointStats};

/// A snapshot of one I/O loop.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LoopStats {
    /// What the loop drives (link description).
    pub link_name: String,
    /// Link counters.
    pub link: LinkStats,
    /// Endpoint counters.
    pub endpoint: EndpointStats,
    /// Load of the I/O core: the load estimator's report over the time since the
    /// report before. A report closes every statistics period and when a
    /// transfer begins (the first connection opens on an idle loop) or ends (the
    /// last one closes); unmeasured loops ([`crate::runtime::Session`]) leave it
    /// at its default.
    pub load: LoadReport,
    /// What closed `load`'s period.
    pub load_ended_by: LoadPeriodEnd,
    /// The report that closed when the loop's last transfer ended: it covers the
    /// transfer since the report before (all of it when it lasted under one
    /// period). Later reports replace `load`; this one stays until the next
    /// transfer ends, so a reader that looks after a transfer still finds it.
    pub last_transfer_load: Option<LoadReport>,
    /// Live connections.
    pub connections: usize,
    /// Loop iterations.
    pub iterations: u64,
    /// Times the idle loop slept (napped, or parked on its wake path).
    pub idle_sleeps: u64,
    /// Of those, the times it parked until an application, its link or its
    /// next timer woke it (the wake path: a link with a descriptor to wait on,
    /// such as a kernel UDP socket); the rest were naps of at most the idle
    /// policy's `max_sleep`.
    #[serde(default)]
    pub idle_parks: u64,
    /// Times an application thread writing on one of the loop's streams found
    /// the packet pool down to the reserve kept for receiving and parked until
    /// the loop freed memory (pipeline mode; see [`LoopStats::memory_wakes`]).
    #[serde(default)]
    pub memory_waits: u64,
    /// Times the loop woke such a writer as acknowledgements freed buffers.
    #[serde(default)]
    pub memory_wakes: u64,
    /// Times the loop woke a parked application thread, for any reason: data
    /// to read, room to write, memory, a handshake or a close (pipeline mode;
    /// in run-to-completion mode the waiting threads poll instead of parking).
    /// Each is a system call on the loop's core and a context switch on the
    /// woken thread's.
    #[serde(default)]
    pub thread_wakes: u64,
    /// Seconds since the loop started.
    pub uptime_s: f64,
    /// Live connections (the first 256).
    pub connection_list: Vec<ConnectionEntry>,
    /// Stream bytes acknowledged by peers, over every connection this loop ran
    /// (closed ones included).
    pub stream_bytes_acked: u64,
    /// Stream bytes received in order, over every connection this loop ran.
    pub stream_bytes_received: u64,
}

/// What closed a load report's period (see [`LoopStats::load`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LoadPeriodEnd {
    /// The statistics period (100 ms) passed.
    #[default]
    Period,
    /// A transfer began: the report covers the time before it, when no
    /// connection was open (a server's stateless first handshake exchange aside).
    /// The statistics period restarts.
    TransferStarted,
    /// A transfer ended: the report covers it since the report before (all of
    /// it when it lasted under one period).
    TransferEnded,
}

/// A snapshot of the whole runtime.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RuntimeStats {
    /// One entry per I/O loop.
    pub loops: Vec<LoopStats>,
}

/// One connection's figures, as listed by telemetry and the binaries.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConnectionEntry {
    /// Peer address.
    pub peer: String,
    /// Counters.
    pub stats: ConnectionStats,
}
