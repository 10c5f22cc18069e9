//! The default controller's (BBR's) model decisions that the loss grid
//! (`sim_loss_grid.rs`) showed to cost goodput, one fast, deterministic case each
//! (virtual time, a fixed seed), on `pmdt-send -t` cells through a `pmdt-wanem`-like
//! path ([`run_timed_send`]).

use std::time::Duration;

use pmdt::proto::{CloseReason, ConnectionStats, ControllerState, Startup, TransportConfig};
use pmdt::sim::{
    run_timed_send, stream_share_of_frames, ImpairConfig, TimedSendReport, TimedSendScenario,
};

const TICK: Duration = Duration::from_millis(100);

fn path(rate_bps: u64, rtt_ms: u64, loss: f64, queue_bytes: u64) -> ImpairConfig {
    ImpairConfig::default()
        .with_loss(loss)
        .with_delay(Duration::from_millis(rtt_ms) / 2)
        .with_rate_bps(Some(rate_bps))
        .with_queue_bytes(queue_bytes)
}

fn run(forward: ImpairConfig, reverse: ImpairConfig, secs: u64) -> TimedSendReport {
    let r = run_timed_send(&TimedSendScenario {
        seed: 1,
        write_for: Duration::from_secs(secs),
        forward,
        reverse,
        time_limit: Duration::from_secs(secs * 4),
        sample_every: Some(TICK),
        ..Default::default()
    })
    .expect("valid scenario");
    assert_eq!(r.close, Some(CloseReason::Graceful));
    assert_eq!(r.bytes, r.bytes_received);
    r
}

/// Acknowledged stream bytes per second between ticks `from` and `to`, bits/s.
fn acked_rate(t: &[ConnectionStats], from: usize, to: usize) -> f64 {
    (t[to].stream_bytes_acked - t[from].stream_bytes_acked) as f64 * 8.0
        / (TICK * (to - from) as u32).as_secs_f64()
}

fn first_probe_bw(t: &[ConnectionStats]) -> usize {
    t.iter()
        .position(|s| {
            !matches!(
                s.cc_state,
                ControllerState::Startup | ControllerState::Drain
            )
        })
        .expect("left Startup")
}

/// ProbeBW cruises at the bandwidth estimate itself: pacing 1 % below it (the
/// draft's margin) left the link 1 % idle between probes for good.
#[test]
fn cruising_keeps_the_link_full() {
    let link = 100_000_000;
    let p = path(link, 10, 0.0, 1 << 20);
    let r = run(p.clone(), p, 4);
    let t = &r.sender_timeline;
    let from = first_probe_bw(t) + 5;
    let rate = acked_rate(t, from, 35);
    let capacity = link as f64 * stream_share_of_frames(1472);
    println!(
        "100 Mbit/s × 10 ms from tick {from}: {:.2} Mbit/s, {:.2}% of the payload capacity",
        rate / 1e6,
        rate / capacity * 100.0
    );
    assert!(rate >= 0.99 * capacity, "{:.2} Mbit/s", rate / 1e6);
}

/// Startup into a shallow buffer (0.05 BDP, as pmdt-wanem's 1 MiB at 1 Gbit/s ×
/// 200 ms) overflows it within a round. Its exit must come from that round's
/// loss with a rising RTT, and the repair of the overshoot (Drain sends at a third
/// of the rate) must not be taken for a slower link: the bandwidth estimate stays
/// near the link rate after Startup.
#[test]
fn startup_overshoot_into_a_shallow_buffer_keeps_the_model() {
    let link = 200_000_000;
    let rtt_ms = 100;
    let bdp = link / 8 * rtt_ms / 1000;
    let p = path(link, rtt_ms, 0.0, bdp / 20);
    let r = run(p.clone(), p, 6);
    let t = &r.sender_timeline;
    let from = first_probe_bw(t);
    let min_bw = t[from..50]
        .iter()
        .map(|s| s.cc_bandwidth_bps)
        .min()
        .expect("ticks");
    let s = &r.sender;
    println!(
        "200 Mbit/s × 100 ms, queue 0.05 BDP: Startup and Drain over at tick {from}, \
         smallest bandwidth estimate after {:.1} Mbit/s, retransmitted {}/{}, goodput \
         {:.1} Mbit/s",
        min_bw as f64 / 1e6,
        s.packets_retransmitted,
        s.packets_sent,
        r.goodput_bps / 1e6
    );
    // The estimate counts UDP payloads: 1472/1514 of the link at most.
    assert!(
        min_bw as f64 >= 0.9 * link as f64 * 1472.0 / 1514.0,
        "estimate fell to {:.1} Mbit/s",
        min_bw as f64 / 1e6
    );
}

