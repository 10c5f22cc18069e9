//! Frames waiting for their peer's MAC address, as Linux keeps a few packets on
//! an unresolved neighbour (`unres_qlen`) instead of dropping them: the first
//! packet to a new peer (a handshake's Init) leaves as soon as the ARP reply
//! arrives, not after a retransmission timeout. Bounded in frames and in age:
//! [`HOLD_FOR`] once the link is up, [`HOLD_LIMIT`] in all.

use std::collections::VecDeque;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// Most frames held at once, over all unresolved peers (the oldest goes first).
pub const HOLD_FRAMES: usize = 64;
/// How long a frame waits for its peer's address, with the link up, before it
/// is dropped: the protocol's own retransmissions take over from there.
pub const HOLD_FOR: Duration = Duration::from_secs(1);
/// How long a frame waits at most, the link up or not (a port whose peer never
/// comes stops holding, and its loop may sleep again).
pub const HOLD_LIMIT: Duration = Duration::from_secs(10);

/// One held frame: its destination, when it was held, the frame.
struct Held<F> {
    ip: Ipv4Addr,
    since: Instant,
    frame: F,
}

/// Frames (any owned type; mbufs in the DPDK link) held per unresolved address,
/// oldest first.
pub struct ArpHold<F> {
    frames: VecDeque<Held<F>>,
}

impl<F> Default for ArpHold<F> {
    fn default() -> Self {
        Self {
            frames: VecDeque::new(),
        }
    }
}

