//! The receive memory of an I/O loop's connections: a fixed part of the packet
//! pool, shared so that it is never overcommitted, whatever the order in which
//! connections arrive and however slowly their applications read.
//!
//! A connection *commits* the bytes its peer may still send (credit granted
//! beyond what it delivered to its reader) plus what waits in its reader's ring:
//! everything it may come to pin in packet memory. Credit already granted cannot
//! be taken back, and data handed to a reader stays until read, so a connection's
//! commitment only shrinks as its application reads. Each connection has a
//! *grant*, the most it may commit: an equal share of the total, lowered at once
//! when connections join (what they committed above it drains as they read), and
//! raised only from memory nobody has committed or been granted. So the sum over
//! connections of max(grant, commitment) never exceeds the total (beyond the one
//! datagram of credit a connection always gets, the least that keeps it alive):
//! the rest of the pool stays free for receiving (acks, handshakes, every other
//! connection's data) and sending. Without this, a receiver whose readers start
//! late let its first connections commit the whole pool one after another (each
//! got an equal share of the total when it arrived and kept it), the pool ran
//! dry, and every later datagram was dropped, handshakes included.

/// One connection's part (kept by the loop next to its stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Share {
    /// The most this connection may commit (bytes).
    pub grant: u64,
    /// What it committed when last accounted.
    committed: u64,
}

impl Share {
    fn accounted(&self) -> u64 {
        self.grant.max(self.committed)
    }
}

/// The memory every connection of a loop shares (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct RecvMemory {
    total: u64,
    /// Sum of the members' max(grant, committed).
    reserved: u64,
    /// Sum of the members' commitments.
    committed: u64,
    members: usize,
}

impl RecvMemory {
    /// `total` bytes to share.
    pub fn new(total: u64) -> Self {
        Self {
            total,
            reserved: 0,
            committed: 0,
            members: 0,
        }
    }

    /// Each member's fair share now.
    pub fn fair(&self) -> u64 {
        self.total / self.members.max(1) as u64
    }

    /// Bytes neither granted nor committed.
    pub fn free(&self) -> u64 {
        self.total.saturating_sub(self.reserved)
    }

    /// Credit a connection not yet a member may start with (advertised if its
    /// handshake leaves before it joins): at most its share once it joins, and at
    /// most `1 / burst` of what it will find free then, as up to `burst`
    /// connections may arrive before the loop accounts for them; at most `cap`.
    ///
    /// What it will find free: the members' grants come down to the new fair
    /// share when it joins, so unless they committed more than that, its share
    /// is there for it. Counted from what is free now, which the members'
    /// grants take whole, a connection that arrived after others had joined
    /// started with one datagram of credit, lost a round trip to it, and left
    /// Startup at half the others' rate: four flows from one `pmdt-send -P 4`
    /// through 1 Gbit/s × 40 ms kept 147-188 Mbit/s for that one against
    /// 206-324 for the others (Jain 0.93-0.99). Where the members' credit
    /// already commits the newcomer's share (a pool that holds little more
    /// than their credit), it still starts with a datagram.
    pub fn initial_credit(&self, burst: usize, cap: u64) -> u64 {
        let share = self.total / (self.members + 1) as u64;
        // The members keep at most their new shares' worth, or what they
        // committed beyond them: together at most `total - share` plus all
        // they committed.
        let after_join = share.saturating_sub(self.committed).max(self.free());
        share.min(after_join / burst.max(1) as u64).min(cap)
    }

    /// A connection joins having committed `committed` bytes already (its
    /// initial credit). Its grant comes from free memory, up to the fair share;
    /// the caller then lowers the others' ([`RecvMemory::regrant`]).
    pub fn join(&mut self, committed: u64) -> Share {
        self.members += 1;
        let mut s = Share {
            grant: 0,
            committed,
        };
        self.reserved += s.accounted();
        self.committed += committed;
        self.regrant(&mut s);
        s
    }

    /// A connection leaves: its memory is free again.
    pub fn leave(&mut self, s: Share) {
        self.members = self.members.saturating_sub(1);
        self.reserved = self.reserved.saturating_sub(s.accounted());
        self.committed = self.committed.saturating_sub(s.committed);
    }

