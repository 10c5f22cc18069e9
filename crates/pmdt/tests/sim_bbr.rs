//! The model-based default controller (BBR) in the simulator: goodput on long, lossy
//! paths with no hand-set rate or window, queueing, adaptation and sharing. Virtual
//! time: every figure is deterministic. Print them with `--nocapture`; set
//! `SIM_TRACE=1` for a per-100 ms timeline of the sender's model, `SIM_SEED=n` for
//! another draw of the losses (21 by default).

mod sim_trace;

use std::time::Duration;

use pmdt::proto::ControllerState;
use pmdt::sim::{run_bulk, BulkReport, BulkScenario, CoreShare, FlowReport, ImpairConfig};
use pmdt::{CongestionKind, Startup, TransportConfig};

/// Sampling interval of the timelines.
const TICK: Duration = Duration::from_millis(100);
/// Payload share of a full datagram on the simulated link (it counts pmdt bytes:
/// 1472-byte datagrams carry 1432 stream bytes); goodput is compared with the link
/// rate itself, this is only printed.
const PAYLOAD_SHARE: f64 = (1472 - pmdt::proto::wire::DATA_HEADER_LEN) as f64 / 1472.0;

/// A bottleneck of `rate_bps` with `rtt` (split evenly), random `loss` on the data
/// direction and a drop-tail queue of `queue_bdps` bandwidth-delay products.
fn path(rate_bps: u64, rtt: Duration, loss: f64, queue_bdps: f64) -> (ImpairConfig, ImpairConfig) {
    let bdp = rate_bps as f64 / 8.0 * rtt.as_secs_f64();
    let fwd = ImpairConfig::default()
        .with_delay(rtt / 2)
        .with_loss(loss)
        .with_rate_bps(Some(rate_bps))
        .with_queue_bytes(((bdp * queue_bdps) as u64).max(64 * 1024));
    let rev = ImpairConfig::default().with_delay(rtt / 2);
    (fwd, rev)
}

fn scenario(forward: ImpairConfig, reverse: ImpairConfig, bytes: u64) -> BulkScenario {
    BulkScenario {
        seed: std::env::var("SIM_SEED").map_or(21, |v| v.parse().expect("SIM_SEED: an integer")),
        bytes_per_flow: bytes,
        forward,
        reverse,
        transport: TransportConfig::default(),
        time_limit: Duration::from_secs(60),
        sample_every: Some(TICK),
        ..Default::default()
    }
}

/// Arrival rate (distinct bytes at the receiver) in tick `i`, bits/s.
fn tick_rate(f: &FlowReport, i: usize) -> f64 {
    let prev = if i == 0 { 0 } else { f.arrived_timeline[i - 1] };
    (f.arrived_timeline[i] - prev) as f64 * 8.0 / TICK.as_secs_f64()
}

/// Goodput in steady state, bits/s: distinct bytes arrived at the receiver from the
/// first tick after Startup and Drain to the last full tick before completion.
fn steady_goodput(f: &FlowReport) -> f64 {
    let from = f
        .sender_timeline
        .iter()
        .position(|s| {
            !matches!(
                s.cc_state,
                ControllerState::Startup | ControllerState::Drain
            )
        })
        .expect("left Startup")
        + 1;
    // Up to the last tick with new data still to send (not the tail's repairs).
    let total = f.bytes_received + 8;
    let to = f
        .sender_timeline
        .iter()
        .rposition(|s| s.stream_bytes_sent < total)
        .unwrap_or(0)
        .saturating_sub(1);
    assert!(
        to > from + 5,
        "too short a steady state: ticks {from}..{to}"
    );
    let bytes = f.arrived_timeline[to] - f.arrived_timeline[from - 1];
    bytes as f64 * 8.0 / (TICK * (to - from + 1) as u32).as_secs_f64()
}

fn trace(f: &FlowReport) {
    sim_trace::print_timeline("", f, TICK);
}

