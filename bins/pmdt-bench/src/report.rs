//! An experiment's results on disk: `<name>.json` (everything), `<name>.csv` (one
//! row per cell and metric), `<name>.md` (the table, notes on cells, ratios,
//! machine, commands) and `<name>.png` (the plot).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cell::{fmt_num, Cell, CORE_ROUND_TRIP};
use crate::machine::Machine;

/// What a ratio says of a cell left out by `--only`.
pub const NOT_RUN: &str = "not run (--only)";

/// A cell's notes the Markdown report lists (the JSON keeps them all).
const NOTES_PER_CELL: usize = 4;

/// A ratio pmdt/peer from cells of one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ratio {
    /// What is compared.
    pub name: String,
    /// The ratio, when both cells have a figure.
    pub value: Option<f64>,
    /// Why there is none.
    pub missing: Option<String>,
}

impl Ratio {
    /// `num`'s metric over `den`'s metric (cells by name).
    pub fn of(name: &str, cells: &[Cell], num: (&str, &str), den: (&str, &str)) -> Ratio {
        let find = |(c, m): (&str, &str)| {
            let cell = cells.iter().find(|x| x.name == c);
            match cell {
                None => Err(format!("no cell {c}")),
                Some(x) if x.status == "skipped" => Err(format!("{c} {NOT_RUN}")),
                Some(x) if x.failed() => Err(format!("{c} failed")),
                Some(x) => x.get(m).ok_or_else(|| format!("{c} has no {m}")),
            }
        };
        match (find(num), find(den)) {
            (Ok(a), Ok(b)) if b != 0.0 => Ratio {
                name: name.into(),
                value: Some(a / b),
                missing: None,
            },
            (a, b) => Ratio {
                name: name.into(),
                value: None,
                missing: Some(
                    [a.err(), b.err()]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            },
        }
    }

    /// `name: 0.53` or `name: n/a (why)`.
    pub fn line(&self) -> String {
        match self.value {
            Some(v) => format!("{}: {}", self.name, fmt_num(v)),
            None => format!(
                "{}: n/a ({})",
                self.name,
                self.missing.as_deref().unwrap_or("")
            ),
        }
    }
}

/// An experiment's results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// Experiment name (file stem).
    pub experiment: String,
    /// One-line title.
    pub title: String,
    /// Machine and revision.
    pub machine: Machine,
    /// The pmdt-bench command line that produced it.
    pub invocation: String,
    /// `--quick` run.
    pub quick: bool,
    /// Runs per cell.
    pub repeat: usize,
    /// The cells.
    pub cells: Vec<Cell>,
    /// Ratios pmdt/peer.
    pub ratios: Vec<Ratio>,
    /// Reference figures from the seeds and anchors, for comparison.
    pub references: Vec<String>,
    /// Notes on method (what each cell measures, known caveats).
    pub notes: Vec<String>,
    /// Metrics shown as table columns after the primary one.
    #[serde(skip)]
    pub columns: Vec<String>,
    /// The runs a merged report's cells come from (`pmdt-bench merge`); empty
    /// for a report of one run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
}

/// One pmdt-bench run whose cells a merged report holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Part {
    /// That run's command line.
    pub invocation: String,
    /// Its machine and revision.
    pub machine: Machine,
    /// Its runs per cell.
    pub repeat: usize,
    /// Whether it was a `--quick` run.
    pub quick: bool,
    /// The cells the merged report takes from it, in order.
    pub cells: Vec<String>,
}

impl Part {
    /// `24 cells (first … last)`.
    pub fn cells_text(&self) -> String {
        match self.cells.as_slice() {
            [] => "no cells".into(),
            [one] => format!("1 cell ({one})"),
            [first, .., last] => format!("{} cells ({first} … {last})", self.cells.len()),
        }
    }
}

