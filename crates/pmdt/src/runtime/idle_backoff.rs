//! What a poll-mode loop does between polls that found nothing to do: spin a
//! little, then give the core to whoever else wants it (`sched_yield`) while
//! traffic is flowing, and sleep in doubling steps only once the loop has been
//! quiet for a while (never past its next deadline). Where the link can say
//! when a datagram comes (a kernel socket, a TAP queue's interrupt), the I/O
//! loop's poller parks on it instead, from a quarter of a millisecond after its
//! last work, until there is something to do (see `doorbell`, the wake path).
//!
//! Yielding rather than napping while traffic flows is what lets several pollers
//! share cores. Measured through `pmdt-bench loss` (1 Gbit/s, 10 ms, lossless:
//! sender, receiver and `pmdt-wanem` polling on two cores), spinning 256 empty
//! polls and then napping from 1 µs delivered 732–757 Mbit/s: at 83,000 packets
//! a second no loop ever reached its first nap, all three spun, and the
//! scheduler took the emulator off its core for up to 12 ms at a time. Each nap
//! also cost a timer and two context switches (three quarters of the sender's
//! CPU time was in the kernel's timer code). Yielding after 16 empty polls
//! delivered 931 Mbit/s: a loop alone on its core yields to nobody and keeps
//! polling; one sharing a core hands it over as soon as it is idle.

use std::time::{Duration, Instant};

/// What the I/O loop does when there is nothing to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdlePolicy {
    /// Poll continuously (lowest latency; owns a core).
    BusyPoll,
    /// After `spin_iterations` empty polls, yield the CPU between polls (other
    /// threads ready on the core run, else the poll comes back at once) while the
    /// loop did work within `yield_for`; after that, sleep in doubling steps from
    /// 1 µs up to `max_sleep`, never past the loop's next timer. An I/O loop whose
    /// link offers a wake path (kernel UDP, TAP) parks instead of yielding or
    /// napping once it has done nothing for 250 µs: it sleeps until a datagram,
    /// an application's request or its next timer (looking around at least
    /// every 100 ms, its statistics period): next to no CPU while idle.
    Backoff {
        /// Empty polls in a row before the first yield.
        spin_iterations: u32,
        /// How long after its last work the loop keeps yielding rather than
        /// sleeping.
        yield_for: Duration,
        /// Longest single sleep.
        max_sleep: Duration,
    },
}

impl Default for IdlePolicy {
    fn default() -> Self {
        IdlePolicy::Backoff {
            spin_iterations: 16,
            yield_for: Duration::from_millis(2),
            max_sleep: Duration::from_micros(100),
        }
    }
}

/// What [`IdleBackoff::idle`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    /// Nothing: the loop polls again at once.
    Spun,
    /// Offered the core to other threads (it may have come back at once).
    Yielded,
    /// Slept this long (asked for; the kernel may add a little).
    Slept(Duration),
}

/// The idle policy's state between polls of one loop.
#[derive(Debug, Clone)]
pub struct IdleBackoff {
    policy: IdlePolicy,
    /// Empty polls since the last one that did work.
    idle_run: u32,
    /// When the last poll that did work ran (None: never).
    last_work: Option<Instant>,
    /// The next sleep's length once sleeping.
    sleep: Duration,
}

/// The first sleep of a quiet loop.
const FIRST_SLEEP: Duration = Duration::from_micros(1);

impl IdleBackoff {
    /// A loop that has not polled yet.
    pub fn new(policy: IdlePolicy) -> Self {
        Self {
            policy,
            idle_run: 0,
            last_work: None,
            sleep: FIRST_SLEEP,
        }
    }

    /// The last poll (at `now`) did work.
    pub fn worked(&mut self, now: Instant) {
        self.idle_run = 0;
        self.last_work = Some(now);
        self.sleep = FIRST_SLEEP;
    }

    /// How long the loop has done nothing, as of `now` (None: it never worked).
    pub fn quiet_for(&self, now: Instant) -> Option<Duration> {
        self.last_work.map(|w| now.saturating_duration_since(w))
    }

    /// What to do after an empty poll at `now`, the loop's next timer being at
    /// `deadline` (None: no timer), without doing it.
    pub fn plan(&mut self, now: Instant, deadline: Option<Instant>) -> Pause {
        let IdlePolicy::Backoff {
            spin_iterations,
            yield_for,
            max_sleep,
        } = self.policy
        else {
            return Pause::Spun;
        };
        self.idle_run = self.idle_run.saturating_add(1);
        if self.idle_run <= spin_iterations {
            return Pause::Spun;
        }
        if deadline.is_some_and(|d| d <= now) {
            return Pause::Spun;
        }
        let busy_lately = self
            .last_work
            .is_some_and(|w| now.saturating_duration_since(w) < yield_for);
        if busy_lately {
            return Pause::Yielded;
        }
        let s = deadline.map_or(self.sleep, |d| self.sleep.min(d - now));
        self.sleep = (self.sleep * 2).min(max_sleep);
        Pause::Slept(s)
    }

