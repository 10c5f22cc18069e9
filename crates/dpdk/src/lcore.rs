//! Lcores: launching work on worker lcores, lcore ids, and the TSC clock.

use std::any::Any;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use crate::eal::Eal;
use crate::error::{Error, ErrorKind, Result};

/// The lcore id of the calling thread, or `None` on a non-EAL thread.
pub fn current() -> Option<u32> {
    // SAFETY: reads a thread-local.
    let id = unsafe { dpdk_sys::rte_lcore_id() };
    (id != dpdk_sys::LCORE_ID_ANY).then_some(id)
}

/// Whether the calling thread is an EAL worker lcore (launched by the EAL, not
/// the main lcore and not a registered non-EAL thread).
pub fn on_worker() -> bool {
    current().is_some_and(|id| {
        // SAFETY: plain query on a valid lcore id.
        id != main_id() && unsafe { dpdk_sys::rte_eal_lcore_role(id) } == dpdk_sys::ROLE_RTE
    })
}

/// The main lcore's id.
pub fn main_id() -> u32 {
    // SAFETY: plain query.
    unsafe { dpdk_sys::rte_get_main_lcore() }
}

/// Ids of the enabled worker lcores (all but the main one).
pub fn worker_ids() -> Vec<u32> {
    let mut v = Vec::new();
    // SAFETY: iteration with the documented sentinel -1 start.
    let mut i = unsafe { dpdk_sys::rte_get_next_lcore(u32::MAX, 1, 0) };
    while i < dpdk_sys::RTE_MAX_LCORE {
        v.push(i);
        // SAFETY: as above.
        i = unsafe { dpdk_sys::rte_get_next_lcore(i, 1, 0) };
    }
    v
}

/// Most lcore ids the EAL hands out (its own lcores and registered threads
/// together): `RTE_MAX_LCORE` of the DPDK build.
pub const MAX_LCORES: u32 = dpdk_sys::RTE_MAX_LCORE;

/// Number of enabled lcores.
pub fn count() -> u32 {
    // SAFETY: plain query.
    unsafe { dpdk_sys::rte_lcore_count() }
}

/// The CPU core an lcore runs on.
pub fn cpu_of(lcore: u32) -> Option<u32> {
    // SAFETY: plain query; -1 for an invalid lcore.
    let c = unsafe { dpdk_sys::rte_lcore_to_cpu_id(lcore as i32) };
    (c >= 0).then_some(c as u32)
}

/// Current TSC value (cycles).
#[inline]
pub fn tsc() -> u64 {
    // SAFETY: rdtsc has no preconditions.
    unsafe { dpdk_sys::rte_rdtsc() }
}

/// TSC frequency in Hz as measured by the EAL.
pub fn tsc_hz() -> u64 {
    // SAFETY: plain query (valid once the EAL is up).
    unsafe { dpdk_sys::rte_get_tsc_hz() }
}

type Outcome<R> = Arc<Mutex<Option<std::thread::Result<R>>>>;

struct Job<R> {
    f: Box<dyn FnOnce() -> R + Send>,
    out: Outcome<R>,
}

unsafe extern "C" fn trampoline<R: Send + 'static>(arg: *mut c_void) -> c_int {
    // SAFETY: arg is the Box<Job<R>> leaked by launch, consumed exactly once here.
    let job = unsafe { Box::from_raw(arg as *mut Job<R>) };
    let Job { f, out } = *job;
    let r = catch_unwind(AssertUnwindSafe(f));
    let failed = r.is_err();
    if let Ok(mut slot) = out.lock() {
        *slot = Some(r);
    }
    c_int::from(failed)
}

