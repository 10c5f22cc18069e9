//! Careful Resume (RFC 9959) in the simulator, through the shipping protocol
//! core: a connection started from the path a previous one saved
//! (`SavedPath::from_stats`, as `pmdt-send`'s path cache does) fills a long
//! path in a few round trips instead of Startup's doubling from ten datagrams,
//! and one whose saved path is wrong (the link got slower, the RTT changed)
//! falls back safely. Paths as the runner's loss grid sets them up through
//! `pmdt-wanem`: a 1 MiB drop-tail queue, RTT/2 each way, Ethernet framing.
//!
//! `SIM_TRACE=1` prints each run's timeline (per 100 ms).

use std::time::Duration;

use pmdt::proto::{CloseReason, ConnectOptions, ResumeOutcome, SavedPath};
use pmdt::sim::{run_timed_send, ImpairConfig, TimedSendReport, TimedSendScenario};

const MS: Duration = Duration::from_millis(1);

fn path(
    rate_bps: u64,
    rtt_ms: u64,
    write_for: Duration,
    connect: ConnectOptions,
) -> TimedSendReport {
    let dir = ImpairConfig::default()
        .with_delay(MS * rtt_ms as u32 / 2)
        .with_rate_bps(Some(rate_bps))
        .with_queue_bytes(1 << 20);
    let r = run_timed_send(&TimedSendScenario {
        seed: 1,
        write_for,
        forward: dir.clone(),
        reverse: dir,
        connect,
        time_limit: write_for * 4,
        sample_every: Some(Duration::from_millis(100)),
        ..Default::default()
    })
    .expect("valid scenario");
    if std::env::var("SIM_TRACE").is_ok() {
        let mut prev = 0;
        for (i, s) in r.sender_timeline.iter().enumerate() {
            println!(
                "  t={:.1}s acked {:.0} Mbit/s {:?} bw {:.0} pacing {:.0} cwnd {} retx {}",
                (i + 1) as f64 * 0.1,
                s.stream_bytes_acked.saturating_sub(prev) as f64 * 80.0 / 1e6,
                s.cc_state,
                s.cc_bandwidth_bps as f64 / 1e6,
                s.pacing_rate as f64 * 8.0 / 1e6,
                s.cwnd,
                s.packets_retransmitted
            );
            prev = s.stream_bytes_acked;
        }
    }
    assert_eq!(r.close, Some(CloseReason::Graceful), "{:?}", r.sender);
    assert_eq!(r.bytes, r.bytes_received, "bytes lost");
    r
}

/// Stream bytes acknowledged by `t` into the run.
fn acked_by(r: &TimedSendReport, t: Duration) -> u64 {
    let i = (t.as_millis() / 100) as usize - 1;
    r.sender_timeline[i].stream_bytes_acked
}

/// Goodput between `from` and `to` into the run, bits/s.
fn rate_between(r: &TimedSendReport, from: Duration, to: Duration) -> f64 {
    (acked_by(r, to) - acked_by(r, from)) as f64 * 8.0 / (to - from).as_secs_f64()
}

