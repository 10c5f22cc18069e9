//! The tools as DPDK (testpmd) users reach for them (issue 17): EAL arguments
//! first and options after `--`, queue count and burst size on the command line,
//! and telemetry that lists every connection (`/pmdt/list`) and shows one
//! (`/pmdt/connection,<id>`) instead of a list cut at 16.

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::*;
use serde_json::Value;

#[test]
fn eal_arguments_come_first_as_in_testpmd() {
    let _g = serial();
    let d = tmp("eal-first");
    let sock = d.join("m.sock");
    let prefix = format!("pmdt-cli-eal-{}", std::process::id());
    let recv_vdev = memif("server", &sock);
    let send_vdev = memif("client", &sock);
    let (so, ro) = run_pair(
        &[
            "-l",
            "0-1",
            "--vdev",
            &recv_vdev,
            "--file-prefix",
            &prefix,
            "--log-level",
            "lib.eal:error",
            "--",
            "-N",
            "1",
            "--json",
        ],
        &[
            "-l", "0-1", "--vdev", &send_vdev, "--", "-n", "2M", "--json",
        ],
        Duration::from_millis(1500),
    );
    assert_eq!(end(&ro)["bytes"], 2 << 20);
    assert!(end(&ro)["link"].as_str().unwrap().contains("net_memif0"));
    assert_eq!(end(&so)["flows"][0]["receipt"]["matches"], true);
    // The EAL arguments took effect as the tool's own options (and raw ones passed).
    let o = finish(
        spawn(
            RECV,
            &[
                "-l",
                "0-1",
                "--vdev",
                &recv_vdev,
                "--file-prefix",
                &prefix,
                "-n",
                "4",
                "--",
                "--dry-run",
            ],
        ),
        Duration::from_secs(10),
    );
    let args: Vec<String> = serde_json::from_value(json(&o)["eal_args"].clone()).unwrap();
    let joined = args.join(" ");
    assert!(joined.contains("-l 0-1"), "{joined}");
    assert!(
        joined.contains(&format!("--file-prefix={prefix}")),
        "{joined}"
    );
    assert!(joined.ends_with("-n 4"), "{joined}");
    assert_eq!(
        joined.matches("--vdev").count(),
        1,
        "no demo vdev added: {joined}"
    );
}

#[test]
fn queue_pairs_and_burst_size_come_from_the_command_line() {
    let _g = serial();
    let d = tmp("queues");
    let sock = d.join("m.sock");
    let (so, ro) = run_pair(
        &[
            "--vdev",
            &memif("server", &sock),
            "--rxq",
            "2",
            "--txq",
            "2",
            "--burst",
            "64",
            "-N",
            "4",
            "--json",
        ],
        &[
            "--vdev",
            &memif("client", &sock),
            "--rxq",
            "2",
            "--burst",
            "16",
            "-P",
            "4",
            "-n",
            "8M",
            "--json",
        ],
        Duration::from_millis(1500),
    );
    let (sj, rj) = (end(&so), end(&ro));
    assert_eq!(sj["io_loops"], 2, "an I/O loop per queue pair: {sj}");
    assert_eq!(rj["io_loops"], 2);
    assert_eq!(rj["bytes"], 8 << 20);
    for f in sj["flows"].as_array().unwrap() {
        assert_eq!(f["receipt"]["matches"], true, "{f}");
    }
}

/// Sends one command to a DPDK process's telemetry socket; returns the value
/// under the command's name.
fn telemetry(prefix: &str, cmd: &str) -> Value {
    let path = format!("/var/run/dpdk/{prefix}/dpdk_telemetry.v2");
    // SAFETY: a SOCK_SEQPACKET unix socket connected to the telemetry path; the fd
    // is handed to UnixStream, which closes it.
    let mut s = unsafe {
        use std::os::fd::FromRawFd;
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0);
        assert!(fd >= 0);
        let mut addr: libc::sockaddr_un = std::mem::zeroed();
        addr.sun_family = libc::AF_UNIX as u16;
        for (i, b) in path.bytes().enumerate() {
            addr.sun_path[i] = b as libc::c_char;
        }
        let r = libc::connect(
            fd,
            &addr as *const _ as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_un>() as u32,
        );
        assert_eq!(r, 0, "connect to {path}");
        UnixStream::from_raw_fd(fd)
    };
    let mut buf = vec![0u8; 64 * 1024];
    let _hello = s.read(&mut buf).unwrap();
    s.write_all(cmd.as_bytes()).unwrap();
    let n = s.read(&mut buf).unwrap();
    let v: Value = serde_json::from_slice(&buf[..n]).unwrap();
    let name = cmd.split(',').next().unwrap();
    v[name].clone()
}

#[test]
fn telemetry_lists_every_connection_and_shows_each_by_id() {
    let _g = serial();
    let d = tmp("telemetry");
    let sock = d.join("m.sock");
    let prefix = format!("pmdt-cli-tel-{}", std::process::id());
    let r = spawn(
        RECV,
        &[
            "--vdev",
            &memif("server", &sock),
            "--file-prefix",
            &prefix,
            "-N",
            "20",
            "--json",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    // 20 slow flows (more than the 16 the old list showed), alive for seconds.
    let s = spawn(
        SEND,
        &[
            "--vdev",
            &memif("client", &sock),
            "-P",
            "20",
            "-t",
            "6",
            "--cc",
            "paced",
            "--rate",
            "10m",
            "--json",
        ],
    );
    // Until all 20 are accepted (the sender connects one after another).
    let mut list = Value::Null;
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(200));
        list = telemetry(&prefix, "/pmdt/list");
        if list["total"] == 20 {
            break;
        }
    }
    assert_eq!(list["total"], 20, "{list}");
    let ids: Vec<u64> = list
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|k| k.parse().ok())
        .collect();
    assert_eq!(ids.len(), 20, "every connection listed: {list}");
    assert!(list.get("next").is_none(), "one page: {list}");
    let c = telemetry(&prefix, &format!("/pmdt/connection,{}", ids[0]));
    assert_eq!(c["id"], ids[0]);
    assert!(c["peer"].as_str().unwrap().starts_with("10.88.0.1:"), "{c}");
    assert!(c["stream_bytes_received"].is_u64(), "{c}");
    assert_eq!(c["state"], "open");
    // Paging: from the 11th id on.
    let mut sorted = ids.clone();
    sorted.sort();
    let page = telemetry(&prefix, &format!("/pmdt/list,{}", sorted[10]));
    assert_eq!(page["total"], 20);
    assert_eq!(
        page.as_object()
            .unwrap()
            .keys()
            .filter(|k| k.parse::<u64>().is_ok())
            .count(),
        10
    );
    let bad = telemetry(&prefix, "/pmdt/connection,999999");
    assert!(
        bad["error"].as_str().unwrap().contains("no connection"),
        "{bad}"
    );
    let so = finish(s, Duration::from_secs(60));
    let ro = finish(r, Duration::from_secs(30));
    assert!(so.status.success(), "{}", stderr(&so));
    assert!(ro.status.success(), "{}", stderr(&ro));
    // The receiver reports each flow under the id telemetry listed.
    let mut reported: Vec<u64> = end(&ro)["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_u64().unwrap())
        .collect();
    reported.sort();
    assert_eq!(reported, sorted);
}
