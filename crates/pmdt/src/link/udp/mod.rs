//! The kernel UDP backend: a non-blocking `std::net::UdpSocket`, batched with
//! `recvmmsg`/`sendmmsg` on Linux, with the kernel's segmentation offloads where
//! it has them (the `offload` module: runs of datagrams sent and received as one). Sends
//! gather the header and the payload slice (`iovec` pair), so the payload is not
//! copied in user space; received datagrams land in pooled buffers (directly, or
//! cut out of a coalesced run).

mod offload;

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsFd, AsRawFd};
use std::time::Instant;

use super::{
    Buffer, BufferPool, HeapBufMut, HeapPool, Link, LinkStats, Outgoing, Received, WakeOn,
};

/// Options of the kernel UDP link.
#[derive(Debug, Clone)]
pub struct UdpLinkConfig {
    /// Address to bind (port 0: any free port).
    pub bind: SocketAddr,
    /// Datagrams per `recvmmsg`/`sendmmsg` call (1..=64).
    pub batch: usize,
    /// Socket send and receive buffer sizes to request, bytes.
    pub socket_buffer: usize,
    /// Packet buffers in the pool.
    pub pool_buffers: usize,
    /// Use UDP segmentation offloads (Linux GSO/GRO) where the kernel has them.
    pub segmentation_offload: bool,
}

impl Default for UdpLinkConfig {
    fn default() -> Self {
        Self {
            bind: "0.0.0.0:0".parse().expect("valid"),
            batch: 64,
            socket_buffer: 8 << 20,
            pool_buffers: 64 * 1024,
            segmentation_offload: true,
        }
    }
}

const HEADER_ROOM: usize = 2048;
/// Bytes a pooled receive buffer holds (the largest datagram taken).
const RX_BUFFER: usize = 2048;

struct TxEntry {
    dest: SocketAddr,
    to: libc::sockaddr_storage,
    to_len: libc::socklen_t,
    header_len: usize,
    payload: Option<(Buffer, usize, usize)>,
}

/// A pmdt link over a kernel UDP socket.
pub struct UdpLink {
    sock: UdpSocket,
    local: SocketAddr,
    batch: usize,
    pool: HeapPool,
    rx_bufs: Vec<HeapBufMut>,
    rx_addrs: Vec<libc::sockaddr_storage>,
    tx: Vec<TxEntry>,
    tx_headers: Vec<u8>,
    tx_mode: TxMode,
    rx_mode: RxMode,
    stats: LinkStats,
}

/// How queued datagrams leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TxMode {
    /// One `sendmmsg` entry per datagram.
    Datagrams,
    /// Runs of one size to one address as one GSO message each.
    Segmented,
}

/// How datagrams arrive.
enum RxMode {
    /// One `recvmmsg` entry per datagram, straight into pooled buffers.
    Datagrams,
    /// GRO: runs of datagrams in one buffer, cut into pooled buffers.
    Coalesced {
        buf: Box<[u8]>,
        run: Option<offload::GroRun>,
    },
}

impl UdpLink {
    /// Binds the socket. Errors say which address and why (e.g. in use).
    pub fn bind(cfg: &UdpLinkConfig) -> io::Result<Self> {
        let sock = UdpSocket::bind(cfg.bind).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot bind UDP socket {}: {e}", cfg.bind),
            )
        })?;
        sock.set_nonblocking(true)?;
        set_buffer(&sock, libc::SO_RCVBUF, cfg.socket_buffer);
        set_buffer(&sock, libc::SO_SNDBUF, cfg.socket_buffer);
        let local = sock.local_addr()?;
        let batch = cfg.batch.clamp(1, 64);
        let rx_mode = if cfg.segmentation_offload && offload::enable_gro(sock.as_raw_fd()) {
            RxMode::Coalesced {
                buf: vec![0; offload::GRO_BUFFER].into_boxed_slice(),
                run: None,
            }
        } else {
            RxMode::Datagrams
        };
        // SAFETY: sockaddr_storage is plain old data; all-zero is a valid value.
        let zero_addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        Ok(Self {
            sock,
            local,
            batch,
            pool: HeapPool::new(cfg.pool_buffers, RX_BUFFER),
            rx_bufs: Vec::with_capacity(batch),
            rx_addrs: vec![zero_addr; batch],
            tx: Vec::with_capacity(batch),
            tx_headers: vec![0; batch * HEADER_ROOM],
            tx_mode: if cfg.segmentation_offload {
                TxMode::Segmented
            } else {
                TxMode::Datagrams
            },
            rx_mode,
            stats: LinkStats::default(),
        })
    }
}

