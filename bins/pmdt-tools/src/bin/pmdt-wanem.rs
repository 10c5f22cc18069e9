//! pmdt-wanem: a WAN emulator between two DPDK ports (like the Netropy box the RMDT
//! paper used): loss (random and Gilbert-Elliott bursts), delay, jitter,
//! reordering, duplication and a rate-limited drop-tail queue, in both directions
//! or one. Prints what it did every second and at the end.
//!
//! Default topology (one host): port A is a memif server on /tmp/pmdt-wan-a.sock
//! (connect pmdt-send there), port B one on /tmp/pmdt-wan-b.sock (connect pmdt-recv).
//! `--pcap FILE` records every frame it forwards (after the impairment: what the
//! endpoints see), `--file-prefix` names the EAL as on the other tools.
//!
//! `--udp-listen ADDR --udp-to ADDR` runs the same model over kernel UDP sockets
//! instead (no DPDK): one relay per path, e.g. one per receiver of `--multi`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Parser};
use dpdk::{Eal, Mempool, MempoolConfig, Port, PortConfig};
use pmdt::link::impair_model::{GilbertElliott, ImpairConfig, ImpairConfigError, ImpairModel};
use pmdt::runtime::{IdleBackoff, IdlePolicy};
use pmdt_tools::cli_error::{self, CliError};
use pmdt_tools::doc_gen::DocArgs;
use pmdt_tools::eal_args::EalArgs;
use pmdt_tools::entry::ToolCli;
use pmdt_tools::flow_drops::Episode;
use pmdt_tools::frame_capture::FrameCapture;
use pmdt_tools::interrupt::Interrupt;
use pmdt_tools::pool_watch::{PoolUse, PoolWatch};
use pmdt_tools::rate_schedule::{RateSchedule, RateStep};
use pmdt_tools::report::JsonMode;
use pmdt_tools::udp_relay::UdpRelay;
use pmdt_tools::units::{BitRate, ByteSize};
use pmdt_tools::wan_path::{PathStats, WanPath};
use serde::{Deserialize, Serialize};

const PROG: &str = "pmdt-wanem";

