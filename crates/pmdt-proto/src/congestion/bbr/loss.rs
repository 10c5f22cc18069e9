//! What loss says: congestion against random loss, a probe's overflow, and
//! the per-round loss floor and bounds.

use std::time::{Duration, Instant};

use super::join_overflow::JOIN_MAX_EXCESS;
use super::startup::{MAX_SMALL_FLIGHT_PACKETS, MIN_STARTUP_LOSS_SAMPLE};
use super::{
    Bbr, Mode, Phase, ProbeFeedback, UpGrowth, BETA, CRUISE_ROUNDS, HIGH_LOSS_THRESH,
    LOSS_FLOOR_ROUNDS, LOSS_THRESH, MAX_LOSS_FLOOR, QUEUE_RTT_FLOOR, STARTUP_QUEUE_RTT_FRACTION,
};
use crate::congestion::delivery_rate::RateSample;

/// Fewest packets lost in a flight before its loss rate means anything (draft:
/// BBRStartupFullLossCnt = 6): small flights under random loss are noise.
const MIN_LOSS_PACKETS: u64 = 6;
/// An RTT this much above the minimum (fraction of it) shows a standing queue.
const QUEUE_RTT_FRACTION: f64 = 0.25;
/// Loss in a ProbeBW Up flight beyond the random-loss floor that marks the probe's
/// overflow, as a share of the flight. A drop-tail queue too shallow to show in the
/// RTT (pmdt-wanem's 1 MiB at 1 Gbit/s: 8 ms against 200 ms) overflows with no
/// other sign, and every Up lost the same ~2,600 packets at 1 Gbit/s × 200 ms.
const PROBE_LOSS_EXCESS: f64 = 0.01;
/// … and at least this many standard deviations of the floor's binomial noise in
/// a flight of that size (random loss alone must not end probes).
const PROBE_LOSS_SIGMAS: f64 = 4.0;

/// Where the connection is relative to Startup's overshoot. A sample's `lost`
/// counts every loss declared since its packet was sent, so samples of packets
/// sent before the overshoot's losses were all declared still carry them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Overshoot {
    /// Startup or Drain: their losses end Startup, nothing more.
    InStartup,
    /// ProbeBW began with this much delivered; packets sent before it are still
    /// being acknowledged or declared lost.
    Draining { probe_bw_delivered: u64 },
    /// A packet sent in ProbeBW was acknowledged with this much delivered: every
    /// older packet was resolved by then, so packets sent after it carry only
    /// losses of ProbeBW's own flights.
    Resolved { delivered: u64 },
}

impl Overshoot {
    /// A sample taken in ProbeBW.
    pub(super) fn on_probe_bw_sample(&mut self, rs: &RateSample) {
        match *self {
            Self::InStartup => {
                *self = Self::Draining {
                    probe_bw_delivered: rs.total_delivered,
                }
            }
            Self::Draining { probe_bw_delivered } if rs.prior_delivered >= probe_bw_delivered => {
                *self = Self::Resolved {
                    delivered: rs.total_delivered,
                }
            }
            _ => {}
        }
    }

    /// Whether the sample's losses are all of flights sent after the overshoot.
    pub(super) fn is_behind(&self, rs: &RateSample) -> bool {
        matches!(*self, Self::Resolved { delivered } if rs.prior_delivered >= delivered)
    }
}

