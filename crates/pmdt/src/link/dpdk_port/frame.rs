//! Ethernet/IPv4/UDP, ARP and ICMP echo frames: parsing received frames and writing
//! headers, with etherparse's header views and checksum sums.

use std::net::{Ipv4Addr, SocketAddrV4};

use etherparse::checksum::Sum16BitWords;
use etherparse::{
    ArpEthIpv4Packet, ArpOperation, ArpPacketSlice, EtherType, Ethernet2HeaderSlice, Icmpv4Slice,
    Icmpv4Type, IpNumber, Ipv4HeaderSlice, PacketBuilder, UdpHeaderSlice,
};

/// Ethernet header length (no VLAN).
pub const ETH_LEN: usize = 14;
/// IPv4 header length without options.
pub const IPV4_LEN: usize = 20;
/// UDP header length.
pub const UDP_LEN: usize = 8;
/// Bytes in front of a UDP payload in the frames we send.
pub const HEADERS_LEN: usize = ETH_LEN + IPV4_LEN + UDP_LEN;
/// The broadcast MAC.
pub const BROADCAST: [u8; 6] = [0xff; 6];

/// What a received frame is, for this host.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A UDP datagram for our address.
    Udp {
        /// Sender.
        from: SocketAddrV4,
        /// Sender's MAC (learned for replies).
        from_mac: [u8; 6],
        /// Destination port.
        dst_port: u16,
        /// Payload offset in the frame.
        start: usize,
        /// Payload length.
        len: usize,
    },
    /// An ARP packet (request or reply).
    Arp(ArpEthIpv4Packet),
    /// An ICMP echo request for our address.
    EchoRequest {
        /// Requester MAC.
        mac: [u8; 6],
        /// Requester IP.
        ip: Ipv4Addr,
        /// Echo identifier.
        id: u16,
        /// Echo sequence number.
        seq: u16,
        /// Echo payload offset and length in the frame.
        data: (usize, usize),
    },
    /// Well formed but not for us (other MAC/IP, other protocol, fragment).
    NotForUs,
    /// Too short or inconsistent.
    Malformed,
    /// Wrong IPv4 header or UDP checksum.
    BadChecksum,
}

/// How far the NIC already checked the checksums.
#[derive(Debug, Clone, Copy, Default)]
pub struct RxVerified {
    /// The IPv4 header checksum was verified good by the device.
    pub ip: bool,
    /// The UDP checksum was verified good by the device.
    pub udp: bool,
}

/// Classifies a received Ethernet frame addressed to `mac`/`ip`.
pub fn parse(frame: &[u8], mac: [u8; 6], ip: Ipv4Addr, verified: RxVerified) -> Frame {
    let Ok(eth) = Ethernet2HeaderSlice::from_slice(frame) else {
        return Frame::Malformed;
    };
    let dst = eth.destination();
    if dst != mac && dst != BROADCAST {
        return Frame::NotForUs;
    }
    let rest = &frame[ETH_LEN..];
    match eth.ether_type() {
        EtherType::ARP => parse_arp(rest),
        EtherType::IPV4 => parse_ipv4(frame, eth.source(), ip, verified),
        _ => Frame::NotForUs,
    }
}

fn parse_arp(rest: &[u8]) -> Frame {
    let Ok(arp) = ArpPacketSlice::from_slice(rest) else {
        return Frame::Malformed;
    };
    match arp.to_packet().try_eth_ipv4() {
        Ok(p) => Frame::Arp(p),
        Err(_) => Frame::NotForUs,
    }
}

