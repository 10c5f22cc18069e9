//! The runtime: a dedicated I/O loop (a DPDK lcore or a pinned thread) drives the
//! sans-IO endpoint over a [`Link`](crate::link::Link); application threads use blocking or
//! non-blocking [`Stream`]s that talk to it through SPSC rings.
//!
//! ```no_run
//! use std::io::{Read, Write};
//! use pmdt::runtime::{Runtime, Backend};
//! use pmdt::link::udp::UdpLinkConfig;
//!
//! // Receiver
//! let rt = Runtime::builder()
//!     .backend(Backend::Udp(UdpLinkConfig { bind: "127.0.0.1:9000".parse()?, ..Default::default() }))
//!     .start()?;
//! let listener = rt.listen(9000)?;
//! std::thread::spawn(move || {
//!     let mut s = listener.accept().unwrap();
//!     let mut data = Vec::new();
//!     s.read_to_end(&mut data).unwrap();
//! });
//!
//! // Sender
//! let client = Runtime::builder().backend(Backend::Udp(UdpLinkConfig::default())).start()?;
//! let mut s = client.connect("127.0.0.1:9000".parse()?)?;
//! s.write_all(b"hello")?;
//! s.close()?; // returns once the receiver acknowledged every byte
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod builder;
mod caller;
mod cycles;
mod dedicated;
mod directory;
mod doorbell;
mod group;
mod idle_backoff;
mod in_place;
mod io_loop;
mod memory_budget;
mod memory_wait;
mod reader_wake;
mod recv_memory;
mod session;
mod shared;
mod stats;
pub mod storage;
mod stream;
mod stream_progress;
#[cfg(feature = "dpdk")]
mod telemetry;
#[cfg(test)]
mod transfer_load_tests;

use pmdt_proto::ConnectOptions;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use directory::Directory;

pub use builder::{Backend, IoCore, RuntimeBuilder};
use doorbell::ControlSender;
pub use group::{Group, LagPolicy, MemberReport, MemberState, LAGGING_CODE};
pub use idle_backoff::{IdleBackoff, IdlePolicy, Pause};
pub use in_place::{ReadSegment, SubmitError};
#[doc(hidden)]
pub use io_loop::in_io_iteration;
use io_loop::Control;
pub use io_loop::SHUTDOWN_CODE;
/// The load estimator's report, as [`LoopStats`] carries it.
pub use load_estimator::LoadReport;
pub use memory_budget::{MemoryBudget, PoolSplit, MOSTLY};
pub use session::{PollAgain, Session};
pub use stats::{ConnectionEntry, LoadPeriodEnd, LoopStats, RuntimeStats};
pub use stream::{AbortHandle, StatsHandle, Stream};

enum Join {
    Thread(std::thread::JoinHandle<()>),
    /// Run-to-completion: the loop runs in the application's calls.
    Caller(Arc<caller::CallerLoop>),
    #[cfg(feature = "dpdk")]
    Lcore(dpdk::lcore::LcoreJoinHandle<()>),
}

struct LoopHandle {
    control: ControlSender,
    join: Option<Join>,
    stats: Arc<ArcSwap<LoopStats>>,
}

impl LoopHandle {
    /// The loop, when the application's calls drive it (run-to-completion).
    fn driver(&self) -> Option<&Arc<caller::CallerLoop>> {
        match &self.join {
            Some(Join::Caller(c)) => Some(c),
            _ => None,
        }
    }
}

/// A running pmdt runtime: one or more I/O loops and their links. Dropping it shuts
/// down gracefully (see [`Runtime::shutdown`]).
pub struct Runtime {
    loops: Vec<LoopHandle>,
    local: SocketAddr,
    link_name: String,
    next: std::sync::atomic::AtomicUsize,
    listening: Arc<AtomicBool>,
    accept_backlog: usize,
    directory: Arc<Directory>,
    /// Accepting since the start ([`RuntimeBuilder::listen_from_start`]): the
    /// connections for the first [`Runtime::listen`].
    waiting_listener: std::sync::Mutex<Option<Receiver<Stream>>>,
}

/// Polls a run-to-completion runtime's I/O loops from a thread that does not
/// own the [`Runtime`] (see [`Runtime::poll`]): an application that serves many
/// streams from one thread with [`Stream::try_write`] and [`Stream::try_read`]
/// polls through it when none of them could move. It does not keep the runtime
/// alive: after the runtime's shutdown [`Poller::poll`] does nothing.
#[derive(Clone, Debug, Default)]
pub struct Poller {
    drivers: Vec<Weak<caller::CallerLoop>>,
}

