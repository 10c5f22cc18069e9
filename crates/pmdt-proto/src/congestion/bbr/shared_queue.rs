//! A queue another flow keeps standing: whose it is, the probes that wait for
//! it, the yields, climbs and cuts that share a bottleneck.

use std::time::{Duration, Instant};

use super::loss::Overshoot;
use super::{
    Bbr, Mode, Phase, UpGrowth, BETA, CRUISE_ROUNDS, GENTLE_FIRST_STEP_PACKETS, HIGH_LOSS_THRESH,
    INFLIGHT_HI_GROWTH, MAX_SHARED_CRUISE_ROUNDS, OWN_CONGESTION_MEMORY, PROBE_UP_PACING_GAIN,
    QUEUE_DEPTH_SLOT, QUEUE_DRAINED_MEMORY_RTTS, QUEUE_RTT_FLOOR, RENO_COEXISTENCE_MAX_LOSS,
    STARTUP_QUEUE_RTT_FRACTION,
};
use crate::congestion::queue_owner::{CheckPurpose, QueueOwner};

/// Time between probes while another flow keeps a queue standing, or for a
/// flow alone on a path without random loss (BBRv3's bw_probe_wait, 2-3 s),
/// counted in rounds of the minimum RTT, unless the window's packets make
/// fewer rounds ([`MAX_SHARED_CRUISE_ROUNDS`]).
const SHARED_PROBE_WAIT: Duration = Duration::from_secs(2);
/// A queue a flow alone puts its next probe off for (see
/// [`Bbr::probe_put_off_for_a_queue`]), and a flow ahead of its siblings
/// beside a loss-based flow holds back for (`Bbr::holds_back_ahead`): the
/// least rise of a round's every RTT over the minimum.
pub(super) const PROBE_PUT_OFF_QUEUE: Duration = Duration::from_micros(500);
/// … for at most this many times the rounds its Cruise was to last.
pub(super) const PROBE_PUT_OFF_MAX: u64 = 2;
/// A round's delivery rate at least this share of the estimate it paced at
/// means its queue is not this flow's making.
const SHARED_DELIVERY_SHARE: f64 = 0.9;
/// Extra rounds on top of the shared probe wait, from the round's delivered
/// count (so flows do not probe in lockstep).
const SHARED_PROBE_WAIT_JITTER: u64 = 8;
/// The most a flow alone's own queue costs a round beyond the typical
/// round's loss when it overflows the buffer: a flow pacing at its
/// estimate, a little above the link's rate (0.5-0.8 % through
/// `pmdt-wanem`), loses about that excess once the buffer is full (session
/// 96's run at 1 Gbit/s × 200 ms: 98 of 17,291 datagrams, 0.57 %). A
/// loss-based flow's slow start joining costs 6-19 % of a round (see
/// [`SHARED_CUT_MAX_EXCESS`]). An overflow
/// under a check of whose queue stands that loses no more waits for the
/// check's verdict ([`Bbr::overflow_says_another_flow`]).
const OWN_OVERFLOW_MAX_EXCESS: f64 = 0.02;
/// Fewest datagrams a round must lose for a shared queue's overflow to cut
/// `inflight_hi` (see [`Bbr::cut_for_shared_queue`]): one loss in a round is
/// as likely a stray as an overflow.
const SHARED_CUT_MIN_LOST_PACKETS: u64 = 2;
/// A round's loss must exceed the path's random loss by this many standard
/// deviations of its binomial noise in a round of that many datagrams before
/// it counts as a shared queue's overflow (random loss alone must not cut).
const SHARED_CUT_SIGMAS: f64 = 4.0;
/// … and by at most this share of the round, the high-loss threshold,
/// above which loss is this flow's own congestion whatever the queue shows
/// ([`Bbr::inflight_too_high`], judged sample by sample: a round that
/// overflows near the threshold can be both), answered by the short-term
/// bounds. A shared queue's overflow costs each flow 0.2-3 % of a round,
/// and a CUBIC flow's slow start joining it 6-19 % for two or three rounds.
/// With the bound at 5 % (until session 84) BBR cut only after those
/// rounds, each a loss event that cut CUBIC again; at 8 % (until session
/// 91) a round that lost 10-17 % was taken for this flow's own overshoot
/// and answered by nothing (under the high-loss threshold, in a queue too
/// shallow to show in the RTT): through `pmdt-wanem`, CUBIC joining BBR
/// through 1 MiB at 1 Gbit/s × 40 ms, BBR kept pacing into the full
/// buffer; in 4 of the 19 runs read interval by interval, CUBIC was cut
/// three times within 0.8 s (1.30-1.45 → 0.41-0.46 MB), and 3 of those 4
/// left BBR over 3/4 of the link from 15 s to 60 s (74.8-81.5 %).
///
/// A flow in Cruise past its probe's flights (where
/// [`Bbr::overflow_says_another_flow`] looks) paces at its estimate and
/// has no overshoot of its own there; beside other flows a probe's
/// overflow, shown in Down, is cut to as well. A flow alone whose
/// bottleneck slows by less than the threshold behind a queue too shallow
/// to show in the RTT takes the loss for another flow's too: its probes
/// wait and its bound is cut to 0.7, then regrown.
const SHARED_CUT_MAX_EXCESS: f64 = HIGH_LOSS_THRESH;
/// … and by at most this share once a second check confirmed another
/// flow's queue ([`AnotherFlow::confirmed`]): under a joiner's Startup, which
/// sends up to twice the link's rate into the full queue for a round, the
/// flows already there lose a fifth to over a quarter of a sample, and a
/// small flow's round is a small sample. More than a third is the path falling
/// under this flow's rate ([`PATH_FELL_ROUND_LOSS`]; a fall from 1 Gbit/s
/// to 200 Mbit/s loses 52-58 % of the next rounds), congestion of its own
/// whatever the verdicts say.
///
/// Through `pmdt-wanem`, four flows joining 1 Gbit/s × 40 ms 2 s apart (the
/// adapt suite's cell): the fourth flow's Startup cost the flows already
/// there 20.0-27.0 % of a sample in session 94's two logged runs
/// (`docs/bench/ab-s94/dbg4j`), and the joiners' Startups 20.0-43.4 % in
/// 14 samples of four of this session's six logged runs (one sample, at
/// 43.4 %, is beyond even this bound). Taken for congestion of their own,
/// the flows held the short-term bounds and did not climb or cut to the
/// shared overflows for 2 s or more: one flow's estimate stayed at 23-24
/// Mbit/s for over 2 s, a tenth of its share. Ten runs alternated with the
/// bound at the high-loss threshold (`docs/bench/ab-s95`): Jain
/// 0.931-0.996 (mean 0.980) with this bound, 0.866-0.994 (mean 0.964)
/// without; better in 8 of the 10 pairs. The simulator's cells, whose
/// overflows cost a sample less, did not change.
const CONFIRMED_SHARED_MAX_EXCESS: f64 = PATH_FELL_ROUND_LOSS;
/// A round's every RTT must show at least this share of the deepest queue
/// that stood through a round lately ([`QUEUE_DEPTH_SLOT`]) for its loss to
/// count as a shared queue's overflow: a drop-tail queue drops only when full. Four flows
/// joining 1 Gbit/s × 40 ms lost in rounds whose smallest RTT showed 5.3-8.4
/// ms of the 8.4 ms queue; one flow at 100 Mbit/s × 100 ms with 1 % random
/// loss lost its usual share in rounds with 2 ms of its own queue (of the
/// 84 ms Startup filled), and was cut.
const SHARED_CUT_QUEUE_DEPTH: f64 = 0.5;
/// Largest step, packets a round, by which Cruise regrows `inflight_hi` after
/// a cut to a shared queue (from [`GENTLE_FIRST_STEP_PACKETS`], doubling).
/// A constant step is additive increase: the same for every flow, so each cut
/// and regrowth brings the shares closer. In the simulator's four flows
/// joining 1 Gbit/s × 40 ms (Jain over five seeds): a cap of 16 packets gave
/// 0.77-0.98 (mean 0.91), 32 gave 0.91-0.97 (mean 0.95): with smaller steps
/// the aggregate regains a 30 % cut over more rounds, and overflows, which
/// are what even the shares out, come less often. A cut to [`BETA`] × 8/7
/// (0.8) instead gave 0.70-0.78.
const SHARED_REGROW_MAX_STEP_PACKETS: u64 = 32;
/// Largest step, packets a round, by which Cruise's pacing climbs above the
/// estimate beside other flows ([`Bbr::climb_beside_others`]): from
/// [`GENTLE_FIRST_STEP_PACKETS`], doubling each round. In the simulator's
/// four flows through 1 Gbit/s × 40 ms and a 1 MiB queue (Jain over 20 s
/// for flows starting 100 ms apart, over the last 10 s for flows joining
/// 2 s apart; seeds 1-8, steps restarting at cuts only): a cap of 32
/// packets gave 0.90 and 0.97, 128 gave 0.94 and 0.98, 512 gave 0.93 and
/// 0.93 (steps that large overflow the queue within a round, and the
/// shares move with whichever flow's packets it dropped).
const SHARED_CLIMB_MAX_STEP_PACKETS: u64 = 128;
/// The share of the deepest queue lately that one round of ProbeBW Up
/// beside other flows may queue ([`Bbr::up_gain_beside_others`]): the rest
/// is the other flows' room, so the probe does not overflow the buffer.
const UP_QUEUE_SHARE_OF_DEEPEST: f64 = 0.5;
/// The smallest ProbeBW Up gain beside other flows: a probe that queues less
/// than 3 % of the RTT cannot tell more bandwidth from the estimate's noise.
pub(super) const UP_GAIN_BESIDE_OTHERS_MIN: f64 = 1.03;
/// A round that lost at least this share of its datagrams beyond the
/// path's random loss says the path fell under this flow's rate: a single
/// verdict of another flow's queue is forgotten
/// ([`Bbr::forget_a_verdict_the_path_fell_under`]). Through `pmdt-wanem`, 1 Gbit/s
/// falling to 200 Mbit/s at 40 ms lost 52-58 % of the next rounds; a probe's
/// overshoot loses 10-14 % of a round, a shared queue's overflow 0.2-3 % (a
/// CUBIC joiner's slow start 6-19 %).
pub(super) const PATH_FELL_ROUND_LOSS: f64 = 1.0 / 3.0;
/// … in a round of at least this many datagrams (a small flight's loss is
/// noise).
pub(super) const PATH_FELL_MIN_DATAGRAMS: f64 = 16.0;
/// Fewest rounds between two cuts to a shared queue: the round after a cut
/// still carries the flight sent before it (its loss is the old flight's).
const SHARED_CUT_EVERY_ROUNDS: u64 = 2;