impl Bbr {
    /// Whether the data sent over the newest acked packet's round trip lost too much
    /// (BBRv3's IsInflightTooHigh, with the threshold depending on queue evidence).
    /// The rate is lost / (delivered + lost) over that same interval: BBRv3 divides by
    /// the data in flight at send, which overstates the rate while the flight grows
    /// (Startup sends 2.77 × that flight in its round trip).
    ///
    /// Beside other flows (a check found another flow's queue lately), a
    /// Cruise sample's loss up to the high-loss threshold above the path's
    /// random loss (up to a third once a second check confirmed them:
    /// [`Self::shared_overflow_max_excess`], a joiner's Startup) is the
    /// shared queue's overflow, whatever the RTT shows:
    /// the round's end cuts `inflight_hi` to it where the queue stood near
    /// its deepest and the round lost more than random loss explains
    /// ([`Self::cut_for_shared_queue`]), as for every flow that lost there,
    /// and the climb starts over. Which flow's datagrams a full drop-tail
    /// queue drops is chance, and a small flow's round is a small sample:
    /// taken for congestion of its own (the 2 % threshold where the queue
    /// shows), one flow was held by the short-term bounds, and neither
    /// climbed nor cut at the next overflows, while the others regrew. In
    /// the simulator, four flows joining 1 Gbit/s × 40 ms 2 s apart from a
    /// sender off its core 6 ms in 20, a joiner at 64 Mbit/s lost 2.5 % of
    /// a sample that read 51 ms (the round's smallest RTT was 46.8 ms) and
    /// was held at 61-64 Mbit/s until its next probe 1.2 s later; Jain over
    /// seeds 1-12 was 0.887-0.997 (mean 0.974), and 0.937-0.997 (mean
    /// 0.980) with this rule. The other sharing cells screened did not
    /// change, but for BBR joining CUBIC behind 5 MiB (one seed of two:
    /// BBR 26.3 → 29.7 %). Not far below the recent peak with a single
    /// verdict of another flow's queue: there the loss may say that verdict
    /// was wrong (the path fell, [`Self::forget_a_verdict_it_overran`]).
    /// Where no queue shows, the high-loss threshold counts above the
    /// path's random loss here, as the shared cut's bound does; for a flow
    /// alone cruising on a clean path, [`JOIN_MAX_EXCESS`] above it (less
    /// is another flow's overflow: [`Self::join_overflow_says_another_flow`]).
    pub(super) fn inflight_too_high(&self, now: Instant, rs: &RateSample) -> bool {
        if rs.lost < MIN_LOSS_PACKETS * self.mss {
            return false;
        }
        // A standing queue shows in every RTT of the round so far (its minimum); a
        // single late ack (a preempted receiver, an ack burst) is not one, but at
        // a round's first sample that sample is the round so far (taking the
        // ended round's minimum there instead gave the simulator's joining flows
        // less even shares: session 94). In
        // Startup the queue overflows within a round (the rate doubles per round)
        // and its first samples saw none: there the latest standing RTT tells.
        let rtt = self.sample_rtt(rs);
        let standing = if self.full_bw_reached {
            self.round_min_rtt.map_or(rtt, |m| m.min(rtt))
        } else {
            self.sample_standing_rtt(rs)
        };
        // A Startup flight the receiver's credit held back is not the pipe's
        // size: its bursts (paced at 2.77× an estimate the credit keeps low) queue
        // for a moment without the pipe being full.
        let credit_burst = !self.full_bw_reached && rs.is_credit_limited;
        let shared_overflow = self.full_bw_reached
            && self.mode == Mode::ProbeBw(Phase::Cruise)
            && self.shares_the_bottleneck(now)
            && !self.may_have_overrun_a_single_verdict(now);
        let mut thresh = if shared_overflow {
            self.loss_floor + self.shared_overflow_max_excess(now)
        } else if self.queue_visible(standing) && !credit_burst {
            LOSS_THRESH
        } else if self.alone_cruising_clean(now) && self.overshoot.is_behind(rs) {
            // Less is another flow's overflow, which the round's end judges
            // (`join_overflow_says_another_flow`).
            self.loss_floor + JOIN_MAX_EXCESS
        } else {
            HIGH_LOSS_THRESH
        };
        if !self.full_bw_reached {
            // Beyond the random loss Startup has seen (at 5 % random loss and a
            // few milliseconds of queue, Startup ended at 30-70 % of the link),
            // and while too few datagrams show what that is, only loss no random
            // loss explains (6 of a first flight of 73 lost at 5 % random loss
            // ended Startup at 4 Mbit/s of a 1 Gbit/s path: 22 Mbit/s in 20 s).
            thresh = match self.startup_random_loss() {
                Some(random) => thresh + random,
                None => HIGH_LOSS_THRESH,
            };
        }
        rs.lost as f64 > (rs.delivered + rs.lost) as f64 * thresh
    }

