//! The lease: bursts on ports whose PMD tears them down on the interrupt thread
//! (memif, when its peer disconnects) enter the PMD only while that thread is
//! parked here, so never while one of the PMD's callbacks runs.
//!
//! While a leased port lives, the interrupt thread alternates: parked in an alarm
//! callback for a term (bursts allowed), then free for the PMDs' callbacks
//! (bursts wait). Ending the lease closes the grant, then waits until no leased
//! queue is inside a burst (the same store-then-load handshake as a port's stop),
//! so a callback never overlaps a burst. The next lease is set from an eventfd's
//! callback, which the EAL runs from its event wait: the PMD's callbacks that
//! came due during a lease run before the next one. Work sent to the interrupt
//! thread ([`super::run`]), and a leased port opened or closed, end a lease early.
//!
//! Terms: [`TERM`] while every leased link is up (the PMD then has only a
//! disconnect to handle: it is seen up to that late, and the pmdt connection
//! notices a silent peer by itself); [`SETUP_TERM`] while none is (memif's
//! connection set-up, about ten messages through the thread, and no traffic to
//! hold back), and for [`SETTLE`] after a leased port opened or closed;
//! [`MIXED_TERM`] in between. Cost: after each lease, bursts wait at
//! least [`GAP_US`], more where pollers keep every CPU busy and the interrupt
//! thread waits for the scheduler (0.5-3 ms on a 2-CPU machine).

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use crate::port::BurstGate;

/// How long the interrupt thread stays parked, bursts allowed, while every leased
/// link is up. Long, because the gap after a lease costs more than [`GAP_US`]
/// where the pollers keep every CPU busy: 10 ms terms held bursts back 1-6% of a
/// transfer on a 2-CPU machine.
const TERM: Duration = Duration::from_secs(1);

/// The same while no leased link is up: its PMD is setting up the connection on
/// the interrupt thread, a message at a time, and nothing flows to hold back.
const SETUP_TERM: Duration = Duration::from_millis(1);

/// The same while some leased links are up and others not (a port waiting for
/// its peer beside one carrying traffic): set-up in a few hundred milliseconds,
/// the traffic held back a few percent meanwhile.
const MIXED_TERM: Duration = Duration::from_millis(20);

/// How long after a leased port opened or closed the terms stay at
/// [`SETUP_TERM`]: a close sends the peer (maybe in this process) its disconnect,
/// and an open starts a set-up, both on the interrupt thread.
const SETTLE: Duration = Duration::from_millis(100);

/// How long after its eventfd's callback the next lease starts (µs): the rest of
/// that event batch (the PMDs' callbacks) runs first.
const GAP_US: u64 = 50;

/// Whether bursts on leased ports may enter the PMD now.
static GRANTED: AtomicBool = AtomicBool::new(false);

