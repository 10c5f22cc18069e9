//! Peers, one run, same pinning: raw memif (dpdk-testpmd), pmdt over memif (MTU
//! 1500 and 9000), pmdt's kernel-UDP backend, kernel TCP and UDP (iperf3), QUIC
//! (quinn harness), and small-message round trips (`pmdt-send --rr` vs sockperf
//! ping-pong).

use std::time::Duration;

use crate::cell::CellSpec;
use crate::cell::Sample;
use crate::ctx::Ctx;
use crate::exp::{bytes_arg, expect_bytes, pmdt_cell, secs_arg};
use crate::machine::Machine;
use crate::peer::{iperf, quic, sockperf, testpmd};
use crate::pmdt_pair::{num, Link, PairResult, PairSpec};
use crate::report::{Ratio, Report};

/// Tools this experiment needs (pmdt's own, peers on PATH).
pub const TOOLS: crate::exp::Tools = (
    &["pmdt-send", "pmdt-recv", "pmdt-bench-quic"],
    &["dpdk-testpmd", "iperf3", "sockperf", "taskset"],
);

/// Messages per second of the rated request/response cells.
const RR_RATE: u32 = 10_000;
/// Messages per second of the quiet request/response cells: 5 ms apart, so each
/// side's loop is quiet long enough (2 ms) to sleep between messages.
const RR_QUIET_RATE: u32 = 200;

