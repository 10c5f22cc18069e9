use super::shared_queue::{PROBE_PUT_OFF_MAX, UP_GAIN_BESIDE_OTHERS_MIN};
use super::*;
use crate::congestion::another_flow::{CONFIRMED_MEMORY, ONCE_MEMORY};

fn sample(rate: u64, prior: u64, total: u64, rtt_ms: u64, in_flight: u64) -> RateSample {
    RateSample {
        delivery_rate: rate,
        delivered: rate / 10,
        interval: Duration::from_millis(rtt_ms),
        is_app_limited: false,
        is_credit_limited: false,
        rtt: Duration::from_millis(rtt_ms),
        standing_rtt: Duration::from_millis(rtt_ms),
        raw_rtt: Duration::from_millis(rtt_ms),
        prior_delivered: prior,
        total_delivered: total,
        newly_acked: rate / 10,
        newly_lost: 0,
        lost: 0,
        tx_in_flight: in_flight,
        bytes_in_flight: in_flight,
        sent_catching_up: None,
    }
}

/// Feeds one sample per round at the given delivery rate.
fn rounds(b: &mut Bbr, t: &mut Instant, delivered: &mut u64, rate: u64, n: usize) {
    queued_rounds(b, t, delivered, rate, 100, n);
}

#[test]
fn a_resumed_startup_jumps_climbs_to_the_saved_rate_and_ends_there() {
    let mut b = Bbr::new(1000);
    let jump = Jump {
        rate: 5_000_000,
        window: 500_000,
        bandwidth: 10_000_000,
    };
    assert!(b.resume(jump));
    assert_eq!(b.pacing_rate, Some(5_000_000));
    assert!(b.cwnd >= 500_000);
    // The jump's round delivers its rate: Startup would pace at 2.77 times
    // that, and paces at the saved rate instead.
    let (mut t, mut d) = (Instant::now(), 0);
    rounds(&mut b, &mut t, &mut d, 5_000_000, 1);
    assert_eq!(b.mode, Mode::Startup);
    assert_eq!(b.pacing_rate, Some(10_000_000));
    // A round at 90 % of the saved rate: the pipe is as full as it was.
    rounds(&mut b, &mut t, &mut d, 9_000_000, 1);
    assert!(b.full_bw_reached);
    assert_ne!(b.mode, Mode::Startup);
    // Once data was delivered there is nothing to resume.
    let mut late = Bbr::new(1000);
    rounds(&mut late, &mut t, &mut d, 1_000_000, 1);
    assert!(!late.resume(jump));
}

#[test]
fn startup_exits_when_bandwidth_stops_growing_then_probes() {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    for r in [1u64, 2, 4, 8] {
        rounds(&mut b, &mut t, &mut d, r * 1_000_000, 1);
        assert_eq!(b.mode, Mode::Startup);
    }
    rounds(&mut b, &mut t, &mut d, 8_000_000, 3);
    assert!(b.full_bw_reached);
    assert_ne!(b.mode, Mode::Startup);
    assert_eq!(b.max_bw, 8_000_000);
    rounds(&mut b, &mut t, &mut d, 8_000_000, 20);
    assert!(matches!(b.mode, Mode::ProbeBw(_)));
    // Pacing at most 1.25 × bw, the window about 2 BDP.
    assert!(b.pacing_rate.unwrap() <= 10_000_000);
    let bdp = 800_000;
    assert!(b.window() <= 2 * bdp + b.quanta() && b.window() >= bdp);
    // A 100 ms path with no batching: the window's burst room stays at three
    // quanta of two datagrams (more would only queue at the bottleneck).
    assert_eq!(b.window_quanta(), b.quanta());
    assert_eq!(b.quanta(), 6 * 1000);
}

/// In Startup's first rounds, every RTT of a round above the minimum ends
/// Startup only once the estimate stops doubling: another flow's queue (or
/// a first round the peer was slow to acknowledge) while this flow's rate
/// still doubles does not. Later a queue ends it once it doubled over a round
/// (this flow's flight doubling into a full pipe); a queue that stands as it
/// was (other flows') does not.
#[test]
fn a_queue_while_the_rate_still_doubles_does_not_end_startup() {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    let rtt = RttEstimator::new(Duration::from_millis(100));
    let mut round = |b: &mut Bbr, rate: u64, rtt_ms: u64| {
        t += Duration::from_millis(rtt_ms);
        let prior = d;
        d += rate / 10;
        b.on_rate_sample(t, &sample(rate, prior, d, rtt_ms, rate / 10), &rtt);
    };
    round(&mut b, 1_000_000, 100);
    for r in [2u64, 4] {
        round(&mut b, r * 1_000_000, 110);
        assert_eq!(b.mode, Mode::Startup, "{r} MB/s");
    }
    round(&mut b, 8_000_000, 110);
    assert_eq!(
        b.mode,
        Mode::Startup,
        "the same queue past the first rounds"
    );
    // The round's RTT is judged at the next round's start.
    round(&mut b, 16_000_000, 120);
    round(&mut b, 32_000_000, 120);
    assert!(
        b.full_bw_reached,
        "a queue that doubled past the first rounds"
    );
}

/// A joiner's Startup sees the queue other flows keep come and go (6.4 ms in
/// its first rounds, then none, then 2.8 and 6.6 ms: their probes, their
/// yields): a queue twice the round before's is not its own while it is no
/// deeper than what stood before; its own doubling queue, past twice the
/// deepest, ends Startup.
#[test]
fn a_joiners_startup_does_not_end_on_the_queue_others_keep() {
    let mut rounds = DoublingRounds::new();
    rounds.stay_in_startup(&[
        100_000, 106_400, 101_700, 104_700, 100_000, 102_800, 106_600, 100_500,
    ]);
    // Its own queue: 14 ms (over twice the deepest, 6.6), judged a round
    // later.
    rounds.round(114_000);
    rounds.round(128_000);
    assert!(
        rounds.b.full_bw_reached,
        "its own queue doubled past the others'"
    );
}

/// Startup rounds whose delivery rate doubles each round, one sample each,
/// with the RTT a test gives (the model's minimum: 100 ms).
struct DoublingRounds {
    b: Bbr,
    t: Instant,
    delivered: u64,
    rate: u64,
    rtt: RttEstimator,
}

impl DoublingRounds {
    fn new() -> Self {
        Self {
            b: Bbr::new(1000),
            t: Instant::now(),
            delivered: 0,
            rate: 1_000_000,
            rtt: RttEstimator::new(Duration::from_millis(100)),
        }
    }

    /// Rounds with these RTTs, Startup going on after each.
    fn stay_in_startup(&mut self, rtts_us: &[u64]) {
        for &rtt_us in rtts_us {
            self.round(rtt_us);
            assert_eq!(self.b.mode, Mode::Startup, "after a round of {rtt_us} µs");
        }
    }

    /// One round whose sample's RTT is `rtt_us`.
    fn round(&mut self, rtt_us: u64) {
        self.t += Duration::from_micros(rtt_us);
        let prior = self.delivered;
        self.delivered += self.rate / 10;
        let mut s = sample(self.rate, prior, self.delivered, 100, self.rate / 10);
        s.rtt = Duration::from_micros(rtt_us);
        self.b.on_rate_sample(self.t, &s, &self.rtt);
        self.rate *= 2;
    }
}

/// A joiner's first samples may sit in the others' queue: its minimum RTT
/// falls when that queue dips. The queue its earlier rounds saw is judged
/// against the minimum as it is now, so the others' 6.4 ms coming back does
/// not end Startup.
#[test]
fn a_joiners_startup_judges_earlier_rounds_against_the_minimum_as_it_falls() {
    let mut rounds = DoublingRounds::new();
    rounds.stay_in_startup(&[
        106_400, 106_400, 106_500, 106_400, 100_000, 100_300, 106_400, 100_500,
    ]);
    assert!(!rounds.b.full_bw_reached);
}

/// Startup behind a queue another flow keeps (every RTT of its rounds twice
/// the minimum the handshake saw) sizes its window by the round's RTT, so
/// its rate can double per round: by the minimum, two BDPs per round trip of
/// twice that held the rate flat, and Startup ended on the queue at 4.8
/// Mbit/s of a 1 Gbit/s link CUBIC filled. Without a queue, by the minimum.
#[test]
fn a_startup_behind_a_standing_queue_sizes_its_window_by_the_rounds_rtt() {
    for (rtt_ms, ratio) in [(100, 1.0), (200, 2.0)] {
        let mut b = Bbr::new(1000);
        let mut t = Instant::now();
        let mut d = 0;
        // The handshake's sample: the queue was empty then.
        queued_rounds(&mut b, &mut t, &mut d, 100_000, 100, 1);
        let mut rate = 200_000;
        for _ in 0..3 {
            queued_rounds(&mut b, &mut t, &mut d, rate, rtt_ms, 1);
            rate *= 2;
        }
        assert_eq!(b.mode, Mode::Startup, "{rtt_ms} ms");
        let want = b.bdp_multiple(b.cwnd_gain) as f64 * ratio;
        let got = b.cwnd_bdp() as f64;
        assert!(
            (got - want).abs() <= want * 0.01,
            "{rtt_ms} ms: window {got}, want {want}"
        );
    }
}

/// A queue that stays as it was ends Startup once the estimate stopped
/// growing (a sender that cannot double its flight), sooner than the three
/// rounds of no growth that end it without a queue.
#[test]
fn a_queue_once_the_estimate_stopped_growing_ends_startup() {
    // Rounds until Startup ends: 1, 2, 4 and 8 MB/s, then 8 MB/s flat, every
    // RTT `queued_ms` over 100 ms after the first round.
    let until_full = |queued_ms: u64| {
        let mut b = Bbr::new(1000);
        let mut t = Instant::now();
        let mut d = 0;
        let rtt = RttEstimator::new(Duration::from_millis(100));
        for (k, rate) in [1u64, 2, 4, 8, 8, 8, 8, 8, 8].into_iter().enumerate() {
            let ms = if k == 0 { 100 } else { 100 + queued_ms };
            t += Duration::from_millis(ms);
            let prior = d;
            d += rate * 100_000;
            b.on_rate_sample(
                t,
                &sample(rate * 1_000_000, prior, d, ms, rate * 100_000),
                &rtt,
            );
            if b.full_bw_reached {
                return k;
            }
        }
        usize::MAX
    };
    let (queued, clear) = (until_full(10), until_full(0));
    assert!(clear < usize::MAX, "no plateau exit");
    assert!(
        queued < clear,
        "the queue's exit after {queued} rounds, the plateau's {clear}"
    );
}

/// 60 bursts of acks at `rate` on a 10 µs path, a burst of `period`'s worth
/// every `period` (the smoothed RTT): what a poll loop's batches, or its
/// turns among many connections, look like to the sender.
fn acks_in_bursts(rate: u64, period: Duration) -> Bbr {
    let mut b = Bbr::new(1400);
    let mut t = Instant::now();
    let mut rtt = RttEstimator::new(period);
    rtt.update(period, Duration::ZERO, Duration::ZERO);
    let burst = (rate as f64 * period.as_secs_f64()) as u64;
    let mut delivered = 0;
    for _ in 0..60 {
        t += period;
        let mut s = sample(rate, delivered, delivered + burst, 0, burst);
        s.rtt = Duration::from_micros(10);
        s.newly_acked = burst;
        s.delivered = burst;
        delivered += burst;
        b.on_rate_sample(t, &s, &rtt);
    }
    b
}

/// A poll-mode peer microseconds away acknowledges in bursts: the window must
/// hold a burst's worth (ack aggregation), not 2 × bw × a 10 µs minimum RTT.
#[test]
fn acks_in_bursts_on_a_microsecond_path_widen_the_window() {
    let rate = 125_000_000; // 1 Gbit/s, acknowledged every 500 µs
    let b = acks_in_bursts(rate, Duration::from_micros(500));
    let two_bdp = 2 * rate / 100_000; // 2 × bw × 10 µs = 2.5 kB
    assert!(b.extra_acked > 40_000, "extra acked {}", b.extra_acked);
    assert!(
        b.window() > 20 * two_bdp,
        "window {} holds a burst",
        b.window()
    );
    // Batching dominates: the window has room for three send quanta of a
    // millisecond at the pacing rate (tens of kB here, not six datagrams)
    // beyond the BDP and the aggregation.
    let pacing = b.pacing_rate.unwrap();
    assert_eq!(
        b.window_quanta(),
        3 * (pacing / 1000).min(MAX_SEND_QUANTUM_BYTES)
    );
    assert!(b.window_quanta() > 5 * b.quanta());
    assert!(
        b.window() >= b.extra_acked + b.window_quanta(),
        "window {}, extra acked {}",
        b.window(),
        b.extra_acked
    );
}

/// A probe's overflow bounds the flight at the pipe plus the acks'
/// aggregation, which the window also holds: a sender whose acks come in bursts
/// keeps the pipe full only with a burst's worth more in flight (without it,
/// 1 Gbit/s × 10 ms through pmdt-wanem lost 0.5 % of the link).
#[test]
fn a_probes_overflow_leaves_room_for_the_acks_aggregation() {
    let mut b = acks_in_bursts(125_000_000, Duration::from_micros(500));
    assert!(b.extra_acked > 40_000, "extra acked {}", b.extra_acked);
    b.on_probe_overflow(Instant::now());
    assert_eq!(
        b.inflight_hi,
        Some(b.bdp_multiple(1.0).max(b.min_cwnd()) + b.extra_acked + b.quanta())
    );
}

/// An I/O loop shared by a thousand connections: a path of 10 µs whose
/// smoothed RTT is 5 ms (the loop's turn among the others). The acks come in
/// bursts a turn apart and the window must hold a turn's worth; the send
/// quanta stay small (this is not one loop's burst).
#[test]
fn a_loop_shared_by_many_connections_keeps_the_ack_aggregation() {
    let rate = 1_250_000; // 10 Mbit/s, acknowledged every 5 ms
    let b = acks_in_bursts(rate, Duration::from_millis(5));
    assert!(!b.batching_dominates());
    assert!(b.extra_acked > 4_000, "extra acked {}", b.extra_acked);
    assert!(b.window() > b.extra_acked, "window {}", b.window());
    assert_eq!(b.window_quanta(), b.quanta());
}

#[test]
fn random_loss_is_not_congestion_but_loss_with_a_queue_is() {
    // Outside a probe (in one, loss never seen before is taken for a queue
    // the probe overflowed, see the test below).
    let (mut b, t, d) = cruising(8_000_000);
    let rtt = RttEstimator::new(Duration::from_millis(100));
    // 5 % of an 800 kB flight lost, RTT at its minimum: random loss.
    let mut s = sample(8_000_000, d, d + 10_000, 100, 800_000);
    s.lost = 40_000;
    b.on_rate_sample(t, &s, &rtt);
    assert!(b.inflight_hi.is_none());
    // One late ack in the same round (the round's minimum RTT is still the
    // minimum): not a standing queue either.
    let mut s = sample(8_000_000, d, d + 20_000, 150, 800_000);
    s.lost = 40_000;
    b.on_rate_sample(t, &s, &rtt);
    assert!(b.inflight_hi.is_none());
    assert!(b.bw_lo.is_none() && b.inflight_lo.is_none());
    // 5 % lost in a round whose every RTT is 50 % above the minimum: a queue
    // overflowing. The short-term bounds back off; `inflight_hi` is a
    // probe's to set (see the test below).
    let mut s = sample(8_000_000, d + 20_000, d + 40_000, 150, 800_000);
    s.lost = 40_000;
    b.on_rate_sample(t, &s, &rtt);
    assert!(b.bw_lo.is_some() && b.inflight_lo.is_some(), "no back-off");
    assert!(b.inflight_hi.is_none());
}

