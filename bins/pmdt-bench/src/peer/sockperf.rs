//! Small-message round trips over kernel UDP on loopback: `sockperf ping-pong`,
//! server on core 1, client on core 0. sockperf reports half the round trip; the
//! sample keeps that and the full round trip.

use std::process::Command;
use std::time::Duration;

use crate::cell::Sample;
use crate::ctx::Ctx;
use crate::peer::testpmd::values_after;
use crate::proc::Child;

/// Runs ping-pong with `msg`-byte messages for `secs` seconds.
pub fn run(
    ctx: &Ctx,
    experiment: &str,
    msg: u32,
    secs: f64,
) -> Result<Sample, crate::cell::RunErr> {
    let id = ctx.next_id();
    let logs = ctx.logs(experiment, id);
    let port = (11000 + (std::process::id() % 1000) * 3 + id % 3).to_string();
    let mut commands = Vec::new();
    let mut srv = Command::new("taskset");
    srv.args([
        "-c",
        "1",
        "sockperf",
        "server",
        "-i",
        "127.0.0.1",
        "-p",
        &port,
    ]);
    let mut cli = Command::new("taskset");
    cli.args([
        "-c",
        "0",
        "sockperf",
        "ping-pong",
        "-i",
        "127.0.0.1",
        "-p",
        &port,
    ])
    .args([
        "-t",
        &format!("{}", secs.ceil() as u64),
        "-m",
        &msg.to_string(),
    ]);
    let text = (|| {
        let mut s = Child::spawn("sockperf-server", srv, &logs)?;
        commands.push(format!("{} &", s.command));
        s.wait_for_output("sockperf", Duration::from_secs(10))?;
        std::thread::sleep(Duration::from_millis(300));
        let mut c = Child::spawn("sockperf-client", cli, &logs)?;
        commands.push(c.command.clone());
        let st = c
            .wait_timeout(ctx.timeout(Duration::from_secs_f64(secs)))
            .ok_or_else(|| "sockperf client timed out".to_string())?;
        s.stop(Duration::from_secs(2));
        if !st.success() {
            return Err(format!("sockperf exited ({st}): {}", c.last_error_line()));
        }
        Ok(c.stdout_text() + &c.stderr_text())
    })()
    .map_err(|e| (e, commands.clone()))?;
    let p50 = values_after(&text, "percentile 50.000 =");
    let p99 = values_after(&text, "percentile 99.000 =");
    let Some(&half50) = p50.first() else {
        return Err(("sockperf printed no 50th percentile".into(), commands));
    };
    let mut s = Sample {
        commands,
        ..Default::default()
    };
    s.set("rtt_p50_us", 2.0 * half50)
        .set("half_rtt_p50_us", half50);
    if let Some(&h) = p99.first() {
        s.set("rtt_p99_us", 2.0 * h).set("half_rtt_p99_us", h);
    }
    Ok(s)
}
