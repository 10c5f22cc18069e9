//! Helpers of the tools' end-to-end tests: the binaries, scratch directories,
//! spawning with a time limit, JSON output.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};

pub const SEND: &str = env!("CARGO_BIN_EXE_pmdt-send");
pub const RECV: &str = env!("CARGO_BIN_EXE_pmdt-recv");
pub const WANEM: &str = env!("CARGO_BIN_EXE_pmdt-wanem");

/// DPDK processes busy-poll: one scenario at a time on a 2-core machine.
pub fn serial() -> MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|e| e.into_inner())
}

/// A scratch directory of one test, removed when dropped (files of a few hundred MB
/// must not pile up in /tmp over many runs).
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn tmp(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("pmdt-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

pub fn random_file(path: &Path, len: usize) -> String {
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

pub fn sha_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A fresh cache directory (`XDG_CACHE_HOME`) for one tool: `pmdt-send`
/// saves the paths it measured there, and a test's run must not start from
/// what another test's left (a test of the path cache names its file).
pub fn fresh_cache_home() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "cache-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

pub fn spawn(bin: &str, args: &[&str]) -> Proc {
    let mut child = Command::new(bin)
        .env("XDG_CACHE_HOME", fresh_cache_home())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tool");
    Proc {
        out: Some(drain(child.stdout.take())),
        err: Some(drain(child.stderr.take())),
        child,
    }
}

/// A running tool whose stdout and stderr are read as it writes them (a tool
/// that writes more than a pipe holds must not block while the test waits).
/// Killed when dropped still running: a failed test must not leave its tools
/// polling (orphaned receivers of failed tests busied the machine for hours).
pub struct Proc {
    child: Child,
    out: Option<std::thread::JoinHandle<Vec<u8>>>,
    err: Option<std::thread::JoinHandle<Vec<u8>>>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}

impl Proc {
    /// Its process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, and wait for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// What it wrote to stderr (once it has exited or been killed).
    fn take_stderr(&mut self) -> Vec<u8> {
        self.err
            .take()
            .map(|h| h.join().unwrap())
            .unwrap_or_default()
    }
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

/// Kills a tool if the test fails while it runs: an emulator that runs until
/// signalled (no `--duration`: a time limit would cut the path under a transfer
/// that a busy machine made slow) must not outlive a failed test.
pub struct KillOnFailure(i32);

impl KillOnFailure {
    /// Guards `p` until [`KillOnFailure::disarm`].
    pub fn new(p: &Proc) -> Self {
        Self(p.id() as i32)
    }

    /// The tool is being stopped the normal way: the guard is off (its process
    /// id may be reused once it was waited for).
    pub fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for KillOnFailure {
    fn drop(&mut self) {
        // SAFETY: SIGKILL to our own child, not yet waited for (disarm first).
        unsafe { libc::kill(self.0, libc::SIGKILL) };
    }
}

/// Waits for a tool with a limit (kills it after `limit`).
pub fn finish(mut p: Proc, limit: Duration) -> Output {
    let start = Instant::now();
    let status = loop {
        if let Some(st) = p.child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > limit {
            p.kill();
            panic!(
                "process ran over {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&p.take_stderr())
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: p.out.take().map(|h| h.join().unwrap()).unwrap_or_default(),
        stderr: p.take_stderr(),
    }
}

/// Waits for a sender that must succeed, then for its receiver. A sender that
/// failed is reported with its own output at once, its receiver stopped: a
/// receiver whose sender never reached it waits for that connection for ever,
/// and waiting for it first hid the sender's error (issue 11: "the receiver
/// printed only listening").
pub fn finish_sender_then_receiver(
    s: Proc,
    s_limit: Duration,
    mut r: Proc,
    r_limit: Duration,
) -> (Output, Output) {
    let so = finish(s, s_limit);
    if !so.status.success() {
        r.kill();
        panic!(
            "sender failed ({}); stderr:\n{}\nreceiver stderr:\n{}",
            so.status,
            stderr(&so),
            String::from_utf8_lossy(&r.take_stderr())
        );
    }
    (so, finish(r, r_limit))
}

/// The whole JSON document on stdout.
pub fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}); stdout {} stderr {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn assert_summary_fields(v: &Value) {
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
pub fn run_pair(recv_args: &[&str], send_args: &[&str], head_start: Duration) -> (Output, Output) {
    let r = spawn(RECV, recv_args);
    std::thread::sleep(head_start);
    let s = spawn(SEND, send_args);
    let so = finish(s, Duration::from_secs(60));
    let ro = finish(r, Duration::from_secs(30));
    assert!(so.status.success(), "sender: {}", stderr(&so));
    assert!(ro.status.success(), "receiver: {}", stderr(&ro));
    (so, ro)
}

pub fn memif(role: &str, sock: &Path) -> String {
    format!("net_memif0,role={role},socket={}", sock.display())
}

/// The `end` section of a tool's `--json` document (the summary).
pub fn end(o: &Output) -> Value {
    let doc = json(o);
    assert!(doc["start"].is_object(), "no start section: {doc}");
    assert!(doc["intervals"].is_array(), "no intervals: {doc}");
    doc["end"].clone()
}

/// Every line of stdout as a JSON object (`--json-stream`).
pub fn json_lines(o: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("not one JSON object per line ({e}): {l:?}"))
        })
        .collect()
}

/// A free UDP port on 127.0.0.1 (bound and released: good enough between tests).
pub fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Sends `signal` to a child we spawned.
pub fn signal(c: &Proc, sig: i32) {
    // SAFETY: signalling our own child by its pid.
    unsafe { libc::kill(c.id() as i32, sig) };
}
