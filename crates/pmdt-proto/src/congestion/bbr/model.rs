//! The model's upkeep: the bandwidth filter and its samples, ack aggregation,
//! the minimum RTT, and the pacing rate and window they give.

use std::time::{Duration, Instant};

use super::{
    Bbr, Mode, Phase, BW_FILTER_ROUNDS, INITIAL_CWND_PACKETS, PACING_MARGIN, PROBE_RTT_INTERVAL,
    QUEUE_RTT_FLOOR, STARTUP_PACING_GAIN,
};
use crate::congestion::delivery_rate::RateSample;
use crate::rtt::RttEstimator;

/// Window of the min RTT filter (draft: MinRTTFilterLen = 10 s).
const MIN_RTT_FILTER_LEN: Duration = Duration::from_secs(10);
/// Rounds the ack-aggregation maximum remembers (draft: BBRExtraAckedFilterLen =
/// 10), kept as two slots of half that each.
const EXTRA_ACKED_SLOT_ROUNDS: u64 = 5;
/// Ack aggregation is allowed for when the smoothed RTT is at least this many
/// minimum RTTs (acks batched by the peer's poll loop, or a loop shared by many
/// connections, not queueing on a path)...
const AGGREGATION_DOMINATES_RTT_RATIO: u32 = 4;
/// ...and the window's send quanta (and the aggregation too) where it is at
/// least this many...
const BATCHING_RTT_RATIO: u32 = 2;
/// ...and exceeds it by less than this: a poll loop's bursts take microseconds
/// to tens of them, never a millisecond. (The ratio of 4 alone read a busy memif
/// pair's 16 µs against 4 µs as a queue in some runs, and the window then idled
/// a third of the transfer.)
const MAX_BATCHING_DELAY: Duration = Duration::from_millis(1);

/// Largest ratio of a round's RTT to the minimum by which Startup's window
/// grows (see `Bbr::cwnd_bdp`): behind a queue as deep as the round trip.
const MAX_STARTUP_RTT_RATIO: f64 = 2.0;

impl Bbr {
    /// Ack aggregation (draft: BBRUpdateACKAggregation): bytes acknowledged beyond
    /// what the bandwidth estimate explains since the current interval began. Acks
    /// that arrive in batches (delayed acks, a poll-mode receiver that handles a
    /// burst per iteration) need that much more in flight, or a path whose minimum
    /// RTT is a few microseconds gets a window of a few packets and idles between
    /// batches.
    pub(super) fn update_ack_aggregation(&mut self, now: Instant, rs: &RateSample) {
        if self.round_start {
            self.extra_acked_slot_rounds += 1;
            if self.extra_acked_slot_rounds >= EXTRA_ACKED_SLOT_ROUNDS {
                self.extra_acked_slot_rounds = 0;
                self.extra_acked_slot ^= 1;
                self.extra_acked_max[self.extra_acked_slot] = 0;
            }
        }
        let start = *self.extra_acked_interval_start.get_or_insert(now);
        let mut expected =
            (self.bw() as f64 * now.saturating_duration_since(start).as_secs_f64()) as u64;
        if self.extra_acked_delivered <= expected {
            // Acks at or below the expected rate: a new interval.
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = Some(now);
            expected = 0;
        }
        self.extra_acked_delivered += rs.newly_acked;
        let extra = self
            .extra_acked_delivered
            .saturating_sub(expected)
            .min(self.cwnd);
        let slot = &mut self.extra_acked_max[self.extra_acked_slot];
        *slot = (*slot).max(extra);
        // Only where batching dominates the path (the smoothed RTT several times
        // its minimum: a poll-mode peer microseconds away whose acks come in
        // bursts), and at most what that extra delay carries at the estimated
        // rate. On a long path the minimum RTT dominates; there extra data in
        // flight would only queue (and take a shared bottleneck from other flows).
        let min_rtt = self.min_rtt.unwrap_or(self.srtt);
        let cap = if self.aggregation_dominates() || self.batching_dominates() {
            (self.bw() as f64 * (self.srtt - min_rtt).as_secs_f64()) as u64
        } else {
            0
        };
        self.extra_acked = self.extra_acked_max[0]
            .max(self.extra_acked_max[1])
            .min(cap);
    }

    /// Whether the smoothed RTT is several minimum RTTs: a poll-mode peer whose
    /// acks come in bursts, or an I/O loop that takes turns among many
    /// connections (1000 flows on one host: milliseconds of smoothed RTT on a
    /// path of microseconds).
    pub(super) fn aggregation_dominates(&self) -> bool {
        self.min_rtt
            .is_some_and(|min_rtt| self.srtt >= min_rtt * AGGREGATION_DOMINATES_RTT_RATIO)
    }

