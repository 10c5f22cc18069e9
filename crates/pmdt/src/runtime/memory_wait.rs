//! Writers waiting for packet memory (pipeline mode), and the I/O loop waking
//! them as acknowledgements return buffers to the pool.
//!
//! A writer that finds the pool down to the reserve kept for receiving queues
//! its stream here once and parks; the loop, after each pass in which buffers
//! are free beyond the reserve, wakes the first waiters in the order they
//! queued, as many as the free buffers can serve ([`writers_to_wake`]), like
//! Linux's `sk_stream_wait_memory` sleeping until `sk_write_space`. Napping
//! instead (100 µs sleeps, then retrying) was a busy wait: with 800 writers
//! short of memory, 82 % of a CPU went to their sleeps and wake-ups, and a
//! receiver's I/O lcore on that CPU ran 0.4 % of the time, so no
//! acknowledgement came back for seconds and a third of the flows timed out
//! (docs/RESULTS.md, session 77).
//!
//! No wake-up is lost: a stream is flagged while it is queued (a writer queues
//! it only when the flag was clear), the writer's wait ends as soon as the flag
//! is cleared or a buffer is free (checked after it marks itself waiting; see
//! [`super::shared::Waiter`]; the loop looks at the queue after a fence, once
//! per pass), the loop clears the flag before it wakes, and it wakes a writer
//! as soon as one buffer is free. Memory freed elsewhere (a reader dropping
//! received buffers, another queue's loop) is looked for every millisecond
//! while writers wait, by a loop that would otherwise park. Run to completion
//! has no separate loop: a writer short of memory polls the loop itself
//! ([`super::shared::Waiter::backoff`]).

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_queue::ArrayQueue;

/// The most buffers one woken writer is counted to take (a burst's worth):
/// the loop wakes one writer per this many free buffers.
const BUFFERS_PER_WRITER: usize = 32;

/// Pools smaller than this many of [`BUFFERS_PER_WRITER`] batches wake a
/// writer per 1/64th of their capacity instead (a few hundred buffers: a
/// woken writer must not wait for more than the pool can free at once).
const POOL_SHARES: usize = 64;

/// The streams whose writers wait for packet memory, in the order they queued.
pub(crate) struct MemoryWaiters {
    queue: ArrayQueue<usize>,
    /// Writers that queued, in total.
    queued: AtomicU64,
}

impl MemoryWaiters {
    /// Room for `streams` streams queued at once, and as many stale entries
    /// (streams closed while queued, whose slot a new stream took).
    pub fn new(streams: usize) -> Self {
        Self {
            queue: ArrayQueue::new(streams.max(1).saturating_mul(2)),
            queued: AtomicU64::new(0),
        }
    }

    /// Queues stream `id` (its caller queues it at most once until it is
    /// popped); false when the queue is full (the writer then naps instead).
    pub fn push(&self, id: usize) -> bool {
        let ok = self.queue.push(id).is_ok();
        if ok {
            self.queued.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }

    /// The stream that has waited longest.
    pub fn pop(&self) -> Option<usize> {
        self.queue.pop()
    }

    /// Whether no writer waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// How many wait (stale entries included).
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Writers that queued for memory since the loop started.
    pub fn queued_total(&self) -> u64 {
        self.queued.load(Ordering::Relaxed)
    }
}

/// How many waiting writers to wake with `free` buffers beyond the reserve in
/// a pool of `capacity`, `waiting` queued: one per batch a writer takes
/// ([`BUFFERS_PER_WRITER`], less in a small pool), and one as soon as any
/// buffer is free (a writer's wait ends on one free buffer: it must not stay
/// parked while fewer than a batch come back).
pub(crate) fn writers_to_wake(free: usize, capacity: usize, waiting: usize) -> usize {
    if free == 0 {
        return 0;
    }
    let batch = (capacity / POOL_SHARES).clamp(1, BUFFERS_PER_WRITER);
    (free / batch).max(1).min(waiting)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_per_free_batch_and_one_for_any_free_buffer() {
        assert_eq!(writers_to_wake(0, 65_536, 10), 0);
        assert_eq!(writers_to_wake(1, 65_536, 10), 1);
        assert_eq!(writers_to_wake(31, 65_536, 10), 1);
        assert_eq!(writers_to_wake(64, 65_536, 10), 2);
        assert_eq!(writers_to_wake(5, 65_536, 0), 0);
        assert_eq!(writers_to_wake(200, 65_536, 10), 6);
        assert_eq!(writers_to_wake(1 << 20, 65_536, 10), 10);
    }

    #[test]
    fn a_small_pool_wakes_for_smaller_batches() {
        // 512 buffers: a writer per 8 free.
        assert_eq!(writers_to_wake(16, 512, 10), 2);
        assert_eq!(writers_to_wake(15, 512, 10), 1);
        // Tiny: every free buffer wakes one.
        assert_eq!(writers_to_wake(1, 16, 10), 1);
    }

    #[test]
    fn the_queue_keeps_the_order_writers_came_in() {
        let w = MemoryWaiters::new(2);
        assert!(w.is_empty());
        assert!(w.push(7) && w.push(3) && w.push(5) && w.push(1));
        assert!(!w.push(9), "room for twice the streams, no more");
        assert_eq!(w.len(), 4);
        assert_eq!(w.queued_total(), 4);
        assert_eq!((w.pop(), w.pop()), (Some(7), Some(3)));
    }
}
