//! Across many seeds and impairment mixes, the received stream equals the sent one,
//! connections close cleanly, and the same seed gives the same run.

use std::time::Duration;

use pmdt::sim::{run_bulk, BulkScenario, GilbertElliott, ImpairConfig};
use pmdt::{CongestionKind, TransportConfig};

fn mixes() -> Vec<(&'static str, ImpairConfig)> {
    let base = ImpairConfig::default()
        .with_delay(Duration::from_millis(5))
        .with_rate_bps(Some(200_000_000))
        .with_queue_bytes(256 * 1024);
    vec![
        ("clean", base.clone()),
        ("loss 2%", base.clone().with_loss(0.02)),
        (
            "burst loss",
            base.clone().with_burst(Some(GilbertElliott {
                p_good_to_bad: 0.01,
                p_bad_to_good: 0.3,
                loss_in_bad: 0.7,
            })),
        ),
        (
            "reorder+jitter",
            base.clone()
                .with_reorder(0.05)
                .with_reorder_delay(Duration::from_millis(3))
                .with_jitter(Duration::from_micros(500)),
        ),
        ("duplication", base.clone().with_duplicate(0.05)),
        ("corruption", base.clone().with_corrupt(0.03)),
        (
            "everything",
            base.with_loss(0.02)
                .with_reorder(0.03)
                .with_jitter(Duration::from_micros(300))
                .with_duplicate(0.02)
                .with_corrupt(0.01),
        ),
    ]
}

#[test]
fn streams_arrive_exactly_under_every_impairment_mix() {
    for (name, link) in mixes() {
        for seed in 1..=20u64 {
            for cc in [
                CongestionKind::Bbr,
                CongestionKind::NewReno,
                CongestionKind::Cubic,
                CongestionKind::Paced {
                    rate_bps: 150_000_000,
                },
                CongestionKind::Fixed { window_packets: 50 },
            ] {
                let sc = BulkScenario {
                    seed,
                    bytes_per_flow: 600_000,
                    flows: 2,
                    forward: link.clone(),
                    reverse: link.clone(),
                    transport: TransportConfig::default().with_congestion(cc),
                    time_limit: Duration::from_secs(60),
                    ..Default::default()
                };
                let r = run_bulk(&sc).unwrap();
                assert!(
                    r.all_delivered,
                    "{name} seed {seed} {cc:?}: not delivered: {:#?}",
                    r.flows
                );
                assert!(
                    r.all_closed_gracefully,
                    "{name} seed {seed} {cc:?}: close: {:?}",
                    r.flows
                        .iter()
                        .map(|f| (f.client_close, f.server_close))
                        .collect::<Vec<_>>()
                );
                // A closed connection holds no packet state any more.
                for f in &r.flows {
                    assert_eq!(f.sender.bytes_in_flight, 0);
                }
                if link.loss > 0.0 || link.burst.is_some() {
                    assert!(r.flows.iter().any(|f| f.sender.packets_retransmitted > 0));
                }
            }
        }
    }
}

#[test]
fn same_seed_same_run() {
    let sc = BulkScenario {
        seed: 42,
        bytes_per_flow: 300_000,
        forward: mixes().pop().unwrap().1,
        reverse: mixes().pop().unwrap().1,
        ..Default::default()
    };
    let a = run_bulk(&sc).unwrap();
    let b = run_bulk(&sc).unwrap();
    assert_eq!(a.elapsed, b.elapsed);
    assert_eq!(a.forward_link, b.forward_link);
    assert_eq!(
        a.flows[0].sender.packets_retransmitted,
        b.flows[0].sender.packets_retransmitted
    );
    let c = run_bulk(&BulkScenario { seed: 43, ..sc }).unwrap();
    assert_ne!(a.forward_link, c.forward_link, "another seed, another run");
}

#[test]
fn corrupted_packets_past_the_checksum_never_panic_and_are_counted() {
    // As if UDP checksums were off: corrupted datagrams reach the protocol. The
    // decoder and state machine must survive; the stream may then be wrong, which
    // is why pmdt requires the UDP checksum (docs/PROTOCOL.md).
    for seed in 1..=5 {
        let link = ImpairConfig::default()
            .with_corrupt(0.05)
            .with_corrupt_bypasses_checksum(true);
        let r = run_bulk(&BulkScenario {
            seed,
            bytes_per_flow: 300_000,
            forward: link.clone(),
            reverse: link,
            time_limit: Duration::from_secs(30),
            ..Default::default()
        })
        .unwrap();
        assert!(r.forward_link.corrupted > 0);
        // It ran to an end (no panic, no hang) within the time limit.
        assert!(r.elapsed <= Duration::from_secs(30));
        assert!(r.flows.iter().all(|f| f.client_close.is_some()
            || f.completed_at.is_some()
            || r.elapsed >= Duration::from_secs(29)));
    }
}