impl Bbr {
    /// The queue a round's smallest RTT showed: how far it is above the
    /// minimum (zero before either is known).
    pub(super) fn queue_in(&self, round_min: Option<Duration>) -> Duration {
        round_min
            .zip(self.min_rtt)
            .map_or(Duration::ZERO, |(r, m)| r.saturating_sub(m))
    }

    /// The queue this flow's flight holds by Little's law: what it has in
    /// flight beyond what the last round delivered over the minimum RTT, as
    /// time at that rate (the estimate if lower; zero before either is
    /// known).
    ///
    /// A round's smallest RTT is its earliest packets' queue: while Cruise
    /// at an estimate above the link's rate builds a queue, the flight
    /// already holds more. A check sized by the RTT's queue left the rest
    /// standing, and a flow alone took it for another flow's: through
    /// `pmdt-wanem` at 200 Mbit/s × 40 ms, a one-round ProbeBW Up raised the
    /// estimate to 26.8 MB/s (the link delivers 24.3), two Cruise rounds
    /// built 4.2 ms by the RTT while the flight (1.26 MB against a 0.97 MB
    /// BDP) held 12 ms; the check paced 0.89 of the estimate, 4.2 ms stood
    /// after it, and the next probe waited 2 s. Beside other flows the
    /// flight holds this flow's share of their queue at the rate it
    /// delivers, the same time as its RTT shows, but a flow climbing above
    /// its estimate ([`Self::climb_beside_others`]) holds more: sized by
    /// its flight, the first flow of four joining 1 Gbit/s × 40 ms in the
    /// simulator found its own queue in 9-15 checks instead of 1-8, probed
    /// that much more often, and kept 330-365 Mbit/s (Jain over seeds 1-16
    /// 0.897-0.996, mean 0.965, against 0.950-0.999, mean 0.981). So the
    /// flight sizes the check only until a second check confirmed another
    /// flow's queue ([`AnotherFlow::confirmed`]). Until session 60 one
    /// verdict was enough, and one the processes' scheduling fooled
    /// confirmed itself: through `pmdt-wanem` at 40 ms, a flow alone found
    /// 2.6 ms still standing after a check at 1 Gbit/s, the link fell to
    /// 200 Mbit/s, and checks there sized by the RTT (2.6 ms) left the
    /// 11 ms its flight held standing: a second verdict, ten seconds of
    /// 2 s probe waits, and the rise back to 1 Gbit/s found 2.4 s late.
    /// With one verdict sizing by the RTT no more, the simulator's joining
    /// flows gave Jain 0.951-0.994 over seeds 1-16 (mean 0.978; 0.931-0.999,
    /// mean 0.971 before).
    pub(super) fn flight_queue(&self) -> Duration {
        let rate = match self.prev_bw_latest {
            0 => self.bw(),
            delivered => delivered.min(self.bw()),
        };
        match self.min_rtt {
            Some(min) if rate > 0 => Duration::from_secs_f64(
                (self.bytes_in_flight as f64 / rate as f64 - min.as_secs_f64()).max(0.0),
            ),
            _ => Duration::ZERO,
        }
    }

    /// Whether `round_min` (a round's smallest RTT) shows any queue: Startup's
    /// margin over the minimum.
    pub(super) fn standing_queue(&self, round_min: Option<Duration>) -> bool {
        round_min.zip(self.min_rtt).is_some_and(|(r, min)| {
            r > min + min.mul_f64(STARTUP_QUEUE_RTT_FRACTION).max(QUEUE_RTT_FLOOR)
        })
    }

