//! Polling an I/O loop on a real core: read the clock, poll the loop, feed the
//! load estimator, and when the loop is idle apply the idle policy
//! ([`IdleBackoff`]: spin, yield while traffic flows, then sleep: parked on the
//! wake path where the link offers one, else in naps). A core of its
//! own (a std thread or a DPDK lcore) runs [`run`]; in run-to-completion mode the
//! application's threads take [`Poller::step`]s inside their stream calls
//! (`super::caller`).

use std::time::{Duration, Instant};

use super::cycles;
use super::doorbell::Parked;
use super::idle_backoff::{self, IdleBackoff, IdlePolicy, Pause};
use super::io_loop::{IoLoop, Next};
use super::stats::LoadPeriodEnd;

/// Polls `lp` until it stops (shutdown finished).
pub(crate) fn run(mut lp: IoLoop, idle: IdlePolicy) {
    let mut p = Poller::new(idle);
    while p.step(&mut lp, WhenQuiet::Park).0 != Next::Stopped {}
}

/// How long a loop with a wake path yields after its last work before it
/// parks (the idle policy's `yield_for`, 2 ms by default, applies to naps).
/// Over kernel UDP at 200 round trips a second, yielding for 2 ms after each
/// message kept 37 % of the echoing receiver's core busy, and this 6.7 %.
/// Parking at once took 1.3-2.6 % with round trips no slower, but a flow
/// paced 50-250 µs apart would then sleep on a timer between its packets,
/// where it yielded before (not measured): traffic denser than this keeps
/// the old behaviour.
const PARK_AFTER: Duration = Duration::from_micros(250);

/// What a step does once the idle policy says to sleep (the loop has been
/// quiet for a while).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WhenQuiet {
    /// Park until there is work or the loop's next timer: a thread of its own.
    Park,
    /// Park, but for at most this long: a caller waiting on a condition it
    /// looks at after each step (a timeout among them).
    ParkAtMost(Duration),
    /// Nap (at most the idle policy's longest sleep) and return: a caller that
    /// goes on with its own work (an opportunistic poll must not hold it up).
    Nap,
    /// Return at once, pausing not at all and counting toward no pause: a
    /// non-blocking call's poll (`try_read`, `try_write`), which an application
    /// may make for each of many streams in turn; it waits through
    /// [`super::Poller::wait`] when none moved.
    Return,
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
    pub fn step(&mut self, lp: &mut IoLoop, quiet: WhenQuiet) -> (Next, Instant) {
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
            Next::Idle(_) if quiet == WhenQuiet::Return => return (polled.next, now),
            Next::Idle(t) => t,
            next => {
                self.idle.worked(now);
                return (next, now);
            }
        };
        let pause = self.idle.plan(now, Some(deadline));
        let until = match quiet {
            WhenQuiet::Park => Some(deadline),
            WhenQuiet::ParkAtMost(d) => Some(deadline.min(now + d)),
            WhenQuiet::Nap | WhenQuiet::Return => None,
        };
        // Past the spin: sleep until there is something to do where the link
        // can say when a datagram comes (the wake path), else yield while
        // traffic flowed lately and nap once quiet. With a wake path the
        // yielding stops after `PARK_AFTER` instead of the policy's 2 ms.
        let wants_park = match pause {
            Pause::Spun => false,
            Pause::Yielded => self.idle.quiet_for(now).is_none_or(|q| q >= PARK_AFTER),
            Pause::Slept(_) => true,
        };
        let parked = match until {
            Some(u) if wants_park => {
                idle_backoff::tighten_timer_slack();
                lp.park(now, u)
            }
            _ => Parked::Unavailable,
        };
        match (pause, parked) {
            (Pause::Spun, _) | (_, Parked::NewsWaiting) => {}
            (_, Parked::Woken | Parked::TimedOut) => lp.note_idle_sleep(),
            (Pause::Yielded, Parked::Unavailable) => std::thread::yield_now(),
            (Pause::Slept(nap), Parked::Unavailable) => {
                lp.note_idle_sleep();
                idle_backoff::nap(nap);
            }
        }
        if pause != Pause::Spun {
            // Paused on purpose: idle time, not time taken by others.
            lp.estimator_mut().on_idle(cycles::now());
        }
        (polled.next, now)
    }
}
