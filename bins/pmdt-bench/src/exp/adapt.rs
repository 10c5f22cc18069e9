//! Adaptation and sharing end to end (issue 14's "Show" 4 and 5 through the
//! real tools): a 1 Gbit/s bottleneck in pmdt-wanem drops to 200 Mbit/s under a
//! transfer and recovers (`--rate-at`), and four flows share one bottleneck.
//! Default settings; CUBIC beside the default controller.

use std::time::Duration;

use crate::adaptation::{self, sender_time, settle_s};
use crate::cell::{CellSpec, Sample};
use crate::ctx::Ctx;
use crate::exp::{pmdt_cell, secs_arg};
use crate::machine::Machine;
use crate::peer::linux_tcp_path;
use crate::pmdt_pair::{jain, num, Link, PairSpec};
use crate::queueing;
use crate::report::Report;
use crate::steady_state;
use crate::targets::{Bound, Target};

/// Tools this experiment needs.
pub const TOOLS: crate::exp::Tools = (&["pmdt-send", "pmdt-recv", "pmdt-wanem"], &[]);

/// Issue #14's acceptance targets for these cells: the estimate follows each
/// change within 2 s, four flows share with Jain's index ≥ 0.95, and beside one
/// CUBIC flow neither takes more than 3/4 of the link.
pub const TARGETS: &[Target] = &[
    Target {
        cells: "bbr-drop-recover",
        metric: "down_s",
        bound: Bound::AtMost(2.0),
        what: "the fall followed within 2 s",
    },
    Target {
        cells: "bbr-drop-recover",
        metric: "up_s",
        bound: Bound::AtMost(2.0),
        what: "the rise followed within 2 s",
    },
    Target {
        cells: "share-4-flows",
        metric: "jain",
        bound: Bound::AtLeast(0.95),
        what: "four flows share fairly",
    },
    Target {
        cells: "vs-cubic",
        metric: "max_share_pct",
        bound: Bound::AtMost(75.0),
        what: "neither flow takes over 3/4 of the link",
    },
];

/// The metrics its table shows beside the primary figure.
pub const COLUMNS: &[&str] = &[
    "down_s",
    "up_s",
    "low_pct",
    "high_pct",
    "low_queue_ms",
    "jain",
    "of_link_pct",
    "bbr_pct",
    "cubic_pct",
    "last_flow_pct",
    "retransmitted",
    "wan_queue_drops",
];

/// The bottleneck's rates, bits/s.
const HIGH: f64 = 1e9;
const LOW: f64 = 200e6;
/// How long the estimate must stay in the band to count as following, s.
const HOLD_S: f64 = 1.0;
/// The sender's interval reports, s (the adaptation figures' resolution).
const INTERVAL_S: f64 = 0.2;

