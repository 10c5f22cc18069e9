//! The end of the EAL (its own process: the EAL is cleaned up here). Issue 11 item
//! 27: the last handle dropped inside a launched job must not run rte_eal_cleanup
//! on the worker lcore (it waits for every worker, itself included: a deadlock).

mod common;

use std::sync::mpsc;
use std::time::Duration;

use dpdk::{lcore, Eal};

#[test]
fn last_handle_dropped_in_a_job_cleans_up_on_the_main_lcore() {
    assert!(common::have_root());
    // This thread initializes the EAL, so it is the main lcore.
    let eal = Eal::builder()
        .program("dpdk-teardown-test")
        .lcores("0,1")
        .main_lcore(0)
        .no_pci(true)
        .memory_mb(256)
        .log_level("warning")
        .init()
        .unwrap();
    let pool = common::pool(&eal, 63);
    drop(pool.alloc().unwrap());
    let in_job = eal.clone();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let h = lcore::launch(&eal, 1, move || {
        // Wait until the main lcore let go of its handles, then drop ours here.
        go_rx.recv().unwrap();
        assert_eq!(pool.in_use(), 0, "the pool is full");
        drop(pool);
        drop(in_job);
        lcore::current()
    })
    .unwrap();
    drop(eal);
    // A deadlocked worker would hang join forever: turn that into a failure.
    let (done_tx, done_rx) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if done_rx.recv_timeout(Duration::from_secs(300)).is_err() {
            eprintln!("join never returned: rte_eal_cleanup ran on the worker lcore");
            std::process::abort();
        }
    });
    go_tx.send(()).unwrap();
    assert_eq!(h.join().unwrap(), Some(1));
    done_tx.send(()).unwrap();
    assert!(
        !Eal::is_running(),
        "the EAL was cleaned up, on the main lcore"
    );
}
