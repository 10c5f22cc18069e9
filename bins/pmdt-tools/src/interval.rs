//! Interval reports (`-i SECONDS`, iperf3's): every interval, per flow and summed,
//! the bytes moved, goodput, retransmissions, RTT and the congestion controller's
//! rate and window, plus the DPDK port's drop counters. Sampled from each
//! connection's statistics (refreshed by the I/O loop every 100 ms) and the
//! runtime's link counters; a flow is dropped once its last interval is reported,
//! so a long-running server holds only its live connections.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use pmdt::runtime::{RuntimeStats, StatsHandle};
use serde::Serialize;

use crate::session::{Mode, Opening};
use crate::units::{fmt_bytes, fmt_rate};

/// Which way a flow's data goes, seen from this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// This process sends the data.
    #[default]
    Send,
    /// This process receives it.
    Receive,
}

/// One flow in one interval (iperf3's `intervals[].streams[]`, µs for RTT).
#[derive(Debug, Clone, Serialize)]
pub struct StreamInterval {
    /// Flow number.
    pub flow: usize,
    /// Which way its data goes.
    pub direction: Direction,
    /// Interval start, s since the test started.
    pub start: f64,
    /// Interval end, s.
    pub end: f64,
    /// Its length, s.
    pub seconds: f64,
    /// Stream bytes acknowledged (sending) or received (receiving) in it.
    pub bytes: u64,
    /// bytes × 8 / seconds.
    pub bits_per_second: f64,
    /// Data packets retransmitted in it.
    pub retransmits: u64,
    /// Smoothed RTT at its end, µs.
    pub rtt: u64,
    /// RTT variance, µs.
    pub rttvar: u64,
    /// Congestion window, bytes.
    pub snd_cwnd: u64,
    /// The controller's pacing rate, bit/s (0: not pacing).
    pub pacing_rate: u64,
    /// The controller's state (BBR phases; `window_based` for the others).
    pub cc_state: pmdt::proto::ControllerState,
    /// The controller's bottleneck bandwidth estimate at its end, bit/s (0: a
    /// controller without a model, or no estimate yet).
    pub bandwidth_estimate: u64,
    /// The controller's round-trip propagation delay estimate, µs (0: none).
    pub min_rtt: u64,
    /// Rounds the controller cruises between bandwidth probes in its current
    /// or last probe cycle (BBR: 6-8 alone on a lossy path, up to 63 and 8
    /// of jitter on a clean one and while another flow's queue is
    /// remembered; 0: none).
    pub probe_wait_rounds: u64,
}

/// All flows in one interval (iperf3's `intervals[].sum`).
#[derive(Debug, Clone, Serialize, Default)]
pub struct IntervalSum {
    /// Interval start, s since the test started.
    pub start: f64,
    /// Interval end, s.
    pub end: f64,
    /// Its length, s.
    pub seconds: f64,
    /// Stream bytes, all flows.
    pub bytes: u64,
    /// bytes × 8 / seconds.
    pub bits_per_second: f64,
    /// Retransmitted data packets, all flows.
    pub retransmits: u64,
    /// Flows that were open during the interval.
    pub flows: usize,
}

/// The DPDK port's drop counters in one interval (0 on the kernel UDP backend).
#[derive(Debug, Clone, Copy, Serialize, Default, PartialEq, Eq)]
pub struct PortDrops {
    /// Frames the device dropped with its receive ring full.
    pub imissed: u64,
    /// Receive buffer allocation failures of the driver.
    pub rx_nombuf: u64,
    /// Datagrams the link could not send or had no buffer to receive into.
    pub link_drops: u64,
}

impl PortDrops {
    /// Cumulative counters of every I/O loop.
    pub fn of(rt: &RuntimeStats) -> Self {
        let mut d = PortDrops::default();
        for l in &rt.loops {
            d.imissed += l.link.port_imissed;
            d.rx_nombuf += l.link.port_rx_nombuf;
            d.link_drops += l.link.tx_dropped + l.link.rx_no_buffer;
        }
        d
    }

    fn since(self, before: PortDrops) -> Self {
        PortDrops {
            imissed: self.imissed.saturating_sub(before.imissed),
            rx_nombuf: self.rx_nombuf.saturating_sub(before.rx_nombuf),
            link_drops: self.link_drops.saturating_sub(before.link_drops),
        }
    }
}

/// One interval report.
#[derive(Debug, Clone, Serialize)]
pub struct Interval {
    /// Per flow.
    pub streams: Vec<StreamInterval>,
    /// Summed.
    pub sum: IntervalSum,
    /// Port drops in the interval.
    pub port: PortDrops,
}

/// Where a flow's payload starts in the stream its interval bytes count (the
/// request line the client sends first is control, not payload), and which way it
/// goes, told by the flow's thread once it wrote or read that line. Until then the
/// flow counts no bytes (a server learns both only when the request arrived: a
/// reverse request makes the server the sending side).
#[derive(Debug, Clone)]
pub struct PayloadStart(Arc<Shape>);

