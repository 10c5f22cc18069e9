//! The acceptance targets an experiment's figures answer to, and how many of
//! each cell's runs met them: a cell's median can meet a target its worst run
//! misses, and the runs that miss are the ones to read.

use std::fmt::Write;

use crate::cell::{fmt_num, Cell};

/// Which side of its bound a figure must fall on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// At most this.
    AtMost(f64),
    /// At least this.
    AtLeast(f64),
}

impl Bound {
    /// Whether `v` meets the bound.
    pub fn met(self, v: f64) -> bool {
        match self {
            Bound::AtMost(b) => v <= b,
            Bound::AtLeast(b) => v >= b,
        }
    }

    fn text(self) -> String {
        match self {
            Bound::AtMost(b) => format!("≤ {b}"),
            Bound::AtLeast(b) => format!("≥ {b}"),
        }
    }
}

/// A target: cells whose name contains `cells` must keep `metric` within `bound`
/// in every run.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// A part of the names of the cells it applies to.
    pub cells: &'static str,
    /// The metric it bounds.
    pub metric: &'static str,
    /// The bound.
    pub bound: Bound,
    /// What it means, in words.
    pub what: &'static str,
}

/// A markdown table of `targets` over `cells`: per cell and target it answers to, the metric's
/// runs (lowest, median, highest) and how many of the cell's runs met the bound.
/// A run without the figure (a rise never found) missed it. `None` when no cell
/// is bounded.
pub fn table(targets: &[Target], cells: &[Cell]) -> Option<String> {
    let mut rows = String::new();
    for c in cells.iter().filter(|c| !c.failed()) {
        for t in targets.iter().filter(|t| c.name.contains(t.cells)) {
            let runs = c.runs.max(1);
            let (low, mid, high, met) = match c.metrics.get(t.metric) {
                Some(st) => (
                    fmt_num(st.min),
                    fmt_num(st.median),
                    fmt_num(st.max),
                    st.runs.iter().filter(|v| t.bound.met(**v)).count(),
                ),
                None => ("–".into(), "–".into(), "–".into(), 0),
            };
            let _ = writeln!(
                rows,
                "| {} | {} ({} {}) | {low} | {mid} | {high} | {met} of {runs} |",
                c.name,
                t.what,
                t.metric,
                t.bound.text()
            );
        }
    }
    if rows.is_empty() {
        return None;
    }
    Some(format!(
        "| cell | target | lowest | median | highest | runs that met it |\n|---|---|---:|---:|---:|---:|\n{rows}"
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::cell::Stat;

    fn cell(name: &str, runs: usize, metric: &str, values: &[f64]) -> Cell {
        let mut metrics = BTreeMap::new();
        if !values.is_empty() {
            metrics.insert(metric.to_string(), Stat::of(values.to_vec()));
        }
        Cell::measured(name, metric, metrics, runs)
    }

    const RISE: Target = Target {
        cells: "drop-recover",
        metric: "up_s",
        bound: Bound::AtMost(2.0),
        what: "the rise found within 2 s",
    };

    #[test]
    fn runs_are_counted_against_the_bound_and_a_missing_figure_is_a_miss() {
        // Three runs: two found the rise (one late), one never did.
        let cells = [
            cell("bbr-drop-recover-rtt40", 3, "up_s", &[0.7, 2.5]),
            cell("bbr-share-4-flows-rtt40", 3, "jain", &[0.99, 0.99, 0.99]),
        ];
        let t = table(&[RISE], &cells).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3, "{t}");
        assert_eq!(
            lines[2],
            "| bbr-drop-recover-rtt40 | the rise found within 2 s (up_s ≤ 2) | 0.7000 | 1.60 | 2.50 | 1 of 3 |"
        );
    }

    #[test]
    fn a_lower_bound_and_a_cell_without_the_figure() {
        let jain = Target {
            cells: "share",
            metric: "jain",
            bound: Bound::AtLeast(0.95),
            what: "Jain's index",
        };
        let cells = [
            cell("bbr-share-4-flows-rtt40", 2, "jain", &[0.96, 0.94]),
            cell("bbr-share-4-flows-joining-rtt40", 2, "jain", &[]),
        ];
        let t = table(&[jain], &cells).unwrap();
        assert!(t.contains("| 1 of 2 |"), "{t}");
        assert!(t.contains("| – | – | – | 0 of 2 |"), "{t}");
        assert!(table(&[RISE], &cells).is_none());
    }
}
