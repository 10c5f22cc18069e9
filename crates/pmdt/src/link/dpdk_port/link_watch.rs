//! Whether the port's link is up, and since when: frames held for an ARP reply
//! age only while it is. A memif port is down until its peer connects (the
//! other process, or the interrupt thread's handshake on a loaded machine): a
//! handshake's first packet sent before that must not be dropped as if its
//! peer never answered.

use std::time::{Duration, Instant};

use super::arp_table;

/// How often the link's state is read while frames are held or an address
/// is asked for (the ARP retry interval: a link that comes up is seen before
/// the next request is due).
pub const LINK_CHECK: Duration = arp_table::RETRY;

/// The link's state as last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    /// Never read yet.
    Unknown,
    /// Down when read.
    Down,
    /// Up since this instant (the first read that found it up).
    Up(Instant),
}

/// The link's state, read at most every [`LINK_CHECK`].
#[derive(Debug)]
pub struct LinkWatch {
    state: Link,
    checked: Option<Instant>,
}

impl Default for LinkWatch {
    fn default() -> Self {
        Self {
            state: Link::Unknown,
            checked: None,
        }
    }
}

impl LinkWatch {
    /// Since when the link has been up (`None`: down), reading it with `is_up`
    /// when the last reading is older than [`LINK_CHECK`]. A port that cannot
    /// tell (`is_up` gives `None`) counts as up.
    pub fn up_since(
        &mut self,
        now: Instant,
        is_up: impl FnOnce() -> Option<bool>,
    ) -> Option<Instant> {
        let due = self
            .checked
            .is_none_or(|t| now.saturating_duration_since(t) >= LINK_CHECK);
        if due {
            self.checked = Some(now);
            self.state = match (is_up().unwrap_or(true), self.state) {
                (true, Link::Up(since)) => Link::Up(since),
                (true, _) => Link::Up(now),
                (false, _) => Link::Down,
            };
        }
        match self.state {
            Link::Up(since) => Some(since),
            Link::Down | Link::Unknown => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_is_read_at_most_every_check_interval_and_up_counts_from_the_first_up_reading() {
        let t = Instant::now();
        let mut w = LinkWatch::default();
        assert_eq!(w.up_since(t, || Some(false)), None);
        // Not read again within the interval.
        assert_eq!(
            w.up_since(t + LINK_CHECK / 2, || panic!("read too soon")),
            None
        );
        let up = t + LINK_CHECK;
        assert_eq!(w.up_since(up, || Some(true)), Some(up));
        assert_eq!(w.up_since(up + LINK_CHECK, || Some(true)), Some(up));
        // Down again, then up: the clock starts over.
        assert_eq!(w.up_since(up + 2 * LINK_CHECK, || Some(false)), None);
        let again = up + 3 * LINK_CHECK;
        assert_eq!(w.up_since(again, || Some(true)), Some(again));
    }

    #[test]
    fn a_port_that_cannot_tell_counts_as_up() {
        let t = Instant::now();
        assert_eq!(LinkWatch::default().up_since(t, || None), Some(t));
    }
}
