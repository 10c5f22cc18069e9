//! A model-based controller after BBR (draft-cardwell-ccwg-bbr, "BBR Congestion
//! Control"; BBRv1's gain cycle with BBRv3's loss bounds).
//!
//! The model: the bottleneck bandwidth (`max_bw`, a windowed maximum of delivery-rate
//! samples) and the round-trip propagation delay (`min_rtt`, a windowed minimum).
//! The controller paces at `pacing_gain × bw`, never below its minimum window
//! per smoothed RTT (a flow whose estimate collapsed would otherwise climb back
//! one single-datagram round at a time), and keeps at most `cwnd_gain × bw ×
//! min_rtt` in flight (over the last round's RTT instead in Startup and
//! beside another flow's standing queue, see `cwnd_bdp`). Its modes:
//!
//! - **Startup**: doubles the sending rate per round until the bandwidth stops growing
//!   (three rounds under +25 %), or every RTT sample of a round shows a queue, or
//!   loss says the queue overflowed.
//! - **Drain**: empties the queue Startup built.
//! - **ProbeBW**: cycles Down (drain what the last probe queued) → Cruise (gain 1) →
//!   Refill → Up (gain 1.2, one round) to discover more bandwidth; after a probe that
//!   found more, it probes again at once, so the rate follows a faster bottleneck
//!   within a few rounds per 20 %; while its rounds show no queue at all, at gain
//!   1.5 (the estimate trails the rate: 1.2 grows it only 1.13× per round trip);
//!   once a run of Ups of a flow alone found half as much again as it began
//!   with (a bottleneck that grew), only its own queue or loss ends it.
//!   Between probes Cruise waits a few rounds on a path that loses at random;
//!   on one that does not (where a loss-based flow can share), as long as
//!   such a flow takes to regrow after the loss a probe causes (BBRv3's Reno
//!   coexistence: 2 s, or as many rounds as the window holds packets, at most
//!   63), unless the flow is far below its recent peak or met congestion of
//!   its own lately (the path fell under its rate: probes find the new one).
//!   There a probe that is due waits, up to as long again, while the last
//!   round's every RTT shows half a millisecond of queue: a loss-based flow's
//!   too small for a check to tell, which the probe would overflow.
//! - **ProbeRTT**: when no fresh minimum RTT was seen for 5 s, halves the data in
//!   flight for 200 ms to let the queue drain and measure it.
//!
//! Beside a queue another flow keeps standing (a loss-based flow filling the
//! buffer; this one, cruising at its estimate, builds none), probes wait as long
//! as such a flow takes to regrow after the loss a probe causes: 2 s, or as many
//! rounds as the window holds packets (at most 63), whichever comes first
//! (BBRv3's Reno coexistence), and the window target covers that queue's delay:
//! probing every few rounds took a CUBIC flow's share of a shallow buffer probe
//! by probe. A probe keeps what it finds spare, not what its own queue takes: a
//! rate measured while the probe's queue grows is scaled by how much it grew.
//! Beside other flows a probe's round queues half the deepest queue seen
//! lately (its gain below 1.2 where the buffer is shallow for the RTT), so
//! it stops short of overflowing a buffer a loss-based flow shares and of
//! taking what that flow lets go.
//!
//! A queue that stands in Cruise but drained lately is kept by flows that yield
//! too (each paces a little above its share): each flow takes half the queue's
//! share of the round trip off its rate once per Cruise, so flows already on the
//! link make room for one that joins, whatever loss each of them sees. Not a
//! flow alone whose sender lost its core lately, to a queue no deeper than
//! its absences explain: the queue its pacer's catch-ups build carries the
//! link through the next absence (`own_absence`).
//!
//! A queue that stands through a Cruise round near its deepest and loses more
//! than random loss explains (up to the high-loss threshold) is a
//! shared queue overflowing: `inflight_hi` is cut to 0.7 of the flight, and
//! Cruise regrows it by the same small steps for every flow (multiplicative
//! decrease, additive increase), which evens out flows that joined a busy
//! link at different times. Beside other flows, Cruise's loss up to that
//! threshold is not congestion of the flow's own, however deep the queue
//! looks (which flow's datagrams a full queue drops is chance), unless the
//! flow is far below its recent peak on a single verdict of another flow.
//!
//! A sender that loses its core stops all its flows, and the bottleneck drains
//! their queue meanwhile: beside sibling flows (other connections of its
//! endpoint to the same host), the RTTs of the packets sent to make up for that
//! absence are not what says whether a queue stands, or whose it is.
//!
//! A flow alone reads queues from the path's RTT samples: each sample less the
//! rise its forward one-way delay does not show (the sender reading acks late:
//! `RateSample::rtt`); checks made sample by sample (a probe's end, Startup's
//! loss) read the smallest of the last few milliseconds' (a receiver that took
//! in a scheduler slice's datagrams at once: `RateSample::standing_rtt`).
//! Beside sibling flows it reads the RTT as read (`sample_rtt`).
//!
//! Loss is not congestion by itself: random loss barely changes the delivery rate,
//! which is what the model tracks. Loss counts only when it is high in the flight it
//! hit: above [`LOSS_THRESH`] (the draft's 2 %) while the RTT shows a standing queue
//! (a drop-tail queue overflowing), or above [`HIGH_LOSS_THRESH`] regardless (a
//! shallow buffer overflowing, whose queue the RTT cannot show; for a flow alone
//! cruising on a clean path, above a quarter: less there is another flow's
//! overflow, a loss-based flow's slow start joining, answered by the shared
//! queue's cut, `join_overflow`). Then, as in BBRv3,
//! the data in flight is capped (`inflight_hi`) and the rate and window are bounded
//! from below the model (`bw_lo`, `inflight_lo`) until the next probe.
//!
//! Random loss on the wire takes packets the bottleneck already carried, so the
//! delivery rate is the link's times (1 − loss): ProbeBW paces at bw / (1 − the
//! loss floor), the smallest loss rate of the last rounds (random loss is in every
//! round, a queue's overflow only in some).
//!
//! Startup ends on its own overshoot too: loss while the latest RTT shows any
//! queue (a shallow buffer overflows within a round), beyond the random loss
//! Startup's queue-free rounds showed (once they carried enough datagrams to
//! tell; before, only loss no random loss explains, and in its first 200
//! datagrams only if it recurs). The repair of that overshoot
//! (Drain, retransmissions) is not taken for congestion, ProbeBW probes at once
//! after such an exit, and Up starts over while it keeps finding bandwidth, so an
//! estimate a round behind Startup's rate catches up in rounds, not probe cycles. Rounds the receiver's credit limited do
//! not count as the pipe's plateau.
//!
//! Here: the state, the gains of each mode and the [`Controller`] entry points;
//! `cycle` (the transitions between modes and phases), `startup` (its seeds and
//! exits), `model` (the filters, pacing and window), `loss` (what loss says)
//! `shared_queue` (a queue another flow keeps), `join_overflow` (another
//! flow's overflow that a flow alone's RTT cannot show), `sibling_pause` (RTTs a
//! sender's absence from its core drained), `own_absence` (the queue a
//! flow alone keeps through them) and `sample_rtt` (which RTT of a sample
//! shows a queue).

