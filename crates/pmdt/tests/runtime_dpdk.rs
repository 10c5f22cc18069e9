//! The runtime over real DPDK vdevs (needs root and hugepages; `make test` sets
//! them up). One EAL per process, so every test of this binary shares it; a lock
//! runs them one at a time (busy-polling loops on a 2-core machine).
//!
//! - memif between two runtimes in this process: verified transfers, with
//!   impairment, with many connections, in place (written into and read from
//!   mbufs), run to completion (each side's loop driven by its one thread);
//! - TAP ↔ kernel UDP interop both ways (the kernel stack talks to our ARP, IPv4,
//!   UDP and checksums), ICMP echo, and malformed frames injected at the receiver
//!   with a raw socket while a transfer runs.

#![cfg(feature = "dpdk")]

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::process::Command;
use std::sync::{mpsc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use dpdk::{Eal, Mbuf};
use pmdt::link::dpdk_port::{DpdkLink, DpdkLinkConfig, SoftwareUdpChecksum};
use pmdt::link::impair::ImpairConfig;
use pmdt::link::udp::UdpLinkConfig;
use pmdt::link::{Buffer, Link, Outgoing, PayloadSlice, Received};
use pmdt::runtime::{Backend, IoCore, Runtime, RuntimeBuilder, RuntimeStats};
use pmdt::TransportConfig;

mod common;
use common::{data, transfer};

/// Writes of this size exercise packets that cut application writes.
const WRITE: usize = 64 * 1024 + 17;

/// The vdevs of this process. Host-wide names (memif sockets, the TAP interface
/// and its subnet) include the process id, so two runs of this binary at once
/// (two agents, two CI jobs) do not collide.
fn vdevs() -> Vec<String> {
    let pid = std::process::id();
    let memif = |k: u32, role: &str| {
        format!(
            "net_memif{},role={role},socket=/tmp/pmdt-rt-{pid}-{k}.sock,id={}",
            2 * k + (role == "client") as u32,
            k + 3
        )
    };
    vec![
        memif(0, "server"),
        memif(0, "client"),
        memif(1, "server"),
        memif(1, "client"),
        format!("net_tap0,iface={}", tap_iface()),
        memif(2, "server"),
        memif(2, "client"),
        "net_null0".into(),
        memif(3, "server"),
        memif(3, "client"),
        memif(4, "server"),
        memif(4, "client"),
        memif(5, "server"),
        memif(5, "client"),
        // MACs given: memif cannot change them once started.
        memif(6, "server") + ",mac=02:00:00:00:0c:01",
        memif(6, "client") + ",mac=02:00:00:00:0c:02",
        memif(7, "server") + ",mac=02:00:00:00:0e:01",
        memif(7, "client") + ",mac=02:00:00:00:0e:02",
        memif(8, "server"),
        memif(8, "client"),
    ]
}

/// This process's TAP interface (at most 15 characters).
fn tap_iface() -> String {
    format!("pmdtrt{}", std::process::id())
}

/// This process's /30 on the TAP link: 10.64.0.0/10 carved by process id.
fn tap_net() -> [u8; 4] {
    let pid = std::process::id();
    [
        10,
        64 | ((pid >> 14) & 63) as u8,
        (pid >> 6) as u8,
        ((pid & 63) << 2) as u8,
    ]
}

/// The kernel's end of the TAP link.
fn tap_host() -> Ipv4Addr {
    let n = tap_net();
    Ipv4Addr::new(n[0], n[1], n[2], n[3] + 1)
}

/// The DPDK port's end of the TAP link.
fn tap_dpdk() -> Ipv4Addr {
    let n = tap_net();
    Ipv4Addr::new(n[0], n[1], n[2], n[3] + 2)
}

/// Work for the EAL's main-lcore thread.
type MainJob = Box<dyn FnOnce() + Send>;

/// The EAL, initialized on a dedicated thread that stays the main lcore for the
/// whole process (test threads come and go; only the main lcore may launch I/O
/// loops on lcores), and the channel to run work on that thread.
fn main_lcore() -> &'static (Eal, Mutex<mpsc::Sender<MainJob>>) {
    static MAIN: OnceLock<(Eal, Mutex<mpsc::Sender<MainJob>>)> = OnceLock::new();
    MAIN.get_or_init(|| {
        let mut b = Eal::builder()
            .program("pmdt-runtime-test")
            .lcores("0,1")
            .main_lcore(0)
            .no_pci(true)
            .memory_mb(1024)
            .file_prefix(format!("pmdt-rt-test-{}", std::process::id()))
            .log_level("warning");
        for v in vdevs() {
            b = b.vdev(v);
        }
        let (jobs_tx, jobs_rx) = mpsc::channel::<MainJob>();
        let (eal_tx, eal_rx) = mpsc::channel();
        thread::Builder::new()
            .name("eal-main".into())
            .spawn(move || {
                let eal = b
                    .init()
                    .expect("EAL init (root and hugepages needed: run `make setup`)");
                eal_tx.send(eal).unwrap();
                for job in jobs_rx {
                    job();
                }
            })
            .expect("spawn the EAL main thread");
        (eal_rx.recv().expect("EAL init"), Mutex::new(jobs_tx))
    })
}

/// Runs a test body on the main lcore, one test at a time (busy-polling loops on a
/// 2-core machine), then checks that every mempool is full again: no mbuf leaked
/// on any path. A panic in `body` fails the test.
fn on_main(body: impl FnOnce(Eal) + Send + 'static) {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (eal, jobs) = main_lcore();
    let jobs = jobs.lock().unwrap().clone();
    let eal = eal.clone();
    let (tx, rx) = mpsc::channel();
    jobs.send(Box::new(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            body(eal.clone());
            assert_pools_full(&eal);
        }));
        let _ = tx.send(r);
    }))
    .expect("EAL main thread alive");
    if let Err(p) = rx.recv().expect("EAL main thread answered") {
        // The panic's own report went to the output of the test that started
        // the main-lcore thread (libtest captures per thread, and threads
        // inherit the capture of their spawner): repeat its text here, in the
        // failing test's output.
        let text = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("(a panic without a message)");
        panic!("on the main lcore: {text}");
    }
}

