//! The DPDK backend: one rx/tx queue pair of a DPDK port (any vdev or PCI device).
//! Builds and parses Ethernet/IPv4/UDP, answers ARP for its address and resolves
//! peers by ARP (static entries allowed), answers ICMP echo, computes IPv4/UDP
//! checksums (offloaded where the port can), and drops and counts frames not for it.
//!
//! Data packets leave without copying the payload, from the mbuf the
//! application's data was written into, so a retransmission sends the same
//! memory. When nothing else holds that mbuf, the headers (Ethernet, IPv4, UDP
//! and pmdt) are written into its headroom and the frame is one segment, an
//! indirect reference ([`dpdk::Mbuf::headed_ref`]): one descriptor for a copying
//! device such as memif, and no header mbuf. A payload an earlier frame still
//! holds (a retransmission while the first copy waits in a device's ring) gets a
//! header mbuf of its own chained in front of another reference, so no frame's
//! headers change while a device may still read them.

mod arp_hold;
mod arp_table;
pub mod frame;
mod link_watch;
mod packet_memory;
pub mod payload_sum;

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Arc;
use std::time::Instant;

use dpdk::{
    Eal, MacAddr, Mbuf, MbufBatch, Mempool, MempoolConfig, Offloads, Port, PortConfig, RxChecksum,
    RxQueue, TxChecksumOffload, TxQueue,
};

use arp_hold::ArpHold;
pub use arp_table::ArpTable;
use frame::{Frame, RxVerified, UdpChecksum, HEADERS_LEN};
use link_watch::LinkWatch;

use super::{Buffer, BufferPool, Link, LinkStats, Outgoing, Received, WakeOn};

/// Frames per rx/tx burst.
pub const BURST: usize = 32;
/// Per-lcore cache of the header pool: small, because every thread that
/// transmits may strand 1.5 caches of it (the pool is sized for that).
const TX_POOL_CACHE: u32 = 32;

/// Header mbufs the transmit side may need at once: per queue, a transmit ring's
/// worth in flight in the device, a batch being built, and as many indirect
/// references again (one per chained payload).
fn tx_in_flight(tx_desc: u16, queues: u16) -> u32 {
    (u32::from(tx_desc) + 2 * BURST as u32) * 2 * u32::from(queues.max(1))
}

/// The header pool's size: [`tx_in_flight`], plus the 1.5 caches of
/// [`TX_POOL_CACHE`] each lcore id may keep (DPDK flushes a cache above 1.5 ×
/// its size), so that caches left full by threads that stopped transmitting
/// never starve the ones that transmit.
fn tx_pool_size(tx_desc: u16, queues: u16) -> u32 {
    tx_in_flight(tx_desc, queues) + dpdk::lcore::MAX_LCORES * TX_POOL_CACHE * 3 / 2
}

/// Options of the DPDK link.
#[derive(Debug, Clone)]
pub struct DpdkLinkConfig {
    /// Device name (`net_tap0`, `net_memif0`, a PCI address) or port number.
    pub port: String,
    /// Our IPv4 address.
    pub ip: Ipv4Addr,
    /// Our UDP port.
    pub udp_port: u16,
    /// Our MAC address (None: the device's own).
    pub mac: Option<[u8; 6]>,
    /// Static ARP entries.
    pub static_arp: Vec<(Ipv4Addr, [u8; 6])>,
    /// Queue pairs to configure (each I/O lcore drives one).
    pub queues: u16,
    /// Receive descriptors per queue.
    pub rx_desc: u16,
    /// Transmit descriptors per queue.
    pub tx_desc: u16,
    /// Mbufs in the pool (shared by receive, send buffers and application rings).
    pub pool_size: u32,
    /// Use the port's IPv4/UDP checksum offloads when it has them.
    pub checksum_offload: bool,
    /// Sent datagrams' UDP checksum when the port does not offload it.
    pub software_udp_checksum: SoftwareUdpChecksum,
    /// MTU to set (None: keep the device's). Above 1500 (jumbo frames) the mbufs
    /// grow to hold a whole frame.
    pub mtu: Option<u16>,
    /// Whether a quiet I/O loop may sleep until packets arrive.
    pub rx_wake: RxWake,
}

