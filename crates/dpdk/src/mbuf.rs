//! Owned packet buffers (`rte_mbuf`).

use std::ptr::NonNull;

use crate::error::{Error, ErrorKind, Result};
use dpdk_sys as sys;

/// An owned packet buffer. `Drop` returns it to its pool (`rte_pktmbuf_free`, all
/// segments). `Send`, not `Clone`: [`Mbuf::clone_ref`] makes a second reference to the
/// same packet memory (refcount), e.g. to keep a copy for retransmission; mutation
/// requires the mbuf to be unique.
#[repr(transparent)]
pub struct Mbuf(NonNull<sys::rte_mbuf>);

// SAFETY: an Mbuf is the unique owner of one reference to the packet; freeing and
// refcount updates are atomic in DPDK, so it may move between threads.
unsafe impl Send for Mbuf {}

/// Checksum verdict a PMD reported for a received packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxChecksum {
    /// The PMD did not check.
    Unknown,
    /// Checked and correct.
    Good,
    /// Checked and wrong.
    Bad,
    /// Not present / not checkable (e.g. the checksum field was not computed).
    NotPresent,
}

/// Header lengths for checksum offload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxChecksumOffload {
    /// L2 header length (14 for Ethernet without VLAN).
    pub l2_len: u8,
    /// L3 header length (20 for IPv4 without options).
    pub l3_len: u16,
    /// Ask the NIC for the IPv4 header checksum.
    pub ipv4: bool,
    /// Ask the NIC for the UDP checksum (the UDP checksum field must hold the
    /// pseudo-header checksum, as DPDK requires).
    pub udp: bool,
}

impl Mbuf {
    /// Most references one packet may have ([`Mbuf::clone_ref`], [`Mbuf::slice_ref`]).
    /// Half of DPDK's 16-bit refcount: the other half is margin for clones made
    /// concurrently on other threads after the same check.
    pub const MAX_REFS: u16 = 1 << 15;

    /// Takes ownership of a raw mbuf pointer.
    ///
    /// # Safety
    /// `ptr` must be a valid, non-null mbuf whose one reference the caller owns and
    /// hands over.
    #[inline]
    pub unsafe fn from_raw(ptr: *mut sys::rte_mbuf) -> Self {
        debug_assert!(!ptr.is_null());
        Self(NonNull::new_unchecked(ptr))
    }

    /// Gives up ownership, returning the raw pointer (the caller must free it).
    #[inline]
    pub fn into_raw(self) -> *mut sys::rte_mbuf {
        let p = self.0.as_ptr();
        std::mem::forget(self);
        p
    }

    /// The raw pointer, still owned by `self`.
    #[inline]
    pub fn as_ptr(&self) -> *mut sys::rte_mbuf {
        self.0.as_ptr()
    }

    #[inline]
    fn raw(&self) -> &sys::rte_mbuf {
        // SAFETY: we own a reference to a valid mbuf.
        unsafe { self.0.as_ref() }
    }

    /// Bytes of data in the first segment.
    #[inline]
    pub fn len(&self) -> usize {
        self.raw().data_len as usize
    }

    /// Whether the first segment holds no data.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total packet length over all segments.
    #[inline]
    pub fn pkt_len(&self) -> usize {
        self.raw().pkt_len as usize
    }

    /// Number of segments in the chain.
    #[inline]
    pub fn nb_segs(&self) -> u16 {
        self.raw().nb_segs
    }

    /// Free bytes in front of the data (first segment).
    #[inline]
    pub fn headroom(&self) -> usize {
        self.raw().data_off as usize
    }

    /// Free bytes after the data of the last segment.
    pub fn tailroom(&self) -> usize {
        let last = self.last_segment();
        // SAFETY: `last` is a valid segment of our chain.
        let l = unsafe { &*last };
        l.buf_len as usize - l.data_off as usize - l.data_len as usize
    }

    fn last_segment(&self) -> *mut sys::rte_mbuf {
        let mut m = self.0.as_ptr();
        // SAFETY: walking the `next` links of a valid chain.
        unsafe {
            while !(*m).next.is_null() {
                m = (*m).next;
            }
        }
        m
    }