use std::time::{Duration, Instant};

use super::another_flow::AnotherFlow;
use super::delivery_rate::RateSample;
use super::jump_flight::JumpFlight;
use super::queue_owner::QueueOwner;
use super::{Controller, ModelSnapshot};
use crate::connection::ShareOnPath;
use crate::rtt::RttEstimator;
use crate::saved_path::Jump;
use crate::stats::{ControllerState, QueueVerdicts};
use cycle::QueuedSamples;
use join_overflow::JoinCut;
use loss::Overshoot;
use own_absence::Absences;
use recent_peak::RecentPeak;

mod ahead_on_path;
mod cycle;
mod join_overflow;
mod loss;
mod model;
mod own_absence;
mod recent_peak;
mod sample_rtt;
mod shared_queue;
mod sibling_pause;
mod startup;
#[cfg(test)]
mod tests;

/// Startup pacing gain, 4·ln 2 ≈ 2.77 (draft: BBR.StartupPacingGain).
const STARTUP_PACING_GAIN: f64 = 2.77;
/// Window gain in Startup, Drain and ProbeBW (draft: BBR.DefaultCwndGain = 2).
const CWND_GAIN: f64 = 2.0;
/// Drain pacing gain (draft: BBR.DrainPacingGain = 0.35).
const DRAIN_PACING_GAIN: f64 = 0.35;
/// ProbeBW Up pacing gain. The draft's ProbeBW_UP uses 1.25; one round of it
/// queues up to 0.25 BDP, a quarter of the base RTT, at the bottleneck. RMDT must
/// not flood the path (queueing delay p99 under 25 % of the base RTT), so probing
/// is 20 % up: the queue a probe builds stays at a fifth of the RTT, and a faster
/// bottleneck is still found at 1.2× per probe (probes repeat at once while they
/// find more).
const PROBE_UP_PACING_GAIN: f64 = 1.2;
/// Each ProbeBW Up that follows one which found more bandwidth without any
/// queue (every RTT sample of its round within [`QUEUE_FREE_RTT`] of the
/// minimum), once the run of Ups has grown the estimate by
/// [`ESCALATE_AFTER_GROWTH`], paces this much higher than the one before, up
/// to [`MAX_UP_PACING_GAIN`]. The estimate trails the rate by about one and a
/// half round trips (a delivery rate spans a round trip of acks), so a gain of
/// 1.2 grows the rate only 1.13× per round trip: a bottleneck that came back
/// from 200 Mbit/s to 1 Gbit/s took 13 round trips to find (1.3 s at 100 ms).
/// An empty queue says the path takes more than the last round sent; beside a
/// flow that keeps a queue standing (CUBIC) no round is queue-free and probes
/// stay at 1.2 (an escalation without that condition took CUBIC's share).
const UP_GAIN_STEP: f64 = 1.25;
/// Highest ProbeBW Up gain the escalation reaches: 1.31× growth per round trip.
/// The round that reaches the bottleneck overshoots it by at most half the
/// estimate's BDP before its queue ends the probe (2.0 overshot a whole BDP:
/// 8,000 retransmissions at 1 Gbit/s × 100 ms).
const MAX_UP_PACING_GAIN: f64 = 1.5;
/// An RTT sample within this fraction of the minimum (and at least
/// [`QUEUE_RTT_FLOOR`]) above it shows no queue at all, for the escalation.
const QUEUE_FREE_RTT: f64 = 0.02;
/// Growth of the estimate since a run of ProbeBW Ups began before the gain
/// escalates and, for a flow alone, only the probe's queue or loss ends the
/// run: the bottleneck grew by far more than a share another flow left.
const ESCALATE_AFTER_GROWTH: f64 = 1.5;
/// ProbeBW Down pacing gain (BBRv1's drain phase of the gain cycle, 0.75: empties a
/// probe's queue within one round).
const PROBE_DOWN_PACING_GAIN: f64 = 0.75;
/// Rounds at gain 1 between probes (BBRv1's gain cycle: 8 phases, 6 of them at 1).
const CRUISE_ROUNDS: u64 = 6;
/// Rounds at gain 1 between probes while a flow alone's estimate is far below
/// what it delivered lately ([`RecentPeak`]): the bottleneck slowed down and
/// may come back, and a whole Cruise after a probe that just missed its return
/// followed it half a second late (1 Gbit/s back from 200 Mbit/s at 100 ms:
/// 2.03 s, where a probe in time took 1.2-1.6 s).
const SLOWED_CRUISE_ROUNDS: u64 = 2;
/// Extra Cruise rounds drawn per cycle from `0..=CRUISE_JITTER_ROUNDS` so flows do
/// not probe in lockstep (BBRv1 randomizes the cycle phase).
const CRUISE_JITTER_ROUNDS: u64 = 2;
/// Growth of the estimate after a probe that counts as "found more bandwidth": most
/// of what the Up gain could find.
const PROBE_FOUND_MORE: f64 = 1.15;
/// Rounds the bandwidth max filter spans (BBRv1: BtlBwFilterLen = 10 rounds).
const BW_FILTER_ROUNDS: usize = 10;
/// How often ProbeRTT runs without a fresh minimum (draft: ProbeRTTInterval = 5 s).
const PROBE_RTT_INTERVAL: Duration = Duration::from_secs(5);
/// Window in ProbeRTT as a fraction of the BDP (draft: BBR.ProbeRTTCwndGain = 0.5).
const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// Loss rate in a flight that signals congestion when the RTT shows a queue (draft:
/// BBRLossThresh = 2 %).
const LOSS_THRESH: f64 = 0.02;
/// Loss rate in a flight that signals congestion even without a visible queue. Above
/// the random loss rates pmdt is built for (5 % keeps ≥ 75 % of the link).
const HIGH_LOSS_THRESH: f64 = 0.20;
/// The least rise over the minimum RTT that counts as a queue, whatever share of
/// the minimum a threshold names (ack delay and pacing bursts are not a queue).
const QUEUE_RTT_FLOOR: Duration = Duration::from_millis(2);
/// In Startup a smaller rise counts (fraction of the minimum RTT, at least
/// [`QUEUE_RTT_FLOOR`]): no probe queues on purpose there, so a round whose every
/// RTT sample is this far above the minimum is Startup's own overshoot. A shallow
/// buffer (pmdt-wanem's 1 MiB at 1 Gbit/s: 8 ms against a 200 ms RTT) shows only
/// this much before it overflows.
const STARTUP_QUEUE_RTT_FRACTION: f64 = 0.02;
/// Multiplicative decrease of the bounds on congestion (draft: BBRBeta = 0.7).
const BETA: f64 = 0.7;
/// Growth of `inflight_hi` per round of ProbeBW Up while the window is what limits
/// (BBRv3 grows it exponentially in rounds too; per round by the Up pacing gain here).
const INFLIGHT_HI_GROWTH: f64 = 1.25;
/// Longest ProbeBW Up lasts, rounds, if the data in flight never reaches its target
/// (the pipe cannot take more).
const MAX_UP_ROUNDS: u64 = 3;
/// After a probe overflowed, Up raises `inflight_hi` by this many packets in its
/// first round and doubles the step each round (BBRv3's
/// BBRProbeInflightHiUpward: 1, 2, 4, … packets), at most by
/// [`INFLIGHT_HI_GROWTH`] a round. The same steps for every flow, whatever its
/// share: a flow below its share regains it faster, relatively, than one above
/// it (additive increase against the bounds' multiplicative decrease). Steps
/// of 1/128 of the bound, doubling, kept every flow's share where it was.
const GENTLE_FIRST_STEP_PACKETS: u64 = 1;
/// How long this flow's own congestion (its loss said its rate overshot the
/// path) keeps it from taking a standing queue for another flow's.
const OWN_CONGESTION_MEMORY: Duration = Duration::from_secs(4);
/// Highest random loss (the median loss of the last rounds without a queue,
/// [`Bbr::typical_round_loss`]) at which a flow alone waits between probes as
/// long as a loss-based flow takes to regrow ([`Bbr::reno_coexistence_wait`],
/// BBRv3's Reno coexistence). Each probe overflows a shallow buffer: probing
/// every few rounds, this flow took 95.4 % of 1 Gbit/s × 40 ms (1 MiB queue)
/// and left a CUBIC flow that joined 2 s after it 2.3 % (simulator, 30 s);
/// waiting, 79.1 / 18.3 %, and 71.9 / 25.8 over a minute (CUBIC's own growth
/// sets the pace). At 0.25 % random loss a loss-based flow gets a few Mbit/s
/// of such a path (the Mathis bound), and on lossier paths the probes and
/// their Down phases keep the estimate up and drain the queue the loss
/// compensation builds in a long Cruise (5 % at 100 Mbit/s × 10 ms: 89.3 %
/// of the link; 85.5 with every Cruise waiting, 87.0 gated on the loss
/// floor, the rounds' minimum, which is zero in many rounds of 85 datagrams).
const RENO_COEXISTENCE_MAX_LOSS: f64 = 0.0025;
/// Most Cruise rounds between probes while sharing, or alone on a path
/// without random loss, before the jitter (BBRv3's Reno coexistence bound,
/// 63).
const MAX_SHARED_CRUISE_ROUNDS: u64 = 63;
/// A standing queue is yielded to if the queue drained within this many
/// minimum RTTs (flows that yield keep it; one that never drains is a
/// buffer-filling flow's).
const QUEUE_DRAINED_MEMORY_RTTS: u32 = 10;
/// The deepest queue is the largest of two slots of this length (the queue's
/// depth as the last 5-10 s saw it).
const QUEUE_DEPTH_SLOT: Duration = Duration::from_secs(5);
/// Rounds whose loss rate the random-loss floor is the minimum of (random loss
/// is in every round; a queue's overflow only in some).
const LOSS_FLOOR_ROUNDS: usize = 8;
/// Highest loss floor that counts as random loss on the wire (above it, loss is
/// treated as the path's limit, not compensated).
const MAX_LOSS_FLOOR: f64 = 0.15;
/// Pace this fraction below the estimate (draft: BBR.PacingMarginPercent = 1 %).
const PACING_MARGIN: f64 = 0.01;
/// Smallest window, packets (draft: BBRMinPipeCwnd = 4).
const MIN_PIPE_CWND_PACKETS: u64 = 4;
/// Initial window, packets (RFC 9002's 10 packets, as the other controllers).
const INITIAL_CWND_PACKETS: u64 = 10;
/// Send quanta added to the window target for ack aggregation and pacing bursts
/// (draft: BBRUpdateMaxInflight adds 3 × BBR.send_quantum).
const TARGET_CWND_QUANTA: u64 = 3;
/// Packets per send quantum in the bounds that answer loss (the receiver
/// acknowledges every second packet).
const SEND_QUANTUM_PACKETS: u64 = 2;
/// The window's send quantum is the pacing rate times this (draft:
/// BBRSetSendQuantum, 1 ms)...
const SEND_QUANTUM_TIME: Duration = Duration::from_millis(1);
/// ...up to this many bytes (the draft's 64 KB).
const MAX_SEND_QUANTUM_BYTES: u64 = 64 * 1024;

