//! `pmdt-sweep` (the README's reliability-sweep command) runs a few seeds and
//! writes its report.

use std::process::Command;

#[test]
fn pmdt_sweep_runs_seeds_and_writes_its_report() {
    let dir = std::env::temp_dir().join(format!("pmdt-sweep-test-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_pmdt-sweep"))
        .args(["--seeds", "20", "--jobs", "2", "--out"])
        .arg(&dir)
        .output()
        .expect("run pmdt-sweep");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("20 seeds from 0: 20 passed, 0 failed"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(dir.join("RESULTS.md")).unwrap();
    assert!(md.contains("**20 passed, 0 failed**"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(json["passed"], 20);
    // One seed, verbosely: its case and outcome.
    let one = Command::new(env!("CARGO_BIN_EXE_pmdt-sweep"))
        .args(["--from", "183", "--seeds", "1", "--verbose"])
        .output()
        .expect("run pmdt-sweep");
    let stdout = String::from_utf8_lossy(&one.stdout);
    assert!(
        one.status.success() && stdout.contains("seed 183: Burst Fixed 8 flows"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