    /// At a round's end: whether the queue every RTT of it showed is another
    /// flow's, typically a loss-based one's that fills the buffer until it
    /// drops. It counts as another flow's (the window covers its delay) until
    /// a check in Cruise ([`QueueOwner`]: a round paced below the estimate
    /// drains a queue of this flow's own) finds it this flow's; only a queue
    /// that stood through a check makes the next probe wait. Not
    /// when this flow met congestion of its own lately (its loss says its rate
    /// overshot the path, e.g. a bottleneck that slowed down: the queue is its
    /// own, and it must go on probing to find the path's rate again), nor when
    /// it delivered less than it paced (a queue of its own growing). After
    /// such congestion a standing queue is drained instead: the same check
    /// runs ([`CheckPurpose::Drain`]), again while the queue stands, and its
    /// verdict is not taken. Cruise paces at the estimate, which the
    /// short-term bounds bring down to the path's new rate in a few rounds,
    /// so the queue the fall filled stood: through `pmdt-wanem`, 1 Gbit/s
    /// falling to 200 Mbit/s at 40 ms left 25-38 ms standing for 1.6-4.5 s
    /// in 7 of 18 runs. Each check takes the queue's share of the RTT off a
    /// round (at most a quarter). Beside other flows (a check found another
    /// flow's queue lately), a queue that stands through such a drain says
    /// the loss was the shared queue's overflow (a joiner's Startup, which
    /// each flow's samples may judge over the threshold), not this flow's
    /// overshoot: the own-congestion memory ends there, and the shared cuts
    /// and climbs resume. Through `pmdt-wanem`, in runs where four flows
    /// joining 1 Gbit/s × 40 ms all took one overflow for their own
    /// congestion, none cut or climbed for 4 s and the first kept 440-660
    /// Mbit/s for 6-10 s.
    ///
    /// Beside such a flow, each probe overflows the buffer and takes a share
    /// of the link from it (the other backs off, this one's estimate rises
    /// into the gap): probing every few rounds, a CUBIC flow beside this one
    /// got 2-5 % of a 1 Gbit/s × 40 ms link with a 0.2-BDP buffer. So, as
    /// BBRv3's Reno coexistence does, the next probe waits as long as such a
    /// flow takes to regrow ([`SHARED_PROBE_WAIT`], or fewer rounds for a small
    /// window), and the window target covers the queue's delay too
    /// ([`Self::cwnd_bdp`]; `inflight_hi`, where a probe set it, still bounds it).
    /// Every Cruise waits so while [`AnotherFlow`] remembers another flow's
    /// queue (found by a check, and in each round it stood after that
    /// verdict): five seconds after one verdict, ten after the queue last
    /// stood once a later Cruise's check confirmed it, a queue standing in
    /// the Cruise or not.
    pub(super) fn update_shared_queue(&mut self, now: Instant) {
        let delivering_its_pace =
            self.prev_bw_latest as f64 >= self.bw() as f64 * SHARED_DELIVERY_SHARE;
        let congested_lately = self.congested_lately(now);
        let cruising = self.mode == Mode::ProbeBw(Phase::Cruise);
        let standing = self.standing_queue(self.prev_round_min_rtt);
        let checking = self.queue_owner.checking();
        let asked = checking.is_some();
        if cruising {
            let bw = self.bw();
            if bw > 0 {
                self.queue_owner
                    .delivered(self.round_count, self.prev_bw_latest as f64 / bw as f64);
            }
            self.queue_owner
                .judge(self.round_count, self.queue_in(self.prev_round_min_rtt));
        }
        let drain_only = checking == Some(CheckPurpose::Drain);
        let judged_another = asked && self.queue_owner == QueueOwner::Another && !drain_only;
        let another_flows = matches!(self.mode, Mode::ProbeBw(_))
            && delivering_its_pace
            && !congested_lately
            && standing;
        if cruising && delivering_its_pace && standing && !asked && self.rounds_in_phase() >= 1 {
            // Whose queue is it? The check paces below the estimate for a
            // round; the probe waits for its verdict. After this flow's own
            // congestion the queue is its own: the check only drains it.
            // Sized by what the flight holds too (see `flight_queue`), but
            // not once checks confirmed other flows.
            let rtt_queue = self.queue_in(self.prev_round_min_rtt);
            let queue = if self.another_flow.confirmed(now) {
                rtt_queue
            } else {
                rtt_queue.max(self.flight_queue())
            };
            let purpose = if congested_lately {
                CheckPurpose::Drain
            } else {
                CheckPurpose::Whose
            };
            self.queue_owner.ask(
                purpose,
                self.round_count,
                queue,
                self.min_rtt.unwrap_or_default(),
                QUEUE_RTT_FLOOR,
            );
            if let Some(verdict) = self.queue_owner.verdict_round() {
                tracing::debug!(
                    check = ?self.queue_owner,
                    rtt_queue_us = self.queue_in(self.prev_round_min_rtt).as_micros() as u64,
                    rounds_in_cruise = self.rounds_in_phase(),
                    in_flight = self.bytes_in_flight,
                    cwnd = self.bounded_cwnd(),
                    inflight_hi = self.inflight_hi,
                    bw = self.bw(),
                    delivered = self.prev_bw_latest,
                    "bbr: a queue stands; checking whose"
                );
                self.cruise_rounds = self
                    .cruise_rounds
                    .max(verdict.saturating_sub(self.phase_start_round));
            }
        }
        // Until a check finds it this flow's own, the queue counts as another
        // flow's.
        self.shared_queue = another_flows && !(cruising && self.queue_owner == QueueOwner::Own);
        if !cruising || self.rounds_in_phase() < 1 {
            return;
        }
        if drain_only && self.queue_owner.verdict_round().is_none() {
            tracing::debug!(
                verdict = ?self.queue_owner,
                queue_us = self.queue_in(self.prev_round_min_rtt).as_micros() as u64,
                "bbr: drained a queue after own congestion"
            );
            self.queue_verdicts.drained += 1;
            if self.queue_owner == QueueOwner::Another && self.shares_the_bottleneck(now) {
                // The queue stood through the drain, and checks had found
                // another flow's queue before: the loss was the shared
                // queue's overflow (a joiner's Startup), not this flow's
                // overshoot. The shared cuts and climbs resume.
                tracing::debug!("bbr: the drained queue stood: the congestion was shared");
                self.congested_at = None;
            }
            self.queue_owner = QueueOwner::Unknown;
        } else if asked && self.queue_owner.verdict_round().is_none() {
            match self.queue_owner {
                QueueOwner::Own => self.queue_verdicts.own += 1,
                QueueOwner::Another => self.queue_verdicts.another += 1,
                QueueOwner::Unknown => {
                    self.queue_verdicts.none += 1;
                    if std::mem::take(&mut self.overflow_awaits_check) {
                        tracing::debug!(
                            "bbr: the check gave no verdict: the overflow's another flow's"
                        );
                        self.another_flow.verdict(now);
                    }
                }
                // A check under way has a verdict round: not here.
                QueueOwner::Checking { .. } => {}
            }
            if std::mem::take(&mut self.overflow_awaits_check) {
                tracing::debug!(verdict = ?self.queue_owner, "bbr: an overflow waited for this check");
            }
            tracing::debug!(
                verdict = ?self.queue_owner,
                queue_us = self.queue_in(self.prev_round_min_rtt).as_micros() as u64,
                delivered = self.prev_bw_latest,
                bw = self.bw(),
                in_flight = self.bytes_in_flight,
                cwnd = self.bounded_cwnd(),
                "bbr: checked whose queue stands"
            );
        }
        // The round that judged it another flow's paced the check's packets, so
        // it may have delivered below the estimate: the wait starts anyway.
        if (self.shared_queue || judged_another) && self.queue_owner == QueueOwner::Another {
            if judged_another {
                self.another_flow.verdict(now);
            } else {
                self.another_flow.stood(now);
            }
            self.wait_for_shared_queue();
        } else if self.shares_the_bottleneck(now) {
            self.wait_for_shared_queue();
        }
    }

