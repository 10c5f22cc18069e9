//! `pmdt-send`'s path cache (`--path-cache`, Careful Resume): a transfer saves
//! what it learned about the path to its receiver, and the next transfer to
//! the same receiver over the same path starts from it; a cache file that is
//! not one warns and the transfer starts from cold.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

/// A receiver and a sender through pmdt-wanem over memif (20 ms RTT, 200
/// Mbit/s); the sender's output once both ended.
fn transfer_through_wanem(d: &std::path::Path, send: &[&str]) -> Value {
    let (a, b) = (d.join("a.sock"), d.join("b.sock"));
    let prefix = format!("pc-{}", std::process::id());
    let vdev_a = format!("net_memif0,role=server,socket={}", a.display());
    let vdev_b = format!("net_memif1,role=server,socket={}", b.display());
    let w = spawn(
        WANEM,
        &[
            "--vdev",
            &vdev_a,
            "--vdev",
            &vdev_b,
            "--rate",
            "200mbit",
            "--delay-ms",
            "10",
            "--file-prefix",
            &prefix,
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    let (mb, ma) = (memif("client", &b), memif("client", &a));
    let r = spawn(RECV, &["--vdev", &mb]);
    std::thread::sleep(Duration::from_millis(1500));
    let s = spawn(SEND, &[&["--vdev", &ma, "--json"][..], send].concat());
    let (so, ro) =
        finish_sender_then_receiver(s, Duration::from_secs(60), r, Duration::from_secs(30));
    signal(&w, libc::SIGINT);
    finish(w, Duration::from_secs(10));
    assert!(so.status.success(), "sender: {}", stderr(&so));
    assert!(ro.status.success(), "receiver: {}", stderr(&ro));
    let mut j = end(&so);
    j["stderr"] = Value::String(stderr(&so));
    j
}

#[test]
fn the_next_transfer_over_a_path_starts_from_what_the_last_one_saved() {
    let _g = serial();
    let d = tmp("path-cache");
    let cache = d.join("paths.json");
    let args = ["-t", "3", "--path-cache", cache.to_str().unwrap()];
    // From cold; it leaves Startup within its 3 s and saves the path.
    let first = transfer_through_wanem(&d, &args);
    assert_eq!(first["flows"][0]["resume"], Value::Null, "{first}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
    let entry = &saved["paths"]["10.88.0.2:9000"];
    let bw = entry["bandwidth_bps"].as_u64().expect("a saved path");
    // Not above the link; how close to it depends on this machine's speed
    // (debug-build tools within 3 s: 77 Mbit/s once on a loaded 2-core VM).
    assert!((1..=250_000_000).contains(&bw), "{saved}");
    let rtt = entry["min_rtt_us"].as_u64().unwrap();
    assert!((20_000..40_000).contains(&rtt), "{saved}");
    // The next transfer: the handshake confirms the path, the first round
    // jumps to half the saved BDP.
    let next = transfer_through_wanem(&d, &args);
    let resume = &next["flows"][0]["resume"];
    assert_eq!(resume["outcome"], "jumped", "{next}");
    let window = resume["window"].as_u64().unwrap();
    assert_eq!(window, bw / 8 * rtt / 1_000_000 / 2, "half the saved BDP");
    let err = next["stderr"].as_str().unwrap();
    assert!(
        err.contains("resuming from the path to 10.88.0.2:9000"),
        "{err}"
    );
    // --no-path-cache: from cold, and nothing is read.
    let cold = transfer_through_wanem(&d, &["-t", "1", "--no-path-cache"]);
    assert_eq!(cold["flows"][0]["resume"], Value::Null);
}

#[test]
fn a_file_that_is_not_a_path_cache_warns_and_starts_from_cold() {
    let d = tmp("path-cache-bad");
    let cache = d.join("paths.json");
    std::fs::write(&cache, "{ not json").unwrap();
    let port = free_udp_port();
    let addr = format!("127.0.0.1:{port}");
    let (so, _) = run_pair(
        &["--backend", "udp", "--bind", &addr],
        &[
            "--backend",
            "udp",
            "--to",
            &addr,
            "-n",
            "64M",
            "--path-cache",
            cache.to_str().unwrap(),
            "--json",
        ],
        Duration::from_millis(500),
    );
    let err = stderr(&so);
    assert!(
        err.contains("warning: path cache:") && err.contains("not a pmdt path cache"),
        "{err}"
    );
    assert_eq!(end(&so)["flows"][0]["resume"], Value::Null);
    // Not ours: left as it was.
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), "{ not json");
}
