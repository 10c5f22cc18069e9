//! A cell's runs told apart by the machine's state during them (the share of
//! each run's round-trip measurements in the slow state, see
//! [`state_watch`](crate::state_watch)), so two cells are compared state for
//! state rather than by how many of their runs each state happened to take.

use std::fmt::Write;

use crate::cell::{fmt_num, Cell, Stat, SLOW_STATE_SHARE};

/// A run with more than this share of its measurements in the slow state is a
/// slow-state run.
const MOSTLY: f64 = 0.5;

/// One cell's primary metric by state.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// Runs with no measurement in the slow state.
    pub fast: Vec<f64>,
    /// Runs with more than half of them in the slow state.
    pub slow: Vec<f64>,
    /// The others.
    pub mixed: Vec<f64>,
}

/// The cell's primary metric split by state; None where a run has no share
/// (no measurement during it) or the two do not line up.
pub fn split(c: &Cell) -> Option<Split> {
    let primary = &c.metrics.get(&c.primary)?.runs;
    let shares = &c.metrics.get(SLOW_STATE_SHARE)?.runs;
    if primary.len() != shares.len() || primary.is_empty() {
        return None;
    }
    let mut s = Split {
        fast: Vec::new(),
        slow: Vec::new(),
        mixed: Vec::new(),
    };
    for (&v, &share) in primary.iter().zip(shares) {
        if share == 0.0 {
            s.fast.push(v);
        } else if share > MOSTLY {
            s.slow.push(v);
        } else {
            s.mixed.push(v);
        }
    }
    Some(s)
}

/// `median (n runs)`, or `–`.
fn figure(v: &[f64]) -> String {
    if v.is_empty() {
        "–".into()
    } else {
        format!("{} ({})", fmt_num(Stat::of(v.to_vec()).median), v.len())
    }
}

/// The report's section: each cell's primary metric in the fast state, the
/// slow state and runs that had both. None when no cell could be split or the
/// machine was in one state throughout.
pub fn section(cells: &[Cell]) -> Option<String> {
    let rows: Vec<(&Cell, Split)> = cells
        .iter()
        .filter_map(|c| split(c).map(|s| (c, s)))
        .collect();
    if rows
        .iter()
        .all(|(_, s)| s.slow.is_empty() && s.mixed.is_empty())
    {
        return None;
    }
    let mut s = String::from(
        "\n## By the machine's state\n\n\
         Median of each cell's leading metric over its runs in each state (runs in \
         brackets). The round trip is measured at the start of each run and every \
         second of it; a run is in the slow state where more than half of those \
         measurements are over twice the fastest, in the fast state where none \
         is.\n\n\
         | cell | metric | fast state | slow state | both |\n|---|---|---|---|---|\n",
    );
    for (c, sp) in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            c.name,
            c.primary,
            figure(&sp.fast),
            figure(&sp.slow),
            figure(&sp.mixed)
        );
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn cell(name: &str, gbps: &[f64], shares: &[f64]) -> Cell {
        let mut metrics = BTreeMap::new();
        metrics.insert("goodput_gbps".to_string(), Stat::of(gbps.to_vec()));
        if !shares.is_empty() {
            metrics.insert(SLOW_STATE_SHARE.to_string(), Stat::of(shares.to_vec()));
        }
        Cell::measured(name, "goodput_gbps", metrics, gbps.len())
    }

    #[test]
    fn runs_are_split_by_their_share_of_the_slow_state() {
        let c = cell("pmdt", &[22.0, 9.5, 15.0, 23.0], &[0.0, 1.0, 0.25, 0.0]);
        assert_eq!(
            split(&c),
            Some(Split {
                fast: vec![22.0, 23.0],
                slow: vec![9.5],
                mixed: vec![15.0],
            })
        );
        // Shares that do not line up with the runs, or none at all: no split.
        assert_eq!(split(&cell("short", &[1.0, 2.0], &[0.0])), None);
        assert_eq!(split(&cell("unwatched", &[1.0], &[])), None);
    }

    #[test]
    fn the_section_compares_cells_state_for_state() {
        let cells = vec![
            cell("pmdt", &[22.0, 9.5, 23.0], &[0.0, 1.0, 0.0]),
            cell("tcp", &[21.0, 14.0], &[0.0, 0.75]),
        ];
        let s = section(&cells).unwrap();
        assert!(
            s.contains("| pmdt | goodput_gbps | 22.50 (2) | 9.50 (1) | – |"),
            "{s}"
        );
        assert!(
            s.contains("| tcp | goodput_gbps | 21.00 (1) | 14.00 (1) | – |"),
            "{s}"
        );
        // One state throughout: nothing to tell apart.
        let calm = vec![cell("pmdt", &[22.0, 23.0], &[0.0, 0.0])];
        assert_eq!(section(&calm), None);
    }
}
