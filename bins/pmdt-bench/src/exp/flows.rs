//! Many flows with default settings: 1, 2, 16, 256, 1000 connections from one
//! pmdt-send to one pmdt-recv, the same total bytes split among them: aggregate
//! goodput vs one flow, Jain's index, completion. Beside the larger counts, the
//! same flows for a fixed time (iperf3's `-P N -t T`): how they share the link
//! while every one of them has data; and those timed cells again in pipeline
//! mode (`--pipeline`, an I/O lcore per side and the flows' threads handing
//! data over rings: the mode several queues run in).

use std::time::Duration;

use crate::cell::CellSpec;
use crate::ctx::Ctx;
use crate::exp::{bytes_arg, expect_bytes, pmdt_cell, secs_arg};
use crate::machine::Machine;
use crate::pmdt_pair::{Link, PairSpec};
use crate::report::{Ratio, Report};

/// The fewest flows that also run for a fixed time.
const TIMED_FROM: usize = 16;
/// How long the timed cells send, seconds.
const TIMED_SECS: f64 = 5.0;
/// The fewest flows that also run timed in pipeline mode.
const PIPELINE_FROM: usize = 256;

/// Tools this experiment needs.
pub const TOOLS: crate::exp::Tools = (&["pmdt-send", "pmdt-recv"], &[]);

/// The metrics its table shows beside the primary figure.
pub const COLUMNS: &[&str] = &[
    "jain",
    "flow_min_gbps",
    "flow_max_gbps",
    "completion_max_s",
    "flows_failed",
    "retransmitted",
];

/// Runs it.
pub fn run(ctx: &Ctx, m: &Machine) -> Report {
    const E: &str = "flows";
    let mut r = Report::new(E, "many flows, default settings", m, ctx.quick, ctx.repeat);
    r.columns(COLUMNS);
    let (counts, total): (&[usize], u64) = if ctx.quick {
        (&[1, 2], 32 << 20)
    } else {
        (&[1, 2, 16, 256, 1000], 1 << 30)
    };
    // `n` flows from one pmdt-send with `send` (the amount or the time),
    // `both` given to both tools.
    let cell = |n: usize, send: &[&str], both: &[&str], expected: Duration, spec: CellSpec| {
        let mut args = vec!["-P".to_string(), n.to_string()];
        args.extend(send.iter().chain(both).map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut pair = PairSpec::new(Link::Memif(1500), &args, expected);
        pair.recv_args = both.iter().map(|a| a.to_string()).collect();
        pair.connections = n;
        pmdt_cell(ctx, E, spec.param("flows", n), &pair, |_, _| {})
    };
    for &n in counts {
        let per = (total / n as u64).max(64 << 10);
        // -n is the total over the flows (iperf3's).
        let bytes = per * n as u64;
        r.cells.push(cell(
            n,
            &["-n", &bytes_arg(bytes)],
            &[],
            expect_bytes(bytes),
            CellSpec::new(format!("flows-{n}"), "goodput_gbps").param("bytes_per_flow", per),
        ));
    }
    let names: Vec<String> = r.cells.iter().skip(1).map(|c| c.name.clone()).collect();
    if !ctx.quick {
        for &n in counts.iter().filter(|&&n| n >= TIMED_FROM) {
            r.cells.push(cell(
                n,
                &["-t", &secs_arg(TIMED_SECS)],
                &[],
                Duration::from_secs_f64(TIMED_SECS),
                CellSpec::new(format!("flows-{n}-t{TIMED_SECS}"), "goodput_gbps")
                    .param("seconds", TIMED_SECS),
            ));
        }
        for &n in counts.iter().filter(|&&n| n >= PIPELINE_FROM) {
            r.cells.push(cell(
                n,
                &["-t", &secs_arg(TIMED_SECS)],
                &["--pipeline"],
                Duration::from_secs_f64(TIMED_SECS),
                CellSpec::new(format!("flows-pipeline-{n}-t{TIMED_SECS}"), "goodput_gbps")
                    .param("seconds", TIMED_SECS)
                    .param("mode", "pipeline"),
            ));
        }
    }
    let g = "goodput_gbps";
    for n in names {
        let ratio = Ratio::of(
            &format!("{n} aggregate / one flow"),
            &r.cells,
            (&n, g),
            ("flows-1", g),
        );
        r.ratios.push(ratio);
    }
    r.notes = vec![
        "Default transport settings (window, controller); the total is split evenly over the flows; a cell that timed out says so with the interrupted sender's figure.".into(),
        "jain: Jain's index of the flows' goodputs, each flow's bytes over its own time. One thread serves every flow on each side (run to completion since session 79, the pipeline cells since session 80), so the flows of a fixed-size cell (`-n`) start together; with a thread per flow (`--thread-per-flow`) 256 threads on 2 cores start over hundreds of milliseconds and the index of a fixed-size cell also measures when each thread first ran. The timed cells (`-t`, every flow sending for the same time, as iperf3 -P is usually run) measure how the link is shared among flows that all have data.".into(),
        "flows-pipeline-*: the timed cells with `--pipeline` on both tools (an I/O lcore per side, pinned as the others' run-to-completion loops are; the flows' threads share the two CPUs with the peer's I/O lcore). flows_failed counts flows that ended in an error (before session 77, a third of 800-1000 pipeline flows timed out: writers short of packet memory napped in a busy loop).".into(),
    ];
    r
}