    /// Whether checks found another flow's queue lately ([`AnotherFlow`]:
    /// five seconds after one verdict, ten after the queue last stood once a
    /// second confirmed it).
    pub(super) fn shares_the_bottleneck(&self, now: Instant) -> bool {
        self.another_flow.remembers(now)
    }

    /// BBRv3 probes after 2-3 s or after as many rounds as its window holds
    /// packets (at most 63), whichever comes first: a Reno flow of the
    /// same window regrows in that many rounds, and a flow whose estimate
    /// is low (an early Startup exit) still probes every few rounds.
    pub(super) fn wait_for_shared_queue(&mut self) {
        let coexist = self.reno_coexistence_wait();
        if coexist > self.cruise_rounds {
            tracing::debug!(
                rounds = coexist,
                rounds_in_cruise = self.rounds_in_phase(),
                queue_us = self.queue_in(self.prev_round_min_rtt).as_micros() as u64,
                "bbr: another flow shares the bottleneck; the next probe waits"
            );
        }
        self.cruise_rounds = self.cruise_rounds.max(coexist);
    }

    /// Whether a flow that takes itself to be alone puts off a probe that is
    /// due: while the last round's every RTT showed a queue
    /// ([`PROBE_PUT_OFF_QUEUE`]), a round at 1.2 × the estimate finds no
    /// bandwidth, only overflows the buffer, and cuts whatever loss-based flow
    /// keeps that queue; up to [`PROBE_PUT_OFF_MAX`] times the planned Cruise.
    /// Only on a path without random loss (under [`RENO_COEXISTENCE_MAX_LOSS`]),
    /// where a loss-based flow can live beside it and the Cruise waits as one
    /// regrows (on a lossy path, putting probes off cost the loss grid's 1 %
    /// cells up to 1.2 points of the link). Beside another flow (a check's
    /// verdict), its probes wait as that flow regrows
    /// ([`Self::wait_for_shared_queue`]) and are not put off.
    ///
    /// A CUBIC flow that joins through a shallow buffer leaves a queue of a
    /// millisecond or two that drains within a check's round, so the checks
    /// find it this flow's own, and every probe into it cut CUBIC back (in
    /// the simulator, 1 Gbit/s × 40 ms, 1 MiB: BBR kept 78.8-81.7 % of the
    /// link over seeds 1-4, 30 s; 71.9 % over a minute). Put off, the probes
    /// leave CUBIC's growth alone: 69.9-70.1 % (56.8 over a minute); through
    /// 5 MiB 45.3-48.5 % (51.3-55.1 before); BBR and CUBIC starting
    /// together, and BBR joining CUBIC, as before. A flow that is alone paces
    /// at its estimate and holds no queue of its own: its probes go when due.
    pub(super) fn probe_put_off_for_a_queue(&self, now: Instant) -> bool {
        !self.shares_the_bottleneck(now)
            && self
                .typical_round_loss()
                .is_some_and(|loss| loss < RENO_COEXISTENCE_MAX_LOSS)
            && self.queue_in(self.prev_round_min_rtt) > PROBE_PUT_OFF_QUEUE
            && self.rounds_in_phase() < self.cruise_rounds * PROBE_PUT_OFF_MAX
    }

    /// Cruise rounds before the next probe as BBRv3 counts them for Reno
    /// coexistence: [`SHARED_PROBE_WAIT`] in rounds of the minimum RTT, or
    /// as many rounds as the window holds packets (at most
    /// [`MAX_SHARED_CRUISE_ROUNDS`]), whichever is fewer, plus a per-flow
    /// draw of up to [`SHARED_PROBE_WAIT_JITTER`] rounds.
    pub(super) fn reno_coexistence_wait(&self) -> u64 {
        let rtt = self
            .min_rtt
            .unwrap_or(Duration::from_millis(1))
            .as_secs_f64();
        let by_time = (SHARED_PROBE_WAIT.as_secs_f64() / rtt).ceil() as u64;
        let by_window = (self.bdp_multiple(1.0) / self.mss).min(MAX_SHARED_CRUISE_ROUNDS);
        by_time.min(by_window)
            + (self.next_round_delivered / self.mss) % (SHARED_PROBE_WAIT_JITTER + 1)
    }

    /// At this flow's own congestion (its loss says its rate overran the
    /// path): where it is far below its recent peak (a bottleneck that
    /// slowed down, and may come back), a single verdict of another flow's
    /// queue still remembered is forgotten (`AnotherFlow::path_fell`), and
    /// so is what it led to. A flow alone whose check the scheduling fooled
    /// climbs beside the flow it took to be there
    /// ([`Self::climb_beside_others`]) until its own queue overflows, and
    /// its probes wait 2 s; beside a flow that is there, the climb
    /// overflows a shared queue, of which each flow loses a share
    /// ([`SHARED_CUT_MAX_EXCESS`]), not congestion of its own. Through
    /// `pmdt-wanem` at 200 Mbit/s × 40 ms (session 66), each of the three
    /// rises back to 1 Gbit/s found over 2 s late in 19 runs of the
    /// controller before this rule followed such a verdict and, 0.5-0.6 s
    /// later, such an overflow (14-16 % of a round lost): the probes waited
    /// 2 s from the verdict (2.6 and 2.8 s late), and in one the overflow
    /// also cut `inflight_hi` as a share ([`Self::cut_for_shared_queue`])
    /// to 1.4 MB, regrown a few packets a probe (4.1 s late). Forgotten, the
    /// next probes grow the bound as a flow alone's do, and the Cruise under
    /// way waits no longer than a flow alone's: in 16 runs with this rule
    /// every rise was found within 1.2 s, one after the same sequence
    /// (0.78 s).
    ///
    /// Only far below the recent peak: flows sharing a bottleneck meet
    /// congestion of their own when a joiner's Startup overflows the queue,
    /// and forgetting their verdicts then made them probe sooner and share
    /// less evenly (with a similar rule at the drain after such congestion,
    /// the simulator's four flows joining 1 Gbit/s × 40 ms: 8 of 40 seeds
    /// changed, Jain mean 0.9745 → 0.9695).
    pub(super) fn forget_a_verdict_it_overran(&mut self, now: Instant) {
        if !self.may_have_overrun_a_single_verdict(now) || !self.another_flow.path_fell(now) {
            return;
        }
        tracing::debug!(
            inflight_hi = self.inflight_hi,
            "bbr: congestion of its own far below its peak; a single verdict of another flow's queue is forgotten"
        );
        if self.up_growth == (UpGrowth::Gentle { pipe: None }) {
            self.up_growth = UpGrowth::Fast;
        }
        self.shared_regrow_step = None;
        self.cruise_rounds = self
            .cruise_rounds
            .min(self.rounds_in_phase() + CRUISE_ROUNDS);
    }

