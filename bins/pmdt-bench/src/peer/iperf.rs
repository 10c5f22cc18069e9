//! Kernel TCP and UDP on loopback: iperf3 with `-J`, client on core 0 and server
//! on core 1 (`-A 0,1`).

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::cell::Sample;
use crate::ctx::Ctx;
use crate::pmdt_pair::{last_json, num};
use crate::proc::Child;

/// Which protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// TCP.
    Tcp,
    /// UDP with datagrams of this many bytes, unlimited rate.
    Udp(u32),
}

/// Runs one iperf3 test of `secs` seconds.
pub fn run(
    ctx: &Ctx,
    experiment: &str,
    proto: Proto,
    secs: f64,
) -> Result<Sample, crate::cell::RunErr> {
    let id = ctx.next_id();
    let logs = ctx.logs(experiment, id);
    let port = (15000 + (std::process::id() % 1000) * 5 + id % 5).to_string();
    let mut commands = Vec::new();
    let mut srv = Command::new("iperf3");
    srv.args(["-s", "-1", "--forceflush", "-p", &port]);
    let mut cli = Command::new("iperf3");
    cli.args(["-c", "127.0.0.1", "-p", &port, "-J", "-A", "0,1"])
        .args(["-t", &format!("{secs}")]);
    if let Proto::Udp(len) = proto {
        cli.args(["-u", "-b", "0", "-l", &len.to_string()]);
    }
    let json = (|| {
        let mut s = Child::spawn("iperf3-server", srv, &logs)?;
        commands.push(format!("{} &", s.command));
        s.wait_for_output("listening", Duration::from_secs(10))?;
        let mut c = Child::spawn("iperf3-client", cli, &logs)?;
        commands.push(c.command.clone());
        let st = c
            .wait_timeout(ctx.timeout(Duration::from_secs_f64(secs)))
            .ok_or_else(|| "iperf3 client timed out".to_string())?;
        s.stop(Duration::from_secs(2));
        let j = last_json(&c.stdout_text())
            .ok_or_else(|| format!("iperf3 exited ({st}) without JSON: {}", c.last_error_line()))?;
        if let Some(e) = j.get("error").and_then(Value::as_str) {
            return Err(format!("iperf3: {e}"));
        }
        Ok(j)
    })()
    .map_err(|e| (e, commands.clone()))?;
    let mut s = Sample {
        commands,
        ..Default::default()
    };
    match proto {
        Proto::Tcp => {
            let bps = num(&json, "end.sum_received.bits_per_second").unwrap_or(0.0);
            s.set("goodput_gbps", bps / 1e9);
            if let Some(r) = num(&json, "end.sum_sent.retransmits") {
                s.set("retransmitted", r);
            }
        }
        Proto::Udp(len) => {
            // Delivered rate: the receiver's figure where iperf3 gives one, else the
            // sender's less the loss it reports.
            let lost = num(&json, "end.sum.lost_percent").unwrap_or(0.0);
            let bps = num(&json, "end.sum_received.bits_per_second").unwrap_or_else(|| {
                num(&json, "end.sum.bits_per_second").unwrap_or(0.0) * (1.0 - lost / 100.0)
            });
            s.set("goodput_gbps", bps / 1e9)
                .set("lost_pct", lost)
                .set("mpps", bps / 8.0 / len as f64 / 1e6);
        }
    }
    Ok(s)
}
