//! `pmdt-load-sweep`: the load-estimation thesis experiment on this machine.
//!
//! A generator on the main lcore offers packets at a controlled rate to a worker
//! lcore that polls a DPDK port (memif server and client in one process) and does
//! per-packet work; the worker runs all four load estimators. The run finds the
//! worker's capacity, sweeps offered load from 5% to 110% of it, ramps slowly past
//! capacity to time the drop warning, and raises the per-packet work mid-run. Results:
//! CSV, JSON, a Markdown table like the thesis's Tables 4.2/4.3, and a PNG plot.
//!
//! ```text
//! sudo cargo run --release -p pmdt-load-sweep -- --out results/load-sweep
//! ```

mod analysis;
mod generator;
mod output;
mod worker;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use dpdk::{lcore, Eal, MemoryMode, Mempool, MempoolConfig, Port, PortConfig};
use load_estimator::EstimatorConfig;

use generator::{Arrivals, Generator, StepResult};
use output::{CostChange, RampResult, Row, SweepOutput};
use worker::WorkerControl;

/// Reproduce the load-estimation experiment: capacity, sweep, accuracy, drop warning.
#[derive(Parser, Debug, serde::Serialize)]
#[command(version)]
struct Args {
    #[command(flatten)]
    log: pmdt_log::Verbosity,
    /// Frame size in bytes.
    #[arg(long, default_value_t = 128)]
    frame_size: usize,
    /// Extra busy cycles of work per packet (on top of a checksum over the frame).
    #[arg(long, default_value_t = 3000)]
    work_cycles: u64,
    /// Extra busy cycles of work per non-empty burst (a flush, a timer check: work
    /// that full bursts amortize).
    #[arg(long, default_value_t = 0)]
    burst_work_cycles: u64,
    /// Per-packet work after the mid-run change.
    #[arg(long, default_value_t = 6000)]
    heavy_work_cycles: u64,
    /// Arrival process of the generator.
    #[arg(long, value_enum, default_value_t = Arrivals::Constant)]
    arrivals: Arrivals,
    /// Packets per generated burst.
    #[arg(long, default_value_t = 8)]
    gen_burst: usize,
    /// Seconds of warm-up per step (not measured).
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Seconds measured per step.
    #[arg(long, default_value_t = 1.2)]
    measure: f64,
    /// An iteration longer than this many times its typical length counts as stolen
    /// time (preemption), not work.
    #[arg(long, default_value_t = 20)]
    stolen_factor: u64,
    /// The port between generator and worker: a memif pair (a copy per packet, like
    /// a NIC's DMA) or a net_ring loopback (pointers only: the generator can offer
    /// far more packets per second, for light per-packet work).
    #[arg(long, value_enum, default_value_t = PortKind::Memif)]
    port: PortKind,
    /// Share of offered packets dropped in a step (twice in a row) that counts as
    /// sustained drops in the capacity search. A stall of the VM for a few ms drops
    /// part of one ring's worth: at high packet rates raise this above that share.
    #[arg(long, default_value_t = 0.001)]
    drop_threshold: f64,
    /// Lcores: generator on the first (main), worker on the second.
    #[arg(long, default_value = "0,1")]
    lcores: String,
    /// Use 4 KiB pages instead of hugepages.
    #[arg(long)]
    no_huge: bool,
    /// Output directory.
    #[arg(long, default_value = "results/load-sweep")]
    out: PathBuf,
}

/// The DPDK port the generator feeds the worker through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum PortKind {
    /// memif server and client in this process (rx ring of 4096).
    Memif,
    /// One net_ring vdev looped back on itself (ring of 1023).
    Ring,
}

