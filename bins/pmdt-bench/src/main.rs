//! pmdt-bench: the one place pmdt's performance is measured. Runs the real tools
//! (pmdt-send, pmdt-recv, pmdt-wanem, pmdt-load-sweep) and their peers
//! (dpdk-testpmd, iperf3, sockperf, a quinn harness) as separate processes with
//! pinned cores, and writes JSON, CSV, a Markdown table and a PNG per experiment.

mod adaptation;
mod cell;
mod core_latency;
mod ctx;
mod exp;
mod flow_interval;
mod log_problems;
mod machine;
mod merge;
mod peer;
mod plot;
mod pmdt_pair;
mod proc;
mod queueing;
mod readme;
mod report;
mod state_split;
mod state_watch;
mod steady_state;
mod targets;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::ctx::Ctx;
use crate::machine::Machine;
use crate::report::Report;

/// Measure pmdt beside its peers and reproduce the seeds' experiments.
#[derive(Debug, Parser)]
#[command(name = "pmdt-bench", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    experiment: Experiment,
    /// Results directory.
    #[arg(long, global = true, default_value = "docs/bench/latest")]
    out: PathBuf,
    /// Tiny runs (a CI smoke test: the figures mean nothing).
    #[arg(long, global = true)]
    quick: bool,
    /// Runs per cell (median and spread); default 1 with --quick, else 3.
    #[arg(long, global = true, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: Option<u32>,
    /// Directory of pmdt-send, pmdt-recv, pmdt-wanem, pmdt-load-sweep (default:
    /// $CARGO_TARGET_DIR/release, else target/release).
    #[arg(long, global = true, env = "PMDT_BIN_DIR")]
    bin_dir: Option<PathBuf>,
    /// Run only the cells whose name contains this (repeatable), e.g. `--only raw-memif`.
    #[arg(long, global = true, value_name = "PATTERN")]
    only: Vec<String>,
    /// Upper bound on one run of a cell, seconds (default: from its size).
    #[arg(long, global = true, value_parser = parse_secs)]
    cell_timeout: Option<f64>,
    /// Whose CPU pmdt-wanem shares: the receiver's (CPU 0) or the sender's
    /// (CPU 1, the placement until session 89).
    #[arg(long, global = true, value_enum, default_value_t)]
    wanem_beside: ctx::WanemBeside,
    /// The README whose Performance section `readme` rewrites.
    #[arg(long, global = true, default_value = "README.md")]
    readme: PathBuf,
    /// More log output (-vv debug; see `pmdt_log`).
    #[arg(short = 'v', long = "verbose", global = true, action = clap::ArgAction::Count)]
    verbose: u8,
}

fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

/// The experiments.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
enum Experiment {
    /// Raw memif, pmdt (memif 1500/9000, kernel UDP), iperf3 TCP/UDP, QUIC, sockperf.
    Peers,
    /// Seed 000: completion and latency vs flow size, bandwidth vs window, 1..64 flows.
    Seed000,
    /// Seed 002: N concurrent clients, DPDK vs kernel UDP.
    Seed002,
    /// Seed 003: raw DPDK vs transport on DPDK vs transport on kernel UDP.
    Seed003,
    /// Seed 004: pmdt-load-sweep, folded in.
    Seed004,
    /// Goodput vs loss × RTT × controller through pmdt-wanem.
    Loss,
    /// A bottleneck that drops and recovers under a transfer; four flows sharing one.
    Adapt,
    /// 1, 2, 16, 256, 1000 flows with default settings.
    Flows,
    /// One sender to 1..16 receivers (`pmdt-send --multi`), kernel UDP.
    Multi,
    /// Every experiment above, in turn.
    All,
    /// Rewrites the README's Performance section (between its pmdt-bench markers)
    /// from the reports in --out.
    Readme,
    /// Merges the reports of several results directories into --out, one report
    /// per experiment: a cell of a later directory replaces the same cell of an
    /// earlier one; the merged report names each run its cells come from.
    Merge {
        /// Results directories, oldest first.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<std::path::PathBuf>,
    },
}

type Runner = fn(&Ctx, &Machine) -> Report;