/// Whether a quiet I/O loop over a DPDK port sleeps until packets arrive (its
/// receive queue's interrupt, with `poll(2)`) or naps and polls again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RxWake {
    /// Where the device's receive interrupt is a descriptor that stays
    /// readable while packets wait and needs no draining: TAP (its queue's own
    /// file). Other devices nap: memif, ring and null have no receive
    /// interrupt, and a NIC's (an eventfd under vfio-pci) would need DPDK's
    /// own epoll wait to be drained.
    #[default]
    WhereLevelTriggered,
    /// Never: the loop naps and polls (a device left as configured).
    Off,
}

impl RxWake {
    /// Whether to ask `driver`'s port for receive interrupts.
    fn for_driver(self, driver: &str) -> bool {
        self == RxWake::WhereLevelTriggered && driver == "net_tap"
    }
}

impl DpdkLinkConfig {
    /// Mbuf data room for the MTU: a whole frame in one segment, plus headroom.
    pub fn mbuf_data_room(&self) -> u16 {
        let frame = self.mtu.unwrap_or(1500) as u32 + 14 + 4;
        let room = frame.max(1518) + dpdk::sys::RTE_PKTMBUF_HEADROOM;
        room.max(dpdk::sys::RTE_MBUF_DEFAULT_BUF_SIZE)
            .min(u16::MAX as u32) as u16
    }
}

impl Default for DpdkLinkConfig {
    fn default() -> Self {
        Self {
            port: "0".into(),
            ip: Ipv4Addr::new(10, 0, 0, 1),
            udp_port: 9000,
            mac: None,
            static_arp: Vec::new(),
            queues: 1,
            rx_desc: 1024,
            tx_desc: 1024,
            pool_size: 64 * 1024 - 1,
            checksum_offload: true,
            software_udp_checksum: SoftwareUdpChecksum::Compute,
            mtu: None,
            rx_wake: RxWake::default(),
        }
    }
}

/// Whether sent datagrams carry a UDP checksum when the port cannot offload it
/// (memif, TAP, net_ring).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SoftwareUdpChecksum {
    /// Computed over every payload byte (the default).
    #[default]
    Compute,
    /// Left out: the field is 0, which RFC 768 reserves for "not computed"
    /// (the IPv4 header's own checksum is still written, and received
    /// datagrams are verified as before). Only for ports whose frames never
    /// leave the host's memory, such as memif between two processes: Linux's
    /// loopback device skips the checksum in the same way. A frame that
    /// crosses a wire or a switch is then protected by nothing but the link
    /// layer's CRC.
    Omit,
}

/// One queue pair of a started DPDK port, as a pmdt link.
pub struct DpdkLink {
    /// The port (kept open while a queue is in use; its device counters).
    port: Arc<Port>,
    rxq: RxQueue,
    txq: TxQueue,
    pool: Arc<Mempool>,
    /// The I/O loop's own transmit buffers (headers, acks, indirect payload
    /// references, control frames), apart from `pool` so that application data and
    /// receive storage filling the main pool can never stop acks or retransmissions.
    tx_pool: Arc<Mempool>,
    mac: [u8; 6],
    ip: Ipv4Addr,
    udp_port: u16,
    /// How sent datagrams' UDP checksums are filled in (`Software` carries no
    /// payload sum here: each datagram's comes from its payload's stamp).
    tx_checksum: UdpChecksum,
    /// Whether the port sends chained mbufs (`MULTI_SEGS` enabled); otherwise the
    /// payload is copied behind the headers in one segment.
    multi_seg: bool,
    name: String,
    arp: ArpTable,
    /// The last peer sent to (most packets go to the same one): skips the table.
    last_peer: Option<(Ipv4Addr, [u8; 6])>,
    /// Frames built for peers whose MAC was still unknown, sent once it is.
    held: ArpHold<Mbuf>,
    /// Whether the link is up, and since when: held frames age only while it is.
    link_watch: LinkWatch,
    rx: MbufBatch<BURST>,
    tx: MbufBatch<BURST>,
    stats: LinkStats,
}

