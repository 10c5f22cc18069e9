//! `pmdt-recv -N 0` as a long-running server (issue 17): each connection is
//! reported as it ends, finished connections are forgotten (the final summary
//! keeps the last 256 and counts the rest), and the summary at Ctrl-C divides by
//! the time a connection was open, saying so.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

#[test]
fn a_server_reports_each_connection_as_it_ends_and_keeps_bounded_state() {
    let _g = serial();
    let port = free_udp_port();
    let bind = format!("127.0.0.1:{port}");
    let server = spawn(
        RECV,
        &[
            "--backend",
            "udp",
            "--bind",
            &bind,
            "-N",
            "0",
            "--json-stream",
            "-i",
            "0",
        ],
    );
    std::thread::sleep(Duration::from_millis(500));
    // 300 connections, more than the 256 kept, then a pause, then one more.
    let so = finish(
        spawn(
            SEND,
            &[
                "--backend",
                "udp",
                "-c",
                &bind,
                "-P",
                "300",
                "-n",
                "300K",
                "-i",
                "0",
                "--json",
            ],
        ),
        Duration::from_secs(120),
    );
    assert!(so.status.success(), "{}", stderr(&so));
    std::thread::sleep(Duration::from_secs(2));
    let so = finish(
        spawn(
            SEND,
            &["--backend", "udp", "-c", &bind, "-n", "1M", "-i", "0"],
        ),
        Duration::from_secs(60),
    );
    assert!(so.status.success(), "{}", stderr(&so));
    signal(&server, libc::SIGINT);
    let ro = finish(server, Duration::from_secs(30));
    assert_eq!(ro.status.code(), Some(130), "{}", stderr(&ro));
    let events = json_lines(&ro);
    let ended: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "connection_end")
        .collect();
    assert_eq!(ended.len(), 301, "one event per connection as it ended");
    assert!(ended.iter().all(|e| e["data"]["error"].is_null()));
    let last = events.last().unwrap();
    assert_eq!(last["event"], "end", "{last}");
    let e = &last["data"];
    assert_eq!(e["connections"], 301);
    assert_eq!(e["bytes"], 300 * 1024 + (1 << 20));
    assert_eq!(
        e["flows"].as_array().unwrap().len(),
        256,
        "the last 256 kept"
    );
    assert_eq!(e["flows_omitted"], 45);
    assert_eq!(e["interrupted"], true);
    // Goodput over the time a connection was open, not since the first accept:
    // the pause between the two clients does not count.
    let (secs, listening) = (
        e["seconds"].as_f64().unwrap(),
        e["listening_seconds"].as_f64().unwrap(),
    );
    assert!(
        secs + 1.5 < listening,
        "busy {secs} s of {listening} s listening"
    );
    let err = stderr(&ro);
    assert!(err.contains("seconds with a connection open"), "{err}");
    assert_eq!(err.matches(": flow ").count(), 301, "a line per connection");
}

/// A server (`pmdt-recv`) and a client (`pmdt-send -c` it, plus `client_args`)
/// over kernel UDP on loopback, both with `--json -i 0.2`: (client, server).
fn interval_pair(client_args: &[&str]) -> (std::process::Output, std::process::Output) {
    let bind = format!("127.0.0.1:{}", free_udp_port());
    let mut send = vec!["--backend", "udp", "-c", &bind, "--json", "-i", "0.2"];
    send.extend_from_slice(client_args);
    run_pair(
        &["--backend", "udp", "--bind", &bind, "--json", "-i", "0.2"],
        &send,
        Duration::from_millis(500),
    )
}

/// The bytes an interval report's `sum` lines add up to.
fn interval_bytes(doc: &Value) -> u64 {
    doc["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["sum"]["bytes"].as_u64().unwrap())
        .sum()
}

/// Issue 17: a server's interval reports count payload only (not the client's
/// request line), and the last, partial interval is reported, so the intervals
/// add up to exactly the bytes the client sent, on both sides.
#[test]
fn server_intervals_count_payload_only_and_add_up_to_the_flow() {
    let _g = serial();
    let (so, ro) = interval_pair(&["-n", "3M", "--cc", "paced", "--rate", "40m"]);
    for (who, o) in [("receiver", &ro), ("sender", &so)] {
        let doc = json(o);
        assert_eq!(interval_bytes(&doc), 3 << 20, "{who}'s intervals: {doc}");
        assert_eq!(doc["end"]["bytes"], 3 << 20, "{who}");
    }
}

/// Issue 17: a reverse request (`pmdt-send -R`) makes the server the sending side:
/// its intervals are marked as sending and count what the client acknowledged
/// (payload only), adding up to the flow, as the client's receiving intervals do.
#[test]
fn a_server_serving_a_reverse_request_reports_sending_intervals() {
    let _g = serial();
    let (so, ro) = interval_pair(&["-R", "-n", "3M"]);
    for (who, o, direction) in [("server", &ro, "send"), ("client", &so, "receive")] {
        assert!(o.status.success(), "{who}: {}", stderr(o));
        let doc = json(o);
        let intervals = doc["intervals"].as_array().unwrap();
        assert!(!intervals.is_empty(), "{who}: {doc}");
        assert_eq!(interval_bytes(&doc), 3 << 20, "{who}'s intervals: {doc}");
        for i in intervals {
            for s in i["streams"].as_array().unwrap() {
                assert_eq!(s["direction"], direction, "{who}: {s}");
            }
        }
    }
}