/// Who needs the lease, and who needs the thread.
struct State {
    /// Live leased ports, by port id.
    holders: Vec<u16>,
    /// Moves at every open and close of a leased port: a lease ends when it does.
    generation: u64,
    /// When it last moved.
    changed_at: Option<Instant>,
    /// Jobs waiting for the interrupt thread.
    requests: usize,
    /// Whether a lease is set, running, or about to be set (its eventfd written).
    armed: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    holders: Vec::new(),
    generation: 0,
    changed_at: None,
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

/// Whether `rte_eal_alarm_set`'s result means the alarm is not set: DPDK 22.11
/// returns other errors (from `timerfd_settime`) with the alarm already listed.
pub(super) fn alarm_not_set(r: i32) -> bool {
    r == -libc::EINVAL || r == -libc::ENOMEM
}

/// Sets the next lease alarm; when it cannot be set, bursts go unguarded rather
/// than stop.
fn arm(st: &mut State) {
    // SAFETY: `lease` is a plain function; the argument is unused.
    let r = unsafe { dpdk_sys::rte_eal_alarm_set(GAP_US, Some(lease), std::ptr::null_mut()) };
    st.armed = !alarm_not_set(r);
    if !st.armed {
        tracing::warn!(
            err = r,
            "no alarm on the EAL interrupt thread: bursts on memif ports are not kept \
             apart from its peer-disconnect handling"
        );
        GRANTED.store(true, Ordering::SeqCst);
    } else if r != 0 {
        tracing::warn!(
            err = r,
            "the EAL alarm for the interrupt thread's lease may be late"
        );
    }
}

/// The eventfd whose interrupt callback sets the next lease, registered with the
/// EAL once (for the process's life); `None` when that failed (leases then follow
/// each other by alarm alone).
fn kick_fd() -> Option<i32> {
    static KICK: OnceLock<Option<i32>> = OnceLock::new();
    *KICK.get_or_init(|| {
        // SAFETY: plain syscall; the fd is ours.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: a new private handle; it gets our fd, the external type, and our
        // callback (a plain function, argument unused), and stays registered for
        // the process's life.
        let ok = unsafe {
            let h = dpdk_sys::rte_intr_instance_alloc(0);
            !h.is_null()
                && dpdk_sys::rte_intr_fd_set(h, fd) == 0
                && dpdk_sys::rte_intr_type_set(h, dpdk_sys::RTE_INTR_HANDLE_EXT) == 0
                && dpdk_sys::rte_intr_callback_register(h, Some(on_kick), std::ptr::null_mut()) == 0
        };
        if !ok {
            tracing::debug!("no eventfd callback on the interrupt thread: leases set by alarm");
            // SAFETY: our fd; a handle that failed to register is never polled.
            unsafe { libc::close(fd) };
            return None;
        }
        Some(fd)
    })
}

/// The eventfd's callback, from the EAL's event wait: sets the next lease.
extern "C" fn on_kick(_: *mut c_void) {
    if let Some(fd) = kick_fd() {
        let mut n = 0u64;
        // SAFETY: reading 8 bytes into a u64 from our non-blocking eventfd.
        unsafe { libc::read(fd, (&mut n as *mut u64).cast(), 8) };
    }
    let mut st = state();
    if st.holders.is_empty() {
        st.armed = false;
    } else {
        arm(&mut st);
    }
}

/// After a lease: the next one, through the eventfd where there is one.
fn next_lease(st: &mut State) {
    if st.holders.is_empty() {
        st.armed = false;
        return;
    }
    if let Some(fd) = kick_fd() {
        let one = 1u64;
        // SAFETY: writing 8 bytes from a u64 to our eventfd.
        if unsafe { libc::write(fd, (&one as *const u64).cast(), 8) } == 8 {
            return;
        }
    }
    arm(st);
}

/// After a job on the interrupt thread: a lease already set is put back behind
/// the next event wait, so the PMD callbacks the job caused (a close sends the
/// peer its disconnect) run before it. Otherwise the EAL's alarm loop, finding
/// the lease due after a long job, would run it at once and hold them a term.
pub(super) fn after_job() {
    let mut st = state();
    if !st.armed {
        return;
    }
    // SAFETY: cancelling our own alarm (not the one running: that is the job's).
    let n = unsafe { dpdk_sys::rte_eal_alarm_cancel(Some(lease), std::ptr::null_mut()) };
    if n > 0 {
        next_lease(&mut st);
    }
}

/// How long a lease lasts now.
fn term(st: &State) -> Duration {
    if st.changed_at.is_some_and(|t| t.elapsed() < SETTLE) {
        return SETUP_TERM;
    }
    let up = st.holders.iter().filter(|&&id| link_up(id)).count();
    if up == st.holders.len() {
        TERM
    } else if up == 0 {
        SETUP_TERM
    } else {
        MIXED_TERM
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
    let until = Instant::now() + term(&st);
    let generation = st.generation;
    while st.generation == generation && st.requests == 0 {
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
    next_lease(&mut state());
}

/// A leased port: while one lives, the interrupt thread runs leases.
pub(crate) struct Holder(u16);

impl Holder {
    /// Port `id`'s hold; starts the leases if none run.
    pub(crate) fn new(id: u16) -> Self {
        kick_fd();
        let mut st = state();
        st.holders.push(id);
        st.generation += 1;
        st.changed_at = Some(Instant::now());
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
            st.generation += 1;
            st.changed_at = Some(Instant::now());
            WAKE.notify_all();
            st.holders.is_empty()
        };
        if !last {
            return;
        }
        // The next port's first lease measures no gap from this one's last.
        LAST_END.lock().unwrap_or_else(|e| e.into_inner()).take();
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
