//! Window and buffer sizes that follow the path (autotuning): the receive credit
//! grows to cover [`RECV_WINDOW_PER_RTT`] RTTs of received data (Linux's
//! `tcp_rcv_space_adjust`, "dynamic right-sizing"), more when holes at the head
//! last longer than an RTT (a lost retransmission), and, while the sender's rate
//! doubles per round, those rounds at the next round's rate, two rounds on
//! where holes recur (withdrawn once it stops); the send buffer to the peer's
//! credit and a multiple of the congestion window, the packet window with the
//! congestion window, all up to [`TransportConfig::max_window_bytes`].
//!
//! Why the credit must exceed one BDP: a lost packet holds the head for about an RTT
//! (detection, retransmission) and the credit update needs another half RTT to
//! reach the sender, so the sender keeps sending for about 2 RTTs beyond the hole;
//! a lost retransmission adds an RTT per loss. A hole at the head that outlasts
//! what the credit covers (a rare one, which the credit is not sized for) is
//! given credit as it ages, so the sender never waits on it: withdrawn once it
//! fills.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::config::{TransportConfig, RECV_WINDOW_PER_RTT, SEND_BUFFER_WINDOW_FACTOR};

/// Packets the packet window allows per congestion-window's worth of full-size
/// packets (room for smaller packets: retransmissions, the stream's tail).
const PACKET_WINDOW_PER_CWND: u64 = 2;
/// Weight of a new sample in the receiver's smoothed RTT (RFC 6298's 1/8).
const RCV_RTT_GAIN: u32 = 8;
/// Longest RTT sample the receiver believes (a stale echo).
const MAX_RCV_RTT: Duration = Duration::from_secs(60);
/// Most RTTs of data the credit covers, however long holes last (a hole of 3 RTTs
/// needs a third loss in a row; at 5 % random loss a 1 Gbit/s × 100 ms flight has
/// one every RTT or so, and its hole lasts ~4 RTTs).
const MAX_RECV_WINDOW_PER_RTT: f64 = 5.0;
/// Most growth per RTT the credit anticipates: a sender in Startup doubles its
/// delivery rate per round. Anticipating only 1.5x, a lossy long path's Startup
/// waited on credit for most of its last rounds (1 Gbit/s x 200 ms x 5 % in the
/// simulator: 1.3 s of its last 2 s, Startup ending at 4.5 s instead of 3.7). More
/// than a doubling per round would leave the credit far above the BDP while the
/// rate settles. Where holes recur the growth counts twice, for the two rounds
/// the credit must then last (see [`RecvAutotune::on_data`]).
const MAX_GROWTH_PER_RTT: f64 = 2.0;
/// A measured interval counts as growth when its bytes exceed the most measured
/// before by this factor (BBR's full-bandwidth test uses the same 25 %).
const GROWTH_THRESHOLD: f64 = 1.25;
/// Holes recurring this long, in round trips, make a path lossy for the
/// credit's anticipation: it then counts the growth twice (see
/// [`RecvAutotune::on_data`]). A lost packet holds the head for about an RTT;
/// reordering, for a fraction of one.
const LOSSY_HOLE_RTTS: f64 = 0.5;
/// Intervals in a row without growth after which the sender's growth is over and
/// the credit anticipating it is withdrawn (BBR leaves Startup after three rounds
/// without 25 % growth).
const PLATEAU_INTERVALS: u32 = 3;
/// Holes tracked at once (beyond this the oldest are forgotten).
const MAX_TRACKED_HOLES: usize = 4096;
/// Smoothed-RTT peaks remembered while holes are open, all reserved up front:
/// an RTT that falls by up to 7.4x (64/63 to the 128th) while a hole is open is
/// followed step by step; beyond that a new, lower peak is not recorded (a hole
/// may then count a round or so more, which errs towards more credit) and the
/// deque never grows in the I/O loop. (Growing it past a smaller reserve, 64,
/// was the one allocation `steady_state_alloc` caught, in 1 of 40 runs at 1%
/// loss.)
const MAX_SRTT_PEAKS: usize = 128;
/// A smoothed RTT is recorded as a new peak only this fraction (1/64) below the
/// last one: a queue that doubles the RTT and drains takes about 45 peaks. A
/// hole that opens during the drain may then count its rounds against a lower
/// RTT than the largest since (by up to a step of the smoothing, an eighth after
/// a sharp fall): more rounds, which errs towards more credit.
const PEAK_STEP: u32 = 64;
/// Largest RTT, in minimum RTTs, a peak counts for: a single late sample (a
/// timestamp echo held up somewhere) lifts the smoothed RTT for a few samples
/// and must not halve the rounds of every hole open meanwhile.
const MAX_PEAK_MIN_RTTS: u32 = 2;
/// Round trips of data beyond a hole's age that the credit covers while the hole
/// at the head is open: a hole open for `a` round trips on the receiver is
/// repaired at the earliest as the next packet arrives, and the credit update
/// then takes half a round trip to reach the sender, which meanwhile sent for
/// `a` + 1 round trips past the hole (it opened half a round trip earlier at
/// the sender); a quarter more for a sender that probes above the rate
/// measured (BBR's ProbeBW Up, at 1.25 ×). Below two round trips of age the
/// credit the path is sized for ([`RECV_WINDOW_PER_RTT`]) covers it.
const HEAD_HOLE_MARGIN_RTTS: f64 = 1.25;
/// The credit for an aging hole grows in steps of this fraction of an RTT's
/// data, so it asks for an early acknowledgement a few times per RTT, not per
/// packet.
const HEAD_HOLE_STEPS_PER_RTT: f64 = 4.0;
/// Measurement intervals (about an RTT each) whose longest hole is remembered.
const HOLE_HISTORY: usize = 16;
/// The credit covers a hole as long as the one that happened this many times in
/// the remembered intervals. Once: a single rare hole (a retransmission lost twice
/// at 0.5 % loss, every ~100 RTTs) would size the credit for good (it never
/// shrinks) to 4 RTTs of data, where a one-RTT stall that rarely costs ~1 %.
/// Holes that recur (at 5 % loss several long ones per RTT) are covered.
const HOLE_OCCURRENCES: usize = 2;