impl<F> ArpHold<F> {
    /// Whether nothing is held (the common case: one branch per flush).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Frames held now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.frames.len()
    }

    /// Holds `frame` for `ip`. Returns the oldest frame when the hold was full:
    /// the caller drops and counts it.
    pub fn hold(&mut self, ip: Ipv4Addr, frame: F, now: Instant) -> Option<F> {
        let evicted = if self.frames.len() >= HOLD_FRAMES {
            self.frames.pop_front().map(|h| h.frame)
        } else {
            None
        };
        self.frames.push_back(Held {
            ip,
            since: now,
            frame,
        });
        evicted
    }

    /// Hands the frames whose peer `resolve` now knows to `send` in the order they
    /// were held, while `send` takes them (it hands a frame back when it has no
    /// room; that one and the rest wait). Frames held longer than [`HOLD_FOR`]
    /// with the link up (since `link_up`; `None`: down) or [`HOLD_LIMIT`] in
    /// all go to `expired`. Unresolved destinations are passed to `unresolved`
    /// once each, to ask for them again.
    pub fn release(
        &mut self,
        now: Instant,
        link_up: Option<Instant>,
        mut resolve: impl FnMut(Ipv4Addr) -> Option<[u8; 6]>,
        mut send: impl FnMut(F, [u8; 6]) -> Result<(), F>,
        mut expired: impl FnMut(F),
        mut unresolved: impl FnMut(Ipv4Addr),
    ) {
        let mut keep = VecDeque::with_capacity(self.frames.len());
        let mut asked: Vec<Ipv4Addr> = Vec::new();
        let mut room = true;
        while let Some(h) = self.frames.pop_front() {
            let aged = now.saturating_duration_since(h.since) >= HOLD_LIMIT
                || link_up
                    .is_some_and(|up| now.saturating_duration_since(h.since.max(up)) >= HOLD_FOR);
            if aged {
                expired(h.frame);
                continue;
            }
            match resolve(h.ip) {
                // Once a frame finds no room, the later ones wait behind it.
                Some(mac) if room => match send(h.frame, mac) {
                    Ok(()) => {}
                    Err(frame) => {
                        room = false;
                        keep.push_back(Held { frame, ..h });
                    }
                },
                Some(_) => keep.push_back(h),
                None => {
                    if !asked.contains(&h.ip) {
                        asked.push(h.ip);
                        unresolved(h.ip);
                    }
                    keep.push_back(h);
                }
            }
        }
        self.frames = keep;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
    const MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];

    #[test]
    fn resolved_frames_leave_in_order_and_the_others_wait() {
        let t = Instant::now();
        let mut h = ArpHold::default();
        for (ip, f) in [(A, 1), (B, 2), (A, 3)] {
            assert!(h.hold(ip, f, t).is_none());
        }
        let (mut sent, mut asked) = (Vec::new(), Vec::new());
        h.release(
            t,
            Some(t),
            |ip| (ip == A).then_some(MAC),
            |f, mac| {
                assert_eq!(mac, MAC);
                sent.push(f);
                Ok(())
            },
            |_| panic!("nothing expired"),
            |ip| asked.push(ip),
        );
        assert_eq!(sent, [1, 3]);
        assert_eq!(asked, [B]);
        assert_eq!(h.len(), 1);
    }

    #[test]
    fn a_full_transmit_side_keeps_the_rest_for_later() {
        let t = Instant::now();
        let mut h = ArpHold::default();
        for f in 0..5 {
            h.hold(A, f, t);
        }
        let mut sent = Vec::new();
        h.release(
            t,
            Some(t),
            |_| Some(MAC),
            |f, _| {
                if sent.len() < 2 {
                    sent.push(f);
                    Ok(())
                } else {
                    Err(f)
                }
            },
            |_| {},
            |_| {},
        );
        assert_eq!(sent, [0, 1]);
        let take = |f, _| {
            sent.push(f);
            Ok(())
        };
        h.release(t, Some(t), |_| Some(MAC), take, |_| {}, |_| {});
        assert_eq!(sent, [0, 1, 2, 3, 4]);
        assert!(h.is_empty());
    }

    #[test]
    fn the_hold_is_bounded_in_frames_and_in_age() {
        let t = Instant::now();
        let mut h = ArpHold::default();
        let evicted: Vec<usize> = (0..HOLD_FRAMES + 3)
            .filter_map(|f| h.hold(A, f, t))
            .collect();
        assert_eq!(evicted, [0, 1, 2], "the oldest go first");
        assert_eq!(h.len(), HOLD_FRAMES);
        let mut expired = 0;
        h.release(
            t + HOLD_FOR,
            Some(t),
            |_| None,
            |_, _| panic!("unresolved"),
            |_| expired += 1,
            |_| panic!("nothing left to ask for"),
        );
        assert_eq!(expired, HOLD_FRAMES);
        assert!(h.is_empty());
    }

    #[test]
    fn frames_age_only_while_the_link_is_up() {
        let t = Instant::now();
        let mut h = ArpHold::default();
        h.hold(A, 1, t);
        let never = |_| panic!("the frame expired");
        // Down for longer than the hold: nothing ages.
        h.release(
            t + 3 * HOLD_FOR,
            None,
            |_| None,
            |_, _| Ok(()),
            never,
            |_| {},
        );
        assert_eq!(h.len(), 1);
        // Up since then: the frame gets its whole hold from that moment.
        let up = t + 3 * HOLD_FOR;
        h.release(
            up + HOLD_FOR / 2,
            Some(up),
            |_| None,
            |_, _| Ok(()),
            never,
            |_| {},
        );
        assert_eq!(h.len(), 1);
        let mut expired = 0;
        h.release(
            up + HOLD_FOR,
            Some(up),
            |_| None,
            |_, _| Ok(()),
            |_| expired += 1,
            |_| {},
        );
        assert_eq!(expired, 1);
        assert!(h.is_empty());
        // A link that never comes up holds a frame no longer than the limit.
        h.hold(A, 2, t);
        h.release(
            t + HOLD_LIMIT,
            None,
            |_| None,
            |_, _| Ok(()),
            |_| expired += 1,
            |_| {},
        );
        assert_eq!(expired, 2);
        assert!(h.is_empty());
    }
}