/// Runs one transfer with default settings; returns (steady goodput, report).
fn goodput_case(rate_bps: u64, rtt_ms: u64, loss: f64, bytes: u64) -> (f64, BulkReport) {
    let (forward, reverse) = path(rate_bps, Duration::from_millis(rtt_ms), loss, 1.0);
    let r = run_bulk(&scenario(forward, reverse, bytes)).unwrap();
    let f = &r.flows[0];
    trace(f);
    assert!(
        r.all_delivered && r.all_closed_gracefully,
        "{rtt_ms} ms {loss}: not delivered"
    );
    let s = &f.sender;
    let steady = steady_goodput(f);
    let bdp = rate_bps / 8 * rtt_ms / 1000;
    println!(
        "{:>5} Mbit/s × {rtt_ms:>3} ms, loss {:>4.1}%: steady {:.1} Mbit/s = {:.1}% of the link \
         ({:.1}% of its payload capacity), whole transfer {:.1} Mbit/s; retransmitted {}/{} \
         packets, PTOs {}; model bw {:.1} Mbit/s, min RTT {} µs; window {} packets, receive \
         window {:.2} BDP, send buffer {:.2} BDP",
        rate_bps / 1_000_000,
        loss * 100.0,
        steady / 1e6,
        steady / rate_bps as f64 * 100.0,
        steady / rate_bps as f64 / PAYLOAD_SHARE * 100.0,
        f.goodput_bps / 1e6,
        s.packets_retransmitted,
        s.packets_sent,
        s.pto_count,
        s.cc_bandwidth_bps as f64 / 1e6,
        s.cc_min_rtt_us,
        s.window_packets,
        f.receiver.recv_window as f64 / bdp as f64,
        s.send_window as f64 / bdp as f64,
    );
    (steady, r)
}

#[test]
fn one_gigabit_100ms_full_rate_through_random_loss() {
    let link = 1_000_000_000;
    let only: Option<f64> = std::env::var("SIM_LOSS").ok().and_then(|v| v.parse().ok());
    // At 5% loss the steady goodput depends on where the losses fall: over seeds
    // 21-25 it was 676-839 Mbit/s with the simulator's former link model and
    // 691-780 Mbit/s with the shared impairment model (#12), so the bound is set
    // below both spreads.
    for (loss, share) in [(0.0, 0.95), (0.01, 0.90), (0.05, 0.65)] {
        if only.is_some_and(|o| o != loss) {
            continue;
        }
        let (g, _) = goodput_case(link, 100, loss, 350 << 20);
        assert!(
            g >= share * link as f64,
            "loss {loss}: {:.1} Mbit/s under {share} of the link",
            g / 1e6
        );
    }
}

#[test]
fn hundred_megabit_10ms_full_rate_through_random_loss() {
    let link = 100_000_000;
    // At 5% loss the steady goodput depends on where the losses fall: over seeds
    // 21-25 it was 676-839 Mbit/s with the simulator's former link model and
    // 691-780 Mbit/s with the shared impairment model (#12), so the bound is set
    // below both spreads.
    for (loss, share) in [(0.0, 0.95), (0.01, 0.90), (0.05, 0.65)] {
        let (g, _) = goodput_case(link, 10, loss, 40 << 20);
        assert!(
            g >= share * link as f64,
            "loss {loss}: {:.1} Mbit/s under {share} of the link",
            g / 1e6
        );
    }
}

/// In steady state the queue peaks at the end of each ProbeBW Up round (gain 1.2 for
/// about one RTT: 0.2 BDP). Over the whole transfer Startup's overshoot (up to one
/// BDP for a few rounds) dominates p99, so the criterion is checked from 1 s on.
#[test]
fn a_fast_sender_into_a_deep_queue_keeps_it_short() {
    // No sender-side limit (a 10 Gbit/s-capable host: the simulated sender is
    // unlimited) into a 1 Gbit/s bottleneck with 8 BDPs of queue.
    let rtt = Duration::from_millis(40);
    let link = 1_000_000_000;
    let (forward, reverse) = path(link, rtt, 0.0, 8.0);
    let sc = scenario(forward, reverse, 250 << 20);
    let whole = run_bulk(&sc).unwrap();
    trace(&whole.flows[0]);
    assert!(whole.all_delivered && whole.all_closed_gracefully);
    // Startup overfills the queue for a few rounds (up to one BDP: its window is 2
    // BDPs); the criterion is about steady state, measured from 1 s on (Startup and
    // Drain end by 0.7 s here).
    let steady_from = Duration::from_secs(1);
    let r = run_bulk(&BulkScenario {
        link_stats_from: Some(steady_from),
        ..sc
    })
    .unwrap();
    println!(
        "deep queue, whole transfer including Startup: queueing delay p99 {} µs, max {} kB",
        whole.forward_link.queue_delay_us.quantile(0.99),
        whole.forward_link.max_queue_bytes / 1000
    );
    let q = &r.forward_link.queue_delay_us;
    let (p50, p99) = (q.quantile(0.5), q.quantile(0.99));
    let s = &r.flows[0].sender;
    let retx = s.packets_retransmitted as f64 / s.packets_sent as f64;
    println!(
        "deep queue, 1 Gbit/s × 40 ms, from 1 s on: queueing delay p50 {p50} µs, p99 {p99} µs ({:.1}% of the \
         base RTT), max queue {} kB, retransmitted {:.2}%, goodput {:.1} Mbit/s",
        p99 as f64 / rtt.as_micros() as f64 * 100.0,
        r.forward_link.max_queue_bytes / 1000,
        retx * 100.0,
        r.flows[0].goodput_bps / 1e6
    );
    assert!(
        p99 < rtt.as_micros() as u64 / 4,
        "p99 queueing delay {p99} µs"
    );
    assert!(retx < 0.02, "retransmitted {:.2}%", retx * 100.0);
}

