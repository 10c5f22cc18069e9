//! The raw link limit: dpdk-testpmd txonly → rxonly over memif, two processes,
//! forwarding lcores on different cores (the ANCHORS.md command, with unique
//! file prefixes and socket).

use std::process::Command;
use std::time::{Duration, Instant};

use crate::cell::Sample;
use crate::ctx::Ctx;
use crate::proc::{self, Child};

/// Runs txonly → rxonly with `frame`-byte packets for `secs` seconds.
pub fn run(
    ctx: &Ctx,
    experiment: &str,
    frame: u32,
    secs: f64,
) -> Result<Sample, crate::cell::RunErr> {
    let id = ctx.next_id();
    let tag = ctx.tag(id);
    let logs = ctx.logs(experiment, id);
    let sock = format!("/tmp/pmdt-bench-{tag}-raw.sock");
    let (prx, ptx) = (format!("{tag}r"), format!("{tag}s"));
    let mut commands = Vec::new();
    // Two testpmd processes need ~2 × 80 MiB of hugepages; with fewer free (other
    // DPDK processes hold them) run without, as pmdt's tools do, and say so.
    let no_huge = free_hugepages() < 160;
    // Line-buffered stdout (stdbuf) so the runner sees the statistics as they come.
    let stdbuf = proc::which("stdbuf").is_some();
    let testpmd = |main: &str, prefix: &str, vdev: String, mode: &str| {
        let mut c = if stdbuf {
            let mut c = Command::new("stdbuf");
            c.args(["-oL", "dpdk-testpmd"]);
            c
        } else {
            Command::new("dpdk-testpmd")
        };
        c.args(["-l", "0,1", "--main-lcore", main, "--no-pci"]);
        if no_huge {
            c.args(["--no-huge", "-m", "512"]);
        }
        c.arg(format!("--file-prefix={prefix}"))
            .arg(format!("--vdev={vdev}"))
            .args(["--", &format!("--forward-mode={mode}")])
            .args(["--total-num-mbufs=32768", "--stats-period", "1", "-a"]);
        c
    };
    let mut rx_cmd = testpmd(
        "0",
        &prx,
        format!("net_memif0,role=server,socket={sock}"),
        "rxonly",
    );
    if frame > 1500 {
        rx_cmd
            .arg("--mbuf-size=16384")
            .arg(format!("--max-pkt-len={}", frame + 18));
    }
    let mut tx_cmd = testpmd(
        "1",
        &ptx,
        format!("net_memif1,role=client,socket={sock}"),
        "txonly",
    );
    tx_cmd.arg(format!("--txpkts={frame}"));
    let result = (|| {
        let mut rx = Child::spawn("testpmd-rx", rx_cmd, &logs)?;
        commands.push(format!("{} &", rx.command));
        // memif sockets are abstract (no file): wait for the forwarding banner, or
        // a few seconds if stdout is buffered, as the ANCHORS.md recipe does.
        let up = Instant::now() + Duration::from_secs(4);
        while !(rx.stdout_text().contains("packet forwarding") || Instant::now() > up) {
            if rx.try_wait().is_some() {
                return Err(format!("testpmd rxonly exited: {}", rx.last_error_line()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut tx = Child::spawn("testpmd-tx", tx_cmd, &logs)?;
        commands.push(format!(
            "{} &   # stopped after {secs} s of traffic",
            tx.command
        ));
        // Measure from the first report with traffic on (the link takes a moment).
        let flowing = Instant::now() + Duration::from_secs(15);
        let mut skip = 0;
        loop {
            let v = values_after(&rx.stdout_text(), "Rx-pps:");
            if v.iter().any(|x| *x > 0.0) {
                skip = v.len();
                break;
            }
            if !stdbuf || Instant::now() > flowing {
                break;
            }
            if let Some(st) = tx.try_wait() {
                return Err(format!(
                    "testpmd txonly exited early ({st}): {}",
                    tx.last_error_line()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if let Some(st) = tx.wait_timeout(Duration::from_secs_f64(secs)) {
            return Err(format!(
                "testpmd txonly exited early ({st}): {}",
                tx.last_error_line()
            ));
        }
        tx.stop(Duration::from_secs(5));
        rx.stop(Duration::from_secs(5));
        Ok((rx.stdout_text(), skip))
    })();
    proc::dpdk_cleanup(&prx);
    proc::dpdk_cleanup(&ptx);
    let (text, skip) = result.map_err(|e| (e, commands.clone()))?;
    let pps = values_after(&text, "Rx-pps:");
    let bps = values_after(&text, "Rx-bps:");
    // Skip the reports before traffic flowed steadily (and the first, partial, one).
    let steady = |v: Vec<f64>| -> Vec<f64> {
        v.into_iter()
            .skip(skip.max(1))
            .filter(|x| *x > 0.0)
            .collect()
    };
    let (pps, bps) = (steady(pps), steady(bps));
    if pps.is_empty() {
        return Err((
            "testpmd rxonly reported no Rx-pps above 0 (see its log)".into(),
            commands,
        ));
    }
    let mut s = Sample {
        commands,
        ..Default::default()
    };
    if no_huge {
        s.notes
            .push("raw memif: too few free hugepages, testpmd ran with --no-huge".into());
    }
    s.set("mpps", median(&pps) / 1e6)
        .set("goodput_gbps", median(&bps) / 1e9)
        .set("frame_bytes", frame as f64);
    Ok(s)
}

/// Every number following `key` in `text`.
pub fn values_after(text: &str, key: &str) -> Vec<f64> {
    text.match_indices(key)
        .filter_map(|(i, _)| {
            text[i + key.len()..]
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
        })
        .collect()
}

/// Median of `v` (NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Free 2 MiB hugepages now.
fn free_hugepages() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("HugePages_Free:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