    /// Whether congestion of this flow's own would say its single verdict
    /// of another flow's queue was wrong ([`Self::forget_a_verdict_it_overran`]):
    /// the flow is far below its recent peak and no second verdict confirmed
    /// the first.
    pub(super) fn may_have_overrun_a_single_verdict(&self, now: Instant) -> bool {
        self.recent_peak.far_above(now, self.max_bw)
            && self.another_flow.remembers(now)
            && !self.another_flow.confirmed(now)
    }

    /// At a round's end: a round that lost [`PATH_FELL_ROUND_LOSS`] of its
    /// datagrams met a path that fell under this flow's rate (a bottleneck
    /// that slowed down, not another flow's queue), and a single verdict of
    /// another flow's queue from before is forgotten: it was about the path
    /// before, and the probes that wait for it would keep the flow from
    /// finding the new path's rate. Through `pmdt-wanem` at 1 Gbit/s × 40 ms,
    /// a flow alone's check found 2.3 ms standing (the processes'
    /// scheduling) 2 s before the link fell to 200 Mbit/s; after the fall
    /// its probes waited for that verdict, and its estimate stayed at
    /// 140-155 Mbit/s for 2.5 s (the fall was found 3.16 s after it). A
    /// verdict that a second confirmed is kept (`AnotherFlow::path_fell`).
    pub(super) fn forget_a_verdict_the_path_fell_under(&mut self, now: Instant) {
        let (datagrams, lost) = self.round_loss_packets();
        if datagrams >= PATH_FELL_MIN_DATAGRAMS
            && lost >= datagrams * (self.loss_floor + PATH_FELL_ROUND_LOSS)
            && self.another_flow.path_fell(now)
        {
            tracing::debug!(
                datagrams,
                lost,
                "bbr: the path fell under the flow's rate; a verdict of another flow's queue is forgotten"
            );
        }
    }

    /// Whether a round's RTT showed no standing queue within the last
    /// [`QUEUE_DRAINED_MEMORY_RTTS`] minimum RTTs.
    pub(super) fn drained_lately(&self, now: Instant) -> bool {
        self.queue_drained_at
            .zip(self.min_rtt)
            .is_some_and(|(t, m)| now.saturating_duration_since(t) < m * QUEUE_DRAINED_MEMORY_RTTS)
    }

    /// At a round's end in Cruise: a queue that stands while this flow paces at
    /// its estimate is the aggregate's, each flow's estimate a little above its
    /// share (a windowed maximum sits above the mean). Where the queue drained
    /// lately, the flows keeping it are ones that yield too: this one takes half
    /// the queue's share of the round trip off its delivery rate
    /// (`queue_yield`), once per Cruise, until the next probe. All of them see
    /// the same RTT, so all yield alike, whatever their loss.
    ///
    /// Without it the queue stood full, and a drop-tail queue drops most what
    /// arrives between the departures the other flows' acks clock: a flow that
    /// joined late lost more than the flows already there, its loss bounds held
    /// it down, and the rest never made room (four flows joining a 1 Gbit/s ×
    /// 40 ms link 2 s apart: 771, 98, 75 and 24 Mbit/s). Beside CUBIC in a
    /// shallow buffer (which drains when CUBIC backs off) BBR took 72 % of the
    /// link. A queue that never drains is a buffer-filling flow's (CUBIC's in a
    /// deep buffer), which would take whatever this one yields.
    ///
    /// Yielding every other round instead of once per Cruise evened out the
    /// late joiners further (Jain 0.90 instead of 0.55) but left the link a
    /// sixth idle under four flows of 100 Mbit/s × 20 ms until their next
    /// probes; lifting the yield as soon as the queue drained gave the room
    /// straight back to the largest flow.
    ///
    /// A flow alone whose sender loses its core keeps the queue instead, as
    /// deep as its absences explain: its catch-ups build it, and it carries
    /// the link through the next absence
    /// ([`Self::keeps_own_absences_queue`]). A yield already in force stays
    /// until the next probe.
    pub(super) fn yield_to_standing_queue(&mut self, now: Instant) {
        if !self.drained_lately(now)
            || self.mode != Mode::ProbeBw(Phase::Cruise)
            || self.rounds_in_phase() < 2
            || self.queue_yield.is_some()
        {
            return;
        }
        let (Some(round), Some(min)) = (self.prev_round_min_rtt, self.min_rtt) else {
            return;
        };
        if !self.standing_queue(Some(round)) {
            return;
        }
        let queue = self.queue_in(Some(round));
        if self.keeps_own_absences_queue(now, queue) {
            tracing::trace!(
                queue_us = queue.as_micros() as u64,
                "bbr: a flow alone whose sender loses its core keeps its queue"
            );
            return;
        }
        // The queue's share of the round trip, halved.
        let keep = (1.0 + min.as_secs_f64() / round.as_secs_f64()) / 2.0;
        let rate = self.bw().min(self.prev_bw_latest);
        self.queue_yield = Some(((rate as f64 * keep) as u64).max(1));
        tracing::trace!(
            queue_yield = self.queue_yield,
            keep,
            "bbr: yields to a standing queue"
        );
    }

