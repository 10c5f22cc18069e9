//! A sender that shares its core with another busy process (`pmdt-wanem` and both
//! endpoints on a 2-core machine): its I/O loop runs for a scheduler slice, then
//! waits for one. The path is the runner's 1 Gbit/s × 10 ms cell; the sender must
//! still fill it, as it does with a core of its own.

use std::time::Duration;

use pmdt::sim::{
    run_timed_send, stream_share_of_frames, CoreShare, ImpairConfig, TimedSendReport,
    TimedSendScenario,
};

fn cell(core: Option<CoreShare>) -> TimedSendReport {
    let dir = ImpairConfig::default()
        .with_delay(Duration::from_millis(5))
        .with_rate_bps(Some(1_000_000_000))
        .with_queue_bytes(1 << 20);
    let sc = TimedSendScenario {
        seed: 1,
        write_for: Duration::from_secs(8),
        forward: dir.clone(),
        reverse: dir,
        time_limit: Duration::from_secs(32),
        sender_core: core,
        ..Default::default()
    };
    run_timed_send(&sc).expect("valid scenario")
}

fn share(r: &TimedSendReport) -> f64 {
    r.goodput_bps / 1e9 / stream_share_of_frames(1472)
}

#[test]
fn a_sender_sharing_its_core_fills_the_path() {
    let alone = cell(None);
    let ms = Duration::from_millis;
    for (on, off) in [(ms(6), ms(4)), (ms(4), ms(6))] {
        let shared = cell(Some(CoreShare { on, off }));
        println!(
            "on {on:?} off {off:?}: {:.1}% of the payload capacity (alone {:.1}%), retransmitted {}",
            100.0 * share(&shared),
            100.0 * share(&alone),
            shared.sender.packets_retransmitted
        );
        // With a catch-up of 1 ms, as Linux's in-kernel pacing allows, BBR's
        // estimate decayed to 19% (6/4 ms) and 8% (4/6 ms).
        assert!(
            share(&shared) > 0.9,
            "on {on:?} off {off:?}: {:.1}%",
            100.0 * share(&shared)
        );
        assert!(shared.sender.pacing_late_us > 0, "the sender was late");
    }
    assert!(share(&alone) > 0.95, "alone: {:.1}%", 100.0 * share(&alone));
}
