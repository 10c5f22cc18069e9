//! Packet-buffer pools (`rte_pktmbuf_pool_create`).

use std::ffi::CString;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::batch::MbufBatch;
use crate::eal::Eal;
use crate::error::{Error, ErrorKind, Result};
use crate::mbuf::Mbuf;

static POOL_SEQ: AtomicU32 = AtomicU32::new(0);

/// Every pool created in this process. A dropped pool stays here (its memory is not
/// freed while the EAL runs: an mbuf free on another lcore may still be writing to
/// it even when the pool looks full) until EAL teardown frees it.
static POOLS: Mutex<Vec<PoolRecord>> = Mutex::new(Vec::new());

struct PoolRecord {
    ptr: *mut dpdk_sys::rte_mempool,
    name: String,
    size: u32,
    /// The configuration it was made with, when its name was generated (such a
    /// pool, once dropped and full, is handed to the next `Mempool::new` asking for
    /// the same configuration instead of holding memory until teardown).
    reusable: Option<MempoolConfig>,
    dropped: bool,
}

// SAFETY: the pointer is only used for thread-safe DPDK queries and, at EAL
// teardown, to free the pool.
unsafe impl Send for PoolRecord {}

fn pools() -> MutexGuard<'static, Vec<PoolRecord>> {
    POOLS.lock().unwrap_or_else(|e| e.into_inner())
}

/// How full one mempool is (see [`crate::Eal::mempool_usage`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolUsage {
    /// Pool name.
    pub name: String,
    /// Number of mbufs.
    pub capacity: u32,
    /// Mbufs allocated now (0 when every mbuf is back).
    pub in_use: u32,
    /// Whether the [`Mempool`] handle was dropped (memory kept until EAL teardown).
    pub dropped: bool,
}

/// Usage of every pool created so far (the EAL is running: the caller holds it).
pub(crate) fn usage() -> Vec<PoolUsage> {
    pools()
        .iter()
        .map(|r| PoolUsage {
            name: r.name.clone(),
            capacity: r.size,
            // SAFETY: the pool is not freed while the EAL runs.
            in_use: unsafe { dpdk_sys::rte_mempool_in_use_count(r.ptr) },
            dropped: r.dropped,
        })
        .collect()
}