/// Only the loss of packets a probe sent sets `inflight_hi`, once per
/// probe: packets sent after it, while its queue still overflows, went out
/// at smaller flights, and their loss must not lower it further (it did,
/// to 0.83 BDP after one probe at 1 Gbit/s × 100 ms, and regrowing took
/// eight seconds).
#[test]
fn only_a_probes_loss_sets_inflight_hi_once() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = cruising(rate);
    let rtt = RttEstimator::new(Duration::from_millis(100));
    let overflow = |b: &mut Bbr, t: &mut Instant, d: &mut u64, tx_in_flight: u64| {
        *t += Duration::from_millis(150);
        let prior = *d;
        *d += 20_000;
        let mut s = sample(rate, prior, *d, 150, tx_in_flight);
        s.lost = 40_000;
        s.newly_lost = 40_000;
        b.on_rate_sample(*t, &s, &rtt);
    };
    until_up(&mut b, &mut t, &mut d, rate, 0.0);
    // The probe's flight, 1.25 BDP, overflows the queue.
    overflow(&mut b, &mut t, &mut d, 1_000_000);
    assert_eq!(b.inflight_hi, Some(1_000_000));
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Down));
    // Later packets of smaller flights are lost in the queue the probe left.
    for flight in [900_000, 800_000, 700_000, 600_000] {
        overflow(&mut b, &mut t, &mut d, flight);
        assert_eq!(
            b.inflight_hi,
            Some(1_000_000),
            "lowered by a {flight} B flight"
        );
    }
    // The next probe's loss sets it again.
    until_up(&mut b, &mut t, &mut d, rate, 0.0);
    overflow(&mut b, &mut t, &mut d, 950_000);
    assert_eq!(b.inflight_hi, Some(950_000));
}

/// Rounds at `rate` whose every RTT is `rtt_ms` (a queue above the 100 ms
/// minimum when longer).
fn queued_rounds(b: &mut Bbr, t: &mut Instant, d: &mut u64, rate: u64, rtt_ms: u64, n: usize) {
    for _ in 0..n {
        round_with_flight(b, t, d, rate, rtt_ms, rate / 10);
    }
}

/// One round of [`queued_rounds`] whose samples saw `flight` bytes in flight.
fn round_with_flight(
    b: &mut Bbr,
    t: &mut Instant,
    d: &mut u64,
    rate: u64,
    rtt_ms: u64,
    flight: u64,
) {
    let rtt = RttEstimator::new(Duration::from_millis(100));
    *t += Duration::from_millis(rtt_ms);
    let prior = *d;
    *d += rate / 10;
    b.on_rate_sample(*t, &sample(rate, prior, *d, rtt_ms, flight), &rtt);
}

/// A queue standing through Cruise, where rounds without one came just
/// before, is the flows' own aggregate: each yields half the queue's share
/// of the round trip, once per Cruise. One that has stood longer than
/// [`QUEUE_DRAINED_MEMORY_RTTS`] (a buffer-filling flow's) is not yielded
/// to.
#[test]
fn a_standing_queue_that_drained_lately_is_yielded_to_once_per_cruise() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = cruising(rate);
    assert!(b.queue_yield.is_none());
    // 30 ms of queue over a 100 ms minimum.
    queued_rounds(&mut b, &mut t, &mut d, rate, 130, 3);
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
    let keep = (1.0 + 100.0 / 130.0) / 2.0;
    let y = b.queue_yield.expect("no yield to the standing queue");
    assert!(
        (y as f64 - rate as f64 * keep).abs() < rate as f64 * 0.01,
        "{y}"
    );
    assert!(b.pacing_rate.unwrap() < rate);
    queued_rounds(&mut b, &mut t, &mut d, rate, 130, 2);
    assert_eq!(b.queue_yield, Some(y), "yielded twice in one Cruise");
    // The queue stays: the next probe forgets the yield, and the next
    // Cruise, more than ten round trips after the queue last drained,
    // does not yield again.
    let mut probed = false;
    let mut cruised_again = false;
    for _ in 0..200 {
        let refill = b.mode == Mode::ProbeBw(Phase::Refill);
        queued_rounds(&mut b, &mut t, &mut d, rate, 130, 1);
        if refill {
            probed = true;
            assert!(b.queue_yield.is_none(), "the probe kept the yield");
        }
        if probed && b.mode == Mode::ProbeBw(Phase::Cruise) && b.rounds_in_phase() >= 3 {
            cruised_again = true;
            break;
        }
    }
    assert!(cruised_again, "{:?}", b.mode);
    assert!(
        b.queue_yield.is_none(),
        "yielded to a queue that never drains"
    );
}

/// A flow alone whose sender loses its core (samples of packets sent
/// catching up after a 5 ms absence, between others) keeps a queue standing
/// through Cruise (its catch-ups build it, and it carries the link through
/// the next absence); one whose sender has a core of its own, or whose
/// absence explains less than the queue (1 ms), or that has sibling flows,
/// yields to it. The queue, 4 ms over the 100 ms minimum, is too small for
/// a check of whose it is.
#[test]
fn a_flow_alone_whose_sender_loses_its_core_keeps_its_queue() {
    let rate = 8_000_000;
    // Four queued rounds, the first of two runs of samples of packets sent
    // catching up after an absence `away`, if any, each run followed by a
    // sample of one sent on schedule.
    let queued = |b: &mut Bbr, t: &mut Instant, d: &mut u64, away: Option<Duration>| {
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let prior = *d;
        for piece in 0..4u64 {
            *t += Duration::from_millis(26);
            *d += rate / 40;
            let mut s = sample(rate, prior, *d, 104, rate / 10);
            s.sent_catching_up = away.filter(|_| piece % 2 == 0);
            b.on_rate_sample(*t, &s, &rtt);
        }
        queued_rounds(b, t, d, rate, 104, 3);
        assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
        assert!(b.queue_owner.checking().is_none(), "{:?}", b.queue_owner);
    };
    let (mut b, mut t, mut d) = cruising(rate);
    queued(&mut b, &mut t, &mut d, Some(Duration::from_millis(5)));
    assert!(
        b.queue_yield.is_none(),
        "yielded to its own catch-ups' queue"
    );
    assert_eq!(b.pacing_rate, Some(rate));

    // Whether it yields to its 4 ms queue after absences of each length:
    // none, one under half the queue, and half the queue (what its
    // catch-ups build).
    for (away_ms, yields, case) in [
        (None, true, "on its own core"),
        (Some(1), true, "a 1 ms absence"),
        (Some(2), false, "a 2 ms absence"),
    ] {
        let (mut b, mut t, mut d) = cruising(rate);
        queued(&mut b, &mut t, &mut d, away_ms.map(Duration::from_millis));
        assert_eq!(b.queue_yield.is_some(), yields, "{case}");
    }

    let (mut siblings, mut t, mut d) = cruising(rate);
    siblings.on_path_siblings(1);
    queued(
        &mut siblings,
        &mut t,
        &mut d,
        Some(Duration::from_millis(5)),
    );
    assert!(
        siblings.queue_yield.is_some(),
        "a flow with siblings kept it"
    );
}

/// Cruise rounds from its start until the next ProbeBW Up, with every
/// round's RTT `rtt_ms` (the queue it shows) but those at or after the
/// first a check paced below the estimate, which show `after_check_ms`, on
/// a path losing [`LOSSY`] at random; and whether a check was made.
fn cruise_until_probe(rtt_ms: u64, after_check_ms: u64) -> (u64, bool) {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = until_cruise_after_probe_losing(rate, LOSSY);
    rounds_until_probe_losing(
        &mut b,
        &mut t,
        &mut d,
        rate,
        (rtt_ms, after_check_ms),
        LOSSY,
    )
}

/// [`cruise_until_probe`] for a controller at the start of a Cruise.
fn rounds_until_probe(
    b: &mut Bbr,
    t: &mut Instant,
    d: &mut u64,
    rate: u64,
    rtt_ms: u64,
    after_check_ms: u64,
) -> (u64, bool) {
    rounds_until_probe_losing(b, t, d, rate, (rtt_ms, after_check_ms), 0.0)
}

/// [`rounds_until_probe`] on a path that loses `loss` of each round's
/// datagrams at random; `rtt_ms` before and after the first check.
fn rounds_until_probe_losing(
    b: &mut Bbr,
    t: &mut Instant,
    d: &mut u64,
    rate: u64,
    (rtt_ms, after_check_ms): (u64, u64),
    loss: f64,
) -> (u64, bool) {
    let cruise = b.round_count;
    let mut checked = false;
    for _ in 0..100 {
        // The packets the check paces in this round are acknowledged in
        // the next, whose one sample this is.
        checked |= b.queue_owner.verdict_round().is_some();
        let ms = if checked { after_check_ms } else { rtt_ms };
        lossy_queued_rounds(b, t, d, rate, ms, loss, 1);
        if b.mode == Mode::ProbeBw(Phase::Up) {
            return (b.round_count - cruise, checked);
        }
    }
    panic!("no probe in 100 rounds");
}

/// The first Cruise after a probe (the first after Startup probes at once).
fn until_cruise_after_probe(rate: u64) -> (Bbr, Instant, u64) {
    until_cruise_after_probe_losing(rate, 0.0)
}

/// [`until_cruise_after_probe`] on a path that loses `loss` at random (its
/// rounds' loss learnt first).
fn until_cruise_after_probe_losing(rate: u64, loss: f64) -> (Bbr, Instant, u64) {
    let (mut b, mut t, mut d) = cruising(rate);
    lossy_rounds(&mut b, &mut t, &mut d, rate, loss, LOSS_FLOOR_ROUNDS);
    until_up(&mut b, &mut t, &mut d, rate, loss);
    while b.mode != Mode::ProbeBw(Phase::Cruise) {
        lossy_rounds(&mut b, &mut t, &mut d, rate, loss, 1);
    }
    (b, t, d)
}

/// Random loss at which a flow alone probes every few rounds (above
/// [`RENO_COEXISTENCE_MAX_LOSS`]), as the checks of whose queue stands
/// matter there.
const LOSSY: f64 = 0.01;

/// A queue that drains when the flow paces a round below its estimate was
/// its own (an estimate a little above the link's rate builds one while
/// it cruises): the next probe comes after Cruise's usual rounds, not
/// after the shared-queue wait (through `pmdt-wanem` a flow alone waited
/// 20-28 rounds at 100 ms, and found a bottleneck that grew back seconds
/// late). One that stands through the check is another flow's: the probe
/// waits 2 s.
#[test]
fn a_queue_that_drains_when_the_flow_holds_back_is_its_own() {
    let base = CRUISE_ROUNDS + CRUISE_JITTER_ROUNDS + 2;
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = until_cruise_after_probe_losing(rate, LOSSY);
    let (alone, checked) =
        rounds_until_probe_losing(&mut b, &mut t, &mut d, rate, (107, 100), LOSSY);
    assert!(checked, "the queue was not checked");
    assert!(alone <= base + 1, "a flow alone waited {alone} rounds");
    let found = b.model().queue_verdicts;
    assert_eq!((found.own, found.another, found.none), (1, 0, 0));
    assert!(b.model().probe_wait_rounds <= base + 1, "{:?}", b.model());
    let (beside, checked) = cruise_until_probe(107, 107);
    assert!(checked, "the queue was not checked");
    assert!(beside >= 20, "beside another flow's queue: {beside} rounds");
    // No queue: no check.
    let (clear, checked) = cruise_until_probe(100, 100);
    assert!(
        !checked && clear <= base,
        "{clear} rounds, checked {checked}"
    );
}

/// A sample 150 ms after `t` (a queue over the 100 ms minimum in every RTT)
/// that lost 5 % of a flight: congestion of the flow's own.
fn lose_with_a_queue(b: &mut Bbr, t: &mut Instant, d: u64, rate: u64) {
    let rtt = RttEstimator::new(Duration::from_millis(100));
    *t += Duration::from_millis(150);
    let mut s = sample(rate, d, d + 10_000, 150, rate / 10);
    s.lost = rate / 200;
    b.on_rate_sample(*t, &s, &rtt);
}

/// A flow alone on a path without random loss waits between probes as long
/// as a loss-based flow takes to regrow (BBRv3's Reno coexistence: 2 s, or
/// as many rounds as the window holds packets, at most 63): each probe
/// overflows a shallow buffer, and probing every few rounds left a CUBIC
/// flow that joined 2.3 % of 1 Gbit/s × 40 ms in the simulator. On a path
/// that loses at random (where no loss-based flow gets far), and after its
/// own congestion (the path fell under its rate), every few rounds.
#[test]
fn a_flow_alone_on_a_clean_path_probes_as_seldom_as_a_reno_flow_regrows() {
    let rate = 8_000_000;
    let base = CRUISE_ROUNDS + CRUISE_JITTER_ROUNDS + 2;
    // 100 ms rounds: 2 s is 20 of them; the window holds 800 packets.
    let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
    let (clean, checked) = rounds_until_probe(&mut b, &mut t, &mut d, rate, 100, 100);
    assert!(!checked);
    assert!(clean >= 20, "a clean path: {clean} rounds");
    let (lossy, checked) = cruise_until_probe(100, 100);
    assert!(!checked);
    assert!(lossy <= base, "a lossy path: {lossy} rounds");
    // Congestion of its own early in a long Cruise: 5 % of a flight lost
    // in a round whose every RTT shows a queue.
    let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
    queued_rounds(&mut b, &mut t, &mut d, rate, 100, 2);
    assert!(b.cruise_rounds >= 20, "{} rounds", b.cruise_rounds);
    lose_with_a_queue(&mut b, &mut t, d, rate);
    assert!(b.congested_at.is_some(), "no congestion");
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
    assert!(
        b.cruise_rounds <= b.rounds_in_phase() + CRUISE_ROUNDS,
        "{} rounds after its own congestion",
        b.cruise_rounds
    );
}

/// A flow alone whose rounds show a queue of a millisecond when its probe is
/// due (a loss-based flow's, too small for a check to tell) puts the probe
/// off, up to twice the Cruise it planned; without the queue it probes when
/// the Cruise ends, and once the queue is gone it probes at once.
#[test]
fn a_flow_alone_puts_a_due_probe_off_while_a_small_queue_stands() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
    let planned = b.cruise_rounds;
    let (clean, _) = rounds_until_probe(&mut b, &mut t, &mut d, rate, 100, 100);
    let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
    assert_eq!(b.cruise_rounds, planned);
    let (queued, checked) = rounds_until_probe(&mut b, &mut t, &mut d, rate, 101, 101);
    assert!(!checked, "a millisecond is no standing queue to check");
    assert!(clean <= planned + 2, "{clean} rounds of {planned} planned");
    assert!(
        queued >= PROBE_PUT_OFF_MAX * planned,
        "{queued} rounds of {planned} planned"
    );
    assert!(queued <= PROBE_PUT_OFF_MAX * planned + 2, "{queued} rounds");
    // The queue goes half-way through the put-off: the probe comes at once.
    let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
    let start = b.round_count;
    queued_rounds(&mut b, &mut t, &mut d, rate, 101, planned as usize + 5);
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise), "put off");
    let (after, _) = rounds_until_probe(&mut b, &mut t, &mut d, rate, 100, 100);
    assert!(after <= 3, "{after} rounds after the queue went");
    assert!(b.round_count - start < PROBE_PUT_OFF_MAX * planned);
}

