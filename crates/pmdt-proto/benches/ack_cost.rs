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
use pmdt_proto::Endpoint;

#[path = "support/flight.rs"]
mod support;

struct Flight {
    now: Instant,
    client: Endpoint,
    sa: SocketAddr,
    /// Acks the receiver sent for the delivered part of the flight, in order.
    acks: Vec<Vec<u8>>,
}

/// A connection with `in_flight` packets sent and none acknowledged, and the acks
/// the receiver produced for the first `acked` of them (skipping every `hole`-th
/// packet when set: those acks carry ranges).
fn flight(in_flight: usize, acked: usize, hole: Option<usize>) -> Flight {
    let mut p = support::connected(in_flight);
    let packets = p.flight(in_flight);
    let later = p.now + Duration::from_millis(100);
    let mut acks = Vec::new();
    let mut sink = vec![0u8; 1 << 20];
    let mut ack = vec![0u8; 2048];
    for (i, pkt) in packets.iter().take(acked).enumerate() {
        if hole.is_some_and(|k| i % k == k - 1) {
            continue;
        }
        p.server.handle(later, p.ca, pkt);
        while p.server.connection_mut(p.sh).unwrap().read(&mut sink) > 0 {}
        while let Some(t) = p.server.poll_transmit(later, &mut ack) {
            acks.push(ack[..t.transmit().len].to_vec());
        }
    }
    Flight {
        now: later,
        client: p.client,
        sa: p.sa,
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
