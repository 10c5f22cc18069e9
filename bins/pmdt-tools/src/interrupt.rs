//! Ctrl-C, SIGTERM and SIGHUP (ctrlc's `termination` feature) as a flag the tools
//! poll, so they stop cleanly: flows end at once, the summary is printed, a
//! receiver removes its partial files. A second signal exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Set once the user asked to stop.
#[derive(Clone)]
pub struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// Installs the handler (once per process).
    pub fn install() -> Self {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        if let Err(e) = ctrlc::set_handler(move || {
            if f.swap(true, Ordering::SeqCst) {
                eprintln!("second interrupt: exiting now");
                std::process::exit(130);
            }
            eprintln!("interrupted: stopping cleanly (again to exit at once)");
        }) {
            eprintln!("warning: no Ctrl-C handler: {e}");
        }
        Self(flag)
    }

    /// A flag no signal sets (tests; a caller that handles signals itself).
    pub fn never() -> Self {
        Self(Arc::new(AtomicBool::new(false)))
    }

    /// Sets the flag as a signal would (tests; a caller's own reason to stop).
    pub fn trigger(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether to stop.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
