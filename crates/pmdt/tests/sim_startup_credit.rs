//! The receive credit during a cold Startup on a long, lossy path, through the
//! shipping protocol core in the simulator. The receiver sizes its credit from
//! what arrives per round trip and anticipates the sender's doubling; counted
//! one doubling ahead, the credit fell short in every last round of Startup at
//! 1 % loss (a hole holds the head for rounds while the rate doubles), and a
//! sender held back by credit shows the receiver no growth, so the credit
//! stalled with it. Startup then left at 3.0 s with 585 Mbit/s measured on a
//! 1 Gbit/s × 200 ms path, and the link's rate took until 4.3 s; in the real
//! tools the same run spent 0.75 s of its 20 waiting on credit.

use std::time::Duration;

use pmdt::proto::{ConnectOptions, ControllerState};
use pmdt::sim::{run_timed_send, ImpairConfig, TimedSendScenario};

const MS: Duration = Duration::from_millis(1);

#[test]
fn a_lossy_long_startup_is_not_held_back_by_credit() {
    // The runner's loss grid path: a 1 MiB drop-tail queue, RTT/2 each way.
    let dir = ImpairConfig::default()
        .with_delay(MS * 100)
        .with_rate_bps(Some(1_000_000_000))
        .with_queue_bytes(1 << 20);
    let r = run_timed_send(&TimedSendScenario {
        seed: 1,
        write_for: Duration::from_secs(4),
        forward: dir.clone().with_loss(0.01),
        reverse: dir,
        connect: ConnectOptions::default(),
        time_limit: Duration::from_secs(20),
        sample_every: Some(Duration::from_millis(100)),
        ..Default::default()
    })
    .expect("valid scenario");
    assert_eq!(r.bytes, r.bytes_received, "bytes lost");
    let left = r
        .sender_timeline
        .iter()
        .position(|s| s.cc_state != ControllerState::Startup)
        .expect("Startup ended");
    let startup = &r.sender_timeline[left];
    assert!(
        startup.blocked_credit_us < 20_000,
        "Startup waited {} ms on the receiver's credit",
        startup.blocked_credit_us / 1000
    );
    // It left with (nearly) the link's rate measured: 95 % of 1 Gbit/s is
    // payload, and the queue's overflow in the last round lowers what arrives.
    let bw = r.sender_timeline[left + 1].cc_bandwidth_bps;
    assert!(
        bw > 850_000_000,
        "bandwidth measured after Startup: {} Mbit/s",
        bw / 1_000_000
    );
}
