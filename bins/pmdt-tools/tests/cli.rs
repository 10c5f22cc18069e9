//! The tools end to end, as users run them: separate processes, real DPDK (memif
//! between processes), the kernel UDP backend, pmdt-wanem in the middle, a killed
//! peer, Ctrl-C, and bad arguments. Assertions are on exit codes, JSON summaries
//! and SHA-256 of the files.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};

const SEND: &str = env!("CARGO_BIN_EXE_pmdt-send");
const RECV: &str = env!("CARGO_BIN_EXE_pmdt-recv");
const WANEM: &str = env!("CARGO_BIN_EXE_pmdt-wanem");

/// DPDK processes busy-poll: one scenario at a time on a 2-core machine.
fn serial() -> MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|e| e.into_inner())
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pmdt-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn random_file(path: &Path, len: usize) -> String {
    let mut x = 0x1234_5678_9abc_def1u64;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(path, &data).unwrap();
    sha_hex(&data)
}

fn sha_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn spawn(bin: &str, args: &[&str]) -> Child {
    Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tool")
}

/// Waits for a child with a limit (kills it after `limit`).
fn finish(mut c: Child, limit: Duration) -> Output {
    let start = Instant::now();
    loop {
        if c.try_wait().unwrap().is_some() {
            return c.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = c.kill();
            let o = c.wait_with_output().unwrap();
            panic!(
                "process ran over {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}); stdout {} stderr {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_summary_fields(v: &Value) {
    for k in [
        "bytes",
        "seconds",
        "goodput_bps",
        "packets_sent",
        "packets_retransmitted",
        "flows",
        "load",
    ] {
        assert!(!v[k].is_null(), "summary lacks {k}: {v}");
    }
    for k in ["min", "p50", "p99"] {
        assert!(v["rtt_us"][k].is_u64(), "rtt_us.{k}: {v}");
    }
    assert!(v["load"]["mean"].is_f64());
    assert!(
        v["load"]["samples"].as_u64().unwrap() > 0,
        "load sampled during the run: {v}"
    );
}

/// Starts the receiver, gives it `head_start` to come up, runs the sender, and
/// returns both outputs once each has exited (sender first).
fn run_pair(recv_args: &[&str], send_args: &[&str], head_start: Duration) -> (Output, Output) {
    let r = spawn(RECV, recv_args);
    std::thread::sleep(head_start);
    let s = spawn(SEND, send_args);
    let so = finish(s, Duration::from_secs(60));
    let ro = finish(r, Duration::from_secs(30));
    assert!(so.status.success(), "sender: {}", stderr(&so));
    assert!(ro.status.success(), "receiver: {}", stderr(&ro));
    (so, ro)
}

fn memif(role: &str, sock: &Path) -> String {
    format!("net_memif0,role={role},socket={}", sock.display())
}

#[test]
fn file_over_memif_between_two_processes_arrives_intact() {
    let _g = serial();
    let d = tmp("memif");
    let src = d.join("src.bin");
    let want = random_file(&src, 20_000_000);
    let sock = d.join("m.sock");
    let out = d.join("got.bin");
    let (so, ro) = run_pair(
        &[
            "--vdev",
            &memif("server", &sock),
            "-o",
            out.to_str().unwrap(),
            "--json",
        ],
        &[
            "--vdev",
            &memif("client", &sock),
            "-F",
            src.to_str().unwrap(),
            "--json",
        ],
        Duration::from_millis(1500),
    );
    let sj = json(&so);
    let rj = json(&ro);
    assert_summary_fields(&sj);
    assert_summary_fields(&rj);
    assert_eq!(rj["bytes"], 20_000_000);
    assert_eq!(rj["sha256"], want.as_str());
    assert_eq!(sj["sha256"], want.as_str());
    assert_eq!(sha_hex(&std::fs::read(&out).unwrap()), want);
    assert!(!d.join("got.bin.part").exists());
    assert!(rj["link"].as_str().unwrap().contains("net_memif0"));
    // Ports closed, then the EAL shut down cleanly (no holder left behind).
    assert!(!stderr(&so).contains("warning:"), "{}", stderr(&so));
    assert!(!stderr(&ro).contains("warning:"), "{}", stderr(&ro));
}

#[test]
fn through_wanem_with_loss_reordering_and_duplication() {
    let _g = serial();
    let d = tmp("wanem");
    let (a, b) = (d.join("a.sock"), d.join("b.sock"));
    let w = spawn(
        WANEM,
        &[
            "--vdev",
            &format!("net_memif0,role=server,socket={}", a.display()),
            "--vdev",
            &format!("net_memif1,role=server,socket={}", b.display()),
            "--loss",
            "0.01",
            "--reorder",
            "0.02",
            "--duplicate",
            "0.01",
            "--delay-ms",
            "1",
            "--duration",
            "40",
            "--json",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    let r = spawn(RECV, &["--vdev", &memif("client", &b), "--json"]);
    std::thread::sleep(Duration::from_millis(1500));
    let s = spawn(
        SEND,
        &[
            "--vdev",
            &memif("client", &a),
            "-n",
            "8M",
            "--cc",
            "cubic",
            "--json",
        ],
    );
    let so = finish(s, Duration::from_secs(60));
    let ro = finish(r, Duration::from_secs(30));
    // Stop the emulator (Ctrl-C) and read its report.
    // SAFETY: signalling our own child.
    unsafe { libc::kill(w.id() as i32, libc::SIGINT) };
    let wo = finish(w, Duration::from_secs(10));
    assert!(so.status.success(), "sender: {}", stderr(&so));
    assert!(ro.status.success(), "receiver: {}", stderr(&ro));
    let (sj, rj, wj) = (json(&so), json(&ro), json(&wo));
    assert_eq!(rj["bytes"], 8_000_000);
    assert_eq!(rj["sha256"], sj["sha256"]);
    assert!(sj["packets_retransmitted"].as_u64().unwrap() > 0);
    let ab = &wj["a_to_b"];
    assert!(ab["lost"].as_u64().unwrap() > 0 && ab["reordered"].as_u64().unwrap() > 0);
    assert!(ab["duplicated"].as_u64().unwrap() > 0);
    assert_eq!(wo.status.code(), Some(130));
}

#[test]
fn kernel_udp_backend_with_a_toml_config_and_several_flows() {
    let _g = serial();
    let d = tmp("udp");
    let cfg = d.join("send.toml");
    std::fs::write(
        &cfg,
        "backend = \"udp\"\nbytes = \"3M\"\nflows = 3\ncc = \"newreno\"\n",
    )
    .unwrap();
    let (so, ro) = run_pair(
        &[
            "--backend",
            "udp",
            "--bind",
            "127.0.0.1:39321",
            "-N",
            "3",
            "-o",
            d.to_str().unwrap(),
            "--json",
        ],
        &[
            "--config",
            cfg.to_str().unwrap(),
            "--to",
            "127.0.0.1:39321",
            "--json",
        ],
        Duration::from_millis(500),
    );
    let (sj, rj) = (json(&so), json(&ro));
    assert_eq!(
        sj["flows"].as_array().unwrap().len(),
        3,
        "flows from the file"
    );
    assert_eq!(rj["bytes"], 9_000_000, "3 flows × 3 MB from the file");
    let mut sent: Vec<String> = sj["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["sha256"].as_str().unwrap().to_string())
        .collect();
    let mut got: Vec<String> = rj["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["sha256"].as_str().unwrap().to_string())
        .collect();
    sent.sort();
    got.sort();
    assert_eq!(sent, got);
    // One file per connection in the directory, each matching its hash.
    for f in rj["flows"].as_array().unwrap() {
        let p = f["path"].as_str().unwrap();
        assert_eq!(
            sha_hex(&std::fs::read(p).unwrap()),
            f["sha256"].as_str().unwrap()
        );
    }
}

#[test]
fn a_killed_receiver_ends_the_sender_with_a_timeout_error() {
    let _g = serial();
    let d = tmp("kill");
    let sock = d.join("m.sock");
    let mut r = spawn(RECV, &["--vdev", &memif("server", &sock)]);
    std::thread::sleep(Duration::from_millis(1500));
    let s = spawn(
        SEND,
        &[
            "--vdev",
            &memif("client", &sock),
            "-n",
            "100G",
            "--idle-timeout",
            "2",
            "--cc",
            "paced",
            "--rate",
            "200mbit",
        ],
    );
    std::thread::sleep(Duration::from_millis(2500));
    r.kill().unwrap(); // SIGKILL: no goodbye
    let _ = r.wait();
    let killed = Instant::now();
    let so = finish(s, Duration::from_secs(30));
    let err = stderr(&so);
    assert_eq!(so.status.code(), Some(1), "{err}");
    assert!(err.contains("timed out"), "{err}");
    assert!(err.contains("hint:"), "{err}");
    assert!(
        killed.elapsed() < Duration::from_secs(12),
        "ended within the idle timeout (+ teardown)"
    );
}

#[test]
fn ctrl_c_stops_the_receiver_without_leaving_a_partial_file() {
    stop_receiver_mid_transfer("sigint", libc::SIGINT, false);
}

/// Issue 11 item 3: `kill`, systemd and scripts send SIGTERM; it must stop the
/// receiver as cleanly as Ctrl-C (summary, part file removed).
#[test]
fn sigterm_stops_the_receiver_like_ctrl_c() {
    stop_receiver_mid_transfer("sigterm", libc::SIGTERM, false);
}

/// Issue 11 item 2: a receiver whose flow has stalled (the sender vanished) stops
/// on the first Ctrl-C, within the shutdown timeout, with its summary.
#[test]
fn ctrl_c_stops_a_receiver_with_a_stalled_flow() {
    stop_receiver_mid_transfer("stalled", libc::SIGINT, true);
}

/// Starts a receiver writing a file and a sender, optionally kills the sender
/// (the flow stalls), then sends `signal` to the receiver: it must exit 130 with
/// a JSON summary and no file under either name.
fn stop_receiver_mid_transfer(name: &str, signal: i32, stall: bool) {
    let _g = serial();
    let d = tmp(name);
    let sock = d.join("m.sock");
    let out = d.join("big.bin");
    let r = spawn(
        RECV,
        &[
            "--vdev",
            &memif("server", &sock),
            "-o",
            out.to_str().unwrap(),
            "--json",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    let mut sender = Some(spawn(
        SEND,
        &[
            "--vdev",
            &memif("client", &sock),
            "-n",
            "100G",
            "--idle-timeout",
            if stall { "30" } else { "2" },
            "--cc",
            "paced",
            "--rate",
            "200mbit",
        ],
    ));
    std::thread::sleep(Duration::from_millis(2500));
    if stall {
        let mut s = sender.take().expect("spawned");
        s.kill().unwrap(); // SIGKILL: the receiver's flow stalls, no goodbye
        let _ = s.wait();
        std::thread::sleep(Duration::from_millis(500));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(r.id() as i32, signal) };
    let ro = finish(r, Duration::from_secs(20));
    assert_eq!(ro.status.code(), Some(130), "{}", stderr(&ro));
    let rj = json(&ro);
    assert_eq!(rj["interrupted"], true);
    assert!(
        rj["bytes"].as_u64().unwrap() > 0,
        "the summary counts what arrived"
    );
    assert!(!out.exists(), "no partial file under the final name");
    assert!(
        !d.join("big.bin.part").exists(),
        "the partial file is removed"
    );
    if let Some(s) = sender {
        let so = finish(s, Duration::from_secs(30));
        assert_ne!(so.status.code(), Some(0));
    }
}

/// A sender stopped by SIGTERM ends its flows at once (no drain) and reports what
/// the receiver acknowledged.
#[test]
fn sigterm_stops_the_sender_with_acknowledged_bytes() {
    let _g = serial();
    let d = tmp("sigterm-send");
    let sock = d.join("m.sock");
    let r = spawn(RECV, &["--vdev", &memif("server", &sock), "-N", "1"]);
    std::thread::sleep(Duration::from_millis(1500));
    let s = spawn(
        SEND,
        &[
            "--vdev",
            &memif("client", &sock),
            "-n",
            "100G",
            "--cc",
            "paced",
            "--rate",
            "200mbit",
            "--json",
        ],
    );
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(s.id() as i32, libc::SIGTERM) };
    let so = finish(s, Duration::from_secs(20));
    assert_eq!(so.status.code(), Some(130), "{}", stderr(&so));
    let sj = json(&so);
    assert_eq!(sj["interrupted"], true);
    let flow = &sj["flows"][0];
    assert_eq!(flow["error"], "interrupted");
    assert!(
        flow["bytes"].as_u64().unwrap() > 0,
        "acknowledged bytes: {flow}"
    );
    let _ = finish(r, Duration::from_secs(20));
}

#[test]
fn bad_arguments_give_one_clear_line_and_a_nonzero_exit() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            SEND,
            &["--flows", "0", "--backend", "udp"],
            "--flows must be at least 1",
        ),
        (
            SEND,
            &["--rate", "5gbit", "--backend", "udp"],
            "--rate applies to --cc paced",
        ),
        (SEND, &["--cc", "paced", "--backend", "udp"], "needs --rate"),
        (SEND, &["-n", "lots", "--backend", "udp"], "is not a size"),
        (
            SEND,
            &["--payload", "50", "--backend", "udp"],
            "max_datagram",
        ),
        (
            RECV,
            &["-o", "/nonexistent-dir/x.bin", "--backend", "udp"],
            "does not exist",
        ),
        (
            RECV,
            &["-o", "/tmp/x.bin", "-N", "2", "--backend", "udp"],
            "is a file",
        ),
        (
            SEND,
            &["--max-buffer", "512000000", "-P", "2"],
            "does not fit the packet pool",
        ),
        (
            RECV,
            &["--max-buffer", "512000000", "--pool-size", "4095"],
            "raise --memory-mb",
        ),
        (WANEM, &["--loss", "2"], "probability"),
        (WANEM, &["--vdev", "net_null0"], "exactly two ports"),
        (
            SEND,
            &["--backend", "dpdk", "--vdev", "net_nosuchpmd0"],
            "DPDK",
        ),
    ];
    let _g = serial();
    for (bin, args, want) in cases {
        let mut c = spawn(bin, args);
        let mut err = String::new();
        c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let st = c.wait().unwrap();
        assert!(!st.success(), "{bin} {args:?} succeeded");
        assert!(err.contains(want), "{bin} {args:?}: {err}");
        assert!(err.contains("error:") || err.contains("error"), "{err}");
        assert!(!err.contains("panicked"), "{bin} {args:?} panicked: {err}");
    }
    // Unknown key in a config file.
    let d = tmp("badcfg");
    let cfg = d.join("x.toml");
    std::fs::write(&cfg, "no_such_option = 1\n").unwrap();
    let o = Command::new(SEND)
        .args(["--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown option"), "{}", stderr(&o));
    // Address in use on the UDP backend.
    let hold = std::net::UdpSocket::bind("127.0.0.1:39333").unwrap();
    let o = Command::new(RECV)
        .args(["--backend", "udp", "--bind", "127.0.0.1:39333"])
        .output()
        .unwrap();
    drop(hold);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("hint:"), "{}", stderr(&o));
}

#[test]
fn jumbo_frames_over_memif_carry_full_size_packets() {
    let _g = serial();
    let d = tmp("jumbo");
    let sock = d.join("j.sock");
    let vdev = |role: &str| format!("{},bsize=16384", memif(role, &sock));
    let (so, ro) = run_pair(
        &["--vdev", &vdev("server"), "--mtu", "9000", "--json"],
        &[
            "--vdev",
            &vdev("client"),
            "--mtu",
            "9000",
            "-n",
            "40M",
            "--json",
        ],
        Duration::from_millis(1500),
    );
    let (sj, rj) = (json(&so), json(&ro));
    assert_eq!(rj["sha256"], sj["sha256"]);
    // 40 MB in 8932-byte payloads: about 4,500 data packets (plus a few controls).
    let data_packets = rj["link_stats"]["rx_datagrams"].as_u64().unwrap();
    assert!(
        (4_400..5_000).contains(&data_packets),
        "{data_packets} datagrams: packets are not full jumbo size"
    );
    assert_eq!(sj["link_stats"]["payload_copies"], 0);
    // A payload that does not fit the MTU is refused with a hint.
    let o = Command::new(SEND)
        .args(["--backend", "udp", "--payload", "9000"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("does not fit the MTU"),
        "{}",
        stderr(&o)
    );
}
