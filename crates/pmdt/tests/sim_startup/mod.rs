//! `SIM_STARTUP=train` or `doubling`: BBR's Startup for a simulator
//! experiment's flows (default: the transport's), so an experiment can set one
//! beside the other.

use pmdt::proto::{Startup, TransportConfig};

/// `t` with `SIM_STARTUP`'s Startup, if set.
pub fn from_env(t: TransportConfig) -> TransportConfig {
    match std::env::var("SIM_STARTUP").as_deref() {
        Ok("train") => t.with_startup(Startup::FromInitialTrain),
        Ok("doubling") => t.with_startup(Startup::Doubling),
        Ok(other) => panic!("SIM_STARTUP: train or doubling, not {other}"),
        Err(_) => t,
    }
}