fn parse_ipv4(frame: &[u8], src_mac: [u8; 6], ip: Ipv4Addr, verified: RxVerified) -> Frame {
    let l3 = &frame[ETH_LEN..];
    let Ok(h) = Ipv4HeaderSlice::from_slice(l3) else {
        return Frame::Malformed;
    };
    let hlen = h.slice().len();
    let total = h.total_len() as usize;
    if total < hlen || total > l3.len() {
        return Frame::Malformed;
    }
    if h.destination() != ip.octets() {
        return Frame::NotForUs;
    }
    if h.more_fragments() || h.fragments_offset().value() != 0 {
        return Frame::NotForUs; // pmdt never sends fragments
    }
    // A correct header, its checksum included, sums to 0xffff.
    if !verified.ip && super::payload_sum::short_sum(h.slice()) != 0xffff {
        return Frame::BadChecksum;
    }
    let src = Ipv4Addr::from(h.source());
    let body = &l3[hlen..total];
    let body_off = ETH_LEN + hlen;
    match h.protocol() {
        IpNumber::UDP => {
            let Ok(u) = UdpHeaderSlice::from_slice(body) else {
                return Frame::Malformed;
            };
            let ulen = u.length() as usize;
            if ulen < UDP_LEN || ulen > body.len() {
                return Frame::Malformed;
            }
            if u.checksum() != 0 && !verified.udp {
                let body_sum = super::payload_sum::ones_complement_sum(&body[..ulen]);
                let sum = Sum16BitWords::new()
                    .add_4bytes(h.source())
                    .add_4bytes(h.destination())
                    .add_2bytes([0, IpNumber::UDP.0])
                    .add_2bytes((ulen as u16).to_be_bytes())
                    .add_2bytes(body_sum.to_be_bytes());
                // Summing a correct datagram including its checksum gives 0xffff.
                if sum.ones_complement() != 0 {
                    return Frame::BadChecksum;
                }
            }
            Frame::Udp {
                from: SocketAddrV4::new(src, u.source_port()),
                from_mac: src_mac,
                dst_port: u.destination_port(),
                start: body_off + UDP_LEN,
                len: ulen - UDP_LEN,
            }
        }
        IpNumber::ICMP => {
            let Ok(icmp) = Icmpv4Slice::from_slice(body) else {
                return Frame::Malformed;
            };
            if Sum16BitWords::new().add_slice(body).ones_complement() != 0 {
                return Frame::BadChecksum;
            }
            match icmp.icmp_type() {
                Icmpv4Type::EchoRequest(e) => {
                    let data_off = body_off + icmp.header_len();
                    Frame::EchoRequest {
                        mac: src_mac,
                        ip: src,
                        id: e.id,
                        seq: e.seq,
                        data: (data_off, body.len() - icmp.header_len()),
                    }
                }
                _ => Frame::NotForUs,
            }
        }
        _ => Frame::NotForUs,
    }
}

/// How a datagram's UDP checksum is filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpChecksum {
    /// Computed here over the headers and payload. `payload_sum`, when given,
    /// is the payload's ones' complement sum already computed
    /// ([`payload_sum::ones_complement_sum`](super::payload_sum)), so the
    /// payload is not read here.
    Software {
        /// The payload's sum, if its writer took it.
        payload_sum: Option<u16>,
    },
    /// Left to the port: the IPv4 checksum is 0 and the UDP field holds the
    /// pseudo-header sum, as DPDK's checksum offload expects.
    Offloaded,
    /// None: the field is 0, which RFC 768 reserves for "not computed" (IPv4
    /// only). The IPv4 header checksum is still written.
    Omitted,
}

/// Writes Ethernet + IPv4 + UDP headers into `out[..HEADERS_LEN]` for a datagram
/// whose UDP payload is `header` then `payload`, its UDP checksum as `checksum`
/// says.
#[allow(clippy::too_many_arguments)]
pub fn write_udp_headers(
    out: &mut [u8],
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    src: SocketAddrV4,
    dst: SocketAddrV4,
    header: &[u8],
    payload: &[u8],
    checksum: UdpChecksum,
) {
    let udp_len = (UDP_LEN + header.len() + payload.len()) as u16;
    out[0..6].copy_from_slice(&dst_mac);
    out[6..12].copy_from_slice(&src_mac);
    out[12..14].copy_from_slice(&EtherType::IPV4.0.to_be_bytes());
    write_ipv4_header(
        &mut out[ETH_LEN..ETH_LEN + IPV4_LEN],
        udp_len,
        *src.ip(),
        *dst.ip(),
        checksum == UdpChecksum::Offloaded,
    );
    let u = &mut out[ETH_LEN + IPV4_LEN..HEADERS_LEN];
    u[0..2].copy_from_slice(&src.port().to_be_bytes());
    u[2..4].copy_from_slice(&dst.port().to_be_bytes());
    u[4..6].copy_from_slice(&udp_len.to_be_bytes());
    let pseudo = Sum16BitWords::new()
        .add_4bytes(src.ip().octets())
        .add_4bytes(dst.ip().octets())
        .add_2bytes([0, IpNumber::UDP.0])
        .add_2bytes(udp_len.to_be_bytes());
    let ck = match checksum {
        // Folded pseudo-header sum, not complemented.
        UdpChecksum::Offloaded => !pseudo.ones_complement(),
        UdpChecksum::Omitted => 0,
        UdpChecksum::Software { payload_sum } => {
            let sum =
                payload_sum.unwrap_or_else(|| super::payload_sum::ones_complement_sum(payload));
            // After an odd-length header every payload byte sits in the other
            // half of its 16-bit word: the payload's sum is byte-swapped (RFC 1071).
            let sum = if header.len() % 2 == 1 {
                sum.swap_bytes()
            } else {
                sum
            };
            pseudo
                .add_2bytes(src.port().to_be_bytes())
                .add_2bytes(dst.port().to_be_bytes())
                .add_2bytes(udp_len.to_be_bytes())
                .add_slice(header)
                .add_2bytes(sum.to_be_bytes())
                .to_ones_complement_with_no_zero()
        }
    };
    u[6..8].copy_from_slice(&ck.to_be().to_be_bytes());
}

