//! The machine's state as a figure: how long one cache line takes to go from
//! the first measured CPU to the second and back.
//!
//! On a virtual machine the hypervisor decides where the vCPUs run, and it
//! moves them. On the machine these figures come from, the round trip is about
//! 90 ns for long stretches and about 430 ns for others (the two vCPUs then sit
//! far apart), and in the slow stretches a raw memif link (testpmd txonly →
//! rxonly) moves 3.5 instead of 21 Mpps. Every run of a cell measures it before
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

/// The mean round trip of a cache line between the first two CPUs this process
/// may use, in nanoseconds; `None` with fewer than two CPUs, when a thread
/// cannot be pinned, or when no bounce completed within the time budget.
pub fn round_trip_ns() -> Option<f64> {
    let (first, second) = two_cpus()?;
    let line = Line(AtomicU64::new(0));
    std::thread::scope(|s| {
        s.spawn(|| {
            if !pin(second) {
                return;
            }
            // Answers each odd value with the next one, until told to stop. The
            // answer replaces only the value it answers: a plain store could
            // overwrite a DONE stored meanwhile (the measurer gave up waiting
            // while this thread was descheduled) and spin for ever.
            loop {
                match line.0.load(Ordering::Acquire) {
                    DONE => return,
                    v if v % 2 == 1 => {
                        let _ =
                            line.0
                                .compare_exchange(v, v + 1, Ordering::AcqRel, Ordering::Acquire);
                    }
                    _ => std::hint::spin_loop(),
                }
            }
        });
        let measured = s
            .spawn(|| {
                if !pin(first) {
                    return None;
                }
                let started = Instant::now();
                let mut done = 0u64;
                'bounces: while done < BOUNCES {
                    line.0.store(2 * done + 1, Ordering::Release);
                    while line.0.load(Ordering::Acquire) != 2 * done + 2 {
                        if started.elapsed() > BUDGET {
                            break 'bounces;
                        }
                        std::hint::spin_loop();
                    }
                    done += 1;
                }
                let took = started.elapsed();
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
