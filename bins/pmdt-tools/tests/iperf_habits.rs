//! The tools as iperf3 users reach for them (issue 17): `-c HOST` with names and
//! the default port, `-R` and `--bidir`, `-i` interval lines, `--json` in
//! iperf3 -J's shape, `--json-stream`, JSON errors, sizes with 1024-based
//! suffixes, `-n` in total, `-t` alone, and the receiver's receipt on the
//! sender's side. Separate processes over DPDK memif and kernel UDP.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

/// `-c localhost` (no port) reaches a DPDK receiver at 127.0.0.1 on its default
/// port 9000; on the kernel UDP backend `-c localhost:PORT` resolves the same.
#[test]
fn host_names_resolve_and_the_port_defaults_to_the_receivers() {
    let _g = serial();
    let d = tmp("names");
    let sock = d.join("m.sock");
    let (so, ro) = run_pair(
        &[
            "--vdev",
            &memif("server", &sock),
            "--ip",
            "127.0.0.1",
            "--json",
        ],
        &[
            "--vdev",
            &memif("client", &sock),
            "-c",
            "localhost",
            "-n",
            "2M",
            "--json",
        ],
        Duration::from_millis(1500),
    );
    let doc = json(&so);
    assert_eq!(
        doc["start"]["connected"][0]["remote"], "127.0.0.1:9000",
        "{doc}"
    );
    assert_eq!(end(&ro)["bytes"], 2 << 20);
    assert_eq!(doc["end"]["flows"][0]["receipt"]["matches"], true);

    let port = free_udp_port();
    let bind = format!("127.0.0.1:{port}");
    let to = format!("localhost:{port}");
    let (so, _) = run_pair(
        &["--backend", "udp", "--bind", &bind, "--json"],
        &["--backend", "udp", "-c", &to, "-n", "1M", "--json"],
        Duration::from_millis(500),
    );
    assert_eq!(json(&so)["start"]["connected"][0]["remote"], bind.as_str());
}

/// `-R`: the receiver sends, the client receives and checks every byte against
/// the generated stream; the receiver gets the client's receipt.
#[test]
fn reverse_has_the_receiver_send_and_the_client_check_every_byte() {
    let _g = serial();
    let d = tmp("reverse");
    let sock = d.join("m.sock");
    let (so, ro) = run_pair(
        &["--vdev", &memif("server", &sock), "--json"],
        &[
            "--vdev",
            &memif("client", &sock),
            "-R",
            "-n",
            "3M",
            "--json",
        ],
        Duration::from_millis(1500),
    );
    let (sj, rj) = (end(&so), end(&ro));
    let got = &sj["flows"][0];
    assert_eq!(got["direction"], "receive", "{sj}");
    assert_eq!(got["bytes"], 3 << 20);
    assert_eq!(got["verified"], true);
    let sent = &rj["flows"][0];
    assert_eq!(sent["direction"], "send", "{rj}");
    assert_eq!(sent["receipt"]["bytes"], 3 << 20);
    assert_eq!(sent["receipt"]["matches"], true);
    assert_eq!(sent["sha256"], got["sha256"]);
    assert_eq!(sj["sum_received"]["bytes"], 3 << 20);
    assert!(sj.get("sum_sent").is_none(), "nothing sent: {sj}");
    assert!(stderr(&so).contains("every byte as generated"));
}

