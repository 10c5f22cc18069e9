//! The state machine's transitions: Startup → Drain → ProbeBW's Down, Cruise,
//! Refill and Up, and ProbeRTT.

use std::time::{Duration, Instant};

use super::{
    Bbr, Mode, Phase, RisingRun, UpGrowth, ESCALATE_AFTER_GROWTH, GENTLE_FIRST_STEP_PACKETS,
    INFLIGHT_HI_GROWTH, MAX_UP_PACING_GAIN, MAX_UP_ROUNDS, PROBE_FOUND_MORE, PROBE_RTT_CWND_GAIN,
    PROBE_RTT_INTERVAL, PROBE_UP_PACING_GAIN, QUEUE_FREE_RTT, QUEUE_RTT_FLOOR, UP_GAIN_STEP,
};
use crate::congestion::delivery_rate::RateSample;

/// The share of a run of Ups' samples that may show more than
/// [`QUEUE_FREE_RTT`] and the run still count as showing no queue: through
/// `pmdt-wanem` sharing a
/// core with the receiver, a stray sample a few milliseconds late in a round of
/// thousands kept a flow alone from escalating (one run's rise from 200 Mbit/s
/// to 1 Gbit/s at 100 ms grew 1.2-1.3× a round for eight rounds, and took
/// 2.3 s in all). Counted over a run of Ups' samples since its last phase
/// change (a round at 1 Gbit/s × 100 ms has thousands).
const QUEUE_FREE_STRAYS: f64 = 0.01;
/// The share of a run of Ups' samples that may show a queue and the run
/// still keep the probe going and escalate its gain (see
/// [`QueuedSamples::mostly_queue_free`]). Through `pmdt-wanem`, the runs of
/// Ups that had grown the estimate by half (a bottleneck back from 200 Mbit/s
/// to 1 Gbit/s at 100 ms) had 1.4-23 % of their samples late by over 2 ms,
/// half of them over 5 %: at [`QUEUE_FREE_STRAYS`] their gain stayed at 1.2
/// (one rise took 1.2 s from its first Up round, 0.5 s of it at 1.2 with
/// 1.8 and 1.4 % late). A probe's own queue shows in most of a round's
/// samples (at 1.2, 2 ms of queue builds in the first tenth of a round at
/// 100 ms), another flow's standing queue in nearly all.
const MOSTLY_QUEUE_FREE_STRAYS: f64 = 0.1;
/// Growth of the estimate over a queue-free ProbeBW Up round that keeps the
/// probe going (and escalates its gain): what a 1.2 gain shows a round later.
const QUEUE_FREE_GROWING: f64 = 1.05;
/// How long ProbeRTT holds the reduced window (draft: ProbeRTTDuration = 200 ms).
const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// ProbeBW Up ends once an RTT sample exceeds the RTT at the probe's start by this
/// fraction of the minimum: the probe is building a queue instead of finding
/// bandwidth. (Relative to the start, not the minimum: a queue another flow keeps
/// standing must not stop every probe.)
const PROBE_UP_QUEUE_FRACTION: f64 = 0.125;
/// Longest a gentle Up lasts, rounds. An Up that follows it at once (its
/// rounds showed no queue and its estimate grew) goes on doubling the step
/// where it left off, as BBRv3's Up does for as long as it lasts: restarting
/// at one packet, a flow whose bound an overflow had set just before its
/// bottleneck came back from 200 Mbit/s to 1 Gbit/s (100 ms) grew by 255
/// packets per 0.8 s, 9-15 % of its flight, and was at 473 Mbit/s ten
/// seconds later.
const MAX_GENTLE_UP_ROUNDS: u64 = 8;
/// Rounds Drain lasts at most (Startup's queue drains in about two at its
/// gain).
const MAX_DRAIN_ROUNDS: u64 = 3;

/// RTT samples of a ProbeBW Up, how many of them showed a queue, and the
/// largest flight their packets left into.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct QueuedSamples {
    pub(super) samples: u64,
    pub(super) queued: u64,
    pub(super) max_tx_in_flight: u64,
}

impl QueuedSamples {
    pub(super) fn add(&mut self, queued: bool, tx_in_flight: u64) {
        self.samples += 1;
        self.queued += u64::from(queued);
        self.max_tx_in_flight = self.max_tx_in_flight.max(tx_in_flight);
    }

    /// No queue: at most [`QUEUE_FREE_STRAYS`] of the samples showed one.
    pub(super) fn queue_free(&self) -> bool {
        self.queued as f64 <= self.samples as f64 * QUEUE_FREE_STRAYS
    }

