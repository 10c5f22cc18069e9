//! The experiment runner's loss grid (`pmdt-bench`'s `loss` experiment, issue #14)
//! in the simulator, cell for cell: `pmdt-send -t 20` through `pmdt-wanem` with its
//! defaults (a 1 MiB drop-tail queue; the same loss, delay RTT/2 and rate in both
//! directions; frames counted with their Ethernet, IPv4 and UDP headers), goodput
//! = stream bytes / the sender's wall time, handshake and close included.
//!
//! The whole grid (24 cells, a few minutes of CPU in release):
//! `cargo test --release -p pmdt --no-default-features --test sim_loss_grid -- --ignored --nocapture`.
//! `SIM_CELLS=1g-200` (substrings of `<link>-<rtt>-<loss %>`) runs some cells only;
//! `SIM_TRACE=1` prints each cell's sender timeline (per 100 ms); `SIM_SEED=7`
//! draws the links' losses from another seed (default 1); `SIM_MTU=9000` sends
//! jumbo datagrams (the runner's `bbr-jumbo` row, `--mtu 9000`; default 1500);
//! `SIM_LOG=pmdt_proto::congestion::bbr=debug` prints the controller's log
//! (with one cell: the two halves of the grid run on two threads);
//! `SIM_STARTUP=train` or `doubling` picks BBR's Startup (default: the
//! transport's); `SIM_SENDER_CORE=on,off` (milliseconds) has the sender share
//! its core, `SIM_RECEIVER_CORE` the receiver.

mod sim_core;
mod sim_log;
mod sim_startup;

use std::time::Duration;

use pmdt::sim::{
    run_timed_send, stream_share_of_frames, ImpairConfig, TimedSendReport, TimedSendScenario,
};

/// pmdt-wanem's default queue (`--queue-bytes 1M`).
const WANEM_QUEUE_BYTES: u64 = 1 << 20;

/// One cell as the runner sets it up.
fn cell(
    rate_bps: u64,
    rtt_ms: u64,
    loss: f64,
    write_for: Duration,
    seed: u64,
    max_datagram: u16,
) -> TimedSendScenario {
    let dir = ImpairConfig::default()
        .with_loss(loss)
        .with_delay(Duration::from_millis(rtt_ms) / 2)
        .with_rate_bps(Some(rate_bps))
        .with_queue_bytes(WANEM_QUEUE_BYTES);
    TimedSendScenario {
        seed,
        write_for,
        forward: dir.clone(),
        reverse: dir,
        time_limit: write_for * 4,
        sample_every: Some(Duration::from_millis(100)),
        sender_core: sim_core::from_env("SIM_SENDER_CORE"),
        receiver_core: sim_core::from_env("SIM_RECEIVER_CORE"),
        transport: sim_startup::from_env(
            pmdt::proto::TransportConfig::default().with_max_datagram(max_datagram),
        ),
        ..Default::default()
    }
}

fn trace(r: &TimedSendReport) {
    if std::env::var("SIM_TRACE").is_err() {
        return;
    }
    let mut prev = 0;
    for (i, s) in r.sender_timeline.iter().enumerate() {
        println!(
            "  t={:.1}s acked {:.0} Mbit/s {:?} bw {:.0} pacing {:.0} Mbit/s min RTT {} µs cwnd {} in \
             flight {} srtt {} µs retx {} pto {} blocked (µs) credit {} window {} app {}",
            (i + 1) as f64 * 0.1,
            (s.stream_bytes_acked.saturating_sub(prev)) as f64 * 80.0 / 1e6,
            s.cc_state,
            s.cc_bandwidth_bps as f64 / 1e6,
            s.pacing_rate as f64 * 8.0 / 1e6,
            s.cc_min_rtt_us,
            s.cwnd,
            s.bytes_in_flight,
            s.rtt_smoothed_us,
            s.packets_retransmitted,
            s.pto_count,
            s.blocked_credit_us,
            s.blocked_window_us,
            s.blocked_app_us,
        );
        prev = s.stream_bytes_acked;
    }
}

/// Where the steady-state window starts (as the runner's `steady_pct`).
const STEADY_FROM_S: u64 = 5;

/// Goodput over seconds `STEADY_FROM_S`..20 of the sender's timeline (samples
/// every 100 ms of the acknowledged stream bytes).
fn steady_bps(r: &TimedSendReport) -> Option<f64> {
    let at = |s: u64| {
        r.sender_timeline
            .get((s * 10) as usize - 1)
            .map(|x| x.stream_bytes_acked)
    };
    let (a, b) = (at(STEADY_FROM_S)?, at(20)?);
    Some((b - a) as f64 * 8.0 / (20 - STEADY_FROM_S) as f64)
}