    /// Whether a ProbeBW Up flight lost more than random loss explains: the
    /// probe pushed past the pipe and a queue too shallow to show in the RTT
    /// overflowed (the loss thresholds of [`inflight_too_high`] stay above random
    /// loss rates, so they miss it). Beyond the random loss (the floor, or the
    /// round before the probe if it lost more) by [`PROBE_LOSS_EXCESS`] of the
    /// flight and by [`PROBE_LOSS_SIGMAS`] of that loss's noise; Startup's overshoot still being repaired does not count.
    ///
    /// [`inflight_too_high`]: Self::inflight_too_high
    pub(super) fn probe_overflowed(&self, rs: &RateSample) -> bool {
        // The probe's flight is acknowledged a round after it left: an Up that
        // ended on its flight (one round at 1.2, done) shows its overflow in the
        // Down or Cruise after it. Missing it there left `inflight_hi` unset, and
        // every probe lost the same ~2,000 packets (1 Gbit/s × 200 ms, 1 MiB).
        // While Up sends, every sample counts (as BBRv3's probe feedback);
        // once it ended, only samples of the packets it sent: the phases after
        // it go on losing at the random rate, and a sample of theirs above the
        // bound would be noise taken for the probe's overflow.
        let of_the_probe = match self.probe_feedback {
            ProbeFeedback::Idle => false,
            ProbeFeedback::Probing { .. } => true,
            ProbeFeedback::Ending { since, until, .. } => {
                (since..until).contains(&rs.prior_delivered)
            }
        };
        if !of_the_probe || rs.lost < MIN_LOSS_PACKETS * self.mss || !self.overshoot.is_behind(rs) {
            return false;
        }
        let mss = self.mss as f64;
        let flight = (rs.delivered + rs.lost) as f64 / mss;
        let lost = rs.lost as f64 / mss;
        let p = self.loss_floor.max(self.probe_base_loss);
        let noise = PROBE_LOSS_SIGMAS * (flight * p * (1.0 - p)).sqrt();
        lost > flight * p + (flight * PROBE_LOSS_EXCESS).max(noise)
    }

    /// A probe overflowed the queue: the flight goes back to the pipe (the flight
    /// at which the queue overflowed is not known: the loss shows a round late,
    /// the flight still growing), the probe ends, and the next one approaches the
    /// pipe in small steps. The model and its lower bounds stay: the probe found
    /// the pipe's edge, not congestion.
    pub(super) fn on_probe_overflow(&mut self, now: Instant) {
        // The pipe holds the bandwidth-delay product of what the link carries,
        // random losses included (the model's rate is the link's times 1 − loss).
        // Plus the acks' aggregation, which the window also holds: a sender
        // whose acks come in bursts keeps the pipe full only with that much
        // more in flight (1 Gbit/s × 10 ms through pmdt-wanem lost 0.5 % of
        // the link to a bound without it).
        let pipe = (self.bdp_multiple(1.0) as f64 / (1.0 - self.loss_floor)) as u64;
        let hi = pipe.max(self.min_cwnd()) + self.extra_acked + self.quanta();
        // A verdict heard after the Up only lowers the bound: a cut for another
        // flow's queue (`cut_for_shared_queue`) in the same round stands.
        self.inflight_hi = match self.inflight_hi {
            Some(cut) if self.mode != Mode::ProbeBw(Phase::Up) => Some(cut.min(hi)),
            _ => Some(hi),
        };
        tracing::debug!(
            inflight_hi = self.inflight_hi,
            loss_floor = self.loss_floor,
            "bbr: a probe overflowed the queue"
        );
        self.up_growth = UpGrowth::Gentle {
            pipe: Some(pipe.max(self.min_cwnd())),
        };
        self.probe_feedback = ProbeFeedback::Idle;
        if self.mode == Mode::ProbeBw(Phase::Up) {
            self.enter(now, Mode::ProbeBw(Phase::Down));
        }
    }

