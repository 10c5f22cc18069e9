//! `SIM_SENDER_CORE=on,off` (milliseconds): a simulator experiment's sender
//! shares its core, on it for `on`, then off it for `off` (as on the VM, where
//! it shares a vCPU with pmdt-wanem); `SIM_RECEIVER_CORE` likewise for the
//! receiver. Unset: a core of its own.

use std::time::Duration;

use pmdt::sim::CoreShare;

/// The core share `var` sets, if set.
pub fn from_env(var: &str) -> Option<CoreShare> {
    let v = std::env::var(var).ok()?;
    let ms: Vec<u64> = v
        .split(',')
        .map(|x| {
            x.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{var}: on,off in milliseconds"))
        })
        .collect();
    let [on, off] = ms[..] else {
        panic!("{var}: on,off in milliseconds");
    };
    Some(CoreShare {
        on: Duration::from_millis(on),
        off: Duration::from_millis(off),
    })
}
