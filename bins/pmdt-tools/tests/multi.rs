//! `pmdt-send --multi`: one file to three ordinary `pmdt-recv` at once (kernel UDP
//! on loopback), every copy identical to the source, one copy into packet memory;
//! and with `--max-lag`, a receiver killed mid-transfer is reported while the others
//! finish; and with two receivers behind their own `pmdt-wanem --udp-listen` paths
//! (one lossy, reordering and duplicating, one a slow bottleneck), every copy
//! identical under both policies.

mod common;

use std::time::Duration;

use common::*;

fn receivers(dir: &std::path::Path, n: usize) -> (Vec<Proc>, Vec<String>, Vec<std::path::PathBuf>) {
    let mut procs = Vec::new();
    let mut addrs = Vec::new();
    let mut outs = Vec::new();
    for i in 0..n {
        let port = free_udp_port();
        let out = dir.join(format!("got{i}.bin"));
        let bind = format!("127.0.0.1:{port}");
        procs.push(spawn(
            RECV,
            &[
                "--backend",
                "udp",
                "--bind",
                &bind,
                "-N",
                "1",
                "-o",
                out.to_str().unwrap(),
                "--json",
            ],
        ));
        addrs.push(bind);
        outs.push(out);
    }
    std::thread::sleep(Duration::from_millis(500));
    (procs, addrs, outs)
}

