//! Options every tool shares for its link: `--backend dpdk|udp`, the EAL and port
//! (vdevs, PCI devices, lcores, memory), addresses, and raw EAL arguments. The
//! defaults make the one-host demo work with no options: the receiver is the memif
//! server, the sender the client, each pinned to its own core.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use dpdk::{Eal, EalBuilder};
use pmdt::link::dpdk_port::{DpdkLinkConfig, SoftwareUdpChecksum};
use pmdt::link::udp::UdpLinkConfig;
use pmdt::proto::TransportConfig;
use pmdt::runtime::{Backend, IdlePolicy, IoCore, MemoryBudget, PoolSplit, RuntimeBuilder};
use serde::{Deserialize, Serialize};

use crate::cli_error::{self, CliError};
use crate::eal_args::EalArgs;
use crate::peer_addr::Family;
use crate::pool_split_arg::{DataFlow, PoolSplitArg};

/// Which link the runtime drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// A DPDK port (vdev or PCI device).
    #[default]
    Dpdk,
    /// A kernel UDP socket.
    Udp,
}

/// Which end of the demo link a tool is (picks the defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// pmdt-recv: memif server, 10.88.0.2, I/O on CPU 1.
    Receiver,
    /// pmdt-send: memif client, 10.88.0.1, I/O on CPU 0.
    Sender,
}

/// The default memif socket shared by the demo's two processes.
pub const DEMO_SOCKET: &str = "/tmp/pmdt-demo.sock";

/// Upper bound of the default packet pool (mbufs); --memory-mb usually binds first.
const MAX_DEFAULT_POOL: u64 = (1 << 20) - 1;

/// Link options.
#[derive(Debug, Clone, Args, Serialize, Deserialize, Default)]
#[serde(default)]
#[command(next_help_heading = "Link")]
pub struct LinkArgs {
    /// Link backend.
    #[arg(long, value_enum, default_value_t = BackendKind::Dpdk)]
    pub backend: BackendKind,
    #[command(flatten)]
    #[serde(flatten)]
    pub dpdk: EalArgs,
    /// DPDK port: device name or port id (default: the first vdev or PCI device).
    #[arg(long)]
    pub port: Option<String>,
    /// Receive queues of the DPDK port, each driven by its own I/O loop and lcore
    /// (testpmd's --rxq; pmdt drives queue pairs, so it equals --txq).
    #[arg(long, value_name = "N")]
    pub rxq: Option<u16>,
    /// Transmit queues of the DPDK port (testpmd's --txq; equals --rxq).
    #[arg(long, value_name = "N")]
    pub txq: Option<u16>,
    /// Datagrams per receive burst of the I/O loop (testpmd's --burst).
    #[arg(long, default_value_t = 32, value_name = "N")]
    pub burst: usize,
    /// Our IPv4 address on the DPDK port (default: receiver 10.88.0.2, sender 10.88.0.1).
    #[arg(long)]
    pub ip: Option<Ipv4Addr>,
    /// Our MAC address on the DPDK port (default: the device's).
    #[arg(long)]
    pub mac: Option<String>,
    /// Our UDP port (default: receiver 9000, sender 9001).
    #[arg(long)]
    pub udp_port: Option<u16>,
    /// Static ARP entry IP=MAC, repeatable (peers are otherwise resolved by ARP).
    #[arg(long = "arp", value_name = "IP=MAC")]
    pub arp: Vec<String>,
    /// Link MTU (e.g. 9000 for jumbo frames; the default UDP payload follows it).
    #[arg(long)]
    pub mtu: Option<u16>,
    /// Mbufs in the packet pool (default: as many as fit in three quarters of
    /// --memory-mb: 165,564 at MTU 1500 with the default 512 MiB).
    #[arg(long)]
    pub pool_size: Option<u32>,
    /// How the packet pool is divided between data received and data sent
    /// (default: from the direction of the data: pmdt-send sending, with -R
    /// receiving, with --bidir or --rr both; pmdt-recv receiving, so a server
    /// whose clients ask for -R or --bidir over long paths wants `both`).
    #[arg(long, value_enum)]
    pub pool_split: Option<PoolSplitArg>,
    /// Do not use the port's checksum offloads.
    #[arg(long)]
    pub no_offload: bool,
    /// DPDK ports without checksum offload: send UDP datagrams without a
    /// checksum (0, as RFC 768 allows over IPv4), as Linux's loopback device
    /// does. Only for links whose frames never leave the host's memory (memif
    /// between two processes): it saves a pass over every payload byte, and
    /// nothing but the link layer's CRC would then catch a corrupted payload.
    #[arg(long)]
    pub no_udp_checksum: bool,
    /// UDP backend: local address to bind (default: receiver 0.0.0.0:9000, sender
    /// 0.0.0.0:0).
    #[arg(long)]
    pub bind: Option<SocketAddr>,
    /// Write every datagram sent and received to this pcap file.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Busy-poll the I/O core (lowest latency). By default a quiet I/O loop
    /// backs off: it parks until a datagram comes over kernel UDP and TAP, and
    /// naps in short steps over memif.
    #[arg(long)]
    pub busy_poll: bool,
    /// Run to completion (the default with one queue): no I/O lcore or thread;
    /// the flows' thread runs the I/O loop inside its reads and writes (one
    /// core per side does everything, no hand-off between threads). One queue.
    /// One thread serves every flow (pmdt-send's bulk flows, every connection
    /// pmdt-recv receives), as iperf3's select loop does; see
    /// `--thread-per-flow`.
    #[arg(long = "run-to-completion", visible_alias = "rtc")]
    pub run_to_completion: bool,
    /// A thread per flow (how the tools ran before one thread served all the
    /// flows): in run to completion each runs the I/O loop in its own calls,
    /// taking turns at it (over memif on the 2-vCPU reference host 1000 flows
    /// moved half the bytes and 16 flows two thirds, docs/RESULTS.md
    /// "Session 79"); in the pipeline each parks while its stream cannot
    /// move (256 flows moved a third, docs/RESULTS.md "Session 80").
    #[arg(long)]
    pub thread_per_flow: bool,
    /// Pipeline (the default with several queues): an I/O lcore (or thread) per
    /// queue runs the I/O loop, the flows' threads hand data to it through rings.
    #[arg(long, conflicts_with = "run_to_completion")]
    pub pipeline: bool,
}

