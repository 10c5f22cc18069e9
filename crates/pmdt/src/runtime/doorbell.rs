//! How application threads tell an I/O loop they have something for it, and how
//! a quiet loop sleeps until then: the wake path.
//!
//! Streams with news go into a queue the loop drains every iteration; control
//! requests (connect, listen, shut down) go through a channel whose sends are
//! counted here. A loop with nothing to do for a while parks
//! ([`Doorbell::park`]) in `poll(2)` on an eventfd and on whatever its link
//! offers ([`WakeOn`]: a kernel socket turns readable when a datagram arrives),
//! until its next timer. Whoever rings the doorbell or sends a control request
//! writes the eventfd if the loop is parked. Without a wake path (a link with
//! no descriptor: memif, a ring, the in-memory pair) the loop naps in short
//! steps as before (`IdleBackoff`).
//!
//! Measured (docs/RESULTS.md, session 37): an idle `pmdt-recv` used 14-17 % of
//! a core napping every 100 µs (10,000 wake-ups a second), and parked 0.1-0.8 %
//! over kernel UDP and TAP; an echo server answering 200 round trips a second
//! over kernel UDP went from 68 % of a core to 7 %.
//!
//! No wake-up is lost: the loop marks itself parked, then looks at the queue
//! and the control count, then sleeps; a thread marks its news, then looks at
//! the mark (both with a sequentially consistent fence between), so at least
//! one of the two sees the other.

use std::os::fd::OwnedFd;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{SendError, Sender};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_queue::ArrayQueue;
use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags, Timespec};

use super::io_loop::Control;
use super::memory_wait::MemoryWaiters;
use crate::link::WakeOn;

/// The longest single park: a loop whose timers are all far off still looks
/// around this often (its statistics period is shorter anyway).
const MAX_PARK: Duration = Duration::from_secs(1);

/// The streams with news for one I/O loop, its control requests' count, and
/// the wake-up of the loop parked on them.
pub(crate) struct Doorbell {
    queue: ArrayQueue<usize>,
    /// Writers waiting for packet memory the loop frees.
    memory: MemoryWaiters,
    /// Control requests sent (each also wakes a parked loop).
    controls: AtomicU64,
    parked: AtomicBool,
    /// The eventfd a parked loop sleeps on (None: it could not be made; the
    /// loop never parks).
    event: Option<OwnedFd>,
}

/// How a [`Doorbell::park`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parked {
    /// News was already waiting: the loop did not sleep.
    NewsWaiting,
    /// Woken by the doorbell, a control request or the link.
    Woken,
    /// The timeout passed.
    TimedOut,
    /// The loop cannot park (no eventfd, or `poll` failed): it should nap.
    Unavailable,
}

impl Doorbell {
    /// A doorbell for up to `streams` streams queued at once.
    pub fn new(streams: usize) -> Self {
        let event = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
            .inspect_err(|e| {
                tracing::warn!(error = %e, "no eventfd: a quiet I/O loop naps instead of parking")
            })
            .ok();
        Self {
            queue: ArrayQueue::new(streams.max(1)),
            memory: MemoryWaiters::new(streams),
            controls: AtomicU64::new(0),
            parked: AtomicBool::new(false),
            event,
        }
    }

    /// Queues stream `id` (its caller makes sure it is queued at most once) and
    /// wakes the loop if it is parked.
    #[inline]
    pub fn ring(&self, id: usize) {
        // Capacity covers every live stream and each is queued at most once.
        let _ = self.queue.push(id);
        self.wake();
    }

    /// The next stream with news.
    #[inline]
    pub fn pop(&self) -> Option<usize> {
        self.queue.pop()
    }

    /// The writers waiting for packet memory.
    #[inline]
    pub fn memory_waiters(&self) -> &MemoryWaiters {
        &self.memory
    }

    /// A control request was just sent (or the channel closed): counts it and
    /// wakes the loop if it is parked.
    pub fn control_sent(&self) {
        self.controls.fetch_add(1, Ordering::SeqCst);
        self.wake();
    }

    /// The control requests counted so far: the loop reads this before it
    /// drains its channel, and parks only while it is unchanged.
    pub fn controls(&self) -> u64 {
        self.controls.load(Ordering::SeqCst)
    }

    /// Wakes the loop if it is parked (after the news was published).
    #[inline]
    fn wake(&self) {
        // Pairs with the fence in `park`: either the loop sees the news before it
        // sleeps, or this sees it parked.
        fence(Ordering::SeqCst);
        if self.parked.load(Ordering::Relaxed) && self.parked.swap(false, Ordering::AcqRel) {
            if let Some(fd) = &self.event {
                // A full counter (never: the loop reads it after every park) or
                // a closed descriptor would only leave the loop to its timeout.
                let _ = rustix::io::write(fd, &1u64.to_ne_bytes());
            }
        }
    }

    /// Whether the loop can park at all.
    pub fn can_park(&self) -> bool {
        self.event.is_some()
    }