/// Runs it.
pub fn run(ctx: &Ctx, m: &Machine) -> Report {
    const E: &str = "adapt";
    let mut r = Report::new(
        E,
        "a bottleneck that drops and recovers under a transfer, and flows sharing one, through pmdt-wanem",
        m,
        ctx.quick,
        ctx.repeat,
    );
    r.columns(COLUMNS);
    // The drop and the recovery, seconds after the first frame, and the run.
    let (down_at, up_at, secs) = if ctx.quick {
        (2.0, 4.0, 8.0)
    } else {
        (10.0, 20.0, 30.0)
    };
    let rtts: &[u64] = if ctx.quick { &[40] } else { &[40, 100] };
    let ccs: &[&str] = if ctx.quick {
        &["bbr"]
    } else {
        &["bbr", "cubic"]
    };
    for &cc in ccs {
        for &rtt in rtts {
            let send = ["-t".to_string(), secs_arg(secs), "--cc".into(), cc.into()];
            let send: Vec<&str> = send.iter().map(String::as_str).collect();
            let mut pair = PairSpec::new(
                Link::Memif(1500),
                &send,
                Duration::from_secs_f64(secs + 2.0 * rtt as f64 / 1e3),
            );
            pair.interval_s = INTERVAL_S;
            pair.wanem = Some(wanem_args(rtt, &[(down_at, LOW), (up_at, HIGH)]));
            r.cells.push(pmdt_cell(
                ctx,
                E,
                CellSpec::new(format!("{cc}-drop-recover-rtt{rtt}"), "high_pct")
                    .param("cc", cc)
                    .param("rtt_ms", rtt)
                    .param("rates", "1g→200m→1g"),
                &pair,
                |res, s| {
                    let doc = &res.send;
                    let (down, up) = (sender_time(doc, down_at), sender_time(doc, up_at));
                    if let Some(t) = settle_s(doc, down, LOW, HOLD_S) {
                        s.set("down_s", t);
                    }
                    if let Some(t) = settle_s(doc, up, HIGH, HOLD_S) {
                        s.set("up_s", t);
                    }
                    // Goodput on each rate once 2 s have passed since the change.
                    if let Some(g) = steady_state::goodput_bps(doc, down + 2.0, up) {
                        s.set("low_pct", g / LOW * 100.0);
                    }
                    if let Some(g) = steady_state::goodput_bps(doc, up + 2.0, secs) {
                        s.set("high_pct", g / HIGH * 100.0);
                    }
                    if let Some(q) = queueing::mean_queue_ms(doc, 1, down + 2.0, up) {
                        s.set("low_queue_ms", q);
                    }
                    wan_drops(res, s);
                },
            ));
        }
    }
    // Four flows of one controller through one 1 Gbit/s × 40 ms bottleneck.
    let share_secs = if ctx.quick { 4.0 } else { 20.0 };
    let pair = sharing_pair(share_secs, 4, &[]);
    r.cells.push(pmdt_cell(
        ctx,
        E,
        CellSpec::new("bbr-share-4-flows-rtt40", "jain")
            .param("cc", "bbr")
            .param("rtt_ms", 40)
            .param("flows", 4),
        &pair,
        |res, s| {
            if let Some(g) = s.metrics.get("goodput_gbps").copied() {
                s.set("of_link_pct", g * 1e9 / HIGH * 100.0);
            }
            wan_drops(res, s);
        },
    ));
    // The same four flows started 2 s apart (`--stagger`): each joins the
    // others' queue, and Jain's index over the run's second half says whether
    // the late flows reach their share.
    let (stagger, from) = if ctx.quick { (0.5, 2.0) } else { (2.0, 10.0) };
    let mut pair = sharing_pair(share_secs, 4, &["--stagger", &secs_arg(stagger)]);
    pair.interval_s = INTERVAL_S;
    r.cells.push(pmdt_cell(
        ctx,
        E,
        CellSpec::new("bbr-share-4-flows-joining-rtt40", "jain")
            .param("cc", "bbr")
            .param("rtt_ms", 40)
            .param("flows", 4)
            .param("stagger_s", stagger),
        &pair,
        |res, s| {
            let shares: Option<Vec<f64>> = (1..=4)
                .map(|f| steady_state::flow_goodput_bps(&res.send, f, from, share_secs))
                .collect();
            if let Some(g) = shares {
                s.set("jain", jain(&g))
                    .set("of_link_pct", g.iter().sum::<f64>() / HIGH * 100.0)
                    .set("last_flow_pct", g[3] / HIGH * 100.0);
            }
            wan_drops(res, s);
        },
    ));
    // One BBR flow beside one CUBIC flow, through a shallow (the default 1 MiB,
    // 0.2 BDP) and a deep (1 BDP) queue: BBR v1 tends to take a shallow queue's
    // link, CUBIC a deep one's.
    let queues: &[(&str, &str)] = if ctx.quick {
        &[("1M", "shallow")]
    } else {
        &[("1M", "shallow"), ("5M", "deep")]
    };
    for &(queue, depth) in queues {
        let mut pair = sharing_pair(share_secs, 2, &["--cc", "bbr,cubic"]);
        pair.interval_s = INTERVAL_S;
        if let Some(wan) = pair.wanem.as_mut() {
            wan.extend(["--queue-bytes".into(), queue.into()]);
        }
        let from = share_secs / 4.0;
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(format!("bbr-vs-cubic-{depth}-queue-rtt40"), "max_share_pct")
                .param("cc", "bbr,cubic")
                .param("rtt_ms", 40)
                .param("queue", queue),
            &pair,
            |res, s| {
                let share = |flow| {
                    steady_state::flow_goodput_bps(&res.send, flow, from, share_secs)
                        .map(|g| g / HIGH * 100.0)
                };
                if let (Some(b), Some(c)) = (share(1), share(2)) {
                    s.set("bbr_pct", b)
                        .set("cubic_pct", c)
                        .set("max_share_pct", b.max(c))
                        .set("of_link_pct", b + c);
                }
                wan_drops(res, s);
            },
        ));
    }
    // One flow joining a link the other fills, 2 s after it: CUBIC after BBR
    // through the shallow queue (CUBIC's slow start meets a full pipe early
    // and its cubic growth takes about a minute to reach a share, so a minute
    // from a quarter of it), and BBR after CUBIC through the deep queue
    // (CUBIC's queue is a round trip deep when BBR starts).
    let joins: &[(&str, &str, &str, &str, f64)] = if ctx.quick {
        &[]
    } else {
        &[
            ("cubic", "bbr,cubic", "1M", "shallow", 60.0),
            ("bbr", "cubic,bbr", "5M", "deep", 30.0),
        ]
    };
    for &(joiner, ccs, queue, depth, secs) in joins {
        let mut pair = sharing_pair(secs, 2, &["--cc", ccs, "--stagger", "2"]);
        pair.interval_s = INTERVAL_S;
        if let Some(wan) = pair.wanem.as_mut() {
            wan.extend(["--queue-bytes".into(), queue.into()]);
        }
        let from = secs / 4.0;
        // pmdt-send numbers its flows from 1, in `--cc`'s order.
        let (bbr_flow, cubic_flow) = if ccs.starts_with("bbr") {
            (1, 2)
        } else {
            (2, 1)
        };
        r.cells.push(pmdt_cell(
            ctx,
            E,
            CellSpec::new(
                format!("bbr-vs-cubic-{joiner}-joins-{depth}-queue-rtt40"),
                "max_share_pct",
            )
            .param("cc", ccs)
            .param("rtt_ms", 40)
            .param("queue", queue)
            .param("stagger_s", 2),
            &pair,
            |res, s| {
                let share = |flow| {
                    steady_state::flow_goodput_bps(&res.send, flow, from, secs)
                        .map(|g| g / HIGH * 100.0)
                };
                if let (Some(b), Some(c)) = (share(bbr_flow), share(cubic_flow)) {
                    s.set("bbr_pct", b)
                        .set("cubic_pct", c)
                        .set("max_share_pct", b.max(c))
                        .set("of_link_pct", b + c);
                }
                wan_drops(res, s);
            },
        ));
    }
    linux_cells(ctx, &mut r, share_secs);
    r.notes = vec![
        format!(
            "Both ends run to completion (the tools' default), the receiver's flow thread on core 0 and the sender's on core 1; pmdt-wanem's forwarding lcore on core {} beside the {} (`--wanem-beside`; beside the sender until session 89: docs/RESULTS.md).",
            ctx.wanem_beside.cpu(),
            ctx.wanem_beside.end()
        ),
        format!(
            "drop-recover: pmdt-wanem at {} Mbit/s with a 1 MiB queue, RTT/2 each way, dropping to {} Mbit/s {down_at} s after its first frame and back {up_at} s after it (`--rate-at`); the sender runs {secs} s with default settings but `--cc`, reporting every {INTERVAL_S} s.",
            HIGH / 1e6,
            LOW / 1e6
        ),
        format!(
            "down_s, up_s: seconds from the change until the sender's bandwidth estimate (its intervals' `bandwidth_estimate`) is within {:.2}–{:.2} × the new rate and stays there for {HOLD_S} s; the change is placed in the sender's time as early as it can have been (its connect time before the first frame), so these are never short. No figure: it never did (CUBIC has no estimate: its cells show goodput only).",
            adaptation::BAND.0,
            adaptation::BAND.1
        ),
        format!("low_pct, high_pct: goodput from 2 s after each change to the next (or the end), % of that rate (the payload ceiling is {:.1}%).", 100.0 * pmdt::sim::stream_share_of_frames(1472)),
        format!("low_queue_ms: the queue the flow kept at {} Mbit/s: the mean of its smoothed RTT over its minimum RTT at the end of each interval, from 2 s after the fall to the rise (a flow alone should drain what the fall filled; pmdt-wanem's 1 MiB queue is 42 ms at that rate).", LOW / 1e6),
        format!("share: -P 4 for {share_secs} s through 1 Gbit/s × 40 ms; jain over the flows' goodput, of_link_pct their sum."),
        format!("joining: -P 4 --stagger {stagger} for {share_secs} s through the same path, the flows starting {stagger} s apart; jain over each flow's goodput from {from} s to the end (every flow running), last_flow_pct the last flow's share of the link."),
        format!("bbr-vs-cubic: -P 2 --cc bbr,cubic for {share_secs} s through 1 Gbit/s × 40 ms (BDP 5 MB) with a 1 MiB or a 5 MiB queue; bbr_pct, cubic_pct: each flow's goodput from {} s to the end, % of the link; max_share_pct the larger.", share_secs / 4.0),
        "bbr-vs-cubic-*-joins-*: the same two flows, the second starting 2 s after the first (`--stagger 2`): CUBIC joining BBR through the 1 MiB queue for 60 s (CUBIC's cubic growth after a slow start that met a full pipe takes about a minute to reach a share), BBR joining CUBIC through the 5 MiB queue for 30 s; shares from a quarter of the run to its end.".into(),
        format!("linux-tcp-*: the reference for the bbr-vs-cubic cells: Linux's own TCP BBR (v1, the kernel's `bbr`) and CUBIC, one iperf3 flow each (`-C`), through the same pmdt-wanem path, the same queues, runs and windows ({share_secs} s together; joining 2 s apart, 60 s through 1 MiB and 30 s through 5 MiB). Two network namespaces, each joined to one of pmdt-wanem's ports (DPDK's af_packet PMD) by a veth pair, offloads off; the receiving iperf3 on CPU 0, the sending on CPU 1; TCP buffers up to 64 MiB. Shares from each client's one-second intervals; retransmitted: segments. Root only; not in --quick."),
        "Target (issue #14): the rate follows within 2 s each way, no stall, no timeout; four flows Jain ≥ 0.95; beside one CUBIC flow neither takes more than 75% of the link.".into(),
    ];
    r
}