    /// Whether a poll loop's bursts dominate the RTT: the smoothed RTT at least
    /// twice the minimum, but within a millisecond of it (never on a path with
    /// a minimum RTT of a millisecond or more).
    pub(super) fn batching_dominates(&self) -> bool {
        self.min_rtt.is_some_and(|min_rtt| {
            self.srtt >= min_rtt * BATCHING_RTT_RATIO && self.srtt - min_rtt < MAX_BATCHING_DELAY
        })
    }

    pub(super) fn update_max_bw(&mut self, rs: &RateSample) {
        let slot = (self.round_count % BW_FILTER_ROUNDS as u64) as usize;
        if self.round_start {
            self.bw_rounds[slot] = 0;
        }
        let rate = self.filter_sample(rs);
        if rate > 0 && (!rs.is_app_limited || rate >= self.max_bw) {
            self.bw_rounds[slot] = self.bw_rounds[slot].max(rate);
        }
        self.max_bw = self.bw_rounds.iter().copied().max().unwrap_or(0);
    }

    /// What a sample may add to the bandwidth filter: a probe's samples (ProbeBW
    /// Up until a round after it, when its packets are acknowledged) without
    /// what the probe's own queue gave them. Pushing into a full bottleneck, the
    /// queue grows and this flow's packets take a larger share of its output:
    /// the rate rises by what other flows lose, not by spare capacity (beside a
    /// CUBIC flow in a 0.2-BDP buffer each probe raised the estimate 2-5 %, and
    /// probe after probe BBR took 80 % of the link). A probe into spare
    /// capacity builds no queue and keeps its whole sample; one that builds a
    /// queue keeps it scaled by the RTT before it (the smallest of the round
    /// before Up, plus [`QUEUE_RTT_FLOOR`] for jitter and a poll loop's bursts)
    /// over the sample's RTT.
    ///
    /// Samples outside probes count as they are. Capping Cruise's samples at
    /// the estimate (a flow paced at a rate delivers no faster; through the
    /// real tools the estimate rose 3-8 % a second between probes beside CUBIC)
    /// took a sender sharing its core (4 ms on, 6 ms off) from 96 % of the link
    /// to 76 %: the bursts that catch up its pacing schedule are what hold its
    /// estimate.
    pub(super) fn filter_sample(&self, rs: &RateSample) -> u64 {
        if let Some(base) = self.probe_base_rtt {
            let allowed = base + QUEUE_RTT_FLOOR;
            let rtt = self.sample_standing_rtt(rs);
            if rtt <= allowed {
                return rs.delivery_rate;
            }
            return (rs.delivery_rate as f64 * allowed.as_secs_f64() / rtt.as_secs_f64()) as u64;
        }
        rs.delivery_rate
    }

