//! Protocol findings (issue 11, items 6–17): each test drives real connections
//! through a pair of endpoints on a virtual clock, with a filter that can drop or
//! inspect any datagram, and hand-crafted datagrams where a peer misbehaves.

use std::time::{Duration, Instant};

use super::*;
use crate::config::TransportConfig;
use crate::endpoint::ConnectionMut;
use crate::pair::{self, Direction, Pair, Verdict};
use crate::wire::{Ack, AckRange, AckRanges};

/// The shared two-endpoint harness ([`crate::pair::Pair`]) under the names these
/// tests use.
trait PairExt {
    fn client_conn(&mut self) -> ConnectionMut<'_, ByteRing, RecvRing>;
    fn server_conn(&mut self) -> ConnectionMut<'_, ByteRing, RecvRing>;
    /// Hands a datagram to the server (`to_server`) or the client at once.
    fn deliver(&mut self, to_server: bool, d: &[u8]);
    /// Runs for `d` of virtual time.
    fn step_for(&mut self, d: Duration);
    /// Reads everything readable on the server; returns the byte count.
    fn server_read(&mut self) -> u64;
}

impl PairExt for Pair {
    fn client_conn(&mut self) -> ConnectionMut<'_, ByteRing, RecvRing> {
        self.client_connection()
    }
    fn server_conn(&mut self) -> ConnectionMut<'_, ByteRing, RecvRing> {
        self.server_connection()
    }
    fn deliver(&mut self, to_server: bool, d: &[u8]) {
        let dir = if to_server {
            Direction::ToServer
        } else {
            Direction::ToClient
        };
        self.inject(dir, d);
    }
    fn step_for(&mut self, d: Duration) {
        self.drive_for(d);
    }
    fn server_read(&mut self) -> u64 {
        self.server_read_all().len() as u64
    }
}

/// A connected pair, each side with its own configuration.
fn connected_with(cfg: TransportConfig, server_cfg: TransportConfig) -> Pair {
    let mut p = Pair::new(cfg, server_cfg);
    p.connect();
    p
}