/// BBR's mode (draft §4.3 state machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Startup,
    Drain,
    ProbeBw(Phase),
    ProbeRtt,
}

/// Whether the acknowledgements arriving are for packets a probe sent (BBRv3's
/// `bw_probe_samples`): only their loss says where the pipe's edge is, so only
/// they may set `inflight_hi`, once per probe. Losses of packets sent after
/// the probe, while its queue still overflows, went out at ever smaller
/// flights: each lowered `inflight_hi` again, down to 0.83 BDP after one probe
/// at 1 Gbit/s × 100 ms, and it took the gentle regrowth eight seconds to
/// climb back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProbeFeedback {
    /// No probe's packets are being acknowledged (or the probe's loss already
    /// set `inflight_hi`).
    Idle,
    /// ProbeBW Up is sending.
    Probing {
        /// Bytes delivered when Up began: its packets were sent at or after it.
        since: u64,
    },
    /// Up ended; its last packets are acknowledged by the end of this round.
    Ending {
        /// The round whose end closes the probe's feedback.
        last_round: u64,
        /// Bytes delivered when Up began: a packet sent in Up was sent with at
        /// least this much delivered (`RateSample::prior_delivered`) …
        since: u64,
        /// … and less than this, delivered when Up ended.
        until: u64,
    },
}