/// How the flows' threads and the I/O loop share the cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoMode {
    /// The flows' threads run the I/O loop themselves.
    RunToCompletion,
    /// An I/O lcore or thread per queue; rings to and from the flows' threads.
    Pipeline,
}

impl std::fmt::Display for IoMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IoMode::RunToCompletion => "run-to-completion",
            IoMode::Pipeline => "pipeline",
        })
    }
}

/// The memory an object of `room` bytes takes in a mempool on 4 KiB pages: the
/// pages' share of each object that fits whole in one, or whole pages for an
/// object larger than a page.
fn on_small_pages(room: u64) -> u64 {
    const PAGE: u64 = 4096;
    if room <= PAGE {
        PAGE / (PAGE / room)
    } else {
        room.div_ceil(PAGE) * PAGE
    }
}

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let v: Vec<u8> = s
        .split(':')
        .map(|h| u8::from_str_radix(h, 16))
        .collect::<Result<_, _>>()
        .ok()?;
    v.try_into().ok()
}

impl LinkArgs {
    /// The I/O mode in effect: the pipeline when asked or with several queues,
    /// else run to completion. With one core per side run to completion is the
    /// faster (on the 2-vCPU reference host over memif: 1.8x the pipeline's bytes
    /// with one flow, 1.2x with 4 or 16; docs/RESULTS.md). Behind pmdt-wanem on
    /// the same host, three busy processes on two cores, it did a third of the
    /// pipeline until the pacer let a sender that loses its core for scheduler
    /// slices catch up; there it now does 80-100% of the pipeline.
    pub fn io_mode(&self) -> Result<IoMode, CliError> {
        let queues = self.queues()?;
        if self.pipeline {
            return Ok(IoMode::Pipeline);
        }
        if queues == 1 {
            return Ok(IoMode::RunToCompletion);
        }
        if self.run_to_completion {
            return Err(CliError::new(format!(
                "--run-to-completion drives one queue, --rxq/--txq ask for {queues}"
            ))
            .hint("drop --run-to-completion: several queues run in pipeline mode"));
        }
        Ok(IoMode::Pipeline)
    }

