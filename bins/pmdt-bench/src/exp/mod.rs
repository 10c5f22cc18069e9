//! The experiments, one module each. Each builds a [`Report`](crate::report::Report) from cells; `main`
//! writes it.

pub mod adapt;
pub mod flows;
pub mod loss;
pub mod multi;
pub mod peers;
pub mod seed000;
pub mod seed002;
pub mod seed003;
pub mod seed004;

use std::time::Duration;

use crate::cell::{Cell, CellSpec, Sample};
use crate::ctx::Ctx;
use crate::pmdt_pair::{run_pair, sample_of, PairResult, PairSpec};

/// The tools an experiment needs: pmdt's own (in the bin dir), peers (on PATH).
pub type Tools = (&'static [&'static str], &'static [&'static str]);

/// The metrics an experiment's table shows beside its primary figure (its
/// module's `COLUMNS`), by experiment name; none for a name it does not know.
pub fn columns(experiment: &str) -> &'static [&'static str] {
    match experiment {
        "peers" => peers::COLUMNS,
        "seed000" => seed000::COLUMNS,
        "seed002" => seed002::COLUMNS,
        "seed003" => seed003::COLUMNS,
        "seed004" => seed004::COLUMNS,
        "loss" => loss::COLUMNS,
        "adapt" => adapt::COLUMNS,
        "flows" => flows::COLUMNS,
        "multi" => multi::COLUMNS,
        _ => &[],
    }
}

/// The acceptance targets an experiment's cells answer to (its module's
/// `TARGETS`), by experiment name; none for the others.
pub fn targets(experiment: &str) -> &'static [crate::targets::Target] {
    match experiment {
        "adapt" => adapt::TARGETS,
        _ => &[],
    }
}

/// Runs a pmdt pair `ctx.repeat` times as one cell; `extra` adds figures.
pub fn pmdt_cell(
    ctx: &Ctx,
    experiment: &str,
    spec: CellSpec,
    pair: &PairSpec,
    extra: impl Fn(&PairResult, &mut Sample),
) -> Cell {
    spec.run(ctx.repeat, |_| {
        let r = run_pair(ctx, experiment, pair)?;
        let mut s = sample_of(&r);
        extra(&r, &mut s);
        Ok(s)
    })
}

/// As [`pmdt_cell`], each run after `before` (a pair whose transfer the
/// measured one follows, with the cache file it saves its path to, deleted
/// first so each run starts from that transfer alone). Its commands are the
/// run's too; a failure of it fails the run.
pub fn pmdt_cell_after(
    ctx: &Ctx,
    experiment: &str,
    before: Option<(PairSpec, std::path::PathBuf)>,
    spec: CellSpec,
    pair: &PairSpec,
    extra: impl Fn(&PairResult, &mut Sample),
) -> Cell {
    spec.run(ctx.repeat, |_| {
        let mut commands = Vec::new();
        if let Some((first, cache)) = &before {
            let _ = std::fs::remove_file(cache);
            let r = run_pair(ctx, experiment, first)?;
            commands.extend(r.commands);
        }
        let r = run_pair(ctx, experiment, pair)?;
        let mut s = sample_of(&r);
        commands.append(&mut s.commands);
        s.commands = commands;
        extra(&r, &mut s);
        Ok(s)
    })
}

/// Seconds a transfer of `bytes` should take at a modest 0.5 Gbit/s (for timeouts).
pub fn expect_bytes(bytes: u64) -> Duration {
    Duration::from_secs_f64(bytes as f64 * 16.0 / 1e9)
}

/// `n` as a size argument in bytes.
pub fn bytes_arg(n: u64) -> String {
    n.to_string()
}

/// Seconds as an argument.
pub fn secs_arg(s: f64) -> String {
    format!("{s}")
}
