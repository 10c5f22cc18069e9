//! Shared pieces of the pmdt command-line tools (`pmdt-send`, `pmdt-recv`,
//! `pmdt-wanem`): options (link, EAL, transport, output), TOML config files,
//! testpmd-style EAL arguments, units, peer addresses, the control exchange of a
//! tools connection, the data each side moves, interval reports, JSON output,
//! summaries, errors with hints, Ctrl-C, completions and man pages.

pub mod arrival_spread;
pub mod cli_error;
pub mod config_file;
pub mod data_recv;
pub mod data_send;
pub mod doc_gen;
pub mod eal_args;
pub mod eal_argv;
pub mod entry;
pub mod flow_drops;
pub mod flow_error;
pub mod frame_capture;
pub mod interrupt;
pub mod interval;
pub mod link_args;
pub mod multiplexed_recv;
pub mod multiplexed_send;
pub mod path_cache;
pub mod pattern;
pub mod peer_addr;
pub mod pool_split_arg;
pub mod pool_watch;
pub mod rate_schedule;
pub mod report;
pub mod round_trip;
pub mod session;
pub mod summary;
pub mod transport_args;
pub mod udp_relay;
pub mod units;
pub mod wan_path;