/// One experiment to run: its name, its runner, the tools it needs.
type Step = (&'static str, Runner, exp::Tools);

impl Experiment {
    fn plan(&self) -> Vec<Step> {
        let all: [(Experiment, Step); 9] = [
            (
                Experiment::Peers,
                ("peers", exp::peers::run, exp::peers::TOOLS),
            ),
            (
                Experiment::Seed000,
                ("seed000", exp::seed000::run, exp::seed000::TOOLS),
            ),
            (
                Experiment::Seed002,
                ("seed002", exp::seed002::run, exp::seed002::TOOLS),
            ),
            (
                Experiment::Seed003,
                ("seed003", exp::seed003::run, exp::seed003::TOOLS),
            ),
            (
                Experiment::Seed004,
                ("seed004", exp::seed004::run, exp::seed004::TOOLS),
            ),
            (Experiment::Loss, ("loss", exp::loss::run, exp::loss::TOOLS)),
            (
                Experiment::Adapt,
                ("adapt", exp::adapt::run, exp::adapt::TOOLS),
            ),
            (
                Experiment::Flows,
                ("flows", exp::flows::run, exp::flows::TOOLS),
            ),
            (
                Experiment::Multi,
                ("multi", exp::multi::run, exp::multi::TOOLS),
            ),
        ];
        all.into_iter()
            .filter(|(e, _)| *self == Experiment::All || e == self)
            .map(|(_, step)| step)
            .collect()
    }
}

fn main() {
    let cli = Cli::parse();
    pmdt_log::init("pmdt-bench", cli.verbose);
    if cli.experiment == Experiment::Readme {
        match readme::update(&cli.readme, &cli.out, &cli.out.to_string_lossy()) {
            Ok(n) => {
                println!(
                    "pmdt-bench: {} updated from {} report(s) in {}",
                    cli.readme.display(),
                    n,
                    cli.out.display()
                );
                return;
            }
            Err(e) => {
                eprintln!("pmdt-bench: error: {e}");
                std::process::exit(1);
            }
        }
    }
    if let Experiment::Merge { dirs } = &cli.experiment {
        let invocation = std::env::args().collect::<Vec<_>>().join(" ");
        match merge::merge(dirs, &cli.out, &invocation) {
            Ok(names) => {
                println!(
                    "pmdt-bench: merged {} into {}",
                    names.join(", "),
                    cli.out.display()
                );
                return;
            }
            Err(e) => {
                eprintln!("pmdt-bench: error: {e}");
                std::process::exit(1);
            }
        }
    }
    proc::install_signal_handler();
    proc::cleanup_stale();
    cell::set_only(cli.only.clone());
    let quick = cli.quick;
    let repeat = cli.repeat.map_or(if quick { 1 } else { 3 }, |r| r as usize);
    let ctx = Ctx::new(
        cli.bin_dir.clone().unwrap_or_else(ctx::default_bin_dir),
        cli.out.clone(),
        quick,
        repeat,
        cli.cell_timeout.map(Duration::from_secs_f64),
    )
    .with_wanem_beside(cli.wanem_beside);
    let plan = cli.experiment.plan();
    for (name, _, (own, peers)) in &plan {
        if let Err(e) = ctx.require(own, peers) {
            eprintln!("pmdt-bench: error: {name}: {e}");
            std::process::exit(3);
        }
    }
    if let Err(e) = std::fs::create_dir_all(&ctx.out) {
        eprintln!(
            "pmdt-bench: error: cannot create {}: {e}",
            ctx.out.display()
        );
        std::process::exit(1);
    }
    let machine = Machine::detect();
    println!("pmdt-bench: {}", machine.line());
    println!(
        "pmdt-bench: tools from {}, results into {}, {} run(s) per cell{}",
        ctx.bin_dir.display(),
        ctx.out.display(),
        repeat,
        if quick { ", --quick" } else { "" }
    );
    let mut failed_cells = 0;
    let mut total_cells = 0;
    let mut index = String::from("# pmdt-bench results\n\n");
    index.push_str(&format!("Machine: {}\n\n", machine.line()));
    for (name, run, _) in plan {
        println!("{name}:");
        let mut report = run(&ctx, &machine);
        report.cells.retain(|c| c.status != "skipped");
        report.ratios.retain(|r| {
            !r.missing
                .as_deref()
                .is_some_and(|m| m.contains(report::NOT_RUN))
        });
        if report.cells.is_empty() {
            println!("  (no cell selected by --only)");
            continue;
        }
        for r in &report.ratios {
            println!("  ratio {}", r.line());
        }
        total_cells += report.cells.len();
        failed_cells += report.failed();
        match report.write(&ctx.out) {
            Ok(files) => {
                let names: Vec<String> = files
                    .iter()
                    .map(|f| {
                        f.file_name()
                            .unwrap_or_default()
                            .to_string_lossy()
                            .into_owned()
                    })
                    .collect();
                println!("  wrote {} into {}", names.join(", "), ctx.out.display());
                index.push_str(&format!(
                    "- [{name}]({name}.md): {} ({} cells, {} failed) ![]({name}.png)\n",
                    report.title,
                    report.cells.len(),
                    report.failed()
                ));
            }
            Err(e) => {
                eprintln!("pmdt-bench: error: {name}: {e}");
                std::process::exit(1);
            }
        }
    }
    if cli.experiment == Experiment::All {
        let _ = std::fs::write(ctx.out.join("README.md"), index);
    }
    println!("pmdt-bench: {total_cells} cells, {failed_cells} failed");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pmdt-wanem shares the receiver's CPU unless told to share the sender's
    /// (the sender, sharing its core, was late for its pacing 14-20 % of a
    /// minute, beside the receiver 5-7 %: docs/RESULTS.md, "Session 89").
    #[test]
    fn pmdt_wanem_shares_the_receivers_cpu_unless_told_otherwise() {
        let cli = Cli::try_parse_from(["pmdt-bench", "adapt"]).unwrap();
        assert_eq!(cli.wanem_beside, ctx::WanemBeside::Receiver);
        assert_eq!(cli.wanem_beside.cpu(), 0);
        let cli = Cli::try_parse_from(["pmdt-bench", "--wanem-beside", "sender", "loss"]).unwrap();
        assert_eq!(cli.wanem_beside, ctx::WanemBeside::Sender);
        assert_eq!(cli.wanem_beside.cpu(), 1);
        assert!(Cli::try_parse_from(["pmdt-bench", "--wanem-beside", "2", "loss"]).is_err());
    }
}
