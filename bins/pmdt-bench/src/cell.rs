//! One measured cell of an experiment: its parameters, each metric's median and
//! spread over the repeats, the commands that produced it, and whether it failed.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core_latency;
use crate::state_watch::{self, StateWatch, FASTEST};

/// The metric every run carries: the core-to-core round trip around it, in ns
/// (see [`core_latency`]).
pub const CORE_ROUND_TRIP: &str = "core_round_trip_ns";

/// The metric every run carries where the round trip can be measured during
/// it: the share of its measurements in the machine's slow state (see
/// [`state_watch`]).
pub const SLOW_STATE_SHARE: &str = "slow_state_share";

/// One run's figures (metric name → value) and the commands behind them.
#[derive(Debug, Default, Clone)]
pub struct Sample {
    /// Metric name → value (units are in the name: `_gbps`, `_us`, `_s`, ...).
    pub metrics: BTreeMap<String, f64>,
    /// Commands run, in order.
    pub commands: Vec<String>,
    /// Extra facts worth keeping (e.g. a timed-out run's partial figures).
    pub notes: Vec<String>,
}

impl Sample {
    /// Sets a metric.
    pub fn set(&mut self, name: &str, v: f64) -> &mut Self {
        self.metrics.insert(name.into(), v);
        self
    }
}

/// A metric over the repeats.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stat {
    /// Median of the runs.
    pub median: f64,
    /// Smallest run.
    pub min: f64,
    /// Largest run.
    pub max: f64,
    /// Every run's value.
    pub runs: Vec<f64>,
}

impl Stat {
    /// The median, extremes and runs of `v`.
    pub fn of(mut v: Vec<f64>) -> Stat {
        let runs = v.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        let median = if n == 0 {
            f64::NAN
        } else if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Stat {
            median,
            min: v.first().copied().unwrap_or(f64::NAN),
            max: v.last().copied().unwrap_or(f64::NAN),
            runs,
        }
    }

    /// Spread as (max − min) / median, in percent.
    pub fn spread_pct(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / self.median.abs() * 100.0
        }
    }
}

/// A cell of an experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// Short unique name within the experiment.
    pub name: String,
    /// Parameters (flow size, window, loss, ...).
    pub params: BTreeMap<String, Value>,
    /// The metric the table and plot lead with.
    pub primary: String,
    /// Metric → median and spread over the successful runs.
    pub metrics: BTreeMap<String, Stat>,
    /// `ok`, `partial` (some runs failed), `failed`, or `skipped` (not selected by
    /// `--only`; such cells are left out of the report).
    pub status: String,
    /// Why runs failed (one entry per failed run).
    pub errors: Vec<String>,
    /// Runs attempted.
    pub runs: usize,
    /// Commands of the first run (repeats differ only in file prefixes, sockets
    /// and ports).
    pub commands: Vec<String>,
    /// Notes from the runs.
    pub notes: Vec<String>,
}