#[test]
fn one_file_to_three_receivers_arrives_identical_everywhere() {
    let _g = serial();
    let dir = tmp("multi");
    let src = dir.join("src.bin");
    let sha = random_file(&src, 24 << 20);
    let (procs, addrs, outs) = receivers(&dir, 3);
    let mut args = vec![
        "--backend",
        "udp",
        "--multi",
        "-F",
        src.to_str().unwrap(),
        "--json",
    ];
    for a in &addrs {
        args.extend(["-c", a.as_str()]);
    }
    let s = finish(spawn(SEND, &args), Duration::from_secs(120));
    assert!(s.status.success(), "sender: {}", stderr(&s));
    let end = end(&s);
    let flows = end["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 3, "{end}");
    // The summary is also at the top level, for scripts that read it there.
    let doc = json(&s);
    for k in ["bytes", "goodput_bps", "flows", "packets_retransmitted"] {
        assert_eq!(doc[k], end[k], "{k}");
    }
    for (f, a) in flows.iter().zip(&addrs) {
        assert_eq!(f["peer"].as_str().unwrap(), a);
        assert_eq!(f["bytes"].as_u64().unwrap(), 24 << 20);
        assert_eq!(f["receipt"]["matches"], true, "{f}");
        assert_eq!(f["receipt"]["sha256"].as_str().unwrap(), sha);
    }
    // The data went into packet memory once, not once per receiver.
    assert!(
        stderr(&s).contains("1.00 copies per byte"),
        "{}",
        stderr(&s)
    );
    for (p, out) in procs.into_iter().zip(&outs) {
        let r = finish(p, Duration::from_secs(30));
        assert!(r.status.success(), "receiver: {}", stderr(&r));
        assert_eq!(sha_hex(&std::fs::read(out).unwrap()), sha);
    }
}

#[test]
fn a_killed_receiver_is_reported_and_the_others_finish() {
    let _g = serial();
    let dir = tmp("multi-kill");
    let src = dir.join("src.bin");
    let sha = random_file(&src, 64 << 20);
    let (mut procs, addrs, outs) = receivers(&dir, 3);
    let mut args = vec![
        "--backend",
        "udp",
        "--multi",
        // A bound a live receiver cannot reach on a loaded machine (it would have
        // to stall for nearly the whole file while the others take it all): the
        // killed one is dropped for lagging or found silent, whichever comes first.
        "--max-lag",
        "60M",
        "--idle-timeout",
        "5",
        "-F",
        src.to_str().unwrap(),
        "--json",
    ];
    for a in &addrs {
        args.extend(["-c", a.as_str()]);
    }
    let s = spawn(SEND, &args);
    // The third receiver dies (SIGKILL: no goodbye) once it has some of the file.
    let part = outs[2].with_extension("bin.part");
    for _ in 0..200 {
        if std::fs::metadata(&part).is_ok_and(|m| m.len() > (1 << 20)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    procs[2].kill();
    let s = finish(s, Duration::from_secs(120));
    assert_eq!(
        s.status.code(),
        Some(1),
        "one receiver failed: {}",
        stderr(&s)
    );
    let end = end(&s);
    let flows = end["flows"].as_array().unwrap();
    for f in &flows[..2] {
        assert!(f["error"].is_null(), "{f}");
        assert_eq!(f["receipt"]["sha256"].as_str().unwrap(), sha);
    }
    assert!(flows[2]["error"].is_string(), "{}", flows[2]);
    assert!(flows[2]["bytes"].as_u64().unwrap() < 64 << 20);
    let mut procs = procs.into_iter();
    for out in &outs[..2] {
        let r = finish(procs.next().unwrap(), Duration::from_secs(30));
        assert!(r.status.success(), "receiver: {}", stderr(&r));
        assert_eq!(sha_hex(&std::fs::read(out).unwrap()), sha);
    }
}

/// A `pmdt-wanem` in kernel UDP mode in front of `to`: returns it and the address
/// to send to.
fn wanem(to: &str, impairment: &[&str]) -> (Proc, String) {
    let listen = format!("127.0.0.1:{}", free_udp_port());
    let mut args = vec!["--udp-listen", listen.as_str(), "--udp-to", to, "--json"];
    args.extend_from_slice(impairment);
    (spawn(WANEM, &args), listen)
}

#[test]
fn through_a_lossy_and_a_slow_wanem_path_every_copy_is_identical_under_both_policies() {
    let _g = serial();
    let dir = tmp("multi-wanem");
    let src = dir.join("src.bin");
    let sha = random_file(&src, 8 << 20);
    // Pace of the slowest (the default), then drop-lagging with a bound no member
    // reaches on these paths: both must deliver every byte everywhere.
    for policy in [&[][..], &["--max-lag", "64M"][..]] {
        let (procs, addrs, outs) = receivers(&dir, 3);
        let (lossy, lossy_addr) = wanem(
            &addrs[1],
            &[
                "--loss",
                "0.02",
                "--delay-ms",
                "5",
                "--reorder",
                "0.01",
                "--duplicate",
                "0.01",
            ],
        );
        let (slow, slow_addr) = wanem(&addrs[2], &["--rate", "100mbit", "--delay-ms", "2"]);
        std::thread::sleep(Duration::from_millis(300));
        let dests = [addrs[0].as_str(), lossy_addr.as_str(), slow_addr.as_str()];
        let mut args = vec![
            "--backend",
            "udp",
            "--multi",
            "-F",
            src.to_str().unwrap(),
            "--json",
        ];
        args.extend_from_slice(policy);
        for a in dests {
            args.extend(["-c", a]);
        }
        let s = finish(spawn(SEND, &args), Duration::from_secs(180));
        assert!(s.status.success(), "{policy:?}: sender: {}", stderr(&s));
        let end = end(&s);
        let flows = end["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 3, "{end}");
        for f in flows {
            assert!(f["error"].is_null(), "{policy:?}: {f}");
            assert_eq!(f["bytes"].as_u64().unwrap(), 8 << 20);
            assert_eq!(f["receipt"]["sha256"].as_str().unwrap(), sha, "{f}");
        }
        assert!(
            flows[1]["packets_retransmitted"].as_u64().unwrap() > 0,
            "the lossy member recovered losses: {}",
            flows[1]
        );
        for (p, out) in procs.into_iter().zip(&outs) {
            let r = finish(p, Duration::from_secs(30));
            assert!(r.status.success(), "receiver: {}", stderr(&r));
            assert_eq!(sha_hex(&std::fs::read(out).unwrap()), sha);
            let _ = std::fs::remove_file(out);
        }
        for w in [&lossy, &slow] {
            signal(w, libc::SIGINT);
        }
        let lossy = finish(lossy, Duration::from_secs(10));
        let slow = finish(slow, Duration::from_secs(10));
        let lost = json(&lossy)["a_to_b"]["lost"].as_u64().unwrap();
        assert!(
            lost > 0,
            "the lossy path lost datagrams: {}",
            stderr(&lossy)
        );
        assert!(
            json(&slow)["a_to_b"]["forwarded"].as_u64().unwrap() > (8 << 20) / 9000,
            "the slow path carried the file: {}",
            stderr(&slow)
        );
    }
}

#[test]
fn multi_needs_several_receivers_and_one_flow() {
    for args in [
        &["--backend", "udp", "--multi", "-c", "127.0.0.1:9"][..],
        &[
            "--backend",
            "udp",
            "--multi",
            "-c",
            "127.0.0.1:9",
            "-c",
            "127.0.0.1:10",
            "-P",
            "2",
        ],
    ] {
        let o = finish(spawn(SEND, args), Duration::from_secs(10));
        assert!(!o.status.success());
        assert!(stderr(&o).contains("--multi"), "{}", stderr(&o));
    }
}
