//! Linux UDP segmentation offloads for the kernel UDP link.
//!
//! - Sending (GSO, `UDP_SEGMENT`): a run of queued datagrams to one address, all
//!   of one size but the last (which may be shorter), leaves in one `sendmsg`
//!   message whose iovecs gather every header and payload in place (no copy); the
//!   kernel walks its stack once for the run and cuts it into datagrams at the
//!   end (on loopback, a receiver with GRO gets the run whole).
//! - Receiving (GRO, `UDP_GRO`): the kernel hands over a run of same-size
//!   datagrams from one sender in one buffer, with the segment size in a control
//!   message; [`GroRun`] cuts it back into datagrams.
//!
//! Written against the socket API directly rather than with `quinn-udp` (which
//! does both): its transmit takes one contiguous buffer, so each payload would be
//! copied into it, where the iovecs here send headers and payloads where they are.

use std::net::SocketAddr;
use std::os::fd::RawFd;

/// Most datagrams in one GSO message (the kernel's `UDP_MAX_SEGMENTS` is 64 on
/// older kernels, 128 on newer ones).
pub(super) const MAX_SEGMENTS: usize = 64;
/// Most bytes in one GSO message (an IP datagram's limit less its headers).
pub(super) const MAX_GSO_BYTES: usize = 65_000;
/// A GRO receive buffer: the largest run the kernel coalesces.
pub(super) const GRO_BUFFER: usize = 65_536;

/// Control-message space for one `u16`/`c_int` option, 8-byte aligned.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub(super) struct CmsgBuf(pub [u8; 32]);

impl CmsgBuf {
    pub(super) const fn new() -> Self {
        Self([0; 32])
    }
}

/// Asks for GRO on `fd`; whether the kernel agreed.
pub(super) fn enable_gro(fd: RawFd) -> bool {
    let on: libc::c_int = 1;
    // SAFETY: valid fd; the option value is a c_int of the given size.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_UDP,
            libc::UDP_GRO,
            &on as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

/// Writes a `UDP_SEGMENT` control message for segments of `size` bytes into
/// `buf` and points `hdr` at it.
pub(super) fn set_segment_size(hdr: &mut libc::msghdr, buf: &mut CmsgBuf, size: u16) {
    // SAFETY: CMSG_SPACE of a u16 (24 bytes on 64-bit Linux) fits the 32-byte,
    // 8-aligned buffer; CMSG_FIRSTHDR on a msghdr whose control area is that
    // buffer returns its start, and the data written stays inside it.
    unsafe {
        let space = libc::CMSG_SPACE(std::mem::size_of::<u16>() as u32) as usize;
        debug_assert!(space <= buf.0.len());
        hdr.msg_control = buf.0.as_mut_ptr() as *mut libc::c_void;
        hdr.msg_controllen = space as _;
        let c = libc::CMSG_FIRSTHDR(hdr);
        (*c).cmsg_level = libc::SOL_UDP;
        (*c).cmsg_type = libc::UDP_SEGMENT;
        (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<u16>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut u16, size);
    }
}

/// The GRO segment size a received message's control data carries, if any.
pub(super) fn gro_segment_size(hdr: &libc::msghdr) -> Option<usize> {
    // SAFETY: the kernel filled `msg_controllen` bytes of the control buffer the
    // header points at; the CMSG macros walk within that length, and a UDP_GRO
    // message carries a c_int.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(hdr);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == libc::UDP_GRO {
                let v = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::c_int);
                return (v > 0).then_some(v as usize);
            }
            c = libc::CMSG_NXTHDR(hdr, c);
        }
    }
    None
}

/// A received GRO run not yet handed out: datagrams of `segment` bytes (the last
/// may be shorter) in `buf[next..len]`.
pub(super) struct GroRun {
    pub from: SocketAddr,
    pub segment: usize,
    pub next: usize,
    pub len: usize,
}

impl GroRun {
    /// The next datagram's range in the buffer, if any is left.
    pub(super) fn next_datagram(&mut self) -> Option<std::ops::Range<usize>> {
        if self.next >= self.len || self.segment == 0 {
            return None;
        }
        let end = (self.next + self.segment).min(self.len);
        let r = self.next..end;
        self.next = end;
        Some(r)
    }
}

/// How many of the queued datagrams (`sizes[i]` bytes each, to `same_dest[i]`:
/// whether datagram `i` goes where datagram 0 goes) one GSO message can carry:
/// all of the first one's size, except that the last may be shorter, within
/// [`MAX_SEGMENTS`] and [`MAX_GSO_BYTES`].
pub(super) fn gso_run(sizes: &[usize], same_dest: impl Fn(usize) -> bool) -> usize {
    let Some(&seg) = sizes.first() else {
        return 0;
    };
    let mut n = 1;
    let mut total = seg;
    while n < sizes.len() && n < MAX_SEGMENTS && same_dest(n) {
        let s = sizes[n];
        if s > seg || total + s > MAX_GSO_BYTES {
            break;
        }
        n += 1;
        total += s;
        if s < seg {
            break; // a shorter one ends the run
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_one_size_with_at_most_a_shorter_last() {
        let all = |_| true;
        assert_eq!(gso_run(&[], all), 0);
        assert_eq!(gso_run(&[100], all), 1);
        assert_eq!(gso_run(&[100, 100, 100], all), 3);
        assert_eq!(gso_run(&[100, 100, 60, 100], all), 3);
        assert_eq!(gso_run(&[100, 120, 100], all), 1);
        assert_eq!(gso_run(&[100, 100, 100], |i| i < 2), 2);
        assert_eq!(gso_run(&[1400; 200], all), 46); // 46 x 1400 <= 65,000
        assert_eq!(gso_run(&[64; 200], all), MAX_SEGMENTS);
    }

    #[test]
    fn a_gro_run_cuts_into_segments_with_a_shorter_last() {
        let mut r = GroRun {
            from: "127.0.0.1:1".parse().unwrap(),
            segment: 100,
            next: 0,
            len: 250,
        };
        assert_eq!(r.next_datagram(), Some(0..100));
        assert_eq!(r.next_datagram(), Some(100..200));
        assert_eq!(r.next_datagram(), Some(200..250));
        assert_eq!(r.next_datagram(), None);
    }
}