/// A filter on decoded packets: `(to_server, packet) -> deliver`.
fn filter(mut f: impl FnMut(bool, &Packet<'_>) -> bool + Send + 'static) -> pair::Filter {
    Box::new(move |_, dir, d| {
        let pkt = wire::decode(d).expect("a side sent an undecodable datagram");
        if f(dir == Direction::ToServer, &pkt) {
            Verdict::Deliver
        } else {
            Verdict::Drop
        }
    })
}

/// A configuration whose packet window cannot grow past 2048 packets, so the
/// packet-number jump accepted stays at its floor (65,536).
fn small_window() -> TransportConfig {
    TransportConfig {
        max_window_bytes: 1 << 20,
        ..Default::default()
    }
}

fn ack_of(largest: u64, max_data: u64) -> Ack {
    let mut ranges = AckRanges::new();
    ranges.push(AckRange {
        start: largest,
        end: largest,
    });
    Ack {
        ranges,
        ack_delay_us: 0,
        data_cumulative: 0,
        max_data,
    }
}

/// Item 6: a Keepalive followed by more than 65,536 pure acks must not make every
/// later packet "out of window": the check compares against the largest packet
/// number of any validated packet, not only ack-eliciting ones.
#[test]
fn item06_pure_acks_after_a_keepalive_keep_later_packets_in_window() {
    // A small window keeps the accepted jump at its floor (65,536).
    let mut p = Pair::connected(small_window());
    assert_eq!(p.server_conn().max_pn_jump(), 1 << 16);
    let pn0 = p.client_conn().next_pn + 10;
    let server_largest = p.server_conn().next_pn - 1;
    let ka = p.client_packet(pn0, Body::Keepalive);
    p.deliver(true, &ka);
    let n = 70_000u64;
    for i in 1..=n {
        let a = p.client_packet(pn0 + i, Body::Ack(ack_of(server_largest, 1 << 20)));
        p.deliver(true, &a);
    }
    let d = p.client_packet(
        pn0 + n + 1,
        Body::Data {
            offset: 0,
            fin: false,
            payload: b"hello",
        },
    );
    p.deliver(true, &d);
    assert_eq!(p.server_conn().stats.out_of_window, 0);
    assert_eq!(
        p.server_conn().readable(),
        5,
        "data after the acks was dropped"
    );
}

/// Item 7: a lost credit update must not stall the sender: with no data in flight
/// and no credit, the sender probes (an ack-eliciting Keepalive, like QUIC's
/// DATA_BLOCKED) and the answer carries the credit again.
#[test]
fn item07_a_lost_credit_update_does_not_stall_the_sender() {
    let credit = 64 * 1024;
    let mut p = Pair::connected(TransportConfig {
        recv_buffer: credit,
        keepalive: None,
        ..Default::default()
    });
    let total = 4 * credit as usize;
    let data = vec![7u8; total];
    let mut written = p.client_write(&data);
    // Fill the credit without reading: the client ends blocked, nothing in flight.
    // (Credit comes in whole datagrams.)
    let payload = TransportConfig::default().max_payload();
    let credit = credit - credit % payload;
    p.step_for(Duration::from_millis(500));
    assert_eq!(p.client_conn().send_next, credit);
    assert_eq!(p.client_conn().sent.in_flight(), 0);
    // The first credit update (the ack the read triggers) is lost.
    let mut dropped = 0;
    p.set_filter(filter(move |to_server, pkt| {
        if !to_server && dropped == 0 {
            if let Body::Ack(a) = &pkt.body {
                if a.max_data > credit {
                    dropped += 1;
                    return false;
                }
            }
        }
        true
    }));
    let mut received = p.server_read();
    let limit = p.now + Duration::from_secs(5);
    while p.step(limit) {
        received += p.server_read();
        if written < total {
            written += p.client_write(&data[written..]);
        }
    }
    assert_eq!(
        received, total as u64,
        "sender stalled on a lost credit update"
    );
}

/// Runs a 2 MB client→server transfer (server reads everything) for at most 20 s.
fn bulk(p: &mut Pair, total: usize) -> u64 {
    let data = vec![1u8; total];
    let mut written = 0;
    let mut received = 0;
    let limit = p.now + Duration::from_secs(20);
    while received < total as u64 && p.step(limit) {
        if written < total {
            written += p.client_write(&data[written..]);
        }
        received += p.server_read();
    }
    received
}

/// Item 8: the congestion window grows only while it limits the sender (RFC 9002
/// §7.8), not while the packet window or the receiver's credit does.
#[test]
fn item08_cwnd_does_not_grow_when_not_congestion_limited() {
    for (name, cfg) in [
        (
            "window_packets",
            TransportConfig {
                window_packets: 4,
                // Keep the packet window from growing with the congestion window.
                max_window_bytes: 4 * 1472,
                congestion: crate::congestion::CongestionKind::NewReno,
                ..Default::default()
            },
        ),
        (
            "credit",
            TransportConfig {
                recv_buffer: 4 * 1432,
                // No receive-window autotuning: the credit stays the limit.
                max_window_bytes: 4 * 1432,
                congestion: crate::congestion::CongestionKind::NewReno,
                ..Default::default()
            },
        ),
        (
            "credit (cubic)",
            TransportConfig {
                recv_buffer: 4 * 1432,
                // No receive-window autotuning: the credit stays the limit.
                max_window_bytes: 4 * 1432,
                congestion: crate::congestion::CongestionKind::Cubic,
                ..Default::default()
            },
        ),
    ] {
        let mut p = Pair::connected(cfg);
        let initial = p.client_conn().cc.window();
        let total = 2 << 20;
        assert_eq!(bulk(&mut p, total), total as u64, "{name}: transfer");
        let cwnd = p.client_conn().cc.window();
        assert!(
            cwnd <= initial,
            "{name}: cwnd grew from {initial} to {cwnd} while not congestion-limited"
        );
    }
}

/// Delivers Keepalives from the client with the given packet numbers (gaps make
/// ack ranges).
fn keepalives(p: &mut Pair, pns: impl IntoIterator<Item = u64>) {
    for pn in pns {
        let d = p.client_packet(pn, Body::Keepalive);
        p.deliver(true, &d);
    }
}

/// Item 14: an ack that does not fit the datagram must not vanish: it is truncated
/// to the ranges that fit (highest first), and when not even the first range fits
/// the ack state is kept for the next transmission.
#[test]
fn item14_an_ack_too_big_for_the_datagram_is_truncated_not_lost() {
    let mut p = Pair::connected(TransportConfig::default());
    let base = p.client_conn().next_pn + 100;
    // Five ranges: base, base+2, ..., base+8.
    keepalives(&mut p, (0..5).map(|i| base + 2 * i));
    let now = p.now;
    let mut buf = vec![0u8; 2048];
    // Smaller than any ack: nothing is sent, nothing is forgotten.
    let small = wire::ack_len(1) - 1;
    assert!(p
        .server_conn()
        .poll_transmit(now, &mut buf[..small])
        .is_none());
    assert!(p.server_conn().acks.has_unacked(), "ack state cleared");
    // Room for two ranges: the two highest go out.
    let two = wire::ack_len(2);
    let t = p
        .server_conn()
        .poll_transmit(now, &mut buf[..two])
        .expect("a truncated ack");
    let Body::Ack(a) = wire::decode(&buf[..t.len]).unwrap().body else {
        panic!("not an ack");
    };
    assert_eq!(a.largest(), base + 8);
    assert_eq!(a.ranges.len(), 2);
    assert_eq!(a.ranges[1].end, base + 6);
}

/// Item 14: a peer announcing a datagram size too small for an ack (or a data
/// packet with a useful payload) is rejected at the handshake.
#[test]
fn item14_handshake_rejects_a_max_datagram_too_small_for_an_ack() {
    let mut b = vec![0u8; 128];
    for (max_datagram, ok) in [
        (41u16, false),
        (wire::ack_len(1) as u16, false),
        (wire::MIN_MAX_DATAGRAM, true),
    ] {
        let n = wire::encode(
            &mut b,
            &Packet {
                header: Header::default(),
                body: Body::Init {
                    params: HandshakeParams {
                        src_cid: 1,
                        max_data: 1000,
                        max_datagram,
                        max_ack_delay_us: 1000,
                        idle_timeout_ms: 10_000,
                        path_bdp: 0,
                    },
                    cookie: &[],
                },
            },
        )
        .unwrap();
        assert_eq!(
            wire::decode(&b[..n]).is_ok(),
            ok,
            "max_datagram {max_datagram}"
        );
    }
}

/// Item 13: the minimum congestion window holds two full datagrams, header
/// included (RFC 9002 §7.2: 2 × max_datagram_size), since bytes in flight count
/// whole datagrams.
#[test]
fn item13_minimum_window_holds_two_full_datagrams() {
    use crate::congestion::CongestionKind;
    for kind in [CongestionKind::NewReno, CongestionKind::Cubic] {
        let mut p = Pair::connected(TransportConfig {
            congestion: kind,
            ..Default::default()
        });
        let now = p.now;
        let mut c = p.client_conn();
        c.cc.on_congestion_event(now, now, true, 0);
        let full = c.cfg.max_datagram as u64;
        assert!(
            c.cc.window() >= 2 * full,
            "{kind:?}: minimum window {} < 2 × {full}",
            c.cc.window()
        );
    }
}

/// Item 15: a FIN below data already received (beyond a hole) is rejected: the
/// check uses the highest offset received, not the contiguous end.
#[test]
fn item15_fin_below_the_highest_offset_received_is_rejected() {
    let mut p = Pair::connected(TransportConfig::default());
    let pn = p.client_conn().next_pn + 100;
    let data = [5u8; 100];
    let d = p.client_packet(
        pn,
        Body::Data {
            offset: 200,
            fin: false,
            payload: &data,
        },
    );
    p.deliver(true, &d);
    let f = p.client_packet(
        pn + 1,
        Body::Data {
            offset: 100,
            fin: true,
            payload: &data[..50],
        },
    );
    p.deliver(true, &f);
    let s = p.server_conn();
    assert_eq!(
        s.peer_fin,
        PeerFin::Unknown,
        "a final size below received data was taken"
    );
    assert_eq!(s.stats.out_of_window, 1);
}

/// Item 10: a peer that keeps sending but never acknowledges an old packet must
/// not make the sent-packet list grow without bound (it spans every packet number
/// sent since, acks included): packets too far behind are declared lost.
#[test]
fn item10_sent_packets_stay_bounded_when_an_old_packet_is_never_acked() {
    let mut p = Pair::connected(small_window());
    let sh = p.server_conn.unwrap();
    let now = p.now;
    let mut buf = vec![0u8; 2048];
    // The server sends data the client never acknowledges (never delivered).
    p.server
        .connection_mut(sh)
        .unwrap()
        .write(b"never acknowledged")
        .unwrap();
    while p.server.poll_transmit(now, &mut buf).is_some() {}
    assert_eq!(p.server_conn().sent.in_flight(), 1);
    // The client keeps sending: the server acknowledges, one packet number per ack.
    let pn0 = p.client_conn().next_pn + 100;
    let bound = p.server_conn().max_pn_jump();
    for i in 0..3 * bound {
        let d = p.client_packet(pn0 + i, Body::Keepalive);
        p.deliver(true, &d);
        while p.server.poll_transmit(now, &mut buf).is_some() {}
    }
    // Something new to track: its number is far beyond the first one.
    p.server.connection_mut(sh).unwrap().write(b"more").unwrap();
    while p.server.poll_transmit(now, &mut buf).is_some() {}
    let tracked = p.server_conn().sent.tracked();
    assert!(
        tracked.end - tracked.start <= bound,
        "sent list spans {} packet numbers",
        tracked.end - tracked.start
    );
}

/// A server-side connection, established, over any storage (for storage tests).
fn server_conn_with<S: SendStorage, R: RecvStorage>(
    cfg: TransportConfig,
    send: S,
    recv: R,
) -> (Connection<S, R>, Instant) {
    let now = Instant::now();
    let c = Connection::new(ConnectionParams {
        side: Side::Server,
        local_cid: 7,
        remote_cid: 8,
        remote: "10.11.0.1:1000".parse().unwrap(),
        cfg: std::sync::Arc::new(cfg),
        epoch: now,
        now,
        initial_pn: 1000,
        storage: send,
        recv_storage: recv,
        peer: Some(HandshakeParams {
            src_cid: 8,
            max_data: 1 << 20,
            max_datagram: 1472,
            max_ack_delay_us: 1000,
            idle_timeout_ms: 10_000,
            path_bdp: 0,
        }),
    });
    (c, now)
}

fn data_packet(pn: u64, offset: u64, payload: &[u8]) -> Vec<u8> {
    data_packet_fin(pn, offset, payload, false)
}

/// A data packet for the connection [`server_conn_with`] makes, `fin` as given.
fn data_packet_fin(pn: u64, offset: u64, payload: &[u8], fin: bool) -> Vec<u8> {
    let mut b = vec![0u8; 2048];
    let n = wire::encode(
        &mut b,
        &Packet {
            header: Header {
                dst_cid: 7,
                pn: pn.into(),
                timestamp: 1,
                timestamp_echo: 0,
            },
            body: Body::Data {
                offset,
                fin,
                payload,
            },
        },
    )
    .unwrap();
    b.truncate(n);
    b
}

/// Whether the connection sends an ack at `now`, with no time passing.
fn sends_an_ack_at<S: SendStorage, R: RecvStorage>(c: &mut Connection<S, R>, now: Instant) -> bool {
    let mut buf = vec![0u8; 2048];
    while let Some(t) = c.poll_transmit(now, &mut buf) {
        if matches!(wire::decode(&buf[..t.len]).unwrap().body, Body::Ack(_)) {
            return true;
        }
    }
    false
}

/// A stream's last packet is acknowledged at once: its sender's close waits on
/// that ack, so a delayed one added `max_ack_delay` to every short flow. Other
/// data waits for the second packet or the delay.
#[test]
fn a_fin_is_acknowledged_at_once_other_data_may_wait() {
    for (fin, expect_ack) in [(false, false), (true, true)] {
        let (mut c, now) = server_conn_with(
            TransportConfig::default(),
            ByteRing::new(1 << 16),
            RecvRing::new(1 << 16),
        );
        let bytes = data_packet_fin(1000, 0, b"last", fin);
        let pkt = wire::decode(&bytes).unwrap();
        c.handle_packet(now, &pkt, bytes.len(), &());
        assert_eq!(c.readable(), 4);
        assert_eq!(sends_an_ack_at(&mut c, now), expect_ack, "fin: {fin}");
    }
}

/// Item 9: the copying storage bounds the number of disjoint received ranges
/// (each a hole the peer left), so neither memory nor insert cost grows with a
/// peer's fragmentation.
#[test]
fn item09_received_fragments_are_bounded() {
    let cap = 1 << 20;
    let cfg = TransportConfig {
        recv_buffer: cap,
        ..Default::default()
    };
    let (mut c, now) = server_conn_with(
        cfg,
        ByteRing::new(cap as usize),
        RecvRing::new(cap as usize),
    );
    for i in 0..20_000u64 {
        let bytes = data_packet(1000 + i, 1 + 2 * i, &[1]);
        let pkt = wire::decode(&bytes).unwrap();
        c.handle_packet(now, &pkt, bytes.len(), &());
    }
    assert!(
        c.recv.fragments() <= c.recv.max_fragments(),
        "{} fragments",
        c.recv.fragments()
    );
    // The first hole can always be repaired, even with no range to join.
    let bytes = data_packet(30_000, 0, &[1]);
    let pkt = wire::decode(&bytes).unwrap();
    c.handle_packet(now, &pkt, bytes.len(), &());
    assert_eq!(c.readable(), 2, "the head of the stream was refused");
}

/// Item 9, the other way: the bound grows with the credit, so legitimate loss on a
/// path with a large pipe is never refused. Every other full-size datagram of
/// 20,000 lost (10,000 holes, as Startup's overshoot into a shallow queue leaves
/// at 1 Gbit/s × 200 ms): each one that arrived is taken, and the repairs make the
/// stream whole. A fixed limit of 4,096 ranges refused the last 5,904.
#[test]
fn item09_fragments_from_loss_within_a_large_credit_are_taken() {
    const PAYLOAD: usize = 1400;
    const DATAGRAMS: u64 = 20_000;
    let cap = 64 << 20;
    let cfg = TransportConfig {
        recv_buffer: cap,
        ..Default::default()
    };
    let (mut c, now) = server_conn_with(
        cfg,
        ByteRing::new(cap as usize),
        RecvRing::new(cap as usize),
    );
    let payload = [7u8; PAYLOAD];
    let mut pn = 1000;
    let mut deliver = |c: &mut Connection<ByteRing, RecvRing>, i: u64| {
        let bytes = data_packet(pn, i * PAYLOAD as u64, &payload);
        pn += 1;
        let pkt = wire::decode(&bytes).unwrap();
        c.handle_packet(now, &pkt, bytes.len(), &());
    };
    for i in (1..DATAGRAMS).step_by(2) {
        deliver(&mut c, i);
    }
    assert_eq!(c.recv.fragments(), DATAGRAMS as usize / 2);
    assert_eq!(
        c.stats.out_of_window, 0,
        "data within the credit was refused"
    );
    // The repairs, oldest hole first.
    for i in (0..DATAGRAMS).step_by(2) {
        deliver(&mut c, i);
    }
    assert_eq!(c.recv.fragments(), 1);
    assert_eq!(c.readable(), DATAGRAMS * PAYLOAD as u64);
    assert_eq!(c.stats.out_of_window, 0);
}

/// Sends one data packet at `t` (skipping control packets); returns its number.
fn send_data_at<S: SendStorage, R: RecvStorage>(c: &mut Connection<S, R>, t: Instant) -> u64 {
    let mut buf = vec![0u8; 2048];
    loop {
        let tx = c.poll_transmit(t, &mut buf).expect("a packet to send");
        let pkt = wire::decode(&buf[..tx.len]).unwrap();
        if matches!(pkt.body, Body::Data { .. }) {
            // Its own number, whole: the nearest to the next it will send.
            return pkt.header.pn.expand(Some(c.next_pn - 1));
        }
    }
}

/// Delivers an ack of the given packet-number ranges (highest first) at `t`.
fn ack_at<S: SendStorage, R: RecvStorage<Packet = ()>>(
    c: &mut Connection<S, R>,
    t: Instant,
    ranges: &[(u64, u64)],
) {
    let pn = c.largest_pn_received.map_or(1, |l| l + 1);
    let ack = Ack {
        ranges: ranges
            .iter()
            .map(|&(start, end)| AckRange { start, end })
            .collect(),
        ack_delay_us: 0,
        data_cumulative: 0,
        max_data: 1 << 30,
    };
    let mut b = vec![0u8; 2048];
    let n = wire::encode(
        &mut b,
        &Packet {
            header: Header {
                dst_cid: c.local_cid,
                pn: pn.into(),
                timestamp: 1,
                timestamp_echo: 0,
            },
            body: Body::Ack(ack),
        },
    )
    .unwrap();
    let pkt = wire::decode(&b[..n]).unwrap();
    c.handle_packet(t, &pkt, n, &());
}

/// Item 11: losses separated by an acknowledged packet are not persistent
/// congestion (RFC 9002 §7.6.2: no packet between the two may be acknowledged),
/// even when the first and the last lost span more than the period.
#[test]
fn item11_an_acked_packet_between_losses_breaks_persistent_congestion() {
    let cfg = TransportConfig {
        congestion: crate::congestion::CongestionKind::NewReno,
        pacing: false,
        ..Default::default()
    };
    for ack_middle in [false, true] {
        let mut p = Pair::connected(cfg.clone());
        p.client_write(&[3u8; 64 * 1024]);
        let t0 = p.now;
        let mut guard = p.client_conn();
        let c = &mut *guard;
        assert!(c.rtt.has_sample(), "handshake RTT sample");
        let ms = Duration::from_millis;
        let p1 = send_data_at(c, t0);
        send_data_at(c, t0 + ms(40));
        let p3 = send_data_at(c, t0 + ms(80));
        send_data_at(c, t0 + ms(120));
        send_data_at(c, t0 + ms(160));
        send_data_at(c, t0 + ms(160));
        send_data_at(c, t0 + ms(160));
        let p8 = send_data_at(c, t0 + ms(160));
        assert_eq!(p8 - p1, 7, "consecutive numbers");
        let ranges: &[(u64, u64)] = if ack_middle {
            &[(p8, p8), (p3, p3)]
        } else {
            &[(p8, p8)]
        };
        ack_at(c, t0 + ms(165), ranges);
        let period = c.rtt.pto_base(c.cfg.max_ack_delay) * 3;
        assert!(period < ms(160) && period > ms(40), "period {period:?}");
        let collapsed = c.cc.window() <= 2 * c.cfg.max_datagram as u64;
        assert_eq!(
            collapsed, !ack_middle,
            "persistent congestion declared: {collapsed}, packet acked between: {ack_middle}"
        );
    }
}

/// Item 11: packets sent before the first RTT sample do not count towards
/// persistent congestion (RFC 9002 §7.6.2).
#[test]
fn item11_packets_sent_before_the_first_rtt_sample_are_not_persistent_congestion() {
    let cfg = TransportConfig {
        congestion: crate::congestion::CongestionKind::NewReno,
        pacing: false,
        ..Default::default()
    };
    let (mut c, t0) = server_conn_with(cfg, ByteRing::new(1 << 20), RecvRing::new(1 << 20));
    c.write(&[1u8; 64 * 1024]).unwrap();
    assert!(!c.rtt.has_sample());
    let s = Duration::from_secs;
    let first = send_data_at(&mut c, t0);
    for i in 1..5 {
        send_data_at(&mut c, t0 + s(i));
    }
    let last = send_data_at(&mut c, t0 + s(10));
    assert_eq!(last - first, 5);
    ack_at(
        &mut c,
        t0 + s(10) + Duration::from_millis(10),
        &[(last, last)],
    );
    assert!(c.rtt.has_sample());
    assert!(
        c.cc.window() > 2 * c.cfg.max_datagram as u64,
        "persistent congestion from packets sent before any RTT sample"
    );
}

/// Item 16: each side's max_ack_delay and idle timeout travel in the handshake:
/// the peer's max_ack_delay drives the probe timer, and the idle timeout in force
/// is the smaller of the two (RFC 9000 §10.1).
#[test]
fn item16_max_ack_delay_and_idle_timeout_are_exchanged() {
    let client = TransportConfig {
        keepalive: None,
        idle_timeout: Duration::from_secs(30),
        ..Default::default()
    };
    let server = TransportConfig {
        keepalive: None,
        max_ack_delay: Duration::from_millis(50),
        idle_timeout: Duration::from_secs(1),
        ..Default::default()
    };
    let mut p = connected_with(client, server);
    let c = p.client_conn();
    assert_eq!(c.peer_max_ack_delay, Duration::from_millis(50));
    assert!(c.pto() >= Duration::from_millis(50), "pto {:?}", c.pto());
    drop(c);
    assert_eq!(p.server_conn().peer_max_ack_delay, Duration::from_millis(1));
    // Both sides go quiet: the client times out after the server's 1 s, not its 30 s.
    let t0 = p.now;
    p.step_for(Duration::from_secs(3));
    assert_eq!(p.client_conn().close_reason(), Some(CloseReason::TimedOut));
    assert!(p.now - t0 < Duration::from_secs(30));
}

/// Item 17: Close and Reset are acted on only after packet-number validation: a
/// forged one with a number far outside the window is dropped.
#[test]
fn item17_close_and_reset_outside_the_pn_window_are_ignored() {
    for body in [Body::Reset { code: 9 }, Body::Close { code: 0 }] {
        let mut p = Pair::connected(small_window());
        let pn = p.client_conn().next_pn;
        let k = p.client_packet(pn, Body::Keepalive);
        p.deliver(true, &k);
        let d = p.client_packet(pn + (1 << 20), body.clone());
        p.deliver(true, &d);
        let s = p.server_conn();
        assert!(
            s.is_established(),
            "{body:?} outside the window was acted on"
        );
        assert_eq!(s.stats.out_of_window, 1);
    }
}

/// Item 17: the sender skips packet numbers now and then; a receiver that
/// acknowledges one (an optimistic ack: claiming packets it never got, to inflate
/// the window) is caught and the connection closed with a protocol error.
#[test]
fn item17_an_optimistic_ack_of_a_skipped_number_closes_the_connection() {
    let mut p = Pair::connected(TransportConfig {
        congestion: crate::congestion::CongestionKind::NewReno,
        ..Default::default()
    });
    // Only the forged acks below reach the client.
    p.set_filter(filter(|to_server, pkt| {
        to_server || !matches!(pkt.body, Body::Ack(_))
    }));
    let first = p.client_conn().next_pn;
    let data = vec![2u8; 1 << 20];
    let limit = p.now + Duration::from_secs(5);
    while p.step(limit) && !p.client_conn().is_closed() {
        p.client_write(&data);
        p.server_read();
        // Acknowledge everything sent so far, received or not.
        let (now, last) = (p.now, p.client_conn().next_pn - 1);
        if last > first {
            ack_at(&mut p.client_conn(), now, &[(first, last)]);
        }
    }
    assert_eq!(
        p.client_conn().close_reason(),
        Some(CloseReason::LocalReset(PROTOCOL_VIOLATION_CODE))
    );
}

/// The check behind item 17 looks up each acknowledged range among the
/// skipped numbers (ascending) instead of scanning them all.
#[test]
fn a_range_acks_a_skipped_number_only_if_it_holds_one() {
    let mut p = Pair::connected(TransportConfig::default());
    let mut c = p.client_conn();
    c.skipped = [10, 20, 30].into_iter().collect();
    for (lo, hi) in [(10, 10), (30, 30), (0, 10), (15, 25), (0, 100), (20, 20)] {
        assert!(c.acks_skipped(lo, hi), "[{lo}, {hi}]");
    }
    for (lo, hi) in [(0, 9), (11, 19), (21, 29), (31, 1000)] {
        assert!(!c.acks_skipped(lo, hi), "[{lo}, {hi}]");
    }
    c.skipped.clear();
    assert!(!c.acks_skipped(0, u64::MAX));
}

/// A side closes only once every byte it sent was acknowledged, not only its
/// finish: the finish can travel (and be acknowledged) in a later packet than data
/// that was lost. Found end to end: `pmdt-send` ended "connection closed early by
/// the peer (code 0)" through a 1%-loss path when the receiver's receipt was lost
/// and the packet with its finish was not.
#[test]
fn close_waits_for_every_byte_sent_not_only_the_finish() {
    let mut p = Pair::connected(TransportConfig::default());
    assert_eq!(p.client_write(&[1u8; 1000]), 1000);
    p.client_conn().finish();
    p.step_for(Duration::from_millis(50));
    assert_eq!(p.server_read(), 1000);
    // The server's answer leaves in a packet of its own, which is lost...
    let mut dropped = 0;
    p.set_filter(filter(move |to_server, pkt| {
        if let (false, Body::Data { payload, .. }) = (to_server, &pkt.body) {
            if !payload.is_empty() && dropped == 0 {
                dropped += 1;
                return false;
            }
        }
        true
    }));
    assert_eq!(p.server_conn().write(&[2u8; 160]), Ok(160));
    p.flush();
    // ...then it closes: its finish leaves in a later packet, which arrives.
    let now = p.now;
    p.server_conn().close(now);
    let client = p.client_conn.expect("connected");
    let mut got = 0;
    let mut buf = [0u8; 4096];
    let limit = p.now + Duration::from_secs(10);
    let mut reason = None;
    while p.step(limit) {
        if let Some(mut c) = p.client.connection_mut(client) {
            got += c.read(&mut buf);
            if c.is_peer_finished() && !c.is_send_complete() {
                continue;
            }
            if c.is_peer_finished() {
                c.close(p.now);
            }
            reason = c.close_reason().or(reason);
        }
    }
    assert_eq!(got, 160, "the client read the whole answer");
    assert_eq!(reason, Some(CloseReason::Graceful));
}

/// A Reset the application asked for reaches the peer as a Reset even when the
/// peer's Close arrives before it leaves: the answer to that Close does not
/// replace it, and the connection ends as the application's reset.
#[test]
fn a_queued_reset_is_not_replaced_by_the_answer_to_the_peers_close() {
    let mut p = Pair::connected(TransportConfig::default());
    let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = sent.clone();
    p.set_filter(filter(move |to_server, pkt| {
        if to_server {
            if let Body::Close { code } | Body::Reset { code } = pkt.body {
                let kind = if matches!(pkt.body, Body::Reset { .. }) {
                    "reset"
                } else {
                    "close"
                };
                log.lock().unwrap().push((kind, code));
            }
        }
        true
    }));
    p.client_conn().reset(9);
    let close = p.server_packet(50, Body::Close { code: 0 });
    p.deliver(false, &close);
    let client = p.client_conn.expect("connected");
    let reason = p
        .client
        .connection_mut(client)
        .and_then(|c| c.close_reason());
    p.step_for(Duration::from_millis(100));
    let reason = reason.or_else(|| {
        p.client
            .connection_mut(client)
            .and_then(|c| c.close_reason())
    });
    assert_eq!(sent.lock().unwrap().first(), Some(&("reset", 9)));
    assert_eq!(reason, Some(CloseReason::LocalReset(9)));
}

/// The server's Accept is lost: the client's next Init gets it again, and the
/// connection carries data both ways.
#[test]
fn a_lost_accept_is_sent_again_when_the_init_repeats() {
    let mut p = Pair::new(TransportConfig::default(), TransportConfig::default());
    let accepts = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = accepts.clone();
    p.set_filter(filter(move |to_server, pkt| {
        if !to_server && matches!(pkt.body, Body::Accept { .. }) {
            // The first Accept is lost.
            return seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) > 0;
        }
        true
    }));
    p.connect();
    assert!(
        accepts.load(std::sync::atomic::Ordering::Relaxed) >= 2,
        "the Accept was sent again"
    );
    assert!(p.client_conn().is_established());
    assert_eq!(p.client_write(&[5u8; 3000]), 3000);
    p.step_for(Duration::from_millis(100));
    assert_eq!(p.server_read(), 3000);
}

