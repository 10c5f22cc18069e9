//! An I/O loop on a core of its own (a std thread or a DPDK lcore): it reads the
//! clock, polls the loop, feeds the load estimator, and when the loop is idle
//! applies the idle policy (spin, then sleep in doubling steps, never past the
//! loop's next deadline).

use std::time::{Duration, Instant};

use super::cycles;
use super::io_loop::{IoLoop, Next};
use super::IdlePolicy;

/// Polls `lp` until it stops (shutdown finished).
pub(crate) fn run(mut lp: IoLoop, idle: IdlePolicy) {
    let mut idle_run = 0u32;
    let mut sleep = Duration::from_micros(1);
    loop {
        let now = Instant::now();
        let tsc = cycles::now();
        if lp.publish_due(now) {
            lp.refresh_load(tsc);
        }
        let live_before = lp.live();
        let polled = lp.poll(now);
        lp.estimator_mut().on_poll(tsc, polled.datagrams as u32);
        if live_before > 0 && lp.live() == 0 {
            // A transfer ended: the load report covers it (the loop published
            // its counters already).
            lp.refresh_load(cycles::now());
            lp.publish(now);
        }
        let deadline = match polled.next {
            Next::Stopped => return,
            Next::Immediately => {
                idle_run = 0;
                sleep = Duration::from_micros(1);
                continue;
            }
            Next::Idle(t) => t,
        };
        idle_run = idle_run.saturating_add(1);
        if let IdlePolicy::Backoff {
            spin_iterations,
            max_sleep,
        } = idle
        {
            if idle_run > spin_iterations {
                let s = sleep.min(deadline.saturating_duration_since(now));
                if !s.is_zero() {
                    std::thread::sleep(s);
                    lp.note_idle_sleep();
                    // Slept on purpose: idle time, not time taken by others.
                    lp.estimator_mut().on_idle(cycles::now());
                }
                sleep = (sleep * 2).min(max_sleep);
            }
        }
    }
}