/// Linux's TCP BBR and CUBIC through the sharing cells' paths
/// ([`linux_tcp_path`]): what the kernel's own controllers do there, the
/// reference for pmdt's. Named apart from the `vs-cubic` cells so their
/// target (pmdt's acceptance) does not apply.
fn linux_cells(ctx: &Ctx, r: &mut Report, share_secs: f64) {
    if ctx.quick {
        return;
    }
    let cells: [(&str, [&str; 2], &str, f64, f64); 4] = [
        ("shallow-queue", ["bbr", "cubic"], "1M", share_secs, 0.0),
        ("deep-queue", ["bbr", "cubic"], "5M", share_secs, 0.0),
        (
            "cubic-joins-shallow-queue",
            ["bbr", "cubic"],
            "1M",
            60.0,
            2.0,
        ),
        ("bbr-joins-deep-queue", ["cubic", "bbr"], "5M", 30.0, 2.0),
    ];
    for (what, ccs, queue, secs, stagger) in cells {
        let mut wanem = wanem_args(40, &[]);
        wanem.extend(["--queue-bytes".into(), queue.into()]);
        let spec = linux_tcp_path::Spec {
            flows: vec![
                linux_tcp_path::Flow {
                    cc: ccs[0].into(),
                    start_s: 0.0,
                },
                linux_tcp_path::Flow {
                    cc: ccs[1].into(),
                    start_s: stagger,
                },
            ],
            secs,
            wanem,
        };
        let bbr = ccs.iter().position(|&c| c == "bbr").unwrap_or(0);
        let mut cell = CellSpec::new(
            format!("linux-tcp-bbr-and-cubic-{what}-rtt40"),
            "max_share_pct",
        )
        .param("cc", ccs.join(","))
        .param("rtt_ms", 40)
        .param("queue", queue);
        if stagger > 0.0 {
            cell = cell.param("stagger_s", stagger);
        }
        r.cells.push(cell.run(ctx.repeat, |_| {
            let run = linux_tcp_path::run(ctx, "adapt", &spec)?;
            let mut s = Sample {
                commands: run.commands.clone(),
                ..Default::default()
            };
            let share = |i| run.goodput_bps(i, secs / 4.0, secs) / HIGH * 100.0;
            let (b, c) = (share(bbr), share(1 - bbr));
            s.set("bbr_pct", b)
                .set("cubic_pct", c)
                .set("max_share_pct", b.max(c))
                .set("of_link_pct", b + c)
                .set("retransmitted", run.retransmits.iter().sum());
            if let Some(d) = run
                .wanem
                .as_ref()
                .and_then(|w| num(w, "a_to_b.queue_drops"))
            {
                s.set("wan_queue_drops", d);
            }
            Ok(s)
        }));
    }
}