/// The rounds' typical loss is unknown until most of the rounds it spans
/// were measured (a Startup from a saved path lasts a few rounds, and the
/// slots not yet written read zero: a lossy path would look clean), then the
/// path's random loss.
#[test]
fn the_typical_round_loss_is_unknown_until_most_rounds_were_measured() {
    let rate = 8_000_000;
    let mut b = Bbr::new(1000);
    assert_eq!(b.typical_round_loss(), None);
    let (mut t, mut d) = (Instant::now(), 0);
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.05, 2);
    assert_eq!(b.typical_round_loss(), None);
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.05, 10);
    let loss = b.typical_round_loss().expect("measured");
    assert!((loss - 0.05).abs() < 0.005, "{loss}");
}

/// A flow alone whose estimate fell under half of what it had lately (the
/// bottleneck slowed down) waits [`SLOWED_CRUISE_ROUNDS`] between probes
/// instead of [`CRUISE_ROUNDS`]: the bottleneck may come back, and a probe
/// that just missed its return cost a whole Cruise. Not beside another
/// flow's queue, and not once the peak is forgotten.
#[test]
fn a_flow_alone_far_below_its_recent_peak_probes_sooner() {
    /// Rounds from the next Cruise's start to the probe after it.
    fn rounds_to_next_probe(b: &mut Bbr, t: &mut Instant, d: &mut u64, rate: u64) -> u64 {
        while b.mode == Mode::ProbeBw(Phase::Cruise) {
            rounds(b, t, d, rate, 1);
        }
        while b.mode != Mode::ProbeBw(Phase::Cruise) {
            rounds(b, t, d, rate, 1);
        }
        rounds_until_probe(b, t, d, rate, 100, 100).0
    }
    let rate = 8_000_000;
    let low = rate / 5;
    let mut fresh = Bbr::new(1000);
    let (mut t, mut d) = (Instant::now(), 0);
    rounds(&mut fresh, &mut t, &mut d, rate, 3);
    assert_eq!(fresh.mode, Mode::Startup);
    assert_eq!(
        fresh.recent_peak,
        RecentPeak::default(),
        "Startup set a peak"
    );
    let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
    let at_peak = rounds_until_probe(&mut b, &mut t, &mut d, rate, 100, 100).0;
    assert!(at_peak > CRUISE_ROUNDS, "at the peak: {at_peak} rounds");
    let fell = t;
    rounds(&mut b, &mut t, &mut d, low, 2 * BW_FILTER_ROUNDS);
    assert!(
        b.max_bw < rate / 2,
        "the estimate followed the fall: {}",
        b.max_bw
    );
    let slowed = rounds_to_next_probe(&mut b, &mut t, &mut d, low);
    assert!(
        slowed < CRUISE_ROUNDS,
        "far below the peak: {slowed} rounds, at the peak {at_peak}"
    );
    // Beside another flow's queue the shared wait holds.
    b.another_flow.verdict(t);
    let beside = rounds_to_next_probe(&mut b, &mut t, &mut d, low);
    assert!(beside >= 20, "beside another flow: {beside} rounds");
    // Forgotten (the other flow's memory too): the usual Cruise, on this
    // path without random loss the wait for a loss-based flow to regrow.
    while b.recent_peak.far_above(t, b.max_bw) || b.shares_the_bottleneck(t) {
        rounds(&mut b, &mut t, &mut d, low, 1);
    }
    assert!(t.saturating_duration_since(fell) >= recent_peak::PEAK_MEMORY);
    let forgotten = rounds_to_next_probe(&mut b, &mut t, &mut d, low);
    assert!(forgotten >= 20, "peak forgotten: {forgotten} rounds");
}

/// A check holds back the queue the flow's flight holds (Little's law at
/// what the last round delivered), where that is more than the round's
/// smallest RTT shows: a queue still growing under Cruise at an estimate
/// above the link's rate. Where the RTT shows as much as the flight holds
/// (a share of a queue other flows keep too), the check is the RTT's. So
/// it is once a second verdict confirmed another flow's queue; after one
/// alone (which the processes' scheduling can fool) the flight still sizes
/// it, so a flow alone drains its own queue and does not confirm a verdict
/// that was wrong.
#[test]
fn a_check_holds_back_the_queue_the_flight_holds() {
    fn check_gain(flight_ms: u64, verdicts: usize) -> f64 {
        let rate = 8_000_000;
        let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
        for _ in 0..verdicts {
            b.another_flow.verdict(t);
        }
        let rtt = RttEstimator::new(Duration::from_millis(100));
        for _ in 0..20 {
            // 7 ms of queue by the RTT over a 100 ms minimum; `flight_ms` of
            // the rate in flight.
            t += Duration::from_millis(107);
            let prior = d;
            d += rate / 10;
            let flight = rate * flight_ms / 1000;
            b.on_rate_sample(t, &sample(rate, prior, d, 107, flight), &rtt);
            if b.queue_owner.verdict_round().is_some() {
                return b.queue_owner.pacing_gain(b.round_count);
            }
        }
        panic!("no check");
    }
    for verdicts in [0, 1] {
        let by_flight = check_gain(115, verdicts);
        assert!((by_flight - 0.85).abs() < 1e-6, "{verdicts}: {by_flight}");
        let by_rtt = check_gain(107, verdicts);
        assert!((by_rtt - 0.93).abs() < 1e-6, "{verdicts}: {by_rtt}");
    }
    let confirmed = check_gain(115, 2);
    assert!((confirmed - 0.93).abs() < 1e-6, "confirmed: {confirmed}");
}

/// A check under way when the bottleneck slows down gives no verdict: the
/// queue the slowdown builds is this flow's own, and the probes that must
/// find the path's rate again do not wait for another flow.
#[test]
fn a_check_the_bottleneck_overtakes_gives_no_verdict() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
    // 7 ms of queue over a 100 ms minimum, until a check asks whose.
    for _ in 0..20 {
        if b.queue_owner.verdict_round().is_some() {
            break;
        }
        queued_rounds(&mut b, &mut t, &mut d, rate, 107, 1);
    }
    assert!(b.queue_owner.verdict_round().is_some(), "no check");
    // The bottleneck falls to a fifth of the rate: a fifth is delivered,
    // behind a queue that grows.
    for ms in [130, 160, 190] {
        queued_rounds(&mut b, &mut t, &mut d, rate / 5, ms, 1);
    }
    assert_ne!(b.queue_owner, QueueOwner::Another);
    assert_eq!(
        b.another_flow,
        AnotherFlow::Unseen,
        "took it for another flow's"
    );
}

/// After the flow's own congestion (a bottleneck that slowed down), a
/// queue standing in Cruise is the one the fall filled: checks drain it,
/// one after another while it stands, and take no verdict (through
/// `pmdt-wanem`, 1 Gbit/s falling to 200 Mbit/s at 40 ms left 25-38 ms
/// standing for seconds in 7 of 18 runs). Once that congestion is
/// [`OWN_CONGESTION_MEMORY`] old, a queue that stands through a check is
/// another flow's again.
#[test]
fn after_its_own_congestion_a_flow_drains_a_standing_queue_and_judges_nothing() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
    b.congested_at = Some(t);
    // 30 ms of queue over a 100 ms minimum, for three seconds.
    let mut drain_rounds = 0;
    for _ in 0..23 {
        queued_rounds(&mut b, &mut t, &mut d, rate, 130, 1);
        if b.queue_owner.pacing_gain(b.round_count) < 1.0 {
            drain_rounds += 1;
        }
    }
    let found = b.model().queue_verdicts;
    assert!(
        found.drained >= 2,
        "{found:?}, {drain_rounds} rounds drained"
    );
    assert_eq!((found.own, found.another, found.none), (0, 0, 0));
    assert_eq!(b.another_flow, AnotherFlow::Unseen);
    // The congestion is past: the same queue is another flow's.
    queued_rounds(&mut b, &mut t, &mut d, rate, 130, 40);
    assert!(b.model().queue_verdicts.another >= 1, "{:?}", b.model());
    assert_ne!(b.another_flow, AnotherFlow::Unseen);
}

/// A flow far below its recent peak (a bottleneck that slowed down) with
/// one verdict of another flow's queue, waiting for it, meets congestion
/// of its own (through `pmdt-wanem`, a flow alone whose check the
/// scheduling fooled climbed beside the flow it took to be there until its
/// own queue overflowed): the verdict is forgotten, the Cruise waits no
/// longer than a flow alone's, and the next probe grows the bound as a flow
/// alone's does. Near the peak, or with the verdict confirmed, it stands
/// (and the loss is the shared queue's overflow).
#[test]
fn congestion_of_its_own_far_below_its_peak_forgets_a_single_verdict() {
    let rate = 8_000_000;
    for (far_below_peak, verdicts, forgotten) in
        [(true, 1, true), (false, 1, false), (true, 2, false)]
    {
        let case = format!("far below {far_below_peak}, {verdicts} verdict(s)");
        let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
        if far_below_peak {
            b.recent_peak.update(t, 3 * rate);
            b.recent_peak.update(t, 3 * rate);
        }
        for _ in 0..verdicts {
            b.another_flow.verdict(t);
        }
        b.inflight_hi = Some(rate / 10 * 7 / 10);
        b.up_growth = UpGrowth::Gentle { pipe: None };
        b.shared_regrow_step = Some(b.mss);
        queued_rounds(&mut b, &mut t, &mut d, rate, 100, 1);
        assert!(b.cruise_rounds >= 20, "{case}: {} rounds", b.cruise_rounds);
        lose_with_a_queue(&mut b, &mut t, d, rate);
        // Near the peak, or with the verdict confirmed, the loss is the
        // shared queue's overflow, not congestion of the flow's own.
        assert_eq!(b.congested_at.is_some(), forgotten, "{case}");
        if forgotten {
            assert_eq!(b.another_flow, AnotherFlow::Unseen, "{case}");
            assert_eq!(b.up_growth, UpGrowth::Fast, "{case}");
            assert_eq!(b.shared_regrow_step, None, "{case}");
            assert!(
                b.cruise_rounds <= b.rounds_in_phase() + CRUISE_ROUNDS,
                "{case}: {} rounds",
                b.cruise_rounds
            );
        } else {
            assert!(b.shares_the_bottleneck(t), "{case}");
            assert_eq!(b.up_growth, UpGrowth::Gentle { pipe: None }, "{case}");
            assert!(b.cruise_rounds >= 20, "{case}: {} rounds", b.cruise_rounds);
        }
    }
}

/// Once a queue stood through checks in two Cruises, every Cruise waits
/// for the next probe for [`CONFIRMED_MEMORY`], a queue standing in it or
/// not (a loss-based flow that backed off leaves the queue empty while it
/// regrows); after that a Cruise without a queue probes as often as a
/// flow alone. After one such check only for [`ONCE_MEMORY`]: a flow
/// alone whose check the processes' scheduling fooled once finds a
/// faster bottleneck seconds sooner.
#[test]
fn after_another_flows_queue_the_probes_wait_a_while() {
    for (verdicts, memory) in [(2, CONFIRMED_MEMORY), (1, ONCE_MEMORY)] {
        let rate = 8_000_000;
        let (mut b, mut t, mut d) = until_cruise_after_probe_losing(rate, LOSSY);
        for _ in 0..verdicts {
            while b.mode != Mode::ProbeBw(Phase::Cruise) {
                lossy_rounds(&mut b, &mut t, &mut d, rate, LOSSY, 1);
            }
            let (beside, _) =
                rounds_until_probe_losing(&mut b, &mut t, &mut d, rate, (107, 107), LOSSY);
            assert!(beside >= 20, "{beside} rounds");
            // The statistics show why the probe waited.
            assert!(b.model().probe_wait_rounds >= 20, "{:?}", b.model());
        }
        let found = b.model().queue_verdicts;
        assert_eq!((found.another, found.own), (verdicts, 0), "{found:?}");
        let base = CRUISE_ROUNDS + CRUISE_JITTER_ROUNDS + 2;
        let start = t;
        let mut waits = Vec::new();
        while t.duration_since(start) < memory + Duration::from_secs(5) {
            while b.mode != Mode::ProbeBw(Phase::Cruise) {
                lossy_rounds(&mut b, &mut t, &mut d, rate, LOSSY, 1);
            }
            let since = t.duration_since(start);
            let (n, checked) =
                rounds_until_probe_losing(&mut b, &mut t, &mut d, rate, (100, 100), LOSSY);
            assert!(!checked, "checked without a queue");
            waits.push((since, n));
        }
        for &(since, n) in &waits {
            if since + Duration::from_secs(1) < memory {
                assert!(
                    n >= 20,
                    "{verdicts} verdicts: probed after {n} rounds, {since:?} on: {waits:?}"
                );
            } else if since > memory {
                assert!(
                    n <= base,
                    "{verdicts} verdicts: waited {n} rounds, {since:?} on: {waits:?}"
                );
            }
        }
        assert!(waits.iter().any(|&(since, _)| since > memory), "{waits:?}");
    }
}

/// A stray late sample does not make a probe's round queued; a queue that
/// a few per cent of its samples show does.
#[test]
fn a_stray_late_sample_leaves_a_round_queue_free() {
    let mut q = QueuedSamples::default();
    assert!(q.queue_free());
    for i in 0..200 {
        q.add(i == 100, 0);
    }
    assert!(q.queue_free(), "{q:?}");
    for _ in 0..5 {
        q.add(true, 0);
    }
    assert!(!q.queue_free(), "{q:?}");
    // For keeping a probe going, a few per cent is the scheduling's; a
    // probe's own queue shows in most samples.
    assert!(q.mostly_queue_free(), "{q:?}");
    for _ in 0..30 {
        q.add(true, 0);
    }
    assert!(!q.mostly_queue_free(), "{q:?}");
}

/// A receiver whose credit still grows holds the delivery rate flat for a few
/// rounds: that is not the pipe's plateau, Startup goes on.
#[test]
fn credit_limited_rounds_do_not_end_startup() {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    let rtt = RttEstimator::new(Duration::from_millis(100));
    rounds(&mut b, &mut t, &mut d, 1_000_000, 1);
    for _ in 0..6 {
        t += Duration::from_millis(100);
        let prior = d;
        d += 100_000;
        let mut s = sample(1_000_000, prior, d, 100, 100_000);
        s.is_credit_limited = true;
        b.on_rate_sample(t, &s, &rtt);
    }
    assert_eq!(b.mode, Mode::Startup, "credit-limited rounds");
    rounds(&mut b, &mut t, &mut d, 1_000_000, 4);
    assert_ne!(b.mode, Mode::Startup, "a real plateau ends it");
}

/// Feeds `n` rounds of 100 ms delivering `rate` with `loss` of each round's
/// bytes declared lost, RTT at its minimum.
fn lossy_rounds(b: &mut Bbr, t: &mut Instant, d: &mut u64, rate: u64, loss: f64, n: usize) {
    lossy_queued_rounds(b, t, d, rate, 100, loss, n);
}