/// The receiver's measurement: bytes received per RTT, the RTT from the timestamp
/// echo carried by every data packet.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecvAutotune {
    srtt: Option<Duration>,
    /// Smallest RTT sample: the credit is sized in BDPs of the empty path (a queue
    /// seen while the sender starts up must not inflate it for good).
    min_rtt: Option<Duration>,
    start: Option<Instant>,
    bytes: u64,
    /// Most bytes per RTT measured so far: growth is a new high, not a recovery
    /// (the sender's rate dips in BBR's Drain and ProbeRTT, then comes back).
    max_per_rtt: u64,
    /// The credit the path needs at the rates seen so far, covering its holes
    /// (never shrinks).
    steady: u64,
    /// The credit anticipating the sender's growth (the most asked while it
    /// grows; zero once it stopped).
    anticipated: u64,
    /// Intervals in a row without growth.
    plateau: u32,
    /// The credit last given for the aging hole at the head, above the rest
    /// (zero: none).
    head_hole: u64,
    /// Whether the connection shares its endpoint's path to the peer host with
    /// others (then an aging hole gets no credit of its own).
    beside_siblings: bool,
    /// Holes in the received stream: (end offset, when it opened, the smoothed RTT
    /// then), oldest first.
    holes: VecDeque<(u64, Instant, Duration)>,
    /// While holes are open, the smoothed RTT's peaks since the oldest opened:
    /// (when, smoothed RTT), each lower and later than the one before, so the
    /// first taken at or after a hole opened is the largest since.
    srtt_peaks: VecDeque<(Instant, Duration)>,
    /// Longest a hole took to fill in this interval, in round trips (of the largest
    /// smoothed RTT while it was open: a queue the sender built meanwhile, such as
    /// BBR's probe for bandwidth, stretches the rounds, not their number, and while
    /// that queue drains a sender waiting on credit costs the link nothing).
    longest_hole: f64,
    /// The longest hole of each of the last [`HOLE_HISTORY`] intervals (a ring).
    hole_history: [f64; HOLE_HISTORY],
    hole_next: usize,
}

impl RecvAutotune {
    /// With room for `holes` holes before the hole list allocates.
    pub(crate) fn with_capacity(holes: usize) -> Self {
        Self {
            holes: VecDeque::with_capacity(holes.min(MAX_TRACKED_HOLES)),
            srtt_peaks: VecDeque::with_capacity(MAX_SRTT_PEAKS),
            ..Self::default()
        }
    }

    /// An RTT sample at `now` from a data packet's timestamp echo (it also holds the
    /// time the peer held our packet's timestamp before sending: an overestimate at
    /// worst, which errs towards a larger window).
    pub(crate) fn on_rtt_sample(&mut self, now: Instant, rtt: Duration) {
        if rtt.is_zero() || rtt > MAX_RCV_RTT {
            return;
        }
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        let srtt = match self.srtt {
            None => rtt,
            Some(s) => (s * (RCV_RTT_GAIN - 1) + rtt) / RCV_RTT_GAIN,
        };
        self.srtt = Some(srtt);
        if self.holes.is_empty() {
            return;
        }
        while self.srtt_peaks.back().is_some_and(|p| p.1 <= srtt) {
            self.srtt_peaks.pop_back();
        }
        let lower = self
            .srtt_peaks
            .back()
            .is_none_or(|p| srtt < p.1 - p.1 / PEAK_STEP);
        if lower && self.srtt_peaks.len() < MAX_SRTT_PEAKS {
            self.srtt_peaks.push_back((now, srtt));
        }
    }