/// Writes a 20-byte IPv4 header for a UDP datagram of `udp_len` bytes (TTL 64,
/// no options, don't fragment) into `out`, with its checksum unless `offload`
/// (then 0, for the device to fill). Written byte by byte, summed with the
/// payload sum's loop: etherparse's builder spent 2.5% of a sender's core here.
fn write_ipv4_header(out: &mut [u8], udp_len: u16, src: Ipv4Addr, dst: Ipv4Addr, offload: bool) {
    let total = IPV4_LEN as u16 + udp_len;
    out[0] = 0x45; // version 4, 5 words
    out[1] = 0; // DSCP, ECN
    out[2..4].copy_from_slice(&total.to_be_bytes());
    out[4..6].fill(0); // identification
    out[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // don't fragment, offset 0
    out[8] = 64; // TTL
    out[9] = IpNumber::UDP.0;
    out[10..12].fill(0);
    out[12..16].copy_from_slice(&src.octets());
    out[16..20].copy_from_slice(&dst.octets());
    if !offload {
        let sum = !super::payload_sum::short_sum(&out[..IPV4_LEN]);
        out[10..12].copy_from_slice(&sum.to_be_bytes());
    }
}

/// An ARP reply frame from `mac`/`ip` to the requester.
pub fn arp_reply(mac: [u8; 6], ip: Ipv4Addr, req: &ArpEthIpv4Packet) -> Vec<u8> {
    arp_frame(
        mac,
        req.sender_mac,
        ArpEthIpv4Packet {
            operation: ArpOperation::REPLY,
            sender_mac: mac,
            sender_ipv4: ip.octets(),
            target_mac: req.sender_mac,
            target_ipv4: req.sender_ipv4,
        },
    )
}

/// A broadcast ARP request for `target`.
pub fn arp_request(mac: [u8; 6], ip: Ipv4Addr, target: Ipv4Addr) -> Vec<u8> {
    arp_frame(
        mac,
        BROADCAST,
        ArpEthIpv4Packet {
            operation: ArpOperation::REQUEST,
            sender_mac: mac,
            sender_ipv4: ip.octets(),
            target_mac: [0; 6],
            target_ipv4: target.octets(),
        },
    )
}

fn arp_frame(src: [u8; 6], dst: [u8; 6], p: ArpEthIpv4Packet) -> Vec<u8> {
    let mut out = Vec::with_capacity(ETH_LEN + ArpEthIpv4Packet::LEN);
    out.extend_from_slice(&dst);
    out.extend_from_slice(&src);
    out.extend_from_slice(&EtherType::ARP.0.to_be_bytes());
    out.extend_from_slice(&p.to_bytes());
    out
}

/// An ICMP echo reply frame answering a request from `to_mac`/`to_ip`.
pub fn echo_reply(
    (mac, ip): ([u8; 6], Ipv4Addr),
    (to_mac, to_ip): ([u8; 6], Ipv4Addr),
    id: u16,
    seq: u16,
    data: &[u8],
) -> Option<Vec<u8>> {
    let b = PacketBuilder::ethernet2(mac, to_mac)
        .ipv4(ip.octets(), to_ip.octets(), 64)
        .icmpv4_echo_reply(id, seq);
    let mut out = Vec::with_capacity(b.size(data.len()));
    b.write(&mut out, data).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::UdpHeader;

    const MAC_A: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const MAC_B: [u8; 6] = [2, 0, 0, 0, 0, 2];

    const SOFTWARE: UdpChecksum = UdpChecksum::Software { payload_sum: None };

    fn udp_frame(payload: &[u8], checksum: UdpChecksum) -> Vec<u8> {
        let src = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 4000);
        let dst = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 9000);
        let mut f = vec![0u8; HEADERS_LEN];
        let (a, b) = payload.split_at(payload.len().min(40));
        write_udp_headers(&mut f, MAC_A, MAC_B, src, dst, a, b, checksum);
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn a_precomputed_payload_sum_gives_the_same_checksum_after_any_header() {
        let src = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 4000);
        let dst = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 9000);
        let payload: Vec<u8> = (0..1433u32).map(|i| (i * 13 + 5) as u8).collect();
        for hlen in [0usize, 1, 2, 17, 32, 33] {
            let header: Vec<u8> = (0..hlen as u8).map(|i| i ^ 0x5a).collect();
            let sum = super::super::payload_sum::ones_complement_sum(&payload);
            let (mut f, mut g) = (vec![0u8; HEADERS_LEN], vec![0u8; HEADERS_LEN]);
            write_udp_headers(&mut f, MAC_A, MAC_B, src, dst, &header, &payload, SOFTWARE);
            write_udp_headers(
                &mut g,
                MAC_A,
                MAC_B,
                src,
                dst,
                &header,
                &payload,
                UdpChecksum::Software {
                    payload_sum: Some(sum),
                },
            );
            assert_eq!(f, g, "header of {hlen} bytes");
            let mut all = header.clone();
            all.extend_from_slice(&payload);
            let (uh, _) = UdpHeader::from_slice(&f[ETH_LEN + IPV4_LEN..]).unwrap();
            let expect = uh
                .calc_checksum_ipv4_raw([10, 0, 0, 1], [10, 0, 0, 2], &all)
                .unwrap();
            assert_eq!(uh.checksum, expect, "header of {hlen} bytes");
        }
    }

    #[test]
    fn written_headers_parse_back_with_valid_checksums() {
        let payload: Vec<u8> = (0..1001u32).map(|i| (i * 7) as u8).collect();
        let f = udp_frame(&payload, SOFTWARE);
        // Cross-check the split-payload UDP checksum against etherparse's own.
        let (uh, _) = UdpHeader::from_slice(&f[ETH_LEN + IPV4_LEN..]).unwrap();
        let expect = uh
            .calc_checksum_ipv4_raw([10, 0, 0, 1], [10, 0, 0, 2], &payload)
            .unwrap();
        assert_eq!(uh.checksum, expect);
        let got = parse(&f, MAC_B, Ipv4Addr::new(10, 0, 0, 2), RxVerified::default());
        assert_eq!(
            got,
            Frame::Udp {
                from: "10.0.0.1:4000".parse().unwrap(),
                from_mac: MAC_A,
                dst_port: 9000,
                start: HEADERS_LEN,
                len: payload.len()
            }
        );
    }

    /// Without a UDP checksum the field is 0, the IPv4 header's checksum is
    /// still right, and the frame parses back (RFC 768: 0 means none computed),
    /// a flipped payload bit included (nothing covers it: why omitting is only
    /// for frames that stay in the host's memory).
    #[test]
    fn an_omitted_udp_checksum_is_zero_and_accepted() {
        let payload: Vec<u8> = (0..1001u32).map(|i| (i * 7) as u8).collect();
        let mut f = udp_frame(&payload, UdpChecksum::Omitted);
        let (uh, _) = UdpHeader::from_slice(&f[ETH_LEN + IPV4_LEN..]).unwrap();
        assert_eq!(uh.checksum, 0);
        assert_eq!(
            f[ETH_LEN..ETH_LEN + IPV4_LEN],
            udp_frame(&payload, SOFTWARE)[ETH_LEN..ETH_LEN + IPV4_LEN],
            "the IPv4 header is the same, its checksum included"
        );
        let ip = Ipv4Addr::new(10, 0, 0, 2);
        let udp = |f: &[u8]| parse(f, MAC_B, ip, RxVerified::default());
        assert!(matches!(udp(&f), Frame::Udp { len: 1001, .. }));
        f[HEADERS_LEN + 5] ^= 0x40;
        assert!(matches!(udp(&f), Frame::Udp { len: 1001, .. }));
    }

    /// The header written by hand is byte for byte the one etherparse builds,
    /// its checksum included, for several lengths and addresses.
    #[test]
    fn the_ipv4_header_matches_etherparses() {
        for (udp_len, src, dst) in [
            (8u16, [10, 0, 0, 1], [10, 0, 0, 2]),
            (1480, [192, 168, 255, 254], [172, 16, 0, 1]),
            (8980, [255, 255, 255, 255], [0, 0, 0, 0]),
        ] {
            let mut want = etherparse::Ipv4Header::new(udp_len, 64, IpNumber::UDP, src, dst)
                .expect("a valid header");
            want.header_checksum = want.calc_header_checksum();
            let mut got = [0u8; IPV4_LEN];
            write_ipv4_header(&mut got, udp_len, src.into(), dst.into(), false);
            assert_eq!(&got[..], &want.to_bytes()[..], "udp_len {udp_len}");
            write_ipv4_header(&mut got, udp_len, src.into(), dst.into(), true);
            want.header_checksum = 0;
            assert_eq!(
                &got[..],
                &want.to_bytes()[..],
                "offloaded, udp_len {udp_len}"
            );
        }
    }

    #[test]
    fn corrupted_truncated_and_foreign_frames_are_classified() {
        let payload = [1u8; 64];
        let ip = Ipv4Addr::new(10, 0, 0, 2);
        let mut f = udp_frame(&payload, SOFTWARE);
        f[HEADERS_LEN + 5] ^= 0x40;
        assert_eq!(
            parse(&f, MAC_B, ip, RxVerified::default()),
            Frame::BadChecksum
        );
        let f = udp_frame(&payload, SOFTWARE);
        assert_eq!(
            parse(&f[..30], MAC_B, ip, RxVerified::default()),
            Frame::Malformed
        );
        assert_eq!(
            parse(&f[..10], MAC_B, ip, RxVerified::default()),
            Frame::Malformed
        );
        assert_eq!(
            parse(&f, MAC_A, ip, RxVerified::default()),
            Frame::NotForUs,
            "another MAC"
        );
        assert_eq!(
            parse(&f, MAC_B, Ipv4Addr::new(10, 0, 0, 9), RxVerified::default()),
            Frame::NotForUs,
            "another IP"
        );
        let mut bad_ip = udp_frame(&payload, SOFTWARE);
        bad_ip[ETH_LEN + 8] ^= 1; // TTL
        assert_eq!(
            parse(&bad_ip, MAC_B, ip, RxVerified::default()),
            Frame::BadChecksum
        );
    }

    #[test]
    fn arp_and_echo_round_trip() {
        let ip_a = Ipv4Addr::new(10, 0, 0, 1);
        let ip_b = Ipv4Addr::new(10, 0, 0, 2);
        let req = arp_request(MAC_A, ip_a, ip_b);
        let Frame::Arp(p) = parse(&req, MAC_B, ip_b, RxVerified::default()) else {
            panic!("an ARP request");
        };
        assert_eq!(p.operation, ArpOperation::REQUEST);
        let rep = arp_reply(MAC_B, ip_b, &p);
        let Frame::Arp(r) = parse(&rep, MAC_A, ip_a, RxVerified::default()) else {
            panic!("an ARP reply");
        };
        assert_eq!((r.sender_mac, r.sender_ipv4), (MAC_B, ip_b.octets()));

        let echo = PacketBuilder::ethernet2(MAC_A, MAC_B)
            .ipv4(ip_a.octets(), ip_b.octets(), 64)
            .icmpv4_echo_request(7, 9);
        let mut f = Vec::new();
        echo.write(&mut f, b"ping!").unwrap();
        let Frame::EchoRequest { id, seq, data, .. } =
            parse(&f, MAC_B, ip_b, RxVerified::default())
        else {
            panic!("an echo request");
        };
        assert_eq!(
            (id, seq, &f[data.0..data.0 + data.1]),
            (7, 9, &b"ping!"[..])
        );
        let reply = echo_reply((MAC_B, ip_b), (MAC_A, ip_a), id, seq, b"ping!").unwrap();
        assert_eq!(
            parse(&reply, MAC_A, ip_a, RxVerified::default()),
            Frame::NotForUs
        );
    }
}
