//! DPDK's own log (the EAL, drivers, telemetry: `rte_log`) routed into `tracing`.
//!
//! DPDK writes its log lines to a C `FILE` stream. [`EalBuilder::init`] opens one
//! with `fopencookie` whose write function turns each line into a `tracing` event
//! with target [`TARGET`], at the level of the message being written (DPDK keeps it
//! per thread: `rte_log_cur_msg_loglevel`). Applications choose what to see with
//! their subscriber's filter, e.g. `dpdk::rte_log=off` to hide the EAL's chatter;
//! without a subscriber the lines are dropped like any other `tracing` event.
//!
//! DPDK levels map to `tracing` levels: emergency to error → `ERROR`, warning →
//! `WARN`, notice → `INFO`, info → `DEBUG`, debug → `TRACE`. A few lines DPDK
//! logs as errors are not errors for this crate (`NOT_ERRORS`: the TAP driver's
//! notices on a kernel without some traffic-control modules); they arrive at
//! `INFO`. Unless the builder sets one ([`EalBuilder::log_level`]), the EAL's log
//! level follows the subscriber's most verbose level ([`eal_log_level`]), so
//! DPDK does not format lines nobody sees.
//!
//! [`EalBuilder::init`]: crate::EalBuilder::init
//! [`EalBuilder::log_level`]: crate::EalBuilder::log_level

use std::ffi::{c_char, c_int, c_void};

use std::sync::atomic::{AtomicBool, Ordering};

use tracing::level_filters::LevelFilter;
use tracing::Level;

/// The `tracing` target of DPDK's own log lines.
pub const TARGET: &str = "dpdk::rte_log";

static ROUTED: AtomicBool = AtomicBool::new(false);

/// The DPDK log level (`--log-level`) that produces what a subscriber at `filter`
/// shows, by the mapping above: `ERROR` → 4 (error) … `TRACE` → 8 (debug).
pub fn eal_log_level(filter: LevelFilter) -> u32 {
    match filter.into_level() {
        None => dpdk_sys::RTE_LOG_EMERG,
        Some(Level::ERROR) => dpdk_sys::RTE_LOG_ERR,
        Some(Level::WARN) => dpdk_sys::RTE_LOG_WARNING,
        Some(Level::INFO) => dpdk_sys::RTE_LOG_NOTICE,
        Some(Level::DEBUG) => dpdk_sys::RTE_LOG_INFO,
        Some(Level::TRACE) => dpdk_sys::RTE_LOG_DEBUG,
    }
}

/// Points DPDK's log stream at `tracing` (once per process; later calls do
/// nothing). Returns false when the stream could not be made (DPDK then keeps
/// writing to stderr).
pub(crate) fn route_to_tracing() -> bool {
    if ROUTED.swap(true, Ordering::AcqRel) {
        return true;
    }
    // SAFETY: `write_lines` has the signature fopencookie expects.
    let stream = unsafe { dpdk_sys::shim_cookie_stream(Some(write_lines)) };
    if stream.is_null() {
        ROUTED.store(false, Ordering::Release);
        return false;
    }
    // SAFETY: a valid, open stream that lives for the rest of the process (it is
    // never closed: DPDK may log until exit).
    unsafe { dpdk_sys::rte_openlog_stream(stream) == 0 }
}

/// The stream's write function: one `tracing` event per line of `buf`.
unsafe extern "C" fn write_lines(_cookie: *mut c_void, buf: *const c_char, size: usize) -> isize {
    if buf.is_null() || size == 0 {
        return 0;
    }
    // SAFETY: stdio hands over `size` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), size) };
    // SAFETY: a plain read of this thread's current-message state.
    let level = unsafe { dpdk_sys::rte_log_cur_msg_loglevel() };
    // A panicking subscriber must not unwind into C.
    let _ = std::panic::catch_unwind(|| emit(level, bytes));
    size as isize
}

fn emit(level: c_int, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for line in text.lines().map(str::trim_end).filter(|l| !l.is_empty()) {
        match level_of(level as u32, line) {
            Level::ERROR => tracing::error!(target: TARGET, "{line}"),
            Level::WARN => tracing::warn!(target: TARGET, "{line}"),
            Level::INFO => tracing::info!(target: TARGET, "{line}"),
            Level::DEBUG => tracing::debug!(target: TARGET, "{line}"),
            _ => tracing::trace!(target: TARGET, "{line}"),
        }
    }
}

