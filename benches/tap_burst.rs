//! tx_burst/rx_burst on DPDK TAP vdevs (the kernel is the other end).
//! Run: `cargo bench --bench tap_burst` (root; creates interfaces pmdtb0/pmdtb1 and a
//! bridge pmdtbbr, removed at the end). Without root, TAP devices or DPDK it says
//! why and skips, so a plain `cargo bench` runs the other benches to the end.

mod support;

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use dpdk::{Eal, MbufBatch, Port, PortConfig};

/// The EAL with the two TAP vdevs, or why not.
fn start_eal() -> Result<Eal, String> {
    Eal::builder()
        .program("pmdt-bench")
        .lcores("0,1")
        .main_lcore(0)
        .no_pci(true)
        .memory_mb(512)
        .log_level("warning")
        .vdev("net_tap0,iface=pmdtb0")
        .vdev("net_tap1,iface=pmdtb1")
        .init()
        .map_err(|e| e.to_string())
}

fn bench(c: &mut Criterion, eal: &Eal) {
    let pool = support::pool(eal, 16383);
    let mut a = Port::open_by_name(eal, "net_tap0").unwrap();
    let mut bp = Port::open_by_name(eal, "net_tap1").unwrap();
    let (_arx, mut atx) = a.configure(&PortConfig::default(), &pool).unwrap();
    let (mut brx, _btx) = bp.configure(&PortConfig::default(), &pool).unwrap();
    a.start().unwrap();
    bp.start().unwrap();
    support::ip_quiet(&["link", "del", "pmdtbbr"]);
    support::ip(&["link", "add", "pmdtbbr", "type", "bridge"]);
    for d in ["pmdtb0", "pmdtb1"] {
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{d}/disable_ipv6"), "1");
        support::ip(&["link", "set", d, "master", "pmdtbbr"]);
        support::ip(&["link", "set", d, "up"]);
    }
    support::ip(&["link", "set", "pmdtbbr", "up"]);
    a.wait_link_up(Duration::from_secs(5)).unwrap();

    let mut g = c.benchmark_group("tap");
    for size in [64usize, 1024] {
        let f = support::frame(size);
        g.throughput(Throughput::Elements(32));
        g.bench_function(format!("tx_burst_32x{size}B"), |b| {
            let mut batch = MbufBatch::<32>::new();
            b.iter(|| {
                pool.alloc_bulk(&mut batch, 32).unwrap();
                for m in batch.as_mut_slice() {
                    m.extend_from_slice(&f).unwrap();
                }
                while !batch.is_empty() {
                    atx[0].tx_burst(&mut batch);
                }
            })
        });
    }
    // Drain what the bridge delivered before measuring the empty poll.
    let mut rxb = MbufBatch::<32>::new();
    let quiet = Instant::now() + Duration::from_millis(300);
    while Instant::now() < quiet {
        brx[0].rx_burst(&mut rxb);
        rxb.clear();
    }
    g.throughput(Throughput::Elements(1));
    g.bench_function("rx_burst_empty_poll", |b| {
        b.iter(|| {
            let n = brx[0].rx_burst(&mut rxb);
            rxb.clear();
            n
        })
    });
    let f = support::frame(1024);
    g.throughput(Throughput::Elements(32));
    g.bench_function("bridged_tx_then_rx_32x1024B", |b| {
        let mut batch = MbufBatch::<32>::new();
        b.iter(|| {
            pool.alloc_bulk(&mut batch, 32).unwrap();
            for m in batch.as_mut_slice() {
                m.extend_from_slice(&f).unwrap();
            }
            while !batch.is_empty() {
                atx[0].tx_burst(&mut batch);
            }
            let mut got = 0;
            let give_up = Instant::now() + Duration::from_millis(50);
            while got < 32 && Instant::now() < give_up {
                got += brx[0].rx_burst(&mut rxb);
                rxb.clear();
            }
            got
        })
    });
    g.finish();
    support::ip_quiet(&["link", "del", "pmdtbbr"]);
}

fn main() {
    if let Some(why) = support::skip_reason(true) {
        eprintln!("tap_burst: skipped: {why}");
        return;
    }
    let eal = match start_eal() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("tap_burst: skipped: cannot start DPDK with TAP vdevs: {e} (after `make setup`, as root)");
            return;
        }
    };
    let mut c = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench(&mut c, &eal);
    c.final_summary();
}
