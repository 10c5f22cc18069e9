//! Protocol options shared by the sender and receiver.

use std::time::Duration;

use clap::{Args, ValueEnum};
use pmdt::{CongestionKind, Startup, TransportConfig};
use serde::{Deserialize, Serialize};

use crate::cli_error::CliError;
use crate::units::{BitRate, ByteSize};

/// Congestion control choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Cc {
    /// A static window of `--window` packets.
    Fixed,
    /// Paced at `--rate`, loss does not slow it (dedicated links).
    Paced,
    /// TCP-friendly AIMD.
    Newreno,
    /// CUBIC (RFC 9438).
    Cubic,
    /// Model-based (BBR): paces at the measured bottleneck bandwidth, random loss
    /// does not slow it.
    #[default]
    Bbr,
}

/// Protocol options.
#[derive(Debug, Clone, Args, Serialize, Deserialize, Default)]
#[serde(default)]
#[command(next_help_heading = "Transport")]
pub struct TransportArgs {
    /// Sending window in packets.
    #[arg(long, default_value_t = 2048)]
    pub window: u64,
    /// Congestion control.
    #[arg(long, value_enum, default_value_t = Cc::Bbr)]
    pub cc: Cc,
    /// Target rate for --cc paced, bits/s with decimal k/m/g (e.g. 5gbit, 800m,
    /// 1g = 10^9 bit/s).
    #[arg(long)]
    pub rate: Option<BitRate>,
    /// Largest UDP payload (pmdt header + data), bytes; at most MTU - 28 (the
    /// default).
    #[arg(long)]
    pub payload: Option<u16>,
    /// Send and receive buffer per connection, bytes with 1024-based K/M/G (initial
    /// size: both grow with the path's bandwidth-delay product up to --max-buffer).
    #[arg(long, default_value_t = ByteSize(8 << 20))]
    pub buffer: ByteSize,
    /// Largest send buffer, receive buffer (credit) and window per connection,
    /// bytes with 1024-based K/M/G (default 512M: 4 × the BDP of 10 Gbit/s × 100 ms).
    #[arg(long)]
    pub max_buffer: Option<ByteSize>,
    /// Give up on a silent peer after this many seconds.
    #[arg(long, default_value_t = 10.0)]
    pub idle_timeout: f64,
    /// Start at the rate the initial window's burst measures on the way
    /// (packet-train dispersion) instead of doubling from 10 datagrams each round
    /// trip (--cc bbr): about 4 round trips instead of 13 to fill 1 Gbit/s ×
    /// 200 ms. For paths the transfer mostly has to itself: flows that start
    /// together share less evenly at first.
    #[arg(long)]
    pub fast_start: bool,
}

impl TransportArgs {
    /// The protocol configuration for a link with this MTU.
    pub fn config(&self, mtu: u16) -> Result<TransportConfig, CliError> {
        let max = mtu.saturating_sub(28);
        let payload = self.payload.unwrap_or(max);
        if payload > max {
            return Err(CliError::new(format!(
                "--payload {payload} does not fit the MTU {mtu} (at most {max})"
            ))
            .hint("raise --mtu (e.g. 9000 for jumbo frames) or lower --payload"));
        }
        let congestion = match self.cc {
            Cc::Fixed => CongestionKind::Fixed {
                window_packets: self.window,
            },
            Cc::Paced => {
                let r = self.rate.ok_or_else(|| {
                    CliError::new("--cc paced needs --rate").hint("e.g. --cc paced --rate 5gbit")
                })?;
                CongestionKind::Paced { rate_bps: r.0 }
            }
            Cc::Newreno => CongestionKind::NewReno,
            Cc::Cubic => CongestionKind::Cubic,
            Cc::Bbr => CongestionKind::Bbr,
        };
        if self.rate.is_some() && self.cc != Cc::Paced {
            return Err(CliError::new("--rate applies to --cc paced only")
                .hint("use --cc paced --rate 5gbit"));
        }
        if self.fast_start && self.cc != Cc::Bbr {
            return Err(CliError::new("--fast-start applies to --cc bbr only")
                .hint("drop --cc (bbr is the default) or --fast-start"));
        }
        if !(self.idle_timeout > 0.0 && self.idle_timeout < 3600.0) {
            return Err(CliError::new(
                "--idle-timeout must be between 0 and 3600 seconds",
            ));
        }
        let t = TransportConfig::default()
            .with_window_packets(self.window)
            .with_max_datagram(payload)
            .with_send_buffer(self.buffer.0)
            .with_recv_buffer(self.buffer.0)
            .with_max_window_bytes(
                self.max_buffer
                    .map_or(pmdt::proto::DEFAULT_MAX_WINDOW_BYTES, |b| b.0)
                    .max(self.buffer.0),
            )
            .with_congestion(congestion)
            .with_startup(if self.fast_start {
                Startup::FromInitialTrain
            } else {
                Startup::Doubling
            })
            .with_idle_timeout(Duration::from_secs_f64(self.idle_timeout))
            .with_keepalive(Some(Duration::from_secs_f64(self.idle_timeout / 4.0)));
        t.validate()
            .map_err(|e| CliError::new(format!("invalid transport options: {e}")))?;
        Ok(t)
    }
}
