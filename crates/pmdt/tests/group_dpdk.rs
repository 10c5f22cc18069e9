//! A group over DPDK: one sender and two receivers, each a pmdt runtime on its own
//! TAP vdev, joined by a kernel bridge. The members share mbufs (references to one
//! copy, sent as indirect payloads), every receiver gets the exact bytes, and at the
//! end every mempool is full again: no shared mbuf leaks. Needs root (TAP, bridge,
//! hugepages); one EAL for this file's process.

use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::Command;
use std::time::Duration;

use dpdk::Eal;
use pmdt::link::dpdk_port::DpdkLinkConfig;
use pmdt::proto::TransportConfig;
use pmdt::runtime::{Backend, LagPolicy, MemberState, Runtime};

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

fn byte(i: u64) -> u8 {
    (i.wrapping_mul(131) ^ (i >> 11)) as u8
}

/// Interfaces and addresses of this process (concurrent runs must not collide).
struct Names {
    ifaces: [String; 3],
    bridge: String,
    net: [u8; 3],
}

impl Names {
    fn new() -> Self {
        let pid = std::process::id();
        Names {
            ifaces: [0, 1, 2].map(|i| format!("pmdtg{}{i}", pid % 100_000)),
            bridge: format!("pmdtgb{}", pid % 100_000),
            net: [10, 100 + (pid % 50) as u8, ((pid / 50) % 250) as u8],
        }
    }

    fn ip(&self, i: u8) -> Ipv4Addr {
        Ipv4Addr::new(self.net[0], self.net[1], self.net[2], 1 + i)
    }

    /// Bridges the TAP interfaces (after the ports started: the TAP PMD brings them
    /// up), each with a MAC of its own (the PMD gives the kernel side the port's,
    /// and a bridge keeps frames for its ports' MACs to itself).
    fn bridge_up(&self) {
        ip(&["link", "del", &self.bridge]);
        assert!(ip(&["link", "add", &self.bridge, "type", "bridge"]));
        for (i, d) in self.ifaces.iter().enumerate() {
            let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{d}/disable_ipv6"), "1");
            assert!(ip(&[
                "link",
                "set",
                d,
                "address",
                &format!("02:00:00:9a:00:{i:02x}")
            ]));
            assert!(ip(&["link", "set", d, "master", &self.bridge]));
            assert!(ip(&["link", "set", d, "up"]));
        }
        assert!(ip(&["link", "set", &self.bridge, "up"]));
    }
}

impl Drop for Names {
    fn drop(&mut self) {
        ip(&["link", "del", &self.bridge]);
    }
}

fn runtime(eal: &Eal, port: &str, addr: Ipv4Addr) -> Runtime {
    Runtime::builder()
        .transport(
            TransportConfig::default()
                .with_initial_rtt(Duration::from_millis(5))
                .with_idle_timeout(Duration::from_secs(5)),
        )
        .backend(Backend::Dpdk {
            eal: eal.clone(),
            cfg: DpdkLinkConfig {
                port: port.into(),
                ip: addr,
                udp_port: 9000,
                pool_size: 8191,
                ..Default::default()
            },
        })
        .start()
        .expect("start a runtime on a TAP vdev")
}

#[test]
fn a_group_over_dpdk_shares_mbufs_and_returns_every_one() {
    let names = Names::new();
    let mut b = Eal::builder()
        .program("pmdt-group-test")
        .lcores("0,1")
        .main_lcore(0)
        .no_pci(true)
        .memory_mb(1024)
        .file_prefix(format!("pmdt-group-{}", std::process::id()))
        .log_level("warning");
    for (i, d) in names.ifaces.iter().enumerate() {
        b = b.vdev(format!("net_tap{i},iface={d}"));
    }
    let eal = b
        .init()
        .expect("EAL init (root and hugepages: run `make setup`)");
    let len = 8_000_000u64;
    {
        let tx = runtime(&eal, "net_tap0", names.ip(0));
        let rx: Vec<Runtime> = (1..3)
            .map(|i| runtime(&eal, &format!("net_tap{i}"), names.ip(i)))
            .collect();
        names.bridge_up();
        let readers: Vec<_> = rx
            .iter()
            .map(|r| {
                let l = r.listen(0).unwrap();
                std::thread::spawn(move || {
                    let mut s = l.accept().unwrap();
                    let (mut at, mut intact) = (0u64, true);
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        match s.read(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => {
                                intact &= buf[..n]
                                    .iter()
                                    .enumerate()
                                    .all(|(k, &b)| b == byte(at + k as u64));
                                at += n as u64;
                            }
                            Err(e) => panic!("receiver: {e}"),
                        }
                    }
                    (at, intact)
                })
            })
            .collect();
        let to: Vec<SocketAddr> = (1..3)
            .map(|i| SocketAddr::from((names.ip(i), 9000)))
            .collect();
        let mut g = tx
            .connect_group(&to, LagPolicy::PaceOfSlowest, Some(Duration::from_secs(10)))
            .expect("group over the TAP bridge");
        let data: Vec<u8> = (0..len).map(byte).collect();
        std::io::Write::write_all(&mut g, &data).unwrap();
        let reports = g.close(Some(Duration::from_secs(60)));
        for (r, h) in reports.iter().zip(readers) {
            assert_eq!(r.state, MemberState::Done, "{:?}", r.peer);
            assert_eq!(h.join().unwrap(), (len, true));
        }
        assert_eq!(g.bytes_copied(), len);
        // The link sent the shared mbufs by reference (header + indirect payload),
        // never copying a payload (the loop publishes its counters every 100 ms).
        std::thread::sleep(Duration::from_millis(300));
        let link = &tx.stats().loops[0].link;
        assert!(link.tx_datagrams > 2 * len / 1500, "{link:?}");
        assert_eq!(link.payload_copies, 0, "{link:?}");
        drop(g);
        tx.shutdown().unwrap();
        for r in rx {
            r.shutdown().unwrap();
        }
    }
    let leaked: Vec<_> = eal
        .mempool_usage()
        .into_iter()
        .filter(|u| u.in_use != 0)
        .collect();
    assert!(leaked.is_empty(), "mbufs not returned: {leaked:?}");
}