/// What the emulated link does.
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
#[serde(default)]
#[command(next_help_heading = "Impairment")]
struct ImpairArgs {
    /// Random loss probability (0..1), e.g. 0.01.
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
    /// Burst loss: probability of entering the bad state per packet.
    #[arg(long)]
    burst_enter: Option<f64>,
    /// Burst loss: probability of leaving the bad state per packet.
    #[arg(long, default_value_t = 0.3)]
    burst_leave: f64,
    /// Burst loss: loss probability in the bad state.
    #[arg(long, default_value_t = 0.5)]
    burst_loss: f64,
    /// One-way delay, ms.
    #[arg(long, default_value_t = 0.0)]
    delay_ms: f64,
    /// Extra random delay up to this, ms.
    #[arg(long, default_value_t = 0.0)]
    jitter_ms: f64,
    /// Probability a packet is held back (reordered).
    #[arg(long, default_value_t = 0.0)]
    reorder: f64,
    /// Hold-back of reordered packets, ms.
    #[arg(long, default_value_t = 1.0)]
    reorder_ms: f64,
    /// Probability a packet is duplicated.
    #[arg(long, default_value_t = 0.0)]
    duplicate: f64,
    /// Probability a packet is corrupted: one bit of its UDP payload flipped. The
    /// receiver's UDP checksum rejects it and the transport retransmits (over
    /// kernel UDP, where the relay's socket would compute a fresh checksum, the
    /// packet is dropped as that check would).
    #[arg(long, default_value_t = 0.0)]
    corrupt: f64,
    /// Drop (and count) IP datagrams larger than this many bytes (a smaller link
    /// MTU on the path; default: none).
    #[arg(long, value_name = "BYTES")]
    mtu: Option<usize>,
    /// Bottleneck rate, bits/s with decimal k/m/g (e.g. 1gbit = 10^9 bit/s).
    #[arg(long)]
    rate: Option<BitRate>,
    /// Change the bottleneck rate SECS seconds after the first frame (the
    /// traffic's start), e.g. `--rate-at 10=200mbit --rate-at 20=1gbit`: a link
    /// that degrades and recovers under a transfer (repeatable; both impaired
    /// directions; frames already queued keep their departure times).
    #[arg(long, value_name = "SECS=RATE")]
    rate_at: Vec<RateStep>,
    /// Bottleneck queue, bytes with 1024-based K/M/G (e.g. 1M).
    #[arg(long, default_value_t = ByteSize(1 << 20))]
    queue_bytes: ByteSize,
    /// Impair only A→B (B→A forwarded untouched).
    #[arg(long)]
    one_way: bool,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl Default for ImpairArgs {
    fn default() -> Self {
        Self {
            loss: 0.0,
            burst_enter: None,
            burst_leave: 0.3,
            burst_loss: 0.5,
            delay_ms: 0.0,
            jitter_ms: 0.0,
            reorder: 0.0,
            reorder_ms: 1.0,
            duplicate: 0.0,
            corrupt: 0.0,
            mtu: None,
            rate: None,
            rate_at: Vec::new(),
            queue_bytes: ByteSize(1 << 20),
            one_way: false,
            seed: 1,
        }
    }
}

/// Emulate a lossy, slow, long link between two DPDK ports.
#[derive(Debug, Parser, Serialize, Deserialize, Default)]
#[command(name = PROG, version)]
#[command(after_help = "EAL arguments may come first, testpmd style: \
pmdt-wanem -l 0 --vdev A --vdev B -- --loss 0.01")]
#[serde(default)]
struct Cli {
    /// Read options from this TOML file (flags given here win).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    impair: ImpairArgs,
    /// Stop after this many seconds (default: until Ctrl-C).
    #[arg(long)]
    duration: Option<f64>,
    // The two ports are the two --vdev (default: memif servers on
    // /tmp/pmdt-wan-a.sock and /tmp/pmdt-wan-b.sock) or --pci; the forwarding loop
    // runs on the main lcore (default --lcores 0).
    #[command(flatten)]
    #[serde(flatten)]
    eal: EalArgs,
    /// Write every frame forwarded (after the impairment) to this pcap file.
    #[arg(long, value_name = "FILE", help_heading = "Link")]
    pcap: Option<PathBuf>,
    /// Mbufs in the pool both directions share: every frame the path holds (its
    /// delay line and queue) takes one, or several for a frame larger than 2
    /// KiB. The summary says when it ran dry (then frames waited at the ports
    /// and the path held less than rate × delay).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_POOL_SIZE, help_heading = "Link")]
    pool_size: u32,
    /// Kernel UDP mode (no DPDK): the address the client (`pmdt-send --backend udp
    /// -c ADDR`) sends to, e.g. 127.0.0.1:9100.
    #[arg(
        long,
        value_name = "ADDR",
        requires = "udp_to",
        help_heading = "Kernel UDP mode"
    )]
    udp_listen: Option<SocketAddr>,
    /// Kernel UDP mode: where datagrams go on (the receiver), HOST:PORT.
    #[arg(
        long,
        value_name = "HOST:PORT",
        requires = "udp_listen",
        help_heading = "Kernel UDP mode"
    )]
    udp_to: Option<String>,
    /// Print one JSON summary object on stdout at the end.
    #[arg(long, help_heading = "Output")]
    json: bool,
    /// Print a line per overflow of the bottleneck's queue (drops no more than
    /// 20 ms apart): when, from the first frame, how long, and for each flow
    /// (UDP ends and pmdt connection) the frames it offered meanwhile and how
    /// many were dropped. DPDK mode.
    #[arg(long, conflicts_with = "udp_listen", help_heading = "Output")]
    log_overflows: bool,
    /// Check the options, print the EAL arguments and the impairment as JSON on
    /// stdout, and exit without starting.
    #[arg(long, help_heading = "Output")]
    dry_run: bool,
    #[command(flatten)]
    #[serde(skip)]
    docs: DocArgs,
    #[command(flatten)]
    #[serde(flatten)]
    log: pmdt_log::Verbosity,
}

impl ToolCli for Cli {
    fn config_path(&self) -> Option<PathBuf> {
        self.config.clone()
    }
    fn docs(&self) -> &DocArgs {
        &self.docs
    }
    fn verbosity(&self) -> u8 {
        self.log.verbose
    }
    fn json_mode(&self) -> JsonMode {
        if self.json {
            JsonMode::Document
        } else {
            JsonMode::Off
        }
    }
}

#[derive(Serialize)]
struct Report {
    seconds: f64,
    a_to_b: PathStats,
    b_to_a: PathStats,
    impairment: ImpairConfig,
    /// The `--rate-at` changes made, when they were made.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    rate_changes: Vec<RateChange>,
    /// DPDK mode: the mbuf pool's use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pool: Option<PoolUse>,
}

