//! The connection's timers: one [`Timer`] per kind of deadline and a
//! [`TimerTable`] of them. Each deadline is derived from the state it guards (see
//! `Connection::deadline`), so the next timeout and the timers that fire come from
//! one place.

use std::time::Instant;

/// A kind of connection deadline. [`Timer::ALL`] is the order in which the
/// connection serves expired timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timer {
    /// Nothing heard from the peer for the idle timeout: the connection ends
    /// (RFC 9000 §10.1).
    Idle,
    /// The closing period is over (RFC 9000 §10.2).
    Close,
    /// The client's Init went unanswered: send it again.
    InitRetry,
    /// Loss detection: a packet's time threshold (RFC 9002 §6.1.2) or, with none
    /// pending, the probe timeout (RFC 9002 §6.2).
    LossDetection,
    /// The pacer lets the next packet go.
    Pacing,
    /// Blocked on credit with nothing in flight: probe the receiver (as QUIC's
    /// DATA_BLOCKED, RFC 9000 §4.1).
    CreditProbe,
    /// A delayed acknowledgement is due (RFC 9000 §13.2.1).
    Ack,
    /// Nothing sent for the keepalive interval (RFC 9000 §10.1.2).
    Keepalive,
}

impl Timer {
    /// Every timer, in the order expired ones are served.
    pub(crate) const ALL: [Timer; 8] = [
        Timer::Idle,
        Timer::Close,
        Timer::InitRetry,
        Timer::LossDetection,
        Timer::Pacing,
        Timer::CreditProbe,
        Timer::Ack,
        Timer::Keepalive,
    ];
}

/// A deadline per [`Timer`] (`None`: not armed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TimerTable([Option<Instant>; Timer::ALL.len()]);

impl TimerTable {
    /// Arms (`Some`) or disarms (`None`) `timer`.
    pub(crate) fn set(&mut self, timer: Timer, at: Option<Instant>) {
        self.0[timer as usize] = at;
    }

    /// The deadline of `timer`, if armed.
    #[cfg(test)]
    pub(crate) fn get(&self, timer: Timer) -> Option<Instant> {
        self.0[timer as usize]
    }

    /// The earliest armed deadline.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.0.iter().flatten().min().copied()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn next_is_the_earliest_armed_deadline() {
        let t0 = Instant::now();
        let mut t = TimerTable::default();
        assert_eq!(t.next(), None);
        t.set(Timer::Keepalive, Some(t0 + Duration::from_secs(2)));
        t.set(Timer::Ack, Some(t0 + Duration::from_millis(1)));
        t.set(Timer::Idle, Some(t0 + Duration::from_secs(10)));
        assert_eq!(t.next(), Some(t0 + Duration::from_millis(1)));
        assert_eq!(t.get(Timer::Keepalive), Some(t0 + Duration::from_secs(2)));
        t.set(Timer::Ack, None);
        assert_eq!(t.next(), Some(t0 + Duration::from_secs(2)));
    }
}
