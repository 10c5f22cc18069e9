//! The end-of-run summary: printed for people, and as one JSON object with `--json`.

use pmdt::proto::RttHistogram;
use pmdt::runtime::RuntimeStats;
use pmdt::ConnectionStats;
use serde::Serialize;

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

/// One connection's figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FlowSummary {
    /// Flow number (1-based).
    pub flow: usize,
    /// Peer address.
    pub peer: String,
    /// Stream bytes transferred (acknowledged for the sender, received for the receiver).
    pub bytes: u64,
    /// Seconds from connect/accept to close.
    pub seconds: f64,
    /// bytes × 8 / seconds.
    pub goodput_bps: f64,
    /// Datagrams sent.
    pub packets_sent: u64,
    /// Data packets retransmitted.
    pub packets_retransmitted: u64,
    /// RTT.
    pub rtt_us: RttSummary,
    /// SHA-256 of the stream.
    pub sha256: String,
    /// Where the data went (receiver) or came from (sender).
    pub path: Option<String>,
    /// How the flow ended, if not well.
    pub error: Option<String>,
    /// With `-t`: seconds the close took to deliver what was written by then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain_seconds: Option<f64>,
}

impl FlowSummary {
    /// Fills the transport figures from the connection's stats.
    pub fn with_stats(mut self, s: &ConnectionStats) -> Self {
        self.packets_sent = s.packets_sent;
        self.packets_retransmitted = s.packets_retransmitted;
        self.rtt_us = RttSummary::from_hist(s.rtt_min_us, &s.rtt_histogram);
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

/// Collects the load reports of the first I/O loop during a run.
#[derive(Debug, Default)]
pub struct LoadSampler {
    last_tsc: u64,
    loads: Vec<f64>,
    m3: Vec<f64>,
    capacity: f64,
    risk: f64,
}

impl LoadSampler {
    /// Takes the latest report if it is new and covers traffic.
    pub fn sample(&mut self, rt: &RuntimeStats) {
        let Some(l) = rt.loops.first() else {
            return;
        };
        let r = &l.load;
        if r.tsc == self.last_tsc || r.packets_per_s <= 0.0 {
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

/// The whole run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// `pmdt-send` or `pmdt-recv`.
    pub tool: String,
    /// What the runtime drove.
    pub link: String,
    /// Total stream bytes.
    pub bytes: u64,
    /// Wall time, s.
    pub seconds: f64,
    /// Total goodput, bit/s.
    pub goodput_bps: f64,
    /// Datagrams sent (all flows).
    pub packets_sent: u64,
    /// Retransmitted data packets (all flows).
    pub packets_retransmitted: u64,
    /// RTT over all flows.
    pub rtt_us: RttSummary,
    /// SHA-256 of the stream (when there is exactly one flow).
    pub sha256: Option<String>,
    /// Per-flow figures.
    pub flows: Vec<FlowSummary>,
    /// Load of the I/O core.
    pub load: LoadSummary,
    /// Link counters.
    pub link_stats: pmdt::link::LinkStats,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
}

impl Summary {
    /// Totals from flows and runtime statistics.
    pub fn build(
        tool: &str,
        flows: Vec<FlowSummary>,
        stats: &[ConnectionStats],
        rt: &RuntimeStats,
        load: LoadSummary,
        seconds: f64,
        interrupted: bool,
    ) -> Self {
        let mut hist = RttHistogram::default();
        let mut min = u64::MAX;
        for s in stats {
            hist.merge(&s.rtt_histogram);
            if s.rtt_min_us > 0 {
                min = min.min(s.rtt_min_us);
            }
        }
        let bytes: u64 = flows.iter().map(|f| f.bytes).sum();
        let lp = rt.loops.first().cloned().unwrap_or_default();
        Summary {
            tool: tool.into(),
            link: lp.link_name.clone(),
            bytes,
            seconds,
            goodput_bps: if seconds > 0.0 {
                bytes as f64 * 8.0 / seconds
            } else {
                0.0
            },
            packets_sent: flows.iter().map(|f| f.packets_sent).sum(),
            packets_retransmitted: flows.iter().map(|f| f.packets_retransmitted).sum(),
            rtt_us: RttSummary::from_hist(if min == u64::MAX { 0 } else { min }, &hist),
            sha256: (flows.len() == 1).then(|| flows[0].sha256.clone()),
            load,
            link_stats: lp.link,
            flows,
            interrupted,
        }
    }

    /// The human-readable version.
    pub fn print_human(&self) {
        eprintln!(
            "{}: {} bytes in {:.3} s = {} over {} flow(s){}",
            self.tool,
            self.bytes,
            self.seconds,
            fmt_rate(self.goodput_bps),
            self.flows.len(),
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
        for f in &self.flows {
            eprintln!(
                "  flow {} {}: {} bytes, {}, sha256 {}{}{}",
                f.flow,
                f.peer,
                f.bytes,
                fmt_rate(f.goodput_bps),
                f.sha256,
                f.drain_seconds
                    .map(|d| format!(", drained in {d:.2} s after the time limit"))
                    .unwrap_or_default(),
                f.error
                    .as_ref()
                    .map(|e| format!(", error: {e}"))
                    .unwrap_or_default()
            );
        }
    }
}
