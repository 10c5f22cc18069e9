//! Polling an I/O loop on a real core: read the clock, poll the loop, feed the
//! load estimator, and when the loop is idle apply the idle policy (spin, then
//! sleep in doubling steps, never past the loop's next deadline). A core of its
//! own (a std thread or a DPDK lcore) runs [`run`]; in run-to-completion mode the
//! application's threads take [`Poller::step`]s inside their stream calls
//! (`super::caller`).

use std::time::{Duration, Instant};

use super::cycles;
use super::io_loop::{IoLoop, Next};
use super::stats::LoadPeriodEnd;
use super::IdlePolicy;

/// Polls `lp` until it stops (shutdown finished).
pub(crate) fn run(mut lp: IoLoop, idle: IdlePolicy) {
    let mut p = Poller::new(idle);
    while p.step(&mut lp).0 != Next::Stopped {}
}

/// The timer slack a polling thread asks for, nanoseconds.
const TIMER_SLACK_NS: libc::c_ulong = 1_000;

/// Lets the calling thread's short sleeps end on time: Linux rounds a sleep up
/// by the thread's timer slack (50 µs by default), so the back-off's first 1 µs
/// naps lasted over 50 µs and every message that arrived while a loop napped
/// waited that long (p90 of spaced-out round trips over memif: 115 µs with the
/// back-off, 8 µs busy-polling). Once per thread.
fn tighten_timer_slack() {
    thread_local! {
        static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if !DONE.with(|d| d.replace(true)) {
        // SAFETY: PR_SET_TIMERSLACK takes an unsigned long by value and changes
        // only the calling thread's slack.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0) };
    }
}

/// The idle policy's state between polls.
pub(crate) struct Poller {
    idle: IdlePolicy,
    idle_run: u32,
    sleep: Duration,
}

impl Poller {
    pub fn new(idle: IdlePolicy) -> Self {
        Self {
            idle,
            idle_run: 0,
            sleep: Duration::from_micros(1),
        }
    }

    /// One poll at the current time with the load accounting, then, when the loop
    /// is idle, the idle policy's pause. Says when the loop wants the next poll,
    /// and the time the poll ran at.
    pub fn step(&mut self, lp: &mut IoLoop) -> (Next, Instant) {
        let now = Instant::now();
        let tsc = cycles::now();
        let polled = lp.poll_measured(now, |lp, datagrams, publication| {
            lp.estimator_mut().on_poll(tsc, datagrams as u32);
            match publication {
                None => {}
                Some(LoadPeriodEnd::TransferEnded) => {
                    // The iteration that ended the transfer ends here, so the
                    // transfer's report counts its datagrams; the time until the
                    // next poll counts as an empty poll.
                    let t = cycles::now();
                    lp.estimator_mut().on_poll(t, 0);
                    lp.close_load_period(t, LoadPeriodEnd::TransferEnded);
                }
                // This iteration belongs to the next period (the first of a
                // transfer that begins).
                Some(p) => lp.close_load_period(tsc, p),
            }
        });
        let deadline = match polled.next {
            Next::Idle(t) => t,
            next => {
                self.idle_run = 0;
                self.sleep = Duration::from_micros(1);
                return (next, now);
            }
        };
        self.idle_run = self.idle_run.saturating_add(1);
        if let IdlePolicy::Backoff {
            spin_iterations,
            max_sleep,
        } = self.idle
        {
            if self.idle_run > spin_iterations {
                let s = self.sleep.min(deadline.saturating_duration_since(now));
                if !s.is_zero() {
                    tighten_timer_slack();
                    std::thread::sleep(s);
                    lp.note_idle_sleep();
                    // Slept on purpose: idle time, not time taken by others.
                    lp.estimator_mut().on_idle(cycles::now());
                }
                self.sleep = (self.sleep * 2).min(max_sleep);
            }
        }
        (polled.next, now)
    }
}