#[derive(Debug)]
struct Shape {
    offset: AtomicU64,
    /// A [`Direction`] learned from the request, or [`Shape::AS_TRACKED`].
    direction: AtomicU8,
}

impl Shape {
    const AS_TRACKED: u8 = 0;
    const SEND: u8 = 1;
    const RECEIVE: u8 = 2;
}

impl PayloadStart {
    const UNKNOWN: u64 = u64::MAX;

    /// Not known yet.
    pub fn unknown() -> Self {
        Self(Arc::new(Shape {
            offset: AtomicU64::new(Self::UNKNOWN),
            direction: AtomicU8::new(Shape::AS_TRACKED),
        }))
    }

    /// Known: the payload starts at stream offset `offset`.
    pub fn at(offset: u64) -> Self {
        let s = Self::unknown();
        s.set(offset);
        s
    }

    /// The payload starts at stream offset `offset`.
    pub fn set(&self, offset: u64) {
        self.0.offset.store(offset, Ordering::Release);
    }

    /// The flow's data goes `direction` (seen from this process), whatever it was
    /// tracked as. Call before [`PayloadStart::set`].
    pub fn set_direction(&self, direction: Direction) {
        let d = match direction {
            Direction::Send => Shape::SEND,
            Direction::Receive => Shape::RECEIVE,
        };
        self.0.direction.store(d, Ordering::Release);
    }

    /// A server-side connection opened with `opening` (None: no opening was
    /// read): a reverse request makes this side the sender (its intervals
    /// count what the client acknowledged, from the first byte); otherwise the
    /// payload starts after the request line, if any.
    pub fn set_from_opening(&self, opening: Option<&Opening>) {
        match opening {
            Some(Opening::Request { request, .. }) if request.mode == Mode::Reverse => {
                self.set_direction(Direction::Send);
                self.set(0);
            }
            Some(Opening::Request { line_len, .. }) => self.set(*line_len),
            _ => self.set(0),
        }
    }

    /// The direction learned, else `tracked`.
    fn direction_or(&self, tracked: Direction) -> Direction {
        match self.0.direction.load(Ordering::Acquire) {
            Shape::SEND => Direction::Send,
            Shape::RECEIVE => Direction::Receive,
            _ => tracked,
        }
    }

    /// Payload bytes among the first `total` of the stream.
    pub fn payload(&self, total: u64) -> u64 {
        match self.0.offset.load(Ordering::Acquire) {
            Self::UNKNOWN => 0,
            offset => total.saturating_sub(offset),
        }
    }
}

struct Tracked {
    flow: usize,
    direction: Direction,
    handle: StatsHandle,
    start: PayloadStart,
    bytes: u64,
    retransmits: u64,
    /// The connection as the last sample found it.
    seen: Seen,
}

/// A followed connection as a sample found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Still open: more intervals follow.
    Open,
    /// Ended: the sample's figures were its last, it is followed no longer.
    Ended,
}

/// Samples the flows every interval.
pub struct Meter {
    started: Instant,
    last: Instant,
    port: PortDrops,
    flows: Vec<Tracked>,
}

impl Meter {
    /// A meter whose times count from `started`; `rt` gives the port counters' base.
    pub fn new(started: Instant, rt: &RuntimeStats) -> Self {
        Self {
            started,
            last: started,
            port: PortDrops::of(rt),
            flows: Vec::new(),
        }
    }

    /// Follows a flow from now on; its payload starts where `start` says.
    pub fn track(
        &mut self,
        flow: usize,
        direction: Direction,
        handle: StatsHandle,
        start: PayloadStart,
    ) {
        self.flows.push(Tracked {
            flow,
            direction,
            handle,
            start,
            bytes: 0,
            retransmits: 0,
            seen: Seen::Open,
        });
    }

    /// Flows followed now (ended ones leave after their last interval).
    pub fn tracked(&self) -> usize {
        self.flows.len()
    }

    /// Whether some followed flow moved payload no interval reported yet (the
    /// last, partial interval is then reported however short: the intervals add
    /// up to the flows' bytes).
    pub fn unreported(&self) -> bool {
        self.flows
            .iter()
            .any(|f| f.start.payload(f.total()) > f.bytes)
    }

