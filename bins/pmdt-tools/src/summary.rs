//! The end-of-run summary: printed for people, and the `end` section of the JSON
//! output.

use std::time::{Duration, Instant};

use pmdt::proto::{QueueVerdicts, RttHistogram};
use pmdt::runtime::{LoadPeriodEnd, LoadReport, RuntimeStats};
use pmdt::ConnectionStats;
use pmdt::Runtime;
use serde::Serialize;

use crate::flow_error::FlowError;
use crate::interval::Direction;
use crate::round_trip::RoundTripSummary;
use crate::units::fmt_rate;

/// Lower-case hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// RTT figures in µs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RttSummary {
    /// Smallest sample.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
}

impl RttSummary {
    /// From a connection's stats (or merged ones).
    pub fn from_hist(min: u64, h: &RttHistogram) -> Self {
        Self {
            min,
            p50: h.quantile(0.5),
            p99: h.quantile(0.99),
        }
    }
}

/// What the side that received a flow's data reported, checked against what was
/// sent.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReceiptCheck {
    /// Bytes the receiving side got.
    pub bytes: u64,
    /// Their SHA-256 as it computed it (empty: it did not hash).
    pub sha256: String,
    /// Whether the byte counts agree, and the SHA-256 sums where both sides hashed.
    pub matches: bool,
}

impl ReceiptCheck {
    /// Checks a receipt against what was sent.
    pub fn check(r: &crate::session::Receipt, sent_bytes: u64, sent_sha: &str) -> Self {
        let sha_ok = r.sha256.is_empty() || sent_sha.is_empty() || r.sha256 == sent_sha;
        Self {
            bytes: r.bytes,
            sha256: r.sha256.clone(),
            matches: r.bytes == sent_bytes && sha_ok,
        }
    }
}

/// One connection's figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FlowSummary {
    /// Flow number (1-based).
    pub flow: usize,
    /// Its telemetry id (`/pmdt/connection,<id>` while it runs).
    pub id: u64,
    /// Which way its data went, seen from this process.
    pub direction: Direction,
    /// Peer address.
    pub peer: String,
    /// Stream bytes transferred (acknowledged for the sender, received for the receiver).
    pub bytes: u64,
    /// Seconds from the flow's start (the sender: once every flow connected; the
    /// receiver: accept) to close.
    pub seconds: f64,
    /// The sender: when the flow began, in seconds after the run's start (every
    /// flow starts at once, as iperf3's -P: all near 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_s: Option<f64>,
    /// bytes × 8 / seconds.
    pub goodput_bps: f64,
    /// Datagrams sent.
    pub packets_sent: u64,
    /// Data packets retransmitted.
    pub packets_retransmitted: u64,
    /// Data packets the sender declared lost.
    pub losses_detected: u64,
    /// Of those, packets acknowledged after all (their retransmission was not
    /// needed: reordering, or acknowledgements held up).
    pub spurious_retransmits: u64,
    /// Data packets this side received whose bytes had all arrived before (a
    /// retransmission or probe the peer need not have sent).
    pub duplicate_packets: u64,
    /// Data packets this side refused: beyond its credit, or beyond what its
    /// storage holds (the peer sends them again).
    pub out_of_window: u64,
    /// Probe timeouts (the peer went silent for longer than the RTT allows).
    pub pto_count: u64,
    /// RTT.
    pub rtt_us: RttSummary,
    /// SHA-256 of the stream.
    pub sha256: String,
    /// Where the data went (receiver) or came from (sender).
    pub path: Option<String>,
    /// How the flow ended, if not well (its text in the JSON summary).
    pub error: Option<FlowError>,
    /// With `-t`: seconds the close took to deliver what was written by then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain_seconds: Option<f64>,
    /// Data this process sent: the receiving side's receipt (None: it sent none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<ReceiptCheck>,
    /// Generated data this process received (or, `--rr`, the echoes of what it
    /// sent): whether every byte was as expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// `--rr`: this flow's round trips.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round_trips: Option<RoundTripSummary>,
    /// Data this process sent: what held the sender back, and for how long.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<SendLimits>,
    /// Data this process sent: the congestion controller that paced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub congestion: Option<&'static str>,
    /// Data this process sent with BBR: what its checks of a queue standing
    /// while it cruised found (another flow's makes its probes wait).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_verdicts: Option<QueueVerdicts>,
    /// Data this process sent from a saved path (`--path-cache`): whether the
    /// handshake confirmed it and the first round's jump.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<pmdt::proto::ResumeOutcome>,
}