    /// At a round's end: a Cruise round (past its probe's flights) that
    /// overflowed a queue standing through it, when no check found another
    /// flow's queue lately, found another flow all the same. Paced at its
    /// estimate, a flow alone keeps no standing queue but what its sender's
    /// catch-ups build, and loses no more to it than a catch-up sends
    /// ([`Self::own_absences_explain_overflow`]), so a round that overflows
    /// one met another flow's growth: a loss-based flow's slow start joining
    /// it, or its window regrowing through the buffer. The
    /// shared cut ([`Self::cut_for_shared_queue`]) can follow in the same
    /// round (where the queue was near full), and the probes wait as for
    /// another flow's queue.
    ///
    /// The checks miss such a flow while its window is small: when this
    /// flow paces below its estimate, a window under its share of the pipe
    /// drains the queue, and the check says it is this flow's own. Through
    /// `pmdt-wanem`, CUBIC joining BBR through 1 MiB at 1 Gbit/s × 40 ms:
    /// its slow start overflowed the queue, BBR (its checks saying "own",
    /// its loss 6.5 % of a round, under what a flow alone takes for its own
    /// congestion in a queue this shallow) kept pacing into the full
    /// buffer, and CUBIC lost in three rounds in 0.4 s (0.83 → 0.29 MB);
    /// from that window, cut again by BBR's probes, which came every 2.4 s
    /// as a flow alone's do, CUBIC kept 0.3-0.7 MB for a minute (BBR 81-83
    /// % of the link). Only on a path whose rounds typically lose under
    /// [`RENO_COEXISTENCE_MAX_LOSS`] (where a loss-based flow gets a share
    /// at all): at 5 % random loss (100 Mbit/s × 100 ms in the simulator)
    /// the loss floor read 4.1 %, a round of random loss passed for an
    /// overflow, and the cut cost 2 points of the link.
    ///
    /// In the simulator (one sender, its core 18 ms of every 20, 30 s, seeds
    /// 1-6) BBR's share beside CUBIC joining fell from 72.1-80.3 % (mean
    /// 76.3) to 67.7-72.0 (69.9), and four BBR flows through 1 MiB shared
    /// more evenly (Jain 0.979 → 0.993 starting together, 0.975 → 0.996
    /// joining 2 s apart); the loss grid (seed 1) and the other adapt cells
    /// did not change. Through `pmdt-wanem`, eight alternated passes: the
    /// join costs CUBIC less (its window 2.5 s after it, median 0.57 →
    /// 0.63 MB), but over the minute BBR's share is what its probes leave
    /// (61.1-82.6 %, median 72.9, before; 65.1-81.3, median 76.4, with it).
    ///
    /// An overflow under a check of whose queue it is, losing no more than
    /// a flow alone's own queue can ([`OWN_OVERFLOW_MAX_EXCESS`] beyond the
    /// typical round's loss), waits for the check's verdict
    /// (`overflow_awaits_check`): "own" drops it, "another" is the check's
    /// own verdict, and a check that comes to none leaves it another flow's
    /// (without the shared cut of the overflow's own round). A check that a
    /// Cruise's end cuts short forgets it (the probe waits for the verdict,
    /// so that is rare). A flow alone at 1 Gbit/s × 200 ms
    /// through `pmdt-wanem`'s 1 MiB (8.4 ms) started 11 of its 34 checks with
    /// 7.1-8.1 ms of its own queue standing (session 97), where the buffer
    /// can overflow in the check's drain round; taken for another flow's,
    /// such an overflow cut `inflight_hi` under the BDP (session 96: 65.5 %
    /// of the link). A larger overflow does not wait: a loss-based flow
    /// backs off after it and leaves the queue drained under the check,
    /// which would find it this flow's own.
    pub(super) fn overflow_says_another_flow(&mut self, now: Instant) {
        if self.mode != Mode::ProbeBw(Phase::Cruise)
            || self.rounds_in_phase() < 2
            || self.shares_the_bottleneck(now)
            || !matches!(self.overshoot, Overshoot::Resolved { .. })
            || !self.standing_queue(self.round_min_rtt)
            || self.congested_lately(now)
            || !self
                .typical_round_loss()
                .is_some_and(|loss| loss < RENO_COEXISTENCE_MAX_LOSS)
            || !self.round_lost_a_shared_overflow(now)
        {
            return;
        }
        let queued = self.queue_in(self.round_min_rtt);
        if self.own_absences_explain_overflow(now, queued) {
            return;
        }
        let (datagrams, lost) = self.round_loss_packets();
        if self.queue_owner.checking() == Some(CheckPurpose::Whose)
            && lost
                <= datagrams
                    * (self.typical_round_loss().unwrap_or_default() + OWN_OVERFLOW_MAX_EXCESS)
        {
            tracing::debug!(
                queued_us = queued.as_micros() as u64,
                datagrams,
                lost,
                "bbr: a Cruise round overflowed a standing queue under a check: waits"
            );
            self.overflow_awaits_check = true;
            return;
        }
        tracing::debug!(
            queued_us = queued.as_micros() as u64,
            datagrams,
            lost,
            "bbr: a Cruise round overflowed a standing queue: another flow's"
        );
        self.another_flow.verdict(now);
    }

    /// At a round's end in Cruise or Down: a queue stood through the round (every
    /// RTT above the minimum by at least half the deepest queue seen lately:
    /// the queue was near full) and overflowed (the round lost at least
    /// [`SHARED_CUT_MIN_LOST_PACKETS`], more than random loss explains, and
    /// no more than [`Self::shared_overflow_max_excess`] beyond it: a probe's overflow
    /// in Down is cut to as well, since every flow the full queue drops
    /// cuts). That is a queue the flows
    /// sharing the bottleneck keep together; this flow cuts `inflight_hi` to
    /// [`BETA`] of what it had in flight (the bound, or the round's delivery
    /// if less), and regrows it in equal steps ([`Self::regrow_after_shared_cut`]).
    ///
    /// Without it, flows that joined a busy link kept the share Startup left
    /// them: loss under 2 % a round with 8 ms of queue (pmdt-wanem's 1 MiB at
    /// 1 Gbit/s, under a quarter of 40 ms) is no congestion signal, and
    /// nothing else lowers `inflight_hi` (four flows joining 2 s apart: 3888 KB
    /// for the first, about 456 KB for the others, Jain 0.55). Every flow whose
    /// packets the full queue drops cuts by the same factor and regrows by the
    /// same steps: the large flows give back more than the small ones regain
    /// (multiplicative decrease, additive increase).
    ///
    /// Only while a check has lately found another flow's queue
    /// ([`Self::shares_the_bottleneck`]), or the endpoint finds this flow
    /// ahead of its siblings beside a loss-based flow
    /// ([`Self::ahead_beside_loss_based`]): a flow alone on a lossy path, whose
    /// probe left a queue that the probe's losses overflowed, cut its bound to
    /// 0.7 and took eight seconds to regrow it (1 Gbit/s × 100 ms, 1 % loss:
    /// 81 % of the link from 5 s instead of 94 %). Not within
    /// [`OWN_CONGESTION_MEMORY`] of this flow's own congestion (the
    /// short-term bounds answer that), and at most every
    /// [`SHARED_CUT_EVERY_ROUNDS`].
    pub(super) fn cut_for_shared_queue(&mut self, now: Instant) {
        // What the round that overflowed showed, cut to or not (each of the
        // conditions below has let a round of a shared queue's overflow pass).
        if self.round_lost_beyond_random()
            && (self.shares_the_bottleneck(now) || self.ahead_beside_loss_based())
        {
            let (datagrams, lost) = self.round_loss_packets();
            tracing::debug!(
                mode = ?self.mode,
                resolved = matches!(self.overshoot, Overshoot::Resolved { .. }),
                standing = self.standing_queue(self.round_min_rtt),
                queued_us = self.queue_in(self.round_min_rtt).as_micros() as u64,
                deepest_us = self.deepest_queue().as_micros() as u64,
                cut_round = ?self.shared_cut_round,
                round = self.round_count,
                congested = self.congested_lately(now),
                datagrams,
                lost,
                "bbr: a round overflowed beside other flows"
            );
        }
        if !matches!(self.mode, Mode::ProbeBw(Phase::Cruise | Phase::Down))
            || !(self.shares_the_bottleneck(now) || self.ahead_beside_loss_based())
            || !matches!(self.overshoot, Overshoot::Resolved { .. })
            || !self.standing_queue(self.round_min_rtt)
            || self
                .shared_cut_round
                .is_some_and(|r| self.round_count < r + SHARED_CUT_EVERY_ROUNDS)
            || self.congested_lately(now)
        {
            return;
        }
        let queued = self.queue_in(self.round_min_rtt);
        if queued.as_secs_f64() < self.deepest_queue().as_secs_f64() * SHARED_CUT_QUEUE_DEPTH {
            return;
        }
        if !self.round_lost_a_shared_overflow(now) {
            return;
        }
        self.take_shared_cut();
    }

