//! Mbuf allocation and free: one at a time, and in bursts of 32 (the rx/tx unit).
//! Run: `cargo bench --bench mbuf_alloc` (root).

mod support;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dpdk::MbufBatch;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let eal = support::eal(&[]);
    let pool = support::pool(&eal, 8191);
    let mut g = c.benchmark_group("mbuf");
    g.throughput(Throughput::Elements(1));
    g.bench_function("alloc_free_single", |b| {
        b.iter(|| black_box(pool.alloc().unwrap()))
    });
    g.throughput(Throughput::Elements(32));
    g.bench_function("alloc_bulk_free_bulk_32", |b| {
        let mut batch = MbufBatch::<32>::new();
        b.iter(|| {
            pool.alloc_bulk(&mut batch, 32).unwrap();
            black_box(&batch);
            batch.clear();
        })
    });
    g.bench_function("alloc_append_64B_free_32", |b| {
        let mut batch = MbufBatch::<32>::new();
        let f = support::frame(64);
        b.iter(|| {
            pool.alloc_bulk(&mut batch, 32).unwrap();
            for m in batch.as_mut_slice() {
                m.extend_from_slice(&f).unwrap();
            }
            batch.clear();
        })
    });
    g.finish();
    assert_eq!(pool.in_use(), 0);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
