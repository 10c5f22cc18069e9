//! A pmdt-recv and a pmdt-send as two processes (three with pmdt-wanem between
//! them): over memif with the main lcores (where run to completion's flow threads
//! run) and any I/O lcores pinned to different cores, or over kernel UDP on
//! loopback. Parses both `--json` summaries.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cell::{RunErr, Sample};
use crate::ctx::Ctx;
use crate::log_problems::LogProblems;
use crate::proc::{self, Child};

/// Which link the pair uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// memif between two DPDK processes, this MTU.
    Memif(u16),
    /// Kernel UDP sockets on loopback.
    Udp,
}

impl Link {
    /// Short name for tables.
    pub fn label(&self) -> String {
        match self {
            Link::Memif(m) => format!("memif-{m}"),
            Link::Udp => "kernel-udp".into(),
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct PairSpec {
    /// The link.
    pub link: Link,
    /// Extra pmdt-send arguments (`-n`, `-t`, `-P`, `--cc`, ...).
    pub send_args: Vec<String>,
    /// Extra pmdt-recv arguments (`-N` is set from `connections`).
    pub recv_args: Vec<String>,
    /// Connections the receiver waits for.
    pub connections: usize,
    /// pmdt-wanem impairment arguments: when set, the pair runs through it (memif only).
    pub wanem: Option<Vec<String>>,
    /// How long the sender should take (for the timeout).
    pub expected: Duration,
    /// The sender's interval reports (`-i`), seconds: the time series
    /// steady-state and adaptation figures are read from.
    pub interval_s: f64,
}

impl PairSpec {
    /// A pair on `link` with sender arguments `send`.
    pub fn new(link: Link, send: &[&str], expected: Duration) -> Self {
        PairSpec {
            link,
            send_args: send.iter().map(|s| s.to_string()).collect(),
            recv_args: Vec::new(),
            connections: 1,
            wanem: None,
            expected,
            interval_s: 1.0,
        }
    }
}

/// The summaries of one run.
#[derive(Debug, Clone)]
pub struct PairResult {
    /// pmdt-send's JSON.
    pub send: Value,
    /// pmdt-recv's JSON, if it printed one.
    pub recv: Option<Value>,
    /// pmdt-wanem's JSON, if it ran.
    pub wanem: Option<Value>,
    /// Receiver CPU seconds (user + system) as the OS counted them.
    pub recv_cpu_s: f64,
    /// Receiver wall seconds.
    pub recv_wall_s: f64,
    /// Receiver peak RSS, KiB.
    pub recv_rss_kb: u64,
    /// Commands run.
    pub commands: Vec<String>,
    /// Error and warning lines each tool logged (tool, lines).
    pub log_problems: Vec<(&'static str, LogProblems)>,
}

/// The `end` section of the tools' `--json` document (iperf3 -J's shape:
/// `start`, `intervals`, `end`) with its `intervals` and `start` beside;
/// pmdt-wanem's report as it is.
fn summary_of(v: Value) -> Value {
    match v.get("end") {
        Some(end) if end.is_object() => {
            let mut s = end.clone();
            // The intervals too: steady-state and adaptation figures come from
            // them, their times from the start (after `start.connect_seconds`).
            for k in ["intervals", "start"] {
                if let Some(x) = v.get(k) {
                    s[k] = x.clone();
                }
            }
            s
        }
        _ => v,
    }
}

/// The last JSON object in `text` (the tools print one on stdout with `--json`).
pub fn last_json(text: &str) -> Option<Value> {
    let mut found = None;
    for (i, _) in text.match_indices('{') {
        // Only objects that start a line (pretty-printed top level).
        if i > 0 && !text[..i].ends_with('\n') {
            continue;
        }
        let mut de = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(v)) = de.next() {
            found = Some(v);
        }
    }
    found
}

/// A number at a JSON path like `rtt_us.p50`.
pub fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
}

fn memif_vdev(socket: &str, role: &str, mtu: u16) -> String {
    let bsize = if mtu > 1500 {
        format!(",bsize={}", (mtu as u32 + 18).next_power_of_two().max(2048))
    } else {
        String::new()
    };
    format!("net_memif0,role={role},socket={socket},id=0{bsize}")
}

struct Prefixes(Vec<String>);

impl Drop for Prefixes {
    fn drop(&mut self) {
        for p in &self.0 {
            proc::dpdk_cleanup(p);
        }
    }
}

/// Runs one pair (one set of processes) and returns the summaries.
pub fn run_pair(ctx: &Ctx, experiment: &str, spec: &PairSpec) -> Result<PairResult, RunErr> {
    let id = ctx.next_id();
    let tag = ctx.tag(id);
    let logs = ctx.logs(experiment, id);
    let mut commands = Vec::new();
    let sock = |s: &str| format!("/tmp/pmdt-bench-{tag}-{s}.sock");
    let prefixes = Prefixes(vec![
        format!("{tag}r"),
        format!("{tag}s"),
        format!("{tag}w"),
    ]);
    let mut recv = ctx.tool_cmd("pmdt-recv");
    let mut send = ctx.tool_cmd("pmdt-send");
    recv.args(["--json", "--no-hash", "-N", &spec.connections.to_string()]);
    send.args(["--json", "--no-hash"]);
    // Interval lines for the logs (the summaries are what is measured).
    recv.args(["-i", "1"]);
    send.args(["-i", &spec.interval_s.to_string()]);
    let mut wanem = None;
    match spec.link {
        Link::Memif(mtu) => {
            let (rs, ss) = if spec.wanem.is_some() {
                (sock("b"), sock("a"))
            } else {
                (sock("m"), sock("m"))
            };
            let rrole = if spec.wanem.is_some() {
                "client"
            } else {
                "server"
            };
            for p in [&rs, &ss] {
                let _ = std::fs::remove_file(p);
            }
            // The two ends on different CPUs. Run to completion (the tools'
            // default with one queue), each side's flow threads run the I/O
            // loop on its main lcore's CPU: the receiver's on CPU 0, the
            // sender's on CPU 1; pmdt-wanem's lcore, when there is one,
            // beside whichever `--wanem-beside` names (the receiver by
            // default: `WanemBeside`). In the pipeline the last lcore runs
            // the I/O loop: the receiver's on CPU 1, the sender's on CPU 0.
            recv.args(["--vdev", &memif_vdev(&rs, rrole, mtu)])
                .args(["--lcores", "0@0,1@1", "--file-prefix", &prefixes.0[0]])
                .args(["--ip", "10.88.0.2", "--udp-port", "9000"]);
            send.args(["--vdev", &memif_vdev(&ss, "client", mtu)])
                .args(["--lcores", "0@1,1@0", "--file-prefix", &prefixes.0[1]])
                .args(["--ip", "10.88.0.1", "-c", "10.88.0.2:9000"]);
            if mtu != 1500 {
                recv.args(["--mtu", &mtu.to_string()]);
                send.args(["--mtu", &mtu.to_string()]);
            }
            if let Some(imp) = &spec.wanem {
                let mut w = ctx.tool_cmd("pmdt-wanem");
                w.args(["--json", "--lcores", &ctx.wanem_beside.cpu().to_string()])
                    .args([
                        "--vdev",
                        &format!("net_memif0,role=server,socket={ss},id=0"),
                    ])
                    .args([
                        "--vdev",
                        &format!("net_memif1,role=server,socket={rs},id=0"),
                    ])
                    .arg(format!("--eal=--file-prefix={}", prefixes.0[2]))
                    .args(imp);
                wanem = Some(w);
            }
        }
        Link::Udp => {
            let port = 20000 + (std::process::id() % 2000) as u16 * 10 + (id % 10) as u16;
            recv.args(["--backend", "udp", "--bind", &format!("127.0.0.1:{port}")]);
            send.args(["--backend", "udp", "-c", &format!("127.0.0.1:{port}")]);
        }
    }
    recv.args(&spec.recv_args);
    send.args(&spec.send_args);

    let fail = |e: String, commands: &Vec<String>| Err((e, commands.clone()));
    let mut wan_child = None;
    if let Some(w) = wanem {
        let mut c = Child::spawn("wanem", w, &logs).map_err(|e| (e, commands.clone()))?;
        commands.push(c.command.clone());
        if let Err(e) = c.wait_for_output("<->", Duration::from_secs(20)) {
            return fail(e, &commands);
        }
        wan_child = Some(c);
    }
    let mut r = Child::spawn("recv", recv, &logs).map_err(|e| (e, commands.clone()))?;
    commands.push(format!("{} &", r.command));
    if let Err(e) = r.wait_for_output("listening on", Duration::from_secs(30)) {
        return fail(e, &commands);
    }
    let started = Instant::now();
    let mut s = Child::spawn("send", send, &logs).map_err(|e| (e, commands.clone()))?;
    commands.push(s.command.clone());
    let timeout = ctx.timeout(spec.expected);
    let status = s.wait_timeout(timeout);
    let mut timed_out = false;
    if status.is_none() {
        timed_out = true;
        // The tools print their summary on SIGINT: keep what it says.
        s.stop(Duration::from_secs(5));
    }
    // The receiver exits after its connections; give it a moment, then stop it.
    let r_status = r.wait_timeout(Duration::from_secs(if timed_out { 1 } else { 5 }));
    if r_status.is_none() {
        r.stop(Duration::from_secs(3));
    }
    let recv_wall_s = started.elapsed().as_secs_f64();
    let wan_json = wan_child.as_mut().and_then(|w| {
        w.stop(Duration::from_secs(3));
        last_json(&w.stdout_text())
    });
    let send_json = last_json(&s.stdout_text()).map(summary_of);
    let recv_json = last_json(&r.stdout_text()).map(summary_of);
    if timed_out {
        let partial = send_json
            .as_ref()
            .map(|j| {
                format!(
                    "; the interrupted sender reported {:.1} Mbit/s over {} bytes",
                    num(j, "goodput_bps").unwrap_or(0.0) / 1e6,
                    num(j, "bytes").unwrap_or(0.0)
                )
            })
            .unwrap_or_else(|| {
                // No summary (it did not stop on SIGINT): its last interval line.
                s.stderr_text()
                    .lines()
                    .rev()
                    .find(|l| l.starts_with("pmdt-send: [") && l.contains(" sec "))
                    .map(|l| format!("; the sender's last progress line: {:?}", l.trim()))
                    .unwrap_or_default()
            });
        return fail(
            format!(
                "timed out after {:.0} s (stopped){partial}",
                timeout.as_secs_f64()
            ),
            &commands,
        );
    }
    let st = status.expect("ended");
    let Some(send_json) = send_json else {
        return fail(
            format!(
                "pmdt-send exited ({st}) without a summary: {}",
                s.last_error_line()
            ),
            &commands,
        );
    };
    if !st.success() {
        return fail(
            format!("pmdt-send exited ({st}): {}", s.last_error_line()),
            &commands,
        );
    }
    let mut log_problems = vec![
        ("pmdt-send", LogProblems::scan(&s.stderr_text())),
        ("pmdt-recv", LogProblems::scan(&r.stderr_text())),
    ];
    if let Some(w) = &wan_child {
        log_problems.push(("pmdt-wanem", LogProblems::scan(&w.stderr_text())));
    }
    Ok(PairResult {
        log_problems,
        send: send_json,
        recv: recv_json,
        wanem: wan_json,
        recv_cpu_s: r.cpu_seconds(),
        recv_wall_s,
        recv_rss_kb: r.peak_rss_kb(),
        commands,
    })
}

/// Jain's fairness index of `x`.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    if q == 0.0 {
        0.0
    } else {
        s * s / (x.len() as f64 * q)
    }
}