    /// The interval from the last sample to `now`.
    pub fn sample(&mut self, now: Instant, rt: &RuntimeStats) -> Interval {
        let start = self.last.duration_since(self.started).as_secs_f64();
        let end = now.duration_since(self.started).as_secs_f64();
        let seconds = (end - start).max(1e-9);
        let mut streams = Vec::with_capacity(self.flows.len());
        for f in &mut self.flows {
            f.direction = f.start.direction_or(f.direction);
            let s = f.handle.stats();
            f.seen = if f.handle.close_reason().is_some() {
                Seen::Ended
            } else {
                Seen::Open
            };
            let total = f.start.payload(f.total_of(&s));
            let bytes = total.saturating_sub(f.bytes);
            let retransmits = s.packets_retransmitted.saturating_sub(f.retransmits);
            f.bytes = f.bytes.max(total);
            f.retransmits = f.retransmits.max(s.packets_retransmitted);
            streams.push(StreamInterval {
                flow: f.flow,
                direction: f.direction,
                start,
                end,
                seconds,
                bytes,
                bits_per_second: bytes as f64 * 8.0 / seconds,
                retransmits,
                // No sample yet (a receiving flow sends few packets): no RTT.
                rtt: if s.rtt_min_us > 0 {
                    s.rtt_smoothed_us
                } else {
                    0
                },
                rttvar: if s.rtt_min_us > 0 { s.rtt_var_us } else { 0 },
                snd_cwnd: s.cwnd,
                pacing_rate: s.pacing_rate.saturating_mul(8),
                cc_state: s.cc_state,
                bandwidth_estimate: s.cc_bandwidth_bps,
                min_rtt: s.cc_min_rtt_us,
                probe_wait_rounds: s.cc_probe_wait_rounds,
            });
        }
        // Ended flows have given their last figures.
        self.flows.retain(|f| f.seen == Seen::Open);
        let bytes: u64 = streams.iter().map(|s| s.bytes).sum();
        let sum = IntervalSum {
            start,
            end,
            seconds,
            bytes,
            bits_per_second: bytes as f64 * 8.0 / seconds,
            retransmits: streams.iter().map(|s| s.retransmits).sum(),
            flows: streams.len(),
        };
        let port_now = PortDrops::of(rt);
        let port = port_now.since(self.port);
        self.port = port_now;
        self.last = now;
        Interval { streams, sum, port }
    }
}

impl Tracked {
    /// Stream bytes acknowledged (sending) or received (receiving), control
    /// lines included.
    fn total_of(&self, s: &pmdt::ConnectionStats) -> u64 {
        match self.direction {
            Direction::Send => s.stream_bytes_acked,
            Direction::Receive => s.stream_bytes_received,
        }
    }

    fn total(&self) -> u64 {
        self.total_of(&self.handle.stats())
    }
}

impl Interval {
    /// The header line of the human interval report.
    pub const HEADER: &'static str = "[ ID] Interval            Transfer        Bitrate  Retr      RTT        Cwnd            Rate  Port drops";

    /// Prints the interval for people (stderr): a line per flow when there are at
    /// most `per_flow_max` flows, a `[SUM]` line when more than one; the port's
    /// drop counters (imissed/rx_nombuf/link) end the last line.
    pub fn print_human(&self, prog: &str, per_flow_max: usize) {
        let span = |s: f64, e: f64| format!("{s:6.2}-{e:<6.2} sec");
        let mut lines = Vec::new();
        if self.streams.len() <= per_flow_max {
            for s in &self.streams {
                lines.push(format!(
                    "[{:>3}] {} {:>11} {:>15} {:>5} {:>6} us {:>11} {:>15}{}",
                    s.flow,
                    span(s.start, s.end),
                    fmt_bytes(s.bytes),
                    fmt_rate(s.bits_per_second),
                    s.retransmits,
                    s.rtt,
                    fmt_bytes(s.snd_cwnd),
                    if s.pacing_rate > 0 {
                        fmt_rate(s.pacing_rate as f64)
                    } else {
                        "-".into()
                    },
                    if s.direction == Direction::Receive {
                        " (receiving)"
                    } else {
                        ""
                    }
                ));
            }
        }
        if self.streams.len() != 1 {
            let s = &self.sum;
            lines.push(format!(
                "[SUM] {} {:>11} {:>15} {:>5} {:>9} {:>11} {:>15}",
                span(s.start, s.end),
                fmt_bytes(s.bytes),
                fmt_rate(s.bits_per_second),
                s.retransmits,
                "",
                format!("{} flows", s.flows),
                ""
            ));
        }
        let p = &self.port;
        if let Some(last) = lines.last_mut() {
            last.push_str(&format!("  {}/{}/{}", p.imissed, p.rx_nombuf, p.link_drops));
        }
        for l in lines {
            eprintln!("{prog}: {l}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PayloadStart;

    #[test]
    fn payload_counts_from_its_start_and_nothing_before_it_is_known() {
        let s = PayloadStart::unknown();
        assert_eq!(s.payload(500), 0, "request not read yet");
        s.set(120);
        assert_eq!(s.payload(100), 0);
        assert_eq!(s.payload(1120), 1000);
        assert_eq!(PayloadStart::at(0).payload(7), 7);
    }
}