    /// Records what a member commits now (it shrinks as its reader reads).
    pub fn update(&mut self, s: &mut Share, committed: u64) {
        let before = s.accounted();
        self.committed = self.committed - s.committed + committed;
        s.committed = committed;
        self.reserved = self.reserved - before + s.accounted();
    }

    /// Whether a member's grant is below the fair share (it gets more as memory
    /// frees).
    pub fn starved(&self, s: &Share) -> bool {
        s.grant < self.fair()
    }

    /// Moves a member's grant to the fair share: lowered at once, raised only
    /// as far as free memory allows. Returns whether it changed.
    pub fn regrant(&mut self, s: &mut Share) -> bool {
        self.regrant_within(s, u64::MAX)
    }

    /// [`RecvMemory::regrant`], raising by at most `raise_by` bytes of free
    /// memory (the caller's even part of it when several members are short).
    pub fn regrant_within(&mut self, s: &mut Share, raise_by: u64) -> bool {
        let fair = self.fair();
        let grant = if s.grant >= fair {
            fair
        } else {
            // Raising takes from free memory what the member has not accounted.
            fair.min(s.accounted() + self.free().min(raise_by))
        };
        if grant == s.grant {
            return false;
        }
        let before = s.accounted();
        s.grant = grant;
        self.reserved = self.reserved - before + s.accounted();
        true
    }