fn port_id(eal: &Eal, name: &str) -> dpdk::Result<u16> {
    match name.parse::<u16>() {
        Ok(id) => Ok(id),
        Err(_) => Port::id_by_name(eal, name),
    }
}

impl DpdkLink {
    /// Configures and starts the port with `cfg.queues` queue pairs; returns one link
    /// per queue pair (queue `i` in position `i`).
    pub fn open(eal: &Eal, cfg: &DpdkLinkConfig) -> dpdk::Result<Vec<DpdkLink>> {
        let id = port_id(eal, &cfg.port)?;
        let mut port = Port::open(eal, id)?;
        let info = port.info()?;
        let pool = Arc::new(Mempool::new(
            eal,
            &MempoolConfig {
                size: cfg.pool_size,
                data_room: cfg.mbuf_data_room(),
                // Application threads (preemptible, any number) allocate and free
                // here too.
                ops: Some(MempoolConfig::PREEMPTIBLE_OPS.into()),
                ..Default::default()
            },
        )?);
        // In run to completion every flow's thread transmits, registered with the
        // EAL for a cache of its own: with 256 flows, caches of the default size
        // (256) held the whole pool and 4 % of the packets were dropped at the
        // sender for want of a header (see `tx_pool_size`).
        let tx_pool = Arc::new(Mempool::new(
            eal,
            &MempoolConfig {
                size: tx_pool_size(cfg.tx_desc, cfg.queues),
                cache_size: TX_POOL_CACHE,
                data_room: cfg.mbuf_data_room(),
                ..Default::default()
            },
        )?);
        let mut pc = PortConfig::default()
            .queues(cfg.queues.max(1))
            .descriptors(cfg.rx_desc, cfg.tx_desc);
        let mut offloads = if cfg.checksum_offload {
            Offloads::checksums()
        } else {
            Offloads::default()
        };
        // Header + payload chains need MULTI_SEGS (enabled only where offered).
        offloads.tx_multi_segs = true;
        pc = pc.offloads(offloads);
        if let Some(m) = cfg.mtu {
            pc = pc.mtu(m);
            pc.mtu_required = false; // memif has no MTU setting and carries jumbo frames
        }
        pc.rx_interrupts = cfg.rx_wake.for_driver(&info.driver);
        let (rxqs, txqs) = port.configure(&pc, &pool)?;
        let need = (dpdk::sys::RTE_ETH_TX_OFFLOAD_IPV4_CKSUM
            | dpdk::sys::RTE_ETH_TX_OFFLOAD_UDP_CKSUM) as u64;
        let tx_checksum = if cfg.checksum_offload && port.enabled_tx_offloads() & need == need {
            UdpChecksum::Offloaded
        } else if cfg.software_udp_checksum == SoftwareUdpChecksum::Omit {
            UdpChecksum::Omitted
        } else {
            UdpChecksum::Software { payload_sum: None }
        };
        if matches!(tx_checksum, UdpChecksum::Software { .. }) {
            // Writers sum their payloads only where the sum is of use.
            payload_sum::register(eal)?;
        }
        let multi_seg =
            port.enabled_tx_offloads() & dpdk::sys::RTE_ETH_TX_OFFLOAD_MULTI_SEGS as u64 != 0;
        if let Some(m) = cfg.mac {
            port.set_mac(MacAddr(m))?;
        }
        port.start()?;
        let port = Arc::new(port);
        let MacAddr(mac) = cfg.mac.map_or(info.mac, MacAddr);
        Ok(rxqs
            .into_iter()
            .zip(txqs)
            .map(|(rxq, txq)| DpdkLink {
                port: port.clone(),
                name: format!("dpdk {} q{}", info.name, rxq.queue_id()),
                rxq,
                txq,
                pool: pool.clone(),
                tx_pool: tx_pool.clone(),
                mac,
                ip: cfg.ip,
                udp_port: cfg.udp_port,
                tx_checksum,
                multi_seg,
                arp: ArpTable::with_static(&cfg.static_arp),
                last_peer: None,
                held: ArpHold::default(),
                link_watch: LinkWatch::default(),
                rx: MbufBatch::default(),
                tx: MbufBatch::default(),
                stats: LinkStats::default(),
            })
            .collect())
    }

