//! Where each stream the I/O loop drives stands: on its way to the application
//! ([`Delivery`]) and from it ([`AppWrites`]).

/// A stream's delivery to its application.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Delivery {
    /// Nothing to hand over, or everything was.
    #[default]
    Idle,
    /// In the loop's delivery list: it is looked at in this iteration or the next.
    Queued,
    /// Stopped until the application reads (its ring, its read-ahead or its
    /// share of packet memory is full); its next read rings the doorbell.
    WaitingForReader,
}

impl Delivery {
    /// Puts the stream in the delivery list unless it is there already; returns
    /// whether the caller must push it.
    pub(super) fn queue(&mut self) -> bool {
        if *self == Delivery::Queued {
            return false;
        }
        *self = Delivery::Queued;
        true
    }

    /// Queues a stream waiting for its reader (it may have read); returns
    /// whether the caller must push it.
    pub(super) fn wake_reader_wait(&mut self) -> bool {
        *self == Delivery::WaitingForReader && self.queue()
    }
}

/// How far the application's writes got into the connection. Each step follows
/// the one before it (a reset may follow a finish, never the reverse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(super) enum AppWrites {
    /// Data is taken from the ring as the connection accepts it.
    #[default]
    Flowing,
    /// The connection's storage was full: the ring waits for `Writable`.
    WaitingForWritable,
    /// The application finished and the connection was told.
    Finished,
    /// The application closed (perhaps after finishing first) and the
    /// connection was told: it ends once everything both ways is acknowledged.
    Closing,
    /// The application reset and the connection was told: nothing more is
    /// taken from the ring.
    Reset,
}

impl AppWrites {
    /// The connection's storage is full: wait for `Writable` (only while data
    /// still flows; a finished stream stays finished).
    pub(super) fn block(&mut self) {
        if *self == AppWrites::Flowing {
            *self = AppWrites::WaitingForWritable;
        }
    }

    /// The connection has room again.
    pub(super) fn unblock(&mut self) {
        if *self == AppWrites::WaitingForWritable {
            *self = AppWrites::Flowing;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_does_not_reopen_a_finished_stream() {
        let mut w = AppWrites::Finished;
        w.block();
        assert_eq!(w, AppWrites::Finished);
        w.unblock();
        assert_eq!(w, AppWrites::Finished);
        let mut w = AppWrites::Flowing;
        w.block();
        assert_eq!(w, AppWrites::WaitingForWritable);
        w.unblock();
        assert_eq!(w, AppWrites::Flowing);
    }

    #[test]
    fn a_queued_stream_is_pushed_once() {
        let mut d = Delivery::Idle;
        assert!(d.queue());
        assert!(!d.queue());
        assert!(!d.wake_reader_wait());
        assert_eq!(d, Delivery::Queued);
    }

    #[test]
    fn only_a_stream_waiting_for_its_reader_is_woken_by_a_read() {
        let mut d = Delivery::Idle;
        assert!(!d.wake_reader_wait());
        assert_eq!(d, Delivery::Idle);
        d = Delivery::WaitingForReader;
        assert!(d.wake_reader_wait());
        assert_eq!(d, Delivery::Queued);
    }
}