/// A writer runs no further ahead of the sending than about a congestion window:
/// on a path whose loss keeps NewReno's window small, the bytes written but not
/// yet sent stay within the bound after every write (a close then drains in a
/// few round trips, where a sender that had buffered megabytes at its
/// loss-limited rate took minutes), and the transfer still completes.
#[test]
fn unsent_data_stays_within_about_a_window() {
    let cfg = TransportConfig {
        congestion: crate::congestion::CongestionKind::NewReno,
        ..Default::default()
    };
    let mut p = connected_with(cfg.clone(), cfg);
    let mut n = 0u64;
    p.set_filter(filter(move |to_server, pkt| {
        if to_server && matches!(pkt.body, Body::Data { .. }) {
            n += 1;
            return !n.is_multiple_of(50); // 2 % of the data lost
        }
        true
    }));
    let total = 4usize << 20;
    let data = vec![1u8; total];
    let first = p.client_write(&data);
    assert_eq!(
        first as u64,
        autotune::UNSENT_MIN,
        "before any ack, the floor: the initial window is smaller"
    );
    let (mut written, mut received, mut most_unsent) = (first, 0u64, 0u64);
    let limit = p.now + Duration::from_secs(120);
    while received < total as u64 && p.step(limit) {
        if written < total {
            let k = p.client_write(&data[written..]);
            written += k;
            let c = p.client_conn();
            // (The bound shrinks with the window: data taken before may exceed
            // it, but nothing more is taken then.)
            if k > 0 {
                assert!(
                    c.unsent() <= c.unsent_limit(),
                    "{} > {}",
                    c.unsent(),
                    c.unsent_limit()
                );
            }
            most_unsent = most_unsent.max(c.unsent());
        }
        received += p.server_read();
    }
    assert_eq!(received, total as u64, "the transfer completes");
    println!("most unsent: {most_unsent} bytes");
    assert!(
        most_unsent < 2 << 20,
        "{most_unsent} unsent bytes: the writer ran ahead of the window"
    );
}

