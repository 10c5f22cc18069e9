//! Work run on the EAL interrupt thread, serialized with the PMDs' own callbacks.
//!
//! Some PMDs run part of their control plane on the interrupt thread: memif tears
//! a port down there when its peer disconnects (it unmaps the shared rings and
//! frees the queues' interrupt handles). DPDK does not synchronize that with the
//! application's threads, so two things are unsafe for such a port:
//! - stopping or closing it from an application thread while the interrupt thread
//!   handles the peer's disconnect: the teardown runs twice at once (`free():
//!   invalid pointer`, a segfault at exit);
//! - bursting on it while the interrupt thread tears it down: the burst reads the
//!   rings being unmapped.
//!
//! [`run`] puts stop and close on the interrupt thread itself, so they run between
//! the PMD's callbacks, never beside one. The [`lease`] keeps bursts out of those
//! callbacks.

pub(crate) mod lease;

use std::ffi::c_void;
use std::sync::mpsc;

/// A job the interrupt thread runs once.
type Job = Box<dyn FnOnce() + Send>;

/// Whether the calling thread is the EAL interrupt thread.
fn on_it() -> bool {
    // SAFETY: a plain query of the calling thread's identity.
    unsafe { dpdk_sys::rte_thread_is_intr() != 0 }
}

extern "C" fn run_job(arg: *mut c_void) {
    // SAFETY: `arg` is the `Box<Job>` leaked by `run` for exactly this one alarm,
    // which fires once: ownership comes back here.
    let job = unsafe { Box::from_raw(arg.cast::<Job>()) };
    job();
    lease::after_job();
}

/// Runs `f` on the EAL interrupt thread and returns what it returns; runs it right
/// here when called from that thread, or when the alarm cannot be set. A panic in
/// `f` resumes in the caller.
pub(crate) fn run<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    if on_it() {
        return f();
    }
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let _ = tx.send(r);
    });
    let arg = Box::into_raw(Box::new(job));
    // Ends a lease the interrupt thread holds, so the job runs now.
    let request = lease::ThreadRequest::new();
    // SAFETY: `run_job` takes back the box behind `arg` when the alarm fires; the
    // alarm fires once.
    let r = unsafe { dpdk_sys::rte_eal_alarm_set(1, Some(run_job), arg.cast()) };
    if lease::alarm_not_set(r) {
        tracing::debug!(
            err = r,
            "no alarm on the interrupt thread: its work runs here"
        );
        // SAFETY: the alarm was not set, so `arg` is still ours alone.
        let job = unsafe { Box::from_raw(arg) };
        (*job)();
    }
    let out = rx.recv().expect("the interrupt-thread job always answers");
    drop(request);
    match out {
        Ok(v) => v,
        Err(p) => std::panic::resume_unwind(p),
    }
}