    /// Cuts `inflight_hi` to [`BETA`] of what the round had in flight (the
    /// bound, or the round's delivery if less), as every flow whose packets
    /// a full shared queue drops does, and regrows it in equal steps
    /// ([`Self::regrow_after_shared_cut`]).
    pub(super) fn take_shared_cut(&mut self) {
        let bound = self.inflight_hi.unwrap_or(self.cwnd);
        let hi = ((bound.min(self.round_acked) as f64 * BETA) as u64).max(self.min_cwnd());
        tracing::debug!(
            inflight_hi = hi,
            before = bound,
            round_acked = self.round_acked,
            round_lost = self.round_lost,
            loss_floor = self.loss_floor,
            "bbr: cuts inflight_hi to a shared queue's overflow"
        );
        self.inflight_hi = Some(hi);
        // The cut is a share, not the pipe.
        self.up_growth = UpGrowth::Gentle { pipe: None };
        self.shared_regrow_step = Some(GENTLE_FIRST_STEP_PACKETS * self.mss);
        self.shared_cut_round = Some(self.round_count);
    }

    /// At a round's end: beside other flows (a check found another flow's
    /// queue lately), Cruise paces above its estimate by a step that starts
    /// at [`GENTLE_FIRST_STEP_PACKETS`] a round and doubles each round up to
    /// [`SHARED_CLIMB_MAX_STEP_PACKETS`], a queue standing or not, until a
    /// queue overflows: a round that lost more than random loss explains
    /// (`overflowed`, [`Self::round_lost_beyond_random`]), whether or not it
    /// cut to a shared queue ([`Self::cut_for_shared_queue`]), starts the
    /// steps over. Not while a check paces below the estimate, nor alone (a
    /// flow alone paces at its estimate and does not push into a queue of
    /// its own), nor within [`OWN_CONGESTION_MEMORY`] of this flow's own
    /// congestion (a flow climbs only while it would also cut to the shared
    /// queue's overflow), nor while it is ahead of its siblings beside a
    /// loss-based flow with a queue standing ([`Self::holds_back_ahead`]).
    ///
    /// The same steps for every flow: additive increase, against the cut's
    /// multiplicative decrease. Without it, a flow paced at its own
    /// estimate: flows that left Startup with a small share (one that
    /// started a few round trips after the others, into their queue) grew
    /// only by their probes, seconds apart and each in proportion to its
    /// share, so the shares stayed where Startup left them. Regrowing
    /// `inflight_hi` alone ([`Self::regrow_after_shared_cut`]) did not do it:
    /// it stops where the pacing rate, not the bound, limits the flight. In
    /// the simulator, four flows through 1 Gbit/s × 40 ms and a 1 MiB queue,
    /// seeds 1-16, Jain:
    /// - starting 100 ms apart, over 20 s: 0.66-0.93 (mean 0.84) before,
    ///   0.89-0.97 (mean 0.93) with it;
    /// - joining 2 s apart, over the last 10 s: 0.85-0.98 (mean 0.90)
    ///   before, 0.92-1.00 (mean 0.97) with it;
    /// - starting together: 0.94-1.00 (mean 0.989) before, 0.99-1.00 (mean
    ///   0.997) with it.
    ///
    /// Through `pmdt-wanem`, four flows starting together:
    /// - steps that restarted only at a shared cut went on at 128 packets a
    ///   round through rounds that lost 10 % (then too much for a shared
    ///   queue's overflow, and under the high-loss threshold: nothing cut
    ///   `inflight_hi`); three flows kept the queue overflowing and the
    ///   fourth fell to 2 Mbit/s (Jain 0.935, 90,476 datagrams retransmitted
    ///   in 20 s);
    /// - one flow whose loss kept saying congestion of its own climbed
    ///   without cutting while the others cut: 220 → 400 Mbit/s, the others
    ///   160-250 (Jain 0.942).
    pub(super) fn climb_beside_others(&mut self, now: Instant, overflowed: bool) {
        let congested_lately = self.congested_lately(now);
        let climbing = self.mode == Mode::ProbeBw(Phase::Cruise)
            && self.shares_the_bottleneck(now)
            && !congested_lately
            && self.queue_owner.checking().is_none()
            && !self.holds_back_ahead();
        if !climbing {
            self.shared_climb_step = None;
            return;
        }
        let first = GENTLE_FIRST_STEP_PACKETS * self.mss;
        self.shared_climb_step = Some(match self.shared_climb_step {
            Some(step) if !overflowed && self.shared_cut_round != Some(self.round_count) => {
                (step * 2).min(first * SHARED_CLIMB_MAX_STEP_PACKETS)
            }
            _ => first,
        });
    }

    /// The rate Cruise's pacing adds to the estimate beside other flows:
    /// a step a round ([`Self::climb_beside_others`]), bytes per second.
    pub(super) fn shared_climb_rate(&self) -> f64 {
        match (self.shared_climb_step, self.min_rtt) {
            (Some(step), Some(min)) if !min.is_zero() => step as f64 / min.as_secs_f64(),
            _ => 0.0,
        }
    }

    /// Whether the round that is ending lost at least
    /// [`SHARED_CUT_MIN_LOST_PACKETS`], and more than the path's random loss
    /// explains (by [`SHARED_CUT_SIGMAS`] of its noise in a round of that
    /// many datagrams): a queue overflowed.
    ///
    /// The path's random loss is the typical round's
    /// ([`Self::typical_round_loss`], their median), or the floor (their
    /// least) while that is unknown. The floor reads zero wherever some
    /// rounds lose nothing: at 0.1 % random loss, a round of 1,700
    /// datagrams loses none about one time in six, so most windows of
    /// eight rounds hold one, and any round that lost two passed for an
    /// overflow. Through `pmdt-wanem` (100 Mbit/s × 200 ms, 0.1 % loss), a
    /// flow alone with the few milliseconds of queue its sender's
    /// catch-ups leave took 2-6 datagrams lost in a round for another
    /// flow's growth ([`Self::overflow_says_another_flow`]) in 5 of 12
    /// transfers, and in two of them cut `inflight_hi` to 0.7 of its
    /// round: 84.8 and 92.1 % of the link in steady state, against 93.7 in
    /// the resumed transfers without a cut. With the median (one or two
    /// datagrams of such a round), a round must lose five to eight to count;
    /// none of 12 transfers then took random loss for an overflow. The
    /// median, not the mean: a probe's overflow in a round without a
    /// standing queue counts among these rounds, and would lift the mean
    /// for eight rounds.
    pub(super) fn round_lost_beyond_random(&self) -> bool {
        if self.round_lost < SHARED_CUT_MIN_LOST_PACKETS * self.mss {
            return false;
        }
        let (datagrams, lost) = self.round_loss_packets();
        let p = self
            .loss_floor
            .max(self.typical_round_loss().unwrap_or_default());
        let noise = SHARED_CUT_SIGMAS * (datagrams * p * (1.0 - p)).sqrt();
        lost > datagrams * p + noise
    }

    /// Whether the round that is ending lost as a shared queue's overflow
    /// does: more than random loss explains
    /// ([`Self::round_lost_beyond_random`]), but no more than
    /// [`Self::shared_overflow_max_excess`] beyond the path's random loss
    /// (more is this flow's own congestion).
    fn round_lost_a_shared_overflow(&self, now: Instant) -> bool {
        let (datagrams, lost) = self.round_loss_packets();
        self.round_lost_beyond_random()
            && lost <= datagrams * (self.loss_floor + self.shared_overflow_max_excess(now))
    }

