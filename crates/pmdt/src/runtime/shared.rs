//! State shared by an application-side stream and the I/O loop: flags set by one
//! side and read by the other (no lock on the data path), and a parker for the
//! application thread.

use std::net::SocketAddr;
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::Thread;

use arc_swap::ArcSwapOption;

use super::caller::{CallerLoop, Urgency};
use std::time::Duration;

use super::doorbell::Doorbell;

use pmdt_proto::{CloseReason, ConnectionStats};

/// Parks an application thread until the I/O loop has something for it. Neither
/// side takes a lock: the parked thread's handle is swapped in only when another
/// thread starts waiting, so a wake-up never contends with the waiter.
pub(crate) struct Waiter {
    waiting: AtomicBool,
    thread: ArcSwapOption<Thread>,
    /// The longest a first park lasts without a wake-up (a safety net).
    timeout: Duration,
    /// Parks that ended without a wake-up, over the waiter's life: each doubles
    /// the next one's timeout, up to [`MAX_QUIET_DOUBLINGS`] times. Not reset by
    /// a wake-up: the timeout only catches a lost one, and brought back to the
    /// first after every wake-up it fired between a reader's datagrams (a
    /// thousand readers at 5 ms: half the wake-ups of a 2-core host, session 77).
    quiet_parks: AtomicU32,
    /// Run-to-completion: the loop a wait polls instead of parking.
    driver: Weak<CallerLoop>,
}

/// Most doublings of the safety net's timeout for a thread that keeps waiting
/// with nothing to wake it (16 x: 80 ms by default). A thousand threads blocked
/// on idle streams looked again every 5 ms each: 200,000 wake-ups a second, the
/// whole of a 2-core host, which starved the I/O loops they were waiting on.
const MAX_QUIET_DOUBLINGS: u32 = 4;

/// How long a writer waiting for packet memory sleeps before trying again (the
/// I/O loop frees it as acknowledgements arrive).
const POOL_BACKOFF: Duration = Duration::from_micros(100);

impl Waiter {
    /// A waiter whose parks last at most `timeout` without a wake-up; with a
    /// `driver`, waits poll that loop instead.
    pub fn new(timeout: Duration, driver: Weak<CallerLoop>) -> Self {
        Self {
            waiting: AtomicBool::new(false),
            thread: ArcSwapOption::empty(),
            timeout,
            quiet_parks: AtomicU32::new(0),
            driver,
        }
    }

    /// Run-to-completion: polls the loop once (unless another thread is), so data
    /// just queued leaves and data arriving comes in while the application keeps
    /// writing or reading without waiting, never pausing there (the
    /// application waits when it has nothing to do, see `Stream::try_read`).
    /// Nothing otherwise.
    #[inline]
    pub fn nudge(&self) {
        if let Some(d) = self.driver.upgrade() {
            d.step_without_pause();
        }
    }

    /// Whether waits poll a run-to-completion loop (that has not stopped)
    /// instead of parking.
    pub fn drives_loop(&self) -> bool {
        self.driver.upgrade().is_some_and(|d| !d.stopped())
    }

    /// Waits a little for packet memory to be freed: one poll of the loop in
    /// run-to-completion mode (or, while another thread polls it, a sleep
    /// until that poll ends), a short sleep otherwise (the pipeline's writers
    /// park in the loop's queue of memory waiters instead, see
    /// [`super::memory_wait`]; this nap is for memory that looked free but
    /// could not be taken). Yielding instead, a thousand writers short of
    /// memory over kernel UDP spun on `sched_yield` with both cores and starved
    /// the thread polling the loop: 20 Mbit/s.
    pub fn backoff(&self) {
        match self.driver.upgrade() {
            Some(d) if !d.stopped() => d.drive_or_wait(),
            _ => {
                crate::link::thread_about_to_sleep();
                std::thread::sleep(POOL_BACKOFF)
            }
        }
    }

    /// Parks until `ready()` or a wake-up (or the timeout, a safety net,
    /// doubling while parks end without a wake-up). In run-to-completion mode,
    /// polls the loop until `ready()` instead.
    pub fn wait(&self, ready: impl Fn() -> bool) {
        self.wait_for(ready, true)
    }

    /// Like [`Waiter::wait`], the timeout never lengthened: for a caller that
    /// must look again regularly whatever wakes it (a group checks its lagging
    /// members when one park of another member's stream times out).
    pub fn wait_regularly(&self, ready: impl Fn() -> bool) {
        self.wait_for(ready, false)
    }