/// Every mempool of the process has all its mbufs back.
fn assert_pools_full(eal: &Eal) {
    let leaked: Vec<_> = eal
        .mempool_usage()
        .into_iter()
        .filter(|u| u.in_use != 0)
        .collect();
    assert!(leaked.is_empty(), "mbufs not returned: {leaked:?}");
}

/// Bounds a wait that only a hang would exceed (the condition decides, never the
/// time: a loaded machine only makes the wait longer).
const HANG: Duration = Duration::from_secs(30);

/// The runtime's statistics once `ready` holds for them: they are published by the
/// I/O loops every 100 ms, so figures of what just happened arrive a period (or,
/// on a loaded machine, a few) later.
fn stats_when(rt: &Runtime, ready: impl Fn(&RuntimeStats) -> bool) -> RuntimeStats {
    let deadline = Instant::now() + HANG;
    loop {
        let s = rt.stats();
        if ready(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "statistics never showed what was expected: {s:?}"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

fn transport() -> TransportConfig {
    TransportConfig::default()
        .with_initial_rtt(Duration::from_millis(5))
        .with_idle_timeout(Duration::from_secs(5))
        .with_send_buffer(2 << 20)
        .with_recv_buffer(2 << 20)
}

fn dpdk_runtime(
    eal: &Eal,
    port: &str,
    ip: Ipv4Addr,
    io: IoCore,
    impair: Option<ImpairConfig>,
) -> Runtime {
    dpdk_runtime_mac(eal, port, ip, io, impair, None)
}

fn dpdk_runtime_mac(
    eal: &Eal,
    port: &str,
    ip: Ipv4Addr,
    io: IoCore,
    impair: Option<ImpairConfig>,
    mac: Option<[u8; 6]>,
) -> Runtime {
    let mut b = dpdk_builder(eal, port, ip, io, mac);
    if let Some(c) = impair {
        b = b.impair(c);
    }
    b.start().expect("runtime on a DPDK port")
}

/// A runtime on DPDK port `port` with the tests' transport, not started yet.
fn dpdk_builder(
    eal: &Eal,
    port: &str,
    ip: Ipv4Addr,
    io: IoCore,
    mac: Option<[u8; 6]>,
) -> RuntimeBuilder {
    Runtime::builder()
        .transport(transport())
        .ring_slots(1024)
        .io_core(io)
        .backend(Backend::Dpdk {
            eal: eal.clone(),
            cfg: DpdkLinkConfig {
                port: port.into(),
                ip,
                udp_port: 9000,
                pool_size: 16383,
                mac,
                ..Default::default()
            },
        })
}

#[test]
fn memif_transfers_plain_impaired_and_many_connections() {
    on_main(memif_transfers);
}

fn memif_transfers(eal: Eal) {
    let a = dpdk_runtime(
        &eal,
        "net_memif0",
        Ipv4Addr::new(10, 1, 0, 1),
        IoCore::Lcores {
            eal: eal.clone(),
            ids: vec![1],
        },
        None,
    );
    let b = dpdk_runtime(
        &eal,
        "net_memif1",
        Ipv4Addr::new(10, 1, 0, 2),
        IoCore::Thread { cpu: Some(0) },
        None,
    );
    let to: SocketAddr = "10.1.0.2:9000".parse().unwrap();
    transfer(&a, &b, to, vec![data(8_000_000, 1)], WRITE);
    transfer(
        &a,
        &b,
        to,
        (0..16)
            .map(|i| data(100_000 + i * 999, 20 + i as u64))
            .collect(),
        WRITE,
    );
    // The figures once they show both transfers acknowledged and received.
    let total = 8_000_000 + (0..16).map(|i| 100_000 + i * 999).sum::<u64>();
    let sa = stats_when(&a, |s| s.loops[0].stream_bytes_acked >= total).loops[0].clone();
    let sb = stats_when(&b, |s| s.loops[0].stream_bytes_received >= total).loops[0].clone();
    assert_eq!(
        sa.link.payload_copies, 0,
        "data left from the application's mbufs"
    );
    assert!(
        sa.link.tx_headed > sa.link.tx_datagrams / 2,
        "most frames in one segment, headers in the payload's headroom: {:?}",
        sa.link
    );
    assert!(sa.link.arp_requests_sent >= 1 && sb.link.arp_replies_sent >= 1);
    // The first Init went out once the ARP reply came, not after a timeout.
    assert!(sa.link.arp_held >= 1, "{:?}", sa.link);
    assert_eq!(sa.link.arp_unresolved_drops, 0, "{:?}", sa.link);
    assert!(sa.load.iterations > 0, "the load estimator ran in the loop");

    // The same figures over DPDK telemetry (what dpdk-telemetry.py reads).
    let stats = telemetry("/pmdt/stats");
    let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
    // A runtime's number is its place among those registered: a runtime of an
    // earlier test whose threads were still letting go of it keeps its place.
    let tx = v["/pmdt/stats"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.ends_with("/loop0/link/tx_datagrams"))
        .filter_map(|(_, t)| t.as_u64())
        .max();
    assert!(tx.is_some_and(|t| t > 5000), "{stats}");
    let load = telemetry("/pmdt/load");
    assert!(load.contains("capacity_pps"), "{load}");
    assert!(telemetry("/pmdt/list").contains("\"total\""));
    drop((a, b));

    // The same through loss, reordering and duplication on both directions.
    let imp = ImpairConfig::default()
        .with_loss(0.01)
        .with_reorder(0.03)
        .with_reorder_delay(Duration::from_millis(1))
        .with_duplicate(0.01);
    let a = dpdk_runtime(
        &eal,
        "net_memif2",
        Ipv4Addr::new(10, 2, 0, 1),
        IoCore::Lcores {
            eal: eal.clone(),
            ids: vec![1],
        },
        Some(imp.clone()),
    );
    let b = dpdk_runtime(
        &eal,
        "net_memif3",
        Ipv4Addr::new(10, 2, 0, 2),
        IoCore::Thread { cpu: Some(0) },
        Some(imp.with_seed(7)),
    );
    transfer(
        &a,
        &b,
        "10.2.0.2:9000".parse().unwrap(),
        vec![data(3_000_000, 3)],
        WRITE,
    );
    let sa = stats_when(&a, |s| s.loops[0].stream_bytes_acked >= 3_000_000).loops[0]
        .link
        .clone();
    assert!(sa.impair_lost > 0 && sa.impair_reordered > 0 && sa.impair_duplicated > 0);
    drop((a, b));
}

/// A connection opened while the memif link is still down (its peer's port not
/// started: the other process not there yet, or the interrupt thread's
/// handshake late on a loaded machine) waits for the link: its Init, held for
/// the peer's MAC, is not dropped as unanswered while nobody could answer.
#[test]
fn a_connect_before_the_memif_peer_is_up_waits_for_the_link() {
    on_main(connect_before_the_peer);
}

fn connect_before_the_peer(eal: Eal) {
    let a = dpdk_runtime(
        &eal,
        "net_memif16",
        Ipv4Addr::new(10, 16, 0, 1),
        IoCore::Lcores {
            eal: eal.clone(),
            ids: vec![1],
        },
        None,
    );
    // The peer's port starts only after longer than a frame is held for an
    // unanswered ARP request with the link up.
    let peer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(1500));
        let b = dpdk_builder(
            &eal,
            "net_memif17",
            Ipv4Addr::new(10, 16, 0, 2),
            IoCore::Thread { cpu: Some(0) },
            None,
        )
        .listen_from_start()
        .start()
        .expect("runtime on a DPDK port");
        let mut s = b.listen(0).unwrap().accept().unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        got
    });
    let mut s = a
        .connect("10.16.0.2:9000".parse().unwrap())
        .expect("the connection opened before the link was up");
    s.write_all(&data(200_000, 16)).unwrap();
    s.close().unwrap();
    assert!(
        peer.join().unwrap() == data(200_000, 16),
        "received bytes differ"
    );
    let sa = stats_when(&a, |s| s.loops[0].stream_bytes_acked >= 200_000).loops[0]
        .link
        .clone();
    assert!(sa.arp_held >= 1, "{sa:?}");
    assert_eq!(sa.arp_unresolved_drops, 0, "{sa:?}");
}

