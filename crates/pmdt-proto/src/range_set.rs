//! A set of `u64` values stored as sorted, disjoint, non-adjacent half-open ranges.

use std::collections::VecDeque;
use std::ops::Range;

/// Sorted disjoint ranges; inserting merges neighbours. Used for received packet
/// numbers (SACK), received stream bytes and acknowledged stream bytes.
///
/// A deque, not a vector: new ranges open at the high end (data beyond a hole)
/// while repairs close the oldest holes at the low end and reading drops ranges
/// from there, so merging or removing near either end moves only the few ranges
/// on that side. With a vector, every repair of the first hole moved the whole
/// set: at 1 Gbit/s × 200 ms a loss burst leaves thousands of holes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RangeSet {
    ranges: VecDeque<Range<u64>>,
}

impl RangeSet {
    /// An empty set.
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// An empty set with room for `n` ranges before it allocates.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            ranges: VecDeque::with_capacity(n),
        }
    }

    /// Number of disjoint ranges.
    pub(crate) fn len(&self) -> usize {
        self.ranges.len()
    }

    /// The ranges, ascending.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &Range<u64>> {
        self.ranges.iter()
    }

    /// Smallest value not below `from` that is missing... the end of the range
    /// containing `from`, or `from` itself when `from` is not in the set.
    pub(crate) fn contiguous_end(&self, from: u64) -> u64 {
        match self.find(from) {
            Some(i) => self.ranges[i].end,
            None => from,
        }
    }

    fn find(&self, v: u64) -> Option<usize> {
        let i = self.ranges.partition_point(|r| r.end <= v);
        (i < self.ranges.len() && self.ranges[i].start <= v).then_some(i)
    }

    /// Whether `r` overlaps or touches (is adjacent to) a range of the set, i.e.
    /// inserting it would not add a range.
    pub(crate) fn touches(&self, r: Range<u64>) -> bool {
        let i = self.ranges.partition_point(|x| x.end < r.start);
        i < self.ranges.len() && self.ranges[i].start <= r.end
    }

    /// Whether any value of `r` is in the set.
    pub(crate) fn intersects(&self, r: Range<u64>) -> bool {
        let i = self.ranges.partition_point(|x| x.end <= r.start);
        i < self.ranges.len() && self.ranges[i].start < r.end
    }

    /// Whether `v` is in the set.
    #[cfg(test)]
    pub(crate) fn contains(&self, v: u64) -> bool {
        self.find(v).is_some()
    }

    /// Whether all of `r` is in the set.
    pub(crate) fn contains_range(&self, r: Range<u64>) -> bool {
        if r.is_empty() {
            return true;
        }
        matches!(self.find(r.start), Some(i) if self.ranges[i].end >= r.end)
    }

    /// Largest value in the set.
    pub(crate) fn max(&self) -> Option<u64> {
        self.ranges.back().map(|r| r.end - 1)
    }

    /// Smallest value in the set.
    #[cfg(test)]
    pub(crate) fn min(&self) -> Option<u64> {
        self.ranges.front().map(|r| r.start)
    }

    /// Inserts `r`; returns the number of values that were not already present.
    pub(crate) fn insert(&mut self, r: Range<u64>) -> u64 {
        if r.is_empty() {
            return 0;
        }
        // Fast paths for in-order arrival: append to, or after, the last range.
        match self.ranges.back_mut() {
            None => {
                self.ranges.push_back(r.clone());
                return r.end - r.start;
            }
            Some(last) if r.start == last.end => {
                last.end = r.end;
                return r.end - r.start;
            }
            Some(last) if r.start > last.end => {
                self.ranges.push_back(r.clone());
                return r.end - r.start;
            }
            _ => {}
        }
        // First range that ends at or after r.start (touching counts, to merge).
        let lo = self.ranges.partition_point(|x| x.end < r.start);
        // First range that starts after r.end (touching counts).
        let hi = self.ranges.partition_point(|x| x.start <= r.end);
        if lo == hi {
            // Touches nothing: a new range (the deque moves the shorter side).
            self.ranges.insert(lo, r.clone());
            return r.end - r.start;
        }
        let mut covered = 0u64;
        for x in self.ranges.range(lo..hi) {
            let s = x.start.max(r.start);
            let e = x.end.min(r.end);
            if e > s {
                covered += e - s;
            }
        }
        let start = self.ranges[lo].start.min(r.start);
        let end = self.ranges[hi - 1].end.max(r.end);
        self.ranges[lo] = start..end;
        if hi - lo > 1 {
            self.ranges.drain(lo + 1..hi);
        }
        (r.end - r.start) - covered
    }

    /// Inserts one value; returns whether it was new.
    pub(crate) fn insert_one(&mut self, v: u64) -> bool {
        self.insert(v..v + 1) == 1
    }

    /// Removes every value below `v`.
    pub(crate) fn remove_below(&mut self, v: u64) {
        let i = self.ranges.partition_point(|r| r.end <= v);
        self.ranges.drain(..i);
        if let Some(first) = self.ranges.front_mut() {
            if first.start < v {
                first.start = v;
            }
        }
    }

    /// Keeps only the `n` highest ranges (bounded memory under heavy reordering).
    pub(crate) fn keep_highest(&mut self, n: usize) {
        if self.ranges.len() > n {
            let drop = self.ranges.len() - n;
            self.ranges.drain(..drop);
        }
    }

    /// Parts of `r` not in the set.
    #[cfg(test)]
    pub(crate) fn missing_in(&self, r: Range<u64>) -> Vec<Range<u64>> {
        let mut out = Vec::new();
        self.for_each_missing(r, |g| out.push(g));
        out
    }

    /// Calls `f` with each part of `r` not in the set, ascending (no allocation).
    pub(crate) fn for_each_missing(&self, r: Range<u64>, mut f: impl FnMut(Range<u64>)) {
        let mut cur = r.start;
        let lo = self.ranges.partition_point(|x| x.end <= r.start);
        for x in self.ranges.range(lo..) {
            if x.start >= r.end {
                break;
            }
            if x.start > cur {
                f(cur..x.start);
            }
            cur = cur.max(x.end);
        }
        if cur < r.end {
            f(cur..r.end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn merges_and_counts_new_values() {
        let mut s = RangeSet::new();
        assert_eq!(s.insert(10..20), 10);
        assert_eq!(s.insert(30..40), 10);
        assert_eq!(s.insert(15..35), 10);
        assert_eq!(s.iter().cloned().collect::<Vec<_>>(), vec![10..40]);
        assert_eq!(s.insert(40..41), 1);
        assert_eq!(s.len(), 1);
        assert!(s.insert_one(5));
        assert!(!s.insert_one(5));
        assert_eq!(s.contiguous_end(10), 41);
        assert_eq!(s.contiguous_end(7), 7);
        assert_eq!(s.missing_in(0..45), vec![0..5, 6..10, 41..45]);
        s.remove_below(12);
        assert_eq!(s.min(), Some(12));
        assert!(s.contains_range(12..41));
        assert!(!s.contains_range(11..13));
    }

    proptest! {
        #[test]
        fn matches_a_btreeset(ops in proptest::collection::vec((0u64..200, 0u64..20), 0..60), cut in 0u64..220) {
            let mut s = RangeSet::new();
            let mut m = BTreeSet::new();
            for (a, l) in ops {
                let new = (a..a + l).filter(|v| !m.contains(v)).count() as u64;
                prop_assert_eq!(s.insert(a..a + l), new);
                m.extend(a..a + l);
            }
            for v in 0..230 {
                prop_assert_eq!(s.contains(v), m.contains(&v));
            }
            let rs: Vec<_> = s.iter().cloned().collect();
            for w in rs.windows(2) {
                prop_assert!(w[0].end < w[1].start, "disjoint and non-adjacent");
            }
            s.remove_below(cut);
            for v in 0..230 {
                prop_assert_eq!(s.contains(v), m.contains(&v) && v >= cut);
            }
        }

        /// Inserts and removals interleaved, as a receiver's reassembly does them
        /// (the deque's contents wrap around its buffer).
        #[test]
        fn interleaved_removals_match_a_btreeset(
            ops in proptest::collection::vec((0u64..400, 0u64..12, any::<bool>()), 0..120),
        ) {
            let mut s = RangeSet::with_capacity(4);
            let mut m = BTreeSet::new();
            let mut floor = 0u64;
            for (a, l, cut) in ops {
                if cut {
                    floor = floor.max(a / 2);
                    s.remove_below(floor);
                    m.retain(|&v| v >= floor);
                } else {
                    let new = (a..a + l).filter(|v| !m.contains(v)).count() as u64;
                    prop_assert_eq!(s.insert(a..a + l), new);
                    m.extend(a..a + l);
                }
                let rs: Vec<_> = s.iter().cloned().collect();
                for w in rs.windows(2) {
                    prop_assert!(w[0].end < w[1].start, "disjoint and non-adjacent");
                }
                prop_assert_eq!(rs.iter().map(|r| r.end - r.start).sum::<u64>(), m.len() as u64);
            }
            for v in 0..420 {
                prop_assert_eq!(s.contains(v), m.contains(&v));
            }
        }
    }
}
