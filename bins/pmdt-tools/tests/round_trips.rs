//! `pmdt-send --rr` (issue 15's latency path): request/response against an
//! unchanged `pmdt-recv`, which echoes because the request says so. Over DPDK
//! memif and kernel UDP, run to completion and pipeline: every round trip
//! completes, the sender checks every echoed byte (an echo that differs fails
//! the run: a faulty echo server below, and unit tests in `round_trip.rs`,
//! change one byte to show it), and the
//! JSON summary carries the count and ordered percentiles. Behaviour only: the
//! figures themselves are measured by `pmdt-bench peers`.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

/// The `round_trips` object: `count` as expected, percentiles in order.
fn assert_round_trips(rt: &Value, count: u64, size: u64) {
    assert_eq!(rt["count"], count, "{rt}");
    assert_eq!(rt["size"], size, "{rt}");
    let v: Vec<f64> = ["min_us", "p50_us", "p90_us", "p99_us", "p99_9_us", "max_us"]
        .iter()
        .map(|k| {
            rt[k]
                .as_f64()
                .unwrap_or_else(|| panic!("round_trips.{k}: {rt}"))
        })
        .collect();
    assert!(v[0] > 0.0, "a round trip takes time: {rt}");
    assert!(
        v.windows(2).all(|w| w[0] <= w[1]),
        "min ≤ p50 ≤ p90 ≤ p99 ≤ p99.9 ≤ max: {rt}"
    );
}

/// Both summaries of a clean `--rr` run of `count` messages of `size` bytes:
/// the sender's flows each verified, the receiver echoed every byte.
fn assert_clean_run(so: &std::process::Output, ro: &std::process::Output, count: u64, size: u64) {
    let (sj, rj) = (end(so), end(ro));
    assert_round_trips(&sj["round_trips"], count, size);
    assert_eq!(sj["bytes"], count * size, "{sj}");
    for f in sj["flows"].as_array().unwrap() {
        assert_eq!(f["verified"], true, "every echoed byte as sent: {f}");
        assert!(f["error"].is_null(), "{f}");
        assert!(f["round_trips"]["count"].as_u64().unwrap() > 0, "{f}");
    }
    assert_eq!(
        rj["bytes"],
        count * size,
        "the receiver echoed it all: {rj}"
    );
    assert!(stderr(so).contains("every echo as sent"), "{}", stderr(so));
    assert!(stderr(so).contains("round trips"), "{}", stderr(so));
}

/// memif, busy polling on both sides (the latency setup), run to completion:
/// 3000-byte messages (three packets each way at MTU 1500, so echoes are
/// reassembled) and 64-byte ones, each round trip complete and checked.
#[test]
fn round_trips_over_memif_complete_and_every_echo_is_checked() {
    let _g = serial();
    let d = tmp("rr-memif");
    for (size, n) in [(3000u64, 100u64), (64, 500)] {
        let sock = d.join(format!("m{size}.sock"));
        let bytes = (size * n).to_string();
        let sz = size.to_string();
        let (so, ro) = run_pair(
            &["--vdev", &memif("server", &sock), "--busy-poll", "--json"],
            &[
                "--vdev",
                &memif("client", &sock),
                "--busy-poll",
                "--rr",
                "--rr-size",
                &sz,
                "-n",
                &bytes,
                "--json",
            ],
            Duration::from_millis(1500),
        );
        assert_clean_run(&so, &ro, n, size);
        let doc = json(&so);
        assert_eq!(doc["start"]["test_start"]["rr"]["size"], size, "{doc}");
    }
}

/// Kernel UDP: two flows at a fixed rate each (run to completion), and one in
/// pipeline mode (an I/O thread and rings); all round trips complete.
#[test]
fn round_trips_over_udp_complete_in_both_io_modes_and_at_a_rate() {
    let _g = serial();
    let port = free_udp_port();
    let bind = format!("127.0.0.1:{port}");
    let (so, ro) = run_pair(
        &["--backend", "udp", "--bind", &bind, "-N", "2", "--json"],
        &[
            "--backend",
            "udp",
            "-c",
            &bind,
            "--rr",
            "-P",
            "2",
            "--rr-rate",
            "2000",
            "-n",
            "12800",
            "--json",
        ],
        Duration::from_millis(500),
    );
    assert_clean_run(&so, &ro, 200, 64);
    let sj = end(&so);
    for f in sj["flows"].as_array().unwrap() {
        assert_eq!(f["round_trips"]["count"], 100, "-n split over flows: {f}");
    }
    // 100 messages at 2000 a second take at least 49.5 ms (slots 0 .. 99).
    assert!(sj["seconds"].as_f64().unwrap() >= 0.0495, "{sj}");

    let port = free_udp_port();
    let bind = format!("127.0.0.1:{port}");
    let (so, ro) = run_pair(
        &["--backend", "udp", "--bind", &bind, "--pipeline", "--json"],
        &[
            "--backend",
            "udp",
            "-c",
            &bind,
            "--pipeline",
            "--rr",
            "--rr-size",
            "200",
            "-n",
            "20000",
            "--json",
        ],
        Duration::from_millis(500),
    );
    assert_clean_run(&so, &ro, 100, 200);
    assert!(
        stderr(&so).contains("pipeline"),
        "pipeline mode: {}",
        stderr(&so)
    );
}

