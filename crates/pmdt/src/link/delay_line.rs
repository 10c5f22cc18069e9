//! A delay line: items held until their release time, released in time order (ties
//! in insertion order). Used by the impairment middleware and by pmdt-wanem.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

struct Entry<T> {
    at: Instant,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Items waiting for their time.
pub struct DelayLine<T> {
    heap: BinaryHeap<Reverse<Entry<T>>>,
    seq: u64,
}

impl<T> Default for DelayLine<T> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<T> DelayLine<T> {
    /// Holds `item` until `at`.
    pub fn push(&mut self, at: Instant, item: T) {
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            at,
            seq: self.seq,
            item,
        }));
    }

    /// The earliest release time.
    pub fn next_due(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(e)| e.at)
    }

    /// The next item due at or before `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<T> {
        if self.next_due()? > now {
            return None;
        }
        self.heap.pop().map(|Reverse(e)| e.item)
    }

    /// Items held.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn releases_in_time_order_then_insertion_order() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut d = DelayLine::default();
        d.push(t0 + ms(5), "late");
        d.push(t0 + ms(1), "a");
        d.push(t0 + ms(1), "b");
        assert_eq!(d.next_due(), Some(t0 + ms(1)));
        assert_eq!(d.pop_due(t0), None);
        assert_eq!(d.pop_due(t0 + ms(2)), Some("a"));
        assert_eq!(d.pop_due(t0 + ms(2)), Some("b"));
        assert_eq!(d.pop_due(t0 + ms(2)), None);
        assert_eq!(d.len(), 1);
        assert_eq!(d.pop_due(t0 + ms(9)), Some("late"));
        assert!(d.is_empty());
    }
}
