//! Seed 002 (DPDK vs kernel client/server): N concurrent clients (connections of
//! one pmdt-send) × packets per client; per-client latency and bandwidth, the
//! server's CPU as the OS sees it and as the load estimator sees it, its memory;
//! DPDK backend vs kernel-UDP backend.

use serde_json::Value;

use crate::cell::CellSpec;
use crate::ctx::Ctx;
use crate::exp::{bytes_arg, expect_bytes, pmdt_cell};
use crate::machine::Machine;
use crate::peer::testpmd::median;
use crate::pmdt_pair::{num, Link, PairSpec};
use crate::report::Report;

/// Tools this experiment needs.
pub const TOOLS: crate::exp::Tools = (&["pmdt-send", "pmdt-recv"], &[]);

/// The metrics its table shows beside the primary figure.
pub const COLUMNS: &[&str] = &[
    "client_median_mbps",
    "client_rtt_p50_us",
    "completion_max_s",
    "server_cpu_os",
    "recv_io_load",
    "server_rss_mib",
    "flows_failed",
];

/// Runs it.
pub fn run(ctx: &Ctx, m: &Machine) -> Report {
    const E: &str = "seed002";
    let mut r = Report::new(
        E,
        "concurrent clients, DPDK vs kernel UDP",
        m,
        ctx.quick,
        ctx.repeat,
    );
    r.columns(COLUMNS);
    let (clients, packets): (&[usize], &[u64]) = if ctx.quick {
        (&[10], &[100])
    } else {
        (&[10, 100, 1000], &[100, 1000])
    };
    for link in [Link::Memif(1500), Link::Udp] {
        for &n in clients {
            for &p in packets {
                let per = p * 1024;
                let mut pair = PairSpec::new(
                    link,
                    &[
                        "-P",
                        &n.to_string(),
                        "-n", // the total over the clients (iperf3's)
                        &bytes_arg(per * n as u64),
                        "--payload",
                        "1064",
                    ],
                    expect_bytes(per * n as u64),
                );
                pair.connections = n;
                r.cells.push(pmdt_cell(
                    ctx,
                    E,
                    CellSpec::new(format!("{}-{n}x{p}", link.label()), "goodput_gbps")
                        .param("link", link.label())
                        .param("clients", n)
                        .param("packets", p),
                    &pair,
                    |res, s| {
                        let flows = res.send.get("flows").and_then(Value::as_array);
                        let per_flow = |k: &str| -> Vec<f64> {
                            flows
                                .map(|f| f.iter().filter_map(|x| num(x, k)).collect())
                                .unwrap_or_default()
                        };
                        let g = per_flow("goodput_bps");
                        if !g.is_empty() {
                            s.set("client_median_mbps", median(&g) / 1e6);
                        }
                        let rtt = per_flow("rtt_us.p50");
                        if !rtt.is_empty() {
                            s.set("client_rtt_p50_us", median(&rtt));
                        }
                        if res.recv_wall_s > 0.0 {
                            s.set("server_cpu_os", res.recv_cpu_s / res.recv_wall_s);
                        }
                        if res.recv_rss_kb > 0 {
                            s.set("server_rss_mib", res.recv_rss_kb as f64 / 1024.0);
                        }
                    },
                ));
            }
        }
    }
    r.notes = vec![
        "A client is one connection of one pmdt-send process (-P N); each sends `packets` × 1 KiB.".into(),
        "server_cpu_os: the receiver's user+system CPU seconds over its wall time from the sender's start (1.0 = one core; a polling DPDK I/O loop keeps its core busy); recv_io_load: pmdt's load estimator on the receiver's I/O core; server_rss_mib: its peak RSS (hugepages not counted).".into(),
    ];
    r.references = vec![
        "seed 002: DPDK vs kernel client/server with 10, 100, 1000 concurrent clients.".into(),
    ];
    r
}
