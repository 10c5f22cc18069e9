//! Datagram links the runtime drives, behind one trait (in the spirit of smoltcp's
//! `phy::Device`): a DPDK port, a kernel UDP socket, an in-memory pair, and
//! middleware that wraps any of them (impairment injection, pcap capture).
//!
//! A link moves UDP payloads (pmdt datagrams) with their peer address. Payloads stay
//! in packet memory ([`Buffer`]) from the application's write to the wire and from
//! the wire to the application's read: the link sends a header plus a slice of a
//! shared buffer, and hands received datagrams over inside the buffer they arrived in.
//! Each backend brings its own memory and pool ([`PacketMemory`], [`PacketPool`]:
//! mbufs and mempools on DPDK, [`HeapBuf`] and [`HeapPool`] elsewhere).

mod buffer;
mod buffer_pool;
pub mod delay_line;
#[cfg(feature = "dpdk")]
pub mod dpdk_port;
mod heap_buf;
pub mod impair;
pub mod impair_model;
pub mod memory;
pub mod pcap;
mod stats;
pub mod udp;
mod write_buf;

use std::net::SocketAddr;
use std::os::fd::BorrowedFd;
use std::time::Instant;

pub use buffer::{Buffer, PacketMemory};
pub use buffer_pool::{BufferPool, BufferStash, PacketPool};
pub use heap_buf::{HeapBuf, HeapBufMut, HeapPool};
pub use stats::LinkStats;
pub use write_buf::{WritableMemory, WriteBuf};

/// Called by an application thread about to sleep: gives back the packet memory
/// its backend keeps for it meanwhile (DPDK: the mbufs in the thread's mempool
/// caches, see [`PacketPool::attach_thread`]), so other threads can use it.
#[inline]
pub(crate) fn thread_about_to_sleep() {
    #[cfg(feature = "dpdk")]
    dpdk::flush_registered_thread_caches();
}

/// A received datagram: `buf.bytes()[start..start + len]` is the UDP payload.
#[derive(Debug)]
pub struct Received {
    /// Sender.
    pub from: SocketAddr,
    /// The memory it arrived in.
    pub buf: Buffer,
    /// Start of the UDP payload in `buf`.
    pub start: usize,
    /// UDP payload length.
    pub len: usize,
}

impl Received {
    /// The UDP payload.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buf.bytes()[self.start..self.start + self.len]
    }
}

/// A slice of a shared buffer carried after a datagram's header.
#[derive(Debug, Clone, Copy)]
pub struct PayloadSlice<'a> {
    /// The buffer.
    pub buf: &'a Buffer,
    /// First byte in `buf.bytes()`.
    pub start: usize,
    /// Length.
    pub len: usize,
}

impl<'a> PayloadSlice<'a> {
    /// The payload bytes. Panics when `start + len` lies outside the buffer (see
    /// [`PayloadSlice::try_bytes`]).
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        match self.try_bytes() {
            Some(b) => b,
            None => panic!(
                "payload slice {}+{} outside its {}-byte buffer",
                self.start,
                self.len,
                self.buf.bytes().len()
            ),
        }
    }

    /// The payload bytes, or `None` when `start + len` lies outside the buffer
    /// (links refuse such a datagram instead of reading past the buffer).
    #[inline]
    pub fn try_bytes(&self) -> Option<&'a [u8]> {
        let end = self.start.checked_add(self.len)?;
        self.buf.bytes().get(self.start..end)
    }
}

/// A datagram to send: `header` then, for data packets, a payload slice.
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    /// Destination.
    pub to: SocketAddr,
    /// First bytes of the UDP payload (the pmdt header, or a whole control packet).
    pub header: &'a [u8],
    /// Stream bytes following the header.
    pub payload: Option<PayloadSlice<'a>>,
}

