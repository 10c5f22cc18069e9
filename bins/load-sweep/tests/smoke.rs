//! The harness runs end to end on real DPDK (memif) and writes well-formed results.
//! Short steps: this checks the tool, not the figures (those come from full runs).

use std::process::Command;
use std::sync::Mutex;

/// The runs pin busy-polling lcores to both cores: two at once would starve each other.
static DPDK_RUN: Mutex<()> = Mutex::new(());

/// Runs a short sweep with `args` (plus short steps) into a fresh directory, asserts
/// success, and returns the directory and its sweep.json.
fn short_sweep(name: &str, args: &[&str]) -> (std::path::PathBuf, serde_json::Value) {
    let dir = std::env::temp_dir().join(format!("pmdt-load-sweep-{name}-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_pmdt-load-sweep"))
        .args([
            "--warmup",
            "0.1",
            "--measure",
            "0.15",
            "--heavy-work-cycles",
            "150000",
        ])
        .args(args)
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("run pmdt-load-sweep");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap())
        .expect("sweep.json parses");
    (dir, json)
}

#[test]
fn sweep_runs_and_writes_csv_json_markdown_and_png() {
    let _one_at_a_time = DPDK_RUN.lock().unwrap_or_else(|e| e.into_inner());
    // 100,000 cycles per packet: the worker saturates at some 10-30 kpps, far below
    // what even this debug build's generator offers on a busy machine, so the
    // capacity search finds the worker, not the generator.
    let (dir, json) = short_sweep("smoke", &["--work-cycles", "100000"]);
    assert_eq!(
        json["rows"].as_array().unwrap().len(),
        22,
        "5% to 110% in 5% steps"
    );
    assert_eq!(
        json["accuracy"].as_array().unwrap().len(),
        4,
        "three thesis methods and ours"
    );
    assert!(json["capacity_pps"].as_f64().unwrap() > 0.0);
    assert!(json["capacity_end_pps"].as_f64().unwrap() > 0.0);
    assert_eq!(json["accuracy_vs_drift"].as_array().unwrap().len(), 4);
    assert!(json["rows"][0]["theoretical_drift"].as_f64().unwrap() > 0.0);
    assert!(json["rows"][0]["capacity_local_pps"].as_f64().unwrap() > 0.0);
    assert_eq!(json["accuracy_vs_local"].as_array().unwrap().len(), 4);
    let md = std::fs::read_to_string(dir.join("sweep.md")).unwrap();
    assert!(md.contains("| theoretical load |"));
    let png = std::fs::read(dir.join("sweep.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let csv = std::fs::read_to_string(dir.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 23, "header + 22 rows");
    for column in [
        "ours_burst_cycles",
        "ours_packet_cycles",
        "ours_kappa",
        "ours_stolen_fraction",
    ] {
        assert!(csv.lines().next().unwrap().contains(column), "{column}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_runs_over_net_ring_with_per_burst_work() {
    let _one_at_a_time = DPDK_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, json) = short_sweep(
        "ring",
        &[
            "--port",
            "ring",
            "--work-cycles",
            "100000",
            "--burst-work-cycles",
            "20000",
            "--drop-threshold",
            "0.02",
        ],
    );
    assert_eq!(json["settings"]["port"], "ring");
    assert_eq!(json["settings"]["burst_work_cycles"], 20000);
    assert_eq!(json["rows"].as_array().unwrap().len(), 22);
    assert!(json["capacity_pps"].as_f64().unwrap() > 0.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_arguments_are_clear_errors() {
    let out = Command::new(env!("CARGO_BIN_EXE_pmdt-load-sweep"))
        .args(["--frame-size", "10"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--frame-size must be 64..=1514"));
    let out = Command::new(env!("CARGO_BIN_EXE_pmdt-load-sweep"))
        .args(["--arrivals", "sometimes"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value"));
    let out = Command::new(env!("CARGO_BIN_EXE_pmdt-load-sweep"))
        .args(["--gen-burst", "65"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--gen-burst must be 1..=64"));
    let out = Command::new(env!("CARGO_BIN_EXE_pmdt-load-sweep"))
        .args(["--drop-threshold", "0.9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--drop-threshold must be"));
    let out = Command::new(env!("CARGO_BIN_EXE_pmdt-load-sweep"))
        .args(["--port", "pcie"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap rejects an unknown port kind"
    );
}

#[test]
fn an_error_after_the_worker_started_stops_it_and_exits() {
    let _one_at_a_time = DPDK_RUN.lock().unwrap_or_else(|e| e.into_inner());
    // ~80 ms of work per packet: the worker drops at every probed rate, so the
    // capacity search fails while the worker lcore is running. The process must
    // stop the worker and exit with the error (it used to wait for it forever).
    let out = Command::new(env!("CARGO_BIN_EXE_pmdt-load-sweep"))
        .args([
            "--warmup",
            "0.1",
            "--measure",
            "0.15",
            "--work-cycles",
            "200000000",
            "--gen-burst",
            "1",
        ])
        .arg("--out")
        .arg(std::env::temp_dir().join("pmdt-load-sweep-never"))
        .output()
        .expect("run pmdt-load-sweep");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("the worker fell behind (dropped or queued packets) even at"),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