    /// The largest smoothed RTT since `opened`, when it was `then` (a peak counts
    /// for at most [`MAX_PEAK_MIN_RTTS`] minimum RTTs; samples taken at the very
    /// instant the hole opened count as since).
    fn largest_srtt_since(&self, opened: Instant, then: Duration) -> Duration {
        let cap = self
            .min_rtt
            .map_or(Duration::MAX, |m| m * MAX_PEAK_MIN_RTTS);
        let peak = self
            .srtt_peaks
            .iter()
            .find(|p| p.0 >= opened)
            .map_or(Duration::ZERO, |p| p.1.min(cap));
        then.max(peak).max(self.srtt.unwrap_or_default())
    }

    /// A data packet at stream `offset` arrives at `now`; before it, every byte
    /// below `contiguous_end` and none at or above `highest` had been received. (A
    /// hole's filling is noticed with the next packet: microseconds late.)
    pub(crate) fn on_packet(
        &mut self,
        now: Instant,
        offset: u64,
        contiguous_end: u64,
        highest: u64,
    ) {
        while self.holes.front().is_some_and(|h| h.0 <= contiguous_end) {
            let (_, opened, srtt_then) = self.holes.pop_front().expect("front");
            let srtt = self.largest_srtt_since(opened, srtt_then);
            if !srtt.is_zero() {
                let rounds =
                    now.saturating_duration_since(opened).as_secs_f64() / srtt.as_secs_f64();
                self.longest_hole = self.longest_hole.max(rounds);
            }
        }
        // Peaks before the oldest open hole serve no hole.
        match self.holes.front() {
            Some(&(_, oldest, _)) => {
                while self.srtt_peaks.front().is_some_and(|p| p.0 < oldest) {
                    self.srtt_peaks.pop_front();
                }
            }
            None => self.srtt_peaks.clear(),
        }
        if offset > highest {
            if self.holes.len() >= MAX_TRACKED_HOLES {
                self.holes.pop_front();
            }
            self.holes
                .push_back((offset, now, self.srtt.unwrap_or_default()));
        }
    }

    /// `new_bytes` of stream data arrived at `now`; returns the receive capacity the
    /// credit should have, if not `capacity`: more while the sender's rate grows,
    /// back down to what the path needs once it stopped growing (a sender that
    /// doubles its rate per round, as in BBR's Startup, is given credit for the
    /// next round's doubling, two where holes recur, which the last round
    /// before the bottleneck does not take), and more while the hole at the
    /// head ages beyond what that covers. Asked once per interval measured
    /// (about an RTT), and as the aging hole's credit steps up or ends.
    pub(crate) fn on_data(
        &mut self,
        now: Instant,
        new_bytes: u64,
        capacity: u64,
        cfg: &TransportConfig,
    ) -> Option<u64> {
        let srtt = self.srtt?;
        let start = *self.start.get_or_insert(now);
        self.bytes += new_bytes;
        let elapsed = now.saturating_duration_since(start);
        let measured = elapsed >= srtt;
        if measured {
            self.measure(now, elapsed);
        }
        let sized = self.steady.max(self.anticipated);
        let head_hole = self.head_hole_credit(now);
        let head_hole = if head_hole > sized { head_hole } else { 0 };
        // The aging hole's credit changed (grew a step, or the hole filled).
        let changed = head_hole != self.head_hole;
        self.head_hole = head_hole;
        if !measured && !changed {
            return None;
        }
        let target = sized.max(head_hole).min(cfg.max_window_bytes);
        (target != capacity).then_some(target)
    }

    /// Credit for the hole at the head while it is open: [`HEAD_HOLE_MARGIN_RTTS`]
    /// round trips (of the largest smoothed RTT since it opened) more than its
    /// age, in steps of [`HEAD_HOLE_STEPS_PER_RTT`], of the most data measured
    /// per RTT; at most [`MAX_RECV_WINDOW_PER_RTT`] of it. Zero without a hole.
    ///
    /// Only for a connection alone on its path: beside sibling flows (other
    /// connections of the endpoint to the same host) a flow repairing a hole
    /// waits on its credit, as before, and leaves the link to the others. Given
    /// to every flow, the simulator's four flows joining 2 s apart over 1
    /// Gbit/s × 40 ms shared less evenly (Jain over seeds 1-16: mean 0.962,
    /// three under 0.95, against 0.973 and one).
    fn head_hole_credit(&self, now: Instant) -> u64 {
        if self.beside_siblings {
            return 0;
        }
        let Some(&(_, opened, srtt_then)) = self.holes.front() else {
            return 0;
        };
        let srtt = self.largest_srtt_since(opened, srtt_then);
        if srtt.is_zero() {
            return 0;
        }
        let age = now.saturating_duration_since(opened).as_secs_f64() / srtt.as_secs_f64();
        let rtts = ((age + HEAD_HOLE_MARGIN_RTTS) * HEAD_HOLE_STEPS_PER_RTT).ceil()
            / HEAD_HOLE_STEPS_PER_RTT;
        (rtts.min(MAX_RECV_WINDOW_PER_RTT) * self.max_per_rtt as f64) as u64
    }

