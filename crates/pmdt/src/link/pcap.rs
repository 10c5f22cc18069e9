//! Capture middleware: writes every datagram a link sends and receives to a pcap
//! file (link type RAW: IPv4/IPv6 + UDP headers are synthesized from the addresses),
//! which Wireshark and tcpdump open.

use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use etherparse::PacketBuilder;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::DataLink;

use super::{BufferPool, Link, LinkStats, Outgoing, Received};

/// A link whose traffic is also written to a pcap file.
pub struct Captured<L: Link> {
    inner: L,
    writer: PcapWriter<BufWriter<File>>,
    scratch: Vec<u8>,
    body: Vec<u8>,
    captured: u64,
    rx_start: usize,
}

impl<L: Link> Captured<L> {
    /// Wraps `inner`, creating (truncating) the pcap file at `path`.
    pub fn new(inner: L, path: &Path) -> io::Result<Self> {
        let file = File::create(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create pcap file {}: {e}", path.display()),
            )
        })?;
        let header = PcapHeader {
            datalink: DataLink::RAW,
            ..Default::default()
        };
        let writer = PcapWriter::with_header(BufWriter::new(file), header)
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(Self {
            inner,
            writer,
            scratch: Vec::with_capacity(2048),
            body: Vec::with_capacity(2048),
            captured: 0,
            rx_start: 0,
        })
    }
}

/// Writes one datagram (`payload` then `tail`) as an IP/UDP packet.
fn record(
    writer: &mut PcapWriter<BufWriter<File>>,
    scratch: &mut Vec<u8>,
    body: &mut Vec<u8>,
    captured: &mut u64,
    (from, to): (SocketAddr, SocketAddr),
    payload: &[u8],
    tail: &[u8],
) {
    {
        scratch.clear();
        let builder = match (from.ip(), to.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                PacketBuilder::ipv4(s.octets(), d.octets(), 64).udp(from.port(), to.port())
            }
            (s, d) => {
                let v6 = |ip: IpAddr| match ip {
                    IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
                    IpAddr::V6(a) => a.octets(),
                };
                PacketBuilder::ipv6(v6(s), v6(d), 64).udp(from.port(), to.port())
            }
        };
        body.clear();
        body.extend_from_slice(payload);
        body.extend_from_slice(tail);
        if builder.write(scratch, body).is_err() {
            return;
        }
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let pkt = PcapPacket::new(ts, scratch.len() as u32, scratch);
        if writer.write_packet(&pkt).is_ok() {
            *captured += 1;
        }
    }
}

impl<L: Link> Link for Captured<L> {
    fn describe(&self) -> String {
        format!("{} (captured)", self.inner.describe())
    }
    fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }
    fn pool(&self) -> BufferPool {
        self.inner.pool()
    }
    fn recv(&mut self, now: Instant, out: &mut Vec<Received>, max: usize) -> usize {
        self.rx_start = out.len();
        let n = self.inner.recv(now, out, max);
        let local = self.inner.local_addr();
        for r in &out[self.rx_start..] {
            record(
                &mut self.writer,
                &mut self.scratch,
                &mut self.body,
                &mut self.captured,
                (r.from, local),
                r.payload(),
                &[],
            );
        }
        n
    }
    fn tx_room(&self) -> usize {
        self.inner.tx_room()
    }
    fn send(&mut self, now: Instant, pkt: Outgoing<'_>) -> bool {
        let local = self.inner.local_addr();
        let payload = pkt.payload.map(|p| p.bytes()).unwrap_or(&[]);
        record(
            &mut self.writer,
            &mut self.scratch,
            &mut self.body,
            &mut self.captured,
            (local, pkt.to),
            pkt.header,
            payload,
        );
        self.inner.send(now, pkt)
    }
    fn flush(&mut self, now: Instant) {
        self.inner.flush(now);
    }
    fn next_deadline(&self) -> Option<Instant> {
        self.inner.next_deadline()
    }
    fn rx_pending(&self) -> Option<u32> {
        self.inner.rx_pending()
    }
    fn wait_on(&mut self, wait: &mut dyn FnMut(Option<super::WakeOn<'_>>)) {
        self.inner.wait_on(wait)
    }
    fn stats(&self) -> LinkStats {
        let mut s = self.inner.stats();
        s.captured += self.captured;
        s
    }
}
