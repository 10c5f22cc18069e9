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
//! Cost: leased queues see no packets for about [`GAP_US`] every [`TERM`] (0.5%),
//! and a PMD callback waits up to a lease to run: [`SETUP_TERM`] while a leased
//! link is down (memif's connection set-up), [`TERM`] once all are up.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use crate::port::BurstGate;

/// How long the interrupt thread stays parked, bursts allowed.
const TERM: Duration = Duration::from_millis(10);

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
    GRANTED.store(true, Ordering::SeqCst);
    let term = if st.holders.iter().all(|&id| link_up(id)) {
        TERM
    } else {
        SETUP_TERM
    };
    let until = Instant::now() + term;
    while !st.holders.is_empty() && st.requests == 0 {
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