fn main() {
    let args = Args::parse();
    pmdt_log::init("pmdt-load-sweep", args.log.verbose);
    if let Err(e) = run(&args) {
        eprintln!("pmdt-load-sweep: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    if args.frame_size < 64 || args.frame_size > 1514 {
        return Err("--frame-size must be 64..=1514".into());
    }
    if !(0.0..=0.5).contains(&args.drop_threshold) {
        return Err(
            "--drop-threshold must be between 0 and 0.5 (a share of offered packets)".into(),
        );
    }
    if !(1..=64).contains(&args.gen_burst) {
        return Err("--gen-burst must be 1..=64".into());
    }
    let sock = format!("/tmp/pmdt-load-sweep-{}.sock", std::process::id());
    let _ = std::fs::remove_file(&sock);
    let mut b = Eal::builder()
        .program("pmdt-load-sweep")
        .lcores(&args.lcores)
        .no_pci(true)
        .memory_mb(512);
    b = match args.port {
        PortKind::Memif => b
            .vdev(format!(
                "net_memif0,role=server,socket={sock},id=1,rsize=12"
            ))
            .vdev(format!(
                "net_memif1,role=client,socket={sock},id=1,rsize=12"
            )),
        PortKind::Ring => b.vdev("net_ring0"),
    };
    if args.no_huge {
        b = b.memory(MemoryMode::NoHuge);
    }
    let eal = b.init()?;
    let worker_lcore = *lcore::worker_ids()
        .first()
        .ok_or("need two lcores (e.g. --lcores 0,1): generator and worker")?;
    let pool = Arc::new(Mempool::new(
        &eal,
        &MempoolConfig {
            size: 32767,
            ..Default::default()
        },
    )?);
    // The worker's rx queue, the generator's tx queue, and the ports (kept open).
    let (rxq, mut txq, ports, rx_ring_size) = match args.port {
        PortKind::Memif => {
            let mut server = Port::open_by_name(&eal, "net_memif0")?;
            let mut client = Port::open_by_name(&eal, "net_memif1")?;
            let (mut srx, _stx) = server.configure(&PortConfig::default(), &pool)?;
            let (_crx, mut ctx) = client.configure(&PortConfig::default(), &pool)?;
            server.start()?;
            client.start()?;
            server.wait_link_up(Duration::from_secs(10))?;
            client.wait_link_up(Duration::from_secs(10))?;
            (srx.remove(0), ctx.remove(0), vec![server, client], 4096)
        }
        PortKind::Ring => {
            let mut port = Port::open_by_name(&eal, "net_ring0")?;
            let (mut rx, mut tx) = port.configure(&PortConfig::default(), &pool)?;
            port.start()?;
            (rx.remove(0), tx.remove(0), vec![port], 1023)
        }
    };

    let hz = lcore::tsc_hz();
    let ctl = Arc::new(WorkerControl::default());
    ctl.work_cycles.store(args.work_cycles, Ordering::Relaxed);
    ctl.burst_work_cycles
        .store(args.burst_work_cycles, Ordering::Relaxed);
    let est_cfg = EstimatorConfig {
        rx_ring_size,
        stolen_factor: args.stolen_factor,
        ..EstimatorConfig::new(hz, 32)
    };
    let (tx_ready, rx_ready) = std::sync::mpsc::channel();
    let ctl2 = ctl.clone();
    let handle = lcore::launch(&eal, worker_lcore, move || {
        worker::run(rxq, ctl2, est_cfg, tx_ready)
    })?;
    // Declared after `handle`, so it drops first: an early `?` stops the worker
    // instead of leaving the join waiting forever.
    let _stop = worker::StopOnDrop(ctl.clone());
    let reader = rx_ready.recv()?;

    let mut frame = vec![0u8; args.frame_size];
    frame[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
    frame[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x02]);
    frame[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
    let mut gen = Generator {
        tx: &mut txq,
        pool: &pool,
        frame,
        burst: args.gen_burst,
        arrivals: args.arrivals,
        hz,
        reader: &reader,
        ctl: &ctl,
        rng: 0x9e37_79b9_7f4a_7c15,
        max_catch_up: rx_ring_size as usize / 8,
    };

    eprintln!(
        "finding capacity (work {} cycles/packet)...",
        args.work_cycles
    );
    let capacity = find_capacity(&mut gen, args)?;
    eprintln!("capacity: {capacity:.0} pps");
    let mut rows = Vec::new();
    let sweep_start = std::time::Instant::now();
    let mut probe = probe_capacity(&mut gen, capacity);
    for pct in (5..=110).step_by(5) {
        let target = pct as f64 / 100.0;
        let r = gen.step(target * capacity, args.warmup, args.measure);
        let mut row = to_row(target, capacity, &r);
        row.t_s = sweep_start.elapsed().as_secs_f64();
        let after = probe_capacity(&mut gen, capacity);
        row.capacity_local_pps = (probe + after) / 2.0;
        row.theoretical_local = r.offered_pps / row.capacity_local_pps;
        probe = after;
        eprintln!(
            "target {:>3}%: theoretical {:5.1}%  m1 {:5.1}%  m2 {:5.1}%  m3 {:5.1}%  ours {:5.1}%  risk {:.2}  dropped {}",
            pct,
            row.theoretical * 100.0,
            row.method1 * 100.0,
            row.method2 * 100.0,
            row.method3 * 100.0,
            row.ours * 100.0,
            row.drop_risk,
            row.dropped
        );
        rows.push(row);
    }
    let sweep_s = sweep_start.elapsed().as_secs_f64();
    eprintln!("capacity again, after the sweep...");
    let capacity_end = find_capacity(&mut gen, args)?;
    eprintln!("capacity after: {capacity_end:.0} pps");
    for r in &mut rows {
        let c = capacity + (capacity_end - capacity) * (r.t_s / sweep_s);
        r.theoretical_drift = r.offered_pps / c;
    }
    let false_alarms = rows
        .iter()
        .filter(|r| r.theoretical < 0.85 && r.warned && r.dropped == 0)
        .count();
    let accuracy = methods_accuracy(&rows, |r| r.theoretical);
    let accuracy_vs_drift = methods_accuracy(&rows, |r| r.theoretical_drift);
    let accuracy_vs_local = methods_accuracy(&rows, |r| r.theoretical_local);

    eprintln!("ramp past capacity...");
    let ramp = ramp(&mut gen, capacity, hz);
    eprintln!("cost change...");
    let base = 0.5 * capacity;
    let before = gen.step(base, args.warmup, args.measure);
    ctl.work_cycles
        .store(args.heavy_work_cycles, Ordering::Relaxed);
    let after = gen.step(base, args.warmup * 2.0, args.measure);
    let heavy_capacity = find_capacity(&mut gen, args)?;
    let cost_change = CostChange {
        work_before: args.work_cycles,
        work_after: args.heavy_work_cycles,
        theoretical_before: before.offered_pps / capacity,
        ours_before: before.mean.load,
        theoretical_after: after.offered_pps / heavy_capacity,
        ours_after: after.mean.load,
    };

    ctl.stop.store(true, Ordering::Relaxed);
    let _rxq = handle.join()?;
    let out = SweepOutput {
        settings: serde_json::to_value(args)?,
        capacity_pps: capacity,
        capacity_end_pps: capacity_end,
        accuracy_vs_drift,
        accuracy_vs_local,
        rows,
        accuracy,
        ramp: Some(ramp),
        cost_change: Some(cost_change),
        false_alarms,
    };
    output::write_all(&args.out, &out)?;
    println!("{}", output::markdown(&out));
    println!("written: {}/sweep.{{csv,json,md,png}}", args.out.display());
    drop(ports);
    let _ = std::fs::remove_file(&sock);
    Ok(())
}

/// Accuracy of every method over 10–90% of the reference `reference(row)`.
fn methods_accuracy(rows: &[Row], reference: impl Fn(&Row) -> f64) -> Vec<analysis::Accuracy> {
    [
        "method 1 (non-empty iterations)",
        "method 2 (1 s window)",
        "method 3 (busy cycles)",
        "ours",
    ]
    .iter()
    .enumerate()
    .map(|(i, name)| {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| (0.095..=0.905).contains(&reference(r)))
            .map(|r| (reference(r), [r.method1, r.method2, r.method3, r.ours][i]))
            .collect();
        analysis::accuracy(name, &pts)
    })
    .collect()
}

fn to_row(target: f64, capacity: f64, r: &StepResult) -> Row {
    Row {
        target,
        offered_pps: r.offered_pps,
        theoretical: r.offered_pps / capacity,
        t_s: 0.0,
        theoretical_drift: r.offered_pps / capacity,
        capacity_local_pps: capacity,
        theoretical_local: r.offered_pps / capacity,
        method1: r.mean.method1_nonempty_iterations,
        method2: r.mean.method2_nonempty_time_window,
        method3: r.mean.method3_busy_cycles,
        ours: r.mean.load,
        ours_capacity_pps: r.mean.capacity_pps,
        ours_burst_cycles: r.mean.cycles_per_burst,
        ours_packet_cycles: r.mean.cycles_per_packet,
        ours_kappa: r.mean.saturation_cost_ratio,
        ours_stolen_fraction: r.mean.stolen_fraction,
        drop_risk: r.mean.drop_risk,
        warned: r.warned,
        dropped: r.dropped,
        offered: r.offered,
    }
}

/// The worker's capacity now: offered 25% above `nominal` for 0.35 s (after 0.15 s
/// to fill the ring), the rate it actually processed is its capacity at full bursts.
/// Falls back to `nominal` if the generator could not overload it.
fn probe_capacity(gen: &mut Generator<'_>, nominal: f64) -> f64 {
    let measure = 0.35;
    let r = gen.step(1.25 * nominal, 0.15, measure);
    if r.dropped == 0 || r.offered == 0 {
        return nominal;
    }
    (r.offered - r.dropped) as f64 / measure
}

/// Highest offered rate the worker keeps up with: no drops over the threshold and
/// no growing queue. An overloaded step counts only if a second try at the same
/// rate is overloaded too (one vCPU stall is not saturation).
///
/// The search starts at half the worker's nominal ceiling (TSC rate over its
/// per-packet work), climbs by 1.6x until drops, or, if the worker already drops
/// there (a loaded or slower machine), descends by 1.6x until it does not; then it
/// bisects between the last rate without and the first with drops. The result
/// therefore does not depend on a guess of the machine's speed.
fn find_capacity(gen: &mut Generator<'_>, args: &Args) -> Result<f64, Box<dyn std::error::Error>> {
    // Overloaded: drops, or a queue that grew during the step by more than a couple
    // of bursts and 2% of what was offered (the ring has not overflowed yet).
    let growth_allowed =
        |r: &StepResult| (0.02 * r.offered as f64).max(2.0 * args.gen_burst as f64);
    let drops = |r: &StepResult| {
        r.dropped as f64 > args.drop_threshold * r.offered.max(1) as f64
            || r.queue_growth() as f64 > growth_allowed(r)
    };
    let step = |g: &mut Generator<'_>, rate: f64, w: f64, m: f64| {
        let mut r = g.step(rate, w, m);
        if drops(&r) {
            r = g.step(rate, w, m);
        }
        eprintln!(
            "  {rate:>10.0} pps: offered {:.0} pps, dropped {}, queue grew by {}, pool empty {}x",
            r.offered_pps,
            r.dropped,
            r.queue_growth(),
            r.alloc_failures
        );
        r
    };
    // Below this the search gives up: the worker cannot be measured meaningfully.
    const FLOOR_PPS: f64 = 100.0;
    let per_packet =
        (args.work_cycles + args.burst_work_cycles / args.gen_burst.max(1) as u64).max(1);
    let nominal = gen.hz as f64 / per_packet as f64;
    let mut rate = (0.5 * nominal).clamp(FLOOR_PPS, 20_000_000.0);
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    let mut best_offered: f64 = 0.0;
    let first = step(gen, rate, 0.5, 0.8);
    if drops(&first) {
        // Descend: the machine is slower than nominal (or busy).
        hi = rate;
        while lo == 0.0 {
            rate /= 1.6;
            if rate < FLOOR_PPS {
                return Err(format!(
                    "the worker fell behind (dropped or queued packets) even at {hi:.0} pps: lower --work-cycles"
                )
                .into());
            }
            let r = step(gen, rate, 0.5, 0.8);
            if drops(&r) {
                hi = rate;
            } else {
                lo = rate;
                best_offered = r.offered_pps;
            }
        }
    } else {
        let mut r = first;
        for _ in 0..16 {
            for _ in 0..2 {
                if drops(&r) || r.offered_pps >= 0.9 * rate {
                    break;
                }
                // Fell short: the generator may have lost its core for a while (on a
                // busy machine, for a whole step). Only a third shortfall is its limit.
                r = step(gen, rate, 0.5, 0.8);
            }
            if drops(&r) {
                hi = rate;
                break;
            }
            lo = rate;
            best_offered = best_offered.max(r.offered_pps);
            if r.offered_pps < 0.9 * rate {
                return Err(format!(
                    "the generator cannot offer more than {:.0} pps: raise --work-cycles so the worker saturates first",
                    r.offered_pps
                )
                .into());
            }
            rate *= 1.6;
            r = step(gen, rate, 0.5, 0.8);
        }
        if hi == 0.0 {
            return Err("the worker never dropped: raise --work-cycles".into());
        }
    }
    for _ in 0..7 {
        let mid = (lo + hi) / 2.0;
        let r = step(gen, mid, args.warmup.min(0.6), args.measure.min(1.0));
        if drops(&r) {
            hi = mid;
        } else {
            lo = mid;
            best_offered = r.offered_pps;
        }
    }
    Ok(best_offered.max(lo * 0.99))
}