    /// The connection's endpoint holds `siblings` other connections to the
    /// same peer host.
    pub(crate) fn on_path_siblings(&mut self, siblings: usize) {
        self.beside_siblings = siblings > 0;
    }

    /// An interval of `elapsed` (at least an RTT) ends at `now`: the bytes it
    /// received set the credit the path needs and the growth anticipated.
    fn measure(&mut self, now: Instant, elapsed: Duration) {
        let min_rtt = self.min_rtt.or(self.srtt).unwrap_or(elapsed);
        let per_rtt = (self.bytes as u128 * min_rtt.as_nanos() / elapsed.as_nanos().max(1)) as u64;
        self.start = Some(now);
        self.bytes = 0;
        // A hole of h RTTs keeps the sender going for h + 1 RTTs past it.
        self.hole_history[self.hole_next] = std::mem::take(&mut self.longest_hole);
        self.hole_next = (self.hole_next + 1) % HOLE_HISTORY;
        let hole = self.recurring_hole();
        let rtts = (1.0 + hole).clamp(RECV_WINDOW_PER_RTT as f64, MAX_RECV_WINDOW_PER_RTT);
        self.steady = self.steady.max((rtts * per_rtt as f64) as u64);
        // A growing sender needs next RTT's bytes, not last RTT's.
        let growth = if self.max_per_rtt > 0 {
            per_rtt as f64 / self.max_per_rtt as f64
        } else {
            1.0
        };
        self.max_per_rtt = self.max_per_rtt.max(per_rtt);
        if growth >= GROWTH_THRESHOLD {
            self.plateau = 0;
        } else {
            self.plateau = self.plateau.saturating_add(1);
        }
        if self.plateau >= PLATEAU_INTERVALS {
            self.anticipated = 0;
        } else {
            // The rounds the holes hold the head for, all counted at the rate
            // two rounds on: the interval measured the last round's average, and
            // this credit must last until the next interval's reaches the sender
            // (an RTT, and half of one on the way), while the rate doubles per
            // round and a hole does not stop it. Counted at the next round's
            // rate only, the credit fell short in every last round of a lossy
            // Startup, and a sender held back by credit measures no growth, so
            // the credit stalled with it: at 1 Gbit/s x 200 ms x 1 % (simulator)
            // Startup left at 3.0 s with 585 Mbit/s measured, and the link's rate
            // took until 4.3 s; now it leaves at 2.9 s with 890 (the link's rate
            // at 3.0 s). The excess while the rate settles is a promise, not
            // memory (the storage grows with what is held), and is withdrawn with
            // the rest of the anticipation. Only where holes recur: without them
            // the next round's rate was enough, and more credit only let a
            // loss-based sender's slow start overshoot a deep queue further
            // (CUBIC beside BBR through a 5 MiB queue took 56-73 % of the link
            // instead of 51-55 %).
            let g = growth.clamp(1.0, MAX_GROWTH_PER_RTT);
            let ahead = if hole >= LOSSY_HOLE_RTTS { g * g } else { g };
            let rtts = rtts * ahead;
            self.anticipated = self.anticipated.max((rtts * per_rtt as f64) as u64);
        }
    }
}

impl RecvAutotune {
    /// The sender announced a path of `bdp` bytes (it resumes from a saved
    /// path): the credit it needs, [`RECV_WINDOW_PER_RTT`] BDPs up to the memory
    /// limit, is anticipated from the start, as a doubling sender's next round
    /// is, and withdrawn the same way once the rate stops growing (then the
    /// measured rounds size it). Returns that credit.
    pub(crate) fn expect_bdp(&mut self, bdp: u64, cfg: &TransportConfig) -> u64 {
        let want = bdp
            .saturating_mul(RECV_WINDOW_PER_RTT)
            .min(cfg.max_window_bytes);
        self.anticipated = self.anticipated.max(want);
        want
    }

    /// The longest hole that happened at least [`HOLE_OCCURRENCES`] times in the
    /// remembered intervals.
    fn recurring_hole(&self) -> f64 {
        let mut h = self.hole_history;
        h.sort_unstable_by(|a, b| b.total_cmp(a));
        h[HOLE_OCCURRENCES - 1]
    }
}

