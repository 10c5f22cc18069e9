//! pmdt-sweep: the reliability sweep. Runs many seeds of `pmdt::sim::sweep` (each
//! seed a case: an impairment mix, a congestion controller, a number of flows and
//! the application's behaviour, over the runtime that ships in the deterministic
//! simulator), in parallel, and writes a report: every seed must deliver every
//! byte intact, close gracefully and return every packet buffer.
//!
//! ```text
//! pmdt-sweep --seeds 10000 --out docs/sweep      # the full sweep
//! pmdt-sweep --from 183 --seeds 1 --verbose      # one seed, its case and outcome
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Parser;
use serde::Serialize;

use pmdt::sim::sweep::{SweepCase, SweepOutcome};

/// Run the reliability sweep and report.
#[derive(Debug, Parser)]
#[command(name = "pmdt-sweep", version, about, long_about = None)]
struct Cli {
    /// Number of seeds.
    #[arg(long, default_value_t = 10_000)]
    seeds: u64,
    /// First seed.
    #[arg(long, default_value_t = 0)]
    from: u64,
    /// Worker threads (default: every CPU).
    #[arg(long)]
    jobs: Option<usize>,
    /// Directory for RESULTS.md and sweep.json (nothing written without it).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print every seed's case and outcome.
    #[arg(long)]
    verbose: bool,
}

/// One failed seed.
#[derive(Debug, Clone, Serialize)]
struct Failure {
    seed: u64,
    mix: String,
    controller: String,
    flows: usize,
    bytes_per_flow: u64,
    reason: String,
}

/// Seeds and failures of one group of cases.
#[derive(Debug, Clone, Default, Serialize)]
struct Tally {
    seeds: u64,
    failed: u64,
    /// Virtual time of the passing seeds, summed (seconds).
    virtual_s: f64,
}

/// The report.
#[derive(Debug, Serialize)]
struct Report {
    command: String,
    from: u64,
    seeds: u64,
    passed: u64,
    failed: u64,
    wall_s: f64,
    cpu_s: f64,
    jobs: usize,
    stream_bytes_verified: u64,
    busy_overflows: u64,
    by_mix_and_controller: BTreeMap<String, Tally>,
    by_flows: BTreeMap<usize, Tally>,
    failures: Vec<Failure>,
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is valid.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `u` is a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn main() {
    let cli = Cli::parse();
    let jobs = cli
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let next = AtomicU64::new(cli.from);
    let end = cli.from + cli.seeds;
    let results: Mutex<Vec<(SweepCase, SweepOutcome)>> = Mutex::new(Vec::new());
    let done = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let seed = next.fetch_add(1, Ordering::Relaxed);
                if seed >= end {
                    return;
                }
                let case = SweepCase::of_seed(seed);
                let outcome = case.run();
                if cli.verbose || !outcome.ok {
                    println!(
                        "seed {seed}: {} {} {} flows x {} B, writes of {} B, {:?}, {:?}, pools {}/{}: {} ({:?} virtual){}",
                        case.mix,
                        case.controller,
                        case.scenario.flows,
                        case.scenario.bytes_per_flow,
                        case.scenario.write_size,
                        case.scenario.connects,
                        case.scenario.readers,
                        case.scenario.client_buffers,
                        case.scenario.server_buffers,
                        if outcome.ok { "ok" } else { "FAILED" },
                        outcome.virtual_time,
                        outcome
                            .failure
                            .as_deref()
                            .map(|f| format!(": {f}"))
                            .unwrap_or_default()
                    );
                }
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if !cli.verbose && n.is_multiple_of(1000) {
                    eprintln!("{n} of {} seeds", cli.seeds);
                }
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((case, outcome));
            });
        }
    });
    let wall = started.elapsed();
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(c, _)| c.seed);
    let report = summarize(&cli, jobs, wall, &results);
    println!(
        "{} seeds from {}: {} passed, {} failed, {:.1} s wall, {:.1} s CPU, {} jobs",
        report.seeds, report.from, report.passed, report.failed, report.wall_s, report.cpu_s, jobs
    );
    if let Some(dir) = &cli.out {
        if let Err(e) = write_report(dir, &report) {
            eprintln!(
                "pmdt-sweep: cannot write the report to {}: {e}",
                dir.display()
            );
            std::process::exit(2);
        }
    }
    if report.failed > 0 {
        std::process::exit(1);
    }
}

