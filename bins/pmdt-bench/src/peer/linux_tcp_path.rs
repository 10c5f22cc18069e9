//! Linux's own TCP congestion controllers through pmdt-wanem: the reference
//! the `adapt` experiment's sharing cells put pmdt's controllers beside.
//!
//! Two network namespaces, each joined by a veth pair to one of pmdt-wanem's
//! ports (DPDK's af_packet PMD on the pair's root end); iperf3 servers in one
//! namespace, clients in the other, each flow with its own `-C` controller.
//! Offloads are off on every veth end: the emulator forwards 1514-byte frames,
//! and a frame whose checksum the kernel left to an offload would reach the
//! far namespace unfinished. The namespaces' TCP buffers reach 64 MiB (the
//! default 6 MiB holds a window under the 5 MB BDP of 1 Gbit/s × 40 ms). Root
//! only (network namespaces); `ip`, `ethtool`, `iperf3`, `taskset` and `ping` on
//! PATH. Ctrl-C ends the runner at once (`proc::install_signal_handler`):
//! then the namespaces and veth pairs of the run under way stay behind (`ip
//! netns list`; names `pmdtb<tag>a`/`b`).

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cell::RunErr;
use crate::ctx::Ctx;
use crate::pmdt_pair::{last_json, num};
use crate::proc::Child;

/// What it runs, on PATH.
const TOOLS: &[&str] = &["ip", "ethtool", "iperf3", "taskset", "ping"];
/// The sender's address (namespace A) and the receiver's (namespace B).
const SENDER_IP: &str = "10.77.0.1";
const RECEIVER_IP: &str = "10.77.0.2";
/// TCP buffer limits in both namespaces: min, default, max bytes.
const TCP_RMEM: &str = "4096 131072 67108864";
const TCP_WMEM: &str = "4096 16384 67108864";

/// One iperf3 flow: its controller and when it starts after the first.
#[derive(Debug, Clone)]
pub struct Flow {
    /// Linux's name for the controller (`-C`): `bbr`, `cubic`, `reno`.
    pub cc: String,
    /// Seconds after the first flow's start.
    pub start_s: f64,
}

/// The path and the flows.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The flows, first one first.
    pub flows: Vec<Flow>,
    /// The run, s: every flow sends until its end (as `pmdt-send -t` with
    /// `--stagger`).
    pub secs: f64,
    /// pmdt-wanem's impairment arguments (rate, delay, queue, …).
    pub wanem: Vec<String>,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Run {
    /// Per flow, its one-second intervals as (start, end, bit/s), the start
    /// and end in the first flow's time.
    pub intervals: Vec<Vec<(f64, f64, f64)>>,
    /// Per flow, the segments its sender retransmitted.
    pub retransmits: Vec<f64>,
    /// pmdt-wanem's JSON summary.
    pub wanem: Option<Value>,
    /// The commands, in order.
    pub commands: Vec<String>,
}

impl Run {
    /// Flow `i`'s goodput from `from` to `to` s (the first flow's time): its
    /// intervals' bits within the window over the window's length, bit/s.
    pub fn goodput_bps(&self, i: usize, from: f64, to: f64) -> f64 {
        window_bps(&self.intervals[i], from, to)
    }
}

/// The bits/s of `intervals` (start, end, bit/s) within `from..to`, over its
/// length; an interval the window cuts counts in proportion.
pub fn window_bps(intervals: &[(f64, f64, f64)], from: f64, to: f64) -> f64 {
    if to <= from {
        return 0.0;
    }
    let bits: f64 = intervals
        .iter()
        .map(|&(s, e, bps)| (e.min(to) - s.max(from)).max(0.0) * bps)
        .sum();
    bits / (to - from)
}