/// `write_room` is exactly what `write` takes now: the unsent bound caps it below
/// the free buffer space, a write of more is cut to it, and once the connection
/// sent some of its data the room is back and again exact.
#[test]
fn write_room_is_what_a_write_takes() {
    let mut p = connected_with(TransportConfig::default(), TransportConfig::default());
    let (room, capacity, limit) = {
        let c = p.client_conn();
        (c.write_room(), c.send_capacity(), c.unsent_limit())
    };
    assert_eq!(room, limit, "nothing unsent yet: the whole bound");
    assert!(
        capacity > room,
        "the unsent bound, not the buffer, limits it"
    );
    let data = vec![1u8; 4 << 20];
    assert_eq!(p.client_write(&data) as u64, room);
    assert_eq!(p.client_conn().write_room(), 0);
    p.step_for(Duration::from_millis(50));
    let room = p.client_conn().write_room();
    assert!(room > 0, "sending made room");
    assert_eq!(p.client_write(&data) as u64, room);
    assert_eq!(p.client_conn().write_room(), 0);
}

/// Sends 256 KiB; the fourth data packet's data is dropped on its n-th sending
/// when `drop(n)`, the eighth's on its first. Returns how often each data offset
/// was sent, in the order first sent.
fn sendings_with_losses(drop: fn(u32) -> bool) -> Vec<(u64, u32)> {
    use std::sync::{Arc, Mutex};
    let mut p = Pair::connected(TransportConfig {
        keepalive: None,
        ..Default::default()
    });
    let seen: Arc<Mutex<Vec<(u64, u32)>>> = Arc::default();
    let log = Arc::clone(&seen);
    p.set_filter(filter(move |to_server, pkt| {
        let Body::Data { offset, .. } = pkt.body else {
            return true;
        };
        if !to_server {
            return true;
        }
        let mut log = log.lock().unwrap();
        let i = match log.iter().position(|e| e.0 == offset) {
            Some(i) => i,
            None => {
                log.push((offset, 0));
                log.len() - 1
            }
        };
        log[i].1 += 1;
        let n = log[i].1;
        !((i == 3 && drop(n)) || (i == 7 && n == 1))
    }));
    let total = 256 * 1024;
    assert_eq!(bulk(&mut p, total), total as u64, "everything delivered");
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() > 7, "{seen:?}");
    assert_eq!(seen[0].1, 1, "delivered data is sent once");
    assert_eq!(seen[7].1, 2, "lost once: one retransmission");
    seen
}