    /// No queue but the processes' scheduling: at most
    /// [`MOSTLY_QUEUE_FREE_STRAYS`] of the samples showed one.
    pub(super) fn mostly_queue_free(&self) -> bool {
        self.queued as f64 <= self.samples as f64 * MOSTLY_QUEUE_FREE_STRAYS
    }
}

impl Bbr {
    /// Growth of the estimate over a probe that says it found more: the
    /// Cruise after it probes again at once, and an Up "still finding
    /// bandwidth" goes on (its gain compounding) and grows `inflight_hi`
    /// fast, instead of draining and cruising a few rounds before the next
    /// probe (a Startup that ended on its own overshoot leaves an estimate
    /// from the round before the pipe filled, as low as half the link: this
    /// regains it in a few rounds, not cycles). Three quarters of the Up
    /// gain's excess: 15 % at 1.2 (an escalated gain too), 7.9 % at 1.105
    /// beside other flows ([`Self::up_gain_beside_others`]); once no check
    /// remembers another flow, 15 % again. At 15 % a probe at 1.105 can
    /// show no more than 10.5 %, so a flow that joined with a small share
    /// grew by single probes seconds apart: in the simulator's four flows
    /// joining 2 s apart, Jain 0.90 and 0.95 on two of four seeds (0.97 and
    /// 0.996 with the base gain). (A queue-free Up's escalation,
    /// `QUEUE_FREE_GROWING`, is for a flow alone and keeps its 5 %.)
    pub(super) fn found_more(&self, now: Instant) -> f64 {
        let gain = if self.shares_the_bottleneck(now) {
            self.up_gain.min(PROBE_UP_PACING_GAIN)
        } else {
            PROBE_UP_PACING_GAIN
        };
        1.0 + (PROBE_FOUND_MORE - 1.0) * (gain - 1.0) / (PROBE_UP_PACING_GAIN - 1.0)
    }

    pub(super) fn rounds_in_phase(&self) -> u64 {
        self.round_count - self.phase_start_round
    }