    fn wait_for(&self, ready: impl Fn() -> bool, lengthen: bool) {
        if let Some(d) = self.driver.upgrade() {
            if d.drive_until(Urgency::Data, &ready) || !d.stopped() {
                return;
            }
            // The loop has stopped (its connections are closed): nothing will
            // change; the caller sees the close.
            std::thread::sleep(POOL_BACKOFF);
            return;
        }
        let me = std::thread::current();
        if self
            .thread
            .load()
            .as_ref()
            .is_none_or(|t| t.id() != me.id())
        {
            self.thread.store(Some(Arc::new(me)));
        }
        self.waiting.store(true, Ordering::SeqCst);
        // Pairs with the fence in `wake`: either this sees the other side's update
        // in `ready()`, or the other side sees `waiting` and unparks (a token kept
        // for the park below if it comes first).
        fence(Ordering::SeqCst);
        if ready() {
            self.waiting.store(false, Ordering::SeqCst);
            return;
        }
        crate::link::thread_about_to_sleep();
        let quiet = if lengthen {
            self.quiet_parks.load(Ordering::Relaxed)
        } else {
            0
        };
        std::thread::park_timeout(self.park_timeout(quiet));
        // `wake` clears the flag before it unparks: still set, nothing woke us.
        let woken = !self.waiting.swap(false, Ordering::SeqCst);
        if lengthen && !woken {
            self.quiet_parks
                .store(quiet.saturating_add(1), Ordering::Relaxed);
        }
    }

    /// The safety net's timeout after `quiet` parks that no wake-up ended:
    /// doubled per such park, at most [`MAX_QUIET_DOUBLINGS`] times.
    fn park_timeout(&self, quiet: u32) -> Duration {
        self.timeout
            .checked_mul(1 << quiet.min(MAX_QUIET_DOUBLINGS))
            .unwrap_or(self.timeout)
    }

    /// Wakes the parked thread, if any (cheap when nobody waits); whether a
    /// thread was waiting.
    #[inline]
    pub fn wake(&self) -> bool {
        fence(Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) && self.waiting.swap(false, Ordering::SeqCst) {
            if let Some(t) = self.thread.load().as_ref() {
                t.unpark();
            }
            return true;
        }
        false
    }
}

/// A counter on a cache line of its own, written by one thread only.
#[derive(Default)]
#[repr(align(128))]
struct OwnLine(AtomicU64);

impl OwnLine {
    /// Adds `n` (the one writing thread only: a load and a store, no locked
    /// read-modify-write).
    #[inline]
    fn add(&self, n: u64) {
        self.0
            .store(self.0.load(Ordering::Relaxed) + n, Ordering::Release);
    }
}

/// Bytes in a writer's ring to the I/O loop, as two counters that each side
/// writes alone (the writer what it queued, the loop what it took): neither
/// side's update contends with the other's, as one shared counter updated per
/// packet buffer did (it dominated the writer's own time).
#[derive(Default)]
pub(crate) struct RingBytes {
    queued: OwnLine,
    taken: OwnLine,
}

impl RingBytes {
    /// Bytes in the ring. The loop may have taken buffers the writer has not
    /// counted yet (it counts after pushing): never below zero.
    #[inline]
    pub fn held(&self) -> u64 {
        let taken = self.taken.0.load(Ordering::Acquire);
        self.queued.0.load(Ordering::Acquire).saturating_sub(taken)
    }

    /// The writer queued `n` more bytes (the writer only).
    #[inline]
    pub fn queued(&self, n: u64) {
        self.queued.add(n);
    }

    /// The I/O loop took `n` bytes out (the loop only).
    #[inline]
    pub fn taken(&self, n: u64) {
        self.taken.add(n);
    }
}