#[test]
fn a_resumed_transfer_fills_1_gbit_200_ms_in_a_few_round_trips() {
    let secs = Duration::from_secs(4);
    let cold = path(1_000_000_000, 200, secs, ConnectOptions::default());
    assert_eq!(cold.sender.resume, None);
    // What the cold transfer learned, as pmdt-send saves it.
    let saved = SavedPath::from_stats(&cold.sender).expect("a BBR model");
    assert!(
        saved.bandwidth_bps > 800_000_000 && saved.min_rtt >= 200 * MS,
        "{saved:?}"
    );
    let warm = path(
        1_000_000_000,
        200,
        secs,
        ConnectOptions::default().with_resume(saved),
    );
    let Some(ResumeOutcome::Jumped { rate_bps, window }) = warm.sender.resume else {
        panic!("no jump: {:?}", warm.sender.resume);
    };
    // Half the saved BDP, paced over the handshake's RTT.
    assert_eq!(window, saved.bdp() / 2);
    assert!(rate_bps > 400_000_000 && rate_bps <= saved.bandwidth_bps / 2 + 1_000_000);
    // By 1.5 s (a handshake and six round trips) the resumed transfer moved
    // several times what Startup's doubling did, and it keeps the link's rate.
    let at = Duration::from_millis(1500);
    assert!(
        acked_by(&warm, at) > 3 * acked_by(&cold, at),
        "by 1.5 s: resumed {} bytes, cold {}",
        acked_by(&warm, at),
        acked_by(&cold, at)
    );
    // Startup ends at the saved rate, without an overshoot: the link's rate
    // (946 Mbit/s of stream bytes) from 1 s, the handshake and four round
    // trips (the receiver's credit was sized from the start by the saved
    // path's BDP the Init announced), until ProbeBW's first probe.
    let steady = rate_between(&warm, 1000 * MS, 2400 * MS);
    assert!(steady > 900e6, "1-2.4 s: {:.0} Mbit/s", steady / 1e6);
    assert!(warm.goodput_bps > 1.3 * cold.goodput_bps);
    // The jump does not flood the path: what is lost is ProbeBW's probe, not
    // Startup's overshoot (a doubling past the link, a BDP dropped).
    assert!(
        warm.sender.packets_retransmitted * 2 < cold.sender.packets_retransmitted,
        "retransmitted: resumed {}, cold {}",
        warm.sender.packets_retransmitted,
        cold.sender.packets_retransmitted
    );
}

#[test]
fn a_saved_path_faster_than_the_link_retreats_to_the_link() {
    // Saved on 1 Gbit/s; the link is now 100 Mbit/s, same RTT: the jump's
    // round (500 Mbit/s) overflows the queue, Startup ends on that loss, and
    // the transfer goes on at the link's rate.
    let saved = SavedPath::new(1_000_000_000, 100 * MS);
    let r = path(
        100_000_000,
        100,
        Duration::from_secs(5),
        ConnectOptions::default().with_resume(saved),
    );
    assert!(matches!(
        r.sender.resume,
        Some(ResumeOutcome::Jumped { .. })
    ));
    let steady = rate_between(&r, 2000 * MS, 5000 * MS);
    assert!(
        steady > 85e6,
        "after the retreat: {:.1} Mbit/s",
        steady / 1e6
    );
    assert!(
        r.sender.cc_bandwidth_bps < 110_000_000,
        "the model is the link's, not the saved path's: {}",
        r.sender.cc_bandwidth_bps
    );
    // The excess of one round is lost, not a stream of it.
    let sent = r.sender.stream_bytes_sent.max(1);
    assert!(
        r.sender.bytes_retransmitted * 10 < sent,
        "retransmitted {} of {sent} bytes",
        r.sender.bytes_retransmitted
    );
}

#[test]
fn a_saved_path_with_another_rtt_starts_from_cold() {
    // Saved at 200 ms; the handshake says 10 ms: another path.
    let saved = SavedPath::new(1_000_000_000, 200 * MS);
    let resumed = path(
        100_000_000,
        10,
        Duration::from_secs(1),
        ConnectOptions::default().with_resume(saved),
    );
    let Some(ResumeOutcome::PathChanged {
        saved_rtt_us,
        rtt_us,
    }) = resumed.sender.resume
    else {
        panic!("{:?}", resumed.sender.resume);
    };
    assert_eq!(saved_rtt_us, 200_000);
    assert!(rtt_us < 100_000, "{rtt_us}");
    // Exactly the cold run: nothing of the saved path was used.
    let cold = path(
        100_000_000,
        10,
        Duration::from_secs(1),
        ConnectOptions::default(),
    );
    assert_eq!(resumed.bytes, cold.bytes);
    assert_eq!(
        resumed.sender.packets_retransmitted,
        cold.sender.packets_retransmitted
    );
}

#[test]
fn a_saved_path_slower_than_the_link_is_outgrown() {
    // Saved on 100 Mbit/s; the link is now 1 Gbit/s: Startup ends at the saved
    // rate, and ProbeBW's probes find the rest.
    let saved = SavedPath::new(100_000_000, 100 * MS);
    let r = path(
        1_000_000_000,
        100,
        Duration::from_secs(8),
        ConnectOptions::default().with_resume(saved),
    );
    let late = rate_between(&r, 5000 * MS, 8000 * MS);
    assert!(late > 850e6, "5-8 s: {:.0} Mbit/s", late / 1e6);
}
