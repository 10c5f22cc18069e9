//! EAL init failures are clear errors, and DPDK's one-init-per-process rule is enforced.
//! (Its own process: this binary's EAL never comes up.)

mod common;

use dpdk::{Eal, ErrorKind, MemoryMode};

#[test]
fn bad_vdev_then_second_init_are_errors_not_ub() {
    assert!(common::have_root());
    // Impossible hugepage request: refused before touching DPDK, with a hint.
    let e = Eal::builder()
        .memory(MemoryMode::Hugepages)
        .memory_mb(10_000_000)
        .init()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Exhausted);
    assert!(e.to_string().contains("--no-huge"), "{e}");

    // A vdev whose driver does not exist makes rte_eal_init fail.
    let e = Eal::builder()
        .no_pci(true)
        .lcores("0")
        .log_level("emerg")
        .vdev("net_nosuchdriver0,foo=bar")
        .init()
        .unwrap_err();
    assert!(e.to_string().contains("rte_eal_init"), "{e}");
    assert!(
        e.to_string().contains("net_nosuchdriver0"),
        "names the args: {e}"
    );
    assert!(!Eal::is_running());

    // DPDK forbids another rte_eal_init in this process: an Err, never UB.
    let e = Eal::builder().no_pci(true).init().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::EalAlreadyInitialized);
}

#[test]
fn builder_args_are_what_testpmd_users_expect() {
    let args = Eal::builder()
        .program("x")
        .lcores("0,1")
        .main_lcore(1)
        .vdev("net_null0")
        .no_pci(true)
        .memory(MemoryMode::NoHuge)
        .memory_mb(128)
        .file_prefix("p1")
        .log_level("debug")
        .extra_args(["--huge-unlink"])
        .args();
    assert_eq!(
        args,
        [
            "x",
            "-l",
            "0,1",
            "--main-lcore=1",
            "--vdev=net_null0",
            "--no-pci",
            "--no-huge",
            "-m",
            "128",
            "--file-prefix=p1",
            "--log-level=debug",
            "--huge-unlink"
        ]
    );
    let a = Eal::builder().memory(MemoryMode::Hugepages).args();
    assert!(a.contains(&"--in-memory".to_string()));
    assert!(!a.contains(&"--no-huge".to_string()));
    // Default prefixes are unique per builder use.
    let p1 = Eal::builder()
        .args()
        .into_iter()
        .find(|a| a.starts_with("--file-prefix"));
    let p2 = Eal::builder()
        .args()
        .into_iter()
        .find(|a| a.starts_with("--file-prefix"));
    assert_ne!(p1, p2);
}