/// Per-stream shared state.
pub(crate) struct StreamShared {
    pub id: usize,
    pub remote: SocketAddr,
    pub connected: AtomicBool,
    /// Set after every byte of the peer's stream was pushed to the application ring.
    pub peer_finished: AtomicBool,
    pub closed_flag: AtomicBool,
    pub closed: Mutex<Option<CloseReason>>,
    /// Application: no more data after what is in the ring.
    pub finish: AtomicBool,
    /// Application: drop incoming data (closing without reading).
    pub discard: AtomicBool,
    /// Application: abort with code (bit 32 set = requested).
    pub reset: AtomicU64,
    /// Application dropped its handle.
    pub dropped: AtomicBool,
    /// In the I/O loop's doorbell queue.
    pub queued: AtomicBool,
    /// In the I/O loop's queue of writers waiting for packet memory (see
    /// [`super::memory_wait`]).
    pub awaits_memory: AtomicBool,
    /// Bytes the application has read out of the receive ring: the I/O loop hands
    /// over at most a budget beyond it, so a slow reader pins bounded packet memory.
    pub app_read: AtomicU64,
    /// The I/O loop stopped handing over data until the application reads: the
    /// reader rings the doorbell once it has.
    pub wake_on_read: AtomicBool,
    /// Bytes of application data in the ring to the I/O loop (packet memory the
    /// writer holds) and the most it may hold: its share of the pool.
    pub ring_bytes: RingBytes,
    pub write_ahead: AtomicU64,
    /// Stream bytes per packet buffer a writer fills: the connection's full
    /// datagram payload (set by the I/O loop once the handshake told the
    /// peer's size), so that every buffer leaves as one full datagram.
    pub chunk: AtomicUsize,
    pub waiter: Waiter,
    pub stats: Mutex<ConnectionStats>,
    /// The id telemetry lists the connection under (0: not handed out yet).
    pub directory_id: AtomicU64,
    pub doorbell: Arc<Doorbell>,
}

impl StreamShared {
    pub fn new(
        id: usize,
        remote: SocketAddr,
        doorbell: Arc<Doorbell>,
        park: Duration,
        driver: Weak<CallerLoop>,
        chunk: usize,
    ) -> Self {
        Self {
            id,
            remote,
            connected: AtomicBool::new(false),
            peer_finished: AtomicBool::new(false),
            closed_flag: AtomicBool::new(false),
            closed: Mutex::new(None),
            finish: AtomicBool::new(false),
            discard: AtomicBool::new(false),
            reset: AtomicU64::new(0),
            dropped: AtomicBool::new(false),
            queued: AtomicBool::new(false),
            awaits_memory: AtomicBool::new(false),
            app_read: AtomicU64::new(0),
            wake_on_read: AtomicBool::new(false),
            ring_bytes: RingBytes::default(),
            write_ahead: AtomicU64::new(u64::MAX),
            chunk: AtomicUsize::new(chunk.max(1)),
            waiter: Waiter::new(park, driver),
            stats: Mutex::new(ConnectionStats::default()),
            directory_id: AtomicU64::new(0),
            doorbell,
        }
    }

    /// Stream bytes per packet buffer a writer fills (see `chunk`).
    #[inline]
    pub fn chunk(&self) -> usize {
        self.chunk.load(Ordering::Relaxed)
    }

    /// Tells the I/O loop this stream has something for it. Cheap while the
    /// stream is queued already: a fence and a read, no write to the shared flag.
    #[inline]
    pub fn ring_doorbell(&self) {
        // Pairs with the fence in `IoLoop::drain_app` after it clears `queued`:
        // either the loop sees what was pushed before this call, or this sees the
        // flag cleared and queues the stream again.
        fence(Ordering::SeqCst);
        if !self.queued.load(Ordering::Relaxed) && !self.queued.swap(true, Ordering::AcqRel) {
            self.doorbell.ring(self.id);
        }
    }

    /// Queues this stream's writer for packet memory (once: it stays queued
    /// until the loop wakes it); false when it could not be queued.
    pub fn await_memory(&self) -> bool {
        if self.awaits_memory.swap(true, Ordering::AcqRel) {
            return true;
        }
        let queued = self.doorbell.memory_waiters().push(self.id);
        if !queued {
            self.awaits_memory.store(false, Ordering::Release);
        }
        queued
    }

    /// The application read `n` bytes: tells the I/O loop if it waits for that.
    #[inline]
    pub fn note_read(&self, n: usize) {
        self.app_read.fetch_add(n as u64, Ordering::SeqCst);
        // Pairs with the loop's fence in `IoLoop::deliver_to_app`: either the loop
        // sees this read when it re-checks, or this sees its flag.
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.wake_on_read.load(Ordering::Relaxed)
            && self.wake_on_read.swap(false, Ordering::AcqRel)
        {
            self.ring_doorbell();
        }
    }

