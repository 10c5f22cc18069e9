//! What one acknowledgement costs the sender with 100,000 packets in flight, beside
//! 10,000 (a
//! 10 Gbit/s × 100 ms path holds ~85,000 full-size packets): the sent-packet list,
//! loss detection and the congestion controller must not walk the whole flight per
//! ack. In order (every ack moves the cumulative point) and with a hole every 100
//! packets (acks carry ranges; loss detection runs). No I/O; the time measured is
//! the sender's `Endpoint::handle` of each ack only.
//! Run: `cargo bench -p pmdt-proto --bench ack_cost`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pmdt_proto::{CongestionKind, ConnectionHandle, Endpoint, EndpointConfig, TransportConfig};

const PAYLOAD_DGRAM: u16 = 1472;

struct Flight {
    now: Instant,
    client: Endpoint,
    ca: SocketAddr,
    sa: SocketAddr,
    /// Acks the receiver sent for the delivered part of the flight, in order.
    acks: Vec<Vec<u8>>,
}

fn config(in_flight: usize) -> TransportConfig {
    TransportConfig::default()
        .with_max_datagram(PAYLOAD_DGRAM)
        .with_congestion(CongestionKind::Fixed {
            window_packets: 2 * in_flight as u64,
        })
        .with_window_packets(2 * in_flight as u64)
        .with_send_buffer(512 << 20)
        .with_recv_buffer(512 << 20)
        .with_max_window_bytes(512 << 20)
        .with_pacing(false)
        .with_ack_every(2)
        .with_keepalive(None)
        .with_idle_timeout(Duration::from_secs(3600))
}

/// A connection with `in_flight` packets sent and none acknowledged, and the acks
/// the receiver produced for the first `acked` of them (skipping every `hole`-th
/// packet when set: those acks carry ranges).
fn flight(in_flight: usize, acked: usize, hole: Option<usize>) -> Flight {
    let now = Instant::now();
    let mut client = Endpoint::new(
        EndpointConfig::default()
            .with_transport(config(in_flight))
            .with_seed(Some(1)),
        now,
    )
    .unwrap();
    let mut server = Endpoint::new(
        EndpointConfig::default()
            .with_transport(config(in_flight))
            .with_accept(true)
            .with_seed(Some(2)),
        now,
    )
    .unwrap();
    let ca: SocketAddr = "10.0.0.1:1".parse().unwrap();
    let sa: SocketAddr = "10.0.0.2:2".parse().unwrap();
    let h: ConnectionHandle = client.connect(now, sa);
    let mut b = vec![0u8; 2048];
    let mut sh = None;
    for _ in 0..8 {
        while let Some(t) = client.poll_transmit(now, &mut b) {
            server.handle(now, ca, &b[..t.transmit().len]);
        }
        while let Some(t) = server.poll_transmit(now, &mut b) {
            client.handle(now, sa, &b[..t.transmit().len]);
        }
        if let Some(x) = server.accept() {
            sh = Some(x);
        }
    }
    let sh = sh.expect("handshake");
    let data = vec![0x5a; 1 << 20];
    let mut packets = Vec::with_capacity(in_flight);
    while packets.len() < in_flight {
        // As much as the connection takes (its unsent bound refills as it sends).
        while client.connection(h).unwrap().send_capacity() > data.len() as u64
            && client.connection_mut(h).unwrap().write(&data).is_ok()
        {}
        match client.poll_transmit(now, &mut b) {
            Some(t) => packets.push(b[..t.transmit().len].to_vec()),
            None => panic!("the window stopped the flight at {}", packets.len()),
        }
    }
    let later = now + Duration::from_millis(100);
    let mut acks = Vec::new();
    let mut sink = vec![0u8; 1 << 20];
    let mut ack = vec![0u8; 2048];
    for (i, p) in packets.iter().take(acked).enumerate() {
        if hole.is_some_and(|k| i % k == k - 1) {
            continue;
        }
        server.handle(later, ca, p);
        while server.connection_mut(sh).unwrap().read(&mut sink) > 0 {}
        while let Some(t) = server.poll_transmit(later, &mut ack) {
            acks.push(ack[..t.transmit().len].to_vec());
        }
    }
    Flight {
        now: later,
        client,
        ca,
        sa,
        acks,
    }
}

/// Acks per measured flight (for ~2 packets each: the first 2 × ACKS of the flight).
const ACKS: usize = 4_000;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("ack_cost");
    // One iteration handles the ACKS acks of a fresh flight: the throughput line
    // reads acks per second, the time per ACKS acks.
    g.throughput(Throughput::Elements(ACKS as u64));
    // 10,000 in flight beside 100,000: the cost per ack must not grow with the flight.
    for (label, in_flight, hole) in [
        ("in_order_10k_in_flight", 10_000, None),
        ("in_order_100k_in_flight", 100_000, None),
        ("hole_every_100_10k_in_flight", 10_000, Some(100)),
        ("hole_every_100_100k_in_flight", 100_000, Some(100)),
    ] {
        g.bench_function(label, |bch| {
            bch.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let mut f = flight(in_flight, 2 * ACKS + 200, hole);
                    assert!(f.acks.len() >= ACKS, "{} acks", f.acks.len());
                    let t0 = Instant::now();
                    for a in &f.acks[..ACKS] {
                        f.client.handle(f.now, f.sa, a);
                    }
                    spent += t0.elapsed();
                    let _ = f.ca;
                }
                spent
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
