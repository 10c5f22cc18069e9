//! Run-to-completion: the I/O loop has no core of its own; it runs inside the
//! application's stream calls, on the application's thread ([`IoCore::Caller`]).
//! A call that would wait (a blocking `read` with nothing received, a `write` with
//! its ring full, `connect`, `accept`, `close`) polls the loop itself until it can
//! go on, instead of parking until an I/O thread wakes it. One core per side then
//! does everything: no second busy thread, no wake-ups, the data handed between
//! stream and loop stays in that core's cache. The loop, the protocol core and
//! the links are the ones the pipeline mode runs.
//!
//! Between stream calls nobody polls: an application that computes for long
//! without calling into its streams delays acknowledgements and timers (as a
//! single-threaded event loop would); [`Runtime::poll`](super::Runtime::poll)
//! runs the loop once when it wants to.
//!
//! [`IoCore::Caller`]: super::IoCore::Caller

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, TryLockError};
use std::time::{Duration, Instant};

use super::dedicated::{Poller, WhenQuiet};
use super::io_loop::{IoLoop, Next};
use super::IdlePolicy;

/// How long a control wait (accept, connect) naps while another thread drives
/// the loop.
const CONTROL_NAP: Duration = Duration::from_millis(1);
/// A control wait leaves the driving to others that drove this recently.
const RECENTLY: Duration = Duration::from_millis(1);
/// The longest a waiting thread parks in a quiet loop's step (where the link
/// offers a wake path) before it looks at what it waits for again: a timeout
/// it waits with ends at most this late. Other threads that want the loop
/// wait as long (anything that concerns them, a datagram, a write or a
/// request, wakes the loop first).
const WAITING_PARK: Duration = Duration::from_millis(10);

/// Who is waiting, and how eagerly it drives the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Urgency {
    /// A data path call (read, write, close): drives the loop.
    Data,
    /// Accept or connect: drives the loop only when no other thread has lately
    /// (a server's accepting thread must not steal the core from its flows).
    Control,
}

/// An I/O loop driven by the threads that wait on it.
pub(crate) struct CallerLoop {
    lp: Mutex<(IoLoop, Poller)>,
    stopped: AtomicBool,
    epoch: Instant,
    /// When some thread last polled, nanoseconds since `epoch`.
    last_drive: AtomicU64,
    /// Which thread that was ([`thread_token`]).
    last_driver: AtomicU64,
    /// CPU that driving threads are moved to.
    cpu: Option<usize>,
}