    pub(super) fn update_state(&mut self, now: Instant, rs: &RateSample) {
        let inflight = rs.bytes_in_flight;
        match self.mode {
            Mode::Startup => {
                if self.full_bw_reached {
                    self.enter(now, Mode::Drain);
                }
            }
            Mode::Drain => {
                // Drained, or for long enough: beside another flow's standing
                // queue the flight never gets down to the BDP (the packets
                // wait in that queue), and Drain's third of the rate would
                // bring the estimate down round after round.
                if inflight <= self.bdp_multiple(1.0) || self.rounds_in_phase() >= MAX_DRAIN_ROUNDS
                {
                    self.enter(now, Mode::ProbeBw(Phase::Down));
                }
            }
            Mode::ProbeBw(Phase::Down) => {
                // Drained, or one min RTT passed (BBRv1's drain phase length): a queue
                // another flow keeps standing cannot be drained by this one.
                let elapsed = self.phase_start.is_some_and(|t| {
                    now.saturating_duration_since(t) >= self.min_rtt.unwrap_or_default()
                });
                if inflight <= self.bdp_multiple(1.0) || elapsed {
                    self.enter(now, Mode::ProbeBw(Phase::Cruise));
                }
            }
            Mode::ProbeBw(Phase::Cruise) => {
                if self.rounds_in_phase() >= 1 {
                    // The probe's last packets are acknowledged.
                    self.probe_base_rtt = None;
                }
                let grew = self.max_bw as f64 >= self.bw_at_probe as f64 * self.found_more(now)
                    && self.bw_at_probe > 0;
                let due = grew || self.rounds_in_phase() >= self.cruise_rounds;
                if self.round_start
                    && due
                    && (grew || !(self.probe_put_off_for_a_queue(now) || self.holds_back_ahead()))
                {
                    self.rising_run_goes_on(now, grew);
                    self.enter(now, Mode::ProbeBw(Phase::Refill));
                }
            }
            Mode::ProbeBw(Phase::Refill) => {
                if self.round_start {
                    self.enter(now, Mode::ProbeBw(Phase::Up));
                }
            }
            Mode::ProbeBw(Phase::Up) => {
                if self.round_start
                    && self.rounds_in_phase() >= 1
                    && self.gentle_probe_outgrew_the_pipe(now)
                {
                    // At the round's start, not at the end of the gentle Up's
                    // eight: the bound grows fast from here, in an Up of its own.
                    tracing::debug!(
                        max_tx_in_flight = self.up_samples.max_tx_in_flight,
                        bdp = self.bdp_multiple(1.0),
                        rounds = self.rounds_in_phase(),
                        "bbr: a gentle probe outgrew the pipe"
                    );
                    self.up_growth = UpGrowth::Fast;
                    self.enter(now, Mode::ProbeBw(Phase::Up));
                }
                if self.round_start {
                    self.up_rounds += 1;
                    let step =
                        (GENTLE_FIRST_STEP_PACKETS * self.mss) << (self.up_rounds - 1).min(16);
                    let up_growth = self.up_growth;
                    if let Some(hi) = self.inflight_hi.as_mut() {
                        // BBRv3's BBRProbeInflightHiUpward: exponential growth,
                        // as fast as the escalated gain.
                        let most = (*hi as f64 * INFLIGHT_HI_GROWTH.max(self.up_gain)) as u64;
                        *hi = match up_growth {
                            UpGrowth::Fast => most,
                            UpGrowth::Gentle { .. } => (*hi + step).min(most),
                        };
                    }
                }
                let elapsed = self.phase_start.is_some_and(|t| {
                    now.saturating_duration_since(t) >= self.min_rtt.unwrap_or_default()
                });
                // Sample by sample: the standing RTT (a receiver's late batch
                // is no queue).
                let queueing = self.min_rtt.is_some_and(|m| {
                    self.sample_standing_rtt(rs)
                        > self.probe_start_rtt.max(m) + m.mul_f64(PROBE_UP_QUEUE_FRACTION)
                });
                self.up_samples.add(
                    self.min_rtt
                        .zip(self.queue_free_margin())
                        .is_none_or(|(m, margin)| self.sample_standing_rtt(rs) > m + margin),
                    rs.tx_in_flight,
                );
                let max_rounds = match self.up_growth {
                    UpGrowth::Fast => MAX_UP_ROUNDS,
                    UpGrowth::Gentle { .. } => MAX_GENTLE_UP_ROUNDS,
                };
                let done = (elapsed
                    && inflight >= self.bdp_multiple(self.up_gain.min(PROBE_UP_PACING_GAIN)))
                    || self.rounds_in_phase() >= max_rounds;
                let growing = self.bw_at_probe > 0
                    && self.max_bw as f64 >= self.bw_at_probe as f64 * self.found_more(now);
                // A run with no queue (but the scheduling's strays) whose
                // estimate still grew: the
                // estimate trails the rate, so the growth it shows is the
                // gain of the round before; the path takes more.
                let queue_free = self.up_samples.mostly_queue_free()
                    && self.bw_at_probe > 0
                    && self.max_bw as f64 >= self.bw_at_probe as f64 * QUEUE_FREE_GROWING;
                // The path took half as much again as when the probe began:
                // not the spare a loss-based flow leaves as it backs off (its
                // 30 % of its share; escalating into that took CUBIC's share
                // of a shallow queue, 56 → 72 % of the link for BBR). Such a
                // run of Ups ends on its own queue or loss only: a round that
                // grew little with a few late samples (the estimate a round
                // behind an escalated gain, a receiver preempted) ended it
                // half way up, and the Down, Cruise and Refill before the next
                // probe, which started again at 1.2, cost half a second
                // (through pmdt-wanem, 200 Mbit/s back to 1 Gbit/s at 100 ms:
                // up_s median 2.03 s, 5 of 8 runs over 2 s; 1.62 s, none,
                // after). Only once the run escalated (its rounds showed no
                // queue at all) and no check found another flow's queue
                // lately: a loss-based flow's backoff can leave a flow with a
                // small share half as much again, and running on to its own
                // loss took CUBIC's share of a shallow queue (BBR 48-68 % of
                // the link in three runs, 41-47 % before). A flow alone whose
                // run began under half of its recent peak (a bottleneck that
                // slowed down) is as far below from the start: the path
                // carried the peak a moment ago, and the gain escalates at
                // the first queue-free round that finds more (the simulator's
                // rise from 200 Mbit/s back to 1 Gbit/s: 1.0 s at 100 ms
                // instead of 1.2, 0.4 s at 40 ms instead of 0.5).
                let far_below = self.up_base_bw > 0
                    && (self.max_bw as f64 >= self.up_base_bw as f64 * ESCALATE_AFTER_GROWTH
                        || (self.recent_peak.far_above(now, self.up_base_bw)
                            && !self.shares_the_bottleneck(now)));
                let outgrew = done && self.gentle_probe_outgrew_the_pipe(now);
                if growing || outgrew {
                    // The pipe grew: where the last probe overflowed says nothing.
                    self.up_growth = UpGrowth::Fast;
                }
                if queueing || done {
                    tracing::debug!(
                        rounds = self.rounds_in_phase(),
                        gain = self.up_gain,
                        samples = self.up_samples.samples,
                        queued = self.up_samples.queued,
                        queueing,
                        growing,
                        queue_free,
                        outgrew,
                        far_below,
                        bw = self.max_bw,
                        bw_at_probe = self.bw_at_probe,
                        up_base_bw = self.up_base_bw,
                        up_growth = ?self.up_growth,
                        inflight_hi = self.inflight_hi,
                        inflight,
                        "bbr: a ProbeBW Up round ends"
                    );
                }
                let rising_alone =
                    far_below && self.escalated_probe && !self.shares_the_bottleneck(now);
                if queueing || (done && !growing && !queue_free && !outgrew && !rising_alone) {
                    self.enter(now, Mode::ProbeBw(Phase::Down));
                } else if done {
                    if queue_free && far_below {
                        self.up_gain = (self.up_gain * UP_GAIN_STEP).min(MAX_UP_PACING_GAIN);
                        self.escalated_probe = true;
                    }
                    self.enter(now, Mode::ProbeBw(Phase::Up));
                }
            }
            Mode::ProbeRtt => {}
        }
        self.check_probe_rtt(now, rs);
    }