    /// Our MAC address.
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// Whether checksums are offloaded to the port.
    pub fn checksum_offloaded(&self) -> bool {
        self.tx_checksum == UdpChecksum::Offloaded
    }

    /// Whether data packets whose payload cannot take the headers in its own
    /// headroom (still held by the device, or a part of a buffer) leave as header +
    /// payload mbuf chains (the port offers `RTE_ETH_TX_OFFLOAD_MULTI_SEGS`);
    /// otherwise their payload is copied behind the headers in one segment. A
    /// payload that is all of a buffer nothing else holds leaves in one segment,
    /// uncopied, either way.
    pub fn chains_payload(&self) -> bool {
        self.multi_seg
    }

    /// A data frame as a header mbuf of its own: the payload chained behind it
    /// (another reference of its mbuf, or an indirect one over a part of it), or
    /// copied in where the port takes no chains. `write_headers` fills the
    /// frame's first `hdr_len` bytes. None when no buffer was to be had (counted).
    fn chained_frame(
        &mut self,
        pkt: Outgoing<'_>,
        payload: &[u8],
        hdr_len: usize,
        write_headers: impl FnOnce(&mut [u8]),
    ) -> Option<Mbuf> {
        let Ok(mut m) = self.tx_pool.alloc() else {
            self.stats.tx_no_buffer += 1;
            return None;
        };
        // Chain the payload's own mbuf when the slice is all of it.
        // A part of it (a packet cut short by the credit or window) is an indirect
        // mbuf over the same memory. Ports without MULTI_SEGS get a copy.
        let chain = match pkt.payload {
            Some(p) if self.multi_seg => p
                .buf
                .with(|pm: &Mbuf| {
                    if p.start == 0 && p.len == pm.len() && pm.nb_segs() == 1 {
                        pm.try_clone_ref().ok()
                    } else {
                        pm.slice_ref(&self.tx_pool, p.start, p.len).ok()
                    }
                })
                .flatten(),
            _ => None,
        };
        let inline = if chain.is_some() { 0 } else { payload.len() };
        let room = m.append(hdr_len + inline).ok()?;
        write_headers(&mut room[..hdr_len]);
        if inline > 0 {
            room[hdr_len..].copy_from_slice(payload);
            self.stats.payload_copies += 1;
        }
        if self.tx_checksum == UdpChecksum::Offloaded {
            let _ = m.set_tx_checksum_offload(TxChecksumOffload {
                l2_len: frame::ETH_LEN as u8,
                l3_len: frame::IPV4_LEN as u16,
                ipv4: true,
                udp: true,
            });
        }
        if let Some(tail) = chain {
            m.chain(tail).ok()?;
        }
        Some(m)
    }

    fn queue_frame(&mut self, bytes: &[u8]) {
        if self.tx.remaining() == 0 {
            self.stats.tx_dropped += 1;
            return;
        }
        let Ok(mut m) = self.tx_pool.alloc() else {
            self.stats.tx_dropped += 1;
            self.stats.tx_no_buffer += 1;
            return;
        };
        if m.extend_from_slice(bytes).is_err() {
            self.stats.tx_dropped += 1;
            return;
        }
        let _ = self.tx.push(m);
    }

    /// Since when the port's link has been up (`None`: down), read at most
    /// every [`link_watch::LINK_CHECK`].
    fn link_up_since(&mut self, now: Instant) -> Option<Instant> {
        let port = &self.port;
        self.link_watch
            .up_since(now, || port.link().ok().map(|l| l.up))
    }

