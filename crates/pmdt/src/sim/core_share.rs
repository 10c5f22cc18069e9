//! A host that does not have its core to itself: its I/O loop runs for `on`, then
//! loses the core for `off`, and so on, as a poller does when it shares a core
//! with another busy process (scheduler slice by slice; `pmdt-wanem`, the sender
//! and the receiver on a 2-core machine). While it is off, nothing it would send
//! leaves, its timers wait, and datagrams for it wait in its port's ring.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The on/off schedule of a host's core, from the network's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreShare {
    /// How long the host runs at a time.
    pub on: Duration,
    /// How long it is then off its core.
    pub off: Duration,
}

impl CoreShare {
    /// The earliest time at or after `t` (since the network's start) at which
    /// the host runs.
    pub fn next_run(&self, t: Duration) -> Duration {
        let period = self.on + self.off;
        if period.is_zero() || self.off.is_zero() {
            return t;
        }
        let into = Duration::from_nanos((t.as_nanos() % period.as_nanos()) as u64);
        if into < self.on {
            t
        } else {
            t + (period - into)
        }
    }

    /// Whether the host runs at `t`.
    pub fn runs_at(&self, t: Duration) -> bool {
        self.next_run(t) == t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_runs_for_on_then_waits_for_off() {
        let ms = Duration::from_millis;
        let s = CoreShare {
            on: ms(4),
            off: ms(6),
        };
        assert!(s.runs_at(ms(0)) && s.runs_at(ms(3)));
        assert!(!s.runs_at(ms(4)) && !s.runs_at(ms(9)));
        assert_eq!(s.next_run(ms(5)), ms(10));
        assert_eq!(s.next_run(ms(12)), ms(12));
        let always = CoreShare {
            on: ms(1),
            off: Duration::ZERO,
        };
        assert!(always.runs_at(ms(7)));
    }
}
