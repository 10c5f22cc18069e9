//! DPDK telemetry for pmdt: `/pmdt/stats`, `/pmdt/load` and `/pmdt/connections`,
//! readable with `dpdk-telemetry.py` while a runtime on a DPDK port runs. Every
//! runtime of the process is listed (`rt0/loop0`, ...).

use std::sync::{Mutex, Weak};

use arc_swap::ArcSwap;
use dpdk::telemetry::{register, TelValue};
use serde_json::Value;

use super::stats::LoopStats;

type Loops = Vec<Weak<ArcSwap<LoopStats>>>;

fn registry() -> &'static Mutex<Vec<Loops>> {
    static R: Mutex<Vec<Loops>> = Mutex::new(Vec::new());
    &R
}

/// Converts JSON into telemetry values (floats and booleans as strings).
fn to_tel(v: &Value) -> Option<TelValue> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => TelValue::Str(b.to_string()),
        Value::Number(n) => match n.as_u64() {
            Some(u) => TelValue::U64(u),
            None => TelValue::Str(format!("{:.4}", n.as_f64().unwrap_or(0.0))),
        },
        Value::String(s) => TelValue::Str(s.clone()),
        Value::Array(a) => TelValue::Dict(
            a.iter()
                .enumerate()
                .filter_map(|(i, x)| Some((i.to_string(), to_tel(x)?)))
                .collect(),
        ),
        Value::Object(o) => TelValue::Dict(
            o.iter()
                .filter_map(|(k, x)| Some((k.clone(), to_tel(x)?)))
                .collect(),
        ),
    })
}

fn collect(pick: impl Fn(&LoopStats) -> Value) -> TelValue {
    let reg = registry().lock().unwrap_or_else(|e| e.into_inner());
    let mut out = Vec::new();
    for (r, loops) in reg.iter().enumerate() {
        for (l, w) in loops.iter().enumerate() {
            if let Some(s) = w.upgrade() {
                if let Some(v) = to_tel(&pick(&s.load())) {
                    out.push((format!("rt{r}/loop{l}"), v));
                }
            }
        }
    }
    TelValue::Dict(out)
}

/// Lists a runtime's loops under the telemetry commands (registered on first use).
pub(crate) fn publish(loops: Vec<Weak<ArcSwap<LoopStats>>>) -> dpdk::Result<()> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(loops);
    register(
        "/pmdt/stats",
        "pmdt I/O loop counters: link, endpoint, load. No parameters.",
        |_| {
            collect(|s| {
                let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
                if let Value::Object(o) = &mut v {
                    o.remove("connection_list");
                    o.remove("load");
                }
                v
            })
        },
    )?;
    register(
        "/pmdt/load",
        "pmdt I/O core load estimate per loop. No parameters.",
        |_| collect(|s| serde_json::to_value(&s.load).unwrap_or(Value::Null)),
    )?;
    register(
        "/pmdt/connections",
        "pmdt connections: peer, bytes, packets, retransmissions, RTT. No parameters.",
        |_| {
            collect(|s| {
                Value::Array(
                    s.connection_list
                        .iter()
                        .take(16)
                        .map(|c| {
                            let mut v = serde_json::to_value(&c.stats).unwrap_or(Value::Null);
                            if let Value::Object(m) = &mut v {
                                m.remove("rtt_histogram");
                                m.insert("peer".into(), Value::String(c.peer.clone()));
                            }
                            v
                        })
                        .collect(),
                )
            })
        },
    )?;
    Ok(())
}

/// Keeps the registry from holding dead runtimes forever.
pub(crate) fn forget_dead() {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|l| l.iter().any(|w| w.strong_count() > 0));
}