/// Sends one command over the EAL's telemetry socket and returns the JSON reply.
fn telemetry(cmd: &str) -> String {
    use std::os::unix::net::UnixStream;
    // SAFETY: returns a static C string owned by the EAL.
    let dir = unsafe { std::ffi::CStr::from_ptr(dpdk::sys::rte_eal_get_runtime_dir()) }
        .to_string_lossy()
        .into_owned();
    let path = format!("{dir}/dpdk_telemetry.v2");
    // SAFETY: a SOCK_SEQPACKET unix socket connected to the telemetry path; the fd
    // is handed to UnixStream, which closes it.
    let mut s = unsafe {
        use std::os::fd::FromRawFd;
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0);
        assert!(fd >= 0);
        let mut addr: libc::sockaddr_un = std::mem::zeroed();
        addr.sun_family = libc::AF_UNIX as u16;
        for (i, b) in path.bytes().enumerate() {
            addr.sun_path[i] = b as libc::c_char;
        }
        let r = libc::connect(
            fd,
            &addr as *const _ as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_un>() as u32,
        );
        assert_eq!(r, 0, "connect to {path}");
        UnixStream::from_raw_fd(fd)
    };
    let mut buf = vec![0u8; 64 * 1024];
    let _hello = s.read(&mut buf).unwrap();
    s.write_all(cmd.as_bytes()).unwrap();
    let n = s.read(&mut buf).unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn ip(args: &str) {
    let st = Command::new("ip")
        .args(args.split_whitespace())
        .status()
        .expect("ip(8)");
    assert!(st.success(), "ip {args} failed");
}

/// Sends raw Ethernet frames out of interface `ifname` (they arrive at the TAP port).
fn inject(ifname: &str, frames: &[Vec<u8>]) {
    let c = std::ffi::CString::new(ifname).unwrap();
    // SAFETY: plain socket calls with valid arguments; the fd is closed at the end.
    unsafe {
        let idx = libc::if_nametoindex(c.as_ptr());
        assert!(idx > 0, "no interface {ifname}");
        let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0);
        assert!(fd >= 0, "AF_PACKET socket");
        let mut sll: libc::sockaddr_ll = std::mem::zeroed();
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_ifindex = idx as i32;
        sll.sll_halen = 6;
        for f in frames {
            let r = libc::sendto(
                fd,
                f.as_ptr() as *const libc::c_void,
                f.len(),
                0,
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            );
            assert_eq!(r, f.len() as isize, "raw send");
        }
        libc::close(fd);
    }
}