/// Data whose retransmission was lost goes out in [`LOST_AGAIN_COPIES`] copies (a
/// third loss of the same bytes would hold the receiver's head, and the sender's
/// credit, for a third round trip); the loss of an earlier copy waits for the
/// later one; data lost once is sent again once.
#[test]
fn data_lost_twice_is_sent_again_in_two_copies() {
    let copies = LOST_AGAIN_COPIES as u32;
    let retransmitted = |s: &[(u64, u32)]| s.iter().map(|e| e.1 - 1).sum::<u32>();
    // Original and first retransmission lost: then two copies.
    let s = sendings_with_losses(|n| n <= 2);
    assert_eq!(s[3].1, 2 + copies, "{s:?}");
    assert_eq!(retransmitted(&s), 1 + 1 + copies, "{s:?}");
    // The earlier copy lost too: the later one arrives, nothing more is sent.
    let s = sendings_with_losses(|n| n <= 3);
    assert_eq!(s[3].1, 2 + copies, "{s:?}");
    // Both copies lost: two copies again (not one pair per lost copy).
    let s = sendings_with_losses(|n| n <= 2 + LOST_AGAIN_COPIES as u32);
    assert_eq!(s[3].1, 2 + 2 * copies, "{s:?}");
}

/// Sends 32 KiB and finishes at once (two round trips from the initial window:
/// the fin leaves in the same flight as the datagram three from the end). That
/// datagram's data is dropped on its n-th sending when `drop(n)`. Returns how
/// often it was sent, once everything arrived.
fn tail_sendings_with_losses(drop: fn(u32) -> bool) -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    let total: usize = 32 << 10;
    let mut p = Pair::connected(TransportConfig {
        keepalive: None,
        ..Default::default()
    });
    // The datagram holding this byte.
    let victim = (total - 4000) as u64;
    let sent = Arc::new(AtomicU32::new(0));
    let count = Arc::clone(&sent);
    p.set_filter(filter(move |to_server, pkt| {
        let Body::Data {
            offset, payload, ..
        } = pkt.body
        else {
            return true;
        };
        if !to_server || !(offset..offset + payload.len() as u64).contains(&victim) {
            return true;
        }
        !drop(count.fetch_add(1, Ordering::Relaxed) + 1)
    }));
    let data: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
    assert_eq!(p.client_write(&data), total, "written in one call");
    p.client_conn().finish();
    let mut got = Vec::new();
    let limit = p.now + Duration::from_secs(10);
    while got.len() < total && p.step(limit) {
        got.extend(p.server_read_all());
    }
    assert!(got == data, "the stream arrived whole and intact");
    sent.load(Ordering::Relaxed)
}