/// `-t` alone bounds a ping-pong run: it ends, with some round trips, cleanly.
#[test]
fn a_timed_round_trip_run_ends_cleanly() {
    let _g = serial();
    let port = free_udp_port();
    let bind = format!("127.0.0.1:{port}");
    let (so, ro) = run_pair(
        &["--backend", "udp", "--bind", &bind, "--json"],
        &[
            "--backend",
            "udp",
            "-c",
            &bind,
            "--rr",
            "-t",
            "0.5",
            "--json",
        ],
        Duration::from_millis(500),
    );
    let sj = end(&so);
    let count = sj["round_trips"]["count"].as_u64().unwrap();
    assert!(count > 0, "{sj}");
    assert_clean_run(&so, &ro, count, 64);
}

/// Bad `--rr` arguments: one error line, no panic, a non-zero exit, before any
/// link comes up.
#[test]
fn bad_round_trip_arguments_give_one_clear_error_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["--rr", "-F", "/etc/hostname"], "cannot be used with"),
        (&["--rr", "-R"], "cannot be used with"),
        (&["--rr", "--bidir"], "cannot be used with"),
        (
            &["--rr", "--rr-size", "0"],
            "--rr-size must be between 1 and 65536 bytes (64K), got 0",
        ),
        (
            &["--rr", "--rr-size", "65537"],
            "--rr-size must be between 1 and 65536 bytes (64K), got 65537",
        ),
        (&["--rr", "--rr-size", "1G"], "--rr-size must be between"),
        (&["--rr-size", "100"], "--rr"),
        (
            &["--rr", "--rr-rate", "0"],
            "--rr-rate must be above 0 messages per second",
        ),
        (
            &["--rr", "--rr-size", "1K", "-n", "1000"],
            "less than one --rr-size 1024 message",
        ),
    ];
    for (args, want) in cases {
        let mut argv = vec!["--backend", "udp"];
        argv.extend_from_slice(args);
        let o = finish(spawn(SEND, &argv), Duration::from_secs(30));
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        let error_lines = err.lines().filter(|l| l.contains("error")).count();
        assert_eq!(error_lines, 1, "{args:?}: one error line: {err}");
    }
}

/// A server that echoes with one byte changed (a pmdt application built on the
/// runtime, standing in for a faulty peer): pmdt-send fails the run and says
/// which message and byte differ. The content is checked, not only the length.
#[test]
fn an_echo_with_one_byte_changed_fails_the_run_and_says_where() {
    use pmdt::link::udp::UdpLinkConfig;
    use pmdt::runtime::{Backend, Runtime};
    use pmdt_tools::session::{read_opening, Opening};
    use std::io::{Read, Write};

    let _g = serial();
    let rt = Runtime::builder()
        .backend(Backend::Udp(UdpLinkConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            ..Default::default()
        }))
        .listen_from_start()
        .start()
        .unwrap();
    let to = rt.local_addr().to_string();
    let listener = rt.listen(0).unwrap();
    let server = std::thread::spawn(move || {
        let mut s = listener.accept_timeout(Duration::from_secs(30)).unwrap();
        let Opening::Request { request, rest, .. } = read_opening(&mut s).unwrap() else {
            panic!("pmdt-send opens with a request");
        };
        assert_eq!(request.mode, pmdt_tools::session::Mode::Echo);
        // Byte 100 after the request line: message 2 (64-byte messages), byte 36.
        let mut at = 0u64;
        let mut buf = rest;
        loop {
            for b in buf.iter_mut() {
                if at == 100 {
                    *b ^= 0x40;
                }
                at += 1;
            }
            if s.write_all(&buf).is_err() {
                return;
            }
            buf.resize(4096, 0);
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(k) => buf.truncate(k),
            }
        }
    });
    let o = finish(
        spawn(
            SEND,
            &[
                "--backend",
                "udp",
                "-c",
                &to,
                "--rr",
                "-n",
                "6400",
                "--idle-timeout",
                "3",
                "--json",
            ],
        ),
        Duration::from_secs(60),
    );
    let _ = server.join();
    let _ = rt.shutdown();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("the echo of message 2 differs from it at byte 36"),
        "{err}"
    );
    let sj = end(&o);
    assert_eq!(sj["flows"][0]["verified"], false, "{sj}");
    assert_eq!(sj["round_trips"]["count"], 1, "one good round trip: {sj}");
    assert!(err.contains("AN ECHO DIFFERS"), "{err}");
}
