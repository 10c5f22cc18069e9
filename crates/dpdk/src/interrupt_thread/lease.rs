//! The lease: bursts on ports whose PMD tears them down on the interrupt thread
//! (memif, when its peer disconnects) enter the PMD only while that thread is
//! parked here, so never while one of the PMD's callbacks runs.
//!
//! While a leased port lives, the interrupt thread alternates: parked in an alarm
//! callback for [`TERM`] (bursts allowed), then free for [`GAP_US`] and whatever
//! PMD callbacks are due (bursts wait). Ending the lease closes the grant, then
//! waits until no leased queue is inside a burst (the same store-then-load
//! handshake as a port's stop), so a callback never overlaps a burst. Work sent to
//! the interrupt thread ([`super::run`]) ends a lease early.
//!
//! Cost: leased queues see no packets for a gap of [`GAP_US`] or more every
//! [`TERM`], and a PMD callback waits up to a lease to run: [`SETUP_TERM`] while a
//! leased link is down (memif's connection set-up), [`TERM`] once all are up (a
//! peer's disconnect is seen up to that late; the pmdt connection notices a silent
//! peer by itself).

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use crate::port::BurstGate;

/// How long the interrupt thread stays parked, bursts allowed, while every leased
/// link is up: then the PMD's only event is a disconnect, which can wait. Long,
/// because the gap after a lease costs more than [`GAP_US`] where the pollers
/// keep every CPU busy: the interrupt thread then waits for the scheduler, 0.5-3
/// ms on this project's 2-CPU machine (1-6% of the time at a 10 ms term).
const TERM: Duration = Duration::from_secs(1);

/// The same while a leased port's link is down: its PMD is setting up the
/// connection on the interrupt thread, a message at a time (memif: ~10 of them).
const SETUP_TERM: Duration = Duration::from_millis(1);

/// How long it is then free for the PMDs' callbacks before the next lease (µs):
/// long enough that the EAL's alarm loop returns to its event wait first.
const GAP_US: u64 = 50;

/// Whether bursts on leased ports may enter the PMD now.
static GRANTED: AtomicBool = AtomicBool::new(false);

/// Who needs the lease, and who needs the thread.
struct State {
    /// Live leased ports, by port id.
    holders: Vec<u16>,
    /// Jobs waiting for the interrupt thread.
    requests: usize,
    /// Whether a lease alarm is set or running.
    armed: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    holders: Vec::new(),
    requests: 0,
    armed: false,
});

/// Wakes a parked lease when a holder leaves or a job comes.
static WAKE: Condvar = Condvar::new();

/// The burst gates of leased ports' queues.
static GATES: Mutex<Vec<Weak<BurstGate>>> = Mutex::new(Vec::new());

/// What the leases cost, for the debug log when the last leased port closes: time
/// with bursts held back between leases (ns), its longest stretch, and leases.
static HELD_BACK_NS: AtomicU64 = AtomicU64::new(0);
static LONGEST_HELD_BACK_NS: AtomicU64 = AtomicU64::new(0);
static LEASES: AtomicU64 = AtomicU64::new(0);

/// When the last lease ended.
static LAST_END: Mutex<Option<Instant>> = Mutex::new(None);

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether bursts on leased ports may enter the PMD now.
#[inline]
pub(crate) fn granted() -> bool {
    GRANTED.load(Ordering::SeqCst)
}

/// Makes a lease's end wait for bursts through `gate`.
pub(crate) fn watch(gate: &Arc<BurstGate>) {
    let mut g = GATES.lock().unwrap_or_else(|e| e.into_inner());
    g.retain(|w| w.strong_count() > 0);
    g.push(Arc::downgrade(gate));
}

/// Sets the next lease alarm; when it cannot be set, bursts go unguarded rather
/// than stop.
fn arm(st: &mut State) {
    // SAFETY: `lease` is a plain function; the argument is unused.
    let r = unsafe { dpdk_sys::rte_eal_alarm_set(GAP_US, Some(lease), std::ptr::null_mut()) };
    st.armed = r == 0;
    if r != 0 {
        tracing::warn!(
            err = r,
            "no alarm on the EAL interrupt thread: bursts on memif ports are not kept \
             apart from its peer-disconnect handling"
        );
        GRANTED.store(true, Ordering::SeqCst);
    }
}