/// ProbeBW's phases (draft: ProbeBW_DOWN, _CRUISE, _REFILL, _UP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Down,
    Cruise,
    Refill,
    Up,
}

/// How ProbeBW Up raises `inflight_hi` round by round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UpGrowth {
    /// By [`INFLIGHT_HI_GROWTH`] a round: nothing says where the pipe ends.
    Fast,
    /// From [`GENTLE_FIRST_STEP_PACKETS`], doubling: the last probe overflowed the queue just
    /// above the pipe, and the next one approaches it in small steps.
    Gentle {
        /// The flight an overflow took for the pipe, bytes: a gentle probe's
        /// flight past it with no queue says the pipe grew
        /// ([`Bbr::gentle_probe_outgrew_the_pipe`]). None after a cut to a
        /// shared queue: a share, not the pipe.
        pipe: Option<u64>,
    },
}

/// What the last ProbeBW Up of a flow alone far below its recent peak said
/// once its flight was acknowledged (see [`Bbr::rising_run_goes_on`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RisingRun {
    /// Nothing to go on with.
    None,
    /// The last Up ended with its samples (mostly) queue-free; whether it found
    /// more shows a round later.
    UpQueueFree,
    /// It found more with no queue: the next probe goes on escalated.
    GoesOn,
}

#[cfg(test)]
impl UpGrowth {
    /// Whether Up approaches a bound a cut set in small steps.
    fn is_gentle(self) -> bool {
        matches!(self, Self::Gentle { .. })
    }
}

/// The controller. Rates are bytes per second, sizes bytes.
#[derive(Debug, Clone)]
pub(crate) struct Bbr {
    mss: u64,
    mode: Mode,
    cwnd: u64,
    /// Window before a persistent-congestion collapse, restored on the next ack.
    prior_cwnd: Option<u64>,
    pacing_rate: Option<u64>,
    pacing_gain: f64,
    cwnd_gain: f64,

    // Round counting (draft: BBR.round_count, BBR.next_round_delivered).
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,

    // The model.
    /// Maximum delivery rate per round, the last `BW_FILTER_ROUNDS` rounds.
    bw_rounds: [u64; BW_FILTER_ROUNDS],
    max_bw: u64,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Option<Instant>,
    probe_rtt_min_delay: Option<Duration>,
    probe_rtt_min_stamp: Option<Instant>,

    // Startup.
    /// Resumed from a saved path (`crate::saved_path`): its bandwidth, bytes/s,
    /// Startup's ceiling and end.
    resumed_bw: Option<u64>,
    /// The jump's flight until its acks are back (see [`JumpFlight`]).
    jump_flight: Option<JumpFlight>,
    full_bw: u64,
    full_bw_count: u32,
    full_bw_reached: bool,

    // ProbeBW.
    phase_start: Option<Instant>,
    phase_start_round: u64,
    cruise_rounds: u64,
    /// `max_bw` when the last probe began: a probe that raised it by 25 % or more is
    /// followed by another one at once.
    bw_at_probe: u64,
    /// Rounds of the current run of ProbeBW Ups (the gentle step doubles
    /// with each).
    up_rounds: u32,
    up_growth: UpGrowth,
    /// The current ProbeBW Up's pacing gain ([`UP_GAIN_STEP`]).
    up_gain: f64,
    /// The current ProbeBW Up's RTT samples, and how many showed a queue.
    up_samples: QueuedSamples,
    /// The current probe escalated its gain: its overshoot is its own.
    escalated_probe: bool,
    /// Whether the next probe goes on with the last one's rise.
    rising_run: RisingRun,
    /// `max_bw` when the current run of ProbeBW Ups began.
    up_base_bw: u64,
    /// Bytes delivered by the latest sample's ack.
    total_delivered: u64,

    // ProbeRTT.
    probe_rtt_done: Option<Instant>,
    probe_rtt_round_done: bool,

    // Bounds from congestion (BBRv3: inflight_hi, bw_lo, inflight_lo).
    inflight_hi: Option<u64>,
    bw_lo: Option<u64>,
    inflight_lo: Option<u64>,
    /// A flight in this round lost too much: lower the bounds at its end.
    congested_in_round: bool,
    probe_feedback: ProbeFeedback,
    /// Startup's overshoot and its repair, which Startup's exit and `inflight_hi`
    /// answered already (the lower bounds must not take it for congestion).
    overshoot: Overshoot,
    /// Startup ended on loss, its estimate a round behind its rate: the first
    /// ProbeBW cycle probes at once instead of cruising a cycle below the link.
    probe_first: bool,
    /// Largest delivery rate and delivered bytes of a sample in this round.
    bw_latest: u64,
    inflight_latest: u64,
    /// `bw_latest` of the previous round.
    prev_bw_latest: u64,
    /// The highest delivery rate two ProbeBW rounds in a row reached lately
    /// (a bottleneck that slowed down).
    recent_peak: RecentPeak,

