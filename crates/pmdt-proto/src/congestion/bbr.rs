//! A model-based controller after BBR (draft-cardwell-ccwg-bbr, "BBR Congestion
//! Control"; BBRv1's gain cycle with BBRv3's loss bounds).
//!
//! The model: the bottleneck bandwidth (`max_bw`, a windowed maximum of delivery-rate
//! samples) and the round-trip propagation delay (`min_rtt`, a windowed minimum).
//! The controller paces at `pacing_gain × bw` and keeps at most `cwnd_gain × bw ×
//! min_rtt` in flight. Its modes:
//!
//! - **Startup**: doubles the sending rate per round until the bandwidth stops growing
//!   (three rounds under +25 %), or every RTT sample of a round shows a queue, or
//!   loss says the queue overflowed.
//! - **Drain**: empties the queue Startup built.
//! - **ProbeBW**: cycles Down (drain what the last probe queued) → Cruise (gain 1) →
//!   Refill → Up (gain 1.2, one round) to discover more bandwidth; after a probe that
//!   found more, it probes again at once, so the rate follows a faster bottleneck
//!   within a few rounds per 20 %; while its rounds show no queue at all, at gain
//!   1.5 (the estimate trails the rate: 1.2 grows it only 1.13× per round trip).
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
//!
//! A queue that stands in Cruise but drained lately is kept by flows that yield
//! too (each paces a little above its share): each flow takes half the queue's
//! share of the round trip off its rate once per Cruise, so flows already on the
//! link make room for one that joins, whatever loss each of them sees.
//!
//! A queue that stands through a Cruise round near its deepest and loses more
//! than random loss explains (but less than a flow's own overshoot) is a
//! shared queue overflowing: `inflight_hi` is cut to 0.7 of the flight, and
//! Cruise regrows it by the same small steps for every flow (multiplicative
//! decrease, additive increase), which evens out flows that joined a busy
//! link at different times.
//!
//! Loss is not congestion by itself: random loss barely changes the delivery rate,
//! which is what the model tracks. Loss counts only when it is high in the flight it
//! hit: above [`LOSS_THRESH`] (the draft's 2 %) while the RTT shows a standing queue
//! (a drop-tail queue overflowing), or above [`HIGH_LOSS_THRESH`] regardless (a
//! shallow buffer overflowing, whose queue the RTT cannot show). Then, as in BBRv3,
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
//! tell; before, only loss no random loss explains). The repair of that overshoot
//! (Drain, retransmissions) is not taken for congestion, ProbeBW probes at once
//! after such an exit, and Up starts over while it keeps finding bandwidth, so an
//! estimate a round behind Startup's rate catches up in rounds, not probe cycles. Rounds the receiver's credit limited do
//! not count as the pipe's plateau.

use std::time::{Duration, Instant};

use super::another_flow::AnotherFlow;
use super::delivery_rate::RateSample;
use super::jump_flight::JumpFlight;
use super::queue_owner::{CheckPurpose, QueueOwner};
use super::{Controller, ModelSnapshot};
use crate::rtt::RttEstimator;
use crate::saved_path::Jump;
use crate::stats::{ControllerState, QueueVerdicts};

