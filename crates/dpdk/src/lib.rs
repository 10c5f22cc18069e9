//! A safe, owned wrapper over DPDK 22.11.
//!
//! * [`Eal`]: typed builder, init at most once per process, ordered shutdown.
//! * [`Mempool`] and [`Mbuf`]: owned packet buffers that free themselves, with
//!   refcount-based [`Mbuf::clone_ref`] for retransmission copies.
//! * [`MbufBatch`]: a fixed-capacity burst whose `Drop` frees what it holds.
//! * [`Port`], [`RxQueue`], [`TxQueue`]: configuration, info, stats; each queue handed
//!   out once and movable to the lcore that polls it.
//! * [`ring`]: `rte_ring` carrying owned values (SP/SC halves or MP/MC).
//! * [`lcore`]: launch closures on worker lcores, lcore ids, TSC.
//! * [`register_current_thread`]: an lcore id (and mempool caches) for a thread
//!   the EAL did not start.
//! * [`log`]: DPDK's own log lines as `tracing` events.
//!
//! ```no_run
//! use std::sync::Arc;
//! use dpdk::{Eal, Mempool, MbufBatch, Port, PortConfig};
//! let eal = Eal::builder().no_pci(true).vdev("net_null0").init()?;
//! let pool = Arc::new(Mempool::with_size(&eal, 4095)?);
//! let mut port = Port::open_by_name(&eal, "net_null0")?;
//! let (mut rx, _tx) = port.configure(&PortConfig::default(), &pool)?;
//! port.start()?;
//! let mut batch = MbufBatch::<32>::new();
//! let n = rx[0].rx_burst(&mut batch);
//! # let _ = n;
//! # Ok::<(), dpdk::Error>(())
//! ```
#![warn(missing_docs)]

mod batch;
mod control_threads;
mod dynfield;
mod eal;
mod error;
mod hugepages;
mod interrupt_thread;
pub mod lcore;
pub mod log;
mod mbuf;
mod mempool;
mod port;
mod registered_thread;
pub mod ring;
pub mod telemetry;

pub use batch::{Drain, MbufBatch, DEFAULT_BURST};
pub use dynfield::DynFieldU32;
pub use eal::{Eal, EalBuilder, MemoryMode};
pub use error::{strerror, Error, ErrorKind, Result};
pub use hugepages::HugepageInfo;
pub use mbuf::{Mbuf, RxChecksum, Segments, TxChecksumOffload};
pub use mempool::{Mempool, MempoolConfig, PoolUsage};
pub use port::{
    LinkStatus, MacAddr, Offloads, Port, PortConfig, PortInfo, PortStats, RxQueue, TxQueue,
};
pub use registered_thread::{
    flush_registered_thread_caches, register_current_thread, RegisteredThread,
};

/// The raw bindings, for what the safe API does not cover.
pub use dpdk_sys as sys;