    /// Sends an ARP request for `ip`, at most one per retry interval, while the
    /// link is up (a request into a link that is down stays in the transmit
    /// batch, and they would fill it).
    fn ask_arp(&mut self, ip: Ipv4Addr, now: Instant) {
        let link_up = self.link_up_since(now);
        if link_up.is_some() && self.arp.should_ask(ip, now) {
            let req = frame::arp_request(self.mac, self.ip, ip);
            self.queue_frame(&req);
            self.stats.arp_requests_sent += 1;
        }
    }

    /// Moves held frames whose peer is now known to the transmit batch (their
    /// destination MAC written in), drops those held too long, and asks again
    /// for the peers still unknown.
    fn release_held(&mut self, now: Instant) {
        let link_up = self.link_up_since(now);
        let (arp, tx) = (&self.arp, &mut self.tx);
        let (mut unaddressable, mut expired, mut unknown) = (0u64, 0u64, Vec::new());
        self.held.release(
            now,
            link_up,
            |ip| arp.lookup(ip),
            |mut m, mac| match m.data_mut() {
                Ok(d) => {
                    d[..6].copy_from_slice(&mac);
                    tx.push(m)
                }
                // The header mbuf is the link's own: never shared. Were it,
                // the frame could not be addressed: drop it.
                Err(_) => {
                    unaddressable += 1;
                    Ok(())
                }
            },
            |_too_old| expired += 1,
            |ip| unknown.push(ip),
        );
        let dropped = unaddressable + expired;
        self.stats.arp_unresolved_drops += dropped;
        self.stats.tx_dropped += dropped;
        for ip in unknown {
            self.ask_arp(ip, now);
        }
    }

    fn handle_control(&mut self, m: &Mbuf, f: Frame) {
        match f {
            Frame::Arp(p) => {
                let sender = Ipv4Addr::from(p.sender_ipv4);
                self.arp.learn(sender, p.sender_mac);
                self.last_peer = None;
                if p.operation == etherparse::ArpOperation::REQUEST
                    && p.target_ipv4 == self.ip.octets()
                {
                    let reply = frame::arp_reply(self.mac, self.ip, &p);
                    self.queue_frame(&reply);
                    self.stats.arp_replies_sent += 1;
                } else if p.target_ipv4 != self.ip.octets() {
                    self.stats.rx_not_for_us += 1;
                }
            }
            Frame::EchoRequest {
                mac,
                ip,
                id,
                seq,
                data,
            } => {
                self.arp.learn(ip, mac);
                self.last_peer = None;
                let d = &m.data()[data.0..data.0 + data.1];
                if let Some(reply) = frame::echo_reply((self.mac, self.ip), (mac, ip), id, seq, d) {
                    self.queue_frame(&reply);
                    self.stats.icmp_echo_replies += 1;
                }
            }
            Frame::NotForUs => self.stats.rx_not_for_us += 1,
            Frame::Malformed => self.stats.rx_malformed += 1,
            Frame::BadChecksum => self.stats.rx_bad_checksum += 1,
            Frame::Udp { .. } => {}
        }
    }
}

impl Link for DpdkLink {
    fn describe(&self) -> String {
        format!("{} {}:{}", self.name, self.ip, self.udp_port)
    }

    fn local_addr(&self) -> SocketAddr {
        SocketAddr::V4(SocketAddrV4::new(self.ip, self.udp_port))
    }

    fn pool(&self) -> BufferPool {
        BufferPool::from_arc(self.pool.clone())
    }