/// Data lost after the stream's end went out is sent again in
/// [`TAIL_REPAIR_COPIES`] copies: nothing new follows, so a lost repair would
/// cost the transfer's completion another round trip. Either copy arriving is
/// enough; both lost, the data goes out in [`LOST_AGAIN_COPIES`] copies again.
/// (Data lost while more was still to be sent goes out once:
/// `data_lost_twice_is_sent_again_in_two_copies`.)
#[test]
fn data_lost_after_the_fin_went_out_is_sent_again_in_two_copies() {
    let tail = TAIL_REPAIR_COPIES as u32;
    assert_eq!(tail_sendings_with_losses(|n| n == 1), 1 + tail);
    // The earlier copy lost: the later one arrives, nothing more is sent.
    assert_eq!(tail_sendings_with_losses(|n| n <= 2), 1 + tail);
    // Both copies lost: lost again, so two copies again.
    assert_eq!(
        tail_sendings_with_losses(|n| n <= 1 + TAIL_REPAIR_COPIES as u32),
        1 + tail + LOST_AGAIN_COPIES as u32
    );
}

/// Credit comes in the datagrams the peer actually sends: the smaller of the two
/// sides' `max_datagram`, told in the handshake. A client sending 1,064-byte
/// datagrams to a server of 1,500-byte ones found the server's credit edge off
/// its grid, so every datagram after the first edge arrived in two pieces. Both
/// directions carry data here, so the side that learns the smaller size after
/// giving credit (a client, from the Accept) is checked too: its credit never
/// moves back. (Its first credit, given in its own datagrams, may end off the
/// grid; the sender cuts one datagram short there and the edges that follow
/// are whole datagrams from it.)
#[test]
fn credit_is_counted_in_the_smaller_sides_datagrams() {
    let small = TransportConfig {
        max_datagram: 1064,
        recv_buffer: 16 * 1444,
        ..Default::default()
    };
    let big = TransportConfig {
        recv_buffer: 16 * 1444,
        ..Default::default()
    };
    let grain = small.max_payload();
    for (client, server) in [(small.clone(), big.clone()), (big.clone(), small.clone())] {
        let mut p = connected_with(client, server);
        assert_eq!(p.client_conn().data_payload(), grain);
        assert_eq!(p.server_conn().data_payload(), grain);
        let data = vec![3u8; 64 * grain as usize];
        let mut to_server = p.client_write(&data);
        let mut to_client = p.server_connection().write(&data).unwrap_or(0);
        let (mut at_server, mut at_client) = (0, 0);
        let (mut server_limit, mut client_limit) = (0, 0);
        let mut rounds = 0;
        while at_server < data.len() || at_client < data.len() {
            p.step_for(Duration::from_millis(20));
            let now_server = p.server_conn().recv_limit();
            let now_client = p.client_conn().recv_limit();
            for (limit, prev) in [
                (now_server, &mut server_limit),
                (now_client, &mut client_limit),
            ] {
                assert!(limit >= *prev, "credit moved back: {prev} -> {limit}");
                *prev = limit;
            }
            // The server knew the client's size before it gave credit: every
            // edge is on the client's grid.
            assert_eq!(now_server % grain, 0, "credit edge {now_server}");
            at_server += p.server_read() as usize;
            at_client += read_all(&mut p.client_connection());
            to_server += p.client_write(&data[to_server..]);
            to_client += p.server_connection().write(&data[to_client..]).unwrap_or(0);
            rounds += 1;
            assert!(rounds < 1000, "stalled at {at_server}, {at_client}");
        }
    }
}