    /// The data of the first segment.
    #[inline]
    pub fn data(&self) -> &[u8] {
        let r = self.raw();
        // SAFETY: buf_addr + data_off .. + data_len lies within the mbuf's buffer.
        unsafe {
            std::slice::from_raw_parts(
                (r.buf_addr as *const u8).add(r.data_off as usize),
                r.data_len as usize,
            )
        }
    }

    /// The data of the first segment, mutable. Fails if the packet is shared.
    #[inline]
    pub fn data_mut(&mut self) -> Result<&mut [u8]> {
        self.ensure_unique("write mbuf data")?;
        let r = self.raw();
        let (addr, off, len) = (
            r.buf_addr as *mut u8,
            r.data_off as usize,
            r.data_len as usize,
        );
        // SAFETY: unique owner; the range lies within the buffer.
        Ok(unsafe { std::slice::from_raw_parts_mut(addr.add(off), len) })
    }

    /// Reference count of the first segment.
    #[inline]
    pub fn refcnt(&self) -> u16 {
        // SAFETY: valid mbuf.
        unsafe { sys::rte_mbuf_refcnt_read(self.0.as_ptr()) }
    }

    /// Whether this is the only reference to every segment and to every segment's
    /// data buffer (so it may be mutated): each segment has refcount 1, is not an
    /// indirect mbuf, and, when its buffer is external (`RTE_MBUF_F_EXTERNAL`), the
    /// external buffer's own refcount is 1 too.
    pub fn is_unique(&self) -> bool {
        let mut m = self.0.as_ptr();
        while !m.is_null() {
            // SAFETY: walking a valid chain we hold a reference to; `shinfo` is valid
            // whenever RTE_MBUF_F_EXTERNAL is set.
            unsafe {
                let flags = (*m).ol_flags;
                if sys::rte_mbuf_refcnt_read(m) != 1 || flags & sys::RTE_MBUF_F_INDIRECT != 0 {
                    return false;
                }
                if flags & sys::RTE_MBUF_F_EXTERNAL != 0
                    && ((*m).shinfo.is_null() || sys::rte_mbuf_ext_refcnt_read((*m).shinfo) != 1)
                {
                    return false;
                }
                m = (*m).next;
            }
        }
        // The refcount reads above are relaxed; other holders released their
        // reference with an acq_rel decrement. This fence orders their last accesses
        // to the data before whatever the caller now writes (as `Arc::get_mut`).
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        true
    }