impl Poller {
    /// Polls each run-to-completion loop once, unless another thread is
    /// polling it; whether any loop was polled. A quiet loop's poll naps
    /// briefly (the idle policy's pause). Nothing for loops on cores of their
    /// own, or once the runtime shut down.
    pub fn poll(&self) -> bool {
        let mut any = false;
        for d in self.drivers.iter().filter_map(Weak::upgrade) {
            any |= d.drive_once();
        }
        any
    }

    /// Waits for the loops to move: polls each run-to-completion loop once,
    /// parking while it is quiet (until a datagram or a timer, 10 ms at
    /// most), or, while another thread polls it, sleeps until that step ends.
    /// What a thread whose streams all returned `WouldBlock` calls before
    /// trying them again (a blocking stream call waits the same way). With no
    /// loop to wait on (loops on cores of their own, the runtime shut down)
    /// it sleeps 100 µs.
    pub fn wait(&self) {
        let mut waited = false;
        for d in self.drivers.iter().filter_map(Weak::upgrade) {
            if !d.stopped() {
                d.drive_or_wait();
                waited = true;
            }
        }
        if !waited {
            // Nothing to wait on (the loops stopped, the runtime is gone, or
            // its loops have cores of their own): a short sleep, so a caller
            // looking again does not spin.
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

/// Accepts incoming connections.
pub struct Listener {
    rx: Receiver<Stream>,
    local: SocketAddr,
    listening: Arc<AtomicBool>,
    directory: Arc<Directory>,
    /// Run-to-completion: the loop `accept` drives while it waits. Weak: a
    /// listener kept past the runtime's shutdown must not keep the loop, its
    /// link and so the EAL alive.
    driver: Option<Weak<caller::CallerLoop>>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        // New connections are refused until the next `listen`.
        self.listening.store(false, Ordering::Release);
    }
}

impl Listener {
    /// Waits for the next incoming connection (established once returned).
    pub fn accept(&self) -> io::Result<Stream> {
        let gone = || io::Error::new(io::ErrorKind::NotConnected, "the runtime has shut down");
        let s = match self.driver.as_ref().map(Weak::upgrade) {
            Some(None) => return Err(gone()),
            Some(Some(d)) => {
                let mut got = None;
                d.drive_until(caller::Urgency::Control, || {
                    got = got.take().or_else(|| self.rx.try_recv().ok());
                    got.is_some()
                });
                got.ok_or_else(gone)?
            }
            None => self.rx.recv().map_err(|_| gone())?,
        };
        self.directory.register(&s.shared);
        Ok(s)
    }

    /// Like [`Listener::accept`], giving up after `timeout`.
    pub fn accept_timeout(&self, timeout: Duration) -> io::Result<Stream> {
        if let Some(d) = &self.driver {
            let d = d.upgrade().ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotConnected, "the runtime has shut down")
            })?;
            let deadline = std::time::Instant::now() + timeout;
            let mut got = None;
            d.drive_until(caller::Urgency::Control, || {
                got = got.take().or_else(|| self.rx.try_recv().ok());
                got.is_some() || std::time::Instant::now() >= deadline
            });
            let s = got.ok_or_else(|| {
                if d.stopped() {
                    io::Error::new(io::ErrorKind::NotConnected, "the runtime has shut down")
                } else {
                    io::Error::new(io::ErrorKind::TimedOut, "no incoming connection")
                }
            })?;
            self.directory.register(&s.shared);
            return Ok(s);
        }
        let s = self.rx.recv_timeout(timeout).map_err(|e| match e {
            mpsc::RecvTimeoutError::Timeout => {
                io::Error::new(io::ErrorKind::TimedOut, "no incoming connection")
            }
            mpsc::RecvTimeoutError::Disconnected => {
                io::Error::new(io::ErrorKind::NotConnected, "the runtime has shut down")
            }
        })?;
        self.directory.register(&s.shared);
        Ok(s)
    }

    /// The address connections arrive at.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }
}

impl Runtime {
    /// A builder.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// What the runtime drives, e.g. `dpdk net_memif0 q0 10.88.0.2:9000`.
    pub fn link_name(&self) -> &str {
        &self.link_name
    }

    /// The local address (of the first link).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Opens a connection and waits until it is established (or fails: the error
    /// says why, e.g. unreachable, refused).
    pub fn connect(&self, to: SocketAddr) -> io::Result<Stream> {
        self.connect_timeout(to, None)
    }

    /// Like [`Runtime::connect`], with a limit on the wait (`None`: the transport's
    /// own handshake timeout decides).
    pub fn connect_timeout(&self, to: SocketAddr, timeout: Option<Duration>) -> io::Result<Stream> {
        self.connect_with(to, ConnectOptions::default(), timeout)
    }