    /// Whether the next probe goes on with the last one's rise: a flow alone
    /// far below its recent peak (a bottleneck that slowed down and may have
    /// come back) whose last Up showed no queue and found more. A one-round
    /// Up never sees what it found: its flight is acknowledged in the round
    /// after it, by which time it ended, so each probe began again at 1.2
    /// and the estimate grew about 1.2× per probe cycle of four rounds.
    /// Through `pmdt-wanem`, a bottleneck back from 200 Mbit/s to 1 Gbit/s at
    /// 100 ms just after a probe overflowed at 200 Mbit/s grew 24.8 → 26.1 →
    /// 30.9 → 36.8 → 43.6 MB/s in four probes and 1.1 s, each Up ending
    /// after one round with its estimate not yet grown, and the rise took
    /// 2.2 s. Going on, the next probe starts escalated (as the Up after a
    /// queue-free round that found more does), and its run ends only on its
    /// own queue or loss. Only while the estimate is still far below the
    /// peak (the escalated run that found the peak again ends with its
    /// estimate there, and one more escalated probe would only overshoot),
    /// and only alone ([`Bbr::slowed_alone`]: beside another flow, a
    /// loss-based flow's backoff leaves spare room that is its share).
    pub(super) fn rising_run_goes_on(&mut self, now: Instant, grew: bool) {
        let goes_on = grew && self.rising_run == RisingRun::UpQueueFree && self.slowed_alone(now);
        if goes_on {
            tracing::debug!(
                bw = self.max_bw,
                bw_at_probe = self.bw_at_probe,
                peak = self.recent_peak.bw(),
                "bbr: the last probe found more with no queue; the next goes on escalated"
            );
        }
        self.rising_run = if goes_on {
            RisingRun::GoesOn
        } else {
            RisingRun::None
        };
    }