/// Startup on a path with 5 % random loss: a round that loses at that rate
/// while its RTT shows a few milliseconds of queue does not end Startup
/// (before, it did, at 30-70 % of the link through pmdt-wanem); a round
/// that loses far more than the path's random loss does.
#[test]
fn startup_ends_on_loss_beyond_the_paths_random_loss_only() {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    let rtt = RttEstimator::new(Duration::from_millis(100));
    let queued = |b: &mut Bbr, t: &mut Instant, d: &mut u64, flight: u64, loss: f64| {
        *t += Duration::from_millis(106);
        let prior = *d;
        *d += flight;
        let mut s = sample(flight * 10, prior, *d, 106, flight);
        s.newly_lost = (flight as f64 * loss / (1.0 - loss)) as u64;
        s.lost = s.newly_lost;
        b.on_rate_sample(*t, &s, &rtt);
    };
    // After a first round of 100 datagrams, a flight of 73 losing 6 (8 %)
    // while its RTT shows a little queue (not every RTT of its round): too
    // few datagrams yet to tell it from random loss.
    lossy_rounds(&mut b, &mut t, &mut d, 1_000_000, 0.0, 1);
    t += Duration::from_millis(106);
    let prior = d;
    d += 67_000;
    let mut s = sample(670_000, prior, d, 106, 67_000);
    s.newly_lost = 6_000;
    s.lost = 6_000;
    b.on_rate_sample(t, &s, &rtt);
    let s = sample(670_000, prior, d, 100, 67_000);
    b.on_rate_sample(t, &s, &rtt);
    assert_eq!(b.mode, Mode::Startup, "a small flight");
    for r in [1u64, 2, 4, 8] {
        lossy_rounds(&mut b, &mut t, &mut d, r * 1_000_000, 0.05, 1);
        assert_eq!(b.mode, Mode::Startup);
    }
    queued(&mut b, &mut t, &mut d, 1_600_000, 0.055);
    assert_eq!(b.mode, Mode::Startup, "random loss and a small queue");
    queued(&mut b, &mut t, &mut d, 1_600_000, 0.30);
    assert!(b.full_bw_reached, "the queue overflowed");
    assert_ne!(b.mode, Mode::Startup);
}

/// A joiner's first small flights fall into another flow's overflow: 6 of
/// 24 datagrams lost, within its first 200. That alone does not end
/// Startup, nor do later samples of packets sent before it (they carry the
/// same losses, also once 200 datagrams are past); a second loss as high,
/// in packets sent after the first, does.
#[test]
fn a_first_small_flights_loss_ends_startup_only_if_it_recurs() {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    let rtt = RttEstimator::new(Duration::from_millis(40));
    let mut lossy = |b: &mut Bbr, prior: u64, delivered: u64, lost: u64| {
        t += Duration::from_millis(20);
        d += delivered;
        let mut s = sample(delivered * 25, prior, d, 40, delivered);
        s.delivered = delivered;
        s.newly_acked = delivered;
        s.newly_lost = lost;
        s.lost = lost;
        b.on_rate_sample(t, &s, &rtt);
        d
    };
    let first = lossy(&mut b, 0, 10_000, 0);
    let signal = lossy(&mut b, first, 18_000, 6_000);
    assert_eq!(b.mode, Mode::Startup, "one flight's loss");
    lossy(&mut b, signal - 1_000, 2_000, 6_000);
    assert_eq!(b.mode, Mode::Startup, "the same losses, a later sample");
    // Past the first 200 datagrams, a sample of a packet sent before the
    // signal still carries the same losses.
    lossy(&mut b, signal, 250_000, 0);
    lossy(&mut b, signal - 1_000, 2_000, 6_000);
    assert_eq!(b.mode, Mode::Startup, "the same losses, past 200 datagrams");
    lossy(&mut b, signal, 18_000, 6_000);
    assert!(b.full_bw_reached, "the loss recurred");
    assert_ne!(b.mode, Mode::Startup);
}

/// A controller past Startup at `rate`, cruising: its clock and delivered bytes.
fn cruising(rate: u64) -> (Bbr, Instant, u64) {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    rounds(&mut b, &mut t, &mut d, rate, 12);
    while b.mode != Mode::ProbeBw(Phase::Cruise) {
        rounds(&mut b, &mut t, &mut d, rate, 1);
    }
    (b, t, d)
}

/// Feeds rounds at `rate` until a ProbeBW Up begins (at most 100): the next
/// one if one is under way.
fn until_up(b: &mut Bbr, t: &mut Instant, d: &mut u64, rate: u64, loss: f64) {
    let mut left_up = b.mode != Mode::ProbeBw(Phase::Up);
    for _ in 0..100 {
        lossy_rounds(b, t, d, rate, loss, 1);
        if b.mode != Mode::ProbeBw(Phase::Up) {
            left_up = true;
        } else if left_up {
            return;
        }
    }
    panic!("no ProbeBW Up in 100 rounds: {:?}", b.mode);
}

/// A sample in the middle of a ProbeBW Up round: `lost` of a 1.2-BDP flight, the RTT
/// at its minimum (a queue too shallow to show).
fn up_sample(b: &mut Bbr, t: Instant, d: &mut u64, rate: u64, lost_share: f64) {
    let rtt = RttEstimator::new(Duration::from_millis(100));
    let flight = rate / 10 * 12 / 10;
    // Sent in the middle of the round that ended last: no round starts.
    let mut s = sample(rate, *d - rate / 20, *d + 10_000, 100, flight);
    *d += 10_000;
    s.lost = (flight as f64 * lost_share) as u64;
    s.delivered = flight - s.lost;
    b.on_rate_sample(t, &s, &rtt);
}

/// Rounds of ProbeBW Up on a path that delivers all it is sent at `rtt_ms`:
/// each round's rate is the pacing rate of the one before. The gains of
/// the rounds, in order, while the probe lasts (at most `n` rounds).
fn up_gains(b: &mut Bbr, t: &mut Instant, d: &mut u64, rtt_ms: u64, n: usize) -> Vec<f64> {
    let mut gains = Vec::new();
    while b.mode == Mode::ProbeBw(Phase::Up) && gains.len() < n {
        gains.push(b.pacing_gain);
        let rate = b.pacing_rate.unwrap();
        queued_rounds(b, t, d, rate, rtt_ms, 1);
    }
    gains
}

/// A bottleneck that grew (a path back from 200 Mbit/s to 1 Gbit/s): a
/// probe whose rounds show no queue at all and still find more escalates
/// its gain, 1.2 then 1.5, where a gain of 1.2 grows the rate only 1.13×
/// per round trip; one whose rounds show a queue, even under the
/// threshold that ends a probe (another flow's, CUBIC's), stays at 1.2.
#[test]
fn a_queue_free_probe_that_finds_more_escalates_its_gain() {
    let (mut b, mut t, mut d) = cruising(8_000_000);
    until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
    let free = up_gains(&mut b, &mut t, &mut d, 100, 6);
    assert_eq!(free, [1.2, 1.2, 1.2, 1.5, 1.5, 1.5]);
    let (mut b, mut t, mut d) = cruising(8_000_000);
    until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
    let queued = up_gains(&mut b, &mut t, &mut d, 105, 6);
    assert_eq!(queued, [1.2; 6]);
}

/// A run of Ups of a flow alone that found half as much again as it began
/// with (a bottleneck that grew) does not end on a round that grew little
/// and showed a few milliseconds of queue (a late receiver, the estimate a
/// round behind): only the probe's own queue or loss ends it. Beside
/// another flow's queue, or after rounds that all showed some queue (the
/// gain never escalated), such a round does.
#[test]
fn a_probe_that_found_far_more_ends_on_its_queue_not_on_a_slow_round() {
    /// A run of Ups from cruising at 8 MB/s through six rounds at `rtt_ms`
    /// (100: no queue, the gain escalates; 105: a queue in every round).
    fn found_far_more(rtt_ms: u64, another_flow: bool) -> (Bbr, Instant, u64) {
        let (mut b, mut t, mut d) = cruising(8_000_000);
        until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
        up_gains(&mut b, &mut t, &mut d, rtt_ms, 6);
        assert!(
            b.max_bw as f64 >= 8e6 * ESCALATE_AFTER_GROWTH,
            "{}",
            b.max_bw
        );
        if another_flow {
            b.another_flow.verdict(t);
        }
        (b, t, d)
    }
    /// A round with the probe's flight out and no growth, at `rtt_ms`; the
    /// mode after it.
    fn slow_round(b: &mut Bbr, t: &mut Instant, d: &mut u64, rtt_ms: u64) -> Mode {
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let bw = b.max_bw;
        *t += Duration::from_millis(rtt_ms);
        let prior = *d;
        *d += bw / 10;
        b.on_rate_sample(*t, &sample(bw, prior, *d, rtt_ms, bw / 10 * 13 / 10), &rtt);
        b.mode
    }
    let up = Mode::ProbeBw(Phase::Up);
    // Alone, escalated: rounds with 5 ms of queue go on; the probe's own
    // queue (an eighth of the minimum RTT over where it began) ends it.
    let (mut b, mut t, mut d) = found_far_more(100, false);
    for _ in 0..=MAX_UP_ROUNDS {
        assert_eq!(slow_round(&mut b, &mut t, &mut d, 105), up);
    }
    assert_eq!(
        slow_round(&mut b, &mut t, &mut d, 120),
        Mode::ProbeBw(Phase::Down)
    );
    // Beside another flow's queue, or never escalated (every round showed a
    // queue, the gain stayed at 1.2): such rounds end it.
    for (rtt_ms, another_flow) in [(100, true), (105, false)] {
        let (mut b, mut t, mut d) = found_far_more(rtt_ms, another_flow);
        let modes: Vec<Mode> = (0..=MAX_UP_ROUNDS)
            .map(|_| slow_round(&mut b, &mut t, &mut d, 105))
            .collect();
        assert!(modes.contains(&Mode::ProbeBw(Phase::Down)), "{modes:?}");
    }
}

/// An escalated probe's last round overshoots the bottleneck it reached
/// (a quarter of a round's flight lost, more than the high loss threshold):
/// the loss of the packets it sent is repaired without cutting the model.
/// The same loss met by a probe at the base gain is congestion.
#[test]
fn an_escalated_probes_overshoot_is_not_congestion() {
    for (rtt_ms, escalated) in [(100, true), (105, false)] {
        let (mut b, mut t, mut d) = cruising(8_000_000);
        until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
        up_gains(&mut b, &mut t, &mut d, rtt_ms, 6);
        assert_eq!(b.pacing_gain > PROBE_UP_PACING_GAIN, escalated);
        let bw = b.max_bw;
        // The queue shows: the probe ends.
        queued_rounds(&mut b, &mut t, &mut d, bw, 120, 1);
        assert_eq!(b.mode, Mode::ProbeBw(Phase::Down));
        // The overshoot's loss, acknowledged with packets the probe sent.
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let flight = bw / 10;
        let mut s = sample(bw, d - flight / 2, d + flight / 2, 108, flight);
        s.lost = flight / 3;
        s.newly_lost = s.lost;
        t += Duration::from_millis(50);
        b.on_rate_sample(t, &s, &rtt);
        assert_eq!(b.bw_lo.is_none(), escalated, "escalated: {escalated}");
        assert_eq!(b.max_bw, bw);
    }
}

/// A probe that overflows a queue the RTT cannot show (3 % of its flight
/// lost on a lossless path) ends at once; the flight goes back to the pipe,
/// the model keeps its rate, and the next probe approaches the pipe in small
/// steps, growing them while it finds nothing.
#[test]
fn a_probe_that_overflows_a_shallow_queue_ends_and_the_next_approaches_gently() {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    rounds(&mut b, &mut t, &mut d, 8_000_000, 12);
    until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
    up_sample(&mut b, t, &mut d, 8_000_000, 0.03);
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Down));
    assert_eq!(
        b.up_growth,
        UpGrowth::Gentle {
            pipe: Some(800_000)
        }
    );
    assert_eq!(b.inflight_hi, Some(800_000 + b.quanta()));
    assert!(
        b.bw_lo.is_none() && b.inflight_lo.is_none(),
        "not congestion"
    );
    assert_eq!(b.max_bw, 8_000_000);
    // The next Up: the step doubles per round, from one packet, whatever
    // the bound.
    until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
    let hi0 = b.inflight_hi.unwrap();
    lossy_rounds(&mut b, &mut t, &mut d, 8_000_000, 0.0, 1);
    let hi1 = b.inflight_hi.unwrap();
    lossy_rounds(&mut b, &mut t, &mut d, 8_000_000, 0.0, 1);
    let hi2 = b.inflight_hi.unwrap();
    lossy_rounds(&mut b, &mut t, &mut d, 8_000_000, 0.0, 1);
    let hi3 = b.inflight_hi.unwrap();
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Up));
    assert_eq!((hi1 - hi0, hi2 - hi1, hi3 - hi2), (1000, 2000, 4000));
}

/// An Up that ends on its flight (one round at 1.2) hears of its overflow in
/// the phase after it: the acks of its flight come a round later. That loss
/// still marks the overflow (before, it was missed, `inflight_hi` stayed unset,
/// and every probe lost the same ~2,000 packets at 1 Gbit/s × 200 ms through a
/// 1 MiB queue); loss of packets sent after the Up, or once the probe's
/// feedback is over, does not.
#[test]
fn a_probes_overflow_heard_after_the_up_still_ends_its_fast_growth() {
    let (mut b, mut t, mut d) = cruising(8_000_000);
    until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
    for _ in 0..10 {
        if b.mode != Mode::ProbeBw(Phase::Up) {
            break;
        }
        lossy_rounds(&mut b, &mut t, &mut d, 8_000_000, 0.0, 1);
    }
    let (after, phase_start) = (b.mode, b.phase_start);
    assert_ne!(after, Mode::ProbeBw(Phase::Up));
    let ProbeFeedback::Ending { since, until, .. } = b.probe_feedback else {
        panic!("the probe's feedback: {:?}", b.probe_feedback);
    };
    assert!(since < until);
    assert!(b.inflight_hi.is_none());
    // Packets sent before the Up, and after it, losing as much: not the probe's.
    let rtt = RttEstimator::new(Duration::from_millis(100));
    for prior in [since - 10_000, until] {
        let mut s = sample(8_000_000, prior, d + 10_000, 100, 960_000);
        d += 10_000;
        s.lost = 28_800;
        s.delivered = 960_000 - s.lost;
        b.on_rate_sample(t, &s, &rtt);
        assert!(b.inflight_hi.is_none(), "sent with {prior} delivered");
    }
    // One of the Up's own packets.
    up_sample(&mut b, t, &mut d, 8_000_000, 0.03);
    assert_eq!(b.inflight_hi, Some(800_000 + b.quanta()));
    assert!(b.up_growth.is_gentle());
    assert_eq!(b.probe_feedback, ProbeFeedback::Idle);
    assert!(
        b.bw_lo.is_none() && b.inflight_lo.is_none(),
        "not congestion"
    );
    assert_eq!(
        (b.mode, b.phase_start),
        (after, phase_start),
        "the probe had already ended: the phase goes on"
    );
    // A bound cut lower in the meantime (another flow's queue) stands.
    let (mut b, mut t, mut d) = cruising(8_000_000);
    until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
    while b.mode == Mode::ProbeBw(Phase::Up) {
        lossy_rounds(&mut b, &mut t, &mut d, 8_000_000, 0.0, 1);
    }
    b.inflight_hi = Some(400_000);
    up_sample(&mut b, t, &mut d, 8_000_000, 0.03);
    assert_eq!(b.inflight_hi, Some(400_000));
    assert!(b.up_growth.is_gentle());
    // The same loss once no probe's packets are being acknowledged.
    let (mut b, mut t, mut d) = cruising(8_000_000);
    lossy_rounds(&mut b, &mut t, &mut d, 8_000_000, 0.0, 2);
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
    assert_eq!(b.probe_feedback, ProbeFeedback::Idle);
    up_sample(&mut b, t, &mut d, 8_000_000, 0.03);
    assert!(b.inflight_hi.is_none());
    assert_eq!(b.up_growth, UpGrowth::Fast);
}

