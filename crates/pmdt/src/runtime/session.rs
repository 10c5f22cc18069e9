//! An I/O loop the caller polls itself: no thread of its own, no clock reads, no
//! sleeping. The application drives it from its own core (run-to-completion) or a
//! simulator drives it on a virtual clock; either way the loop, the link, the
//! rings between loop and [`Stream`]s and the doorbell are the ones a threaded
//! [`Runtime`](super::Runtime) runs.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use pmdt::link::memory::MemoryLink;
//! use pmdt::link::Link;
//! use pmdt::runtime::{Backend, Runtime};
//!
//! let (a, b) = MemoryLink::pair("10.0.0.1:1".parse()?, "10.0.0.2:2".parse()?, 1024);
//! let start = Instant::now();
//! let mut client = Runtime::builder()
//!     .backend(Backend::Links(vec![Box::new(a) as Box<dyn Link>]))
//!     .session(start)?;
//! let mut server = Runtime::builder()
//!     .backend(Backend::Links(vec![Box::new(b) as Box<dyn Link>]))
//!     .session(start)?;
//! server.listen();
//! let mut sender = client.connect(start, "10.0.0.2:2".parse()?)?;
//! let (mut reader, mut got, mut buf) = (None, Vec::new(), [0u8; 16]);
//! let (mut now, mut sent) = (start, false);
//! loop {
//!     client.poll(now);
//!     server.poll(now);
//!     // Writes wait for the handshake (`WouldBlock` before: it tells the
//!     // peer's datagram size, which sizes the packet buffers written).
//!     if !sent && sender.is_established() {
//!         sender.try_write(b"hello")?;
//!         sender.finish();
//!         sent = true;
//!     }
//!     reader = reader.or_else(|| server.accept());
//!     if let Some(r) = reader.as_mut() {
//!         match r.try_read(&mut buf) {
//!             Ok(0) => break, // end of stream
//!             Ok(n) => got.extend_from_slice(&buf[..n]),
//!             Err(_) => {}    // nothing yet (WouldBlock)
//!         }
//!     }
//!     now += Duration::from_micros(50); // the caller's clock
//! #   assert!(now < start + Duration::from_secs(5));
//! }
//! assert_eq!(got, b"hello");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use pmdt_proto::ConnectOptions;
use std::io;
use std::net::SocketAddr;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::Instant;

use arc_swap::ArcSwap;

use super::doorbell::ControlSender;
use super::io_loop::{IoLoop, Next};
use super::stats::LoopStats;
use super::stream::Stream;

/// When a [`Session`] wants to be polled again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollAgain {
    /// At once: the last poll did something and more may be pending.
    Now,
    /// At this instant at the latest (a timer, a delayed datagram, the statistics
    /// period); earlier if a datagram may have arrived or a stream was used.
    At(Instant),
    /// Never: the session shut down (see [`Session::shut_down`]).
    Stopped,
}

/// One I/O loop driven by its caller (see the module documentation). Build it
/// with [`RuntimeBuilder::session`](super::RuntimeBuilder::session).
///
/// Streams of a session must be used without blocking ([`Stream::try_read`],
/// [`Stream::try_write`], [`Stream::finish`], [`Stream::try_close`]): their
/// blocking calls wait for the loop, which only runs when the caller polls it.
pub struct Session {
    lp: IoLoop,
    /// Kept so the loop's control channel stays open (a closed one shuts it down).
    _control: ControlSender,
    stats: Arc<ArcSwap<LoopStats>>,
    local: SocketAddr,
    backlog: usize,
    accepted: Option<Receiver<Stream>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("link", &self.lp.describe_link())
            .field("connections", &self.lp.live())
            .finish()
    }
}

impl Session {
    pub(crate) fn new(
        lp: IoLoop,
        control: ControlSender,
        stats: Arc<ArcSwap<LoopStats>>,
        local: SocketAddr,
        backlog: usize,
    ) -> Self {
        Self {
            lp,
            _control: control,
            stats,
            local,
            backlog,
            accepted: None,
        }
    }

    /// One loop iteration at `now` (receive, hand data to and take data from the
    /// streams, timers, transmit); says when to poll next.
    pub fn poll(&mut self, now: Instant) -> PollAgain {
        match self.lp.poll(now).next {
            Next::Immediately => PollAgain::Now,
            Next::Idle(t) => PollAgain::At(t),
            Next::Stopped => PollAgain::Stopped,
        }
    }

    /// Opens a connection to `to` at `now`. The stream is returned at once;
    /// writes return `WouldBlock` until the handshake completes (it tells the
    /// peer's datagram size, which sizes the packet buffers written), and
    /// [`Stream::is_established`] tells when it has.
    pub fn connect(&mut self, now: Instant, to: SocketAddr) -> io::Result<Stream> {
        self.lp.open(now, to, &ConnectOptions::default())
    }

    /// Like [`Session::connect`], the connection with its own controller or
    /// startup; options that make the transport configuration invalid are
    /// refused (`InvalidInput`).
    pub fn connect_with(
        &mut self,
        now: Instant,
        to: SocketAddr,
        options: &ConnectOptions,
    ) -> io::Result<Stream> {
        self.lp.open(now, to, options)
    }

    /// Accepts incoming connections from now on (up to the builder's accept
    /// backlog wait for [`Session::accept`]; more are refused).
    pub fn listen(&mut self) {
        let (tx, rx) = mpsc::sync_channel(self.backlog);
        self.lp.listen(tx);
        self.accepted = Some(rx);
    }

    /// The next accepted connection, if one is waiting.
    pub fn accept(&mut self) -> Option<Stream> {
        self.accepted.as_ref()?.try_recv().ok()
    }

    /// Starts a graceful shutdown: connections finish (up to the shutdown
    /// timeout), new ones are refused; [`PollAgain::Stopped`] once done.
    pub fn shut_down(&mut self, now: Instant) {
        self.lp.shut_down(now);
    }

    /// The local address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Live connections.
    pub fn connections(&self) -> usize {
        self.lp.live()
    }

    /// Statistics as of `now` (link, endpoint, connections).
    pub fn stats(&mut self, now: Instant) -> LoopStats {
        self.lp.publish(now);
        (**self.stats.load()).clone()
    }
}
