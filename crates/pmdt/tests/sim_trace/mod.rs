//! The simulator tests' timeline of a sender's model, printed with `SIM_TRACE=1`.

use std::time::Duration;

use pmdt::sim::FlowReport;

/// With `SIM_TRACE` set, prints `f`'s sender model and arrival rate at every
/// `tick` (the scenario's `sample_every`), each line led by `label`.
pub fn print_timeline(label: &str, f: &FlowReport, tick: Duration) {
    if std::env::var("SIM_TRACE").is_err() {
        return;
    }
    let arrived = &f.arrived_timeline;
    for (i, st) in f.sender_timeline.iter().enumerate() {
        let prev = if i == 0 { 0 } else { arrived[i - 1] };
        println!(
            "  {label}t={:.1}s arrived {:.0} Mbit/s {:?} bw {:.0} Mbit/s pacing {:.0} Mbit/s \
             cwnd {} in flight {} retx {} pto {} srtt {} µs min {} µs",
            (i + 1) as f64 * tick.as_secs_f64(),
            (arrived[i] - prev) as f64 * 8.0 / tick.as_secs_f64() / 1e6,
            st.cc_state,
            st.cc_bandwidth_bps as f64 / 1e6,
            st.pacing_rate as f64 * 8.0 / 1e6,
            st.cwnd,
            st.bytes_in_flight,
            st.packets_retransmitted,
            st.pto_count,
            st.rtt_smoothed_us,
            st.cc_min_rtt_us,
        );
    }
}