/// A gentle Up whose rounds show no queue while its estimate grows (the
/// bottleneck came back faster just after a probe overflowed it) is
/// followed by another at once, and its flight, past the BDP the run began
/// with by twice the queue-free margin, makes the bound grow fast (×1.25 a
/// round, or the escalated gain): the bound regains the path in rounds,
/// not in steps of 255 packets per eight.
#[test]
fn a_gentle_up_that_keeps_finding_room_doubles_its_step_then_grows_fast() {
    let rate = 20_000_000;
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    rounds(&mut b, &mut t, &mut d, rate, 12);
    until_up(&mut b, &mut t, &mut d, rate, 0.0);
    up_sample(&mut b, t, &mut d, rate, 0.03);
    assert!(b.up_growth.is_gentle());
    until_up(&mut b, &mut t, &mut d, rate, 0.0);
    // The path now takes all the bound lets through, at the minimum RTT.
    let mut his = vec![b.inflight_hi.unwrap()];
    let mut modes = Vec::new();
    for _ in 0..12 {
        let through = b.inflight_hi.unwrap() * 10;
        rounds(&mut b, &mut t, &mut d, through, 1);
        his.push(b.inflight_hi.unwrap());
        modes.push(b.mode);
    }
    assert!(
        modes.iter().all(|m| *m == Mode::ProbeBw(Phase::Up)),
        "{modes:?}"
    );
    let steps: Vec<u64> = his.windows(2).map(|w| w[1] - w[0]).collect();
    // One packet, doubling, through the first Up's eight rounds ...
    assert_eq!(
        steps[..8],
        [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000],
        "{his:?}"
    );
    // ... then, the flight 127 kB past the first Up's 2 MB (twice 2 ms at
    // 20 MB/s is 80 kB), fast.
    assert_eq!(b.up_growth, UpGrowth::Fast);
    for w in his[8..].windows(2) {
        let growth = w[1] as f64 / w[0] as f64;
        assert!(growth >= INFLIGHT_HI_GROWTH - 1e-3, "{his:?}");
    }
}

/// A probe's sample counts in full while the RTT shows no queue of the
/// probe's own (spare capacity), scaled by the RTT before it over the
/// sample's once it does (a larger share of a full bottleneck's output,
/// taken from other flows), and in full again once the probe's packets are
/// acknowledged.
#[test]
fn a_probe_keeps_what_it_found_spare_not_what_its_queue_took() {
    let (mut b, mut t, mut d) = cruising(8_000_000);
    until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
    let rtt = RttEstimator::new(Duration::from_millis(100));
    let mut mid_round = |b: &mut Bbr, rate: u64, rtt_ms: u64| {
        let mut s = sample(rate, d - rate / 20, d + 10_000, rtt_ms, rate / 10);
        d += 10_000;
        s.newly_acked = 10_000;
        b.on_rate_sample(t, &s, &rtt);
    };
    mid_round(&mut b, 9_000_000, 101);
    assert_eq!(b.max_bw, 9_000_000, "spare capacity");
    mid_round(&mut b, 10_000_000, 125);
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Down), "the probe queues");
    // 10 MB/s × (100 + 2 ms) / 125 ms: 8.16 MB/s, below what the filter has.
    assert_eq!(b.max_bw, 9_000_000, "the probe's own queue");
    // A round into Cruise, the probe's packets are all acknowledged.
    while b.mode != Mode::ProbeBw(Phase::Cruise) || b.rounds_in_phase() < 1 {
        rounds(&mut b, &mut t, &mut d, 8_000_000, 1);
    }
    assert!(b.probe_base_rtt.is_none());
}

/// Under 5 % random loss an Up flight losing its usual share is not an
/// overflow, and the probe goes on.
#[test]
fn random_loss_in_a_probe_is_not_an_overflow() {
    // The loss begins outside a probe (see the test above).
    let (mut b, mut t, mut d) = cruising(8_000_000);
    lossy_rounds(&mut b, &mut t, &mut d, 8_000_000, 0.05, 10);
    until_up(&mut b, &mut t, &mut d, 8_000_000, 0.05);
    up_sample(&mut b, t, &mut d, 8_000_000, 0.055);
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Up));
    assert_eq!(b.up_growth, UpGrowth::Fast);
    // Well beyond it is one.
    up_sample(&mut b, t, &mut d, 8_000_000, 0.09);
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Down));
}

/// Random loss on the wire: every round loses its share, the RTT shows no
/// queue. ProbeBW paces at bw / (1 − loss) (the delivery rate is the link's
/// times 1 − loss) and the model keeps its rate; a round without loss among
/// them (the floor is a minimum: a queue's overflow is in some rounds only)
/// brings the pacing back to the estimate.
#[test]
fn random_loss_floor_raises_pacing_without_cutting_the_model() {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    rounds(&mut b, &mut t, &mut d, 8_000_000, 12);
    lossy_rounds(&mut b, &mut t, &mut d, 8_000_000, 0.05, 12);
    assert!(
        (b.loss_floor - 0.05).abs() < 0.005,
        "floor {}",
        b.loss_floor
    );
    assert!(b.bw_lo.is_none(), "random loss lowered the model");
    assert_eq!(b.bw(), 8_000_000);
    let want = 8_000_000.0 / 0.95;
    let cruise = b.pacing_rate.unwrap() as f64 / b.pacing_gain;
    assert!(
        (cruise - want).abs() < want * 0.02,
        "pacing {} at gain {}",
        b.pacing_rate.unwrap(),
        b.pacing_gain
    );
    lossy_rounds(&mut b, &mut t, &mut d, 8_000_000, 0.0, 2);
    assert_eq!(b.loss_floor, 0.0);
}

/// Loss in rounds whose every RTT shows a queue may be the queue's own: it is
/// not compensated (that would feed the queue), and with 5 % lost the bounds
/// back off instead.
#[test]
fn loss_with_a_standing_queue_is_not_compensated() {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    rounds(&mut b, &mut t, &mut d, 8_000_000, 12);
    let rtt = RttEstimator::new(Duration::from_millis(100));
    for _ in 0..12 {
        t += Duration::from_millis(150);
        let prior = d;
        d += 800_000;
        let mut s = sample(8_000_000, prior, d, 150, 800_000);
        s.newly_lost = 42_000;
        s.lost = 42_000;
        b.on_rate_sample(t, &s, &rtt);
    }
    assert_eq!(b.loss_floor, 0.0);
    assert!(b.bw_lo.is_some() && b.inflight_lo.is_some(), "no back-off");
    // The flight is held to what went through (1 BDP), not the 2 BDPs of
    // the window: the queue drains.
    assert!(b.window() <= 800_000, "window {}", b.window());
}

/// Startup that ended on its own overshoot (loss with a queue) has an estimate
/// a round behind its rate: ProbeBW probes at once instead of cruising a
/// cycle (6-8 rounds) below the link first.
#[test]
fn a_loss_ended_startup_probes_at_once() {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    for r in [1u64, 2, 4] {
        rounds(&mut b, &mut t, &mut d, r * 1_000_000, 1);
    }
    let rtt = RttEstimator::new(Duration::from_millis(100));
    t += Duration::from_millis(110);
    let prior = d;
    d += 400_000;
    let mut s = sample(4_000_000, prior, d, 110, 400_000);
    s.lost = 40_000;
    b.on_rate_sample(t, &s, &rtt);
    assert!(b.full_bw_reached && b.mode != Mode::Startup, "{:?}", b.mode);
    let mut modes = Vec::new();
    for _ in 0..4 {
        t += Duration::from_millis(100);
        let prior = d;
        d += 400_000;
        b.on_rate_sample(t, &sample(4_000_000, prior, d, 100, 100_000), &rtt);
        modes.push(b.mode);
    }
    assert!(
        modes.contains(&Mode::ProbeBw(Phase::Up)),
        "no probe within 4 rounds: {modes:?}"
    );
}

/// Rounds at `rate` whose every RTT is `rtt_ms` (a queue above the 100 ms
/// minimum when longer), each losing `loss` of its datagrams.
fn lossy_queued_rounds(
    b: &mut Bbr,
    t: &mut Instant,
    d: &mut u64,
    rate: u64,
    rtt_ms: u64,
    loss: f64,
    n: usize,
) {
    let rtt = RttEstimator::new(Duration::from_millis(100));
    for _ in 0..n {
        *t += Duration::from_millis(rtt_ms);
        let prior = *d;
        *d += rate / 10;
        let mut s = sample(rate, prior, *d, rtt_ms, rate / 10);
        s.newly_lost = (rate as f64 / 10.0 * loss / (1.0 - loss)) as u64;
        s.lost = s.newly_lost;
        b.on_rate_sample(*t, &s, &rtt);
    }
}

/// A controller cruising at `rate` on a path that loses `loss` at random
/// (its loss floor learnt), in the first rounds of a Cruise.
fn cruising_with_random_loss(rate: u64, loss: f64) -> (Bbr, Instant, u64) {
    let (mut b, mut t, mut d) = cruising(rate);
    lossy_rounds(&mut b, &mut t, &mut d, rate, loss, 10);
    while b.mode != Mode::ProbeBw(Phase::Cruise) || b.rounds_in_phase() > 1 {
        lossy_rounds(&mut b, &mut t, &mut d, rate, loss, 1);
    }
    (b, t, d)
}

/// A gentle probe (after an overflow) whose flight went past the estimate's
/// BDP by more than twice a visible queue's worth with no queue in its
/// samples has outgrown the bound: the pipe grew (a bottleneck that came
/// back). With a queue in its samples, or a flight within the BDP and the
/// margin, it has not.
#[test]
fn a_gentle_probe_past_the_bdp_without_a_queue_outgrew_the_pipe() {
    let (mut b, t, _) = cruising_with_random_loss(25_000_000, 0.0);
    b.up_growth = UpGrowth::Gentle { pipe: None };
    let bdp = b.bdp_multiple(1.0);
    // 2 ms (the floor) of the estimate's rate, twice.
    let excess = 2 * 25_000_000 * 2 / 1000;
    let probe = |queued: u64, flight: u64| QueuedSamples {
        samples: 1000,
        queued,
        max_tx_in_flight: flight,
    };
    b.up_samples = probe(0, bdp + excess + 10_000);
    assert!(b.gentle_probe_outgrew_the_pipe(t));
    b.up_samples = probe(50, bdp + excess + 10_000);
    assert!(!b.gentle_probe_outgrew_the_pipe(t), "a queue showed");
    b.up_samples = probe(0, bdp + excess / 2);
    assert!(!b.gentle_probe_outgrew_the_pipe(t), "within the margin");
    // Beside another flow's queue, the bound regrows in equal steps.
    b.up_samples = probe(0, bdp + excess + 10_000);
    b.another_flow.verdict(t);
    assert!(!b.gentle_probe_outgrew_the_pipe(t), "beside another flow");
    b.another_flow = AnotherFlow::Unseen;
    b.up_growth = UpGrowth::Fast;
    b.up_samples = probe(0, bdp + excess + 10_000);
    assert!(!b.gentle_probe_outgrew_the_pipe(t), "not a gentle probe");
    // At 5 % random loss the flight that delivers the BDP is a 0.95th more:
    // lost packets count in flight until their loss is found.
    let (mut b, t, _) = cruising_with_random_loss(25_000_000, 0.05);
    b.up_growth = UpGrowth::Gentle { pipe: None };
    b.up_base_bw = b.bw();
    let lossy_bdp = (b.bdp_multiple(1.0) as f64 / 0.95) as u64;
    b.up_samples = probe(0, lossy_bdp + excess / 2);
    assert!(
        !b.gentle_probe_outgrew_the_pipe(t),
        "the random loss's share"
    );
    b.up_samples = probe(0, lossy_bdp + excess + 40_000);
    assert!(b.gentle_probe_outgrew_the_pipe(t), "past the lossy flight");
}

/// A probe's overflow found as the bottleneck comes back faster: the
/// estimate the next run of Ups begins with is above the pipe the cut took,
/// and the flight the bound holds never passes that estimate's BDP. A
/// gentle probe past the cut's pipe by twice the queue-free margin with no
/// queue outgrew it (through `pmdt-wanem` at 100 ms the head's gentle Ups
/// went on for nine rounds more, and the rise from 200 Mbit/s took 2.83 s).
#[test]
fn a_gentle_probe_past_the_pipe_its_cut_took_outgrew_it() {
    let rate = 25_000_000;
    let (mut b, mut t, mut d) = cruising(rate);
    until_up(&mut b, &mut t, &mut d, rate, 0.0);
    up_sample(&mut b, t, &mut d, rate, 0.03);
    let pipe = b.bdp_multiple(1.0);
    assert_eq!(b.up_growth, UpGrowth::Gentle { pipe: Some(pipe) });
    // The run of Ups begins with the last samples' 28 MB/s (2.8 MB a round).
    b.up_base_bw = 28_000_000;
    let probe = |queued: u64, flight: u64| QueuedSamples {
        samples: 1000,
        queued,
        max_tx_in_flight: flight,
    };
    // The margin at 100 ms is 2 ms, twice: 4 % of the pipe.
    b.up_samples = probe(0, pipe * 105 / 100);
    assert!(b.gentle_probe_outgrew_the_pipe(t));
    b.up_samples = probe(0, pipe * 103 / 100);
    assert!(!b.gentle_probe_outgrew_the_pipe(t), "within the margin");
    b.up_samples = probe(50, pipe * 105 / 100);
    assert!(!b.gentle_probe_outgrew_the_pipe(t), "a queue showed");
    // The estimate below the pipe: the estimate's BDP counts.
    b.up_base_bw = 20_000_000;
    b.up_samples = probe(0, pipe * 90 / 100);
    assert!(b.gentle_probe_outgrew_the_pipe(t));
}

/// A gentle Up whose flight went past the BDP by twice the queue-free
/// margin with no queue turns fast at the next round's start, in an Up of
/// its own, not at the end of its eight rounds: after a bound an overflow
/// set, a bottleneck that came back from 200 Mbit/s to 1 Gbit/s at 100 ms
/// waited 0.8 s for the gentle Up to end.
#[test]
fn a_gentle_probe_that_outgrew_the_pipe_turns_fast_at_the_next_round() {
    let rate = 25_000_000;
    let (mut b, mut t, mut d) = cruising(rate);
    until_up(&mut b, &mut t, &mut d, rate, 0.0);
    b.up_growth = UpGrowth::Gentle { pipe: None };
    let rtt = RttEstimator::new(Duration::from_millis(100));
    // 2 ms (the floor) of the rate, twice, is 100 kB: 150 kB past the BDP,
    // at the minimum RTT.
    let flight = b.bdp_multiple(1.0) + 150_000;
    let up_round = b.round_count;
    for _ in 0..2 {
        t += Duration::from_millis(100);
        let prior = d;
        d += rate / 10;
        b.on_rate_sample(t, &sample(rate, prior, d, 100, flight), &rtt);
    }
    assert_eq!(b.up_growth, UpGrowth::Fast);
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Up));
    assert_eq!(b.phase_start_round, up_round + 2, "a fresh Up");
}

/// A controller cruising at `rate` beside another flow: 10 ms of queue
/// stood through its check (another flow's), lossless.
fn sharing_a_queue(rate: u64) -> (Bbr, Instant, u64) {
    let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.0);
    for _ in 0..5 {
        if !b.shares_the_bottleneck(t) {
            lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.0, 1);
        }
    }
    assert!(b.shares_the_bottleneck(t));
    (b, t, d)
}