/// Seconds a sending connection spent held back, by cause: why its rate is what
/// it is (the path's window or rate, the receiver, the application, or the
/// sender's own core).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SendLimits {
    /// Data waiting, the congestion or packet window full.
    pub window: f64,
    /// Data waiting for the pacer (the controller's rate).
    pub pacing: f64,
    /// Data waiting for the receiver's credit.
    pub credit: f64,
    /// Nothing to send: the application was slower than the path.
    pub app: f64,
    /// The sender came back late for its pacing deadlines (its core was busy
    /// elsewhere or taken by another process): time lost on this host.
    pub late: f64,
}

impl SendLimits {
    fn from_stats(s: &ConnectionStats) -> Option<Self> {
        let sec = |us: u64| us as f64 / 1e6;
        let l = Self {
            window: sec(s.blocked_window_us),
            pacing: sec(s.blocked_pacing_us),
            credit: sec(s.blocked_credit_us),
            app: sec(s.blocked_app_us),
            late: sec(s.pacing_late_us),
        };
        (l != Self::default()).then_some(l)
    }

    /// `window 12%, pacing 80%, ...` of `seconds`, the largest first, the
    /// negligible (under 1%) left out.
    fn shares(&self, seconds: f64) -> String {
        let mut v = [
            ("window", self.window),
            ("pacing", self.pacing),
            ("credit", self.credit),
            ("application", self.app),
            ("late for pacing", self.late),
        ];
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v.iter()
            .filter(|(_, t)| seconds > 0.0 && *t / seconds >= 0.01)
            .map(|(k, t)| format!("{k} {:.0}%", 100.0 * t / seconds))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl FlowSummary {
    /// Fills the transport figures from the connection's stats.
    pub fn with_stats(mut self, s: &ConnectionStats) -> Self {
        self.packets_sent = s.packets_sent;
        self.packets_retransmitted = s.packets_retransmitted;
        self.losses_detected = s.losses_detected;
        self.spurious_retransmits = s.spurious_retransmits;
        self.duplicate_packets = s.duplicate_packets;
        self.out_of_window = s.out_of_window;
        self.pto_count = s.pto_count;
        self.rtt_us = RttSummary::from_hist(s.rtt_min_us, &s.rtt_histogram);
        if self.direction == Direction::Send {
            self.congestion = Some(s.congestion.name());
            let v = s.cc_queue_verdicts;
            self.queue_verdicts = (v != QueueVerdicts::default()).then_some(v);
            self.resume = s.resume;
            if self.round_trips.is_none() {
                self.limited_by = SendLimits::from_stats(s);
            }
        }
        self
    }
}

/// The I/O core's load over the transfer, from the load estimator's reports.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LoadSummary {
    /// Mean load (0..1, ours) over the reports taken while traffic flowed.
    pub mean: f64,
    /// Highest load seen.
    pub max: f64,
    /// Mean of thesis method 3 (busy-cycle share) over the same reports.
    pub method3_mean: f64,
    /// Last capacity estimate, work items (datagrams in + out) per second.
    pub capacity_pps: f64,
    /// Highest drop risk seen (0..1).
    pub drop_risk_max: f64,
    /// Reports averaged.
    pub samples: usize,
}

/// Longest [`LoadSampler::sample_final`] waits for connections in their
/// closing period (three probe timeouts: 1.2 s at a 400 ms RTT).
const CLOSING_WAIT: Duration = Duration::from_secs(2);

/// Collects the load reports of the first I/O loop during a run.
#[derive(Debug, Default)]
pub struct LoadSampler {
    /// The newest report taken (reports are taken in the order they were made).
    last_tsc: u64,
    loads: Vec<f64>,
    m3: Vec<f64>,
    capacity: f64,
    risk: f64,
}

impl LoadSampler {
    /// Takes the report that closed when the last transfer ended (still there
    /// after later reports replaced the latest) and the latest, each if it is new
    /// and covers traffic; not a report that closed when a transfer began (it
    /// covers the time before).
    pub fn sample(&mut self, rt: &RuntimeStats) {
        let Some(l) = rt.loops.first() else {
            return;
        };
        // The older first.
        if let Some(r) = &l.last_transfer_load {
            self.take(r);
        }
        if l.load_ended_by != LoadPeriodEnd::TransferStarted {
            self.take(&l.load);
        }
    }