/// Startup pacing gain, 4·ln 2 ≈ 2.77 (draft: BBR.StartupPacingGain).
const STARTUP_PACING_GAIN: f64 = 2.77;
/// A resumed Startup (paced at most at the saved path's bandwidth) ends once
/// the estimate reaches this share of it: the path still gives what it gave.
const RESUMED_FULL_SHARE: f64 = 0.9;
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
/// … but for this share of a round's samples: through `pmdt-wanem` sharing a
/// core with the receiver, a stray sample a few milliseconds late in a round of
/// thousands kept a flow alone from escalating (one run's rise from 200 Mbit/s
/// to 1 Gbit/s at 100 ms grew 1.2-1.3× a round for eight rounds, and took
/// 2.3 s in all). Counted over a run of Ups' samples since its last phase
/// change (a round at 1 Gbit/s × 100 ms has thousands).
const QUEUE_FREE_STRAYS: f64 = 0.01;
/// Growth of the estimate since a run of ProbeBW Ups began before the gain
/// escalates and, for a flow alone, only the probe's queue or loss ends the
/// run: the bottleneck grew by far more than a share another flow left.
const ESCALATE_AFTER_GROWTH: f64 = 1.5;
/// Growth of the estimate over a queue-free ProbeBW Up round that keeps the
/// probe going (and escalates its gain): what a 1.2 gain shows a round later.
const QUEUE_FREE_GROWING: f64 = 1.05;
/// ProbeBW Down pacing gain (BBRv1's drain phase of the gain cycle, 0.75: empties a
/// probe's queue within one round).
const PROBE_DOWN_PACING_GAIN: f64 = 0.75;
/// Rounds at gain 1 between probes (BBRv1's gain cycle: 8 phases, 6 of them at 1).
const CRUISE_ROUNDS: u64 = 6;
/// Extra Cruise rounds drawn per cycle from `0..=CRUISE_JITTER_ROUNDS` so flows do
/// not probe in lockstep (BBRv1 randomizes the cycle phase).
const CRUISE_JITTER_ROUNDS: u64 = 2;
/// Bandwidth growth that counts as "still growing" (draft: BBRFullBwThresh = 1.25).
const FULL_BW_THRESH: f64 = 1.25;
/// Growth of the estimate after a probe that counts as "found more bandwidth": most
/// of what the Up gain could find.
const PROBE_FOUND_MORE: f64 = 1.15;
/// Rounds without growth before the pipe counts as full (draft: BBRFullBwCount = 3).
const FULL_BW_COUNT: u32 = 3;
/// Rounds the bandwidth max filter spans (BBRv1: BtlBwFilterLen = 10 rounds).
const BW_FILTER_ROUNDS: usize = 10;
/// Window of the min RTT filter (draft: MinRTTFilterLen = 10 s).
const MIN_RTT_FILTER_LEN: Duration = Duration::from_secs(10);
/// How often ProbeRTT runs without a fresh minimum (draft: ProbeRTTInterval = 5 s).
const PROBE_RTT_INTERVAL: Duration = Duration::from_secs(5);
/// How long ProbeRTT holds the reduced window (draft: ProbeRTTDuration = 200 ms).
const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// Window in ProbeRTT as a fraction of the BDP (draft: BBR.ProbeRTTCwndGain = 0.5).
const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// Loss rate in a flight that signals congestion when the RTT shows a queue (draft:
/// BBRLossThresh = 2 %).
const LOSS_THRESH: f64 = 0.02;
/// Loss rate in a flight that signals congestion even without a visible queue. Above
/// the random loss rates pmdt is built for (5 % keeps ≥ 75 % of the link).
const HIGH_LOSS_THRESH: f64 = 0.20;
/// Fewest packets lost in a flight before its loss rate means anything (draft:
/// BBRStartupFullLossCnt = 6): small flights under random loss are noise.
const MIN_LOSS_PACKETS: u64 = 6;
/// An RTT this much above the minimum (fraction of it) shows a standing queue.
const QUEUE_RTT_FRACTION: f64 = 0.25;
/// … and at least this much (ack delay and pacing bursts are not a queue).
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
/// ProbeBW Up ends once an RTT sample exceeds the RTT at the probe's start by this
/// fraction of the minimum: the probe is building a queue instead of finding
/// bandwidth. (Relative to the start, not the minimum: a queue another flow keeps
/// standing must not stop every probe.)
const PROBE_UP_QUEUE_FRACTION: f64 = 0.125;
/// Longest ProbeBW Up lasts, rounds, if the data in flight never reaches its target
/// (the pipe cannot take more).
const MAX_UP_ROUNDS: u64 = 3;
/// Loss in a ProbeBW Up flight beyond the random-loss floor that marks the probe's
/// overflow, as a share of the flight. A drop-tail queue too shallow to show in the
/// RTT (pmdt-wanem's 1 MiB at 1 Gbit/s: 8 ms against 200 ms) overflows with no
/// other sign, and every Up lost the same ~2,600 packets at 1 Gbit/s × 200 ms.
const PROBE_LOSS_EXCESS: f64 = 0.01;
/// … and at least this many standard deviations of the floor's binomial noise in
/// a flight of that size (random loss alone must not end probes).
const PROBE_LOSS_SIGMAS: f64 = 4.0;
/// After a probe overflowed, Up raises `inflight_hi` by this many packets in its
/// first round and doubles the step each round (BBRv3's
/// BBRProbeInflightHiUpward: 1, 2, 4, … packets), at most by
/// [`INFLIGHT_HI_GROWTH`] a round. The same steps for every flow, whatever its
/// share: a flow below its share regains it faster, relatively, than one above
/// it (additive increase against the bounds' multiplicative decrease). Steps
/// of 1/128 of the bound, doubling, kept every flow's share where it was.
const GENTLE_FIRST_STEP_PACKETS: u64 = 1;
/// Longest a gentle Up lasts, rounds. An Up that follows it at once (its
/// rounds showed no queue and its estimate grew) goes on doubling the step
/// where it left off, as BBRv3's Up does for as long as it lasts: restarting
/// at one packet, a flow whose bound an overflow had set just before its
/// bottleneck came back from 200 Mbit/s to 1 Gbit/s (100 ms) grew by 255
/// packets per 0.8 s, 9-15 % of its flight, and was at 473 Mbit/s ten
/// seconds later.
const MAX_GENTLE_UP_ROUNDS: u64 = 8;
/// Growth of the estimate over a ProbeBW Up that counts as "still finding
/// bandwidth": Up starts over at once (its gain compounds, 1.2× per round) instead
/// of draining and cruising a few rounds before the next probe. A Startup
/// that ended on its own overshoot leaves an estimate from the round before the
/// pipe filled, as low as half the link: this regains it in a few rounds, not
/// cycles.
const UP_STILL_GROWING: f64 = PROBE_FOUND_MORE;
/// Rounds Drain lasts at most (Startup's queue drains in about two at its
/// gain).
const MAX_DRAIN_ROUNDS: u64 = 3;
/// Time between probes while another flow keeps a queue standing (BBRv3's
/// bw_probe_wait, 2-3 s), counted in rounds of the minimum RTT, unless the
/// window's packets make fewer rounds ([`MAX_SHARED_CRUISE_ROUNDS`]).
const SHARED_PROBE_WAIT: Duration = Duration::from_secs(2);
/// How long this flow's own congestion (its loss said its rate overshot the
/// path) keeps it from taking a standing queue for another flow's.
const OWN_CONGESTION_MEMORY: Duration = Duration::from_secs(4);
/// A round's delivery rate at least this share of the estimate it paced at
/// means its queue is not this flow's making.
const SHARED_DELIVERY_SHARE: f64 = 0.9;
/// Extra rounds on top of the shared probe wait, from the round's delivered
/// count (so flows do not probe in lockstep).
const SHARED_PROBE_WAIT_JITTER: u64 = 8;
/// Most Cruise rounds between probes while sharing (BBRv3's Reno coexistence
/// bound, 63).
const MAX_SHARED_CRUISE_ROUNDS: u64 = 63;
/// A standing queue is yielded to if the queue drained within this many
/// minimum RTTs (flows that yield keep it; one that never drains is a
/// buffer-filling flow's).
const QUEUE_DRAINED_MEMORY_RTTS: u32 = 10;
/// Startup's first rounds, whose RTT is not taken for a full pipe while the
/// estimate still grows (see `check_full_bw`), counted from the first round
/// the application did not hold back (a connection's first rounds may carry
/// only what the application had written yet).
const STARTUP_EARLY_ROUNDS: u64 = 3;
/// Fewest datagrams a round must lose for a shared queue's overflow to cut
/// `inflight_hi` (see [`Bbr::cut_for_shared_queue`]): one loss in a round is
/// as likely a stray as an overflow.
const SHARED_CUT_MIN_LOST_PACKETS: u64 = 2;
/// A round's loss must exceed the path's random loss by this many standard
/// deviations of its binomial noise in a round of that many datagrams before
/// it counts as a shared queue's overflow (random loss alone must not cut).
const SHARED_CUT_SIGMAS: f64 = 4.0;
/// … and by at most this share of the round: a flow's own overshoot (a probe,
/// a bottleneck that slowed down) loses 10-14 % of a round, and is answered
/// by the probe's bound and the short-term bounds, not by this cut. A shared
/// queue's overflow costs each flow 0.2-3 % of a round.
const SHARED_CUT_MAX_EXCESS: f64 = 0.05;
/// A round's every RTT must show at least this share of the deepest queue
/// seen lately ([`QUEUE_DEPTH_SLOT`]) for its loss to count as a shared
/// queue's overflow: a drop-tail queue drops only when full. Four flows
/// joining 1 Gbit/s × 40 ms lost in rounds whose smallest RTT showed 5.3-8.4
/// ms of the 8.4 ms queue; one flow at 100 Mbit/s × 100 ms with 1 % random
/// loss lost its usual share in rounds with 2 ms of its own queue (of the
/// 84 ms Startup filled), and was cut.
const SHARED_CUT_QUEUE_DEPTH: f64 = 0.5;
/// The deepest queue is the largest of two slots of this length (the queue's
/// depth as the last 5-10 s saw it).
const QUEUE_DEPTH_SLOT: Duration = Duration::from_secs(5);
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
/// Fewest rounds between two cuts to a shared queue: the round after a cut
/// still carries the flight sent before it (its loss is the old flight's).
const SHARED_CUT_EVERY_ROUNDS: u64 = 2;
/// Rounds whose loss rate the random-loss floor is the minimum of (random loss
/// is in every round; a queue's overflow only in some).
const LOSS_FLOOR_ROUNDS: usize = 8;
/// Highest loss floor that counts as random loss on the wire (above it, loss is
/// treated as the path's limit, not compensated).
const MAX_LOSS_FLOOR: f64 = 0.15;
/// Datagrams Startup's queue-free rounds must have carried before their loss rate
/// counts as the path's random loss (at 5 % loss, 200 datagrams lose 10 ± 3).
const MIN_STARTUP_LOSS_SAMPLE: u64 = 200;
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
    Probing,
    /// Up ended; its last packets are acknowledged by the end of this round.
    Ending {
        /// The round whose end closes the probe's feedback.
        last_round: u64,
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
    Gentle,
}