    // Random loss on the wire: bytes acknowledged and declared lost this round,
    // the loss rate of the last rounds, and their minimum.
    round_acked: u64,
    round_lost: u64,
    loss_rounds: [f64; LOSS_FLOOR_ROUNDS],
    /// How many of `loss_rounds` were measured (at most all of them).
    loss_rounds_measured: usize,
    loss_floor: f64,
    /// The loss rate of the last round that ended, and of the last round before
    /// the current ProbeBW Up: a probe's loss is compared with what the path
    /// lost just before it, so loss that rose a moment ago (the floor takes
    /// [`LOSS_FLOOR_ROUNDS`] to follow) is not taken for the probe's overflow.
    last_round_loss: f64,
    probe_base_loss: f64,
    /// Bytes lost and lost + acked over Startup's rounds that showed no queue:
    /// the path's random loss, which Startup's overshoot must exceed to count.
    startup_lost: u64,
    startup_total: u64,

    // Ack aggregation (draft: BBR.extra_acked and its interval).
    extra_acked_interval_start: Option<Instant>,
    extra_acked_delivered: u64,
    extra_acked_max: [u64; 2],
    extra_acked_slot: usize,
    extra_acked_slot_rounds: u64,
    extra_acked: u64,
    /// Smoothed RTT (the connection's estimator), for the aggregation cap.
    srtt: Duration,

    latest_rtt: Duration,
    /// RTT when the current ProbeBW Up began.
    probe_start_rtt: Duration,
    /// From ProbeBW Up until a round after it (its packets acknowledged): the
    /// smallest RTT of the round before Up, which the probe's own queue adds to
    /// ([`Self::filter_sample`]).
    probe_base_rtt: Option<Duration>,
    /// The last round's queue was another flow's (see `update_shared_queue`).
    shared_queue: bool,
    /// Whose queue stands in this Cruise (see [`QueueOwner`]).
    queue_owner: QueueOwner,
    /// A Cruise round overflowed a standing queue under a check of whose it
    /// is, and waits for its verdict (see `Bbr::overflow_says_another_flow`).
    overflow_awaits_check: bool,
    /// When this flow's loss last said its rate overshot the path.
    congested_at: Option<Instant>,
    /// What checks found about another flow's queue lately
    /// ([`QueueOwner::Another`]).
    another_flow: AnotherFlow,
    /// What the checks of standing queues found, counted (statistics).
    queue_verdicts: QueueVerdicts,
    /// The largest queueing delay (RTT over the minimum) of the current and the
    /// previous [`QUEUE_DEPTH_SLOT`], and when the current one began.
    queue_depth: [Duration; 2],
    queue_depth_slot_start: Option<Instant>,
    /// The round of the last cut to a shared queue's overflow.
    shared_cut_round: Option<u64>,
    /// A cut a flow alone took for another flow's overflow with no queue
    /// showing ([`JoinCut`]), undone if the path fell instead.
    join_cut: Option<JoinCut>,
    /// After a cut to a shared queue (or once another flow's queue stood),
    /// Cruise regrows `inflight_hi` by this many bytes next round (see
    /// [`Bbr::regrow_after_shared_cut`]).
    shared_regrow_step: Option<u64>,
    /// Largest `tx_in_flight` of a sample in this round: whether
    /// `inflight_hi` is what limits the flight.
    round_max_tx_in_flight: u64,
    /// When the round under way began (its first sample).
    round_started: Option<Instant>,
    /// The round from which Startup's early rounds count: the first whose
    /// sample the application did not hold back.
    startup_unheld_round: Option<u64>,
    /// The largest smallest-RTT of Startup's rounds from the first unheld one
    /// up to the one before the last that ended: the deepest queue they
    /// showed, judged against the minimum RTT as it is now (a joiner's first
    /// samples may sit in the others' queue, and its minimum falls later).
    /// See `Bbr::startup_queue_doubled`.
    startup_deepest_round_rtt: Option<Duration>,
    /// The bytes delivered when Startup first lost too much within its first
    /// [`MIN_STARTUP_LOSS_SAMPLE`] datagrams (see `Bbr::on_inflight_too_high`).
    ///
    /// [`MIN_STARTUP_LOSS_SAMPLE`]: startup::MIN_STARTUP_LOSS_SAMPLE
    startup_loss_at: Option<u64>,
    /// Smallest RTT sample of the current, the previous round and the one
    /// before it (whether Startup's last round grew the queue).
    round_min_rtt: Option<Duration>,
    prev_round_min_rtt: Option<Duration>,
    round_min_rtt_before: Option<Duration>,
    /// Other connections of this endpoint to the same peer host
    /// ([`Controller::on_path_siblings`]).
    siblings: usize,
    /// The sender's recent absences from its core
    /// (`Bbr::keeps_own_absences_queue`).
    absences: Absences,
    bytes_in_flight: u64,
    /// The rate a yield to a standing queue left, until the next probe
    /// (lifting it once the queue drained gave the room back to the largest
    /// flow).
    queue_yield: Option<u64>,
    /// When a round's RTT last showed no standing queue.
    queue_drained_at: Option<Instant>,
    /// Bytes a round by which Cruise paces above the estimate beside other
    /// flows (`Self::climb_beside_others`).
    shared_climb_step: Option<u64>,
    /// How this flow's delivery compared with its siblings' beside a
    /// loss-based flow, as the endpoint last found it (`ahead_on_path`).
    share_on_path: ShareOnPath,
}