    pub(super) fn update_min_rtt(&mut self, now: Instant, rs: &RateSample) {
        let sample = self.sample_rtt(rs);
        if sample.is_zero() {
            return;
        }
        let expired = self
            .probe_rtt_min_stamp
            .is_none_or(|t| now.saturating_duration_since(t) > PROBE_RTT_INTERVAL);
        if self.probe_rtt_min_delay.is_none_or(|m| sample <= m) || expired {
            self.probe_rtt_min_delay = Some(sample);
            self.probe_rtt_min_stamp = Some(now);
        }
        let min_expired = self
            .min_rtt_stamp
            .is_none_or(|t| now.saturating_duration_since(t) > MIN_RTT_FILTER_LEN);
        let d = self.probe_rtt_min_delay.unwrap_or(sample);
        if self.min_rtt.is_none_or(|m| d < m) || min_expired {
            self.min_rtt = Some(d);
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
    }

    pub(super) fn update_pacing_rate(&mut self, rtt: &RttEstimator) {
        let bw = self.bw();
        let srtt = rtt.smoothed().as_secs_f64().max(1e-3);
        let rate = if bw == 0 {
            // No model yet: the initial window per RTT, times the Startup gain.
            STARTUP_PACING_GAIN * self.cwnd as f64 / srtt
        } else if matches!(
            self.mode,
            Mode::ProbeBw(Phase::Cruise) | Mode::ProbeBw(Phase::Refill)
        ) {
            // Cruising at the estimate itself: the margin exists to drain a queue
            // the estimate's error builds, and ProbeBW Down drains each cycle's
            // queue already; 1 % below the estimate would leave the link 1 % idle
            // for good.
            let check = if self.mode == Mode::ProbeBw(Phase::Cruise) {
                self.queue_owner.pacing_gain(self.round_count)
            } else {
                1.0
            };
            let climb = if self.mode == Mode::ProbeBw(Phase::Cruise) {
                self.shared_climb_rate()
            } else {
                0.0
            };
            (self.pacing_gain * check * bw as f64 + climb) / (1.0 - self.loss_floor)
        } else if matches!(self.mode, Mode::ProbeBw(_)) {
            self.pacing_gain * bw as f64 * (1.0 - PACING_MARGIN) / (1.0 - self.loss_floor)
        } else {
            self.pacing_gain * bw as f64 * (1.0 - PACING_MARGIN)
        };
        // Never below the window's floor per smoothed round trip: the window
        // lets that much out whatever the estimate. Paced slower, a flow whose
        // estimate collapsed (one of 1000 sharing a loop, starved for ten
        // rounds) delivers no faster than it is paced, and each probe can lift
        // an estimate of a few kB/s by a fifth only per cycle of single-packet
        // rounds: through the tools, such flows sent one datagram a second for
        // ten seconds.
        let floor = self.min_cwnd() as f64 / srtt;
        let mut rate = rate.max(floor).max(1.0) as u64;
        if let Some(saved) = self.resumed_bw.filter(|_| self.mode == Mode::Startup) {
            // Resumed: not past the saved path's rate (see `Bbr::resume`).
            rate = rate.min(saved);
        }
        // Startup never lowers the rate before the pipe is full (draft:
        // BBRSetPacingRateWithGain).
        self.pacing_rate = match self.pacing_rate {
            Some(old) if !self.full_bw_reached && rate < old => Some(old),
            _ => Some(rate),
        };
    }

    pub(super) fn update_cwnd(&mut self, rs: &RateSample) {
        if let Some(prior) = self.prior_cwnd.take() {
            self.cwnd = self.cwnd.max(prior);
        }
        // Draft: BBRUpdateMaxInflight (BDP × gain + ack aggregation + quanta).
        let target = self.cwnd_bdp() + self.extra_acked + self.window_quanta();
        if self.full_bw_reached {
            self.cwnd = (self.cwnd + rs.newly_acked).min(target);
        } else if self.cwnd < target || rs.total_delivered < INITIAL_CWND_PACKETS * self.mss {
            self.cwnd += rs.newly_acked;
        }
        self.cwnd = self.cwnd.max(self.min_cwnd());
    }

    /// The window's share of the model: `cwnd_gain` BDPs, the BDP over the last
    /// round's smallest RTT while another flow keeps a queue standing in
    /// ProbeBW, and in Startup. Behind that queue this flow's packets wait too,
    /// so a window of the propagation delay's BDP would hold its rate to a
    /// fraction of its estimate (2 BDPs against a 2-BDP queue: two thirds), and
    /// the estimate would follow it down; the rate stays the pacer's.
    ///
    /// In Startup the window must let the rate double per round: a flow that
    /// joined behind a queue as deep as the round trip (CUBIC filling a 5 MiB
    /// buffer at 1 Gbit/s × 40 ms) sent 2 BDPs of the minimum RTT per round
    /// trip of twice that, its estimate stopped growing, and Startup ended on
    /// that queue at 4.8 Mbit/s (16.4 % of the link from 7.5 s to 30 s, CUBIC
    /// 81.5; with the round's RTT 27.7-30.9 % over seeds 1-6 in the
    /// simulator). A flow alone's rounds show at most the queue Startup's
    /// exit tolerates (2 % of the minimum RTT, at least 2 ms) until its own
    /// ends Startup; the ratio is capped at [`MAX_STARTUP_RTT_RATIO`] (a queue
    /// as deep as the round trip), so at a 1 ms minimum those 2 ms cannot
    /// triple the window.
    pub(super) fn cwnd_bdp(&self) -> u64 {
        let bdp = self.bdp_multiple(self.cwnd_gain);
        match (self.prev_round_min_rtt, self.min_rtt) {
            (Some(round), Some(min)) if self.shared_queue && !min.is_zero() => {
                (bdp as f64 * round.as_secs_f64() / min.as_secs_f64()) as u64
            }
            (Some(round), Some(min)) if !self.full_bw_reached && !min.is_zero() => {
                let ratio = (round.as_secs_f64() / min.as_secs_f64()).min(MAX_STARTUP_RTT_RATIO);
                (bdp as f64 * ratio) as u64
            }
            _ => bdp,
        }
    }

    /// The window after the bounds (draft: BBRBoundCwndForModel / ProbeRTT).
    pub(super) fn bounded_cwnd(&self) -> u64 {
        let mut cap = u64::MAX;
        // BBRv3 cruises 15 % below inflight_hi (BBRHeadroom) to leave room for new
        // flows; with inflight_hi near one BDP that leaves the link 15 % idle, so the
        // bound is inflight_hi itself here.
        if let Some(hi) = self.inflight_hi {
            cap = hi;
        }
        if let Some(lo) = self.inflight_lo {
            cap = cap.min(lo);
        }
        if self.mode == Mode::ProbeRtt {
            cap = cap.min(self.probe_rtt_cwnd());
        }
        self.cwnd.min(cap).max(self.min_cwnd())
    }
}