/// Reads everything readable; returns the byte count.
fn read_all(c: &mut ConnectionMut<'_, ByteRing, RecvRing>) -> usize {
    let mut buf = [0u8; 4096];
    let mut n = 0;
    loop {
        let k = c.read(&mut buf);
        if k == 0 {
            return n;
        }
        n += k;
    }
}

/// A receiver that only sends acks takes its RTT from the timestamps the data
/// echoes: after a transfer over a 200 ms path its estimate is the path's, not
/// the initial 100 ms with its 50 ms variance, so a lost receipt or close is
/// probed after about one RTT, not three initial RTTs doubling per loss.
#[test]
fn a_pure_receiver_learns_the_rtt_from_echoed_timestamps() {
    let cfg = TransportConfig::default();
    let mut p = Pair::new(cfg.clone(), cfg);
    p.delay = Duration::from_millis(100);
    p.connect();
    let data = vec![7u8; 4 << 20];
    let (mut sent, mut got) = (0, 0);
    let limit = p.now + Duration::from_secs(60);
    while got < data.len() {
        sent += p.client_write(&data[sent..]);
        assert!(p.step(limit), "stalled at {got}");
        got += read_all(&mut p.server_connection());
    }
    let s = p.server_conn();
    assert_eq!(s.sent.in_flight(), 0, "the receiver sent only acks");
    let srtt = s.rtt.smoothed();
    assert!(
        (Duration::from_millis(200)..Duration::from_millis(215)).contains(&srtt),
        "smoothed RTT {srtt:?}"
    );
    assert!(s.rtt.var() < Duration::from_millis(10), "{:?}", s.rtt.var());
    assert!(
        s.rtt.pto_base(s.cfg.max_ack_delay) < Duration::from_millis(260),
        "probe timeout {:?}",
        s.rtt.pto_base(s.cfg.max_ack_delay)
    );
}

/// Application-limited time is counted during the transfer only, from the
/// first byte written until the stream's end went out, the span the tools
/// report shares of. A connection idle before its first write (a `--multi`
/// member waiting 10 s for another member's handshake) or left open after its
/// fin counted those seconds too, and `pmdt-send --multi` printed "held back
/// by application 6463%".
#[test]
fn only_time_within_the_transfer_is_application_limited() {
    let mut p = Pair::connected(TransportConfig::default());
    // Connected, nothing written yet.
    p.step_for(Duration::from_secs(5));
    let start = p.now;
    let total = 256 << 10;
    assert_eq!(bulk(&mut p, total), total as u64, "transfer");
    p.client_conn().finish();
    let limit = p.now + Duration::from_secs(5);
    assert!(
        p.drive_until(limit, |p| p.client_conn().fin == Fin::Acked),
        "the fin is acknowledged"
    );
    let transfer_us = (p.now - start).as_micros() as u64;
    // Left open, idle, then closed.
    p.step_for(Duration::from_secs(5));
    let now = p.now;
    p.client_conn().close(now);
    p.step_for(Duration::from_millis(200));
    let s = p.client_conn().stats();
    assert!(
        s.blocked_app_us <= transfer_us,
        "{} µs counted as application-limited in a {} µs transfer",
        s.blocked_app_us,
        transfer_us
    );
}

/// The acks of a stream's last flight, after its fin went out, do not grow a
/// loss-based controller's window (RFC 9002 §7.8: nothing was held back by
/// it), though that time no longer counts as application-limited.
#[test]
fn acks_after_the_fin_do_not_grow_the_window() {
    for cc in [
        crate::congestion::CongestionKind::NewReno,
        crate::congestion::CongestionKind::Cubic,
    ] {
        let mut p = Pair::connected(TransportConfig {
            congestion: cc,
            ..Default::default()
        });
        let initial = p.client_conn().cc.window();
        // Less than the initial window: it all leaves at once, with the fin.
        let data = vec![7u8; (initial / 4) as usize];
        assert_eq!(p.client_write(&data), data.len());
        p.client_conn().finish();
        let limit = p.now + Duration::from_secs(5);
        assert!(
            p.drive_until(limit, |p| p.client_conn().fin == Fin::Acked),
            "{cc:?}: the fin is acknowledged"
        );
        assert_eq!(p.server_read(), data.len() as u64, "{cc:?}: delivered");
        let after = p.client_conn().cc.window();
        assert!(
            after <= initial,
            "{cc:?}: the window grew from {initial} to {after} on acks after the fin"
        );
    }
}