/// A queue that stands through Cruise rounds and overflows (more loss than
/// the path's random loss explains, but not a flow's own overshoot's) is
/// the flows' together: `inflight_hi` is cut to [`BETA`] of the round's
/// delivery. Random loss with a queue does not cut, nor does the overflow's
/// loss without a standing queue.
#[test]
fn a_shared_queues_overflow_cuts_inflight_hi_and_random_loss_does_not() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.01);
    assert!(
        (b.loss_floor - 0.01).abs() < 0.001,
        "floor {}",
        b.loss_floor
    );
    let hi0 = b.inflight_hi;
    // 3 % lost with no queue: random loss, however high.
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.03, 3);
    assert_eq!(b.inflight_hi, hi0, "cut without a queue");
    // 10 ms of queue (under the 25 % that makes loss congestion) and the
    // path's 1 % random loss.
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.01, 4);
    assert_eq!(b.inflight_hi, hi0, "cut for random loss");
    assert!(b.shared_cut_round.is_none());
    // 3 % lost with the queue: the shared queue overflows.
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.03, 2);
    let hi = b.inflight_hi.expect("no cut to the shared queue");
    assert_eq!(hi, (800_000.0 * BETA) as u64);
    assert!(b.bw_lo.is_none(), "taken for this flow's congestion");
    assert!(b.up_growth.is_gentle());
    // Not again in the next round.
    let cut_round = b.shared_cut_round;
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.03, 1);
    assert_eq!(b.shared_cut_round, cut_round, "cut in two rounds in a row");
}

/// A CUBIC flow's slow start overflowing a shared queue costs each flow
/// 6-19 % of a round: cut to at once, as to any shared overflow. A round
/// that loses 25 %, over the high-loss threshold (20 %), is this flow's own
/// congestion, which the short-term bounds answer instead.
#[test]
fn a_joiners_overflow_is_cut_to_and_an_overshoot_is_not() {
    let rate = 8_000_000;
    for loss in [0.07, 0.12, 0.17] {
        let (mut b, mut t, mut d) = sharing_a_queue(rate);
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, loss, 2);
        assert!(
            b.shared_cut_round.is_some(),
            "no cut to a joiner's overflow losing {loss}"
        );
        assert!(b.bw_lo.is_none(), "taken for its own congestion at {loss}");
    }
    let (mut b, mut t, mut d) = sharing_a_queue(rate);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.25, 2);
    assert!(b.shared_cut_round.is_none(), "cut for its own overshoot");
    assert!(b.bw_lo.is_some(), "its own congestion not answered");
}

/// A flow that takes itself to be alone (no check found another flow's
/// queue) and cruises at its estimate takes a round that overflows a queue
/// standing through it for another flow's growth (a CUBIC flow's slow start
/// joining it): another flow shares the bottleneck, and the shared cut
/// follows in the same round; also when the round lost 17 % (a slow start's
/// overflow). Not on a path whose rounds lose more than a loss-based flow
/// can live with, nor for a round that loses as much as the flow's own
/// overshoot (over the high-loss threshold), nor for an overflow its
/// sender's catch-ups explain: a queue no deeper than twice its recent
/// absence, and a loss no larger than the absence's worth of its rate.
#[test]
fn an_overflow_at_its_own_estimate_says_another_flow() {
    let rate = 8_000_000;
    let alone = |loss: f64| {
        let (mut b, mut t, mut d) = cruising_with_random_loss(rate, loss);
        lossy_rounds(&mut b, &mut t, &mut d, rate, loss, 2);
        assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
        assert!(!b.shares_the_bottleneck(t));
        (b, t, d)
    };
    // 10 ms of queue, 7 % lost on a lossless path.
    let (mut b, mut t, mut d) = alone(0.0);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.07, 2);
    assert!(b.shares_the_bottleneck(t), "no other flow seen");
    assert!(
        b.shared_cut_round.is_some(),
        "no cut to the shared overflow"
    );
    // A slow start's overflow.
    let (mut b, mut t, mut d) = alone(0.0);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.17, 2);
    assert!(b.shares_the_bottleneck(t), "a slow start's overflow");
    assert!(b.shared_cut_round.is_some(), "no cut to the slow start's");
    // The flow's own overshoot's loss.
    let (mut b, mut t, mut d) = alone(0.0);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.25, 2);
    assert!(!b.shares_the_bottleneck(t), "its own overshoot");
    // A path that loses 1 % at random.
    let (mut b, mut t, mut d) = alone(0.01);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.07, 2);
    assert!(!b.shares_the_bottleneck(t), "on a lossy path");
    // A queue twice a recent 5 ms absence of the sender's (40 kB of its
    // rate): a round that loses 25 kB (3 %) is its catch-ups' overflow, one
    // that loses 60 kB (7 %) is not.
    let after_absence = |loss: f64| {
        let (mut b, mut t, mut d) = alone(0.0);
        let mut back = sample(rate, d, d + 1000, 100, rate / 10);
        back.sent_catching_up = Some(Duration::from_millis(5));
        t += Duration::from_millis(1);
        d += 1000;
        b.on_rate_sample(t, &back, &RttEstimator::new(Duration::from_millis(100)));
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, loss, 2);
        b.shares_the_bottleneck(t)
    };
    assert!(!after_absence(0.03), "its own catch-ups' overflow");
    assert!(after_absence(0.07), "more than its catch-ups overflow");
}

/// On a path that loses about 0.1 % at random, rounds of 800 datagrams lose
/// none to a few: the floor (the rounds' least loss) reads zero, and a round
/// of the path's random loss is not a queue's overflow. Measured against the
/// floor, a flow alone took two datagrams lost in a round with a few
/// milliseconds of its own queue for another flow, cut `inflight_hi` to 0.7
/// of the round's delivery and kept 66-88 % of the link for the rest of the
/// run (`pmdt-wanem`, 100 Mbit/s × 200 ms, 0.1 % loss). A slow start's
/// overflow beside it still says another flow.
#[test]
fn random_loss_on_a_path_whose_rounds_may_lose_none_is_no_overflow() {
    let rate = 8_000_000;
    // The loss that takes `n` datagrams of a round.
    let datagrams = |n: u64| {
        let share = n as f64 * 1000.0 / (rate / 10) as f64;
        share / (1.0 + share)
    };
    let pattern = [1, 0, 2, 1, 1, 0, 1, 2];
    let alone = || {
        let (mut b, mut t, mut d) = cruising(rate);
        let mut round = 0;
        let mut lossy = |b: &mut Bbr, t: &mut Instant, d: &mut u64| {
            lossy_rounds(b, t, d, rate, datagrams(pattern[round % pattern.len()]), 1);
            round += 1;
        };
        for _ in 0..2 * LOSS_FLOOR_ROUNDS {
            lossy(&mut b, &mut t, &mut d);
        }
        while b.mode != Mode::ProbeBw(Phase::Cruise) || b.rounds_in_phase() != 2 {
            lossy(&mut b, &mut t, &mut d);
        }
        assert_eq!(b.loss_floor, 0.0);
        assert!(!b.shares_the_bottleneck(t));
        (b, t, d)
    };
    // 10 ms of queue, two datagrams lost in each of two rounds.
    let (mut b, mut t, mut d) = alone();
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, datagrams(2), 2);
    assert!(
        !b.shares_the_bottleneck(t),
        "random loss taken for an overflow"
    );
    assert!(b.shared_cut_round.is_none(), "cut to random loss");
    // A slow start's overflow: 60 datagrams.
    let (mut b, mut t, mut d) = alone();
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, datagrams(60), 2);
    assert!(b.shares_the_bottleneck(t), "a slow start's overflow");
}

/// One round at a 200 ms minimum RTT delivering `rate`, whose every RTT
/// shows `queue` and whose flight holds it, losing `lost_share`.
fn round_at_200ms(
    b: &mut Bbr,
    t: &mut Instant,
    d: &mut u64,
    rate: u64,
    queue: Duration,
    lost_share: f64,
) {
    let min = Duration::from_millis(200);
    let rtt = min + queue;
    *t += rtt;
    let prior = *d;
    let delivered = rate / 5;
    *d += delivered;
    let flight = (rate as f64 * rtt.as_secs_f64()) as u64;
    let mut s = sample(rate, prior, *d, 200, flight);
    s.delivered = delivered;
    s.newly_acked = delivered;
    s.interval = rtt;
    s.rtt = rtt;
    s.standing_rtt = rtt;
    s.raw_rtt = rtt;
    s.newly_lost = (delivered as f64 * lost_share / (1.0 - lost_share)) as u64;
    s.lost = s.newly_lost;
    b.on_rate_sample(*t, &s, &RttEstimator::new(min));
}

/// A flow alone at `rate` × 200 ms without loss or queue, past its loss
/// floor's rounds, at the start of a Cruise.
fn cruising_alone_at_200ms(rate: u64) -> (Bbr, Instant, u64) {
    let (mut b, mut t, mut d) = (Bbr::new(1000), Instant::now(), 0);
    for _ in 0..2 * LOSS_FLOOR_ROUNDS + 12 {
        round_at_200ms(&mut b, &mut t, &mut d, rate, Duration::ZERO, 0.0);
    }
    while b.mode != Mode::ProbeBw(Phase::Cruise) {
        round_at_200ms(&mut b, &mut t, &mut d, rate, Duration::ZERO, 0.0);
    }
    (b, t, d)
}

/// A flow alone at 1 Gbit/s × 200 ms, its estimate a little above the
/// link's rate, builds its own queue by about a millisecond a round. Here a
/// round whose RTTs show 7 ms overflows the buffer (pmdt-wanem's 1 MiB,
/// 8.4 ms, full behind them: a modelled figure; session 96's run overflowed
/// with 5.8 ms showing, its queue growing faster). The check of whose queue
/// it is must come before: at 5 % of this RTT (10 ms) none came, the
/// overflow was taken for another flow's, and `inflight_hi` was cut under
/// the BDP (65.5 % of the link over that run). With 5 ms the least worth
/// checking, the check comes at 5-6 ms (the RTT's queue and the flight's),
/// the queue drains under it and is this flow's own, and no round
/// overflows.
#[test]
fn at_a_long_round_trip_a_flow_alone_checks_its_queue_before_the_buffer_overflows() {
    let rate = 125_000_000;
    let ms = Duration::from_millis;
    let (mut b, mut t, mut d) = cruising_alone_at_200ms(rate);
    assert!(!b.shares_the_bottleneck(t));
    // The queue each round's RTTs show: a millisecond more than the round
    // before's, less what the round's packets paced below the estimate
    // drained (one sample a round: it counts in the round after, whose
    // RTTs are those of this round's packets).
    let mut queue = Duration::ZERO;
    let mut checked_at = None;
    while b.mode == Mode::ProbeBw(Phase::Cruise) {
        let gain = b.queue_owner.pacing_gain(b.round_count);
        queue = (queue + ms(1)).saturating_sub(ms(200).mul_f64(1.0 - gain));
        let lost = if queue >= ms(7) { 0.006 } else { 0.0 };
        round_at_200ms(&mut b, &mut t, &mut d, rate, queue, lost);
        if checked_at.is_none() && b.queue_owner.checking().is_some() {
            checked_at = Some(queue);
        }
    }
    assert!(
        !b.shares_the_bottleneck(t),
        "its own queue's overflow taken for another flow's"
    );
    let checked_at = checked_at.expect("the queue was never checked");
    assert!(checked_at <= ms(6), "checked at {checked_at:?}");
    let found = b.model().queue_verdicts;
    assert!(found.own >= 1 && found.another == 0, "{found:?}");
    assert!(b.shared_cut_round.is_none(), "cut to its own queue");
}

/// A flow alone at 1 Gbit/s × 200 ms in Cruise, its queue growing a
/// millisecond a round (as above), up to the round that starts a check of
/// whose queue stands: that round's sample carries the loss of the check's
/// drain round (one sample a round, counted in the round after), whose RTTs
/// are still those of packets sent before the check, with the buffer full
/// behind them: `lost_share` of the round.
fn overflow_under_a_check_at_200ms(lost_share: f64) -> (Bbr, Instant, u64, Duration) {
    let rate = 125_000_000;
    let ms = Duration::from_millis;
    let (mut b, mut t, mut d) = cruising_alone_at_200ms(rate);
    let mut queue = Duration::ZERO;
    loop {
        queue += ms(1);
        assert!(queue < ms(20), "no check: {:?}", b.queue_owner);
        let lost = if queue >= ms(6) { lost_share } else { 0.0 };
        round_at_200ms(&mut b, &mut t, &mut d, rate, queue, lost);
        if b.queue_owner.checking().is_some() {
            assert!(lost > 0.0, "checked at {queue:?}, before the overflow");
            assert!(!b.shares_the_bottleneck(t));
            return (b, t, d, queue);
        }
    }
}

/// Through `pmdt-wanem` at 1 Gbit/s × 200 ms, 11 of 34 checks started with
/// 7.1-8.1 ms of the flow's own queue standing, against an 8.4 ms buffer:
/// the buffer can overflow in the check's drain round. An overflow that
/// loses a share of the round a flow alone's own queue can (here 0.6 %)
/// waits for the check's verdict, which finds the flow's own queue: no
/// "another flow" verdict, no cut. Taken for another flow's, such an
/// overflow cut `inflight_hi` under the BDP (session 96: 65.5 % of the link).
#[test]
fn at_a_long_round_trip_an_overflow_under_a_check_waits_for_its_verdict() {
    let rate = 125_000_000;
    let (mut b, mut t, mut d, queue) = overflow_under_a_check_at_200ms(0.006);
    // The check drained the queue; it builds again, and overflows again
    // under the next check.
    let mut queue = queue;
    while b.mode == Mode::ProbeBw(Phase::Cruise) {
        let gain = b.queue_owner.pacing_gain(b.round_count);
        queue = (queue + Duration::from_millis(1))
            .saturating_sub(Duration::from_millis(200).mul_f64(1.0 - gain));
        let lost = if queue >= Duration::from_millis(6) {
            0.006
        } else {
            0.0
        };
        round_at_200ms(&mut b, &mut t, &mut d, rate, queue, lost);
        assert!(
            !b.shares_the_bottleneck(t),
            "its own queue's overflow under the check taken for another flow's"
        );
    }
    let found = b.model().queue_verdicts;
    assert!(
        found.own >= 2 && found.another == 0 && found.none == 0,
        "{found:?}"
    );
    assert!(b.shared_cut_round.is_none(), "cut to its own queue");
}

/// An overflow that waited for a check which came to no verdict (here the
/// delivery fell under half of what the check paced) is taken for another
/// flow's growth, as it is with no check under way.
#[test]
fn an_overflow_under_a_check_without_a_verdict_is_another_flows() {
    let rate = 125_000_000;
    let (mut b, mut t, mut d, queue) = overflow_under_a_check_at_200ms(0.006);
    // The drain round ends: its overflow waits.
    round_at_200ms(&mut b, &mut t, &mut d, rate / 4, queue, 0.0);
    assert!(!b.shares_the_bottleneck(t), "the overflow did not wait");
    round_at_200ms(&mut b, &mut t, &mut d, rate / 4, queue, 0.0);
    assert!(b.queue_owner.checking().is_none(), "{:?}", b.queue_owner);
    assert_eq!(b.model().queue_verdicts.none, 1);
    assert!(b.shares_the_bottleneck(t), "the overflow was forgotten");
}