/// Sends an ICMP echo request to `to` from the host and waits for the reply.
fn ping(to: Ipv4Addr) -> bool {
    use etherparse::{IcmpEchoHeader, Icmpv4Header, Icmpv4Type};
    let icmp = Icmpv4Header::with_checksum(
        Icmpv4Type::EchoRequest(IcmpEchoHeader { id: 0x4242, seq: 1 }),
        b"pmdt",
    );
    let mut pkt = icmp.to_bytes().to_vec();
    pkt.extend_from_slice(b"pmdt");
    // SAFETY: raw ICMP socket calls with valid buffers; closed at the end.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP);
        assert!(fd >= 0);
        let tv = libc::timeval {
            tv_sec: 0,
            tv_usec: 200_000,
        };
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &tv as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as u32,
        );
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as u16,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes(to.octets()),
            },
            sin_zero: [0; 8],
        };
        let mut ok = false;
        // Asks again every 200 ms until answered (a loaded machine may take a
        // while to resolve the port's MAC and run its loop).
        let deadline = Instant::now() + HANG;
        while Instant::now() < deadline {
            libc::sendto(
                fd,
                pkt.as_ptr() as *const libc::c_void,
                pkt.len(),
                0,
                &sin as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_in>() as u32,
            );
            let mut buf = [0u8; 256];
            let n = libc::recv(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len(), 0);
            if n >= 28 {
                let ihl = (buf[0] & 0xf) as usize * 4;
                // An echo reply (type 0) from `to` with our identifier.
                if buf[12..16] == to.octets()
                    && buf[ihl] == 0
                    && buf[ihl + 4..ihl + 6] == [0x42, 0x42]
                {
                    ok = true;
                    break;
                }
            }
        }
        libc::close(fd);
        ok
    }
}

fn junk_frames(dst_mac: [u8; 6]) -> Vec<Vec<u8>> {
    use etherparse::PacketBuilder;
    let src_mac = [2, 0, 0, 0, 0, 0x99];
    let mut frames = Vec::new();
    // Random bytes.
    frames.push(data(80, 99));
    // Truncated IPv4 header to our MAC.
    let mut t = dst_mac.to_vec();
    t.extend_from_slice(&src_mac);
    t.extend_from_slice(&[0x08, 0x00, 0x45, 0x00, 0x00, 0x14]);
    frames.push(t);
    // A UDP datagram for us with a wrong checksum.
    let b = PacketBuilder::ethernet2(src_mac, dst_mac)
        .ipv4(tap_host().octets(), tap_dpdk().octets(), 64)
        .udp(5555, 9000);
    let mut f = Vec::new();
    b.write(&mut f, &data(100, 5)).unwrap();
    let last = f.len() - 1;
    f[last] ^= 0xff;
    frames.push(f);
    // A well-formed UDP datagram whose payload is not pmdt (its first byte is
    // neither a long header's nor a short header's: text starting with a letter
    // may look like a short header, and counts as for an unknown connection).
    let b = PacketBuilder::ethernet2(src_mac, dst_mac)
        .ipv4(tap_host().octets(), tap_dpdk().octets(), 64)
        .udp(5555, 9000);
    let mut f = Vec::new();
    b.write(&mut f, b"# definitely not a pmdt header, just bytes")
        .unwrap();
    frames.push(f);
    frames
}

#[test]
fn tap_interop_with_kernel_udp_both_ways_ping_and_junk() {
    on_main(tap_interop);
}

fn tap_interop(eal: Eal) {
    const MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x77, 0x00, 0x02];
    let (host, dpdk_ip, iface) = (tap_host(), tap_dpdk(), tap_iface());
    let dp = dpdk_runtime_mac(
        &eal,
        "net_tap0",
        dpdk_ip,
        IoCore::Lcores {
            eal: eal.clone(),
            ids: vec![1],
        },
        None,
        Some(MAC),
    );
    ip(&format!("addr replace {host}/30 dev {iface}"));
    ip(&format!("link set {iface} up"));
    let kernel = Runtime::builder()
        .transport(transport())
        .backend(Backend::Udp(UdpLinkConfig {
            bind: SocketAddr::from((host, 0)),
            ..Default::default()
        }))
        .start()
        .unwrap();

    // Quiet, the DPDK loop parks on the TAP queue's interrupt (the wake path)
    // instead of napping; the echo request and the transfers below wake it.
    let parked = stats_when(&dp, |s| s.loops[0].idle_parks > 0).loops[0].idle_parks;
    assert!(ping(dpdk_ip), "the DPDK port answers ICMP echo");

    // Kernel UDP → DPDK, with junk frames injected at the receiver meanwhile.
    let mac = {
        let out = Command::new("ip")
            .args(["neigh", "show", &dpdk_ip.to_string()])
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&out.stdout).to_string();
        let m = s
            .split_whitespace()
            .skip_while(|w| *w != "lladdr")
            .nth(1)
            .map(str::to_string);
        m.expect("the kernel resolved the DPDK port's MAC by ARP")
    };
    let mac: Vec<u8> = mac
        .split(':')
        .map(|h| u8::from_str_radix(h, 16).unwrap())
        .collect();
    assert_eq!(mac, MAC, "the kernel learned the configured MAC by ARP");
    let junk = junk_frames(mac.clone().try_into().unwrap());
    let tap = iface.clone();
    // Rounds of junk go in while the transfer runs, and on until the port has
    // counted 20 of each kind: the TAP device drops frames the loop has not
    // taken yet when its queue is full (a loaded machine), so how many of the
    // first rounds arrive is not ours to fix; that each one counts is.
    let counted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let enough = counted.clone();
    let injector = thread::spawn(move || {
        let mut rounds = 0;
        while rounds < 20 || !enough.load(std::sync::atomic::Ordering::Acquire) {
            inject(&tap, &junk);
            rounds += 1;
            thread::sleep(Duration::from_millis(10));
        }
    });
    transfer(
        &kernel,
        &dp,
        SocketAddr::from((dpdk_ip, 9000)),
        vec![data(4_000_000, 8)],
        WRITE,
    );
    let s = stats_when(&dp, |s| {
        let (l, e) = (&s.loops[0].link, &s.loops[0].endpoint);
        s.loops[0].stream_bytes_received >= 4_000_000
            && l.rx_malformed >= 20
            && l.rx_not_for_us >= 20
            && l.rx_bad_checksum >= 20
            && e.malformed >= 20
    });
    counted.store(true, std::sync::atomic::Ordering::Release);
    injector.join().unwrap();
    let s = s.loops[0].clone();
    assert!(s.link.rx_malformed >= 20, "{:?}", s.link);
    assert!(s.link.rx_not_for_us >= 20, "{:?}", s.link);
    assert!(s.link.rx_bad_checksum >= 20, "{:?}", s.link);
    assert!(s.endpoint.malformed >= 20, "{:?}", s.endpoint);
    assert!(s.link.icmp_echo_replies >= 1);
    assert!(s.idle_parks > parked, "the loop parked once only: {s:?}");

    // DPDK → kernel UDP.
    let kernel_addr = kernel.local_addr();
    let started = Instant::now();
    transfer(&dp, &kernel, kernel_addr, vec![data(4_000_000, 9)], WRITE);
    assert!(started.elapsed() < Duration::from_secs(60));
    drop((dp, kernel));
}

