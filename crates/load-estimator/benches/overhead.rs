//! Hot-path cost of the estimator: an empty poll loop with and without `on_poll`
//! (plus the TSC read it needs). Run: `cargo bench -p load-estimator --bench overhead`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use load_estimator::{EstimatorConfig, LoadEstimator};

#[inline]
fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        std::time::Instant::now().elapsed().as_nanos() as u64
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("poll_iteration");
    // A stand-in for an empty rx_burst: returns 0 packets, opaque to the optimizer.
    let poll = || black_box(0u32);
    g.bench_function("empty_loop", |b| b.iter(|| black_box(poll())));
    g.bench_function("empty_loop_with_tsc_read", |b| {
        b.iter(|| {
            let t = tsc();
            black_box((t, poll()))
        })
    });
    let mut est = LoadEstimator::new(EstimatorConfig::new(2_000_000_000, 32));
    g.bench_function("empty_loop_with_estimator", |b| {
        b.iter(|| {
            let n = poll();
            est.on_poll(tsc(), n);
        })
    });
    let mut est = LoadEstimator::new(EstimatorConfig::new(2_000_000_000, 32));
    let mut i = 0u32;
    g.bench_function("busy_loop_with_estimator", |b| {
        b.iter(|| {
            i = i.wrapping_add(7);
            est.on_poll(tsc(), black_box(i % 33));
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