    /// After the run's last flow ended: waits for its connections to end
    /// (a close returns before the connection's closing period, about a round
    /// trip, and the report that closes the transfer comes when the last one
    /// ends; at most 2 s, `CLOSING_WAIT`), then one statistics period, and takes
    /// the reports. Returns the runtime's figures as of then.
    pub fn sample_final(&mut self, rt: &Runtime) -> RuntimeStats {
        let until = Instant::now() + CLOSING_WAIT;
        while Instant::now() < until && rt.stats().loops.iter().any(|l| l.connections > 0) {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(120)); // one stats period
        let stats = rt.stats();
        self.sample(&stats);
        stats
    }

    fn take(&mut self, r: &LoadReport) {
        if r.tsc <= self.last_tsc || r.packets == 0 {
            return;
        }
        self.last_tsc = r.tsc;
        self.loads.push(r.load);
        self.m3.push(r.method3_busy_cycles);
        self.capacity = r.capacity_pps;
        self.risk = self.risk.max(r.drop_risk);
    }

    /// The summary.
    pub fn summary(&self) -> LoadSummary {
        let mean = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        LoadSummary {
            mean: mean(&self.loads),
            max: self.loads.iter().copied().fold(0.0, f64::max),
            method3_mean: mean(&self.m3),
            capacity_pps: self.capacity,
            drop_risk_max: self.risk,
            samples: self.loads.len(),
        }
    }
}

/// The flows of one direction, summed (iperf3's `end.sum_sent`/`sum_received`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct DirectionSum {
    /// Stream bytes.
    pub bytes: u64,
    /// Seconds: the run's (`end.seconds`).
    pub seconds: f64,
    /// bytes × 8 / seconds.
    pub bits_per_second: f64,
    /// Retransmitted data packets.
    pub retransmits: u64,
    /// Flows.
    pub flows: usize,
}

/// Running totals over every flow of a run, kept without keeping the flows (a
/// server runs for ever).
#[derive(Debug, Clone, Default)]
pub struct Totals {
    flows: usize,
    bytes: u64,
    packets_sent: u64,
    packets_retransmitted: u64,
    rtt: RttHistogram,
    rtt_min: Option<u64>,
    by_direction: [(u64, u64, usize); 2],
    last_sha256: String,
}

impl Totals {
    /// Adds a finished flow.
    pub fn add(&mut self, f: &FlowSummary, s: &ConnectionStats) {
        self.flows += 1;
        self.bytes += f.bytes;
        self.packets_sent += f.packets_sent;
        self.packets_retransmitted += f.packets_retransmitted;
        self.rtt.merge(&s.rtt_histogram);
        if s.rtt_min_us > 0 {
            self.rtt_min = Some(self.rtt_min.map_or(s.rtt_min_us, |m| m.min(s.rtt_min_us)));
        }
        let d = &mut self.by_direction[f.direction as usize];
        d.0 += f.bytes;
        d.1 += f.packets_retransmitted;
        d.2 += 1;
        self.last_sha256 = f.sha256.clone();
    }

    /// Flows added.
    pub fn flows(&self) -> usize {
        self.flows
    }

