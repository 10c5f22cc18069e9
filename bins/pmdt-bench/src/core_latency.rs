//! The machine's state as a figure: how long one cache line takes to go from
//! the first measured CPU to the second and back.
//!
//! On a virtual machine the hypervisor decides where the vCPUs run, and it
//! moves them. On the machine these figures come from, the round trip is about
//! 60-90 ns for some stretches and about 310-450 ns for others (the two vCPUs
//! then sit far apart), which can last seconds or minutes, and in the slow
//! stretches a raw memif link (testpmd txonly → rxonly) moves 3-9 × less. Every
//! run of a cell measures it before, during ([`state_watch`](crate::state_watch))
//! and after, so each figure says which machine it was taken on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Bounces per measurement at most: about 20-90 ms on the machine above.
const BOUNCES: u64 = 200_000;
/// A measurement stops after this long whatever the count (a CPU shared with
/// other work makes each bounce wait for the scheduler).
const BUDGET: Duration = Duration::from_millis(250);
/// The line's value that tells the answering thread to stop.
const DONE: u64 = u64::MAX;

/// A cache line on its own, so the bounce measures only this line's moves.
#[repr(align(128))]
struct Line(AtomicU64);

/// The first two CPUs this process may run on (the experiments pin their two
/// sides to CPUs 0 and 1, the first two on a machine of their own).
fn two_cpus() -> Option<(usize, usize)> {
    // SAFETY: `set` is a plain bitmask on the stack, zeroed, filled by
    // sched_getaffinity with at most `size_of::<cpu_set_t>()` bytes and read
    // with CPU_ISSET below that size.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        set
    };
    let limit = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `cpu` < the set's size in bits.
    let mut cpus = (0..limit).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) });
    Some((cpus.next()?, cpus.next()?))
}

