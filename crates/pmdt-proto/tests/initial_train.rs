//! `Startup::FromInitialTrain` (`--fast-start`): the initial window's train
//! gives the controller its first bandwidth estimate as soon as the train is
//! measured, also when a datagram near the train's end is lost. Too few
//! datagrams follow it for the acknowledgments to declare it lost (three
//! must), so a timer does, 9/8 of a round trip after it left; the rate used to
//! wait for the next ack's rate sample, from the flight sent after the train
//! (in the simulator's 1 % loss grid, seed 1, both 200 ms cells lost a datagram
//! of the train and started a round trip late).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pmdt_proto::pair::{Direction, Pair, Verdict};
use pmdt_proto::wire::{self, Body};
use pmdt_proto::{Startup, TransportConfig};

/// The bottleneck the filter emulates in the client's direction.
const RATE_BPS: u64 = 100_000_000;
/// One-way delay of the path.
const ONE_WAY: Duration = Duration::from_millis(100);

/// The client's data datagrams spaced out at [`RATE_BPS`] (a queue in front
/// of the bottleneck), the `drop`-th of them (1-based) lost after it;
/// `train` counts those sent at the first one's instant (the initial burst).
fn bottleneck(drop: u32, train: Arc<AtomicU32>) -> pmdt_proto::pair::Filter {
    let mut free_at: Option<Instant> = None;
    let mut first: Option<Instant> = None;
    let mut data = 0;
    Box::new(move |now, dir, d| {
        let is_data = matches!(wire::decode(d).map(|p| p.body), Ok(Body::Data { .. }));
        if dir != Direction::ToServer || !is_data {
            return Verdict::Deliver;
        }
        data += 1;
        if *first.get_or_insert(now) == now {
            train.fetch_add(1, Ordering::Relaxed);
        }
        let start = free_at.map_or(now, |f| f.max(now));
        let done = start + Duration::from_nanos(d.len() as u64 * 8 * 1_000_000_000 / RATE_BPS);
        free_at = Some(done);
        if data == drop {
            Verdict::Drop
        } else {
            Verdict::Hold(done - now)
        }
    })
}

/// A client starting from its train over a 100 Mbit/s × 200 ms path whose
/// `drop`-th data datagram is lost (0: none), with 64 KiB to send: its
/// congestion window `after` the data was written, and the datagrams of its
/// train; panics unless its pacing rate follows the window (the rate over
/// the window's round trip, at least).
fn window_after(drop: u32, after: Duration) -> (u64, u32) {
    let cfg = TransportConfig::default().with_startup(Startup::FromInitialTrain);
    let mut p = Pair::new(cfg.clone(), cfg);
    p.delay = ONE_WAY;
    p.connect();
    let train = Arc::new(AtomicU32::new(0));
    p.set_filter(bottleneck(drop, train.clone()));
    let data = vec![7u8; 4 << 20];
    let start = p.now;
    let written = p.client_write(&data);
    // The send buffer takes the first 64 KiB: more than the initial window.
    assert!(written >= 32 << 10, "wrote {written}");
    p.drive_for(after - (p.now - start));
    let stats = p.client_connection().stats();
    // Bytes/s: a window a round trip paced at the rate covers, or more.
    let round_trip = (ONE_WAY * 2).as_secs_f64();
    assert!(
        stats.pacing_rate as f64 >= 0.9 * stats.cwnd as f64 / round_trip / 2.0,
        "pacing {} B/s for a window of {} B",
        stats.pacing_rate,
        stats.cwnd
    );
    (stats.cwnd, train.load(Ordering::Relaxed))
}

#[test]
fn a_train_that_lost_a_datagram_near_its_end_is_read_when_the_timer_declares_it() {
    // The BDP the train measures: 100 Mbit/s × 200 ms = 2.5 MB (the datagram
    // headers on the wire make the measured rate a little lower).
    let bdp = RATE_BPS / 8 * 2 * ONE_WAY.as_millis() as u64 / 1000;
    // The train goes out at once; its acknowledgments come back by about 1.01
    // round trips; its next-to-last datagram, lost, is declared lost by the
    // timer 9/8 of a round trip after it left. At 1.2 round trips the window
    // must be the train's BDP (where it waited for the next rate sample it was
    // still Startup's doubling, 26,518 bytes, until 1.5 round trips).
    let at = ONE_WAY * 12 / 5;
    let (whole, train) = window_after(0, at);
    assert!(
        train >= 6,
        "a train of {train} datagrams cannot be measured"
    );
    assert!(
        whole >= bdp * 8 / 10,
        "train delivered whole: window {whole} at 1.2 RTTs"
    );
    let (near_end_lost, again) = window_after(train - 1, at);
    assert_eq!(again, train, "the same run up to the loss");
    // The lost datagram's share of the bottleneck's time counts as idle.
    assert!(
        near_end_lost >= bdp * 7 / 10,
        "the train's datagram {} of {train} lost: window {near_end_lost} at 1.2 RTTs (the \
         train's BDP is {bdp})",
        train - 1
    );
    // Losing its first datagram instead is read from the acknowledgments alone.
    let (first_lost, _) = window_after(1, at);
    assert!(
        first_lost >= bdp * 7 / 10,
        "the train's first datagram lost: window {first_lost}"
    );
}
