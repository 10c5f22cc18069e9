//! What one datagram that repairs a hole costs the receiver when the stream has
//! 1,000, 4,000 or 20,000 holes (at 1 Gbit/s × 200 ms a burst of queue drops
//! leaves thousands): the received-range set and the storage must not move every
//! range per repair. Every other packet of a flight arrives, then the missing
//! ones, oldest first, as a sender's retransmissions would; the time measured is
//! the receiver's `Endpoint::handle` of those repairs only. No I/O. The last case
//! is the worst one the limit on ranges allows: repairs in the middle of 65,536.
//! Run: `cargo bench -p pmdt-proto --bench reassembly_cost`.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "support/flight.rs"]
mod support;

/// Time the receiver spends on `count` repairs, starting at the hole made by
/// datagram `from` (even), over `iters` fresh flights of `2 * holes` datagrams
/// of which every odd one arrived first. With every hole repaired, every byte
/// must have arrived.
fn time_repairs(iters: u64, holes: usize, from: usize, count: usize) -> Duration {
    let mut spent = Duration::ZERO;
    for _ in 0..iters {
        let mut p = support::connected(2 * holes);
        let packets = p.flight(2 * holes);
        for pkt in packets.iter().skip(1).step_by(2) {
            p.server.handle(p.now, p.ca, pkt);
        }
        let t0 = Instant::now();
        for pkt in packets[from..].iter().step_by(2).take(count) {
            p.server.handle(p.now, p.ca, pkt);
        }
        spent += t0.elapsed();
        if from == 0 && count >= holes {
            let readable = p.server.connection(p.sh).unwrap().readable();
            assert_eq!(
                readable,
                2 * holes as u64 * (1472 - pmdt_proto::wire::DATA_HEADER_LEN as u64),
                "every byte arrived"
            );
        }
    }
    spent
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("reassembly_cost");
    for holes in [1_000usize, 4_000, 20_000] {
        // The throughput line reads repairs per second.
        g.throughput(Throughput::Elements(holes as u64));
        g.bench_function(format!("repair_{holes}_holes"), |bch| {
            bch.iter_custom(|iters| time_repairs(iters, holes, 0, holes))
        });
    }
    // The worst case the range limit allows: 65,536 holes, repaired in the middle
    // of the set, where a repair moves half of it (a peer that fills holes in
    // that order on purpose).
    const HOLES: usize = 65_536;
    const REPAIRS: usize = 2_000;
    g.throughput(Throughput::Elements(REPAIRS as u64));
    g.bench_function("repair_middle_of_65536_holes", |bch| {
        bch.iter_custom(|iters| time_repairs(iters, HOLES, HOLES, REPAIRS))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
