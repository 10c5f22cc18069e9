//! `pmdt-bench merge`: one report per experiment from the reports of several
//! results directories, for a grid whose rows were measured by separate runs
//! (the loss grid's controllers at three runs each take two hours: one run per
//! controller fits a session). A cell measured again by a later directory
//! replaces the earlier one in place; new cells follow in their run's order.
//! The merged report names every run it took cells from (command line, machine,
//! revision, runs per cell), so no figure loses its provenance.

use std::path::{Path, PathBuf};

use crate::cell::Cell;
use crate::report::{Part, Ratio, Report};

/// Merges the reports of `dirs` (in order) into `out`, one report per
/// experiment found in any of them; returns the experiments written.
pub fn merge(dirs: &[PathBuf], out: &Path, invocation: &str) -> Result<Vec<String>, String> {
    for d in dirs {
        if !d.is_dir() {
            return Err(format!("{} is not a results directory", d.display()));
        }
    }
    let mut written = Vec::new();
    for name in crate::readme::ORDER {
        let mut reports = Vec::new();
        for d in dirs {
            reports.extend(crate::report::read::<Report>(d, name)?);
        }
        if reports.is_empty() {
            continue;
        }
        let mut merged = merged(name, reports);
        merged.invocation = invocation.to_string();
        merged.write(out)?;
        written.push(name.to_string());
    }
    if written.is_empty() {
        return Err(format!(
            "no pmdt-bench reports in {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(written)
}

/// The runs a report's cells come from: its own parts if it was merged
/// already, else the one run it is.
fn runs_of(r: &Report) -> Vec<Part> {
    if !r.parts.is_empty() {
        return r.parts.clone();
    }
    vec![Part {
        invocation: r.invocation.clone(),
        machine: r.machine.clone(),
        repeat: r.repeat,
        quick: r.quick,
        cells: r.cells.iter().map(|c| c.name.clone()).collect(),
    }]
}

/// `reports` (in the order given) as one report of `experiment`. Title, notes
/// and references are the newest report's, the one whose run started last (the
/// code that wrote them last; of two that started together, the later given),
/// whichever order a directory's cells take precedence in; each ratio is as its
/// own run computed it, a later run's replacing an earlier one of the same name.
fn merged(experiment: &str, reports: Vec<Report>) -> Report {
    let mut cells: Vec<Cell> = Vec::new();
    // The run (index into `runs`) each of `cells` comes from.
    let mut origin: Vec<usize> = Vec::new();
    let mut runs: Vec<Part> = Vec::new();
    let mut ratios: Vec<Ratio> = Vec::new();
    let mut newest = None;
    for r in reports {
        for run in runs_of(&r) {
            for name in &run.cells {
                let Some(c) = r.cells.iter().find(|c| &c.name == name) else {
                    continue;
                };
                match cells.iter().position(|x| &x.name == name) {
                    Some(i) => {
                        cells[i] = c.clone();
                        origin[i] = runs.len();
                    }
                    None => {
                        cells.push(c.clone());
                        origin.push(runs.len());
                    }
                }
            }
            runs.push(run);
        }
        for x in &r.ratios {
            ratios.retain(|y| y.name != x.name);
            ratios.push(x.clone());
        }
        // RFC 3339 times in UTC: their text sorts as the times do.
        if newest
            .as_ref()
            .is_none_or(|n: &Report| r.machine.started >= n.machine.started)
        {
            newest = Some(r);
        }
    }
    let newest = newest.expect("merged is called with at least one report");
    // Each run keeps the cells still taken from it; runs left with none go.
    let parts: Vec<Part> = runs
        .into_iter()
        .enumerate()
        .filter_map(|(i, mut p)| {
            p.cells = cells
                .iter()
                .zip(&origin)
                .filter(|(_, &o)| o == i)
                .map(|(c, _)| c.name.clone())
                .collect();
            (!p.cells.is_empty()).then_some(p)
        })
        .collect();
    let mut r = Report::new(
        experiment,
        &newest.title,
        &newest.machine,
        parts.iter().any(|p| p.quick),
        parts.iter().map(|p| p.repeat).min().unwrap_or(1),
    );
    r.columns(crate::exp::columns(experiment));
    r.cells = cells;
    r.ratios = ratios;
    r.references = newest.references;
    r.notes = newest.notes;
    r.parts = parts;
    r
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::cell::Stat;
    use crate::machine::Machine;

    fn cell(name: &str, figure: f64, runs: usize) -> Cell {
        let mut metrics = BTreeMap::new();
        metrics.insert("of_link_pct".to_string(), Stat::of(vec![figure; runs]));
        let mut c = Cell::measured(name, "of_link_pct", metrics, runs);
        c.commands = vec![format!("pmdt-send # {name}")];
        c
    }

    fn report(invocation: &str, git: &str, repeat: usize, cells: &[(&str, f64)]) -> Report {
        let mut machine = Machine::detect();
        machine.git = git.into();
        let mut r = Report::new("loss", "goodput vs loss", &machine, false, repeat);
        r.invocation = invocation.into();
        r.cells = cells.iter().map(|&(n, f)| cell(n, f, repeat)).collect();
        r
    }

    fn dir(tag: &str, r: &Report) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pmdt-bench-merge-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        r.write(&d).unwrap();
        d
    }

    /// A later run's cell replaces the earlier one in place, new cells follow,
    /// and every run the merged report takes cells from is named with its
    /// revision and its runs per cell; a run left with no cell is not.
    #[test]
    fn a_later_run_replaces_its_cells_and_every_source_is_named() {
        let one = report(
            "bench --repeat 1 loss",
            "aaa",
            1,
            &[("bbr-a", 80.0), ("bbr-b", 81.0), ("newreno-a", 5.0)],
        );
        let two = report(
            "bench --only bbr- loss",
            "bbb",
            3,
            &[("bbr-a", 90.0), ("bbr-b", 91.0)],
        );
        let three = report("bench --only cubic- loss", "ccc", 3, &[("cubic-a", 6.0)]);
        let gone = report(
            "bench --only newreno- loss",
            "ddd",
            3,
            &[("newreno-a", 4.0)],
        );
        let dirs = [
            dir("one", &one),
            dir("two", &two),
            dir("gone", &gone),
            dir("three", &three),
        ];
        let out = std::env::temp_dir().join(format!("pmdt-bench-merge-{}-out", std::process::id()));
        let written = merge(&dirs, &out, "pmdt-bench merge …").unwrap();
        assert_eq!(written, ["loss"]);
        let m: Report =
            serde_json::from_str(&std::fs::read_to_string(out.join("loss.json")).unwrap()).unwrap();
        let names: Vec<&str> = m.cells.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["bbr-a", "bbr-b", "newreno-a", "cubic-a"]);
        let fig = |n: &str| {
            m.cells
                .iter()
                .find(|c| c.name == n)
                .unwrap()
                .get("of_link_pct")
        };
        assert_eq!(fig("bbr-a"), Some(90.0));
        assert_eq!(fig("newreno-a"), Some(4.0));
        let parts: Vec<(&str, usize, Vec<&str>)> = m
            .parts
            .iter()
            .map(|p| {
                (
                    p.machine.git.as_str(),
                    p.repeat,
                    p.cells.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            parts,
            [
                ("bbb", 3, vec!["bbr-a", "bbr-b"]),
                ("ddd", 3, vec!["newreno-a"]),
                ("ccc", 3, vec!["cubic-a"]),
            ]
        );
        assert_eq!(m.invocation, "pmdt-bench merge …");
        // The table says where each row comes from, and keeps the columns.
        let md = std::fs::read_to_string(out.join("loss.md")).unwrap();
        assert!(
            md.contains("2 cells (bbr-a … bbr-b): `bench --only bbr- loss`"),
            "{md}"
        );
        assert!(md.contains("git bbb"), "{md}");
        assert!(md.contains("| steady_pct |"), "{md}");
        assert!(!md.contains("bench --repeat 1 loss"), "{md}");
        // A merged report merges again without losing its sources.
        let again = merge(std::slice::from_ref(&out), &out, "again").unwrap();
        assert_eq!(again, ["loss"]);
        let m2: Report =
            serde_json::from_str(&std::fs::read_to_string(out.join("loss.json")).unwrap()).unwrap();
        assert_eq!(m2.parts.len(), 3);
        for d in dirs.iter().chain([&out]) {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    /// The notes (what the code says about its cells, e.g. a new row's) are the
    /// run's that started last, even when an older run is given after it for
    /// its cells to take precedence.
    #[test]
    fn the_notes_are_the_latest_runs_whatever_the_order() {
        let mut newer = report(
            "bench --only bbr-jumbo loss",
            "new",
            2,
            &[("bbr-jumbo-a", 97.0)],
        );
        newer.machine.started = "2026-12-02T06:03:09Z".into();
        newer.notes = vec!["bbr-jumbo: 9000-byte frames".into()];
        let mut older = report("bench --only bbr-1 loss", "old", 2, &[("bbr-a", 93.0)]);
        older.machine.started = "2026-12-02T04:05:44Z".into();
        older.notes = vec!["no jumbo row yet".into()];
        let dirs = [dir("newer", &newer), dir("older", &older)];
        let out =
            std::env::temp_dir().join(format!("pmdt-bench-merge-{}-notes", std::process::id()));
        merge(&dirs, &out, "pmdt-bench merge …").unwrap();
        let m: Report =
            serde_json::from_str(&std::fs::read_to_string(out.join("loss.json")).unwrap()).unwrap();
        assert_eq!(m.notes, ["bbr-jumbo: 9000-byte frames"]);
        let names: Vec<&str> = m.cells.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["bbr-jumbo-a", "bbr-a"]);
        for d in dirs.iter().chain([&out]) {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    #[test]
    fn a_directory_without_reports_is_an_error() {
        let d = std::env::temp_dir().join(format!("pmdt-bench-merge-{}-empty", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let e = merge(std::slice::from_ref(&d), &d, "x").unwrap_err();
        assert!(e.contains("no pmdt-bench reports"), "{e}");
        let e = merge(&[d.join("missing")], &d, "x").unwrap_err();
        assert!(e.contains("is not a results directory"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
