//! QUIC over loopback: the `pmdt-bench-quic` harness (quinn, TLS 1.3 with the ring
//! provider, client and server pinned to different cores in one process).

use std::process::Command;
use std::time::Duration;

use crate::cell::Sample;
use crate::ctx::Ctx;
use crate::pmdt_pair::{last_json, num};
use crate::proc::Child;

/// Uploads `bytes` over one QUIC stream.
pub fn run(ctx: &Ctx, experiment: &str, bytes: u64) -> Result<Sample, crate::cell::RunErr> {
    let id = ctx.next_id();
    let logs = ctx.logs(experiment, id);
    let mut cmd = Command::new(ctx.quic_peer());
    cmd.args(["--bytes", &bytes.to_string(), "--json"]);
    let mut commands = Vec::new();
    let j = (|| {
        let mut c = Child::spawn("quic", cmd, &logs)?;
        commands.push(c.command.clone());
        let expected = Duration::from_secs_f64(bytes as f64 * 8.0 / 2e9);
        let Some(st) = c.wait_timeout(ctx.timeout(expected)) else {
            c.stop(Duration::from_secs(1));
            return Err("pmdt-bench-quic timed out".to_string());
        };
        if !st.success() {
            return Err(format!(
                "pmdt-bench-quic exited ({st}): {}",
                c.last_error_line()
            ));
        }
        last_json(&c.stdout_text()).ok_or_else(|| "pmdt-bench-quic printed no JSON".to_string())
    })()
    .map_err(|e| (e, commands.clone()))?;
    let mut s = Sample {
        commands,
        ..Default::default()
    };
    s.set("goodput_gbps", num(&j, "goodput_bps").unwrap_or(0.0) / 1e9)
        .set("bytes", num(&j, "bytes").unwrap_or(0.0))
        .set("seconds", num(&j, "seconds").unwrap_or(0.0));
    Ok(s)
}