impl Outgoing<'_> {
    /// UDP payload length.
    pub fn len(&self) -> usize {
        self.header.len() + self.payload.map_or(0, |p| p.len)
    }

    /// Whether the datagram is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the UDP payload into `out` (for links that must serialize it);
    /// returns the length, or `None` if `out` is too small or the payload slice lies
    /// outside its buffer.
    pub fn copy_to(&self, out: &mut [u8]) -> Option<usize> {
        let n = self.len();
        if out.len() < n {
            return None;
        }
        let payload = match self.payload {
            Some(p) => p.try_bytes()?,
            None => &[],
        };
        out[..self.header.len()].copy_from_slice(self.header);
        out[self.header.len()..n].copy_from_slice(payload);
        Some(n)
    }
}

/// What a quiet I/O loop can sleep on to learn that its link has work (see
/// [`Link::wait_on`]).
#[derive(Debug, Clone, Copy)]
pub struct WakeOn<'a> {
    /// Turns readable when a datagram arrives.
    pub fd: BorrowedFd<'a>,
    /// Datagrams wait to be sent: wait for room to send them too.
    pub writable: bool,
}

/// A datagram link driven by one I/O thread or lcore.
pub trait Link: Send {
    /// What this link is (for logs and statistics), e.g. `dpdk net_tap0 10.0.0.2:9000`.
    fn describe(&self) -> String;
    /// The local address datagrams are sent from and received at.
    fn local_addr(&self) -> SocketAddr;
    /// Where application threads get memory for data they send.
    fn pool(&self) -> BufferPool;
    /// Receives up to `max` datagrams into `out` (appending); returns how many.
    fn recv(&mut self, now: Instant, out: &mut Vec<Received>, max: usize) -> usize;
    /// How many more datagrams [`Link::send`] accepts before [`Link::flush`].
    fn tx_room(&self) -> usize;
    /// Queues a datagram. Returns false (and counts a drop) when it could not.
    fn send(&mut self, now: Instant, pkt: Outgoing<'_>) -> bool;
    /// Hands queued datagrams to the device/kernel. Unsent ones stay queued.
    fn flush(&mut self, now: Instant);
    /// When the link must be polled again even without traffic (delayed datagrams).
    fn next_deadline(&self) -> Option<Instant> {
        None
    }
    /// Datagrams waiting in the receive ring, where the device reports it.
    fn rx_pending(&self) -> Option<u32> {
        None
    }
    /// Lets a quiet loop sleep until this link has work: calls `wait` once
    /// with what to wait on, valid (and armed, for a wake-up that must be) for
    /// as long as the call lasts. `wait(None)` (the default: a poll-mode
    /// device, an in-memory pair) when the link has nothing to offer: the loop
    /// naps in short steps and polls again.
    fn wait_on(&mut self, wait: &mut dyn FnMut(Option<WakeOn<'_>>)) {
        wait(None)
    }
    /// Counters.
    fn stats(&self) -> LinkStats;
}

impl<L: Link + ?Sized> Link for Box<L> {
    fn describe(&self) -> String {
        (**self).describe()
    }
    fn local_addr(&self) -> SocketAddr {
        (**self).local_addr()
    }
    fn pool(&self) -> BufferPool {
        (**self).pool()
    }
    fn recv(&mut self, now: Instant, out: &mut Vec<Received>, max: usize) -> usize {
        (**self).recv(now, out, max)
    }
    fn tx_room(&self) -> usize {
        (**self).tx_room()
    }
    fn send(&mut self, now: Instant, pkt: Outgoing<'_>) -> bool {
        (**self).send(now, pkt)
    }
    fn flush(&mut self, now: Instant) {
        (**self).flush(now)
    }
    fn next_deadline(&self) -> Option<Instant> {
        (**self).next_deadline()
    }
    fn rx_pending(&self) -> Option<u32> {
        (**self).rx_pending()
    }
    fn wait_on(&mut self, wait: &mut dyn FnMut(Option<WakeOn<'_>>)) {
        (**self).wait_on(wait)
    }
    fn stats(&self) -> LinkStats {
        (**self).stats()
    }
}