    fn ensure_unique(&self, op: &str) -> Result<()> {
        if self.is_unique() {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::Shared,
                op,
                "the mbuf is shared (refcount > 1); it cannot be modified",
            ))
        }
    }

    /// Another reference to the same packet (every segment's refcount + 1). Both must
    /// be dropped before the memory returns to the pool. While shared, neither can be
    /// mutated.
    ///
    /// # Panics
    /// When a segment already has [`Mbuf::MAX_REFS`] references (the 16-bit DPDK
    /// refcount would otherwise wrap and free memory still in use, as `Arc` aborts on
    /// overflow). [`Mbuf::try_clone_ref`] returns an error instead.
    pub fn clone_ref(&self) -> Mbuf {
        match self.try_clone_ref() {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like [`Mbuf::clone_ref`], but an [`ErrorKind::Exhausted`] error when a segment
    /// already has [`Mbuf::MAX_REFS`] references.
    pub fn try_clone_ref(&self) -> Result<Mbuf> {
        let mut m = self.0.as_ptr();
        while !m.is_null() {
            // SAFETY: valid chain we hold a reference to.
            unsafe {
                ensure_ref_room(sys::rte_mbuf_refcnt_read(m), "clone mbuf reference")?;
                m = (*m).next;
            }
        }
        let mut m = self.0.as_ptr();
        while !m.is_null() {
            // SAFETY: valid chain; refcount updates are atomic. Each count was below
            // MAX_REFS, far enough from u16::MAX that concurrent clones on other
            // threads (each adding 1 after the same check) cannot wrap it.
            unsafe {
                sys::rte_mbuf_refcnt_update(m, 1);
                m = (*m).next;
            }
        }
        Ok(Mbuf(self.0))
    }

    /// Another reference to bytes `[start, start + len)` of a single-segment packet:
    /// an indirect mbuf from `pool` (`rte_pktmbuf_clone`) whose data window is
    /// narrowed to the range. The bytes are shared, not copied; the original's
    /// buffer stays alive until both are dropped.
    pub fn slice_ref(&self, pool: &crate::Mempool, start: usize, len: usize) -> Result<Mbuf> {
        let op = "slice mbuf by reference";
        let in_bounds = start.checked_add(len).is_some_and(|end| end <= self.len());
        if self.nb_segs() != 1 || !in_bounds {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                op,
                format!(
                    "range {start}+{len} outside a {}-byte single-segment packet",
                    self.len()
                ),
            ));
        }
        // rte_pktmbuf_clone adds a reference to the buffer's owner: the external
        // buffer's shared info, or the direct mbuf (ourselves, or the mbuf we are an
        // indirect view of).
        // SAFETY: valid mbuf; shinfo is valid when EXTERNAL is set, and an INDIRECT
        // mbuf's buffer lies inside its direct mbuf.
        let owner_refs = unsafe {
            let p = self.as_ptr();
            let flags = (*p).ol_flags;
            if flags & sys::RTE_MBUF_F_EXTERNAL != 0 {
                sys::rte_mbuf_ext_refcnt_read((*p).shinfo)
            } else if flags & sys::RTE_MBUF_F_INDIRECT != 0 {
                sys::rte_mbuf_refcnt_read(sys::rte_mbuf_from_indirect(p))
            } else {
                sys::rte_mbuf_refcnt_read(p)
            }
        };
        ensure_ref_room(owner_refs, op)?;
        // start + len <= data_len <= u16::MAX, so the sums and casts are exact.
        self.indirect_window(pool, op, self.raw().data_off + start as u16, len as u16)
    }

    /// An indirect mbuf from `pool` (`rte_pktmbuf_clone`) holding a reference to
    /// this packet's buffer, its data window `len` bytes from `data_off` of that
    /// buffer. A window outside the buffer is refused.
    fn indirect_window(
        &self,
        pool: &crate::Mempool,
        op: &str,
        data_off: u16,
        len: u16,
    ) -> Result<Mbuf> {
        if usize::from(data_off) + usize::from(len) > usize::from(self.raw().buf_len) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                op,
                format!("window {data_off}+{len} outside the buffer"),
            ));
        }
        // SAFETY: valid mbuf and pool; rte_pktmbuf_clone returns a new indirect mbuf
        // (or null) that holds a reference to our buffer.
        let p = unsafe { sys::rte_pktmbuf_clone(self.as_ptr(), pool.as_ptr()) };
        let Some(nn) = NonNull::new(p) else {
            return Err(Error::new(ErrorKind::Exhausted, op, "mempool exhausted"));
        };
        // SAFETY: the indirect mbuf is ours alone; setting its own data window
        // (offset/lengths, checked above to lie within the shared buffer, whose
        // address and length it took from ours) never writes the data.
        unsafe {
            let m = &mut *nn.as_ptr();
            m.data_off = data_off;
            m.data_len = len;
            m.pkt_len = u32::from(len);
            Ok(Mbuf::from_raw(nn.as_ptr()))
        }
    }

    /// Another reference to this single-segment packet whose window also takes the
    /// `head` bytes in front of its data, written first by `fill`: headers in
    /// front of a payload in one segment, the payload neither copied nor chained.
    /// An indirect mbuf from `pool` (`rte_pktmbuf_clone`) is returned.
    ///
    /// Only the sole reference to its buffer may do this ([`Mbuf::is_unique`]):
    /// while no other mbuf refers to the buffer, nothing else can read the
    /// headroom `fill` writes. A packet still held elsewhere (a device's transmit
    /// ring, an earlier reference from this call) fails with [`ErrorKind::Shared`];
    /// `head` beyond the headroom, or a chain, with [`ErrorKind::InvalidArgument`].
    pub fn headed_ref(
        &self,
        pool: &crate::Mempool,
        head: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<Mbuf> {
        let op = "reference mbuf with headers in its headroom";
        if self.nb_segs() != 1 || head > self.headroom() || head + self.len() > u16::MAX as usize {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                op,
                format!(
                    "{head} header bytes for a {}-segment packet of {} bytes with {} of headroom",
                    self.nb_segs(),
                    self.len(),
                    self.headroom()
                ),
            ));
        }
        self.ensure_unique(op)?;
        let r = self.raw();
        // SAFETY: head <= data_off, so the range lies in the buffer's headroom,
        // outside the data window `data()` lends out. We hold the only reference
        // to the buffer (checked above, with an acquire fence after the last
        // release of any other), so no other mbuf reads or writes these bytes.
        let headroom = unsafe {
            std::slice::from_raw_parts_mut(
                (r.buf_addr as *mut u8).add(r.data_off as usize - head),
                head,
            )
        };
        fill(headroom);
        // Our refcount is 1, far below the limit. head <= data_off and head + len
        // <= u16::MAX (checked above), so the casts are exact. From here the bytes
        // are only read.
        let (off, len) = (r.data_off - head as u16, (head + self.len()) as u16);
        self.indirect_window(pool, op, off, len)
    }

    /// Appends `n` bytes at the end of the packet (last segment) and returns them.
    pub fn append(&mut self, n: usize) -> Result<&mut [u8]> {
        self.ensure_unique("append to mbuf")?;
        let room = self.tailroom();
        if n > room || n > u16::MAX as usize {
            return Err(Error::new(
                ErrorKind::Exhausted,
                "append to mbuf",
                format!("{n} bytes requested, {room} bytes of tailroom"),
            ));
        }
        // SAFETY: unique; n <= tailroom so rte_pktmbuf_append succeeds and returns a
        // pointer to n writable bytes inside the last segment.
        unsafe {
            let p = sys::rte_pktmbuf_append(self.0.as_ptr(), n as u16);
            Ok(std::slice::from_raw_parts_mut(p as *mut u8, n))
        }
    }

    /// Appends a copy of `bytes`.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) -> Result<()> {
        self.append(bytes.len())?.copy_from_slice(bytes);
        Ok(())
    }

    /// Prepends `n` bytes (using headroom) and returns them, e.g. for headers.
    pub fn prepend(&mut self, n: usize) -> Result<&mut [u8]> {
        self.ensure_unique("prepend to mbuf")?;
        let room = self.headroom();
        if n > room {
            return Err(Error::new(
                ErrorKind::Exhausted,
                "prepend to mbuf",
                format!("{n} bytes requested, {room} bytes of headroom"),
            ));
        }
        // SAFETY: unique; n <= headroom so rte_pktmbuf_prepend succeeds.
        unsafe {
            let p = sys::rte_pktmbuf_prepend(self.0.as_ptr(), n as u16);
            Ok(std::slice::from_raw_parts_mut(p as *mut u8, n))
        }
    }

    /// Removes `n` bytes from the front of the first segment (e.g. a parsed header).
    pub fn adj(&mut self, n: usize) -> Result<()> {
        self.ensure_unique("trim mbuf front (adj)")?;
        if n > self.len() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "trim mbuf front (adj)",
                format!("{n} bytes requested, first segment holds {}", self.len()),
            ));
        }
        // SAFETY: unique; n <= data_len so it succeeds.
        unsafe { sys::rte_pktmbuf_adj(self.0.as_ptr(), n as u16) };
        Ok(())
    }

    /// Removes `n` bytes from the end of the last segment.
    pub fn trim(&mut self, n: usize) -> Result<()> {
        self.ensure_unique("trim mbuf end")?;
        // SAFETY: valid chain.
        let last_len = unsafe { (*self.last_segment()).data_len } as usize;
        if n > last_len {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "trim mbuf end",
                format!("{n} bytes requested, last segment holds {last_len}"),
            ));
        }
        // SAFETY: unique; n <= last segment's data_len so it succeeds.
        unsafe { sys::rte_pktmbuf_trim(self.0.as_ptr(), n as u16) };
        Ok(())
    }

    /// Appends `tail` as further segments. `self` must be unique (its last segment's
    /// link is written). A unique `tail` is chained with `rte_pktmbuf_chain`; a
    /// shared `tail` (another reference exists, e.g. a retransmission copy from
    /// [`Mbuf::clone_ref`]) is accepted only as a single segment, which is linked
    /// without writing any of its fields (`rte_pktmbuf_chain` would rewrite its
    /// `pkt_len` under the other holder). Otherwise (or with too many segments)
    /// `tail` is handed back.
    pub fn chain(&mut self, tail: Mbuf) -> std::result::Result<(), Mbuf> {
        if !self.is_unique() {
            return Err(tail);
        }
        let segs = u32::from(self.nb_segs()) + u32::from(tail.nb_segs());
        if segs > u32::from(u16::MAX) {
            return Err(tail);
        }
        if tail.is_unique() {
            // SAFETY: both valid and unique; on success ownership of tail moves into
            // the chain.
            let ret = unsafe { sys::rte_pktmbuf_chain(self.0.as_ptr(), tail.as_ptr()) };
            return if ret == 0 {
                std::mem::forget(tail);
                Ok(())
            } else {
                Err(tail)
            };
        }
        // SAFETY: plain reads of the tail we hold a reference to.
        let (single, tail_len) = unsafe {
            let t = &*tail.as_ptr();
            (t.next.is_null() && t.nb_segs == 1, t.pkt_len)
        };
        if !single {
            return Err(tail);
        }
        let last = self.last_segment();
        // SAFETY: `self` is unique, so its segments (including `last`, whose `next`
        // is null) are ours to write; the shared tail is only linked to, never
        // written. Our reference to it moves into the chain.
        unsafe {
            (*last).next = tail.as_ptr();
            let head = self.0.as_mut();
            head.nb_segs = segs as u16;
            head.pkt_len += tail_len;
        }
        std::mem::forget(tail);
        Ok(())
    }

    /// The data of each segment in order.
    pub fn segments(&self) -> Segments<'_> {
        Segments {
            next: self.0.as_ptr(),
            _m: std::marker::PhantomData,
        }
    }

    /// Copies `out.len()` bytes starting at `offset` (across segments); returns how
    /// many bytes were copied (less at the end of the packet).
    pub fn read_at(&self, mut offset: usize, out: &mut [u8]) -> usize {
        let mut done = 0;
        for seg in self.segments() {
            if done == out.len() {
                break;
            }
            if offset >= seg.len() {
                offset -= seg.len();
                continue;
            }
            let n = (seg.len() - offset).min(out.len() - done);
            out[done..done + n].copy_from_slice(&seg[offset..offset + n]);
            done += n;
            offset = 0;
        }
        done
    }

    /// The whole packet as one vector (copies).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.pkt_len());
        for s in self.segments() {
            v.extend_from_slice(s);
        }
        v
    }

    /// Port the packet arrived on.
    #[inline]
    pub fn port(&self) -> u16 {
        self.raw().port
    }

    /// Offload flags (`ol_flags`).
    #[inline]
    pub fn ol_flags(&self) -> u64 {
        self.raw().ol_flags
    }

    /// RSS hash the NIC computed (valid when `RTE_MBUF_F_RX_RSS_HASH` is set).
    #[inline]
    pub fn rss_hash(&self) -> u32 {
        // SAFETY: reading a plain u32 from the hash union.
        unsafe { self.raw().__bindgen_anon_2.hash.rss }
    }

    /// The PMD's IPv4 header checksum verdict.
    pub fn rx_ip_checksum(&self) -> RxChecksum {
        decode_cksum(
            self.ol_flags(),
            sys::RTE_MBUF_F_RX_IP_CKSUM_MASK as u64,
            sys::RTE_MBUF_F_RX_IP_CKSUM_GOOD as u64,
            sys::RTE_MBUF_F_RX_IP_CKSUM_BAD as u64,
            sys::RTE_MBUF_F_RX_IP_CKSUM_NONE as u64,
        )
    }

    /// The PMD's L4 (UDP/TCP) checksum verdict.
    pub fn rx_l4_checksum(&self) -> RxChecksum {
        decode_cksum(
            self.ol_flags(),
            sys::RTE_MBUF_F_RX_L4_CKSUM_MASK as u64,
            sys::RTE_MBUF_F_RX_L4_CKSUM_GOOD as u64,
            sys::RTE_MBUF_F_RX_L4_CKSUM_BAD as u64,
            sys::RTE_MBUF_F_RX_L4_CKSUM_NONE as u64,
        )
    }

    /// Requests IPv4/UDP checksum offload on transmit. Only honoured on ports whose
    /// tx offloads enabled it (see `PortInfo::tx_offload_capa`).
    pub fn set_tx_checksum_offload(&mut self, o: TxChecksumOffload) -> Result<()> {
        self.ensure_unique("set tx offload flags")?;
        let mut flags = 0u64;
        if o.ipv4 {
            flags |= sys::RTE_MBUF_F_TX_IPV4 | sys::RTE_MBUF_F_TX_IP_CKSUM;
        }
        if o.udp {
            flags |= sys::RTE_MBUF_F_TX_IPV4 | sys::RTE_MBUF_F_TX_UDP_CKSUM;
        }
        // tx_offload layout: l2_len:7, l3_len:9, l4_len:8, ...
        let tx_offload = (u64::from(o.l2_len) & 0x7f) | ((u64::from(o.l3_len) & 0x1ff) << 7);
        // SAFETY: unique owner; plain field writes.
        unsafe {
            let m = self.0.as_mut();
            m.ol_flags |= flags;
            m.__bindgen_anon_3.tx_offload = tx_offload;
        }
        Ok(())
    }
}

