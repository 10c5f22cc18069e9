//! The Accept, Close or Reset waiting for the connection's next transmit, and
//! what sending it does to the connection.

use crate::wire::{Body, HandshakeParams};

use super::CloseReason;

/// A control packet queued for the next transmit.
///
/// Whether sending it ends the connection is part of the variant, so a queued
/// answer and the end it leads to cannot drift apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ControlOut {
    /// The server's Accept, first or repeated for a client whose Init came
    /// again (its copy of our Accept was lost).
    Accept,
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
    /// The packet body this sends (an Accept carries the connection's
    /// parameters as they are when it leaves).
    pub(super) fn body(self, local_params: impl FnOnce() -> HandshakeParams) -> Body<'static> {
        match self {
            ControlOut::Accept => Body::Accept {
                params: local_params(),
            },
            ControlOut::Close | ControlOut::CloseThenEnd(_) => Body::Close { code: 0 },
            ControlOut::Reset(code) => Body::Reset { code },
        }
    }

    /// How the connection ends once this is sent (`None`: it goes on).
    pub(super) fn ends_with(self) -> Option<CloseReason> {
        match self {
            ControlOut::Accept | ControlOut::Close => None,
            ControlOut::CloseThenEnd(r) => Some(r),
            ControlOut::Reset(code) => Some(CloseReason::LocalReset(code)),
        }
    }

    /// Queues `next` in `slot`, keeping whichever of the two says more: a
    /// Reset the application asked for is never replaced (it must reach the
    /// peer as a Reset), the answer to the peer's Close is not replaced by a
    /// repeat of our own, and an Accept gives way to any end.
    pub(super) fn queue(slot: &mut Option<ControlOut>, next: ControlOut) {
        if slot.is_none_or(|pending| pending.precedence() <= next.precedence()) {
            *slot = Some(next);
        }
    }

    /// Which control wins when two are queued before the next transmit.
    fn precedence(self) -> u8 {
        match self {
            ControlOut::Accept => 0,
            ControlOut::Close => 1,
            ControlOut::CloseThenEnd(_) => 2,
            ControlOut::Reset(_) => 3,
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
    fn an_accept_gives_way_to_a_close_and_never_replaces_one() {
        let mut slot = Some(ControlOut::Accept);
        ControlOut::queue(&mut slot, ControlOut::Close);
        assert_eq!(slot, Some(ControlOut::Close));
        ControlOut::queue(&mut slot, ControlOut::Accept);
        assert_eq!(slot, Some(ControlOut::Close));
    }

    #[test]
    fn a_reset_replaces_a_queued_close() {
        let mut slot = Some(ControlOut::Close);
        ControlOut::queue(&mut slot, ControlOut::Reset(3));
        assert_eq!(slot, Some(ControlOut::Reset(3)));
        assert_eq!(
            slot.unwrap()
                .body(|| unreachable!("a Reset carries no parameters")),
            Body::Reset { code: 3 }
        );
    }
}