/// The send buffer capacity wanted for congestion window `cwnd` and the peer's
/// credit beyond the oldest unacknowledged byte (the most that can be unacknowledged
/// and a half window more to keep sending), if more than `capacity`.
pub(crate) fn send_buffer_target(
    cwnd: u64,
    credit: u64,
    capacity: u64,
    cfg: &TransportConfig,
) -> Option<u64> {
    let by_cwnd = (cwnd as f64 * SEND_BUFFER_WINDOW_FACTOR) as u64;
    let want = by_cwnd.max(credit + cwnd / 2).min(cfg.max_window_bytes);
    // Grow by at least a quarter, so the copy is amortized.
    (want > capacity).then(|| {
        want.max(capacity.saturating_add(capacity / 4))
            .min(cfg.max_window_bytes)
    })
}

/// Unsent bytes a connection takes at least, whatever its window: a few dozen
/// packets, so a small window still has its next writes ready.
pub(crate) const UNSENT_MIN: u64 = 64 * 1024;
/// Unsent bytes a connection takes beyond its window, in time at its pacing rate,
/// when [`TransportConfig::unsent_time`] leaves it to the default (a writer on
/// another thread needs slack beyond its window to stay off the critical path of
/// a fast path with a small RTT).
pub(crate) const UNSENT_RATE_TIME: Duration = Duration::from_millis(20);

/// How many bytes written but not yet sent a connection holds: about one
/// congestion window (Linux's `tcp_notsent_lowat` idea), at least
/// [`UNSENT_MIN`] and `time` at the pacing rate (bytes/s). Without such a bound
/// the application ran as far ahead as memory allowed: a sender that collapsed
/// to its loss-limited rate (NewReno at 1 % loss, 100 ms: ~1 Mbit/s) held
/// megabytes it had to deliver before its close could finish, and a 20 s
/// `pmdt-send -t 20` took minutes.
pub(crate) fn unsent_target(cwnd: u64, pacing_rate: Option<u64>, time: Duration) -> u64 {
    let by_rate = pacing_rate.map_or(0, |r| {
        (u128::from(r) * time.as_nanos() / 1_000_000_000).min(u128::from(u64::MAX)) as u64
    });
    cwnd.max(by_rate).max(UNSENT_MIN)
}