#[test]
fn an_unknown_port_fails_with_the_dpdk_error_inside() {
    on_main(unknown_port);
}

fn unknown_port(eal: Eal) {
    let err = Runtime::builder()
        .transport(transport())
        .backend(Backend::Dpdk {
            eal: eal.clone(),
            cfg: DpdkLinkConfig {
                port: "net_no_such_port".into(),
                ip: Ipv4Addr::new(10, 99, 0, 1),
                ..Default::default()
            },
        })
        .start()
        .err()
        .expect("a runtime on a port that does not exist");
    // The DPDK error itself, not its text: callers can match its kind.
    let source = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<dpdk::Error>())
        .unwrap_or_else(|| panic!("no dpdk::Error inside {err:?}"));
    assert_eq!(source.kind(), dpdk::ErrorKind::NotFound, "{source}");
    assert!(err.to_string().contains("net_no_such_port"), "{err}");
    assert_pools_full(&eal);
}

#[test]
fn two_queue_pairs_two_io_loops_each_with_its_own_connections() {
    on_main(two_queue_pairs);
}

fn two_queue_pairs(eal: Eal) {
    let mk = |port: &str, ip: Ipv4Addr, cpu| {
        Runtime::builder()
            .transport(transport())
            .ring_slots(1024)
            .io_core(IoCore::Thread { cpu: Some(cpu) })
            .backend(Backend::Dpdk {
                eal: eal.clone(),
                cfg: DpdkLinkConfig {
                    port: port.into(),
                    ip,
                    udp_port: 9000,
                    queues: 2,
                    pool_size: 16383,
                    ..Default::default()
                },
            })
            .start()
            .expect("two-queue runtime")
    };
    // Loop i drives queue pair i; memif carries queue i to the peer's queue i, so
    // each loop owns the connections it opened or accepted on its queue.
    let a = mk("net_memif4", Ipv4Addr::new(10, 4, 0, 1), 0);
    let b = mk("net_memif5", Ipv4Addr::new(10, 4, 0, 2), 0);
    let to: SocketAddr = "10.4.0.2:9000".parse().unwrap();
    transfer(
        &a,
        &b,
        to,
        (0..4).map(|i| data(1_000_000, 40 + i)).collect(),
        WRITE,
    );
    let sb = stats_when(&b, |s| {
        s.loops.iter().map(|l| l.stream_bytes_received).sum::<u64>() >= 4_000_000
    });
    let sa = a.stats();
    assert_eq!(sa.loops.len(), 2);
    assert_eq!(sb.loops.len(), 2);
    for (i, l) in sb.loops.iter().enumerate() {
        assert!(
            l.link.rx_datagrams > 1000,
            "queue {i} of the receiver carried its connections: {:?}",
            l.link
        );
        assert!(l.link_name.contains(&format!("q{i}")));
        assert_eq!(
            l.endpoint.connections_opened, 2,
            "two of the four connections each"
        );
    }
}

/// A datagram to `to`:9000 of `b"hdr"` then the first `len` bytes of `buf`.
fn hdr_then(buf: &Buffer, len: usize, to: Ipv4Addr) -> Outgoing<'_> {
    Outgoing {
        to: SocketAddr::from((to, 9000)),
        header: b"hdr",
        payload: Some(PayloadSlice { buf, start: 0, len }),
    }
}

/// Issue 11 item 27: a port without `RTE_ETH_TX_OFFLOAD_MULTI_SEGS` (net_null here)
/// must not be handed header + payload chains (simple tx paths of real NICs send and
/// free only the first segment). Issue 15: a payload that is all of its mbuf still
/// leaves uncopied, the headers in its headroom (one segment); only a part of a
/// buffer is copied behind the headers. (Ports that offer MULTI_SEGS, memif and TAP
/// above, chain that part instead: their `payload_copies` stay 0.)
#[test]
fn ports_without_multi_segs_send_single_segment_frames() {
    on_main(|eal| {
        let peer = Ipv4Addr::new(10, 9, 0, 2);
        let mut links = DpdkLink::open(
            &eal,
            &DpdkLinkConfig {
                port: "net_null0".into(),
                ip: Ipv4Addr::new(10, 9, 0, 1),
                pool_size: 1023,
                static_arp: vec![(peer, [2, 0, 0, 0, 9, 2])],
                ..Default::default()
            },
        )
        .unwrap();
        let mut link = links.pop().unwrap();
        assert!(!link.chains_payload(), "net_null offers no MULTI_SEGS");
        let now = Instant::now();
        let buf = link.pool().copy_from(b"payload bytes", 100).unwrap();
        assert!(link.send(now, hdr_then(&buf, 13, peer)));
        link.flush(now);
        let st = link.stats();
        assert_eq!(st.tx_datagrams, 1);
        assert_eq!(st.tx_headed, 1, "headers in the payload's headroom");
        assert_eq!(st.payload_copies, 0, "{st:?}");
        // A part of the buffer: copied behind the headers, not chained.
        let part = Outgoing {
            to: SocketAddr::from((peer, 9000)),
            header: b"hdr",
            payload: Some(PayloadSlice {
                buf: &buf,
                start: 2,
                len: 5,
            }),
        };
        assert!(link.send(now, part));
        link.flush(now);
        let st = link.stats();
        assert_eq!(st.tx_datagrams, 2);
        assert_eq!(st.tx_headed, 1);
        assert_eq!(st.payload_copies, 1, "{st:?}");
        let pool = link.pool().clone();
        drop((buf, link));
        assert_eq!(pool.available(), pool.capacity(), "no buffer held");
    });
}