/// A loss-based flow's slow start joining costs a round 6-19 %: more than a
/// flow alone's own queue can overflow. Under a check, such an overflow is
/// taken for another flow's at once: the check would miss that flow, which
/// backs off and leaves the queue drained under it.
#[test]
fn a_slow_starts_overflow_under_a_check_does_not_wait() {
    let rate = 125_000_000;
    let (mut b, mut t, mut d, _) = overflow_under_a_check_at_200ms(0.08);
    round_at_200ms(&mut b, &mut t, &mut d, rate, Duration::from_millis(1), 0.0);
    assert!(b.shares_the_bottleneck(t), "a slow start's overflow waited");
    // The same overflow losing what a flow alone's own queue can: waits.
    let (mut b, mut t, mut d, _) = overflow_under_a_check_at_200ms(0.006);
    round_at_200ms(&mut b, &mut t, &mut d, rate, Duration::from_millis(1), 0.0);
    assert!(!b.shares_the_bottleneck(t));
}

/// Loss in a round whose queue is far from the deepest seen lately is not
/// a full queue's overflow: one flow's own few milliseconds of queue
/// beside random loss (100 Mbit/s × 100 ms at 1 %: the floor, a minimum,
/// sits below the loss rate, and rounds with 2 ms of queue were cut).
#[test]
fn loss_with_a_queue_far_from_the_deepest_does_not_cut() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.0);
    // 60 ms of queue a moment ago (a probe, Startup), no loss.
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 160, 0.0, 1);
    // 10 ms of queue, 3 % lost: the loss is not the queue's.
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.03, 4);
    assert!(
        b.shared_cut_round.is_none(),
        "cut with a sixth of the queue"
    );
}

/// How deep the queue gets is what a round's every RTT showed, not a single
/// late sample: through `pmdt-wanem` such samples put the deepest queue at
/// 13.8-16 ms behind an 8.4 ms buffer, and most rounds that overflowed it
/// were taken for a shallow queue's and not cut to.
#[test]
fn a_single_late_sample_does_not_make_an_overflow_shallow() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = sharing_a_queue(rate);
    // 10 ms of queue, and one sample of the round held up 30 ms more.
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.0, 1);
    t += Duration::from_millis(5);
    let mut late = sample(rate, d - rate / 20, d, 140, rate / 10);
    late.newly_acked = 0;
    b.on_rate_sample(t, &late, &RttEstimator::new(Duration::from_millis(100)));
    // The full queue overflows with 7 ms standing: a shared overflow.
    assert!(b.shared_cut_round.is_none());
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 107, 0.03, 2);
    assert!(
        b.shared_cut_round.is_some(),
        "no cut: deepest {:?}",
        b.deepest_queue()
    );
}

/// A flow that has not found another flow's queue lately does not cut to
/// an overflow: on a lossy path, the queue a probe left and the probe's
/// own losses looked like a shared queue's overflow.
#[test]
fn a_flow_alone_does_not_cut_to_an_overflow() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.01);
    assert!(!b.shares_the_bottleneck(t));
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.03, 2);
    assert!(b.shared_cut_round.is_none(), "cut alone");
}

/// Within [`OWN_CONGESTION_MEMORY`] of this flow's own congestion (loss
/// above 2 % with a queue the RTT shows), an overflowing queue is not cut
/// to: the short-term bounds answer it.
#[test]
fn no_shared_cut_soon_after_own_congestion() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.0);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 130, 0.05, 1);
    assert!(b.congested_at.is_some(), "no congestion");
    // 20 ms of queue (two thirds of the deepest), 3 % lost: a shared
    // queue's overflow, but this flow's congestion was 100 ms ago.
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 120, 0.03, 3);
    assert!(b.shared_cut_round.is_none(), "cut within 4 s");
}

/// Beside other flows (a check found another flow's queue), loss over the
/// threshold may be the shared queue's overflow (a joiner's Startup) rather
/// than this flow's overshoot: once a drain check finds the queue standing
/// through it, the own-congestion memory ends and the shared cuts resume
/// (through `pmdt-wanem`, flows joining 1 Gbit/s × 40 ms all took one such
/// overflow for congestion of their own, and none cut or climbed for 4 s).
#[test]
fn beside_others_a_queue_that_stands_through_the_drain_ends_own_congestion() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = sharing_a_queue(rate);
    // The next probe meets the overflow: 5 % lost with 30 ms of queue,
    // over the threshold.
    while b.mode != Mode::ProbeBw(Phase::Up) {
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.0, 1);
    }
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 130, 0.05, 1);
    let congested = t;
    assert!(b.congested_lately(t), "no congestion");
    // The queue stands (20 ms) through the rounds after it.
    while b.congested_lately(t) && t.duration_since(congested) < Duration::from_secs(2) {
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 120, 0.0, 1);
    }
    assert!(b.model().queue_verdicts.drained >= 1, "{:?}", b.model());
    assert!(
        !b.congested_lately(t),
        "still congested {:?} on",
        t.duration_since(congested)
    );
    // The overflow that follows is cut to, well within 4 s.
    let cut_before = b.shared_cut_round;
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 120, 0.03, 2);
    assert_ne!(b.shared_cut_round, cut_before, "no cut to the overflow");
}

/// After a cut to a shared queue, Cruise regrows `inflight_hi` by 1, 2, 4
/// … packets a round while it is what limits the flight: the same steps
/// for every flow, whatever its share.
#[test]
fn after_a_shared_cut_cruise_regrows_inflight_hi_in_equal_steps() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = sharing_a_queue(rate);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.03, 2);
    let hi0 = b.inflight_hi.expect("no cut");
    let rtt = RttEstimator::new(Duration::from_millis(100));
    let mut his = vec![hi0];
    // Rounds the flight reaches the bound in, the queue still standing
    // (the other flows keep it: the memory of the check's verdict holds
    // the probe off).
    for _ in 0..7 {
        t += Duration::from_millis(110);
        let prior = d;
        d += 560_000;
        let flight = b.inflight_hi.unwrap();
        b.on_rate_sample(t, &sample(5_600_000, prior, d, 110, flight), &rtt);
        // Later in the round the flight reaches the bound it set.
        let mut s = sample(
            5_600_000,
            d - 280_000,
            d + 1000,
            110,
            b.inflight_hi.unwrap(),
        );
        s.newly_acked = 1000;
        d += 1000;
        b.on_rate_sample(t, &s, &rtt);
        his.push(b.inflight_hi.unwrap());
    }
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
    // Doubling up to 32 packets a round.
    let steps: Vec<u64> = his.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(
        steps,
        [1000, 2000, 4000, 8000, 16_000, 32_000, 32_000],
        "{his:?}"
    );
    // Flights below the bound: not what limits, no growth.
    let mut below = || {
        t += Duration::from_millis(100);
        let prior = d;
        d += 400_000;
        b.on_rate_sample(t, &sample(4_000_000, prior, d, 100, 400_000), &rtt);
        b.inflight_hi.unwrap()
    };
    let hi = below();
    assert_eq!((below(), below()), (hi, hi));
}

/// Beside other flows, Cruise paces above its estimate by 1, 2, 4 … up to
/// 128 packets a round (the same steps for every flow, whatever its share),
/// a queue standing or not, and from the first step again after a round
/// that lost more than random loss explains. Alone it paces at its
/// estimate.
#[test]
fn beside_other_flows_cruise_climbs_in_equal_doubling_steps() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.0);
    // Alone, with a queue or without: no climb.
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.0, 2);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.0, 1);
    assert!(!b.shares_the_bottleneck(t));
    assert_eq!(b.shared_climb_step, None);
    assert_eq!(b.pacing_rate, Some(b.bw()));
    // A queue that stands through the check: another flow's.
    for _ in 0..5 {
        if !b.shares_the_bottleneck(t) {
            lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.0, 1);
        }
    }
    assert!(b.shares_the_bottleneck(t));
    // Each round (no queue, then a queue) the step doubles, up to 128
    // packets; the pacing rate is the estimate plus a step per min RTT.
    let climb = |b: &Bbr| {
        assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
        let step = b.shared_climb_step.expect("no climb beside another flow");
        assert_eq!(b.pacing_rate, Some(b.bw() + step * 10), "100 ms min RTT");
        step / 1000
    };
    // The round that found the queue another flow's took the first step.
    let mut steps = vec![climb(&b)];
    for queued_ms in [100, 100, 100, 100, 110, 110, 110, 110] {
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, queued_ms, 0.0, 1);
        steps.push(climb(&b));
    }
    assert_eq!(steps, [1, 2, 4, 8, 16, 32, 64, 128, 128]);
    // The shared queue overflows (a round's loss is judged at its end): the
    // cut starts the steps over, and so does the next round's loss.
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.03, 2);
    assert!(b.shared_cut_round.is_some(), "no cut to the shared queue");
    assert_eq!(climb(&b), 1);
    let mut steps = Vec::new();
    for _ in 0..3 {
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.0, 1);
        steps.push(climb(&b));
    }
    assert_eq!(steps, [1, 2, 4]);
    // A round that loses 10 % (a joiner's slow start): cut to, and the steps
    // start over.
    let cut = b.shared_cut_round;
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.10, 1);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.0, 1);
    assert!(b.shared_cut_round > cut, "no cut to a joiner's overflow");
    assert_eq!(climb(&b), 1);
}

/// Startup's early rounds, whose queue does not end Startup while the
/// estimate still doubles, count from the first round the application
/// did not hold back: a connection whose application wrote little at
/// first still has them.
#[test]
fn startup_early_rounds_count_from_the_first_round_not_held_back() {
    let mut b = Bbr::new(1000);
    let mut t = Instant::now();
    let mut d = 0;
    let rtt = RttEstimator::new(Duration::from_millis(100));
    for _ in 0..4 {
        t += Duration::from_millis(100);
        let prior = d;
        d += 100_000;
        let mut s = sample(1_000_000, prior, d, 100, 100_000);
        s.is_app_limited = true;
        b.on_rate_sample(t, &s, &rtt);
    }
    for r in [2u64, 4, 8] {
        t += Duration::from_millis(110);
        let prior = d;
        d += r * 100_000;
        b.on_rate_sample(t, &sample(r * 1_000_000, prior, d, 110, r * 100_000), &rtt);
        assert_eq!(b.mode, Mode::Startup, "{r} MB/s");
    }
}

/// A bottleneck that falls under the flow's rate (rounds that lose over a
/// third of their datagrams) makes a single verdict of another flow's queue
/// from before it forgotten: the probes that find the new path's rate do
/// not wait for a flow the check may have imagined (through `pmdt-wanem`,
/// the processes' scheduling held a flow alone's RTT up through one check
/// 2 s before its link fell from 1 Gbit/s to 200 Mbit/s, and the fall was
/// found 3.16 s after it). A verdict a second check confirmed is kept.
#[test]
fn a_path_that_falls_under_the_rate_forgets_a_single_verdict() {
    for verdicts in [1, 2] {
        let rate = 8_000_000;
        let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
        for _ in 0..verdicts {
            while b.mode != Mode::ProbeBw(Phase::Cruise) {
                rounds(&mut b, &mut t, &mut d, rate, 1);
            }
            rounds_until_probe(&mut b, &mut t, &mut d, rate, 107, 107);
        }
        assert!(
            b.shares_the_bottleneck(t),
            "{verdicts}: {:?}",
            b.another_flow
        );
        // The link falls to a fifth: three rounds lose 60 % of what they send.
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate / 5, 140, 0.6, 3);
        if verdicts == 1 {
            assert_eq!(b.another_flow, AnotherFlow::Unseen);
        } else {
            assert!(b.another_flow.confirmed(t), "{:?}", b.another_flow);
        }
    }
    // Rounds that lose a probe's overshoot (12 %) forget nothing.
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
    rounds_until_probe(&mut b, &mut t, &mut d, rate, 107, 107);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 107, 0.12, 3);
    assert!(b.shares_the_bottleneck(t), "{:?}", b.another_flow);
}

/// A probe of a flow alone whose estimate fell under half of its recent
/// peak (a bottleneck that slowed down, and may come back) escalates its
/// gain at its first queue-free round that finds more, not only once the
/// run of Ups has grown half as much again: the path carried the peak a
/// moment ago. Beside another flow's queue it escalates as before. (In the
/// simulator the rise from 200 Mbit/s back to 1 Gbit/s is found in 1.0 s
/// at 100 ms instead of 1.2, in 0.4 s at 40 ms instead of 0.5.)
#[test]
fn a_probe_far_below_a_recent_peak_escalates_at_once() {
    /// The gains of six Up rounds on a path that delivers what each sends,
    /// each round's flight enough to end it (twice what it delivers).
    fn full_flight_up_gains(b: &mut Bbr, t: &mut Instant, d: &mut u64) -> Vec<f64> {
        let mut gains = Vec::new();
        for _ in 0..6 {
            assert_eq!(b.mode, Mode::ProbeBw(Phase::Up));
            gains.push(b.pacing_gain);
            let rate = b.pacing_rate.unwrap();
            round_with_flight(b, t, d, rate, 100, rate / 5);
        }
        gains
    }
    fn gains_after_a_fall(another_flow: bool) -> Vec<f64> {
        let rate = 8_000_000;
        let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
        rounds_until_probe(&mut b, &mut t, &mut d, rate, 100, 100);
        rounds(&mut b, &mut t, &mut d, rate / 5, 2 * BW_FILTER_ROUNDS);
        assert!(b.recent_peak.far_above(t, b.max_bw), "{:?}", b.recent_peak);
        if another_flow {
            b.another_flow.verdict(t);
        }
        until_up(&mut b, &mut t, &mut d, rate / 5, 0.0);
        full_flight_up_gains(&mut b, &mut t, &mut d)
    }
    let (mut b, mut t, mut d) = cruising(8_000_000);
    until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
    let at_the_peak = full_flight_up_gains(&mut b, &mut t, &mut d);
    assert_eq!(at_the_peak, [1.2, 1.2, 1.2, 1.5, 1.5, 1.5]);
    assert_eq!(gains_after_a_fall(true), at_the_peak);
    assert_eq!(gains_after_a_fall(false), [1.2, 1.5, 1.5, 1.5, 1.5, 1.5]);
}

/// The per-round trace line's `average`: what the round acknowledged over
/// its length, from its first sample.
#[test]
fn a_rounds_average_is_what_it_acknowledged_over_its_length() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = cruising(rate);
    // A round of one sample, acknowledging a tenth of a second at `rate`.
    queued_rounds(&mut b, &mut t, &mut d, rate, 100, 1);
    assert_eq!(b.round_average(t), 0, "no time has passed");
    assert_eq!(b.round_average(t + Duration::from_millis(100)), rate);
    assert_eq!(b.round_average(t + Duration::from_millis(200)), rate / 2);
    assert_eq!(Bbr::new(1000).round_average(t), 0, "no round yet");
}

/// A one-round ProbeBW Up never sees what it found: its flight is
/// acknowledged in the round after it. A flow alone far below its recent
/// peak whose Up showed no queue and whose estimate grew by the time the
/// next probe came starts that probe escalated, its run going on until
/// its own queue or loss (through `pmdt-wanem`, such a flow grew 1.2× per
/// probe cycle for 1.1 s after its bottleneck came back from 200 Mbit/s to
/// 1 Gbit/s at 100 ms). Beside another flow, or near its peak, the next
/// probe starts at 1.2 as before.
#[test]
fn a_probe_that_found_more_after_it_ended_lets_the_next_go_on_escalated() {
    fn next_probe(fallen: bool, another_flow: bool) -> (f64, bool) {
        let rate = 8_000_000;
        let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
        rounds_until_probe(&mut b, &mut t, &mut d, rate, 100, 100);
        let now_rate = if fallen { rate / 5 } else { rate };
        rounds(&mut b, &mut t, &mut d, now_rate, 2 * BW_FILTER_ROUNDS);
        if another_flow {
            b.another_flow.verdict(t);
        }
        until_up(&mut b, &mut t, &mut d, now_rate, 0.0);
        assert_eq!(b.pacing_gain, PROBE_UP_PACING_GAIN);
        // One round of Up with a full flight, queue-free; the estimate has
        // not grown yet.
        round_with_flight(
            &mut b,
            &mut t,
            &mut d,
            now_rate,
            100,
            now_rate / 10 * 13 / 10,
        );
        assert_ne!(b.mode, Mode::ProbeBw(Phase::Up), "the Up went on");
        // What it found shows after it.
        for _ in 0..20 {
            rounds(&mut b, &mut t, &mut d, now_rate * 12 / 10, 1);
            if b.mode == Mode::ProbeBw(Phase::Up) {
                return (b.pacing_gain, b.escalated_probe);
            }
        }
        panic!("no probe after it: {:?}", b.mode);
    }
    assert_eq!(next_probe(true, false), (1.5, true));
    assert_eq!(next_probe(true, true), (PROBE_UP_PACING_GAIN, false));
    assert_eq!(next_probe(false, false), (PROBE_UP_PACING_GAIN, false));
}