/// Lines DPDK 22.11 logs as errors that are not, for this crate's use of it:
/// each (a part of the line, why). They arrive as `INFO` events instead, so an
/// application's users do not see five "error" lines every time a TAP port
/// starts on a kernel without the traffic-control modules.
const NOT_ERRORS: &[(&str, &str)] = &[
    (
        "Disabling rte flow support",
        "net_tap without the kernel's flower classifier: only rte_flow rules need it, \
         and this crate creates none",
    ),
    (
        "multiq qdisc",
        "net_tap without the kernel's multiq qdisc: it spreads rte_flow-steered \
         traffic over queues, which this crate does not use",
    ),
    (
        "Specified qdisc kind is unknown",
        "the kernel's own answer to the multiq qdisc above",
    ),
    (
        "Failed to send start req to secondary 95",
        "net_tap telling secondary processes its queues started, refused with \
         EOPNOTSUPP (95): multi-process messaging is off, as this crate runs each \
         process as its own primary; any other failure stays an error",
    ),
];

/// The `tracing` level of a DPDK line at DPDK level `level` (see the module
/// documentation; [`NOT_ERRORS`] are `INFO`).
fn level_of(level: u32, line: &str) -> Level {
    match level {
        l if l <= dpdk_sys::RTE_LOG_ERR => {
            if NOT_ERRORS.iter().any(|(part, _)| line.contains(part)) {
                Level::INFO
            } else {
                Level::ERROR
            }
        }
        dpdk_sys::RTE_LOG_WARNING => Level::WARN,
        dpdk_sys::RTE_LOG_NOTICE => Level::INFO,
        dpdk_sys::RTE_LOG_INFO => Level::DEBUG,
        _ => Level::TRACE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines a TAP port's start logged here (a kernel without the multiq
    /// qdisc or the flower classifier, no secondary process) arrive as INFO;
    /// any other error stays an error.
    #[test]
    fn tap_start_notices_are_not_errors() {
        let err = dpdk_sys::RTE_LOG_ERR;
        for line in [
            "eth_dev_tap_create():  Disabling rte flow support: No such file or directory(2)",
            "eth_dev_tap_create(): s38tap: failed to create multiq qdisc.",
            "qdisc_create_multiq(): Could not add multiq qdisc (2): No such file or directory",
            "tap_nl_dump_ext_ack(): Specified qdisc kind is unknown",
            "tap_mp_req_on_rxtx(): Failed to send start req to secondary 95",
        ] {
            assert_eq!(level_of(err, line), Level::INFO, "{line}");
        }
        assert_eq!(level_of(err, "Rx Intr handle unset"), Level::ERROR);
        assert_eq!(
            level_of(
                err,
                "tap_mp_req_on_rxtx(): Failed to send start req to secondary 110"
            ),
            Level::ERROR,
            "a secondary that exists and failed is an error"
        );
        assert_eq!(level_of(dpdk_sys::RTE_LOG_CRIT, "x"), Level::ERROR);
        assert_eq!(
            level_of(dpdk_sys::RTE_LOG_WARNING, "multiq qdisc"),
            Level::WARN,
            "only errors are reconsidered"
        );
        assert_eq!(level_of(dpdk_sys::RTE_LOG_INFO, "x"), Level::DEBUG);
        assert_eq!(level_of(dpdk_sys::RTE_LOG_DEBUG, "x"), Level::TRACE);
    }

    #[test]
    fn levels_map_both_ways() {
        assert_eq!(eal_log_level(LevelFilter::OFF), dpdk_sys::RTE_LOG_EMERG);
        assert_eq!(eal_log_level(LevelFilter::WARN), dpdk_sys::RTE_LOG_WARNING);
        assert_eq!(eal_log_level(LevelFilter::INFO), dpdk_sys::RTE_LOG_NOTICE);
        assert_eq!(eal_log_level(LevelFilter::TRACE), dpdk_sys::RTE_LOG_DEBUG);
    }
}