impl Bbr {
    /// A controller for datagrams carrying `mss` bytes.
    pub(crate) fn new(mss: u64) -> Self {
        Self {
            mss,
            mode: Mode::Startup,
            cwnd: INITIAL_CWND_PACKETS * mss,
            prior_cwnd: None,
            pacing_rate: None,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: CWND_GAIN,
            round_count: 0,
            extra_acked_interval_start: None,
            extra_acked_delivered: 0,
            extra_acked_max: [0; 2],
            extra_acked_slot: 0,
            extra_acked_slot_rounds: 0,
            extra_acked: 0,
            srtt: Duration::ZERO,
            next_round_delivered: 0,
            round_start: false,
            bw_rounds: [0; BW_FILTER_ROUNDS],
            max_bw: 0,
            min_rtt: None,
            min_rtt_stamp: None,
            resumed_bw: None,
            jump_flight: None,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: None,
            full_bw: 0,
            full_bw_count: 0,
            full_bw_reached: false,
            phase_start: None,
            phase_start_round: 0,
            cruise_rounds: CRUISE_ROUNDS,
            bw_at_probe: 0,
            up_rounds: 0,
            up_growth: UpGrowth::Fast,
            up_gain: PROBE_UP_PACING_GAIN,
            up_samples: QueuedSamples::default(),
            escalated_probe: false,
            rising_run: RisingRun::None,
            up_base_bw: 0,
            total_delivered: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            inflight_hi: None,
            bw_lo: None,
            inflight_lo: None,
            congested_in_round: false,
            probe_feedback: ProbeFeedback::Idle,
            overshoot: Overshoot::InStartup,
            probe_first: false,
            bw_latest: 0,
            inflight_latest: 0,
            prev_bw_latest: 0,
            recent_peak: RecentPeak::default(),
            round_acked: 0,
            round_lost: 0,
            loss_rounds: [0.0; LOSS_FLOOR_ROUNDS],
            loss_rounds_measured: 0,
            loss_floor: 0.0,
            last_round_loss: 0.0,
            startup_lost: 0,
            startup_total: 0,
            probe_base_loss: 0.0,
            latest_rtt: Duration::ZERO,
            probe_start_rtt: Duration::ZERO,
            probe_base_rtt: None,
            shared_queue: false,
            queue_owner: QueueOwner::Unknown,
            overflow_awaits_check: false,
            congested_at: None,
            another_flow: AnotherFlow::Unseen,
            queue_verdicts: QueueVerdicts::default(),
            shared_cut_round: None,
            join_cut: None,
            queue_depth: [Duration::ZERO; 2],
            queue_depth_slot_start: None,
            shared_regrow_step: None,
            round_max_tx_in_flight: 0,
            round_started: None,
            startup_unheld_round: None,
            startup_deepest_round_rtt: None,
            startup_loss_at: None,
            round_min_rtt: None,
            prev_round_min_rtt: None,
            round_min_rtt_before: None,
            siblings: 0,
            absences: Absences::default(),
            bytes_in_flight: 0,
            queue_drained_at: None,
            queue_yield: None,
            shared_climb_step: None,
            share_on_path: ShareOnPath::Even,
        }
    }

    /// The bandwidth the controller uses: the model bounded by congestion.
    fn bw(&self) -> u64 {
        let bw = self.bw_lo.map_or(self.max_bw, |lo| lo.min(self.max_bw));
        self.queue_yield.map_or(bw, |y| y.min(bw))
    }

    /// `gain × bw × min_rtt` (draft: BBRBDPMultiple), or the initial window before a
    /// model exists.
    fn bdp_multiple(&self, gain: f64) -> u64 {
        match self.min_rtt {
            Some(rtt) if self.bw() > 0 => (gain * self.bw() as f64 * rtt.as_secs_f64()) as u64,
            _ => (gain * (INITIAL_CWND_PACKETS * self.mss) as f64) as u64,
        }
    }

    fn min_cwnd(&self) -> u64 {
        MIN_PIPE_CWND_PACKETS * self.mss
    }

    fn quanta(&self) -> u64 {
        TARGET_CWND_QUANTA * SEND_QUANTUM_PACKETS * self.mss
    }

    /// The window's room for bursts (draft: BBRSetSendQuantum and
    /// BBRQuantizationBudget): where batching dominates the RTT, three send quanta
    /// of a millisecond at the pacing rate, up to 64 KB each. A poll loop moves a
    /// burst of datagrams per iteration and its peer acknowledges a burst at a
    /// time; on a path a few microseconds long the BDP is a handful of datagrams,
    /// and a window without this room idles between the bursts (over memif:
    /// window-limited for a third to half of a transfer). Elsewhere the small
    /// [`Self::quanta`]: on a long path the room would only queue at the
    /// bottleneck and take it from other flows.
    fn window_quanta(&self) -> u64 {
        if !self.batching_dominates() {
            return self.quanta();
        }
        let at_rate = self
            .pacing_rate
            .map_or(0, |r| (r as f64 * SEND_QUANTUM_TIME.as_secs_f64()) as u64);
        TARGET_CWND_QUANTA
            * at_rate
                .min(MAX_SEND_QUANTUM_BYTES)
                .max(SEND_QUANTUM_PACKETS * self.mss)
    }

    /// A flow alone whose estimate is under half of its recent peak: a
    /// bottleneck that slowed down, and may come back. Not where the poll
    /// loops' bursts dominate the RTT: a round's rate there swings twice over
    /// (four flows over memif took that for a slowed bottleneck 700-800 times
    /// a transfer).
    fn slowed_alone(&self, now: Instant) -> bool {
        self.recent_peak.far_above(now, self.max_bw)
            && !self.shares_the_bottleneck(now)
            && !self.aggregation_dominates()
            && !self.batching_dominates()
    }

