//! What this side knows of the end of the peer's stream.

/// The end of the peer's stream, as far as this side knows it. Each step
/// follows the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum PeerFin {
    /// No finish received yet.
    #[default]
    Unknown,
    /// The finish arrived: the stream ends at this offset, and bytes before it
    /// are still missing.
    At(u64),
    /// Every byte up to the finish arrived (the application was told).
    Complete(u64),
}

impl PeerFin {
    /// Where the peer's stream ends, once known.
    pub(super) fn final_size(self) -> Option<u64> {
        match self {
            PeerFin::Unknown => None,
            PeerFin::At(end) | PeerFin::Complete(end) => Some(end),
        }
    }

    /// Whether every byte up to the finish arrived.
    pub(super) fn is_complete(self) -> bool {
        matches!(self, PeerFin::Complete(_))
    }

    /// Records what arrived: the finish (if this packet carried it) and how far
    /// the stream is contiguous. Returns true once, when the stream becomes
    /// complete (the moment to tell the application).
    pub(super) fn on_received(&mut self, fin_at: Option<u64>, contiguous_end: u64) -> bool {
        if let (PeerFin::Unknown, Some(end)) = (*self, fin_at) {
            *self = PeerFin::At(end);
        }
        match *self {
            PeerFin::At(end) if contiguous_end >= end => {
                *self = PeerFin::Complete(end);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_finish_completes_once_every_byte_before_it_arrived() {
        let mut f = PeerFin::default();
        assert!(!f.on_received(None, 100));
        assert_eq!(f.final_size(), None);
        assert!(!f.on_received(Some(300), 100));
        assert_eq!(f, PeerFin::At(300));
        assert!(f.on_received(None, 300));
        assert!(f.is_complete());
        assert!(!f.on_received(None, 300), "the application is told once");
        assert_eq!(f.final_size(), Some(300));
    }

    #[test]
    fn a_finish_on_contiguous_data_completes_at_once() {
        let mut f = PeerFin::default();
        assert!(f.on_received(Some(0), 0));
        assert_eq!(f, PeerFin::Complete(0));
    }
}