/// A `--rate-at` change as it happened.
#[derive(Serialize)]
struct RateChange {
    /// Seconds after the first frame.
    at_s: f64,
    /// The rate from then on, bits/s.
    rate_bps: u64,
}

/// `--pool-size`'s default: 1,514-byte frames at 1 Gbit/s with 100 ms of delay
/// each way take 16,600, their acknowledgements a few thousand more.
const DEFAULT_POOL_SIZE: u32 = 65535;
/// The smallest `--pool-size`: the ports' receive rings fill from it.
const MIN_POOL_SIZE: u32 = 1024;

/// Ethernet header bytes before the IP datagram (DPDK mode sees frames).
const ETHERNET_HEADER: usize = 14;
/// IPv4 and UDP header bytes before the payload (kernel UDP mode sees payloads).
const IPV4_UDP_HEADERS: usize = 28;
/// The smallest MTU IPv4 allows (RFC 791).
const MIN_IPV4_MTU: usize = 68;

/// The impairment model's configuration; `udp`: kernel UDP mode (the model sees
/// UDP payloads, not Ethernet frames).
fn impairment(cli: &ImpairArgs, udp: bool) -> Result<ImpairConfig, CliError> {
    if !(0.0..=1.0).contains(&cli.corrupt) {
        return Err(CliError::new(format!(
            "--corrupt must be a probability in [0, 1], got {}",
            cli.corrupt
        )));
    }
    if let Some(m) = cli.mtu.filter(|m| *m < MIN_IPV4_MTU) {
        return Err(CliError::new(format!(
            "--mtu must be at least {MIN_IPV4_MTU} bytes (the IPv4 minimum), got {m}"
        )));
    }
    let ms = |v: f64, name: &str| {
        if v.is_finite() && v >= 0.0 {
            Ok(Duration::from_secs_f64(v / 1000.0))
        } else {
            Err(CliError::new(format!(
                "--{name} must be a non-negative number of ms"
            )))
        }
    };
    // `ImpairConfig` is non-exhaustive: the defaults, then every knob the CLI sets.
    let mut c = ImpairConfig::default();
    c.loss = cli.loss;
    c.burst = cli.burst_enter.map(|p| GilbertElliott {
        p_good_to_bad: p,
        p_bad_to_good: cli.burst_leave,
        loss_in_bad: cli.burst_loss,
    });
    c.delay = ms(cli.delay_ms, "delay-ms")?;
    c.jitter = ms(cli.jitter_ms, "jitter-ms")?;
    c.reorder = cli.reorder;
    c.reorder_delay = ms(cli.reorder_ms, "reorder-ms")?;
    c.duplicate = cli.duplicate;
    c.corrupt = cli.corrupt;
    // DPDK mode flips the bit and forwards: the receiver's checksum decides.
    // A kernel socket would send a fresh checksum over a flipped payload,
    // so there the model drops the copy as the checksum would have.
    c.corrupt_bypasses_checksum = !udp;
    // The model measures what it is given: frames (Ethernet header
    // included) or UDP payloads.
    c.mtu = cli.mtu.map(|m| {
        if udp {
            m - IPV4_UDP_HEADERS
        } else {
            m + ETHERNET_HEADER
        }
    });
    c.rate_bps = cli.rate.map(|r| r.0);
    c.queue_bytes = cli.queue_bytes.0;
    c.seed = cli.seed;
    if let Some(b) = &c.burst {
        for (n, p) in [
            ("burst-enter", b.p_good_to_bad),
            ("burst-leave", b.p_bad_to_good),
            ("burst-loss", b.loss_in_bad),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(CliError::new(format!("--{n} must be in [0, 1], got {p}")));
            }
        }
    }
    c.validate().map_err(|e| CliError::new(e.to_string()))?;
    Ok(c)
}

fn open_port(
    eal: &Eal,
    name: &str,
    pool: &Arc<Mempool>,
) -> Result<(dpdk::RxQueue, dpdk::TxQueue, Port), CliError> {
    let mut port = Port::open_by_name(eal, name).map_err(|e| cli_error::from_dpdk(&e))?;
    let (mut rx, mut tx) = port
        .configure(&PortConfig::default(), pool)
        .map_err(|e| cli_error::from_dpdk(&e))?;
    port.start().map_err(|e| cli_error::from_dpdk(&e))?;
    Ok((rx.remove(0), tx.remove(0), port))
}