/// One queue of `port` (a small pool), its peer's MAC given.
fn static_arp_link(
    eal: &Eal,
    port: &str,
    ip: Ipv4Addr,
    peer: (Ipv4Addr, [u8; 6]),
    udp: SoftwareUdpChecksum,
) -> DpdkLink {
    let mut links = DpdkLink::open(
        eal,
        &DpdkLinkConfig {
            port: port.into(),
            ip,
            pool_size: 1023,
            static_arp: vec![peer],
            software_udp_checksum: udp,
            ..Default::default()
        },
    )
    .unwrap();
    links.pop().unwrap()
}

/// A memif port told to omit the UDP checksum sends 0 in its place and sums
/// no payload; the peer, computing as by default, accepts it and answers with
/// a checksum. The frames are read as they arrived.
#[test]
fn memif_without_udp_checksums_sends_zero_and_is_accepted() {
    on_main(|eal| {
        let (ip_a, ip_b) = (Ipv4Addr::new(10, 12, 0, 1), Ipv4Addr::new(10, 12, 0, 2));
        let (mac_a, mac_b) = ([2, 0, 0, 0, 12, 1], [2, 0, 0, 0, 12, 2]);
        let open = |port: &str, ip, mac: [u8; 6], peer, peer_mac, udp: SoftwareUdpChecksum| {
            let link = static_arp_link(&eal, port, ip, (peer, peer_mac), udp);
            assert_eq!(link.mac(), mac);
            link
        };
        let mut a = open(
            "net_memif12",
            ip_a,
            mac_a,
            ip_b,
            mac_b,
            SoftwareUdpChecksum::Omit,
        );
        let mut b = open(
            "net_memif13",
            ip_b,
            mac_b,
            ip_a,
            mac_a,
            SoftwareUdpChecksum::Compute,
        );
        assert!(
            !a.checksum_offloaded() && !b.checksum_offloaded(),
            "memif offloads nothing"
        );
        let payload: Vec<u8> = (0..1200u32).map(|i| (i * 31 + 7) as u8).collect();
        // Sends from `from` until `to` receives (the memif pair connects a
        // moment after the ports start); the datagram and its UDP checksum.
        let exchange = |from: &mut DpdkLink, to: &mut DpdkLink, dst: Ipv4Addr| {
            let buf = from.pool().copy_from(&payload, payload.len()).unwrap();
            let mut got: Vec<Received> = Vec::new();
            let until = Instant::now() + Duration::from_secs(10);
            while got.is_empty() && Instant::now() < until {
                let now = Instant::now();
                assert!(from.send(now, hdr_then(&buf, payload.len(), dst)));
                from.flush(now);
                thread::sleep(Duration::from_millis(1));
                to.recv(Instant::now(), &mut got, 32);
            }
            let r = got.pop().expect("the memif pair carried a datagram");
            assert_eq!(r.payload()[..3], *b"hdr");
            assert_eq!(r.payload()[3..], payload[..]);
            let frame = r.buf.bytes();
            let ck = u16::from_be_bytes([frame[r.start - 2], frame[r.start - 1]]);
            drop((got, r, buf));
            ck
        };
        assert_eq!(exchange(&mut a, &mut b, ip_b), 0, "no UDP checksum from a");
        assert_ne!(exchange(&mut b, &mut a, ip_a), 0, "b computes its own");
        let (sa, sb) = (a.stats(), b.stats());
        assert_eq!(sa.tx_payload_sums_reused, 0, "a summed no payload");
        assert_eq!(sa.rx_bad_checksum + sb.rx_bad_checksum, 0);
        drop((a, b));
    });
}

