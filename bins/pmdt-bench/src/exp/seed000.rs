//! Seed 000 (sliding-window lab over DPDK, 1 KiB packets): flow completion time
//! and per-packet latency vs flow size; bandwidth vs window with `--cc fixed`;
//! several flows: aggregate, per-flow and Jain's index.

use std::time::Duration;

use crate::cell::CellSpec;
use crate::ctx::Ctx;
use crate::exp::{bytes_arg, expect_bytes, pmdt_cell, secs_arg};
use crate::machine::Machine;
use crate::pmdt_pair::{Link, PairSpec};
use crate::report::Report;

/// Tools this experiment needs.
pub const TOOLS: crate::exp::Tools = (&["pmdt-send", "pmdt-recv"], &[]);

/// UDP payload: pmdt's 40-byte data header + 1 KiB of data.
const PAYLOAD: &str = "1064";

/// The metrics its table shows beside the primary figure.
pub const COLUMNS: &[&str] = &[
    "goodput_gbps",
    "rtt_p50_us",
    "rtt_p99_us",
    "jain",
    "flow_min_gbps",
    "retransmitted",
];

/// Runs it.
pub fn run(ctx: &Ctx, m: &Machine) -> Report {
    const E: &str = "seed000";
    let mut r = Report::new(
        E,
        "sliding window over DPDK, 1 KiB packets",
        m,
        ctx.quick,
        ctx.repeat,
    );
    r.columns(COLUMNS);
    let (sizes, windows, flows, secs): (&[u64], &[u64], &[usize], f64) = if ctx.quick {
        (&[10, 1000], &[16, 256], &[1, 4], 1.0)
    } else {
        (
            &[1, 10, 100, 1000, 10_000, 100_000],
            &[1, 4, 16, 50, 64, 256],
            &[1, 2, 4, 8, 16, 32, 64],
            5.0,
        )
    };
    for &pkts in sizes {
        let bytes = pkts * 1024;
        let pair = PairSpec::new(
            Link::Memif(1500),
            &["-n", &bytes_arg(bytes), "--payload", PAYLOAD],
            expect_bytes(bytes) + Duration::from_secs(1),
        );
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(format!("fct-{pkts}pkt"), "fct_ms").param("packets", pkts),
            &pair,
            |_, s| {
                // The flow's own connect-to-close time (the summary's wall time is
                // sampled every 100 ms).
                if let Some(v) = s.metrics.get("completion_max_s").copied() {
                    s.set("fct_ms", v * 1e3);
                }
            },
        ));
    }
    for &w in windows {
        let ws = w.to_string();
        let pair = PairSpec::new(
            Link::Memif(1500),
            &[
                "-t",
                &secs_arg(secs),
                "--payload",
                PAYLOAD,
                "--cc",
                "fixed",
                "--window",
                &ws,
            ],
            Duration::from_secs_f64(secs),
        );
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(format!("window-{w}"), "goodput_gbps")
                .param("window", w)
                .param("cc", "fixed"),
            &pair,
            |_, _| {},
        ));
    }
    for &n in flows {
        let ns = n.to_string();
        let mut pair = PairSpec::new(
            Link::Memif(1500),
            &[
                "-t",
                &secs_arg(secs),
                "-P",
                &ns,
                "--payload",
                PAYLOAD,
                "--cc",
                "fixed",
                "--window",
                "50",
            ],
            Duration::from_secs_f64(secs),
        );
        pair.connections = n;
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(format!("flows-{n}"), "goodput_gbps")
                .param("flows", n)
                .param("window", 50)
                .param("cc", "fixed"),
            &pair,
            |_, _| {},
        ));
    }
    r.references = vec![
        "seed 000 (10 GbE NIC, window 50, 1 KiB packets): 9.2 of 10 Gbit/s; per-packet latency 30–40 µs (ping ~150 µs).".into(),
    ];
    r.notes = vec![
        "fct-*: the flow's time from connection established to closed, as pmdt-send's per-flow summary gives it (1 KiB of data per packet, default window and controller); rtt_p50_us is the per-packet data→ack latency.".into(),
        "window-* and flows-*: time-limited sends (-t), --cc fixed; flows-* use window 50 like the seed.".into(),
    ];
    r
}
