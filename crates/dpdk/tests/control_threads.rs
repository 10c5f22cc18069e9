//! The EAL's control threads stay off the worker lcores' CPUs (its own process:
//! the tools' lcore layout, not the other tests').

mod common;

use dpdk::Eal;

/// The tools' default layout: the main lcore free to run on every CPU, the I/O
/// worker pinned to CPU 0. DPDK alone would let the interrupt thread run on CPU 0
/// too (the main lcore's CPUs); after init it runs only on the others.
#[test]
fn control_threads_stay_off_the_worker_lcore_cpu() {
    assert!(common::have_root());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let eal = Eal::builder()
        .program("dpdk-control-threads-test")
        .extra_args(["--lcores".to_string(), format!("0@(0-{}),1@0", cpus - 1)])
        .no_pci(true)
        .memory_mb(256)
        .log_level("warning")
        .init()
        .unwrap();
    let threads = eal.control_thread_cpus();
    let intr = threads
        .iter()
        .find(|(name, _)| name == "eal-intr-thread")
        .unwrap_or_else(|| panic!("no interrupt thread among {threads:?}"));
    assert!(!intr.1.is_empty(), "{threads:?}");
    if cpus > 1 {
        for (name, set) in &threads {
            assert!(
                !set.contains(&0),
                "{name} may run on the worker's CPU: {set:?}"
            );
        }
        assert_eq!(intr.1, (1..cpus).collect::<Vec<_>>(), "the other CPUs");
    } else {
        assert_eq!(intr.1, vec![0], "one CPU: nowhere else to go");
    }
}
