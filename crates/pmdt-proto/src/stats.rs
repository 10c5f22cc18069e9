//! Per-connection and per-endpoint statistics.

use serde::{Deserialize, Serialize};

/// Counters and gauges of one connection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ConnectionStats {
    /// Datagrams sent (all types).
    pub packets_sent: u64,
    /// Datagrams received and accepted.
    pub packets_received: u64,
    /// UDP payload bytes sent.
    pub bytes_sent: u64,
    /// UDP payload bytes received.
    pub bytes_received: u64,
    /// Stream bytes sent for the first time.
    pub stream_bytes_sent: u64,
    /// Stream bytes the peer acknowledged, in order from the start of the stream
    /// (what a progress display of a sender shows).
    pub stream_bytes_acked: u64,
    /// Stream bytes delivered in order to the receive buffer.
    pub stream_bytes_received: u64,
    /// Data packets that were retransmissions.
    pub packets_retransmitted: u64,
    /// Stream bytes retransmitted.
    pub bytes_retransmitted: u64,
    /// Packets declared lost.
    pub losses_detected: u64,
    /// Packets declared lost that were acknowledged after all.
    pub spurious_retransmits: u64,
    /// Probe timeouts fired.
    pub pto_count: u64,
    /// Data packets received whose bytes had all been received already.
    pub duplicate_packets: u64,
    /// Packets dropped unacknowledged: data beyond the credit or the stream end,
    /// or refused by the receive storage (beyond its fragments or its memory).
    pub out_of_window: u64,
    /// Acks rejected: acknowledging packets or bytes never sent.
    pub invalid_acks: u64,
    /// Smallest RTT seen, µs.
    pub rtt_min_us: u64,
    /// Smoothed RTT, µs.
    pub rtt_smoothed_us: u64,
    /// RTT variance, µs.
    pub rtt_var_us: u64,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Pacing rate in bytes/s (0 when not pacing).
    pub pacing_rate: u64,
    /// Bytes in flight now.
    pub bytes_in_flight: u64,
    /// Time with data waiting but blocked by the congestion or packet window, µs.
    pub blocked_window_us: u64,
    /// Time with data waiting for the pacer (the controller's rate), µs.
    pub blocked_pacing_us: u64,
    /// How late, in total, the sender came back for the pacer's deadlines, µs: time
    /// the connection could have sent but its I/O loop was busy elsewhere or
    /// off its core (a loaded or shared core shows here, not in the path).
    pub pacing_late_us: u64,
    /// Time with data waiting but blocked by the receiver's credit, µs.
    pub blocked_credit_us: u64,
    /// Time with nothing to send (application-limited) while established,
    /// from the first byte written until the stream's end went out, µs.
    pub blocked_app_us: u64,
    /// Every RTT sample, for percentiles.
    pub rtt_histogram: crate::rtt_histogram::RttHistogram,
    /// The congestion controller this connection runs.
    pub congestion: crate::congestion::CongestionKind,
    /// The congestion controller's state.
    pub cc_state: ControllerState,
    /// The controller's bottleneck bandwidth estimate, bits/s (0: none).
    pub cc_bandwidth_bps: u64,
    /// The controller's round-trip propagation delay estimate, µs (0: none).
    pub cc_min_rtt_us: u64,
    /// The controller's bandwidth-delay product estimate, bytes (0: none).
    pub cc_bdp: u64,
    /// Rounds the controller cruises at its estimate between bandwidth
    /// probes in its current (or last) probe cycle: BBR's 6-8 alone on a path
    /// that loses at random, up to 63 (about 2 s) and up to 8 of jitter on
    /// one that does not and while another flow's queue is remembered (0: not
    /// BBR, or no cycle yet).
    pub cc_probe_wait_rounds: u64,
    /// What the controller's checks of a queue standing while it cruised
    /// found (BBR): whose queue decides how long its probes wait.
    pub cc_queue_verdicts: QueueVerdicts,
    /// The packet window now in force (grows with the path, see
    /// `TransportConfig::max_window_bytes`).
    pub window_packets: u64,
    /// The receive credit (receive buffer) now offered to the peer, bytes.
    pub recv_window: u64,
    /// The send buffer's capacity now, bytes.
    pub send_window: u64,
    /// Distinct stream bytes received, in order or not (goodput without the
    /// head-of-line wait of in-order delivery).
    pub stream_bytes_arrived: u64,
    /// What the connection did with the saved path it was given
    /// (`ConnectOptions::with_resume`); None: none given, or not yet connected.
    pub resume: Option<crate::saved_path::ResumeOutcome>,
}

/// A congestion controller's state, as shown in statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControllerState {
    /// A window-based controller (fixed, paced, NewReno, CUBIC): no model.
    #[default]
    WindowBased,
    /// BBR Startup: doubling the rate per round to find the bandwidth.
    Startup,
    /// BBR Drain: emptying the queue Startup built.
    Drain,
    /// BBR ProbeBW, Down: draining what a probe queued.
    ProbeBwDown,
    /// BBR ProbeBW, Cruise: pacing at the estimate.
    ProbeBwCruise,
    /// BBR ProbeBW, Refill: one round at the estimate before probing.
    ProbeBwRefill,
    /// BBR ProbeBW, Up: pacing 25 % above the estimate to find more bandwidth.
    ProbeBwUp,
    /// BBR ProbeRTT: a small window to measure the propagation delay.
    ProbeRtt,
}

/// What a BBR flow's checks of a standing queue found: it paces a round below
/// its estimate and looks whether the queue drained.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct QueueVerdicts {
    /// The queue drained: this flow's own. Its probes keep their pace.
    pub own: u64,
    /// The queue stood through the check: another flow's (a loss-based one
    /// that fills the buffer, or a larger flow's). Its probes wait for it.
    pub another: u64,
    /// The path changed under the check (the queue grew, or the delivery
    /// fell): no verdict.
    pub none: u64,
    /// Checks run to drain a queue after this flow's own congestion (a
    /// bottleneck that slowed down leaves the queue its fall filled): no
    /// verdict taken.
    #[serde(default)]
    pub drained: u64,
}

/// Counters of an endpoint (datagrams not attributable to a healthy connection).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EndpointStats {
    /// Datagrams handed to the endpoint.
    pub datagrams_in: u64,
    /// Datagrams produced by the endpoint.
    pub datagrams_out: u64,
    /// Datagrams that failed to decode (truncated, bad magic/version/type, malformed).
    pub malformed: u64,
    /// Datagrams for an unknown connection id (or from the wrong address).
    pub unknown_connection: u64,
    /// Stateless retries sent.
    pub retries_sent: u64,
    /// Inits with an invalid or expired cookie.
    pub bad_cookies: u64,
    /// Inits refused (not accepting, or too many connections).
    pub refused: u64,
    /// Connections opened (accepted or connected).
    pub connections_opened: u64,
    /// Datagrams for a connection that closed gracefully and was released,
    /// answered with a Close (its peer missed the end; see `linger`).
    pub lingering_answered: u64,
}
