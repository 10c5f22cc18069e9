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
        .vdev("net_null1")
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
    quiet_pollers_asking_for_an_interrupt_log_no_errors(&eal, &recorder);
    drop(eal);
}

/// A quiet poller asks its receive queue for an interrupt before every sleep,
/// thousands of times a second. On a port configured without receive
/// interrupts DPDK is not asked at all (each query of such a port logs "Rx Intr
/// handle unset"; the tools printed 37,816 of those lines in a 1.7 s memif
/// run). On a port configured with them whose device has none, it is asked
/// once.
fn quiet_pollers_asking_for_an_interrupt_log_no_errors(eal: &Eal, recorder: &Recorder) {
    let pool = Arc::new(
        dpdk::Mempool::new(
            eal,
            &dpdk::MempoolConfig {
                size: 2047,
                cache_size: 0,
                ..Default::default()
            },
        )
        .expect("mempool"),
    );
    let errors = || {
        recorder
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, l, _)| t == dpdk::log::TARGET && *l == Level::ERROR)
            .count()
    };
    for (name, rx_interrupts, most) in [("net_null0", false, 0), ("net_null1", true, 1)] {
        let before = errors();
        let mut port = dpdk::Port::open_by_name(eal, name).unwrap();
        let mut cfg = dpdk::PortConfig::default().descriptors(256, 256);
        cfg.rx_interrupts = rx_interrupts;
        let (mut rx, _tx) = port.configure(&cfg, &pool).unwrap();
        port.start().unwrap();
        for _ in 0..1000 {
            assert!(
                rx[0].with_interrupt(|_| ()).is_none(),
                "{name}: net_null has no receive interrupt"
            );
        }
        port.stop().unwrap();
        let logged = errors() - before;
        assert!(
            logged <= most,
            "{name} (rx_interrupts {rx_interrupts}): {logged} error lines from 1000 queries: {:#?}",
            recorder
                .0
                .lock()
                .unwrap()
                .iter()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
        );
    }
    assert_eq!(pool.in_use(), 0, "the pool is full again");
}
