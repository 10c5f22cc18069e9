//! The endpoint's timer heap: `(deadline, connection index)` entries, one live per
//! connection (its `Slot::scheduled`), plus stale ones left behind when a
//! connection's deadline moved (they are skipped when they surface).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// The heap.
pub(super) type Timers = BinaryHeap<Reverse<(Instant, usize)>>;

/// Keeps only the live entries, one each: a connection's later deadline stays in
/// the heap as a stale entry while an earlier one is scheduled, and is pushed
/// again when that fires, so copies of the live deadline accumulate; keeping
/// every copy (the purge kept all entries matching the live deadline) let the
/// heap outgrow its capacity, an allocation in the steady-state loop (seen in
/// release builds of the runtime's counting-allocator test). In place: no
/// allocation.
pub(super) fn purge(timers: &mut Timers, live: impl Fn(Instant, usize) -> bool) {
    let mut v = std::mem::take(timers).into_vec();
    v.retain(|Reverse((t, i))| live(*t, *i));
    v.sort_unstable();
    v.dedup();
    *timers = BinaryHeap::from(v);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn purge_merges_copies_of_the_live_deadline_and_keeps_the_capacity() {
        let t0 = Instant::now();
        let live = t0 + Duration::from_secs(10);
        let mut h: Timers = BinaryHeap::with_capacity(64);
        for k in 0..60 {
            h.push(Reverse((live, 0)));
            if k % 15 == 0 {
                h.push(Reverse((t0 + Duration::from_millis(k), 0))); // stale
            }
        }
        h.push(Reverse((t0 + Duration::from_secs(1), 1)));
        assert_eq!(h.len(), 65);
        let cap = h.capacity();
        purge(&mut h, |t, i| {
            (i == 0 && t == live) || (i == 1 && t == t0 + Duration::from_secs(1))
        });
        assert_eq!(h.len(), 2, "one entry per connection");
        assert_eq!(h.capacity(), cap, "the memory is kept");
        assert_eq!(h.pop().unwrap().0, (t0 + Duration::from_secs(1), 1));
        assert_eq!(h.pop().unwrap().0, (live, 0));
    }
}