impl Report {
    /// An empty report.
    pub fn new(
        experiment: &str,
        title: &str,
        machine: &Machine,
        quick: bool,
        repeat: usize,
    ) -> Self {
        Report {
            experiment: experiment.into(),
            title: title.into(),
            machine: machine.clone(),
            invocation: std::env::args().collect::<Vec<_>>().join(" "),
            quick,
            repeat,
            cells: Vec::new(),
            ratios: Vec::new(),
            references: Vec::new(),
            notes: Vec::new(),
            columns: Vec::new(),
            parts: Vec::new(),
        }
    }

    /// Sets the extra table columns.
    pub fn columns(&mut self, c: &[&str]) {
        self.columns = c.iter().map(|s| s.to_string()).collect();
    }

    /// Failed cells.
    pub fn failed(&self) -> usize {
        self.cells.iter().filter(|c| c.failed()).count()
    }

    /// Writes the four files into `dir` (the plot only warns when it fails); returns
    /// the paths written.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let p = |ext: &str| dir.join(format!("{}.{ext}", self.experiment));
        let write = |path: &PathBuf, s: String| {
            std::fs::write(path, s).map_err(|e| format!("cannot write {}: {e}", path.display()))
        };
        let json = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        write(&p("json"), json)?;
        write(&p("csv"), self.csv())?;
        write(&p("md"), self.markdown())?;
        let mut files = vec![p("json"), p("csv"), p("md")];
        // A plot that cannot be drawn (no fonts, say) costs the picture, not the data.
        match crate::plot::draw(&p("png"), self) {
            Ok(()) => files.push(p("png")),
            Err(e) => eprintln!(
                "pmdt-bench: warning: no plot {}: {e} (fonts-dejavu-core and libfontconfig1-dev: make setup)",
                p("png").display()
            ),
        }
        Ok(files)
    }

    fn csv(&self) -> String {
        let mut s =
            String::from("experiment,cell,params,metric,median,min,max,runs,status,error\n");
        let q = |v: &str| format!("\"{}\"", v.replace('"', "\"\""));
        for c in &self.cells {
            let params = params_text(c);
            let err = c.errors.first().cloned().unwrap_or_default();
            if c.metrics.is_empty() {
                let _ = writeln!(
                    s,
                    "{},{},{},{},,,,{},{},{}",
                    self.experiment,
                    q(&c.name),
                    q(&params),
                    c.primary,
                    c.runs,
                    c.status,
                    q(&err)
                );
            }
            for (m, st) in &c.metrics {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{},{}",
                    self.experiment,
                    q(&c.name),
                    q(&params),
                    m,
                    st.median,
                    st.min,
                    st.max,
                    st.runs.len(),
                    c.status,
                    q(&err)
                );
            }
        }
        s
    }

    fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# {}: {}\n", self.experiment, self.title);
        const QUICK: &str = " (--quick: tiny runs, a smoke test, not figures to quote)";
        if self.parts.is_empty() {
            let _ = writeln!(
                s,
                "Machine: {}.  \nRun: `{}`.  \nRuns per cell: {}{}. Figures are medians; spread is (max − min)/median over the runs.\n",
                self.machine.line(),
                self.invocation,
                self.repeat,
                if self.quick { QUICK } else { "" }
            );
        } else {
            let _ = writeln!(
                s,
                "Merged by `{}` from {} runs; figures are medians, spread is (max − min)/median over a cell's runs:\n",
                self.invocation,
                self.parts.len()
            );
            for p in &self.parts {
                let _ = writeln!(
                    s,
                    "- {}: `{}` on {}; {} run(s) per cell{}.",
                    p.cells_text(),
                    p.invocation,
                    p.machine.line(),
                    p.repeat,
                    if p.quick { QUICK } else { "" }
                );
            }
            s.push('\n');
        }
        let _ = write!(s, "| cell | parameters | figure | spread |");
        for c in &self.columns {
            let _ = write!(s, " {c} |");
        }
        let _ = writeln!(s, " status |");
        let _ = writeln!(
            s,
            "|---|---|---|---|{}---|",
            "---|".repeat(self.columns.len())
        );
        for c in &self.cells {
            let fig = match c.metrics.get(&c.primary) {
                Some(st) if !c.failed() => (
                    format!("{} {}", fmt_num(st.median), c.primary),
                    format!("{:.0}%", st.spread_pct()),
                ),
                _ => ("**failed**".to_string(), "".to_string()),
            };
            let _ = write!(
                s,
                "| {} | {} | {} | {} |",
                c.name,
                params_text(c),
                fig.0,
                fig.1
            );
            for col in &self.columns {
                let v = c.get(col).map(fmt_num).unwrap_or_else(|| "–".into());
                let _ = write!(s, " {v} |");
            }
            let status = match c.status.as_str() {
                "ok" => "ok".to_string(),
                st => format!("{st}: {}", c.errors.join("; ").replace('|', "/")),
            };
            let _ = writeln!(s, " {status} |");
        }
        if let Some(state) = self.machine_state() {
            let _ = writeln!(s, "\n{state}");
        }
        let noted: Vec<_> = self.cells.iter().filter(|c| !c.notes.is_empty()).collect();
        if !noted.is_empty() {
            // What the runs' figures do not show: a timed-out run's partial
            // figures, error lines the tools logged (`log_problems`).
            let _ = writeln!(s, "\n## Notes on cells\n");
            for c in noted {
                for n in c.notes.iter().take(NOTES_PER_CELL) {
                    let _ = writeln!(s, "- {}: {n}", c.name);
                }
                if c.notes.len() > NOTES_PER_CELL {
                    let more = c.notes.len() - NOTES_PER_CELL;
                    let _ = writeln!(s, "- {}: {more} more in the JSON", c.name);
                }
            }
        }
        if let Some(t) = crate::targets::table(crate::exp::targets(&self.experiment), &self.cells) {
            let _ = writeln!(s, "\n## Targets, run by run\n\n{t}");
        }
        if let Some(split) = crate::state_split::section(&self.cells) {
            s.push_str(&split);
        }
        if !self.ratios.is_empty() {
            let _ = writeln!(s, "\n## Ratios (one run, same pinning)\n");
            for r in &self.ratios {
                let _ = writeln!(s, "- {}", r.line());
            }
        }
        if !self.references.is_empty() {
            let _ = writeln!(s, "\n## Reference figures (other machines and papers)\n");
            for r in &self.references {
                let _ = writeln!(s, "- {r}");
            }
        }
        if !self.notes.is_empty() {
            let _ = writeln!(s, "\n## Method\n");
            for n in &self.notes {
                let _ = writeln!(s, "- {n}");
            }
        }
        let _ = writeln!(s, "\n## Commands\n\n```sh");
        for c in &self.cells {
            let _ = writeln!(s, "# {}", c.name);
            for cmd in &c.commands {
                let _ = writeln!(s, "{cmd}");
            }
        }
        let _ = writeln!(s, "```");
        s
    }

    /// What the core-to-core round trips around the runs say of the machine
    /// (see [`machine_state`]).
    pub fn machine_state(&self) -> Option<String> {
        let cells: Vec<(&str, Vec<f64>)> = self
            .cells
            .iter()
            .map(|c| {
                let runs = c.metrics.get(CORE_ROUND_TRIP).map(|st| st.runs.clone());
                (c.name.as_str(), runs.unwrap_or_default())
            })
            .collect();
        machine_state(&cells, usize::MAX)
    }
}

