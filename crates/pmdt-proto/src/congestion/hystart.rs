//! HyStart++ (RFC 9406): a slow start that leaves when the round-trip delay
//! rises, before the queue it is filling overflows.
//!
//! Standard slow start doubles the window every round trip until a loss: into a
//! deep queue it overshoots by up to the queue's size, and the losses that end
//! it cut the window to a fraction of what the path carried. HyStart++ watches
//! the smallest RTT of each round: once a round's is above the previous
//! round's by a threshold (an eighth of it, within 4-16 ms), the window grows
//! a quarter as fast (Conservative Slow Start) for five rounds, and then
//! congestion avoidance starts from it with no loss. A round whose smallest RTT
//! falls back under the one that started CSS was jitter: slow start resumes.
//!
//! RFC 9438 §4.10 says CUBIC SHOULD use it, and Linux's CUBIC leaves slow start
//! on a delay rise too (HyStart). The sender paces, so the growth per ack is not
//! limited (the RFC's `L = infinity` for a paced sender). Only the connection's
//! first slow start uses it: after a loss the controller's own recovery rules.

use std::time::Duration;

use super::RateSample;

/// Least rise of the round's smallest RTT that ends slow start.
const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
/// Most the threshold is.
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// The threshold is the previous round's smallest RTT over this, within
/// [`MIN_RTT_THRESH`, `MAX_RTT_THRESH`].
const MIN_RTT_DIVISOR: u32 = 8;
/// RTT samples a round needs before its smallest one counts.
const N_RTT_SAMPLE: u32 = 8;
/// Conservative Slow Start grows the window this many times slower.
pub(crate) const CSS_GROWTH_DIVISOR: u64 = 4;
/// Rounds of Conservative Slow Start before congestion avoidance.
const CSS_ROUNDS: u32 = 5;

/// Where the connection's first slow start is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Standard slow start: the window grows by what is acknowledged.
    SlowStart,
    /// Conservative Slow Start, since a round's smallest RTT rose to
    /// `baseline`; `rounds` of it have ended.
    Conservative {
        /// The round's smallest RTT that started it.
        baseline: Duration,
        /// Rounds of it that have ended.
        rounds: u32,
    },
    /// Over: congestion avoidance (or the controller's recovery after a loss).
    Done,
}

/// What a rate sample made of the slow start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing changed that the controller acts on.
    Continue,
    /// Conservative Slow Start ran its rounds: congestion avoidance starts now,
    /// from the current window, with no loss behind it.
    EnterCongestionAvoidance,
}

/// HyStart++'s state: the phase and the rounds' smallest RTTs.
#[derive(Debug, Clone)]
pub(crate) struct HyStart {
    phase: Phase,
    /// Delivered bytes at which the current round ends (an ack of a packet
    /// sent after the round began: BBR's round counting), `None` before the
    /// first sample.
    round_end: Option<u64>,
    last_round_min: Option<Duration>,
    current_round_min: Option<Duration>,
    samples: u32,
}

impl Default for HyStart {
    fn default() -> Self {
        Self {
            phase: Phase::SlowStart,
            round_end: None,
            last_round_min: None,
            current_round_min: None,
            samples: 0,
        }
    }
}

impl HyStart {
    /// The phase.
    #[cfg(test)]
    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// How much the window grows for `acked` newly acknowledged bytes in slow
    /// start (a quarter in Conservative Slow Start).
    pub(crate) fn growth(&self, acked: u64) -> u64 {
        match self.phase {
            Phase::SlowStart | Phase::Done => acked,
            Phase::Conservative { .. } => acked / CSS_GROWTH_DIVISOR,
        }
    }

    /// A loss (or any congestion event): slow start is over for good.
    pub(crate) fn on_congestion(&mut self) {
        self.phase = Phase::Done;
    }