/// Waits until no watched queue is inside a burst.
fn wait_idle() {
    let gates = GATES.lock().unwrap_or_else(|e| e.into_inner());
    for g in gates.iter().filter_map(Weak::upgrade) {
        while g.is_busy() {
            std::hint::spin_loop();
            std::thread::yield_now();
        }
    }
}

/// Whether port `id`'s link is up.
fn link_up(id: u16) -> bool {
    let mut l = dpdk_sys::rte_eth_link::default();
    // SAFETY: a live port (its holder is registered) and a valid out pointer.
    let r = unsafe { dpdk_sys::rte_eth_link_get_nowait(id, &mut l) };
    r == 0 && l.link_status() != 0
}

/// The alarm callback: one lease.
extern "C" fn lease(_: *mut c_void) {
    let mut st = state();
    if st.holders.is_empty() {
        st.armed = false;
        return;
    }
    let start = Instant::now();
    if let Some(end) = LAST_END.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let gap = u64::try_from((start - end).as_nanos()).unwrap_or(u64::MAX);
        HELD_BACK_NS.fetch_add(gap, Ordering::Relaxed);
        LONGEST_HELD_BACK_NS.fetch_max(gap, Ordering::Relaxed);
    }
    LEASES.fetch_add(1, Ordering::Relaxed);
    GRANTED.store(true, Ordering::SeqCst);
    let term = if st.holders.iter().all(|&id| link_up(id)) {
        TERM
    } else {
        SETUP_TERM
    };
    let until = Instant::now() + term;
    // A port opened or closed ends the lease: the term may change.
    let holders = st.holders.len();
    while st.holders.len() == holders && st.requests == 0 {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        st = WAKE
            .wait_timeout(st, left)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    GRANTED.store(false, Ordering::SeqCst);
    *LAST_END.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    drop(st);
    wait_idle();
    let mut st = state();
    if st.holders.is_empty() {
        st.armed = false;
    } else {
        arm(&mut st);
    }
}

/// A leased port: while one lives, the interrupt thread runs leases.
pub(crate) struct Holder(u16);

impl Holder {
    /// Port `id`'s hold; starts the leases if none run.
    pub(crate) fn new(id: u16) -> Self {
        let mut st = state();
        st.holders.push(id);
        WAKE.notify_all();
        if !st.armed {
            arm(&mut st);
        }
        Holder(id)
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let last = {
            let mut st = state();
            if let Some(i) = st.holders.iter().position(|&id| id == self.0) {
                st.holders.swap_remove(i);
            }
            WAKE.notify_all();
            st.holders.is_empty()
        };
        if !last {
            return;
        }
        tracing::debug!(
            leases = LEASES.load(Ordering::Relaxed),
            held_back_ms = HELD_BACK_NS.load(Ordering::Relaxed) / 1_000_000,
            longest_held_back_us = LONGEST_HELD_BACK_NS.load(Ordering::Relaxed) / 1_000,
            "memif bursts waited for the interrupt thread between its leases"
        );
        // No lease alarm left behind the last port (one may outlive the EAL).
        // Waits for a running lease, which ends now that no holder is left.
        // SAFETY: cancelling our own alarm; the argument is the one it was set with.
        let n = unsafe { dpdk_sys::rte_eal_alarm_cancel(Some(lease), std::ptr::null_mut()) };
        let mut st = state();
        if n > 0 {
            st.armed = false;
        }
        // A port opened meanwhile may have had its alarm cancelled with ours.
        if !st.holders.is_empty() && !st.armed {
            arm(&mut st);
        }
    }
}

/// A job waiting for the interrupt thread: ends the current lease early.
pub(crate) struct ThreadRequest(());

impl ThreadRequest {
    pub(crate) fn new() -> Self {
        state().requests += 1;
        WAKE.notify_all();
        ThreadRequest(())
    }
}

impl Drop for ThreadRequest {
    fn drop(&mut self) {
        state().requests -= 1;
    }
}