/// The usual figures of a sender summary as a sample: goodput, bytes, seconds,
/// retransmissions, RTT, per-flow spread and Jain's index, I/O load.
pub fn sample_of(r: &PairResult) -> Sample {
    let mut s = Sample {
        commands: r.commands.clone(),
        ..Default::default()
    };
    let j = &r.send;
    let g = num(j, "goodput_bps").unwrap_or(0.0);
    s.set("goodput_gbps", g / 1e9)
        .set("bytes", num(j, "bytes").unwrap_or(0.0))
        .set("seconds", num(j, "seconds").unwrap_or(0.0))
        .set("packets_sent", num(j, "packets_sent").unwrap_or(0.0))
        .set(
            "retransmitted",
            num(j, "packets_retransmitted").unwrap_or(0.0),
        );
    for (k, p) in [
        ("rtt_min_us", "rtt_us.min"),
        ("rtt_p50_us", "rtt_us.p50"),
        ("rtt_p99_us", "rtt_us.p99"),
    ] {
        if let Some(v) = num(j, p) {
            s.set(k, v);
        }
    }
    if let Some(v) = num(j, "load.mean") {
        s.set("send_io_load", v);
    }
    if let Some(flows) = j.get("flows").and_then(Value::as_array) {
        let g: Vec<f64> = flows.iter().filter_map(|f| num(f, "goodput_bps")).collect();
        let secs: Vec<f64> = flows.iter().filter_map(|f| num(f, "seconds")).collect();
        let errs = flows
            .iter()
            .filter(|f| f.get("error").is_some_and(|e| !e.is_null()))
            .count();
        if !g.is_empty() {
            s.set("flows", g.len() as f64)
                .set("jain", jain(&g))
                .set(
                    "flow_min_gbps",
                    g.iter().copied().fold(f64::MAX, f64::min) / 1e9,
                )
                .set("flow_max_gbps", g.iter().copied().fold(0.0, f64::max) / 1e9);
        }
        if !secs.is_empty() {
            s.set("completion_max_s", secs.iter().copied().fold(0.0, f64::max));
        }
        if errs > 0 {
            s.set("flows_failed", errs as f64);
        }
    }
    let logged: usize = r.log_problems.iter().map(|(_, p)| p.count).sum();
    if logged > 0 {
        s.set("log_problem_lines", logged as f64);
        s.notes
            .extend(r.log_problems.iter().filter_map(|(tool, p)| p.note(tool)));
    }
    if let Some(rj) = &r.recv {
        if let Some(v) = num(rj, "load.mean") {
            s.set("recv_io_load", v);
        }
        if let Some(v) = num(rj, "goodput_bps") {
            s.set("recv_goodput_gbps", v / 1e9);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_summary_keeps_the_intervals_for_the_steady_state() {
        let doc = json!({
            "start": {},
            "intervals": [{"sum": {"start": 0.0, "end": 1.0, "bytes": 10}}],
            "end": {"bytes": 10, "goodput_bps": 80.0}
        });
        let s = summary_of(doc);
        assert_eq!(s["bytes"], 10);
        assert_eq!(s["intervals"][0]["sum"]["bytes"], 10);
        let wanem = json!({"seconds": 1.0});
        assert_eq!(summary_of(wanem.clone()), wanem);
    }
}