    pub(super) fn on_inflight_too_high(&mut self, now: Instant, rs: &RateSample) {
        // The short-term bounds answer congestion met while cruising or probing
        // (BBRv3 lowers them outside Startup only). Startup's overshoot is answered
        // by its exit and `inflight_hi`; the rounds that repair it deliver little
        // (Drain sends at a third of the rate) and must not become the new model.
        let target = self.bdp_multiple(1.0).max(self.min_cwnd());
        let hi = ((rs.tx_in_flight as f64).max(target as f64 * BETA) as u64).max(self.min_cwnd());
        if self.mode == Mode::Startup {
            // The first flights are too small to tell: one round's loss
            // may be another flow's overflow that they happened into. A
            // joiner at 1 Gbit/s × 40 ms lost 6 of 24 datagrams in its
            // second round, left Startup at 4.6 Mbit/s, and still had
            // 10 % of the link 10 s later. Within its first
            // `MIN_STARTUP_LOSS_SAMPLE` datagrams delivered, from a flight
            // of at most `MAX_SMALL_FLIGHT_PACKETS`, it ends Startup on
            // loss in a second round trip (a flow alone on a small pipe
            // overshoots by a round of a small flight). Not for longer: a
            // joiner's every round shows the others' queue, so its random
            // loss stays unknown, and waiting for a second signal from
            // flights of 1-2 MB overflowed the queue for every flow (four
            // flows joining through pmdt-wanem: Jain 0.827-0.998, 5 of 13
            // runs under 0.95, against 1 of 12 without it). A sample's loss counts
            // every loss declared since its packet left: samples of
            // packets sent before the first signal carry its losses
            // again, and are not a second one (packets sent after it
            // carry only losses declared later: mostly their own
            // round's, and the first burst's tail).
            match self.startup_loss_at {
                Some(delivered) if rs.prior_delivered < delivered => return,
                Some(_) => {}
                None if rs.total_delivered < MIN_STARTUP_LOSS_SAMPLE * self.mss
                    && rs.tx_in_flight <= MAX_SMALL_FLIGHT_PACKETS * self.mss =>
                {
                    self.startup_loss_at = Some(rs.total_delivered);
                    return;
                }
                None => {}
            }
            tracing::debug!(
                lost = rs.lost,
                delivered = rs.delivered,
                rtt_us = self.sample_rtt(rs).as_micros() as u64,
                min_rtt_us = self.min_rtt.unwrap_or_default().as_micros() as u64,
                bw = self.max_bw,
                rounds = self.round_count,
                cwnd = self.cwnd,
                credit_limited = rs.is_credit_limited,
                "bbr: Startup ends on loss"
            );
            // The estimate lags Startup's rate by a round, and the flight the
            // signal's packet saw may be a credit-limited one: not below the BDP
            // the model has.
            self.inflight_hi = Some(hi.max(target));
            self.probe_first = true;
            self.full_bw_reached = true;
            self.enter(now, Mode::Drain);
            return;
        }
        if !self.overshoot.is_behind(rs) {
            return;
        }
        self.congested_at = Some(now);
        if !self.congested_in_round {
            tracing::debug!(
                lost = rs.lost,
                delivered = rs.delivered,
                tx_in_flight = rs.tx_in_flight,
                rtt_us = self.sample_rtt(rs).as_micros() as u64,
                mode = ?self.mode,
                bw = self.bw(),
                "bbr: congestion of its own"
            );
            self.forget_a_verdict_it_overran(now);
            self.undo_a_join_cut();
            // The path fell under this flow's rate: a Cruise waiting for a
            // loss-based flow to regrow probes soon instead, to find the
            // path's new rate (the bounds cut below it: 1 Gbit/s falling to
            // 200 Mbit/s at 40 ms, the estimate stayed at 140 Mbit/s for
            // 1.3 s in the simulator).
            if self.mode == Mode::ProbeBw(Phase::Cruise) && !self.shares_the_bottleneck(now) {
                self.cruise_rounds = self
                    .cruise_rounds
                    .min(self.rounds_in_phase() + CRUISE_ROUNDS);
            }
            // Once per round, at the first signal (BBRv3 waits for the round's end;
            // acting now saves a round, which at a collapsed rate and a full queue
            // is a long one).
            let lo = self.bw_lo.unwrap_or(self.max_bw);
            self.bw_lo = Some(self.bw_latest.max((lo as f64 * BETA) as u64).max(1));
            let ilo = self.inflight_lo.unwrap_or(self.cwnd);
            self.inflight_lo = Some(
                self.inflight_latest
                    .max((ilo as f64 * BETA) as u64)
                    .max(self.min_cwnd()),
            );
        }
        self.congested_in_round = true;
        if self.probe_feedback != ProbeFeedback::Idle {
            self.inflight_hi = Some(hi);
            self.probe_feedback = ProbeFeedback::Idle;
        }
        match self.mode {
            Mode::ProbeBw(Phase::Up) | Mode::ProbeBw(Phase::Refill) => {
                self.enter(now, Mode::ProbeBw(Phase::Down))
            }
            _ => {}
        }
    }