    /// One ack's sample: its RTT (as the path made it, the receiver's ack
    /// delay and the sender's late reading taken out) and the round it ends.
    pub(crate) fn on_rate_sample(&mut self, rs: &RateSample) -> Verdict {
        if self.phase == Phase::Done {
            return Verdict::Continue;
        }
        if self.round_end.is_none_or(|end| rs.prior_delivered >= end) {
            self.round_end = Some(rs.total_delivered);
            self.last_round_min = self.current_round_min.take();
            self.samples = 0;
            if let Phase::Conservative { baseline, rounds } = self.phase {
                let rounds = rounds + 1;
                if rounds >= CSS_ROUNDS {
                    tracing::debug!(
                        baseline_us = baseline.as_micros() as u64,
                        "hystart++: conservative slow start over, congestion avoidance"
                    );
                    self.phase = Phase::Done;
                    return Verdict::EnterCongestionAvoidance;
                }
                self.phase = Phase::Conservative { baseline, rounds };
            }
        }
        let current = self.current_round_min.map_or(rs.rtt, |m| m.min(rs.rtt));
        self.current_round_min = Some(current);
        self.samples += 1;
        if self.samples < N_RTT_SAMPLE {
            return Verdict::Continue;
        }
        match self.phase {
            Phase::SlowStart => {
                if let Some(last) = self.last_round_min {
                    let thresh = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if current >= last + thresh {
                        tracing::debug!(
                            last_round_min_us = last.as_micros() as u64,
                            round_min_us = current.as_micros() as u64,
                            "hystart++: the delay rose, conservative slow start"
                        );
                        self.phase = Phase::Conservative {
                            baseline: current,
                            rounds: 0,
                        };
                    }
                }
            }
            Phase::Conservative { baseline, .. } => {
                if current < baseline {
                    // The rise was jitter: back to slow start.
                    tracing::debug!(
                        round_min_us = current.as_micros() as u64,
                        baseline_us = baseline.as_micros() as u64,
                        "hystart++: the delay fell back, slow start again"
                    );
                    self.phase = Phase::SlowStart;
                }
            }
            Phase::Done => {}
        }
        Verdict::Continue
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A sample that ends no round unless `prior_delivered` reaches the
    /// round's end.
    pub(in crate::congestion) fn sample(
        rtt_ms: u64,
        prior_delivered: u64,
        total_delivered: u64,
    ) -> RateSample {
        let rtt = Duration::from_millis(rtt_ms);
        RateSample {
            delivery_rate: 0,
            delivered: 0,
            interval: rtt,
            is_app_limited: false,
            is_credit_limited: false,
            rtt,
            standing_rtt: rtt,
            raw_rtt: rtt,
            prior_delivered,
            total_delivered,
            newly_acked: 1500,
            newly_lost: 0,
            lost: 0,
            tx_in_flight: 0,
            bytes_in_flight: 0,
            sent_catching_up: None,
        }
    }

    /// Feeds `n` samples of `rtt_ms` as one round (the first starts it), the
    /// round's data starting at `*delivered`.
    fn round(h: &mut HyStart, delivered: &mut u64, rtt_ms: u64, n: u32) -> Vec<Verdict> {
        let start = *delivered;
        (0..n)
            .map(|i| {
                // The first sample is of a packet sent after the previous
                // round began (it ends that round); the rest of packets sent
                // before this round's end.
                let prior = if i == 0 {
                    start
                } else {
                    start.saturating_sub(1)
                };
                *delivered += 1500;
                h.on_rate_sample(&sample(rtt_ms, prior, *delivered))
            })
            .collect()
    }

    /// A fresh state after a round of 10 samples at each of `rtts_ms`, and the
    /// delivered count to go on from.
    fn after_rounds(rtts_ms: &[u64]) -> (HyStart, u64) {
        let mut h = HyStart::default();
        let mut d = 0;
        for &rtt in rtts_ms {
            round(&mut h, &mut d, rtt, 10);
        }
        (h, d)
    }

    #[test]
    fn a_delay_rise_starts_conservative_slow_start_and_five_rounds_end_it() {
        let (mut h, mut d) = after_rounds(&[40, 41]);
        assert_eq!(
            h.phase(),
            Phase::SlowStart,
            "1 ms is under the 5-ms threshold"
        );
        assert_eq!(h.growth(3000), 3000);
        // A round whose smallest RTT is 6 ms over the last one's (the
        // threshold: 41 ms / 8 = 5.1 ms).
        round(&mut h, &mut d, 47, 10);
        assert!(matches!(h.phase(), Phase::Conservative { rounds: 0, .. }));
        assert_eq!(h.growth(3000), 3000 / CSS_GROWTH_DIVISOR);
        for r in 1..CSS_ROUNDS {
            let v = round(&mut h, &mut d, 48, 10);
            assert!(v.iter().all(|v| *v == Verdict::Continue));
            assert!(matches!(h.phase(), Phase::Conservative { rounds, .. } if rounds == r));
        }
        let v = round(&mut h, &mut d, 48, 10);
        assert_eq!(v[0], Verdict::EnterCongestionAvoidance);
        assert_eq!(h.phase(), Phase::Done);
        assert!(round(&mut h, &mut d, 90, 10)
            .iter()
            .all(|v| *v == Verdict::Continue));
    }

    #[test]
    fn a_round_back_under_the_baseline_resumes_slow_start() {
        let (mut h, mut d) = after_rounds(&[40, 50]);
        assert!(matches!(h.phase(), Phase::Conservative { .. }));
        round(&mut h, &mut d, 40, 10);
        assert_eq!(h.phase(), Phase::SlowStart, "the rise was jitter");
    }

    #[test]
    fn too_few_samples_or_a_loss_decide_nothing_or_end_it() {
        let (mut h, mut d) = after_rounds(&[40]);
        round(&mut h, &mut d, 90, N_RTT_SAMPLE - 1);
        assert_eq!(
            h.phase(),
            Phase::SlowStart,
            "seven samples are not a round's"
        );
        // The round's eighth.
        d += 1500;
        h.on_rate_sample(&sample(90, 0, d));
        assert!(matches!(h.phase(), Phase::Conservative { .. }));
        h.on_congestion();
        assert_eq!(h.phase(), Phase::Done);
        assert_eq!(h.growth(3000), 3000);
    }

    /// The threshold is an eighth of the previous round's smallest RTT within
    /// 4 and 16 ms: 4 ms at 10 ms, 16 ms at 200 ms.
    #[test]
    fn the_threshold_is_an_eighth_within_4_and_16_ms() {
        for (base, under, over) in [(10, 13, 14), (200, 215, 216)] {
            let (h, _) = after_rounds(&[base, under]);
            assert_eq!(h.phase(), Phase::SlowStart, "{base} → {under} ms");
            let (h, _) = after_rounds(&[base, over]);
            assert!(
                matches!(h.phase(), Phase::Conservative { .. }),
                "{base} → {over} ms"
            );
        }
    }
}