    /// Whether one thread serves all the flows, in either mode, unless
    /// `--thread-per-flow` (run to completion: its calls run the I/O loop;
    /// the pipeline: it waits 100 µs when none of its streams could move,
    /// `Poller::wait`). Errors as [`LinkArgs::io_mode`].
    pub fn one_thread_for_flows(&self) -> Result<bool, CliError> {
        self.io_mode()?;
        Ok(!self.thread_per_flow)
    }

    /// The MTU in effect (1500 unless set).
    pub fn effective_mtu(&self) -> u16 {
        self.mtu.unwrap_or(1500)
    }

    fn demo_vdev(&self, role: Role) -> String {
        let r = match role {
            Role::Receiver => "server",
            Role::Sender => "client",
        };
        // memif buffers must hold a whole jumbo frame.
        let bsize = if self.effective_mtu() > 1500 {
            format!(
                ",bsize={}",
                (self.effective_mtu() as u32 + 18)
                    .next_power_of_two()
                    .max(2048)
            )
        } else {
            String::new()
        };
        format!("net_memif0,role={r},socket={DEMO_SOCKET},id=0{bsize}")
    }

    /// The packet pool's size in mbufs: `--pool-size`, or what three quarters of
    /// the EAL memory hold. On 4 KiB pages (`no_huge`) an mbuf never straddles a
    /// page, so each takes a page's share, not its size.
    fn pool_size(&self, no_huge: bool) -> u32 {
        self.pool_size.unwrap_or_else(|| {
            let room = DpdkLinkConfig {
                mtu: self.mtu,
                ..Default::default()
            }
            .mbuf_data_room() as u64
                + 256; // mbuf header and pool overhead
            let room = if no_huge { on_small_pages(room) } else { room };
            // Three quarters of the EAL memory (the rest: descriptor rings, the
            // runtime's rings, mempool caches). A power-of-two-minus-one size
            // only saves ring slots (8 bytes each); rounding down to one left
            // 40 % of the memory unused, and a long lossy path needs it: at
            // 1 Gbit/s, 200 ms and 5 % loss the repair of a hole holds about
            // 4 BDP at the sender and 3 at the receiver.
            let fit = (self.dpdk.memory_mb as u64) << 20;
            (fit * 3 / 4 / room).clamp(1023, MAX_DEFAULT_POOL) as u32
        })
    }

