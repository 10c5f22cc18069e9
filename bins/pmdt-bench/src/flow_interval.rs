//! One flow's part of an interval of a sender's `--json` report: each interval
//! carries a `streams` array, one entry per flow (`flow`, 1-based), beside the
//! interval's `sum`.

use serde_json::Value;

/// Flow `flow`'s stream entry in `interval` (1-based), if it has one.
pub fn flow_stream(interval: &Value, flow: u64) -> Option<&Value> {
    interval
        .get("streams")?
        .as_array()?
        .iter()
        .find(|s| s.get("flow").and_then(Value::as_u64) == Some(flow))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_flow_is_found_by_its_number_not_its_place() {
        let iv = json!({"streams": [{"flow": 2, "bytes": 20}, {"flow": 1, "bytes": 10}]});
        assert_eq!(
            flow_stream(&iv, 1).and_then(|s| s.get("bytes")),
            Some(&json!(10))
        );
        assert_eq!(
            flow_stream(&iv, 2).and_then(|s| s.get("bytes")),
            Some(&json!(20))
        );
        assert_eq!(flow_stream(&iv, 3), None);
        assert_eq!(flow_stream(&json!({"sum": {}}), 1), None);
    }
}