fn summarize(
    cli: &Cli,
    jobs: usize,
    wall: Duration,
    results: &[(SweepCase, SweepOutcome)],
) -> Report {
    let mut by_mc: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_flows: BTreeMap<usize, Tally> = BTreeMap::new();
    let mut failures = Vec::new();
    let (mut bytes, mut busy) = (0, 0);
    for (c, o) in results {
        for t in [
            by_mc
                .entry(format!("{} / {}", c.mix, c.controller))
                .or_default(),
            by_flows.entry(c.scenario.flows).or_default(),
        ] {
            t.seeds += 1;
            if o.ok {
                t.virtual_s += o.virtual_time.as_secs_f64();
            } else {
                t.failed += 1;
            }
        }
        bytes += o.bytes;
        busy += o.busy_overflows;
        if !o.ok {
            failures.push(Failure {
                seed: c.seed,
                mix: c.mix.to_string(),
                controller: c.controller.to_string(),
                flows: c.scenario.flows,
                bytes_per_flow: c.scenario.bytes_per_flow,
                reason: o.failure.clone().unwrap_or_default(),
            });
        }
    }
    let failed = failures.len() as u64;
    Report {
        command: format!(
            "cargo run --release -p pmdt-bench --bin pmdt-sweep --{}",
            std::env::args()
                .skip(1)
                .map(|a| format!(" {a}"))
                .collect::<String>()
        ),
        from: cli.from,
        seeds: results.len() as u64,
        passed: results.len() as u64 - failed,
        failed,
        wall_s: wall.as_secs_f64(),
        cpu_s: cpu_seconds(),
        jobs,
        stream_bytes_verified: bytes,
        busy_overflows: busy,
        by_mix_and_controller: by_mc,
        by_flows,
        failures,
    }
}

fn write_report(dir: &PathBuf, r: &Report) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(r).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("sweep.json"), json + "\n")?;
    let mut md = Vec::new();
    writeln!(md, "# Reliability sweep")?;
    writeln!(md)?;
    writeln!(
        md,
        "Each seed is a case of `pmdt::sim::sweep` (an impairment mix, a congestion \
         controller, 1 to 16 flows, flow and write sizes, connections opened at once or \
         one after another, readers reading at once or late, pools of 1,023 to 16,383 \
         buffers) run over the runtime that ships (the I/O loop, its packet-buffer \
         storage, the rings and doorbell to the streams) in the deterministic simulator. \
         A seed passes when every byte of every flow arrived intact, every connection \
         closed gracefully on both sides and every packet buffer went back to its pool."
    )?;
    writeln!(md)?;
    writeln!(md, "- command: `{}`", r.command)?;
    writeln!(
        md,
        "- seeds {}..{}: **{} passed, {} failed**",
        r.from,
        r.from + r.seeds,
        r.passed,
        r.failed
    )?;
    writeln!(
        md,
        "- wall time {:.1} s, CPU time {:.1} s, {} worker threads",
        r.wall_s, r.cpu_s, r.jobs
    )?;
    writeln!(
        md,
        "- stream bytes verified: {:.2} GB; loop iterations still busy after 64 polls at one instant: {}",
        r.stream_bytes_verified as f64 / 1e9,
        r.busy_overflows
    )?;
    writeln!(md)?;
    writeln!(
        md,
        "| mix / controller | seeds | failed | mean virtual time of a passing seed (s) |"
    )?;
    writeln!(md, "|---|---:|---:|---:|")?;
    for (k, t) in &r.by_mix_and_controller {
        let passed = (t.seeds - t.failed).max(1) as f64;
        writeln!(
            md,
            "| {k} | {} | {} | {:.3} |",
            t.seeds,
            t.failed,
            t.virtual_s / passed
        )?;
    }
    writeln!(md)?;
    writeln!(md, "| flows | seeds | failed |")?;
    writeln!(md, "|---:|---:|---:|")?;
    for (k, t) in &r.by_flows {
        writeln!(md, "| {k} | {} | {} |", t.seeds, t.failed)?;
    }
    writeln!(md)?;
    if r.failures.is_empty() {
        writeln!(md, "No failures.")?;
    } else {
        writeln!(
            md,
            "## Failures (reproduce one with `pmdt-sweep --from SEED --seeds 1 --verbose`)"
        )?;
        writeln!(md)?;
        for f in &r.failures {
            writeln!(
                md,
                "- seed {}: {} / {} / {} flows x {} B: {}",
                f.seed, f.mix, f.controller, f.flows, f.bytes_per_flow, f.reason
            )?;
        }
    }
    std::fs::write(dir.join("RESULTS.md"), md)
}