/// Handle to work running on a worker lcore. Not `Send`: DPDK allows waiting for
/// an lcore only on the main lcore, where [`launch`] made the handle.
///
/// ```compile_fail
/// fn needs_send<T: Send>(_: T) {}
/// fn f(h: dpdk::lcore::LcoreJoinHandle<()>) { needs_send(h) }
/// ```
pub struct LcoreJoinHandle<R> {
    lcore: u32,
    out: Outcome<R>,
    joined: bool,
    /// Keeps the EAL up while the work runs; dropped on the main lcore after the
    /// wait, so the EAL is never cleaned up on a worker (which would wait for
    /// itself).
    _eal: Eal,
    _not_send: PhantomData<*const ()>,
}

/// Runs `f` on worker lcore `lcore` (`rte_eal_remote_launch`). A panic inside `f` is
/// caught and returned by [`LcoreJoinHandle::join`]. Only the main lcore may launch
/// (and wait for) work: from any other thread this is an
/// [`ErrorKind::InvalidArgument`] error.
pub fn launch<F, R>(eal: &Eal, lcore: u32, f: F) -> Result<LcoreJoinHandle<R>>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let op = format!("launch on lcore {lcore}");
    let main = main_id();
    if current() != Some(main) {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            op,
            format!(
                "called on {} but DPDK allows rte_eal_remote_launch/rte_eal_wait_lcore only \
                 on the main lcore ({main})",
                match current() {
                    Some(id) => format!("lcore {id}"),
                    None => "a non-EAL thread".to_owned(),
                }
            ),
        ));
    }
    if !worker_ids().contains(&lcore) {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            op,
            format!("not an enabled worker lcore (workers: {:?})", worker_ids()),
        ));
    }
    let out: Outcome<R> = Arc::new(Mutex::new(None));
    let job = Box::new(Job {
        f: Box::new(f),
        out: out.clone(),
    });
    let arg = Box::into_raw(job) as *mut c_void;
    // SAFETY: trampoline::<R> consumes `arg` exactly once if the launch succeeds.
    let r = unsafe { dpdk_sys::rte_eal_remote_launch(Some(trampoline::<R>), arg, lcore) };
    if r != 0 {
        // SAFETY: not launched, so we still own the job.
        drop(unsafe { Box::from_raw(arg as *mut Job<R>) });
        return Err(Error::from_errno(format!("{op} (busy?)"), r));
    }
    Ok(LcoreJoinHandle {
        lcore,
        out,
        joined: false,
        _eal: eal.clone(),
        _not_send: PhantomData,
    })
}

impl<R> std::fmt::Debug for LcoreJoinHandle<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LcoreJoinHandle")
            .field("lcore", &self.lcore)
            .finish()
    }
}

impl<R> LcoreJoinHandle<R> {
    /// The lcore the work runs on.
    pub fn lcore(&self) -> u32 {
        self.lcore
    }

    /// Waits for the work to finish and returns its result, or
    /// [`ErrorKind::LcorePanicked`] with the panic message.
    pub fn join(mut self) -> Result<R> {
        // SAFETY: waits for the lcore we launched on, on the main lcore (the handle
        // is not Send and was made there).
        unsafe { dpdk_sys::rte_eal_wait_lcore(self.lcore) };
        self.joined = true;
        // The job may have dropped the last EAL handle on the worker.
        crate::eal::run_pending_cleanup();
        let r = self
            .out
            .lock()
            .ok()
            .and_then(|mut s| s.take())
            .ok_or_else(|| Error::new(ErrorKind::Dpdk, "join lcore", "no result recorded"))?;
        r.map_err(|p| {
            Error::new(
                ErrorKind::LcorePanicked,
                format!("work on lcore {}", self.lcore),
                format!("panicked: {}", panic_message(&p)),
            )
        })
    }
}

impl<R> Drop for LcoreJoinHandle<R> {
    fn drop(&mut self) {
        if !self.joined {
            // Waiting keeps the lcore's state clean for the next launch.
            // SAFETY: waits for the lcore we launched on, on the main lcore.
            unsafe { dpdk_sys::rte_eal_wait_lcore(self.lcore) };
            crate::eal::run_pending_cleanup();
        }
    }
}

fn panic_message(p: &Box<dyn Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".into()
    }
}
