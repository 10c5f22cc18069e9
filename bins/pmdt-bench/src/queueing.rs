//! The queueing delay a sender's flow saw, from its `--json` intervals: each
//! stream interval carries the smoothed RTT at its end (`rtt`, µs) and the
//! controller's propagation-delay estimate (`min_rtt`, µs); their difference
//! is the queue in front of the flow at that moment. A flow alone that keeps a
//! queue standing (its own, which it could drain) adds that delay to every
//! packet of every flow through the bottleneck.

use serde_json::Value;

use crate::flow_interval::flow_stream;

/// The mean of `rtt − min_rtt` over flow `flow`'s stream intervals (1-based)
/// that end inside `from_s..=to_s` (seconds since the sender started), in
/// milliseconds. Intervals without a propagation-delay estimate (`min_rtt` 0:
/// a controller without a model, or none yet) are left out. `None` if no
/// interval qualifies.
pub fn mean_queue_ms(doc: &Value, flow: u64, from_s: f64, to_s: f64) -> Option<f64> {
    let (sum, n) = doc
        .get("intervals")?
        .as_array()?
        .iter()
        .filter_map(|iv| {
            let st = flow_stream(iv, flow)?;
            let end = st.get("end")?.as_f64()?;
            let rtt = st.get("rtt")?.as_f64()?;
            let min = st.get("min_rtt")?.as_f64()?;
            (end >= from_s && end <= to_s && min > 0.0).then(|| (rtt - min).max(0.0) / 1e3)
        })
        .fold((0.0, 0u32), |(s, n), q| (s + q, n + 1));
    (n > 0).then(|| sum / f64::from(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn iv(end: f64, rtt_us: u64, min_rtt_us: u64) -> Value {
        json!({"streams": [
            {"flow": 1, "start": end - 0.2, "end": end, "rtt": rtt_us, "min_rtt": min_rtt_us},
            {"flow": 2, "start": end - 0.2, "end": end, "rtt": 90_000, "min_rtt": 40_000},
        ]})
    }

    #[test]
    fn the_mean_queue_of_one_flow_inside_the_window() {
        let doc = json!({"intervals": [
            iv(1.0, 80_000, 40_000),  // before the window: left out
            iv(2.0, 70_000, 40_000),  // 30 ms
            iv(2.2, 50_000, 40_000),  // 10 ms
            iv(2.4, 40_500, 0),       // no estimate: left out
            iv(2.6, 39_000, 40_000),  // under the estimate: no queue
            iv(3.2, 99_000, 40_000),  // after the window: left out
        ]});
        let q = mean_queue_ms(&doc, 1, 1.5, 3.0).unwrap();
        assert!((q - 40.0 / 3.0).abs() < 1e-9, "{q}");
        assert_eq!(mean_queue_ms(&doc, 2, 1.5, 3.0), Some(50.0));
        assert_eq!(mean_queue_ms(&doc, 3, 1.5, 3.0), None);
        assert_eq!(mean_queue_ms(&doc, 1, 5.0, 6.0), None);
    }
}