    /// Bytes of the flows added.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The whole run (the JSON output's `end`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// `pmdt-send` or `pmdt-recv`.
    pub tool: String,
    /// What the runtime drove.
    pub link: String,
    /// Total stream bytes (both directions with `--bidir`).
    pub bytes: u64,
    /// Seconds: the sender's wall time from the start (every flow connected, see
    /// `start.connect_seconds`) to the end; the receiver's time during which at
    /// least one connection was open.
    pub seconds: f64,
    /// Total goodput, bytes × 8 / seconds, bit/s.
    pub goodput_bps: f64,
    /// Datagrams sent (all flows).
    pub packets_sent: u64,
    /// Retransmitted data packets (all flows).
    pub packets_retransmitted: u64,
    /// RTT over all flows.
    pub rtt_us: RttSummary,
    /// SHA-256 of the stream (when there is exactly one flow).
    pub sha256: Option<String>,
    /// Connections (flows) over the run.
    pub connections: usize,
    /// Per-flow figures (a server started with `-N 0` keeps the last 256).
    pub flows: Vec<FlowSummary>,
    /// Earlier flows not in `flows` (server mode).
    pub flows_omitted: u64,
    /// Flows whose data this process sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum_sent: Option<DirectionSum>,
    /// Flows whose data this process received.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum_received: Option<DirectionSum>,
    /// Receiver: seconds from listening to the end (`seconds` counts only the time
    /// with a connection open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listening_seconds: Option<f64>,
    /// Load of the I/O core.
    pub load: LoadSummary,
    /// I/O loops (one per queue pair).
    pub io_loops: usize,
    /// Link counters (summed over the I/O loops).
    pub link_stats: pmdt::link::LinkStats,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    /// `--rr`: round trips over every flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round_trips: Option<RoundTripSummary>,
}

/// Link counters of every I/O loop, summed.
fn link_sum(rt: &RuntimeStats) -> (String, pmdt::link::LinkStats) {
    let lp = rt.loops.first().cloned().unwrap_or_default();
    let mut link = lp.link.clone();
    for l in rt.loops.iter().skip(1) {
        let o = &l.link;
        link.rx_datagrams += o.rx_datagrams;
        link.rx_bytes += o.rx_bytes;
        link.tx_datagrams += o.tx_datagrams;
        link.tx_bytes += o.tx_bytes;
        link.tx_dropped += o.tx_dropped;
        link.tx_no_buffer += o.tx_no_buffer;
        link.tx_queue_full += o.tx_queue_full;
        link.rx_no_buffer += o.rx_no_buffer;
        link.rx_not_for_us += o.rx_not_for_us;
        link.rx_malformed += o.rx_malformed;
        link.rx_bad_checksum += o.rx_bad_checksum;
        link.payload_copies += o.payload_copies;
        link.tx_headed += o.tx_headed;
        link.tx_payload_sums_reused += o.tx_payload_sums_reused;
    }
    (lp.link_name, link)
}

