//! One-byte segments out of order must not pin one packet buffer each (with mbufs,
//! a shared pool): the runtime's packet-memory receive storage (`ChunkRecv`) keeps
//! a per-connection budget of held segments, and the connection refuses (drops,
//! unacknowledged) what goes beyond it (issue 11, item 9).

use std::net::SocketAddr;
use std::time::Instant;

use pmdt::link::{Buffer, HeapPool};
use pmdt::proto::ByteRing;
use pmdt::runtime::storage::ChunkRecv;
use pmdt::wire::{self, Body, Header, Packet};
use pmdt::{Endpoint, EndpointConfig, TransportConfig};

/// A one-byte Data datagram at `offset` with packet number `pn` for connection `cid`.
fn data_packet(cid: u64, pn: u64, offset: u64, byte: u8) -> Vec<u8> {
    let mut b = vec![0u8; 128];
    let n = wire::encode(
        &mut b,
        &Packet {
            header: Header {
                dst_cid: cid,
                pn: pn.into(),
                timestamp: 1,
                timestamp_echo: 0,
            },
            body: Body::Data {
                offset,
                fin: false,
                payload: &[byte],
            },
        },
    )
    .unwrap();
    b.truncate(n);
    b
}

#[test]
fn tiny_out_of_order_segments_do_not_exhaust_the_packet_pool() {
    let cap = 64 * 1024;
    let transport = TransportConfig::default().with_recv_buffer(cap);
    let now = Instant::now();
    let ca: SocketAddr = "10.11.0.1:1000".parse().unwrap();
    let sa: SocketAddr = "10.11.0.2:2000".parse().unwrap();
    let mut client = Endpoint::new(
        EndpointConfig::default()
            .with_transport(transport.clone())
            .with_seed(Some(1)),
        now,
    )
    .unwrap();
    let mut server = Endpoint::with_storage(
        EndpointConfig::default()
            .with_transport(transport)
            .with_seed(Some(2))
            .with_accept(true),
        now,
        Box::new(|c| ByteRing::new(c as usize)),
        Box::new(ChunkRecv::new),
    )
    .unwrap();
    let pool = HeapPool::new(100_000, 128);
    let ch = client.connect(now, sa);
    // The handshake, over a lossless instant path.
    let mut buf = vec![0u8; 2048];
    let mut sh = None;
    for _ in 0..10 {
        while let Some(t) = client.poll_transmit(now, &mut buf) {
            let b = Buffer::new(pool.copy_from(&buf[..t.transmit().len]).unwrap());
            server.handle_in(now, ca, b.bytes(), &b);
        }
        while let Some(t) = server.poll_transmit(now, &mut buf) {
            client.handle(now, sa, &buf[..t.transmit().len]);
        }
        sh = sh.or_else(|| server.accept());
    }
    let sh = sh.expect("handshake");
    assert!(client.connection(ch).unwrap().is_established());

    // The client's first data packet (offset 0) gives the connection id and the
    // packet number to continue from; it never arrives, so everything after it
    // stays out of order.
    assert_eq!(client.connection_mut(ch).unwrap().write(&[0]), Ok(1));
    let t = client.poll_transmit(now, &mut buf).expect("data packet");
    let first = buf[..t.transmit().len].to_vec();
    let header = wire::decode(&first).unwrap().header;
    // A sender's first numbers lie below 2^32: the low 40 bits are the whole number.
    let pn = header.pn.low_bits();
    let n = 20_000u64;
    for i in 0..n {
        let bytes = data_packet(header.dst_cid, pn + 1 + i, 1 + i, i as u8);
        let b = Buffer::new(pool.copy_from(&bytes).unwrap());
        server.handle_in(now, ca, b.bytes(), &b);
    }
    let held = pool.in_use();
    assert!(
        held as u64 <= cap / 256,
        "{held} buffers pinned by {n} one-byte segments"
    );
    // The legitimate data still gets in once the hole is filled.
    let b = Buffer::new(pool.copy_from(&first).unwrap());
    server.handle_in(now, ca, b.bytes(), &b);
    assert!(server.connection(sh).unwrap().readable() >= 1);
}