    fn enter(&mut self, now: Instant, mode: Mode) {
        if self.mode == Mode::ProbeBw(Phase::Up) && mode != self.mode && self.escalated_probe {
            // An escalated probe's last round overshoots the bottleneck it
            // reached by up to half a BDP, a round before its queue shows (up to
            // a third of its flight lost: the high loss threshold fires). That is
            // the pipe's edge, found, not congestion: its losses are repaired
            // as Startup's are, and do not cut the estimate (to 0.7 of a
            // recovered 1 Gbit/s path, for most of a second).
            self.overshoot = Overshoot::Draining {
                probe_bw_delivered: self.total_delivered,
            };
        }
        if self.mode == Mode::ProbeBw(Phase::Up) && mode != self.mode {
            self.rising_run = if self.up_samples.mostly_queue_free() {
                RisingRun::UpQueueFree
            } else {
                RisingRun::None
            };
        }
        if mode == Mode::ProbeBw(Phase::Up) {
            // An Up that follows an Up keeps its gain or escalates it (see
            // update_state); a probe starts at the base gain, or escalated
            // where it goes on with the last one's rise.
            if self.mode != mode {
                let goes_on =
                    std::mem::replace(&mut self.rising_run, RisingRun::None) == RisingRun::GoesOn;
                self.up_gain = if goes_on {
                    (PROBE_UP_PACING_GAIN * UP_GAIN_STEP).min(MAX_UP_PACING_GAIN)
                } else if self.shares_the_bottleneck(now) {
                    self.up_gain_beside_others()
                } else {
                    PROBE_UP_PACING_GAIN
                };
                self.escalated_probe = goes_on;
                self.up_base_bw = self.max_bw;
                self.up_rounds = 0;
            }
            self.up_samples = QueuedSamples::default();
        }
        self.mode = mode;
        self.phase_start = Some(now);
        self.phase_start_round = self.round_count;
        let (pacing, cwnd) = match mode {
            Mode::Startup => (STARTUP_PACING_GAIN, CWND_GAIN),
            Mode::Drain => (DRAIN_PACING_GAIN, CWND_GAIN),
            Mode::ProbeBw(Phase::Down) => (PROBE_DOWN_PACING_GAIN, CWND_GAIN),
            Mode::ProbeBw(Phase::Cruise) | Mode::ProbeBw(Phase::Refill) => (1.0, CWND_GAIN),
            // The draft raises the window gain to 2.25 in Up; here that let probes
            // push harder into queues other BBR flows keep (4 flows: Jain 0.94).
            Mode::ProbeBw(Phase::Up) => (self.up_gain, CWND_GAIN),
            Mode::ProbeRtt => (1.0, PROBE_RTT_CWND_GAIN),
        };
        if mode == Mode::ProbeBw(Phase::Up) {
            if !matches!(self.probe_feedback, ProbeFeedback::Probing { .. }) {
                self.probe_feedback = ProbeFeedback::Probing {
                    since: self.total_delivered,
                };
            }
        } else if let ProbeFeedback::Probing { since } = self.probe_feedback {
            self.probe_feedback = ProbeFeedback::Ending {
                last_round: self.round_count + 1,
                since,
                until: self.total_delivered,
            };
        }
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
        if !matches!(mode, Mode::ProbeBw(Phase::Up | Phase::Down | Phase::Cruise)) {
            self.probe_base_rtt = None;
        }
        match mode {
            Mode::ProbeBw(Phase::Cruise) => {
                // A per-flow, deterministic draw (no RNG in the controller).
                let jitter = (self.next_round_delivered / self.mss) % (CRUISE_JITTER_ROUNDS + 1);
                self.queue_owner = QueueOwner::Unknown;
                self.overflow_awaits_check = false;
                let slowed = self.slowed_alone(now);
                if slowed {
                    tracing::debug!(
                        bw = self.max_bw,
                        peak = self.recent_peak.bw(),
                        "bbr: far below the estimate of late; the next probe comes sooner"
                    );
                }
                self.cruise_rounds = if std::mem::take(&mut self.probe_first) {
                    0
                } else if slowed {
                    SLOWED_CRUISE_ROUNDS + jitter
                } else if self
                    .typical_round_loss()
                    .is_some_and(|loss| loss < RENO_COEXISTENCE_MAX_LOSS)
                    && !self.congested_lately(now)
                {
                    (CRUISE_ROUNDS + jitter).max(self.reno_coexistence_wait())
                } else {
                    CRUISE_ROUNDS + jitter
                };
            }
            Mode::ProbeBw(Phase::Refill) => {
                // Congestion held the rate well below the maximum filter: the
                // bottleneck slowed down and the filter's maximum is stale. Restart
                // the filter from what the path delivered last round, so forgetting
                // the lower bound does not bring the old rate back.
                if self
                    .bw_lo
                    .is_some_and(|lo| (lo as f64) < self.max_bw as f64 * BETA)
                    && self.prev_bw_latest > 0
                {
                    self.bw_rounds = [0; BW_FILTER_ROUNDS];
                    self.bw_rounds[(self.round_count % BW_FILTER_ROUNDS as u64) as usize] =
                        self.prev_bw_latest;
                    self.max_bw = self.prev_bw_latest;
                }
                // BBRv3 forgets the lower bounds before probing.
                self.bw_lo = None;
                self.inflight_lo = None;
                self.queue_yield = None;
                self.bw_at_probe = self.max_bw;
            }
            Mode::ProbeBw(Phase::Up) => {
                self.probe_start_rtt = self.latest_rtt;
                self.probe_base_rtt = Some(self.prev_round_min_rtt.unwrap_or(self.latest_rtt));
                self.probe_base_loss = self.last_round_loss;
                self.bw_at_probe = self.max_bw;
            }
            _ => {}
        }
    }

    /// One line per round (`RUST_LOG=pmdt_proto::congestion::bbr=trace`): the
    /// round that just ended, its smallest RTT against the minimum, the
    /// estimate against its largest delivery-rate sample, the flight and the
    /// pacing. Read beside pmdt-wanem's stalls, these lines showed why a flow
    /// alone at 40 ms took its own queue for another flow's (RESULTS, session
    /// 47).
    fn trace_round_end(&self, now: Instant) {
        let us = |d: Option<Duration>| d.map_or(0, |d| d.as_micros() as u64);
        let ended = self.round_count.saturating_sub(1);
        tracing::trace!(
            round = ended,
            mode = ?self.mode,
            min_rtt_us = us(self.min_rtt),
            round_min_rtt_us = us(self.round_min_rtt),
            bw = self.bw(),
            delivered = self.bw_latest,
            average = self.round_average(now),
            in_flight = self.bytes_in_flight,
            pacing_rate = self.pacing_rate.unwrap_or(0),
            check_gain = self.queue_owner.pacing_gain(ended),
            "bbr: round ended"
        );
    }

    /// What the round that is ending delivered over its length, bytes per
    /// second (zero for the first).
    fn round_average(&self, now: Instant) -> u64 {
        self.round_started
            .map(|t| now.saturating_duration_since(t).as_secs_f64())
            .filter(|&secs| secs > 0.0)
            .map_or(0, |secs| (self.round_acked as f64 / secs) as u64)
    }

    fn update_round(&mut self, rs: &RateSample) {
        self.round_start = false;
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.total_delivered;
            self.round_count += 1;
            self.round_start = true;
        }
    }
}

impl Controller for Bbr {
    fn on_ack(&mut self, _: Instant, _: Instant, _: u64, _: bool, rtt: &RttEstimator) {
        if self.pacing_rate.is_none() && rtt.has_sample() {
            self.update_pacing_rate(rtt);
        }
    }

    fn on_congestion_event(&mut self, _: Instant, _: Instant, persistent: bool, _: u64) {
        // Loss is judged per flight in `on_rate_sample`. Persistent congestion (every
        // packet lost for several PTOs) collapses the window; the next ack restores
        // it (BBRv1 on RTO).
        if persistent {
            self.prior_cwnd = Some(self.prior_cwnd.unwrap_or(self.cwnd).max(self.cwnd));
            self.cwnd = self.min_cwnd();
        }
    }

