//! l2fwd in the safe wrapper: forwards frames between two ports on a worker lcore and
//! prints packets per second, like DPDK's l2fwd.
//!
//! ```text
//! # two net_null vdevs (an endless source and a sink): the wrapper's forwarding cost
//! cargo run --release --example forward
//! # any two ports, e.g. a memif pair or TAPs
//! cargo run --release --example forward -- --vdev net_tap0,iface=fw0 --vdev net_tap1,iface=fw1 --seconds 10
//! ```

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use dpdk::{lcore, Eal, MbufBatch, Mempool, MempoolConfig, Port, PortConfig};

/// Forward frames between two DPDK ports and print pps.
#[derive(Parser, Debug)]
struct Args {
    /// Virtual devices to create (repeatable). Default: two net_null vdevs.
    #[arg(long = "vdev")]
    vdevs: Vec<String>,
    /// PCI devices to use (repeatable, e.g. 0000:03:00.0).
    #[arg(long = "pci")]
    pci: Vec<String>,
    /// Names of the two ports (default: the first two ports found).
    #[arg(long, num_args = 2)]
    ports: Option<Vec<String>>,
    /// EAL lcore list; the forwarding loop runs on the first worker.
    #[arg(long, default_value = "0,1")]
    lcores: String,
    /// How long to run.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Use 4 KiB pages instead of hugepages.
    #[arg(long)]
    no_huge: bool,
}

fn main() {
    if let Err(e) = run(Args::parse()) {
        eprintln!("forward: {e}");
        std::process::exit(1);
    }
}

fn run(mut args: Args) -> Result<(), Box<dyn std::error::Error>> {
    if args.vdevs.is_empty() && args.pci.is_empty() {
        args.vdevs = vec!["net_null0".into(), "net_null1".into()];
    }
    let mut b = Eal::builder()
        .program("forward")
        .lcores(&args.lcores)
        .no_pci(args.pci.is_empty())
        .log_level("warning");
    for v in &args.vdevs {
        b = b.vdev(v);
    }
    for p in &args.pci {
        b = b.allow_pci(p);
    }
    if args.no_huge {
        b = b.memory(dpdk::MemoryMode::NoHuge);
    }
    let eal = b.init()?;
    let worker = *lcore::worker_ids()
        .first()
        .ok_or("need a worker lcore: give --lcores with two cores, e.g. 0,1")?;
    let ids: Vec<u16> = match &args.ports {
        Some(names) => names
            .iter()
            .map(|n| Port::id_by_name(&eal, n))
            .collect::<Result<_, _>>()?,
        None => Port::ids(&eal).into_iter().take(2).collect(),
    };
    if ids.len() != 2 {
        return Err(format!("need two ports, found {}", ids.len()).into());
    }
    let pool = Arc::new(Mempool::new(
        &eal,
        &MempoolConfig {
            size: 16383,
            ..Default::default()
        },
    )?);
    let mut ports = Vec::new();
    let mut queues = Vec::new();
    for id in &ids {
        let mut p = Port::open(&eal, *id)?;
        let info = p.info()?;
        println!(
            "port {id}: {} ({}) mac {}",
            info.name, info.driver, info.mac
        );
        let (rx, tx) = p.configure(&PortConfig::default(), &pool)?;
        p.start()?;
        queues.push((
            rx.into_iter().next().unwrap(),
            tx.into_iter().next().unwrap(),
        ));
        ports.push(p);
    }
    let (mut q1, mut q0) = (queues.pop().unwrap(), queues.pop().unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let fwd = Arc::new(AtomicU64::new(0));
    let dropped = Arc::new(AtomicU64::new(0));
    let (s2, f2, d2) = (stop.clone(), fwd.clone(), dropped.clone());
    let h = lcore::launch(&eal, worker, move || {
        let mut b = MbufBatch::<32>::new();
        let (mut n, mut d) = (0u64, 0u64);
        while !s2.load(Ordering::Relaxed) {
            for (rx, tx) in [(&mut q0.0, &mut q1.1), (&mut q1.0, &mut q0.1)] {
                if rx.rx_burst(&mut b) > 0 {
                    n += tx.tx_burst(&mut b) as u64;
                    d += b.len() as u64;
                    b.clear(); // what the tx ring did not take is dropped (l2fwd does the same)
                }
            }
            f2.store(n, Ordering::Relaxed);
            d2.store(d, Ordering::Relaxed);
        }
    })?;
    let start = Instant::now();
    let mut last = (Instant::now(), 0u64);
    while start.elapsed() < Duration::from_secs(args.seconds) {
        std::thread::sleep(Duration::from_secs(1));
        let now = (Instant::now(), fwd.load(Ordering::Relaxed));
        let pps = (now.1 - last.1) as f64 / (now.0 - last.0).as_secs_f64();
        println!(
            "forwarded {:>12} pkts  {:>8.3} Mpps  dropped {}",
            now.1,
            pps / 1e6,
            dropped.load(Ordering::Relaxed)
        );
        last = now;
    }
    stop.store(true, Ordering::Relaxed);
    h.join()?;
    let total = fwd.load(Ordering::Relaxed);
    println!(
        "total: {total} packets in {:.1} s = {:.3} Mpps",
        start.elapsed().as_secs_f64(),
        total as f64 / start.elapsed().as_secs_f64() / 1e6
    );
    drop(ports);
    Ok(())
}
