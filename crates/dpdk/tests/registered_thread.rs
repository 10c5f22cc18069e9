//! Threads the EAL did not start, registered with it (`rte_thread_register`): they
//! get an lcore id and so mempool caches, and give both back (caches flushed) when
//! they exit or ask; the EAL's own threads keep theirs.

mod common;

use std::sync::{mpsc, Arc};

use common::{eal, on_main};
use dpdk::{
    flush_registered_thread_caches, lcore, register_current_thread, ErrorKind, Mbuf, Mempool,
    MempoolConfig, RegisteredThread,
};

const VDEVS: &[&str] = &[];
const SIZE: u32 = 1023;

/// A pool whose per-lcore caches hold up to 96 mbufs each.
fn cached_pool(eal: &dpdk::Eal) -> Arc<Mempool> {
    Arc::new(
        Mempool::new(
            eal,
            &MempoolConfig {
                size: SIZE,
                cache_size: 64,
                ..Default::default()
            },
        )
        .expect("mempool"),
    )
}

/// Allocates every mbuf the pool's shared ring can give to a thread without a
/// cache (the test thread), then frees them.
fn allocatable_without_cache(pool: &Mempool) -> usize {
    assert_eq!(lcore::current(), None, "the test thread has no lcore id");
    let mut held: Vec<Mbuf> = Vec::new();
    while let Ok(m) = pool.alloc() {
        held.push(m);
    }
    held.len()
}

/// A registered thread's frees stay in its cache (another thread cannot allocate
/// them) until it flushes or exits; then every mbuf is allocatable again.
#[test]
fn a_registered_thread_caches_mbufs_and_gives_them_back() {
    let eal = eal(VDEVS);
    let pool = cached_pool(&eal);
    let (to_worker, worker_rx) = mpsc::channel::<&'static str>();
    let (to_test, test_rx) = mpsc::channel::<Option<u32>>();
    let worker = {
        let (eal, pool) = (eal.clone(), pool.clone());
        std::thread::spawn(move || {
            let id = register_current_thread(&eal);
            // Frees go into this thread's cache.
            let held: Vec<Mbuf> = (0..200).map(|_| pool.alloc().unwrap()).collect();
            drop(held);
            to_test.send(id).unwrap();
            assert_eq!(worker_rx.recv().unwrap(), "flush");
            flush_registered_thread_caches();
            to_test.send(id).unwrap();
            // Cache again (once the test has counted), then exit without
            // flushing: the registration's drop does.
            assert_eq!(worker_rx.recv().unwrap(), "again");
            let held: Vec<Mbuf> = (0..200).map(|_| pool.alloc().unwrap()).collect();
            drop(held);
            to_test.send(id).unwrap();
            assert_eq!(worker_rx.recv().unwrap(), "exit");
        })
    };
    let id = test_rx.recv().unwrap().expect("the thread got an lcore id");
    assert_ne!(id, lcore::main_id());
    assert_eq!(pool.available(), SIZE, "cached mbufs count as available");
    let cached = SIZE as usize - allocatable_without_cache(&pool);
    assert!(
        (1..=96).contains(&cached),
        "the registered thread's cache holds some of what it freed: {cached}"
    );
    to_worker.send("flush").unwrap();
    test_rx.recv().unwrap();
    assert_eq!(allocatable_without_cache(&pool), SIZE as usize);
    to_worker.send("again").unwrap();
    test_rx.recv().unwrap();
    assert!(allocatable_without_cache(&pool) < SIZE as usize);
    to_worker.send("exit").unwrap();
    worker.join().unwrap();
    assert_eq!(allocatable_without_cache(&pool), SIZE as usize);
    assert_eq!(pool.in_use(), 0);
}

/// Threads that exit give their lcore id back: far more threads than lcore ids
/// (RTE_MAX_LCORE) register one after the other, each getting one.
#[test]
fn lcore_ids_are_given_back_when_threads_exit() {
    let eal = eal(VDEVS);
    for _ in 0..2 * dpdk::sys::RTE_MAX_LCORE {
        let eal = eal.clone();
        let id = std::thread::spawn(move || {
            let id = register_current_thread(&eal);
            // Registered once: later calls return the same id.
            assert_eq!(register_current_thread(&eal), id);
            assert!(!lcore::on_worker(), "a registered thread is not a worker");
            id
        })
        .join()
        .unwrap();
        assert!(id.is_some());
    }
}

/// A thread that has an lcore id cannot register again; the main lcore keeps its
/// own id.
#[test]
fn a_thread_with_an_lcore_id_is_not_registered_again() {
    let eal = eal(VDEVS);
    let e = eal.clone();
    std::thread::spawn(move || {
        let g = RegisteredThread::new(&e).unwrap();
        let again = RegisteredThread::new(&e).unwrap_err();
        assert_eq!(again.kind(), ErrorKind::InvalidArgument);
        assert_eq!(lcore::current(), Some(g.lcore()));
        drop(g);
        assert_eq!(lcore::current(), None, "the id is given back on drop");
    })
    .join()
    .unwrap();
    let e = eal.clone();
    let (main_id, refused) = on_main(move || {
        (
            register_current_thread(&e),
            RegisteredThread::new(&e).map(|_| ()),
        )
    });
    assert_eq!(main_id, Some(lcore::main_id()));
    assert_eq!(refused.unwrap_err().kind(), ErrorKind::InvalidArgument);
}
