//! Shared pieces of the pmdt command-line tools (`pmdt-send`, `pmdt-recv`,
//! `pmdt-wanem`): link and transport options, TOML config files, units, progress,
//! summaries, errors with hints, Ctrl-C.

pub mod cli_error;
pub mod config_file;
pub mod entry;
pub mod interrupt;
pub mod link_args;
pub mod pattern;
pub mod progress;
pub mod summary;
pub mod transport_args;
pub mod units;
pub mod wan_path;
