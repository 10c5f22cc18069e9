//! How fast a sender's model follows a bottleneck that changed, from its
//! `--json` intervals: the first interval end after the change from which the
//! controller's bandwidth estimate stays within a band around the new rate for
//! a while (the simulator's `the_rate_follows_a_bottleneck_that_drops_and_recovers`
//! asks the same of the shipping code, end to end here).

use serde_json::Value;

/// The band around the new rate that counts as "following" (the simulator's).
pub const BAND: (f64, f64) = (0.8, 1.25);

/// `(end, estimate)` of the first flow's intervals: the interval's end (seconds
/// since the sender's start) and its bandwidth estimate, bit/s.
fn estimates(doc: &Value) -> Vec<(f64, f64)> {
    doc.get("intervals")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|iv| {
            let s = iv.get("streams")?.get(0)?;
            Some((
                s.get("end")?.as_f64()?,
                s.get("bandwidth_estimate")?.as_f64()?,
            ))
        })
        .collect()
}

/// Seconds from `from_s` (sender time) until the estimate is within [`BAND`] ×
/// `target_bps` at an interval end and at every interval end in the next
/// `hold_s`; None if that never happens (or the run ends before a hold could).
pub fn settle_s(doc: &Value, from_s: f64, target_bps: f64, hold_s: f64) -> Option<f64> {
    let est = estimates(doc);
    let inside = |v: f64| v >= BAND.0 * target_bps && v <= BAND.1 * target_bps;
    let last_end = est.last()?.0;
    est.iter()
        .enumerate()
        .filter(|(_, &(end, _))| end >= from_s && end + hold_s <= last_end)
        .find(|&(i, &(end, _))| {
            est[i..]
                .iter()
                .take_while(|(e, _)| *e <= end + hold_s)
                .all(|&(_, v)| inside(v))
        })
        .map(|(_, &(end, _))| end - from_s)
}

/// The sender's time of something that happened `at_s` after the first frame
/// it sent: its intervals count from when it had connected, which is at most
/// `start.connect_seconds` after that frame. Taking the whole connect time
/// puts the event as early as it can have been, so a follow time measured from
/// it is never short.
pub fn sender_time(doc: &Value, at_s: f64) -> f64 {
    let connect = doc
        .get("start")
        .and_then(|s| s.get("connect_seconds"))
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    at_s - connect
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Intervals of 0.5 s with these estimates (Mbit/s).
    fn doc(mbps: &[f64]) -> Value {
        let ivs: Vec<Value> = mbps
            .iter()
            .enumerate()
            .map(|(i, m)| {
                json!({"streams": [{"end": (i + 1) as f64 * 0.5, "bandwidth_estimate": m * 1e6}],
                       "sum": {}})
            })
            .collect();
        json!({"start": {"connect_seconds": 0.25}, "intervals": ivs})
    }

    #[test]
    fn the_estimate_must_stay_in_the_band_for_the_hold() {
        // 1 Gbit/s, a drop to 200 Mbit/s at 1.0 s: a brief dip inside the band
        // at 1.5 s that leaves it again does not count; from 2.5 s it stays.
        let d = doc(&[
            1000.0, 1000.0, 220.0, 400.0, 240.0, 200.0, 190.0, 210.0, 200.0,
        ]);
        assert_eq!(settle_s(&d, 1.0, 200e6, 1.0), Some(1.5));
        assert_eq!(
            settle_s(&d, 1.0, 200e6, 0.0),
            Some(0.5),
            "no hold: the first inside"
        );
        assert_eq!(settle_s(&d, 1.0, 1e9, 1.0), None, "never back at 1 Gbit/s");
        assert_eq!(
            settle_s(&d, 1.0, 200e6, 10.0),
            None,
            "the run ends before the hold"
        );
        assert_eq!(settle_s(&json!({}), 0.0, 1e9, 1.0), None);
    }

    #[test]
    fn an_event_is_placed_as_early_as_the_connect_time_allows() {
        let d = doc(&[]);
        assert_eq!(sender_time(&d, 10.0), 9.75);
        assert_eq!(sender_time(&json!({}), 10.0), 10.0);
    }
}
