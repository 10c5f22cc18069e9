//! Protocol options shared by the sender and receiver.

use std::time::Duration;

use clap::{Args, ValueEnum};
use pmdt::{CongestionKind, ConnectOptions, Startup, TransportConfig};
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

impl Cc {
    /// The `--cc` spelling (clap's name for the value).
    fn name(self) -> String {
        self.to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_string())
    }
}

/// `--cc`: one controller for every flow, or a comma-separated list the flows
/// take in turn (`bbr,cubic`: flow 1 BBR, flow 2 CUBIC, flow 3 BBR, ...), to see
/// how controllers share a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CcList(Vec<Cc>);

impl CcList {
    /// The controller of the flow at `index` (0-based).
    pub fn of_flow(&self, index: usize) -> Cc {
        self.0[index % self.0.len()]
    }

    /// Whether every flow uses the same controller.
    pub fn is_single(&self) -> bool {
        self.0.iter().all(|c| *c == self.0[0])
    }

    /// How many controllers the list names.
    pub fn count(&self) -> usize {
        self.0.len()
    }

    /// Whether some flow uses `cc`.
    pub fn contains(&self, cc: Cc) -> bool {
        self.0.contains(&cc)
    }
}

impl Default for CcList {
    fn default() -> Self {
        Self(vec![Cc::default()])
    }
}

impl std::str::FromStr for CcList {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let v = s
            .split(',')
            .map(|name| {
                Cc::from_str(name.trim(), true).map_err(|_| {
                    let choices: Vec<String> =
                        Cc::value_variants().iter().map(|c| c.name()).collect();
                    format!(
                        "unknown controller '{}' (one of {}; a list separates them with commas)",
                        name.trim(),
                        choices.join(", ")
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self(v))
    }
}

impl std::fmt::Display for CcList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.0.iter().map(|c| c.name()).collect();
        f.write_str(&names.join(","))
    }
}

impl TryFrom<String> for CcList {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<CcList> for String {
    fn from(c: CcList) -> String {
        c.to_string()
    }
}

/// Protocol options.
#[derive(Debug, Clone, Args, Serialize, Deserialize, Default)]
#[serde(default)]
#[command(next_help_heading = "Transport")]
pub struct TransportArgs {
    /// Sending window in packets.
    #[arg(long, default_value_t = 2048)]
    pub window: u64,
    /// Congestion control: fixed, paced, newreno, cubic or bbr; a comma-separated
    /// list gives the flows (-P) their controllers in turn, e.g. `-P 2 --cc
    /// bbr,cubic` to see how BBR and CUBIC share a path.
    #[arg(long, default_value_t = CcList::default())]
    pub cc: CcList,
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
    /// 200 ms. For paths the transfer mostly has to itself: a loss-based flow
    /// (CUBIC) starting beside it is left a small share (in the simulator 3-16 %
    /// of 1 Gbit/s × 40 ms, against about half from a doubling start).
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
        if self.cc.contains(Cc::Paced) && self.rate.is_none() {
            return Err(
                CliError::new("--cc paced needs --rate").hint("e.g. --cc paced --rate 5gbit")
            );
        }
        if self.rate.is_some() && !self.cc.contains(Cc::Paced) {
            return Err(CliError::new("--rate applies to --cc paced only")
                .hint("use --cc paced --rate 5gbit"));
        }
        if self.fast_start && !self.cc.contains(Cc::Bbr) {
            return Err(CliError::new("--fast-start applies to --cc bbr only")
                .hint("drop --cc (bbr is the default) or --fast-start"));
        }
        let first = self.options_of_flow(0);
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
            .with_congestion(first.congestion.unwrap_or_default())
            .with_startup(first.startup.unwrap_or_default())
            .with_idle_timeout(Duration::from_secs_f64(self.idle_timeout))
            .with_keepalive(Some(Duration::from_secs_f64(self.idle_timeout / 4.0)));
        t.validate()
            .map_err(|e| CliError::new(format!("invalid transport options: {e}")))?;
        // Every controller of a list, not only the first flow's: a bad one
        // must fail here, not at its flow's connect.
        for i in 1..self.cc.count() {
            self.options_of_flow(i)
                .apply(&t)
                .map_err(|e| CliError::new(format!("--cc {}: {e}", self.cc.of_flow(i).name())))?;
        }
        Ok(t)
    }