impl Summary {
    /// The summary of a run: `totals` over every flow, `flows` those kept.
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        tool: &str,
        totals: &Totals,
        flows: Vec<FlowSummary>,
        rt: &RuntimeStats,
        load: LoadSummary,
        seconds: f64,
        interrupted: bool,
    ) -> Self {
        let rate = |b: u64| {
            if seconds > 0.0 {
                b as f64 * 8.0 / seconds
            } else {
                0.0
            }
        };
        let dir = |d: Direction| {
            let (bytes, retransmits, n) = totals.by_direction[d as usize];
            (n > 0).then(|| DirectionSum {
                bytes,
                seconds,
                bits_per_second: rate(bytes),
                retransmits,
                flows: n,
            })
        };
        let (link_name, link_stats) = link_sum(rt);
        Summary {
            tool: tool.into(),
            link: link_name,
            bytes: totals.bytes,
            seconds,
            goodput_bps: rate(totals.bytes),
            packets_sent: totals.packets_sent,
            packets_retransmitted: totals.packets_retransmitted,
            rtt_us: RttSummary::from_hist(totals.rtt_min.unwrap_or(0), &totals.rtt),
            sha256: (totals.flows == 1).then(|| totals.last_sha256.clone()),
            connections: totals.flows,
            flows_omitted: (totals.flows - flows.len().min(totals.flows)) as u64,
            flows,
            sum_sent: dir(Direction::Send),
            sum_received: dir(Direction::Receive),
            listening_seconds: None,
            load,
            io_loops: rt.loops.len(),
            link_stats,
            interrupted,
            round_trips: None,
        }
    }

    /// The human-readable version.
    /// Per-flow lines follow when `per_flow` (a server already reported each).
    pub fn print_human(&self, per_flow: bool) {
        eprintln!(
            "{}: {} bytes in {:.3} s = {} over {} flow(s){}{}",
            self.tool,
            self.bytes,
            self.seconds,
            fmt_rate(self.goodput_bps),
            self.connections,
            match self.listening_seconds {
                Some(l) => format!(" (seconds with a connection open; listening {l:.1} s)"),
                None => String::new(),
            },
            if self.interrupted {
                " (interrupted)"
            } else {
                ""
            }
        );
        eprintln!(
            "  packets sent {}, retransmitted {}, rtt min/p50/p99 {}/{}/{} us, I/O core load {:.1}% (mean)",
            self.packets_sent,
            self.packets_retransmitted,
            self.rtt_us.min,
            self.rtt_us.p50,
            self.rtt_us.p99,
            self.load.mean * 100.0
        );
        if let Some(rt) = &self.round_trips {
            eprintln!("  {}", rt.line());
        }
        for f in self.flows.iter().filter(|_| per_flow) {
            eprintln!(
                "  flow {} {} {}{}: {} bytes, {}, sha256 {}{}{}{}{}{}{}",
                f.flow,
                match f.direction {
                    Direction::Send => "to",
                    Direction::Receive => "from",
                },
                f.peer,
                f.congestion.map(|c| format!(" ({c})")).unwrap_or_default(),
                f.bytes,
                fmt_rate(f.goodput_bps),
                if f.sha256.is_empty() { "-" } else { &f.sha256 },
                match &f.receipt {
                    Some(r) if r.matches => format!(
                        "; receiver confirmed {} bytes{}",
                        r.bytes,
                        if r.sha256.is_empty() || f.sha256.is_empty() {
                            ""
                        } else {
                            ", sha256 matches"
                        }
                    ),
                    Some(r) => format!(
                        "; RECEIVER DISAGREES: {} bytes, sha256 {}",
                        r.bytes, r.sha256
                    ),
                    None => String::new(),
                },
                match (f.verified, f.round_trips.is_some()) {
                    (Some(true), false) => "; every byte as generated",
                    (Some(false), false) => "; DATA DIFFERS from what was generated",
                    (Some(true), true) => "; every echo as sent",
                    (Some(false), true) => "; AN ECHO DIFFERS from what was sent",
                    (None, _) => "",
                },
                f.drain_seconds
                    .map(|d| format!(", drained in {d:.2} s after the time limit"))
                    .unwrap_or_default(),
                f.limited_by
                    .map(|l| l.shares(f.seconds))
                    .filter(|s| !s.is_empty())
                    .map(|s| format!("; held back by {s}"))
                    .unwrap_or_default(),
                f.queue_verdicts
                    .map(|v| format!(
                        "; queues checked: {} its own, {} another flow's (probes wait), {} no verdict, {} drained after its own congestion",
                        v.own, v.another, v.none, v.drained
                    ))
                    .unwrap_or_default(),
                f.error
                    .as_ref()
                    .map(|e| format!(", error: {e}"))
                    .unwrap_or_default()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sender's summary shows what its controller's queue checks found
    /// (why its probes waited); a sender without checks, and a receiver,
    /// show nothing.
    #[test]
    fn a_senders_queue_verdicts_are_in_its_summary() {
        let mut s = ConnectionStats::default();
        let sender = |s: &ConnectionStats| {
            FlowSummary {
                direction: Direction::Send,
                ..Default::default()
            }
            .with_stats(s)
        };
        assert_eq!(sender(&s).queue_verdicts, None);
        s.cc_queue_verdicts.own = 3;
        s.cc_queue_verdicts.another = 2;
        s.cc_queue_verdicts.drained = 4;
        let json = serde_json::to_value(sender(&s)).unwrap();
        assert_eq!(
            json["queue_verdicts"],
            serde_json::json!({"own": 3, "another": 2, "none": 0, "drained": 4})
        );
        // A summary written before drains were counted still reads.
        let old: QueueVerdicts =
            serde_json::from_value(serde_json::json!({"own": 1, "another": 0, "none": 0})).unwrap();
        assert_eq!(old.drained, 0);
        let receiver = FlowSummary {
            direction: Direction::Receive,
            ..Default::default()
        }
        .with_stats(&s);
        assert_eq!(receiver.queue_verdicts, None);
    }
}
