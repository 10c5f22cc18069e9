//! Shared test support: one EAL per test binary (DPDK allows one init per process).

#![allow(dead_code)]

use std::sync::{mpsc, Arc, Mutex, OnceLock};

use dpdk::{Eal, Mempool, MempoolConfig};

/// Whether we can run real DPDK here (root is needed for hugepages/TAP).
pub fn have_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Work for the EAL's main-lcore thread.
type MainJob = Box<dyn FnOnce() + Send>;

/// The thread that initialized the EAL (the main lcore): it lives as long as the
/// process and runs what only the main lcore may do (launching work on lcores).
static MAIN: OnceLock<(Eal, Mutex<mpsc::Sender<MainJob>>)> = OnceLock::new();

/// The process's EAL, initialized on first use with `vdevs` on a dedicated thread
/// that stays the main lcore (test threads come and go). Every test in one binary
/// must ask for the same vdevs.
pub fn eal(vdevs: &[&str]) -> Eal {
    assert!(
        have_root(),
        "DPDK tests need root (run `make test` as root)"
    );
    MAIN.get_or_init(|| {
        let mut b = Eal::builder()
            .program("dpdk-test")
            .lcores("0,1")
            .main_lcore(0)
            .no_pci(true)
            .memory_mb(512)
            .log_level("warning");
        for v in vdevs {
            b = b.vdev(*v);
        }
        let (jobs_tx, jobs_rx) = mpsc::channel::<MainJob>();
        let (eal_tx, eal_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("eal-main".into())
            .spawn(move || {
                eal_tx.send(b.init().expect("EAL init")).unwrap();
                for job in jobs_rx {
                    job();
                }
            })
            .expect("spawn the EAL main thread");
        (eal_rx.recv().expect("EAL init result"), Mutex::new(jobs_tx))
    })
    .0
    .clone()
}

/// Runs `f` on the main lcore's thread and returns its result (a panic in `f`
/// panics here).
pub fn on_main<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let jobs = MAIN
        .get()
        .expect("call eal() first")
        .1
        .lock()
        .unwrap()
        .clone();
    let (tx, rx) = mpsc::channel();
    jobs.send(Box::new(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    }))
    .expect("EAL main thread alive");
    match rx.recv().expect("EAL main thread answered") {
        Ok(r) => r,
        // The panic's own report went to the output of the test that started
        // the main-lcore thread (libtest captures per thread, and threads
        // inherit their spawner's capture): repeat its text in this test's.
        Err(p) => {
            let text = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("(a panic without a message)");
            panic!("on the main lcore: {text}")
        }
    }
}

/// A small pool with no per-lcore cache, so `available()` is exact.
pub fn pool(eal: &Eal, size: u32) -> Arc<Mempool> {
    Arc::new(
        Mempool::new(
            eal,
            &MempoolConfig {
                size,
                cache_size: 0,
                ..Default::default()
            },
        )
        .expect("mempool"),
    )
}

/// A test frame: broadcast Ethernet, a private ethertype, a marker and a sequence number.
pub fn frame(seq: u32, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len.max(64)];
    f[0..6].copy_from_slice(&[0xff; 6]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
    f[12..14].copy_from_slice(&0x88b5u16.to_be_bytes()); // IEEE local experimental
    f[14..18].copy_from_slice(b"PMDT");
    f[18..22].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in f[22..].iter_mut().enumerate() {
        *b = (i as u8) ^ (seq as u8);
    }
    f
}

/// The sequence number of a test frame, or None for other traffic (kernel IPv6 etc.).
pub fn frame_seq(data: &[u8]) -> Option<u32> {
    (data.len() >= 22 && data[12..14] == [0x88, 0xb5] && &data[14..18] == b"PMDT")
        .then(|| u32::from_be_bytes(data[18..22].try_into().unwrap()))
}
