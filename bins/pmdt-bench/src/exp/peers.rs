//! Peers, one run, same pinning: raw memif (dpdk-testpmd), pmdt over memif (MTU
//! 1500 and 9000), pmdt's kernel-UDP backend, kernel TCP and UDP (iperf3), QUIC
//! (quinn harness), and small-message round trips (pmdt vs sockperf).

use std::time::Duration;

use crate::cell::CellSpec;
use crate::ctx::Ctx;
use crate::exp::{bytes_arg, expect_bytes, pmdt_cell};
use crate::machine::Machine;
use crate::peer::{iperf, quic, sockperf, testpmd};
use crate::pmdt_pair::{Link, PairSpec};
use crate::report::{Ratio, Report};

/// Tools this experiment needs (pmdt's own, peers on PATH).
pub const TOOLS: crate::exp::Tools = (
    &["pmdt-send", "pmdt-recv", "pmdt-bench-quic"],
    &["dpdk-testpmd", "iperf3", "sockperf", "taskset"],
);

/// Runs it.
pub fn run(ctx: &Ctx, m: &Machine) -> Report {
    const E: &str = "peers";
    let mut r = Report::new(
        E,
        "pmdt beside the tools users would pick instead",
        m,
        ctx.quick,
        ctx.repeat,
    );
    r.columns(&[
        "mpps",
        "rtt_p50_us",
        "rtt_p99_us",
        "retransmitted",
        "lost_pct",
        "send_io_load",
        "recv_io_load",
    ]);
    let (bytes, udp_bytes, secs, pings) = if ctx.quick {
        (64u64 << 20, 32u64 << 20, 2.0, 200u64)
    } else {
        (2u64 << 30, 512u64 << 20, 8.0, 20_000)
    };
    let g = "goodput_gbps";
    r.cells.push(
        CellSpec::new("raw-memif-1500", g)
            .param("tool", "dpdk-testpmd txonly->rxonly")
            .param("frame", 1500)
            .run(ctx.repeat, |_| testpmd::run(ctx, E, 1500, secs)),
    );
    for mtu in [1500u16, 9000] {
        let pair = PairSpec::new(
            Link::Memif(mtu),
            &["-n", &bytes_arg(bytes)],
            expect_bytes(bytes),
        );
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(format!("pmdt-memif-{mtu}"), g)
                .param("mtu", mtu)
                .param("bytes", bytes),
            &pair,
            |_, _| {},
        ));
    }
    let pair = PairSpec::new(
        Link::Udp,
        &["-n", &bytes_arg(udp_bytes)],
        expect_bytes(udp_bytes),
    );
    r.cells.push(pmdt_cell(
        ctx,
        E,
        CellSpec::new("pmdt-kernel-udp", g).param("bytes", udp_bytes),
        &pair,
        |_, _| {},
    ));
    r.cells.push(
        CellSpec::new("iperf3-tcp", g)
            .param("secs", secs)
            .run(ctx.repeat, |_| iperf::run(ctx, E, iperf::Proto::Tcp, secs)),
    );
    r.cells.push(
        CellSpec::new("iperf3-udp-1400", g)
            .param("secs", secs)
            .param("datagram", 1400)
            .run(ctx.repeat, |_| {
                iperf::run(ctx, E, iperf::Proto::Udp(1400), secs)
            }),
    );
    r.cells.push(
        CellSpec::new("quic-quinn", g)
            .param("bytes", bytes)
            .run(ctx.repeat, |_| quic::run(ctx, E, bytes)),
    );
    let rtt = "rtt_p50_us";
    r.cells.push(
        CellSpec::new("sockperf-rtt-64", rtt)
            .param("msg", 64)
            .param("secs", secs)
            .run(ctx.repeat, |_| sockperf::run(ctx, E, 64, secs)),
    );
    for (name, link, extra) in [
        ("pmdt-rtt-udp-64", Link::Udp, None),
        ("pmdt-rtt-memif-64", Link::Memif(1500), Some("--busy-poll")),
    ] {
        let n = bytes_arg(64 * pings);
        // --payload is the UDP payload: pmdt's 40-byte data header + 64 bytes of data.
        let mut args = vec!["-n", &n, "--window", "1", "--payload", "104"];
        args.extend(extra);
        let mut pair = PairSpec::new(link, &args, Duration::from_secs(2 + pings / 2000));
        if let Some(e) = extra {
            pair.recv_args.push(e.into());
        }
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(name, rtt)
                .param("data_bytes", 64)
                .param("window", 1)
                .param("packets", pings),
            &pair,
            |_, _| {},
        ));
    }
    let c = &r.cells;
    r.ratios = vec![
        Ratio::of(
            "pmdt memif 1500 / raw memif 1500 (goodput vs wire bits)",
            c,
            ("pmdt-memif-1500", g),
            ("raw-memif-1500", g),
        ),
        Ratio::of(
            "pmdt memif 9000 / raw memif 1500",
            c,
            ("pmdt-memif-9000", g),
            ("raw-memif-1500", g),
        ),
        Ratio::of(
            "pmdt memif 1500 / kernel TCP (iperf3)",
            c,
            ("pmdt-memif-1500", g),
            ("iperf3-tcp", g),
        ),
        Ratio::of(
            "pmdt kernel-UDP backend / iperf3 UDP 1400 B",
            c,
            ("pmdt-kernel-udp", g),
            ("iperf3-udp-1400", g),
        ),
        Ratio::of(
            "pmdt memif 1500 / QUIC (quinn)",
            c,
            ("pmdt-memif-1500", g),
            ("quic-quinn", g),
        ),
        Ratio::of(
            "pmdt kernel-UDP backend / QUIC (quinn)",
            c,
            ("pmdt-kernel-udp", g),
            ("quic-quinn", g),
        ),
        Ratio::of(
            "pmdt RTT over kernel UDP / sockperf RTT (lower is better)",
            c,
            ("pmdt-rtt-udp-64", rtt),
            ("sockperf-rtt-64", rtt),
        ),
        Ratio::of(
            "pmdt RTT over memif / sockperf RTT (lower is better)",
            c,
            ("pmdt-rtt-memif-64", rtt),
            ("sockperf-rtt-64", rtt),
        ),
    ];
    r.references = vec![
        "ANCHORS.md (this kind of machine): raw memif 1500 B 20.5 Mpps / 246 Gbit/s wire; iperf3 TCP 35.7 Gbit/s; iperf3 UDP 1400 B 3.4 Gbit/s; quinn perf 11.4 Gbit/s; sockperf p50 26.4 µs half round trip".into(),
    ];
    r.notes = vec![
        "Pinning: receiver/server on core 1, sender/client on core 0 for every tool (pmdt: --lcores 0@0,1@1 and 0@1,1@0; testpmd: --main-lcore 0/1; iperf3 -A 0,1; sockperf via taskset; the QUIC harness pins its threads).".into(),
        "raw-memif: testpmd's Rx-bps counts frame bits; pmdt's goodput counts stream bytes only.".into(),
        "pmdt-rtt-*: pmdt's data→ack round trip with window 1 and 64 bytes of data per packet (104-byte UDP payload): the p50 of the sender's RTT samples as its histogram reports them (bucketed, and including the receiver's ack policy); sockperf-rtt: sockperf's half round trip × 2.".into(),
        "quic-quinn: one bidirectional stream upload, TLS 1.3 (rustls + ring), client and server in one process on separate pinned threads.".into(),
    ];
    r
}
