//! A sender that shares its core with another busy process (`pmdt-wanem` and both
//! endpoints on a 2-core machine): its I/O loop runs for a scheduler slice, then
//! waits for one. The path is the runner's 1 Gbit/s × 10 ms cell; the sender must
//! still fill it, as it does with a core of its own, its flows must share
//! a bottleneck as evenly as a sender's with a core of its own, and a
//! loss-based flow beside them must keep a share.
//!
//! `SIM_LOG=pmdt_proto::congestion::bbr=debug` prints the controller's log
//! of the CUBIC-joining test (in the order of virtual time).

use std::time::Duration;

mod sim_log;

use pmdt::sim::{
    jain_index, run_bulk, run_timed_send, stream_share_of_frames, BulkScenario, CoreShare,
    ImpairConfig, TimedSendReport, TimedSendScenario,
};
use pmdt::CongestionKind;

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
    for (on, off) in [(ms(6), ms(4)), (ms(4), ms(6)), (ms(18), ms(2))] {
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
        if off < on {
            // Short absences: the queue the sender's catch-ups build carries
            // the link through them. Yielding to it as to other flows' (until
            // session 83) left 95.1 %, 98.9 with a core of its own.
            assert!(
                share(&shared) > 0.96,
                "on {on:?} off {off:?}: {:.1}%",
                100.0 * share(&shared)
            );
        }
    }
    assert!(share(&alone) > 0.95, "alone: {:.1}%", 100.0 * share(&alone));
}

/// Four BBR flows from one sender that shares its core (as `pmdt-send`'s
/// flows share its I/O lcore), joining 1 Gbit/s × 40 ms 2 s apart through
/// pmdt-wanem's 1 MiB queue (`pmdt-bench adapt`'s joining cell): the flows
/// still share the link evenly (Jain over each flow's goodput in the last
/// 10 s), over seeds 1-12: at least 0.95 on average and 0.9 in each. The
/// sender runs 14 ms, then is off its core for 6. On the VM, in the five of
/// session 68's eight runs of that cell that failed, the first flow came
/// back late for its pacer by 25-36 % of its time in total (the others
/// 8-32 %); in the three that passed by 15-25 %, and in session 67's eight,
/// which all did, by 12-17 % (the others 5-13 %).
///
/// All four flows stop while the sender is away, and the bottleneck drains
/// the queue they keep: the first packets sent on its return see it that
/// much shallower. Before such packets were kept out of a round's queue
/// (`LATE_SEND` in pmdt-proto), every check of the queue found it the
/// flow's own, no flow took another flow's queue for what it was (no shared
/// cuts, climbs or probe waits), and the flows kept the shares they joined
/// with: Jain 0.68 (510, 72, 176 and 194 Mbit/s); 0.52-0.98 over seeds
/// 1-12, mean 0.80. With it (session 69), 0.92-1.00, mean 0.97.
///
/// One seed (21, until session 93) is one draw of a spread: the controller
/// before session 93 (56bba43) gave 0.889-0.996 over seeds 1-12 (mean
/// 0.954; 0.966 at 21), session 93's, whose probes beside other flows
/// queue half the deepest queue, 0.887-0.997 (mean 0.974; 0.885 at 21).
/// Both passed the bounds until session 94 (each at least 0.85). At seed 7
/// the last joiner, at 64 Mbit/s, lost 2.5 % of a sample in a shared
/// overflow. The sample read 51 ms, over a quarter above the 40-ms minimum
/// (where 2 % loss is congestion of the flow's own; the round's smallest
/// RTT was 46.8 ms), and the joiner was held at 61-64 Mbit/s until its next
/// probe, while the others cut and climbed. Beside other flows such loss
/// in Cruise is now the shared overflow (`Bbr::inflight_too_high`):
/// 0.937-0.997 (mean 0.980; 0.956 at 21), and each seed at least 0.9.
/// With the queue that stood all round taken off the flows' catch-ups
/// (session 101, see the next test): 0.938-0.998 over seeds 1-12, mean
/// 0.986.
#[test]
fn four_flows_from_a_sender_sharing_its_core_share_fairly() {
    const TICK: Duration = Duration::from_millis(100);
    let rtt = Duration::from_millis(40);
    let forward = ImpairConfig::default()
        .with_delay(rtt / 2)
        .with_rate_bps(Some(1_000_000_000))
        .with_queue_bytes(1 << 20);
    let reverse = ImpairConfig::default().with_delay(rtt / 2);
    let jains: Vec<f64> = (1..=12)
        .map(|seed| {
            let sc = BulkScenario {
                seed,
                flows: 4,
                bytes_per_flow: 64 << 30,
                forward: forward.clone(),
                reverse: reverse.clone(),
                time_limit: Duration::from_secs(20),
                sample_every: Some(TICK),
                start_every: Duration::from_secs(2),
                sender_core: Some(CoreShare {
                    on: Duration::from_millis(14),
                    off: Duration::from_millis(6),
                }),
                ..Default::default()
            };
            let r = run_bulk(&sc).expect("valid scenario");
            assert!(r.flows.iter().all(|f| f.verified), "seed {seed}");
            // From 10 s: the ticks after the first hundred.
            let goodput: Vec<f64> = r
                .flows
                .iter()
                .map(|f| {
                    let t = &f.arrived_timeline;
                    (t[t.len() - 1] - t[99]) as f64 * 8.0 / 10.0
                })
                .collect();
            let jain = jain_index(&goodput);
            println!(
                "seed {seed}: flows {:?} Mbit/s, Jain {jain:.4}",
                goodput
                    .iter()
                    .map(|g| (g / 1e6).round())
                    .collect::<Vec<_>>()
            );
            jain
        })
        .collect();
    let mean = jains.iter().sum::<f64>() / jains.len() as f64;
    assert!(mean >= 0.95, "mean Jain {mean:.4} over {jains:.4?}");
    assert!(
        jains.iter().all(|&j| j >= 0.9),
        "a seed under 0.9: {jains:.4?}"
    );
}