    /// One rx burst per call: at most [`BURST`] frames, whatever `_max` asks.
    fn recv(&mut self, _now: Instant, out: &mut Vec<Received>, _max: usize) -> usize {
        let n = self.rxq.rx_burst(&mut self.rx);
        if n == 0 {
            return 0;
        }
        let mut got = 0;
        let mut batch = std::mem::take(&mut self.rx);
        for m in batch.drain() {
            let (ip, l4) = (m.rx_ip_checksum(), m.rx_l4_checksum());
            let verified = RxVerified {
                ip: ip == RxChecksum::Good,
                udp: l4 == RxChecksum::Good,
            };
            if ip == RxChecksum::Bad || l4 == RxChecksum::Bad {
                self.stats.rx_bad_checksum += 1;
                continue;
            }
            if m.nb_segs() != 1 {
                self.stats.rx_malformed += 1; // jumbo/multi-segment frames are not ours
                continue;
            }
            match frame::parse(m.data(), self.mac, self.ip, verified) {
                Frame::Udp {
                    from,
                    from_mac,
                    dst_port,
                    start,
                    len,
                } => {
                    if dst_port != self.udp_port {
                        self.stats.rx_not_for_us += 1;
                        continue;
                    }
                    if self.arp.lookup(*from.ip()).is_none() {
                        self.arp.learn(*from.ip(), from_mac);
                        self.last_peer = None;
                    }
                    self.stats.rx_datagrams += 1;
                    self.stats.rx_bytes += len as u64;
                    let mut m = m;
                    // Whatever this mbuf's last use stamped is not its sum now.
                    payload_sum::clear(&mut m);
                    out.push(Received {
                        from: SocketAddr::V4(from),
                        buf: Buffer::new(m),
                        start,
                        len,
                    });
                    got += 1;
                }
                other => self.handle_control(&m, other),
            }
        }
        self.rx = batch;
        got
    }

    fn tx_room(&self) -> usize {
        self.tx.remaining()
    }

    fn send(&mut self, now: Instant, pkt: Outgoing<'_>) -> bool {
        let SocketAddr::V4(dst) = pkt.to else {
            self.stats.tx_dropped += 1;
            return false;
        };
        if !self.held.is_empty() {
            // Held frames first, so a peer's packets leave in order.
            self.release_held(now);
        }
        if self.tx.remaining() == 0 {
            self.stats.tx_dropped += 1;
            self.stats.tx_queue_full += 1;
            return false;
        }
        let cached = self
            .last_peer
            .filter(|(ip, _)| ip == dst.ip())
            .map(|(_, mac)| mac);
        let resolved = cached.or_else(|| self.arp.lookup(*dst.ip()));
        match resolved {
            Some(mac) => self.last_peer = Some((*dst.ip(), mac)),
            None => self.ask_arp(*dst.ip(), now),
        }
        // An unresolved peer's frame is built all the same and held: its
        // destination MAC is written when the ARP reply comes.
        let dst_mac = resolved.unwrap_or_default();
        let payload = match pkt.payload.map(|p| p.try_bytes()) {
            None => &[][..],
            Some(Some(b)) => b,
            Some(None) => {
                // A slice outside its buffer: refuse it rather than read past.
                self.stats.tx_dropped += 1;
                return false;
            }
        };
        let udp_payload = pkt.len();
        // The payload's sum, when its writer stamped one for exactly this slice:
        // the checksum then reads no payload byte here.
        let checksum = match self.tx_checksum {
            UdpChecksum::Software { .. } => UdpChecksum::Software {
                payload_sum: pkt
                    .payload
                    .and_then(|p| {
                        p.buf.with(|pm: &Mbuf| {
                            if p.start == 0 && p.len == pm.len() {
                                payload_sum::stamped(pm)
                            } else {
                                None
                            }
                        })
                    })
                    .flatten(),
            },
            port_wide => port_wide,
        };
        let hdr_len = HEADERS_LEN + pkt.header.len();
        let (src, src_mac) = (SocketAddrV4::new(self.ip, self.udp_port), self.mac);
        let write_headers = |room: &mut [u8]| {
            frame::write_udp_headers(
                room, src_mac, dst_mac, src, dst, pkt.header, payload, checksum,
            );
            room[HEADERS_LEN..hdr_len].copy_from_slice(pkt.header);
        };
        // One segment where the payload's mbuf is all the payload and nothing
        // else refers to it (its earlier transmissions all left the device): the
        // headers go in its headroom, under a reference of its own. Not for a
        // frame held for ARP (its MAC is written later, in a header mbuf of its
        // own) nor where the device sums (the flags go on a unique mbuf). Ports
        // without MULTI_SEGS take it too: it is one segment, an indirect mbuf,
        // which a transmit path frees as any other (freeing detaches it); only
        // MBUF_FAST_FREE, never requested here, assumes direct mbufs.
        let headed = match pkt.payload {
            Some(p) if resolved.is_some() && checksum != UdpChecksum::Offloaded => p
                .buf
                .with(|pm: &Mbuf| {
                    if p.start == 0 && p.len == pm.len() {
                        pm.headed_ref(&self.tx_pool, hdr_len, write_headers).ok()
                    } else {
                        None
                    }
                })
                .flatten(),
            _ => None,
        };
        let m = match headed {
            Some(m) => {
                self.stats.tx_headed += 1;
                m
            }
            None => match self.chained_frame(pkt, payload, hdr_len, write_headers) {
                Some(m) => m,
                None => {
                    self.stats.tx_dropped += 1;
                    return false;
                }
            },
        };
        self.stats.tx_datagrams += 1;
        self.stats.tx_bytes += udp_payload as u64;
        self.stats.tx_payload_sums_reused += matches!(
            checksum,
            UdpChecksum::Software {
                payload_sum: Some(_)
            }
        ) as u64;
        if resolved.is_some() {
            let _ = self.tx.push(m);
        } else {
            self.stats.arp_held += 1;
            if self.held.hold(*dst.ip(), m, now).is_some() {
                // The oldest held frame made room.
                self.stats.arp_unresolved_drops += 1;
                self.stats.tx_dropped += 1;
            }
        }
        true
    }