/// Raises the load from 80% to 120% of capacity in small steps; returns where the
/// warning and the sustained drops began.
fn ramp(gen: &mut Generator<'_>, capacity: f64, hz: u64) -> RampResult {
    // Cool down first, so no warning carries over from the overload steps before.
    gen.step(0.5 * capacity, 0.0, 1.5);
    let mut warned: Option<(f64, u64)> = None;
    let mut dropped: Option<(f64, u64)> = None;
    let mut pct = 80.0;
    while pct <= 120.0 && dropped.is_none() {
        let r = gen.step(pct / 100.0 * capacity, 0.0, 0.1);
        let load = r.offered_pps / capacity;
        if warned.is_none() {
            if let Some(t) = r.first_warning_tsc {
                warned = Some((load, t));
            }
        }
        if r.dropped as f64 > 0.001 * r.offered.max(1) as f64 {
            dropped = Some((load, r.first_drop_tsc.unwrap_or(0)));
        }
        pct += 0.5;
    }
    RampResult {
        warned_at_load: warned.map(|w| w.0),
        drops_at_load: dropped.map(|d| d.0),
        lead_time_s: match (warned, dropped) {
            (Some(w), Some(d)) if d.1 >= w.1 => Some((d.1 - w.1) as f64 / hz as f64),
            _ => None,
        },
    }
}