/// Refuses another reference when `refs` already reached [`Mbuf::MAX_REFS`].
fn ensure_ref_room(refs: u16, op: &str) -> Result<()> {
    if refs >= Mbuf::MAX_REFS {
        return Err(Error::new(
            ErrorKind::Exhausted,
            op,
            format!(
                "the mbuf already has {refs} references (limit {}); another would \
                 overflow DPDK's 16-bit refcount",
                Mbuf::MAX_REFS
            ),
        ));
    }
    Ok(())
}

fn decode_cksum(flags: u64, mask: u64, good: u64, bad: u64, none: u64) -> RxChecksum {
    match flags & mask {
        f if f == good => RxChecksum::Good,
        f if f == bad => RxChecksum::Bad,
        f if f == none => RxChecksum::NotPresent,
        _ => RxChecksum::Unknown,
    }
}

impl Drop for Mbuf {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: we own one reference to the whole chain.
        unsafe { sys::rte_pktmbuf_free(self.0.as_ptr()) }
    }
}

impl std::fmt::Debug for Mbuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mbuf")
            .field("pkt_len", &self.pkt_len())
            .field("nb_segs", &self.nb_segs())
            .field("refcnt", &self.refcnt())
            .finish()
    }
}

/// Iterator over the data of each segment of an mbuf chain.
pub struct Segments<'a> {
    next: *mut sys::rte_mbuf,
    _m: std::marker::PhantomData<&'a Mbuf>,
}

impl<'a> Iterator for Segments<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.next.is_null() {
            return None;
        }
        // SAFETY: a valid segment of a chain borrowed for 'a.
        unsafe {
            let m = &*self.next;
            self.next = m.next;
            Some(std::slice::from_raw_parts(
                (m.buf_addr as *const u8).add(m.data_off as usize),
                m.data_len as usize,
            ))
        }
    }
}