fn set_buffer(sock: &UdpSocket, opt: libc::c_int, size: usize) {
    let v = size.min(i32::MAX as usize) as libc::c_int;
    // SAFETY: valid fd, option value is a c_int of the given size. Failure (e.g. a
    // limit) only leaves the default size.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

fn to_sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: plain old data; zero is valid.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in, sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above, for sockaddr_in6.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in6, sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

fn from_sockaddr(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match ss.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let sin = unsafe { &*(ss as *const _ as *const libc::sockaddr_in) };
            let ip = std::net::Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
            Some(SocketAddr::from((ip, u16::from_be(sin.sin_port))))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let sin6 = unsafe { &*(ss as *const _ as *const libc::sockaddr_in6) };
            let ip = std::net::Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::from((ip, u16::from_be(sin6.sin6_port))))
        }
        _ => None,
    }
}

impl Link for UdpLink {
    fn describe(&self) -> String {
        format!("kernel udp {}", self.local)
    }

    fn local_addr(&self) -> SocketAddr {
        self.local
    }

    fn pool(&self) -> BufferPool {
        BufferPool::new(self.pool.clone())
    }

    fn recv(&mut self, _now: Instant, out: &mut Vec<Received>, max: usize) -> usize {
        if matches!(self.rx_mode, RxMode::Coalesced { .. }) {
            return self.recv_coalesced(out, max);
        }
        let want = max.min(self.batch);
        while self.rx_bufs.len() < want {
            match self.pool.take() {
                Some(b) => self.rx_bufs.push(b),
                None => break,
            }
        }
        let n = self.rx_bufs.len().min(want);
        if n == 0 {
            self.stats.rx_no_buffer += 1;
            return 0;
        }
        let mut iovs: [libc::iovec; 64] = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; 64];
        // SAFETY: mmsghdr is plain old data; zero is valid.
        let mut msgs: [libc::mmsghdr; 64] = unsafe { std::mem::zeroed() };
        for i in 0..n {
            let space = self.rx_bufs[i].space();
            iovs[i] = libc::iovec {
                iov_base: space.as_mut_ptr() as *mut libc::c_void,
                iov_len: space.len(),
            };
            msgs[i].msg_hdr.msg_iov = &mut iovs[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_name = &mut self.rx_addrs[i] as *mut _ as *mut libc::c_void;
            msgs[i].msg_hdr.msg_namelen =
                std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        }
        // SAFETY: msgs[..n] point at live iovecs, buffers and address storage that
        // outlive the call; the socket is non-blocking.
        let got = unsafe {
            libc::recvmmsg(
                self.sock.as_raw_fd(),
                msgs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if got <= 0 {
            return 0;
        }
        let got = got as usize;
        // Hand the filled buffers over in order; keep the rest for next time.
        let rest = self.rx_bufs.split_off(got);
        let filled = std::mem::replace(&mut self.rx_bufs, rest);
        for (i, mut b) in filled.into_iter().enumerate() {
            let len = msgs[i].msg_len as usize;
            let Some(from) = from_sockaddr(&self.rx_addrs[i]) else {
                self.stats.rx_malformed += 1;
                continue;
            };
            if msgs[i].msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
                self.stats.rx_malformed += 1;
                continue;
            }
            b.set_len(len);
            self.stats.rx_datagrams += 1;
            self.stats.rx_bytes += len as u64;
            out.push(Received {
                from,
                buf: Buffer::new(b.freeze()),
                start: 0,
                len,
            });
        }
        got
    }

    fn tx_room(&self) -> usize {
        self.batch - self.tx.len()
    }

    fn send(&mut self, _now: Instant, pkt: Outgoing<'_>) -> bool {
        if self.tx.len() >= self.batch || pkt.header.len() > HEADER_ROOM {
            self.stats.tx_dropped += 1;
            return false;
        }
        // The kernel reads `len` bytes from `start`: refuse a slice outside its
        // buffer instead of sending whatever memory follows it.
        if pkt.payload.is_some_and(|p| p.try_bytes().is_none()) {
            self.stats.tx_dropped += 1;
            return false;
        }
        let i = self.tx.len();
        self.tx_headers[i * HEADER_ROOM..i * HEADER_ROOM + pkt.header.len()]
            .copy_from_slice(pkt.header);
        let (to, to_len) = to_sockaddr(&pkt.to);
        self.tx.push(TxEntry {
            dest: pkt.to,
            to,
            to_len,
            header_len: pkt.header.len(),
            payload: pkt.payload.map(|p| (p.buf.share(), p.start, p.len)),
        });
        true
    }

    fn flush(&mut self, _now: Instant) {
        while !self.tx.is_empty() {
            if self.tx_mode == TxMode::Segmented {
                match self.flush_segmented() {
                    Flushed::Some => continue,
                    Flushed::Blocked => return,
                    Flushed::Unsupported => {
                        tracing::debug!("UDP GSO refused by the kernel: one datagram per entry");
                        self.tx_mode = TxMode::Datagrams;
                    }
                }
            }
            let n = self.tx.len().min(64);
            let mut iovs: [[libc::iovec; 2]; 64] = [[libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            }; 2]; 64];
            // SAFETY: plain old data; zero is valid.
            let mut msgs: [libc::mmsghdr; 64] = unsafe { std::mem::zeroed() };
            for i in 0..n {
                let e = &mut self.tx[i];
                iovs[i][0] = libc::iovec {
                    iov_base: self.tx_headers[i * HEADER_ROOM..].as_mut_ptr() as *mut libc::c_void,
                    iov_len: e.header_len,
                };
                let mut cnt = 1;
                if let Some((b, start, len)) = &e.payload {
                    // Checked in `send`; slicing keeps the iovec inside the buffer.
                    let bytes = &b.bytes()[*start..*start + *len];
                    iovs[i][1] = libc::iovec {
                        iov_base: bytes.as_ptr() as *mut libc::c_void,
                        iov_len: bytes.len(),
                    };
                    cnt = 2;
                }
                msgs[i].msg_hdr.msg_iov = iovs[i].as_mut_ptr();
                msgs[i].msg_hdr.msg_iovlen = cnt;
                msgs[i].msg_hdr.msg_name = &mut e.to as *mut _ as *mut libc::c_void;
                msgs[i].msg_hdr.msg_namelen = e.to_len;
            }
            // SAFETY: every msghdr points at live headers, payload buffers (held by
            // self.tx) and addresses; the kernel only reads them (iov_base is *mut
            // by the C signature).
            let sent = unsafe {
                libc::sendmmsg(
                    self.sock.as_raw_fd(),
                    msgs.as_mut_ptr(),
                    n as libc::c_uint,
                    0,
                )
            };
            if sent <= 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::WouldBlock {
                    return; // socket buffer full: retry on the next flush
                }
                // Anything else (unreachable network, refused by ICMP) concerns
                // the first datagram: drop it and go on.
                self.stats.tx_dropped += 1;
                self.drop_front(1);
                continue;
            }
            let sent = sent as usize;
            for m in &msgs[..sent] {
                self.stats.tx_datagrams += 1;
                self.stats.tx_bytes += m.msg_len as u64;
            }
            self.drop_front(sent);
        }
    }

    /// The socket: readable when a datagram arrives, and writable when its
    /// buffer, full at the last flush, has room for the datagrams still queued.
    fn wait_on(&mut self, wait: &mut dyn FnMut(Option<WakeOn<'_>>)) {
        wait(Some(WakeOn {
            fd: self.sock.as_fd(),
            writable: !self.tx.is_empty(),
        }))
    }

    fn stats(&self) -> LinkStats {
        self.stats.clone()
    }
}