/// A bottleneck of 1 Gbit/s × 40 ms falls to 200 Mbit/s at 3 s and comes
/// back at 6 s, under a sender on a core of its own or sharing it (`core`):
/// how long the bandwidth estimate takes to follow each way, and the
/// arrival rate in the last second; asserts no timeout or close.
fn drops_and_recovers(core: Option<CoreShare>) -> (Option<f64>, Option<f64>, f64) {
    let rtt = Duration::from_millis(40);
    let (high, low) = (1_000_000_000u64, 200_000_000u64);
    let (forward, reverse) = path(high, rtt, 0.0, 1.0);
    let (down_at, up_at, end) = (3usize, 6usize, 9usize);
    let r = run_bulk(&BulkScenario {
        time_limit: Duration::from_secs(end as u64),
        rate_changes: vec![
            (Duration::from_secs(down_at as u64), Some(low)),
            (Duration::from_secs(up_at as u64), Some(high)),
        ],
        sender_core: core,
        ..scenario(forward, reverse, 4 << 30)
    })
    .unwrap();
    let f = &r.flows[0];
    trace(f);
    let ticks_per_s = (1.0 / TICK.as_secs_f64()) as usize;
    // The first tick after `from` (seconds) where the sender's pacing rate is within
    // `within` of `target`, and stays there for a second.
    let settles = |from: usize, target: u64, lo: f64, hi: f64| -> Option<f64> {
        let start = from * ticks_per_s;
        (start..f.sender_timeline.len() - ticks_per_s)
            .find(|&i| {
                f.sender_timeline[i..i + ticks_per_s].iter().all(|s| {
                    let rate = s.cc_bandwidth_bps as f64;
                    rate >= lo * target as f64 && rate <= hi * target as f64
                })
            })
            .map(|i| (i + 1 - start) as f64 * TICK.as_secs_f64())
    };
    let down = settles(down_at, low, 0.8, 1.25);
    let up = settles(up_at, high, 0.8, 1.25);
    // Arrival rate in the last second at the high rate.
    let last: f64 = ((end - 1) * ticks_per_s..end * ticks_per_s - 1)
        .map(|i| tick_rate(f, i))
        .sum::<f64>()
        / (ticks_per_s - 1) as f64;
    let s = &f.sender;
    println!(
        "1 Gbit/s → 200 Mbit/s at {down_at} s → 1 Gbit/s at {up_at} s (40 ms RTT, sender's core \
         {core:?}): bandwidth estimate within [0.8, 1.25] × the new rate after {down:?} s down, {up:?} s up; \
         arrivals in the last second {:.0} Mbit/s; PTOs {}, retransmitted {}/{}",
        last / 1e6,
        s.pto_count,
        s.packets_retransmitted,
        s.packets_sent
    );
    assert_eq!(s.pto_count, 0, "a timeout");
    assert!(f.client_close.is_none(), "closed: {:?}", f.client_close);
    (down, up, last)
}

#[test]
fn the_rate_follows_a_bottleneck_that_drops_and_recovers() {
    let (down, up, last) = drops_and_recovers(None);
    assert!(down.is_some_and(|t| t <= 2.0), "down: {down:?}");
    assert!(up.is_some_and(|t| t <= 2.0), "up: {up:?}");
    assert!(last > 0.8e9, "{last}");
}

/// The same under a sender on its core 14 ms of every 20 (as on the VM,
/// where it shares one with pmdt-wanem). The acknowledgments that come while
/// it is away are read together on its return, the oldest up to 6 ms late;
/// read as the path's RTT, one such sample ended each probe as if it met its
/// own queue: the estimate followed the fall in 1.5 s and the rise in 1.5 s
/// (0.4 s with a core of its own). Each sample now loses the rise its
/// forward one-way delay does not show (`forward_delay` in pmdt-proto): 1.0 s
/// and 0.4 s.
#[test]
fn the_rate_follows_a_bottleneck_that_comes_back_under_a_sender_sharing_its_core() {
    let ms = Duration::from_millis;
    let (down, up, _) = drops_and_recovers(Some(CoreShare {
        on: ms(14),
        off: ms(6),
    }));
    assert!(down.is_some_and(|t| t <= 2.0), "down: {down:?}");
    assert!(up.is_some_and(|t| t <= 1.0), "up: {up:?}");
}