#[test]
#[ignore = "the full grid: minutes of CPU"]
fn loss_grid_as_the_runner_measures_it() {
    sim_log::log_to_stderr();
    let only: Vec<String> = std::env::var("SIM_CELLS")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let seed = match std::env::var("SIM_SEED") {
        Ok(v) => v.parse().expect("SIM_SEED: an integer"),
        Err(_) => 1,
    };
    // IPv4 and UDP headers take 28 bytes of the MTU.
    let max_datagram = match std::env::var("SIM_MTU") {
        Ok(v) => v.parse::<u16>().expect("SIM_MTU: bytes") - 28,
        Err(_) => 1472,
    };
    let links = [("100m", 100_000_000u64), ("1g", 1_000_000_000)];
    let rtts = [10u64, 100, 200];
    let losses = [0.0, 0.001, 0.01, 0.05];
    let mut cells = Vec::new();
    for (name, rate) in links {
        for rtt in rtts {
            for loss in losses {
                let id = format!("{name}-{rtt}-{}", loss * 100.0);
                if only.is_empty() || only.iter().any(|o| id.contains(o.as_str())) {
                    cells.push((id, name, rate, rtt, loss));
                }
            }
        }
    }
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = cells
            .chunks(cells.len().div_ceil(2).max(1))
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(id, name, rate, rtt, loss)| {
                            let r = run_timed_send(&cell(
                                *rate,
                                *rtt,
                                *loss,
                                Duration::from_secs(20),
                                seed,
                                max_datagram,
                            ))
                            .expect("valid scenario");
                            (id.clone(), *name, *rate, *rtt, *loss, r)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("cell thread"))
            .collect()
    });
    for (id, _, rate, _, _, r) in &results {
        trace(r);
        let s = &r.sender;
        println!(
            "{id}: {:.1}% of the link ({:.1} Mbit/s), wall {:.2} s, connected at {:?}, receipt at \
             {:?}, close {:?}; retransmitted {}/{} packets, PTOs {}, queue drops {}, lost {}",
            r.goodput_bps / *rate as f64 * 100.0,
            r.goodput_bps / 1e6,
            r.wall.as_secs_f64(),
            r.established_at,
            r.receipt_at,
            r.close,
            s.packets_retransmitted,
            s.packets_sent,
            s.pto_count,
            r.forward_link.queue_drops,
            r.forward_link.lost,
        );
    }
    println!(
        "\n| bbr % of link, whole run (steady state {STEADY_FROM_S}–20 s); ceiling {:.1}: payload share | 0% | 0.1% | 1% | 5% |\n|---|---:|---:|---:|---:|",
        stream_share_of_frames(max_datagram) * 100.0
    );
    for (name, rate) in links {
        for rtt in rtts {
            let row: Vec<String> = losses
                .iter()
                .map(|&loss| {
                    results
                        .iter()
                        .find(|c| c.1 == name && c.3 == rtt && c.4 == loss)
                        .map_or("—".into(), |c| {
                            let steady = steady_bps(&c.5).map_or("—".into(), |g| {
                                format!("{:.1}", g / rate as f64 * 100.0)
                            });
                            format!("{:.1} ({steady})", c.5.goodput_bps / rate as f64 * 100.0)
                        })
                })
                .collect();
            println!("| {name}×{rtt}ms | {} |", row.join(" | "));
        }
    }
    for (id, .., r) in &results {
        assert_eq!(r.bytes, r.bytes_received, "{id}: bytes lost");
        assert_eq!(
            r.close,
            Some(pmdt::proto::CloseReason::Graceful),
            "{id}: not closed gracefully"
        );
    }
}

/// Startup's overshoot at 1 Gbit/s × 200 ms drops about every other datagram of
/// a round at the 1 MiB queue: thousands of holes at once. Every datagram that
/// arrives within the credit is taken (a fixed limit of 4,096 received ranges
/// refused thousands, each sent again), and the stream arrives whole.
#[test]
fn startups_overshoot_at_1_gbit_200_ms_is_taken_within_the_credit() {
    let r = run_timed_send(&cell(
        1_000_000_000,
        200,
        0.0,
        Duration::from_secs(3),
        1,
        1472,
    ))
    .expect("valid scenario");
    assert!(
        r.forward_link.queue_drops > 4096,
        "the overshoot this test is about: {} queue drops",
        r.forward_link.queue_drops
    );
    assert_eq!(
        r.receiver.out_of_window, 0,
        "datagrams refused within the credit"
    );
    assert_eq!(r.bytes, r.bytes_received, "bytes lost");
    assert_eq!(r.close, Some(pmdt::proto::CloseReason::Graceful));
}

/// With jumbo frames (`--mtu 9000`, the runner's `bbr-jumbo` row) a frame is
/// 99.1% stream bytes, against 94.6% at MTU 1500: there the default controller's
/// steady state, lossless and at 1% loss, keeps ≥ 95% of the link (issue #14's
/// lossless target, out of reach at MTU 1500 whatever the controller does).
#[test]
fn with_jumbo_frames_the_steady_state_keeps_95_percent_of_the_link() {
    let max_datagram = 9000 - 28;
    assert!(stream_share_of_frames(max_datagram) > 0.99);
    for loss in [0.0, 0.01] {
        let r = run_timed_send(&cell(
            1_000_000_000,
            100,
            loss,
            Duration::from_secs(20),
            1,
            max_datagram,
        ))
        .expect("valid scenario");
        assert_eq!(r.bytes, r.bytes_received, "loss {loss}: bytes lost");
        let steady = steady_bps(&r).expect("a 20 s timeline") / 1e9;
        assert!(
            steady >= 0.95,
            "loss {loss}: steady state {:.1}% of the link",
            steady * 100.0
        );
    }
}