thread_local! {
    /// This thread was moved to its caller loop's CPU.
    static PINNED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// This thread's token (see [`thread_token`]).
    static TOKEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A number unique to the calling thread (never 0).
fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    TOKEN.with(|t| {
        if t.get() == 0 {
            t.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

impl CallerLoop {
    pub fn new(lp: IoLoop, idle: IdlePolicy, cpu: Option<usize>) -> Self {
        Self {
            lp: Mutex::new((lp, Poller::new(idle))),
            stopped: AtomicBool::new(false),
            epoch: Instant::now(),
            last_drive: AtomicU64::new(0),
            last_driver: AtomicU64::new(0),
            cpu,
        }
    }

    /// Runs `f` on the loop (e.g. to set it up), waiting for a thread driving it.
    pub fn with_loop<R>(&self, f: impl FnOnce(&mut IoLoop) -> R) -> R {
        let mut g = self.lp.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g.0)
    }

    /// Whether the loop has stopped (shut down).
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// One step of the loop if no other thread is taking one; whether one was.
    /// It naps at most (see [`WhenQuiet::Nap`]): the caller goes on.
    pub fn drive_once(&self) -> bool {
        self.step_unless_taken(WhenQuiet::Nap)
    }

    /// One step of the loop if no other thread is taking one, never pausing
    /// (see [`WhenQuiet::Return`]); whether one was.
    pub fn step_without_pause(&self) -> bool {
        self.step_unless_taken(WhenQuiet::Return)
    }

    /// One step if no other thread is taking one, with `quiet`.
    fn step_unless_taken(&self, quiet: WhenQuiet) -> bool {
        if self.stopped() {
            return false;
        }
        let mut g = match self.lp.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return false,
        };
        if let Some(cpu) = self.cpu {
            if !PINNED.with(|p| p.replace(true)) {
                super::builder::pin_to(cpu);
            }
        }
        let (lp, poller) = &mut *g;
        let (next, now) = poller.step(lp, quiet);
        if next == Next::Stopped {
            self.stopped.store(true, Ordering::Release);
        }
        let t = now.saturating_duration_since(self.epoch).as_nanos() as u64;
        self.last_drive.store(t, Ordering::Relaxed);
        self.last_driver.store(thread_token(), Ordering::Relaxed);
        true
    }

    /// One step of the loop, or, if another thread is taking one, a sleep until
    /// that step ends (it moves this thread's data too). A quiet loop's step
    /// parks for up to [`WAITING_PARK`]: the caller waits anyway.
    pub fn drive_or_wait(&self) {
        if !self.step_unless_taken(WhenQuiet::ParkAtMost(WAITING_PARK)) {
            self.wait_for_step();
        }
    }

    /// Blocks until no thread is stepping the loop (the lock's waiters sleep in
    /// the kernel, not on the CPU).
    fn wait_for_step(&self) {
        drop(self.lp.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Drives the loop until `done()` (true) or the loop stops (false).
    pub fn drive_until(&self, urgency: Urgency, mut done: impl FnMut() -> bool) -> bool {
        loop {
            if done() {
                return true;
            }
            if self.stopped() {
                return done();
            }
            if urgency == Urgency::Control && self.driven_lately() {
                std::thread::sleep(CONTROL_NAP);
                continue;
            }
            // While another thread polls (it moves our data too), sleep until
            // its step ends rather than spin: with several flows per core,
            // spinning threads took the CPU from the one driving.
            self.drive_or_wait();
        }
    }

    /// Whether another thread polled within [`RECENTLY`].
    fn driven_lately(&self) -> bool {
        if self.last_driver.load(Ordering::Relaxed) == thread_token() {
            return false;
        }
        let last = self.last_drive.load(Ordering::Relaxed);
        let now = self.epoch.elapsed().as_nanos() as u64;
        last != 0 && now.saturating_sub(last) < RECENTLY.as_nanos() as u64
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    use crate::link::memory::MemoryLink;
    use crate::link::Link;
    use crate::runtime::shared::Waiter;
    use crate::runtime::{Backend, IoCore, Runtime};

    /// A writer backing off for packet memory while another thread is inside a
    /// step of the loop waits for that step to end (sleeping on the loop's
    /// lock) instead of returning at once to try again: a thousand writers
    /// retrying at once took both cores from the thread in the step.
    #[test]
    fn backing_off_while_another_thread_polls_waits_for_its_step() {
        let a = "10.0.0.1:1000".parse().unwrap();
        let b = "10.0.0.2:2000".parse().unwrap();
        let (la, _lb) = MemoryLink::pair_with_pool(a, b, 64, 64);
        let rt = Runtime::builder()
            .backend(Backend::Links(vec![Box::new(la) as Box<dyn Link>]))
            .io_core(IoCore::Caller { cpu: None })
            .start()
            .unwrap();
        let driver = Arc::clone(rt.loops[0].driver().expect("run to completion"));
        let waiter = Waiter::new(Duration::from_millis(1), Arc::downgrade(&driver));
        let step_ended = Arc::new(AtomicBool::new(false));
        let (inside, in_step) = mpsc::channel();
        let holder = {
            let (driver, step_ended) = (Arc::clone(&driver), Arc::clone(&step_ended));
            std::thread::spawn(move || {
                driver.with_loop(|_| {
                    inside.send(()).unwrap();
                    // Long enough that returning at once would be seen.
                    std::thread::sleep(Duration::from_millis(50));
                    step_ended.store(true, Ordering::SeqCst);
                })
            })
        };
        in_step.recv().unwrap();
        waiter.backoff();
        assert!(
            step_ended.load(Ordering::SeqCst),
            "backoff returned while another thread's step was under way"
        );
        holder.join().unwrap();
        drop(waiter);
        drop(driver);
        rt.shutdown().unwrap();
    }
}