    /// Like [`Runtime::connect_timeout`], the connection with its own controller
    /// or startup (e.g. CUBIC flows beside the default BBR ones). Options that
    /// make the transport configuration invalid are refused (`InvalidInput`).
    pub fn connect_with(
        &self,
        to: SocketAddr,
        options: ConnectOptions,
        timeout: Option<Duration>,
    ) -> io::Result<Stream> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % self.loops.len();
        let (tx, rx) = mpsc::sync_channel(1);
        self.loops[i]
            .control
            .send(Control::Connect {
                to,
                options,
                reply: tx,
            })
            .map_err(|_| {
                io::Error::new(io::ErrorKind::NotConnected, "the runtime has shut down")
            })?;
        let gone = || io::Error::new(io::ErrorKind::NotConnected, "the runtime has shut down");
        let stream = match self.loops[i].driver() {
            Some(d) => {
                let mut got = None;
                d.drive_until(caller::Urgency::Data, || {
                    got = got.take().or_else(|| rx.try_recv().ok());
                    got.is_some()
                });
                got.ok_or_else(gone)??
            }
            None => rx.recv().map_err(|_| gone())??,
        };
        stream.wait_established(timeout)?;
        self.directory.register(&stream.shared);
        Ok(stream)
    }

    /// Starts accepting connections on `port` (the runtime's own UDP port, or 0 for
    /// it). One listener per runtime.
    pub fn listen(&self, port: u16) -> io::Result<Listener> {
        if port != 0 && port != self.local.port() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "this runtime is bound to port {}; build another runtime to listen on {port}",
                    self.local.port()
                ),
            ));
        }
        if self.listening.swap(true, Ordering::AcqRel) {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                "already listening (one listener per runtime)",
            ));
        }
        let waiting = self
            .waiting_listener
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let rx = match waiting {
            Some(rx) => rx,
            None => {
                let (tx, rx) = mpsc::sync_channel(self.accept_backlog);
                for lp in &self.loops {
                    lp.control
                        .send(Control::Listen { accept: tx.clone() })
                        .map_err(|_| {
                            io::Error::new(io::ErrorKind::NotConnected, "runtime shut down")
                        })?;
                }
                rx
            }
        };
        Ok(Listener {
            rx,
            local: self.local,
            listening: self.listening.clone(),
            directory: self.directory.clone(),
            driver: self.loops[0].driver().map(Arc::downgrade),
        })
    }

    /// Statistics of every I/O loop (link, endpoint, load estimate). In
    /// run-to-completion mode a loop nobody is polling is polled once first, so
    /// the figures are current.
    pub fn stats(&self) -> RuntimeStats {
        self.poll();
        RuntimeStats {
            loops: self
                .loops
                .iter()
                .map(|l| (**l.stats.load()).clone())
                .collect(),
        }
    }

    /// Run-to-completion mode ([`IoCore::Caller`]): polls each I/O loop once, if no
    /// other thread is polling it (stream calls that wait poll it themselves; an
    /// application busy elsewhere calls this now and then so acknowledgements and
    /// timers keep going). Returns whether any loop was polled; does nothing for
    /// loops on cores of their own.
    pub fn poll(&self) -> bool {
        let mut any = false;
        for l in &self.loops {
            if let Some(d) = l.driver() {
                any |= d.drive_once();
            }
        }
        any
    }

    /// A handle that polls this runtime's run-to-completion loops from another
    /// thread (see [`Poller`]).
    pub fn poller(&self) -> Poller {
        Poller {
            drivers: self
                .loops
                .iter()
                .filter_map(|l| l.driver().map(Arc::downgrade))
                .collect(),
        }
    }

    /// Graceful shutdown: connections close (up to the shutdown timeout), the loops
    /// stop, links (ports) are released. Blocks until done.
    pub fn shutdown(mut self) -> io::Result<()> {
        self.stop()
    }

    fn stop(&mut self) -> io::Result<()> {
        for l in &self.loops {
            let _ = l.control.send(Control::Shutdown);
        }
        let mut err = None;
        for l in &mut self.loops {
            match l.join.take() {
                Some(Join::Caller(c)) => {
                    // Polled here until every connection closed (or the shutdown
                    // timeout): the loop has no thread of its own.
                    c.drive_until(caller::Urgency::Data, || false);
                }
                Some(Join::Thread(h)) => {
                    err = h
                        .join()
                        .err()
                        .map(|_| io::Error::other("the I/O thread panicked"))
                        .or(err);
                }
                #[cfg(feature = "dpdk")]
                Some(Join::Lcore(h)) => {
                    if let Err(e) = h.join() {
                        err = Some(io::Error::other(format!("the I/O lcore failed: {e}")))
                    }
                }
                None => {}
            }
        }
        err.map_or(Ok(()), Err)
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
