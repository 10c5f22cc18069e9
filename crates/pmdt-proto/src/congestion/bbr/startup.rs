//! Startup: its seeds (an initial train, a saved path's jump) and its exits.

use std::time::Instant;

use super::{Bbr, Mode, BW_FILTER_ROUNDS, MAX_LOSS_FLOOR, STARTUP_PACING_GAIN};
use crate::congestion::delivery_rate::RateSample;

/// A resumed Startup (paced at most at the saved path's bandwidth) ends once
/// the estimate reaches this share of it: the path still gives what it gave.
const RESUMED_FULL_SHARE: f64 = 0.9;
/// Bandwidth growth that counts as "still growing" (draft: BBRFullBwThresh = 1.25).
const FULL_BW_THRESH: f64 = 1.25;
/// Rounds without growth before the pipe counts as full (draft: BBRFullBwCount = 3).
const FULL_BW_COUNT: u32 = 3;
/// Startup's first rounds, whose RTT is not taken for a full pipe while the
/// estimate still grows (see `check_full_bw`), counted from the first round
/// the application did not hold back (a connection's first rounds may carry
/// only what the application had written yet).
const STARTUP_EARLY_ROUNDS: u64 = 3;
/// Datagrams Startup's queue-free rounds must have carried before their loss rate
/// counts as the path's random loss (at 5 % loss, 200 datagrams lose 10 ± 3);
/// and the first datagrams delivered, whose loss ends Startup only if it
/// recurs (see `Bbr::on_inflight_too_high`): flights that small say little.
pub(super) const MIN_STARTUP_LOSS_SAMPLE: u64 = 200;
/// Largest flight, datagrams in flight when a sample's packet left, whose
/// loss in Startup's first [`MIN_STARTUP_LOSS_SAMPLE`] datagrams ends Startup
/// only if it recurs: the initial window's first doublings (a joiner lost 6
/// of 24). A flight Startup began at a measured rate (an initial train, a
/// saved path) is the BDP from its first round: four flows from their
/// trains over 100 Mbit/s × 20 ms (166 datagrams each) overflowed the queue
/// together, and waiting for a second signal gave Jain 0.931 instead of
/// 0.995 in the simulator.
pub(super) const MAX_SMALL_FLIGHT_PACKETS: u64 = 64;

impl Bbr {
    /// The initial window's train measured the bottleneck at `rate`: the next
    /// round sends one BDP at that rate (the estimate is set so Startup's gain
    /// paces at it, the window to its BDP), filling the pipe without a queue, and
    /// that round's delivery rate, what the path really gives this flow, lets
    /// Startup go on (its exits stand) instead of doubling from ten datagrams, a
    /// round trip per step (13 of them to 1 Gbit/s × 200 ms). Not more than the
    /// train's rate: the train sees the bottleneck's capacity, which other flows
    /// may be using, and a shallow buffer overflows at once above it.
    /// Startup from a rate known before any was measured (an initial train, a
    /// saved path): `seed` into this round's bandwidth sample and the
    /// estimate, and a window of at least `window` plus the send quanta.
    pub(super) fn seed_startup(&mut self, seed: u64, window: u64) {
        let slot = (self.round_count % BW_FILTER_ROUNDS as u64) as usize;
        self.bw_rounds[slot] = self.bw_rounds[slot].max(seed);
        self.max_bw = self.max_bw.max(seed);
        self.cwnd = self.cwnd.max(window + self.quanta());
    }

    /// The initial train measured the bottleneck at `rate` bytes/s: Startup
    /// goes on from a window of that rate's BDP and the estimate it gives
    /// over Startup's gain. Returns whether it seeded the model (not once
    /// Startup is over or its estimate is higher).
    pub(super) fn on_train_rate(&mut self, rate: u64) -> bool {
        let Some(min_rtt) = self.min_rtt else {
            tracing::debug!(
                train_rate = rate,
                "bbr: the initial train's rate came before an RTT sample; unused"
            );
            return false;
        };
        if self.mode != Mode::Startup || self.full_bw_reached {
            return false;
        }
        let seed = (rate as f64 / STARTUP_PACING_GAIN) as u64;
        if seed <= self.max_bw {
            return false;
        }
        self.seed_startup(seed, (rate as f64 * min_rtt.as_secs_f64()) as u64);
        tracing::debug!(
            train_rate = rate,
            cwnd = self.cwnd,
            "bbr: Startup from the initial train"
        );
        true
    }

    /// The jump's flight coming back (RFC 9959's Validating phase): while
    /// Startup goes on (no exit on its loss or queue), the rate its acks arrive
    /// at is a measurement of the path, where the round's delivery-rate samples
    /// read about half of it (see [`JumpFlight`]). Startup paces from it, up to
    /// the saved bandwidth, instead of at the jump's rate for another round.
    pub(super) fn validate_jump(&mut self, now: Instant, rs: &RateSample) {
        let Some(flight) = self.jump_flight.as_mut() else {
            return;
        };
        let acked = flight.on_ack(now, rs.total_delivered, self.round_start);
        if flight.is_back() {
            self.jump_flight = None;
            tracing::debug!(bw = self.max_bw, "bbr: the jump's flight is back");
        }
        let Some(acked) = acked else {
            return;
        };
        if self.mode == Mode::Startup && !self.full_bw_reached && acked > self.max_bw {
            self.seed_startup(acked, 0);
        }
    }