/// `--bidir -P 2`: two flows each way at once over one receiver, each checked;
/// every flow connects first and all start together (iperf3's -P).
#[test]
fn bidir_runs_both_directions_at_once() {
    let _g = serial();
    let port = free_udp_port();
    let bind = format!("127.0.0.1:{port}");
    let (so, ro) = run_pair(
        &["--backend", "udp", "--bind", &bind, "-N", "4", "--json"],
        &[
            "--backend",
            "udp",
            "-c",
            &bind,
            "--bidir",
            "-P",
            "2",
            "-n",
            "2M",
            "--json",
        ],
        Duration::from_millis(500),
    );
    let (sj, rj) = (end(&so), end(&ro));
    let connect = json(&so)["start"]["connect_seconds"].as_f64();
    assert!(connect.is_some_and(|c| c >= 0.0), "connect time reported");
    let flows = sj["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 4, "{sj}");
    for f in flows {
        let began = f["started_s"].as_f64().expect("each flow's start");
        assert!((0.0..1.0).contains(&began), "all begin once connected: {f}");
        assert_eq!(f["bytes"], 1 << 20, "-n 2M split over -P 2, each way: {f}");
        match f["direction"].as_str().unwrap() {
            "send" => assert_eq!(f["receipt"]["matches"], true, "{f}"),
            "receive" => assert_eq!(f["verified"], true, "{f}"),
            other => panic!("{other}"),
        }
    }
    assert_eq!(sj["sum_sent"]["bytes"], 2 << 20);
    assert_eq!(sj["sum_received"]["bytes"], 2 << 20);
    assert_eq!(sj["sum_sent"]["flows"], 2);
    assert_eq!(rj["connections"], 4);
    assert_eq!(rj["sum_sent"]["bytes"], 2 << 20, "{rj}");
    assert_eq!(rj["sum_received"]["bytes"], 2 << 20);
}

/// `-P 3 --stagger 1 -t 3`: the flows start 1 s apart and all stop at the
/// run's end (not 3 s after their own start), each sending only from its own
/// start (the intervals show no bytes before it).
#[test]
fn staggered_flows_start_apart_and_end_together() {
    let _g = serial();
    let port = free_udp_port();
    let bind = format!("127.0.0.1:{port}");
    let (so, ro) = run_pair(
        &["--backend", "udp", "--bind", &bind, "-N", "3", "--json"],
        &[
            "--backend",
            "udp",
            "-c",
            &bind,
            "-P",
            "3",
            "--stagger",
            "1",
            "-t",
            "3",
            "-i",
            "0.1",
            "--json",
        ],
        Duration::from_millis(500),
    );
    let doc = json(&so);
    let flows = doc["end"]["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 3, "{doc}");
    for f in flows {
        let k = f["flow"].as_u64().unwrap();
        let began = f["started_s"].as_f64().expect("each flow's start");
        let due = (k - 1) as f64;
        assert!(
            began >= due && began < due + 0.5,
            "flow {k} starts {due} s in: {f}"
        );
        // Sending stops at the run's end, 3 s (the last flow would stop at
        // 5 s had it run -t from its own start); the close's drain after it
        // is reported apart.
        let drain = f["drain_seconds"].as_f64().unwrap_or(0.0);
        let stopped = began + f["seconds"].as_f64().unwrap() - drain;
        assert!(
            (2.9..3.5).contains(&stopped),
            "every flow stops sending at the run's end: {f}"
        );
        assert!(f["bytes"].as_u64().unwrap() > 0, "{f}");
        assert_eq!(f["receipt"]["matches"], true, "{f}");
        // Nothing before its start: the intervals that end by then carry none.
        let early: u64 = doc["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|iv| iv["streams"].as_array().unwrap())
            .filter(|st| st["flow"] == k && st["end"].as_f64().unwrap() <= due)
            .map(|st| st["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(early, 0, "flow {k} sent before its start");
    }
    assert_eq!(end(&ro)["connections"], 3);
}

fn assert_interval(iv: &Value) {
    let s = &iv["streams"][0];
    for k in [
        "flow",
        "start",
        "end",
        "seconds",
        "bytes",
        "bits_per_second",
        "retransmits",
        "rtt",
        "rttvar",
        "snd_cwnd",
        "pacing_rate",
        "bandwidth_estimate",
        "min_rtt",
        "probe_wait_rounds",
    ] {
        assert!(s[k].is_number(), "streams[0].{k}: {iv}");
    }
    assert!(s["cc_state"].is_string(), "{iv}");
    for k in [
        "start",
        "end",
        "seconds",
        "bytes",
        "bits_per_second",
        "retransmits",
    ] {
        assert!(iv["sum"][k].is_number(), "sum.{k}: {iv}");
    }
    for k in ["imissed", "rx_nombuf", "link_drops"] {
        assert!(iv["port"][k].is_u64(), "port.{k}: {iv}");
    }
}

/// `-t` alone runs for that long (no byte cap), with `-i` interval lines on
/// stderr and in the document's `intervals`; the document has iperf3 -J's
/// sections, a version and a timestamp, and the summary fields in `end`.
#[test]
fn json_document_has_iperf3s_shape_with_intervals_and_t_alone_runs_for_t() {
    let _g = serial();
    let d = tmp("json");
    let sock = d.join("m.sock");
    let (so, _) = run_pair(
        &["--vdev", &memif("server", &sock), "-i", "0"],
        &[
            "--vdev",
            &memif("client", &sock),
            "-t",
            "2",
            "-i",
            "0.5",
            "--cc",
            "paced",
            "--rate",
            "100m",
            "--json",
        ],
        Duration::from_millis(1500),
    );
    let doc = json(&so);
    let start = &doc["start"];
    assert!(
        start["version"].as_str().unwrap().starts_with("pmdt-send "),
        "{start}"
    );
    assert!(start["timestamp"]["timesecs"].as_u64().unwrap() > 1_600_000_000);
    assert!(start["timestamp"]["time"]
        .as_str()
        .unwrap()
        .ends_with(" GMT"));
    assert_eq!(start["test_start"]["duration"], 2.0);
    assert!(
        start["test_start"]["bytes"].is_null(),
        "-t alone: no byte cap"
    );
    let intervals = doc["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 3, "2 s at -i 0.5: {}", intervals.len());
    intervals.iter().for_each(assert_interval);
    let e = &doc["end"];
    assert_summary_fields(e);
    assert!(e["seconds"].as_f64().unwrap() >= 2.0, "ran for -t: {e}");
    assert!(e["flows"][0]["drain_seconds"].is_number());
    assert_eq!(e["flows"][0]["receipt"]["matches"], true);
    let summed: u64 = intervals
        .iter()
        .map(|i| i["sum"]["bytes"].as_u64().unwrap())
        .sum();
    let bytes = e["bytes"].as_u64().unwrap();
    assert!(
        summed <= bytes + 4096 && summed > bytes / 2,
        "intervals {summed} of {bytes}"
    );
    let err = stderr(&so);
    assert!(err.contains("[ ID] Interval"), "{err}");
    // The first interval starts at 0 (where it ends depends on when the
    // tool's loop looked at the clock: 0.50, or later on a busy machine).
    assert!(err.contains("[  1]   0.00-"), "{err}");
}

/// `--json-stream`: one object per line as the run goes; the receiver streams
/// each connection's end.
#[test]
fn json_stream_prints_one_event_per_line() {
    let _g = serial();
    let port = free_udp_port();
    let bind = format!("127.0.0.1:{port}");
    let (so, ro) = run_pair(
        &[
            "--backend",
            "udp",
            "--bind",
            &bind,
            "--json-stream",
            "-i",
            "0.2",
        ],
        &[
            "--backend",
            "udp",
            "-c",
            &bind,
            "-n",
            "6M",
            "--json-stream",
            "-i",
            "0.2",
            "--cc",
            "paced",
            "--rate",
            "50m",
        ],
        Duration::from_millis(500),
    );
    let events: Vec<Value> = json_lines(&so);
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names.first(), Some(&"start"), "{names:?}");
    assert_eq!(names.last(), Some(&"end"), "{names:?}");
    assert!(
        names.iter().filter(|n| **n == "interval").count() >= 2,
        "{names:?}"
    );
    events
        .iter()
        .filter(|e| e["event"] == "interval")
        .for_each(|e| assert_interval(&e["data"]));
    assert_eq!(events.last().unwrap()["data"]["bytes"], 6 << 20);
    let r: Vec<Value> = json_lines(&ro);
    let ended: Vec<&Value> = r
        .iter()
        .filter(|e| e["event"] == "connection_end")
        .collect();
    assert_eq!(ended.len(), 1, "{r:?}");
    assert_eq!(ended[0]["data"]["bytes"], 6 << 20);
    assert_eq!(r.last().unwrap()["event"], "end");
}

/// A failed run prints `{"error": ...}` on stdout (with --json) or an `error`
/// event (with --json-stream), and exits non-zero; bad options too.
#[test]
fn failures_print_an_error_object_and_exit_non_zero() {
    let _g = serial();
    let to = format!("127.0.0.1:{}", free_udp_port()); // nobody listens
    for (mode, code) in [("--json", 1), ("--json-stream", 1)] {
        let o = finish(
            spawn(
                SEND,
                &["--backend", "udp", "-c", &to, "--idle-timeout", "1", mode],
            ),
            Duration::from_secs(30),
        );
        assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
        let v = if mode == "--json" {
            json(&o)
        } else {
            let lines = json_lines(&o);
            let last = lines.last().unwrap().clone();
            assert_eq!(last["event"], "error", "{last}");
            last["data"].clone()
        };
        assert!(
            v["error"].as_str().unwrap().contains("cannot connect"),
            "{v}"
        );
        assert!(v["hint"].is_string(), "{v}");
    }
    let o = finish(
        spawn(SEND, &["--json", "--no-such-option"]),
        Duration::from_secs(10),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(json(&o)["error"]
        .as_str()
        .unwrap()
        .contains("--no-such-option"));
    let o = finish(
        spawn(
            RECV,
            &["--backend", "udp", "-o", "/nonexistent-dir/x", "--json"],
        ),
        Duration::from_secs(10),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(json(&o)["error"]
        .as_str()
        .unwrap()
        .contains("does not exist"));
}

/// Sizes take K/M/G as 1024-based (`-n 1.5M`, `--buffer 512K`), rates decimal.
#[test]
fn sizes_are_1024_based_everywhere() {
    let _g = serial();
    let port = free_udp_port();
    let bind = format!("127.0.0.1:{port}");
    let (so, ro) = run_pair(
        &[
            "--backend",
            "udp",
            "--bind",
            &bind,
            "--buffer",
            "512K",
            "--json",
        ],
        &[
            "--backend",
            "udp",
            "-c",
            &bind,
            "-n",
            "1.5M",
            "--buffer",
            "512K",
            "--max-buffer",
            "4M",
            "--json",
        ],
        Duration::from_millis(500),
    );
    assert_eq!(end(&ro)["bytes"], 3 << 19);
    assert_eq!(end(&so)["flows"][0]["receipt"]["bytes"], 3 << 19);
    // The settings as parsed: --dry-run shows them without starting.
    let o = finish(
        spawn(
            SEND,
            &[
                "--backend",
                "udp",
                "-n",
                "10G",
                "-P",
                "4",
                "--cc",
                "paced",
                "--rate",
                "1g",
                "--dry-run",
            ],
        ),
        Duration::from_secs(10),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let flows = v["settings"]["flows"].as_array().unwrap();
    let total: u64 = flows.iter().map(|f| f["bytes"].as_u64().unwrap()).sum();
    assert_eq!(total, 10 << 30, "-n 10G is 10 GiB in total over -P 4");
    assert!(v["settings"]["transport"]
        .as_str()
        .unwrap()
        .contains("rate_bps: 1000000000"));
}