/// CUBIC joining BBR 2 s later, both from one sender that runs 14 ms, then
/// is off its core for 6 (`pmdt-bench adapt`'s
/// bbr-vs-cubic-cubic-joins-shallow-queue-rtt40 cell runs both from one
/// `pmdt-send`), through 1 Gbit/s × 40 ms and pmdt-wanem's 1 MiB queue for
/// 60 s: from 15 s, neither takes more than 3/4 of the link, and each at
/// least a quarter.
///
/// Both flows stop while the sender is away and catch up when it comes
/// back. Made up in full, every catch-up landed in the queue CUBIC keeps
/// full, overflowed it and cut CUBIC back: BBR 72.6 %, CUBIC 18.8 % at seed
/// 1 (72.3-73.7 and 17.0-17.1 % at seeds 2 and 3; through pmdt-wanem BBR
/// took over 3/4 in seven runs of eight, session 101). With the queue that
/// stood all round taken off the catch-up of a sender with flows on the
/// path (`Connection::queue_kept_through_an_absence` in pmdt-proto): BBR
/// 23.5-24.0 %, CUBIC 68.2-68.6 % at seeds 1-3. BBR was then the flow
/// under a quarter: the simulator moved further than the tools, where BBR
/// took 66.6-88.3 % with the change, and the test then held only CUBIC's
/// quarter and the 3/4 bound. Since session 104 a sender with a loss-based flow among its flows
/// to a host makes up at most 5 ms of an absence
/// (`pacer::BESIDE_LOSS_BASED_CATCH_UP` in pmdt-proto): BBR 19.5 %, CUBIC
/// 73.0 % at seed 1. At 1 ms, BBR 8.9 % and CUBIC 80.0 %, over the bound:
/// BBR's estimate decays where its pacer cannot make up absences of 6 ms,
/// and CUBIC's window does not.
///
/// Leaving the queue that stood out of BBR's catch-ups gave CUBIC's window
/// the whole refill after every absence. Since session 106 a flow that
/// delivered less than the average of the flows to its host, beside a
/// loss-based flow, makes up its absences whole, up to the 5 ms
/// (`endpoint::path_shares` in pmdt-proto): BBR 44.0 %, CUBIC 43.1 % at seed
/// 1 (43.8 / 42.4 and 44.1 / 41.8 % at seeds 2 and 3). Together they use
/// less of the link than before (87.1 % against 92.5 at seed 1). Since
/// session 107 only a model-based flow is told it is behind (CUBIC leaves
/// the queue that stood out of its catch-ups, as before): BBR 44.0 %, CUBIC
/// 42.6 % at seed 1 (43.9 / 42.2 and 44.1 / 43.0 % at seeds 2 and 3).
///
/// Since session 108 a model-based flow ahead of its siblings beside a
/// loss-based flow (over 1.2 times their average) gives way while a queue
/// stands: it does not probe, climb or regrow, and cuts to the queue's
/// overflows (`congestion::bbr::ahead_on_path` in pmdt-proto): BBR 43.9 %,
/// CUBIC 42.5 % at seed 1. It acts where the sender keeps its core: with
/// the sender on its own core, BBR 57.0 %, CUBIC 39.9 % at seed 1 (65.7 and
/// 31.2 % before; 55.1-55.3 and 41.7-41.9 % at seeds 2 and 3, 56.0-57.0
/// and 40.0-41.0 % before).
#[test]
fn cubic_joining_bbr_from_a_sender_sharing_its_core_gets_a_share() {
    sim_log::log_to_stderr();
    const TICK: Duration = Duration::from_millis(100);
    let from = 150; // 15 s, in ticks
    let rtt = Duration::from_millis(40);
    let forward = ImpairConfig::default()
        .with_delay(rtt / 2)
        .with_rate_bps(Some(1_000_000_000))
        .with_queue_bytes(1 << 20);
    let sc = BulkScenario {
        seed: 1,
        flows: 2,
        bytes_per_flow: 64 << 30,
        forward,
        reverse: ImpairConfig::default().with_delay(rtt / 2),
        time_limit: Duration::from_secs(60),
        sample_every: Some(TICK),
        start_every: Duration::from_secs(2),
        flow_congestion: vec![CongestionKind::Bbr, CongestionKind::Cubic],
        flows_share_endpoint: true,
        sender_core: Some(CoreShare {
            on: Duration::from_millis(14),
            off: Duration::from_millis(6),
        }),
        ..Default::default()
    };
    let r = run_bulk(&sc).expect("valid scenario");
    // Each flow's share of the link from 15 s to the end, %.
    let pct: Vec<f64> = r
        .flows
        .iter()
        .map(|f| {
            let t = &f.arrived_timeline;
            let secs = (TICK * (t.len() - from) as u32).as_secs_f64();
            (t[t.len() - 1] - t[from - 1]) as f64 * 8.0 / secs / 1e9 * 100.0
        })
        .collect();
    let (bbr, cubic) = (pct[0], pct[1]);
    println!("BBR {bbr:.1}%, CUBIC {cubic:.1}% of the link from 15 s");
    assert!(bbr.max(cubic) <= 75.0, "BBR {bbr:.1}%, CUBIC {cubic:.1}%");
    assert!(bbr.min(cubic) >= 25.0, "BBR {bbr:.1}%, CUBIC {cubic:.1}%");
}