    /// The controller and startup of the flow at `index` (0-based): `--cc`'s
    /// controllers in turn, `--fast-start` for the BBR ones.
    pub fn options_of_flow(&self, index: usize) -> ConnectOptions {
        let congestion = match self.cc.of_flow(index) {
            Cc::Fixed => CongestionKind::Fixed {
                window_packets: self.window,
            },
            Cc::Paced => CongestionKind::Paced {
                rate_bps: self.rate.map_or(0, |r| r.0),
            },
            Cc::Newreno => CongestionKind::NewReno,
            Cc::Cubic => CongestionKind::Cubic,
            Cc::Bbr => CongestionKind::Bbr,
        };
        let startup = if self.fast_start && congestion == CongestionKind::Bbr {
            Startup::FromInitialTrain
        } else {
            Startup::Doubling
        };
        ConnectOptions::default()
            .with_congestion(congestion)
            .with_startup(startup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options as the tools parse them, with `--cc cc`.
    fn args(cc: &str) -> TransportArgs {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            t: TransportArgs,
        }
        <Cli as clap::Parser>::parse_from(["pmdt-send", "--cc", cc]).t
    }

    #[test]
    fn the_flows_take_the_listed_controllers_in_turn() {
        let a = args("bbr, cubic");
        let kinds: Vec<_> = (0..4)
            .map(|i| a.options_of_flow(i).congestion.unwrap().name())
            .collect();
        assert_eq!(kinds, ["bbr", "cubic", "bbr", "cubic"]);
        assert!(!a.cc.is_single());
        assert_eq!(a.cc.to_string(), "bbr,cubic");
        // The base configuration is the first flow's.
        assert_eq!(
            a.config(1500).unwrap().congestion,
            CongestionKind::Bbr,
            "the first flow's controller"
        );
        assert!(args("cubic,cubic").cc.is_single());
    }

    #[test]
    fn fast_start_applies_to_the_bbr_flows_of_a_list() {
        let a = TransportArgs {
            fast_start: true,
            ..args("cubic,bbr")
        };
        a.config(1500).unwrap();
        assert_eq!(a.options_of_flow(0).startup, Some(Startup::Doubling));
        assert_eq!(
            a.options_of_flow(1).startup,
            Some(Startup::FromInitialTrain)
        );
        let none = TransportArgs {
            fast_start: true,
            ..args("cubic,newreno")
        };
        assert!(none
            .config(1500)
            .unwrap_err()
            .to_string()
            .contains("--fast-start"));
    }

    #[test]
    fn a_paced_flow_in_a_list_needs_its_rate() {
        assert!(args("bbr,paced")
            .config(1500)
            .unwrap_err()
            .to_string()
            .contains("--cc paced needs --rate"));
        let a = TransportArgs {
            rate: Some(BitRate(300_000_000)),
            ..args("bbr,paced")
        };
        a.config(1500).unwrap();
        assert_eq!(
            a.options_of_flow(1).congestion,
            Some(CongestionKind::Paced {
                rate_bps: 300_000_000
            })
        );
    }

    #[test]
    fn an_unknown_controller_is_named() {
        let e = "bbr,vegas".parse::<CcList>().unwrap_err();
        assert!(e.contains("unknown controller 'vegas'"), "{e}");
        assert!(e.contains("cubic"), "the choices: {e}");
        assert!("bbr,".parse::<CcList>().unwrap_err().contains("''"));
    }

    #[test]
    fn a_bad_controller_later_in_the_list_fails_with_the_options() {
        let a = TransportArgs {
            rate: Some(BitRate(1000)),
            ..args("bbr,paced")
        };
        let e = a.config(1500).unwrap_err().to_string();
        assert!(e.contains("--cc paced") && e.contains("1000"), "{e}");
    }

    #[test]
    fn a_config_file_spells_the_list_as_on_the_command_line() {
        #[derive(Deserialize, Serialize)]
        struct File {
            cc: CcList,
        }
        let f: File = toml::from_str("cc = \"bbr,cubic\"").unwrap();
        assert_eq!(f.cc, "bbr,cubic".parse().unwrap());
        assert_eq!(toml::to_string(&f).unwrap().trim(), "cc = \"bbr,cubic\"");
    }
}
