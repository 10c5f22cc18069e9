//! Small-message round trip through pmdt over a TAP pair: two pmdt runtimes in this
//! process, each on its own DPDK TAP vdev, joined by a kernel bridge; a client writes
//! a message, the server's thread echoes it, the client reads it back. This is the
//! latency a request/response application sees (both I/O loops with the tools'
//! default idle policy, and busy-polling), kernel TAP forwarding included.
//! Run: `cargo bench --bench tap_round_trip` (root; creates pmdtr0/pmdtr1 and the
//! bridge pmdtrbr, removed at the end). Without root or TAP it says why and skips.

mod support;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use dpdk::Eal;
use pmdt::link::dpdk_port::DpdkLinkConfig;
use pmdt::runtime::{Backend, IdlePolicy, Runtime};

const PORT: u16 = 9000;
/// The runs, each on its own pair of TAP vdevs (a closed vdev is gone for good):
/// the tools' default idle policy, then busy-polling.
const RUNS: usize = 2;

fn policy(run: usize) -> (&'static str, IdlePolicy) {
    match run {
        0 => ("backoff", IdlePolicy::default()),
        _ => ("busy_poll", IdlePolicy::BusyPoll),
    }
}

fn start_eal() -> Result<Eal, String> {
    Eal::builder()
        .program("pmdt-bench")
        .lcores("0,1")
        .main_lcore(0)
        .no_pci(true)
        .memory_mb(512)
        .log_level("warning")
        .vdev("net_tap0,iface=pmdtr0")
        .vdev("net_tap1,iface=pmdtr1")
        .vdev("net_tap2,iface=pmdtr2")
        .vdev("net_tap3,iface=pmdtr3")
        .init()
        .map_err(|e| e.to_string())
}

fn runtime(eal: &Eal, port: &str, ip: Ipv4Addr, idle: IdlePolicy) -> Runtime {
    Runtime::builder()
        .backend(Backend::Dpdk {
            eal: eal.clone(),
            cfg: DpdkLinkConfig {
                port: port.into(),
                ip,
                udp_port: PORT,
                pool_size: 8191,
                ..Default::default()
            },
        })
        .idle(idle)
        .start()
        .expect("start a pmdt runtime on a TAP vdev")
}

fn bridge_up(ifaces: [usize; 2]) {
    support::ip_quiet(&["link", "del", "pmdtrbr"]);
    support::ip(&["link", "add", "pmdtrbr", "type", "bridge"]);
    for i in ifaces {
        let (d, mac) = (format!("pmdtr{i}"), format!("02:00:00:99:00:{i:02x}"));
        let d = d.as_str();
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{d}/disable_ipv6"), "1");
        // The TAP PMD gives the kernel interface the port's own MAC; a bridge keeps
        // frames for its ports' MACs to itself, so the kernel side gets another one.
        support::ip(&["link", "set", d, "address", &mac]);
        support::ip(&["link", "set", d, "master", "pmdtrbr"]);
        support::ip(&["link", "set", d, "up"]);
    }
    support::ip(&["link", "set", "pmdtrbr", "up"]);
}

/// One pair of runtimes with an echo server; measures `size`-byte round trips.
fn bench_pair(c: &mut Criterion, eal: &Eal, run: usize) {
    let (label, idle) = policy(run);
    let ports = [2 * run, 2 * run + 1];
    let ip = |i: usize| Ipv4Addr::new(10, 99, 0, 1 + i as u8);
    let a = runtime(eal, &format!("net_tap{}", ports[0]), ip(ports[0]), idle);
    let b = runtime(eal, &format!("net_tap{}", ports[1]), ip(ports[1]), idle);
    let b_addr = SocketAddr::from((ip(ports[1]), PORT));
    // The TAP PMD brings its interfaces up when the ports start: bridge them after.
    bridge_up(ports);
    let listener = b.listen(PORT).expect("listen");
    let echo = std::thread::spawn(move || {
        let mut s = listener.accept().expect("accept");
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if s.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = s.close();
    });
    let mut s = a
        .connect_timeout(b_addr, Some(Duration::from_secs(10)))
        .expect("connect over the TAP bridge");
    let mut g = c.benchmark_group(format!("tap_round_trip_{label}"));
    for size in [64usize, 1024] {
        let msg = vec![0x5a; size];
        let mut back = vec![0u8; size];
        g.throughput(Throughput::Elements(1));
        g.bench_function(format!("{size}B"), |bch| {
            bch.iter_custom(|iters| {
                let t0 = Instant::now();
                for _ in 0..iters {
                    s.write_all(&msg).expect("write");
                    s.read_exact(&mut back).expect("echo");
                }
                t0.elapsed()
            })
        });
        assert_eq!(back, msg, "the echo returned other bytes");
    }
    g.finish();
    s.close().expect("close");
    echo.join().expect("echo thread");
    a.shutdown().expect("shutdown a");
    b.shutdown().expect("shutdown b");
}

fn main() {
    if let Some(why) = support::skip_reason(true) {
        eprintln!("tap_round_trip: skipped: {why}");
        return;
    }
    let eal = match start_eal() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("tap_round_trip: skipped: cannot start DPDK with TAP vdevs: {e} (after `make setup`, as root)");
            return;
        }
    };
    let mut c = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    for run in 0..RUNS {
        bench_pair(&mut c, &eal, run);
    }
    c.final_summary();
    support::ip_quiet(&["link", "del", "pmdtrbr"]);
}
