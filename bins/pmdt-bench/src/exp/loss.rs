//! Loss and delay (RMDT's purpose): goodput vs random loss × RTT × congestion
//! controller through pmdt-wanem, one process triple (send, wanem, recv) per cell.

use std::time::Duration;

use crate::cell::CellSpec;
use crate::ctx::Ctx;
use crate::exp::{pmdt_cell_after, secs_arg};
use crate::machine::Machine;
use crate::pmdt_pair::{num, Link, PairSpec};
use crate::report::Report;
use crate::steady_state;
use pmdt::proto::wire::DATA_HEADER_LEN;

/// Where the steady-state window starts: after Startup has found the path (a
/// dozen round trips at 200 ms take 2–3 s), a quarter of the run at most.
fn steady_from(secs: f64) -> f64 {
    (secs / 4.0).min(5.0).floor().max(1.0)
}

/// `-resumed` cells: the transfer before the measured one, seconds (long
/// enough for Startup to find a 1 Gbit/s × 200 ms path at 5% loss and the
/// controller to leave it, so the path is saved).
const WARM_UP_S: f64 = 8.0;

/// The `-jumbo` row's MTU (IP datagram bytes; memif buffers sized to hold a frame).
const JUMBO_MTU: u16 = 9000;

/// Tools this experiment needs.
pub const TOOLS: crate::exp::Tools = (&["pmdt-send", "pmdt-recv", "pmdt-wanem"], &[]);

/// The emulated bottlenecks (pmdt-wanem `--rate`) and the paced controller's rate
/// under each (90%, hand-set as RMDT's users would).
const LINKS: [(&str, u64, &str); 2] = [("100mbit", 100, "90mbit"), ("1gbit", 1000, "900mbit")];

/// The metrics its table shows beside the primary figure.
pub const COLUMNS: &[&str] = &[
    "of_link_pct",
    "steady_pct",
    "mathis_mbps",
    "retransmitted",
    "rtt_p50_us",
    "wan_lost",
    "wan_stall_ms",
    "resumed",
];

/// The longest pmdt-wanem went without reading either port, ms, from its JSON
/// summary (`None` when it reports neither).
fn wan_stall_ms(wanem: &serde_json::Value) -> Option<f64> {
    ["a_to_b", "b_to_a"]
        .iter()
        .filter_map(|dir| num(wanem, &format!("{dir}.longest_stall_us")))
        .reduce(f64::max)
        .map(|us| us / 1e3)
}