    /// Sets how much the writer's ring may hold (the I/O loop only); whether
    /// that grew, so that a writer waiting for room may now have it. A share
    /// that shrank gives a waiting writer nothing: waking it then (on every
    /// accept, every parked thread) cost 1000 pipeline flows seconds to
    /// connect (session 78).
    #[inline]
    pub fn set_write_ahead(&self, bytes: u64) -> bool {
        self.write_ahead.swap(bytes, Ordering::Relaxed) < bytes
    }

    /// Whether the writer may queue more data (its ring's share of packet memory).
    #[inline]
    pub fn may_write(&self) -> bool {
        self.ring_bytes.held() < self.write_ahead.load(Ordering::Relaxed)
    }

    /// Whether a writer that found its ring full resumes: once half the ring is
    /// free again, in slots (`free_slots` of `capacity`) and in bytes. The writer
    /// parks until then and the I/O loop wakes it only then (hysteresis): one
    /// wake-up per half ring instead of one per burst the loop takes.
    #[inline]
    pub fn writer_may_resume(&self, free_slots: usize, capacity: usize) -> bool {
        free_slots * 2 >= capacity
            && self.ring_bytes.held() <= self.write_ahead.load(Ordering::Relaxed) / 2
    }

    pub fn close_reason(&self) -> Option<CloseReason> {
        if !self.closed_flag.load(Ordering::Acquire) {
            return None;
        }
        *self.closed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tells the application how the connection ended. The first reason
    /// stays: a close that completed gracefully is not undone by what ends
    /// its closing period (a peer's Reset, a shutdown abandoning it).
    pub fn set_closed(&self, r: CloseReason) {
        self.closed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(r);
        self.closed_flag.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that keeps waiting with nothing to wake it looks again less and
    /// less often (the safety net's timeout doubles, up to a cap); neither a
    /// wake-up nor finding what it waits for brings it back.
    #[test]
    fn parks_without_a_wake_up_lengthen_the_next_one() {
        let w = Arc::new(Waiter::new(Duration::from_micros(50), Weak::new()));
        for n in 1..=2 {
            w.wait(|| false);
            assert_eq!(w.quiet_parks.load(Ordering::Relaxed), n, "unwoken park {n}");
        }
        w.wait_regularly(|| false);
        assert_eq!(
            w.quiet_parks.load(Ordering::Relaxed),
            2,
            "a regular wait neither lengthens nor counts"
        );
        w.wait(|| true);
        assert_eq!(w.quiet_parks.load(Ordering::Relaxed), 2, "ready at once");
        // Wake-ups while parked (the waker clears `waiting` first): the count
        // holds through them.
        let done = Arc::new(AtomicBool::new(false));
        let woken = Arc::new(AtomicU32::new(0));
        let waker = {
            let (w, done, woken) = (Arc::clone(&w), Arc::clone(&done), Arc::clone(&woken));
            std::thread::spawn(move || {
                while !done.load(Ordering::SeqCst) {
                    if w.waiting.load(Ordering::SeqCst) {
                        w.wake();
                        woken.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::yield_now();
                }
            })
        };
        let before = w.quiet_parks.load(Ordering::Relaxed);
        let mut held = false;
        for _ in 0..100_000 {
            let q = w.quiet_parks.load(Ordering::Relaxed);
            w.wait(|| false);
            // A park the waker woke leaves the count as it was.
            if w.quiet_parks.load(Ordering::Relaxed) == q && woken.load(Ordering::SeqCst) > 0 {
                held = true;
                break;
            }
        }
        done.store(true, Ordering::SeqCst);
        waker.join().expect("waker");
        assert!(held, "a woken park keeps the count");
        assert!(w.quiet_parks.load(Ordering::Relaxed) >= before);
        // The cap: however many unwoken parks, the timeout doubles at most
        // MAX_QUIET_DOUBLINGS times.
        for _ in 0..MAX_QUIET_DOUBLINGS + 2 {
            w.wait(|| false);
        }
        let quiet = w.quiet_parks.load(Ordering::Relaxed);
        assert!(quiet > MAX_QUIET_DOUBLINGS);
        assert_eq!(
            w.park_timeout(quiet),
            Duration::from_micros(50 << MAX_QUIET_DOUBLINGS)
        );
        assert_eq!(w.park_timeout(1), Duration::from_micros(100));
    }
}
