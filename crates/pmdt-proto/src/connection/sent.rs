//! Packets sent and not yet acknowledged or declared lost, indexed by packet number.

use std::collections::VecDeque;
use std::time::Instant;

/// A run of stream bytes carried by one packet. Retransmissions resend the same run,
/// so receivers see the same boundaries (and runtimes can reuse the packet memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub(crate) offset: u64,
    pub(crate) len: u32,
    pub(crate) fin: bool,
}

impl Chunk {
    pub(crate) fn end(&self) -> u64 {
        self.offset + self.len as u64
    }
}

/// Which sending of its data a packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sending {
    /// The first (or a packet without data).
    First,
    /// A repeat (a retransmission, a probe's repeat): if lost, the data was lost
    /// at least twice.
    Again,
    /// A copy with another of the same data queued right behind it: its loss
    /// says nothing until the later copy's fate is known.
    EarlierCopy,
}

/// One tracked (ack-eliciting) packet.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SentPacket {
    pub(crate) time: Instant,
    pub(crate) size: u32,
    pub(crate) chunk: Option<Chunk>,
    /// Which sending of its data it is.
    pub(crate) sending: Sending,
    /// Delivery state at send time, for delivery-rate samples.
    pub(crate) rate: crate::congestion::delivery_rate::SendSnapshot,
}

/// Outstanding packets by packet number; untracked numbers (acks) are holes.
#[derive(Debug, Default)]
pub(crate) struct SentPackets {
    base: u64,
    slots: VecDeque<Option<SentPacket>>,
    outstanding: u64,
    /// Packets declared lost, kept a while to notice spurious retransmissions.
    lost: VecDeque<(u64, Instant)>,
    pub(crate) bytes_in_flight: u64,
    pub(crate) last_ack_eliciting: Option<Instant>,
    /// Packet numbers the tracking makes room for at once when its first
    /// room runs out (the connection's window): a flight past the first room
    /// is a transfer's, and growing step by step would allocate again at
    /// each new peak of it.
    window: usize,
}

impl SentPackets {
    /// Tracking with room for `first` packet numbers, then for `window` at
    /// once when a flight outgrows them, and for `lost` loss records, before
    /// it allocates (past `window`, as a flight grows).
    pub(crate) fn with_capacity(first: usize, window: usize, lost: usize) -> Self {
        Self {
            slots: VecDeque::with_capacity(first.min(window)),
            lost: VecDeque::with_capacity(lost),
            window,
            ..Self::default()
        }
    }

    pub(crate) fn on_sent(&mut self, pn: u64, p: SentPacket) {
        if self.slots.is_empty() {
            self.base = pn;
        }
        let len_after = (pn - self.base + 1) as usize;
        if len_after > self.slots.capacity() && self.slots.capacity() < self.window {
            self.slots
                .reserve_exact(self.window.max(len_after) - self.slots.len());
        }
        while self.base + (self.slots.len() as u64) < pn {
            self.slots.push_back(None);
        }
        self.slots.push_back(Some(p));
        self.outstanding += 1;
        self.bytes_in_flight += p.size as u64;
        self.last_ack_eliciting = Some(p.time);
    }

    /// Packets in flight.
    pub(crate) fn in_flight(&self) -> u64 {
        self.outstanding
    }

