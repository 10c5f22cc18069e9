//! Many flows with default settings: 1, 2, 16, 256, 1000 connections from one
//! pmdt-send to one pmdt-recv, the same total bytes split among them: aggregate
//! goodput vs one flow, Jain's index, completion.

use crate::cell::CellSpec;
use crate::ctx::Ctx;
use crate::exp::{bytes_arg, expect_bytes, pmdt_cell};
use crate::machine::Machine;
use crate::pmdt_pair::{Link, PairSpec};
use crate::report::{Ratio, Report};

/// Tools this experiment needs.
pub const TOOLS: crate::exp::Tools = (&["pmdt-send", "pmdt-recv"], &[]);

/// Runs it.
pub fn run(ctx: &Ctx, m: &Machine) -> Report {
    const E: &str = "flows";
    let mut r = Report::new(E, "many flows, default settings", m, ctx.quick, ctx.repeat);
    r.columns(&[
        "jain",
        "flow_min_gbps",
        "flow_max_gbps",
        "completion_max_s",
        "flows_failed",
        "retransmitted",
    ]);
    let (counts, total): (&[usize], u64) = if ctx.quick {
        (&[1, 2], 32 << 20)
    } else {
        (&[1, 2, 16, 256, 1000], 1 << 30)
    };
    for &n in counts {
        let per = (total / n as u64).max(64 << 10);
        let mut pair = PairSpec::new(
            Link::Memif(1500),
            // -n is the total over the flows (iperf3's).
            &["-P", &n.to_string(), "-n", &bytes_arg(per * n as u64)],
            expect_bytes(per * n as u64),
        );
        pair.connections = n;
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(format!("flows-{n}"), "goodput_gbps")
                .param("flows", n)
                .param("bytes_per_flow", per),
            &pair,
            |_, _| {},
        ));
    }
    let g = "goodput_gbps";
    let names: Vec<String> = r.cells.iter().skip(1).map(|c| c.name.clone()).collect();
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
    ];
    r
}