/// Runs it.
pub fn run(ctx: &Ctx, m: &Machine) -> Report {
    const E: &str = "loss";
    let mut r = Report::new(
        E,
        "goodput vs loss × RTT × controller through pmdt-wanem",
        m,
        ctx.quick,
        ctx.repeat,
    );
    r.columns(COLUMNS);
    type Grid<'a> = (
        &'a [f64],
        &'a [u64],
        &'a [&'a str],
        &'a [(&'a str, u64, &'a str)],
        f64,
    );
    let (losses, rtts, ccs, links, secs): Grid = if ctx.quick {
        (&[0.0, 0.01], &[10], &["bbr"], &LINKS[1..], 3.0)
    } else {
        (
            &[0.0, 0.001, 0.01, 0.05],
            &[10, 100, 200],
            // The default first, the others beside it (`bbr-fast-start`: the
            // default controller with `--fast-start`; `bbr-resumed`: the
            // default controller on the next transfer over the same path,
            // started from what the previous one saved; `bbr-jumbo`: the
            // default controller with 9000-byte frames, `--mtu 9000`).
            &[
                "bbr",
                "bbr-resumed",
                "bbr-fast-start",
                "bbr-jumbo",
                "newreno",
                "cubic",
                "paced",
            ],
            &LINKS,
            20.0,
        )
    };
    for &cc in ccs {
        for &(link_rate, link_mbps, paced_rate) in links {
            for &rtt in rtts {
                for &loss in losses {
                    let (cc_arg, fast_start) = cc
                        .strip_suffix("-fast-start")
                        .map_or((cc, false), |c| (c, true));
                    let (cc_arg, resumed) = cc_arg
                        .strip_suffix("-resumed")
                        .map_or((cc_arg, false), |c| (c, true));
                    let (cc_arg, mtu) = cc_arg
                        .strip_suffix("-jumbo")
                        .map_or((cc_arg, 1500), |c| (c, JUMBO_MTU));
                    let name = format!("{cc}-{link_rate}-rtt{rtt}-loss{}", loss * 100.0);
                    let cache = ctx.out.join(".cache").join(format!("{name}.json"));
                    let mut send = vec![
                        "-t".to_string(),
                        secs_arg(secs),
                        "--cc".into(),
                        cc_arg.into(),
                    ];
                    if fast_start {
                        send.push("--fast-start".into());
                    }
                    if cc == "paced" {
                        send.extend(["--rate".to_string(), paced_rate.into()]);
                    }
                    if resumed {
                        send.extend(["--path-cache".to_string(), cache.display().to_string()]);
                    }
                    let wanem = [
                        "--loss".to_string(),
                        loss.to_string(),
                        "--delay-ms".into(),
                        (rtt as f64 / 2.0).to_string(),
                        "--rate".into(),
                        link_rate.into(),
                    ]
                    .to_vec();
                    let pair_of = |send: &[String], secs: f64| {
                        let send: Vec<&str> = send.iter().map(String::as_str).collect();
                        let mut pair = PairSpec::new(
                            Link::Memif(mtu),
                            &send,
                            Duration::from_secs_f64(secs + 2.0 * rtt as f64 / 1e3),
                        );
                        pair.wanem = Some(wanem.clone());
                        pair
                    };
                    let pair = pair_of(&send, secs);
                    // `-resumed`: a transfer over the same path first, whose
                    // saved path the measured one starts from.
                    let mut warm_up_send = send.clone();
                    warm_up_send[1] = secs_arg(WARM_UP_S.min(secs));
                    let warm_up = resumed.then(|| (pair_of(&warm_up_send, WARM_UP_S), cache));
                    r.cells.push(pmdt_cell_after(
                        ctx,
                        E,
                        warm_up,
                        CellSpec::new(name, "goodput_mbps")
                            .param("cc", cc)
                            .param("link_mbps", link_mbps)
                            .param("rtt_ms", rtt)
                            .param("loss_pct", loss * 100.0),
                        &pair,
                        |res, s| {
                            if let Some(g) = s.metrics.get("goodput_gbps").copied() {
                                s.set("goodput_mbps", g * 1e3);
                                s.set("of_link_pct", g * 1e3 / link_mbps as f64 * 100.0);
                            }
                            let from = steady_from(secs);
                            if let Some(g) = steady_state::goodput_bps(&res.send, from, secs) {
                                s.set("steady_pct", g / 1e6 / link_mbps as f64 * 100.0);
                            }
                            if loss > 0.0 {
                                // Mathis: 1.22 · MSS / (RTT · √p), MSS the stream
                                // bytes of a full datagram (1443 B at MTU 1500).
                                let mss = f64::from(mtu) - 28.0 - DATA_HEADER_LEN as f64;
                                let mbps =
                                    1.22 * mss * 8.0 / (rtt as f64 / 1e3 * loss.sqrt()) / 1e6;
                                s.set("mathis_mbps", mbps);
                            }
                            if resumed {
                                let jumped = res.send["flows"][0]["resume"]["outcome"] == "jumped";
                                s.set("resumed", f64::from(u8::from(jumped)));
                            }
                            if let Some(w) = &res.wanem {
                                let lost = num(w, "a_to_b.lost").unwrap_or(0.0)
                                    + num(w, "b_to_a.lost").unwrap_or(0.0);
                                s.set("wan_lost", lost);
                                if let Some(ms) = wan_stall_ms(w) {
                                    s.set("wan_stall_ms", ms);
                                }
                            }
                        },
                    ));
                }
            }
        }
    }
    r.references = vec![
        "Mathis model for TCP-like control: 1.22·MSS/(RTT·√p), ~1.4 Mbit/s at 100 ms and 1% (mathis_mbps column).".into(),
        "BBR keeps near link rate up to ~15% random loss where CUBIC collapses at 1% (Cardwell et al., ACM Queue 2016).".into(),
    ];
    r.notes = vec![
        format!("pmdt-wanem between the two memif links: loss in both directions, one-way delay RTT/2 each way, bottleneck 100 Mbit/s or 1 Gbit/s; paced sends at 90% of it. Both ends run to completion (the tools' default), the receiver's flow thread on core 0 and the sender's on core 1; pmdt-wanem's forwarding lcore on core {} beside the {} (`--wanem-beside`; beside the sender until session 89, where four of the bbr cells at 1% loss, run both ways, moved by at most 0.7 points over the whole run and 1.1 in steady state).", ctx.wanem_beside.cpu(), ctx.wanem_beside.end()),
        "Targets (issue #14, default controller bbr): ≥ 95% of the bottleneck lossless, ≥ 90% at 1% loss, ≥ 75% at 5%, in every RTT column (of_link_pct).".into(),
        format!("bbr-resumed: the default controller on a second transfer over the same path: each run first sends for {WARM_UP_S} s with `--path-cache FILE` (a fresh file), and the measured transfer, with the same file, starts from the path that one saved (Careful Resume, RFC 9959: half the saved BDP in its first round trip, then up to the saved rate); resumed = 1 when the handshake confirmed the saved path and the first round jumped. Every other row's runs start from cold: each pmdt-send gets a cache directory of its own (XDG_CACHE_HOME)."),
        format!("Each cell sends for {secs} s (-t); goodput counts acknowledged stream bytes over the sender's time from the data's start (after the handshake, as iperf3 counts) to the receiver's receipt, Startup's ramp and the drain included."),
        format!("steady_pct: goodput from second {} to {secs} of the sender's one-second intervals (as iperf3 --omit), % of the link: the rate once the controller has found the path, without the handshake, Startup's ramp and the close. The payload ceiling is {:.1}% ({} stream bytes per 1514-byte frame); {:.1}% in the bbr-jumbo row ({} stream bytes per {}-byte frame).", steady_from(secs), 100.0 * pmdt::sim::stream_share_of_frames(1472), 1472 - DATA_HEADER_LEN, 100.0 * pmdt::sim::stream_share_of_frames(JUMBO_MTU - 28), JUMBO_MTU - 28 - DATA_HEADER_LEN as u16, JUMBO_MTU + 14),
        "wan_stall_ms: the longest pmdt-wanem went without reading a port (its core lost to the other processes or to the hypervisor), ms: every frame then in the path waits as long, a delay the emulated link does not have, so a run with stalls of tens of ms measured the machine as much as the controller.".into(),
        format!("bbr-jumbo: the default controller with jumbo frames, pmdt-send and pmdt-recv `--mtu {JUMBO_MTU}` and memif buffers that hold a frame (`bsize=16384`); pmdt-wanem's link and queue are the other rows', its mbufs the default 2 KiB, a frame in segments."),
    ];
    r
}

#[cfg(test)]
mod tests {
    use super::wan_stall_ms;

    #[test]
    fn the_stall_is_the_longer_directions_in_ms() {
        let w = serde_json::json!({
            "a_to_b": { "longest_stall_us": 15569 },
            "b_to_a": { "longest_stall_us": 17889 },
        });
        assert_eq!(wan_stall_ms(&w), Some(17.889));
        let one_way = serde_json::json!({ "a_to_b": { "longest_stall_us": 2000 } });
        assert_eq!(wan_stall_ms(&one_way), Some(2.0));
        assert_eq!(wan_stall_ms(&serde_json::json!({})), None);
    }
}
