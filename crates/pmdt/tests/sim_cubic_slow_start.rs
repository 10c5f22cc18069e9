//! CUBIC's slow start through the shipping connection code: HyStart++ (RFC
//! 9406) slows it when the round trip rises, so it overshoots a deep queue by
//! far less than the classic slow start (NewReno's, RFC 5681) does.

use std::time::Duration;

use pmdt::sim::{run_bulk, BulkScenario, FlowReport, ImpairConfig};
use pmdt::{CongestionKind, TransportConfig};

/// One flow of `cc` through 100 Mbit/s × 40 ms (a 500 KB pipe) and a 2 MiB
/// drop-tail queue for 3 s.
fn through_a_deep_queue(cc: CongestionKind) -> FlowReport {
    let fwd = ImpairConfig::default()
        .with_delay(Duration::from_millis(20))
        .with_rate_bps(Some(100_000_000))
        .with_queue_bytes(2 << 20);
    let rev = ImpairConfig::default().with_delay(Duration::from_millis(20));
    let r = run_bulk(&BulkScenario {
        seed: 7,
        flows: 1,
        bytes_per_flow: 1 << 30,
        forward: fwd,
        reverse: rev,
        transport: TransportConfig::default(),
        flow_congestion: vec![cc],
        time_limit: Duration::from_secs(3),
        sample_every: Some(Duration::from_millis(100)),
        ..Default::default()
    })
    .unwrap();
    r.flows.into_iter().next().unwrap()
}

/// Doubling until a loss, NewReno's slow start reaches 4.4 MB against the
/// 2.6 MB the pipe and queue hold and loses about 1,770 datagrams. CUBIC's
/// HyStart++ sees the queue's delay at 1.8 MB, grows a quarter as fast from
/// there and loses about 440 when its five rounds of that overrun the queue.
#[test]
fn hystart_overshoots_a_deep_queue_by_far_less_than_the_classic_slow_start() {
    let classic = through_a_deep_queue(CongestionKind::NewReno);
    let hystart = through_a_deep_queue(CongestionKind::Cubic);
    let lost = |f: &FlowReport| f.sender.losses_detected;
    let peak = |f: &FlowReport| f.sender_timeline.iter().map(|s| s.cwnd).max().unwrap();
    assert!(
        lost(&classic) > 1000,
        "the classic slow start overran the queue: {} lost",
        lost(&classic)
    );
    assert!(
        lost(&hystart) * 3 < lost(&classic),
        "HyStart++ lost {} datagrams, the classic slow start {}",
        lost(&hystart),
        lost(&classic)
    );
    assert!(
        peak(&hystart) * 4 < peak(&classic) * 3,
        "windows at most {} (HyStart++) and {} (classic)",
        peak(&hystart),
        peak(&classic)
    );
}