    /// Refuses a `--max-buffer` that the DPDK packet pool cannot hold for `flows`
    /// connections at once (the runtime gives each an equal share of the pool), and
    /// says what pool or EAL memory it would need.
    pub fn check_memory(
        &self,
        transport: &TransportConfig,
        max_buffer: Option<u64>,
        flows: usize,
        data: DataFlow,
    ) -> Result<(), CliError> {
        let (Some(want), BackendKind::Dpdk) = (max_buffer, self.backend) else {
            return Ok(());
        };
        let pool = self.pool_size(self.dpdk.without_hugepages()) as u64;
        let payload = transport.max_payload();
        let flows = flows.max(1) as u64;
        let split = self.pool_split(data);
        // What this side's part of the pool keeps in flight per flow, for the
        // direction(s) its data takes.
        let in_flight = |pool: u64| {
            let b = MemoryBudget::of_split_pool(pool, payload, flows, split);
            match data {
                DataFlow::Out => b.send_storage,
                DataFlow::In => b.recv_credit,
                DataFlow::Both => b.max_in_flight(),
            }
        };
        let have = in_flight(pool);
        if want <= have {
            return Ok(());
        }
        // The smallest pool whose share holds `want` per flow.
        let (mut lo, mut hi) = (pool, pool.max(1) * 2);
        while in_flight(hi) < want && hi < 1 << 31 {
            (lo, hi) = (hi, hi * 2);
        }
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if in_flight(mid) >= want {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let need = hi;
        let room = DpdkLinkConfig {
            mtu: self.mtu,
            ..Default::default()
        }
        .mbuf_data_room() as u64
            + 256;
        let memory_mb = (need * room * 4 / 3).div_ceil(1 << 20);
        let mib = |b: u64| format!("{:.1} MiB", b as f64 / f64::from(1 << 20));
        Err(CliError::new(format!(
            "--max-buffer {} per flow ({flows} flow(s)) does not fit the packet pool: {pool} \
             mbufs hold {} in flight per flow; it needs a pool of {need} mbufs",
            mib(want),
            mib(have),
        ))
        .hint(format!(
            "raise --memory-mb to {memory_mb} (the pool takes three quarters of it; hugepages \
             must cover it) or --pool-size to {need}, or lower --max-buffer"
        )))
    }

    /// Our address on the link.
    pub fn local_ip(&self, role: Role) -> Ipv4Addr {
        self.ip.unwrap_or(match role {
            Role::Receiver => Ipv4Addr::new(10, 88, 0, 2),
            Role::Sender => Ipv4Addr::new(10, 88, 0, 1),
        })
    }

    /// Our UDP port.
    pub fn local_port(&self, role: Role) -> u16 {
        self.udp_port.unwrap_or(match role {
            Role::Receiver => 9000,
            Role::Sender => 9001,
        })
    }

    /// Queue pairs of the DPDK port (`--rxq`/`--txq`, which must agree).
    pub fn queues(&self) -> Result<u16, CliError> {
        let q = match (self.rxq, self.txq) {
            (Some(r), Some(t)) if r != t => {
                return Err(CliError::new(format!(
                    "--rxq {r} and --txq {t} differ: pmdt drives queue pairs"
                ))
                .hint("give the same count, e.g. --rxq 2 --txq 2"))
            }
            (Some(q), _) | (None, Some(q)) => q,
            (None, None) => 1,
        };
        if q == 0 || q > 16 {
            return Err(CliError::new(format!("--rxq/--txq {q}: between 1 and 16")));
        }
        if q > 1 && self.backend != BackendKind::Dpdk {
            return Err(CliError::new("--rxq/--txq apply to the DPDK backend")
                .hint("the kernel UDP backend has one socket"));
        }
        Ok(q)
    }

    /// The address family peers must have on this link.
    pub fn family(&self) -> Family {
        match (self.backend, self.bind) {
            (BackendKind::Udp, Some(b)) if b.is_ipv6() => Family::V6,
            _ => Family::V4,
        }
    }

    /// The EAL this link needs (None: the UDP backend needs none).
    pub fn eal_builder(&self, role: Role, prog: &str) -> Result<Option<EalBuilder>, CliError> {
        if self.backend != BackendKind::Dpdk {
            return Ok(None);
        }
        let lcores = default_lcores(role, self.queues()?);
        let demo = [self.demo_vdev(role)];
        Ok(Some(self.dpdk.builder(prog, &lcores, &demo)))
    }

    /// Starts the EAL when the backend is DPDK.
    pub fn eal(&self, role: Role, prog: &str) -> Result<Option<Eal>, CliError> {
        self.eal_builder(role, prog)?
            .map(|b| b.init().map_err(|e| cli_error::from_dpdk(&e)))
            .transpose()
    }

    fn port_name(&self) -> String {
        if let Some(p) = &self.port {
            return p.clone();
        }
        if let Some(v) = self.dpdk.vdev.first() {
            return v.split(',').next().unwrap_or("0").to_string();
        }
        if let Some(p) = self.dpdk.pci.first() {
            return p.clone();
        }
        "net_memif0".into()
    }

    /// How the packet pool is divided, for a side whose flows carry `data`.
    pub fn pool_split(&self, data: DataFlow) -> PoolSplit {
        self.pool_split.map_or(data.split(), PoolSplit::from)
    }

    /// The runtime builder's backend, I/O core and memory for these options, on a
    /// side whose flows carry `data`.
    pub fn apply(
        &self,
        role: Role,
        data: DataFlow,
        eal: Option<&Eal>,
        mut b: RuntimeBuilder,
    ) -> Result<RuntimeBuilder, CliError> {
        if self.burst == 0 || self.burst > 512 {
            return Err(CliError::new(format!(
                "--burst {}: between 1 and 512",
                self.burst
            )));
        }
        b = b.burst(self.burst).pool_split(self.pool_split(data));
        if self.busy_poll {
            b = b.idle(IdlePolicy::BusyPoll);
        }
        if let Some(p) = &self.pcap {
            b = b.pcap(p.clone());
        }
        match (self.backend, eal) {
            (BackendKind::Dpdk, Some(eal)) => {
                let mut arp = Vec::new();
                for e in &self.arp {
                    let (ip, mac) = e
                        .split_once('=')
                        .and_then(|(i, m)| Some((i.parse::<Ipv4Addr>().ok()?, parse_mac(m)?)))
                        .ok_or_else(|| {
                            CliError::new(format!("--arp {e:?} is not IP=MAC"))
                                .hint("e.g. --arp 10.88.0.2=02:00:00:00:00:02")
                        })?;
                    arp.push((ip, mac));
                }
                let mac = self
                    .mac
                    .as_deref()
                    .map(|m| {
                        parse_mac(m).ok_or_else(|| {
                            CliError::new(format!("--mac {m:?} is not a MAC address"))
                                .hint("e.g. --mac 02:00:00:00:00:01")
                        })
                    })
                    .transpose()?;
                let queues = self.queues()?;
                let io_core = if self.io_mode()? == IoMode::RunToCompletion {
                    // Not pinned: on a 2-vCPU host shared with other work, a flow
                    // thread pinned to the I/O lcore's CPU ran 30x slower than one
                    // the kernel may move (measured; see docs/RESULTS.md). No
                    // worker lcore is needed.
                    IoCore::Caller { cpu: None }
                } else {
                    let workers = dpdk::lcore::worker_ids();
                    if workers.len() < queues as usize {
                        return Err(CliError::new(format!(
                            "{queues} queue(s) need {queues} worker lcore(s) for the I/O \
                             loops, the EAL has {}",
                            workers.len()
                        ))
                        .hint(
                            "give one lcore more than queues, e.g. --lcores 0,1,2 for --rxq 2 \
                             (the last ones run the I/O loops)",
                        ));
                    }
                    IoCore::Lcores {
                        eal: eal.clone(),
                        ids: workers[workers.len() - queues as usize..].to_vec(),
                    }
                };
                Ok(b.io_core(io_core).backend(Backend::Dpdk {
                    eal: eal.clone(),
                    cfg: DpdkLinkConfig {
                        port: self.port_name(),
                        ip: self.local_ip(role),
                        udp_port: self.local_port(role),
                        mac,
                        static_arp: arp,
                        pool_size: self.pool_size(!eal.uses_hugepages()),
                        checksum_offload: !self.no_offload,
                        software_udp_checksum: if self.no_udp_checksum {
                            SoftwareUdpChecksum::Omit
                        } else {
                            SoftwareUdpChecksum::Compute
                        },
                        mtu: self.mtu,
                        queues,
                        ..Default::default()
                    },
                }))
            }
            _ => {
                let bind = self.bind.unwrap_or_else(|| match role {
                    Role::Receiver => "0.0.0.0:9000".parse().expect("valid"),
                    Role::Sender => "0.0.0.0:0".parse().expect("valid"),
                });
                let cpu = match role {
                    Role::Receiver => 1,
                    Role::Sender => 0,
                };
                let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
                let cpu = (cpus > 1).then_some(cpu % cpus);
                let io_core = if self.io_mode()? == IoMode::RunToCompletion {
                    IoCore::Caller { cpu: None }
                } else {
                    IoCore::Thread { cpu }
                };
                Ok(b.io_core(io_core).backend(Backend::Udp(UdpLinkConfig {
                    bind,
                    ..Default::default()
                })))
            }
        }
    }
}

/// The default lcore map: the I/O lcores (1..=queues) pinned from CPU 1 on for a
/// receiver and from CPU 0 on for a sender (so the two ends of the one-host demo
/// poll on different cores), and the main lcore free to run on every CPU. The
/// application threads (one per flow) start from the main thread and inherit its
/// CPU set: pinned to one CPU, several flows would queue on the other process's I/O
/// core and starve each other (the `-P 2` crawl).
fn default_lcores(role: Role, queues: u16) -> String {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let first = match role {
        Role::Receiver => 1.min(cpus - 1),
        Role::Sender => 0,
    };
    let mut map = format!("0@(0-{})", cpus - 1);
    for q in 0..queues as usize {
        map.push_str(&format!(",{}@{}", q + 1, (first + q) % cpus));
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool_split_arg::DataFlow;

    /// One thread serves the flows in either mode; `--thread-per-flow` gives
    /// each its own; a contradictory mode is an error, not a choice.
    #[test]
    fn one_thread_serves_the_flows_in_either_mode() {
        let rtc = LinkArgs::default();
        assert_eq!(rtc.io_mode().unwrap(), IoMode::RunToCompletion);
        assert!(rtc.one_thread_for_flows().unwrap());
        let pipeline = LinkArgs {
            pipeline: true,
            ..Default::default()
        };
        assert_eq!(pipeline.io_mode().unwrap(), IoMode::Pipeline);
        assert!(pipeline.one_thread_for_flows().unwrap());
        for mode in [rtc, pipeline] {
            let threads = LinkArgs {
                thread_per_flow: true,
                ..mode
            };
            assert!(!threads.one_thread_for_flows().unwrap());
        }
        let both = LinkArgs {
            run_to_completion: true,
            rxq: Some(2),
            txq: Some(2),
            ..Default::default()
        };
        assert!(both.one_thread_for_flows().is_err());
    }

    fn dpdk_link(memory_mb: u32, pool_size: Option<u32>) -> LinkArgs {
        let mut l = LinkArgs {
            pool_size,
            ..Default::default()
        };
        l.dpdk.memory_mb = memory_mb;
        l
    }

    fn number_after(text: &str, key: &str) -> u64 {
        let rest = &text[text
            .find(key)
            .unwrap_or_else(|| panic!("{key:?} in {text}"))
            + key.len()..];
        rest.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap()
    }

    /// The default pool fills three quarters of the EAL memory, not the largest
    /// 2^k - 1 in half of it (65,535 at the default 512 MiB).
    #[test]
    fn the_default_pool_fills_three_quarters_of_the_eal_memory() {
        assert_eq!(dpdk_link(512, None).pool_size(false), 165_564);
        assert_eq!(dpdk_link(1, None).pool_size(false), 1023, "the floor");
        assert_eq!(dpdk_link(512, Some(4095)).pool_size(false), 4095, "as set");
        // On 4 KiB pages a 1500-byte mbuf takes a page: 98 304 fit in 384 MiB.
        assert_eq!(dpdk_link(512, None).pool_size(true), 98_304);
    }

    /// A refused --max-buffer names the smallest pool that holds it, and an EAL
    /// memory whose default pool is at least that large.
    #[test]
    fn a_refusal_names_the_pool_and_memory_that_hold_the_buffer() {
        let t = TransportConfig::default();
        let want = 300 << 20;
        let e = dpdk_link(512, None)
            .check_memory(&t, Some(want), 1, DataFlow::Out)
            .unwrap_err();
        let need = number_after(&e.message, "needs a pool of ");
        let memory = number_after(e.hint.as_deref().unwrap(), "raise --memory-mb to ");
        let fits = |pool: u32| {
            dpdk_link(512, Some(pool))
                .check_memory(&t, Some(want), 1, DataFlow::Out)
                .is_ok()
        };
        assert!(fits(need as u32), "{need} mbufs hold it");
        assert!(!fits(need as u32 - 1), "and no fewer do");
        // The hint's memory on hugepages (as it says): its default pool holds
        // the buffer. (Not through `check_memory` with that memory: that reads
        // the machine's free hugepages now, and falls back to 4 KiB pages while
        // other DPDK processes hold them.)
        let pool = dpdk_link(memory as u32, None).pool_size(false);
        assert!(pool as u64 >= need);
        assert!(
            fits(pool),
            "the default pool of --memory-mb {memory} holds it"
        );
    }
}
