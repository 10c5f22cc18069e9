//! Congestion and rate control behind one trait, selected by [`CongestionKind`].
//!
//! The effective sending window of a connection is the minimum of the configured
//! packet window, the receiver's credit and the controller's window; pacing spreads
//! packets at the controller's rate (always available, see `crate::pacer`).

mod another_flow;
pub(crate) mod autotune;
mod bbr;
mod cubic;
pub(crate) mod delivery_rate;
mod fixed;
mod forward_delay;
mod hystart;
mod initial_train;
mod jump_flight;
mod new_reno;
mod paced;
mod queue_owner;
mod standing_rtt;

pub(crate) use bbr::Bbr;
pub(crate) use cubic::Cubic;
pub(crate) use delivery_rate::{DeliveryRateSampler, RateSample};
pub(crate) use fixed::Fixed;
pub(crate) use new_reno::NewReno;
pub(crate) use paced::Paced;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::connection::ShareOnPath;
use crate::rtt::RttEstimator;
use crate::saved_path::Jump;
use crate::stats::{ControllerState, QueueVerdicts};

/// What a controller believes about the path, for statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ModelSnapshot {
    /// The controller's state.
    pub(crate) state: ControllerState,
    /// Estimated bottleneck bandwidth, bytes/s (0: no estimate).
    pub(crate) bandwidth: u64,
    /// Estimated round-trip propagation delay.
    pub(crate) min_rtt: Option<Duration>,
    /// Estimated bandwidth-delay product, bytes (0: no estimate).
    pub(crate) bdp: u64,
    /// Rounds between probes in the current or last probe cycle (0: none).
    pub(crate) probe_wait_rounds: u64,
    /// What the checks of standing queues found.
    pub(crate) queue_verdicts: QueueVerdicts,
}

/// A congestion/rate controller (model: quinn-proto's `Controller`).
pub(crate) trait Controller: Send + std::fmt::Debug {
    /// `bytes` were sent at `now`.
    fn on_sent(&mut self, now: Instant, bytes: u64) {
        let _ = (now, bytes);
    }
    /// `bytes` sent at `sent` were newly acknowledged. `app_limited` when the sender
    /// was not using its window.
    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    );
    /// A loss was detected among packets sent at or before `largest_lost_sent`.
    /// `persistent` when every packet for a long period was lost.
    fn on_congestion_event(
        &mut self,
        now: Instant,
        largest_lost_sent: Instant,
        persistent: bool,
        lost_bytes: u64,
    );
    /// A delivery-rate sample, once per ack that acknowledged new data, after the
    /// per-packet [`Controller::on_ack`] calls and loss detection. Model-based
    /// controllers ([`Bbr`]) run on these; the others ignore them.
    fn on_rate_sample(&mut self, now: Instant, sample: &RateSample, rtt: &RttEstimator) {
        let _ = (now, sample, rtt);
    }
    /// The bottleneck's rate, bytes/s, read from the initial window's train
    /// (`Startup::FromInitialTrain`), as soon as the train is measured:
    /// before the ack's rate sample, or with no sample when a timer declared
    /// a datagram near its end lost. Only a model-based controller uses it (BBR's
    /// Startup).
    fn on_initial_train(&mut self, rate: u64, rtt: &RttEstimator) {
        let _ = (rate, rtt);
    }
    /// Starts from a saved path's jump (`crate::saved_path`) before any data
    /// was delivered. Returns whether the controller took it: only a
    /// model-based one can (BBR); the others keep their initial window.
    fn resume(&mut self, jump: Jump) -> bool {
        let _ = jump;
        false
    }
    /// The endpoint holds `siblings` other connections to the same peer host:
    /// flows from this sender that share the path, and that stop with it
    /// when it loses its core.
    fn on_path_siblings(&mut self, siblings: usize) {
        let _ = siblings;
    }
    /// How this flow's delivery compared with its siblings' at the
    /// endpoint's last check (told only to a model-based flow beside a
    /// loss-based one; [`ShareOnPath::Even`] otherwise).
    fn on_share_on_path(&mut self, share: ShareOnPath) {
        let _ = share;
    }
    /// The congestion window in bytes.
    fn window(&self) -> u64;
    /// The pacing rate in bytes per second, or `None` to pace at window / srtt.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// The controller's model of the path (for statistics). Window-based controllers
    /// report [`ControllerState::WindowBased`] and no estimates.
    fn model(&self) -> ModelSnapshot {
        ModelSnapshot {
            state: ControllerState::WindowBased,
            ..Default::default()
        }
    }
}

/// Which controller a connection uses.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
#[non_exhaustive]
pub enum CongestionKind {
    /// A static window, no reaction to loss (the sliding-window lab setting).
    Fixed {
        /// Window in packets.
        window_packets: u64,
    },
    /// A target rate with token-bucket pacing; loss does not reduce the rate (the
    /// RMDT setting for dedicated links with random loss).
    Paced {
        /// Target rate in bits per second.
        rate_bps: u64,
    },
    /// AIMD, TCP-friendly (RFC 6582 / RFC 9002 §7).
    NewReno,
    /// CUBIC (RFC 9438): faster window recovery on high-BDP paths; its first
    /// slow start ends on a rise in the round trip (HyStart++, RFC 9406).
    Cubic,
    /// Model-based (BBR, draft-cardwell-ccwg-bbr): paces at the measured bottleneck
    /// bandwidth, bounds the data in flight to a multiple of the measured BDP, and
    /// does not treat random loss as congestion. The default.
    #[default]
    Bbr,
}

impl CongestionKind {
    /// Whether the controller is loss-based: it takes loss for congestion
    /// and backs off at a full queue's overflow (NewReno, CUBIC).
    pub(crate) fn is_loss_based(&self) -> bool {
        matches!(self, Self::NewReno | Self::Cubic)
    }

    /// The controller's name, as the tools spell it (`bbr`, `cubic`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Fixed { .. } => "fixed",
            Self::Paced { .. } => "paced",
            Self::NewReno => "newreno",
            Self::Cubic => "cubic",
            Self::Bbr => "bbr",
        }
    }

    /// Builds the controller for a connection with datagrams of `mss` payload bytes.
    pub(crate) fn build(&self, mss: u64) -> Box<dyn Controller> {
        match *self {
            Self::Fixed { window_packets } => Box::new(Fixed::new(window_packets * mss)),
            Self::Paced { rate_bps } => Box::new(Paced::new(rate_bps / 8)),
            Self::NewReno => Box::new(NewReno::new(mss)),
            Self::Cubic => Box::new(Cubic::new(mss)),
            Self::Bbr => Box::new(Bbr::new(mss)),
        }
    }
}

/// Window in bytes a rate needs over one RTT, with headroom (for `Paced`).
pub(crate) fn bdp(rate_bytes_per_s: u64, rtt: Duration) -> u64 {
    (rate_bytes_per_s as u128 * rtt.as_nanos() / 1_000_000_000) as u64
}