    /// Brings every member's grant to the fair share: those above it are
    /// lowered first (what they do not commit frees), then the short ones split
    /// what is free evenly. Raised one after another, the first short members
    /// would take all the memory that freed each time: with readers slower
    /// than the link (1000 flows' threads on 2 cores) the later connections
    /// stayed short of credit for the whole transfer, their rate falling with
    /// their place in the list. `members`: the caller's slots, `share` finds a
    /// member's share; `changed` gets the index of each whose grant changed.
    /// Returns whether some member is still short.
    pub fn rebalance<T>(
        &mut self,
        members: &mut [Option<T>],
        share: impl Fn(&mut T) -> &mut Share,
        mut changed: impl FnMut(usize),
    ) -> bool {
        let mut short = 0u64;
        for (i, m) in members.iter_mut().enumerate() {
            let Some(s) = m.as_mut().map(&share) else {
                continue;
            };
            if self.starved(s) {
                short += 1;
            } else if self.regrant(s) {
                changed(i);
            }
        }
        let part = (self.free() / short.max(1)).max(1);
        let mut still_short = false;
        for (i, m) in members.iter_mut().enumerate() {
            let Some(s) = m.as_mut().map(&share) else {
                continue;
            };
            if self.starved(s) {
                if self.regrant_within(s, part) {
                    changed(i);
                }
                still_short |= self.starved(s);
            }
        }
        still_short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_never_exceed_the_total_whatever_the_arrival_order() {
        let mut m = RecvMemory::new(1600);
        // The first connection alone gets everything and commits it all.
        let mut a = m.join(0);
        assert_eq!(a.grant, 1600);
        m.update(&mut a, 1600);
        // A second arrives while the first's reader sleeps: nothing is free.
        let mut b = m.join(0);
        assert_eq!(b.grant, 0);
        m.regrant(&mut a);
        assert_eq!(a.grant, 800, "lowered at once");
        assert_eq!(m.free(), 0, "the first still commits 1600");
        // The first's reader reads 1000: 600 committed, 200 of its grant unused.
        m.update(&mut a, 600);
        assert_eq!(m.free(), 800);
        assert!(m.starved(&b));
        assert!(m.regrant(&mut b));
        assert_eq!(b.grant, 800);
        assert_eq!(m.free(), 0);
        m.update(&mut b, 800);
        // A third: 533 each, taken as the others drain.
        let mut c = m.join(0);
        assert_eq!(c.grant, 0);
        m.regrant(&mut a);
        m.regrant(&mut b);
        assert_eq!((a.grant, b.grant), (533, 533));
        m.update(&mut b, 100);
        m.regrant(&mut c);
        assert_eq!(c.grant, 1600 - 600 - 533, "what a commits and b is granted");
        m.leave(a);
        m.leave(b);
        m.regrant(&mut c);
        assert_eq!(c.grant, 1600);
        m.leave(c);
        assert_eq!(m.free(), 1600);
    }

    #[test]
    fn a_limited_raise_takes_only_its_part_of_the_free_memory() {
        let mut m = RecvMemory::new(1200);
        let mut a = m.join(0);
        m.update(&mut a, 1200);
        let mut b = m.join(0);
        let mut c = m.join(0);
        m.regrant(&mut a);
        m.update(&mut a, 400);
        assert_eq!(m.free(), 800);
        // Two short members, 400 each at most: the first does not take it all.
        assert!(m.regrant_within(&mut b, 300));
        assert_eq!(b.grant, 300);
        assert!(m.regrant_within(&mut c, 300));
        assert_eq!(c.grant, 300);
        assert_eq!(m.free(), 200);
        // Unlimited, the fair share caps the raise.
        assert!(m.regrant(&mut b));
        assert_eq!(b.grant, 400);
    }

    /// Memory freeing a little at a time reaches every short member alike:
    /// raised in list order, the first took it all each time.
    #[test]
    fn memory_that_frees_is_split_evenly_among_the_short() {
        let mut m = RecvMemory::new(4000);
        let mut rich = m.join(0);
        m.update(&mut rich, 4000);
        let mut all: Vec<Option<Share>> = vec![Some(rich)];
        all.extend((0..3).map(|_| Some(m.join(0))));
        let mut changed = Vec::new();
        m.rebalance(&mut all, |s| s, |i| changed.push(i));
        let grant = |all: &[Option<Share>], i: usize| all[i].expect("member").grant;
        assert_eq!(grant(&all, 0), 1000, "lowered at once");
        assert!((1..4).all(|i| grant(&all, i) == 0), "nothing free yet");
        // The rich member's reader frees 300 at a time.
        for committed in [3700, 3400, 3100] {
            m.update(all[0].as_mut().expect("member"), committed);
            changed.clear();
            m.rebalance(&mut all, |s| s, |i| changed.push(i));
            assert_eq!(changed, [1, 2, 3]);
            let g: Vec<u64> = (1..4).map(|i| grant(&all, i)).collect();
            assert!(g.iter().all(|&x| x == g[0]), "uneven: {g:?}");
        }
        assert_eq!(grant(&all, 1), 300);
        assert_eq!(m.free(), 0);
    }

    #[test]
    fn initial_credit_leaves_room_for_a_burst_of_arrivals() {
        let mut m = RecvMemory::new(3200);
        assert_eq!(m.initial_credit(32, 1 << 20), 100);
        assert_eq!(m.initial_credit(1, 1000), 1000);
        let mut a = m.join(0);
        m.update(&mut a, 3200);
        assert_eq!(m.initial_credit(32, 1 << 20), 0, "nothing free");
    }

    /// The members' grants take all the memory, but they committed little:
    /// a newcomer's share is there once theirs come down, and its handshake
    /// offers credit from it (one datagram's worth cost it a round trip).
    #[test]
    fn initial_credit_counts_on_the_members_lowered_grants() {
        let mut m = RecvMemory::new(3200);
        let mut all: Vec<Option<Share>> = (0..3).map(|_| Some(m.join(0))).collect();
        m.rebalance(&mut all, |s| s, |_| {});
        assert!(m.free() < 3, "granted whole: {}", m.free());
        for s in all.iter_mut().flatten() {
            m.update(s, 100);
        }
        // A fourth's share is 800; the three keep at most 2400 after it joins,
        // 300 of them committed.
        assert_eq!(m.initial_credit(1, 1 << 20), 500);
        assert_eq!(m.initial_credit(5, 1 << 20), 100);
        // Once it joined, the grants come down and that much is free for it.
        let mut d = m.join(m.initial_credit(1, 1 << 20));
        all.push(None);
        m.rebalance(&mut all, |s| s, |_| {});
        m.regrant(&mut d);
        assert_eq!(d.grant, 800);
        let reserved: u64 = all.iter().flatten().map(Share::accounted).sum::<u64>() + d.accounted();
        assert!(reserved <= 3200, "{reserved}");
    }
}
