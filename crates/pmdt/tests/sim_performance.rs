//! Goodput and fairness in the simulator. The figures are printed (run with
//! `--nocapture`) and recorded in docs/RESULTS.md; the assertions are the behaviour.

use std::time::Duration;

use pmdt::sim::{run_bulk, BulkScenario, ImpairConfig};
use pmdt::{CongestionKind, TransportConfig};

fn lossy_10ms(rate_bps: u64) -> ImpairConfig {
    ImpairConfig::default()
        .with_delay(Duration::from_millis(5)) // 10 ms RTT
        .with_loss(0.01)
        .with_rate_bps(Some(rate_bps))
        .with_queue_bytes(512 * 1024)
}

#[test]
fn paced_keeps_the_link_rate_under_one_percent_loss_and_newreno_backs_off() {
    let link = 100_000_000;
    let paced = run_bulk(&BulkScenario {
        seed: 7,
        bytes_per_flow: 20 << 20,
        forward: lossy_10ms(link),
        reverse: ImpairConfig::default().with_delay(Duration::from_millis(5)),
        transport: TransportConfig::default().with_congestion(CongestionKind::Paced {
            rate_bps: 97_000_000,
        }),
        ..Default::default()
    })
    .unwrap();
    assert!(paced.all_delivered && paced.all_closed_gracefully);
    let newreno = run_bulk(&BulkScenario {
        seed: 7,
        bytes_per_flow: 2 << 20,
        forward: lossy_10ms(link),
        reverse: ImpairConfig::default().with_delay(Duration::from_millis(5)),
        transport: TransportConfig::default().with_congestion(CongestionKind::NewReno),
        ..Default::default()
    })
    .unwrap();
    assert!(newreno.all_delivered && newreno.all_closed_gracefully);
    let p = paced.flows[0].goodput_bps;
    let n = newreno.flows[0].goodput_bps;
    // Mathis et al.: TCP Reno under random loss p gets ~ MSS/RTT * 1.22/sqrt(p).
    let mss_bits = (1472 - 40) as f64 * 8.0;
    let mathis = mss_bits / 0.010 * 1.22 / 0.01f64.sqrt();
    println!(
        "1% loss, 10 ms RTT, 100 Mbit/s: paced {:.1} Mbit/s (retransmitted {} of {} packets), \
         newreno {:.2} Mbit/s (Mathis model {:.2} Mbit/s)",
        p / 1e6,
        paced.flows[0].sender.packets_retransmitted,
        paced.flows[0].sender.packets_sent,
        n / 1e6,
        mathis / 1e6
    );
    assert!(
        p > 0.88 * link as f64,
        "paced goodput {:.1} Mbit/s not near the link rate",
        p / 1e6
    );
    assert!(n < 0.5 * p, "newreno must back off under loss like TCP");
    assert!(
        n > 0.3 * mathis && n < 4.0 * mathis,
        "newreno {n} far from TCP-like {mathis}"
    );
}

#[test]
fn fixed_window_of_50_on_a_clean_link_is_window_limited() {
    // The sliding-window lab: window 50, ~1 KiB packets. On a 1 ms RTT path the
    // ceiling is window / RTT.
    let r = run_bulk(&BulkScenario {
        seed: 3,
        bytes_per_flow: 8 << 20,
        forward: ImpairConfig::default().with_delay(Duration::from_micros(500)),
        reverse: ImpairConfig::default().with_delay(Duration::from_micros(500)),
        transport: TransportConfig::default()
            .with_congestion(CongestionKind::Fixed { window_packets: 50 })
            .with_max_datagram(1064)
            .with_pacing(false),
        ..Default::default()
    })
    .unwrap();
    assert!(r.all_delivered);
    let ceiling = 50.0 * 1024.0 * 8.0 / 0.001;
    let g = r.flows[0].goodput_bps;
    println!(
        "fixed window 50 × 1 KiB, 1 ms RTT: {:.1} Mbit/s (ceiling {:.1})",
        g / 1e6,
        ceiling / 1e6
    );
    assert!(g <= ceiling * 1.05 && g > ceiling * 0.7, "{g} vs {ceiling}");
}

#[test]
fn flows_share_a_bottleneck_fairly() {
    for (flows, per_flow) in [
        (2usize, 4u64 << 20),
        (10, 1 << 20),
        (100, 200_000),
        (1000, 40_000),
    ] {
        let r = run_bulk(&BulkScenario {
            seed: 11,
            flows,
            bytes_per_flow: per_flow,
            forward: ImpairConfig::default()
                .with_delay(Duration::from_millis(2))
                .with_rate_bps(Some(500_000_000))
                .with_queue_bytes(2 << 20),
            reverse: ImpairConfig::default().with_delay(Duration::from_millis(2)),
            transport: TransportConfig::default().with_congestion(CongestionKind::Paced {
                rate_bps: 480_000_000 / flows as u64,
            }),
            time_limit: Duration::from_secs(120),
            ..Default::default()
        })
        .unwrap();
        println!(
            "{flows} flows over 500 Mbit/s: Jain {:.4}, aggregate {:.1} Mbit/s, per flow {:.2} Mbit/s",
            r.jain_index,
            r.aggregate_goodput_bps / 1e6,
            r.aggregate_goodput_bps / 1e6 / flows as f64
        );
        assert!(r.all_delivered, "{flows} flows: not all delivered");
        assert!(r.all_closed_gracefully, "{flows} flows: not all closed");
        assert!(
            r.jain_index > 0.95,
            "{flows} flows: Jain index {}",
            r.jain_index
        );
    }
}

#[test]
fn newreno_flows_converge_to_fair_shares() {
    let r = run_bulk(&BulkScenario {
        seed: 5,
        flows: 4,
        bytes_per_flow: 6 << 20,
        forward: ImpairConfig::default()
            .with_delay(Duration::from_millis(2))
            .with_rate_bps(Some(200_000_000))
            .with_queue_bytes(256 * 1024),
        reverse: ImpairConfig::default().with_delay(Duration::from_millis(2)),
        transport: TransportConfig::default().with_congestion(CongestionKind::NewReno),
        ..Default::default()
    })
    .unwrap();
    println!(
        "4 NewReno flows over 200 Mbit/s: Jain {:.4}, aggregate {:.1} Mbit/s",
        r.jain_index,
        r.aggregate_goodput_bps / 1e6
    );
    assert!(r.all_delivered && r.all_closed_gracefully);
    assert!(r.jain_index > 0.9, "Jain {}", r.jain_index);
    assert!(r.aggregate_goodput_bps > 0.7 * 200e6);
}