/// A packet sent to make up for the sender's absence from its core saw the
/// queue that absence drained: beside sibling flows (which stopped with it)
/// its RTT is not the round's smallest; for a flow alone it is.
#[test]
fn a_catch_up_dip_counts_towards_the_round_only_for_a_flow_alone() {
    let rate = 8_000_000;
    for siblings in [0, 3] {
        let (mut b, mut t, mut d) = cruising(rate);
        b.on_path_siblings(siblings);
        let rtt = RttEstimator::new(Duration::from_millis(100));
        // A round begins with a sample showing 40 ms of queue.
        t += Duration::from_millis(140);
        let prior = d;
        d += rate / 10;
        b.on_rate_sample(t, &sample(rate, prior, d, 140, rate / 10), &rtt);
        assert_eq!(b.round_min_rtt, Some(Duration::from_millis(140)));
        // In the same round, a packet sent catching up saw 1 ms.
        t += Duration::from_millis(1);
        let mut dip = sample(rate, prior, d + 1000, 101, rate / 10);
        dip.sent_catching_up = Some(Duration::from_millis(5));
        b.on_rate_sample(t, &dip, &rtt);
        let expected = if siblings == 0 { 101 } else { 140 };
        assert_eq!(
            b.round_min_rtt,
            Some(Duration::from_millis(expected)),
            "siblings {siblings}"
        );
    }
}

/// A flow whose estimate collapsed still paces its window's floor per round
/// trip (4 datagrams per smoothed RTT), not the estimate's few bytes a second.
#[test]
fn a_collapsed_estimate_paces_at_least_the_windows_floor_per_rtt() {
    let (b, _, _) = cruising(6_000);
    assert!(
        b.bw() <= 7_000,
        "the estimate is the tiny delivery rate: {}",
        b.bw()
    );
    // 4 × 1000-byte datagrams per 100 ms smoothed RTT.
    assert!(
        b.pacing_rate.unwrap() >= 40_000,
        "paced at {:?}",
        b.pacing_rate
    );
    // A healthy estimate is paced as before, far above the floor.
    let (b, _, _) = cruising(10_000_000);
    assert!(b.pacing_rate.unwrap() >= 9_000_000 && b.pacing_rate.unwrap() <= 11_000_000);
}

/// Beside other flows ProbeBW Up's gain queues half the deepest queue seen
/// lately in a round (10 ms of queue at 100 ms: 1.05), and a probe at that
/// gain finds more at 3/4 of it (3.75 %); alone Up probes at 1.2 and finds
/// more at 15 %.
#[test]
fn beside_other_flows_up_queues_half_the_deepest_queue() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.0);
    // Alone: the next probe at the base gain.
    let mut rounds = 0;
    while b.mode != Mode::ProbeBw(Phase::Up) {
        lossy_rounds(&mut b, &mut t, &mut d, rate, 0.0, 1);
        rounds += 1;
        assert!(rounds < 200, "no probe alone");
    }
    assert_eq!(b.pacing_gain, PROBE_UP_PACING_GAIN);
    assert!((b.found_more(t) - PROBE_FOUND_MORE).abs() < 1e-9);
    // A queue of 10 ms that stands through the checks: another flow's.
    let mut rounds = 0;
    while !b.shares_the_bottleneck(t) {
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.0, 1);
        rounds += 1;
        assert!(rounds < 200, "no check found the other flow");
    }
    assert_eq!(b.deepest_queue(), Duration::from_millis(10));
    // The next probe beside it.
    let mut rounds = 0;
    while b.mode != Mode::ProbeBw(Phase::Up) {
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.0, 1);
        rounds += 1;
        assert!(rounds < 200, "no probe beside the other flow");
    }
    assert!(b.shares_the_bottleneck(t));
    assert!(
        (b.pacing_gain - 1.05).abs() < 1e-9,
        "gain {}",
        b.pacing_gain
    );
    assert!((b.found_more(t) - 1.0375).abs() < 1e-9);
    // The gain stays within its bounds whatever the queue.
    b.queue_depth = [Duration::from_millis(1), Duration::ZERO];
    assert_eq!(b.up_gain_beside_others(), UP_GAIN_BESIDE_OTHERS_MIN);
    b.queue_depth = [Duration::from_millis(80), Duration::ZERO];
    assert_eq!(b.up_gain_beside_others(), PROBE_UP_PACING_GAIN);
    b.queue_depth = [Duration::ZERO; 2];
    assert_eq!(b.up_gain_beside_others(), PROBE_UP_PACING_GAIN);
}

/// Beside other flows, a Cruise round that loses 5 % behind a queue deeper
/// than a quarter of the minimum RTT (where alone 2 % is congestion of the
/// flow's own) is the shared queue's overflow: no short-term bounds, no
/// pause in the climb, and the round's end cuts `inflight_hi`. A flow alone
/// answers the same round as its own congestion.
#[test]
fn beside_other_flows_cruise_loss_behind_a_deep_queue_is_the_shared_overflow() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = sharing_a_queue(rate);
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 130, 0.05, 2);
    assert!(b.bw_lo.is_none(), "taken for its own congestion");
    assert!(!b.congested_lately(t), "its climb paused");
    assert!(
        b.shared_cut_round.is_some(),
        "no cut to the shared overflow"
    );

    let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.0);
    assert!(!b.shares_the_bottleneck(t));
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 130, 0.05, 1);
    assert!(
        b.bw_lo.is_some(),
        "alone, not answered as its own congestion"
    );
    assert!(b.congested_lately(t));
}

/// Beside other flows a second check confirmed, a Cruise round that loses a
/// quarter of its datagrams behind a deep queue (a joiner's Startup filling
/// the shared queue at twice the link's rate) is the shared queue's
/// overflow: no short-term bounds, and the round's end cuts `inflight_hi`.
/// With a single verdict the same round is congestion of the flow's own, and
/// beyond a third (the path fell under the flow's rate) it is with a
/// confirmed one too.
#[test]
fn beside_confirmed_flows_a_joiners_overflow_of_a_quarter_is_shared() {
    let rate = 8_000_000;
    for (verdicts, loss, own) in [(2, 0.25, false), (1, 0.25, true), (2, 0.45, true)] {
        let case = format!("{verdicts} verdict(s), {loss} lost");
        let (mut b, mut t, mut d) = sharing_a_queue(rate);
        b.another_flow = AnotherFlow::Unseen;
        for _ in 0..verdicts {
            b.another_flow.verdict(t);
        }
        assert_eq!(b.another_flow.confirmed(t), verdicts == 2, "{case}");
        assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise), "{case}");
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 130, loss, 2);
        assert_eq!(b.bw_lo.is_some(), own, "{case}: short-term bounds");
        assert_eq!(b.congested_lately(t), own, "{case}: own congestion");
        assert_eq!(b.shared_cut_round.is_some(), !own, "{case}: shared cut");
    }
}

/// A flow alone cruising on a clean path whose round loses more than a
/// twentieth beyond the typical round's, and less than a quarter, with no
/// queue showing, met another flow's overflow (a loss-based flow's slow
/// start through a buffer too shallow for the RTT to show): it cuts
/// `inflight_hi` as to a shared queue's overflow, and the loss is not
/// congestion of its own. A round that loses half its datagrams is (the
/// path fell); one that loses 3 % is neither; on a path that loses 1 % at
/// random, such a round is left to the high-loss threshold.
#[test]
fn a_flow_alone_cuts_to_another_flows_overflow_where_no_queue_shows() {
    let rate = 8_000_000;
    let after = |random: f64, loss: f64| {
        let (mut b, mut t, mut d) = cruising_with_random_loss(rate, random);
        lossy_rounds(&mut b, &mut t, &mut d, rate, random, 2);
        assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
        assert!(b.rounds_in_phase() >= 2);
        assert!(!b.shares_the_bottleneck(t));
        let before = b.inflight_hi.unwrap_or(u64::MAX);
        lossy_rounds(&mut b, &mut t, &mut d, rate, loss, 1);
        lossy_rounds(&mut b, &mut t, &mut d, rate, random, 1);
        (b, t, before)
    };
    // 22 %: over the high-loss threshold that judged it before.
    for loss in [0.1, 0.22] {
        let (b, t, before) = after(0.0, loss);
        assert!(b.shared_cut_round.is_some(), "{loss}: no cut");
        assert!(
            b.inflight_hi
                .is_some_and(|hi| hi < before && hi <= rate / 10),
            "{loss}: {:?}",
            b.inflight_hi
        );
        assert!(!b.congested_lately(t), "{loss}: taken for its own");
        assert!(
            !b.shares_the_bottleneck(t),
            "{loss}: a verdict without a check"
        );
    }
    let (b, t, _) = after(0.0, 0.5);
    assert!(b.congested_lately(t), "the path fell");
    assert!(b.shared_cut_round.is_none(), "cut when the path fell");
    let (b, t, _) = after(0.0, 0.03);
    assert!(
        b.shared_cut_round.is_none() && !b.congested_lately(t),
        "3 %"
    );
    let (b, t, _) = after(0.01, 0.1);
    assert!(
        b.shared_cut_round.is_none() && !b.congested_lately(t),
        "on a lossy path"
    );
}

/// A path that falls under a flow alone's rate loses, in its first round,
/// as another flow's overflow does: the cut taken for one is undone when
/// the next round's loss says congestion of the flow's own, and the
/// short-term bounds answer the fall as they would have.
#[test]
fn congestion_of_its_own_after_a_joins_cut_undoes_the_cut() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.0);
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.0, 2);
    let before = b.inflight_hi;
    let up_growth = b.up_growth;
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.15, 1);
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.0, 1);
    assert!(b.shared_cut_round.is_some(), "no cut for the join");
    assert!(b.inflight_hi < before.or(Some(u64::MAX)));
    // The fall: the next round loses 60 %.
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.6, 1);
    assert!(b.congested_lately(t), "no congestion");
    assert_eq!(b.inflight_hi, before);
    assert_eq!(b.up_growth, up_growth);
    assert!(b.shared_cut_round.is_none());
    assert!(b.bw_lo.is_some(), "the short-term bounds did not answer");
    // Congestion of its own three rounds after the cut began leaves it.
    let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.0);
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.0, 2);
    let before = b.inflight_hi.unwrap_or(u64::MAX);
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.15, 1);
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.0, 3);
    assert!(b.shared_cut_round.is_some(), "no cut for the join");
    lossy_rounds(&mut b, &mut t, &mut d, rate, 0.6, 1);
    assert!(b.congested_lately(t), "no congestion");
    assert!(
        b.inflight_hi.is_some_and(|hi| hi <= rate / 10),
        "undone after the window: {:?} (before the cut {before})",
        b.inflight_hi
    );
}

/// A flow its endpoint found ahead of its siblings beside a loss-based flow
/// ([`ShareOnPath::Ahead`]) does not probe while a queue stands (the link is
/// busy: a probe could only take from the flow behind), however long past
/// its planned Cruise; level again, it probes at the next round, and ahead
/// with no queue it probes when the Cruise ends. On a lossy path, where a
/// flow alone does not put its probes off for a queue.
#[test]
fn a_flow_ahead_beside_a_loss_based_one_holds_its_probes_while_a_queue_stands() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = until_cruise_after_probe_losing(rate, LOSSY);
    let planned = b.cruise_rounds;
    b.on_share_on_path(ShareOnPath::Ahead);
    lossy_queued_rounds(
        &mut b,
        &mut t,
        &mut d,
        rate,
        101,
        LOSSY,
        4 * planned as usize,
    );
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise), "probed while ahead");
    b.on_share_on_path(ShareOnPath::Even);
    let (after, checked) =
        rounds_until_probe_losing(&mut b, &mut t, &mut d, rate, (101, 101), LOSSY);
    assert!(!checked, "a millisecond is no standing queue to check");
    assert!(after <= 2, "{after} rounds after it was level");
    // Ahead on an idle link: the probe goes when due.
    let (mut b, mut t, mut d) = until_cruise_after_probe_losing(rate, LOSSY);
    b.on_share_on_path(ShareOnPath::Ahead);
    let (idle, _) = rounds_until_probe_losing(&mut b, &mut t, &mut d, rate, (100, 100), LOSSY);
    assert!(idle <= planned + 2, "{idle} rounds of {planned} planned");
}

/// A flow its endpoint found ahead of its siblings beside a loss-based flow
/// cuts `inflight_hi` to a shared queue's overflow though no check found
/// another flow's queue (3 ms stand, too little to check at 100 ms); not
/// ahead, it does not. On a path with 1 % random loss, where a flow alone
/// does not take an overflow for another flow's.
#[test]
fn a_flow_ahead_beside_a_loss_based_one_cuts_to_an_overflow_without_a_verdict() {
    for ahead in [false, true] {
        let rate = 8_000_000;
        let (mut b, mut t, mut d) = cruising_with_random_loss(rate, LOSSY);
        if ahead {
            b.on_share_on_path(ShareOnPath::Ahead);
        }
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 103, LOSSY, 4);
        assert!(!b.shares_the_bottleneck(t), "ahead {ahead}");
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 103, 0.03, 2);
        assert!(!b.shares_the_bottleneck(t), "ahead {ahead}");
        assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise), "ahead {ahead}");
        assert_eq!(b.shared_cut_round.is_some(), ahead, "ahead {ahead}");
    }
}

/// After a cut to a shared queue's overflow, a flow ahead of its siblings
/// beside a loss-based flow keeps its bound and does not climb above its
/// estimate while a queue stands; level, it regrows the bound as before.
#[test]
fn a_flow_ahead_beside_a_loss_based_one_keeps_its_cut_bound() {
    let rate = 8_000_000;
    let (mut b, mut t, mut d) = sharing_a_queue(rate);
    b.on_share_on_path(ShareOnPath::Ahead);
    lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.03, 2);
    assert!(b.shared_cut_round.is_some(), "no cut to the shared queue");
    let cut = b.inflight_hi.expect("a bound");
    // Rounds that fill the bound, the queue standing.
    let full = |b: &mut Bbr, t: &mut Instant, d: &mut u64, n: usize| {
        for _ in 0..n {
            round_with_flight(b, t, d, rate, 110, cut + 100 * b.mss);
        }
    };
    full(&mut b, &mut t, &mut d, 6);
    assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
    assert_eq!(b.inflight_hi, Some(cut), "regrew while ahead");
    assert!(b.shared_climb_step.is_none(), "climbed while ahead");
    b.on_share_on_path(ShareOnPath::Even);
    full(&mut b, &mut t, &mut d, 3);
    assert!(
        b.inflight_hi.is_some_and(|hi| hi > cut),
        "{:?}",
        b.inflight_hi
    );
}
