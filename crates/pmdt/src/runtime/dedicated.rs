//! Polling an I/O loop on a real core: read the clock, poll the loop, feed the
//! load estimator, and when the loop is idle apply the idle policy
//! ([`IdleBackoff`]: spin, yield while traffic flows, then sleep). A core of its
//! own (a std thread or a DPDK lcore) runs [`run`]; in run-to-completion mode the
//! application's threads take [`Poller::step`]s inside their stream calls
//! (`super::caller`).

use std::time::Instant;

use super::cycles;
use super::idle_backoff::{IdleBackoff, IdlePolicy, Pause};
use super::io_loop::{IoLoop, Next};
use super::stats::LoadPeriodEnd;

/// Polls `lp` until it stops (shutdown finished).
pub(crate) fn run(mut lp: IoLoop, idle: IdlePolicy) {
    let mut p = Poller::new(idle);
    while p.step(&mut lp).0 != Next::Stopped {}
}

/// The idle policy's state between polls.
pub(crate) struct Poller {
    idle: IdleBackoff,
}

impl Poller {
    pub fn new(idle: IdlePolicy) -> Self {
        Self {
            idle: IdleBackoff::new(idle),
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
                self.idle.worked(now);
                return (next, now);
            }
        };
        let pause = self.idle.idle(now, Some(deadline));
        if let Pause::Slept(_) = pause {
            lp.note_idle_sleep();
        }
        if pause != Pause::Spun {
            // Paused on purpose: idle time, not time taken by others.
            lp.estimator_mut().on_idle(cycles::now());
        }
        (polled.next, now)
    }
}