/// The report of `experiment` in the results directory `dir` (its
/// `<experiment>.json`), as `T`; None where the directory has none.
pub fn read<T: serde::de::DeserializeOwned>(
    dir: &Path,
    experiment: &str,
) -> Result<Option<T>, String> {
    let path = dir.join(format!("{experiment}.json"));
    let Ok(raw) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    serde_json::from_str(&raw)
        .map(Some)
        .map_err(|e| format!("{} is not a pmdt-bench report: {e}", path.display()))
}

/// What the core-to-core round trips around the runs of `cells` (name, round
/// trips in ns) say of the machine: the range, and the cells with a run at more
/// than twice the fastest, by name up to `names_up_to` of them, else counted.
/// None without round trips.
pub fn machine_state(cells: &[(&str, Vec<f64>)], names_up_to: usize) -> Option<String> {
    let all = cells.iter().flat_map(|(_, r)| r.iter().copied());
    let fastest = all.clone().reduce(f64::min)?;
    let slowest = all.reduce(f64::max)?;
    let slow: Vec<&str> = cells
        .iter()
        .filter(|(_, r)| {
            r.iter()
                .any(|&ns| ns > crate::state_watch::SLOW_FACTOR * fastest)
        })
        .map(|(name, _)| *name)
        .collect();
    let mut s = format!(
        "Core-to-core round trip around the runs (one cache line between the two \
         pinned CPUs; a virtual machine's vCPU placement moves it): {} to {} ns.",
        fmt_num(fastest),
        fmt_num(slowest)
    );
    if slow.len() > names_up_to {
        let _ = write!(
            s,
            " {} of the {} cells have a run at more than twice the fastest, whose \
             figures may come from the machine's slow state (the table names them).",
            slow.len(),
            cells.len()
        );
    } else if !slow.is_empty() {
        let _ = write!(
            s,
            " Cells with a run at more than twice the fastest, whose figures may \
             come from the machine's slow state: {}.",
            slow.join(", ")
        );
    }
    Some(s)
}