/// The two directions, whichever ports carry them.
trait Forwarder {
    /// One pass; whether anything moved.
    fn poll(&mut self, now: Instant) -> bool;
    /// When the next held frame is due.
    fn next_due(&self) -> Option<Instant>;
    /// A→B and B→A counters.
    fn stats(&self) -> (&PathStats, &PathStats);
    /// Changes the bottleneck rate of the impaired directions from now on.
    fn set_rate(&mut self, rate_bps: u64) -> Result<(), ImpairConfigError>;
    /// Closes the frame capture, if any: how many frames it holds.
    fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
        None
    }
    /// The mbuf pool's use (DPDK mode).
    fn pool_use(&self) -> Option<PoolUse> {
        None
    }
    /// The bottleneck's overflow episodes over since the last call, by direction
    /// ("A->B", "B->A"); none unless `--log-overflows` (DPDK mode).
    fn take_overflows(&mut self) -> Vec<(&'static str, Episode)> {
        Vec::new()
    }
    /// Ends the overflow episodes under way (at the end of the run).
    fn end_overflows(&mut self) {}
}

/// DPDK mode: two ports, an optional capture of what is forwarded.
struct DpdkPaths {
    ab: WanPath,
    ba: WanPath,
    capture: Option<FrameCapture>,
    pool: Arc<Mempool>,
    pool_watch: PoolWatch,
}

impl Forwarder for DpdkPaths {
    fn poll(&mut self, now: Instant) -> bool {
        let moved =
            self.ab.poll(now, self.capture.as_mut()) | self.ba.poll(now, self.capture.as_mut());
        let pool = &self.pool;
        self.pool_watch.sample(now, || pool.available());
        moved
    }
    fn next_due(&self) -> Option<Instant> {
        [self.ab.next_due(), self.ba.next_due()]
            .into_iter()
            .flatten()
            .min()
    }
    fn stats(&self) -> (&PathStats, &PathStats) {
        (&self.ab.stats, &self.ba.stats)
    }
    fn set_rate(&mut self, rate_bps: u64) -> Result<(), ImpairConfigError> {
        self.ab.set_rate(rate_bps)?;
        self.ba.set_rate(rate_bps)
    }
    fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
        self.capture.take().map(FrameCapture::finish)
    }
    fn pool_use(&self) -> Option<PoolUse> {
        Some(self.pool_watch.usage())
    }
    fn end_overflows(&mut self) {
        self.ab.end_overflows();
        self.ba.end_overflows();
    }
    fn take_overflows(&mut self) -> Vec<(&'static str, Episode)> {
        let ab = self.ab.take_overflows().into_iter().map(|e| ("A->B", e));
        let ba = self.ba.take_overflows().into_iter().map(|e| ("B->A", e));
        ab.chain(ba).collect()
    }
}

impl Forwarder for UdpRelay {
    fn poll(&mut self, _now: Instant) -> bool {
        UdpRelay::poll(self)
    }
    fn next_due(&self) -> Option<Instant> {
        UdpRelay::next_due(self)
    }
    fn stats(&self) -> (&PathStats, &PathStats) {
        (self.a_to_b(), self.b_to_a())
    }
    fn set_rate(&mut self, rate_bps: u64) -> Result<(), ImpairConfigError> {
        UdpRelay::set_rate(self, rate_bps)
    }
}

/// The models of both directions (B→A untouched with `--one-way`).
fn models(cli: &Cli, imp: &ImpairConfig) -> Result<(ImpairModel, Option<ImpairModel>), CliError> {
    let model_ab = ImpairModel::new(imp.clone()).map_err(|e| CliError::new(e.to_string()))?;
    let model_ba = (!cli.impair.one_way)
        .then(|| {
            let mut ba = imp.clone();
            ba.seed = imp.seed ^ 0x5eed;
            ImpairModel::new(ba)
        })
        .transpose()
        .map_err(|e| CliError::new(e.to_string()))?;
    Ok((model_ab, model_ba))
}

