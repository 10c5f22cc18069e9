//! Non-EAL threads registered with the EAL (`rte_thread_register`).
//!
//! A thread the EAL did not start has no lcore id, so every mempool get and put it
//! makes bypasses the per-lcore caches and goes to the pool's shared ring (on a
//! preemption-safe ring, several atomic operations per mbuf). Registering gives
//! the thread an lcore id of its own for as long as it is registered, so its
//! mbuf allocations and frees go through a cache like an EAL lcore's.
//!
//! [`register_current_thread`] registers the calling thread once, for the rest of
//! its life: the registration lives in a thread-local and is given back when the
//! thread exits (its caches flushed first, so no mbuf stays parked under an
//! unused lcore id). [`RegisteredThread`] is the same as a scoped guard.

use std::cell::RefCell;
use std::marker::PhantomData;

use crate::eal::Eal;
use crate::error::{Error, ErrorKind, Result};

/// The calling thread's registration with the EAL, given back on drop. Not
/// `Send`: it belongs to the thread that made it.
pub struct RegisteredThread {
    lcore: u32,
    /// Keeps the EAL up while the thread holds an lcore id (unregistering after
    /// `rte_eal_cleanup` would touch freed state).
    _eal: Eal,
    _not_send: PhantomData<*const ()>,
}

impl RegisteredThread {
    /// Registers the calling thread. Fails with [`ErrorKind::InvalidArgument`] on a
    /// thread that already has an lcore id (an EAL lcore, or registered already),
    /// and with the EAL's error when it refuses (every lcore id taken, or
    /// multi-process in use).
    pub fn new(eal: &Eal) -> Result<Self> {
        if let Some(id) = crate::lcore::current() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "register thread",
                format!("the thread already has lcore id {id}"),
            ));
        }
        // SAFETY: the EAL is up (we hold a handle); the call only allocates a
        // non-EAL lcore id for this thread and sets its thread-locals.
        let r = unsafe { dpdk_sys::rte_thread_register() };
        match crate::lcore::current() {
            Some(lcore) if r == 0 => Ok(Self {
                lcore,
                _eal: eal.clone(),
                _not_send: PhantomData,
            }),
            // SAFETY: reads this thread's rte_errno.
            _ => Err(Error::from_errno("register thread", unsafe {
                dpdk_sys::shim_rte_errno()
            })),
        }
    }

    /// The lcore id the thread holds.
    pub fn lcore(&self) -> u32 {
        self.lcore
    }
}

impl Drop for RegisteredThread {
    fn drop(&mut self) {
        // SAFETY: on the registered thread (not Send); the EAL is up (`_eal`). The
        // flush returns this lcore id's cached mbufs to their pools before another
        // thread may be given the id; no other thread uses this id's caches.
        unsafe {
            dpdk_sys::shim_mempool_flush_lcore_caches(self.lcore);
            dpdk_sys::rte_thread_unregister();
        }
    }
}

impl std::fmt::Debug for RegisteredThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredThread")
            .field("lcore", &self.lcore)
            .finish()
    }
}

thread_local! {
    /// This thread's registration by [`register_current_thread`], if any.
    static REGISTRATION: RefCell<Registration> = const { RefCell::new(Registration::NotTried) };
}

/// What [`register_current_thread`] did on this thread.
enum Registration {
    NotTried,
    Registered(#[allow(dead_code)] RegisteredThread),
    /// An EAL lcore already, or the EAL refused: the thread runs without a cache.
    Unavailable,
}

/// Gives the calling thread an lcore id (and so mempool caches) for the rest of
/// its life, once; later calls are a thread-local check. Returns the thread's
/// lcore id, or `None` when it has none (the EAL refused: every lcore id taken).
/// EAL lcores keep theirs.
#[inline]
pub fn register_current_thread(eal: &Eal) -> Option<u32> {
    if let Some(id) = crate::lcore::current() {
        return Some(id);
    }
    REGISTRATION
        .try_with(|r| {
            let mut r = r.borrow_mut();
            if matches!(*r, Registration::NotTried) {
                *r = match RegisteredThread::new(eal) {
                    Ok(g) => Registration::Registered(g),
                    Err(e) => {
                        tracing::debug!("thread runs without mempool caches: {e}");
                        Registration::Unavailable
                    }
                };
            }
            match &*r {
                Registration::Registered(g) => Some(g.lcore()),
                _ => None,
            }
        })
        .ok()
        .flatten()
}

/// Returns what the calling thread's mempool caches hold to their pools, if
/// [`register_current_thread`] registered it; nothing on other threads. For a
/// thread about to sleep: the mbufs it parked in its caches are free for others
/// meanwhile (a cache holds up to 1.5 × the pool's cache size).
pub fn flush_registered_thread_caches() {
    let _ = REGISTRATION.try_with(|r| {
        if let Ok(r) = r.try_borrow() {
            if let Registration::Registered(g) = &*r {
                // SAFETY: on the thread that holds the lcore id (nobody else uses
                // its caches); the EAL is up (the registration holds it).
                unsafe { dpdk_sys::shim_mempool_flush_lcore_caches(g.lcore) };
            }
        }
    });
}
