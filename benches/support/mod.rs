//! Bench setup shared by the criterion benches: each bench binary is its own process
//! with its own EAL (DPDK allows one init per process).

#![allow(dead_code)]

use std::process::Command;
use std::sync::Arc;

use dpdk::{Eal, Mempool, MempoolConfig};

/// Why a bench needing DPDK and TAP devices cannot run here, if it cannot (so a
/// plain `cargo bench` skips it with the reason and runs the others to the end).
pub fn skip_reason(needs_tap: bool) -> Option<String> {
    let euid = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(String::from))
        })
        .unwrap_or_default();
    if euid != "0" {
        return Some(
            "not root: DPDK needs hugepages and devices (run `sudo make setup`, then \
             `sudo cargo bench`)"
                .into(),
        );
    }
    if needs_tap && !std::path::Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun: TAP devices are not available here".into());
    }
    None
}

/// Starts the EAL on lcores 0 (main, the measuring thread) and 1 (worker). When
/// DPDK cannot start here the bench says why and exits successfully, so `cargo
/// bench` goes on with the others.
pub fn eal(vdevs: &[&str]) -> Eal {
    if let Some(why) = skip_reason(vdevs.iter().any(|v| v.starts_with("net_tap"))) {
        eprintln!("skipped: {why}");
        std::process::exit(0);
    }
    let mut b = Eal::builder()
        .program("pmdt-bench")
        .lcores("0,1")
        .main_lcore(0)
        .no_pci(true)
        .memory_mb(512)
        .log_level("warning");
    for v in vdevs {
        b = b.vdev(*v);
    }
    b.init().unwrap_or_else(|e| {
        eprintln!(
            "skipped: cannot start DPDK for the benchmark: {e} (run as root after `make setup`)"
        );
        std::process::exit(0)
    })
}

/// A pktmbuf pool with a per-lcore cache (as a real application would use).
pub fn pool(eal: &Eal, size: u32) -> Arc<Mempool> {
    Arc::new(
        Mempool::new(
            eal,
            &MempoolConfig {
                size,
                cache_size: 256,
                ..Default::default()
            },
        )
        .expect("mempool"),
    )
}

/// Runs `ip` and ignores failures (cleanup of leftovers).
pub fn ip_quiet(args: &[&str]) {
    let _ = Command::new("ip").args(args).output();
}

/// Runs `ip`, panicking with the command on failure.
pub fn ip(args: &[&str]) {
    let st = Command::new("ip").args(args).status().expect("run ip");
    assert!(st.success(), "ip {args:?} failed");
}

/// A broadcast frame with a local experimental ethertype, `len` bytes long.
pub fn frame(len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len.max(60)];
    f[0..6].copy_from_slice(&[0xff; 6]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x02]);
    f[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
    f
}