/// A flow's intervals from its iperf3 client's `-J` report, shifted by
/// `offset` s (its start after the first flow's).
pub fn intervals_of(report: &Value, offset: f64) -> Vec<(f64, f64, f64)> {
    report
        .get("intervals")
        .and_then(Value::as_array)
        .map(|ivs| {
            ivs.iter()
                .filter_map(|iv| {
                    let s = iv.get("sum")?;
                    Some((
                        s.get("start")?.as_f64()? + offset,
                        s.get("end")?.as_f64()? + offset,
                        s.get("bits_per_second")?.as_f64()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `spec` once.
pub fn run(ctx: &Ctx, experiment: &str, spec: &Spec) -> Result<Run, RunErr> {
    let id = ctx.next_id();
    let logs = ctx.logs(experiment, id);
    let mut commands = Vec::new();
    let result = run_in(ctx, &logs, id, spec, &mut commands);
    result.map_err(|e| (e, commands))
}

fn run_in(
    ctx: &Ctx,
    logs: &std::path::Path,
    id: u32,
    spec: &Spec,
    commands: &mut Vec<String>,
) -> Result<Run, String> {
    // Network namespaces need CAP_SYS_ADMIN.
    if !is_root() {
        return Err("the Linux TCP reference needs root (network namespaces)".into());
    }
    if let Some(missing) = TOOLS.iter().find(|t| crate::proc::which(t).is_none()) {
        return Err(format!(
            "the Linux TCP reference needs {missing} on PATH (`make setup` installs it)"
        ));
    }
    let net = Namespaces::create(id, commands)?;
    let prefix = format!("{}w", ctx.tag(id));
    // Dropped after pmdt-wanem (declared before it): what a killed EAL leaves.
    let _eal_files = DpdkFiles(prefix.clone());
    let mut w = ctx.tool_cmd("pmdt-wanem");
    // pmdt-wanem beside the receiver, as the pmdt cells run it; the
    // receiving iperf3 on CPU 0, the sending one on CPU 1 (pmdt-recv's and
    // pmdt-send's CPUs there).
    w.args(["--json", "--lcores", &ctx.wanem_beside.cpu().to_string()])
        .args([
            "--vdev",
            &format!("net_af_packet0,iface={}", net.root_end('a')),
        ])
        .args([
            "--vdev",
            &format!("net_af_packet1,iface={}", net.root_end('b')),
        ])
        .arg(format!("--eal=--file-prefix={prefix}"))
        .args(&spec.wanem);
    let mut wanem = Child::spawn("wanem", w, logs)?;
    commands.push(format!("{} &", wanem.command));
    wanem.wait_for_output("<->", Duration::from_secs(20))?;
    net.wait_reachable(Duration::from_secs(10))?;
    let port0 = 15500 + (std::process::id() % 500) as usize * 8 + (id % 2) as usize * 4;
    let mut servers = Vec::new();
    for i in 0..spec.flows.len() {
        let mut s = net.exec('b');
        s.args(["taskset", "-c", "0", "iperf3", "-s", "-1", "--forceflush"])
            .args(["-p", &(port0 + i).to_string()]);
        let mut c = Child::spawn(&format!("iperf3-server-{i}"), s, logs)?;
        commands.push(format!("{} &", c.command));
        c.wait_for_output("listening", Duration::from_secs(10))?;
        servers.push(c);
    }
    let started = Instant::now();
    let mut clients = Vec::new();
    for (i, f) in spec.flows.iter().enumerate() {
        let at = Duration::from_secs_f64(f.start_s);
        if let Some(wait) = at.checked_sub(started.elapsed()) {
            std::thread::sleep(wait);
        }
        let mut c = net.exec('a');
        c.args([
            "taskset",
            "-c",
            "1",
            "iperf3",
            "-c",
            RECEIVER_IP,
            "-J",
            "-i",
            "1",
        ])
        .args(["-p", &(port0 + i).to_string(), "-C", &f.cc])
        .args(["-t", &format!("{:.0}", (spec.secs - f.start_s).max(1.0))]);
        let child = Child::spawn(&format!("iperf3-client-{i}"), c, logs)?;
        commands.push(format!("sleep {}; {} &", f.start_s, child.command));
        clients.push((child, started.elapsed().as_secs_f64()));
    }
    let timeout = ctx.timeout(Duration::from_secs_f64(spec.secs));
    let mut intervals = Vec::new();
    let mut retransmits = Vec::new();
    for (i, (c, offset)) in clients.iter_mut().enumerate() {
        let st = c
            .wait_timeout(timeout)
            .ok_or_else(|| format!("iperf3 client {i} timed out"))?;
        let j = last_json(&c.stdout_text())
            .ok_or_else(|| format!("iperf3 client {i} exited ({st}) without JSON"))?;
        if let Some(e) = j.get("error").and_then(Value::as_str) {
            return Err(format!("iperf3 client {i} ({}): {e}", spec.flows[i].cc));
        }
        intervals.push(intervals_of(&j, *offset));
        retransmits.push(num(&j, "end.sum_sent.retransmits").unwrap_or(0.0));
    }
    for s in &mut servers {
        s.stop(Duration::from_secs(2));
    }
    wanem.stop(Duration::from_secs(3));
    Ok(Run {
        intervals,
        retransmits,
        wanem: last_json(&wanem.stdout_text()),
        commands: commands.clone(),
    })
}

/// Removes a DPDK process's runtime directory and hugepage files on drop (a
/// pmdt-wanem killed on an error path leaves them).
struct DpdkFiles(String);

impl Drop for DpdkFiles {
    fn drop(&mut self) {
        crate::proc::dpdk_cleanup(&self.0);
    }
}

/// Whether this process runs as root.
fn is_root() -> bool {
    // SAFETY: geteuid takes no arguments, touches no memory of ours and
    // cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The two namespaces and their veth pairs, removed on drop.
struct Namespaces {
    /// A short tag unique on this host (interface names hold 15 bytes).
    tag: String,
}

impl Namespaces {
    fn create(id: u32, commands: &mut Vec<String>) -> Result<Self, String> {
        let net = Namespaces {
            tag: format!("{}x{}", std::process::id() % 100_000, id % 100),
        };
        net.remove();
        let mut steps: Vec<Vec<String>> = Vec::new();
        for (side, ip) in [('a', SENDER_IP), ('b', RECEIVER_IP)] {
            let ns = net.ns(side);
            let (root, inner) = (net.root_end(side), net.inner_end(side));
            let cmd = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
            steps.push(cmd(&format!("ip netns add {ns}")));
            steps.push(cmd(&format!(
                "ip link add {root} type veth peer name {inner} netns {ns}"
            )));
            let mut rmem = cmd(&format!("ip netns exec {ns} sysctl -q -w"));
            rmem.push(format!("net.ipv4.tcp_rmem={TCP_RMEM}"));
            rmem.push(format!("net.ipv4.tcp_wmem={TCP_WMEM}"));
            steps.push(rmem);
            steps.push(cmd(&format!("ip -n {ns} addr add {ip}/24 dev {inner}")));
            for (prefix, dev) in [
                (String::new(), &root),
                (format!("ip netns exec {ns} "), &inner),
            ] {
                steps.push(cmd(&format!(
                    "{prefix}ethtool -K {dev} tso off gso off gro off tx off rx off"
                )));
            }
            steps.push(cmd(&format!("ip link set {root} up")));
            steps.push(cmd(&format!("ip -n {ns} link set {inner} up")));
            steps.push(cmd(&format!("ip -n {ns} link set lo up")));
        }
        for step in steps {
            let out = Command::new(&step[0])
                .args(&step[1..])
                .output()
                .map_err(|e| format!("{}: {e}", step[0]))?;
            commands.push(step.join(" "));
            if !out.status.success() {
                return Err(format!(
                    "`{}` failed: {}",
                    step.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
        Ok(net)
    }

    fn ns(&self, side: char) -> String {
        format!("pmdtb{}{side}", self.tag)
    }

    /// The veth end pmdt-wanem's port uses, in the root namespace.
    fn root_end(&self, side: char) -> String {
        format!("pbw{}{side}", self.tag)
    }

    /// The veth end inside the namespace.
    fn inner_end(&self, side: char) -> String {
        format!("pbt{}{side}", self.tag)
    }

    /// A command run inside namespace `side`.
    fn exec(&self, side: char) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns(side)]);
        c
    }

    /// Pings across pmdt-wanem until an answer (ARP resolved, the path up).
    fn wait_reachable(&self, limit: Duration) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < limit {
            let ok = self
                .exec('a')
                .args(["ping", "-c", "1", "-W", "1", RECEIVER_IP])
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false);
            if ok {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(format!(
            "{RECEIVER_IP} unreachable through pmdt-wanem after {} s",
            limit.as_secs()
        ))
    }

    fn remove(&self) {
        for side in ['a', 'b'] {
            // Deleting a namespace deletes its veth end, and with it the pair.
            let _ = Command::new("ip")
                .args(["netns", "del", &self.ns(side)])
                .output();
            let _ = Command::new("ip")
                .args(["link", "del", &self.root_end(side)])
                .output();
        }
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        self.remove();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_counts_the_bits_inside_it() {
        let iv = [(0.0, 1.0, 100.0), (1.0, 2.0, 200.0), (2.0, 3.0, 300.0)];
        assert_eq!(window_bps(&iv, 0.0, 3.0), 200.0);
        // Half of the first interval and all of the second: 50 + 200 bits in 1.5 s.
        assert!((window_bps(&iv, 0.5, 2.0) - 250.0 / 1.5).abs() < 1e-9);
        assert_eq!(window_bps(&iv, 5.0, 6.0), 0.0);
        assert_eq!(window_bps(&iv, 2.0, 2.0), 0.0);
    }

    #[test]
    fn intervals_are_read_from_an_iperf3_report_and_shifted() {
        let j: Value = serde_json::from_str(
            r#"{"intervals": [
                {"sum": {"start": 0, "end": 1.0, "bits_per_second": 5e8}},
                {"sum": {"start": 1.0, "end": 2.0, "bits_per_second": 6e8}},
                {"streams": []}
            ], "end": {"sum_sent": {"retransmits": 7}}}"#,
        )
        .unwrap();
        assert_eq!(
            intervals_of(&j, 2.0),
            vec![(2.0, 3.0, 5e8), (3.0, 4.0, 6e8)]
        );
        assert!(intervals_of(&serde_json::json!({}), 0.0).is_empty());
    }
}