    /// The most a shared queue's overflow costs a round or a sample beyond
    /// the path's random loss ([`Self::round_lost_a_shared_overflow`],
    /// [`Self::inflight_too_high`]): [`SHARED_CUT_MAX_EXCESS`], or
    /// [`CONFIRMED_SHARED_MAX_EXCESS`] once a second check confirmed another
    /// flow's queue ([`AnotherFlow::confirmed`]).
    pub(super) fn shared_overflow_max_excess(&self, now: Instant) -> f64 {
        if self.another_flow.confirmed(now) {
            CONFIRMED_SHARED_MAX_EXCESS
        } else {
            SHARED_CUT_MAX_EXCESS
        }
    }

    /// The round so far: datagrams acknowledged or lost, and those lost.
    pub(super) fn round_loss_packets(&self) -> (f64, f64) {
        let mss = self.mss as f64;
        (
            (self.round_acked + self.round_lost) as f64 / mss,
            self.round_lost as f64 / mss,
        )
    }

    /// Whether this flow met congestion of its own (its loss said its rate
    /// overshot the path) within [`OWN_CONGESTION_MEMORY`].
    pub(super) fn congested_lately(&self, now: Instant) -> bool {
        self.congested_at
            .is_some_and(|t| now.saturating_duration_since(t) < OWN_CONGESTION_MEMORY)
    }

    /// ProbeBW Up's pacing gain beside other flows (a check found another
    /// flow's queue lately): a round of it queues half the deepest queue the
    /// path showed lately ([`Self::deepest_queue`], the buffer's depth once
    /// a shared queue has overflowed), at least [`UP_GAIN_BESIDE_OTHERS_MIN`]
    /// and at most the base gain; with no queue recorded lately, the base
    /// gain. (An Up that goes on, its estimate still growing, queues that
    /// much again a round until its RTT shows the queue.) At the base gain a
    /// round queues a fifth of the min RTT: pmdt-wanem's 1 MiB buffer at
    /// 1 Gbit/s × 40 ms is 8.4 ms, and with a CUBIC flow's few milliseconds
    /// in it such a probe could overflow it. In the simulator's timeline of
    /// one run, three probes in 15 s did: CUBIC cut 30 % each time and
    /// regrew over seconds, while BBR's estimate took the bandwidth CUBIC
    /// let go, and BBR kept 84-87 % of the link for 25 s. Here the probe
    /// stops short of the buffer's top. In the simulator, CUBIC joining 2 s
    /// apart through that buffer with both ends losing their core 2 ms in 20
    /// (as on this VM, where pmdt-wanem shares the receiver's CPU), eight
    /// join times 1.7-3.8 s: BBR 64.1-68.1 % of the link from 15 s (mean
    /// 66.5), against 64.0-77.8 % (mean 70.9, two over 75 %) at 1.2.
    /// Alone the base gain probes (a bottleneck that grew is found as fast).
    pub(super) fn up_gain_beside_others(&self) -> f64 {
        let deepest = self.deepest_queue();
        match self.min_rtt {
            Some(m) if !m.is_zero() && !deepest.is_zero() => (1.0
                + deepest.as_secs_f64() * UP_QUEUE_SHARE_OF_DEEPEST / m.as_secs_f64())
            .clamp(UP_GAIN_BESIDE_OTHERS_MIN, PROBE_UP_PACING_GAIN),
            _ => PROBE_UP_PACING_GAIN,
        }
    }

    /// The deepest queue that stood through a round (a round's smallest RTT
    /// over the minimum) in the last one or two [`QUEUE_DEPTH_SLOT`]s.
    pub(super) fn deepest_queue(&self) -> Duration {
        self.queue_depth[0].max(self.queue_depth[1])
    }

    /// At a round's end: records the queue its every RTT showed in the
    /// deepest-queue slots. A round's smallest RTT, not every sample's: single
    /// samples held up by the processes' scheduling put the deepest queue at
    /// 13.8-16 ms behind pmdt-wanem's 8.4 ms buffer (1 MiB at 1 Gbit/s), and
    /// 37 % of the rounds in which four flows joining it overflowed it (round
    /// minima of 5-8 ms) were too shallow to cut to (7-10 % since).
    pub(super) fn update_queue_depth(&mut self, now: Instant) {
        let Some(round_min) = self.round_min_rtt else {
            return;
        };
        let start = *self.queue_depth_slot_start.get_or_insert(now);
        if now.saturating_duration_since(start) >= QUEUE_DEPTH_SLOT {
            self.queue_depth = [self.queue_depth[1], Duration::ZERO];
            self.queue_depth_slot_start = Some(now);
        }
        let q = self.queue_in(Some(round_min));
        self.queue_depth[1] = self.queue_depth[1].max(q);
    }

    /// At a round's end in Cruise, after a cut to a shared queue or once a
    /// queue another flow keeps stands (`shared_queue`): while `inflight_hi` is
    /// what limits the flight, it grows by [`GENTLE_FIRST_STEP_PACKETS`],
    /// doubling each round up to [`SHARED_REGROW_MAX_STEP_PACKETS`] (at most by
    /// [`INFLIGHT_HI_GROWTH`] a round), with a queue standing or not: the
    /// additive increase that, with the cut's multiplicative decrease, brings
    /// the shares together. The same steps for every flow: a small one regains
    /// its share relatively faster. Growth stops where the flight no longer
    /// reaches the bound (the pacing rate limits it: a flow alone paces at its
    /// estimate and does not push into a queue of its own), and while the
    /// flow is ahead of its siblings beside a loss-based flow with a queue
    /// standing ([`Self::holds_back_ahead`]).
    ///
    /// Stopping the growth while a queue stood (the steps starting over when
    /// it drained) left the next overflow to the next probe, seconds away, and
    /// the shares converged over two or three cuts in ten seconds (joining
    /// Jain over five seeds, mean 0.79-0.88 with caps of 4, 16 or none).
    /// Starting the regrowth with another flow's queue too, not only after a
    /// first cut, lets a flow that joined last grow before it has cut (mean
    /// 0.89 → 0.91 with a cap of 16: within the seeds' spread).
    pub(super) fn regrow_after_shared_cut(&mut self) {
        if self.shared_regrow_step.is_none()
            && self.shared_queue
            && self.mode == Mode::ProbeBw(Phase::Cruise)
        {
            self.shared_regrow_step = Some(GENTLE_FIRST_STEP_PACKETS * self.mss);
        }
        let (Some(step), Some(hi)) = (self.shared_regrow_step, self.inflight_hi) else {
            return;
        };
        if self.mode != Mode::ProbeBw(Phase::Cruise)
            || self.shared_cut_round == Some(self.round_count)
            || self.holds_back_ahead()
        {
            return;
        }
        let first = GENTLE_FIRST_STEP_PACKETS * self.mss;
        // The flight reached the bound (within the window's quanta) this round:
        // the bound, not the pacing rate, is what limits it.
        if self.round_max_tx_in_flight + self.quanta() < hi {
            return;
        }
        let most = (hi as f64 * INFLIGHT_HI_GROWTH) as u64;
        self.inflight_hi = Some((hi + step).min(most));
        self.shared_regrow_step = Some((step * 2).min(first * SHARED_REGROW_MAX_STEP_PACKETS));
    }
}
