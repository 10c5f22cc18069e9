//! Packet memory on the data path, per packet: wrapping a heap block or an mbuf in
//! a `pmdt::link::Buffer`, sharing it (a storage keeping a reference), reading its
//! bytes, dropping it, and the application's copy into a pool's buffer. These are
//! the operations the runtime does per datagram on top of the memory itself, so the
//! cost of the `Buffer` abstraction shows here. The last case copies with the
//! UDP checksum's payload sum, as a writer does once a link sums in software.
//! Run: `cargo bench --bench buffer_path` (root, for the mbuf cases).

mod support;

use std::collections::VecDeque;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pmdt::link::{Buffer, BufferPool, BufferStash, HeapPool};

const BURST: usize = 32;

/// This thread's CPU time: other processes on a busy machine preempt the bench,
/// which wall time would count (the figures are CPU time per iteration).
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer for clock_gettime.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `f` `iters` times and returns the CPU time it took.
fn cpu_time<R>(iters: u64, mut f: impl FnMut() -> R) -> Duration {
    let start = thread_cpu_time();
    for _ in 0..iters {
        black_box(f());
    }
    thread_cpu_time() - start
}

fn heap_buffer(pool: &HeapPool, len: usize) -> Buffer {
    let mut b = pool.take().expect("a free block");
    b.set_len(len);
    Buffer::new(b.freeze())
}

fn mbuf_buffer(pool: &dpdk::Mempool, data: &[u8]) -> Buffer {
    let mut m = pool.alloc().expect("a free mbuf");
    m.extend_from_slice(data).expect("room");
    Buffer::new(m)
}

/// What a receive storage does with a datagram: keep a share, read it, drop both.
fn keep_read_drop(b: Buffer) -> usize {
    let kept = b.share();
    drop(b);
    let n = kept.bytes().len() + kept.bytes()[0] as usize;
    drop(kept);
    n
}

fn bench(c: &mut Criterion) {
    let data = [7u8; 1400];
    let heap = HeapPool::new(4096, 2048);
    heap.prefill();
    let mut g = c.benchmark_group("buffer");
    g.throughput(Throughput::Elements(BURST as u64));

    g.bench_function("heap_wrap_share_read_drop_32", |b| {
        b.iter_custom(|n| {
            cpu_time(n, || {
                for _ in 0..BURST {
                    black_box(keep_read_drop(heap_buffer(&heap, 1400)));
                }
            })
        })
    });
    g.bench_function("heap_share_read_drop_32", |b| {
        let bufs: Vec<Buffer> = (0..BURST).map(|_| heap_buffer(&heap, 1400)).collect();
        b.iter_custom(|n| {
            cpu_time(n, || {
                for x in &bufs {
                    black_box(keep_read_drop(x.share()));
                }
            })
        })
    });
    g.bench_function("send_queue_walk_32", |b| {
        // ChunkSend's shape: (offset, buffer) pairs, lengths read to find a chunk.
        let q: VecDeque<(u64, Buffer)> = (0..BURST)
            .map(|i| (i as u64 * 1400, heap_buffer(&heap, 1400)))
            .collect();
        b.iter_custom(|n| {
            cpu_time(n, || {
                let mut sum = 0usize;
                for (o, x) in &q {
                    sum += *o as usize + x.bytes().len();
                }
                black_box(sum)
            })
        })
    });
    let heap_pool = BufferPool::new(heap.clone());
    g.bench_function("heap_pool_copy_from_1400B_32", |b| {
        let mut stash = BufferStash::default();
        b.iter_custom(|n| {
            cpu_time(n, || {
                for _ in 0..BURST {
                    black_box(heap_pool.copy_from_stashed(&data, 1400, 0, &mut stash));
                }
            })
        })
    });

    let eal = support::eal(&["net_null0"]);
    let mempool = support::pool(&eal, 8191);
    g.bench_function("mbuf_wrap_share_read_drop_32", |b| {
        b.iter_custom(|n| {
            cpu_time(n, || {
                for _ in 0..BURST {
                    black_box(keep_read_drop(mbuf_buffer(&mempool, &data[..64])));
                }
            })
        })
    });
    g.bench_function("mbuf_share_read_drop_32", |b| {
        let bufs: Vec<Buffer> = (0..BURST)
            .map(|_| mbuf_buffer(&mempool, &data[..64]))
            .collect();
        b.iter_custom(|n| {
            cpu_time(n, || {
                for x in &bufs {
                    black_box(keep_read_drop(x.share()));
                }
            })
        })
    });
    let mbuf_pool = BufferPool::from_arc(mempool.clone());
    g.bench_function("mempool_copy_from_stashed_1400B_32", |b| {
        let mut stash = BufferStash::default();
        b.iter_custom(|n| {
            cpu_time(n, || {
                for _ in 0..BURST {
                    black_box(mbuf_pool.copy_from_stashed(&data, 1400, 0, &mut stash));
                }
            })
        })
    });
    g.bench_function("mempool_write_ring_take_1400B_32", |b| {
        // The application's write as the runtime does it: copy into a stashed
        // mbuf, count its bytes, push it into the SPSC ring; the I/O side takes
        // them out into a send queue, reads their lengths, and drops them.
        let mut stash = BufferStash::default();
        let (mut tx, mut rx) = rtrb::RingBuffer::<Buffer>::new(BURST);
        let mut queue = VecDeque::with_capacity(BURST);
        b.iter_custom(|n| {
            cpu_time(n, || {
                let mut bytes = 0;
                for _ in 0..BURST {
                    let Some(x) = mbuf_pool.copy_from_stashed(&data, 1400, 0, &mut stash) else {
                        break;
                    };
                    bytes += x.bytes().len();
                    if tx.push(x).is_err() {
                        break;
                    }
                }
                while let Ok(x) = rx.pop() {
                    queue.push_back(x);
                }
                for x in &queue {
                    bytes += x.bytes().len();
                }
                queue.clear();
                bytes
            })
        })
    });
    // A link that sums UDP checksums in software (net_null offloads nothing):
    // from here on, writers sum each payload they copy into an mbuf (fused
    // into the copy, `payload_sum::copy_and_sum`).
    let link = pmdt::link::dpdk_port::DpdkLink::open(
        &eal,
        &pmdt::link::dpdk_port::DpdkLinkConfig {
            port: "net_null0".into(),
            pool_size: 2047,
            rx_desc: 256,
            tx_desc: 256,
            ..Default::default()
        },
    )
    .expect("a net_null link");
    g.bench_function("mempool_copy_from_stashed_summed_1400B_32", |b| {
        let mut stash = BufferStash::default();
        b.iter_custom(|n| {
            cpu_time(n, || {
                for _ in 0..BURST {
                    black_box(mbuf_pool.copy_from_stashed(&data, 1400, 0, &mut stash));
                }
            })
        })
    });
    drop(link);
    g.finish();
    drop(mbuf_pool);
    assert_eq!(mempool.in_use(), 0, "every mbuf went back");
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
