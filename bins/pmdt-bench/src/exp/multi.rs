//! Point-to-multipoint (RMDT's multi-destination transfer): one `pmdt-send --multi`
//! to 1, 2, 4, 8, 16 ordinary `pmdt-recv` on this host over kernel UDP, the same
//! bytes to each: aggregate goodput (bytes delivered to all receivers over the
//! sender's time), the slowest receiver, the sender's CPU, and the payload copies
//! into packet memory per byte sent (the goal: one, whatever the number).

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cell::{CellSpec, RunErr, Sample};
use crate::ctx::Ctx;
use crate::exp::{bytes_arg, expect_bytes};
use crate::machine::Machine;
use crate::pmdt_pair::{last_json, num};
use crate::proc::Child;
use crate::report::{Ratio, Report};

/// Tools this experiment needs.
pub const TOOLS: crate::exp::Tools = (&["pmdt-send", "pmdt-recv"], &[]);

/// The metrics its table shows beside the primary figure.
pub const COLUMNS: &[&str] = &[
    "slowest_gbps",
    "send_cpu_s",
    "copies_per_byte",
    "receivers_failed",
    "retransmitted",
];

/// Runs it.
pub fn run(ctx: &Ctx, m: &Machine) -> Report {
    const E: &str = "multi";
    let mut r = Report::new(
        E,
        "one sender to N receivers (--multi), kernel UDP on one host",
        m,
        ctx.quick,
        ctx.repeat,
    );
    r.columns(COLUMNS);
    let (counts, bytes): (&[usize], u64) = if ctx.quick {
        (&[1, 2], 16 << 20)
    } else {
        (&[1, 2, 4, 8, 16], 256 << 20)
    };
    for &n in counts {
        r.cells.push(
            CellSpec::new(format!("receivers-{n}"), "aggregate_gbps")
                .param("receivers", n)
                .param("bytes_each", bytes)
                .run(ctx.repeat, |_| run_once(ctx, n, bytes)),
        );
    }
    let g = "aggregate_gbps";
    let names: Vec<String> = r.cells.iter().skip(1).map(|c| c.name.clone()).collect();
    for n in names {
        r.ratios.push(Ratio::of(
            &format!("{n} aggregate / one receiver"),
            &r.cells,
            (&n, g),
            ("receivers-1", g),
        ));
    }
    r.notes = vec![
        "Every receiver is its own pmdt-recv process on 127.0.0.1 (kernel UDP backend); one receiver runs without --multi (the baseline). On 2 cores the receivers compete with the sender for CPU: the aggregate measures the sender's one-copy fan-out, the slowest column the receivers.".into(),
        "copies_per_byte: bytes the sender copied into packet memory over bytes written to the group, as pmdt-send reports it (1.00 = one copy whatever N).".into(),
    ];
    r
}

fn run_once(ctx: &Ctx, n: usize, bytes: u64) -> Result<Sample, RunErr> {
    let id = ctx.next_id();
    let logs = ctx.logs("multi", id);
    let mut commands = Vec::new();
    let base = 30000 + (std::process::id() % 1000) as u16 * 20;
    let mut receivers = Vec::new();
    for i in 0..n {
        let mut c = ctx.tool_cmd("pmdt-recv");
        c.args(["--backend", "udp", "--bind"])
            .arg(format!("127.0.0.1:{}", base + i as u16))
            .args(["-N", "1", "--no-hash", "--json"]);
        let mut child =
            Child::spawn(&format!("recv{i}"), c, &logs).map_err(|e| (e, commands.clone()))?;
        commands.push(format!("{} &", child.command));
        child
            .wait_for_output("listening on", Duration::from_secs(30))
            .map_err(|e| (e, commands.clone()))?;
        receivers.push(child);
    }
    let mut s = ctx.tool_cmd("pmdt-send");
    s.args([
        "--backend",
        "udp",
        "--no-hash",
        "--json",
        "-n",
        &bytes_arg(bytes),
    ]);
    if n > 1 {
        s.arg("--multi");
    }
    for i in 0..n {
        s.arg("-c").arg(format!("127.0.0.1:{}", base + i as u16));
    }
    let started = Instant::now();
    let mut send = Child::spawn("send", s, &logs).map_err(|e| (e, commands.clone()))?;
    commands.push(send.command.clone());
    let timeout = ctx.timeout(expect_bytes(bytes * n as u64));
    let status = send.wait_timeout(timeout);
    for r in &mut receivers {
        if r.wait_timeout(Duration::from_secs(5)).is_none() {
            r.stop(Duration::from_secs(3));
        }
    }
    let Some(st) = status else {
        send.stop(Duration::from_secs(5));
        return Err((
            format!("timed out after {:.0} s", timeout.as_secs_f64()),
            commands,
        ));
    };
    let doc = last_json(&send.stdout_text()).ok_or_else(|| {
        (
            format!(
                "pmdt-send exited ({st}) without JSON: {}",
                send.last_error_line()
            ),
            commands.clone(),
        )
    })?;
    let end = doc.get("end").cloned().unwrap_or(doc);
    let flows: Vec<Value> = end["flows"].as_array().cloned().unwrap_or_default();
    let failed = flows
        .iter()
        .filter(|f| f.get("error").is_some_and(|e| !e.is_null()))
        .count();
    if !st.success() && failed == flows.len() {
        return Err((
            format!("pmdt-send exited ({st}): {}", send.last_error_line()),
            commands,
        ));
    }
    let seconds = num(&end, "seconds").unwrap_or(started.elapsed().as_secs_f64());
    let delivered: f64 = flows.iter().filter_map(|f| num(f, "bytes")).sum();
    let slowest = flows
        .iter()
        .filter_map(|f| num(f, "goodput_bps"))
        .fold(f64::MAX, f64::min);
    let copies = send
        .stderr_text()
        .lines()
        .find_map(|l| {
            let i = l.find(" copies per byte")?;
            l[..i].rsplit('(').next()?.trim().parse::<f64>().ok()
        })
        .unwrap_or(1.0); // one flow: the ordinary path, one copy
    let mut sample = Sample {
        commands,
        ..Default::default()
    };
    sample
        .set("aggregate_gbps", delivered * 8.0 / seconds.max(1e-9) / 1e9)
        .set(
            "slowest_gbps",
            if slowest == f64::MAX {
                0.0
            } else {
                slowest / 1e9
            },
        )
        .set("send_cpu_s", send.cpu_seconds())
        .set("copies_per_byte", copies)
        .set("receivers_failed", failed as f64)
        .set(
            "retransmitted",
            num(&end, "packets_retransmitted").unwrap_or(0.0),
        )
        .set("seconds", seconds);
    Ok(sample)
}