#[test]
fn four_flows_share_fairly() {
    let (forward, reverse) = path(100_000_000, Duration::from_millis(20), 0.0, 1.0);
    let r = run_bulk(&BulkScenario {
        flows: 4,
        ..scenario(forward, reverse, 15 << 20)
    })
    .unwrap();
    println!(
        "4 BBR flows over 100 Mbit/s × 20 ms: Jain {:.4}, aggregate {:.1} Mbit/s",
        r.jain_index,
        r.aggregate_goodput_bps / 1e6
    );
    assert!(r.all_delivered && r.all_closed_gracefully);
    assert!(r.jain_index >= 0.95, "Jain {}", r.jain_index);
}

/// Four flows that start together, each from its initial train
/// (`Startup::FromInitialTrain`): each train sees a different mix of the
/// others' datagrams, so they start unevenly (the cost stated where the
/// option is documented, `--fast-start`), and ProbeBW evens them out. Before
/// Cruise climbed in equal steps beside other flows, it did so more slowly
/// than after identical doubling starts (Jain 0.9950 against 0.9998); then
/// both ended within 0.01 of each other (0.9950 and 0.9935). Since Startup's
/// queue exit weighs the deepest queue of its earlier rounds (session 55),
/// the doubling starts, which see each other's queue come and go, end
/// Startup on loss instead, less evenly: 0.9666.
#[test]
fn four_flows_from_their_initial_trains_share_fairly() {
    let (forward, reverse) = path(100_000_000, Duration::from_millis(20), 0.0, 1.0);
    let jain = |startup: Startup| {
        let mut sc = scenario(forward.clone(), reverse.clone(), 15 << 20);
        sc.flows = 4;
        sc.transport = sc.transport.with_startup(startup);
        let r = run_bulk(&sc).unwrap();
        assert!(r.all_delivered && r.all_closed_gracefully);
        println!(
            "4 BBR flows over 100 Mbit/s × 20 ms, {startup:?}: Jain {:.4}, aggregate {:.1} Mbit/s",
            r.jain_index,
            r.aggregate_goodput_bps / 1e6
        );
        r.jain_index
    };
    let doubling = jain(Startup::Doubling);
    let train = jain(Startup::FromInitialTrain);
    assert!(doubling >= 0.95, "Jain {doubling}");
    assert!(train >= 0.95, "Jain {train}");
}

/// One BBR and one CUBIC flow over `rate_bps` × `rtt` with a queue of
/// `queue_bdps` BDPs, `bytes` each: BBR's share of the bytes both delivered
/// in steady state (from the warm-up to the first completion).
fn bbr_share_beside_cubic(rate_bps: u64, rtt: Duration, queue_bdps: f64, bytes: u64) -> f64 {
    let (forward, reverse) = path(rate_bps, rtt, 0.0, queue_bdps);
    let r = run_bulk(&BulkScenario {
        flows: 2,
        flow_congestion: vec![CongestionKind::Bbr, CongestionKind::Cubic],
        ..scenario(forward, reverse, bytes)
    })
    .unwrap();
    trace(&r.flows[0]);
    assert!(r.all_delivered && r.all_closed_gracefully);
    let shares: Vec<f64> = r
        .flows
        .iter()
        .map(|f| {
            f.bytes_at_first_completion
                .saturating_sub(f.bytes_at_warmup) as f64
        })
        .collect();
    let bbr = shares[0] / shares.iter().sum::<f64>();
    println!(
        "BBR vs CUBIC over {} Mbit/s × {} ms, {queue_bdps} BDP queue: BBR {:.1}%, CUBIC {:.1}% \
         of the steady-state bytes",
        rate_bps / 1_000_000,
        rtt.as_millis(),
        bbr * 100.0,
        (1.0 - bbr) * 100.0
    );
    bbr
}