    fn flush(&mut self, now: Instant) {
        if !self.held.is_empty() {
            self.release_held(now);
        }
        if !self.tx.is_empty() {
            self.txq.tx_burst(&mut self.tx);
        }
    }

    fn rx_pending(&self) -> Option<u32> {
        self.rxq.pending()
    }

    /// The receive queue's interrupt where the port has one (see [`RxWake`]),
    /// unless frames wait to be sent (a full transmit ring says nothing when
    /// it has room again: the loop naps and retries).
    fn wait_on(&mut self, wait: &mut dyn FnMut(Option<WakeOn<'_>>)) {
        if !self.tx.is_empty() || !self.held.is_empty() {
            return wait(None);
        }
        let mut waited = false;
        self.rxq.with_interrupt(|fd| {
            waited = true;
            wait(Some(WakeOn {
                fd,
                writable: false,
            }))
        });
        if !waited {
            wait(None)
        }
    }

    fn stats(&self) -> LinkStats {
        let mut s = self.stats.clone();
        // The device's counters are per port: queue 0's link reports them, so a
        // sum over the loops counts them once.
        if self.rxq.queue_id() == 0 {
            if let Ok(p) = self.port.stats() {
                s.port_imissed = p.imissed;
                s.port_rx_nombuf = p.rx_nombuf;
                s.port_ierrors = p.ierrors;
                s.port_oerrors = p.oerrors;
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lcore id holding the most its cache keeps still leaves the transmit
    /// side all the headers it may need at once (with 256 flows in run to
    /// completion, the former pool of 4095 with caches of 256 ran dry).
    #[test]
    fn full_caches_on_every_lcore_leave_the_headers_in_flight() {
        for (desc, queues) in [(1024, 1), (512, 2), (4096, 4)] {
            let size = tx_pool_size(desc, queues);
            let cached = dpdk::lcore::MAX_LCORES * (TX_POOL_CACHE * 3 / 2);
            assert!(
                size - cached >= tx_in_flight(desc, queues),
                "{desc} × {queues}"
            );
            // DPDK refuses a cache above size / 1.5.
            assert!(TX_POOL_CACHE * 3 / 2 <= size);
        }
    }
}
