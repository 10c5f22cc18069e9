//! What the tools print on stderr: one line per event, prefixed with the tool's
//! name; DPDK's own log (EAL, drivers, telemetry) only with -v, except its errors
//! (DPDK tests: root).

mod common;

use std::process::Command;

use common::*;

/// Runs pmdt-wanem for a moment between two memif servers with `flags`; returns
/// its stderr.
fn wanem_stderr(flags: &[&str]) -> String {
    let d = tmp(&format!("logging{}", flags.len()));
    let a = format!(
        "net_memif0,role=server,socket={}",
        d.join("a.sock").display()
    );
    let b = format!(
        "net_memif1,role=server,socket={}",
        d.join("b.sock").display()
    );
    let out = Command::new(WANEM)
        .args(flags)
        .args(["--duration", "0.2", "--vdev", &a, "--vdev", &b])
        .env_remove("RUST_LOG")
        .output()
        .expect("run pmdt-wanem");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

/// Whether a stderr line comes from DPDK's own log.
fn is_dpdk_line(line: &str) -> bool {
    ["EAL:", "TELEMETRY:", "rte_", "memif"]
        .iter()
        .any(|m| line.contains(m) && !line.contains("net_memif0 <-> net_memif1"))
}

#[test]
fn dpdk_log_lines_show_only_with_v() {
    let _g = serial();
    let quiet = wanem_stderr(&[]);
    assert!(!quiet.is_empty());
    for line in quiet.lines() {
        assert!(
            line.starts_with("pmdt-wanem: "),
            "one prefixed line per event: {line:?}"
        );
        assert!(!is_dpdk_line(line), "DPDK chatter without -v: {quiet}");
    }
    for flags in [&["-v"][..], &["-vv"]] {
        let verbose = wanem_stderr(flags);
        assert!(
            verbose.lines().any(|l| l.contains("EAL: Detected")),
            "{flags:?} shows the EAL's start-up lines: {verbose}"
        );
        for line in verbose.lines() {
            assert!(line.starts_with("pmdt-wanem: "), "{line:?}");
        }
    }
}

#[test]
fn dpdk_errors_show_without_v() {
    let _g = serial();
    let d = tmp("logging-bad-vdev");
    // A misspelt memif role: only DPDK's own error line says what is wrong.
    let vdev = format!(
        "net_memif0,role=sever,socket={}",
        d.join("a.sock").display()
    );
    let out = Command::new(RECV)
        .args(["--vdev", &vdev])
        .env_remove("RUST_LOG")
        .output()
        .expect("run pmdt-recv");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("pmdt-recv: error: ") && l.contains("Unknown role: sever")),
        "DPDK's error line: {err}"
    );
    assert!(!err.contains("EAL: Detected"), "no EAL chatter: {err}");
}