    /// At a round's end: its loss rate joins the last rounds', whose minimum is the
    /// random loss on the wire. Loss on the wire takes packets the bottleneck
    /// already carried (a lossy link; pmdt-wanem drops behind its queue), so the
    /// delivery rate the model measures is the link's times (1 − loss): pacing at
    /// it would leave that share of the link idle for good (5 % at 5 % loss) and
    /// no probe could show it (what a probe adds is lost in the same share).
    /// ProbeBW paces at bw / (1 − floor). A queue's overflow is in some rounds
    /// only (the minimum ignores it), and a round whose every RTT showed a queue
    /// (any: Startup's margin) does not count at all: its loss may be the queue's,
    /// and compensating congestion loss would feed it. The RTT and the bounds
    /// answer such a queue.
    pub(super) fn end_round_loss(&mut self) {
        let total = self.round_acked + self.round_lost;
        if !self.standing_queue(self.round_min_rtt) {
            let rate = if total == 0 {
                0.0
            } else {
                self.round_lost as f64 / total as f64
            };
            self.last_round_loss = rate;
            self.loss_rounds[(self.round_count % LOSS_FLOOR_ROUNDS as u64) as usize] = rate;
            self.loss_rounds_measured = (self.loss_rounds_measured + 1).min(LOSS_FLOOR_ROUNDS);
            if !self.full_bw_reached {
                self.startup_lost += self.round_lost;
                self.startup_total += total;
            }
        }
        self.loss_floor = self
            .loss_rounds
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
            .min(MAX_LOSS_FLOOR);
        self.round_acked = 0;
        self.round_lost = 0;
    }

    /// The (upper) median loss rate of the last rounds that showed no queue:
    /// the path's random loss as most rounds meet it (the floor, their
    /// minimum, reads zero in most rounds of a few dozen datagrams at 5 %; a
    /// queue's overflow in a round or two leaves the median alone). Unknown
    /// until more than half of the rounds it spans were measured (a Startup
    /// resumed from a saved path or the initial train lasts two to four
    /// rounds, and the slots not yet written read zero).
    pub(super) fn typical_round_loss(&self) -> Option<f64> {
        if self.loss_rounds_measured <= LOSS_FLOOR_ROUNDS / 2 {
            return None;
        }
        let mut rounds = self.loss_rounds;
        rounds.sort_by(f64::total_cmp);
        Some(rounds[LOSS_FLOOR_ROUNDS / 2])
    }

    /// At a round's end: start the next round's tally (the short-term bounds of
    /// BBRv3's BBRAdaptLowerBoundsFromCongestion are lowered at a round's first
    /// congestion signal, see `on_inflight_too_high`).
    pub(super) fn end_round_bounds(&mut self) {
        self.congested_in_round = false;
        if let ProbeFeedback::Ending { last_round, .. } = self.probe_feedback {
            if self.round_count > last_round {
                self.probe_feedback = ProbeFeedback::Idle;
            }
        }
        self.prev_bw_latest = self.bw_latest;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    pub(super) fn queue_visible(&self, rtt: Duration) -> bool {
        let Some(min) = self.min_rtt else {
            return false;
        };
        let fraction = if self.full_bw_reached {
            QUEUE_RTT_FRACTION
        } else {
            STARTUP_QUEUE_RTT_FRACTION
        };
        let margin = min.mul_f64(fraction).max(QUEUE_RTT_FLOOR);
        rtt > min + margin
    }
}
