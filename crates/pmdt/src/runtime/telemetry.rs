//! DPDK telemetry for pmdt, readable with `dpdk-telemetry.py` while a runtime on a
//! DPDK port runs. Every runtime of the process is covered (`rt0/loop0`, ...):
//!
//! - `/pmdt/stats`: each I/O loop's link, endpoint and loop counters;
//! - `/pmdt/load`: each I/O loop's load estimate;
//! - `/pmdt/list[,FIRST]`: every connection handed to the application, by id
//!   (`<id>`: peer address), at most [`PAGE`] per reply from id `FIRST` on, with
//!   `total` and, when more follow, `next` (the `FIRST` of the next page): the
//!   telemetry library holds 256 entries per reply, so long lists are paged,
//!   never cut;
//! - `/pmdt/connection,<id>`: one connection's parameters and counters.

use std::sync::{Arc, Mutex, Weak};

use arc_swap::ArcSwap;
use dpdk::telemetry::{register, TelValue};
use serde_json::Value;

use super::directory::Directory;
use super::shared::StreamShared;
use super::stats::LoopStats;

/// Connections per `/pmdt/list` reply (the library's limit is 256 entries).
pub const PAGE: usize = 200;

type Loops = Vec<Weak<ArcSwap<LoopStats>>>;

struct Registered {
    loops: Loops,
    directory: Weak<Directory>,
}

fn registry() -> &'static Mutex<Vec<Registered>> {
    static R: Mutex<Vec<Registered>> = Mutex::new(Vec::new());
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
    for (r, rt) in reg.iter().enumerate() {
        for (l, w) in rt.loops.iter().enumerate() {
            if let Some(s) = w.upgrade() {
                if let Some(v) = to_tel(&pick(&s.load())) {
                    out.push((format!("rt{r}/loop{l}"), v));
                }
            }
        }
    }
    TelValue::Dict(out)
}

/// Every live connection of every runtime, by ascending id.
fn connections() -> Vec<(u64, Arc<StreamShared>)> {
    let dirs: Vec<Arc<Directory>> = registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(|r| r.directory.upgrade())
        .collect();
    let mut all: Vec<_> = dirs.iter().flat_map(|d| d.live()).collect();
    all.sort_by_key(|(id, _)| *id);
    all
}

fn error(msg: String) -> TelValue {
    TelValue::Dict(vec![("error".into(), TelValue::Str(msg))])
}

/// `/pmdt/list[,FIRST]`.
fn list(params: &str) -> TelValue {
    let p = params.trim();
    let first = if p.is_empty() {
        0
    } else {
        match p.parse::<u64>() {
            Ok(f) => f,
            Err(_) => return error(format!("{p:?} is not a connection id; /pmdt/list,FIRST")),
        }
    };
    let all = connections();
    let mut out = vec![("total".to_string(), TelValue::U64(all.len() as u64))];
    let mut page = all.iter().filter(|(id, _)| *id >= first);
    for (id, s) in page.by_ref().take(PAGE) {
        out.push((id.to_string(), TelValue::Str(s.remote.to_string())));
    }
    if let Some((id, _)) = page.next() {
        out.push(("next".into(), TelValue::U64(*id)));
    }
    TelValue::Dict(out)
}

/// `/pmdt/connection,<id>`.
fn connection(params: &str) -> TelValue {
    let Ok(id) = params.trim().parse::<u64>() else {
        return error(format!(
            "{params:?} is not a connection id; ids are in /pmdt/list"
        ));
    };
    let Some((_, s)) = connections().into_iter().find(|(i, _)| *i == id) else {
        return error(format!("no connection {id} (ended, or see /pmdt/list)"));
    };
    let stats = s.stats.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut v = serde_json::to_value(&stats).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.remove("rtt_histogram");
        m.insert("id".into(), Value::from(id));
        m.insert("peer".into(), Value::String(s.remote.to_string()));
        m.insert(
            "rtt_p50_us".into(),
            Value::from(stats.rtt_histogram.quantile(0.5)),
        );
        m.insert(
            "rtt_p99_us".into(),
            Value::from(stats.rtt_histogram.quantile(0.99)),
        );
        m.insert(
            "state".into(),
            Value::String(match s.close_reason() {
                Some(r) => format!("closed: {r}"),
                None => "open".into(),
            }),
        );
    }
    to_tel(&v).unwrap_or_else(|| error("no statistics".into()))
}

/// Lists a runtime's loops and connections under the telemetry commands
/// (registered on first use).
pub(crate) fn publish(loops: Loops, directory: Weak<Directory>) -> dpdk::Result<()> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Registered { loops, directory });
    register(
        "/pmdt/stats",
        "pmdt I/O loop counters: link, endpoint, load. No parameters.",
        |_| {
            collect(|s| {
                let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
                if let Value::Object(o) = &mut v {
                    o.remove("connection_list");
                    // Served by /pmdt/load.
                    for k in ["load", "load_ended_by", "last_transfer_load"] {
                        o.remove(k);
                    }
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
        "/pmdt/list",
        "pmdt connections by id: peer address, `total`, `next` page. Parameter: first id (optional).",
        list,
    )?;
    register(
        "/pmdt/connection",
        "one pmdt connection's parameters and counters. Parameter: its id (see /pmdt/list).",
        connection,
    )?;
    Ok(())
}

/// Keeps the registry from holding dead runtimes forever.
pub(crate) fn forget_dead() {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|r| r.loops.iter().any(|w| w.strong_count() > 0) || r.directory.strong_count() > 0);
}