    /// Removes and returns packet `pn` if it is outstanding.
    pub(crate) fn take(&mut self, pn: u64) -> Option<SentPacket> {
        let i = pn.checked_sub(self.base)? as usize;
        let p = self.slots.get_mut(i)?.take()?;
        self.outstanding -= 1;
        self.bytes_in_flight -= p.size as u64;
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 1;
        }
        Some(p)
    }

    /// The packet numbers currently tracked: `[base, base + slots)`.
    pub(crate) fn tracked(&self) -> std::ops::Range<u64> {
        self.base..self.base + self.slots.len() as u64
    }

    /// Outstanding packets with numbers below `pn`, oldest first.
    pub(crate) fn below(&self, pn: u64) -> impl Iterator<Item = (u64, &SentPacket)> + '_ {
        let base = self.base;
        self.slots
            .iter()
            .enumerate()
            .take_while(move |(i, _)| base + (*i as u64) < pn)
            .filter_map(move |(i, s)| s.as_ref().map(|p| (base + i as u64, p)))
    }

    /// The oldest outstanding packet carrying stream data.
    pub(crate) fn oldest_chunk(&self) -> Option<Chunk> {
        self.slots.iter().flatten().find_map(|p| p.chunk)
    }

    pub(crate) fn record_lost(&mut self, pn: u64, now: Instant) {
        let i = self.lost.partition_point(|e| e.0 < pn);
        self.lost.insert(i, (pn, now));
        if self.lost.len() > 8192 {
            self.lost.pop_front();
        }
    }

    /// Forgets lost records with numbers in `[lo, hi]`; returns how many there were
    /// (each is a spurious retransmission: the packet arrived after all).
    pub(crate) fn take_lost_in(&mut self, lo: u64, hi: u64) -> u64 {
        if self.lost.is_empty() {
            return 0;
        }
        let a = self.lost.partition_point(|e| e.0 < lo);
        let b = self.lost.partition_point(|e| e.0 <= hi);
        self.lost.drain(a..b);
        (b - a) as u64
    }

    /// Removes and returns the oldest outstanding packet (leading untracked numbers
    /// are always trimmed, so it is the front).
    pub(crate) fn pop_oldest(&mut self) -> Option<(u64, SentPacket)> {
        let pn = self.base;
        self.take(pn).map(|p| (pn, p))
    }

    pub(crate) fn forget_lost_before(&mut self, t: Instant) {
        self.lost.retain(|e| e.1 >= t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::congestion::delivery_rate::SendSnapshot;

    fn packet(now: Instant) -> SentPacket {
        SentPacket {
            time: now,
            size: 1000,
            chunk: None,
            sending: Sending::First,
            rate: SendSnapshot {
                delivered: 0,
                delivered_time: now,
                first_sent_time: now,
                app_limited: false,
                credit_limited: false,
                lost: 0,
                tx_in_flight: 0,
                in_train: false,
                catching_up: None,
            },
        }
    }

    /// A connection with a few datagrams in flight keeps its first room
    /// (room for a window up front cost 1000 connections on one sender 256
    /// KiB each, touched as the ring turned); a flight past it gets the
    /// window's room at once, so a transfer allocates no more until its
    /// flight outgrows the window; past that, the room grows with it.
    #[test]
    fn tracking_makes_room_for_the_window_once_a_flight_outgrows_the_first() {
        let now = Instant::now();
        let mut s = SentPackets::with_capacity(64, 2048, 256);
        // 10,000 packets, eight in flight at a time.
        for pn in 0..10_000u64 {
            s.on_sent(pn, packet(now));
            if pn >= 8 {
                assert!(s.take(pn - 8).is_some());
            }
        }
        assert!(
            (64..2048).contains(&s.slots.capacity()),
            "{}",
            s.slots.capacity()
        );
        // A flight of 73: room for the window.
        for pn in 10_000..10_065 {
            s.on_sent(pn, packet(now));
        }
        let room = s.slots.capacity();
        assert!(room >= 2048, "{room}");
        for pn in 10_065..12_000 {
            s.on_sent(pn, packet(now));
        }
        assert_eq!(s.slots.capacity(), room, "allocated within the window");
        assert_eq!(s.in_flight(), 2008);
        // Past the window (one that autotuned up), as the flight grows.
        for pn in 12_000..15_000 {
            s.on_sent(pn, packet(now));
        }
        assert!(s.slots.capacity() >= 5008);
        assert_eq!(s.in_flight(), 5008);
        assert_eq!(s.tracked(), 9992..15_000);
    }
}