impl Cell {
    /// A cell that ran `runs` times with these metrics, all well (tests).
    #[cfg(test)]
    pub fn measured(
        name: &str,
        primary: &str,
        metrics: BTreeMap<String, Stat>,
        runs: usize,
    ) -> Cell {
        Cell {
            name: name.into(),
            params: BTreeMap::new(),
            primary: primary.into(),
            metrics,
            status: "ok".into(),
            errors: Vec::new(),
            runs,
            commands: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// A metric's median.
    pub fn get(&self, metric: &str) -> Option<f64> {
        self.metrics.get(metric).map(|s| s.median)
    }

    /// True when no run succeeded.
    pub fn failed(&self) -> bool {
        self.status == "failed"
    }

    /// One line for the terminal.
    pub fn summary_line(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"')))
            .collect();
        let head = format!("{:<28} {:<40}", self.name, params.join(" "));
        match (self.status.as_str(), self.metrics.get(&self.primary)) {
            ("failed", _) | (_, None) => format!(
                "{head} FAILED: {}",
                self.errors
                    .first()
                    .map(String::as_str)
                    .unwrap_or("no figure")
            ),
            (st, Some(s)) => format!(
                "{head} {} = {} (n={}, spread {:.0}%){}",
                self.primary,
                fmt_num(s.median),
                s.runs.len(),
                s.spread_pct(),
                if st == "partial" {
                    format!(
                        " PARTIAL: {} of {} runs failed: {}",
                        self.errors.len(),
                        self.runs,
                        self.errors[0]
                    )
                } else {
                    String::new()
                }
            ),
        }
    }
}

/// A number with about 4 significant digits.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// `--only`: run only the cells whose name contains one of these.
static ONLY: OnceLock<Vec<String>> = OnceLock::new();

/// Restricts the run to cells whose name contains one of `patterns` (empty: all).
pub fn set_only(patterns: Vec<String>) {
    let _ = ONLY.set(patterns);
}

fn selected(name: &str) -> bool {
    ONLY.get()
        .is_none_or(|p| p.is_empty() || p.iter().any(|x| name.contains(x.as_str())))
}

/// Why a run failed, and the commands it ran.
pub type RunErr = (String, Vec<String>);

/// Builds a cell by running `run` `repeat` times.
pub struct CellSpec {
    /// Cell name.
    pub name: String,
    /// Parameters.
    pub params: BTreeMap<String, Value>,
    /// Primary metric.
    pub primary: String,
}

impl CellSpec {
    /// A spec with no parameters yet.
    pub fn new(name: impl Into<String>, primary: &str) -> Self {
        CellSpec {
            name: name.into(),
            params: BTreeMap::new(),
            primary: primary.into(),
        }
    }

    /// Adds a parameter.
    pub fn param(mut self, k: &str, v: impl Into<Value>) -> Self {
        self.params.insert(k.into(), v.into());
        self
    }

    /// Runs `run` `repeat` times (each run is its own set of processes) and folds
    /// the results. A run whose primary metric is missing or not above zero counts
    /// as failed: a cell never reads a silent zero.
    pub fn run(self, repeat: usize, mut run: impl FnMut(usize) -> Result<Sample, RunErr>) -> Cell {
        if !selected(&self.name) {
            return Cell {
                name: self.name,
                params: self.params,
                primary: self.primary,
                metrics: BTreeMap::new(),
                status: "skipped".into(),
                errors: Vec::new(),
                runs: 0,
                commands: Vec::new(),
                notes: Vec::new(),
            };
        }
        let mut samples = Vec::new();
        let mut errors = Vec::new();
        let mut commands = Vec::new();
        let mut notes = Vec::new();
        for i in 0..repeat.max(1) {
            let first = i == 0;
            let before = core_latency::round_trip_ns();
            let watch = StateWatch::start(core_latency::DURING_RUN, state_watch::PERIOD);
            let result = run(i);
            let during = watch.stop();
            let after = core_latency::round_trip_ns();
            for ns in before.into_iter().chain(after) {
                FASTEST.note(ns);
            }
            match result {
                Ok(mut s) => {
                    // The slowest around and during the run: a run that met the
                    // machine's slow state at any point is flagged.
                    let all = before
                        .into_iter()
                        .chain(after)
                        .chain(during.iter().copied());
                    if let Some(ns) = all.reduce(f64::max) {
                        s.set(CORE_ROUND_TRIP, ns);
                    }
                    let share = FASTEST
                        .get()
                        .and_then(|f| state_watch::slow_share(&during, f));
                    if let Some(share) = share {
                        s.set(SLOW_STATE_SHARE, share);
                    }
                    if first {
                        commands.extend(s.commands.iter().cloned());
                    }
                    notes.extend(s.notes.iter().cloned());
                    match s.metrics.get(&self.primary) {
                        Some(v) if v.is_finite() && *v > 0.0 => samples.push(s),
                        Some(v) => errors.push(format!("{} read {v}", self.primary)),
                        None => errors.push(format!("no {} in the output", self.primary)),
                    }
                }
                Err((e, cmds)) => {
                    if first {
                        commands.extend(cmds);
                    }
                    errors.push(e);
                }
            }
        }
        let mut metrics = BTreeMap::new();
        let names: std::collections::BTreeSet<&String> =
            samples.iter().flat_map(|s| s.metrics.keys()).collect();
        for n in names {
            let v: Vec<f64> = samples
                .iter()
                .filter_map(|s| s.metrics.get(n).copied())
                .collect();
            metrics.insert(n.clone(), Stat::of(v));
        }
        let status = if samples.is_empty() {
            "failed"
        } else if errors.is_empty() {
            "ok"
        } else {
            "partial"
        };
        let cell = Cell {
            name: self.name,
            params: self.params,
            primary: self.primary,
            metrics,
            status: status.into(),
            errors,
            runs: repeat.max(1),
            commands,
            notes,
        };
        println!("  {}", cell.summary_line());
        cell
    }
}