/// Random loss on the wire (pmdt-wanem drops behind its queue) takes packets the
/// bottleneck already carried: the delivery rate the model measures is the link's
/// times (1 − loss). ProbeBW paces at bw / (1 − the loss floor), so at 5 % random
/// loss both ways the link stays full (pacing at the delivery rate left 5 % of it
/// idle) and the rate is not cut: random loss is not congestion.
#[test]
fn five_percent_random_loss_keeps_the_link_full() {
    let link = 100_000_000;
    let loss = 0.05;
    let p = path(link, 20, loss, 1 << 20);
    let r = run(p.clone(), p, 5);
    let t = &r.sender_timeline;
    let from = first_probe_bw(t) + 5;
    let rate = acked_rate(t, from, 45);
    // The most the link can carry in stream bytes once 5 % of it is lost.
    let capacity = link as f64 * stream_share_of_frames(1472) * (1.0 - loss);
    let pacing: Vec<f64> = t[from..45]
        .iter()
        .filter(|s| s.cc_state == ControllerState::ProbeBwCruise)
        .map(|s| s.pacing_rate as f64 * 8.0)
        .collect();
    let mean_pacing = pacing.iter().sum::<f64>() / pacing.len().max(1) as f64;
    // The link's rate in UDP payload bytes (what pacing counts).
    let link_payload = link as f64 * 1472.0 / 1514.0;
    println!(
        "100 Mbit/s × 20 ms, 5% loss both ways: {:.2} Mbit/s acknowledged = {:.1}% of what \
         the link can carry; cruising pacing on average {:.1}% of the link",
        rate / 1e6,
        rate / capacity * 100.0,
        mean_pacing / link_payload * 100.0
    );
    assert!(!pacing.is_empty(), "never cruised");
    // Pacing at the delivery rate: 0.95 × 0.99 of the link.
    assert!(
        mean_pacing >= 0.97 * link_payload,
        "paced at {:.1} Mbit/s",
        mean_pacing / 1e6
    );
    // 0.97: a standing queue of its own in Cruise (pacing at bw / (1 − loss)) is
    // yielded to once per Cruise, about 0.2 % of the link here.
    assert!(rate >= 0.97 * capacity, "{:.2} Mbit/s", rate / 1e6);
}

/// `Startup::FromInitialTrain` on a long path with pmdt-wanem's shallow buffer
/// (1 MiB at 1 Gbit/s × 200 ms): the initial window's burst measures the
/// bottleneck and the next round is sent at its rate, so the link fills in a few
/// round trips where doubling from 10 datagrams takes 13; the model after Startup
/// is the same link rate.
#[test]
fn a_start_from_the_initial_train_fills_a_long_path_sooner() {
    let link = 1_000_000_000;
    let p = path(link, 200, 0.0, 1 << 20);
    let full = |startup: Startup| {
        let r = run_timed_send(&TimedSendScenario {
            seed: 1,
            write_for: Duration::from_secs(6),
            forward: p.clone(),
            reverse: p.clone(),
            transport: TransportConfig::default().with_startup(startup),
            time_limit: Duration::from_secs(24),
            sample_every: Some(TICK),
            ..Default::default()
        })
        .expect("valid scenario");
        assert_eq!(r.close, Some(CloseReason::Graceful));
        assert_eq!(r.bytes, r.bytes_received);
        let t = &r.sender_timeline;
        // The first tick of the connection with data acknowledged at 80 % of the
        // link or more.
        let at = (0..t.len() - 1)
            .find(|&i| acked_rate(t, i, i + 1) >= 0.8 * link as f64)
            .expect("the link filled");
        let bw = t[first_probe_bw(t)..]
            .iter()
            .map(|s| s.cc_bandwidth_bps)
            .max()
            .expect("ticks");
        println!(
            "{startup:?}: 80 % of the link at tick {at}, goodput {:.1} Mbit/s, bandwidth \
             estimate {:.1} Mbit/s, retransmitted {}/{}",
            r.goodput_bps / 1e6,
            bw as f64 / 1e6,
            r.sender.packets_retransmitted,
            r.sender.packets_sent
        );
        (at, r.goodput_bps, bw)
    };
    let (doubling_at, doubling_goodput, _) = full(Startup::Doubling);
    let (train_at, train_goodput, train_bw) = full(Startup::FromInitialTrain);
    // The handshake takes a round trip (two ticks), the train another; then about
    // three rounds of Startup.
    assert!(train_at <= 12, "full at tick {train_at}");
    assert!(
        doubling_at >= train_at + 10,
        "doubling full at tick {doubling_at}"
    );
    assert!(train_goodput > doubling_goodput * 1.1);
    assert!(train_bw as f64 >= 0.9 * link as f64 * 1472.0 / 1514.0);
}
