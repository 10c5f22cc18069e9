//! DPDK's own log lines (the EAL's, the drivers') arrive as `tracing` events with
//! target `dpdk::rte_log` at the mapped level, and the EAL's log level follows the
//! subscriber (its own process: one EAL per process).

use std::sync::{Arc, Mutex};

use dpdk::Eal;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

/// Records (target, level, message) of every event.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<(String, Level, String)>>>);

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: Subscriber> Layer<S> for Recorder {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut m = Message(String::new());
        event.record(&mut m);
        let meta = event.metadata();
        self.0
            .lock()
            .unwrap()
            .push((meta.target().to_string(), *meta.level(), m.0));
    }
}

#[test]
fn eal_lines_become_tracing_events_at_the_subscribers_level() {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(
        recorder
            .clone()
            .with_filter(tracing::level_filters::LevelFilter::DEBUG),
    );
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let eal = Eal::builder()
        .lcores("0")
        .no_pci(true)
        .vdev("net_null0")
        .memory_mb(256)
        .init()
        .expect("EAL init (as root)");
    assert!(
        eal.args().iter().any(|a| a == "--log-level=7"),
        "a DEBUG subscriber makes the EAL log at INFO (7): {:?}",
        eal.args()
    );
    assert!(
        !eal.args()[0].contains("pmdt"),
        "the program name is this executable's: {:?}",
        eal.args()[0]
    );
    let events = recorder.0.lock().unwrap().clone();
    let dpdk: Vec<_> = events
        .iter()
        .filter(|(t, _, _)| t == dpdk::log::TARGET)
        .collect();
    assert!(
        dpdk.iter()
            .any(|(_, l, m)| *l == Level::DEBUG && m.starts_with("EAL: Detected CPU lcores")),
        "the EAL's info lines arrive at DEBUG: {dpdk:#?}"
    );
    assert!(
        dpdk.iter()
            .all(|(_, _, m)| !m.is_empty() && !m.ends_with('\n')),
        "one event per line, without the newline"
    );
    drop(eal);
}