/// A data frame leaves in one segment, its headers written into the headroom of
/// the payload's own mbuf, when nothing else holds that mbuf. A payload an
/// earlier frame still holds (a retransmission whose first copy has not left the
/// device) gets a header mbuf of its own instead: no frame's headers change
/// under the device. Every frame arrives intact, checksums valid.
#[test]
fn a_payload_nothing_else_holds_leaves_in_one_segment() {
    on_main(|eal| {
        let (ip_a, ip_b) = (Ipv4Addr::new(10, 14, 0, 1), Ipv4Addr::new(10, 14, 0, 2));
        let (mac_a, mac_b) = ([2, 0, 0, 0, 14, 1], [2, 0, 0, 0, 14, 2]);
        let compute = SoftwareUdpChecksum::Compute;
        let mut a = static_arp_link(&eal, "net_memif14", ip_a, (ip_b, mac_b), compute);
        let mut b = static_arp_link(&eal, "net_memif15", ip_b, (ip_a, mac_a), compute);
        assert!(a.chains_payload(), "memif takes chains");
        let payload: Vec<u8> = (0..1400u32).map(|i| (i * 13 + 5) as u8).collect();
        let buf = a.pool().copy_from(&payload, payload.len()).unwrap();
        let until = Instant::now() + HANG;
        let mut got: Vec<Received> = Vec::new();
        // The memif pair connects a moment after the ports start.
        while got.is_empty() && Instant::now() < until {
            let now = Instant::now();
            assert!(a.send(now, hdr_then(&buf, payload.len(), ip_b)));
            a.flush(now);
            thread::sleep(Duration::from_millis(1));
            b.recv(Instant::now(), &mut got, 32);
        }
        assert!(!got.is_empty(), "the memif pair carried a datagram");
        let check = |got: &mut Vec<Received>| {
            for r in got.drain(..) {
                assert_eq!(r.payload()[..3], *b"hdr");
                assert_eq!(r.payload()[3..], payload[..]);
            }
        };
        check(&mut got);
        let counts = |l: &DpdkLink| {
            let s = l.stats();
            (s.tx_datagrams, s.tx_headed)
        };
        // A frame the device has not taken yet (a burst the memif ring refused
        // while the pair connected) still holds the payload: wait until every
        // earlier frame has left, so "alone" is alone.
        let wait_released = |a: &mut DpdkLink| {
            while buf.with(|m: &Mbuf| m.refcnt()) != Some(1) {
                assert!(
                    Instant::now() < until,
                    "the device never released the payload"
                );
                a.flush(Instant::now());
                thread::sleep(Duration::from_millis(1));
            }
        };

        // Alone: one segment.
        wait_released(&mut a);
        // Frames the connecting loop sent after the first one may still wait in
        // b's ring (memif's ring is shared memory: a frame the device took is
        // already there). Take them all now, so only the frames below are counted.
        loop {
            let before = got.len();
            b.recv(Instant::now(), &mut got, 32);
            if got.len() == before {
                break;
            }
        }
        check(&mut got);
        let (sent, headed) = counts(&a);
        let now = Instant::now();
        assert!(a.send(now, hdr_then(&buf, payload.len(), ip_b)));
        a.flush(now);
        assert_eq!(counts(&a), (sent + 1, headed + 1), "{:?}", a.stats());

        // Twice in one burst: the second finds the first holding the payload.
        wait_released(&mut a);
        let now = Instant::now();
        assert!(a.send(now, hdr_then(&buf, payload.len(), ip_b)));
        assert!(a.send(now, hdr_then(&buf, payload.len(), ip_b)));
        a.flush(now);
        assert_eq!(counts(&a), (sent + 3, headed + 2), "{:?}", a.stats());

        while got.len() < 3 && Instant::now() < until {
            b.recv(Instant::now(), &mut got, 32);
        }
        assert_eq!(got.len(), 3, "every frame arrived");
        check(&mut got);
        assert_eq!(b.stats().rx_bad_checksum, 0);
        assert_eq!(b.stats().rx_malformed, 0);
        drop((got, buf, a, b));
    });
}

/// Issue 11 item 1: many flows with the default idle policy through a pool far
/// smaller than their buffers (16 flows × 2 MiB each way against 4,095 mbufs),
/// readers starting late. Before the fixes, receive storage and readers' rings
/// exhausted the pool, acks and headers could not be allocated and the flows
/// crawled or timed out; then the first connections to arrive could still commit
/// the whole pool between them (each kept the equal share it got on arrival), so
/// later datagrams, handshakes included, were dropped and connections died
/// half-open (`sim_runtime::sixteen_flows_through_a_small_pool_with_late_readers`
/// reproduces it deterministically). Every flow must finish intact, nothing may
/// be dropped for want of a buffer, no flow may starve, and every mbuf must come
/// back.
#[test]
fn many_flows_through_a_small_pool_finish_and_share() {
    on_main(many_flows_small_pool);
}