    /// Sleeps until a stream is queued, a control request comes (the count
    /// differs from `controls_seen`), the link's descriptor is ready, or
    /// `timeout` (at most [`MAX_PARK`]) passes.
    pub fn park(&self, controls_seen: u64, link: Option<WakeOn<'_>>, timeout: Duration) -> Parked {
        let Some(event) = &self.event else {
            return Parked::Unavailable;
        };
        self.parked.store(true, Ordering::SeqCst);
        // Pairs with the fence in `wake`.
        fence(Ordering::SeqCst);
        if !self.queue.is_empty() || self.controls.load(Ordering::SeqCst) != controls_seen {
            self.parked.store(false, Ordering::SeqCst);
            return Parked::NewsWaiting;
        }
        let timeout = timeout.min(MAX_PARK);
        let ts = Timespec {
            tv_sec: timeout.as_secs() as _,
            tv_nsec: timeout.subsec_nanos() as _,
        };
        // The link's slot, when there is no link, is left out of the poll.
        let mut fds = [
            PollFd::new(event, PollFlags::IN),
            PollFd::new(event, PollFlags::IN),
        ];
        if let Some(w) = &link {
            // A datagram, and room to send when datagrams wait to leave.
            let out = if w.writable {
                PollFlags::OUT
            } else {
                PollFlags::empty()
            };
            fds[1] = PollFd::from_borrowed_fd(w.fd, PollFlags::IN | out);
        }
        let n = 1 + usize::from(link.is_some());
        let result = poll(&mut fds[..n], Some(&ts));
        self.parked.store(false, Ordering::SeqCst);
        if fds[0].revents().contains(PollFlags::IN) {
            let mut count = [0u8; 8];
            let _ = rustix::io::read(event, &mut count);
        }
        match result {
            Ok(0) => Parked::TimedOut,
            Ok(_) => Parked::Woken,
            Err(rustix::io::Errno::INTR) => Parked::Woken,
            Err(e) => {
                tracing::warn!(error = %e, "poll on the I/O loop's wake-up failed");
                Parked::Unavailable
            }
        }
    }
}

/// The sending side of an I/O loop's control channel: each request (and the
/// channel's closing, when this is dropped) wakes the loop if it is parked.
pub(crate) struct ControlSender {
    tx: Option<Sender<Control>>,
    doorbell: Arc<Doorbell>,
}

impl ControlSender {
    /// Requests go over `tx` to the loop that drains `doorbell`.
    pub fn new(tx: Sender<Control>, doorbell: Arc<Doorbell>) -> Self {
        Self {
            tx: Some(tx),
            doorbell,
        }
    }

    /// Sends `c` and wakes the loop; fails when the loop has stopped.
    pub fn send(&self, c: Control) -> Result<(), SendError<Control>> {
        let tx = self.tx.as_ref().expect("taken only on drop");
        tx.send(c)?;
        self.doorbell.control_sent();
        Ok(())
    }
}

impl Drop for ControlSender {
    fn drop(&mut self) {
        // Closed first, so the loop woken sees the channel closed (a shutdown).
        drop(self.tx.take());
        self.doorbell.control_sent();
    }
}

#[cfg(test)]
mod tests {
    use std::net::UdpSocket;
    use std::os::fd::AsFd;
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    /// Long enough that a park that ends early was woken, not timed out.
    const LONG: Duration = Duration::from_secs(30);

    #[test]
    fn a_queued_stream_keeps_the_loop_from_sleeping() {
        let d = Doorbell::new(4);
        assert!(d.can_park());
        d.ring(3);
        assert_eq!(d.park(d.controls(), None, LONG), Parked::NewsWaiting);
        assert_eq!(d.pop(), Some(3));
    }

    #[test]
    fn a_control_request_since_the_loop_looked_keeps_it_from_sleeping() {
        let d = Doorbell::new(4);
        let seen = d.controls();
        d.control_sent();
        assert_eq!(d.park(seen, None, LONG), Parked::NewsWaiting);
        assert_eq!(d.park(d.controls(), None, Duration::ZERO), Parked::TimedOut);
    }

    #[test]
    fn ringing_wakes_a_parked_loop() {
        let d = Arc::new(Doorbell::new(4));
        let ringer = {
            let d = Arc::clone(&d);
            std::thread::spawn(move || {
                // Ring once the loop is parked (a ring before it parks keeps it
                // from sleeping, which the test above covers).
                while !d.parked.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
                d.ring(1);
            })
        };
        let how = d.park(d.controls(), None, LONG);
        ringer.join().unwrap();
        assert!(
            matches!(how, Parked::Woken | Parked::NewsWaiting),
            "{how:?}"
        );
        assert_eq!(d.pop(), Some(1));
        // The wake-up was consumed: the next park sleeps its timeout.
        assert_eq!(
            d.park(d.controls(), None, Duration::from_millis(1)),
            Parked::TimedOut
        );
    }

    #[test]
    fn a_datagram_on_the_links_socket_wakes_a_parked_loop() {
        let d = Doorbell::new(4);
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let wake = || {
            Some(WakeOn {
                fd: rx.as_fd(),
                writable: false,
            })
        };
        assert_eq!(
            d.park(d.controls(), wake(), Duration::ZERO),
            Parked::TimedOut
        );
        tx.send_to(b"x", rx.local_addr().unwrap()).unwrap();
        assert_eq!(d.park(d.controls(), wake(), LONG), Parked::Woken);
    }
}
