//! Logging for the workspace's command-line tools (`pmdt-send`, `pmdt-recv`,
//! `pmdt-wanem`, `pmdt-load-sweep`, `pmdt-bench`): the libraries log through
//! `tracing`, and a tool calls [`init`] once with its name and the count of `-v`
//! flags ([`Verbosity`]) to print their events on stderr, one line each:
//! `pmdt-recv: warning: …`.
//!
//! What is shown:
//!
//! | flags | the tool and the libraries | DPDK's own log (EAL, drivers: target `dpdk::rte_log`) |
//! |---|---|---|
//! | none | info and above (the `dpdk` crate: warnings) | errors only (e.g. why a vdev failed) |
//! | `-v` | info and above | DPDK info and above (the EAL's start-up lines) |
//! | `-vv` | debug and above | everything, DPDK debug included |
//! | `-vvv` | everything | everything |
//!
//! Debug and trace lines name the spans they happened in, e.g. the connection
//! (`connection{cid=… side=… remote=…}: bbr: …`) when its span is enabled:
//! its target, `pmdt_proto::connection`, must be on at debug level
//! (`-vv`, `RUST_LOG=pmdt_proto=debug`, or e.g.
//! `RUST_LOG=pmdt_proto::congestion=debug,pmdt_proto::connection=debug`).
//! Entering the span costs a branch per packet when it is off, and a
//! span-registry lookup when it is on.
//!
//! `RUST_LOG` (`target=level,...`, e.g. `RUST_LOG=info,dpdk::rte_log=debug`)
//! replaces the table when set.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The target of DPDK's own log lines (see the `dpdk` crate's `log` module).
const DPDK_LOG: &str = "dpdk::rte_log";

/// The `-v` flag: more output each time it is given.
#[derive(Debug, Clone, Copy, Default, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct Verbosity {
    /// More log output: -v adds DPDK's own log (EAL, drivers), -vv debug (DPDK's
    /// too), -vvv everything (RUST_LOG, when set, decides instead).
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// What `verbose` `-v` flags show (see the table in the crate docs).
pub fn filter(verbose: u8) -> Targets {
    match verbose {
        0 => Targets::new()
            .with_default(Level::INFO)
            .with_target("dpdk", Level::WARN)
            // DPDK's errors say why a device or the EAL failed; its chatter
            // (notices, info) waits for -v.
            .with_target(DPDK_LOG, Level::ERROR),
        1 => Targets::new()
            .with_default(Level::INFO)
            .with_target(DPDK_LOG, Level::DEBUG),
        2 => Targets::new()
            .with_default(Level::DEBUG)
            .with_target(DPDK_LOG, Level::TRACE),
        _ => Targets::new().with_default(Level::TRACE),
    }
}

/// Prints the events `verbose` (or `RUST_LOG`) selects on stderr, one line each,
/// prefixed with `prog`. Call once, first thing in `main` (a second call, or a
/// subscriber set elsewhere, leaves the first in place).
pub fn init(prog: &str, verbose: u8) {
    let targets = std::env::var("RUST_LOG")
        .ok()
        .and_then(|s| Targets::from_str(&s).ok())
        .unwrap_or_else(|| filter(verbose));
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .event_format(OneLine {
            prog: prog.to_string(),
            start: std::time::Instant::now(),
        })
        .with_filter(targets);
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

/// `prog: [level: ]message fields`: no time, no target (a tool's user reads
/// it); debug and trace lines also give the seconds since the tool started
/// (`[1.234567 s]`), to read a transfer's events against its timeline.
struct OneLine {
    prog: String,
    start: std::time::Instant,
}

impl<S, N> FormatEvent<S, N> for OneLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let level = match *event.metadata().level() {
            Level::ERROR => "error: ",
            Level::WARN => "warning: ",
            Level::INFO => "",
            Level::DEBUG => "debug: ",
            Level::TRACE => "trace: ",
        };
        write!(w, "{}: {level}", self.prog)?;
        if *event.metadata().level() > Level::INFO {
            write!(w, "[{:.6} s] ", self.start.elapsed().as_secs_f64())?;
            // The spans it happened in (a connection: `connection{cid=…}`), to
            // tell one flow's lines from another's.
            if let Some(scope) = ctx.event_scope() {
                for span in scope.from_root() {
                    write!(w, "{}", span.name())?;
                    let ext = span.extensions();
                    if let Some(f) = ext.get::<FormattedFields<N>>().filter(|f| !f.is_empty()) {
                        write!(w, "{{{f}}}")?;
                    }
                    write!(w, ": ")?;
                }
            }
        }
        ctx.format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}

#[cfg(test)]
mod tests {
    use tracing::level_filters::LevelFilter;
    use tracing_subscriber::filter::Targets;

    use super::*;

    fn level(t: &Targets, target: &str) -> LevelFilter {
        // The most verbose level `t` lets through for `target`.
        for l in [
            Level::TRACE,
            Level::DEBUG,
            Level::INFO,
            Level::WARN,
            Level::ERROR,
        ] {
            if t.would_enable(target, &l) {
                return LevelFilter::from_level(l);
            }
        }
        LevelFilter::OFF
    }

    /// A writer into a buffer the test reads.
    #[derive(Clone, Default)]
    struct Lines(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn debug_lines_name_the_connection_they_are_about() {
        let lines = Lines::default();
        let out = lines.clone();
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(move || out.clone())
            .event_format(OneLine {
                prog: "t".into(),
                start: std::time::Instant::now(),
            })
            .with_filter(Targets::new().with_default(Level::DEBUG));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::debug_span!("connection", cid = 7u64);
            span.in_scope(|| {
                tracing::debug!(bw = 1u64, "bbr: Startup ends");
                tracing::info!("a line for the user");
            });
        });
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        let got: Vec<&str> = text.lines().collect();
        assert_eq!(got.len(), 2, "{text}");
        assert!(got[0].starts_with("t: debug: ["), "{text}");
        assert!(
            got[0].ends_with("] connection{cid=7}: bbr: Startup ends bw=1"),
            "{text}"
        );
        // Info and above stay as the user reads them.
        assert_eq!(got[1], "t: a line for the user");
    }

    #[test]
    fn each_v_shows_more_and_dpdk_chatter_needs_one_but_its_errors_do_not() {
        let quiet = filter(0);
        assert_eq!(level(&quiet, "pmdt_tools"), LevelFilter::INFO);
        assert_eq!(level(&quiet, "dpdk::eal"), LevelFilter::WARN);
        assert_eq!(level(&quiet, DPDK_LOG), LevelFilter::ERROR);
        assert_eq!(level(&filter(1), DPDK_LOG), LevelFilter::DEBUG);
        assert_eq!(level(&filter(1), "pmdt"), LevelFilter::INFO);
        assert_eq!(level(&filter(2), DPDK_LOG), LevelFilter::TRACE);
        assert_eq!(level(&filter(2), "pmdt"), LevelFilter::DEBUG);
        assert_eq!(level(&filter(7), "pmdt"), LevelFilter::TRACE);
    }
}
