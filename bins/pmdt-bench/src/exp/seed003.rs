//! Seed 003 (RMDT over DPDK): raw send/receive vs the transport on DPDK vs the
//! transport on kernel UDP, at the same frame size (1500).

use crate::cell::CellSpec;
use crate::ctx::Ctx;
use crate::exp::{bytes_arg, expect_bytes, pmdt_cell};
use crate::machine::Machine;
use crate::peer::testpmd;
use crate::pmdt_pair::{Link, PairSpec};
use crate::report::{Ratio, Report};

/// Tools this experiment needs.
pub const TOOLS: crate::exp::Tools = (&["pmdt-send", "pmdt-recv"], &["dpdk-testpmd"]);

/// The metrics its table shows beside the primary figure.
pub const COLUMNS: &[&str] = &[
    "mpps",
    "retransmitted",
    "rtt_p50_us",
    "send_io_load",
    "recv_io_load",
];

/// Runs it.
pub fn run(ctx: &Ctx, m: &Machine) -> Report {
    const E: &str = "seed003";
    let mut r = Report::new(
        E,
        "raw DPDK vs transport on DPDK vs transport on kernel UDP",
        m,
        ctx.quick,
        ctx.repeat,
    );
    r.columns(COLUMNS);
    let (bytes, secs) = if ctx.quick {
        (32u64 << 20, 2.0)
    } else {
        (2u64 << 30, 8.0)
    };
    let g = "goodput_gbps";
    r.cells.push(
        CellSpec::new("raw-dpdk-memif", g)
            .param("frame", 1500)
            .run(ctx.repeat, |_| testpmd::run(ctx, E, 1500, secs)),
    );
    for (name, link) in [
        ("transport-dpdk", Link::Memif(1500)),
        ("transport-kernel-udp", Link::Udp),
    ] {
        let pair = PairSpec::new(link, &["-n", &bytes_arg(bytes)], expect_bytes(bytes));
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(name, g)
                .param("link", link.label())
                .param("bytes", bytes),
            &pair,
            |_, _| {},
        ));
    }
    let c = &r.cells;
    r.ratios = vec![
        Ratio::of(
            "transport on DPDK / raw DPDK",
            c,
            ("transport-dpdk", g),
            ("raw-dpdk-memif", g),
        ),
        Ratio::of(
            "transport on kernel UDP / transport on DPDK",
            c,
            ("transport-kernel-udp", g),
            ("transport-dpdk", g),
        ),
    ];
    r.references = vec![
        "seed 003 (RMDT, 10 GbE NIC): raw DPDK receive 10 Gbit/s (line rate), RMDT on DPDK 8 Gbit/s peak, RMDT on Linux UDP 6 Gbit/s: ratios 0.8 and 0.75.".into(),
    ];
    r.notes =
        vec!["Same pinning as `peers`; memif stands in for the NIC (no line rate here).".into()];
    r
}