/// At EAL teardown: frees every pool (all were dropped: each handle held the EAL).
/// Returns false, freeing nothing, when some pool still has mbufs out.
pub(crate) fn free_dropped_pools() -> bool {
    let mut list = pools();
    // SAFETY: pools are valid until freed below.
    let busy: Vec<(String, u32)> = list
        .iter()
        .map(|r| {
            (r.name.clone(), unsafe {
                dpdk_sys::rte_mempool_in_use_count(r.ptr)
            })
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    if !busy.is_empty() {
        tracing::warn!(?busy, "mempools with mbufs still out at EAL teardown");
        return false;
    }
    for r in list.drain(..) {
        debug_assert!(r.dropped);
        // SAFETY: no handle and no mbuf of this pool is left, the EAL is still up.
        unsafe { dpdk_sys::rte_mempool_free(r.ptr) };
    }
    true
}

/// Parameters of a packet-buffer pool.
#[derive(Debug, Clone)]
pub struct MempoolConfig {
    /// Pool name (unique in the process); generated when `None`.
    pub name: Option<String>,
    /// Number of mbufs (a power of two minus one is most memory-efficient).
    pub size: u32,
    /// Per-lcore cache size (0 disables; at most 512 and `size / 1.5`).
    pub cache_size: u32,
    /// Bytes of data room per mbuf including `RTE_PKTMBUF_HEADROOM` (128).
    pub data_room: u16,
    /// NUMA socket, or `None` for any.
    pub socket: Option<i32>,
    /// Mempool handler (`rte_pktmbuf_pool_create_by_ops`), or `None` for the
    /// platform default (`ring_mp_mc`). Pools that threads which can be preempted
    /// allocate from or free to (application threads that are not pinned lcores)
    /// want [`MempoolConfig::PREEMPTIBLE_OPS`].
    pub ops: Option<String>,
}

impl MempoolConfig {
    /// The ring handler for pools used by preemptible threads: `ring_mt_rts`
    /// (relaxed tail sync). With the default ring, a thread preempted in the middle
    /// of a put or get makes every other thread using the pool spin until it runs
    /// again; RTS bounds that wait (DPDK's lock-waiter-preemption case).
    pub const PREEMPTIBLE_OPS: &'static str = "ring_mt_rts";
}

impl Default for MempoolConfig {
    fn default() -> Self {
        Self {
            name: None,
            size: 8191,
            cache_size: 256,
            data_room: dpdk_sys::RTE_MBUF_DEFAULT_BUF_SIZE as u16,
            socket: None,
            ops: None,
        }
    }
}

/// A pool of packet buffers. `Send + Sync`: allocation and free are thread-safe.
///
/// Dropping a pool never frees its memory while the EAL runs (an mbuf free may be in
/// flight on another lcore even when the pool looks full): the EAL frees dropped
/// pools at teardown, and keeps them (and itself) when mbufs are still out, so those
/// stay valid.
pub struct Mempool {
    ptr: NonNull<dpdk_sys::rte_mempool>,
    name: String,
    size: u32,
    eal: Eal,
}

// SAFETY: rte_mempool get/put are thread-safe (lock-free ring + per-lcore caches; the
// cache is bypassed on non-EAL threads). The pointer is owned by this value.
unsafe impl Send for Mempool {}
// SAFETY: see above; all &self methods are thread-safe DPDK calls.
unsafe impl Sync for Mempool {}

impl Mempool {
    /// Creates a pktmbuf pool.
    pub fn new(eal: &Eal, cfg: &MempoolConfig) -> Result<Self> {
        if cfg.name.is_none() {
            if let Some(p) = Self::reuse(eal, cfg) {
                return Ok(p);
            }
        }
        let name = cfg.name.clone().unwrap_or_else(|| {
            format!(
                "pool_{}_{}",
                std::process::id() % 100_000,
                POOL_SEQ.fetch_add(1, Ordering::Relaxed)
            )
        });
        let op = format!("create mempool {name:?} ({} mbufs)", cfg.size);
        if cfg.size == 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                op,
                "size must be > 0",
            ));
        }
        if (cfg.data_room as u32) < dpdk_sys::RTE_PKTMBUF_HEADROOM {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                op,
                "data_room must include the 128-byte headroom",
            ));
        }
        let cname = CString::new(name.as_str())
            .map_err(|_| Error::new(ErrorKind::InvalidArgument, op.clone(), "NUL in name"))?;
        let socket = cfg.socket.unwrap_or(-1); // SOCKET_ID_ANY
        let ops = cfg
            .ops
            .as_deref()
            .map(CString::new)
            .transpose()
            .map_err(|_| Error::new(ErrorKind::InvalidArgument, op.clone(), "NUL in ops"))?;
        // SAFETY: valid NUL-terminated name (and handler name, when given, alive
        // for the call); the EAL is running (we hold an Eal).
        let ptr = unsafe {
            dpdk_sys::rte_pktmbuf_pool_create_by_ops(
                cname.as_ptr(),
                cfg.size,
                cfg.cache_size,
                0,
                cfg.data_room,
                socket,
                ops.as_ref().map_or(std::ptr::null(), |o| o.as_ptr()),
            )
        };
        let ptr = NonNull::new(ptr).ok_or_else(|| {
            let e = Error::last(op.clone());
            Error::new(
                e.kind(),
                op,
                format!("{e}; is the EAL memory (-m / hugepages) large enough?"),
            )
        })?;
        pools().push(PoolRecord {
            ptr: ptr.as_ptr(),
            name: name.clone(),
            size: cfg.size,
            reusable: cfg.name.is_none().then(|| cfg.clone()),
            dropped: false,
        });
        Ok(Self {
            ptr,
            name,
            size: cfg.size,
            eal: eal.clone(),
        })
    }

    /// A dropped, full pool made with the same configuration (unnamed), if any.
    fn reuse(eal: &Eal, cfg: &MempoolConfig) -> Option<Self> {
        let mut list = pools();
        let r = list.iter_mut().find(|r| {
            r.dropped
                && r.reusable.as_ref().is_some_and(|c| {
                    (c.size, c.cache_size, c.data_room, c.socket)
                        == (cfg.size, cfg.cache_size, cfg.data_room, cfg.socket)
                })
                // SAFETY: the pool is not freed while the EAL runs (we hold it).
                && unsafe { dpdk_sys::rte_mempool_in_use_count(r.ptr) } == 0
        })?;
        r.dropped = false;
        Some(Self {
            ptr: NonNull::new(r.ptr)?,
            name: r.name.clone(),
            size: r.size,
            eal: eal.clone(),
        })
    }

    /// A pool with `size` mbufs and the default cache and data room.
    pub fn with_size(eal: &Eal, size: u32) -> Result<Self> {
        Self::new(
            eal,
            &MempoolConfig {
                size,
                ..Default::default()
            },
        )
    }

    /// The pool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Total number of mbufs in the pool.
    pub fn capacity(&self) -> u32 {
        self.size
    }

    /// Mbufs available for allocation (including those in per-lcore caches).
    pub fn available(&self) -> u32 {
        // SAFETY: valid pool pointer.
        unsafe { dpdk_sys::rte_mempool_avail_count(self.ptr.as_ptr()) }
    }

    /// Mbufs currently allocated (`capacity - available`).
    pub fn in_use(&self) -> u32 {
        // SAFETY: valid pool pointer.
        unsafe { dpdk_sys::rte_mempool_in_use_count(self.ptr.as_ptr()) }
    }

    /// Data room of each mbuf (bytes, including headroom).
    pub fn data_room(&self) -> u16 {
        // SAFETY: valid pktmbuf pool; the private area holds rte_pktmbuf_pool_private.
        unsafe { dpdk_sys::rte_pktmbuf_data_room_size(self.ptr.as_ptr()) }
    }

    /// Allocates one mbuf (reset, empty, with default headroom).
    #[inline]
    pub fn alloc(&self) -> Result<Mbuf> {
        // SAFETY: valid pool pointer; a non-null result is a fresh mbuf we now own.
        let m = unsafe { dpdk_sys::rte_pktmbuf_alloc(self.ptr.as_ptr()) };
        match NonNull::new(m) {
            // SAFETY: freshly allocated, refcnt 1, owned by nobody else.
            Some(p) => Ok(unsafe { Mbuf::from_raw(p.as_ptr()) }),
            None => Err(Error::new(
                ErrorKind::Exhausted,
                format!("allocate mbuf from {:?}", self.name),
                format!("pool exhausted ({} of {} in use)", self.in_use(), self.size),
            )),
        }
    }

    /// Allocates `n` mbufs into `batch` at once, all or nothing.
    pub fn alloc_bulk<const N: usize>(&self, batch: &mut MbufBatch<N>, n: usize) -> Result<()> {
        let (spare, room) = batch.spare_raw();
        if n > room {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "allocate mbufs in bulk",
                format!("{n} requested but the batch has room for {room}"),
            ));
        }
        // SAFETY: `spare` has room for `n` pointers; on success all n are fresh mbufs.
        let ret = unsafe { dpdk_sys::rte_pktmbuf_alloc_bulk(self.ptr.as_ptr(), spare, n as u32) };
        if ret != 0 {
            return Err(Error::new(
                ErrorKind::Exhausted,
                format!("allocate {n} mbufs from {:?}", self.name),
                format!("pool exhausted ({} of {} in use)", self.in_use(), self.size),
            ));
        }
        // SAFETY: n pointers past len were just initialized with owned mbufs.
        unsafe { batch.set_len(batch.len() + n) };
        Ok(())
    }

    /// The raw pool pointer, for FFI.
    pub fn as_ptr(&self) -> *mut dpdk_sys::rte_mempool {
        self.ptr.as_ptr()
    }

    /// The EAL this pool lives in.
    pub fn eal(&self) -> &Eal {
        &self.eal
    }
}

impl std::fmt::Debug for Mempool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mempool")
            .field("name", &self.name)
            .field("capacity", &self.size)
            .field("available", &self.available())
            .finish()
    }
}

impl Drop for Mempool {
    fn drop(&mut self) {
        let in_use = self.in_use();
        if in_use > 0 {
            tracing::debug!(
                pool = %self.name,
                in_use,
                "mempool dropped with mbufs still in use; its memory is kept"
            );
        }
        // Freed at EAL teardown (see `free_dropped_pools`), never here.
        if let Some(r) = pools().iter_mut().find(|r| r.ptr == self.ptr.as_ptr()) {
            r.dropped = true;
        }
    }
}