/// Flows of different controllers from one endpoint (as `pmdt-send` runs
/// them from one process): each keeps its own controller, and both deliver.
#[test]
fn flows_of_different_controllers_share_one_endpoint() {
    let (forward, reverse) = path(20_000_000, Duration::from_millis(20), 0.0, 1.0);
    let kinds = vec![CongestionKind::Bbr, CongestionKind::Cubic];
    let r = run_bulk(&BulkScenario {
        flows: 2,
        flow_congestion: kinds.clone(),
        flows_share_endpoint: true,
        ..scenario(forward, reverse, 2 << 20)
    })
    .unwrap();
    assert!(r.all_delivered && r.all_closed_gracefully);
    assert_eq!(r.client_endpoints, 1, "the flows came from one endpoint");
    let used: Vec<CongestionKind> = r.flows.iter().map(|f| f.sender.congestion).collect();
    assert_eq!(used, kinds);
}

#[test]
fn bbr_and_cubic_share_a_bottleneck() {
    let bbr = bbr_share_beside_cubic(100_000_000, Duration::from_millis(20), 1.0, 25 << 20);
    assert!((0.25..=0.75).contains(&bbr), "BBR share {bbr}");
}

/// Beside one CUBIC flow in a shallow buffer (a fifth of the BDP): each probe
/// for bandwidth overflows it, CUBIC backs off and BBR's estimate rises into
/// the gap. Probing every few rounds, BBR took 93 % of the link (the same
/// scenario before the change); seeing another flow's standing queue, it
/// waits between probes as long as CUBIC takes to regrow.
#[test]
fn bbr_beside_cubic_in_a_shallow_buffer_leaves_it_a_share() {
    let bbr = bbr_share_beside_cubic(100_000_000, Duration::from_millis(100), 0.2, 150_000_000);
    assert!((0.25..=0.75).contains(&bbr), "BBR share {bbr}");
}

/// The shares in other buffers and paths (docs/RESULTS.md, session 24):
/// `SIM_SHARE=RATE_BPS,RTT_MS,QUEUE_BDPS,BYTES cargo test --release -p pmdt
/// --no-default-features --test sim_bbr shares_on_other_paths -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement on a path given in SIM_SHARE"]
fn shares_on_other_paths() {
    let spec = std::env::var("SIM_SHARE").expect("SIM_SHARE=RATE_BPS,RTT_MS,QUEUE_BDPS,BYTES");
    let v: Vec<f64> = spec
        .split(',')
        .map(|x| x.trim().parse().expect("a number"))
        .collect();
    let [rate, rtt, queue, bytes] = v[..] else {
        panic!("SIM_SHARE takes four numbers");
    };
    bbr_share_beside_cubic(
        rate as u64,
        Duration::from_secs_f64(rtt / 1e3),
        queue,
        bytes as u64,
    );
}

/// The large case: 10 Gbit/s × 100 ms × 0.5 % loss, 4 GB. About 20 s of
/// CPU in release (minutes in a debug build), so not in CI: `cargo test --release -p pmdt
/// --no-default-features --test sim_bbr ten_gigabit -- --ignored --nocapture`.
/// Measured (2026-11-24, `SIM_SEED` 21-26): steady 9.22-9.40 Gbit/s (mean 9.30;
/// whole transfer ~5.9, Startup at 100 ms takes ~2 s), receive window 2.91 BDP in
/// every seed. Before, 8.79-9.68 Gbit/s (mean 9.35) and 2.93-3.16 BDP: at this
/// rate about two retransmissions per round trip are lost, each a hole of 2 rounds
/// that recurs and sizes the credit at 3 RTTs of data, and
/// - a hole spanning BBR's probe for bandwidth (a queue of up to a quarter of the
///   RTT) counted 2.1-2.24 rounds of the RTT at its ends: it now counts rounds of
///   the longest smoothed RTT while it was open (2.0);
/// - a retransmission lost again (every few seconds) held the head for 3 rounds and
///   stalled the sender for most of one: such data now goes out in two copies.
#[test]
#[ignore = "4 GB at 10 Gbit/s: too slow for CI"]
fn ten_gigabit_100ms_half_percent_loss_4gb() {
    let link = 10_000_000_000;
    let (g, r) = goodput_case(link, 100, 0.005, 4_000_000_000);
    let f = &r.flows[0];
    let bdp = link / 8 / 10;
    println!(
        "10 Gbit/s × 100 ms × 0.5%: steady {:.2} Gbit/s, whole {:.2} Gbit/s, receive window \
         {:.2} BDP",
        g / 1e9,
        f.goodput_bps / 1e9,
        f.receiver.recv_window as f64 / bdp as f64
    );
    assert!(g >= 9e9);
    assert!(f.receiver.recv_window <= 3 * bdp);
}
