//! What one connection may choose apart from its endpoint's [`TransportConfig`]:
//! the sender-side controller, so one endpoint can run flows of different
//! controllers side by side (e.g. BBR beside CUBIC through one bottleneck).

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, Startup, TransportConfig};
use crate::congestion::CongestionKind;
use crate::saved_path::SavedPath;

/// Per-connection overrides of the endpoint's [`TransportConfig`]. Unset fields
/// keep the endpoint's value. Only what does not size shared resources (packet
/// pools, buffers, datagram size) can differ between connections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ConnectOptions {
    /// The congestion controller of this connection.
    pub congestion: Option<CongestionKind>,
    /// How this connection finds the path's rate at its start.
    pub startup: Option<Startup>,
    /// A previous connection's path to the same peer to start from, if the
    /// handshake's or the first ack's RTT confirms it (Careful Resume, see
    /// [`SavedPath`]).
    pub resume: Option<SavedPath>,
}

impl ConnectOptions {
    /// Uses `congestion` for this connection.
    pub fn with_congestion(mut self, congestion: CongestionKind) -> Self {
        self.congestion = Some(congestion);
        self
    }

    /// Uses `startup` for this connection.
    pub fn with_startup(mut self, startup: Startup) -> Self {
        self.startup = Some(startup);
        self
    }

    /// Starts this connection from `saved`, a previous connection's path to the
    /// same peer, once an RTT confirms the path (the client side's; a server's
    /// connections start from cold).
    pub fn with_resume(mut self, saved: SavedPath) -> Self {
        self.resume = Some(saved);
        self
    }

    /// Whether any of the endpoint's configuration is overridden (a saved path
    /// is not configuration).
    pub(crate) fn overrides_config(&self) -> bool {
        self.congestion.is_some() || self.startup.is_some()
    }

    /// `base` with these overrides applied, checked as a whole.
    pub fn apply(&self, base: &TransportConfig) -> Result<TransportConfig, ConfigError> {
        let mut cfg = base.clone();
        if let Some(c) = self.congestion {
            cfg.congestion = c;
        }
        if let Some(s) = self.startup {
            cfg.startup = s;
        }
        cfg.validate()?;
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_fields_keep_the_endpoints_values() {
        let base = TransportConfig::default().with_congestion(CongestionKind::Cubic);
        assert_eq!(ConnectOptions::default().apply(&base), Ok(base.clone()));
        let bbr = ConnectOptions::default()
            .with_congestion(CongestionKind::Bbr)
            .apply(&base)
            .unwrap();
        assert_eq!(bbr.congestion, CongestionKind::Bbr);
        assert_eq!(bbr.startup, base.startup);
        assert_eq!(bbr.max_datagram, base.max_datagram);
    }

    #[test]
    fn one_endpoint_runs_connections_of_different_controllers() {
        use crate::pair::Pair;
        use crate::stats::ControllerState;
        use std::time::Duration;

        // The endpoint's default is BBR; one connection asks for CUBIC.
        let mut p = Pair::new(TransportConfig::default(), TransportConfig::default());
        let (now, to) = (p.now, p.server_addr);
        let bbr = p.client.connect(now, to);
        let cubic = p
            .client
            .connect_with(
                now,
                to,
                &ConnectOptions::default().with_congestion(CongestionKind::Cubic),
            )
            .unwrap();
        p.drive_for(Duration::from_millis(200));
        let state = |h| {
            p.client
                .connection(h)
                .map(|c| (c.is_established(), c.stats().cc_state))
        };
        assert_eq!(state(bbr), Some((true, ControllerState::Startup)));
        assert_eq!(state(cubic), Some((true, ControllerState::WindowBased)));
    }

    #[test]
    fn an_override_that_breaks_the_config_is_refused() {
        let slow = ConnectOptions::default().with_congestion(CongestionKind::Paced { rate_bps: 1 });
        assert_eq!(
            slow.apply(&TransportConfig::default()),
            Err(ConfigError::PacedRateTooLow(1))
        );
    }
}