/// Packet numbers cross 2^40, where a short header's 40 bits wrap (both ways:
/// the client's data and the server's acks): each receiver recovers the whole
/// numbers, the stream arrives intact, and nothing is out of window or invalid.
#[test]
fn a_transfer_across_the_40_bit_wrap_of_packet_numbers_completes() {
    let mut p = connected_with(TransportConfig::default(), TransportConfig::default());
    p.step_for(Duration::from_millis(100));
    // Idle now: move both senders to just below 2^32 and their peers' view with them.
    let start = (1u64 << 40) - 300;
    for client in [true, false] {
        {
            let mut c = if client {
                p.client_conn()
            } else {
                p.server_conn()
            };
            assert_eq!(c.sent.in_flight(), 0, "idle before the jump");
            c.next_pn = start;
            c.next_skip = start + next_skip_gap(&mut c.skip_rng);
        }
        // The peer's view moves with them: nothing received below the jump
        // remains to acknowledge (an ack range spans at most 2^32 numbers).
        let mut peer = if client {
            p.server_conn()
        } else {
            p.client_conn()
        };
        peer.largest_pn_received = Some(start - 1);
        peer.acks = AckState::new();
    }
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut written = 0;
    let mut got = Vec::new();
    for _ in 0..2000 {
        if written < data.len() {
            written += p.client_write(&data[written..]);
        }
        p.step_for(Duration::from_millis(5));
        got.extend(p.server_read_all());
        if got.len() == data.len() {
            break;
        }
    }
    assert_eq!(got.len(), data.len());
    assert!(got == data, "the stream arrived intact");
    for client in [true, false] {
        let c = if client {
            p.client_conn()
        } else {
            p.server_conn()
        };
        assert!(c.next_pn > 1 << 40, "crossed 2^40");
        assert_eq!(c.stats.out_of_window, 0);
        assert_eq!(c.stats.invalid_acks, 0);
    }
}

/// Bytes of data datagrams a connection sends at `t` with no time passing,
/// its writer keeping its buffer full.
fn data_sent_at<S: SendStorage, R: RecvStorage>(c: &mut Connection<S, R>, t: Instant) -> u64 {
    let data = vec![7u8; 1 << 20];
    let mut buf = vec![0u8; 2048];
    let mut sent = 0;
    loop {
        // Full (`Blocked`) until some of it is sent.
        let _ = c.write(&data);
        let Some(tx) = c.poll_transmit(t, &mut buf) else {
            return sent;
        };
        if matches!(
            wire::decode(&buf[..tx.len]).unwrap().body,
            Body::Data { .. }
        ) {
            sent += tx.len as u64;
        }
    }
}

/// The endpoint's word that a loss-based flow shares the path reaches the
/// pacer. A paced sender back 30 ms late on a path not yet sampled (its round
/// trip the initial 100 ms, clamped to the 20-ms ceiling) sends at once its
/// bucket and 20 ms of its rate, alone or beside flows of a model-based
/// controller; beside a loss-based flow, whose full queue the burst would
/// overflow, its bucket and 5 ms ([`crate::pacer::catch_up_limit`]).
#[test]
fn beside_a_loss_based_flow_a_connection_makes_up_less_of_an_absence() {
    const RATE: u64 = 100_000_000 / 8; // bytes per second
    let cfg = TransportConfig {
        congestion: crate::congestion::CongestionKind::Paced { rate_bps: RATE * 8 },
        ..Default::default()
    };
    let datagram = cfg.max_datagram as u64;
    let bucket = cfg.pacing_burst_packets * datagram;
    let back_from_absence = |siblings: usize, loss_based: bool| {
        let (mut c, t0) =
            server_conn_with(cfg.clone(), ByteRing::new(4 << 20), RecvRing::new(1 << 16));
        c.set_path_siblings(siblings, loss_based);
        // On schedule for 10 ms: the sender polls at each pacing deadline.
        let mut t = t0;
        while t < t0 + Duration::from_millis(10) {
            data_sent_at(&mut c, t);
            t = c.poll_timeout().expect("a pacing deadline");
        }
        // Then off its core for 30 ms past the deadline.
        data_sent_at(&mut c, t + Duration::from_millis(30))
    };
    let alone = back_from_absence(0, false);
    let beside_bbr = back_from_absence(2, false);
    let beside_cubic = back_from_absence(2, true);
    println!("burst bytes: alone {alone}, beside BBR {beside_bbr}, beside CUBIC {beside_cubic}");
    // The bucket and the catch-up's share of the rate, to a datagram.
    let made_up = |ms: u64| bucket + RATE * ms / 1000;
    for (burst, ms) in [(alone, 20), (beside_bbr, 20), (beside_cubic, 5)] {
        assert!(
            burst.abs_diff(made_up(ms)) <= datagram,
            "{burst} bytes where {ms} ms make up {}",
            made_up(ms)
        );
    }
}

/// The queue that stood all round comes off a late sender's catch-up only
/// for a sender with other flows on the path, and, beside a loss-based
/// flow, not for a flow the endpoint found behind (a model-based flow that
/// delivered less than the average of the flows to its host): it makes up
/// its absences whole (up to its bound), as the loss-based flow's window
/// does.
#[test]
fn beside_a_loss_based_flow_the_flow_behind_leaves_no_kept_queue_out() {
    let (mut c, t0) = server_conn_with(
        TransportConfig::default(),
        ByteRing::new(1 << 16),
        RecvRing::new(1 << 16),
    );
    let queue = Duration::from_millis(6);
    c.rate_sampler.set_kept_queue(t0, queue);
    let mut left_out = |siblings: usize, loss_based: bool, share: ShareOnPath| {
        c.set_path_siblings(siblings, loss_based);
        c.set_share_on_path(share);
        c.queue_kept_through_an_absence(t0)
    };
    use ShareOnPath::{Behind, Even};
    assert_eq!(left_out(0, false, Even), Duration::ZERO, "alone");
    assert_eq!(left_out(2, false, Even), queue, "beside BBR flows");
    assert_eq!(
        left_out(2, false, Behind),
        queue,
        "BBR flows are not compared"
    );
    assert_eq!(left_out(2, true, Even), queue, "level beside CUBIC");
    assert_eq!(
        left_out(2, true, Behind),
        Duration::ZERO,
        "behind beside CUBIC"
    );
}