    pub(super) fn check_full_bw(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start {
            return;
        }
        tracing::trace!(
            rounds = self.round_count,
            bw = self.max_bw,
            full_bw = self.full_bw,
            queue_us = self.queue_in(self.prev_round_min_rtt).as_micros() as u64,
            before_us = self.queue_in(self.round_min_rtt_before).as_micros() as u64,
            cwnd = self.cwnd,
            in_flight = self.bytes_in_flight,
            credit_limited = rs.is_credit_limited,
            "bbr: a Startup round ends"
        );
        if self
            .resumed_bw
            .is_some_and(|saved| self.max_bw as f64 >= saved as f64 * RESUMED_FULL_SHARE)
        {
            tracing::debug!(
                bw = self.max_bw,
                "bbr: Startup ends: the saved path's bandwidth is reached"
            );
            self.full_bw_reached = true;
            return;
        }
        // Every RTT sample of the last round showed a queue: the pipe is full and
        // Startup is only queueing (a HyStart-like delay signal, checked first
        // so app-limited rounds count too). Not in the first rounds while the
        // estimate still grows: a queue there is the peer accepting the
        // connection or another flow's slow start (through pmdt-wanem beside
        // CUBIC, Startup ended in its first round at 1 Mbit/s and the flow got
        // 2 % of the link for 20 s). Later the estimate need not stop growing:
        // waiting for that too let Startup overshoot a shallow buffer by
        // another round (1 Gbit/s × 200 ms at 5 % loss: 80 % of the link in
        // steady state instead of 86 %). But while the estimate still grows
        // the queue must be twice the round before's and twice the deepest
        // of the earlier rounds, as this flow's own doubling flight makes it
        // ([`Self::startup_queue_doubled`]): a queue other flows keep does
        // not. A queue that appears after rounds that showed none ends
        // Startup at once, as before, and so does any queue once the
        // estimate stopped growing (a sender its CPU, the
        // application or the credit holds back does not double its flight,
        // and would stay in Startup at 2.77 × its estimate: with the doubling
        // test alone, one CI run's debug-build sender through pmdt-wanem at
        // 200 Mbit/s saved an estimate of 254 Mbit/s).
        let doubled = self.startup_queue_doubled();
        if self
            .startup_unheld_round
            .is_some_and(|r| self.round_count > r)
        {
            self.startup_deepest_round_rtt =
                self.startup_deepest_round_rtt.max(self.prev_round_min_rtt);
        }
        let growing = self.max_bw as f64 >= self.full_bw as f64 * FULL_BW_THRESH;
        let early_growth = self
            .startup_unheld_round
            .is_none_or(|r| self.round_count < r + STARTUP_EARLY_ROUNDS)
            && growing;
        if !early_growth
            && self
                .prev_round_min_rtt
                .is_some_and(|r| self.queue_visible(r))
            && (!growing || doubled)
        {
            tracing::debug!(
                bw = self.max_bw,
                full_bw = self.full_bw,
                rounds = self.round_count,
                queue_us = self.queue_in(self.prev_round_min_rtt).as_micros() as u64,
                cwnd = self.cwnd,
                in_flight = self.bytes_in_flight,
                credit_limited = rs.is_credit_limited,
                app_limited = rs.is_app_limited,
                "bbr: Startup ends: a round's every RTT showed a queue"
            );
            self.full_bw_reached = true;
            return;
        }
        // A round the application or the receiver's credit held back says nothing
        // about the pipe (a credit still growing with the flow at high loss would
        // otherwise end Startup at a fraction of the link).
        if rs.is_app_limited || rs.is_credit_limited {
            return;
        }
        if self.max_bw as f64 >= self.full_bw as f64 * FULL_BW_THRESH {
            self.full_bw = self.max_bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        if self.full_bw_count >= FULL_BW_COUNT {
            tracing::debug!(
                bw = self.max_bw,
                "bbr: Startup ends: the bandwidth stopped growing"
            );
            self.full_bw_reached = true;
        }
    }

    /// Whether the last round's queue (its smallest RTT over the minimum) is at
    /// least twice the round before's and twice the deepest of the Startup
    /// rounds before it (`startup_deepest_round_rtt`): Startup's own overshoot
    /// doubles the queue each round (the flight doubles into a full pipe, and
    /// the queue only grows), while a queue other flows keep stands or comes
    /// and goes whatever this one sends. A flow that joined a busy bottleneck
    /// saw their queue in every RTT and ended Startup on it at 2 % of the link
    /// (through pmdt-wanem, four flows 2 s apart at 1 Gbit/s × 40 ms: the
    /// second and the fourth left Startup at 15-18 Mbit/s). Against the round
    /// before only, the others' queue going from 0 to 2.8 and then 6.6 ms
    /// (their probes and yields, the two cores' scheduling) ended a joiner's
    /// Startup at 14 Mbit/s with 138 KB in flight, a millisecond of the link:
    /// in 7 of 9 joiners, at 14-110 Mbit/s, where 6.4 ms had stood in its
    /// first rounds.
    fn startup_queue_doubled(&self) -> bool {
        let last = self.queue_in(self.prev_round_min_rtt);
        let before = self
            .queue_in(self.round_min_rtt_before)
            .max(self.queue_in(self.startup_deepest_round_rtt));
        last >= before * 2
    }

    /// The loss rate over Startup's rounds that showed no queue, once they
    /// carried [`MIN_STARTUP_LOSS_SAMPLE`] datagrams (before, unknown: small
    /// flights say little).
    pub(super) fn startup_random_loss(&self) -> Option<f64> {
        (self.startup_total >= MIN_STARTUP_LOSS_SAMPLE * self.mss)
            .then(|| (self.startup_lost as f64 / self.startup_total as f64).min(MAX_LOSS_FLOOR))
    }
}