/// Kernel UDP mode: a relay from `--udp-listen` to `--udp-to` (None after a dry run).
fn udp_relay(
    cli: &Cli,
    imp: &ImpairConfig,
    listen: SocketAddr,
) -> Result<Option<(UdpRelay, String)>, CliError> {
    if !cli.eal.vdev.is_empty() || !cli.eal.pci.is_empty() || cli.pcap.is_some() {
        return Err(CliError::new(
            "--udp-listen runs over kernel sockets: --vdev, --pci and --pcap do not apply",
        ));
    }
    let to_arg = cli.udp_to.as_deref().unwrap_or_default();
    let to = to_arg
        .to_socket_addrs()
        .map_err(|e| CliError::new(format!("--udp-to {to_arg}: {e}")))?
        .next()
        .ok_or_else(|| CliError::new(format!("--udp-to {to_arg}: no address")))?;
    if cli.dry_run {
        pmdt_tools::report::print_dry_run(
            None,
            serde_json::json!({ "udp_listen": listen, "udp_to": to, "impairment": imp, "rate_at": cli.impair.rate_at }),
        );
        return Ok(None);
    }
    let (ab, ba) = models(cli, imp)?;
    let relay = UdpRelay::bind(listen, to, Some(ab), ba)
        .map_err(|e| cli_error::from_io(&format!("--udp-listen {listen}"), &e))?;
    Ok(Some((relay, format!("udp {listen} <-> {to}"))))
}

fn run(cli: Cli) -> Result<i32, CliError> {
    let imp = impairment(&cli.impair, cli.udp_listen.is_some())?;
    if let Some(listen) = cli.udp_listen {
        return match udp_relay(&cli, &imp, listen)? {
            Some((relay, name)) => forward(&cli, imp, relay, &name),
            None => Ok(0),
        };
    }

    if cli.pool_size < MIN_POOL_SIZE {
        return Err(CliError::new(format!(
            "--pool-size must be at least {MIN_POOL_SIZE} mbufs, got {}",
            cli.pool_size
        ))
        .hint(format!(
            "each frame the path holds takes an mbuf (1 Gbit/s × 100 ms of 1,514-byte \
             frames: 8,300); the default is {DEFAULT_POOL_SIZE}"
        )));
    }
    let ports = &cli.eal;
    let default_vdevs = [
        "net_memif0,role=server,socket=/tmp/pmdt-wan-a.sock,id=0".to_string(),
        "net_memif1,role=server,socket=/tmp/pmdt-wan-b.sock,id=0".to_string(),
    ];
    let names: Vec<String> = if !ports.pci.is_empty() {
        ports.pci.clone()
    } else if !ports.vdev.is_empty() {
        ports
            .vdev
            .iter()
            .map(|v| v.split(',').next().unwrap_or("").to_string())
            .collect()
    } else {
        default_vdevs
            .iter()
            .map(|v| v.split(',').next().unwrap_or("").to_string())
            .collect()
    };
    if names.len() != 2 {
        return Err(CliError::new(format!(
            "need exactly two ports (A and B), got {}",
            names.len()
        ))
        .hint("give --vdev twice (or --pci twice)"));
    }
    let builder = ports.builder(PROG, "0", &default_vdevs);
    if cli.dry_run {
        pmdt_tools::report::print_dry_run(
            Some(&builder),
            serde_json::json!({ "ports": names, "impairment": imp, "rate_at": cli.impair.rate_at, "pcap": cli.pcap }),
        );
        return Ok(0);
    }
    let capture = cli
        .pcap
        .as_deref()
        .map(FrameCapture::create)
        .transpose()
        .map_err(|e| cli_error::from_io("--pcap", &e))?;
    let eal = builder.init().map_err(|e| cli_error::from_dpdk(&e))?;
    let pool = Arc::new(
        Mempool::new(
            &eal,
            &MempoolConfig {
                size: cli.pool_size,
                ..Default::default()
            },
        )
        .map_err(|e| cli_error::from_dpdk(&e))?,
    );
    let (rx_a, tx_a, _port_a) = open_port(&eal, &names[0], &pool)?;
    let (rx_b, tx_b, _port_b) = open_port(&eal, &names[1], &pool)?;
    let (model_ab, model_ba) = models(&cli, &imp)?;
    let mut paths = DpdkPaths {
        ab: WanPath::new(rx_a, tx_b, Some(model_ab), pool.clone()),
        ba: WanPath::new(rx_b, tx_a, model_ba, pool.clone()),
        capture,
        pool_watch: PoolWatch::new(pool.capacity()),
        pool,
    };
    if cli.log_overflows {
        paths.ab.keep_overflows();
        paths.ba.keep_overflows();
    }
    let name = format!("{} <-> {}", names[0], names[1]);
    forward(&cli, imp, paths, &name)
}