/// The packet window for congestion window `cwnd`: never below the configured one,
/// never above what `max_window_bytes` allows.
pub(crate) fn packet_window(cwnd: u64, current: u64, cfg: &TransportConfig) -> u64 {
    let want = PACKET_WINDOW_PER_CWND * cwnd / cfg.max_datagram.max(1) as u64;
    current.max(want.min(cfg.max_window_packets()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsent_bytes_follow_the_window_or_the_rate_with_a_floor() {
        const T: Duration = UNSENT_RATE_TIME;
        assert_eq!(unsent_target(10_000, None, T), UNSENT_MIN, "floor");
        assert_eq!(unsent_target(4 << 20, None, T), 4 << 20, "one window");
        // 1.25 GB/s (10 Gbit/s) for 20 ms: 25 MB, above a 1 MB window.
        assert_eq!(unsent_target(1 << 20, Some(1_250_000_000), T), 25_000_000);
        assert_eq!(unsent_target(u64::MAX, Some(u64::MAX), T), u64::MAX);
        // No slack in time: one window, at least the floor, whatever the rate.
        assert_eq!(
            unsent_target(1 << 20, Some(1_250_000_000), Duration::ZERO),
            1 << 20
        );
        assert_eq!(
            unsent_target(1, Some(1_250_000_000), Duration::ZERO),
            UNSENT_MIN
        );
    }

    #[test]
    fn credit_follows_twice_the_bytes_per_rtt() {
        let cfg = TransportConfig::default();
        let mut a = RecvAutotune::default();
        let t0 = Instant::now();
        assert_eq!(a.on_data(t0, 1000, 8 << 20, &cfg), None, "no RTT yet");
        a.on_rtt_sample(t0, Duration::from_millis(100));
        // 10 MB over one RTT: the credit must cover 20 MB.
        let ms = Duration::from_millis(1);
        let mut grown = None;
        for i in 0..=100u32 {
            grown = grown.or(a.on_data(t0 + ms * i, 100_000, 8 << 20, &cfg));
        }
        let g = grown.expect("grows");
        assert!((19_000_000..=21_000_000).contains(&g), "{g}");
        // Capped by the limit.
        let small = TransportConfig {
            max_window_bytes: 12 << 20,
            ..Default::default()
        };
        let mut a = RecvAutotune::default();
        a.on_rtt_sample(t0, Duration::from_millis(100));
        let mut grown = None;
        for i in 0..=100u32 {
            grown = grown.or(a.on_data(t0 + ms * i, 100_000, 8 << 20, &small));
        }
        assert_eq!(grown, Some(12 << 20));
    }

    /// Feeds `rtts` intervals of 1 MB per 100 ms RTT; in the intervals listed in
    /// `holes`, a hole opens and fills 300 ms (3 RTTs) later. Returns the largest
    /// credit asked for.
    fn credit_with_holes(rtts: u32, holes: &[u32]) -> u64 {
        let cfg = TransportConfig::default();
        let mut a = RecvAutotune::default();
        let t0 = Instant::now();
        a.on_rtt_sample(t0, Duration::from_millis(100));
        let ms = Duration::from_millis(1);
        let mut offset = 0;
        let mut credit = 0;
        for r in 0..rtts {
            for i in 0..100u32 {
                let now = t0 + ms * (r * 100 + i);
                if i == 0 && holes.contains(&r) {
                    // A packet 1000 bytes ahead of the contiguous end: a hole of
                    // 1000 bytes, filled 3 RTTs later.
                    a.on_packet(now, offset + 1000, offset, offset);
                    a.on_packet(now + ms * 300, offset + 2000, offset + 2000, offset + 2000);
                }
                offset += 10_000;
                if let Some(c) = a.on_data(now, 10_000, credit, &cfg) {
                    credit = c;
                }
            }
        }
        credit
    }

    /// Feeds one interval (100 ms, the RTT) of `per_rtt` bytes in 1 ms steps from
    /// `*t`; returns the last credit asked for, if any.
    fn interval(a: &mut RecvAutotune, t: &mut Instant, per_rtt: u64, credit: &mut u64) {
        let cfg = TransportConfig::default();
        for _ in 0..100 {
            *t += Duration::from_millis(1);
            if let Some(c) = a.on_data(*t, per_rtt / 100, *credit, &cfg) {
                *credit = c;
            }
        }
    }

    /// A sender doubling its rate per RTT (BBR's Startup) on a path without
    /// holes gets credit for its next doubling; once its rate stopped growing
    /// for three intervals, the credit comes back to two RTTs of data, and a
    /// dip and recovery (BBR's Drain) is not growth.
    #[test]
    fn credit_anticipating_growth_is_withdrawn_when_the_rate_settles() {
        let mb = 1_000_000;
        let mut a = RecvAutotune::default();
        a.on_rtt_sample(Instant::now(), Duration::from_millis(100));
        let mut t = Instant::now();
        let mut credit = 0;
        // The first interval starts here: each `interval` then ends one.
        assert_eq!(a.on_data(t, 0, credit, &TransportConfig::default()), None);
        for per_rtt in [mb, 2 * mb, 4 * mb, 8 * mb] {
            interval(&mut a, &mut t, per_rtt, &mut credit);
        }
        assert!(
            (30 * mb..=34 * mb).contains(&credit),
            "doubling: two RTTs at the next round's rate, {credit}"
        );
        interval(&mut a, &mut t, 8 * mb, &mut credit);
        interval(&mut a, &mut t, 4 * mb, &mut credit);
        assert!(credit >= 30 * mb, "not yet settled, {credit}");
        interval(&mut a, &mut t, 8 * mb, &mut credit);
        interval(&mut a, &mut t, 8 * mb, &mut credit);
        assert!(
            (15 * mb..=17 * mb).contains(&credit),
            "settled: two RTTs of 8 MB, {credit}"
        );
    }

    /// A sender doubling its rate per RTT on a lossy path (Startup at 5 % loss):
    /// each hole holds the head for rounds while the rate doubles, so the credit
    /// anticipates the doubling on top of the holes' rounds, not instead of
    /// them (before, a 1 Gbit/s × 200 ms × 5 % path in the simulator waited on
    /// credit for 460 ms of Startup's last second).
    #[test]
    fn credit_anticipating_growth_covers_the_holes_too() {
        let cfg = TransportConfig::default();
        let mut a = RecvAutotune::default();
        let t0 = Instant::now();
        a.on_rtt_sample(t0, Duration::from_millis(100));
        let ms = Duration::from_millis(1);
        let (mut offset, mut credit) = (0u64, 0u64);
        let first = 100_000u64;
        let rounds = 6u32;
        for r in 0..rounds {
            let per_ms = (first << r) / 100;
            for i in 0..100u32 {
                let now = t0 + ms * (r * 100 + i);
                if i == 0 {
                    // A hole every round trip, filled 2 RTTs later.
                    a.on_packet(now, offset + 1000, offset, offset);
                    a.on_packet(now + ms * 200, offset + 2000, offset + 2000, offset + 2000);
                }
                offset += per_ms;
                if let Some(c) = a.on_data(now, per_ms, credit, &cfg) {
                    credit = c;
                }
            }
        }
        // The last full interval measured 16 × `first` per RTT (the sixth ends
        // only with the next packet): holes of 2 RTTs keep the sender going for
        // 3, counted at the rate two doublings on (until the next interval's
        // credit arrives).
        let last = first << (rounds - 2);
        assert!(
            credit >= 12 * last - last / 5,
            "{credit} for {last} per RTT"
        );
        assert!(
            credit <= 12 * last + last / 5,
            "{credit} for {last} per RTT"
        );
    }

    /// Receiver state fed a millisecond at a time, 1 MB per 100 ms RTT.
    struct Feed {
        a: RecvAutotune,
        t0: Instant,
        offset: u64,
        credit: u64,
        asked: Vec<(u32, u64)>,
    }

    impl Feed {
        /// A receiver with `siblings` other flows to the same peer, its RTT 100 ms.
        fn new(siblings: usize) -> Self {
            let t0 = Instant::now();
            let mut a = RecvAutotune::default();
            a.on_path_siblings(siblings);
            a.on_rtt_sample(t0, Duration::from_millis(100));
            Self {
                a,
                t0,
                offset: 0,
                credit: 0,
                asked: Vec::new(),
            }
        }

        /// Data for milliseconds `from..to`, 10 kB each; the credit asked for.
        fn run(&mut self, from: u32, to: u32) {
            let cfg = TransportConfig::default();
            for i in from..to {
                self.offset += 10_000;
                let now = self.t0 + Duration::from_millis(i.into());
                if let Some(c) = self.a.on_data(now, 10_000, self.credit, &cfg) {
                    self.credit = c;
                    self.asked.push((i, c));
                }
            }
        }
    }

    /// A hole at the head that outlasts the credit (a rare one: a probe's
    /// overflow whose retransmission was lost too) is given credit as it ages,
    /// the age plus 1.25 RTTs of data in quarter-RTT steps, up to five RTTs;
    /// once it fills the credit comes back to what the path is sized for.
    #[test]
    fn an_aging_hole_at_the_head_gets_credit_until_it_fills() {
        let per_rtt = 1_000_000u64;
        let mut f = Feed::new(0);
        let t0 = f.t0;
        f.run(0, 1000);
        let sized = f.credit;
        assert!(
            (2 * per_rtt - per_rtt / 20..=2 * per_rtt + per_rtt / 20).contains(&sized),
            "two RTTs of data: {sized}"
        );
        // A hole opens at 1 s; data keeps arriving beyond it for 300 ms.
        let at = |ms: u32| t0 + Duration::from_millis(ms.into());
        f.a.on_packet(at(1000), f.offset + 1000, f.offset, f.offset);
        let hole_end = f.offset + 1000;
        f.asked.clear();
        f.run(1000, 1300);
        // Nothing more until the hole is 0.75 RTT old (1.25 + 0.75 = 2 RTTs),
        // then a step each quarter RTT: at 300 ms, 4.25 RTTs.
        let first = *f.asked.iter().find(|&&(_, c)| c > sized).expect("steps");
        assert!((1075..=1080).contains(&first.0), "{:?}", f.asked);
        let credit = f.credit;
        assert!(
            (4 * per_rtt + per_rtt / 5..=4 * per_rtt + per_rtt * 3 / 10).contains(&credit),
            "{credit}"
        );
        let steps = f.asked.iter().filter(|&&(i, _)| i >= first.0).count();
        assert!(
            (8..=11).contains(&steps),
            "a step per quarter RTT: {:?}",
            f.asked
        );
        // Still open at 600 ms: at most five RTTs.
        f.run(1300, 1600);
        let credit = f.credit;
        assert!(
            (5 * per_rtt - per_rtt / 20..=5 * per_rtt + per_rtt / 20).contains(&credit),
            "{credit}"
        );
        // The hole fills: back to what the path is sized for (a single hole
        // does not size it).
        f.a.on_packet(at(1600), f.offset, hole_end + 1000, f.offset);
        f.run(1600, 1601);
        assert_eq!(f.credit, sized);
    }

    /// Beside sibling flows an aging hole gets no credit of its own.
    #[test]
    fn an_aging_hole_beside_siblings_gets_no_credit_of_its_own() {
        let run = |siblings: usize| {
            let mut f = Feed::new(siblings);
            f.run(0, 1000);
            // A hole opens at 1 s and stays open for 500 ms.
            f.a.on_packet(
                f.t0 + Duration::from_secs(1),
                f.offset + 1000,
                f.offset,
                f.offset,
            );
            f.run(1000, 1500);
            f.credit
        };
        let alone = run(0);
        let beside = run(1);
        assert!(beside <= 2_100_000, "two RTTs of data: {beside}");
        assert!(alone >= 7 * beside / 4, "{alone} against {beside}");
    }

    /// A rare long hole (a retransmission lost twice) does not size the credit for
    /// good; a recurring one does.
    #[test]
    fn credit_covers_recurring_holes_only() {
        let per_rtt = 1_000_000;
        let none = credit_with_holes(40, &[]);
        let once = credit_with_holes(40, &[20]);
        let twice = credit_with_holes(40, &[20, 25]);
        assert!(none <= 3 * per_rtt + per_rtt / 10, "{none}");
        assert_eq!(once, none, "one hole");
        assert!(twice >= 4 * per_rtt - per_rtt / 10, "{twice}");
    }

    /// A hole counts in round trips of the longest smoothed RTT while it was open:
    /// a queue that came and went meanwhile (BBR probing for bandwidth) stretches
    /// its rounds, it does not add to them.
    #[test]
    fn a_hole_counts_rounds_of_the_longest_rtt_while_it_was_open() {
        let ms = Duration::from_millis(1);
        let rtt_for = |a: &mut RecvAutotune, from: Instant, to: u32, rtt: u64| {
            for i in 0..to {
                a.on_rtt_sample(from + ms * i, Duration::from_millis(rtt));
            }
        };
        let t0 = Instant::now();
        let mut a = RecvAutotune::default();
        a.on_rtt_sample(t0, Duration::from_millis(100));
        // A hole opens at t0; from 100 ms on the RTT is 150 ms (a queue), from
        // 200 ms 100 ms again; the hole fills at 300 ms.
        a.on_packet(t0, 2000, 0, 1000);
        rtt_for(&mut a, t0, 100, 100);
        rtt_for(&mut a, t0 + ms * 100, 100, 150);
        rtt_for(&mut a, t0 + ms * 200, 100, 100);
        a.on_packet(t0 + ms * 300, 3000, 3000, 3000);
        assert!(
            (1.95..=2.05).contains(&a.longest_hole),
            "{}",
            a.longest_hole
        );
        assert!(a.srtt_peaks.is_empty(), "no hole left: no peaks kept");
        // Without the queue, the same hole lasts three rounds.
        let mut b = RecvAutotune::default();
        b.on_rtt_sample(t0, Duration::from_millis(100));
        b.on_packet(t0, 2000, 0, 1000);
        rtt_for(&mut b, t0, 300, 100);
        b.on_packet(t0 + ms * 300, 3000, 3000, 3000);
        assert!(
            (2.95..=3.05).contains(&b.longest_hole),
            "{}",
            b.longest_hole
        );
    }

    /// Each hole counts against the largest RTT since it opened, not since the
    /// oldest hole still open: one that opens after a queue drained counts rounds
    /// of the RTT since; a late sample counts for at most two minimum RTTs.
    #[test]
    fn a_hole_opened_after_a_queue_drained_counts_rounds_of_the_rtt_since() {
        let ms = Duration::from_millis(1);
        let t0 = Instant::now();
        let mut a = RecvAutotune::default();
        a.on_rtt_sample(t0, Duration::from_millis(100));
        // Hole A (bytes below 2000) opens at 0; the RTT is 150 ms from 100 to
        // 200 ms; hole B (below 5000) opens at 250 ms, once the queue drained.
        a.on_packet(t0, 2000, 0, 1000);
        for i in 0..450u32 {
            let t = t0 + ms * i;
            let rtt = if (100..200).contains(&i) { 150 } else { 100 };
            a.on_rtt_sample(t, Duration::from_millis(rtt));
            if i == 250 {
                a.on_packet(t, 5000, 1000, 3000);
            }
        }
        // A fills at 400 ms, B at 450 ms (200 ms after it opened: two rounds).
        a.on_packet(t0 + ms * 400, 3000, 2000, 3000);
        a.longest_hole = 0.0;
        a.on_packet(t0 + ms * 450, 6000, 6000, 6000);
        assert!(
            (1.95..=2.05).contains(&a.longest_hole),
            "B: {}",
            a.longest_hole
        );
        // Ten samples of a second while a 300 ms hole is open (the smoothed RTT
        // climbs to 0.76 s): the peak counts as 200 ms, the hole 1.5 rounds (not
        // 0.4).
        let mut b = RecvAutotune::default();
        b.on_rtt_sample(t0, Duration::from_millis(100));
        b.on_packet(t0, 2000, 0, 1000);
        for i in 0..300u32 {
            let rtt = if (100..110).contains(&i) { 1000 } else { 100 };
            b.on_rtt_sample(t0 + ms * i, Duration::from_millis(rtt));
        }
        b.on_packet(t0 + ms * 300, 3000, 3000, 3000);
        assert!(
            (1.45..=1.55).contains(&b.longest_hole),
            "{}",
            b.longest_hole
        );
    }
}