    /// Whether a gentle ProbeBW Up's flight went past the BDP of the
    /// estimate its run of Ups began with by twice the delay that shows as a
    /// queue ([`QUEUE_RTT_FLOOR`], [`QUEUE_FREE_RTT`]) with no queue in its
    /// samples: the pipe is larger than the bound an overflow set, which the
    /// gentle steps (1, 2, 4 … packets a round) regrow by a few per cent a
    /// probe. A bottleneck back from 200 Mbit/s to 1 Gbit/s at 100 ms, just
    /// after an overflow at 200 Mbit/s, took three gentle probes of eight
    /// rounds (the estimate −1, +5 and +8 %) and 5.2 s to be followed. At a
    /// pipe that did not grow the flight's excess over the BDP is a queue its
    /// samples show.
    ///
    /// The BDP is the run's first estimate's, not the current one's: a flight
    /// the bound holds is delivered at the minimum RTT, so the estimate
    /// follows the flight a round behind and the flight passes its BDP by one
    /// round's step only (under 2 × 2 ms at 25 MB/s until the eighth round's
    /// 128 packets). Measured against the current estimate, two gentle Ups
    /// after such an overflow (the estimate 24.6 → 27.9 → 32.3 MB/s, no
    /// sample queued) never fired, and the rise took 4.6 s.
    ///
    /// At the path's random loss the flight that delivers that BDP is larger
    /// by the loss's share (the pacer sends that much more; lost packets
    /// count in flight until their loss is found): at 5 % loss and 200 ms,
    /// 10 ms of the flight, more than twice the margin. Checked at every
    /// round instead of at the gentle Up's end (3b3a150), the rule without
    /// this fired on random loss alone: in the simulator 1 Gbit/s × 200 ms
    /// at 5 % lost 1.9 points of its steady state (88.0 → 86.1 %), through
    /// `pmdt-wanem` the 1 Gbit/s cells at 5 % about a point.
    ///
    /// Not while checks found another flow's queue lately: beside others
    /// the bound is regrown in equal steps after a shared cut
    /// ([`Self::regrow_after_shared_cut`]), and a flow whose share the
    /// others' cut left room for passes its first estimate's BDP with no
    /// queue. In the simulator's four flows joining 1 Gbit/s × 40 ms, that
    /// took Jain over seeds 1-16 from a mean of 0.974 to 0.968 (0.909 at
    /// worst).
    ///
    /// Nor past more than the pipe an overflow's cut took: the estimate may
    /// have grown between the cut and the run's first Up, and a flight the bound holds
    /// under that estimate's BDP never passes it. A probe at 200 Mbit/s
    /// whose overflow was found as the bottleneck came back to 1 Gbit/s
    /// (100 ms) cut the bound to 2.45 MB while the estimate of its last
    /// samples was 28 MB/s (2.8 MB): the flight passed the pipe by 8 %
    /// with no queue and the gentle Up went on for its eight rounds, and
    /// another, before the rise began (2.83 s in all).
    pub(super) fn gentle_probe_outgrew_the_pipe(&self, now: Instant) -> bool {
        let UpGrowth::Gentle { pipe } = self.up_growth else {
            return false;
        };
        let (Some(margin), Some(min)) = (self.queue_free_margin(), self.min_rtt) else {
            return false;
        };
        let base = match self.up_base_bw {
            0 => self.bw(),
            bw => bw,
        };
        // The flight that delivers it at the path's random loss: lost packets
        // count in flight until their loss is found.
        let past_base = base as f64 * (min + margin * 2).as_secs_f64() / (1.0 - self.loss_floor);
        // The overflow's pipe already holds the random loss's share.
        let past = pipe.map_or(past_base, |pipe| {
            past_base.min(pipe as f64 * (min + margin * 2).as_secs_f64() / min.as_secs_f64())
        });
        !self.shares_the_bottleneck(now)
            && self.up_samples.queue_free()
            && self.up_samples.max_tx_in_flight as f64 >= past
    }

    /// The rise over the minimum RTT within which a sample shows no queue
    /// ([`QUEUE_FREE_RTT`] of the minimum, at least [`QUEUE_RTT_FLOOR`]).
    fn queue_free_margin(&self) -> Option<Duration> {
        self.min_rtt
            .map(|m| QUEUE_RTT_FLOOR.max(m.mul_f64(QUEUE_FREE_RTT)))
    }

    pub(super) fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp_multiple(PROBE_RTT_CWND_GAIN).max(self.min_cwnd())
    }

    pub(super) fn check_probe_rtt(&mut self, now: Instant, rs: &RateSample) {
        let expired = self
            .probe_rtt_min_stamp
            .is_some_and(|t| now.saturating_duration_since(t) > PROBE_RTT_INTERVAL);
        if self.mode != Mode::ProbeRtt && expired && self.min_rtt.is_some() {
            tracing::debug!(
                min_rtt_us = self.min_rtt.map(|d| d.as_micros() as u64),
                probe_rtt_min_us = self.probe_rtt_min_delay.map(|d| d.as_micros() as u64),
                "bbr: ProbeRTT: no RTT as low as the minimum for the interval"
            );
            self.enter(now, Mode::ProbeRtt);
            self.probe_rtt_done = None;
            self.probe_rtt_round_done = false;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        match self.probe_rtt_done {
            None => {
                if rs.bytes_in_flight <= self.probe_rtt_cwnd() {
                    self.probe_rtt_done = Some(now + PROBE_RTT_DURATION);
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = rs.total_delivered;
                }
            }
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now >= done {
                    // The fresh minimum was measured: restart the timer.
                    self.probe_rtt_min_stamp = Some(now);
                    if self.full_bw_reached {
                        self.enter(now, Mode::ProbeBw(Phase::Down));
                    } else {
                        self.enter(now, Mode::Startup);
                    }
                }
            }
        }
    }
}