/// `flows` flows (`-P`) sending for `secs` through pmdt-wanem at [`HIGH`] × 40
/// ms with its default queue, `extra` added to pmdt-send's arguments.
fn sharing_pair(secs: f64, flows: usize, extra: &[&str]) -> PairSpec {
    let mut send = vec![
        "-t".to_string(),
        secs_arg(secs),
        "-P".into(),
        flows.to_string(),
    ];
    send.extend(extra.iter().map(|a| a.to_string()));
    let send: Vec<&str> = send.iter().map(String::as_str).collect();
    let mut pair = PairSpec::new(
        Link::Memif(1500),
        &send,
        Duration::from_secs_f64(secs + 0.08),
    );
    pair.connections = flows;
    let mut wanem = wanem_args(40, &[]);
    // Whose frames each overflow of the shared queue dropped, in the log.
    wanem.push("--log-overflows".into());
    pair.wanem = Some(wanem);
    pair
}

/// pmdt-wanem's arguments: [`HIGH`], `rtt` ms, and the rate changes (seconds,
/// bits/s).
fn wanem_args(rtt: u64, changes: &[(f64, f64)]) -> Vec<String> {
    let mut a = vec![
        "--delay-ms".to_string(),
        (rtt as f64 / 2.0).to_string(),
        "--rate".into(),
        (HIGH as u64).to_string(),
    ];
    for (at, rate) in changes {
        a.push("--rate-at".into());
        a.push(format!("{at}={}", *rate as u64));
    }
    a
}

/// The bottleneck's queue drops, sender to receiver.
fn wan_drops(res: &crate::pmdt_pair::PairResult, s: &mut crate::cell::Sample) {
    if let Some(d) = res
        .wanem
        .as_ref()
        .and_then(|w| num(w, "a_to_b.queue_drops"))
    {
        s.set("wan_queue_drops", d);
    }
}