/// Pins the calling thread to `cpu`; false when the machine refuses.
fn pin(cpu: usize) -> bool {
    // SAFETY: `set` is a plain bitmask on the stack, zeroed and then filled by
    // the libc macros (`cpu` comes from the process's own affinity mask, so it
    // lies inside the set); sched_setaffinity reads `size_of::<cpu_set_t>()`
    // bytes of it and changes only the calling thread's affinity (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// How a measurement runs: how many bounces at most, for how long, and whether
/// its two threads take the CPUs from whatever else runs there.
#[derive(Debug, Clone, Copy)]
pub struct Bounces {
    /// Bounces at most.
    pub count: u64,
    /// The measurement stops after this long whatever the count.
    pub budget: Duration,
    /// Both threads run under `SCHED_FIFO` (pinned first, then raised), so a
    /// busy-polling process on the same CPUs waits while the line bounces: the
    /// figure is the machine's, not the scheduler's. Refused without the
    /// privilege (`CAP_SYS_NICE`): the measurement is then not taken.
    pub realtime: bool,
}

/// The measurement between runs: up to 200,000 bounces (about 20-90 ms on the
/// machine above), at ordinary priority (nothing else runs then).
pub const BETWEEN_RUNS: Bounces = Bounces {
    count: BOUNCES,
    budget: BUDGET,
    realtime: false,
};

/// The measurement during a run: 20,000 bounces (1-7 ms on the machine above)
/// that preempt the run's pollers for that long.
pub const DURING_RUN: Bounces = Bounces {
    count: 20_000,
    budget: Duration::from_millis(30),
    realtime: true,
};

/// How long a prioritized thread waits for its partner to be pinned and raised
/// before it gives up (the partner may first wait for the scheduler).
const HANDSHAKE: Duration = Duration::from_secs(1);

/// The `SCHED_FIFO` priority of a prioritized measurement (above any ordinary
/// thread, below the kernel's own real-time threads).
const FIFO_PRIORITY: libc::c_int = 10;

/// Raises the calling thread to `SCHED_FIFO`; false when refused.
fn raise() -> bool {
    let param = libc::sched_param {
        sched_priority: FIFO_PRIORITY,
    };
    // SAFETY: `param` is a valid sched_param on the stack that the call only
    // reads; pid 0 changes the calling thread alone.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// The mean round trip of a cache line between the first two CPUs this process
/// may use, in nanoseconds (up to 200,000 bounces); `None` with fewer than two
/// CPUs, when a thread cannot be pinned, or when no bounce completed within the
/// time budget.
///
/// Prioritized where allowed: a process of the run before that is still on its
/// way out (a peer tool tearing down) would otherwise take turns with the
/// bounce, and one such measurement read 8 ms.
pub fn round_trip_ns() -> Option<f64> {
    measure(Bounces {
        realtime: true,
        ..BETWEEN_RUNS
    })
    .or_else(|| measure(BETWEEN_RUNS))
}

/// A round trip measured as `how` says; `None` as for [`round_trip_ns`], and
/// when a prioritized measurement is refused or its partner never came.
///
/// A prioritized measurement pins each thread first and raises it after, and
/// the two wait for each other before the clock starts: a thread raised while
/// its partner still waits for the same CPU would keep it off that CPU.
pub fn measure(how: Bounces) -> Option<f64> {
    let (first, second) = two_cpus()?;
    let line = Line(AtomicU64::new(0));
    // Threads ready to bounce (pinned, and raised when asked for).
    let ready = AtomicU64::new(0);
    let prepare = |cpu: usize| -> bool {
        if !pin(cpu) || (how.realtime && !raise()) {
            return false;
        }
        ready.fetch_add(1, Ordering::AcqRel);
        let waiting = Instant::now();
        while ready.load(Ordering::Acquire) < 2 {
            if waiting.elapsed() > HANDSHAKE || line.0.load(Ordering::Acquire) == DONE {
                return false;
            }
            if how.realtime {
                // The partner may still be waiting for this CPU (it is pinned
                // once it runs): a real-time thread's yield would not let an
                // ordinary one run, a sleep does.
                std::thread::sleep(Duration::from_micros(50));
            } else {
                std::hint::spin_loop();
            }
        }
        true
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            if !prepare(second) {
                // Tells a partner waiting in the handshake not to wait longer.
                line.0.store(DONE, Ordering::Release);
                return;
            }
            // Answers each odd value with the next one, until told to stop. The
            // answer replaces only the value it answers: a plain store could
            // overwrite a DONE stored meanwhile (the measurer gave up waiting
            // while this thread was descheduled) and spin for ever.
            let started = Instant::now();
            loop {
                match line.0.load(Ordering::Acquire) {
                    DONE => return,
                    v if v % 2 == 1 => {
                        let _ =
                            line.0
                                .compare_exchange(v, v + 1, Ordering::AcqRel, Ordering::Acquire);
                    }
                    // A prioritized thread never outlives its budget, whatever
                    // happened to its partner.
                    _ if how.realtime && started.elapsed() > 2 * how.budget + HANDSHAKE => return,
                    _ => std::hint::spin_loop(),
                }
            }
        });
        let measured = s
            .spawn(|| {
                if !prepare(first) {
                    line.0.store(DONE, Ordering::Release);
                    return None;
                }
                let started = Instant::now();
                let mut done = 0u64;
                'bounces: while done < how.count {
                    line.0.store(2 * done + 1, Ordering::Release);
                    while line.0.load(Ordering::Acquire) != 2 * done + 2 {
                        if started.elapsed() > how.budget {
                            break 'bounces;
                        }
                        std::hint::spin_loop();
                    }
                    done += 1;
                }
                let took = started.elapsed();
                line.0.store(DONE, Ordering::Release);
                (done > 0).then(|| took.as_secs_f64() * 1e9 / done as f64)
            })
            .join()
            .ok()
            .flatten();
        line.0.store(DONE, Ordering::Release);
        measured
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_round_trip_is_measured_when_there_are_two_cpus() {
        let rt = round_trip_ns();
        assert_eq!(rt.is_some(), two_cpus().is_some(), "{rt:?}");
        if let Some(ns) = rt {
            // Two moves of a line at least; at most the whole budget.
            assert!(ns > 1.0 && ns <= BUDGET.as_nanos() as f64 * 1.5, "{ns}");
        }
    }
}