fn many_flows_small_pool(eal: Eal) {
    let small = |port: &str, ip: Ipv4Addr, io: IoCore| {
        Runtime::builder()
            .transport(transport())
            .io_core(io)
            .backend(Backend::Dpdk {
                eal: eal.clone(),
                cfg: DpdkLinkConfig {
                    port: port.into(),
                    ip,
                    udp_port: 9000,
                    pool_size: 4095,
                    ..Default::default()
                },
            })
            .start()
            .expect("runtime on a DPDK port")
    };
    let a = small(
        "net_memif6",
        Ipv4Addr::new(10, 6, 0, 1),
        IoCore::Lcores {
            eal: eal.clone(),
            ids: vec![1],
        },
    );
    let b = small(
        "net_memif7",
        Ipv4Addr::new(10, 6, 0, 2),
        IoCore::Thread { cpu: Some(0) },
    );
    const FLOWS: usize = 16;
    const BYTES: usize = 1_500_000;
    let listener = b.listen(0).unwrap();
    let readers = thread::spawn(move || {
        // Readers start late (as a slow application does): meanwhile the flows'
        // data fills every buffer the receiver grants, which without a memory
        // budget is far more than its pool.
        let streams: Vec<_> = (0..FLOWS).map(|_| listener.accept().unwrap()).collect();
        thread::sleep(Duration::from_millis(300));
        let hs: Vec<_> = streams
            .into_iter()
            .map(|mut s| {
                thread::spawn(move || {
                    let t0 = Instant::now();
                    let mut v = Vec::new();
                    s.read_to_end(&mut v).unwrap();
                    (v, t0.elapsed())
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    let to: SocketAddr = "10.6.0.2:9000".parse().unwrap();
    let writers: Vec<_> = (0..FLOWS)
        .map(|i| {
            let mut s = a.connect(to).unwrap();
            thread::spawn(move || {
                let d = data(BYTES, 100 + i as u64);
                for part in d.chunks(WRITE) {
                    s.write_all(part).unwrap();
                }
                s.close().unwrap();
                d
            })
        })
        .collect();
    let mut sent: Vec<Vec<u8>> = writers.into_iter().map(|h| h.join().unwrap()).collect();
    let got = readers.join().unwrap();
    let rates: Vec<f64> = got
        .iter()
        .map(|(v, t)| v.len() as f64 / t.as_secs_f64().max(1e-6))
        .collect();
    let mut got: Vec<Vec<u8>> = got.into_iter().map(|(v, _)| v).collect();
    sent.sort();
    got.sort();
    assert!(got == sent, "every flow arrives intact");
    // No flow starves. Each rate runs from its reader's late start, so the first
    // flows' buffered data inflates theirs (the first may have arrived whole
    // before its reader started): the slowest is compared with the median, and
    // only a starved flow (orders of magnitude slower) fails this; fairness
    // figures belong to the benchmarks.
    let mut sorted = rates.clone();
    sorted.sort_by(f64::total_cmp);
    let (lo, median) = (sorted[0], sorted[sorted.len() / 2]);
    assert!(lo * 50.0 >= median, "a flow starved: rates {rates:?}");
    let all = (FLOWS * BYTES) as u64;
    let sa = stats_when(&a, |s| s.loops[0].stream_bytes_acked >= all);
    let sb = stats_when(&b, |s| s.loops[0].stream_bytes_received >= all);
    for (side, st) in [("sender", &sa), ("receiver", &sb)] {
        let l = &st.loops[0].link;
        assert_eq!(l.tx_no_buffer, 0, "{side} ran out of buffers: {l:?}");
    }
    drop((a, b));
}

/// In-place I/O over memif: the sender fills mbufs it reserved from the port's
/// pool and submits them (they leave chained behind the headers, not copied), the
/// receiver reads payloads in the mbufs they arrived in; every byte checked, every
/// mbuf back in its pool at the end (checked by `on_main`).
#[test]
fn memif_in_place_io_writes_into_and_reads_from_mbufs() {
    on_main(memif_in_place);
}

fn memif_in_place(eal: Eal) {
    let a = dpdk_runtime(
        &eal,
        "net_memif8",
        Ipv4Addr::new(10, 8, 0, 1),
        IoCore::Lcores {
            eal: eal.clone(),
            ids: vec![1],
        },
        None,
    );
    let b = dpdk_runtime(
        &eal,
        "net_memif9",
        Ipv4Addr::new(10, 8, 0, 2),
        IoCore::Thread { cpu: Some(0) },
        None,
    );
    let payload = data(4_000_000, 77);
    let listener = b.listen(0).unwrap();
    let reader = thread::spawn(move || {
        let mut s = listener.accept().unwrap();
        let mut got = Vec::new();
        while let Some(seg) = s.read_segment().unwrap() {
            got.extend_from_slice(&seg);
        }
        got
    });
    let mut s = a.connect("10.8.0.2:9000".parse().unwrap()).unwrap();
    // memif has no checksum offload: its payloads are summed in software (so a
    // copying write, which sums as it copies, costs no more than this).
    assert!(s.sums_payloads());
    let mut at = 0;
    while at < payload.len() {
        let mut buf = s.reserve().unwrap();
        at += buf.put(&payload[at..]);
        s.submit(buf).unwrap();
    }
    s.close().unwrap();
    let got = reader.join().unwrap();
    assert_eq!(got.len(), payload.len());
    assert!(got == payload, "received bytes differ");
    let sent = payload.len() as u64;
    let link = stats_when(&a, |s| s.loops[0].stream_bytes_acked >= sent).loops[0]
        .link
        .clone();
    assert_eq!(
        link.payload_copies, 0,
        "payloads left from the mbufs they were written into"
    );
    // memif has no checksum offload: the sums the writer stamped were used.
    assert!(link.tx_payload_sums_reused > 0, "{link:?}");
    assert!(link.tx_headed > 0, "{link:?}");
    drop(s);
    drop((a, b));
}

/// Run-to-completion over memif: no I/O lcore or thread; each side's one thread
/// runs its loop inside its own stream calls. Every byte checked, every mbuf back.
#[test]
fn memif_run_to_completion_one_thread_per_side() {
    on_main(memif_run_to_completion);
}

fn memif_run_to_completion(eal: Eal) {
    let caller = |eal: &Eal, port: &str, ip: Ipv4Addr| {
        Runtime::builder()
            .transport(transport())
            .io_core(IoCore::Caller { cpu: None })
            .backend(Backend::Dpdk {
                eal: eal.clone(),
                cfg: DpdkLinkConfig {
                    port: port.into(),
                    ip,
                    udp_port: 9000,
                    pool_size: 16383,
                    ..Default::default()
                },
            })
            .start()
            .expect("runtime on a DPDK port")
    };
    let payload = data(6_000_000, 55);
    let want = payload.clone();
    let far_eal = eal.clone();
    let (ready_tx, ready_rx) = mpsc::channel();
    let far = thread::spawn(move || {
        // The memif server first: the client connects to its socket.
        let b = caller(&far_eal, "net_memif10", Ipv4Addr::new(10, 11, 0, 2));
        let listener = b.listen(0).unwrap();
        ready_tx.send(()).unwrap();
        let mut s = listener.accept().unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        drop((s, listener));
        b.shutdown().unwrap();
        got
    });
    ready_rx.recv().unwrap();
    let a = caller(&eal, "net_memif11", Ipv4Addr::new(10, 11, 0, 1));
    let mut s = a.connect("10.11.0.2:9000".parse().unwrap()).unwrap();
    for part in payload.chunks(WRITE) {
        s.write_all(part).unwrap();
    }
    s.close().unwrap();
    let got = far.join().unwrap();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "received bytes differ");
    drop(s);
    a.shutdown().unwrap();
}
