//! The EAL's control threads (the interrupt thread above all) kept off the CPUs of
//! the worker lcores.
//!
//! DPDK 22.11 places its control threads on the CPUs no lcore uses, or, when the
//! lcores use them all, on the main lcore's CPUs. A main lcore free to run on every
//! CPU (the tools' default, so application threads are not crowded onto one core)
//! thus lets the interrupt thread preempt a polling worker. That costs the worker
//! latency (with memif, a preempted worker also waits out the interrupt thread's
//! lease, see `interrupt_thread`). After init, the control threads are moved to the
//! CPUs they may use that no worker lcore is pinned to, when there are any.

use std::fs;

/// Names of the EAL control threads (DPDK 22.11, then 23.11 on).
const CONTROL_THREADS: &[&str] = &[
    "eal-intr-thread",
    "rte_mp_handle",
    "telemetry-v2",
    "dpdk-intr",
    "dpdk-mp-msg",
    "dpdk-telemet-v2",
];

/// Prefixes of the worker lcore threads' names (22.11, then 23.11 on).
const WORKER_THREADS: &[&str] = &["rte-worker-", "dpdk-worker"];

/// A thread of this process: its id and name.
pub(crate) struct Task {
    tid: libc::pid_t,
    pub(crate) name: String,
}

impl Task {
    fn is_control(&self) -> bool {
        CONTROL_THREADS.contains(&self.name.as_str())
    }

    fn is_worker(&self) -> bool {
        WORKER_THREADS.iter().any(|p| self.name.starts_with(p))
    }

    /// The CPUs the thread may run on.
    pub(crate) fn cpus(&self) -> Vec<usize> {
        cpus_of(self.tid)
    }
}

fn tasks() -> Vec<Task> {
    let Ok(dir) = fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let tid = e.file_name().to_str()?.parse().ok()?;
        let name = fs::read_to_string(e.path().join("comm")).ok()?;
        Some(Task {
            tid,
            name: name.trim_end().to_string(),
        })
    })
    .collect()
}

fn affinity(tid: libc::pid_t) -> Option<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; all-zero is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let r = unsafe { libc::sched_getaffinity(tid, std::mem::size_of_val(&set), &mut set) };
    (r == 0).then_some(set)
}

fn cpus(set: &libc::cpu_set_t) -> Vec<usize> {
    // SAFETY: CPU_ISSET reads the set within its fixed size (CPU_SETSIZE).
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, set) })
        .collect()
}

/// The CPUs thread `tid` may run on.
fn cpus_of(tid: libc::pid_t) -> Vec<usize> {
    affinity(tid).map(|s| cpus(&s)).unwrap_or_default()
}

/// The EAL control threads of this process.
pub(crate) fn control_threads() -> Vec<Task> {
    tasks().into_iter().filter(Task::is_control).collect()
}

/// Moves the EAL control threads off the worker lcores' CPUs, onto the rest of
/// the CPUs they, or the main lcore, may use; leaves them where they are when no
/// such CPU is left. Called once, right after `rte_eal_init`.
pub(crate) fn keep_off_workers() {
    let all = tasks();
    let workers: Vec<usize> = all
        .iter()
        .filter(|t| t.is_worker())
        .flat_map(Task::cpus)
        .collect();
    if workers.is_empty() {
        return;
    }
    // The main lcore is the thread that called rte_eal_init: this one.
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() };
    let control: Vec<&Task> = all.iter().filter(|t| t.is_control()).collect();
    let mut allowed: Vec<usize> = control
        .iter()
        .flat_map(|t| t.cpus())
        .chain(cpus_of(me))
        .filter(|c| !workers.contains(c))
        .collect();
    allowed.sort_unstable();
    allowed.dedup();
    if allowed.is_empty() {
        tracing::debug!(
            ?workers,
            "no CPU free of worker lcores: EAL control threads stay where DPDK put them"
        );
        return;
    }
    // SAFETY: all-zero is an empty cpu_set_t.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in &allowed {
        // SAFETY: c < CPU_SETSIZE (it came from a set of that size).
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    for t in control {
        // SAFETY: `set` is a valid cpu_set_t of the size passed; a thread that
        // exited meanwhile only makes the call fail.
        let r = unsafe { libc::sched_setaffinity(t.tid, std::mem::size_of_val(&set), &set) };
        if r != 0 {
            tracing::debug!(thread = %t.name, err = %std::io::Error::last_os_error(),
                "could not move an EAL control thread");
        }
    }
    tracing::debug!(
        ?allowed,
        ?workers,
        "EAL control threads kept off the worker lcores"
    );
}