/// What one [`UdpLink::flush_segmented`] call did.
enum Flushed {
    /// Sent (or dropped, on an error concerning them) some queued datagrams.
    Some,
    /// The socket's buffer is full: retry on the next flush.
    Blocked,
    /// The kernel refuses GSO messages.
    Unsupported,
}

impl UdpLink {
    /// Sends queued datagrams as GSO messages (runs of one size to one address),
    /// up to 64 messages in one `sendmmsg`.
    fn flush_segmented(&mut self) -> Flushed {
        const MSGS: usize = 64;
        let mut iovs = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; 2 * 64];
        // SAFETY: plain old data; zero is valid.
        let mut msgs: [libc::mmsghdr; MSGS] = unsafe { std::mem::zeroed() };
        let mut cmsgs = [offload::CmsgBuf::new(); MSGS];
        let mut runs = [0usize; MSGS];
        let mut sizes = [0usize; 64];
        let queued = self.tx.len().min(64);
        self.group_by_destination(queued);
        for (s, e) in sizes.iter_mut().zip(&self.tx[..queued]) {
            *s = e.header_len + e.payload.as_ref().map_or(0, |p| p.2);
        }
        let (mut i, mut m, mut v) = (0, 0, 0);
        while i < queued && m < MSGS {
            let first = self.tx[i].dest;
            let n = offload::gso_run(&sizes[i..queued], |k| self.tx[i + k].dest == first);
            let iov_start = v;
            for k in i..i + n {
                let e = &self.tx[k];
                iovs[v] = libc::iovec {
                    iov_base: self.tx_headers[k * HEADER_ROOM..].as_ptr() as *mut libc::c_void,
                    iov_len: e.header_len,
                };
                v += 1;
                if let Some((b, start, len)) = &e.payload {
                    // Checked in `send`; slicing keeps the iovec inside the buffer.
                    let bytes = &b.bytes()[*start..*start + *len];
                    iovs[v] = libc::iovec {
                        iov_base: bytes.as_ptr() as *mut libc::c_void,
                        iov_len: bytes.len(),
                    };
                    v += 1;
                }
            }
            let h = &mut msgs[m].msg_hdr;
            h.msg_iov = iovs[iov_start..].as_mut_ptr();
            h.msg_iovlen = v - iov_start;
            h.msg_name = &mut self.tx[i].to as *mut _ as *mut libc::c_void;
            h.msg_namelen = self.tx[i].to_len;
            if n > 1 {
                offload::set_segment_size(h, &mut cmsgs[m], sizes[i] as u16);
            }
            runs[m] = n;
            i += n;
            m += 1;
        }
        // SAFETY: every msghdr points at live iovecs (`iovs`), headers
        // (`tx_headers`), payload buffers (held by `self.tx`), addresses and
        // control messages (`cmsgs`), none of which move before the call returns;
        // the kernel only reads them.
        let sent = unsafe { libc::sendmmsg(self.sock.as_raw_fd(), msgs.as_mut_ptr(), m as _, 0) };
        if sent <= 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::WouldBlock {
                return Flushed::Blocked;
            }
            if runs[0] > 1
                && matches!(
                    err.raw_os_error(),
                    Some(libc::EIO | libc::EINVAL | libc::EOPNOTSUPP | libc::ENOPROTOOPT)
                )
            {
                return Flushed::Unsupported;
            }
            // Anything else (unreachable network, refused by ICMP) concerns the
            // first message: drop its datagrams and go on.
            self.stats.tx_dropped += runs[0] as u64;
            self.drop_front(runs[0]);
            return Flushed::Some;
        }
        let sent = sent as usize;
        let mut entries = 0;
        for (msg, n) in msgs[..sent].iter().zip(runs) {
            self.stats.tx_datagrams += n as u64;
            self.stats.tx_bytes += msg.msg_len as u64;
            entries += n;
        }
        self.drop_front(entries);
        Flushed::Some
    }

    /// GRO: hands out the datagrams of the current run, receiving the next run
    /// when it is used up, until `max` or nothing more has arrived.
    fn recv_coalesced(&mut self, out: &mut Vec<Received>, max: usize) -> usize {
        let RxMode::Coalesced { buf, run } = &mut self.rx_mode else {
            return 0;
        };
        let mut got = 0;
        loop {
            while got < max {
                let Some(r) = run.as_mut() else { break };
                let Some(range) = r.next_datagram() else {
                    *run = None;
                    break;
                };
                let len = range.len();
                if len > RX_BUFFER {
                    self.stats.rx_malformed += 1;
                    continue;
                }
                let Some(b) = self.pool.copy_from(&buf[range.clone()]) else {
                    // Out of buffers: keep the datagram for the next call.
                    r.next = range.start;
                    self.stats.rx_no_buffer += 1;
                    return got;
                };
                self.stats.rx_datagrams += 1;
                self.stats.rx_bytes += len as u64;
                out.push(Received {
                    from: r.from,
                    buf: Buffer::new(b),
                    start: 0,
                    len,
                });
                got += 1;
            }
            if got >= max || run.is_some() {
                return got;
            }
            let mut iov = libc::iovec {
                iov_base: buf.as_mut_ptr() as *mut libc::c_void,
                iov_len: buf.len(),
            };
            // SAFETY: plain old data; zero is valid.
            let mut from: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let mut control = offload::CmsgBuf::new();
            // SAFETY: plain old data; zero is valid.
            let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
            hdr.msg_iov = &mut iov;
            hdr.msg_iovlen = 1;
            hdr.msg_name = &mut from as *mut _ as *mut libc::c_void;
            hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            hdr.msg_control = control.0.as_mut_ptr() as *mut libc::c_void;
            hdr.msg_controllen = control.0.len() as _;
            // SAFETY: the header points at the live buffer, address storage and
            // control buffer; the socket is non-blocking.
            let n = unsafe { libc::recvmsg(self.sock.as_raw_fd(), &mut hdr, libc::MSG_DONTWAIT) };
            if n <= 0 {
                return got;
            }
            let len = n as usize;
            let Some(sender) = from_sockaddr(&from) else {
                self.stats.rx_malformed += 1;
                continue;
            };
            if hdr.msg_flags & libc::MSG_TRUNC != 0 {
                self.stats.rx_malformed += 1;
                continue;
            }
            let segment = offload::gro_segment_size(&hdr).unwrap_or(len);
            *run = Some(offload::GroRun {
                from: sender,
                segment,
                next: 0,
                len,
            });
        }
    }

    /// Reorders the first `n` queued datagrams so that those to one address
    /// are adjacent, each address's in the order queued (the order between
    /// addresses does not matter to anyone). A group's sender (`--multi`) queues
    /// each datagram for every receiver in turn; interleaved, no two neighbours
    /// share an address and no GSO run forms, so every datagram cost a trip
    /// through the kernel's stack of its own.
    fn group_by_destination(&mut self, n: usize) {
        const MAX: usize = 64;
        let n = n.min(MAX);
        // Each entry's group: the index of the first distinct address it matches.
        let mut firsts = [0usize; MAX];
        let mut groups = 0;
        let mut group_of = [0u8; MAX];
        let mut sorted = true;
        for k in 0..n {
            let d = self.tx[k].dest;
            let g = match (0..groups).find(|&g| self.tx[firsts[g]].dest == d) {
                Some(g) => g,
                None => {
                    firsts[groups] = k;
                    groups += 1;
                    groups - 1
                }
            };
            sorted &= k == 0 || g >= group_of[k - 1] as usize;
            group_of[k] = g as u8;
        }
        if sorted {
            return;
        }
        // perm[i]: the entry that goes to position i.
        let mut perm = [0u8; MAX];
        let mut i = 0;
        for g in 0..groups {
            for (k, _) in group_of[..n]
                .iter()
                .enumerate()
                .filter(|(_, &o)| o as usize == g)
            {
                perm[i] = k as u8;
                i += 1;
            }
        }
        // Apply it in place, one cycle at a time: the entry that belongs at
        // `start` travels along the cycle by swaps.
        let mut placed = 0u64;
        for start in 0..n {
            let mut i = start;
            while placed & (1 << i) == 0 {
                placed |= 1 << i;
                let from = perm[i] as usize;
                if from == start {
                    break;
                }
                self.swap_queued(i, from);
                i = from;
            }
        }
    }

    /// Swaps two queued datagrams, headers included.
    fn swap_queued(&mut self, a: usize, b: usize) {
        let (lo, hi) = (a.min(b), a.max(b));
        let len = self.tx[a].header_len.max(self.tx[b].header_len);
        let (left, right) = self.tx_headers.split_at_mut(hi * HEADER_ROOM);
        left[lo * HEADER_ROOM..lo * HEADER_ROOM + len].swap_with_slice(&mut right[..len]);
        self.tx.swap(a, b);
    }

    fn drop_front(&mut self, n: usize) {
        self.tx.drain(..n);
        let left = self.tx.len();
        // Move the remaining headers to the front of the header area.
        self.tx_headers
            .copy_within(n * HEADER_ROOM..(n + left) * HEADER_ROOM, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::PayloadSlice;

    /// Issue 11 item 28: a payload slice reaching past its buffer must not make the
    /// kernel read (and send) the memory that follows the block.
    #[test]
    fn payload_slice_outside_its_buffer_is_refused_not_sent() {
        let cfg = UdpLinkConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            pool_buffers: 8,
            ..Default::default()
        };
        let mut link = UdpLink::bind(&cfg).unwrap();
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        peer.set_nonblocking(true).unwrap();
        let buf = Buffer::new(HeapPool::new(1, 2048).copy_from(b"0123456789").unwrap());
        let now = Instant::now();
        for (start, len) in [(0, 4000), (8, 3), (usize::MAX, 2)] {
            let pkt = Outgoing {
                to: peer.local_addr().unwrap(),
                header: b"H",
                payload: Some(PayloadSlice {
                    buf: &buf,
                    start,
                    len,
                }),
            };
            assert!(!link.send(now, pkt), "{start}+{len} refused");
        }
        assert_eq!(link.stats().tx_dropped, 3);
        // A slice inside the buffer still goes out, header + payload.
        let ok = Outgoing {
            to: peer.local_addr().unwrap(),
            header: b"H",
            payload: Some(PayloadSlice {
                buf: &buf,
                start: 2,
                len: 8,
            }),
        };
        assert!(link.send(now, ok));
        link.flush(now);
        // Loopback delivers during sendmmsg: the datagram is there, and only it.
        let mut got = [0u8; 8192];
        let n = peer.recv(&mut got).expect("the valid datagram arrived");
        assert_eq!(&got[..n], b"H23456789");
        assert_eq!(
            peer.recv(&mut got).unwrap_err().kind(),
            io::ErrorKind::WouldBlock,
            "nothing else was sent"
        );
    }

    fn link(offload: bool) -> UdpLink {
        UdpLink::bind(&UdpLinkConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            pool_buffers: 1024,
            segmentation_offload: offload,
            ..Default::default()
        })
        .unwrap()
    }

    /// Datagram `i` of a test run: a header naming `i` and a payload of `len`
    /// bytes derived from `i`.
    fn datagram(i: usize, len: usize) -> (Vec<u8>, Buffer) {
        let header = format!("H{i:05}").into_bytes();
        let body: Vec<u8> = (0..len).map(|k| (k * 7 + i * 13) as u8).collect();
        let buf = Buffer::new(HeapPool::new(1, 2048).copy_from(&body).unwrap());
        (header, buf)
    }

    fn expected(i: usize, len: usize) -> Vec<u8> {
        let (mut h, b) = datagram(i, len);
        h.extend_from_slice(b.bytes());
        h
    }

    /// Queues datagram `i` of `len` bytes for `to`, flushing first if the
    /// queue is full.
    fn queue(tx: &mut UdpLink, to: SocketAddr, i: usize, len: usize) {
        let now = Instant::now();
        let (h, b) = datagram(i, len);
        while tx.tx_room() == 0 {
            tx.flush(now);
        }
        let pkt = Outgoing {
            to,
            header: &h,
            payload: Some(PayloadSlice {
                buf: &b,
                start: 0,
                len,
            }),
        };
        assert!(tx.send(now, pkt));
    }

    fn send_all(tx: &mut UdpLink, to: SocketAddr, sizes: &[usize]) {
        for (i, &len) in sizes.iter().enumerate() {
            queue(tx, to, i, len);
        }
        while !tx.tx.is_empty() {
            tx.flush(Instant::now());
        }
    }

    /// Receives `n` datagrams (loopback delivers during the send; a short wait
    /// covers a scheduler hiccup).
    fn recv_n(rx: &mut UdpLink, n: usize) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        let mut out = Vec::new();
        while got.len() < n && Instant::now() < deadline {
            out.clear();
            rx.recv(Instant::now(), &mut out, 7);
            got.extend(out.drain(..).map(|r| r.payload().to_vec()));
        }
        got
    }

    /// Runs of equal-size datagrams (with a shorter last, and size changes in
    /// between) leave as GSO messages and arrive, with GRO on the receiving
    /// link, as the same datagrams in the same order, byte for byte.
    #[test]
    fn offloaded_runs_arrive_as_the_datagrams_sent() {
        let mut sizes = vec![1200; 50];
        sizes.extend([700, 1200, 1200, 64, 64, 64, 10, 1400]);
        sizes.extend(vec![1400; 30]);
        for (tx_offload, rx_offload) in [(true, true), (true, false), (false, true)] {
            let mut tx = link(tx_offload);
            let mut rx = link(rx_offload);
            send_all(&mut tx, rx.local_addr(), &sizes);
            let got = recv_n(&mut rx, sizes.len());
            assert_eq!(got.len(), sizes.len(), "tx {tx_offload} rx {rx_offload}");
            for (i, (g, &len)) in got.iter().zip(&sizes).enumerate() {
                assert_eq!(
                    *g,
                    expected(i, len),
                    "datagram {i} (tx {tx_offload} rx {rx_offload})"
                );
            }
            let st = tx.stats();
            assert_eq!(st.tx_datagrams, sizes.len() as u64);
            assert_eq!(st.tx_dropped, 0);
            assert_eq!(rx.stats().rx_datagrams, sizes.len() as u64);
            if tx_offload {
                assert_eq!(tx.tx_mode, TxMode::Segmented, "loopback takes GSO");
            }
            if rx_offload {
                assert!(
                    matches!(rx.rx_mode, RxMode::Coalesced { .. }),
                    "loopback takes GRO"
                );
            }
        }
    }

    /// A group's sender queues each datagram for every receiver in turn. Sent,
    /// every receiver gets its own datagrams, byte for byte and in the order
    /// queued, with GSO on and off.
    #[test]
    fn datagrams_interleaved_over_receivers_arrive_in_order_at_each() {
        let sizes: Vec<usize> = (0..150)
            .map(|i| if i % 17 == 16 { 300 } else { 1200 })
            .collect();
        for offload in [true, false] {
            let mut tx = link(offload);
            let mut rxs: Vec<UdpLink> = (0..3).map(|_| link(true)).collect();
            for (i, &len) in sizes.iter().enumerate() {
                for rx in &rxs {
                    queue(&mut tx, rx.local_addr(), i, len);
                }
            }
            while !tx.tx.is_empty() {
                tx.flush(Instant::now());
            }
            for (r, rx) in rxs.iter_mut().enumerate() {
                let got = recv_n(rx, sizes.len());
                assert_eq!(got.len(), sizes.len(), "receiver {r}, offload {offload}");
                for (i, (g, &len)) in got.iter().zip(&sizes).enumerate() {
                    assert_eq!(*g, expected(i, len), "receiver {r} datagram {i}");
                }
            }
            assert_eq!(tx.stats().tx_datagrams, 3 * sizes.len() as u64);
        }
    }

    /// Interleaved destinations are regrouped (so GSO runs form), each
    /// destination's datagrams keeping their order and their headers.
    #[test]
    fn queued_datagrams_are_grouped_by_destination_in_order() {
        let mut tx = link(true);
        let to: Vec<SocketAddr> = (0..3)
            .map(|p| format!("127.0.0.1:{}", 40_000 + p).parse().unwrap())
            .collect();
        let now = Instant::now();
        let order = [0, 1, 2, 0, 1, 2, 2, 0, 1, 1, 0, 2, 0];
        for (i, &d) in order.iter().enumerate() {
            let h = format!("H{i:02}-{}", "x".repeat(i)).into_bytes();
            let pkt = Outgoing {
                to: to[d],
                header: &h,
                payload: None,
            };
            assert!(tx.send(now, pkt));
        }
        tx.group_by_destination(order.len());
        let mut want: Vec<usize> = Vec::new();
        for d in 0..3 {
            want.extend((0..order.len()).filter(|&i| order[i] == d));
        }
        for (pos, &i) in want.iter().enumerate() {
            let e = &tx.tx[pos];
            assert_eq!(e.dest, to[order[i]], "position {pos}");
            let h = &tx.tx_headers[pos * HEADER_ROOM..pos * HEADER_ROOM + e.header_len];
            assert_eq!(
                h,
                format!("H{i:02}-{}", "x".repeat(i)).as_bytes(),
                "position {pos}"
            );
        }
    }

    /// A GRO receiver whose pool runs dry keeps the rest of its run and hands it
    /// out once buffers are back, in order.
    #[test]
    fn a_coalesced_run_waits_for_buffers_instead_of_dropping() {
        let mut tx = link(true);
        let mut rx = UdpLink::bind(&UdpLinkConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            pool_buffers: 4,
            ..Default::default()
        })
        .unwrap();
        let sizes = vec![500; 20];
        send_all(&mut tx, rx.local_addr(), &sizes);
        let mut got = Vec::new();
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        let mut out = Vec::new();
        while got.len() < sizes.len() && Instant::now() < deadline {
            rx.recv(Instant::now(), &mut out, 64);
            assert!(out.len() <= 4, "never more than the pool holds");
            // Consumed and released before the next call.
            got.extend(out.drain(..).map(|r| r.payload().to_vec()));
        }
        assert_eq!(got.len(), sizes.len());
        for (i, g) in got.iter().enumerate() {
            assert_eq!(*g, expected(i, 500), "datagram {i}");
        }
        assert!(rx.stats().rx_no_buffer > 0);
        assert_eq!(rx.stats().rx_malformed, 0);
    }
}
