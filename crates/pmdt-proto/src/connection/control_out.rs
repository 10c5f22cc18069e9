//! The Close or Reset waiting for the connection's next transmit, and what
//! sending it does to the connection.

use crate::wire::Body;

use super::CloseReason;

/// A control packet queued for the next transmit.
///
/// Whether sending it ends the connection is part of the variant, so a queued
/// answer and the end it leads to cannot drift apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ControlOut {
    /// Our Close, first or repeated (code 0): sending it changes no state.
    Close,
    /// The answer to the peer's Close: once sent, the connection ends with
    /// this reason.
    CloseThenEnd(CloseReason),
    /// A Reset carrying the application's code: once sent, the connection
    /// ends as [`CloseReason::LocalReset`].
    Reset(u32),
}

impl ControlOut {
    /// The packet body this sends.
    pub(super) fn body(self) -> Body<'static> {
        match self {
            ControlOut::Close | ControlOut::CloseThenEnd(_) => Body::Close { code: 0 },
            ControlOut::Reset(code) => Body::Reset { code },
        }
    }

    /// How the connection ends once this is sent (`None`: it goes on).
    pub(super) fn ends_with(self) -> Option<CloseReason> {
        match self {
            ControlOut::Close => None,
            ControlOut::CloseThenEnd(r) => Some(r),
            ControlOut::Reset(code) => Some(CloseReason::LocalReset(code)),
        }
    }

    /// Queues `next` in `slot`, keeping whichever of the two says more: a
    /// Reset the application asked for is never replaced (it must reach the
    /// peer as a Reset), and the answer to the peer's Close is not replaced by
    /// a repeat of our own.
    pub(super) fn queue(slot: &mut Option<ControlOut>, next: ControlOut) {
        if slot.is_none_or(|pending| pending.precedence() <= next.precedence()) {
            *slot = Some(next);
        }
    }

    /// Which control wins when two are queued before the next transmit.
    fn precedence(self) -> u8 {
        match self {
            ControlOut::Close => 0,
            ControlOut::CloseThenEnd(_) => 1,
            ControlOut::Reset(_) => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_close_does_not_replace_a_queued_reset() {
        let mut slot = Some(ControlOut::Reset(7));
        ControlOut::queue(&mut slot, ControlOut::Close);
        assert_eq!(slot, Some(ControlOut::Reset(7)));
        assert_eq!(slot.unwrap().ends_with(), Some(CloseReason::LocalReset(7)));
    }

    #[test]
    fn a_repeated_close_does_not_replace_the_answer_to_the_peers_close() {
        let mut slot = Some(ControlOut::CloseThenEnd(CloseReason::Graceful));
        ControlOut::queue(&mut slot, ControlOut::Close);
        assert_eq!(slot, Some(ControlOut::CloseThenEnd(CloseReason::Graceful)));
    }

    #[test]
    fn the_answer_to_the_peers_close_does_not_replace_a_queued_reset() {
        let mut slot = Some(ControlOut::Reset(7));
        ControlOut::queue(
            &mut slot,
            ControlOut::CloseThenEnd(CloseReason::PeerClosed(0)),
        );
        assert_eq!(slot, Some(ControlOut::Reset(7)));
    }

    #[test]
    fn a_reset_replaces_a_queued_close() {
        let mut slot = Some(ControlOut::Close);
        ControlOut::queue(&mut slot, ControlOut::Reset(3));
        assert_eq!(slot, Some(ControlOut::Reset(3)));
        assert_eq!(slot.unwrap().body(), Body::Reset { code: 3 });
    }
}