/// `k=v k=v` of a cell's parameters.
pub fn params_text(c: &Cell) -> String {
    c.params
        .iter()
        .map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"')))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::cell::Stat;

    fn cell(name: &str, round_trips: &[f64]) -> Cell {
        let mut metrics = BTreeMap::new();
        if !round_trips.is_empty() {
            metrics.insert(CORE_ROUND_TRIP.to_string(), Stat::of(round_trips.to_vec()));
        }
        Cell::measured(name, "goodput_gbps", metrics, round_trips.len())
    }

    fn report(cells: Vec<Cell>) -> Report {
        let mut r = Report::new("t", "test", &Machine::detect(), false, 3);
        r.cells = cells;
        r
    }

    /// The range of round trips, and the cells with a run at more than twice
    /// the fastest named; nothing to say without round trips.
    #[test]
    fn the_machine_state_names_the_cells_with_slow_runs() {
        let r = report(vec![
            cell("fast", &[88.0, 95.0, 101.0]),
            cell("straddled", &[90.0, 430.0, 92.0]),
            cell("unmeasured", &[]),
        ]);
        let s = r.machine_state().unwrap();
        assert!(s.contains("88.00 to 430.0 ns"), "{s}");
        assert!(s.ends_with("slow state: straddled."), "{s}");
        let r = report(vec![cell("fast", &[88.0, 120.0])]);
        assert!(!r.machine_state().unwrap().contains("slow state"));
        assert_eq!(report(vec![cell("unmeasured", &[])]).machine_state(), None);
        let cells = [("a", vec![100.0]), ("b", vec![300.0]), ("c", vec![400.0])];
        let brief = machine_state(&cells, 1).unwrap();
        assert!(
            brief.ends_with("2 of the 3 cells have a run at more than twice the fastest, whose figures may come from the machine's slow state (the table names them)."),
            "{brief}"
        );
    }

    /// Cells' notes (error lines the tools logged, say) are listed under the
    /// table, at most a few per cell; a report without any has no such section.
    #[test]
    fn cell_notes_are_listed_under_the_table() {
        let mut noisy = cell("noisy", &[]);
        noisy.notes = (1..=6)
            .map(|i| format!("pmdt-send logged {i} error or warning line(s)"))
            .collect();
        let md = report(vec![noisy, cell("quiet", &[])]).markdown();
        assert!(md.contains("## Notes on cells"), "{md}");
        assert!(md.contains("- noisy: pmdt-send logged 1 error or warning line(s)\n"));
        assert!(md.contains("- noisy: pmdt-send logged 4 error"));
        assert!(!md.contains("logged 5 error"), "{md}");
        assert!(md.contains("- noisy: 2 more in the JSON\n"), "{md}");
        assert!(!md.contains("- quiet:"), "{md}");
        let md = report(vec![cell("quiet", &[])]).markdown();
        assert!(!md.contains("Notes on cells"), "{md}");
    }
}