/// Where the connection is relative to Startup's overshoot. A sample's `lost`
/// counts every loss declared since its packet was sent, so samples of packets
/// sent before the overshoot's losses were all declared still carry them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overshoot {
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
    fn on_probe_bw_sample(&mut self, rs: &RateSample) {
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
    fn is_behind(&self, rs: &RateSample) -> bool {
        matches!(*self, Self::Resolved { delivered } if rs.prior_delivered >= delivered)
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

    // Random loss on the wire: bytes acknowledged and declared lost this round,
    // the loss rate of the last rounds, and their minimum.
    round_acked: u64,
    round_lost: u64,
    loss_rounds: [f64; LOSS_FLOOR_ROUNDS],
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
    /// After a cut to a shared queue (or once another flow's queue stood),
    /// Cruise regrows `inflight_hi` by this many bytes next round (see
    /// [`Bbr::regrow_after_shared_cut`]).
    shared_regrow_step: Option<u64>,
    /// Largest `tx_in_flight` of a sample in this round: whether
    /// `inflight_hi` is what limits the flight.
    round_max_tx_in_flight: u64,
    /// The round from which Startup's early rounds count: the first whose
    /// sample the application did not hold back.
    startup_unheld_round: Option<u64>,
    /// Smallest RTT sample of the current and of the previous round.
    round_min_rtt: Option<Duration>,
    prev_round_min_rtt: Option<Duration>,
    bytes_in_flight: u64,
    /// The rate a yield to a standing queue left, until the next probe
    /// (lifting it once the queue drained gave the room back to the largest
    /// flow).
    queue_yield: Option<u64>,
    /// When a round's RTT last showed no standing queue.
    queue_drained_at: Option<Instant>,
}

/// RTT samples of a ProbeBW Up, and how many of them showed a queue.
#[derive(Debug, Default, Clone, Copy)]
struct QueuedSamples {
    samples: u64,
    queued: u64,
}

impl QueuedSamples {
    fn add(&mut self, queued: bool) {
        self.samples += 1;
        self.queued += u64::from(queued);
    }

    /// No queue: at most [`QUEUE_FREE_STRAYS`] of the samples showed one.
    fn queue_free(&self) -> bool {
        self.queued as f64 <= self.samples as f64 * QUEUE_FREE_STRAYS
    }
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
            round_acked: 0,
            round_lost: 0,
            loss_rounds: [0.0; LOSS_FLOOR_ROUNDS],
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
            congested_at: None,
            another_flow: AnotherFlow::Unseen,
            queue_verdicts: QueueVerdicts::default(),
            shared_cut_round: None,
            queue_depth: [Duration::ZERO; 2],
            queue_depth_slot_start: None,
            shared_regrow_step: None,
            round_max_tx_in_flight: 0,
            startup_unheld_round: None,
            round_min_rtt: None,
            prev_round_min_rtt: None,
            bytes_in_flight: 0,
            queue_drained_at: None,
            queue_yield: None,
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
        if mode == Mode::ProbeBw(Phase::Up) {
            // An Up that follows an Up keeps its gain or escalates it (see
            // update_state); a probe starts at the base gain.
            if self.mode != mode {
                self.up_gain = PROBE_UP_PACING_GAIN;
                self.escalated_probe = false;
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
            self.probe_feedback = ProbeFeedback::Probing;
        } else if self.probe_feedback == ProbeFeedback::Probing {
            self.probe_feedback = ProbeFeedback::Ending {
                last_round: self.round_count + 1,
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
                self.cruise_rounds = if std::mem::take(&mut self.probe_first) {
                    0
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
    fn trace_round_end(&self) {
        let us = |d: Option<Duration>| d.map_or(0, |d| d.as_micros() as u64);
        let ended = self.round_count.saturating_sub(1);
        tracing::trace!(
            round = ended,
            mode = ?self.mode,
            min_rtt_us = us(self.min_rtt),
            round_min_rtt_us = us(self.round_min_rtt),
            bw = self.bw(),
            delivered = self.bw_latest,
            in_flight = self.bytes_in_flight,
            pacing_rate = self.pacing_rate.unwrap_or(0),
            check_gain = self.queue_owner.pacing_gain(ended),
            "bbr: round ended"
        );
    }

    fn update_round(&mut self, rs: &RateSample) {
        self.round_start = false;
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.total_delivered;
            self.round_count += 1;
            self.round_start = true;
        }
    }

    /// Ack aggregation (draft: BBRUpdateACKAggregation): bytes acknowledged beyond
    /// what the bandwidth estimate explains since the current interval began. Acks
    /// that arrive in batches (delayed acks, a poll-mode receiver that handles a
    /// burst per iteration) need that much more in flight, or a path whose minimum
    /// RTT is a few microseconds gets a window of a few packets and idles between
    /// batches.
    fn update_ack_aggregation(&mut self, now: Instant, rs: &RateSample) {
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
    fn aggregation_dominates(&self) -> bool {
        self.min_rtt
            .is_some_and(|min_rtt| self.srtt >= min_rtt * AGGREGATION_DOMINATES_RTT_RATIO)
    }

    /// Whether a poll loop's bursts dominate the RTT: the smoothed RTT at least
    /// twice the minimum, but within a millisecond of it (never on a path with
    /// a minimum RTT of a millisecond or more).
    fn batching_dominates(&self) -> bool {
        self.min_rtt.is_some_and(|min_rtt| {
            self.srtt >= min_rtt * BATCHING_RTT_RATIO && self.srtt - min_rtt < MAX_BATCHING_DELAY
        })
    }

    fn update_max_bw(&mut self, rs: &RateSample) {
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
    fn filter_sample(&self, rs: &RateSample) -> u64 {
        if let Some(base) = self.probe_base_rtt {
            let allowed = base + QUEUE_RTT_FLOOR;
            if rs.rtt <= allowed {
                return rs.delivery_rate;
            }
            return (rs.delivery_rate as f64 * allowed.as_secs_f64() / rs.rtt.as_secs_f64()) as u64;
        }
        rs.delivery_rate
    }

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
    fn seed_startup(&mut self, seed: u64, window: u64) {
        let slot = (self.round_count % BW_FILTER_ROUNDS as u64) as usize;
        self.bw_rounds[slot] = self.bw_rounds[slot].max(seed);
        self.max_bw = self.max_bw.max(seed);
        self.cwnd = self.cwnd.max(window + self.quanta());
    }

    fn on_train_rate(&mut self, rate: u64) {
        let Some(min_rtt) = self.min_rtt else {
            return;
        };
        if self.mode != Mode::Startup || self.full_bw_reached {
            return;
        }
        let seed = (rate as f64 / STARTUP_PACING_GAIN) as u64;
        if seed <= self.max_bw {
            return;
        }
        self.seed_startup(seed, (rate as f64 * min_rtt.as_secs_f64()) as u64);
        tracing::debug!(
            train_rate = rate,
            cwnd = self.cwnd,
            "bbr: Startup from the initial train"
        );
    }

    /// The jump's flight coming back (RFC 9959's Validating phase): while
    /// Startup goes on (no exit on its loss or queue), the rate its acks arrive
    /// at is a measurement of the path, where the round's delivery-rate samples
    /// read about half of it (see [`JumpFlight`]). Startup paces from it, up to
    /// the saved bandwidth, instead of at the jump's rate for another round.
    fn validate_jump(&mut self, now: Instant, rs: &RateSample) {
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

    fn update_min_rtt(&mut self, now: Instant, rs: &RateSample) {
        let sample = rs.rtt;
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

    /// Whether the data sent over the newest acked packet's round trip lost too much
    /// (BBRv3's IsInflightTooHigh, with the threshold depending on queue evidence).
    /// The rate is lost / (delivered + lost) over that same interval: BBRv3 divides by
    /// the data in flight at send, which overstates the rate while the flight grows
    /// (Startup sends 2.77 × that flight in its round trip).
    fn inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost < MIN_LOSS_PACKETS * self.mss {
            return false;
        }
        // A standing queue shows in every RTT of the round so far (its minimum); a
        // single late ack (a preempted receiver, an ack burst) is not one. In
        // Startup the queue overflows within a round (the rate doubles per round)
        // and its first samples saw none: there the latest RTT tells.
        let standing = if self.full_bw_reached {
            self.round_min_rtt.map_or(rs.rtt, |m| m.min(rs.rtt))
        } else {
            rs.rtt
        };
        // A Startup flight the receiver's credit held back is not the pipe's
        // size: its bursts (paced at 2.77× an estimate the credit keeps low) queue
        // for a moment without the pipe being full.
        let credit_burst = !self.full_bw_reached && rs.is_credit_limited;
        let mut thresh = if self.queue_visible(standing) && !credit_burst {
            LOSS_THRESH
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
    fn probe_overflowed(&self, rs: &RateSample) -> bool {
        if self.mode != Mode::ProbeBw(Phase::Up)
            || rs.lost < MIN_LOSS_PACKETS * self.mss
            || !self.overshoot.is_behind(rs)
        {
            return false;
        }
        let mss = self.mss as f64;
        let flight = (rs.delivered + rs.lost) as f64 / mss;
        let lost = rs.lost as f64 / mss;
        let p = self.loss_floor.max(self.probe_base_loss);
        let noise = PROBE_LOSS_SIGMAS * (flight * p * (1.0 - p)).sqrt();
        lost > flight * p + (flight * PROBE_LOSS_EXCESS).max(noise)
    }

    /// Whether `round_min` (a round's smallest RTT) shows any queue: Startup's
    /// margin over the minimum.
    /// The queue a round's smallest RTT showed: how far it is above the
    /// minimum (zero before either is known).
    fn queue_in(&self, round_min: Option<Duration>) -> Duration {
        round_min
            .zip(self.min_rtt)
            .map_or(Duration::ZERO, |(r, m)| r.saturating_sub(m))
    }

    fn standing_queue(&self, round_min: Option<Duration>) -> bool {
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
    /// round (at most a quarter).
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
    fn update_shared_queue(&mut self, now: Instant) {
        let delivering_its_pace =
            self.prev_bw_latest as f64 >= self.bw() as f64 * SHARED_DELIVERY_SHARE;
        let congested_lately = self
            .congested_at
            .is_some_and(|t| now.saturating_duration_since(t) < OWN_CONGESTION_MEMORY);
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
            let queue = self.queue_in(self.prev_round_min_rtt);
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
            self.queue_owner = QueueOwner::Unknown;
        } else if asked && self.queue_owner.verdict_round().is_none() {
            match self.queue_owner {
                QueueOwner::Own => self.queue_verdicts.own += 1,
                QueueOwner::Another => self.queue_verdicts.another += 1,
                QueueOwner::Unknown => self.queue_verdicts.none += 1,
                // A check under way has a verdict round: not here.
                QueueOwner::Checking { .. } => {}
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
    fn shares_the_bottleneck(&self, now: Instant) -> bool {
        self.another_flow.remembers(now)
    }

    /// BBRv3 probes after 2-3 s or after as many rounds as its window holds
    /// packets (at most 63), whichever comes first: a Reno flow of the
    /// same window regrows in that many rounds, and a flow whose estimate
    /// is low (an early Startup exit) still probes every few rounds.
    fn wait_for_shared_queue(&mut self) {
        let rtt = self
            .min_rtt
            .unwrap_or(Duration::from_millis(1))
            .as_secs_f64();
        let by_time = (SHARED_PROBE_WAIT.as_secs_f64() / rtt).ceil() as u64;
        let by_window = (self.bdp_multiple(1.0) / self.mss).min(MAX_SHARED_CRUISE_ROUNDS);
        let coexist = by_time.min(by_window)
            + (self.next_round_delivered / self.mss) % (SHARED_PROBE_WAIT_JITTER + 1);
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

    /// A probe overflowed the queue: the flight goes back to the pipe (the flight
    /// at which the queue overflowed is not known: the loss shows a round late,
    /// the flight still growing), the probe ends, and the next one approaches the
    /// pipe in small steps. The model and its lower bounds stay: the probe found
    /// the pipe's edge, not congestion.
    fn on_probe_overflow(&mut self, now: Instant) {
        // The pipe holds the bandwidth-delay product of what the link carries,
        // random losses included (the model's rate is the link's times 1 − loss).
        let pipe = (self.bdp_multiple(1.0) as f64 / (1.0 - self.loss_floor)) as u64;
        self.inflight_hi = Some(pipe.max(self.min_cwnd()) + self.quanta());
        tracing::debug!(
            inflight_hi = self.inflight_hi,
            loss_floor = self.loss_floor,
            "bbr: a probe overflowed the queue"
        );
        self.up_growth = UpGrowth::Gentle;
        self.probe_feedback = ProbeFeedback::Idle;
        self.enter(now, Mode::ProbeBw(Phase::Down));
    }

    /// The loss rate over Startup's rounds that showed no queue, once they
    /// carried [`MIN_STARTUP_LOSS_SAMPLE`] datagrams (before, unknown: small
    /// flights say little).
    fn startup_random_loss(&self) -> Option<f64> {
        (self.startup_total >= MIN_STARTUP_LOSS_SAMPLE * self.mss)
            .then(|| (self.startup_lost as f64 / self.startup_total as f64).min(MAX_LOSS_FLOOR))
    }

    fn queue_visible(&self, rtt: Duration) -> bool {
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

    fn on_inflight_too_high(&mut self, now: Instant, rs: &RateSample) {
        // The short-term bounds answer congestion met while cruising or probing
        // (BBRv3 lowers them outside Startup only). Startup's overshoot is answered
        // by its exit and `inflight_hi`; the rounds that repair it deliver little
        // (Drain sends at a third of the rate) and must not become the new model.
        let target = self.bdp_multiple(1.0).max(self.min_cwnd());
        let hi = ((rs.tx_in_flight as f64).max(target as f64 * BETA) as u64).max(self.min_cwnd());
        if self.mode == Mode::Startup {
            tracing::debug!(
                lost = rs.lost,
                delivered = rs.delivered,
                rtt_us = rs.rtt.as_micros() as u64,
                min_rtt_us = self.min_rtt.unwrap_or_default().as_micros() as u64,
                bw = self.max_bw,
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
    fn end_round_loss(&mut self) {
        let total = self.round_acked + self.round_lost;
        if !self.standing_queue(self.round_min_rtt) {
            let rate = if total == 0 {
                0.0
            } else {
                self.round_lost as f64 / total as f64
            };
            self.last_round_loss = rate;
            self.loss_rounds[(self.round_count % LOSS_FLOOR_ROUNDS as u64) as usize] = rate;
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

    /// At a round's end: start the next round's tally (the short-term bounds of
    /// BBRv3's BBRAdaptLowerBoundsFromCongestion are lowered at a round's first
    /// congestion signal, see `on_inflight_too_high`).
    fn end_round_bounds(&mut self) {
        self.congested_in_round = false;
        if let ProbeFeedback::Ending { last_round } = self.probe_feedback {
            if self.round_count > last_round {
                self.probe_feedback = ProbeFeedback::Idle;
            }
        }
        self.prev_bw_latest = self.bw_latest;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    fn check_full_bw(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start {
            return;
        }
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
        // 2 % of the link for 20 s). Later the signal stands as it is: waiting
        // for the estimate to stop growing too let Startup overshoot a shallow
        // buffer by another round (1 Gbit/s × 200 ms at 5 % loss: 80 % of the
        // link in steady state instead of 86 %).
        let early_growth = self
            .startup_unheld_round
            .is_none_or(|r| self.round_count < r + STARTUP_EARLY_ROUNDS)
            && self.max_bw as f64 >= self.full_bw as f64 * FULL_BW_THRESH;
        if !early_growth
            && self
                .prev_round_min_rtt
                .is_some_and(|r| self.queue_visible(r))
        {
            tracing::debug!(
                bw = self.max_bw,
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

    fn rounds_in_phase(&self) -> u64 {
        self.round_count - self.phase_start_round
    }

    fn update_state(&mut self, now: Instant, rs: &RateSample) {
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
                let grew = self.max_bw as f64 >= self.bw_at_probe as f64 * PROBE_FOUND_MORE
                    && self.bw_at_probe > 0;
                if self.round_start && (grew || self.rounds_in_phase() >= self.cruise_rounds) {
                    self.enter(now, Mode::ProbeBw(Phase::Refill));
                }
            }
            Mode::ProbeBw(Phase::Refill) => {
                if self.round_start {
                    self.enter(now, Mode::ProbeBw(Phase::Up));
                }
            }
            Mode::ProbeBw(Phase::Up) => {
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
                            UpGrowth::Gentle => (*hi + step).min(most),
                        };
                    }
                }
                let elapsed = self.phase_start.is_some_and(|t| {
                    now.saturating_duration_since(t) >= self.min_rtt.unwrap_or_default()
                });
                let queueing = self.min_rtt.is_some_and(|m| {
                    rs.rtt > self.probe_start_rtt.max(m) + m.mul_f64(PROBE_UP_QUEUE_FRACTION)
                });
                self.up_samples.add(
                    self.min_rtt.is_none_or(|m| {
                        rs.rtt > m + QUEUE_RTT_FLOOR.max(m.mul_f64(QUEUE_FREE_RTT))
                    }),
                );
                let max_rounds = match self.up_growth {
                    UpGrowth::Fast => MAX_UP_ROUNDS,
                    UpGrowth::Gentle => MAX_GENTLE_UP_ROUNDS,
                };
                let done = (elapsed && inflight >= self.bdp_multiple(PROBE_UP_PACING_GAIN))
                    || self.rounds_in_phase() >= max_rounds;
                let growing = self.bw_at_probe > 0
                    && self.max_bw as f64 >= self.bw_at_probe as f64 * UP_STILL_GROWING;
                // A round with no queue at all whose estimate still grew: the
                // estimate trails the rate, so the growth it shows is the
                // gain of the round before; the path takes more.
                let queue_free = self.up_samples.queue_free()
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
                // after). Not beside another flow's queue: a loss-based flow's
                // backoff can leave a flow with a small share half as much
                // again, and running on to its own loss took CUBIC's share of
                // a shallow queue (BBR 48-68 % of the link in three runs,
                // 41-47 % before).
                let far_below = self.up_base_bw > 0
                    && self.max_bw as f64 >= self.up_base_bw as f64 * ESCALATE_AFTER_GROWTH;
                if growing {
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
                        far_below,
                        bw = self.max_bw,
                        bw_at_probe = self.bw_at_probe,
                        up_base_bw = self.up_base_bw,
                        "bbr: a ProbeBW Up round ends"
                    );
                }
                let rising_alone = far_below && !self.shares_the_bottleneck(now);
                if queueing || (done && !growing && !queue_free && !rising_alone) {
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

    fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp_multiple(PROBE_RTT_CWND_GAIN).max(self.min_cwnd())
    }

    fn check_probe_rtt(&mut self, now: Instant, rs: &RateSample) {
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

    fn update_pacing_rate(&mut self, rtt: &RttEstimator) {
        let bw = self.bw();
        let rate = if bw == 0 {
            // No model yet: the initial window per RTT, times the Startup gain.
            let srtt = rtt.smoothed().as_secs_f64().max(1e-3);
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
            self.pacing_gain * check * bw as f64 / (1.0 - self.loss_floor)
        } else if matches!(self.mode, Mode::ProbeBw(_)) {
            self.pacing_gain * bw as f64 * (1.0 - PACING_MARGIN) / (1.0 - self.loss_floor)
        } else {
            self.pacing_gain * bw as f64 * (1.0 - PACING_MARGIN)
        };
        let mut rate = rate.max(1.0) as u64;
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

    fn update_cwnd(&mut self, rs: &RateSample) {
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
    /// ProbeBW. Behind that queue this flow's packets wait too, so a window of
    /// the propagation delay's BDP would hold its rate to a fraction of its
    /// estimate (2 BDPs against a 2-BDP queue: two thirds), and the estimate
    /// would follow it down; the rate stays the pacer's.
    fn cwnd_bdp(&self) -> u64 {
        let bdp = self.bdp_multiple(self.cwnd_gain);
        match (self.prev_round_min_rtt, self.min_rtt) {
            (Some(round), Some(min)) if self.shared_queue && !min.is_zero() => {
                (bdp as f64 * round.as_secs_f64() / min.as_secs_f64()) as u64
            }
            _ => bdp,
        }
    }

    /// Whether a round's RTT showed no standing queue within the last
    /// [`QUEUE_DRAINED_MEMORY_RTTS`] minimum RTTs.
    fn drained_lately(&self, now: Instant) -> bool {
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
    fn yield_to_standing_queue(&mut self, now: Instant) {
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

    /// At a round's end in Cruise or Down: a queue stood through the round (every
    /// RTT above the minimum by at least half the deepest queue seen lately:
    /// the queue was near full) and overflowed (the round lost at least
    /// [`SHARED_CUT_MIN_LOST_PACKETS`], more than random loss explains, but
    /// less than a flow's own overshoot does). That is a queue the flows
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
    /// ([`Self::shares_the_bottleneck`]): a flow alone on a lossy path, whose
    /// probe left a queue that the probe's losses overflowed, cut its bound to
    /// 0.7 and took eight seconds to regrow it (1 Gbit/s × 100 ms, 1 % loss:
    /// 81 % of the link from 5 s instead of 94 %). Not within
    /// [`OWN_CONGESTION_MEMORY`] of this flow's own congestion (the
    /// short-term bounds answer that), and at most every
    /// [`SHARED_CUT_EVERY_ROUNDS`].
    fn cut_for_shared_queue(&mut self, now: Instant) {
        if !matches!(self.mode, Mode::ProbeBw(Phase::Cruise | Phase::Down))
            || !self.shares_the_bottleneck(now)
            || !matches!(self.overshoot, Overshoot::Resolved { .. })
            || self.round_lost < SHARED_CUT_MIN_LOST_PACKETS * self.mss
            || !self.standing_queue(self.round_min_rtt)
            || self
                .shared_cut_round
                .is_some_and(|r| self.round_count < r + SHARED_CUT_EVERY_ROUNDS)
            || self
                .congested_at
                .is_some_and(|t| now.saturating_duration_since(t) < OWN_CONGESTION_MEMORY)
        {
            return;
        }
        let queued = self.queue_in(self.round_min_rtt);
        if queued.as_secs_f64() < self.deepest_queue().as_secs_f64() * SHARED_CUT_QUEUE_DEPTH {
            return;
        }
        let mss = self.mss as f64;
        let datagrams = (self.round_acked + self.round_lost) as f64 / mss;
        let lost = self.round_lost as f64 / mss;
        let p = self.loss_floor;
        let noise = SHARED_CUT_SIGMAS * (datagrams * p * (1.0 - p)).sqrt();
        if lost <= datagrams * p + noise || lost > datagrams * (p + SHARED_CUT_MAX_EXCESS) {
            return;
        }
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
        self.up_growth = UpGrowth::Gentle;
        self.shared_regrow_step = Some(GENTLE_FIRST_STEP_PACKETS * self.mss);
        self.shared_cut_round = Some(self.round_count);
    }

    /// The deepest queue (RTT over the minimum) seen in the last one or two
    /// [`QUEUE_DEPTH_SLOT`]s.
    fn deepest_queue(&self) -> Duration {
        self.queue_depth[0].max(self.queue_depth[1])
    }

    /// Records a sample's queueing delay in the deepest-queue slots.
    fn update_queue_depth(&mut self, now: Instant, rs: &RateSample) {
        let (Some(min), false) = (self.min_rtt, rs.rtt.is_zero()) else {
            return;
        };
        let start = *self.queue_depth_slot_start.get_or_insert(now);
        if now.saturating_duration_since(start) >= QUEUE_DEPTH_SLOT {
            self.queue_depth = [self.queue_depth[1], Duration::ZERO];
            self.queue_depth_slot_start = Some(now);
        }
        let q = rs.rtt.saturating_sub(min);
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
    /// estimate and does not push into a queue of its own).
    ///
    /// Stopping the growth while a queue stood (the steps starting over when
    /// it drained) left the next overflow to the next probe, seconds away, and
    /// the shares converged over two or three cuts in ten seconds (joining
    /// Jain over five seeds, mean 0.79-0.88 with caps of 4, 16 or none).
    /// Starting the regrowth with another flow's queue too, not only after a
    /// first cut, lets a flow that joined last grow before it has cut (mean
    /// 0.89 → 0.91 with a cap of 16: within the seeds' spread).
    fn regrow_after_shared_cut(&mut self) {
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

    /// The window after the bounds (draft: BBRBoundCwndForModel / ProbeRTT).
    fn bounded_cwnd(&self) -> u64 {
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
        self.latest_rtt = rs.rtt;
        self.update_round(rs);
        if self.round_start {
            self.trace_round_end();
            self.cut_for_shared_queue(now);
            self.end_round_loss();
            self.end_round_bounds();
            self.prev_round_min_rtt = self.round_min_rtt.take();
            if !self.standing_queue(self.prev_round_min_rtt) {
                self.queue_drained_at = Some(now);
            }
            self.update_shared_queue(now);
            self.yield_to_standing_queue(now);
            self.regrow_after_shared_cut();
            self.round_max_tx_in_flight = 0;
        }
        if self.mode == Mode::Startup && !rs.is_app_limited && self.startup_unheld_round.is_none() {
            self.startup_unheld_round = Some(self.round_count);
        }
        self.round_max_tx_in_flight = self.round_max_tx_in_flight.max(rs.tx_in_flight);
        if !rs.rtt.is_zero() {
            self.round_min_rtt = Some(self.round_min_rtt.map_or(rs.rtt, |m| m.min(rs.rtt)));
        }
        self.round_acked += rs.newly_acked;
        self.round_lost += rs.newly_lost;
        self.update_max_bw(rs);
        self.validate_jump(now, rs);
        self.update_ack_aggregation(now, rs);
        self.update_min_rtt(now, rs);
        self.update_queue_depth(now, rs);
        if let Some(rate) = rs.train_rate {
            self.on_train_rate(rate);
        }
        self.bw_latest = self.bw_latest.max(rs.delivery_rate);
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if self.inflight_too_high(rs) {
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

#[cfg(test)]
mod tests {
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
            prior_delivered: prior,
            total_delivered: total,
            newly_acked: rate / 10,
            newly_lost: 0,
            lost: 0,
            tx_in_flight: in_flight,
            bytes_in_flight: in_flight,
            train_rate: None,
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
    /// still doubles does not. Later the queue alone does.
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
        assert!(b.full_bw_reached, "a queue past the first rounds");
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
        let rtt = RttEstimator::new(Duration::from_millis(100));
        for _ in 0..n {
            *t += Duration::from_millis(rtt_ms);
            let prior = *d;
            *d += rate / 10;
            b.on_rate_sample(*t, &sample(rate, prior, *d, rtt_ms, rate / 10), &rtt);
        }
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

    /// Cruise rounds from its start until the next ProbeBW Up, with every
    /// round's RTT `rtt_ms` (the queue it shows) but those at or after the
    /// first a check paced below the estimate, which show `after_check_ms`;
    /// and whether a check was made.
    fn cruise_until_probe(rtt_ms: u64, after_check_ms: u64) -> (u64, bool) {
        let rate = 8_000_000;
        let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
        rounds_until_probe(&mut b, &mut t, &mut d, rate, rtt_ms, after_check_ms)
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
        let cruise = b.round_count;
        let mut checked = false;
        for _ in 0..100 {
            // The packets the check paces in this round are acknowledged in
            // the next, whose one sample this is.
            checked |= b.queue_owner.verdict_round().is_some();
            let ms = if checked { after_check_ms } else { rtt_ms };
            queued_rounds(b, t, d, rate, ms, 1);
            if b.mode == Mode::ProbeBw(Phase::Up) {
                return (b.round_count - cruise, checked);
            }
        }
        panic!("no probe in 100 rounds");
    }

    /// The first Cruise after a probe (the first after Startup probes at once).
    fn until_cruise_after_probe(rate: u64) -> (Bbr, Instant, u64) {
        let (mut b, mut t, mut d) = cruising(rate);
        until_up(&mut b, &mut t, &mut d, rate, 0.0);
        while b.mode != Mode::ProbeBw(Phase::Cruise) {
            rounds(&mut b, &mut t, &mut d, rate, 1);
        }
        (b, t, d)
    }

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
        let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
        let (alone, checked) = rounds_until_probe(&mut b, &mut t, &mut d, rate, 107, 100);
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
            let (mut b, mut t, mut d) = until_cruise_after_probe(rate);
            for _ in 0..verdicts {
                while b.mode != Mode::ProbeBw(Phase::Cruise) {
                    rounds(&mut b, &mut t, &mut d, rate, 1);
                }
                let (beside, _) = rounds_until_probe(&mut b, &mut t, &mut d, rate, 107, 107);
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
                    rounds(&mut b, &mut t, &mut d, rate, 1);
                }
                let since = t.duration_since(start);
                let (n, checked) = rounds_until_probe(&mut b, &mut t, &mut d, rate, 100, 100);
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
            q.add(i == 100);
        }
        assert!(q.queue_free(), "{q:?}");
        for _ in 0..5 {
            q.add(true);
        }
        assert!(!q.queue_free(), "{q:?}");
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
    /// another flow's queue, such a round does.
    #[test]
    fn a_probe_that_found_far_more_ends_on_its_queue_not_on_a_slow_round() {
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let (mut b, mut t, mut d) = cruising(8_000_000);
        until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
        up_gains(&mut b, &mut t, &mut d, 100, 6);
        let bw = b.max_bw;
        assert!(bw as f64 >= 8e6 * ESCALATE_AFTER_GROWTH, "{bw}");
        // Rounds with the probe's flight out, no growth, 5 ms of queue.
        let mut round = |b: &mut Bbr, rtt_ms: u64| {
            t += Duration::from_millis(rtt_ms);
            let prior = d;
            d += bw / 10;
            b.on_rate_sample(t, &sample(bw, prior, d, rtt_ms, bw / 10 * 13 / 10), &rtt);
        };
        for _ in 0..MAX_UP_ROUNDS + 1 {
            round(&mut b, 105);
            assert_eq!(b.mode, Mode::ProbeBw(Phase::Up));
        }
        // The probe's queue: an eighth of the minimum RTT over where it began.
        round(&mut b, 120);
        assert_eq!(b.mode, Mode::ProbeBw(Phase::Down));

        // Beside another flow's queue, such a round ends the probe.
        let (mut b, mut t, mut d) = cruising(8_000_000);
        until_up(&mut b, &mut t, &mut d, 8_000_000, 0.0);
        up_gains(&mut b, &mut t, &mut d, 100, 6);
        b.another_flow.verdict(t);
        let mut ended = false;
        for _ in 0..MAX_UP_ROUNDS + 1 {
            t += Duration::from_millis(105);
            let prior = d;
            d += bw / 10;
            b.on_rate_sample(t, &sample(bw, prior, d, 105, bw / 10 * 13 / 10), &rtt);
            ended |= b.mode != Mode::ProbeBw(Phase::Up);
        }
        assert!(ended, "{:?}", b.mode);
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
        assert_eq!(b.up_growth, UpGrowth::Gentle);
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

    /// A gentle Up whose rounds show no queue while its estimate grows (the
    /// bottleneck came back faster just after a probe overflowed it) is
    /// followed by another at once, and that one goes on doubling the step
    /// instead of starting over at one packet: the bound regains the path in
    /// rounds, not in steps of 255 packets per eight.
    #[test]
    fn a_gentle_up_that_keeps_finding_room_keeps_doubling_its_step() {
        let rate = 20_000_000;
        let mut b = Bbr::new(1000);
        let mut t = Instant::now();
        let mut d = 0;
        rounds(&mut b, &mut t, &mut d, rate, 12);
        until_up(&mut b, &mut t, &mut d, rate, 0.0);
        up_sample(&mut b, t, &mut d, rate, 0.03);
        assert_eq!(b.up_growth, UpGrowth::Gentle);
        until_up(&mut b, &mut t, &mut d, rate, 0.0);
        // The path now takes all the bound lets through, at the minimum RTT.
        let mut his = vec![b.inflight_hi.unwrap()];
        let mut modes = Vec::new();
        for _ in 0..10 {
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
        // ... and on through the next.
        assert_eq!(steps[8..], [256_000, 512_000], "{his:?}");
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

    /// A queue that stands through Cruise rounds and overflows (more loss than
    /// the path's random loss explains, but not a flow's own overshoot's) is
    /// the flows' together: `inflight_hi` is cut to [`BETA`] of the round's
    /// delivery. Random loss with a queue, and a round that loses 12 % (this
    /// flow's own overshoot), do not cut; nor does the overflow's loss without
    /// a standing queue.
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
        // 12 % lost with the queue: the flow's own overshoot.
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.12, 4);
        assert_eq!(b.inflight_hi, hi0, "cut for its own overshoot");
        assert!(b.shared_cut_round.is_none());
        // 3 % lost with the queue: the shared queue overflows.
        assert_eq!(b.mode, Mode::ProbeBw(Phase::Cruise));
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.03, 2);
        let hi = b.inflight_hi.expect("no cut to the shared queue");
        assert_eq!(hi, (800_000.0 * BETA) as u64);
        assert!(b.bw_lo.is_none(), "taken for this flow's congestion");
        assert_eq!(b.up_growth, UpGrowth::Gentle);
        // Not again in the next round.
        let cut_round = b.shared_cut_round;
        lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.03, 1);
        assert_eq!(b.shared_cut_round, cut_round, "cut in two rounds in a row");
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

    /// After a cut to a shared queue, Cruise regrows `inflight_hi` by 1, 2, 4
    /// … packets a round while it is what limits the flight: the same steps
    /// for every flow, whatever its share.
    #[test]
    fn after_a_shared_cut_cruise_regrows_inflight_hi_in_equal_steps() {
        let rate = 8_000_000;
        let (mut b, mut t, mut d) = cruising_with_random_loss(rate, 0.0);
        // A queue that stands through the check: another flow's.
        for _ in 0..5 {
            if !b.shares_the_bottleneck(t) {
                lossy_queued_rounds(&mut b, &mut t, &mut d, rate, 110, 0.0, 1);
            }
        }
        assert!(b.shares_the_bottleneck(t));
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
}
