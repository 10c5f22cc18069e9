//! The model-based default controller (BBR) in the simulator: goodput on long, lossy
//! paths with no hand-set rate or window, queueing, adaptation and sharing. Virtual
//! time: every figure is deterministic. Print them with `--nocapture`.

use std::time::Duration;

use pmdt::sim::{run_bulk, BulkReport, BulkScenario, LinkConfig};
use pmdt::TransportConfig;

/// A bottleneck of `rate_bps` with `rtt` (split evenly), random `loss` on the data
/// direction and a queue of one BDP.
fn path(rate_bps: u64, rtt: Duration, loss: f64) -> (LinkConfig, LinkConfig) {
    let bdp = (rate_bps as f64 / 8.0 * rtt.as_secs_f64()) as u64;
    let fwd = LinkConfig {
        delay: rtt / 2,
        loss,
        rate_bps: Some(rate_bps),
        queue_bytes: bdp.max(256 * 1024),
        ..Default::default()
    };
    let rev = LinkConfig {
        delay: rtt / 2,
        ..Default::default()
    };
    (fwd, rev)
}

/// Goodput from the end of warm-up (20% of the bytes) to completion, bits/s.
fn steady_goodput(r: &BulkReport) -> f64 {
    let f = &r.flows[0];
    let t0 = r.warmup_at.unwrap_or_default();
    let t1 = f.completed_at.unwrap_or(r.elapsed);
    (f.bytes_received - f.bytes_at_warmup) as f64 * 8.0 / (t1 - t0).as_secs_f64().max(1e-9)
}

fn goodput_case(rate_bps: u64, rtt_ms: u64, loss: f64, bytes: u64) -> (f64, f64, BulkReport) {
    let (forward, reverse) = path(rate_bps, Duration::from_millis(rtt_ms), loss);
    let r = run_bulk(&BulkScenario {
        seed: 21,
        bytes_per_flow: bytes,
        forward,
        reverse,
        transport: TransportConfig::default(),
        time_limit: Duration::from_secs(60),
        ..Default::default()
    })
    .unwrap();
    let s = &r.flows[0].sender;
    let steady = steady_goodput(&r);
    let whole = r.flows[0].goodput_bps;
    println!(
        "{:>5} Mbit/s × {rtt_ms:>3} ms, loss {:>4.1}%: steady {:.1} Mbit/s ({:.1}%), whole {:.1} Mbit/s, \
         retx {}/{} pkts, pto {}, est bw {:.1} Mbit/s, min_rtt {} µs, state {:?}, win {} pkts, \
         recv win {} B, blocked win/credit/app {}/{}/{} ms",
        rate_bps / 1_000_000,
        loss * 100.0,
        steady / 1e6,
        steady / rate_bps as f64 * 100.0,
        whole / 1e6,
        s.packets_retransmitted,
        s.packets_sent,
        s.pto_count,
        s.cc_bandwidth_bps as f64 / 1e6,
        s.cc_min_rtt_us,
        s.cc_state,
        s.window_packets,
        r.flows[0].receiver.recv_window,
        s.blocked_window_us / 1000,
        s.blocked_credit_us / 1000,
        s.blocked_app_us / 1000,
    );
    assert!(r.all_delivered, "not all delivered");
    (steady, whole, r)
}

#[test]
fn explore() {
    goodput_case(100_000_000, 10, 0.0, 40 << 20);
    goodput_case(100_000_000, 10, 0.01, 40 << 20);
    goodput_case(100_000_000, 10, 0.05, 40 << 20);
}
