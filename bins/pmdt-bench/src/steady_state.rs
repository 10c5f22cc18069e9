//! Steady-state goodput from a sender's `--json` intervals: the rate once the
//! controller has found the path, as iperf3's `--omit` reports it (the whole-run
//! figure also pays for the handshake, Startup's ramp over many round trips on a
//! long path, and the close).

use serde_json::Value;

use crate::flow_interval::flow_stream;

/// Stream bits per second over the intervals that start at or after `from_s` and
/// end by `to_s` (seconds since the sender started), from the document's
/// `intervals[].sum` (`start`, `end`, `bytes`). `None` if no interval qualifies.
pub fn goodput_bps(doc: &Value, from_s: f64, to_s: f64) -> Option<f64> {
    rate_over(doc, from_s, to_s, |iv| iv.get("sum"))
}

/// Like [`goodput_bps`], of one flow (`intervals[].streams[]` whose `flow` is
/// `flow`, 1-based): its share of a path the flows share.
pub fn flow_goodput_bps(doc: &Value, flow: u64, from_s: f64, to_s: f64) -> Option<f64> {
    rate_over(doc, from_s, to_s, |iv| flow_stream(iv, flow))
}

/// Bits per second over the intervals inside `from_s..to_s`, of the part of
/// each interval `pick` chooses (with `start`, `end`, `bytes`).
fn rate_over(
    doc: &Value,
    from_s: f64,
    to_s: f64,
    pick: impl Fn(&Value) -> Option<&Value>,
) -> Option<f64> {
    let (bytes, secs) = doc
        .get("intervals")?
        .as_array()?
        .iter()
        .filter_map(|iv| {
            let part = pick(iv)?;
            let start = part.get("start")?.as_f64()?;
            let end = part.get("end")?.as_f64()?;
            let bytes = part.get("bytes")?.as_f64()?;
            (start >= from_s && end <= to_s && end > start).then_some((bytes, end - start))
        })
        .fold((0.0, 0.0), |(b, s), (bi, si)| (b + bi, s + si));
    (secs > 0.0).then(|| bytes * 8.0 / secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn iv(start: f64, end: f64, bytes: u64) -> Value {
        json!({"streams": [], "sum": {"start": start, "end": end, "bytes": bytes}})
    }

    #[test]
    fn only_the_intervals_inside_the_window_count() {
        let doc = json!({"intervals": [
            iv(0.0, 1.0, 1_000),          // ramp: left out
            iv(1.0, 2.0, 125_000_000),    // 1 Gbit/s
            iv(2.0, 3.0, 125_000_000),
            iv(3.0, 3.4, 1_000),          // drain after the write period: left out
        ]});
        let g = goodput_bps(&doc, 1.0, 3.0).unwrap();
        assert!((g - 1e9).abs() < 1.0, "{g}");
    }

    #[test]
    fn one_flows_share_comes_from_its_streams() {
        let st =
            |flow: u64, bytes: u64| json!({"flow": flow, "start": 1.0, "end": 2.0, "bytes": bytes});
        let doc = json!({"intervals": [
            {"streams": [st(1, 100_000_000), st(2, 25_000_000)],
             "sum": {"start": 1.0, "end": 2.0, "bytes": 125_000_000}},
        ]});
        assert_eq!(flow_goodput_bps(&doc, 1, 0.0, 3.0), Some(800e6));
        assert_eq!(flow_goodput_bps(&doc, 2, 0.0, 3.0), Some(200e6));
        assert_eq!(flow_goodput_bps(&doc, 3, 0.0, 3.0), None);
    }

    #[test]
    fn no_interval_in_the_window_gives_none() {
        let doc = json!({"intervals": [iv(0.0, 1.0, 10)]});
        assert_eq!(goodput_bps(&doc, 5.0, 20.0), None);
        assert_eq!(goodput_bps(&json!({}), 0.0, 1.0), None);
    }
}
