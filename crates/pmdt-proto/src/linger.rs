//! Connections that closed gracefully linger after their state is released, as a
//! few bytes each (their connection ids and peer), for as long as the peer may
//! still be waiting: anything but a Close or Reset that arrives for one is
//! answered with a Close. The side that closes first leaves once everything was
//! acknowledged both ways; if its last ack and Close were lost, its peer would
//! otherwise retransmit its finish to an id nobody knows and end "timed out"
//! although every byte arrived (TCP's TIME-WAIT answers such retransmissions).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::time::Instant;

struct Entry {
    remote: SocketAddr,
    remote_cid: u64,
    until: Instant,
    /// The peer's Close never arrived: it may still wait for ours (it was lost),
    /// so whoever runs the endpoint keeps it running until `until`.
    awaited: bool,
}

/// The lingering connections of an endpoint, at most `cap` (the oldest go first).
pub(crate) struct Lingering {
    by_cid: HashMap<u64, Entry>,
    /// Insertion order (each connection once), for expiry and the cap.
    order: VecDeque<u64>,
    cap: usize,
}

impl Lingering {
    pub fn new(cap: usize) -> Self {
        Self {
            by_cid: HashMap::new(),
            order: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    /// Remembers connection `cid` (ours) with `remote` (its id there:
    /// `remote_cid`) until `until`; `awaited`: its peer's Close never arrived.
    pub fn insert(
        &mut self,
        cid: u64,
        remote: SocketAddr,
        remote_cid: u64,
        until: Instant,
        awaited: bool,
    ) {
        while self.order.len() >= self.cap {
            if let Some(old) = self.order.pop_front() {
                self.by_cid.remove(&old);
            }
        }
        let e = Entry {
            remote,
            remote_cid,
            until,
            awaited,
        };
        if self.by_cid.insert(cid, e).is_none() {
            self.order.push_back(cid);
        }
    }

    /// The peer's connection id to answer a datagram for `cid` from `remote` at
    /// `now`, if that connection lingers (expired entries go).
    pub fn answer(&mut self, cid: u64, remote: SocketAddr, now: Instant) -> Option<u64> {
        self.expire(now);
        let e = self.by_cid.get(&cid)?;
        (e.remote == remote && e.until > now).then_some(e.remote_cid)
    }

    /// The peer of `cid` sent its Close (it got ours, or closed by itself): it
    /// waits for nothing more; the entry goes.
    pub fn peer_closed(&mut self, cid: u64, remote: SocketAddr) {
        if self.by_cid.get(&cid).is_some_and(|e| e.remote == remote) {
            self.by_cid.remove(&cid);
            self.order.retain(|c| *c != cid);
        }
    }

    /// Until when some lingering connection's peer may still wait for our Close
    /// (its Close never arrived); None when no peer may.
    pub fn awaited_until(&mut self, now: Instant) -> Option<Instant> {
        self.expire(now);
        self.by_cid
            .values()
            .filter(|e| e.awaited && e.until > now)
            .map(|e| e.until)
            .max()
    }

    fn expire(&mut self, now: Instant) {
        while let Some(&old) = self.order.front() {
            if self.by_cid.get(&old).is_some_and(|e| e.until > now) {
                break;
            }
            self.order.pop_front();
            self.by_cid.remove(&old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn entries_answer_their_peer_until_they_expire_and_stay_bounded() {
        let t = Instant::now();
        let a: SocketAddr = "10.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "10.0.0.2:1".parse().unwrap();
        let mut l = Lingering::new(2);
        l.insert(1, a, 11, t + Duration::from_secs(5), false);
        assert_eq!(l.answer(1, a, t), Some(11));
        assert_eq!(l.answer(1, b, t), None, "another address");
        assert_eq!(l.answer(2, a, t), None, "unknown");
        l.insert(2, a, 12, t + Duration::from_secs(6), false);
        l.insert(3, a, 13, t + Duration::from_secs(7), false);
        assert_eq!(l.answer(1, a, t), None, "the oldest went beyond the cap");
        assert_eq!(l.answer(3, a, t), Some(13));
        assert_eq!(l.answer(2, a, t + Duration::from_secs(6)), None, "expired");
        assert_eq!(l.answer(3, a, t + Duration::from_secs(6)), Some(13));
        assert_eq!(l.order.len(), 1);
    }

    #[test]
    fn awaited_entries_hold_until_their_peer_closes_or_they_expire() {
        let t = Instant::now();
        let a: SocketAddr = "10.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "10.0.0.2:1".parse().unwrap();
        let mut l = Lingering::new(8);
        l.insert(1, a, 11, t + Duration::from_secs(5), false);
        assert_eq!(l.awaited_until(t), None, "its peer's Close arrived");
        l.insert(2, a, 12, t + Duration::from_secs(6), true);
        l.insert(3, b, 13, t + Duration::from_secs(7), true);
        assert_eq!(l.awaited_until(t), Some(t + Duration::from_secs(7)));
        l.peer_closed(3, a);
        assert_eq!(l.answer(3, b, t), Some(13), "a Close from another address");
        l.peer_closed(3, b);
        assert_eq!(
            l.answer(3, b, t),
            None,
            "its peer closed: nothing to answer"
        );
        assert_eq!(l.awaited_until(t), Some(t + Duration::from_secs(6)));
        assert_eq!(l.awaited_until(t + Duration::from_secs(6)), None, "expired");
    }
}