/// The metrics its table shows beside the primary figure.
pub const COLUMNS: &[&str] = &[
    "mpps",
    "rtt_p50_us",
    "rtt_p99_us",
    "rtt_p99_9_us",
    "retransmitted",
    "lost_pct",
    "send_io_load",
    "recv_io_load",
    "recv_cpu_share",
];

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
    r.columns(COLUMNS);
    let (bytes, udp_bytes, secs) = if ctx.quick {
        (64u64 << 20, 32u64 << 20, 2.0)
    } else {
        (2u64 << 30, 512u64 << 20, 8.0)
    };
    let g = "goodput_gbps";
    r.cells.push(
        CellSpec::new("raw-memif-1500", g)
            .param("tool", "dpdk-testpmd txonly->rxonly")
            .param("frame", 1500)
            .run(ctx.repeat, |_| testpmd::run(ctx, E, 1500, secs)),
    );
    // pmdt runs to completion here (`--rtc` on both sides): one core per side,
    // as the other tools run (the tools' default, the pipeline, is the mode
    // that holds up behind pmdt-wanem on one host; docs/RESULTS.md).
    // The last one without UDP checksums on either side: as Linux's loopback,
    // which computes none for the kernel TCP cell below (`--no-udp-checksum`).
    for (name, mtu, extra) in [
        ("pmdt-memif-1500", 1500u16, &[][..]),
        ("pmdt-memif-9000", 9000, &[]),
        (
            "pmdt-memif-1500-no-udp-checksum",
            1500,
            &["--no-udp-checksum"],
        ),
    ] {
        let mut send = vec!["--rtc", "-n"];
        let n = bytes_arg(bytes);
        send.push(&n);
        send.extend(extra);
        let mut pair = PairSpec::new(Link::Memif(mtu), &send, expect_bytes(bytes));
        pair.recv_args.push("--rtc".into());
        pair.recv_args.extend(extra.iter().map(|a| a.to_string()));
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(name, g)
                .param("mtu", mtu)
                .param("bytes", bytes),
            &pair,
            |_, _| {},
        ));
    }
    let mut pair = PairSpec::new(
        Link::Udp,
        &["--rtc", "-n", &bytes_arg(udp_bytes)],
        expect_bytes(udp_bytes),
    );
    pair.recv_args.push("--rtc".into());
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
    // Request/response through `pmdt-send --rr`: 64-byte messages echoed by
    // pmdt-recv, each round trip timed by the sender (write → echo read), as
    // long as sockperf runs. memif with and without busy polling on both sides
    // (the difference is the idle back-off's cost), back to back (ping-pong)
    // and at 10,000 messages a second (where each side idles between
    // messages), kernel UDP as the tools run by default. Kernel UDP at 200
    // messages a second too, where each side's loop sleeps between messages:
    // parked on the socket by default (the wake path), against busy polling.
    let rr_secs = secs_arg(secs);
    for (name, link, busy, rate) in [
        ("pmdt-rr-memif-64", Link::Memif(1500), true, None),
        ("pmdt-rr-memif-64-backoff", Link::Memif(1500), false, None),
        (
            "pmdt-rr-memif-64-10k",
            Link::Memif(1500),
            true,
            Some(RR_RATE),
        ),
        (
            "pmdt-rr-memif-64-10k-backoff",
            Link::Memif(1500),
            false,
            Some(RR_RATE),
        ),
        ("pmdt-rr-udp-64", Link::Udp, false, None),
        ("pmdt-rr-udp-64-200", Link::Udp, false, Some(RR_QUIET_RATE)),
        (
            "pmdt-rr-udp-64-200-busy",
            Link::Udp,
            true,
            Some(RR_QUIET_RATE),
        ),
    ] {
        let rate_arg = rate.map(|r| r.to_string());
        let mut args = vec!["--rtc", "--rr", "--rr-size", "64", "-t", &rr_secs];
        if busy {
            args.push("--busy-poll");
        }
        if let Some(r) = &rate_arg {
            args.extend(["--rr-rate", r]);
        }
        let mut pair = PairSpec::new(link, &args, Duration::from_secs_f64(secs + 2.0));
        pair.recv_args.push("--rtc".into());
        if busy {
            pair.recv_args.push("--busy-poll".into());
        }
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(name, rtt)
                .param("msg", 64)
                .param("secs", secs)
                .param("busy_poll", busy)
                .param("rate", rate.unwrap_or(0)),
            &pair,
            round_trip_figures,
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
            "pmdt memif 1500 without UDP checksums / kernel TCP (iperf3; loopback computes no checksums either)",
            c,
            ("pmdt-memif-1500-no-udp-checksum", g),
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
            "pmdt --rr round trip over kernel UDP / sockperf round trip, p50 (lower is better)",
            c,
            ("pmdt-rr-udp-64", rtt),
            ("sockperf-rtt-64", rtt),
        ),
        Ratio::of(
            "pmdt --rr round trip over memif, busy poll / sockperf round trip, p50 (lower is better)",
            c,
            ("pmdt-rr-memif-64", rtt),
            ("sockperf-rtt-64", rtt),
        ),
        Ratio::of(
            "pmdt --rr over memif, idle back-off / busy poll, ping-pong p50 (the back-off's cost)",
            c,
            ("pmdt-rr-memif-64-backoff", rtt),
            ("pmdt-rr-memif-64", rtt),
        ),
        Ratio::of(
            "pmdt --rr over memif, idle back-off / busy poll, 10,000 messages/s p50 (the back-off's cost)",
            c,
            ("pmdt-rr-memif-64-10k-backoff", rtt),
            ("pmdt-rr-memif-64-10k", rtt),
        ),
        Ratio::of(
            "pmdt --rr over kernel UDP, 200 messages/s, default (parked on the socket between messages) / busy poll, p50 (the wake path's cost)",
            c,
            ("pmdt-rr-udp-64-200", rtt),
            ("pmdt-rr-udp-64-200-busy", rtt),
        ),
        Ratio::of(
            "pmdt --rr over kernel UDP, 200 messages/s, default / busy poll, the echoing receiver's CPU time (the wake path's saving)",
            c,
            ("pmdt-rr-udp-64-200", "recv_cpu_share"),
            ("pmdt-rr-udp-64-200-busy", "recv_cpu_share"),
        ),
    ];
    r.references = vec![
        "ANCHORS.md (this kind of machine): raw memif 1500 B 20.5 Mpps / 246 Gbit/s wire; iperf3 TCP 35.7 Gbit/s; iperf3 UDP 1400 B 3.4 Gbit/s; quinn perf 11.4 Gbit/s; sockperf p50 26.4 µs half round trip".into(),
    ];
    r.notes = vec![
        "Pinning: the two ends on different cores for every tool (pmdt runs to completion, each side's flow thread on its main lcore's core: --lcores 0@0,1@1 puts the receiver on core 0, 0@1,1@0 the sender on core 1; testpmd: --main-lcore 0/1; iperf3 -A 0,1; sockperf via taskset; the QUIC harness pins its threads).".into(),
        "raw-memif: testpmd's Rx-bps counts frame bits; pmdt's goodput counts stream bytes only.".into(),
        "pmdt-rr-*: `pmdt-send --rr --rr-size 64` against pmdt-recv, which echoes: one 64-byte message in flight, each round trip timed by the sender from its write to the read that completes the echo (HdrHistogram, 3 significant digits), every echoed byte checked; -10k: --rr-rate 10000 (one message every 100 µs, so both sides idle between messages) instead of back to back; -backoff: the tools' default idle policy (spin 16 polls, yield the core while the loop worked within the last 2 ms, then sleep: in naps of 1 µs doubling to 100 µs over memif; over kernel UDP, parked in poll(2) on the socket from 250 µs after the loop's last work until a datagram, a request or a timer) instead of --busy-poll on both sides; -udp-64-200: kernel UDP at --rr-rate 200 (5 ms apart, so both loops sleep between messages), with the default policy and with --busy-poll (-busy); recv_cpu_share: the echoing pmdt-recv's CPU seconds (user + system) over its run time. On a 2-core machine shared with other work the busy pollers are preempted (thousands of involuntary context switches a second): their tails (p99, p99.9, max) and the retransmissions (probe timeouts firing when a preempted side resumes) are the machine's; the p50 is the figure to compare. sockperf-rtt: sockperf's half round trip × 2, so both are full round trips.".into(),
        "quic-quinn: one bidirectional stream upload, TLS 1.3 (rustls + ring), client and server in one process on separate pinned threads.".into(),
    ];
    r
}

/// `--rr`'s figures replace the transport's RTT: the round trips the sender
/// timed (the transport's data→ack RTT stays as `transport_rtt_*`). The
/// echoing receiver's CPU time over its run time goes beside them.
fn round_trip_figures(r: &PairResult, s: &mut Sample) {
    if r.recv_wall_s > 0.0 {
        s.set("recv_cpu_share", r.recv_cpu_s / r.recv_wall_s);
    }
    for k in ["rtt_p50_us", "rtt_p99_us"] {
        if let Some(v) = s.metrics.remove(k) {
            s.set(&format!("transport_{k}"), v);
        }
    }
    for (k, p) in [
        ("rtt_p50_us", "round_trips.p50_us"),
        ("rtt_p90_us", "round_trips.p90_us"),
        ("rtt_p99_us", "round_trips.p99_us"),
        ("rtt_p99_9_us", "round_trips.p99_9_us"),
        ("rtt_max_us", "round_trips.max_us"),
        ("round_trips", "round_trips.count"),
    ] {
        if let Some(v) = num(&r.send, p) {
            s.set(k, v);
        }
    }
}