    /// After an empty poll at `now`: spins, yields or sleeps as the policy says
    /// ([`plan`](Self::plan)), and says which.
    pub fn idle(&mut self, now: Instant, deadline: Option<Instant>) -> Pause {
        let p = self.plan(now, deadline);
        match p {
            Pause::Spun => {}
            Pause::Yielded => std::thread::yield_now(),
            Pause::Slept(s) => nap(s),
        }
        p
    }
}

/// Sleeps `s`, to the microsecond (see [`tighten_timer_slack`]).
pub(crate) fn nap(s: Duration) {
    tighten_timer_slack();
    std::thread::sleep(s);
}

/// The timer slack a polling thread asks for, nanoseconds.
const TIMER_SLACK_NS: libc::c_ulong = 1_000;

/// Lets the calling thread's short sleeps end on time: Linux rounds a sleep up
/// by the thread's timer slack (50 µs by default), so the back-off's first 1 µs
/// naps lasted over 50 µs and every message that arrived while a loop napped
/// waited that long (p90 of spaced-out round trips over memif: 115 µs with the
/// back-off, 8 µs busy-polling). Once per thread.
pub(crate) fn tighten_timer_slack() {
    thread_local! {
        static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if !DONE.with(|d| d.replace(true)) {
        // SAFETY: PR_SET_TIMERSLACK takes an unsigned long by value and changes
        // only the calling thread's slack.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> IdlePolicy {
        IdlePolicy::Backoff {
            spin_iterations: 2,
            yield_for: Duration::from_millis(1),
            max_sleep: Duration::from_micros(8),
        }
    }

    #[test]
    fn busy_poll_never_pauses() {
        let mut b = IdleBackoff::new(IdlePolicy::BusyPoll);
        let t = Instant::now();
        for _ in 0..1000 {
            assert_eq!(b.plan(t, None), Pause::Spun);
        }
    }

    #[test]
    fn spins_then_yields_while_work_is_recent() {
        let mut b = IdleBackoff::new(policy());
        let t = Instant::now();
        b.worked(t);
        assert_eq!(b.plan(t, None), Pause::Spun);
        assert_eq!(b.plan(t, None), Pause::Spun);
        let later = t + Duration::from_micros(999);
        assert_eq!(b.plan(later, None), Pause::Yielded);
        // Work starts the spin over.
        b.worked(later);
        assert_eq!(b.plan(later, None), Pause::Spun);
    }

    #[test]
    fn a_quiet_loop_sleeps_in_doubling_steps_up_to_the_cap() {
        let mut b = IdleBackoff::new(policy());
        let t = Instant::now();
        b.worked(t);
        let quiet = t + Duration::from_millis(1);
        let pauses: Vec<_> = (0..7).map(|_| b.plan(quiet, None)).collect();
        let us = Duration::from_micros;
        assert_eq!(
            pauses,
            [
                Pause::Spun,
                Pause::Spun,
                Pause::Slept(us(1)),
                Pause::Slept(us(2)),
                Pause::Slept(us(4)),
                Pause::Slept(us(8)),
                Pause::Slept(us(8)),
            ]
        );
    }

    #[test]
    fn a_loop_that_never_worked_sleeps_after_its_spin() {
        let mut b = IdleBackoff::new(policy());
        let t = Instant::now();
        b.plan(t, None);
        b.plan(t, None);
        assert_eq!(b.plan(t, None), Pause::Slept(FIRST_SLEEP));
    }

    #[test]
    fn sleeps_never_pass_the_next_timer() {
        let mut b = IdleBackoff::new(policy());
        let t = Instant::now();
        for _ in 0..5 {
            b.plan(t, None);
        }
        let due = t + Duration::from_micros(3);
        assert_eq!(b.plan(t, Some(due)), Pause::Slept(Duration::from_micros(3)));
        // A timer already due: poll again at once.
        assert_eq!(b.plan(t, Some(t)), Pause::Spun);
    }

    #[test]
    fn idle_does_what_plan_says() {
        let mut b = IdleBackoff::new(policy());
        let t = Instant::now();
        b.worked(t);
        assert_eq!(b.idle(t, None), Pause::Spun);
        assert_eq!(b.idle(t, None), Pause::Spun);
        assert_eq!(b.idle(t, None), Pause::Yielded);
        let before = Instant::now();
        let quiet = t + Duration::from_millis(5);
        assert_eq!(b.idle(quiet, None), Pause::Slept(FIRST_SLEEP));
        assert!(before.elapsed() >= FIRST_SLEEP);
    }
}
