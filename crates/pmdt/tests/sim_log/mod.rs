//! The code under test's log in the simulator tests, asked for with
//! `SIM_LOG=target=level,…` (e.g. `pmdt_proto::congestion::bbr=debug`).

/// With `SIM_LOG` set, sends the log of the code under test to stderr, in the
/// order of virtual time (lines carry no wall-clock time).
pub fn log_to_stderr() {
    use tracing_subscriber::layer::SubscriberExt;
    let Ok(t) = std::env::var("SIM_LOG") else {
        return;
    };
    let targets: tracing_subscriber::filter::Targets = t.parse().expect("SIM_LOG: target=level,…");
    let sub = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .without_time()
                .with_target(false)
                .with_writer(std::io::stderr),
        )
        .with(targets);
    let _ = tracing::subscriber::set_global_default(sub);
}