/// The forwarding loop of either mode, until Ctrl-C/SIGTERM or `--duration`; a line
/// per second and the summary at the end.
fn forward<F: Forwarder>(
    cli: &Cli,
    imp: ImpairConfig,
    mut paths: F,
    name: &str,
) -> Result<i32, CliError> {
    eprintln!(
        "{PROG}: {name}: loss {} delay {} ms jitter {} ms reorder {} duplicate {} rate {}{}",
        cli.impair.loss,
        cli.impair.delay_ms,
        cli.impair.jitter_ms,
        cli.impair.reorder,
        cli.impair.duplicate,
        cli.impair
            .rate
            .map_or("unlimited".into(), |r| pmdt_tools::units::fmt_rate(
                r.0 as f64
            )),
        if cli.impair.one_way {
            " (A->B only)"
        } else {
            ""
        }
    );
    let stop = Interrupt::install();
    let started = Instant::now();
    let end = cli.duration.map(|d| started + Duration::from_secs_f64(d));
    let mut next_print = started + Duration::from_secs(1);
    // Yields its core while frames flow and sleeps only when the path is quiet:
    // the ends usually poll on the same cores (see `IdleBackoff`).
    let mut idle = IdleBackoff::new(IdlePolicy::default());
    let mut schedule = RateSchedule::new(&cli.impair.rate_at);
    let mut rate_changes = Vec::new();
    // When the first frame came (the `--rate-at` times count from it).
    let mut traffic_start = None;
    while !stop.is_set() && end.is_none_or(|e| Instant::now() < e) {
        let now = Instant::now();
        if paths.poll(now) {
            idle.worked(now);
            traffic_start.get_or_insert(now);
        } else {
            // Never past the next delayed frame, nor the next rate change.
            let change = traffic_start.zip(schedule.next_at()).map(|(t, at)| t + at);
            let wake = [paths.next_due(), change].into_iter().flatten().min();
            idle.idle(now, wake);
        }
        let due = traffic_start.and_then(|t| Some((now - t, schedule.due(now - t)?)));
        if let Some((since, rate)) = due {
            paths
                .set_rate(rate)
                .map_err(|e| CliError::new(format!("--rate-at: {e}")))?;
            let at_s = since.as_secs_f64();
            eprintln!(
                "{PROG}: {at_s:.3} s after the first frame: rate now {}",
                pmdt_tools::units::fmt_rate(rate as f64)
            );
            rate_changes.push(RateChange {
                at_s,
                rate_bps: rate,
            });
        }
        print_overflows(&mut paths, traffic_start.unwrap_or(started));
        if now >= next_print {
            next_print += Duration::from_secs(1);
            let (ab, ba) = paths.stats();
            eprintln!(
                "{PROG}: A->B fwd {} lost {} dup {} reord {} corrupt {} qdrop {} mtu-drop {} held {} | B->A fwd {} lost {}",
                ab.forwarded,
                ab.lost,
                ab.duplicated,
                ab.reordered,
                ab.corrupted,
                ab.queue_drops,
                ab.mtu_drops,
                ab.held,
                ba.forwarded,
                ba.lost
            );
        }
    }
    paths.end_overflows();
    print_overflows(&mut paths, traffic_start.unwrap_or(started));
    if let Some(n) = paths.finish_capture() {
        let n = n.map_err(|e| cli_error::from_io("--pcap", &e))?;
        eprintln!("{PROG}: {n} frames written to the pcap file");
    }
    let (ab, ba) = paths.stats();
    let report = Report {
        seconds: started.elapsed().as_secs_f64(),
        a_to_b: ab.clone(),
        b_to_a: ba.clone(),
        impairment: imp,
        rate_changes,
        pool: paths.pool_use(),
    };
    eprintln!(
        "{PROG}: done after {:.1} s: A->B {:?}; B->A {:?}",
        report.seconds, report.a_to_b, report.b_to_a
    );
    if let Some(p) = report.pool.filter(|p| p.ran_dry) {
        eprintln!(
            "{PROG}: warning: the mbuf pool ({} mbufs) ran dry (fewest free {}): frames waited at \
             the ports, so the path held less than its rate × delay; raise --pool-size",
            p.size, p.least_available
        );
    }
    if cli.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("serializable")
        );
    }
    Ok(if stop.is_set() { 130 } else { 0 })
}

/// A line per overflow episode over (`--log-overflows`), its time from `origin`
/// (the first frame).
fn print_overflows<F: Forwarder>(paths: &mut F, origin: Instant) {
    for (dir, ep) in paths.take_overflows() {
        eprintln!("{PROG}: {dir} {}", ep.describe(origin));
    }
}

fn main() {
    pmdt_tools::entry::run_tool::<Cli>(PROG, run)
}
