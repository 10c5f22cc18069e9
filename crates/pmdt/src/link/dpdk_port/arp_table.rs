//! Neighbour table: IPv4 → MAC, learned from ARP (static entries allowed), with
//! rate-limited resolution requests.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// How often an unresolved address is asked for again.
pub const RETRY: Duration = Duration::from_millis(100);

/// IPv4 → MAC mappings.
#[derive(Debug, Default)]
pub struct ArpTable {
    entries: HashMap<Ipv4Addr, [u8; 6]>,
    fixed: HashMap<Ipv4Addr, [u8; 6]>,
    asked: HashMap<Ipv4Addr, Instant>,
}

impl ArpTable {
    /// A table with static entries (never replaced by learning).
    pub fn with_static(entries: &[(Ipv4Addr, [u8; 6])]) -> Self {
        Self {
            fixed: entries.iter().copied().collect(),
            ..Default::default()
        }
    }

    /// The MAC of `ip`, if known.
    #[inline]
    pub fn lookup(&self, ip: Ipv4Addr) -> Option<[u8; 6]> {
        self.fixed
            .get(&ip)
            .or_else(|| self.entries.get(&ip))
            .copied()
    }

    /// Records a mapping seen on the wire.
    pub fn learn(&mut self, ip: Ipv4Addr, mac: [u8; 6]) {
        if ip.is_unspecified() || self.fixed.contains_key(&ip) {
            return;
        }
        self.asked.remove(&ip);
        self.entries.insert(ip, mac);
    }

    /// Whether to send a request for `ip` now (at most one per retry interval).
    pub fn should_ask(&mut self, ip: Ipv4Addr, now: Instant) -> bool {
        match self.asked.get(&ip) {
            Some(t) if now.saturating_duration_since(*t) < RETRY => false,
            _ => {
                self.asked.insert(ip, now);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_keeps_static_and_rate_limits_requests() {
        let ip = Ipv4Addr::new(10, 0, 0, 1);
        let fixed = Ipv4Addr::new(10, 0, 0, 9);
        let mut t = ArpTable::with_static(&[(fixed, [9; 6])]);
        assert_eq!(t.lookup(ip), None);
        let now = Instant::now();
        assert!(t.should_ask(ip, now));
        assert!(!t.should_ask(ip, now + Duration::from_millis(50)));
        assert!(t.should_ask(ip, now + Duration::from_millis(150)));
        t.learn(ip, [1; 6]);
        t.learn(fixed, [2; 6]);
        assert_eq!(t.lookup(ip), Some([1; 6]));
        assert_eq!(t.lookup(fixed), Some([9; 6]), "static entries win");
    }
}