    fn on_rate_sample(&mut self, now: Instant, rs: &RateSample, rtt: &RttEstimator) {
        self.bytes_in_flight = rs.bytes_in_flight;
        self.total_delivered = rs.total_delivered;
        self.srtt = rtt.smoothed();
        self.latest_rtt = self.sample_rtt(rs);
        self.update_round(rs);
        // Before a round's end decides on its queue: the newest absence counts.
        self.note_absence(now, rs);
        if self.round_start {
            self.trace_round_end(now);
            let overflowed = self.round_lost_beyond_random();
            self.update_queue_depth(now);
            self.forget_a_verdict_the_path_fell_under(now);
            self.join_overflow_says_another_flow(now);
            self.overflow_says_another_flow(now);
            self.cut_for_shared_queue(now);
            self.end_round_loss();
            self.end_round_bounds();
            if matches!(self.mode, Mode::ProbeBw(_)) {
                self.recent_peak.update(now, self.prev_bw_latest);
            }
            self.round_min_rtt_before = self.prev_round_min_rtt;
            self.prev_round_min_rtt = self.round_min_rtt.take();
            if !self.standing_queue(self.prev_round_min_rtt) {
                self.queue_drained_at = Some(now);
            }
            self.update_shared_queue(now);
            self.yield_to_standing_queue(now);
            self.climb_beside_others(now, overflowed);
            self.regrow_after_shared_cut();
            self.round_max_tx_in_flight = 0;
            self.round_started = Some(now);
        }
        if self.mode == Mode::Startup && !rs.is_app_limited && self.startup_unheld_round.is_none() {
            self.startup_unheld_round = Some(self.round_count);
        }
        self.round_max_tx_in_flight = self.round_max_tx_in_flight.max(rs.tx_in_flight);
        let sample = self.sample_rtt(rs);
        if !sample.is_zero() && !self.paused_with_siblings(rs) {
            self.round_min_rtt = Some(self.round_min_rtt.map_or(sample, |m| m.min(sample)));
        }
        self.round_acked += rs.newly_acked;
        self.round_lost += rs.newly_lost;
        self.update_max_bw(rs);
        self.validate_jump(now, rs);
        self.update_ack_aggregation(now, rs);
        self.update_min_rtt(now, rs);
        self.bw_latest = self.bw_latest.max(rs.delivery_rate);
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if self.inflight_too_high(now, rs) {
            self.on_inflight_too_high(now, rs);
        } else if self.probe_overflowed(rs) {
            self.on_probe_overflow(now);
        }
        self.check_full_bw(rs);
        self.update_state(now, rs);
        if matches!(self.mode, Mode::ProbeBw(_)) {
            self.overshoot.on_probe_bw_sample(rs);
        }
        if self.full_bw_reached && !self.overshoot.is_behind(rs) {
            // Startup's exit capped the flight at the BDP its estimate then gave,
            // a round behind Startup's rate (as low as half the link): the cap
            // follows the estimate as it catches up, until ProbeBW's own flights
            // say more.
            let bdp = self.bdp_multiple(1.0) + self.quanta();
            if let Some(hi) = self.inflight_hi.as_mut() {
                *hi = (*hi).max(bdp);
            }
        }
        self.update_pacing_rate(rtt);
        self.update_cwnd(rs);
    }

    /// Startup from the initial train's rate (see [`Self::on_train_rate`]),
    /// paced from it at once where it seeded the model.
    fn on_initial_train(&mut self, rate: u64, rtt: &RttEstimator) {
        if self.on_train_rate(rate) {
            self.update_pacing_rate(rtt);
        }
    }

    /// Startup from a saved path (`crate::saved_path`): the jump's window, and
    /// its rate as the pacer's floor until Startup ends (Startup never lowers
    /// its rate before the pipe is full), the saved bandwidth as its ceiling
    /// and end. The model is seeded as from an initial train, at the rate over
    /// Startup's gain: the rate the jump's flight comes back at, then what the
    /// next rounds deliver, set the estimate (see [`Self::validate_jump`]), and
    /// Startup's exits judge it.
    fn resume(&mut self, jump: Jump) -> bool {
        if self.mode != Mode::Startup || self.full_bw_reached || self.total_delivered > 0 {
            return false;
        }
        let seed = (jump.rate as f64 / (STARTUP_PACING_GAIN * (1.0 - PACING_MARGIN))) as u64;
        self.seed_startup(seed, jump.window);
        self.pacing_rate = Some(self.pacing_rate.unwrap_or(0).max(jump.rate));
        self.resumed_bw = Some(jump.bandwidth.max(jump.rate));
        self.jump_flight = Some(JumpFlight::new(jump.rate, jump.window));
        tracing::debug!(
            rate = jump.rate,
            cwnd = self.cwnd,
            "bbr: Startup resumed from a saved path"
        );
        true
    }

    fn on_path_siblings(&mut self, siblings: usize) {
        self.siblings = siblings;
    }

    fn on_share_on_path(&mut self, share: ShareOnPath) {
        self.share_on_path = share;
    }

    fn window(&self) -> u64 {
        self.bounded_cwnd()
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.pacing_rate
    }

    fn model(&self) -> ModelSnapshot {
        let state = match self.mode {
            Mode::Startup => ControllerState::Startup,
            Mode::Drain => ControllerState::Drain,
            Mode::ProbeBw(Phase::Down) => ControllerState::ProbeBwDown,
            Mode::ProbeBw(Phase::Cruise) => ControllerState::ProbeBwCruise,
            Mode::ProbeBw(Phase::Refill) => ControllerState::ProbeBwRefill,
            Mode::ProbeBw(Phase::Up) => ControllerState::ProbeBwUp,
            Mode::ProbeRtt => ControllerState::ProbeRtt,
        };
        ModelSnapshot {
            state,
            bandwidth: self.bw(),
            min_rtt: self.min_rtt,
            bdp: if self.max_bw > 0 {
                self.bdp_multiple(1.0)
            } else {
                0
            },
            probe_wait_rounds: if self.full_bw_reached {
                self.cruise_rounds
            } else {
                0
            },
            queue_verdicts: self.queue_verdicts,
        }
    }
}
