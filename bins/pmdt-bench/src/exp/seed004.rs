//! Seed 004 (load estimation): delegates to `pmdt-load-sweep`, which writes its own
//! sweep.{csv,json,md,png}, and folds its summary in: capacity, each estimator's
//! accuracy, the drop warning's lead.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::cell::{CellSpec, Sample};
use crate::ctx::Ctx;
use crate::machine::Machine;
use crate::pmdt_pair::{last_json, num};
use crate::proc::Child;
use crate::report::Report;

/// Tools this experiment needs.
pub const TOOLS: crate::exp::Tools = (&["pmdt-load-sweep"], &[]);

/// One sweep's JSON and command, or why it failed.
type SweepRun = Result<(Value, String), crate::cell::RunErr>;

/// Runs pmdt-load-sweep once; returns its sweep.json and the command.
fn sweep(ctx: &Ctx, run: usize) -> SweepRun {
    const E: &str = "seed004";
    let id = ctx.next_id();
    let dir = ctx.out.join(format!(
        "seed004-sweep{}",
        if run > 0 {
            format!("-{run}")
        } else {
            String::new()
        }
    ));
    let mut cmd = Command::new(ctx.tool("pmdt-load-sweep"));
    cmd.arg("--out").arg(&dir).args(["--lcores", "0,1"]);
    if ctx.quick {
        // Short steps, and heavier per-packet work so the worker saturates before a
        // generator slowed by a busy machine does (a smoke test, not the experiment).
        cmd.args(["--warmup", "0.1", "--measure", "0.2"]).args([
            "--work-cycles",
            "30000",
            "--heavy-work-cycles",
            "60000",
        ]);
    }
    let mut c = Child::spawn("load-sweep", cmd, &ctx.logs(E, id)).map_err(|e| (e, vec![]))?;
    let command = c.command.clone();
    let limit = ctx.timeout(Duration::from_secs(if ctx.quick { 60 } else { 150 }));
    let err = |e: String| (e, vec![command.clone()]);
    let Some(st) = c.wait_timeout(limit) else {
        c.stop(Duration::from_secs(3));
        return Err(err(format!(
            "pmdt-load-sweep timed out after {:.0} s",
            limit.as_secs_f64()
        )));
    };
    if !st.success() {
        return Err(err(format!(
            "pmdt-load-sweep exited ({st}): {}",
            c.last_error_line()
        )));
    }
    let text = std::fs::read_to_string(dir.join("sweep.json")).map_err(|e| {
        err(format!(
            "cannot read {}: {e}",
            dir.join("sweep.json").display()
        ))
    })?;
    let v = last_json(&text).ok_or_else(|| err("sweep.json does not parse".into()))?;
    Ok((v, command))
}

/// The metrics its table shows beside the primary figure.
pub const COLUMNS: &[&str] = &["rmse_pp", "slope", "r2"];

/// Runs it.
pub fn run(ctx: &Ctx, m: &Machine) -> Report {
    const E: &str = "seed004";
    let mut r = Report::new(
        E,
        "load estimators vs theoretical load (pmdt-load-sweep)",
        m,
        ctx.quick,
        ctx.repeat,
    );
    r.columns(COLUMNS);
    // One sweep per repeat; every cell reads the same runs.
    let runs: Vec<SweepRun> = (0..ctx.repeat.max(1)).map(|i| sweep(ctx, i)).collect();
    let pick = |i: usize| runs[i].clone();
    r.cells.push(
        CellSpec::new("capacity", "capacity_mpps").run(ctx.repeat, |i| {
            let (v, cmd) = pick(i)?;
            let mut s = Sample {
                commands: vec![cmd],
                ..Default::default()
            };
            s.set(
                "capacity_mpps",
                num(&v, "capacity_pps").unwrap_or(0.0) / 1e6,
            );
            if let Some(l) = num(&v, "ramp.lead_time_s") {
                s.set("warning_lead_s", l);
            }
            s.set("false_alarms", num(&v, "false_alarms").unwrap_or(0.0));
            Ok(s)
        }),
    );
    let methods: Vec<String> = runs
        .iter()
        .flatten()
        .next()
        .and_then(|(v, _)| v.get("accuracy").and_then(Value::as_array).cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|a| a.get("method").and_then(Value::as_str).map(String::from))
        .collect();
    for method in methods {
        r.cells.push(
            CellSpec::new(format!("accuracy-{}", slug(&method)), "max_abs_error_pp")
                .param("method", method.as_str())
                .run(ctx.repeat, |i| {
                    let (v, cmd) = pick(i)?;
                    let a = v
                        .get("accuracy")
                        .and_then(Value::as_array)
                        .and_then(|l| {
                            l.iter()
                                .find(|a| a.get("method").and_then(Value::as_str) == Some(&method))
                        })
                        .ok_or_else(|| (format!("no accuracy for {method}"), vec![cmd.clone()]))?;
                    let mut s = Sample {
                        commands: vec![cmd],
                        ..Default::default()
                    };
                    for k in ["max_abs_error_pp", "rmse_pp", "slope", "r2"] {
                        if let Some(x) = num(a, k) {
                            s.set(k, x);
                        }
                    }
                    Ok(s)
                }),
        );
    }
    if let Some(Err((e, _))) = runs.first() {
        r.notes.push(format!("pmdt-load-sweep failed: {e}"));
    }
    r.references = vec!["seed 004: load estimators up to ~15 percentage points off linear (54.8% estimated at 40% theoretical load).".into()];
    r.notes.push(
        "pmdt-load-sweep's own sweep.{csv,json,md,png} are in seed004-sweep/ beside this file."
            .into(),
    );
    r
}

/// `method 1 (non-empty iterations)` → `method-1-non-empty-iterations`.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}
