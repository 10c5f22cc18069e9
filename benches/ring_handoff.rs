//! Passing mbuf pointers between two pinned threads (lcore 0 → lcore 1):
//! rte_ring SP/SC (single and burst of 32), crossbeam ArrayQueue, and rtrb (single and
//! chunk of 32). The pointers are those of real mbufs; only the handoff is measured.
//! Run: `cargo bench --bench ring_handoff` (root).

mod support;

use std::ffi::c_void;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dpdk::{lcore, ring, Eal};

/// An mbuf pointer, as the I/O lcore would pass it (ownership handled elsewhere).
#[derive(Clone, Copy)]
struct MbufPtr(*mut c_void);
// SAFETY: only the pointer value crosses threads in this benchmark.
unsafe impl Send for MbufPtr {}
// SAFETY: shared read-only (a table of pointer values); never dereferenced.
unsafe impl Sync for MbufPtr {}

// What the rte_ring variants carry: the pointer itself, as an Mbuf would travel.
#[derive(Clone, Copy)]
struct Token(MbufPtr);
impl ring::RingItem for Token {
    fn into_ring_ptr(self) -> *mut c_void {
        self.0 .0
    }
    unsafe fn from_ring_ptr(p: *mut c_void) -> Self {
        Token(MbufPtr(p))
    }
}

const CAP: usize = 1024;

fn ptrs(pool: &dpdk::Mempool) -> (Vec<dpdk::Mbuf>, Vec<MbufPtr>) {
    let held: Vec<_> = (0..CAP).map(|_| pool.alloc().unwrap()).collect();
    let p = held
        .iter()
        .map(|m| MbufPtr(m.as_ptr() as *mut c_void))
        .collect();
    (held, p)
}

/// Runs `consumer(n)` on lcore 1 and `producer(n)` here; returns the producer's
/// elapsed time once the consumer has seen all n.
fn run_pair<P, C>(eal: &Eal, n: u64, producer: P, consumer: C) -> Duration
where
    P: FnOnce(u64),
    C: FnOnce(u64) -> u64 + Send + 'static,
{
    let h = lcore::launch(eal, 1, move || consumer(n)).unwrap();
    let t = Instant::now();
    producer(n);
    let sum = h.join().unwrap();
    black_box(sum);
    t.elapsed()
}

fn bench(c: &mut Criterion) {
    let eal = support::eal(&[]);
    let pool = support::pool(&eal, 4095);
    let (_held, ptrs) = ptrs(&pool);
    let ptrs = Arc::new(ptrs);
    let mut g = c.benchmark_group("handoff");
    g.throughput(Throughput::Elements(1));

    g.bench_function("rte_ring_spsc_single", |b| {
        b.iter_custom(|n| {
            let (mut p, mut cons) = ring::spsc::<Token>(&eal, CAP as u32).unwrap();
            let ps = ptrs.clone();
            run_pair(
                &eal,
                n,
                move |n| {
                    for i in 0..n {
                        let mut t = Token(ps[i as usize % CAP]);
                        while let Err(back) = p.push(t) {
                            t = back;
                        }
                    }
                },
                move |n| {
                    let mut s = 0u64;
                    let mut got = 0;
                    while got < n {
                        if let Some(t) = cons.pop() {
                            s = s.wrapping_add(t.0 .0 as u64);
                            got += 1;
                        }
                    }
                    s
                },
            )
        })
    });

    g.bench_function("rte_ring_spsc_burst32", |b| {
        b.iter_custom(|n| {
            let (mut p, mut cons) = ring::spsc::<Token>(&eal, CAP as u32).unwrap();
            let ps = ptrs.clone();
            run_pair(
                &eal,
                n,
                move |n| {
                    let mut i = 0u64;
                    let mut chunk = [Token(MbufPtr(std::ptr::null_mut())); 32];
                    while i < n {
                        let k = 32.min(n - i) as usize;
                        for (j, t) in chunk[..k].iter_mut().enumerate() {
                            *t = Token(ps[(i as usize + j) % CAP]);
                        }
                        let mut done = 0;
                        while done < k {
                            done += p.push_copies(&chunk[done..k]);
                        }
                        i += k as u64;
                    }
                },
                move |n| {
                    let mut s = 0u64;
                    let mut got = 0u64;
                    let mut out = [Token(MbufPtr(std::ptr::null_mut())); 32];
                    while got < n {
                        let k = cons.pop_copies(&mut out);
                        for t in &out[..k] {
                            s = s.wrapping_add(t.0 .0 as u64);
                        }
                        got += k as u64;
                    }
                    s
                },
            )
        })
    });

    g.bench_function("crossbeam_array_queue", |b| {
        b.iter_custom(|n| {
            let q = Arc::new(crossbeam_queue::ArrayQueue::<MbufPtr>::new(CAP));
            let q2 = q.clone();
            let ps = ptrs.clone();
            run_pair(
                &eal,
                n,
                move |n| {
                    for i in 0..n {
                        let mut t = ps[i as usize % CAP];
                        while let Err(back) = q.push(t) {
                            t = back;
                        }
                    }
                },
                move |n| {
                    let mut s = 0u64;
                    let mut got = 0;
                    while got < n {
                        if let Some(t) = q2.pop() {
                            s = s.wrapping_add(t.0 as u64);
                            got += 1;
                        }
                    }
                    s
                },
            )
        })
    });

    g.bench_function("rtrb_single", |b| {
        b.iter_custom(|n| {
            let (mut p, mut cons) = rtrb::RingBuffer::<MbufPtr>::new(CAP);
            let ps = ptrs.clone();
            run_pair(
                &eal,
                n,
                move |n| {
                    for i in 0..n {
                        let mut t = ps[i as usize % CAP];
                        loop {
                            match p.push(t) {
                                Ok(()) => break,
                                Err(rtrb::PushError::Full(back)) => t = back,
                            }
                        }
                    }
                },
                move |n| {
                    let mut s = 0u64;
                    let mut got = 0;
                    while got < n {
                        if let Ok(t) = cons.pop() {
                            s = s.wrapping_add(t.0 as u64);
                            got += 1;
                        }
                    }
                    s
                },
            )
        })
    });

    g.bench_function("rtrb_chunk32", |b| {
        b.iter_custom(|n| {
            let (mut p, mut cons) = rtrb::RingBuffer::<MbufPtr>::new(CAP);
            let ps = ptrs.clone();
            run_pair(
                &eal,
                n,
                move |n| {
                    let mut i = 0u64;
                    while i < n {
                        let k = 32.min(n - i) as usize;
                        if let Ok(chunk) = p.write_chunk_uninit(k) {
                            let base = i as usize;
                            chunk.fill_from_iter((0..k).map(|j| ps[(base + j) % CAP]));
                            i += k as u64;
                        }
                    }
                },
                move |n| {
                    let mut s = 0u64;
                    let mut got = 0u64;
                    while got < n {
                        let k = cons.slots().min(32);
                        if k == 0 {
                            continue;
                        }
                        if let Ok(chunk) = cons.read_chunk(k) {
                            for t in chunk.into_iter() {
                                s = s.wrapping_add(t.0 as u64);
                            }
                            got += k as u64;
                        }
                    }
                    s
                },
            )
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
